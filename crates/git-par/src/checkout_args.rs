//! The options every checkout-running command shares (`-j`, `-q`, `--[no-]progress`), and what
//! a command sets for the engine beside them.

use std::path::PathBuf;

use clap::Args;

/// Options every checkout-running command shares.
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct CheckoutArgs {
    /// Number of writer threads (overrides `checkout.workers`; < 1 means one per CPU).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub(crate) jobs: Option<i64>,
    /// Do not report progress.
    #[arg(short = 'q', long = "quiet")]
    pub(crate) quiet: bool,
    /// Report progress even when standard error is no terminal (and with --quiet).
    #[arg(long = "progress", overrides_with = "no_progress")]
    pub(crate) progress: bool,
    /// Do not report progress.
    #[arg(long = "no-progress", overrides_with = "progress")]
    pub(crate) no_progress: bool,
    /// What long-running filters are told about the checkout (`ref=`, `treeish=`): set by the
    /// command from what it checks out.
    #[arg(skip)]
    pub(crate) filter_meta: gitpar::FilterMeta,
    /// `--[no-]recurse-submodules` of the commands that take it (`switch::RecurseArgs`);
    /// `None`: `submodule.recurse` decides.
    #[arg(skip)]
    pub(crate) recurse_submodules: Option<bool>,
    /// `switch`/`checkout --no-overwrite-ignore` (set from `branches::BranchOpts`): ignored
    /// files in the way refuse the update like untracked ones. Not an option of its own here,
    /// since `clone`, `restore` and `reset` have no such option in git.
    #[arg(skip)]
    pub(crate) preserve_ignored: bool,
    /// `switch --discard-changes` without `--force`: the forced update protects untracked
    /// files where the index has no entry ([`gitpar::Options::protect_untracked`]).
    #[arg(skip)]
    pub(crate) protect_untracked: bool,
    /// `worktree add`'s donor work tree (`--donor`, or the work tree it runs in), whose clean
    /// files the checkout clones where the filesystem can.
    #[arg(skip)]
    pub(crate) donor: Option<PathBuf>,
    /// `worktree add --no-reflink`: write every file, clone none (`par.reflink=false`).
    #[arg(skip)]
    pub(crate) no_reflink: bool,
    /// `worktree add`: the new index's cache-tree records the checked-out tree's own ids, as the
    /// `reset --hard` git's `worktree add` runs primes them ([`gitpar::Options::prime_cache_tree`]).
    #[arg(skip)]
    pub(crate) prime_cache_tree: bool,
}

/// `-j N` as a number of writer threads (`< 1`: one per CPU, the engine's 0).
pub(crate) fn jobs(args: &CheckoutArgs) -> Option<usize> {
    args.jobs.map(|n| usize::try_from(n).unwrap_or(0))
}

impl CheckoutArgs {
    /// `--progress` (true) or `--no-progress` (false), the last one given.
    pub(crate) fn progress_flag(&self) -> Option<bool> {
        match (self.progress, self.no_progress) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}
