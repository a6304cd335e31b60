//! What git-par records besides the files, against real git: the index's cache-tree and version,
//! config written under `config.lock`, and the clone of a shallow repository.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// The index of the work tree at `dir`, decoded by gix.
fn index_of(dir: &Path) -> gix::index::File {
    gix::index::File::at(
        dir.join(".git/index"),
        gix::hash::Kind::Sha1,
        false,
        Default::default(),
    )
    .expect("gix reads the index")
}

/// The index file of a linked work tree (its `.git` is a `gitdir:` file).
fn linked_index_path(worktree: &Path) -> std::path::PathBuf {
    let text = fs::read_to_string(worktree.join(".git")).unwrap();
    let admin = text.trim().strip_prefix("gitdir: ").unwrap().to_owned();
    Path::new(&admin).join("index")
}

fn index_version(path: &Path) -> u32 {
    let bytes = fs::read(path).unwrap();
    assert_eq!(&bytes[..4], b"DIRC");
    u32::from_be_bytes(bytes[4..8].try_into().unwrap())
}

/// `git write-tree` in `dir` names HEAD's tree.
#[track_caller]
fn assert_write_tree_is_head(dir: &Path) {
    assert_eq!(
        git_str(dir, ["write-tree"]),
        git_str(dir, ["rev-parse", "HEAD^{tree}"]),
        "write-tree in {}",
        dir.display()
    );
}

/// A clone carries the cache-tree git's own clone carries, node for node, and git accepts it.
#[test]
fn clone_writes_the_cache_tree_git_writes() {
    for fixture in [Fixture::KitchenSink, Fixture::ManyFiles] {
        let src = support::fixture(fixture);
        let s = scratch();
        let (by_git, by_par) = (s.join("by-git"), s.join("by-git-par"));
        let opts = CloneOpts::default();
        git_clone(s.path(), &opts, src, &by_git).assert_success();
        git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &by_par).assert_success();
        let (theirs, ours) = (index_of(&by_git), index_of(&by_par));
        assert!(theirs.tree().is_some(), "git's clone has a cache-tree");
        assert_eq!(
            ours.tree(),
            theirs.tree(),
            "cache-tree of {fixture:?} (left: git-par, right: git)"
        );
        assert_eq!(ours.version(), theirs.version());
        assert_write_tree_is_head(&by_par);
        assert_clean(&by_par, &[]);
    }
}

/// `worktree add` too: same cache-tree as git's `worktree add` of the same commit.
#[test]
fn worktree_add_writes_the_cache_tree_git_writes() {
    let src = support::fixture(Fixture::KitchenSink);
    let s = scratch();
    copy_git_dir(src, &s.join("git/repo"));
    copy_git_dir(src, &s.join("par/repo"));
    let (git_repo, par_repo) = (s.join("git/repo"), s.join("par/repo"));
    git_worktree_add(&git_repo, &[], &["--detach", "../wt", "HEAD"]).assert_success();
    git_par_worktree_add(
        &par_repo,
        &[],
        Settings::Jobs(2),
        &["--detach", "../wt", "HEAD"],
    )
    .assert_success();
    let read = |wt: &Path| {
        gix::index::File::at(
            linked_index_path(wt),
            gix::hash::Kind::Sha1,
            false,
            Default::default(),
        )
        .unwrap()
    };
    let (theirs, ours) = (read(&s.join("git/wt")), read(&s.join("par/wt")));
    assert!(theirs.tree().is_some());
    assert_eq!(ours.tree(), theirs.tree());
    assert_write_tree_is_head(&s.join("par/wt"));
    assert_clean(&s.join("par/wt"), &[]);
}

/// `index.version=4`, `feature.manyFiles` and `GIT_INDEX_VERSION=4` give a version 4 index that
/// git reads as its own; with `index.version=4` it is byte for byte what git writes when it
/// rewrites the same index itself.
#[test]
fn index_version_4_is_written_as_git_writes_it() {
    let src = support::fixture(Fixture::KitchenSink);
    let s = scratch();
    let by_git = s.join("by-git");
    git_clone(s.path(), &CloneOpts::default(), src, &by_git).assert_success();
    let listing = git_str(&by_git, ["ls-files", "-s"]);

    for (i, config) in [
        vec!["index.version=4".to_owned()],
        vec!["feature.manyFiles=true".to_owned()],
    ]
    .into_iter()
    .enumerate()
    {
        let dst = s.join(format!("v4-{i}"));
        let opts = CloneOpts {
            config: config.clone(),
            ..CloneOpts::default()
        };
        git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &dst).assert_success();
        let index = dst.join(".git/index");
        assert_eq!(index_version(&index), 4, "{config:?}");
        if config[0].starts_with("feature") {
            // manyFiles implies index.skipHash: a null checksum, as git writes it.
            let bytes = fs::read(&index).unwrap();
            assert!(bytes[bytes.len() - 20..].iter().all(|b| *b == 0));
        }
        assert_eq!(git_str(&dst, ["ls-files", "-s"]), listing, "{config:?}");
        assert_eq!(git_str(&dst, ["status", "--porcelain"]), "", "{config:?}");
        assert_write_tree_is_head(&dst);
        assert_eq!(index_of(&dst).tree(), index_of(&by_git).tree());

        if i == 0 {
            // git rewrites the same entries (it refreshes nothing here): identical bytes.
            let before = fs::read(&index).unwrap();
            let copy = s.join("rewritten");
            copy_repo(&dst, &copy);
            git_ok(&copy, ["update-index", "--index-version", "2"]);
            git_ok(&copy, ["update-index", "--index-version", "4"]);
            assert_eq!(index_version(&copy.join(".git/index")), 4);
            assert!(
                fs::read(copy.join(".git/index")).unwrap() == before,
                "git's v4 encoding of the same index differs from git-par's"
            );
        }
    }

    // GIT_INDEX_VERSION, through the environment as git reads it.
    let dst = s.join("v4-env");
    let mut args = vec![
        "GIT_INDEX_VERSION=4".to_owned(),
        GIT_PAR.to_owned(),
        "clone".to_owned(),
    ];
    args.push(src.display().to_string());
    args.push(dst.display().to_string());
    run("env", s.path(), &args).assert_success();
    assert_eq!(index_version(&dst.join(".git/index")), 4);
    assert_eq!(git_str(&dst, ["status", "--porcelain"]), "");
}

/// A repository with branches `main` and `x` (which differ), cloned by git.
fn clone_with_branch_x(s: &Scratch) -> std::path::PathBuf {
    let src = s.join("src");
    fs::create_dir_all(&src).unwrap();
    git_ok(&src, ["init", "-q"]);
    fs::create_dir_all(src.join("d")).unwrap();
    fs::write(src.join("d/f"), "1\n").unwrap();
    git_ok(&src, ["add", "."]);
    git_ok(&src, ["commit", "-qm", "one"]);
    git_ok(&src, ["checkout", "-qb", "x"]);
    fs::write(src.join("d/g"), "2\n").unwrap();
    git_ok(&src, ["add", "."]);
    git_ok(&src, ["commit", "-qm", "two"]);
    git_ok(&src, ["checkout", "-q", "main"]);
    let clone = s.join("clone");
    git_ok(s.path(), ["clone", "-q", "src", "clone"]);
    clone
}

/// A held `config.lock` stops `switch x` (which creates `x` tracking `origin/x`, as git guesses)
/// from writing the upstream config, with git's words; the config and the other process's lock
/// stay as they were. (`switch -c b origin/x` is compared with git in `tests/branches.rs`.)
#[test]
fn a_held_config_lock_is_refused_with_gits_words() {
    let s = scratch();
    let clone = clone_with_branch_x(&s);
    let config = fs::read(clone.join(".git/config")).unwrap();
    fs::write(clone.join(".git/config.lock"), "theirs").unwrap();

    // git's own behaviour, in a copy: the same words.
    let copy = s.join("copy");
    copy_repo(&clone, &copy);
    let by_git = git(&copy, ["switch", "x"]).assert_failure();
    let words = "could not lock config file .git/config: File exists";
    assert!(by_git.stderr_str().contains(words), "{}", by_git.describe());

    let by_par = git_par(&clone, ["switch", "x"]).assert_failure();
    assert!(by_par.stderr_str().contains(words), "{}", by_par.describe());
    assert_eq!(fs::read(clone.join(".git/config")).unwrap(), config);
    assert_eq!(
        fs::read(clone.join(".git/config.lock")).unwrap(),
        b"theirs",
        "the other process's lock is not ours to remove"
    );

    // Without the lock, the tracking config is written as git writes it.
    fs::remove_file(clone.join(".git/config.lock")).unwrap();
    git_ok(&clone, ["reset", "-q", "--hard"]);
    let _ = git(&clone, ["branch", "-D", "x"]);
    git_par(&clone, ["switch", "x"]).assert_success();
    assert_eq!(
        git_str(&clone, ["config", "branch.x.merge"]),
        "refs/heads/x"
    );
    assert_eq!(git_str(&clone, ["config", "branch.x.remote"]), "origin");
    assert!(!clone.join(".git/config.lock").exists());
    assert_write_tree_is_head(&clone);
}

/// `git par clone` of a shallow repository is the clone git makes of it: the same `shallow`
/// file, refs and history, and `git fsck` passes.
#[test]
fn clone_of_a_shallow_repository_matches_git() {
    let s = scratch();
    let src = s.join("deep");
    fs::create_dir_all(&src).unwrap();
    git_ok(&src, ["init", "-q"]);
    for n in 0..3 {
        fs::write(src.join("f"), format!("{n}\n")).unwrap();
        git_ok(&src, ["add", "f"]);
        git_ok(&src, ["commit", "-qm", &format!("c{n}")]);
    }
    let url = format!("file://{}", src.display());
    git_ok(
        s.path(),
        ["clone", "-q", "--depth", "1", &url, "shallow-src"],
    );
    let shallow_src = s.join("shallow-src");
    assert!(shallow_src.join(".git/shallow").exists());

    let opts = CloneOpts::default();
    let (by_git, by_par) = (s.join("by-git"), s.join("by-git-par"));
    git(s.path(), ["clone", "-q", "shallow-src", "by-git"]).assert_success();
    git_par_clone(s.path(), &opts, Settings::Default, &shallow_src, &by_par).assert_success();

    assert_eq!(
        fs::read(by_par.join(".git/shallow")).unwrap(),
        fs::read(by_git.join(".git/shallow")).unwrap()
    );
    git(&by_par, ["fsck", "--no-progress"]).assert_success();
    assert_eq!(
        git_str(&by_par, ["log", "--format=%H %s"]),
        git_str(&by_git, ["log", "--format=%H %s"])
    );
    assert_eq!(
        git_str(&by_par, ["rev-parse", "--is-shallow-repository"]),
        "true"
    );
    // HEAD and refs as git's clone (the URL differs by design: git-par records the path).
    let meta = |dir: &Path| {
        clone_metadata(dir)
            .into_iter()
            .filter(|(k, _)| *k != "remote.origin.url")
            .collect::<Vec<_>>()
    };
    assert_eq!(meta(&by_par), meta(&by_git));
    assert_clean(&by_par, &[]);
    assert_write_tree_is_head(&by_par);
}

/// Trees git would not write from an index: `odd` holds a subtree that spells a file's mode
/// `100664` (old git wrote such trees), `empty` a subtree that is the empty tree. Each is the
/// tree of a branch of the same name; `main` has the same files as `odd`, written by git.
fn unusual_trees(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("src");
    git_ok(dir, ["init", "-q", "-b", "main", repo.to_str().unwrap()]);
    fs::create_dir(repo.join("d")).unwrap();
    fs::write(repo.join("f"), "f\n").unwrap();
    fs::write(repo.join("d/g"), "g\n").unwrap();
    git_ok(&repo, ["add", "."]);
    git_ok(&repo, ["commit", "-q", "-m", "plain"]);
    let blob = |path: &str| git_str(&repo, ["rev-parse", &format!("HEAD:{path}")]);
    let mktree = |listing: String| {
        let run = run_with_input("git", &repo, ["mktree"], listing.as_bytes());
        run.assert_success().stdout_str().trim().to_owned()
    };
    let odd_sub = mktree(format!("100664 blob {}\tg\n", blob("d/g").trim()));
    let empty = git_str(&repo, ["hash-object", "-t", "tree", "-w", "/dev/null"]);
    for (branch, sub) in [("odd", odd_sub.as_str()), ("empty", empty.trim())] {
        let mut listing = format!("040000 tree {sub}\tsub\n");
        listing.push_str(&git_str(&repo, ["ls-tree", "HEAD"]));
        let tree = mktree(listing);
        let commit = git_str(&repo, ["commit-tree", &tree, "-p", "HEAD", "-m", branch]);
        git_ok(&repo, ["branch", branch, commit.trim()]);
    }
    repo
}

/// The cache-tree of a clone of those branches is git's: git hashes each directory from the
/// index's entries and keeps only the ids the repository holds, so a tree git would not write
/// has no valid node, and git-par takes the walked trees' own ids only where they are the
/// same as what hashing gives.
#[test]
fn clone_of_trees_git_would_not_write_has_gits_cache_tree() {
    let s = scratch();
    let src = unusual_trees(s.path());
    for branch in ["main", "odd", "empty"] {
        let opts = CloneOpts {
            branch: Some(branch.to_owned()),
            ..CloneOpts::default()
        };
        let (by_git, by_par) = (
            s.join(format!("git-{branch}")),
            s.join(format!("par-{branch}")),
        );
        git_clone(s.path(), &opts, &src, &by_git).assert_success();
        git_par_clone(s.path(), &opts, Settings::Jobs(2), &src, &by_par).assert_success();
        let (theirs, ours) = (index_of(&by_git), index_of(&by_par));
        assert_eq!(
            ours.tree(),
            theirs.tree(),
            "cache-tree of {branch} (left: git-par)"
        );
        if branch == "main" {
            assert!(theirs.tree().is_some_and(|t| t.num_entries.is_some()));
        }
        assert_clean(&by_par, &[]);
    }
}

/// The files and directories of the work tree at `dir` (`.git` aside), sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(rel);
        }
    }
    out.sort();
    out
}

/// git's `worktree add` and `reset --hard` prime the cache-tree from the tree they check out
/// (`prime_cache_tree`): its own ids, also for a tree git would not write as it is, so that
/// `git write-tree` (and the next commit) gives that tree back, also after a `reset --hard` in a
/// work tree checked out. git-par's do the same, and, like git, make no directory for an empty
/// subtree; its `checkout -f` hashes, as git's does.
#[test]
fn worktree_add_and_reset_hard_prime_the_cache_tree_as_git_does() {
    let s = scratch();
    let src = unusual_trees(s.path());
    let index_in = |wt: &Path| {
        let path = git_str(
            wt,
            ["rev-parse", "--path-format=absolute", "--git-path", "index"],
        );
        gix::index::File::at(
            path.trim(),
            gix::hash::Kind::Sha1,
            false,
            Default::default(),
        )
        .expect("gix reads the index")
    };
    for branch in ["main", "odd", "empty"] {
        let same = |by_git: &Path, by_par: &Path, what: &str| {
            assert_eq!(
                index_in(by_par).tree(),
                index_in(by_git).tree(),
                "cache-tree after {what} of {branch} (left: git-par)"
            );
            assert_eq!(
                git_str(by_par, ["write-tree"]),
                git_str(by_git, ["write-tree"]),
                "write-tree after {what} of {branch}"
            );
            assert_eq!(listing(by_par), listing(by_git), "{what} of {branch}");
            assert_clean(by_par, &[]);
        };
        let (by_git, by_par) = (
            s.join(format!("wt-git-{branch}")),
            s.join(format!("wt-par-{branch}")),
        );
        git_ok(
            &src,
            [
                "worktree",
                "add",
                "-q",
                "--detach",
                by_git.to_str().unwrap(),
                branch,
            ],
        );
        git_par(
            &src,
            [
                "worktree",
                "add",
                "-q",
                "--detach",
                by_par.to_str().unwrap(),
                branch,
            ],
        )
        .assert_success();
        same(&by_git, &by_par, "worktree add");
        if branch != "main" {
            let tree = git_str(&src, ["rev-parse", &format!("{branch}^{{tree}}")]);
            assert_eq!(git_str(&by_par, ["write-tree"]), tree, "the tree itself");
        }
        // reset --hard in a checked-out work tree (the two-way update) primes too, from every
        // branch to every other.
        for to in ["odd", "main", "empty", "main"] {
            git_ok(&by_git, ["reset", "-q", "--hard", to]);
            git_par(&by_par, ["reset", "-q", "--hard", to]).assert_success();
            same(&by_git, &by_par, &format!("reset --hard {to}"));
        }
        // Into the empty work tree of a clone without checkout: reset --hard primes, checkout -f
        // hashes.
        for (what, args) in [
            ("reset --hard", ["reset", "-q", "--hard"]),
            ("checkout -f", ["checkout", "-q", "-f"]),
        ] {
            let slug = what.replace(' ', "");
            let (by_git, by_par) = (
                s.join(format!("n-git-{branch}-{slug}")),
                s.join(format!("n-par-{branch}-{slug}")),
            );
            for dir in [&by_git, &by_par] {
                git_ok(
                    s.path(),
                    [
                        "clone",
                        "-q",
                        "-n",
                        "-b",
                        branch,
                        src.to_str().unwrap(),
                        dir.to_str().unwrap(),
                    ],
                );
            }
            git_ok(&by_git, args);
            git_par(&by_par, args).assert_success();
            same(&by_git, &by_par, what);
        }
    }
}

/// A commit whose tree has a gitlink without an object id (the null id, as only a broken tree
/// has), in a repository whose work tree and index are still at the commit before, and a copy
/// of it: one for git, one for git-par.
fn null_gitlink_pair(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let by_git = dir.join("by-git");
    git_ok(dir, ["init", "-q", "-b", "main", by_git.to_str().unwrap()]);
    fs::write(by_git.join("a"), "a\n").unwrap();
    git_ok(&by_git, ["add", "a"]);
    git_ok(&by_git, ["commit", "-q", "-m", "one"]);
    let listing = format!(
        "{}\n160000 commit {}\tbroken\n",
        git_str(&by_git, ["ls-tree", "HEAD"]).trim_end(),
        "0".repeat(40)
    );
    let tree = run_with_input("git", &by_git, ["mktree"], listing.as_bytes());
    let tree = tree.assert_success().stdout_str().trim().to_owned();
    let commit = git_str(
        &by_git,
        ["commit-tree", &tree, "-p", "HEAD", "-m", "broken"],
    );
    git_ok(&by_git, ["update-ref", "HEAD", commit.trim()]);
    let by_par = dir.join("by-par");
    copy_repo(&by_git, &by_par);
    (by_git, by_par)
}

#[test]
fn an_entry_without_object_id_is_refused_or_written_without_cache_tree_as_git_does() {
    let s = scratch();
    let (by_git, by_par) = null_gitlink_pair(s.path());
    // Refused: git writes the files, then refuses the index (the old one stays).
    let git_run = git(&by_git, ["reset", "--hard"]);
    let par_run = git_par(&by_par, ["reset", "--hard"]);
    assert_eq!(par_run.status.code(), git_run.status.code());
    assert!(
        par_run
            .stderr_str()
            .contains("cache entry has null sha1: broken"),
        "{:?} {} {}",
        par_run.status,
        par_run.stdout_str(),
        par_run.stderr_str()
    );
    assert_eq!(
        git_str(&by_par, ["ls-files", "-s"]),
        git_str(&by_git, ["ls-files", "-s"])
    );
    // With GIT_ALLOW_NULL_SHA1 the index is written, without a cache-tree (git's
    // `drop_cache_tree`), for reset --hard and for a full checkout into an empty work tree.
    for dir in [&by_git, &by_par] {
        let program = if dir == &by_git { "git" } else { GIT_PAR };
        let mut cmd = std::process::Command::new(program);
        clean_env(&mut cmd)
            .current_dir(dir)
            .env("GIT_ALLOW_NULL_SHA1", "1")
            .args(["reset", "--hard", "-q"]);
        assert!(cmd.status().unwrap().success(), "{program}");
    }
    assert_eq!(
        git_str(&by_par, ["ls-files", "-s"]),
        git_str(&by_git, ["ls-files", "-s"])
    );
    for dir in [&by_git, &by_par] {
        assert!(index_of(dir).tree().is_none(), "{}", dir.display());
    }
}

#[test]
fn split_indexes_are_written_split_as_git_writes_them() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    for n in 0..40 {
        fs::create_dir_all(by_git.join(format!("d{}", n % 4))).unwrap();
        fs::write(by_git.join(format!("d{}/f{n}", n % 4)), format!("{n}\n")).unwrap();
    }
    git_ok(&by_git, ["add", "."]);
    git_ok(&by_git, ["commit", "-q", "-m", "one"]);
    git_ok(&by_git, ["branch", "other"]);
    fs::write(by_git.join("d1/f1"), "changed\n").unwrap();
    fs::write(by_git.join("d2/new"), "new\n").unwrap();
    git_ok(&by_git, ["add", "."]);
    git_ok(&by_git, ["commit", "-q", "-m", "two"]);
    git_ok(&by_git, ["config", "core.splitIndex", "true"]);
    git_ok(&by_git, ["status", "--porcelain"]);
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    assert!(!shared_index(&by_par).is_empty());
    // The same commands in both: git's index stays split, reusing its shared index while few
    // entries change, and so does git-par's; both read back the same, clean.
    let steps: &[&[&str]] = &[
        &["checkout", "-q", "other"],
        &["reset", "-q", "--hard", "main"],
        &["switch", "-q", "-c", "topic", "other"],
        &[
            "-c",
            "splitIndex.maxPercentChange=0",
            "checkout",
            "-q",
            "main",
        ],
        &[
            "-c",
            "splitIndex.maxPercentChange=100",
            "checkout",
            "-q",
            "other",
        ],
        &["checkout", "main", "--", "d1"],
        &["-c", "core.splitIndex=false", "checkout", "-q", "main"],
        &["-c", "core.splitIndex=true", "checkout", "-q", "other"],
    ];
    for step in steps {
        let (git_before, par_before) = (shared_index(&by_git), shared_index(&by_par));
        git_ok(&by_git, *step);
        git_par(&by_par, *step).assert_success();
        let (git_after, par_after) = (shared_index(&by_git), shared_index(&by_par));
        assert_eq!(
            par_after.is_empty(),
            git_after.is_empty(),
            "{step:?}: split after"
        );
        assert_eq!(
            par_after == par_before,
            git_after == git_before,
            "{step:?}: shared index reused"
        );
        for view in [
            &["ls-files", "-s"][..],
            &["status", "--porcelain"],
            &["diff-index", "HEAD"],
        ] {
            assert_eq!(
                git_str(&by_par, view),
                git_str(&by_git, view),
                "{step:?}: {view:?}"
            );
        }
        assert_eq!(
            git_str(&by_par, ["diff-files", "--name-only"]),
            "",
            "{step:?}"
        );
    }
    // A work tree added to a repository whose configuration splits indexes: its own shared
    // index, in its own git directory.
    git_ok(&by_git, ["worktree", "add", "-q", "../wt-git", "main"]);
    git_par(&by_par, ["worktree", "add", "-q", "../wt-par", "main"]).assert_success();
    let (wt_git, wt_par) = (s.join("wt-git"), s.join("wt-par"));
    assert!(!shared_index(&wt_git).is_empty());
    assert!(!shared_index(&wt_par).is_empty());
    assert_eq!(
        git_str(&wt_par, ["ls-files", "-s"]),
        git_str(&wt_git, ["ls-files", "-s"])
    );
    assert_eq!(git_str(&wt_par, ["status", "--porcelain"]), "");
    assert_write_tree_is_head(&wt_par);
}
