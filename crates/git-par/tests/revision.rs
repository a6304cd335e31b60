//! Revision syntax of `git par switch`/`checkout` against git's: `-` and `@{-N}` (the previous
//! branches, from the HEAD reflog), `A...B` (the merge base), `@`, `switch --detach` without an
//! argument, `checkout <path>` without `--` (git's disambiguation between revisions and paths),
//! option conflicts and invalid branch names, and the messages around a detached HEAD
//! (ambiguous-ref warning, detached-HEAD advice, commits left behind).
//!
//! Each test builds a repository with real git, copies it twice, and runs every step with git on
//! one copy and git-par on the other; after each step the exit codes, the first line of stderr
//! (or all of it), HEAD, the refs, the HEAD reflog's messages, the index and the work tree must
//! be the same.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use support::*;

/// Fixed dates so that commits made on both sides have the same ids.
const DATES: &str = "export GIT_AUTHOR_DATE='2005-04-07 22:13:13 +0000' \
                     GIT_COMMITTER_DATE='2005-04-07 22:13:13 +0000'";

/// One repository, copied for git (`git/`) and git-par (`par/`).
struct Pair {
    _s: Scratch,
    by_git: PathBuf,
    by_par: PathBuf,
}

/// How much of stderr must be the same.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stderr {
    FirstLine,
    All,
}

impl Pair {
    /// Runs the shell `setup` (with fixed dates) in a new repository, then copies it.
    fn new(setup: &str) -> Pair {
        let s = scratch();
        let base = s.join("base");
        fs::create_dir_all(&base).expect("create base");
        sh(&base, &format!("git init -q -b main && {setup}"));
        let by_git = s.join("git");
        let by_par = s.join("par");
        copy_repo(&base, &by_git);
        copy_repo(&base, &by_par);
        Pair {
            _s: s,
            by_git,
            by_par,
        }
    }

    /// Runs the same shell commands (real git) on both sides.
    fn sh(&self, script: &str) {
        sh(&self.by_git, script);
        sh(&self.by_par, script);
    }

    /// `git <args>` on git's side and `git-par <args>` on git-par's side, in `subdir`; panics
    /// unless exit codes, stderr (`how`) and the resulting states are the same. Returns git-par's run.
    #[track_caller]
    fn step_in(&self, subdir: &str, args: &[&str], how: Stderr) -> Run {
        let g = git(&self.by_git.join(subdir), args);
        let p = git_par(&self.by_par.join(subdir), args);
        let what = format!(
            "{args:?}\n--- git:\n{}\n--- git-par:\n{}",
            g.describe(),
            p.describe()
        );
        assert_eq!(
            g.status.code(),
            p.status.code(),
            "exit codes differ: {what}"
        );
        let (ge, pe) = (g.stderr_str(), p.stderr_str());
        match how {
            Stderr::FirstLine => assert_eq!(
                ge.lines().next(),
                pe.lines().next(),
                "first stderr lines differ: {what}"
            ),
            Stderr::All => assert_eq!(ge, pe, "stderr differs: {what}"),
        }
        assert_eq!(g.stdout_str(), p.stdout_str(), "stdout differs: {what}");
        self.assert_same_state(&what);
        p
    }

    #[track_caller]
    fn step(&self, args: &[&str]) -> Run {
        self.step_in("", args, Stderr::FirstLine)
    }

    #[track_caller]
    fn step_all(&self, args: &[&str]) -> Run {
        self.step_in("", args, Stderr::All)
    }

    #[track_caller]
    fn assert_same_state(&self, what: &str) {
        for (label, args) in [
            ("HEAD", &["symbolic-ref", "-q", "HEAD"][..]),
            ("HEAD commit", &["rev-parse", "-q", "--verify", "HEAD"][..]),
            (
                "refs",
                &["for-each-ref", "--format=%(refname) %(objectname)"][..],
            ),
            (
                "HEAD reflog",
                &["reflog", "show", "--format=%H %gs", "HEAD"][..],
            ),
            ("index", &["ls-files", "-s"][..]),
            (
                "status",
                &["status", "--porcelain", "--untracked-files=all"][..],
            ),
        ] {
            let g = git(&self.by_git, args).stdout_str();
            let p = git(&self.by_par, args).stdout_str();
            assert_eq!(g, p, "{label} differs after {what}");
        }
        compare_worktrees(&self.by_git, &self.by_par);
    }
}

fn sh(dir: &Path, script: &str) {
    let script = format!("set -e; {DATES}; {script}");
    run("sh", dir, [OsString::from("-c"), OsString::from(script)]).assert_success();
}

/// `initial` (world) on `other`, `second` on `main`.
const TWO_BRANCHES: &str = "echo hello >world && git add world && git commit -q -m initial && \
                            git branch other && echo again >>world && git commit -q -a -m second";

#[test]
fn dash_and_at_minus_n_name_the_previous_branches() {
    let pair = Pair::new(TWO_BRANCHES);
    // No previous branch yet: `-` is a pathspec for checkout, an invalid reference for switch.
    pair.step(&["checkout", "-"]);
    pair.step(&["switch", "-"]);
    pair.step(&["checkout", "other"]);
    pair.step(&["checkout", "-"]);
    pair.step(&["switch", "-"]);
    pair.step(&["checkout", "-"]);
    // Detached: `-` goes back to the branch, and then to the commit (detached again).
    pair.step(&["checkout", "HEAD^0"]);
    pair.step(&["checkout", "-"]);
    pair.step(&["checkout", "-"]);
    pair.step(&["switch", "main"]);
    for i in 1..=5 {
        let name = format!("b{i}");
        pair.step(&["checkout", "-b", &name]);
    }
    for spec in ["@{-1}", "@{-3}", "@{-2}", "@{-4}"] {
        pair.step(&["checkout", spec]);
        pair.step(&["switch", spec]);
    }
    // Start points and more: `@{-1}` expands to the branch name in the reflog and messages.
    pair.step(&["checkout", "-b", "from-prev", "@{-1}"]);
    pair.step(&["switch", "-c", "from-dash", "-"]);
    pair.step(&["checkout", "@{-1}~1"]);
    pair.step(&["checkout", "@{-99}"]);
    pair.step(&["switch", "@{-99}"]);
}

#[test]
fn merge_base_forms_detach_at_the_merge_base() {
    let pair = Pair::new(&format!(
        "{TWO_BRANCHES} && git checkout -q -b another other && echo third >>world && \
         git commit -q -a -m third && git checkout -q main"
    ));
    for spec in ["another...main", "...main", "main..."] {
        pair.step(&["checkout", "another"]);
        pair.step(&["checkout", spec]);
    }
    pair.step(&["checkout", "main"]);
    pair.step(&["checkout", "-b", "mb", "main...another"]);
    pair.step(&["switch", "-c", "mb2", "another..."]);
    pair.step(&["switch", "--detach", "main...another"]);
    pair.step(&["switch", "main...another"]);
    // Several merge bases (a criss-cross merge): not a revision.
    pair.sh(
        "git checkout -q -b x1 other && echo x1 >x1 && git add x1 && git commit -q -m x1 && \
         git checkout -q -b y1 other && echo y1 >y1 && git add y1 && git commit -q -m y1 && \
         git checkout -q x1 && git merge -q --no-edit y1 -m mx && git checkout -q y1 && \
         git merge -q --no-edit x1~1 -m my && git checkout -q main",
    );
    pair.step(&["checkout", "x1...y1"]);
    pair.step(&["switch", "--detach", "x1...y1"]);
}

#[test]
fn at_and_head_keep_the_branch_and_detach_without_argument() {
    let pair = Pair::new(TWO_BRANCHES);
    pair.step(&["checkout", "@"]);
    pair.step(&["checkout", "HEAD"]);
    pair.step(&["checkout", "--detach"]);
    pair.step(&["checkout", "main"]);
    pair.step(&["switch", "--detach"]);
    pair.step(&["switch", "--detach"]);
    pair.step(&["checkout", "@"]);
    pair.step(&["switch", "main"]);
    pair.step(&["switch", "--detach", "@"]);
    pair.step(&["checkout", "-"]);
    pair.step(&["switch"]);
}

#[test]
fn paths_without_dash_dash_are_disambiguated_as_git_does() {
    let pair = Pair::new(
        "echo hello >world && echo hello >all && mkdir sub && echo s >sub/s && \
         git add . && git commit -q -m initial && git branch world && \
         echo bye >all && git commit -q -a -m bye",
    );
    pair.step(&["checkout", "world"]);
    pair.sh("echo changed >all && echo changed >world");
    // `all` is no revision: a path, restored from the index.
    pair.step(&["checkout", "all"]);
    // `world` is a branch and a file: the branch wins when alone, ambiguous with paths.
    pair.step(&["checkout", "world", "all"]);
    pair.step(&["checkout", "world", "--", "world"]);
    pair.step(&["checkout", "main", "all"]);
    pair.step_in("sub", &["checkout", "world", "../all"], Stderr::FirstLine);
    pair.sh("echo changed >sub/s && echo changed >all");
    pair.step(&["checkout", "."]);
    pair.step(&["checkout", "nosuch"]);
    pair.step(&["checkout", "nosuch", "all"]);
    pair.step(&["checkout", "HEAD", "main", "--"]);
    pair.step(&["checkout", "nosuch", "--"]);
    pair.step(&["checkout", "world", "--"]);
}

#[test]
fn option_conflicts_and_invalid_names_are_refused_like_git() {
    let pair = Pair::new(&format!(
        "{TWO_BRANCHES} && git tag tag other && git checkout -q other && git checkout -q main"
    ));
    pair.step_all(&["checkout", "--detach", "-b", "newbranch", "tag"]);
    pair.step_all(&["switch", "--detach", "-c", "newbranch"]);
    pair.step_all(&["checkout", "-b", "@{-1}"]);
    pair.step_all(&["checkout", "-b", "-"]);
    pair.step_all(&["checkout", "-b", "a..b"]);
    pair.step_all(&["checkout", "-b", "HEAD"]);
    pair.step_all(&["switch", "-c", "main"]);
    pair.step_all(&["checkout", "-b", "branch4", "world"]);
    pair.step_all(&["checkout", "-b", "branch4", "nosuch"]);
    pair.step_all(&["checkout", "-b", "branch5", "other", "world"]);
    pair.step_all(&["checkout", "--detach", "tag", "world"]);
    pair.step_all(&["switch", "main^{commit}"]);
    pair.step_all(&[
        "-c",
        "advice.suggestDetachingHead=false",
        "switch",
        "main^{commit}",
    ]);
    pair.step_all(&["switch", "tag"]);
    pair.step_all(&["switch", "main^{tree}"]);
    pair.step_all(&["checkout", "main^{tree}"]);
    pair.step_all(&["switch", "nosuch"]);
    pair.step(&["checkout", "-b", "ok", "tag"]);
}

#[test]
fn detached_head_messages_match_git() {
    let pair = Pair::new(&format!(
        "{TWO_BRANCHES} && echo 3 >>world && git commit -q -a -m three && \
         echo 4 >>world && git commit -q -a -m four"
    ));
    let advice = "advice.detachedHead=true";
    pair.step_all(&["-c", advice, "checkout", "HEAD^"]);
    pair.step_all(&["-c", advice, "-c", "core.abbrev=12", "checkout", "HEAD^"]);
    pair.step_all(&["-c", advice, "checkout", "main"]);
    pair.step_all(&["-c", advice, "checkout", "--detach", "HEAD^"]);
    pair.step_all(&["-c", advice, "switch", "main"]);
    // Commits left behind: one, then two, then more than four.
    pair.step_all(&["checkout", "--detach", "main"]);
    pair.sh("echo o1 >o && git add o && git commit -q -m orphan1");
    pair.step_all(&["-c", advice, "checkout", "main"]);
    pair.step_all(&["checkout", "--detach", "main"]);
    pair.sh(
        "echo o1 >o && git add o && git commit -q -m orphan1 && echo o2 >o && \
         git commit -q -a -m orphan2",
    );
    pair.step_all(&["checkout", "main"]);
    pair.step_all(&["checkout", "--detach", "main"]);
    pair.sh("for i in 1 2 3 4 5 6 7; do echo $i >o && git add o && git commit -q -m o$i; done");
    pair.step_all(&["-c", advice, "checkout", "HEAD~6"]);
    pair.step_all(&["-c", advice, "switch", "-c", "keep"]);
}

#[test]
fn ambiguous_refs_warn_and_the_branch_wins() {
    let pair = Pair::new(&format!(
        "{TWO_BRANCHES} && git branch ambiguity other && git branch vagueness other && \
         git tag ambiguity && git tag vagueness HEAD:world"
    ));
    pair.step_all(&["checkout", "ambiguity"]);
    pair.step_all(&["checkout", "main"]);
    pair.step_all(&["checkout", "vagueness"]);
    pair.step_all(&["checkout", "-"]);
    pair.step_all(&["checkout", "-"]);
    pair.step_all(&["switch", "ambiguity^0"]);
    pair.step_all(&[
        "-c",
        "core.warnAmbiguousRefs=false",
        "checkout",
        "ambiguity",
    ]);
}

#[test]
fn checkout_rev_paths_leaves_alone_unmerged_paths_the_rev_lacks() {
    let pair = Pair::new(
        "mkdir dir && echo c >dir/common && echo n >dir/next0 && git add . && \
         git commit -q -m next && git branch next && git rm -q dir/next0 && echo m >dir/main && \
         git add dir/main && git commit -q -m main && git checkout -q next",
    );
    let unmerge = "git reset -q --hard && git rm -q dir/next0 && \
                   e=$(git hash-object -w --stdin </dev/null) && \
                   printf '100644 %s 1\\tdir/next0\\n100644 %s 2\\tdir/next0\\n' $e $e | \
                   git update-index --index-info";
    pair.sh(unmerge);
    pair.step(&["checkout", "main", "dir"]);
    pair.sh(unmerge);
    pair.step(&["checkout", "main", "--", "dir"]);
    // From the index, the unmerged path is refused.
    pair.sh(unmerge);
    pair.step(&["checkout", "dir"]);
}

#[test]
fn at_upstream_names_a_local_upstream_branch_and_a_remote_one_detaches() {
    let pair = Pair::new(&format!(
        "{TWO_BRANCHES} && git branch --set-upstream-to=other main >/dev/null && \
         git update-ref refs/remotes/origin/main HEAD~1 && git remote add origin /nowhere && \
         git branch far && git config branch.far.remote origin && \
         git config branch.far.merge refs/heads/main"
    ));
    pair.step(&["checkout", "@{u}"]);
    pair.step(&["checkout", "main"]);
    pair.step(&["switch", "main@{upstream}"]);
    pair.step(&["checkout", "-b", "from-up", "main@{u}"]);
    pair.step(&["switch", "far"]);
    pair.step(&["checkout", "@{u}"]);
    pair.step(&["checkout", "-"]);
    pair.step(&["switch", "@{u}"]);
}
