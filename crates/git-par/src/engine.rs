//! The glue between the commands and the engine: its options from configuration and the command
//! line, and a checkout run with progress and `GIT_PAR_TRACE`.

use std::path::Path;

use gitpar::update::Policy;

use crate::checkout_args::{jobs, CheckoutArgs};
use crate::{interrupt, progress, repo};

/// The engine's options for a command: the configuration, `-j`, and what the filters are told.
pub(crate) fn engine_options(repo: &gix::Repository, args: &CheckoutArgs) -> gitpar::Options {
    let mut opts = gitpar::Options::from_config(&repo.config_snapshot(), jobs(args));
    opts.filter_meta = args.filter_meta.clone();
    opts.donor = args.donor.clone();
    // git's `startup_info->original_cwd`: where the command runs, below the top of the work tree.
    opts.cwd = repo
        .workdir()
        .and_then(|top| {
            let cwd = crate::platform::current_dir().ok()?;
            let top = crate::platform::canonicalize(top).unwrap_or_else(|_| top.to_owned());
            cwd.strip_prefix(top)
                .ok()
                .and_then(|p| crate::platform::git_path_bytes(p).ok())
                .map(|p| p.into_owned())
        })
        .filter(|p| !p.is_empty());
    if args.no_reflink {
        opts.reflink = gitpar::donor::Reflink::Never;
    }
    opts.prime_cache_tree = args.prime_cache_tree;
    opts
}

/// Run the engine's checkout with progress on stderr, and report errors the way git does.
pub(crate) fn run_checkout(
    repo: &gix::Repository,
    tree: gix::ObjectId,
    worktree: &Path,
    args: &CheckoutArgs,
    planned: Option<gitpar::Planned>,
) -> Result<gitpar::Outcome, gitpar::checkout::Error> {
    let opts = engine_options(repo, args);
    let progress = gitpar::Progress::default();
    let interrupt = &interrupt::INTERRUPTED;
    // A new repository's index, or GIT_INDEX_FILE: git's `worktree add` and `clone` write there.
    let index_path = repo::index_path(repo.git_dir(), Some(worktree), worktree);
    let result = progress::show_while(
        &progress,
        "Updating files",
        progress::mode(args),
        || {
            gitpar::checkout_planned(
                repo,
                tree,
                worktree,
                &index_path,
                &opts,
                &gitpar::Context {
                    progress: &progress,
                    interrupt,
                },
                planned,
            )
        },
        Result::is_ok,
    );
    if let Ok(outcome) = &result {
        if std::env::var_os("GIT_PAR_TRACE").is_some() {
            eprintln!(
                "git-par: {} files, {} writers, {} blobs streamed",
                outcome.entries, outcome.workers, outcome.streamed
            );
            if let Some(donor) = &outcome.donor {
                trace_donor(donor);
            }
        }
    }
    result
}

/// `GIT_PAR_TRACE`: what the donor gave: files cloned, and why the others were written.
fn trace_donor(donor: &gitpar::donor::Report) {
    let path = donor.path.display();
    if let Some(off) = &donor.off {
        eprintln!("git-par: donor {path}: nothing cloned: {off}");
        return;
    }
    let written: usize = donor.written.iter().map(|(_, n)| n).sum();
    let why: Vec<String> = donor
        .written
        .iter()
        .map(|(w, n)| format!("{n} {}", w.describe()))
        .collect();
    eprintln!(
        "git-par: donor {path}: {} files cloned, {written} written{}",
        donor.cloned,
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join(", "))
        }
    );
    if let Some(failure) = &donor.failure {
        eprintln!("git-par: donor {path}: a clone failed: {failure}");
    }
}

/// The tree of `commit`, with the engine's error as text (`gitpar::switch::tree_of`).
pub(crate) fn tree_of(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> Result<gix::ObjectId, String> {
    gitpar::switch::tree_of(repo, commit).map_err(|e| e.to_string())
}

/// The engine's options for an update of `policy` (`-j`, config, `--recurse-submodules`,
/// `--no-overwrite-ignore`).
pub(crate) fn update_options(
    repo: &gix::Repository,
    args: &CheckoutArgs,
    policy: Policy,
) -> gitpar::Options {
    let config = repo.config_snapshot();
    let mut opts = engine_options(repo, args);
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
