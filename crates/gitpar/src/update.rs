//! The two-way update of an existing work tree: `switch`, `checkout <branch>`, `checkout -f`,
//! `reset --hard`. From the index (and the old `HEAD` tree) to the target tree, write only what
//! changes, remove what the target lacks, and refuse before touching anything when local changes
//! or untracked files would be lost — git's `unpack_trees` with `twoway_merge` (safe) or
//! `oneway_merge` with `reset` (forced).
//!
//! The steps are the engine's usual ones: plan (both trees, validated) → classify every path
//! (a sorted three-way walk over old tree, index and new tree) → check the affected work tree
//! entries in parallel (lstat, and a re-hash where the stat data cannot decide) → remove (main
//! thread) → write (the pool of [`crate::execute`]) → record the new index under the lock that was
//! taken first.

use std::collections::{BTreeSet, HashSet};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;
use gix::index::entry::{Mode, Stat};

use crate::checkout::{Error as CheckoutError, Progress};
use crate::lock::IndexLock;
use crate::options::Options;
use crate::plan::{self, Kind, Plan};

/// How local changes are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `switch`/`checkout`: refuse if a local change or an untracked file would be lost; carry
    /// over local changes to paths the switch does not touch.
    Safe,
    /// `checkout -f`/`reset --hard`: the result is the target tree, local changes to tracked
    /// files are discarded, untracked files are removed only where they are in the way.
    Force,
}

/// What an update did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Entries written.
    pub written: usize,
    /// Work tree entries removed.
    pub removed: usize,
    /// Writer threads used.
    pub workers: usize,
    /// Paths that collided on a case-insensitive filesystem.
    pub collisions: Vec<BString>,
    /// With [`Options::report_local_changes`]: the differences between the target tree and the
    /// work tree that the update carried over, as git's switch lists them (`M`, `A` or `D`,
    /// and the path), in path order.
    pub local_changes: Vec<(char, BString)>,
}

/// Why an update was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Local changes or untracked files would be lost; nothing was changed. The binary prints
    /// git's lists and messages.
    #[error("local changes would be overwritten")]
    WouldLose {
        /// Tracked paths with local changes the update would overwrite or remove.
        local: Vec<BString>,
        /// Untracked paths the update would overwrite.
        untracked: Vec<BString>,
        /// Directories the update would replace that hold untracked files.
        untracked_removed: Vec<BString>,
    },
    /// The index has unmerged entries.
    #[error("you need to resolve your current index first")]
    Unmerged(Vec<BString>),
    /// Planning, writing or recording failed.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// A path could not be removed or inspected.
    #[error("unable to {action} '{path}': {source}")]
    Io {
        /// What we tried.
        action: &'static str,
        /// The path.
        path: BString,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// The index could not be read.
    #[error("unable to read the index: {0}")]
    Index(String),
}

/// One side's view of a path: object id and index mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    id: ObjectId,
    mode: Mode,
}

/// What happens to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Keep the index entry (and the work tree) as they are.
    Keep,
    /// Write the new entry; `verify` says whether the current work tree file must be unchanged.
    Write { verify: bool, replace: bool },
    /// Remove from index and work tree; `verify` as above.
    Remove { verify: bool },
    /// Not in the result, nothing on disk to do (e.g. a staged deletion that stays deleted).
    Drop,
    /// A staged change that conflicts with the target: refuse.
    Reject,
}

/// Update the work tree and index at `index_path` from their current state (whose `HEAD` tree
/// is `old_tree`) to `new_tree`.
#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
pub fn update(
    repo: &gix::Repository,
    old_tree: Option<ObjectId>,
    new_tree: ObjectId,
    worktree: &Path,
    index_path: &Path,
    mode: Policy,
    opts: &Options,
    progress: &Progress,
    should_interrupt: &AtomicBool,
) -> Result<Outcome, Error> {
    let lock = IndexLock::acquire(index_path).map_err(CheckoutError::from)?;
    let index = read_index(index_path, repo.object_hash())?;
    let index_ts = index.timestamp().unix_seconds();

    // Current index entries (stage 0); unmerged entries block a safe switch. Entries are
    // borrowed from the index, not copied: a 40,000-entry index is megabytes, and touching
    // fresh memory (page faults) is a measurable part of a small switch.
    let mut unmerged = BTreeSet::new();
    let mut current: Vec<&gix::index::Entry> = Vec::with_capacity(index.entries().len());
    for e in index.entries() {
        if e.stage_raw() != 0 {
            unmerged.insert(e.path(&index).to_owned());
            continue;
        }
        current.push(e);
    }
    if mode == Policy::Safe && !unmerged.is_empty() {
        return Err(Error::Unmerged(unmerged.into_iter().collect()));
    }
    // What the target changes: in safe mode only the paths that differ between the two trees
    // (identical subtrees are not even read); in force mode every path of the target, since the
    // index may differ from it anywhere.
    let (targets, new_dirs): (Vec<plan::Change>, Vec<BString>) = match mode {
        Policy::Safe => {
            let d = plan::diff(&repo.objects, old_tree, new_tree, opts.protect)
                .map_err(CheckoutError::from)?;
            (d.changes, d.new_dirs)
        }
        Policy::Force => {
            let p = plan::from_tree(&repo.objects, new_tree, opts.protect)
                .map_err(CheckoutError::from)?;
            let changes = p
                .entries
                .into_iter()
                .map(|e| plan::Change {
                    path: e.path,
                    old: None,
                    new: Some((e.id, e.kind)),
                })
                .collect();
            (changes, p.dirs)
        }
    };

    // Classify every path with a merge walk over the two sorted lists (targets, index).
    let mut rows: Vec<Row<'_>> = Vec::with_capacity(current.len() + targets.len());
    let mut actions: Vec<Action> = Vec::with_capacity(rows.capacity());
    {
        let mut t_iter = targets.iter().peekable();
        let mut c_iter = current.iter().copied().peekable();
        loop {
            let order = match (t_iter.peek(), c_iter.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(t), Some(c)) => t.path.as_bstr().cmp(c.path(&index)),
            };
            let (change, cur) = match order {
                std::cmp::Ordering::Less => (t_iter.next(), None),
                std::cmp::Ordering::Greater => (None, c_iter.next()),
                std::cmp::Ordering::Equal => (t_iter.next(), c_iter.next()),
            };
            let path: &BStr = match (change, cur) {
                (_, Some(c)) => c.path(&index),
                (Some(ch), None) => ch.path.as_bstr(),
                (None, None) => unreachable!("one side was peeked"),
            };
            let o = change.and_then(|c| c.old).map(side_of);
            let n = change.and_then(|c| c.new);
            let i_side = cur.map(side_of_entry);
            let action = match (mode, change) {
                // Not changed between the trees: whatever the index has stays.
                (Policy::Safe, None) => Action::Keep,
                (Policy::Safe, Some(_)) => twoway(o, i_side, n.map(side_of)),
                (Policy::Force, _) => oneway(i_side, n.map(side_of)),
            };
            rows.push(Row { path, i: cur, n });
            actions.push(action);
        }
    }

    // Refresh every tracked entry against the work tree, as git's switch and reset do before
    // they merge (parallel lstat; a re-hash only where stat data cannot decide). A safe update
    // refuses to overwrite a changed file; a forced one rewrites it; kept entries take the fresh
    // stat data.
    let checked: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, row)| row.i.is_some())
        .map(|(k, _)| k)
        .collect();
    let states = crate::refresh::check(
        repo,
        worktree,
        &index,
        index_ts,
        checked.iter().map(|&k| crate::refresh::Item {
            path: rows[k].path,
            entry: rows[k].i.expect("filtered on i"),
        }),
        opts.workers,
    )
    .map_err(Error::Index)?;
    // Row k's verdict is `states[position[k]]`; rows without an index entry have none.
    let mut position = vec![u32::MAX; rows.len()];
    for (p, &k) in checked.iter().enumerate() {
        position[k] = u32::try_from(p).expect("an index holds fewer than 2^32 entries");
    }
    drop(checked);
    let verdict = |k: usize| -> Option<crate::refresh::State> {
        (position[k] != u32::MAX).then(|| states[position[k] as usize])
    };

    // A submodule that moves to another commit keeps its directory (git leaves it alone).
    for (row, action) in rows.iter().zip(actions.iter_mut()) {
        let gitlink_to_gitlink = row.i.is_some_and(|c| c.mode == Mode::COMMIT)
            && row.n.is_some_and(|(_, kind)| kind == Kind::Gitlink);
        if let (true, Action::Write { replace, .. }) = (gitlink_to_gitlink, action) {
            *replace = false;
        }
    }

    let mut local = Vec::new();
    for k in 0..rows.len() {
        let Some(state) = verdict(k) else { continue };
        let missing = state == crate::refresh::State::Missing;
        let changed = state.is_changed();
        match (&mut actions[k], mode) {
            (Action::Keep, Policy::Force) if changed => {
                actions[k] = Action::Write {
                    verify: false,
                    replace: !missing,
                };
            }
            (Action::Remove { .. }, _) if missing => actions[k] = Action::Drop,
            (Action::Write { replace, .. }, _) if missing => *replace = false,
            (
                Action::Write { verify: true, .. } | Action::Remove { verify: true },
                Policy::Safe,
            ) if changed => {
                local.push(rows[k].path.to_owned());
            }
            _ => {}
        }
    }
    for (k, a) in actions.iter().enumerate() {
        if *a == Action::Reject {
            local.push(rows[k].path.to_owned());
        }
    }

    // Untracked files in the way of new entries and new directories.
    let tracked_removed: HashSet<&BStr> = rows
        .iter()
        .zip(&actions)
        .filter(|(r, a)| {
            r.i.is_some()
                && matches!(
                    a,
                    Action::Remove { .. } | Action::Write { replace: true, .. }
                )
        })
        .map(|(r, _)| r.path.as_bstr())
        .collect();
    // Tracked paths of the result, built only if a directory blocks a new file.
    let tracked_result = std::cell::OnceCell::<HashSet<&BStr>>::new();
    let tracked = || {
        tracked_result.get_or_init(|| {
            rows.iter()
                .filter(|r| r.i.is_some())
                .map(|r| r.path)
                .collect()
        })
    };
    let mut untracked = Vec::new();
    let mut untracked_removed = Vec::new();
    let mut clear_dirs: Vec<BString> = Vec::new();
    let mut clear_files: Vec<BString> = Vec::new();
    // Ignored files are expendable, as in git's checkout: they are replaced without asking.
    let mut excludes = repo
        .excludes(
            &index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|e| Error::Index(e.to_string()))?
        .detach();
    let mut is_ignored = |path: &BStr, is_dir: bool| -> bool {
        let mode = is_dir.then_some(gix::index::entry::Mode::DIR);
        excludes
            .at_entry(path, mode, &repo.objects)
            .is_ok_and(|p| p.is_excluded())
    };
    // Whether every leading directory of a path is a real directory: a leading symlink or file
    // is reported (or removed) as the blocker of a new directory below, never looked through.
    let mut real_dirs: std::collections::HashMap<BString, bool> = std::collections::HashMap::new();
    let mut leading_dirs_are_real = |path: &BStr| -> bool {
        let mut end = 0;
        while let Some(pos) = path[end..].find_byte(b'/') {
            end += pos;
            let dir = path[..end].to_owned();
            let real = *real_dirs.entry(dir).or_insert_with_key(|dir| {
                std::fs::symlink_metadata(worktree.join(dir.to_path_lossy()))
                    .is_ok_and(|m| m.is_dir())
            });
            if !real {
                return false;
            }
            end += 1;
        }
        true
    };
    for (row, action) in rows.iter().zip(&actions) {
        let Action::Write { .. } = action else {
            continue;
        };
        if row.i.is_some() || !leading_dirs_are_real(row.path.as_bstr()) {
            continue; // tracked: checked above; below a non-directory: see the new directories
        }
        match std::fs::symlink_metadata(worktree.join(row.path.to_path_lossy())) {
            Ok(meta) if meta.is_dir() => {
                let (_, kind) = row.n.expect("a write has a new entry");
                if kind == Kind::Gitlink {
                    continue;
                }
                let mut inside = Vec::new();
                untracked_in(worktree, row.path.as_bstr(), tracked(), &mut inside);
                inside.retain(|p| !is_ignored(p.as_bstr(), false));
                if inside.is_empty() || mode == Policy::Force {
                    clear_dirs.push(row.path.to_owned());
                } else {
                    untracked_removed.push(row.path.to_owned());
                }
            }
            Ok(_) => {
                if mode == Policy::Force || is_ignored(row.path.as_bstr(), false) {
                    clear_files.push(row.path.to_owned());
                } else {
                    untracked.push(row.path.to_owned());
                }
            }
            Err(_) => {}
        }
    }
    // A new directory's place must be free: a directory already, nothing, or a tracked entry
    // that goes away.
    for dir in &new_dirs {
        match std::fs::symlink_metadata(worktree.join(dir.to_path_lossy())) {
            Ok(meta) if !meta.is_dir() => {
                if tracked_removed.contains(dir.as_bstr()) {
                    continue;
                }
                if mode == Policy::Force || is_ignored(dir.as_bstr(), false) {
                    clear_files.push(dir.clone());
                } else {
                    untracked.push(dir.clone());
                }
            }
            _ => {}
        }
    }
    if !local.is_empty() || !untracked.is_empty() || !untracked_removed.is_empty() {
        local.sort();
        untracked.sort();
        untracked.dedup();
        untracked_removed.sort();
        return Err(Error::WouldLose {
            local,
            untracked,
            untracked_removed,
        });
    }
    if should_interrupt.load(Ordering::Relaxed) {
        return Err(CheckoutError::Interrupted.into());
    }

    // The result index, with empty stat data for the entries still to be written. It is also
    // the attribute source for the writers, as git reads attributes from the new index.
    let mut outcome = Outcome::default();
    let mut state = gix::index::State::new(repo.object_hash());
    let mut writes: Vec<plan::Entry> = Vec::new();
    let mut write_slots: Vec<usize> = Vec::new();
    // Per entry of `state`: whether its work tree file differs from it (`Some`) after the update.
    let mut worktree_state: Vec<Option<crate::refresh::State>> = Vec::new();
    for (k, (row, action)) in rows.iter().zip(&actions).enumerate() {
        match action {
            Action::Keep => {
                let c = row.i.expect("keep has a current entry");
                let stat = match verdict(k) {
                    Some(crate::refresh::State::Refreshed(fresh)) => fresh,
                    // git's racily-clean smudge: a zero size makes git re-check the content.
                    Some(crate::refresh::State::RacilyModified) => Stat { size: 0, ..c.stat },
                    _ => c.stat,
                };
                state.dangerously_push_entry(stat, c.id, c.flags, c.mode, row.path.as_bstr());
                if opts.report_local_changes {
                    worktree_state.push(verdict(k));
                }
            }
            Action::Write { .. } => {
                let (id, kind) = row.n.expect("a write has a new entry");
                write_slots.push(state.entries().len());
                if opts.report_local_changes {
                    worktree_state.push(None);
                }
                state.dangerously_push_entry(
                    Stat::default(),
                    id,
                    gix::index::entry::Flags::empty(),
                    kind.index_mode(),
                    row.path.as_bstr(),
                );
                writes.push(plan::Entry {
                    path: row.path.to_owned(),
                    id,
                    kind,
                });
            }
            Action::Remove { .. } | Action::Drop | Action::Reject => {}
        }
    }
    let present =
        crate::execute::attributes_present(repo, state.entries().iter().map(|e| e.path(&state)));
    let (filter, mut attributes) = crate::checkout::filters_for(repo, &state)?;
    let write_plan = Plan {
        entries: writes,
        dirs: new_dirs.clone(),
    };
    let selection: Vec<usize> = (0..write_plan.entries.len()).collect();
    crate::checkout::refuse_external_filters_in(repo, &write_plan, &selection, &mut attributes)?;

    // Remove: tracked entries that go or are replaced, untracked blockers (force), then the
    // directories left empty, deepest first.
    let new_dir_set: HashSet<&BStr> = new_dirs.iter().map(|d| d.as_bstr()).collect();
    let mut maybe_empty: BTreeSet<BString> = BTreeSet::new();
    let mut remove_path = |path: &BStr, outcome: &mut Outcome| -> Result<(), Error> {
        let full = worktree.join(path.to_path_lossy());
        let result = match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir(&full).or_else(|err| {
                // A gitlink's directory that is not empty stays, as git leaves it.
                if err.raw_os_error() == Some(libc::ENOTEMPTY) {
                    Ok(())
                } else {
                    Err(err)
                }
            }),
            Ok(_) => std::fs::remove_file(&full),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        };
        result.map_err(|source| Error::Io {
            action: "unlink",
            path: path.to_owned(),
            source,
        })?;
        outcome.removed += 1;
        let mut p = path;
        while let Some(pos) = p.rfind_byte(b'/') {
            p = &p[..pos];
            maybe_empty.insert(p.to_owned());
        }
        Ok(())
    };
    for (row, action) in rows.iter().zip(&actions) {
        match action {
            Action::Remove { .. } => remove_path(row.path.as_bstr(), &mut outcome)?,
            Action::Write { replace: true, .. } => remove_path(row.path.as_bstr(), &mut outcome)?,
            _ => {}
        }
    }
    for path in &clear_files {
        remove_path(path.as_bstr(), &mut outcome)?;
    }
    for path in &clear_dirs {
        let full = worktree.join(path.to_path_lossy());
        std::fs::remove_dir_all(&full).map_err(|source| Error::Io {
            action: "remove directory",
            path: path.clone(),
            source,
        })?;
    }
    for dir in maybe_empty.iter().rev() {
        if new_dir_set.contains(dir.as_bstr()) {
            continue;
        }
        // Only empty directories go; one holding untracked files stays, as with git.
        let _ = std::fs::remove_dir(worktree.join(dir.to_path_lossy()));
    }

    // Write, then record the stat data the writers return.
    let executed = crate::execute::execute(
        repo,
        &write_plan,
        &selection,
        worktree,
        opts,
        crate::execute::Filters {
            pipeline: &filter,
            attributes: &attributes,
            present,
        },
        progress,
        should_interrupt,
    )?;
    outcome.written = selection.len();
    outcome.workers = executed.workers;
    outcome.collisions = executed.collisions;
    for (slot, stat) in write_slots.into_iter().zip(executed.stats) {
        state.entries_mut()[slot].stat = stat.expect("every selected entry was written");
    }
    if opts.report_local_changes && mode == Policy::Safe {
        outcome.local_changes = local_changes(repo, new_tree, &state, &worktree_state)?;
    }
    // Unmerged entries were refused (safe) or are dropped here (force), as in git.
    let file = gix::index::File::from_state(state, index_path);
    lock.commit(&file).map_err(CheckoutError::from)?;
    Ok(outcome)
}

/// One path of the merge walk: what the index has and what the target wants.
#[derive(Debug)]
struct Row<'a> {
    path: &'a BStr,
    i: Option<&'a gix::index::Entry>,
    n: Option<(ObjectId, Kind)>,
}

fn side_of_entry(e: &gix::index::Entry) -> Side {
    Side {
        id: e.id,
        mode: e.mode,
    }
}

fn side_of((id, kind): (ObjectId, Kind)) -> Side {
    Side {
        id,
        mode: kind.index_mode(),
    }
}

/// git's `twoway_merge` for one path (stage-0 index): `o` the old tree, `i` the index, `n` the
/// new tree.
fn twoway(o: Option<Side>, i: Option<Side>, n: Option<Side>) -> Action {
    match (o, i, n) {
        (_, Some(i), _) => {
            if (o.is_none() && n.is_none())
                || (o.is_none() && n == Some(i))
                || (o.is_some() && n.is_some() && o == n)
                || (o.is_some() && n.is_some() && o != n && n == Some(i))
            {
                Action::Keep
            } else if o.is_some() && n.is_none() && o == Some(i) {
                Action::Remove { verify: true }
            } else if o.is_some() && n.is_some() && o == Some(i) && n != Some(i) {
                Action::Write {
                    verify: true,
                    replace: true,
                }
            } else {
                Action::Reject
            }
        }
        (Some(o), None, Some(n)) => {
            if o == n {
                Action::Drop // the staged deletion stays
            } else {
                Action::Reject
            }
        }
        (None, None, Some(_)) => Action::Write {
            verify: false,
            replace: false,
        },
        (_, None, None) => Action::Drop,
    }
}

/// git's `oneway_merge` with `reset`: the result is the new tree; an index entry equal to the new
/// one is kept (and rewritten if its file turns out to differ).
fn oneway(i: Option<Side>, n: Option<Side>) -> Action {
    match (i, n) {
        (Some(i), Some(n)) if i == n => Action::Keep,
        (Some(_), Some(_)) => Action::Write {
            verify: false,
            replace: true,
        },
        (None, Some(_)) => Action::Write {
            verify: false,
            replace: false,
        },
        (Some(_), None) => Action::Remove { verify: false },
        (None, None) => Action::Drop,
    }
}

/// git's `show_local_changes` after a switch: `diff-index --name-status <target>` over the new
/// index and the work tree states found by the refresh.
fn local_changes(
    repo: &gix::Repository,
    tree: ObjectId,
    state: &gix::index::State,
    worktree_state: &[Option<crate::refresh::State>],
) -> Result<Vec<(char, BString)>, Error> {
    use crate::refresh::State as W;
    let target = plan::from_tree(&repo.objects, tree, crate::options::default_protect())
        .map_err(CheckoutError::from)?;
    let mut out = Vec::new();
    let mut t = target.entries.iter().peekable();
    let mut i = state.entries().iter().zip(worktree_state).peekable();
    loop {
        let order = match (t.peek(), i.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(a), Some((b, _))) => a.path.as_bstr().cmp(b.path(state)),
        };
        match order {
            std::cmp::Ordering::Less => {
                let a = t.next().expect("peeked");
                out.push(('D', a.path.clone()));
            }
            std::cmp::Ordering::Greater => {
                let (b, w) = i.next().expect("peeked");
                if *w != Some(W::Missing) {
                    out.push(('A', b.path(state).to_owned()));
                }
            }
            std::cmp::Ordering::Equal => {
                let a = t.next().expect("peeked");
                let (b, w) = i.next().expect("peeked");
                let status = match w {
                    Some(W::Missing) => Some('D'),
                    Some(w) if w.is_changed() => Some('M'),
                    _ if a.id != b.id || a.kind.index_mode() != b.mode => Some('M'),
                    _ => None,
                };
                if let Some(status) = status {
                    out.push((status, a.path.clone()));
                }
            }
        }
    }
    Ok(out)
}

fn read_index(path: &Path, hash: gix::hash::Kind) -> Result<gix::index::File, Error> {
    match gix::index::File::at(path, hash, false, gix::index::decode::Options::default()) {
        Ok(f) => Ok(f),
        Err(_) if !path.exists() => Ok(gix::index::File::from_state(
            gix::index::State::new(hash),
            path,
        )),
        Err(err) => Err(Error::Index(err.to_string())),
    }
}

/// Collect the files under `dir` (repository-relative) that the index does not track.
fn untracked_in(worktree: &Path, dir: &BStr, tracked: &HashSet<&BStr>, out: &mut Vec<BString>) {
    let Ok(entries) = std::fs::read_dir(worktree.join(dir.to_path_lossy())) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let mut rel = BString::from(dir.to_vec());
        rel.push(b'/');
        rel.extend_from_slice(
            gix::path::os_str_into_bstr(&name)
                .map(|b| b.as_bytes())
                .unwrap_or(b"?"),
        );
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            untracked_in(worktree, rel.as_bstr(), tracked, out);
        } else if !tracked.contains(rel.as_bstr()) {
            out.push(rel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: u8) -> Option<Side> {
        Some(Side {
            id: ObjectId::from_bytes_or_panic(&[b; 20]),
            mode: Mode::FILE,
        })
    }

    #[test]
    fn twoway_follows_gits_table() {
        // Unchanged between trees: keep whatever the index has.
        assert_eq!(twoway(s(1), s(2), s(1)), Action::Keep);
        // Changed between trees, index clean: write, after checking the file.
        assert!(matches!(
            twoway(s(1), s(1), s(2)),
            Action::Write { verify: true, .. }
        ));
        // Changed between trees, index staged something else: refuse.
        assert_eq!(twoway(s(1), s(3), s(2)), Action::Reject);
        // Deleted in the new tree, index clean: remove.
        assert_eq!(twoway(s(1), s(1), None), Action::Remove { verify: true });
        // Added to the index only: carried over.
        assert_eq!(twoway(None, s(1), None), Action::Keep);
        // New in the target, untracked before: write (after the untracked check).
        assert!(matches!(
            twoway(None, None, s(1)),
            Action::Write { verify: false, .. }
        ));
        // A staged deletion of a path the target changes: refuse.
        assert_eq!(twoway(s(1), None, s(2)), Action::Reject);
    }
}
