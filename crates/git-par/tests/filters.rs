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
        Pair::of(scratch(), fixture_named("filters"))
    }

    /// Two clones (`--no-checkout`) of `src`, in `s`.
    fn of(s: Scratch, src: &std::path::Path) -> Pair {
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

/// A required filter that fails is fatal, as in git: its error lines, then `fatal: <path>:
/// smudge filter <driver> failed` for the first such path in index order, exit 128, the index
/// left unwritten. Nothing is half-written: with one writer the work tree is git's exactly (the
/// entries before that path, in index order); with eight, whatever was written is whole.
fn required_filter_that_fails(jobs: u32) {
    let extra = ["filter.broken.smudge=false", "filter.broken.required=true"];
    let pair = Pair::new();
    let index = |side: &Side| fs::read(side.repo.join(".git/index")).ok();
    let before = [index(&pair.git), index(&pair.par)];
    let (by_git, by_par) = pair.run(&extra, &["reset", "-q", "--hard"], jobs);
    assert_eq!(
        [index(&pair.git), index(&pair.par)],
        before,
        "the index changed"
    );
    assert_eq!(by_git.status.code(), Some(128), "{}", by_git.describe());
    assert_eq!(by_par.status.code(), Some(128), "{}", by_par.describe());
    assert_eq!(by_par.stderr_str(), by_git.stderr_str());
    assert!(by_par
        .stderr_str()
        .ends_with("fatal: a.fail: smudge filter broken failed\n"));
    for side in [&pair.git.repo, &pair.par.repo] {
        assert!(!side.join("a.fail").exists());
        assert!(!side.join("b.fail").exists());
    }
    if jobs == 1 {
        // The same files (git-par makes the directories first, git as it goes: empty
        // directories may differ, which git does not see).
        let files = |side: &Side| {
            let mut files: Vec<(PathBuf, Vec<u8>)> = files_under(&side.repo)
                .into_iter()
                .map(|p| {
                    (
                        p.strip_prefix(&side.repo).unwrap().to_owned(),
                        fs::read(&p).unwrap(),
                    )
                })
                .collect();
            files.sort();
            files
        };
        assert_eq!(files(&pair.git), files(&pair.par));
        return;
    }
    // Every file there is whole: as a checkout without the broken filter writes it.
    let whole = Pair::new();
    git_ok(
        &whole.git.repo,
        whole.git.args(&[], &["reset", "-q", "--hard"]),
    );
    let mut written = 0;
    for path in files_under(&pair.par.repo) {
        let rel = path.strip_prefix(&pair.par.repo).unwrap();
        assert_eq!(
            fs::read(&path).unwrap(),
            fs::read(whole.git.repo.join(rel)).unwrap(),
            "{}",
            rel.display()
        );
        written += 1;
    }
    assert!(written > 0);
}

/// The files under `dir`, `.git` left out.
fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn required_filter_that_fails_is_fatal_like_git_with_1_worker() {
    required_filter_that_fails(1);
}

#[test]
fn required_filter_that_fails_is_fatal_like_git_with_8_workers() {
    required_filter_that_fails(8);
}

/// A required driver without a smudge command is fatal at its first path too (git's t0021.9).
#[test]
fn required_driver_without_smudge_command_is_fatal_like_git() {
    let extra = ["filter.broken.clean=cat", "filter.broken.required=true"];
    let pair = Pair::checked_out(&[]);
    for side in [&pair.git.repo, &pair.par.repo] {
        fs::remove_file(side.join("a.fail")).unwrap();
    }
    let (by_git, by_par) = pair.run(&extra, &["checkout", "--", "a.fail"], 1);
    assert_eq!(by_git.status.code(), Some(128));
    assert_eq!(by_par.status.code(), Some(128), "{}", by_par.describe());
    assert_eq!(by_par.stderr_str(), by_git.stderr_str());
    assert_eq!(
        by_par.stderr_str(),
        "fatal: a.fail: smudge filter broken failed\n"
    );
    assert!(!pair.par.repo.join("a.fail").exists());
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
    let runs = pair.run(&extra, &["reset", "-q", "--hard"], jobs);
    assert_both_succeed(&runs);
    // git's error lines, in index order whatever the number of writers.
    assert_eq!(runs.1.stderr_str(), runs.0.stderr_str());
    assert!(runs
        .1
        .stderr_str()
        .contains("error: external filter 'false' failed 1\n"));
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

/// Where the work tree's `.gitattributes` and the index's differ, `checkout -- paths` and
/// `restore` follow the work tree's (git's `GIT_ATTR_CHECKIN` order), while `reset --hard`
/// follows the index's (`GIT_ATTR_CHECKOUT`, set only by `unpack_trees`): t0027's checkouts of
/// `-text` files under `core.autocrlf=true`.
#[test]
fn path_checkout_prefers_the_work_trees_gitattributes_and_reset_the_indexs_like_git() {
    let s = scratch();
    let cases: [&[&str]; 3] = [
        &["checkout", "--", "lf.txt"],
        &["restore", "lf.txt"],
        &["reset", "-q", "--hard"],
    ];
    for cmd in cases {
        let mut dirs = Vec::new();
        for name in ["git", "par"] {
            let repo = s.join(format!("{}-{name}", cmd[0]));
            git_ok(s.path(), ["init", "-q", repo.to_str().unwrap()]);
            fs::write(repo.join("lf.txt"), "a\nb\n").unwrap();
            fs::write(repo.join(".gitattributes"), "").unwrap();
            git_ok(&repo, ["add", "."]);
            git_ok(&repo, ["commit", "-q", "-m", "one"]);
            git_ok(&repo, ["config", "core.autocrlf", "true"]);
            fs::write(repo.join(".gitattributes"), "*.txt -text\n").unwrap();
            fs::remove_file(repo.join("lf.txt")).unwrap();
            dirs.push(repo);
        }
        let args: Vec<&str> = ["-c", "core.eol=lf"].iter().chain(cmd).copied().collect();
        git(&dirs[0], &args).assert_success();
        git_par(&dirs[1], &args).assert_success();
        compare_worktrees(&dirs[0], &dirs[1]);
        let expected: &[u8] = if cmd[0] == "reset" {
            b"a\r\nb\r\n"
        } else {
            b"a\nb\n"
        };
        assert_eq!(
            fs::read(dirs[1].join("lf.txt")).unwrap(),
            expected,
            "{cmd:?}"
        );
    }
}

/// A clone through a long-running filter that delays some paths, as git's t0021 "delayed checkout
/// in process filter" does it: the same files, and the same requests, each carrying git's `ref=`
/// (the branch), `treeish=` (the commit) and `blob=` (the log lines say which).
fn clone_through_a_delaying_filter_like_git(jobs: u32) {
    let s = scratch();
    let src = fixture_named("filters");
    let log = |name: &str| s.join(format!("{name}.log"));
    let script = fixtures_dir().join("rot13-process.pl");
    let mut by_side = Vec::new();
    for (name, program) in [("git", "git"), ("par", GIT_PAR)] {
        let config = vec![
            format!("filter.rot13.smudge={TR}"),
            format!(
                "filter.proc.process=perl {} --delay '\\.d$' --log {}",
                script.display(),
                log(name).display()
            ),
            "filter.proc.required=true".to_owned(),
            THRESHOLD_ZERO.to_owned(),
            format!("checkout.workers={jobs}"),
        ];
        let mut args = config_args(&config);
        args.extend([
            OsString::from("clone"),
            "-q".into(),
            src.into(),
            s.join(name).into(),
        ]);
        let run = run(program, s.path(), args);
        assert!(run.success(), "{}", run.describe());
        by_side.push(run);
    }
    compare_worktrees(&s.join("git"), &s.join("par"));
    let lines = |name: &str| {
        let mut lines: Vec<String> = fs::read_to_string(log(name))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("smudge "))
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    let (git_lines, par_lines) = (lines("git"), lines("par"));
    assert_eq!(git_lines, par_lines);
    let head = git_str(&s.join("git"), ["rev-parse", "HEAD"]);
    let meta = format!("ref=refs/heads/main treeish={head} blob=");
    assert!(
        par_lines
            .iter()
            .any(|l| l.contains(&meta) && l.ends_with("[DELAYED]")),
        "{par_lines:#?}"
    );
}

#[test]
fn clone_through_a_delaying_filter_like_git_with_1_worker() {
    clone_through_a_delaying_filter_like_git(1);
}

#[test]
fn clone_through_a_delaying_filter_like_git_with_8_workers() {
    clone_through_a_delaying_filter_like_git(8);
}

/// Runs `program args` in `cwd` with the clean environment and `GIT_PROGRESS_DELAY=0`.
fn run_without_progress_delay(program: &str, cwd: &std::path::Path, args: &[OsString]) -> Run {
    let mut cmd = std::process::Command::new(program);
    clean_env(&mut cmd)
        .env("GIT_PROGRESS_DELAY", "0")
        .current_dir(cwd)
        .args(args);
    let out = cmd.output().unwrap();
    Run {
        command: format!("{program} {args:?}"),
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// git's "Filtering content" progress while delayed entries are collected: shown with
/// `--progress` (standard error is no terminal here), not with `--no-progress` or `--quiet`, as
/// git's t0021 progress tests have it, for a path checkout and a branch checkout.
#[test]
fn delayed_checkout_shows_filtering_content_like_git() {
    let pair = Pair::checked_out(&[]);
    for cmd in [&["checkout", "."][..], &["checkout", "-f", "HEAD"][..]] {
        for (flags, shown) in [
            (&["--progress"][..], true),
            (&["--no-progress"][..], false),
            (&["--quiet"][..], false),
            (&["--quiet", "--progress"][..], true),
        ] {
            let mut by = Vec::new();
            for (side, program) in [(&pair.git, "git"), (&pair.par, GIT_PAR)] {
                for path in ["a/d1.d", "b/d2.d", "c/d3.d"] {
                    fs::remove_file(side.repo.join(path)).unwrap();
                }
                let mut full: Vec<&str> = cmd.to_vec();
                full.splice(1..1, flags.iter().copied());
                let run = run_without_progress_delay(program, &side.repo, &side.args(&[], &full));
                assert!(run.success(), "{}", run.describe());
                by.push(run.stderr_str().contains("Filtering content: 100% (3/3)"));
                assert!(side.repo.join("c/d3.d").exists());
            }
            assert_eq!(by, [shown, shown], "{cmd:?} {flags:?}");
        }
    }
    pair.assert_same(&[]);
}

/// The UTF-16 and UTF-32 `working-tree-encoding`s (`UTF-16LE-BOM`, `UTF-16`, `UTF-16LE`,
/// `utf16be`, `UTF-32`, `UTF-32BE`: `tests/fixtures/make_encoding.sh`) in the to-git direction:
/// files rewritten with the same bytes (new stat data) are not local changes to git-par's refresh
/// either, so a switch that changes some of them goes ahead as git's does, and git's own view
/// afterwards (`status`, `diff-files`, `update-index --refresh`) is the same on both sides.
fn touched_encoded_files_are_unchanged_like_git(jobs: u32) {
    let s = scratch();
    let src = s.join("src");
    git_ok(
        s.path(),
        [
            OsString::from("clone"),
            "-q".into(),
            fixture_named("encoding").into(),
            src.clone().into(),
        ],
    );
    git_ok(&src, ["switch", "-q", "-c", "other"]);
    for (file, enc) in [
        ("text.u16", "UTF-16"),
        ("hello.utf16", "UTF-16LE"),
        ("text.u32", "UTF-32"),
    ] {
        let mut content = Vec::new();
        if file == "hello.utf16" {
            content.extend_from_slice(&[0xFF, 0xFE]);
        }
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf 'changed \\303\\251\\n' | iconv -f UTF-8 -t {enc}"
            ))
            .output()
            .unwrap();
        content.extend_from_slice(&out.stdout);
        fs::write(src.join(file), content).unwrap();
    }
    git_ok(&src, ["commit", "-q", "-a", "-m", "changed encoded files"]);
    git_ok(&src, ["switch", "-q", "main"]);
    let sides: Vec<PathBuf> = ["git", "par"].iter().map(|n| s.join(n)).collect();
    for side in &sides {
        git_ok(
            s.path(),
            [
                OsString::from("clone"),
                "-q".into(),
                src.clone().into(),
                side.clone().into(),
            ],
        );
        git_ok(side, ["branch", "-q", "other", "origin/other"]);
        for file in [
            "hello.utf16",
            "text.u16",
            "text.u16le",
            "text.u16be",
            "text.u32",
            "text.u32be",
        ] {
            let content = fs::read(side.join(file)).unwrap();
            fs::remove_file(side.join(file)).unwrap();
            fs::write(side.join(file), content).unwrap();
        }
    }
    let config = [THRESHOLD_ZERO.to_owned()];
    let mut git_args = config_args(&config);
    git_args.extend(["switch", "-q", "other"].map(OsString::from));
    git(&sides[0], &git_args).assert_success();
    let mut par_args = config_args(&config);
    let jobs = jobs.to_string();
    par_args.extend(["switch", "-j", jobs.as_str(), "-q", "other"].map(OsString::from));
    git_par(&sides[1], &par_args).assert_success();
    compare_worktrees(&sides[0], &sides[1]);
    compare_indexes(&sides[0], &sides[1], &config);
    let diff_files = |dir: &PathBuf| git_str(dir, ["diff-files", "--name-status"]);
    assert_eq!(diff_files(&sides[0]), diff_files(&sides[1]));
    assert_status_like_git(&sides[0], &sides[1], &config);
    assert_clean(&sides[1], &config);
}

#[test]
fn touched_encoded_files_are_unchanged_like_git_with_1_worker() {
    touched_encoded_files_are_unchanged_like_git(1);
}

#[test]
fn touched_encoded_files_are_unchanged_like_git_with_8_workers() {
    touched_encoded_files_are_unchanged_like_git(8);
}

/// Filtered files that sort after many ordinary ones, so that the scout hands them to the filter
/// threads long before the writers get there, while the writers may meet some of them first:
/// with 8 writers, the files, the index and the filter's smudges (each path once, the `*.d` ones
/// delayed) are git's.
#[test]
fn filtered_files_after_many_others_like_git() {
    let s = scratch();
    let src = s.join("src");
    git_ok(s.path(), ["init", "-q", src.to_str().unwrap()]);
    fs::write(
        src.join(".gitattributes"),
        "*.p filter=proc\n*.d filter=proc\n",
    )
    .unwrap();
    for i in 0..600 {
        let dir = src.join(format!("a/m{}", i % 20));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("t{i}.txt")), format!("plain {i}\n")).unwrap();
    }
    fs::create_dir_all(src.join("z")).unwrap();
    for i in 0..40 {
        let ext = if i % 2 == 0 { "p" } else { "d" };
        fs::write(
            src.join(format!("z/f{i}.{ext}")),
            format!("filtered file {i}\nThe quick brown fox\n"),
        )
        .unwrap();
    }
    let process = format!(
        "filter.proc.process=perl {}",
        fixtures_dir().join("rot13-process.pl").display()
    );
    let mut add = config_args(&[process]);
    add.extend(["add", "-A"].map(OsString::from));
    git_ok(&src, add);
    git_ok(
        &src,
        ["commit", "-q", "-m", "plain files, then filtered ones"],
    );
    let pair = Pair::of(s, &src);
    assert_both_succeed(&pair.run(&[], &["reset", "-q", "--hard"], 8));
    pair.assert_same(&[]);
    let smudges = pair.par.smudges();
    assert_eq!(smudges.len(), 40 + 20, "{smudges:#?}");
    assert!(
        smudges.iter().any(|l| l.ends_with("[DELAYED]")),
        "{smudges:#?}"
    );
    assert_eq!(pair.git.smudges(), smudges);
}
