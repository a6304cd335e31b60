//! How deep the blobs of a checkout sit in their packs' delta chains.
//!
//! A checkout's cost is not only its files: every blob stored as a delta must be rebuilt from its base,
//! which may itself be a delta, down to a whole object. A repository written by `git fast-import` with
//! unique files has almost no chains, a real one has most of its blobs one or two deltas deep, and a
//! comparison of checkouts means little without saying which. [`of_commit`] measures it from the pack
//! entry headers alone (no object is inflated), so that the bench can print it with every result: for
//! the checked-out blobs, how many are whole objects (depth 0), deltas of one (depth 1), and so on, and
//! how many distinct objects all their chains hold together (what a checkout decodes at least once).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _};
use gix::odb::pack;
use serde::{Deserialize, Serialize};

/// The delta-chain shape of the blobs one commit checks out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainShape {
    /// Blobs the commit checks out (one per path: a blob at two paths counts twice, as it is written twice).
    pub blobs: usize,
    /// `depths[d]`: packed blobs whose chain is `d` deltas long (0: stored whole).
    pub depths: Vec<usize>,
    /// Blobs found in no pack (loose objects, or missing from a partial clone): their depth is unknown.
    pub unpacked: usize,
    /// Distinct pack entries on all the chains, the blobs included: the objects a checkout must decode.
    pub chain_objects: usize,
}

/// The depth ranges the report groups depths into, as `(first, last)`.
const BUCKETS: [(usize, usize); 5] = [(0, 0), (1, 1), (2, 4), (5, 9), (10, 19)];

impl ChainShape {
    /// Packed blobs, those whose depth is known.
    pub fn packed(&self) -> usize {
        self.depths.iter().sum()
    }

    /// Mean chain depth of the packed blobs.
    pub fn mean_depth(&self) -> f64 {
        let total: usize = self.depths.iter().enumerate().map(|(d, n)| d * n).sum();
        total as f64 / self.packed().max(1) as f64
    }

    /// Distinct objects on the chains per packed blob: 1.0 when no chain reaches an object that is not
    /// itself checked out; a real repository's chains also run through older versions only history has.
    pub fn objects_per_blob(&self) -> f64 {
        self.chain_objects as f64 / self.packed().max(1) as f64
    }

    /// Blobs by depth range: `("0", n)`, `("1", n)`, `("2-4", n)`, `("5-9", n)`, `("10-19", n)` and,
    /// if any, `("20+", n)`, so that repositories compare at a glance.
    pub fn buckets(&self) -> Vec<(String, usize)> {
        let count = |first: usize, last: usize| -> usize {
            self.depths
                .iter()
                .enumerate()
                .filter(|&(d, _)| (first..=last).contains(&d))
                .map(|(_, n)| n)
                .sum()
        };
        let mut out: Vec<(String, usize)> = BUCKETS
            .iter()
            .map(|&(first, last)| {
                let name = if first == last {
                    first.to_string()
                } else {
                    format!("{first}-{last}")
                };
                (name, count(first, last))
            })
            .collect();
        let deeper = count(20, usize::MAX);
        if deeper > 0 {
            out.push(("20+".to_owned(), deeper));
        }
        out
    }
}

impl fmt::Display for ChainShape {
    /// One line for the report: `4846 blobs by delta depth: 0: 1642 (33.9%), 1: 2452 (50.6%), ...; mean
    /// 0.90; their chains hold 8009 objects, 1.65 per blob`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let packed = self.packed().max(1) as f64;
        write!(f, "{} blobs by delta depth: ", self.blobs)?;
        for (k, (name, n)) in self.buckets().into_iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{name}: {n} ({:.1}%)", 100.0 * n as f64 / packed)?;
        }
        write!(
            f,
            "; mean {:.2}; their chains hold {} objects, {:.2} per blob",
            self.mean_depth(),
            self.chain_objects,
            self.objects_per_blob()
        )?;
        if self.unpacked > 0 {
            write!(f, "; {} not in a pack", self.unpacked)?;
        }
        Ok(())
    }
}

/// One pack: its index (id → offset) and its data (entry headers).
struct Pack {
    index: pack::index::File,
    data: pack::data::File,
}

/// The packs of `objects` (a repository's `objects` directory) and of its alternates, recursively.
fn open_packs(objects: &Path, hash: gix::hash::Kind) -> anyhow::Result<Vec<Pack>> {
    let mut dirs = vec![objects.to_owned()];
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut packs = Vec::new();
    while let Some(dir) = dirs.pop() {
        let dir = crate::platform::canonicalize(&dir).unwrap_or(dir);
        if !seen.insert(dir.clone()) {
            continue;
        }
        if let Ok(alternates) = std::fs::read_to_string(dir.join("info").join("alternates")) {
            for line in alternates.lines().map(str::trim) {
                if !line.is_empty() && !line.starts_with('#') {
                    dirs.push(dir.join(line));
                }
            }
        }
        let pack_dir = dir.join("pack");
        let Ok(entries) = std::fs::read_dir(&pack_dir) else {
            continue;
        };
        let mut indexes: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "idx"))
            .collect();
        indexes.sort();
        for idx in indexes {
            let data_path = idx.with_extension("pack");
            let index =
                pack::index::File::at(&idx, hash).map_err(|e| anyhow!("{}: {e}", idx.display()))?;
            let data = pack::data::File::at(&data_path, hash)
                .map_err(|e| anyhow!("{}: {e}", data_path.display()))?;
            packs.push(Pack { index, data });
        }
    }
    Ok(packs)
}

/// Where an object is: which pack, and at which offset.
type Location = (usize, u64);

/// Walks chains through a set of packs, remembering every entry's depth, so that chains shared by many
/// blobs (a family of near-copies, a file's history) are walked once.
struct Walker {
    packs: Vec<Pack>,
    depth: HashMap<Location, usize>,
}

impl Walker {
    fn find(&self, id: &gix::oid) -> Option<Location> {
        self.packs.iter().enumerate().find_map(|(p, pack)| {
            pack.index
                .lookup(id)
                .map(|e| (p, pack.index.pack_offset_at_index(e)))
        })
    }

    /// The entry a delta at `at` is based on, or `None` if it is a whole object (or a REF_DELTA whose base
    /// is in no pack, the end of what can be known).
    fn base(&self, at: Location) -> anyhow::Result<Option<Location>> {
        let (p, offset) = at;
        let entry = self.packs[p]
            .data
            .entry(offset)
            .map_err(|e| anyhow!("pack entry at offset {offset}: {e}"))?;
        Ok(match entry.header {
            pack::data::entry::Header::OfsDelta { base_distance } => Some((
                p,
                entry
                    .checked_base_pack_offset(base_distance)
                    .ok_or_else(|| anyhow!("pack entry at offset {offset}: base out of bounds"))?,
            )),
            pack::data::entry::Header::RefDelta { base_id } => {
                // In its own pack first: that is where git puts a REF_DELTA's base.
                match self.packs[p].index.lookup(base_id) {
                    Some(e) => Some((p, self.packs[p].index.pack_offset_at_index(e))),
                    None => self.find(&base_id),
                }
            }
            _ => None,
        })
    }

    /// The chain depth of the entry at `at`; every entry on its chain goes into `union`.
    fn depth(&mut self, at: Location, union: &mut HashSet<Location>) -> anyhow::Result<usize> {
        let mut path = Vec::new();
        let mut cursor = at;
        let mut known = loop {
            if let Some(&d) = self.depth.get(&cursor) {
                break d;
            }
            if path.len() > 10_000 || path.contains(&cursor) {
                bail!("pack entry at offset {}: a delta chain loops", cursor.1);
            }
            path.push(cursor);
            union.insert(cursor);
            match self.base(cursor)? {
                Some(base) => cursor = base,
                None => {
                    let whole = path.pop().expect("pushed above");
                    self.depth.insert(whole, 0);
                    break 0;
                }
            }
        };
        for entry in path.into_iter().rev() {
            known += 1;
            self.depth.insert(entry, known);
        }
        Ok(self.depth[&at])
    }
}

/// Measures the chains of `blobs` (ids, one per checked-out path) in the packs of the objects directory
/// `objects` and of its alternates.
pub fn of_blobs(objects: &Path, blobs: &[gix::ObjectId]) -> anyhow::Result<ChainShape> {
    let hash = blobs.first().map_or(gix::hash::Kind::Sha1, |id| id.kind());
    let mut walker = Walker {
        packs: open_packs(objects, hash)?,
        depth: HashMap::new(),
    };
    let mut shape = ChainShape {
        blobs: blobs.len(),
        ..ChainShape::default()
    };
    let mut union = HashSet::new();
    for id in blobs {
        let Some(at) = walker.find(id) else {
            shape.unpacked += 1;
            continue;
        };
        let depth = walker
            .depth(at, &mut union)
            .with_context(|| format!("the delta chain of blob {id}"))?;
        if shape.depths.len() <= depth {
            shape.depths.resize(depth + 1, 0);
        }
        shape.depths[depth] += 1;
    }
    shape.chain_objects = union.len();
    Ok(shape)
}

/// Measures the chains of the blobs that `commit` of the repository at `repo` (a work tree or a git
/// directory) checks out, in its packs. The tree is listed by `git ls-tree`; the packs are read with
/// gix's pack crate, entry headers only, so that tldr's 38,000 blobs take a fraction of a second.
pub fn of_commit(repo: &Path, commit: &str) -> anyhow::Result<ChainShape> {
    // Relative to `repo` unless absolute (a linked work tree's).
    let common = repo.join(crate::git::line(repo, &["rev-parse", "--git-common-dir"])?);
    let listing = crate::git::output(repo, &["ls-tree", "-r", "-z", commit])?;
    let mut blobs = Vec::new();
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        // `<mode> SP <type> SP <id> TAB <path>`
        let mut fields = entry.split([' ', '\t']);
        let (_, kind, id) = (fields.next(), fields.next(), fields.next());
        if kind == Some("blob") {
            let id = id.unwrap_or_default();
            blobs.push(
                gix::ObjectId::from_hex(id.as_bytes())
                    .with_context(|| format!("git ls-tree printed `{entry}`"))?,
            );
        }
    }
    of_blobs(&common.join("objects"), &blobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_means() {
        let shape = ChainShape {
            blobs: 11,
            depths: vec![
                4, 3, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            ],
            unpacked: 1,
            chain_objects: 15,
        };
        assert_eq!(shape.packed(), 10);
        assert!((shape.mean_depth() - (3.0 + 2.0 + 4.0 + 21.0) / 10.0).abs() < 1e-12);
        assert!((shape.objects_per_blob() - 1.5).abs() < 1e-12);
        let buckets = shape.buckets();
        let names: Vec<&str> = buckets.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["0", "1", "2-4", "5-9", "10-19", "20+"]);
        let counts: Vec<usize> = buckets.iter().map(|&(_, n)| n).collect();
        assert_eq!(counts, [4, 3, 2, 0, 0, 1]);
        assert_eq!(
            shape.to_string(),
            "11 blobs by delta depth: 0: 4 (40.0%), 1: 3 (30.0%), 2-4: 2 (20.0%), 5-9: 0 (0.0%), 10-19: 0 \
             (0.0%), 20+: 1 (10.0%); mean 3.00; their chains hold 15 objects, 1.50 per blob; 1 not in a pack"
        );
        // Without blobs deeper than 19 there is no 20+ bucket.
        let flat = ChainShape {
            blobs: 1,
            depths: vec![1],
            unpacked: 0,
            chain_objects: 1,
        };
        assert_eq!(flat.buckets().len(), 5);
    }
}
