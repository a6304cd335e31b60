//! The repository state that git's branch-moving commands clean up or record besides `HEAD`:
//! the merge, cherry-pick, revert and squash state files (`branch.c`'s `remove_branch_state`),
//! `ORIG_HEAD` (`builtin/reset.c`'s `reset_refs`), the reflog of an unborn branch left behind, and
//! what ends every branch switch (`switch_branches`: state files, then the `post-checkout` hook).

use std::path::Path;

use bstr::ByteSlice;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;

use crate::repo::Opened;

/// git's `remove_branch_state` (`branch.c`), run by `switch`/`checkout` after moving `HEAD`
/// (`verbose` unless `-q`) and by `reset` without paths (never verbose): an interrupted
/// cherry-pick or revert is cancelled (`sequencer_post_commit_cleanup`), `SQUASH_MSG` goes, and
/// so does the merge state ([`remove_merge_branch_state`]).
pub(crate) fn remove_branch_state(repo: &gix::Repository, verbose: bool) {
    let dir = repo.git_dir();
    let mut need_cleanup = false;
    for (name, what) in [
        (
            "CHERRY_PICK_HEAD",
            "cancelling a cherry picking in progress",
        ),
        ("REVERT_HEAD", "cancelling a revert in progress"),
    ] {
        if dir.join(name).is_file() {
            if delete_pseudoref(repo, name) && verbose {
                eprintln!("warning: {what}");
            }
            need_cleanup = true;
        }
    }
    delete_pseudoref(repo, "AUTO_MERGE");
    if need_cleanup && have_finished_the_last_pick(dir) {
        let seq = dir.join("sequencer");
        if seq.exists() && std::fs::remove_dir_all(&seq).is_err() {
            eprintln!("error: could not remove '{}'", seq.display());
        }
    }
    unlink(&dir.join("SQUASH_MSG"));
    remove_merge_branch_state(repo);
}

/// git's `remove_merge_branch_state`: `MERGE_HEAD`, `MERGE_RR`, `MERGE_MSG`, `MERGE_MODE`,
/// `AUTO_MERGE`, and a `MERGE_AUTOSTASH` saved as a stash entry (as `git merge --autostash` left
/// it), with git's words.
pub(crate) fn remove_merge_branch_state(repo: &gix::Repository) {
    let dir = repo.git_dir();
    for name in ["MERGE_HEAD", "MERGE_RR", "MERGE_MSG", "MERGE_MODE"] {
        unlink(&dir.join(name));
    }
    delete_pseudoref(repo, "AUTO_MERGE");
    save_autostash(repo, "MERGE_AUTOSTASH");
}

/// `unlink(2)`, ignoring errors as git does for these files.
fn unlink(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Delete the pseudo-ref `name` of the work tree's git directory and its reflog, as git's
/// `refs_delete_ref(…, REF_NO_DEREF)` does with the files backend, `reference-transaction`
/// hook included (`reftx.rs`). `true` when it existed.
fn delete_pseudoref(repo: &gix::Repository, name: &str) -> bool {
    let dir = repo.git_dir();
    crate::reftx::deletion(repo, name, crate::reftx::Value::Null, || {
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
/// (`git stash store`), and the ref goes.
fn save_autostash(repo: &gix::Repository, name: &str) {
    let path = repo.git_dir().join(name);
    let Ok(content) = std::fs::read(&path) else {
        return;
    };
    let oid = content.trim().to_str_lossy().into_owned();
    if oid.starts_with("ref:") {
        eprintln!("error: autostash reference is a symref");
        return;
    }
    let stored = std::process::Command::new("git")
        .args(["stash", "store", "-m", "autostash", "-q", &oid])
        .stdin(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if stored {
        eprintln!(
            "Autostash exists; creating a new stash entry.\n\
             Your changes are safe in the stash.\n\
             You can run \"git stash pop\" or \"git stash drop\" at any time."
        );
    } else {
        eprintln!("error: cannot store {oid}");
    }
    delete_pseudoref(repo, name);
}

/// The reflog message of `reset` (`set_reflog_message`): `$GIT_REFLOG_ACTION: <action>` when
/// that is set, else `reset: moving to <rev>` or `reset: <action>`.
pub(crate) fn reset_reflog_message(action: &str, rev: Option<&str>) -> String {
    match (std::env::var("GIT_REFLOG_ACTION"), rev) {
        (Ok(rla), _) => format!("{rla}: {action}"),
        (Err(_), Some(rev)) => format!("reset: moving to {rev}"),
        (Err(_), None) => format!("reset: {action}"),
    }
}

/// `reset_refs`' first half: `ORIG_HEAD` records the commit `HEAD` was at before the reset
/// (`old_head`); when `HEAD` did not resolve, an existing `ORIG_HEAD` is deleted. Errors are
/// reported as git's `UPDATE_REFS_MSG_ON_ERR` reports them and do not stop the reset; a
/// `reference-transaction` hook refusing the update does (git dies, 128).
pub(crate) fn update_orig_head(
    repo: &gix::Repository,
    old_head: Option<gix::ObjectId>,
) -> Result<(), u8> {
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
                message: reset_reflog_message("updating ORIG_HEAD", None).into(),
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
    let update = crate::reftx::Update {
        old: orig.map_or(crate::reftx::Value::Null, crate::reftx::Value::Id),
        new: old_head.map_or(crate::reftx::Value::Null, crate::reftx::Value::Id),
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
            eprintln!("error: unable to determine the committer: {e}");
            return Ok(());
        }
    };
    let apply = || {
        if let Err(e) = repo.edit_references_as([edit], committer) {
            eprintln!("error: cannot update ref 'ORIG_HEAD': {e}");
        }
        Ok(())
    };
    if old_head.is_none() {
        return crate::reftx::deletion(repo, "ORIG_HEAD", update.old, apply);
    }
    crate::reftx::transaction(repo, &[update], apply)
}

/// The end of every branch switch of `switch`/`checkout` after `HEAD` moved, in git's order
/// (`update_refs_for_switch`, then `switch_branches`): the reflog of an unborn branch that was
/// left (`old_branch`, a full name) goes when `HEAD` now names another branch, the branch state
/// files go ([`remove_branch_state`], verbose unless `quiet`), and the `post-checkout` hook runs
/// with the old and new commits and flag 1. A failing hook makes the command exit 1, as git's
/// `ret || writeout_error`; `status` is the switch's own result.
pub(crate) fn after_switch(
    opened: &Opened,
    old_branch: Option<&gix::refs::FullName>,
    old_commit: Option<gix::ObjectId>,
    new_commit: Option<gix::ObjectId>,
    quiet: bool,
    status: Result<(), u8>,
) -> Result<(), u8> {
    let repo = &opened.repo;
    if let Some(old) = old_branch {
        let now = repo
            .head_name()
            .ok()
            .flatten()
            .map(|n| n.as_bstr().to_str_lossy().into_owned());
        let old = old.as_bstr().to_str_lossy();
        let gone = repo
            .try_find_reference(old.as_ref())
            .ok()
            .flatten()
            .is_none();
        if now.is_some_and(|n| n != old) && gone {
            unlink(&repo.common_dir().join("logs").join(old.as_ref()));
        }
    }
    remove_branch_state(repo, !quiet);
    let rc = crate::hooks::post_checkout(opened, old_commit, new_commit, true);
    match status {
        Err(code) => Err(code),
        Ok(()) if rc != 0 => Err(1),
        Ok(()) => Ok(()),
    }
}

/// A commit's subject as git's one-line format prints it: decoded from the commit's `encoding`
/// header and written in `i18n.logOutputEncoding` (default UTF-8), so `HEAD is now at …` shows
/// a Latin-1 commit message as git does.
pub(crate) fn subject(repo: &gix::Repository, commit: gix::ObjectId) -> Vec<u8> {
    let Ok(commit) = repo.find_commit(commit) else {
        return Vec::new();
    };
    let Ok(decoded) = commit.decode() else {
        return Vec::new();
    };
    let raw = decoded.message_summary().to_vec();
    let declared = decoded.encoding.map(|e| e.to_str_lossy().into_owned());
    let output = repo
        .config_snapshot()
        .string("i18n.logOutputEncoding")
        .map(|s| s.to_str_lossy().into_owned());
    recode(&raw, declared.as_deref(), output.as_deref())
}

/// Re-encode `text` from `from` (default UTF-8) to `to` (default UTF-8), as git's
/// `reencode_string`: unknown encodings and equal ones leave the bytes as they are.
fn recode(text: &[u8], from: Option<&str>, to: Option<&str>) -> Vec<u8> {
    use gix::filter::plumbing::encoding::{Encoding, UTF_8};
    let lookup = |label: Option<&str>| {
        label
            .and_then(|l| Encoding::for_label(l.as_bytes()))
            .unwrap_or(UTF_8)
    };
    let (from, to) = (lookup(from), lookup(to));
    if from == to {
        return text.to_vec();
    }
    let (decoded, _, _) = from.decode(text);
    let (encoded, _, _) = to.encode(&decoded);
    encoded.into_owned()
}

/// `reset --hard`'s `HEAD is now at <abbrev> <subject>` on standard output, the subject in the
/// log output encoding (bytes, as git writes them).
pub(crate) fn print_new_head_line(repo: &gix::Repository, commit: gix::ObjectId) {
    use std::io::Write as _;
    let mut line = format!("HEAD is now at {}", crate::short(repo, commit)).into_bytes();
    let subject = subject(repo, commit);
    if !subject.is_empty() {
        line.push(b' ');
        line.extend_from_slice(&subject);
    }
    line.push(b'\n');
    let _ = std::io::stdout().write_all(&line);
}
