//! The process's current directory is never removed by checkout, switch or reset (git 2.35 and
//! later, t2501-cwd-empty): emptied, it stays; an update that would put a file in its place
//! refuses with git's words and changes nothing. Each case runs git and git-par side by side in
//! two copies of one repository built by git.

mod support;

use std::path::{Path, PathBuf};

use support::*;

/// A repository like t2501's: `init`; `foo/bar/baz.t` added on top (tag `baz`); branch
/// `fd_conflict` from `init` where `dirORfile/` (a directory) becomes the file `dirORfile`;
/// branch `df_conflict` at the directory's commit.
fn repository(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    git_ok(dir, ["init", "-q", "-b", "main", repo.to_str().unwrap()]);
    let commit = |files: &[(&str, &str)], msg: &str| {
        for (path, text) in files {
            let p = repo.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        git_ok(&repo, ["add", "-A"]);
        git_ok(&repo, ["commit", "-q", "-m", msg]);
    };
    commit(&[("init.t", "init\n")], "init");
    git_ok(&repo, ["tag", "init"]);
    git_ok(&repo, ["branch", "fd_conflict"]);
    commit(&[("foo/bar/baz.t", "baz\n")], "baz");
    git_ok(&repo, ["tag", "baz"]);
    git_ok(&repo, ["checkout", "-q", "fd_conflict"]);
    commit(&[("dirORfile/foo.t", "foo\n")], "dir");
    git_ok(&repo, ["branch", "df_conflict"]);
    git_ok(&repo, ["rm", "-q", "-r", "dirORfile"]);
    commit(&[("dirORfile", "not-a-directory\n")], "file");
    git_ok(&repo, ["checkout", "-q", "main"]);
    repo
}

/// What a command left: its exit code and standard error, whether `keep` is a directory, what
/// `git status --porcelain` says.
fn outcome(repo: &Path, keep: &str, run: &Run) -> (Option<i32>, String, bool, String) {
    (
        run.status.code(),
        run.stderr_str(),
        repo.join(keep).is_dir(),
        git_str(repo, ["status", "--porcelain"]),
    )
}

/// `git ARGS` and `git par ARGS`, each from `sub` of its own copy after `setup` (run at the
/// top by git), compared.
#[track_caller]
fn both(setup: &[&str], sub: &str, args: &[&str]) -> (Option<i32>, String, bool, String) {
    let s = scratch();
    let base = repository(s.path());
    let theirs = s.join("git");
    let ours = s.join("par");
    copy_repo(&base, &theirs);
    copy_repo(&base, &ours);
    let mut results = Vec::new();
    for (repo, par) in [(&theirs, false), (&ours, true)] {
        git_ok(repo, setup);
        let cwd = repo.join(sub);
        std::fs::create_dir_all(&cwd).unwrap();
        let run = if par {
            git_par(&cwd, args)
        } else {
            git(&cwd, args)
        };
        results.push(outcome(repo, sub, &run));
    }
    assert_eq!(results[0], results[1], "left: git, right: git-par");
    results.pop().unwrap()
}

#[test]
fn checkout_and_reset_keep_an_emptied_cwd() {
    for args in [
        &["checkout", "-q", "init"][..],
        &["reset", "-q", "--hard", "init"],
    ] {
        let (code, _, kept, status) = both(&["checkout", "-q", "baz"], "foo", args);
        assert_eq!(code, Some(0));
        assert!(kept, "foo was removed");
        assert_eq!(status, "");
    }
}

#[test]
fn checkout_and_reset_refuse_to_remove_the_cwd() {
    let (code, stderr, kept, status) = both(
        &["checkout", "-q", "df_conflict"],
        "dirORfile",
        &["checkout", "fd_conflict"],
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("Refusing to remove the current working directory"),
        "{stderr}"
    );
    assert!(kept);
    assert_eq!(status, "");
    let (code, stderr, kept, _) = both(
        &["checkout", "-q", "df_conflict"],
        "dirORfile",
        &["reset", "--hard", "fd_conflict"],
    );
    assert_eq!(code, Some(128));
    assert!(
        stderr.contains("since it is the current working directory"),
        "{stderr}"
    );
    assert!(kept);
}

/// `reset --hard` that moves nothing: logged in HEAD's reflog through a symbolic HEAD, not
/// logged at all from a detached HEAD (git's files backend skips an unchanged ref), as git.
#[test]
fn reset_hard_in_place_logs_as_git_does() {
    let s = scratch();
    let base = repository(s.path());
    let mut logs = Vec::new();
    for par in [false, true] {
        let repo = s.join(format!("r-{par}"));
        copy_repo(&base, &repo);
        let run = |args: &[&str]| {
            if par {
                git_par(&repo, args).assert_success();
            } else {
                git(&repo, args).assert_success();
            }
        };
        run(&["reset", "-q", "--hard"]);
        git_ok(&repo, ["checkout", "-q", "--detach"]);
        run(&["reset", "-q", "--hard", "HEAD"]);
        let log = |name: &str| {
            std::fs::read_to_string(repo.join(".git/logs").join(name))
                .unwrap()
                .lines()
                .map(|l| l.split('\t').nth(1).unwrap_or("").to_owned())
                .collect::<Vec<_>>()
        };
        logs.push((log("HEAD"), log("refs/heads/main")));
    }
    assert_eq!(logs[0], logs[1], "left: git, right: git-par");
}
