//! Execute: write a selection of a plan's entries, regular files through the writer pool and
//! everything else in a sequential tail, and return the stat data of what was written.
//!
//! This is shared by the full checkout (every entry) and the two-way update (only the entries
//! that change). The caller has already removed whatever the entries replace, so every create is
//! `O_EXCL`: something in the way is a collision, never an overwrite.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bstr::ByteSlice;

use crate::budget::Budget;
use crate::checkout::{EntryError, Error, Progress};
use crate::options::Options;
use crate::plan::{self, Kind, Plan};
use crate::write;

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
    /// not in the selection.
    pub stats: Vec<Option<gix::index::entry::Stat>>,
    /// Writer threads used.
    pub workers: usize,
    /// Paths that collided and were written again in the tail (last one wins).
    pub collisions: Vec<bstr::BString>,
    /// Bytes written into regular files.
    pub bytes_written: u64,
}

/// Create `plan.dirs` that do not exist yet and write the entries of `plan` whose indices are in
/// `selection` (sorted), using `filters` (the gix-filter pipeline and the attribute stack) for
/// content conversion.
#[allow(clippy::too_many_arguments)]
pub fn execute(
    repo: &gix::Repository,
    plan: &Plan,
    selection: &[usize],
    worktree: &Path,
    opts: &Options,
    filters: Filters<'_>,
    progress: &Progress,
    should_interrupt: &AtomicBool,
) -> Result<Executed, Error> {
    let Filters {
        pipeline: filter,
        attributes,
        present,
    } = filters;
    progress.total.store(selection.len(), Ordering::Relaxed);
    for dir in &plan.dirs {
        write::create_dir(&worktree.join(dir.to_path_lossy())).map_err(|source| {
            Error::Directory {
                path: dir.clone(),
                source,
            }
        })?;
    }
    let shared = Shared {
        budget: Budget::new(opts.budget),
        progress,
        should_interrupt,
        bytes_written: AtomicU64::new(0),
        attributes_present: present,
        next_chunk: AtomicUsize::new(0),
    };
    let mut stats: Vec<Option<gix::index::entry::Stat>> = vec![None; plan.entries.len()];
    let pooled: Vec<usize> = selection
        .iter()
        .map(|&i| (i, &plan.entries[i]))
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
        dirs: write::DirCache::new(worktree),
        symlinks: opts.symlinks,
    };
    if workers == 1 {
        make_worker().run(plan, &pooled, &shared, &mut results);
    } else {
        let sync_repo = repo.clone().into_sync();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    let (filter, attributes) = (filter.clone(), attributes.clone());
                    let (pooled, shared, sync_repo) = (&pooled, &shared, &sync_repo);
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
                                dirs: write::DirCache::new(worktree),
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
    let mut collisions = Vec::new();
    let mut tail_worker = make_worker();
    collided.sort_unstable();
    for idx in collided {
        let entry = &plan.entries[idx];
        let path = worktree.join(entry.path.to_path_lossy());
        collisions.push(entry.path.clone());
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
    for (idx, entry) in selection.iter().map(|&i| (i, &plan.entries[i])) {
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
    Ok(Executed {
        stats,
        workers,
        collisions,
        bytes_written: shared.bytes_written.load(Ordering::Relaxed),
    })
}

/// State shared by all writers of one checkout.
struct Shared<'a> {
    budget: Budget,
    progress: &'a Progress,
    should_interrupt: &'a AtomicBool,
    bytes_written: AtomicU64,
    /// Whether any attribute file can apply (a `.gitattributes` in the tree, `info/attributes`,
    /// a global attributes file): without one, the per-file attribute lookup is skipped.
    attributes_present: bool,
    /// Index of the next chunk of `pooled` to hand out. Chunks are contiguous runs of the sorted
    /// path list, so a worker mostly stays in one directory (good for the kernel's dentry and
    /// directory locks), while taking them dynamically keeps slow chunks from stalling the run.
    next_chunk: AtomicUsize,
}

/// Attribute values the worker applies itself.
#[derive(Debug, Default, Clone, Copy)]
struct OwnAttributes {
    ident: bool,
    encoding: Option<crate::convert::BomEncoding>,
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
    /// The directory the last file went into, kept open for the next one.
    dirs: write::DirCache,
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

    /// The attributes we apply ourselves (see [`crate::convert`]): `ident` (git's expansion
    /// differs from gix-filter's) and a `working-tree-encoding` with a `-BOM` suffix (which
    /// gix-filter does not know). One lookup answers both.
    fn own_attributes(platform: &gix::worktree::stack::Platform<'_>) -> OwnAttributes {
        let mut outcome = gix::attrs::search::Outcome::default();
        outcome.initialize_with_selection(&Default::default(), ["ident", "working-tree-encoding"]);
        platform.matching_attributes(&mut outcome);
        let mut own = OwnAttributes::default();
        for m in outcome.iter_selected() {
            match m.assignment.name.as_str() {
                "ident" => own.ident = m.assignment.state.is_set(),
                "working-tree-encoding" => {
                    if let gix::attrs::StateRef::Value(v) = m.assignment.state {
                        own.encoding = crate::convert::BomEncoding::from_name(v.as_bstr());
                    }
                }
                _ => {}
            }
        }
        own
    }

    fn write_entry(
        &mut self,
        entry: &plan::Entry,
        shared: &Shared<'_>,
    ) -> Result<gix::index::entry::Stat, Failure> {
        let (data, _grant) = self.read_blob(entry, shared).map_err(Failure::Error)?;
        let (dir, name) = write::split_path(entry.path.as_bstr());
        let fail = |message: String| {
            Failure::Error(EntryError {
                path: entry.path.clone(),
                message,
            })
        };
        let result = if entry.kind == Kind::Symlink {
            // core.symlinks=false: the target becomes the file's content, unconverted, as in git.
            debug_assert!(!self.symlinks);
            self.dirs
                .dir(dir)
                .and_then(|fd| write::create_file_at(fd, name, &data, false))
        } else {
            let platform = self
                .attributes
                .at_entry(
                    entry.path.as_bstr(),
                    Some(entry.kind.index_mode()),
                    &self.repo.objects,
                )
                .map_err(|err| fail(format!("unable to read attributes: {err}")))?;
            let own = if shared.attributes_present {
                Self::own_attributes(&platform)
            } else {
                OwnAttributes::default()
            };
            let expanded = (own.ident && crate::convert::may_have_ident(&data))
                .then(|| {
                    crate::convert::ident_to_worktree(
                        &data,
                        entry.id.to_hex().to_string().as_bytes(),
                    )
                })
                .flatten();
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
            let encoded;
            let bytes = match own.encoding {
                Some(enc) => {
                    encoded = enc.encode(bytes).ok_or_else(|| {
                        fail(format!(
                            "failed to encode '{}' from UTF-8 to {}",
                            entry.path,
                            enc.name()
                        ))
                    })?;
                    &encoded[..]
                }
                None => bytes,
            };
            self.dirs.dir(dir).and_then(|fd| {
                write::create_file_at(fd, name, bytes, entry.kind == Kind::Executable)
            })
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

/// Returns true if and only if some attribute file may apply to `paths` (the new index): a
/// `.gitattributes` among them, `info/attributes`, `core.attributesFile` or the XDG default.
pub fn attributes_present<'a>(
    repo: &gix::Repository,
    mut paths: impl Iterator<Item = &'a bstr::BStr>,
) -> bool {
    let in_tree = paths.any(|p| p == ".gitattributes" || p.ends_with(b"/.gitattributes"));
    let info = repo.common_dir().join("info/attributes").exists();
    let configured = repo
        .config_snapshot()
        .string("core.attributesFile")
        .is_some();
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))
        .is_some_and(|base| base.join("git/attributes").exists());
    in_tree || info || configured || xdg
}
