//! Sparse checkout and partial clones against git: with `core.sparseCheckout`, switches, forced
//! checkouts and `reset --hard` write only the paths the patterns select, keep or set the
//! skip-worktree bits as git does, remove what leaves the patterns, and warn where git warns; in a
//! partial clone the missing blobs are fetched in one batch before writing. Each scenario runs the
//! same commands with git and with git-par on copies of one repository built by git, and compares
//! the work trees, `git ls-files -t -s` (the bits), `git status --porcelain`, exit codes and
//! standard error.

mod support;

use std::fs;
use std::path::Path;

use support::*;

fn write(root: &Path, path: &str, content: &str) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// `main`: `top`, `a/x`, `a/deep/y`, `b/z`, `c/w`; `other`: changes each of them, adds
/// `a/new`, `b/new`, `d/new` and `top2`, and deletes `c/w`.
fn history(root: &Path) {
    fs::create_dir_all(root).unwrap();
    git_ok(root, ["init", "-q", "-b", "main", "."]);
    for p in ["top", "a/x", "a/deep/y", "b/z", "c/w"] {
        write(root, p, &format!("{p} on main\n"));
    }
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "main"]);
    git_ok(root, ["checkout", "-qb", "other"]);
    for p in [
        "top", "a/x", "a/deep/y", "b/z", "a/new", "b/new", "d/new", "top2",
    ] {
        write(root, p, &format!("{p} on other\n"));
    }
    git_ok(root, ["rm", "-q", "c/w"]);
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "other"]);
    git_ok(root, ["checkout", "-q", "main"]);
}

/// What git says about the index bits and the work tree of `dir`.
fn state(dir: &Path) -> String {
    let bits = git_str(dir, ["ls-files", "-t", "-s"]);
    let status = git_str(dir, ["status", "--porcelain", "--untracked-files=all"]);
    format!("ls-files -t -s:\n{bits}status:\n{status}")
}

/// Runs each of `steps` (a command line; `!`-prefixed ones with real git in both copies, to set
/// the stage) with git in one copy and git-par in the other, comparing after every step.
#[track_caller]
fn same_as_git(setup: impl Fn(&Path), steps: &[&str]) {
    let s = scratch();
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    setup(&by_git);
    copy_repo(&by_git, &by_par);
    for step in steps {
        let (both_git, line) = match step.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, *step),
        };
        let args: Vec<&str> = line.split_whitespace().collect();
        if both_git {
            git(&by_git, &args);
            git(&by_par, &args);
            continue;
        }
        let expected = git(&by_git, &args);
        let actual = git_par(&by_par, &args);
        assert_same_output(line, &expected, &actual, false);
        compare_worktrees(&by_git, &by_par);
        assert_eq!(state(&by_git), state(&by_par), "after {line}");
    }
}

/// git's own t1090 scenario: non-cone patterns written by hand, then a return to a full checkout.
#[test]
fn non_cone_patterns_written_by_hand() {
    same_as_git(
        |root| {
            history(root);
            git_ok(root, ["config", "core.sparseCheckout", "true"]);
            fs::create_dir_all(root.join(".git/info")).unwrap();
            fs::write(root.join(".git/info/sparse-checkout"), "!/*\n/top\n/a/\n").unwrap();
        },
        &[
            "checkout other",
            "checkout main",
            "!-c core.sparseCheckout=false checkout -q other",
            "checkout main",
            "reset --hard other",
        ],
    );
}

/// Cone mode set up by `git sparse-checkout set`: switches both ways, a forced checkout and
/// `reset --hard`, then widening the cone by hand and switching again.
#[test]
fn cone_switches_and_resets() {
    same_as_git(
        |root| {
            history(root);
            git_ok(root, ["sparse-checkout", "set", "--cone", "a/deep", "d"]);
        },
        &[
            "switch other",
            "switch main",
            "checkout -f other",
            "reset --hard main",
            "!sparse-checkout add b",
            "switch other",
            "reset --hard HEAD~1",
        ],
    );
}

/// A sparse index (`--sparse-index`: directories outside the cone are single index entries of
/// mode 040000): switches, a forced checkout, `reset --hard`, a restore and `status` see the
/// whole tree as git's `ensure_full_index` shows it, and git reads the index git-par writes.
#[test]
fn sparse_index_is_expanded() {
    same_as_git(
        |root| {
            history(root);
            git_ok(
                root,
                [
                    "sparse-checkout",
                    "set",
                    "--cone",
                    "--sparse-index",
                    "a/deep",
                ],
            );
        },
        &[
            "switch other",
            "checkout -f main",
            "reset --hard other",
            "!reset -q --soft main",
            "restore --staged --worktree a/deep/y",
            "switch -f main",
        ],
    );
}

/// A file with local changes that leaves the patterns stays, with git's warning; an untracked
/// file where an entry enters the patterns is left, with git's other warning.
#[test]
fn warnings_for_paths_the_patterns_cannot_move() {
    same_as_git(
        |root| {
            history(root);
            git_ok(root, ["sparse-checkout", "set", "--cone", "b"]);
            // b/z is in the cone and modified; the next patterns leave it out.
            write(root, "b/z", "local change\n");
            fs::write(root.join(".git/info/sparse-checkout"), "/*\n!/*/\n/a/\n").unwrap();
            // a/x enters the cone, but an untracked file is in its place.
            write(root, "a/x", "untracked\n");
        },
        &["checkout main", "switch other", "reset --hard"],
    );
}

/// git's t1091 case: `clone --no-checkout`, sparse patterns, then the first switch (unborn index).
#[test]
fn first_checkout_after_clone_no_checkout() {
    let s = scratch();
    let src = s.join("src");
    history(&src);
    let mut dirs = Vec::new();
    for (who, name) in [("git", "by-git"), ("par", "by-par")] {
        let dir = s.join(name);
        git_ok(
            s.path(),
            ["clone", "-q", "--no-checkout", src.to_str().unwrap(), name],
        );
        git_ok(&dir, ["sparse-checkout", "set", "--cone", "a"]);
        let run = if who == "git" {
            git(&dir, ["switch", "main"])
        } else {
            git_par(&dir, ["switch", "main"])
        };
        run.assert_success();
        dirs.push(dir);
    }
    compare_worktrees(&dirs[0], &dirs[1]);
    assert_eq!(state(&dirs[0]), state(&dirs[1]));
}

/// A blobless clone: a switch fetches the blobs it writes — and only those, with sparse patterns —
/// in one `git fetch`, as git's checkout does. Counted from git's trace2 events.
#[test]
fn partial_clone_fetches_missing_blobs_in_one_batch() {
    let s = scratch();
    let server = s.join("server");
    history(&server);
    git_ok(&server, ["config", "uploadpack.allowFilter", "true"]);
    git_ok(&server, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = format!("file://{}", server.display());
    let mut results = Vec::new();
    for (who, name) in [("git", "by-git"), ("par", "by-par")] {
        let dir = s.join(name);
        git_ok(
            s.path(),
            [
                "clone",
                "-q",
                "--filter=blob:none",
                "--no-checkout",
                "-b",
                "main",
                url.as_str(),
                name,
            ],
        );
        git_ok(&dir, ["sparse-checkout", "set", "--cone", "a"]);
        let trace = s.join(format!("{name}.trace"));
        let program = if who == "git" { "git" } else { GIT_PAR };
        // The first checkout of main (git's clone would do it), then the switch under trace
        // (git reads trace2 targets from the environment or global configuration only).
        run(program, &dir, ["checkout", "-q", "main"]).assert_success();
        let event = format!("GIT_TRACE2_EVENT={}", trace.display());
        run(
            "env",
            &dir,
            [event.as_str(), program, "switch", "-q", "other"],
        )
        .assert_success();
        let events = fs::read_to_string(&trace).unwrap_or_default();
        let fetches = events
            .lines()
            .filter(|l| l.contains(r#""event":"start""#) && l.contains(r#""fetch""#))
            .count();
        let missing = git_str(
            &dir,
            [
                "rev-list",
                "--objects",
                "--all",
                "--missing=print",
                "--quiet",
            ],
        );
        let mut missing: Vec<&str> = missing.lines().collect();
        missing.sort();
        results.push((dir.clone(), fetches, missing.join("\n")));
    }
    compare_worktrees(&results[0].0, &results[1].0);
    assert_eq!(state(&results[0].0), state(&results[1].0));
    assert_eq!(results[1].1, 1, "git-par's switch ran one fetch");
    assert_eq!(results[0].1, results[1].1, "git and git-par fetch as often");
    assert_eq!(
        results[0].2, results[1].2,
        "the same blobs are still missing"
    );
    assert!(
        !results[1].2.is_empty(),
        "blobs outside the cone stay unfetched"
    );
}

/// `checkout --ignore-skip-worktree-bits .` restores the paths sparse checkout leaves out, as
/// git does (t1011); without it they stay out. git and git-par each in a copy of one repository.
#[test]
fn checkout_paths_with_and_without_ignore_skip_worktree_bits_match_git() {
    let s = scratch();
    let base = s.join("base");
    git_ok(
        s.path(),
        ["init", "-q", "-b", "main", base.to_str().unwrap()],
    );
    std::fs::create_dir_all(base.join("sub")).unwrap();
    std::fs::write(base.join("init.t"), "init\n").unwrap();
    std::fs::write(base.join("sub/added"), "added\n").unwrap();
    git_ok(&base, ["add", "."]);
    git_ok(&base, ["commit", "-q", "-m", "top"]);
    git_ok(&base, ["config", "core.sparseCheckout", "true"]);
    std::fs::write(base.join(".git/info/sparse-checkout"), "sub\n").unwrap();
    git_ok(&base, ["checkout", "-q"]);
    assert!(!base.join("init.t").exists(), "the fixture is not sparse");
    for flag in [None, Some("--ignore-skip-worktree-bits")] {
        let mut results = Vec::new();
        for par in [false, true] {
            let repo = s.join(format!("{}-{par}", flag.is_some()));
            copy_repo(&base, &repo);
            std::fs::write(repo.join("sub/added"), "modified\n").unwrap();
            let args: Vec<&str> = ["checkout"].into_iter().chain(flag).chain(["."]).collect();
            let run = if par {
                git_par(&repo, &args)
            } else {
                git(&repo, &args)
            };
            results.push((
                run.status.code(),
                repo.join("init.t").exists(),
                std::fs::read_to_string(repo.join("sub/added")).unwrap(),
                git_str(&repo, ["diff", "HEAD", "--stat"]),
            ));
        }
        assert_eq!(
            results[0], results[1],
            "{flag:?} (left: git, right: git-par)"
        );
        assert_eq!(results[1].1, flag.is_some());
    }
}

/// With sparse checkout, untracked files where new entries go are a warning, not a refusal,
/// and are overwritten (git's `WARNING_SPARSE_ORPHANED_NOT_OVERWRITTEN`, t1011): the same
/// exit code, messages, files and index as git's.
#[test]
fn untracked_files_in_the_way_of_new_entries_are_a_warning_with_sparse_checkout() {
    let s = scratch();
    let base = s.join("base");
    git_ok(
        s.path(),
        ["init", "-q", "-b", "main", base.to_str().unwrap()],
    );
    std::fs::write(base.join("init.t"), "init\n").unwrap();
    git_ok(&base, ["add", "."]);
    git_ok(&base, ["commit", "-q", "-m", "init"]);
    git_ok(&base, ["tag", "init"]);
    std::fs::create_dir_all(base.join("sub")).unwrap();
    std::fs::write(base.join("sub/added"), "added\n").unwrap();
    std::fs::write(base.join("sub/addedtoo"), "too\n").unwrap();
    git_ok(&base, ["add", "."]);
    git_ok(&base, ["commit", "-q", "-m", "top"]);
    git_ok(&base, ["tag", "top"]);
    git_ok(&base, ["config", "core.sparseCheckout", "true"]);
    std::fs::write(base.join(".git/info/sparse-checkout"), "sub\n").unwrap();
    git_ok(&base, ["checkout", "-q", "-f", "init"]);
    let mut results = Vec::new();
    for par in [false, true] {
        let repo = s.join(format!("r-{par}"));
        copy_repo(&base, &repo);
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        std::fs::write(repo.join("sub/added"), "untracked\n").unwrap();
        std::fs::write(repo.join("sub/addedtoo"), "").unwrap();
        let args = ["checkout", "-q", "top"];
        let run = if par {
            git_par(&repo, args)
        } else {
            git(&repo, args)
        };
        results.push((
            run.status.code(),
            run.stderr_str(),
            std::fs::read_to_string(repo.join("sub/added")).unwrap(),
            git_str(&repo, ["ls-files", "-t"]),
            git_str(&repo, ["status", "--porcelain"]),
        ));
    }
    assert_eq!(results[0], results[1], "left: git, right: git-par");
    assert!(results[0].1.contains("already present"), "{}", results[0].1);
}

/// `main`: `w`, `gone`, `e/g`, `m`, `keep.txt`; `other`: a directory `w/` in the place of the
/// file, `gone` and `e/g` deleted, `m` the same, and a new `new.txt`. Sparse patterns written by
/// hand (`/*.txt`), so nothing has the skip-worktree bit yet and the next update takes `w`,
/// `gone`, `e/g` and `m` out of the patterns; then a directory holding an untracked file in the
/// place of `w`, a file in the place of the directory `e`, and an untracked `new.txt`.
fn files_leaving_the_patterns(root: &Path) {
    fs::create_dir_all(root).unwrap();
    git_ok(root, ["init", "-q", "-b", "main", "."]);
    for p in ["w", "gone", "e/g", "m", "keep.txt"] {
        write(root, p, &format!("{p}\n"));
    }
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "main"]);
    git_ok(root, ["checkout", "-qb", "other"]);
    git_ok(root, ["rm", "-q", "w", "gone", "e/g"]);
    write(root, "w/x.txt", "in other\n");
    write(root, "new.txt", "new\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "other"]);
    git_ok(root, ["checkout", "-q", "main"]);
    git_ok(root, ["config", "core.sparseCheckout", "true"]);
    fs::write(root.join(".git/info/sparse-checkout"), "/*.txt\n").unwrap();
    fs::remove_file(root.join("w")).unwrap();
    write(root, "w/inside", "untracked\n");
    fs::remove_dir_all(root.join("e")).unwrap();
    write(root, "e", "a file where a directory was\n");
    write(root, "new.txt", "untracked\n");
}

/// A forced update (git's `oneway_merge` with `reset`) that removes files leaving the sparse
/// patterns does not look for untracked files in their place, warns with git's plumbing line
/// for each path something is at (`verify_uptodate_sparse` on an entry already marked removed:
/// the directory at `w`, the clean `gone`, `e/g` behind a file), and removes what it can: the
/// directory at `w` stays with its own warning, and so does its untracked file. With
/// `--discard-changes`, the untracked `new.txt` where an entry comes is git's other plumbing
/// line, in index order among the first ones. A safe switch refuses over the directory instead,
/// with the porcelain list.
#[test]
fn forced_removals_leaving_the_patterns_warn_per_path() {
    for command in [
        "switch --discard-changes other",
        "checkout -f other",
        "reset --hard other",
        "switch other",
    ] {
        same_as_git(files_leaving_the_patterns, &[command]);
    }
}

/// In a safe switch, the list of paths sparse checkout leaves is printed before the removals say
/// anything (git's `display_warning_msgs` comes before `check_updates`): here a modified file that
/// leaves the patterns, then a submodule's directory that cannot go because it is not empty.
#[test]
fn sparse_lists_come_before_the_removals_warnings() {
    same_as_git(
        |root| {
            fs::create_dir_all(root).unwrap();
            git_ok(root, ["init", "-q", "-b", "main", "."]);
            write(root, "x.txt", "x\n");
            write(root, "b.md", "b\n");
            git_ok(root, ["add", "."]);
            git_ok(root, ["commit", "-qm", "main"]);
            let head = git_str(root, ["rev-parse", "HEAD"]);
            let gitlink = format!("160000,{head},sub");
            git_ok(root, ["update-index", "--add", "--cacheinfo", &gitlink]);
            git_ok(root, ["commit", "-qm", "sub"]);
            git_ok(root, ["checkout", "-qb", "other"]);
            git_ok(root, ["rm", "-q", "--cached", "sub"]);
            git_ok(root, ["commit", "-qm", "other"]);
            git_ok(root, ["checkout", "-q", "main"]);
            write(root, "sub/u", "untracked\n");
            git_ok(root, ["config", "core.sparseCheckout", "true"]);
            fs::write(root.join(".git/info/sparse-checkout"), "/*.txt\n/sub\n").unwrap();
            write(root, "b.md", "changed\n");
        },
        &["switch other"],
    );
}
