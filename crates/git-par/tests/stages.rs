//! `git par restore --ours|--theirs` and `git par checkout --ours|--theirs -- paths` against git on
//! copies of one real conflicted merge: work tree bytes, `git ls-files -s` (the conflict stages
//! stay), exit code and the first line of standard error are compared, refusals included.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// A repository in the middle of a conflicted merge of `side` into `main`:
/// - `f`: modified on both sides (stages 1, 2, 3);
/// - `d`: modified on main, deleted on side (stages 1, 2: no "their version");
/// - `n`: deleted on main, modified on side (stages 1, 3: no "our version");
/// - `sub/e` (executable on both sides, modified on both: stages 1, 2, 3);
/// - `g`: unchanged and merged (stage 0), modified in the work tree.
fn conflicted(root: &Path) {
    fs::create_dir_all(root).unwrap();
    git_ok(root, ["init", "-q", "-b", "main", "."]);
    let write = |p: &str, s: &str| {
        let path = root.join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, s).unwrap();
    };
    write("f", "base\n");
    write("d", "base d\n");
    write("n", "base n\n");
    write("g", "g\n");
    write("sub/e", "#!/bin/sh\nbase\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["update-index", "--chmod=+x", "sub/e"]);
    git_ok(root, ["commit", "-qm", "base"]);
    git_ok(root, ["checkout", "-qb", "side"]);
    write("f", "theirs\n");
    write("n", "theirs n\n");
    write("sub/e", "#!/bin/sh\ntheirs\n");
    git_ok(root, ["rm", "-q", "d"]);
    git_ok(root, ["commit", "-qam", "side"]);
    git_ok(root, ["checkout", "-q", "main"]);
    write("f", "ours\n");
    write("d", "ours d\n");
    write("sub/e", "#!/bin/sh\nours\n");
    git_ok(root, ["rm", "-q", "n"]);
    git_ok(root, ["commit", "-qam", "ours"]);
    git(root, ["merge", "side"]).assert_failure();
    write("g", "local change\n");
}

/// Runs `args` with git and with git-par on two copies of the conflicted merge and compares what
/// they leave and say. Returns git's exit code.
#[track_caller]
fn same_as_git(args: &[&str]) -> Option<i32> {
    let s = scratch();
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    conflicted(&by_git);
    copy_repo(&by_git, &by_par);
    let expected = git(&by_git, args);
    let actual = git_par(&by_par, args);
    let first = |r: &Run| r.stderr_str().lines().next().unwrap_or("").to_owned();
    assert_eq!(
        expected.status.code(),
        actual.status.code(),
        "exit codes of {args:?}:\n{}\n{}",
        expected.describe(),
        actual.describe()
    );
    assert_eq!(
        first(&expected),
        first(&actual),
        "first error line of {args:?}"
    );
    compare_worktrees(&by_git, &by_par);
    assert_eq!(
        index_listing(&by_git, &[]),
        index_listing(&by_par, &[]),
        "ls-files -s after {args:?}"
    );
    expected.status.code()
}

#[test]
fn restore_ours_and_theirs_write_the_stage_and_keep_the_conflict() {
    for args in [
        ["restore", "--ours", "f"].as_slice(),
        &["restore", "--theirs", "f"],
        &["restore", "-2", "sub"],
        &["restore", "-3", "sub/e"],
        &["restore", "--ours", "--theirs", "f"],
        &["restore", "--theirs", "--ours", "f"],
        // Stage 0 paths come from the index as usual.
        &["restore", "--theirs", "f", "g"],
        &["restore", "--ours", "."],
        &["restore", "--theirs", "."],
        &["restore", "--ignore-unmerged", "--theirs", "f", "d", "g"],
    ] {
        assert_eq!(same_as_git(args), Some(0), "{args:?}");
    }
}

#[test]
fn restore_without_the_stage_removes_the_file() {
    // No-overlay: git's `checkout_stage` unlinks a path that lacks the stage, and succeeds.
    for args in [
        ["restore", "--theirs", "d"].as_slice(),
        &["restore", "--ours", "n"],
        &["restore", "--ours", "n", "f"],
    ] {
        assert_eq!(same_as_git(args), Some(0), "{args:?}");
    }
}

#[test]
fn checkout_ours_and_theirs_write_the_stage() {
    for args in [
        ["checkout", "--ours", "--", "f", "sub"].as_slice(),
        &["checkout", "--theirs", "--", "f"],
        &["checkout", "--theirs", "--", "sub/e", "g"],
        &["checkout", "-3", "--", "n"],
        &["checkout", "--ours", "--", "d"],
    ] {
        assert_eq!(same_as_git(args), Some(0), "{args:?}");
    }
}

#[test]
fn checkout_without_the_stage_is_refused() {
    for args in [
        ["checkout", "--theirs", "--", "d"].as_slice(),
        &["checkout", "--ours", "--", "n", "f"],
        &["checkout", "--theirs", "--", "."],
        &["checkout", "--ours", "--", "."],
    ] {
        assert_eq!(same_as_git(args), Some(1), "{args:?}");
    }
}

#[test]
fn refusals_match_git() {
    for args in [
        ["restore", "--staged", "--ours", "f"].as_slice(),
        &["restore", "--staged", "--worktree", "--theirs", "."],
        &["restore", "--source=HEAD", "--ours", "f"],
        &["restore", "--source", "HEAD", "--theirs", "."],
        &["checkout", "HEAD", "--ours", "--", "f"],
        &["checkout", "-f", "--ours", "--", "f"],
        &["checkout", "--ours"],
        &["checkout", "--theirs", "side"],
    ] {
        assert_eq!(same_as_git(args), Some(128), "{args:?}");
    }
}
