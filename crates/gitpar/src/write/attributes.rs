//! Which attributes convert an entry on its way to the work tree: the pipeline and attribute
//! stack a run's writers clone ([`filters_for`]), whether any attribute file can apply at all
//! ([`attributes_present`], and whether one names a filter), so that a run without one skips the
//! lookups, and the attributes a writer applies itself ([`OwnAttributes`]).

use bstr::ByteSlice;

use super::{Shared, Worker};
use crate::plan::Plan;
use crate::write::error::{repo_err, Error};

/// The writers' content conversion for the entries of `index` (the new index): gix-filter's
/// pipeline, and an attribute stack that reads `.gitattributes` in `order`. git reads them
/// through the index first, and from the work tree where the index has none, while it updates
/// a work tree to a tree (`GIT_ATTR_CHECKOUT`, set by `unpack_trees` only): `switch`, `reset`,
/// a clone's checkout. Everything else, `checkout -- paths` and `restore` among them, reads the
/// work tree's first (`GIT_ATTR_CHECKIN`), so a `.gitattributes` changed or never added applies.
pub(crate) fn filters_for(
    repo: &gix::Repository,
    index: &gix::index::State,
    order: gix::worktree::stack::state::attributes::Source,
) -> Result<(gix::filter::plumbing::Pipeline, gix::worktree::Stack), Error> {
    let attributes = repo
        .attributes_only(index, order)
        .map_err(repo_err("reading attributes"))?
        .detach();
    let pipeline =
        gix::filter::Pipeline::new(repo, attributes).map_err(repo_err("setting up filters"))?;
    Ok(pipeline.into_parts())
}

/// Returns true if and only if some attribute file may apply to `paths` (the new index): a
/// `.gitattributes` among them or at the top of the work tree, `info/attributes`,
/// `core.attributesFile` or the XDG default.
pub fn attributes_present<'a>(
    repo: &gix::Repository,
    root: &crate::fs::Root,
    mut paths: impl Iterator<Item = &'a bstr::BStr>,
) -> bool {
    let in_tree = paths.any(|p| p == ".gitattributes" || p.ends_with(b"/.gitattributes"));
    let info = repo.common_dir().join("info/attributes").exists();
    let configured = repo
        .config_snapshot()
        .string("core.attributesFile")
        .is_some();
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))
        .is_some_and(|base| base.join("git/attributes").exists());
    // Through the path-safe layer, and anything at all there counts (a symlink too: git then
    // refuses it, with the attribute lookups on).
    let on_disk = !matches!(root.dirs().lstat(".gitattributes".into()), Ok(None));
    in_tree || on_disk || info || configured || xdg
}

/// Returns true if and only if a `.gitattributes` of the plan mentions `filter` at all, so that a
/// scout may find filtered entries (a cheap test, so that a repository with attribute files but
/// no filter, under a configuration that defines drivers, as a global git-lfs install does, pays
/// no second attribute lookup per entry). Attributes from elsewhere (`info/attributes`,
/// `core.attributesFile`) are not looked at: their filtered entries are handed over by the
/// writers, as without a scout.
pub(super) fn names_a_filter(repo: &gix::Repository, plan: &Plan, shared: &Shared<'_>) -> bool {
    shared.attributes_present
        && plan
            .entries
            .iter()
            .filter(|e| e.path == ".gitattributes" || e.path.ends_with(b"/.gitattributes"))
            .filter_map(|e| repo.find_object(e.id).ok())
            .any(|o| o.data.find(b"filter").is_some())
}

/// Attribute values the worker applies itself.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct OwnAttributes<'d> {
    /// `ident`: `$Id$` is expanded ([`crate::convert`]).
    pub(super) ident: bool,
    /// A `working-tree-encoding` with a `-BOM` suffix, which gix-filter does not know.
    pub(super) encoding: Option<crate::convert::BomEncoding>,
    /// The configured driver the `filter` attribute names, if any.
    pub(super) driver: Option<&'d gix::filter::plumbing::Driver>,
    /// Any `working-tree-encoding` (gix-filter re-encodes those without `-BOM`).
    reencodes: bool,
    /// A `filter` attribute with a value, whether or not a driver of that name is configured
    /// (a clean-only driver converts on check-in alone).
    filtered: bool,
    /// The attributes that decide the end-of-line conversion (`text`, `crlf`, `eol`).
    eol: crate::convert::Eol,
}

impl OwnAttributes<'_> {
    /// Returns true if and only if nothing converts the blob on its way to the file (no
    /// `ident`, encoding, driver or end-of-line conversion), so that it can be streamed.
    pub(super) fn plain(&self, config: crate::convert::EolConfig) -> bool {
        !self.ident
            && !self.reencodes
            && self.driver.is_none()
            && !self.eol.converts_on_checkout(config)
    }

    /// Whether a donor's clean copy of the file may be cloned instead of writing the blob
    /// ([`crate::write::donor`]): `None` when a checkout converts it, or when the file the donor's
    /// index trusts may differ from its blob in ways its size cannot tell (`ident`, an
    /// encoding, a filter); else whether the sizes must be compared (an end-of-line
    /// conversion on check-in: an added file with CRLF is clean against a blob with LF, and
    /// only then longer than it).
    pub(super) fn clonable(&self, config: crate::convert::EolConfig) -> Option<bool> {
        (self.plain(config) && !self.reencodes && !self.filtered)
            .then(|| self.eol.converts_on_checkin(config))
    }

    /// Returns true if and only if gix-filter's pipeline may change the blob: an `ident`, a
    /// `working-tree-encoding`, or an end-of-line conversion git would make
    /// ([`crate::convert::Eol`]). Otherwise the pipeline, which looks the attributes up once
    /// more, is not run: `* text=auto eol=lf` (tldr) converts nothing on checkout, and that
    /// second lookup was a fifth of such a checkout's instructions.
    pub(super) fn pipeline_converts(&self, config: crate::convert::EolConfig) -> bool {
        self.ident || self.reencodes || self.eol.converts_on_checkout(config)
    }
}

impl<'r> Worker<'r> {
    /// The attributes we apply ourselves (see [`crate::convert`] and [`crate::convert::filter`]):
    /// `ident` (git's expansion differs from gix-filter's), a `working-tree-encoding` with a
    /// `-BOM` suffix (which gix-filter does not know) and the `filter` driver. One lookup
    /// answers all three.
    pub(super) fn own_attributes(
        platform: &gix::worktree::stack::Platform<'_>,
        runner: &crate::convert::filter::Runner<'r>,
        outcome: &mut gix::attrs::search::Outcome,
    ) -> OwnAttributes<'r> {
        // The search resets the outcome (keeping its selection): one per writer, no
        // allocation per file.
        platform.matching_attributes(outcome);
        let mut own = OwnAttributes::default();
        // Only the attributes that matched (those of the selection: the outcome was initialised
        // with it); `iter_selected` would also yield every unmatched one, parsing its name anew
        // for each file.
        for m in outcome.iter() {
            match (m.assignment.name.as_str(), m.assignment.state) {
                ("ident", state) => own.ident = state.is_set(),
                ("text", state) => own.eol.text = crate::convert::TextAttr::from_state(state),
                ("crlf", state) => own.eol.crlf = crate::convert::TextAttr::from_state(state),
                ("eol", state) => own.eol.eol_crlf = crate::convert::Eol::eol_attr(state),
                ("working-tree-encoding", gix::attrs::StateRef::Value(v)) => {
                    own.reencodes = true;
                    own.encoding = crate::convert::BomEncoding::from_name(v.as_bstr());
                }
                ("filter", gix::attrs::StateRef::Value(v)) => {
                    own.filtered = true;
                    if !runner.is_idle() {
                        own.driver = runner.driver(v.as_bstr());
                    }
                }
                _ => {}
            }
        }
        own
    }
}
