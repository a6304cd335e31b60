//! `git par clean [-d] [-f] [-x | -X] [-q] [-e <pattern>] [--] [<pathspec>...]`: git's
//! `clean`, with git choosing what goes and worker threads removing it.
//!
//! What is untracked, ignored, excluded by `-e`, under a pathspec, a nested repository or the
//! current directory is decided by git alone: git-par runs the same command as a dry run
//! (`git clean -n`, the user's arguments without `-q`) and reads its list. Each `Would remove
//! <path>` is then removed by the engine's workers ([`gitpar::remove_tree::remove_paths`]: a
//! path ending in `/` is a directory, removed with what is in it, as git's `remove_dirs`
//! removes one it listed whole; nothing is reached through a symbolic link), and git's lines
//! are printed as the real run prints them (`Removing <path>`, `Skipping repository <path>`)
//! unless `-q`.
//!
//! Everything else is git's, run whole: a dry run, `-i`, no `-f` (git refuses, or cleans when
//! `clean.requireForce` is false), usage git's parse-options answers, pathspecs read from
//! standard input, a dry run that fails or prints a line git-par does not know (git's refusal to
//! remove the current directory), a listed path outside the work tree. If a removal fails, the
//! workers stop and git runs the same command on what is left: git's warnings, git's exit code.

use std::ffi::OsString;
use std::path::{Component, Path};

use bstr::{BString, ByteSlice};

use crate::exit::fatal;
use crate::gitopts;

/// Run `git par clean ARGS` (the arguments after `clean`).
pub(crate) fn clean(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let parsed = gitopts::parse(&args, gitopts::CLEAN);
    if let Some(why) = gits_alone(&parsed) {
        return Err(hand_to_git(why, &args));
    }
    let opened = crate::repo::open(overrides)?;
    let Some(workdir) = opened.workdir.clone() else {
        return Err(hand_to_git("there is no work tree", &args));
    };
    let Some(listed) = dry_run(&parsed, &args)? else {
        return Err(hand_to_git("its dry run did not list the removals", &args));
    };
    let Some(targets) = targets(&listed, &opened.prefix) else {
        return Err(hand_to_git("a listed path is outside the work tree", &args));
    };
    let opts = gitpar::remove_tree::Options::default();
    match gitpar::remove_tree::remove_paths(
        &workdir,
        &targets,
        &opts,
        &crate::interrupt::INTERRUPTED,
    ) {
        Ok(removed) => {
            if std::env::var_os("GIT_PAR_TRACE").is_some() {
                eprintln!(
                    "git-par: clean: {} files and {} directories removed by {} threads",
                    removed.files, removed.dirs, removed.threads
                );
            }
        }
        Err(gitpar::remove_tree::Error::Interrupted) => return Err(crate::interrupt::EXIT_CODE),
        Err(e) => return Err(hand_to_git(&format!("a removal failed: {e}"), &args)),
    }
    if parsed.verbosity() >= 0 {
        print(&listed)
    } else {
        Ok(())
    }
}

/// Why the whole call is git's before anything is looked at, if it is.
fn gits_alone(parsed: &gitopts::Parsed) -> Option<&'static str> {
    let force = parsed
        .options
        .iter()
        .filter(|o| o.name == "force")
        .fold(0, |n, o| if o.negated { 0 } else { n + 1 });
    if parsed.help || parsed.unreadable {
        Some("usage git's parse-options answers")
    } else if parsed.flag("dry-run") == Some(true) {
        Some("a dry run removes nothing")
    } else if parsed.flag("interactive") == Some(true) {
        Some("-i is git's interactive loop")
    } else if force == 0 {
        Some("without -f git refuses, or cleans as clean.requireForce says")
    } else if parsed.value("pathspec-from-file").is_some_and(|f| f == "-") {
        Some("the pathspecs are read from standard input")
    } else {
        None
    }
}

/// One line of git's dry run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    /// `Would remove <path>`: the path as git printed it (quoted, relative to the current
    /// directory; a directory ends in `/`).
    Remove(String),
    /// `Would skip repository <path>`: a nested repository kept (without `-f -f`).
    Skip(String),
}

/// git's dry run of the same call: `git clean -n` with the user's arguments but `-q`, in the C
/// locale (its lines are read). `None` when it fails or prints a line not known here.
fn dry_run(parsed: &gitopts::Parsed, args: &[OsString]) -> Result<Option<Vec<Line>>, u8> {
    let mut dry = parsed.without(args, "quiet");
    let at = gitopts::parse(&dry, gitopts::CLEAN).append_at(&dry);
    dry.insert(at, "-n".into());
    dry.insert(0, "clean".into());
    let out = gitpar::git_command()
        .args(&dry)
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C")
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| fatal(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Ok(None);
    }
    Ok(parse_dry_run(&String::from_utf8_lossy(&out.stdout)))
}

/// The lines of a dry run's output; `None` if one is not a removal or a skipped repository.
fn parse_dry_run(out: &str) -> Option<Vec<Line>> {
    out.lines()
        .map(|line| {
            if let Some(path) = line.strip_prefix("Would remove ") {
                Some(Line::Remove(path.to_owned()))
            } else {
                line.strip_prefix("Would skip repository ")
                    .map(|path| Line::Skip(path.to_owned()))
            }
        })
        .collect()
}

/// The removals of `listed` as work-tree paths: each printed path unquoted and taken from
/// `prefix` (the current directory in the work tree). `None` if one leaves the work tree or
/// does not unquote.
fn targets(listed: &[Line], prefix: &Path) -> Option<Vec<gitpar::remove_tree::Target>> {
    let mut base: Vec<BString> = Vec::new();
    for c in prefix.components() {
        match c {
            Component::Normal(name) => base.push(gix::path::os_str_into_bstr(name).ok()?.into()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let mut targets = Vec::new();
    for line in listed {
        let Line::Remove(printed) = line else {
            continue;
        };
        let (path, _) = gix::quote::ansi_c::undo(printed.as_bytes().as_bstr()).ok()?;
        let dir = path.ends_with(b"/");
        let mut at = base.clone();
        for name in path.split_str("/").filter(|n| !n.is_empty()) {
            match name {
                b"." => {}
                b".." => {
                    at.pop()?;
                }
                _ => at.push(name.into()),
            }
        }
        if at.is_empty() {
            return None;
        }
        targets.push(gitpar::remove_tree::Target {
            path: bstr::join("/", at).into(),
            dir,
        });
    }
    Some(targets)
}

/// Print `listed` as git's real run prints it.
fn print(listed: &[Line]) -> Result<(), u8> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    for line in listed {
        let written = match line {
            Line::Remove(path) => writeln!(out, "Removing {path}"),
            Line::Skip(path) => writeln!(out, "Skipping repository {path}"),
        };
        written.map_err(|e| fatal(format!("cannot write to standard output: {e}")))?;
    }
    out.flush()
        .map_err(|e| fatal(format!("cannot write to standard output: {e}")))
}

/// Hand the whole `clean ARGS` to git (why: under `GIT_PAR_TRACE`).
fn hand_to_git(why: &str, args: &[OsString]) -> u8 {
    let mut git: Vec<OsString> = vec!["clean".into()];
    git.extend(args.iter().cloned());
    crate::patch::hand_to_git("clean", why, &git)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn alone(args: &[&str]) -> Option<&'static str> {
        gits_alone(&gitopts::parse(&v(args), gitopts::CLEAN))
    }

    #[test]
    fn git_runs_what_removes_nothing_or_asks_or_needs_standard_input() {
        assert!(alone(&["-f"]).is_none());
        assert!(alone(&["-fdxq", "--", "-n"]).is_none());
        assert!(alone(&["-fd", "-e", "*.o", "sub"]).is_none());
        assert!(alone(&["-d"]).is_some());
        assert!(alone(&["-f", "--no-force"]).is_some());
        assert!(alone(&["-fn"]).is_some());
        assert!(alone(&["-f", "-i"]).is_some());
        assert!(alone(&["-f", "--pathspec-from-file=-"]).is_some());
        assert!(alone(&["-f", "--bogus"]).is_some());
        assert!(alone(&["-h"]).is_some());
    }

    #[test]
    fn dry_run_lines_become_work_tree_paths() {
        let listed = parse_dry_run(
            "Would remove a.o\nWould remove \"sp ace\\303\\251\"\nWould remove ../top/\nWould skip repository nested/\n",
        )
        .unwrap();
        assert_eq!(listed.len(), 4);
        let under_sub = targets(&listed, Path::new("sub")).unwrap();
        let paths: Vec<_> = under_sub
            .iter()
            .map(|t| (t.path.to_string(), t.dir))
            .collect();
        assert_eq!(
            paths,
            [
                ("sub/a.o".to_owned(), false),
                ("sub/sp aceé".to_owned(), false),
                ("top".to_owned(), true)
            ]
        );
        assert!(
            targets(&listed, Path::new("")).is_none(),
            "../top leaves the tree"
        );
        assert!(parse_dry_run("Refusing to remove current working directory\n").is_none());
    }
}
