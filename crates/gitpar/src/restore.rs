//! Restoring paths: `git checkout [<rev>] -- <pathspec>` and `git restore [--source] [--staged]
//! [--worktree] <pathspec>`. The selected entries are written through the same pool as a
//! checkout; the index is updated as git does for each form.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;

use crate::checkout::{skeleton_index, Error as CheckoutError, Progress};
use crate::lock::IndexLock;
use crate::options::Options;
use crate::plan::{self, Kind, Plan};

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
}

/// What a restore did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Work tree entries written.
    pub written: usize,
    /// Work tree entries or index entries removed.
    pub removed: usize,
}

/// Why a restore failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A pathspec matched nothing in the source or the index; nothing was changed.
    #[error("pathspec '{0}' did not match any file(s) known to git")]
    NoMatch(BString),
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
        Source::Index => index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() == 0)
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
            || index
                .entries()
                .iter()
                .any(|e| matches(spec.as_bstr(), e.path(&index)));
        if !hit {
            return Err(Error::NoMatch(spec.clone()));
        }
    }

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
            .filter(|p| selected(p) && !in_source.contains(p))
            .map(ToOwned::to_owned)
            .collect()
    };

    let mut outcome = Outcome::default();
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

        // Make room, as git's forced checkout of paths does: whatever occupies an entry's path
        // goes (a directory too, unless the entry is a gitlink that keeps it), and so does
        // anything that is not a directory where the entries need one.
        let remove = |path: &BStr, full: &Path, dir: bool| -> Result<(), Error> {
            let result = if dir {
                std::fs::remove_dir_all(full)
            } else {
                std::fs::remove_file(full)
            };
            result.map_err(|source| Error::Remove {
                path: path.to_owned(),
                source,
            })
        };
        for dir in &plan.dirs {
            let full = worktree.join(dir.to_path_lossy());
            if let Ok(meta) = std::fs::symlink_metadata(&full) {
                if !meta.is_dir() {
                    remove(dir.as_bstr(), &full, false)?;
                }
            }
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
        for (path, kind) in plan
            .entries
            .iter()
            .map(|e| (e.path.as_bstr(), Some(e.kind)))
            .chain(
                vanished
                    .iter()
                    .map(|p| (p.as_bstr(), None))
                    .filter(|(p, _)| !inside_gitlink(p)),
            )
        {
            let full = worktree.join(path.to_path_lossy());
            match std::fs::symlink_metadata(&full) {
                Ok(meta) if meta.is_dir() => {
                    if kind.is_some_and(|k| k != Kind::Gitlink) {
                        remove(path, &full, true)?;
                    } else if kind.is_none() {
                        // A vanished gitlink: its directory goes if it is empty.
                        let _ = std::fs::remove_dir(&full);
                    }
                }
                Ok(_) => remove(path, &full, false)?,
                Err(_) => continue,
            }
            if kind.is_none() {
                outcome.removed += 1;
            }
        }
        // Directories emptied by the removals go too, deepest first, as git removes them.
        let needed: HashSet<&BStr> = plan.dirs.iter().map(|d| d.as_bstr()).collect();
        let mut emptied: Vec<&BStr> = Vec::new();
        for path in &vanished {
            let mut p = path.as_bstr();
            while let Some(pos) = p.rfind_byte(b'/') {
                p = &p[..pos];
                if !needed.contains(p) {
                    emptied.push(p);
                }
            }
        }
        emptied.sort();
        emptied.dedup();
        for dir in emptied.iter().rev() {
            let _ = std::fs::remove_dir(worktree.join(dir.to_path_lossy()));
        }
        let executed = crate::execute::execute(
            repo,
            &plan,
            &selection,
            worktree,
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
        stats = executed.stats;
        outcome.written = plan.entries.len();
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
                None if req.staged && !req.overlay => {
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
