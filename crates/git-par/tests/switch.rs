//! `git par switch`, `checkout`, `reset --hard` and `restore` against the same git commands, each run
//! on its own copy of the same repository in the same state: work trees, indexes (with real stat
//! data), HEAD, refs, reflogs, branch configuration, git's view of the result (`status`, `update-index
//! --refresh`, `diff-index`), exit codes and messages are compared. For refusals, the work tree and
//! the index must also be exactly as they were before the command (nothing written, nothing re-stat-ed
//! into the index).
//!
//! Fixtures: `tests/fixtures/make_switch_{types,history,local,symlink_dir}.sh`.

mod support;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use support::*;

/// Branches type-a / type-b (tag t-b) differing at every type change of git's t2080.
const TYPES: &str = "switch_types";
/// 21 generated commits h00 .. h20 with modifications, renames, deletions, additions, mode and type
/// changes.
const HISTORY: &str = "switch_history";
/// Branches main / other (tag v1) for switches with local changes.
const LOCAL: &str = "switch_local";
/// Branches link / dir: tracked symlinks `d` (to `../canary-dir`), `e` (to `real`), `f` (to
/// `../canary`) become directories.
const SYMLINK_DIR: &str = "switch_symlink_dir";

// ---------------------------------------------------------------------------------------------------
// Two copies of one repository: git's and git-par's

/// Two identical copies of a repository: `<scratch>/git/repo` for git (the oracle), `<scratch>/par/repo`
/// for git-par. Their indexes are refreshed after the copy (so they carry the copies' stat data).
struct Pair {
    _s: Scratch,
    by_git: PathBuf,
    by_par: PathBuf,
}

/// What one command did on both sides, and the `-c` options both sides were given.
struct Runs {
    git: Run,
    par: Run,
    config: Vec<String>,
}

/// The state of one side before a command that is expected to be refused.
struct Before {
    stats: BTreeMap<Vec<u8>, StatId>,
    index: Vec<u8>,
    head: Vec<(&'static str, String)>,
}

impl Pair {
    fn new(fixture: &str) -> Pair {
        Pair::from_repo(fixture_named(fixture))
    }

    fn from_repo(src: &Path) -> Pair {
        let s = scratch();
        let by_git = s.join("git/repo");
        let by_par = s.join("par/repo");
        copy_repo(src, &by_git);
        copy_repo(src, &by_par);
        let pair = Pair {
            _s: s,
            by_git,
            by_par,
        };
        for side in pair.sides() {
            git(side, ["update-index", "-q", "--refresh"]);
        }
        pair
    }

    fn sides(&self) -> [&Path; 2] {
        [&self.by_git, &self.by_par]
    }

    /// Runs real git with `args` on both sides, to bring them into the same starting state.
    #[track_caller]
    fn setup_git(&self, args: &[&str]) {
        for side in self.sides() {
            git(side, args).assert_success();
        }
    }

    /// Writes `bytes` to `path` (relative, parent directories created) in both work trees.
    fn write(&self, path: &str, bytes: &[u8]) {
        for side in self.sides() {
            let p = side.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, bytes).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
        }
    }

    /// Removes `path` (a file or a symlink) from both work trees.
    fn remove(&self, path: &str) {
        for side in self.sides() {
            let p = side.join(path);
            fs::remove_file(&p).unwrap_or_else(|e| panic!("remove {}: {e}", p.display()));
        }
    }

    /// Writes `.git/info/exclude` in both repositories.
    fn exclude(&self, patterns: &str) {
        for side in self.sides() {
            let info = side.join(".git/info");
            fs::create_dir_all(&info).unwrap();
            fs::write(info.join("exclude"), patterns).unwrap();
        }
    }

    /// `git [-c ...] CMD ARGS` in git's copy, `git-par [-c ...] CMD [-j N] ARGS` in git-par's; both
    /// are given the `-c` options of `settings` and `config`.
    fn run(&self, settings: Settings, config: &[&str], cmd: &str, args: &[&str]) -> Runs {
        self.run_in("", settings, config, cmd, args)
    }

    /// Like [`Pair::run`], from the subdirectory `subdir` of each work tree.
    fn run_in(
        &self,
        subdir: &str,
        settings: Settings,
        config: &[&str],
        cmd: &str,
        args: &[&str],
    ) -> Runs {
        let (config, git_args, par_args) = command_lines(settings, config, cmd, args);
        Runs {
            git: git(&self.by_git.join(subdir), git_args),
            par: git_par(&self.by_par.join(subdir), par_args),
            config,
        }
    }

    fn before(&self) -> [Before; 2] {
        self.sides().map(|side| Before {
            stats: stat_snapshot(side),
            index: fs::read(side.join(".git/index")).expect("read .git/index"),
            head: head_state(side),
        })
    }
}

/// The `-c` options of `settings` and `config`, and the argument lists of `git` and of
/// `git-par` for `cmd args` with them.
fn command_lines(
    settings: Settings,
    config: &[&str],
    cmd: &str,
    args: &[&str],
) -> (Vec<String>, Vec<OsString>, Vec<OsString>) {
    let mut all_config: Vec<String> = config.iter().map(|c| (*c).to_owned()).collect();
    all_config.extend(settings.config());
    let mut git_args = config_args(&all_config);
    git_args.push(cmd.into());
    git_args.extend(args.iter().map(OsString::from));
    let mut par_args = config_args(&all_config);
    par_args.push(cmd.into());
    par_args.extend(settings.subcommand_args());
    par_args.extend(args.iter().map(OsString::from));
    (all_config, git_args, par_args)
}

fn opt(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    if out.success() {
        out.stdout_str().trim_end_matches('\n').to_owned()
    } else {
        format!("<exit {:?}>", out.status.code())
    }
}

/// The reflog file of `refname` (`.git/logs/<refname>`), one `OLD NEW\tMESSAGE` line per entry: the
/// identity and the time stamp left out.
fn reflog_entries(dir: &Path, refname: &str) -> String {
    let Ok(text) = fs::read_to_string(dir.join(".git/logs").join(refname)) else {
        return format!("<no reflog for {refname}>");
    };
    text.lines()
        .map(|line| {
            let (head, message) = line.split_once('\t').unwrap_or((line, ""));
            let ids: Vec<&str> = head.splitn(3, ' ').take(2).collect();
            format!("{}\t{message}", ids.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// HEAD (symbolic or detached), the commit it names, the reflogs of HEAD and of its branch (messages,
/// old and new ids), every ref with its upstream, and the branch configuration.
fn head_state(dir: &Path) -> Vec<(&'static str, String)> {
    let head_ref = opt(dir, &["symbolic-ref", "-q", "HEAD"]);
    let branch_reflog = if head_ref.starts_with("refs/heads/") {
        reflog_entries(dir, &head_ref)
    } else {
        String::new()
    };
    vec![
        ("symbolic-ref -q HEAD", head_ref),
        ("rev-parse HEAD", opt(dir, &["rev-parse", "HEAD"])),
        (
            "reflog -1 --format=%gs HEAD",
            opt(dir, &["reflog", "-1", "--format=%gs", "HEAD", "--"]),
        ),
        (
            "reflog of HEAD (old new message)",
            reflog_entries(dir, "HEAD"),
        ),
        ("reflog of HEAD's branch (old new message)", branch_reflog),
        (
            "for-each-ref",
            opt(
                dir,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname) %(upstream)",
                ],
            ),
        ),
        (
            "branch config",
            opt(dir, &["config", "--get-regexp", r"^branch\."]),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------------
// Comparisons

/// The differences found by one comparison, collected so that a test reports all of them at once
/// (a difference in the reflog does not hide one in the work tree).
#[derive(Default)]
struct Differences(Vec<String>);

impl Differences {
    /// Runs `check` (an assertion); records its panic message, if any, under `what`.
    fn check(&mut self, what: &str, check: impl FnOnce()) {
        if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)) {
            let message = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|m| (*m).to_owned()))
                .unwrap_or_else(|| "<panic without a message>".to_owned());
            self.0.push(format!("[{what}] {message}"));
        }
    }

    #[track_caller]
    fn assert_none(self, runs: &Runs) {
        assert!(
            self.0.is_empty(),
            "git-par differs from git in {} way(s):\n\n{}\n\n--- git ran:\n{}\n--- git-par ran:\n{}",
            self.0.len(),
            self.0.join("\n\n"),
            runs.git.describe(),
            runs.par.describe()
        );
    }
}

/// Panics unless the labelled values `expected` and `actual` are equal, showing only the labels, and
/// in multi-line values only the lines, that differ.
#[track_caller]
fn assert_same_labelled(
    expected: &[(&'static str, String)],
    actual: &[(&'static str, String)],
    names: (&str, &str),
    what: &str,
) {
    let mut diffs = Vec::new();
    for ((label, a), (_, b)) in expected.iter().zip(actual) {
        if a == b {
            continue;
        }
        diffs.push(format!("{label}:"));
        let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
        for i in 0..la.len().max(lb.len()) {
            let (x, y) = (la.get(i), lb.get(i));
            if x != y {
                diffs.push(format!(
                    "  line {}:\n    {:<8} {x:?}\n    {:<8} {y:?}",
                    i + 1,
                    names.0,
                    names.1
                ));
            }
        }
    }
    assert!(diffs.is_empty(), "{what}:\n{}", diffs.join("\n"));
}

/// Panics unless git succeeded, git-par succeeded, and git-par left what git left: work tree, index,
/// real stat data in the index, HEAD / refs / reflogs / branch config, git's view of the result, and
/// the same messages. Reports every difference found.
#[track_caller]
fn assert_same_success(pair: &Pair, runs: &Runs) {
    assert!(
        runs.git.success(),
        "the oracle failed (the test is wrong): {}",
        runs.git.describe()
    );
    assert!(
        runs.par.success(),
        "git-par failed where git succeeded:\n{}\n--- git did:\n{}",
        runs.par.describe(),
        runs.git.describe()
    );
    let (g, p, config) = (&pair.by_git, &pair.by_par, &runs.config);
    let mut d = Differences::default();
    d.check("work tree", || compare_worktrees(g, p));
    d.check("index", || compare_indexes(g, p, config));
    // Before anything that refreshes the index.
    d.check("stat data", || assert_real_stat_like_git(g, p, config));
    d.check("index.lock", || {
        assert!(
            !p.join(".git/index.lock").exists(),
            "git-par left index.lock"
        )
    });
    d.check("HEAD", || {
        assert_same_labelled(
            &head_state(g),
            &head_state(p),
            ("git:", "git-par:"),
            "HEAD, refs, reflogs or branch config differ",
        )
    });
    d.check("status", || assert_status_like_git(g, p, config));
    d.check("messages", || assert_same_messages(runs));
    d.assert_none(runs);
}

/// Panics unless git-par exited with git's code and printed git's messages, byte for byte.
#[track_caller]
fn assert_same_messages(runs: &Runs) {
    assert_eq!(
        runs.git.status.code(),
        runs.par.status.code(),
        "exit codes differ (left: git, right: git-par)"
    );
    assert_eq!(
        runs.git.stderr_str(),
        runs.par.stderr_str(),
        "standard error differs (left: git, right: git-par)"
    );
    assert_eq!(
        runs.git.stdout_str(),
        runs.par.stdout_str(),
        "standard output differs (left: git, right: git-par)"
    );
}

/// Panics unless git refused, git-par refused with the same exit code and messages, and neither
/// changed anything: work tree (every path's stat data), `.git/index` (byte for byte), HEAD, refs and
/// reflogs are as they were in `before`. Reports every difference found.
#[track_caller]
fn assert_same_refusal(pair: &Pair, before: &[Before; 2], runs: &Runs) {
    assert!(
        !runs.git.success(),
        "the oracle succeeded (the test is wrong): {}",
        runs.git.describe()
    );
    assert!(
        !runs.par.success(),
        "git-par succeeded where git refused:\n{}\n--- git did:\n{}",
        runs.par.describe(),
        runs.git.describe()
    );
    let mut d = Differences::default();
    for ((side, b), who) in pair.sides().into_iter().zip(before).zip(["git", "git-par"]) {
        d.check(&format!("{who}: work tree untouched"), || {
            assert_stat_unchanged(&b.stats, side, who)
        });
        d.check(&format!("{who}: index untouched"), || {
            assert!(
                fs::read(side.join(".git/index")).expect("read .git/index") == b.index,
                "{who} rewrote .git/index although it refused"
            );
            assert!(
                !side.join(".git/index.lock").exists(),
                "{who} left index.lock"
            );
        });
        d.check(&format!("{who}: HEAD untouched"), || {
            assert_same_labelled(
                &b.head,
                &head_state(side),
                ("before:", "after:"),
                &format!("{who} changed HEAD, refs, reflogs or branch config although it refused"),
            )
        });
    }
    d.check("messages", || assert_same_messages(runs));
    d.check("work tree", || {
        compare_worktrees(&pair.by_git, &pair.by_par)
    });
    d.check("index", || {
        compare_indexes(&pair.by_git, &pair.by_par, &runs.config)
    });
    d.assert_none(runs);
}

/// On a fresh pair of `fixture`: the same git setup commands on both sides, then `cmd args` by git and
/// by git-par, which must both succeed and leave the same result.
fn same_success(fixture: &str, setup: &[&[&str]], settings: Settings, cmd: &str, args: &[&str]) {
    let pair = Pair::new(fixture);
    for s in setup {
        pair.setup_git(s);
    }
    let runs = pair.run(settings, &[], cmd, args);
    assert_same_success(&pair, &runs);
}

// ---------------------------------------------------------------------------------------------------
// 1. The type-change matrix (git's t2080)

fn type_matrix(from: &str, to: &str, settings: Settings) {
    let setup: &[&[&str]] = if from == "type-a" {
        &[]
    } else {
        &[&["switch", "-q", from]]
    };
    same_success(TYPES, setup, settings, "switch", &[to]);
}

#[test]
fn switch_type_matrix_a_to_b_with_1_worker_matches_git() {
    type_matrix("type-a", "type-b", Settings::Jobs(1));
}

#[test]
fn switch_type_matrix_b_to_a_with_1_worker_matches_git() {
    type_matrix("type-b", "type-a", Settings::Jobs(1));
}

#[test]
fn switch_type_matrix_a_to_b_with_8_workers_matches_git() {
    type_matrix("type-a", "type-b", Settings::Jobs(8));
}

#[test]
fn switch_type_matrix_b_to_a_with_8_workers_matches_git() {
    type_matrix("type-b", "type-a", Settings::Jobs(8));
}

#[test]
fn switch_type_matrix_a_to_b_with_default_settings_matches_git() {
    type_matrix("type-a", "type-b", Settings::Default);
}

#[test]
fn switch_type_matrix_b_to_a_with_default_settings_matches_git() {
    type_matrix("type-b", "type-a", Settings::Default);
}

#[test]
fn checkout_type_matrix_there_and_back_with_2_workers_matches_git() {
    let pair = Pair::new(TYPES);
    for target in ["type-b", "type-a"] {
        let runs = pair.run(Settings::Jobs(2), &[], "checkout", &[target]);
        assert_same_success(&pair, &runs);
    }
}

#[test]
fn switch_detach_to_a_tag_across_the_type_matrix_and_back_to_a_branch_matches_git() {
    let pair = Pair::new(TYPES);
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["--detach", "t-b"]);
    assert_same_success(&pair, &runs);
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["type-a"]);
    assert_same_success(&pair, &runs);
}

// ---------------------------------------------------------------------------------------------------
// 2. Random commit pairs of a generated history

/// The commits h00 .. h20 visited in turn: both extremes, then a seeded pseudo-random walk, so every
/// step switches between a different pair of commits, in both directions over the walk.
fn history_walk() -> Vec<String> {
    let mut seed: u64 = 0x5eed_2080;
    let mut walk = vec![20_u64, 0];
    while walk.len() < 14 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let next = (seed >> 33) % 21;
        if Some(&next) != walk.last() {
            walk.push(next);
        }
    }
    walk.into_iter().map(|n| format!("h{n:02}")).collect()
}

fn history_pairs(cmd: &str, settings: Settings) {
    let pair = Pair::new(HISTORY);
    pair.setup_git(&["switch", "-q", "--detach", "h00"]);
    let mut from = "h00".to_owned();
    for to in history_walk() {
        eprintln!("{cmd} {from} -> {to}");
        let runs = if cmd == "switch" {
            pair.run(settings, &[], "switch", &["--detach", &to])
        } else {
            pair.run(settings, &[], cmd, &[&to])
        };
        assert_same_success(&pair, &runs);
        from = to;
    }
}

#[test]
fn switch_between_random_commit_pairs_with_1_worker_matches_git() {
    history_pairs("switch", Settings::Jobs(1));
}

#[test]
fn switch_between_random_commit_pairs_with_8_workers_matches_git() {
    history_pairs("switch", Settings::Jobs(8));
}

#[test]
fn checkout_between_random_commit_pairs_with_default_settings_matches_git() {
    history_pairs("checkout", Settings::Default);
}

// ---------------------------------------------------------------------------------------------------
// 3. Local modifications and untracked blockers

/// Local changes to files the switch changes (changed.txt, changed-too.txt) and to one it does not
/// touch (same.txt), plus an untracked file that is not in the way.
fn modify_tracked_files(pair: &Pair) {
    pair.write("changed.txt", b"local change\n");
    pair.write("changed-too.txt", b"another local change\n");
    pair.write("same.txt", b"local change of an untouched file\n");
    pair.write("untracked.txt", b"untracked, not in the way\n");
}

fn refuses_modified_files(cmd: &str, settings: Settings) {
    let pair = Pair::new(LOCAL);
    modify_tracked_files(&pair);
    let before = pair.before();
    let runs = pair.run(settings, &[], cmd, &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_refuses_to_overwrite_modified_files_with_8_workers_and_leaves_everything_untouched_like_git(
) {
    refuses_modified_files("switch", Settings::Jobs(8));
}

#[test]
fn switch_refuses_to_overwrite_modified_files_with_1_worker_and_leaves_everything_untouched_like_git(
) {
    refuses_modified_files("switch", Settings::Jobs(1));
}

#[test]
fn checkout_refuses_to_overwrite_modified_files_like_git() {
    refuses_modified_files("checkout", Settings::Jobs(8));
}

#[test]
fn switch_refuses_a_modified_file_in_a_directory_the_target_replaces_with_a_file_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("dir-becomes-file/a.txt", b"local change\n");
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

/// A staged new file in a directory the target turns into a file: git switches and deletes the
/// staged file without a word (t1092's "checkout behaves oddly with df-conflict-1/2",
/// documented there as git's NEEDSWORK); git-par refuses, as for any local change the switch
/// would overwrite, and changes nothing: keeping the entry would leave `dir` and `dir/x` both
/// in the index.
#[test]
fn switch_refuses_a_staged_new_file_in_a_directory_the_target_replaces_with_a_file() {
    let pair = Pair::new(LOCAL);
    pair.write("dir-becomes-file/new.txt", b"staged, in neither commit\n");
    pair.setup_git(&["add", "dir-becomes-file/new.txt"]);
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    // What git does, so that this test notices if git ever changes: it succeeds and the staged
    // file is gone from the index and from the disk.
    runs.git.assert_success();
    assert!(!git_str(&pair.by_git, ["ls-files"]).contains("dir-becomes-file/new.txt"));
    assert!(pair.by_git.join("dir-becomes-file").is_file());
    assert_eq!(runs.par.status.code(), Some(1), "{}", runs.par.describe());
    assert_eq!(
        runs.par.stderr_str(),
        "error: Your local changes to the following files would be overwritten by checkout:\n\
         \tdir-becomes-file/new.txt\n\
         Please commit your changes or stash them before you switch branches.\n\
         Aborting\n"
    );
    let b = &before[1];
    assert_stat_unchanged(&b.stats, &pair.by_par, "git-par");
    assert!(fs::read(pair.by_par.join(".git/index")).unwrap() == b.index);
    assert_same_labelled(
        &b.head,
        &head_state(&pair.by_par),
        ("before:", "after:"),
        "git-par moved HEAD although it refused",
    );
    assert_eq!(
        git_str(&pair.by_par, ["status", "--porcelain"]).trim_end(),
        "A  dir-becomes-file/new.txt"
    );
}

#[test]
fn switch_carries_over_modifications_of_paths_the_switch_does_not_touch_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("same.txt", b"local change of an untouched file\n");
    pair.write("untouched/deep/file.txt", b"deep local change\n");
    pair.write("untracked.txt", b"untracked, not in the way\n");
    pair.write("new-untracked-dir/file", b"untracked directory\n");
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_success(&pair, &runs);
    // And back: the modifications travel again.
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["main"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_refuses_untracked_files_at_paths_the_target_adds_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("added-on-other.txt", b"untracked, in the way\n");
    pair.write("new-dir/sub/added.txt", b"untracked, in the way, nested\n");
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_refuses_an_untracked_file_even_with_the_target_content_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("added-on-other.txt", b"added on other\n");
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_refuses_an_untracked_directory_at_a_path_where_the_target_adds_a_file_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("added-on-other.txt/inner", b"untracked, in the way\n");
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_refuses_an_untracked_file_inside_a_directory_the_target_replaces_with_a_file_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write(
        "dir-becomes-file/untracked.txt",
        b"untracked, would be lost\n",
    );
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_keeps_an_untracked_file_inside_a_directory_the_target_removes_like_git() {
    let pair = Pair::new(LOCAL);
    pair.setup_git(&["switch", "-q", "other"]);
    // main has no new-dir at all: git removes the tracked file and keeps the directories that still
    // hold the untracked one.
    pair.write("new-dir/sub/mine.txt", b"untracked, must survive\n");
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["main"]);
    assert_same_success(&pair, &runs);
    assert_eq!(
        fs::read(pair.by_par.join("new-dir/sub/mine.txt")).unwrap(),
        b"untracked, must survive\n"
    );
}

#[test]
fn switch_overwrites_an_ignored_file_in_the_way_like_git() {
    let pair = Pair::new(LOCAL);
    pair.exclude("added-on-other.txt\n*.ign\n");
    pair.write("added-on-other.txt", b"ignored, in the way\n");
    pair.write("kept.ign", b"ignored, not in the way\n");
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_refuses_a_staged_change_to_a_path_the_switch_changes_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"staged change\n");
    pair.setup_git(&["add", "changed.txt"]);
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_refuses_a_staged_new_file_at_a_path_the_target_adds_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("added-on-other.txt", b"staged, different from other's\n");
    pair.setup_git(&["add", "added-on-other.txt"]);
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_carries_over_staged_changes_to_paths_the_switch_does_not_touch_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("same.txt", b"staged change of an untouched file\n");
    pair.write("staged-new.txt", b"staged new file\n");
    pair.setup_git(&["add", "same.txt", "staged-new.txt"]);
    pair.setup_git(&["rm", "-q", "same-too.txt"]);
    pair.write("same.txt", b"staged, then changed again\n");
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_accepts_a_staged_change_equal_to_the_target_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"changed on other\n");
    pair.write("added-on-other.txt", b"added on other\n");
    pair.setup_git(&["add", "changed.txt", "added-on-other.txt"]);
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_force_discards_local_changes_and_keeps_untracked_files_not_in_the_way_like_git() {
    let pair = Pair::new(LOCAL);
    modify_tracked_files(&pair);
    pair.write("staged-new.txt", b"staged new file\n");
    pair.setup_git(&["add", "staged-new.txt"]);
    pair.write("added-on-other.txt", b"untracked, in the way\n");
    pair.write(
        "untracked-dir/deep/file",
        b"untracked directory, not in the way\n",
    );
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["-f", "other"]);
    assert_same_success(&pair, &runs);
    for kept in ["untracked.txt", "untracked-dir/deep/file"] {
        assert!(
            pair.by_par.join(kept).is_file(),
            "git-par switch -f removed the untracked {kept}"
        );
    }
}

#[test]
fn checkout_force_over_an_untracked_file_inside_a_directory_the_target_replaces_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.write("dir-becomes-file/untracked.txt", b"untracked\n");
    pair.write("changed.txt", b"local change\n");
    let runs = pair.run(Settings::Jobs(8), &[], "checkout", &["-f", "other"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_with_files_deleted_from_the_work_tree_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.remove("changed.txt"); // the switch changes it
    pair.remove("same.txt"); // the switch does not touch it: the deletion is carried over
    pair.remove("removed-on-other.txt"); // the switch removes it
    let runs = pair.run(Settings::Jobs(8), &[], "switch", &["other"]);
    assert_same_success(&pair, &runs);
}

/// Rewrites `path` in place (same inode, same size) with `new`, and gives it back the mtime the index
/// records for it; then sets the index file's mtime to that same time, so the entry is racily clean:
/// with `core.trustctime=false` only a re-hash can tell the file changed.
fn make_racily_modified(dir: &Path, path: &str, new: &[u8]) {
    let entry = index_entries(dir, &[])
        .into_iter()
        .find(|e| e.path == path.as_bytes())
        .unwrap_or_else(|| panic!("{path} is not in the index"));
    let file = dir.join(path);
    assert_eq!(
        fs::metadata(&file).unwrap().len(),
        new.len() as u64,
        "the racy change must keep the size"
    );
    let when = UNIX_EPOCH + Duration::new(u64::from(entry.mtime.0), entry.mtime.1);
    let mut f = fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.write_all(new).unwrap();
    f.set_modified(when).unwrap();
    drop(f);
    fs::OpenOptions::new()
        .write(true)
        .open(dir.join(".git/index"))
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn switch_refuses_a_racily_clean_modification_found_by_rehashing_like_git() {
    let pair = Pair::new(LOCAL);
    for side in pair.sides() {
        // "changed on main\n" -> same length, other bytes.
        make_racily_modified(side, "changed.txt", b"CHANGED ON MAIN\n");
    }
    let before = pair.before();
    let runs = pair.run(
        Settings::Jobs(8),
        &["core.trustctime=false"],
        "switch",
        &["other"],
    );
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_carries_over_a_racily_clean_modification_like_git() {
    let pair = Pair::new(LOCAL);
    for side in pair.sides() {
        make_racily_modified(side, "same.txt", b"SAME ON BOTH\n");
    }
    let runs = pair.run(
        Settings::Jobs(8),
        &["core.trustctime=false"],
        "switch",
        &["other"],
    );
    assert_same_success(&pair, &runs);
}

// ---------------------------------------------------------------------------------------------------
// 4. reset --hard

/// Local changes of every kind reset --hard deals with: modified, deleted, staged modification,
/// staged new file (removed by reset --hard), staged deletion, untracked files (kept).
fn make_a_mess(pair: &Pair) {
    modify_tracked_files(pair);
    pair.remove("removed-on-other.txt");
    pair.write("staged-new.txt", b"staged new file\n");
    pair.write("staged-dir/deep/new.txt", b"staged new file, nested\n");
    pair.write("untouched/deep/file.txt", b"staged modification\n");
    pair.setup_git(&[
        "add",
        "staged-new.txt",
        "staged-dir",
        "untouched/deep/file.txt",
    ]);
    pair.setup_git(&["rm", "-q", "same-too.txt"]);
    pair.write("untracked-dir/file", b"untracked directory\n");
}

#[test]
fn reset_hard_to_head_discards_local_changes_and_staged_additions_like_git() {
    let pair = Pair::new(LOCAL);
    make_a_mess(&pair);
    let runs = pair.run(Settings::Jobs(8), &[], "reset", &["--hard"]);
    assert_same_success(&pair, &runs);
    assert!(
        !pair.by_par.join("staged-new.txt").exists(),
        "reset --hard kept a file only added to the index"
    );
}

#[test]
fn reset_hard_to_head_with_1_worker_and_default_settings_matches_git() {
    for settings in [Settings::Jobs(1), Settings::Default] {
        let pair = Pair::new(LOCAL);
        make_a_mess(&pair);
        let runs = pair.run(settings, &[], "reset", &["--hard", "HEAD"]);
        assert_same_success(&pair, &runs);
    }
}

#[test]
fn reset_hard_to_another_commit_moves_the_branch_like_git() {
    let pair = Pair::new(LOCAL);
    make_a_mess(&pair);
    let runs = pair.run(Settings::Jobs(8), &[], "reset", &["--hard", "other"]);
    assert_same_success(&pair, &runs);
    assert_eq!(
        git_str(&pair.by_par, ["rev-parse", "main"]),
        git_str(&pair.by_par, ["rev-parse", "other"]),
        "reset --hard did not move the branch"
    );
}

#[test]
fn reset_hard_across_the_type_matrix_and_back_matches_git() {
    let pair = Pair::new(TYPES);
    let a = git_str(&pair.by_git, ["rev-parse", "type-a"]);
    let runs = pair.run(Settings::Jobs(8), &[], "reset", &["--hard", "type-b"]);
    assert_same_success(&pair, &runs);
    let runs = pair.run(Settings::Jobs(8), &[], "reset", &["-q", "--hard", &a]);
    assert_same_success(&pair, &runs);
}

#[test]
fn reset_hard_over_untracked_files_in_the_way_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.write("added-on-other.txt", b"untracked, in the way\n");
    pair.write(
        "dir-becomes-file/untracked.txt",
        b"untracked, in a directory that goes\n",
    );
    pair.write("untracked.txt", b"untracked, not in the way\n");
    let runs = pair.run(Settings::Jobs(8), &[], "reset", &["--hard", "other"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn reset_hard_on_a_detached_head_matches_git() {
    let pair = Pair::new(HISTORY);
    pair.setup_git(&["switch", "-q", "--detach", "h10"]);
    pair.write("d0/s0/f1.txt", b"local change\n");
    let runs = pair.run(Settings::Jobs(8), &[], "reset", &["--hard", "h03"]);
    assert_same_success(&pair, &runs);
}

// ---------------------------------------------------------------------------------------------------
// 5. Paths: checkout [REV] -- PATHSPEC, restore

#[test]
fn checkout_rev_with_paths_takes_them_from_the_commit_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("same.txt", b"local change elsewhere\n");
    pair.write("changed.txt", b"local change, overwritten\n");
    let runs = pair.run(
        Settings::Jobs(8),
        &[],
        "checkout",
        &[
            "other",
            "--",
            "changed.txt",
            "new-dir",
            "file-becomes-dir",
            "exec-flip.sh",
        ],
    );
    assert_same_success(&pair, &runs);
}

#[test]
fn checkout_rev_with_paths_across_the_type_matrix_matches_git() {
    let pair = Pair::new(TYPES);
    let runs = pair.run(Settings::Jobs(8), &[], "checkout", &["type-b", "--", "."]);
    assert_same_success(&pair, &runs);
}

#[test]
fn checkout_paths_from_the_index_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"local change\n");
    pair.write("same.txt", b"staged change\n");
    pair.setup_git(&["add", "same.txt"]);
    pair.write("same.txt", b"staged, then changed again\n");
    pair.remove("changed-too.txt");
    pair.write("untouched/deep/file.txt", b"not restored\n");
    let runs = pair.run(
        Settings::Jobs(2),
        &[],
        "checkout",
        &["--", "changed.txt", "same.txt", "changed-too.txt"],
    );
    assert_same_success(&pair, &runs);
}

#[test]
fn restore_restores_work_tree_files_from_the_index_like_git() {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"local change\n");
    pair.write("same.txt", b"staged change\n");
    pair.setup_git(&["add", "same.txt"]);
    pair.write("same.txt", b"staged, then changed again\n");
    pair.remove("dir-becomes-file/a.txt");
    pair.write("untouched/deep/file.txt", b"not restored\n");
    let runs = pair.run(
        Settings::Jobs(2),
        &[],
        "restore",
        &["changed.txt", "same.txt", "dir-becomes-file"],
    );
    assert_same_success(&pair, &runs);
}

#[test]
fn restore_source_staged_worktree_of_directories_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.write("dir-becomes-file/a.txt", b"local change, discarded\n");
    let runs = pair.run(
        Settings::Jobs(8),
        &[],
        "restore",
        &[
            "--source",
            "other",
            "--staged",
            "--worktree",
            "dir-becomes-file",
            "new-dir",
            "file-becomes-dir",
            "removed-on-other.txt",
        ],
    );
    assert_same_success(&pair, &runs);
}

#[test]
fn restore_source_staged_worktree_across_the_type_matrix_matches_git() {
    let pair = Pair::new(TYPES);
    let runs = pair.run(
        Settings::Jobs(8),
        &[],
        "restore",
        &["--source", "type-b", "--staged", "--worktree", "."],
    );
    assert_same_success(&pair, &runs);
}

#[test]
fn restore_staged_only_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"staged change\n");
    pair.write("staged-new.txt", b"staged new file\n");
    pair.setup_git(&["add", "changed.txt", "staged-new.txt"]);
    let runs = pair.run(
        Settings::Jobs(2),
        &[],
        "restore",
        &["--staged", "changed.txt", "staged-new.txt"],
    );
    assert_same_success(&pair, &runs);
}

#[test]
fn restore_with_a_wildcard_pathspec_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"local change\n");
    pair.write("untouched/deep/file.txt", b"deep local change\n");
    pair.write("exec-flip.sh", b"not a .txt: kept\n");
    let runs = pair.run(Settings::Jobs(2), &[], "restore", &["*.txt"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn restore_from_a_subdirectory_with_a_relative_path_matches_git() {
    let pair = Pair::new(LOCAL);
    pair.write("untouched/deep/file.txt", b"deep local change\n");
    pair.write("changed.txt", b"outside the subdirectory: kept\n");
    let runs = pair.run_in(
        "untouched",
        Settings::Jobs(2),
        &[],
        "restore",
        &["deep/file.txt"],
    );
    assert_same_success(&pair, &runs);
}

/// The index a command left on `side`, copied before anything else reads or rewrites it.
fn index_snapshot(side: &Path) -> PathBuf {
    let snapshot = side.join(".git/index.after-command");
    fs::copy(side.join(".git/index"), &snapshot).expect("copy .git/index");
    snapshot
}

/// `git write-tree` in `side` over the index file `index` (`GIT_INDEX_FILE`): it trusts the
/// cache-tree wherever that is valid, so a wrong cache-tree shows as a different tree.
fn write_tree_over(side: &Path, index: &Path) -> String {
    let mut cmd = std::process::Command::new("git");
    clean_env(&mut cmd)
        .current_dir(side)
        .env("GIT_INDEX_FILE", index)
        .arg("write-tree");
    let out = cmd.output().expect("run git write-tree");
    assert!(
        out.status.success(),
        "git write-tree over {} failed: {}",
        index.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// The local fixture with a version 4 index that carries a complete cache-tree, on both sides.
fn pair_with_a_v4_index_and_a_cache_tree() -> Pair {
    let pair = Pair::new(LOCAL);
    pair.setup_git(&["update-index", "--index-version", "4"]);
    pair.setup_git(&["write-tree"]);
    pair
}

/// After `cmd args` by git and by git-par: the same result, the index version and the presence of
/// a cache-tree as in git's index, and `git write-tree` over each index as the command left it
/// names the same tree (the index is recorded as git records it, extensions included, not
/// rewritten bare).
fn same_write_tree(pair: &Pair, cmd: &str, args: &[&str]) {
    let runs = pair.run(Settings::Jobs(2), &[], cmd, args);
    let [theirs, ours] = pair.sides().map(index_snapshot);
    assert_same_success(pair, &runs);
    let read = |path: &Path| {
        gix::index::File::at(path, gix::hash::Kind::Sha1, false, Default::default())
            .expect("gix reads the index")
    };
    let (their_index, our_index) = (read(&theirs), read(&ours));
    assert_eq!(
        our_index.version(),
        their_index.version(),
        "index version (left: git-par, right: git)"
    );
    assert_eq!(
        our_index.tree().is_some(),
        their_index.tree().is_some(),
        "a cache-tree in the index (left: git-par, right: git)"
    );
    assert_eq!(
        write_tree_over(&pair.by_par, &ours),
        write_tree_over(&pair.by_git, &theirs),
        "git write-tree after `{cmd} {}` (left: git-par, right: git)",
        args.join(" ")
    );
}

#[test]
fn restore_staged_records_the_index_git_records_and_write_tree_agrees() {
    let pair = pair_with_a_v4_index_and_a_cache_tree();
    pair.write("changed.txt", b"staged change\n");
    pair.write("staged-new.txt", b"staged new file\n");
    pair.setup_git(&["add", "changed.txt", "staged-new.txt"]);
    same_write_tree(
        &pair,
        "restore",
        &["--staged", "changed.txt", "staged-new.txt"],
    );
}

#[test]
fn restore_source_staged_records_the_index_git_records_and_write_tree_agrees() {
    same_write_tree(
        &pair_with_a_v4_index_and_a_cache_tree(),
        "restore",
        &[
            "--source",
            "other",
            "--staged",
            "dir-becomes-file",
            "new-dir",
            "removed-on-other.txt",
        ],
    );
}

#[test]
fn checkout_rev_with_paths_records_the_index_git_records_and_write_tree_agrees() {
    same_write_tree(
        &pair_with_a_v4_index_and_a_cache_tree(),
        "checkout",
        &["other", "--", "changed.txt", "new-dir", "file-becomes-dir"],
    );
}

fn pathspec_matching_nothing(cmd: &str, args: &[&str]) {
    let pair = Pair::new(LOCAL);
    pair.write("changed.txt", b"local change, must survive\n");
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(2), &[], cmd, args);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn restore_of_a_pathspec_matching_nothing_fails_like_git() {
    pathspec_matching_nothing("restore", &["no-such-path"]);
}

#[test]
fn restore_of_a_matching_and_a_non_matching_pathspec_fails_like_git_and_restores_nothing() {
    pathspec_matching_nothing("restore", &["changed.txt", "no-such-path"]);
}

#[test]
fn restore_source_of_a_pathspec_matching_nothing_fails_like_git() {
    pathspec_matching_nothing("restore", &["--source", "other", "no-such-path"]);
}

#[test]
fn checkout_of_a_pathspec_matching_nothing_fails_like_git() {
    pathspec_matching_nothing("checkout", &["--", "no-such-path"]);
}

#[test]
fn checkout_rev_of_a_pathspec_matching_nothing_fails_like_git() {
    pathspec_matching_nothing("checkout", &["other", "--", "no-such-path"]);
}

// ---------------------------------------------------------------------------------------------------
// 6. Branches: create, detach, DWIM of a remote-tracking branch, refusals

#[test]
fn switch_create_a_branch_at_a_start_point_matches_git() {
    same_success(
        LOCAL,
        &[],
        Settings::Jobs(8),
        "switch",
        &["-c", "topic", "other"],
    );
}

#[test]
fn switch_create_a_branch_at_head_matches_git() {
    same_success(LOCAL, &[], Settings::Jobs(8), "switch", &["-c", "topic"]);
}

#[test]
fn checkout_b_creates_a_branch_like_git() {
    same_success(
        LOCAL,
        &[],
        Settings::Jobs(8),
        "checkout",
        &["-b", "topic", "other"],
    );
}

#[test]
fn switch_detach_to_an_annotated_tag_matches_git() {
    same_success(
        LOCAL,
        &[&["switch", "-q", "other"]],
        Settings::Jobs(8),
        "switch",
        &["--detach", "v1"],
    );
}

#[test]
fn checkout_detach_matches_git() {
    same_success(
        LOCAL,
        &[],
        Settings::Jobs(8),
        "checkout",
        &["--detach", "other"],
    );
}

#[test]
fn switch_to_the_current_branch_matches_git() {
    same_success(LOCAL, &[], Settings::Jobs(8), "switch", &["main"]);
}

#[test]
fn switch_quiet_matches_git() {
    same_success(LOCAL, &[], Settings::Jobs(8), "switch", &["-q", "other"]);
}

/// A clone of the local fixture: `other` exists only as `origin/other`.
fn dwim(cmd: &str) {
    let s = scratch();
    let clone = s.join("clone");
    let opts = CloneOpts {
        quiet: true,
        ..CloneOpts::default()
    };
    git_clone(s.path(), &opts, fixture_named(LOCAL), &clone).assert_success();
    assert!(!git(&clone, ["rev-parse", "--verify", "-q", "refs/heads/other"]).success());
    let pair = Pair::from_repo(&clone);
    let runs = pair.run(Settings::Jobs(8), &[], cmd, &["other"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_to_a_name_only_a_remote_tracking_branch_has_creates_a_tracking_branch_like_git() {
    dwim("switch");
}

#[test]
fn checkout_of_a_name_only_a_remote_tracking_branch_has_creates_a_tracking_branch_like_git() {
    dwim("checkout");
}

/// In a clone, switching back to `main` (which tracks `origin/main`) reports how the branch stands
/// against its upstream, as git does: up to date, and ahead after a local commit.
fn tracking(cmd: &str, ahead: bool) {
    let s = scratch();
    let clone = s.join("clone");
    let opts = CloneOpts {
        quiet: true,
        ..CloneOpts::default()
    };
    git_clone(s.path(), &opts, fixture_named(LOCAL), &clone).assert_success();
    if ahead {
        git_ok(&clone, ["commit", "-q", "--allow-empty", "-m", "local"]);
    }
    git_ok(&clone, ["switch", "-q", "--detach"]);
    let pair = Pair::from_repo(&clone);
    let runs = pair.run(Settings::Jobs(8), &[], cmd, &["main"]);
    assert_same_success(&pair, &runs);
}

#[test]
fn switch_to_a_branch_up_to_date_with_its_upstream_says_so_like_git() {
    tracking("switch", false);
}

#[test]
fn checkout_of_a_branch_ahead_of_its_upstream_says_so_like_git() {
    tracking("checkout", true);
}

fn refused_without_change(args: &[&str]) {
    let pair = Pair::new(LOCAL);
    let before = pair.before();
    let runs = pair.run(Settings::Jobs(8), &[], "switch", args);
    assert_same_refusal(&pair, &before, &runs);
}

#[test]
fn switch_to_a_tag_without_detach_is_refused_like_git() {
    refused_without_change(&["v1"]);
}

#[test]
fn switch_to_an_unknown_name_fails_like_git() {
    refused_without_change(&["no-such-branch"]);
}

#[test]
fn switch_create_of_an_existing_branch_fails_like_git() {
    refused_without_change(&["-c", "other"]);
}

// ---------------------------------------------------------------------------------------------------
// 7. A symlinked leading directory in the work tree

fn symlinked_leading_directory(settings: Settings, force: bool) {
    let pair = Pair::new(SYMLINK_DIR);
    let canaries: Vec<Canary> = pair
        .sides()
        .iter()
        .map(|side| Canary::plant(side.parent().unwrap()))
        .collect();
    for target in ["dir", "link", "dir"] {
        let args: &[&str] = if force { &["-f", target] } else { &[target] };
        let runs = pair.run(settings, &[], "switch", args);
        for c in &canaries {
            c.assert_intact();
        }
        assert_same_success(&pair, &runs);
    }
    assert_eq!(
        fs::read(pair.by_par.join("real/x")).unwrap(),
        b"real/x on both branches\n",
        "git-par wrote through the symlink e into real/"
    );
}

#[test]
fn switch_replaces_a_symlinked_leading_directory_with_8_workers_without_writing_through_it() {
    symlinked_leading_directory(Settings::Jobs(8), false);
}

#[test]
fn switch_replaces_a_symlinked_leading_directory_with_1_worker_without_writing_through_it() {
    symlinked_leading_directory(Settings::Jobs(1), false);
}

#[test]
fn switch_force_replaces_a_symlinked_leading_directory_without_writing_through_it() {
    symlinked_leading_directory(Settings::Jobs(8), true);
}

// ---------------------------------------------------------------------------------------------------
// 8. Below the threshold

#[test]
fn switch_below_the_threshold_with_default_settings_matches_git() {
    let pair = Pair::new(LOCAL);
    for target in ["other", "main"] {
        let runs = pair.run(Settings::Default, &[], "switch", &[target]);
        assert_same_success(&pair, &runs);
    }
}

#[test]
fn history_walk_visits_distinct_consecutive_commits() {
    let walk = history_walk();
    assert_eq!(walk.len(), 14);
    assert!(walk.windows(2).all(|w| w[0] != w[1]));
    assert!(walk.iter().all(|h| h.len() == 3 && h.starts_with('h')));
}

#[test]
fn switch_fixtures_are_deterministic_and_checked_out_cleanly() {
    for name in [TYPES, HISTORY, LOCAL, SYMLINK_DIR] {
        let cached = fixture_named(name);
        let s = scratch();
        let again = s.join("again");
        let script = fixtures_dir().join(format!("make_{name}.sh"));
        run("bash", s.path(), [script.as_os_str(), again.as_os_str()]).assert_success();
        let refs = |dir: &Path| git_str(dir, ["for-each-ref", "--format=%(objectname) %(refname)"]);
        assert_eq!(refs(cached), refs(&again), "{name} is not deterministic");
        // The oracle's own checkout of a copy is clean once its index is refreshed.
        let pair = Pair::new(name);
        assert_clean(&pair.by_git, &[]);
    }
}

// ---------------------------------------------------------------------------------------------------
// 9. After `git clone -n`: an empty work tree and no index take the full checkout's path

/// Branches main (tag v1 on its first commit) / other, every kind of entry, `.gitattributes` with
/// `eol=crlf`, `ident` and `text` (`tests/fixtures/make_kitchen_sink.sh`).
const KITCHEN_SINK: &str = "kitchen_sink";

impl Pair {
    /// Two `git clone -n` of `fixture` (git's, git-par's), made by git: `.git` and nothing else,
    /// no index, `HEAD` on `main`.
    fn cloned_without_checkout(fixture: &str) -> Pair {
        let src = fixture_named(fixture);
        let s = scratch();
        let (by_git, by_par) = (s.join("git/repo"), s.join("par/repo"));
        for side in [&by_git, &by_par] {
            fs::create_dir_all(side.parent().unwrap()).unwrap();
            git(
                side.parent().unwrap(),
                [
                    "clone".as_ref(),
                    "-q".as_ref(),
                    "-n".as_ref(),
                    src.as_os_str(),
                    side.as_os_str(),
                ],
            )
            .assert_success();
        }
        Pair {
            _s: s,
            by_git,
            by_par,
        }
    }

    /// [`Pair::run`] with `GIT_PAR_TRACE=1` for git-par, whose trace lines (`git-par: ...`, which
    /// git never prints) are taken out of its standard error; also returns whether it says it
    /// took the full checkout's path.
    fn run_traced(
        &self,
        settings: Settings,
        config: &[&str],
        cmd: &str,
        args: &[&str],
    ) -> (Runs, bool) {
        let (config, git_args, par_args) = command_lines(settings, config, cmd, args);
        let traced = ["GIT_PAR_TRACE=1".into(), GIT_PAR.into()];
        let mut runs = Runs {
            git: git(&self.by_git, git_args),
            par: run("env", &self.by_par, traced.into_iter().chain(par_args)),
            config,
        };
        let stderr = runs.par.stderr_str();
        let full = stderr.lines().any(|l| l == "git-par: full checkout");
        runs.par.stderr = stderr
            .lines()
            .filter(|l| !l.starts_with("git-par: "))
            .flat_map(|l| [l, "\n"])
            .collect::<String>()
            .into_bytes();
        (runs, full)
    }
}

/// The index file's format as git would see it: version, whether the checksum is null
/// (`index.skipHash`), its cache-tree (every node's name, entry count, tree id and children) and
/// which other extensions it has.
fn index_format(dir: &Path) -> String {
    let path = dir.join(".git/index");
    let bytes = fs::read(&path).expect("read .git/index");
    let index = gix::index::File::at(&path, gix::hash::Kind::Sha1, true, Default::default())
        .expect("gix reads the index");
    let mut out = format!(
        "version {:?}, null checksum {}, link {}, untracked {}, fsmonitor {}, resolve-undo {}\n",
        index.version(),
        bytes[bytes.len() - 20..].iter().all(|&b| b == 0),
        index.link().is_some(),
        index.untracked().is_some(),
        index.fs_monitor().is_some(),
        index.resolve_undo().is_some(),
    );
    match index.tree() {
        None => out += "no cache-tree\n",
        Some(root) => cache_tree_lines(root, "", &mut out),
    }
    out
}

/// One line per cache-tree node below `prefix`: path, entry count (`-` when invalid), tree id.
fn cache_tree_lines(node: &gix::index::extension::Tree, prefix: &str, out: &mut String) {
    let path = format!("{prefix}{}/", String::from_utf8_lossy(&node.name));
    let count = node.num_entries.map_or("-".into(), |n| n.to_string());
    *out += &format!("cache-tree {path} {count} {}\n", node.id);
    for child in &node.children {
        cache_tree_lines(child, &path, out);
    }
}

/// After the setup `prepare` on both clones: `cmd args` by git and by git-par (traced) with
/// `settings`, which must leave the same result (work tree, index with its stat data and format,
/// HEAD, refs and reflogs, status, messages, exit code); git-par must have taken the full
/// checkout's path if and only if `full`. Returns the pair, for the caller's own comparisons.
#[track_caller]
fn after_clone_n(
    prepare: impl Fn(&Path),
    settings: Settings,
    config: &[&str],
    cmd: &str,
    args: &[&str],
    full: bool,
) -> Pair {
    let pair = Pair::cloned_without_checkout(KITCHEN_SINK);
    for side in pair.sides() {
        prepare(side);
    }
    let (runs, took_full) = pair.run_traced(settings, config, cmd, args);
    assert_eq!(
        index_format(&pair.by_git),
        index_format(&pair.by_par),
        "the index files differ in format (left: git, right: git-par)"
    );
    assert_same_success(&pair, &runs);
    assert_eq!(
        took_full,
        full,
        "git-par {} the full checkout's path ({settings:?}, {config:?} {cmd} {args:?})",
        if full { "did not take" } else { "took" },
    );
    pair
}

/// The settings every case of this section runs with: sequential and parallel writers (threshold
/// 0), and git-par's own choice.
const CLONE_N_SETTINGS: [Settings; 4] = [
    Settings::Jobs(1),
    Settings::Jobs(2),
    Settings::Jobs(8),
    Settings::Default,
];

#[test]
fn checkout_force_after_clone_no_checkout_is_a_full_checkout_like_git() {
    for settings in CLONE_N_SETTINGS {
        after_clone_n(|_| {}, settings, &[], "checkout", &["-f", "main"], true);
    }
}

#[test]
fn reset_hard_after_clone_no_checkout_is_a_full_checkout_like_git() {
    for settings in CLONE_N_SETTINGS {
        after_clone_n(|_| {}, settings, &[], "reset", &["--hard"], true);
    }
}

#[test]
fn checkout_branch_after_clone_no_checkout_is_a_full_checkout_like_git() {
    for settings in CLONE_N_SETTINGS {
        // Another branch (a tracking branch is created from origin/other), then the branch HEAD
        // is on: a missing index is git's initial checkout either way.
        after_clone_n(|_| {}, settings, &[], "checkout", &["other"], true);
        after_clone_n(|_| {}, settings, &[], "checkout", &["main"], true);
    }
}

#[test]
fn switch_after_clone_no_checkout_is_a_full_checkout_like_git() {
    for settings in CLONE_N_SETTINGS {
        after_clone_n(|_| {}, settings, &[], "switch", &["other"], true);
        after_clone_n(|_| {}, settings, &[], "switch", &["--detach", "v1"], true);
    }
}

#[test]
fn full_checkout_after_clone_no_checkout_with_sparse_patterns_like_git() {
    let sparse = |side: &Path| {
        git_ok(side, ["config", "core.sparseCheckout", "true"]);
        fs::write(
            side.join(".git/info/sparse-checkout"),
            "/*\n!/*/\n/dir/\n!/dir/sub/\n",
        )
        .unwrap();
    };
    for settings in CLONE_N_SETTINGS {
        after_clone_n(sparse, settings, &[], "checkout", &["-f", "main"], true);
        after_clone_n(sparse, settings, &[], "switch", &["other"], true);
    }
    after_clone_n(sparse, Settings::Default, &[], "reset", &["--hard"], true);
}

#[test]
fn full_checkout_after_clone_no_checkout_converts_content_as_configured_like_git() {
    for config in [
        &["core.autocrlf=true"][..],
        &["core.eol=crlf"],
        &["core.symlinks=false"],
    ] {
        after_clone_n(
            |_| {},
            Settings::Jobs(2),
            config,
            "checkout",
            &["-f", "main"],
            true,
        );
    }
}

#[test]
fn full_checkout_after_clone_no_checkout_writes_the_configured_index_format_like_git() {
    for config in [
        // (`feature.manyFiles` also has git add an untracked cache to a new index, which
        // git-par's new indexes do not have: see docs/differences.md.)
        &["index.version=4"][..],
        &["index.version=4", "index.skipHash=true"],
        &["index.skipHash=true", "index.version=2"],
    ] {
        after_clone_n(
            |_| {},
            Settings::Jobs(2),
            config,
            "reset",
            &["--hard"],
            true,
        );
        after_clone_n(
            |_| {},
            Settings::Default,
            config,
            "switch",
            &["other"],
            true,
        );
    }
}

/// `post-checkout` runs after the full checkout of a checkout or switch with git's arguments (the
/// old and new `HEAD`, after `clone -n` the same commit for `checkout -f main`, and the flag 1),
/// and not after `reset --hard`, as with git.
#[test]
fn post_checkout_runs_after_a_full_checkout_like_git() {
    let hook = |side: &Path| {
        let path = side.join(".git/hooks/post-checkout");
        fs::write(&path, "#!/bin/sh\necho \"$*\" >>.git/post-checkout.args\n").unwrap();
        run("chmod", side, ["+x", ".git/hooks/post-checkout"]).assert_success();
    };
    for (cmd, args) in [
        ("checkout", &["-f", "main"][..]),
        ("switch", &["other"]),
        ("reset", &["--hard"]),
    ] {
        let pair = after_clone_n(hook, Settings::Jobs(2), &[], cmd, args, true);
        let [g, p] = pair.sides().map(|side| {
            fs::read_to_string(side.join(".git/post-checkout.args")).unwrap_or_default()
        });
        assert_eq!(
            g, p,
            "post-checkout's arguments after {cmd} {args:?} (left: git, right: git-par)"
        );
        assert_eq!(
            g.is_empty(),
            cmd == "reset",
            "the oracle's hook run (the test is wrong)"
        );
    }
}

/// An empty index file (not a missing one) keeps its version, as any index an update replaces;
/// a forced update from it is still a full checkout.
#[test]
fn forced_checkout_from_an_empty_index_file_keeps_its_version_like_git() {
    let empty_v4 = |side: &Path| {
        git_ok(side, ["-c", "index.version=4", "read-tree", "--empty"]);
    };
    after_clone_n(
        empty_v4,
        Settings::Jobs(2),
        &[],
        "checkout",
        &["-f", "main"],
        true,
    );
    after_clone_n(
        empty_v4,
        Settings::Default,
        &["index.version=2"],
        "reset",
        &["--hard"],
        true,
    );
}

/// From an empty index file a safe switch is not a full checkout: git's two-way merge keeps the
/// paths both trees share as staged deletions, and refuses to overwrite the ones the switch
/// changes. git-par takes the two-way update, as git.
#[test]
fn safe_switch_from_an_empty_index_file_is_the_two_way_merge_like_git() {
    let empty = |side: &Path| {
        git_ok(side, ["read-tree", "--empty"]);
    };
    after_clone_n(empty, Settings::Jobs(2), &[], "checkout", &["main"], false);
    let pair = Pair::cloned_without_checkout(KITCHEN_SINK);
    for side in pair.sides() {
        empty(side);
    }
    let before = pair.before();
    let (runs, full) = pair.run_traced(Settings::Jobs(2), &[], "switch", &["other"]);
    assert_same_refusal(&pair, &before, &runs);
    assert!(!full, "git-par took the full checkout's path");
}

/// Anything in the work tree besides `.git` keeps the two-way update, whose rules for untracked
/// files git applies: one out of the way stays, one in the way is overwritten by a forced
/// update and refuses a safe one.
#[test]
fn untracked_files_after_clone_no_checkout_keep_the_two_way_update_like_git() {
    let aside = |side: &Path| fs::write(side.join("untracked.txt"), "mine\n").unwrap();
    let in_the_way = |side: &Path| {
        fs::create_dir_all(side.join("dir/sub")).unwrap();
        fs::write(side.join("dir/sub/sub.txt"), "mine\n").unwrap();
    };
    for settings in [Settings::Jobs(2), Settings::Default] {
        after_clone_n(aside, settings, &[], "checkout", &["-f", "main"], false);
        after_clone_n(aside, settings, &[], "switch", &["other"], false);
        after_clone_n(in_the_way, settings, &[], "reset", &["--hard"], false);
    }
    // The configured index version applies to a new index on that path too.
    after_clone_n(
        aside,
        Settings::Jobs(2),
        &["index.version=4"],
        "checkout",
        &["-f", "main"],
        false,
    );
    let pair = Pair::cloned_without_checkout(KITCHEN_SINK);
    for side in pair.sides() {
        in_the_way(side);
    }
    let (runs, full) = pair.run_traced(Settings::Jobs(2), &[], "checkout", &["main"]);
    assert!(!full, "git-par took the full checkout's path");
    assert!(
        !runs.git.success(),
        "the oracle succeeded (the test is wrong)"
    );
    assert_same_messages(&runs);
    compare_worktrees(&pair.by_git, &pair.by_par);
    for side in pair.sides() {
        assert!(
            !side.join(".git/index").exists(),
            "{} wrote an index",
            side.display()
        );
    }
}
