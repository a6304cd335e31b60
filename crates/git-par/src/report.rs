//! The one place where the engine's outcomes, notices and errors become git's words and exit
//! codes (the model is ripgrep's single printer): `error:`/`fatal:`/`warning:`/`hint:` lines as
//! git 2.47 writes them, 1 for a refused or partly failed update, 128 for what git dies of, 130
//! for an interruption. The commands call the engine and hand what comes back here.

use gitpar::checkout::Error as CheckoutError;
use gitpar::repo::notice::{Notice, Sink};
use gitpar::update::{Error as UpdateError, Outcome as UpdateOutcome};

use crate::branches::{advice_enabled, advise};
use crate::exit::{fatal, FATAL};

/// The sink the binary hands the engine: every notice printed as git prints it, when it
/// happens.
pub(crate) struct Printer;

impl Sink for Printer {
    fn notice(&self, notice: Notice) {
        print_notice(&notice);
    }
}

/// git's words for `notice`.
fn print_notice(notice: &Notice) {
    match notice {
        Notice::HookIgnored { path } => eprintln!(
            "hint: The '{}' hook was ignored because it's not set as executable.\n\
             hint: You can disable this warning with `git config advice.ignoredHook false`.",
            path.display()
        ),
        Notice::HookDied { path, signal } => {
            eprintln!("error: {} died of signal {signal}", path.display());
        }
        Notice::HookCannotRun { path, error } => {
            eprintln!("error: cannot run {}: {error}", path.display());
        }
        Notice::CancelledCherryPick => {
            eprintln!("warning: cancelling a cherry picking in progress")
        }
        Notice::CancelledRevert => eprintln!("warning: cancelling a revert in progress"),
        Notice::CouldNotRemove { path } => {
            eprintln!("error: could not remove '{}'", path.display());
        }
        Notice::AutostashSymref => eprintln!("error: autostash reference is a symref"),
        Notice::AutostashStored => eprintln!(
            "Autostash exists; creating a new stash entry.\n\
             Your changes are safe in the stash.\n\
             You can run \"git stash pop\" or \"git stash drop\" at any time."
        ),
        Notice::AutostashNotStored { oid } => eprintln!("error: cannot store {oid}"),
        Notice::OrigHeadNotUpdated { error } => eprintln!("error: {error}"),
        Notice::TrackingSetUp {
            branch,
            upstreams,
            rebasing,
        } => {
            if let [only] = upstreams.as_slice() {
                if *rebasing {
                    println!("branch '{branch}' set up to track '{only}' by rebasing.");
                } else {
                    println!("branch '{branch}' set up to track '{only}'.");
                }
            } else {
                println!("branch '{branch}' set up to track:");
                for u in upstreams {
                    println!("  {u}");
                }
            }
        }
        Notice::InheritNoRemote { branch } => {
            eprintln!("warning: asked to inherit tracking from '{branch}', but no remote is set")
        }
        Notice::InheritNoMerge { branch } => eprintln!(
            "warning: asked to inherit tracking from '{branch}', but no merge configuration is set"
        ),
        Notice::NotOwnUpstream { branch } => {
            eprintln!("warning: not setting branch '{branch}' as its own upstream");
        }
    }
}

/// How git words sparse checkout's warnings after an update, and when it says them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SparseWords {
    /// `unpack_trees` with porcelain messages (a safe `switch` or `checkout`, a merge's
    /// fast-forward): one list per kind (`display_warning_msgs`), before anything is removed or
    /// written, so before those steps' own messages.
    Porcelain,
    /// `unpack_trees` with plumbing messages (`reset_tree` of `checkout -f` and `switch
    /// --discard-changes`, `reset --hard`): one `error:` line per path as
    /// `apply_sparse_checkout` meets it, in index order, also before the removals and writes.
    Plumbing,
    /// `update_sparsity` (`sparse-checkout`): the lists once the work tree was updated.
    Sparsity,
}

impl SparseWords {
    /// The words of a two-way update: plumbing when it was forced (git's `reset_tree` and
    /// `reset --hard` do not set up porcelain messages), porcelain otherwise.
    pub(crate) fn of_update(force: bool) -> SparseWords {
        if force {
            SparseWords::Plumbing
        } else {
            SparseWords::Porcelain
        }
    }
}

/// What git says after an update that went through: sparse checkout's warnings where `words`
/// puts them, each path it could not remove or write (it still moves `HEAD`, and exits 1), and
/// the directories `sparse-checkout` left. With `GIT_PAR_TRACE`, also how much was written and
/// by how many writers (as clone and worktree add report it), after `git-par: full checkout`
/// when the work tree was empty and the update took the full checkout's path (so that tests
/// and users can tell which path ran).
pub(crate) fn update_outcome(outcome: &UpdateOutcome, words: SparseWords) {
    match words {
        SparseWords::Porcelain => sparse_lists(outcome),
        SparseWords::Plumbing => sparse_lines(outcome),
        SparseWords::Sparsity => {}
    }
    for k in &outcome.kept {
        eprintln!("warning: {k}");
    }
    for e in &outcome.errors {
        eprintln!("error: {e}");
    }
    if words == SparseWords::Sparsity {
        sparse_lists(outcome);
    }
    sparse_dirs_left(outcome);
    if std::env::var_os("GIT_PAR_TRACE").is_some() {
        if outcome.full_checkout {
            eprintln!("git-par: full checkout");
        }
        eprintln!(
            "git-par: {} files written, {} removed, {} writers",
            outcome.written, outcome.removed, outcome.workers
        );
    }
}

/// git's plumbing messages for the paths sparse checkout could not apply its patterns to: one
/// line per path, in index order (both lists are sorted by path), as `add_rejected_path` prints
/// them when no porcelain asked for lists.
fn sparse_lines(outcome: &UpdateOutcome) {
    let not_uptodate = outcome.sparse_not_uptodate.iter().map(|p| {
        (
            p,
            format!("error: Path '{p}' not uptodate; will not remove from working tree."),
        )
    });
    let orphaned = outcome.sparse_orphaned.iter().map(|p| {
        (
            p,
            format!("error: Path '{p}' already present; will not overwrite with sparse update."),
        )
    });
    let mut lines: Vec<_> = not_uptodate.chain(orphaned).collect();
    lines.sort_by(|a, b| a.0.cmp(b.0));
    for (_, line) in lines {
        eprintln!("{line}");
    }
}

/// git's `display_warning_msgs` for the paths sparse checkout could not apply its patterns to.
fn sparse_lists(outcome: &UpdateOutcome) {
    let lists = [
        (
            "The following paths are not up to date and were left despite sparse patterns:",
            &outcome.sparse_not_uptodate,
        ),
        (
            "The following paths are unmerged and were left despite sparse patterns:",
            &outcome.sparse_unmerged,
        ),
        (
            "The following paths were already present and thus not updated despite sparse patterns:",
            &outcome.sparse_orphaned,
        ),
    ];
    let mut shown = false;
    for (message, paths) in lists {
        if paths.is_empty() {
            continue;
        }
        shown = true;
        eprintln!("warning: {message}");
        for p in paths {
            eprintln!("\t{p}");
        }
        eprintln!();
    }
    if shown {
        eprintln!(
            "After fixing the above paths, you may want to run `git sparse-checkout reapply`."
        );
    }
}

/// git's `clean_tracked_sparse_directories` warnings for the directories it left.
fn sparse_dirs_left(outcome: &UpdateOutcome) {
    for left in &outcome.sparse_dirs_left {
        match left {
            gitpar::update::SparseDirLeft::Untracked(dir) => eprintln!(
                "warning: directory '{dir}' contains untracked files, but is not in the sparse-checkout cone"
            ),
            gitpar::update::SparseDirLeft::Failed(dir) => {
                eprintln!("warning: failed to remove directory '{dir}'")
            }
        }
    }
}

/// Which command's words an update's refusal is told in (git's `setup_unpack_trees_porcelain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Porcelain {
    /// `checkout`/`switch`/`reset`: "... by checkout:", "before you switch branches."
    Checkout,
    /// `merge` (and `pull`'s merge): "... by merge:", and "before you merge." when
    /// `advice.commitBeforeMerge` is on (`advice`).
    Merge {
        /// `advice.commitBeforeMerge`.
        advice: bool,
    },
}

/// An update's refusal or failure in git's words; git's exit code.
pub(crate) fn update_error(err: UpdateError) -> u8 {
    update_error_for(err, Porcelain::Checkout)
}

/// [`update_error`] in the words of `porcelain`'s command.
pub(crate) fn update_error_for(err: UpdateError, porcelain: Porcelain) -> u8 {
    let (verb, advice) = match porcelain {
        Porcelain::Checkout => ("checkout", Some("switch branches")),
        Porcelain::Merge { advice } => ("merge", advice.then_some("merge")),
    };
    match err {
        UpdateError::WouldLose {
            local,
            untracked,
            untracked_removed,
            untracked_deleted,
        } => {
            let lists = [
                &local[..],
                &untracked,
                &untracked_removed,
                &untracked_deleted,
            ];
            would_lose(lists, verb, advice);
            eprintln!("Aborting");
            1
        }
        UpdateError::Unmerged(paths) => {
            for p in &paths {
                println!("{p}: needs merge");
            }
            eprintln!("error: you need to resolve your current index first");
            1
        }
        UpdateError::SubmodulePathSymlink(message) => {
            eprintln!("error: {message}");
            128
        }
        UpdateError::Submodules(refused) => {
            submodule_refusals(&refused);
            eprintln!("error: Cannot update submodule:");
            for r in &refused {
                eprintln!("\t{}", r.path);
            }
            eprintln!();
            eprintln!("Aborting");
            1
        }
        UpdateError::NotUptodate(paths) => {
            for p in &paths {
                eprintln!("error: Entry '{p}' not uptodate. Cannot merge.");
            }
            FATAL
        }
        UpdateError::CwdInTheWay(path) => {
            eprintln!("error: Refusing to remove the current working directory:\n\t{path}\n");
            eprintln!("Aborting");
            1
        }
        UpdateError::Checkout(CheckoutError::Entries(errors)) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            1
        }
        UpdateError::Died {
            kept,
            errors,
            message,
        } => {
            for k in &kept {
                eprintln!("warning: {k}");
            }
            for e in &errors {
                eprintln!("error: {e}");
            }
            eprintln!("fatal: {message}");
            FATAL
        }
        UpdateError::Unrecorded { errors, source } => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            fatal(source)
        }
        UpdateError::Checkout(err @ CheckoutError::Filter { .. }) => {
            checkout_error(&err);
            FATAL
        }
        UpdateError::Checkout(CheckoutError::Interrupted) => {
            eprintln!("error: interrupted");
            crate::interrupt::EXIT_CODE
        }
        other => fatal(other),
    }
}

/// git's `unpack_trees` refusal to lose work, list by list: local changes that would be
/// overwritten, directories whose untracked files would go, untracked files that would be
/// overwritten or removed; each with the advice of `porcelain`'s command when it gives one.
fn would_lose(
    [local, untracked, untracked_removed, untracked_deleted]: [&[bstr::BString]; 4],
    verb: &str,
    advice: Option<&str>,
) {
    if !local.is_empty() {
        eprintln!(
            "error: Your local changes to the following files would be overwritten by {verb}:"
        );
        for p in local {
            eprintln!("\t{p}");
        }
        match advice {
            Some(advice) => {
                eprintln!("Please commit your changes or stash them before you {advice}.")
            }
            // git's message ends with the list's newline, and `error()` adds one.
            None => eprintln!(),
        }
    }
    if !untracked_removed.is_empty() {
        eprintln!("error: Updating the following directories would lose untracked files in them:");
        for p in untracked_removed {
            eprintln!("\t{p}");
        }
        eprintln!();
    }
    for (list, what) in [(untracked, "overwritten"), (untracked_deleted, "removed")] {
        if list.is_empty() {
            continue;
        }
        eprintln!("error: The following untracked working tree files would be {what} by {verb}:");
        for p in list {
            eprintln!("\t{p}");
        }
        match advice {
            Some(advice) => eprintln!("Please move or remove them before you {advice}."),
            None => eprintln!(),
        }
    }
}

/// What git's dry run of each refused submodule's update said (`submodule_move_head`), then
/// `Submodule '<path>' could not be updated.`; a nested refusal prints its own first.
fn submodule_refusals(refused: &[gitpar::update::SubmoduleRefused]) {
    use gitpar::update::SubmoduleRefusal;
    let not_uptodate = |paths: &[bstr::BString]| {
        for p in paths {
            eprintln!("error: Entry '{p}' not uptodate. Cannot merge.");
        }
    };
    for r in refused {
        match &r.reason {
            SubmoduleRefusal::DirtyIndex(_) => eprintln!("error: {}", r.reason),
            SubmoduleRefusal::MissingCommit(_) => eprintln!("fatal: {}", r.reason),
            SubmoduleRefusal::Update(e) => match e.as_ref() {
                UpdateError::WouldLose { local, .. } if !local.is_empty() => not_uptodate(local),
                UpdateError::NotUptodate(paths) => not_uptodate(paths),
                UpdateError::Submodules(nested) => submodule_refusals(nested),
                other => eprintln!("error: {other}"),
            },
        }
        eprintln!("error: Submodule '{}' could not be updated.", r.path);
    }
}

/// A checkout's failure (clone, `worktree add`) as git's lines.
pub(crate) fn checkout_error(err: &CheckoutError) {
    match err {
        CheckoutError::Interrupted => eprintln!("error: interrupted"),
        CheckoutError::Entries(errors) => {
            for e in errors {
                eprintln!("error: {e}");
            }
        }
        // git dies in its prefetch: a fatal message of its own.
        CheckoutError::PromisorFetch(_) => eprintln!("fatal: {err}"),
        // A required filter failed: git dies there.
        CheckoutError::Filter { errors, message } => {
            for e in errors {
                eprintln!("error: {e}");
            }
            eprintln!("fatal: {message}");
        }
        other => eprintln!("error: {other}"),
    }
}

/// A branch switch or reset that stopped, in git's words; git's exit code.
pub(crate) fn switch_error(repo: &gix::Repository, err: gitpar::switch::Error) -> u8 {
    use gitpar::repo::create_branch::Error as BranchError;
    use gitpar::switch::Error;
    match err {
        Error::Update(e) => update_error(e),
        // git's reset to the new tree stops at the first path it may not touch, in path order,
        // with the plumbing message (no list): `UNPACK_RESET_PROTECT_UNTRACKED`.
        Error::UntrackedInTheWay {
            untracked,
            untracked_removed,
        } => {
            let first_file = untracked.iter().min();
            let first_dir = untracked_removed.iter().min();
            match (first_file, first_dir) {
                (_, Some(d)) if first_file.is_none_or(|f| d < f) => {
                    eprintln!("error: Updating '{d}' would lose untracked files in it")
                }
                (Some(f), _) => eprintln!(
                    "error: Untracked working tree file '{f}' would be overwritten by merge."
                ),
                _ => {}
            }
            FATAL
        }
        Error::MergeIsGits => unreachable!("handed to git by the caller"),
        Error::Branch(BranchError::AmbiguousTracking { orig_ref, remotes }) => {
            eprintln!("fatal: not tracking: ambiguous information for ref '{orig_ref}'");
            if advice_enabled(repo, "ambiguousFetchRefspec") {
                let list: String = remotes.iter().map(|r| format!("  {r}\n")).collect();
                advise(&format!(
                    "There are multiple remotes whose fetch refspecs map to the remote\n\
                     tracking ref '{orig_ref}':\n{list}\n\
                     This is typically a configuration error.\n\n\
                     To support setting up tracking branches, ensure that\n\
                     different remotes' fetch refspecs map into different\n\
                     tracking namespaces."
                ));
            }
            FATAL
        }
        Error::Branch(BranchError::UpstreamNotWritten {
            branch,
            remote,
            srcs,
            source,
        }) => {
            eprintln!("error: {source}");
            eprintln!("error: unable to write upstream branch configuration");
            advise("\nAfter fixing the error cause you may try to fix up\nthe remote tracking information by invoking:");
            if let [only] = srcs.as_slice() {
                let prefix = remote.as_ref().map(|o| format!("{o}/")).unwrap_or_default();
                advise(&format!("  git branch --set-upstream-to={prefix}{only}"));
            } else {
                let r = remote.as_deref().unwrap_or(".");
                advise(&format!(
                    "  git config --add branch.\"{branch}\".remote {r}"
                ));
                for src in srcs {
                    advise(&format!(
                        "  git config --add branch.\"{branch}\".merge {src}"
                    ));
                }
            }
            1
        }
        other => fatal(other),
    }
}

/// A ref transaction the `reference-transaction` hook refused: git dies.
pub(crate) fn aborted(err: gitpar::repo::reftx::Aborted) -> u8 {
    fatal(err)
}
