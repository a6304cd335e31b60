//! Refresh: is the work tree file of an index entry still what the index says?
//!
//! The local-change check of a switch, the refresh of a forced reset and (later) `status` share
//! this: a parallel `lstat` over contiguous chunks of entries, and — only where the stat data
//! cannot decide (times or inode changed, or the entry is racily clean) — a re-hash of the file
//! through the to-git filters, also in parallel (git does that part sequentially).

use std::io::Read;

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
struct StatRules {
    file_mode: bool,
    trust_ctime: bool,
    minimal: bool,
}

/// Entries per extra thread: below this, starting a thread costs more than it saves (git's
/// `preload-index.c` uses the same figure).
const THREAD_COST: usize = 500;

/// How many entries a thread takes at a time: contiguous, so that a thread walks one directory
/// and the kernel's dentry cache stays warm.
const CHUNK: usize = 64;

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
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let config = repo.config_snapshot();
    let rules = StatRules {
        file_mode: config.boolean("core.fileMode").unwrap_or(true),
        trust_ctime: config.boolean("core.trustctime").unwrap_or(true),
        minimal: config
            .string("core.checkStat")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"minimal")),
    };
    let attributes = repo
        .attributes_only(
            index,
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
        )
        .map_err(|e| e.to_string())?
        .detach();
    let drivers = crate::filter::drivers(repo)?;
    // The results are written in place: chunks of the output are handed out with their
    // inputs, so nothing is collected per thread and merged afterwards.
    let mut states = vec![State::Clean; items.len()];
    // As git's preload-index: a thread only pays off for a few hundred entries (THREAD_COST).
    let threads = threads.clamp(1, (items.len() / THREAD_COST).max(1));
    {
        let work = std::sync::Mutex::new(states.chunks_mut(CHUNK).zip(items.chunks(CHUNK)));
        let run = |repo: gix::Repository| -> Result<(), String> {
            let mut filter = crate::filter::ToGit::new(&repo, attributes.clone(), &drivers)?;
            let mut buf = Vec::new();
            let mut dirs = root.dirs();
            loop {
                let next = work
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .next();
                let Some((out, input)) = next else {
                    return Ok(());
                };
                for (slot, item) in out.iter_mut().zip(input) {
                    *slot = check_one(
                        item,
                        index,
                        index_ts,
                        rules,
                        (&mut filter, &mut buf, &mut dirs),
                    );
                }
            }
        };
        if threads == 1 {
            run(repo.clone())?;
        } else {
            let sync = repo.clone().into_sync();
            let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        let (sync, run) = (&sync, &run);
                        scope.spawn(move || run(sync.to_thread_local()))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            results.into_iter().collect::<Result<(), String>>()?;
        }
    }
    Ok(states)
}

fn check_one(
    item: &Item<'_>,
    index: &gix::index::State,
    index_ts: i64,
    rules: StatRules,
    (filter, buf, dirs): (&mut crate::filter::ToGit<'_>, &mut Vec<u8>, &mut Dirs<'_>),
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
    // git's `match_stat_data`: ctime only with core.trustctime, and with core.checkStat=minimal
    // only the seconds of mtime and the size.
    let same = if rules.minimal {
        st.mtime.secs == item.entry.stat.mtime.secs && st.size == item.entry.stat.size
    } else {
        st.mtime == item.entry.stat.mtime
            && (!rules.trust_ctime || st.ctime == item.entry.stat.ctime)
            && st.ino == item.entry.stat.ino
            && st.uid == item.entry.stat.uid
            && st.gid == item.entry.stat.gid
            && st.size == item.entry.stat.size
    };
    if same && !racy {
        return State::Clean;
    }
    let differs = if same {
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
        to_git(dirs, item.path, index, filter, buf).is_ok()
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
/// the local version of a file.
pub(crate) fn to_git(
    dirs: &mut Dirs<'_>,
    rela: &BStr,
    index: &gix::index::State,
    filter: &mut crate::filter::ToGit<'_>,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    let mut src = Vec::new();
    dirs.open_read(rela)?.read_to_end(&mut src)?;
    filter.convert(rela, src, index, buf)
}
