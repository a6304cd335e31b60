//! The contenders of `git par bench`, as the user names them with `--contenders`, and the command line
//! each one runs for each operation.
//!
//! Every contender is an external command, git-par included (this very executable), so that each is
//! measured as a user runs it: process start-up, repository discovery and all.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::run::Contender;

use super::operation::Operation;

/// What `--contenders` means when it is not given: the three of the parallel-checkout proposal, and
/// gitoxide where it is installed (see [`resolve_gix`]).
pub const DEFAULT: &str = "git,git-workers=4,git-par,gix";

/// The placeholders a `cmd:` template may use, for `--help` and error messages.
pub const PLACEHOLDERS: &str = "{op} {n} (or {N}) {src} {dst} {rev} {tmp} {git_par} {donor}";

/// The variable that names gitoxide's `gix` program when it is not on `PATH` (`gix=PATH` in
/// `--contenders` wins over it).
pub const GIX_VAR: &str = "GITPAR_BENCH_GIX";

/// One contender as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// `git`: git itself with one checkout worker, the baseline every other contender is compared with.
    Git,
    /// `git-workers=K`: git's own parallel checkout with K workers and no size threshold, the proposal's
    /// "`git -c checkout.workers=4 -c checkout.thresholdForParallelism=0`".
    GitWorkers(usize),
    /// `git-par`: this executable with its defaults.
    GitPar,
    /// `git-par-j=K`: this executable with K writer threads (`-j K`).
    GitParJobs(usize),
    /// `git-par-donor`: this executable's `worktree add --donor DONOR`, which clones (copy-on-write) the
    /// clean files of a donor work tree of `main` on the checkouts' filesystem instead of writing them
    /// (issue 22). The donor is made once per series, untimed, and kept for all runs (the `{donor}`
    /// placeholder); measured on `worktree add` only.
    GitParDonor,
    /// `gix` or `gix=PATH`: gitoxide's full checkout of a commit into a new directory, `gix index
    /// from-tree` then `gix free index checkout-exclusive` (see [`Spec::contender`]); measured on
    /// `worktree add` only. `None` until [`resolve_gix`] finds the program.
    Gix(Option<PathBuf>),
    /// `cmd:TEMPLATE` or `cmd(NAME):TEMPLATE`: any other program (gitoxide's `gix`, a script, another
    /// build of git-par), its argv split like a shell would (quotes, backslashes) with placeholders filled
    /// per run.
    Command {
        /// Name in the report: NAME if given, else the program's file name.
        name: String,
        /// The argv template.
        template: Vec<String>,
    },
}

/// A `--contenders` value that does not name a contender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

/// Parses the `--contenders` values (the option may be repeated): comma-separated names, where a `cmd:`
/// item takes the rest of its value, commas included, since a command line may contain commas.
/// Contenders keep their order (the first is the baseline of every comparison) and must have distinct names.
pub fn parse(values: &[String]) -> Result<Vec<Spec>, ParseError> {
    let mut specs = Vec::new();
    for value in values {
        let mut rest = value.as_str();
        while !rest.is_empty() {
            if rest.starts_with("cmd:") || rest.starts_with("cmd(") {
                specs.push(parse_command(rest)?);
                break;
            }
            let (item, after) = rest.split_once(',').unwrap_or((rest, ""));
            rest = after;
            let item = item.trim();
            if !item.is_empty() {
                specs.push(parse_one(item)?);
            }
        }
    }
    if specs.is_empty() {
        return Err(ParseError(
            "--contenders names no contender; the default is ".to_owned() + DEFAULT,
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for spec in &specs {
        let name = spec.name();
        if names.contains(&name) {
            return Err(ParseError(format!(
                "contender `{name}` is given twice; name commands apart with cmd(NAME):TEMPLATE"
            )));
        }
        names.push(name);
    }
    Ok(specs)
}

fn parse_one(item: &str) -> Result<Spec, ParseError> {
    let count = |k: &str| -> Result<usize, ParseError> {
        k.parse::<usize>()
            .ok()
            .filter(|&k| k > 0)
            .ok_or_else(|| ParseError(format!("`{item}`: `{k}` is not a positive number")))
    };
    match item.split_once('=') {
        None if item == "git" => Ok(Spec::Git),
        None if item == "git-par" => Ok(Spec::GitPar),
        None if item == "git-par-donor" => Ok(Spec::GitParDonor),
        None if item == "gix" => Ok(Spec::Gix(None)),
        Some(("gix", path)) if !path.is_empty() => Ok(Spec::Gix(Some(PathBuf::from(path)))),
        Some(("git-workers", k)) => Ok(Spec::GitWorkers(count(k)?)),
        Some(("git-par-j", k)) => Ok(Spec::GitParJobs(count(k)?)),
        _ => Err(ParseError(format!(
            "unknown contender `{item}`: choose among git, git-workers=K, git-par, git-par-j=K, \
             git-par-donor, gix, gix=PATH and cmd:TEMPLATE (placeholders {PLACEHOLDERS})"
        ))),
    }
}

fn parse_command(item: &str) -> Result<Spec, ParseError> {
    let (name, template) = if let Some(rest) = item.strip_prefix("cmd(") {
        let (name, template) = rest.split_once("):").ok_or_else(|| {
            ParseError(format!(
                "`{item}`: write cmd(NAME):TEMPLATE, e.g. cmd(gix):\"gix clone ...\""
            ))
        })?;
        (Some(name.trim().to_owned()), template)
    } else {
        (None, &item["cmd:".len()..])
    };
    let template = split_words(template).map_err(|e| ParseError(format!("`{item}`: {e}")))?;
    let Some(program) = template.first() else {
        return Err(ParseError(format!("`{item}`: the command is empty")));
    };
    let name = name.filter(|n| !n.is_empty()).unwrap_or_else(|| {
        Path::new(program)
            .file_name()
            .map_or_else(|| program.clone(), |f| f.to_string_lossy().into_owned())
    });
    Ok(Spec::Command { name, template })
}

/// Splits a command line into words as a POSIX shell would for plain words and quotes: blanks separate,
/// `'...'` is literal, `"..."` keeps blanks and honours `\"` and `\\`, a backslash outside quotes escapes
/// the next character. Nothing is expanded: `{dst}` stays a placeholder, `$HOME` stays `$HOME`.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unclosed single quote".to_owned()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("unclosed double quote".to_owned()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("unclosed double quote".to_owned()),
                    }
                }
            }
            '\\' => {
                let next = chars
                    .next()
                    .ok_or_else(|| "a trailing backslash escapes nothing".to_owned())?;
                word.get_or_insert_with(String::new).push(next);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

impl Spec {
    /// Returns the name shown in tables and result files.
    pub fn name(&self) -> String {
        match self {
            Self::Git => "git (sequential)".to_owned(),
            Self::GitWorkers(k) => format!("git workers={k}"),
            Self::GitPar => "git-par".to_owned(),
            Self::GitParJobs(k) => format!("git-par -j {k}"),
            Self::GitParDonor => "git-par --donor".to_owned(),
            Self::Gix(_) => "gix".to_owned(),
            Self::Command { name, .. } => name.clone(),
        }
    }

    /// Returns true if and only if the contender leaves a work tree git knows (a `.git` link, `HEAD`, an
    /// index), which the fixture checks with `git status`; gitoxide's checkout writes the files only, which
    /// are checked against the tree instead.
    pub fn makes_git_work_tree(&self) -> bool {
        !matches!(self, Self::Gix(_))
    }

    /// Returns true if and only if the contender needs the donor work tree (`{donor}`): `git-par-donor`,
    /// or a command whose template names it.
    pub fn uses_donor(&self) -> bool {
        match self {
            Self::GitParDonor => true,
            Self::Command { template, .. } => template.iter().any(|w| w.contains("{donor}")),
            _ => false,
        }
    }

    /// Returns the contender's argv template for `operation`, or `None` if it does not do that operation
    /// (gitoxide has no switch, and its clone is another program than its checkout). The placeholders are
    /// those the experiment's fixture fills: `{rev}` the commit to check out, `{dst}` the directory to
    /// create (worktree add, clone), `{src}` the repository to clone, `{tmp}` a path for the run's scratch
    /// file (removed after the run), `{git_par}` this executable, and `{donor}` the donor work tree of
    /// `main` (made once per series, on the checkouts' filesystem, when a contender uses it). Switches run inside the prepared work
    /// tree, worktree adds inside the source repository, clones in the checkouts directory.
    ///
    /// gitoxide's `worktree add` is two commands in one `sh -c` (a shell start, about a millisecond, is
    /// timed with them): `gix index from-tree -f -i {tmp} {rev}` reads the commit's tree into an index
    /// file, and `gix free index -i {tmp} checkout-exclusive -r {src} {dst}` creates `{dst}` and writes
    /// every entry of that index into it with gix's parallel checkout (`gix-worktree-state`, one thread per
    /// CPU, the repository's filters). It does not make a work tree git knows: no `.git` link, no `HEAD`,
    /// no worktree registered, and the index it writes is not in `{dst}` and has no stat data (the checkout
    /// updates stat data in memory only), so git would re-hash every file at its first `git status`.
    pub fn contender(&self, operation: Operation) -> Option<Contender> {
        // git's `-c` goes before the subcommand; `checkout.workers=1` is git's default, stated so that a
        // user's global configuration cannot turn the baseline parallel.
        let git = |config: &[String]| -> Vec<String> {
            let mut argv = vec!["git".to_owned()];
            for c in config {
                argv.push("-c".to_owned());
                argv.push(c.clone());
            }
            argv
        };
        let mut argv = match self {
            Self::Git => git(&["checkout.workers=1".to_owned()]),
            Self::GitWorkers(k) => git(&[
                format!("checkout.workers={k}"),
                "checkout.thresholdForParallelism=0".to_owned(),
            ]),
            Self::GitPar | Self::GitParJobs(_) => vec!["{git_par}".to_owned()],
            Self::GitParDonor => {
                if operation != Operation::WorktreeAdd {
                    return None;
                }
                vec!["{git_par}".to_owned()]
            }
            Self::Command { name, template } => {
                return Some(Contender::new(name, template.clone()))
            }
            Self::Gix(program) => {
                if operation != Operation::WorktreeAdd {
                    return None;
                }
                let program = program
                    .as_deref()
                    .map_or_else(|| "gix".into(), |p| p.to_string_lossy().into_owned());
                let script = "\"$0\" index from-tree -f -i \"$1\" \"$3\" && \
                              exec \"$0\" free index -i \"$1\" checkout-exclusive -r \"$2\" \"$4\"";
                return Some(Contender::new(
                    self.name(),
                    [
                        "sh", "-c", script, &program, "{tmp}", "{src}", "{rev}", "{dst}",
                    ],
                ));
            }
        };
        let jobs: Vec<String> = match self {
            Self::GitParJobs(k) => vec!["-j".to_owned(), k.to_string()],
            Self::GitParDonor => vec!["--donor".to_owned(), "{donor}".to_owned()],
            _ => Vec::new(),
        };
        let words = |ws: &[&str]| ws.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        match operation {
            Operation::Switch => {
                argv.extend(words(&["switch", "-q"]));
                argv.extend(jobs);
                argv.extend(words(&["--detach", "{rev}"]));
            }
            Operation::WorktreeAdd => {
                argv.extend(words(&["worktree", "add", "-q"]));
                argv.extend(jobs);
                argv.extend(words(&["--detach", "{dst}", "{rev}"]));
            }
            Operation::Clone => {
                // `-j` of clone is git's (submodule fetches): the writer count is configuration.
                if let Self::GitParJobs(k) = self {
                    argv.extend(["-c".to_owned(), format!("checkout.workers={k}")]);
                }
                argv.extend(words(&["clone", "-q", "{src}", "{dst}"]));
            }
            // `suite/status.rs`: run in the prepared work tree; git-par's -j is par.refreshThreads.
            Operation::Status | Operation::Refresh => {
                if let Self::GitParJobs(k) = self {
                    argv.extend(["-c".to_owned(), format!("par.refreshThreads={k}")]);
                }
                let git_par = matches!(self, Self::GitPar | Self::GitParJobs(_));
                argv.extend(match (operation, git_par) {
                    (Operation::Status, _) => words(&["status", "--porcelain"]),
                    (_, true) => words(&["refresh", "-q"]),
                    (_, false) => words(&["update-index", "-q", "--refresh"]),
                });
            }
        }
        Some(Contender::new(self.name(), argv))
    }
}

/// Finds gitoxide's `gix` for every [`Spec::Gix`]: the path given with `gix=PATH`, else `$GITPAR_BENCH_GIX`,
/// else `gix` on `PATH`. A contender whose program is not found is removed from `specs`, and the returned
/// note says so (it is never left out silently).
pub fn resolve_gix(specs: &mut Vec<Spec>) -> Vec<String> {
    let mut notes = Vec::new();
    specs.retain_mut(|spec| {
        let Spec::Gix(program) = spec else {
            return true;
        };
        let found = match program.take() {
            Some(given) if given.is_file() => Ok(given),
            Some(given) => Err(format!(
                "gix: {} is not a file: gitoxide is left out",
                given.display()
            )),
            None => match std::env::var_os(GIX_VAR).filter(|v| !v.is_empty()) {
                Some(var) => {
                    let path = PathBuf::from(&var);
                    path.is_file().then_some(path).ok_or_else(|| {
                        format!(
                            "gix: ${GIX_VAR} ({}) is not a file: gitoxide is left out",
                            var.to_string_lossy()
                        )
                    })
                }
                None => on_path("gix", std::env::var_os("PATH")).ok_or_else(|| {
                    format!(
                        "gix: no `gix` on PATH and ${GIX_VAR} is not set: gitoxide is left out \
                         (`cargo install gitoxide` installs it)"
                    )
                }),
            },
        };
        match found {
            Ok(path) => {
                *program = Some(path);
                true
            }
            Err(note) => {
                notes.push(note);
                false
            }
        }
    });
    notes
}

/// The first `program` in the directories of `path` (a `PATH` value) that is a file.
fn on_path(program: &str, path: Option<OsString>) -> Option<PathBuf> {
    std::env::split_paths(&path?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Result<Vec<Spec>, ParseError> {
        parse(&[s.to_owned()])
    }

    #[test]
    fn names_and_counts() {
        assert_eq!(
            list(DEFAULT).unwrap(),
            [
                Spec::Git,
                Spec::GitWorkers(4),
                Spec::GitPar,
                Spec::Gix(None)
            ]
        );
        assert_eq!(
            list("git,gix=/opt/gix").unwrap()[1],
            Spec::Gix(Some("/opt/gix".into()))
        );
        assert!(list("gix=").is_err());
        assert_eq!(
            list(" git , git-par-j=8,").unwrap(),
            [Spec::Git, Spec::GitParJobs(8)]
        );
        assert!(list("git-workers=0").unwrap_err().0.contains("positive"));
        assert!(list("hg").unwrap_err().0.contains("unknown contender `hg`"));
        assert!(list("").is_err());
        assert!(list("git,git").unwrap_err().0.contains("twice"));
    }

    #[test]
    fn the_donor_contender() {
        let specs = list("git,git-par,git-par-donor").unwrap();
        assert_eq!(specs, [Spec::Git, Spec::GitPar, Spec::GitParDonor]);
        assert_eq!(specs[2].name(), "git-par --donor");
        assert!(list("git-par-donor=x").is_err());
        assert!(list("git-par-donor,git-par-donor").is_err());
        assert!(list("x").unwrap_err().0.contains("git-par-donor"));
        let c = Spec::GitParDonor.contender(Operation::WorktreeAdd).unwrap();
        assert_eq!(
            c.command.join(" "),
            "{git_par} worktree add -q --donor {donor} --detach {dst} {rev}"
        );
        for op in [Operation::Switch, Operation::Clone, Operation::Status] {
            assert!(Spec::GitParDonor.contender(op).is_none());
        }
        assert!(Spec::GitParDonor.uses_donor() && Spec::GitParDonor.makes_git_work_tree());
        assert!(!Spec::GitPar.uses_donor());
        assert!(list("cmd:x --from {donor}").unwrap()[0].uses_donor());
        assert!(!list("cmd:x {dst}").unwrap()[0].uses_donor());
    }

    #[test]
    fn commands_take_the_rest_of_the_value() {
        let specs = list("git,cmd:gix -c a=1,b clone '{src}' \"{dst}\"").unwrap();
        assert_eq!(
            specs[1],
            Spec::Command {
                name: "gix".into(),
                template: ["gix", "-c", "a=1,b", "clone", "{src}", "{dst}"]
                    .map(String::from)
                    .into()
            }
        );
        let specs = parse(&["git".into(), "cmd(mine):/opt/x/git par switch {rev}".into()]).unwrap();
        assert_eq!(specs[1].name(), "mine");
        assert_eq!(list("cmd:/usr/bin/gix x").unwrap()[0].name(), "gix");
        assert!(list("cmd:").is_err());
        assert!(list("cmd(x)gix").is_err());
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_words(r#"a  'b c' "d \"e\" \n" f\ g"#).unwrap(),
            ["a", "b c", r#"d "e" \n"#, "f g"]
        );
        assert_eq!(split_words("''").unwrap(), [""]);
        assert!(split_words("'a").is_err());
    }

    #[test]
    fn command_lines_per_operation() {
        let argv = |s: Spec, op| s.contender(op).unwrap().command.join(" ");
        assert_eq!(
            argv(Spec::Git, Operation::Switch),
            "git -c checkout.workers=1 switch -q --detach {rev}"
        );
        assert_eq!(
            argv(Spec::GitWorkers(4), Operation::WorktreeAdd),
            "git -c checkout.workers=4 -c checkout.thresholdForParallelism=0 worktree add -q --detach {dst} {rev}"
        );
        assert_eq!(
            argv(Spec::GitParJobs(2), Operation::Clone),
            "{git_par} -c checkout.workers=2 clone -q {src} {dst}"
        );
        assert_eq!(
            argv(Spec::GitPar, Operation::Switch),
            "{git_par} switch -q --detach {rev}"
        );
        let gix = Spec::Gix(Some("/opt/gix".into()));
        assert!(gix.contender(Operation::Switch).is_none());
        assert!(gix.contender(Operation::Clone).is_none());
        let c = gix.contender(Operation::WorktreeAdd).unwrap();
        assert_eq!(c.command[..2], ["sh", "-c"]);
        assert_eq!(
            c.command[3..],
            ["/opt/gix", "{tmp}", "{src}", "{rev}", "{dst}"]
        );
        assert!(!gix.makes_git_work_tree() && Spec::GitPar.makes_git_work_tree());
    }

    #[test]
    fn gix_is_found_or_left_out_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("gix");
        std::fs::write(&program, "").unwrap();
        let path = Some(std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap());
        assert_eq!(on_path("gix", path.clone()), Some(program.clone()));
        assert_eq!(on_path("git-nope", path), None);

        let mut specs = vec![Spec::Git, Spec::Gix(Some(program.clone()))];
        assert!(resolve_gix(&mut specs).is_empty());
        assert_eq!(specs[1], Spec::Gix(Some(program)));
        let mut specs = vec![Spec::Git, Spec::Gix(Some(dir.path().join("absent")))];
        let notes = resolve_gix(&mut specs);
        assert_eq!(specs, [Spec::Git]);
        assert!(notes[0].contains("gitoxide is left out"), "{notes:?}");
    }
}
