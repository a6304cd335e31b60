//! The index file's bytes: header, entries (version 2, 3 or 4), the extensions, the checksum.
//!
//! Below every writer of the index (`record`, `split_index`): it
//! knows the format, not what an operation decided to put in it.

use std::io::Write;

use bstr::{BString, ByteSlice};
use gix::index::entry::{Flags, Mode};
use gix::index::extension::Tree;
use gix::index::State;

use crate::index::format::{encode_varint, Format};

/// Write `state` in `format` with no extension at all (git's `WRITE_NO_EXTENSION`): a shared
/// index of a split one (`split_index`).
pub(crate) fn encode_plain(
    state: State,
    format: Format,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    encode_to(state, format, None, Extensions::default(), out, None)
}

/// git's rule for entries without an object id (the null id; a broken tree's gitlink), as
/// its `do_write_index` applies it: refused (`cache entry has null sha1: <path>`) unless
/// `GIT_ALLOW_NULL_SHA1`, then written without a cache-tree. `Ok(true)`: there are some
/// (drop the cache-tree).
pub(crate) fn null_ids(state: &State) -> std::io::Result<bool> {
    let Some(entry) = state
        .entries()
        .iter()
        .find(|e| e.id.is_null() && !e.flags.contains(Flags::REMOVE))
    else {
        return Ok(false);
    };
    if crate::sys::env::git_env_bool("GIT_ALLOW_NULL_SHA1") {
        return Ok(true);
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("cache entry has null sha1: {}", entry.path(state)),
    ))
}

/// A writer that hashes and counts what passes through it, so the index can be streamed into
/// its lock file and still end with its checksum.
pub(crate) struct Sink<'w> {
    pub(crate) inner: &'w mut dyn Write,
    pub(crate) hasher: Option<crate::index::checksum::Checksum>,
    pub(crate) written: u64,
}

impl Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What an index file carries besides its entries and cache-tree ([`encode_to`]).
#[derive(Default, Clone, Copy)]
pub(crate) struct Extensions<'a> {
    /// The index replaced: its untracked cache is carried (see `record::Keep::previous`).
    pub(crate) previous: Option<&'a State>,
    /// The resolve-undo payload (`record::Keep::resolve_undo`).
    pub(crate) resolve_undo: Option<&'a [u8]>,
    /// The paths the update changed (`record::Keep::changed_paths`).
    pub(crate) changed_paths: Option<&'a [BString]>,
    /// A split index's `link` payload (`split_index`).
    pub(crate) link: Option<&'a [u8]>,
    /// The `FSMN` payload (`record::Keep::fsmonitor`).
    pub(crate) fsmonitor: Option<&'a [u8]>,
}

/// Write the index file (header, entries, extensions, checksum) into `out`.
pub(crate) fn encode_to(
    mut state: State,
    format: Format,
    tree: Option<&Tree>,
    Extensions {
        previous,
        resolve_undo,
        changed_paths,
        link,
        fsmonitor,
    }: Extensions<'_>,
    out: &mut dyn Write,
    offsets: Option<&mut Vec<usize>>,
) -> std::io::Result<()> {
    // As git's do_write_index: an entry without an object id (a broken tree's gitlink) is
    // refused, or with GIT_ALLOW_NULL_SHA1 written without a cache-tree.
    let tree = if null_ids(&state)? { None } else { tree };
    // As git: an entry carries the extended-flags word exactly when it has an extended flag.
    let extended_flags = Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE;
    let mut extended = false;
    for entry in state.entries_mut() {
        let has = entry.flags.intersects(extended_flags);
        entry.flags.set(Flags::EXTENDED, has);
        extended |= has;
    }
    let version: u32 = match (format.version4, extended) {
        (true, _) => 4,
        (false, true) => 3,
        (false, false) => 2,
    };
    let written = state
        .entries()
        .iter()
        .filter(|e| !e.flags.contains(Flags::REMOVE))
        .count();
    let hash = state.object_hash();
    let mut out = Sink {
        inner: out,
        hasher: (!format.skip_hash).then(|| crate::index::checksum::Checksum::new(hash)),
        written: 0,
    };
    out.write_all(b"DIRC")?;
    out.write_all(&version.to_be_bytes())?;
    out.write_all(&u32::try_from(written).unwrap_or(u32::MAX).to_be_bytes())?;
    encode_entries_at(&state, version == 4, &mut out, offsets)?;

    let offset_to_extensions = u32::try_from(out.written).unwrap_or(u32::MAX);
    let mut table: Vec<([u8; 4], u32)> = Vec::new();
    let mut extension = |out: &mut Sink<'_>, signature: [u8; 4], payload: &[u8]| {
        let size = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        table.push((signature, size));
        out.write_all(&signature)?;
        out.write_all(&size.to_be_bytes())?;
        out.write_all(payload)
    };
    // A split index names its shared index first (git's do_write_index).
    if let Some(payload) = link {
        extension(&mut out, *b"link", payload)?;
    }
    if let Some(tree) = tree {
        let mut encoded = Vec::new();
        tree.write_to(&mut encoded)?;
        // `write_to` writes signature and size itself; record it through `extension` alike.
        extension(&mut out, *b"TREE", &encoded[8..])?;
    }
    // git writes REUC right after the cache-tree.
    if let Some(payload) = resolve_undo.filter(|p| !p.is_empty()) {
        extension(&mut out, *b"REUC", payload)?;
    }
    if let Some(untracked) = previous.and_then(State::untracked) {
        let mut cache = crate::index::untracked_cache::Cache::from_extension(untracked);
        match changed_paths {
            Some(paths) => {
                for path in paths {
                    cache.invalidate_path(path.as_bstr());
                }
            }
            None => cache.clear(),
        }
        let payload = cache.encode(hash);
        extension(&mut out, *b"UNTR", &payload)?;
    }
    if let Some(payload) = fsmonitor {
        extension(&mut out, *b"FSMN", payload)?;
    }
    // A sparse index only while it has sparse-directory entries: the engine expands them on
    // read (`sparse::expand`), and gix's flag stays set after that.
    if state.entries().iter().any(|e| e.mode == Mode::DIR) {
        extension(&mut out, *b"sdir", &[])?;
    }
    if format.eoie && written > 0 && !table.is_empty() {
        gix::index::extension::end_of_index_entry::write_to(
            &mut out,
            hash,
            offset_to_extensions,
            table.iter().copied(),
        )
        .map_err(std::io::Error::other)?;
    }
    let sum = match out.hasher.take() {
        Some(hasher) => hasher.finalize(hash),
        None => hash.null(),
    };
    out.inner.write_all(sum.as_bytes())
}

/// The entries section; version 4 compresses each path against the previous one.
pub(crate) fn encode_entries(
    state: &State,
    version4: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    encode_entries_at(state, version4, out, None)
}

/// [`encode_entries`], pushing onto `offsets` (if given) where each entry written starts,
/// counted from the start of the entries.
pub(crate) fn encode_entries_at(
    state: &State,
    version4: bool,
    out: &mut dyn Write,
    mut offsets: Option<&mut Vec<usize>>,
) -> std::io::Result<()> {
    let mut scratch = Vec::with_capacity(256);
    let mut previous: &[u8] = &[];
    let mut at = 0;
    for entry in state.entries() {
        if entry.flags.contains(Flags::REMOVE) {
            continue;
        }
        if let Some(offsets) = offsets.as_deref_mut() {
            offsets.push(at);
        }
        let path = entry.path(state).as_bytes();
        scratch.clear();
        entry.write_to(&mut scratch, state)?;
        if !version4 {
            // Each entry is padded with NULs to a multiple of 8 bytes, as git writes it.
            let pad = (8 - scratch.len() % 8) % 8;
            scratch.resize(scratch.len() + pad, 0);
            out.write_all(&scratch)?;
            at += scratch.len();
            continue;
        }
        out.write_all(&scratch[..scratch.len() - path.len() - 1])?;
        let common = previous
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        let mut varint = Vec::with_capacity(10);
        encode_varint((previous.len() - common) as u64, &mut varint);
        out.write_all(&varint)?;
        out.write_all(&path[common..])?;
        out.write_all(&[0])?;
        at += scratch.len() - path.len() - 1 + varint.len() + path.len() - common + 1;
        previous = path;
    }
    Ok(())
}
