//! What the bench does differently on Unix and on Windows, behind one interface: reaping a timed
//! process with its peak memory, naming and measuring the filesystem under a benchmark, the
//! lstat passes of the status cases, and telling whether an earlier bench is still running. The
//! rest of the crate has no `cfg` of its own and names no `libc` or Win32 call.
//!
//! `unix.rs` is what the bench always did on Linux; `windows.rs` measures what Windows can tell
//! (and says what it cannot). Wine runs the Windows side for correctness; its times say nothing
//! about Windows.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

/// What the system tells of the filesystem a path is on: Linux's `f_type` magic number, or the
/// file system name of a Windows volume; `filesystem.rs` names the kind from it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(dead_code)] // each system builds one of the two
pub(crate) enum FsId {
    /// `statfs`'s `f_type` (32 bits); 0 where the system has no such number.
    Magic(u32),
    /// `GetVolumeInformationW`'s file system name (`NTFS`, `ReFS`, ...).
    Name(String),
}

/// How a timed process ended: its exit code, or the signal that killed it (run.rs's `Exit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(windows, allow(dead_code))] // Windows has no signals
pub(crate) enum Ended {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

pub(crate) use os::{
    canonicalize, fs_id, lstat_in, name, open_dir, open_root, process_gone, sync_filesystem,
    used_bytes, wait, Dir, Name, Root,
};
