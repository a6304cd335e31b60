//! `git par checkout`: the branch form (switch branches or detach `HEAD`, like `switch`) and the
//! paths form (`checkout [<tree-ish>] -- <paths>`, restored like `restore`), told apart by git's
//! `parse_branchname_arg`.

use clap::Args;
use gitpar::switch::Head;

use crate::checkout_args::CheckoutArgs;
use crate::exit::fatal;
use crate::hooks::open_repo;
use crate::option_groups::{merge_to_git, renormalizes, MergeArgs, RecurseArgs, StageArgs};
use crate::paths::{paths_reach_submodules, paths_to_git, restore_paths};
use crate::revision::{parse_branchname_arg, Parsed, Words};
use crate::switching::{guess_tracking_branch, switch_target, Guarded};

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
        refuse_paths_with(&opened, &args, &parsed, first, paths.len())?;
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
        let count_paths = !words.dash_dash && !before.is_empty();
        return checkout_paths(&opened, &mut args, &parsed, &paths, count_paths);
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
    crate::switching::run(
        &opened,
        (head, args.target.as_deref()),
        Some(commit),
        args.force,
        merge,
        &args.checkout,
        "checkout",
    )
}

/// git's refusals of a paths form given with what only the branch form takes (a new branch from
/// something that is no commit, `--detach`), or with more than one of `--ours/--theirs`,
/// `--force` and `--merge`; a path checkout that would move submodules is git's.
fn refuse_paths_with(
    opened: &crate::repo::Opened,
    args: &CheckoutCmdArgs,
    parsed: &Parsed<(Head, gix::ObjectId)>,
    first: &str,
    count: usize,
) -> Result<(), u8> {
    if paths_reach_submodules(opened, args.checkout.recurse_submodules) {
        return Err(paths_to_git("checkout"));
    }
    let commit = match parsed {
        Parsed::Rev(target, _) => target.commit,
        _ => None,
    };
    let creating = args.create.as_ref().or(args.force_create.as_ref());
    if let (Some(new), None, 1) = (creating, commit, count) {
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
    Ok(())
}

/// The paths form, `checkout [<tree-ish>] [--] <paths>`: git's refusals with a new branch or
/// `--track`, what the filters are told, then the paths restored from the tree (index too) or
/// the index; `count_paths`: say how many were updated.
fn checkout_paths(
    opened: &crate::repo::Opened,
    args: &mut CheckoutCmdArgs,
    parsed: &Parsed<(Head, gix::ObjectId)>,
    paths: &[String],
    count_paths: bool,
) -> Result<(), u8> {
    let repo = &opened.repo;
    crate::branches::refuse_track_with_paths(&args.branch)?;
    if let Some(new) = args.create.as_ref().or(args.force_create.as_ref()) {
        return Err(fatal(format!(
            "Cannot update paths and switch to branch '{new}' at the same time."
        )));
    }
    let source = match parsed {
        Parsed::Rev(target, _) => Some(target.tree),
        _ => None,
    };
    if let Parsed::Rev(target, _) = parsed {
        // git's `checkout_worktree`: the ref the argument names, the commit (or tree).
        args.checkout.filter_meta = gitpar::FilterMeta {
            ref_name: crate::names::dwim_ref(repo, &target.name),
            treeish: Some(target.commit.unwrap_or(target.tree)),
        };
    }
    if source.is_some() && (args.stage.get().is_some() || args.merge.given()) {
        return Err(StageArgs::refuse_tree());
    }
    restore_paths(
        opened,
        source,
        source.is_some(),
        true,
        args.overlay.resolve(true),
        (args.force, args.ignore_skip_worktree_bits),
        paths,
        &args.checkout,
        count_paths,
        args.stage.get(),
        args.merge.style(repo),
    )
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
