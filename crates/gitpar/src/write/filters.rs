//! The filters' side of a run. In a parallel run, entries whose `filter` attribute names a
//! driver that runs a process go from the writers (or from the scout, which finds them ahead of
//! the writers) to filter threads through `crate::convert::filter::queue`, so that no unfiltered entry
//! waits for a filter; a filter's output is held in memory or streamed into the file; the
//! entries a long-running filter delayed are written at the end of their thread's run (git's
//! `finish_delayed_checkout`).

use std::sync::atomic::Ordering;

use bstr::ByteSlice;

use super::failure::{create_failure, Failure};
use super::{Job, JobResult, Shared, Worker};
use crate::convert::filter::{Direction, Filtered};
use crate::fs::{self, Dirs};
use crate::plan::{self, Kind, Plan};
use crate::write::error::EntryError;
use crate::write::options::Options;

/// The queue of the entries of long-running filters.
pub(super) const PROCESS: usize = 0;

/// The queue of the entries of one-shot commands (and of drivers without a command).
pub(super) const ONESHOT: usize = 1;

/// Which queue an entry with `driver` goes to.
pub(super) fn queue_of(driver: &gix::filter::plumbing::Driver) -> usize {
    if driver.process.as_ref().is_some_and(|p| !p.is_empty()) {
        PROCESS
    } else {
        ONESHOT
    }
}

/// Returns true if and only if `driver` starts a process to smudge an entry (so the entry is worth
/// handing to a filter thread; one without is done in a moment where it is met).
fn runs_a_process(driver: &gix::filter::plumbing::Driver) -> bool {
    let nonempty = |c: &Option<bstr::BString>| c.as_ref().is_some_and(|c| !c.is_empty());
    nonempty(&driver.process) || driver.process.is_none() && nonempty(&driver.smudge)
}

/// How many filter threads a parallel checkout runs per queue. Long-running filters: as many as
/// `par.filterProcesses` allows (by default two, or one on a single CPU), since every thread
/// starts its own process, which costs (git-lfs: some 70 ms of CPU to start) and gains little
/// beyond the CPUs the writers leave (see `DEFAULT_FILTER_PROCESSES`). One-shot commands: as many
/// as there are writers, since each entry is a process start of its own and several overlap well
/// (2,000 files through `tr`, 2 CPUs: 9.6 s with one thread, 4.2 s with two, 3.5 s with eight,
/// git 10.3 s). Measured with `scripts/bench-filters`.
pub(super) fn filter_threads(
    drivers: &[gix::filter::plumbing::Driver],
    opts: &Options,
    workers: usize,
) -> [usize; 2] {
    let mut threads = [0, 0];
    for driver in drivers.iter().filter(|d| runs_a_process(d)) {
        threads[queue_of(driver)] = match queue_of(driver) {
            PROCESS => opts.filter_processes.max(1),
            _ => workers,
        };
    }
    threads
}

/// The piece in which a filter's output is copied into the file.
const STREAM: usize = 64 * 1024;

/// A filter's output up to this size is held in memory until the filter says it succeeded, and
/// only then written (after the old file is unlinked), as git holds all of it: a filter that
/// fails leaves the path as it was. Larger output is streamed into the file from there on, and
/// a failure after that unlinks the partial file. The budget holds this much for every filtered
/// entry.
pub(super) const FILTER_BUFFER: usize = 1024 * 1024;

/// An entry a long-running filter delayed: fetched by the same thread (whose process holds it)
/// after its other entries.
pub(super) struct Delayed<'d> {
    /// The entry, as the writers took it (`replace` included, for the write at the end).
    pub(super) job: Job,
    /// The driver whose process holds the content: the one asked what it can deliver.
    pub(super) driver: &'d gix::filter::plumbing::Driver,
}

/// What the consumer of a filter's output made of it.
pub(super) enum Landed {
    /// All of it, in memory: the filter succeeded, nothing is written yet.
    Buffered(Vec<u8>),
    /// More than [`FILTER_BUFFER`]: streamed into the file.
    Streamed(Result<crate::fs::Stat, fs::CreateError>),
    /// The filter failed before [`FILTER_BUFFER`] bytes: nothing was written.
    Failed,
}

impl<'r> Worker<'r> {
    /// A filter thread's loop: filter the entries the writers hand over to queue `kind` until
    /// they are done, then collect what this thread's filters delayed. `index` is the thread's
    /// among those of its queue.
    pub(super) fn run_filters(
        &mut self,
        (kind, index): (usize, usize),
        plan: &Plan,
        shared: &Shared<'_>,
        out: &mut Vec<JobResult>,
    ) {
        // Until this thread's filter delays an entry, it takes work from the others' lanes too
        // (see `crate::convert::filter::queue`).
        let mut steal = true;
        while let Some(job) = shared.queues[kind].pop(index, steal, || shared.halted()) {
            let delayed = self.delayed.len();
            self.one(plan, job, shared, out);
            steal = self.delayed.len() == delayed;
        }
        self.finish_delayed(plan, shared, out);
    }

    /// The scout of a parallel run with filter threads: it looks up the attributes of every
    /// pooled entry, in index order, ahead of the writers (a lookup is a fraction of a write),
    /// and hands the entries whose `filter` names a configured driver to the filter threads
    /// unless a writer took them first. So the filters start, and a delaying filter (git-lfs)
    /// queues its downloads, at the start of the checkout wherever the filtered files sort,
    /// instead of when the writers get there (300 LFS files after 2,000 others: git-lfs started
    /// once the 2,000 were written). The scout decides who writes an entry, never how: the
    /// filter thread that gets it converts it as a writer would. An entry whose attributes
    /// cannot be read is left to the writers, which report it.
    pub(super) fn scout(&mut self, plan: &Plan, pooled: &[Job], shared: &Shared<'_>) {
        for &job in pooled {
            if shared.halted() {
                return;
            }
            let entry = &plan.entries[job.entry];
            if entry.kind == Kind::Symlink {
                // Written as a plain file (core.symlinks=false), never filtered.
                continue;
            }
            let Ok(platform) = self.attributes.at_entry(
                entry.path.as_bstr(),
                Some(entry.kind.index_mode()),
                &shared.reduced.view(&self.repo.objects),
            ) else {
                continue;
            };
            let own = Self::own_attributes(&platform, &self.runner, &mut self.outcome);
            if let Some(kind) = own.driver.map(queue_of).filter(|&k| self.defer[k]) {
                if shared.claim(job.entry) {
                    shared.queues[kind].push(job);
                }
            }
        }
    }

    /// The driver of an entry that was just delayed (so its attributes name one).
    pub(super) fn own_driver(&mut self, entry: &plan::Entry) -> &'r gix::filter::plumbing::Driver {
        let platform = self
            .attributes
            .at_entry(
                entry.path.as_bstr(),
                Some(entry.kind.index_mode()),
                &self.repo.objects,
            )
            .expect("the attributes of this entry were read a moment ago");
        Self::own_attributes(&platform, &self.runner, &mut self.outcome)
            .driver
            .expect("only a driver delays an entry")
    }

    /// git's `finish_delayed_checkout` for this thread's filters: ask each filter that delayed
    /// entries which it can deliver (`list_available_blobs`, which blocks until it has some),
    /// write those, and go round until every filter said it has nothing more (an empty list) or
    /// failed; what was never delivered fails with git's "was not filtered properly".
    pub(super) fn finish_delayed(
        &mut self,
        plan: &Plan,
        shared: &Shared<'_>,
        out: &mut Vec<JobResult>,
    ) {
        let mut commands: Vec<bstr::BString> = Vec::new();
        for d in &self.delayed {
            let command = d
                .driver
                .process
                .clone()
                .expect("only process filters delay");
            if !commands.contains(&command) {
                commands.push(command);
            }
        }
        while !commands.is_empty() {
            let mut i = 0;
            while i < commands.len() {
                if shared.halted() {
                    return;
                }
                let command = commands[i].clone();
                let paths = match self.runner.available(command.as_bstr()) {
                    Ok(paths) if !paths.is_empty() => paths,
                    // Done (nothing more), or failed (git's error lines are recorded).
                    _ => {
                        commands.remove(i);
                        continue;
                    }
                };
                let mut buggy = false;
                for path in paths {
                    let found = self.delayed.iter().position(|d| {
                        d.driver.process.as_ref() == Some(&command)
                            && plan.entries[d.job.entry].path == path
                    });
                    let Some(at) = found else {
                        // An error of the checkout (git's `errs |= 1`), under the stray path.
                        let entry = plan
                            .entries
                            .binary_search_by(|e| e.path.as_bstr().cmp(path.as_bstr()))
                            .unwrap_or(0);
                        let err = EntryError {
                            path: path.clone(),
                            message: format!(
                                "external filter '{command}' signaled that '{path}' is now \
                                 available although it has not been delayed earlier"
                            ),
                        };
                        let job = Job {
                            entry,
                            replace: false,
                        };
                        out.push((job, Err(Failure::Error(err))));
                        // git asks that filter no more.
                        buggy = true;
                        continue;
                    };
                    let d = self.delayed.swap_remove(at);
                    let entry = &plan.entries[d.job.entry];
                    let result = self.write_delayed(entry, d.job, d.driver, shared);
                    shared.keep_messages(d.job.entry, &mut self.runner);
                    match result {
                        Err(Failure::Fatal(fatal)) => {
                            shared.set_fatal(d.job, fatal);
                            return;
                        }
                        Ok(_) => {
                            shared.progress.filtered.fetch_add(1, Ordering::Relaxed);
                            out.push((d.job, result));
                        }
                        Err(_) => out.push((d.job, result)),
                    }
                }
                if buggy {
                    commands.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        for d in self.delayed.drain(..) {
            let err = EntryError::undelivered(plan.entries[d.job.entry].path.as_bstr());
            out.push((d.job, Err(Failure::Error(err))));
        }
    }

    /// Write a delayed entry with the content its filter delivers now (git's retry: a `smudge`
    /// without content and without `can-delay`). A non-required filter that fails now leaves an
    /// empty file, as git's retry writes.
    fn write_delayed(
        &mut self,
        entry: &plan::Entry,
        job: Job,
        driver: &gix::filter::plumbing::Driver,
        shared: &Shared<'_>,
    ) -> Result<gix::index::entry::Stat, Failure> {
        let _grant = shared.budget.acquire(FILTER_BUFFER as u64);
        let (dir, name) = fs::split_path(entry.path.as_bstr());
        let executable = entry.kind == Kind::Executable;
        let Worker {
            runner,
            dirs,
            chunk,
            ..
        } = self;
        let landed = runner
            .run(
                driver,
                Direction::Smudge,
                entry.path.as_bstr(),
                (&shared.meta, Some(entry.id)),
                b"",
                false,
                |r| Self::land(dirs, chunk, (dir, name), r, (executable, job.replace)),
            )
            .map_err(Failure::Fatal)?;
        let create = (dir, name, executable, job.replace);
        let result = Self::create_landed(dirs, create, landed, b"");
        let st = result.map_err(|err| create_failure(entry, err))?;
        Ok(shared.wrote(&st))
    }

    /// Create the file of a filtered entry from what its filter made of it: the output held in
    /// memory, or the file the output was streamed into; `unconverted` where the filter did not
    /// convert it (no command for it, a non-required filter that failed, a delay that came to
    /// nothing).
    pub(super) fn create_landed(
        dirs: &mut Dirs<'_>,
        (dir, name, executable, replace): (&bstr::BStr, &bstr::BStr, bool, bool),
        landed: Filtered<Landed>,
        unconverted: &[u8],
    ) -> Result<crate::fs::Stat, fs::CreateError> {
        match landed {
            Filtered::Converted(Landed::Buffered(out)) => {
                Self::create(dirs, dir, name, &out, executable, replace)
            }
            Filtered::Converted(Landed::Streamed(result)) => result,
            Filtered::Converted(Landed::Failed) | Filtered::Unconverted | Filtered::Delayed => {
                Self::create(dirs, dir, name, unconverted, executable, replace)
            }
        }
    }

    /// The consumer of a filter's output: up to [`FILTER_BUFFER`] bytes are read into memory;
    /// if the output ends there, that is all (written by the caller, now that the filter is
    /// known to have succeeded), otherwise the file is created and the rest streamed into it.
    pub(super) fn land(
        dirs: &mut Dirs<'_>,
        chunk: &mut Vec<u8>,
        (dir, name): (&bstr::BStr, &bstr::BStr),
        read: &mut dyn std::io::Read,
        (executable, replace): (bool, bool),
    ) -> Landed {
        let mut out = Vec::new();
        loop {
            if out.len() > FILTER_BUFFER {
                break;
            }
            let have = out.len();
            out.resize(have + STREAM, 0);
            match read.read(&mut out[have..]) {
                Ok(0) => {
                    out.truncate(have);
                    return Landed::Buffered(out);
                }
                Ok(n) => out.truncate(have + n),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => out.truncate(have),
                Err(_) => return Landed::Failed,
            }
        }
        Landed::Streamed(Self::create_streamed(
            dirs,
            (dir, name),
            &out,
            read,
            (executable, replace),
            chunk,
        ))
    }

    /// Create `name` in `dir` with `head`, the part of a filter's output read so far, and the
    /// rest of it streamed from `read` in pieces of [`STREAM`] bytes (`chunk` is the buffer). A
    /// read error (the filter failed or died) unlinks the partial file, so nothing half-written
    /// stays.
    fn create_streamed(
        dirs: &mut Dirs<'_>,
        (dir, name): (&bstr::BStr, &bstr::BStr),
        head: &[u8],
        read: &mut dyn std::io::Read,
        (executable, replace): (bool, bool),
        chunk: &mut Vec<u8>,
    ) -> Result<crate::fs::Stat, fs::CreateError> {
        use std::io::Write as _;
        let fd = Self::prepare(dirs, dir, name, replace)?;
        chunk.resize(STREAM, 0);
        fs::create_file_with(fd, name, executable, |file| {
            file.write_all(head)?;
            loop {
                let n = match read.read(chunk) {
                    Ok(0) => return Ok(()),
                    Ok(n) => n,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                };
                file.write_all(&chunk[..n])?;
            }
        })
    }
}
