//! `git par merge` and `git par pull` against git: each case builds an upstream repository and a
//! clone of it with real git, copies the clone twice, runs the same command with git in one
//! copy and with git-par in the other, and compares exit code, standard output and error, the
//! work tree byte for byte, the index, `git status --porcelain`, `HEAD`, `ORIG_HEAD`, the reflog
//! lines of `HEAD`, the branch and `origin/main`, and `FETCH_HEAD`.
//!
//! - fast-forwards (`--ff-only`, plain, `-q`, `-n`, `--stat` over `merge.stat=false`, `-m`,
//!   detached `HEAD`, `-`), with renames, deletions, mode changes and new directories in the
//!   diffstat; "Already up to date.";
//! - local changes carried over, and refused with merge's words (tracked and untracked);
//! - `post-merge` with its argument;
//! - merges git-par hands to git whole (diverged, `--no-ff`, `--squash`) and their results;
//! - pulls: `--ff-only`, plain, up to date, diverged with `--ff-only`, without configuration
//!   (git's advice), `--no-rebase` (git's merge), an explicit remote and branch, no tracking
//!   information, `pull.ff=only`.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use support::*;

fn write(root: &Path, path: &str, contents: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

/// An upstream repository and two identical clones of it, one for git and one for git-par.
struct Twin {
    _s: Scratch,
    up: PathBuf,
    by_git: PathBuf,
    by_par: PathBuf,
}

/// The upstream's first commit: a few directories, an executable, a file that will be renamed.
fn base(up: &Path) {
    git_ok(up, ["init", "-q", "-b", "main"]);
    for i in 0..20 {
        write(up, &format!("d{}/f{i}.txt", i % 4), &format!("file {i}\n"));
    }
    write(up, "a.txt", "a\n");
    write(
        up,
        "renamed.txt",
        "a file long enough to be found as a rename\n"
            .repeat(5)
            .as_str(),
    );
    write(up, "mode.sh", "#!/bin/sh\n");
    git_ok(up, ["add", "."]);
    git_ok(up, ["commit", "-qm", "base"]);
}

/// The upstream's second commit: changes, a deletion, a rename, a mode change, a new directory.
fn advance(up: &Path) {
    write(up, "a.txt", "a\nmore\n");
    write(up, "d1/f1.txt", "file 1 changed\n");
    write(up, "new/dir/n.txt", "new\n");
    git_ok(up, ["rm", "-q", "d2/f2.txt"]);
    git_ok(up, ["mv", "renamed.txt", "moved.txt"]);
    let mode = up.join("mode.sh");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&mode, fs::Permissions::from_mode(0o755)).unwrap();
    git_ok(up, ["add", "-A"]);
    git_ok(up, ["commit", "-qm", "advance"]);
}

impl Twin {
    /// Upstream with one commit, cloned, then `upstream` run on it (usually [`advance`]);
    /// `local` runs in the clone before it is copied.
    fn new(upstream: impl FnOnce(&Path), local: impl FnOnce(&Path)) -> Twin {
        let s = scratch();
        let up = s.join("up");
        fs::create_dir_all(&up).unwrap();
        base(&up);
        let src = s.join("src");
        git_ok(s.path(), ["clone", "-q", "up", "src"]);
        local(&src);
        upstream(&up);
        let by_git = s.join("git").join("repo");
        let by_par = s.join("par").join("repo");
        copy_repo(&src, &by_git);
        copy_repo(&src, &by_par);
        Twin {
            _s: s,
            up,
            by_git,
            by_par,
        }
    }

    /// Runs real git with `args` in both copies.
    #[track_caller]
    fn both(&self, args: &[&str]) {
        for side in [&self.by_git, &self.by_par] {
            git(side, args).assert_success();
        }
    }

    /// The same command with git and with git-par; everything git shows must be the same.
    /// Returns git's exit code.
    #[track_caller]
    fn same(&self, args: &[&str]) -> Option<i32> {
        // Commits git makes carry the time: fixed, so that both sides make the same ones.
        let dated = |dir: &Path, program: &str| {
            let mut all = vec![
                "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z",
                "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z",
                program,
            ];
            all.extend_from_slice(args);
            run("env", dir, all)
        };
        let g = dated(&self.by_git, "git");
        let p = dated(&self.by_par, GIT_PAR);
        let both = || format!("--- git:\n{}\n--- git-par:\n{}", g.describe(), p.describe());
        assert_same_output(&format!("{args:?}"), &g, &p, true);
        compare_worktrees(&self.by_git, &self.by_par);
        assert_same_views(
            &self.by_git,
            &self.by_par,
            &[
                &["ls-files", "-s"],
                &["status", "--porcelain"],
                &["rev-parse", "HEAD"],
                &["rev-parse", "-q", "--verify", "ORIG_HEAD"],
                &["symbolic-ref", "-q", "HEAD"],
                &["reflog", "show", "--format=%H %gs", "HEAD"],
                &["reflog", "show", "--format=%H %gs", "refs/heads/main"],
                &[
                    "reflog",
                    "show",
                    "--format=%H %gs",
                    "refs/remotes/origin/main",
                ],
                &["log", "-1", "--format=%T %P %s"],
            ],
            &format!("{args:?}\n{}", both()),
        );
        let fetch_head = |dir: &Path| fs::read(dir.join(".git/FETCH_HEAD")).ok();
        assert_eq!(
            fetch_head(&self.by_git),
            fetch_head(&self.by_par),
            "FETCH_HEAD"
        );
        // git-par's index needs no re-hashing: git finds the work tree clean as it is.
        assert_eq!(
            git(&self.by_par, ["diff-files", "--name-only"]).stdout_str(),
            git(&self.by_git, ["diff-files", "--name-only"]).stdout_str(),
        );
        g.status.code()
    }

    /// Writes `contents` to `path` in both work trees.
    fn write(&self, path: &str, contents: &str) {
        write(&self.by_git, path, contents);
        write(&self.by_par, path, contents);
    }
}

/// After a fetch, `origin/main` is a fast-forward of `main`.
fn fetched() -> Twin {
    let t = Twin::new(advance, |_| {});
    t.both(&["fetch", "-q"]);
    t
}

#[test]
fn merge_fast_forwards_as_git_does() {
    for args in [
        ["merge", "origin/main"].as_slice(),
        &["merge", "--ff-only", "origin/main"],
        &["merge", "-q", "origin/main"],
        &["merge", "-n", "origin/main"],
        &["-c", "merge.stat=false", "merge", "origin/main"],
        &["-c", "merge.stat=false", "merge", "--stat", "origin/main"],
        &["merge", "-m", "ignored", "origin/main"],
        &["merge", "-v", "--progress", "origin/main"],
        &[
            "merge",
            "--ff",
            "--no-edit",
            "origin/main",
            "--no-overwrite-ignore",
        ],
    ] {
        let t = fetched();
        assert_eq!(t.same(args), Some(0), "{args:?}");
        let head = git_str(&t.by_par, ["rev-parse", "HEAD"]);
        assert_eq!(head, git_str(&t.up, ["rev-parse", "HEAD"]), "{args:?}");
    }
}

#[test]
fn merge_fast_forwards_a_detached_head_and_the_previous_branch() {
    let t = fetched();
    t.both(&["checkout", "-q", "--detach"]);
    assert_eq!(t.same(&["merge", "origin/main"]), Some(0));

    let t = fetched();
    t.both(&["checkout", "-q", "-b", "next", "origin/main"]);
    t.both(&["checkout", "-q", "main"]);
    assert_eq!(t.same(&["merge", "-"]), Some(0));
    let subject = git_str(&t.by_par, ["reflog", "-1", "--format=%gs"]);
    assert_eq!(subject, "merge @{-1}: Fast-forward");
}

#[test]
fn merge_of_an_ambiguous_name_warns_once() {
    let t = fetched();
    t.both(&["branch", "x", "origin/main"]);
    t.both(&["tag", "x", "origin/main"]);
    assert_eq!(t.same(&["merge", "x"]), Some(0));
    let p = git_par(&t.by_par, ["merge", "x"]);
    assert_eq!(
        p.stderr_str().matches("is ambiguous").count(),
        1,
        "{}",
        p.describe()
    );
}

#[test]
fn merge_says_already_up_to_date() {
    let t = fetched();
    assert_eq!(t.same(&["merge", "HEAD"]), Some(0));
    let t = Twin::new(
        |_| {},
        |clone| {
            write(clone, "local.txt", "ahead\n");
            git_ok(clone, ["add", "."]);
            git_ok(clone, ["commit", "-qm", "ahead"]);
        },
    );
    assert_eq!(t.same(&["merge", "origin/main"]), Some(0));
    assert_eq!(t.same(&["merge", "-q", "HEAD~1"]), Some(0));
    // git records where HEAD was, even when nothing moves.
    assert_eq!(
        git_str(&t.by_par, ["rev-parse", "ORIG_HEAD"]),
        git_str(&t.by_par, ["rev-parse", "HEAD"])
    );
}

#[test]
fn merge_keeps_local_changes_and_refuses_to_lose_them() {
    // A change to a path the merge does not touch is carried over.
    let t = fetched();
    t.write("d0/f0.txt", "local\n");
    t.write("untracked.txt", "mine\n");
    assert_eq!(t.same(&["merge", "origin/main"]), Some(0));
    assert_eq!(
        fs::read_to_string(t.by_par.join("d0/f0.txt")).unwrap(),
        "local\n"
    );

    // A change to a path it changes, and an untracked file where it creates one: refused.
    let t = fetched();
    t.write("a.txt", "local\n");
    t.write("new/dir/n.txt", "untracked\n");
    let before = git_str(&t.by_par, ["rev-parse", "HEAD"]);
    assert_eq!(t.same(&["merge", "origin/main"]), Some(1));
    assert_eq!(git_str(&t.by_par, ["rev-parse", "HEAD"]), before);
    assert_eq!(
        fs::read_to_string(t.by_par.join("a.txt")).unwrap(),
        "local\n"
    );

    // Without git's advice, only the lists.
    let t = fetched();
    t.write("d1/f1.txt", "local\n");
    assert_eq!(
        t.same(&[
            "-c",
            "advice.commitBeforeMerge=false",
            "merge",
            "origin/main"
        ]),
        Some(1)
    );
    // The index locked by another process: git's error, nothing moves.
    let t = fetched();
    for side in [&t.by_git, &t.by_par] {
        fs::write(side.join(".git/index.lock"), "").unwrap();
    }
    let g = git(&t.by_git, ["merge", "origin/main"]);
    let p = git_par(&t.by_par, ["merge", "origin/main"]);
    assert_eq!(g.status.code(), p.status.code());
    let neutral = |r: &Run, dir: &Path| r.stderr_str().replace(&dir.display().to_string(), "REPO");
    assert_eq!(neutral(&g, &t.by_git), neutral(&p, &t.by_par));
    assert_eq!(g.stdout_str(), p.stdout_str());
    // A staged change to a path it changes.
    let t = fetched();
    t.write("a.txt", "staged\n");
    t.both(&["add", "a.txt"]);
    assert_eq!(t.same(&["merge", "--ff-only", "origin/main"]), Some(1));
}

#[test]
fn post_merge_runs_with_its_argument() {
    let t = fetched();
    for side in [&t.by_git, &t.by_par] {
        let hook = side.join(".git/hooks/post-merge");
        fs::write(
            &hook,
            "#!/bin/sh\necho \"post-merge $*\" >&2\ngit rev-parse HEAD >&2\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(t.same(&["merge", "origin/main"]), Some(0));
    let p = git_par(&t.by_par, ["merge", "origin/main"]);
    // Up to date: no hook.
    assert!(!p.stderr_str().contains("post-merge"), "{}", p.describe());
}

#[test]
fn merges_that_are_not_fast_forwards_are_gits() {
    let diverged = || {
        let t = Twin::new(advance, |clone| {
            write(clone, "local.txt", "ours\n");
            git_ok(clone, ["add", "."]);
            git_ok(clone, ["commit", "-qm", "ours"]);
        });
        t.both(&["fetch", "-q"]);
        t
    };
    for args in [
        ["merge", "--ff-only", "origin/main"].as_slice(),
        &["merge", "--no-edit", "origin/main"],
        &["merge", "--squash", "origin/main"],
        &["merge", "--no-ff", "--no-edit", "origin/main"],
        &["merge", "no-such-branch"],
        &["merge", "--abort"],
    ] {
        let t = diverged();
        t.same(args);
    }
    // `--no-ff` on a fast-forward makes a merge commit (git's).
    let t = fetched();
    let p = git_par(&t.by_par, ["merge", "--no-ff", "--no-edit", "origin/main"]).assert_success();
    let parents = git_str(&t.by_par, ["log", "-1", "--format=%P"]);
    assert_eq!(parents.split(' ').count(), 2, "{}", p.describe());
}

/// `git pull` in a clone whose upstream moved on.
#[test]
fn pull_fast_forwards_as_git_does() {
    for args in [
        ["pull", "--ff-only"].as_slice(),
        &["pull"],
        &["pull", "-q"],
        &["pull", "--stat", "-v"],
        &["pull", "--no-stat", "--ff"],
        &["pull", "origin", "main"],
        &["pull", "--ff-only", "origin"],
        &["pull", "--no-rebase", "--prune", "--tags"],
        &["-c", "pull.ff=only", "pull"],
        &["-c", "pull.rebase=false", "pull"],
    ] {
        let t = Twin::new(advance, |_| {});
        assert_eq!(t.same(args), Some(0), "{args:?}");
        let head = git_str(&t.by_par, ["rev-parse", "HEAD"]);
        assert_eq!(head, git_str(&t.up, ["rev-parse", "HEAD"]), "{args:?}");
    }
    // Nothing new: "Already up to date."
    let t = Twin::new(|_| {}, |_| {});
    assert_eq!(t.same(&["pull"]), Some(0));
    // Local changes in the way: merge's refusal, after the fetch.
    let t = Twin::new(advance, |_| {});
    t.write("a.txt", "local\n");
    assert_eq!(t.same(&["pull", "--ff-only"]), Some(1));
}

#[test]
fn pull_on_diverging_branches_says_what_git_says() {
    let diverged = || {
        Twin::new(advance, |clone| {
            write(clone, "local.txt", "ours\n");
            git_ok(clone, ["add", "."]);
            git_ok(clone, ["commit", "-qm", "ours"]);
        })
    };
    for (args, code) in [
        (["pull", "--ff-only"].as_slice(), Some(128)),
        (
            &["-c", "advice.diverging=false", "pull", "--ff-only"],
            Some(128),
        ),
        (&["pull"], Some(128)),
        (&["pull", "--no-rebase", "--no-edit"], Some(0)),
        (&["-c", "pull.rebase=false", "pull", "--no-edit"], Some(0)),
        (&["pull", "--rebase"], Some(0)),
        // git's hints in colour.
        (&["-c", "color.advice=always", "pull"], Some(128)),
    ] {
        let t = diverged();
        assert_eq!(t.same(args), code, "{args:?}");
    }
}

#[test]
fn pull_reads_keys_without_a_value_as_git_does() {
    // `[pull] rebase` without `=` is true (a rebase: git's); `rebase =` is false.
    for (config, code) in [
        ("[pull]\n\trebase\n", Some(0)),
        ("[pull]\n\trebase =\n\tff\n", Some(0)),
        ("[branch \"main\"]\n\trebase\n", Some(0)),
    ] {
        let t = Twin::new(advance, |clone| {
            write(clone, "local.txt", "ours\n");
            git_ok(clone, ["add", "."]);
            git_ok(clone, ["commit", "-qm", "ours"]);
            let path = clone.join(".git/config");
            let mut text = fs::read_to_string(&path).unwrap();
            text.push_str(config);
            fs::write(&path, text).unwrap();
        });
        assert_eq!(t.same(&["pull", "--no-edit"]), code, "{config}");
    }
}

#[test]
fn pull_of_an_annotated_tag_is_gits_merge() {
    // FETCH_HEAD names the tag object: git merges it (a tag not in refs/tags is no
    // fast-forward), and git-par's pull compares the commit it points to.
    for how in ["--no-edit", "--ff-only"] {
        let t = Twin::new(
            |up| {
                advance(up);
                git_ok(up, ["tag", "-a", "-m", "annotated", "v2"]);
            },
            |_| {},
        );
        assert_eq!(t.same(&["pull", how, "origin", "v2"]), Some(0), "{how}");
    }
}

#[test]
fn pull_that_fetches_into_the_current_branch_catches_the_work_tree_up() {
    let t = Twin::new(advance, |clone| {
        git_ok(clone, ["checkout", "-q", "-b", "side"]);
        write(clone, "side.txt", "side\n");
        git_ok(clone, ["add", "."]);
        git_ok(clone, ["commit", "-qm", "side"]);
        git_ok(clone, ["checkout", "-q", "main"]);
    });
    assert_eq!(t.same(&["pull", ".", "side:main"]), Some(0));
    assert!(t.by_par.join("side.txt").exists());
}

#[test]
fn pull_without_merge_candidates_says_why() {
    // No tracking information for the branch.
    let t = Twin::new(advance, |clone| {
        git_ok(clone, ["checkout", "-q", "-b", "loose"]);
    });
    assert_eq!(t.same(&["pull"]), Some(1));
    // Not on a branch.
    let t = Twin::new(advance, |clone| {
        git_ok(clone, ["checkout", "-q", "--detach"]);
    });
    assert_eq!(t.same(&["pull"]), Some(1));
    // A wildcard refspec that matches nothing.
    let t = Twin::new(advance, |_| {});
    assert_eq!(
        t.same(&[
            "pull",
            "origin",
            "refs/nothing/*:refs/remotes/origin/nothing/*"
        ]),
        Some(1)
    );
    // A remote that is not the branch's, without a branch.
    let t = Twin::new(advance, |clone| {
        git_ok(clone, ["remote", "add", "other", "../up"]);
    });
    assert_eq!(t.same(&["pull", "other"]), Some(1));
}
