//! Safety (issue 7), against real git: a symlinked leading directory in the work tree under every
//! command (nothing outside the work tree is read through the link, written or removed), unmerged
//! paths under restore / checkout / switch / reset, index flags (skip-worktree, assume-unchanged,
//! intent-to-add) under reset --hard / switch / checkout, and a checkout after `clone --no-checkout`.
//!
//! Every scenario runs the real git command on one copy of a repository and git-par on another copy
//! in the same state, and compares what they leave: the work tree (paths, types, modes, bytes, symlink
//! targets), `git ls-files -s` (and `-v` for the flags), `git status --porcelain`, HEAD, the exit code
//! and the first line of standard error.
//!
//! git-par is run with `-c checkout.workers=4 -c checkout.thresholdForParallelism=0` so that even these
//! small checkouts take its parallel path; git is run with its defaults.
//!
//! Fixtures: `tests/fixtures/make_safety.sh`, `tests/fixtures/make_unmerged.sh`.

mod support;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use support::*;

/// main / noc (no a/b/c) / newx (no a/b/c, new a/x) / noa (no a/) / other (f, s, s2, au changed, g).
const SAFETY: &str = "safety";
/// A conflicted merge of `side` into `main` on `u`, resolved by hand in the work tree; branch other.
const UNMERGED: &str = "unmerged";

/// What git-par is given on top of the command, on every run of this file.
const PAR_CONFIG: [&str; 2] = ["checkout.workers=4", "checkout.thresholdForParallelism=0"];

// ---------------------------------------------------------------------------------------------------
// Two copies of one repository

/// `<scratch>/git/repo` for git, `<scratch>/par/repo` for git-par, each with its own `outside`
/// directory beside it (`<scratch>/git/outside`, `<scratch>/par/outside`) when a test makes one.
struct Pair {
    _s: Scratch,
    by_git: PathBuf,
    by_par: PathBuf,
}

struct Runs {
    git: Run,
    par: Run,
}

impl Pair {
    fn new(fixture: &str) -> Pair {
        let src = fixture_named(fixture);
        let s = scratch();
        let by_git = s.join("git/repo");
        let by_par = s.join("par/repo");
        copy_repo(src, &by_git);
        copy_repo(src, &by_par);
        for side in [&by_git, &by_par] {
            git(side, ["update-index", "-q", "--refresh"]);
        }
        Pair {
            _s: s,
            by_git,
            by_par,
        }
    }

    /// Two empty sides: `<scratch>/git` and `<scratch>/par` exist, the repositories do not.
    fn empty() -> Pair {
        let s = scratch();
        let by_git = s.join("git/repo");
        let by_par = s.join("par/repo");
        fs::create_dir_all(by_git.parent().unwrap()).unwrap();
        fs::create_dir_all(by_par.parent().unwrap()).unwrap();
        Pair {
            _s: s,
            by_git,
            by_par,
        }
    }

    fn sides(&self) -> [&Path; 2] {
        [&self.by_git, &self.by_par]
    }

    /// Real git with `args` on both sides (setup).
    #[track_caller]
    fn setup_git(&self, args: &[&str]) {
        for side in self.sides() {
            git(side, args).assert_success();
        }
    }

    fn write(&self, path: &str, bytes: &[u8]) {
        for side in self.sides() {
            let p = side.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, bytes).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
        }
    }

    fn remove(&self, path: &str) {
        for side in self.sides() {
            let p = side.join(path);
            fs::remove_file(&p).unwrap_or_else(|e| panic!("remove {}: {e}", p.display()));
        }
    }

    /// `git ARGS` in git's copy, `git-par -c checkout.workers=4 -c ...=0 ARGS` in git-par's.
    fn run(&self, args: &[&str]) -> Runs {
        let mut par_args: Vec<OsString> = config_args(&PAR_CONFIG.map(str::to_owned));
        par_args.extend(args.iter().map(OsString::from));
        Runs {
            git: git(&self.by_git, args),
            par: git_par(&self.by_par, par_args),
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Comparisons

/// Differences found by one comparison, all reported at once.
#[derive(Default)]
struct Differences(Vec<String>);

impl Differences {
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
    fn assert_none(self, what: &str, runs: &Runs) {
        assert!(
            self.0.is_empty(),
            "{what}: git-par differs from git in {} way(s):\n\n{}\n\n--- git ran:\n{}\n--- git-par ran:\n{}",
            self.0.len(),
            self.0.join("\n\n"),
            runs.git.describe(),
            runs.par.describe()
        );
    }
}

fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

/// The output of `git ARGS` in `dir`, or `<exit N: stderr>` when it fails.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    if out.success() {
        out.stdout_str()
    } else {
        format!(
            "<exit {:?}: {}>",
            out.status.code(),
            out.stderr_str().trim_end()
        )
    }
}

/// HEAD (symbolic ref and commit) and the branch configuration.
fn head_of(dir: &Path) -> String {
    [
        git_out(dir, &["symbolic-ref", "-q", "HEAD"]),
        git_out(dir, &["rev-parse", "HEAD"]),
        git_out(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
            ],
        ),
        git_out(dir, &["config", "--get-regexp", r"^branch\."]),
    ]
    .join("")
}

/// Exit code, first line of stderr, work tree, `ls-files -s`, `ls-files -v`, HEAD, and (last, as it
/// refreshes the index) `status --porcelain` of both sides: git-par's must equal git's.
#[track_caller]
fn assert_same_outcome(pair: &Pair, runs: &Runs, what: &str) {
    let (g, p) = (pair.by_git.as_path(), pair.by_par.as_path());
    let mut d = Differences::default();
    d.check("exit code", || {
        assert_eq!(
            runs.git.status.code(),
            runs.par.status.code(),
            "exit codes differ (left: git, right: git-par)"
        )
    });
    d.check("first line of stderr", || {
        assert_eq!(
            first_line(&runs.git.stderr),
            first_line(&runs.par.stderr),
            "first line of stderr differs (left: git, right: git-par)"
        )
    });
    d.check("work tree", || compare_worktrees(g, p));
    d.check("ls-files -s", || {
        assert_eq!(
            git_out(g, &["ls-files", "-s"]),
            git_out(p, &["ls-files", "-s"]),
            "`git ls-files -s` differs (left: git, right: git-par)"
        )
    });
    d.check("ls-files -v (index flags)", || {
        assert_eq!(
            git_out(g, &["ls-files", "-v"]),
            git_out(p, &["ls-files", "-v"]),
            "`git ls-files -v` differs (left: git, right: git-par)"
        )
    });
    d.check("index.lock", || {
        assert!(
            !p.join(".git/index.lock").exists(),
            "git-par left .git/index.lock"
        )
    });
    d.check("HEAD", || {
        assert_eq!(
            head_of(g),
            head_of(p),
            "HEAD, branches or branch config differ (left: git, right: git-par)"
        )
    });
    d.check("status --porcelain", || {
        assert_eq!(
            git_out(g, &["status", "--porcelain", "--untracked-files=all"]),
            git_out(p, &["status", "--porcelain", "--untracked-files=all"]),
            "`git status --porcelain` differs (left: git, right: git-par)"
        )
    });
    d.assert_none(what, runs);
}

// ---------------------------------------------------------------------------------------------------
// 1. A symlinked leading directory: `a/` replaced by `a -> ../outside`

/// Every file under `root` (not following symlinks) with its bytes, symlinks with their targets.
fn full_listing(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in
            fs::read_dir(&dir).unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()))
        {
            let path = entry.unwrap().path();
            let md = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if md.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(path);
            } else if md.file_type().is_symlink() {
                let mut t = b"<symlink> ".to_vec();
                t.extend(fs::read_link(&path).unwrap().as_os_str().as_bytes());
                out.insert(rel, t);
            } else {
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// On both sides: moves the contents of the tracked directory `a/` to `../outside`, adds an untracked
/// canary there, and puts the symlink `a -> ../outside` in place of `a/`.
fn symlink_a_to_outside(pair: &Pair) {
    for side in pair.sides() {
        let outside = side.parent().unwrap().join("outside");
        fs::rename(side.join("a"), &outside).unwrap();
        fs::write(outside.join("canary"), CANARY_BYTES).unwrap();
        fs::create_dir_all(outside.join("canary-dir")).unwrap();
        fs::write(outside.join("canary-dir/canary"), CANARY_BYTES).unwrap();
        std::os::unix::fs::symlink("../outside", side.join("a")).unwrap();
    }
}

fn symlinked_leading_dir(args: &[&str]) {
    let pair = Pair::new(SAFETY);
    symlink_a_to_outside(&pair);
    let outside = |side: &Path| side.parent().unwrap().join("outside");
    let before: Vec<_> = pair
        .sides()
        .iter()
        .map(|side| {
            let o = outside(side);
            (stat_snapshot(&o), full_listing(&o))
        })
        .collect();
    let runs = pair.run(args);
    let what = format!("git par {}", args.join(" "));
    let mut d = Differences::default();
    for ((side, (stats, listing)), who) in pair.sides().iter().zip(&before).zip(["git", "git-par"])
    {
        let o = outside(side);
        d.check(&format!("{who}: ../outside byte-identical"), || {
            assert_eq!(
                listing,
                &full_listing(&o),
                "{who} changed the directory outside the work tree (left: before, right: after)"
            )
        });
        d.check(&format!("{who}: ../outside untouched (stat)"), || {
            assert_stat_unchanged(stats, &o, who)
        });
    }
    d.assert_none(&what, &runs);
    assert_same_outcome(&pair, &runs, &what);
}

/// A forced update (`reset --hard`, `switch -f`) over a symlinked `a/`: a documented difference
/// from git. git looks at `a/x` *through* the link, finds it unchanged and leaves the link, so its
/// own `status` then reports `a/x` deleted and `a` untracked. git-par never reads through a
/// leading symlink (the issue's rule, git's `has_symlink_leading_path`): the entries are not
/// there, so it replaces the link itself by a real directory and writes them. Asserted: nothing
/// outside changes on either side, git-par's result is clean and is the target exactly, and HEAD
/// and the index are git's.
fn symlinked_leading_dir_forced(args: &[&str]) {
    let pair = Pair::new(SAFETY);
    symlink_a_to_outside(&pair);
    let outside = |side: &Path| side.parent().unwrap().join("outside");
    let before: Vec<_> = pair
        .sides()
        .iter()
        .map(|side| full_listing(&outside(side)))
        .collect();
    let runs = pair.run(args);
    assert!(runs.git.success(), "{}", runs.git.describe());
    assert!(runs.par.success(), "{}", runs.par.describe());
    for (side, listing) in pair.sides().iter().zip(&before) {
        assert_eq!(listing, &full_listing(&outside(side)), "../outside changed");
    }
    let [by_git, by_par] = pair.sides();
    assert!(
        !by_par.join("a").is_symlink(),
        "the link is replaced by a directory"
    );
    assert_clean(by_par, &[]);
    assert_eq!(
        git_str(by_git, ["ls-files", "-s"]),
        git_str(by_par, ["ls-files", "-s"])
    );
    assert_eq!(
        git_str(by_git, ["rev-parse", "HEAD"]),
        git_str(by_par, ["rev-parse", "HEAD"])
    );
}

#[test]
fn symlinked_leading_dir_switch_to_a_commit_without_a_b_c_leaves_outside_alone_like_git() {
    symlinked_leading_dir(&["switch", "noc"]);
}

#[test]
fn symlinked_leading_dir_checkout_branch_without_a_b_c_leaves_outside_alone_like_git() {
    symlinked_leading_dir(&["checkout", "noc"]);
}

#[test]
fn symlinked_leading_dir_reset_hard_to_a_commit_without_a_b_c_leaves_outside_alone() {
    symlinked_leading_dir_forced(&["reset", "--hard", "noc"]);
}

#[test]
fn symlinked_leading_dir_reset_hard_to_head_replaces_the_link_by_a_directory() {
    symlinked_leading_dir_forced(&["reset", "--hard"]);
}

#[test]
fn symlinked_leading_dir_switch_force_leaves_outside_alone() {
    symlinked_leading_dir_forced(&["switch", "-f", "noc"]);
}

#[test]
fn symlinked_leading_dir_switch_that_writes_a_x_replaces_the_link_by_a_directory_like_git() {
    symlinked_leading_dir(&["switch", "newx"]);
}

#[test]
fn symlinked_leading_dir_restore_from_a_source_without_a_leaves_outside_alone_like_git() {
    symlinked_leading_dir(&["restore", "--source", "noa", "a"]);
}

#[test]
fn symlinked_leading_dir_restore_a_x_from_the_index_leaves_outside_alone_like_git() {
    symlinked_leading_dir(&["restore", "a/x"]);
}

#[test]
fn symlinked_leading_dir_checkout_rev_without_a_paths_a_leaves_outside_alone_like_git() {
    symlinked_leading_dir(&["checkout", "noa", "--", "a"]);
}

#[test]
fn symlinked_leading_dir_checkout_paths_a_x_from_the_index_leaves_outside_alone_like_git() {
    symlinked_leading_dir(&["checkout", "--", "a/x"]);
}

// ---------------------------------------------------------------------------------------------------
// 2. Unmerged paths

const RESOLVED: &[u8] = b"line 1\nresolved by hand\nline 3\n";

/// Checks the oracle's refusal (exit 1, `error: path 'u' is unmerged`), then that git-par refused the
/// same way and left `u` (the hand-made resolution) and the unmerged index alone.
fn unmerged_refusal(args: &[&str]) {
    let pair = Pair::new(UNMERGED);
    let index_before = fs::read(pair.by_par.join(".git/index")).unwrap();
    let runs = pair.run(args);
    let what = format!("git par {}", args.join(" "));
    assert_eq!(
        runs.git.status.code(),
        Some(1),
        "the oracle did not refuse (the test is wrong): {}",
        runs.git.describe()
    );
    assert!(
        runs.git
            .stderr_str()
            .contains("error: path 'u' is unmerged"),
        "the oracle's message changed (the test is wrong): {}",
        runs.git.describe()
    );
    let mut d = Differences::default();
    d.check("u untouched", || {
        assert_eq!(
            fs::read(pair.by_par.join("u")).ok().as_deref(),
            Some(RESOLVED),
            "git-par changed or removed the hand-resolved u"
        )
    });
    d.check("index untouched", || {
        assert!(
            fs::read(pair.by_par.join(".git/index")).unwrap() == index_before,
            "git-par rewrote .git/index although git refuses"
        )
    });
    d.check("message", || {
        assert!(
            runs.par
                .stderr_str()
                .contains("error: path 'u' is unmerged"),
            "git-par does not say `error: path 'u' is unmerged`"
        )
    });
    d.assert_none(&what, &runs);
    assert_same_outcome(&pair, &runs, &what);
}

fn unmerged_like_git(args: &[&str]) {
    let pair = Pair::new(UNMERGED);
    let runs = pair.run(args);
    assert_same_outcome(&pair, &runs, &format!("git par {}", args.join(" ")));
}

#[test]
fn unmerged_restore_path_refuses_like_git() {
    unmerged_refusal(&["restore", "u"]);
}

#[test]
fn unmerged_restore_dot_refuses_like_git() {
    unmerged_refusal(&["restore", "."]);
}

#[test]
fn unmerged_checkout_paths_refuses_like_git() {
    unmerged_refusal(&["checkout", "--", "u"]);
}

#[test]
fn unmerged_switch_to_another_branch_refuses_like_git() {
    let pair = Pair::new(UNMERGED);
    let runs = pair.run(&["switch", "other"]);
    assert!(
        !runs.git.success(),
        "the oracle switched (the test is wrong): {}",
        runs.git.describe()
    );
    assert_eq!(
        fs::read(pair.by_par.join("u")).ok().as_deref(),
        Some(RESOLVED),
        "git-par changed or removed the hand-resolved u\n{}",
        runs.par.describe()
    );
    assert_same_outcome(&pair, &runs, "git par switch other");
}

#[test]
fn unmerged_checkout_another_branch_refuses_like_git() {
    let pair = Pair::new(UNMERGED);
    let runs = pair.run(&["checkout", "other"]);
    assert!(
        !runs.git.success(),
        "the oracle switched (the test is wrong): {}",
        runs.git.describe()
    );
    assert_eq!(
        fs::read(pair.by_par.join("u")).ok().as_deref(),
        Some(RESOLVED),
        "git-par changed or removed the hand-resolved u\n{}",
        runs.par.describe()
    );
    assert_same_outcome(&pair, &runs, "git par checkout other");
}

#[test]
fn unmerged_reset_hard_resolves_to_stage_0_like_git() {
    unmerged_like_git(&["reset", "--hard"]);
}

#[test]
fn unmerged_checkout_force_head_resolves_to_stage_0_like_git() {
    unmerged_like_git(&["checkout", "-f", "HEAD"]);
}

// ---------------------------------------------------------------------------------------------------
// 3. Index flags

/// skip-worktree on `s` (deleted from the work tree) and on `s2` (modified in the work tree).
fn set_skip_worktree(pair: &Pair) {
    pair.setup_git(&["update-index", "--skip-worktree", "s", "s2"]);
    pair.remove("s");
    pair.write("s2", b"s2 modified in the work tree\n");
}

/// assume-unchanged on `au`, modified in the work tree.
fn set_assume_unchanged(pair: &Pair) {
    pair.setup_git(&["update-index", "--assume-unchanged", "au"]);
    pair.write("au", b"au modified in the work tree\n");
}

/// intent-to-add `new` (a file no commit has).
fn set_intent_to_add(pair: &Pair) {
    pair.write("new", b"new, added with -N\n");
    pair.setup_git(&["add", "-N", "new"]);
}

fn flags_like_git(setup: fn(&Pair), args: &[&str]) {
    let pair = Pair::new(SAFETY);
    setup(&pair);
    let runs = pair.run(args);
    assert_same_outcome(&pair, &runs, &format!("git par {}", args.join(" ")));
}

#[test]
fn skip_worktree_under_reset_hard_like_git() {
    flags_like_git(set_skip_worktree, &["reset", "--hard"]);
}

#[test]
fn skip_worktree_under_switch_force_like_git() {
    flags_like_git(set_skip_worktree, &["switch", "-f", "other"]);
}

#[test]
fn skip_worktree_under_switch_like_git() {
    flags_like_git(set_skip_worktree, &["switch", "other"]);
}

#[test]
fn skip_worktree_under_checkout_branch_like_git() {
    flags_like_git(set_skip_worktree, &["checkout", "other"]);
}

#[test]
fn assume_unchanged_under_reset_hard_like_git() {
    flags_like_git(set_assume_unchanged, &["reset", "--hard"]);
}

#[test]
fn assume_unchanged_under_switch_force_like_git() {
    flags_like_git(set_assume_unchanged, &["switch", "-f", "other"]);
}

#[test]
fn assume_unchanged_under_switch_like_git() {
    flags_like_git(set_assume_unchanged, &["switch", "other"]);
}

#[test]
fn assume_unchanged_under_checkout_branch_like_git() {
    flags_like_git(set_assume_unchanged, &["checkout", "other"]);
}

#[test]
fn intent_to_add_under_reset_hard_like_git() {
    flags_like_git(set_intent_to_add, &["reset", "--hard"]);
}

#[test]
fn intent_to_add_under_switch_force_like_git() {
    flags_like_git(set_intent_to_add, &["switch", "-f", "other"]);
}

#[test]
fn intent_to_add_under_switch_like_git() {
    flags_like_git(set_intent_to_add, &["switch", "other"]);
}

#[test]
fn intent_to_add_under_checkout_branch_like_git() {
    flags_like_git(set_intent_to_add, &["checkout", "other"]);
}

// ---------------------------------------------------------------------------------------------------
// 4. `clone --no-checkout`, then a checkout

/// `git clone --no-checkout` on both sides, then `args`. `writes_all`: the oracle's checkout writes
/// every file and a full index (its `status` is clean); `git switch -c` from HEAD does not (it keeps
/// the empty index: every file a staged deletion), and git-par must then do as git does.
fn after_clone_no_checkout(args: &[&str], writes_all: bool) {
    let src = fixture_named(SAFETY);
    let pair = Pair::empty();
    for side in pair.sides() {
        git(
            side.parent().unwrap(),
            [
                "clone".as_ref(),
                "-q".as_ref(),
                "--no-checkout".as_ref(),
                src.as_os_str(),
                side.as_os_str(),
            ],
        )
        .assert_success();
    }
    let runs = pair.run(args);
    let what = format!("git clone --no-checkout; git par {}", args.join(" "));
    assert!(
        runs.git.success(),
        "the oracle failed (the test is wrong): {}",
        runs.git.describe()
    );
    if writes_all {
        assert_eq!(
            git_out(&pair.by_git, &["status", "--porcelain"]),
            "",
            "the oracle's status is not clean (the test is wrong)"
        );
    }
    assert_same_outcome(&pair, &runs, &what);
}

#[test]
fn clone_no_checkout_then_checkout_new_branch_at_a_rev_writes_every_file_like_git() {
    after_clone_no_checkout(&["checkout", "-b", "br", "origin/noc"], true);
}

#[test]
fn clone_no_checkout_then_checkout_main_writes_every_file_like_git() {
    after_clone_no_checkout(&["checkout", "main"], true);
}

#[test]
fn clone_no_checkout_then_switch_create_keeps_the_empty_index_like_git() {
    after_clone_no_checkout(&["switch", "-c", "br"], false);
}

// ---------------------------------------------------------------------------------------------------
// 5. Found by git's own scripts (t2021, t2022)

/// An untracked symlink where the target needs a directory is in the way like an untracked file
/// (git's `check_leading_path`, t2021-checkout-overwrite): the switch is refused and the link stays.
#[test]
fn untracked_symlink_where_a_directory_goes_refuses_like_git() {
    let pair = Pair::new(SAFETY);
    pair.setup_git(&["checkout", "-q", "noa"]);
    for side in pair.sides() {
        std::os::unix::fs::symlink("elsewhere", side.join("a")).unwrap();
    }
    let runs = pair.run(&["switch", "main"]);
    assert!(!runs.par.success(), "{}", runs.par.describe());
    assert_same_outcome(&pair, &runs, "git par switch main");
    assert!(pair.sides()[1].join("a").is_symlink());
}

/// `checkout HEAD -- path` leaves a file that is already what the index records alone: same inode,
/// same mtime (t2022-checkout-paths "do not touch files that are already up-to-date").
#[test]
fn checkout_paths_does_not_rewrite_an_up_to_date_file_like_git() {
    use std::os::unix::fs::MetadataExt;
    let pair = Pair::new(SAFETY);
    let before: Vec<_> = pair
        .sides()
        .iter()
        .map(|s| fs::symlink_metadata(s.join("keep.txt")).unwrap())
        .collect();
    let runs = pair.run(&["checkout", "HEAD", "--", "keep.txt", "f"]);
    assert_same_outcome(&pair, &runs, "git par checkout HEAD -- keep.txt f");
    for (side, was) in pair.sides().iter().zip(&before) {
        let now = fs::symlink_metadata(side.join("keep.txt")).unwrap();
        assert_eq!(
            (was.ino(), was.mtime(), was.mtime_nsec()),
            (now.ino(), now.mtime(), now.mtime_nsec()),
            "{} rewrote an up-to-date file",
            side.display()
        );
    }
}
