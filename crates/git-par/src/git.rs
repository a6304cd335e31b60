//! Running git itself: the arguments git-par was given, to hand on to git, and a git child with
//! git-par's standard streams.

use std::ffi::OsString;
use std::path::Path;

use crate::exit::fatal;

/// git-par's own arguments (after the program name): the command line, or, run as `git`, what
/// the routing made of it (`transparent::route`: git's global options applied and taken out).
static OWN_ARGS: std::sync::OnceLock<Vec<OsString>> = std::sync::OnceLock::new();

/// The arguments git-par runs with (see [`OWN_ARGS`]): what a command handed whole to git passes
/// on, from the directory and environment git-par runs in.
pub(crate) fn own_args() -> Vec<OsString> {
    OWN_ARGS
        .get()
        .cloned()
        .unwrap_or_else(|| std::env::args_os().skip(1).collect())
}

/// Keep the arguments git-par runs with ([`own_args`]); the first call wins.
pub(crate) fn set_own_args(args: Vec<OsString>) {
    let _ = OWN_ARGS.set(args);
}

/// Where the call started, when git-par itself moved elsewhere (`-C DIR` run as `git`).
static STARTED_IN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Keep the directory the call started in, before git-par applies `-C` ([`git_from_start`]).
pub(crate) fn set_started_in(dir: std::path::PathBuf) {
    let _ = STARTED_IN.set(dir);
}

/// The directory the call started in, if git-par has been told it ([`set_started_in`]).
pub(crate) fn started_in() -> Option<&'static Path> {
    STARTED_IN.get().map(std::path::PathBuf::as_path)
}

/// A git command started where the call started, moved to git-par's current directory by
/// `-C`: git then knows the directory the user ran it in (`startup_info->original_cwd`, which
/// `clean` never removes), as if git had been run in git-par's place.
pub(crate) fn git_from_start() -> std::process::Command {
    let mut cmd = gitpar::git_command();
    if let (Some(start), Ok(now)) = (STARTED_IN.get(), crate::platform::current_dir()) {
        if *start != now {
            cmd.current_dir(start).arg("-C").arg(now);
        }
    }
    cmd
}

/// Run `git ARGS` with git-par's standard streams (git's output and errors are the user's),
/// in the current directory or, with `at = (dir, git_dir)`, in `dir` with `GIT_DIR=git_dir`.
/// Returns git's exit code (128 + the signal for a killed git: [`crate::platform::exit_code`]);
/// `Err` when git cannot start.
pub(crate) fn run_git(args: &[OsString], at: Option<(&Path, &Path)>) -> Result<u8, u8> {
    let mut cmd = gitpar::git_command();
    cmd.args(args);
    if let Some((dir, git_dir)) = at {
        cmd.current_dir(dir).env("GIT_DIR", git_dir);
    }
    let status = cmd
        .status()
        .map_err(|e| fatal(format!("cannot run git: {e}")))?;
    Ok(crate::platform::exit_code(status))
}
