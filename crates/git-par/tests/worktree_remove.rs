//! `git par worktree remove` against `git worktree remove` (issue 42): each case is built twice
//! by real git, the same way, and git removes the work tree in one copy, git-par in the other.
//! Compared: the exit code, standard error (each side's directory written `<side>`), what is left
//! on disk (every path, and every file's bytes outside `.git`), the registrations
//! (`worktrees/<id>`) and `git worktree list --porcelain`.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

fn git_at(cwd: &Path, args: &[&str]) -> Run {
    run_dated("git", cwd, args).assert_success()
}

/// `<side>/repo`, a repository with nested directories, a tracked symlink and a `.gitignore`,
/// and `<side>/wt`, a linked work tree of it that git added.
fn side(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    fs::create_dir_all(&repo).unwrap();
    git_at(&repo, &["init", "-q", "-b", "main"]);
    let mut files = vec![
        "a.txt".to_owned(),
        "dir/b.txt".to_owned(),
        "dir/sub/c.txt".to_owned(),
        "deep/1/2/3/4/d.txt".to_owned(),
    ];
    files.extend((0..60).map(|i| format!("many/d{}/f{i}", i % 6)));
    for f in &files {
        let path = repo.join(f);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, format!("{f}\n")).unwrap();
    }
    fs::write(repo.join(".gitignore"), "*.o\nbuild/\n").unwrap();
    std::os::unix::fs::symlink("dir", repo.join("link")).unwrap();
    git_at(&repo, &["add", "."]);
    git_at(&repo, &["commit", "-q", "-m", "one"]);
    git_at(&repo, &["worktree", "add", "-q", "../wt"]);
    dir.to_owned()
}

/// Every path below `dir` (but the object database and reflogs, whose files the two sides'
/// gits write at their own times), with each file's bytes outside `.git`, a symlink's target.
fn listing(dir: &Path) -> Vec<String> {
    disk_listing(dir, |rel| {
        rel.ends_with("/.git/objects") || rel.ends_with("/.git/logs")
    })
}

/// A fresh directory for one case: on tmpfs (`/dev/shm`) where there is one, so that the sides,
/// built file by file by git, cost little; else a scratch directory.
fn tmp() -> TempDir {
    tempfile::Builder::new()
        .prefix("wt-remove-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory")
}

/// What a side holds after the command, each side's directory written `<side>`.
fn state(side: &Path) -> (Vec<String>, String) {
    let list = git_at(&side.join("repo"), &["worktree", "list", "--porcelain"]).stdout_str();
    (
        listing(side),
        list.replace(&side.display().to_string(), "<side>"),
    )
}

/// Both sides built by `side`, then changed by `setup`; `git ARGS` run in `<side>/CWD` by git
/// on one (`<scratch>/git`) and by git-par on the other (`<scratch>/par`); their exit codes and
/// outputs compared. Returns both runs.
#[track_caller]
fn run_both(s: &Path, setup: impl Fn(&Path), cwd: &str, args: &[&str]) -> (Run, Run) {
    let (by_git, by_par) = (side(&s.join("git")), side(&s.join("par")));
    setup(&by_git);
    setup(&by_par);
    let git_run = run_dated("git", &by_git.join(cwd), args);
    let par_run = run_dated(GIT_PAR, &by_par.join(cwd), args);
    let shown = |run: &Run, side: &Path| {
        let side = side.display().to_string();
        (
            run.status.code(),
            run.stdout_str().replace(&side, "<side>"),
            run.stderr_str().replace(&side, "<side>"),
        )
    };
    assert_eq!(
        shown(&git_run, &by_git),
        shown(&par_run, &by_par),
        "git:\n{}\ngit-par:\n{}",
        git_run.describe(),
        par_run.describe()
    );
    (git_run, par_run)
}

/// [`run_both`], and what each side holds afterwards compared too. Returns git-par's run and
/// its side.
#[track_caller]
fn compare(s: &Path, setup: impl Fn(&Path), cwd: &str, args: &[&str]) -> (Run, PathBuf) {
    let (_, par_run) = run_both(s, setup, cwd, args);
    let (by_git, by_par) = (state(&s.join("git")), state(&s.join("par")));
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|x| !b.contains(x)).cloned().collect()
    };
    assert!(
        by_git == by_par,
        "after `git {args:?}`: only git's side has {:?}; only git-par's has {:?}; worktree list:\n{}\n{}",
        only(&by_git.0, &by_par.0),
        only(&by_par.0, &by_git.0),
        by_git.1,
        by_par.1
    );
    (par_run, s.join("par"))
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn a_clean_work_tree_goes_whole_with_its_registration() {
    let s = tmp();
    let s = s.path();
    let (run, side) = compare(s, |_| {}, "repo", &["worktree", "remove", "../wt"]);
    assert!(run.success());
    assert!(!side.join("wt").exists());
    assert!(
        !side.join("repo/.git/worktrees").exists(),
        "git removes the emptied worktrees/"
    );
}

#[test]
fn a_work_tree_is_found_by_its_name_and_from_anywhere_inside_the_repository() {
    let s = tmp();
    let s = s.path();
    compare(s, |_| {}, "repo/dir/sub", &["worktree", "remove", "wt"]);
    let s = tmp();
    let s = s.path();
    // From inside the work tree being removed, by its own path.
    compare(s, |_| {}, "wt/dir", &["worktree", "remove", ".."]);
}

#[test]
fn ignored_files_go_without_force() {
    let s = tmp();
    let s = s.path();
    let (run, _) = compare(
        s,
        |side| {
            write(&side.join("wt/dir/x.o"), "object\n");
            write(&side.join("wt/build/deep/out.bin"), "built\n");
        },
        "repo",
        &["worktree", "remove", "../wt"],
    );
    assert!(run.success());
}

/// A local change: its name, and what makes it.
type Change = (&'static str, fn(&Path));

#[test]
fn local_changes_refuse_and_leave_everything() {
    let changes: [Change; 4] = [
        ("modified", |side| {
            write(&side.join("wt/dir/sub/c.txt"), "changed\n")
        }),
        ("untracked", |side| {
            write(&side.join("wt/many/d3/new"), "new\n")
        }),
        ("deleted", |side| {
            fs::remove_file(side.join("wt/a.txt")).unwrap()
        }),
        ("staged", |side| {
            write(&side.join("wt/staged.txt"), "staged\n");
            git_at(&side.join("wt"), &["add", "staged.txt"]);
        }),
    ];
    for (what, change) in changes {
        let s = tmp();
        let s = s.path();
        let (run, side) = compare(s, change, "repo", &["worktree", "remove", "../wt"]);
        assert_eq!(run.status.code(), Some(128), "{what}");
        assert!(
            run.stderr_str()
                .contains("'../wt' contains modified or untracked files, use --force to delete it"),
            "{what}: {}",
            run.stderr_str()
        );
        assert!(
            side.join("wt/many/d5/f59").exists(),
            "{what}: nothing deleted"
        );
    }
}

#[test]
fn force_removes_local_changes() {
    let s = tmp();
    let s = s.path();
    let (run, _) = compare(
        s,
        |side| {
            write(&side.join("wt/dir/sub/c.txt"), "changed\n");
            write(&side.join("wt/untracked/new"), "new\n");
        },
        "repo",
        &["worktree", "remove", "--force", "../wt"],
    );
    assert!(run.success());
}

#[test]
fn a_locked_work_tree_needs_force_twice() {
    for reason in [&["--reason", "on a USB stick"][..], &[]] {
        let lock = |side: &Path| {
            let mut args = vec!["worktree", "lock"];
            args.extend_from_slice(reason);
            args.push("../wt");
            git_at(&side.join("repo"), &args);
        };
        for force in [&[][..], &["--force", "--no-force", "-f"]] {
            let s = tmp();
            let s = s.path();
            let mut args = vec!["worktree", "remove"];
            args.extend_from_slice(force);
            args.push("../wt");
            let (run, _) = compare(s, lock, "repo", &args);
            assert_eq!(run.status.code(), Some(128));
        }
        let s = tmp();
        let s = s.path();
        let (run, _) = compare(s, lock, "repo", &["worktree", "remove", "-ff", "../wt"]);
        assert!(run.success());
    }
}

#[test]
fn the_main_work_tree_and_unknown_ones_are_refused() {
    for arg in [".", "repo", "nowhere", "../wt/dir"] {
        let s = tmp();
        let s = s.path();
        let (run, _) = compare(s, |_| {}, "repo", &["worktree", "remove", "-f", arg]);
        assert_eq!(run.status.code(), Some(128), "{arg}");
    }
}

#[test]
fn usage_errors_are_gits() {
    for args in [
        &["worktree", "remove"][..],
        &["worktree", "remove", "../wt", "extra"],
        &["worktree", "remove", "--no-such", "../wt"],
        &["worktree", "remove", "-h"],
    ] {
        let s = tmp();
        let s = s.path();
        compare(s, |_| {}, "repo", args);
    }
}

#[test]
fn a_symlink_to_outside_is_removed_and_its_target_untouched() {
    let s = tmp();
    let s = s.path();
    let outside = |side: &Path| {
        write(&side.join("outside/keep"), "keep\n");
        std::os::unix::fs::symlink(side.join("outside"), side.join("wt/dir/out")).unwrap();
        std::os::unix::fs::symlink("../../outside", side.join("wt/many/rel")).unwrap();
    };
    let (run, side) = compare(s, outside, "repo", &["worktree", "remove", "-f", "../wt"]);
    assert!(run.success());
    assert_eq!(fs::read(side.join("outside/keep")).unwrap(), b"keep\n");
}

#[test]
fn a_missing_work_tree_loses_its_registration_unless_locked() {
    let gone = |side: &Path| fs::remove_dir_all(side.join("wt")).unwrap();
    let s = tmp();
    let s = s.path();
    let (run, side) = compare(s, gone, "repo", &["worktree", "remove", "../wt"]);
    assert!(run.success());
    assert!(!side.join("repo/.git/worktrees").exists());
    let s = tmp();
    let s = s.path();
    let locked = |side: &Path| {
        git_at(&side.join("repo"), &["worktree", "lock", "../wt"]);
        gone(side);
    };
    let (run, _) = compare(s, locked, "repo", &["worktree", "remove", "../wt"]);
    assert_eq!(run.status.code(), Some(128));
}

#[test]
fn a_registration_that_does_not_validate_is_refused_in_gits_words() {
    let s = tmp();
    let s = s.path();
    let broken = |side: &Path| fs::write(side.join("wt/.git"), "gitdir: /nowhere\n").unwrap();
    let (run, _) = compare(s, broken, "repo", &["worktree", "remove", "-f", "../wt"]);
    assert_eq!(run.status.code(), Some(128));
}

#[test]
fn populated_submodules_refuse_without_force() {
    let s = tmp();
    let s = s.path();
    let with_submodule = |side: &Path| {
        let sub = side.join("sub");
        fs::create_dir_all(&sub).unwrap();
        git_at(&sub, &["init", "-q", "-b", "main"]);
        write(&sub.join("s.txt"), "s\n");
        git_at(&sub, &["add", "."]);
        git_at(&sub, &["commit", "-q", "-m", "s"]);
        let repo = side.join("repo");
        git_at(
            &repo,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                "../sub",
                "sub",
            ],
        );
        git_at(&repo, &["commit", "-q", "-m", "submodule"]);
        git_at(&repo, &["worktree", "add", "-q", "../wt2"]);
        git_at(
            &side.join("wt2"),
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "update",
                "--init",
                "-q",
            ],
        );
    };
    let (run, _) = compare(s, with_submodule, "repo", &["worktree", "remove", "../wt2"]);
    assert_eq!(run.status.code(), Some(128));
    let (run, _) = compare(
        tmp().path(),
        with_submodule,
        "repo",
        &["worktree", "remove", "-f", "../wt2"],
    );
    assert!(run.success(), "{}", run.describe());
}

/// `git par worktree remove ../wt` from `repo` of a side set up by `setup`, with
/// `GIT_PAR_TRACE` on: asserts that it succeeded and returns its stderr (what the engine handed
/// to git, and why).
fn remove_traced(setup: impl Fn(&Path)) -> String {
    let s = tmp();
    let traced = side(s.path());
    setup(&traced);
    let mut cmd = Command::new(GIT_PAR);
    clean_env(&mut cmd)
        .current_dir(traced.join("repo"))
        .args(["worktree", "remove", "../wt"])
        .env("GIT_PAR_TRACE", "1");
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

#[test]
fn a_status_the_engine_hands_to_git_is_gits() {
    // core.fsmonitor (a hook, which answers nothing) with core.ignoreCase: the engine's
    // status goes to git.
    let monitored = |side: &Path| {
        let repo = side.join("repo");
        git_at(&repo, &["config", "core.fsmonitor", "/bin/false"]);
        git_at(&repo, &["config", "core.ignoreCase", "true"]);
    };
    let stderr = remove_traced(monitored);
    assert!(
        stderr.contains("handing the clean check's status to git"),
        "{stderr}"
    );
    let (run, _) = compare(
        tmp().path(),
        monitored,
        "repo",
        &["worktree", "remove", "../wt"],
    );
    assert!(run.success(), "{}", run.describe());
    let dirty = |side: &Path| {
        monitored(side);
        write(&side.join("wt/new"), "new\n");
    };
    let (run, _) = compare(
        tmp().path(),
        dirty,
        "repo",
        &["worktree", "remove", "../wt"],
    );
    assert_eq!(run.status.code(), Some(128));
}

#[test]
fn a_sparse_index_is_gits() {
    // git reads a sparse index without expanding it where the repository the command runs in
    // allows one (t1092's "worktree is not expanded"), else expands it with a hint, as here.
    let sparse = |side: &Path| {
        let wt = side.join("wt");
        git_at(
            &wt,
            &["sparse-checkout", "init", "--cone", "--sparse-index"],
        );
        git_at(&wt, &["sparse-checkout", "set", "dir"]);
    };
    let stderr = remove_traced(sparse);
    assert!(
        stderr.contains("handing the worktree remove to git: the work tree's index is sparse"),
        "{stderr}"
    );
    let (run, _) = compare(
        tmp().path(),
        sparse,
        "repo",
        &["worktree", "remove", "../wt"],
    );
    assert!(run
        .stderr_str()
        .contains("hint: The sparse index is expanding"));
    // With --force, no index is read: git-par deletes it.
    compare(
        tmp().path(),
        sparse,
        "repo",
        &["worktree", "remove", "-f", "../wt"],
    );
}

#[test]
fn under_trace2_the_status_is_gits_and_traced() {
    // git's check runs a `git status`, whose events tests read (t1092: the sparse index not
    // expanded); the engine writes none.
    let s = tmp();
    let traced = side(s.path());
    let trace = s.path().join("trace2.txt");
    let mut cmd = Command::new(GIT_PAR);
    clean_env(&mut cmd)
        .current_dir(traced.join("repo"))
        .args(["worktree", "remove", "../wt"])
        .env("GIT_TRACE2_EVENT", &trace);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let events = fs::read_to_string(&trace).unwrap();
    assert!(events.contains(r#""event":"cmd_name","#), "{events}");
    assert!(events.contains(r#""name":"status""#), "{events}");
    assert!(!traced.join("wt").exists());
}

#[test]
fn a_file_that_cannot_be_deleted_fails_as_with_git() {
    let chattr = |path: &Path, flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    };
    let s = scratch(); // immutable files: not on tmpfs
    let s = s.path();
    let probe = s.join("probe");
    fs::write(&probe, "").unwrap();
    if !chattr(&probe, "+i") {
        eprintln!("\n!!!!!!!! SKIPPED: no immutable files here (chattr +i) !!!!!!!!\n");
        return;
    }
    chattr(&probe, "-i");
    let immutable = |side: &Path| assert!(chattr(&side.join("wt/deep/1/2/3/4/d.txt"), "+i"));
    // What else is left differs with the order the entries are met in (git's readdir order,
    // git-par's threads): the exit code, the message, the file and the registration are git's.
    let result = std::panic::catch_unwind(|| {
        run_both(s, immutable, "repo", &["worktree", "remove", "../wt"])
    });
    for side in ["git", "par"] {
        chattr(&s.join(side).join("wt/deep/1/2/3/4/d.txt"), "-i");
    }
    let (_, run) = result.unwrap_or_else(|e| std::panic::resume_unwind(e));
    assert_eq!(run.status.code(), Some(255));
    for side in ["git", "par"] {
        let side = s.join(side);
        assert!(side.join("wt/deep/1/2/3/4/d.txt").exists());
        assert!(!side.join("repo/.git/worktrees").exists());
    }
}

#[test]
fn transparent_mode_routes_worktree_remove_to_git_par() {
    let s = tmp();
    let s = s.path();
    let side = side(&s.join("side"));
    let bin = s.join("bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(GIT_PAR, bin.join("git")).unwrap();
    let mut cmd = Command::new(bin.join("git"));
    clean_env(&mut cmd)
        .current_dir(side.join("repo"))
        .args(["worktree", "remove", "../wt"])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("GIT_PAR_TRACE", "1");
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("git-par: as git: worktree -> git-par"),
        "{stderr}"
    );
    assert!(!side.join("wt").exists());
}
