//! `status.submoduleSummary`: the "Submodule changes to be committed:" and "Submodules changed
//! but not updated:" sections of the long format.
//!
//! git's `wt_longstatus_print_submodule_summary` does not compute them itself: it runs
//! `git submodule summary --cached|--files --for-status --summary-limit <n> [HEAD]` with
//! `GIT_INDEX_FILE` set to the index it read, and prints what that prints under a header. So
//! does git-par, with the same child and the same environment (the `-c` values are in
//! `GIT_CONFIG_PARAMETERS`), so that the commit lists, their limit, the warnings for missing
//! commits and the submodules' `ignore` settings are git's own.

use std::path::Path;
use std::process::Stdio;

/// The section for the staged submodule changes (`staged`, against HEAD) or the unstaged ones
/// (the index against the work tree), empty when `git submodule summary` prints nothing.
pub(super) fn section(
    repo: &gix::Repository,
    worktree: &Path,
    index_file: &Path,
    limit: i64,
    staged: bool,
) -> Vec<u8> {
    let mut cmd = gitpar::git_command();
    cmd.args(["submodule", "summary"])
        .arg(if staged { "--cached" } else { "--files" })
        .args(["--for-status", "--summary-limit", &limit.to_string()]);
    if staged {
        cmd.arg("HEAD");
    }
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    cmd.env("GIT_INDEX_FILE", absolute(index_file))
        .current_dir(worktree)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    // git has moved to the top of the work tree and made GIT_DIR absolute before it runs the
    // child; a relative one given to git-par would name another directory from there.
    if std::env::var_os("GIT_DIR").is_some() {
        cmd.env("GIT_DIR", absolute(repo.git_dir()))
            .env("GIT_WORK_TREE", absolute(worktree));
    }
    // As git's capture_command: what the child printed counts, not how it exited.
    let stdout = cmd.output().map(|o| o.stdout).unwrap_or_default();
    if stdout.is_empty() {
        return stdout;
    }
    let mut out: Vec<u8> = if staged {
        b"Submodule changes to be committed:\n\n".to_vec()
    } else {
        b"Submodules changed but not updated:\n\n".to_vec()
    };
    out.extend_from_slice(&stdout);
    out
}
