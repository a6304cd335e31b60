//! Execute: write a selection of a plan's entries, regular files through the writer pool and
//! everything else in a sequential tail, and return the stat data of what was written.
//!
//! This is shared by the full checkout (every entry), the two-way update (only the entries
//! that change) and the restore of paths. Every create is `O_EXCL`: something unexpected in the
//! way is a collision, never an overwrite. A [`Job`] that replaces a tracked file has it unlinked
//! by its own worker just before the new one is created, never in a mass pass beforehand: an
//! interrupted or failed update leaves every path old or new, except the files in flight at a
//! SIGKILL (one per worker). A failed entry is reported and the others are still written,
//! except after a required filter failed, which stops the run as it stops git
//! ([`Error::Filter`]).
//!
//! Entries whose `filter` attribute names a configured driver that runs a process go, in a
//! parallel run, from the writers to filter threads (`crate::convert::filter::queue`), so that no
//! unfiltered entry waits for a filter; a sequential run filters them in line, in index order, as
//! git does.

mod attributes;
pub mod donor;
mod entry;
pub(crate) mod error;
mod failure;
mod filters;
pub mod options;
mod pool;
mod read;
mod tail;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use bstr::ByteSlice;

use crate::convert::filter::Fatal;
use crate::fs::tune;
use crate::fs::{Dirs, Root};
use crate::plan::{Kind, Plan};
use crate::sys::budget::Budget;
use crate::sys::context::Progress;
use crate::write::error::{EntryError, Error};
use crate::write::options::Options;
pub use attributes::attributes_present;
pub(crate) use attributes::filters_for;
use failure::Failure;
use filters::Delayed;
use pool::pool;
use tail::{tail, Collisions};

/// One entry to write: an index into the plan's entries, and whether a file the index tracks
/// is at its path now (the worker unlinks it right before creating the new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Index into `plan.entries`.
    pub entry: usize,
    /// Whether the path holds a tracked file or symlink to replace.
    pub replace: bool,
}

/// The content conversion the writers apply.
#[derive(Clone, Copy)]
pub struct Filters<'a> {
    /// The gix-filter pipeline (eol, encoding), cloned per worker.
    pub pipeline: &'a gix::filter::plumbing::Pipeline,
    /// The attribute stack over the new index, cloned per worker.
    pub attributes: &'a gix::worktree::Stack,
    /// Whether any attribute file can apply at all (see [`attributes_present`]); without one the
    /// per-file attribute lookups are skipped.
    pub present: bool,
}

/// What [`execute`] wrote.
#[derive(Debug)]
pub struct Executed {
    /// Stat data per plan entry (same indices as `plan.entries`); `None` for entries that were
    /// not written: not selected, failed (see `errors`) or not reached before an interruption.
    pub stats: Vec<Option<gix::index::entry::Stat>>,
    /// The entries that could not be written, in path order; the others were written.
    pub errors: Vec<EntryError>,
    /// Whether the run stopped early because `should_interrupt` was set: the entries in flight
    /// were finished, the rest were not started.
    pub interrupted: bool,
    /// Writer threads used.
    pub workers: usize,
    /// Entries that collided with another one (git's `CE_MATCHED`: each entry found something
    /// of another entry in its place, and that other entry), in index order. Only one of each
    /// group is on disk: the last in index order, as with git's sequential checkout.
    pub collisions: Vec<bstr::BString>,
    /// Bytes written into regular files.
    pub bytes_written: u64,
    /// Blobs streamed into their files in pieces instead of read whole ([`crate::objects::stream`]).
    pub streamed: usize,
    /// What the donor gave, when the caller named one (set by the full checkout).
    pub donor: Option<crate::write::donor::Report>,
}

/// Create `plan.dirs` that do not exist yet and write the entries of `plan` named by `jobs`
/// (sorted by entry), using `filters` (the gix-filter pipeline and the attribute stack) for
/// content conversion. Per-entry failures and an interruption are reported in the result, not
/// as an error: the caller records what was written. `fresh` says the work tree was empty (a
/// clone, a new work tree): a directory in the way of a file can then only be a case-folded
/// leading directory of another entry, and is replaced as git's checkout replaces it. With a
/// `donor` (a fresh work tree only), the writers clone the files it can give
/// ([`crate::write::donor`]).
#[allow(clippy::too_many_arguments)]
pub fn execute(
    repo: &gix::Repository,
    plan: &Plan,
    jobs: &[Job],
    root: &Root,
    opts: &Options,
    filters: Filters<'_>,
    progress: &Progress,
    should_interrupt: &AtomicBool,
    fresh: bool,
    donor: Option<&crate::write::donor::Donor>,
) -> Result<Executed, Error> {
    let run = Run {
        repo,
        plan,
        root,
        opts,
        filters,
        fresh,
        donor,
    };
    progress.total.store(jobs.len(), Ordering::Relaxed);
    let pooled = pooled_jobs(plan, jobs, opts);
    let sizes = run.sizes(pooled.len());
    let pending = crate::fs::DirsPending::default();
    let (mut shared, workers, results) =
        run.dirs_and_scan(pooled, &sizes, &pending, |pooled, scanned, pending| {
            let mut shared = run.shared(&sizes, scanned, (progress, should_interrupt))?;
            shared.dirs_pending = pending;
            crate::sys::phase::mark("pack entries scanned");
            let choice = sizes.choice;
            let (workers, results) = pool(repo, plan, pooled, choice, root, opts, filters, &shared);
            crate::sys::phase::mark("writers done");
            Ok::<_, Error>((shared, workers, results))
        })?;
    // Every directory is made by now: the tail's writer finds a missing one an error.
    shared.dirs_pending = None;
    let mut executed = Executed {
        stats: Vec::new(),
        errors: Vec::new(),
        interrupted: false,
        workers,
        collisions: Vec::new(),
        bytes_written: 0,
        streamed: 0,
        donor: None,
    };
    let (mut errors, collided) = gather(&mut shared, results, &mut executed);
    if !shared.halted() {
        run.tail(jobs, collided, &shared, &mut executed, &mut errors);
    }
    executed.interrupted = should_interrupt.load(Ordering::Relaxed);
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    finish(shared, errors, executed)
}

/// What the scan found: where each pooled blob is stored, and the plan's `.gitattributes` as
/// the writers read them.
type Scanned = (
    crate::objects::blobs::Blobs,
    crate::convert::attr_view::Reduced,
);

/// What [`execute`] was asked to do, shared by its phases (the sizes, the scan, the shared
/// state, the tail), so that none of them takes the whole argument list again.
struct Run<'a> {
    repo: &'a gix::Repository,
    plan: &'a Plan,
    root: &'a Root,
    opts: &'a Options,
    filters: Filters<'a>,
    fresh: bool,
    donor: Option<&'a crate::write::donor::Donor>,
}

/// How a run divides its threads and its memory: the writer count, and the budget's carve-outs
/// for the decoded-object caches and the writers' allowances.
struct Sizes {
    /// The writer count, and the most the run may grow to.
    choice: tune::Choice,
    /// Bytes of decoded-object cache in all ([`DELTA_CACHE`]).
    cache: u64,
    /// Of `cache`, the writers' shared cache of delta bases ([`crate::objects::blobs`]).
    bases: u64,
    /// Bytes each writer may decode before their size is known ([`DELTA_ALLOWANCE`]).
    allowance: u64,
    /// The most writers the run may have, at least one.
    most: u64,
}

impl Run<'_> {
    /// The writer count for `pooled` jobs on this work tree's filesystem, and what the budget
    /// sets apart before the writers start: sized together because the allowances are per
    /// writer.
    fn sizes(&self, pooled: usize) -> Sizes {
        let kind = tune::Kind::of(self.root.fd());
        let mut choice = self.opts.choice(kind, pooled);
        // Clones scale worse than writes: a run the donor gives most of takes its own count.
        if let Some(most) = self
            .donor
            .filter(|_| self.fresh && choice.source == tune::Source::Auto)
            .and_then(|d| d.writers(pooled))
        {
            choice.workers = choice.workers.min(most);
            choice.max = choice.workers;
        }
        let cache = (self.opts.budget / 4).min(DELTA_CACHE);
        // Each writer may decode objects of up to `allowance` bytes before their size is known
        // (and then counted): that much per writer is carved out of the budget, as the cache is.
        let most = choice.max.max(choice.workers).max(1) as u64;
        let allowance = ((self.opts.budget - cache) / (8 * most)).min(DELTA_ALLOWANCE);
        // Most of the cache is the writers' shared one of bases (`crate::objects::blobs`); gix's own, per
        // writer, serves what the object database still reads (loose objects, fallbacks).
        let bases = cache / 4 * 3;
        Sizes {
            choice,
            cache,
            bases,
            allowance,
            most,
        }
    }

    /// Make the plan's directories and scan the packs and the attribute files (both are needed
    /// before the first file is written), then `write` with the scan's findings and, while the
    /// directories are still being made, `pending`. The directories are made on a thread of
    /// their own when there are many, beside the scan. In a fresh tree that thread goes on while
    /// `write` runs, and a writer that finds a directory missing waits for it to finish
    /// ([`Root::dirs_waiting_for`]): the writers need not wait for the last directory to start
    /// on the first ones, and nothing is made twice.
    fn dirs_and_scan<'p, R>(
        &self,
        pooled: Vec<Job>,
        sizes: &Sizes,
        pending: &'p crate::fs::DirsPending,
        write: impl FnOnce(Vec<Job>, Scanned, Option<&'p crate::fs::DirsPending>) -> R,
    ) -> R {
        // Only what the thread needs goes to it (the repository handle is not `Sync`).
        let (root, plan) = (self.root, self.plan);
        let make_dirs = || {
            // Finished however the thread ends: a writer waiting for it must not wait forever.
            let _finish = FinishOnDrop(pending);
            make_dirs(root, plan);
        };
        if self.plan.dirs.len() < DIRECTORIES_APART {
            make_dirs();
            let scanned = self.scan(&pooled, sizes);
            return write(pooled, scanned, None);
        }
        std::thread::scope(|scope| {
            let made = std::thread::Builder::new()
                .name("git-par mkdir".into())
                .spawn_scoped(scope, make_dirs);
            let scanned = self.scan(&pooled, sizes);
            let join = |made: std::thread::ScopedJoinHandle<'_, ()>| {
                if let Err(panic) = made.join() {
                    std::panic::resume_unwind(panic);
                }
            };
            match made {
                Ok(made) if self.fresh => {
                    let written = write(pooled, scanned, Some(pending));
                    join(made);
                    written
                }
                Ok(made) => {
                    join(made);
                    write(pooled, scanned, None)
                }
                Err(_) => {
                    make_dirs();
                    write(pooled, scanned, None)
                }
            }
        })
    }

    /// Where each pooled blob is stored ([`crate::objects::blobs`]), and the plan's `.gitattributes` as
    /// the writers read them ([`crate::convert::attr_view`]).
    fn scan(&self, pooled: &[Job], sizes: &Sizes) -> Scanned {
        let (repo, plan) = (self.repo, self.plan);
        let blobs = crate::objects::blobs::Blobs::new(
            repo,
            plan,
            pooled.iter().map(|j| j.entry),
            usize::try_from(sizes.bases).unwrap_or(usize::MAX),
            usize::try_from(sizes.allowance).unwrap_or(usize::MAX),
        );
        let reduced = if self.filters.present {
            crate::convert::attr_view::Reduced::of(
                repo,
                plan.entries.iter().map(|e| (e.path.as_bstr(), &e.id)),
            )
        } else {
            crate::convert::attr_view::Reduced::default()
        };
        (blobs, reduced)
    }

    /// The state all writers share, from the run's sizes and the scan's findings; `Err` when
    /// the filter configuration cannot be read.
    fn shared<'s>(
        &self,
        sizes: &Sizes,
        (blobs, reduced): Scanned,
        (progress, should_interrupt): (&'s Progress, &'s AtomicBool),
    ) -> Result<Shared<'s>, Error>
    where
        Self: 's,
    {
        let (repo, opts) = (self.repo, self.opts);
        let Sizes {
            choice,
            cache,
            bases,
            allowance,
            most,
        } = *sizes;
        Ok(Shared {
            written: (0..self.plan.entries.len())
                .map(|_| OnceLock::new())
                .collect(),
            budget: Budget::new(opts.budget - cache - 3 * allowance * most),
            pack_cache: usize::try_from(cache - bases).unwrap_or(usize::MAX) / choice.max.max(1),
            blobs,
            progress,
            should_interrupt,
            bytes_written: AtomicU64::new(0),
            attributes_present: self.filters.present,
            reduced,
            common_attributes: self.fresh && self.filters.present,
            next_chunk: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            cpu_ns: AtomicU64::new(0),
            sampling: AtomicBool::new(false),
            stream_above: opts.stream_threshold,
            streamed: AtomicUsize::new(0),
            eol: crate::convert::EolConfig::of(&repo.config_snapshot()),
            target: AtomicUsize::new(usize::MAX),
            chunks: std::sync::OnceLock::new(),
            drivers: crate::convert::filter::drivers(repo).map_err(|err| Error::Repository {
                context: "reading filter configuration",
                source: err.into(),
            })?,
            command_context: repo
                .command_context()
                .map_err(crate::write::error::repo_err("setting up filters"))?,
            meta: opts.filter_meta.clone(),
            donor: self.donor.filter(|_| self.fresh),
            queues: [
                crate::convert::filter::queue::Queue::new(),
                crate::convert::filter::queue::Queue::new(),
            ],
            claims: std::sync::OnceLock::new(),
            fatal: Mutex::new(None),
            stop: AtomicBool::new(false),
            fatal_entry: AtomicUsize::new(usize::MAX),
            messages: Mutex::new(Vec::new()),
            dirs_pending: None,
        })
    }

    /// The sequential tail ([`tail()`]) with a writer of its own in the calling thread, after
    /// the pool: the entries that `collided`, then symlinks and gitlinks.
    fn tail(
        &self,
        jobs: &[Job],
        collided: Vec<Job>,
        shared: &Shared<'_>,
        executed: &mut Executed,
        errors: &mut Vec<EntryError>,
    ) {
        let (repo, filters) = (self.repo, self.filters);
        let (filter, attributes) = (filters.pipeline.clone(), filters.attributes.clone());
        let mut tail_worker = Worker::new(
            repo.clone(),
            (filter, attributes),
            self.root,
            self.opts,
            shared,
        );
        let collisions = Collisions {
            fresh: self.fresh,
            ignore_case: repo
                .config_snapshot()
                .boolean("core.ignorecase")
                .unwrap_or(false),
            marked: vec![false; self.plan.entries.len()],
        };
        let collided = (collided, collisions);
        tail(
            &mut tail_worker,
            self.plan,
            jobs,
            collided,
            shared,
            executed,
            errors,
        );
        shared.keep_messages(usize::MAX, &mut tail_worker.runner);
    }
}

/// Finishes the [`crate::fs::DirsPending`] of the directory thread when that thread ends, by
/// returning or by a panic.
struct FinishOnDrop<'p>(&'p crate::fs::DirsPending);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Create the plan's directories that do not exist yet. They are sorted, parents before
/// children, so the directories on the way to the last one are kept open
/// ([`Root::dirs_descending`]): each parent is then reached by one component's lookup rather
/// than its whole path's.
fn make_dirs(root: &Root, plan: &Plan) {
    let mut dirs = root.dirs_descending();
    for dir in &plan.dirs {
        // A symlink or file where a directory belongs is replaced by the directory (the
        // link itself goes, never what it points to), as git's `create_directories` does
        // under force; callers have refused or cleared untracked files in the way
        // beforehand. A directory that cannot be made is not fatal: each entry below it
        // fails on its own in the tail, with its path, and the rest of the checkout goes
        // on, as with git.
        let _ = dirs.mkdir(dir.as_bstr(), true);
    }
    crate::sys::phase::mark("directories made");
}

/// The pool's results sorted out: the stat data the writers set in place go to `executed`, with
/// those of the results written; the failures are returned, and the entries that collided, for
/// the tail; a fatal failure is recorded in `shared`.
fn gather(
    shared: &mut Shared<'_>,
    results: Vec<JobResult>,
    executed: &mut Executed,
) -> (Vec<EntryError>, Vec<Job>) {
    // Same size and alignment: collected in place.
    let mut stats: Vec<Option<gix::index::entry::Stat>> = std::mem::take(&mut shared.written)
        .into_iter()
        .map(OnceLock::into_inner)
        .collect();
    let mut errors = Vec::new();
    let mut collided = Vec::new();
    for (job, result) in results {
        match result {
            Ok(stat) => stats[job.entry] = Some(stat),
            Err(Failure::Collision) => collided.push(job),
            Err(Failure::Error(err)) => errors.push(err),
            Err(Failure::Fatal(fatal)) => shared.set_fatal(job, fatal),
            Err(Failure::Delayed | Failure::Queued(_)) => {
                unreachable!("delayed and queued entries are the filter threads' to finish")
            }
        }
    }
    executed.stats = stats;
    (errors, collided)
}

/// The end of a run: the filters' error lines handed to the caller in index order, as git
/// prints them one entry after the other, and the run's outcome, which a required filter's
/// failure turns into an error (git dies there: only the lines and failures before its entry
/// count).
fn finish(
    shared: Shared<'_>,
    mut errors: Vec<EntryError>,
    mut executed: Executed,
) -> Result<Executed, Error> {
    let fatal = shared
        .fatal
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let mut messages = shared
        .messages
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    crate::sys::memory::drop_apart(shared.blobs);
    messages.sort_by_key(|(entry, _)| *entry);
    let last = fatal.as_ref().map_or(usize::MAX, |(entry, _)| *entry);
    shared
        .progress
        .messages
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(
            messages
                .into_iter()
                .filter(|(entry, _)| *entry <= last)
                .map(|(_, m)| m),
        );
    if let Some((_, fatal)) = fatal {
        // git dies at the entry: what failed before it was reported before it.
        errors.retain(|e| e.path < fatal.path);
        return Err(Error::Filter {
            errors,
            message: fatal.message,
        });
    }
    executed.errors = errors;
    executed.bytes_written = shared.bytes_written.load(Ordering::Relaxed);
    executed.streamed = shared.streamed.load(Ordering::Relaxed);
    Ok(executed)
}

/// The jobs the writer pool takes: regular files, and symlinks when they are written as plain
/// files (`core.symlinks=false`); symlinks and gitlinks are the tail's.
fn pooled_jobs(plan: &Plan, jobs: &[Job], opts: &Options) -> Vec<Job> {
    jobs.iter()
        .filter(|j| match plan.entries[j.entry].kind {
            Kind::File | Kind::Executable => true,
            Kind::Symlink => !opts.symlinks,
            Kind::Gitlink => false,
        })
        .copied()
        .collect()
}

/// State shared by all writers of one checkout.
struct Shared<'a> {
    /// The stat data of each entry a writer wrote, by plan entry: set in place, so that a
    /// million written files cost one slot each and no list of results to gather and merge
    /// (a result per entry was 80 bytes, in per-writer vectors grown by doubling, then copied).
    written: Vec<OnceLock<gix::index::entry::Stat>>,
    budget: Budget,
    /// Where each pooled blob is stored, and the bases still needed ([`crate::objects::blobs`]).
    blobs: crate::objects::blobs::Blobs,
    progress: &'a Progress,
    should_interrupt: &'a AtomicBool,
    bytes_written: AtomicU64,
    /// Whether any attribute file can apply (a `.gitattributes` in the tree, `info/attributes`,
    /// a global attributes file): without one, the per-file attribute lookup is skipped.
    attributes_present: bool,
    /// The plan's `.gitattributes` as the writers' attribute lookups read them: without the
    /// lines that convert nothing ([`crate::convert::attr_view`]).
    reduced: crate::convert::attr_view::Reduced,
    /// Whether the writers may take an entry's attributes from an earlier entry's with the same
    /// signature ([`crate::convert::attr_view::Reduced::signature`]): the work tree is fresh (no
    /// untracked attribute file can add to the tree's) and has attribute files.
    common_attributes: bool,
    /// The configured filter drivers (see [`crate::convert::filter`]).
    drivers: Vec<gix::filter::plumbing::Driver>,
    /// The environment and directory filter processes run with.
    command_context: gix::command::Context,
    /// Blobs of at least this many bytes that need no conversion are streamed
    /// ([`crate::objects::stream`]).
    stream_above: u64,
    /// Blobs streamed so far.
    streamed: AtomicUsize,
    /// `core.autocrlf` and `core.eol`: with `core.autocrlf=true` a file no attribute marks is
    /// converted; otherwise, where no attribute file exists, the conversion step is skipped.
    eol: crate::convert::EolConfig,
    /// Bytes of decoded-object cache per writer ([`DELTA_CACHE`]).
    pack_cache: usize,
    /// Pooled entries finished (written or failed), for the refiner's measurements.
    finished: AtomicUsize,
    /// CPU time the writers used (in nanoseconds, counted per chunk), for the refiner.
    cpu_ns: AtomicU64,
    /// Whether the refiner still samples `cpu_ns`: the thread's CPU clock is a system call per
    /// chunk (4,300 on deno's checkout), read only while someone looks at it.
    sampling: AtomicBool,
    /// Writers with an id below this take chunks; the others stop at their next one.
    target: AtomicUsize,
    /// Where the chunks of `pooled` start, and its length last (see `pool::spread_directories`);
    /// unset: one chunk (a sequential run).
    chunks: std::sync::OnceLock<Vec<usize>>,
    /// What long-running filters are told about the checkout (`ref=`, `treeish=`).
    meta: crate::convert::filter::Meta,
    /// The work tree whose clean files are cloned instead of written ([`crate::write::donor`]).
    donor: Option<&'a crate::write::donor::Donor>,
    /// Filtered entries the writers handed over, for the filter threads: those of long-running
    /// filters ([`PROCESS`](filters::PROCESS)), and the others
    /// ([`ONESHOT`](filters::ONESHOT): a command per file, or no command).
    queues: [crate::convert::filter::queue::Queue<Job>; 2],
    /// When a scout runs ([`Worker::scout`]): per plan entry, whether the scout or a writer has
    /// taken it, so that each entry is handled once, by whoever took it first.
    claims: std::sync::OnceLock<Vec<AtomicBool>>,
    /// The first (in index order) entry whose required filter failed, and git's message: the
    /// run stops and the caller dies with it, as git does.
    fatal: Mutex<Option<(usize, Fatal)>>,
    /// Set with `fatal`: take no more entries.
    stop: AtomicBool,
    /// The plan entry of the first fatal failure in index order so far (`usize::MAX`: none):
    /// the writers still write the entries before it, as git (which dies at the first one it
    /// meets) would have written them.
    fatal_entry: AtomicUsize,
    /// git's `error:` lines from the filters (failures of non-required filters and the like),
    /// each with the index of the entry it is about (`usize::MAX`: none in particular).
    messages: Mutex<Vec<(usize, String)>>,
    /// The directories still being made while the writers run (a fresh tree with many): a
    /// writer that finds one missing waits for them ([`Root::dirs_waiting_for`]).
    dirs_pending: Option<&'a crate::fs::DirsPending>,
    /// Number of the next chunk of `pooled` to hand out. Chunks are contiguous runs of the
    /// sorted path list within one directory, so a worker stays in one directory (good for the
    /// kernel's dentry cache), while taking them dynamically keeps slow chunks from stalling the
    /// run.
    next_chunk: AtomicUsize,
}

impl Shared<'_> {
    /// Returns true if and only if the run must take no more entries: interrupted, or a
    /// required filter failed.
    fn halted(&self) -> bool {
        self.should_interrupt.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    /// Whether the writers stop before plan entry `entry`: interrupted, or a fatal failure at an
    /// entry before it. Entries before the first fatal one are still written (another writer
    /// may meet a fatal failure earlier in index order, which is then the one reported, as git
    /// reports the first).
    fn halted_before(&self, entry: usize) -> bool {
        self.should_interrupt.load(Ordering::Relaxed)
            || entry > self.fatal_entry.load(Ordering::Relaxed)
    }

    /// Record that `job`'s required filter failed, keeping the first such entry in index order
    /// (git dies at the first one it meets), and stop the run after the entries before it.
    fn set_fatal(&self, job: Job, fatal: Fatal) {
        let mut slot = self.fatal.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_none_or(|(entry, _)| job.entry < *entry) {
            *slot = Some((job.entry, fatal));
        }
        self.fatal_entry.fetch_min(job.entry, Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Take plan entry `entry` for the caller: false if the scout or a writer has it already.
    /// Always true when no scout runs.
    fn claim(&self, entry: usize) -> bool {
        self.claims
            .get()
            .is_none_or(|claims| !claims[entry].swap(true, Ordering::Relaxed))
    }

    /// Count the bytes of the file just written (`st`, its stat data) and return its stat data
    /// as the index records them: the last step of every written entry.
    #[inline]
    fn wrote(&self, st: &crate::fs::Stat) -> gix::index::entry::Stat {
        self.bytes_written
            .fetch_add(u64::try_from(st.st_size).unwrap_or(0), Ordering::Relaxed);
        crate::fs::index_stat(st)
    }

    /// Keep `runner`'s error lines for the caller, as being about plan entry `entry`.
    fn keep_messages(&self, entry: usize, runner: &mut crate::convert::filter::Runner<'_>) {
        if !runner.messages.is_empty() {
            self.messages
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(runner.messages.drain(..).map(|m| (entry, m)));
        }
    }
}

/// The most memory for decoded objects kept to resolve deltas (git's `core.deltaBaseCacheLimit`
/// is 96 MiB), split between the writers. A quarter of the budget at most, and carved out of it:
/// the budget bounds blobs in flight and this cache together. gix keeps each resolved object
/// (not the intermediate bases of its chain), so a delta whose base was written a while ago
/// is one delta away instead of a whole chain: on the bench's 40,000 files (tmpfs) a 64 MiB cache
/// cut the CPU of a clone from 1.96 s to 1.60 s (user + sys, medians of 5).
const DELTA_CACHE: u64 = 64 * 1024 * 1024;

/// From this many directories to make, they are made on a thread of their own while the packs
/// are scanned (a thread costs tens of microseconds to start, a directory a few).
const DIRECTORIES_APART: usize = 64;

/// The largest object (a level of a delta chain, or its instructions) a writer decodes itself
/// before its size is known to the budget: a writer holds at most three such buffers (a base,
/// the instructions, the result), carved out of the budget; bigger ones are read through the
/// object database, whose header says the size before the object is read.
const DELTA_ALLOWANCE: u64 = 2 * 1024 * 1024;

/// What a writer did with one pooled job: the stat data of the written entry, or why not.
type JobResult = (Job, Result<gix::index::entry::Stat, Failure>);

/// A writer: one thread's object-database handle, caches, filter pipeline, filter processes and
/// buffer. Workers share nothing but the budget, the counters and the queue of filtered
/// entries, so there is no lock on the hot path, and no writer waits for a filter: in a
/// parallel run, filtered entries go to the filter threads (also `Worker`s).
struct Worker<'r> {
    repo: gix::Repository,
    filter: gix::filter::plumbing::Pipeline,
    attributes: gix::worktree::Stack,
    runner: crate::convert::filter::Runner<'r>,
    /// Hand filtered entries to the filter threads instead of filtering them here, per queue
    /// ([`PROCESS`](filters::PROCESS), [`ONESHOT`](filters::ONESHOT)): only where that queue
    /// has threads.
    defer: [bool; 2],
    delayed: Vec<Delayed<'r>>,
    buf: Vec<u8>,
    /// This writer's state for reading blobs from packs ([`crate::objects::blobs`]).
    reader: crate::objects::blobs::Reader,
    /// The buffer a filter's output or a streamed blob is copied through.
    chunk: Vec<u8>,
    /// Where big blobs are streamed from.
    streamer: crate::objects::stream::Streamer,
    /// This writer's reader of loose objects, and the one it read last.
    loose: crate::objects::loose::Loose,
    /// The attribute search outcome, selecting the attributes we apply ourselves.
    outcome: gix::attrs::search::Outcome,
    /// The attributes looked up for each attribute signature met so far
    /// ([`Shared::common_attributes`]): a few, searched in turn.
    signatures: Vec<(u64, attributes::OwnAttributes<'r>)>,
    /// The directory the last file went into, kept open for the next one.
    dirs: Dirs<'r>,
    /// The donor's directory the last clone came from ([`Shared::donor`]).
    donor_dirs: Option<Dirs<'r>>,
    symlinks: bool,
}

impl<'r> Worker<'r> {
    /// A writer over `repo` (object cache off: each blob is read once), owning its clones of the
    /// filter pipeline and the attribute stack, and its own filter processes. The pipeline's
    /// drivers are taken out: the driver step runs here (after git's `*-BOM` encodings, with
    /// git's `required` semantics and delays).
    fn new(
        mut repo: gix::Repository,
        (mut filter, attributes): (gix::filter::plumbing::Pipeline, gix::worktree::Stack),
        root: &'r Root,
        opts: &Options,
        shared: &'r Shared<'_>,
    ) -> Self {
        repo.object_cache_size(0);
        // A decoded-object cache keyed by pack offset, sized from the budget: gix resolves a
        // delta chain from the nearest cached object, and small fixed LRUs miss almost always
        // on a big checkout (see [`DELTA_CACHE`]).
        let bytes = shared.pack_cache.max(1);
        repo.objects.set_pack_cache(move || {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(bytes))
        });
        filter.options_mut().drivers.clear();
        let streamer = crate::objects::stream::Streamer::new(&repo);
        let loose = crate::objects::loose::Loose::new(streamer.dirs().to_vec());
        let mut outcome = gix::attrs::search::Outcome::default();
        outcome.initialize_with_selection(
            &Default::default(),
            [
                "ident",
                "working-tree-encoding",
                "filter",
                "text",
                "crlf",
                "eol",
            ],
        );
        Worker {
            outcome,
            signatures: Vec::new(),
            repo,
            filter,
            attributes,
            runner: crate::convert::filter::Runner::new(
                &shared.drivers,
                shared.command_context.clone(),
            ),
            defer: [false; 2],
            delayed: Vec::new(),
            buf: Vec::new(),
            reader: crate::objects::blobs::Reader::default(),
            chunk: Vec::new(),
            streamer,
            loose,
            dirs: match shared.dirs_pending {
                Some(pending) => root.dirs_waiting_for(pending),
                None => root.dirs(),
            },
            donor_dirs: shared.donor.map(|d| d.root().dirs()),
            symlinks: opts.symlinks,
        }
    }
}
