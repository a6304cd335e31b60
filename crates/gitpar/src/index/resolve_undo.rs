//! The index's resolve-undo extension (`REUC`): the conflict stages git remembers for a path
//! after it was resolved (`git add`, `git rm`), so that `git checkout -m -- <path>` and
//! `git restore --merge <path>` can recreate the conflict (git's `unmerge_index`).
//!
//! gix-index 0.58 decodes `REUC` but keeps its fields private, so the extension is read here
//! from the index file itself: the entries are skipped (versions 2, 3 and 4), then the
//! extensions are walked until `REUC` is found. This module only reads the index, inside the
//! git directory; it never touches a work tree.

use std::path::Path;

use bstr::BString;
use gix::hash::ObjectId;

/// One resolved path and the stages it had: `stages[0]` is the base (stage 1), `stages[1]`
/// ours (stage 2), `stages[2]` theirs (stage 3); `None` where the conflict lacked the stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Repository-relative path.
    pub path: BString,
    /// Mode (as in the index: `0o100644`, ...) and object id of each stage.
    pub stages: [Option<(u32, ObjectId)>; 3],
}

/// The `REUC` payload for `records` (sorted by path, as git keeps them), git's
/// `resolve_undo_write`: per path the path and NUL, the three modes in octal each with a NUL
/// (`0` for a missing stage), then the object ids of the stages that exist.
pub fn encode(records: &[ResolvedPath]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&r.path);
        out.push(0);
        for stage in &r.stages {
            let mode = stage.map_or(0, |(mode, _)| mode);
            out.extend_from_slice(format!("{mode:o}").as_bytes());
            out.push(0);
        }
        for (_, id) in r.stages.iter().flatten() {
            out.extend_from_slice(id.as_bytes());
        }
    }
    out
}

/// The resolve-undo records of `index`, read from its file only when gix saw a `REUC`
/// extension there (most indexes have none, and then nothing is read again).
pub fn of(index: &gix::index::File) -> Vec<ResolvedPath> {
    if index.resolve_undo().is_none() {
        return Vec::new();
    }
    read(index.path(), index.object_hash())
}

/// The resolve-undo records of the index at `index_path`, in the order git wrote them; empty
/// when the index or the extension is missing, or cannot be parsed (git then has nothing to
/// unmerge either).
fn read(index_path: &Path, hash: gix::hash::Kind) -> Vec<ResolvedPath> {
    std::fs::read(index_path)
        .ok()
        .and_then(|data| parse(&data, hash))
        .unwrap_or_default()
}

/// Parse the `REUC` extension out of a whole index file.
fn parse(data: &[u8], hash: gix::hash::Kind) -> Option<Vec<ResolvedPath>> {
    let hash_len = hash.len_in_bytes();
    if data.len() < 12 + hash_len || &data[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(data[4..8].try_into().ok()?);
    let count = u32::from_be_bytes(data[8..12].try_into().ok()?);
    let mut pos = 12;
    // The fixed part of an entry: ctime, mtime, dev, ino, mode, uid, gid, size (40 bytes),
    // the object id, the 16-bit flags.
    let fixed = 40 + hash_len + 2;
    for _ in 0..count {
        let flags = u16::from_be_bytes(data.get(pos + fixed - 2..pos + fixed)?.try_into().ok()?);
        let extended = version >= 3 && flags & 0x4000 != 0;
        let start = pos + fixed + if extended { 2 } else { 0 };
        if version == 4 {
            // varint (bytes to drop from the previous path), then the NUL-terminated suffix.
            let mut p = start;
            while *data.get(p)? & 0x80 != 0 {
                p += 1;
            }
            p += 1;
            let nul = data.get(p..)?.iter().position(|&b| b == 0)?;
            pos = p + nul + 1;
        } else {
            let nul = data.get(start..)?.iter().position(|&b| b == 0)?;
            let entry_len = start - pos + nul;
            // git's `ondisk_ce_size`: padded with 1 to 8 NULs to a multiple of 8.
            pos += (entry_len + 8) & !7;
        }
    }
    let end = data.len() - hash_len;
    while pos + 8 <= end {
        let signature = &data[pos..pos + 4];
        let size = u32::from_be_bytes(data[pos + 4..pos + 8].try_into().ok()?) as usize;
        let body = data.get(pos + 8..pos + 8 + size)?;
        if signature == b"REUC" {
            return decode(body, hash_len);
        }
        pos += 8 + size;
    }
    None
}

/// Decode the body of `REUC`: per path, the NUL-terminated path, three NUL-terminated octal
/// modes, and one raw object id per non-zero mode.
fn decode(mut data: &[u8], hash_len: usize) -> Option<Vec<ResolvedPath>> {
    let mut out = Vec::new();
    let next = |data: &mut &[u8]| -> Option<Vec<u8>> {
        let nul = data.iter().position(|&b| b == 0)?;
        let item = data[..nul].to_vec();
        *data = &data[nul + 1..];
        Some(item)
    };
    while !data.is_empty() {
        let path = next(&mut data)?;
        let mut modes = [0u32; 3];
        for mode in &mut modes {
            let text = next(&mut data)?;
            *mode = u32::from_str_radix(std::str::from_utf8(&text).ok()?, 8).ok()?;
        }
        let mut stages = [None; 3];
        for (mode, stage) in modes.iter().zip(stages.iter_mut()) {
            if *mode == 0 {
                continue;
            }
            let id = ObjectId::try_from(data.get(..hash_len)?).ok()?;
            data = &data[hash_len..];
            *stage = Some((*mode, id));
        }
        out.push(ResolvedPath {
            path: path.into(),
            stages,
        });
    }
    Some(out)
}
