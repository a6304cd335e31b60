//! Branch creation and tracking (`-b/-B`, `-c/-C`, `--track[=direct|inherit]`, `--no-track`,
//! `--guess/--no-guess`, `checkout.guess`, `checkout.defaultRemote`, `branch.autoSetupMerge`,
//! `branch.autoSetupRebase`) and the refusal to switch to a branch another work tree has checked
//! out, against real git: each case runs git and git-par on two copies of the same repository and
//! compares the exit code, the first line of standard error, standard output, HEAD, the branches,
//! `git config --get-regexp '^branch\.'`, the reflog of the created branch and of HEAD, and the
//! work tree's status.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use support::*;

/// A repository cloned from `upstream` (remote `origin`: branches `main`, `x`, `foo`, `spam`; tag
/// `v1`), with a second remote `other` (branches `main`, `foo`; fetched into
/// `refs/remotes/other/*`) and a third, `odd`, whose refspec maps its branches to
/// `refs/odd/*` (branch `eggs`). `main` tracks `origin/main`; `local` is a local branch one
/// commit behind `main`. Built once per test process; never modified.
fn base() -> &'static Path {
    static BASE: OnceLock<(Scratch, PathBuf)> = OnceLock::new();
    &BASE
        .get_or_init(|| {
            let s = scratch();
            let up = s.join("upstream");
            let sh = |dir: &Path, script: &str| {
                run("sh", dir, ["-c", script]).assert_success();
            };
            fs::create_dir_all(&up).unwrap();
            sh(
                &up,
                "git init -q -b main && echo one >a.txt && git add a.txt && git commit -q -m one && \
                 git tag v1 && echo two >>a.txt && git commit -q -am two && \
                 git checkout -q -b x && echo x >x.txt && git add x.txt && git commit -q -m x && \
                 git checkout -q -b foo main && echo foo >foo.txt && git add foo.txt && git commit -q -m foo && \
                 git checkout -q -b spam main && echo spam >spam.txt && git add spam.txt && git commit -q -m spam && \
                 git checkout -q main",
            );
            let other = s.join("other");
            fs::create_dir_all(&other).unwrap();
            sh(
                &other,
                "git init -q -b main && echo o >o.txt && git add o.txt && git commit -q -m o && \
                 git checkout -q -b foo && echo of >of.txt && git add of.txt && git commit -q -m of && \
                 git checkout -q main",
            );
            let odd = s.join("odd");
            fs::create_dir_all(&odd).unwrap();
            sh(
                &odd,
                "git init -q -b main && echo d >d.txt && git add d.txt && git commit -q -m d && \
                 git checkout -q -b eggs && echo e >e.txt && git add e.txt && git commit -q -m e && \
                 git checkout -q main",
            );
            sh(
                s.path(),
                "git clone -q upstream repo && cd repo && git branch -q --no-track local main~1 && \
                 git remote add other ../other && git fetch -q other && \
                 git remote add odd ../odd && git config remote.odd.fetch '+refs/heads/*:refs/odd/*' && \
                 git fetch -q odd && printf 'wt*/\\n' >>.git/info/exclude",
            );
            let repo = s.join("repo");
            (s, repo)
        })
        .1
}

/// Two copies of [`base`]: `git/repo` for git, `par/repo` for git-par.
struct Pair {
    s: Scratch,
}

impl Pair {
    fn new() -> Pair {
        let s = scratch();
        copy_repo(base(), &s.join("git/repo"));
        copy_repo(base(), &s.join("par/repo"));
        Pair { s }
    }

    fn sides(&self) -> [PathBuf; 2] {
        [self.s.join("git/repo"), self.s.join("par/repo")]
    }

    /// Runs a shell script with real git on both sides (the same starting state).
    #[track_caller]
    fn setup(&self, script: &str) {
        for side in self.sides() {
            run("sh", &side, ["-c", script]).assert_success();
        }
    }

    /// `git [-c ...] ARGS` on git's side, `git-par [-c ...] ARGS` on git-par's.
    fn run(&self, config: &[&str], args: &[&str]) -> (Run, Run) {
        self.run_in("", config, args)
    }

    /// Like [`Pair::run`], from `subdir` of each side (a linked work tree, say).
    fn run_in(&self, subdir: &str, config: &[&str], args: &[&str]) -> (Run, Run) {
        let mut all: Vec<OsString> = Vec::new();
        for c in config {
            all.push("-c".into());
            all.push((*c).into());
        }
        all.extend(args.iter().map(OsString::from));
        let [g, p] = self.sides();
        (git(&g.join(subdir), &all), git_par(&p.join(subdir), &all))
    }
}

fn opt(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    if out.success() {
        out.stdout_str().trim_end().to_owned()
    } else {
        format!("<exit {:?}>", out.status.code())
    }
}

/// A reflog as `OLD NEW\tMESSAGE` lines (identity and time left out).
fn reflog(dir: &Path, name: &str) -> String {
    let Ok(text) = fs::read_to_string(dir.join(".git/logs").join(name)) else {
        return format!("<no reflog for {name}>");
    };
    text.lines()
        .map(|line| {
            let (ids, message) = line.split_once('\t').unwrap_or((line, ""));
            let ids: Vec<&str> = ids.splitn(3, ' ').take(2).collect();
            format!("{}\t{message}", ids.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the comparison looks at in one repository, labelled; `branch` is the branch the case
/// creates or resets (its reflog is compared).
fn state(dir: &Path, branch: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HEAD", opt(dir, &["symbolic-ref", "-q", "HEAD"])),
        ("HEAD commit", opt(dir, &["rev-parse", "HEAD"])),
        (
            "branches",
            opt(
                dir,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname) %(upstream)",
                    "refs/heads",
                ],
            ),
        ),
        (
            "branch config",
            opt(dir, &["config", "--get-regexp", r"^branch\."]),
        ),
        (
            "reflog of the branch",
            reflog(dir, &format!("refs/heads/{branch}")),
        ),
        ("reflog of HEAD", reflog(dir, "HEAD")),
        ("status", opt(dir, &["status", "--porcelain"])),
    ]
}

/// The first line of standard error, with each side's directory replaced by `<dir>`.
fn first_line(run: &Run, dir: &Path) -> String {
    let text = run
        .stderr_str()
        .replace(&dir.display().to_string(), "<dir>");
    text.lines().next().unwrap_or("").to_owned()
}

/// Panics unless git and git-par agree on everything [`state`] shows, the exit code, the first
/// line of standard error and (unless `stdout` is false) standard output.
#[track_caller]
fn assert_same(pair: &Pair, runs: &(Run, Run), branch: &str, stdout: bool) {
    let (g, p) = runs;
    let [gd, pd] = pair.sides();
    let mut problems = Vec::new();
    if g.status.code() != p.status.code() {
        problems.push(format!(
            "exit code: git {:?}, git-par {:?}",
            g.status.code(),
            p.status.code()
        ));
    }
    let (gl, pl) = (first_line(g, &gd), first_line(p, &pd));
    if gl != pl {
        problems.push(format!(
            "first line of stderr:\n  git:     {gl:?}\n  git-par: {pl:?}"
        ));
    }
    if stdout && g.stdout_str() != p.stdout_str() {
        problems.push(format!(
            "stdout:\n  git:     {:?}\n  git-par: {:?}",
            g.stdout_str(),
            p.stdout_str()
        ));
    }
    for ((label, a), (_, b)) in state(&gd, branch).into_iter().zip(state(&pd, branch)) {
        if a != b {
            problems.push(format!("{label}:\n  git:     {a:?}\n  git-par: {b:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "git-par differs from git:\n{}\n--- git:\n{}\n--- git-par:\n{}",
        problems.join("\n"),
        g.describe(),
        p.describe()
    );
}

/// A fresh pair, `setup` on both sides, then `args` by both, which must agree.
#[track_caller]
fn case(setup: &str, config: &[&str], args: &[&str], branch: &str) -> (Run, Run) {
    let pair = Pair::new();
    if !setup.is_empty() {
        pair.setup(setup);
    }
    let runs = pair.run(config, args);
    assert_same(&pair, &runs, branch, true);
    runs
}

// ---------------------------------------------------------------------------------------------------
// Upstream of a new branch: start points and branch.autoSetupMerge

#[test]
fn switch_c_from_a_remote_branch_sets_the_upstream() {
    let (g, _) = case("", &[], &["switch", "-c", "feat", "origin/x"], "feat");
    assert!(g.success());
    assert!(g.stdout_str().contains("set up to track 'origin/x'"));
}

/// `<branch>@{u}` as a start point is the upstream's ref: the new branch tracks it (t1507.13);
/// `@{upstream}` of the current branch too.
#[test]
fn a_start_point_named_by_its_branch_upstream_is_tracked() {
    let (g, _) = case("", &[], &["checkout", "-b", "feat", "main@{u}"], "feat");
    assert!(
        g.stdout_str().contains("set up to track 'origin/main'"),
        "{}",
        g.describe()
    );
    case("", &[], &["switch", "-c", "feat", "@{upstream}"], "feat");
}

#[test]
fn checkout_b_from_a_remote_branch_quietly() {
    case(
        "",
        &[],
        &["checkout", "-q", "-b", "feat", "origin/x"],
        "feat",
    );
}

#[test]
fn auto_setup_merge_false_sets_no_upstream() {
    case(
        "",
        &["branch.autoSetupMerge=false"],
        &["checkout", "-b", "feat", "origin/x"],
        "feat",
    );
}

#[test]
fn auto_setup_merge_always_tracks_a_local_branch() {
    case(
        "",
        &["branch.autoSetupMerge=always"],
        &["checkout", "-b", "feat", "local"],
        "feat",
    );
}

#[test]
fn auto_setup_merge_simple_tracks_only_the_same_name() {
    case(
        "",
        &["branch.autoSetupMerge=simple"],
        &["switch", "-c", "x", "origin/x"],
        "x",
    );
    case(
        "",
        &["branch.autoSetupMerge=simple"],
        &["switch", "-c", "y", "origin/x"],
        "y",
    );
}

#[test]
fn auto_setup_merge_inherit_copies_the_upstream() {
    case(
        "",
        &["branch.autoSetupMerge=inherit"],
        &["checkout", "-b", "feat", "main"],
        "feat",
    );
}

#[test]
fn track_direct_tracks_a_local_branch() {
    case(
        "",
        &[],
        &["checkout", "--track", "-b", "feat", "main"],
        "feat",
    );
    case(
        "",
        &[],
        &["switch", "--track=direct", "-c", "feat", "local"],
        "feat",
    );
}

#[test]
fn track_inherit_copies_the_upstream_of_the_start_branch() {
    case(
        "",
        &[],
        &["checkout", "--track=inherit", "-b", "feat", "main"],
        "feat",
    );
}

#[test]
fn track_inherit_from_a_branch_without_upstream_warns() {
    case(
        "",
        &[],
        &["switch", "--track=inherit", "-c", "feat", "local"],
        "feat",
    );
}

#[test]
fn no_track_overrides_auto_setup_merge() {
    case(
        "",
        &["branch.autoSetupMerge=always"],
        &["checkout", "--no-track", "-b", "feat", "origin/x"],
        "feat",
    );
}

#[test]
fn auto_setup_rebase_always_tracks_by_rebasing() {
    case(
        "",
        &["branch.autoSetupRebase=always"],
        &["switch", "-c", "feat", "origin/x"],
        "feat",
    );
    case(
        "",
        &[
            "branch.autoSetupRebase=local",
            "branch.autoSetupMerge=always",
        ],
        &["switch", "-c", "feat", "local"],
        "feat",
    );
}

#[test]
fn track_without_b_names_the_branch_after_the_remote_one() {
    case("", &[], &["checkout", "--track", "origin/x"], "x");
    case("", &[], &["switch", "-t", "origin/spam"], "spam");
}

#[test]
fn track_without_a_branch_name_is_refused() {
    case("", &[], &["checkout", "--track", "origin"], "origin");
    case("", &[], &["switch", "--track"], "x");
}

#[test]
fn track_from_a_tag_is_refused_after_the_update_as_git_does() {
    case(
        "",
        &[],
        &["checkout", "--track", "-b", "feat", "v1"],
        "feat",
    );
}

#[test]
fn a_branch_from_a_remote_with_an_unusual_refspec_tracks_it() {
    case(
        "",
        &[],
        &["checkout", "-b", "feat", "refs/odd/eggs"],
        "feat",
    );
}

// ---------------------------------------------------------------------------------------------------
// -B / -C

#[test]
fn checkout_capital_b_resets_an_existing_branch() {
    case("", &[], &["checkout", "-B", "local", "origin/x"], "local");
}

#[test]
fn checkout_capital_b_of_the_current_branch_resets_it() {
    case("", &[], &["checkout", "-B", "main", "local"], "main");
}

#[test]
fn checkout_capital_b_creates_a_missing_branch() {
    case("", &[], &["checkout", "-B", "feat"], "feat");
}

#[test]
fn switch_capital_c_from_a_detached_head() {
    case(
        "git switch -q --detach main~1",
        &[],
        &["switch", "-C", "local"],
        "local",
    );
}

#[test]
fn checkout_b_of_an_existing_branch_is_refused() {
    case("", &[], &["checkout", "-b", "local", "origin/x"], "local");
}

#[test]
fn checkout_b_of_the_previous_branch_names_it() {
    case(
        "git checkout -q local && git checkout -q main",
        &[],
        &["checkout", "-b", "@{-1}"],
        "local",
    );
}

#[test]
fn an_invalid_branch_name_is_refused_with_the_hint() {
    let (g, p) = case("", &[], &["checkout", "-b", "a..b"], "a..b");
    assert_eq!(g.stderr_str(), p.stderr_str());
}

#[test]
fn b_and_capital_b_together_are_refused() {
    case("", &[], &["checkout", "-b", "a", "-B", "b"], "a");
}

#[test]
fn checkout_b_without_start_point_leaves_the_index_alone() {
    case(
        "echo staged >new.txt && git add new.txt && echo changed >>a.txt",
        &[],
        &["checkout", "-b", "feat"],
        "feat",
    );
}

#[test]
fn checkout_b_from_a_path_is_refused() {
    case("", &[], &["checkout", "-b", "feat", "a.txt"], "feat");
}

// ---------------------------------------------------------------------------------------------------
// --guess

#[test]
fn checkout_of_a_branch_of_one_remote_creates_it() {
    case("", &[], &["checkout", "x"], "x");
    case("", &[], &["switch", "spam"], "spam");
}

#[test]
fn a_branch_of_a_remote_with_an_unusual_refspec_is_guessed() {
    case("", &[], &["checkout", "eggs"], "eggs");
}

#[test]
fn no_guess_and_checkout_guess_false_refuse() {
    case("", &[], &["checkout", "--no-guess", "x"], "x");
    case("", &[], &["switch", "--no-guess", "x"], "x");
    case("", &["checkout.guess=false"], &["switch", "x"], "x");
    case(
        "",
        &["checkout.guess=false"],
        &["switch", "--guess", "x"],
        "x",
    );
}

#[test]
fn a_branch_of_several_remotes_is_refused_with_advice() {
    let (g, p) = case("", &[], &["checkout", "foo"], "foo");
    assert_eq!(g.stderr_str(), p.stderr_str());
    let (g, p) = case(
        "",
        &["advice.checkoutAmbiguousRemoteBranchName=false"],
        &["switch", "foo"],
        "foo",
    );
    assert_eq!(g.stderr_str(), p.stderr_str());
}

#[test]
fn checkout_default_remote_picks_one_of_several() {
    case(
        "",
        &["checkout.defaultRemote=other"],
        &["checkout", "foo"],
        "foo",
    );
}

#[test]
fn a_branch_name_that_is_also_a_file_is_refused() {
    case(
        "echo file >x && echo changed >>a.txt",
        &[],
        &["checkout", "x"],
        "x",
    );
    case("echo file >x", &[], &["checkout", "x", "--"], "x");
}

#[test]
fn auto_setup_merge_false_guesses_without_upstream() {
    case(
        "",
        &["branch.autoSetupMerge=false"],
        &["checkout", "x"],
        "x",
    );
}

// ---------------------------------------------------------------------------------------------------
// A branch checked out in another work tree

const WORKTREE: &str = "git worktree add -q wt1 local";

#[test]
fn switching_to_a_branch_of_another_worktree_is_refused() {
    case(WORKTREE, &[], &["switch", "local"], "local");
    case(WORKTREE, &[], &["checkout", "local"], "local");
    case(WORKTREE, &[], &["checkout", "-B", "local", "main"], "local");
    case(WORKTREE, &[], &["switch", "-C", "local"], "local");
}

#[test]
fn ignore_other_worktrees_lets_it_through() {
    case(
        WORKTREE,
        &[],
        &["switch", "--ignore-other-worktrees", "local"],
        "local",
    );
    case(
        WORKTREE,
        &[],
        &[
            "checkout",
            "--ignore-other-worktrees",
            "-B",
            "local",
            "main",
        ],
        "local",
    );
}

#[test]
fn from_a_linked_worktree_the_main_one_counts() {
    let pair = Pair::new();
    pair.setup(WORKTREE);
    let runs = pair.run_in("wt1", &[], &["checkout", "main"]);
    assert_same(&pair, &runs, "main", true);
    // The work tree's own branch is fine.
    let runs = pair.run_in("wt1", &[], &["checkout", "local"]);
    assert_same(&pair, &runs, "local", true);
}

#[test]
fn a_branch_being_bisected_elsewhere_is_in_use() {
    case(
        "git worktree add -q -b spam wt1 origin/spam && cd wt1 && git bisect start >/dev/null && \
         git bisect bad >/dev/null && git bisect good v1 >/dev/null && \
         test_head=$(git symbolic-ref -q HEAD || echo detached) && test \"$test_head\" = detached",
        &[],
        &["switch", "spam"],
        "spam",
    );
}

#[test]
fn a_branch_in_a_symlinked_head_is_in_use() {
    case(
        "git worktree add -q wt1 local && rm .git/worktrees/wt1/HEAD && \
         ln -s refs/heads/local .git/worktrees/wt1/HEAD",
        &[],
        &["checkout", "local"],
        "local",
    );
}

// ---------------------------------------------------------------------------------------------------
// Failures while setting up the upstream (the branch exists by then, HEAD does not move)

#[test]
fn two_remotes_mapping_into_one_namespace_leave_no_upstream() {
    let (g, p) = case(
        "git config remote.dup.url ../other && \
         git config remote.dup.fetch '+refs/heads/*:refs/remotes/origin/*'",
        &[],
        &["switch", "-c", "feat", "origin/x"],
        "feat",
    );
    assert_eq!(g.stderr_str(), p.stderr_str());
}

#[test]
fn a_held_config_lock_fails_after_creating_the_branch() {
    let (g, p) = case(
        "echo theirs >.git/config.lock",
        &[],
        &["checkout", "-b", "feat", "origin/x"],
        "feat",
    );
    assert_eq!(g.stderr_str(), p.stderr_str());
}

// ---------------------------------------------------------------------------------------------------
// worktree add: the same guess, and the upstream of the branch it creates

#[test]
fn worktree_add_of_a_remote_branch_name_creates_a_tracking_branch() {
    case("", &[], &["worktree", "add", "wt-x", "x"], "x");
    case(
        "",
        &[],
        &["worktree", "add", "-b", "feat", "wt-f", "origin/x"],
        "feat",
    );
}

#[test]
fn worktree_add_guesses_the_remote_branch_of_the_path_name_when_asked() {
    case(
        "",
        &["worktree.guessRemote=true"],
        &["worktree", "add", "wt-g/spam"],
        "spam",
    );
    case("", &[], &["worktree", "add", "wt-g/spam"], "spam");
}

#[test]
fn worktree_add_of_a_name_several_remotes_have_needs_the_default_remote() {
    case("", &[], &["worktree", "add", "wt-foo", "foo"], "foo");
    case(
        "",
        &["checkout.defaultRemote=other"],
        &["worktree", "add", "wt-foo", "foo"],
        "foo",
    );
}
