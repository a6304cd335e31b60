//! Branch creation and tracking for `switch` and `checkout`, as git 2.47 does it: `-b/-B`,
//! `-c/-C`, `-t/--track[=direct|inherit]`, `--no-track`, `--guess/--no-guess` (`checkout.guess`),
//! `checkout.defaultRemote`, `branch.autoSetupMerge`, `branch.autoSetupRebase`, and the refusal to
//! switch to a branch that another work tree has checked out (`--ignore-other-worktrees`).
//!
//! The pieces follow git's own: `checkout_main`'s `--track` DWIM and `parse_remote_branch`
//! (builtin/checkout.c), `validate_new_branchname`, `dwim_branch_start`, `create_branch`,
//! `setup_tracking` and `install_branch_config_multiple_remotes` (branch.c), `die_if_checked_out`
//! (branch.c / worktree.c). The remote and work-tree queries are the engine's
//! ([`gitpar::branch`]).

use bstr::ByteSlice;
use clap::Args;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;

use crate::{fatal, FATAL};

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

/// git's `enum branch_track` (without `OVERRIDE`, which only `git branch -u` uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Track {
    Never,
    /// `branch.autoSetupMerge=true` (the default): track a remote-tracking start point.
    Remote,
    /// `branch.autoSetupMerge=always`: track the start point, local branches too.
    Always,
    /// `--track` / `--track=direct`.
    Explicit,
    /// `--track=inherit` / `branch.autoSetupMerge=inherit`: copy the start branch's upstream.
    Inherit,
    /// `branch.autoSetupMerge=simple`: track a remote branch of the same name only.
    Simple,
}

/// A branch `switch`/`checkout` creates (or, with `-B`/`-C`, resets) after updating the work tree.
#[derive(Debug, Clone)]
pub(crate) struct NewBranch {
    /// Its short name.
    pub(crate) name: String,
    /// The start point as given (`HEAD` when none was), for the reflog and tracking.
    start: String,
    /// `-B`/`-C`: reset the branch if it exists.
    pub(crate) force: bool,
    /// It exists already (so `-B`/`-C` resets it).
    exists: bool,
    track: Track,
    /// Whether the work tree is updated at all: git skips it for `switch -c NEW` and
    /// `checkout -b NEW` without a start point (`only_merge_on_switching_branches`).
    pub(crate) update: bool,
    /// `checkout -l`: git's `REF_FORCE_CREATE_REFLOG`, a reflog for the branch even when
    /// `core.logAllRefUpdates` is off.
    pub(crate) reflog: bool,
}

impl NewBranch {
    /// The start point as given (`HEAD` when none was).
    pub(crate) fn start(&self) -> &str {
        &self.start
    }

    /// What git says on standard error after switching (`old_head`: HEAD's symbolic target
    /// before, a full ref name).
    pub(crate) fn switched_message(&self, old_head: Option<&str>) -> String {
        let name = &self.name;
        if old_head == Some(format!("refs/heads/{name}").as_str()) {
            if self.force {
                format!("Reset branch '{name}'")
            } else {
                format!("Already on '{name}'")
            }
        } else if self.exists {
            format!("Switched to and reset branch '{name}'")
        } else {
            format!("Switched to a new branch '{name}'")
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Configuration and advice

fn config_string(repo: &gix::Repository, key: &str) -> Option<String> {
    repo.config_snapshot()
        .string(key)
        .map(|v| v.to_str_lossy().into_owned())
}

/// `branch.autoSetupMerge`, as git's `git_default_branch_config` reads it.
fn configured_track(repo: &gix::Repository) -> Track {
    match config_string(repo, "branch.autoSetupMerge").as_deref() {
        Some("always") => Track::Always,
        Some("inherit") => Track::Inherit,
        Some("simple") => Track::Simple,
        _ => match repo.config_snapshot().boolean("branch.autoSetupMerge") {
            Some(false) => Track::Never,
            _ => Track::Remote,
        },
    }
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
            (None, false) => configured_track(repo),
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
    for line in text.split('\n') {
        if line.is_empty() {
            eprintln!("hint:");
        } else {
            eprintln!("hint: {line}");
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
        advise(text);
    } else {
        advise(&format!(
            "{text}\nDisable this message with \"git config advice.{key} false\""
        ));
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
    let found = gitpar::branch::unique_tracking_name(repo, name, default_remote.as_deref());
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
    match gitpar::branch::worktree_using(repo, &full, true) {
        Some(at) => Err(fatal(format!(
            "'{branch}' is already used by worktree at '{}'",
            at.display()
        ))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Creating the branch and its upstream (after the work tree was updated, as git does)

/// git's `repo_dwim_ref`: how many of the ref rules `name` matches, and the first match with its
/// symbolic refs resolved (`HEAD` → `refs/heads/main`, `origin` → `refs/remotes/origin/main`).
fn dwim_ref(repo: &gix::Repository, name: &str) -> (usize, Option<String>) {
    let literal = name.starts_with("refs/")
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'));
    let mut candidates = Vec::new();
    if literal {
        candidates.push(name.to_owned());
    }
    for rule in [
        "refs/{}",
        "refs/tags/{}",
        "refs/heads/{}",
        "refs/remotes/{}",
        "refs/remotes/{}/HEAD",
    ] {
        candidates.push(rule.replace("{}", name));
    }
    let mut found = 0;
    let mut first = None;
    for candidate in candidates {
        if let Some(resolved) = resolve_symbolic(repo, &candidate) {
            found += 1;
            first.get_or_insert(resolved);
        }
    }
    (found, first)
}

/// The ref `full` finally names after following symbolic refs, if it exists.
fn resolve_symbolic(repo: &gix::Repository, full: &str) -> Option<String> {
    let mut name = full.to_owned();
    for _ in 0..5 {
        let as_ref: &gix::refs::FullNameRef = name.as_str().try_into().ok()?;
        let reference = repo.try_find_reference(as_ref).ok().flatten()?;
        if reference.name().as_bstr() != name.as_bytes() {
            return None;
        }
        match reference.target() {
            gix::refs::TargetRef::Symbolic(next) => {
                name = next.as_bstr().to_str_lossy().into_owned()
            }
            gix::refs::TargetRef::Object(_) => return Some(name),
        }
    }
    None
}

/// Create (or reset) the branch at `commit` and set up its upstream, as git's `create_branch`
/// (reflog "branch: Created from START" / "branch: Reset to START", `setup_tracking`).
pub(crate) fn create(
    repo: &gix::Repository,
    nb: &NewBranch,
    commit: gix::ObjectId,
    quiet: bool,
) -> Result<(), u8> {
    let real_ref = dwim_branch_start(repo, nb)?;
    let message = if nb.exists {
        format!("branch: Reset to {}", nb.start)
    } else {
        format!("branch: Created from {}", nb.start)
    };
    let full = format!("refs/heads/{}", nb.name);
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: nb.reflog,
                message: message.clone().into(),
            },
            expected: if nb.exists {
                PreviousValue::Any
            } else {
                PreviousValue::MustNotExist
            },
            new: Target::Object(commit),
        },
        name: full
            .as_str()
            .try_into()
            .map_err(|_| fatal(format!("'{}' is not a valid branch name", nb.name)))?,
        deref: false,
    };
    // git's files backend also logs an update of the branch HEAD is on in HEAD's reflog (even
    // when the value does not change); gix does not.
    let head_on_it = repo
        .head_name()
        .ok()
        .flatten()
        .is_some_and(|h| h.as_bstr() == full.as_bytes());
    let old_value = if head_on_it {
        repo.head_id().ok().map(gix::Id::detach)
    } else {
        None
    };
    let committer = repo
        .committer()
        .transpose()
        .map_err(|e| fatal(format!("unable to determine the committer: {e}")))?;
    // The hook sees the branch, and HEAD's log-only update when HEAD is on it (`reftx.rs`).
    let mut updates = vec![crate::reftx::Update::to(
        full.clone(),
        crate::reftx::Value::Id(commit),
    )];
    if head_on_it {
        updates.push(crate::reftx::Update::to(
            "HEAD",
            crate::reftx::Value::Id(commit),
        ));
    }
    crate::reftx::transaction(repo, &updates, || {
        repo.edit_references_as([edit], committer)
            .map_err(|e| fatal(format!("cannot lock ref '{full}': {e}")))?;
        // gix writes no reflog at all with `core.logAllRefUpdates=false`; `-l` wants one.
        if nb.reflog && repo.refs.write_reflog == gix::refs::store::WriteReflog::Disable {
            gitpar::branch::force_reflog(repo, &full, None, commit, &message).map_err(fatal)?;
        }
        if head_on_it {
            gitpar::branch::append_reflog(repo, "HEAD", old_value, commit, &message)
                .map_err(fatal)?;
        }
        Ok(())
    })?;

    match real_ref {
        Some(real) if nb.track != Track::Never => setup_tracking(repo, nb, &real, quiet),
        _ => Ok(()),
    }
}

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

/// git's `dwim_branch_start`: the ref the start point names, when it is a branch or a
/// remote-tracking branch (what tracking can follow); with `--track`, anything else is refused.
fn dwim_branch_start(repo: &gix::Repository, nb: &NewBranch) -> Result<Option<String>, u8> {
    let explicit = nb.track == Track::Explicit;
    let not_a_branch = || {
        fatal(format!(
            "cannot set up tracking information; starting point '{}' is not a branch",
            nb.start
        ))
    };
    match dwim_ref(repo, &nb.start) {
        (0, _) if explicit => Err(not_a_branch()),
        (0, _) => Ok(None),
        (1, Some(real)) => {
            if !real.starts_with("refs/heads/")
                && gitpar::branch::tracked_by(repo, &real).is_empty()
            {
                if explicit {
                    return Err(not_a_branch());
                }
                Ok(None)
            } else {
                Ok(Some(real))
            }
        }
        _ => Err(fatal(format!("ambiguous object name: '{}'", nb.start))),
    }
}

/// git's `setup_tracking(new_ref, orig_ref, track, quiet)`.
fn setup_tracking(
    repo: &gix::Repository,
    nb: &NewBranch,
    orig_ref: &str,
    quiet: bool,
) -> Result<(), u8> {
    let (remote, mut srcs, matches) = if nb.track == Track::Inherit {
        let bare = orig_ref.strip_prefix("refs/heads/").unwrap_or(orig_ref);
        let Some(remote) = config_string(repo, &format!("branch.{bare}.remote")) else {
            eprintln!("warning: asked to inherit tracking from '{bare}', but no remote is set");
            return Ok(());
        };
        let merges: Vec<String> = repo
            .config_snapshot()
            .strings(format!("branch.{bare}.merge").as_str())
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.to_str_lossy().into_owned())
            .collect();
        if merges.first().is_none_or(String::is_empty) {
            eprintln!(
                "warning: asked to inherit tracking from '{bare}', but no merge configuration is set"
            );
            return Ok(());
        }
        (Some(remote), merges, 0)
    } else {
        let found = gitpar::branch::tracked_by(repo, orig_ref);
        if found.len() > 1 {
            eprintln!("fatal: not tracking: ambiguous information for ref '{orig_ref}'");
            if advice_enabled(repo, "ambiguousFetchRefspec") {
                let mut list = String::new();
                for (remote, _) in &found {
                    list.push_str(&format!("  {remote}\n"));
                }
                advise(&format!(
                    "There are multiple remotes whose fetch refspecs map to the remote\n\
                     tracking ref '{orig_ref}':\n{list}\n\
                     This is typically a configuration error.\n\n\
                     To support setting up tracking branches, ensure that\n\
                     different remotes' fetch refspecs map into different\n\
                     tracking namespaces."
                ));
            }
            return Err(FATAL);
        }
        let n = found.len();
        match found.into_iter().next() {
            Some((remote, src)) => (Some(remote), vec![src], n),
            None => (None, Vec::new(), 0),
        }
    };
    if matches == 0 && !matches!(nb.track, Track::Always | Track::Explicit | Track::Inherit) {
        return Ok(());
    }
    if nb.track == Track::Simple
        && srcs.first().and_then(|s| s.strip_prefix("refs/heads/")) != Some(nb.name.as_str())
    {
        return Ok(());
    }
    if srcs.is_empty() {
        srcs.push(orig_ref.to_owned());
    }
    install_branch_config(repo, &nb.name, remote.as_deref(), &srcs, !quiet)
}

/// git's `install_branch_config_multiple_remotes`: write the upstream, say so.
fn install_branch_config(
    repo: &gix::Repository,
    local: &str,
    origin: Option<&str>,
    srcs: &[String],
    verbose: bool,
) -> Result<(), u8> {
    let rebasing = match config_string(repo, "branch.autoSetupRebase").as_deref() {
        Some("always") => true,
        Some("local") => origin.is_none(),
        Some("remote") => origin.is_some(),
        _ => false,
    };
    if rebasing && srcs.len() > 1 {
        return Err(fatal(
            "cannot inherit upstream tracking configuration of multiple refs when rebasing is requested",
        ));
    }
    if origin.is_none()
        && srcs
            .iter()
            .any(|s| s.strip_prefix("refs/heads/") == Some(local))
    {
        eprintln!("warning: not setting branch '{local}' as its own upstream");
        return Ok(());
    }
    if let Err(err) =
        gitpar::branch::set_tracking(repo, local, origin.unwrap_or("."), srcs, rebasing)
    {
        eprintln!("error: {err}");
        eprintln!("error: unable to write upstream branch configuration");
        advise("\nAfter fixing the error cause you may try to fix up\nthe remote tracking information by invoking:");
        if let [only] = srcs {
            let prefix = origin.map(|o| format!("{o}/")).unwrap_or_default();
            advise(&format!("  git branch --set-upstream-to={prefix}{only}"));
        } else {
            let remote = origin.unwrap_or(".");
            advise(&format!(
                "  git config --add branch.\"{local}\".remote {remote}"
            ));
            for src in srcs {
                advise(&format!(
                    "  git config --add branch.\"{local}\".merge {src}"
                ));
            }
        }
        return Err(1);
    }
    if verbose {
        let friendly: Vec<String> = srcs
            .iter()
            .map(|s| {
                let short = s.strip_prefix("refs/heads/").unwrap_or(s);
                match origin {
                    Some(o) => format!("{o}/{short}"),
                    None => short.to_owned(),
                }
            })
            .collect();
        if let [only] = friendly.as_slice() {
            if rebasing {
                println!("branch '{local}' set up to track '{only}' by rebasing.");
            } else {
                println!("branch '{local}' set up to track '{only}'.");
            }
        } else {
            println!("branch '{local}' set up to track:");
            for f in &friendly {
                println!("  {f}");
            }
        }
    }
    Ok(())
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
    let remote = config_string(repo, &format!("branch.{branch}.remote"))?;
    let merge = repo
        .config_snapshot()
        .strings(format!("branch.{branch}.merge").as_str())?
        .first()?
        .to_str_lossy()
        .into_owned();
    let full = if remote == "." {
        match dwim_ref(repo, &merge) {
            (1, Some(real)) => real,
            _ => merge,
        }
    } else {
        let fetch = gitpar::branch::remotes(repo)
            .into_iter()
            .find(|r| r.name == remote)?
            .fetch;
        gitpar::branch::query_refspecs(&fetch, &merge, false)?
    };
    let short = shorten_unambiguous_ref(repo, &full);
    Some((full, short))
}
