//! A tracked file that cannot be replaced (`EPERM`: an immutable file, `chattr +i`) during a
//! switch, a forced checkout or `reset --hard` (issue 23): git's exit status, messages and end
//! state. git's safe switch reports the path, still switches and exits 0 (the path then shows
//! as a local change); `checkout -f` switches and exits 1; `reset --hard` dies before it writes
//! the index or moves `HEAD` ("Could not reset index file to revision"). Each case runs git
//! and git-par in two copies of one repository built by git. Needs root and a filesystem with
//! immutable files (said loudly and skipped otherwise).

mod support;

use std::path::{Path, PathBuf};

use support::*;

fn repository(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    git_ok(dir, ["init", "-q", "-b", "main", repo.to_str().unwrap()]);
    for (f, g, msg) in [("a\n", "x\n", "a"), ("b\n", "y\n", "b")] {
        std::fs::write(repo.join("f"), f).unwrap();
        std::fs::write(repo.join("g"), g).unwrap();
        git_ok(&repo, ["add", "."]);
        git_ok(&repo, ["commit", "-q", "-m", msg]);
        if msg == "a" {
            git_ok(&repo, ["branch", "other"]);
        }
    }
    git_ok(&repo, ["checkout", "-q", "other"]);
    repo
}

fn chattr(repo: &Path, flag: &str) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(repo.join("f"))
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_file_that_cannot_be_replaced_ends_as_with_git() {
    let s = scratch();
    let base = repository(s.path());
    if !chattr(&base, "+i") {
        eprintln!("\n!!!!!!!! SKIPPED: no immutable files here (chattr +i) !!!!!!!!\n");
        return;
    }
    chattr(&base, "-i");
    for args in [
        &["checkout", "main"][..],
        &["checkout", "-f", "main"],
        &["reset", "--hard", "main"],
    ] {
        let mut results = Vec::new();
        for par in [false, true] {
            let repo = s.join(format!("{}-{par}", args.join("_")));
            copy_repo(&base, &repo);
            assert!(chattr(&repo, "+i"));
            let run = if par {
                git_par(&repo, args)
            } else {
                git(&repo, args)
            };
            chattr(&repo, "-i");
            let mut stdout: Vec<String> = run.stdout_str().lines().map(String::from).collect();
            stdout.sort();
            results.push((
                run.status.code(),
                run.stderr_str(),
                stdout,
                git_str(&repo, ["rev-parse", "--abbrev-ref", "HEAD"]),
                git_str(&repo, ["rev-parse", "HEAD"]),
                git_str(&repo, ["status", "--porcelain"]),
                repo.join(".git/ORIG_HEAD").exists(),
            ));
        }
        assert_eq!(
            results[0], results[1],
            "{args:?} (left: git, right: git-par)"
        );
    }
}
