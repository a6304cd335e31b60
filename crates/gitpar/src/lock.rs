//! `index.lock`: the one lock that makes a checkout safe against a concurrent git.
//!
//! Git takes the lock before it touches the work tree and renames it over the index at the end,
//! so another process sees either the old index or the new one, never a torn one. We do the same,
//! and report a held lock with git's own words, because users (and their scripts) know them.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A held `<index>.lock`. Dropping it without [`IndexLock::commit`] removes the lock file and
/// leaves the index as it was.
#[derive(Debug)]
pub struct IndexLock {
    lock_path: PathBuf,
    index_path: PathBuf,
    file: Option<File>,
}

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
        let mut lock_path = index_path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock_path)
        {
            Ok(file) => Ok(IndexLock {
                lock_path,
                index_path: index_path.to_owned(),
                file: Some(file),
            }),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(Error::Held(lock_path)),
            Err(source) => Err(Error::Io {
                path: lock_path,
                source,
            }),
        }
    }

    /// Write `index` into the lock file and atomically rename it over the index.
    pub fn commit(mut self, index: &gix::index::File) -> Result<(), Error> {
        let io_err = |path: &Path| {
            let path = path.to_owned();
            move |source| Error::Io { path, source }
        };
        let file = self
            .file
            .take()
            .expect("a lock is committed at most once, by value");
        let mut out = io::BufWriter::with_capacity(256 * 1024, file);
        index
            .write_to(&mut out, gix::index::write::Options::default())
            .map_err(|err| Error::Io {
                path: self.lock_path.clone(),
                source: io::Error::other(err.to_string()),
            })?;
        out.flush().map_err(io_err(&self.lock_path))?;
        let file = out
            .into_inner()
            .map_err(|err| io_err(&self.lock_path)(err.into_error()))?;
        drop(file);
        std::fs::rename(&self.lock_path, &self.index_path).map_err(io_err(&self.index_path))?;
        // Renamed: nothing left for Drop to remove.
        self.lock_path = PathBuf::new();
        Ok(())
    }
}

impl IndexLock {
    /// Write the index with `write` (into the lock file, buffered) and rename it over the
    /// index. The writer streams: a 40,000-entry index is never held in memory twice.
    pub(crate) fn commit_with(
        mut self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), Error> {
        let file = self
            .file
            .take()
            .expect("a lock is committed at most once, by value");
        let io_err = |path: &Path| {
            let path = path.to_owned();
            move |source| Error::Io { path, source }
        };
        let mut out = io::BufWriter::with_capacity(256 * 1024, file);
        write(&mut out)
            .and_then(|()| out.flush())
            .map_err(io_err(&self.lock_path))?;
        drop(out);
        std::fs::rename(&self.lock_path, &self.index_path).map_err(io_err(&self.index_path))?;
        self.lock_path = PathBuf::new();
        Ok(())
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        if !self.lock_path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
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
