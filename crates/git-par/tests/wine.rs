//! git-par.exe, the Windows build, under Wine, against the host's git (issue 41).
//!
//! Each scenario builds its repositories with the host's git, configured as Git for Windows'
//! `git init` configures a repository on Windows (`core.symlinks=false`, `core.filemode=false`,
//! `core.ignorecase=true`), runs git-par.exe under Wine in one copy and the host's git in a twin,
//! then compares what the host's git reads back from both: `status --porcelain`, the index
//! against HEAD (`diff-index --cached`), the staged entries (`ls-files -s`) and every file's
//! bytes. git-par.exe reaches the host's git through the bridge (`crates/winbridge`). Where the
//! host's git cannot be the twin (names equal but for case, which its case-sensitive filesystem
//! keeps apart; a file another Windows program holds open), the scenario checks git's rules.
//!
//! These tests need the Windows build and a bridge: `scripts/windows test` builds both and the
//! holder of open files (`scripts/windows-support/holder.c`), starts the bridge and sets
//! `GITPAR_WINDOWS_EXE` and `GITPAR_WINDOWS_HOLDER`. Without the first each test prints that it
//! did not run and passes: `cargo test` on Linux does not build for Windows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Windows build under test, when `scripts/windows test` runs this file.
fn exe() -> Option<PathBuf> {
    let exe = std::env::var_os("GITPAR_WINDOWS_EXE").map(PathBuf::from);
    if exe.is_none() {
        eprintln!("not run: GITPAR_WINDOWS_EXE is not set (scripts/windows test sets it)");
    }
    exe
}

/// The fixtures' folder at the root of the workspace.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// The host's git in `dir`, with no system or user configuration; panics unless it succeeds.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = host_git(dir, args);
    assert!(out.status.success(), "git {args:?} in {dir:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The host's git in `dir`, whatever its outcome.
fn host_git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap()
}

/// git-par.exe under Wine in `dir`, with the bridge the environment names.
fn par(exe: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new("/usr/lib/wine/wine64")
        .arg(exe)
        .args(args)
        .current_dir(dir)
        .env("WINEDEBUG", "-all")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap()
}

/// Configure `repo` as Git for Windows' `git init` would have on NTFS.
fn as_on_windows(repo: &Path) {
    for (key, value) in [
        ("core.symlinks", "false"),
        ("core.filemode", "false"),
        ("core.ignorecase", "true"),
        ("core.autocrlf", "false"),
    ] {
        git(repo, &["config", key, value]);
    }
}

/// A fixture built by `script` into `dir/made` (its repository `dir/made/sub` when the script
/// makes several), configured as on Windows, and its twin.
fn twins(dir: &Path, script: &str, args: &[&str], sub: &str) -> (PathBuf, PathBuf) {
    let made = dir.join("made");
    let status = Command::new("bash")
        .arg(fixtures().join(script))
        .arg(&made)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
    copy_pair(&made.join(sub), dir)
}

/// Two copies of the repository `from`, `par` and `git`, configured as on Windows.
fn copy_pair(from: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let pair = (dir.join("par"), dir.join("git"));
    for to in [&pair.0, &pair.1] {
        let ok = Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status()
            .unwrap();
        assert!(ok.success());
        as_on_windows(to);
    }
    pair
}

/// Every file of the work tree (`.git` left out) with its bytes.
fn tree_of(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// What the host's git reads back from a repository: status, the index against HEAD, the staged
/// entries, HEAD, and the work tree's files.
fn state(repo: &Path) -> (String, String, String, String, BTreeMap<String, Vec<u8>>) {
    (
        git(repo, &["status", "--porcelain=v1", "-uall", "--ignored"]),
        git(repo, &["diff-index", "--cached", "HEAD"]),
        git(repo, &["ls-files", "-s"]),
        git(repo, &["rev-parse", "--symbolic-full-name", "HEAD", "HEAD"]),
        tree_of(repo),
    )
}

/// Run `args` with git-par.exe in `par_repo` and with the host's git in `git_repo`; both must
/// exit alike and leave the same state.
fn same(exe: &Path, par_repo: &Path, git_repo: &Path, args: &[&str]) {
    let ours = par(exe, par_repo, args);
    let theirs = host_git(git_repo, args);
    agree(args, (&ours, par_repo), (&theirs, git_repo));
}

/// git-par.exe's run of `args` in one repository and the host git's in its twin exited alike
/// and left the same state.
fn agree(args: &[&str], (ours, par_repo): (&Output, &Path), (theirs, git_repo): (&Output, &Path)) {
    assert_eq!(
        ours.status.code(),
        theirs.status.code(),
        "exit code of {args:?}: git-par.exe {ours:?}, git {theirs:?}"
    );
    assert_eq!(state(par_repo), state(git_repo), "after {args:?}");
}

#[test]
fn reset_hard_checks_out_this_repository() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let src = tmp.path().join("src");
    let out = host_git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--no-checkout",
            &project.to_string_lossy(),
            "src",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let (a, b) = copy_pair(&src, tmp.path());
    same(&exe, &a, &b, &["reset", "-q", "--hard", "HEAD"]);
    assert!(
        tree_of(&a).len() > 100,
        "a real checkout: {}",
        tree_of(&a).len()
    );
}

#[test]
fn switches_through_every_type_change() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = twins(tmp.path(), "make_switch_types.sh", &[], "");
    // Its names include `b.` (a trailing dot), which Git for Windows refuses under
    // core.protectNTFS and a Linux git writes: the type changes are compared without that rule
    // (the rule has its own test below).
    for repo in [&a, &b] {
        git(repo, &["config", "core.protectNTFS", "false"]);
    }
    // The fixture was checked out with symlinks; as on Windows, start from a checkout made
    // with core.symlinks=false.
    for repo in [&a, &b] {
        git(repo, &["reset", "-q", "--hard", "HEAD"]);
        let links: Vec<String> = git(repo, &["ls-files", "-s"])
            .lines()
            .filter(|l| l.starts_with("120000"))
            .map(|l| l.split('\t').nth(1).unwrap().to_owned())
            .collect();
        for link in links {
            let _ = std::fs::remove_file(repo.join(&link));
        }
        git(repo, &["checkout", "-q", "--", "."]);
    }
    same(&exe, &a, &b, &["switch", "-q", "type-b"]);
    same(&exe, &a, &b, &["switch", "-q", "type-a"]);
    same(&exe, &a, &b, &["checkout", "-q", "t-b"]);
}

#[test]
fn restore_and_reset_bring_back_what_was_changed() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = twins(tmp.path(), "make_switch_history.sh", &[], "");
    for repo in [&a, &b] {
        git(repo, &["reset", "-q", "--hard", "HEAD"]);
        let files = git(repo, &["ls-files"]);
        let mut names = files.lines();
        let first = names.next().unwrap();
        std::fs::write(repo.join(first), "changed\n").unwrap();
        if let Some(second) = names.next() {
            std::fs::remove_file(repo.join(second)).unwrap();
        }
        std::fs::write(repo.join("untracked.txt"), "new\n").unwrap();
    }
    same(&exe, &a, &b, &["restore", "."]);
    for repo in [&a, &b] {
        let first = git(repo, &["ls-files"]).lines().next().unwrap().to_owned();
        std::fs::write(repo.join(&first), "changed again\n").unwrap();
        git(repo, &["add", &first]);
    }
    same(&exe, &a, &b, &["reset", "-q", "--hard"]);
}

#[test]
fn status_reads_a_dirty_tree_as_git_does() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = twins(tmp.path(), "make_switch_history.sh", &[], "");
    git(&a, &["reset", "-q", "--hard", "HEAD"]);
    let files = git(&a, &["ls-files"]);
    let mut names = files.lines();
    std::fs::write(a.join(names.next().unwrap()), "changed\n").unwrap();
    std::fs::remove_file(a.join(names.next().unwrap())).unwrap();
    std::fs::write(a.join("untracked.txt"), "new\n").unwrap();
    let ours = par(&exe, &a, &["status", "--porcelain"]);
    assert!(ours.status.success(), "{ours:?}");
    let theirs = git(&a, &["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&ours.stdout), theirs);
}

#[test]
fn names_windows_cannot_hold_are_refused_before_anything_is_written() {
    let Some(exe) = exe() else { return };
    for case in [
        "windows-reserved",
        "dotgit-ntfs-short",
        "dotgit-trailing-dot",
        "dotgit-ntfs-stream",
        "dotgit-backslash",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, _) = twins(tmp.path(), "make_hostile.sh", &[case], case);
        let before = tree_of(&repo);
        let out = par(&exe, &repo, &["reset", "--hard", "main"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{case}: {out:?}");
        assert!(stderr.contains("invalid path"), "{case}: {stderr}");
        assert_eq!(tree_of(&repo), before, "{case}: nothing written");
    }
}

#[test]
fn clone_and_worktree_add_go_through_the_bridge() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (src, _) = twins(tmp.path(), "make_switch_history.sh", &[], "");
    let src = src.to_string_lossy().into_owned();
    let ours = par(
        &exe,
        tmp.path(),
        &[
            "clone",
            "-q",
            "-c",
            "core.symlinks=false",
            "-c",
            "core.filemode=false",
            &src,
            "par-clone",
        ],
    );
    assert!(ours.status.success(), "{ours:?}");
    let theirs = host_git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "-c",
            "core.symlinks=false",
            "-c",
            "core.filemode=false",
            &src,
            "git-clone",
        ],
    );
    assert!(theirs.status.success(), "{theirs:?}");
    let (a, b) = (tmp.path().join("par-clone"), tmp.path().join("git-clone"));
    assert_eq!(state(&a), state(&b));
    let ours = par(&exe, &a, &["worktree", "add", "-q", "../par-wt", "HEAD~1"]);
    assert!(ours.status.success(), "{ours:?}");
    let theirs = host_git(&b, &["worktree", "add", "-q", "../git-wt", "HEAD~1"]);
    assert!(theirs.status.success(), "{theirs:?}");
    let (wa, wb) = (tmp.path().join("par-wt"), tmp.path().join("git-wt"));
    assert_eq!(state(&wa), state(&wb));
}

#[test]
fn a_post_checkout_hook_runs_through_the_shell_with_gits_arguments() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = twins(tmp.path(), "make_switch_history.sh", &[], "");
    for repo in [&a, &b] {
        git(repo, &["reset", "-q", "--hard", "HEAD"]);
        git(repo, &["branch", "other", "HEAD~1"]);
        let hook = repo.join(".git/hooks/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\necho \"$1 $2 $3\" >>.git/hook-log\n").unwrap();
        let ok = Command::new("chmod").arg("+x").arg(&hook).status().unwrap();
        assert!(ok.success());
    }
    same(&exe, &a, &b, &["switch", "-q", "other"]);
    let log = |repo: &Path| std::fs::read_to_string(repo.join(".git/hook-log")).unwrap();
    assert_eq!(log(&a), log(&b));
    assert_eq!(log(&a).lines().count(), 1, "the hook ran once");
}

/// Sets the modification time of `path` to `when` (`touch -d`'s form, e.g. `@1700000000`).
fn touch(path: &Path, when: &str) {
    let ok = Command::new("touch")
        .args(["-d", when])
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success(), "touch {path:?}");
}

/// The fields of `path`'s entry as `git ls-files --debug` prints them (`ino: 0`, `size: 4`...).
fn entry_fields(repo: &Path, path: &str) -> Vec<String> {
    git(repo, &["ls-files", "--debug", "--", path])
        .split(['\n', '\t'])
        .map(|field| field.trim().to_owned())
        .filter(|field| !field.is_empty())
        .collect()
}

/// git's racy-git rule with the stat data Git for Windows records. A file rewritten with the
/// same size in the second its index was written looks clean by its stat data; git hashes it,
/// reports it modified, and smudges its entry's size when it writes the index
/// (`ce_smudge_racily_clean_entry`), so that a later index cannot hide the change. git skips the
/// smudge when the stat data differ, so git-par.exe smudges only if what it records is what
/// Windows reports back (inode, device and owner 0; the creation time, which a rewrite in place
/// keeps, as the change time). The random scenarios' Windows flavour cannot check this: the
/// host's git records Linux's stat data there (`docs/windows.md`).
#[test]
fn a_racily_clean_file_is_smudged_with_windows_stat_data() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    git(tmp.path(), &["init", "-q", "-b", "main", "repo"]);
    as_on_windows(&repo);
    std::fs::write(repo.join("f"), "one\n").unwrap();
    git(&repo, &["add", "f"]);
    git(&repo, &["commit", "-q", "-m", "f"]);
    let second = "@1700000000";
    touch(&repo.join("f"), second);
    let out = par(&exe, &repo, &["refresh", "-q"]);
    assert!(out.status.success(), "{out:?}");
    let fields = entry_fields(&repo, "f");
    for windows in ["dev: 0", "ino: 0", "uid: 0", "gid: 0"] {
        assert!(fields.iter().any(|f| f == windows), "{windows}: {fields:?}");
    }
    // The index written in the file's second; the file rewritten in it, with the same size.
    touch(&repo.join(".git/index"), second);
    std::fs::write(repo.join("f"), "two\n").unwrap();
    touch(&repo.join("f"), second);
    let ours = par(&exe, &repo, &["status", "--porcelain"]);
    assert!(ours.status.success(), "{ours:?}");
    assert_eq!(String::from_utf8_lossy(&ours.stdout), " M f\n");
    let fields = entry_fields(&repo, "f");
    assert!(fields.iter().any(|f| f == "size: 0"), "smudged: {fields:?}");
    assert_eq!(git(&repo, &["status", "--porcelain"]), " M f\n");
}

/// Paths typed with Windows' separator: Git for Windows takes `\` in a pathspec as `/`
/// (`normalize_path_copy` treats both as directory separators), also with `..` from a
/// subdirectory, so `restore 'd\e\f'` is `restore d/e/f`.
#[test]
fn pathspecs_with_backslashes_name_the_same_paths() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = twins(tmp.path(), "make_switch_history.sh", &[], "");
    for repo in [&a, &b] {
        git(repo, &["reset", "-q", "--hard", "HEAD"]);
        std::fs::create_dir_all(repo.join("d/e")).unwrap();
        std::fs::write(repo.join("d/e/f"), "one\n").unwrap();
        std::fs::write(repo.join("g"), "two\n").unwrap();
        git(repo, &["add", "d/e/f", "g"]);
        git(repo, &["commit", "-q", "-m", "d/e/f and g"]);
        std::fs::write(repo.join("d/e/f"), "changed\n").unwrap();
        std::fs::write(repo.join("g"), "changed\n").unwrap();
    }
    let ours = par(&exe, &a, &["restore", r"d\e\f"]);
    assert!(ours.status.success(), "{ours:?}");
    git(&b, &["restore", "d/e/f"]);
    assert_eq!(state(&a), state(&b), "after restore d\\e\\f");
    let ours = par(&exe, &a.join("d"), &["restore", r"..\g"]);
    assert!(ours.status.success(), "{ours:?}");
    git(&b.join("d"), &["restore", "../g"]);
    assert_eq!(state(&a), state(&b), "after restore ..\\g");
    assert_eq!(git(&a, &["status", "--porcelain"]), "");
}

/// The host's git in `dir`, with `files` written and committed on a new branch `branch` from
/// the current one (or on the current branch when `branch` is empty), then `back` checked out.
fn commit_files(dir: &Path, branch: &str, files: &[(&str, &[u8])], gone: &[&str], back: &str) {
    if !branch.is_empty() {
        git(dir, &["switch", "-q", "-c", branch]);
    }
    for (path, bytes) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    for path in gone {
        git(dir, &["rm", "-q", path]);
    }
    git(dir, &["add", "-A"]);
    let message = if branch.is_empty() { "first" } else { branch };
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["switch", "-q", back]);
}

/// A repository made by the host's (case-sensitive) git: `plain` holds `other.txt` and is
/// checked out; `collide` adds `README` and `readme` (of different sizes, so that no stat data
/// mistake one file for the other) and `Dir/a` with `dir/b`, names Windows folds together.
fn colliding_source(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    git(dir, &["init", "-q", "-b", "plain", "src"]);
    commit_files(&src, "", &[("other.txt", b"other\n")], &[], "plain");
    let files: [(&str, &[u8]); 4] = [
        ("README", b"README upper\n"),
        ("readme", b"readme, the last one\n"),
        ("Dir/a", b"a\n"),
        ("dir/b", b"b\n"),
    ];
    commit_files(&src, "collide", &files, &[], "plain");
    src
}

/// The work tree git leaves of `collide` on a case-insensitive filesystem after writing every
/// entry in index order (`Dir/a`, `README`, `dir/b`, `other.txt`, `readme`): one directory,
/// named by its first entry, holding `a` and `b`; and of `README` and `readme` the last one,
/// under its own name (git unlinks what it finds, then creates).
fn collide_in_index_order() -> BTreeMap<String, Vec<u8>> {
    [
        ("Dir/", ""),
        ("Dir/a", "a\n"),
        ("Dir/b", "b\n"),
        ("other.txt", "other\n"),
        ("readme", "readme, the last one\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
    .collect()
}

/// The staged entries of `repo` and the entries of the tree `rev` of `src`, each as its mode,
/// object name and path: equal when the index records every entry of the tree.
fn index_and_tree(repo: &Path, src: &Path, rev: &str) -> (Vec<String>, Vec<String>) {
    let staged = git(repo, &["ls-files", "-s"])
        .lines()
        .map(|l| l.replacen(" 0\t", " ", 1).replacen('\t', " ", 1))
        .collect();
    let tree = git(src, &["ls-tree", "-r", rev])
        .lines()
        .map(|l| l.replacen(" blob ", " ", 1).replacen('\t', " ", 1))
        .collect();
    (staged, tree)
}

/// The names at the top of `dir`, to check that a command wrote nothing beside its repository.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What the host's git finds in a work tree of `collide` that is sound: it has every entry in
/// its index (`fsck` accepts the repository) and reads the work tree, where its case-sensitive
/// lookups miss the spellings Windows folded away (`missing`) and find everything else
/// unchanged. Its status leaves the index as git-par.exe wrote it (no optional locks).
fn sound_on_the_host(repo: &Path, src: &Path, missing: &[&str]) {
    git(repo, &["fsck", "--no-progress"]);
    let (staged, tree) = index_and_tree(repo, src, "collide");
    assert_eq!(staged, tree, "the index records both entries of each group");
    let deleted: String = missing.iter().map(|p| format!(" D {p}\n")).collect();
    let status = ["--no-optional-locks", "status", "--porcelain", "-uall"];
    assert_eq!(git(repo, &status), deleted);
}

/// git's warning after a clone of `collide` (`report_collided_checkout`), and its list.
const COLLIDED: &str = "warning: the following paths have collided (e.g. case-sensitive paths
on a case-insensitive filesystem) and only one from the same
colliding group is in the working tree:

  'README'
  'readme'
";

/// git's clone onto a case-insensitive filesystem (`checkout_entry` under `state->clone`,
/// `report_collided_checkout`): every entry is written in index order, the last of each
/// colliding group stays, and the clone warns, naming each entry of the group (`Dir/a` and
/// `dir/b` share a directory and do not collide); it exits 0. Git for Windows marks the group
/// by name, not by inode number (`mark_colliding_entries`' `trust_ino` is 0 there: Windows'
/// stat data have none). Its `git init` sets `core.ignorecase=true` on NTFS; the host's git,
/// which git-par.exe runs for the clone's fetch here, cannot tell, so the clone is told.
/// With one writer and with eight.
#[test]
fn a_clone_of_names_equal_but_for_case_warns_as_git_does() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let src = colliding_source(tmp.path());
    for workers in ["1", "8"] {
        let dest = format!("par-{workers}");
        let workers = format!("checkout.workers={workers}");
        let out = par(
            &exe,
            tmp.path(),
            &[
                "-c",
                "checkout.thresholdForParallelism=0",
                "-c",
                &workers,
                "clone",
                "-q",
                "-b",
                "collide",
                "-c",
                "core.ignorecase=true",
                "-c",
                "core.symlinks=false",
                "-c",
                "core.filemode=false",
                &src.to_string_lossy(),
                &dest,
            ],
        );
        assert!(out.status.success(), "{workers}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), COLLIDED, "{workers}");
        let clone = tmp.path().join(&dest);
        assert_eq!(tree_of(&clone), collide_in_index_order(), "{workers}");
        sound_on_the_host(&clone, &src, &["README", "dir/b"]);
        // Git for Windows' status finds `README` (Windows folds it to `readme`'s file), with
        // other content.
        let status = par(&exe, &clone, &["status", "--porcelain"]);
        assert_eq!(String::from_utf8_lossy(&status.stdout), " M README\n");
    }
    assert_eq!(names_in(tmp.path()), ["par-1", "par-8", "src"]);
}

/// A switch onto names equal but for case on a case-insensitive filesystem, as git's
/// `checkout_entry` does it (forced within an update: what is in the way is unlinked, then the
/// entry created), in index order: the last of each group stays, silently (only a clone
/// reports collisions), with exit 0 and both entries in the index. Then `reset --hard`
/// rewrites only the entries whose stat data no longer match their file (`README`, whose file
/// `readme` replaced), so `README` is the one left; a switch away is refused, since `readme`'s
/// file is now `README`'s (git's `verify_uptodate`: a local change); a forced one leaves what
/// the host's git leaves, the twin having made the same switches.
#[test]
fn a_switch_onto_names_equal_but_for_case_keeps_one_of_each_group() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let src = colliding_source(tmp.path());
    let (a, b) = copy_pair(&src, tmp.path());
    let out = par(&exe, &a, &["switch", "-q", "collide"]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(tree_of(&a), collide_in_index_order());
    sound_on_the_host(&a, &src, &["README", "dir/b"]);
    let out = par(&exe, &a, &["reset", "-q", "--hard"]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    let mut after_reset = collide_in_index_order();
    after_reset.remove("readme");
    after_reset.insert("README".to_owned(), b"README upper\n".to_vec());
    assert_eq!(tree_of(&a), after_reset);
    sound_on_the_host(&a, &src, &["dir/b", "readme"]);
    let out = par(&exe, &a, &["switch", "-q", "plain"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr.contains("would be overwritten by checkout:\n\treadme\n"),
        "{stderr}"
    );
    assert_eq!(tree_of(&a), after_reset, "nothing changed");
    git(&b, &["switch", "-q", "collide"]);
    same(&exe, &a, &b, &["switch", "-q", "-f", "plain"]);
    assert_eq!(names_in(tmp.path()), ["git", "par", "src"]);
}

/// A Windows program (`scripts/windows-support/holder.c`, built by `scripts/windows test`)
/// holding a file of a work tree open, as an editor or a scanner does. It runs under the same
/// wineserver as git-par.exe (the same `WINEPREFIX`), which enforces share modes between them.
struct Holder {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
}

impl Holder {
    /// Starts the holder on `file`, sharing deletion or not, and returns once it holds the
    /// file: its line "held" says so.
    fn hold(file: &Path, share_delete: bool) -> Holder {
        use std::io::BufRead;
        let holder = std::env::var_os("GITPAR_WINDOWS_HOLDER")
            .expect("GITPAR_WINDOWS_HOLDER names holder.exe (scripts/windows test builds it)");
        let windows_name = format!("Z:{}", file.display()).replace('/', "\\");
        let mut child = Command::new("/usr/lib/wine/wine64")
            .arg(holder)
            .arg(windows_name)
            .arg(if share_delete { "delete" } else { "keep" })
            .env("WINEDEBUG", "-all")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "held\n", "the holder did not get {file:?}");
        Holder { child, stdin }
    }

    /// Lets go of the file: a line on the holder's input, then its end; returns once it exited.
    fn release(mut self) {
        use std::io::Write;
        let mut stdin = self.stdin.take().unwrap();
        stdin.write_all(b"\n").unwrap();
        drop(stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Holder {
    /// A test that failed while holding: the holder's input ends, so it lets go and exits.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// Twin repositories made by the host's git: `main` (checked out) holds `held.txt`, `gone.txt`
/// and `keep.txt`; `other` gives `held.txt` new content and deletes `gone.txt`.
fn held_twins(dir: &Path) -> (PathBuf, PathBuf) {
    let src = dir.join("src");
    git(dir, &["init", "-q", "-b", "main", "src"]);
    let files: [(&str, &[u8]); 3] = [
        ("held.txt", b"old\n"),
        ("gone.txt", b"gone\n"),
        ("keep.txt", b"keep\n"),
    ];
    commit_files(&src, "", &files, &[], "main");
    let changed: [(&str, &[u8]); 1] = [("held.txt", b"new content\n")];
    commit_files(&src, "other", &changed, &["gone.txt"], "main");
    copy_pair(&src, dir)
}

/// A file another program holds open sharing deletion (`FILE_SHARE_DELETE`) does not stop a
/// switch that deletes it: git-par opens it sharing everything and deletes it, silently, as git
/// unlinks it. Under Wine, which has Windows' classic deletion only, its name goes when the
/// holder lets go (on NTFS, POSIX deletion takes it at once); then the work tree, the index and
/// HEAD are those the host's git leaves after the same switch.
#[test]
fn a_switch_deletes_a_file_held_open_with_shared_deletion_as_git_does() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = held_twins(tmp.path());
    let holder = Holder::hold(&a.join("gone.txt"), true);
    let args = ["switch", "-q", "other"];
    let ours = par(&exe, &a, &args);
    holder.release();
    let theirs = host_git(&b, &args);
    assert!(ours.stderr.is_empty(), "{ours:?}");
    agree(&args, (&ours, &a), (&theirs, &b));
}

/// Windows' classic deletion (Wine's, and that of volumes without POSIX deletion) keeps the
/// name of a file held open with `FILE_SHARE_DELETE` until the holder lets go, so a switch that
/// replaces it cannot create the new file: as git's `checkout_entry` after its unlink, the
/// switch reports `unable to create file <path>: <why>` and goes on (a safe switch exits 0);
/// the index records the new entry, whose file is missing once the holder let go. A forced
/// rerun of the switch then leaves what the host's git leaves.
#[test]
fn a_file_held_open_with_shared_deletion_is_replaced_by_a_rerun() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = held_twins(tmp.path());
    let holder = Holder::hold(&a.join("held.txt"), true);
    let ours = par(&exe, &a, &["switch", "-q", "other"]);
    holder.release();
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(ours.status.success(), "{ours:?}");
    assert_eq!(
        stderr,
        "error: unable to create file held.txt: File exists\n"
    );
    git(&a, &["fsck", "--no-progress"]);
    assert_eq!(git(&a, &["status", "--porcelain"]), " D held.txt\n");
    git(&b, &["switch", "-q", "other"]);
    same(&exe, &a, &b, &["switch", "-q", "-f", "other"]);
}

/// A file held open without sharing deletion cannot be deleted or replaced: git-par retries
/// with Git for Windows' back-off (`mingw_unlink`), then does what git does when an unlink
/// fails. A file the switch replaces: `unable to unlink old '<path>'`, its entry not written,
/// its old content kept and seen as a local change by the host's git. A file the switch
/// deletes: `warning: unable to unlink '<path>'`, left in place, untracked. The switch goes on
/// and exits 0, as git's safe switch does. Once the holders let go, a forced rerun leaves what
/// the host's git leaves, but for the file left untracked (git leaves it too).
#[test]
fn files_held_open_without_shared_deletion_are_kept_and_a_rerun_converges() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = held_twins(tmp.path());
    let held = Holder::hold(&a.join("held.txt"), false);
    let gone = Holder::hold(&a.join("gone.txt"), false);
    let ours = par(&exe, &a, &["switch", "-q", "other"]);
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(ours.status.success(), "{ours:?}");
    assert!(
        stderr.contains("error: unable to unlink old 'held.txt': "),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: unable to unlink 'gone.txt': "),
        "{stderr}"
    );
    assert_eq!(std::fs::read(a.join("held.txt")).unwrap(), b"old\n");
    assert_eq!(std::fs::read(a.join("gone.txt")).unwrap(), b"gone\n");
    git(&a, &["fsck", "--no-progress"]);
    let status = git(&a, &["status", "--porcelain"]);
    assert_eq!(status, " M held.txt\n?? gone.txt\n");
    held.release();
    gone.release();
    git(&b, &["switch", "-q", "other"]);
    let args = ["switch", "-q", "-f", "other"];
    let ours = par(&exe, &a, &args);
    std::fs::remove_file(a.join("gone.txt")).unwrap();
    agree(&args, (&ours, &a), (&host_git(&b, &args), &b));
}

/// Twin clones, made by the host's git under `core.autocrlf=true` (Git for Windows' installer
/// default), of `make_eol.sh`'s repository: every combination of the `text`, `eol` and `crlf`
/// attributes (`text eol=crlf`, `-text`, `binary`, ...) over LF, CRLF, mixed and binary blobs.
/// Its branch `other` changes some of those files, deletes one and adds `new/`, whose
/// attributes it adds to `.gitattributes`.
fn autocrlf_twins(dir: &Path) -> (PathBuf, PathBuf) {
    let made = dir.join("made");
    let status = Command::new("bash")
        .arg(fixtures().join("make_eol.sh"))
        .arg(&made)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .unwrap();
    assert!(status.success(), "make_eol.sh");
    let mut attributes = std::fs::read(made.join(".gitattributes")).unwrap();
    attributes.extend_from_slice(b"new/*.crlf text eol=crlf\nnew/*.raw -text\nnew/*.bin binary\n");
    let files: [(&str, &[u8]); 8] = [
        (".gitattributes", &attributes),
        ("text/lf.txt", b"one\ntwo\nthree\n"),
        ("binary/crlf.txt", b"one\r\ntwo\r\nthree\r\n"),
        ("auto/mixed.txt", b"one\r\ntwo\n"),
        ("new/a.crlf", b"lf\nonly\n"),
        ("new/b.raw", b"crlf\r\nkept\r\n"),
        ("new/c.bin", b"crlf\r\nbinary\r\n"),
        ("new/d.txt", b"plain\nlf\n"),
    ];
    commit_files(&made, "other", &files, &["auto/cr.txt"], "main");
    let crlf = dir.join("crlf");
    let source = made.to_string_lossy().into_owned();
    git(
        dir,
        &["clone", "-q", "-c", "core.autocrlf=true", &source, "crlf"],
    );
    let (a, b) = copy_pair(&crlf, dir);
    for repo in [&a, &b] {
        git(repo, &["config", "core.autocrlf", "true"]);
    }
    (a, b)
}

/// Local changes of both line endings, made alike in both twins, on paths `other` leaves
/// alone: an LF file of `-text` rewritten with CRLF, a CRLF blob rewritten with LF, an
/// autocrlf file and a `text eol=crlf` file rewritten with LF (the same blob once converted
/// back, but of another size, which git takes for a change without reading the file:
/// `ie_modified`), and an untracked CRLF file.
fn dirty_both_ways(repos: [&Path; 2]) {
    for repo in repos {
        for (path, bytes) in [
            ("binary/lf.txt", &b"one\r\ntwo\r\n"[..]),
            ("none/crlf.txt", b"one\ntwo\n"),
            ("none/lf.txt", b"one\ntwo\n"),
            ("text-crlf/lf.txt", b"one\ntwo\n"),
            ("untracked.txt", b"new\r\n"),
        ] {
            std::fs::write(repo.join(path), bytes).unwrap();
        }
    }
}

/// `core.autocrlf=true` and the eol attributes: git's conversion (`convert.c`) on checkout
/// (LF to CRLF for text, `-text`/`binary` untouched, `eol=crlf` whatever autocrlf says, a CRLF
/// blob left as it is) and on reading the work tree back (CRLF to LF, except where the index
/// already has CRs: `has_crlf_in_index`): git-par.exe finds every file stat-dirty (the host's
/// git wrote Linux's stat data) and must read each back converted to find it unchanged. Its
/// status of a tree dirtied with both line endings, then a switch carrying those changes,
/// `restore`, and `reset --hard`, each against the host's git in the twin.
#[test]
fn line_endings_under_autocrlf_are_converted_as_git_converts_them() {
    let Some(exe) = exe() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = autocrlf_twins(tmp.path());
    dirty_both_ways([&a, &b]);
    let ours = par(&exe, &a, &["status", "--porcelain"]);
    assert!(ours.status.success(), "{ours:?}");
    let theirs = git(&b, &["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&ours.stdout), theirs);
    let changed = " M binary/lf.txt\n M none/crlf.txt\n M none/lf.txt\n M text-crlf/lf.txt\n";
    assert_eq!(theirs, format!("{changed}?? untracked.txt\n"));
    same(&exe, &a, &b, &["switch", "-q", "other"]);
    let new = tree_of(&a);
    assert_eq!(new["new/d.txt"], b"plain\r\nlf\r\n", "autocrlf converts");
    assert_eq!(new["new/b.raw"], b"crlf\r\nkept\r\n", "-text does not");
    same(&exe, &a, &b, &["restore", "."]);
    dirty_both_ways([&a, &b]);
    same(&exe, &a, &b, &["reset", "-q", "--hard", "main"]);
}
