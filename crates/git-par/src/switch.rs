//! `switch`, `checkout <branch>` and `reset --hard`: the commands that update an existing work
//! tree through the engine's two-way update, then move `HEAD` like git, with git's messages.

use bstr::ByteSlice;
use clap::Args;
use gitpar::update::{Error as UpdateError, Policy};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use crate::repo::Opened;
use crate::{fatal, jobs, progress, short, CheckoutArgs, FATAL};

/// `git par switch`.
#[derive(Args, Debug)]
pub struct SwitchArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Create a new branch NEW at the start point and switch to it.
    #[arg(short = 'c', long = "create", value_name = "NEW")]
    create: Option<String>,
    /// Switch to a commit, detaching HEAD.
    #[arg(short = 'd', long = "detach")]
    detach: bool,
    /// Discard local changes (alias: --discard-changes).
    #[arg(short = 'f', long = "force", alias = "discard-changes")]
    force: bool,
    /// The branch (or, with --detach / -c, the start point) to switch to.
    target: Option<String>,
}

/// `git par checkout` (the branch-switching form).
#[derive(Args, Debug)]
pub struct CheckoutCmdArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Create a new branch NEW at REV and check it out.
    #[arg(short = 'b', value_name = "NEW")]
    create: Option<String>,
    /// Detach HEAD at REV.
    #[arg(long = "detach")]
    detach: bool,
    /// Discard local changes.
    #[arg(short = 'f', long = "force")]
    force: bool,
    /// The branch or commit to check out (or, with paths, the source of their content).
    target: Option<String>,
    /// Paths to restore instead of switching branches (after `--`).
    #[arg(last = true, value_name = "PATHSPEC")]
    paths: Vec<String>,
}

/// `git par restore`.
#[derive(Args, Debug)]
pub struct RestoreArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Take the contents from this tree-ish (default: the index, or HEAD with --staged).
    #[arg(short = 's', long = "source", value_name = "TREE")]
    source: Option<String>,
    /// Restore the index.
    #[arg(short = 'S', long = "staged")]
    staged: bool,
    /// Restore the work tree (the default when --staged is not given).
    #[arg(short = 'W', long = "worktree")]
    worktree: bool,
    /// Leave unmerged paths alone (with a warning) instead of refusing.
    #[arg(long = "ignore-unmerged")]
    ignore_unmerged: bool,
    /// The paths to restore.
    #[arg(required = true, value_name = "PATHSPEC")]
    paths: Vec<String>,
}

/// `git par reset --hard`.
#[derive(Args, Debug)]
pub struct ResetArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Reset the index and the work tree (the only mode git-par implements).
    #[arg(long = "hard", required = true)]
    hard: bool,
    /// The commit to reset to (default HEAD).
    target: Option<String>,
}

/// The upstream of a branch created from a remote-tracking branch (git's `--guess`).
struct Tracking {
    remote: String,
    merge: String,
    /// `origin/name`, for the message.
    short: String,
}

/// Where HEAD goes after the update.
enum NewHead {
    /// An existing branch.
    Branch(String),
    /// A branch created at the target commit from the start point as typed (for the reflog),
    /// tracking a remote branch when guessed from one.
    NewBranch(String, String, Option<Tracking>),
    /// Detached at the target commit, described as the user typed it.
    Detached(String),
    /// `checkout [-f] [HEAD]`: HEAD stays as it is (no ref update, no reflog, no "Already on").
    Unchanged,
}

/// The repository, work tree and index as git's setup finds them (`GIT_DIR`, `GIT_WORK_TREE`,
/// `GIT_INDEX_FILE`, `core.worktree`, `safe.directory`, ...).
pub(crate) fn open_repo(overrides: &[String]) -> Result<Opened, u8> {
    crate::repo::open(overrides)
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

fn branch_exists(repo: &gix::Repository, name: &str) -> bool {
    repo.try_find_reference(format!("refs/heads/{name}").as_str())
        .ok()
        .flatten()
        .is_some()
}

/// `-c NEW [START]` / `-b NEW [START]`: a branch that must not exist yet, at START (default HEAD).
fn new_branch(
    repo: &gix::Repository,
    name: &str,
    start: Option<&str>,
) -> Result<(NewHead, gix::ObjectId), u8> {
    if branch_exists(repo, name) {
        return Err(fatal(format!("a branch named '{name}' already exists")));
    }
    let start = start.unwrap_or("HEAD").to_owned();
    let commit =
        resolve_commit(repo, &start).ok_or_else(|| fatal(format!("invalid reference: {start}")))?;
    let tracking = tracking_of_start_point(repo, &start);
    Ok((NewHead::NewBranch(name.to_owned(), start, tracking), commit))
}

/// git's `branch.autoSetupMerge` (default `true`): a new branch started from a remote-tracking
/// branch `refs/remotes/<remote>/<name>` of a configured remote tracks it.
fn tracking_of_start_point(repo: &gix::Repository, start: &str) -> Option<Tracking> {
    let config = repo.config_snapshot();
    if config.boolean("branch.autoSetupMerge") == Some(false) {
        return None;
    }
    let reference = repo.find_reference(start).ok()?;
    let full = reference.name().as_bstr().to_str_lossy().into_owned();
    let rest = full.strip_prefix("refs/remotes/")?;
    let (remote, branch) = rest.split_once('/')?;
    config.string(format!("remote.{remote}.url").as_str())?;
    Some(Tracking {
        remote: remote.to_owned(),
        merge: format!("refs/heads/{branch}"),
        short: rest.to_owned(),
    })
}

/// git's `die_if_some_operation_in_progress` for `switch` (checkout may switch anyway): a merge,
/// am, rebase, cherry-pick or revert in progress stops it, with git's words (exit 128).
fn refuse_operation_in_progress(repo: &gix::Repository) -> Result<(), u8> {
    let dir = repo.git_dir();
    let what = if dir.join("MERGE_HEAD").exists() {
        Some(("while merging", "git merge --quit"))
    } else if dir.join("rebase-apply/applying").exists() {
        Some(("in the middle of an am session", "git am --quit"))
    } else if dir.join("rebase-merge").is_dir() || dir.join("rebase-apply").is_dir() {
        Some(("while rebasing", "git rebase --quit"))
    } else if dir.join("CHERRY_PICK_HEAD").exists() {
        Some(("while cherry-picking", "git cherry-pick --quit"))
    } else if dir.join("REVERT_HEAD").exists() {
        Some(("while reverting", "git revert --quit"))
    } else {
        None
    };
    if let Some((state, quit)) = what {
        return Err(fatal(format!(
            "cannot switch branch {state}\nConsider \"{quit}\" or \"git worktree add\"."
        )));
    }
    if dir.join("BISECT_START").exists() {
        eprintln!("warning: you are switching branch while bisecting");
    }
    Ok(())
}

/// git's `--guess`: a name that is no local branch but the branch of exactly one remote becomes
/// a new local branch tracking it.
fn guess_tracking_branch(repo: &gix::Repository, name: &str) -> Option<(NewHead, gix::ObjectId)> {
    let [(remote, full)] = gitpar::branch::remote_candidates(repo, name)
        .try_into()
        .ok()?;
    let commit = resolve_commit(repo, &full)?;
    let tracking = Tracking {
        remote,
        merge: format!("refs/heads/{name}"),
        short: full.trim_start_matches("refs/remotes/").to_owned(),
    };
    Some((
        NewHead::NewBranch(name.to_owned(), full, Some(tracking)),
        commit,
    ))
}

/// Run `git par switch`.
pub fn switch(args: SwitchArgs, overrides: &[String]) -> Result<(), u8> {
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    refuse_operation_in_progress(repo)?;
    let (head, commit) = if let Some(new) = &args.create {
        new_branch(repo, new, args.target.as_deref())?
    } else {
        let Some(target) = args.target.clone() else {
            return Err(fatal("missing branch or commit argument"));
        };
        if args.detach {
            let commit = resolve_commit(repo, &target)
                .ok_or_else(|| fatal(format!("invalid reference: {target}")))?;
            (NewHead::Detached(target), commit)
        } else if branch_exists(repo, &target) {
            let commit = resolve_commit(repo, &format!("refs/heads/{target}"))
                .ok_or_else(|| fatal(format!("invalid reference: {target}")))?;
            (NewHead::Branch(target), commit)
        } else if let Some(guessed) = guess_tracking_branch(repo, &target) {
            guessed
        } else if let Some(commit) = resolve_commit(repo, &target) {
            let what = if repo
                .try_find_reference(format!("refs/tags/{target}").as_str())
                .ok()
                .flatten()
                .is_some()
            {
                "tag"
            } else if repo
                .try_find_reference(format!("refs/remotes/{target}").as_str())
                .ok()
                .flatten()
                .is_some()
            {
                "remote branch"
            } else {
                "commit"
            };
            let _ = commit;
            eprintln!("fatal: a branch is expected, got {what} '{target}'");
            eprintln!("hint: If you want to detach HEAD at the commit, try again with the --detach option.");
            return Err(FATAL);
        } else {
            return Err(fatal(format!("invalid reference: {target}")));
        }
    };
    run(
        &opened,
        head,
        commit,
        args.force,
        &args.checkout,
        "checkout",
    )
}

/// Run `git par checkout` (branch form).
pub fn checkout(args: CheckoutCmdArgs, overrides: &[String]) -> Result<(), u8> {
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    if !args.paths.is_empty() {
        let source = match &args.target {
            Some(rev) => Some(resolve_tree(repo, rev)?),
            None => None,
        };
        return restore_paths(
            &opened,
            source,
            source.is_some(),
            true,
            true,
            args.force,
            &args.paths,
            &args.checkout,
        );
    }
    let (head, commit) = if let Some(new) = &args.create {
        new_branch(repo, new, args.target.as_deref())?
    } else {
        let target = args.target.clone().unwrap_or_else(|| "HEAD".into());
        let guess = (!args.detach && target != "HEAD" && resolve_commit(repo, &target).is_none())
            .then(|| guess_tracking_branch(repo, &target))
            .flatten();
        if !args.detach && target != "HEAD" && branch_exists(repo, &target) {
            let commit = resolve_commit(repo, &format!("refs/heads/{target}"))
                .ok_or_else(|| fatal(format!("invalid reference: {target}")))?;
            (NewHead::Branch(target), commit)
        } else if let Some(guessed) = guess {
            guessed
        } else {
            let commit = resolve_commit(repo, &target).ok_or_else(|| {
                eprintln!("error: pathspec '{target}' did not match any file(s) known to git");
                1u8
            })?;
            if target == "HEAD" && !args.detach {
                // `git checkout [HEAD]`: re-check the current HEAD, keep it as it is.
                (NewHead::Unchanged, commit)
            } else {
                (NewHead::Detached(target), commit)
            }
        }
    };
    run(
        &opened,
        head,
        commit,
        args.force,
        &args.checkout,
        "checkout",
    )
}

/// Run `git par reset --hard`.
pub fn reset(args: ResetArgs, overrides: &[String]) -> Result<(), u8> {
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    let _ = args.hard;
    let target = args.target.clone().unwrap_or_else(|| "HEAD".into());
    let commit = resolve_commit(repo, &target).ok_or_else(|| {
        fatal(format!(
            "ambiguous argument '{target}': unknown revision or path not in the working tree."
        ))
    })?;
    let old_tree = head_tree(repo);
    let outcome = update_worktree(&opened, old_tree, commit, Policy::Force, &args.checkout)?;
    let message = format!("reset: moving to {target}");
    let old_commit = repo.head_commit().ok().map(|c| c.id);
    let branch = repo.head_name().ok().flatten();
    let edit = ref_edit("HEAD", Target::Object(commit), true, &message)?;
    // git logs the reset even when nothing moves; gix skips such entries, so write them here.
    edit_refs(&gitpar::branch::without_reflog(repo), vec![edit])?;
    gitpar::branch::append_reflog(repo, "HEAD", old_commit, commit, &message).map_err(fatal)?;
    if let Some(branch) = branch.filter(|_| old_commit != Some(commit)) {
        gitpar::branch::append_reflog(
            repo,
            &branch.as_bstr().to_str_lossy(),
            old_commit,
            commit,
            &message,
        )
        .map_err(fatal)?;
    }
    if !args.checkout.quiet {
        println!(
            "HEAD is now at {} {}",
            short(repo, commit),
            subject(repo, commit)
        );
    }
    if outcome.errors.is_empty() {
        Ok(())
    } else {
        Err(1)
    }
}

fn subject(repo: &gix::Repository, commit: gix::ObjectId) -> String {
    repo.find_commit(commit)
        .ok()
        .and_then(|c| c.message().ok().map(|m| m.summary().to_string()))
        .unwrap_or_default()
}

fn head_tree(repo: &gix::Repository) -> Option<gix::ObjectId> {
    repo.head_commit()
        .ok()
        .and_then(|c| c.tree_id().ok().map(gix::Id::detach))
}

fn ref_edit(name: &str, new: Target, deref: bool, message: &str) -> Result<RefEdit, u8> {
    Ok(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected: PreviousValue::Any,
            new,
        },
        name: name
            .try_into()
            .map_err(|_| fatal(format!("'{name}' is not a valid ref name")))?,
        deref,
    })
}

fn edit_refs(repo: &gix::Repository, edits: Vec<RefEdit>) -> Result<(), u8> {
    let committer = repo
        .committer()
        .transpose()
        .map_err(|e| fatal(format!("unable to determine the committer: {e}")))?;
    repo.edit_references_as(edits, committer)
        .map(|_| ())
        .map_err(|e| fatal(format!("unable to update HEAD: {e}")))
}

/// Run the engine's update with progress, and print git's refusal lists.
fn update_worktree(
    opened: &Opened,
    old_tree: Option<gix::ObjectId>,
    commit: gix::ObjectId,
    policy: Policy,
    args: &CheckoutArgs,
) -> Result<gitpar::update::Outcome, u8> {
    let repo = &opened.repo;
    let workdir = opened.require_workdir()?.to_owned();
    let new_tree = crate::tree_of(repo, commit).map_err(fatal)?;
    let mut opts = gitpar::Options::from_config(&repo.config_snapshot(), jobs(args));
    opts.report_local_changes = policy == Policy::Safe && !args.quiet;
    let progress = gitpar::Progress::default();
    let interrupt = &crate::interrupt::INTERRUPTED;
    let index_path = opened.index_path.clone();
    let result = progress::show_while(
        &progress,
        "Updating files",
        !args.quiet,
        || {
            gitpar::update::update(
                repo,
                old_tree,
                new_tree,
                &workdir,
                &index_path,
                policy,
                &opts,
                &progress,
                interrupt,
            )
        },
        Result::is_ok,
    );
    match result {
        Ok(outcome) => {
            // git reports each path it could not write, still moves HEAD, and exits 1.
            for e in &outcome.errors {
                eprintln!("error: {e}");
            }
            Ok(outcome)
        }
        Err(UpdateError::WouldLose {
            local,
            untracked,
            untracked_removed,
        }) => {
            if !local.is_empty() {
                eprintln!("error: Your local changes to the following files would be overwritten by checkout:");
                for p in &local {
                    eprintln!("\t{p}");
                }
                eprintln!("Please commit your changes or stash them before you switch branches.");
            }
            if !untracked_removed.is_empty() {
                eprintln!(
                    "error: Updating the following directories would lose untracked files in them:"
                );
                for p in &untracked_removed {
                    eprintln!("\t{p}");
                }
                eprintln!();
            }
            if !untracked.is_empty() {
                eprintln!("error: The following untracked working tree files would be overwritten by checkout:");
                for p in &untracked {
                    eprintln!("\t{p}");
                }
                eprintln!("Please move or remove them before you switch branches.");
            }
            eprintln!("Aborting");
            Err(1)
        }
        Err(UpdateError::Unmerged(paths)) => {
            for p in &paths {
                println!("{p}: needs merge");
            }
            eprintln!("error: you need to resolve your current index first");
            Err(1)
        }
        Err(UpdateError::NotUptodate(paths)) => {
            for p in &paths {
                eprintln!("error: Entry '{p}' not uptodate. Cannot merge.");
            }
            Err(FATAL)
        }
        Err(UpdateError::Checkout(gitpar::checkout::Error::Entries(errors))) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            Err(1)
        }
        Err(UpdateError::Checkout(gitpar::checkout::Error::Interrupted)) => {
            eprintln!("error: interrupted");
            Err(crate::interrupt::EXIT_CODE)
        }
        Err(other) => Err(fatal(other)),
    }
}

/// The common tail of `switch` and `checkout`: update, move HEAD, say what happened.
fn run(
    opened: &Opened,
    head: NewHead,
    commit: gix::ObjectId,
    force: bool,
    args: &CheckoutArgs,
    verb: &str,
) -> Result<(), u8> {
    let repo = &opened.repo;
    let old_head_name = repo.head_name().ok().flatten();
    let old_commit = repo.head_commit().ok().map(|c| c.id);
    let old_desc = old_head_name
        .as_ref()
        .map(|n| n.shorten().to_str_lossy().into_owned())
        .or_else(|| old_commit.map(|c| c.to_string()))
        .unwrap_or_else(|| "(invalid)".into());
    let policy = if force { Policy::Force } else { Policy::Safe };
    // git's `skip_merge_working_tree`: a new branch at the commit HEAD is on leaves the index
    // and work tree exactly as they are (even an unborn index after `clone --no-checkout`).
    let skip = matches!(head, NewHead::NewBranch(..)) && !force && old_commit == Some(commit);
    let outcome = if skip {
        gitpar::update::Outcome::default()
    } else {
        update_worktree(opened, head_tree(repo), commit, policy, args)?
    };
    for (status, path) in &outcome.local_changes {
        println!("{status}\t{}", crate::quote_path(path.as_ref()));
    }

    let (new_desc, edits) = match &head {
        NewHead::Branch(b) => {
            let full: FullName = format!("refs/heads/{b}")
                .try_into()
                .map_err(|_| fatal(format!("'{b}' is not a valid branch name")))?;
            (
                b.clone(),
                vec![ref_edit("HEAD", Target::Symbolic(full), false, "")?],
            )
        }
        NewHead::NewBranch(b, start, tracking) => {
            let full: FullName = format!("refs/heads/{b}")
                .try_into()
                .map_err(|_| fatal(format!("'{b}' is not a valid branch name")))?;
            let create = ref_edit(
                full.as_bstr().to_str_lossy().as_ref(),
                Target::Object(commit),
                false,
                &format!("branch: Created from {start}"),
            )?;
            edit_refs(repo, vec![create])?;
            if let Some(t) = tracking {
                if let Err(err) = gitpar::branch::set_upstream(repo, b, &t.remote, &t.merge) {
                    // git's `install_branch_config` failure: the branch exists, HEAD stays.
                    eprintln!("error: {err}");
                    eprintln!("error: unable to write upstream branch configuration");
                    eprintln!("hint: ");
                    eprintln!("hint: After fixing the error cause you may try to fix up");
                    eprintln!("hint: the remote tracking information by invoking:");
                    eprintln!("hint:   git branch --set-upstream-to={}", t.short);
                    return Err(1);
                }
                if !args.quiet {
                    println!("branch '{b}' set up to track '{}'.", t.short);
                }
            }
            (
                b.clone(),
                vec![ref_edit("HEAD", Target::Symbolic(full), false, "")?],
            )
        }
        NewHead::Detached(rev) => (
            rev.clone(),
            vec![ref_edit("HEAD", Target::Object(commit), false, "")?],
        ),
        NewHead::Unchanged => (String::new(), Vec::new()),
    };
    // HEAD moves without gix's reflog (it cannot give a symbolic HEAD its previous commit);
    // the line git writes is appended here.
    if !edits.is_empty() {
        edit_refs(&gitpar::branch::without_reflog(repo), edits)?;
        let message = format!("{verb}: moving from {old_desc} to {new_desc}");
        gitpar::branch::append_reflog(repo, "HEAD", old_commit, commit, &message).map_err(fatal)?;
    }

    // Paths that could not be written were reported; git still switches, and exits 1.
    let status = if outcome.errors.is_empty() {
        Ok(())
    } else {
        Err(1)
    };
    if args.quiet {
        return status;
    }
    let was_detached = old_head_name.is_none();
    match &head {
        NewHead::Branch(b) => {
            if old_head_name
                .as_ref()
                .map(|n| n.shorten().to_str_lossy().into_owned())
                == Some(b.clone())
            {
                eprintln!("Already on '{b}'");
            } else {
                if was_detached {
                    // git names the commit left behind only when HEAD actually moves.
                    if let Some(c) = old_commit.filter(|c| *c != commit) {
                        eprintln!(
                            "Previous HEAD position was {} {}",
                            short(repo, c),
                            subject(repo, c)
                        );
                    }
                }
                eprintln!("Switched to branch '{b}'");
            }
            if let Some(info) = tracking_info(repo, b) {
                print!("{info}");
            }
        }
        NewHead::NewBranch(b, ..) => eprintln!("Switched to a new branch '{b}'"),
        NewHead::Unchanged => {
            if let Some(name) = &old_head_name {
                if let Some(info) = tracking_info(repo, &name.shorten().to_str_lossy()) {
                    print!("{info}");
                }
            }
        }
        NewHead::Detached(_) => {
            if was_detached {
                if let Some(c) = old_commit.filter(|c| *c != commit) {
                    eprintln!(
                        "Previous HEAD position was {} {}",
                        short(repo, c),
                        subject(repo, c)
                    );
                }
            }
            eprintln!(
                "HEAD is now at {} {}",
                short(repo, commit),
                subject(repo, commit)
            );
        }
    }
    status
}

/// Run `git par restore`.
pub fn restore(args: RestoreArgs, overrides: &[String]) -> Result<(), u8> {
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    let worktree = args.worktree || !args.staged;
    let source = match (&args.source, args.staged) {
        (Some(rev), _) => Some(resolve_tree(repo, rev)?),
        (None, true) => Some(resolve_tree(repo, "HEAD")?),
        (None, false) => None,
    };
    restore_paths(
        &opened,
        source,
        args.staged,
        worktree,
        false,
        args.ignore_unmerged,
        &args.paths,
        &args.checkout,
    )
}

fn resolve_tree(repo: &gix::Repository, rev: &str) -> Result<gix::ObjectId, u8> {
    repo.rev_parse_single(rev)
        .ok()
        .and_then(|id| id.object().ok())
        .and_then(|o| o.peel_to_tree().ok())
        .map(|t| t.id)
        .ok_or_else(|| fatal(format!("invalid reference: {rev}")))
}

/// Pathspecs are relative to the current directory: make them relative to the work tree root.
/// `prefix` is where the current directory is in the work tree (see [`Opened::prefix`]).
fn repo_relative(prefix: &std::path::Path, specs: &[String]) -> Result<Vec<bstr::BString>, u8> {
    let mut out = Vec::new();
    for spec in specs {
        let joined = prefix.join(spec);
        let mut parts: Vec<String> = Vec::new();
        for c in joined.components() {
            match c {
                std::path::Component::ParentDir if parts.pop().is_none() => {
                    return Err(fatal(format!("{spec}: '{spec}' is outside repository")));
                }
                std::path::Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        out.push(parts.join("/").into());
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)] // each flag is one of git's options for the two commands
fn restore_paths(
    opened: &Opened,
    source: Option<gix::ObjectId>,
    staged: bool,
    worktree: bool,
    overlay: bool,
    ignore_unmerged: bool,
    specs: &[String],
    args: &CheckoutArgs,
) -> Result<(), u8> {
    let repo = &opened.repo;
    let workdir = opened.require_workdir()?.to_owned();
    let req = gitpar::restore::Request {
        source: source.map_or(
            gitpar::restore::Source::Index,
            gitpar::restore::Source::Tree,
        ),
        pathspecs: repo_relative(&opened.prefix, specs)?,
        worktree,
        staged,
        overlay,
        ignore_unmerged,
    };
    let opts = gitpar::Options::from_config(&repo.config_snapshot(), jobs(args));
    let progress = gitpar::Progress::default();
    let interrupt = &crate::interrupt::INTERRUPTED;
    let result = progress::show_while(
        &progress,
        "Updating files",
        !args.quiet,
        || {
            gitpar::restore::restore(
                repo,
                &workdir,
                &opened.index_path,
                &req,
                &opts,
                &progress,
                interrupt,
            )
        },
        Result::is_ok,
    );
    match result {
        Ok(outcome) => {
            if !args.quiet {
                for path in &outcome.unmerged {
                    eprintln!("warning: path '{path}' is unmerged");
                }
            }
            for e in &outcome.errors {
                eprintln!("error: {e}");
            }
            if outcome.errors.is_empty() {
                Ok(())
            } else {
                Err(1)
            }
        }
        Err(gitpar::restore::Error::Unmerged(paths)) => {
            for path in &paths {
                eprintln!("error: path '{path}' is unmerged");
            }
            Err(1)
        }
        Err(gitpar::restore::Error::NoMatch(spec)) => {
            eprintln!("error: pathspec '{spec}' did not match any file(s) known to git");
            Err(1)
        }
        Err(gitpar::restore::Error::Checkout(gitpar::checkout::Error::Entries(errors))) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            Err(1)
        }
        Err(gitpar::restore::Error::Checkout(gitpar::checkout::Error::Interrupted)) => {
            eprintln!("error: interrupted");
            Err(crate::interrupt::EXIT_CODE)
        }
        Err(other) => Err(fatal(other)),
    }
}

/// git's `format_tracking_info` after switching to `branch`: how it stands against its upstream
/// (`branch.<name>.remote`/`.merge`, mapped to `refs/remotes/<remote>/<branch>`), with git's
/// advice lines. `None` when the branch has no upstream.
fn tracking_info(repo: &gix::Repository, branch: &str) -> Option<String> {
    let config = repo.config_snapshot();
    let remote = config.string(format!("branch.{branch}.remote").as_str())?;
    let merge = config.string(format!("branch.{branch}.merge").as_str())?;
    let upstream_branch = merge
        .strip_prefix(b"refs/heads/")?
        .to_str_lossy()
        .into_owned();
    let remote = remote.to_str_lossy().into_owned();
    if remote == "." {
        return None;
    }
    let short = format!("{remote}/{upstream_branch}");
    let Some(upstream) = resolve_commit(repo, &format!("refs/remotes/{short}")) else {
        return Some(format!(
            "Your branch is based on '{short}', but the upstream is gone.\n  (use \"git branch --unset-upstream\" to fixup)\n"
        ));
    };
    let local = resolve_commit(repo, &format!("refs/heads/{branch}"))?;
    let count = |tip: gix::ObjectId, hidden: gix::ObjectId| -> Option<usize> {
        Some(
            repo.rev_walk([tip])
                .with_hidden([hidden])
                .all()
                .ok()?
                .filter_map(Result::ok)
                .count(),
        )
    };
    let ahead = count(local, upstream)?;
    let behind = count(upstream, local)?;
    let plural = |n: usize| if n == 1 { "commit" } else { "commits" };
    Some(match (ahead, behind) {
        (0, 0) => format!("Your branch is up to date with '{short}'.\n"),
        (a, 0) => format!(
            "Your branch is ahead of '{short}' by {a} {}.\n  (use \"git push\" to publish your local commits)\n",
            plural(a)
        ),
        (0, b) => format!(
            "Your branch is behind '{short}' by {b} {}, and can be fast-forwarded.\n  (use \"git pull\" to update your local branch)\n",
            plural(b)
        ),
        (a, b) => format!(
            "Your branch and '{short}' have diverged,\nand have {a} and {b} different commits each, respectively.\n  (use \"git pull\" if you want to integrate the remote branch with yours)\n"
        ),
    })
}
