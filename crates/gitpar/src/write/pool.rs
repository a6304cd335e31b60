//! The writer pool: the pooled entries spread into chunks, each within one directory, that the
//! writers take from a shared counter; the refiner loop in the calling thread, which starts more
//! writers while the throughput grows; each writer's loop over its chunks and the accounting of
//! one entry's result.

use std::sync::atomic::{AtomicBool, Ordering};

use bstr::ByteSlice;

use super::attributes::names_a_filter;
use super::filters::{filter_threads, Delayed};
use super::{Failure, Filters, Job, JobResult, Shared, Worker};
use crate::fs::tune;
use crate::fs::{self, Root};
use crate::plan::Plan;
use crate::write::options::Options;

/// The writer pool: the regular files of `jobs` (and symlinks, when they are written as plain
/// files) go to writers that take contiguous chunks of them from a shared counter; symlinks and
/// gitlinks are left to the tail. The writer count is [`Options::choice`]'s for the work tree's
/// filesystem: below the threshold, or with one worker, they are written in the calling thread,
/// without spawning. When the choice may grow (an automatic count), the calling thread measures
/// the throughput while the writers run and starts more of them while it grows
/// ([`tune::Refiner`]); writers beyond a lowered target stop at their next chunk. Returns the
/// largest number of writers that ran and one result per pooled job, in no particular order. A
/// writer's panic is resumed in the calling thread (after `std::thread::scope` has joined the
/// other writers).
#[allow(clippy::too_many_arguments)]
pub(super) fn pool(
    repo: &gix::Repository,
    plan: &Plan,
    pooled: Vec<Job>,
    choice: tune::Choice,
    root: &Root,
    opts: &Options,
    filters: Filters<'_>,
    shared: &Shared<'_>,
) -> (usize, Vec<JobResult>) {
    if choice.workers <= 1 && !choice.refinable() {
        return sequential(repo, plan, &pooled, (root, opts, filters), shared);
    }
    let mut pooled = pooled;
    let n_chunks = cut_chunks(plan, &mut pooled, &choice, shared);
    let (threads, scouting) = filter_threads_for(repo, plan, opts, choice.max, shared);
    let crew = Crew {
        sync_repo: repo.clone().into_sync(),
        plan,
        pooled: &pooled,
        root,
        opts,
        shared,
        threads,
    };
    let mut refiner = tune::Refiner::new(&choice);
    shared.sampling.store(refiner.active(), Ordering::Relaxed);
    // Entries written go to `shared.written`; these are the others (failures, collisions).
    let mut results = Vec::new();
    let mut started = 0;
    std::thread::scope(|scope| {
        // Every writer the run may start holds its producer handles from before any filter
        // thread starts (a filter thread ends once no producer is left); those of writers never
        // started are dropped once the refiner has settled.
        let mut producers = (0..choice.max.max(choice.workers))
            .map(|_| shared.queues.each_ref().map(|q| q.producer()))
            .collect::<Vec<_>>()
            .into_iter();
        // The scout, with producer handles of its own, before the writers (see `Worker::scout`).
        let scout = scouting.then(|| crew.scout(scope, filters));
        let mut handles: Vec<_> = (0..choice.workers)
            .map(|id| {
                crew.writer(
                    scope,
                    filters,
                    id,
                    producers.next().expect("a producer per writer"),
                )
            })
            .collect();
        handles.extend(scout);
        started = choice.workers;
        let filterers = crew.filterers(scope, filters);
        refine(shared, &mut refiner, n_chunks, |target| {
            while started < target {
                match producers.next() {
                    Some(producer) => handles.push(crew.writer(scope, filters, started, producer)),
                    None => break,
                }
                started += 1;
            }
        });
        shared.sampling.store(false, Ordering::Relaxed);
        drop(producers);
        handles.extend(filterers);
        for handle in handles {
            match handle.join() {
                Ok(out) => results.extend(out),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    (started, results)
}

/// The pool of a sequential run: one writer in the calling thread, which filters the filtered
/// entries in line, in index order, as git does, and collects what its filters delayed.
fn sequential(
    repo: &gix::Repository,
    plan: &Plan,
    pooled: &[Job],
    (root, opts, filters): (&Root, &Options, Filters<'_>),
    shared: &Shared<'_>,
) -> (usize, Vec<JobResult>) {
    let mut results = Vec::new();
    let (filter, attributes) = (filters.pipeline.clone(), filters.attributes.clone());
    let mut worker = Worker::new(repo.clone(), (filter, attributes), root, opts, shared);
    worker.run(0, plan, pooled, shared, &mut results);
    worker.finish_delayed(plan, shared, &mut results);
    shared.keep_messages(usize::MAX, &mut worker.runner);
    (1, results)
}

/// Cut `pooled` into the chunks the writers take ([`spread_directories`]), small enough that
/// every writer the run may grow to gets a few, and set the writers' target: the number of
/// chunks.
fn cut_chunks(
    plan: &Plan,
    pooled: &mut [Job],
    choice: &tune::Choice,
    shared: &Shared<'_>,
) -> usize {
    let chunk = (pooled.len() / (4 * choice.max)).clamp(1, CHUNK);
    let bounds = spread_directories(plan, pooled, chunk);
    let n_chunks = bounds.len() - 1;
    let _ = shared.chunks.set(bounds);
    shared.target.store(choice.workers, Ordering::Relaxed);
    n_chunks
}

/// The filter threads of a parallel run per queue, which exist only for the kinds of driver
/// configured (the writers hand filtered entries to them, see
/// `crate::convert::filter::queue`), and whether a scout finds the filtered entries ahead of
/// the writers (a `.gitattributes` names a filter).
fn filter_threads_for(
    repo: &gix::Repository,
    plan: &Plan,
    opts: &Options,
    max: usize,
    shared: &Shared<'_>,
) -> ([usize; 2], bool) {
    let threads = filter_threads(&shared.drivers, opts, max);
    for (queue, &n) in shared.queues.iter().zip(&threads) {
        queue.lanes(n);
    }
    let scouting = threads.iter().any(|&n| n > 0) && names_a_filter(repo, plan, shared);
    if scouting {
        let claims = (0..plan.entries.len()).map(|_| AtomicBool::new(false));
        let _ = shared.claims.set(claims.collect());
    }
    (threads, scouting)
}

/// The calling thread measures while the writers run, until the refiner has settled or the work
/// is all handed out, and calls `grow` with each new writer count. A sampling period, not
/// synchronisation: the writers never wait for it.
fn refine(
    shared: &Shared<'_>,
    refiner: &mut tune::Refiner,
    n_chunks: usize,
    mut grow: impl FnMut(usize),
) {
    while refiner.active()
        && shared.sampling.load(Ordering::Relaxed)
        && shared.next_chunk.load(Ordering::Relaxed) < n_chunks
        && !shared.halted()
    {
        std::thread::sleep(SAMPLE);
        let done = shared.finished.load(Ordering::Relaxed);
        let sample = tune::Sample {
            done,
            cpu: std::time::Duration::from_nanos(shared.cpu_ns.load(Ordering::Relaxed)),
            at: std::time::Instant::now(),
        };
        if let Some(target) = refiner.observe(sample) {
            shared.target.store(target, Ordering::Relaxed);
            grow(target);
        }
    }
}

/// What every thread of a parallel pool is built from: the writers, the scout and the filter
/// threads each own a worker over the same run.
struct Crew<'a> {
    sync_repo: gix::ThreadSafeRepository,
    plan: &'a Plan,
    /// The pooled jobs, cut into chunks.
    pooled: &'a [Job],
    root: &'a Root,
    opts: &'a Options,
    shared: &'a Shared<'a>,
    /// The filter threads per queue ([`filter_threads`]).
    threads: [usize; 2],
}

/// A producer handle of each queue of filtered entries.
type Producers<'q> = [crate::convert::filter::queue::Producer<'q, Job>; 2];

impl<'a> Crew<'a> {
    /// Start a thread named `name` with a worker of its own (the pipeline and the attribute
    /// stack cloned here, moved into the thread: a worker owns them) that does `work`; `keep`
    /// is held until the thread ends, after its worker is gone.
    fn spawn<'scope, K: Send + 'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        filters: Filters<'_>,
        name: &str,
        keep: K,
        work: impl FnOnce(&mut Worker<'scope>) -> Vec<JobResult> + Send + 'scope,
    ) -> std::thread::ScopedJoinHandle<'scope, Vec<JobResult>> {
        let (filter, attributes) = (filters.pipeline.clone(), filters.attributes.clone());
        let (root, opts, shared) = (self.root, self.opts, self.shared);
        let sync_repo = &self.sync_repo;
        std::thread::Builder::new()
            .name(name.into())
            .spawn_scoped(scope, move || {
                let _keep = keep;
                let repo = sync_repo.to_thread_local();
                let mut worker = Worker::new(repo, (filter, attributes), root, opts, shared);
                work(&mut worker)
            })
            .expect("spawning a thread only fails when the system is out of resources")
    }

    /// Start writer `id`, which holds `producer` for its life ([`Worker::run`]).
    fn writer<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        filters: Filters<'_>,
        id: usize,
        producer: Producers<'scope>,
    ) -> std::thread::ScopedJoinHandle<'scope, Vec<JobResult>> {
        let (plan, pooled, shared, threads) = (self.plan, self.pooled, self.shared, self.threads);
        self.spawn(scope, filters, "git-par writer", producer, move |worker| {
            worker.defer = threads.map(|n| n > 0);
            let mut out = Vec::new();
            worker.run(id, plan, pooled, shared, &mut out);
            shared.keep_messages(usize::MAX, &mut worker.runner);
            out
        })
    }

    /// Start the scout ([`Worker::scout`]), with producer handles of its own.
    fn scout<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        filters: Filters<'_>,
    ) -> std::thread::ScopedJoinHandle<'scope, Vec<JobResult>> {
        let producers = self.shared.queues.each_ref().map(|q| q.producer());
        let (plan, pooled, shared, threads) = (self.plan, self.pooled, self.shared, self.threads);
        self.spawn(scope, filters, "git-par scout", producers, move |worker| {
            worker.defer = threads.map(|n| n > 0);
            worker.scout(plan, pooled, shared);
            Vec::new()
        })
    }

    /// Start the filter threads, `threads[kind]` of each queue ([`Worker::run_filters`]).
    fn filterers<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        filters: Filters<'_>,
    ) -> Vec<std::thread::ScopedJoinHandle<'scope, Vec<JobResult>>> {
        let (plan, shared, threads) = (self.plan, self.shared, self.threads);
        let kinds = (0..threads.len()).flat_map(|kind| (0..threads[kind]).map(move |i| (kind, i)));
        kinds
            .map(|(kind, index)| {
                self.spawn(scope, filters, "git-par filter", (), move |worker| {
                    let mut out = Vec::new();
                    worker.run_filters((kind, index), plan, shared, &mut out);
                    shared.keep_messages(usize::MAX, &mut worker.runner);
                    out
                })
            })
            .collect()
    }
}

/// `pooled` reordered so that consecutive chunks are in different directories, and where its
/// chunks start (its length last): the first chunk of every directory (in path order), then
/// the second of each, and so on, each chunk at most `chunk` jobs of one directory. The kernel
/// serialises the creates in one directory (the lookup and the create hold its lock), so
/// writers that took neighbouring chunks of one directory wait on each other: for a round trip
/// each where every operation is one (network and FUSE filesystems), and spinning on the lock
/// elsewhere (the bench's 40,000 files on a fresh ext4, 2 CPUs: 7% of all cycles in
/// `rwsem_spin_on_owner` under `openat`). A chunk cut at a fixed size would put a small
/// directory's files and the start of the next one's together, and its rest next to them.
/// Measured (interleaved `worktree add`, medians of 6 to 8): fresh ext4 0.945 -> 0.850 s,
/// tmpfs 0.665 -> 0.630 s.
fn spread_directories(plan: &Plan, pooled: &mut [Job], chunk: usize) -> Vec<usize> {
    let chunk = chunk.max(1);
    let Ok(n) = u32::try_from(pooled.len()) else {
        // Over four billion jobs: chunks of `chunk` in index order.
        let mut bounds: Vec<usize> = (0..pooled.len()).step_by(chunk).collect();
        bounds.push(pooled.len());
        return bounds;
    };
    // Per job: its directory (numbered as first met) and its rank, the number of its chunk in
    // that directory; then the jobs placed rank by rank, in index order within a rank (a
    // counting sort, and the jobs permuted in place: a million jobs cost a few arrays of
    // 32-bit numbers, not 48-byte records sorted and a second list of jobs).
    let mut seen: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
    let mut counts: Vec<u32> = Vec::new();
    let mut dir_of: Vec<u32> = Vec::with_capacity(pooled.len());
    let mut rank_of: Vec<u32> = Vec::with_capacity(pooled.len());
    let mut per_rank: Vec<u32> = Vec::new();
    let chunk32 = u32::try_from(chunk).unwrap_or(u32::MAX);
    for job in pooled.iter() {
        let (dir, _) = fs::split_path(plan.entries[job.entry].path.as_bstr());
        let next = u32::try_from(seen.len()).unwrap_or(u32::MAX);
        let d = *seen.entry(dir.as_bytes()).or_insert(next);
        if d as usize == counts.len() {
            counts.push(0);
        }
        let rank = counts[d as usize] / chunk32;
        counts[d as usize] += 1;
        if rank as usize == per_rank.len() {
            per_rank.push(0);
        }
        per_rank[rank as usize] += 1;
        dir_of.push(d);
        rank_of.push(rank);
    }
    drop(seen);
    // Where each rank starts in the spread order; `order[k]` is the job that goes to `k`.
    let mut start = Vec::with_capacity(per_rank.len());
    let mut at = 0u32;
    for n in &per_rank {
        start.push(at);
        at += n;
    }
    let mut order = vec![0u32; pooled.len()];
    for (i, &rank) in (0..n).zip(&rank_of) {
        order[start[rank as usize] as usize] = i;
        start[rank as usize] += 1;
    }
    // A directory's jobs of one rank may be split by a subdirectory's (index order puts
    // `a/b/*` between `a/1` and `a/c`), so a chunk ends wherever the directory changes.
    let mut bounds = Vec::with_capacity(pooled.len() / chunk + 2);
    let mut last: Option<(u32, u32)> = None;
    for (k, &i) in order.iter().enumerate() {
        let here = (rank_of[i as usize], dir_of[i as usize]);
        if last != Some(here) {
            bounds.push(k);
            last = Some(here);
        }
    }
    bounds.push(pooled.len());
    drop((dir_of, rank_of));
    // Permute in place, a cycle at a time: position `k` takes the job at `order[k]`.
    let mut placed = vec![false; pooled.len()];
    for k in 0..pooled.len() {
        if placed[k] {
            continue;
        }
        let first = pooled[k];
        let mut here = k;
        loop {
            placed[here] = true;
            let from = order[here] as usize;
            if from == k {
                pooled[here] = first;
                break;
            }
            pooled[here] = pooled[from];
            here = from;
        }
    }
    bounds
}

/// How often the calling thread samples the throughput while it refines the writer count.
const SAMPLE: std::time::Duration = std::time::Duration::from_millis(2);

/// How many consecutive entries a worker takes at a time.
const CHUNK: usize = 32;

impl Worker<'_> {
    /// Write the entries named by `pooled`, taking chunks from the shared counter until none
    /// are left, the run is halted or the writer count dropped to `id` or below, and append one
    /// result per entry to `out` (a filtered entry handed to the filter threads, or delayed, has
    /// its result appended later).
    fn run(
        &mut self,
        id: usize,
        plan: &Plan,
        pooled: &[Job],
        shared: &Shared<'_>,
        out: &mut Vec<JobResult>,
    ) {
        let whole = [0, pooled.len()];
        let bounds = shared.chunks.get().map_or(&whole[..], |b| &b[..]);
        let mut cpu = crate::sys::thread_cpu_ns();
        while id < shared.target.load(Ordering::Relaxed) {
            let k = shared.next_chunk.fetch_add(1, Ordering::Relaxed);
            let (Some(&start), Some(&end)) = (bounds.get(k), bounds.get(k + 1)) else {
                break;
            };
            let range = start..end;
            let len = range.len();
            for &job in &pooled[range] {
                if shared.halted_before(job.entry) {
                    return;
                }
                self.one(plan, job, shared, out);
            }
            if shared.sampling.load(Ordering::Relaxed) {
                let now = crate::sys::thread_cpu_ns();
                shared
                    .cpu_ns
                    .fetch_add(now.saturating_sub(cpu), Ordering::Relaxed);
                cpu = now;
            }
            shared.finished.fetch_add(len, Ordering::Relaxed);
        }
    }

    /// Write one entry and account for the result.
    pub(super) fn one(
        &mut self,
        plan: &Plan,
        job: Job,
        shared: &Shared<'_>,
        out: &mut Vec<JobResult>,
    ) {
        // A writer (a worker that hands entries over) leaves an entry the scout took to the
        // filter threads.
        if self.defer.iter().any(|&d| d) && !shared.claim(job.entry) {
            return;
        }
        let entry = &plan.entries[job.entry];
        let result = self.write_entry(entry, job, shared, true);
        shared.keep_messages(job.entry, &mut self.runner);
        match result {
            Err(Failure::Queued(kind)) => shared.queues[kind].push(job),
            Err(Failure::Delayed) => {
                // git counts a delayed entry as done in "Updating files"; "Filtering content"
                // counts its delivery.
                shared.progress.done.fetch_add(1, Ordering::Relaxed);
                shared.progress.delayed.fetch_add(1, Ordering::Relaxed);
                let driver = self.own_driver(entry);
                self.delayed.push(Delayed { job, driver });
            }
            Err(Failure::Fatal(fatal)) => shared.set_fatal(job, fatal),
            Ok(stat) => {
                shared.progress.done.fetch_add(1, Ordering::Relaxed);
                let _ = shared.written[job.entry].set(stat);
            }
            Err(_) => out.push((job, result)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(paths: &[&str]) -> (Plan, Vec<Job>) {
        let entries = paths
            .iter()
            .map(|p| crate::plan::Entry {
                path: (*p).into(),
                id: gix::hash::Kind::Sha1.null(),
                kind: crate::plan::Kind::File,
            })
            .collect();
        let jobs = (0..paths.len())
            .map(|entry| Job {
                entry,
                replace: false,
            })
            .collect();
        (
            Plan {
                entries,
                ..Plan::default()
            },
            jobs,
        )
    }

    /// Spread and cut as the pool does: every job once, no chunk longer than asked or across
    /// two directories, and neighbouring chunks in different directories while there are
    /// directories to alternate between.
    #[test]
    fn chunks_stay_in_one_directory_and_neighbours_differ() {
        let paths = [
            "a/1", "a/2", "a/3", "a/b/1", "a/b/2", "a/c", "b/1", "b/2", "b/3", "b/4", "b/5", "c",
        ];
        let (plan, jobs) = plan(&paths);
        let mut spread = jobs.clone();
        let bounds = spread_directories(&plan, &mut spread, 2);
        let dir = |job: &Job| {
            fs::split_path(plan.entries[job.entry].path.as_bstr())
                .0
                .to_owned()
        };
        let mut seen: Vec<usize> = spread.iter().map(|j| j.entry).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..paths.len()).collect::<Vec<_>>(), "every job once");
        assert_eq!(bounds.first(), Some(&0));
        assert_eq!(bounds.last(), Some(&spread.len()));
        let chunks: Vec<&[Job]> = bounds.windows(2).map(|w| &spread[w[0]..w[1]]).collect();
        for chunk in &chunks {
            assert!(!chunk.is_empty() && chunk.len() <= 2, "{chunk:?}");
            assert!(chunk.iter().all(|j| dir(j) == dir(&chunk[0])), "{chunk:?}");
        }
        // The first round has one chunk of each of the four directories (a, a/b, b and the
        // top), in path order.
        let firsts: Vec<_> = chunks[..4].iter().map(|c| dir(&c[0])).collect();
        assert_eq!(firsts, ["a", "a/b", "b", ""], "{chunks:?}");
    }
}
