//! Big blobs streamed from the object database into their files, in pieces, never held whole.
//!
//! A blob read whole costs its size in memory, whatever the budget says (the budget can only
//! make it wait until it runs alone). git streams blobs above `core.bigFileThreshold` that
//! need no conversion (`streaming.c`): from a loose object, or from a pack entry stored whole
//! (not a delta), inflating a piece at a time into the file. This does the same with gix's
//! parts: the loose header is gix-object's, the pack index lookup and the entry header are
//! gix-pack's, the inflate is gix-zlib's; only the loop that moves the pieces is ours. A delta
//! cannot be streamed (its base is needed whole), so a deltified big blob is read whole, as
//! in git.
//!
//! The pack is memory-mapped (gix-pack's `data::File`): its pages are the page cache's, shared
//! and reclaimable, not private memory.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use gix::hash::ObjectId;
use gix::odb::pack;

/// Bytes inflated and written at a time; the budget holds this much for a streamed blob.
pub(crate) const PIECE: usize = 256 * 1024;

/// Where a blob is stored whole, so that it can be streamed.
pub(crate) enum Source {
    /// A loose object file (zlib over `blob <size>\0<content>`).
    Loose(PathBuf),
    /// An undeltified entry of a pack: its compressed data starts at `data_offset`.
    Packed {
        /// The memory-mapped pack.
        pack: pack::data::File,
        /// Where the entry's zlib stream begins.
        data_offset: u64,
    },
}

/// The object directories of a repository (its own and its alternates'), searched for loose
/// objects and pack indexes of the blobs worth streaming.
pub(crate) struct Streamer {
    dirs: Vec<PathBuf>,
    hash: gix::hash::Kind,
    /// Pack indexes, opened the first time a big blob is looked for.
    indexes: Option<Vec<(pack::index::File, PathBuf)>>,
}

impl Streamer {
    /// The object directories of `repo`: nothing is opened until a big blob needs it.
    pub(crate) fn new(repo: &gix::Repository) -> Streamer {
        Streamer {
            dirs: object_dirs(repo),
            hash: repo.object_hash(),
            indexes: None,
        }
    }

    /// The object directories searched, the repository's own first.
    pub(crate) fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Where `id` is stored whole, if it is: a loose object, or an undeltified pack entry.
    /// `None` for a delta (or anything this cannot find), which the caller reads whole.
    pub(crate) fn locate(&mut self, id: &ObjectId) -> Option<Source> {
        let hex = id.to_hex().to_string();
        for dir in &self.dirs {
            let loose = dir.join(&hex[..2]).join(&hex[2..]);
            if loose.is_file() {
                return Some(Source::Loose(loose));
            }
        }
        let hash = self.hash;
        let dirs = &self.dirs;
        let indexes = self.indexes.get_or_insert_with(|| open_indexes(dirs, hash));
        for (index, pack_path) in indexes.iter() {
            let Some(i) = index.lookup(id) else {
                continue;
            };
            let offset = index.pack_offset_at_index(i);
            let pack = pack::data::File::at(pack_path, hash).ok()?;
            let entry = pack.entry(offset).ok()?;
            return match entry.header {
                pack::data::entry::Header::Blob => Some(Source::Packed {
                    data_offset: entry.data_offset,
                    pack,
                }),
                _ => None,
            };
        }
        None
    }

    /// Inflate the blob at `source`, which must be `size` bytes, into `sink`, a piece of
    /// `buf.len()` bytes at a time. A stream that is corrupt, ends early or holds more than
    /// `size` bytes is an error (`InvalidData`), after whatever `sink` took.
    pub(crate) fn copy(
        source: &Source,
        size: u64,
        buf: &mut [u8],
        sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut state = gix::zlib::Decompress::new();
        match source {
            Source::Loose(path) => {
                let mut input = BufReader::with_capacity(PIECE, std::fs::File::open(path)?);
                // The header is at most `blob ` + 20 digits + NUL: inflate that much first.
                let mut head = [0u8; 32];
                let n = gix::zlib::stream::inflate::read(&mut input, &mut state, &mut head)?;
                let (kind, declared, header_len) = gix::objs::decode::loose_header(&head[..n])
                    .map_err(|e| invalid(format!("bad loose object header: {e}")))?;
                if kind != gix::objs::Kind::Blob || declared != size {
                    return Err(invalid(format!(
                        "loose object is a {kind} of {declared} bytes, not a blob of {size}"
                    )));
                }
                let first = &head[header_len..n];
                let left = size
                    .checked_sub(first.len() as u64)
                    .ok_or_else(|| invalid("object larger than its header says".into()))?;
                sink(first)?;
                pump(&mut input, &mut state, left, buf, sink)
            }
            Source::Packed { pack, data_offset } => {
                let mut input = pack
                    .entry_slice(*data_offset..pack.pack_end() as u64)
                    .ok_or_else(|| invalid("pack entry out of bounds".into()))?;
                pump(&mut input, &mut state, size, buf, sink)
            }
        }
    }
}

/// Inflate exactly `left` more bytes from `input` into `sink` and check that the stream ends
/// there.
fn pump(
    input: &mut impl BufRead,
    state: &mut gix::zlib::Decompress,
    mut left: u64,
    buf: &mut [u8],
    sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = gix::zlib::stream::inflate::read(input, state, &mut buf[..want])?;
        if n == 0 {
            return Err(invalid(format!("object truncated: {left} bytes missing")));
        }
        sink(&buf[..n])?;
        left -= n as u64;
    }
    // Nothing may follow: one more byte would mean the object is larger than it says.
    let mut extra = [0u8; 1];
    if gix::zlib::stream::inflate::read(input, state, &mut extra)? != 0 {
        return Err(invalid("object larger than its header says".into()));
    }
    Ok(())
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// The object directories of `repo`: its own, then its alternates'.
pub(crate) fn object_dirs(repo: &gix::Repository) -> Vec<PathBuf> {
    let objects = repo.objects.store_ref().path().to_owned();
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut dirs = vec![objects.clone()];
    dirs.extend(gix::odb::alternate::resolve(objects, &cwd).unwrap_or_default());
    dirs
}

/// The pack indexes under `dirs` (each `pack/*.idx` whose pack exists), most recent first as
/// git prefers them, each with the path of its pack.
pub(crate) fn open_indexes(
    dirs: &[PathBuf],
    hash: gix::hash::Kind,
) -> Vec<(pack::index::File, PathBuf)> {
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir.join("pack")) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "idx") {
                continue;
            }
            let pack_path = path.with_extension("pack");
            let mtime = entry.metadata().and_then(|m| m.modified()).ok();
            if !Path::new(&pack_path).is_file() {
                continue;
            }
            if let Ok(index) = pack::index::File::at(&path, hash) {
                found.push((mtime, index, pack_path));
            }
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, i, p)| (i, p)).collect()
}
