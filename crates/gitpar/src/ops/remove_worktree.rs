//! `git worktree remove`'s work once git's checks have passed (git's `remove_worktree`): the
//! work tree deleted by worker threads ([`crate::fs::remove_tree`]), then its administrative
//! directory `$GIT_COMMON_DIR/worktrees/<id>` (`delete_git_dir`), then `worktrees` itself if
//! that left it empty. As in git, a failure to delete the work tree does not stop the rest
//! ("there's no going back from here"): the failures are returned for the caller to report.
//!
//! The work tree's `.git` file is deleted last, once everything else in it is gone: a removal
//! stopped half-way (Ctrl-C) leaves a work tree that git still knows, and on an interruption the
//! administrative directory is kept, so `git worktree remove` can simply be run again.
//!
//! The checks themselves (the work tree found, not the main one, its lock, [`Worktree::validate`],
//! its submodules, local changes) are the caller's: git's messages and exit codes are the
//! binary's to print. [`check_index`] reads what git's `validate_no_submodules` reads, the
//! index.

use std::path::{Path, PathBuf};

use gix::index::entry::Mode;

use crate::fs::remove_tree::{self, Removed};
use crate::repo::worktrees::Worktree;
use crate::sys::context::Context;

/// How [`remove`] runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Worker threads deleting the work tree; `None`: the filesystem's kind decides
    /// ([`crate::fs::tune::workers_for`]).
    pub threads: Option<usize>,
}

/// What [`remove`] did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// What was deleted of the work tree (nothing when it was not there: git's missing work
    /// tree, of which only the registration goes); `None` when its deletion failed.
    pub removed: Option<Removed>,
    /// What could not be deleted, in git's order (work tree, administrative directory): each
    /// one is git's `error: failed to delete '<path>': <cause>`, and git's exit status 255.
    pub failures: Vec<Failure>,
}

/// A deletion that failed, in git's words: the work tree or the administrative directory
/// (`path`) could not be deleted in whole; `source` names the entry inside it and the step that
/// failed (git names only `path`, with the cause).
#[derive(Debug, thiserror::Error)]
#[error("failed to delete '{}': {}", path.display(), source.cause())]
pub struct Failure {
    /// The work tree, or `$GIT_COMMON_DIR/worktrees/<id>`.
    pub path: PathBuf,
    /// What failed inside it.
    #[source]
    pub source: remove_tree::Error,
}

/// Why [`remove`] stopped before it was done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller asked it to stop while the work tree was being deleted: what is left of the
    /// work tree is there with its `.git` file, and the administrative directory is kept.
    #[error("interrupted")]
    Interrupted,
    /// `worktree` is the main work tree, which is never removed.
    #[error("'{}' is a main working tree", .0.display())]
    Main(PathBuf),
}

/// Delete the linked work tree `worktree` of the repository whose common directory is
/// `common_dir`: the work tree if it is there, then its registration, as git's
/// `remove_worktree` does after its checks.
pub fn remove(
    worktree: &Worktree,
    common_dir: &Path,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    let Some(admin) = worktree.admin_dir(common_dir) else {
        return Err(Error::Main(worktree.path.clone()));
    };
    let mut outcome = Outcome::default();
    let tree = remove_tree::Options {
        threads: opts.threads,
        last: Some(".git".into()),
    };
    match remove_tree::remove_tree(&worktree.path, &tree, ctx.interrupt) {
        Ok(removed) => outcome.removed = Some(removed),
        Err(remove_tree::Error::Interrupted) => return Err(Error::Interrupted),
        Err(source) => outcome.failures.push(Failure {
            path: worktree.path.clone(),
            source,
        }),
    }
    crate::sys::phase::mark("work tree deleted");
    // git's `delete_git_dir`: the administrative directory is small, one thread deletes it.
    let admin_opts = remove_tree::Options {
        threads: Some(1),
        last: None,
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    if let Err(source) = remove_tree::remove_tree(&admin, &admin_opts, &never) {
        outcome.failures.push(Failure {
            path: admin.clone(),
            source,
        });
    }
    // git's `delete_worktrees_dir_if_empty`: a failure (not empty) is ignored.
    if let Some(worktrees) = admin.parent() {
        let _ = remove_tree::remove_empty_dir(worktrees);
    }
    Ok(outcome)
}

/// What the index of a linked work tree says before it is removed: git's
/// `validate_no_submodules`, and whether git's status would keep it sparse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexCheck {
    /// It has submodules git will not remove with it: a `modules` directory in its
    /// administrative directory, or a populated submodule (a gitlink of its index whose
    /// directory holds a repository or a `.git` file naming one).
    pub submodules: bool,
    /// The index is sparse (it has sparse-directory entries): git reads it without expanding
    /// it, or expands it with a hint, as the repository the command runs in decides; the
    /// engine's status would expand it.
    pub sparse: bool,
}

/// Read the index of the linked work tree `worktree` for [`IndexCheck`]. A missing index has no
/// submodules; one that cannot be read is an error (where git dies).
pub fn check_index(
    worktree: &Worktree,
    common_dir: &Path,
    hash: gix::hash::Kind,
) -> Result<IndexCheck, UnreadableIndex> {
    let Some(admin) = worktree.admin_dir(common_dir) else {
        return Ok(IndexCheck::default());
    };
    if worktree.has_modules_dir(common_dir) {
        return Ok(IndexCheck {
            submodules: true,
            sparse: false,
        });
    }
    let index = gix::index::File::at_or_default(
        admin.join("index"),
        hash,
        true,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| UnreadableIndex(Box::new(e)))?;
    let sparse = index.is_sparse();
    let mut gitlinks = index
        .entries()
        .iter()
        .filter(|e| e.mode == Mode::COMMIT)
        .peekable();
    if gitlinks.peek().is_none() {
        return Ok(IndexCheck {
            submodules: false,
            sparse,
        });
    }
    let Ok(root) = crate::fs::Root::open(&worktree.path) else {
        return Ok(IndexCheck {
            submodules: false,
            sparse,
        });
    };
    let mut dirs = root.dirs();
    let submodules = gitlinks.any(|e| {
        crate::repo::worktrees::submodule_populated(&mut dirs, &worktree.path, e.path(&index))
    });
    Ok(IndexCheck { submodules, sparse })
}

/// The index of a work tree being removed could not be read.
#[derive(Debug, thiserror::Error)]
#[error("index file corrupt: {0}")]
pub struct UnreadableIndex(#[source] pub Box<dyn std::error::Error + Send + Sync>);
