//! The index lock, seen from the library: a held `index.lock` stops a checkout before anything
//! is written, with git's message, and leaves index and work tree as they were.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn held_index_lock_refuses_with_gits_message_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::create_dir(src.join("d")).unwrap();
    std::fs::write(src.join("d/f"), "content\n").unwrap();
    std::fs::write(src.join("g"), "more\n").unwrap();
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-qm", "one"]);
    let dst = tmp.path().join("dst");
    git(tmp.path(), &["clone", "-q", "--no-checkout", "src", "dst"]);
    let lock = dst.join(".git/index.lock");
    std::fs::write(&lock, "held by someone else").unwrap();

    let repo = gix::open(&dst).unwrap();
    let tree = repo.head_commit().unwrap().tree_id().unwrap().detach();
    let err = gitpar::checkout(
        &repo,
        tree,
        &dst,
        &dst.join(".git/index"),
        &gitpar::Options::default(),
        &gitpar::Context {
            progress: &gitpar::Progress::default(),
            interrupt: &AtomicBool::new(false),
        },
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "Unable to create '{}': File exists.",
            lock.display()
        )),
        "{msg}"
    );
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "held by someone else"
    );
    let names: Vec<_> = std::fs::read_dir(&dst)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(".git")]);
    assert!(!dst.join(".git/index").exists());

    // Once the lock is gone, the same checkout converges to what git calls clean.
    std::fs::remove_file(&lock).unwrap();
    gitpar::checkout(
        &repo,
        tree,
        &dst,
        &dst.join(".git/index"),
        &gitpar::Options::default(),
        &gitpar::Context {
            progress: &gitpar::Progress::default(),
            interrupt: &AtomicBool::new(false),
        },
    )
    .unwrap();
    assert_eq!(git(&dst, &["status", "--porcelain"]), "");
}
