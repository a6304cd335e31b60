//! `git par worktree remove [-f | --force [-f]] <worktree>`: git's `remove_worktree`, with the
//! local-change check made by the engine's parallel status and the work tree deleted by worker
//! threads ([`gitpar::remove_worktree`]).
//!
//! The checks are git's, in git's order and words: the work tree found by name or path, not
//! the main one, not locked (unless `-f -f`), its registration valid, and, without `--force`,
//! no submodules and nothing `git status --porcelain --ignore-submodules=none` would list. A
//! work tree whose directory is gone only loses its registration. What git-par does not decide
//! itself goes to git whole, before anything is deleted: usage git's parse-options reports
//! (`-h`, an unknown option, a missing or extra argument), a registration that does not
//! validate (git's message names its paths as git holds them), an index or a status the engine
//! cannot read, a sparse index (git's checks read it without expanding it, or expand it with a
//! hint, as the repository the command runs in decides). A status the engine hands to git (an
//! fsmonitor daemon), and any status while trace2 is on (whose events the status git's check
//! runs writes), is run by git exactly as git's `check_clean_worktree` runs it.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use gitpar::repo::worktrees::{self, Worktree};

use crate::exit::fatal;
use crate::gitopts;

/// git's exit status when `remove_worktree` returns -1 (a deletion failed).
const DELETE_FAILED: u8 = 255;

/// Run `git par worktree remove ARGS` (the arguments after `remove`).
pub(crate) fn remove(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let parsed = gitopts::parse(&args, gitopts::WORKTREE_REMOVE);
    if parsed.help || parsed.unreadable || parsed.positionals.len() != 1 {
        return Err(hand_to_git("usage git's parse-options answers", &args));
    }
    let force = force_count(&parsed);
    let arg = parsed.positionals[0].clone();
    let name = arg.to_string_lossy().into_owned();
    let opened = crate::repo::open(overrides)?;
    let repo = &opened.repo;
    // Resolved: from a linked work tree it is `worktrees/<id>/../..`, gone with `<id>`.
    let common = crate::platform::canonicalize(repo.common_dir())
        .unwrap_or_else(|_| repo.common_dir().to_owned());
    let ignore_case = repo
        .config_snapshot()
        .boolean("core.ignoreCase")
        .unwrap_or(false);
    let list = worktrees::list(&common).map_err(|e| {
        fatal(format!(
            "cannot read the work trees of '{}': {e}",
            common.display()
        ))
    })?;
    let Some(wt) = worktrees::find(&list, Path::new(&arg), &git_cwd(&opened), ignore_case) else {
        return Err(fatal(format!("'{name}' is not a working tree")));
    };
    if wt.is_main() {
        return Err(fatal(format!("'{name}' is a main working tree")));
    }
    check_lock(wt, &common, force)?;
    if wt.validate(&common, ignore_case).is_err() {
        return Err(hand_to_git("its registration does not validate", &args));
    }
    gitpar::sys::phase::mark("work tree validated");
    // git's `file_exists`: a missing work tree only loses its registration.
    let present = std::fs::symlink_metadata(&wt.path).is_ok();
    if present && force == 0 {
        check_clean(wt, &common, repo.object_hash(), &name, overrides, &args)?;
        gitpar::sys::phase::mark("work tree checked clean");
    }
    delete(wt, &common)
}

/// `-f`/`--force` as git's `OPT__FORCE` counts it: each one adds one, `--no-force` resets.
fn force_count(parsed: &gitopts::Parsed) -> usize {
    parsed.count("force")
}

/// Where git resolves a relative `<worktree>`: the current directory, unless git moved to the
/// top of the work tree because the current directory is outside it (`GIT_WORK_TREE`,
/// `core.worktree`), where it then resolves it.
fn git_cwd(opened: &crate::repo::Opened) -> PathBuf {
    let cwd = crate::platform::current_dir().unwrap_or_default();
    match &opened.workdir {
        Some(top) if !cwd.starts_with(top) => top.clone(),
        _ => cwd,
    }
}

/// git's lock check: a locked work tree is removed only with `-f -f`.
fn check_lock(wt: &Worktree, common: &Path, force: usize) -> Result<(), u8> {
    if force >= 2 {
        return Ok(());
    }
    match wt.lock_reason(common).map_err(fatal)? {
        None => Ok(()),
        Some(reason) if reason.is_empty() => Err(fatal(
            "cannot remove a locked working tree;\nuse 'remove -f -f' to override or unlock first",
        )),
        Some(reason) => Err(fatal(format!(
            "cannot remove a locked working tree, lock reason: {reason}\nuse 'remove -f -f' to override or unlock first"
        ))),
    }
}

/// git's `check_clean_worktree` for the work tree `wt` (`name` as the user gave it): no
/// populated submodules, and nothing `git status --porcelain --ignore-submodules=none` would
/// list, asked of the engine's parallel status.
fn check_clean(
    wt: &Worktree,
    common: &Path,
    hash: gix::hash::Kind,
    name: &str,
    overrides: &[String],
    args: &[OsString],
) -> Result<(), u8> {
    let index = match gitpar::remove_worktree::check_index(wt, common, hash) {
        Ok(index) => index,
        Err(_) => return Err(hand_to_git("the work tree's index cannot be read", args)),
    };
    if index.sparse {
        // git reads it in the repository the command runs in, expands it there unless that one
        // allows a sparse index too (with git's hint), and its status reads it as it is.
        return Err(hand_to_git("the work tree's index is sparse", args));
    }
    if index.submodules {
        return Err(fatal(
            "working trees containing submodules cannot be moved or removed",
        ));
    }
    let opts = gix::open::Options::default()
        .config_overrides(overrides.iter().cloned())
        .with(gix::sec::Trust::Full);
    let Ok(wt_repo) = gix::open_opts(&wt.path, opts) else {
        return Err(hand_to_git(
            "the work tree's repository cannot be opened",
            args,
        ));
    };
    if crate::trace2::enabled(&wt_repo.config_snapshot()) {
        // git's check runs a git status, whose trace2 events (regions of the index it reads, its
        // sparse index not expanded: t1092) are in the trace; the engine writes none.
        return clean_or_refuse(git_status_is_empty(wt, name, "trace2 is on")?, name);
    }
    let index_path = crate::repo::index_path(wt_repo.git_dir(), Some(&wt.path), &wt.path);
    let clean = match crate::status::porcelain_is_empty(&wt_repo, &wt.path, &index_path) {
        Ok(clean) => clean,
        Err(crate::status::NoAnswer::Delegate(why)) => git_status_is_empty(wt, name, why)?,
        Err(crate::status::NoAnswer::Failed(why)) => {
            return Err(hand_to_git(&format!("its status failed: {why}"), args))
        }
    };
    clean_or_refuse(clean, name)
}

/// git's refusal of a work tree with local changes (`name` as the user gave it).
fn clean_or_refuse(clean: bool, name: &str) -> Result<(), u8> {
    if clean {
        Ok(())
    } else {
        Err(fatal(format!(
            "'{name}' contains modified or untracked files, use --force to delete it"
        )))
    }
}

/// git's own `git status --porcelain --ignore-submodules=none`, run as `check_clean_worktree`
/// runs it (in the work tree, `GIT_DIR` its `.git`, `GIT_WORK_TREE` itself), for a status the
/// engine hands to git (`why`): true when it printed nothing; git's messages when it could not
/// run or failed.
fn git_status_is_empty(wt: &Worktree, name: &str, why: &str) -> Result<bool, u8> {
    if std::env::var_os("GIT_PAR_TRACE").is_some() {
        eprintln!("git-par: handing the clean check's status to git: {why}");
    }
    let mut child = gitpar::git_command()
        .args(["status", "--porcelain", "--ignore-submodules=none"])
        .env("GIT_DIR", wt.path.join(".git"))
        .env("GIT_WORK_TREE", &wt.path)
        .current_dir(&wt.path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            fatal(format!(
                "failed to run 'git status' on '{name}': {}",
                crate::repo::strerror(&e)
            ))
        })?;
    let mut byte = [0u8; 1];
    let mut out = child.stdout.take().expect("piped above");
    let read = loop {
        match out.read(&mut byte) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other.unwrap_or(0),
        }
    };
    drop(out);
    let status = child
        .wait()
        .map_err(|e| fatal(format!("failed to run 'git status' on '{name}': {e}")))?;
    if read > 0 {
        return Ok(false);
    }
    let code = crate::platform::exit_code(status);
    if code != 0 {
        // git's `die_errno`, errno untouched since the child was waited for.
        return Err(fatal(format!(
            "failed to run 'git status' on '{name}', code {code}: {}",
            crate::repo::strerror(&std::io::Error::from_raw_os_error(0))
        )));
    }
    Ok(true)
}

/// The deletion, after the checks: the work tree by worker threads, then its registration;
/// each failure is git's `error: failed to delete '<path>': <cause>`, and git's exit status.
fn delete(wt: &Worktree, common: &Path) -> Result<(), u8> {
    let progress = gitpar::Progress::default();
    let ctx = gitpar::Context {
        progress: &progress,
        interrupt: &crate::interrupt::INTERRUPTED,
    };
    let opts = gitpar::remove_worktree::Options::default();
    let outcome = match gitpar::remove_worktree::remove(wt, common, &opts, &ctx) {
        Ok(outcome) => outcome,
        Err(gitpar::remove_worktree::Error::Interrupted) => {
            return Err(crate::interrupt::EXIT_CODE)
        }
        Err(e) => return Err(fatal(e)),
    };
    if let (Some(removed), true) = (outcome.removed, std::env::var_os("GIT_PAR_TRACE").is_some()) {
        eprintln!(
            "git-par: worktree remove: {} files and {} directories deleted by {} threads",
            removed.files, removed.dirs, removed.threads
        );
    }
    for failure in &outcome.failures {
        eprintln!("error: {failure}");
    }
    if outcome.failures.is_empty() {
        Ok(())
    } else {
        Err(DELETE_FAILED)
    }
}

/// Hand the whole `worktree remove ARGS` to git, before anything was deleted (why: under
/// `GIT_PAR_TRACE`).
fn hand_to_git(why: &str, args: &[OsString]) -> u8 {
    let mut git: Vec<OsString> = vec!["worktree".into(), "remove".into()];
    git.extend(args.iter().cloned());
    crate::patch::hand_to_git("worktree remove", why, &git)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(args: &[&str]) -> usize {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        force_count(&gitopts::parse(&args, gitopts::WORKTREE_REMOVE))
    }

    #[test]
    fn force_counts_as_git_counts_it() {
        assert_eq!(count(&["wt"]), 0);
        assert_eq!(count(&["-f", "wt"]), 1);
        assert_eq!(count(&["-ff", "wt"]), 2);
        assert_eq!(count(&["--force", "-f", "wt"]), 2);
        assert_eq!(count(&["-f", "--no-force", "--forc", "wt"]), 1);
        assert_eq!(count(&["wt", "-f", "-f"]), 2);
        assert_eq!(count(&["--", "-f"]), 0);
    }
}
