//! `reset --hard [<commit>]` as one transaction (git's `builtin/reset.c` without paths): the
//! work tree and index become the commit's tree (a forced update), `ORIG_HEAD` records where
//! `HEAD` was, and `HEAD` (or the branch it names) moves with git's reflog lines — logged even
//! when nothing moves, through a symbolic `HEAD`, as git does (a detached one that stays is
//! not). The caller says "HEAD is now at …" and then removes the branch state files
//! ([`crate::repo::state::remove_branch_state`]), in git's order.

use std::path::Path;

use bstr::ByteSlice;
use gix::refs::Target;
use gix::ObjectId;

use crate::ops::switch::{tree_of, Error};
use crate::ops::update::{self, Outcome, Policy};
use crate::repo::branch::{append_reflog, set_head_without_reflog};
use crate::repo::hooks::Env;
use crate::repo::reftx::{self, Update, Value};
use crate::sys::context::Context;
use crate::write::options::Options;

/// A resolved `reset --hard`.
pub struct Request<'a> {
    /// The commit to reset to.
    pub commit: ObjectId,
    /// The revision as given (`HEAD` when none was), for the reflog message.
    pub rev: &'a str,
    /// Workers, budget, submodules.
    pub options: Options,
    /// The work tree.
    pub worktree: &'a Path,
    /// The index file.
    pub index_path: &'a Path,
}

/// Reset the work tree, index and `HEAD` to `request.commit`. A refusal, a failure before
/// anything was written, and entries that could not be written are errors: in the last case
/// the index, `ORIG_HEAD` and `HEAD` stay as they were and what was written stays written, as
/// git's `reset` dies ("Could not reset index file to revision").
pub fn hard(
    repo: &gix::Repository,
    env: Env<'_>,
    request: &Request<'_>,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    let commit = request.commit;
    let old_commit = repo.head_commit().ok().map(|c| c.id);
    let old_tree = old_commit.map(|c| tree_of(repo, c)).transpose()?;
    let new_tree = tree_of(repo, commit)?;
    let options = Options {
        keep_index_on_failed_writes: true,
        prime_cache_tree: true,
        ..request.options.clone()
    };
    let outcome = update::update(
        repo,
        old_tree,
        new_tree,
        request.worktree,
        request.index_path,
        Policy::Force,
        &options,
        ctx,
    )?;
    let message = crate::repo::state::reset_reflog_message("updating HEAD", Some(request.rev));
    let branch = repo.head_name().ok().flatten();
    crate::repo::state::update_orig_head(repo, env, old_commit)?;
    // git's `update_ref("HEAD", commit, old)`: the files backend moves the branch HEAD is on,
    // with HEAD's log-only update first.
    let old = old_commit.map_or(Value::Null, Value::Id);
    let updates = match &branch {
        Some(b) => vec![
            Update::to("HEAD", Value::Id(commit)),
            Update {
                old,
                new: Value::Id(commit),
                name: b.as_bstr().to_str_lossy().into_owned(),
            },
        ],
        None => vec![Update {
            old,
            new: Value::Id(commit),
            name: "HEAD".into(),
        }],
    };
    reftx::transaction(repo, env, &updates, || {
        // git logs the reset even when nothing moves, through a symbolic HEAD (its log-only
        // update); a detached HEAD that stays is not updated at all, so not logged either. gix
        // skips such entries, so they are written here.
        set_head_without_reflog(repo, Target::Object(commit), true).map_err(Error::Head)?;
        if branch.is_some() || old_commit != Some(commit) {
            append_reflog(repo, "HEAD", old_commit, commit, &message)?;
        }
        if let Some(branch) = branch.as_ref().filter(|_| old_commit != Some(commit)) {
            append_reflog(
                repo,
                &branch.as_bstr().to_str_lossy(),
                old_commit,
                commit,
                &message,
            )?;
        }
        Ok::<_, Error>(())
    })?;
    Ok(outcome)
}
