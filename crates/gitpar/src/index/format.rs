//! The index file's layout: the version and options git would write it with, an entry's length
//! in it, and git's varint. What the index extensions and the writers share of the format.

use gix::index::entry::Flags;
use gix::index::State;

/// How the index file is laid out, decided from the configuration and the previous index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// 4 for path-compressed entries; otherwise 2 or 3 is chosen from the entries.
    pub version4: bool,
    /// `index.skipHash`: write a null checksum.
    pub skip_hash: bool,
    /// Write the end-of-index-entries extension.
    pub eoie: bool,
}

impl Format {
    /// The format git would write for `repo`, replacing `previous` (if any).
    ///
    /// The version comes from `previous` when there is one; otherwise `GIT_INDEX_VERSION`, else
    /// `index.version`, else 4 under `feature.manyFiles`, else git's default (3, demoted to 2).
    /// An invalid value falls back to git's default, as git does (git also warns).
    pub fn of(repo: &gix::Repository, previous: Option<&State>) -> Format {
        let config = repo.config_snapshot();
        let many_files = config.boolean("feature.manyFiles").unwrap_or(false);
        let valid = |v: i64| (2..=4).contains(&v).then_some(v);
        let version = match previous {
            Some(previous) => previous.version() as i64,
            None => match std::env::var("GIT_INDEX_VERSION") {
                Ok(env) => env.parse().ok().and_then(valid).unwrap_or(3),
                Err(_) => match config.integer("index.version") {
                    Some(v) => valid(v).unwrap_or(3),
                    None if many_files => 4,
                    None => 3,
                },
            },
        };
        let threads = config
            .integer("index.threads")
            .map(|n| n != 1)
            .or_else(|| config.boolean("index.threads"))
            .unwrap_or(false);
        Format {
            version4: version == 4,
            skip_hash: config.boolean("index.skipHash").unwrap_or(many_files),
            eoie: config
                .boolean("index.recordEndOfIndexEntries")
                .unwrap_or(threads),
        }
    }
}

/// Whether the engine reads an index without hashing it first (gix-index's `skip_hash`): git
/// never checks an index's checksum when it reads one, only `git fsck` does (read-cache.c's
/// `verify_hdr` returns early unless `verify_index_checksum` is set), so hashing a 40,000-entry
/// index before every switch costs milliseconds git does not spend. A damaged index still fails
/// to parse, with gix's error.
pub(crate) const SKIP_HASH_ON_READ: bool = true;

/// The stat data of an entry in a version 2 or 3 index file: ctime, mtime (seconds and
/// nanoseconds), dev, ino, mode, uid, gid, size, 32 bits each.
pub(crate) const STAT: usize = 40;

/// The length of `entry` in a version 2 or 3 index file: gix's `write_to` length (stat data,
/// object id, flags, extended flags, path and its NUL) padded with NULs to a multiple of 8, as
/// git writes these versions. What `record::commit_refreshed` needs to find an entry's bytes.
pub(crate) fn entry_size(entry: &gix::index::Entry, state: &State) -> usize {
    let extended = if entry.flags.contains(Flags::EXTENDED) {
        2
    } else {
        0
    };
    (STAT + state.object_hash().len_in_bytes() + 2 + extended + entry.path(state).len() + 1)
        .next_multiple_of(8)
}

/// git's `encode_varint` (varint.c): big-endian base-128 where each continuation adds one.
pub(crate) fn encode_varint(mut value: u64, out: &mut Vec<u8>) {
    let mut bytes = [0u8; 16];
    let mut pos = bytes.len() - 1;
    bytes[pos] = (value & 127) as u8;
    value >>= 7;
    while value != 0 {
        value -= 1;
        pos -= 1;
        bytes[pos] = 128 | (value & 127) as u8;
        value >>= 7;
    }
    out.extend_from_slice(&bytes[pos..]);
}
