//! An update into an empty work tree is a full checkout: `git clone -n` (or `--no-checkout`)
//! followed by `checkout -f`, `reset --hard`, `checkout BRANCH` or `switch BRANCH`.
//!
//! The two-way update ([`crate::ops::update`]) merges the target with the index path by path and
//! looks at the disk before it writes: every path the target adds is checked for an untracked
//! file in its way (an lstat each), and the paths about to be created are announced in an index
//! written first. With no index entries and nothing in the work tree but `.git`, none of that
//! can find anything, and the result of the merge is known without doing it: every entry of the
//! target, written. So the update takes the full checkout's path instead
//! ([`crate::ops::checkout::Full`]: the plan from the tree alone, the writers with their
//! fresh-work-tree rules and the shared cache of pack bases) and records the index with the
//! update's rules, which are git's for these commands: a failed entry is recorded with empty
//! stat data and the update goes on (`HEAD` moves, the caller exits 1); after Ctrl-C the index
//! lists what was written; an existing empty index keeps its version and extensions, a missing
//! one takes the configured version. Measured on a 38,000-file tree (tldr) on tmpfs: see
//! `docs/ARCHITECTURE.md`.
//!
//! The decision costs one readdir of the work tree's root, and only when the index, which the
//! update reads anyway, has no entries.

use gix::hash::ObjectId;
use gix::index::entry::{Flags, Stat};

use crate::fs::lock::IndexLock;
use crate::fs::Root;
use crate::ops::checkout::{Context, Error as CheckoutError, Full};
use crate::ops::update::{Error, Outcome, Policy};
use crate::plan::Kind;
use crate::write::options::Options;

/// Returns true if and only if updating to `new_tree` from `index` (whose `HEAD` tree is
/// `old_tree`; `unborn`: there was no index file) in the work tree `root` writes every entry of
/// `new_tree` and nothing else, so that [`update`] may run instead of the two-way merge.
///
/// That holds when the index has no entries, the work tree's root holds nothing but `.git`, and
/// the merge takes every path of the target: a forced update always does (git's
/// `oneway_merge`); a safe one does from a missing index (git's `initial_checkout`) or from no
/// old tree, and otherwise keeps the paths both trees share deleted, as staged deletions
/// (`twoway_merge`), so it is not a full checkout. The empty tree has nothing to write.
pub(crate) fn applies(
    index: &gix::index::State,
    unborn: bool,
    (old_tree, new_tree): (Option<ObjectId>, ObjectId),
    mode: Policy,
    root: &Root,
) -> bool {
    if !index.entries().is_empty() || new_tree.is_empty_tree() {
        return false;
    }
    let takes_all = match mode {
        Policy::Force => true,
        Policy::Safe => unborn || old_tree.is_none_or(|t| t.is_empty_tree()),
    };
    // An unreadable root is not empty: the two-way update reports what is wrong with it.
    takes_all && root.holds_only_git().unwrap_or(false)
}

/// The update of an empty work tree to `new_tree` as a full checkout, under the index `lock`
/// the update took. `previous` is the existing (empty) index, `None` when there was no index
/// file: it decides the written index's version and extensions as for any update. With
/// [`Options::recurse_submodules`], the target's submodules are checked out afterwards, as the
/// update brings submodules that appear.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update(
    lock: IndexLock,
    repo: &gix::Repository,
    previous: Option<&gix::index::State>,
    new_tree: ObjectId,
    root: &Root,
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    Initial {
        repo,
        previous,
        new_tree,
        root,
        mode,
        opts,
        ctx,
    }
    .run(lock)
}

/// What the steps of one full checkout standing in for an update share.
struct Initial<'a, 'c> {
    repo: &'a gix::Repository,
    /// The existing (empty) index; `None` when there was no index file.
    previous: Option<&'a gix::index::State>,
    new_tree: ObjectId,
    root: &'a Root,
    mode: Policy,
    opts: &'a Options,
    ctx: &'a Context<'c>,
}

/// The index a full checkout records, with the stat data of what was written.
// One value per checkout, moved once: boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Recorded {
    /// Encoded while the files were written, and their stat data to fill in.
    Prepared(crate::index::record::Prepared, Vec<Option<Stat>>),
    /// Made once the files were written: after an interruption, or when none was prepared.
    Made(gix::index::State),
}

impl Initial<'_, '_> {
    /// Plan, write, bring the submodules that appear, record: [`update`]'s steps.
    fn run(&self, lock: IndexLock) -> Result<Outcome, Error> {
        let full = Full::plan(self.repo, self.new_tree, self.opts, None)?;
        let moves = self.submodules(&full);
        if self.ctx.interrupted() {
            return Err(CheckoutError::Interrupted.into());
        }
        // The new index is encoded while the files are written unless the previous one has an
        // untracked cache to carry over or it is to be split (`record::commit` does those).
        let format = (self.previous.is_none_or(|p| p.untracked().is_none())
            && !crate::index::split_index::wanted(self.repo, lock.index_path()))
        .then(|| crate::index::format::Format::of(self.repo, self.previous));
        let (executed, prepared) = full.write_preparing(
            self.repo,
            self.root,
            self.opts,
            self.ctx,
            self.new_tree,
            format,
        );
        let executed = executed?;
        let interrupted = executed.interrupted;
        let mut outcome = Outcome {
            written: executed.stats.iter().filter(|s| s.is_some()).count(),
            workers: executed.workers,
            collisions: executed.collisions,
            errors: executed.errors,
            full_checkout: true,
            ..Outcome::default()
        };
        // What is recorded: the prepared index, or (interrupted, or none prepared) one made now.
        let recorded = match prepared.filter(|_| !interrupted) {
            Some(prepared) => Recorded::Prepared(prepared, executed.stats),
            None => Recorded::Made(on_disk(&full, self.repo, &executed.stats, interrupted)),
        };
        if !interrupted && !moves.is_empty() {
            outcome.errors.extend(crate::ops::update::bring_submodules(
                self.repo, self.root, &moves, self.mode, self.opts, self.ctx,
            ));
        }
        crate::sys::phase::mark("files written");
        self.record(lock, full, recorded, interrupted, &mut outcome)?;
        crate::sys::phase::mark("index written");
        if interrupted {
            return Err(CheckoutError::Interrupted.into());
        }
        // No local changes to list (a safe update's report): every entry is the target's,
        // written.
        Ok(outcome)
    }

    /// The submodules that appear, with [`Options::recurse_submodules`]: nothing is there to
    /// check before, every submodule is new.
    fn submodules(&self, full: &Full) -> Vec<crate::ops::update::submodule::Move> {
        if !self.opts.recurse_submodules {
            return Vec::new();
        }
        full.jobs
            .iter()
            .map(|j| &full.plan.entries[j.entry])
            .filter(|e| e.kind == Kind::Gitlink)
            .map(|e| crate::ops::update::submodule::Move {
                path: e.path.clone(),
                old: None,
                new: Some(e.id),
            })
            .collect()
    }

    /// Record the index under `lock` with the update's rules; the checkout's plan is dropped
    /// (apart, see [`crate::sys::memory::drop_apart`]) once nothing needs it.
    fn record(
        &self,
        lock: IndexLock,
        full: Full,
        recorded: Recorded,
        interrupted: bool,
        outcome: &mut Outcome,
    ) -> Result<(), Error> {
        let index = match recorded {
            Recorded::Prepared(prepared, stats) => {
                crate::sys::memory::drop_apart(full);
                return crate::ops::update::record_prepared(
                    lock, self.repo, prepared, stats, outcome,
                );
            }
            Recorded::Made(index) => index,
        };
        // As the prepared index's (not after an interruption, which leaves entries out).
        let cache_tree = if interrupted {
            crate::index::record::CacheTree::Rebuild
        } else {
            crate::ops::checkout::cache_tree_of(&full.plan, self.new_tree, self.opts)
        };
        crate::ops::update::record(
            lock,
            self.repo,
            index,
            true,
            crate::index::record::Keep {
                tree: (!interrupted).then_some(self.new_tree),
                previous: self.previous,
                cache_tree,
                resolve_undo: None,
                changed_paths: None,
                fsmonitor: None,
            },
            outcome,
        )?;
        crate::sys::memory::drop_apart(full);
        Ok(())
    }
}

/// The index of the checkout made now, with the writers' `stats`; after an interruption, that
/// of what is on disk: the entries written, and those sparse checkout leaves out (they are not
/// written in any case).
fn on_disk(
    full: &Full,
    repo: &gix::Repository,
    stats: &[Option<Stat>],
    interrupted: bool,
) -> gix::index::State {
    let mut index = full.index(repo.object_hash(), stats);
    if interrupted {
        index.remove_entries(|k, _, entry| {
            stats[k].is_none() && !entry.flags.contains(Flags::SKIP_WORKTREE)
        });
    }
    index
}
