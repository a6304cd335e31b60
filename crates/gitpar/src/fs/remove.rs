//! Removing work tree entries the way git's `unlink_entry` and `remove_scheduled_dirs` do
//! (`entry.c`, `unpack-trees.c`), shared by the two-way update and the restore of paths.
//!
//! What is removed is chosen from what the index says the entry is (a gitlink's directory is
//! `rmdir`ed, anything else unlinked), never from following what is on disk; a path behind a
//! leading symlink or file is not there and is left alone. Directories emptied by the removals
//! are removed afterwards, deepest first; one that still holds anything stays.

use std::collections::{BTreeSet, HashSet};
use std::io;

use bstr::{BStr, BString, ByteSlice};

use crate::fs::{Dirs, Root};

/// Removes entries below one work tree and remembers the directories they leave behind.
#[derive(Debug)]
pub struct Remover<'r> {
    dirs: Dirs<'r>,
    /// Leading directories of removed entries: candidates for removal once empty.
    emptied: BTreeSet<BString>,
    /// Entries removed so far.
    pub removed: usize,
    /// Gitlink directories that stayed because `rmdir` failed (files in them, or no directory
    /// there): git's `rmdir_or_warn` warns about each and goes on.
    pub kept: Vec<Kept>,
}

/// An entry the removal left in place, and why (git's warning `unable to rmdir '<path>':
/// <reason>` for a submodule's directory, `unable to unlink '<path>': <reason>` for anything
/// else, a directory where the index has a file say).
#[derive(Debug, thiserror::Error)]
#[error("unable to {op} '{path}': {}", crate::fs::strerror(.source))]
pub struct Kept {
    /// `rmdir` or `unlink`.
    pub op: &'static str,
    /// The entry's path.
    pub path: BString,
    /// Why it failed.
    #[source]
    pub source: io::Error,
}

/// Why a removal failed: the path and the system error, phrased as git phrases it.
#[derive(Debug, thiserror::Error)]
#[error("unable to unlink '{path}': {source}")]
pub struct Error {
    /// The path that could not be removed.
    pub path: BString,
    /// The system error.
    #[source]
    pub source: io::Error,
}

impl<'r> Remover<'r> {
    /// A remover for paths below `root`.
    pub fn new(root: &'r Root) -> Self {
        Remover {
            dirs: root.dirs(),
            emptied: BTreeSet::new(),
            removed: 0,
            kept: Vec::new(),
        }
    }

    /// Remove the tracked entry at `path`: `rmdir` for a gitlink (a submodule's directory that
    /// is not empty stays, as git leaves it), `unlink` for anything else. Nothing happens when
    /// the path is not there.
    pub fn entry(&mut self, path: &BStr, gitlink: bool) -> Result<(), Error> {
        let result = if gitlink {
            self.dirs.rmdir(path).or_else(|err| {
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::NotADirectory
                ) {
                    self.kept.push(Kept {
                        op: "rmdir",
                        path: path.to_owned(),
                        source: err,
                    });
                    Ok(false)
                } else {
                    Err(err)
                }
            })
        } else {
            match self.dirs.unlink(path) {
                // git's `remove_or_warn`: an entry that cannot be unlinked (a directory where
                // the index has a file, a file the user may not remove) is warned about and
                // left, and its directories are not scheduled for removal; the update goes on.
                Err(err) if err.raw_os_error().is_some() => {
                    self.kept.push(Kept {
                        op: "unlink",
                        path: path.to_owned(),
                        source: err,
                    });
                    return Ok(());
                }
                other => other,
            }
        };
        self.finish_one(path, result)
    }

    /// A tracked entry that goes whose file is already gone: its directories are candidates
    /// for removal all the same, as git's `unlink_entry` schedules them after a removal that
    /// found nothing; unless a leading directory is missing or is no directory
    /// (`check_leading_path`), where git does nothing.
    pub fn gone(&mut self, path: &BStr) {
        if self.dirs.has_dirs_only_path(path) {
            self.emptied
                .extend(crate::fs::leading_dirs(path).map(ToOwned::to_owned));
        }
    }

    /// Remove whatever is at `path`, a whole directory tree included (an untracked blocker
    /// that a forced update clears). Symlinks inside are removed, never followed.
    pub fn all(&mut self, path: &BStr) -> Result<(), Error> {
        let result = self.dirs.remove_all(path);
        self.finish_one(path, result)
    }

    fn finish_one(&mut self, path: &BStr, result: io::Result<bool>) -> Result<(), Error> {
        let removed = result.map_err(|source| Error {
            path: path.to_owned(),
            source,
        })?;
        if removed {
            self.removed += 1;
        }
        // Even when the entry was already gone (a submodule taken down, a file the user
        // deleted), its directories are candidates, as git's `unlink_entry` schedules them
        // whatever `remove_or_warn` found.
        self.emptied
            .extend(crate::fs::leading_dirs(path).map(ToOwned::to_owned));
        Ok(())
    }

    /// Remove the directories the removals emptied, deepest first, except those in `keep`
    /// (directories the new entries need). A directory that is not empty stays, as with git.
    /// Returns those of `keep` that were spared, deepest first.
    pub fn remove_emptied_dirs(&mut self, keep: &HashSet<&BStr>) -> Vec<BString> {
        let mut spared = Vec::new();
        for dir in std::mem::take(&mut self.emptied).into_iter().rev() {
            if keep.contains(dir.as_bstr()) {
                spared.push(dir);
            } else {
                let _ = self.dirs.rmdir(dir.as_bstr());
            }
        }
        spared
    }
}
