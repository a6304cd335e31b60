//! Restoring paths: `git checkout [<rev>] -- <pathspec>` and `git restore [--source] [--staged]
//! [--worktree] <pathspec>`. The selected entries are written through the same pool as a
//! checkout; the index is updated as git does for each form.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;

use crate::checkout::{skeleton_index, Error as CheckoutError, Progress};
use crate::execute::Job;
use crate::fs::Root;
use crate::lock::IndexLock;
use crate::options::Options;
use crate::plan::{self, Kind, Plan};
use crate::remove::Remover;

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
    /// Repository-relative pathspecs: a path, a directory prefix, or `.`/empty for everything.
    pub pathspecs: Vec<BString>,
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
    pub errors: Vec<crate::checkout::EntryError>,
    /// Unmerged paths left alone under [`Request::ignore_unmerged`] (git warns about each).
    pub unmerged: Vec<BString>,
}

/// Why a restore failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A pathspec matched nothing in the source or the index; nothing was changed.
    #[error("pathspec '{0}' did not match any file(s) known to git")]
    NoMatch(BString),
    /// Selected paths are unmerged and the source does not resolve them; nothing was changed.
    /// git: `error: path '<path>' is unmerged`, exit 1.
    #[error("path '{}' is unmerged", .0.first().map(ToString::to_string).unwrap_or_default())]
    Unmerged(Vec<BString>),
    /// Planning, writing or recording failed.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// The index could not be read.
    #[error("unable to read the index: {0}")]
    Index(String),
    /// A work tree path could not be removed.
    #[error("unable to unlink '{path}': {source}")]
    Remove {
        /// The path.
        path: BString,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
}

/// Returns true if and only if `path` is selected by `spec` (git's pathspec for literal paths:
/// the path itself or anything below it).
pub fn matches(spec: &BStr, path: &BStr) -> bool {
    // A pathspec with glob characters matches like git's default pathspec magic: fnmatch without
    // FNM_PATHNAME, so `*` also matches `/` (`*.txt` selects `a/b.txt`).
    if spec.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
        return gix::glob::wildmatch(spec, path, gix::glob::wildmatch::Mode::empty());
    }
    spec.is_empty()
        || spec == "."
        || path == spec
        || (path.starts_with(spec) && path.get(spec.len()) == Some(&b'/'))
        || (spec.ends_with(b"/") && path.starts_with(spec))
}

/// Restore the paths `req` selects.
pub fn restore(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    req: &Request,
    opts: &Options,
    progress: &Progress,
    should_interrupt: &AtomicBool,
) -> Result<Outcome, Error> {
    let lock = IndexLock::acquire(index_path).map_err(CheckoutError::from)?;
    let index = gix::index::File::at(
        index_path,
        repo.object_hash(),
        false,
        gix::index::decode::Options::default(),
    )
    .or_else(|err| {
        if index_path.exists() {
            Err(Error::Index(err.to_string()))
        } else {
            Ok(gix::index::File::from_state(
                gix::index::State::new(repo.object_hash()),
                index_path,
            ))
        }
    })?;
    let source: Vec<plan::Entry> = match req.source {
        Source::Tree(tree) => {
            plan::from_tree(&repo.objects, tree, opts.protect)
                .map_err(CheckoutError::from)?
                .entries
        }
        // Skip-worktree entries are not restored from the index (git's
        // `mark_ce_for_checkout_*` skips them): they are not in the work tree on purpose.
        Source::Index => index
            .entries()
            .iter()
            .filter(|e| {
                e.stage_raw() == 0 && !e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE)
            })
            .map(|e| plan::Entry {
                path: e.path(&index).to_owned(),
                id: e.id,
                kind: kind_of(e.mode),
            })
            .collect(),
    };
    let selected = |p: &BStr| req.pathspecs.iter().any(|s| matches(s.as_bstr(), p));
    for spec in &req.pathspecs {
        let hit = source
            .iter()
            .any(|e| matches(spec.as_bstr(), e.path.as_bstr()))
            // `checkout REV -- paths` (overlay) matches only what REV has, as git's
            // `checkout_paths` counts only entries that came from the tree.
            || (!(req.overlay && matches!(req.source, Source::Tree(_)))
                && index
                    .entries()
                    .iter()
                    .any(|e| matches(spec.as_bstr(), e.path(&index))));
        if !hit {
            return Err(Error::NoMatch(spec.clone()));
        }
    }

    // git's `checkout_paths`: a selected unmerged path that the source does not resolve (a
    // tree source replaces all its stages) stops the restore before anything is touched.
    let mut unmerged: Vec<BString> = {
        let from_tree: HashSet<&BStr> = match req.source {
            Source::Tree(_) => source.iter().map(|e| e.path.as_bstr()).collect(),
            Source::Index => HashSet::new(),
        };
        index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() != 0)
            .map(|e| e.path(&index))
            .filter(|p| selected(p) && !from_tree.contains(p))
            .map(ToOwned::to_owned)
            .collect()
    };
    unmerged.dedup();
    if !unmerged.is_empty() && !req.ignore_unmerged {
        return Err(Error::Unmerged(unmerged));
    }
    let unmerged_set: HashSet<BString> = unmerged.iter().cloned().collect();

    // The entries to write, as a plan with the directories they need.
    let chosen: Vec<plan::Entry> = source
        .into_iter()
        .filter(|e| selected(e.path.as_bstr()))
        .collect();
    let mut dirs: Vec<BString> = Vec::new();
    for e in &chosen {
        let mut p = e.path.as_bstr();
        while let Some(pos) = p.rfind_byte(b'/') {
            p = &p[..pos];
            dirs.push(p.to_owned());
        }
    }
    dirs.sort();
    dirs.dedup();
    let plan = Plan {
        entries: chosen,
        dirs,
    };
    let in_source: HashSet<&BStr> = plan.entries.iter().map(|e| e.path.as_bstr()).collect();
    // No-overlay: tracked paths the source lacks go away from the restored locations.
    let vanished: Vec<BString> = if req.overlay {
        Vec::new()
    } else {
        index
            .entries()
            .iter()
            .map(|e| e.path(&index))
            .filter(|p| selected(p) && !in_source.contains(p) && !unmerged_set.contains(*p))
            .filter(|p| {
                // Skip-worktree entries are left alone, in the work tree and the index.
                index
                    .entry_by_path(p)
                    .is_none_or(|e| !e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE))
            })
            .map(ToOwned::to_owned)
            .collect()
    };

    let mut outcome = Outcome {
        unmerged,
        ..Outcome::default()
    };
    let mut stats = vec![None; plan.entries.len()];
    if req.worktree {
        // Filters first: an entry that needs an external driver is refused before anything
        // is removed or written.
        // Attributes come from the index as it will be: the restored entries over the current
        // ones (so a `.gitattributes` elsewhere in the index applies, and a restored one wins),
        // as git checks out paths from the updated index.
        let mut result = skeleton_index(&plan, repo.object_hash());
        for e in index.entries() {
            if !in_source.contains(e.path(&index)) {
                result.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, e.path(&index));
            }
        }
        result.sort_entries();
        let (filter, mut attributes) = crate::checkout::filters_for(repo, &result)?;
        let selection: Vec<usize> = (0..plan.entries.len()).collect();
        crate::checkout::refuse_external_filters_in(repo, &plan, &selection, &mut attributes)?;
        let root = Root::open(worktree).map_err(|source| Error::Remove {
            path: BString::from(worktree.as_os_str().as_encoded_bytes()),
            source,
        })?;

        let jobs = make_room(&root, &plan, &vanished)?;
        outcome.removed = jobs.1;
        let executed = crate::execute::execute(
            repo,
            &plan,
            &jobs.0,
            &root,
            opts,
            crate::execute::Filters {
                pipeline: &filter,
                attributes: &attributes,
                present: crate::execute::attributes_present(
                    repo,
                    index
                        .entries()
                        .iter()
                        .map(|e| e.path(&index))
                        .chain(plan.entries.iter().map(|e| e.path.as_bstr())),
                ),
            },
            progress,
            should_interrupt,
        )?;
        // Interrupted: the index is left as it was (the lock is dropped); the paths written so
        // far show as changes against it, nothing is lost.
        if executed.interrupted {
            return Err(CheckoutError::Interrupted.into());
        }
        outcome.errors = executed.errors;
        stats = executed.stats;
        outcome.written = stats.iter().filter(|s| s.is_some()).count();
    }

    // The index: `--staged` (or checkout REV --) takes the source's entries; a work-tree-only
    // restore from the index refreshes the stat data of what it wrote; a work-tree-only restore
    // from another source leaves the index alone.
    let touch_index = req.staged || matches!(req.source, Source::Index);
    if !touch_index {
        return Ok(outcome);
    }
    let restored: BTreeMap<&BStr, usize> = plan
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.path.as_bstr(), i))
        .collect();
    let mut state = gix::index::State::new(repo.object_hash());
    let mut from_source: HashSet<&BStr> = HashSet::new();
    let push_source = |state: &mut gix::index::State, i: usize| {
        let pe = &plan.entries[i];
        state.dangerously_push_entry(
            stats[i].unwrap_or_default(),
            pe.id,
            gix::index::entry::Flags::empty(),
            pe.kind.index_mode(),
            pe.path.as_bstr(),
        );
    };
    let plan_dirs: HashSet<&BStr> = plan.dirs.iter().map(|d| d.as_bstr()).collect();
    let below_restored_file = |path: &BStr| {
        let mut p = path;
        while let Some(pos) = p.rfind_byte(b'/') {
            p = &p[..pos];
            if restored.contains_key(p) {
                return true;
            }
        }
        false
    };
    for e in index.entries() {
        let path = e.path(&index);
        if selected(path) {
            match restored.get(path) {
                Some(&i) if req.staged => {
                    // All stages of a path collapse into the source's one entry.
                    if from_source.insert(plan.entries[i].path.as_bstr()) {
                        push_source(&mut state, i);
                    }
                    continue;
                }
                None if req.staged && !req.overlay && !unmerged_set.contains(path) => {
                    outcome.removed += 1;
                    continue;
                }
                Some(&i) if e.stage_raw() == 0 => {
                    if let Some(stat) = stats[i] {
                        state.dangerously_push_entry(stat, e.id, e.flags, e.mode, path);
                        continue;
                    }
                }
                _ => {}
            }
        }
        // A kept entry that is a directory of the restored entries now, or lies below a
        // restored file, gives way (git replaces it when it adds the new entry).
        if req.staged && (plan_dirs.contains(path) || below_restored_file(path)) {
            outcome.removed += 1;
            continue;
        }
        state.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, path);
    }
    if req.staged {
        let in_index: HashSet<&BStr> = index.entries().iter().map(|e| e.path(&index)).collect();
        for (i, pe) in plan.entries.iter().enumerate() {
            if !in_index.contains(pe.path.as_bstr()) {
                push_source(&mut state, i);
            }
        }
    }
    state.sort_entries();
    let file = gix::index::File::from_state(state, index_path);
    lock.commit(&file).map_err(CheckoutError::from)?;
    Ok(outcome)
}

/// Make room for the restored entries, as git's forced checkout of paths does: a non-directory
/// where the entries need a directory goes, a directory where an entry goes is removed with its
/// contents (unless the entry is a gitlink, which keeps it), and the paths the source lacks
/// (no-overlay) are removed, with the directories they leave empty. Files that are replaced are
/// left to their writer, which replaces each one just before writing it. Returns the writer's
/// jobs and the number of vanished paths removed.
fn make_room(root: &Root, plan: &Plan, vanished: &[BString]) -> Result<(Vec<Job>, usize), Error> {
    use rustix::fs::FileType;
    let fail = |e: crate::remove::Error| Error::Remove {
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
        let kind = dirs.file_type(e.path.as_bstr()).ok().flatten();
        let replace = match kind {
            Some(FileType::Directory) if e.kind != Kind::Gitlink => {
                remover.all(e.path.as_bstr()).map_err(fail)?;
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
    let inside_gitlink = |path: &BStr| {
        let mut p = path;
        while let Some(pos) = p.rfind_byte(b'/') {
            p = &p[..pos];
            if gitlinks.contains(p) {
                return true;
            }
        }
        false
    };
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
    let needed: HashSet<&BStr> = plan.dirs.iter().map(|d| d.as_bstr()).collect();
    remover.remove_emptied_dirs(&needed);
    Ok((jobs, removed))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pathspecs_match_paths_and_directories_only_at_boundaries() {
        let m = |s: &str, p: &str| matches(s.as_bytes().as_bstr(), p.as_bytes().as_bstr());
        assert!(m("a", "a"));
        assert!(m("a", "a/b"));
        assert!(!m("a", "ab"));
        assert!(!m("a", "a-"));
        assert!(m(".", "x/y"));
        assert!(m("d/", "d/e"));
    }
}
