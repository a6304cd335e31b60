//! The sequential tail of a run, in the calling thread after the writers: entries that collided
//! (or whose directory was not a real one), in index order as git writes them, then symlinks and
//! gitlinks.

use std::sync::atomic::Ordering;

use bstr::ByteSlice;

use super::{Executed, Failure, Job, Shared, Worker};
use crate::fs::{self, Dirs};
use crate::plan::{Kind, Plan};
use crate::write::error::EntryError;

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
    /// there (same inode as its recorded stat data where inodes identify files, or a colliding
    /// name), as git does (Git for Windows by name alone: `trust_ino` is 0 there).
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
                && (fs::INODES_IDENTIFY_FILES
                    && stats[d].is_some_and(|s| s.ino == found.ino && s.dev == found.dev)
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
    (collided, marks): (Vec<Job>, Collisions),
    shared: &Shared<'_>,
    executed: &mut Executed,
    errors: &mut Vec<EntryError>,
) {
    let mut tail = Tail {
        worker,
        plan,
        shared,
        executed,
        errors,
        marks,
    };
    if !tail.collided(&collided) {
        return;
    }
    tail.links(jobs);
    let marked = &tail.marks.marked;
    tail.executed.collisions = (0..plan.entries.len())
        .filter(|&e| marked[e])
        .map(|e| plan.entries[e].path.clone())
        .collect();
}

/// What the tail's phases share: its writer, the run, what it records, and the collision marks.
struct Tail<'t, 'r> {
    worker: &'t mut Worker<'r>,
    plan: &'t Plan,
    shared: &'t Shared<'t>,
    executed: &'t mut Executed,
    errors: &'t mut Vec<EntryError>,
    marks: Collisions,
}

/// What tells a file the writers made from the others: its device and inode numbers where they
/// identify files; else (Windows, where they are 0) its entry's path in lower ASCII case, as the
/// case-insensitive filesystem folds it: of the entries whose names fold together, the writers
/// created the file of one alone.
#[derive(PartialEq, Eq, Hash)]
enum FileKey {
    /// Device and inode numbers.
    Inode(u32, u32),
    /// The path in lower ASCII case.
    Name(bstr::BString),
}

impl FileKey {
    /// The key of the file at `path` with stat data `st`.
    fn of(path: &[u8], st: &gix::index::entry::Stat) -> FileKey {
        if fs::INODES_IDENTIFY_FILES {
            FileKey::Inode(st.dev, st.ino)
        } else {
            FileKey::Name(path.to_ascii_lowercase().into())
        }
    }
}

/// The collided entries still to write, in index order, and whose file a collided entry may
/// find in its place.
struct Pending {
    /// Plan entries still to write here.
    pending: std::collections::BTreeSet<usize>,
    /// The files the writers made, by [`FileKey`], to tell whose file a collided entry found in
    /// its place (they all exist side by side when the tail starts: the writers create with
    /// `O_EXCL` and never remove one another's files). Only built when something collided.
    made: std::collections::HashMap<FileKey, usize>,
    /// Writers' entries taken into the tail to be written again (already counted as done).
    again: std::collections::HashSet<usize>,
}

impl Tail<'_, '_> {
    /// The entries that collided, and those they take along, in index order. Returns false if
    /// the run stopped (interrupted, or a required filter failed): nothing more is done.
    fn collided(&mut self, collided: &[Job]) -> bool {
        let made = if collided.is_empty() {
            std::collections::HashMap::new()
        } else {
            (0..self.plan.entries.len())
                .filter_map(|e| {
                    let path = self.plan.entries[e].path.as_slice();
                    self.executed.stats[e].map(|st| (FileKey::of(path, &st), e))
                })
                .collect()
        };
        let mut pending = Pending {
            pending: collided.iter().map(|j| j.entry).collect(),
            made,
            again: std::collections::HashSet::new(),
        };
        while let Some(e) = pending.pending.pop_first() {
            if self.shared.halted() {
                return false;
            }
            if self.make_way(e, &mut pending) && !self.write_collided(e, &pending.again) {
                return false;
            }
        }
        true
    }

    /// Clear the way for collided entry `e`: its leading directories made (git's
    /// `create_directories` under force: a file or symlink where one belongs is replaced by a
    /// directory, the link itself going, never what it points to), and what is at its path
    /// looked at ([`Tail::in_the_way`]). Returns false if `e` is not to be written now.
    fn make_way(&mut self, e: usize, pending: &mut Pending) -> bool {
        let entry = &self.plan.entries[e];
        let (dir, _) = fs::split_path(entry.path.as_bstr());
        let dirs = &mut self.worker.dirs;
        dirs.forget();
        if !dir.is_empty() {
            if let Err(err) = dirs.mkdir_all(dir, true) {
                self.errors
                    .push(fail(&entry.path, "unable to create directory", err));
                return false;
            }
        }
        match dirs.lstat(entry.path.as_bstr()) {
            Ok(Some(found)) => self.in_the_way(e, &found, pending),
            _ => true,
        }
    }

    /// What is in the way of collided entry `e`, and whose it is (git's `checkout_entry` under
    /// `state->clone`). Returns false if `e` is not to be written now.
    fn in_the_way(&mut self, e: usize, found: &crate::fs::Stat, pending: &mut Pending) -> bool {
        let (plan, entry) = (self.plan, &self.plan.entries[e]);
        let is_dir = crate::fs::FileType::from_raw_mode(found.st_mode).is_dir();
        if is_dir && self.marks.fresh {
            // A leading directory of entries whose names fold to this one. git, in index
            // order, replaces it by this file when they come first, and this file by it
            // when they come after.
            let path = entry.path.as_slice();
            if (e + 1..plan.entries.len()).any(|d| {
                self.marks
                    .paths_collide(path, plan.entries[d].path.as_slice())
            }) {
                return false;
            }
            self.marks
                .mark(plan, &self.executed.stats, e, &fs::index_stat(found));
            if let Err(err) = self.worker.dirs.remove_all(entry.path.as_bstr()) {
                self.errors
                    .push(fail(&entry.path, "unable to remove directory", err));
                return false;
            }
            self.worker.dirs.forget();
        } else if !is_dir {
            let st = fs::index_stat(found);
            self.marks.mark(plan, &self.executed.stats, e, &st);
            self.take_along(e, found, &st, pending);
        }
        true
    }

    /// A writer's file in the way of collided entry `e`, replaced now: when its entry comes
    /// later in index order, git writes it after this one, so it is written again at its turn.
    /// (Its recorded inode must still name the file at its own path: a number freed by the tail
    /// and reused by a file created since is not it. Without inodes, its name folds to `e`'s.)
    fn take_along(
        &mut self,
        e: usize,
        found: &crate::fs::Stat,
        st: &gix::index::entry::Stat,
        pending: &mut Pending,
    ) {
        let key = FileKey::of(self.plan.entries[e].path.as_slice(), st);
        let Some(&o) = pending.made.get(&key) else {
            return;
        };
        let same = self
            .worker
            .dirs
            .lstat(self.plan.entries[o].path.as_bstr())
            .ok()
            .flatten()
            .is_some_and(|at| at.st_ino == found.st_ino && at.st_dev == found.st_dev);
        if same {
            pending.made.remove(&key);
            if o > e {
                // Gone from disk until it is written again.
                self.executed.stats[o] = None;
                pending.again.insert(o);
                pending.pending.insert(o);
            }
        }
    }

    /// Write collided entry `e` over whatever non-directory is in its way (the last one wins,
    /// as in git); a directory there stays a collision, except in a fresh work tree
    /// ([`Tail::in_the_way`]). Returns false if a required filter failed: the run stops.
    fn write_collided(&mut self, e: usize, again: &std::collections::HashSet<usize>) -> bool {
        let (shared, entry) = (self.shared, &self.plan.entries[e]);
        let job = Job {
            entry: e,
            replace: true,
        };
        let written = self.worker.write_entry(entry, job, shared, false);
        shared.keep_messages(e, &mut self.worker.runner);
        match written {
            Ok(stat) => {
                self.executed.stats[e] = Some(stat);
                if !again.contains(&e) {
                    shared.progress.done.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(Failure::Collision) => {
                let why = self.still_in_the_way(e);
                self.errors.push(EntryError {
                    path: entry.path.clone(),
                    message: format!("unable to create file {}: {why}", entry.path),
                });
            }
            Err(Failure::Error(err)) => self.errors.push(err),
            Err(Failure::Fatal(fatal)) => {
                shared.set_fatal(job, fatal);
                return false;
            }
            Err(Failure::Delayed | Failure::Queued(_)) => {
                unreachable!("the tail filters in line, without delay")
            }
        }
        true
    }

    /// Why collided entry `e` could still not be created: a directory in its place, or else a
    /// file whose name outlived its unlinking (git's `File exists`): under Wine's classic
    /// deletion, a file another program holds open with `FILE_SHARE_DELETE` keeps its name, and
    /// can still be opened, until that program closes it (Windows refuses to open it meanwhile).
    fn still_in_the_way(&mut self, e: usize) -> &'static str {
        let path = self.plan.entries[e].path.as_bstr();
        match self.worker.dirs.file_type(path) {
            Ok(Some(kind)) if kind.is_dir() => "the path is occupied by a directory",
            _ => "File exists",
        }
    }

    /// The symlinks (where the work tree has them) and gitlinks of `jobs`, in index order,
    /// until the run is halted.
    fn links(&mut self, jobs: &[Job]) {
        for &job in jobs {
            if self.shared.halted() {
                break;
            }
            let entry = &self.plan.entries[job.entry];
            let result = match entry.kind {
                Kind::Symlink if self.worker.symlinks => self.symlink(job),
                Kind::Gitlink => {
                    let (dirs, path) = (&mut self.worker.dirs, entry.path.as_bstr());
                    if job.replace {
                        let _ = dirs.unlink(path);
                    }
                    create_gitlink_dir(dirs, path)
                        .map(Some)
                        .map_err(|err| fail(&entry.path, "unable to create directory", err))
                }
                _ => continue,
            };
            match result {
                Ok(stat) => {
                    if let Some(stat) = stat {
                        self.executed.stats[job.entry] = Some(stat);
                    }
                    self.shared.progress.done.fetch_add(1, Ordering::Relaxed);
                }
                Err(err) => self.errors.push(err),
            }
        }
    }

    /// Make the symlink of `job`, its target read under the budget; `None`: left out, a
    /// directory of later entries in its place ([`symlink_in_the_way`]).
    fn symlink(&mut self, job: Job) -> Result<Option<gix::index::entry::Stat>, EntryError> {
        let (plan, entry) = (self.plan, &self.plan.entries[job.entry]);
        let path = entry.path.as_bstr();
        let worker = &mut *self.worker;
        let (data, _grant) =
            Worker::read_blob((&worker.repo, &mut worker.buf), entry, None, self.shared)?;
        // git's `checkout_entry` unlinks what is there first ("unable to unlink old").
        if job.replace {
            if let Err(err) = worker.dirs.unlink(path) {
                return Err(EntryError {
                    path: entry.path.clone(),
                    message: format!("unable to unlink old '{path}': {}", fs::strerror(&err)),
                });
            }
        }
        match worker.dirs.symlink(&data, path) {
            Ok(st) => Ok(Some(fs::index_stat(&st))),
            Err(err) if self.marks.fresh && err.kind() == std::io::ErrorKind::AlreadyExists => {
                let link = (job.entry, &data[..]);
                symlink_in_the_way(&mut worker.dirs, plan, self.executed, &mut self.marks, link)
                    .map_err(|err| fail(&entry.path, "unable to create symlink", err))
            }
            Err(err) => Err(fail(&entry.path, "unable to create symlink", err)),
        }
    }
}

/// An entry's failure in git's words: `what`, the path and the system's message for `err`.
fn fail(path: &bstr::BString, what: &str, err: std::io::Error) -> EntryError {
    EntryError {
        path: path.clone(),
        message: format!("{what} {path}: {}", fs::strerror(&err)),
    }
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
    if crate::fs::FileType::from_raw_mode(found.st_mode).is_dir() {
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
    if dirs.file_type(path)? == Some(crate::fs::FileType::Directory) {
        return Ok(gix::index::entry::Stat::default());
    }
    dirs.mkdir(path, false)?;
    let st = dirs
        .lstat(path)?
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
    Ok(fs::index_stat(&st))
}
