//! External filter drivers against git: `clean`/`smudge` commands (rot13 through `tr`), a
//! long-running process filter that delays some paths (`tests/fixtures/rot13-process.pl`),
//! `ident` + `eol` + a filter on one path, required and non-required filters that fail, and
//! `reset --hard`, `switch` and `restore` over filtered files, with 1 and 8 writers. Each command
//! runs with git on one copy of the repository and with git-par on another; work trees, indexes
//! and git's own view (`status`, `update-index --refresh`, `diff-index`) must agree.
//!
//! Fixture: `tests/fixtures/make_filters.sh`.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use support::*;

const TR: &str = "tr A-Za-z N-ZA-Mn-za-m";

/// One side of a comparison: a repository cloned without checkout from the fixture, and the log
/// of its process filter.
struct Side {
    repo: PathBuf,
    log: PathBuf,
}

/// git's side and git-par's side of one test.
struct Pair {
    _s: Scratch,
    git: Side,
    par: Side,
}

impl Pair {
    /// Two clones (`--no-checkout`) of the filter fixture.
    fn new() -> Pair {
        let s = scratch();
        let src = fixture_named("filters");
        let side = |name: &str| {
            let repo = s.join(name).join("repo");
            fs::create_dir_all(s.join(name)).unwrap();
            git_ok(
                s.path(),
                [
                    OsString::from("clone"),
                    "-q".into(),
                    "--no-checkout".into(),
                    src.into(),
                    repo.clone().into(),
                ],
            );
            Side {
                repo,
                log: s.join(name).join("filter.log"),
            }
        };
        let (git, par) = (side("git"), side("par"));
        Pair { _s: s, git, par }
    }

    /// Both sides checked out by git (the starting point of the update tests).
    fn checked_out(extra: &[&str]) -> Pair {
        let pair = Pair::new();
        for side in [&pair.git, &pair.par] {
            git_ok(&side.repo, side.args(extra, &["reset", "-q", "--hard"]));
            fs::remove_file(&side.log).unwrap();
        }
        pair
    }

    /// Run `cmd` with git on git's side and with git-par (`-j jobs`) on git-par's side.
    fn run(&self, extra: &[&str], cmd: &[&str], jobs: u32) -> (Run, Run) {
        let by_git = git(&self.git.repo, self.git.args(extra, cmd));
        let mut par_cmd: Vec<&str> = cmd.to_vec();
        let jobs = jobs.to_string();
        par_cmd.splice(1..1, ["-j", jobs.as_str()]);
        let by_par = git_par(&self.par.repo, self.par.args(extra, &par_cmd));
        (by_git, by_par)
    }

    /// Panics unless both sides hold the same files and index, and git sees the same state.
    #[track_caller]
    fn assert_same(&self, extra: &[&str]) {
        compare_worktrees(&self.git.repo, &self.par.repo);
        let config = self.par.config(extra);
        compare_indexes(&self.git.repo, &self.par.repo, &config);
        assert_status_like_git(&self.git.repo, &self.par.repo, &config);
    }
}

impl Side {
    /// The filter configuration: rot13 clean/smudge through `tr`, the process filter delaying
    /// the `*.d` paths and logging into this side's log, threshold 0, plus `extra`.
    fn config(&self, extra: &[&str]) -> Vec<String> {
        let script = fixtures_dir().join("rot13-process.pl");
        let mut config = vec![
            format!("filter.rot13.clean={TR}"),
            format!("filter.rot13.smudge={TR}"),
            format!(
                "filter.proc.process=perl {} --delay '\\.d$' --log {}",
                script.display(),
                self.log.display()
            ),
            THRESHOLD_ZERO.to_owned(),
        ];
        config.extend(extra.iter().map(|s| (*s).to_owned()));
        config
    }

    fn args(&self, extra: &[&str], cmd: &[&str]) -> Vec<OsString> {
        let mut args = config_args(&self.config(extra));
        args.extend(cmd.iter().map(OsString::from));
        args
    }

    /// The process filter's smudge lines, sorted (writers interleave them).
    fn smudges(&self) -> Vec<String> {
        let log = fs::read_to_string(&self.log).unwrap_or_default();
        let mut lines: Vec<String> = log
            .lines()
            .filter(|l| l.starts_with("smudge "))
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    }
}

#[track_caller]
fn assert_both_succeed((by_git, by_par): &(Run, Run)) {
    assert!(by_git.success(), "git failed: {}", by_git.describe());
    assert!(by_par.success(), "git-par failed: {}", by_par.describe());
}

fn reset_hard_writes_filtered_files_like_git(jobs: u32) {
    let pair = Pair::new();
    assert_both_succeed(&pair.run(&[], &["reset", "-q", "--hard"], jobs));
    pair.assert_same(&[]);
    // Every *.d path went through the delay queue and was delivered at the end, as with git.
    let smudges = pair.par.smudges();
    assert!(
        smudges.iter().any(|l| l.ends_with("[DELAYED]")),
        "{smudges:#?}"
    );
    assert_eq!(pair.git.smudges(), smudges);
    // ident, eol=crlf and the filter on one path: git's order (ident, eol, then the filter).
    let mixed = fs::read(pair.par.repo.join("mixed.r")).unwrap();
    assert!(mixed.windows(5).any(|w| w == b"$Vq: "), "{mixed:?}");
    assert!(mixed.ends_with(b"\r\n"));
}

#[test]
fn reset_hard_writes_filtered_files_like_git_with_1_worker() {
    reset_hard_writes_filtered_files_like_git(1);
}

#[test]
fn reset_hard_writes_filtered_files_like_git_with_8_workers() {
    reset_hard_writes_filtered_files_like_git(8);
}

fn switch_over_filtered_files_like_git(jobs: u32) {
    let pair = Pair::checked_out(&[]);
    assert_both_succeed(&pair.run(&[], &["switch", "-q", "other"], jobs));
    pair.assert_same(&[]);
    assert_eq!(pair.git.smudges(), pair.par.smudges());
    assert_both_succeed(&pair.run(&[], &["checkout", "-q", "main"], jobs));
    pair.assert_same(&[]);
}

#[test]
fn switch_over_filtered_files_like_git_with_1_worker() {
    switch_over_filtered_files_like_git(1);
}

#[test]
fn switch_over_filtered_files_like_git_with_8_workers() {
    switch_over_filtered_files_like_git(8);
}

/// Filtered files rewritten with the same content (new stat data, racily clean or not) are not
/// local changes: the refresh hashes them through the clean filter (per file, or the process
/// filter's `clean`), so the switch goes ahead as git's does. Edited ones are restored first.
fn touched_and_restored_filtered_files_like_git(jobs: u32) {
    let pair = Pair::checked_out(&[]);
    for side in [&pair.git.repo, &pair.par.repo] {
        for path in ["mixed.r", "a/r1.r", "b/deep/p2.p", "c/d3.d", "a/r3.r"] {
            let content = fs::read(side.join(path)).unwrap();
            fs::remove_file(side.join(path)).unwrap();
            fs::write(side.join(path), content).unwrap();
        }
        fs::write(side.join("a/r4.r"), "edited\n").unwrap();
        fs::write(side.join("a/deep/p4.p"), "edited\n").unwrap();
    }
    assert_both_succeed(&pair.run(&[], &["restore", "a/r4.r", "a/deep/p4.p"], jobs));
    pair.assert_same(&[]);
    assert_both_succeed(&pair.run(&[], &["switch", "-q", "other"], jobs));
    pair.assert_same(&[]);
}

#[test]
fn touched_and_restored_filtered_files_like_git_with_1_worker() {
    touched_and_restored_filtered_files_like_git(1);
}

#[test]
fn touched_and_restored_filtered_files_like_git_with_8_workers() {
    touched_and_restored_filtered_files_like_git(8);
}

/// A required filter that fails is an error for its paths, naming path and driver; nothing
/// half-written stays at those paths, and the other entries are written.
fn required_filter_that_fails(jobs: u32) {
    let extra = ["filter.broken.smudge=false", "filter.broken.required=true"];
    let pair = Pair::new();
    let (by_git, by_par) = pair.run(&extra, &["reset", "-q", "--hard"], jobs);
    assert!(!by_git.success());
    assert!(!by_par.success(), "{}", by_par.describe());
    let stderr = by_par.stderr_str();
    assert!(
        stderr.contains("a.fail: smudge filter broken failed"),
        "{stderr}"
    );
    assert!(!pair.par.repo.join("a.fail").exists());
    assert!(!pair.par.repo.join("b.fail").exists());
    assert_eq!(
        fs::read(pair.par.repo.join("a/r1.r")).unwrap(),
        b"rot13 file a 1\nHello, World 1\n"
    );
}

#[test]
fn required_filter_that_fails_is_an_error_for_its_paths_with_1_worker() {
    required_filter_that_fails(1);
}

#[test]
fn required_filter_that_fails_is_an_error_for_its_paths_with_8_workers() {
    required_filter_that_fails(8);
}

/// Non-required filters that fail leave the blob unconverted, as git does: a per-file command
/// that exits non-zero, a process filter that answers `status=error`, and one that dies in the
/// middle of its answer (restarted for the next path).
fn non_required_filters_that_fail_like_git(jobs: u32) {
    let script = fixtures_dir().join("rot13-process.pl");
    let failing = format!(
        "filter.proc.process=perl {} --error 'p1\\.p$' --die 'p2\\.p$'",
        script.display()
    );
    let extra = ["filter.broken.smudge=false", failing.as_str()];
    let pair = Pair::new();
    assert_both_succeed(&pair.run(&extra, &["reset", "-q", "--hard"], jobs));
    compare_worktrees(&pair.git.repo, &pair.par.repo);
    let config = pair.par.config(&extra);
    compare_indexes(&pair.git.repo, &pair.par.repo, &config);
    // The files right after a dying filter were converted by its restarted process.
    assert_eq!(
        fs::read(pair.par.repo.join("a/deep/p3.p")).unwrap(),
        b"process file a 3\nThe quick brown fox 3\n"
    );
}

#[test]
fn non_required_filters_that_fail_leave_the_blob_like_git_with_1_worker() {
    non_required_filters_that_fail_like_git(1);
}

#[test]
fn non_required_filters_that_fail_leave_the_blob_like_git_with_8_workers() {
    non_required_filters_that_fail_like_git(8);
}

/// A required process filter that dies in the middle of a path's content: that path fails with
/// a message naming it and the driver, and is not left half-written.
#[test]
fn required_process_filter_that_dies_names_the_path_and_leaves_nothing_half_written() {
    let script = fixtures_dir().join("rot13-process.pl");
    let dying = format!(
        "filter.proc.process=perl {} --die 'big\\.p$'",
        script.display()
    );
    let extra = [dying.as_str(), "filter.proc.required=true"];
    let pair = Pair::new();
    let (_, by_par) = pair.run(&extra, &["reset", "-q", "--hard"], 2);
    assert!(!by_par.success());
    let stderr = by_par.stderr_str();
    assert!(
        stderr.contains("big.p: smudge filter proc failed"),
        "{stderr}"
    );
    assert!(!pair.par.repo.join("big.p").exists());
    assert_eq!(
        fs::read(pair.par.repo.join("a/deep/p1.p")).unwrap(),
        b"process file a 1\nThe quick brown fox 1\n"
    );
}

/// A filter command is run only when configured: a `.gitattributes` naming a driver that the
/// configuration does not define leaves the blobs as they are, like git.
#[test]
fn unconfigured_drivers_run_nothing() {
    let pair = Pair::new();
    for side in [&pair.git.repo, &pair.par.repo] {
        git_ok(side, ["reset", "-q", "--hard"]);
        git_ok(side, ["rm", "-q", "--cached", "a/r1.r"]);
        fs::remove_file(side.join("a/r1.r")).unwrap();
    }
    let by_git = git(&pair.git.repo, ["checkout", "HEAD", "--", "a/r1.r"]);
    let by_par = git_par(&pair.par.repo, ["checkout", "HEAD", "--", "a/r1.r"]);
    assert!(
        by_git.success() && by_par.success(),
        "{}",
        by_par.describe()
    );
    compare_worktrees(&pair.git.repo, &pair.par.repo);
    assert_eq!(
        fs::read(pair.par.repo.join("a/r1.r")).unwrap(),
        b"ebg13 svyr n 1\nUryyb, Jbeyq 1\n"
    );
}

/// `checkout -- paths` reads a `.gitattributes` that is only in the work tree (never added), as
/// git's checkout does when the index has none (t0021's setup relies on it).
#[test]
fn path_checkout_reads_an_untracked_gitattributes_like_git() {
    let s = scratch();
    let mut dirs = Vec::new();
    for name in ["git", "par"] {
        let repo = s.join(name);
        git_ok(s.path(), ["init", "-q", name]);
        fs::write(repo.join("x.t"), "uryyb\n").unwrap();
        git_ok(&repo, ["add", "x.t"]);
        fs::write(repo.join(".gitattributes"), "*.t filter=rot13\n").unwrap();
        fs::remove_file(repo.join("x.t")).unwrap();
        dirs.push(repo);
    }
    let smudge = format!("filter.rot13.smudge={TR}");
    let args = ["-c", smudge.as_str(), "checkout", "--", "x.t"];
    git(&dirs[0], args).assert_success();
    git_par(&dirs[1], args).assert_success();
    compare_worktrees(&dirs[0], &dirs[1]);
    assert_eq!(fs::read(dirs[1].join("x.t")).unwrap(), b"hello\n");
}
