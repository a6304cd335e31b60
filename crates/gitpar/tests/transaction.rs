//! The switch and reset transactions seen from the library, as a tool builder would use them:
//! `gitpar::switch::Switch` (update → move_head → finish) and `gitpar::reset::hard` leave the
//! repository exactly as `git switch` / `git reset --hard` leave a copy of it — work tree,
//! index, `HEAD`, the new branch and its upstream, reflogs, removed merge state, and the
//! `post-checkout` / `reference-transaction` hooks' arguments — and hand what git would print
//! along the way to the caller's sink, in order.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use gitpar::repo::create_branch::{NewBranch, Track};
use gitpar::repo::notice::Notice;
use gitpar::switch::{Head, Request, Switch};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_DATE", "1700000000 +0000")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A repository with `main` (a, d/b), a branch `topic` that changes a and removes d/b, a
/// remote-tracking `origin/feature`, hooks that log their arguments and standard input into
/// `hooks.log`, and a merge in progress (`MERGE_HEAD`, `MERGE_MSG`).
fn fixture(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(dir.join("a"), "one\n").unwrap();
    std::fs::create_dir(dir.join("d")).unwrap();
    std::fs::write(dir.join("d/b"), "two\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "first"]);
    git(dir, &["switch", "-qc", "topic"]);
    std::fs::write(dir.join("a"), "changed\n").unwrap();
    git(dir, &["rm", "-q", "d/b"]);
    git(dir, &["commit", "-qam", "second"]);
    git(dir, &["switch", "-q", "main"]);
    git(
        dir,
        &["remote", "add", "origin", "https://example.invalid/r"],
    );
    git(dir, &["update-ref", "refs/remotes/origin/feature", "topic"]);
    for hook in ["post-checkout", "reference-transaction"] {
        let path = dir.join(".git/hooks").join(hook);
        std::fs::write(
            &path,
            format!("#!/bin/sh\n{{ echo \"{hook} $*\"; [ {hook} = post-checkout ] || cat; }} >>hooks.log\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let head = git(dir, &["rev-parse", "topic"]);
    std::fs::write(dir.join(".git/MERGE_HEAD"), head).unwrap();
    std::fs::write(dir.join(".git/MERGE_MSG"), "merge\n").unwrap();
    std::fs::write(dir.join("hooks.log"), "").unwrap();
}

/// Everything a switch or reset leaves that git would leave the same.
fn state(dir: &Path) -> Vec<String> {
    let reflog = |r: &str| {
        std::fs::read_to_string(dir.join(".git/logs").join(r))
            .unwrap_or_default()
            .lines()
            .map(|l| {
                // `<old> <new> <identity> <time> <tz>\t<message>`: ids and message.
                let ids: Vec<&str> = l.split(' ').take(2).collect();
                let message = l.split_once('\t').map_or("", |(_, m)| m);
                format!("{} {message}", ids.join(" "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    vec![
        git(dir, &["ls-files", "-s"]),
        git(dir, &["status", "--porcelain", "--untracked-files=no"]),
        git(dir, &["symbolic-ref", "-q", "HEAD"]).trim().to_owned()
            + &git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["for-each-ref"]),
        // Exit 1 when there is none.
        String::from_utf8(
            Command::new("git")
                .args(["config", "--get-regexp", "^branch\\."])
                .current_dir(dir)
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap(),
        reflog("HEAD"),
        reflog("refs/heads/new"),
        format!(
            "MERGE_HEAD {} MERGE_MSG {}",
            dir.join(".git/MERGE_HEAD").exists(),
            dir.join(".git/MERGE_MSG").exists()
        ),
        std::fs::read_to_string(dir.join("hooks.log")).unwrap(),
    ]
}

fn pair(tmp: &Path) -> (PathBuf, PathBuf) {
    let (g, p) = (tmp.join("git"), tmp.join("par"));
    fixture(&g);
    let out = Command::new("cp")
        .args(["-a"])
        .arg(&g)
        .arg(&p)
        .status()
        .unwrap();
    assert!(out.success());
    (g, p)
}

/// Run `f` with the process environment git's identity and date come from (gix reads them
/// from the environment, as git does).
fn with_identity<T>(f: impl FnOnce() -> T) -> T {
    static ENV: Mutex<()> = Mutex::new(());
    let _guard = ENV
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (k, v) in [
        ("GIT_COMMITTER_NAME", "A"),
        ("GIT_COMMITTER_EMAIL", "a@example.com"),
        ("GIT_COMMITTER_DATE", "1700000000 +0000"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
    ] {
        std::env::set_var(k, v);
    }
    f()
}

/// `Switch::new(..).update(..)?.move_head()?.finish()` in `dir`, as a library caller runs it:
/// the hook's status and the notices, or the error of the step that stopped.
fn library_switch(
    dir: &Path,
    head: Head,
    rev: &str,
) -> Result<(i32, Vec<Notice>), gitpar::switch::Error> {
    with_identity(|| {
        let repo = gix::open(dir).unwrap();
        let commit = repo.rev_parse_single(rev).unwrap().detach();
        let notices = Mutex::new(Vec::new());
        let sink = |n: Notice| notices.lock().unwrap().push(n);
        let launch = gitpar::repo::hooks::Launch::at(dir.to_owned());
        let env = gitpar::repo::hooks::Env {
            launch: &launch,
            sink: &sink,
        };
        let index = dir.join(".git/index");
        let request = Request {
            head,
            commit: Some(commit),
            force: false,
            merge: false,
            options: gitpar::Options::default(),
            worktree: dir,
            index_path: &index,
            quiet: false,
            verb: "checkout",
        };
        let progress = gitpar::Progress::default();
        let interrupt = AtomicBool::new(false);
        let ctx = gitpar::Context {
            progress: &progress,
            interrupt: &interrupt,
        };
        let updated = Switch::new(&repo, env, request).update(&ctx)?;
        assert!(updated.outcome.errors.is_empty());
        let status = updated.move_head()?.finish()?;
        Ok((status, notices.into_inner().unwrap()))
    })
}

/// [`library_switch`] that must succeed, with `post-checkout` exiting 0.
fn switch_with_library(dir: &Path, head: Head, rev: &str) -> Vec<Notice> {
    let (status, notices) = library_switch(dir, head, rev).unwrap();
    assert_eq!(status, 0, "post-checkout exit status");
    notices
}

#[test]
fn switch_to_a_branch_through_the_library_leaves_what_git_switch_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let (g, p) = pair(tmp.path());
    with_identity(|| git(&g, &["checkout", "-q", "topic"]));
    let notices = switch_with_library(&p, Head::Branch("topic".into()), "topic");
    assert_eq!(state(&p), state(&g));
    assert!(notices.is_empty(), "{notices:?}");
    let log = std::fs::read_to_string(p.join("hooks.log")).unwrap();
    assert!(log.contains("post-checkout "), "{log}");
    assert!(log.contains("reference-transaction committed"), "{log}");
}

#[test]
fn new_tracking_branch_through_the_library_matches_git_and_reports_its_upstream() {
    let tmp = tempfile::tempdir().unwrap();
    let (g, p) = pair(tmp.path());
    with_identity(|| {
        git(
            &g,
            &["checkout", "-q", "--track", "-b", "new", "origin/feature"],
        )
    });
    let nb = NewBranch {
        name: "new".into(),
        start: "origin/feature".into(),
        force: false,
        exists: false,
        track: Track::Explicit,
        update: true,
        reflog: false,
    };
    let notices = switch_with_library(&p, Head::NewBranch(nb), "origin/feature");
    assert_eq!(state(&p), state(&g));
    assert_eq!(
        notices,
        vec![Notice::TrackingSetUp {
            branch: "new".into(),
            upstreams: vec!["origin/feature".into()],
            rebasing: false,
        }]
    );
}

#[test]
fn reset_hard_through_the_library_leaves_what_git_reset_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let (g, p) = pair(tmp.path());
    std::fs::write(g.join("a"), "local edit\n").unwrap();
    std::fs::write(p.join("a"), "local edit\n").unwrap();
    with_identity(|| {
        git(&g, &["reset", "-q", "--hard", "topic"]);
        let repo = gix::open(&p).unwrap();
        let commit = repo.rev_parse_single("topic").unwrap().detach();
        let launch = gitpar::repo::hooks::Launch::at(p.clone());
        let env = gitpar::repo::hooks::Env {
            launch: &launch,
            sink: &gitpar::repo::notice::Ignore,
        };
        let index = p.join(".git/index");
        let request = gitpar::reset::Request {
            commit,
            rev: "topic",
            options: gitpar::Options::default(),
            worktree: &p,
            index_path: &index,
        };
        let progress = gitpar::Progress::default();
        let interrupt = AtomicBool::new(false);
        let ctx = gitpar::Context {
            progress: &progress,
            interrupt: &interrupt,
        };
        let outcome = gitpar::reset::hard(&repo, env, &request, &ctx).unwrap();
        assert!(outcome.errors.is_empty());
        gitpar::repo::state::remove_branch_state(&repo, env, false).unwrap();
    });
    assert_eq!(state(&p), state(&g));
    assert_eq!(
        std::fs::read_to_string(p.join(".git/ORIG_HEAD")).unwrap(),
        std::fs::read_to_string(g.join(".git/ORIG_HEAD")).unwrap()
    );
}

#[test]
fn a_refusing_reference_transaction_hook_stops_the_switch_before_head_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, p) = pair(tmp.path());
    let hook = p.join(".git/hooks/reference-transaction");
    std::fs::write(
        &hook,
        "#!/bin/sh\n[ \"$1\" = prepared ] && exit 1\nexit 0\n",
    )
    .unwrap();
    let before = git(&p, &["symbolic-ref", "HEAD"]);
    let err = library_switch(&p, Head::Branch("topic".into()), "topic").unwrap_err();
    assert!(matches!(err, gitpar::switch::Error::AbortedByHook), "{err}");
    assert_eq!(err.to_string(), "ref updates aborted by hook");
    assert_eq!(git(&p, &["symbolic-ref", "HEAD"]), before);
}
