//! Which filesystem a path is on.
//!
//! The same checkout costs 15 µs a file on tmpfs and hundreds of µs on an aged ext4 or a network
//! filesystem, so a benchmark result means nothing without the filesystem it was measured on. The harness
//! names it from the `f_type` magic number that `statfs(2)` returns.

use std::fmt;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Filesystem magic numbers, from Linux's `include/uapi/linux/magic.h` (and `fs/smb/client` for SMB2).
pub mod magic {
    /// tmpfs (and /dev/shm).
    pub const TMPFS: u32 = 0x0102_1994;
    /// ext2, ext3 and ext4 all use this one magic.
    pub const EXT4: u32 = 0xEF53;
    /// XFS ("XFSB").
    pub const XFS: u32 = 0x5846_5342;
    /// Btrfs.
    pub const BTRFS: u32 = 0x9123_683E;
    /// Any FUSE filesystem (the magic does not say which).
    pub const FUSE: u32 = 0x6573_5546;
    /// NFS.
    pub const NFS: u32 = 0x6969;
    /// The old smbfs.
    pub const SMB: u32 = 0x517B;
    /// CIFS.
    pub const CIFS: u32 = 0xFF53_4D42;
    /// SMB2/3 mounts.
    pub const SMB2: u32 = 0xFE53_4D42;
    /// overlayfs (containers).
    pub const OVERLAY: u32 = 0x794C_7630;
}

/// A filesystem, as far as benchmarks need to tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// In memory: the CPU floor of a checkout.
    Tmpfs,
    /// ext2, ext3 or ext4, which share one magic number.
    Ext4,
    /// XFS.
    Xfs,
    /// Btrfs.
    Btrfs,
    /// A FUSE filesystem (including test filesystems that add latency).
    Fuse,
    /// NFS.
    Nfs,
    /// SMB or CIFS.
    Smb,
    /// overlayfs: the cost is that of the upper layer, which the magic does not tell.
    Overlay,
    /// Anything else, with its magic number so that it can still be looked up.
    Other(u32),
}

impl FsKind {
    /// Returns the kind for a `statfs` `f_type` magic number.
    pub fn from_magic(magic: u32) -> Self {
        match magic {
            magic::TMPFS => Self::Tmpfs,
            magic::EXT4 => Self::Ext4,
            magic::XFS => Self::Xfs,
            magic::BTRFS => Self::Btrfs,
            magic::FUSE => Self::Fuse,
            magic::NFS => Self::Nfs,
            magic::SMB | magic::CIFS | magic::SMB2 => Self::Smb,
            magic::OVERLAY => Self::Overlay,
            other => Self::Other(other),
        }
    }

    /// Returns the name to print in reports: `tmpfs`, `ext4` (standing for ext2/3/4), `xfs`, `btrfs`,
    /// `fuse`, `nfs`, `smb/cifs`, `overlay`, or `other`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Tmpfs => "tmpfs",
            Self::Ext4 => "ext4",
            Self::Xfs => "xfs",
            Self::Btrfs => "btrfs",
            Self::Fuse => "fuse",
            Self::Nfs => "nfs",
            Self::Smb => "smb/cifs",
            Self::Overlay => "overlay",
            Self::Other(_) => "other",
        }
    }

    /// Returns true if and only if files live in memory, where deleting a previous run's checkout does not
    /// slow down the next one (see [`crate::report::Warning::RecentMassDeletion`]).
    pub fn is_memory(&self) -> bool {
        matches!(self, Self::Tmpfs)
    }
}

impl fmt::Display for FsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Other(magic) => write!(f, "other (magic {magic:#x})"),
            known => f.write_str(known.name()),
        }
    }
}

/// Returns the kind of filesystem that `path` is on (the path must exist).
#[cfg(target_os = "linux")]
pub fn kind(path: &Path) -> io::Result<FsKind> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: an all-zero statfs is a valid value for this plain C struct, which statfs() overwrites.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid NUL-terminated string and st a valid, writable statfs.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // f_type is signed on some targets; the magic numbers are 32-bit patterns.
    Ok(FsKind::from_magic(st.f_type as u32))
}

/// Returns the kind of filesystem that `path` is on; other systems than Linux have no `f_type` magic, so
/// every filesystem is [`FsKind::Other`] there.
#[cfg(not(target_os = "linux"))]
pub fn kind(path: &Path) -> io::Result<FsKind> {
    std::fs::metadata(path)?;
    Ok(FsKind::Other(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_map_to_names() {
        assert_eq!(FsKind::from_magic(0xEF53).name(), "ext4");
        assert_eq!(FsKind::from_magic(0x0102_1994).name(), "tmpfs");
        assert_eq!(FsKind::from_magic(0xFE53_4D42).name(), "smb/cifs");
        assert_eq!(
            FsKind::from_magic(0x1234).to_string(),
            "other (magic 0x1234)"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_is_not_a_disk() {
        // /proc is procfs everywhere on Linux: a stable case that needs no mount.
        assert_eq!(kind(Path::new("/proc")).unwrap(), FsKind::Other(0x9FA0));
        assert!(kind(Path::new("/no/such/path")).is_err());
    }
}
