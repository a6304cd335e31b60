//! Branch creation and tracking for `switch` and `checkout`, as git 2.47 does it: `-b/-B`,
//! `-c/-C`, `-t/--track[=direct|inherit]`, `--no-track`, `--guess/--no-guess` (`checkout.guess`),
//! `checkout.defaultRemote`, `branch.autoSetupMerge`, `branch.autoSetupRebase`, and the refusal to
//! switch to a branch that another work tree has checked out (`--ignore-other-worktrees`).
//!
//! The pieces follow git's own: `checkout_main`'s `--track` DWIM and `parse_remote_branch`
//! (builtin/checkout.c), `validate_new_branchname`, `dwim_branch_start`, `create_branch`,
//! `setup_tracking` and `install_branch_config_multiple_remotes` (branch.c), `die_if_checked_out`
//! (branch.c / worktree.c). The remote and work-tree queries are the engine's
//! ([`gitpar::repo::branch`]).

use bstr::ByteSlice;
use clap::Args;
use gitpar::repo::create_branch::resolve_symbolic;
pub(crate) use gitpar::repo::create_branch::{NewBranch, Track};

use crate::exit::{fatal, FATAL};

/// The branch options `switch` and `checkout` share.
#[derive(Args, Debug, Default)]
pub(crate) struct BranchOpts {
    /// Set up upstream tracking for the new branch (`direct`, the default, or `inherit`).
    #[arg(
        short = 't',
        long = "track",
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "direct",
        value_parser = ["direct", "inherit"],
        overrides_with = "no_track"
    )]
    track: Option<String>,
    /// Do not set up upstream tracking, whatever `branch.autoSetupMerge` says.
    #[arg(long = "no-track", overrides_with = "track")]
    no_track: bool,
    /// Create a branch from a remote-tracking branch of the same name (default: `checkout.guess`).
    #[arg(long = "guess", overrides_with = "no_guess")]
    guess: bool,
    /// Do not create a branch from a remote-tracking branch of the same name.
    #[arg(long = "no-guess", overrides_with = "guess")]
    no_guess: bool,
    /// Switch even to a branch that another work tree has checked out.
    #[arg(long = "ignore-other-worktrees")]
    ignore_other_worktrees: bool,
    /// Silently overwrite ignored files in the way (the default).
    #[arg(long = "overwrite-ignore", overrides_with = "no_overwrite_ignore")]
    overwrite_ignore: bool,
    /// Refuse to overwrite ignored files in the way, as untracked ones.
    #[arg(long = "no-overwrite-ignore", overrides_with = "overwrite_ignore")]
    no_overwrite_ignore: bool,
}

/// Which command asks: their rules differ slightly (git's `accept_pathspec`, `-b` vs `-c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmd {
    Switch,
    Checkout,
}

impl Cmd {
    fn create_option(self) -> char {
        match self {
            Cmd::Switch => 'c',
            Cmd::Checkout => 'b',
        }
    }
}

/// What git says on standard error after switching to the new branch `nb` (`old_head`: HEAD's
/// symbolic target before, a full ref name).
pub(crate) fn switched_message(nb: &NewBranch, old_head: Option<&str>) -> String {
    let name = &nb.name;
    if old_head == Some(format!("refs/heads/{name}").as_str()) {
        if nb.force {
            format!("Reset branch '{name}'")
        } else {
            format!("Already on '{name}'")
        }
    } else if nb.exists {
        format!("Switched to and reset branch '{name}'")
    } else {
        format!("Switched to a new branch '{name}'")
    }
}

// ---------------------------------------------------------------------------------------------
// Configuration and advice

fn config_string(repo: &gix::Repository, key: &str) -> Option<String> {
    repo.config_snapshot()
        .string(key)
        .map(|v| v.to_str_lossy().into_owned())
}

impl BranchOpts {
    /// `--no-overwrite-ignore` was the last of the pair given (git's `preserve_ignored`, for a
    /// switch that is not forced).
    pub(crate) fn preserve_ignored(&self) -> bool {
        self.no_overwrite_ignore
    }

    /// `-t`/`--track`/`--no-track` was given (git's `track != BRANCH_TRACK_UNSPECIFIED`).
    pub(crate) fn track_given(&self) -> bool {
        self.track.is_some() || self.no_track
    }

    /// The tracking mode of a new branch: the option, else `branch.autoSetupMerge`.
    fn track(&self, repo: &gix::Repository) -> Track {
        match (self.track.as_deref(), self.no_track) {
            (Some("inherit"), _) => Track::Inherit,
            (Some(_), _) => Track::Explicit,
            (None, true) => Track::Never,
            (None, false) => Track::configured(repo),
        }
    }

    /// `--guess`/`--no-guess`, else `checkout.guess` (default true).
    fn guess(&self, repo: &gix::Repository) -> bool {
        if self.no_guess {
            false
        } else if self.guess {
            true
        } else {
            repo.config_snapshot()
                .boolean("checkout.guess")
                .unwrap_or(true)
        }
    }
}

/// git's `advice_enabled`: `advice.<key>` (default on), all advice off with `GIT_ADVICE=0`.
pub(crate) fn advice_enabled(repo: &gix::Repository, key: &str) -> bool {
    if let Ok(v) = std::env::var("GIT_ADVICE") {
        if matches!(
            v.to_ascii_lowercase().as_str(),
            "0" | "false" | "no" | "off"
        ) {
            return false;
        }
    }
    repo.config_snapshot()
        .boolean(format!("advice.{key}").as_str())
        .unwrap_or(true)
}

/// git's `advise`: every line of `text` as a `hint:` line on standard error.
pub(crate) fn advise(text: &str) {
    advise_colored(text, ("", ""));
}

/// [`advise`] in `repo`, coloured as git colours hints (`color.advice`, else `color.ui`:
/// yellow when standard error is a terminal, or always).
pub(crate) fn advise_in(repo: &gix::Repository, text: &str) {
    let config = repo.config_snapshot();
    let setting = config
        .string("color.advice")
        .or_else(|| config.string("color.ui"))
        .map(|v| v.to_string().to_ascii_lowercase());
    let on = match setting.as_deref() {
        Some("always") => true,
        Some("never" | "false" | "no" | "off" | "0") => false,
        _ => {
            use std::io::IsTerminal;
            std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb")
        }
    };
    advise_colored(text, if on { ("\x1b[33m", "\x1b[m") } else { ("", "") });
}

/// Every line of `text` as `<color>hint: <line><reset>` (git's `vadvise`).
fn advise_colored(text: &str, (color, reset): (&str, &str)) {
    for line in text.split('\n') {
        if line.is_empty() {
            eprintln!("{color}hint:{reset}");
        } else {
            eprintln!("{color}hint: {line}{reset}");
        }
    }
}

/// git's `advise_if_enabled`: like [`advise`] when `advice.<key>` is not off, with the line that
/// says how to turn it off unless it was explicitly turned on.
pub(crate) fn advise_if_enabled(repo: &gix::Repository, key: &str, text: &str) {
    if !advice_enabled(repo, key) {
        return;
    }
    let explicit = repo
        .config_snapshot()
        .boolean(format!("advice.{key}").as_str())
        .is_some();
    if explicit {
        advise_in(repo, text);
    } else {
        advise_in(
            repo,
            &format!("{text}\nDisable this message with \"git config advice.{key} false\""),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Which branch to create, and from where

/// The arguments after the subcommand name (`git-par [-c k=v]... checkout ARGS`), as typed.
fn subcommand_args() -> Vec<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-c" {
            args.next();
        } else if !arg.starts_with("-c") {
            return args.collect();
        }
    }
    Vec::new()
}

/// A branch to create, validated (git's `opts->new_branch` after `validate_new_branchname`).
#[derive(Debug, Clone)]
pub(crate) struct Create {
    /// The name, with `@{-N}` expanded.
    name: String,
    /// `-B`/`-C`.
    force: bool,
    /// It exists (only possible with `force`).
    exists: bool,
    track: Track,
    cmd: Cmd,
}

/// Whether `parse_branchname_arg` may guess a new branch from a remote-tracking one (git's
/// `dwim_ok`): no branch to create, no `--track`/`--no-track`, and `--guess` / `checkout.guess`.
pub(crate) fn dwim_ok(repo: &gix::Repository, creating: bool, opts: &BranchOpts) -> bool {
    !creating && !opts.track_given() && opts.guess(repo)
}

/// The branch to create, if any: `-b`/`-c NEW`, `-B`/`-C NEW` (which may exist: it is reset),
/// or with `--track`/`--no-track` alone, the name DWIMmed from the start point (`origin/topic` →
/// `topic`), as git's `checkout_main`; validated as git's `validate_new_branchname` /
/// `validate_branchname`.
pub(crate) fn requested(
    repo: &gix::Repository,
    cmd: Cmd,
    create: Option<&str>,
    force_create: Option<&str>,
    target: Option<&str>,
    opts: &BranchOpts,
) -> Result<Option<Create>, u8> {
    let o = cmd.create_option();
    let (name, force) = match (create, force_create) {
        (Some(_), Some(_)) => {
            return Err(fatal(format!(
                "options '-{o}', '-{}', and '--orphan' cannot be used together",
                o.to_ascii_uppercase()
            )))
        }
        (Some(name), None) => (name.to_owned(), false),
        (None, Some(name)) => (name.to_owned(), true),
        (None, None) if opts.track_given() => {
            let Some(arg) = target.filter(|t| *t != "--") else {
                return Err(fatal("--track needs a branch name"));
            };
            let arg = arg.strip_prefix("refs/").unwrap_or(arg);
            let arg = arg.strip_prefix("remotes/").unwrap_or(arg);
            match arg.split_once('/') {
                Some((_, name)) if !name.is_empty() => (name.to_owned(), false),
                _ => return Err(fatal(format!("missing branch name; try -{o}"))),
            }
        }
        (None, None) => return Ok(None),
    };
    let (name, exists) = if force {
        validate_branchname(repo, &name)?
    } else {
        (crate::revision::validate_new_branch(repo, &name)?, false)
    };
    Ok(Some(Create {
        name,
        force,
        exists,
        track: opts.track(repo),
        cmd,
    }))
}

/// git's `validate_branchname` (for `-B`): the name with `@{-N}` expanded, and whether it exists;
/// dies unless it is a valid branch name.
fn validate_branchname(repo: &gix::Repository, name: &str) -> Result<(String, bool), u8> {
    let expanded = crate::revision::interpret_branch_name(repo, name);
    let full = format!("refs/heads/{expanded}");
    let valid = !name.starts_with('-')
        && full != "refs/heads/HEAD"
        && gix::refs::FullName::try_from(full.as_str()).is_ok();
    if !valid {
        eprintln!("fatal: '{name}' is not a valid branch name");
        advise_if_enabled(repo, "refSyntax", "See `man git check-ref-format`");
        return Err(FATAL);
    }
    let exists = resolve_symbolic(repo, &full).is_some()
        || repo
            .try_find_reference(full.as_str())
            .ok()
            .flatten()
            .is_some_and(|r| r.name().as_bstr() == full.as_bytes());
    Ok((expanded, exists))
}

/// The branch `create` makes at `commit`, the commit of `start` (`None`: HEAD).
pub(crate) fn new_branch(create: &Create, start: Option<&str>) -> NewBranch {
    // git merges the work tree only when a start point was given, or for `checkout` unless it
    // was called exactly as `git checkout -b NEW` (`only_merge_on_switching_branches`).
    let update = start.is_some()
        || (create.cmd == Cmd::Checkout
            && subcommand_args() != ["-b".to_owned(), create.name.clone()]);
    NewBranch {
        name: create.name.clone(),
        start: start.unwrap_or("HEAD").to_owned(),
        force: create.force,
        exists: create.exists,
        track: create.track,
        update,
        reflog: false,
    }
}

/// git's `parse_remote_branch` (`--guess`): `name`, no revision, is the branch of exactly one
/// remote (or of `checkout.defaultRemote`): a new branch from that remote-tracking branch. A name
/// several remotes have is refused, with git's advice.
pub(crate) fn guess(
    repo: &gix::Repository,
    name: &str,
    opts: &BranchOpts,
) -> Result<Option<(NewBranch, gix::ObjectId)>, u8> {
    let default_remote = config_string(repo, "checkout.defaultRemote");
    let found = gitpar::repo::branch::unique_tracking_name(repo, name, default_remote.as_deref());
    match found.found {
        Some((full, commit)) => Ok(Some((
            NewBranch {
                name: name.to_owned(),
                start: full,
                force: false,
                exists: false,
                track: opts.track(repo),
                update: true,
                reflog: false,
            },
            commit,
        ))),
        None if found.matches > 1 => {
            if advice_enabled(repo, "checkoutAmbiguousRemoteBranchName") {
                advise(
                    "If you meant to check out a remote tracking branch on, e.g. 'origin',\n\
                     you can do so by fully qualifying the name with the --track option:\n\
                     \n    git checkout --track origin/<name>\n\n\
                     If you'd like to always have checkouts of an ambiguous <name> prefer\n\
                     one remote, e.g. the 'origin' remote, consider setting\n\
                     checkout.defaultRemote=origin in your config.",
                );
            }
            Err(fatal(format!(
                "'{name}' matched multiple ({}) remote tracking branches",
                found.matches
            )))
        }
        None => Ok(None),
    }
}

// ---------------------------------------------------------------------------------------------
// The guard against a branch in use elsewhere

/// git's `die_if_switching_to_a_branch_in_use`: switching to `branch` (an existing branch, or the
/// branch `-B`/`-C` resets) is refused while another work tree has it checked out (or is
/// rebasing or bisecting it), unless `--ignore-other-worktrees`; staying on the current branch
/// is always fine.
pub(crate) fn refuse_in_use(
    repo: &gix::Repository,
    branch: Option<&str>,
    opts: &BranchOpts,
) -> Result<(), u8> {
    let Some(branch) = branch else {
        return Ok(());
    };
    if opts.ignore_other_worktrees {
        return Ok(());
    }
    let full = format!("refs/heads/{branch}");
    let on_it = repo
        .head_name()
        .ok()
        .flatten()
        .is_some_and(|h| h.as_bstr() == full.as_bytes());
    if on_it {
        return Ok(());
    }
    match gitpar::repo::branch::worktree_using(repo, &full, true) {
        Some(at) => Err(fatal(format!(
            "'{branch}' is already used by worktree at '{}'",
            at.display()
        ))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Creating the branch and its upstream (after the work tree was updated, as git does)

/// `checkout -l --orphan NEW`: git's `update_refs_for_switch` creates the unborn branch's
/// reflog (empty) when `core.logAllRefUpdates` would not create one, so that its first commit
/// is logged.
pub(crate) fn orphan_reflog(repo: &gix::Repository, name: &str) -> Result<(), String> {
    if repo.refs.write_reflog != gix::refs::store::WriteReflog::Disable {
        return Ok(());
    }
    let path = repo.common_dir().join("logs/refs/heads").join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map(drop)
        .map_err(|e| format!("Can not do reflog for '{name}': {e}"))
}

/// git's `checkout_paths`: `--track`/`--no-track` has no meaning when restoring paths.
pub(crate) fn refuse_track_with_paths(opts: &BranchOpts) -> Result<(), u8> {
    if opts.track_given() {
        return Err(fatal("'--track' cannot be used with updating paths"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The upstream of a branch, for "Your branch is ..."

/// Whether the ref `full` exists (a symbolic ref must lead to an existing one).
fn ref_exists(repo: &gix::Repository, full: &str) -> bool {
    let literal =
        full.starts_with("refs/") || full.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    literal && resolve_symbolic(repo, full).is_some()
}

/// git's `shorten_unambiguous_ref(full, 0)`: the shortest name the ref rules expand to `full`
/// that no earlier rule resolves to another existing ref.
fn shorten_unambiguous_ref(repo: &gix::Repository, full: &str) -> String {
    const RULES: [(&str, &str); 6] = [
        ("", ""),
        ("refs/", ""),
        ("refs/tags/", ""),
        ("refs/heads/", ""),
        ("refs/remotes/", ""),
        ("refs/remotes/", "/HEAD"),
    ];
    for i in (1..RULES.len()).rev() {
        let (prefix, suffix) = RULES[i];
        let Some(short) = full
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let ambiguous = RULES[..i]
            .iter()
            .any(|(p, s)| ref_exists(repo, &format!("{p}{short}{s}")));
        if !ambiguous {
            return short.to_owned();
        }
    }
    full.to_owned()
}

/// git's `branch_get_upstream` for `branch` (`branch.<name>.remote` and the first
/// `branch.<name>.merge`, mapped through the remote's fetch refspecs; for the remote `.`, the
/// local ref the merge value names), with its short name as git prints it.
pub(crate) fn upstream(repo: &gix::Repository, branch: &str) -> Option<(String, String)> {
    let full = gitpar::repo::create_branch::upstream_ref(repo, branch)?;
    let short = shorten_unambiguous_ref(repo, &full);
    Some((full, short))
}
