//! Restoring paths: `git checkout [<rev>] -- <pathspec>` and `git restore [--source] [--staged]
//! [--worktree] <pathspec>`. The selected entries are written through the same pool as a
//! checkout; the index is updated as git does for each form.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;
use gix::index::entry::{Flags, Stat};

use crate::fs::lock::IndexLock;
use crate::fs::remove::Remover;
use crate::fs::{leading_dirs, Root};
use crate::ops::checkout::skeleton_index;
use crate::plan::pathspec::Matcher;
use crate::plan::{self, Kind, Plan};
use crate::sys::context::Context;
use crate::write::error::Error as CheckoutError;
use crate::write::options::Options;
use crate::write::Job;

/// Where the restored content comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// The index (`git checkout -- paths`, `git restore paths`).
    Index,
    /// A tree (`git checkout REV -- paths`, `git restore --source REV paths`).
    Tree(ObjectId),
}

/// What to restore and where.
#[derive(Debug, Clone)]
pub struct Request {
    /// The content's source.
    pub source: Source,
    /// The pathspecs selecting what is restored, with git's magic (`pathspec.rs`).
    pub pathspec: crate::plan::pathspec::Pathspec,
    /// Write the work tree.
    pub worktree: bool,
    /// Write the index entries (`--staged`, or `checkout REV -- paths`).
    pub staged: bool,
    /// Overlay mode (`checkout`): paths the source lacks are left alone. Without it (`restore`),
    /// they are removed from the restored locations.
    pub overlay: bool,
    /// `checkout -f -- paths` / `restore --ignore-unmerged`: unmerged paths are left alone (and
    /// reported in [`Outcome::unmerged`]) instead of refusing the restore.
    pub ignore_unmerged: bool,
    /// `--ours` (2) / `--theirs` (3): unmerged paths are written to the work tree from this
    /// stage of the index, whose conflict stages stay (git's `checkout_stage`). Index source only.
    pub stage: Option<u8>,
    /// `checkout -m -- paths`, `restore --merge`, `--conflict=<style>`: selected unmerged paths
    /// are written as the three-way merge of their stages 2 and 3 over stage 1, with conflict
    /// markers in this style, and keep their stages in the index (git's `checkout_merged`);
    /// paths git recorded as resolved (the index's resolve-undo records) get their conflict
    /// stages back first (git's `unmerge_index`). Index source only.
    pub merge: Option<crate::ops::merge::Style>,
    /// `--ignore-skip-worktree-bits`: skip-worktree entries the pathspecs select are restored
    /// too (and, without overlay, removed), where by default sparse checkout leaves them alone.
    pub ignore_skip_worktree: bool,
}

/// What a restore did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Work tree entries written.
    pub written: usize,
    /// Work tree entries or index entries removed.
    pub removed: usize,
    /// Entries that could not be written, each naming its path and cause; the others were
    /// written and recorded, and the caller exits non-zero, as git does.
    pub errors: Vec<crate::write::error::EntryError>,
    /// Unmerged paths left alone under [`Request::ignore_unmerged`] (git warns about each).
    pub unmerged: Vec<BString>,
    /// With [`Request::merge`]: the unmerged paths whose merge was written to the work tree
    /// (git's "Recreated N merge conflicts").
    pub recreated: usize,
    /// With [`Request::merge`]: the paths whose sides are binary and differ; our side was
    /// written (git warns `Cannot merge binary files: <path> (ours vs. theirs)`).
    pub binary: Vec<BString>,
}

/// Why a restore failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Pathspecs matched nothing in the source or the index (each is named, in the order
    /// given, as git's `report_path_error` names them); nothing was changed.
    #[error("pathspec '{}' did not match any file(s) known to git", .0.first().map(ToString::to_string).unwrap_or_default())]
    NoMatch(Vec<BString>),
    /// Selected paths are unmerged and the source does not resolve them; nothing was changed.
    /// git: `error: path '<path>' is unmerged`, exit 1.
    #[error("path '{}' is unmerged", .0.first().map(ToString::to_string).unwrap_or_default())]
    Unmerged(Vec<BString>),
    /// Overlay mode (`checkout --ours/--theirs -- paths`): selected unmerged paths lack the
    /// requested stage; nothing was changed. git: `error: path '<path>' does not have our
    /// version` (or `their version`), exit 1.
    #[error("path '{}' does not have {} version", .paths.first().map(ToString::to_string).unwrap_or_default(), if *.stage == 2 { "our" } else { "their" })]
    MissingStage {
        /// The requested stage (2 or 3).
        stage: u8,
        /// The selected unmerged paths without it, in index order.
        paths: Vec<BString>,
    },
    /// [`Request::merge`]: selected unmerged paths lack stage 2 or 3, so there is nothing to
    /// merge; nothing was changed. git: `error: path '<path>' does not have all necessary
    /// versions`, exit 1.
    #[error("path '{}' does not have all necessary versions", .0.first().map(ToString::to_string).unwrap_or_default())]
    MissingStages(Vec<BString>),
    /// [`Request::merge`]: a blob merge failed.
    #[error(transparent)]
    Merge(#[from] crate::ops::merge::Error),
    /// Planning, writing or recording failed.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// The index could not be read.
    #[error("unable to read the index: {0}")]
    Index(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A work tree path could not be removed.
    #[error("unable to unlink '{path}': {}", crate::fs::strerror(.source))]
    Remove {
        /// The path.
        path: BString,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// A directory where a restored entry goes could not be removed: git's `remove_subtree`
    /// dies there, after writing the entries before it in index order (which are written here
    /// too), before the index is written.
    #[error("cannot {op} '{path}': {}", crate::fs::strerror(.source))]
    Subtree {
        /// The step that failed: `rmdir` the directory, `unlink` something in it...
        op: &'static str,
        /// The directory, or the path inside it the step failed on.
        path: BString,
        /// The system error.
        #[source]
        source: std::io::Error,
        /// The entries before it that could not be written either (git reports each as it
        /// goes, before it dies).
        failed: Vec<crate::write::error::EntryError>,
    },
}

/// Restore the paths `req` selects, in the phases of git's `checkout_paths`: **read** the index
/// and the source, **select** the paths (every refusal happens there, before anything is
/// touched), **write** the work tree, **record** the index.
pub fn restore(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    req: &Request,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    let (lock, index, source, merged, m, fsmonitor) = read(repo, worktree, index_path, req, opts)?;
    let selection = select(&index, source, req, &m)?;
    let mut outcome = Outcome {
        recreated: merged.recreated,
        binary: merged.binary,
        ..Outcome::default()
    };
    let mut stats = vec![None; selection.plan.entries.len()];
    if req.worktree {
        let written = write(repo, worktree, &index, &selection, opts, ctx)?;
        outcome.removed = written.removed;
        outcome.written = written.stats.iter().filter(|s| s.is_some()).count();
        outcome.errors = written.errors;
        stats = written.stats;
    }
    // A work-tree-only restore from another source than the index leaves the index alone.
    if req.staged || matches!(req.source, Source::Index) {
        let mut state = record(&index, &selection, &stats, req, &m, &mut outcome.removed);
        let root = Root::open(worktree).map_err(|e| Error::Index(e.into()))?;
        crate::inspect::refresh::smudge_carried(repo, &root, &mut state, &index, opts.workers)
            .map_err(|e| Error::Index(e.into()))?;
        let resolve_undo = resolve_undo(&index, &state, &merged.unmerged);
        // Entries change only at the selected paths (and at what gives way to them, which lies
        // below or at a restored path): the rest of the cache-tree is reused.
        let changed = crate::index::record::changed_dirs(
            selection
                .plan
                .entries
                .iter()
                .map(|e| e.path.as_bstr())
                .chain(selection.vanished.iter().map(|p| p.as_bstr()))
                .chain(selection.unmerged.iter().map(|p| p.as_bstr())),
        );
        crate::index::record::commit(
            lock,
            repo,
            state,
            crate::index::record::Keep {
                tree: None,
                previous: Some(&index),
                cache_tree: crate::index::record::CacheTree::Repair(&changed),
                resolve_undo: Some(&resolve_undo),
                changed_paths: None,
                fsmonitor: fsmonitor.as_ref(),
            },
        )
        .map_err(CheckoutError::from)?;
        // git's `checkout -- paths` writes its index without updated_workdir.
        crate::repo::hooks::index_changed(repo, false, false);
    }
    outcome.unmerged = selection.unmerged;
    if req.stage.is_some() && req.ignore_unmerged {
        // `restore --ignore-unmerged --ours`: git warns about each selected unmerged path, then
        // writes its stage all the same.
        let mut warned: Vec<BString> = index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() != 0 && m.selects(e.path(&index)))
            .map(|e| e.path(&index).to_owned())
            .collect();
        warned.dedup();
        outcome.unmerged = warned;
    }
    Ok(outcome)
}

/// The resolve-undo extension after a path restore, as git leaves it: the records the index had,
/// minus those `checkout -m` used to bring a conflict back (`used`), plus the stages of each
/// path whose conflict the restore resolved (git's `record_resolve_undo` when it removes a stage
/// entry: merged into the path's record, stage by stage), sorted by path.
fn resolve_undo(before: &gix::index::File, after: &gix::index::State, used: &[BString]) -> Vec<u8> {
    let mut records: BTreeMap<BString, crate::index::resolve_undo::ResolvedPath> =
        crate::index::resolve_undo::of(before)
            .into_iter()
            .filter(|r| !used.contains(&r.path))
            .map(|r| (r.path.clone(), r))
            .collect();
    let still_unmerged: HashSet<&BStr> = after
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(after))
        .collect();
    for e in before.entries().iter().filter(|e| e.stage_raw() != 0) {
        let path = e.path(before);
        if still_unmerged.contains(path) {
            continue;
        }
        let record = records.entry(path.to_owned()).or_insert_with(|| {
            crate::index::resolve_undo::ResolvedPath {
                path: path.to_owned(),
                stages: [None; 3],
            }
        });
        record.stages[e.stage_raw() as usize - 1] = Some((e.mode.bits(), e.id));
    }
    let records: Vec<_> = records.into_values().collect();
    crate::index::resolve_undo::encode(&records)
}

/// The merges [`read`] made for [`Request::merge`].
#[derive(Default)]
struct Merged {
    recreated: usize,
    binary: Vec<BString>,
    /// Paths whose resolve-undo record brought their conflict back: the record is used up.
    unmerged: Vec<BString>,
}

/// **read**: take `index.lock`, then read the index (a missing one is empty) and the entries of
/// the source. Skip-worktree entries are not restored from the index (git's
/// `mark_ce_for_checkout_*` skips them): they are not in the work tree on purpose. With
/// [`Request::merge`], selected resolved paths get their recorded conflict back first, and each
/// selected unmerged path with stages 2 and 3 is merged: the merge result is its source entry.
/// Also returns the pathspec matcher (it reads attributes through the index it was read with),
/// and the index's fsmonitor extension to carry (none when entries were unmerged again: their
/// positions are not the file's any more).
#[allow(clippy::type_complexity)]
fn read<'r>(
    repo: &'r gix::Repository,
    worktree: &Path,
    index_path: &Path,
    req: &Request,
    opts: &Options,
) -> Result<
    (
        IndexLock,
        gix::index::File,
        Vec<plan::Entry>,
        Merged,
        Matcher<'r>,
        Option<crate::index::fsmonitor::Previous>,
    ),
    Error,
> {
    let lock = IndexLock::acquire(index_path).map_err(CheckoutError::from)?;
    let mut index = gix::index::File::at(
        index_path,
        repo.object_hash(),
        crate::index::format::SKIP_HASH_ON_READ,
        gix::index::decode::Options::default(),
    )
    .or_else(|err| {
        if index_path.exists() {
            Err(Error::Index(Box::new(err)))
        } else {
            Ok(gix::index::File::from_state(
                gix::index::State::new(repo.object_hash()),
                index_path,
            ))
        }
    })?;
    let fsmonitor = req
        .merge
        .is_none()
        .then(|| crate::index::fsmonitor::Previous::of(repo, index_path, &index))
        .flatten();
    crate::plan::sparse::expand(&repo.objects, &mut index).map_err(Error::Index)?;
    // git's `repo_read_index`: in a sparse checkout, a skip-worktree entry whose file is
    // present is an ordinary entry again (`clear_skip_worktree_from_present_files`).
    if crate::plan::sparse::clears_present_files(repo) {
        if let Ok(root) = Root::open(worktree) {
            crate::plan::sparse::clear_present(&root, &mut index);
        }
    }
    let m = req
        .pathspec
        .matcher(repo, &index)
        .map_err(|e| Error::Index(e.into()))?;
    let mut merged = Merged::default();
    let source = match req.source {
        Source::Tree(tree) => {
            plan::from_tree(&repo.objects, tree, opts.protect)
                .map_err(CheckoutError::from)?
                .entries
        }
        Source::Index => {
            let mut entries: Vec<plan::Entry> = Vec::new();
            if let Some(style) = req.merge {
                let used = unmerge(&mut index, &m);
                let (found, done) = merge_unmerged(repo, worktree, &index, &m, style)?;
                entries = found;
                merged = done;
                merged.unmerged = used;
            }
            entries.extend(
                index
                    .entries()
                    .iter()
                    .filter(|e| {
                        (e.stage_raw() == 0 || Some(e.stage_raw() as u8) == req.stage)
                            && !skipped(e, req)
                    })
                    .map(|e| plan::Entry {
                        path: e.path(&index).to_owned(),
                        id: e.id,
                        kind: kind_of(e.mode),
                    }),
            );
            if req.merge.is_some() {
                entries.sort_by(|a, b| a.path.cmp(&b.path));
            }
            entries
        }
    };
    Ok((lock, index, source, merged, m, fsmonitor))
}

/// git's `unmerge_index`: every selected path with a resolve-undo record that is not unmerged
/// now gets the recorded stages back (its stage-0 entry, if any, goes).
fn unmerge(index: &mut gix::index::File, m: &Matcher<'_>) -> Vec<BString> {
    let records: Vec<crate::index::resolve_undo::ResolvedPath> =
        crate::index::resolve_undo::of(index)
            .into_iter()
            .filter(|r| m.selects(r.path.as_bstr()))
            .collect();
    if records.is_empty() {
        return Vec::new();
    }
    let unmerged: HashSet<BString> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(index).to_owned())
        .collect();
    let records: Vec<_> = records
        .into_iter()
        .filter(|r| !unmerged.contains(&r.path))
        .collect();
    let replaced: HashSet<&BStr> = records.iter().map(|r| r.path.as_bstr()).collect();
    index.remove_entries(|_, path, e| e.stage_raw() == 0 && replaced.contains(path));
    for r in &records {
        for (n, stage) in r.stages.iter().enumerate() {
            let Some((mode, id)) = stage else { continue };
            let stage = [
                gix::index::entry::Stage::Base,
                gix::index::entry::Stage::Ours,
                gix::index::entry::Stage::Theirs,
            ][n];
            index.dangerously_push_entry(
                Stat::default(),
                *id,
                Flags::from_stage(stage),
                gix::index::entry::Mode::from_bits_truncate(*mode),
                r.path.as_bstr(),
            );
        }
    }
    index.sort_entries();
    records.into_iter().map(|r| r.path).collect()
}

/// The merge of each selected unmerged path of `index` that has stages 2 and 3, as a source
/// entry with stage 2's mode (git's `checkout_merged`). Paths without both stages are left
/// out, so [`select`] finds them unresolved and refuses.
fn merge_unmerged(
    repo: &gix::Repository,
    worktree: &Path,
    index: &gix::index::File,
    m: &Matcher<'_>,
    style: crate::ops::merge::Style,
) -> Result<(Vec<plan::Entry>, Merged), Error> {
    let mut stages: BTreeMap<&BStr, [Option<(ObjectId, gix::index::entry::Mode)>; 3]> =
        BTreeMap::new();
    for e in index.entries() {
        let path = e.path(index);
        let stage = e.stage_raw() as usize;
        if stage != 0 && m.selects(path) {
            stages.entry(path).or_default()[stage - 1] = Some((e.id, e.mode));
        }
    }
    let mut entries = Vec::new();
    let mut merged = Merged::default();
    let mut merger = None;
    for (path, [base, ours, theirs]) in stages {
        let (Some(ours), Some(theirs)) = (ours, theirs) else {
            continue;
        };
        let merger = match &mut merger {
            Some(m) => m,
            None => merger.insert(crate::ops::merge::BlobMerger::new(repo, worktree, style)?),
        };
        let result = merger.merge(path, base, ours, theirs)?;
        if result.binary {
            merged.binary.push(path.to_owned());
        }
        merged.recreated += 1;
        entries.push(plan::Entry {
            path: path.to_owned(),
            id: result.id,
            kind: kind_of(ours.1),
        });
    }
    Ok((entries, merged))
}

/// What a restore touches, decided before anything is.
struct Selection {
    /// The source's selected entries (index order) and the directories they need: what the
    /// writers write and what `--staged` records.
    plan: Plan,
    /// Selected unmerged paths the source does not resolve, left alone under
    /// [`Request::ignore_unmerged`] (in index order, each once).
    unmerged: Vec<BString>,
    /// No-overlay: tracked paths the source lacks, removed from the restored locations.
    vanished: Vec<BString>,
}

/// **select**: what `req` selects from `source` and `index`. A pathspec that matches nothing
/// ([`Error::NoMatch`]) or a selected unmerged path the source does not resolve
/// ([`Error::Unmerged`], unless ignored) stops the restore here, with nothing changed.
fn select(
    index: &gix::index::File,
    source: Vec<plan::Entry>,
    req: &Request,
    m: &Matcher<'_>,
) -> Result<Selection, Error> {
    // Skip-worktree entries take no part, unless `--ignore-skip-worktree-bits` (git's
    // `mark_ce_for_checkout_*`); a tree's entry that is the same as such an entry leaves it in
    // place (`update_some`), so it takes no part either.
    let kept_skipped: HashSet<(&BStr, ObjectId, u32)> = index
        .entries()
        .iter()
        .filter(|e| {
            e.stage_raw() == 0 && skipped(e, req) && !e.flags.contains(Flags::INTENT_TO_ADD)
        })
        .map(|e| (e.path(index), e.id, e.mode.bits()))
        .collect();
    let kept = |e: &plan::Entry| {
        kept_skipped.contains(&(e.path.as_bstr(), e.id, e.kind.index_mode().bits()))
    };
    // The source's entries the restore takes, each matched once.
    let selected: Vec<bool> = source
        .iter()
        .map(|e| !kept(e) && m.selects(e.path.as_bstr()))
        .collect();
    let taken = || {
        source
            .iter()
            .zip(&selected)
            .filter(|(_, s)| **s)
            .map(|(e, _)| e)
    };
    check_pathspecs(index, &source, taken(), req, m, &kept)?;
    let unmerged = unmerged(index, &source, req, m);
    if let (Some(stage), false) = (req.stage, unmerged.is_empty() || !req.overlay) {
        // git's `check_stage`: only overlay mode refuses; no-overlay unlinks them (`vanished`).
        return Err(Error::MissingStage {
            stage,
            paths: unmerged,
        });
    }
    if req.merge.is_some() && !unmerged.is_empty() {
        // git's `check_stages`: a path to merge needs both stage 2 and stage 3.
        return Err(Error::MissingStages(unmerged));
    }
    let unmerged = if req.stage.is_some() {
        Vec::new()
    } else {
        unmerged
    };
    if !unmerged.is_empty() && !req.ignore_unmerged {
        return Err(Error::Unmerged(unmerged));
    }
    let entries: Vec<plan::Entry> = source
        .into_iter()
        .zip(selected)
        .filter_map(|(e, s)| s.then_some(e))
        .collect();
    let mut dirs: Vec<BString> =
        crate::fs::leading_dirs_of(entries.iter().map(|e| e.path.as_bstr()))
            .map(ToOwned::to_owned)
            .collect();
    dirs.sort();
    dirs.dedup();
    let plan = Plan {
        entries,
        dirs,
        trees: None,
        ..Plan::default()
    };
    let vanished = if req.overlay {
        Vec::new()
    } else {
        vanished(index, &plan, (&unmerged, req.ignore_skip_worktree), m)
    };
    Ok(Selection {
        plan,
        unmerged,
        vanished,
    })
}

/// Whether the index entry `e` takes no part in `req`'s pathspecs: a skip-worktree one, unless
/// `--ignore-skip-worktree-bits`.
fn skipped(e: &gix::index::Entry, req: &Request) -> bool {
    !req.ignore_skip_worktree && e.flags.contains(Flags::SKIP_WORKTREE)
}

/// git's `ps_matched` and `report_path_error`: every positive pathspec must match a path on its
/// own, among the source's entries (less those `kept`) and the index's (unless `checkout REV --
/// paths` in overlay mode, which counts only what REV has). Exclude pathspecs are marked
/// matched whenever a path matched a positive one (with only excludes, git's implicit `.`
/// does): they are reported only when that never happened. A tree's `taken` entries go into
/// git's index first (`read_tree_some`, replacing what conflicts with them): a tracked path
/// below a file the tree brings, or a tracked file where it brings a directory, is gone before
/// the pathspecs are matched.
fn check_pathspecs<'a>(
    index: &'a gix::index::File,
    source: &'a [plan::Entry],
    taken: impl Iterator<Item = &'a plan::Entry>,
    req: &Request,
    m: &Matcher<'_>,
    kept: &dyn Fn(&plan::Entry) -> bool,
) -> Result<(), Error> {
    let from_index = !(req.overlay && matches!(req.source, Source::Tree(_)));
    let added: HashSet<&BStr> = match req.source {
        Source::Tree(_) => taken.map(|e| e.path.as_bstr()).collect(),
        Source::Index => HashSet::new(),
    };
    let added_dirs: HashSet<&BStr> = crate::fs::leading_dirs_of(added.iter().copied()).collect();
    let displaced = |p: &BStr| added_dirs.contains(p) || leading_dirs(p).any(|d| added.contains(d));
    let candidates = || {
        let index_paths = index
            .entries()
            .iter()
            .filter(move |e| from_index && !skipped(e, req))
            .map(|e| e.path(index))
            .filter(|p| !displaced(p));
        source
            .iter()
            .filter(|e| !kept(e))
            .map(|e| e.path.as_bstr())
            .chain(index_paths)
    };
    let hits: Vec<bool> = (0..req.pathspec.len())
        .map(|k| !req.pathspec.is_exclude(k) && candidates().any(|p| m.item_matches(k, p)))
        .collect();
    let positives = (0..req.pathspec.len()).any(|k| !req.pathspec.is_exclude(k));
    let any_positive_hit = if positives {
        hits.iter().any(|h| *h)
    } else {
        candidates().next().is_some()
    };
    let unmatched: Vec<BString> = (0..req.pathspec.len())
        .filter(|&k| !(hits[k] || req.pathspec.is_exclude(k) && any_positive_hit))
        .map(|k| req.pathspec.original(k).to_owned())
        .collect();
    if unmatched.is_empty() {
        Ok(())
    } else {
        Err(Error::NoMatch(unmatched))
    }
}

/// The selected unmerged paths of `index` that `source` does not resolve (git's
/// `checkout_paths`): a tree source replaces all stages of the paths it has; the index resolves
/// nothing.
fn unmerged(
    index: &gix::index::File,
    source: &[plan::Entry],
    req: &Request,
    m: &Matcher<'_>,
) -> Vec<BString> {
    // `checkout REV -- paths` (overlay) touches only what REV has (git's
    // `mark_ce_for_checkout_overlay`): unmerged paths it lacks are left alone, not refused.
    if req.overlay && matches!(req.source, Source::Tree(_)) {
        return Vec::new();
    }
    // With `--ours`/`--theirs`, the index source resolves the paths that have the stage.
    // With `--merge`, the merged paths are in the source too.
    let from_tree: HashSet<&BStr> = match (req.source, req.stage) {
        (Source::Tree(_), _) | (Source::Index, Some(_)) => {
            source.iter().map(|e| e.path.as_bstr()).collect()
        }
        (Source::Index, None) if req.merge.is_some() => {
            source.iter().map(|e| e.path.as_bstr()).collect()
        }
        (Source::Index, None) => HashSet::new(),
    };
    let mut unmerged: Vec<BString> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(index))
        .filter(|p| m.selects(p) && !from_tree.contains(p))
        .map(ToOwned::to_owned)
        .collect();
    unmerged.dedup();
    unmerged
}

/// No-overlay: the selected tracked paths that the source lacks, except unmerged paths left
/// alone and skip-worktree entries (left alone in the work tree and the index, unless
/// `ignore_skip_worktree`).
fn vanished(
    index: &gix::index::File,
    plan: &Plan,
    (unmerged, ignore_skip_worktree): (&[BString], bool),
    m: &Matcher<'_>,
) -> Vec<BString> {
    let in_source: HashSet<&BStr> = plan.entries.iter().map(|e| e.path.as_bstr()).collect();
    let unmerged: HashSet<&BStr> = unmerged.iter().map(|p| p.as_bstr()).collect();
    let mut vanished = index
        .entries()
        .iter()
        .map(|e| e.path(index))
        .filter(|p| m.selects(p) && !in_source.contains(p) && !unmerged.contains(p))
        .filter(|p| {
            index
                .entry_by_path(p)
                .is_none_or(|e| ignore_skip_worktree || !e.flags.contains(Flags::SKIP_WORKTREE))
        })
        .map(ToOwned::to_owned)
        .collect::<Vec<_>>();
    // The stages of an unmerged path without the `--ours`/`--theirs` stage: the path once.
    vanished.dedup();
    vanished
}

/// What the write phase did to the work tree.
struct Written {
    /// Stat data per plan entry, as [`crate::write::Executed::stats`].
    stats: Vec<Option<Stat>>,
    /// Entries that could not be written.
    errors: Vec<crate::write::error::EntryError>,
    /// Vanished paths removed.
    removed: usize,
}

/// **write**: the selected entries into the work tree. The filters come first, so an entry that
/// needs an external driver is refused before anything is removed or written; then room is made
/// ([`make_room`]) and the writers run. An interruption is an error: the index is left as it
/// was (the lock is dropped), and the paths written so far show as changes against it, so
/// nothing is lost.
fn write(
    repo: &gix::Repository,
    worktree: &Path,
    index: &gix::index::File,
    selection: &Selection,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Written, Error> {
    let plan = &selection.plan;
    let result = result_index(index, plan);
    let (pipeline, attributes) = crate::write::filters_for(
        repo,
        &result,
        gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
    )?;
    let root = Root::open(worktree).map_err(|source| Error::Remove {
        path: BString::from(worktree.as_os_str().as_encoded_bytes()),
        source,
    })?;
    unlink_first_attribute_files(&mut root.dirs(), index, plan);
    let clean = up_to_date(repo, &root, (index, &result), plan, opts)?;
    let cwd = opts.cwd.as_ref().map(|c| c.as_bstr());
    let (jobs, removed, stopped) = make_room(&root, plan, (&selection.vanished, cwd), &clean)?;
    let present = crate::write::attributes_present(
        repo,
        &root,
        index
            .entries()
            .iter()
            .map(|e| e.path(index))
            .chain(plan.entries.iter().map(|e| e.path.as_bstr())),
    );
    let executed = crate::write::execute(
        repo,
        plan,
        &jobs,
        &root,
        opts,
        crate::write::Filters {
            pipeline: &pipeline,
            attributes: &attributes,
            present,
        },
        ctx.progress,
        ctx.interrupt,
        false,
        None,
    )?;
    if executed.interrupted {
        return Err(CheckoutError::Interrupted.into());
    }
    if let Some(mut stopped) = stopped {
        if let Error::Subtree { failed, .. } = &mut stopped {
            *failed = executed.errors;
        }
        return Err(stopped);
    }
    Ok(Written {
        stats: executed.stats,
        errors: executed.errors,
        removed,
    })
}

/// git's `checkout_entry` unlinks the file it replaces before it looks up the entry's
/// attributes, and reads a directory's `.gitattributes` (work tree first, then the index) at the
/// first lookup below that directory: where the first entry written below a directory is that
/// directory's own `.gitattributes`, git finds no file there and reads the restored one from the
/// index, for every entry after it (the racily clean ones it compares by content included).
/// The same is had by unlinking that file before anything is looked up (its writer then creates
/// it anew). Entries the index has as they are restored are not counted as written: git looks
/// up nothing for them unless they are racily clean.
fn unlink_first_attribute_files(
    dirs: &mut crate::fs::Dirs<'_>,
    index: &gix::index::File,
    plan: &Plan,
) {
    let mut seen: HashSet<&BStr> = HashSet::new();
    for e in &plan.entries {
        let path = e.path.as_bstr();
        let same = index
            .entry_by_path(path)
            .is_some_and(|i| i.id == e.id && i.mode == e.kind.index_mode());
        if same {
            continue;
        }
        let (dir, name) = crate::fs::split_path(path);
        if name == ".gitattributes" && !seen.contains(dir) {
            let _ = dirs.unlink(path);
        }
        seen.insert(dir);
        seen.extend(leading_dirs(path));
        seen.insert(b"".as_bstr());
    }
}

/// The entries of `plan` that are already on disk as the index records them (same object and
/// mode in the index, and a work tree file the refresh finds clean): git's `checkout_entry`
/// leaves those alone, so they are neither removed nor rewritten.
fn up_to_date(
    repo: &gix::Repository,
    root: &Root,
    (index, result): (&gix::index::File, &gix::index::State),
    plan: &Plan,
    opts: &Options,
) -> Result<HashSet<usize>, Error> {
    let candidates: Vec<(usize, &gix::index::Entry)> = plan
        .entries
        .iter()
        .enumerate()
        .filter_map(|(k, pe)| {
            let e = index.entry_by_path(pe.path.as_bstr())?;
            let same = e.stage_raw() == 0
                && e.id == pe.id
                && e.mode == pe.kind.index_mode()
                && !e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD);
            same.then_some((k, e))
        })
        .collect();
    if candidates.is_empty() {
        return Ok(HashSet::new());
    }
    // Racily clean files are compared by content with the attributes of the result, as git's
    // are when it reaches them (see `unlink_first_attribute_files`).
    let states = crate::inspect::refresh::check(
        repo,
        root,
        result,
        index.timestamp().unix_seconds(),
        candidates
            .iter()
            .map(|&(k, entry)| crate::inspect::refresh::Item {
                path: plan.entries[k].path.as_bstr(),
                entry,
            }),
        opts.workers,
    )
    .map_err(|e| Error::Index(e.into()))?;
    // git's `ie_match_stat`: a file whose stat data changed is rewritten even when its content
    // is the same (only a racily clean one is compared by content).
    let rules = crate::inspect::refresh::StatRules::of(repo);
    Ok(candidates
        .iter()
        .zip(states)
        .filter(|((_, entry), s)| match s {
            crate::inspect::refresh::State::Clean => true,
            crate::inspect::refresh::State::Refreshed(fresh) => {
                rules.same_as_git(&entry.stat, fresh)
            }
            _ => false,
        })
        .map(|((k, _), _)| *k)
        .collect())
}

/// The index as it will be, the source of the writers' attributes (after the work tree's files,
/// git's `GIT_ATTR_CHECKIN` order for `checkout -- paths`): the restored entries over the current
/// ones.
fn result_index(index: &gix::index::File, plan: &Plan) -> gix::index::State {
    let in_source: HashSet<&BStr> = plan.entries.iter().map(|e| e.path.as_bstr()).collect();
    let mut result = skeleton_index(plan, index.object_hash());
    for e in index.entries() {
        if !in_source.contains(e.path(index)) {
            result.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, e.path(index));
        }
    }
    result.sort_entries();
    result
}

/// One restored path as the record phase sees it: the source's entry, and the stat data of the
/// file written for it (`None` when the work tree was not written or the write failed).
struct Restored<'a> {
    entry: &'a plan::Entry,
    stat: Option<Stat>,
}

impl Restored<'_> {
    /// Add the source's entry to `state`, with the written file's stat data if there is one.
    fn push_into(&self, state: &mut gix::index::State) {
        state.dangerously_push_entry(
            self.stat.unwrap_or_default(),
            self.entry.id,
            Flags::empty(),
            self.entry.kind.index_mode(),
            self.entry.path.as_bstr(),
        );
    }
}

/// **record**: the index after the restore, as git leaves it for each form. `--staged` (or
/// `checkout REV --`) takes the source's entries: all stages of a selected path collapse into
/// the source's one entry, selected paths the source lacks go (no-overlay, unmerged paths left
/// alone), and kept entries that are a directory of the restored entries now, or lie below a
/// restored file, give way (git replaces them when it adds the new entry). A work-tree-only
/// restore from the index refreshes the stat data of what it wrote. Entries removed from the
/// index are counted in `removed`.
fn record(
    index: &gix::index::File,
    selection: &Selection,
    stats: &[Option<Stat>],
    req: &Request,
    m: &Matcher<'_>,
    removed: &mut usize,
) -> gix::index::State {
    let plan = &selection.plan;
    let restored: BTreeMap<&BStr, Restored<'_>> = plan
        .entries
        .iter()
        .zip(stats)
        .map(|(entry, &stat)| (entry.path.as_bstr(), Restored { entry, stat }))
        .collect();
    let unmerged: HashSet<&BStr> = selection.unmerged.iter().map(|p| p.as_bstr()).collect();
    let plan_dirs: HashSet<&BStr> = plan.dirs.iter().map(|d| d.as_bstr()).collect();
    let gives_way = |path: &BStr| {
        req.staged
            && (plan_dirs.contains(path) || leading_dirs(path).any(|d| restored.contains_key(d)))
    };
    let mut state = gix::index::State::new(index.object_hash());
    let mut from_source: HashSet<&BStr> = HashSet::new();
    for e in index.entries() {
        let path = e.path(index);
        if m.selects(path) {
            match restored.get(path) {
                Some(r) if req.staged => {
                    // An entry already equal to the source stays as it is, stat data included
                    // (git's `update_some`), unless its file was just rewritten.
                    let same = e.stage_raw() == 0
                        && !e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD)
                        && e.id == r.entry.id
                        && e.mode == r.entry.kind.index_mode();
                    if from_source.insert(r.entry.path.as_bstr()) {
                        if same && r.stat.is_none() {
                            state.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, path);
                        } else {
                            r.push_into(&mut state);
                        }
                    }
                    continue;
                }
                // A skip-worktree entry takes no part (git's `mark_ce_for_checkout_no_overlay`).
                None if req.staged
                    && !req.overlay
                    && !unmerged.contains(path)
                    && !skipped(e, req) =>
                {
                    *removed += 1;
                    continue;
                }
                Some(&Restored {
                    stat: Some(stat), ..
                }) if e.stage_raw() == 0 || Some(e.stage_raw() as u8) == req.stage => {
                    state.dangerously_push_entry(stat, e.id, e.flags, e.mode, path);
                    continue;
                }
                _ => {}
            }
        }
        if gives_way(path) {
            *removed += 1;
            continue;
        }
        state.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, path);
    }
    if req.staged {
        let in_index: HashSet<&BStr> = index.entries().iter().map(|e| e.path(index)).collect();
        for (path, r) in &restored {
            if !in_index.contains(path) {
                r.push_into(&mut state);
            }
        }
    }
    state.sort_entries();
    state
}

/// Make room for the restored entries, as git's forced checkout of paths does: a non-directory
/// where the entries need a directory goes, a directory where an entry goes is removed with its
/// contents (unless the entry is a gitlink, which keeps it), and the paths the source lacks
/// (no-overlay) are removed, with the directories they leave empty. Files that are replaced are
/// left to their writer, which replaces each one just before writing it. Returns the writer's
/// jobs and the number of vanished paths removed. The current directory `cwd` stays when
/// emptied (git's `remove_path`). A directory in an entry's place that cannot be removed stops
/// it there: the jobs before that entry are returned with the error ([`Error::Subtree`]), for
/// the caller to write them and then fail, as git does.
fn make_room(
    root: &Root,
    plan: &Plan,
    (vanished, cwd): (&[BString], Option<&BStr>),
    clean: &HashSet<usize>,
) -> Result<(Vec<Job>, usize, Option<Error>), Error> {
    use crate::fs::FileType;
    let fail = |e: crate::fs::remove::Error| Error::Remove {
        path: e.path,
        source: e.source,
    };
    let mut remover = Remover::new(root);
    let mut dirs = root.dirs();
    for dir in &plan.dirs {
        if dirs
            .file_type(dir.as_bstr())
            .ok()
            .flatten()
            .is_some_and(|t| t != FileType::Directory)
        {
            remover.entry(dir.as_bstr(), false).map_err(fail)?;
            dirs.forget();
        }
    }
    let mut jobs = Vec::with_capacity(plan.entries.len());
    for (entry, e) in plan.entries.iter().enumerate() {
        if clean.contains(&entry) {
            continue;
        }
        let kind = dirs.file_type(e.path.as_bstr()).ok().flatten();
        let replace = match kind {
            Some(FileType::Directory) if e.kind != Kind::Gitlink => {
                if let Err(err) = dirs.remove_subtree(e.path.as_bstr()) {
                    let stopped = Error::Subtree {
                        op: err.op,
                        path: err.path,
                        source: err.source,
                        failed: Vec::new(),
                    };
                    return Ok((jobs, 0, Some(stopped)));
                }
                dirs.forget();
                false
            }
            Some(FileType::Directory) | None => false,
            Some(_) => true,
        };
        jobs.push(Job { entry, replace });
    }
    // Files below a restored gitlink belong to the submodule's work tree: git leaves them.
    let gitlinks: HashSet<&BStr> = plan
        .entries
        .iter()
        .filter(|e| e.kind == Kind::Gitlink)
        .map(|e| e.path.as_bstr())
        .collect();
    let inside_gitlink = |path: &BStr| leading_dirs(path).any(|d| gitlinks.contains(d));
    let before = remover.removed;
    for path in vanished.iter().map(|p| p.as_bstr()) {
        if inside_gitlink(path) {
            continue;
        }
        // A vanished gitlink's directory goes if it is empty; anything else is unlinked.
        let is_dir = dirs.file_type(path).ok().flatten() == Some(FileType::Directory);
        remover.entry(path, is_dir).map_err(fail)?;
    }
    let removed = remover.removed - before;
    let needed: HashSet<&BStr> = plan.dirs.iter().map(|d| d.as_bstr()).chain(cwd).collect();
    // `dirs` may hold an emptied directory, which Windows would then not let go (Dirs::forget).
    dirs.forget();
    remover.remove_emptied_dirs(&needed);
    Ok((jobs, removed, None))
}

fn kind_of(mode: gix::index::entry::Mode) -> Kind {
    use gix::index::entry::Mode;
    if mode == Mode::FILE_EXECUTABLE {
        Kind::Executable
    } else if mode == Mode::SYMLINK {
        Kind::Symlink
    } else if mode == Mode::COMMIT {
        Kind::Gitlink
    } else {
        Kind::File
    }
}
