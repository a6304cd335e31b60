//! Option groups the branch and path commands share (`switch`, `checkout`, `restore`, `reset`):
//! `--[no-]recurse-submodules`, `-m/--merge` with `--conflict`, and `--ours`/`--theirs`.

use clap::Args;

use crate::exit::fatal;

/// `--recurse-submodules[=<bool>]` / `--no-recurse-submodules`: whether active submodules'
/// work trees follow the update (git's `option_parse_recurse_submodules_worktree_updater`);
/// without either, `submodule.recurse` decides.
#[derive(Args, Debug, Default)]
pub struct RecurseArgs {
    /// Update the work trees of active submodules too.
    #[arg(long = "recurse-submodules", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true",
          value_parser = parse_bool_arg)]
    recurse_submodules: Option<bool>,
    /// Leave submodules' work trees alone.
    #[arg(long = "no-recurse-submodules")]
    no_recurse_submodules: bool,
}

impl RecurseArgs {
    /// The choice made on the command line, if any (the last one wins, as with git).
    pub(crate) fn choice(&self) -> Option<bool> {
        if self.no_recurse_submodules {
            Some(false)
        } else {
            self.recurse_submodules
        }
    }
}

/// git's boolean words for an option value.
pub(crate) fn parse_bool_arg(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!("bad boolean value '{v}'")),
    }
}

/// Whether `merge.renormalize` is set: git's three-way merges (`-m`, `--conflict`) then pass
/// both sides through the attributes' conversions before merging (`ll_merge`'s renormalize),
/// which gix's merge does not do; such a call is git's ([`merge_to_git`]).
pub(crate) fn renormalizes(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .boolean("merge.renormalize")
        .unwrap_or(false)
}

/// Hand the merging checkout, switch or restore `what` to git whole ([`renormalizes`]).
pub(crate) fn merge_to_git(what: &str) -> u8 {
    crate::patch::hand_to_git(
        what,
        "merge.renormalize with -m/--conflict",
        &crate::git::own_args(),
    )
}

/// `-m/--merge` and `--conflict=STYLE` of `checkout`, `switch` and `restore`: with paths,
/// recreate the conflicts of unmerged paths in the work tree (`gitpar::restore`); on a branch
/// switch that local changes would block, merge them into the new branch (git's: the call is
/// handed to git, `gitpar::switch::Error::MergeIsGits`). `--conflict` implies `--merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Three-way merge: recreate conflicts of unmerged paths, or merge local changes into the
    /// branch switched to.
    #[arg(short = 'm', long = "merge", overrides_with = "no_merge")]
    merge: bool,
    /// Do not merge (the last of --merge, --no-merge and --conflict wins, as in git).
    #[arg(long = "no-merge", overrides_with_all = ["merge", "conflict"])]
    no_merge: bool,
    /// Conflict markers in this style (merge, diff3 or zdiff3); implies --merge.
    #[arg(
        long = "conflict",
        value_name = "STYLE",
        overrides_with_all = ["no_conflict", "no_merge"]
    )]
    conflict: Option<String>,
    /// Forget an earlier --conflict.
    #[arg(long = "no-conflict", overrides_with = "conflict")]
    no_conflict: bool,
}

impl MergeArgs {
    /// Whether `-m`, `--merge` or `--conflict` was given.
    pub(crate) fn given(&self) -> bool {
        self.merge || self.conflict.is_some()
    }

    /// git's `parse_opt_conflict`: an unknown style is a usage error (exit 129), found before
    /// anything else is looked at.
    pub(crate) fn check_style(&self) -> Result<(), u8> {
        match &self.conflict {
            Some(name) if gitpar::merge::Style::parse(name).is_none() => {
                eprintln!("error: unknown conflict style '{name}'");
                Err(129)
            }
            _ => Ok(()),
        }
    }

    /// The style to merge with: `--conflict`, else `merge.conflictStyle`; `None` without
    /// `-m`/`--conflict`.
    pub(crate) fn style(&self, repo: &gix::Repository) -> Option<gitpar::merge::Style> {
        if !self.given() {
            return None;
        }
        let explicit = self
            .conflict
            .as_deref()
            .and_then(gitpar::merge::Style::parse);
        Some(explicit.unwrap_or_else(|| gitpar::merge::Style::configured(repo)))
    }

    /// Whether a branch switch merges (`-m`, `--conflict`), refusing `-f` or
    /// `--discard-changes` with it as git does (exit 128).
    pub(crate) fn for_switch(&self, force: bool, discard_changes: bool) -> Result<bool, u8> {
        if force && self.given() {
            return Err(fatal("'-f' cannot be used with '-m'"));
        }
        if discard_changes && self.given() {
            return Err(fatal("'--discard-changes' cannot be used with '--merge'"));
        }
        Ok(self.given())
    }

    /// git's refusal of more than one of `--ours/--theirs`, `--force` and `--merge` for paths
    /// (exit 128).
    pub(crate) fn refuse_incompatible() -> u8 {
        fatal("git checkout: --ours/--theirs, --force and --merge are incompatible when\nchecking out of the index.")
    }
}

/// `--ours` / `--theirs` (`-2`/`-3`) of `checkout -- paths` and `restore`: unmerged paths are
/// written from stage 2 or 3 of the index (git's `checkout_stage`); the last one given wins.
#[derive(Args, Debug)]
pub struct StageArgs {
    /// Write our version (stage 2) of unmerged paths.
    #[arg(short = '2', long = "ours", overrides_with = "theirs")]
    ours: bool,
    /// Write their version (stage 3) of unmerged paths.
    #[arg(short = '3', long = "theirs", overrides_with = "ours")]
    theirs: bool,
}

impl StageArgs {
    /// The index stage to write, if one was asked for.
    pub(crate) fn get(&self) -> Option<u8> {
        match (self.ours, self.theirs) {
            (true, _) => Some(2),
            (_, true) => Some(3),
            _ => None,
        }
    }

    /// git's refusal of `--ours`/`--theirs` with a tree source (exit 128).
    pub(crate) fn refuse_tree() -> u8 {
        fatal("'--merge', '--ours', or '--theirs' cannot be used when checking out of a tree")
    }
}
