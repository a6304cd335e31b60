//! The to-git direction, as git's `convert_to_git` runs it: the driver's `clean` (per file, or
//! the long-running filter's `clean`), then the `working-tree-encoding`, then `eol`, then
//! `ident`. What the refresh hashes when the stat data cannot decide, and what `checkout -m`
//! takes as the local version of a file.
//!
//! gix-filter does the `eol` and `ident` steps and the encodings encoding_rs knows; the driver
//! step is ours ([`Runner`]), and so are the UTF-16 and UTF-32 encodings with or without a
//! byte-order mark ([`crate::convert::BomEncoding`]), which gix-filter cannot read.

use std::io::{self, Read};

use bstr::BStr;
use gix::filter::plumbing::{eol, pipeline::convert::ToGitOutcome, Driver};

use super::{Direction, Filtered, Meta, Runner};
use crate::convert::BomEncoding;

/// One thread's to-git conversion: the gix-filter pipeline (without drivers), the attribute
/// stack and the filter processes.
pub(crate) struct ToGit<'r> {
    repo: &'r gix::Repository,
    pipeline: gix::filter::plumbing::Pipeline,
    attributes: gix::worktree::Stack,
    runner: Runner<'r>,
    eol: eol::Configuration,
    outcome: gix::attrs::search::Outcome,
}

/// The attributes this module reads itself, in this order.
const ATTRS: [&str; 6] = [
    "filter",
    "working-tree-encoding",
    "text",
    "crlf",
    "eol",
    "ident",
];

impl<'r> ToGit<'r> {
    /// The conversion of the work tree's files as git's `add` converts them: the attributes of
    /// the work tree's `.gitattributes` first, then `index`'s, and the configured `drivers`.
    pub(crate) fn for_work_tree(
        repo: &'r gix::Repository,
        index: &gix::index::State,
        drivers: &'r [Driver],
    ) -> Result<Self, super::Error> {
        let attributes = repo
            .attributes_only(
                index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .map_err(|e| super::Error::Attributes(Box::new(e)))?
            .detach();
        ToGit::new(repo, attributes, drivers)
    }

    /// The conversion of `repo`'s files with the attributes of `attributes` and the configured
    /// `drivers` ([`super::drivers`]).
    pub(crate) fn new(
        repo: &'r gix::Repository,
        attributes: gix::worktree::Stack,
        drivers: &'r [Driver],
    ) -> Result<Self, super::Error> {
        let mut options =
            gix::filter::Pipeline::options(repo).map_err(|e| super::Error::Config(Box::new(e)))?;
        options.drivers.clear();
        let eol = options.eol_config;
        let context = repo
            .command_context()
            .map_err(|e| super::Error::Config(Box::new(e)))?;
        let pipeline =
            gix::filter::plumbing::Pipeline::new(context.clone(), repo.object_hash(), options);
        let mut outcome = gix::attrs::search::Outcome::default();
        outcome.initialize_with_selection(&Default::default(), ATTRS);
        Ok(ToGit {
            repo,
            pipeline,
            attributes,
            runner: Runner::new(drivers, context),
            eol,
            outcome,
        })
    }

    /// Convert `src`, the content of the work tree file `rela`, to what git stores for it, in
    /// `buf` (cleared first). `index` decides the `text=auto` cases git decides from the index.
    pub(crate) fn convert(
        &mut self,
        rela: &BStr,
        mut src: Vec<u8>,
        index: &gix::index::State,
        buf: &mut Vec<u8>,
    ) -> io::Result<()> {
        let ToGit {
            repo,
            pipeline,
            attributes,
            runner,
            eol,
            outcome,
        } = self;
        let mut platform = attributes
            .at_entry(rela, None, &repo.objects)
            .map_err(|e| io::Error::other(e.to_string()))?;
        outcome.reset();
        platform.matching_attributes(outcome);
        let attrs: Vec<gix::attrs::search::Match<'_>> = outcome.iter_selected().collect();
        let value = |i: usize| match attrs[i].assignment.state {
            gix::attrs::StateRef::Value(v) => Some(v.as_bstr()),
            _ => None,
        };
        let driver = value(0).and_then(|name| runner.driver(name));
        let encoding = value(1).and_then(BomEncoding::from_name);

        if let Some(driver) = driver {
            src = clean(runner, driver, rela, src)?;
        }
        let repo: &gix::Repository = repo;
        let mut index_object = |out: &mut Vec<u8>| index_blob(repo, index, rela, out);
        buf.clear();
        let Some(encoding) = encoding else {
            // gix-filter does the rest: an encoding it knows, eol, ident.
            return through_pipeline(pipeline, &mut platform, rela, &src, &mut index_object, buf);
        };
        // Ours: the encoding (left as it is where git cannot decode), then eol and ident with
        // gix-filter's functions and git's attribute rules.
        if let Some(utf8) = encoding.decode(&src) {
            src = utf8;
        }
        let digest = digest(
            attrs[2].assignment.state,
            attrs[3].assignment.state,
            attrs[4].assignment.state,
            *eol,
        );
        let ident = attrs[5].assignment.state.is_set();
        eol_and_ident(src, (digest, *eol, ident), &mut index_object, buf)
    }
}

/// The driver's `clean` of `src` (per file, or by the long-running filter): what it made, or
/// `src` as it was when the driver left it unconverted.
fn clean(
    runner: &mut Runner<'_>,
    driver: &Driver,
    rela: &BStr,
    src: Vec<u8>,
) -> io::Result<Vec<u8>> {
    let cleaned = runner.run(
        driver,
        Direction::Clean,
        rela,
        (&Meta::default(), None),
        &src,
        false,
        |r| {
            let mut out = Vec::new();
            r.read_to_end(&mut out).map(|_| out)
        },
    );
    let out = match cleaned {
        Ok(Filtered::Converted(Ok(out))) => out,
        Ok(Filtered::Converted(Err(err))) => return Err(err),
        Ok(Filtered::Unconverted | Filtered::Delayed) => src,
        Err(fatal) => return Err(io::Error::other(fatal.message)),
    };
    runner.messages.clear();
    Ok(out)
}

/// The index's blob of `rela` into `out`, which git's `text=auto` consults (`None`: no such
/// entry, or not a blob).
fn index_blob(
    repo: &gix::Repository,
    index: &gix::index::State,
    rela: &BStr,
    out: &mut Vec<u8>,
) -> gix::Result<Option<()>> {
    use gix::objs::Find;
    let Some(entry) = index.entry_by_path(rela) else {
        return Ok(None);
    };
    let found = repo.objects.try_find(&entry.id, out)?;
    Ok(found
        .filter(|o| o.kind == gix::objs::Kind::Blob)
        .map(|_| ()))
}

/// gix-filter's to-git pipeline (an encoding it knows, eol, ident) of `src` into `buf`, with
/// the attributes of `platform`.
fn through_pipeline(
    pipeline: &mut gix::filter::plumbing::Pipeline,
    platform: &mut gix::worktree::stack::Platform<'_>,
    rela: &BStr,
    src: &[u8],
    index_object: &mut dyn FnMut(&mut Vec<u8>) -> gix::Result<Option<()>>,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    let path = gix::path::from_bstr(rela).map_err(|e| io::Error::other(e.to_string()))?;
    let converted = pipeline
        .convert_to_git(
            src,
            &path,
            &mut |_, attrs| {
                platform.matching_attributes(attrs);
            },
            index_object,
        )
        .map_err(|e| io::Error::other(e.to_string()))?;
    match converted {
        ToGitOutcome::Unchanged(mut r) => {
            r.read_to_end(buf)?;
        }
        ToGitOutcome::Buffer(b) => buf.extend_from_slice(b),
        ToGitOutcome::Process(mut r) => {
            r.read_to_end(buf)?;
        }
    }
    Ok(())
}

/// The eol conversion (`digest`, with the configuration `eol`) and, if `ident` is set, the
/// undoing of `$Id$` expansions, of `src` into `buf`.
fn eol_and_ident(
    mut src: Vec<u8>,
    (digest, eol, ident): (eol::AttributesDigest, eol::Configuration, bool),
    index_object: &mut dyn FnMut(&mut Vec<u8>) -> gix::Result<Option<()>>,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    let converted = eol::convert_to_git(
        &src,
        digest,
        buf,
        index_object,
        eol::convert_to_git::Options {
            round_trip_check: None,
            config: eol,
        },
    )
    .map_err(|e| io::Error::other(e.to_string()))?;
    if converted {
        std::mem::swap(&mut src, buf);
    }
    buf.clear();
    let undone = ident
        && gix::filter::plumbing::ident::undo(&src, buf)
            .map_err(|e| io::Error::other(e.to_string()))?;
    if !undone {
        *buf = src;
    }
    Ok(())
}

/// The end-of-line treatment of a path from its `text`, `crlf` and `eol` attributes and the
/// configuration, as git's `convert_attrs` decides it (and gix-filter's pipeline with it).
fn digest(
    text: gix::attrs::StateRef<'_>,
    crlf: gix::attrs::StateRef<'_>,
    eol_attr: gix::attrs::StateRef<'_>,
    config: eol::Configuration,
) -> eol::AttributesDigest {
    use eol::AttributesDigest as D;
    use gix::attrs::StateRef;
    let text_like = |s: StateRef<'_>| match s {
        StateRef::Set => Some(D::Text),
        StateRef::Unset => Some(D::Binary),
        StateRef::Value(v) if v.as_bstr() == "input" => Some(D::TextInput),
        StateRef::Value(v) if v.as_bstr() == "auto" => Some(D::TextAuto),
        _ => None,
    };
    let mut digest = text_like(text).or_else(|| text_like(crlf));
    if digest != Some(D::Binary) {
        let mode = match eol_attr {
            StateRef::Value(v) if v.as_bstr() == "lf" => Some(eol::Mode::Lf),
            StateRef::Value(v) if v.as_bstr() == "crlf" => Some(eol::Mode::CrLf),
            _ => None,
        };
        digest = match (digest, mode) {
            (Some(D::TextAuto), Some(eol::Mode::Lf)) => Some(D::TextAutoInput),
            (Some(D::TextAuto), Some(eol::Mode::CrLf)) => Some(D::TextAutoCrlf),
            (_, Some(eol::Mode::CrLf)) => Some(D::TextCrlf),
            (_, Some(eol::Mode::Lf)) => Some(D::TextInput),
            (d, None) => d,
        };
    }
    match digest {
        None => config.auto_crlf.into(),
        Some(D::Text) => config.to_eol().into(),
        Some(d) => d,
    }
}
