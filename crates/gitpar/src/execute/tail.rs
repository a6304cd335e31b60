//! The sequential tail of a run, in the calling thread after the writers: entries that collided
//! (or whose directory was not a real one), in index order as git writes them, then symlinks and
//! gitlinks.

use std::sync::atomic::Ordering;

use bstr::ByteSlice;

use super::{Executed, Failure, Job, Shared, Worker};
use crate::execute::error::EntryError;
use crate::fs::{self, Dirs};
use crate::plan::{Kind, Plan};

/// Which entries collided with which (git's `mark_colliding_entries`), for the tail.
pub(super) struct Collisions {
    /// See [`execute`](super::execute)'s `fresh`.
    pub(super) fresh: bool,
    /// `core.ignorecase`: names are compared ignoring ASCII case when pairing entries by name.
    pub(super) ignore_case: bool,
    /// Per plan entry: part of a collision (git's `CE_MATCHED`).
    pub(super) marked: Vec<bool>,
}

impl Collisions {
    /// git's `paths_collide`: equal names, or one a leading directory of the other, compared
    /// ignoring case under `core.ignorecase`.
    fn paths_collide(&self, a: &[u8], b: &[u8]) -> bool {
        let eq = |x: &[u8], y: &[u8]| {
            if self.ignore_case {
                x.eq_ignore_ascii_case(y)
            } else {
                x == y
            }
        };
        let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        if short.len() == long.len() {
            eq(short, long)
        } else {
            long[short.len()] == b'/' && eq(short, &long[..short.len()])
        }
    }

    /// Entry `e` found `found` in its place: marks `e` and the first unmarked entry that put it
    /// there (same inode as its recorded stat data, or a colliding name), as git does.
    fn mark(
        &mut self,
        plan: &Plan,
        stats: &[Option<gix::index::entry::Stat>],
        e: usize,
        found: &gix::index::entry::Stat,
    ) {
        self.marked[e] = true;
        let path = plan.entries[e].path.as_slice();
        let peer = (0..plan.entries.len()).find(|&d| {
            d != e
                && !self.marked[d]
                && (stats[d].is_some_and(|s| s.ino == found.ino && s.dev == found.dev)
                    || self.paths_collide(path, plan.entries[d].path.as_slice()))
        });
        if let Some(d) = peer {
            self.marked[d] = true;
        }
    }
}

/// The sequential tail: collisions (and entries whose directory was not there as a real
/// directory), then symlinks, then gitlinks, in index order. It stops between entries when
/// interrupted.
///
/// git checks out in index order with unlink and create, so of the entries that name one file
/// (paths equal but for case on a case-insensitive filesystem) the last in index order is the one
/// on disk. The writers create with `O_EXCL` in no particular order: the one that got there first
/// is on disk and the others collided. When a collided entry finds the file of a writer's entry
/// that comes after it in index order, that entry joins the tail too, to be written again at its
/// place in index order; so every entry of a colliding group from the first collided one on is
/// written here in index order, as git writes them, whichever writer won (and whatever the group
/// of entries git's pairwise `CE_MATCHED` marking makes).
pub(super) fn tail(
    worker: &mut Worker<'_>,
    plan: &Plan,
    jobs: &[Job],
    (collided, mut marks): (Vec<Job>, Collisions),
    shared: &Shared<'_>,
    executed: &mut Executed,
    errors: &mut Vec<EntryError>,
) {
    let fail = |path: &bstr::BString, what: &str, err: std::io::Error| EntryError {
        path: path.clone(),
        message: format!("{what} {path}: {}", fs::strerror(&err)),
    };
    // The files the writers made, by device and inode number, to tell whose file a collided
    // entry found in its place (they all exist side by side when the tail starts: the writers
    // create with `O_EXCL` and never remove one another's files). Only built when something
    // collided.
    let mut by_inode: std::collections::HashMap<(u32, u32), usize> = if collided.is_empty() {
        std::collections::HashMap::new()
    } else {
        (0..plan.entries.len())
            .filter_map(|e| executed.stats[e].map(|st| ((st.dev, st.ino), e)))
            .collect()
    };
    let mut pending: std::collections::BTreeSet<usize> = collided.iter().map(|j| j.entry).collect();
    // Writers' entries taken into the tail to be written again (already counted as done).
    let mut again = std::collections::HashSet::new();
    while let Some(e) = pending.pop_first() {
        if shared.halted() {
            return;
        }
        let entry = &plan.entries[e];
        // git's `create_directories` under force: a file or symlink where a leading directory
        // belongs is replaced by a directory (the link itself goes, never what it points to).
        let (dir, _) = fs::split_path(entry.path.as_bstr());
        worker.dirs.forget();
        if !dir.is_empty() {
            if let Err(err) = worker.dirs.mkdir_all(dir, true) {
                errors.push(fail(&entry.path, "unable to create directory", err));
                continue;
            }
        }
        // What is in the way, and whose it is (git's `checkout_entry` under `state->clone`).
        if let Ok(Some(found)) = worker.dirs.lstat(entry.path.as_bstr()) {
            let is_dir = rustix::fs::FileType::from_raw_mode(found.st_mode).is_dir();
            if is_dir && marks.fresh {
                // A leading directory of entries whose names fold to this one. git, in index
                // order, replaces it by this file when they come first, and this file by it
                // when they come after.
                let path = entry.path.as_slice();
                if (e + 1..plan.entries.len())
                    .any(|d| marks.paths_collide(path, plan.entries[d].path.as_slice()))
                {
                    continue;
                }
                marks.mark(plan, &executed.stats, e, &fs::index_stat(&found));
                if let Err(err) = worker.dirs.remove_all(entry.path.as_bstr()) {
                    errors.push(fail(&entry.path, "unable to remove directory", err));
                    continue;
                }
                worker.dirs.forget();
            } else if !is_dir {
                let st = fs::index_stat(&found);
                marks.mark(plan, &executed.stats, e, &st);
                // A writer's file, replaced now: when its entry comes later in index order, git
                // writes it after this one, so it is written again at its turn. (Its recorded
                // inode must still name the file at its own path: a number freed by the tail
                // and reused by a file created since is not it.)
                if let Some(&o) = by_inode.get(&(st.dev, st.ino)) {
                    let same = worker
                        .dirs
                        .lstat(plan.entries[o].path.as_bstr())
                        .ok()
                        .flatten()
                        .is_some_and(|at| at.st_ino == found.st_ino && at.st_dev == found.st_dev);
                    if same {
                        by_inode.remove(&(st.dev, st.ino));
                        if o > e {
                            // Gone from disk until it is written again.
                            executed.stats[o] = None;
                            again.insert(o);
                            pending.insert(o);
                        }
                    }
                }
            }
        }
        // Whatever non-directory collided is replaced by the writer (the last one wins, as in
        // git); a directory there stays a collision, except in a fresh work tree (above).
        let job = Job {
            entry: e,
            replace: true,
        };
        let written = worker.write_entry(entry, job, shared, false);
        shared.keep_messages(e, &mut worker.runner);
        match written {
            Ok(stat) => {
                executed.stats[e] = Some(stat);
                if !again.contains(&e) {
                    shared.progress.done.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(Failure::Collision) => errors.push(EntryError {
                path: entry.path.clone(),
                message: format!(
                    "unable to create file {}: the path is occupied by a directory",
                    entry.path
                ),
            }),
            Err(Failure::Error(err)) => errors.push(err),
            Err(Failure::Fatal(fatal)) => {
                shared.set_fatal(job, fatal);
                return;
            }
            Err(Failure::Delayed | Failure::Queued(_)) => {
                unreachable!("the tail filters in line, without delay")
            }
        }
    }
    for job in jobs {
        if shared.halted() {
            break;
        }
        let entry = &plan.entries[job.entry];
        let path = entry.path.as_bstr();
        let result = match entry.kind {
            Kind::Symlink if worker.symlinks => Worker::read_blob(
                (&worker.repo, &mut worker.buf),
                entry,
                None,
                shared,
            )
            .and_then(|(data, _grant)| {
                // git's `checkout_entry` unlinks what is there first ("unable to unlink old").
                if job.replace {
                    if let Err(err) = worker.dirs.unlink(path) {
                        return Err(EntryError {
                            path: entry.path.clone(),
                            message: format!(
                                "unable to unlink old '{path}': {}",
                                fs::strerror(&err)
                            ),
                        });
                    }
                }
                match worker.dirs.symlink(&data, path) {
                    Ok(st) => Ok(Some(fs::index_stat(&st))),
                    Err(err) if marks.fresh && err.raw_os_error() == Some(libc::EEXIST) => {
                        let link = (job.entry, &data[..]);
                        symlink_in_the_way(&mut worker.dirs, plan, executed, &mut marks, link)
                            .map_err(|err| fail(&entry.path, "unable to create symlink", err))
                    }
                    Err(err) => Err(fail(&entry.path, "unable to create symlink", err)),
                }
            }),
            Kind::Gitlink => {
                if job.replace {
                    let _ = worker.dirs.unlink(path);
                }
                create_gitlink_dir(&mut worker.dirs, path)
                    .map(Some)
                    .map_err(|err| fail(&entry.path, "unable to create directory", err))
            }
            _ => continue,
        };
        match result {
            Ok(stat) => {
                if let Some(stat) = stat {
                    executed.stats[job.entry] = Some(stat);
                }
                shared.progress.done.fetch_add(1, Ordering::Relaxed);
            }
            Err(err) => errors.push(err),
        }
    }
    executed.collisions = (0..plan.entries.len())
        .filter(|&e| marks.marked[e])
        .map(|e| plan.entries[e].path.clone())
        .collect();
}

/// In a fresh work tree, the symlink of plan entry `e` (with target `target`) met something
/// in its place: a name that folds to its own (a case-insensitive filesystem). git, in index
/// order, would have made the link first and let a later entry replace it, or replaced an
/// earlier entry's file or directory by the link. So: a directory of later entries stays and
/// the link is left out, silently (git replaces a leading path that is not a real directory
/// without a word); a later entry's file stays and both are reported; anything of an earlier
/// entry goes (both reported when it was a file) and the link is made. `None`: left out.
fn symlink_in_the_way(
    dirs: &mut Dirs<'_>,
    plan: &Plan,
    executed: &mut Executed,
    marks: &mut Collisions,
    (e, target): (usize, &[u8]),
) -> std::io::Result<Option<gix::index::entry::Stat>> {
    let path = plan.entries[e].path.as_bstr();
    let Some(found) = dirs.lstat(path)? else {
        return dirs
            .symlink(target, path)
            .map(|st| Some(fs::index_stat(&st)));
    };
    let later = |marks: &Collisions| {
        (e + 1..plan.entries.len())
            .any(|d| marks.paths_collide(path, plan.entries[d].path.as_slice()))
    };
    let st = fs::index_stat(&found);
    if rustix::fs::FileType::from_raw_mode(found.st_mode).is_dir() {
        if later(marks) {
            return Ok(None);
        }
        marks.mark(plan, &executed.stats, e, &st);
        dirs.remove_all(path)?;
    } else {
        marks.mark(plan, &executed.stats, e, &st);
        let owner = (0..plan.entries.len()).find(|&d| {
            d != e && executed.stats[d].is_some_and(|s| (s.dev, s.ino) == (st.dev, st.ino))
        });
        if owner.is_some_and(|o| o > e) {
            return Ok(None);
        }
        if let Some(o) = owner {
            executed.stats[o] = None;
        }
        dirs.unlink(path)?;
    }
    dirs.forget();
    dirs.symlink(target, path)
        .map(|st| Some(fs::index_stat(&st)))
}

/// Create the directory for a gitlink (empty, as git leaves an uninitialised submodule) and
/// return its stat data. An existing directory is accepted and left alone, and then, as git
/// does, no stat data is recorded (all zero): the submodule's directory is not ours to describe.
fn create_gitlink_dir(
    dirs: &mut Dirs<'_>,
    path: &bstr::BStr,
) -> std::io::Result<gix::index::entry::Stat> {
    if dirs.file_type(path)? == Some(rustix::fs::FileType::Directory) {
        return Ok(gix::index::entry::Stat::default());
    }
    dirs.mkdir(path, false)?;
    let st = dirs
        .lstat(path)?
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOENT))?;
    Ok(fs::index_stat(&st))
}
