//! Smaller points of git's behaviour that `git par` must reproduce exactly: `checkout -l`,
//! `--[no-]overwrite-ignore`, pathspec magic in `checkout -- paths` and `restore`, and the
//! `reference-transaction` hook. Each case runs git and git-par side by side on two copies of
//! one repository and compares what they leave: exit code, messages, work tree, index,
//! `git status`, reflogs, and what a hook received.

mod support;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use support::*;

impl Pair {
    /// `git ARGS` in git's copy, `git-par ARGS` in git-par's, both in `subdir` of the work tree
    /// with `env` added; exit codes, standard error and standard output must be equal.
    #[track_caller]
    fn run_in(&self, subdir: &str, env: &[(&str, &str)], args: &[&str]) -> (Run, Run) {
        let g = run_env("git", &self.by_git.join(subdir), env, args);
        let p = run_env(GIT_PAR, &self.by_par.join(subdir), env, args);
        let show = || format!("--- git:\n{}\n--- git-par:\n{}", g.describe(), p.describe());
        assert_eq!(
            g.status.code(),
            p.status.code(),
            "exit codes differ\n{}",
            show()
        );
        // Messages that name the work tree name each side's own.
        let [gs, ps] = [(&g, &self.by_git), (&p, &self.by_par)]
            .map(|(r, dir)| r.stderr_str().replace(&*dir.to_string_lossy(), "<repo>"));
        assert_eq!(gs, ps, "stderr differs\n{}", show());
        assert_eq!(g.stdout_str(), p.stdout_str(), "stdout differs\n{}", show());
        (g, p)
    }

    /// [`Pair::run_in`] at the top of the work tree, without extra environment.
    #[track_caller]
    fn run(&self, args: &[&str]) -> (Run, Run) {
        self.run_in("", &[], args)
    }

    /// Panics unless both sides look the same to git: work tree files, index, status, HEAD.
    #[track_caller]
    fn assert_same(&self) {
        compare_worktrees(&self.by_git, &self.by_par);
        for args in [
            &["ls-files", "-s"][..],
            &["status", "--porcelain", "--ignored"],
            &["symbolic-ref", "-q", "HEAD"],
            &["rev-parse", "HEAD"],
        ] {
            let [g, p] = [&self.by_git, &self.by_par].map(|d| git(d, args).stdout_str());
            assert_eq!(g, p, "`git {args:?}` differs (git, then git-par)");
        }
    }
}

/// Runs `program args` in `cwd` with the tests' clean environment plus `env`.
fn run_env(program: impl AsRef<OsStr>, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    run_with(program, cwd, args, env)
}

/// Writes `content` to `dir/path`, creating its directories.
fn write(dir: &Path, path: &str, content: &str) {
    let p = dir.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// A reflog as `OLD NEW\tMESSAGE` lines (no identity, no time), or that there is none.
fn reflog(dir: &Path, name: &str) -> String {
    let Ok(text) = fs::read_to_string(dir.join(".git/logs").join(name)) else {
        return format!("<no reflog for {name}>");
    };
    text.lines()
        .map(|line| {
            let (head, message) = line.split_once('\t').unwrap_or((line, ""));
            let ids: Vec<&str> = head.splitn(3, ' ').take(2).collect();
            format!("{}\t{message}\n", ids.join(" "))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// checkout -l

#[test]
fn checkout_l_creates_the_reflog_even_with_log_all_ref_updates_off() {
    let pair = Pair::new(|dir| {
        git_ok(dir, ["config", "core.logAllRefUpdates", "false"]);
        write(dir, "a", "a\n");
        git_ok(dir, ["add", "a"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
    });
    pair.run(&["checkout", "-l", "-b", "logged"]);
    pair.run(&["checkout", "-b", "unlogged", "main"]);
    pair.assert_same();
    for name in ["refs/heads/logged", "refs/heads/unlogged", "HEAD"] {
        let [g, p] = [&pair.by_git, &pair.by_par].map(|d| reflog(d, name));
        assert_eq!(g, p, "reflog of {name} (git, then git-par)");
    }
    assert!(reflog(&pair.by_par, "refs/heads/logged").contains("branch: Created from HEAD"));
    assert!(reflog(&pair.by_par, "refs/heads/unlogged").starts_with("<no reflog"));
}

#[test]
fn checkout_l_with_capital_b_and_default_logging_matches_git() {
    let pair = Pair::new(|dir| {
        write(dir, "a", "a\n");
        git_ok(dir, ["add", "a"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        git_ok(dir, ["branch", "old"]);
        write(dir, "a", "b\n");
        git_ok(dir, ["commit", "-q", "-a", "-m", "two"]);
    });
    pair.run(&["checkout", "-l", "-B", "old", "main"]);
    pair.assert_same();
    let [g, p] = [&pair.by_git, &pair.by_par].map(|d| reflog(d, "refs/heads/old"));
    assert_eq!(g, p);
    assert!(p.contains("branch: Reset to main"), "{p}");
}

#[test]
fn checkout_l_orphan_prepares_a_reflog_that_the_first_commit_fills() {
    let pair = Pair::new(|dir| {
        git_ok(dir, ["config", "core.logAllRefUpdates", "false"]);
        write(dir, "a", "a\n");
        git_ok(dir, ["add", "a"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
    });
    pair.run(&["checkout", "-l", "--orphan", "zeta"]);
    pair.assert_same();
    for dir in [&pair.by_git, &pair.by_par] {
        git_dated(dir, &["commit", "-q", "-m", "Zeta"]).assert_success();
    }
    let [g, p] = [&pair.by_git, &pair.by_par].map(|d| reflog(d, "refs/heads/zeta"));
    assert_eq!(g, p);
    assert!(p.contains("commit (initial): Zeta"), "{p}");
    // An orphan left before its first commit loses its reflog again, as in git.
    pair.run(&["checkout", "-l", "--orphan", "eta"]);
    pair.run(&["checkout", "main"]);
    assert!(reflog(&pair.by_par, "refs/heads/eta").starts_with("<no reflog"));
    assert_eq!(
        reflog(&pair.by_git, "refs/heads/eta"),
        reflog(&pair.by_par, "refs/heads/eta")
    );
}

// ---------------------------------------------------------------------------------------------
// --overwrite-ignore / --no-overwrite-ignore

/// `main` has `keep`; `side` adds `d/f` and `ig.o`, which the work tree on `main` holds as
/// ignored files (`*.o`, `d/`), with other content.
fn ignored_in_the_way() -> Pair {
    Pair::new(|dir| {
        write(dir, "keep", "keep\n");
        git_ok(dir, ["add", "keep"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        git_ok(dir, ["checkout", "-q", "-b", "side"]);
        write(dir, "d/f", "tracked\n");
        write(dir, "ig.o", "tracked\n");
        git_ok(dir, ["add", "-f", "d/f", "ig.o"]);
        git_ok(dir, ["commit", "-q", "-m", "two"]);
        git_ok(dir, ["checkout", "-q", "main"]);
        write(dir, ".git/info/exclude", "*.o\nd/\n");
        write(dir, "d/f", "local\n");
        write(dir, "ig.o", "local\n");
    })
}

#[test]
fn no_overwrite_ignore_refuses_like_untracked_files() {
    for cmd in ["checkout", "switch"] {
        let pair = ignored_in_the_way();
        let (_, p) = pair.run(&[cmd, "--no-overwrite-ignore", "side"]);
        assert_eq!(p.status.code(), Some(1));
        assert!(p.stderr_str().contains("\tig.o\n"), "{}", p.describe());
        pair.assert_same();
        assert_eq!(
            fs::read_to_string(pair.by_par.join("ig.o")).unwrap(),
            "local\n"
        );
    }
}

#[test]
fn overwrite_ignore_is_the_default_and_the_last_flag_wins() {
    for args in [
        &["checkout", "side"][..],
        &["checkout", "--overwrite-ignore", "side"],
        &[
            "switch",
            "--no-overwrite-ignore",
            "--overwrite-ignore",
            "side",
        ],
        &["checkout", "-f", "--no-overwrite-ignore", "side"],
    ] {
        let pair = ignored_in_the_way();
        let (_, p) = pair.run(args);
        assert!(p.success(), "{}", p.describe());
        pair.assert_same();
        assert_eq!(
            fs::read_to_string(pair.by_par.join("ig.o")).unwrap(),
            "tracked\n"
        );
    }
}

#[test]
fn no_overwrite_ignore_counts_ignored_files_in_a_directory_in_the_way() {
    // `side` has a file `d` where the work tree holds a directory of ignored files.
    let pair = Pair::new(|dir| {
        write(dir, "keep", "keep\n");
        git_ok(dir, ["add", "keep"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        git_ok(dir, ["checkout", "-q", "-b", "side"]);
        write(dir, "d", "file\n");
        git_ok(dir, ["add", "d"]);
        git_ok(dir, ["commit", "-q", "-m", "two"]);
        git_ok(dir, ["checkout", "-q", "main"]);
        write(dir, ".git/info/exclude", "*.o\n");
        write(dir, "d/x.o", "ignored\n");
    });
    let (_, p) = pair.run(&["checkout", "--no-overwrite-ignore", "side"]);
    assert_eq!(p.status.code(), Some(1));
    pair.assert_same();
    pair.run(&["checkout", "side"]);
    pair.assert_same();
}

// ---------------------------------------------------------------------------------------------
// Pathspec magic

/// Files in nested directories, a `.gitattributes` for `:(attr:...)`, names with glob
/// characters; every tracked file then modified in the work tree, so that what a command
/// restores shows in `git status`.
fn pathspec_repo() -> Pair {
    Pair::new(|dir| {
        for f in [
            "a.c",
            "b.c",
            "A.C",
            "sub/x.c",
            "sub/y.h",
            "sub/deep/z.c",
            "other/o.c",
            "star*",
            "q?",
        ] {
            write(dir, f, &format!("{f}\n"));
        }
        write(dir, ".gitattributes", "*.h diff=h\n");
        git_ok(dir, ["add", "-A"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        for f in [
            "a.c",
            "b.c",
            "A.C",
            "sub/x.c",
            "sub/y.h",
            "sub/deep/z.c",
            "other/o.c",
            "star*",
            "q?",
        ] {
            write(dir, f, "changed\n");
        }
    })
}

/// Runs `args` (in `subdir`, with `env`) on a fresh [`pathspec_repo`] with git and git-par,
/// and compares everything; returns git-par's run.
#[track_caller]
fn pathspec_case(subdir: &str, env: &[(&str, &str)], args: &[&str]) -> Run {
    let pair = pathspec_repo();
    let (_, p) = pair.run_in(subdir, env, args);
    pair.assert_same();
    p
}

/// The paths `git status` reports as modified after a run: what was *not* restored.
fn still_modified(run_dir: &Path) -> String {
    git(run_dir, ["status", "--porcelain"]).stdout_str()
}

#[test]
fn glob_exclude_icase_literal_and_top_magic_select_as_in_git() {
    for args in [
        &["checkout", "--", ":(glob)**/*.c"][..],
        &["checkout", "--", "*.c"],
        &["checkout", "--", ".", ":!*.c"],
        &["checkout", "--", ".", ":^sub"],
        &["checkout", "--", ":(exclude)sub", "."],
        &["checkout", "--", ":(icase)*.C"],
        &["checkout", "--", ":(icase)SUB"],
        &["checkout", "--", ":(literal)q?"],
        &["checkout", "--", ":(glob)q?"],
        &["checkout", "--", "q?"],
        &["checkout", "--", ":(attr:diff=h)"],
        &["checkout", "HEAD", "--", ":!*.h"],
        &["restore", "--", ":!*.c"],
        &["restore", "--", "sub/", ":(exclude,glob)**/z.c"],
        &[
            "restore",
            "--source",
            "HEAD",
            "--staged",
            "--worktree",
            ".",
            ":!sub",
        ],
    ] {
        let p = pathspec_case("", &[], args);
        assert!(p.success(), "{}", p.describe());
    }
    // One that could fail: the exclusion really keeps `a.c` modified.
    let pair = pathspec_repo();
    pair.run(&["checkout", "--", ".", ":!a.c"]);
    assert_eq!(still_modified(&pair.by_par), " M a.c\n");
}

#[test]
fn pathspecs_from_a_subdirectory_are_relative_to_it_unless_top() {
    for args in [
        &["checkout", "--", "."][..],
        &["checkout", "--", ".."],
        &["checkout", "--", "*.c"],
        &["checkout", "--", ":!deep"],
        &["checkout", "--", ":/a.c"],
        &["checkout", "--", ":(top)other"],
        &["checkout", "--", "../a.c"],
        &["restore", "--", ":/"],
    ] {
        let p = pathspec_case("sub", &[], args);
        assert!(p.success(), "{}", p.describe());
    }
    let p = pathspec_case("sub", &[], &["checkout", "--", "../../x"]);
    assert_eq!(p.status.code(), Some(128));
    assert!(
        p.stderr_str().contains("is outside repository"),
        "{}",
        p.describe()
    );
}

#[test]
fn pathspec_environment_variables_change_the_defaults() {
    for (env, spec) in [
        ("GIT_LITERAL_PATHSPECS", "star*"),
        ("GIT_LITERAL_PATHSPECS", "*.c"),
        ("GIT_GLOB_PATHSPECS", "*.c"),
        ("GIT_NOGLOB_PATHSPECS", "*.c"),
        ("GIT_ICASE_PATHSPECS", "SUB/*.C"),
    ] {
        pathspec_case("", &[(env, "1")], &["checkout", "--", spec]);
    }
    // Literal: `*.c` names no file, which is an error there.
    let p = pathspec_case(
        "",
        &[("GIT_LITERAL_PATHSPECS", "1")],
        &["checkout", "--", "*.c"],
    );
    assert_eq!(p.status.code(), Some(1));
}

#[test]
fn each_unmatched_pathspec_is_reported_and_excludes_only_without_positive_matches() {
    let p = pathspec_case("", &[], &["checkout", "--", "nope", "also-nope", "a.c"]);
    assert_eq!(p.status.code(), Some(1));
    assert_eq!(p.stderr_str().lines().count(), 2, "{}", p.describe());
    // No positive match at all: the exclude pathspec is reported too, as git does.
    let p = pathspec_case("", &[], &["checkout", "--", ":!a.c", "nope"]);
    assert!(p.stderr_str().contains("':!a.c'"), "{}", p.describe());
    for args in [
        &["checkout", "--", ":!a.c", ":!b.c"][..],
        &["checkout", "HEAD", "--", ":!a.c", "nope"],
        &["restore", "--", ".", ":!not-there"],
        &["checkout", "--", ""],
        &["checkout", "--", ":(bogus)a"],
        &["checkout", "--", ":(glob,literal)a"],
        &["checkout", "--", ":(glob"],
    ] {
        pathspec_case("", &[], args);
    }
}

#[test]
fn pathspec_from_file_takes_magic_too() {
    for cmd in ["checkout", "restore"] {
        let pair = pathspec_repo();
        for dir in [&pair.by_git, &pair.by_par] {
            fs::write(dir.join("../list"), ":(glob)**/*.c\n:!sub\n").unwrap();
        }
        let (_, p) = pair.run(&[cmd, "--pathspec-from-file=../list"]);
        assert!(p.success(), "{}", p.describe());
        pair.assert_same();
        assert!(still_modified(&pair.by_par).contains("sub/x.c"));
    }
}

// ---------------------------------------------------------------------------------------------
// The reference-transaction hook

/// A `reference-transaction` hook that appends its argument and standard input to `hooklog`
/// beside the repository (hooks run at the top of the work tree), and fails in `prepared` while
/// a file `fail` is there.
const LOGGING_HOOK: &str = "#!/bin/sh\n\
echo \"== $*\" >> ../hooklog\n\
cat >> ../hooklog\n\
test \"$1\" = prepared && test -f ../fail && exit 1\n\
exit 0\n";

/// Two commits on `main`, `other` at the first; the hook installed in `hooks_dir` (relative to
/// the repository; `.git/hooks` or a `core.hooksPath`).
fn hooked_repo(hooks_dir: &str) -> Pair {
    let hooks_dir = hooks_dir.to_owned();
    Pair::new(move |dir| {
        write(dir, "a", "a\n");
        git_ok(dir, ["add", "a"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        write(dir, "a", "b\n");
        git_ok(dir, ["commit", "-q", "-a", "-m", "two"]);
        git_ok(dir, ["branch", "other", "HEAD~1"]);
        let hook = dir.join(&hooks_dir).join("reference-transaction");
        write(
            dir,
            &format!("{hooks_dir}/reference-transaction"),
            LOGGING_HOOK,
        );
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    })
}

/// Runs each command on both sides, noting it in the hook logs, and compares the logs.
#[track_caller]
fn assert_same_hook_lines(pair: &Pair, commands: &[&[&str]]) -> String {
    for args in commands {
        for dir in [&pair.by_git, &pair.by_par] {
            let log = dir.join("../hooklog");
            let mut text = fs::read_to_string(&log).unwrap_or_default();
            text.push_str(&format!("### {args:?}\n"));
            fs::write(&log, text).unwrap();
        }
        pair.run(args);
    }
    pair.assert_same();
    let [g, p] = [&pair.by_git, &pair.by_par]
        .map(|d| fs::read_to_string(d.join("../hooklog")).unwrap_or_default());
    assert_eq!(g, p, "hook lines (git, then git-par)");
    p
}

#[test]
fn reference_transaction_sees_what_git_passes_for_switches_branches_and_resets() {
    let pair = hooked_repo(".git/hooks");
    let log = assert_same_hook_lines(
        &pair,
        &[
            &["checkout", "other"],
            &["checkout", "main"],
            &["checkout", "main"],
            &["checkout", "--detach"],
            &["checkout", "--detach"],
            &["checkout", "HEAD~1"],
            &["reset", "--hard", "main"],
            &["checkout", "main"],
            &["checkout", "-b", "new"],
            &["checkout", "-B", "new", "main~1"],
            &["checkout", "-B", "new2"],
            &["reset", "--hard", "main"],
            &["reset", "--hard"],
            &["checkout", "-l", "-b", "logged"],
            &["switch", "-c", "x", "other"],
            &["checkout", "HEAD"],
            &["switch", "-C", "main", "main"],
            &["checkout", "main", "--", "."],
            &["restore", "."],
            &["switch", "--detach", "other"],
            &["checkout", "-f", "main"],
            &["switch", "--orphan", "o2"],
        ],
    );
    // Symbolic HEAD updates are shown as git 2.47 shows them.
    assert!(log.contains(" ref:refs/heads/other HEAD\n"), "{log}");
    assert!(log.contains("== aborted\n"), "{log}");
}

#[test]
fn reference_transaction_cleanup_of_sequencer_state_and_hooks_path() {
    let pair = hooked_repo("hooks");
    for dir in [&pair.by_git, &pair.by_par] {
        git_ok(dir, ["config", "core.hooksPath", "hooks"]);
        let head = git_str(dir, ["rev-parse", "HEAD"]);
        fs::write(dir.join(".git/CHERRY_PICK_HEAD"), format!("{head}\n")).unwrap();
        fs::write(dir.join(".git/REVERT_HEAD"), format!("{head}\n")).unwrap();
    }
    let log = assert_same_hook_lines(&pair, &[&["checkout", "-f", "other"], &["reset", "--hard"]]);
    assert!(log.contains(" CHERRY_PICK_HEAD\n"), "{log}");
}

#[test]
fn reference_transaction_refusing_in_prepared_aborts_the_update() {
    let pair = hooked_repo(".git/hooks");
    for dir in [&pair.by_git, &pair.by_par] {
        fs::write(dir.join("../fail"), "").unwrap();
    }
    let log = assert_same_hook_lines(
        &pair,
        &[
            &["checkout", "other"],
            &["checkout", "-b", "zz"],
            &["reset", "--hard", "other"],
            &["switch", "--detach", "other"],
        ],
    );
    assert!(log.contains("== aborted\n"), "{log}");
    assert_eq!(
        git_str(&pair.by_par, ["symbolic-ref", "HEAD"]),
        "refs/heads/main"
    );
    assert!(!git(&pair.by_par, ["rev-parse", "--verify", "-q", "zz"]).success());
    let (_, p) = pair.run(&["checkout", "other"]);
    assert_eq!(p.status.code(), Some(128));
    assert!(p
        .stderr_str()
        .contains("fatal: ref updates aborted by hook"));
}

/// A commit of the empty tree, whose object no repository needs to store (git knows it without
/// reading it; `git commit-tree` of its id writes none): checked out, reset to and left as git
/// does (t7003-filter-branch.47).
#[test]
fn the_empty_tree_is_known_without_its_object() {
    let pair = Pair::new(|dir| {
        write(dir, "a", "a\n");
        git_ok(dir, ["add", "a"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        let empty = git_str(
            dir,
            [
                "commit-tree",
                "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                "-m",
                "empty",
            ],
        );
        git_ok(dir, ["branch", "empty", empty.trim()]);
    });
    // Not stored (git's `cat-file -e` knows it all the same).
    assert!(!pair
        .by_par
        .join(".git/objects/4b/825dc642cb6eb9a060e54bf8d69288fbee4904")
        .exists());
    assert!(git_str(&pair.by_par, ["count-objects", "-v"]).contains("in-pack: 0"));
    pair.run(&["checkout", "-q", "empty"]);
    pair.assert_same();
    pair.run(&["checkout", "-q", "main"]);
    pair.assert_same();
    pair.run(&["reset", "-q", "--hard", "empty"]);
    pair.assert_same();
}

/// A directory where the index has a file that the update removes (the target has files
/// below that name): git warns that it cannot unlink it and goes on, writing the target's
/// files into that directory (t6430.26); so does git-par.
#[test]
fn an_entry_that_cannot_be_unlinked_is_warned_about() {
    let pair = Pair::new(|dir| {
        write(dir, "d/e", "e\n");
        write(dir, "other", "o\n");
        git_ok(dir, ["add", "."]);
        git_ok(dir, ["commit", "-q", "-m", "two"]);
        git_ok(dir, ["tag", "two"]);
        git_ok(dir, ["rm", "-q", "-r", "d"]);
        write(dir, "d", "x\n");
        git_ok(dir, ["add", "d"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        fs::remove_file(dir.join("d")).unwrap();
        write(dir, "d/e", "e\n");
    });
    let (_, by_par) = pair.run(&["reset", "--hard", "two"]);
    assert!(by_par
        .stderr_str()
        .contains("warning: unable to unlink 'd': Is a directory"));
    pair.assert_same();
}

/// With `merge.renormalize`, git's `checkout -m` passes both sides through the attributes'
/// conversions before merging (t6418.8/9); git-par hands such a merging checkout to git.
#[test]
fn merging_checkouts_under_merge_renormalize_are_gits() {
    let pair = Pair::new(|dir| {
        write(dir, "file", "one\ntwo\nthree\n");
        git_ok(dir, ["add", "file"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        git_ok(dir, ["branch", "b"]);
        write(dir, "file", "one\ntwo\nthree changed\n");
        git_ok(dir, ["commit", "-q", "-am", "main"]);
        git_ok(dir, ["checkout", "-q", "b"]);
        write(dir, "file", "one changed\ntwo\nthree\n");
        git_ok(dir, ["config", "merge.renormalize", "true"]);
    });
    let args = ["checkout", "-m", "main"];
    let by_git = run_env("git", &pair.by_git, &[], &args);
    let by_par = run_env(GIT_PAR, &pair.by_par, &[("GIT_PAR_TRACE", "1")], &args);
    assert_eq!(by_par.status.code(), by_git.status.code());
    assert_eq!(by_par.stdout_str(), by_git.stdout_str());
    let stderr = by_par.stderr_str();
    let (trace, rest): (Vec<&str>, Vec<&str>) =
        stderr.lines().partition(|l| l.starts_with("git-par: "));
    assert_eq!(rest.join("\n"), by_git.stderr_str().trim_end());
    assert!(
        trace.iter().any(|l| l.contains("merge.renormalize")),
        "{trace:?}"
    );
    pair.assert_same();
    assert_eq!(
        fs::read_to_string(pair.by_par.join("file")).unwrap(),
        "one changed\ntwo\nthree changed\n"
    );
}

// ---------------------------------------------------------------------------------------------
// A blob the object database lacks

/// `main` has `f` and `k`; `next` changes `f`, and that new blob (a loose object) is then
/// deleted, as in a damaged or incompletely fetched repository.
fn next_blob_missing() -> Pair {
    Pair::new(|dir| {
        write(dir, "f", "old\n");
        write(dir, "k", "keep\n");
        git_ok(dir, ["add", "f", "k"]);
        git_ok(dir, ["commit", "-q", "-m", "one"]);
        git_ok(dir, ["checkout", "-q", "-b", "next"]);
        write(dir, "f", "new\n");
        git_ok(dir, ["commit", "-q", "-am", "two"]);
        git_ok(dir, ["checkout", "-q", "main"]);
        let id = git_str(dir, ["rev-parse", "next:f"]);
        fs::remove_file(dir.join(".git/objects").join(&id[..2]).join(&id[2..])).unwrap();
    })
}

/// git unlinks the file an update replaces before it reads the new blob: where that blob is
/// missing, the path is left missing (` D`), never the old content under the new entry. A
/// switch still moves HEAD and exits 0; git also prints its cache-tree's `invalid object`
/// line, which git-par does not (differences.md), so its first error line is compared.
#[test]
fn a_switch_to_a_missing_blob_leaves_the_path_missing_as_git_does() {
    let pair = next_blob_missing();
    let [g, p] = [(&pair.by_git, "git"), (&pair.by_par, GIT_PAR)]
        .map(|(dir, program)| run_env(program, dir, &[], &["switch", "next"]));
    assert_eq!(g.status.code(), p.status.code(), "{}", p.describe());
    assert_eq!(g.stdout_str(), p.stdout_str());
    let first = |r: &Run| r.stderr_str().lines().next().map(str::to_owned);
    assert_eq!(first(&g), first(&p), "{}", p.describe());
    assert!(p.stderr_str().contains("unable to read sha1 file of f"));
    pair.assert_same();
}

/// A fast-forward whose entry cannot be written fails as git's `checkout_fast_forward` does:
/// exit 1, the error, HEAD and the index where they were, the path already unlinked.
#[test]
fn a_fast_forward_to_a_missing_blob_fails_as_git_does() {
    for args in [
        &["merge", "--ff-only", "next"][..],
        &["pull", "--ff-only", ".", "next"],
    ] {
        let pair = next_blob_missing();
        let (_, p) = pair.run(args);
        assert_eq!(p.status.code(), Some(1), "{args:?}");
        pair.assert_same();
        assert!(!pair.by_par.join("f").exists(), "{args:?}");
    }
}

/// `reset --hard` to it fails too, with the index as it was (`Could not reset index file`).
#[test]
fn a_hard_reset_to_a_missing_blob_fails_as_git_does() {
    let pair = next_blob_missing();
    pair.run(&["reset", "--hard", "next"]);
    pair.assert_same();
}
