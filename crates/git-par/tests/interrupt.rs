//! Ctrl-C in the middle of a checkout: the index lock goes away, the index is the old one (here:
//! none), and rerunning converges to what git calls clean.

mod support;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::*;

/// Runs git-par with `args` in `cwd` and sends it SIGINT once `lock` (its `index.lock`) exists,
/// or not at all when it finished first; checks that it exited 0 or 130 and left no lock, and
/// returns its exit code and standard error.
fn interrupt_once_locked(cwd: &Path, args: &[&OsStr], lock: &Path) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_git-par"));
    clean_env(&mut cmd)
        .current_dir(cwd)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("git-par starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !lock.exists() && child.try_wait().expect("poll child").is_none() {
        assert!(
            Instant::now() < deadline,
            "git-par neither took the lock nor finished"
        );
        std::thread::yield_now();
    }
    let pid = i32::try_from(child.id()).expect("pid fits");
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().expect("git-par ends");
    let code = out.status.code();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        matches!(code, Some(0 | 130)),
        "exit code {code:?}, stderr: {stderr}"
    );
    eprintln!("git-par exited with {code:?}");
    assert!(!lock.exists(), "index.lock was left behind");
    (code, stderr)
}

#[test]
fn sigint_during_a_clone_removes_the_lock_and_a_reset_converges_to_git_clean() {
    let src = support::fixture(Fixture::ManyFiles);
    let s = scratch();
    let dst = s.join("interrupted");
    // Signal once the checkout holds the index lock (or not when the clone is already done).
    let args: [&OsStr; 6] = [
        "-c".as_ref(),
        "checkout.workers=2".as_ref(),
        "clone".as_ref(),
        "-q".as_ref(),
        src.as_os_str(),
        dst.as_os_str(),
    ];
    let (code, stderr) = interrupt_once_locked(s.path(), &args, &dst.join(".git/index.lock"));
    if code == Some(130) {
        assert!(stderr.contains("interrupted"));
        assert!(
            !dst.join(".git/index").exists(),
            "an interrupted checkout recorded an index"
        );
    }

    // Rerun: a hard reset writes what is missing and records it; git then calls it clean, and the
    // work tree is what git's own clone writes.
    git_par(&dst, ["reset", "-q", "--hard"]).assert_success();
    assert_clean(&dst, &[]);
    let by_git = s.join("by-git");
    git_clone(s.path(), &CloneOpts::default(), src, &by_git).assert_success();
    compare_worktrees(&by_git, &dst);
}

/// Ctrl-C during the full checkout that `checkout -f` after `git clone -n` is: as any update, the
/// lock goes, `HEAD` stays, and the index records exactly what was written (with real stat data;
/// nothing on disk is left untracked); rerunning the command finishes it, as git's would.
#[test]
fn sigint_during_a_full_checkout_after_clone_no_checkout_records_what_was_written() {
    let src = support::fixture(Fixture::ManyFiles);
    let s = scratch();
    let dst = s.join("interrupted");
    git(
        s.path(),
        [
            "clone".as_ref(),
            "-q".as_ref(),
            "-n".as_ref(),
            src.as_os_str(),
            dst.as_os_str(),
        ],
    )
    .assert_success();
    let args = ["-c", "checkout.workers=2", "checkout", "-q", "-f", "main"].map(OsStr::new);
    let (code, _) = interrupt_once_locked(&dst, &args, &dst.join(".git/index.lock"));
    if code == Some(130) && dst.join(".git/index").exists() {
        // Every entry recorded is on disk with its stat data, and every file on disk is recorded.
        assert_real_stat(&dst, &[]);
        let untracked = git_str(&dst, ["ls-files", "--others"]);
        assert_eq!(untracked, "", "files were left untracked");
    }
    git_par(&dst, ["checkout", "-q", "-f", "main"]).assert_success();
    assert_clean(&dst, &[]);
    let by_git = s.join("by-git");
    git_clone(s.path(), &CloneOpts::default(), src, &by_git).assert_success();
    compare_worktrees(&by_git, &dst);
}
