//! Running git for the bench, in one environment shared by the untimed setup and the timed contenders.
//!
//! A benchmark must not depend on who runs it or from where: no `GIT_DIR` of an enclosing hook, no
//! system-wide configuration, and no need for a configured identity on a fresh machine.

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};

/// Variables removed from every command's environment: each would redirect git to another repository,
/// index or configuration than the one the bench prepared.
pub(crate) const REMOVED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Variables set for every command: no system configuration (`/etc/gitconfig` differs between machines),
/// an identity in case anything records one, no credential prompt that would hang a run, and no lazy
/// fetch: a partial clone's missing blobs are left out of the commits the bench checks out
/// ([`crate::suite`]'s sources), and a contender that still asked a promisor remote for one would time the network.
pub(crate) const SET: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_AUTHOR_NAME", "git-par bench"),
    ("GIT_AUTHOR_EMAIL", "bench@git-par.invalid"),
    ("GIT_COMMITTER_NAME", "git-par bench"),
    ("GIT_COMMITTER_EMAIL", "bench@git-par.invalid"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// Returns a `git` command in `dir` with the bench's environment, stdin closed.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    for var in REMOVED {
        cmd.env_remove(var);
    }
    cmd.envs(SET.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null());
    cmd
}

/// Runs git in `dir` and returns its stdout; a failure carries git's stderr.
pub fn output<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> anyhow::Result<String> {
    output_with(dir, args, None, &[])
}

/// Runs git in `dir` with `input` on its stdin (if any) and `env` added to the bench's environment
/// (e.g. `GIT_INDEX_FILE` for a scratch index), and returns its stdout; a failure carries git's stderr.
pub fn output_with<S: AsRef<OsStr>>(
    dir: &Path,
    args: &[S],
    input: Option<&[u8]>,
    env: &[(&str, &OsStr)],
) -> anyhow::Result<String> {
    let describe = || {
        args.iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut cmd = command(dir);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("could not run `git {}` (is git installed?)", describe()))?;
    // Fed from a thread: git may fill its stdout pipe before it has read all its input.
    let feeder = match (input, child.stdin.take()) {
        (Some(input), Some(mut stdin)) => {
            let input = input.to_vec();
            Some(std::thread::spawn(move || stdin.write_all(&input)))
        }
        _ => None,
    };
    let out = child
        .wait_with_output()
        .with_context(|| format!("could not run `git {}`", describe()))?;
    if let Some(feeder) = feeder {
        // A write error is only the broken pipe of a git that exited early: its status says why.
        let _ = feeder.join();
    }
    if !out.status.success() {
        bail!(
            "`git {}` in {} failed ({}): {}",
            describe(),
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs git in `dir` and returns its stdout without the trailing newline (a commit id, a version).
pub fn line<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> anyhow::Result<String> {
    Ok(output(dir, args)?.trim_end().to_owned())
}

/// Add a detached work tree of `main` of the repository at `source` in `dir` (`-f`: also where
/// a work tree that was removed is still registered), by git's own parallel checkout: correct, and the fastest way git has to make a
/// start state that is not itself measured.
pub fn worktree_of_main(source: &Path, dir: &Path) -> anyhow::Result<()> {
    output(
        source,
        &[
            "-c".as_ref(),
            "checkout.workers=0".as_ref(),
            "-c".as_ref(),
            "checkout.thresholdForParallelism=0".as_ref(),
            "worktree".as_ref(),
            "add".as_ref(),
            "-q".as_ref(),
            "-f".as_ref(),
            "--detach".as_ref(),
            dir.as_os_str(),
            "main".as_ref(),
        ],
    )
    .map(drop)
}
