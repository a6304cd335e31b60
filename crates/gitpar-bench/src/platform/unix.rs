//! The Unix side of [`crate::platform`]: `wait4`, `statfs`/`statvfs`, `syncfs`, `fstatat`
//! relative to directory descriptors, `/proc`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Ended, FsId};

/// Reaps `child` with `wait4`, which returns its resource usage with its exit status: the exit
/// and the peak resident set in KiB.
pub(crate) fn wait(child: &mut std::process::Child) -> io::Result<(Ended, Option<u64>)> {
    let pid =
        libc::pid_t::try_from(child.id()).map_err(|_| io::Error::other("pid out of range"))?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for this plain C struct, which wait4() overwrites.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and usage are valid, writable locals; pid is our own unreaped child (std's Child
        // never waits for it on its own, so this is the only reaper).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let exit = if libc::WIFEXITED(status) {
        Ended::Code(libc::WEXITSTATUS(status))
    } else {
        Ended::Signal(libc::WTERMSIG(status))
    };
    // ru_maxrss is in KiB on Linux and the BSDs, in bytes on macOS.
    let maxrss = u64::try_from(usage.ru_maxrss).unwrap_or(0);
    let kib = if cfg!(target_os = "macos") {
        maxrss / 1024
    } else {
        maxrss
    };
    Ok((exit, Some(kib)))
}

/// `path` as a C string for a system call.
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Returns the kind of filesystem that `path` is on (the path must exist), from the `f_type`
/// magic number of `statfs(2)`.
#[cfg(target_os = "linux")]
pub(crate) fn fs_id(path: &Path) -> io::Result<FsId> {
    let c_path = c_path(path)?;
    // SAFETY: an all-zero statfs is a valid value for this plain C struct, which statfs() overwrites.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid NUL-terminated string and st a valid, writable statfs.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // f_type is signed on some targets; the magic numbers are 32-bit patterns.
    Ok(FsId::Magic(st.f_type as u32))
}

/// Returns the kind of filesystem that `path` is on; other systems than Linux have no `f_type`
/// magic, so every filesystem is magic 0 (`FsKind::Other`) there.
#[cfg(not(target_os = "linux"))]
pub(crate) fn fs_id(path: &Path) -> io::Result<FsId> {
    std::fs::metadata(path)?;
    Ok(FsId::Magic(0))
}

/// The bytes allocated on the filesystem of `path` after writing its dirty data back:
/// `syncfs(2)` of that filesystem, then `statvfs(2)`'s blocks less its free blocks, times the
/// fragment size (see [`crate::filesystem::used_bytes`]).
pub(crate) fn used_bytes(path: &Path) -> io::Result<u64> {
    let dir = std::fs::File::open(path)?;
    sync_file_system(&dir)?;
    let c_path = c_path(path)?;
    // SAFETY: an all-zero statvfs is a valid value for this plain C struct, which statvfs() overwrites.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid NUL-terminated string and st a valid, writable statvfs.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // the field types differ between targets
    let (blocks, free, size) = (st.f_blocks as u64, st.f_bfree as u64, st.f_frsize as u64);
    Ok(blocks.saturating_sub(free) * size)
}

/// Writes back the dirty data of the filesystem holding `file`: `syncfs(2)` on Linux, `sync(2)`
/// (every filesystem) elsewhere.
fn sync_file_system(file: &std::fs::File) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the descriptor is open for as long as `file` lives.
        if unsafe { libc::syncfs(file.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        // SAFETY: sync() takes nothing and cannot fail.
        unsafe { libc::sync() };
    }
    Ok(())
}

/// Flush the filesystem that `path` is on, so that no writeback of what a setup wrote runs
/// while commands are timed.
pub(crate) fn sync_filesystem(path: &Path) -> io::Result<()> {
    sync_file_system(&std::fs::File::open(path)?)
}

/// `path` made absolute with every link resolved (`realpath`).
pub(crate) fn canonicalize(path: &Path) -> io::Result<std::path::PathBuf> {
    std::fs::canonicalize(path)
}

/// A file or directory name of the lstat passes, made once: a C string.
pub(crate) type Name = CString;

/// `name` (a component of a `/`-separated tracked path, or such a path's directory part) as a
/// [`Name`].
pub(crate) fn name(name: &str) -> io::Result<Name> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// The work tree the passes stat: its directory, open.
pub(crate) type Root = std::fs::File;

/// Open the work tree at `path` for [`open_dir`].
pub(crate) fn open_root(path: &Path) -> io::Result<Root> {
    std::fs::File::open(path)
}

/// A directory of the work tree, open for `fstatat` of its entries.
pub(crate) type Dir = OwnedFd;

/// The directory `dir` (relative to `root`; empty for the root itself), opened for `fstatat`.
pub(crate) fn open_dir(root: &Root, dir: &Name) -> io::Result<Dir> {
    let path: &std::ffi::CStr = if dir.is_empty() { c"." } else { dir };
    // SAFETY: `path` is a C string; the descriptor returned is owned here.
    let fd = unsafe {
        libc::openat(
            root.as_raw_fd(),
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `lstat` the entry `name` of the open directory `dir` (`fstatat` without following links).
pub(crate) fn lstat_in(dir: &Dir, name: &Name) -> io::Result<()> {
    // SAFETY: an all-zero stat is a valid value of this plain C struct, which fstatat overwrites.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is a C string, `st` a stat buffer of the size fstatat writes and the
    // descriptor open for as long as `dir` lives.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the process `pid` is gone: `Some` where `/proc` tells (Linux), `None` where it does
/// not.
pub(crate) fn process_gone(pid: u32) -> Option<bool> {
    if !Path::new("/proc/self").exists() {
        return None;
    }
    Some(!Path::new(&format!("/proc/{pid}")).exists())
}
