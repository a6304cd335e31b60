//! The path-safe layer's system calls on Unix: every one relative to an open directory and
//! following no symlink (`openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has
//! it, `openat(O_NOFOLLOW)` one component at a time otherwise, `*at` calls with
//! `AT_SYMLINK_NOFOLLOW`). `windows.rs` has the same functions over `NtCreateFile`; the rest of
//! the layer (`mod.rs`) is written once against either.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use rustix::fd::AsFd;
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};

pub use rustix::fd::{BorrowedFd as Fd, OwnedFd};
pub use rustix::fs::{FileType, Stat};

/// Device and inode numbers tell files apart (see [`super::INODES_IDENTIFY_FILES`]).
pub(super) const INODES_IDENTIFY_FILES: bool = true;

/// The system's own text is the C library's already ([`super::strerror`]).
pub(super) fn posix_text(_err: &io::Error) -> Option<&'static str> {
    None
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The error for a path that would leave the work tree (`..`, an empty or `.` component).
pub(super) fn beneath_refused() -> io::Error {
    io::Error::from_raw_os_error(libc::EXDEV)
}

/// Returns true if and only if `err` says that the path is not there for git (see
/// [`super::is_not_there`]).
pub(super) fn is_not_there(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::NotFound
        || matches!(err.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP))
}

/// Returns true if and only if `err` means that something already occupies the path (see
/// [`super::is_collision`]).
pub(super) fn is_collision(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EEXIST | libc::EISDIR | libc::ELOOP)
    )
}

/// Open the directory at `path` (symlinks in it followed: the work tree's own location may be
/// anywhere).
pub(super) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// A second descriptor of the same open directory.
pub(super) fn dup(fd: Fd<'_>) -> io::Result<OwnedFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(fd, 0)?)
}

/// Open the directory `dir` below `root` (a non-empty, `/`-separated relative path) without
/// following a symlink in any component.
pub(super) fn open_dir_beneath(root: Fd<'_>, dir: &BStr) -> io::Result<OwnedFd> {
    match rustix::fs::openat2(
        root,
        <&[u8]>::from(dir),
        DIR_FLAGS,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    ) {
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
            let mut fd = dup(root)?;
            for part in dir.split_str("/") {
                if part.is_empty() || part == b"." || part == b".." {
                    return Err(beneath_refused());
                }
                fd = open_dir_at(fd.as_fd(), part)?;
            }
            Ok(fd)
        }
        // RESOLVE_BENEATH refuses `..` with EXDEV; planned paths never hold it.
        other => Ok(other?),
    }
}

/// Open the directory `name` (one component) of `dir`, not following a symlink there.
pub(super) fn open_dir_at(dir: Fd<'_>, name: &[u8]) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())?)
}

/// `lstat` of `name` in `dir`.
pub(super) fn lstat_at(dir: Fd<'_>, name: &[u8]) -> io::Result<Stat> {
    Ok(rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?)
}

/// `lstat` of the relative `path` below `root`, symlinks in leading components followed.
pub(super) fn lstat_following_leading(root: Fd<'_>, path: &[u8]) -> io::Result<Stat> {
    Ok(rustix::fs::statat(root, path, AtFlags::SYMLINK_NOFOLLOW)?)
}

/// The stat data of an open file or directory.
pub fn fstat(fd: Fd<'_>) -> io::Result<Stat> {
    Ok(rustix::fs::fstat(fd)?)
}

/// The stat data of an open file.
pub fn fstat_file(file: &std::fs::File) -> io::Result<Stat> {
    Ok(rustix::fs::fstat(file)?)
}

/// The stat data of the file at `path`, following symlinks: for files outside work trees (the
/// index, ignore files in the git directory), never for work-tree paths.
pub fn stat_path(path: &Path) -> io::Result<Stat> {
    Ok(rustix::fs::stat(path)?)
}

/// Remove the non-directory `name` of `dir`.
pub(super) fn unlink_at(dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
}

/// Remove the empty directory `name` of `dir`.
pub(super) fn rmdir_at(dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// Create the directory `name` in `dir` (mode 0777 before the umask, as git's `mkdir`).
pub(super) fn mkdir_at(dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    Ok(rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777))?)
}

/// The names in the open directory `dir` with their types as `lstat` sees them (`.` and `..`
/// left out), in `readdir` order. A type the directory entry does not carry is `lstat`-ed; one
/// gone since the listing is [`FileType::Unknown`].
pub(super) fn read_dir(dir: Fd<'_>) -> io::Result<Vec<(BString, FileType)>> {
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => lstat_at(dir, name)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
            kind => kind,
        };
        out.push((BString::from(name), kind));
    }
    Ok(out)
}

/// Returns true if and only if the open directory holds no name but `.git` (and `.`, `..`),
/// stopping at the first other.
pub(super) fn holds_only(dir: Fd<'_>, only: &[u8]) -> io::Result<bool> {
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." && name != only {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Create a symbolic link `name` in `dir` pointing to `target`.
pub(super) fn symlink_at(target: &[u8], dir: Fd<'_>, name: &[u8]) -> io::Result<()> {
    Ok(rustix::fs::symlinkat(OsStr::from_bytes(target), dir, name)?)
}

/// The target of the symbolic link `name` in `dir`.
pub(super) fn read_link_at(dir: Fd<'_>, name: &[u8]) -> io::Result<Vec<u8>> {
    Ok(rustix::fs::readlinkat(dir, name, Vec::new())?.into_bytes())
}

/// Move `name` of `dir` to the absolute path `dest`.
pub(super) fn rename_out(dir: Fd<'_>, name: &[u8], dest: &Path) -> io::Result<()> {
    Ok(rustix::fs::renameat(dir, name, rustix::fs::CWD, dest)?)
}

/// Open `name` of `dir` for reading, not following a symlink in its place; `nonblock` keeps a
/// fifo there from blocking the open (the caller checks the open file's type).
pub(super) fn open_read_at(dir: Fd<'_>, name: &[u8], nonblock: bool) -> io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if nonblock {
        flags |= OFlags::NONBLOCK;
    }
    Ok(rustix::fs::openat(dir, name, flags, Mode::empty())?)
}

/// Create `name` in `dir` for writing, where nothing may be yet (a symlink is not followed),
/// with git's mode for a new file: 0777 for executables and 0666 otherwise, before the umask.
pub(super) fn create_exclusive(dir: Fd<'_>, name: &[u8], executable: bool) -> io::Result<OwnedFd> {
    let mode = Mode::from_raw_mode(if executable { 0o777 } else { 0o666 });
    Ok(rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        mode,
    )?)
}

/// [`create_exclusive`] of the relative `path` below `root`, its leading directories resolved
/// beneath `root` without following a symlink (`openat2`), so that no directory need be open;
/// `None` where the kernel has no `openat2` (or a sandbox refuses it).
pub(super) fn create_exclusive_beneath(
    root: Fd<'_>,
    path: &[u8],
    executable: bool,
) -> io::Result<Option<OwnedFd>> {
    let mode = Mode::from_raw_mode(if executable { 0o777 } else { 0o666 });
    match rustix::fs::openat2(
        root,
        path,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        mode,
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    ) {
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => Ok(None),
        other => Ok(Some(other?)),
    }
}

/// Share the blocks of the open file `src` with the new, empty open file `dst` (`FICLONE`).
/// `Ok(Err(_))` when the filesystem cannot (another mount, no reflink support): the caller
/// writes the file instead.
pub(super) fn clone_into(dst: Fd<'_>, src: Fd<'_>) -> io::Result<Result<(), io::Error>> {
    match rustix::fs::ioctl_ficlone(dst, src) {
        Ok(()) => Ok(Ok(())),
        Err(e) => {
            let err = io::Error::from(e);
            match err.raw_os_error() {
                Some(
                    libc::EXDEV | libc::EOPNOTSUPP | libc::EINVAL | libc::ENOTTY | libc::ENOSYS,
                ) => Ok(Err(err)),
                _ => Err(err),
            }
        }
    }
}

/// Clone the open file `donor` into an unnamed file of `dir` (`O_TMPFILE`), gone when closed:
/// whether the filesystem clones between these two directories, naming nothing.
pub(super) fn clone_probe(donor: Fd<'_>, dir: Fd<'_>) -> io::Result<()> {
    let unnamed = rustix::fs::openat(
        dir,
        ".",
        OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    rustix::fs::ioctl_ficlone(&unnamed, donor)?;
    Ok(())
}

/// The kind of the filesystem `fd` is on: its magic number, and for a local disk the
/// rotational flag.
pub(super) fn kind_of_volume(fd: Fd<'_>) -> super::tune::Kind {
    match fs_magic(fd) {
        Some(magic) => super::tune::Kind::from_magic(magic, || rotational(fd)),
        None => super::tune::Kind::Unknown,
    }
}

/// The `f_type` magic number of the filesystem of `fd` (`fstatfs`), as the 32 bits the
/// filesystems define (`f_type` is signed on some architectures).
pub(super) fn fs_magic(fd: Fd<'_>) -> Option<u64> {
    let st = rustix::fs::fstatfs(fd).ok()?;
    #[allow(clippy::unnecessary_cast, clippy::cast_sign_loss)]
    Some((st.f_type as i64 as u64) & 0xffff_ffff)
}

/// The block device's `queue/rotational` for the filesystem of `fd`: `/sys/dev/block/MAJ:MIN`
/// is the device or, for a partition, a directory inside it (whose parent has the queue).
fn rotational(fd: Fd<'_>) -> Option<bool> {
    let st = rustix::fs::fstat(fd).ok()?;
    let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    if major == 0 {
        return None; // an anonymous device (btrfs subvolumes, network): no queue to read
    }
    let dev = std::path::PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let dev = dev.canonicalize().ok()?;
    [
        dev.join("queue/rotational"),
        dev.join("../queue/rotational"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok())
    .map(|s| s.trim() == "1")
}

/// An identity of the filesystem `fd` is on: two directories with the same one may share
/// blocks (`st_dev`).
pub(super) fn volume_id(fd: Fd<'_>) -> io::Result<u64> {
    Ok(rustix::fs::fstat(fd)?.st_dev)
}

/// The bytes of a file that is replaced by renaming a new one over it (an index), never changed
/// in place: a read-only mapping, nothing copied.
pub type ReplaceableBytes = memmap2::Mmap;

/// Map `file` read-only (see [`ReplaceableBytes`]); it must not be empty.
pub fn replaceable_bytes(file: &std::fs::File) -> io::Result<ReplaceableBytes> {
    // SAFETY: the file is not changed while mapped: git and git-par replace such a file by
    // renaming a new one over it.
    unsafe { memmap2::MmapOptions::new().map(file) }
}

/// Borrow an owned descriptor.
pub(super) fn borrow(fd: &OwnedFd) -> Fd<'_> {
    fd.as_fd()
}
