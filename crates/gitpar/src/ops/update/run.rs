//! The run of one update, phase by phase: read the index, plan and classify, check the work
//! tree, prepare the writers, remove, write, follow with the submodules, record. Each phase is
//! a function over [`Update`], the state they all read; what one phase hands the next is its
//! return value.

use std::collections::HashSet;
use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;
use gix::index::entry::Flags;

use super::{
    announce_new_paths, announces, blockers_in_places, bring_submodules, classify, in_result,
    local_changes, make_places, mark_sparse, read_index, record, reject_kept_in_the_way,
    reject_kept_over_skipped, remove, result_index, submodule_moves, targets, unmake_spared,
    unmerged_paths, verify, write_plan, Action, Blockers, Error, Outcome, Policy, Row, Selection,
    SparseWarnings, Stop, Target,
};
use crate::fs::lock::IndexLock;
use crate::fs::Root;
use crate::index::fsmonitor::Previous;
use crate::plan::sparse::Sparse;
use crate::plan::{self, Plan};
use crate::sys::context::Context;
use crate::sys::phase::mark;
use crate::write::error::Error as CheckoutError;
use crate::write::options::Options;
use crate::write::{Executed, Job};

/// The update's phases; `dry_run` stops after the checks, before anything changes.
pub(super) fn run(
    repo: &gix::Repository,
    target: Target,
    (worktree, index_path): (&Path, &Path),
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
    dry_run: bool,
) -> Result<Outcome, Error> {
    let lock = IndexLock::acquire(index_path).map_err(CheckoutError::from)?;
    let mut found = Found::read(repo, worktree, index_path)?;
    let (index, unborn, root) = (&found.index, found.unborn, &found.root);
    if let Some((old_tree, new_tree)) = target.trees().filter(|_| !dry_run) {
        if crate::ops::update::initial::applies(index, unborn, (old_tree, new_tree), mode, root) {
            let previous = (!unborn).then_some(&**index);
            return crate::ops::update::initial::update(
                lock, repo, previous, new_tree, root, mode, opts, ctx,
            );
        }
    }
    let sparse = sparse_patterns(repo, target, &found.root, &mut found.index)?;
    let up = Update {
        repo,
        root: &found.root,
        index: &found.index,
        index_path,
        target,
        mode,
        opts,
        ctx,
        unborn: found.unborn,
        expanded: found.expanded,
        fsmonitor: found.fsmonitor.as_ref(),
    };
    let unmerged = unmerged_paths(up.index);
    if up.trees().is_some() && mode == Policy::Safe && !unmerged.is_empty() {
        return Err(Error::Unmerged(unmerged));
    }
    let (targets, mut new_dirs) = up.targets()?;
    mark("update: targets");
    let mut rows = up.rows(&targets, sparse.as_ref())?;
    let (mut blockers, sparse_warnings) = up.verified(&mut rows, &mut new_dirs)?;
    let moves = up.submodules(&rows)?;
    if dry_run {
        return Ok(Outcome::default());
    }
    if ctx.interrupted() {
        return Err(CheckoutError::Interrupted.into());
    }
    let mut prepared = up.prepare(&mut rows, new_dirs, &mut blockers)?;
    let lock = announce_new_paths(lock, repo, up.index, &rows, index_path)?;
    mark("update: new paths announced");
    let held = Held {
        lock,
        index_path,
        original: prepared.original.take(),
    };
    let mut outcome = up.outcome(sparse_warnings, unmerged);
    up.take_down_submodules(&moves, &mut outcome);
    let (held, executed) = up.write(held, &mut rows, &blockers, &mut prepared, &mut outcome)?;
    let interrupted = executed.as_ref().is_none_or(|e| e.interrupted);
    let state = up.stat_data(prepared.state, &rows, executed.as_ref(), interrupted);
    if let Some(executed) = executed {
        tally(&mut outcome, executed);
    }
    mark("update: files written");
    up.follow(&rows, &state, &moves, interrupted, &mut outcome)?;
    up.record(held, state, &rows, interrupted, outcome)
}

/// The index as the update read it, and the work tree it describes: what the phases start from.
struct Found {
    /// The index, a sparse one expanded.
    index: gix::index::File,
    /// There was no index file.
    unborn: bool,
    /// The index's fsmonitor extension, to be carried over.
    fsmonitor: Option<Previous>,
    /// The index was sparse and has been expanded.
    expanded: bool,
    /// The work tree.
    root: Root,
}

impl Found {
    /// Read the index at `index_path` (expanding a sparse one) and open the `worktree`: the
    /// update's first phase, under the lock the caller holds.
    fn read(repo: &gix::Repository, worktree: &Path, index_path: &Path) -> Result<Self, Error> {
        let (mut index, unborn) = read_index(index_path, repo.object_hash())?;
        let fsmonitor = Previous::of(repo, index_path, &index);
        let expanded =
            crate::plan::sparse::expand(&repo.objects, &mut index).map_err(Error::Index)?;
        mark("update: index read");
        let root = Root::open(worktree).map_err(|source| Error::Io {
            action: "open the work tree",
            path: BString::from(worktree.as_os_str().as_encoded_bytes()),
            source,
        })?;
        Ok(Found {
            index,
            unborn,
            fsmonitor,
            expanded,
            root,
        })
    }
}

/// Load the sparse patterns `target` applies (none when it brings everything back), and clear
/// the skip-worktree bit of entries whose files are present, as git does when it reads an
/// index, unless the sparse checkout was only just turned on.
fn sparse_patterns(
    repo: &gix::Repository,
    target: Target,
    root: &Root,
    index: &mut gix::index::File,
) -> Result<Option<Sparse>, Error> {
    let sparse = match target {
        Target::Sparsity(Selection::Everything) => None,
        _ => Sparse::load(repo).map_err(CheckoutError::from)?,
    };
    let just_enabled = matches!(target, Target::Sparsity(Selection::Enabled));
    if crate::plan::sparse::clears_present_files(repo) && !just_enabled {
        let _ = crate::plan::sparse::clear_present(root, index);
    }
    mark("update: sparse patterns loaded");
    Ok(sparse)
}

impl Target {
    /// The old and the new tree of an update between trees; `None` for a sparsity update.
    fn trees(self) -> Option<(Option<ObjectId>, ObjectId)> {
        match self {
            Target::Trees(old, new) => Some((old, new)),
            Target::Sparsity(_) => None,
        }
    }
}

/// What every phase of one update reads: the repository and work tree, the index as read (it
/// does not change until the result is recorded), and how the update was asked for.
struct Update<'a, 'c> {
    repo: &'a gix::Repository,
    root: &'a Root,
    index: &'a gix::index::File,
    index_path: &'a Path,
    target: Target,
    mode: Policy,
    opts: &'a Options,
    ctx: &'a Context<'c>,
    /// There was no index file.
    unborn: bool,
    /// The index was sparse and has been expanded.
    expanded: bool,
    /// The index's fsmonitor extension, to be carried over.
    fsmonitor: Option<&'a Previous>,
}

/// The index lock, held from the announcement of the new paths until the result is recorded,
/// with what to put back should the update die before that.
struct Held<'p> {
    lock: IndexLock,
    index_path: &'p Path,
    /// The index from before the announcement (`None` inside: there was no index file), when
    /// the update may have to put it back (see [`Update::prepare`]).
    original: Option<Option<Vec<u8>>>,
}

impl Held<'_> {
    /// Give up with `err`: put the index from before back if there is one (best effort: `err`
    /// is what is reported) and release the lock.
    fn abandon(self, err: Error) -> Error {
        match self.original {
            Some(original) => {
                let _ = self.lock.put_back(self.index_path, original.as_deref());
            }
            None => drop(self.lock),
        }
        err
    }
}

/// What the writers need, made ready once the checks passed and before anything changes.
struct Prepared {
    /// The write plan.
    plan: Plan,
    /// Untracked directories in the place of entries to write, cleared when their entry is
    /// reached ([`make_places`]).
    in_places: HashSet<BString>,
    /// The result index, empty stat data for the entries still to be written.
    state: gix::index::State,
    /// Whether any attribute file can apply.
    present: bool,
    /// The filter pipeline over the result index.
    filter: gix::filter::plumbing::Pipeline,
    /// The attribute stack over the result index.
    attributes: gix::worktree::Stack,
    /// The index to put back should the update die (see [`Held::original`]); taken by [`Held`].
    original: Option<Option<Vec<u8>>>,
}

impl<'c> Update<'_, 'c> {
    /// The old and the new tree, for an update between trees.
    fn trees(&self) -> Option<(Option<ObjectId>, ObjectId)> {
        self.target.trees()
    }

    /// The paths the target changes and the directories new entries need. A sparsity update
    /// changes no path: every row is kept, and only the patterns change it; the directories of
    /// the entries that may come back are made before they are written (those that exist are
    /// kept; the checks keep only those that are needed).
    fn targets(&self) -> Result<(Vec<plan::Change>, Vec<BString>), Error> {
        let Some((old_tree, new_tree)) = self.trees() else {
            let index = self.index;
            let dirs: std::collections::BTreeSet<&BStr> = crate::fs::leading_dirs_of(
                index
                    .entries()
                    .iter()
                    .filter(|e| e.flags.contains(Flags::SKIP_WORKTREE))
                    .map(|e| e.path(index)),
            )
            .collect();
            return Ok((Vec::new(), dirs.into_iter().map(BStr::to_owned).collect()));
        };
        targets(
            self.repo,
            old_tree,
            new_tree,
            self.mode,
            self.unborn,
            self.opts,
        )
    }

    /// Classify every path, then let the refusals that need no look at the disk and the sparse
    /// patterns settle the rows they decide.
    fn rows<'t>(
        &'t self,
        targets: &'t [plan::Change],
        sparse: Option<&Sparse>,
    ) -> Result<Vec<Row<'t>>, Error> {
        let mut rows = classify(self.index, targets, self.mode, self.unborn);
        let trees = self.trees().is_some();
        if !trees {
            // git's `update_sparsity` leaves unmerged paths alone, with a warning.
            for row in rows.iter_mut().filter(|r| r.unmerged) {
                row.action = Action::Keep;
            }
        } else if self.mode == Policy::Safe {
            reject_kept_in_the_way(&mut rows);
        }
        mark("update: classified");
        match (sparse, self.target) {
            (Some(sparse), _) => {
                mark_sparse(self.repo, (self.root, sparse), &mut rows, self.mode)?;
                if trees && self.mode == Policy::Safe {
                    reject_kept_over_skipped(&mut rows);
                }
            }
            (None, Target::Sparsity(Selection::Everything)) => {
                for row in rows.iter_mut().filter(|r| !r.unmerged) {
                    row.skip = Some(false);
                }
            }
            (None, _) => {}
        }
        Ok(rows)
    }

    /// Check the work tree against the rows ([`verify`]); with
    /// [`Options::sparse_warnings_refuse`], what sparse checkout would only warn about refuses.
    fn verified(
        &self,
        rows: &mut [Row<'_>],
        new_dirs: &mut Vec<BString>,
    ) -> Result<(Blockers, SparseWarnings), Error> {
        let (blockers, sparse_warnings) = verify(
            self.repo,
            self.root,
            self.index,
            rows,
            new_dirs,
            (self.mode, self.trees().is_none()),
            self.opts,
        )?;
        if self.opts.sparse_warnings_refuse
            && (!sparse_warnings.not_uptodate.is_empty() || !sparse_warnings.orphaned.is_empty())
        {
            return Err(Error::WouldLose {
                local: sparse_warnings.not_uptodate,
                untracked: sparse_warnings.orphaned,
                untracked_removed: Vec::new(),
                untracked_deleted: Vec::new(),
            });
        }
        mark("update: verified");
        Ok((blockers, sparse_warnings))
    }

    /// The submodules the update moves (with [`Options::recurse_submodules`]), checked that
    /// they can follow before anything changes.
    fn submodules(
        &self,
        rows: &[Row<'_>],
    ) -> Result<Vec<crate::ops::update::submodule::Move>, Error> {
        let moves = if self.opts.recurse_submodules {
            submodule_moves(rows, self.mode)
        } else {
            Vec::new()
        };
        mark("update: classified and checked");
        crate::ops::update::submodule::check(
            self.repo, self.root, &moves, self.mode, self.opts, self.ctx,
        )?;
        Ok(moves)
    }

    /// The write plan, and the result index as the writers' attribute source (git reads
    /// attributes from the new index); the blobs a partial clone lacks are fetched in one batch
    /// first. Also decides whether the index from before is to be kept for putting back.
    fn prepare(
        &self,
        rows: &mut [Row<'_>],
        new_dirs: Vec<BString>,
        blockers: &mut Blockers,
    ) -> Result<Prepared, Error> {
        let repo = self.repo;
        let plan = write_plan(rows, new_dirs);
        // A directory in the place of an entry to write is cleared when git's checkout
        // reaches that entry, after the entries before it (`make_places`); the others go with
        // the removals.
        let in_places = blockers_in_places(blockers, &plan);
        crate::objects::prefetch::missing_blobs(repo, plan.entries.iter(), self.ctx)
            .map_err(CheckoutError::from)?;
        let state = result_index(repo, self.index, rows, None);
        let present = crate::write::attributes_present(
            repo,
            self.root,
            state.entries().iter().map(|e| e.path(&state)),
        );
        let (filter, attributes) = crate::write::filters_for(
            repo,
            &state,
            gix::worktree::stack::state::attributes::Source::IdMappingThenWorktree,
        )?;
        // A required filter that fails is fatal: git dies with its index as it was, so the
        // index announcing the new paths is put back then (read only when there is one, and a
        // filter could fail so). So does `reset --hard` when entries cannot be written
        // ([`Options::keep_index_on_failed_writes`]): a new path that could not be written is
        // no staged addition afterwards, as git's reset, which never wrote its index, leaves
        // none. Likewise when clearing what is in the way fails (a directory that cannot be
        // removed), or a directory cannot be made: git dies in `checkout_entry` before it
        // writes its index.
        let clears =
            !blockers.files.is_empty() || !blockers.dirs.is_empty() || !in_places.is_empty();
        let may_put_back = self.opts.keep_index_on_failed_writes
            || clears
            || !plan.dirs.is_empty()
            || crate::convert::filter::drivers(repo).is_ok_and(|d| !d.is_empty());
        let original =
            (announces(rows) && may_put_back).then(|| IndexLock::snapshot(self.index_path));
        mark("update: result index and filters");
        Ok(Prepared {
            plan,
            in_places,
            state,
            present,
            filter,
            attributes,
            original,
        })
    }

    /// The outcome before anything is written: sparse checkout's warnings, and the unmerged
    /// paths a sparsity update left alone.
    fn outcome(&self, sparse_warnings: SparseWarnings, unmerged: Vec<BString>) -> Outcome {
        Outcome {
            sparse_not_uptodate: sparse_warnings.not_uptodate,
            sparse_orphaned: sparse_warnings.orphaned,
            sparse_unmerged: if self.trees().is_none() {
                unmerged
            } else {
                Vec::new()
            },
            ..Outcome::default()
        }
    }

    /// Submodules that go are taken down before the superproject removes their gitlinks; a
    /// failure is an entry error.
    fn take_down_submodules(
        &self,
        moves: &[crate::ops::update::submodule::Move],
        outcome: &mut Outcome,
    ) {
        if moves.is_empty() {
            return;
        }
        let modules = crate::ops::update::submodule::Modules::load(self.root);
        for m in moves.iter().filter(|m| m.new.is_none()) {
            let path = m.path.as_bstr();
            let taken = crate::ops::update::submodule::take_down(
                self.repo, self.root, &modules, path, self.opts, self.ctx,
            );
            if let Err(err) = taken {
                outcome.errors.push(crate::write::error::EntryError {
                    path: m.path.clone(),
                    message: err.to_string(),
                });
            }
        }
    }

    /// Remove what goes, make the places of the entries to write and write them: `None` when
    /// interrupted before the writers started. Where git dies (a removal or a place that
    /// fails, a required filter), the index from before is put back.
    fn write<'p>(
        &self,
        held: Held<'p>,
        rows: &mut [Row<'_>],
        blockers: &Blockers,
        prepared: &mut Prepared,
        outcome: &mut Outcome,
    ) -> Result<(Held<'p>, Option<Executed>), Error> {
        let cwd = self.opts.cwd.as_ref().map(|c| c.as_bstr());
        let removed = remove(
            self.root,
            rows,
            blockers,
            (&prepared.plan, cwd),
            self.mode,
            self.ctx.interrupt,
            outcome,
        );
        let spared = match removed {
            Ok(spared) => spared,
            Err(err) => return Err(held.abandon(err)),
        };
        let jobs: Vec<Job> = rows
            .iter()
            .filter_map(|r| {
                let replace = matches!(r.action, Action::Write { replace: true, .. });
                r.job.map(|entry| Job { entry, replace })
            })
            .collect();
        let died = make_places(self.root, &mut prepared.plan, &jobs, &prepared.in_places);
        let jobs = match &died {
            Some(stop) => {
                unmake_spared(self.root, &spared, stop);
                &jobs[..stop.at]
            }
            None => &jobs[..],
        };
        if self.ctx.interrupted() {
            return Ok((held, None));
        }
        let executed = self.execute(prepared, jobs);
        if let (Err(CheckoutError::Filter { .. }), Some(original)) = (&executed, &held.original) {
            held.lock
                .put_back(held.index_path, original.as_deref())
                .map_err(CheckoutError::from)?;
            return Err(executed.expect_err("matched above").into());
        }
        let executed = executed?;
        match died {
            Some(stop) => Err(held.abandon(died_at(stop, executed, outcome))),
            None => Ok((held, Some(executed))),
        }
    }

    /// Run the writers over `jobs` of the prepared plan.
    fn execute(&self, prepared: &Prepared, jobs: &[Job]) -> Result<Executed, CheckoutError> {
        crate::write::execute(
            self.repo,
            &prepared.plan,
            jobs,
            self.root,
            self.opts,
            crate::write::Filters {
                pipeline: &prepared.filter,
                attributes: &prepared.attributes,
                present: prepared.present,
            },
            self.ctx.progress,
            self.ctx.interrupt,
            false,
            None,
        )
    }

    /// The index of what is on disk now: the result index `state` with the stat data the
    /// writers returned (failed entries keep empty stat data) or, after an interruption, the
    /// old entries of whatever it left untouched.
    fn stat_data(
        &self,
        mut state: gix::index::State,
        rows: &[Row<'_>],
        executed: Option<&Executed>,
        interrupted: bool,
    ) -> gix::index::State {
        let stats = executed.map(|e| &e.stats[..]).unwrap_or(&[]);
        if interrupted {
            return result_index(self.repo, self.index, rows, Some(stats));
        }
        // The result index has one entry per row in the result, in row order.
        let in_result_rows = rows.iter().filter(|r| in_result(r));
        for (entry, row) in state.entries_mut().iter_mut().zip(in_result_rows) {
            if let Some(stat) = row.job.and_then(|j| stats.get(j).copied().flatten()) {
                entry.stat = stat;
            }
        }
        state
    }

    /// Once the superproject's files are written (its `.gitmodules` included): the submodules
    /// that appear or move follow, and a safe update with
    /// [`Options::report_local_changes`] lists the local changes it carried over.
    fn follow(
        &self,
        rows: &[Row<'_>],
        state: &gix::index::State,
        moves: &[crate::ops::update::submodule::Move],
        interrupted: bool,
        outcome: &mut Outcome,
    ) -> Result<(), Error> {
        if !interrupted && moves.iter().any(|m| m.new.is_some()) {
            let failed =
                bring_submodules(self.repo, self.root, moves, self.mode, self.opts, self.ctx);
            outcome.errors.extend(failed);
        }
        let new_tree = self.trees().map(|(_, new)| new);
        if let Some(new_tree) = new_tree
            .filter(|_| self.opts.report_local_changes && self.mode == Policy::Safe && !interrupted)
        {
            let verdicts = self.local_verdicts(rows, outcome);
            outcome.local_changes =
                local_changes(self.repo, self.root, new_tree, state, &verdicts)?;
        }
        Ok(())
    }

    /// The work tree's verdict on every entry of the result, for the local changes report.
    /// Entries that could not be written are local changes now: the old file stayed, or none
    /// is there (git's `show_local_changes` finds them so).
    fn local_verdicts(
        &self,
        rows: &[Row<'_>],
        outcome: &Outcome,
    ) -> Vec<Option<crate::inspect::refresh::State>> {
        let failed: HashSet<&BStr> = outcome.errors.iter().map(|e| e.path.as_bstr()).collect();
        let mut dirs = self.root.dirs();
        rows.iter()
            .filter(|r| in_result(r))
            .map(|r| {
                if r.job.is_some() && failed.contains(r.path) {
                    let there = dirs.lstat(r.path).ok().flatten().is_some();
                    return Some(if there {
                        crate::inspect::refresh::State::Modified
                    } else {
                        crate::inspect::refresh::State::Missing
                    });
                }
                // Written entries are what the target says; skip-worktree ones are not
                // looked at (git's diff-index trusts the bit).
                if r.job.is_some() || r.skip == Some(true) {
                    None
                } else {
                    r.state
                }
            })
            .collect()
    }

    /// Record the index of what is on disk under the held lock, with the cache-tree and the
    /// untracked cache kept where no entry changed. With
    /// [`Options::keep_index_on_failed_writes`] and failed entries, the index from before is
    /// put back instead. After an interruption the index is recorded, then the update fails.
    fn record(
        &self,
        held: Held<'_>,
        state: gix::index::State,
        rows: &[Row<'_>],
        interrupted: bool,
        mut outcome: Outcome,
    ) -> Result<Outcome, Error> {
        let trees = self.trees().is_some();
        let (changed_paths, changed) = changed(rows, trees);
        let cache_tree = if !trees && !self.expanded {
            crate::index::record::CacheTree::Kept
        } else if self.opts.prime_cache_tree && trees {
            // git's `reset --hard` primes the cache-tree from the tree it reset to.
            crate::index::record::CacheTree::Primed(Some(&changed))
        } else {
            crate::index::record::CacheTree::Repair(&changed)
        };
        if self.opts.keep_index_on_failed_writes && !outcome.errors.is_empty() && !interrupted {
            // The index stays as it was before the new paths were announced; what was written
            // stays written. Best effort: when even that cannot be written (a full disk), the
            // index announcing the new paths stays, and the entries' errors are what is
            // reported.
            let errors = std::mem::take(&mut outcome.errors);
            return Err(held.abandon(CheckoutError::Entries(errors).into()));
        }
        // git's update_sparsity writes its index without updated_workdir, unpack_trees with it.
        let updated_workdir = !matches!(self.target, Target::Sparsity(_));
        let new_tree = self.trees().map(|(_, new)| new);
        let keep = crate::index::record::Keep {
            tree: new_tree.filter(|_| !interrupted),
            // A missing index is a new one: its version comes from the configuration.
            previous: (!self.unborn).then_some(&**self.index),
            cache_tree,
            resolve_undo: None,
            changed_paths: Some(&changed_paths),
            fsmonitor: self.fsmonitor,
        };
        record(
            held.lock,
            self.repo,
            state,
            updated_workdir,
            keep,
            &mut outcome,
        )?;
        mark("update: index written");
        if interrupted {
            return Err(CheckoutError::Interrupted.into());
        }
        Ok(outcome)
    }
}

/// The paths whose entries change, and their directories: only those get their cache-tree
/// rebuilt, and only theirs lose what the untracked cache knew of them. git's
/// `update_sparsity` (no `trees`) changes no entry but its skip-worktree bit, which no tree
/// records, and invalidates nothing (a sparse index's cache-tree counted its sparse
/// directories as one entry each, so that of an expanded one is repaired instead).
fn changed(rows: &[Row<'_>], trees: bool) -> (Vec<BString>, HashSet<BString>) {
    if !trees {
        return (Vec::new(), HashSet::new());
    }
    let paths: Vec<BString> = rows
        .iter()
        .filter(|r| r.unmerged || !matches!(r.action, Action::Keep))
        .map(|r| r.path.to_owned())
        .collect();
    let dirs = crate::index::record::changed_dirs(paths.iter().map(|p| p.as_bstr()));
    (paths, dirs)
}

/// Count what the writers did into `outcome`, their errors after those of the removals.
fn tally(outcome: &mut Outcome, executed: Executed) {
    outcome.written = executed.stats.iter().filter(|s| s.is_some()).count();
    outcome.workers = executed.workers;
    outcome.collisions = executed.collisions;
    outcome.errors.extend(executed.errors);
}

/// The error where the writers stopped as git's `checkout_entry` dies ([`Stop`]): the removals'
/// warnings and errors, then the writers', then the stop's own.
fn died_at(stop: Stop, executed: Executed, outcome: &mut Outcome) -> Error {
    let mut errors = std::mem::take(&mut outcome.errors);
    errors.extend(executed.errors);
    let mut kept = std::mem::take(&mut outcome.kept);
    kept.extend(stop.warning);
    Error::Died {
        kept,
        errors,
        message: stop.message,
    }
}
