//! `-p/--patch`: interactive hunk selection is git's, so `git par checkout -p`, `restore -p` and
//! `reset -p` hand the call to git unchanged. This is git-par's one deliberate delegation: the
//! interactive loop writes one hunk at a time and has nothing to parallelise.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;

/// The subcommands whose `-p/--patch` git handles.
const PATCH_COMMANDS: &[&str] = &["checkout", "restore", "reset"];

/// If `args` (without the program name) ask for `-p/--patch` of a checkout, restore or reset, the
/// arguments to give git: the same ones, `-c name=value` included. `None` otherwise.
pub fn delegated(args: &[OsString]) -> Option<Vec<OsString>> {
    let mut i = 0;
    // git-par's own global options: `-c name=value` (or `-cname=value`), as git's.
    while let Some(arg) = args.get(i) {
        if arg == "-c" {
            i += 2;
        } else if arg
            .to_str()
            .is_some_and(|a| a.starts_with("-c") && a.len() > 2)
        {
            i += 1;
        } else {
            break;
        }
    }
    let command = args.get(i)?.to_str()?;
    if !PATCH_COMMANDS.contains(&command) {
        return None;
    }
    let wants_patch = args[i + 1..]
        .iter()
        .take_while(|a| a.as_os_str() != OsStr::new("--"))
        .any(|a| a == "-p" || a == "--patch");
    wants_patch.then(|| args.to_vec())
}

/// Replace this process by `git ARGS`; returns only if git could not be started.
pub fn exec_git(args: &[OsString]) -> std::io::Error {
    std::process::Command::new("git").args(args).exec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn patch_calls_are_recognised_with_or_without_config() {
        assert!(delegated(&v(&["checkout", "-p", "HEAD", "--", "f"])).is_some());
        assert!(delegated(&v(&["-c", "a.b=1", "restore", "--patch", "f"])).is_some());
        assert!(delegated(&v(&["-ca.b=1", "reset", "-p"])).is_some());
        // A path named -p after `--` is a path, and other commands are ours.
        assert!(delegated(&v(&["checkout", "HEAD", "--", "-p"])).is_none());
        assert!(delegated(&v(&["switch", "-p"])).is_none());
        assert!(delegated(&v(&["checkout", "main"])).is_none());
    }
}
