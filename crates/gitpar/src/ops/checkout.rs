//! A full checkout of one tree into a work tree: resolve → plan → execute → record.
//!
//! This is what `clone` and `worktree add` run after they have set up the repository. The work
//! tree is assumed to hold nothing the checkout would overwrite (a fresh or empty directory); the
//! two-way update of an existing work tree is a different operation.

use std::path::Path;

use bstr::{BString, ByteSlice};
use gix::hash::ObjectId;

use crate::fs::lock::IndexLock;
use crate::plan::{self, Plan};
use crate::write::options::Options;
// Every operation and the machinery share these (`run.rs`); callers name them here.
pub use crate::sys::context::{Context, Progress};
pub use crate::write::error::{EntryError, Error};

/// What a successful checkout did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Entries created (files, symlinks, gitlink directories).
    pub entries: usize,
    /// Bytes written into regular files.
    pub bytes_written: u64,
    /// Writer threads used (the most at once, when the count grew at run time); 1 when the
    /// checkout was sequential.
    pub workers: usize,
    /// Blobs streamed into their files in pieces instead of read whole (big blobs that need
    /// no conversion; see `core.bigFileThreshold`).
    pub streamed: usize,
    /// Paths that collided with another entry (case-insensitive or normalising filesystems);
    /// the last one written wins, as with git, and the caller warns about them.
    pub collisions: Vec<BString>,
    /// What the donor work tree gave ([`Options::donor`]): files cloned, and why the others
    /// were written.
    pub donor: Option<crate::write::donor::Report>,
}

/// Check out `tree` from `repo` into `worktree` and record it in the index at `index_path`.
///
/// The index lock is taken first and held to the end; planning validates every path before any
/// directory is created; regular files go through the writer pool; symlinks and gitlinks are
/// written afterwards in the main thread; the index is written with the stat data the writers
/// returned. On failure the index is left as it was.
pub fn checkout(
    repo: &gix::Repository,
    tree: ObjectId,
    worktree: &Path,
    index_path: &Path,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<Outcome, Error> {
    checkout_planned(repo, tree, worktree, index_path, opts, ctx, None)
}

/// A tree walked and validated before its checkout starts ([`plan_ahead`]), so that a caller
/// can plan while something else runs: `git par worktree add` plans the commit it expects
/// while `git worktree add --no-checkout` sets the work tree up.
#[derive(Debug)]
pub struct Planned {
    tree: ObjectId,
    protect: gix_validate::path::component::Options,
    plan: Plan,
}

/// Walk and validate `tree` as [`checkout`] would with `opts`, for [`checkout_planned`].
pub fn plan_ahead(
    objects: &gix::OdbHandle,
    tree: ObjectId,
    opts: &Options,
) -> Result<Planned, Error> {
    Ok(Planned {
        tree,
        protect: opts.protect,
        plan: plan::from_tree_parallel(objects, tree, opts.protect, walkers())?,
    })
}

/// How the new index of a checkout of `tree` planned as `plan` gets its cache-tree: the walk's
/// trees where hashing gives the same ids ([`Plan::walked`]); for a plan with trees git would
/// not write as they are, the tree's own ids where git's `reset --hard` and `worktree add` prime
/// them ([`Options::prime_cache_tree`]), else hashed, as git's `clone` and `checkout` hash.
pub(crate) fn cache_tree_of<'p>(
    plan: &'p Plan,
    tree: ObjectId,
    opts: &Options,
) -> crate::index::record::CacheTree<'p> {
    use crate::index::record::CacheTree;
    match plan.walked(tree) {
        Some(walked) => CacheTree::Walked(walked),
        None if opts.prime_cache_tree && plan.odd => CacheTree::Primed(None),
        None => CacheTree::Rebuild,
    }
}

/// The largest full checkout whose index is encoded while its files are written
/// ([`crate::index::record::Prepared`]): 20 MB of index beside the writers; a larger one's index is
/// made after them, when the plan's memory is given back.
const PREPARE_MAX: usize = 200_000;

/// Threads for the walk of a tree to check out whole: one per CPU, at most four (beyond, the
/// root's subtrees are too few to share).
fn walkers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

impl Planned {
    /// The plan, if it is the one [`checkout`] would make of `tree` under `protect`.
    fn of(self, tree: ObjectId, protect: gix_validate::path::component::Options) -> Option<Plan> {
        let p = self.protect;
        let same = p.protect_windows == protect.protect_windows
            && p.protect_hfs == protect.protect_hfs
            && p.protect_ntfs == protect.protect_ntfs;
        (self.tree == tree && same).then_some(self.plan)
    }
}

/// [`checkout`], with the plan of `planned` where it is the plan of `tree` (a plan made ahead
/// of another tree, or under other path protections, is made again).
pub fn checkout_planned(
    repo: &gix::Repository,
    tree: ObjectId,
    worktree: &Path,
    index_path: &Path,
    opts: &Options,
    ctx: &Context<'_>,
    planned: Option<Planned>,
) -> Result<Outcome, Error> {
    let lock = IndexLock::acquire(index_path)?;
    crate::sys::phase::mark("checkout: index locked");
    let full = Full::plan(repo, tree, opts, planned)?;
    let root = crate::fs::Root::open(worktree).map_err(|source| Error::Directory {
        path: BString::from(worktree.as_os_str().as_encoded_bytes()),
        source,
    })?;
    // The index is encoded while the files are written, all but their stat data.
    // (Not when it is to be split: `record::commit` writes a split index.)
    let format = (!crate::index::split_index::wanted(repo, index_path))
        .then(|| crate::index::format::Format::of(repo, None));
    let (executed, prepared) = full.write_preparing(repo, &root, opts, ctx, tree, format);
    let executed = executed?;
    // A fresh work tree has no old state to fall back to: an interrupted or partly failed
    // checkout records no index (git's clone does the same), and a `reset --hard` converges.
    if executed.interrupted {
        return Err(Error::Interrupted);
    }
    if !executed.errors.is_empty() {
        return Err(Error::Entries(executed.errors));
    }
    let outcome = Outcome {
        entries: full.jobs.len(),
        bytes_written: executed.bytes_written,
        workers: executed.workers,
        streamed: executed.streamed,
        collisions: executed.collisions,
        donor: executed.donor,
    };
    // Record: the index is made now, in index order, with the stat data the writers returned
    // (skip-worktree entries were not written: their stat data stays empty, as git's).
    if let Some(prepared) = prepared {
        crate::sys::memory::drop_apart(full);
        crate::sys::phase::mark("files written");
        crate::index::record::commit_prepared(lock, prepared, executed.stats)?;
        crate::sys::phase::mark("index written");
        crate::repo::hooks::index_changed(repo, true, false);
        return Ok(outcome);
    }
    let mut full = full;
    // What the index does not need goes before it is made (a million jobs are 16 MiB); the
    // directories stay for its cache-tree.
    full.jobs = Vec::new();
    let index = full.index(repo.object_hash(), &executed.stats);
    let plan = Plan {
        entries: Vec::new(),
        ..std::mem::take(&mut full.plan)
    };
    drop(full);
    let cache_tree = cache_tree_of(&plan, tree, opts);
    // A new index: its version comes from the configuration, its cache-tree from `tree`.
    crate::sys::phase::mark("files written");
    crate::index::record::commit(
        lock,
        repo,
        index,
        crate::index::record::Keep {
            tree: Some(tree),
            previous: None,
            cache_tree,
            resolve_undo: None,
            changed_paths: None,
            fsmonitor: None,
        },
    )?;
    crate::sys::phase::mark("index written");
    crate::repo::hooks::index_changed(repo, true, false);
    Ok(outcome)
}

/// A full checkout planned: every entry of a tree, the skeleton index that records them and the
/// entries to write. [`checkout`] plans, writes and records it; planning and writing are apart so
/// that a caller with other rules for recording (what a failed entry or Ctrl-C leaves in the
/// index) can write the same checkout: an update of an empty work tree (`initial.rs`).
pub(crate) struct Full {
    /// The tree's entries (index order) and the directories the written ones need.
    pub plan: Plan,
    /// Per planned entry, whether sparse checkout leaves it out (recorded with its
    /// skip-worktree bit, not written); empty when none is left out. The index itself is made
    /// once the files are written ([`Full::index`]): a million entries' index (110 MiB) is not
    /// held beside the plan while the writers run.
    pub skipped: Vec<bool>,
    /// The entries to write: all but those sparse checkout leaves out.
    pub jobs: Vec<crate::write::Job>,
}

impl Full {
    /// Plan the checkout of `tree`: walk and validate it, build the skeleton index, and apply
    /// the sparse-checkout patterns (entries outside them are recorded with their
    /// skip-worktree bit and not written; only the directories of written entries are made).
    /// Nothing touches the work tree.
    pub(crate) fn plan(
        repo: &gix::Repository,
        tree: ObjectId,
        opts: &Options,
        planned: Option<Planned>,
    ) -> Result<Full, Error> {
        let mut plan = match planned.and_then(|p| p.of(tree, opts.protect)) {
            Some(plan) => plan,
            None => plan::from_tree_parallel(&repo.objects, tree, opts.protect, walkers())?,
        };
        crate::sys::phase::mark("tree planned");
        let excluded = match crate::plan::sparse::Sparse::load(repo)? {
            Some(sparse) => sparse.excluded(
                repo.object_hash(),
                plan.entries
                    .iter()
                    .map(|e| (e.path.as_bstr(), e.kind.index_mode())),
            )?,
            None => Vec::new(),
        };
        let jobs: Vec<crate::write::Job> = (0..plan.entries.len())
            .filter(|&i| !excluded.get(i).copied().unwrap_or(false))
            .map(|entry| crate::write::Job {
                entry,
                replace: false,
            })
            .collect();
        let mut skipped = Vec::new();
        if jobs.len() < plan.entries.len() {
            let needed: std::collections::HashSet<&bstr::BStr> = crate::fs::leading_dirs_of(
                jobs.iter().map(|j| plan.entries[j.entry].path.as_bstr()),
            )
            .collect();
            let dirs = std::mem::take(&mut plan.dirs);
            let all = dirs.len();
            plan.dirs = dirs
                .into_iter()
                .filter(|d| needed.contains(d.as_bstr()))
                .collect();
            // Only the directories of written entries are made. Where some go, the index still
            // has entries below them, which the trees left could not describe: the cache-tree
            // is hashed.
            if plan.dirs.len() != all {
                plan.trees = None;
            }
            skipped = excluded;
        }
        Ok(Full {
            plan,
            skipped,
            jobs,
        })
    }

    /// The index of the checkout: every planned entry in index order with `stats` (per plan
    /// entry; none for an entry not written), and the skip-worktree bit of those sparse
    /// checkout leaves out.
    pub(crate) fn index(
        &self,
        object_hash: gix::hash::Kind,
        stats: &[Option<gix::index::entry::Stat>],
    ) -> gix::index::State {
        let mut index = skeleton_index(&self.plan, object_hash);
        for (k, entry) in index.entries_mut().iter_mut().enumerate() {
            entry.stat = stats.get(k).copied().flatten().unwrap_or_default();
            if self.skipped.get(k).copied().unwrap_or(false) {
                entry.flags.insert(gix::index::entry::Flags::SKIP_WORKTREE);
            }
        }
        index
    }

    /// [`Full::write`], with the new index encoded on a thread of its own meanwhile in `format`
    /// (all but its stat data: [`crate::index::record::Prepared`]) when `format` is given and the
    /// checkout is not too large to hold it beside the writers' work ([`PREPARE_MAX`]).
    pub(crate) fn write_preparing(
        &self,
        repo: &gix::Repository,
        root: &crate::fs::Root,
        opts: &Options,
        ctx: &Context<'_>,
        tree: ObjectId,
        format: Option<crate::index::format::Format>,
    ) -> (
        Result<crate::write::Executed, Error>,
        Option<crate::index::record::Prepared>,
    ) {
        std::thread::scope(|scope| {
            let preparing = format
                .filter(|_| self.plan.entries.len() <= PREPARE_MAX)
                .and_then(|format| {
                    let repo = repo.clone();
                    std::thread::Builder::new()
                        .name("git-par index".into())
                        .spawn_scoped(scope, move || {
                            crate::sys::memory::yield_to_the_others();
                            let index = self.index(repo.object_hash(), &[]);
                            let how = cache_tree_of(&self.plan, tree, opts);
                            crate::index::record::prepare(&repo, index, Some(tree), how, format)
                        })
                        .ok()
                });
            let executed = self.write(repo, root, opts, ctx);
            (executed, preparing.and_then(|thread| thread.join().ok()))
        })
    }

    /// Write the planned entries into the empty work tree `root`: the missing blobs of a
    /// partial clone fetched first, then the writer pool with the attributes read from the
    /// skeleton index (then the work tree, git's checkout order). Per-entry failures and an
    /// interruption are in the result, for the caller to record as its command records them.
    pub(crate) fn write(
        &self,
        repo: &gix::Repository,
        root: &crate::fs::Root,
        opts: &Options,
        ctx: &Context<'_>,
    ) -> Result<crate::write::Executed, Error> {
        let plan = &self.plan;
        crate::objects::prefetch::missing_blobs(
            repo,
            self.jobs.iter().map(|j| &plan.entries[j.entry]),
            ctx,
        )?;
        // git reads the attributes of a checkout from the index first and from the work tree
        // where the index has no `.gitattributes` (`GIT_ATTR_CHECKOUT`); an empty work tree
        // holds none the new index lacks, so the index alone gives the same attributes without
        // an attempt to open `<dir>/.gitattributes` in every directory of the tree (4,000
        // failed opens for deno's 4,300 directories, by path, each writer its own).
        let (filter, attributes) = crate::write::filters_for(
            repo,
            &attribute_files(plan, repo.object_hash()),
            gix::worktree::stack::state::attributes::Source::IdMapping,
        )?;
        crate::sys::phase::mark("filters and work tree ready");
        let donor = match (&opts.donor, opts.reflink) {
            (Some(path), crate::write::donor::Reflink::Auto) => Some(
                crate::write::donor::Donor::prepare(repo, plan, root, path, opts.clone_min_size)
                    .map_err(|off| crate::write::donor::Report {
                        path: path.clone(),
                        off: Some(off.to_string()),
                        ..crate::write::donor::Report::default()
                    }),
            ),
            _ => None,
        };
        crate::sys::phase::mark("donor read");
        let mut executed = crate::write::execute(
            repo,
            plan,
            &self.jobs,
            root,
            opts,
            crate::write::Filters {
                pipeline: &filter,
                attributes: &attributes,
                present: crate::write::attributes_present(
                    repo,
                    root,
                    plan.entries.iter().map(|e| e.path.as_bstr()),
                ),
            },
            ctx.progress,
            ctx.interrupt,
            true,
            donor.as_ref().and_then(|d| d.as_ref().ok()),
        )?;
        executed.donor = donor.map(|d| match d {
            Ok(donor) => donor.report(),
            Err(report) => report,
        });
        Ok(executed)
    }
}

/// An index of the `.gitattributes` files of `plan` alone: all the attribute stack of a fresh
/// checkout reads of an index (which blob each of them is).
fn attribute_files(plan: &Plan, object_hash: gix::hash::Kind) -> gix::index::State {
    index_of(
        plan.entries
            .iter()
            .filter(|e| e.path == ".gitattributes" || e.path.ends_with(b"/.gitattributes")),
        object_hash,
    )
}

/// An index with every planned entry and zeroed stat data: the attribute machinery reads
/// `.gitattributes` blobs through it before anything exists on disk, and the record step fills
/// in the stats afterwards.
pub(crate) fn skeleton_index(plan: &Plan, object_hash: gix::hash::Kind) -> gix::index::State {
    index_of(plan.entries.iter(), object_hash)
}

/// An index of `entries` (in index order), with zeroed stat data and no flags.
fn index_of<'p>(
    entries: impl Iterator<Item = &'p crate::plan::Entry>,
    object_hash: gix::hash::Kind,
) -> gix::index::State {
    let mut state = gix::index::State::new(object_hash);
    for entry in entries {
        state.dangerously_push_entry(
            gix::index::entry::Stat::default(),
            entry.id,
            gix::index::entry::Flags::empty(),
            entry.kind.index_mode(),
            entry.path.as_ref(),
        );
    }
    state
}
