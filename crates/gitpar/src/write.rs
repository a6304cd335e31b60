//! Writing one work tree item: the system calls at the bottom of every checkout.
//!
//! Files are created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a worker can never follow a symlink
//! or clobber something it did not expect: an existing path is reported as a collision and left
//! to the sequential tail. The stat data git records in the index comes from `fstat` on the open
//! file, so the index needs no second pass over the disk.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use gix::index::entry::stat::Time;
use gix::index::entry::Stat;

/// The stat data of `path` itself (not of what a symlink points to), in the index's format.
pub fn stat_of_path(path: &Path) -> io::Result<Stat> {
    Ok(stat_from_metadata(&std::fs::symlink_metadata(path)?))
}

/// Convert metadata into the index's truncated 32-bit fields, the way git's
/// `fill_stat_cache_info` does (values are truncated, not saturated, to match git bit for bit).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn stat_from_metadata(meta: &std::fs::Metadata) -> Stat {
    Stat {
        mtime: Time {
            secs: meta.mtime() as u32,
            nsecs: meta.mtime_nsec() as u32,
        },
        ctime: Time {
            secs: meta.ctime() as u32,
            nsecs: meta.ctime_nsec() as u32,
        },
        dev: meta.dev() as u32,
        ino: meta.ino() as u32,
        uid: meta.uid(),
        gid: meta.gid(),
        size: meta.size() as u32,
    }
}

/// Create a symbolic link at `path` pointing to `target` and return the link's own stat data.
pub fn create_symlink(target: &[u8], path: &Path) -> io::Result<Stat> {
    use std::os::unix::ffi::OsStrExt;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), path)?;
    stat_of_path(path)
}

/// Create the directory for a gitlink (empty, as git leaves an uninitialised submodule) and
/// return its stat data. An existing directory is accepted and left alone, and then, as git
/// does, no stat data is recorded (all zero): the submodule's directory is not ours to describe.
pub fn create_gitlink_dir(path: &Path) -> io::Result<Stat> {
    match std::fs::create_dir(path) {
        Ok(()) => stat_of_path(path),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(path)?.is_dir() {
                Ok(Stat::default())
            } else {
                Err(err)
            }
        }
        Err(err) => Err(err),
    }
}

/// Create directory `path`; an existing real directory is fine, anything else in the way
/// (a file, a symlink, even one to a directory) is an error, so that nothing is ever written
/// through a link.
pub fn create_dir(path: &Path) -> io::Result<()> {
    match std::fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(path)?.is_dir() {
                Ok(())
            } else {
                Err(err)
            }
        }
        Err(err) => Err(err),
    }
}

/// Returns true if and only if `err` means that something already occupies the path, which a
/// worker treats as a collision (two entries folding to one name, or a leftover) rather than as
/// a failure.
pub fn is_collision(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EEXIST) | Some(libc::EISDIR) | Some(libc::ELOOP)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bstr::ByteSlice;

    #[test]
    fn create_file_at_refuses_existing_paths_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let mut dirs = DirCache::new(dir.path());
        let root = b"".as_bstr();
        let st = create_file_at(dirs.dir(root).unwrap(), b"f".as_bstr(), b"hello", false).unwrap();
        assert_eq!(st.size, 5);
        let err =
            create_file_at(dirs.dir(root).unwrap(), b"f".as_bstr(), b"again", false).unwrap_err();
        assert!(is_collision(&err));
        std::os::unix::fs::symlink(dir.path().join("f"), dir.path().join("l")).unwrap();
        let err =
            create_file_at(dirs.dir(root).unwrap(), b"l".as_bstr(), b"through", false).unwrap_err();
        assert!(is_collision(&err));
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"hello");
    }

    #[test]
    fn create_dir_refuses_a_symlink_to_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        create_dir(&real).unwrap();
        create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(create_dir(&link).is_err());
    }
}

/// The stat data of a `stat` result from `fstat`/`fstatat`, in the index's format (truncated
/// to 32 bits as git does).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn stat_from_raw(st: &rustix::fs::Stat) -> Stat {
    Stat {
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

/// An open handle on the directory a worker is writing into, reused while consecutive entries
/// share it (the path lists are sorted, so they mostly do).
///
/// Creating `a/b/c/file` relative to an open `a/b/c` saves the kernel the walk through `a`,
/// `b` and `c` for every file, and it means the file lands in the directory that was opened:
/// the directory is opened with `O_NOFOLLOW | O_DIRECTORY`, so a symlink put in its place is
/// refused rather than followed.
#[derive(Debug)]
pub struct DirCache {
    root: std::path::PathBuf,
    current: Option<(bstr::BString, rustix::fd::OwnedFd)>,
}

impl DirCache {
    /// A cache for paths below `root`.
    pub fn new(root: &Path) -> Self {
        DirCache {
            root: root.to_owned(),
            current: None,
        }
    }

    /// The open directory `dir` (repository-relative; empty for the root).
    pub fn dir(&mut self, dir: &bstr::BStr) -> io::Result<rustix::fd::BorrowedFd<'_>> {
        use rustix::fd::AsFd;
        use rustix::fs::{Mode, OFlags};
        let hit = self.current.as_ref().is_some_and(|(d, _)| *d == dir);
        if !hit {
            use bstr::ByteSlice;
            let path = if dir.is_empty() {
                self.root.clone()
            } else {
                self.root.join(dir.to_path_lossy())
            };
            let fd = rustix::fs::open(
                &path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            self.current = Some((dir.to_owned(), fd));
        }
        Ok(self.current.as_ref().expect("set above").1.as_fd())
    }
}

/// Split a repository-relative path into its directory and file name.
pub fn split_path(path: &bstr::BStr) -> (&bstr::BStr, &bstr::BStr) {
    use bstr::ByteSlice;
    match path.rfind_byte(b'/') {
        Some(pos) => (path[..pos].as_bstr(), path[pos + 1..].as_bstr()),
        None => (b"".as_bstr(), path),
    }
}

/// Create `name` in the open directory `dir` (it must not exist), write `data`, and return the
/// stat data of the open file. The mode is 0777 for executables and 0666 otherwise, before the
/// umask, exactly as git's `entry.c` does, so the exec bit and the group/other bits come out as
/// they would with git.
pub fn create_file_at(
    dir: rustix::fd::BorrowedFd<'_>,
    name: &bstr::BStr,
    data: &[u8],
    executable: bool,
) -> io::Result<Stat> {
    use rustix::fs::{Mode, OFlags};
    let mode = if executable {
        Mode::from_raw_mode(0o777)
    } else {
        Mode::from_raw_mode(0o666)
    };
    let fd = rustix::fs::openat(
        dir,
        <&[u8]>::from(name),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        mode,
    )?;
    let mut file = File::from(fd);
    file.write_all(data)?;
    Ok(stat_from_raw(&rustix::fs::fstat(&file)?))
}
