//! A whole directory removed by worker threads: what git's `remove_dir_recursively` (`dir.c`)
//! does for `git worktree remove`, with the directories dealt out to threads; and a list of
//! files and directories in a work tree removed the same way ([`remove_paths`]: `git clean`'s
//! removals).
//!
//! Every entry is reached through the open directory it was listed in, one component at a time
//! and without following a symbolic link (`openat(O_NOFOLLOW)`, a handle with
//! `FILE_OPEN_REPARSE_POINT` on Windows): a symlink in the tree is unlinked, never entered, so
//! nothing outside the tree is touched. A directory is removed once everything in it is gone
//! (each one counts what is still pending in it), the top one last. As in git, an entry that
//! vanished meanwhile is what was wanted anyway, and an unreadable directory is `rmdir`ed as
//! it is (it may be empty).
//!
//! git's recursion stops at its first failure and leaves the rest in place; so do the workers
//! here: the first failure stops them all and is returned, naming the step and the path.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};

use bstr::{BString, ByteSlice};

use super::{os, FileType, OwnedFd};

/// How [`remove_tree`] runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Worker threads; `None`: as many as the filesystem's kind calls for
    /// ([`crate::fs::tune::workers_for`]).
    pub threads: Option<usize>,
    /// A name in the top directory removed only after everything else in it: a linked work
    /// tree's `.git` file, so that a removal stopped half-way leaves a work tree git still
    /// recognises, and `git worktree remove` can be run again.
    pub last: Option<BString>,
}

/// What [`remove_tree`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Files, symlinks and other non-directories unlinked.
    pub files: usize,
    /// Directories removed, the top one included.
    pub dirs: usize,
    /// The worker threads that removed them.
    pub threads: usize,
}

/// Why [`remove_tree`] stopped before the tree was gone.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A step failed: `unlink`, `rmdir` or `opendir`, on the path named (the top directory or
    /// something inside it). The workers stopped; what was not removed yet is still there.
    #[error("cannot {op} '{}': {}", path.display(), super::strerror(source))]
    Io {
        /// The step that failed.
        op: &'static str,
        /// The path it failed on.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// The caller asked the removal to stop ([`crate::Context::interrupt`]).
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// The cause as git prints it after a path: the system's text (`Permission denied`).
    pub fn cause(&self) -> String {
        match self {
            Error::Io { source, .. } => super::strerror(source),
            Error::Interrupted => "Interrupted".to_owned(),
        }
    }
}

/// Remove the empty directory at `path` (its last component not followed): git's `rmdir` of a
/// directory in the git directory that may now be empty, such as `worktrees`.
pub fn remove_empty_dir(path: &Path) -> Result<(), Error> {
    let (outer, name) = split_top(path)?;
    os::rmdir_at(os::borrow(&outer), &name).map_err(|source| Error::Io {
        op: "rmdir",
        path: path.to_owned(),
        source,
    })
}

/// Remove the directory at `path` and everything in it, with worker threads. `path` itself may
/// lie behind symlinks (its leading components are followed, as a work tree's location may be
/// anywhere), but its last component is not followed: a symlink there is an error (`ELOOP`),
/// not a way out. Nothing there at all is success, as in git. `interrupt` stops the workers at
/// their next entry.
pub fn remove_tree(path: &Path, opts: &Options, interrupt: &AtomicBool) -> Result<Removed, Error> {
    remove_in_chunks(path, opts, interrupt, None)
}

/// [`remove_tree`], with `chunk` files a job instead of [`chunk_for`]'s (the tests share small
/// directories out).
fn remove_in_chunks(
    path: &Path,
    opts: &Options,
    interrupt: &AtomicBool,
    chunk: Option<usize>,
) -> Result<Removed, Error> {
    let (outer, name) = split_top(path)?;
    let kind = crate::fs::tune::Kind::of(os::borrow(&outer));
    let threads = opts
        .threads
        .unwrap_or_else(|| crate::fs::tune::workers_for(kind, usize::MAX, None).workers)
        .max(1);
    let outer = Arc::new(outer);
    let top = Node::top(name, Arc::clone(&outer), path.to_owned());
    let jobs = vec![Job::Dir {
        node: top,
        parent: outer,
    }];
    let chunk = chunk.unwrap_or_else(|| chunk_for(kind));
    run_jobs(jobs, threads, chunk, opts.last.clone(), interrupt)
}

/// One thing [`remove_paths`] removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its path in the work tree, `/`-separated.
    pub path: BString,
    /// A directory, removed with everything in it; else a file or symlink, unlinked.
    pub dir: bool,
}

/// Remove `targets` from the work tree at `workdir` with worker threads: what `git clean`
/// removes, once git has chosen it. The targets are taken as they come (the calling thread
/// waits for each, while the workers remove the ones before it: git's list is read as git
/// prints it). Each target's leading directories are opened from the work tree without
/// following a symlink (`Root::open_dir`), so nothing outside it is reached; a
/// directory target goes as [`remove_tree`] removes one, a symlink where a directory was
/// listed is an error, and what is gone already is success. The first failure stops the
/// workers and is returned, naming the step and the path.
pub fn remove_paths(
    workdir: &Path,
    targets: impl IntoIterator<Item = Target>,
    opts: &Options,
    interrupt: &AtomicBool,
) -> Result<Removed, Error> {
    let root = super::Root::open(workdir).map_err(|source| Error::Io {
        op: "opendir",
        path: workdir.to_owned(),
        source,
    })?;
    let kind = crate::fs::tune::Kind::of(root.fd());
    let threads = opts
        .threads
        .unwrap_or_else(|| crate::fs::tune::workers_for(kind, usize::MAX, None).workers)
        .max(1);
    let run = Run::new(Vec::new(), chunk_for(kind), None, interrupt);
    // The feeding thread counts as busy: the workers wait for its jobs until it is done.
    lock(&run.queue).busy = 1;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| run.work());
        }
        let feeding = Busy(&run);
        run.feed(&root, targets);
        drop(feeding);
        run.work();
    });
    run.outcome(threads)
}

/// Run `jobs` on `threads` workers (the calling thread one of them) until they and the jobs
/// they make are done, the first failure, or `interrupt`.
fn run_jobs(
    jobs: Vec<Job>,
    threads: usize,
    chunk: usize,
    last: Option<BString>,
    interrupt: &AtomicBool,
) -> Result<Removed, Error> {
    let run = Run::new(jobs, chunk, last, interrupt);
    if threads == 1 {
        run.work();
    } else {
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|| run.work());
            }
            run.work();
        });
    }
    run.outcome(threads)
}

/// How many of a directory's files one job unlinks. The kernel holds a directory's lock for the
/// whole of an unlink in it (`i_rwsem`; over FUSE or NFS, for the round trip to the server), so
/// the unlinks in one directory never overlap: the threads gain by working in different
/// directories, and a directory's files stay with one worker. Where a file costs only CPU
/// (tmpfs, a local disk), the part of an unlink after the lock (freeing the inode and its pages)
/// can overlap, so a big directory is shared out in big chunks; where an unlink is a round trip,
/// never.
fn chunk_for(kind: crate::fs::tune::Kind) -> usize {
    if kind.is_high_latency() {
        usize::MAX
    } else {
        1024
    }
}

/// The directory holding `path` (opened following symlinks) and `path`'s last component.
fn split_top(path: &Path) -> Result<(OwnedFd, BString), Error> {
    let fail = |source| Error::Io {
        op: "opendir",
        path: path.to_owned(),
        source,
    };
    let name = path
        .file_name()
        .ok_or_else(|| fail(io::ErrorKind::InvalidInput.into()))?;
    let outer = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = gix::path::os_str_into_bstr(name)
        .map_err(|_| fail(io::ErrorKind::InvalidInput.into()))?
        .to_owned();
    Ok((os::open_root(outer).map_err(fail)?, name))
}

/// A directory being emptied.
#[derive(Debug)]
struct Node {
    /// Its name in its parent (the top directory's: in the directory holding it).
    name: BString,
    /// The directory it is in.
    up: Up,
    /// The directory while it is open. Weak: the jobs working in it hold it open, and it
    /// closes when they are done, so a wide or deep tree does not pile up descriptors (and on
    /// Windows no handle of ours keeps it from being removed).
    fd: Mutex<Weak<OwnedFd>>,
    /// What is still to finish in it: its listing, each chunk of its files, each of its
    /// subdirectories. The one that brings it to zero removes the directory.
    pending: AtomicUsize,
}

/// Where a [`Node`] is.
#[derive(Debug)]
enum Up {
    /// Inside another directory being emptied.
    Parent(Arc<Node>),
    /// A top directory, in `outer` (not removed), at `path` (for messages).
    Top { outer: Arc<OwnedFd>, path: PathBuf },
}

impl Node {
    /// A top directory: `name` in `outer`, known as `path` in messages.
    fn top(name: BString, outer: Arc<OwnedFd>, path: PathBuf) -> Arc<Node> {
        Arc::new(Node {
            name,
            up: Up::Top { outer, path },
            fd: Mutex::new(Weak::new()),
            pending: AtomicUsize::new(1),
        })
    }

    /// The directory it is in, if that is being emptied too.
    fn parent(&self) -> Option<&Arc<Node>> {
        match &self.up {
            Up::Parent(parent) => Some(parent),
            Up::Top { .. } => None,
        }
    }

    /// The path of this directory, for messages.
    fn path(&self) -> PathBuf {
        let mut names = Vec::new();
        let mut at = self;
        loop {
            match &at.up {
                Up::Parent(parent) => {
                    names.push(at.name.to_str_lossy().into_owned());
                    at = parent;
                }
                Up::Top { path, .. } => {
                    return names.iter().rev().fold(path.clone(), |p, n| p.join(n));
                }
            }
        }
    }
}

/// A piece of work a worker takes from the queue.
enum Job {
    /// Open `node` in `parent` and list it: its subdirectories become jobs, its files chunks.
    Dir {
        node: Arc<Node>,
        parent: Arc<OwnedFd>,
    },
    /// Unlink `names` from the open directory `dir` of `node`.
    Files {
        node: Arc<Node>,
        dir: Arc<OwnedFd>,
        names: Vec<(BString, FileType)>,
    },
    /// Unlink `names` from the open directory `dir` at `path`, which stays ([`remove_paths`]'
    /// files).
    Loose {
        dir: Arc<OwnedFd>,
        path: PathBuf,
        names: Vec<BString>,
    },
}

/// The jobs waiting, and how many workers are busy with one (no job and none busy: done).
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    busy: usize,
}

/// One removal's shared state.
struct Run<'a> {
    /// A stack rather than a channel: the last directory listed is the next entered, so the
    /// workers go deep first and few directories are open at once.
    queue: Mutex<Queue>,
    ready: Condvar,
    /// Files per job: a directory's files are shared out in chunks this big ([`chunk_for`]).
    chunk: usize,
    /// See [`Options::last`].
    last: Option<BString>,
    /// Set on the first failure or an interruption: the workers take no further job.
    stop: AtomicBool,
    /// The first failure.
    failure: Mutex<Option<Error>>,
    interrupt: &'a AtomicBool,
    files: AtomicUsize,
    dirs: AtomicUsize,
}

/// A lock taken even if a worker panicked while holding it: the state behind it stays
/// consistent (counts and a stack), and the panic is the run's outcome anyway.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks the worker's job done when dropped, also when the job panicked (then the others stop
/// rather than wait for work that will never come).
struct Busy<'r, 'a>(&'r Run<'a>);

impl Drop for Busy<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop.store(true, Ordering::Relaxed);
        }
        let mut q = lock(&self.0.queue);
        q.busy -= 1;
        if (q.busy == 0 && q.jobs.is_empty()) || self.0.stopped() {
            self.0.ready.notify_all();
        }
    }
}

impl<'a> Run<'a> {
    fn new(jobs: Vec<Job>, chunk: usize, last: Option<BString>, interrupt: &'a AtomicBool) -> Self {
        Run {
            queue: Mutex::new(Queue { jobs, busy: 0 }),
            ready: Condvar::new(),
            chunk,
            last,
            stop: AtomicBool::new(false),
            failure: Mutex::new(None),
            interrupt,
            files: AtomicUsize::new(0),
            dirs: AtomicUsize::new(0),
        }
    }

    /// Turn `targets` into jobs as they come: a directory a job of its own, files of one
    /// directory unlinked in chunks. Consecutive targets in one directory share its opening.
    fn feed(&self, root: &super::Root, targets: impl IntoIterator<Item = Target>) {
        // The directory of the last target: its path, its descriptor (`None`: it is gone, and
        // so is what was to be removed in it), and the files waiting for a job.
        let mut at: Option<(BString, Option<Arc<OwnedFd>>)> = None;
        let mut files = Vec::new();
        for t in targets {
            if self.stopped() {
                break;
            }
            let split = super::last_slash(&t.path);
            let parent = split.map_or(&t.path[..0], |i| &t.path[..i]);
            let name = BString::from(&t.path[split.map_or(0, |i| i + 1)..]);
            if at.as_ref().is_none_or(|(p, _)| p != parent) {
                self.flush(&at, &mut files, root);
                let fd = match root.open_dir(parent.as_bstr()) {
                    Ok(fd) => Some(Arc::new(fd)),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                    Err(source) => {
                        let path = root.path().join(parent.to_str_lossy().as_ref());
                        self.fail(Error::Io {
                            op: "opendir",
                            path,
                            source,
                        });
                        return;
                    }
                };
                at = Some((parent.into(), fd));
            }
            let Some((_, Some(fd))) = &at else {
                continue;
            };
            if t.dir {
                let path = root.path().join(t.path.to_str_lossy().as_ref());
                self.push(Job::Dir {
                    node: Node::top(name, Arc::clone(fd), path),
                    parent: Arc::clone(fd),
                });
            } else {
                files.push(name);
                if files.len() >= self.chunk {
                    self.flush(&at, &mut files, root);
                }
            }
        }
        self.flush(&at, &mut files, root);
    }

    /// The `files` waiting in the directory `at` become a job.
    fn flush(
        &self,
        at: &Option<(BString, Option<Arc<OwnedFd>>)>,
        files: &mut Vec<BString>,
        root: &super::Root,
    ) {
        if let Some((parent, Some(fd))) = at {
            if !files.is_empty() {
                self.push(Job::Loose {
                    dir: Arc::clone(fd),
                    path: root.path().join(parent.to_str_lossy().as_ref()),
                    names: std::mem::take(files),
                });
            }
        }
        files.clear();
    }
}

impl Run<'_> {
    /// A worker: jobs until there are none left (or the run stops).
    fn work(&self) {
        while let Some(job) = self.next() {
            let _busy = Busy(self);
            if self.stopped() {
                continue;
            }
            let done = match job {
                Job::Dir { node, parent } => self.list(node, parent),
                Job::Files { node, dir, names } => {
                    self.unlink_all(&node, &dir, &names).and_then(|()| {
                        drop(dir);
                        self.finish(node)
                    })
                }
                Job::Loose { dir, path, names } => self.unlink_loose(&dir, &path, &names),
            };
            if let Err(err) = done {
                self.fail(err);
            }
        }
    }

    /// The next job, waiting while other workers may still make some; `None` when the run is
    /// over.
    fn next(&self) -> Option<Job> {
        let mut q = lock(&self.queue);
        loop {
            if self.stopped() {
                return None;
            }
            if let Some(job) = q.jobs.pop() {
                q.busy += 1;
                return Some(job);
            }
            if q.busy == 0 {
                return None;
            }
            q = self.ready.wait(q).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn push(&self, job: Job) {
        lock(&self.queue).jobs.push(job);
        self.ready.notify_one();
    }

    /// Returns true if and only if the run is to stop: a failure, or the caller's interruption.
    fn stopped(&self) -> bool {
        if self.interrupt.load(Ordering::Relaxed) {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.stop.load(Ordering::Relaxed)
    }

    /// Keep the first failure and stop every worker.
    fn fail(&self, err: Error) {
        lock(&self.failure).get_or_insert(err);
        self.stop.store(true, Ordering::Relaxed);
        let _q = lock(&self.queue);
        self.ready.notify_all();
    }

    fn outcome(self, threads: usize) -> Result<Removed, Error> {
        if let Some(err) = self
            .failure
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
        {
            return Err(err);
        }
        if self.interrupt.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        Ok(Removed {
            files: self.files.into_inner(),
            dirs: self.dirs.into_inner(),
            threads,
        })
    }

    fn io(&self, op: &'static str, node: &Node, name: Option<&[u8]>, source: io::Error) -> Error {
        let dir = node.path();
        Error::Io {
            op,
            path: match name {
                Some(name) => dir.join(name.to_str_lossy().as_ref()),
                None => dir,
            },
            source,
        }
    }
}

impl Run<'_> {
    /// Open `node` and list it: each subdirectory becomes a job, the files are shared out in
    /// chunks (the first one unlinked here). A directory gone meanwhile is done; one that
    /// cannot be read is removed as it is, as git does (it may be empty).
    fn list(&self, node: Arc<Node>, parent: Arc<OwnedFd>) -> Result<(), Error> {
        let fd = match os::open_dir_at(os::borrow(&parent), &node.name) {
            Ok(fd) => Arc::new(fd),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Gone: nothing left to count, not even the directory itself.
                drop(parent);
                return self.after_removal(node);
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                drop(parent);
                return self.finish(node);
            }
            Err(e) => return Err(self.io("opendir", &node, None, e)),
        };
        drop(parent);
        *lock(&node.fd) = Arc::downgrade(&fd);
        let entries =
            os::read_dir(os::borrow(&fd)).map_err(|e| self.io("opendir", &node, None, e))?;
        let is_top = node.parent().is_none();
        let mut files = Vec::new();
        for (name, kind) in entries {
            if is_top && self.last.as_ref() == Some(&name) {
                continue;
            }
            if kind == FileType::Directory {
                node.pending.fetch_add(1, Ordering::AcqRel);
                let child = Arc::new(Node {
                    name,
                    up: Up::Parent(Arc::clone(&node)),
                    fd: Mutex::new(Weak::new()),
                    pending: AtomicUsize::new(1),
                });
                self.push(Job::Dir {
                    node: child,
                    parent: Arc::clone(&fd),
                });
            } else {
                files.push((name, kind));
            }
        }
        let mut chunks = files.chunks(self.chunk);
        let first = chunks.next().unwrap_or_default();
        for chunk in chunks {
            node.pending.fetch_add(1, Ordering::AcqRel);
            self.push(Job::Files {
                node: Arc::clone(&node),
                dir: Arc::clone(&fd),
                names: chunk.to_vec(),
            });
        }
        self.unlink_all(&node, &fd, first)?;
        drop(fd);
        self.finish(node)
    }

    /// Unlink `names` from the open directory `dir` of `node`. An entry gone meanwhile is
    /// fine. One that is a directory after all (made since the listing; on Windows, a
    /// directory symlink or junction, which is removed as a directory) is `rmdir`ed if it is
    /// empty; otherwise the unlink's error stands.
    fn unlink_all(
        &self,
        node: &Node,
        dir: &OwnedFd,
        names: &[(BString, FileType)],
    ) -> Result<(), Error> {
        let dir = os::borrow(dir);
        for (name, kind) in names {
            if self.stopped() {
                return Ok(());
            }
            match os::unlink_at(dir, name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    if *kind == FileType::RegularFile || os::rmdir_at(dir, name).is_err() {
                        return Err(self.io("unlink", node, Some(name), e));
                    }
                }
            }
            self.files.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Unlink `names` from the open directory `dir` at `path`, which stays. An entry gone
    /// meanwhile is fine; one that is a directory (git lists the directories inside one it
    /// does not remove whole without their `/`) is removed with what it holds, as a job of its
    /// own.
    fn unlink_loose(
        &self,
        dir: &Arc<OwnedFd>,
        path: &Path,
        names: &[BString],
    ) -> Result<(), Error> {
        for name in names {
            if self.stopped() {
                return Ok(());
            }
            let at = || path.join(name.to_str_lossy().as_ref());
            match os::unlink_at(os::borrow(dir), name) {
                Ok(()) => {
                    self.files.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => {
                    let is_dir = os::lstat_at(os::borrow(dir), name)
                        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
                    if !is_dir {
                        return Err(Error::Io {
                            op: "unlink",
                            path: at(),
                            source,
                        });
                    }
                    self.push(Job::Dir {
                        node: Node::top(name.clone(), Arc::clone(dir), at()),
                        parent: Arc::clone(dir),
                    });
                }
            }
        }
        Ok(())
    }

    /// One thing pending in `node` is done; if it was the last, the directory goes, and so on
    /// up: each directory is removed by whichever worker finished the last thing in it.
    fn finish(&self, node: Arc<Node>) -> Result<(), Error> {
        if node.pending.fetch_sub(1, Ordering::AcqRel) != 1 || self.stopped() {
            return Ok(());
        }
        if node.parent().is_none() {
            self.remove_last(&node)?;
        }
        let parent_fd = match &node.up {
            Up::Parent(parent) => self
                .open(parent)
                .map_err(|e| self.io("opendir", parent, None, e))?,
            Up::Top { outer, .. } => Arc::clone(outer),
        };
        match os::rmdir_at(os::borrow(&parent_fd), &node.name) {
            Ok(()) => {
                self.dirs.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.io("rmdir", &node, None, e)),
        }
        drop(parent_fd);
        self.after_removal(node)
    }

    /// `node` is gone: one thing fewer is pending in its parent.
    fn after_removal(&self, node: Arc<Node>) -> Result<(), Error> {
        match node.parent() {
            Some(parent) => self.finish(Arc::clone(parent)),
            None => Ok(()),
        }
    }

    /// The open directory of `node`: the one its jobs hold open, else opened again from its
    /// parent's (by name, following no symlink).
    fn open(&self, node: &Arc<Node>) -> io::Result<Arc<OwnedFd>> {
        if let Some(fd) = lock(&node.fd).upgrade() {
            return Ok(fd);
        }
        let parent = match &node.up {
            Up::Parent(parent) => self.open(parent)?,
            Up::Top { outer, .. } => Arc::clone(outer),
        };
        let fd = Arc::new(os::open_dir_at(os::borrow(&parent), &node.name)?);
        *lock(&node.fd) = Arc::downgrade(&fd);
        Ok(fd)
    }

    /// The top directory's [`Options::last`] entry, now that everything else in it is gone: a
    /// file unlinked, a directory removed with what it holds.
    fn remove_last(&self, top: &Arc<Node>) -> Result<(), Error> {
        let Some(name) = &self.last else {
            return Ok(());
        };
        let fd = match self.open(top) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(self.io("opendir", top, None, e)),
        };
        let dir = os::borrow(&fd);
        let removed = match os::lstat_at(dir, name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(("lstat", e)),
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                remove_dir_serially(dir, name)
            }
            Ok(_) => os::unlink_at(dir, name)
                .map(|()| {
                    self.files.fetch_add(1, Ordering::Relaxed);
                })
                .map_err(|e| ("unlink", e)),
        };
        removed.map_err(|(op, e)| self.io(op, top, Some(name), e))
    }
}

/// The directory `name` of `dir` and everything in it, by the calling thread alone.
fn remove_dir_serially(dir: super::Fd<'_>, name: &[u8]) -> Result<(), (&'static str, io::Error)> {
    let inner = os::open_dir_at(dir, name).map_err(|e| ("opendir", e))?;
    let mut path = BString::from(name);
    super::remove_contents_naming(&inner, &mut path).map_err(|e| (e.op, e.source))?;
    drop(inner);
    os::rmdir_at(dir, name).map_err(|e| ("rmdir", e))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A tree of `dirs` directories (nested three deep, some wide) with `files` files each, a
    /// symlink to a directory outside with a file in it, and a `.git` file at the top.
    fn tree(top: &Path, dirs: usize, files: usize, outside: &Path) {
        for d in 0..dirs {
            let dir = top.join(format!("d{}/e{}/f{d}", d % 3, d % 5));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..files {
                std::fs::write(dir.join(format!("file{f}")), b"x").unwrap();
            }
        }
        std::fs::create_dir_all(top.join("empty/deeper")).unwrap();
        std::fs::create_dir_all(outside).unwrap();
        std::fs::write(outside.join("keep"), b"keep").unwrap();
        std::os::unix::fs::symlink(outside, top.join("d0/link")).unwrap();
        std::os::unix::fs::symlink("../nowhere", top.join("dangling")).unwrap();
        std::fs::write(top.join(".git"), b"gitdir: /elsewhere\n").unwrap();
    }

    #[test]
    fn removes_everything_below_and_nothing_through_a_symlink() {
        for threads in [1, 4] {
            let s = tempfile::tempdir().unwrap();
            let top = s.path().join("wt");
            let outside = s.path().join("outside");
            tree(&top, 6, 130, &outside);
            let opts = Options {
                threads: Some(threads),
                last: Some(".git".into()),
            };
            // 130 files a directory, 50 a job: three jobs each.
            let removed = remove_in_chunks(&top, &opts, &AtomicBool::new(false), Some(50)).unwrap();
            assert!(!top.exists(), "{threads} threads");
            assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"keep");
            // 6 x 130 files, two symlinks, .git; the directories: d0..d2, their e's, the f's,
            // empty, empty/deeper and the top.
            assert_eq!(removed.files, 6 * 130 + 3);
            let e_dirs: std::collections::BTreeSet<_> = (0..6).map(|d| (d % 3, d % 5)).collect();
            assert_eq!(removed.dirs, 3 + e_dirs.len() + 6 + 2 + 1);
        }
    }

    #[test]
    fn a_missing_tree_is_no_error_and_a_symlinked_top_is_not_followed() {
        let s = tempfile::tempdir().unwrap();
        let none = remove_tree(
            &s.path().join("none"),
            &Options::default(),
            &AtomicBool::new(false),
        );
        assert_eq!(none.unwrap().files, 0);
        let target = s.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("f"), b"f").unwrap();
        std::os::unix::fs::symlink(&target, s.path().join("link")).unwrap();
        let err = remove_tree(
            &s.path().join("link"),
            &Options::default(),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Io { op: "opendir", .. }), "{err}");
        assert!(target.join("f").exists());
    }

    #[test]
    fn an_interruption_stops_the_workers_and_keeps_the_last_entry() {
        let s = tempfile::tempdir().unwrap();
        let top = s.path().join("wt");
        tree(&top, 10, 10, &s.path().join("outside"));
        let opts = Options {
            threads: Some(2),
            last: Some(".git".into()),
        };
        let err = remove_tree(&top, &opts, &AtomicBool::new(true)).unwrap_err();
        assert!(matches!(err, Error::Interrupted));
        assert!(top.join(".git").exists());
    }

    fn target(path: &str, dir: bool) -> Target {
        Target {
            path: path.into(),
            dir,
        }
    }

    #[test]
    fn remove_paths_removes_the_targets_only_and_never_through_a_symlink() {
        for threads in [1, 3] {
            let s = tempfile::tempdir().unwrap();
            let top = s.path().join("wt");
            let outside = s.path().join("outside");
            tree(&top, 6, 20, &outside);
            std::fs::write(top.join("d1/kept"), b"kept").unwrap();
            std::fs::write(top.join("d1/a.o"), b"o").unwrap();
            std::fs::write(top.join("b.o"), b"o").unwrap();
            let opts = Options {
                threads: Some(threads),
                last: None,
            };
            let targets = [
                target("d0", true),
                target("d1/a.o", false),
                target("b.o", false),
                target("dangling", false),
                target("gone", false),
                target("gone/too", true),
            ];
            let removed = remove_paths(&top, targets, &opts, &AtomicBool::new(false)).unwrap();
            assert!(!top.join("d0").exists(), "{threads} threads");
            assert!(!top.join("d1/a.o").exists() && !top.join("b.o").exists());
            assert!(top.join("dangling").symlink_metadata().is_err());
            assert_eq!(std::fs::read(top.join("d1/kept")).unwrap(), b"kept");
            assert!(top.join("d2").is_dir() && top.join(".git").is_file());
            assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"keep");
            // d0 holds d0/e0/f0 and d0/e3/f3 with 20 files each, and the symlink d0/link.
            assert_eq!(removed.files, 2 * 20 + 1 + 3);

            // Through the symlink d0/link (made again): refused, and the outside file stays.
            std::fs::create_dir(top.join("d0")).unwrap();
            std::os::unix::fs::symlink(&outside, top.join("d0/link")).unwrap();
            for t in [target("d0/link/keep", false), target("d0/link", true)] {
                let err =
                    remove_paths(&top, [t.clone()], &opts, &AtomicBool::new(false)).unwrap_err();
                assert!(
                    matches!(err, Error::Io { op: "opendir", .. }),
                    "{t:?}: {err}"
                );
                assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"keep");
            }
            // A symlink listed as a file is unlinked, not followed.
            remove_paths(
                &top,
                [target("d0/link", false)],
                &opts,
                &AtomicBool::new(false),
            )
            .unwrap();
            assert!(top.join("d0/link").symlink_metadata().is_err());
            assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"keep");
        }
    }
}
