//! `git par status` and `git par refresh`: git's `status` formats (long, short, porcelain v1 and
//! v2, `-z`, `-b`) and `update-index --refresh`'s messages, printed from the engine's
//! [`gitpar::status`] computation.
//!
//! The arguments are read by hand, as git's `parse_options` reads them (`-uno`, `-unormal`,
//! `--porcelain=v2`, `--ignored=matching`, pathspecs after the options or after `--`): clap
//! cannot take a short option's value glued to it only when there is one. Options git-par does
//! not implement (`-v`, `--column`, `-M`, ...) hand the whole command to git, so that
//! `git par status` never answers differently from git. The configuration is read in one place,
//! [`config`]; the submodule summary is git's own `git submodule summary`, as in git
//! ([`summary`]).

mod config;
mod summary;

use std::cell::Cell;
use std::ffi::OsString;
use std::io::Write;

use bstr::{BStr, BString, ByteSlice};
use gitpar::status::{Change, IgnoreSubmodules, Ignored, Status, StatusOptions, Untracked};

use crate::exit::fatal;
use crate::repo::Opened;

mod wt_state;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// git's `STATUS_FORMAT_NONE` (`--no-short`, `--no-long`, `--no-porcelain`): the long
    /// format, but `-z` makes it porcelain.
    Default,
    Long,
    Short,
    V1,
    V2,
}

struct Args {
    format: Option<Format>,
    branch: Option<bool>,
    nul: bool,
    untracked: Option<Untracked>,
    ignored: Ignored,
    renames: Option<bool>,
    optional_locks: bool,
    show_stash: Option<bool>,
    ahead_behind: Option<bool>,
    ignore_submodules: Option<IgnoreSubmodules>,
    pathspecs: Vec<BString>,
}

fn untracked_mode(v: &str) -> Result<Untracked, u8> {
    config::untracked_mode(Some(v.as_bytes()))
        .ok_or_else(|| fatal(format!("Invalid untracked files mode '{v}'")))
}

fn parse(args: &[OsString]) -> Result<Option<Args>, u8> {
    let mut out = Args {
        format: None,
        branch: None,
        nul: false,
        untracked: None,
        ignored: Ignored::No,
        renames: None,
        optional_locks: true,
        show_stash: None,
        ahead_behind: None,
        ignore_submodules: None,
        pathspecs: Vec::new(),
    };
    let mut only_paths = false;
    for arg in args {
        let bytes = arg.as_encoded_bytes();
        if only_paths || !bytes.starts_with(b"-") || bytes == b"-" {
            out.pathspecs.push(bytes.into());
            continue;
        }
        let a = arg.to_string_lossy();
        match a.as_ref() {
            "--" => only_paths = true,
            "-s" | "--short" => out.format = Some(Format::Short),
            "--long" => out.format = Some(Format::Long),
            "--no-short" | "--no-long" | "--no-porcelain" => out.format = Some(Format::Default),
            "--porcelain" | "--porcelain=v1" | "--porcelain=1" => out.format = Some(Format::V1),
            "--porcelain=v2" | "--porcelain=2" => out.format = Some(Format::V2),
            "-b" | "--branch" => out.branch = Some(true),
            "--no-branch" => out.branch = Some(false),
            "-z" | "--null" => out.nul = true,
            "-u" | "--untracked-files" => out.untracked = Some(Untracked::All),
            "--ignored" => out.ignored = Ignored::Traditional,
            "--no-ignored" => out.ignored = Ignored::No,
            "--renames" => out.renames = Some(true),
            "--no-renames" => out.renames = Some(false),
            "--no-optional-locks" => out.optional_locks = false,
            "--ahead-behind" => out.ahead_behind = Some(true),
            "--no-ahead-behind" => out.ahead_behind = Some(false),
            "--show-stash" => out.show_stash = Some(true),
            "--no-show-stash" => out.show_stash = Some(false),
            "--ignore-submodules" => out.ignore_submodules = Some(IgnoreSubmodules::All),
            "--no-column" => {}
            "-h" => {
                println!(
                    "usage: git par status [-s | --short | --porcelain[=v1|v2] | --long] [-b] [-z] \
                     [-u[<mode>]] [--ignored[=<mode>]] [--[no-]renames] [--] [<pathspec>...]\n       \
                     git par refresh [-q]"
                );
                return Err(129);
            }
            other => {
                if let Some(v) = other.strip_prefix("--ignore-submodules=") {
                    out.ignore_submodules =
                        Some(IgnoreSubmodules::parse(v.as_bytes()).ok_or_else(|| {
                            fatal(format!("bad --ignore-submodules argument: {v}"))
                        })?);
                } else if let Some(v) = other.strip_prefix("--untracked-files=") {
                    out.untracked = Some(untracked_mode(v)?);
                } else if let Some(v) = other.strip_prefix("-u") {
                    out.untracked = Some(untracked_mode(v)?);
                } else if let Some(v) = other.strip_prefix("--ignored=") {
                    out.ignored = match v {
                        "traditional" => Ignored::Traditional,
                        "matching" => Ignored::Matching,
                        "no" => Ignored::No,
                        _ => return Err(fatal(format!("Invalid ignored mode '{v}'"))),
                    };
                } else if let Some(v) = other.strip_prefix("--porcelain=") {
                    return Err(fatal(format!("unsupported porcelain version '{v}'")));
                } else {
                    // An option git-par does not implement: git answers.
                    return Ok(None);
                }
            }
        }
    }
    Ok(Some(out))
}

/// Hand this `status` to git, with the arguments it was given (options git-par does not
/// implement, or settings such as `column.status` that change the output where it does not).
fn hand_to_git(why: &str) -> u8 {
    let mut git = vec![OsString::from("status")];
    git.extend(
        crate::git::own_args()
            .into_iter()
            .skip_while(|a| a != "status")
            .skip(1),
    );
    crate::patch::hand_to_git("status", why, &git)
}

/// `git par status [options] [--] [<pathspec>...]`.
pub(crate) fn status(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let Some(args) = parse(&args)? else {
        return Err(hand_to_git("an option git-par does not implement"));
    };
    let opened = crate::repo::open(overrides)?;
    gitpar::sys::phase::mark("repository opened");
    if crate::repo::has_grafts(&opened.repo) {
        return Err(hand_to_git(
            "the repository has a graft file (info/grafts), which gix does not read",
        ));
    }
    let worktree = opened.require_workdir()?.to_owned();
    let repo = &opened.repo;
    let config = repo.config_snapshot();
    let settings = config::Settings::read(&config, stdout_is_tty())?;
    if settings.columns {
        return Err(hand_to_git("column.status"));
    }
    let format = format_of(&args, &settings)?;
    // status.branch and status.aheadBehind only count for the formats made for people.
    let deferred = !matches!(format, Format::V1 | Format::V2) && !args.nul;
    let untracked = args
        .untracked
        .or(settings.untracked)
        .unwrap_or(Untracked::Normal);
    if args.ignored == Ignored::Matching && untracked == Untracked::No {
        return Err(fatal(
            "Unsupported combination of ignored and untracked-files arguments",
        ));
    }
    let renames = args.renames.or(settings.renames).unwrap_or(true);
    let optional_locks = args.optional_locks
        && std::env::var("GIT_OPTIONAL_LOCKS").map_or(true, |v| v != "0" && v != "false");
    let pathspec = pathspec_of(&args.pathspecs, &opened, &worktree)?;
    let head = Head::of(repo);
    let opts = StatusOptions {
        threads: None,
        untracked,
        ignored: args.ignored,
        write_index: optional_locks,
        renames,
        pathspec,
        patterns: args.pathspecs.clone(),
        ignore_submodules: args.ignore_submodules,
    };
    let st = match gitpar::status::status(repo, &worktree, &opened.index_path, head.tree, &opts) {
        Ok(st) => st,
        Err(gitpar::status::Error::Delegate(why)) => return Err(hand_to_git(why)),
        Err(e) => return Err(fatal(e.to_string())),
    };
    for warning in &st.warnings {
        eprintln!("warning: {warning}");
    }
    if untracked != gitpar::status::Untracked::No && args.pathspecs.is_empty() {
        crate::trace2::read_directory(st.read_directory);
    }
    let branch = args
        .branch
        .or(settings.branch.filter(|_| deferred))
        .unwrap_or(false);
    let show_stash = args.show_stash.unwrap_or(settings.show_stash);
    let mut out = Vec::new();
    let printer = Printer {
        repo,
        opened: &opened,
        head: &head,
        st: &st,
        nul: args.nul,
        untracked,
        ignored: args.ignored,
        color: format != Format::V1 && format != Format::V2 && use_color(repo),
        prefix: if settings.relative_paths {
            prefix_bytes(&opened)
        } else {
            BString::default()
        },
        settings: &settings,
        ignore_submodules: args.ignore_submodules,
        full_ahead_behind: args
            .ahead_behind
            .or(settings.ahead_behind.filter(|_| deferred))
            .unwrap_or(true),
        worktree: &worktree,
        tail: Cell::new(None),
    };
    printer.print(&mut out, format, branch, show_stash);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(&out);
    let _ = stdout.flush();
    Ok(())
}

/// Why [`porcelain_is_empty`] has no answer.
pub(crate) enum NoAnswer {
    /// The engine hands this status to git (why): an fsmonitor daemon, an untracked cache
    /// under `core.ignoreCase`, a split index to write.
    Delegate(&'static str),
    /// The status failed, or a setting is one git's status refuses (why).
    Failed(String),
}

/// Returns true if and only if `git status --porcelain --ignore-submodules=none`, run in the
/// work tree `worktree` of `repo` with the index at `index_path`, would print nothing: what
/// git's `check_clean_worktree` asks of a work tree `worktree remove` deletes. Staged and
/// unstaged changes count, untracked files too as `status.showUntrackedFiles` lists them,
/// ignored files do not. Computed by the engine's parallel status (rename detection left out:
/// a rename is a change either way).
pub(crate) fn porcelain_is_empty(
    repo: &gix::Repository,
    worktree: &std::path::Path,
    index_path: &std::path::Path,
) -> Result<bool, NoAnswer> {
    let untracked = config::untracked_setting(&repo.config_snapshot())
        .ok_or_else(|| NoAnswer::Failed("status.showUntrackedFiles".into()))?;
    let head_tree = match repo.head_commit() {
        Ok(commit) => Some(
            commit
                .tree_id()
                .map_err(|e| NoAnswer::Failed(e.to_string()))?
                .detach(),
        ),
        Err(_) if repo.head_id().is_err() => None,
        Err(e) => return Err(NoAnswer::Failed(e.to_string())),
    };
    let opts = StatusOptions {
        untracked,
        write_index: std::env::var("GIT_OPTIONAL_LOCKS").map_or(true, |v| v != "0" && v != "false"),
        ignore_submodules: Some(IgnoreSubmodules::None),
        ..StatusOptions::default()
    };
    match gitpar::status::status(repo, worktree, index_path, head_tree, &opts) {
        Ok(st) => Ok(st.changes.is_empty() && st.untracked.is_empty()),
        Err(gitpar::status::Error::Delegate(why)) => Err(NoAnswer::Delegate(why)),
        Err(e) => Err(NoAnswer::Failed(e.to_string())),
    }
}

/// The output format: git's `finalize_deferred_config`, where -z without a format is
/// --porcelain and `status.short` counts only when no format is given.
fn format_of(args: &Args, settings: &config::Settings) -> Result<Format, u8> {
    Ok(match (args.format, args.nul) {
        (None | Some(Format::Default), true) => Format::V1,
        (Some(Format::Long), true) => {
            return Err(fatal("options '--long' and '-z' cannot be used together"));
        }
        (Some(f), _) => f,
        (None, false) => match settings.short {
            Some(true) => Format::Short,
            _ => Format::Default,
        },
    })
}

/// The pathspecs as git's `parse_pathspec` reads them (`None` when there are none): magic,
/// `GIT_*_PATHSPECS`, relative to the current directory.
fn pathspec_of(
    pathspecs: &[BString],
    opened: &Opened,
    worktree: &std::path::Path,
) -> Result<Option<gitpar::plan::pathspec::Pathspec>, u8> {
    if pathspecs.is_empty() {
        return Ok(None);
    }
    let defaults =
        gitpar::plan::pathspec::defaults_from_environment().map_err(|e| fatal(e.to_string()))?;
    gitpar::plan::pathspec::Pathspec::new(pathspecs, &opened.prefix, worktree, defaults)
        .map(Some)
        .map_err(|e| fatal(e.to_string()))
}

/// `git par refresh [-q]`: `git update-index [-q] --refresh`.
pub(crate) fn refresh(quiet: bool, overrides: &[String]) -> Result<(), u8> {
    let opened = crate::repo::open(overrides)?;
    gitpar::sys::phase::mark("repository opened");
    let worktree = opened.require_workdir()?.to_owned();
    let outcome = match gitpar::status::refresh(
        &opened.repo,
        &worktree,
        &opened.index_path,
        &gitpar::status::RefreshOptions::default(),
    ) {
        Ok(outcome) => outcome,
        Err(gitpar::status::Error::Delegate(why)) => {
            let mut git = vec![OsString::from("update-index")];
            if quiet {
                git.push("-q".into());
            }
            git.push("--refresh".into());
            return Err(crate::patch::hand_to_git("refresh", why, &git));
        }
        Err(e) => return Err(fatal(e.to_string())),
    };
    let prefix = prefix_bytes(&opened);
    let mut failed = false;
    let mut out = Vec::new();
    // As git's refresh_index: unmerged paths fail even with -q; changed ones only without it.
    for path in &outcome.needs_merge {
        let _ = writeln!(
            out,
            "{}: needs merge",
            relative(path.as_bstr(), prefix.as_bstr())
        );
        failed = true;
    }
    if !quiet {
        for path in &outcome.needs_update {
            let _ = writeln!(
                out,
                "{}: needs update",
                relative(path.as_bstr(), prefix.as_bstr())
            );
            failed = true;
        }
    }
    let _ = std::io::stdout().write_all(&out);
    if std::env::var_os("GIT_PAR_TRACE").is_some() {
        eprintln!("git-par: refresh with {} threads", outcome.threads);
    }
    if failed {
        Err(1)
    } else {
        Ok(())
    }
}

/// HEAD as the status headers need it.
struct Head {
    /// `refs/heads/x` when on a branch (born or not).
    branch: Option<BString>,
    commit: Option<gix::ObjectId>,
    tree: Option<gix::ObjectId>,
    /// The upstream's short name and its commit (`None` when it is gone).
    upstream: Option<(String, Option<gix::ObjectId>)>,
}

impl Head {
    fn of(repo: &gix::Repository) -> Head {
        let head = repo.head().ok();
        let branch = head
            .as_ref()
            .and_then(|h| h.referent_name())
            .map(|n| n.as_bstr().to_owned());
        let commit = head.as_ref().and_then(|h| h.id()).map(gix::Id::detach);
        let tree = commit.and_then(|c| crate::engine::tree_of(repo, c).ok());
        let upstream = branch.as_ref().and_then(|b| upstream(repo, b.as_bstr()));
        Head {
            branch,
            commit,
            tree,
            upstream,
        }
    }
}

fn upstream(repo: &gix::Repository, branch: &BStr) -> Option<(String, Option<gix::ObjectId>)> {
    let config = repo.config_snapshot();
    let short = branch
        .strip_prefix(b"refs/heads/")?
        .to_str_lossy()
        .into_owned();
    let remote = config.string(&format!("branch.{short}.remote"))?;
    let merge = config.string(&format!("branch.{short}.merge"))?;
    let merge = merge.to_str_lossy().into_owned();
    let full = if remote.as_slice() == b"." {
        merge
    } else {
        let name: gix::refs::FullName = branch.to_owned().try_into().ok()?;
        match repo.branch_remote_tracking_ref_name(name.as_ref(), gix::remote::Direction::Fetch) {
            Some(Ok(tracking)) => tracking.as_bstr().to_str_lossy().into_owned(),
            _ => return None,
        }
    };
    let id = repo
        .find_reference(full.as_str())
        .ok()
        .and_then(|mut r| r.peel_to_id().ok())
        .map(gix::Id::detach);
    let short_name = full
        .strip_prefix("refs/remotes/")
        .or_else(|| full.strip_prefix("refs/heads/"))
        .unwrap_or(&full)
        .to_owned();
    Some((short_name, id))
}

/// Commits in `a` not in `b`, and in `b` not in `a`.
fn ahead_behind(repo: &gix::Repository, a: gix::ObjectId, b: gix::ObjectId) -> (usize, usize) {
    let count = |from: gix::ObjectId, hidden: gix::ObjectId| {
        repo.rev_walk([from])
            .with_hidden([hidden])
            .all()
            .map(|walk| walk.filter(Result::is_ok).count())
            .unwrap_or(0)
    };
    (count(a, b), count(b, a))
}

fn use_color(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    let value = config
        .string("color.status")
        .or_else(|| config.string("status.color"))
        .or_else(|| config.string("color.ui"))
        .map(|v| v.to_str_lossy().to_ascii_lowercase());
    match value.as_deref() {
        Some("always") | Some("true") | Some("yes") | Some("on") | Some("1") => {
            value.as_deref() == Some("always") || stdout_is_tty()
        }
        Some("never") | Some("false") | Some("no") | Some("off") | Some("0") => false,
        _ => stdout_is_tty(),
    }
}

fn stdout_is_tty() -> bool {
    let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
    tty && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

fn prefix_bytes(opened: &Opened) -> BString {
    let mut out = crate::platform::git_path_bytes_lossy(&opened.prefix).into_owned();
    if !out.is_empty() && !out.ends_with(b"/") {
        out.push(b'/');
    }
    out
}

/// `path` relative to the current directory `prefix` (`a/` style), as git's `relative_path`.
fn relative(path: &BStr, prefix: &BStr) -> BString {
    if prefix.is_empty() {
        return path.to_owned();
    }
    let common = path
        .iter()
        .zip(prefix.iter())
        .take_while(|(a, b)| a == b)
        .count();
    // Back up to a directory boundary.
    let base = prefix[..common].rfind_byte(b'/').map_or(0, |p| p + 1);
    let ups = prefix[base..].iter().filter(|&&b| b == b'/').count();
    let mut out = BString::default();
    for _ in 0..ups {
        out.extend_from_slice(b"../");
    }
    out.extend_from_slice(&path[base..]);
    if out.is_empty() {
        out.extend_from_slice(b"./");
    }
    out
}

/// git's `quote_c_style` (core.quotePath on); `space` quotes a path with a space too
/// (`QUOTE_PATH_QUOTE_SP`, the short formats).
fn quote(path: &BStr, space: bool) -> BString {
    if space && path.contains(&b' ') {
        let q = crate::quote::quote_path(path);
        if q.starts_with('"') {
            return q.into();
        }
        return format!("\"{q}\"").into();
    }
    crate::quote::quote_path(path).into()
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[m";

struct Printer<'a> {
    repo: &'a gix::Repository,
    opened: &'a Opened,
    head: &'a Head,
    st: &'a Status,
    nul: bool,
    untracked: Untracked,
    ignored: Ignored,
    color: bool,
    /// The current directory in the work tree (`a/b/`), paths are shown relative to it;
    /// empty with `status.relativePaths=false`.
    prefix: BString,
    settings: &'a config::Settings,
    ignore_submodules: Option<IgnoreSubmodules>,
    /// Count the commits ahead and behind the upstream (`--no-ahead-behind`,
    /// `status.aheadBehind=false`: only say that they differ).
    full_ahead_behind: bool,
    worktree: &'a std::path::Path,
    /// Where the long format's last line ("nothing to commit", ...) starts: git prints it
    /// without the comment prefix.
    tail: Cell<Option<usize>>,
}

fn unmerged_xy(mask: u8) -> &'static str {
    match mask {
        1 => "DD",
        2 => "AU",
        3 => "UD",
        4 => "UA",
        5 => "DU",
        6 => "AA",
        _ => "UU",
    }
}

impl Printer<'_> {
    /// Print the status in `format` into `out`: with `branch`, the branch line of the short
    /// formats; with `show_stash`, the stash count; the long format's comment prefix.
    fn print(&self, out: &mut Vec<u8>, format: Format, branch: bool, show_stash: bool) {
        match format {
            Format::V1 => self.short(out, branch, true),
            Format::Short => self.short(out, branch, false),
            Format::V2 => {
                self.v2(out, branch, show_stash);
            }
            Format::Long | Format::Default => {
                self.long(out);
                let tail = self.tail.get().unwrap_or(out.len())..out.len();
                if show_stash {
                    self.stash_summary(out);
                }
                if self.settings.comment_prefix {
                    *out = self.commented(out, tail);
                }
            }
        }
    }

    fn paint(&self, out: &mut Vec<u8>, color: &str, text: &[u8]) {
        if self.color && !text.is_empty() {
            out.extend_from_slice(color.as_bytes());
            out.extend_from_slice(text);
            out.extend_from_slice(RESET.as_bytes());
        } else {
            out.extend_from_slice(text);
        }
    }

    fn shown_path(&self, path: &BStr, porcelain: bool) -> BString {
        if porcelain {
            path.to_owned()
        } else {
            relative(path, self.prefix.as_bstr())
        }
    }

    fn branch_name(&self) -> Option<String> {
        self.head.branch.as_ref().map(|b| {
            b.strip_prefix(b"refs/heads/")
                .unwrap_or(b)
                .to_str_lossy()
                .into_owned()
        })
    }

    /// `-s` and `--porcelain[=v1]`.
    fn short(&self, out: &mut Vec<u8>, branch: bool, porcelain: bool) {
        let eol = if self.nul { b'\0' } else { b'\n' };
        if branch {
            self.short_branch(out, eol);
        }
        for c in &self.st.changes {
            self.short_change(out, c, porcelain);
        }
        for (list, tag) in [(&self.st.untracked, "??"), (&self.st.ignored, "!!")] {
            for path in list {
                self.paint(out, RED, tag.as_bytes());
                out.push(b' ');
                if self.nul {
                    out.extend_from_slice(path);
                    out.push(0);
                } else {
                    out.extend_from_slice(&quote(
                        self.shown_path(path.as_bstr(), porcelain).as_bstr(),
                        true,
                    ));
                    out.push(b'\n');
                }
            }
        }
    }

    /// The short formats' branch line: `## <branch>...<upstream> [ahead N, behind M]`.
    fn short_branch(&self, out: &mut Vec<u8>, eol: u8) {
        self.paint(out, "", b"## ");
        match (self.branch_name(), self.head.commit) {
            (Some(name), None) => {
                out.extend_from_slice(b"No commits yet on ");
                self.paint(out, GREEN, name.as_bytes());
            }
            (Some(name), Some(commit)) => {
                self.paint(out, GREEN, name.as_bytes());
                if let Some((up, id)) = &self.head.upstream {
                    out.extend_from_slice(b"...");
                    self.paint(out, RED, up.as_bytes());
                    match id {
                        None => out.extend_from_slice(b" [gone]"),
                        Some(id) if !self.full_ahead_behind && commit != *id => {
                            out.extend_from_slice(b" [different]");
                        }
                        Some(id) => {
                            let (a, b) = ahead_behind(self.repo, commit, *id);
                            match (a, b) {
                                (0, 0) => {}
                                (a, 0) => {
                                    out.extend_from_slice(b" [ahead ");
                                    self.paint(out, GREEN, a.to_string().as_bytes());
                                    out.push(b']');
                                }
                                (0, b) => {
                                    out.extend_from_slice(b" [behind ");
                                    self.paint(out, RED, b.to_string().as_bytes());
                                    out.push(b']');
                                }
                                (a, b) => {
                                    out.extend_from_slice(b" [ahead ");
                                    self.paint(out, GREEN, a.to_string().as_bytes());
                                    out.extend_from_slice(b", behind ");
                                    self.paint(out, RED, b.to_string().as_bytes());
                                    out.push(b']');
                                }
                            }
                        }
                    }
                }
            }
            (None, _) => self.paint(out, RED, b"HEAD (no branch)"),
        }
        out.push(eol);
    }

    /// One change of the short formats: `XY <path>` (the rename's source too), submodules'
    /// own letters for people (not `--porcelain`).
    fn short_change(&self, out: &mut Vec<u8>, c: &Change, porcelain: bool) {
        if let Some((mask, _, _)) = c.unmerged {
            self.paint(out, RED, unmerged_xy(mask).as_bytes());
        } else {
            let x = c.index_status.map(|x| [x]);
            let mut y = c.worktree_status;
            if !porcelain {
                if let Some(sub) = c.submodule {
                    y = Some(if sub.new_commits {
                        b'M'
                    } else if sub.modified {
                        b'm'
                    } else {
                        b'?'
                    });
                }
            }
            match x {
                Some(x) => self.paint(out, GREEN, &x),
                None => out.push(b' '),
            }
            match y {
                Some(y) => self.paint(out, RED, &[y]),
                None => out.push(b' '),
            }
        }
        out.push(b' ');
        if self.nul {
            out.extend_from_slice(&c.path);
            out.push(0);
            if let Some((from, _)) = &c.rename {
                out.extend_from_slice(from);
                out.push(0);
            }
        } else {
            if let Some((from, _)) = &c.rename {
                out.extend_from_slice(&quote(
                    self.shown_path(from.as_bstr(), porcelain).as_bstr(),
                    true,
                ));
                out.extend_from_slice(b" -> ");
            }
            out.extend_from_slice(&quote(
                self.shown_path(c.path.as_bstr(), porcelain).as_bstr(),
                true,
            ));
            out.push(b'\n');
        }
    }

    /// `--porcelain=v2`.
    fn v2(&self, out: &mut Vec<u8>, branch: bool, show_stash: bool) {
        let eol = if self.nul { b'\0' } else { b'\n' };
        if branch {
            self.v2_branch(out, eol);
        }
        if show_stash {
            let n = stash_count(self.repo);
            if n > 0 {
                let _ = write!(out, "# stash {n}");
                out.push(eol);
            }
        }
        let path_of = |p: &BStr| -> BString {
            if self.nul {
                p.to_owned()
            } else {
                quote(self.shown_path(p, false).as_bstr(), false)
            }
        };
        // git prints the unmerged entries after all the others.
        let changed = self.st.changes.iter().filter(|c| c.unmerged.is_none());
        let unmerged = self.st.changes.iter().filter(|c| c.unmerged.is_some());
        for c in changed.chain(unmerged) {
            if let Some((mask, modes, ids)) = c.unmerged {
                let _ = write!(
                    out,
                    "u {} N... {:06o} {:06o} {:06o} {:06o} {} {} {} ",
                    unmerged_xy(mask),
                    modes[0],
                    modes[1],
                    modes[2],
                    c.modes[2],
                    ids[0],
                    ids[1],
                    ids[2]
                );
                out.extend_from_slice(&path_of(c.path.as_bstr()));
                out.push(eol);
                continue;
            }
            let x = c.index_status.unwrap_or(b'.') as char;
            let y = c.worktree_status.unwrap_or(b'.') as char;
            let is_sub = c.modes.contains(&0o160000);
            let sub = if is_sub {
                let s = c.submodule.unwrap_or_default();
                format!(
                    "S{}{}{}",
                    if s.new_commits { 'C' } else { '.' },
                    if s.modified { 'M' } else { '.' },
                    if s.untracked { 'U' } else { '.' }
                )
            } else {
                "N...".to_owned()
            };
            let head = format!(
                "{x}{y} {sub} {:06o} {:06o} {:06o} {} {}",
                c.modes[0], c.modes[1], c.modes[2], c.ids[0], c.ids[1]
            );
            match &c.rename {
                Some((from, score)) => {
                    let kind = c.index_status.unwrap_or(b'R') as char;
                    let _ = write!(out, "2 {head} {kind}{score} ");
                    out.extend_from_slice(&path_of(c.path.as_bstr()));
                    out.push(if self.nul { 0 } else { b'\t' });
                    out.extend_from_slice(&path_of(from.as_bstr()));
                }
                None => {
                    let _ = write!(out, "1 {head} ");
                    out.extend_from_slice(&path_of(c.path.as_bstr()));
                }
            }
            out.push(eol);
        }
        for (list, tag) in [(&self.st.untracked, "?"), (&self.st.ignored, "!")] {
            for path in list {
                let _ = write!(out, "{tag} ");
                out.extend_from_slice(&path_of(path.as_bstr()));
                out.push(eol);
            }
        }
    }

    /// The porcelain v2 branch headers: `# branch.oid`, `# branch.head`, `# branch.upstream`
    /// and `# branch.ab`.
    fn v2_branch(&self, out: &mut Vec<u8>, eol: u8) {
        match self.head.commit {
            Some(c) => {
                let _ = write!(out, "# branch.oid {c}");
            }
            None => out.extend_from_slice(b"# branch.oid (initial)"),
        }
        out.push(eol);
        match self.branch_name() {
            Some(b) => {
                let _ = write!(out, "# branch.head {b}");
            }
            None => out.extend_from_slice(b"# branch.head (detached)"),
        }
        out.push(eol);
        if let Some((up, id)) = &self.head.upstream {
            let _ = write!(out, "# branch.upstream {up}");
            out.push(eol);
            if let (Some(id), Some(commit)) = (id, self.head.commit) {
                if !self.full_ahead_behind && commit != *id {
                    // --no-ahead-behind: only whether they differ.
                    out.extend_from_slice(b"# branch.ab +? -?");
                } else {
                    let (a, b) = ahead_behind(self.repo, commit, *id);
                    let _ = write!(out, "# branch.ab +{a} -{b}");
                }
                out.push(eol);
            }
        }
    }

    /// The long format (the default): the branch and its upstream, the state of an operation
    /// in progress, then the changes by kind, the untracked files and the verdict.
    fn long(&self, out: &mut Vec<u8>) {
        let config = self.repo.config_snapshot();
        let advice = |name: &str| {
            config.boolean("advice.statusHints").unwrap_or(true)
                && config.boolean(&format!("advice.{name}")).unwrap_or(true)
        };
        let hints = self.settings.hints && advice("statusHints");
        let detached = self.head.branch.is_none() && self.head.commit.is_some();
        let state = wt_state::WtState::get(self.repo, detached);
        self.long_branch(out, &state);
        self.long_upstream(out, hints);
        let unborn = self.head.commit.is_none();
        let has_unmerged = self.st.changes.iter().any(|c| c.unmerged.is_some());
        let git_dir = self.repo.git_dir();
        let merging = git_dir.join("MERGE_HEAD").exists();
        // git's `whence`: during a merge or cherry-pick there is no "unstage" hint.
        let from_commit = !merging && !git_dir.join("CHERRY_PICK_HEAD").exists();
        let view = wt_state::View {
            hints,
            has_unmerged,
            workdir_dirty: self
                .st
                .changes
                .iter()
                .any(|c| c.unmerged.is_some() || c.worktree_status.is_some()),
            detached,
        };
        self.long_state(out, &state, &view, unborn);
        let changes = |keep: fn(&Change) -> bool| -> Vec<&Change> {
            self.st.changes.iter().filter(|c| keep(c)).collect()
        };
        let staged = changes(|c| c.unmerged.is_none() && c.index_status.is_some());
        let unmerged = changes(|c| c.unmerged.is_some());
        let unstaged = changes(|c| c.unmerged.is_none() && c.worktree_status.is_some());
        // git's `committable`: a merge with nothing unmerged can be concluded even when the
        // index matches HEAD.
        let committable = !staged.is_empty() || (merging && !has_unmerged);
        let unstage_hint = hints && from_commit;
        self.long_staged(out, &staged, unstage_hint, unborn);
        self.long_unmerged(out, &unmerged, (unstage_hint, hints), unborn);
        self.long_unstaged(out, &unstaged, hints);
        self.submodule_summaries(out);
        self.long_untracked(out, hints, committable);
        self.tail.set(Some(out.len()));
        if !committable {
            let changed = !unstaged.is_empty() || !unmerged.is_empty();
            let _ = writeln!(out, "{}", self.long_verdict(hints, changed, unborn));
        }
    }

    /// The long format's first line: the branch, or what a detached `HEAD` is at (nothing on an
    /// unborn branch).
    fn long_branch(&self, out: &mut Vec<u8>, state: &wt_state::WtState) {
        match (self.branch_name(), self.head.commit) {
            (Some(name), _) => {
                let _ = writeln!(out, "On branch {name}");
            }
            (None, Some(_)) => {
                let (on_what, name) = state.detached_header();
                self.paint(out, RED, on_what.as_bytes());
                out.extend_from_slice(&name);
                out.push(b'\n');
            }
            (None, None) => {}
        }
    }

    /// git's `format_tracking_info`: how the branch stands against its upstream, with its hints,
    /// and the blank line after it.
    fn long_upstream(&self, out: &mut Vec<u8>, hints: bool) {
        let (Some((up, id)), Some(commit)) = (&self.head.upstream, self.head.commit) else {
            return;
        };
        let (line, hint): (String, &str) = match id {
            None => (
                format!("Your branch is based on '{up}', but the upstream is gone."),
                "  (use \"git branch --unset-upstream\" to fixup)\n",
            ),
            Some(id) if !self.full_ahead_behind && commit != *id => (
                format!("Your branch and '{up}' refer to different commits."),
                "  (use \"git status --ahead-behind\" for details)\n",
            ),
            Some(id) => {
                let (a, b) = ahead_behind(self.repo, commit, *id);
                let s = |n: usize| if n == 1 { "" } else { "s" };
                match (a, b) {
                    (0, 0) => (format!("Your branch is up to date with '{up}'."), ""),
                    (a, 0) => (
                        format!("Your branch is ahead of '{up}' by {a} commit{}.", s(a)),
                        "  (use \"git push\" to publish your local commits)\n",
                    ),
                    (0, b) => (
                        format!(
                            "Your branch is behind '{up}' by {b} commit{}, and can be fast-forwarded.",
                            s(b)
                        ),
                        "  (use \"git pull\" to update your local branch)\n",
                    ),
                    (a, b) => (
                        format!(
                            "Your branch and '{up}' have diverged,\nand have {a} and {b} different commits each, respectively."
                        ),
                        "  (use \"git pull\" if you want to integrate the remote branch with yours)\n",
                    ),
                }
            }
        };
        let _ = writeln!(out, "{line}");
        if hints {
            out.extend_from_slice(hint.as_bytes());
        }
        out.push(b'\n');
    }

    /// The operation in progress (`wt_state`), the sparse checkout's share of files, and "No
    /// commits yet" on an unborn branch.
    fn long_state(
        &self,
        out: &mut Vec<u8>,
        state: &wt_state::WtState,
        view: &wt_state::View,
        unborn: bool,
    ) {
        for line in state.lines(self.opened, view) {
            out.extend_from_slice(&line);
            out.push(b'\n');
        }
        if let Some((present, all)) = self.st.sparse.filter(|s| s.1 > 0) {
            // git's `wt_status_check_sparse_checkout` rounds the skipped share down, so the
            // present share rounds up.
            let _ = writeln!(
                out,
                "You are in a sparse checkout with {}% of tracked files present.\n",
                100 - (all - present) * 100 / all
            );
        }
        if unborn {
            out.extend_from_slice(b"\nNo commits yet\n\n");
        }
    }

    /// One change of the long format: tab, the label padded, the path (the rename's source
    /// first, on the side whose status it is), and `extra`, painted in `color`.
    fn long_entry(&self, out: &mut Vec<u8>, color: &str, what: &str, c: &Change, extra: &str) {
        out.push(b'\t');
        let mut line = format!("{what:<12}");
        // git shows the rename on the side whose status it is (`rename_status == status`).
        let side = if color == GREEN {
            c.index_status
        } else {
            c.worktree_status
        };
        let rename = c
            .rename
            .as_ref()
            .filter(|_| matches!(side, Some(b'R' | b'C')));
        if let Some((from, _)) = rename {
            line.push_str(
                &quote(self.shown_path(from.as_bstr(), false).as_bstr(), false).to_str_lossy(),
            );
            line.push_str(" -> ");
        }
        line.push_str(
            &quote(self.shown_path(c.path.as_bstr(), false).as_bstr(), false).to_str_lossy(),
        );
        line.push_str(extra);
        self.paint(out, color, line.as_bytes());
        out.push(b'\n');
    }

    /// "Changes to be committed:", with the unstage hint when `unstage_hint`.
    fn long_staged(&self, out: &mut Vec<u8>, staged: &[&Change], unstage_hint: bool, unborn: bool) {
        if staged.is_empty() {
            return;
        }
        out.extend_from_slice(b"Changes to be committed:\n");
        if unstage_hint {
            out.extend_from_slice(unstage_hint_line(unborn));
        }
        for c in staged {
            self.long_entry(
                out,
                GREEN,
                change_label(c.index_status.unwrap_or(b'M')),
                c,
                "",
            );
        }
        out.push(b'\n');
    }

    /// "Unmerged paths:", with the unstage hint and git's resolution hint.
    fn long_unmerged(
        &self,
        out: &mut Vec<u8>,
        unmerged: &[&Change],
        (unstage_hint, hints): (bool, bool),
        unborn: bool,
    ) {
        if unmerged.is_empty() {
            return;
        }
        out.extend_from_slice(b"Unmerged paths:\n");
        if unstage_hint {
            out.extend_from_slice(unstage_hint_line(unborn));
        }
        if hints {
            out.extend_from_slice(wt_state::resolution_hint(
                unmerged.iter().filter_map(|c| c.unmerged.map(|u| u.0)),
            ));
        }
        for c in unmerged {
            let what = match c.unmerged.map_or(7, |u| u.0) {
                1 => "both deleted:",
                2 => "added by us:",
                3 => "deleted by them:",
                4 => "added by them:",
                5 => "deleted by us:",
                6 => "both added:",
                _ => "both modified:",
            };
            out.push(b'\t');
            let line = format!(
                "{what:<17}{}",
                quote(self.shown_path(c.path.as_bstr(), false).as_bstr(), false)
            );
            self.paint(out, RED, line.as_bytes());
            out.push(b'\n');
        }
        out.push(b'\n');
    }

    /// "Changes not staged for commit:", with git's hints and what changed in submodules.
    fn long_unstaged(&self, out: &mut Vec<u8>, unstaged: &[&Change], hints: bool) {
        if unstaged.is_empty() {
            return;
        }
        out.extend_from_slice(b"Changes not staged for commit:\n");
        if hints {
            if unstaged.iter().any(|c| c.worktree_status == Some(b'D')) {
                out.extend_from_slice(
                    b"  (use \"git add/rm <file>...\" to update what will be committed)\n",
                );
            } else {
                out.extend_from_slice(
                    b"  (use \"git add <file>...\" to update what will be committed)\n",
                );
            }
            out.extend_from_slice(
                b"  (use \"git restore <file>...\" to discard changes in working directory)\n",
            );
            if unstaged
                .iter()
                .any(|c| c.submodule.is_some_and(|s| s.modified || s.untracked))
            {
                out.extend_from_slice(
                    b"  (commit or discard the untracked or modified content in submodules)\n",
                );
            }
        }
        for c in unstaged {
            let extra = submodule_changes(c);
            let label = change_label(c.worktree_status.unwrap_or(b'M'));
            self.long_entry(out, RED, label, c, &extra);
        }
        out.push(b'\n');
    }

    /// A list of paths under `title` ("Untracked files", "Ignored files") with git's hint to
    /// `git <hint>` them; nothing when `list` is empty.
    fn long_listed(
        &self,
        out: &mut Vec<u8>,
        (title, hint): (&str, &str),
        list: &[BString],
        hints: bool,
    ) {
        if list.is_empty() {
            return;
        }
        let _ = writeln!(out, "{title}:");
        if hints {
            let _ = writeln!(
                out,
                "  (use \"git {hint} <file>...\" to include in what will be committed)"
            );
        }
        for p in list {
            out.push(b'\t');
            let shown = quote(self.shown_path(p.as_bstr(), false).as_bstr(), false);
            self.paint(out, RED, &shown);
            out.push(b'\n');
        }
        out.push(b'\n');
    }

    /// The untracked and ignored files (and the advice on a slow walk), or, with `-uno`, that
    /// they are not listed.
    fn long_untracked(&self, out: &mut Vec<u8>, hints: bool, committable: bool) {
        if self.untracked != Untracked::No {
            self.long_listed(out, ("Untracked files", "add"), &self.st.untracked, hints);
            if self.ignored != Ignored::No {
                self.long_listed(out, ("Ignored files", "add -f"), &self.st.ignored, hints);
            }
            self.slow_untracked_advice(out);
        } else if committable {
            if hints {
                out.extend_from_slice(
                    b"Untracked files not listed (use -u option to show untracked files)\n",
                );
            } else {
                out.extend_from_slice(b"Untracked files not listed\n");
            }
        }
    }

    /// git's last line when there is nothing to commit: why, and with hints, what to do.
    fn long_verdict(&self, hints: bool, changed: bool, unborn: bool) -> &'static str {
        if changed {
            if hints {
                "no changes added to commit (use \"git add\" and/or \"git commit -a\")"
            } else {
                "no changes added to commit"
            }
        } else if !self.st.untracked.is_empty() {
            if hints {
                "nothing added to commit but untracked files present (use \"git add\" to track)"
            } else {
                "nothing added to commit but untracked files present"
            }
        } else if unborn {
            if hints {
                "nothing to commit (create/copy files and use \"git add\" to track)"
            } else {
                "nothing to commit"
            }
        } else if self.untracked == Untracked::No {
            if hints {
                "nothing to commit (use -u to show untracked files)"
            } else {
                "nothing to commit"
            }
        } else {
            "nothing to commit, working tree clean"
        }
    }
}

/// The long format's label of a change status (`M`: "modified:").
fn change_label(status: u8) -> &'static str {
    match status {
        b'A' => "new file:",
        b'C' => "copied:",
        b'D' => "deleted:",
        b'M' => "modified:",
        b'R' => "renamed:",
        b'T' => "typechange:",
        _ => "unknown:",
    }
}

/// git's hint to unstage: `git rm --cached` on an unborn branch, else `git restore --staged`.
fn unstage_hint_line(unborn: bool) -> &'static [u8] {
    if unborn {
        b"  (use \"git rm --cached <file>...\" to unstage)\n"
    } else {
        b"  (use \"git restore --staged <file>...\" to unstage)\n"
    }
}

/// What changed in a submodule, as the long format adds it: " (new commits, modified content)".
fn submodule_changes(c: &Change) -> String {
    let Some(sub) = c.submodule else {
        return String::new();
    };
    let mut extra = Vec::new();
    if sub.new_commits {
        extra.push("new commits");
    }
    if sub.modified {
        extra.push("modified content");
    }
    if sub.untracked {
        extra.push("untracked content");
    }
    if extra.is_empty() {
        String::new()
    } else {
        format!(" ({})", extra.join(", "))
    }
}

/// The long format's parts that come from configuration: the submodule summary, the advice on a
/// slow untracked walk, the stash count and the comment prefix.
impl Printer<'_> {
    /// `status.submoduleSummary` (not with `--ignore-submodules=all`): the staged, then the
    /// unstaged submodule changes, as `git submodule summary` lists them.
    fn submodule_summaries(&self, out: &mut Vec<u8>) {
        let limit = self.settings.submodule_summary;
        if limit == 0 || self.ignore_submodules == Some(IgnoreSubmodules::All) {
            return;
        }
        for staged in [true, false] {
            out.extend(summary::section(
                self.repo,
                self.worktree,
                &self.opened.index_path,
                limit,
                staged,
            ));
        }
    }

    /// git's advice when listing the untracked files took more than two seconds
    /// (`GIT_TEST_UF_DELAY_WARNING` makes it 3.25 seconds, for git's tests).
    fn slow_untracked_advice(&self, out: &mut Vec<u8>) {
        if !self.settings.untracked_advice {
            return;
        }
        let ms = if std::env::var_os("GIT_TEST_UF_DELAY_WARNING").is_some() {
            3250
        } else {
            self.st.untracked_time.as_millis()
        };
        if ms <= 2000 {
            return;
        }
        let seconds = ms as f64 / 1000.0;
        if self.settings.fsmonitor {
            let _ = write!(
                out,
                "\nIt took {seconds:.2} seconds to enumerate untracked files,\n\
                 but the results were cached, and subsequent runs may be faster.\n"
            );
        } else {
            let _ = write!(
                out,
                "\nIt took {seconds:.2} seconds to enumerate untracked files.\n"
            );
        }
        out.extend_from_slice(b"See 'git help status' for information on how to improve this.\n\n");
    }

    /// `--show-stash` / `status.showStash`: how many entries `refs/stash` has.
    fn stash_summary(&self, out: &mut Vec<u8>) {
        match stash_count(self.repo) {
            0 => {}
            1 => out.extend_from_slice(b"Your stash currently has 1 entry\n"),
            n => {
                let _ = writeln!(out, "Your stash currently has {n} entries");
            }
        }
    }

    /// `out` with git's comment prefix on every line but those of `tail` (the closing line,
    /// which git prints with a plain `fprintf`).
    fn commented(&self, out: &[u8], tail: std::ops::Range<usize>) -> Vec<u8> {
        let comment = self.settings.comment.as_bstr();
        let mut text = config::commented(&out[..tail.start], comment);
        text.extend_from_slice(&out[tail.clone()]);
        text.extend(config::commented(&out[tail.end..], comment));
        text
    }
}

/// The entries of the `refs/stash` reflog (git's `count_stash_entries`).
fn stash_count(repo: &gix::Repository) -> usize {
    let Ok(Some(stash)) = repo.try_find_reference("refs/stash") else {
        return 0;
    };
    let mut log = stash.log_iter();
    match log.all() {
        Ok(Some(entries)) => entries.filter(Result::is_ok).count(),
        _ => 0,
    }
}
