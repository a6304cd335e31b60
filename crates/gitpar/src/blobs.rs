//! The writers' blob reader: one index lookup per blob, and every pack entry inflated once.
//!
//! Reading a blob through the object database costs two lookups (the header, for the budget and
//! the streaming decision, then the object), and the header of a delta inflates the start of its
//! delta data, a whole zlib setup for a few bytes. Worse, gix's pack cache keeps each object it
//! resolved but not the bases of its delta chain, and each writer has its own: on the bench's
//! synthetic tree (deltas against other files of the same tree, chains of three on average) a
//! checkout inflated about two pack entries per file.
//!
//! Here the writers share [`Blobs`], made once per run: a scan of the pooled entries finds each
//! blob's pack entry (one index lookup; the entry header says its size when it is stored whole)
//! and counts, for every entry, how many of the others are deltas against it. A writer decodes a
//! delta's chain from its bottom up, each level with gix-pack's `decode_entry` against the level
//! below, so that every entry is inflated once; whatever the counts say is still a base of an
//! entry to come is kept in one cache for all writers, and dropped once its last delta is
//! written. Everything it cannot handle (loose objects, bases in other packs, sizes above the
//! allowance) is left to the object database, as before. The pack formats are gix-pack's: index
//! lookups, entry headers, inflation and delta application are its functions; only the order
//! of the decoding and the cache are ours.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gix::hash::ObjectId;
use gix::odb::pack;

/// A pack entry, by the position of its pack in [`Blobs`] and its data offset (gix-pack's cache
/// key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    pack: u32,
    offset: u64,
}

/// FxHash over the two numbers of a [`Key`]: the cache is ours and its keys are not chosen by
/// an attacker who could flood one bucket, so SipHash's cost buys nothing here.
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type KeyMap<V> = HashMap<Key, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// Where a pooled entry's blob is stored.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pack: u32,
    entry: pack::data::Entry,
}

impl Located {
    /// The blob's size when it is stored whole (no delta): the entry header says it.
    pub(crate) fn whole_size(&self) -> Option<u64> {
        (self.entry.header == pack::data::entry::Header::Blob)
            .then_some(self.entry.decompressed_size)
    }
}

/// A decoded object kept for the reads still to come.
struct Slot {
    /// Reads of this object still to come: its own (when it is a pooled entry) and those of
    /// the pooled deltas whose base it is.
    pending: u32,
    data: Option<Vec<u8>>,
}

/// The cache of bases shared by the writers.
struct Bases {
    slots: KeyMap<Slot>,
    /// Bytes held in `slots`.
    bytes: usize,
}

/// Shared by the writers of one run: the packs, where each pooled entry's blob is, and the
/// bases still needed.
pub(crate) struct Blobs {
    packs: Vec<(pack::index::File, pack::data::File)>,
    /// Per plan entry: its pack entry, if the scan found it in a pack.
    located: Vec<Option<Located>>,
    bases: Mutex<Bases>,
    /// The most bytes `bases` may hold.
    cap: usize,
}

/// What one writer keeps between blobs: its inflate state, the last object it decoded (the base
/// of the next level of a chain) and the chain being decoded.
#[derive(Default)]
pub(crate) struct Reader {
    inflate: gix::zlib::Inflate,
    last: Option<(Key, gix::objs::Kind, Vec<u8>)>,
    chain: Vec<pack::data::Entry>,
}

/// Why [`Blobs::read`] did not produce the blob: the caller reads it through the object
/// database, which reports errors in git's words.
#[derive(Debug)]
pub(crate) struct Fallback;

impl Blobs {
    /// Open the packs of `repo` (its own and its alternates') and find the blob of every plan
    /// entry `entries` names. `cap` bounds the bytes of shared bases, `limit` the memory one
    /// delta's decoding may take (gix-pack's allocation limit; larger ones fall back).
    pub(crate) fn new(
        repo: &gix::Repository,
        plan: &crate::plan::Plan,
        entries: impl Iterator<Item = usize>,
        cap: usize,
        limit: usize,
    ) -> Blobs {
        let mut packs = open_packs(repo);
        for (n, (_, pack)) in packs.iter_mut().enumerate() {
            pack.id = u32::try_from(n).unwrap_or(u32::MAX);
            pack.alloc_limit_bytes = Some(limit.max(1));
        }
        let mut blobs = Blobs {
            packs,
            located: vec![None; plan.entries.len()],
            bases: Mutex::new(Bases {
                slots: KeyMap::default(),
                bytes: 0,
            }),
            cap,
        };
        if blobs.packs.is_empty() {
            return blobs;
        }
        let bases = blobs
            .bases
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        // The index lookups first, then the entry headers in pack order: the headers (and the
        // bases' headers, mostly just before them) are read front to back through the mapped
        // pack instead of at random, which halves the scan's cache misses and page faults.
        let mut found: Vec<(u32, u64, usize)> = entries
            .filter_map(|e| {
                let (n, offset) = find_offset(&blobs.packs, &plan.entries[e].id)?;
                Some((n, offset, e))
            })
            .collect();
        found.sort_unstable();
        for (n, offset, e) in found {
            let Ok(entry) = blobs.packs[n as usize].1.entry(offset) else {
                continue;
            };
            let located = Located { pack: n, entry };
            let own = Key {
                pack: located.pack,
                offset: located.entry.data_offset,
            };
            for key in std::iter::once(own).chain(base_of(&blobs.packs, &located)) {
                bases
                    .slots
                    .entry(key)
                    .or_insert(Slot {
                        pending: 0,
                        data: None,
                    })
                    .pending += 1;
            }
            blobs.located[e] = Some(located);
        }
        blobs
    }

    /// Where plan entry `e`'s blob is, if the scan found it in a pack.
    pub(crate) fn located(&self, e: usize) -> Option<&Located> {
        self.located.get(e).and_then(Option::as_ref)
    }

    /// Decode the object at `located` into `out` (cleared first) and return its kind. Each
    /// entry of its delta chain is inflated at most once per run as long as the cache holds
    /// what is still needed.
    pub(crate) fn read(
        &self,
        reader: &mut Reader,
        located: &Located,
        out: &mut Vec<u8>,
    ) -> Result<gix::objs::Kind, Fallback> {
        let pack = &self.packs[located.pack as usize].1;
        let key = Key {
            pack: located.pack,
            offset: located.entry.data_offset,
        };
        out.clear();
        if self.take(key, out) {
            return Ok(gix::objs::Kind::Blob);
        }
        // The chain from this entry down to a whole object or one this writer or the cache has.
        let mut chain = std::mem::take(&mut reader.chain);
        chain.clear();
        let mut cursor = located.entry.clone();
        let bottom_cached = loop {
            let here = Key {
                pack: located.pack,
                offset: cursor.data_offset,
            };
            if !chain.is_empty()
                && (reader.last.as_ref().is_some_and(|(k, _, _)| *k == here) || self.has(here))
            {
                break true;
            }
            if !cursor.header.is_delta() {
                break false;
            }
            let base = match base_entry(pack, &self.packs[located.pack as usize].0, &cursor) {
                Some(base) => base,
                None => {
                    reader.chain = chain;
                    return Err(Fallback);
                }
            };
            chain.push(std::mem::replace(&mut cursor, base));
            if chain.len() > MAX_CHAIN {
                reader.chain = chain;
                return Err(Fallback);
            }
        };
        let result = self.decode_chain(
            reader,
            pack,
            located.pack,
            &chain,
            cursor,
            bottom_cached,
            out,
        );
        reader.chain = chain;
        result
    }

    /// Decode `bottom` (unless it is cached) and then each level of `chain` from the last (the
    /// one right above `bottom`) to the first, the object wanted, which ends up in `out`.
    #[allow(clippy::too_many_arguments)]
    fn decode_chain(
        &self,
        reader: &mut Reader,
        pack: &pack::data::File,
        pack_id: u32,
        chain: &[pack::data::Entry],
        bottom: pack::data::Entry,
        bottom_cached: bool,
        out: &mut Vec<u8>,
    ) -> Result<gix::objs::Kind, Fallback> {
        if !bottom_cached {
            let kind = bottom.header.as_kind().ok_or(Fallback)?;
            let size = usize::try_from(bottom.decompressed_size).map_err(|_| Fallback)?;
            if pack.alloc_limit_bytes.is_some_and(|limit| size > limit) && !chain.is_empty() {
                return Err(Fallback);
            }
            let mut buf = if chain.is_empty() {
                std::mem::take(out)
            } else {
                reader.last.take().map(|(_, _, b)| b).unwrap_or_default()
            };
            buf.clear();
            buf.resize(size, 0);
            let inflated = pack.decompress_entry(&bottom, &mut reader.inflate, &mut buf);
            let key = Key {
                pack: pack_id,
                offset: bottom.data_offset,
            };
            if inflated.is_err() {
                if chain.is_empty() {
                    *out = buf;
                }
                return Err(Fallback);
            }
            if chain.is_empty() {
                self.keep(key, kind, &buf, true);
                *out = buf;
                return Ok(kind);
            }
            self.keep(key, kind, &buf, false);
            reader.last = Some((key, kind, buf));
        }
        let mut kind = gix::objs::Kind::Blob;
        let mut spare = Vec::new();
        for (level, entry) in chain.iter().enumerate().rev() {
            let mut cache = Adapter {
                blobs: self,
                last: &mut reader.last,
                put: None,
            };
            let mut buf = if level == 0 {
                std::mem::take(out)
            } else {
                std::mem::take(&mut spare)
            };
            let resolve = |id: &gix::hash::oid, _: &mut Vec<u8>| {
                let (index, _) = &self.packs[pack_id as usize];
                Ok(index
                    .lookup(id)
                    .and_then(|i| pack.entry(index.pack_offset_at_index(i)).ok())
                    .map(pack::data::decode::entry::ResolvedBase::InPack))
            };
            let decoded = pack.decode_entry(
                entry.clone(),
                &mut buf,
                &mut reader.inflate,
                &resolve,
                &mut cache,
            );
            let put = cache.put.take();
            match decoded {
                Ok(outcome) => kind = outcome.kind,
                Err(_) => {
                    if level == 0 {
                        *out = buf;
                    }
                    return Err(Fallback);
                }
            }
            let key = Key {
                pack: pack_id,
                offset: entry.data_offset,
            };
            debug_assert!(put.is_none_or(|k| k == key));
            self.keep(key, kind, &buf, level == 0);
            if level == 0 {
                *out = buf;
            } else if let Some((_, _, b)) = reader.last.replace((key, kind, buf)) {
                spare = b;
            }
        }
        Ok(kind)
    }

    /// Returns true if and only if the cache holds the object at `key`.
    fn has(&self, key: Key) -> bool {
        let bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
        bases.slots.get(&key).is_some_and(|s| s.data.is_some())
    }

    /// Keep a copy of `data`, decoded from `key`, when reads of it are still to come and the
    /// cache has room; `read` counts one of them as done now (the pooled entry `key` itself).
    /// Only blobs are kept (the checkout reads nothing else).
    fn keep(&self, key: Key, kind: gix::objs::Kind, data: &[u8], read: bool) {
        if kind != gix::objs::Kind::Blob {
            return;
        }
        let mut bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
        let Bases { slots, bytes } = &mut *bases;
        let Some(slot) = slots.get_mut(&key) else {
            return;
        };
        if read {
            slot.pending = slot.pending.saturating_sub(1);
            if slot.pending == 0 {
                if let Some(data) = slot.data.take() {
                    *bytes -= data.len();
                }
                slots.remove(&key);
                return;
            }
        }
        if slot.data.is_some() || slot.pending == 0 || *bytes + data.len() > self.cap {
            return;
        }
        *bytes += data.len();
        slot.data = Some(data.to_vec());
    }

    /// Count a read of the object at `key` done elsewhere (from a writer's last object): the
    /// last read frees it.
    fn used(&self, key: Key) {
        let mut bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
        let Bases { slots, bytes } = &mut *bases;
        let Some(slot) = slots.get_mut(&key) else {
            return;
        };
        slot.pending = slot.pending.saturating_sub(1);
        if slot.pending == 0 {
            if let Some(data) = slot.data.take() {
                *bytes -= data.len();
            }
            slots.remove(&key);
        }
    }

    /// Copy the cached object at `key` into `out` and count the read: the last read frees it.
    fn take(&self, key: Key, out: &mut Vec<u8>) -> bool {
        let mut bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
        let Bases { slots, bytes } = &mut *bases;
        let Some(slot) = slots.get_mut(&key) else {
            return false;
        };
        let Some(data) = slot.data.as_ref() else {
            return false;
        };
        slot.pending = slot.pending.saturating_sub(1);
        if slot.pending > 0 {
            out.clear();
            out.extend_from_slice(data);
            return true;
        }
        // The last read takes the copy itself, unless `out` (a writer's buffer, kept from file
        // to file) can hold it: its capacity is worth more than a copy of a small blob, which
        // a cached object's exact-sized allocation would otherwise replace, to be grown again
        // (realloc, fresh pages) by the next delta decoded into it.
        if let Some(data) = slot.data.take() {
            *bytes -= data.len();
            if out.capacity() >= data.len() {
                out.clear();
                out.extend_from_slice(&data);
            } else {
                *out = data;
            }
        }
        slots.remove(&key);
        true
    }
}

/// Chains longer than this (git packs at most 50 deep by default, 4095 at most) are left to the
/// object database.
const MAX_CHAIN: usize = 10_000;

/// gix-pack's cache interface over the writer's last object and the shared bases.
struct Adapter<'a> {
    blobs: &'a Blobs,
    last: &'a mut Option<(Key, gix::objs::Kind, Vec<u8>)>,
    /// The key gix-pack stored its result under (the caller keeps it).
    put: Option<Key>,
}

impl pack::cache::DecodeEntry for Adapter<'_> {
    fn put(
        &mut self,
        pack_id: u32,
        offset: u64,
        _data: &[u8],
        _kind: gix::objs::Kind,
        _compressed_size: usize,
    ) {
        self.put = Some(Key {
            pack: pack_id,
            offset,
        });
    }

    fn get(
        &mut self,
        pack_id: u32,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Option<(gix::objs::Kind, usize)> {
        let key = Key {
            pack: pack_id,
            offset,
        };
        if let Some((k, kind, data)) = self.last.as_ref() {
            if *k == key {
                out.clear();
                out.extend_from_slice(data);
                self.blobs.used(key);
                return Some((*kind, 0));
            }
        }
        self.blobs
            .take(key, out)
            .then_some((gix::objs::Kind::Blob, 0))
    }
}

/// The pack (its position in `packs`) and the offset of `id`'s entry, in the first pack whose index
/// has it.
fn find_offset(
    packs: &[(pack::index::File, pack::data::File)],
    id: &ObjectId,
) -> Option<(u32, u64)> {
    packs.iter().enumerate().find_map(|(n, (index, _))| {
        let i = index.lookup(id)?;
        Some((u32::try_from(n).ok()?, index.pack_offset_at_index(i)))
    })
}

/// The key of the base of `located`'s entry, if it is a delta against an entry of its pack.
fn base_of(packs: &[(pack::index::File, pack::data::File)], located: &Located) -> Option<Key> {
    let (index, pack) = &packs[located.pack as usize];
    let base = base_entry(pack, index, &located.entry)?;
    Some(Key {
        pack: located.pack,
        offset: base.data_offset,
    })
}

/// The entry `entry` is a delta against, when it is one, in the same pack.
fn base_entry(
    pack: &pack::data::File,
    index: &pack::index::File,
    entry: &pack::data::Entry,
) -> Option<pack::data::Entry> {
    match &entry.header {
        pack::data::entry::Header::OfsDelta { base_distance } => pack
            .entry(entry.checked_base_pack_offset(*base_distance)?)
            .ok(),
        pack::data::entry::Header::RefDelta { base_id } => {
            let i = index.lookup(base_id)?;
            pack.entry(index.pack_offset_at_index(i)).ok()
        }
        _ => None,
    }
}

/// The packs under the object directories of `repo` (its own and its alternates'), each
/// `pack/*.idx` whose pack exists and opens, most recent first as git prefers them: the
/// indexes [`crate::stream`] finds for big blobs, each with its pack mapped.
fn open_packs(repo: &gix::Repository) -> Vec<(pack::index::File, pack::data::File)> {
    let hash = repo.object_hash();
    crate::stream::open_indexes(&crate::stream::object_dirs(repo), hash)
        .into_iter()
        .filter_map(|(index, pack_path)| {
            Some((index, pack::data::File::at(&pack_path, hash).ok()?))
        })
        .collect()
}
