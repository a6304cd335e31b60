//! A branch switch as one transaction (git's `switch_branches`): the work tree and index are
//! updated (with `-m`, local changes merged into the new tree), the branch a `-c`/`-b` asks for
//! is created, `HEAD` moves with git's reflog line inside a ref transaction, then the branch
//! state files go and the `post-checkout` hook runs.
//!
//! The steps are methods of [`Switch`] that consume it in git's order — [`Switch::update`],
//! [`Updated::move_head`], [`Moved::finish`] — so the caller can say what git says between
//! them (the carried-over changes, "Switched to branch …") and git's order of messages, a hook's
//! output included, is kept. Which branch or commit to switch to is resolved by the caller (git's
//! revision syntax and `--guess`); everything after that is here.

use std::path::Path;

use bstr::ByteSlice;
use gix::refs::{FullName, Target};
use gix::ObjectId;

use crate::ops::update;
use crate::ops::update::{Outcome as UpdateOutcome, Policy};
use crate::repo::branch::{append_reflog, set_head_without_reflog, ReflogError};
use crate::repo::create_branch::{self, NewBranch};
use crate::repo::hooks::Env;
use crate::repo::reftx::{self, Update, Value};
use crate::sys::context::Context;
use crate::write::options::Options;

/// Where `HEAD` goes.
#[derive(Debug, Clone)]
pub enum Head {
    /// An existing branch (short name).
    Branch(String),
    /// A branch created (or with `-B`/`-C` reset) at the target commit.
    NewBranch(NewBranch),
    /// Detached at the target commit; `name` as git names the revision (for the reflog and
    /// messages), `explicit` when `--detach` asked for it (then git gives no advice).
    Detached {
        /// The revision as given.
        name: String,
        /// `--detach` was given.
        explicit: bool,
    },
    /// `checkout [-f] [HEAD]`: `HEAD` stays as it is (no ref update, no reflog).
    Unchanged,
    /// `--orphan NEW`: `HEAD` names the branch `NEW`, yet to be born (a full ref name).
    Orphan(FullName),
}

/// A resolved branch switch.
pub struct Request<'a> {
    /// Where `HEAD` goes.
    pub head: Head,
    /// The commit checked out (`None`: the empty tree, `switch --orphan`).
    pub commit: Option<ObjectId>,
    /// `-f`: local changes are discarded.
    pub force: bool,
    /// `-m`: local changes a safe switch would refuse are to be merged (by git:
    /// [`Error::MergeIsGits`]).
    pub merge: bool,
    /// Workers, budget, submodules, ignored files (see [`Options`]).
    pub options: Options,
    /// The work tree.
    pub worktree: &'a Path,
    /// The index file.
    pub index_path: &'a Path,
    /// `-q`: no "set up to track" notice, no cancelled-cherry-pick warnings.
    pub quiet: bool,
    /// The command's name in the reflog (`checkout: moving from A to B`).
    pub verb: &'a str,
}

/// Why a switch stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The update of the work tree and index refused or failed.
    #[error(transparent)]
    Update(#[from] update::Error),
    /// `-m`: the two-way switch would lose local changes, and they are to be merged into the
    /// new tree. That merge is git's (merge-ort's renames, directory/file conflicts, `~local`
    /// names, labels and index): nothing was changed, and the caller hands the whole call to
    /// git, which makes the same two-way attempt and then merges.
    #[error("local changes to merge into the new tree")]
    MergeIsGits,
    /// `switch --discard-changes` without `--force`: an untracked file, or a directory holding
    /// untracked files, is where a path the index does not have goes (git's reset to the new
    /// tree protects them: `UNPACK_RESET_PROTECT_UNTRACKED`, 128); nothing was changed.
    #[error("untracked working tree files would be overwritten")]
    UntrackedInTheWay {
        /// Untracked files the new tree would overwrite.
        untracked: Vec<bstr::BString>,
        /// Directories the new tree would replace that hold untracked files.
        untracked_removed: Vec<bstr::BString>,
    },
    /// The commit or its tree could not be read.
    #[error("unable to read commit {commit}: {source}")]
    Commit {
        /// The commit.
        commit: ObjectId,
        /// gix's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The new branch could not be created.
    #[error(transparent)]
    Branch(#[from] create_branch::Error),
    /// `HEAD` could not be written.
    #[error("unable to update HEAD: {0}")]
    Head(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// `HEAD`'s reflog line could not be written.
    #[error(transparent)]
    Reflog(#[from] ReflogError),
    /// The `reference-transaction` hook refused: `HEAD` did not move (git dies, 128).
    #[error("ref updates aborted by hook")]
    AbortedByHook,
}

impl<E: Into<Error>> From<reftx::Error<E>> for Error {
    fn from(e: reftx::Error<E>) -> Self {
        match e {
            reftx::Error::AbortedByHook => Error::AbortedByHook,
            reftx::Error::Apply(e) => e.into(),
        }
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// Where `HEAD` was before the switch.
#[derive(Debug, Clone)]
pub struct OldHead {
    /// The branch `HEAD` named (a full name), `None` when detached.
    pub branch: Option<FullName>,
    /// The commit `HEAD` resolved to, `None` on an unborn branch.
    pub commit: Option<ObjectId>,
}

impl OldHead {
    /// Where `HEAD` is now.
    pub fn of(repo: &gix::Repository) -> OldHead {
        OldHead {
            branch: repo.head_name().ok().flatten(),
            commit: repo.head_commit().ok().map(|c| c.id),
        }
    }

    /// How git names it in the reflog: the branch's short name, else the commit, else
    /// `(invalid)`.
    fn description(&self) -> String {
        self.branch
            .as_ref()
            .map(|n| n.shorten().to_str_lossy().into_owned())
            .or_else(|| self.commit.map(|c| c.to_string()))
            .unwrap_or_else(|| "(invalid)".into())
    }
}

/// A switch about to run.
pub struct Switch<'a> {
    repo: &'a gix::Repository,
    env: Env<'a>,
    request: Request<'a>,
    old: OldHead,
}

/// The tree of `commit`.
pub fn tree_of(repo: &gix::Repository, commit: ObjectId) -> Result<ObjectId, Error> {
    let err = |source: Box<dyn std::error::Error + Send + Sync>| Error::Commit { commit, source };
    repo.find_commit(commit)
        .map_err(|e| err(Box::new(e)))?
        .tree_id()
        .map(gix::Id::detach)
        .map_err(|e| err(Box::new(e)))
}

impl<'a> Switch<'a> {
    /// Begin the switch `request` in `repo`, with hooks and notices as `env` says.
    pub fn new(repo: &'a gix::Repository, env: Env<'a>, mut request: Request<'a>) -> Switch<'a> {
        let old = OldHead::of(repo);
        // git lists the changes a safe switch carried over, unless `-q`.
        request.options.report_local_changes = !request.force && !request.quiet;
        Switch {
            repo,
            env,
            request,
            old,
        }
    }

    /// Where `HEAD` was.
    pub fn old_head(&self) -> &OldHead {
        &self.old
    }

    /// Step 1: update the work tree and index to the target (git's `merge_working_tree`). A
    /// refusal (local changes, untracked files) has changed nothing; per-path failures are in
    /// the outcome, and the switch goes on as git's does.
    pub fn update(self, ctx: &Context<'_>) -> Result<Updated<'a>, Error> {
        let repo = self.repo;
        let req = &self.request;
        let old_tree = self.old.commit.map(|c| tree_of(repo, c)).transpose()?;
        let new_tree = match req.commit {
            Some(c) => tree_of(repo, c)?,
            None => repo.object_hash().empty_tree(),
        };
        // git's `only_merge_on_switching_branches`: `switch -c NEW` and `checkout -b NEW`
        // without a start point leave the index and work tree exactly as they are.
        let skip = matches!(&req.head, Head::NewBranch(nb) if !nb.update);
        let policy = if req.force {
            Policy::Force
        } else {
            Policy::Safe
        };
        let mut options = req.options.clone();
        options.sparse_warnings_refuse = req.merge && old_tree.is_some();
        let run = |policy| {
            update::update(
                repo,
                old_tree,
                new_tree,
                req.worktree,
                req.index_path,
                policy,
                &options,
                ctx,
            )
        };
        let updated = if skip {
            Ok(UpdateOutcome::default())
        } else {
            run(policy)
        };
        let (outcome, local_changes) = match (req.merge, updated) {
            (_, Ok(mut outcome)) => {
                let local = std::mem::take(&mut outcome.local_changes);
                (outcome, local)
            }
            (true, Err(update::Error::WouldLose { .. })) if old_tree.is_some() => {
                return Err(Error::MergeIsGits);
            }
            (
                false,
                Err(update::Error::WouldLose {
                    local,
                    untracked,
                    untracked_removed,
                    ..
                }),
            ) if req.options.protect_untracked && local.is_empty() => {
                return Err(Error::UntrackedInTheWay {
                    untracked,
                    untracked_removed,
                });
            }
            (_, Err(e)) => return Err(e.into()),
        };
        Ok(Updated {
            switch: self,
            outcome,
            local_changes,
        })
    }
}

/// The work tree and index were updated; `HEAD` has not moved.
pub struct Updated<'a> {
    switch: Switch<'a>,
    /// What the update did (entries written, per-path errors, sparse warnings).
    pub outcome: UpdateOutcome,
    /// The changes carried over, as git's switch lists them (`M`/`A`/`D`/`T` and the path).
    pub local_changes: Vec<(char, bstr::BString)>,
}

impl<'a> Updated<'a> {
    /// Step 2 (git's `update_refs_for_switch`): create the new branch, then move `HEAD` with
    /// git's reflog line ("`<verb>`: moving from A to B") in one ref transaction. A detached
    /// `HEAD` that stays on its commit gets no reflog line, as in git.
    pub fn move_head(self) -> Result<Moved<'a>, Error> {
        let Switch {
            repo,
            env,
            ref request,
            ref old,
        } = self.switch;
        let commit = request.commit;
        if let (Head::NewBranch(nb), Some(commit)) = (&request.head, commit) {
            create_branch::create(repo, env, nb, commit, request.quiet)?;
        }
        if let Head::Orphan(full) = &request.head {
            point_head_at(repo, env, full.clone())?;
            return Ok(Moved {
                switch: self.switch,
                outcome: self.outcome,
            });
        }
        let symbolic = |short: &str| -> Result<(String, FullName), Error> {
            let full = format!("refs/heads/{short}");
            let name = full
                .as_str()
                .try_into()
                .map_err(|_| Error::Branch(create_branch::Error::InvalidName(short.to_owned())))?;
            Ok((full, name))
        };
        let (new_desc, target, value) = match &request.head {
            Head::Branch(b) => {
                let (full, name) = symbolic(b)?;
                (
                    b.clone(),
                    Some(Target::Symbolic(name)),
                    Value::Symbolic(full),
                )
            }
            Head::NewBranch(nb) => {
                let (full, name) = symbolic(&nb.name)?;
                (
                    nb.name.clone(),
                    Some(Target::Symbolic(name)),
                    Value::Symbolic(full),
                )
            }
            Head::Detached { name, .. } => {
                let c = commit.expect("a detached HEAD names a commit");
                (name.clone(), Some(Target::Object(c)), Value::Id(c))
            }
            Head::Unchanged | Head::Orphan(_) => (String::new(), None, Value::Null),
        };
        if let Some(target) = target {
            // git's `update_refs_for_switch` runs its transaction (and the hook) for a detached
            // HEAD that stays where it is too; only the files backend then writes nothing.
            let stays_detached = matches!(request.head, Head::Detached { .. })
                && old.branch.is_none()
                && old.commit == commit;
            let message = format!(
                "{}: moving from {} to {new_desc}",
                request.verb,
                old.description()
            );
            reftx::transaction(repo, env, &[Update::to("HEAD", value)], || {
                if stays_detached {
                    return Ok(());
                }
                // HEAD moves without gix's reflog (it cannot give a symbolic HEAD its previous
                // commit); the line git writes is appended here. What HEAD names now: a branch
                // `-B` just reset under it has moved already.
                let head_was = repo.head_id().ok().map(gix::Id::detach);
                set_head_without_reflog(repo, target, false).map_err(Error::Head)?;
                if let Some(c) = commit {
                    append_reflog(repo, "HEAD", head_was, c, &message)?;
                }
                Ok::<_, Error>(())
            })?;
        }
        Ok(Moved {
            switch: self.switch,
            outcome: self.outcome,
        })
    }
}

/// `HEAD` has moved; the state files and the hook are left.
pub struct Moved<'a> {
    switch: Switch<'a>,
    /// What the update did.
    pub outcome: UpdateOutcome,
}

impl Moved<'_> {
    /// Where `HEAD` was before the switch.
    pub fn old_head(&self) -> &OldHead {
        &self.switch.old
    }

    /// The switch as requested.
    pub fn request(&self) -> &Request<'_> {
        &self.switch.request
    }

    /// Step 3, the end of git's `switch_branches`: the reflog of an unborn branch that was
    /// left goes, the branch state files go (`state::remove_branch_state`, verbose unless
    /// `quiet`), and `post-checkout <old> <new> 1` runs. Returns the hook's status, which git
    /// folds into its exit code.
    pub fn finish(self) -> Result<i32, Error> {
        let Switch {
            repo,
            env,
            request,
            old,
        } = self.switch;
        if let Some(branch) = &old.branch {
            crate::repo::state::forget_unborn_reflog(repo, branch.as_ref());
        }
        crate::repo::state::remove_branch_state(repo, env, !request.quiet)?;
        Ok(crate::repo::hooks::post_checkout(
            repo,
            env.launch,
            old.commit,
            request.commit,
            true,
            env.sink,
        ))
    }
}

/// Point `HEAD` at the branch `full`, which does not exist yet, in one ref transaction: git's
/// `switch_unborn_to_new_branch` (`-b NEW` on an unborn `HEAD`) and the end of `--orphan`. git
/// writes no reflog entry for a symbolic ref whose target does not resolve.
pub fn point_head_at(repo: &gix::Repository, env: Env<'_>, full: FullName) -> Result<(), Error> {
    let value = Value::Symbolic(full.as_bstr().to_string());
    reftx::transaction(repo, env, &[Update::to("HEAD", value)], || {
        set_head_without_reflog(repo, Target::Symbolic(full), false).map_err(Error::Head)
    })?;
    Ok(())
}
