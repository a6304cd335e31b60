//! `git par worktree add`: git registers the work tree, git-par checks it out.
//!
//! The bookkeeping of a linked work tree — `worktrees/<name>`, branch creation and tracking,
//! `-B`, `--guess-remote`, `--lock`, `--orphan`, the copied sparse-checkout patterns and
//! `config.worktree`, "Preparing worktree" — is git's: the user's arguments go to
//! `git worktree add --no-checkout` unchanged. Then git-par does what git's `add_worktree`
//! would have done next: the `git reset --hard` of the new work tree (written by the engine,
//! with the reset's `ORIG_HEAD`, reflog line and `HEAD is now at`), then `post-checkout`.
//!
//! Where nothing is to be checked out, git does it all: `--no-checkout` given, `--orphan`
//! (which git refuses together with `--no-checkout`), and a repository without any valid
//! branch (where git may infer `--orphan` itself); and where the engine cannot check out yet
//! (a repository gix cannot open, a partial clone, a sparse checkout). `-j N` is git-par's writer count (git's
//! `worktree add` has no `-j`) and is not passed on, nor are `--donor PATH` and `--[no-]reflink`:
//! the new work tree's clean files are cloned from a donor work tree where the filesystem can
//! (`gitpar::donor`), by default from the work tree the command runs in.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::checkout_args::CheckoutArgs;
use crate::exit::{fatal, FATAL};
use crate::gitopts;
use crate::{hooks, interrupt};

/// Run `git par worktree add ARGS` (the arguments after `add`).
pub(crate) fn add(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let parsed = gitopts::parse(&args, gitopts::WORKTREE_ADD);
    if parsed.help {
        crate::cli::print_help(&["worktree", "add"]);
        return Ok(());
    }
    let jobs = match parsed.value("jobs") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| {
                    fatal(format!(
                        "-j expects a number, not '{}'",
                        v.to_string_lossy()
                    ))
                })?,
        ),
    };
    let cwd = crate::platform::current_dir()
        .map_err(|e| fatal(format!("unable to get current working directory: {e}")))?;
    let no_reflink = parsed.flag("reflink") == Some(false);
    // The repository the command runs in, opened once (each open reads the configuration files
    // and refs again: a millisecond before git could start, and one more for the plan).
    let here = gix::discover_with_environment_overrides(".").ok();
    gitpar::sys::phase::mark("repository opened");
    let donor = match parsed.value("donor") {
        Some(path) => Some(donor_of(&cwd.join(path))?),
        None => here.as_ref().and_then(work_tree_of),
    };
    let args = parsed.without(&args, "jobs");
    let parsed = gitopts::parse(&args, gitopts::WORKTREE_ADD);
    let args = parsed.without(&args, "donor");
    let parsed = gitopts::parse(&args, gitopts::WORKTREE_ADD);
    let args = parsed.without(&args, "reflink");
    let parsed = gitopts::parse(&args, gitopts::WORKTREE_ADD);
    let ours = parsed.flag("checkout") != Some(false)
        && parsed.flag("orphan") != Some(true)
        && !parsed.unreadable
        && here.as_ref().is_some_and(engine_checks_out);
    let mut git_args: Vec<OsString> = vec!["worktree".into(), "add".into()];
    git_args.extend(args.iter().cloned());
    if ours {
        git_args.insert(2 + parsed.append_at(&args), "--no-checkout".into());
    }
    // The commit git will check out is planned while git sets the work tree up (the checkout
    // uses the plan only if it is of the tree the new HEAD has).
    let ahead = ours.then(|| {
        let target = parsed
            .positionals
            .get(1)
            .cloned()
            .unwrap_or_else(|| "HEAD".into());
        let repo = here.clone()?;
        // The plan is sent as soon as it is made, before the thread lets go of its repository
        // (its packs unmapped, its caches freed: a millisecond of git/git's checkout, which
        // waited for it when the thread was joined). The thread is not waited for.
        let (sent, plan) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("git-par plan".into())
            .spawn(move || {
                let _ = sent.send(plan_ahead(&repo, &target));
                drop(repo);
            })
            .ok()
            .map(|_| plan)
    });
    // The plan's copy is the only one left: its packs are unmapped when the plan is made, not
    // held (resident) through the checkout, which maps them again.
    drop(here);
    let status = crate::git::run_git(&git_args, None)?;
    gitpar::sys::phase::mark("git worktree add --no-checkout");
    // Taken once the new work tree is open, which it need not wait for.
    let planned = move || ahead.flatten().and_then(|plan| plan.recv().ok().flatten());
    if status != 0 || !ours {
        return if status == 0 { Ok(()) } else { Err(status) };
    }
    let Some(path) = parsed.positionals.first() else {
        return Err(fatal("cannot tell where git added the work tree"));
    };
    let path = cwd.join(path);
    let quiet = parsed.verbosity() < 0;
    check_out(
        &path,
        overrides,
        CheckoutArgs {
            jobs,
            quiet,
            donor,
            no_reflink,
            ..CheckoutArgs::default()
        },
        planned,
    )
}

/// The top of the work tree `path` names (`--donor PATH`): any directory of a non-bare
/// repository; the checkout checks that it is a work tree of this repository.
fn donor_of(path: &Path) -> Result<PathBuf, u8> {
    let repo = gix::discover(path).map_err(|_| {
        fatal(format!(
            "'{}' is not a git work tree (--donor)",
            path.display()
        ))
    })?;
    let Some(top) = repo.workdir() else {
        return Err(fatal(format!(
            "'{}' is a bare repository, not a work tree (--donor)",
            path.display()
        )));
    };
    Ok(top.to_owned())
}

/// The work tree of `repo` (the one the command runs in), the default donor; none in a bare
/// repository.
fn work_tree_of(repo: &gix::Repository) -> Option<PathBuf> {
    repo.workdir()
        .and_then(|w| crate::platform::canonicalize(w).ok())
}

/// The plan of the commit `target` names in the repository of the current directory, made
/// while git adds the work tree: what `git worktree add PATH [COMMIT-ISH]` checks out, unless
/// git's own choice differs (a branch named after PATH, say), in which case the checkout plans
/// again. Nothing is printed: a failure only means no plan ahead.
fn plan_ahead(repo: &gix::Repository, target: &std::ffi::OsStr) -> Option<gitpar::Planned> {
    let commit = repo
        .rev_parse_single(target.to_str()?)
        .ok()?
        .object()
        .ok()?
        .peel_to_commit()
        .ok()?;
    let tree = commit.tree_id().ok()?.detach();
    gitpar::sys::phase::mark("plan ahead: rev-parse");
    let opts = gitpar::Options::from_config(&repo.config_snapshot(), None);
    gitpar::sys::phase::mark("plan ahead: commit read");
    let planned = gitpar::plan_ahead(&repo.objects, tree, &opts).ok();
    gitpar::sys::phase::mark("plan ahead: tree walked");
    planned
}

/// Whether git-par checks the new work tree out, or leaves the whole command to git: a
/// repository gix cannot open (SHA-256; or none at all: git's to refuse), and one where git's
/// `can_use_local_refs` fails
/// (neither `HEAD` nor any branch names a commit: git may infer `--orphan`, which it refuses
/// with `--no-checkout`) go to git.
fn engine_checks_out(repo: &gix::Repository) -> bool {
    if repo.head_id().is_ok() {
        return true;
    }
    let Ok(refs) = repo.references() else {
        return false;
    };
    let Ok(branches) = refs.local_branches() else {
        return false;
    };
    branches.flatten().any(|mut r| r.peel_to_id().is_ok())
}

/// The checkout of the work tree git just added at `path`: the engine writes its `HEAD`, then
/// what git's `git reset --hard` child and `add_worktree` do after it. A failed checkout
/// removes the work tree and its administrative directory, as git's `remove_junk` does.
fn check_out(
    path: &Path,
    overrides: &[String],
    mut checkout: CheckoutArgs,
    planned: impl FnOnce() -> Option<gitpar::Planned>,
) -> Result<(), u8> {
    let opts = gix::open::Options::default()
        .config_overrides(overrides.iter().cloned())
        .with(gix::sec::Trust::Full);
    let wt_repo = gix::open_opts(path, opts).map_err(|e| {
        fatal(format!(
            "unable to open the new work tree '{}': {e}",
            path.display()
        ))
    })?;
    let Some(workdir) = wt_repo.workdir().map(Path::to_owned) else {
        return Err(fatal("the new work tree has no work tree"));
    };
    // An unborn HEAD: git's reset has nothing to write either.
    let Ok(commit) = wt_repo.head_id().map(gix::Id::detach) else {
        return Ok(());
    };
    // git's `reset --hard` child, which primes the cache-tree from the tree.
    checkout.prime_cache_tree = true;
    // Filters are told the branch HEAD is on (none when detached) and the commit.
    checkout.filter_meta = gitpar::FilterMeta {
        ref_name: crate::names::dwim_ref(&wt_repo, "HEAD").filter(|r| r.starts_with(b"refs/")),
        treeish: Some(commit),
    };
    let written = crate::engine::tree_of(&wt_repo, commit)
        .map_err(|msg| {
            eprintln!("fatal: {msg}");
        })
        .and_then(|tree| {
            crate::engine::run_checkout(&wt_repo, tree, &workdir, &checkout, planned())
                .map_err(|err| crate::report::checkout_error(&err))
        });
    if written.is_err() {
        remove_junk(&wt_repo, &workdir);
        return Err(
            if interrupt::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
                interrupt::EXIT_CODE
            } else {
                FATAL
            },
        );
    }
    // `git reset --hard` of the new work tree: ORIG_HEAD, the message, and the reflog line git's
    // ref backend writes for an update that changes nothing only through a symbolic HEAD.
    gitpar::repo::state::update_orig_head(&wt_repo, crate::hooks::env(), Some(commit))
        .map_err(crate::report::aborted)?;
    let symbolic = wt_repo.head_name().ok().flatten().is_some();
    let message = gitpar::repo::state::reset_reflog_message("updating HEAD", Some("HEAD"));
    if symbolic {
        if let Err(e) =
            gitpar::repo::branch::append_reflog(&wt_repo, "HEAD", Some(commit), commit, &message)
        {
            eprintln!("error: {e}");
        }
    }
    if !checkout.quiet {
        crate::state::print_new_head_line(&wt_repo, commit);
    }
    if let Some(donor) = &checkout.donor {
        carry_included(donor, &wt_repo, &workdir, &checkout);
    }
    // git runs the hook (which `--no-checkout` made it skip) from the new work tree, with the
    // repository it ran in.
    let main = crate::repo::open(overrides)?;
    let git_cwd = main
        .workdir
        .clone()
        .unwrap_or_else(|| crate::platform::current_dir().unwrap_or_default());
    let rc = hooks::after_worktree_add(&main.repo, git_cwd, path, commit);
    hooks::combine(Ok(()), rc)
}

/// The donor's ignored files that its `.worktreeinclude` names (build caches), carried into
/// the new work tree (`gitpar::carry`): cloned where the filesystem can, copied otherwise.
/// The work tree is made by then, so a failure is a warning; `GIT_PAR_TRACE` says what was
/// carried and what was not.
fn carry_included(donor: &Path, wt_repo: &gix::Repository, workdir: &Path, args: &CheckoutArgs) {
    let trace = std::env::var_os("GIT_PAR_TRACE").is_some();
    // Most donors have none: no repository opened for nothing (`carry` reads it safely).
    if std::fs::symlink_metadata(donor.join(".worktreeinclude")).is_err() {
        return;
    }
    let opened = gix::open_opts(
        donor,
        gix::open::Options::default().with(gix::sec::Trust::Full),
    );
    let (Ok(donor_repo), Ok(index)) = (opened, wt_repo.index_or_empty()) else {
        return;
    };
    // The checkout's own decision (`par.reflink`, `--no-reflink`).
    let reflink =
        crate::engine::engine_options(wt_repo, args).reflink == gitpar::donor::Reflink::Auto;
    let threads = args
        .jobs
        .and_then(|j| usize::try_from(j).ok())
        .filter(|&j| j > 0)
        .unwrap_or_else(|| gitpar::sys::cpus::online_cpus() * 2);
    match gitpar::carry::carry(&donor_repo, workdir, &index, reflink, threads) {
        Ok(carried) => {
            if trace {
                eprintln!(
                    "git-par: .worktreeinclude: {} files cloned, {} copied, {} symlinks, {} directories, {} not carried",
                    carried.cloned,
                    carried.copied,
                    carried.symlinks,
                    carried.dirs,
                    carried.skipped.len()
                );
                for (path, why) in &carried.skipped {
                    eprintln!("git-par: .worktreeinclude: not carried: {path}: {why}");
                }
            }
        }
        Err(err) => eprintln!("warning: files named by .worktreeinclude not carried: {err}"),
    }
}

/// git's `remove_junk` after a failed `add_worktree`: the new work tree and
/// `worktrees/<name>` go (the branch git created stays, as in git).
fn remove_junk(wt_repo: &gix::Repository, workdir: &Path) {
    let admin: PathBuf = wt_repo.git_dir().to_owned();
    let _ = std::fs::remove_dir_all(workdir);
    if admin.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("worktrees")) {
        let _ = std::fs::remove_dir_all(&admin);
    }
}
