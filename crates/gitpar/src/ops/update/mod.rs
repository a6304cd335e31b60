//! The two-way update of an existing work tree: `switch`, `checkout <branch>`, `checkout -f`,
//! `reset --hard`. From the index (and the old `HEAD` tree) to the target tree, write only what
//! changes, remove what the target lacks, and refuse before touching anything when local changes
//! or untracked files would be lost — git's `unpack_trees` with `twoway_merge` (safe) or
//! `oneway_merge` with `reset` (forced).
//!
//! The steps are the engine's usual ones: plan (both trees, validated) → classify every path
//! (a sorted three-way walk over old tree, index and new tree) → check the affected work tree
//! entries in parallel (lstat, and a re-hash where the stat data cannot decide) → remove (main
//! thread) → write (the pool of `crate::write`) → record the new index under the lock that was
//! taken first.
//!
//! An update of an empty work tree (no index entries, nothing but `.git`: after `git clone -n`)
//! has nothing to merge with and nothing on disk to check: it is a full checkout instead
//! (`initial.rs`), recorded by the same rules.

use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::fs::remove::Kept;
pub use crate::plan::sparse::{cone_warning, Left as SparseDirLeft};
pub use submodule::checkout_submodules;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;
use gix::index::entry::{Flags, Mode, Stat};

use crate::fs::lock::IndexLock;
use crate::fs::remove::Remover;
use crate::fs::{Dirs, Root};
use crate::inspect::refresh::StatRules;
use crate::plan::{self, Kind, Plan};
use crate::sys::context::Context;
use crate::write::error::{EntryError, Error as CheckoutError};
use crate::write::options::Options;
use crate::write::Job;

/// An update of an empty work tree taken as a full checkout.
pub(crate) mod initial;
mod run;
/// The submodules an update moves along: the one recursion of the engine, kept in this folder.
pub(crate) mod submodule;

use self::run::run;

/// How local changes are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `switch`/`checkout`: refuse if a local change or an untracked file would be lost; carry
    /// over local changes to paths the switch does not touch.
    Safe,
    /// `checkout -f`/`reset --hard`: the result is the target tree, local changes to tracked
    /// files are discarded, untracked files are removed only where they are in the way.
    Force,
}

/// What an update did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Entries written.
    pub written: usize,
    /// Work tree entries removed.
    pub removed: usize,
    /// Writer threads used.
    pub workers: usize,
    /// Paths that collided on a case-insensitive filesystem.
    pub collisions: Vec<BString>,
    /// With [`Options::report_local_changes`]: the differences between the target tree and the
    /// work tree that the update carried over, as git's switch lists them (`M`, `A` or `D`,
    /// and the path), in path order.
    pub local_changes: Vec<(char, BString)>,
    /// Submodule directories that were to go but stay, with why (files in them): git warns
    /// `unable to rmdir '<path>': <reason>` for each, before anything is written.
    pub kept: Vec<Kept>,
    /// Entries that could not be written (each names its path and the cause). The others were
    /// written and the index records them; as with git, a switch still moves `HEAD` (and exits
    /// 0, or 1 when forced); `reset --hard` fails instead
    /// ([`Options::keep_index_on_failed_writes`]).
    pub errors: Vec<EntryError>,
    /// Sparse checkout: paths outside the patterns that were left in the work tree because
    /// they have local changes (git's warning "The following paths are not up to date and were
    /// left despite sparse patterns"); and the files a forced update removed as they left the
    /// patterns with something at their path, which git calls not up to date and removes all
    /// the same (its plumbing line "Path '…' not uptodate; will not remove from working tree.").
    pub sparse_not_uptodate: Vec<BString>,
    /// Sparse checkout: paths that came into the patterns but were not written because
    /// something is already there (git's warning "The following paths were already present and
    /// thus not updated despite sparse patterns").
    pub sparse_orphaned: Vec<BString>,
    /// [`sparsity`]: unmerged paths, which keep their stages and files whatever the patterns
    /// say (git's warning "The following paths are unmerged and were left despite sparse
    /// patterns").
    pub sparse_unmerged: Vec<BString>,
    /// [`sparsity`] in cone mode: the directories outside the cone that were to be cleaned
    /// away but stay (untracked files in them, or a failed removal), in the order git warns.
    pub sparse_dirs_left: Vec<SparseDirLeft>,
    /// The index had no entries and the work tree nothing but `.git` (after `git clone -n`), so
    /// the update was a full checkout of the target: planned from the tree alone and written
    /// without looking at the disk first (`initial.rs`). `GIT_PAR_TRACE` says so.
    pub full_checkout: bool,
}

/// Why an update was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Local changes or untracked files would be lost; nothing was changed. The binary prints
    /// git's lists and messages.
    #[error("local changes would be overwritten")]
    WouldLose {
        /// Tracked paths with local changes the update would overwrite or remove.
        local: Vec<BString>,
        /// Untracked paths the update would overwrite.
        untracked: Vec<BString>,
        /// Directories the update would replace that hold untracked files.
        untracked_removed: Vec<BString>,
        /// Untracked files where a path both trees' difference deletes is (a deletion already
        /// staged): git refuses a safe update over them ("would be removed by checkout"),
        /// although it would leave them.
        untracked_deleted: Vec<BString>,
    },
    /// The index has unmerged entries.
    #[error("you need to resolve your current index first")]
    Unmerged(Vec<BString>),
    /// A forced update would overwrite or remove skip-worktree or assume-unchanged entries whose
    /// files changed; nothing was changed. git: `Entry '<path>' not uptodate. Cannot merge.`
    #[error("Entry '{}' not uptodate. Cannot merge.", .0.first().map(ToString::to_string).unwrap_or_default())]
    NotUptodate(Vec<BString>),
    /// Planning, writing or recording failed.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// A path could not be removed or inspected.
    #[error("unable to {action} '{path}': {}", crate::fs::strerror(.source))]
    Io {
        /// What we tried.
        action: &'static str,
        /// The path.
        path: BString,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// The index could not be read.
    #[error("unable to read the index: {0}")]
    Index(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The update would put an entry where the process's current directory is
    /// ([`Options::cwd`]); nothing was changed. git: "Refusing to remove the current working
    /// directory".
    #[error("Refusing to remove '{0}' since it is the current working directory.")]
    CwdInTheWay(BString),
    /// Submodules the update would move cannot follow (a missing commit, local changes in
    /// them); nothing was changed. git: each submodule's reasons and `Submodule '<path>' could
    /// not be updated.`, then "Cannot update submodule:" and the paths.
    #[error("Cannot update submodule: {}", .0.first().map(|r| r.path.to_string()).unwrap_or_default())]
    Submodules(Vec<SubmoduleRefused>),
    /// A submodule the update would move, add or remove has a symbolic link at its path or in
    /// a leading directory (git's `validate_submodule_path`, which stops a submodule operation
    /// from following a link out of the work tree); nothing was changed. git: its message,
    /// exit code 128.
    #[error("{0}")]
    SubmodulePathSymlink(String),
    /// The update stopped where git's sequential `checkout_entry` dies: a directory in an
    /// entry's place that could not be removed, or one of its directories that could not be
    /// made. The removals and the entries before it in index order were done, as git had done
    /// them; the index is the one from before, and the caller moves no ref. git prints the
    /// warnings and the errors of the entries before, then dies with `message`.
    #[error("{message}")]
    Died {
        /// Entries the removals left in place (git's warnings).
        kept: Vec<Kept>,
        /// Entries before the stop that could not be written (git's errors).
        errors: Vec<EntryError>,
        /// git's words: `cannot create directory at '<dir>': <reason>`, `cannot unlink
        /// '<path>': <reason>`, `cannot rmdir '<dir>': <reason>`.
        message: String,
    },
    /// Entries could not be written, and then the index could not be recorded either (a full
    /// disk): git prints the entries' errors, then dies on the index. The old index stands and
    /// the caller moves no ref.
    #[error("{source}")]
    Unrecorded {
        /// The entries that failed, with git's messages.
        errors: Vec<EntryError>,
        /// Why the index could not be written.
        #[source]
        source: CheckoutError,
    },
}

/// A populated submodule that cannot follow an update, and why.
#[derive(Debug)]
pub struct SubmoduleRefused {
    /// The submodule's path in the superproject.
    pub path: BString,
    /// Why.
    pub reason: SubmoduleRefusal,
}

/// Why a submodule cannot follow an update (git's `submodule_move_head` dry run).
#[derive(Debug, thiserror::Error)]
pub enum SubmoduleRefusal {
    /// A safe update, and the submodule's index differs from its `HEAD`.
    #[error("submodule '{0}' has dirty index")]
    DirtyIndex(BString),
    /// The submodule lacks the commit the superproject records.
    #[error("failed to unpack tree object {0}")]
    MissingCommit(ObjectId),
    /// The submodule's own update refuses (local changes, its own submodules).
    #[error(transparent)]
    Update(Box<Error>),
}

/// One side's view of a path: object id and index mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    id: ObjectId,
    mode: Mode,
}

/// What happens to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Keep the index entry (and the work tree) as they are.
    Keep,
    /// Write the new entry; `verify` says whether the current work tree file must be unchanged,
    /// `replace` whether a tracked file is at the path now (its writer replaces it).
    Write { verify: bool, replace: bool },
    /// Remove from index and work tree; `verify` as above.
    Remove { verify: bool },
    /// In the result with the skip-worktree bit (sparse checkout) and not written; `unlink`
    /// removes the tracked file the work tree holds now (it left the sparse patterns).
    Record { unlink: bool },
    /// Not in the result, nothing on disk to do (e.g. a staged deletion that stays deleted).
    Drop,
    /// A staged change that conflicts with the target: refuse.
    Reject,
}

/// One path of the update: what the index has, what the target wants, what happens to it and,
/// once the update ran, what did happen.
#[derive(Debug)]
struct Row<'a> {
    path: &'a BStr,
    /// The stage-0 index entry; for an unmerged path (forced updates only), its first stage.
    cur: Option<&'a gix::index::Entry>,
    /// The index holds this path in conflict stages.
    unmerged: bool,
    /// The target's entry.
    new: Option<(ObjectId, Kind)>,
    action: Action,
    /// The refresh's verdict on the work tree entry, for rows whose index entry was checked.
    state: Option<crate::inspect::refresh::State>,
    /// The removal step has dealt with this row (so an interrupted update knows the work tree
    /// entry is gone).
    removed: bool,
    /// Index into the write plan, for rows that are written.
    job: Option<usize>,
    /// Sparse checkout's verdict: the result entry's skip-worktree bit. `None` when the work
    /// tree is not sparse (the entry keeps the bits it has, as git's `merged_entry` does).
    skip: Option<bool>,
}

/// The untracked files a forced update removes because they are in the way.
#[derive(Debug, Default)]
struct Blockers {
    files: Vec<BString>,
    dirs: Vec<BString>,
}

/// Update the work tree and index at `index_path` from their current state (whose `HEAD` tree
/// is `old_tree`) to `new_tree`: classify → verify → remove → write → record.
///
/// The index lock is taken first. A refusal (local changes, untracked files in the way,
/// unmerged entries) happens before anything is touched. Files that replace tracked ones are
/// replaced by their writer, one at a time, so an interruption leaves every path old or new;
/// after Ctrl-C the index is written to describe the work tree as it was left (HEAD is the
/// caller's to leave alone) and [`CheckoutError::Interrupted`] is returned. Entries that fail to
/// write are listed in [`Outcome::errors`]; the others are written and recorded, as git does.
#[allow(clippy::too_many_arguments)]
pub fn update(
    repo: &gix::Repository,
    old_tree: Option<ObjectId>,
    new_tree: ObjectId,
    worktree: &Path,
    index_path: &Path,
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    run(
        repo,
        Target::Trees(old_tree, new_tree),
        (worktree, index_path),
        mode,
        opts,
        ctx,
        false,
    )
}

/// [`update`] without changing anything: the refusals it would make (git's `read-tree -n`),
/// used to check a submodule before its superproject moves.
#[allow(clippy::too_many_arguments)]
pub fn check(
    repo: &gix::Repository,
    old_tree: Option<ObjectId>,
    new_tree: ObjectId,
    worktree: &Path,
    index_path: &Path,
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<(), Error> {
    run(
        repo,
        Target::Trees(old_tree, new_tree),
        (worktree, index_path),
        mode,
        opts,
        ctx,
        true,
    )
    .map(|_| ())
}

/// Which patterns [`sparsity`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The work tree's recorded ones (`core.sparseCheckout`, `$GIT_DIR/info/sparse-checkout`,
    /// `core.sparseCheckoutCone`), as `git sparse-checkout set/add/init/reapply` leave them.
    Recorded,
    /// [`Selection::Recorded`], applied by the command that just turned the sparse checkout
    /// on: git read the index before it did, so skip-worktree entries whose files are present
    /// keep their bit (git clears it at the next read, `clear_skip_worktree_from_present_files`,
    /// and does so here only once the sparse checkout was on).
    Enabled,
    /// Every path (`git sparse-checkout disable`'s `/*`): the whole index is brought back.
    Everything,
}

/// git's `update_sparsity` (then, for the recorded patterns, its
/// `clean_tracked_sparse_directories`): the index's own entries (not a tree: staged changes stay staged)
/// get the skip-worktree bit the patterns decide, and the work tree follows. Entries that leave
/// the patterns are removed from the disk unless they have local changes (then they stay, their
/// bit clear, listed in [`Outcome::sparse_not_uptodate`]); entries that enter them are written
/// from the index unless something is already there ([`Outcome::sparse_orphaned`]); unmerged
/// paths stay as they are ([`Outcome::sparse_unmerged`]). None of these refuse the update: git
/// warns and goes on. The index is written under its lock, as for every update (with
/// [`Options::keep_index_on_failed_writes`], not when entries could not be written).
pub fn sparsity(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    selection: Selection,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    let mut outcome = run(
        repo,
        Target::Sparsity(selection),
        (worktree, index_path),
        Policy::Safe,
        opts,
        ctx,
        false,
    )?;
    // git's `clean_tracked_sparse_directories`, on the index as written.
    if selection != Selection::Everything {
        let (index, _) = read_index(index_path, repo.object_hash())?;
        let root = Root::open(worktree).map_err(|source| Error::Io {
            action: "open the work tree",
            path: BString::from(worktree.as_os_str().as_encoded_bytes()),
            source,
        })?;
        outcome.sparse_dirs_left = crate::plan::sparse::clean_directories(repo, &root, &index);
    }
    Ok(outcome)
}

/// What an update brings the work tree to: another tree, or the same index under new sparse
/// patterns.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// From the index (whose `HEAD` tree is the first) to the second tree.
    Trees(Option<ObjectId>, ObjectId),
    /// The index itself, under [`Selection`]'s patterns ([`sparsity`]).
    Sparsity(Selection),
}

/// Bring the submodules of `moves` that appear or move to their commits, once the
/// superproject's files (its `.gitmodules` included) are written: each failure as an entry error
/// with git's words, which end in "Submodule '<path>' could not be updated.".
pub(crate) fn bring_submodules(
    repo: &gix::Repository,
    root: &Root,
    moves: &[crate::ops::update::submodule::Move],
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Vec<EntryError> {
    let mut errors = Vec::new();
    for (path, message) in
        crate::ops::update::submodule::bring_all(repo, root, moves, mode, opts, ctx)
    {
        // The caller prints "error: " before the message, as for every entry.
        let details = message.strip_prefix("error: ").unwrap_or(&message);
        let message = if details.is_empty() {
            format!("Submodule '{path}' could not be updated.")
        } else {
            format!("{details}\nerror: Submodule '{path}' could not be updated.")
        };
        errors.push(EntryError { path, message });
    }
    errors
}

/// Write the updated index `state` into the held `lock` as `keep` says. When the index cannot
/// be written after entries failed (a full disk), the entries' own failures (the cause, with
/// their paths) are returned with it rather than lost behind the index's: git prints them first.
/// `updated_workdir`: the work tree was updated with it (`post-index-change`'s first
/// argument, see [`crate::repo::hooks::on_index_change`]).
pub(crate) fn record(
    lock: IndexLock,
    repo: &gix::Repository,
    state: gix::index::State,
    updated_workdir: bool,
    keep: crate::index::record::Keep<'_>,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    recorded(
        crate::index::record::commit(lock, repo, state, keep),
        outcome,
    )?;
    crate::repo::hooks::index_changed(repo, updated_workdir, false);
    Ok(())
}

/// [`record`] of an index encoded while its files were written ([`crate::index::record::Prepared`]),
/// with their stat data.
pub(crate) fn record_prepared(
    lock: IndexLock,
    repo: &gix::Repository,
    prepared: crate::index::record::Prepared,
    stats: Vec<Option<gix::index::entry::Stat>>,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    recorded(
        crate::index::record::commit_prepared(lock, prepared, stats),
        outcome,
    )?;
    crate::repo::hooks::index_changed(repo, true, false);
    Ok(())
}

/// The result of recording an index: a failure after entries failed too returns their
/// failures with it (see [`record`]).
fn recorded(
    result: Result<(), crate::fs::lock::Error>,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    let Err(err) = result else {
        return Ok(());
    };
    let source = CheckoutError::from(err);
    if outcome.errors.is_empty() {
        return Err(source.into());
    }
    Err(Error::Unrecorded {
        errors: std::mem::take(&mut outcome.errors),
        source,
    })
}

/// The paths the index holds in conflict stages, sorted.
fn unmerged_paths(index: &gix::index::File) -> Vec<BString> {
    let mut out: Vec<BString> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(index).to_owned())
        .collect();
    out.dedup();
    out
}

/// What the target changes: in a safe update only the paths that differ between the two trees
/// (identical subtrees are not even read); in a forced one, or on an unborn index (git's
/// `initial_checkout`: nothing is recorded, so everything is written), every path of the target.
fn targets(
    repo: &gix::Repository,
    old_tree: Option<ObjectId>,
    new_tree: ObjectId,
    mode: Policy,
    unborn: bool,
    opts: &Options,
) -> Result<(Vec<plan::Change>, Vec<BString>), Error> {
    if new_tree.is_empty_tree() {
        // The empty tree (`reset --hard` on an unborn branch, `switch --orphan`) is not in the
        // object database: every path of the old tree goes, or (forced) of the index.
        let changes = match old_tree.filter(|_| mode == Policy::Safe && !unborn) {
            Some(old) => plan::from_tree(&repo.objects, old, opts.protect)
                .map_err(CheckoutError::from)?
                .entries
                .into_iter()
                .map(|e| plan::Change {
                    path: e.path,
                    old: Some((e.id, e.kind)),
                    new: None,
                })
                .collect(),
            None => Vec::new(),
        };
        return Ok((changes, Vec::new()));
    }
    if mode == Policy::Safe && !unborn {
        // The empty tree need not be in the object database: diffing from it is diffing from
        // nothing.
        let old_tree = old_tree.filter(|t| !t.is_empty_tree());
        let d = plan::diff(&repo.objects, old_tree, new_tree, opts.protect)
            .map_err(CheckoutError::from)?;
        return Ok((d.changes, d.new_dirs));
    }
    let p = plan::from_tree(&repo.objects, new_tree, opts.protect).map_err(CheckoutError::from)?;
    let changes = p
        .entries
        .into_iter()
        .map(|e| plan::Change {
            path: e.path,
            old: None,
            new: Some((e.id, e.kind)),
        })
        .collect();
    Ok((changes, p.dirs))
}

/// Classify every path with a merge walk over the sorted targets and index entries: git's
/// `twoway_merge` (safe) or `oneway_merge` (forced) per path. Unmerged paths (forced updates
/// only; safe ones were refused) become the target's entry or go away.
fn classify<'a>(
    index: &'a gix::index::File,
    targets: &'a [plan::Change],
    mode: Policy,
    unborn: bool,
) -> Vec<Row<'a>> {
    use std::cmp::Ordering as O;
    // Stage-0 entries and the first stage of each unmerged path, in path order.
    let mut current: Vec<(&gix::index::Entry, bool)> = Vec::with_capacity(index.entries().len());
    for e in index.entries() {
        let unmerged = e.stage_raw() != 0;
        if unmerged
            && current
                .last()
                .is_some_and(|(l, _)| l.path(index) == e.path(index))
        {
            continue;
        }
        current.push((e, unmerged));
    }
    let mut rows = Vec::with_capacity(current.len() + targets.len());
    let mut t_iter = targets.iter().peekable();
    let mut c_iter = current.into_iter().peekable();
    loop {
        let order = match (t_iter.peek(), c_iter.peek()) {
            (None, None) => break,
            (Some(_), None) => O::Less,
            (None, Some(_)) => O::Greater,
            (Some(t), Some((c, _))) => t.path.as_bstr().cmp(c.path(index)),
        };
        let (change, cur) = match order {
            O::Less => (t_iter.next(), None),
            O::Greater => (None, c_iter.next()),
            O::Equal => (t_iter.next(), c_iter.next()),
        };
        let path: &BStr = match (change, cur) {
            (_, Some((c, _))) => c.path(index),
            (Some(ch), None) => ch.path.as_bstr(),
            (None, None) => unreachable!("one side was peeked"),
        };
        let unmerged = cur.is_some_and(|(_, u)| u);
        let o = change.and_then(|c| c.old).map(side_of);
        let n = change.and_then(|c| c.new);
        let i_side = cur.filter(|(_, u)| !u).map(|(c, _)| side_of_entry(c));
        let action = match (mode, change) {
            _ if unmerged => match n {
                Some(_) => Action::Write {
                    verify: false,
                    replace: true,
                },
                None => Action::Remove { verify: false },
            },
            // Not changed between the trees: whatever the index has stays.
            (Policy::Safe, None) => Action::Keep,
            (Policy::Safe, Some(_)) if unborn => twoway(None, i_side, n.map(side_of)),
            (Policy::Safe, Some(_)) => twoway(o, i_side, n.map(side_of)),
            (Policy::Force, _) => oneway(i_side, n.map(side_of)),
        };
        rows.push(Row {
            path,
            cur: cur.map(|(c, _)| c),
            unmerged,
            new: n,
            action,
            state: None,
            removed: false,
            job: None,
            skip: None,
        });
    }
    rows
}

/// A safe update keeps index entries that neither tree has (staged additions). Where the
/// target turns such an entry's leading directory into a file, keeping it would leave a
/// directory/file conflict in the index (`P` and `P/x` both tracked), and dropping it would
/// lose the staged file: the row is refused as a local change ("would be overwritten by
/// checkout"), so nothing changes. git's `unpack_trees` gets this case wrong in ways that
/// depend on how the neighbouring paths sort (t1092's "checkout behaves oddly with
/// df-conflict-1/2", a NEEDSWORK): it deletes the staged file, or leaves the target's file
/// out, without a word. (The converse, a staged file where the target needs a directory, is
/// refused by the untracked check, with git's message.)
fn reject_kept_in_the_way(rows: &mut [Row<'_>]) {
    let kept = |r: &Row<'_>| r.action == Action::Keep && r.cur.is_some();
    let mut reject = Vec::new();
    let mut prefix = Vec::new();
    for row in rows
        .iter()
        .filter(|r| matches!(r.action, Action::Write { .. }))
    {
        prefix.clear();
        prefix.extend_from_slice(row.path);
        prefix.push(b'/');
        let start = rows.partition_point(|r| r.path < prefix.as_bstr());
        reject.extend(
            (start..rows.len())
                .take_while(|&j| rows[j].path.starts_with(&prefix))
                .filter(|&j| kept(&rows[j])),
        );
    }
    for j in reject {
        rows[j].action = Action::Reject;
    }
}

/// The converse of [`reject_kept_in_the_way`] that the untracked check cannot see: a staged
/// file kept at `P` where the target brings entries below `P/` that the sparse patterns leave
/// out of the work tree (nothing is written, so nothing is in the way on disk). git's index then
/// drops the staged file without a word; the row is refused as a local change instead, so that
/// nothing changes and the index never holds both `P` and `P/x`.
fn reject_kept_over_skipped(rows: &mut [Row<'_>]) {
    let mut reject = Vec::new();
    for row in rows
        .iter()
        .filter(|r| r.skip == Some(true) && r.cur.is_none() && r.new.is_some())
    {
        for dir in crate::fs::leading_dirs(row.path) {
            let at = rows.partition_point(|r| r.path < dir);
            if rows
                .get(at)
                .is_some_and(|r| r.path == dir && r.action == Action::Keep && r.cur.is_some())
            {
                reject.push(at);
            }
        }
    }
    for j in reject {
        rows[j].action = Action::Reject;
    }
}

/// The submodules a recursive update moves, from its rows: gitlinks that go or turn into
/// something else, gitlinks that appear or change commit, and — in a forced update — every
/// gitlink that stays (git resets their work trees).
fn submodule_moves(rows: &[Row<'_>], mode: Policy) -> Vec<crate::ops::update::submodule::Move> {
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| !r.unmerged) {
        let old = row
            .cur
            .filter(|c| c.mode == Mode::COMMIT && !c.flags.contains(Flags::SKIP_WORKTREE))
            .map(|c| c.id);
        let new = row
            .new
            .filter(|(_, kind)| *kind == Kind::Gitlink)
            .map(|(id, _)| id);
        let (old, new) = match row.action {
            Action::Remove { .. } => (old, None),
            Action::Write { .. } => (old, new),
            Action::Keep if mode == Policy::Force => (old, old),
            _ => continue,
        };
        if old.is_some() || new.is_some() {
            out.push(crate::ops::update::submodule::Move {
                path: row.path.to_owned(),
                old,
                new,
            });
        }
    }
    out
}

/// The paths sparse checkout could not apply its patterns to; git warns and goes on.
#[derive(Debug, Default)]
struct SparseWarnings {
    not_uptodate: Vec<BString>,
    orphaned: Vec<BString>,
}

/// Sparse checkout, first half (git's `mark_new_skip_worktree`): decide for every entry of the
/// result whether the patterns leave it out, and settle the rows whose entry stays outside:
/// they are recorded without touching the work tree, and a removal there leaves the disk alone
/// (`apply_sparse_checkout` clears `CE_UPDATE`/`CE_WT_REMOVE` for them). Rows whose entry
/// enters or leaves the patterns are settled by [`apply_sparse`] once the refresh has looked at
/// their files.
///
/// A removal is decided when its entry had the bit, and in a forced update always: git's
/// `oneway_merge` puts the index entry itself, with the `CE_NEW_SKIP_WORKTREE` the patterns
/// gave it, in the result as removed, so a file that leaves the patterns as it goes is looked
/// at as one that leaves them (no check for untracked files in its place, `apply_sparse`'s
/// warning). A safe update's `twoway_merge` removes the old tree's entry, which has no such bit.
fn mark_sparse(
    repo: &gix::Repository,
    (root, sparse): (&Root, &crate::plan::sparse::Sparse),
    rows: &mut [Row<'_>],
    mode: Policy,
) -> Result<(), Error> {
    let decided: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.unmerged)
        .filter(|(_, r)| match r.action {
            Action::Keep | Action::Write { .. } => true,
            Action::Remove { .. } => was_skipped(r) || mode == Policy::Force,
            _ => false,
        })
        .map(|(k, _)| k)
        .collect();
    let mut dirs = root.dirs();
    let excluded = sparse
        .excluded_as_on_disk(
            repo.object_hash(),
            decided.iter().map(|&k| {
                let r = &rows[k];
                let mode = match (r.action, r.new, r.cur) {
                    (Action::Write { .. }, Some((_, kind)), _) => kind.index_mode(),
                    (_, _, Some(c)) => c.mode,
                    (_, Some((_, kind)), None) => kind.index_mode(),
                    (_, None, None) => Mode::FILE,
                };
                (r.path, mode)
            }),
            |path| dirs.file_type(path).ok().flatten() == Some(crate::fs::FileType::Directory),
        )
        .map_err(CheckoutError::from)?;
    for (k, skip) in decided.into_iter().zip(excluded) {
        let row = &mut rows[k];
        let was = was_skipped(row);
        match row.action {
            Action::Remove { .. } if was && skip => {
                row.action = Action::Drop;
                row.skip = Some(true);
            }
            // A forced removal of a file that leaves the patterns ([`apply_sparse`] warns).
            Action::Remove { .. } if skip && !was => row.skip = Some(true),
            Action::Remove { .. } => {}
            Action::Write { .. } if skip && (was || row.cur.is_none()) => {
                row.action = Action::Record { unlink: false };
                row.skip = Some(true);
            }
            _ => row.skip = Some(skip),
        }
    }
    Ok(())
}

/// Whether the row's current index entry has the skip-worktree bit.
fn was_skipped(row: &Row<'_>) -> bool {
    row.cur
        .is_some_and(|c| c.flags.contains(Flags::SKIP_WORKTREE))
}

/// Sparse checkout, second half (git's `apply_sparse_checkout`), with the refresh's verdicts:
/// a tracked file that leaves the patterns is removed from the work tree unless it has local
/// changes that a safe update keeps (then it stays, with a warning, or — when the target
/// changes it — the update is refused as any local change would be); an entry that enters them
/// is written unless something is already there (a warning, as git's).
///
/// With `stat_decides` (git's `update_sparsity`, which reads the index without refreshing it),
/// a file whose stat data changed counts as not up to date even when its content did not, as
/// git's `ie_match_stat` has it (times in whole seconds, [`StatRules::same_as_git`]); only a
/// racily clean entry is compared by content.
fn apply_sparse(
    root: &Root,
    rows: &mut [Row<'_>],
    (mode, stat_decides): (Policy, bool),
    (rules, clears_untracked): (StatRules, bool),
) -> Result<SparseWarnings, Error> {
    /// What is at the directory of the entries that come back.
    enum Parent {
        Present,
        Missing,
        /// A non-directory at this leading path.
        Blocked(BString),
    }
    let mut warnings = SparseWarnings::default();
    let mut dirs = root.dirs();
    let mut parent: Option<(BString, Parent)> = None;
    for row in rows.iter_mut() {
        let Some(skip) = row.skip else { continue };
        let was = was_skipped(row);
        let stat_changed = match (row.state, row.cur) {
            (Some(crate::inspect::refresh::State::Refreshed(fresh)), Some(c)) => {
                !rules.same_as_git(&c.stat, &fresh)
            }
            _ => false,
        };
        let changed = row.state.is_some_and(|s| s.is_changed()) || (stat_decides && stat_changed);
        let missing = row.state == Some(crate::inspect::refresh::State::Missing);
        let dirty = changed && !missing && mode == Policy::Safe;
        match (was, skip, row.action) {
            (false, true, Action::Write { verify: true, .. }) if dirty => {}
            (false, true, Action::Keep) if dirty => {
                row.skip = Some(false);
                warnings.not_uptodate.push(row.path.to_owned());
            }
            (false, true, Action::Keep | Action::Write { .. }) => {
                row.action = Action::Record {
                    unlink: row.cur.is_some() && !missing,
                };
            }
            // A forced removal of a file that leaves the patterns: git's
            // `verify_uptodate_sparse` looks at the entry it already marked `CE_REMOVE`, which
            // `ie_match_stat` calls changed whatever the file is, so anything at the path is
            // "not uptodate", with a warning. Its `CE_WT_REMOVE` stays all the same: the file
            // is removed (a directory in its place cannot be, and stays with its own warning).
            (false, true, Action::Remove { .. }) if removal_not_uptodate(root, row) => {
                warnings.not_uptodate.push(row.path.to_owned());
            }
            (true, false, Action::Keep) if clears_untracked => {
                // A reset that overwrites untracked files writes the entry whatever is there
                // (git's `verify_absent` does not look then): what is in its place or in the
                // place of its directories is replaced, as git's `checkout_entry` replaces it.
                let c = row.cur.expect("a kept row has an index entry");
                if let Some(kind) = Kind::from_index_mode(c.mode) {
                    let there = dirs.file_type(row.path).ok().flatten();
                    row.new = Some((c.id, kind));
                    row.action = Action::Write {
                        verify: false,
                        replace: there.is_some_and(|t| t != crate::fs::FileType::Directory),
                    };
                }
            }
            (true, false, Action::Keep) => {
                // A file where a leading directory should be (git's `check_leading_path`):
                // that file is what is in the way. Entries come in path order: the answer for
                // their directory is reused, and a missing directory holds nothing.
                let (dir, _) = crate::fs::split_path(row.path);
                if parent.as_ref().is_none_or(|(d, _)| d.as_bstr() != dir) {
                    let state = match leading_non_dir(&mut dirs, row.path) {
                        Some(file) => Parent::Blocked(file.to_owned()),
                        None if dir.is_empty() => Parent::Present,
                        None => match dirs.file_type(dir) {
                            Ok(Some(crate::fs::FileType::Directory)) => Parent::Present,
                            _ => Parent::Missing,
                        },
                    };
                    parent = Some((dir.to_owned(), state));
                }
                let there = match parent.as_ref().map(|(_, state)| state) {
                    Some(Parent::Blocked(file)) => {
                        warnings.orphaned.push(file.clone());
                        continue;
                    }
                    Some(Parent::Missing) => None,
                    _ => dirs.file_type(row.path).map_err(|source| Error::Io {
                        action: "lstat",
                        path: row.path.to_owned(),
                        source,
                    })?,
                };
                let c = row.cur.expect("a kept row has an index entry");
                let kind = Kind::from_index_mode(c.mode);
                if let (None, Some(kind)) = (there, kind) {
                    row.new = Some((c.id, kind));
                    row.action = Action::Write {
                        verify: false,
                        replace: false,
                    };
                } else {
                    warnings.orphaned.push(row.path.to_owned());
                }
            }
            _ => {}
        }
    }
    Ok(warnings)
}

/// git's `verify_uptodate_1` for an entry it already marked `CE_REMOVE`, which `ie_match_stat`
/// calls changed whatever is there: not up to date when git's `lstat` (which follows symlinks
/// in leading directories) finds anything at the path; a gitlink never (git lets a submodule be
/// out of sync unless it recurses into submodules). The refresh calls a path missing also
/// behind a file or a symlink in a leading directory, where git's `lstat` fails with `ENOTDIR`
/// or follows the link: those are looked at again. Only `ENOENT` is nothing.
fn removal_not_uptodate(root: &Root, row: &Row<'_>) -> bool {
    if row.cur.is_none_or(|c| c.mode == Mode::COMMIT) {
        return false;
    }
    match row.state {
        Some(crate::inspect::refresh::State::Missing) => {
            !matches!(root.lstat_through_leading_links(row.path), Ok(None))
        }
        Some(_) => true,
        None => false,
    }
}

/// Check the work tree against the rows: refresh every tracked entry in parallel (lstat, and a
/// re-hash where stat data cannot decide), turn the verdicts into local changes that refuse a
/// safe update or rewrites of a forced one, and find untracked files in the way. Nothing is
/// changed on disk; a refusal is [`Error::WouldLose`].
fn verify(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::File,
    rows: &mut [Row<'_>],
    new_dirs: &mut Vec<BString>,
    (mode, stat_decides): (Policy, bool),
    opts: &Options,
) -> Result<(Blockers, SparseWarnings), Error> {
    refresh_rows(repo, root, index, rows, mode, opts)?;
    let rules = StatRules::of(repo);
    missing_behind_a_file(root, rows, mode, rules);
    let clears_untracked = Rules::of(mode, opts).clears_untracked;
    let mut sparse_warnings =
        apply_sparse(root, rows, (mode, stat_decides), (rules, clears_untracked))?;
    let mut local = Vec::new();
    let mut not_uptodate = Vec::new();
    for row in rows.iter_mut() {
        match settle(row, mode, rules) {
            Some(Lost::Local) => local.push(row.path.to_owned()),
            Some(Lost::NotUptodate) => not_uptodate.push(row.path.to_owned()),
            None => {}
        }
    }
    if !not_uptodate.is_empty() {
        return Err(not_uptodate_refusal(
            (repo, root, index),
            rows,
            (mode, opts),
            not_uptodate,
        )?);
    }
    refuse_cwd(rows, opts)?;
    keep_needed_dirs(rows, new_dirs);
    let mut found = untracked_in_the_way(repo, root, index, rows, mode, opts)?;
    if rows.iter().any(|r| r.skip.is_some()) {
        sparse_orphans(rows, &mut found, &mut sparse_warnings);
    }
    Ok((refusal(local, found)?, sparse_warnings))
}

/// What a row's local change would lose, when the update may not go on over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lost {
    /// A local change (or a staged one that conflicts) that refuses a safe update.
    Local,
    /// A changed skip-worktree or assume-unchanged entry, which stops even a forced update.
    NotUptodate,
}

/// Settle one row once the refresh gave its verdict on the work tree entry: a forced update
/// rewrites a changed file it would keep, a missing file needs no removal and no replacing, and
/// what the update would lose is returned ([`verify`] refuses over it).
fn settle(row: &mut Row<'_>, mode: Policy, rules: StatRules) -> Option<Lost> {
    // A submodule that moves to another commit keeps its directory (git leaves it alone).
    let gitlink_to_gitlink = row.cur.is_some_and(|c| c.mode == Mode::COMMIT)
        && row.new.is_some_and(|(_, kind)| kind == Kind::Gitlink);
    if let (true, Action::Write { replace, .. }) = (gitlink_to_gitlink, &mut row.action) {
        *replace = false;
    }
    if row.action == Action::Reject {
        return Some(Lost::Local);
    }
    let state = row.state?;
    let missing = state == crate::inspect::refresh::State::Missing;
    let changed = state.is_changed();
    // git's `verify_uptodate`: skip-worktree and assume-unchanged entries are trusted until
    // they would be overwritten or removed; then a changed file stops even a forced update
    // ("Entry '...' not uptodate. Cannot merge."). A missing one is fine.
    let protected = row.cur.is_some_and(|c| {
        c.flags
            .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
    });
    if protected
        && changed
        && !missing
        && matches!(row.action, Action::Write { .. } | Action::Remove { .. })
        && row.new.map(side_of) != row.cur.map(side_of_entry)
    {
        return Some(match mode {
            Policy::Safe => Lost::Local,
            Policy::Force => Lost::NotUptodate,
        });
    }
    // A forced update rewrites a file whose stat data changed even when its content did
    // not (git's `oneway_merge` for a reset looks at the stat data only): a touched file
    // in a directory that cannot be written then fails as with git.
    let touched = match (state, row.cur) {
        (crate::inspect::refresh::State::Refreshed(fresh), Some(c)) => {
            !rules.same_as_git(&c.stat, &fresh)
        }
        _ => false,
    };
    match (&mut row.action, mode) {
        (Action::Keep, Policy::Force) if changed || touched => {
            row.action = Action::Write {
                verify: false,
                replace: !missing,
            };
        }
        (Action::Remove { .. }, _) if missing => row.action = Action::Drop,
        (Action::Write { replace, .. }, _) if missing => *replace = false,
        (Action::Write { verify: true, .. } | Action::Remove { verify: true }, Policy::Safe)
            if changed =>
        {
            return Some(Lost::Local);
        }
        _ => {}
    }
    None
}

/// git's `verify_absent` and `verify_clean_subdirectory`: the current directory
/// ([`Options::cwd`]) is never removed to make room for an entry.
fn refuse_cwd(rows: &[Row<'_>], opts: &Options) -> Result<(), Error> {
    if let Some(cwd) = &opts.cwd {
        let in_the_way = rows
            .iter()
            .any(|r| matches!(r.action, Action::Write { .. }) && r.path == cwd.as_bstr());
        if in_the_way {
            return Err(Error::CwdInTheWay(cwd.clone()));
        }
    }
    Ok(())
}

/// Only the directories of entries that are written need to exist: a directory the target
/// keeps but writes nothing into is left as it is (a symlink in its place included, as git
/// leaves it).
fn keep_needed_dirs(rows: &[Row<'_>], new_dirs: &mut Vec<BString>) {
    let needed: HashSet<&BStr> = crate::fs::leading_dirs_of(
        rows.iter()
            .filter(|r| matches!(r.action, Action::Write { .. }))
            .map(|r| r.path),
    )
    .collect();
    new_dirs.retain(|d| needed.contains(d.as_bstr()));
}

/// With sparse checkout, an untracked file where a new entry goes is only a warning, and the
/// file is overwritten (git's `verify_absent` of `CE_ADDED` entries after
/// `mark_new_skip_worktree`: "Inability to sparsify or de-sparsify individual paths is not an
/// error, but just a warning"): move those of `found` to the blockers and the warnings.
fn sparse_orphans(rows: &[Row<'_>], found: &mut InTheWay, sparse_warnings: &mut SparseWarnings) {
    let added: HashSet<&BStr> = rows
        .iter()
        .filter(|r| r.cur.is_none() && matches!(r.action, Action::Write { .. }))
        .map(|r| r.path)
        .collect();
    let (orphaned, rest): (Vec<BString>, Vec<BString>) = std::mem::take(&mut found.untracked)
        .into_iter()
        .partition(|p| added.contains(p.as_bstr()));
    found.untracked = rest;
    found.blockers.files.extend(orphaned.iter().cloned());
    found.blockers.files.sort();
    sparse_warnings.orphaned.extend(orphaned);
    sparse_warnings.orphaned.sort();
    sparse_warnings.orphaned.dedup();
}

/// git's plumbing messages (a forced update that protects untracked files) name the first
/// refused path only: an untracked one before the first entry that is not up to date is the
/// one git names.
fn not_uptodate_refusal(
    (repo, root, index): (&gix::Repository, &Root, &gix::index::File),
    rows: &[Row<'_>],
    (mode, opts): (Policy, &Options),
    not_uptodate: Vec<BString>,
) -> Result<Error, Error> {
    let first = not_uptodate.iter().min().expect("not empty");
    if opts.protect_untracked {
        let found = untracked_in_the_way(repo, root, index, rows, mode, opts)?;
        let earlier = |list: &Vec<BString>| list.iter().min().is_some_and(|p| p < first);
        if earlier(&found.untracked) || earlier(&found.untracked_removed) {
            return Ok(Error::WouldLose {
                local: Vec::new(),
                untracked: found.untracked,
                untracked_removed: found.untracked_removed,
                untracked_deleted: Vec::new(),
            });
        }
    }
    Ok(Error::NotUptodate(not_uptodate))
}

/// The refusal, if any, of the tracked paths with local changes (`local`) and what is in the
/// way of the update (`found`), named as git names them; else the blockers to clear. git checks
/// a deleted path's directory for untracked files before the path itself; and a path git
/// refuses for itself is not entered as a directory (`unpack_callback` stops before it
/// recurses): nothing below it is checked. Only paths still refused hide those below them, so
/// choosing the names never takes the last refusal away.
fn refusal(mut local: Vec<BString>, found: InTheWay) -> Result<Blockers, Error> {
    let InTheWay {
        untracked,
        mut untracked_removed,
        untracked_deleted,
        local: local_inside,
        mut file_level,
        blockers,
    } = found;
    file_level.retain(|p| {
        untracked.contains(p)
            || untracked_deleted.contains(p)
            || untracked_removed.contains(p)
            || local_inside
                .iter()
                .any(|l| below_any(l.as_bstr(), std::slice::from_ref(p)))
    });
    local.retain(|p| !untracked_removed.contains(p) && !below_any(p.as_bstr(), &file_level));
    untracked_removed.retain(|p| !below_any(p.as_bstr(), &file_level));
    // The local changes found below a path refused for itself are that path's own refusal.
    local.extend(local_inside);
    if local.is_empty()
        && untracked.is_empty()
        && untracked_removed.is_empty()
        && untracked_deleted.is_empty()
    {
        return Ok(blockers);
    }
    local.sort();
    local.dedup();
    Err(Error::WouldLose {
        local,
        untracked,
        untracked_removed,
        untracked_deleted,
    })
}

/// git's `verify_uptodate` looks at a tracked path with a plain `lstat`: where a leading
/// directory has become a file, that fails with `ENOTDIR`, not `ENOENT`, and a symlink in its
/// place is followed, to a file whose stat data must then match the index. Either way the
/// entry is not "missing" but a local change that a safe update refuses to overwrite (the file
/// or the link in the way is the user's). The refresh calls such entries missing, as git's
/// diff does (`has_symlink_leading_path`): here those that a safe update would write or delete,
/// or that leave the sparse patterns, and the skip-worktree or assume-unchanged ones a forced
/// update would, are looked at again.
fn missing_behind_a_file(root: &Root, rows: &mut [Row<'_>], mode: Policy, rules: StatRules) {
    for row in rows.iter_mut() {
        // A forced update verifies only skip-worktree and assume-unchanged entries it would
        // overwrite or remove ("Entry '...' not uptodate").
        let protected = row.cur.is_some_and(|c| {
            c.flags
                .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
        });
        let verified = match mode {
            Policy::Safe => matches!(
                row.action,
                Action::Write { verify: true, .. } | Action::Remove { verify: true }
            ),
            Policy::Force => {
                protected && matches!(row.action, Action::Write { .. } | Action::Remove { .. })
            }
        };
        // An entry leaving the sparse patterns is checked the same way before its file goes
        // (`verify_uptodate_sparse`).
        let leaves_patterns = mode == Policy::Safe && row.skip == Some(true) && !was_skipped(row);
        if !(verified || leaves_patterns)
            || row.state != Some(crate::inspect::refresh::State::Missing)
        {
            continue;
        }
        let uptodate = match (root.lstat_through_leading_links(row.path), row.cur) {
            (Ok(None), _) => true,
            (Ok(Some(st)), Some(entry)) => rules.matches(entry, &st),
            _ => false,
        };
        if !uptodate {
            row.state = Some(crate::inspect::refresh::State::Modified);
        }
    }
}

/// Run the refresh over the rows that have a stage-0 index entry and store each verdict in its
/// row. Kept skip-worktree and assume-unchanged entries are not looked at: git trusts their bits
/// unless the entry would be overwritten or removed.
fn refresh_rows(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::File,
    rows: &mut [Row<'_>],
    mode: Policy,
    opts: &Options,
) -> Result<(), Error> {
    let checked: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.cur.is_some_and(|c| {
                // A forced update looks past assume-unchanged (git's CE_MATCH_IGNORE_VALID),
                // never past skip-worktree.
                let trusted = match mode {
                    Policy::Safe => Flags::SKIP_WORKTREE | Flags::ASSUME_VALID,
                    Policy::Force => Flags::SKIP_WORKTREE,
                };
                let leaves_patterns =
                    r.skip == Some(true) && !c.flags.contains(Flags::SKIP_WORKTREE);
                !r.unmerged
                    && r.action != Action::Drop
                    && (!c.flags.intersects(trusted) || r.action != Action::Keep || leaves_patterns)
            })
        })
        .map(|(k, _)| k)
        .collect();
    let states = crate::inspect::refresh::check(
        repo,
        root,
        index,
        index.timestamp().unix_seconds(),
        checked.iter().map(|&k| crate::inspect::refresh::Item {
            path: rows[k].path,
            entry: rows[k].cur.expect("filtered on cur"),
        }),
        opts.workers,
    )
    .map_err(|e| Error::Index(e.into()))?;
    for (k, state) in checked.into_iter().zip(states) {
        rows[k].state = Some(state);
    }
    Ok(())
}

/// What [`untracked_in_the_way`] found.
#[derive(Default)]
struct InTheWay {
    /// Untracked files a new entry would overwrite (refused).
    untracked: Vec<BString>,
    /// Directories holding untracked files that an entry would replace (refused).
    untracked_removed: Vec<BString>,
    /// Untracked files at staged deletions (refused: [`Error::WouldLose`]).
    untracked_deleted: Vec<BString>,
    /// Tracked entries with local changes (intent-to-add ones always) inside a directory that
    /// stands where a staged deletion is (git's `verify_clean_subdirectory`): refused as local
    /// changes.
    local: Vec<BString>,
    /// The paths refused for what is at the path itself (a file or a directory of untracked
    /// files): git does not enter them as directories, so nothing below them is checked.
    file_level: Vec<BString>,
    /// What a forced update (or an ignored file) clears.
    blockers: Blockers,
}

/// Untracked files in the way of new entries and new directories: the paths a safe update
/// refuses for (files, and directories holding untracked files), and the blockers a forced one
/// (or an ignored file, which git treats as expendable unless `overwrite_ignore` is false) removes.
/// A forced update with [`Options::protect_untracked`] refuses for untracked files where a
/// path the index lacks goes, as a safe one does. A safe update also refuses for an untracked
/// file where a path the trees' difference deletes is, the deletion already staged (git's
/// `deleted_entry` of a path the index lacks).
fn untracked_in_the_way(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::File,
    rows: &[Row<'_>],
    mode: Policy,
    opts: &Options,
) -> Result<InTheWay, Error> {
    let rules = Rules::of(mode, opts);
    if !rows.iter().any(|r| rules.looked_at(r)) {
        // Nothing to look at (every written path is tracked, as when entries come back into
        // a sparse checkout): no ignore rules to load, no path sets to build.
        return Ok(InTheWay::default());
    }
    let excludes = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|e| Error::Index(Box::new(e)))?
        .detach();
    let tracked_removed: HashSet<&BStr> = rows
        .iter()
        .filter(|r| {
            r.cur.is_some()
                && matches!(
                    r.action,
                    Action::Remove { .. }
                        | Action::Write { replace: true, .. }
                        | Action::Record { unlink: true }
                )
        })
        .map(|r| r.path)
        .collect();
    let tracked: HashSet<&BStr> = rows
        .iter()
        .filter(|r| r.cur.is_some())
        .map(|r| r.path)
        .collect();
    let mut survey = Survey {
        repo,
        index,
        rows,
        rules,
        overwrite_ignore: opts.overwrite_ignore,
        excludes,
        tracked,
        tracked_removed,
        dirs: root.dirs(),
        found: InTheWay::default(),
        in_leading: Vec::new(),
    };
    for row in rows.iter().filter(|r| rules.looked_at(r)) {
        survey.row(row)?;
    }
    Ok(survey.finish())
}

/// Which rows [`untracked_in_the_way`] looks at, and how.
#[derive(Clone, Copy)]
struct Rules {
    mode: Policy,
    /// Whether untracked files where the index has no entry are removed rather than refused.
    clears_untracked: bool,
}

impl Rules {
    /// The rules of an update in `mode`: a forced one clears untracked files in the way unless
    /// it protects them (`switch --discard-changes`).
    fn of(mode: Policy, opts: &Options) -> Rules {
        Rules {
            mode,
            clears_untracked: mode == Policy::Force && !opts.protect_untracked,
        }
    }

    /// A tracked path the update deletes, whose place holds a directory, is checked for
    /// untracked files in it (git's `deleted_entry` and `verify_absent_if_directory`) unless
    /// untracked files are cleared, or the path leaves the sparse patterns as it goes (the
    /// entry's `CE_NEW_SKIP_WORKTREE` skips the check: [`mark_sparse`]); an unmerged one that
    /// is written likewise.
    fn dir_checked(self, row: &Row<'_>) -> bool {
        !self.clears_untracked
            && row.cur.is_some()
            && row.skip != Some(true)
            && row.state == Some(crate::inspect::refresh::State::Modified)
            && (matches!(row.action, Action::Remove { .. })
                || row.unmerged && matches!(row.action, Action::Write { .. }))
    }

    /// In a safe update, a row that neither the index nor the new tree has is a deletion
    /// between the trees that the index already made.
    fn staged_deletion(self, row: &Row<'_>) -> bool {
        self.mode == Policy::Safe && row.cur.is_none() && row.new.is_none()
    }

    /// Tracked paths were checked by the refresh; but where a forced update rewrites one whose
    /// place now holds a directory (or an unmerged one, whatever is there), that directory is in
    /// the way like an untracked one, as git's reset --hard sees it.
    fn looked_at(self, row: &Row<'_>) -> bool {
        let forced_over = self.mode == Policy::Force
            && (row.unmerged || row.state == Some(crate::inspect::refresh::State::Modified));
        matches!(row.action, Action::Write { .. }) && (row.cur.is_none() || forced_over)
            || self.dir_checked(row)
            || self.staged_deletion(row)
    }
}

/// The state of [`untracked_in_the_way`]'s look at the rows, one method per kind of thing in
/// a row's place.
struct Survey<'a, 'r> {
    repo: &'a gix::Repository,
    index: &'a gix::index::File,
    rows: &'a [Row<'r>],
    rules: Rules,
    overwrite_ignore: bool,
    excludes: gix::worktree::Stack,
    tracked: HashSet<&'a BStr>,
    tracked_removed: HashSet<&'a BStr>,
    dirs: Dirs<'a>,
    found: InTheWay,
    /// Files in the way of a row's leading directories: (refused as removed, the file, the row).
    in_leading: Vec<(bool, BString, &'a BStr)>,
}

impl<'a> Survey<'a, '_> {
    /// `--no-overwrite-ignore`: ignored files count as untracked ones (git's `preserve_ignored`).
    fn is_ignored(&mut self, path: &BStr) -> bool {
        self.overwrite_ignore
            && self
                .excludes
                .at_entry(path, None, &self.repo.objects)
                .is_ok_and(|p| p.is_excluded())
    }

    /// What git calls an untracked file in the way of `row`, refused for itself: overwritten by
    /// a new entry, or removed by a deletion.
    fn refuse_file(&mut self, row: &Row<'_>) {
        let list = if self.rules.staged_deletion(row) {
            &mut self.found.untracked_deleted
        } else {
            &mut self.found.untracked
        };
        list.push(row.path.to_owned());
        self.found.file_level.push(row.path.to_owned());
    }

    fn row(&mut self, row: &'a Row<'_>) -> Result<(), Error> {
        if !self.dirs.has_dirs_only_path(row.path) {
            self.leading(row);
            return Ok(());
        }
        let kind = self.dirs.file_type(row.path).map_err(|source| Error::Io {
            action: "lstat",
            path: row.path.to_owned(),
            source,
        })?;
        let staged_deletion = self.rules.staged_deletion(row);
        match kind {
            Some(crate::fs::FileType::Directory) => self.directory(row),
            // A tracked file is replaced by its writer; only untracked ones are cleared here.
            Some(_) if row.cur.is_some() => {}
            // A staged deletion writes nothing: the file stays, but git refuses over it.
            Some(_) if staged_deletion && !self.is_ignored(row.path) => self.refuse_file(row),
            Some(_) if staged_deletion => {}
            Some(_) if self.rules.clears_untracked || self.is_ignored(row.path) => {
                self.found.blockers.files.push(row.path.to_owned());
            }
            Some(_) => self.refuse_file(row),
            None => {}
        }
        Ok(())
    }

    /// git's `check_leading_path` for a path the index does not have: a file or symlink where
    /// one of its directories belongs is in the way like an untracked file (unless it is a
    /// tracked entry that goes away); a missing directory is fine.
    fn leading(&mut self, row: &'a Row<'_>) {
        if row.cur.is_some() {
            return;
        }
        let Some(blocker) = leading_non_dir(&mut self.dirs, row.path) else {
            return;
        };
        if self.tracked_removed.contains(blocker) {
            return;
        }
        let staged_deletion = self.rules.staged_deletion(row);
        if staged_deletion && self.is_ignored(blocker) {
            // Nothing is written there: an ignored file stays.
        } else if self.rules.clears_untracked || self.is_ignored(blocker) {
            self.found.blockers.files.push(blocker.to_owned());
        } else {
            self.in_leading
                .push((staged_deletion, blocker.to_owned(), row.path));
        }
    }

    /// A directory in `row`'s place.
    fn directory(&mut self, row: &Row<'_>) {
        if row.new.is_some_and(|(_, k)| k == Kind::Gitlink) {
            return;
        }
        // git's `verify_clean_subdirectory` for a path the index lacks: the tracked entries
        // below it first (the first that is not up to date refuses, as a local change), then
        // the untracked files in it.
        if row.cur.is_none() && self.rules.mode == Policy::Safe {
            let changed = changed_inside(self.index, self.rows, row.path);
            if let Some(first) = changed.into_iter().next() {
                self.found.local.push(first);
                self.found.file_level.push(row.path.to_owned());
                return;
            }
        }
        let mut inside = Vec::new();
        untracked_in(&mut self.dirs, row.path, &self.tracked, &mut inside);
        inside.retain(|p| !self.is_ignored(p.as_bstr()));
        let refused = !inside.is_empty();
        let rules = self.rules;
        if rules.staged_deletion(row) {
            // Nothing is written there: the directory stays, but git refuses over the
            // untracked files in it.
        } else if !refused && matches!(row.action, Action::Remove { .. }) {
            // Nothing untracked in it: the deletion's own check decides (git's
            // `verify_uptodate` sees a directory where a file was).
            return;
        } else if !refused
            || rules.clears_untracked
            || (rules.mode == Policy::Force && row.cur.is_some() && !rules.dir_checked(row))
        {
            self.found.blockers.dirs.push(row.path.to_owned());
            return;
        }
        if refused {
            self.found.untracked_removed.push(row.path.to_owned());
            self.found.file_level.push(row.path.to_owned());
        }
    }

    /// The lists, sorted; a file in the way of a row's directories refused as git meets it:
    /// unless the row lies below a path refused for itself, which git does not enter.
    fn finish(mut self) -> InTheWay {
        let found = &mut self.found;
        for (deleted, blocker, row) in self.in_leading {
            if !below_any(row, &found.file_level) {
                let list = if deleted {
                    &mut found.untracked_deleted
                } else {
                    &mut found.untracked
                };
                list.push(blocker);
            }
        }
        for list in [
            &mut found.untracked,
            &mut found.untracked_deleted,
            &mut found.blockers.files,
        ] {
            list.sort();
            list.dedup();
        }
        found.untracked_removed.sort();
        self.found
    }
}

/// Whether `path` lies below one of the directories `dirs`.
fn below_any(path: &BStr, dirs: &[BString]) -> bool {
    dirs.iter()
        .any(|d| path.len() > d.len() && path.starts_with(d) && path[d.len()] == b'/')
}

/// The stage-0 entries below the directory `dir` that `verify_uptodate` refuses: intent-to-add
/// ones (always "changed" to git's `ie_match_stat`) and those whose rows the refresh found
/// changed.
fn changed_inside(index: &gix::index::File, rows: &[Row<'_>], dir: &BStr) -> Vec<BString> {
    let below = |p: &BStr| p.len() > dir.len() && p.starts_with(dir) && p[dir.len()] == b'/';
    let changed: HashSet<&BStr> = rows
        .iter()
        .filter(|r| {
            // A missing file is up to date to `verify_uptodate` (`ENOENT`).
            below(r.path)
                && r.state
                    .is_some_and(|s| s.is_changed() && s != crate::inspect::refresh::State::Missing)
        })
        .map(|r| r.path)
        .collect();
    index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() == 0)
        .map(|e| (e, e.path(index)))
        .filter(|(e, p)| {
            below(p) && (e.flags.contains(Flags::INTENT_TO_ADD) || changed.contains(p))
        })
        .map(|(_, p)| p.to_owned())
        .collect()
}

/// The first leading directory of `path` that is there but is not a real directory (a file or a
/// symlink), if any. A leading directory that does not exist ends the search: nothing is in the way.
fn leading_non_dir<'p>(dirs: &mut Dirs<'_>, path: &'p BStr) -> Option<&'p BStr> {
    for prefix in crate::fs::leading_dirs(path) {
        match dirs.file_type(prefix) {
            Ok(Some(crate::fs::FileType::Directory)) => continue,
            Ok(Some(_)) => return Some(prefix),
            _ => return None,
        }
    }
    None
}

/// The entries to write, in path order, with the directories they need; each written row
/// learns its index into the plan.
fn write_plan(rows: &mut [Row<'_>], new_dirs: Vec<BString>) -> Plan {
    let mut entries = Vec::new();
    for row in rows.iter_mut() {
        if let Action::Write { .. } = row.action {
            let (id, kind) = row.new.expect("a write has a new entry");
            row.job = Some(entries.len());
            entries.push(plan::Entry {
                path: row.path.to_owned(),
                id,
                kind,
            });
        }
    }
    Plan {
        entries,
        dirs: new_dirs,
        trees: None,
        ..Plan::default()
    }
}

/// Remove what goes: tracked entries the target lacks (unlink, or rmdir for a gitlink, as git's
/// `unlink_entry`), gitlink directories that become files, the untracked blockers of a forced
/// update, then the directories left empty. Files that are replaced are not removed here: their
/// writer replaces them. Stops between entries when interrupted. The current directory `cwd`
/// stays when emptied (git's `remove_path`). Returns the emptied directories that stayed because
/// new entries need them, deepest first: git removes them and makes them again.
fn remove(
    root: &Root,
    rows: &mut [Row<'_>],
    blockers: &Blockers,
    (plan, cwd): (&Plan, Option<&BStr>),
    mode: Policy,
    should_interrupt: &AtomicBool,
    outcome: &mut Outcome,
) -> Result<Vec<BString>, Error> {
    let io = |e: crate::fs::remove::Error| Error::Io {
        action: "unlink",
        path: e.path,
        source: e.source,
    };
    let mut remover = Remover::new(root);
    let mut root_dirs = root.dirs();
    for row in rows.iter_mut() {
        if should_interrupt.load(Ordering::Relaxed) {
            return Ok(Vec::new());
        }
        let was_gitlink = row.cur.is_some_and(|c| c.mode == Mode::COMMIT);
        let goes = match row.action {
            Action::Remove { .. } | Action::Record { unlink: true } => true,
            Action::Write { replace: true, .. } => {
                was_gitlink && row.new.is_some_and(|(_, k)| k != Kind::Gitlink)
            }
            _ => false,
        };
        if goes {
            // What a submodule left in a directory that a file replaces is cleared, as git's
            // `checkout_entry` (always forced in an update) removes the subtree, also in a safe
            // switch; except, there, a repository of its own (`.git` a directory, not the
            // gitfile of an absorbed submodule), which would be lost with it: that one stays
            // and the file is not written, reported.
            let mut embedded = || {
                let mut git = BString::from(row.path);
                git.extend_from_slice(b"/.git");
                root_dirs.file_type(git.as_bstr()).ok().flatten()
                    == Some(crate::fs::FileType::Directory)
            };
            let clear_dir = was_gitlink
                && matches!(row.action, Action::Write { .. })
                && (mode == Policy::Force || !embedded());
            // The look inside left the gitlink's directory open, which Windows would then not
            // let go (Dirs::forget).
            root_dirs.forget();
            if clear_dir {
                remover.all(row.path).map_err(io)?;
            } else {
                remover.entry(row.path, was_gitlink).map_err(io)?;
            }
            if let Action::Write { replace, .. } = &mut row.action {
                *replace = false;
            }
        } else if row.cur.is_some_and(|c| c.mode != Mode::COMMIT)
            && (row.action == Action::Drop && !(was_skipped(row) && row.skip == Some(true))
                || row.action == (Action::Record { unlink: false }) && !was_skipped(row))
        {
            // Gone already (deleted, or it leaves the sparse patterns with its file missing):
            // its directories may be emptied all the same. Not for an entry that the sparse
            // patterns left out and still leave out: git's `apply_sparse_checkout` takes its
            // removal off the work tree, so nothing schedules its directories (without sparse
            // checkout, a skip-worktree entry's removal still does).
            remover.gone(row.path);
        }
        row.removed = true;
    }
    for path in &blockers.files {
        remover.entry(path.as_bstr(), false).map_err(io)?;
    }
    for path in &blockers.dirs {
        remover.all(path.as_bstr()).map_err(io)?;
    }
    let keep: HashSet<&BStr> = plan.dirs.iter().map(|d| d.as_bstr()).chain(cwd).collect();
    let mut spared = remover.remove_emptied_dirs(&keep);
    spared.retain(|d| Some(d.as_bstr()) != cwd);
    outcome.removed = remover.removed;
    outcome.kept = remover.kept;
    Ok(spared)
}

/// Take out of `blockers` the directories in the place of an entry `plan` writes: git clears
/// each when its checkout reaches that entry ([`make_places`]), not with the removals.
fn blockers_in_places(blockers: &mut Blockers, plan: &Plan) -> HashSet<BString> {
    if blockers.dirs.is_empty() {
        return HashSet::new();
    }
    let written: HashSet<&BStr> = plan.entries.iter().map(|e| e.path.as_bstr()).collect();
    let (in_places, others): (Vec<BString>, Vec<BString>) = std::mem::take(&mut blockers.dirs)
        .into_iter()
        .partition(|d| written.contains(d.as_bstr()));
    blockers.dirs = others;
    in_places.into_iter().collect()
}

/// Where [`make_places`] stopped, as git's `checkout_entry` dies there.
struct Stop {
    /// The position in the jobs of the entry whose place could not be made.
    at: usize,
    /// git's warning before it dies, when a file or symlink in the place of a directory could
    /// not be unlinked (`create_directories`' `unlink_or_warn`).
    warning: Option<Kept>,
    /// git's words for the death.
    message: String,
    /// The directories that are there for the entries before it and its own leading ones up
    /// to the failure.
    made: HashSet<BString>,
}

/// Make the places of the entries `jobs` writes, in index order, as git's `checkout_entry`
/// makes each right before writing it: the entry's missing directories first
/// (`create_directories`), then a directory in the entry's own place cleared
/// (`remove_subtree`, for those of `in_places`). git dies at the first place it cannot make;
/// so does this, and only the jobs before that entry are to be written. The plan's
/// directories are all made (or the run stopped) afterwards: the writers make none.
fn make_places(
    root: &Root,
    plan: &mut Plan,
    jobs: &[Job],
    in_places: &HashSet<BString>,
) -> Option<Stop> {
    if plan.dirs.is_empty() && in_places.is_empty() {
        return None;
    }
    let new_dirs: HashSet<BString> = std::mem::take(&mut plan.dirs).into_iter().collect();
    let mut seen: HashSet<&BStr> = HashSet::new();
    let mut dirs = root.dirs();
    for (at, job) in jobs.iter().enumerate() {
        let path = plan.entries[job.entry].path.as_bstr();
        let parent = crate::fs::leading_dirs(path).last();
        if parent.is_some_and(|p| !seen.contains(p)) {
            for dir in crate::fs::leading_dirs(path) {
                if seen.insert(dir) && new_dirs.contains(dir) {
                    if let Err(err) = dirs.mkdir(dir, true) {
                        seen.remove(dir);
                        let made = seen.iter().map(|d| (*d).to_owned()).collect();
                        return Some(directory_failed(&mut dirs, (at, made), dir, err));
                    }
                }
            }
        }
        if in_places.contains(path) {
            if let Err(err) = dirs.remove_subtree(path) {
                return Some(Stop {
                    at,
                    warning: None,
                    message: err.to_string(),
                    made: seen.iter().map(|d| (*d).to_owned()).collect(),
                });
            }
        }
    }
    // Directories no entry needs (none, as verified): made all the same, as before.
    let mut rest: Vec<&BString> = new_dirs
        .iter()
        .filter(|d| !seen.contains(d.as_bstr()))
        .collect();
    rest.sort();
    for dir in rest {
        let _ = dirs.mkdir(dir.as_bstr(), true);
    }
    None
}

/// git's death in `create_directories` at `dir`: after a warning when what is there is no
/// directory (its `unlink_or_warn` failed).
fn directory_failed(
    dirs: &mut Dirs<'_>,
    (at, made): (usize, HashSet<BString>),
    dir: &BStr,
    err: io::Error,
) -> Stop {
    let there = dirs.file_type(dir).ok().flatten();
    let warning = there
        .filter(|t| *t != crate::fs::FileType::Directory)
        .map(|_| Kept {
            op: "unlink",
            path: dir.to_owned(),
            source: match err.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(err.kind(), err.to_string()),
            },
        });
    Stop {
        at,
        warning,
        message: format!(
            "cannot create directory at '{dir}': {}",
            crate::fs::strerror(&err)
        ),
        made,
    }
}

/// After a [`Stop`]: the emptied directories the removal `spared` for new entries that are not
/// written now go, as git removed them before it died.
fn unmake_spared(root: &Root, spared: &[BString], stop: &Stop) {
    let mut dirs = root.dirs();
    for dir in spared.iter().filter(|d| !stop.made.contains(*d)) {
        let _ = dirs.rmdir(dir.as_bstr());
    }
}

/// Tell the index about the paths the update is about to create before creating any, so that
/// a process killed while writing leaves them tracked (with empty stat data, so git re-checks
/// them) rather than as untracked leftovers: the next `reset --hard` then removes them. Every
/// other entry stays the old one. Without new paths nothing is written. Returns the lock, taken
/// again for the final index.
fn announce_new_paths(
    lock: IndexLock,
    repo: &gix::Repository,
    index: &gix::index::File,
    rows: &[Row<'_>],
    index_path: &Path,
) -> Result<IndexLock, Error> {
    if !announces(rows) {
        return Ok(lock);
    }
    let mut state = gix::index::State::new(repo.object_hash());
    for row in rows {
        if creates(row) {
            let (id, kind) = row.new.expect("a write has a new entry");
            state.dangerously_push_entry(
                Stat::default(),
                id,
                Flags::empty(),
                kind.index_mode(),
                row.path,
            );
        } else {
            push_old(&mut state, index, row);
        }
    }
    let link = crate::index::split_index::transient_link(repo, index_path);
    crate::index::record::commit_transient(lock, state, link.as_deref())
        .map_err(CheckoutError::from)?;
    Ok(IndexLock::acquire(index_path).map_err(CheckoutError::from)?)
}

/// Whether the row's writer creates a path the index lacks (one [`announce_new_paths`] tells
/// the index about).
fn creates(r: &Row<'_>) -> bool {
    r.job.is_some() && r.cur.is_none() && !r.unmerged
}

/// Whether [`announce_new_paths`] writes an index: some row creates a path.
fn announces(rows: &[Row<'_>]) -> bool {
    rows.iter().any(creates)
}

/// Push the old index entries of `row` (all stages of an unmerged path) onto `state`.
fn push_old(state: &mut gix::index::State, index: &gix::index::File, row: &Row<'_>) {
    if row.unmerged {
        for e in index.entries().iter().filter(|e| e.path(index) == row.path) {
            state.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, row.path);
        }
    } else if let Some(c) = row.cur {
        state.dangerously_push_entry(c.stat, c.id, c.flags, c.mode, row.path);
    }
}

/// Returns true if and only if the row's path is in the result of a completed update.
fn in_result(row: &Row<'_>) -> bool {
    matches!(
        row.action,
        Action::Keep | Action::Write { .. } | Action::Record { .. }
    )
}

/// The index after the update: every row as the update means it, with empty stat data for the
/// entries still to be written (the caller fills in the writers' stat data). With `interrupted`
/// (the stat data of what the writers did write before Ctrl-C), the index of what is on disk
/// instead: the old entries of rows the update did not reach.
fn result_index(
    repo: &gix::Repository,
    index: &gix::index::File,
    rows: &[Row<'_>],
    interrupted: Option<&[Option<Stat>]>,
) -> gix::index::State {
    let mut state = gix::index::State::new(repo.object_hash());
    for row in rows {
        match row.action {
            // Only a sparsity update keeps unmerged paths: all their stages stay.
            Action::Keep if row.unmerged => push_old(&mut state, index, row),
            Action::Keep => {
                let c = row.cur.expect("keep has a current entry");
                let stat = match row.state {
                    Some(crate::inspect::refresh::State::Refreshed(fresh)) => fresh,
                    // git's racily-clean smudge: a zero size makes git re-check the content.
                    Some(crate::inspect::refresh::State::RacilyModified) => {
                        Stat { size: 0, ..c.stat }
                    }
                    _ => c.stat,
                };
                state.dangerously_push_entry(
                    stat,
                    c.id,
                    sparse_flags(row, c.flags),
                    c.mode,
                    row.path,
                );
            }
            Action::Record { unlink } => {
                if interrupted.is_some() && unlink && !row.removed {
                    push_old(&mut state, index, row);
                    continue;
                }
                let (id, mode) = match (row.new, row.cur) {
                    (Some((id, kind)), _) => (id, kind.index_mode()),
                    (None, Some(c)) => (c.id, c.mode),
                    (None, None) => unreachable!("a recorded row has an entry"),
                };
                // The same entry keeps its stat data and bits; a new one starts empty.
                let (stat, flags) = match row.cur {
                    Some(c) if c.id == id && c.mode == mode => (c.stat, c.flags),
                    _ => (Stat::default(), Flags::empty()),
                };
                state.dangerously_push_entry(stat, id, sparse_flags(row, flags), mode, row.path);
            }
            Action::Write { .. } => {
                let stat = match (interrupted, row.job) {
                    (Some(stats), Some(j)) => stats.get(j).copied().flatten(),
                    _ => None,
                };
                if interrupted.is_some() && row.job.is_some() && stat.is_none() {
                    push_old(&mut state, index, row);
                    continue;
                }
                let (id, kind) = row.new.expect("a write has a new entry");
                // A rewrite of the same entry keeps its bits (git's `keep_entry`); a change of
                // content keeps only skip-worktree, as git's `merged_entry` migrates it.
                let same = row.cur.map(side_of_entry) == row.new.map(side_of);
                let kept = if same {
                    Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD
                } else {
                    Flags::SKIP_WORKTREE
                };
                // (`record` sets the EXTENDED bit from these when it writes the index.)
                let flags = sparse_flags(row, row.cur.map_or(Flags::empty(), |c| c.flags & kept));
                state.dangerously_push_entry(
                    stat.unwrap_or_default(),
                    id,
                    flags,
                    kind.index_mode(),
                    row.path,
                );
            }
            Action::Remove { .. } if interrupted.is_some() && !row.removed => {
                push_old(&mut state, index, row)
            }
            Action::Remove { .. } | Action::Drop | Action::Reject => {}
        }
    }
    state
}
/// `flags` with the skip-worktree bit that sparse checkout decided for `row`, if it decided.
fn sparse_flags(row: &Row<'_>, flags: Flags) -> Flags {
    match row.skip {
        Some(true) => flags | Flags::SKIP_WORKTREE,
        Some(false) => flags - Flags::SKIP_WORKTREE,
        None => flags,
    }
}

fn side_of_entry(e: &gix::index::Entry) -> Side {
    Side {
        id: e.id,
        mode: e.mode,
    }
}

fn side_of((id, kind): (ObjectId, Kind)) -> Side {
    Side {
        id,
        mode: kind.index_mode(),
    }
}

/// git's `twoway_merge` for one path (stage-0 index): `o` the old tree, `i` the index, `n` the
/// new tree.
fn twoway(o: Option<Side>, i: Option<Side>, n: Option<Side>) -> Action {
    match (o, i, n) {
        (_, Some(i), _) => {
            if (o.is_none() && n.is_none())
                || (o.is_none() && n == Some(i))
                || (o.is_some() && n.is_some() && o == n)
                || (o.is_some() && n.is_some() && o != n && n == Some(i))
            {
                Action::Keep
            } else if o.is_some() && n.is_none() && o == Some(i) {
                Action::Remove { verify: true }
            } else if o.is_some() && n.is_some() && o == Some(i) && n != Some(i) {
                Action::Write {
                    verify: true,
                    replace: true,
                }
            } else {
                Action::Reject
            }
        }
        (Some(o), None, Some(n)) => {
            if o == n {
                Action::Drop // the staged deletion stays
            } else {
                Action::Reject
            }
        }
        (None, None, Some(_)) => Action::Write {
            verify: false,
            replace: false,
        },
        (_, None, None) => Action::Drop,
    }
}

/// git's `oneway_merge` with `reset`: the result is the new tree; an index entry equal to the new
/// one is kept (and rewritten if its file turns out to differ).
fn oneway(i: Option<Side>, n: Option<Side>) -> Action {
    match (i, n) {
        (Some(i), Some(n)) if i == n => Action::Keep,
        (Some(_), Some(_)) => Action::Write {
            verify: false,
            replace: true,
        },
        (None, Some(_)) => Action::Write {
            verify: false,
            replace: false,
        },
        (Some(_), None) => Action::Remove { verify: false },
        (None, None) => Action::Drop,
    }
}

/// git's `show_local_changes` after a switch: `diff-index --name-status <target>` over the new
/// index and the work tree states found by the refresh.
fn local_changes(
    repo: &gix::Repository,
    root: &Root,
    tree: ObjectId,
    state: &gix::index::State,
    worktree_state: &[Option<crate::inspect::refresh::State>],
) -> Result<Vec<(char, BString)>, Error> {
    use crate::inspect::refresh::State as W;
    let target = if tree.is_empty_tree() {
        Plan::default()
    } else {
        plan::from_tree(
            &repo.objects,
            tree,
            crate::write::options::default_protect(),
        )
        .map_err(CheckoutError::from)?
    };
    let mut out = Vec::new();
    let mut rules = None;
    let mut dirs = root.dirs();
    let symlinks = repo
        .config_snapshot()
        .boolean("core.symlinks")
        .unwrap_or(crate::write::options::default_symlinks());
    let mut t = target.entries.iter().peekable();
    let mut i = state.entries().iter().zip(worktree_state).peekable();
    loop {
        let order = match (t.peek(), i.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(a), Some((b, _))) => a.path.as_bstr().cmp(b.path(state)),
        };
        match order {
            std::cmp::Ordering::Less => {
                let a = t.next().expect("peeked");
                out.push(('D', a.path.clone()));
            }
            std::cmp::Ordering::Greater => {
                let (b, w) = i.next().expect("peeked");
                // A new entry whose file is gone (a directory in its place included) is no
                // change against the tree to git's diff-index.
                let gone = match w {
                    Some(W::Missing) => true,
                    Some(w) if w.is_changed() => {
                        changed_file(&mut dirs, Kind::File, b.path(state), (b.mode, symlinks))
                            == 'D'
                    }
                    _ => false,
                };
                if !gone {
                    out.push(('A', b.path(state).to_owned()));
                }
            }
            std::cmp::Ordering::Equal => {
                let a = t.next().expect("peeked");
                let (b, w) = i.next().expect("peeked");
                let status = match w {
                    Some(W::Missing) => Some('D'),
                    Some(w) if w.is_changed() => Some(changed_file(
                        &mut dirs,
                        a.kind,
                        b.path(state),
                        (b.mode, symlinks),
                    )),
                    _ if file_type(a.kind.index_mode()) != file_type(b.mode) => Some('T'),
                    _ if a.id != b.id || a.kind.index_mode() != b.mode => Some('M'),
                    // git's diff-index takes a skip-worktree entry as it is recorded.
                    _ if a.kind == Kind::Gitlink && !b.flags.contains(Flags::SKIP_WORKTREE) => {
                        // The rules are read once, at the first gitlink.
                        if rules.is_none() {
                            rules = Some(
                                crate::inspect::status::SubmoduleRules::new(
                                    repo,
                                    root,
                                    state,
                                    (false, None),
                                )
                                .map_err(|e| Error::Index(e.to_string().into()))?,
                            );
                        }
                        let rules = rules.as_ref().expect("set above");
                        submodule_changed(repo, rules, b.path(state), b.id).then_some('M')
                    }
                    _ => None,
                };
                if let Some(status) = status {
                    out.push((status, a.path.clone()));
                }
            }
        }
    }
    Ok(out)
}

/// How git's `diff-index` names a work-tree file at `path` (index mode `mode`) that changed
/// against the tree entry of kind `tree`: `D` for a directory where a file or symlink is
/// tracked (`check_removed`), `T` when the file's type is not the tree's (a symlink for a file,
/// or the reverse; with `core.symlinks=false` a file at a symlink's path is the symlink), else
/// `M`.
fn changed_file(
    dirs: &mut crate::fs::Dirs<'_>,
    tree: Kind,
    path: &BStr,
    (mode, symlinks): (Mode, bool),
) -> char {
    use crate::fs::FileType;
    let on_disk = match dirs.file_type(path) {
        Ok(Some(FileType::Directory)) if mode != Mode::COMMIT => return 'D',
        Ok(Some(FileType::Symlink)) => Mode::SYMLINK,
        Ok(Some(FileType::RegularFile)) if mode == Mode::SYMLINK && !symlinks => Mode::SYMLINK,
        Ok(Some(FileType::RegularFile)) => Mode::FILE,
        _ => return 'M',
    };
    if file_type(on_disk) != file_type(tree.index_mode()) {
        'T'
    } else {
        'M'
    }
}

/// The file type an index mode stands for (the exec bit is no type change).
fn file_type(mode: Mode) -> u8 {
    match mode {
        Mode::SYMLINK => 1,
        Mode::COMMIT => 2,
        _ => 0,
    }
}

/// Whether the populated submodule at `path` (gitlink `id`) differs from it as git's
/// diff-index sees it under `rules` (`submodule.<name>.ignore`, `diff.ignoreSubmodules`: git's
/// `set_diffopt_flags_from_submodule_config`, as status resolves them): its `HEAD` is another
/// commit, or it has modified or untracked content the rule shows. An unpopulated one does not.
fn submodule_changed(
    repo: &gix::Repository,
    rules: &crate::inspect::status::SubmoduleRules,
    path: &BStr,
    id: ObjectId,
) -> bool {
    use crate::inspect::status::IgnoreSubmodules;
    let Some(workdir) = repo.workdir() else {
        return false;
    };
    let rule = rules.for_path(repo, path).unwrap_or(IgnoreSubmodules::None);
    if rule == IgnoreSubmodules::All {
        return false;
    }
    let Ok(sub) = gix::open(workdir.join(path.to_path_lossy())) else {
        return false;
    };
    if sub.head_id().ok().map(gix::Id::detach) != Some(id) {
        return true;
    }
    // A submodule git cannot look into (git dies there) counts as changed: nothing is lost.
    let Ok(root) = crate::fs::Root::open(workdir) else {
        return true;
    };
    crate::inspect::status::submodule_content_as(&root, path, rule)
        .map_or(true, |content| content.modified || content.untracked)
}

/// Read the index; a missing one is an empty, unborn index (`true`), which git's
/// `is_index_unborn` treats as an initial checkout.
fn read_index(path: &Path, hash: gix::hash::Kind) -> Result<(gix::index::File, bool), Error> {
    match gix::index::File::at(
        path,
        hash,
        crate::index::format::SKIP_HASH_ON_READ,
        gix::index::decode::Options::default(),
    ) {
        Ok(f) => Ok((f, false)),
        Err(_) if !path.exists() => Ok((
            gix::index::File::from_state(gix::index::State::new(hash), path),
            true,
        )),
        Err(err) => Err(Error::Index(Box::new(err))),
    }
}

/// Collect the files under `dir` (repository-relative) that the index does not track, without
/// following symlinks.
fn untracked_in(dirs: &mut Dirs<'_>, dir: &BStr, tracked: &HashSet<&BStr>, out: &mut Vec<BString>) {
    let Ok(entries) = dirs.read_dir(dir) else {
        return;
    };
    for (name, is_dir) in entries {
        let mut rel = BString::from(dir.to_vec());
        rel.push(b'/');
        rel.extend_from_slice(&name);
        if is_dir {
            untracked_in(dirs, rel.as_bstr(), tracked, out);
        } else if !tracked.contains(rel.as_bstr()) {
            out.push(rel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: u8) -> Option<Side> {
        Some(Side {
            id: ObjectId::from_bytes_or_panic(&[b; 20]),
            mode: Mode::FILE,
        })
    }

    #[test]
    fn twoway_follows_gits_table() {
        // Unchanged between trees: keep whatever the index has.
        assert_eq!(twoway(s(1), s(2), s(1)), Action::Keep);
        // Changed between trees, index clean: write, after checking the file.
        assert!(matches!(
            twoway(s(1), s(1), s(2)),
            Action::Write { verify: true, .. }
        ));
        // Changed between trees, index staged something else: refuse.
        assert_eq!(twoway(s(1), s(3), s(2)), Action::Reject);
        // Deleted in the new tree, index clean: remove.
        assert_eq!(twoway(s(1), s(1), None), Action::Remove { verify: true });
        // Added to the index only: carried over.
        assert_eq!(twoway(None, s(1), None), Action::Keep);
        // New in the target, untracked before: write (after the untracked check).
        assert!(matches!(
            twoway(None, None, s(1)),
            Action::Write { verify: false, .. }
        ));
        // A staged deletion of a path the target changes: refuse.
        assert_eq!(twoway(s(1), None, s(2)), Action::Reject);
    }
}
