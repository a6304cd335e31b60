//! The writers' blob reader: every pack entry a checkout needs is inflated about once, and a
//! delta is applied straight from its shared base into the writer's buffer.
//!
//! Reading a blob through the object database costs two lookups (the header, for the budget and
//! the streaming decision, then the object), and gix's pack cache keeps the objects it resolved
//! but not the intermediate objects of their delta chains. Real repositories are packed with
//! chains up to 50 deep whose lower levels are older versions that no checked-out file needs
//! itself (git/git: 4,846 blobs checked out, 8,009 objects in their chains), so two files whose
//! chains meet below their own bases decoded the shared part twice.
//!
//! Here the writers share [`Blobs`], made once per run. A scan of the pooled entries finds each
//! blob's pack entry (one index lookup, entry headers read in pack order) and follows its chain
//! down to a whole object or to a node already known, so that the union of all chains is one
//! forest of [`Node`]s with, for each node, the number of uses still to come: one per delta
//! decoded from it, one per file written from it. A writer decodes a chain from the nearest
//! cached node (or the whole object at its bottom) upwards; a node whose uses are not all done
//! is kept in one cache for all writers, and dropped at its last use, so that every node is
//! decoded once as long as the cache holds what is still needed. A delta level costs one
//! inflate of its instructions and one application (gix-pack's `delta::apply`) from the base
//! in the cache into a buffer the writer reuses: no copy of the base, no zero-filled scratch
//! space. Everything it cannot handle (loose objects, bases in other packs, objects above the
//! allowance) is left to the object database, as before. The pack formats are gix-pack's: index
//! lookups, entry headers, inflation and delta application are its functions; only the order of
//! the decoding, the counts and the cache are ours.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use gix::hash::ObjectId;
use gix::odb::pack;

/// No node: a node without base (a whole object), or a plan entry the scan did not find.
const NONE: u32 = u32::MAX;

/// A node whose base could not be resolved in its pack (a ref-delta against an object stored
/// elsewhere): it and everything above it are read through the object database.
const UNRESOLVED: u32 = u32::MAX - 1;

/// No base offset to link (a whole object, or a node already linked) in [`Scan::bases`].
const NO_BASE: u64 = u64::MAX;

/// Chains longer than this (git packs at most 50 deep by default, 4095 at most) are left to the
/// object database; it also stops a walk round a cycle in a corrupt pack.
const MAX_CHAIN: usize = 10_000;

/// Spare buffers a writer keeps for the intermediate levels of its chains, and the cache keeps
/// of the nodes it freed: their pages stay faulted in for the next object instead of being
/// returned and faulted in again (a fresh 4 KiB page costs about 2 µs here).
const SPARE: usize = 4;

/// One pack entry of the union of the pooled blobs' delta chains.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Where its compressed data starts in its pack (gix-pack's `data_offset`).
    data_offset: u64,
    /// Its inflated size: the object's for a whole entry, the instructions' for a delta.
    size: u64,
    /// The node it is a delta against; [`NONE`] for a whole object, [`UNRESOLVED`] when the
    /// base is not in the same pack.
    base: u32,
    /// The position of its pack in [`Blobs::packs`].
    pack: u16,
    /// Whether it is a whole blob (the only whole objects a checkout decodes); a whole entry of
    /// another kind is left to the object database, which reports it.
    blob: bool,
}

impl Node {
    /// Returns true if and only if the node is a delta.
    fn is_delta(&self) -> bool {
        self.base != NONE
    }

    /// The gix-pack entry to inflate: only the size and the data offset are read.
    fn entry(&self) -> pack::data::Entry {
        pack::data::Entry {
            header: pack::data::entry::Header::Blob,
            decompressed_size: self.size,
            data_offset: self.data_offset,
            encoded_header_size: 0,
        }
    }
}

/// Where a pooled entry's blob is: a node of [`Blobs`], and its size when it is stored whole.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Located {
    node: u32,
    whole: Option<u64>,
}

impl Located {
    /// The blob's size when it is stored whole (no delta): the entry header says it.
    pub(crate) fn whole_size(&self) -> Option<u64> {
        self.whole
    }
}

/// What the writers share of the nodes while they decode: the uses still to come, which
/// nodes have counted their use of their base, and the decoded nodes kept for later uses.
struct Cache {
    /// Per node: uses still to come (deltas against it still to decode, files to write from it).
    pending: Vec<u32>,
    /// Per node: whether its first decoding has counted its use of its base (a node decoded
    /// again after the cache dropped it must not count it twice).
    counted: Vec<bool>,
    /// Decoded nodes with uses to come, shared with the writers decoding from them.
    data: FastMap<u32, Arc<Vec<u8>>>,
    /// Bytes held in `data`.
    bytes: usize,
    /// Buffers of freed nodes, handed to the next writer that needs one.
    free: Vec<Vec<u8>>,
}

/// A multiplicative hash of node numbers and pack offsets: the maps are ours and their keys are
/// numbers no attacker chooses, so SipHash's cost buys nothing here.
#[derive(Default, Clone, Copy)]
struct FastHasher(u64);

type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Cache {
    /// Count one use of `node` done; at its last, drop its decoded copy and keep the buffer.
    fn used(&mut self, node: u32) {
        let Some(pending) = self.pending.get_mut(node as usize) else {
            return;
        };
        *pending = pending.saturating_sub(1);
        if *pending == 0 {
            if let Some(data) = self.data.remove(&node) {
                self.bytes -= data.len();
                if let Ok(buf) = Arc::try_unwrap(data) {
                    self.recycle(buf);
                }
            }
        }
    }

    /// Keep `buf` for reuse, unless enough are kept already.
    fn recycle(&mut self, buf: Vec<u8>) {
        if self.free.len() < SPARE && buf.capacity() > 0 {
            self.free.push(buf);
        }
    }
}

/// Shared by the writers of one run: the packs, the nodes of the pooled blobs' chains, and what
/// is decoded of them for uses to come.
pub(crate) struct Blobs {
    /// The packs' data; their indexes are needed by the scan only, and dropped after it (a
    /// million objects' index is 28 MiB of mapped pages).
    packs: Vec<pack::data::File>,
    /// Per plan entry: its node, [`NONE`] if the scan did not find it in a pack.
    located: Vec<u32>,
    nodes: Vec<Node>,
    cache: Mutex<Cache>,
    /// The most bytes the cache may hold.
    cap: usize,
    /// The largest object or delta a writer decodes itself (its allowance); larger ones are
    /// left to the object database, whose header says the size before the object is read.
    limit: u64,
}

/// What one writer keeps between blobs: its inflate state, the buffer of delta instructions,
/// spare buffers for intermediate objects, and the chain being decoded.
#[derive(Default)]
pub(crate) struct Reader {
    inflate: gix::zlib::Inflate,
    instructions: Vec<u8>,
    spare: Vec<Vec<u8>>,
    chain: Vec<u32>,
}

impl Reader {
    /// An empty buffer for an intermediate object: a spare one of this writer, else one the
    /// cache freed, else a new one.
    fn buffer(&mut self, cache: &Mutex<Cache>) -> Vec<u8> {
        if let Some(buf) = self.spare.pop() {
            return buf;
        }
        lock(cache).free.pop().unwrap_or_default()
    }

    /// Keep `base` (a level just applied) for reuse if it is this writer's alone.
    fn release(&mut self, base: Base) {
        let buf = match base {
            Base::Own(buf) => buf,
            Base::Shared(data) => match Arc::try_unwrap(data) {
                Ok(buf) => buf,
                Err(_) => return,
            },
        };
        if self.spare.len() < SPARE {
            self.spare.push(buf);
        }
    }
}

/// The object a delta level is applied to.
enum Base {
    /// Decoded by this writer and kept by nobody else.
    Own(Vec<u8>),
    /// In the cache (or just taken out of it), shared with other writers.
    Shared(Arc<Vec<u8>>),
}

impl Base {
    fn bytes(&self) -> &[u8] {
        match self {
            Base::Own(buf) => buf,
            Base::Shared(data) => data,
        }
    }
}

/// Why [`Blobs::read`] did not produce the blob: the caller reads it through the object
/// database, which reports errors in git's words.
#[derive(Debug)]
pub(crate) struct Fallback;

fn lock(cache: &Mutex<Cache>) -> std::sync::MutexGuard<'_, Cache> {
    cache.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Blobs {
    /// Open the packs of `repo` (its own and its alternates') and find the blob of every plan
    /// entry `entries` names, with the chains below them. `cap` bounds the bytes the cache
    /// holds, `limit` the size of an object or delta a writer decodes itself (larger ones fall
    /// back to the object database).
    pub(crate) fn new(
        repo: &gix::Repository,
        plan: &crate::plan::Plan,
        entries: impl Iterator<Item = usize>,
        cap: usize,
        limit: usize,
    ) -> Blobs {
        let indexed = open_packs(repo);
        let mut blobs = Blobs {
            packs: Vec::new(),
            located: vec![NONE; plan.entries.len()],
            nodes: Vec::new(),
            cache: Mutex::new(Cache {
                pending: Vec::new(),
                counted: Vec::new(),
                data: HashMap::default(),
                bytes: 0,
                free: Vec::new(),
            }),
            cap,
            limit: u64::try_from(limit).unwrap_or(u64::MAX),
        };
        if indexed.is_empty() || indexed.len() > usize::from(u16::MAX) {
            blobs.packs = indexed.into_iter().map(|(_, pack)| pack).collect();
            return blobs;
        }
        let mut scan = Scan {
            packs: &indexed,
            nodes: Vec::new(),
            pending: Vec::new(),
            bases: Vec::new(),
            pooled: Vec::new(),
            extra: FastMap::default(),
        };
        // The index lookups first, then the entry headers in pack order: the headers (and the
        // bases' headers, mostly just before them) are read front to back through the mapped
        // pack instead of at random, which halves the scan's cache misses and page faults.
        let mut found = {
            let mut wanted: Vec<(ObjectId, u32)> = entries
                .filter_map(|e| Some((plan.entries[e].id, u32::try_from(e).ok()?)))
                .collect();
            find_offsets(&indexed, &mut wanted)
        };
        crate::sys::phase::mark("pack index lookups");
        // Each found entry becomes a node (the same blob at several paths one node, with a use
        // for each file), and `found` the list of pooled nodes by pack and offset, in place.
        let mut last: Option<(u16, u64, u32)> = None;
        for i in 0..found.len() {
            // The headers are read in pack order, but kilobytes apart: too far for the CPU to
            // fetch them ahead by itself.
            if let Some(&(n, offset, _)) = found.get(i + AHEAD) {
                prefetch(&indexed[usize::from(n)].1, offset);
            }
            let item = &mut found[i];
            let (n, offset, e) = *item;
            let node = match last {
                Some((p, o, node)) if (p, o) == (n, offset) => node,
                _ => match scan.add(n, offset) {
                    Some(node) => node,
                    None => NONE,
                },
            };
            last = Some((n, offset, node));
            item.2 = node;
            if node != NONE {
                scan.pending[node as usize] += 1;
                blobs.located[e as usize] = node;
            }
        }
        scan.pooled = found;
        crate::sys::phase::mark("pack entry headers");
        // Link every pooled node to its base, adding the bases no pooled entry names, and
        // theirs, down to a whole object or a node already linked.
        for i in 0..scan.pooled.len() {
            let mut node = scan.pooled[i].2;
            if node == NONE {
                continue;
            }
            while let Some(next) = scan.link(node) {
                node = next;
            }
        }
        let Scan { nodes, pending, .. } = scan;
        let cache = blobs
            .cache
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        cache.counted = vec![false; nodes.len()];
        cache.pending = pending;
        blobs.nodes = nodes;
        blobs.packs = indexed.into_iter().map(|(_, pack)| pack).collect();
        blobs
    }

    /// Where plan entry `e`'s blob is, if the scan found it in a pack.
    pub(crate) fn located(&self, e: usize) -> Option<Located> {
        let node = *self.located.get(e)?;
        let n = self.nodes.get(node as usize)?;
        Some(Located {
            node,
            whole: (!n.is_delta() && n.blob).then_some(n.size),
        })
    }

    /// The size of the blob at `located`: its entry header's for a whole blob, else the
    /// result size at the head of its delta (its first bytes inflated, as git's
    /// `packed_object_info` probes it); `None` if that cannot be read.
    pub(crate) fn size(&self, reader: &mut Reader, located: &Located) -> Option<u64> {
        if let Some(size) = located.whole {
            return Some(size);
        }
        let n = self.nodes.get(located.node as usize)?;
        let pack = self.packs.get(usize::from(n.pack))?;
        let input = pack.entry_slice(n.data_offset..u64::try_from(pack.pack_end()).ok()?)?;
        let mut head = [0u8; 20];
        let want = usize::try_from(n.size).map_or(head.len(), |s| s.min(head.len()));
        reader.inflate.reset();
        let (_, _, out) = reader.inflate.once(input, &mut head[..want]).ok()?;
        let head = &head[..out];
        let (_, used) = pack::data::delta::decode_header_size(head).ok()?;
        let (size, _) = pack::data::delta::decode_header_size(head.get(used..)?).ok()?;
        Some(size)
    }

    /// Count the blob at `located` as written without being read (a file cloned from a
    /// donor): its use goes, and where it was the last use of a node never decoded, that
    /// node's use of its base, down the chain, so that bases kept for it are freed.
    pub(crate) fn skip(&self, located: &Located) {
        let mut cache = lock(&self.cache);
        let mut node = located.node;
        cache.used(node);
        loop {
            let n = self.nodes[node as usize];
            if !n.is_delta()
                || n.base == UNRESOLVED
                || cache.pending[node as usize] > 0
                || std::mem::replace(&mut cache.counted[node as usize], true)
            {
                break;
            }
            cache.used(n.base);
            node = n.base;
        }
    }

    /// Decode the blob at `located` into the first bytes of `out` and return its length: `out`
    /// keeps a longer length from an earlier blob (its bytes are overwritten, not zero-filled
    /// first) and grows where this one is longer. Each node of its delta chain is decoded at
    /// most once per run as long as the cache holds what is still needed.
    pub(crate) fn read(
        &self,
        reader: &mut Reader,
        located: &Located,
        out: &mut Vec<u8>,
    ) -> Result<usize, Fallback> {
        let target = located.node;
        // The chain from the target down to the lowest node to decode, and the cached node
        // below it, if any: one look at the cache for the whole walk.
        let mut chain = std::mem::take(&mut reader.chain);
        chain.clear();
        let bottom = {
            let cache = lock(&self.cache);
            if let Some(data) = cache.data.get(&target).cloned() {
                drop(cache);
                return Ok(self.take(target, data, out));
            }
            let mut node = target;
            loop {
                chain.push(node);
                let base = self.nodes[node as usize].base;
                if base == NONE {
                    break None;
                }
                if base == UNRESOLVED || chain.len() > MAX_CHAIN {
                    reader.chain = chain;
                    return Err(Fallback);
                }
                if let Some(data) = cache.data.get(&base) {
                    break Some(Base::Shared(Arc::clone(data)));
                }
                node = base;
            }
        };
        let result = self.decode_chain(reader, &chain, bottom, out);
        reader.chain = chain;
        result
    }

    /// The cached copy of `target`, a pooled entry decoded earlier as the base of another, into
    /// `out`; its use is counted, and the last use takes the copy itself when nobody else
    /// holds it and `out` is too small to take it by a copy.
    fn take(&self, target: u32, data: Arc<Vec<u8>>, out: &mut Vec<u8>) -> usize {
        out.clear();
        out.extend_from_slice(&data);
        drop(data);
        lock(&self.cache).used(target);
        out.len()
    }

    /// Decode the nodes of `chain` (the target first, the lowest last) from the bottom up:
    /// the lowest from `bottom` (the cached base it is a delta against) or inflated whole, each
    /// one above it applied to the one below. The target ends up in `out`.
    fn decode_chain(
        &self,
        reader: &mut Reader,
        chain: &[u32],
        bottom: Option<Base>,
        out: &mut Vec<u8>,
    ) -> Result<usize, Fallback> {
        let mut base = bottom;
        let mut len = 0;
        for (level, &node) in chain.iter().enumerate().rev() {
            let n = self.nodes[node as usize];
            let pack = &self.packs[usize::from(n.pack)];
            let target = level == 0;
            let mut buf = if target {
                std::mem::take(out)
            } else {
                reader.buffer(&self.cache)
            };
            let decoded = match &base {
                None => {
                    // A whole object: only blobs, and no intermediate above the allowance
                    // (the target's size was granted before the read).
                    if !n.blob || (!target && n.size > self.limit) {
                        Err(Fallback)
                    } else {
                        inflate(pack, &n, &mut reader.inflate, &mut buf, !target)
                    }
                }
                Some(b) => self.apply(pack, &n, b.bytes(), reader, &mut buf, !target),
            };
            let Ok(decoded) = decoded else {
                if target {
                    *out = buf;
                } else {
                    reader.release(Base::Own(buf));
                }
                if let Some(b) = base {
                    reader.release(b);
                }
                return Err(Fallback);
            };
            len = decoded;
            // Count the uses: this node's of its base (once per node), the target's own; keep
            // what has uses to come.
            let mut cache = lock(&self.cache);
            if n.is_delta() && !std::mem::replace(&mut cache.counted[node as usize], true) {
                cache.used(n.base);
            }
            // The node above in the chain will use this one once, unless its use was counted
            // by an earlier decoding of it.
            let uses_now = if target {
                1
            } else {
                u32::from(!cache.counted[chain[level - 1] as usize])
            };
            let later = cache.pending[node as usize].saturating_sub(uses_now);
            let room = cache.bytes + len <= self.cap && !cache.data.contains_key(&node);
            let previous = base.take();
            if target {
                // A target that later uses will read again is copied into the cache with the
                // lock released (a blob of megabytes is a copy and page faults of as long), its
                // bytes reserved meanwhile; a writer that wants it before it is in decodes it
                // itself.
                let keep = (later > 0 && room).then(|| {
                    cache.bytes += len;
                    cache.free.pop().unwrap_or_default()
                });
                cache.used(node);
                drop(cache);
                if let Some(mut copy) = keep {
                    copy.clear();
                    copy.extend_from_slice(&buf[..len]);
                    let mut cache = lock(&self.cache);
                    if cache.pending[node as usize] > 0 && !cache.data.contains_key(&node) {
                        cache.data.insert(node, Arc::new(copy));
                    } else {
                        cache.bytes -= len;
                        cache.recycle(copy);
                    }
                }
                *out = buf;
            } else if later > 0 && room {
                let data = Arc::new(buf);
                cache.bytes += data.len();
                cache.data.insert(node, Arc::clone(&data));
                drop(cache);
                base = Some(Base::Shared(data));
            } else {
                drop(cache);
                base = Some(Base::Own(buf));
            }
            if let Some(previous) = previous {
                reader.release(previous);
            }
        }
        Ok(len)
    }

    /// Apply delta node `n` to `base` into the first bytes of `buf` (all of it when `exact`)
    /// and return the result's length: its instructions inflated into the writer's buffer, the
    /// sizes of its header checked, and gix-pack's `apply` from the base directly.
    fn apply(
        &self,
        pack: &pack::data::File,
        n: &Node,
        base: &[u8],
        reader: &mut Reader,
        buf: &mut Vec<u8>,
        exact: bool,
    ) -> Result<usize, Fallback> {
        if n.size > self.limit {
            return Err(Fallback);
        }
        let size = usize::try_from(n.size).map_err(|_| Fallback)?;
        let instructions = &mut reader.instructions;
        if instructions.len() < size {
            instructions.resize(size, 0);
        }
        pack.decompress_entry(&n.entry(), &mut reader.inflate, &mut instructions[..size])
            .map_err(|_| Fallback)?;
        let delta = &instructions[..size];
        let (base_size, used) =
            pack::data::delta::decode_header_size(delta).map_err(|_| Fallback)?;
        let (result_size, more) =
            pack::data::delta::decode_header_size(&delta[used..]).map_err(|_| Fallback)?;
        if base_size != base.len() as u64 || result_size > self.limit {
            return Err(Fallback);
        }
        let size = usize::try_from(result_size).map_err(|_| Fallback)?;
        sized(buf, size, exact);
        pack::data::delta::apply(base, &mut buf[..size], &delta[used + more..])
            .map(|()| size)
            .map_err(|_| Fallback)
    }
}

/// Make `buf` at least `size` bytes long (exactly, when `exact`) for an inflate or a delta
/// application that overwrites its first `size` bytes (both fail unless they fill them
/// exactly): what it held is kept rather than zeroed first, so that a reused buffer pays for
/// zeroing only where it grows.
fn sized(buf: &mut Vec<u8>, size: usize, exact: bool) {
    if exact {
        buf.truncate(size);
    }
    if buf.len() < size {
        buf.resize(size, 0);
    }
}

/// Inflate whole node `n` into the first bytes of `buf` (all of it when `exact`) and return
/// its length.
fn inflate(
    pack: &pack::data::File,
    n: &Node,
    inflate: &mut gix::zlib::Inflate,
    buf: &mut Vec<u8>,
    exact: bool,
) -> Result<usize, Fallback> {
    let size = usize::try_from(n.size).map_err(|_| Fallback)?;
    sized(buf, size, exact);
    pack.decompress_entry(&n.entry(), inflate, &mut buf[..size])
        .map(|_| size)
        .map_err(|_| Fallback)
}

/// The nodes as the scan builds them.
struct Scan<'p> {
    packs: &'p [(pack::index::File, pack::data::File)],
    nodes: Vec<Node>,
    /// Per node: its uses (files to write from it, deltas against it).
    pending: Vec<u32>,
    /// Per node: its base's pack offset when it is a delta whose base is not linked yet,
    /// [`NO_BASE`] otherwise.
    bases: Vec<u64>,
    /// The pooled nodes by (pack, entry offset), in that order: the nodes most bases are
    /// ([`NONE`] for an entry whose header could not be read; a blob at several paths is there
    /// several times).
    pooled: Vec<(u16, u64, u32)>,
    /// The other nodes (bases no pooled entry names) by (pack, entry offset).
    extra: FastMap<(u16, u64), u32>,
}

impl Scan<'_> {
    /// Add the entry at `offset` of pack `n` as a node, with no use yet; `None` if its header
    /// cannot be read or the nodes are too many to number.
    fn add(&mut self, n: u16, offset: u64) -> Option<u32> {
        let (index, pack) = &self.packs[usize::from(n)];
        let entry = pack.entry(offset).ok()?;
        let id = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&id| id < UNRESOLVED)?;
        // A delta stays unresolved (read through the object database) until `link` gives it
        // its base: never taken for a whole object.
        let (base, base_offset) = match &entry.header {
            pack::data::entry::Header::OfsDelta { base_distance } => {
                (UNRESOLVED, entry.checked_base_pack_offset(*base_distance))
            }
            pack::data::entry::Header::RefDelta { base_id } => (
                UNRESOLVED,
                index.lookup(base_id).map(|i| index.pack_offset_at_index(i)),
            ),
            _ => (NONE, None),
        };
        self.nodes.push(Node {
            data_offset: entry.data_offset,
            size: entry.decompressed_size,
            base,
            pack: n,
            blob: entry.header == pack::data::entry::Header::Blob,
        });
        self.pending.push(0);
        self.bases.push(base_offset.unwrap_or(NO_BASE));
        Some(id)
    }

    /// Link `node` to its base (adding the base as a node if it is new) and count the use;
    /// returns the base when it is new, whose own base is then to be linked.
    fn link(&mut self, node: u32) -> Option<u32> {
        let offset = std::mem::replace(&mut self.bases[node as usize], NO_BASE);
        if offset == NO_BASE {
            return None;
        }
        let pack = self.nodes[node as usize].pack;
        let known = self
            .pooled
            .binary_search_by(|&(p, o, _)| (p, o).cmp(&(pack, offset)))
            .ok()
            .map(|i| self.pooled[i].2)
            .filter(|&node| node != NONE)
            .or_else(|| self.extra.get(&(pack, offset)).copied());
        let (base, new) = match known {
            Some(base) => (base, false),
            None => match self.add(pack, offset) {
                Some(base) => {
                    self.extra.insert((pack, offset), base);
                    (base, true)
                }
                None => return None,
            },
        };
        self.nodes[node as usize].base = base;
        self.pending[base as usize] += 1;
        new.then_some(base)
    }
}

/// For each of `wanted` (object ids and plan entries, reordered by this), the pack (its
/// position in `packs`) and the offset of its entry, in the first pack whose index has it; the
/// result is sorted by pack and offset. The ids are looked up in their order, each search
/// starting where the last one ended ([`search_from`]; a pack index lists the ids in order
/// too): consecutive lookups then read neighbouring rows of the index instead of a dozen rows
/// at random, which on tldr's 590,000-object index was 0.5 µs a lookup, cache misses nearly
/// all of it.
fn find_offsets(
    packs: &[(pack::index::File, pack::data::File)],
    wanted: &mut Vec<(ObjectId, u32)>,
) -> Vec<(u16, u64, u32)> {
    // Sorted by id, the first eight bytes compared as a number: a comparison of whole ids is a
    // call to memcmp (most of a sort of 40,000 of them).
    wanted.sort_unstable_by(|(a, ea), (b, eb)| {
        let key = |id: &ObjectId| prefix(id.as_bytes());
        key(a).cmp(&key(b)).then_with(|| a.cmp(b)).then(ea.cmp(eb))
    });
    let mut found = Vec::with_capacity(wanted.len());
    for (n, (index, _)) in packs.iter().enumerate() {
        let Ok(n) = u16::try_from(n) else {
            break;
        };
        let count = index.num_objects();
        let mut from = 0;
        wanted.retain(|(id, e)| match search_from(index, count, from, id) {
            Ok(i) => {
                from = i;
                found.push((n, index.pack_offset_at_index(i), *e));
                false
            }
            Err(i) => {
                from = i;
                true
            }
        });
        if wanted.is_empty() {
            break;
        }
    }
    found.sort_unstable();
    found
}

/// How many pooled entries ahead of the one whose header the scan reads it asks the CPU to
/// fetch a header's cache line: far enough for a fetch from memory to be done by then.
const AHEAD: usize = 16;

/// Ask the CPU to fetch the cache line at `offset` of `pack` into its caches (nothing beyond
/// the pack, or on other architectures). The scan reads the headers of tens of thousands of
/// entries spread over the mapped pack, a cache miss each: with the next ones fetched ahead,
/// the synthetic repository's headers took 4.6 ms instead of 5.9, tldr's 3.2 instead of 4.1.
fn prefetch(pack: &pack::data::File, offset: u64) {
    #[cfg(target_arch = "x86_64")]
    if let Some(bytes) = pack.entry_slice(offset..offset + 1) {
        // SAFETY: SSE is part of every x86_64 CPU; a prefetch reads nothing into the program
        // and does not fault, whatever the address (this one is inside the mapped pack).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                bytes.as_ptr().cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (pack, offset);
}

/// The first eight bytes of an object id as a number, in the ids' order: what the scan sorts
/// and searches by, deciding nearly every comparison without a call to memcmp. A fixed-size
/// copy is one load; a copy of a computed length was a call to memmove per probe (1% of a
/// tldr checkout's cycles, on the scan's serial path). Every object id is longer than eight
/// bytes.
fn prefix(id: &[u8]) -> u64 {
    id.first_chunk::<8>().map_or(0, |k| u64::from_be_bytes(*k))
}

/// Where `id` is among the `count` ids of `index`, searching from position `from` upwards
/// (every id before `from` is smaller): `Ok` with its position, or `Err` with the position of
/// the first larger id. Object ids are hashes, spread evenly over their range, so the search
/// guesses the position from the first eight bytes of the ids at both ends of the range (an
/// interpolation search: a step or two to within a few rows of a 600,000-row index, where a
/// binary search takes twenty compares), then finishes with a binary search; a range the
/// guesses do not shrink by half is searched by halves.
fn search_from(
    index: &pack::index::File,
    count: u32,
    from: u32,
    id: &ObjectId,
) -> Result<u32, u32> {
    use std::cmp::Ordering;
    let key = prefix;
    let target = key(id.as_bytes());
    // The first eight bytes decide nearly every comparison without a call to memcmp.
    let at = |i: u32| {
        let there = index.oid_at_index(i);
        match key(there.as_bytes()).cmp(&target) {
            Ordering::Equal => there.cmp(id.as_ref()),
            decided => decided,
        }
    };
    // Every id before `lo` is smaller, every one from `hi` on larger.
    let (mut lo, mut hi) = (from, count);
    while hi - lo > 8 {
        let (first, last) = (
            key(index.oid_at_index(lo).as_bytes()),
            key(index.oid_at_index(hi - 1).as_bytes()),
        );
        let guess = if target <= first {
            lo
        } else if target >= last {
            hi - 1
        } else {
            let span = u128::from(hi - 1 - lo);
            let offset = u128::from(target - first) * span / u128::from(last - first);
            lo + u32::try_from(offset).unwrap_or(hi - 1 - lo)
        };
        let before = hi - lo;
        match at(guess) {
            Ordering::Equal => return Ok(guess),
            Ordering::Less => lo = guess + 1,
            Ordering::Greater => hi = guess,
        }
        if (hi - lo) * 2 > before {
            // The guess missed: a binary step bounds the work whatever the ids are.
            let mid = lo + (hi - lo) / 2;
            match at(mid) {
                Ordering::Equal => return Ok(mid),
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
            }
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match at(mid) {
            Ordering::Less => lo = mid + 1,
            Ordering::Equal => return Ok(mid),
            Ordering::Greater => hi = mid,
        }
    }
    Err(lo)
}

/// The packs under the object directories of `repo` (its own and its alternates'), each
/// `pack/*.idx` whose pack exists and opens, most recent first as git prefers them: the
/// indexes [`crate::objects::stream`] finds for big blobs, each with its pack mapped.
fn open_packs(repo: &gix::Repository) -> Vec<(pack::index::File, pack::data::File)> {
    let hash = repo.object_hash();
    crate::objects::stream::open_indexes(&crate::objects::stream::object_dirs(repo), hash)
        .into_iter()
        .filter_map(|(index, pack_path)| {
            Some((index, pack::data::File::at(&pack_path, hash).ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let status = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    /// A repository whose history rewrites the same files many times and whose pack, made as
    /// real repositories are packed, holds them in delta chains: some checked-out blobs are
    /// bases of others, most chains go down through objects only history has.
    fn chained_repository() -> (tempfile::TempDir, gix::Repository) {
        let dir = tempfile::tempdir().expect("temporary directory");
        git(dir.path(), &["init", "-q", "-b", "main"]);
        let mut text = String::new();
        for line in 0..400 {
            text.push_str(&format!(
                "line {line} of a file that changes a little each time\n"
            ));
        }
        for round in 0..12 {
            for file in 0..20 {
                // Each round edits a line of every file and drops or grows its tail, so that
                // sizes go both ways and newer versions delta against older ones and back.
                let mut body = text.replace(
                    &format!("line {}", (round * 7 + file) % 400),
                    &format!("edited {round} {file}"),
                );
                body.truncate(body.len() - (round * 37 + file * 13) % 2000);
                std::fs::write(dir.path().join(format!("f{file}.txt")), body).expect("write");
                // Copies at other paths share the blob: one node, several files.
                if file < 3 {
                    std::fs::write(
                        dir.path().join(format!("copy{file}.txt")),
                        std::fs::read(dir.path().join(format!("f{file}.txt"))).expect("read"),
                    )
                    .expect("write");
                }
            }
            git(dir.path(), &["add", "-A"]);
            git(
                dir.path(),
                &["commit", "-q", "-m", &format!("round {round}")],
            );
        }
        git(
            dir.path(),
            &[
                "repack",
                "-q",
                "-a",
                "-d",
                "-f",
                "--depth=50",
                "--window=250",
            ],
        );
        let repo = gix::open(dir.path()).expect("open");
        (dir, repo)
    }

    fn plan_of(repo: &gix::Repository) -> crate::plan::Plan {
        let tree = repo
            .head_commit()
            .expect("HEAD")
            .tree_id()
            .expect("tree")
            .detach();
        crate::plan::from_tree(&repo.objects, tree, Default::default()).expect("plan")
    }

    /// Read every entry through `blobs` from `threads` readers, each taking every `threads`th
    /// entry, and compare with the object database.
    fn reads_match_the_object_database(cap: usize, limit: usize, threads: usize) -> usize {
        let (_dir, repo) = chained_repository();
        let plan = plan_of(&repo);
        let blobs = Blobs::new(&repo, &plan, 0..plan.entries.len(), cap, limit);
        let deltas = (0..plan.entries.len())
            .filter_map(|e| blobs.located(e))
            .filter(|l| l.whole_size().is_none())
            .count();
        let read = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (blobs, plan, read) = (&blobs, &plan, &read);
                let repo = repo.clone().into_sync();
                scope.spawn(move || {
                    let repo = repo.to_thread_local();
                    let mut reader = Reader::default();
                    let mut out = Vec::new();
                    for e in (t..plan.entries.len()).step_by(threads) {
                        let entry = &plan.entries[e];
                        let want = repo.find_object(entry.id).expect("object").data.clone();
                        let located = blobs.located(e).expect("every blob is in the pack");
                        match blobs.read(&mut reader, &located, &mut out) {
                            Ok(len) => {
                                assert!(out[..len] == want[..], "{} differs", entry.path);
                                read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            Err(Fallback) => assert!(
                                want.len() > limit,
                                "{} fell back at {} bytes",
                                entry.path,
                                want.len()
                            ),
                        }
                    }
                });
            }
        });
        assert!(deltas > 0, "the pack has delta chains");
        let read = read.into_inner();
        let cache = lock(&blobs.cache);
        if cap == usize::MAX && read == plan.entries.len() {
            // Every use was counted: nothing is left in the cache.
            assert_eq!(
                cache.bytes, 0,
                "all cached nodes were freed at their last use"
            );
            assert!(
                cache.pending.iter().all(|&p| p == 0),
                "every use was counted"
            );
        }
        read
    }

    #[test]
    fn chains_decode_like_the_object_database_with_a_cache() {
        assert_eq!(reads_match_the_object_database(usize::MAX, 1 << 20, 1), 23);
        assert_eq!(reads_match_the_object_database(usize::MAX, 1 << 20, 3), 23);
    }

    #[test]
    fn chains_decode_like_the_object_database_without_room_to_cache() {
        assert_eq!(reads_match_the_object_database(0, 1 << 20, 2), 23);
        assert_eq!(reads_match_the_object_database(4096, 1 << 20, 2), 23);
    }

    #[test]
    fn sorted_lookups_find_every_id_and_only_those() {
        let (_dir, repo) = chained_repository();
        let packs = open_packs(&repo);
        let index = &packs[0].0;
        let count = index.num_objects();
        let ids: Vec<ObjectId> = (0..count)
            .map(|i| index.oid_at_index(i).to_owned())
            .collect();
        // From the start, and from the previous position, as find_offsets searches.
        let mut from = 0;
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(search_from(index, count, 0, id), Ok(i as u32));
            assert_eq!(search_from(index, count, from, id), Ok(i as u32));
            from = i as u32;
        }
        // An id between two of the index, and ids before and after all of them.
        let mut between = ids[3];
        let last = between.as_mut_slice().last_mut().expect("bytes");
        *last = last.wrapping_add(1);
        if !ids.contains(&between) {
            assert_eq!(search_from(index, count, 0, &between), Err(4));
        }
        let null = ObjectId::null(gix::hash::Kind::Sha1);
        assert_eq!(search_from(index, count, 0, &null), Err(0));
        let max = ObjectId::from_bytes_or_panic(&[0xff; 20]);
        assert_eq!(search_from(index, count, 0, &max), Err(count));
        // find_offsets: every plan entry found once, duplicates included, sorted by offset.
        let mut wanted: Vec<(ObjectId, u32)> =
            ids.iter().chain(&ids[..2]).copied().zip(0..).collect();
        let found = find_offsets(&packs, &mut wanted);
        assert_eq!(found.len(), ids.len() + 2);
        assert!(wanted.is_empty());
        assert!(found.windows(2).all(|w| w[0] <= w[1]));
    }

    /// gix-pack's `lookup` (vendored: a guess from the id's bytes narrows each fan-out bucket
    /// before the binary search) finds every id of an index whose buckets have hundreds of
    /// rows, and nothing for ids next to them that it does not hold.
    #[test]
    fn pack_index_lookups_in_large_buckets_find_every_id_and_only_those() {
        let dir = tempfile::tempdir().expect("temporary directory");
        git(dir.path(), &["init", "-q", "--bare"]);
        let mut stream = String::new();
        for n in 0..40_000 {
            let data = format!("blob {n}\n");
            stream.push_str(&format!("blob\ndata {}\n{data}\n", data.len()));
        }
        let mut child = Command::new("git")
            .current_dir(dir.path())
            .args(["fast-import", "--quiet"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("git fast-import runs");
        std::io::Write::write_all(
            child.stdin.as_mut().expect("piped stdin"),
            stream.as_bytes(),
        )
        .expect("fast-import reads its stream");
        drop(child.stdin.take());
        assert!(child.wait().expect("fast-import ends").success());
        let repo = gix::open(dir.path()).expect("repository opens");
        let packs = open_packs(&repo);
        let index = &packs[0].0;
        let count = index.num_objects();
        assert!(count >= 40_000, "{count} objects");
        for i in 0..count {
            let id = index.oid_at_index(i).to_owned();
            assert_eq!(index.lookup(id), Some(i), "{id}");
            // The id with its last byte changed lies between its neighbours or past them.
            let mut near = id;
            let bytes = near.as_mut_slice();
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            let expected = (i.saturating_sub(1)..(i + 2).min(count))
                .find(|&j| index.oid_at_index(j) == near.as_ref());
            assert_eq!(index.lookup(near), expected, "{near}");
        }
    }

    #[test]
    fn objects_above_the_limit_fall_back() {
        assert!(reads_match_the_object_database(usize::MAX, 8 * 1024, 2) < 23);
    }
}
