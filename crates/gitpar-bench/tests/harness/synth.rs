//! The synthetic repository, checked with real git: the branches, the diff sizes and the determinism that
//! benchmarks rely on.

use std::path::Path;
use std::process::Command;

use gitpar_bench::synth::{self, SynthSpec};

/// Runs git in `dir` (not in an enclosing repository) and returns its stdout; fails the test if git does.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("git prints UTF-8 here")
}

fn tiny(seed: u64) -> SynthSpec {
    SynthSpec {
        files: 300,
        seed,
        diffs: vec![10, 20],
    }
}

#[test]
fn tiny_repository_has_the_asked_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("repo");
    let s = synth::generate(&dest, &tiny(7)).unwrap();

    let branches = git(
        &dest,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads/"],
    );
    let mut branches: Vec<&str> = branches.lines().collect();
    branches.sort_unstable();
    assert_eq!(branches, ["diff-10", "diff-20", "main"]);
    assert_eq!(
        git(&dest, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );

    assert_eq!(
        git(&dest, &["ls-tree", "-r", "--name-only", "main"])
            .lines()
            .count(),
        300
    );
    for (d, branch) in [(10, &s.branches[0]), (20, &s.branches[1])] {
        let name = format!("diff-{d}");
        assert_eq!(branch.name, name);
        let changed = git(&dest, &["diff", "--name-only", "main", &name]);
        assert_eq!(changed.lines().count(), d, "{name}");
        let status = git(&dest, &["diff", "--name-status", "main", &name]);
        let count = |c: char| status.lines().filter(|l| l.starts_with(c)).count();
        assert_eq!(
            (count('M'), count('A'), count('D')),
            (branch.modified, branch.added, branch.deleted)
        );
        assert!(branch.modified > branch.added && branch.added > 0 && branch.deleted > 0);
        assert_eq!(git(&dest, &["rev-parse", &name]).trim(), branch.commit);
        assert_eq!(
            git(&dest, &["rev-parse", &format!("{name}^")]).trim(),
            s.main
        );
    }
    assert_eq!(git(&dest, &["rev-parse", "main"]).trim(), s.main);
    git(&dest, &["fsck", "--no-progress"]);

    // main has a history, each revision rewriting files of the one before (no file is added or removed),
    // and everything is in one pack, as `git repack -a -d` leaves it.
    assert_eq!(
        git(&dest, &["rev-list", "--count", "main"]).trim(),
        (synth::REVISIONS + 1).to_string()
    );
    for r in 1..=synth::REVISIONS {
        let status = git(
            &dest,
            &[
                "diff",
                "--name-status",
                &format!("main~{}", r),
                &format!("main~{}", r - 1),
            ],
        );
        assert!(!status.is_empty(), "revision {r} changes files");
        assert!(status.lines().all(|l| l.starts_with('M')), "{status}");
    }
    let objects = git(&dest, &["count-objects", "-v"]);
    assert!(
        objects.contains("\ncount: 0\n") || objects.starts_with("count: 0\n"),
        "{objects}"
    );
    assert!(objects.contains("\npacks: 1\n"), "{objects}");

    // The work tree is not checked out, and the repository serves clones and worktrees.
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1, "only .git");
    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &[
            "clone",
            "--quiet",
            dest.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    git(&clone, &["switch", "--quiet", "diff-20"]);
    let worktree = tmp.path().join("wt");
    git(
        &dest,
        &[
            "worktree",
            "add",
            "--quiet",
            worktree.to_str().unwrap(),
            "diff-10",
        ],
    );
    assert!(s.directories > 1);
    assert!(s.bytes >= 300 * 100 && s.bytes <= 300 * 20 * 1024);
}

#[test]
fn same_seed_same_commits_other_seed_other_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let a = synth::generate(&tmp.path().join("a"), &tiny(1)).unwrap();
    let b = synth::generate(&tmp.path().join("b"), &tiny(1)).unwrap();
    let c = synth::generate(&tmp.path().join("c"), &tiny(2)).unwrap();
    assert_eq!(a.main, b.main);
    assert_eq!(a.branches, b.branches);
    assert_ne!(a.main, c.main);
    assert!(a
        .branches
        .iter()
        .zip(&c.branches)
        .all(|(x, y)| x.commit != y.commit));
    assert_eq!(a.main.len(), 40, "hex sha1 commit ids");
}

#[test]
fn branch_commits_do_not_depend_on_the_order_of_diffs() {
    let tmp = tempfile::tempdir().unwrap();
    let a = synth::generate(&tmp.path().join("a"), &tiny(5)).unwrap();
    let spec = SynthSpec {
        diffs: vec![20, 10],
        ..tiny(5)
    };
    let b = synth::generate(&tmp.path().join("b"), &spec).unwrap();
    assert_eq!(a.branches[0].commit, b.branches[1].commit);
    assert_eq!(a.branches[1].commit, b.branches[0].commit);
}

#[test]
fn refuses_a_non_empty_destination() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("precious"), "keep").unwrap();
    let err = synth::generate(tmp.path(), &tiny(1)).unwrap_err();
    assert!(
        matches!(err, synth::Error::DestinationNotEmpty { .. }),
        "{err}"
    );
    assert!(tmp.path().join("precious").exists());
}

#[test]
fn cache_is_reused_and_rebuilt_when_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tiny(3);
    let first = synth::ensure_cached(tmp.path(), &spec).unwrap();
    let stamp = first.path.join(".git").join(synth::STAMP_FILE);
    let made = std::fs::metadata(&stamp).unwrap().modified().unwrap();

    let again = synth::ensure_cached(tmp.path(), &spec).unwrap();
    assert_eq!(again, first);
    assert_eq!(
        std::fs::metadata(&stamp).unwrap().modified().unwrap(),
        made,
        "not rebuilt"
    );

    // Another set of branches rebuilds in place.
    let spec2 = SynthSpec {
        diffs: vec![10],
        ..spec.clone()
    };
    let other = synth::ensure_cached(tmp.path(), &spec2).unwrap();
    assert_eq!(other.path, first.path);
    assert_eq!(other.branches.len(), 1);
    assert_eq!(other.main, first.main);

    // A ref moved behind our back invalidates the cache.
    git(&other.path, &["update-ref", "refs/heads/diff-10", "main"]);
    let fixed = synth::ensure_cached(tmp.path(), &spec2).unwrap();
    assert_eq!(
        git(&fixed.path, &["rev-parse", "diff-10"]).trim(),
        other.branches[0].commit
    );
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary directories left behind");
}

/// Generates the default 40,000-file repository and prints how long it took. Not a test of time (tests
/// never assert one): run it by hand with `cargo test --release -p gitpar-bench --test synth -- --ignored
/// --nocapture`, with `GITPAR_BENCH_DIR` naming where to generate (e.g. /dev/shm).
#[test]
#[ignore = "generates 40,000 files; run by hand to measure the generator"]
fn generate_default_repository() {
    let base = std::env::var_os("GITPAR_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let tmp = tempfile::tempdir_in(base).unwrap();
    let start = std::time::Instant::now();
    let s = synth::generate(&tmp.path().join("repo"), &SynthSpec::default()).unwrap();
    let elapsed = start.elapsed();
    println!(
        "{} files in {} directories, {:.1} MiB, branches {:?}: generated in {:.2?}",
        s.spec.files,
        s.directories,
        s.bytes as f64 / (1024.0 * 1024.0),
        s.branches.iter().map(|b| &b.name).collect::<Vec<_>>(),
        elapsed
    );
    let shape = gitpar_bench::pack_shape::of_commit(&s.path, "main").unwrap();
    println!("pack of main: {shape}");
    assert_eq!(
        git(&s.path, &["ls-tree", "-r", "--name-only", "main"])
            .lines()
            .count(),
        40_000
    );
}

#[test]
fn big_files_repository_is_random_bytes_of_the_asked_size() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = synth::BigSpec {
        files: 3,
        size: 100_003,
    };
    let (path, main) = synth::ensure_big_cached(tmp.path(), spec).unwrap();
    let listing = git(&path, &["ls-tree", "-r", "-l", "main"]);
    let sizes: Vec<&str> = listing
        .lines()
        .map(|l| l.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(sizes, ["100003"; 3], "{listing}");
    assert!(listing.contains("\tbig/file-0002.bin"), "{listing}");
    // Cached: the second call finds it; and the same everywhere.
    assert_eq!(
        synth::ensure_big_cached(tmp.path(), spec).unwrap(),
        (path.clone(), main.clone())
    );
    let again = synth::generate_big(&tmp.path().join("again"), spec).unwrap();
    assert_eq!(again, main);
    assert!(synth::generate_big(
        &tmp.path().join("none"),
        synth::BigSpec { files: 0, size: 1 }
    )
    .is_err());
}
