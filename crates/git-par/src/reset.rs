//! `git par reset --hard`: reset `HEAD`, the index and the work tree to a commit, written in
//! parallel.

use clap::Args;
use gitpar::update::Policy;

use crate::checkout_args::CheckoutArgs;
use crate::engine::{update_options, with_progress};
use crate::exit::fatal;
use crate::hooks::open_repo;
use crate::option_groups::RecurseArgs;
use crate::report;
use crate::switching::resolve_commit;

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
    let dash_dash = crate::git::own_args().iter().any(|a| a == "--");
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
        ref_name: crate::names::dwim_ref(repo, &target).filter(|r| r.starts_with(b"refs/")),
        treeish: Some(commit),
    };
    let workdir = opened.require_workdir()?.to_owned();
    let request = gitpar::reset::Request {
        commit,
        rev: &target,
        options: update_options(repo, &args.checkout, Policy::Force),
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
    report::update_outcome(&outcome, report::SparseWords::Plumbing);
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
