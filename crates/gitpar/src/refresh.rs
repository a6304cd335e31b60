//! Refresh: is the work tree file of an index entry still what the index says?
//!
//! The local-change check of a switch, the refresh of a forced reset and (later) `status` share
//! this: a parallel `lstat` over contiguous chunks of entries, and — only where the stat data
//! cannot decide (times or inode changed, or the entry is racily clean) — a re-hash of the file
//! through the to-git filters, also in parallel (git does that part sequentially).

use std::io::Read;
use std::time::Instant;

use bstr::BStr;
use gix::index::entry::{Mode, Stat};

use crate::fs::{Dirs, Root};

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
    pub(crate) fn matches(self, entry: &gix::index::Entry, raw: &rustix::fs::Stat) -> bool {
        use rustix::fs::FileType;
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
) -> Result<Vec<State>, String> {
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
) -> Result<(), String> {
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
) -> Result<Checked, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    if len == 0 {
        return Ok(Checked {
            verdicts: Vec::new(),
            fresh: Vec::new(),
            gitlinks: Vec::new(),
            layout: size.map(|_| Layout::default()),
            threads: 0,
        });
    }
    let rules = StatRules::of(repo);
    // The attribute stack and the filters only serve the entries that must be re-hashed: built
    // by the first thread that meets one (the stack's mapping of the index's `.gitattributes`
    // entries reads every path of the index: 2.5 ms for the bench's 200,000 entries), not before
    // the first lstat.
    let filters: std::sync::OnceLock<Result<Filters, String>> = std::sync::OnceLock::new();
    // How long the calling thread waited for another thread to make them: a wait the probe
    // below must not take for I/O (it did, and started 64 threads on tmpfs).
    let filters_waited_ns = std::sync::atomic::AtomicU64::new(0);
    // The results are written in place: chunks of the output are handed out with their
    // positions, so nothing is collected per thread and merged afterwards (but the rare fresh
    // stat data).
    let mut verdicts = vec![Verdict::NotChecked; len];
    // Many threads (a high-latency filesystem, or a run that may grow to many) need smaller
    // chunks to share the work: four per thread at least, down to MIN_CHUNK entries.
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
    // At least one chunk per thread.
    let mut choice = choice;
    choice.workers = choice.workers.clamp(1, chunks);
    choice.max = choice.max.clamp(choice.workers, chunks.max(choice.workers));
    // The bytes of each chunk's entries in the index file, when `size` is given.
    let mut chunk_bytes = vec![0; if size.is_some() { chunks } else { 0 }];
    let (found, ended) = {
        // Each chunk, taken once. The threads a run starts with each take a run of chunks of
        // their own (thread k of n from chunk k/n of the way on), so that a directory is mostly
        // read by one thread: chunks dealt out in turn had every thread open every directory
        // and probe each for `.gitattributes` when re-hashing (3,300 failed opens for the
        // bench's 2,000 re-hashed files with 2 threads). A thread whose next chunk is taken,
        // or that was started later, takes the first chunk left.
        let mut bytes = chunk_bytes.iter_mut();
        let slots: Vec<_> = verdicts
            .chunks_mut(chunk)
            .map(|out| std::sync::Mutex::new(Some((out, bytes.next()))))
            .collect();
        let take = |n: usize| {
            slots.get(n).and_then(|slot| {
                slot.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
            })
        };
        let cursor = AtomicUsize::new(0);
        let starts_with = choice.workers;
        let done = AtomicUsize::new(0);
        // CPU time of the checking threads, for the refiner (tune's Sample), read only while
        // the refiner may still change the thread count: the clock is a system call, one per
        // chunk per thread (3,000 for the bench's 200,000 entries).
        let cpu_ns = std::sync::atomic::AtomicU64::new(0);
        let measure_cpu = std::sync::atomic::AtomicBool::new(choice.refinable());
        let target = AtomicUsize::new(choice.workers);
        // Worker `k` runs while `k < target`; returns the fresh stat data it found when the
        // work is out or it is surplus.
        let run = |repo: gix::Repository, k: usize, mut between: Option<&mut dyn FnMut(usize)>| {
            let mut filter = LazyFilter {
                repo: &repo,
                index,
                filters: &filters,
                waited: (k == 0).then_some(&filters_waited_ns),
                filter: None,
            };
            let mut buf = Vec::new();
            let mut dirs = root.dirs_descending();
            let mut cpu = thread_cpu_ns();
            let mut found = Found::default();
            let mut own = (k < starts_with).then(|| k * chunks / starts_with);
            loop {
                if k >= target.load(Ordering::Relaxed) {
                    return filter.finish(found);
                }
                let next = own.and_then(|n| take(n).map(|c| (n, c))).or_else(|| loop {
                    let n = cursor.fetch_add(1, Ordering::Relaxed);
                    if n >= chunks {
                        break None;
                    }
                    if let Some(c) = take(n) {
                        break Some((n, c));
                    }
                });
                let Some((n, (out, bytes))) = next else {
                    return filter.finish(found);
                };
                own = Some(n + 1);
                let first = n * chunk;
                // Positions not to check cost nothing: only the others count as done, for
                // the refiner and the probe.
                let mut looked = 0;
                for (at, slot) in (first..).zip(out.iter_mut()) {
                    let Some(item) = item(at) else {
                        continue;
                    };
                    looked += 1;
                    *slot = match check_one(
                        &item,
                        index,
                        index_ts,
                        rules,
                        (&mut filter, &mut buf, &mut dirs),
                    ) {
                        State::Clean => {
                            if item.entry.mode == Mode::COMMIT {
                                found.gitlinks.push(at);
                            }
                            Verdict::Clean
                        }
                        State::Refreshed(stat) => {
                            found.fresh.push((at, stat));
                            Verdict::Refreshed
                        }
                        State::Modified => Verdict::Modified,
                        State::RacilyModified => Verdict::RacilyModified,
                        State::Missing => Verdict::Missing,
                    };
                }
                if let (Some(size), Some(bytes)) = (size, bytes) {
                    let mut offset = 0;
                    for (at, verdict) in (first..).zip(out.iter()) {
                        if matches!(verdict, Verdict::Refreshed | Verdict::RacilyModified) {
                            found.offsets.push((at, offset));
                        }
                        offset += size(at);
                    }
                    *bytes = offset;
                }
                if measure_cpu.load(Ordering::Relaxed) {
                    let now = thread_cpu_ns();
                    cpu_ns.fetch_add(now.saturating_sub(cpu), Ordering::Relaxed);
                    cpu = now;
                }
                done.fetch_add(looked, Ordering::Relaxed);
                if let Some(between) = between.as_mut() {
                    between(looked);
                }
            }
        };
        if choice.max == 1 && choice.source != crate::fs::tune::Source::Auto {
            (run(repo.clone(), 0, None)?, 1)
        } else {
            let sync = repo.clone().into_sync();
            let mut started = choice.workers;
            let results: Vec<Result<Found, String>> = std::thread::scope(|scope| {
                let spawn = |k: usize| {
                    let (sync, run) = (&sync, &run);
                    scope.spawn(move || run(sync.to_thread_local(), k, None))
                };
                let mut handles: Vec<_> = (1..choice.workers).map(spawn).collect();
                let mut refiner = crate::fs::tune::Refiner::new(&choice);
                // This (the calling) thread's clock and scheduler statistics before its first
                // chunk.
                let mut probe = (choice.source == crate::fs::tune::Source::Auto)
                    .then(|| (Instant::now(), crate::fs::tune::thread_schedstat()));
                let mut probed = 0;
                let mine = {
                    let mut grow = |mine: usize| {
                        // How fast the first entries went: a thread blocked longer than
                        // BLOCKED_ITEM per entry of its first chunks (or, without scheduler
                        // statistics, taking longer than SLOW_ITEM per entry and thread) waits
                        // on I/O (a cold cache, a network disk), and more requests in flight
                        // hide that whatever the filesystem's kind said; measurement then
                        // decides how many. Time spent waiting for a CPU (other programs
                        // running) is not waiting on I/O: more threads would not help there.
                        // The first chunks are measured together, for PROBE or PROBE_ITEMS
                        // entries of this thread: one chunk may find its inodes read ahead by
                        // another thread's.
                        probed += mine;
                        let due = probe.as_ref().is_some_and(|(started_at, _)| {
                            started_at.elapsed() >= PROBE || probed >= PROBE_ITEMS
                        });
                        if let Some((started_at, sched)) = probe.take_if(|_| due) {
                            let elapsed = started_at.elapsed();
                            let threads = target.load(Ordering::Relaxed);
                            let slow = match (sched, crate::fs::tune::thread_schedstat()) {
                                (Some((run0, wait0)), Some((run1, wait1))) => {
                                    let waited_for_filters = std::time::Duration::from_nanos(
                                        filters_waited_ns.load(Ordering::Relaxed),
                                    );
                                    let blocked = elapsed
                                        .saturating_sub(run1.saturating_sub(run0))
                                        .saturating_sub(wait1.saturating_sub(wait0))
                                        .saturating_sub(waited_for_filters);
                                    blocked.as_secs_f64() / probed.max(1) as f64 > BLOCKED_ITEM
                                }
                                _ => {
                                    let n = done.load(Ordering::Relaxed).max(1);
                                    elapsed.as_secs_f64() * threads as f64 / n as f64 > SLOW_ITEM
                                }
                            };
                            // A run that already started with many threads (a network or
                            // FUSE filesystem) keeps its ceiling: the refiner grows it while
                            // that pays (testfs at 1 ms: 128 threads beat 256 by a fifth).
                            if slow && threads < IO_BOUND_START {
                                let start = IO_BOUND_START.min(chunks).max(threads);
                                let raised = crate::fs::tune::Choice {
                                    workers: start,
                                    max: IO_BOUND_MAX.min(chunks).max(start),
                                    source: crate::fs::tune::Source::Auto,
                                };
                                refiner = crate::fs::tune::Refiner::new(&raised);
                                measure_cpu.store(refiner.active(), Ordering::Relaxed);
                                target.store(start, Ordering::Relaxed);
                                while started < start {
                                    handles.push(spawn(started));
                                    started += 1;
                                }
                            }
                        }
                        if !refiner.active() {
                            return;
                        }
                        if let Some(t) = refiner.observe(crate::fs::tune::Sample {
                            done: done.load(Ordering::Relaxed),
                            cpu: std::time::Duration::from_nanos(cpu_ns.load(Ordering::Relaxed)),
                            at: Instant::now(),
                        }) {
                            target.store(t, Ordering::Relaxed);
                            while started < t {
                                handles.push(spawn(started));
                                started += 1;
                            }
                        }
                        if !refiner.active() {
                            measure_cpu.store(false, Ordering::Relaxed);
                        }
                    };
                    run(repo.clone(), 0, Some(&mut grow))
                };
                std::iter::once(mine)
                    .chain(
                        handles
                            .into_iter()
                            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
                    )
                    .collect()
            });
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
            (all, target.load(Ordering::Relaxed).min(started))
        }
    };
    let layout = size.map(|_| {
        // Each chunk's offsets become offsets from the first entry.
        let mut start = Vec::with_capacity(chunk_bytes.len());
        let mut end = 0;
        for bytes in &chunk_bytes {
            start.push(end);
            end += bytes;
        }
        let mut offsets = found.offsets;
        for (at, offset) in &mut offsets {
            *offset += start[*at / chunk];
        }
        Layout { offsets, end }
    });
    Ok(Checked {
        verdicts,
        fresh: found.fresh,
        gitlinks: found.gitlinks,
        layout,
        threads: ended,
    })
}

pub(crate) use crate::index::record::Layout;

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
    filters: &'a std::sync::OnceLock<Result<Filters, String>>,
    /// For the calling thread: where the time it waited for another thread making the filters
    /// adds up (nanoseconds), which is no sign of I/O (see the probe in [`check_with`]).
    waited: Option<&'a std::sync::atomic::AtomicU64>,
    /// `None` until first needed; `Some(Err)` when the shared filters or this thread's
    /// conversion could not be set up, which fails the check at the end.
    filter: Option<Result<crate::convert::filter::ToGit<'a>, String>>,
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
                                .map_err(|e| e.to_string())?
                                .detach(),
                            drivers: crate::convert::filter::drivers(repo)?,
                        })
                    })
                    .as_ref()
                    .map_err(Clone::clone);
                if let (false, Some(waited)) = (made_here, waited) {
                    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    waited.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
                }
                let shared = shared?;
                crate::convert::filter::ToGit::new(repo, shared.attributes.clone(), &shared.drivers)
            })
            .as_mut()
            .ok()
    }

    /// `found`, or the error that kept a conversion from being set up.
    fn finish(self, found: Found) -> Result<Found, String> {
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
    use rustix::fs::FileType;
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

/// The CPU time the calling thread has used, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}
