//! The repository state that git's branch-moving commands clean up or record besides `HEAD`:
//! the merge, cherry-pick, revert and squash state files (`branch.c`'s `remove_branch_state`)
//! and `ORIG_HEAD` (`builtin/reset.c`'s `reset_refs`). What git says on the way goes to the
//! caller's [`crate::repo::notice::Sink`]; every ref deletion is one of git's ref transactions
//! ([`crate::repo::reftx`]), so a `reference-transaction` hook may stop it.

use std::path::Path;

use bstr::ByteSlice;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;

use crate::repo::hooks::Env;
use crate::repo::notice::Notice;
use crate::repo::reftx::{self, Aborted, Update, Value};

/// git's `remove_branch_state` (`branch.c`), run by `switch`/`checkout` after moving `HEAD`
/// (`verbose` unless `-q`) and by `reset` without paths (never verbose): an interrupted
/// cherry-pick or revert is cancelled (`sequencer_post_commit_cleanup`), `SQUASH_MSG` goes, and
/// so does the merge state ([`remove_merge_branch_state`]).
pub fn remove_branch_state(
    repo: &gix::Repository,
    env: Env<'_>,
    verbose: bool,
) -> Result<(), Aborted> {
    let dir = repo.git_dir();
    let mut need_cleanup = false;
    for (name, notice) in [
        ("CHERRY_PICK_HEAD", Notice::CancelledCherryPick),
        ("REVERT_HEAD", Notice::CancelledRevert),
    ] {
        if dir.join(name).is_file() {
            if delete_pseudoref(repo, env, name)? && verbose {
                env.sink.notice(notice);
            }
            need_cleanup = true;
        }
    }
    delete_pseudoref(repo, env, "AUTO_MERGE")?;
    if need_cleanup && have_finished_the_last_pick(dir) {
        let seq = dir.join("sequencer");
        if seq.exists() && std::fs::remove_dir_all(&seq).is_err() {
            env.sink.notice(Notice::CouldNotRemove { path: seq });
        }
    }
    unlink(&dir.join("SQUASH_MSG"));
    remove_merge_branch_state(repo, env)
}

/// git's `remove_merge_branch_state`: `MERGE_HEAD`, `MERGE_RR`, `MERGE_MSG`, `MERGE_MODE`,
/// `AUTO_MERGE`, and a `MERGE_AUTOSTASH` saved as a stash entry (as `git merge --autostash` left
/// it).
pub fn remove_merge_branch_state(repo: &gix::Repository, env: Env<'_>) -> Result<(), Aborted> {
    let dir = repo.git_dir();
    for name in ["MERGE_HEAD", "MERGE_RR", "MERGE_MSG", "MERGE_MODE"] {
        unlink(&dir.join(name));
    }
    delete_pseudoref(repo, env, "AUTO_MERGE")?;
    save_autostash(repo, env, "MERGE_AUTOSTASH")
}

/// `unlink(2)`, ignoring errors as git does for these files.
fn unlink(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Delete the pseudo-ref `name` of the work tree's git directory and its reflog, as git's
/// `refs_delete_ref(…, REF_NO_DEREF)` does with the files backend, `reference-transaction`
/// hook included. `true` when it existed.
fn delete_pseudoref(repo: &gix::Repository, env: Env<'_>, name: &str) -> Result<bool, Aborted> {
    let dir = repo.git_dir();
    reftx::deletion(repo, env, name, Value::Null, || {
        let existed = std::fs::remove_file(dir.join(name)).is_ok();
        if existed {
            unlink(&dir.join("logs").join(name));
        }
        existed
    })
}

/// git's `have_finished_the_last_pick`: the sequencer's `todo` has at most one line left.
fn have_finished_the_last_pick(dir: &Path) -> bool {
    let Ok(todo) = std::fs::read(dir.join("sequencer/todo")) else {
        return false;
    };
    match todo.find_byte(b'\n') {
        None => true,
        Some(eol) => eol + 1 >= todo.len(),
    }
}

/// git's `save_autostash_ref`: the stash commit a merge saved in `name` becomes a stash entry
/// (`git stash store`, git's own command: the stash's reflog format is git's), and the ref goes.
fn save_autostash(repo: &gix::Repository, env: Env<'_>, name: &str) -> Result<(), Aborted> {
    let path = repo.git_dir().join(name);
    let Ok(content) = std::fs::read(&path) else {
        return Ok(());
    };
    let oid = content.trim().to_str_lossy().into_owned();
    if oid.starts_with("ref:") {
        env.sink.notice(Notice::AutostashSymref);
        return Ok(());
    }
    let stored = crate::sys::git::git_command()
        .args(["stash", "store", "-m", "autostash", "-q", &oid])
        .stdin(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    env.sink.notice(if stored {
        Notice::AutostashStored
    } else {
        Notice::AutostashNotStored { oid }
    });
    delete_pseudoref(repo, env, name).map(drop)
}

/// The reflog message of `reset` (`set_reflog_message`): `$GIT_REFLOG_ACTION: <action>` when
/// that is set, else `reset: moving to <rev>` or `reset: <action>`.
pub fn reset_reflog_message(action: &str, rev: Option<&str>) -> String {
    match (std::env::var("GIT_REFLOG_ACTION"), rev) {
        (Ok(rla), _) => format!("{rla}: {action}"),
        (Err(_), Some(rev)) => format!("reset: moving to {rev}"),
        (Err(_), None) => format!("reset: {action}"),
    }
}

/// `reset_refs`' first half: `ORIG_HEAD` records the commit `HEAD` was at before the reset
/// (`old_head`); when `HEAD` did not resolve, an existing `ORIG_HEAD` is deleted. A failed
/// update is a notice and does not stop the reset (git's `UPDATE_REFS_MSG_ON_ERR`); a
/// `reference-transaction` hook refusing it does (git dies, 128).
pub fn update_orig_head(
    repo: &gix::Repository,
    env: Env<'_>,
    old_head: Option<gix::ObjectId>,
) -> Result<(), Aborted> {
    let message = reset_reflog_message("updating ORIG_HEAD", None);
    update_orig_head_with(repo, env, old_head, &message)
}

/// [`update_orig_head`] with `message` in `ORIG_HEAD`'s reflog (kept when
/// `core.logAllRefUpdates=always`): `merge` writes a plain `updating ORIG_HEAD`, `reset`
/// prefixes `$GIT_REFLOG_ACTION`.
pub fn update_orig_head_with(
    repo: &gix::Repository,
    env: Env<'_>,
    old_head: Option<gix::ObjectId>,
    message: &str,
) -> Result<(), Aborted> {
    // git passes ORIG_HEAD's current value as the expected old one.
    let orig = repo
        .try_find_reference("ORIG_HEAD")
        .ok()
        .flatten()
        .and_then(|mut r| r.peel_to_id().ok().map(gix::Id::detach));
    let change = match old_head {
        Some(old) => Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected: PreviousValue::Any,
            new: Target::Object(old),
        },
        None if repo.git_dir().join("ORIG_HEAD").is_file() => Change::Delete {
            expected: PreviousValue::Any,
            log: RefLog::AndReference,
        },
        None => return Ok(()),
    };
    let update = Update {
        old: orig.map_or(Value::Null, Value::Id),
        new: old_head.map_or(Value::Null, Value::Id),
        name: "ORIG_HEAD".into(),
    };
    let edit = RefEdit {
        change,
        name: "ORIG_HEAD".try_into().expect("a valid ref name"),
        deref: false,
    };
    let committer = match repo.committer().transpose() {
        Ok(c) => c,
        Err(e) => {
            env.sink.notice(Notice::OrigHeadNotUpdated {
                error: format!("unable to determine the committer: {e}"),
            });
            return Ok(());
        }
    };
    let apply = || {
        if let Err(e) = repo.edit_references_as([edit], committer) {
            env.sink.notice(Notice::OrigHeadNotUpdated {
                error: format!("cannot update ref 'ORIG_HEAD': {e}"),
            });
        }
    };
    if old_head.is_none() {
        return reftx::deletion(repo, env, "ORIG_HEAD", update.old, apply);
    }
    reftx::transaction(repo, env, &[update], || {
        apply();
        Ok::<_, std::convert::Infallible>(())
    })
}

/// After a branch switch moved `HEAD` away from the unborn branch `old_branch` (a full name),
/// git's `update_refs_for_switch` removes that branch's reflog (an unborn branch may have one,
/// from `checkout -l --orphan`).
pub fn forget_unborn_reflog(repo: &gix::Repository, old_branch: &gix::refs::FullNameRef) {
    let now = repo
        .head_name()
        .ok()
        .flatten()
        .map(|n| n.as_bstr().to_str_lossy().into_owned());
    let old = old_branch.as_bstr().to_str_lossy();
    let gone = repo
        .try_find_reference(old.as_ref())
        .ok()
        .flatten()
        .is_none();
    if now.is_some_and(|n| n != old) && gone {
        unlink(&repo.common_dir().join("logs").join(old.as_ref()));
    }
}
