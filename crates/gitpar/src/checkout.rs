//! A full checkout of one tree into a work tree: resolve → plan → execute → record.
//!
//! This is what `clone` and `worktree add` run after they have set up the repository. The work
//! tree is assumed to hold nothing the checkout would overwrite (a fresh or empty directory); the
//! two-way update of an existing work tree is a different operation.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bstr::{BString, ByteSlice};
use gix::hash::ObjectId;

use crate::budget::Budget;
use crate::lock::IndexLock;
use crate::options::Options;
use crate::plan::{self, Kind, Plan};
use crate::write;

/// Counters the caller can read from another thread to show progress, like git's
/// "Updating files:  45% (18000/40000)".
#[derive(Debug, Default)]
pub struct Progress {
    /// Entries the checkout will create; set once planning is done.
    pub total: AtomicUsize,
    /// Entries created so far.
    pub done: AtomicUsize,
}

/// What a successful checkout did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Entries created (files, symlinks, gitlink directories).
    pub entries: usize,
    /// Bytes written into regular files.
    pub bytes_written: u64,
    /// Writer threads used; 1 when the checkout was sequential.
    pub workers: usize,
    /// Paths that collided with another entry (case-insensitive or normalising filesystems);
    /// the last one written wins, as with git, and the caller warns about them.
    pub collisions: Vec<BString>,
}

/// Why an entry could not be written.
#[derive(Debug, thiserror::Error)]
#[error("unable to write '{path}': {message}")]
pub struct EntryError {
    /// The entry's path.
    pub path: BString,
    /// What went wrong, already phrased for the user.
    pub message: String,
}

/// Why a checkout failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The index lock is held or could not be written.
    #[error(transparent)]
    Lock(#[from] crate::lock::Error),
    /// The target tree is unsafe or unreadable; nothing was written.
    #[error(transparent)]
    Plan(#[from] plan::Error),
    /// An entry needs an external filter program, which this version does not run; nothing was
    /// written, so no file ever lands unconverted.
    #[error(
        "'{path}' needs the external filter driver '{driver}', which git-par does not run yet"
    )]
    ExternalFilter {
        /// The entry's path.
        path: BString,
        /// The `filter` attribute's value.
        driver: String,
    },
    /// A leading directory could not be created.
    #[error("unable to create directory '{path}': {source}")]
    Directory {
        /// The directory.
        path: BString,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// Some entries could not be written; the others were, but the index was left unwritten.
    #[error("{} entries could not be written: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Entries(Vec<EntryError>),
    /// The repository's configuration or attributes could not be read.
    #[error("{context}: {message}")]
    Repository {
        /// What we were doing.
        context: &'static str,
        /// What gix reported.
        message: String,
    },
    /// The user interrupted the checkout.
    #[error("interrupted")]
    Interrupted,
}

fn repo_err(context: &'static str) -> impl FnOnce(gix::Error) -> Error {
    move |err| Error::Repository {
        context,
        message: err.to_string(),
    }
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
    progress: &Progress,
    should_interrupt: &AtomicBool,
) -> Result<Outcome, Error> {
    let lock = IndexLock::acquire(index_path)?;
    let plan = plan::from_tree(&repo.objects, tree, opts.protect)?;
    let mut index = skeleton_index(&plan, repo.object_hash());

    let attributes = repo
        .attributes_only(
            &index,
            gix::worktree::stack::state::attributes::Source::IdMapping,
        )
        .map_err(repo_err("reading attributes"))?
        .detach();
    let pipeline =
        gix::filter::Pipeline::new(repo, attributes).map_err(repo_err("setting up filters"))?;
    let (filter, mut attributes) = pipeline.into_parts();
    refuse_external_filters(repo, &plan, &mut attributes)?;

    progress.total.store(plan.entries.len(), Ordering::Relaxed);
    for dir in &plan.dirs {
        write::create_dir(&worktree.join(dir.to_path_lossy())).map_err(|source| {
            Error::Directory {
                path: dir.clone(),
                source,
            }
        })?;
    }

    let shared = Shared {
        root: worktree.to_owned(),
        budget: Budget::new(opts.budget),
        progress,
        should_interrupt,
        bytes_written: AtomicU64::new(0),
        next_chunk: AtomicUsize::new(0),
    };
    let mut stats: Vec<Option<gix::index::entry::Stat>> = vec![None; plan.entries.len()];
    let pooled: Vec<usize> = plan
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| match e.kind {
            Kind::File | Kind::Executable => true,
            Kind::Symlink => !opts.symlinks,
            Kind::Gitlink => false,
        })
        .map(|(i, _)| i)
        .collect();
    let workers = if pooled.len() < opts.threshold.max(1) {
        1
    } else {
        opts.workers.clamp(1, pooled.len().max(1))
    };
    let mut results = Vec::with_capacity(pooled.len());
    let make_worker = || Worker {
        repo: {
            let mut r = repo.clone();
            r.object_cache_size(0);
            r
        },
        filter: filter.clone(),
        attributes: attributes.clone(),
        buf: Vec::new(),
        symlinks: opts.symlinks,
    };
    if workers == 1 {
        make_worker().run(&plan, &pooled, &shared, &mut results);
    } else {
        let sync_repo = repo.clone().into_sync();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    let (filter, attributes) = (filter.clone(), attributes.clone());
                    let (plan, pooled, shared, sync_repo) = (&plan, &pooled, &shared, &sync_repo);
                    std::thread::Builder::new()
                        .name("git-par writer".into())
                        .spawn_scoped(scope, move || {
                            let mut repo = sync_repo.to_thread_local();
                            repo.object_cache_size(0);
                            let mut worker = Worker {
                                repo,
                                filter,
                                attributes,
                                buf: Vec::new(),
                                symlinks: opts.symlinks,
                            };
                            let mut out = Vec::new();
                            worker.run(plan, pooled, shared, &mut out);
                            out
                        })
                        .expect("spawning a thread only fails when the system is out of resources")
                })
                .collect();
            for handle in handles {
                match handle.join() {
                    Ok(out) => results.extend(out),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
    }
    if should_interrupt.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }

    let mut errors = Vec::new();
    let mut collided = Vec::new();
    for (idx, result) in results {
        match result {
            Ok(stat) => stats[idx] = Some(stat),
            Err(Failure::Collision) => collided.push(idx),
            Err(Failure::Error(err)) => errors.push(err),
        }
    }

    // The sequential tail: collisions, then symlinks, then gitlinks, in index order.
    let mut outcome = Outcome {
        workers,
        ..Outcome::default()
    };
    let mut tail_worker = make_worker();
    collided.sort_unstable();
    for idx in collided {
        let entry = &plan.entries[idx];
        let path = worktree.join(entry.path.to_path_lossy());
        outcome.collisions.push(entry.path.clone());
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if !meta.is_dir() {
                let _ = std::fs::remove_file(&path);
            }
        }
        match tail_worker.write_entry(entry, &shared) {
            Ok(stat) => {
                stats[idx] = Some(stat);
                progress.done.fetch_add(1, Ordering::Relaxed);
            }
            Err(Failure::Collision) => errors.push(EntryError {
                path: entry.path.clone(),
                message: "the path is occupied by a directory".into(),
            }),
            Err(Failure::Error(err)) => errors.push(err),
        }
    }
    for (idx, entry) in plan.entries.iter().enumerate() {
        let path = worktree.join(entry.path.to_path_lossy());
        let result = match entry.kind {
            Kind::Symlink if opts.symlinks => {
                tail_worker
                    .read_blob(entry, &shared)
                    .and_then(|(data, _grant)| {
                        write::create_symlink(&data, &path).map_err(|err| EntryError {
                            path: entry.path.clone(),
                            message: format!("unable to create symlink: {err}"),
                        })
                    })
            }
            Kind::Gitlink => write::create_gitlink_dir(&path).map_err(|err| EntryError {
                path: entry.path.clone(),
                message: format!("unable to create directory: {err}"),
            }),
            _ => continue,
        };
        match result {
            Ok(stat) => {
                stats[idx] = Some(stat);
                progress.done.fetch_add(1, Ordering::Relaxed);
            }
            Err(err) => errors.push(err),
        }
    }
    if !errors.is_empty() {
        errors.sort_by(|a, b| a.path.cmp(&b.path));
        return Err(Error::Entries(errors));
    }

    // Record: the index entries are already in index order; fill in the stat data.
    for (entry, stat) in index.entries_mut().iter_mut().zip(stats) {
        entry.stat = stat.expect("every entry was either written or reported as an error");
    }
    outcome.entries = plan.entries.len();
    outcome.bytes_written = shared.bytes_written.load(Ordering::Relaxed);
    let file = gix::index::File::from_state(index, index_path);
    lock.commit(&file)?;
    Ok(outcome)
}

/// An index with every planned entry and zeroed stat data: the attribute machinery reads
/// `.gitattributes` blobs through it before anything exists on disk, and the record step fills
/// in the stats afterwards.
fn skeleton_index(plan: &Plan, object_hash: gix::hash::Kind) -> gix::index::State {
    let mut state = gix::index::State::new(object_hash);
    for entry in &plan.entries {
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

/// Refuse the checkout if any entry's `filter` attribute names a configured driver with a
/// smudge or process command: running external programs is not supported yet, and writing such
/// a file unconverted would silently produce the wrong content.
fn refuse_external_filters(
    repo: &gix::Repository,
    plan: &Plan,
    attributes: &mut gix::worktree::Stack,
) -> Result<(), Error> {
    let drivers: Vec<BString> = gix::filter::Pipeline::options(repo)
        .map_err(repo_err("reading filter configuration"))?
        .drivers
        .into_iter()
        .filter(|d| d.smudge.is_some() || d.process.is_some())
        .map(|d| d.name)
        .collect();
    if drivers.is_empty() {
        return Ok(());
    }
    let mut outcome = gix::attrs::search::Outcome::default();
    outcome.initialize_with_selection(&Default::default(), ["filter"]);
    for entry in &plan.entries {
        if !matches!(entry.kind, Kind::File | Kind::Executable) {
            continue;
        }
        outcome.reset();
        let platform = attributes
            .at_entry(
                entry.path.as_bstr(),
                Some(entry.kind.index_mode()),
                &repo.objects,
            )
            .map_err(|err| Error::Repository {
                context: "reading attributes",
                message: err.to_string(),
            })?;
        platform.matching_attributes(&mut outcome);
        if let Some(m) = outcome.iter_selected().next() {
            if let gix::attrs::StateRef::Value(name) = m.assignment.state {
                let name = name.as_bstr();
                if drivers.iter().any(|d| d == name) {
                    return Err(Error::ExternalFilter {
                        path: entry.path.clone(),
                        driver: name.to_string(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// State shared by all writers of one checkout.
struct Shared<'a> {
    root: PathBuf,
    budget: Budget,
    progress: &'a Progress,
    should_interrupt: &'a AtomicBool,
    bytes_written: AtomicU64,
    /// Index of the next chunk of `pooled` to hand out. Chunks are contiguous runs of the sorted
    /// path list, so a worker mostly stays in one directory (good for the kernel's dentry and
    /// directory locks), while taking them dynamically keeps slow chunks from stalling the run.
    next_chunk: AtomicUsize,
}

/// How many consecutive entries a worker takes at a time.
const CHUNK: usize = 32;

enum Failure {
    /// Something already exists at the path: handled by the sequential tail.
    Collision,
    Error(EntryError),
}

/// A writer: one thread's object-database handle, caches, filter pipeline and buffer. Workers
/// share nothing but the budget and the counters, so there is no lock on the hot path.
struct Worker {
    repo: gix::Repository,
    filter: gix::filter::plumbing::Pipeline,
    attributes: gix::worktree::Stack,
    buf: Vec<u8>,
    symlinks: bool,
}

impl Worker {
    /// Write the entries named by `pooled` (indices into the plan), taking chunks from the
    /// shared counter until none are left, and append one result per entry to `out`.
    fn run(
        &mut self,
        plan: &Plan,
        pooled: &[usize],
        shared: &Shared<'_>,
        out: &mut Vec<(usize, Result<gix::index::entry::Stat, Failure>)>,
    ) {
        loop {
            let start = shared.next_chunk.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= pooled.len() {
                return;
            }
            let range = start..(start + CHUNK).min(pooled.len());
            for &idx in &pooled[range] {
                if shared.should_interrupt.load(Ordering::Relaxed) {
                    return;
                }
                let result = self.write_entry(&plan.entries[idx], shared);
                if result.is_ok() {
                    shared.progress.done.fetch_add(1, Ordering::Relaxed);
                }
                out.push((idx, result));
            }
        }
    }

    /// Read a blob under the budget: the grant is sized from the object header before the
    /// object is inflated, so the bytes in flight never exceed the budget.
    fn read_blob<'s>(
        &mut self,
        entry: &plan::Entry,
        shared: &'s Shared<'_>,
    ) -> Result<(Vec<u8>, crate::budget::Grant<'s>), EntryError> {
        use gix::objs::{Find, FindHeader};
        let fail = |message: String| EntryError {
            path: entry.path.clone(),
            message,
        };
        let header = self
            .repo
            .objects
            .try_header(&entry.id)
            .map_err(|err| {
                fail(format!(
                    "unable to read sha1 file of {} ({}): {err}",
                    entry.path, entry.id
                ))
            })?
            .ok_or_else(|| {
                fail(format!(
                    "unable to read sha1 file of {} ({})",
                    entry.path, entry.id
                ))
            })?;
        let grant = shared.budget.acquire(header.size);
        let mut buf = std::mem::take(&mut self.buf);
        let data = self
            .repo
            .objects
            .try_find(&entry.id, &mut buf)
            .map_err(|err| {
                fail(format!(
                    "unable to read sha1 file of {} ({}): {err}",
                    entry.path, entry.id
                ))
            })?
            .ok_or_else(|| {
                fail(format!(
                    "unable to read sha1 file of {} ({})",
                    entry.path, entry.id
                ))
            })?;
        if data.kind != gix::objs::Kind::Blob {
            return Err(fail(format!("{} is a {}, not a blob", entry.id, data.kind)));
        }
        Ok((buf, grant))
    }

    /// git's `ident` step (see [`crate::convert`]): done here because gix-filter's differs.
    /// The attribute lookup only happens for blobs that contain `$Id`.
    fn expand_ident(
        entry: &plan::Entry,
        data: &[u8],
        platform: &gix::worktree::stack::Platform<'_>,
    ) -> Option<Vec<u8>> {
        if !crate::convert::may_have_ident(data) {
            return None;
        }
        let mut outcome = gix::attrs::search::Outcome::default();
        outcome.initialize_with_selection(&Default::default(), ["ident"]);
        platform.matching_attributes(&mut outcome);
        let set = outcome
            .iter_selected()
            .next()
            .is_some_and(|m| m.assignment.state.is_set());
        if !set {
            return None;
        }
        crate::convert::ident_to_worktree(data, entry.id.to_hex().to_string().as_bytes())
    }

    fn write_entry(
        &mut self,
        entry: &plan::Entry,
        shared: &Shared<'_>,
    ) -> Result<gix::index::entry::Stat, Failure> {
        let (data, _grant) = self.read_blob(entry, shared).map_err(Failure::Error)?;
        let path = shared.root.join(entry.path.to_path_lossy());
        let fail = |message: String| {
            Failure::Error(EntryError {
                path: entry.path.clone(),
                message,
            })
        };
        let result = if entry.kind == Kind::Symlink {
            // core.symlinks=false: the target becomes the file's content, unconverted, as in git.
            debug_assert!(!self.symlinks);
            write::create_file(&path, &data, false)
        } else {
            let platform = self
                .attributes
                .at_entry(
                    entry.path.as_bstr(),
                    Some(entry.kind.index_mode()),
                    &self.repo.objects,
                )
                .map_err(|err| fail(format!("unable to read attributes: {err}")))?;
            let expanded = Self::expand_ident(entry, &data, &platform);
            let input = expanded.as_deref().unwrap_or(&data);
            let converted = self
                .filter
                .convert_to_worktree(
                    input,
                    entry.path.as_bstr(),
                    &mut |_, attrs| {
                        platform.matching_attributes(attrs);
                    },
                    gix::filter::plumbing::pipeline::convert::to_worktree::Options::default(),
                )
                .map_err(|err| fail(format!("unable to convert to worktree: {err}")))?;
            let bytes = match converted {
                gix::filter::plumbing::pipeline::convert::ToWorktreeOutcome::Unchanged(b) => b,
                gix::filter::plumbing::pipeline::convert::ToWorktreeOutcome::Buffer(b) => b,
                gix::filter::plumbing::pipeline::convert::ToWorktreeOutcome::Process(_) => {
                    return Err(fail("external filter drivers are not supported".into()));
                }
            };
            shared
                .bytes_written
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            write::create_file(&path, bytes, entry.kind == Kind::Executable)
        };
        self.buf = data;
        result.map_err(|err| {
            if write::is_collision(&err) {
                Failure::Collision
            } else {
                fail(err.to_string())
            }
        })
    }
}
