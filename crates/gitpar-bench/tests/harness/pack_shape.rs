//! The delta-chain shape of a checkout, read from pack entry headers, against what `git verify-pack -v`
//! says of the same pack.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use gitpar_bench::pack_shape;
use gitpar_bench::synth::{self, SynthSpec};

use crate::synth::git;

/// Depth of every checked-out blob of `rev` and the distinct objects of their chains, by `git verify-pack
/// -v` (whose delta lines end in `<depth> <base id>`).
fn by_verify_pack(repo: &Path, rev: &str) -> (Vec<usize>, usize) {
    let pack_dir = repo.join(".git/objects/pack");
    let mut base: HashMap<String, String> = HashMap::new();
    for entry in std::fs::read_dir(&pack_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "idx") {
            let out = git(repo, &["verify-pack", "-v", path.to_str().unwrap()]);
            for line in out.lines() {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if fields.len() == 7 && fields[0].len() == 40 {
                    base.insert(fields[0].to_owned(), fields[6].to_owned());
                }
            }
        }
    }
    let mut depths = Vec::new();
    let mut union = HashSet::new();
    for line in git(repo, &["ls-tree", "-r", rev]).lines() {
        let mut id = line.split_whitespace().nth(2).unwrap().to_owned();
        let mut depth = 0;
        union.insert(id.clone());
        while let Some(b) = base.get(&id) {
            id = b.clone();
            union.insert(id.clone());
            depth += 1;
        }
        if depths.len() <= depth {
            depths.resize(depth + 1, 0);
        }
        depths[depth] += 1;
    }
    (depths, union.len())
}

#[test]
fn chain_depths_match_git_verify_pack() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = SynthSpec {
        files: 600,
        seed: 11,
        diffs: vec![40],
    };
    let s = synth::generate(&tmp.path().join("repo"), &spec).unwrap();
    let shape = pack_shape::of_commit(&s.path, "main").unwrap();
    let (depths, union) = by_verify_pack(&s.path, "main");
    assert_eq!(shape.depths, depths);
    assert_eq!(shape.chain_objects, union);
    assert_eq!(shape.blobs, 600);
    assert_eq!(shape.unpacked, 0);
    // The generator's point: a real-repository-shaped pack, many blobs stored as deltas, some of them
    // against objects that only history has.
    assert!(shape.depths.len() > 2, "{shape}");
    assert!(shape.depths[1] > 100, "{shape}");
    assert!(shape.chain_objects > shape.blobs, "{shape}");

    // A branch's new blobs are loose until a repack: counted apart, not guessed.
    std::fs::write(s.path.join("new.txt"), "a loose blob\n").unwrap();
    let id = git(&s.path, &["hash-object", "-w", "new.txt"]);
    let ids = [gix::ObjectId::from_hex(id.trim().as_bytes()).unwrap()];
    let loose = pack_shape::of_blobs(&s.path.join(".git/objects"), &ids).unwrap();
    assert_eq!((loose.blobs, loose.unpacked, loose.packed()), (1, 1, 0));
}
