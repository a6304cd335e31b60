//! `switch`, `checkout <branch>` and `reset --hard`: the commands that update an existing work
//! tree through the engine's two-way update, then move `HEAD` like git, with git's messages.

use bstr::ByteSlice;
use clap::Args;
use gitpar::switch::Head;
use gitpar::update::Policy;

use crate::repo::Opened;
use crate::revision::{parse_branchname_arg, Parsed, Words};
use crate::{fatal, progress, report, CheckoutArgs};

/// `git par switch`.
#[derive(Args, Debug)]
pub struct SwitchArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Create a new branch NEW at the start point and switch to it.
    #[arg(short = 'c', long = "create", value_name = "NEW")]
    create: Option<String>,
    /// Create or reset branch NEW at the start point and switch to it (`branches.rs`).
    #[arg(short = 'C', long = "force-create", value_name = "NEW")]
    force_create: Option<String>,
    /// `--track`, `--no-track`, `--guess`, `--ignore-other-worktrees` (`branches.rs`).
    #[command(flatten)]
    branch: crate::branches::BranchOpts,
    /// Switch to a commit, detaching HEAD.
    #[arg(short = 'd', long = "detach")]
    detach: bool,
    /// Discard local changes, and untracked files in the way.
    #[arg(short = 'f', long = "force")]
    force: bool,
    /// Discard local changes; untracked files where the index has no entry refuse the switch
    /// (git's reset that protects them).
    #[arg(long = "discard-changes")]
    discard_changes: bool,
    /// Create a new unborn branch NEW from the empty tree (`unborn.rs`).
    #[arg(long = "orphan", value_name = "NEW")]
    orphan: Option<String>,
    /// `--[no-]recurse-submodules`.
    #[command(flatten)]
    recurse: RecurseArgs,
    /// `-m/--merge`, `--conflict=STYLE` (`MergeArgs`).
    #[command(flatten)]
    merge: MergeArgs,
    /// The branch (or, with --detach / -c, the start point) to switch to.
    target: Option<String>,
}

/// `--recurse-submodules[=<bool>]` / `--no-recurse-submodules`: whether active submodules'
/// work trees follow the update (git's `option_parse_recurse_submodules_worktree_updater`);
/// without either, `submodule.recurse` decides.
#[derive(Args, Debug, Default)]
pub struct RecurseArgs {
    /// Update the work trees of active submodules too.
    #[arg(long = "recurse-submodules", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true",
          value_parser = parse_bool_arg)]
    recurse_submodules: Option<bool>,
    /// Leave submodules' work trees alone.
    #[arg(long = "no-recurse-submodules")]
    no_recurse_submodules: bool,
}

impl RecurseArgs {
    /// The choice made on the command line, if any (the last one wins, as with git).
    fn choice(&self) -> Option<bool> {
        if self.no_recurse_submodules {
            Some(false)
        } else {
            self.recurse_submodules
        }
    }
}

/// git's boolean words for an option value.
fn parse_bool_arg(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!("bad boolean value '{v}'")),
    }
}

/// `git par checkout` (the branch-switching form).
#[derive(Args, Debug)]
pub struct CheckoutCmdArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Create a new branch NEW at REV and check it out.
    #[arg(short = 'b', value_name = "NEW")]
    create: Option<String>,
    /// Create or reset branch NEW at REV and check it out (`branches.rs`).
    #[arg(short = 'B', value_name = "NEW")]
    force_create: Option<String>,
    /// `-l`: create the new branch's reflog even where `core.logAllRefUpdates` would not.
    #[arg(short = 'l')]
    reflog: bool,
    /// `--track`, `--no-track`, `--guess`, `--ignore-other-worktrees` (`branches.rs`).
    #[command(flatten)]
    branch: crate::branches::BranchOpts,
    /// Detach HEAD at REV.
    #[arg(long = "detach")]
    detach: bool,
    /// Discard local changes.
    #[arg(short = 'f', long = "force")]
    force: bool,
    /// Create a new unborn branch NEW, keeping index and work tree (`unborn.rs`).
    #[arg(long = "orphan", value_name = "NEW")]
    orphan: Option<String>,
    /// `--pathspec-from-file`, `--pathspec-file-nul` (`pathspec_file.rs`).
    #[command(flatten)]
    pathspec_file: crate::pathspec_file::PathspecFileArgs,
    /// `--overlay` (the default) / `--no-overlay` for the paths form.
    #[command(flatten)]
    overlay: crate::pathspec_file::OverlayArgs,
    /// Restore the selected paths even where sparse checkout leaves them out (paths form).
    #[arg(long = "ignore-skip-worktree-bits")]
    ignore_skip_worktree_bits: bool,
    /// `--[no-]recurse-submodules`.
    #[command(flatten)]
    recurse: RecurseArgs,
    /// The branch or commit to check out (or, with paths, the source of their content).
    target: Option<String>,
    /// Paths after the revision without `--` (or every argument, when the first is no
    /// revision): git's disambiguation decides (`revision::parse_branchname_arg`).
    #[arg(value_name = "PATHSPEC")]
    rest: Vec<String>,
    /// `--ours`/`--theirs` (`StageArgs`).
    #[command(flatten)]
    stage: StageArgs,
    /// `-m/--merge`, `--conflict=STYLE` (`MergeArgs`).
    #[command(flatten)]
    merge: MergeArgs,
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
    /// Restore the selected paths even where sparse checkout leaves them out.
    #[arg(long = "ignore-skip-worktree-bits")]
    ignore_skip_worktree_bits: bool,
    /// `--ours`/`--theirs` (`StageArgs`).
    #[command(flatten)]
    stage: StageArgs,
    /// `-m/--merge`, `--conflict=STYLE` (`MergeArgs`).
    #[command(flatten)]
    merge: MergeArgs,
    /// `--pathspec-from-file`, `--pathspec-file-nul` (`pathspec_file.rs`).
    #[command(flatten)]
    pathspec_file: crate::pathspec_file::PathspecFileArgs,
    /// `--overlay` / `--no-overlay` (the default).
    #[command(flatten)]
    overlay: crate::pathspec_file::OverlayArgs,
    /// `--[no-]recurse-submodules`.
    #[command(flatten)]
    recurse: RecurseArgs,
    /// The paths to restore.
    #[arg(value_name = "PATHSPEC")]
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
    /// `--[no-]recurse-submodules`.
    #[command(flatten)]
    recurse: RecurseArgs,
    /// The commit to reset to (default HEAD).
    target: Option<String>,
}

/// The repository, work tree and index as git's setup finds them (`GIT_DIR`, `GIT_WORK_TREE`,
/// `GIT_INDEX_FILE`, `core.worktree`, `safe.directory`, ...).
pub(crate) fn open_repo(overrides: &[String]) -> Result<Opened, u8> {
    let opened = crate::repo::open(overrides)?;
    // The `reference-transaction` hook runs from wherever refs move (`reftx.rs`).
    crate::hooks::remember(&opened);
    Ok(opened)
}

fn resolve_commit(repo: &gix::Repository, spec: &str) -> Option<gix::ObjectId> {
    crate::revision::commit_mb(repo, spec)
}

/// `-c/-C NEW [START]` / `-b/-B NEW [START]`: the branch `new` (validated, `branches.rs`) at
/// START (default HEAD).
fn new_branch(
    repo: &gix::Repository,
    new: &crate::branches::Create,
    start: Option<&str>,
) -> Result<(Head, gix::ObjectId), u8> {
    let name = start.unwrap_or("HEAD");
    let commit =
        resolve_commit(repo, name).ok_or_else(|| fatal(format!("invalid reference: {name}")))?;
    let branch = crate::branches::new_branch(new, start);
    Ok((Head::NewBranch(branch), commit))
}

/// git's `die_if_some_operation_in_progress` for `switch` (checkout may switch anyway): a merge,
/// am, rebase, cherry-pick or revert in progress stops it, with git's words (exit 128).
pub(crate) fn refuse_operation_in_progress(repo: &gix::Repository) -> Result<(), u8> {
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

/// git's `--guess`: a name that is no local branch but the branch of exactly one remote (or of
/// `checkout.defaultRemote`) becomes a new local branch from it; several remotes refuse.
fn guess_tracking_branch(
    repo: &gix::Repository,
    name: &str,
    opts: &crate::branches::BranchOpts,
) -> Result<Option<(Head, gix::ObjectId)>, u8> {
    let guessed = crate::branches::guess(repo, name, opts)?;
    Ok(guessed.map(|(branch, commit)| (Head::NewBranch(branch), commit)))
}

/// git's `die_if_switching_to_a_branch_in_use` guards the branch switched to.
trait Guarded {
    fn guarded_branch(&self) -> Option<&str>;
}

impl Guarded for Head {
    /// The branch git's `die_if_switching_to_a_branch_in_use` guards: an existing branch to
    /// switch to, or the one `-B`/`-C` resets.
    fn guarded_branch(&self) -> Option<&str> {
        match self {
            Head::Branch(b) => Some(b),
            Head::NewBranch(nb) if nb.force => Some(&nb.name),
            _ => None,
        }
    }
}

/// git's `checkout_branch` for a parsed argument without paths: its refusals (`--detach` with a
/// new branch, a tree that is no commit; for `switch`, no argument, or no branch without
/// `--detach`, and an operation in progress), then where HEAD goes: a new branch (`new`, validated,
/// at the argument or HEAD), the branch named, HEAD unchanged (`checkout [HEAD]`), or detached.
fn switch_target(
    repo: &gix::Repository,
    parsed: Parsed<(Head, gix::ObjectId)>,
    new: Option<&crate::branches::Create>,
    detach: bool,
    is_switch: bool,
) -> Result<(Head, gix::ObjectId), u8> {
    let (target, guessed) = match parsed {
        Parsed::Rev(target, _) => (Some(target), None),
        Parsed::Guessed(guessed) => (None, Some(guessed)),
        Parsed::Paths(_) => (None, None),
    };
    if detach && (new.is_some() || guessed.is_some()) {
        return Err(crate::revision::refuse_detach_with_new_branch());
    }
    if let Some(target) = target.as_ref().filter(|t| t.commit.is_none()) {
        return Err(fatal(format!(
            "Cannot switch branch to a non-commit '{}'",
            target.name
        )));
    }
    if is_switch {
        if target.is_none() && guessed.is_none() && new.is_none() && !detach {
            return Err(fatal("missing branch or commit argument"));
        }
        if let Some(target) = target.as_ref().filter(|t| t.branch.is_none()) {
            if !detach && new.is_none() {
                return Err(crate::revision::die_expecting_a_branch(repo, target));
            }
        }
        refuse_operation_in_progress(repo)?;
    }
    if let Some(guessed) = guessed {
        return Ok(guessed);
    }
    if let Some(new) = new {
        return new_branch(repo, new, target.as_ref().map(|t| t.name.as_str()));
    }
    let Some(target) = target else {
        let commit = repo
            .head_commit()
            .map_err(|_| fatal("You are on a branch yet to be born"))?
            .id;
        let head = if detach {
            Head::Detached {
                name: "HEAD".into(),
                explicit: true,
            }
        } else {
            Head::Unchanged
        };
        return Ok((head, commit));
    };
    let commit = target.commit.expect("refused above: not a commit");
    Ok(match target.branch {
        Some(branch) if !detach => (Head::Branch(branch), commit),
        // `checkout HEAD` (or `@`): HEAD stays as it is.
        _ if target.name == "HEAD" && !detach => (Head::Unchanged, commit),
        _ => (
            Head::Detached {
                name: target.name,
                explicit: detach,
            },
            commit,
        ),
    })
}

/// The exit status of a path checkout or restore that could not write a path: git's
/// `checkout_paths` returns the -1 of `checkout_entry`.
const ENTRY_FAILED: u8 = 255;

/// git's `checkout_paths` status from the paths it could not write: -1 (255) when
/// `checkout_entry` failed on one; else the number of paths a delayed filter left unfiltered
/// (`finish_delayed_checkout`'s `errs |= dco->paths.nr`); 0 when none failed.
fn entries_status(errors: &[gitpar::checkout::EntryError]) -> u8 {
    let delayed = errors.iter().filter(|e| e.is_undelivered()).count();
    if errors.len() > delayed {
        ENTRY_FAILED
    } else {
        u8::try_from(delayed).unwrap_or(ENTRY_FAILED)
    }
}

/// Run `git par switch`.
pub fn switch(mut args: SwitchArgs, overrides: &[String]) -> Result<(), u8> {
    args.checkout.recurse_submodules = args.recurse.choice();
    args.checkout.preserve_ignored = args.branch.preserve_ignored();
    args.merge.check_style()?;
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    if args.merge.given() && renormalizes(repo) {
        return Err(merge_to_git("switch"));
    }
    if let Some(done) = crate::unborn::intercept(&opened, &args.unborn_request()) {
        return done;
    }
    // git's `parse_branchname_arg` (`-`, `@{-N}`, `A...B`, `--guess`), then `checkout_branch`.
    let words: Vec<String> = args.target.iter().cloned().collect();
    let words = Words {
        before: &words,
        dash_dash: false,
        after: &[],
    };
    let creating = args.create.is_some() || args.force_create.is_some();
    let dwim_ok = crate::branches::dwim_ok(repo, creating, &args.branch);
    let parsed = parse_branchname_arg(repo, &words, false, dwim_ok, |name| {
        guess_tracking_branch(repo, name, &args.branch)
    })?;
    let new = crate::branches::requested(
        repo,
        crate::branches::Cmd::Switch,
        args.create.as_deref(),
        args.force_create.as_deref(),
        args.target.as_deref(),
        &args.branch,
    )?;
    let (head, commit) = switch_target(repo, parsed, new.as_ref(), args.detach, true)?;
    let merge = args.merge.for_switch(args.force, args.discard_changes)?;
    crate::branches::refuse_in_use(repo, head.guarded_branch(), &args.branch)?;
    let checkout = CheckoutArgs {
        protect_untracked: args.discard_changes && !args.force,
        ..args.checkout.clone()
    };
    run(
        &opened,
        (head, args.target.as_deref()),
        Some(commit),
        args.force || args.discard_changes,
        merge,
        &checkout,
        "checkout",
    )
}

/// Whether `merge.renormalize` is set: git's three-way merges (`-m`, `--conflict`) then pass
/// both sides through the attributes' conversions before merging (`ll_merge`'s renormalize),
/// which gix's merge does not do; such a call is git's ([`merge_to_git`]).
fn renormalizes(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .boolean("merge.renormalize")
        .unwrap_or(false)
}

/// Hand the merging checkout, switch or restore `what` to git whole ([`renormalizes`]).
fn merge_to_git(what: &str) -> u8 {
    crate::patch::hand_to_git(
        what,
        "merge.renormalize with -m/--conflict",
        &crate::own_args(),
    )
}

/// Whether a path checkout or restore would move submodules' work trees: `--recurse-submodules`
/// (`choice`, else `submodule.recurse`) with a submodule in the index. git then moves each
/// selected submodule's `HEAD` to the commit it checks out (`checkout_entry` of a gitlink,
/// `submodule_move_head`), which the engine's path restore does not do: the call is git's
/// ([`paths_to_git`]).
fn paths_reach_submodules(opened: &crate::repo::Opened, choice: Option<bool>) -> bool {
    let recurse = choice.unwrap_or_else(|| {
        opened
            .repo
            .config_snapshot()
            .boolean("submodule.recurse")
            .unwrap_or(false)
    });
    recurse
        && gix::index::File::at(
            &opened.index_path,
            opened.repo.object_hash(),
            true,
            gix::index::decode::Options::default(),
        )
        .is_ok_and(|index| {
            index
                .entries()
                .iter()
                .any(|e| e.mode == gix::index::entry::Mode::COMMIT)
        })
}

/// Hand the path checkout or restore `what` to git whole ([`paths_reach_submodules`]).
fn paths_to_git(what: &str) -> u8 {
    crate::patch::hand_to_git(
        what,
        "--recurse-submodules with submodules in the index",
        &crate::own_args(),
    )
}

/// Run `git par checkout` (branch form).
pub fn checkout(mut args: CheckoutCmdArgs, overrides: &[String]) -> Result<(), u8> {
    args.checkout.recurse_submodules = args.recurse.choice();
    args.checkout.preserve_ignored = args.branch.preserve_ignored();
    args.merge.check_style()?;
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    if args.merge.given() && renormalizes(repo) {
        return Err(merge_to_git("checkout"));
    }
    if let Some(done) = crate::unborn::intercept(&opened, &args.unborn_request()) {
        if let (Ok(()), true, Some(name)) = (&done, args.reflog, args.orphan.as_deref()) {
            crate::branches::orphan_reflog(repo, name).map_err(fatal)?;
        }
        return done;
    }
    // git's `parse_branchname_arg`: a revision (`-`, `@{-N}`, `A...B`, `@`) and paths, a
    // remote branch to guess a local one from, or only paths.
    let before: Vec<String> = args.target.iter().chain(&args.rest).cloned().collect();
    let words = Words {
        before: &before,
        dash_dash: crate::revision::dash_dash_given(&args.paths),
        after: &args.paths,
    };
    let creating = args.create.is_some() || args.force_create.is_some();
    let dwim_ok = crate::branches::dwim_ok(repo, creating, &args.branch);
    let parsed = parse_branchname_arg(repo, &words, true, dwim_ok, |name| {
        guess_tracking_branch(repo, name, &args.branch)
    })?;
    let paths = match &parsed {
        Parsed::Paths(paths) | Parsed::Rev(_, paths) => paths.clone(),
        Parsed::Guessed(_) => Vec::new(),
    };
    if let Some(first) = paths.first() {
        if paths_reach_submodules(&opened, args.checkout.recurse_submodules) {
            return Err(paths_to_git("checkout"));
        }
        let commit = match &parsed {
            Parsed::Rev(target, _) => target.commit,
            _ => None,
        };
        let creating = args.create.as_ref().or(args.force_create.as_ref());
        if let (Some(new), None, 1) = (creating, commit, paths.len()) {
            return Err(fatal(format!(
                "'{first}' is not a commit and a branch '{new}' cannot be created from it"
            )));
        }
        if args.detach {
            return Err(fatal(format!(
                "git checkout: --detach does not take a path argument '{first}'"
            )));
        }
        let given = [args.stage.get().is_some(), args.force, args.merge.given()];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(MergeArgs::refuse_incompatible());
        }
    }
    let paths = args.pathspec_file.pathspecs(paths, args.detach)?;
    let new = crate::branches::requested(
        repo,
        crate::branches::Cmd::Checkout,
        args.create.as_deref(),
        args.force_create.as_deref(),
        args.target.as_deref(),
        &args.branch,
    )?;
    if !paths.is_empty() {
        crate::branches::refuse_track_with_paths(&args.branch)?;
        if let Some(new) = args.create.as_ref().or(args.force_create.as_ref()) {
            return Err(fatal(format!(
                "Cannot update paths and switch to branch '{new}' at the same time."
            )));
        }
        let source = match &parsed {
            Parsed::Rev(target, _) => Some(target.tree),
            _ => None,
        };
        if let Parsed::Rev(target, _) = &parsed {
            // git's `checkout_worktree`: the ref the argument names, the commit (or tree).
            args.checkout.filter_meta = gitpar::FilterMeta {
                ref_name: crate::dwim_ref(repo, &target.name),
                treeish: Some(target.commit.unwrap_or(target.tree)),
            };
        }
        if source.is_some() && (args.stage.get().is_some() || args.merge.given()) {
            return Err(StageArgs::refuse_tree());
        }
        return restore_paths(
            &opened,
            source,
            source.is_some(),
            true,
            args.overlay.resolve(true),
            (args.force, args.ignore_skip_worktree_bits),
            &paths,
            &args.checkout,
            !words.dash_dash && !before.is_empty(),
            args.stage.get(),
            args.merge.style(repo),
        );
    }
    if args.overlay.given() {
        return Err(fatal(
            "'--[no]-overlay' cannot be used with switching branches",
        ));
    }
    if args.stage.get().is_some() {
        // git's `checkout_branch`: no paths to write the stage to.
        let noop = matches!(parsed, Parsed::Paths(_)) && new.is_none() && !args.detach;
        let what = if noop {
            "needs the paths to check out"
        } else {
            "cannot be used with switching branches"
        };
        return Err(fatal(format!("'--ours/--theirs' {what}")));
    }
    let (mut head, commit) = switch_target(repo, parsed, new.as_ref(), args.detach, false)?;
    let merge = args.merge.for_switch(args.force, false)?;
    crate::branches::refuse_in_use(repo, head.guarded_branch(), &args.branch)?;
    if let Head::NewBranch(nb) = &mut head {
        nb.reflog = args.reflog;
    }
    run(
        &opened,
        (head, args.target.as_deref()),
        Some(commit),
        args.force,
        merge,
        &args.checkout,
        "checkout",
    )
}

/// Run `git par reset --hard`.
pub fn reset(mut args: ResetArgs, overrides: &[String]) -> Result<(), u8> {
    args.checkout.recurse_submodules = args.recurse.choice();
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    let _ = args.hard;
    if let Some(done) = crate::unborn::reset_hard(&opened, args.target.as_deref(), &args.checkout) {
        return done;
    }
    let target = args.target.clone().unwrap_or_else(|| "HEAD".into());
    // git's `parse_args`: a revision given without `--` must not name a file as well, and a
    // word that is no revision but a file is a path (which `--hard` refuses).
    let dash_dash = crate::own_args().iter().any(|a| a == "--");
    if let (Some(word), false) = (&args.target, dash_dash) {
        if resolve_commit(repo, word).is_some() {
            crate::revision::verify_non_filename(repo, word)?;
        } else if crate::revision::check_filename(repo, word) {
            return Err(fatal("Cannot do hard reset with paths."));
        }
    }
    let commit = resolve_commit(repo, &target).ok_or_else(|| {
        fatal(format!(
            "ambiguous argument '{target}': unknown revision or path not in the working tree.\n\
             Use '--' to separate paths from revisions, like this:\n\
             'git <command> [<revision>...] -- [<file>...]'"
        ))
    })?;
    // git's `reset_index`: the ref the argument names, if it is under refs/, and the commit.
    args.checkout.filter_meta = gitpar::FilterMeta {
        ref_name: crate::dwim_ref(repo, &target).filter(|r| r.starts_with(b"refs/")),
        treeish: Some(commit),
    };
    let workdir = opened.require_workdir()?.to_owned();
    let request = gitpar::reset::Request {
        commit,
        rev: &target,
        options: options(repo, &args.checkout, Policy::Force),
        worktree: &workdir,
        index_path: &opened.index_path,
    };
    let env = crate::hooks::env();
    let outcome = with_progress(&args.checkout, |ctx| {
        gitpar::reset::hard(repo, env, &request, ctx)
    })
    .map_err(|e| match e {
        // reset's own words (git's plumbing message), then its fatal line.
        // Entries that could not be written: git's reset dies before it writes the index.
        gitpar::switch::Error::Update(gitpar::update::Error::Checkout(
            gitpar::checkout::Error::Entries(errors),
        )) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            fatal(format!(
                "Could not reset index file to revision '{target}'."
            ))
        }
        gitpar::switch::Error::Update(gitpar::update::Error::CwdInTheWay(path)) => {
            eprintln!(
                "error: Refusing to remove '{path}' since it is the current working directory."
            );
            fatal(format!(
                "Could not reset index file to revision '{target}'."
            ))
        }
        e => report::switch_error(repo, e),
    })?;
    report::update_outcome(&outcome);
    if !args.checkout.quiet {
        crate::state::print_new_head_line(repo, commit);
    }
    gitpar::repo::state::remove_branch_state(repo, env, false).map_err(report::aborted)?;
    if outcome.errors.is_empty() {
        Ok(())
    } else {
        Err(1)
    }
}

/// The engine's options for an update of `policy` (`-j`, config, `--recurse-submodules`,
/// `--no-overwrite-ignore`).
pub(crate) fn options(
    repo: &gix::Repository,
    args: &CheckoutArgs,
    policy: Policy,
) -> gitpar::Options {
    let config = repo.config_snapshot();
    let mut opts = crate::engine_options(repo, args);
    opts.report_local_changes = policy == Policy::Safe && !args.quiet;
    opts.recurse_submodules = args
        .recurse_submodules
        .unwrap_or_else(|| config.boolean("submodule.recurse").unwrap_or(false));
    opts.overwrite_ignore = !args.preserve_ignored;
    opts.protect_untracked = args.protect_untracked;
    opts
}

/// Run `step` with a [`gitpar::Context`]: "Updating files" progress on standard error unless
/// `-q`, and Ctrl-C asking the engine to stop.
pub(crate) fn with_progress<T, E>(
    args: &CheckoutArgs,
    step: impl FnOnce(&gitpar::Context<'_>) -> Result<T, E>,
) -> Result<T, E> {
    let progress = gitpar::Progress::default();
    let ctx = gitpar::Context {
        progress: &progress,
        interrupt: &crate::interrupt::INTERRUPTED,
    };
    progress::show_while(
        &progress,
        "Updating files",
        progress::mode(args),
        || step(&ctx),
        Result::is_ok,
    )
}

/// The common tail of `switch` and `checkout`, the engine's switch transaction
/// ([`gitpar::switch`]) with git's messages between its steps: the update (with `-m`, merging
/// local changes it would lose) and the changes carried over; the new branch and `HEAD`; then
/// what git says about where `HEAD` is; then the state files and `post-checkout`.
pub(crate) fn run(
    opened: &Opened,
    (head, target): (Head, Option<&str>),
    commit: Option<gix::ObjectId>,
    force: bool,
    merge: bool,
    args: &CheckoutArgs,
    verb: &str,
) -> Result<(), u8> {
    let repo = &opened.repo;
    let workdir = opened.require_workdir()?.to_owned();
    let policy = if force { Policy::Force } else { Policy::Safe };
    // What git's `switch_branches` tells filters: the ref the argument names, and the commit.
    let ref_name = match &head {
        Head::Branch(b) => Some(format!("refs/heads/{b}").into()),
        Head::NewBranch(nb) => crate::dwim_ref(repo, &nb.start),
        Head::Detached { name, .. } => crate::dwim_ref(repo, name),
        // `checkout HEAD` names HEAD (so its branch); a bare `checkout` names nothing.
        Head::Unchanged => target.and_then(|t| crate::dwim_ref(repo, t)),
        Head::Orphan(_) => None,
    };
    let args = &CheckoutArgs {
        filter_meta: gitpar::FilterMeta {
            ref_name,
            treeish: commit,
        },
        ..args.clone()
    };
    let request = gitpar::switch::Request {
        head,
        commit,
        force,
        merge,
        options: options(repo, args, policy),
        worktree: &workdir,
        index_path: &opened.index_path,
        quiet: args.quiet,
        verb,
    };
    let fail = |e| report::switch_error(repo, e);
    let switch = gitpar::switch::Switch::new(repo, crate::hooks::env(), request);
    let updated = match with_progress(args, |ctx| switch.update(ctx)) {
        Ok(updated) => updated,
        // Nothing has changed: git makes the same two-way attempt, then merges.
        Err(gitpar::switch::Error::MergeIsGits) => {
            return Err(crate::patch::hand_to_git(
                verb,
                "-m with local changes to merge into the new branch",
                &crate::own_args(),
            ))
        }
        Err(e) => return Err(fail(e)),
    };
    report::update_outcome(&updated.outcome);
    // `--orphan` to the empty tree carries nothing over that git would list.
    if commit.is_some() {
        for (status, path) in &updated.local_changes {
            println!("{status}\t{}", crate::quote_path(path.as_ref()));
        }
    }
    let moved = updated.move_head().map_err(fail)?;
    if !args.quiet {
        say_where_head_is(repo, &moved);
    }
    // Paths that could not be written were reported; git still switches, and exits 1 only
    // when it discarded local changes (`-f`: `reset_tree` sets `writeout_error`); a safe
    // switch's failed writes do not change its status (`merge_working_tree` returns 0 after
    // `unpack_trees`' -2), the paths show as local changes instead.
    let status = if moved.outcome.errors.is_empty() || !force {
        Ok(())
    } else {
        Err(1)
    };
    // A failing `post-checkout` makes a switch exit 1 (git's `ret || writeout_error`), unlike
    // a path checkout, which exits with the hook's status.
    let rc = moved.finish().map_err(fail)?;
    match status {
        Ok(()) if rc != 0 => Err(1),
        status => status,
    }
}

/// What git says once `HEAD` moved: the commits a detached `HEAD` left behind, then "Switched
/// to branch …", "Already on …", "HEAD is now at …" with the detached-HEAD advice, and the
/// upstream's ahead/behind.
fn say_where_head_is(repo: &gix::Repository, moved: &gitpar::switch::Moved<'_>) {
    let old = moved.old_head();
    let request = moved.request();
    let was_detached = old.branch.is_none();
    // git's `orphaned_commit_warning`: on leaving a detached commit, the commits no ref reaches
    // any more, or else where HEAD was.
    if let Some(c) = old
        .commit
        .filter(|c| was_detached && request.commit != Some(*c))
    {
        eprint!(
            "{}",
            crate::revision::leaving_detached(repo, c, request.commit)
        );
    }
    let old_short = old
        .branch
        .as_ref()
        .map(|n| n.shorten().to_str_lossy().into_owned());
    match &request.head {
        Head::Branch(b) => {
            if old_short.as_deref() == Some(b.as_str()) {
                eprintln!("Already on '{b}'");
            } else {
                eprintln!("Switched to branch '{b}'");
            }
            if let Some(info) = tracking_info(repo, b) {
                print!("{info}");
            }
        }
        Head::NewBranch(nb) => {
            let old_full = old.branch.as_ref().map(|n| n.as_bstr().to_str_lossy());
            eprintln!(
                "{}",
                crate::branches::switched_message(nb, old_full.as_deref())
            );
            if let Some(info) = tracking_info(repo, &nb.name) {
                print!("{info}");
            }
        }
        Head::Unchanged => {
            if let Some(info) = old_short.as_deref().and_then(|b| tracking_info(repo, b)) {
                print!("{info}");
            }
        }
        Head::Orphan(full) => {
            eprintln!("Switched to a new branch '{}'", full.shorten());
        }
        Head::Detached { name, explicit } => {
            if !was_detached && !explicit {
                if let Some(advice) = crate::revision::detach_advice(repo, name) {
                    eprint!("{advice}");
                }
            }
            if let Some(commit) = request.commit {
                let now = crate::revision::describe_detached(repo, "HEAD is now at", commit);
                eprintln!("{now}");
            }
        }
    }
}

/// Run `git par restore`.
pub fn restore(mut args: RestoreArgs, overrides: &[String]) -> Result<(), u8> {
    args.merge.check_style()?;
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    if args.merge.given() && renormalizes(repo) {
        return Err(merge_to_git("restore"));
    }
    if paths_reach_submodules(&opened, args.recurse.choice()) {
        return Err(paths_to_git("restore"));
    }
    let worktree = args.worktree || !args.staged;
    let source = match (&args.source, args.staged) {
        (Some(rev), _) => Some(resolve_tree(repo, rev)?),
        (None, true) => Some(resolve_tree(repo, "HEAD")?),
        (None, false) => None,
    };
    let paths = args.pathspec_file.pathspecs(args.paths, false)?;
    if paths.is_empty() {
        return Err(fatal("you must specify path(s) to restore"));
    }
    if args.stage.get().is_some() && args.merge.given() {
        return Err(MergeArgs::refuse_incompatible());
    }
    // git's `checkout_paths`: `--merge` and `--ours`/`--theirs` write from the index's stages
    // only.
    if args.merge.given() {
        if args.ignore_unmerged {
            return Err(fatal(
                "options '--ignore-unmerged' and '-m' cannot be used together",
            ));
        }
        if args.staged {
            return Err(fatal(
                "'--merge' or '--conflict' cannot be used with --staged",
            ));
        }
        if source.is_some() {
            return Err(StageArgs::refuse_tree());
        }
    }
    if args.stage.get().is_some() {
        if args.staged {
            return Err(fatal("'--ours' or '--theirs' cannot be used with --staged"));
        }
        if source.is_some() {
            return Err(StageArgs::refuse_tree());
        }
    }
    if let Some(rev) = &args.source {
        // git's `checkout_worktree` for `--source`: its ref, its commit (or tree).
        let treeish = repo
            .rev_parse_single(rev.as_str())
            .ok()
            .and_then(|id| id.object().ok())
            .map(|o| match o.kind {
                gix::object::Kind::Commit => o.id,
                _ => source.unwrap_or(o.id),
            });
        args.checkout.filter_meta = gitpar::FilterMeta {
            ref_name: crate::dwim_ref(repo, rev),
            treeish,
        };
    }
    restore_paths(
        &opened,
        source,
        args.staged,
        worktree,
        args.overlay.resolve(false),
        (args.ignore_unmerged, args.ignore_skip_worktree_bits),
        &paths,
        &args.checkout,
        false,
        args.stage.get(),
        args.merge.style(repo),
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

/// The pathspecs as git's `parse_pathspec` reads them: magic, `GIT_*_PATHSPECS`, relative to
/// the current directory (`Opened::prefix`), absolute ones against the top of the work tree.
fn pathspec(
    opened: &Opened,
    workdir: &std::path::Path,
    specs: &[String],
) -> Result<gitpar::plan::pathspec::Pathspec, u8> {
    let defaults = gitpar::plan::pathspec::defaults_from_environment().map_err(fatal)?;
    let root = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_owned());
    gitpar::plan::pathspec::Pathspec::new(specs, &opened.prefix, &root, defaults).map_err(fatal)
}

#[allow(clippy::too_many_arguments)] // each flag is one of git's options for the two commands
fn restore_paths(
    opened: &Opened,
    source: Option<gix::ObjectId>,
    staged: bool,
    worktree: bool,
    overlay: bool,
    (ignore_unmerged, ignore_skip_worktree): (bool, bool),
    specs: &[String],
    args: &CheckoutArgs,
    count_paths: bool,
    stage: Option<u8>,
    merge: Option<gitpar::merge::Style>,
) -> Result<(), u8> {
    let repo = &opened.repo;
    let workdir = opened.require_workdir()?.to_owned();
    let req = gitpar::restore::Request {
        source: source.map_or(
            gitpar::restore::Source::Index,
            gitpar::restore::Source::Tree,
        ),
        pathspec: pathspec(opened, &workdir, specs)?,
        worktree,
        staged,
        overlay,
        ignore_unmerged,
        stage,
        merge,
        ignore_skip_worktree,
    };
    let opts = crate::engine_options(repo, args);
    let progress = gitpar::Progress::default();
    let interrupt = &crate::interrupt::INTERRUPTED;
    let result = progress::show_while(
        &progress,
        "Updating files",
        progress::mode(args),
        || {
            gitpar::restore::restore(
                repo,
                &workdir,
                &opened.index_path,
                &req,
                &opts,
                &gitpar::Context {
                    progress: &progress,
                    interrupt,
                },
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
            for path in &outcome.binary {
                eprintln!("warning: Cannot merge binary files: {path} (ours vs. theirs)");
            }
            for e in &outcome.errors {
                eprintln!("error: {e}");
            }
            if count_paths && !args.quiet {
                // git's `checkout <rev> <paths>` without `--`: "Updated N paths from …", after
                // "Recreated N merge conflicts" for `-m`.
                let recreated = outcome.recreated;
                if recreated > 0 {
                    let s = if recreated == 1 { "" } else { "s" };
                    eprintln!("Recreated {recreated} merge conflict{s}");
                }
                let written = outcome.written.saturating_sub(recreated);
                if source.is_some() || recreated == 0 || written > 0 {
                    eprintln!("{}", crate::revision::updated_paths(repo, source, written));
                }
            }
            let status = match entries_status(&outcome.errors) {
                0 => Ok(()),
                code => Err(code),
            };
            // git's `checkout_paths` (restore too) ends with `post-checkout HEAD HEAD 0`.
            crate::hooks::after_paths(opened, status)
        }
        Err(gitpar::restore::Error::Unmerged(paths)) => {
            for path in &paths {
                eprintln!("error: path '{path}' is unmerged");
            }
            Err(1)
        }
        Err(gitpar::restore::Error::MissingStage { stage, paths }) => {
            let whose = if stage == 2 { "our" } else { "their" };
            for path in &paths {
                eprintln!("error: path '{path}' does not have {whose} version");
            }
            Err(1)
        }
        Err(gitpar::restore::Error::MissingStages(paths)) => {
            for path in &paths {
                eprintln!("error: path '{path}' does not have all necessary versions");
            }
            Err(1)
        }
        Err(gitpar::restore::Error::NoMatch(specs)) => {
            for spec in &specs {
                eprintln!("error: pathspec '{spec}' did not match any file(s) known to git");
            }
            Err(1)
        }
        Err(gitpar::restore::Error::Checkout(gitpar::checkout::Error::Entries(errors))) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            Err(ENTRY_FAILED)
        }
        Err(gitpar::restore::Error::Checkout(err @ gitpar::checkout::Error::Filter { .. })) => {
            report::checkout_error(&err);
            Err(crate::FATAL)
        }
        Err(gitpar::restore::Error::Checkout(gitpar::checkout::Error::Interrupted)) => {
            eprintln!("error: interrupted");
            Err(crate::interrupt::EXIT_CODE)
        }
        Err(stopped @ gitpar::restore::Error::Subtree { .. }) => {
            if let gitpar::restore::Error::Subtree { failed, .. } = &stopped {
                for e in failed {
                    eprintln!("error: {e}");
                }
            }
            Err(fatal(stopped))
        }
        Err(other) => Err(fatal(other)),
    }
}

/// git's `format_tracking_info` after switching to `branch`: how it stands against its upstream
/// (`branch.<name>.remote`/`.merge`, mapped to `refs/remotes/<remote>/<branch>`), with git's
/// advice lines. `None` when the branch has no upstream.
fn tracking_info(repo: &gix::Repository, branch: &str) -> Option<String> {
    // git's `branch_get_upstream` through the remote's fetch refspecs (`remote = .`: a local
    // ref), named as `shorten_unambiguous_ref` names it (`branches.rs`).
    let (upstream_ref, short) = crate::branches::upstream(repo, branch)?;
    let Some(upstream) = resolve_commit(repo, &upstream_ref) else {
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

impl SwitchArgs {
    /// The options `unborn.rs` decides on (`--orphan`, `-c` on an unborn branch).
    fn unborn_request(&self) -> crate::unborn::Request<'_> {
        crate::unborn::Request {
            command: crate::unborn::Command::Switch,
            orphan: self.orphan.as_deref(),
            track: self.branch.track_given(),
            create: self.create.as_deref().or(self.force_create.as_deref()),
            force_create: self.force_create.is_some(),
            target: self.target.as_deref(),
            detach: self.detach,
            force: self.force || self.discard_changes,
            paths: false,
            checkout: &self.checkout,
        }
    }
}

impl CheckoutCmdArgs {
    /// The options `unborn.rs` decides on (`--orphan`, `-b` on an unborn branch).
    fn unborn_request(&self) -> crate::unborn::Request<'_> {
        crate::unborn::Request {
            command: crate::unborn::Command::Checkout,
            orphan: self.orphan.as_deref(),
            track: self.branch.track_given(),
            create: self.create.as_deref().or(self.force_create.as_deref()),
            force_create: self.force_create.is_some(),
            target: self.target.as_deref(),
            detach: self.detach,
            force: self.force,
            paths: !self.paths.is_empty(),
            checkout: &self.checkout,
        }
    }
}

/// `-m/--merge` and `--conflict=STYLE` of `checkout`, `switch` and `restore`: with paths,
/// recreate the conflicts of unmerged paths in the work tree (`gitpar::restore`); on a branch
/// switch that local changes would block, merge them into the new branch (git's: the call is
/// handed to git, `gitpar::switch::Error::MergeIsGits`). `--conflict` implies `--merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Three-way merge: recreate conflicts of unmerged paths, or merge local changes into the
    /// branch switched to.
    #[arg(short = 'm', long = "merge", overrides_with = "no_merge")]
    merge: bool,
    /// Do not merge (the last of --merge, --no-merge and --conflict wins, as in git).
    #[arg(long = "no-merge", overrides_with_all = ["merge", "conflict"])]
    no_merge: bool,
    /// Conflict markers in this style (merge, diff3 or zdiff3); implies --merge.
    #[arg(
        long = "conflict",
        value_name = "STYLE",
        overrides_with_all = ["no_conflict", "no_merge"]
    )]
    conflict: Option<String>,
    /// Forget an earlier --conflict.
    #[arg(long = "no-conflict", overrides_with = "conflict")]
    no_conflict: bool,
}

impl MergeArgs {
    /// Whether `-m`, `--merge` or `--conflict` was given.
    fn given(&self) -> bool {
        self.merge || self.conflict.is_some()
    }

    /// git's `parse_opt_conflict`: an unknown style is a usage error (exit 129), found before
    /// anything else is looked at.
    fn check_style(&self) -> Result<(), u8> {
        match &self.conflict {
            Some(name) if gitpar::merge::Style::parse(name).is_none() => {
                eprintln!("error: unknown conflict style '{name}'");
                Err(129)
            }
            _ => Ok(()),
        }
    }

    /// The style to merge with: `--conflict`, else `merge.conflictStyle`; `None` without
    /// `-m`/`--conflict`.
    fn style(&self, repo: &gix::Repository) -> Option<gitpar::merge::Style> {
        if !self.given() {
            return None;
        }
        let explicit = self
            .conflict
            .as_deref()
            .and_then(gitpar::merge::Style::parse);
        Some(explicit.unwrap_or_else(|| gitpar::merge::Style::configured(repo)))
    }

    /// Whether a branch switch merges (`-m`, `--conflict`), refusing `-f` or
    /// `--discard-changes` with it as git does (exit 128).
    fn for_switch(&self, force: bool, discard_changes: bool) -> Result<bool, u8> {
        if force && self.given() {
            return Err(fatal("'-f' cannot be used with '-m'"));
        }
        if discard_changes && self.given() {
            return Err(fatal("'--discard-changes' cannot be used with '--merge'"));
        }
        Ok(self.given())
    }

    /// git's refusal of more than one of `--ours/--theirs`, `--force` and `--merge` for paths
    /// (exit 128).
    fn refuse_incompatible() -> u8 {
        fatal("git checkout: --ours/--theirs, --force and --merge are incompatible when\nchecking out of the index.")
    }
}

/// `--ours` / `--theirs` (`-2`/`-3`) of `checkout -- paths` and `restore`: unmerged paths are
/// written from stage 2 or 3 of the index (git's `checkout_stage`); the last one given wins.
#[derive(Args, Debug)]
pub struct StageArgs {
    /// Write our version (stage 2) of unmerged paths.
    #[arg(short = '2', long = "ours", overrides_with = "theirs")]
    ours: bool,
    /// Write their version (stage 3) of unmerged paths.
    #[arg(short = '3', long = "theirs", overrides_with = "ours")]
    theirs: bool,
}

impl StageArgs {
    /// The index stage to write, if one was asked for.
    fn get(&self) -> Option<u8> {
        match (self.ours, self.theirs) {
            (true, _) => Some(2),
            (_, true) => Some(3),
            _ => None,
        }
    }

    /// git's refusal of `--ours`/`--theirs` with a tree source (exit 128).
    fn refuse_tree() -> u8 {
        fatal("'--merge', '--ours', or '--theirs' cannot be used when checking out of a tree")
    }
}
