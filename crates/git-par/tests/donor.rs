//! `git par worktree add` from a donor work tree (issue 22): clean files cloned from another
//! work tree of the repository where the filesystem can (XFS with reflink, btrfs), written
//! where it cannot (ext4, tmpfs) or where the donor's copy is not what a checkout writes.
//!
//! Every case checks the new work tree against one `git worktree add` made of the same commit
//! beside it: files, index entries and `git status`, and that the donor was left as it was.
//! The copy-on-write filesystems are loop-mounted images (root only; said loudly and skipped
//! otherwise; `scripts/setup` installs xfsprogs and btrfs-progs).

mod support;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

/// A filesystem image made by `mkfs` and loop-mounted, unmounted and removed on drop.
struct LoopMount {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
}

impl LoopMount {
    fn new(mkfs: &[&str]) -> Option<LoopMount> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("\n!!!!!!!! SKIPPED: a loop mount needs root !!!!!!!!\n");
            return None;
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        let image = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).expect("mount point");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(512 * 1024 * 1024))
            .expect("image");
        let path = format!(
            "{}:/usr/sbin:/sbin",
            std::env::var("PATH").unwrap_or_default()
        );
        let made = Command::new(mkfs[0])
            .args(&mkfs[1..])
            .arg(&image)
            .env("PATH", &path)
            .output();
        match made {
            Ok(out) if out.status.success() => {}
            other => {
                eprintln!(
                    "\n!!!!!!!! SKIPPED: {} failed: {other:?} !!!!!!!!\n",
                    mkfs[0]
                );
                return None;
            }
        }
        let mounted = Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mnt)
            .env("PATH", &path)
            .status()
            .expect("mount");
        assert!(mounted.success(), "mount -o loop {}", image.display());
        Some(LoopMount { _dir: dir, mnt })
    }

    fn xfs() -> Option<LoopMount> {
        LoopMount::new(&["mkfs.xfs", "-q", "-f", "-m", "reflink=1"])
    }

    fn btrfs() -> Option<LoopMount> {
        LoopMount::new(&["mkfs.btrfs", "-q", "-f"])
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let done = Command::new("umount").arg(&self.mnt).status();
        if !done.is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
        }
    }
}

/// The fixture repository copied to `dir/repo`, its work tree (the donor) made clean and not
/// racily so: every tracked file's times set ten seconds back, then the index refreshed (it is
/// written now, after them), as a work tree some time after its checkout is.
fn donor_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    copy_repo(fixture_named("donor"), &repo);
    settle(&repo);
    repo
}

/// Every file of `repo`'s work tree backdated and the index refreshed, so that no entry is
/// racily clean. Each call backdates to another second (ten, twelve, fourteen... seconds ago):
/// git compares times in seconds, and would keep an entry's stale nanoseconds otherwise.
fn settle(repo: &Path) {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10 + 2 * n);
    let files = git_str(repo, ["ls-files"]);
    for file in files.lines() {
        let path = repo.join(file);
        let meta = std::fs::symlink_metadata(&path);
        if meta.is_ok_and(|m| m.is_file()) {
            let f = std::fs::File::options().write(true).open(&path).unwrap();
            f.set_modified(past).unwrap();
        }
    }
    git_ok(repo, ["update-index", "-q", "--refresh"]);
}

/// What git-par said of its donor (`GIT_PAR_TRACE`): files cloned, and the donor line.
struct Traced {
    cloned: usize,
    line: String,
}

/// The donor line of `stderr`.
fn traced(stderr: &str) -> Traced {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("git-par: donor "))
        .unwrap_or("")
        .to_owned();
    let cloned = line
        .split(": ")
        .nth(2)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Traced { cloned, line }
}

/// `git par worktree add ARGS` in `repo` with `GIT_PAR_TRACE=1` and the `-c` options `config`.
fn par_add(repo: &Path, config: &[&str], args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_git-par"));
    clean_env(&mut cmd)
        .current_dir(repo)
        .env("GIT_PAR_TRACE", "1");
    for c in config {
        cmd.args(["-c", c]);
    }
    cmd.args(["worktree", "add"]).args(args);
    let out = cmd.output().expect("run git-par");
    Run {
        command: format!("git-par worktree add {args:?}"),
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// Every file of the donor work tree, with its bytes and stat data: what must not change.
fn donor_state(repo: &Path) -> Vec<(Vec<u8>, StatId, Vec<u8>)> {
    stat_snapshot(repo)
        .into_iter()
        .filter(|(p, _)| !p.is_empty())
        .map(|(p, st)| {
            let path = repo.join(std::ffi::OsStr::from_bytes(&p));
            let bytes = if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            (p, st, bytes)
        })
        .collect()
}

/// `git worktree add --detach DIR/plain REV` by git and `git par worktree add --detach DIR/new
/// REV` with `extra` arguments, from `repo`; both compared (files, index, status), the donor
/// unchanged. Returns what git-par said of the donor.
#[track_caller]
fn add_both(repo: &Path, rev: &str, config: &[&str], extra: &[&str]) -> Traced {
    let dir = repo.parent().unwrap();
    let before = donor_state(repo);
    let mut git_args: Vec<String> = config
        .iter()
        .flat_map(|c| ["-c".into(), (*c).to_owned()])
        .collect();
    git_args.extend(["worktree", "add", "-q", "--detach"].map(String::from));
    git_args.push(dir.join("plain").display().to_string());
    git_args.push(rev.to_owned());
    git(repo, &git_args).assert_success();
    let new = dir.join("new");
    let mut args: Vec<&str> = extra.to_vec();
    let new_s = new.display().to_string();
    args.extend(["-q", "--detach", &new_s, rev]);
    let run = par_add(repo, config, &args).assert_success();
    let said = traced(&run.stderr_str());
    let plain = dir.join("plain");
    let cfg: Vec<String> = config.iter().map(|c| (*c).to_owned()).collect();
    compare_worktrees(&plain, &new);
    compare_indexes(&plain, &new, &cfg);
    assert_real_stat(&new, &cfg);
    assert_clean(&new, &cfg);
    assert_status_like_git(&plain, &new, &cfg);
    assert_eq!(before, donor_state(repo), "the donor changed");
    said
}

/// The plain case on a copy-on-write filesystem: every file the donor has clean is cloned
/// (all but the symlink, which the tail writes), and a write to a clone leaves the donor's
/// file as it was.
fn clones_everything_clean(fs: &LoopMount) {
    let repo = donor_repo(&fs.mnt);
    let said = add_both(&repo, "main", &[], &[]);
    // 12 regular files in main, x.flt (filtered) written.
    assert_eq!(said.cloned, 11, "{}", said.line);
    assert!(
        said.line.contains("1 converted by attributes"),
        "{}",
        said.line
    );
    let new = fs.mnt.join("new");
    std::fs::write(new.join("big.bin"), b"changed").unwrap();
    assert_eq!(
        std::fs::read(repo.join("big.bin")).unwrap(),
        vec![0xff; 262144]
    );
    // The clones share their blocks: the new work tree's files were not written.
    let st = Command::new("filefrag")
        .args(["-v"])
        .arg(new.join("dir/a.txt"))
        .output();
    if let Ok(out) = st {
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if out.status.success() && !text.contains("inline") {
            assert!(text.contains("shared"), "dir/a.txt is not a clone: {text}");
        }
    }
}

#[test]
fn clones_clean_files_on_xfs() {
    if let Some(fs) = LoopMount::xfs() {
        clones_everything_clean(&fs);
    }
}

#[test]
fn clones_clean_files_on_btrfs() {
    if let Some(fs) = LoopMount::btrfs() {
        clones_everything_clean(&fs);
    }
}

/// Local changes in the donor: a modified file, one rewritten with its size and mtime kept
/// (only its ctime tells), an executable bit taken away, a deleted file, a staged change. Each
/// is written from the object database; the rest is cloned.
#[test]
fn donor_with_local_changes() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    std::fs::write(repo.join("small.txt"), "changed locally\n").unwrap();
    let b = repo.join("dir/a.txt");
    let mtime = std::fs::metadata(&b).unwrap().modified().unwrap();
    std::fs::write(&b, "x\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&b)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    run("chmod", &repo, ["-x", "run.sh"]).assert_success();
    std::fs::remove_file(repo.join("part/one.txt")).unwrap();
    std::fs::write(repo.join("part/two.txt"), "staged\n").unwrap();
    git_ok(&repo, ["add", "part/two.txt"]);
    let said = add_both(&repo, "main", &[], &[]);
    assert_eq!(said.cloned, 6, "{}", said.line);
}

/// A freshly checked-out donor: its files are as new as its index (racily clean), so none is
/// trusted; every file is written, and the result is the same.
#[test]
fn racily_clean_donor_entries_are_written() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = fs.mnt.join("repo");
    copy_repo(fixture_named("donor"), &repo);
    // Every file's mtime later than the index's (a checkout within the index's second is the
    // usual way to get there; a time ahead makes it certain).
    let files = git_str(&repo, ["ls-files"]);
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
    for file in files.lines() {
        let path = repo.join(file);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            let f = std::fs::File::options().write(true).open(&path).unwrap();
            f.set_modified(future).unwrap();
        }
    }
    git_ok(&repo, ["update-index", "-q", "--refresh"]);
    let said = add_both(&repo, "main", &[], &[]);
    assert_eq!(said.cloned, 0, "{}", said.line);
    assert!(said.line.contains("racily clean"), "{}", said.line);
}

/// A file added with CRLF under `text=auto` is clean in the donor's index, but a checkout
/// writes its blob's LF: it is written, not cloned (the sizes differ).
#[test]
fn an_added_file_that_checkout_would_convert_is_written() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    std::fs::write(repo.join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    // git add converts CRLF to LF: the blob is unchanged, the index trusts the CRLF file.
    git_ok(&repo, ["add", "crlf.txt"]);
    assert_eq!(git_str(&repo, ["status", "--porcelain"]), "");
    settle(&repo);
    let said = add_both(&repo, "main", &[], &[]);
    assert_eq!(said.cloned, 10, "{}", said.line);
    assert!(said.line.contains("modified in the donor"), "{}", said.line);
}

/// The new work tree's commit has other attributes (eol=crlf for *.txt, ident for id.c): the
/// donor's copies were written under main's, so nothing is cloned.
#[test]
fn attributes_that_differ_between_the_commits_clone_nothing() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    let said = add_both(&repo, "attrs", &[], &[]);
    assert_eq!(said.cloned, 0, "{}", said.line);
    assert!(said.line.contains(".gitattributes differ"), "{}", said.line);
}

/// An untracked `.gitattributes` in a donor directory may have changed how its files were
/// written: that directory's files are written.
#[test]
fn an_untracked_attributes_file_in_the_donor_is_respected() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    std::fs::write(repo.join("dir/.gitattributes"), "*.txt eol=crlf\n").unwrap();
    let said = add_both(&repo, "main", &[], &[]);
    assert!(
        said.line.contains("untracked .gitattributes"),
        "{}",
        said.line
    );
    assert_eq!(said.cloned, 9, "{}", said.line);
}

/// skip-worktree and assume-unchanged entries are never trusted (their files may be anything),
/// nor are those of a sparse donor.
#[test]
fn skip_worktree_assume_unchanged_and_sparse_donors() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    git_ok(&repo, ["update-index", "--skip-worktree", "small.txt"]);
    std::fs::write(repo.join("small.txt"), "not what the index says\n").unwrap();
    git_ok(&repo, ["update-index", "--assume-unchanged", "dir/a.txt"]);
    std::fs::write(repo.join("dir/a.txt"), "neither\n").unwrap();
    let said = add_both(&repo, "main", &[], &[]);
    assert_eq!(said.cloned, 9, "{}", said.line);

    let fs2 = LoopMount::xfs().unwrap();
    let repo = donor_repo(&fs2.mnt);
    git_ok(
        &repo,
        ["sparse-checkout", "set", "--no-cone", "/*", "!/part/"],
    );
    settle(&repo);
    // The new work tree is sparse too (git copies the patterns); compare with git's.
    let said = add_both(&repo, "main", &[], &[]);
    assert_eq!(said.cloned, 9, "{}", said.line);
}

/// Where the filesystem cannot clone (this machine's disk, tmpfs), every file is written and
/// the trace says why; `--no-reflink` and `par.reflink=false` clone nothing anywhere.
#[test]
fn falls_back_to_writing_where_nothing_can_clone() {
    let s = scratch();
    let repo = donor_repo(s.path());
    let said = add_both(&repo, "main", &[], &[]);
    assert_eq!(said.cloned, 0);
    assert!(said.line.contains("cannot clone"), "{}", said.line);
    if Path::new("/dev/shm").is_dir() {
        let shm = tempfile::tempdir_in("/dev/shm").unwrap();
        let repo = donor_repo(shm.path());
        let said = add_both(&repo, "main", &[], &[]);
        assert_eq!(said.cloned, 0);
        assert!(said.line.contains("cannot clone"), "{}", said.line);
    }
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    let said = add_both(&repo, "main", &[], &["--no-reflink"]);
    assert_eq!(said.cloned, 0);
    assert_eq!(said.line, "", "no donor: {}", said.line);
    std::fs::remove_dir_all(fs.mnt.join("new")).unwrap();
    std::fs::remove_dir_all(fs.mnt.join("plain")).unwrap();
    git_ok(&repo, ["worktree", "prune"]);
    let said = add_both(&repo, "main", &["par.reflink=false"], &[]);
    assert_eq!(said.cloned, 0);
    assert_eq!(said.line, "", "no donor: {}", said.line);
}

/// `--donor PATH` names another work tree of the repository; a directory that is no work tree
/// is refused before anything is made.
#[test]
fn donor_named_on_the_command_line() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    let other = fs.mnt.join("other");
    git_ok(
        &repo,
        [
            "worktree",
            "add",
            "-q",
            "--detach",
            other.to_str().unwrap(),
            "main",
        ],
    );
    settle(&other);
    let other_s = other.display().to_string();
    let said = add_both(&repo, "main", &[], &["--donor", &other_s]);
    assert_eq!(said.cloned, 11, "{}", said.line);
    assert!(said.line.contains(&other_s), "{}", said.line);
    let nowhere = fs.mnt.join("nowhere");
    std::fs::create_dir(&nowhere).unwrap();
    let run = par_add(
        &repo,
        &[],
        &[
            "--donor",
            nowhere.to_str().unwrap(),
            fs.mnt.join("x").to_str().unwrap(),
        ],
    )
    .assert_failure();
    assert!(
        run.stderr_str().contains("not a git work tree"),
        "{}",
        run.stderr_str()
    );
    assert!(!fs.mnt.join("x").exists());
}

/// A donor file edited while the checkout runs: x.flt's smudge filter rewrites the donor's
/// zz.txt (same size, new content) before zz.txt, last in index order, is reached by the
/// sequential run (12 files: below the parallel threshold). Its stat data no longer match its
/// index entry, so it is written from the object database: the result is still git's.
#[test]
fn a_donor_file_edited_during_the_run_is_written() {
    let Some(fs) = LoopMount::xfs() else { return };
    let repo = donor_repo(&fs.mnt);
    let plain = fs.mnt.join("plain");
    git_ok(
        &repo,
        [
            "worktree",
            "add",
            "-q",
            "--detach",
            plain.to_str().unwrap(),
            "main",
        ],
    );
    let zz = repo.join("zz.txt");
    let script = fs.mnt.join("edit.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf 'LAST\\n' > '{}'\nexec cat\n",
            zz.display()
        ),
    )
    .unwrap();
    run("chmod", &fs.mnt, ["+x", "edit.sh"]).assert_success();
    let edit = format!("filter.cat.smudge={}", script.display());
    let new = fs.mnt.join("new");
    let run = par_add(
        &repo,
        &[&edit],
        &["-q", "--detach", new.to_str().unwrap(), "main"],
    )
    .assert_success();
    let said = traced(&run.stderr_str());
    assert_eq!(
        std::fs::read(&zz).unwrap(),
        b"LAST\n",
        "the filter did not edit the donor"
    );
    assert_eq!(said.cloned, 10, "{}", said.line);
    assert!(
        said.line.contains("1 modified in the donor"),
        "{}",
        said.line
    );
    compare_worktrees(&plain, &new);
    compare_indexes(&plain, &new, &[]);
    assert_clean(&new, &[]);
}
