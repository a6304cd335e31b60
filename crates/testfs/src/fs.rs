//! The filesystem: FUSE requests served from the backing directory by path, with latency,
//! case folding and faults applied on the way.
//!
//! Inode numbers are ours: one per backing path (relative to the backing root), handed out on
//! first sight and dropped from the name table when the path is removed, so a file created again
//! at a removed path gets a new number (as git's collision detection, which compares inode
//! numbers, expects of a real filesystem). With case folding, every spelling of a name resolves
//! to the one path on the backing disk, hence to one inode number.

use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bstr::ByteSlice;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, FopenFlags, Generation, INodeNo, OpenFlags, RenameFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::{Faults, Options};

/// What a mount has served: for tests that check a fault really fired, and for curiosity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests served (each paid the latency once).
    pub operations: u64,
    /// Bytes written since the mount or the last change of faults.
    pub bytes_written: u64,
    /// Operations failed on purpose (`ENOSPC`, `EIO`, `EACCES`).
    pub faults_injected: u64,
    /// The most requests served at the same moment: above 1 when concurrent callers overlap
    /// their latency, which is what the latency is for.
    pub peak_in_flight: u64,
}

/// Compiled [`Faults`].
#[derive(Default)]
struct FaultSet {
    enospc_after: Option<u64>,
    eio: Vec<Vec<u8>>,
    eacces: Vec<Vec<u8>>,
}

impl FaultSet {
    fn new(faults: &Faults) -> Self {
        FaultSet {
            enospc_after: faults.enospc_after,
            eio: faults.eio.iter().map(|p| p.as_bytes().to_vec()).collect(),
            eacces: faults
                .eacces
                .iter()
                .map(|p| p.as_bytes().to_vec())
                .collect(),
        }
    }

    fn matches(patterns: &[Vec<u8>], rel: &Path) -> bool {
        let path = rel.as_os_str().as_bytes();
        let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        patterns.iter().any(|p| {
            let subject = if p.contains(&b'/') { path } else { base };
            gix_glob::wildmatch(
                p.as_bstr(),
                subject.as_bstr(),
                gix_glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
            )
        })
    }
}

/// The state shared by the serving threads and the [`crate::Mount`] handle.
pub(crate) struct Shared {
    backing: PathBuf,
    latency: Duration,
    /// Slept by a `mkdir` on top of `latency` ([`crate::Options::mkdir_latency`]).
    mkdir_latency: Duration,
    case_insensitive: bool,
    faults: RwLock<FaultSet>,
    names: Mutex<Names>,
    /// With case folding, "is there a name equal to this one?" and the creation that follows
    /// must be one step, or two threads create `a` and `A` side by side.
    namespace: Mutex<()>,
    files: Mutex<HashMap<u64, Arc<File>>>,
    dirs: Mutex<HashMap<u64, DirEntries>>,
    next_handle: AtomicU64,
    operations: AtomicU64,
    bytes_written: AtomicU64,
    faults_injected: AtomicU64,
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
}

/// A directory's entries as `opendir` read them, served to the `readdir`s that follow.
type DirEntries = Arc<Vec<(OsString, FileType)>>;

/// Inode numbers ⇄ paths relative to the backing root (the root is the empty path, inode 1).
struct Names {
    by_ino: HashMap<u64, PathBuf>,
    by_path: HashMap<PathBuf, u64>,
    next: u64,
}

impl Shared {
    pub(crate) fn new(backing: PathBuf, options: &Options) -> Self {
        let mut names = Names {
            by_ino: HashMap::new(),
            by_path: HashMap::new(),
            next: 2,
        };
        names.by_ino.insert(1, PathBuf::new());
        names.by_path.insert(PathBuf::new(), 1);
        Shared {
            backing,
            latency: options.latency,
            mkdir_latency: options.mkdir_latency,
            case_insensitive: options.case_insensitive,
            faults: RwLock::new(FaultSet::new(&options.faults)),
            names: Mutex::new(names),
            namespace: Mutex::new(()),
            files: Mutex::new(HashMap::new()),
            dirs: Mutex::new(HashMap::new()),
            next_handle: AtomicU64::new(1),
            operations: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            faults_injected: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            peak_in_flight: AtomicU64::new(0),
        }
    }

    pub(crate) fn set_faults(&self, faults: &Faults) {
        *self.faults.write().unwrap_or_else(|e| e.into_inner()) = FaultSet::new(faults);
        self.bytes_written.store(0, Ordering::SeqCst);
    }

    pub(crate) fn stats(&self) -> Stats {
        Stats {
            operations: self.operations.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            faults_injected: self.faults_injected.load(Ordering::Relaxed),
            peak_in_flight: self.peak_in_flight.load(Ordering::Relaxed),
        }
    }
}

/// The [`fuser::Filesystem`] over [`Shared`].
pub(crate) struct TestFs {
    s: Arc<Shared>,
}

/// One request being served (see [`TestFs::enter`]).
struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

type Result<T> = std::result::Result<T, Errno>;

fn errno(e: io::Error) -> Errno {
    Errno::from(e)
}

/// Lower-cased name for case-folded comparisons; names that are not UTF-8 compare as bytes.
fn fold(name: &OsStr) -> Vec<u8> {
    match name.to_str() {
        Some(s) => s.to_lowercase().into_bytes(),
        None => name.as_bytes().to_vec(),
    }
}

fn cstring(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| Errno::EINVAL)
}

fn time(t: io::Result<SystemTime>) -> SystemTime {
    t.unwrap_or(UNIX_EPOCH)
}

fn kind_of(meta: &Metadata) -> FileType {
    FileType::from_std(meta.file_type()).unwrap_or(FileType::RegularFile)
}

impl TestFs {
    pub(crate) fn new(s: Arc<Shared>) -> Self {
        TestFs { s }
    }

    /// Every request pays the latency once, on its own serving thread; the guard counts it in
    /// flight until the reply is sent.
    fn enter(&self) -> InFlight<'_> {
        self.s.operations.fetch_add(1, Ordering::Relaxed);
        let now = self.s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.s.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        if !self.s.latency.is_zero() {
            std::thread::sleep(self.s.latency);
        }
        InFlight(&self.s.in_flight)
    }

    fn ttl(&self) -> Duration {
        // With case folding the kernel must ask again for every spelling: a cached `a` would
        // outlive a rename of `A`.
        if self.s.case_insensitive {
            Duration::ZERO
        } else {
            Duration::from_secs(1)
        }
    }

    fn rel(&self, ino: INodeNo) -> Result<PathBuf> {
        let names = self.s.names.lock().unwrap_or_else(|e| e.into_inner());
        names.by_ino.get(&ino.0).cloned().ok_or(Errno::ENOENT)
    }

    fn real(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.s.backing.clone()
        } else {
            self.s.backing.join(rel)
        }
    }

    fn ino_of(&self, rel: &Path) -> u64 {
        let mut names = self.s.names.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&ino) = names.by_path.get(rel) {
            return ino;
        }
        let ino = names.next;
        names.next += 1;
        names.by_path.insert(rel.to_path_buf(), ino);
        names.by_ino.insert(ino, rel.to_path_buf());
        ino
    }

    /// The path is gone: its next incarnation gets a new inode number.
    fn forget_path(&self, rel: &Path) {
        let mut names = self.s.names.lock().unwrap_or_else(|e| e.into_inner());
        names.by_path.remove(rel);
    }

    fn renamed(&self, from: &Path, to: &Path) {
        let mut names = self.s.names.lock().unwrap_or_else(|e| e.into_inner());
        names.by_path.remove(to);
        let moved: Vec<(PathBuf, u64)> = names
            .by_path
            .iter()
            .filter(|(p, _)| p.starts_with(from))
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        for (old, ino) in moved {
            // (`join("")` would add a trailing slash: the renamed path itself is `to`.)
            let rest = old.strip_prefix(from).unwrap_or(Path::new(""));
            let new = if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            };
            names.by_path.remove(&old);
            names.by_path.insert(new.clone(), ino);
            names.by_ino.insert(ino, new);
        }
    }

    /// The backing path that `name` in `parent` names: itself when it exists, else (folding
    /// case) the existing entry equal to it ignoring case, else itself (a name to create).
    fn child(&self, parent: &Path, name: &OsStr) -> Result<(PathBuf, bool)> {
        if name.as_bytes().contains(&b'/') || name == "." || name == ".." {
            return Err(Errno::EINVAL);
        }
        let rel = parent.join(name);
        match std::fs::symlink_metadata(self.real(&rel)) {
            Ok(_) => return Ok((rel, true)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(errno(e)),
        }
        if self.s.case_insensitive {
            let want = fold(name);
            let dir = std::fs::read_dir(self.real(parent)).map_err(errno)?;
            for entry in dir {
                let entry = entry.map_err(errno)?;
                if fold(&entry.file_name()) == want {
                    return Ok((parent.join(entry.file_name()), true));
                }
            }
        }
        Ok((rel, false))
    }

    fn fault(&self, rel: &Path) -> Result<()> {
        let faults = self.s.faults.read().unwrap_or_else(|e| e.into_inner());
        let hit = if FaultSet::matches(&faults.eio, rel) {
            Some(Errno::EIO)
        } else if FaultSet::matches(&faults.eacces, rel) {
            Some(Errno::EACCES)
        } else {
            None
        };
        match hit {
            Some(e) => {
                self.s.faults_injected.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
            None => Ok(()),
        }
    }

    fn attr(&self, rel: &Path) -> Result<FileAttr> {
        let meta = std::fs::symlink_metadata(self.real(rel)).map_err(errno)?;
        Ok(self.attr_of(rel, &meta))
    }

    fn attr_of(&self, rel: &Path, meta: &Metadata) -> FileAttr {
        FileAttr {
            ino: INodeNo(self.ino_of(rel)),
            size: meta.size(),
            blocks: meta.blocks(),
            atime: time(meta.accessed()),
            mtime: time(meta.modified()),
            ctime: UNIX_EPOCH
                + Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec().max(0) as u32),
            crtime: UNIX_EPOCH,
            kind: kind_of(meta),
            perm: (meta.mode() & 0o7777) as u16,
            nlink: meta.nlink() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            rdev: meta.rdev() as u32,
            blksize: meta.blksize() as u32,
            flags: 0,
        }
    }

    fn handle(&self, file: File) -> FileHandle {
        let fh = self.s.next_handle.fetch_add(1, Ordering::Relaxed);
        self.s
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(fh, Arc::new(file));
        FileHandle(fh)
    }

    fn file(&self, fh: FileHandle) -> Result<Arc<File>> {
        self.s
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&fh.0)
            .cloned()
            .ok_or(Errno::EBADF)
    }

    fn namespace(&self) -> Option<std::sync::MutexGuard<'_, ()>> {
        self.s
            .case_insensitive
            .then(|| self.s.namespace.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn do_lookup(&self, parent: INodeNo, name: &OsStr) -> Result<FileAttr> {
        let parent = self.rel(parent)?;
        let (rel, exists) = self.child(&parent, name)?;
        if !exists {
            return Err(Errno::ENOENT);
        }
        self.attr(&rel)
    }

    // The arguments of FUSE's setattr that a passthrough honours.
    #[allow(clippy::too_many_arguments)]
    fn do_setattr(
        &self,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        fh: Option<FileHandle>,
    ) -> Result<FileAttr> {
        let rel = self.rel(ino)?;
        self.fault(&rel)?;
        let real = self.real(&rel);
        let c = cstring(&real)?;
        if let Some(mode) = mode {
            std::fs::set_permissions(
                &real,
                std::os::unix::fs::PermissionsExt::from_mode(mode & 0o7777),
            )
            .map_err(errno)?;
        }
        if uid.is_some() || gid.is_some() {
            let u = uid.unwrap_or(u32::MAX);
            let g = gid.unwrap_or(u32::MAX);
            // SAFETY: valid path; -1 (u32::MAX) leaves an id unchanged.
            if unsafe { libc::lchown(c.as_ptr(), u, g) } != 0 {
                return Err(errno(io::Error::last_os_error()));
            }
        }
        if let Some(size) = size {
            match fh.map(|fh| self.file(fh)) {
                Some(Ok(file)) => file.set_len(size).map_err(errno)?,
                _ => OpenOptions::new()
                    .write(true)
                    .open(&real)
                    .and_then(|f| f.set_len(size))
                    .map_err(errno)?,
            }
        }
        if atime.is_some() || mtime.is_some() {
            let ts = |t: Option<TimeOrNow>| match t {
                None => libc::timespec {
                    tv_sec: 0,
                    tv_nsec: libc::UTIME_OMIT,
                },
                Some(TimeOrNow::Now) => libc::timespec {
                    tv_sec: 0,
                    tv_nsec: libc::UTIME_NOW,
                },
                Some(TimeOrNow::SpecificTime(t)) => {
                    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
                    libc::timespec {
                        tv_sec: d.as_secs() as libc::time_t,
                        tv_nsec: d.subsec_nanos() as libc::c_long,
                    }
                }
            };
            let times = [ts(atime), ts(mtime)];
            // SAFETY: valid path and a two-element array.
            let rc = unsafe {
                libc::utimensat(
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    times.as_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            if rc != 0 {
                return Err(errno(io::Error::last_os_error()));
            }
        }
        self.attr(&rel)
    }

    /// Resolves `name` for a creation: `Ok(Err(existing))` when it (or, folding case, an equal
    /// name) exists.
    fn new_child(
        &self,
        parent: INodeNo,
        name: &OsStr,
    ) -> Result<std::result::Result<PathBuf, PathBuf>> {
        let parent = self.rel(parent)?;
        let (rel, exists) = self.child(&parent, name)?;
        Ok(if exists { Err(rel) } else { Ok(rel) })
    }

    fn do_mkdir(&self, parent: INodeNo, name: &OsStr, mode: u32, umask: u32) -> Result<FileAttr> {
        let _ns = self.namespace();
        let rel = self.new_child(parent, name)?.map_err(|_| Errno::EEXIST)?;
        self.fault(&rel)?;
        std::fs::DirBuilder::new()
            .mode(mode & !umask & 0o7777)
            .create(self.real(&rel))
            .map_err(errno)?;
        self.attr(&rel)
    }

    fn do_mknod(
        &self,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
    ) -> Result<FileAttr> {
        let _ns = self.namespace();
        let rel = self.new_child(parent, name)?.map_err(|_| Errno::EEXIST)?;
        self.fault(&rel)?;
        let c = cstring(&self.real(&rel))?;
        // SAFETY: valid path.
        if unsafe {
            libc::mknod(
                c.as_ptr(),
                (mode & !umask) as libc::mode_t,
                rdev as libc::dev_t,
            )
        } != 0
        {
            return Err(errno(io::Error::last_os_error()));
        }
        self.attr(&rel)
    }

    fn do_symlink(&self, parent: INodeNo, name: &OsStr, target: &Path) -> Result<FileAttr> {
        let _ns = self.namespace();
        let rel = self.new_child(parent, name)?.map_err(|_| Errno::EEXIST)?;
        self.fault(&rel)?;
        std::os::unix::fs::symlink(target, self.real(&rel)).map_err(errno)?;
        self.attr(&rel)
    }

    fn do_link(&self, ino: INodeNo, newparent: INodeNo, newname: &OsStr) -> Result<FileAttr> {
        let _ns = self.namespace();
        let from = self.rel(ino)?;
        let rel = self
            .new_child(newparent, newname)?
            .map_err(|_| Errno::EEXIST)?;
        self.fault(&from)?;
        self.fault(&rel)?;
        std::fs::hard_link(self.real(&from), self.real(&rel)).map_err(errno)?;
        self.attr(&rel)
    }

    fn do_remove(&self, parent: INodeNo, name: &OsStr, dir: bool) -> Result<()> {
        let _ns = self.namespace();
        let rel = self.new_child(parent, name)?.err().ok_or(Errno::ENOENT)?;
        self.fault(&rel)?;
        let real = self.real(&rel);
        if dir {
            std::fs::remove_dir(real).map_err(errno)?;
        } else {
            std::fs::remove_file(real).map_err(errno)?;
        }
        self.forget_path(&rel);
        Ok(())
    }

    fn do_rename(
        &self,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
    ) -> Result<()> {
        let _ns = self.namespace();
        let from = self.new_child(parent, name)?.err().ok_or(Errno::ENOENT)?;
        let newparent = self.rel(newparent)?;
        let to = match self.child(&newparent, newname)? {
            // A change of case only (`a` → `A` folding case): the new spelling.
            (existing, true) if existing == from => newparent.join(newname),
            (rel, _) => rel,
        };
        self.fault(&from)?;
        self.fault(&to)?;
        let (cf, ct) = (cstring(&self.real(&from))?, cstring(&self.real(&to))?);
        // SAFETY: valid paths.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                cf.as_ptr(),
                libc::AT_FDCWD,
                ct.as_ptr(),
                flags.bits(),
            )
        };
        if rc != 0 {
            return Err(errno(io::Error::last_os_error()));
        }
        self.renamed(&from, &to);
        Ok(())
    }

    fn open_options(flags: i32) -> OpenOptions {
        let mut options = OpenOptions::new();
        match flags & libc::O_ACCMODE {
            libc::O_WRONLY => options.write(true),
            libc::O_RDWR => options.read(true).write(true),
            _ => options.read(true),
        };
        options.custom_flags(
            flags & !(libc::O_ACCMODE | libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY),
        );
        options
    }

    fn do_open(&self, ino: INodeNo, flags: i32) -> Result<FileHandle> {
        let rel = self.rel(ino)?;
        self.fault(&rel)?;
        let file = Self::open_options(flags)
            .open(self.real(&rel))
            .map_err(errno)?;
        Ok(self.handle(file))
    }

    fn do_create(
        &self,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
    ) -> Result<(FileAttr, FileHandle)> {
        let _ns = self.namespace();
        let rel = match self.new_child(parent, name)? {
            Ok(rel) => {
                self.fault(&rel)?;
                let mut options = Self::open_options(flags);
                options
                    .create_new(true)
                    .write(true)
                    .mode(mode & !umask & 0o7777);
                let file = options.open(self.real(&rel)).map_err(errno)?;
                return Ok((self.attr(&rel)?, self.handle(file)));
            }
            // Another spelling of an existing name: the existing file, as NTFS and APFS do.
            Err(_) if flags & libc::O_EXCL != 0 => return Err(Errno::EEXIST),
            Err(existing) => existing,
        };
        self.fault(&rel)?;
        let file = Self::open_options(flags)
            .open(self.real(&rel))
            .map_err(errno)?;
        Ok((self.attr(&rel)?, self.handle(file)))
    }

    fn do_write(&self, ino: INodeNo, fh: FileHandle, offset: u64, data: &[u8]) -> Result<u32> {
        let rel = self.rel(ino)?;
        self.fault(&rel)?;
        let file = self.file(fh)?;
        let mut len = data.len();
        let limit = self
            .s
            .faults
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .enospc_after;
        if let Some(limit) = limit {
            // Reserve the bytes first so concurrent writers cannot overshoot together.
            let before = self.s.bytes_written.fetch_add(len as u64, Ordering::SeqCst);
            let room = limit.saturating_sub(before);
            if room == 0 {
                self.s.bytes_written.fetch_sub(len as u64, Ordering::SeqCst);
                self.s.faults_injected.fetch_add(1, Ordering::Relaxed);
                return Err(Errno::ENOSPC);
            }
            if (room as usize) < len {
                self.s
                    .bytes_written
                    .fetch_sub((len - room as usize) as u64, Ordering::SeqCst);
                len = room as usize;
            }
        } else {
            self.s
                .bytes_written
                .fetch_add(len as u64, Ordering::Relaxed);
        }
        file.write_all_at(&data[..len], offset).map_err(errno)?;
        Ok(len as u32)
    }

    fn do_readdir(&self, ino: INodeNo) -> Result<FileHandle> {
        let rel = self.rel(ino)?;
        let mut entries = vec![
            (OsString::from("."), FileType::Directory),
            (OsString::from(".."), FileType::Directory),
        ];
        for entry in std::fs::read_dir(self.real(&rel)).map_err(errno)? {
            let entry = entry.map_err(errno)?;
            let kind = entry
                .file_type()
                .ok()
                .and_then(FileType::from_std)
                .unwrap_or(FileType::RegularFile);
            entries.push((entry.file_name(), kind));
        }
        let fh = self.s.next_handle.fetch_add(1, Ordering::Relaxed);
        self.s
            .dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(fh, Arc::new(entries));
        Ok(FileHandle(fh))
    }
}

fn reply_entry(reply: ReplyEntry, ttl: Duration, r: Result<FileAttr>) {
    match r {
        Ok(attr) => reply.entry(&ttl, &attr, Generation(0)),
        Err(e) => reply.error(e),
    }
}

fn reply_empty(reply: ReplyEmpty, r: Result<()>) {
    match r {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(e),
    }
}

impl fuser::Filesystem for TestFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let _op = self.enter();
        reply_entry(reply, self.ttl(), self.do_lookup(parent, name));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let _op = self.enter();
        match self.rel(ino).and_then(|rel| self.attr(&rel)) {
            Ok(attr) => reply.attr(&self.ttl(), &attr),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let _op = self.enter();
        match self.do_setattr(ino, mode, uid, gid, size, atime, mtime, fh) {
            Ok(attr) => reply.attr(&self.ttl(), &attr),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let _op = self.enter();
        match self
            .rel(ino)
            .and_then(|rel| std::fs::read_link(self.real(&rel)).map_err(errno))
        {
            Ok(target) => reply.data(target.into_os_string().into_vec().as_slice()),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let _op = self.enter();
        reply_entry(
            reply,
            self.ttl(),
            self.do_mknod(parent, name, mode, umask, rdev),
        );
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let _op = self.enter();
        if !self.s.mkdir_latency.is_zero() {
            std::thread::sleep(self.s.mkdir_latency);
        }
        reply_entry(reply, self.ttl(), self.do_mkdir(parent, name, mode, umask));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let _op = self.enter();
        reply_empty(reply, self.do_remove(parent, name, false));
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let _op = self.enter();
        reply_empty(reply, self.do_remove(parent, name, true));
    }

    fn symlink(
        &self,
        _req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let _op = self.enter();
        reply_entry(
            reply,
            self.ttl(),
            self.do_symlink(parent, link_name, target),
        );
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        reply_empty(
            reply,
            self.do_rename(parent, name, newparent, newname, flags),
        );
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let _op = self.enter();
        reply_entry(reply, self.ttl(), self.do_link(ino, newparent, newname));
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let _op = self.enter();
        match self.do_open(ino, flags.0) {
            Ok(fh) => reply.opened(fh, FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<fuser::LockOwner>,
        reply: ReplyData,
    ) {
        let _op = self.enter();
        let result = self.file(fh).and_then(|file| {
            let mut buf = vec![0; size as usize];
            let mut filled = 0;
            while filled < buf.len() {
                match file.read_at(&mut buf[filled..], offset + filled as u64) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(errno(e)),
                }
            }
            buf.truncate(filled);
            Ok(buf)
        });
        match result {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<fuser::LockOwner>,
        reply: ReplyWrite,
    ) {
        let _op = self.enter();
        match self.do_write(ino, fh, offset, data) {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: fuser::LockOwner,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<fuser::LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        self.s
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        let r = self.file(fh).and_then(|f| {
            if datasync {
                f.sync_data()
            } else {
                f.sync_all()
            }
            .map_err(errno)
        });
        reply_empty(reply, r);
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let _op = self.enter();
        match self.do_readdir(ino) {
            Ok(fh) => reply.opened(fh, FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let _op = self.enter();
        let entries = self
            .s
            .dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&fh.0)
            .cloned();
        let (Some(entries), Ok(rel)) = (entries, self.rel(ino)) else {
            reply.error(Errno::EBADF);
            return;
        };
        for (i, (name, kind)) in entries.iter().enumerate().skip(offset as usize) {
            let child_ino = match name.as_bytes() {
                b"." => self.ino_of(&rel),
                b".." => self.ino_of(rel.parent().unwrap_or(Path::new(""))),
                _ => self.ino_of(&rel.join(name)),
            };
            if reply.add(INodeNo(child_ino), (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        self.s
            .dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&fh.0);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let _op = self.enter();
        let Ok(c) = cstring(&self.s.backing) else {
            reply.error(Errno::EINVAL);
            return;
        };
        // SAFETY: a zeroed statvfs is a valid out-parameter; `c` is a valid path.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
            reply.error(errno(io::Error::last_os_error()));
            return;
        }
        reply.statfs(
            st.f_blocks,
            st.f_bfree,
            st.f_bavail,
            st.f_files,
            st.f_ffree,
            st.f_bsize as u32,
            st.f_namemax as u32,
            st.f_frsize as u32,
        );
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        let _op = self.enter();
        reply_empty(reply, self.rel(ino).map(|_| ()));
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let _op = self.enter();
        match self.do_create(parent, name, mode, umask, flags) {
            Ok((attr, fh)) => {
                reply.created(&self.ttl(), &attr, Generation(0), fh, FopenFlags::empty())
            }
            Err(e) => reply.error(e),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let _op = self.enter();
        let r = self.file(fh).and_then(|f| {
            use std::os::fd::AsRawFd;
            // SAFETY: a valid open descriptor.
            let rc = unsafe {
                libc::fallocate(
                    f.as_raw_fd(),
                    mode,
                    offset as libc::off_t,
                    length as libc::off_t,
                )
            };
            if rc == 0 {
                Ok(())
            } else {
                Err(errno(io::Error::last_os_error()))
            }
        });
        reply_empty(reply, r);
    }
}
