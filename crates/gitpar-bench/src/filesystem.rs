//! Which filesystem a path is on.
//!
//! The same checkout costs 15 µs a file on tmpfs and hundreds of µs on an aged ext4 or a network
//! filesystem, so a benchmark result means nothing without the filesystem it was measured on. The harness
//! names it from the `f_type` magic number that `statfs(2)` returns (on Windows, from the volume's file
//! system name).

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
    /// NTFS (Windows).
    Ntfs,
    /// ReFS (Windows; a Dev Drive is one).
    Refs,
    /// FAT, FAT32 or exFAT (Windows).
    Fat,
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

    /// Returns the kind for the file system name Windows gives a volume (`GetVolumeInformationW`):
    /// NTFS, ReFS, FAT/FAT32/exFAT; any other is [`FsKind::Other`] without a magic number.
    pub fn from_windows_name(name: &str) -> Self {
        match name.to_ascii_uppercase().as_str() {
            "NTFS" => Self::Ntfs,
            "REFS" => Self::Refs,
            "FAT" | "FAT32" | "EXFAT" => Self::Fat,
            _ => Self::Other(0),
        }
    }

    /// Returns the name to print in reports: `tmpfs`, `ext4` (standing for ext2/3/4), `xfs`, `btrfs`,
    /// `fuse`, `nfs`, `smb/cifs`, `overlay`, `ntfs`, `refs`, `fat`, or `other`.
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
            Self::Ntfs => "ntfs",
            Self::Refs => "refs",
            Self::Fat => "fat",
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

/// Returns the kind of filesystem that `path` is on (the path must exist): from `statfs`'s
/// magic number on Linux, from the volume's file system name on Windows.
pub fn kind(path: &Path) -> io::Result<FsKind> {
    Ok(match crate::platform::fs_id(path)? {
        crate::platform::FsId::Magic(magic) => FsKind::from_magic(magic),
        crate::platform::FsId::Name(name) => FsKind::from_windows_name(&name),
    })
}

/// Returns the bytes allocated on the filesystem of `path`, after writing its dirty data back: `syncfs(2)`
/// of that filesystem, then `statvfs(2)`'s blocks less its free blocks, times the fragment size (on
/// Windows: the volume's size less its free space, nothing written back first).
///
/// The difference of two readings around a command is what the command allocated (a checkout's data
/// and metadata blocks, less what copy-on-write clones share), provided nothing else writes to that
/// filesystem meanwhile: a dedicated mount (`--dir` on a loop image) gives exact figures, the root
/// filesystem of a busy machine noisy ones. The sync makes delayed allocation and deferred frees (XFS
/// inode inactivation) count where they belong, and costs the caller's time: keep it out of any
/// timed interval.
pub fn used_bytes(path: &Path) -> io::Result<u64> {
    crate::platform::used_bytes(path)
}

/// Like [`used_bytes`], read until two readings [`SETTLE_PAUSE`] apart agree (at most
/// [`SETTLE_READINGS`] readings): a filesystem may free the blocks of deleted files in the background
/// after the sync (XFS inactivates deleted inodes in a worker), and a reading taken meanwhile would
/// charge the next command with a share of the previous run's frees. Returns the last reading.
pub fn used_bytes_settled(path: &Path) -> io::Result<u64> {
    let mut last = used_bytes(path)?;
    for _ in 1..SETTLE_READINGS {
        std::thread::sleep(SETTLE_PAUSE);
        let now = used_bytes(path)?;
        if now == last {
            break;
        }
        last = now;
    }
    Ok(last)
}

/// The pause between two readings of [`used_bytes_settled`].
pub const SETTLE_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// The most readings [`used_bytes_settled`] takes: half a second of pauses.
pub const SETTLE_READINGS: usize = 25;

#[cfg(test)]
mod tests {
    #[test]
    fn windows_names_map_to_kinds() {
        assert_eq!(
            super::FsKind::from_windows_name("NTFS"),
            super::FsKind::Ntfs
        );
        assert_eq!(
            super::FsKind::from_windows_name("ReFS"),
            super::FsKind::Refs
        );
        assert_eq!(
            super::FsKind::from_windows_name("exFAT"),
            super::FsKind::Fat
        );
        assert_eq!(
            super::FsKind::from_windows_name("CDFS"),
            super::FsKind::Other(0)
        );
    }

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

    #[cfg(unix)]
    #[test]
    fn a_file_of_n_mib_allocates_about_n_mib() {
        use std::io::Write as _;
        const MIB: u64 = 1 << 20;
        const N: u64 = 32;
        let dir = tempfile::tempdir().unwrap();
        // Random-looking data (that no filesystem here compresses), written in 1 MiB chunks.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let chunk: Vec<u8> = (0..MIB)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        // The temporary directory's filesystem is shared with whatever else runs on the machine (other
        // builds, other tests): a reading disturbed by them is retried, a wrong measurement never passes.
        let mut seen = Vec::new();
        for attempt in 0..5 {
            let path = dir.path().join(format!("f{attempt}"));
            let before = used_bytes(dir.path()).unwrap();
            let mut f = std::fs::File::create(&path).unwrap();
            for _ in 0..N {
                f.write_all(&chunk).unwrap();
            }
            drop(f);
            let after = used_bytes(dir.path()).unwrap();
            std::fs::remove_file(&path).unwrap();
            let mib = (after as f64 - before as f64) / MIB as f64;
            if (N as f64 * 0.95..N as f64 * 1.2).contains(&mib) {
                return;
            }
            seen.push(mib);
        }
        panic!("writing {N} MiB allocated {seen:?} MiB");
    }
}
