//! `git-par`: the command-line front of the git-par engine, run as `git par <command>`.
//!
//! The binary is thin: it parses arguments, resolves configuration, shows progress the way git
//! does and turns the library's errors into git's messages and exit codes. The work happens in
//! the `gitpar` library.

mod bench;
mod branches;
mod clone;
mod config_env;
mod gitopts;
mod hooks;
mod identity;
mod interrupt;
mod merge;
mod patch;
mod pathspec_file;
mod progress;
mod pull;
mod repo;
mod report;
mod revision;
mod sparse_checkout;
mod state;
mod status;
mod switch;
mod trace2;
mod transparent;
mod unborn;
mod worktree;

use std::ffi::OsString;
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
    /// Clone with git (`git clone --no-checkout`, every option of git's), then check out in
    /// parallel.
    #[command(
        override_usage = "git par [-c checkout.workers=N] clone [git clone's options] <repository> [<directory>]",
        long_about = "Clone a repository: `git clone --no-checkout` with these arguments (every \
                      option and every kind of URL git clone takes; -j/--jobs is git's, for \
                      submodules), then git-par checks HEAD out in parallel and runs post-checkout \
                      and, with --recurse-submodules, `git submodule update`. git-par's writer \
                      threads: -c checkout.workers=N (before `clone`) or configuration."
    )]
    Clone(PassThrough),
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
    /// Show the working tree status (like `git status`), the work tree checked in parallel.
    #[command(
        override_usage = "git par status [-s | --short | --porcelain[=v1|v2] | --long] [-b] [-z] [-u[<mode>]] [--ignored[=<mode>]] [--] [<pathspec>...]"
    )]
    Status(PassThrough),
    /// Refresh the index's stat data in parallel (like `git update-index --refresh`).
    Refresh(RefreshArgs),
    /// Change which files a sparse checkout has (like `git sparse-checkout`), the work tree
    /// updated in parallel.
    #[command(
        name = "sparse-checkout",
        override_usage = "git par sparse-checkout (init | list | set | add | reapply | disable | check-rules) [<options>]"
    )]
    SparseCheckout(PassThrough),
    /// Measure git-par against git: interleaved runs on a built-in synthetic repository (or yours).
    Bench(bench::BenchArgs),
    /// Fast-forward or confirm "Already up to date." with a parallel work tree update (like
    /// `git merge`); every other merge is git's.
    #[command(override_usage = "git par merge [git merge's options] [<commit>...]")]
    Merge(PassThrough),
    /// Fetch with git, then fast-forward in parallel (like `git pull`); rebases and real
    /// merges are git's.
    #[command(override_usage = "git par pull [git pull's options] [<repository> [<refspec>...]]")]
    Pull(PassThrough),
    /// Make git-par stand in for git: a link named `git` in DIR, and the PATH line to use.
    #[command(
        long_about = "Make a link named `git` to git-par in DIR (created if missing) and print the \
                      line that puts DIR first on PATH. Invoked as `git`, git-par runs the \
                      commands it owns (checkout, switch, restore, reset --hard, clone, worktree \
                      add, status, update-index --refresh) and hands every other call to the real \
                      git ($GIT_PAR_REAL_GIT, else the next git on PATH) unchanged."
    )]
    Shim {
        /// The directory for the link.
        dir: PathBuf,
    },
}

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
    progress: bool,
    /// Do not report progress.
    #[arg(long = "no-progress", overrides_with = "progress")]
    no_progress: bool,
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

/// `git par refresh`'s options.
#[derive(Args, Debug)]
struct RefreshArgs {
    /// Do not list the changed paths nor fail because of them (`update-index -q`).
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
}

/// The arguments of a command git-par hands to git first (`clone`, `worktree add`): every option
/// git takes, read by `gitopts` as git reads them and passed on unchanged.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
struct PassThrough {
    /// git's options and arguments, as for git.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "ARGS"
    )]
    args: Vec<OsString>,
}

#[derive(Subcommand, Debug)]
enum WorktreeCommand {
    /// Create a linked work tree with git (`git worktree add --no-checkout`, every option of
    /// git's), then check it out in parallel.
    #[command(
        override_usage = "git par worktree add [-j N] [git worktree add's options] <path> [<commit-ish>]",
        long_about = "Create a linked work tree: `git worktree add --no-checkout` with these \
                      arguments (every option of `git worktree add`: -b, -B, --detach, --orphan, \
                      --lock [--reason], --track, --guess-remote, -f, -q, --no-checkout), then \
                      git-par checks the new HEAD out in parallel and runs post-checkout. \
                      -j N sets git-par's writer threads (else checkout.workers)."
    )]
    Add(PassThrough),
}

/// Allocations of 1 MiB and more are mapped on their own and given back when freed, always:
/// glibc raises its threshold for that to the size of any mapped block freed (up to 32 MiB),
/// after which the big vectors of a large checkout (a million entries' plan, scan and index,
/// tens of MiB each) came from the heap, stayed resident once freed and were copied when they
/// grew, instead of being moved by `mremap`. A fixed threshold turns that adjustment off.
fn fixed_mmap_threshold() {
    // SAFETY: mallopt only sets a parameter of glibc's allocator, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn main() -> ExitCode {
    // The clock of GIT_PAR_TRACE_PERF starts here.
    gitpar::sys::phase::mark("main");
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // Run as `git` (a link first on PATH): what git-par does not own goes to git by exec.
    let transparent = transparent::invoked_as_git(&argv0);
    if transparent {
        match transparent::route(args) {
            Ok(ours) => args = ours,
            Err(code) => return ExitCode::from(code),
        }
    }
    let _ = OWN_ARGS.set(args.clone());
    fixed_mmap_threshold();
    // `-p/--patch` is git's interactive loop: hand the call to git unchanged (README).
    if let Some(git_args) = patch::delegated(&args) {
        let err = patch::exec_git(&git_args);
        return ExitCode::from(fatal(format!("cannot run git: {err}")));
    }
    let program = if transparent { "git-par".into() } else { argv0 };
    let args = patch::end_of_options(args);
    let cli = Cli::parse_from(std::iter::once(program).chain(args));
    interrupt::install();
    hooks::run_post_index_change();
    if matches!(
        cli.command,
        Command::Clone(_)
            | Command::Worktree(_)
            | Command::Switch(_)
            | Command::Checkout(_)
            | Command::Reset(_)
            | Command::Merge(_)
            | Command::Pull(_)
    ) {
        // These write reflogs, whose times name the local offset: the first look at the system
        // time zone lists the whole zoneinfo database (jiff, under gix-date: a millisecond),
        // which is done here beside the operation instead of on its sequential end. The zone
        // is cached for the process.
        let _ = std::thread::Builder::new()
            .name("git-par tz".into())
            .spawn(|| {
                let _ = gix::date::Time::now_local_or_utc();
            });
    }
    // git's default identity first, so that any configured one (or `-c`) takes precedence.
    let mut overrides = identity::fallback_overrides();
    overrides.extend(config_env::from_git_config_parameters());
    overrides.extend(cli.config.iter().cloned());
    // The processes git-par starts (hooks) see `-c` as git's children do.
    config_env::export(&cli.config);
    let result = match cli.command {
        Command::Clone(args) => clone::clone(args.args, &overrides),
        Command::Worktree(WorktreeCommand::Add(args)) => worktree::add(args.args, &overrides),
        Command::Switch(args) => switch::switch(args, &overrides),
        Command::Checkout(args) => switch::checkout(args, &overrides),
        Command::Reset(args) => switch::reset(args, &overrides),
        Command::Restore(args) => switch::restore(args, &overrides),
        Command::Status(args) => status::status(args.args, &overrides),
        Command::Refresh(args) => status::refresh(args.quiet, &overrides),
        Command::SparseCheckout(args) => sparse_checkout::run(args.args, &overrides),
        Command::Merge(args) => merge::merge(args.args, &overrides),
        Command::Pull(args) => pull::pull(args.args, &overrides),
        Command::Bench(args) => bench::run(args),
        Command::Shim { dir } => transparent::shim(&dir),
    };
    // git waits for its long-running filters when it exits.
    gitpar::finish_filters();
    gitpar::sys::phase::mark("done");
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => ExitCode::from(code),
    }
}

/// git-par's own arguments (after the program name): the command line, or, run as `git`, what
/// the routing made of it (`transparent::route`: git's global options applied and taken out).
static OWN_ARGS: std::sync::OnceLock<Vec<OsString>> = std::sync::OnceLock::new();

/// The arguments git-par runs with (see [`OWN_ARGS`]): what a command handed whole to git passes
/// on, from the directory and environment git-par runs in.
pub(crate) fn own_args() -> Vec<OsString> {
    OWN_ARGS
        .get()
        .cloned()
        .unwrap_or_else(|| std::env::args_os().skip(1).collect())
}

/// Print `fatal: <msg>` and return git's exit code for it.
pub(crate) fn fatal(msg: impl std::fmt::Display) -> u8 {
    eprintln!("fatal: {msg}");
    FATAL
}

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

/// The engine's options for a command: the configuration, `-j`, and what the filters are told.
pub(crate) fn engine_options(repo: &gix::Repository, args: &CheckoutArgs) -> gitpar::Options {
    let mut opts = gitpar::Options::from_config(&repo.config_snapshot(), jobs(args));
    opts.filter_meta = args.filter_meta.clone();
    opts.donor = args.donor.clone();
    // git's `startup_info->original_cwd`: where the command runs, below the top of the work tree.
    opts.cwd = repo
        .workdir()
        .and_then(|top| {
            let cwd = std::env::current_dir().ok()?;
            let top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_owned());
            cwd.strip_prefix(top)
                .ok()
                .and_then(|p| gix::path::into_bstr(p).ok())
                .map(|p| p.into_owned())
        })
        .filter(|p| !p.is_empty());
    if args.no_reflink {
        opts.reflink = gitpar::donor::Reflink::Never;
    }
    opts.prime_cache_tree = args.prime_cache_tree;
    opts
}

/// The full name of the ref `name` stands for, as git's `dwim_ref` finds it: `main` is
/// `refs/heads/main`, `origin/x` `refs/remotes/origin/x`, and a symbolic ref is followed to the
/// ref it points to (`HEAD` is the branch it is on, or `HEAD` itself when detached). `None` if
/// there is no such ref, or it points to a branch yet to be born.
pub(crate) fn dwim_ref(repo: &gix::Repository, name: &str) -> Option<bstr::BString> {
    let mut r = repo.try_find_reference(name).ok().flatten()?;
    // git follows up to five levels of symbolic refs.
    for _ in 0..5 {
        let next = match r.target() {
            gix::refs::TargetRef::Object(_) => return Some(r.name().as_bstr().to_owned()),
            gix::refs::TargetRef::Symbolic(next) => next.to_owned(),
        };
        r = repo.try_find_reference(next.as_ref()).ok().flatten()?;
    }
    None
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

/// Run `git ARGS` with git-par's standard streams (git's output and errors are the user's),
/// in the current directory or, with `at = (dir, git_dir)`, in `dir` with `GIT_DIR=git_dir`.
/// Returns git's exit code (128 + the signal for a killed git); `Err` when git cannot start.
pub(crate) fn run_git(args: &[OsString], at: Option<(&Path, &Path)>) -> Result<u8, u8> {
    use std::os::unix::process::ExitStatusExt;
    let mut cmd = gitpar::git_command();
    cmd.args(args);
    if let Some((dir, git_dir)) = at {
        cmd.current_dir(dir).env("GIT_DIR", git_dir);
    }
    let status = cmd
        .status()
        .map_err(|e| fatal(format!("cannot run git: {e}")))?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(FATAL),
        (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(FATAL),
        (None, None) => FATAL,
    })
}

/// Print the help of the subcommand at `path` (`["worktree", "add"]`): the commands whose
/// arguments go to git read `-h`/`--help` themselves.
pub(crate) fn print_help(path: &[&str]) {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let mut sub = &mut cmd;
    for name in path {
        let Some(next) = sub.find_subcommand_mut(name) else {
            return;
        };
        sub = next;
    }
    let _ = sub.print_long_help();
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
