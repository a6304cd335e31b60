//! `git par switch`: switch branches (or detach `HEAD`), the work tree updated by the engine's
//! two-way update, with git's refusals and messages.

use clap::Args;

use crate::checkout_args::CheckoutArgs;
use crate::hooks::open_repo;
use crate::option_groups::{merge_to_git, renormalizes, MergeArgs, RecurseArgs};
use crate::revision::{parse_branchname_arg, Words};
use crate::switching::{guess_tracking_branch, switch_target, Guarded};

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
    crate::switching::run(
        &opened,
        (head, args.target.as_deref()),
        Some(commit),
        args.force || args.discard_changes,
        merge,
        &checkout,
        "checkout",
    )
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
