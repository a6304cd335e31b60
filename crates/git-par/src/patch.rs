//! Calls handed to git whole. `-p/--patch`: interactive hunk selection is git's, so `git par
//! checkout -p`, `restore -p` and `reset -p` hand the call to git unchanged (the interactive loop
//! writes one hunk at a time and has nothing to parallelise). The other documented delegations
//! (merges and pulls that are no fast-forward, `sparse-checkout list`, a status with an
//! untracked cache, a repository gix cannot read, ...) go through [`hand_to_git`].

use std::ffi::{OsStr, OsString};

/// The subcommands whose `-p/--patch` git handles.
const PATCH_COMMANDS: &[&str] = &["checkout", "restore", "reset"];

/// If `args` (without the program name) ask for `-p/--patch` of a checkout, restore or reset, or
/// for a command's options for bash completion (`--git-completion-helper`), the arguments to
/// give git: the same ones, `-c name=value` included. `None` otherwise.
pub fn delegated(args: &[OsString]) -> Option<Vec<OsString>> {
    let i = subcommand_at(args)?;
    // Bash completion asks a command for its options (`git checkout --git-completion-helper`,
    // the only argument, as git's parse-options takes it): git's options are git's to list.
    if let [only] = &args[i + 1..] {
        if only == "--git-completion-helper" || only == "--git-completion-helper-all" {
            return Some(args.to_vec());
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

/// Where the subcommand is in `args` (without the program name): after git-par's own global
/// options, `-c name=value` (or `-cname=value`), as git's.
pub fn subcommand_at(args: &[OsString]) -> Option<usize> {
    let mut i = 0;
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
    (i < args.len()).then_some(i)
}

/// git's `--end-of-options` for `reset`: what follows is the revision even when it looks like an
/// option (`reset --hard --end-of-options --foo`, a branch named `--foo`). `reset --hard` takes
/// no paths, so clap's `--` says the same; the other commands take paths after `--` and keep
/// the word as it is.
pub fn end_of_options(mut args: Vec<OsString>) -> Vec<OsString> {
    let Some(i) = subcommand_at(&args) else {
        return args;
    };
    if args[i] != "reset" {
        return args;
    }
    let rest = &mut args[i + 1..];
    if let Some(k) = rest
        .iter()
        .take_while(|a| a.as_os_str() != OsStr::new("--"))
        .position(|a| a == "--end-of-options")
    {
        rest[k] = OsString::from("--");
    }
    args
}

/// Replace this process by `git ARGS` (on Windows: run it and exit with its code,
/// [`crate::platform::exec`]), started where the call started ([`crate::git::git_from_start`]:
/// git then keeps that directory as its own starting one); returns only if git could not be
/// started.
pub fn exec_git(args: &[OsString]) -> std::io::Error {
    crate::platform::exec(crate::git::git_from_start().args(args))
}

/// Replace this process by git with `args`, the whole call being git's (a documented
/// delegation), after saying why under `GIT_PAR_TRACE` (`git-par: handing the WHAT to git:
/// WHY`) and flushing what git-par printed. Returns only if git cannot be started: the exit
/// code, after git's `fatal:` line.
pub fn hand_to_git(what: &str, why: &str, args: &[OsString]) -> u8 {
    use std::io::Write as _;
    if std::env::var_os("GIT_PAR_TRACE").is_some() {
        eprintln!("git-par: handing the {what} to git: {why}");
    }
    let _ = std::io::stdout().flush();
    let err = exec_git(args);
    crate::exit::fatal(format!("cannot run git: {err}"))
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
        assert!(delegated(&v(&["checkout", "--git-completion-helper"])).is_some());
        assert!(delegated(&v(&["-ca.b=1", "switch", "--git-completion-helper-all"])).is_some());
        assert!(delegated(&v(&["switch", "--git-completion-helper", "x"])).is_none());
    }

    #[test]
    fn end_of_options_ends_resets_options_only() {
        assert_eq!(
            end_of_options(v(&[
                "-c",
                "a.b=1",
                "reset",
                "--hard",
                "--end-of-options",
                "--foo"
            ])),
            v(&["-c", "a.b=1", "reset", "--hard", "--", "--foo"])
        );
        let checkout = v(&["checkout", "--end-of-options", "x"]);
        assert_eq!(end_of_options(checkout.clone()), checkout);
    }
}
