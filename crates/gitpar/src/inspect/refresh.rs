//! Refresh: is the work tree file of an index entry still what the index says?
//!
//! The local-change check of a switch, the refresh of a forced reset and (later) `status` share
//! this: a parallel `lstat` over contiguous chunks of entries, and — only where the stat data
//! cannot decide (times or inode changed, or the entry is racily clean) — a re-hash of the file
//! through the to-git filters, also in parallel (git does that part sequentially).

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use bstr::BStr;
use gix::index::entry::{Mode, Stat};

use crate::fs::{Dirs, Root};

/// Why a check could not be made: the to-git conversion that re-hashes the files whose stat
/// data cannot decide could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The attribute stack of the work tree and the index could not be made.
    #[error(transparent)]
    Attributes(#[from] gix::Error),
    /// The filter drivers or the to-git pipeline could not be set up ([`crate::convert::filter`]
    /// says why in its own words).
    #[error("{0}")]
    Conversion(#[from] crate::convert::filter::Error),
}

/// One entry to check.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    /// Repository-relative path.
    pub path: &'a BStr,
    /// The index entry (object id, mode, stat data), borrowed from the index.
    pub entry: &'a gix::index::Entry,
}

/// The verdict for one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The file is what the index records, and its stat data says so.
    Clean,
    /// The file's content is what the index records but its stat data changed (or was racy):
    /// the index entry should take this fresh stat data, as git's refresh does.
    Refreshed(Stat),
    /// The file differs (content, type or exec bit) and its stat data shows it.
    Modified,
    /// The file differs although its stat data matches the index: a racily clean entry that
    /// git smudges (size 0) when it writes the index.
    RacilyModified,
    /// Nothing is at the path (or a leading directory is gone).
    Missing,
}

impl State {
    /// Returns true if and only if the file differs from the index entry (or is missing).
    pub fn is_changed(self) -> bool {
        matches!(
            self,
            State::Modified | State::RacilyModified | State::Missing
        )
    }
}

/// Which stat fields decide, from `core.fileMode`, `core.trustctime` and `core.checkStat`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatRules {
    file_mode: bool,
    trust_ctime: bool,
    minimal: bool,
}

impl StatRules {
    /// The rules `repo`'s configuration sets.
    pub(crate) fn of(repo: &gix::Repository) -> StatRules {
        let config = repo.config_snapshot();
        StatRules {
            file_mode: config.boolean("core.fileMode").unwrap_or(true),
            trust_ctime: config.boolean("core.trustctime").unwrap_or(true),
            minimal: config
                .string("core.checkStat")
                .is_some_and(|v| v.eq_ignore_ascii_case(b"minimal")),
        }
    }

    /// git's `match_stat_data` over the fields these rules count: ctime only with
    /// core.trustctime, and with core.checkStat=minimal only the seconds of mtime and the size.
    /// Times to the nanosecond: the refresh re-hashes a file touched within its second.
    fn same(self, entry: &gix::index::entry::Stat, st: &gix::index::entry::Stat) -> bool {
        self.same_times(entry, st, |t| (t.secs, t.nsecs))
    }

    /// [`StatRules::same`] with times in whole seconds, as git built without `USE_NSEC`
    /// (Debian's, most distributions') compares them: what git decides by stat alone (a
    /// reset's rewrites, the entries `sparse-checkout` finds not up to date) is decided so.
    pub(crate) fn same_as_git(
        self,
        entry: &gix::index::entry::Stat,
        st: &gix::index::entry::Stat,
    ) -> bool {
        self.same_times(entry, st, |t| (t.secs, 0))
    }

    fn same_times(
        self,
        entry: &gix::index::entry::Stat,
        st: &gix::index::entry::Stat,
        time: impl Fn(&gix::index::entry::stat::Time) -> (u32, u32),
    ) -> bool {
        if self.minimal {
            st.mtime.secs == entry.mtime.secs && st.size == entry.size
        } else {
            time(&st.mtime) == time(&entry.mtime)
                && (!self.trust_ctime || time(&st.ctime) == time(&entry.ctime))
                && st.ino == entry.ino
                && st.uid == entry.uid
                && st.gid == entry.gid
                && st.size == entry.size
        }
    }

    /// git's `ie_match_stat` without its racy check: whether the stat data `raw` (an `lstat`'s)
    /// matches what the index records for `entry` (type, exec bit, size, times, inode). What
    /// `verify_uptodate` asks of a file it found through a symlinked directory, where the
    /// refresh saw none.
    pub(crate) fn matches(self, entry: &gix::index::Entry, raw: &crate::fs::Stat) -> bool {
        use crate::fs::FileType;
        let kind = FileType::from_raw_mode(raw.st_mode);
        let type_ok = match entry.mode {
            Mode::SYMLINK => kind == FileType::Symlink,
            Mode::COMMIT => kind == FileType::Directory,
            _ => kind == FileType::RegularFile,
        };
        let exec_ok = !self.file_mode
            || kind != FileType::RegularFile
            || (raw.st_mode & 0o100 != 0) == (entry.mode == Mode::FILE_EXECUTABLE);
        type_ok && exec_ok && self.same_as_git(&entry.stat, &crate::fs::index_stat(raw))
    }
}

/// Entries per extra thread: below this, starting a thread costs more than it saves (git's
/// `preload-index.c` uses the same figure).
pub(crate) const THREAD_COST: usize = 500;

/// Seconds per entry and thread above which the first entries of an automatic run are taken as
/// waiting on I/O, when only the wall time is known: a warm `lstat` costs a few microseconds, a
/// cold one on a disk a hundred or more.
const SLOW_ITEM: f64 = 30e-6;

/// The same, for the time the first entries spent *blocked* (neither on a CPU nor waiting for
/// one, see [`crate::fs::tune::thread_schedstat`]): a warm `lstat` never blocks, so a few
/// microseconds per entry already mean reads from a disk or round trips to a server, however
/// busy the CPUs are with other work. Measured on the bench's 200,000-entry tree: 0 ns blocked
/// warm (also after milliseconds of waiting for a busy CPU), 7 to 110 µs per entry cold.
const BLOCKED_ITEM: f64 = 2e-6;

/// How long the first entries of an automatic run are measured at least (or [`PROBE_ITEMS`]
/// of the calling thread's entries, whichever comes first) before the run decides whether they
/// wait on I/O.
const PROBE: std::time::Duration = std::time::Duration::from_millis(5);

/// See [`PROBE`].
const PROBE_ITEMS: usize = 512;

/// Where an automatic run whose first entries waited on I/O jumps to: waiting threads cost
/// little, and doubling one measurement window at a time from two would take most of the run
/// (a cold ext4 on this project's 2-CPU machine: 64 threads are within 3% of the best count,
/// 16 are 40% slower).
const IO_BOUND_START: usize = 64;

/// The ceiling of an automatic run whose first entries waited on I/O.
const IO_BOUND_MAX: usize = 256;

/// How many entries a thread takes at a time: contiguous, so that a thread walks one directory
/// and the kernel's dentry cache stays warm.
const CHUNK: usize = 64;

/// The smallest chunk, for many threads over few entries.
const MIN_CHUNK: usize = 4;

/// Check `items` against the work tree `root`. `index` and `index_ts` (the index file's
/// mtime in seconds) decide racy entries; `threads` bounds the parallelism. The result has one
/// state per item, in order.
pub fn check<'a>(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::State,
    index_ts: i64,
    items: impl Iterator<Item = Item<'a>>,
    threads: usize,
) -> Result<Vec<State>, Error> {
    let items: Vec<Item<'a>> = items.collect();
    // As git's preload-index: a thread only pays off for a few hundred entries (THREAD_COST).
    let threads = threads.clamp(1, (items.len() / THREAD_COST).max(1));
    let fixed = crate::fs::tune::Choice {
        workers: threads,
        max: threads,
        source: crate::fs::tune::Source::Explicit,
    };
    let checked = check_with(
        repo,
        root,
        index,
        index_ts,
        items.len(),
        |i| Some(items[i]),
        None,
        fixed,
    )?;
    let mut fresh = checked.fresh.into_iter().peekable();
    Ok(checked
        .verdicts
        .into_iter()
        .enumerate()
        .map(|(i, verdict)| match verdict {
            Verdict::Refreshed => match fresh.next_if(|(at, _)| *at == i) {
                Some((_, stat)) => State::Refreshed(stat),
                None => unreachable!("every refreshed entry has its stat data"),
            },
            Verdict::Clean | Verdict::NotChecked => State::Clean,
            Verdict::Modified => State::Modified,
            Verdict::RacilyModified => State::RacilyModified,
            Verdict::Missing => State::Missing,
        })
        .collect())
}

/// git's racy smudge when it writes an index (`ce_smudge_racily_clean_entry`), for the entries
/// a command carried over from the index it read (`before`) without checking them: an entry not
/// older than that index whose file now differs although its stat data matches gets size 0, so
/// that a later index, written in a later second, cannot hide the change from git.
pub(crate) fn smudge_carried(
    repo: &gix::Repository,
    root: &Root,
    state: &mut gix::index::State,
    before: &gix::index::File,
    threads: usize,
) -> Result<(), Error> {
    let index_ts = before.timestamp().unix_seconds();
    if index_ts == 0 {
        return Ok(());
    }
    let carried = |e: &gix::index::Entry, path: &BStr| {
        e.mode != Mode::COMMIT
            && e.stat.size != 0
            && i64::from(e.stat.mtime.secs) >= index_ts
            && before
                .entry_by_path_and_stage(path, e.stage())
                .is_some_and(|old| old.id == e.id && old.stat == e.stat)
    };
    let candidates: Vec<usize> = state
        .entries()
        .iter()
        .enumerate()
        .filter(|(_, e)| carried(e, e.path(state)))
        .map(|(i, _)| i)
        .collect();
    if candidates.is_empty() {
        return Ok(());
    }
    let states = check(
        repo,
        root,
        state,
        index_ts,
        candidates.iter().map(|&i| {
            let entry = &state.entries()[i];
            Item {
                path: entry.path(state),
                entry,
            }
        }),
        threads,
    )?;
    for (i, verdict) in candidates.into_iter().zip(states) {
        if verdict == State::RacilyModified {
            state.entries_mut()[i].stat.size = 0;
        }
    }
    Ok(())
}

/// A [`State`] in one byte, without the stat data of [`State::Refreshed`]: a check over a
/// whole index keeps one per entry (200,000 of them for the bench's index: 40 bytes each were
/// 8 MB of fresh pages to fault in and fill), and the few fresh stat data apart
/// ([`Checked::fresh`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not an entry to check (the caller's `item` returned `None`).
    NotChecked,
    /// [`State::Clean`].
    Clean,
    /// [`State::Refreshed`]: its stat data is in [`Checked::fresh`].
    Refreshed,
    /// [`State::Modified`].
    Modified,
    /// [`State::RacilyModified`].
    RacilyModified,
    /// [`State::Missing`].
    Missing,
}

/// What [`check_with`] found.
pub(crate) struct Checked {
    /// One verdict per position.
    pub verdicts: Vec<Verdict>,
    /// The fresh stat data of the [`Verdict::Refreshed`] positions, ascending.
    pub fresh: Vec<(usize, Stat)>,
    /// The [`Verdict::Clean`] positions that are gitlinks, ascending: a gitlink is clean for the
    /// stat check when its directory is there, and the caller compares the submodule's commit.
    pub gitlinks: Vec<usize>,
    /// Where the entries whose bytes may change lie, when `size` was given.
    pub layout: Option<Layout>,
    /// The thread count the run ended with.
    pub threads: usize,
}

/// [`check`] over the positions `0..len`, `item` giving the entry at a position (or `None`
/// for one not to check: no vector of items is built, which for the bench's 200,000-entry
/// index cost 8 ms of a 260 ms refresh), with a thread count that may grow while it runs: the calling
/// thread works too and, between its chunks, feeds a [`crate::fs::tune::Refiner`] the number of
/// entries done; when the throughput keeps growing as threads double, more are started, and
/// when a doubling did not pay, the threads above the target stop after their chunk.
///
/// With `size` (the length in bytes of the entry at a position in the index file), the threads
/// also measure where in the file the entries whose bytes may change lie ([`Checked::layout`]),
/// while each entry is in their cache anyway: a walk over the whole index after the check to
/// find them cost 2 ms of the bench's refresh.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_with<'a>(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::State,
    index_ts: i64,
    len: usize,
    item: impl Fn(usize) -> Option<Item<'a>> + Sync,
    size: Option<&(dyn Fn(usize) -> usize + Sync)>,
    choice: crate::fs::tune::Choice,
) -> Result<Checked, Error> {
    if len == 0 {
        return Ok(Checked {
            verdicts: Vec::new(),
            fresh: Vec::new(),
            gitlinks: Vec::new(),
            layout: size.map(|_| Layout::default()),
            threads: 0,
        });
    }
    let (chunk, chunks, choice) = chunking(len, choice);
    // The attribute stack and the filters only serve the entries that must be re-hashed: built
    // by the first thread that meets one (the stack's mapping of the index's `.gitattributes`
    // entries reads every path of the index: 2.5 ms for the bench's 200,000 entries), not before
    // the first lstat.
    let filters = OnceLock::new();
    // The results are written in place: chunks of the output are handed out with their
    // positions, so nothing is collected per thread and merged afterwards (but the rare fresh
    // stat data).
    let mut verdicts = vec![Verdict::NotChecked; len];
    // The bytes of each chunk's entries in the index file, when `size` is given.
    let mut chunk_bytes = vec![0; if size.is_some() { chunks } else { 0 }];
    let outcome = {
        let pool = Pool {
            root,
            index,
            index_ts,
            rules: StatRules::of(repo),
            size,
            filters: &filters,
            filters_waited_ns: AtomicU64::new(0),
            slots: Pool::slots(&mut verdicts, &mut chunk_bytes, chunk),
            chunk,
            chunks,
            cursor: AtomicUsize::new(0),
            starts_with: choice.workers,
            done: AtomicUsize::new(0),
            cpu_ns: AtomicU64::new(0),
            measure_cpu: AtomicBool::new(choice.refinable()),
            target: AtomicUsize::new(choice.workers),
        };
        pool.run_all(repo, &item, &choice)
    };
    let (found, ended) = outcome.map_err(|failed| failed.into_error(filters))?;
    let layout = size.map(|_| Layout::of(&chunk_bytes, chunk, found.offsets));
    Ok(Checked {
        verdicts,
        fresh: found.fresh,
        gitlinks: found.gitlinks,
        layout,
        threads: ended,
    })
}

/// The size of a chunk, how many chunks `len` entries make, and `choice` fitted to them: many
/// threads (a high-latency filesystem, or a run that may grow to many) need smaller chunks to
/// share the work, four per thread at least, down to [`MIN_CHUNK`] entries; and every thread
/// needs a chunk at least.
fn chunking(
    len: usize,
    mut choice: crate::fs::tune::Choice,
) -> (usize, usize, crate::fs::tune::Choice) {
    let may_reach = if choice.source == crate::fs::tune::Source::Auto {
        choice.max.max(IO_BOUND_MAX)
    } else {
        choice.max
    };
    let chunk = if may_reach > 16 {
        (len / (may_reach * 4)).clamp(MIN_CHUNK, CHUNK)
    } else {
        CHUNK
    };
    let chunks = len.div_ceil(chunk);
    choice.workers = choice.workers.clamp(1, chunks);
    choice.max = choice.max.clamp(choice.workers, chunks.max(choice.workers));
    (chunk, chunks, choice)
}

/// One chunk of a run, handed out once: its verdicts, and (when [`check_with`] was given
/// `size`) where its length in bytes goes.
type Slot<'p> = (&'p mut [Verdict], Option<&'p mut usize>);

/// What the threads of one [`check_with`] share: what they check against, the chunks they take
/// and the counters by which the calling thread decides how many of them run.
struct Pool<'p> {
    root: &'p Root,
    index: &'p gix::index::State,
    index_ts: i64,
    rules: StatRules,
    size: Option<&'p (dyn Fn(usize) -> usize + Sync)>,
    /// The attribute stack and drivers for re-hashing, made by the first thread that needs them.
    filters: &'p OnceLock<Result<Filters, Error>>,
    /// How long the calling thread waited for another thread to make `filters`: a wait the
    /// probe ([`Growth::probe`]) must not take for I/O (it did, and started 64 threads on
    /// tmpfs).
    filters_waited_ns: AtomicU64,
    /// Each chunk, taken once (see [`Pool::next_chunk`]).
    slots: Vec<std::sync::Mutex<Option<Slot<'p>>>>,
    chunk: usize,
    chunks: usize,
    /// The first chunk that a thread without a run of its own may find left.
    cursor: AtomicUsize,
    /// How many threads the run starts with.
    starts_with: usize,
    /// The entries looked at, by all threads.
    done: AtomicUsize,
    /// CPU time of the checking threads, for the refiner (tune's Sample), read only while
    /// `measure_cpu`, that is while the refiner may still change the thread count: the clock is
    /// a system call, one per chunk per thread (3,000 for the bench's 200,000 entries).
    cpu_ns: AtomicU64,
    measure_cpu: AtomicBool,
    /// Worker `k` runs while `k < target`.
    target: AtomicUsize,
}

/// One thread's tools and findings, kept across its chunks.
struct Worker<'w> {
    filter: LazyFilter<'w>,
    buf: Vec<u8>,
    dirs: Dirs<'w>,
    /// The thread's CPU clock when it last added to [`Pool::cpu_ns`].
    cpu: u64,
    found: Found,
}

impl<'p> Pool<'p> {
    /// The chunks of `verdicts`, each with its entry of `chunk_bytes` (which is empty when no
    /// sizes are measured).
    fn slots(
        verdicts: &'p mut [Verdict],
        chunk_bytes: &'p mut [usize],
        chunk: usize,
    ) -> Vec<std::sync::Mutex<Option<Slot<'p>>>> {
        let mut bytes = chunk_bytes.iter_mut();
        verdicts
            .chunks_mut(chunk)
            .map(|out| std::sync::Mutex::new(Some((out, bytes.next()))))
            .collect()
    }

    /// Check every chunk: on the calling thread alone when one thread is all `choice` allows,
    /// else with `choice.workers` threads that the calling thread, working too, may add to
    /// between its chunks ([`Growth`]). Returns what the threads found and the thread count the
    /// run ended with.
    fn run_all<'a>(
        &self,
        repo: &gix::Repository,
        item: &(impl Fn(usize) -> Option<Item<'a>> + Sync),
        choice: &crate::fs::tune::Choice,
    ) -> Result<(Found, usize), Failed> {
        if choice.max == 1 && choice.source != crate::fs::tune::Source::Auto {
            return self.run(repo, item, 0, None).map(|found| (found, 1));
        }
        let sync = repo.clone().into_sync();
        let (results, ended) = std::thread::scope(|scope| {
            let spawn = |k: usize| {
                let sync = &sync;
                scope.spawn(move || self.run(&sync.to_thread_local(), item, k, None))
            };
            let mut growth = Growth::new(self, choice, spawn);
            let mine = self.run(repo, item, 0, Some(&mut |mine: usize| growth.between(mine)));
            let results: Vec<_> = std::iter::once(mine)
                .chain(
                    growth
                        .handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
                )
                .collect();
            (results, growth.started)
        });
        let ended = self.target.load(Ordering::Relaxed).min(ended);
        Found::merge(results).map(|all| (all, ended))
    }

    /// Worker `k`'s run: chunks until the work is out or the worker is surplus (`k` is not
    /// below the target), calling `between` with the number of entries looked at after each.
    /// Returns what it found.
    fn run<'a>(
        &self,
        repo: &gix::Repository,
        item: &impl Fn(usize) -> Option<Item<'a>>,
        k: usize,
        mut between: Option<&mut dyn FnMut(usize)>,
    ) -> Result<Found, Failed> {
        let mut worker = Worker {
            filter: LazyFilter {
                repo,
                index: self.index,
                filters: self.filters,
                waited: (k == 0).then_some(&self.filters_waited_ns),
                filter: None,
            },
            buf: Vec::new(),
            dirs: self.root.dirs_descending(),
            cpu: crate::sys::thread_cpu_ns(),
            found: Found::default(),
        };
        let mut own = (k < self.starts_with).then(|| k * self.chunks / self.starts_with);
        while k < self.target.load(Ordering::Relaxed) {
            let Some((n, (out, bytes))) = self.next_chunk(own) else {
                break;
            };
            own = Some(n + 1);
            let first = n * self.chunk;
            let looked = self.check_chunk(item, first, out, &mut worker);
            if let (Some(size), Some(bytes)) = (self.size, bytes) {
                *bytes = measure_chunk(size, first, out, &mut worker.found.offsets);
            }
            self.account(&mut worker.cpu, looked);
            if let Some(between) = between.as_mut() {
                between(looked);
            }
        }
        worker.filter.finish(worker.found)
    }

    /// The next chunk for a thread whose own run of chunks continues at `own`: that one if it is
    /// still there, else the first left. The threads a run starts with each take a run of chunks
    /// of their own (thread k of n from chunk k/n of the way on), so that a directory is mostly
    /// read by one thread: chunks dealt out in turn had every thread open every directory and
    /// probe each for `.gitattributes` when re-hashing (3,300 failed opens for the bench's 2,000
    /// re-hashed files with 2 threads). A thread whose next chunk is taken, or that was started
    /// later, takes the first chunk left.
    fn next_chunk(&self, own: Option<usize>) -> Option<(usize, Slot<'p>)> {
        let take = |n: usize| {
            self.slots.get(n).and_then(|slot| {
                slot.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
            })
        };
        own.and_then(|n| take(n).map(|c| (n, c))).or_else(|| loop {
            let n = self.cursor.fetch_add(1, Ordering::Relaxed);
            if n >= self.chunks {
                break None;
            }
            if let Some(c) = take(n) {
                break Some((n, c));
            }
        })
    }

    /// Check the entries of the chunk whose first position is `first` into its verdicts `out`,
    /// noting fresh stat data and clean gitlinks in the worker's findings. Returns how many
    /// entries were looked at: positions not to check cost nothing, and only the others count
    /// as done, for the refiner and the probe.
    fn check_chunk<'a>(
        &self,
        item: &impl Fn(usize) -> Option<Item<'a>>,
        first: usize,
        out: &mut [Verdict],
        worker: &mut Worker<'_>,
    ) -> usize {
        let mut looked = 0;
        for (at, slot) in (first..).zip(out.iter_mut()) {
            let Some(item) = item(at) else {
                continue;
            };
            looked += 1;
            let tools = (&mut worker.filter, &mut worker.buf, &mut worker.dirs);
            *slot = match check_one(&item, self.index, self.index_ts, self.rules, tools) {
                State::Clean => {
                    if item.entry.mode == Mode::COMMIT {
                        worker.found.gitlinks.push(at);
                    }
                    Verdict::Clean
                }
                State::Refreshed(stat) => {
                    worker.found.fresh.push((at, stat));
                    Verdict::Refreshed
                }
                State::Modified => Verdict::Modified,
                State::RacilyModified => Verdict::RacilyModified,
                State::Missing => Verdict::Missing,
            };
        }
        looked
    }

    /// Count a chunk's `looked` entries as done, and the CPU time since `cpu` (the thread's
    /// clock, then advanced) while the refiner wants it.
    fn account(&self, cpu: &mut u64, looked: usize) {
        if self.measure_cpu.load(Ordering::Relaxed) {
            let now = crate::sys::thread_cpu_ns();
            self.cpu_ns
                .fetch_add(now.saturating_sub(*cpu), Ordering::Relaxed);
            *cpu = now;
        }
        self.done.fetch_add(looked, Ordering::Relaxed);
    }
}

/// The length in bytes of the chunk whose first position is `first` and whose verdicts are
/// `out`, `size` giving each entry's; the entries whose bytes may change (refreshed or racily
/// modified) go to `offsets` with their offset from the chunk's first entry. Measured while the
/// chunk's entries are in the thread's cache anyway (see [`check_with`]).
fn measure_chunk(
    size: &(dyn Fn(usize) -> usize + Sync),
    first: usize,
    out: &[Verdict],
    offsets: &mut Vec<(usize, usize)>,
) -> usize {
    let mut offset = 0;
    for (at, verdict) in (first..).zip(out.iter()) {
        if matches!(verdict, Verdict::Refreshed | Verdict::RacilyModified) {
            offsets.push((at, offset));
        }
        offset += size(at);
    }
    offset
}

/// The calling thread's part in a run of several threads, between its chunks: the probe that
/// tells whether the first entries wait on I/O, and the refiner that starts more threads while
/// that pays (or lowers the target, so that the threads above it stop after their chunk).
struct Growth<'g, 'p, S, H> {
    pool: &'g Pool<'p>,
    /// Starts worker `k`.
    spawn: S,
    /// The workers started, but the calling thread (worker 0).
    handles: Vec<H>,
    /// How many workers were started, the calling thread included.
    started: usize,
    refiner: crate::fs::tune::Refiner,
    /// The calling thread's clock and scheduler statistics before its first chunk, until the
    /// probe is taken (automatic runs only).
    probe: Option<(Instant, Option<(std::time::Duration, std::time::Duration)>)>,
    /// The entries the calling thread looked at while probing.
    probed: usize,
}

impl<'g, 'p, S: Fn(usize) -> H, H> Growth<'g, 'p, S, H> {
    /// The growth of a run under `choice`, with its first `choice.workers` workers started (the
    /// calling thread is one): the probe starts after them, just before the calling thread's
    /// first chunk.
    fn new(pool: &'g Pool<'p>, choice: &crate::fs::tune::Choice, spawn: S) -> Self {
        let mut growth = Growth {
            pool,
            spawn,
            handles: Vec::new(),
            started: 1,
            refiner: crate::fs::tune::Refiner::new(choice),
            probe: None,
            probed: 0,
        };
        growth.spawn_up_to(choice.workers);
        growth.probe = (choice.source == crate::fs::tune::Source::Auto)
            .then(|| (Instant::now(), crate::fs::tune::thread_schedstat()));
        growth
    }

    /// Start workers until there are `n`.
    fn spawn_up_to(&mut self, n: usize) {
        while self.started < n {
            self.handles.push((self.spawn)(self.started));
            self.started += 1;
        }
    }

    /// After a chunk of the calling thread's, which looked at `mine` entries: the probe when it
    /// is due, then the refiner while it is active.
    fn between(&mut self, mine: usize) {
        self.probe(mine);
        if !self.refiner.active() {
            return;
        }
        let pool = self.pool;
        if let Some(t) = self.refiner.observe(crate::fs::tune::Sample {
            done: pool.done.load(Ordering::Relaxed),
            cpu: std::time::Duration::from_nanos(pool.cpu_ns.load(Ordering::Relaxed)),
            at: Instant::now(),
        }) {
            pool.target.store(t, Ordering::Relaxed);
            self.spawn_up_to(t);
        }
        if !self.refiner.active() {
            pool.measure_cpu.store(false, Ordering::Relaxed);
        }
    }

    /// How fast the first entries went: the first chunks are measured together, for [`PROBE`]
    /// or [`PROBE_ITEMS`] entries of this thread (one chunk may find its inodes read ahead by
    /// another thread's). When they waited on I/O (a cold cache, a network disk), more requests
    /// in flight hide that whatever the filesystem's kind said: the run jumps to
    /// [`IO_BOUND_START`] threads, and measurement then decides how many.
    fn probe(&mut self, mine: usize) {
        self.probed += mine;
        let probed = self.probed;
        let due = self
            .probe
            .as_ref()
            .is_some_and(|(started_at, _)| started_at.elapsed() >= PROBE || probed >= PROBE_ITEMS);
        let Some((started_at, sched)) = self.probe.take_if(|_| due) else {
            return;
        };
        let elapsed = started_at.elapsed();
        let pool = self.pool;
        let threads = pool.target.load(Ordering::Relaxed);
        // A run that already started with many threads (a network or FUSE filesystem) keeps
        // its ceiling: the refiner grows it while that pays (testfs at 1 ms: 128 threads beat
        // 256 by a fifth).
        if self.waited_on_io(elapsed, sched, threads) && threads < IO_BOUND_START {
            let chunks = pool.chunks;
            let start = IO_BOUND_START.min(chunks).max(threads);
            let raised = crate::fs::tune::Choice {
                workers: start,
                max: IO_BOUND_MAX.min(chunks).max(start),
                source: crate::fs::tune::Source::Auto,
            };
            self.refiner = crate::fs::tune::Refiner::new(&raised);
            pool.measure_cpu
                .store(self.refiner.active(), Ordering::Relaxed);
            pool.target.store(start, Ordering::Relaxed);
            self.spawn_up_to(start);
        }
    }

    /// Whether the probed entries waited on I/O, `elapsed` after the probe started with the
    /// scheduler statistics `sched` and `threads` threads: the calling thread blocked longer
    /// than [`BLOCKED_ITEM`] per entry (or, without scheduler statistics, the entries took
    /// longer than [`SLOW_ITEM`] each and per thread). Time spent waiting for a CPU (other
    /// programs running) or for another thread making the filters is not waiting on I/O: more
    /// threads would not help there.
    fn waited_on_io(
        &self,
        elapsed: std::time::Duration,
        sched: Option<(std::time::Duration, std::time::Duration)>,
        threads: usize,
    ) -> bool {
        match (sched, crate::fs::tune::thread_schedstat()) {
            (Some((run0, wait0)), Some((run1, wait1))) => {
                let waited_for_filters = std::time::Duration::from_nanos(
                    self.pool.filters_waited_ns.load(Ordering::Relaxed),
                );
                let blocked = elapsed
                    .saturating_sub(run1.saturating_sub(run0))
                    .saturating_sub(wait1.saturating_sub(wait0))
                    .saturating_sub(waited_for_filters);
                blocked.as_secs_f64() / self.probed.max(1) as f64 > BLOCKED_ITEM
            }
            _ => {
                let n = self.pool.done.load(Ordering::Relaxed).max(1);
                elapsed.as_secs_f64() * threads as f64 / n as f64 > SLOW_ITEM
            }
        }
    }
}

pub(crate) use crate::index::record::Layout;

impl Layout {
    /// The layout of chunks `chunk` entries long whose lengths in bytes are `chunk_bytes`,
    /// `offsets` being the offsets found within each chunk ([`measure_chunk`]): each becomes an
    /// offset from the first entry.
    fn of(chunk_bytes: &[usize], chunk: usize, mut offsets: Vec<(usize, usize)>) -> Layout {
        let mut start = Vec::with_capacity(chunk_bytes.len());
        let mut end = 0;
        for bytes in chunk_bytes {
            start.push(end);
            end += bytes;
        }
        for (at, offset) in &mut offsets {
            *offset += start[*at / chunk];
        }
        Layout { offsets, end }
    }
}

/// What one checking thread found besides the verdicts: the fresh stat data of the entries
/// that keep their content, the clean gitlinks (whose submodule's commit the caller still
/// compares) and, when asked, the offsets of the entries whose bytes may change within their
/// chunks, all by position.
#[derive(Default)]
struct Found {
    fresh: Vec<(usize, Stat)>,
    gitlinks: Vec<usize>,
    offsets: Vec<(usize, usize)>,
}

impl Found {
    /// The findings of the threads of a run in one, each list by position, or the failure of
    /// the first thread (in `results`' order) that could not set up its conversion.
    fn merge(results: Vec<Result<Found, Failed>>) -> Result<Found, Failed> {
        let mut all = Found::default();
        for found in results {
            let found = found?;
            all.fresh.extend(found.fresh);
            all.gitlinks.extend(found.gitlinks);
            all.offsets.extend(found.offsets);
        }
        all.fresh.sort_unstable_by_key(|(at, _)| *at);
        all.gitlinks.sort_unstable();
        all.offsets.sort_unstable_by_key(|(at, _)| *at);
        Ok(all)
    }
}

/// The attribute stack and the filter drivers that re-hashing needs, shared by the threads.
struct Filters {
    attributes: gix::worktree::Stack,
    drivers: Vec<gix::filter::plumbing::Driver>,
}

/// One thread's to-git conversion, made when its first file must be re-hashed: most refreshes
/// re-hash few files or none, and each conversion costs its own pipeline and attribute stack.
struct LazyFilter<'a> {
    repo: &'a gix::Repository,
    index: &'a gix::index::State,
    /// The attribute stack and drivers, made once for all threads by the first that needs them.
    filters: &'a std::sync::OnceLock<Result<Filters, Error>>,
    /// For the calling thread: where the time it waited for another thread making the filters
    /// adds up (nanoseconds), which is no sign of I/O (see the probe in [`check_with`]).
    waited: Option<&'a std::sync::atomic::AtomicU64>,
    /// `None` until first needed; `Some(Err)` when the shared filters or this thread's
    /// conversion could not be set up, which fails the check at the end.
    filter: Option<Result<crate::convert::filter::ToGit<'a>, Failed>>,
}

/// Why a thread has no to-git conversion: the error of the shared filters stays where they
/// would have been, made once for all threads, and is taken from there at the end.
enum Failed {
    /// The shared attribute stack or drivers could not be made.
    Shared,
    /// This thread's conversion could not be set up.
    Own(Error),
}

impl Failed {
    /// The error that fails the check, `filters` being the shared filters' cell.
    fn into_error(self, filters: std::sync::OnceLock<Result<Filters, Error>>) -> Error {
        match self {
            Failed::Own(err) => err,
            Failed::Shared => match filters.into_inner() {
                Some(Err(err)) => err,
                _ => unreachable!("a thread failed on the shared filters, which failed"),
            },
        }
    }
}

impl<'a> LazyFilter<'a> {
    /// The conversion, set up on first use; `None` when that failed.
    fn get(&mut self) -> Option<&mut crate::convert::filter::ToGit<'a>> {
        let (repo, index, filters, waited) = (self.repo, self.index, self.filters, self.waited);
        self.filter
            .get_or_insert_with(|| {
                let started = std::time::Instant::now();
                let mut made_here = false;
                let shared = filters
                    .get_or_init(|| {
                        made_here = true;
                        Ok(Filters {
                            attributes: repo
                                .attributes_only(
                                    index,
                                    gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
                                )
                                ?
                                .detach(),
                            drivers: crate::convert::filter::drivers(repo)
                                .map_err(Error::Conversion)?,
                        })
                    })
                    .as_ref()
                    .map_err(|_| Failed::Shared);
                if let (false, Some(waited)) = (made_here, waited) {
                    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    waited.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
                }
                let shared = shared?;
                crate::convert::filter::ToGit::new(repo, shared.attributes.clone(), &shared.drivers)
                    .map_err(|e| Failed::Own(Error::Conversion(e)))
            })
            .as_mut()
            .ok()
    }

    /// `found`, or the error that kept a conversion from being set up.
    fn finish(self, found: Found) -> Result<Found, Failed> {
        match self.filter {
            Some(Err(err)) => Err(err),
            _ => Ok(found),
        }
    }
}

fn check_one(
    item: &Item<'_>,
    index: &gix::index::State,
    index_ts: i64,
    rules: StatRules,
    (filter, buf, dirs): (&mut LazyFilter<'_>, &mut Vec<u8>, &mut Dirs<'_>),
) -> State {
    use crate::fs::FileType;
    // lstat relative to the (cached) open parent directory. A parent that is gone, or is no
    // longer a directory (a symlink in its place is not followed), means the entry is missing,
    // as git's `has_symlink_leading_path` check decides.
    let raw = match dirs.lstat(item.path) {
        Ok(Some(st)) => st,
        Ok(None) => return State::Missing,
        Err(_) => return State::Modified,
    };
    let kind = FileType::from_raw_mode(raw.st_mode);
    if item.entry.mode == Mode::COMMIT {
        return if kind == FileType::Directory {
            State::Clean
        } else {
            State::Modified
        };
    }
    let type_ok = if item.entry.mode == Mode::SYMLINK {
        kind == FileType::Symlink || kind == FileType::RegularFile
    } else {
        kind == FileType::RegularFile
    };
    if !type_ok {
        return State::Modified;
    }
    if rules.file_mode && kind == FileType::RegularFile && item.entry.mode != Mode::SYMLINK {
        let exec = raw.st_mode & 0o100 != 0;
        if exec != (item.entry.mode == Mode::FILE_EXECUTABLE) {
            return State::Modified;
        }
    }
    let st = crate::fs::index_stat(&raw);
    let racy = i64::from(item.entry.stat.mtime.secs) >= index_ts;
    if item.entry.stat.size != 0 && st.size != item.entry.stat.size {
        return State::Modified;
    }
    let same = rules.same(&item.entry.stat, &st);
    if same && !racy {
        return State::Clean;
    }
    // Here a matching stat is racy. git compares times in whole seconds: a file rewritten
    // within the second its entry and the index were written in is racily clean to git, which
    // smudges the entry when it writes the index. Not smudging it would let a later index
    // (written in a later second) hide the change from git.
    let differs = if racy && rules.same_as_git(&item.entry.stat, &st) {
        State::RacilyModified
    } else {
        State::Modified
    };
    // The stat data cannot decide: hash what git would store for this file.
    buf.clear();
    let hashed = if kind == FileType::Symlink {
        dirs.read_link(item.path)
            .map(|t| buf.extend_from_slice(&t))
            .is_ok()
    } else {
        let size = u64::try_from(raw.st_size).ok();
        filter
            .get()
            .is_some_and(|filter| to_git(dirs, item.path, index, filter, buf, size).is_ok())
    };
    if !hashed {
        return differs;
    }
    match gix::objs::compute_hash(item.entry.id.kind(), gix::objs::Kind::Blob, buf) {
        Ok(id) if id == item.entry.id => State::Refreshed(st),
        _ => differs,
    }
}

/// Read the work-tree file at `rela` as git would store it (the to-git conversions applied,
/// external `clean` filters included): what the refresh hashes, and what `checkout -m` takes as
/// the local version of a file. `size`, the size an lstat just gave, sizes the buffer, which
/// spares the `fstat` that `File::read_to_end` makes for it (a system call for each of the
/// bench's 2,000 re-hashed files); the file is read to its end whatever its size is now.
pub(crate) fn to_git(
    dirs: &mut Dirs<'_>,
    rela: &BStr,
    index: &gix::index::State,
    filter: &mut crate::convert::filter::ToGit<'_>,
    buf: &mut Vec<u8>,
    size: Option<u64>,
) -> std::io::Result<()> {
    let mut src = Vec::new();
    let file = dirs.open_read(rela)?;
    match size.and_then(|s| usize::try_from(s).ok()) {
        Some(size) => {
            // One byte more, so that the read that finds the end needs no bigger buffer.
            src.reserve_exact(size + 1);
            file.take(u64::MAX).read_to_end(&mut src)?;
        }
        None => {
            let mut file = file;
            file.read_to_end(&mut src)?;
        }
    }
    filter.convert(rela, src, index, buf)
}
