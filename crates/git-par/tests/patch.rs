//! `-p/--patch` goes to git unchanged: the same answers on stdin give the same result as git's own
//! `checkout -p` / `restore -p`.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use support::*;

/// A repository with one committed file of two hunks, both changed in the work tree.
fn repo(at: &Path) {
    std::fs::create_dir_all(at).unwrap();
    git(at, ["init", "-q", "-b", "main"]).assert_success();
    let lines: Vec<String> = (1..=30).map(|n| format!("line {n}\n")).collect();
    std::fs::write(at.join("f"), lines.concat()).unwrap();
    git(at, ["add", "f"]).assert_success();
    git(at, ["commit", "-q", "-m", "f"]).assert_success();
    let mut changed = lines.clone();
    changed[1] = "changed 2\n".into();
    changed[27] = "changed 28\n".into();
    std::fs::write(at.join("f"), changed.concat()).unwrap();
}

/// Run `program args` in `dir` with `answers` on stdin; returns the exit status.
fn answer(program: &str, dir: &Path, args: &[&str], answers: &str) -> bool {
    let mut cmd = Command::new(program);
    clean_env(&mut cmd)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    child.wait().unwrap().success()
}

#[test]
fn checkout_and_restore_patch_are_gits_own() {
    for sub in [["checkout", "-p"], ["restore", "-p"]] {
        let s = scratch();
        let (by_git, by_par) = (s.join("git"), s.join("par"));
        repo(&by_git);
        repo(&by_par);
        let args = [sub[0], sub[1], "--", "f"];
        // Discard the first hunk, keep the second.
        assert!(answer("git", &by_git, &args, "y\nn\n"));
        assert!(answer(
            env!("CARGO_BIN_EXE_git-par"),
            &by_par,
            &args,
            "y\nn\n"
        ));
        assert_eq!(
            std::fs::read(by_git.join("f")).unwrap(),
            std::fs::read(by_par.join("f")).unwrap(),
            "{sub:?}"
        );
        let content = std::fs::read_to_string(by_par.join("f")).unwrap();
        assert!(content.contains("line 2\n") && content.contains("changed 28\n"));
    }
}
