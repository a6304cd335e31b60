//! Branches yet to be born: `switch -c`/`checkout -b` and `reset --hard` in a repository
//! without commits, `switch --orphan` and `checkout --orphan`, and git's refusals on an unborn
//! `HEAD` — `builtin/checkout.c`'s `switch_unborn_to_new_branch` and the orphan paths of
//! `checkout_main`/`switch_branches`/`update_refs_for_switch`, `builtin/reset.c`'s `unborn`.

use gitpar::switch::Head;
use gitpar::update::Policy;
use gix::refs::FullName;

use crate::checkout_args::CheckoutArgs;
use crate::exit::fatal;
use crate::repo::Opened;

/// Which command is asking: their options and refusals differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// `git switch` (`-c`, `--orphan` from the empty tree, no start point for `--orphan`).
    Switch,
    /// `git checkout` (`-b`, `--orphan [START]` keeping index and work tree).
    Checkout,
}

/// The options of a branch switch that matter before `HEAD` has a commit.
pub(crate) struct Request<'a> {
    pub command: Command,
    /// `--orphan NEW`.
    pub orphan: Option<&'a str>,
    /// `-t`/`--track`/`--no-track` was given.
    pub track: bool,
    /// `-c NEW` / `-b NEW` (or `-C`/`-B`).
    pub create: Option<&'a str>,
    /// `create` came from `-C`/`-B`: the branch may exist.
    pub force_create: bool,
    /// The branch, commit or start point given.
    pub target: Option<&'a str>,
    pub detach: bool,
    pub force: bool,
    /// Paths were given (after `--`).
    pub paths: bool,
    pub checkout: &'a CheckoutArgs,
}

/// The branch `HEAD` names when that branch does not exist yet.
pub(crate) fn unborn_head(repo: &gix::Repository) -> Option<FullName> {
    match repo.head().ok()?.kind {
        gix::head::Kind::Unborn(name) => Some(name),
        _ => None,
    }
}

/// Handle the branch switches that git treats apart: `--orphan`, and on an unborn `HEAD` a new
/// branch without start point. `None`: the usual switch applies (from an unborn `HEAD` it
/// starts from the empty tree).
pub(crate) fn intercept(opened: &Opened, req: &Request<'_>) -> Option<Result<(), u8>> {
    let repo = &opened.repo;
    if let Some(name) = req.orphan {
        if req.paths {
            return Some(Err(fatal(format!(
                "Cannot update paths and switch to branch '{name}' at the same time."
            ))));
        }
        return Some(orphan(opened, req, name));
    }
    let new = req.create.filter(|_| req.target.is_none() && !req.paths)?;
    unborn_head(repo)?;
    let quiet = req.checkout.quiet;
    Some(switch_unborn_to_new_branch(
        repo,
        new,
        req.force_create,
        quiet,
    ))
}

/// `refs/heads/NAME` for a branch that may be created: git's `validate_new_branchname` (or,
/// for `-B`/`-C`, `validate_branchname`: it may exist).
fn new_branch_ref(repo: &gix::Repository, name: &str, may_exist: bool) -> Result<FullName, u8> {
    let invalid = || fatal(format!("'{name}' is not a valid branch name"));
    if name.starts_with('-') || name == "HEAD" {
        return Err(invalid());
    }
    let full: FullName = format!("refs/heads/{name}")
        .try_into()
        .map_err(|_| invalid())?;
    if !may_exist
        && repo
            .try_find_reference(full.as_ref())
            .ok()
            .flatten()
            .is_some()
    {
        return Err(fatal(format!("a branch named '{name}' already exists")));
    }
    Ok(full)
}

/// git's `switch_unborn_to_new_branch`: on an unborn `HEAD`, `-b NEW`/`-c NEW`/`--orphan NEW`
/// without start point only renames the branch to be born; index and work tree stay, no hook.
fn switch_unborn_to_new_branch(
    repo: &gix::Repository,
    name: &str,
    may_exist: bool,
    quiet: bool,
) -> Result<(), u8> {
    let full = new_branch_ref(repo, name, may_exist)?;
    // `-B` of an existing branch: git logs HEAD's move to its commit.
    let existing = repo
        .try_find_reference(full.as_ref())
        .ok()
        .flatten()
        .and_then(|mut r| r.peel_to_id().ok().map(gix::Id::detach));
    gitpar::switch::point_head_at(repo, crate::hooks::env(), full)
        .map_err(|e| crate::report::switch_error(repo, e))?;
    if let Some(commit) = existing {
        gitpar::repo::branch::append_reflog(repo, "HEAD", None, commit, "checkout -b")
            .map_err(fatal)?;
    }
    if !quiet {
        eprintln!("Switched to a new branch '{name}'");
    }
    Ok(())
}

fn resolve_commit(repo: &gix::Repository, spec: &str) -> Option<gix::ObjectId> {
    repo.rev_parse_single(spec)
        .ok()?
        .object()
        .ok()?
        .peel_to_commit()
        .ok()
        .map(|c| c.id)
}

/// `switch --orphan NEW` (index and work tree emptied of tracked files, as a switch to the
/// empty tree) and `checkout --orphan NEW [START]` (a switch to START, default `HEAD`, keeping
/// local changes); `HEAD` then names the unborn branch NEW.
fn orphan(opened: &Opened, req: &Request<'_>, name: &str) -> Result<(), u8> {
    let repo = &opened.repo;
    let quiet = req.checkout.quiet;
    if req.create.is_some() {
        let (b, big_b) = match req.command {
            Command::Switch => ('c', 'C'),
            Command::Checkout => ('b', 'B'),
        };
        return Err(fatal(format!(
            "options '-{b}', '-{big_b}', and '--orphan' cannot be used together"
        )));
    }
    let full = new_branch_ref(repo, name, false)?;
    if req.detach {
        return Err(fatal("'--detach' cannot be used with '-b/-B/--orphan'"));
    }
    if req.track {
        return Err(fatal("'--orphan' cannot be used with '-t'"));
    }
    let start = match (req.command, req.target) {
        (Command::Switch, Some(_)) => return Err(fatal("'--orphan' cannot take <start-point>")),
        (Command::Checkout, Some(t)) => {
            Some(resolve_commit(repo, t).ok_or_else(|| fatal(format!("invalid reference: {t}")))?)
        }
        (_, None) => None,
    };
    if req.command == Command::Switch {
        crate::switching::refuse_operation_in_progress(repo)?;
    }
    let old_commit = repo.head_commit().ok().map(|c| c.id);
    if start.is_none() && unborn_head(repo).is_some() {
        return switch_unborn_to_new_branch(repo, name, false, quiet);
    }
    let new_commit = match req.command {
        Command::Switch => None,
        Command::Checkout => Some(
            start
                .or(old_commit)
                .ok_or_else(|| fatal("You are on a branch yet to be born"))?,
        ),
    };
    crate::switching::run(
        opened,
        (Head::Orphan(full), None),
        new_commit,
        req.force,
        false,
        req.checkout,
        "checkout",
    )
}

/// `reset --hard` (no revision, or `HEAD`/`@`) while `HEAD` does not resolve: git resets the
/// index and work tree to the empty tree, moves no ref, prints nothing and removes the branch
/// state. `None` when `HEAD` has a commit (the usual reset).
pub(crate) fn reset_hard(
    opened: &Opened,
    target: Option<&str>,
    args: &CheckoutArgs,
) -> Option<Result<(), u8>> {
    let repo = &opened.repo;
    if !matches!(target, None | Some("HEAD") | Some("@")) || repo.head_id().is_ok() {
        return None;
    }
    let empty = repo.object_hash().empty_tree();
    Some((|| {
        let workdir = opened.require_workdir()?.to_owned();
        let opts = crate::engine::update_options(repo, args, Policy::Force);
        let outcome = crate::engine::with_progress(args, |ctx| {
            gitpar::update::update(
                repo,
                None,
                empty,
                &workdir,
                &opened.index_path,
                Policy::Force,
                &opts,
                ctx,
            )
        })
        .map_err(crate::report::update_error)?;
        crate::report::update_outcome(&outcome, crate::report::SparseWords::Plumbing);
        gitpar::repo::state::remove_branch_state(repo, crate::hooks::env(), false)
            .map_err(crate::report::aborted)?;
        if outcome.errors.is_empty() {
            Ok(())
        } else {
            Err(1)
        }
    })())
}
