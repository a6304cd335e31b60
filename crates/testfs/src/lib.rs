//! `testfs`: a FUSE passthrough filesystem over a backing directory, for git-par's tests and
//! benchmarks.
//!
//! Linux filesystems are fast, case-sensitive and do not fail, so the cases a checkout engine must
//! get right elsewhere cannot be tested on them directly. `testfs` mounts a backing directory
//! somewhere else and adds, per mount:
//! - **latency**: every operation sleeps for a fixed time before it is served, and operations are
//!   served by many threads at once, like a network filesystem (a parallel writer overlaps the
//!   latency, a sequential one pays it for every operation); and, on top of it, a latency for
//!   `mkdir` alone (directories slow to make);
//! - **case-insensitive names**, like NTFS's and APFS's defaults: `A` and `a` are the same name,
//!   creating `a` when `A` exists opens `A` (or fails with `EEXIST` under `O_EXCL`);
//! - **faults**: `ENOSPC` once a number of bytes have been written in total, `EIO` or `EACCES` for
//!   operations on paths that match a glob.
//!
//! Tests use [`Mount`] (an in-process session, unmounted on drop, even while a test panics); the
//! `testfs` binary mounts from the command line for benchmarks (`git par bench --dir <mount>`).

mod fs;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use fs::Stats;

/// Faults to inject. Kept apart from [`Options`] so a test can change them on a live mount
/// ([`Mount::set_faults`]): a checkout fails, the fault is lifted, the rerun must converge.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Writes fail with `ENOSPC` once this many bytes have been written through the mount in
    /// total (since the mount, or since the last [`Mount::set_faults`]); the write that crosses
    /// the limit is short, as on a full disk.
    pub enospc_after: Option<u64>,
    /// Operations that create, open, write, change or remove a path matching one of these globs
    /// (git's wildmatch; a pattern without `/` matches the last component, one with `/` the path
    /// from the mount's root) fail with `EIO`. Lookups and `stat` still work, as on a disk with a
    /// bad sector.
    pub eio: Vec<String>,
    /// As [`Faults::eio`], failing with `EACCES` (a permission the user lacks).
    pub eacces: Vec<String>,
}

/// How a mount behaves. `Options::default()` is a plain passthrough.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time every operation sleeps before it is served (lookups, creates, writes, ...).
    pub latency: Duration,
    /// Time a `mkdir` sleeps on top of `latency`: a filesystem where directories are slow to
    /// make, so that the writers of a checkout overtake the thread that makes its directories.
    pub mkdir_latency: Duration,
    /// Names are compared case-insensitively (Unicode lower case), as on NTFS and APFS.
    pub case_insensitive: bool,
    /// The faults injected from the start.
    pub faults: Faults,
    /// Threads that serve requests: the most operations in flight at once. A writer with more
    /// threads than this queues in the kernel.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            latency: Duration::ZERO,
            mkdir_latency: Duration::ZERO,
            case_insensitive: false,
            faults: Faults::default(),
            threads: 64,
        }
    }
}

/// Why FUSE mounts cannot be made on this machine, or `None` when they can: tests skip (and say
/// why) only when `/dev/fuse` is absent.
pub fn unavailable() -> Option<String> {
    if Path::new("/dev/fuse").exists() {
        None
    } else {
        Some("/dev/fuse is absent: FUSE mounts are impossible on this machine".into())
    }
}

/// A mounted testfs, served by threads of this process. Dropping it unmounts (lazily if
/// something still holds the mount busy) and waits for the serving threads, so no stale mount
/// outlives a test, whether it passed or panicked.
pub struct Mount {
    session: Option<fuser::BackgroundSession>,
    mountpoint: PathBuf,
    shared: Arc<fs::Shared>,
}

impl Mount {
    /// Mounts `backing` (an existing directory) at `mountpoint` (an existing, empty directory).
    /// When this returns the mount is ready: the kernel's handshake is done.
    pub fn new(
        backing: impl AsRef<Path>,
        mountpoint: impl AsRef<Path>,
        options: Options,
    ) -> io::Result<Mount> {
        let backing = backing.as_ref().canonicalize()?;
        let mountpoint = mountpoint.as_ref().canonicalize()?;
        if !backing.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("backing {} is not a directory", backing.display()),
            ));
        }
        let shared = Arc::new(fs::Shared::new(backing.clone(), &options));
        let filesystem = fs::TestFs::new(Arc::clone(&shared));
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName(format!("testfs:{}", backing.display())),
            fuser::MountOption::Subtype("testfs".into()),
            fuser::MountOption::RW,
            fuser::MountOption::Dev,
            fuser::MountOption::Exec,
        ];
        // Root (tests, CI) may let other users in; it keeps `git` run as another user working.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            config.acl = fuser::SessionACL::All;
        }
        config.n_threads = Some(options.threads.max(1));
        config.clone_fd = true;
        let session = fuser::spawn_mount(filesystem, &mountpoint, &config).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot mount testfs at {}: {e}", mountpoint.display()),
            )
        })?;
        Ok(Mount {
            session: Some(session),
            mountpoint,
            shared,
        })
    }

    /// Where the filesystem is mounted.
    pub fn path(&self) -> &Path {
        &self.mountpoint
    }

    /// Replaces the injected faults (and restarts the `ENOSPC` byte count): lifting a fault
    /// mid-test without remounting.
    pub fn set_faults(&self, faults: Faults) {
        self.shared.set_faults(&faults);
    }

    /// What the mount has served so far: operations, bytes written, faults injected.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Unmounts now, reporting a failure that `drop` would have to swallow.
    pub fn unmount(mut self) -> io::Result<()> {
        self.unmount_inner()
    }

    fn unmount_inner(&mut self) -> io::Result<()> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        unmount_path(&self.mountpoint)?;
        // With the kernel side gone the serving threads see ENODEV and end; fuser's own unmount
        // (when the session is dropped) finds nothing left to do.
        session.join()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Err(e) = self.unmount_inner() {
            eprintln!(
                "testfs: unmounting {} failed: {e}",
                self.mountpoint.display()
            );
        }
    }
}

/// Unmounts `mountpoint`: a plain unmount, then a lazy one (`MNT_DETACH`) when something still
/// uses it, then `fusermount3 -u -z` for users without the right to unmount.
pub fn unmount_path(mountpoint: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(mountpoint.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINVAL) => return Ok(()), // not mounted (any more)
        // SAFETY: as above.
        Some(libc::EBUSY) if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 => {
            return Ok(())
        }
        _ => {}
    }
    let status = std::process::Command::new("fusermount3")
        .args(["-u", "-z", "--"])
        .arg(mountpoint)
        .status();
    match status {
        Ok(s) if s.success() => Ok(()),
        _ => Err(err),
    }
}

/// Parses a duration as the command line takes it: a number followed by `ns`, `us`, `ms` or `s`
/// (`1ms`, `500us`, `0`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (like 1ms, 500us, 2s)"))?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "" if value == 0.0 => 0.0,
        _ => return Err(format!("'{text}': the unit must be ns, us, ms or s")),
    };
    Ok(Duration::from_secs_f64(value * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("1").is_err());
        assert!(parse_duration("ms").is_err());
    }
}
