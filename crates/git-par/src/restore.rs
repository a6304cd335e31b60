//! `git par restore`: restore work tree files (and with `--staged`, index entries) from the index
//! or a tree.

use clap::Args;

use crate::checkout_args::CheckoutArgs;
use crate::exit::fatal;
use crate::hooks::open_repo;
use crate::option_groups::{merge_to_git, renormalizes, MergeArgs, RecurseArgs, StageArgs};
use crate::paths::{paths_reach_submodules, paths_to_git, restore_paths};

/// `git par restore`.
#[derive(Args, Debug)]
pub struct RestoreArgs {
    #[command(flatten)]
    checkout: CheckoutArgs,
    /// Take the contents from this tree-ish (default: the index, or HEAD with --staged).
    #[arg(short = 's', long = "source", value_name = "TREE")]
    source: Option<String>,
    /// Restore the index.
    #[arg(short = 'S', long = "staged")]
    staged: bool,
    /// Restore the work tree (the default when --staged is not given).
    #[arg(short = 'W', long = "worktree")]
    worktree: bool,
    /// Leave unmerged paths alone (with a warning) instead of refusing.
    #[arg(long = "ignore-unmerged")]
    ignore_unmerged: bool,
    /// Restore the selected paths even where sparse checkout leaves them out.
    #[arg(long = "ignore-skip-worktree-bits")]
    ignore_skip_worktree_bits: bool,
    /// `--ours`/`--theirs` (`StageArgs`).
    #[command(flatten)]
    stage: StageArgs,
    /// `-m/--merge`, `--conflict=STYLE` (`MergeArgs`).
    #[command(flatten)]
    merge: MergeArgs,
    /// `--pathspec-from-file`, `--pathspec-file-nul` (`pathspec_file.rs`).
    #[command(flatten)]
    pathspec_file: crate::pathspec_file::PathspecFileArgs,
    /// `--overlay` / `--no-overlay` (the default).
    #[command(flatten)]
    overlay: crate::pathspec_file::OverlayArgs,
    /// `--[no-]recurse-submodules`.
    #[command(flatten)]
    recurse: RecurseArgs,
    /// The paths to restore.
    #[arg(value_name = "PATHSPEC")]
    paths: Vec<String>,
}

/// Run `git par restore`.
pub fn restore(mut args: RestoreArgs, overrides: &[String]) -> Result<(), u8> {
    args.merge.check_style()?;
    let opened = open_repo(overrides)?;
    let repo = &opened.repo;
    if args.merge.given() && renormalizes(repo) {
        return Err(merge_to_git("restore"));
    }
    if paths_reach_submodules(&opened, args.recurse.choice()) {
        return Err(paths_to_git("restore"));
    }
    let worktree = args.worktree || !args.staged;
    let source = match (&args.source, args.staged) {
        (Some(rev), _) => Some(resolve_tree(repo, rev)?),
        (None, true) => Some(resolve_tree(repo, "HEAD")?),
        (None, false) => None,
    };
    let paths = args.pathspec_file.pathspecs(args.paths, false)?;
    if paths.is_empty() {
        return Err(fatal("you must specify path(s) to restore"));
    }
    if args.stage.get().is_some() && args.merge.given() {
        return Err(MergeArgs::refuse_incompatible());
    }
    // git's `checkout_paths`: `--merge` and `--ours`/`--theirs` write from the index's stages
    // only.
    if args.merge.given() {
        if args.ignore_unmerged {
            return Err(fatal(
                "options '--ignore-unmerged' and '-m' cannot be used together",
            ));
        }
        if args.staged {
            return Err(fatal(
                "'--merge' or '--conflict' cannot be used with --staged",
            ));
        }
        if source.is_some() {
            return Err(StageArgs::refuse_tree());
        }
    }
    if args.stage.get().is_some() {
        if args.staged {
            return Err(fatal("'--ours' or '--theirs' cannot be used with --staged"));
        }
        if source.is_some() {
            return Err(StageArgs::refuse_tree());
        }
    }
    if let Some(rev) = &args.source {
        // git's `checkout_worktree` for `--source`: its ref, its commit (or tree).
        let treeish = repo
            .rev_parse_single(rev.as_str())
            .ok()
            .and_then(|id| id.object().ok())
            .map(|o| match o.kind {
                gix::object::Kind::Commit => o.id,
                _ => source.unwrap_or(o.id),
            });
        args.checkout.filter_meta = gitpar::FilterMeta {
            ref_name: crate::names::dwim_ref(repo, rev),
            treeish,
        };
    }
    restore_paths(
        &opened,
        source,
        args.staged,
        worktree,
        args.overlay.resolve(false),
        (args.ignore_unmerged, args.ignore_skip_worktree_bits),
        &paths,
        &args.checkout,
        false,
        args.stage.get(),
        args.merge.style(repo),
    )
}

fn resolve_tree(repo: &gix::Repository, rev: &str) -> Result<gix::ObjectId, u8> {
    repo.rev_parse_single(rev)
        .ok()
        .and_then(|id| id.object().ok())
        .and_then(|o| o.peel_to_tree().ok())
        .map(|t| t.id)
        .ok_or_else(|| fatal(format!("invalid reference: {rev}")))
}
