//! git-par as `git` (issue 23): a link named `git` first on `PATH` (`git par shim DIR`) runs the
//! commands git-par owns and hands every other call to the real git, unchanged: same output,
//! exit status, standard input, and no loop when the only `git` is git-par itself.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::*;

/// The real git's path, as the tests' own `git` calls find it.
fn real_git() -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .expect("sh");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// `git par shim DIR`, checked: the link and the PATH line.
fn shim(dir: &Path) -> PathBuf {
    let run = git_par(dir.parent().unwrap(), ["shim", dir.to_str().unwrap()]).assert_success();
    assert_eq!(
        run.stdout_str().trim(),
        format!("export PATH=\"{}:$PATH\"", dir.display())
    );
    let link = dir.join("git");
    assert_eq!(
        std::fs::canonicalize(&link).unwrap(),
        std::fs::canonicalize(GIT_PAR).unwrap()
    );
    link
}

/// `git ARGS` in `cwd` through the shim: the shim's directory first on `PATH`, with `env`.
fn via_shim(shim_dir: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(shim_dir.join("git"));
    clean_env(&mut cmd).current_dir(cwd).args(args);
    let path = format!(
        "{}:{}",
        shim_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).env("GIT_PAR_TRACE", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the shim");
    Run {
        command: format!("git {args:?} (shim)"),
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// A repository with two commits on `main` and a branch `other`.
fn repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    git_ok(dir, ["init", "-q", "-b", "main", repo.to_str().unwrap()]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git_ok(&repo, ["add", "a.txt"]);
    git_ok(&repo, ["commit", "-q", "-m", "one"]);
    git_ok(&repo, ["branch", "other"]);
    std::fs::write(repo.join("a.txt"), "a2\n").unwrap();
    std::fs::write(repo.join("b.txt"), "b\n").unwrap();
    git_ok(&repo, ["add", "."]);
    git_ok(&repo, ["commit", "-q", "-m", "two"]);
    repo
}

#[test]
fn owned_commands_run_in_git_par_others_in_git() {
    let s = scratch();
    let dir = s.join("bin");
    shim(&dir);
    let repo = repo(s.path());
    // Owned: git-par runs it (its trace), and the result is git's.
    let run = via_shim(&dir, &repo, &["checkout", "-q", "other"], &[]).assert_success();
    assert!(
        run.stderr_str().contains("as git: checkout -> git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "a\n");
    assert!(!repo.join("b.txt").exists());
    assert_clean(&repo, &[]);
    // Global options: -C and -c for an owned command.
    let run = via_shim(
        &dir,
        s.path(),
        &["-C", "repo", "-c", "status.short=true", "status"],
        &[],
    )
    .assert_success();
    assert!(
        run.stderr_str().contains("-> git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(run.stdout_str(), git_str(&repo, ["status", "--short"]));
    // Not owned: the real git, same output and exit status as calling it directly.
    let run = via_shim(&dir, &repo, &["log", "--format=%s", "main"], &[]).assert_success();
    assert_eq!(
        run.stdout_str().trim(),
        git_str(&repo, ["log", "--format=%s", "main"])
    );
    assert!(
        run.stderr_str().contains("as git: log -> "),
        "{}",
        run.stderr_str()
    );
    let missing = via_shim(&dir, &repo, &["rev-parse", "--verify", "-q", "nosuch"], &[]);
    let direct = git(&repo, ["rev-parse", "--verify", "-q", "nosuch"]);
    assert_eq!(missing.status.code(), direct.status.code());
    assert_ne!(missing.status.code(), Some(0));
    // A usage git-par does not take goes to git whole (git's own option of reset).
    let run = via_shim(&dir, &repo, &["reset", "--soft", "main"], &[]).assert_success();
    assert!(
        run.stderr_str().contains("as git: reset -> "),
        "{}",
        run.stderr_str()
    );
    assert_eq!(
        git_str(&repo, ["rev-parse", "HEAD"]),
        git_str(&repo, ["rev-parse", "main"])
    );
    // Standard input reaches git.
    let mut child = Command::new(dir.join("git"));
    clean_env(&mut child)
        .current_dir(&repo)
        .args(["hash-object", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = child.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ce013625030ba8dba906f756967f9e9ca394464a"
    );
}

#[test]
fn the_shim_never_runs_itself() {
    let s = scratch();
    let dir = s.join("bin");
    shim(&dir);
    // Only git-par on PATH: a clear refusal, not a loop.
    let mut cmd = Command::new(dir.join("git"));
    clean_env(&mut cmd)
        .current_dir(s.path())
        .env("PATH", &dir)
        .arg("log");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(128));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no real git is on PATH"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // GIT_PAR_REAL_GIT naming git-par itself: refused too.
    let run = via_shim(
        &dir,
        s.path(),
        &["log"],
        &[("GIT_PAR_REAL_GIT", dir.join("git").to_str().unwrap())],
    );
    assert_eq!(run.status.code(), Some(128));
    assert!(
        run.stderr_str().contains("names git-par itself"),
        "{}",
        run.stderr_str()
    );
    // GIT_PAR_REAL_GIT naming git: taken even when git is not on PATH; and git-par's own
    // calls of git (worktree add runs `git worktree add --no-checkout`) use it.
    let repo = repo(s.path());
    let mut cmd = Command::new(dir.join("git"));
    clean_env(&mut cmd)
        .current_dir(&repo)
        .env("PATH", format!("{}:/usr/bin:/bin", dir.display()))
        .env("GIT_PAR_REAL_GIT", real_git())
        .args(["worktree", "add", "-q", "../wt", "other"]);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(s.join("wt/a.txt")).unwrap(), "a\n");
    assert_clean(&s.join("wt"), &[]);
}

#[test]
fn shim_refuses_to_replace_another_git() {
    let s = scratch();
    let dir = s.join("bin");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("git"), "#!/bin/sh\n").unwrap();
    let run = git_par(s.path(), ["shim", dir.to_str().unwrap()]).assert_failure();
    assert!(
        run.stderr_str().contains("is not a link to git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(std::fs::read(dir.join("git")).unwrap(), b"#!/bin/sh\n");
    // Made twice: the second time is fine.
    let other = s.join("bin2");
    shim(&other);
    shim(&other);
}

/// The lines of a run's standard error that are not git-par's trace.
fn untraced(run: &Run) -> String {
    run.stderr_str()
        .lines()
        .filter(|l| !l.starts_with("git-par: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn aliases_of_owned_commands_run_in_git_par_the_rest_in_git() {
    let s = scratch();
    let dir = s.join("bin");
    shim(&dir);
    let repo = repo(s.path());
    for (name, value) in [
        ("co", "checkout"),
        ("sw", "switch -q"),
        ("back", "co"),
        ("lg", "log --format=%s"),
        ("bang", "!git checkout -q"),
        ("loop1", "loop2"),
        ("loop2", "loop1"),
        ("ext", "checkout"),
    ] {
        git_ok(&repo, ["config", &format!("alias.{name}"), value]);
    }
    // An alias of checkout: git-par runs the checkout, with git's messages.
    let run = via_shim(&dir, &repo, &["co", "other"], &[]).assert_success();
    assert!(
        run.stderr_str()
            .contains("as git: co (alias) -> checkout -> git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(untraced(&run), "Switched to branch 'other'\n");
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "a\n");
    assert_clean(&repo, &[]);
    // Arguments in the alias come first, the call's after them; an alias of an alias.
    let run = via_shim(&dir, &repo, &["sw", "main"], &[]).assert_success();
    assert!(
        run.stderr_str().contains("sw (alias) -> switch -> git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(untraced(&run), "");
    assert_eq!(git_str(&repo, ["branch", "--show-current"]).trim(), "main");
    let run = via_shim(&dir, &repo, &["back", "-q", "other"], &[]).assert_success();
    assert!(
        run.stderr_str()
            .contains("back (alias) -> co (alias) -> checkout -> git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(git_str(&repo, ["branch", "--show-current"]).trim(), "other");
    // An alias given with -c, from another directory with -C.
    let run = via_shim(
        &dir,
        s.path(),
        &[
            "-C",
            "repo",
            "-c",
            "alias.fresh=switch",
            "fresh",
            "-q",
            "main",
        ],
        &[],
    )
    .assert_success();
    assert!(
        run.stderr_str()
            .contains("fresh (alias) -> switch -> git-par"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(git_str(&repo, ["branch", "--show-current"]).trim(), "main");
    assert_clean(&repo, &[]);
    // An alias of a command git-par does not own, a shell alias, a loop and `-h`: git's, as
    // git answers them when called directly.
    for call in [
        &["lg", "main"][..],
        &["bang", "other"],
        &["loop1"],
        &["co", "-h"],
        &["nosuchcommand"],
    ] {
        let run = via_shim(&dir, &repo, call, &[]);
        let direct = git(&repo, call);
        assert_eq!(run.status.code(), direct.status.code(), "{call:?}");
        assert_eq!(run.stdout_str(), direct.stdout_str(), "{call:?}");
        assert_eq!(untraced(&run), direct.stderr_str(), "{call:?}");
        assert!(
            !run.stderr_str().contains("-> git-par"),
            "{call:?}: {}",
            run.stderr_str()
        );
    }
    assert_eq!(git_str(&repo, ["branch", "--show-current"]).trim(), "other");
    // A program `git-NAME` on PATH is run before an alias of that name, as git runs it.
    let external = dir.join("git-ext");
    std::fs::write(&external, "#!/bin/sh\necho external \"$@\"\n").unwrap();
    std::fs::set_permissions(
        &external,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let run = via_shim(&dir, &repo, &["ext", "main"], &[]).assert_success();
    assert_eq!(run.stdout_str(), "external main\n");
    assert_eq!(git_str(&repo, ["branch", "--show-current"]).trim(), "other");
}
