//! The path-safe filesystem layer: every access to a work tree goes through here.
//!
//! A work tree is opened once as a [`Root`] (a directory fd). Every path below it is resolved
//! relative to that fd without following a symbolic link in any component: with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it, one `openat(O_NOFOLLOW
//! | O_DIRECTORY)` per component otherwise. The last component is then operated on with a `*at`
//! call that does not follow it either (`fstatat(AT_SYMLINK_NOFOLLOW)`, `unlinkat`, `openat(O_EXCL |
//! O_NOFOLLOW)`, ...).
//!
//! A leading component that is a symlink or not a directory means that the entry is **not
//! there**, exactly as git's `has_symlink_leading_path` decides (`entry.c`, `unlink_entry`): it
//! is never read, written or removed through the link. [`is_not_there`] recognises those errors.
//!
//! Why not `std::fs` with joined paths: `remove_file("wt/a/b/c")` removes `../outside/b/c` when
//! `a` is a symlink to `../outside`. That was a real bug; `tests/fs_lint.rs` keeps path-based
//! `std::fs` calls out of the modules that touch work trees.

pub mod lock;
pub(crate) mod remove;
pub mod remove_tree;
pub mod tune;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bstr::{BStr, BString, ByteSlice};

pub use os::{
    fstat_file, replaceable_bytes, stat_path, Fd, FileType, OwnedFd, ReplaceableBytes, Stat,
};

/// Whether two files with the same device and inode numbers in their stat data are one file.
/// Not on Windows, where the stat data are Git for Windows' and those numbers are 0 for every
/// file; git's `mark_colliding_entries` does not trust them there either (`trust_ino`).
pub const INODES_IDENTIFY_FILES: bool = os::INODES_IDENTIFY_FILES;

/// An open work tree: the directory fd every path is resolved from.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    path: PathBuf,
    /// Whether files are created by their path below the root ([`Root::creates_by_path`]),
    /// asked of the filesystem once.
    by_path: std::sync::OnceLock<bool>,
}

/// Returns true if and only if `err` says that the path is not there for git: it does not
/// exist, or a leading component is a symlink (`ELOOP` under `RESOLVE_NO_SYMLINKS`/`O_NOFOLLOW`)
/// or not a directory (`ENOTDIR`).
pub fn is_not_there(err: &io::Error) -> bool {
    os::is_not_there(err)
}

/// The system's description of `err` without Rust's ` (os error N)` suffix, as git prints it
/// (`strerror`): users and scripts match git's `Permission denied`.
pub fn strerror(err: &io::Error) -> String {
    if let Some(text) = os::posix_text(err) {
        return text.to_owned();
    }
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(pos) if text.ends_with(')') => text[..pos].to_owned(),
        _ => text,
    }
}

/// The leading directories of a repository-relative path, outermost first: `a`, `a/b` for
/// `a/b/c`.
pub fn leading_dirs(path: &BStr) -> impl Iterator<Item = &BStr> {
    path.find_iter("/").map(move |end| path[..end].as_bstr())
}

/// The leading directories ([`leading_dirs`]) of every path of `paths`, where a path in the same
/// directory as the one before it adds nothing (its leading directories are that one's). For
/// paths in index order, each directory comes out about once per run of its files, not once per
/// file: a caller collecting them into a set hashes hundreds of names, not tens of thousands.
pub fn leading_dirs_of<'p>(
    paths: impl IntoIterator<Item = &'p BStr>,
) -> impl Iterator<Item = &'p BStr> {
    let mut last: Option<&BStr> = None;
    paths.into_iter().flat_map(move |path| {
        let (dir, _) = split_path(path);
        let new = last != Some(dir);
        last = Some(dir);
        new.then(|| leading_dirs(path)).into_iter().flatten()
    })
}

/// Split a repository-relative path into its directory and file name.
pub fn split_path(path: &BStr) -> (&BStr, &BStr) {
    match last_slash(path) {
        Some(pos) => (path[..pos].as_bstr(), path[pos + 1..].as_bstr()),
        None => (b"".as_bstr(), path),
    }
}

/// Where the last `/` of `path` is. A loop over the bytes: the paths of a work tree are short,
/// and `memrchr`'s dispatch (an indirect call, and set-up for long inputs) cost more than the
/// search itself: 0.4-0.5% of a deno checkout's cycles in the writers' [`split_path`] and
/// attribute lookups, none now.
pub(crate) fn last_slash(path: &[u8]) -> Option<usize> {
    path.iter().rposition(|&b| b == b'/')
}

impl Root {
    /// Open the work tree at `path`. The path itself may contain symlinks (a work tree under a
    /// symlinked home is fine); nothing below it is followed.
    pub fn open(path: &Path) -> io::Result<Root> {
        let fd = os::open_root(path)?;
        Ok(Root {
            fd,
            path: path.to_owned(),
            by_path: std::sync::OnceLock::new(),
        })
    }

    /// Returns true if and only if [`Dirs::create_file`] creates a file by its whole path below
    /// the root rather than in its directory opened for it: on Linux (`openat2`), where the
    /// filesystem resolves a path in the kernel's own cache ([`tune::Kind::resolves_locally`]).
    /// Elsewhere each component of the path may be a round trip, which an open directory saves.
    fn creates_by_path(&self) -> bool {
        *self.by_path.get_or_init(|| {
            cfg!(target_os = "linux")
                && tune::magic(self.fd())
                    .is_some_and(|m| tune::Kind::from_magic(m, || None).resolves_locally())
        })
    }

    /// The path the work tree was opened at, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Open the directory `dir` (repository-relative, `/`-separated; empty for the root)
    /// without following a symlink in any component.
    pub fn open_dir(&self, dir: &BStr) -> io::Result<OwnedFd> {
        if dir.is_empty() {
            return os::dup(self.fd());
        }
        os::open_dir_beneath(self.fd(), dir)
    }

    /// The root directory's descriptor, for questions about the filesystem it is on
    /// ([`crate::fs::tune::Kind::of`]); never for resolving paths (that is [`Root::open_dir`]'s).
    pub fn fd(&self) -> Fd<'_> {
        os::borrow(&self.fd)
    }

    /// Returns true if and only if the root directory holds nothing but `.git` (or nothing at
    /// all): one readdir, stopped at the first other name. An update into such a work tree has
    /// nothing on disk to merge with, so it can be a full checkout (`initial.rs`).
    pub fn holds_only_git(&self) -> io::Result<bool> {
        os::holds_only(self.fd(), b".git")
    }

    /// `lstat` of `path` as git's `verify_uptodate` makes it: symlinks in leading components
    /// followed (wherever they lead), the last component not. `None` when nothing is there
    /// (`ENOENT`); an error when a leading component is no directory (`ENOTDIR`) or the stat
    /// fails otherwise. It only stats, to decide whether a safe update refuses (a tracked file
    /// behind a symlinked or replaced directory is a local change to git); everything that
    /// reads or writes goes through [`Root::open_dir`], which follows nothing.
    pub fn lstat_through_leading_links(&self, path: &BStr) -> io::Result<Option<Stat>> {
        match os::lstat_following_leading(self.fd(), path) {
            Ok(st) => Ok(Some(st)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A per-thread cache of open directories below this root.
    pub fn dirs(&self) -> Dirs<'_> {
        Dirs {
            root: self,
            current: None,
            descent: None,
            pending: None,
            beneath: self.creates_by_path().then(BString::default),
        }
    }

    /// A [`Root::dirs`] for writers that start while another thread is still making the
    /// directories of a fresh tree: a directory it finds missing is waited for (`pending`),
    /// then opened again, so that a writer ahead of that thread neither fails nor makes the
    /// directory itself (on a slow filesystem, a second maker's round trips cost more than the
    /// wait).
    pub fn dirs_waiting_for<'p>(&'p self, pending: &'p DirsPending) -> Dirs<'p> {
        Dirs {
            pending: Some(pending),
            ..self.dirs()
        }
    }

    /// A per-thread cache that keeps every directory on the path to the last one open
    /// ([`Descent`]): for readers that go through sorted paths and change nothing (the refresh's
    /// `lstat`s), entering a sibling directory is then one component's lookup, not the whole
    /// path's.
    pub fn dirs_descending(&self) -> Dirs<'_> {
        Dirs {
            root: self,
            current: None,
            descent: Some(Descent::new(self)),
            pending: None,
            beneath: None,
        }
    }
}

/// Every directory from the root down to the one last asked for, kept open: a depth-first walk
/// (the untracked cache's) opens each directory once, by one component from its parent,
/// where [`Dirs`] would resolve the whole path again for each directory it enters. Components
/// are opened without following symlinks; `.`, `..` and empty components are refused.
#[derive(Debug)]
struct Descent<'r> {
    root: &'r Root,
    /// Open directories below the root, each with its path (repository-relative, no slash).
    open: Vec<(BString, OwnedFd)>,
}

impl<'r> Descent<'r> {
    /// A descent from `root`, nothing open yet.
    fn new(root: &'r Root) -> Descent<'r> {
        Descent {
            root,
            open: Vec::new(),
        }
    }

    /// The open directory `dir` (repository-relative, no trailing slash; empty for the root).
    fn dir(&mut self, dir: &BStr) -> io::Result<Fd<'_>> {
        // Close what is not on the path to `dir`.
        while let Some((top, _)) = self.open.last() {
            let below =
                dir.len() > top.len() && dir.starts_with(top.as_slice()) && dir[top.len()] == b'/';
            if dir == top.as_bstr() || below {
                break;
            }
            self.open.pop();
        }
        let done = self.open.last().map_or(0, |(top, _)| top.len());
        if done < dir.len() {
            let rest = &dir[if done == 0 { 0 } else { done + 1 }..];
            for part in rest.split_str("/") {
                if part.is_empty() || part == b"." || part == b".." {
                    return Err(os::beneath_refused());
                }
                let fd = {
                    let parent = match self.open.last() {
                        Some((_, fd)) => os::borrow(fd),
                        None => self.root.fd(),
                    };
                    os::open_dir_at(parent, part)?
                };
                let mut path = self
                    .open
                    .last()
                    .map_or_else(BString::default, |(p, _)| p.clone());
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(part);
                self.open.push((path, fd));
            }
        }
        Ok(match self.open.last() {
            Some((top, fd)) if top.as_bstr() == dir => os::borrow(fd),
            _ => self.root.fd(),
        })
    }
}

/// Directories that another thread is still making ([`Root::dirs_waiting_for`]): finished
/// once, by that thread, when it is done (or gone), and waited for by the threads that find a
/// directory missing meanwhile.
#[derive(Debug, Default)]
pub struct DirsPending {
    done: std::sync::Mutex<bool>,
    finished: std::sync::Condvar,
    /// How many waits began: for the tests.
    waits: std::sync::atomic::AtomicUsize,
}

impl DirsPending {
    /// Every directory is made (or could not be): wake the threads waiting.
    pub fn finish(&self) {
        *self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        self.finished.notify_all();
    }

    /// Return once [`DirsPending::finish`] was called.
    pub fn wait(&self) {
        self.waits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut done = self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*done {
            done = self
                .finished
                .wait(done)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// An open handle on the directory the last path was in, reused while consecutive paths share
/// it (path lists are sorted, so they mostly do). One per thread.
///
/// Working relative to an open `a/b/c` saves the kernel the walk through `a`, `b` and `c` for
/// every file, and means the file lands in the directory that was checked: a symlink put in a
/// component's place is refused, never followed.
#[derive(Debug)]
pub struct Dirs<'r> {
    root: &'r Root,
    current: Option<(BString, OwnedFd)>,
    /// Set by [`Root::dirs_descending`]: the whole path kept open instead of `current`.
    descent: Option<Descent<'r>>,
    /// Set by [`Root::dirs_waiting_for`].
    pending: Option<&'r DirsPending>,
    /// The path of the file [`Dirs::create_file`] creates, while files are created by their
    /// path below the root; `None` once the kernel refused that (no `openat2`), and in a
    /// descent, which keeps its directories open anyway.
    beneath: Option<BString>,
}

impl<'r> Dirs<'r> {
    /// The open directory `dir` (repository-relative; empty for the root).
    pub fn dir(&mut self, dir: &BStr) -> io::Result<Fd<'_>> {
        match self.descent {
            Some(ref mut descent) => descent.dir(dir),
            None => self.current_dir(dir),
        }
    }

    /// [`Dirs::dir`] without a descent: the one directory last asked for is kept open.
    fn current_dir(&mut self, dir: &BStr) -> io::Result<Fd<'_>> {
        let hit = self.current.as_ref().is_some_and(|(d, _)| *d == dir);
        if !hit {
            self.current = None;
            let fd = self.once_made(|| self.root.open_dir(dir))?;
            self.current = Some((dir.to_owned(), fd));
        }
        Ok(os::borrow(&self.current.as_ref().expect("set above").1))
    }

    /// `attempt`, and once more after the directories being made are ([`DirsPending`]) if it
    /// found something missing meanwhile.
    fn once_made<T>(&self, attempt: impl Fn() -> io::Result<T>) -> io::Result<T> {
        match (attempt(), self.pending) {
            (Err(err), Some(pending)) if err.kind() == io::ErrorKind::NotFound => {
                pending.wait();
                attempt()
            }
            (done, _) => done,
        }
    }

    /// Create the file `name` of the directory `dir` (it must not exist) with `data` in it, as
    /// [`create_file_at`] does in the open directory: by its whole path below the root where the
    /// kernel resolves that without following a symlink (`openat2`), so that no directory is
    /// opened (and closed) for the files in it; in the open directory otherwise.
    pub fn create_file(
        &mut self,
        dir: &BStr,
        name: &BStr,
        data: &[u8],
        executable: bool,
    ) -> Result<Stat, CreateError> {
        if let Some(mut path) = self.beneath.take() {
            path.clear();
            if !dir.is_empty() {
                path.extend_from_slice(dir);
                path.push(b'/');
            }
            path.extend_from_slice(name);
            let root = self.root.fd();
            let created = self.once_made(|| os::create_exclusive_beneath(root, &path, executable));
            // `Ok(None)`: no `openat2` here; this and every later file go by their directory.
            if let Some(created) = created.transpose() {
                self.beneath = Some(path);
                let fd = created.map_err(CreateError::Create)?;
                return fill_created(fd, |file| file.write_all(data)).map_err(|err| {
                    if let Ok(fd) = self.dir(dir) {
                        let _ = os::unlink_at(fd, name);
                    }
                    CreateError::Write(err)
                });
            }
        }
        let fd = self.dir(dir).map_err(CreateError::Create)?;
        create_file_at(fd, name, data, executable)
    }

    /// Forget the cached directory: the caller removed or replaced directories, so a cached fd
    /// may name one that is no longer in the tree. Also before another `Dirs` removes a
    /// directory this one may hold: on Windows, where a volume lacks POSIX deletion (FAT,
    /// exFAT, Wine), a directory stays in its parent, delete-pending, while any handle names it,
    /// so that its parent cannot be removed and its name cannot be taken again.
    pub fn forget(&mut self) {
        self.current = None;
        if let Some(descent) = self.descent.as_mut() {
            descent.open.clear();
        }
    }

    /// The parent directory of `path` and its last component.
    fn parent<'p>(&mut self, path: &'p BStr) -> io::Result<(Fd<'_>, &'p BStr)> {
        let (dir, name) = split_path(path);
        Ok((self.dir(dir)?, name))
    }

    /// `lstat` of `path`: `None` when it is not there (see [`is_not_there`]).
    pub fn lstat(&mut self, path: &BStr) -> io::Result<Option<Stat>> {
        let result = self
            .parent(path)
            .and_then(|(fd, name)| os::lstat_at(fd, name));
        match result {
            Ok(st) => Ok(Some(st)),
            Err(err) if is_not_there(&err) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The file type of `path`, `None` when it is not there.
    pub fn file_type(&mut self, path: &BStr) -> io::Result<Option<FileType>> {
        Ok(self
            .lstat(path)?
            .map(|st| FileType::from_raw_mode(st.st_mode)))
    }

    /// Returns true if and only if every leading directory of `path` is a real directory (not a
    /// symlink, not a file): git's `!has_symlink_or_noent_leading_path`.
    pub fn has_dirs_only_path(&mut self, path: &BStr) -> bool {
        let (dir, _) = split_path(path);
        self.dir(dir).is_ok()
    }

    /// Remove the non-directory at `path`. Returns false when it was not there (including
    /// behind a leading symlink, which is never looked through).
    pub fn unlink(&mut self, path: &BStr) -> io::Result<bool> {
        let result = self
            .parent(path)
            .and_then(|(fd, name)| os::unlink_at(fd, name));
        match result {
            Ok(()) => Ok(true),
            Err(err) if is_not_there(&err) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Remove the empty directory at `path`. Returns false when it was not there.
    pub fn rmdir(&mut self, path: &BStr) -> io::Result<bool> {
        self.forget();
        let result = self
            .parent(path)
            .and_then(|(fd, name)| os::rmdir_at(fd, name));
        match result {
            Ok(()) => Ok(true),
            Err(err) if is_not_there(&err) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Remove whatever is at `path`: a file or symlink is unlinked, a directory is removed with
    /// everything in it (symlinks inside are removed, never followed). Returns false when
    /// nothing was there.
    pub fn remove_all(&mut self, path: &BStr) -> io::Result<bool> {
        self.remove_subtree(path).map_err(|e| e.source)
    }

    /// Remove whatever is at `path` as git's `remove_subtree` does for a directory in the
    /// place of an entry it writes: depth first, and on the first step that fails, the error
    /// names that step and the inner path it failed on (git dies with exactly that). A file or
    /// symlink at `path` is unlinked. Returns false when nothing was there.
    pub fn remove_subtree(&mut self, path: &BStr) -> Result<bool, SubtreeError> {
        let fail = |op, source| SubtreeError {
            op,
            path: path.to_owned(),
            source,
        };
        match self.file_type(path).map_err(|e| fail("lstat", e))? {
            None => Ok(false),
            Some(FileType::Directory) => {
                self.forget();
                let fd = self.root.open_dir(path).map_err(|e| fail("opendir", e))?;
                let mut inner = path.to_owned();
                remove_contents_naming(&fd, &mut inner)?;
                drop(fd);
                self.rmdir(path).map_err(|e| fail("rmdir", e))
            }
            Some(_) => self.unlink(path).map_err(|e| fail("unlink", e)),
        }
    }

    /// Create the directory `path` (its parent must exist). An existing real directory is fine;
    /// anything else in its place is an error (`EEXIST`), unless `replace` is set, in which case
    /// a file or symlink there is unlinked first (git's `create_directories` under `force`).
    pub fn mkdir(&mut self, path: &BStr, replace: bool) -> io::Result<()> {
        let (fd, name) = self.parent(path)?;
        let name = <&[u8]>::from(name);
        match os::mkdir_at(fd, name) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                let st = os::lstat_at(fd, name)?;
                if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
                    return Ok(());
                }
                if !replace {
                    return Err(err);
                }
                os::unlink_at(fd, name)?;
                os::mkdir_at(fd, name)
            }
            Err(err) => Err(err),
        }
    }

    /// Create `path` and its missing leading directories, as [`Dirs::mkdir`] does for each.
    pub fn mkdir_all(&mut self, path: &BStr, replace: bool) -> io::Result<()> {
        let mut end = 0;
        loop {
            let next = path[end..].find_byte(b'/').map(|p| end + p);
            let prefix = path[..next.unwrap_or(path.len())].as_bstr();
            if self.root.open_dir(prefix).is_err() {
                self.mkdir(prefix, replace)?;
            }
            match next {
                Some(p) => end = p + 1,
                None => return Ok(()),
            }
        }
    }

    /// Create a symbolic link at `path` pointing to `target`; return the link's own stat data.
    pub fn symlink(&mut self, target: &[u8], path: &BStr) -> io::Result<Stat> {
        let (fd, name) = self.parent(path)?;
        os::symlink_at(target, fd, name)?;
        os::lstat_at(fd, name)
    }

    /// The target of the symbolic link at `path`.
    pub fn read_link(&mut self, path: &BStr) -> io::Result<Vec<u8>> {
        let (fd, name) = self.parent(path)?;
        os::read_link_at(fd, name)
    }

    /// Move the entry at `path` out of the work tree to `dest`, an absolute path outside it (in
    /// a git directory): git's `absorb_git_dir_into_superproject` moving a submodule's `.git`
    /// directory under `.git/modules`. `path` is resolved without following symlinks.
    pub fn rename_out(&mut self, path: &BStr, dest: &Path) -> io::Result<()> {
        self.forget();
        let (fd, name) = self.parent(path)?;
        os::rename_out(fd, name, dest)
    }

    /// Replace whatever file or symlink is at `path` by a regular file holding `data` (a
    /// submodule's gitfile); the parent directory must exist.
    pub fn write_file(&mut self, path: &BStr, data: &[u8]) -> io::Result<()> {
        self.unlink(path)?;
        let (fd, name) = self.parent(path)?;
        create_file_at(fd, name, data, false)
            .map(|_| ())
            .map_err(|e| io::Error::new(e.io().kind(), e.io().to_string()))
    }

    /// Open the regular file at `path` for reading, refusing a symlink in its place.
    pub fn open_read(&mut self, path: &BStr) -> io::Result<File> {
        let (fd, name) = self.parent(path)?;
        Ok(File::from(os::open_read_at(fd, name, false)?))
    }

    /// The names in the directory `path`, each with whether it is a real directory. Empty when
    /// the directory is not there.
    pub fn read_dir(&mut self, path: &BStr) -> io::Result<Vec<(BString, bool)>> {
        match self.entries(path) {
            Ok(entries) => Ok(entries
                .into_iter()
                .map(|(name, kind)| (name, kind == FileType::Directory))
                .collect()),
            Err(err) if is_not_there(&err) => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }

    /// The names in the directory `path` with their file types (as `lstat` sees them: a symlink
    /// is a symlink), unsorted. Unlike [`Dirs::read_dir`], a directory that is not there is an
    /// error, so that a caller walking a tree can tell an unreadable directory from an empty one.
    pub fn entries(&mut self, path: &BStr) -> io::Result<Vec<(BString, FileType)>> {
        if self.descent.is_some() {
            // `Dir::read_from` reads its own opening of the directory: the kept fd's offset
            // does not move.
            return os::read_dir(self.dir(path)?);
        }
        let fd = self.root.open_dir(path)?;
        os::read_dir(os::borrow(&fd))
    }

    /// The stat data of the directory `dir` itself (the root's for an empty `dir`), `None` when
    /// it is not there.
    pub fn stat_dir(&mut self, dir: &BStr) -> io::Result<Option<Stat>> {
        if dir.is_empty() {
            return Ok(Some(os::fstat(self.root.fd())?));
        }
        self.lstat(dir)
    }

    /// Open the regular file at `path` for reading and return it with its stat data; `None`
    /// when it is not there or not a regular file. Neither a symlink in its place is followed
    /// nor does a fifo in its place block the open (`O_NONBLOCK`, checked on the open file).
    pub fn open_regular(&mut self, path: &BStr) -> io::Result<Option<(File, Stat)>> {
        let (fd, name) = self.parent(path)?;
        let fd = match os::open_read_at(fd, name, true) {
            Ok(fd) => fd,
            Err(err) => {
                return if is_not_there(&err) {
                    Ok(None)
                } else {
                    Err(err)
                };
            }
        };
        let st = os::fstat(os::borrow(&fd))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Ok(None);
        }
        Ok(Some((File::from(fd), st)))
    }
}

/// Why [`Dirs::remove_subtree`] stopped: the step (`unlink`, `rmdir`, `opendir`, `lstat`) and
/// the path it failed on, in git's words (`cannot unlink '<path>': <reason>`).
#[derive(Debug, thiserror::Error)]
#[error("cannot {op} '{path}': {}", strerror(.source))]
pub struct SubtreeError {
    /// The step that failed.
    pub op: &'static str,
    /// The path it failed on: the directory itself or something inside it.
    pub path: BString,
    /// The system error.
    #[source]
    pub source: io::Error,
}

/// Remove everything in `dir`, depth first (symlinks inside are removed, never followed),
/// naming, on failure, the path below the work tree (`path`, extended while descending) that a
/// step failed on.
fn remove_contents_naming(dir: &OwnedFd, path: &mut BString) -> Result<(), SubtreeError> {
    let len = path.len();
    let at = |op, path: &BString, source: io::Error| SubtreeError {
        op,
        path: path.clone(),
        source,
    };
    let dir = os::borrow(dir);
    let names = os::read_dir(dir).map_err(|e| at("opendir", path, e))?;
    for (name, kind) in names {
        path.truncate(len);
        path.push(b'/');
        path.extend_from_slice(&name);
        let kind = if kind == FileType::Unknown {
            let st = os::lstat_at(dir, &name).map_err(|e| at("lstat", path, e))?;
            FileType::from_raw_mode(st.st_mode)
        } else {
            kind
        };
        if kind == FileType::Directory {
            let sub = os::open_dir_at(dir, &name).map_err(|e| at("opendir", path, e))?;
            remove_contents_naming(&sub, path)?;
            os::rmdir_at(dir, &name).map_err(|e| at("rmdir", path, e))?;
        } else {
            os::unlink_at(dir, &name).map_err(|e| at("unlink", path, e))?;
        }
    }
    path.truncate(len);
    Ok(())
}

/// Why [`create_file_at`] failed: git words the two steps differently ("unable to create file",
/// "unable to write file").
#[derive(Debug)]
pub enum CreateError {
    /// The tracked file being replaced could not be unlinked; it is still there, unchanged.
    Unlink(io::Error),
    /// The file could not be created (it exists, a permission, a full directory, ...).
    Create(io::Error),
    /// The file was created but writing or stat-ing it failed; the partial file was unlinked.
    Write(io::Error),
}

impl CreateError {
    /// The underlying system error.
    pub fn io(&self) -> &io::Error {
        match self {
            CreateError::Unlink(e) | CreateError::Create(e) | CreateError::Write(e) => e,
        }
    }
}

/// Create `name` in the open directory `dir` (it must not exist), write `data`, and return the
/// stat data of the open file. The mode is 0777 for executables and 0666 otherwise, before the
/// umask, as git's `entry.c`. A write that fails (ENOSPC, EIO) unlinks the partial file, as git's
/// `write_entry` does, so a failed entry is absent rather than truncated.
pub fn create_file_at(
    dir: Fd<'_>,
    name: &BStr,
    data: &[u8],
    executable: bool,
) -> Result<Stat, CreateError> {
    create_file_with(dir, name, executable, |file| file.write_all(data))
}

/// Like [`create_file_at`], with the content written by `fill` (an external filter's output,
/// streamed in small pieces instead of held whole in memory). An error from `fill` unlinks the
/// partial file too, so a filter that dies half-way leaves nothing half-written.
pub fn create_file_with(
    dir: Fd<'_>,
    name: &BStr,
    executable: bool,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<Stat, CreateError> {
    let fd = os::create_exclusive(dir, name, executable).map_err(CreateError::Create)?;
    fill_created(fd, fill).map_err(|err| {
        let _ = os::unlink_at(dir, name);
        CreateError::Write(err)
    })
}

/// Fill the file just created (`fd`) and return its stat data; the file is closed either way,
/// and on an error the caller unlinks it.
fn fill_created(fd: OwnedFd, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<Stat> {
    let mut file = File::from(fd);
    fill(&mut file).and_then(|()| os::fstat_file(&file))
}

/// Why [`clone_file_at`] did not clone: the caller writes the file from the object database
/// instead, except after [`CloneError::Create`], which is what [`create_file_at`] would have met.
#[derive(Debug)]
pub enum CloneError {
    /// The filesystem cannot share blocks between these two files (EXDEV: another mount;
    /// EOPNOTSUPP, EINVAL, ENOTTY: no reflink support, as on ext4 and tmpfs). Nothing was left
    /// at the destination.
    Unsupported(io::Error),
    /// The donor's file is not the one the caller expected (gone, not a regular file, its stat
    /// data refused by the caller's check, or changed while it was cloned). Nothing was left at
    /// the destination.
    Changed,
    /// The destination could not be created (it exists, a permission, a full directory, ...).
    Create(io::Error),
    /// Any other failure of the clone or of a stat; nothing was left at the destination.
    Io(io::Error),
}

/// Create `name` in the open directory `dir` (it must not exist) as a copy-on-write clone of
/// the file `donor_name` in the open directory `donor_dir`, and return the new file's stat
/// data (its own inode, times and size: what the index records for it).
///
/// This is the one place where a platform's cloning call plugs in: Linux's `FICLONE` ioctl
/// (XFS with reflink, btrfs, bcachefs, ...) here; macOS's `clonefileat` and ReFS's
/// `FSCTL_DUPLICATE_EXTENTS_TO_FILE` would take the same arguments and the same checks.
///
/// The donor is opened without following a symlink and checked on the open file: it must be a
/// regular file that `expect` accepts (the caller compares its stat data with the donor's
/// index). After the clone, the donor is stat-ed again: a file whose size, mtime, ctime or
/// inode changed meanwhile may have been cloned half old and half new, so the clone is
/// unlinked and [`CloneError::Changed`] returned. The mode is 0777 for executables and 0666
/// otherwise, before the umask, as [`create_file_at`]'s: the donor's mode is not copied.
pub fn clone_file_at(
    donor_dir: Fd<'_>,
    donor_name: &BStr,
    expect: impl FnOnce(&Stat) -> bool,
    dir: Fd<'_>,
    name: &BStr,
    executable: bool,
) -> Result<Stat, CloneError> {
    let donor = match os::open_read_at(donor_dir, donor_name, true) {
        Ok(fd) => fd,
        Err(err) if is_not_there(&err) => return Err(CloneError::Changed),
        Err(err) => return Err(CloneError::Io(err)),
    };
    let donor = os::borrow(&donor);
    let before = os::fstat(donor).map_err(CloneError::Io)?;
    if FileType::from_raw_mode(before.st_mode) != FileType::RegularFile || !expect(&before) {
        return Err(CloneError::Changed);
    }
    let fd = os::create_exclusive(dir, name, executable).map_err(CloneError::Create)?;
    let cloned = match os::clone_into(os::borrow(&fd), donor) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(unsupported)) => Err(CloneError::Unsupported(unsupported)),
        Err(err) => Err(CloneError::Io(err)),
    }
    .and_then(|()| {
        let after = os::fstat(donor).map_err(CloneError::Io)?;
        let same = |a: &Stat, b: &Stat| {
            (a.st_size, a.st_ino, a.st_dev) == (b.st_size, b.st_ino, b.st_dev)
                && (a.st_mtime, a.st_mtime_nsec) == (b.st_mtime, b.st_mtime_nsec)
                && (a.st_ctime, a.st_ctime_nsec) == (b.st_ctime, b.st_ctime_nsec)
        };
        if !same(&before, &after) {
            return Err(CloneError::Changed);
        }
        os::fstat(os::borrow(&fd)).map_err(CloneError::Io)
    });
    if cloned.is_err() {
        drop(fd);
        let _ = os::unlink_at(dir, name);
    }
    cloned
}

/// Whether the filesystem clones `donor_name` of the open directory `donor_dir` into the
/// directory `dir`: the donor file (not followed if a symlink) cloned into an unnamed file of
/// `dir` (`O_TMPFILE`), which is gone when closed, so nothing is named in `dir`. `Err` is what
/// the clone met (EXDEV between mounts, EOPNOTSUPP without reflink, ...).
pub fn clone_probe(donor_dir: Fd<'_>, donor_name: &BStr, dir: Fd<'_>) -> io::Result<()> {
    let donor = os::open_read_at(donor_dir, donor_name, true)?;
    os::clone_probe(os::borrow(&donor), dir)
}

/// An identity of the filesystem the open directory `dir` is on: two directories with the same
/// one are on one filesystem, between whose files blocks may be shared.
pub fn volume_id(dir: Fd<'_>) -> io::Result<u64> {
    os::volume_id(dir)
}

/// Remove the non-directory `name` from the open directory `dir` (a writer replacing a tracked
/// file in a directory it already holds open).
pub fn unlink_in(dir: Fd<'_>, name: &BStr) -> io::Result<()> {
    os::unlink_at(dir, name)
}

/// Returns true if and only if `err` means that something already occupies the path, which a
/// worker treats as a collision (two entries folding to one name, or a directory in the way)
/// rather than as a failure.
pub fn is_collision(err: &io::Error) -> bool {
    os::is_collision(err)
}

/// The stat data of an `lstat`/`fstat` result in the index's format: the 32-bit fields are
/// truncated, not saturated, to match git's `fill_stat_cache_info` bit for bit.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn index_stat(st: &Stat) -> gix::index::entry::Stat {
    use gix::index::entry::stat::Time;
    gix::index::entry::Stat {
        mtime: Time {
            secs: st.st_mtime as u32,
            nsecs: st.st_mtime_nsec as u32,
        },
        ctime: Time {
            secs: st.st_ctime as u32,
            nsecs: st.st_ctime_nsec as u32,
        },
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    }
}

/// What other modules' tests share, on every system.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    /// Run real git in `repo` (no system or user configuration), panic unless it succeeds, and
    /// return its standard output: other modules' tests build their fixtures with it.
    pub(crate) fn git_in(repo: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .current_dir(repo)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }
}

/// The layer's tests on Unix: symlinks, fifos, loop-mounted filesystems that clone.
#[cfg(all(test, unix))]
pub(crate) mod tests {
    use super::*;
    use rustix::fd::AsFd;
    use rustix::fs::{Mode, OFlags};

    /// A filesystem image made by `mkfs` in a temporary directory and loop-mounted there,
    /// unmounted on drop (also on panic); `None`, said loudly, when this process may not mount
    /// (not root). `scripts/setup` installs xfsprogs and btrfs-progs. Other modules' tests use
    /// it too (`carry.rs`: cloning on reflink XFS).
    pub(crate) struct LoopMount {
        _dir: tempfile::TempDir,
        /// The mount point.
        pub(crate) mnt: PathBuf,
    }

    impl LoopMount {
        pub(crate) fn new(mkfs: &[&str]) -> Option<LoopMount> {
            use std::process::Command;
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                eprintln!("\n!!!!!!!! SKIPPED: a loop mount needs root !!!!!!!!\n");
                return None;
            }
            let dir = tempfile::tempdir().expect("temporary directory");
            let image = dir.path().join("fs.img");
            let mnt = dir.path().join("mnt");
            std::fs::create_dir(&mnt).expect("mount point");
            File::create(&image)
                .and_then(|f| f.set_len(320 << 20))
                .expect("sparse image");
            let made = Command::new(mkfs[0])
                .args(&mkfs[1..])
                .arg(&image)
                .output()
                .unwrap_or_else(|e| panic!("{} (scripts/setup installs it): {e}", mkfs[0]));
            assert!(
                made.status.success(),
                "{mkfs:?}: {}",
                String::from_utf8_lossy(&made.stderr)
            );
            let mounted = Command::new("mount")
                .args(["-o", "loop"])
                .arg(&image)
                .arg(&mnt)
                .output()
                .expect("run mount");
            assert!(
                mounted.status.success(),
                "mount -o loop: {}",
                String::from_utf8_lossy(&mounted.stderr)
            );
            Some(LoopMount { _dir: dir, mnt })
        }
    }

    impl Drop for LoopMount {
        fn drop(&mut self) {
            use std::process::Command;
            let ok = Command::new("umount")
                .arg(&self.mnt)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
            }
        }
    }

    fn open_dir(path: &Path) -> OwnedFd {
        rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .expect("open directory")
    }

    /// On a filesystem that clones: the clone has the donor's bytes in an inode of its own,
    /// our mode rather than the donor's, and writing to it leaves the donor as it was; a donor
    /// the caller's check refuses, a symlink or a missing donor are `Changed`, with nothing
    /// left behind; an existing destination is the creation's error.
    fn clones_and_checks_on(mnt: &Path) {
        let (donor, new) = (mnt.join("donor"), mnt.join("new"));
        std::fs::create_dir_all(&donor).unwrap();
        std::fs::create_dir_all(&new).unwrap();
        let content: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
        std::fs::write(donor.join("big"), &content).unwrap();
        std::os::unix::fs::symlink("big", donor.join("link")).unwrap();
        let (d, n) = (open_dir(&donor), open_dir(&new));
        let size = content.len() as i64;
        let st = clone_file_at(
            d.as_fd(),
            b("big"),
            |s| s.st_size == size,
            n.as_fd(),
            b("big"),
            true,
        )
        .expect("clone");
        assert_eq!(std::fs::read(new.join("big")).unwrap(), content);
        assert_ne!(
            st.st_ino,
            rustix::fs::stat(donor.join("big")).unwrap().st_ino
        );
        assert_eq!(st.st_mode & 0o111, 0o111 & !umask(), "our executable mode");
        std::fs::OpenOptions::new()
            .write(true)
            .open(new.join("big"))
            .and_then(|mut f| f.write_all(b"changed"))
            .unwrap();
        assert_eq!(
            std::fs::read(donor.join("big")).unwrap(),
            content,
            "donor untouched"
        );

        let refused = clone_file_at(
            d.as_fd(),
            b("big"),
            |_| false,
            n.as_fd(),
            b("refused"),
            false,
        );
        assert!(matches!(refused, Err(CloneError::Changed)), "{refused:?}");
        let link = clone_file_at(d.as_fd(), b("link"), |_| true, n.as_fd(), b("link"), false);
        assert!(matches!(link, Err(CloneError::Changed)), "{link:?}");
        let gone = clone_file_at(d.as_fd(), b("gone"), |_| true, n.as_fd(), b("gone"), false);
        assert!(matches!(gone, Err(CloneError::Changed)), "{gone:?}");
        for name in ["refused", "link", "gone"] {
            assert!(!new.join(name).exists(), "{name} left behind");
        }
        let taken = clone_file_at(d.as_fd(), b("big"), |_| true, n.as_fd(), b("big"), false);
        assert!(
            matches!(&taken, Err(CloneError::Create(e)) if e.raw_os_error() == Some(libc::EEXIST)),
            "{taken:?}"
        );
    }

    fn umask() -> u32 {
        let old = rustix::process::umask(Mode::from_raw_mode(0o022));
        rustix::process::umask(old);
        old.bits()
    }

    #[test]
    fn clone_file_at_clones_on_reflink_xfs() {
        if let Some(fs) = LoopMount::new(&["mkfs.xfs", "-q", "-f", "-m", "reflink=1"]) {
            clones_and_checks_on(&fs.mnt);
        }
    }

    #[test]
    fn clone_file_at_clones_on_btrfs() {
        if let Some(fs) = LoopMount::new(&["mkfs.btrfs", "-q", "-f"]) {
            clones_and_checks_on(&fs.mnt);
        }
    }

    /// Where nothing can be cloned (the temporary directory's filesystem, tmpfs, a donor on
    /// another mount) the answer is `Unsupported` and no file is left at the destination.
    #[test]
    fn clone_file_at_is_unsupported_without_leaving_a_file() {
        let xfs = LoopMount::new(&["mkfs.xfs", "-q", "-f", "-m", "reflink=1"]);
        let mut places = vec![tempfile::tempdir().unwrap()];
        if Path::new("/dev/shm").is_dir() {
            places.push(tempfile::tempdir_in("/dev/shm").unwrap());
        }
        for place in &places {
            let donors = match &xfs {
                // A donor on another mount: EXDEV.
                Some(fs) => vec![place.path().to_owned(), fs.mnt.clone()],
                None => vec![place.path().to_owned()],
            };
            for donor in donors {
                std::fs::write(donor.join("file"), b"content").unwrap();
                let target = place.path().join("target");
                std::fs::create_dir_all(&target).unwrap();
                let (d, n) = (open_dir(&donor), open_dir(&target));
                let got =
                    clone_file_at(d.as_fd(), b("file"), |_| true, n.as_fd(), b("file"), false);
                assert!(
                    matches!(got, Err(CloneError::Unsupported(_))),
                    "{donor:?}: {got:?}"
                );
                assert!(!target.join("file").exists(), "{donor:?}: a file was left");
            }
        }
    }

    fn b(s: &str) -> &BStr {
        s.as_bytes().as_bstr()
    }

    /// A temporary directory with a work tree `wt` and a directory `outside/b` beside it, and in
    /// the work tree a symlink `a` to `../outside`: the work tree and `outside`.
    fn linked_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("b")).unwrap();
        std::fs::create_dir(&wt).unwrap();
        std::os::unix::fs::symlink("../outside", wt.join("a")).unwrap();
        (tmp, wt, outside)
    }

    #[test]
    fn a_leading_symlink_hides_what_is_behind_it() {
        let (_tmp, wt, outside) = linked_outside();
        std::fs::write(outside.join("b/c"), "precious").unwrap();
        let root = Root::open(&wt).unwrap();
        let mut dirs = root.dirs();
        assert!(dirs.lstat(b("a/b/c")).unwrap().is_none());
        assert!(!dirs.unlink(b("a/b/c")).unwrap());
        assert!(!dirs.rmdir(b("a/b")).unwrap());
        assert!(!dirs.has_dirs_only_path(b("a/b/c")));
        assert!(dirs.open_read(b("a/b/c")).is_err());
        assert!(dirs.read_dir(b("a/b")).unwrap().is_empty());
        // The link itself is there, and removing it removes only the link.
        assert!(dirs.lstat(b("a")).unwrap().is_some());
        assert!(dirs.remove_all(b("a")).unwrap());
        assert_eq!(std::fs::read(outside.join("b/c")).unwrap(), b"precious");
    }

    /// `open_regular` opens only a regular file: a symlink (to a file outside) and a fifo are
    /// `None`, the fifo without blocking on a writer that never comes; `entries` sees them as
    /// what they are.
    #[test]
    fn open_regular_refuses_symlinks_and_fifos_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        std::fs::write(tmp.path().join("outside"), "outside").unwrap();
        std::fs::write(wt.join("file"), "inside").unwrap();
        std::os::unix::fs::symlink("../outside", wt.join("link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            wt.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let root = Root::open(&wt).unwrap();
        let mut dirs = root.dirs();
        let (mut file, st) = dirs
            .open_regular(b("file"))
            .unwrap()
            .expect("a regular file");
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!((text.as_str(), st.st_size), ("inside", 6));
        for name in ["link", "fifo", "gone"] {
            assert!(dirs.open_regular(b(name)).unwrap().is_none(), "{name}");
        }
        let mut entries = dirs.entries(b("")).unwrap();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let kinds: Vec<(&str, FileType)> = entries
            .iter()
            .map(|(n, k)| (n.to_str().unwrap(), *k))
            .collect();
        assert_eq!(
            kinds,
            [
                ("fifo", FileType::Fifo),
                ("file", FileType::RegularFile),
                ("link", FileType::Symlink)
            ]
        );
    }

    #[test]
    fn dirs_waiting_for_pending_directories_open_them_once_made() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        let root = Root::open(&wt).unwrap();
        let pending = DirsPending::default();
        let attempted = std::sync::atomic::AtomicBool::new(false);
        let opened = std::thread::scope(|scope| {
            let maker = scope.spawn(|| {
                // Made only once the opener below has found the directory missing (and waits,
                // or, were it not to wait, has given up).
                use std::sync::atomic::Ordering::SeqCst;
                while pending.waits.load(SeqCst) == 0 && !attempted.load(SeqCst) {
                    std::thread::yield_now();
                }
                root.dirs().mkdir_all(b("a/b"), false).unwrap();
                pending.finish();
            });
            let opened = root.dirs_waiting_for(&pending).dir(b("a/b")).is_ok();
            attempted.store(true, std::sync::atomic::Ordering::SeqCst);
            maker.join().unwrap();
            opened
        });
        assert!(opened, "the directory was not waited for");
        // Once finished, a directory still missing is an error, as for a plain `Dirs`.
        let mut dirs = root.dirs_waiting_for(&pending);
        assert!(dirs.dir(b("c")).is_err());
    }

    /// [`Dirs::create_file`] creates in the tree only, whether by the whole path below the root
    /// (tmpfs, ext4: `/tmp` here) or in the open directory: a leading symlink hides what is
    /// behind it and nothing is written there, a file or symlink at the name is a collision, a
    /// missing directory is an error unless it is being made, when it is waited for.
    #[test]
    fn create_file_refuses_links_and_waits_for_pending_directories() {
        let (_tmp, wt, outside) = linked_outside();
        std::fs::create_dir(wt.join("d")).unwrap();
        std::os::unix::fs::symlink("../../outside/b/t", wt.join("d/l")).unwrap();
        let root = Root::open(&wt).unwrap();
        let mut dirs = root.dirs();
        let err = dirs.create_file(b("a/b"), b("c"), b"x", false).unwrap_err();
        assert!(is_not_there(err.io()), "{err:?}");
        let st = dirs.create_file(b("d"), b("e"), b"hello", true).unwrap();
        assert_eq!((st.st_size, st.st_mode & 0o100), (5, 0o100));
        assert_eq!(std::fs::read(wt.join("d/e")).unwrap(), b"hello");
        let err = dirs
            .create_file(b("d"), b("e"), b"again", false)
            .unwrap_err();
        assert!(is_collision(err.io()), "{err:?}");
        let err = dirs
            .create_file(b("d"), b("l"), b"through", false)
            .unwrap_err();
        assert!(is_collision(err.io()), "{err:?}");
        assert_eq!(std::fs::read_dir(outside.join("b")).unwrap().count(), 0);
        assert!(dirs.create_file(b("m"), b("f"), b"", false).is_err());
        let pending = DirsPending::default();
        std::thread::scope(|scope| {
            let maker = scope.spawn(|| {
                use std::sync::atomic::Ordering::SeqCst;
                while pending.waits.load(SeqCst) == 0 {
                    std::thread::yield_now();
                }
                root.dirs().mkdir_all(b("m/n"), false).unwrap();
                pending.finish();
            });
            let mut waiting = root.dirs_waiting_for(&pending);
            waiting
                .create_file(b("m/n"), b("f"), b"made", false)
                .unwrap();
            maker.join().unwrap();
        });
        assert_eq!(std::fs::read(wt.join("m/n/f")).unwrap(), b"made");
    }

    #[test]
    fn mkdir_all_replaces_a_symlink_only_when_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let wt = tmp.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        std::os::unix::fs::symlink(&outside, wt.join("a")).unwrap();
        let root = Root::open(&wt).unwrap();
        let mut dirs = root.dirs();
        assert!(dirs.mkdir_all(b("a/b"), false).is_err());
        dirs.mkdir_all(b("a/b"), true).unwrap();
        assert!(wt.join("a/b").is_dir());
        assert!(!wt.join("a").is_symlink());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn remove_all_does_not_follow_symlinks_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        let wt = tmp.path().join("wt");
        std::fs::create_dir_all(wt.join("d/e")).unwrap();
        std::fs::write(wt.join("d/e/f"), "y").unwrap();
        std::os::unix::fs::symlink(&outside, wt.join("d/link")).unwrap();
        let root = Root::open(&wt).unwrap();
        assert!(root.dirs().remove_all(b("d")).unwrap());
        assert!(!wt.join("d").exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"x");
    }

    /// Every leading directory of every path comes out (a set of them is `leading_dirs`'s over
    /// all paths), and a run of paths in one directory gives its directories once.
    #[test]
    fn leading_dirs_of_paths_skips_only_repeated_directories() {
        let paths = [
            "top", "a/b/1", "a/b/2", "a/c", "a/b/3", "x/y/z/w", "x/y/z/v", "u",
        ];
        let got: Vec<&BStr> = leading_dirs_of(paths.iter().map(|p| b(p))).collect();
        assert_eq!(got, ["a", "a/b", "a", "a", "a/b", "x", "x/y", "x/y/z"]);
        let all: std::collections::BTreeSet<&BStr> =
            paths.iter().flat_map(|p| leading_dirs(b(p))).collect();
        assert_eq!(
            got.into_iter().collect::<std::collections::BTreeSet<_>>(),
            all
        );
    }

    #[test]
    fn create_file_at_refuses_existing_paths_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut dirs = root.dirs();
        let st = create_file_at(dirs.dir(b("")).unwrap(), b("f"), b"hello", false).unwrap();
        assert_eq!(st.st_size, 5);
        let err = create_file_at(dirs.dir(b("")).unwrap(), b("f"), b"again", false).unwrap_err();
        assert!(is_collision(err.io()));
        std::os::unix::fs::symlink(dir.path().join("f"), dir.path().join("l")).unwrap();
        let err = create_file_at(dirs.dir(b("")).unwrap(), b("l"), b"through", false).unwrap_err();
        assert!(is_collision(err.io()));
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"hello");
    }
}
