//! `git par sparse-checkout` against `git sparse-checkout`: each scenario runs the same steps
//! with git in one copy of a repository built by git and with git-par in another, and after
//! every step compares exit codes, standard output and error, the pattern file's bytes, the
//! configuration files (`config`, `config.worktree`), the index (`git ls-files -t -s` and the
//! flags of `ls-files -s --debug`: the skip-worktree bits; its cache-tree and untracked cache),
//! the work trees and `git status --porcelain`.

mod support;

use std::fs;
use std::path::Path;

use support::*;

fn write(root: &Path, path: &str, content: &str) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// git's t1091 repository: `a` at the top and in `folder1`, `folder2`, `deep`, `deep/deeper1`,
/// `deep/deeper2` and `deep/deeper1/deepest`.
fn t1091(root: &Path) {
    fs::create_dir_all(root).unwrap();
    git_ok(root, ["init", "-q", "-b", "main", "."]);
    for d in [
        "",
        "folder1/",
        "folder2/",
        "deep/",
        "deep/deeper1/",
        "deep/deeper2/",
        "deep/deeper1/deepest/",
    ] {
        write(root, &format!("{d}a"), "initial\n");
    }
    write(root, "deep/deeper1/x y", "a name to quote\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "initial"]);
}

/// One step of a scenario.
struct Step {
    args: Vec<String>,
    /// Run by real git in both copies (setting the stage), not compared.
    both_git: bool,
    /// Standard input.
    stdin: Option<String>,
    /// A directory below the top to run in.
    cwd: Option<&'static str>,
}

/// A compared step: `git ARGS` against `git-par ARGS`.
fn cmp(args: &[&str]) -> Step {
    Step {
        args: args.iter().map(|s| s.to_string()).collect(),
        both_git: false,
        stdin: None,
        cwd: None,
    }
}

/// A stage-setting step run by git in both copies.
fn both(args: &[&str]) -> Step {
    Step {
        both_git: true,
        ..cmp(args)
    }
}

fn with_stdin(mut step: Step, input: &str) -> Step {
    step.stdin = Some(input.to_owned());
    step
}

fn in_dir(mut step: Step, dir: &'static str) -> Step {
    step.cwd = Some(dir);
    step
}

/// `program args` in `cwd` with git's clean test environment and `stdin` fed in.
fn run_in(program: &str, cwd: &Path, args: &[String], stdin: Option<&str>) -> Run {
    run_with_input(program, cwd, args, stdin.unwrap_or_default().as_bytes())
}

/// Everything a step may change, as text: pattern file, configuration, index bits, status.
fn snapshot(dir: &Path) -> String {
    let read = |p: &str| {
        fs::read(dir.join(p))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|_| "<missing>".into())
    };
    let flags: Vec<String> = index_debug_without_stat(dir, &[]);
    // Read before `status`, which may write the index (and its untracked cache) back.
    let (tree, untracked) = (cache_tree_dump(dir), untracked_cache_dump(dir));
    format!(
        "info/sparse-checkout:\n{}\nconfig:\n{}\nconfig.worktree:\n{}\nls-files -t -s:\n{}\n--debug:\n{}\ncache-tree:\n{tree}\nuntracked cache:\n{untracked}\nstatus:\n{}",
        read(".git/info/sparse-checkout"),
        read(".git/config"),
        read(".git/config.worktree"),
        git_str(dir, ["ls-files", "-t", "-s"]),
        flags.join("\n"),
        git_str(dir, ["status", "--porcelain", "--untracked-files=all"]),
    )
}

/// Run `steps` on two copies of what `setup` builds, git in one and git-par in the other.
#[track_caller]
fn same_as_git(setup: impl Fn(&Path), steps: &[Step]) {
    let s = scratch();
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    setup(&by_git);
    copy_repo(&by_git, &by_par);
    // The copy's files have other stat data than its index records: git's sparse-checkout
    // (which does not refresh) would call them not up to date.
    git(&by_par, ["update-index", "-q", "--refresh"]);
    for step in steps {
        let line = step.args.join(" ");
        let dir = |root: &Path| match step.cwd {
            Some(d) => root.join(d),
            None => root.to_owned(),
        };
        if step.both_git {
            // `sh -c ...` steps change the work trees; the others are git commands.
            let (program, args) = match step.args.split_first() {
                Some((sh, rest)) if sh == "sh" => ("sh", rest.to_vec()),
                _ => ("git", step.args.clone()),
            };
            run_in(program, &dir(&by_git), &args, step.stdin.as_deref()).assert_success();
            run_in(program, &dir(&by_par), &args, step.stdin.as_deref()).assert_success();
            continue;
        }
        let expected = run_in("git", &dir(&by_git), &step.args, step.stdin.as_deref());
        let actual = run_in(GIT_PAR, &dir(&by_par), &step.args, step.stdin.as_deref());
        assert_same_output(&line, &expected, &actual, true);
        compare_worktrees(&by_git, &by_par);
        assert_eq!(snapshot(&by_git), snapshot(&by_par), "after {line}");
    }
}

/// Cone mode: set, add (merged into the patterns, parents and siblings), a narrower set that
/// leaves a modified file in place with git's warning, reapply once it is clean again, disable.
#[test]
fn cone_set_add_reapply_disable() {
    same_as_git(
        t1091,
        &[
            cmp(&["sparse-checkout", "set", "deep"]),
            cmp(&["sparse-checkout", "add", "folder1", "deep/deeper1/deepest"]),
            cmp(&["sparse-checkout", "add", "deep/deeper2", "folder2/"]),
            cmp(&["sparse-checkout", "set", "deep"]),
        ],
    );
    same_as_git(
        t1091,
        &[
            cmp(&["sparse-checkout", "set", "deep"]),
            cmp(&["sparse-checkout", "list"]),
            with_stdin(
                cmp(&["sparse-checkout", "set", "--stdin"]),
                "deep/deeper1\n\"deep/deeper1/x y\"\n",
            ),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// What the index keeps besides its entries, as git keeps it: `update_sparsity` leaves the
/// cache-tree alone (an invalidated node stays invalid, none is rebuilt) and invalidates
/// nothing in the untracked cache, whether entries leave the work tree or come back.
#[test]
fn cache_tree_and_untracked_cache_are_kept_as_git_keeps_them() {
    let setup = |root: &Path| {
        t1091(root);
        git_ok(root, ["config", "core.untrackedCache", "true"]);
        write(root, "folder1/untracked", "u\n");
        write(root, "deep/deeper2/untracked", "u\n");
    };
    same_as_git(
        setup,
        &[
            // The cache filled in each copy (it names the work tree it was made for).
            both(&["status", "--porcelain"]),
            cmp(&["sparse-checkout", "set", "deep/deeper1"]),
            cmp(&["sparse-checkout", "add", "folder2"]),
            // A staged change invalidates its directories' cache-tree nodes.
            both(&["sh", "-c", "echo staged >folder2/a && git add folder2/a"]),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "set", "deep"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// A file with local changes outside the new patterns stays, without the skip-worktree bit,
/// with git's warning; `disable` brings everything back and is silent.
#[test]
fn local_changes_are_left_with_the_warning() {
    let dirty = |root: &Path| {
        t1091(root);
        git_ok(root, ["sparse-checkout", "set", "deep"]);
        write(root, "deep/deeper2/a", "update\n");
    };
    same_as_git(
        dirty,
        &[
            cmp(&["sparse-checkout", "set", "deep/deeper1"]),
            cmp(&["sparse-checkout", "reapply"]),
            both(&["checkout", "--", "deep/deeper2/a"]),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
    // The same in non-cone mode, from a full checkout (git's t1091 "warns with dirty status").
    let dirty_full = |root: &Path| {
        t1091(root);
        write(root, "folder1/a", "dirty\n");
    };
    same_as_git(
        dirty_full,
        &[
            cmp(&["sparse-checkout", "init", "--no-cone"]),
            cmp(&["sparse-checkout", "set", "/folder2/*", "/deep/deeper1/*"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// git's `update_sparsity` does not refresh the index: a file whose stat data changed is not up
/// to date even when its content is the same, and stays (its bit clear), with the warning; a
/// refresh then lets it go.
#[test]
fn stat_changes_alone_keep_a_file() {
    same_as_git(
        t1091,
        &[
            both(&["sh", "-c", "touch -d '2001-01-01 00:00' folder1/a"]),
            cmp(&["sparse-checkout", "set", "deep"]),
            both(&["update-index", "-q", "--refresh"]),
            cmp(&["sparse-checkout", "reapply"]),
        ],
    );
}

/// Unmerged entries keep their stages and files, with git's warning, in every subcommand.
#[test]
fn unmerged_entries_are_left_with_the_warning() {
    let unmerged = |root: &Path| {
        t1091(root);
        let blob = git_str(root, ["rev-parse", "HEAD:folder1/a"]);
        let zero = "0".repeat(40);
        let input = format!("0 {zero}\tfolder1/a\n100644 {blob} 1\tfolder1/a\n");
        run_with_input(
            "git",
            root,
            ["update-index", "--index-info"],
            input.as_bytes(),
        )
        .assert_success();
    };
    same_as_git(
        unmerged,
        &[
            cmp(&["sparse-checkout", "init", "--no-cone"]),
            cmp(&["sparse-checkout", "set", "/folder2/*", "/deep/deeper1/*"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// Non-cone patterns from standard input and the command line, the warning for a file named
/// without a leading slash, and `add` appending to the patterns.
#[test]
fn non_cone_patterns_stdin_and_warnings() {
    same_as_git(
        t1091,
        &[
            with_stdin(
                cmp(&["sparse-checkout", "set", "--no-cone", "--stdin"]),
                "/*\n!/*/\n/folder1/\n*deeper2*\n",
            ),
            cmp(&["sparse-checkout", "add", "deep/deeper1/a"]),
            cmp(&["sparse-checkout", "list"]),
            cmp(&["sparse-checkout", "set", "--no-cone"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// git's errors and their exit codes, with what git changed before it died: a file where cone
/// mode wants directories (git has recorded the mode by then), patterns in cone mode, `add` and
/// `reapply` outside a sparse checkout, an unknown option, a held index lock.
#[test]
fn errors_as_git() {
    same_as_git(
        t1091,
        &[
            cmp(&["sparse-checkout", "add", "deep"]),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "set", "--cone", "a"]),
            cmp(&["sparse-checkout", "set", "deep/deeper1/a", "folder1"]),
            cmp(&["sparse-checkout", "set", "--skip-checks", "a", "folder1"]),
            cmp(&["sparse-checkout", "set", "/deep"]),
            cmp(&["sparse-checkout", "set", "de*p"]),
            cmp(&["sparse-checkout", "set", "--no-skip-checks", "deep"]),
            cmp(&["sparse-checkout", "set", "--bogus", "deep"]),
            cmp(&["sparse-checkout", "frobnicate"]),
        ],
    );
    let locked = |root: &Path| {
        t1091(root);
        fs::write(root.join(".git/index.lock"), "").unwrap();
    };
    let s = scratch();
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    locked(&by_git);
    copy_repo(&by_git, &by_par);
    let args = ["sparse-checkout", "set", "deep"].map(String::from);
    let expected = run_in("git", &by_git, &args, None);
    let actual = run_in(GIT_PAR, &by_par, &args, None);
    assert_eq!(expected.status.code(), actual.status.code());
    let first = |r: &Run| r.stderr_str().lines().next().unwrap_or_default().to_owned();
    assert_eq!(
        first(&expected).replace(by_git.to_str().unwrap(), "R"),
        first(&actual).replace(by_par.to_str().unwrap(), "R")
    );
    // Nothing written: no patterns, the whole work tree.
    assert!(!by_par.join(".git/info/sparse-checkout").exists());
    assert!(by_par.join("folder1/a").exists());
}

/// Arguments given below the top of the work tree are relative to it in cone mode; non-cone
/// mode refuses there.
#[test]
fn prefix_from_a_subdirectory() {
    same_as_git(
        t1091,
        &[
            in_dir(
                cmp(&["sparse-checkout", "set", "deeper1", "../folder1"]),
                "deep",
            ),
            in_dir(cmp(&["sparse-checkout", "add", "deeper2"]), "deep"),
            in_dir(cmp(&["sparse-checkout", "set", "--no-cone", "a"]), "deep"),
        ],
    );
}

/// Files already in the way of entries that come back: with
/// `sparse.expectFilesOutsideOfPatterns` git keeps an untracked file at a skipped path and
/// warns; a file where a skipped entry's directory should be is left too.
#[test]
fn untracked_files_in_the_way() {
    let setup = |root: &Path| {
        t1091(root);
        git_ok(root, ["sparse-checkout", "set", "deep"]);
        git_ok(
            root,
            ["config", "sparse.expectFilesOutsideOfPatterns", "true"],
        );
        write(root, "folder1/a", "untracked\n");
        write(root, "folder2", "a file where a directory goes\n");
    };
    same_as_git(
        setup,
        &[
            cmp(&["sparse-checkout", "add", "folder1", "folder2"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// An unborn index (`clone --no-checkout`): git records the patterns and changes no work tree.
#[test]
fn unborn_index_records_only() {
    let setup = |root: &Path| {
        let src = root.with_extension("src");
        t1091(&src);
        git_ok(
            root.parent().unwrap(),
            [
                "clone",
                "-q",
                "--no-checkout",
                src.to_str().unwrap(),
                root.to_str().unwrap(),
            ],
        );
    };
    same_as_git(
        setup,
        &[
            cmp(&["sparse-checkout", "init", "--cone"]),
            cmp(&["sparse-checkout", "set", "folder1"]),
            both(&["checkout", "-q", "main"]),
            cmp(&["sparse-checkout", "reapply"]),
        ],
    );
}

/// With the sparse index asked for, the call is git's whole (the engine writes full indexes):
/// the results are git's.
#[test]
fn sparse_index_is_handed_to_git() {
    same_as_git(
        t1091,
        &[
            cmp(&["sparse-checkout", "set", "--sparse-index", "deep"]),
            cmp(&["sparse-checkout", "reapply", "--no-sparse-index"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// After `disable` the index carries the written files' real stat data: git finds the work
/// tree clean without re-reading them.
#[test]
fn disable_records_real_stat_data() {
    let s = scratch();
    let root = s.join("r");
    t1091(&root);
    git_ok(&root, ["sparse-checkout", "set", "folder1"]);
    assert!(!root.join("deep").exists());
    git_par(&root, ["sparse-checkout", "disable"]).assert_success();
    assert!(root.join("deep/deeper1/deepest/a").exists());
    assert_real_stat(&root, &[]);
    assert_eq!(
        git_str(&root, ["config", "core.sparseCheckout"]),
        "false",
        "disable records core.sparseCheckout=false"
    );
}

/// Cone mode cleans the directories that left the cone of what is left in them (ignored build
/// output), unless an untracked file is there: then all stays, with git's warning (git's t1091
/// "cone mode clears ignored subdirectories").
#[test]
fn cone_mode_clears_ignored_subdirectories() {
    let setup = |root: &Path| {
        t1091(root);
        write(root, ".gitignore", "obj/\n*.o\n");
        git_ok(root, ["add", ".gitignore"]);
        git_ok(root, ["commit", "-qm", "ignore"]);
    };
    let ignored = "for f in folder1/obj/a obj/a folder1/file.o folder1.o deep/deeper2/obj/a \
                   deep/deeper2/file.o file.o; do mkdir -p $(dirname $f); echo ignored >$f; done";
    same_as_git(
        setup,
        &[
            cmp(&["sparse-checkout", "set", "deep/deeper1"]),
            both(&["sh", "-c", ignored]),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "set", "deep/deeper2"]),
            both(&[
                "sh",
                "-c",
                ": >deep/deeper2/ignored.o; : >deep/deeper2/untracked",
            ]),
            cmp(&["sparse-checkout", "set", "folder1"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}

/// A work tree that cannot be updated (an entry whose blob is missing) leaves the old patterns
/// in place, applied again, and exits as git's `UPDATE_SPARSITY_WORKTREE_UPDATE_FAILURES`
/// (git also prints cache-tree errors about the object, which git-par does not repeat).
#[test]
fn failed_update_keeps_the_old_patterns() {
    let s = scratch();
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    t1091(&by_git);
    git_ok(&by_git, ["sparse-checkout", "set", "folder1"]);
    let missing = "1".repeat(40);
    git_ok(
        &by_git,
        [
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{missing},folder2/missing"),
        ],
    );
    git_ok(
        &by_git,
        ["update-index", "--skip-worktree", "folder2/missing"],
    );
    copy_repo(&by_git, &by_par);
    git(&by_par, ["update-index", "-q", "--refresh"]);
    let args = ["sparse-checkout", "set", "folder1", "folder2"].map(String::from);
    let expected = run_in("git", &by_git, &args, None);
    let actual = run_in(GIT_PAR, &by_par, &args, None);
    assert_eq!(expected.status.code(), Some(254), "{}", expected.describe());
    assert_eq!(actual.status.code(), Some(254), "{}", actual.describe());
    assert!(
        actual.stderr_str().contains("folder2/missing"),
        "{}",
        actual.describe()
    );
    let patterns = |d: &Path| fs::read_to_string(d.join(".git/info/sparse-checkout")).unwrap();
    assert_eq!(patterns(&by_git), patterns(&by_par));
    assert!(!patterns(&by_par).contains("folder2"));
    compare_worktrees(&by_git, &by_par);
    assert_eq!(
        git_str(&by_git, ["ls-files", "-t", "-s"]),
        git_str(&by_par, ["ls-files", "-t", "-s"])
    );
}

/// A cone-mode pattern file edited into something that is not cone-shaped: git warns about the
/// first bad pattern each time it reads the file (twice for `reapply` and `init`, once before
/// `add` refuses) and matches the patterns as ordinary ones.
#[test]
fn malformed_cone_patterns_warn_as_git() {
    let repeated =
        "printf '/*\\n!/*/\\n/deep/\\n!/deep/*/\\n/deep/\\\\*/\\n' >.git/info/sparse-checkout";
    let unrecognized = "printf '/*\\n!/*/\\n/deep/a\\n/folder1/\\n' >.git/info/sparse-checkout";
    let negative = "printf '/*\\n!/*/\\n!/deep/*/\\n' >.git/info/sparse-checkout";
    same_as_git(
        t1091,
        &[
            cmp(&["sparse-checkout", "set", "folder1"]),
            both(&["sh", "-c", repeated]),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "init"]),
            cmp(&["sparse-checkout", "add", "folder2"]),
            both(&["sh", "-c", unrecognized]),
            cmp(&["sparse-checkout", "reapply"]),
            both(&["sh", "-c", negative]),
            cmp(&["sparse-checkout", "reapply"]),
            cmp(&["sparse-checkout", "disable"]),
        ],
    );
}
