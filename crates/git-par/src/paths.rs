//! Paths restored from the index or a tree, as `checkout [<tree-ish>] -- <paths>` and `restore`
//! share it: the pathspecs as git reads them, the engine's restore with progress, and git's
//! warnings, errors and exit status.

use crate::checkout_args::CheckoutArgs;
use crate::exit::fatal;
use crate::repo::Opened;
use crate::{progress, report};

/// The exit status of a path checkout or restore that could not write a path: git's
/// `checkout_paths` returns the -1 of `checkout_entry`.
pub(crate) const ENTRY_FAILED: u8 = 255;

/// git's `checkout_paths` status from the paths it could not write: -1 (255) when
/// `checkout_entry` failed on one; else the number of paths a delayed filter left unfiltered
/// (`finish_delayed_checkout`'s `errs |= dco->paths.nr`); 0 when none failed.
pub(crate) fn entries_status(errors: &[gitpar::checkout::EntryError]) -> u8 {
    let delayed = errors.iter().filter(|e| e.is_undelivered()).count();
    if errors.len() > delayed {
        ENTRY_FAILED
    } else {
        u8::try_from(delayed).unwrap_or(ENTRY_FAILED)
    }
}

/// Whether a path checkout or restore would move submodules' work trees: `--recurse-submodules`
/// (`choice`, else `submodule.recurse`) with a submodule in the index. git then moves each
/// selected submodule's `HEAD` to the commit it checks out (`checkout_entry` of a gitlink,
/// `submodule_move_head`), which the engine's path restore does not do: the call is git's
/// ([`paths_to_git`]).
pub(crate) fn paths_reach_submodules(opened: &crate::repo::Opened, choice: Option<bool>) -> bool {
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
pub(crate) fn paths_to_git(what: &str) -> u8 {
    crate::patch::hand_to_git(
        what,
        "--recurse-submodules with submodules in the index",
        &crate::git::own_args(),
    )
}

/// The pathspecs as git's `parse_pathspec` reads them: magic, `GIT_*_PATHSPECS`, relative to
/// the current directory (`Opened::prefix`), absolute ones against the top of the work tree.
pub(crate) fn pathspec(
    opened: &Opened,
    workdir: &std::path::Path,
    specs: &[String],
) -> Result<gitpar::plan::pathspec::Pathspec, u8> {
    let defaults = gitpar::plan::pathspec::defaults_from_environment().map_err(fatal)?;
    let root = crate::platform::canonicalize(workdir).unwrap_or_else(|_| workdir.to_owned());
    gitpar::plan::pathspec::Pathspec::new(specs, &opened.prefix, &root, defaults).map_err(fatal)
}

/// Restore the paths `specs` select from `source` (the index when `None`) to the work tree
/// and/or the index, as `checkout [<tree-ish>] -- <paths>` and `restore` do, with git's
/// messages; `count_paths`: say how many paths were updated (`checkout <rev> <paths>`).
#[allow(clippy::too_many_arguments)] // each flag is one of git's options for the two commands
pub(crate) fn restore_paths(
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
    let opts = crate::engine::engine_options(repo, args);
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
            report_restored(repo, &outcome, args.quiet, count_paths, source);
            let status = match entries_status(&outcome.errors) {
                0 => Ok(()),
                code => Err(code),
            };
            // git's `checkout_paths` (restore too) ends with `post-checkout HEAD HEAD 0`.
            crate::hooks::after_paths(opened, status)
        }
        Err(e) => Err(restore_error(e)),
    }
}

/// git's warnings and errors for a restore that ran: unmerged paths left alone (unless
/// `quiet`), binary files it could not merge, paths it could not write, and with `count_paths`
/// (and not `quiet`), "Recreated N merge conflicts" and "Updated N paths from …".
fn report_restored(
    repo: &gix::Repository,
    outcome: &gitpar::restore::Outcome,
    quiet: bool,
    count_paths: bool,
    source: Option<gix::ObjectId>,
) {
    if !quiet {
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
    if count_paths && !quiet {
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
}

/// git's messages for a restore that stopped, and its exit code.
fn restore_error(e: gitpar::restore::Error) -> u8 {
    match e {
        gitpar::restore::Error::Unmerged(paths) => {
            for path in &paths {
                eprintln!("error: path '{path}' is unmerged");
            }
            1
        }
        gitpar::restore::Error::MissingStage { stage, paths } => {
            let whose = if stage == 2 { "our" } else { "their" };
            for path in &paths {
                eprintln!("error: path '{path}' does not have {whose} version");
            }
            1
        }
        gitpar::restore::Error::MissingStages(paths) => {
            for path in &paths {
                eprintln!("error: path '{path}' does not have all necessary versions");
            }
            1
        }
        gitpar::restore::Error::NoMatch(specs) => {
            for spec in &specs {
                eprintln!("error: pathspec '{spec}' did not match any file(s) known to git");
            }
            1
        }
        gitpar::restore::Error::Checkout(gitpar::checkout::Error::Entries(errors)) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            ENTRY_FAILED
        }
        gitpar::restore::Error::Checkout(err @ gitpar::checkout::Error::Filter { .. }) => {
            report::checkout_error(&err);
            crate::exit::FATAL
        }
        gitpar::restore::Error::Checkout(gitpar::checkout::Error::Interrupted) => {
            eprintln!("error: interrupted");
            crate::interrupt::EXIT_CODE
        }
        stopped @ gitpar::restore::Error::Subtree { .. } => {
            if let gitpar::restore::Error::Subtree { failed, .. } = &stopped {
                for e in failed {
                    eprintln!("error: {e}");
                }
            }
            fatal(stopped)
        }
        other => fatal(other),
    }
}
