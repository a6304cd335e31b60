//! A fast-forward of `HEAD` (git's `merge` when the merged commit descends from `HEAD`, and the
//! merge step of `pull`), in git's order: `ORIG_HEAD` records `HEAD`
//! ([`record_orig_head`], before anything else moves), the work tree and index go from `HEAD`'s
//! tree to the target's as git's `checkout_fast_forward` takes them (a two-way merge that keeps
//! local changes and refuses to lose them or untracked files: [`update()`]), then `HEAD` (and the
//! branch it names) moves with git's reflog line ([`move_head`]). The caller prints what git
//! prints between the steps ("Updating a..b", "Fast-forward", the diffstat) and runs
//! `post-merge` ([`post_merge`]).

use std::path::Path;

use bstr::ByteSlice;
use gix::refs::Target;
use gix::ObjectId;

use crate::ops::switch::{tree_of, Error};
use crate::ops::update::{self, Outcome, Policy};
use crate::repo::branch::{append_reflog, set_head_without_reflog};
use crate::repo::hooks::Env;
use crate::repo::reftx::{self, Aborted, Update, Value};
use crate::sys::context::Context;
use crate::write::options::Options;

/// How two commits are related, as `git merge` decides what to do with one merged commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The merged commit is `HEAD` or one of its ancestors: "Already up to date."
    UpToDate,
    /// `HEAD` is an ancestor of the merged commit: a fast-forward.
    FastForward,
    /// Anything else (diverged, unrelated, several merge bases): a real merge.
    Diverged,
}

/// How `theirs` relates to `head`: git's merge bases of the two, as `cmd_merge` reads them (one
/// base equal to `theirs` is up to date, one base equal to `head` a fast-forward).
pub fn relation(
    repo: &gix::Repository,
    head: ObjectId,
    theirs: ObjectId,
) -> Result<Relation, Box<dyn std::error::Error + Send + Sync>> {
    if head == theirs {
        return Ok(Relation::UpToDate);
    }
    let bases: Vec<ObjectId> = repo
        .merge_bases_many(head, &[theirs])?
        .into_iter()
        .map(gix::Id::detach)
        .collect();
    Ok(match bases.as_slice() {
        [only] if *only == theirs => Relation::UpToDate,
        [only] if *only == head => Relation::FastForward,
        _ => Relation::Diverged,
    })
}

/// `ORIG_HEAD` set to `head` as `cmd_merge` sets it before it merges (reflog message
/// `updating ORIG_HEAD`), inside git's ref transaction.
pub fn record_orig_head(
    repo: &gix::Repository,
    env: Env<'_>,
    head: ObjectId,
) -> Result<(), Aborted> {
    crate::repo::state::update_orig_head_with(repo, env, Some(head), "updating ORIG_HEAD")
}

/// The work tree and index from `head`'s tree to `theirs`'s, as git's `checkout_fast_forward`
/// updates them (`twoway_merge`, local changes kept, refusals before anything is written).
/// `options.overwrite_ignore` is `merge --[no-]overwrite-ignore`. `HEAD` does not move. Entries
/// that cannot be written fail it ([`crate::ops::update::Error::Checkout`]), the index as it was
/// and what was written left written.
#[allow(clippy::too_many_arguments)]
pub fn update(
    repo: &gix::Repository,
    head: ObjectId,
    theirs: ObjectId,
    worktree: &Path,
    index_path: &Path,
    options: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    let old_tree = tree_of(repo, head)?;
    let new_tree = tree_of(repo, theirs)?;
    let options = Options {
        // merge lists no carried-over changes, unlike a branch switch.
        report_local_changes: false,
        // An entry that cannot be written fails `checkout_fast_forward` (`unpack_trees` returns
        // -2): git keeps its index, does not move HEAD and the merge exits 1.
        keep_index_on_failed_writes: true,
        ..options.clone()
    };
    Ok(update::update(
        repo,
        Some(old_tree),
        new_tree,
        worktree,
        index_path,
        Policy::Safe,
        &options,
        ctx,
    )?)
}

/// `HEAD` (and the branch it names) from `old` to `new`, with `message` in the reflogs of both,
/// as git's `update_ref(msg, "HEAD", new, old)` writes them with the files backend.
pub fn move_head(
    repo: &gix::Repository,
    env: Env<'_>,
    old: ObjectId,
    new: ObjectId,
    message: &str,
) -> Result<(), Error> {
    let branch = repo.head_name().ok().flatten();
    let updates = match &branch {
        Some(b) => vec![
            Update::to("HEAD", Value::Id(new)),
            Update {
                old: Value::Id(old),
                new: Value::Id(new),
                name: b.as_bstr().to_str_lossy().into_owned(),
            },
        ],
        None => vec![Update {
            old: Value::Id(old),
            new: Value::Id(new),
            name: "HEAD".into(),
        }],
    };
    reftx::transaction(repo, env, &updates, || {
        set_head_without_reflog(repo, Target::Object(new), true).map_err(Error::Head)?;
        append_reflog(repo, "HEAD", Some(old), new, message)?;
        if let Some(branch) = &branch {
            append_reflog(
                repo,
                &branch.as_bstr().to_str_lossy(),
                Some(old),
                new,
                message,
            )?;
        }
        Ok::<_, Error>(())
    })?;
    Ok(())
}

/// The `post-merge` hook with git's argument (`1` after a squash, `0` otherwise); its status,
/// which `git merge` ignores.
pub fn post_merge(repo: &gix::Repository, env: Env<'_>, squash: bool) -> i32 {
    let args = [if squash { "1" } else { "0" }.to_owned()];
    crate::repo::hooks::run(repo, "post-merge", &args, env.launch, env.sink)
}
