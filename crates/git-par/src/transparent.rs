//! git-par as `git`: invoked under the name `git` (a link named `git` first on `PATH`, made by
//! `git par shim DIR`), git-par runs the commands it owns and hands everything else to the real
//! git by `exec`, with the same arguments, environment and standard streams, so that tools and
//! CI that call `git` get the parallel checkout without knowing of it (as ccache's links do).
//!
//! What git-par owns: `checkout`, `switch`, `restore`, `reset --hard`, `clone`, `worktree add`,
//! `worktree remove`, `clean`, `sparse-checkout`,
//! `status`, `update-index [-q] --refresh` (exactly), `merge` and `pull` (which hand what is no
//! fast-forward back to git), and `par ...` (git-par's own commands).
//! Of git's options before the command, `-C`, `-c`, `--git-dir`, `--work-tree`, `--no-pager`,
//! `-P`, `--no-optional-locks`, `--no-advice` and the `--*-pathspecs` are honoured (the rest
//! hand the call to git). A call git-par's own parser refuses (an option it does not take, a
//! form it does not support, `-h`) is git's too, before anything has happened. The real git is
//! `$GIT_PAR_REAL_GIT`, else the first `git` on `PATH` that is not git-par itself; git-par sets
//! `GIT_PAR_REAL_GIT` for the commands it runs itself, so that every git it starts is the real
//! one and it never runs itself in a loop. `GIT_PAR_TRACE=1` says which way each call went.
//! An alias of a command git-par owns is expanded here ([`expand_alias`]): handed to git, it
//! would run git's own command in a git of its own.
//!
//! On Windows the stand-in is `git.exe` (a hard link, or a copy), the real git the first other
//! `git.exe` on `PATH`, and "replaces itself" means it runs git, waits and exits with git's code
//! ([`platform::exec`]).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::platform;

/// Returns true if and only if this process was started under the name `git` (`git.exe`).
pub(crate) fn invoked_as_git(argv0: &OsStr) -> bool {
    platform::invoked_as(argv0, "git")
}

/// For git-par run under its own name, on systems where the `git` a child process finds is not
/// the one on `PATH` ([`platform::PINS_REAL_GIT`]: Windows): name the real git in
/// `GIT_PAR_REAL_GIT` once, for every git the engine and the binary start. A missing git is
/// left for the first command that needs one to report.
pub(crate) fn pin_real_git() {
    let set = std::env::var_os(gitpar::REAL_GIT).is_some_and(|g| !g.is_empty());
    if !set {
        if let Ok(git) = real_git() {
            std::env::set_var(gitpar::REAL_GIT, git);
        }
    }
}

/// Decide where `git ARGS` goes. Returns the arguments for git-par's own parser (after the
/// program name) when git-par runs it, with the global options applied (directory changed,
/// environment set); otherwise replaces this process by the real git and returns only the exit
/// code of a failure to start it.
pub(crate) fn route(args: Vec<OsString>) -> Result<Vec<OsString>, u8> {
    let trace = std::env::var_os("GIT_PAR_TRACE").is_some();
    let git = match real_git() {
        Ok(git) => git,
        Err(why) => {
            eprintln!("fatal: git-par runs as git, but {why}");
            return Err(crate::exit::FATAL);
        }
    };
    let mut call = args.clone();
    let mut aliases: Vec<String> = Vec::new();
    let plan = loop {
        if let Some(plan) = plan(&call).filter(|plan| parses(&plan.args)) {
            break plan;
        }
        // git expands an alias itself, and runs the command it names in a git of its own: an
        // alias of a command git-par owns is expanded here instead. Anything else about an
        // alias (a shell alias, a loop, an alias of a command git-par does not own or of a
        // usage it does not take) is git's, with the call as given.
        match expand_alias(&git, &call) {
            Some((name, expanded)) if !aliases.contains(&name) && aliases.len() < MAX_ALIASES => {
                aliases.push(name);
                call = expanded;
            }
            _ => return Err(hand_to_git(&git, &args, trace)),
        }
    };
    let cwd = std::env::current_dir().ok();
    if let Some(cwd) = &cwd {
        crate::git::set_started_in(cwd.clone());
    }
    for dir in &plan.chdir {
        if std::env::set_current_dir(dir).is_err() {
            // git says why; it starts from where the call started.
            if let Some(cwd) = &cwd {
                let _ = std::env::set_current_dir(cwd);
            }
            return Err(hand_to_git(&git, &args, trace));
        }
    }
    for (name, value) in &plan.env {
        std::env::set_var(name, value);
    }
    std::env::set_var(gitpar::REAL_GIT, &git);
    if trace {
        let via = aliases
            .iter()
            .map(|a| format!("{a} (alias) -> "))
            .collect::<String>();
        eprintln!(
            "git-par: as git: {via}{} -> git-par",
            plan.command.to_string_lossy()
        );
    }
    Ok(plan.args)
}

/// Replace this process by the real `git` with `args`, unchanged ([`platform::exec`]); returns
/// the exit code of a failure to start it.
fn hand_to_git(git: &Path, args: &[OsString], trace: bool) -> u8 {
    if trace {
        let command = args
            .iter()
            .find(|a| !a.to_string_lossy().starts_with('-'))
            .map_or_else(String::new, |a| a.to_string_lossy().into_owned());
        eprintln!("git-par: as git: {command} -> {}", git.display());
    }
    let mut cmd = Command::new(git);
    platform::name_argv0(&mut cmd, "git");
    let err = platform::exec(cmd.args(args));
    eprintln!("fatal: cannot run {}: {err}", git.display());
    crate::exit::FATAL
}

/// The real git: `$GIT_PAR_REAL_GIT`, else the first executable `git` on `PATH` that is not
/// this program ([`platform::same_program`]: by its resolved path; on Windows also a hard link
/// or a copy of it).
fn real_git() -> Result<PathBuf, String> {
    let me = platform::this_program().ok();
    let is_me = |p: &Path| {
        me.as_deref()
            .is_some_and(|me| platform::same_program(p, me))
    };
    if let Some(git) = std::env::var_os(gitpar::REAL_GIT).filter(|g| !g.is_empty()) {
        let git = PathBuf::from(git);
        return if is_me(&git) {
            Err(format!("{} names git-par itself", gitpar::REAL_GIT))
        } else {
            Ok(git)
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        if let Some(candidate) = platform::program_in(&dir, "git").filter(|c| !is_me(c)) {
            return Ok(candidate);
        }
    }
    Err(format!(
        "no real git is on PATH besides git-par (set {} to it)",
        gitpar::REAL_GIT
    ))
}

/// How git-par runs a call it owns.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// `-C` directories, in order.
    chdir: Vec<OsString>,
    /// Environment the global options set, as git sets it for itself.
    env: Vec<(&'static str, OsString)>,
    /// The command's name as given (for the trace).
    command: OsString,
    /// git-par's arguments: `-c` values, then its subcommand and arguments.
    args: Vec<OsString>,
}

/// git's options before the command, as git-par applies them.
#[derive(Debug, Default)]
struct Globals {
    /// `-C` directories, in order.
    chdir: Vec<OsString>,
    /// Environment the options set, as git sets it for itself.
    env: Vec<(&'static str, OsString)>,
    /// `-c` values, in order.
    config: Vec<OsString>,
}

/// git's options before the command in `args`, and where the command is; `None` when an
/// option is one git-par does not apply (git runs the call) or no command follows.
fn globals(args: &[OsString]) -> Option<(Globals, usize)> {
    let mut chdir = Vec::new();
    let mut env = Vec::new();
    let mut config = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.to_str() else {
            break;
        };
        if !text.starts_with('-') {
            break;
        }
        let value = |i: usize| args.get(i + 1).cloned();
        match text {
            "-C" => {
                let dir = value(i)?;
                if !dir.is_empty() {
                    chdir.push(dir);
                }
                i += 1;
            }
            "-c" => {
                config.push(value(i)?);
                i += 1;
            }
            "--no-pager" | "-P" => {}
            "--no-optional-locks" => env.push(("GIT_OPTIONAL_LOCKS", "0".into())),
            "--no-advice" => env.push(("GIT_ADVICE", "0".into())),
            "--literal-pathspecs" => env.push(("GIT_LITERAL_PATHSPECS", "1".into())),
            "--glob-pathspecs" => env.push(("GIT_GLOB_PATHSPECS", "1".into())),
            "--noglob-pathspecs" => env.push(("GIT_NOGLOB_PATHSPECS", "1".into())),
            "--icase-pathspecs" => env.push(("GIT_ICASE_PATHSPECS", "1".into())),
            "--git-dir" => {
                env.push(("GIT_DIR", value(i)?));
                i += 1;
            }
            "--work-tree" => {
                env.push(("GIT_WORK_TREE", value(i)?));
                i += 1;
            }
            _ => {
                if let Some(dir) = text.strip_prefix("--git-dir=") {
                    env.push(("GIT_DIR", dir.into()));
                } else if let Some(dir) = text.strip_prefix("--work-tree=") {
                    env.push(("GIT_WORK_TREE", dir.into()));
                } else {
                    return None;
                }
            }
        }
        i += 1;
    }
    args.get(i)?;
    Some((Globals { chdir, env, config }, i))
}

/// The plan for `git ARGS`, or `None` when git runs it.
fn plan(args: &[OsString]) -> Option<Plan> {
    let (Globals { chdir, env, config }, i) = globals(args)?;
    let command = args[i].clone();
    let rest = &args[i + 1..];
    let before_dashdash = || rest.iter().take_while(|a| a.as_os_str() != "--");
    let ours: Vec<OsString> = match command.to_str()? {
        "checkout" | "switch" | "restore" | "clone" | "status" | "sparse-checkout" => {
            let call: Vec<OsString> = std::iter::once(command.clone())
                .chain(rest.iter().cloned())
                .collect();
            // `-p/--patch` is git's interactive loop (git-par hands it over too).
            if crate::patch::delegated(&call).is_some() {
                return None;
            }
            call
        }
        "reset" if before_dashdash().any(|a| a == "--hard") => std::iter::once(command.clone())
            .chain(rest.iter().cloned())
            .collect(),
        "merge" | "pull" | "clean" => std::iter::once(command.clone())
            .chain(rest.iter().cloned())
            .collect(),
        "worktree" if rest.first().is_some_and(|a| a == "add" || a == "remove") => {
            std::iter::once(command.clone())
                .chain(rest.iter().cloned())
                .collect()
        }
        "update-index" => {
            let quiet = rest.iter().filter(|a| *a == "-q").count();
            let refresh = rest.iter().filter(|a| *a == "--refresh").count();
            if refresh != 1 || quiet > 1 || rest.len() != refresh + quiet {
                return None;
            }
            let mut ours = vec![OsString::from("refresh")];
            if quiet == 1 {
                ours.push("-q".into());
            }
            ours
        }
        "par" => rest.to_vec(),
        _ => return None,
    };
    let mut par_args = Vec::new();
    for c in config {
        par_args.push(OsString::from("-c"));
        par_args.push(c);
    }
    par_args.extend(ours);
    Some(Plan {
        chdir,
        env,
        command,
        args: par_args,
    })
}

/// The most aliases expanded in one call: git stops a loop by the names it has seen; a chain
/// this long is handed to git, which runs it or reports the loop.
const MAX_ALIASES: usize = 16;

/// git 2.47's own commands (`git --list-cmds=main`: its builtins and the programs it installs),
/// sorted. git runs them before it looks for an alias (an alias of one of these names is
/// ignored), so a call naming one is never expanded and costs no configuration lookup.
#[rustfmt::skip]
const GIT_COMMANDS: &[&str] = &[
    "add", "am", "annotate", "apply", "archimport", "archive", "bisect", "blame", "branch",
    "bugreport", "bundle", "cat-file", "check-attr", "check-ignore", "check-mailmap",
    "check-ref-format", "checkout", "checkout--worker", "checkout-index", "cherry",
    "cherry-pick", "clean", "clone", "column", "commit", "commit-graph", "commit-tree", "config",
    "count-objects", "credential", "credential-cache", "credential-cache--daemon",
    "credential-store", "cvsexportcommit", "cvsimport", "cvsserver", "daemon", "describe",
    "diagnose", "diff", "diff-files", "diff-index", "diff-tree", "difftool",
    "difftool--helper", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch",
    "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch", "fsck", "fsck-objects",
    "fsmonitor--daemon", "gc", "get-tar-commit-id", "grep", "hash-object", "help", "hook",
    "http-backend", "http-fetch", "http-push", "imap-send", "index-pack", "init", "init-db",
    "instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree", "mailinfo",
    "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index",
    "merge-octopus", "merge-one-file", "merge-ours", "merge-recursive", "merge-recursive-ours",
    "merge-recursive-theirs", "merge-resolve", "merge-subtree", "merge-tree", "mergetool",
    "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "p4", "pack-objects",
    "pack-redundant", "pack-refs", "patch-id", "pickaxe", "prune", "prune-packed", "pull",
    "push", "quiltimport", "range-diff", "read-tree", "rebase", "receive-pack", "reflog",
    "refs", "remote", "remote-ext", "remote-fd", "remote-ftp", "remote-ftps", "remote-http",
    "remote-https", "repack", "replace", "replay", "request-pull", "rerere", "reset",
    "restore", "rev-list", "rev-parse", "revert", "rm", "send-email", "send-pack",
    "sh-i18n--envsubst", "shell", "shortlog", "show", "show-branch", "show-index", "show-ref",
    "sparse-checkout", "stage", "stash", "status", "stripspace", "submodule",
    "submodule--helper", "svn", "switch", "symbolic-ref", "tag", "unpack-file",
    "unpack-objects", "update-index", "update-ref", "update-server-info", "upload-archive",
    "upload-archive--writer", "upload-pack", "var", "verify-commit", "verify-pack",
    "verify-tag", "version", "web--browse", "whatchanged", "worktree", "write-tree",
];

/// The call git makes of `args` when its command is an alias (`alias.NAME` in git's
/// configuration, as git's `handle_alias` expands it: the value split as `split_cmdline`
/// splits it, the call's other arguments after it), with the alias's name; `None` when git
/// would not expand it here: the command is one of git's own or a program `git-NAME` (on
/// `PATH` or in git's exec path, which git runs first), no such alias is set, or the alias is
/// one whose expansion is git's to make (a shell alias `!...`, options first, a value
/// `split_cmdline` refuses, an alias of itself). The configuration is asked of the real git,
/// with the call's own global options (`-C`, `-c`, `--git-dir`, ...): the same files, includes
/// and overrides git reads; the one process this costs is paid by names git does not know
/// alone.
fn expand_alias(git: &Path, args: &[OsString]) -> Option<(String, Vec<OsString>)> {
    let (_, at) = globals(args)?;
    let name = args[at].to_str()?;
    if name.is_empty()
        || name == "par"
        || name.starts_with('-')
        || name.contains(['.', '=', '/'])
        || GIT_COMMANDS.binary_search(&name).is_ok()
    {
        return None;
    }
    let external = format!("git-{name}");
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| platform::command_in(&dir, &external).is_some()) {
        return None;
    }
    let ask = |what: &[&str]| {
        let mut cmd = Command::new(git);
        platform::name_argv0(&mut cmd, "git");
        let out = cmd
            .args(&args[..at])
            .args(what)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status
            .success()
            .then(|| text.strip_suffix('\n').unwrap_or(&text).to_owned())
    };
    let value = ask(&["config", "--get", &format!("alias.{name}")])?;
    if value.starts_with('!') {
        return None;
    }
    let words = split_cmdline(&value)?;
    let first = words.first()?;
    if first.is_empty() || first.starts_with('-') || first == name {
        return None;
    }
    let exec_path = std::env::var_os("GIT_EXEC_PATH")
        .map(PathBuf::from)
        .or_else(|| ask(&["--exec-path"]).map(PathBuf::from))?;
    if platform::command_in(&exec_path, &external).is_some() {
        return None;
    }
    let expanded = args[..at]
        .iter()
        .cloned()
        .chain(words.into_iter().map(OsString::from))
        .chain(args[at + 1..].iter().cloned())
        .collect();
    Some((name.to_owned(), expanded))
}

/// An alias's value split into words as git's `split_cmdline` splits it: at unquoted
/// whitespace; single and double quotes group; a backslash outside single quotes takes the
/// next character as it is. `None` for an unclosed quote or a trailing backslash (git then
/// dies with its own message).
fn split_cmdline(line: &str) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    let mut quoted: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quoted {
            None if is_space(c) => {
                while chars.peek().copied().is_some_and(is_space) {
                    chars.next();
                }
                words.push(String::new());
            }
            None if c == '\'' || c == '"' => quoted = Some(c),
            Some(q) if c == q => quoted = None,
            _ => {
                let c = if c == '\\' && quoted != Some('\'') {
                    chars.next()?
                } else {
                    c
                };
                words.last_mut()?.push(c);
            }
        }
    }
    quoted.is_none().then_some(words)
}

/// git's `isspace` (space, tab, newline, carriage return), which `split_cmdline` splits at.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Returns true if and only if git-par's own parser takes `args`: anything it refuses (an
/// option it does not know, `-h`) is git's call, before git-par has done anything.
fn parses(args: &[OsString]) -> bool {
    use clap::Parser;
    let command = crate::patch::subcommand_at(args);
    if command.is_some_and(|i| args[i] == "merge" && crate::merge::opens_an_editor(&args[i + 1..]))
    {
        // Refused by `git par merge` (an editor session is git's).
        return false;
    }
    let args = crate::patch::end_of_options(args.to_vec());
    crate::cli::Cli::try_parse_from(std::iter::once(OsString::from("git-par")).chain(args)).is_ok()
}

/// `git par shim DIR`: a link named `git` in `DIR` to this program (`git.exe`, a hard link or a
/// copy, on Windows: [`platform::make_link`]), and the `PATH` line that puts it first (a line
/// per shell on Windows). An existing `DIR/git` that is not such a link is left alone (an
/// error).
pub(crate) fn shim(dir: &Path) -> Result<(), u8> {
    let me = platform::this_program()
        .map_err(|e| crate::exit::fatal(format!("cannot tell where git-par is: {e}")))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::exit::fatal(format!("cannot create '{}': {e}", dir.display())))?;
    let dir = platform::canonicalize(dir)
        .map_err(|e| crate::exit::fatal(format!("cannot resolve '{}': {e}", dir.display())))?;
    let link = dir.join(platform::LINK_NAME);
    match std::fs::symlink_metadata(&link) {
        Ok(_) if platform::same_program(&link, &me) => {}
        Ok(_) => {
            return Err(crate::exit::fatal(format!(
                "'{}' exists and is not a link to git-par",
                link.display()
            )))
        }
        Err(_) => platform::make_link(&me, &link).map_err(|e| {
            crate::exit::fatal(format!("cannot create the link '{}': {e}", link.display()))
        })?,
    }
    for line in platform::path_lines(&dir) {
        println!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    fn ours(w: &[&str]) -> Option<Vec<String>> {
        plan(&words(w)).map(|p| {
            p.args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
    }

    #[test]
    fn alias_values_split_as_git_splits_them() {
        let split = |line: &str| split_cmdline(line);
        assert_eq!(split("checkout -q").unwrap(), ["checkout", "-q"]);
        assert_eq!(split("switch  \t -c").unwrap(), ["switch", "-c"]);
        assert_eq!(
            split(r#"checkout "a b" 'c "d"' e\ f"#).unwrap(),
            ["checkout", "a b", r#"c "d""#, "e f"]
        );
        assert_eq!(split(r#"x "a\"b" 'c\d'"#).unwrap(), ["x", r#"a"b"#, r"c\d"]);
        assert_eq!(split("x a'b'c").unwrap(), ["x", "abc"]);
        assert!(split("x 'open").is_none());
        assert!(split("x \"open").is_none());
        assert!(split("x end\\").is_none());
    }

    #[test]
    fn gits_own_commands_are_gits_and_sorted_for_the_search() {
        assert!(GIT_COMMANDS.windows(2).all(|w| w[0] < w[1]));
        // The git the tests run (2.47, as the list): a newer git's new commands would be
        // looked up as aliases before git ran them.
        let out = std::process::Command::new("git")
            .arg("--list-cmds=main")
            .output()
            .expect("git");
        let mut listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        listed.sort();
        assert_eq!(listed, GIT_COMMANDS);
    }

    #[test]
    fn owned_commands_go_to_git_par_the_rest_to_git() {
        assert_eq!(ours(&["checkout", "main"]).unwrap(), ["checkout", "main"]);
        assert_eq!(ours(&["switch", "-c", "x"]).unwrap(), ["switch", "-c", "x"]);
        assert_eq!(
            ours(&["reset", "--hard", "HEAD~"]).unwrap(),
            ["reset", "--hard", "HEAD~"]
        );
        assert_eq!(ours(&["reset", "HEAD~"]), None);
        assert_eq!(ours(&["reset", "--", "--hard"]), None);
        assert_eq!(
            ours(&["worktree", "add", "../x"]).unwrap(),
            ["worktree", "add", "../x"]
        );
        assert_eq!(
            ours(&["worktree", "remove", "-f", "../x"]).unwrap(),
            ["worktree", "remove", "-f", "../x"]
        );
        assert_eq!(ours(&["worktree", "list"]), None);
        assert_eq!(ours(&["worktree", "move", "a", "b"]), None);
        assert_eq!(ours(&["clean", "-fdx"]).unwrap(), ["clean", "-fdx"]);
        assert_eq!(
            ours(&["merge", "--ff-only", "x"]).unwrap(),
            ["merge", "--ff-only", "x"]
        );
        assert_eq!(ours(&["pull"]).unwrap(), ["pull"]);
        assert_eq!(ours(&["update-index", "--refresh"]).unwrap(), ["refresh"]);
        assert_eq!(
            ours(&["update-index", "-q", "--refresh"]).unwrap(),
            ["refresh", "-q"]
        );
        assert_eq!(
            ours(&["update-index", "--refresh", "--really-refresh"]),
            None
        );
        assert_eq!(ours(&["update-index", "--add", "x"]), None);
        assert_eq!(ours(&["par", "status"]).unwrap(), ["status"]);
        assert_eq!(
            ours(&["sparse-checkout", "set", "a"]).unwrap(),
            ["sparse-checkout", "set", "a"]
        );
        assert_eq!(ours(&["log", "-1"]), None);
        assert_eq!(ours(&["checkout", "-p"]), None);
        assert_eq!(ours(&[]), None);
        assert_eq!(ours(&["--version"]), None);
    }

    #[test]
    fn global_options_are_honoured_or_handed_over() {
        let p = plan(&words(&[
            "-C",
            "a",
            "-C",
            "",
            "-c",
            "x.y=1",
            "--no-pager",
            "--git-dir=g",
            "--work-tree",
            "w",
            "--no-optional-locks",
            "--literal-pathspecs",
            "status",
            "-s",
        ]))
        .unwrap();
        assert_eq!(p.chdir, words(&["a"]));
        assert_eq!(p.args, words(&["-c", "x.y=1", "status", "-s"]));
        assert_eq!(
            p.env,
            vec![
                ("GIT_DIR", OsString::from("g")),
                ("GIT_WORK_TREE", "w".into()),
                ("GIT_OPTIONAL_LOCKS", "0".into()),
                ("GIT_LITERAL_PATHSPECS", "1".into()),
            ]
        );
        assert_eq!(ours(&["--bare", "status"]), None);
        assert_eq!(ours(&["--namespace=x", "checkout", "main"]), None);
        assert_eq!(ours(&["-p", "status"]), None);
        assert_eq!(ours(&["-C"]), None);
    }

    #[test]
    fn git_pars_parser_decides_the_rest() {
        let args = |w: &[&str]| plan(&words(w)).map(|p| parses(&p.args));
        assert_eq!(args(&["checkout", "main"]), Some(true));
        assert_eq!(args(&["switch", "--no-such-option"]), Some(false));
        assert_eq!(args(&["restore", "-h"]), Some(false));
        // sparse-checkout reads its own options (and hands what it cannot run to git).
        assert_eq!(args(&["sparse-checkout", "list"]), Some(true));
        assert_eq!(args(&["sparse-checkout", "set", "--cone", "a"]), Some(true));
    }
}
