//! **record**: write the index the way git's `write_locked_index` would after `unpack_trees`, so
//! that what git-par leaves behind is what git would have left behind, extensions included.
//!
//! [`commit`] writes the index for every command: it takes the new entries (a
//! [`gix::index::State`]), the tree they were checked out from and the index being replaced, and
//! writes into the held `index.lock`:
//!
//! - **the entries** in the format git would choose (see [`Format`]): `index.version` (2, 3 or
//!   4), `feature.manyFiles` (implies 4), `GIT_INDEX_VERSION`, for a *new* index only; an index
//!   that replaces an existing one keeps that one's version, exactly as git keeps it
//!   (`unpack_trees` copies `src_index->version`). Versions 2 and 3 are chosen from the entries
//!   (3 only when an entry has extended flags: skip-worktree, intent-to-add), as git demotes 3 to
//!   2 when 2 suffices. Version 4 (path prefix compression) is not written by gix-index 0.58, so
//!   the entries section is encoded here: each entry's fixed part comes from gix's own
//!   [`gix::index::Entry::write_to`] and only its path is replaced by git's
//!   `varint(bytes to drop from the previous path) + suffix + NUL`, without padding. Nothing here
//!   parses an index: the tests read every variant back with gix and with git.
//! - **`TREE`, the cache-tree**, rebuilt from the entries as git's
//!   `cache_tree_update(WRITE_TREE_SILENT | WRITE_TREE_REPAIR)` at the end of `unpack_trees` does:
//!   every directory's tree object is computed from its entries; a directory is *valid* (entry
//!   count and tree id) when its tree exists in the object database, *invalid* (git's `-1`) when
//!   it does not, when a subdirectory is invalid, or when it holds an unmerged or intent-to-add
//!   entry. When the computed root equals [`Keep::tree`] every directory is a subtree of a tree we
//!   checked out, so no existence lookup is made at all (the common case: clone, worktree add,
//!   a clean switch). Children are written in git's order (shorter names first, then bytes).
//!   gix's `State` has no setter for an absent cache-tree, so instead of smuggling one into the
//!   state (e.g. by decoding a hand-made index), the extensions are written here, after the
//!   entries, with gix's public encoder [`gix::index::extension::Tree::write_to`]. A sparsity
//!   update ([`CacheTree::Kept`]) writes the previous cache-tree as it was, invalid nodes
//!   included, as git's `update_sparsity` (which changes only skip-worktree bits) leaves it; so
//!   does a refresh whose index is written anew ([`commit_refreshed`]'s fallback).
//! - **the other extensions**, as git's `unpack_trees` (`move_index_extensions`) decides:
//!   - `UNTR` (untracked cache): git moves it over and invalidates the directories it touched.
//!     So do we for a branch switch or reset ([`Keep::changed_paths`]: the directory of each
//!     changed path, and every one above it when git's status flags cascade; none for a sparsity
//!     update, as git's `update_sparsity` invalidates nothing), re-encoding it as
//!     git's `write_untracked_extension` does; other writers carry it *emptied* (its header:
//!     identity, exclude-file stats, flags, no directories), which git refills at its next
//!     `git status`.
//!   - `FSMN` (fsmonitor): git carries the token over, and the entries that come through
//!     untouched keep their validity. So do we where the caller read it ([`Keep::fsmonitor`]:
//!     switches, resets, path restores); elsewhere (a new index, a split or sparse one) it is
//!     dropped, and with `core.fsmonitor` set git re-adds it at its next command
//!     (`tweak_fsmonitor` → `add_fsmonitor`, one full scan).
//!   - `REUC` (resolve-undo): not carried by `unpack_trees`; dropped, as git drops it. Path
//!     restores carry it ([`Keep::resolve_undo`]), as git's `checkout -- paths` does.
//!   - `link` (split index): written split where git would write it split
//!     ([`crate::index::split_index`]: `core.splitIndex`, the shared index reused while few entries
//!     changed, a new one otherwise), whole where that module says git-par leaves the split to
//!     git's next write; `link` is then the first extension, as git writes it.
//!   - `sdir` (sparse index) is written when the state has sparse-directory entries (never: the
//!     engine expands a sparse index when it reads one, `sparse::expand`); `EOIE` as git writes it (`index.recordEndOfIndexEntries`, or `index.threads` ≠ 1);
//!     `IEOT` (the offset table) is not written: git reads an index without it.
//! - **`index.skipHash`** (also implied by `feature.manyFiles`): a null trailing checksum, as git.

use std::collections::HashSet;
use std::io::Write;

use bstr::{BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage};
use gix::index::extension::Tree;
use gix::index::State;
use gix::ObjectId;

use crate::fs::lock::{Error, IndexLock};
use crate::index::encode::{encode_entries, encode_to, null_ids, Extensions, Sink};
use crate::index::format::{entry_size, Format, SKIP_HASH_ON_READ, STAT};

/// Where the entries whose bytes may change lie in the index file (what a refresh measured, `refresh::check_with`'s `size`).
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// The positions of the entries refreshed or smudged, ascending, each
    /// with its offset from the first entry.
    pub offsets: Vec<(usize, usize)>,
    /// Where the last entry ends, from the first entry.
    pub end: usize,
}

/// The tree of each directory of a checkout of a whole tree, from its walk
/// (`plan::Plan::trees`): the trees git would write for the index of its leaves.
#[derive(Debug, Clone, Copy)]
pub struct Walked<'a> {
    /// The tree checked out: the root directory's.
    pub root: ObjectId,
    /// Every directory, sorted by path bytes (no trailing slash).
    pub dirs: &'a [BString],
    /// The tree of each of `dirs`.
    pub trees: &'a [ObjectId],
}

/// What the written index keeps besides its entries.
#[derive(Debug, Default, Clone, Copy)]
pub struct Keep<'a> {
    /// The tree the entries were checked out from (the target commit's tree). Only a shortcut
    /// for the cache-tree: when the entries match it exactly, no object lookups are needed.
    pub tree: Option<ObjectId>,
    /// The index being replaced, if there was one: its version is kept and its extensions are
    /// carried over as git carries them. `None` for a new index (clone, worktree add, a missing
    /// index), which then takes its version from the configuration.
    pub previous: Option<&'a State>,
    /// How the cache-tree is made from `previous`'s: rebuilt, repaired, or kept as it is.
    pub cache_tree: CacheTree<'a>,
    /// The resolve-undo extension (`REUC`) to write, its payload: path restores carry it (and
    /// add to it) as git's `checkout -- paths` does; branch switches and resets drop it, as
    /// git's `unpack_trees` does. `None` or empty: no extension.
    pub resolve_undo: Option<&'a [u8]>,
    /// The paths whose entries the update added, removed or changed: the previous index's
    /// untracked cache (`UNTR`) is carried with the directories holding them invalidated, as
    /// git's `unpack_trees` does (`invalidate_ce_path`). `None`: carried emptied.
    pub changed_paths: Option<&'a [BString]>,
    /// The previous index's fsmonitor extension, carried as git carries it (with `previous`;
    /// not into a split index).
    pub fsmonitor: Option<&'a crate::index::fsmonitor::Previous>,
}

/// How [`commit`] makes the cache-tree of the index it writes.
#[derive(Debug, Default, Clone, Copy)]
pub enum CacheTree<'a> {
    /// Built from the entries alone (a new index, or one whose entries all changed).
    #[default]
    Rebuild,
    /// The directories (repository-relative, `""` for the root) below which entries differ
    /// from [`Keep::previous`], every ancestor included. Where a directory is not in it, the
    /// previous index's node is reused instead of hashing the directory again, as git's
    /// `unpack_trees` keeps the old cache-tree and repairs only what it invalidated.
    Repair(&'a HashSet<BString>),
    /// The previous index's cache-tree exactly as it is, valid and invalid nodes alike: git's
    /// `update_sparsity` changes only skip-worktree bits, and its refresh only stat data, which
    /// no tree records, and both leave it alone.
    Kept,
    /// The trees of a full checkout's directories, known from its walk: taken as they are
    /// where they describe the index ([`cache_tree_walked`]), else [`CacheTree::Rebuild`].
    Walked(Walked<'a>),
    /// git's `reset --hard` (`prime_cache_tree`): the cache-tree of [`Keep::tree`] itself, its
    /// own ids also where a tree is not what git writes (a `100664` mode, an empty subtree).
    /// Made as [`CacheTree::Repair`] with these directories (as [`CacheTree::Rebuild`] with
    /// none); where its root is not that tree (only then do the two differ), from the tree's
    /// objects ([`primed`]).
    Primed(Option<&'a HashSet<BString>>),
}

/// The directories containing `paths`, every ancestor and the root (`""`) included: the
/// [`CacheTree::Repair`] of an update that changed exactly those paths.
pub fn changed_dirs<'p>(paths: impl IntoIterator<Item = &'p bstr::BStr>) -> HashSet<BString> {
    let mut out = HashSet::new();
    out.insert(BString::default());
    out.extend(crate::fs::leading_dirs_of(paths).map(ToOwned::to_owned));
    out
}

/// Write `state` into the held `lock` as git would write it, with the cache-tree built from the
/// entries and the extensions of `keep.previous` that git carries over, then rename the lock
/// over the index. The lock is released (removed) on error.
pub fn commit(
    lock: IndexLock,
    repo: &gix::Repository,
    state: State,
    keep: Keep<'_>,
) -> Result<(), Error> {
    let format = Format::of(repo, keep.previous);
    let previous_tree = keep.previous.and_then(State::tree);
    let tree = cache_tree_as(repo, &state, keep.tree, previous_tree, keep.cache_tree);
    // Split where git would split it (`crate::index::split_index`): the shared index first, then this
    // file with what differs from it.
    let split = crate::index::split_index::plan(repo, lock.index_path(), &state, format);
    let fsmonitor = keep
        .fsmonitor
        .zip(keep.previous)
        .filter(|_| split.is_none())
        .map(|(carried, previous)| carried.carried(previous, &state));
    lock.commit_with(|out| {
        let (state, link) = match split {
            Some(split) => {
                null_ids(&state)?;
                let written = split.write(&state, format)?;
                (written.state, Some(written.link))
            }
            None => (state, None),
        };
        encode_to(
            state,
            format,
            tree.as_ref(),
            Extensions {
                previous: keep.previous,
                resolve_undo: keep.resolve_undo,
                changed_paths: keep.changed_paths,
                link: link.as_deref(),
                fsmonitor: fsmonitor.as_deref(),
            },
            out,
            None,
        )
    })
}

/// A new index encoded while its files are still being written: everything but its entries'
/// stat data (and the checksum over them), with where each entry starts.
///
/// A full checkout's index is made of the plan, not of what the writers find: its entries,
/// flags, version and cache-tree are known before the first file is written, only the stat
/// data is not. Encoding it then (on a thread of its own, while the directories are made and
/// the packs scanned) leaves the patching of the stat data, the checksum and the write for
/// after the writers: on tldr's 38,491 files that end went from 13 ms to about 4.
pub(crate) struct Prepared {
    /// The file without its checksum; the entries' stat data zero.
    body: Vec<u8>,
    /// Where each entry (index order) starts in `body`.
    offsets: Vec<usize>,
    hash: gix::hash::Kind,
    checksum: bool,
    /// Why the index cannot be written (an entry without an object id, see [`encode_to`]):
    /// [`commit_prepared`] fails with it, as [`commit`] would.
    refused: Option<String>,
}

/// The cache-tree of the index `state` (whose tree is `tree`, if known) made as `how` says, from
/// the `previous` index's where `how` keeps or repairs it: [`commit`]'s and [`prepare`]'s.
fn cache_tree_as(
    repo: &gix::Repository,
    state: &State,
    tree: Option<ObjectId>,
    previous: Option<&Tree>,
    how: CacheTree<'_>,
) -> Option<Tree> {
    let exists = |id: &ObjectId| repo.has_object(id);
    match how {
        CacheTree::Kept => previous.cloned(),
        CacheTree::Repair(changed) => {
            cache_tree(state, tree, previous.map(|t| (t, changed)), exists)
        }
        CacheTree::Rebuild => cache_tree(state, tree, None, exists),
        CacheTree::Walked(walked) => {
            cache_tree_walked(state, &walked).or_else(|| cache_tree(state, tree, None, exists))
        }
        CacheTree::Primed(changed) => {
            let repaired = cache_tree(state, tree, previous.zip(changed), exists);
            match tree {
                Some(root)
                    if repaired
                        .as_ref()
                        .is_none_or(|t| t.num_entries.is_none() || t.id != root) =>
                {
                    primed(&repo.objects, root, state.entries().len()).or(repaired)
                }
                _ => repaired,
            }
        }
    }
}

/// Encode the new index `state` (stat data to come, see [`Prepared`]) in `format` with the
/// cache-tree of `tree` made as `how` says, as [`commit`] would write it with no extension to
/// keep from a previous index.
pub(crate) fn prepare(
    repo: &gix::Repository,
    state: State,
    tree: Option<ObjectId>,
    how: CacheTree<'_>,
    format: Format,
) -> Prepared {
    let hash = state.object_hash();
    let cache = cache_tree_as(repo, &state, tree, None, how);
    let mut body = Vec::new();
    let mut offsets = Vec::with_capacity(state.entries().len());
    let unhashed = Format {
        skip_hash: true,
        ..format
    };
    let refused = encode_to(
        state,
        unhashed,
        cache.as_ref(),
        Extensions::default(),
        &mut body,
        Some(&mut offsets),
    )
    .err()
    .map(|e| e.to_string());
    if refused.is_some() {
        body.resize(12 + hash.len_in_bytes(), 0);
        offsets.clear();
    }
    body.truncate(body.len() - hash.len_in_bytes());
    for offset in &mut offsets {
        // The entries follow the 12-byte header.
        *offset += 12;
    }
    Prepared {
        body,
        offsets,
        hash,
        checksum: !format.skip_hash,
        refused,
    }
}

/// Write `prepared` into the held `lock` with the stat data of its entries, `stats` (index
/// order; `None` leaves an entry's zero, as for an entry not written), and rename the lock
/// over the index.
///
/// This is the sequential end of a checkout, after the last file: the stat data are patched in
/// and the bytes written a chunk at a time on this thread while another hashes the chunks
/// already patched, so that the checksum (2-3 ms for a 4 MB index) runs beside the patching
/// and the write instead of after them.
pub(crate) fn commit_prepared(
    lock: IndexLock,
    prepared: Prepared,
    stats: impl IntoIterator<Item = Option<gix::index::entry::Stat>>,
) -> Result<(), Error> {
    let Prepared {
        mut body,
        offsets,
        hash,
        checksum,
        refused,
    } = prepared;
    lock.commit_with(|out| {
        if let Some(why) = refused {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
        }
        std::thread::scope(|scope| {
            let mut digest = Digest::start(scope, hash, checksum, body.len());
            // `rest` is the part of the body not handed on yet, starting at byte `done`.
            let (mut rest, mut done): (&mut [u8], usize) = (&mut body, 0);
            let mut words = Vec::with_capacity(36);
            for (&at, stat) in offsets.iter().zip(stats) {
                if at - done >= WRITE_CHUNK {
                    // Every entry before this one is patched: hand their bytes on.
                    let (part, tail) = std::mem::take(&mut rest).split_at_mut(at - done);
                    out.write_all(part)?;
                    digest.update(part);
                    (rest, done) = (tail, at);
                }
                let Some(s) = stat else {
                    continue;
                };
                let Some(slot) = rest.get_mut(at - done..at - done + STAT) else {
                    continue;
                };
                // The untracked cache's nine words are the entry's stat data without its mode:
                // ctime, mtime, dev, ino; then (after the mode, already there) uid, gid, size.
                words.clear();
                crate::index::untracked_cache::push_stat_data(&mut words, &s);
                slot[..24].copy_from_slice(&words[..24]);
                slot[28..].copy_from_slice(&words[24..]);
            }
            out.write_all(rest)?;
            digest.update(rest);
            out.write_all(digest.finish().as_bytes())
        })
    })
}

/// The checksum of an index file being written, fed its bytes in order: on a thread of its own
/// for a body of [`HASH_APART`] bytes or more (the pieces handed over as they are written), in
/// line below that, not at all with `index.skipHash` (the null id).
enum Digest<'scope, 'b> {
    Skipped(gix::hash::Kind),
    Here(crate::index::checksum::Checksum, gix::hash::Kind),
    Apart(
        std::sync::mpsc::Sender<&'b [u8]>,
        std::thread::ScopedJoinHandle<'scope, ObjectId>,
    ),
}

impl<'scope, 'b: 'scope> Digest<'scope, 'b> {
    fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        hash: gix::hash::Kind,
        checksum: bool,
        len: usize,
    ) -> Self
    where
        'b: 'env,
    {
        if !checksum {
            return Digest::Skipped(hash);
        }
        if len < HASH_APART {
            return Digest::Here(crate::index::checksum::Checksum::new(hash), hash);
        }
        let (pieces, received) = std::sync::mpsc::channel::<&'b [u8]>();
        let thread = scope.spawn(move || {
            let mut hasher = crate::index::checksum::Checksum::new(hash);
            for piece in received {
                hasher.update(piece);
            }
            hasher.finalize(hash)
        });
        Digest::Apart(pieces, thread)
    }

    fn update(&mut self, piece: &'b [u8]) {
        match self {
            Digest::Skipped(_) => {}
            Digest::Here(hasher, _) => hasher.update(piece),
            // A send fails only if the thread has gone; `finish` resumes its panic.
            Digest::Apart(pieces, _) => {
                let _ = pieces.send(piece);
            }
        }
    }

    fn finish(self) -> ObjectId {
        match self {
            Digest::Skipped(hash) => hash.null(),
            Digest::Here(hasher, hash) => hasher.finalize(hash),
            Digest::Apart(pieces, thread) => {
                drop(pieces);
                thread
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            }
        }
    }
}

/// An index file as [`read_for_refresh`] read it: the decoded file and its bytes, which
/// [`commit_refreshed`] writes back with only the changed entries' stat data patched.
pub(crate) struct ReadIndex {
    /// The decoded index.
    pub file: gix::index::File,
    /// The bytes it was decoded from; `None` for a split index (its entries are in two files)
    /// or an index that was not there.
    pub bytes: Option<IndexBytes>,
    /// Whether the file is a split index (its `link` extension names a shared index).
    pub split: bool,
}

/// The bytes of an index file as read for a refresh: a read-only mapping of the file, as git
/// maps its index (`xmmap` in read-cache.c). Reading a 200,000-entry index (20 MB) into a fresh
/// buffer cost about 10 ms before any work could start (the copy, and zeroing the pages it was
/// copied into); mapped, nothing is copied until the write, which patches the changed entries
/// into its own buffer on the way out (a copy-on-write mapping patched in place faulted in a
/// fresh page for nearly every changed entry). git replaces an index by renaming a new file over
/// it, so the file mapped is never changed while it is mapped. On Windows a mapped file cannot be
/// replaced, so there the bytes are read into memory ([`crate::fs::ReplaceableBytes`]).
pub(crate) type IndexBytes = crate::fs::ReplaceableBytes;

/// Why an index could not be read for a refresh; the message is gix's or the system's (git
/// says `index file corrupt` around it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// The file could not be opened, mapped or read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The bytes are not an index gix can decode, or a split index's shared index could not
    /// be read.
    #[error(transparent)]
    Decode(Box<dyn std::error::Error + Send + Sync>),
}

/// Read the index file at `path` once, for a refresh: decoded as gix decodes it (git does not
/// verify the checksum when it reads, only fsck does), with its bytes kept, so that writing the
/// refreshed index costs no second read and no re-encoding of the entries that did not change.
/// A missing index is an empty one, as for git.
pub(crate) fn read_for_refresh(
    path: &std::path::Path,
    hash: gix::hash::Kind,
) -> Result<ReadIndex, ReadError> {
    use std::io::Read;
    let empty = || ReadIndex {
        file: gix::index::File::from_state(State::new(hash), path),
        bytes: None,
        split: false,
    };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(empty()),
        Err(err) => return Err(ReadError::Io(err)),
    };
    let meta = file.metadata()?;
    if meta.len() == 0 {
        // Nothing to map (a zero-length mapping is an error): gix names what is wrong.
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        State::from_bytes(&bytes, filetime::FileTime::zero(), hash, Default::default())
            .map_err(|e| ReadError::Decode(e.into()))?;
        return Ok(empty());
    }
    let bytes = crate::fs::replaceable_bytes(&file)?;
    let mtime = filetime::FileTime::from_last_modification_time(&meta);
    let options = gix::index::decode::Options::default();
    // The checksum read is not kept: a refreshed index is written with a new one.
    let (state, _checksum) =
        State::from_bytes(&bytes, mtime, hash, options).map_err(|e| ReadError::Decode(e.into()))?;
    if state.link().is_some() {
        // A split index: gix resolves the shared index when it opens the file itself.
        let file = gix::index::File::at(path, hash, SKIP_HASH_ON_READ, options)
            .map_err(|e| ReadError::Decode(e.into()))?;
        return Ok(ReadIndex {
            file,
            bytes: None,
            split: true,
        });
    }
    Ok(ReadIndex {
        file: gix::index::File::from_state(state, path),
        bytes: Some(bytes),
        split: false,
    })
}

/// The cache-tree of the tree `root` as git's `prime_cache_tree` makes it: each directory's own
/// tree and the number of leaves below it (a subtree counts its leaves, an empty one none), its
/// children in git's order; `None` if a tree cannot be read, or if the leaves are not the
/// index's `entries` many (then it does not describe the index).
fn primed(objects: &impl gix::objs::Find, root: ObjectId, entries: usize) -> Option<Tree> {
    fn node(
        objects: &impl gix::objs::Find,
        name: &[u8],
        id: ObjectId,
        buf: &mut Vec<u8>,
    ) -> Option<Tree> {
        let mut count = 0u32;
        let mut subtrees = Vec::new();
        if !id.is_empty_tree() {
            let data = objects.try_find(&id, buf).ok()??;
            if data.kind != gix::objs::Kind::Tree {
                return None;
            }
            for entry in gix::objs::TreeRefIter::from_bytes(data.data, id.kind()) {
                let entry = entry.ok()?;
                if entry.mode.is_tree() {
                    subtrees.push((entry.filename.to_owned(), entry.oid.to_owned()));
                } else {
                    count = count.checked_add(1)?;
                }
            }
        }
        let mut children = Vec::with_capacity(subtrees.len());
        for (name, sub) in subtrees {
            let child = node(objects, &name, sub, buf)?;
            count = count.checked_add(child.num_entries?)?;
            children.push(child);
        }
        Some(Tree {
            name: name.into(),
            id,
            num_entries: Some(count),
            children: subtree_order(children),
        })
    }
    let tree = node(objects, b"", root, &mut Vec::new())?;
    (usize::try_from(tree.num_entries?).ok()? == entries).then_some(tree)
}

/// Whether each valid node of `tree` counts the entries `state` has in its directory and below,
/// as a cache-tree written with an index must (git trusts the counts: a sparse index made from
/// a cache-tree whose `dir` counts one entry for two replaces one of them and keeps the other).
fn counts_match(state: &State, tree: &Tree) -> bool {
    fn node(state: &State, tree: &Tree, prefix: &mut Vec<u8>) -> bool {
        if let Some(count) = tree.num_entries {
            let entries = state.entries();
            let below = if prefix.is_empty() {
                entries.len()
            } else {
                let first =
                    entries.partition_point(|e| <&[u8]>::from(e.path(state)) < prefix.as_slice());
                entries[first..]
                    .iter()
                    .take_while(|e| e.path(state).starts_with(prefix))
                    .count()
            };
            if usize::try_from(count).ok() != Some(below) {
                return false;
            }
        }
        tree.children.iter().all(|child| {
            let len = prefix.len();
            prefix.extend_from_slice(&child.name);
            prefix.push(b'/');
            let matches = node(state, child, prefix);
            prefix.truncate(len);
            matches
        })
    }
    node(state, tree, &mut Vec::new())
}

/// Write the index after a refresh (`git update-index --refresh`, `git status`): `state` has
/// the entries of the index file at `index_path` with fresh stat data only — same paths, same
/// flags, same objects — so the file keeps its version and every extension after the entries
/// (cache-tree, untracked cache, fsmonitor, resolve-undo, end-of-entries and offset tables,
/// whose offsets do not move) byte for byte, as git keeps them.
///
/// `original` is that file's bytes and the entries (indices, ascending) whose stat data
/// differs from them, with, when the refresh measured them ([`Layout`]: a
/// superset of those entries, each with its offset from the first entry, and where the entries
/// end). For versions 2 and 3 the file is written as it was with only those
/// entries re-encoded in place (by gix's [`gix::index::Entry::write_to`]; each one's object id,
/// flags and path must be what the file holds at its offset, or nothing is patched); the
/// checksum is computed on a second thread while the bytes are written. Otherwise the entries
/// are encoded again in the file's version (version 4, or no `original`). When the file's
/// extensions cannot be located either way (a split index, or an index whose entries git wrote
/// differently), the index is written as [`commit`] writes it instead.
pub(crate) fn commit_refreshed(
    lock: IndexLock,
    repo: &gix::Repository,
    state: &State,
    index_path: &std::path::Path,
    original: Option<(&[u8], &[usize], Option<&Layout>)>,
    fsmonitor: Option<Option<&[u8]>>,
    untracked: Option<Option<&[u8]>>,
) -> Result<(), Error> {
    let hash = state.object_hash();
    let replaced = fsmonitor.is_some() || untracked.is_some();
    // The extensions as read, with the fsmonitor's and the untracked cache's replaced (or
    // dropped) when they changed.
    let rebuilt = |ext: &'_ [u8]| -> Vec<u8> { with_extensions(ext, untracked, fsmonitor) };
    let format = Format::of(repo, Some(state));
    let read;
    let (original, changed): (&[u8], _) = match original {
        Some((bytes, changed, measured)) => (bytes, Some((changed, measured))),
        None => {
            read = std::fs::read(index_path).unwrap_or_default();
            (&read[..], None)
        }
    };
    if let Some((end, patches)) =
        changed.and_then(|(changed, measured)| stat_patches(state, original, changed, measured))
    {
        crate::sys::phase::mark("stat data patches encoded");
        if let Some(ext) = extensions_to_keep(original, end, hash) {
            let (body, tail) = if replaced {
                (&original[..end], rebuilt(ext))
            } else {
                (
                    &original[..original.len() - hash.len_in_bytes()],
                    Vec::new(),
                )
            };
            return lock.commit_with(|out| {
                let sum = write_hashed(body, &patches, &tail, hash, !format.skip_hash, out)?;
                out.write_all(sum.as_bytes())
            });
        }
    }
    let version4 = state.version() == gix::index::Version::V4;
    let mut entries = Vec::with_capacity(original.len());
    let encoded = encode_entries(state, version4, &mut entries).is_ok();
    let start = 12 + entries.len();
    let extensions = encoded
        .then(|| extensions_to_keep(original, start, hash))
        .flatten()
        .map(|ext| {
            if replaced {
                std::borrow::Cow::Owned(rebuilt(ext))
            } else {
                std::borrow::Cow::Borrowed(ext)
            }
        });
    let Some(extensions) = extensions else {
        // A refresh changes stat data only: git's leaves the cache-tree as it was. Not one read
        // with a sparse index that was expanded since (each sparse directory one entry in its
        // counts): git's `ensure_full_index` hashes the expanded index's anew.
        let cache_tree = if state.tree().is_none_or(|tree| counts_match(state, tree)) {
            CacheTree::Kept
        } else {
            CacheTree::Rebuild
        };
        return commit(
            lock,
            repo,
            state.clone(),
            Keep {
                tree: None,
                previous: Some(state),
                cache_tree,
                resolve_undo: None,
                // A refresh changes no entry: the untracked cache is carried whole.
                changed_paths: Some(&[]),
                fsmonitor: None,
            },
        );
    };
    let version = u32::from_be_bytes(original[4..8].try_into().expect("four bytes"));
    let count = &original[8..12];
    lock.commit_with(|out| {
        let mut out = Sink {
            inner: out,
            hasher: (!format.skip_hash).then(|| crate::index::checksum::Checksum::new(hash)),
            written: 0,
        };
        out.write_all(b"DIRC")?;
        out.write_all(&version.to_be_bytes())?;
        out.write_all(count)?;
        out.write_all(&entries)?;
        out.write_all(&extensions)?;
        let sum = match out.hasher.take() {
            Some(hasher) => hasher.finalize(hash),
            None => hash.null(),
        };
        out.inner.write_all(sum.as_bytes())
    })
}

/// The extensions `ext` (as read from an index file) with the untracked cache (`UNTR`) and the
/// fsmonitor's (`FSMN`) replaced where given (`Some(None)`: dropped), each where git's
/// `do_write_index` puts it (`UNTR` before `FSMN`, both before `sdir`). The end-of-entries
/// extension (`EOIE`) goes when anything is replaced: its hash of the extensions' headers would
/// no longer hold.
pub(crate) fn with_extensions(
    ext: &[u8],
    untracked: Option<Option<&[u8]>>,
    fsmonitor: Option<Option<&[u8]>>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(ext.len() + 64);
    let push = |out: &mut Vec<u8>, sig: &[u8], data: &[u8]| {
        out.extend_from_slice(sig);
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(u32::MAX).to_be_bytes());
        out.extend_from_slice(data);
    };
    let replaced = untracked.is_some() || fsmonitor.is_some();
    let mut untr = untracked.flatten();
    let mut fsmn = fsmonitor.flatten();
    for (sig, data) in gix::index::extension::Iter::new(ext) {
        if (&sig == b"UNTR" && untracked.is_some())
            || (&sig == b"FSMN" && fsmonitor.is_some())
            || (&sig == b"EOIE" && replaced)
        {
            continue;
        }
        if &sig == b"FSMN" || &sig == b"sdir" {
            if let Some(u) = untr.take() {
                push(&mut out, b"UNTR", u);
            }
        }
        if &sig == b"sdir" {
            if let Some(f) = fsmn.take() {
                push(&mut out, b"FSMN", f);
            }
        }
        push(&mut out, &sig, data);
    }
    if let Some(u) = untr {
        push(&mut out, b"UNTR", u);
    }
    if let Some(f) = fsmn {
        push(&mut out, b"FSMN", f);
    }
    out
}

/// The extensions of the index file `original` when its entries end at `start`: the bytes
/// between them and the checksum, if they are a whole sequence of extensions none of which is
/// a split index's `link` (whose entries are not all in this file).
fn extensions_to_keep(original: &[u8], start: usize, hash: gix::hash::Kind) -> Option<&[u8]> {
    let end = original.len().checked_sub(hash.len_in_bytes())?;
    if start > end || original.get(..4) != Some(b"DIRC") {
        return None;
    }
    let ext = &original[start..end];
    let mut iter = gix::index::extension::Iter::new(ext);
    let mut ok = true;
    for (signature, _) in iter.by_ref() {
        ok &= signature != *b"link" && signature.iter().all(u8::is_ascii_alphabetic);
    }
    (ok && iter.consumed == ext.len()).then_some(ext)
}

/// New stat data for the index file: where in the file, and the bytes.
type StatPatch = (usize, [u8; STAT]);

/// The entries `changed` (ascending indices) of `state` re-encoded for the version 2 or 3
/// index file `original` that `state` was read from: their stat data with its place in the
/// file, and where the file's entries end. Each entry's place is `measured`, or follows from
/// the ones before it ([`entry_size`]); `None` when the file is not of such a version, holds
/// another number of entries, or an entry to patch is not the same object, flags and path at
/// its place (which also catches a wrong measurement).
fn stat_patches(
    state: &State,
    original: &[u8],
    changed: &[usize],
    measured: Option<&Layout>,
) -> Option<(usize, Vec<StatPatch>)> {
    let version = u32::from_be_bytes(original.get(4..8)?.try_into().ok()?);
    let count = u32::from_be_bytes(original.get(8..12)?.try_into().ok()?);
    if original.get(..4)? != b"DIRC"
        || !(version == 2 || version == 3)
        || usize::try_from(count).ok()? != state.entries().len()
    {
        return None;
    }
    let mut scratch = Vec::with_capacity(256);
    let mut patches = Vec::with_capacity(changed.len());
    let mut patch = |i: usize, offset: usize| -> Option<()> {
        let entry = &state.entries()[i];
        if entry.flags.contains(Flags::REMOVE) {
            return None;
        }
        let len = entry_size(entry, state);
        scratch.clear();
        entry.write_to(&mut scratch, state).ok()?;
        let slot = original.get(offset..offset + len)?;
        if scratch.len() > len
            || slot.get(STAT..scratch.len())? != &scratch[STAT..]
            || slot[scratch.len()..].iter().any(|&b| b != 0)
        {
            return None;
        }
        patches.push((offset, scratch[..STAT].try_into().ok()?));
        Some(())
    };
    if let Some(measured) = measured {
        let mut offsets = measured.offsets.iter().peekable();
        for &i in changed {
            while offsets.next_if(|(at, _)| *at < i).is_some() {}
            let &(at, offset) = offsets.next()?;
            if at != i {
                return None;
            }
            patch(i, 12 + offset)?;
        }
        return Some((12 + measured.end, patches));
    }
    let mut next = changed.iter().copied().peekable();
    let mut offset = 12;
    for (i, entry) in state.entries().iter().enumerate() {
        if next.next_if_eq(&i).is_some() {
            patch(i, offset)?;
        } else if entry.flags.contains(Flags::REMOVE) {
            return None;
        }
        offset += entry_size(entry, state);
    }
    next.peek().is_none().then_some((offset, patches))
}

/// Hand `body` to `f` a [`WRITE_CHUNK`] at a time with `patches` (ascending, not overlapping)
/// applied: a chunk that no patch touches straight from `body`, one that a patch touches as a
/// patched copy in a buffer of this call's.
fn patched_chunks(
    body: &[u8],
    patches: &[StatPatch],
    mut f: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut first = 0;
    for (n, chunk) in body.chunks(WRITE_CHUNK).enumerate() {
        let start = n * WRITE_CHUNK;
        let end = start + chunk.len();
        while patches.get(first).is_some_and(|(at, _)| at + STAT <= start) {
            first += 1;
        }
        let upto = first
            + patches[first..]
                .iter()
                .take_while(|(at, _)| *at < end)
                .count();
        let touching = &patches[first..upto];
        if touching.is_empty() {
            f(chunk)?;
            continue;
        }
        buf.clear();
        buf.extend_from_slice(chunk);
        for (at, bytes) in touching {
            // A patch may straddle two chunks: each takes its part.
            let (lo, hi) = ((*at).max(start), (at + STAT).min(end));
            buf[lo - start..hi - start].copy_from_slice(&bytes[lo - at..hi - at]);
        }
        f(&buf)?;
    }
    Ok(())
}

/// The size of the writes of a patched index. git writes its index 128 KiB at a time; one
/// write of a whole 20 MB index took 41 ms where git's 151 writes and its rename took 24 ms
/// (strace, the bench's 200,000-entry index on the root ext4).
const WRITE_CHUNK: usize = 128 << 10;

/// From this size an index's checksum is computed on a second thread beside its write.
const HASH_APART: usize = 1 << 20;

/// Write `body` with `patches` applied into `out` and return its checksum: the `kind` hash of
/// it, or with `checksum` false (`index.skipHash`) the null id. A large body is hashed on a
/// second thread while it is written: the write of a 20 MB index into the page cache and its
/// SHA-1 take a similar time.
fn write_hashed(
    body: &[u8],
    patches: &[StatPatch],
    tail: &[u8],
    kind: gix::hash::Kind,
    checksum: bool,
    out: &mut dyn Write,
) -> std::io::Result<ObjectId> {
    let digest = || {
        let mut hasher = crate::index::checksum::Checksum::new(kind);
        patched_chunks(body, patches, |chunk| {
            hasher.update(chunk);
            Ok(())
        })
        .map(|()| {
            hasher.update(tail);
            hasher.finalize(kind)
        })
    };
    let write = |out: &mut dyn Write| {
        patched_chunks(body, patches, |chunk| out.write_all(chunk))?;
        out.write_all(tail)
    };
    if !checksum {
        write(out)?;
        return Ok(kind.null());
    }
    if body.len() < HASH_APART {
        write(out)?;
        return digest();
    }
    std::thread::scope(|scope| {
        let hashing = scope.spawn(digest);
        let written = write(out);
        let sum = hashing
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        written.and(sum)
    })
}

/// Write `state` as a short-lived index: no cache-tree, no other extension and a null checksum (which
/// git and gix accept as "not computed", as with `index.skipHash`), because it only has to be a
/// valid index until the final one replaces it. The update's announcement of the paths it is
/// about to create uses it: hashing a 40,000-entry index twice per switch costs milliseconds.
/// `link`: the payload of a `link` extension to keep a split index's shared index named
/// ([`crate::index::split_index::transient_link`]).
pub(crate) fn commit_transient(
    lock: IndexLock,
    state: State,
    link: Option<&[u8]>,
) -> Result<(), Error> {
    let format = Format {
        version4: false,
        skip_hash: true,
        eoie: false,
    };
    let extensions = Extensions {
        link,
        ..Extensions::default()
    };
    lock.commit_with(|out| encode_to(state, format, None, extensions, out, None))
}

/// The cache-tree of `state` as git's `cache_tree_update` with `WRITE_TREE_REPAIR` builds it
/// (see the module docs); `exists` answers whether a tree object is in the object database and
/// is not asked at all when the root equals `known`. `None` for an index without entries, for
/// which git writes no cache-tree either.
pub fn cache_tree(
    state: &State,
    known: Option<ObjectId>,
    reuse: Option<(&Tree, &HashSet<BString>)>,
    mut exists: impl FnMut(&ObjectId) -> bool,
) -> Option<Tree> {
    let entries: Vec<&gix::index::Entry> = state
        .entries()
        .iter()
        .filter(|e| !e.flags.contains(Flags::REMOVE))
        .collect();
    if entries.is_empty() {
        // git's `cache_tree_update` records an empty index as the empty tree (which every
        // object database has), valid with no entries.
        return Some(Tree {
            name: Default::default(),
            id: ObjectId::empty_tree(state.object_hash()),
            num_entries: Some(0),
            children: Vec::new(),
        });
    }
    let mut buf = Vec::new();
    let mut root = build(state, &entries, 0, &[], reuse, &mut buf);
    if known.is_none_or(|known| root.num_entries.is_none() || root.id != known) {
        let dirty = reuse.map(|(_, dirty)| dirty);
        confirm(&mut root, &mut BString::default(), dirty, &mut exists);
    }
    Some(root)
}

/// The cache-tree of `state`, the index of a checkout of the tree `walked.root`, made of the
/// trees its walk read instead of hashing each directory from its entries, as git's
/// `prime_cache_tree` records a checked-out tree's own: the same ids, since `walked` holds only
/// trees git would write for these entries. Each entry's directory is looked up once, the
/// directories' counts summed bottom-up: for a million entries in 111,000 directories the
/// hashing [`cache_tree`] took most of the 350 ms that the index took to write. `None` where
/// `walked` does not describe `state` (an entry in a directory it lacks, a directory without
/// entries, a conflict or an intent-to-add entry): the caller hashes.
pub(crate) fn cache_tree_walked(state: &State, walked: &Walked<'_>) -> Option<Tree> {
    let Walked { root, dirs, trees } = *walked;
    let entries = state.entries();
    if dirs.len() != trees.len() || entries.is_empty() {
        return None;
    }
    // Entries directly in each directory, then in it and below.
    let mut counts = vec![0u32; dirs.len()];
    let mut top = 0u32;
    let mut last: Option<(&[u8], usize)> = None;
    for entry in entries {
        if entry.stage() != Stage::Unconflicted
            || entry.flags.intersects(Flags::INTENT_TO_ADD | Flags::REMOVE)
        {
            return None;
        }
        let path: &[u8] = entry.path(state);
        let Some(slash) = crate::fs::last_slash(path) else {
            top += 1;
            continue;
        };
        let dir = &path[..slash];
        let k = match last {
            Some((seen, k)) if seen == dir => k,
            _ => {
                let k = dirs.binary_search_by(|d| d.as_slice().cmp(dir)).ok()?;
                last = Some((dir, k));
                k
            }
        };
        counts[k] += 1;
    }
    // A directory's parent sorts before it (its path is a prefix of the directory's).
    let parents = dirs
        .iter()
        .map(|dir| match crate::fs::last_slash(dir) {
            None => Some(None),
            Some(slash) => {
                let parent = &dir[..slash];
                dirs.binary_search_by(|d| d.as_slice().cmp(parent))
                    .ok()
                    .map(Some)
            }
        })
        .collect::<Option<Vec<Option<usize>>>>()?;
    let mut children: Vec<Vec<Tree>> = (0..dirs.len()).map(|_| Vec::new()).collect();
    let mut at_root = Vec::new();
    for k in (0..dirs.len()).rev() {
        if counts[k] == 0 {
            return None;
        }
        let name = crate::fs::last_slash(&dirs[k]).map_or(&dirs[k][..], |s| &dirs[k][s + 1..]);
        let node = Tree {
            name: name.into(),
            id: trees[k],
            num_entries: Some(counts[k]),
            children: subtree_order(std::mem::take(&mut children[k])),
        };
        match parents[k] {
            Some(parent) => {
                counts[parent] += counts[k];
                children[parent].push(node);
            }
            None => {
                top += counts[k];
                at_root.push(node);
            }
        }
    }
    if usize::try_from(top).ok()? != entries.len() {
        return None;
    }
    Some(Tree {
        name: Default::default(),
        id: root,
        num_entries: Some(top),
        children: subtree_order(at_root),
    })
}

/// `nodes` in git's order of subtrees: by name length, then by bytes (`subtree_name_cmp`).
fn subtree_order(mut nodes: Vec<Tree>) -> Vec<Tree> {
    nodes.sort_by(|a, b| (a.name.len(), a.name.as_slice()).cmp(&(b.name.len(), b.name.as_slice())));
    nodes
}

/// The cache-tree node for the directory `name` whose entries (index order) are `entries`, every
/// path starting with `base` bytes of directory prefix. `num_entries` is `None` where the
/// directory cannot be valid whatever the object database holds.
fn build(
    state: &State,
    entries: &[&gix::index::Entry],
    base: usize,
    name: &[u8],
    reuse: Option<(&Tree, &HashSet<BString>)>,
    buf: &mut Vec<u8>,
) -> Tree {
    // An unchanged directory keeps the previous index's node (valid, same number of entries).
    if let Some((prev, dirty)) = reuse {
        let dir = &entries[0].path(state)[..base.saturating_sub(1)];
        let count = u32::try_from(entries.len()).ok();
        if !dirty.contains(dir.as_bstr()) && prev.num_entries.is_some() && prev.num_entries == count
        {
            let mut node = prev.clone();
            node.name = name.into();
            return node;
        }
    }
    let mut children = Vec::new();
    let mut object = Vec::new();
    let mut valid = true;
    let mut i = 0;
    while i < entries.len() {
        let path = entries[i].path(state);
        let rest = &path[base..];
        if let Some(slash) = rest.find_byte(b'/') {
            let dir = &rest[..slash];
            let mut j = i + 1;
            while j < entries.len() {
                let next = &entries[j].path(state)[base..];
                if !(next.len() > slash && next[slash] == b'/' && &next[..slash] == dir) {
                    break;
                }
                j += 1;
            }
            let child_reuse = reuse.and_then(|(prev, dirty)| {
                prev.children
                    .iter()
                    .find(|c| c.name.as_slice() == dir)
                    .map(|c| (c, dirty))
            });
            let child = build(
                state,
                &entries[i..j],
                base + slash + 1,
                dir,
                child_reuse,
                buf,
            );
            valid &= child.num_entries.is_some();
            push_tree_entry(&mut object, Mode::DIR, dir, &child.id);
            children.push(child);
            i = j;
        } else {
            let entry = entries[i];
            if entry.stage() != Stage::Unconflicted || entry.flags.contains(Flags::INTENT_TO_ADD) {
                valid = false;
            }
            push_tree_entry(&mut object, entry.mode, rest, &entry.id);
            i += 1;
        }
    }
    let children = subtree_order(children);
    let hash = entries[0].id.kind();
    let id = if valid {
        buf.clear();
        buf.extend_from_slice(format!("tree {}\0", object.len()).as_bytes());
        buf.extend_from_slice(&object);
        let mut hasher = gix::hash::hasher(hash);
        hasher.update(buf);
        hasher.try_finalize().unwrap_or_else(|_| hash.null())
    } else {
        hash.null()
    };
    Tree {
        name: name.into(),
        id,
        num_entries: valid.then(|| u32::try_from(entries.len()).unwrap_or(u32::MAX)),
        children,
    }
}

/// One entry of a tree object: `<octal mode> <name>\0<raw id>`.
fn push_tree_entry(object: &mut Vec<u8>, mode: Mode, name: &[u8], id: &ObjectId) {
    write!(object, "{:o} ", mode.bits()).expect("writing to a Vec");
    object.extend_from_slice(name);
    object.push(0);
    object.extend_from_slice(id.as_bytes());
}

/// Mark invalid every node whose tree is not in the object database, and every ancestor of an
/// invalid node (git's `WRITE_TREE_REPAIR`). Returns whether `node` stays valid.
/// Directories outside `dirty` (when given) were taken from the previous, valid cache-tree and
/// are not looked up again; `path` is `node`'s directory.
fn confirm(
    node: &mut Tree,
    path: &mut BString,
    dirty: Option<&HashSet<BString>>,
    exists: &mut impl FnMut(&ObjectId) -> bool,
) -> bool {
    if dirty.is_some_and(|d| !d.contains(path.as_bstr())) && node.num_entries.is_some() {
        return true;
    }
    let mut valid = node.num_entries.is_some();
    for child in &mut node.children {
        let len = path.len();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(&child.name);
        valid &= confirm(child, path, dirty, exists);
        path.truncate(len);
    }
    valid = valid && exists(&node.id);
    if !valid {
        node.num_entries = None;
        node.id = node.id.kind().null();
    }
    valid
}

/// The whole index file in memory (tests compare it byte for byte).
#[cfg(test)]
fn encode(state: State, format: Format, tree: Option<&Tree>, previous: Option<&State>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_to(
        state,
        format,
        tree,
        Extensions {
            previous,
            ..Extensions::default()
        },
        &mut out,
        None,
    )
    .expect("writing to a Vec");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::format::encode_varint;
    use gix::index::entry::Stat;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn state(paths: &[(&str, u8)]) -> State {
        let mut state = State::new(gix::hash::Kind::Sha1);
        for (path, n) in paths {
            state.dangerously_push_entry(
                Stat::default(),
                id(*n),
                Flags::empty(),
                Mode::FILE,
                path.as_bytes().as_bstr(),
            );
        }
        state
    }

    /// The chunks handed out are the body with every patch in place, whether a patch lies
    /// inside a chunk, straddles two, or chunks go by untouched.
    #[test]
    fn patched_chunks_apply_every_patch_across_chunk_boundaries() {
        let body: Vec<u8> = (0..WRITE_CHUNK * 3 + 100)
            .map(|i| (i % 251) as u8)
            .collect();
        let patches: Vec<StatPatch> = [7, WRITE_CHUNK - 13, 2 * WRITE_CHUNK + 50]
            .iter()
            .enumerate()
            .map(|(k, &at)| (at, [0xa0 + k as u8; STAT]))
            .collect();
        let mut expected = body.clone();
        for (at, bytes) in &patches {
            expected[*at..at + STAT].copy_from_slice(bytes);
        }
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        patched_chunks(&body, &patches, |chunk| {
            sizes.push(chunk.len());
            got.extend_from_slice(chunk);
            Ok(())
        })
        .unwrap();
        assert_eq!(sizes, [WRITE_CHUNK, WRITE_CHUNK, WRITE_CHUNK, 100]);
        assert!(got == expected, "the patched body differs");
        assert!(body != expected, "the patches change something");
    }

    /// An index encoded ahead and patched with its stat data ([`prepare`], [`commit_prepared`])
    /// is byte for byte the one [`commit`] writes from the same entries, in every format:
    /// versions 2, 3 (skip-worktree entries) and 4, `index.skipHash`, the end-of-entries
    /// extension; for a small index (hashed in line, written in one piece) and one of more than
    /// [`HASH_APART`] bytes (written in pieces, hashed on a thread of its own).
    #[test]
    fn a_prepared_index_is_the_index_commit_writes() {
        for count in [300, 20_000] {
            prepared_index_is_the_index_commit_writes(count);
        }
    }

    fn prepared_index_is_the_index_commit_writes(count: u32) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .current_dir(dir.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(args)
                .status()
                .expect("git runs");
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        let paths: Vec<(String, u8)> = (0..count)
            .map(|k| (format!("d{}/e{}/f{k}", k % 7, k % 3), (k % 200) as u8 + 1))
            .collect();
        let mut sorted: Vec<(&str, u8)> = paths.iter().map(|(p, n)| (p.as_str(), *n)).collect();
        sorted.sort();
        let stat = |k: usize| Stat {
            mtime: gix::index::entry::stat::Time {
                secs: 1_700_000_000 + k as u32,
                nsecs: 7 * k as u32,
            },
            ctime: gix::index::entry::stat::Time {
                secs: 1_700_000_100 + k as u32,
                nsecs: 11 * k as u32,
            },
            dev: 42,
            ino: 1000 + k as u32,
            uid: 5,
            gid: 6,
            size: 3 * k as u32,
        };
        let configs: &[&[(&str, &str)]] = &[
            &[],
            &[("index.version", "2")],
            &[("index.version", "4")],
            &[("index.skipHash", "true")],
            &[("index.recordEndOfIndexEntries", "true")],
        ];
        for (c, config) in configs.iter().enumerate() {
            for (key, value) in *config {
                git(&["config", key, value]);
            }
            let repo = gix::open(dir.path()).expect("open");
            for skip in [false, true] {
                let mut bare = state(&sorted);
                if skip {
                    for (k, entry) in bare.entries_mut().iter_mut().enumerate() {
                        if k % 5 == 0 {
                            entry.flags.insert(Flags::SKIP_WORKTREE);
                        }
                    }
                }
                let stats: Vec<Option<Stat>> = (0..sorted.len())
                    .map(|k| (k % 11 != 3).then(|| stat(k)))
                    .collect();
                let mut full = bare.clone();
                for (entry, s) in full.entries_mut().iter_mut().zip(&stats) {
                    entry.stat = s.unwrap_or_default();
                }
                let (one, two) = (dir.path().join("one"), dir.path().join("two"));
                let keep = Keep {
                    tree: None,
                    previous: None,
                    cache_tree: CacheTree::Rebuild,
                    resolve_undo: None,
                    changed_paths: None,
                    fsmonitor: None,
                };
                commit(IndexLock::acquire(&one).expect("lock"), &repo, full, keep).expect("commit");
                let prepared = prepare(
                    &repo,
                    bare,
                    None,
                    CacheTree::Rebuild,
                    Format::of(&repo, None),
                );
                commit_prepared(IndexLock::acquire(&two).expect("lock"), prepared, stats)
                    .expect("commit prepared");
                let (one, two) = (std::fs::read(one).unwrap(), std::fs::read(two).unwrap());
                assert!(
                    one == two,
                    "{count} entries, config {c}, skip-worktree {skip}: the files differ"
                );
                if count > 300 {
                    assert!(one.len() > HASH_APART, "{} bytes", one.len());
                }
            }
            for (key, _) in *config {
                git(&["config", "--unset", key]);
            }
        }
    }

    fn find<'a>(tree: &'a Tree, path: &str) -> &'a Tree {
        path.split('/')
            .filter(|c| !c.is_empty())
            .fold(tree, |t, c| {
                t.children
                    .iter()
                    .find(|ch| ch.name.as_slice() == c.as_bytes())
                    .unwrap_or_else(|| panic!("no {c} in {path}"))
            })
    }

    const PATHS: &[(&str, u8)] = &[
        ("a/b/c", 1),
        ("a/b/d", 2),
        ("a/e", 3),
        ("bb/f", 4),
        ("bb/g/h", 5),
        ("top", 6),
    ];

    #[test]
    fn every_directory_is_valid_when_all_trees_exist() {
        let old = cache_tree(&state(PATHS), None, None, |_| true).unwrap();
        assert_eq!(old.num_entries, Some(6));
        assert_eq!(find(&old, "a").num_entries, Some(3));
        assert_eq!(find(&old, "a/b").num_entries, Some(2));
        assert_eq!(find(&old, "bb/g").num_entries, Some(1));
        // git's order: shorter names first.
        let names: Vec<_> = old.children.iter().map(|c| c.name.to_vec()).collect();
        assert_eq!(names, vec![b"a".to_vec(), b"bb".to_vec()]);
        // The known root short-cuts the lookups.
        let mut asked = 0;
        let again = cache_tree(&state(PATHS), Some(old.id), None, |_| {
            asked += 1;
            false
        })
        .unwrap();
        assert_eq!(asked, 0);
        assert_eq!(again, old);
    }

    /// The cache-tree made of a walk's trees is the hashed one, node for node, where the walk
    /// names the trees hashing gives; where it cannot describe the index, there is none.
    #[test]
    fn the_walked_trees_give_the_hashed_cache_tree() {
        let hashed = cache_tree(&state(PATHS), None, None, |_| true).unwrap();
        let dirs: Vec<BString> = ["a", "a/b", "bb", "bb/g"].map(BString::from).to_vec();
        let trees: Vec<ObjectId> = dirs
            .iter()
            .map(|d| find(&hashed, &d.to_string()).id)
            .collect();
        let walked = Walked {
            root: hashed.id,
            dirs: &dirs,
            trees: &trees,
        };
        assert_eq!(cache_tree_walked(&state(PATHS), &walked), Some(hashed));
        // A directory the walk does not name (a path below `a/b/x`), an empty directory, an
        // intent-to-add entry: no cache-tree from the walk.
        let mut more = PATHS.to_vec();
        more.push(("a/b/x/y", 7));
        more.sort();
        assert_eq!(cache_tree_walked(&state(&more), &walked), None);
        let mut fewer = PATHS.to_vec();
        fewer.retain(|(p, _)| !p.starts_with("bb/g/"));
        assert_eq!(cache_tree_walked(&state(&fewer), &walked), None);
        let mut intent = state(PATHS);
        intent.entries_mut()[0].flags.insert(Flags::INTENT_TO_ADD);
        assert_eq!(cache_tree_walked(&intent, &walked), None);
    }

    #[test]
    fn unchanged_directories_reuse_the_previous_nodes_and_the_result_is_a_full_rebuild() {
        let old = cache_tree(&state(PATHS), None, None, |_| true).unwrap();
        let mut changed = PATHS.to_vec();
        changed[1].1 = 9; // a/b/d
        let full = cache_tree(&state(&changed), None, None, |_| true).unwrap();
        let dirty = changed_dirs(["a/b/d".as_bytes().as_bstr()]);
        // A stale previous node for `bb` would show if it were not reused: make it recognisable.
        let mut prev = old.clone();
        let mut looked_up = Vec::new();
        let reused = cache_tree(&state(&changed), None, Some((&prev, &dirty)), |id| {
            looked_up.push(*id);
            true
        })
        .unwrap();
        assert_eq!(reused, full);
        // Only the rebuilt directories (root, a, a/b) were looked up, not bb or bb/g.
        assert_eq!(looked_up.len(), 3, "{looked_up:?}");
        // A changed entry count in an 'unchanged' directory is not trusted.
        prev.children.iter_mut().for_each(|c| {
            if c.name.as_slice() == b"bb" {
                c.num_entries = Some(99);
            }
        });
        let again = cache_tree(&state(&changed), None, Some((&prev, &dirty)), |_| true).unwrap();
        assert_eq!(again, full);
    }

    #[test]
    fn one_changed_file_invalidates_only_its_directories() {
        let old = cache_tree(&state(PATHS), None, None, |_| true).unwrap();
        let known: Vec<ObjectId> = {
            fn all(t: &Tree, out: &mut Vec<ObjectId>) {
                out.push(t.id);
                t.children.iter().for_each(|c| all(c, out));
            }
            let mut v = Vec::new();
            all(&old, &mut v);
            v
        };
        let mut changed = PATHS.to_vec();
        changed[1].1 = 9; // a/b/d
        let new = cache_tree(&state(&changed), Some(old.id), None, |id| {
            known.contains(id)
        })
        .unwrap();
        assert_eq!(new.num_entries, None, "root");
        assert_eq!(find(&new, "a").num_entries, None);
        assert_eq!(find(&new, "a/b").num_entries, None);
        assert_eq!(find(&new, "bb"), find(&old, "bb"));
        assert_eq!(find(&new, "bb/g"), find(&old, "bb/g"));
        // Invalid nodes still list their children, as git's do.
        assert_eq!(find(&new, "a").children.len(), 1);
    }

    #[test]
    fn unmerged_and_intent_to_add_entries_invalidate_their_directories() {
        let mut s = state(PATHS);
        s.entries_mut()[4].flags.insert(Flags::INTENT_TO_ADD); // bb/g/h
        let t = cache_tree(&s, None, None, |_| true).unwrap();
        assert_eq!(find(&t, "bb/g").num_entries, None);
        assert_eq!(find(&t, "bb").num_entries, None);
        assert_eq!(find(&t, "a").num_entries, Some(3));
        assert_eq!(t.num_entries, None);
    }

    #[test]
    fn varints_are_gits() {
        let enc = |v| {
            let mut out = Vec::new();
            encode_varint(v, &mut out);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(128), [0x80, 0]);
        assert_eq!(enc(16511), [0xff, 0x7f]);
        assert_eq!(enc(16512), [0x80, 0x80, 0]);
    }

    #[test]
    fn version_4_round_trips_through_gix() {
        let mut s = state(PATHS);
        s.entries_mut()[2].flags.insert(Flags::SKIP_WORKTREE);
        let tree = cache_tree(&s, None, None, |_| true);
        for version4 in [false, true] {
            let format = Format {
                version4,
                skip_hash: false,
                eoie: true,
            };
            let bytes = encode(s.clone(), format, tree.as_ref(), None);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("index");
            std::fs::write(&path, &bytes).unwrap();
            let back =
                gix::index::File::at(&path, gix::hash::Kind::Sha1, false, Default::default())
                    .unwrap();
            let expected = if version4 { 4 } else { 3 };
            assert_eq!(back.version() as u32, expected);
            let paths: Vec<_> = back
                .entries()
                .iter()
                .map(|e| e.path(&back).to_string())
                .collect();
            let want: Vec<_> = PATHS.iter().map(|(p, _)| p.to_string()).collect();
            assert_eq!(paths, want);
            assert!(back.entries()[2].flags.contains(Flags::SKIP_WORKTREE));
            assert_eq!(back.tree(), tree.as_ref());
        }
    }

    /// git's own untracked cache, carried with one file's directories invalidated: the
    /// directories of `a/b/new` lose their untracked names and stat data (root, `a`, `a/b`:
    /// git status's flags cascade), `c` keeps its own, and git reads the result (its status
    /// unchanged).
    #[test]
    fn the_untracked_cache_is_carried_with_changed_directories_invalidated() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let git = |args: &[&str]| crate::fs::testing::git_in(repo, args);
        git(&["init", "-q"]);
        for (path, text) in [("t", "t"), ("a/t", "t"), ("a/b/t", "t"), ("c/t", "t")] {
            std::fs::create_dir_all(repo.join(path).parent().unwrap()).unwrap();
            std::fs::write(repo.join(path), text).unwrap();
        }
        git(&["add", "."]);
        for path in ["u", "a/u", "a/b/u", "c/u"] {
            std::fs::write(repo.join(path), "u").unwrap();
        }
        git(&["update-index", "--untracked-cache"]);
        let before = git(&["status", "--porcelain"]);
        git(&["status", "--porcelain"]);
        let index_path = repo.join(".git/index");
        let read = |path: &std::path::Path| {
            gix::index::File::at(path, gix::hash::Kind::Sha1, false, Default::default()).unwrap()
        };
        let index = read(&index_path);
        let names = |uc: &gix::index::extension::UntrackedCache| -> Vec<(String, bool, usize)> {
            uc.directories()
                .iter()
                .map(|d| {
                    (
                        d.name.to_string(),
                        d.stat.is_some(),
                        d.untracked_entries.len(),
                    )
                })
                .collect()
        };
        let uc = index.untracked().expect("git wrote an untracked cache");
        assert!(
            names(uc).iter().all(|(_, valid, _)| *valid),
            "{:?}",
            names(uc)
        );
        let state: &State = &index;
        let mut out = Vec::new();
        let format = Format::of(&gix::open(repo).unwrap(), Some(state));
        let changed = [BString::from("a/b/new")];
        encode_to(
            state.clone(),
            format,
            None,
            Extensions {
                previous: Some(state),
                changed_paths: Some(&changed),
                ..Extensions::default()
            },
            &mut out,
            None,
        )
        .unwrap();
        std::fs::write(&index_path, &out).unwrap();
        let back = read(&index_path);
        let got = names(back.untracked().expect("carried"));
        let expect = |name: &str| got.iter().find(|(n, _, _)| n == name).cloned().unwrap();
        assert_eq!(expect(""), (String::new(), false, 0));
        assert_eq!(expect("a"), ("a".into(), false, 0));
        assert_eq!(expect("b"), ("b".into(), false, 0));
        assert_eq!(expect("c"), ("c".into(), true, 1));
        assert_eq!(git(&["status", "--porcelain"]), before);
    }
}
