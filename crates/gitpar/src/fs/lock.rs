//! `index.lock`: the one lock that makes a checkout safe against a concurrent git.
//!
//! Git takes the lock before it touches the work tree and renames it over the index at the end,
//! so another process sees either the old index or the new one, never a torn one. We do the same,
//! and report a held lock with git's own words, because users (and their scripts) know them.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A repository file rewritten the way git's `lockfile.c` does it: `<file>.lock` is created
/// exclusively (`O_CREAT|O_EXCL`; an existing one means another process holds the file),
/// written, and renamed over `<file>`. Dropped without a commit, the lock file is removed and
/// `<file>` is left as it was. The index, config, `HEAD`, `shallow` and reflogs all use it.
#[derive(Debug)]
pub struct FileLock {
    lock_path: PathBuf,
    target: PathBuf,
    file: Option<File>,
}

impl FileLock {
    /// Take the lock on `target` by creating `target.lock` exclusively; the error is the
    /// system's (`File exists` when held).
    pub fn acquire(target: &Path) -> io::Result<FileLock> {
        let mut lock_path = target.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock_path)?;
        Ok(FileLock {
            lock_path,
            target: target.to_owned(),
            file: Some(file),
        })
    }

    /// The lock file's path (`<file>.lock`).
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// The file the lock replaces.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Write `contents` into the lock file and rename it over the target.
    pub fn commit(self, contents: &[u8]) -> io::Result<()> {
        self.commit_with(|out| out.write_all(contents))
    }

    /// Write the new contents with `write` (buffered, streaming into the lock file) and rename
    /// the lock file over the target.
    pub fn commit_with(
        mut self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let file = self.file.take().expect("committed at most once, by value");
        let mut out = io::BufWriter::with_capacity(256 * 1024, file);
        write(&mut out)?;
        out.flush()?;
        drop(out);
        std::fs::rename(&self.lock_path, &self.target)?;
        // Renamed: nothing left for Drop to remove.
        self.lock_path = PathBuf::new();
        Ok(())
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if !self.lock_path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
    }
}

/// A held `<index>.lock`: a [`FileLock`] whose errors speak git's words for the index.
#[derive(Debug)]
pub struct IndexLock(FileLock);

/// Why the lock could not be taken or committed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another process holds the lock; the message is git's, word for word.
    #[error(
        "Unable to create '{}': File exists.\n\n\
         Another git process seems to be running in this repository, e.g.\n\
         an editor opened by 'git commit'. Please make sure all processes\n\
         are terminated then try again. If it still fails, a git process\n\
         may have crashed in this repository earlier:\n\
         remove the file manually to continue.",
        .0.display()
    )]
    Held(PathBuf),
    /// Creating, writing or renaming the lock failed for another reason.
    #[error("unable to write new index file '{}': {source}", path.display())]
    Io {
        /// The lock or index path that failed.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
}

impl IndexLock {
    /// Take the lock for `index_path` by creating `index_path.lock` exclusively.
    pub fn acquire(index_path: &Path) -> Result<Self, Error> {
        FileLock::acquire(index_path).map(IndexLock).map_err(|err| {
            let mut lock_path = index_path.as_os_str().to_owned();
            lock_path.push(".lock");
            let lock_path = PathBuf::from(lock_path);
            if err.kind() == io::ErrorKind::AlreadyExists {
                Error::Held(lock_path)
            } else {
                Error::Io {
                    path: lock_path,
                    source: err,
                }
            }
        })
    }

    /// The bytes of the index file at `index_path` as they are now (`None`: there is none), to
    /// be put back with [`IndexLock::put_back`].
    pub(crate) fn snapshot(index_path: &Path) -> Option<Vec<u8>> {
        std::fs::read(index_path).ok()
    }

    /// Put the index at `index_path` back as [`IndexLock::snapshot`] found it: those bytes, or
    /// no index file at all. The lock is released either way.
    pub(crate) fn put_back(self, index_path: &Path, original: Option<&[u8]>) -> Result<(), Error> {
        match original {
            Some(bytes) => self.commit_with(|w| w.write_all(bytes)),
            None => {
                drop(self);
                match std::fs::remove_file(index_path) {
                    Err(source) if source.kind() != io::ErrorKind::NotFound => Err(Error::Io {
                        path: index_path.to_owned(),
                        source,
                    }),
                    _ => Ok(()),
                }
            }
        }
    }

    /// The index file this lock replaces.
    pub(crate) fn index_path(&self) -> &Path {
        self.0.target()
    }

    /// Write the index with `write` into the lock file and rename it over the index; the
    /// writer streams, so a 40,000-entry index is never held in memory twice.
    pub(crate) fn commit_with(
        self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), Error> {
        let path = self.0.lock_path().to_owned();
        self.0
            .commit_with(write)
            .map_err(|source| Error::Io { path, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_reported_with_gits_words_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        let lock = IndexLock::acquire(&index).unwrap();
        let err = IndexLock::acquire(&index).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("Unable to create '"), "{msg}");
        assert!(msg.contains("index.lock': File exists."), "{msg}");
        drop(lock);
        assert!(!dir.path().join("index.lock").exists());
        IndexLock::acquire(&index).unwrap();
    }
}
