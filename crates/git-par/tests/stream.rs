//! Big blobs streamed into their files (`core.bigFileThreshold`), compared with git's clone.
//!
//! The repository is built by git: blobs stored whole in a pack, blobs stored loose, a blob
//! stored as a delta (which cannot be streamed and is read whole), an executable, and a big text
//! file that `.gitattributes` converts to CRLF (which must not be streamed: it needs
//! conversion). git-par clones it with a threshold and a memory budget far below the blobs'
//! sizes; the files and the index must be git's, and `GIT_PAR_TRACE` must report exactly the
//! blobs that qualify as streamed, so the test fails if the streaming path is not taken.

mod support;

use std::path::Path;
use std::process::Command;

use support::*;

/// `len` bytes that do not compress (a xorshift sequence from `seed`, distinct for distinct
/// seeds): pack entries of real size that do not deltify against each other.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Text lines, `n` of them: compresses well and deltifies against a near copy.
fn lines(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| format!("line {i} of a text file that git-par streams\n").into_bytes())
        .collect()
}

/// The blobs of `HEAD` git stores whole (not as a delta) that are at least `threshold` bytes
/// and not named `*.crlf`: what git-par must stream.
fn streamable(repo: &Path, threshold: u64) -> Vec<String> {
    let deltas = git_str(
        repo,
        [
            "cat-file",
            "--batch-check=%(objectname) %(deltabase)",
            "--batch-all-objects",
        ],
    );
    let whole = |id: &str| {
        deltas
            .lines()
            .find(|l| l.starts_with(id))
            .is_some_and(|l| l.ends_with(&"0".repeat(40)))
    };
    git_str(repo, ["ls-tree", "-r", "-l", "HEAD"])
        .lines()
        .filter_map(|l| {
            let (meta, path) = l.split_once('\t')?;
            let f: Vec<&str> = meta.split_whitespace().collect();
            let size: u64 = f[3].parse().ok()?;
            (size >= threshold && whole(f[2]) && !path.ends_with(".crlf")).then(|| path.to_owned())
        })
        .collect()
}

#[test]
fn big_blobs_are_streamed_from_packs_and_loose_objects_and_match_git() {
    let s = scratch();
    let src = s.join("src");
    std::fs::create_dir(&src).unwrap();
    git_ok(&src, ["init", "-q"]);
    let write = |name: &str, data: &[u8]| std::fs::write(src.join(name), data).unwrap();
    // First commit, then packed whole: two incompressible blobs and a text file.
    write("packed.bin", &noise(1, 300_000));
    std::fs::create_dir_all(src.join("sub")).unwrap();
    write("sub/packed2.bin", &noise(2, 200_000));
    write("text.txt", &lines(8_000));
    write(".gitattributes", b"*.crlf text eol=crlf\n");
    write("converted.crlf", &lines(6_000));
    git_ok(&src, ["add", "."]);
    git_ok(&src, ["commit", "-q", "-m", "one"]);
    git_ok(&src, ["repack", "-adq"]);
    // Second commit, loose: a new blob, an executable, and an edited text file (in a later
    // repack its old or new version becomes a delta; here the new one is loose).
    write("loose.bin", &noise(3, 250_000));
    write("run.sh", &noise(4, 180_000));
    git_ok(&src, ["add", "."]);
    git_ok(&src, ["update-index", "--chmod=+x", "run.sh"]);
    let mut text = lines(8_000);
    text.extend_from_slice(b"one more line\n");
    write("text.txt", &text);
    git_ok(&src, ["commit", "-q", "-am", "two"]);
    // A third round packs the text file's versions together: one of them is a delta.
    git_ok(&src, ["repack", "-adq", "--depth=1"]);
    write("late.bin", &noise(5, 120_000));
    git_ok(&src, ["add", "late.bin"]);
    git_ok(&src, ["commit", "-q", "-m", "three"]);
    let expected = streamable(&src, 65536);
    // At least the two pack entries, the two loose blobs and the late one; text.txt too
    // unless git stored its new version as a delta.
    assert!(expected.len() >= 5, "the fixture went wrong: {expected:?}");

    let config = [
        "core.bigFileThreshold=65536".to_owned(),
        "par.memoryBudget=131072".to_owned(),
        "checkout.workers=4".to_owned(),
        THRESHOLD_ZERO.to_owned(),
    ];
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    let opts = CloneOpts {
        config: config[..1].to_vec(),
        ..CloneOpts::default()
    };
    git_clone(s.path(), &opts, &src, &by_git).assert_success();
    let mut cmd = Command::new(GIT_PAR);
    clean_env(&mut cmd)
        .current_dir(s.path())
        .env("GIT_PAR_TRACE", "1")
        .args(config_args(&config))
        .arg("clone")
        .arg(&src)
        .arg(&by_par);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "git-par clone failed: {stderr}");

    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &config);
    assert_status_like_git(&by_git, &by_par, &config);
    // Not streamed: converted.crlf (eol conversion), .gitattributes (small), any delta.
    assert!(
        stderr.contains(&format!("{} blobs streamed", expected.len())),
        "expected {expected:?} streamed; trace: {stderr}"
    );
}

#[test]
fn below_the_threshold_nothing_is_streamed() {
    let s = scratch();
    let src = s.join("src");
    std::fs::create_dir(&src).unwrap();
    git_ok(&src, ["init", "-q"]);
    std::fs::write(src.join("a.bin"), noise(7, 100_000)).unwrap();
    git_ok(&src, ["add", "."]);
    git_ok(&src, ["commit", "-q", "-m", "one"]);
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &CloneOpts::default(), &src, &by_git).assert_success();
    let mut cmd = Command::new(GIT_PAR);
    clean_env(&mut cmd)
        .current_dir(s.path())
        .env("GIT_PAR_TRACE", "1")
        .args(["clone", "-q"])
        .arg(&src)
        .arg(&by_par);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "git-par clone failed: {stderr}");
    compare_worktrees(&by_git, &by_par);
    assert!(stderr.contains("0 blobs streamed"), "trace: {stderr}");
}
