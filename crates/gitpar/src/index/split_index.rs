//! git's split index (`core.splitIndex`): the index file holds only what changed since a shared
//! index (`$GIT_DIR/sharedindex.<checksum>`, every entry, no extension), named by its `link`
//! extension with two bitmaps: the shared entries deleted, and those replaced by the entries at
//! the head of this file (their names stripped). A repository with a large index keeps it split
//! so that a command writes a few entries, not all of them.
//!
//! git-par writes an index split where git would (git's `tweak_split_index` and
//! `write_locked_index`): `core.splitIndex=true`, or an index already split while the setting is
//! unset, or `GIT_TEST_SPLIT_INDEX`. It reuses the shared index the previous index named while
//! few entries differ from it (`splitIndex.maxPercentChange`, 20% by default), and otherwise
//! writes a new one, as git does; shared indexes no index uses any more are removed once older
//! than `splitIndex.sharedIndexExpire` (two weeks by default), as git removes them. The entry
//! matching is by path and stage: an entry with the shared one's object id and mode is kept
//! (replaced if its stat data or flags changed), one with another id is a new entry and the
//! shared one deleted, as git's `unpack_trees` makes a new cache entry for a changed path.
//!
//! Where git-par leaves the split to git's next write and writes the index whole: version 4
//! indexes (path compression over stripped names), `index.skipHash` (the shared index is named
//! by its checksum), a sparse index, `core.sharedRepository` (file modes), an index file other
//! than `$GIT_DIR/index` (`GIT_INDEX_FILE`), and a `splitIndex.sharedIndexExpire` other than
//! `never`, `now` or the default (git's approxidate).

use std::path::{Path, PathBuf};

use bstr::ByteSlice;
use gix::index::entry::Flags;
use gix::index::State;
use gix::ObjectId;

use crate::sys::env::git_env_bool;

/// The default of `splitIndex.maxPercentChange` (git's `SPLIT_INDEX_MAX_PERCENT_CHANGE_DEFAULT`).
const MAX_PERCENT_CHANGE: i64 = 20;

/// The default of `splitIndex.sharedIndexExpire`: "2.weeks.ago".
const EXPIRE_DEFAULT: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);

/// An index to be written split: where its shared indexes are, and the shared index the
/// previous index named (`None`: none, or it could not be read: a new one is written).
pub(crate) struct Split {
    git_dir: PathBuf,
    base: Option<(ObjectId, State)>,
    /// `splitIndex.maxPercentChange`, valid (0 to 100) or the default.
    max_percent: i64,
    /// Shared indexes older than this (by mtime) are removed when a new one is written; `None`
    /// keeps them all.
    expire: Option<std::time::Duration>,
    /// `GIT_TEST_SPLIT_INDEX`: git's tests split every index, a new shared index now and then.
    testing: bool,
}

/// Why an index is to be written split, if it is (git's `tweak_split_index` and
/// `write_locked_index`): `GIT_TEST_SPLIT_INDEX` (whatever the configuration), else
/// `core.splitIndex=true`, else `core.splitIndex` unset and the index being replaced split
/// (`split`, asked only then).
pub(crate) fn reason(repo: &gix::Repository, split: impl FnOnce() -> bool) -> Option<&'static str> {
    if git_env_bool("GIT_TEST_SPLIT_INDEX") {
        return Some("GIT_TEST_SPLIT_INDEX is set");
    }
    match repo.config_snapshot().boolean("core.splitIndex") {
        Some(true) => Some("core.splitIndex is set"),
        None if split() => Some("the index is split (core.splitIndex)"),
        _ => None,
    }
}

/// Whether the index at `index_path` of `repo` may be written split, without reading the
/// index ([`reason`], a shared index file in the git directory standing for "the index is
/// split"). The full checkouts that encode their index beside the writers
/// (`record::prepare`) leave the index to `record::commit` then.
pub(crate) fn wanted(repo: &gix::Repository, index_path: &Path) -> bool {
    let git_dir = repo.git_dir();
    index_path == git_dir.join("index") && reason(repo, || has_shared_indexes(git_dir)).is_some()
}

/// Returns true if and only if `git_dir` holds a `sharedindex.*` file.
fn has_shared_indexes(git_dir: &Path) -> bool {
    std::fs::read_dir(git_dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .as_encoded_bytes()
                .starts_with(b"sharedindex.")
        })
    })
}

/// The shared index the index file at `index_path` names, if it is split.
fn link_of(index_path: &Path, hash: gix::hash::Kind) -> Option<ObjectId> {
    let bytes = std::fs::read(index_path).ok()?;
    let (main, _) = State::from_bytes(
        &bytes,
        filetime::FileTime::zero(),
        hash,
        gix::index::decode::Options::default(),
    )
    .ok()?;
    main.link().map(|link| link.shared_index_checksum)
}

/// For an index written only for a moment before the final one (an update's announcement of
/// the paths it is about to create, `record::commit_transient`): the `link` payload
/// that keeps naming the shared index the index being replaced names, every shared entry
/// deleted (the transient index lists all its entries itself), so that the final index can
/// reuse that shared index as git's would. `None` when the index is not split or is not to be.
pub(crate) fn transient_link(repo: &gix::Repository, index_path: &Path) -> Option<Vec<u8>> {
    if !wanted(repo, index_path) {
        return None;
    }
    let id = link_of(index_path, repo.object_hash())?;
    let shared = repo.git_dir().join(format!("sharedindex.{id}"));
    // The shared index's entry count, from its header ("DIRC", version, count).
    let mut header = [0u8; 12];
    std::io::Read::read_exact(&mut std::fs::File::open(shared).ok()?, &mut header).ok()?;
    let count = u32::from_be_bytes(header[8..12].try_into().ok()?) as usize;
    let all: Vec<usize> = (0..count).collect();
    link_payload(&id, &all, &[], count).ok()
}

/// How the index at `index_path` is to be written in `format`: `None` whole, else split (see
/// the module's documentation for when).
pub(crate) fn plan(
    repo: &gix::Repository,
    index_path: &Path,
    state: &State,
    format: crate::index::format::Format,
) -> Option<Split> {
    if !wanted(repo, index_path) {
        return None;
    }
    let config = repo.config_snapshot();
    let shared_repository = config
        .string("core.sharedRepository")
        .is_some_and(|v| !matches!(v.to_str_lossy().as_ref(), "" | "umask" | "false" | "0"));
    if format.version4
        || format.skip_hash
        || shared_repository
        || state
            .entries()
            .iter()
            .any(|e| e.mode == gix::index::entry::Mode::DIR)
    {
        return None;
    }
    let expire = match config.string("splitIndex.sharedIndexExpire") {
        None => Some(EXPIRE_DEFAULT),
        Some(v) if v.as_bytes() == b"never" => None,
        Some(v) if v.as_bytes() == b"now" => Some(std::time::Duration::ZERO),
        Some(v) if v.as_bytes() == b"2.weeks.ago" => Some(EXPIRE_DEFAULT),
        Some(_) => return None,
    };
    let max_percent = config
        .integer("splitIndex.maxPercentChange")
        .filter(|v| (0..=100).contains(v))
        .unwrap_or(MAX_PERCENT_CHANGE);
    let testing = git_env_bool("GIT_TEST_SPLIT_INDEX");
    let hash = repo.object_hash();
    // The shared index the index being replaced names, if it is split.
    let base = link_of(index_path, hash).and_then(|id| {
        let path = repo.git_dir().join(format!("sharedindex.{id}"));
        let options = gix::index::decode::Options {
            expected_checksum: Some(id),
            ..Default::default()
        };
        let shared = gix::index::File::at(path, hash, false, options).ok()?;
        Some((id, State::from(shared)))
    });
    if base.is_none() && config.boolean("core.splitIndex").is_none() && !testing {
        // Unset, and the index being replaced is not split: git writes it whole.
        return None;
    }
    Some(Split {
        git_dir: repo.git_dir().to_owned(),
        base,
        max_percent,
        expire,
        testing,
    })
}

/// What the index file of a split write holds: its entries (the shared ones replaced, names
/// stripped, in the shared index's order, then the new ones in index order) and the payload
/// of its `link` extension.
pub(crate) struct Written {
    pub state: State,
    pub link: Vec<u8>,
}

/// Whether two entries at the same path and stage are the same to the shared index (git's
/// `compare_ce_content`: stat data, mode, id and the flags written to disk).
fn same_entry(a: &gix::index::Entry, b: &gix::index::Entry) -> bool {
    let on_disk =
        Flags::STAGE_MASK | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE;
    a.stat == b.stat
        && a.mode == b.mode
        && a.id == b.id
        && (a.flags & on_disk) == (b.flags & on_disk)
}

impl Split {
    /// Write `state` split: a new shared index when there is none to reuse or too many entries
    /// differ from it (then written now, into the git directory), else the difference from the
    /// one the previous index named (whose file is freshened, as git does). Returns the index
    /// file's entries and `link` payload.
    pub(crate) fn write(
        self,
        state: &State,
        format: crate::index::format::Format,
    ) -> std::io::Result<Written> {
        let hash = state.object_hash();
        if let Some((id, base)) = &self.base {
            let (deleted, replaced, new) = difference(base, state);
            let not_shared = new.len() as i64;
            let total = state.entries().len() as i64;
            let renew = match self.max_percent {
                0 => true,
                100 => false,
                max => total * max < not_shared * 100,
            } || (self.testing && (id.as_bytes()[0] & 15) < 6);
            if !renew {
                let mut written = State::new(hash);
                for &(_, j) in &replaced {
                    push(&mut written, &state.entries()[j], b"");
                }
                for &j in &new {
                    let e = &state.entries()[j];
                    push(&mut written, e, e.path(state));
                }
                let replaced: Vec<usize> = replaced.iter().map(|&(i, _)| i).collect();
                let link = link_payload(id, &deleted, &replaced, base.entries().len())?;
                let path = self.git_dir.join(format!("sharedindex.{id}"));
                let _ = filetime::set_file_mtime(&path, filetime::FileTime::now());
                return Ok(Written {
                    state: written,
                    link,
                });
            }
        }
        // A new shared index: every entry, no extension; named by its checksum.
        let mut shared = State::new(hash);
        for e in state.entries() {
            push(&mut shared, e, e.path(state));
        }
        let mut bytes = Vec::new();
        let shared_format = crate::index::format::Format {
            eoie: false,
            ..format
        };
        crate::index::encode::encode_plain(shared, shared_format, &mut bytes)?;
        let id = ObjectId::from_bytes_or_panic(&bytes[bytes.len() - hash.len_in_bytes()..]);
        let mut temp = tempfile_in(&self.git_dir)?;
        std::io::Write::write_all(&mut temp.1, &bytes)?;
        temp.1.sync_data().ok();
        let target = self.git_dir.join(format!("sharedindex.{id}"));
        std::fs::rename(&temp.0, &target).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp.0);
        })?;
        self.clean(&target);
        Ok(Written {
            state: State::new(hash),
            link: link_payload(&id, &[], &[], 0)?,
        })
    }

    /// Remove the shared indexes other than `keep` older than `splitIndex.sharedIndexExpire`
    /// (git's `clean_shared_index_files`).
    fn clean(&self, keep: &Path) {
        let Some(expire) = self.expire else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(&self.git_dir) else {
            return;
        };
        let now = std::time::SystemTime::now();
        for entry in entries.flatten() {
            let path = entry.path();
            if path == keep
                || !entry
                    .file_name()
                    .as_encoded_bytes()
                    .starts_with(b"sharedindex.")
            {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).unwrap_or_default() >= expire);
            if old {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Between the shared index `base` and the new index `state`: the shared entries deleted, the
/// shared entries replaced (same path, stage, id and mode, other stat data or flags; with the
/// replacing entry's position in `state`), and the new entries (positions in `state`): by
/// path and stage, both being sorted.
#[allow(clippy::type_complexity)]
fn difference(base: &State, state: &State) -> (Vec<usize>, Vec<(usize, usize)>, Vec<usize>) {
    use std::cmp::Ordering;
    let (b, n) = (base.entries(), state.entries());
    let (mut deleted, mut replaced, mut new) = (Vec::new(), Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < b.len() || j < n.len() {
        let order = match (b.get(i), n.get(j)) {
            (Some(x), Some(y)) => x
                .path(base)
                .cmp(y.path(state))
                .then(x.stage().cmp(&y.stage())),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                deleted.push(i);
                i += 1;
            }
            Ordering::Greater => {
                if !n[j].flags.contains(Flags::REMOVE) {
                    new.push(j);
                }
                j += 1;
            }
            Ordering::Equal => {
                let (x, y) = (&b[i], &n[j]);
                if x.id != y.id || x.mode != y.mode || y.flags.contains(Flags::REMOVE) {
                    deleted.push(i);
                    if !y.flags.contains(Flags::REMOVE) {
                        new.push(j);
                    }
                } else if !same_entry(x, y) {
                    replaced.push((i, j));
                }
                i += 1;
                j += 1;
            }
        }
    }
    (deleted, replaced, new)
}

/// Push a copy of `e` named `path` onto `state`.
fn push(state: &mut State, e: &gix::index::Entry, path: &[u8]) {
    state.dangerously_push_entry(e.stat, e.id, e.flags, e.mode, path.as_bstr());
}

/// The `link` extension's payload: the shared index's id, then the deleted and the replaced
/// entries' bitmaps (EWAH) over the shared index's `count` entries.
fn link_payload(
    id: &ObjectId,
    deleted: &[usize],
    replaced: &[usize],
    count: usize,
) -> std::io::Result<Vec<u8>> {
    let mut out = id.as_bytes().to_vec();
    for set in [deleted, replaced] {
        let mut bits = vec![false; count];
        for &i in set {
            bits[i] = true;
        }
        // git serialises an empty bitmap too (a bitmap of no bits).
        let bitmap = gix_bitmap::ewah::Vec::from_bits(&bits)
            .ok_or_else(|| std::io::Error::other("the split index's bitmap is too large"))?;
        bitmap.write_to(&mut out)?;
    }
    Ok(out)
}

/// A new file `sharedindex_XXXXXX` in `dir`, created exclusively (git's `mks_tempfile_sm`).
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let pid = std::process::id();
    for n in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!("sharedindex_{:06x}", (pid ^ nanos ^ n) & 0xff_ffff));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "cannot create a temporary shared index",
    ))
}
