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
//! Run as `git -C DIR clean`, git-par starts each git where the call started, with the same
//! `-C` ([`crate::git::git_from_start`]), so git knows which directory not to remove; run as
//! `git par clean`, where a `-C` was git's, the nearest caller's directory stands for it.

use std::ffi::OsString;
use std::io::BufRead as _;
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
    let Some(base) = names(&opened.prefix) else {
        return Err(hand_to_git(
            "the current directory has no plain path",
            &args,
        ));
    };
    keep_callers_dir(&workdir);
    let (dry, out) = DryRun::start(&parsed, &args)?;
    let mut lines = std::io::BufReader::new(out).split(b'\n');
    let mut listed = Vec::new();
    let mut stray = None;
    let targets = std::iter::from_fn(|| match next_target(&mut lines, &base, &mut listed) {
        Ok(target) => target,
        Err(why) => {
            stray = Some(why);
            None
        }
    });
    let opts = gitpar::remove_tree::Options::default();
    let removed =
        gitpar::remove_tree::remove_paths(&workdir, targets, &opts, &crate::interrupt::INTERRUPTED);
    let listed_all = dry.finish(stray.is_some() || removed.is_err());
    match removed {
        Ok(removed) => trace(&removed),
        Err(gitpar::remove_tree::Error::Interrupted) => return Err(crate::interrupt::EXIT_CODE),
        Err(e) => return Err(hand_to_git(&format!("a removal failed: {e}"), &args)),
    }
    if parsed.verbosity() >= 0 {
        print(&listed)?;
    }
    match stray {
        Some(why) => Err(hand_to_git(why, &args)),
        None if !listed_all => Err(hand_to_git("its dry run failed", &args)),
        None => Ok(()),
    }
}

/// Started as `git par clean` rather than as `git`, git-par cannot see a `git -C DIR` (git has
/// moved before starting it) or a script's `cd`: the directory the user is in is then taken to be
/// the nearest caller's that differs from git-par's own. If that is in the work tree, git's dry
/// run and every git that finishes the call start there ([`crate::git::git_from_start`]), and git
/// keeps it as it keeps the directory it started in.
fn keep_callers_dir(workdir: &Path) {
    if crate::git::started_in().is_some() {
        return;
    }
    let Ok(cwd) = crate::platform::current_dir() else {
        return;
    };
    let caller = crate::platform::callers_dirs()
        .into_iter()
        .find(|dir| *dir != cwd);
    if let Some(dir) = caller.filter(|dir| dir.starts_with(workdir)) {
        if std::env::var_os("GIT_PAR_TRACE").is_some() {
            eprintln!("git-par: clean: the caller is in {}", dir.display());
        }
        crate::git::set_started_in(dir);
    }
}

/// Under `GIT_PAR_TRACE`, what the workers removed.
fn trace(removed: &gitpar::remove_tree::Removed) {
    if std::env::var_os("GIT_PAR_TRACE").is_some() {
        eprintln!(
            "git-par: clean: {} files and {} directories removed by {} threads",
            removed.files, removed.dirs, removed.threads
        );
    }
}

/// Why the whole call is git's before anything is looked at, if it is.
fn gits_alone(parsed: &gitopts::Parsed) -> Option<&'static str> {
    if parsed.help || parsed.unreadable {
        Some("usage git's parse-options answers")
    } else if parsed.flag("dry-run") == Some(true) {
        Some("a dry run removes nothing")
    } else if parsed.flag("interactive") == Some(true) {
        Some("-i is git's interactive loop")
    } else if parsed.count("force") == 0 {
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

/// git's dry run of the same call, running: `git clean -n` with the user's arguments but `-q`,
/// in the C locale, its output read as it prints it and its errors kept.
struct DryRun {
    child: std::process::Child,
    errors: std::thread::JoinHandle<Vec<u8>>,
}

impl DryRun {
    /// Start it; its standard output comes with it.
    fn start(
        parsed: &gitopts::Parsed,
        args: &[OsString],
    ) -> Result<(DryRun, std::process::ChildStdout), u8> {
        use std::io::Read as _;
        let mut dry = parsed.without(args, "quiet");
        let at = gitopts::parse(&dry, gitopts::CLEAN).append_at(&dry);
        dry.insert(at, "-n".into());
        dry.insert(0, "clean".into());
        let mut child = crate::git::git_from_start()
            .args(&dry)
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| fatal(format!("cannot run git: {e}")))?;
        let (Some(out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(fatal("cannot read git's output"));
        };
        let errors = std::thread::spawn(move || {
            let mut errors = Vec::new();
            let _ = err.read_to_end(&mut errors);
            errors
        });
        Ok((DryRun { child, errors }, out))
    }

    /// Wait for it, stopped first when `stop` (what it would list no longer matters): true if
    /// it listed everything. Then its warnings (an unreadable directory) are the real run's
    /// too, and printed; otherwise git runs the call and prints its own.
    fn finish(mut self, stop: bool) -> bool {
        use std::io::Write as _;
        if stop {
            let _ = self.child.kill();
        }
        let status = self.child.wait();
        let listed_all = !stop && status.is_ok_and(|status| status.success());
        let errors = self.errors.join().unwrap_or_default();
        if listed_all {
            let _ = std::io::stderr().write_all(&errors);
        }
        listed_all
    }
}

/// The next removal git's dry run lists, its line kept in `listed` (with the skipped
/// repositories before it); `Ok(None)` at the end. `Err` says why the rest is git's: a line not
/// known here (git's refusal to remove the current directory), a path that leaves the work tree
/// or does not unquote, output that cannot be read.
fn next_target(
    lines: &mut impl Iterator<Item = std::io::Result<Vec<u8>>>,
    base: &[BString],
    listed: &mut Vec<Line>,
) -> Result<Option<gitpar::remove_tree::Target>, &'static str> {
    loop {
        let Some(line) = lines.next() else {
            return Ok(None);
        };
        let line = line.map_err(|_| "its dry run's output cannot be read")?;
        let line = String::from_utf8(line)
            .map_err(|_| "its dry run printed a line git-par does not know")?;
        match parse_line(&line).ok_or("its dry run printed a line git-par does not know")? {
            Line::Remove(printed) => {
                let target =
                    target(&printed, base).ok_or("a listed path is outside the work tree")?;
                listed.push(Line::Remove(printed));
                return Ok(Some(target));
            }
            skip => listed.push(skip),
        }
    }
}

/// One line of a dry run's output; `None` if it is not a removal or a skipped repository.
fn parse_line(line: &str) -> Option<Line> {
    if let Some(path) = line.strip_prefix("Would remove ") {
        Some(Line::Remove(path.to_owned()))
    } else {
        line.strip_prefix("Would skip repository ")
            .map(|path| Line::Skip(path.to_owned()))
    }
}

/// The names of `prefix` (the current directory in the work tree); `None` if it is not a
/// plain relative path.
fn names(prefix: &Path) -> Option<Vec<BString>> {
    prefix
        .components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Some(gix::path::os_str_into_bstr(name).ok()?.to_owned()),
            _ => None,
        })
        .collect()
}

/// The removal git printed as `printed` (quoted, relative to the current directory `base`; a
/// directory ends in `/`) as a work-tree path. `None` if it leaves the work tree or does not
/// unquote.
fn target(printed: &str, base: &[BString]) -> Option<gitpar::remove_tree::Target> {
    let (path, _) = gix::quote::ansi_c::undo(printed.as_bytes().as_bstr()).ok()?;
    let mut at = base.to_vec();
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
    Some(gitpar::remove_tree::Target {
        path: bstr::join("/", at).into(),
        dir: path.ends_with(b"/"),
    })
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

/// Hand the whole `clean ARGS` to git (why: under `GIT_PAR_TRACE`). Returns only if git cannot
/// be started: the exit code, after git's `fatal:`.
fn hand_to_git(why: &str, args: &[OsString]) -> u8 {
    let mut git = vec![OsString::from("clean")];
    git.extend_from_slice(args);
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
        let out: &[u8] = b"Would remove a.o\nWould skip repository nested/\nWould remove \"sp ace\\303\\251\"\nWould remove ../top/\n";
        let read = |base: &[BString]| {
            let mut lines = std::io::BufRead::split(out, b'\n');
            let mut listed = Vec::new();
            let mut targets = Vec::new();
            let end = loop {
                match next_target(&mut lines, base, &mut listed) {
                    Ok(Some(t)) => targets.push((t.path.to_string(), t.dir)),
                    Ok(None) => break None,
                    Err(why) => break Some(why),
                }
            };
            (targets, listed.len(), end)
        };
        let (targets, listed, end) = read(&names(Path::new("sub")).unwrap());
        assert_eq!(
            targets,
            [
                ("sub/a.o".to_owned(), false),
                ("sub/sp aceé".to_owned(), false),
                ("top".to_owned(), true)
            ]
        );
        assert_eq!((listed, end), (4, None));
        let (targets, listed, end) = read(&[]);
        assert_eq!((targets.len(), listed), (2, 3));
        assert_eq!(end, Some("a listed path is outside the work tree"));
        assert!(parse_line("Refusing to remove current working directory").is_none());
    }
}
