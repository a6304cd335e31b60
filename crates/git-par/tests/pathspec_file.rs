//! `--pathspec-from-file`/`--pathspec-file-nul` (`checkout`, `restore`) and `--[no-]overlay`
//! against git, side by side on two copies of one repository: exit code, first line of stderr,
//! the index (`ls-files -s`) and the work tree must be git's.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use support::*;

/// A repository as t2026/t2072 set it up: `fileA.t`..`fileD.t` and `dir1/file` changed between
/// two commits (tag `checkpoint` on the second), plus a file whose name needs quoting.
fn setup(dir: &Path) {
    git_ok(dir, ["init", "-q", "-b", "main", "."]);
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    for (i, text) in ["1", "2"].iter().enumerate() {
        for f in [
            "fileA.t",
            "fileB.t",
            "fileC.t",
            "fileD.t",
            "dir1/file",
            "q\"uo\tte",
        ] {
            write(f, &format!("{f} {text}\n"));
        }
        git_ok(dir, ["add", "."]);
        let msg = format!("files {}", i + 1);
        git_ok(
            dir,
            [
                "-c",
                "user.name=T",
                "-c",
                "user.email=t@e",
                "commit",
                "-q",
                "-m",
                &msg,
            ],
        );
    }
    // In the index and the work tree only: no-overlay from HEAD removes it.
    write("added", "added\n");
    git_ok(dir, ["add", "added"]);
}

/// The work tree's files (outside `.git`) and their contents.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs `args` (a `checkout`/`restore` command line) with `input` on stdin and with `files`
/// written first, through git and through git-par on two copies of the repository, and compares.
#[track_caller]
fn same(args: &[&str], input: &[u8], files: &[(&str, &[u8])]) {
    let s = scratch();
    let (g, p) = (s.join("git"), s.join("par"));
    fs::create_dir_all(&g).unwrap();
    setup(&g);
    // Local changes the restore undoes.
    fs::write(g.join("fileA.t"), "local\n").unwrap();
    copy_repo(&g, &p);
    for dir in [&g, &p] {
        for (name, data) in files {
            fs::write(dir.join(name), data).unwrap();
        }
        git_ok(dir, ["update-index", "-q", "--refresh"]);
    }
    let by_git = run_with_input("git", &g, args, input);
    let by_par = run_with_input(GIT_PAR, &p, args, input);
    let first = |r: &Run| r.stderr_str().lines().next().unwrap_or("").to_owned();
    let ctx = format!("{args:?}\n{}\n{}", by_git.describe(), by_par.describe());
    assert_eq!(by_git.status.code(), by_par.status.code(), "{ctx}");
    assert_eq!(first(&by_git), first(&by_par), "{ctx}");
    assert_eq!(
        git_str(&g, ["ls-files", "-s"]),
        git_str(&p, ["ls-files", "-s"]),
        "{ctx}"
    );
    assert_eq!(tree(&g), tree(&p), "{ctx}");
}

#[test]
fn checkout_pathspec_from_file() {
    let co = ["checkout", "--pathspec-from-file=-", "HEAD^1"];
    same(&co, b"fileA.t\n", &[]);
    same(&co, b"fileA.t\nfileB.t", &[]);
    same(&co, b"fileA.t\r\nfileB.t\r\n", &[]);
    same(&co, b"\"q\\\"uo\\tte\"\nfileC.t\n", &[]);
    same(&co, b"dir1\n", &[]);
    same(&co, b"nothing\n", &[]);
    same(&co, b"", &[]);
    same(&co, b"fileA.t\n\nfileB.t\n", &[]);
    same(&co, b"\"bad\n", &[]);
    same(&co, b"\"bad\\q\"\n", &[]);
    same(
        &[
            "checkout",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            "HEAD^1",
        ],
        b"fileA.t\0fileB.t\0",
        &[],
    );
    same(
        &[
            "checkout",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            "HEAD^1",
        ],
        b"\"fileA.t\"\0",
        &[],
    );
    same(
        &["checkout", "--pathspec-from-file=list", "HEAD^1"],
        b"",
        &[("list", b"fileB.t\nfileC.t\n")],
    );
    // From the index, and with `--`.
    same(&["checkout", "--pathspec-from-file=-"], b"fileA.t\n", &[]);
    same(
        &["checkout", "--pathspec-from-file=-", "--"],
        b"fileA.t\n",
        &[],
    );
    same(
        &["checkout", "--pathspec-from-file=-", "HEAD", "--"],
        b"*.t\n",
        &[],
    );
}

#[test]
fn checkout_pathspec_file_errors() {
    same(
        &["checkout", "--pathspec-from-file=missing", "HEAD^1"],
        b"",
        &[],
    );
    same(
        &["checkout", "--pathspec-from-file=-", "--detach"],
        b"fileA.t\n",
        &[],
    );
    same(
        &["checkout", "--pathspec-from-file=-", "--", "fileA.t"],
        b"fileB.t\n",
        &[],
    );
    same(
        &["checkout", "--pathspec-from-file=-", "HEAD", "fileA.t"],
        b"fileB.t\n",
        &[],
    );
    same(&["checkout", "--pathspec-file-nul"], b"", &[]);
    same(
        &["checkout", "--pathspec-file-nul", "HEAD^1", "--", "fileA.t"],
        b"",
        &[],
    );
}

#[test]
fn restore_pathspec_from_file() {
    let re = ["restore", "--pathspec-from-file=-", "--source=HEAD^1"];
    same(&re, b"fileA.t\n", &[]);
    same(&re, b"fileA.t\r\nfileB.t", &[]);
    same(&re, b"\"q\\\"uo\\tte\"\n", &[]);
    same(&re, b"*file\n", &[]);
    same(&re, b"nothing\n", &[]);
    same(&re, b"", &[]);
    same(&re, b"\"bad\n", &[]);
    same(&["restore", "--pathspec-from-file=-"], b"fileA.t\n", &[]);
    same(
        &["restore", "--pathspec-from-file=-", "--staged"],
        b"added\n",
        &[],
    );
    same(
        &[
            "restore",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            "-s",
            "HEAD^1",
        ],
        b"fileA.t\0dir1\0",
        &[],
    );
    same(
        &["restore", "--pathspec-from-file=-", "--", "fileA.t"],
        b"fileB.t\n",
        &[],
    );
    same(&["restore", "--pathspec-file-nul", "fileA.t"], b"", &[]);
    same(&["restore", "--source=HEAD^1"], b"", &[]);
    same(&["restore", "--pathspec-from-file=missing"], b"", &[]);
}

#[test]
fn overlay_modes() {
    same(
        &["checkout", "--no-overlay", "HEAD", "--", "added"],
        b"",
        &[],
    );
    same(&["checkout", "--no-overlay", "HEAD", "--", "."], b"", &[]);
    same(&["checkout", "--overlay", "HEAD", "--", "."], b"", &[]);
    same(
        &["checkout", "--no-overlay", "--overlay", "HEAD", "--", "."],
        b"",
        &[],
    );
    same(
        &["checkout", "--overlay", "--no-overlay", "HEAD", "--", "."],
        b"",
        &[],
    );
    same(&["checkout", "--no-overlay", "--", "fileA.t"], b"", &[]);
    same(
        &["checkout", "--no-overlay", "HEAD", "fileA.t", "added"],
        b"",
        &[],
    );
    same(&["checkout", "--no-overlay", "HEAD^1"], b"", &[]);
    same(&["checkout", "--overlay", "main"], b"", &[]);
    same(
        &["restore", "--overlay", "-s", "HEAD", "-SW", "."],
        b"",
        &[],
    );
    same(
        &["restore", "--no-overlay", "-s", "HEAD", "-SW", "."],
        b"",
        &[],
    );
    same(
        &["restore", "--overlay", "-s", "HEAD^1", "dir1", "added"],
        b"",
        &[],
    );
    same(
        &["checkout", "--no-overlay", "--pathspec-from-file=-", "HEAD"],
        b"added\nfileA.t\n",
        &[],
    );
}
