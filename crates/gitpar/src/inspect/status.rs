//! **status** and **refresh**: what `git status` and `git update-index --refresh` compute, with
//! the work tree looked at in parallel.
//!
//! Both start the same way, as git's `refresh_index` does: every tracked entry (stage 0, not
//! skip-worktree, not assume-unchanged) is `lstat`ed and — only where the stat data cannot decide
//! — re-hashed through the to-git filters, by the threads of `refresh::check` (the pool
//! the checkout's local-change check uses). Entries whose content is unchanged take the fresh
//! stat data, and the index is written back under `index.lock` with its extensions copied
//! byte for byte (`record::commit_refreshed`): the untracked cache (`UNTR`), the
//! fsmonitor token (`FSMN`), the cache-tree and the rest stay as they were, since a refresh
//! changes no path and no object id.
//!
//! [`status`] then adds what `git status` shows besides: the staged changes (HEAD's tree against
//! the index, with renames as `status.renames`/`diff.renames` decide, by gix's tree/index diff),
//! unmerged paths, submodules (new commits; modified or untracked content as git learns it, from
//! `git status --porcelain=2` run inside the submodule), and the untracked and ignored files (the
//! directory walk of gix-dir, with git's `.gitignore`/`info/exclude`/`core.excludesFile` rules,
//! run on its own thread while the tracked entries are checked).

use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage};
use gix::ObjectId;

use crate::fs::lock::IndexLock;
use crate::fs::Root;
use crate::inspect::refresh::{Item, Verdict};

/// Why a refresh or a status could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The index could not be read.
    #[error("index file corrupt: {0}")]
    Index(String),
    /// The work tree could not be opened.
    #[error("unable to open the work tree '{}': {source}", path.display())]
    Worktree {
        /// The work tree.
        path: std::path::PathBuf,
        /// The system error.
        source: std::io::Error,
    },
    /// Taking or writing `index.lock` failed (refresh only: status writes opportunistically).
    #[error(transparent)]
    Lock(#[from] crate::fs::lock::Error),
    /// Reading objects, attributes, ignore files or the work tree failed.
    #[error("{0}")]
    Other(String),
    /// git must run this status or refresh itself (why): the index's untracked cache or the
    /// fsmonitor is in use (status), which git-par neither maintains nor asks, or the index is
    /// to be written split (both). Nothing was written.
    #[error("{0}")]
    Delegate(&'static str),
}

/// How many threads look at the work tree for `n_items` entries, as issue 12 asks of every
/// parallel pass (one logic, [`crate::fs::tune`]): an `explicit` count wins, then
/// `par.refreshThreads`, then git's `core.preloadIndex=false` (one thread, as git then does it
/// all in one); otherwise the filesystem of the work tree decides where to start and how far
/// the run may grow from its measured throughput ([`crate::fs::tune::workers_for`]). On low-latency
/// filesystems a thread still needs a few hundred entries to pay for itself, as in git's
/// `preload-index.c`.
pub fn refresh_choice(
    config: &gix::config::Snapshot<'_>,
    worktree: crate::fs::Fd<'_>,
    n_items: usize,
    explicit: Option<usize>,
) -> crate::fs::tune::Choice {
    use crate::fs::tune::{self, Source};
    let fixed = |n: usize, source| {
        tune::workers_for(tune::Kind::Unknown, n_items, Some((n.max(1), source)))
    };
    if let Some(n) = explicit {
        return fixed(n, Source::Explicit);
    }
    if let Some(n) = config.integer("par.refreshThreads") {
        return fixed(usize::try_from(n).unwrap_or(1), Source::Config);
    }
    if !config.boolean("core.preloadIndex").unwrap_or(true) {
        return fixed(1, Source::Config);
    }
    let kind = tune::Kind::of(worktree);
    let mut choice = tune::workers_for(kind, n_items, None);
    if kind.is_high_latency() {
        // An lstat is a round trip and nothing else: start where the checkout's writers may
        // only grow to (measured on FUSE with 1 ms latency: 64 threads beat 32 by a quarter,
        // and growing one measured doubling at a time does not get there within the run).
        choice.workers = HIGH_LATENCY_START.min(n_items.max(1)).max(choice.workers);
        choice.max = choice.max.max(choice.workers);
    } else {
        let cap = (n_items / crate::inspect::refresh::THREAD_COST).max(1);
        choice.workers = choice.workers.min(cap);
        choice.max = choice.max.min(cap).max(choice.workers);
    }
    choice
}

/// Where an automatic refresh starts on a network or FUSE filesystem.
const HIGH_LATENCY_START: usize = 64;

/// A tracked entry's state in the work tree after the refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Not looked at: unmerged, skip-worktree or assume-unchanged (git trusts those bits).
    Skipped,
    /// What the index records.
    Clean,
    /// Different (content, type, mode) or missing.
    Changed,
}

/// The index after a parallel refresh.
struct Refreshed {
    index: gix::index::File,
    seen: Vec<Seen>,
    /// Some entry took new stat data (git's `CE_ENTRY_CHANGED`).
    changed: bool,
    /// Racily clean entries whose content differs: git smudges them (size 0) when it writes.
    smudge: Vec<usize>,
    /// The thread count the refresh ended with.
    threads: usize,
    /// The bytes of the index file as read (see [`read_index`]).
    original: Option<crate::index::record::IndexBytes>,
    /// The entries that took fresh stat data, ascending.
    restat: Vec<usize>,
    /// Where the entries whose bytes may change lie in `original`.
    layout: Option<crate::inspect::refresh::Layout>,
    /// The entries carry git's `CE_UPTODATE` for the untracked walk (status), to be removed
    /// before the index is written.
    uptodate: bool,
    /// The fsmonitor asked, with what the refresh found.
    fsmonitor: Option<crate::index::fsmonitor::Monitor>,
}

impl Refreshed {
    /// Whether the index is to be written (git's `cache_changed` after a refresh): an entry
    /// took new stat data, one is racy, or the fsmonitor extension changed (`has_fsmonitor`:
    /// the file has one, which goes when no fsmonitor is configured).
    fn to_write(&self, has_fsmonitor: bool) -> bool {
        self.changed
            || has_racy_timestamp(&self.index)
            || match &self.fsmonitor {
                Some(monitor) => monitor.changed,
                None => has_fsmonitor,
            }
    }
}

/// Why git, not git-par, must run a status or refresh under `setting`, if it must: git-par asks
/// an fsmonitor hook itself ([`crate::index::fsmonitor`]; its answer also invalidates the untracked
/// cache, [`crate::index::untracked_cache::Cache::apply_fsmonitor`]), but not git's built-in daemon,
/// and not with a split or sparse index (whose extension's entry positions are not those
/// git-par refreshes: `read` says the index was read as is; and with `index.sparse`, git
/// writes back a sparse index where git-par would write it whole), or `core.ignoreCase` (git
/// looks the reported paths up case-insensitively).
fn fsmonitor_for_git(
    repo: &gix::Repository,
    setting: &crate::index::fsmonitor::Setting,
    read: &ReadIndex,
) -> Option<&'static str> {
    use crate::index::fsmonitor::Setting;
    match setting {
        Setting::Disabled => None,
        Setting::Daemon => Some("core.fsmonitor=true (git's built-in daemon)"),
        Setting::Hook(_) => {
            let config = repo.config_snapshot();
            if read.split || read.expanded || config.boolean("index.sparse") == Some(true) {
                Some("core.fsmonitor with a split or sparse index")
            } else if config.boolean("core.ignoreCase") == Some(true) {
                Some("core.fsmonitor with core.ignoreCase")
            } else {
                None
            }
        }
    }
}

/// What [`read_index`] learnt of the index file besides its entries.
struct ReadIndex {
    /// The file is split.
    split: bool,
    /// It was a sparse index, expanded.
    expanded: bool,
    /// Its `FSMN` extension, if it has one: the token and the entries not known valid.
    fsmonitor: Option<(BString, Vec<usize>)>,
    /// It has an `FSMN` extension (readable or not).
    has_fsmonitor: bool,
}

/// Read the index at `path` (expanded if it is sparse), with the bytes it was decoded from when
/// they can be written back patched: not for a sparse index, whose entries change here. Also
/// returns what [`ReadIndex`] says of the file.
///
/// As git's `post_read_index_from`: in a sparse checkout (unless
/// `sparse.expectFilesOutsideOfPatterns`), skip-worktree entries whose file is present lose
/// their bit ([`crate::plan::sparse::clear_present`]), so that their changes show; an index written
/// back then carries the cleared bits, as git's does.
fn read_index(
    repo: &gix::Repository,
    root: &Root,
    path: &Path,
) -> Result<
    (
        (gix::index::File, Option<crate::index::record::IndexBytes>),
        ReadIndex,
    ),
    Error,
> {
    let read = crate::index::record::read_for_refresh(path, repo.object_hash())
        .map_err(|e| Error::Index(e.to_string()))?;
    crate::sys::phase::mark("index decoded");
    let (mut index, mut bytes, split) = (read.file, read.bytes, read.split);
    let has_fsmonitor = index.fs_monitor().is_some();
    let fsmonitor = has_fsmonitor
        .then(|| {
            bytes
                .as_ref()
                .and_then(|b| crate::index::fsmonitor::read_extension(b, &index))
        })
        .flatten();
    let mut expanded = false;
    // gix marks an index sparse when it decodes a directory entry (or the `sdir` extension), so
    // only a sparse one is searched for them.
    if index.is_sparse() && index.entries().iter().any(|e| e.mode == Mode::DIR) {
        bytes = None;
        expanded = true;
        crate::plan::sparse::expand(&repo.objects, &mut index)
            .map_err(|e| Error::Index(e.to_string()))?;
    }
    if crate::plan::sparse::clears_present_files(repo)
        && crate::plan::sparse::clear_present(root, &mut index)
    {
        // The entries' flags changed: the index is encoded again if it is written.
        bytes = None;
    }
    Ok((
        (index, bytes),
        ReadIndex {
            split,
            expanded,
            fsmonitor,
            has_fsmonitor,
        },
    ))
}

/// The fsmonitor of a status or refresh of `index` (read as `read` says) under `setting`:
/// asked now, as git asks it when it reads the index (`None`: no fsmonitor hook).
fn start_fsmonitor(
    repo: &gix::Repository,
    root: &Root,
    setting: &crate::index::fsmonitor::Setting,
    index: &gix::index::File,
    read: &mut ReadIndex,
) -> Option<crate::index::fsmonitor::Monitor> {
    let crate::index::fsmonitor::Setting::Hook(hook) = setting else {
        return None;
    };
    let monitor = crate::index::fsmonitor::Monitor::start(
        repo,
        root.path(),
        hook.as_bstr(),
        index,
        read.fsmonitor.take(),
    );
    crate::sys::phase::mark("fsmonitor asked");
    Some(monitor)
}

/// Why git, not git-par, must write back the index a refresh or a status read, if it must: it
/// is to be written split ([`crate::index::split_index::reason`]; `split`: the index read is split).
/// These write back the index they read, patched; git would write the split one, so that
/// index is git's to write.
fn split_for_git(repo: &gix::Repository, split: bool) -> Option<&'static str> {
    crate::index::split_index::reason(repo, || split)
}

/// Check every entry git's refresh checks, in parallel, and apply the fresh stat data.
///
/// `beside` runs on its own thread while the entries are checked, with the index as read: the
/// untracked walk of `status`, which wants every entry marked up to date (`Some`); a refresh
/// has nothing to run beside (`None`), and its entries are left unmarked, which spares two
/// passes over the whole index.
fn refresh_index<R: Send>(
    repo: &gix::Repository,
    root: &Root,
    (mut index, original): (gix::index::File, Option<crate::index::record::IndexBytes>),
    explicit: Option<usize>,
    beside: Option<impl FnOnce(&gix::index::State) -> R + Send>,
    mut fsmonitor: Option<crate::index::fsmonitor::Monitor>,
) -> Result<(Refreshed, Option<R>), Error> {
    let n_looked = count_looked(&index, fsmonitor.as_ref());
    let choice = refresh_choice(&repo.config_snapshot(), root.fd(), n_looked, explicit);
    crate::sys::phase::mark("refresh threads chosen");
    // git's CE_UPTODATE, which gix-dir wants on the entries it may take as present on disk; the
    // changed ones lose it below, and the index is never written with it.
    let uptodate = beside.is_some();
    if uptodate {
        for entry in index.entries_mut() {
            entry.flags.insert(Flags::UPTODATE);
        }
    }
    let check = Check {
        repo,
        root,
        measure: original.is_some(),
        choice,
        fsmonitor: fsmonitor.as_ref(),
    };
    let (checked, beside) = check.run(&index, beside);
    crate::sys::phase::mark("work tree checked");
    let checked = checked.map_err(|e| Error::Other(e.to_string()))?;
    let restat = take_fresh(index.entries_mut(), &checked.fresh);
    let (mut seen, smudge) = judge(
        index.entries_mut(),
        &checked.verdicts,
        uptodate,
        fsmonitor.as_mut(),
    );
    // An entry that took fresh stat data is a new entry to git (`replace_index_entry`), which
    // is not fsmonitor-valid until a later refresh finds it clean.
    if let Some(monitor) = fsmonitor.as_mut() {
        for &i in &restat {
            monitor.checked(i, false, false);
        }
    }
    compare_gitlinks(
        root,
        &index,
        &checked.gitlinks,
        &mut seen,
        fsmonitor.as_mut(),
    );
    Ok((
        Refreshed {
            index,
            seen,
            changed: !restat.is_empty(),
            smudge,
            threads: checked.threads,
            original,
            restat,
            layout: checked.layout,
            uptodate,
            fsmonitor,
        },
        beside,
    ))
}

/// Whether git's refresh looks at `e`: stage 0, neither skip-worktree nor assume-unchanged nor
/// intent-to-add. Asked of every entry, twice: no vector of them is built (see `check_with`).
#[inline]
fn looked(e: &gix::index::Entry) -> bool {
    e.stage() == Stage::Unconflicted
        && !e
            .flags
            .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD)
}

/// How many entries of `index` there are to look at, which sets the thread count. Only a
/// version 3 or 4 index can hold skip-worktree and intent-to-add entries (a sparse checkout may
/// skip most of them), so a version 2 index is not counted: its skipped entries (unmerged,
/// assume-unchanged) are few, a thread that finds none to check costs only its start, and the
/// count would be a pass over every entry (2 ms for the bench's 200,000). With an fsmonitor,
/// only what it does not vouch for is looked at: usually a handful.
fn count_looked(
    index: &gix::index::File,
    fsmonitor: Option<&crate::index::fsmonitor::Monitor>,
) -> usize {
    if let Some(monitor) = fsmonitor {
        index
            .entries()
            .iter()
            .enumerate()
            .filter(|&(i, e)| looked(e) && !monitor.is_valid(i))
            .count()
    } else if index.version() == gix::index::Version::V2 {
        index.entries().len()
    } else {
        index.entries().iter().filter(|e| looked(e)).count()
    }
}

/// The parallel check of [`refresh_index`]: what it runs with, besides the index.
struct Check<'c> {
    repo: &'c gix::Repository,
    root: &'c Root,
    /// Measure where the entries whose bytes may change lie in the file, to write it back
    /// patched (the bytes read are kept).
    measure: bool,
    choice: crate::fs::tune::Choice,
    /// What the fsmonitor knows unchanged is not looked at (git's `CE_FSMONITOR_VALID`).
    fsmonitor: Option<&'c crate::index::fsmonitor::Monitor>,
}

impl Check<'_> {
    /// Check the entries of `state` git's refresh looks at ([`crate::inspect::refresh::check_with`])
    /// while `beside` runs on a thread of its own with `state`; returns both results.
    fn run<R: Send>(
        &self,
        state: &gix::index::State,
        beside: Option<impl FnOnce(&gix::index::State) -> R + Send>,
    ) -> (
        Result<crate::inspect::refresh::Checked, crate::inspect::refresh::Error>,
        Option<R>,
    ) {
        let monitor = self.fsmonitor;
        std::thread::scope(|scope| {
            let other = beside.map(|beside| scope.spawn(move || beside(state)));
            let entries = state.entries();
            // Where the entries lie in the file, for writing it back patched.
            let size = |i: usize| crate::index::format::entry_size(&entries[i], state);
            let checked = crate::inspect::refresh::check_with(
                self.repo,
                self.root,
                state,
                state.timestamp().unix_seconds(),
                entries.len(),
                |i| {
                    let entry = &entries[i];
                    (looked(entry) && !monitor.is_some_and(|m| m.is_valid(i))).then(|| Item {
                        path: entry.path(state),
                        entry,
                    })
                },
                self.measure.then_some(&size),
                self.choice,
            );
            let beside = other.map(|other| {
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            });
            (checked, beside)
        })
    }
}

/// Give the entries the fresh stat data the check found (`fresh`: positions and stat data,
/// ascending), and return the positions of those whose stat data changed, ascending.
fn take_fresh(
    entries: &mut [gix::index::Entry],
    fresh: &[(usize, gix::index::entry::Stat)],
) -> Vec<usize> {
    let mut restat = Vec::new();
    for &(i, stat) in fresh {
        if entries[i].stat != stat {
            entries[i].stat = stat;
            restat.push(i);
        }
    }
    restat
}

/// What the check's `verdicts` make of each entry ([`Seen`]), and the racily clean entries
/// whose content differs, to be smudged. One pass over the verdicts; only the entries that are
/// not clean are looked at. Tells the fsmonitor what was found, and takes git's `CE_UPTODATE`
/// from the entries that are not clean when they carry it (`uptodate`).
fn judge(
    entries: &mut [gix::index::Entry],
    verdicts: &[Verdict],
    uptodate: bool,
    mut fsmonitor: Option<&mut crate::index::fsmonitor::Monitor>,
) -> (Vec<Seen>, Vec<usize>) {
    let mut smudge = Vec::new();
    let mut seen = Vec::with_capacity(entries.len());
    for (i, &verdict) in verdicts.iter().enumerate() {
        if let Some(monitor) = fsmonitor.as_deref_mut() {
            let gitlink = entries[i].mode == Mode::COMMIT;
            match verdict {
                Verdict::NotChecked => {}
                Verdict::Clean | Verdict::Refreshed => monitor.checked(i, true, gitlink),
                _ => monitor.checked(i, false, gitlink),
            }
        }
        let valid = || fsmonitor.as_deref().is_some_and(|m| m.is_valid(i));
        let state = seen_of(verdict, &entries[i], valid);
        if verdict == Verdict::RacilyModified {
            smudge.push(i);
        }
        if uptodate && state != Seen::Clean {
            entries[i].flags.remove(Flags::UPTODATE);
        }
        seen.push(state);
    }
    (seen, smudge)
}

/// What `verdict` makes of `entry`; `fsmonitor_valid` says whether the fsmonitor vouches for
/// it, asked only of an entry that was not checked.
#[inline]
fn seen_of(
    verdict: Verdict,
    entry: &gix::index::Entry,
    fsmonitor_valid: impl FnOnce() -> bool,
) -> Seen {
    match verdict {
        Verdict::Clean | Verdict::Refreshed => Seen::Clean,
        // Unchanged as far as the fsmonitor knows, as git trusts it (git's
        // `refresh_cache_ent` returns such an entry up to date before anything else).
        Verdict::NotChecked
            if fsmonitor_valid()
                && entry.stage() == Stage::Unconflicted
                && !entry
                    .flags
                    .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID) =>
        {
            Seen::Clean
        }
        // git's diff-files skips a skip-worktree entry before it looks at intent-to-add.
        Verdict::NotChecked
            if entry.flags.contains(Flags::INTENT_TO_ADD)
                && !entry.flags.contains(Flags::SKIP_WORKTREE)
                && entry.stage() == Stage::Unconflicted =>
        {
            Seen::Changed
        }
        Verdict::NotChecked => Seen::Skipped,
        Verdict::RacilyModified | Verdict::Modified | Verdict::Missing => Seen::Changed,
    }
}

/// A gitlink is clean for the stat check when its directory is there (`gitlinks`: those the
/// check found so); as git (`ce_compare_gitlink`), the ones whose submodule's HEAD is not the
/// recorded commit are changed.
fn compare_gitlinks(
    root: &Root,
    index: &gix::index::State,
    gitlinks: &[usize],
    seen: &mut [Seen],
    mut fsmonitor: Option<&mut crate::index::fsmonitor::Monitor>,
) {
    for &i in gitlinks {
        let entry = &index.entries()[i];
        if let Some(head) = submodule_head(root.path(), entry.path(index)) {
            if head != entry.id {
                seen[i] = Seen::Changed;
                if let Some(monitor) = fsmonitor.as_deref_mut() {
                    monitor.checked(i, false, true);
                }
            }
        }
    }
}

/// The commit checked out in the submodule at `path`, if it is a populated repository (git's
/// `resolve_gitlink_ref`; an empty directory is an unpopulated submodule, unchanged).
fn submodule_head(worktree: &Path, path: &BStr) -> Option<ObjectId> {
    let dir = worktree.join(path.to_path_lossy());
    if !dir.join(".git").exists() {
        return None;
    }
    let repo = gix::open_opts(&dir, gix::open::Options::isolated()).ok()?;
    repo.head_id().ok().map(gix::Id::detach)
}

/// Write the refreshed index into `lock`, as git's `write_locked_index` after a refresh.
/// `update_index`: written by `git update-index --refresh`, which tells `post-index-change`
/// that skip-worktree bits may have changed (it always does); `git status` does not.
/// `has_fsmonitor`: the index read has an `FSMN` extension, dropped when no fsmonitor was asked
/// (git's `remove_fsmonitor`).
fn write(
    lock: IndexLock,
    repo: &gix::Repository,
    refreshed: Refreshed,
    update_index: bool,
    has_fsmonitor: bool,
    untracked: Option<Option<&[u8]>>,
) -> Result<(), Error> {
    let Refreshed {
        index,
        smudge,
        original,
        mut restat,
        layout,
        uptodate,
        fsmonitor,
        ..
    } = refreshed;
    let fsmonitor = match fsmonitor {
        Some(monitor) => Some(Some(monitor.extension())),
        None => has_fsmonitor.then_some(None),
    };
    let path = index.path().to_owned();
    let mut state: gix::index::State = index.into();
    for &i in &smudge {
        state.entries_mut()[i].stat.size = 0;
    }
    if uptodate {
        for entry in state.entries_mut() {
            entry.flags.remove(Flags::UPTODATE);
        }
    }
    // The entries whose bytes in the file change: fresh stat data, or smudged.
    restat.extend(smudge);
    restat.sort_unstable();
    restat.dedup();
    let written = crate::index::record::commit_refreshed(
        lock,
        repo,
        &state,
        &path,
        original
            .as_ref()
            .map(|bytes| (&bytes[..], restat.as_slice(), layout.as_ref())),
        fsmonitor.as_ref().map(Option::as_deref),
        untracked,
    );
    // The old index is unlinked by the rename: unmapping it frees its blocks, which on the
    // bench's root ext4 (mounted with `discard`) waits about 10 ms for a synchronous discard
    // (git waits the same in its rename). On its own thread, that wait overlaps with freeing
    // the decoded index and the rest of the command.
    drop_later(original);
    drop_later(state);
    written?;
    crate::repo::hooks::index_changed(repo, false, update_index);
    Ok(())
}

/// git's `has_racy_timestamp`: some entry other than a gitlink was modified in or after the
/// second the index file was written, so that only its content can tell whether it is clean.
fn has_racy_timestamp(index: &gix::index::State) -> bool {
    let ts = index.timestamp().unix_seconds();
    ts != 0
        && index
            .entries()
            .iter()
            .any(|e| e.mode != Mode::COMMIT && i64::from(e.stat.mtime.secs) >= ts)
}

/// Drop `value` on a thread of its own: freeing a 200,000-entry index (tens of MB, unmapped a
/// page range at a time) is work nobody needs to wait for.
fn drop_later<T: Send + 'static>(value: T) {
    // Without a thread to be had, the closure and the value in it are dropped right here.
    let _ = std::thread::Builder::new()
        .name("gitpar-drop".into())
        .spawn(move || drop(value));
}

/// Options of [`refresh`].
#[derive(Debug, Clone, Default)]
pub struct RefreshOptions {
    /// Threads looking at the work tree; `None`: [`refresh_choice`] decides.
    pub threads: Option<usize>,
}

/// What [`refresh`] found.
#[derive(Debug, Clone, Default)]
pub struct RefreshOutcome {
    /// Entries that differ from the work tree (git's `needs update`), in index order.
    pub needs_update: Vec<BString>,
    /// Unmerged paths (git's `needs merge`), once each.
    pub needs_merge: Vec<BString>,
    /// Whether the index was written (some entry took fresh stat data, or one is racy).
    pub written: bool,
    /// How many threads looked at the work tree.
    pub threads: usize,
}

/// `git update-index --refresh`: take `index.lock`, check every tracked entry against the
/// work tree in parallel, store the fresh stat data of unchanged files and write the index
/// (only if an entry changed or one is racy, as git), extensions intact. The caller prints `needs update` /
/// `needs merge` and exits 1 when there are any, as git does.
pub fn refresh(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    opts: &RefreshOptions,
) -> Result<RefreshOutcome, Error> {
    let lock = IndexLock::acquire(index_path)?;
    let Opened {
        root,
        index,
        read,
        fsmonitor,
    } = open(repo, worktree, index_path)?;
    // git's `tweak_untracked_cache` when the index is read: added with `core.untrackedCache=true`,
    // dropped with `false`, and then written; the fsmonitor's answer invalidates it.
    let cache = crate::index::untracked_cache::Plan::of(
        repo,
        &index.0,
        worktree,
        false,
        false,
        false,
        fsmonitor.as_ref(),
    )
    .map_err(Error::Delegate)?;
    let (refreshed, _) = refresh_index(
        repo,
        &root,
        index,
        opts.threads,
        None::<fn(&gix::index::State)>,
        fsmonitor,
    )?;
    crate::sys::phase::mark("refresh applied");
    let (needs_merge, needs_update) = refreshed.needing();
    let threads = refreshed.threads;
    // git's update-index: written when an entry changed or one is racy (t2108), so that the
    // new index's timestamp makes them clean, or when the fsmonitor extension changed.
    let written = write_if_changed(lock, repo, refreshed, true, read.has_fsmonitor, &cache)?;
    Ok(RefreshOutcome {
        needs_update,
        needs_merge,
        written,
        threads,
    })
}

impl Refreshed {
    /// git's `needs merge` paths (unmerged, once each) and `needs update` ones (changed), in
    /// index order. Unmerged entries are among the skipped ones: only those and the changed
    /// ones are looked at.
    fn needing(&self) -> (Vec<BString>, Vec<BString>) {
        let (mut needs_merge, mut needs_update) = (Vec::<BString>::new(), Vec::new());
        let entries = self.index.entries();
        for (i, seen) in self.seen.iter().enumerate() {
            if *seen == Seen::Clean {
                continue;
            }
            let entry = &entries[i];
            let path = entry.path(&self.index);
            if entry.stage() != Stage::Unconflicted {
                if needs_merge.last().map(|p| p.as_bstr()) != Some(path) {
                    needs_merge.push(path.to_owned());
                }
            } else if *seen == Seen::Changed {
                needs_update.push(path.to_owned());
            }
        }
        (needs_merge, needs_update)
    }
}

/// What a status and a refresh start from: the work tree opened, the index read (and what was
/// learnt of it), the fsmonitor asked.
struct Opened {
    root: Root,
    index: (gix::index::File, Option<crate::index::record::IndexBytes>),
    read: ReadIndex,
    fsmonitor: Option<crate::index::fsmonitor::Monitor>,
}

/// Open the work tree `worktree`, read the index at `index_path` and ask the fsmonitor, as a
/// status and a refresh both start; or say why git must run them ([`Error::Delegate`]).
fn open(repo: &gix::Repository, worktree: &Path, index_path: &Path) -> Result<Opened, Error> {
    let root = Root::open(worktree).map_err(|source| Error::Worktree {
        path: worktree.to_owned(),
        source,
    })?;
    let (index, mut read) = read_index(repo, &root, index_path)?;
    let setting = crate::index::fsmonitor::Setting::of(repo);
    if let Some(why) =
        split_for_git(repo, read.split).or_else(|| fsmonitor_for_git(repo, &setting, &read))
    {
        return Err(Error::Delegate(why));
    }
    let fsmonitor = start_fsmonitor(repo, &root, &setting, &index.0, &mut read);
    Ok(Opened {
        root,
        index,
        read,
        fsmonitor,
    })
}

/// Write the refreshed index into `lock` if it is to be written ([`Refreshed::to_write`]) or
/// the untracked `cache` changed and is to be written; else let the lock go, and the index on
/// a thread of its own. Returns whether it was written. `update_index` and `has_fsmonitor`: see
/// [`write`].
fn write_if_changed(
    lock: IndexLock,
    repo: &gix::Repository,
    refreshed: Refreshed,
    update_index: bool,
    has_fsmonitor: bool,
    cache: &crate::index::untracked_cache::Plan,
) -> Result<bool, Error> {
    if !(refreshed.to_write(has_fsmonitor) || cache.to_write()) {
        drop(lock);
        drop_later(refreshed);
        return Ok(false);
    }
    let untracked = cache.extension(repo.object_hash());
    write(
        lock,
        repo,
        refreshed,
        update_index,
        has_fsmonitor,
        untracked.as_ref().map(Option::as_deref),
    )?;
    crate::sys::phase::mark("index written");
    Ok(true)
}

/// `-u`/`status.showUntrackedFiles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Untracked {
    /// `no`: no walk at all.
    No,
    /// `normal`: a directory holding only untracked files is shown as `dir/`.
    #[default]
    Normal,
    /// `all`: every untracked file.
    All,
}

/// `--ignored`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ignored {
    /// Not shown.
    #[default]
    No,
    /// `traditional`: ignored files, and wholly ignored directories as `dir/`.
    Traditional,
    /// `matching`: the files and directories an ignore pattern matches.
    Matching,
}

/// Options of [`status`].
#[derive(Debug, Clone, Default)]
pub struct StatusOptions {
    /// Threads looking at the work tree; `None`: [`refresh_choice`] decides.
    pub threads: Option<usize>,
    /// Which untracked files to list.
    pub untracked: Untracked,
    /// Which ignored files to list.
    pub ignored: Ignored,
    /// Write the refreshed index if `index.lock` can be taken (git's opportunistic write;
    /// false for `--no-optional-locks`).
    pub write_index: bool,
    /// Rename detection between HEAD and the index (`status.renames`, `diff.renames`; on by
    /// default).
    pub renames: bool,
    /// Pathspecs (as given, relative to the current directory) limiting what is shown.
    pub pathspec: Option<crate::plan::pathspec::Pathspec>,
    /// The raw pathspecs, for the directory walk.
    pub patterns: Vec<BString>,
    /// `--ignore-submodules[=<when>]`: replaces `diff.ignoreSubmodules` and every submodule's
    /// own `ignore` setting (`None`: those decide, as [`IgnoreSubmodules`] says).
    pub ignore_submodules: Option<IgnoreSubmodules>,
}

/// How much of a submodule's state `status` reports: git's `--ignore-submodules=<when>`,
/// `diff.ignoreSubmodules` and `submodule.<name>.ignore` values. Ordered from reporting the most
/// to reporting nothing, so that two settings combine by taking the larger (git's diff flags:
/// ignoring dirty content also skips its untracked files).
///
/// For the work tree, git's `wt_status_collect_changes_worktree` and `match_stat_with_submodule`
/// decide per gitlink: `--ignore-submodules` when given (nothing configured counts); otherwise
/// `submodule.<name>.ignore` from the repository's configuration, else from `.gitmodules`, for a
/// submodule `.gitmodules` names (an unmerged `.gitmodules` ignores those without a setting);
/// otherwise `diff.ignoreSubmodules`; otherwise `none`, or `untracked` with `-uno`. Between HEAD
/// and the index only `--ignore-submodules=all` hides gitlinks (git shows a staged submodule
/// whatever is configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum IgnoreSubmodules {
    /// `none`: new commits, modified and untracked content.
    None,
    /// `untracked`: new commits and modified content, not untracked files.
    Untracked,
    /// `dirty`: new commits only.
    Dirty,
    /// `all`: the submodule is never reported as changed.
    All,
}

impl IgnoreSubmodules {
    /// The value `v` names (git's spellings, case-sensitive), `None` when it names none.
    pub fn parse(v: &[u8]) -> Option<IgnoreSubmodules> {
        Some(match v {
            b"none" => IgnoreSubmodules::None,
            b"untracked" => IgnoreSubmodules::Untracked,
            b"dirty" => IgnoreSubmodules::Dirty,
            b"all" => IgnoreSubmodules::All,
            _ => return None,
        })
    }

    /// `v` as a value of `--ignore-submodules` or of a setting git hands to it, or git's error.
    fn parse_or_die(v: &[u8]) -> Result<IgnoreSubmodules, Error> {
        IgnoreSubmodules::parse(v).ok_or_else(|| {
            Error::Other(format!("bad --ignore-submodules argument: {}", v.as_bstr()))
        })
    }
}

/// The rule [`IgnoreSubmodules`] describes, resolved once per status (or per switch's list of
/// local changes) for the work tree side.
pub(crate) struct SubmoduleRules {
    /// What applies to a submodule without its own setting (or to every one, `overridden`).
    base: IgnoreSubmodules,
    /// `--ignore-submodules` was given: no submodule's own setting counts.
    overridden: bool,
    /// The submodules `.gitmodules` names, with their `ignore` values.
    modules: crate::repo::submodules::Modules,
    /// `.gitmodules` has unmerged entries in the index.
    gitmodules_unmerged: bool,
}

impl SubmoduleRules {
    /// The rules of a diff of `index` against the work tree `root`: `untracked_no` (status's
    /// `-uno`) and `option` (`--ignore-submodules`), as status takes them; a switch's list of
    /// local changes has neither.
    pub(crate) fn new(
        repo: &gix::Repository,
        root: &Root,
        index: &gix::index::State,
        (untracked_no, option): (bool, Option<IgnoreSubmodules>),
    ) -> Result<SubmoduleRules, Error> {
        let configured = repo
            .config_snapshot()
            .string("diff.ignoreSubmodules")
            .map(|v| IgnoreSubmodules::parse_or_die(&v))
            .transpose()?;
        // git's diff setup: `diff.ignoreSubmodules`, else untracked content ignored; -uno
        // ignores it too; without the option or the setting, status looks at everything.
        let mut base = configured.unwrap_or(IgnoreSubmodules::Untracked);
        if untracked_no {
            base = base.max(IgnoreSubmodules::Untracked);
        }
        let overridden = option.is_some();
        if let Some(arg) = option {
            base = arg;
        } else if configured.is_none() && !untracked_no {
            base = IgnoreSubmodules::None;
        }
        let gitmodules_unmerged = index
            .entries()
            .iter()
            .any(|e| e.stage_raw() != 0 && e.path(index) == ".gitmodules");
        Ok(SubmoduleRules {
            base,
            overridden,
            modules: crate::repo::submodules::Modules::load(root),
            gitmodules_unmerged,
        })
    }

    /// What is reported of the submodule at `path` (git's `set_diffopt_flags_from_submodule_config`).
    pub(crate) fn for_path(
        &self,
        repo: &gix::Repository,
        path: &BStr,
    ) -> Result<IgnoreSubmodules, Error> {
        if self.overridden {
            return Ok(self.base);
        }
        let Some(name) = self.modules.name(path) else {
            return Ok(self.base);
        };
        let own = repo
            .config_snapshot()
            .string(format!("submodule.{name}.ignore").as_str())
            .or_else(|| self.modules.ignore(name).map(ToOwned::to_owned));
        match own {
            Some(v) => IgnoreSubmodules::parse_or_die(&v),
            None if self.gitmodules_unmerged => Ok(IgnoreSubmodules::All),
            None => Ok(self.base),
        }
    }
}

/// A submodule's state in the work tree (porcelain v2's `S<c><m><u>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubmoduleState {
    /// Its HEAD is not the commit the index records.
    pub new_commits: bool,
    /// Tracked files in it (or in its submodules) are modified.
    pub modified: bool,
    /// It has untracked files.
    pub untracked: bool,
}

/// One path with a change: staged, unstaged, both, or unmerged. The fields are git's
/// `wt_status_change_data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path (the new one for a rename).
    pub path: BString,
    /// HEAD against the index: `A`, `M`, `D`, `T`, `R`, or none.
    pub index_status: Option<u8>,
    /// The index against the work tree: `M`, `D`, `T`, `A` (intent to add), or none.
    pub worktree_status: Option<u8>,
    /// For a rename: the path in HEAD and the similarity (percent).
    pub rename: Option<(BString, u32)>,
    /// The mode in HEAD, the index and the work tree (0: absent).
    pub modes: [u32; 3],
    /// The object in HEAD and in the index (null: absent).
    pub ids: [ObjectId; 2],
    /// For a gitlink changed in the work tree: what changed.
    pub submodule: Option<SubmoduleState>,
    /// For an unmerged path: which stages exist (bit 0: stage 1, ...), their modes and ids.
    pub unmerged: Option<(u8, [u32; 3], [ObjectId; 3])>,
}

/// What [`status`] found.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// Changed paths, sorted by path.
    pub changes: Vec<Change>,
    /// Untracked files and directories (`dir/`), sorted.
    pub untracked: Vec<BString>,
    /// Ignored files and directories (`dir/`), sorted.
    pub ignored: Vec<BString>,
    /// How long the untracked walk took (git's `untracked_in_ms`, which its advice on a slow
    /// walk reports).
    pub untracked_time: std::time::Duration,
    /// With an untracked cache: what the walk did with it (git's trace2 `read_directory`
    /// statistics, which `GIT_TRACE2_PERF` shows).
    pub read_directory: Option<crate::index::untracked_cache::Counters>,
    /// Warnings git prints during the walk (`untracked cache is disabled on this system or
    /// location`, `could not open directory ...`), without the `warning: `.
    pub warnings: Vec<String>,
    /// HEAD's tree (`None` on an unborn branch).
    pub head_tree: Option<ObjectId>,
    /// Whether the refreshed index was written.
    pub index_written: bool,
    /// How many threads looked at the work tree.
    pub threads: usize,
    /// With `core.sparseCheckout`: how many entries are present in the work tree (not
    /// skip-worktree), and how many there are.
    pub sparse: Option<(usize, usize)>,
}

/// `git status`'s computation. `head_tree` is HEAD's tree, `None` on an unborn branch.
pub fn status(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    head_tree: Option<ObjectId>,
    opts: &StatusOptions,
) -> Result<Status, Error> {
    // As git: the lock is taken (if it can be) before the index is read, so that what is
    // written is the refresh of what was read.
    let lock = opts
        .write_index
        .then(|| IndexLock::acquire(index_path).ok())
        .flatten();
    let Opened {
        root,
        index,
        read,
        fsmonitor,
    } = open(repo, worktree, index_path)?;
    let cache = crate::index::untracked_cache::Plan::of(
        repo,
        &index.0,
        worktree,
        opts.untracked != Untracked::No,
        opts.untracked == Untracked::All,
        opts.ignored == Ignored::No && opts.patterns.is_empty(),
        fsmonitor.as_ref(),
    )
    .map_err(Error::Delegate)?;
    let using_cache = cache.used.is_some();
    let (refreshed, mut walked) = refresh_and_walk(repo, &root, index, opts, cache, fsmonitor)?;
    crate::sys::phase::mark("refresh applied, untracked walk joined");
    let mut out = Status {
        untracked: std::mem::take(&mut walked.untracked),
        ignored: std::mem::take(&mut walked.ignored),
        untracked_time: walked.time,
        read_directory: walked.read_directory,
        warnings: std::mem::take(&mut walked.cache.warnings),
        head_tree,
        threads: refreshed.threads,
        sparse: sparse_counts(repo, &refreshed.index),
        ..Status::default()
    };
    collect_changes(repo, &root, &refreshed, head_tree, opts, &mut out.changes)?;
    crate::sys::phase::mark("changes collected");
    if opts.untracked == Untracked::All && !using_cache {
        files_of_replaced_entries(repo, &root, &refreshed, opts, &mut out)?;
    }
    if let Some(pathspec) = &opts.pathspec {
        limit_to_pathspec(repo, &root, &refreshed.index, pathspec, &mut out)?;
    }
    // git's `repo_update_index_if_able`: written when an entry changed, one is racy, the
    // fsmonitor extension changed, or the untracked cache did (and is to be written).
    match lock {
        Some(lock) => {
            out.index_written = write_if_changed(
                lock,
                repo,
                refreshed,
                false,
                read.has_fsmonitor,
                &walked.cache,
            )?;
        }
        None => drop_later(refreshed),
    }
    Ok(out)
}

/// The untracked and ignored files of a status, with what the walk took and left.
struct Walked {
    untracked: Vec<BString>,
    ignored: Vec<BString>,
    /// How long the walk took.
    time: std::time::Duration,
    /// With an untracked cache: what the walk did with it.
    read_directory: Option<crate::index::untracked_cache::Counters>,
    /// The untracked cache, after the walk if it was used.
    cache: crate::index::untracked_cache::Plan,
}

/// The refresh of `index` with the untracked walk beside it: the walk needs only which paths
/// are tracked. With an untracked cache, it is the cache's walk
/// (`untracked_cache::Plan::walk`); without, a directory the walk collapsed that the index has
/// entries in is shown as git shows it ([`expand_tracked_dirs`]), once the refresh is done.
fn refresh_and_walk(
    repo: &gix::Repository,
    root: &Root,
    index: (gix::index::File, Option<crate::index::record::IndexBytes>),
    opts: &StatusOptions,
    cache: crate::index::untracked_cache::Plan,
    fsmonitor: Option<crate::index::fsmonitor::Monitor>,
) -> Result<(Refreshed, Walked), Error> {
    let sync = repo.clone().into_sync();
    let using_cache = cache.used;
    let (refreshed, beside) = refresh_index(
        repo,
        root,
        index,
        opts.threads,
        Some(|state: &gix::index::State| walk_beside(&sync, root, state, opts, cache)),
        fsmonitor,
    )?;
    let WalkBeside { lists, time, cache } = beside.expect("the walk ran beside the check");
    let (untracked, ignored) = lists?;
    let read_directory = using_cache.and_then(|_| cache.cache.as_ref().map(|c| c.counters));
    let untracked = if using_cache.is_none()
        && opts.untracked == Untracked::Normal
        && opts.ignored == Ignored::No
    {
        expand_tracked_dirs(repo, root, &refreshed.index, untracked)?
    } else {
        untracked
    };
    let walked = Walked {
        untracked,
        ignored,
        time,
        read_directory,
        cache,
    };
    Ok((refreshed, walked))
}

/// What the walk beside the refresh hands back ([`walk_beside`]).
struct WalkBeside {
    /// The untracked and the ignored files.
    lists: Result<(Vec<BString>, Vec<BString>), Error>,
    /// How long the walk took.
    time: std::time::Duration,
    /// The untracked cache, after the walk if it was used.
    cache: crate::index::untracked_cache::Plan,
}

/// The untracked walk of a status on the thread beside the refresh, over `state` (the index as
/// read): the untracked cache's when `cache` is used, else gix-dir's ([`walk`]).
fn walk_beside(
    sync: &gix::ThreadSafeRepository,
    root: &Root,
    state: &gix::index::State,
    opts: &StatusOptions,
    mut cache: crate::index::untracked_cache::Plan,
) -> WalkBeside {
    let repo = sync.to_thread_local();
    let start = std::time::Instant::now();
    let lists = if let Some(flags) = cache.used {
        let index_ts = state.timestamp().unix_seconds();
        cache
            .walk(&repo, root, state, index_ts, flags)
            .map(|untracked| (untracked, Vec::new()))
            .map_err(|e| Error::Other(e.to_string()))
    } else if state.entries().iter().any(|e| e.stage_raw() != 0) {
        walk(&repo, &with_unmerged_as_tracked(state), opts)
    } else {
        walk(&repo, state, opts)
    };
    WalkBeside {
        lists,
        time: start.elapsed(),
        cache,
    }
}

/// With `core.sparseCheckout`: how many entries of `index` are present in the work tree (not
/// skip-worktree), and how many there are.
fn sparse_counts(repo: &gix::Repository, index: &gix::index::State) -> Option<(usize, usize)> {
    repo.config_snapshot()
        .boolean("core.sparseCheckout")
        .unwrap_or(false)
        .then(|| {
            let all = index.entries().len();
            let skipped = index
                .entries()
                .iter()
                .filter(|e| e.flags.contains(Flags::SKIP_WORKTREE))
                .count();
            (all - skipped, all)
        })
}

/// Keep of `out` what `pathspec` selects. A collapsed directory the pathspecs do not name (as
/// a directory: `dir/` names it) is shown as its matching files, as git's walk recurses into
/// it; the ignored files of an untracked directory are not untracked ones. A change is kept
/// when its path or a rename's source is selected.
fn limit_to_pathspec(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::State,
    pathspec: &crate::plan::pathspec::Pathspec,
    out: &mut Status,
) -> Result<(), Error> {
    let matcher = pathspec
        .matcher(repo, index)
        .map_err(|e| Error::Other(e.to_string()))?;
    let mut dirs = root.dirs();
    let mut excludes = None;
    for (list, untracked) in [(&mut out.untracked, true), (&mut out.ignored, false)] {
        let mut kept = Vec::new();
        for path in list.drain(..) {
            match path.strip_suffix(b"/") {
                Some(dir) if !matcher.selects_dir(dir.as_bstr()) => {
                    let mut files = Vec::new();
                    files_below(&mut dirs, dir.as_bstr(), &mut files);
                    files.retain(|f| matcher.selects(f.as_bstr()));
                    if untracked {
                        if excludes.is_none() {
                            excludes = Some(excludes_stack(repo, index)?);
                        }
                        let stack = excludes.as_mut().expect("set above");
                        files.retain(|f| !is_ignored_file(stack, f.as_bstr()));
                    }
                    kept.extend(files);
                }
                // The walk matched the pathspecs itself, except `builtin_objectmode`.
                None if pathspec.has_builtin_attributes() && !matcher.selects(path.as_bstr()) => {}
                _ => kept.push(path),
            }
        }
        kept.sort();
        *list = kept;
    }
    out.changes.retain(|c| {
        matcher.selects(c.path.as_bstr())
            || c.rename
                .as_ref()
                .is_some_and(|(from, _)| matcher.selects(from.as_bstr()))
    });
    Ok(())
}

/// `state` with one stage-0 entry per unmerged path, so that the walk takes them as tracked.
fn with_unmerged_as_tracked(state: &gix::index::State) -> gix::index::State {
    let mut s = state.clone();
    let mut last: Option<BString> = None;
    s.remove_entries(|_, path, e| {
        let dup = e.stage_raw() != 0 && last.as_ref().is_some_and(|l| l == path);
        last = Some(path.to_owned());
        dup
    });
    for e in s.entries_mut() {
        e.flags.remove(Flags::STAGE_MASK);
    }
    s
}

/// The rename detection of git's status: copies too when `status.renames` (else
/// `diff.renames`) says `copies`, and `status.renameLimit` (else `diff.renameLimit`) as the
/// limit. Not gix's `TrackRenames::AsConfigured`: gix 0.90 looks `status.renames` up as
/// `merge.renames`, so `-c diff.renames=false -c status.renames=true` found no rename (t7525.7).
fn rewrites(repo: &gix::Repository) -> gix::diff::Rewrites {
    let config = repo.config_snapshot();
    let mode = config
        .string("status.renames")
        .or_else(|| config.string("diff.renames"));
    let copies =
        mode.is_some_and(|v| v.eq_ignore_ascii_case(b"copies") || v.eq_ignore_ascii_case(b"copy"));
    let default = gix::diff::Rewrites::default();
    let limit = config
        .integer("status.renameLimit")
        .or_else(|| config.integer("diff.renameLimit"))
        .map_or(default.limit, |l| usize::try_from(l).unwrap_or(0));
    gix::diff::Rewrites {
        copies: copies.then(Default::default),
        limit,
        ..default
    }
}

/// The staged, unstaged and unmerged changes, merged per path and sorted.
fn collect_changes(
    repo: &gix::Repository,
    root: &Root,
    refreshed: &Refreshed,
    head_tree: Option<ObjectId>,
    opts: &StatusOptions,
    out: &mut Vec<Change>,
) -> Result<(), Error> {
    let index = &refreshed.index;
    let mut changes = Changes {
        by_path: std::collections::BTreeMap::new(),
        null: repo.object_hash().null(),
    };
    // Unmerged paths first: nothing else is reported for them.
    changes.unmerged(index);
    // HEAD against the index.
    match head_tree {
        Some(tree) => changes.staged(repo, index, tree, opts)?,
        None => changes.unborn(index),
    }
    // The index against the work tree.
    let mut side = WorktreeSide::new(repo, root, index, opts)?;
    side.unstaged(&mut changes, &refreshed.seen)?;
    side.dirty_gitlinks(&mut changes, &refreshed.seen)?;
    if opts.renames {
        worktree_renames(
            repo,
            &mut side.dirs,
            index,
            &rewrites(repo),
            &mut changes.by_path,
        )?;
    }
    side.settle_modes(&mut changes);
    out.extend(changes.by_path.into_values());
    Ok(())
}

impl Change {
    /// A change at `path` with nothing in it yet (`null`: the null object id).
    fn blank(path: &BStr, null: ObjectId) -> Change {
        Change {
            path: path.to_owned(),
            index_status: None,
            worktree_status: None,
            rename: None,
            modes: [0; 3],
            ids: [null; 2],
            submodule: None,
            unmerged: None,
        }
    }
}

/// The changes of a status while [`collect_changes`] gathers them, one per path.
struct Changes {
    by_path: std::collections::BTreeMap<BString, Change>,
    /// The null object id of the repository's hash.
    null: ObjectId,
}

impl Changes {
    /// The unmerged paths of `index`, with the stages each has.
    fn unmerged(&mut self, index: &gix::index::State) {
        let null = self.null;
        for entry in index.entries() {
            let stage = entry.stage_raw();
            if stage == 0 {
                continue;
            }
            let path = entry.path(index);
            let change = self.by_path.entry(path.to_owned()).or_insert_with(|| {
                let mut c = Change::blank(path, null);
                c.unmerged = Some((0, [0; 3], [null; 3]));
                c
            });
            if let Some((mask, modes, ids)) = &mut change.unmerged {
                let k = (stage - 1) as usize;
                *mask |= 1 << k;
                modes[k] = entry.mode.bits();
                ids[k] = entry.id;
            }
        }
    }

    /// HEAD's `tree` against `index`: the staged changes of the paths that are not unmerged.
    fn staged(
        &mut self,
        repo: &gix::Repository,
        index: &gix::index::State,
        tree: ObjectId,
        opts: &StatusOptions,
    ) -> Result<(), Error> {
        let special = index
            .entries()
            .iter()
            .any(|e| e.stage_raw() != 0 || e.flags.contains(Flags::INTENT_TO_ADD));
        // As git's diff-index --cached, trust a valid cache-tree: a root that is HEAD's tree
        // means the index holds exactly HEAD's tree, nothing staged.
        let cached = index
            .tree()
            .is_some_and(|t| t.num_entries.is_some() && t.id == tree);
        if cached && !special {
            return Ok(());
        }
        for c in tree_index_changes(repo, index, tree, special, opts, self.null)? {
            if self
                .by_path
                .get(&c.path)
                .is_some_and(|u| u.unmerged.is_some())
            {
                continue;
            }
            self.by_path.insert(c.path.clone(), c);
        }
        Ok(())
    }

    /// On an unborn branch: every index entry is an addition.
    fn unborn(&mut self, index: &gix::index::State) {
        for entry in index.entries() {
            if entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
                continue;
            }
            let mut c = Change::blank(entry.path(index), self.null);
            c.index_status = Some(b'A');
            c.modes[1] = entry.mode.bits();
            c.ids[1] = entry.id;
            self.by_path.insert(c.path.clone(), c);
        }
    }

    /// The change at `path`, made for `entry` if there is none: unchanged between HEAD and the
    /// index, both sides are the index entry (only the index side with `head_too` false).
    fn at_entry(&mut self, path: &BStr, entry: &gix::index::Entry, head_too: bool) -> &mut Change {
        let null = self.null;
        self.by_path.entry(path.to_owned()).or_insert_with(|| {
            let mut c = Change::blank(path, null);
            if head_too {
                c.modes[0] = entry.mode.bits();
                c.ids[0] = entry.id;
            }
            c.modes[1] = entry.mode.bits();
            c.ids[1] = entry.id;
            c
        })
    }
}

/// HEAD's `tree` against `index` by gix's diff, with renames as `opts` asks and gitlinks hidden
/// with `--ignore-submodules=all`; `special`: the index has unmerged or intent-to-add entries.
fn tree_index_changes(
    repo: &gix::Repository,
    index: &gix::index::State,
    tree: ObjectId,
    special: bool,
    opts: &StatusOptions,
    null: ObjectId,
) -> Result<Vec<Change>, Error> {
    let renames = if opts.renames {
        gix::status::tree_index::TrackRenames::Given(rewrites(repo))
    } else {
        gix::status::tree_index::TrackRenames::Disabled
    };
    // Intent-to-add entries are not in the index for this comparison (git's diff-index
    // --cached skips them). A sparse index was expanded when it was read, but gix keeps
    // calling it sparse, and its diff refuses a sparse index: the entries are copied into a
    // state of their own.
    let state: std::borrow::Cow<'_, gix::index::State> = if special || index.is_sparse() {
        let mut state = gix::index::State::new(repo.object_hash());
        for e in index
            .entries()
            .iter()
            .filter(|e| !e.flags.contains(Flags::INTENT_TO_ADD) && e.stage_raw() == 0)
        {
            state.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, e.path(index));
        }
        std::borrow::Cow::Owned(state)
    } else {
        std::borrow::Cow::Borrowed(index)
    };
    let mut found: Vec<Change> = Vec::new();
    let hide_gitlinks = opts.ignore_submodules == Some(IgnoreSubmodules::All);
    // All paths, wherever the current directory is (gix's default is its prefix).
    let empty = gix::index::State::new(repo.object_hash());
    let mut everything = repo
        .pathspec(
            false,
            None::<&str>,
            false,
            &empty,
            gix::worktree::stack::state::attributes::Source::IdMapping,
        )
        .map_err(|e| Error::Other(e.to_string()))?;
    repo.tree_index_status(
        &tree,
        &state,
        Some(&mut everything),
        renames,
        |change, _, _| {
            let c = staged_change(repo, change, null);
            // `--ignore-submodules=all`: a gitlink added, removed or moved to another commit
            // is not shown (a type change is).
            let gitlink = |m: u32| m == 0 || m == Mode::COMMIT.bits();
            let hidden =
                hide_gitlinks && c.rename.is_none() && gitlink(c.modes[0]) && gitlink(c.modes[1]);
            if !hidden {
                found.push(c);
            }
            Ok(std::ops::ControlFlow::Continue(()))
        },
    )
    .map_err(|e| Error::Other(e.to_string()))?;
    Ok(found)
}

/// The [`Change`] a change of gix's tree/index diff is (`null`: the null object id).
fn staged_change(
    repo: &gix::Repository,
    change: gix::diff::index::ChangeRef<'_, '_>,
    null: ObjectId,
) -> Change {
    use gix::diff::index::ChangeRef;
    let mut c;
    match change {
        ChangeRef::Addition {
            location,
            entry_mode,
            id,
            ..
        } => {
            c = Change::blank(location.as_ref(), null);
            c.index_status = Some(b'A');
            c.modes[1] = entry_mode.bits();
            c.ids[1] = id.into_owned();
        }
        ChangeRef::Deletion {
            location,
            entry_mode,
            id,
            ..
        } => {
            c = Change::blank(location.as_ref(), null);
            c.index_status = Some(b'D');
            c.modes[0] = entry_mode.bits();
            c.ids[0] = id.into_owned();
        }
        ChangeRef::Modification {
            location,
            previous_entry_mode,
            previous_id,
            entry_mode,
            id,
            ..
        } => {
            c = Change::blank(location.as_ref(), null);
            let typechange = previous_entry_mode.bits() & 0o170000 != entry_mode.bits() & 0o170000;
            c.index_status = Some(if typechange { b'T' } else { b'M' });
            c.modes = [previous_entry_mode.bits(), entry_mode.bits(), 0];
            c.ids = [previous_id.into_owned(), id.into_owned()];
        }
        ChangeRef::Rewrite {
            source_location,
            source_entry_mode,
            source_id,
            location,
            entry_mode,
            id,
            copy,
            ..
        } => {
            c = Change::blank(location.as_ref(), null);
            c.index_status = Some(if copy { b'C' } else { b'R' });
            let score = if source_id.as_ref() == id.as_ref() {
                100
            } else {
                similarity(repo, &source_id, &id)
            };
            c.rename = Some((source_location.into_owned(), score));
            c.modes = [source_entry_mode.bits(), entry_mode.bits(), 0];
            c.ids = [source_id.into_owned(), id.into_owned()];
        }
    }
    c
}

/// The index against the work tree: what its phases share.
struct WorktreeSide<'r> {
    repo: &'r gix::Repository,
    root: &'r Root,
    index: &'r gix::index::State,
    dirs: crate::fs::Dirs<'r>,
    rules: SubmoduleRules,
    /// `core.fileMode`.
    file_mode: bool,
}

/// How the work tree file of an entry found changed differs from it.
struct Unstaged {
    /// `M`, `D`, `T` or `A` (intent to add).
    status: u8,
    /// The work tree mode (0: gone).
    mode: u32,
    submodule: Option<SubmoduleState>,
    /// An intent-to-add entry whose file is there.
    intent_to_add: bool,
}

impl<'r> WorktreeSide<'r> {
    /// The work tree side of a status of `index` under `opts`.
    fn new(
        repo: &'r gix::Repository,
        root: &'r Root,
        index: &'r gix::index::State,
        opts: &StatusOptions,
    ) -> Result<Self, Error> {
        let file_mode = repo
            .config_snapshot()
            .boolean("core.fileMode")
            .unwrap_or(true);
        let dirs = root.dirs();
        let rules = SubmoduleRules::new(
            repo,
            root,
            index,
            (opts.untracked == Untracked::No, opts.ignore_submodules),
        )?;
        Ok(WorktreeSide {
            repo,
            root,
            index,
            dirs,
            rules,
            file_mode,
        })
    }

    /// The entries the refresh found changed (`seen`), but gitlinks whose submodule is ignored.
    fn unstaged(&mut self, changes: &mut Changes, seen: &[Seen]) -> Result<(), Error> {
        let index = self.index;
        for (i, entry) in index.entries().iter().enumerate() {
            if seen[i] != Seen::Changed {
                continue;
            }
            let path = entry.path(index);
            let rule = if entry.mode == Mode::COMMIT {
                self.rules.for_path(self.repo, path)?
            } else {
                IgnoreSubmodules::None
            };
            if rule == IgnoreSubmodules::All {
                // Neither new commits nor a removal: git's diff-files skips the gitlink.
                continue;
            }
            let found = self.unstaged_of(entry, path, rule)?;
            let null = changes.null;
            let change = changes.at_entry(path, entry, !found.intent_to_add);
            if change.unmerged.is_some() {
                continue;
            }
            if found.intent_to_add {
                change.modes[1] = 0;
                change.ids[1] = null;
            }
            change.worktree_status = Some(found.status);
            change.modes[2] = found.mode;
            change.submodule = found.submodule;
        }
        Ok(())
    }

    /// How the work tree file of `entry` (at `path`, found changed) differs from it, `rule`
    /// saying what is reported of a submodule.
    fn unstaged_of(
        &mut self,
        entry: &gix::index::Entry,
        path: &BStr,
        rule: IgnoreSubmodules,
    ) -> Result<Unstaged, Error> {
        let mode = worktree_mode(&mut self.dirs, path, entry.mode, self.file_mode);
        // An intent-to-add entry whose file is gone is a deletion to git's diff-files
        // (`check_removed` comes before the intent-to-add case), shown as any other.
        let intent_to_add = entry.flags.contains(Flags::INTENT_TO_ADD) && mode != 0;
        let (status, submodule) = if intent_to_add {
            (b'A', None)
        } else if mode == 0 {
            (b'D', None)
        } else if entry.mode == Mode::COMMIT && mode == Mode::COMMIT.bits() {
            let sub = SubmoduleState {
                new_commits: true,
                ..submodule_content_as(self.root, path, rule)?
            };
            (b'M', Some(sub))
        } else if mode & 0o170000 != entry.mode.bits() & 0o170000 {
            (b'T', None)
        } else {
            (b'M', None)
        };
        Ok(Unstaged {
            status,
            mode,
            submodule,
            intent_to_add,
        })
    }

    /// Clean gitlinks (same commit, `seen` clean) may still have modified or untracked
    /// content.
    fn dirty_gitlinks(&self, changes: &mut Changes, seen: &[Seen]) -> Result<(), Error> {
        let index = self.index;
        for (i, entry) in index.entries().iter().enumerate() {
            if seen[i] != Seen::Clean || entry.mode != Mode::COMMIT {
                continue;
            }
            let path = entry.path(index);
            let sub = submodule_content_as(self.root, path, self.rules.for_path(self.repo, path)?)?;
            if !(sub.modified || sub.untracked) {
                continue;
            }
            let change = changes.at_entry(path, entry, true);
            change.worktree_status = Some(b'M');
            change.modes[2] = Mode::COMMIT.bits();
            change.submodule = Some(sub);
        }
        Ok(())
    }

    /// The work tree modes of the changes that no work tree change gave one: an unmerged
    /// path's is what is on disk, and a change only in the index keeps the index's mode.
    fn settle_modes(&mut self, changes: &mut Changes) {
        for c in changes.by_path.values_mut() {
            if let Some((_, modes, _)) = c.unmerged {
                let ours = modes[1..]
                    .iter()
                    .copied()
                    .find(|&m| m != 0)
                    .unwrap_or(modes[0]);
                let mode = Mode::from_bits(ours).unwrap_or(Mode::FILE);
                c.modes[2] = worktree_mode(&mut self.dirs, c.path.as_bstr(), mode, self.file_mode);
            }
        }
        for c in changes.by_path.values_mut() {
            if c.worktree_status.is_none() && c.unmerged.is_none() {
                c.modes[2] = c.modes[1];
            }
        }
    }
}

/// Renames between the index and the work tree, as git's status finds them in its diff-files
/// (`wt_status_collect_changes_worktree` with the rename detection of the staged side): a
/// deleted file is the source, an intent-to-add file (shown as new there) the destination. The
/// destination's content is what git would store for it (to-git filters); exact renames first,
/// preferring a source of the same base name, then by similarity (git's 50% default, best pairs
/// first) while sources × destinations stay within the rename limit. The destination becomes
/// ` R` with the source's index mode and id on the HEAD and index sides (git's `mode_index` is
/// the source's, and a path unchanged in the index shows it for HEAD too); the source no longer
/// shows a deletion. Copies are not looked for on this side.
fn worktree_renames(
    repo: &gix::Repository,
    dirs: &mut crate::fs::Dirs<'_>,
    index: &gix::index::State,
    rewrites: &gix::diff::Rewrites,
    changes: &mut std::collections::BTreeMap<BString, Change>,
) -> Result<(), Error> {
    let Some(mut renames) = Renames::candidates(changes) else {
        return Ok(());
    };
    renames.read_dests(repo, dirs, index, changes)?;
    renames.exact(repo);
    renames.inexact(repo, rewrites.limit);
    renames.apply(changes);
    Ok(())
}

/// The work tree renames of a status ([`worktree_renames`]) while they are looked for.
struct Renames {
    /// The deleted files: path, index mode and id.
    sources: Vec<(BString, u32, ObjectId)>,
    /// The intent-to-add files that are there.
    dests: Vec<BString>,
    /// What git would store for each destination, with its work tree mode (`None`: it could
    /// not be read).
    contents: Vec<Option<(u32, Vec<u8>)>>,
    /// The sources paired already.
    used: Vec<bool>,
    /// The pairs found: source, destination, similarity.
    pairs: Vec<(usize, usize, u32)>,
}

impl Renames {
    /// The sources and destinations among `changes`, `None` when there are no sources or no
    /// destinations.
    fn candidates(changes: &std::collections::BTreeMap<BString, Change>) -> Option<Renames> {
        let sources: Vec<(BString, u32, ObjectId)> = changes
            .values()
            .filter(|c| c.unmerged.is_none() && c.worktree_status == Some(b'D'))
            .map(|c| (c.path.clone(), c.modes[1], c.ids[1]))
            .collect();
        let dests: Vec<BString> = changes
            .values()
            .filter(|c| c.unmerged.is_none() && c.rename.is_none())
            .filter(|c| c.worktree_status == Some(b'A') && c.modes[2] != 0)
            .map(|c| c.path.clone())
            .collect();
        if sources.is_empty() || dests.is_empty() {
            return None;
        }
        Some(Renames {
            used: vec![false; sources.len()],
            sources,
            contents: Vec::with_capacity(dests.len()),
            dests,
            pairs: Vec::new(),
        })
    }

    /// Read what git would store for each destination: a symlink's target, a file through the
    /// to-git filters.
    fn read_dests(
        &mut self,
        repo: &gix::Repository,
        dirs: &mut crate::fs::Dirs<'_>,
        index: &gix::index::State,
        changes: &std::collections::BTreeMap<BString, Change>,
    ) -> Result<(), Error> {
        let drivers =
            crate::convert::filter::drivers(repo).map_err(|e| Error::Other(e.to_string()))?;
        let mut filter: Option<crate::convert::filter::ToGit<'_>> = None;
        for path in &self.dests {
            let mode = changes[path].modes[2];
            let mut buf = Vec::new();
            let read = if mode == Mode::SYMLINK.bits() {
                dirs.read_link(path.as_bstr()).map(|t| buf = t).is_ok()
            } else {
                let filter = match &mut filter {
                    Some(f) => f,
                    None => filter.insert(
                        crate::convert::filter::ToGit::for_work_tree(repo, index, &drivers)
                            .map_err(|e| Error::Other(e.to_string()))?,
                    ),
                };
                crate::inspect::refresh::to_git(dirs, path.as_bstr(), index, filter, &mut buf, None)
                    .is_ok()
            };
            self.contents.push(read.then_some((mode, buf)));
        }
        Ok(())
    }

    /// The exact renames: a source whose blob is a destination's content, preferring one of
    /// the same base name.
    fn exact(&mut self, repo: &gix::Repository) {
        let base = |p: &BStr| p.rsplit_str("/").next().unwrap_or_default().to_owned();
        for (d, content) in self.contents.iter().enumerate() {
            let Some((mode, data)) = content else {
                continue;
            };
            let Ok(id) = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, data)
            else {
                continue;
            };
            let name = base(self.dests[d].as_bstr());
            let used = &self.used;
            let candidates =
                self.sources.iter().enumerate().filter(|&(s, (_, m, i))| {
                    !used[s] && *i == id && is_link(*m) == is_link(*mode)
                });
            let best = candidates
                .max_by_key(|&(s, (p, _, _))| (base(p.as_bstr()) == name, std::cmp::Reverse(s)))
                .map(|(s, _)| s);
            if let Some(s) = best {
                self.used[s] = true;
                self.pairs.push((s, d, 100));
            }
        }
    }

    /// The inexact renames among what is left, by similarity (50% at least, best pairs first)
    /// while sources × destinations stay within `limit` (0: none).
    fn inexact(&mut self, repo: &gix::Repository, limit: usize) {
        let open_sources: Vec<usize> = (0..self.sources.len()).filter(|&s| !self.used[s]).collect();
        let paired: std::collections::HashSet<usize> =
            self.pairs.iter().map(|&(_, d, _)| d).collect();
        let open_dests: Vec<usize> = (0..self.dests.len())
            .filter(|d| !paired.contains(d) && self.contents[*d].is_some())
            .collect();
        let within = limit == 0 || open_sources.len() * open_dests.len() <= limit * limit;
        if !within || open_sources.is_empty() || open_dests.is_empty() {
            return;
        }
        let mut scored: Vec<(u32, usize, usize)> = Vec::new();
        for &s in &open_sources {
            let Ok(object) = repo.find_object(self.sources[s].2) else {
                continue;
            };
            for &d in &open_dests {
                let (mode, data) = self.contents[d].as_ref().expect("kept above");
                if is_link(*mode) != is_link(self.sources[s].1) {
                    continue;
                }
                let score = similarity_of(&object.data, data);
                if score >= 50 {
                    scored.push((score, s, d));
                }
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)).then(a.1.cmp(&b.1)));
        let mut taken = vec![false; self.dests.len()];
        for (score, s, d) in scored {
            if self.used[s] || taken[d] {
                continue;
            }
            self.used[s] = true;
            taken[d] = true;
            self.pairs.push((s, d, score));
        }
    }

    /// Make each pair's destination a rename of its source, which no longer shows a deletion.
    fn apply(self, changes: &mut std::collections::BTreeMap<BString, Change>) {
        for (s, d, score) in self.pairs {
            let (from, mode, id) = &self.sources[s];
            if let Some(c) = changes.get_mut(&self.dests[d]) {
                c.worktree_status = Some(b'R');
                c.rename = Some((from.clone(), score));
                c.modes[0] = *mode;
                c.modes[1] = *mode;
                c.ids = [*id, *id];
            }
            let gone = changes.get_mut(from).is_some_and(|c| {
                c.worktree_status = None;
                c.index_status.is_none()
            });
            if gone {
                changes.remove(from);
            }
        }
    }
}

/// Whether `mode` is a symlink's: a rename pairs symlinks with symlinks only.
fn is_link(mode: u32) -> bool {
    mode == Mode::SYMLINK.bits()
}

/// The mode git's diff-files gives the work tree file at `path` (0 when it is gone), from
/// `lstat` as `ce_mode_from_stat` decides.
fn worktree_mode(
    dirs: &mut crate::fs::Dirs<'_>,
    path: &BStr,
    index_mode: Mode,
    file_mode: bool,
) -> u32 {
    use crate::fs::FileType;
    let Ok(Some(st)) = dirs.lstat(path) else {
        return 0;
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => Mode::SYMLINK.bits(),
        FileType::Directory if index_mode == Mode::COMMIT => Mode::COMMIT.bits(),
        FileType::RegularFile => {
            if index_mode == Mode::SYMLINK || index_mode == Mode::COMMIT {
                Mode::FILE.bits()
            } else if !file_mode {
                index_mode.bits()
            } else if st.st_mode & 0o100 != 0 {
                Mode::FILE_EXECUTABLE.bits()
            } else {
                Mode::FILE.bits()
            }
        }
        _ => 0,
    }
}

/// [`submodule_content`] as far as `rule` asks: nothing for `dirty` and `all`, no untracked
/// files for `untracked`.
pub(crate) fn submodule_content_as(
    root: &Root,
    path: &BStr,
    rule: IgnoreSubmodules,
) -> Result<SubmoduleState, Error> {
    match rule {
        IgnoreSubmodules::None => submodule_content(root, path, true),
        IgnoreSubmodules::Untracked => submodule_content(root, path, false),
        IgnoreSubmodules::Dirty | IgnoreSubmodules::All => Ok(SubmoduleState::default()),
    }
}

/// Modified and untracked content of the submodule at `path`, as git's
/// `is_submodule_modified` learns it: `git status --porcelain=2` inside it. As git, a `.git`
/// directory that is no repository ("'<path>/.git' not recognized as a git repository") and a
/// status that fails there ("'git status --porcelain=2' failed in submodule <path>") are
/// errors (git dies), unless what was read already says everything (modified, and untracked
/// when asked: git then stops reading and ignores the exit code). A submodule without `.git`
/// is not checked out, so not modified.
fn submodule_content(root: &Root, path: &BStr, untracked: bool) -> Result<SubmoduleState, Error> {
    let dir = root.path().join(path.to_path_lossy());
    let mut state = SubmoduleState::default();
    let mut dirs = root.dirs();
    let dot_git = BString::from(format!("{path}/.git"));
    let Ok(Some(kind)) = dirs.file_type(dot_git.as_bstr()) else {
        return Ok(state);
    };
    if kind == crate::fs::FileType::Directory
        && !crate::repo::git_dir::is_git_directory(&mut dirs, dot_git.as_bstr())
    {
        return Err(Error::Other(format!(
            "'{path}/.git' not recognized as a git repository"
        )));
    }
    let output = crate::sys::git::git_command()
        .args(["status", "--porcelain=2"])
        .args((!untracked).then_some("-uno"))
        .current_dir(&dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|_| {
            Error::Other(format!(
                "Could not run 'git status --porcelain=2' in submodule {path}"
            ))
        })?;
    // git's stderr passes through, as its child's does.
    {
        use std::io::Write as _;
        let _ = std::io::stderr().write_all(&output.stderr);
    }
    for line in output.stdout.lines() {
        match line.first() {
            Some(&kind @ (b'1' | b'2' | b'u')) => {
                // A nested submodule with untracked files; anything else in the line (or a
                // rename, or a conflict) is modified content.
                if line.get(5) == Some(&b'S') && line.get(8) == Some(&b'U') {
                    state.untracked = true;
                }
                if kind != b'1' || line.get(5..9) != Some(b"S..U".as_slice()) {
                    state.modified = true;
                }
            }
            Some(b'?') => state.untracked = true,
            _ => {}
        }
    }
    let told_all = state.modified && (state.untracked || !untracked);
    if !output.status.success() && !told_all {
        return Err(Error::Other(format!(
            "'git status --porcelain=2' failed in submodule {path}"
        )));
    }
    Ok(state)
}

/// The similarity score (percent) of an inexact rename. git's `estimate_similarity` counts
/// the bytes the two blobs share in chunks; this approximates it by common lines.
fn similarity(repo: &gix::Repository, from: &gix::hash::oid, to: &gix::hash::oid) -> u32 {
    let (Ok(a), Ok(b)) = (repo.find_object(from), repo.find_object(to)) else {
        return 0;
    };
    similarity_of(&a.data, &b.data)
}

/// [`similarity`] of two contents.
fn similarity_of(a: &[u8], b: &[u8]) -> u32 {
    let max = a.len().max(b.len());
    if max == 0 {
        return 100;
    }
    let mut counts: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
    for line in a.lines_with_terminator() {
        *counts.entry(line).or_default() += 1;
    }
    let mut common = 0usize;
    for line in b.lines_with_terminator() {
        if let Some(n) = counts.get_mut(line) {
            if *n > 0 {
                *n -= 1;
                common += line.len();
            }
        }
    }
    u32::try_from(common * 100 / max).unwrap_or(100)
}

/// The untracked and ignored files, by gix-dir's walk.
fn walk(
    repo: &gix::Repository,
    index: &gix::index::State,
    opts: &StatusOptions,
) -> Result<(Vec<BString>, Vec<BString>), Error> {
    // git collects ignored files only along with untracked ones (`wt_status_collect_untracked`).
    if opts.untracked == Untracked::No {
        return Ok((Vec::new(), Vec::new()));
    }
    let (mut untracked, mut ignored) = dirwalk(repo, index, opts)?;
    // git's `index_name_is_other`: a directory at a path the index has (a tracked file that a
    // directory replaced) is not listed, whatever the walk found in it.
    let other = |path: &BString| {
        let name = path.strip_suffix(b"/").unwrap_or(path);
        index.entry_index_by_path(name.as_bstr()).is_err()
    };
    untracked.retain(other);
    ignored.retain(other);
    let root = repo.workdir().and_then(|w| Root::open(w).ok());
    let mut dirs = root.as_ref().map(Root::dirs);
    if let (false, Some(dirs)) = (opts.patterns.is_empty(), dirs.as_mut()) {
        stop_at_repositories(dirs, untracked.iter_mut().chain(ignored.iter_mut()));
    }
    // `--ignored -uall`: every file of an ignored directory, as git's walk without
    // DIR_SHOW_OTHER_DIRECTORIES lists them.
    if let (Ignored::Traditional, Untracked::All, Some(dirs)) =
        (opts.ignored, opts.untracked, dirs.as_mut())
    {
        let mut files = Vec::new();
        for path in ignored.drain(..) {
            match path.strip_suffix(b"/") {
                // A nested repository stays one (see `files_below`).
                Some(dir) if !is_repository(dirs, dir.as_bstr()) => {
                    files_below(dirs, dir.as_bstr(), &mut files);
                }
                _ => files.push(path),
            }
        }
        ignored = files;
    }
    untracked.sort();
    untracked.dedup();
    ignored.sort();
    ignored.dedup();
    Ok((untracked, ignored))
}

/// gix-dir's walk over the work tree of `repo` as `opts` asks: the untracked and the ignored
/// paths it emits, directories as `dir/`, unsorted.
fn dirwalk(
    repo: &gix::Repository,
    index: &gix::index::State,
    opts: &StatusOptions,
) -> Result<(Vec<BString>, Vec<BString>), Error> {
    use gix::dir::walk::EmissionMode;
    let mode = match opts.untracked {
        Untracked::All => EmissionMode::Matching,
        _ => EmissionMode::CollapseDirectory,
    };
    let options = repo
        .dirwalk_options()
        .map_err(|e| Error::Other(e.to_string()))?
        .emit_untracked(mode)
        .emit_ignored(match (opts.ignored, opts.untracked) {
            (Ignored::No, _) => None,
            (Ignored::Traditional, Untracked::All) => Some(EmissionMode::Matching),
            (Ignored::Traditional, _) => Some(EmissionMode::CollapseDirectory),
            (Ignored::Matching, _) => Some(EmissionMode::Matching),
        })
        .emit_collapsed(
            (opts.ignored != Ignored::No)
                .then_some(gix::dir::walk::CollapsedEntriesEmissionMode::OnStatusMismatch),
        )
        .empty_patterns_match_prefix(false);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    // `attr:builtin_objectmode` is ours to match: the walk takes every path then.
    let builtin = opts
        .pathspec
        .as_ref()
        .is_some_and(crate::plan::pathspec::Pathspec::has_builtin_attributes);
    let patterns: &[BString] = if builtin { &[] } else { &opts.patterns };
    repo.dirwalk(index, patterns, &interrupt, options, &mut collect)
        .map_err(|e| Error::Other(e.to_string()))?;
    let mut untracked = Vec::new();
    let mut ignored = Vec::new();
    for (entry, _) in collect.unorded_entries {
        let mut path = entry.rela_path;
        if matches!(
            entry.disk_kind,
            Some(gix::dir::entry::Kind::Directory | gix::dir::entry::Kind::Repository)
        ) {
            path.push(b'/');
        }
        match entry.status {
            gix::dir::entry::Status::Untracked if opts.untracked != Untracked::No => {
                untracked.push(path);
            }
            gix::dir::entry::Status::Ignored(_) => ignored.push(path),
            _ => {}
        }
    }
    Ok((untracked, ignored))
}

/// With pathspecs, gix-dir starts its walk at their common directory, inside a nested
/// repository if that is where they point; git's walk (`treat_leading_path`) stops at the
/// repository and shows it as `dir/`: each of `paths` inside one becomes that.
fn stop_at_repositories<'p>(
    dirs: &mut crate::fs::Dirs<'_>,
    paths: impl Iterator<Item = &'p mut BString>,
) {
    let mut repositories = std::collections::BTreeMap::new();
    for path in paths {
        let inner = path.len().saturating_sub(1);
        let nested = path[..inner].find_iter("/").find(|&slash| {
            *repositories
                .entry(path[..slash].to_owned())
                .or_insert_with(|| is_repository(dirs, path[..slash].as_bstr()))
        });
        if let Some(slash) = nested {
            path.truncate(slash + 1);
        }
    }
}

/// `-uall`: the files inside directories that took the place of tracked files (`f` tracked,
/// `f/x` on disk). gix-dir's walk takes such a directory for the tracked entry and does not
/// enter it; git's walk lists what it holds, ignored files as ignored.
fn files_of_replaced_entries(
    repo: &gix::Repository,
    root: &Root,
    refreshed: &Refreshed,
    opts: &StatusOptions,
    out: &mut Status,
) -> Result<(), Error> {
    let index = &refreshed.index;
    let mut dirs = root.dirs();
    let mut found = Vec::new();
    for (i, entry) in index.entries().iter().enumerate() {
        if refreshed.seen[i] != Seen::Changed || entry.mode == Mode::COMMIT {
            continue;
        }
        let path = entry.path(index);
        if matches!(
            dirs.file_type(path),
            Ok(Some(crate::fs::FileType::Directory))
        ) {
            files_below(&mut dirs, path, &mut found);
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let mut excludes = excludes_stack(repo, index)?;
    for file in found {
        let ignored = is_ignored_file(&mut excludes, file.as_bstr());
        if !ignored {
            out.untracked.push(file);
        } else if opts.ignored != Ignored::No {
            out.ignored.push(file);
        }
    }
    out.untracked.sort();
    out.ignored.sort();
    Ok(())
}

/// The ignore rules of the work tree (`.gitignore` files from the work tree, else from the
/// index; `info/exclude`; `core.excludesFile`), for the files the walk did not classify itself.
fn excludes_stack<'r>(
    repo: &'r gix::Repository,
    index: &gix::index::State,
) -> Result<gix::AttributeStack<'r>, Error> {
    repo.excludes(
        index,
        None,
        gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
    )
    .map_err(|e| Error::Other(e.to_string()))
}

/// The untracked paths of `list` with every collapsed directory that the index has entries
/// in shown as git shows it. gix-dir collapses a directory whose index entries are all
/// skip-worktree (outside a sparse checkout's patterns: none of them is on disk) into `dir/`;
/// git recurses into every directory the index has (`directory_exists_in_index`), so its
/// untracked files are listed one by one and only its subdirectories the index lacks are
/// collapsed (t1091.51: `? deep/deeper2/untracked`, not `? deep/`).
fn expand_tracked_dirs(
    repo: &gix::Repository,
    root: &Root,
    index: &gix::index::State,
    list: Vec<BString>,
) -> Result<Vec<BString>, Error> {
    let tracked_dir = |dir: &BStr| index.prefixed_entries_range(dir).is_some();
    if !list
        .iter()
        .any(|p| p.ends_with(b"/") && tracked_dir(p.as_bstr()))
    {
        return Ok(list);
    }
    let mut excludes = excludes_stack(repo, index)?;
    let mut dirs = root.dirs();
    let mut out = Vec::new();
    for path in list {
        match path.strip_suffix(b"/") {
            Some(dir) if tracked_dir(path.as_bstr()) => {
                expand_dir(&mut dirs, index, &mut excludes, dir.as_bstr(), &mut out);
            }
            _ => out.push(path),
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The untracked content of `dir`, a directory the index has entries in, as git's walk shows
/// it (see [`expand_tracked_dirs`]).
fn expand_dir(
    dirs: &mut crate::fs::Dirs<'_>,
    index: &gix::index::State,
    excludes: &mut gix::AttributeStack<'_>,
    dir: &BStr,
    out: &mut Vec<BString>,
) {
    let Ok(entries) = dirs.read_dir(dir) else {
        return;
    };
    for (name, is_dir) in entries {
        let path = child(dir, &name);
        if !is_dir {
            if index.entry_by_path(path.as_bstr()).is_none()
                && !is_ignored_file(excludes, path.as_bstr())
            {
                out.push(path);
            }
            continue;
        }
        let mut below = path.clone();
        below.push(b'/');
        if !is_repository(dirs, path.as_bstr())
            && index.prefixed_entries_range(below.as_bstr()).is_some()
        {
            expand_dir(dirs, index, excludes, path.as_bstr(), out);
            continue;
        }
        let ignored = excludes
            .at_entry(path.as_bstr(), Some(Mode::DIR))
            .is_ok_and(|p| p.is_excluded());
        if ignored {
            continue;
        }
        let mut files = Vec::new();
        files_below(dirs, path.as_bstr(), &mut files);
        if files
            .iter()
            .any(|f| f.ends_with(b"/") || !is_ignored_file(excludes, f.as_bstr()))
        {
            out.push(below);
        }
    }
}

/// Whether the file `path` is ignored by `excludes`.
fn is_ignored_file(excludes: &mut gix::AttributeStack<'_>, path: &BStr) -> bool {
    excludes
        .at_entry(path, Some(Mode::FILE))
        .is_ok_and(|p| p.is_excluded())
}

/// The path of `name` in the directory `dir` (repository-relative).
fn child(dir: &BStr, name: &[u8]) -> BString {
    let mut path = BString::from(dir);
    path.push(b'/');
    path.extend_from_slice(name);
    path
}

/// Every file below the directory `dir` (repository-relative), depth first; a nested
/// repository (a directory with a `.git`) is listed as itself, `dir/sub/`, as git's walk never
/// enters one.
fn files_below(dirs: &mut crate::fs::Dirs<'_>, dir: &BStr, out: &mut Vec<BString>) {
    let Ok(entries) = dirs.read_dir(dir) else {
        return;
    };
    for (name, is_dir) in entries {
        let mut path = child(dir, &name);
        if is_dir {
            if is_repository(dirs, path.as_bstr()) {
                path.push(b'/');
                out.push(path);
            } else {
                files_below(dirs, path.as_bstr(), out);
            }
        } else {
            out.push(path);
        }
    }
}

/// Whether the directory `dir` holds a `.git` (file or directory): a nested repository, which
/// git's walk shows as `dir/` and never enters.
fn is_repository(dirs: &mut crate::fs::Dirs<'_>, dir: &BStr) -> bool {
    let mut dot_git = BString::from(dir);
    dot_git.extend_from_slice(b"/.git");
    matches!(dirs.lstat(dot_git.as_bstr()), Ok(Some(_)))
}
