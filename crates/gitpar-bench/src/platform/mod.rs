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

pub(crate) use os::{
    canonicalize, fs_kind, lstat_in, name, open_dir, open_root, process_gone, sync_filesystem,
    used_bytes, wait, Dir, Name, Root,
};
