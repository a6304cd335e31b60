//! The Windows side of [`crate::platform`]: the peak working set of a finished process, the
//! volume's file system name and free space, plain `lstat`s by path, `OpenProcess`.

use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{CloseHandle, GetLastError, ERROR_INVALID_PARAMETER};

use super::{Ended, FsId};

/// Waits for `child`: its exit code (there are no signals) and its peak working set in KiB
/// (`GetProcessMemoryInfo` on the finished process, whose handle `child` still holds), the
/// closest Windows has to the peak RSS; `None` when it cannot be read (under Wine, which reports
/// nothing of a process that ended).
pub(crate) fn wait(child: &mut std::process::Child) -> io::Result<(Ended, Option<u64>)> {
    use windows_sys::Win32::System::ProcessStatus::{
        GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    let status = child.wait()?;
    // SAFETY: an all-zero PROCESS_MEMORY_COUNTERS is a valid value of this plain C struct.
    let mut counters: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    counters.cb = size;
    // SAFETY: the handle is the child's, open while `child` lives; `counters` is writable.
    let ok = unsafe { GetProcessMemoryInfo(child.as_raw_handle(), &mut counters, size) } != 0;
    // Wine reports zeros for a process that ended: that is no reading.
    let peak = Some(counters.PeakWorkingSetSize as u64 / 1024).filter(|&kib| ok && kib > 0);
    Ok((Ended::Code(status.code().unwrap_or(-1)), peak))
}

/// `path` as a NUL-terminated UTF-16 string for a Win32 call.
fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}

/// The root of the volume `path` is on (`C:\`, a mount point's folder, `\\host\share\`), as
/// `GetVolumeInformationW` and `GetDiskFreeSpaceExW` take it.
fn volume_root(path: &Path) -> io::Result<Vec<u16>> {
    use windows_sys::Win32::Storage::FileSystem::GetVolumePathNameW;
    let mut root = [0u16; 1024];
    // SAFETY: the path is NUL-terminated; the buffer is writable for its length.
    let ok = unsafe { GetVolumePathNameW(wide(path).as_ptr(), root.as_mut_ptr(), 1024) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let end = root.iter().position(|&c| c == 0).unwrap_or(root.len());
    Ok(root[..=end.min(root.len() - 1)].to_vec())
}

/// Returns the kind of filesystem that `path` is on (the path must exist), from the file system
/// name of its volume (`NTFS`, `ReFS`, `FAT32`, ...).
pub(crate) fn fs_id(path: &Path) -> io::Result<FsId> {
    use windows_sys::Win32::Storage::FileSystem::GetVolumeInformationW;
    std::fs::metadata(path)?;
    let root = volume_root(path)?;
    let mut name = [0u16; 64];
    // SAFETY: `root` is NUL-terminated; the name buffer is writable for its length; the other
    // outputs are not asked for (null).
    let ok = unsafe {
        GetVolumeInformationW(
            root.as_ptr(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            name.as_mut_ptr(),
            name.len() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    Ok(FsId::Name(String::from_utf16_lossy(&name[..end])))
}

/// The bytes allocated on the volume of `path`: its size less its free bytes
/// (`GetDiskFreeSpaceExW`). Nothing is written back first (flushing a whole volume needs an
/// administrator), so allocations Windows has not made yet are missed.
pub(crate) fn used_bytes(path: &Path) -> io::Result<u64> {
    use windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW;
    let root = volume_root(path)?;
    let (mut total, mut free) = (0u64, 0u64);
    // SAFETY: `root` is NUL-terminated; the outputs are writable; the caller's quota is not
    // asked for (null).
    let ok =
        unsafe { GetDiskFreeSpaceExW(root.as_ptr(), std::ptr::null_mut(), &mut total, &mut free) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(total.saturating_sub(free))
}

/// Flushing a volume's dirty data needs an administrator on Windows: nothing is done, and the
/// status cases are timed with whatever writeback the system still has to do.
pub(crate) fn sync_filesystem(path: &Path) -> io::Result<()> {
    std::fs::metadata(path).map(|_| ())
}

/// `path` made absolute with every link resolved, in the form programs take (`C:\x`): std's
/// `\\?\C:\x` loses its verbatim prefix (git, and `CreateProcess` for a working directory,
/// refuse it), `\\?\UNC\host\share` becomes `\\host\share`.
pub(crate) fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let resolved = std::fs::canonicalize(path)?;
    let Some(text) = resolved.to_str() else {
        return Ok(resolved);
    };
    if let Some(rest) = text.strip_prefix(r"\\?\UNC\") {
        return Ok(PathBuf::from(format!(r"\\{rest}")));
    }
    match text.strip_prefix(r"\\?\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => Ok(PathBuf::from(rest)),
        _ => Ok(resolved),
    }
}

/// A file or directory name of the lstat passes: a path component, or a tracked path's
/// directory part.
pub(crate) type Name = PathBuf;

/// `name` (`/`-separated, as git lists it) as a [`Name`].
pub(crate) fn name(name: &str) -> io::Result<Name> {
    Ok(PathBuf::from(name))
}

/// The work tree the passes stat: its path (Windows has no `fstatat`).
pub(crate) type Root = PathBuf;

/// The work tree at `path`, checked to be there.
pub(crate) fn open_root(path: &Path) -> io::Result<Root> {
    std::fs::metadata(path)?;
    Ok(path.to_owned())
}

/// A directory of the work tree: its path.
pub(crate) type Dir = PathBuf;

/// The directory `dir` of `root` (empty for the root itself).
pub(crate) fn open_dir(root: &Root, dir: &Name) -> io::Result<Dir> {
    Ok(root.join(dir))
}

/// `lstat` the entry `name` of the directory `dir`, by its path (`symlink_metadata`).
pub(crate) fn lstat_in(dir: &Dir, name: &Name) -> io::Result<()> {
    std::fs::symlink_metadata(dir.join(name)).map(|_| ())
}

/// Whether the process `pid` is gone: `OpenProcess` fails with an invalid parameter for a pid
/// no process has, and a process that ended has an exit code; `None` when it cannot be told
/// (another account's process refuses to be opened).
pub(crate) fn process_gone(pid: u32) -> Option<bool> {
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    const STILL_ACTIVE: u32 = 259;
    // SAFETY: a plain query; the handle is closed below.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        // SAFETY: reads this thread's last error.
        let gone = unsafe { GetLastError() } == ERROR_INVALID_PARAMETER;
        return gone.then_some(true);
    }
    let mut code = 0u32;
    // SAFETY: `handle` is open; `code` is writable.
    let ok = unsafe { GetExitCodeProcess(handle, &mut code) } != 0;
    // SAFETY: `handle` was opened above and is not used again.
    unsafe { CloseHandle(handle) };
    ok.then_some(code != STILL_ACTIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_directory_has_a_file_system_and_a_used_size() {
        let dir = std::env::temp_dir();
        assert!(fs_id(&dir).is_ok());
        assert!(used_bytes(&dir).unwrap() > 0);
        assert!(fs_id(Path::new(r"C:\no\such\dir")).is_err());
    }

    #[test]
    fn this_process_runs_and_no_process_has_an_odd_id() {
        assert_eq!(process_gone(std::process::id()), Some(false));
        // Process ids are multiples of 4.
        assert_eq!(process_gone(0xFFFF_FFF1), Some(true));
    }
}
