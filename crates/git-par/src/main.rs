//! `git-par`: the command-line front of the git-par engine, run as `git par <command>`.
//!
//! The binary is thin: it parses arguments, resolves configuration, shows progress the way git
//! does and turns the library's errors into git's messages and exit codes. The work happens in
//! the `gitpar` library.

mod bench;
mod branches;
mod config_env;
mod hooks;
mod identity;
mod interrupt;
mod patch;
mod pathspec_file;
mod progress;
mod reftx;
mod repo;
mod revision;
mod state;
mod switch;
mod unborn;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// Exit code git uses for `fatal:` errors.
pub(crate) const FATAL: u8 = 128;

#[derive(Parser, Debug)]
#[command(
    name = "git-par",
    bin_name = "git par",
    version,
    about = "Parallel checkout for git: clone and worktree add, written by threads under one memory budget",
    propagate_version = true
)]
struct Cli {
    /// Set a configuration value for this run, like `git -c name=value`.
    #[arg(short = 'c', value_name = "NAME=VALUE", global = false, action = clap::ArgAction::Append)]
    config: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Clone a local repository and check it out in parallel (like `git clone --local`).
    Clone(CloneArgs),
    /// Manage linked work trees.
    #[command(subcommand)]
    Worktree(WorktreeCommand),
    /// Switch branches, updating the work tree in parallel (like `git switch`).
    Switch(switch::SwitchArgs),
    /// Switch branches or detach HEAD, updating the work tree in parallel (like `git checkout <rev>`).
    Checkout(switch::CheckoutCmdArgs),
    /// Restore work tree files (and with --staged, index entries) from the index or a tree.
    Restore(switch::RestoreArgs),
    /// Reset HEAD, index and work tree (`--hard` only), writing in parallel.
    Reset(switch::ResetArgs),
    /// Measure git-par against git: interleaved runs on a built-in synthetic repository (or yours).
    Bench(bench::BenchArgs),
}

/// Options every checkout-running command shares.
#[derive(Args, Debug)]
pub(crate) struct CheckoutArgs {
    /// Number of writer threads (overrides `checkout.workers`; < 1 means one per CPU).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub(crate) jobs: Option<i64>,
    /// Do not report progress.
    #[arg(short = 'q', long = "quiet")]
    pub(crate) quiet: bool,
    /// `--[no-]recurse-submodules` of the commands that take it (`switch::RecurseArgs`);
    /// `None`: `submodule.recurse` decides.
    #[arg(skip)]
    pub(crate) recurse_submodules: Option<bool>,
    /// `switch`/`checkout --no-overwrite-ignore` (set from `branches::BranchOpts`): ignored
    /// files in the way refuse the update like untracked ones. Not an option of its own here,
    /// since `clone`, `restore` and `reset` have no such option in git.
    #[arg(skip)]
    pub(crate) preserve_ignored: bool,
}

#[derive(Args, Debug)]
struct CloneArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Do not check out HEAD after the clone.
    #[arg(short = 'n', long = "no-checkout")]
    no_checkout: bool,
    /// Check out this branch (or tag, detached) instead of the source's HEAD.
    #[arg(short = 'b', long = "branch", value_name = "BRANCH")]
    branch: Option<String>,
    /// The repository to clone: a local path or a file:// URL.
    source: String,
    /// The directory to create (default: named after the source).
    directory: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum WorktreeCommand {
    /// Create a linked work tree and check it out in parallel (like `git worktree add`).
    Add(WorktreeAddArgs),
}

#[derive(Args, Debug)]
struct WorktreeAddArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Detach HEAD in the new work tree.
    #[arg(short = 'd', long = "detach")]
    detach: bool,
    /// Create a new branch with this name, starting at COMMIT-ISH.
    #[arg(short = 'b', value_name = "NEW")]
    new_branch: Option<String>,
    /// Where to create the work tree.
    path: PathBuf,
    /// What to check out (default: HEAD, or the branch named after PATH).
    commit_ish: Option<String>,
}

fn main() -> ExitCode {
    // `-p/--patch` is git's interactive loop: hand the call to git unchanged (README).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(git_args) = patch::delegated(&args) {
        let err = patch::exec_git(&git_args);
        return ExitCode::from(fatal(format!("cannot run git: {err}")));
    }
    let cli = Cli::parse();
    interrupt::install();
    // git's default identity first, so that any configured one (or `-c`) takes precedence.
    let mut overrides = identity::fallback_overrides();
    overrides.extend(config_env::from_git_config_parameters());
    overrides.extend(cli.config.iter().cloned());
    // The processes git-par starts (hooks) see `-c` as git's children do.
    config_env::export(&cli.config);
    let result = match cli.command {
        Command::Clone(args) => clone(args, &overrides),
        Command::Worktree(WorktreeCommand::Add(args)) => worktree_add(args, &overrides),
        Command::Switch(args) => switch::switch(args, &overrides),
        Command::Checkout(args) => switch::checkout(args, &overrides),
        Command::Reset(args) => switch::reset(args, &overrides),
        Command::Restore(args) => switch::restore(args, &overrides),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => ExitCode::from(code),
    }
}

/// Print `fatal: <msg>` and return git's exit code for it.
pub(crate) fn fatal(msg: impl std::fmt::Display) -> u8 {
    eprintln!("fatal: {msg}");
    FATAL
}

pub(crate) fn jobs(args: &CheckoutArgs) -> Option<usize> {
    args.jobs.map(|n| usize::try_from(n).unwrap_or(0))
}

/// Run the engine's checkout with progress on stderr, and report errors the way git does.
fn run_checkout(
    repo: &gix::Repository,
    tree: gix::ObjectId,
    worktree: &Path,
    args: &CheckoutArgs,
) -> Result<gitpar::Outcome, gitpar::checkout::Error> {
    let opts = gitpar::Options::from_config(&repo.config_snapshot(), jobs(args));
    let progress = gitpar::Progress::default();
    let interrupt = &interrupt::INTERRUPTED;
    // A new repository's index, or GIT_INDEX_FILE: git's `worktree add` and `clone` write there.
    let index_path = repo::index_path(repo.git_dir(), Some(worktree), worktree);
    let result = progress::show_while(
        &progress,
        "Updating files",
        !args.quiet,
        || {
            gitpar::checkout(
                repo,
                tree,
                worktree,
                &index_path,
                &opts,
                &progress,
                interrupt,
            )
        },
        Result::is_ok,
    );
    if let Ok(outcome) = &result {
        if !outcome.collisions.is_empty() {
            eprintln!(
                "warning: the following paths have collided (e.g. case-sensitive paths\n\
                 on a case-insensitive filesystem) and only one from the same\n\
                 colliding group is in the working tree:"
            );
            for path in &outcome.collisions {
                eprintln!("  '{path}'");
            }
        }
    }
    result
}

/// Print a checkout error as git's `error:` lines.
fn report_checkout_error(err: &gitpar::checkout::Error) {
    match err {
        gitpar::checkout::Error::Interrupted => eprintln!("error: interrupted"),
        gitpar::checkout::Error::Entries(errors) => {
            for e in errors {
                eprintln!("error: {e}");
            }
        }
        other => eprintln!("error: {other}"),
    }
}

pub(crate) fn tree_of(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> Result<gix::ObjectId, String> {
    repo.find_commit(commit)
        .map_err(|e| format!("unable to read commit {commit}: {e}"))?
        .tree_id()
        .map(gix::Id::detach)
        .map_err(|e| format!("unable to read the tree of {commit}: {e}"))
}

fn clone(args: CloneArgs, overrides: &[String]) -> Result<(), u8> {
    let destination = match &args.directory {
        Some(d) => d.clone(),
        None => PathBuf::from(humanish(&args.source)),
    };
    let existed = destination.exists();
    if !args.checkout.quiet {
        eprintln!("Cloning into '{}'...", destination.display());
    }
    let req = gitpar::clone::Request {
        source: args.source.clone(),
        destination: destination.clone(),
        branch: args.branch.clone(),
        config_overrides: overrides.to_vec(),
    };
    let prepared = match gitpar::clone::prepare(&req) {
        Ok(p) => p,
        Err(err) => {
            let refused_before_creating = matches!(
                err,
                gitpar::clone::Error::DestinationExists(_)
                    | gitpar::clone::Error::NoSource(_)
                    | gitpar::clone::Error::UnsupportedUrl(_)
            );
            if !refused_before_creating {
                remove_clone_junk(&destination, existed);
            }
            return Err(fatal(err));
        }
    };
    if !args.checkout.quiet {
        eprintln!("done.");
    }
    let Some(commit) = prepared.commit else {
        eprintln!("warning: You appear to have cloned an empty repository.");
        return Ok(());
    };
    if args.no_checkout {
        return Ok(());
    }
    let repo = prepared.repo;
    let tree = tree_of(&repo, commit).map_err(fatal)?;
    let Some(workdir) = repo.workdir().map(Path::to_owned) else {
        return Err(fatal("the new repository has no work tree"));
    };
    if let Err(err) = run_checkout(&repo, tree, &workdir, &args.checkout) {
        report_checkout_error(&err);
        if matches!(err, gitpar::checkout::Error::Interrupted) {
            return Err(interrupt::EXIT_CODE);
        }
        eprintln!("fatal: unable to checkout working tree");
        eprintln!(
            "warning: Clone succeeded, but checkout failed.\n\
             You can inspect what was checked out with 'git status'\n\
             and retry with 'git restore --source=HEAD :/'\n"
        );
        return Err(FATAL);
    }
    // git's `err |= run_hooks_l("post-checkout", null, HEAD, "1")`.
    hooks::combine(Ok(()), hooks::after_clone(&repo, &workdir, commit))
}

/// Remove what a failed clone created, as git does: the whole directory if we made it, its
/// contents if it existed (empty) before.
fn remove_clone_junk(destination: &Path, existed: bool) {
    if !existed {
        let _ = std::fs::remove_dir_all(destination);
    } else if let Ok(entries) = std::fs::read_dir(destination) {
        for entry in entries.flatten() {
            let p = entry.path();
            let _ = if p.is_dir() && !p.is_symlink() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// The directory name git derives from a clone source: its last component without `.git`.
fn humanish(source: &str) -> String {
    let trimmed = source.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/.git").unwrap_or(trimmed);
    let base = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    let base = base.strip_suffix(".git").unwrap_or(base);
    if base.is_empty() {
        "repo".into()
    } else {
        base.to_owned()
    }
}

fn worktree_add(args: WorktreeAddArgs, overrides: &[String]) -> Result<(), u8> {
    let repo = repo::open(overrides)?.repo;
    // git's guess of a remote-tracking branch (`worktree add PATH NAME`, `worktree.guessRemote`).
    let (commit_ish, new_branch) = branches::worktree_dwim(
        &repo,
        &args.path,
        args.commit_ish.clone(),
        args.new_branch.clone(),
        args.detach,
    );
    let req = gitpar::worktree::Request {
        path: args.path.clone(),
        commit_ish,
        new_branch,
        detach: args.detach,
    };
    let prepared = gitpar::worktree::prepare(&repo, &req, overrides).map_err(fatal)?;
    // The upstream `git branch NEW START` sets up for the new branch (`branch.autoSetupMerge`).
    if let gitpar::worktree::HeadKind::NewBranch(b) = &prepared.head {
        let start = req.commit_ish.as_deref();
        if let Err(code) = branches::worktree_track(&repo, b, start, args.checkout.quiet) {
            gitpar::worktree::remove_junk(&prepared);
            return Err(code);
        }
    }
    if !args.checkout.quiet {
        let what = match &prepared.head {
            gitpar::worktree::HeadKind::NewBranch(b) => format!("new branch '{b}'"),
            gitpar::worktree::HeadKind::Existing(b) => format!("checking out '{b}'"),
            gitpar::worktree::HeadKind::Detached => {
                format!("detached HEAD {}", short(&repo, prepared.commit))
            }
        };
        eprintln!("Preparing worktree ({what})");
    }
    let wt_repo = &prepared.repo;
    let tree = match tree_of(wt_repo, prepared.commit) {
        Ok(t) => t,
        Err(msg) => {
            gitpar::worktree::remove_junk(&prepared);
            return Err(fatal(msg));
        }
    };
    if let Err(err) = run_checkout(wt_repo, tree, &prepared.path, &args.checkout) {
        report_checkout_error(&err);
        gitpar::worktree::remove_junk(&prepared);
        if matches!(err, gitpar::checkout::Error::Interrupted) {
            return Err(interrupt::EXIT_CODE);
        }
        return Err(FATAL);
    }
    gitpar::worktree::finish(&prepared).map_err(fatal)?;
    if !args.checkout.quiet {
        let subject = wt_repo
            .find_commit(prepared.commit)
            .ok()
            .and_then(|c| c.message().ok().map(|m| m.summary().to_string()))
            .unwrap_or_default();
        println!(
            "HEAD is now at {} {subject}",
            short(wt_repo, prepared.commit)
        );
    }
    // git runs the hook after the work tree is complete; its status is the command's.
    let git_cwd = repo.workdir().map(Path::to_owned);
    let git_cwd = git_cwd.unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
    let rc = hooks::after_worktree_add(&repo, git_cwd, &prepared.path, prepared.commit);
    hooks::combine(Ok(()), rc)
}

/// A path as git prints it with `core.quotePath` (the default): bytes outside printable ASCII,
/// `"` and `\\` make git quote the path and escape them (octal for non-ASCII).
pub(crate) fn quote_path(path: &bstr::BStr) -> String {
    let needs = path
        .iter()
        .any(|&b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\');
    if !needs {
        return path.to_string();
    }
    let mut out = String::from("\"");
    for &b in path.iter() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// An abbreviated object id, as git prints it (7 hex digits, longer if ambiguous).
pub(crate) fn short(repo: &gix::Repository, id: gix::ObjectId) -> String {
    use gix::prelude::ObjectIdExt;
    id.attach(repo)
        .shorten()
        .map_or_else(|_| id.to_hex_with_len(7).to_string(), |p| p.to_string())
}
