//! `git par status` against `git status` in the middle of an operation: what git's wt-status.c
//! says about a rebase (apply, merge and interactive backends, with its done and todo lines), an
//! am session, a cherry-pick, a revert, a bisection, a merge, and a detached HEAD (at or from
//! the last checkout's target), byte for byte, on repositories that git put in those states
//! (`tests/fixtures/status_states.sh`).

mod support;

use std::path::{Path, PathBuf};

use support::*;

/// Build the fixture `case` under `dir` and return the repository.
fn build(dir: &Path, case: &str) -> PathBuf {
    build_case("status_states.sh", dir, case)
}

/// Each variant: the directory (relative to the top of the work tree) and the whole command
/// line. The long format is the one with a state section; the short ones must not change.
const VARIANTS: &[(&str, &[&str])] = &[
    ("", &["status"]),
    ("", &["status", "-uno"]),
    ("", &["-c", "advice.statusHints=false", "status"]),
    ("", &["-c", "color.status=always", "status"]),
    ("d", &["status"]),
    ("", &["status", "-sb"]),
    ("", &["status", "--porcelain=v2", "--branch"]),
];

/// Run `git ARGS` and `git-par ARGS` in `sub` of two copies of `repo` (so that neither sees the
/// index the other refreshed) and compare output and exit code.
fn compare(scratch: &Scratch, repo: &Path, sub: &str, args: &[&str]) -> Option<String> {
    let (g, p) = two_copies(scratch, repo);
    let git_out = git(&g.join(sub), args);
    let par_out = git_par(&p.join(sub), args);
    let _ = std::fs::remove_dir_all(&g);
    let _ = std::fs::remove_dir_all(&p);
    differ(args, sub, &git_out, &par_out)
}

fn differ(args: &[&str], sub: &str, git_out: &Run, par_out: &Run) -> Option<String> {
    let same = git_out.stdout == par_out.stdout
        && git_out.status.code() == par_out.status.code()
        && git_out.stderr == par_out.stderr;
    (!same).then(|| side_by_side(&format!("{args:?} in {sub:?}"), git_out, par_out))
}

/// Every variant on every case; the failures of all of them in one message.
fn every_variant(cases: &[&str]) {
    let scratch = scratch();
    let mut failures = Vec::new();
    for case in cases {
        let repo = build(scratch.path(), case);
        for (sub, args) in VARIANTS {
            if let Some(f) = compare(&scratch, &repo, sub, args) {
                failures.push(format!("{case}: {f}"));
            }
        }
        let _ = std::fs::remove_dir_all(&repo);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rebase_with_the_apply_and_merge_backends() {
    every_variant(&[
        "rebase_apply_conflict",
        "rebase_apply_resolved",
        "rebase_merge_conflict",
    ]);
}

/// `Last command(s) done` / `Next command(s) to do` with their counts, the two lines shown of
/// each, `(see more in file .git/rebase-merge/done)`, blank and comment lines skipped (with
/// `core.commentChar` too), object names abbreviated but not in `exec` lines, and the
/// conflict / edit / split / amend wordings.
#[test]
fn interactive_rebase_stops() {
    every_variant(&[
        "rebase_i_conflict",
        "rebase_i_edit",
        "rebase_i_split",
        "rebase_i_amend",
        "rebase_i_exec",
        "rebase_i_comment_char",
        "rebase_i_detached",
        "rebase_i_todo_missing",
        "rebase_i_merge",
    ]);
}

#[test]
fn am_sessions_and_bisection() {
    every_variant(&[
        "am_conflict",
        "am_empty",
        "bisect",
        "bisect_detached",
        "bisect_rebasing",
    ]);
}

/// Single and multiple picks and reverts, with conflicts, resolved, after committing the
/// resolution (no CHERRY_PICK_HEAD/REVERT_HEAD: the sequencer's todo list says what is going
/// on), a todo list naming no object, and a `sequencer` that is a file (no error).
#[test]
fn cherry_pick_and_revert() {
    every_variant(&[
        "cherry_pick_conflict",
        "cherry_pick_resolved",
        "cherry_pick_committed",
        "cherry_pick_invalid",
        "sequencer_file",
        "revert_conflict",
        "revert_resolved",
        "revert_committed",
    ]);
}

/// A merge whose index matches HEAD once resolved is still committable; "both deleted" alone
/// gets the `git rm` resolution hint.
#[test]
fn merges() {
    every_variant(&["merge_resolved_as_head", "both_deleted"]);
}

/// `HEAD detached at` / `from` the tag, remote-tracking branch or commit HEAD's reflog's last
/// checkout moved to; an ambiguous name and a HEAD detached without a checkout.
#[test]
fn detached_head_at_and_from() {
    every_variant(&[
        "detached_tag_at",
        "detached_tag_from",
        "detached_remote",
        "detached_commit",
        "detached_ambiguous",
        "detached_no_checkout",
    ]);
}

/// The `(see more in file <git dir>/rebase-merge/done)` hint names the git directory as git's
/// setup leaves it: `.git` when found at the top of the work tree (also from a subdirectory),
/// `GIT_DIR` as given from the top of the work tree, absolute from a subdirectory, and the
/// absolute private directory of a linked work tree.
#[test]
fn the_done_file_is_named_as_git_names_its_directory() {
    let scratch = scratch();
    let repo = build(scratch.path(), "rebase_i_edit");
    let abs = repo.join(".git");
    let abs = abs.to_str().unwrap();
    let env_variants: &[(&str, &[&str])] = &[
        ("", &["GIT_DIR=.git"]),
        ("", &["GIT_DIR=./.git"]),
        ("", &[&format!("GIT_DIR={abs}")]),
        ("d", &["GIT_DIR=../.git", "GIT_WORK_TREE=.."]),
        ("d", &[&format!("GIT_DIR={abs}"), "GIT_WORK_TREE=.."]),
    ];
    let mut failures = Vec::new();
    for (sub, env) in env_variants {
        let cwd = repo.join(sub);
        let with = |program: &str| {
            let mut args: Vec<&str> = env.to_vec();
            args.extend([program, "status", "-uno"]);
            run("env", &cwd, &args)
        };
        let (g, p) = (with("git"), with(GIT_PAR));
        failures.extend(differ(env, sub, &g, &p));
    }
    // A linked work tree stopped in the same rebase: its private git directory, absolute.
    git_ok(&repo, ["rebase", "--abort"]);
    let wt = scratch.join("linked");
    git_ok(
        &repo,
        [
            "worktree",
            "add",
            "-q",
            "-b",
            "linked",
            wt.to_str().unwrap(),
        ],
    );
    let editor = "sed -i -e 3s/^pick/edit/";
    let rebase = run(
        "env",
        &wt,
        [
            &format!("GIT_SEQUENCE_EDITOR={editor}"),
            "GIT_EDITOR=true",
            "git",
            "rebase",
            "-q",
            "-i",
            "HEAD~4",
        ],
    );
    assert!(rebase.success(), "{}", rebase.describe());
    for sub in ["", "d"] {
        let (p, g) = (
            git_par(&wt.join(sub), ["status"]),
            git(&wt.join(sub), ["status"]),
        );
        assert!(
            g.stdout_str()
                .contains("worktrees/linked/rebase-merge/done)"),
            "{}",
            g.stdout_str()
        );
        failures.extend(differ(&["status"], sub, &g, &p));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
