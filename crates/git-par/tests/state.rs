//! Unborn and orphan branches, the merge state and `ORIG_HEAD`, and the `post-checkout` hook:
//! each case runs git and git-par side by side on two copies of the same repository and
//! compares what they leave (exit code, messages, `HEAD`, refs, reflogs, index, work tree, state
//! files, the hook's arguments).

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use support::*;

impl Pair {
    fn sides(&self) -> [&Path; 2] {
        [&self.by_git, &self.by_par]
    }

    /// Runs real git with `args` on both sides.
    #[track_caller]
    fn both(&self, args: &[&str]) {
        for side in self.sides() {
            git(side, args).assert_success();
        }
    }

    /// `git ARGS` in git's copy, `git-par ARGS` in git-par's; exit codes and outputs compared.
    #[track_caller]
    fn run(&self, args: &[&str]) -> (Run, Run) {
        let g = git(&self.by_git, args);
        let p = git_par(&self.by_par, args);
        assert_eq!(
            g.status.code(),
            p.status.code(),
            "exit codes differ\n--- git:\n{}\n--- git-par:\n{}",
            g.describe(),
            p.describe()
        );
        assert_eq!(
            g.stderr_str(),
            p.stderr_str(),
            "stderr differs\n--- git:\n{}\n--- git-par:\n{}",
            g.describe(),
            p.describe()
        );
        assert_eq!(
            g.stdout_str(),
            p.stdout_str(),
            "stdout differs\n--- git:\n{}\n--- git-par:\n{}",
            g.describe(),
            p.describe()
        );
        (g, p)
    }

    /// Panics unless both sides look the same to git.
    #[track_caller]
    fn assert_same(&self) {
        let [g, p] = self.sides().map(state);
        for ((what, a), (_, b)) in g.iter().zip(&p) {
            assert_eq!(a, b, "{what} differs (git, then git-par)");
        }
    }
}

fn opt(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    if out.success() {
        out.stdout_str()
    } else {
        format!("<exit {:?}>", out.status.code())
    }
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

const STATE_FILES: &[&str] = &[
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "SQUASH_MSG",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "ORIG_HEAD",
    "logs/ORIG_HEAD",
    "sequencer",
    "index",
];

/// What git sees: HEAD, refs, reflogs, index, status, work tree files, state files.
fn state(dir: &Path) -> Vec<(&'static str, String)> {
    let head = opt(dir, &["symbolic-ref", "-q", "HEAD"]);
    let branch_log = reflog(dir, head.trim());
    let files: String = STATE_FILES
        .iter()
        .map(|f| {
            let p = dir.join(".git").join(f);
            let content = match fs::read(&p) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(_) if p.is_dir() => "<dir>".into(),
                Err(_) => "<missing>".into(),
            };
            // The index bytes carry stat data: only its existence is compared here.
            let content = if *f == "index" && content != "<missing>" {
                "<present>".into()
            } else {
                content
            };
            format!("{f}: {content}\n")
        })
        .collect();
    let mut worktree = Vec::new();
    list_files(dir, dir, &mut worktree);
    worktree.sort();
    vec![
        ("symbolic-ref HEAD", head),
        (
            "rev-parse HEAD",
            opt(dir, &["rev-parse", "-q", "--verify", "HEAD"]),
        ),
        ("reflog of HEAD", reflog(dir, "HEAD")),
        ("reflog of HEAD's branch", branch_log),
        (
            "for-each-ref",
            opt(dir, &["for-each-ref", "--format=%(refname) %(objectname)"]),
        ),
        ("reflogs", {
            let mut l = Vec::new();
            list_files(&dir.join(".git/logs"), &dir.join(".git/logs"), &mut l);
            let mut names: Vec<String> = l
                .iter()
                .map(|f| f.split(':').next().unwrap_or_default().to_owned())
                .collect();
            names.sort();
            names.join("\n")
        }),
        ("ls-files -s", opt(dir, &["ls-files", "-s"])),
        (
            "status",
            opt(dir, &["status", "--porcelain=v1", "--untracked-files=all"]),
        ),
        ("work tree", worktree.join("\n")),
        ("state files", files),
    ]
}

/// Every file below `dir` outside `.git`, with its content.
fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if p.is_dir() {
            list_files(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let content = fs::read(&p).unwrap_or_default();
            out.push(format!("{rel}: {}", String::from_utf8_lossy(&content)));
        }
    }
}

fn write(dir: &Path, path: &str, content: &str) {
    let p = dir.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// main (a, d/b, c) ← second (a changed, c removed, e added); branch `other` from the first
/// commit with a conflicting `a`.
fn history(dir: &Path) {
    write(dir, "a", "one\n");
    write(dir, "d/b", "bee\n");
    write(dir, "c", "see\n");
    git_ok(dir, ["add", "."]);
    git_ok(dir, ["commit", "-q", "-m", "first"]);
    git_ok(dir, ["branch", "other"]);
    write(dir, "a", "two\n");
    write(dir, "e", "eee\n");
    git_ok(dir, ["rm", "-q", "c"]);
    git_ok(dir, ["add", "."]);
    git_ok(dir, ["commit", "-q", "-m", "second"]);
    git_ok(dir, ["checkout", "-q", "other"]);
    write(dir, "a", "other\n");
    git_ok(dir, ["commit", "-q", "-am", "other side"]);
    git_ok(dir, ["checkout", "-q", "main"]);
}

// ---------------------------------------------------------------------------------------------------
// Unborn HEAD

#[test]
fn checkout_b_on_an_unborn_branch_only_moves_head() {
    let pair = Pair::new(|dir| {
        write(dir, "staged", "s\n");
        git_ok(dir, ["add", "staged"]);
        write(dir, "untracked", "u\n");
    });
    pair.run(&["checkout", "-b", "topic"]);
    pair.assert_same();
    pair.run(&["switch", "-c", "again"]);
    pair.assert_same();
    // An existing branch name is refused, as git refuses it; -B takes it.
    pair.run(&["checkout", "-b", "again"]);
    pair.assert_same();
    let pair = Pair::new(|dir| {
        write(dir, "f", "f\n");
        git_ok(dir, ["add", "f"]);
        git_ok(dir, ["commit", "-q", "-m", "born"]);
        git_ok(dir, ["branch", "again"]);
        git_ok(dir, ["checkout", "-q", "--orphan", "unborn"]);
    });
    pair.run(&["checkout", "-B", "again"]);
    pair.assert_same();
}

#[test]
fn checkout_on_an_unborn_branch_is_refused() {
    let pair = Pair::new(|_| {});
    pair.run(&["checkout"]);
    pair.assert_same();
}

#[test]
fn reset_hard_without_commits() {
    // No index at all.
    let pair = Pair::new(|_| {});
    pair.run(&["reset", "--hard"]);
    pair.assert_same();
    // Staged files go from the index and the work tree; untracked ones stay.
    let pair = Pair::new(|dir| {
        write(dir, "staged", "s\n");
        write(dir, "sub/deep", "d\n");
        git_ok(dir, ["add", "."]);
        write(dir, "untracked", "u\n");
    });
    pair.run(&["reset", "--hard"]);
    pair.assert_same();
}

#[test]
fn switch_to_a_branch_from_an_unborn_one() {
    let pair = Pair::new(history);
    pair.both(&["checkout", "-q", "--orphan", "fresh"]);
    pair.both(&["rm", "-rfq", "."]);
    pair.run(&["switch", "main"]);
    pair.assert_same();
}

// ---------------------------------------------------------------------------------------------------
// Orphan branches

#[test]
fn switch_orphan_empties_index_and_work_tree() {
    let pair = Pair::new(history);
    for side in pair.sides() {
        write(side, "untracked", "u\n");
    }
    pair.run(&["switch", "--orphan", "fresh"]);
    pair.assert_same();
    // The next commit has no parent on both sides.
    for side in pair.sides() {
        write(side, "new", "n\n");
        git_ok(side, ["add", "new"]);
        git_dated(side, &["commit", "-q", "-m", "root"]).assert_success();
        assert_eq!(opt(side, &["rev-list", "--count", "HEAD"]), "1\n");
    }
    pair.run(&["switch", "main"]);
    pair.assert_same();
}

#[test]
fn orphan_branch_from_a_detached_head_says_where_head_was_as_git() {
    let pair = Pair::new(history);
    pair.both(&["checkout", "-q", "--detach", "main"]);
    // git: "Previous HEAD position was <abbrev> <subject>" (the empty tree is no commit).
    pair.run(&["switch", "--orphan", "fresh"]);
    pair.both(&["checkout", "-q", "-f", "--detach", "main"]);
    pair.run(&["checkout", "--orphan", "other-root", "other"]);
    pair.assert_same();
}

#[test]
fn switch_orphan_refusals() {
    let pair = Pair::new(history);
    pair.run(&["switch", "--orphan", "x", "main"]);
    pair.run(&["switch", "--orphan", "main"]);
    // A local change that the switch would lose.
    for side in pair.sides() {
        write(side, "a", "local\n");
    }
    pair.run(&["switch", "--orphan", "x"]);
    pair.assert_same();
    // --discard-changes drops it.
    pair.run(&["switch", "--discard-changes", "--orphan", "y"]);
    pair.assert_same();
}

#[test]
fn checkout_orphan_keeps_index_and_work_tree() {
    let pair = Pair::new(history);
    for side in pair.sides() {
        write(side, "a", "local\n");
    }
    pair.run(&["checkout", "--orphan", "fresh"]);
    pair.assert_same();
    // From another start point, then back: the unborn branch's reflog goes.
    pair.both(&["checkout", "-q", "-f", "main"]);
    pair.run(&["checkout", "--orphan", "other-root", "other"]);
    pair.assert_same();
    pair.run(&["checkout", "main"]);
    pair.assert_same();
    pair.run(&["checkout", "--orphan", "main"]);
    pair.run(&["checkout", "--orphan", "x", "-b", "y"]);
}

// ---------------------------------------------------------------------------------------------------
// Merge state and ORIG_HEAD

/// Both sides in a conflicted merge of `other` into `main`.
fn conflicted() -> Pair {
    let pair = Pair::new(history);
    for side in pair.sides() {
        git_dated(side, &["merge", "other"]).assert_failure();
        assert!(side.join(".git/MERGE_HEAD").exists());
    }
    pair
}

#[test]
fn reset_hard_ends_a_merge_and_the_next_commit_is_normal() {
    let pair = conflicted();
    pair.run(&["reset", "--hard"]);
    pair.assert_same();
    for side in pair.sides() {
        write(side, "a", "after\n");
        git_dated(side, &["commit", "-q", "-am", "after the reset"]).assert_success();
        assert_eq!(
            opt(side, &["rev-list", "--parents", "-1", "HEAD"])
                .split_whitespace()
                .count(),
            2,
            "one parent"
        );
    }
    pair.assert_same();
}

#[test]
fn checkout_f_and_switches_end_a_merge() {
    let pair = conflicted();
    pair.run(&["checkout", "-f", "other"]);
    pair.assert_same();
    let pair = conflicted();
    pair.run(&["checkout", "-f"]);
    pair.assert_same();
    // switch refuses while merging; after a resolution, a checkout of a branch ends it.
    let pair = conflicted();
    pair.run(&["switch", "other"]);
    for side in pair.sides() {
        // Resolved as HEAD has it: the merge is still in progress.
        write(side, "a", "two\n");
        git_ok(side, ["add", "a"]);
    }
    pair.run(&["checkout", "other"]);
    pair.assert_same();
}

#[test]
fn cherry_pick_and_squash_state_go_with_a_switch() {
    let pair = Pair::new(history);
    for side in pair.sides() {
        git_dated(side, &["cherry-pick", "other"]).assert_failure();
        // Resolved as HEAD has it: the pick is still in progress.
        write(side, "a", "two\n");
        git_ok(side, ["add", "a"]);
        assert!(side.join(".git/CHERRY_PICK_HEAD").exists());
        write(side, ".git/SQUASH_MSG", "squash\n");
    }
    pair.run(&["checkout", "other"]);
    pair.assert_same();
}

#[test]
fn reset_hard_writes_orig_head() {
    let pair = Pair::new(history);
    pair.run(&["reset", "--hard", "HEAD~1"]);
    pair.assert_same();
    pair.run(&["reset", "--hard", "ORIG_HEAD"]);
    pair.assert_same();
    pair.run(&["reset", "--hard"]);
    pair.assert_same();
    // With its reflog, ORIG_HEAD's moves are logged.
    for side in pair.sides() {
        fs::write(side.join(".git/logs/ORIG_HEAD"), "").unwrap();
    }
    pair.run(&["reset", "--hard", "other"]);
    pair.assert_same();
}

// ---------------------------------------------------------------------------------------------------
// post-checkout

/// Installs an executable `post-checkout` at `rel` (relative to the work tree) in both copies:
/// it appends its arguments and its directory to `.git/hook.log` and exits with the number in
/// `.git/hook.exit` (0 if absent).
fn install_hook(pair: &Pair, rel: &str) {
    for side in pair.sides() {
        let p = side.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(
            &p,
            "#!/bin/sh\n\
             common=$(git rev-parse --path-format=absolute --git-common-dir)\n\
             echo \"$* | $(pwd) | ${GIT_DIR-unset} | ${GIT_PREFIX-unset}\" >>\"$common/hook.log\"\n\
             exit $(cat \"$common/hook.exit\" 2>/dev/null || echo 0)\n",
        )
        .unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The hook's log on both sides, with each side's path replaced by `<repo>`; returns git's.
#[track_caller]
fn assert_same_hook_log(pair: &Pair) -> String {
    let [g, p] = pair.sides().map(|side| {
        fs::read_to_string(side.join(".git/hook.log"))
            .unwrap_or_else(|_| "<no hook run>".into())
            .replace(side.to_str().unwrap(), "<repo>")
    });
    assert_eq!(g, p, "post-checkout runs differ (git, then git-par)");
    g
}

#[test]
fn post_checkout_arguments() {
    let pair = Pair::new(history);
    install_hook(&pair, ".git/hooks/post-checkout");
    for args in [
        &["checkout", "other"][..],
        &["switch", "main"],
        &["checkout"],
        &["checkout", "-q", "-b", "topic"],
        &["checkout", "--detach", "other"],
        &["checkout", "-f", "main"],
        &["checkout", "other", "--", "a"],
        &["checkout", "--", "a"],
        &["restore", "a"],
        &["reset", "--hard"],
        &["checkout", "--orphan", "o1"],
        &["switch", "-f", "main"],
        &["switch", "--orphan", "o2"],
        &["switch", "main"],
    ] {
        pair.run(args);
        assert_same_hook_log(&pair);
    }
    let log = assert_same_hook_log(&pair);
    // Every command but reset --hard.
    assert_eq!(log.lines().count(), 13, "{log}");
    assert!(log.contains(" 0 | <repo> | unset | \n"), "{log}");
    pair.assert_same();
}

#[test]
fn post_checkout_runs_from_the_top_and_its_status_counts() {
    let pair = Pair::new(history);
    install_hook(&pair, ".git/hooks/post-checkout");
    pair.run(&["checkout", "other"]);
    for side in pair.sides() {
        fs::write(side.join(".git/hook.exit"), "3\n").unwrap();
    }
    // A failing hook: the switch is done, the command exits 1; a path checkout exits with its
    // status.
    pair.run(&["checkout", "main"]);
    pair.run(&["checkout", "other", "--", "a"]);
    pair.run(&["restore", "a"]);
    assert_eq!(assert_same_hook_log(&pair).lines().count(), 4);
    pair.assert_same();
}

#[test]
fn post_checkout_from_a_subdirectory() {
    let pair = Pair::new(history);
    install_hook(&pair, ".git/hooks/post-checkout");
    let g = git(&pair.by_git.join("d"), ["checkout", "other"]);
    let p = git_par(&pair.by_par.join("d"), ["checkout", "other"]);
    assert_eq!(g.status.code(), p.status.code());
    assert!(assert_same_hook_log(&pair).contains("| <repo> | unset | d/\n"));
}

#[test]
fn post_checkout_with_core_hooks_path() {
    // Relative (to the top of the work tree) and absolute.
    let pair = Pair::new(history);
    install_hook(&pair, "my-hooks/post-checkout");
    pair.both(&["config", "core.hooksPath", "my-hooks"]);
    pair.run(&["checkout", "other"]);
    assert_same_hook_log(&pair);
    for side in pair.sides() {
        let abs = side.join("my-hooks");
        git_ok(side, ["config", "core.hooksPath", abs.to_str().unwrap()]);
    }
    pair.run(&["checkout", "main"]);
    pair.run(&["checkout", "other", "--", "a"]);
    assert_eq!(assert_same_hook_log(&pair).lines().count(), 3);
}

#[test]
fn post_checkout_not_executable_is_ignored_with_a_hint() {
    let pair = Pair::new(history);
    install_hook(&pair, ".git/hooks/post-checkout");
    for side in pair.sides() {
        let p = side.join(".git/hooks/post-checkout");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    }
    let (g, _) = pair.run(&["checkout", "other"]);
    assert_eq!(assert_same_hook_log(&pair), "<no hook run>");
    assert!(g
        .stderr_str()
        .contains("hint: The '.git/hooks/post-checkout' hook was ignored"));
}

#[test]
fn post_checkout_after_clone_and_worktree_add() {
    let pair = Pair::new(history);
    install_hook(&pair, ".git/hooks/post-checkout");
    // worktree add: the hook runs in the new work tree.
    let g = git(&pair.by_git, ["worktree", "add", "-q", "../wt", "other"]);
    let p = git_par(&pair.by_par, ["worktree", "add", "-q", "../wt", "other"]);
    assert_eq!(
        g.status.code(),
        p.status.code(),
        "{}\n{}",
        g.describe(),
        p.describe()
    );
    let logs = pair.sides().map(|side| {
        fs::read_to_string(side.join(".git/hook.log"))
            .unwrap_or_else(|_| "<no hook run>".into())
            .replace(side.parent().unwrap().to_str().unwrap(), "<top>")
    });
    assert_eq!(logs[0], logs[1], "worktree add: post-checkout runs differ");
    assert!(logs[0].contains("| <top>/wt | unset |"), "{}", logs[0]);
    // clone: the template hooks of the new repository do not exist; a global core.hooksPath
    // hook runs.
    let s = scratch();
    let hooks = s.join("hooks");
    fs::create_dir_all(&hooks).unwrap();
    fs::write(
        hooks.join("post-checkout"),
        "#!/bin/sh\necho \"$* | $(pwd) | ${GIT_DIR-unset}\" >>\"$HOOK_LOG\"\n",
    )
    .unwrap();
    fs::set_permissions(
        hooks.join("post-checkout"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let cfg = format!("core.hooksPath={}", hooks.display());
    let mut logs = Vec::new();
    for (who, dest) in [("git", "c-git"), ("par", "c-par")] {
        let log = s.join(format!("{who}.log"));
        let args = [
            "-c".to_owned(),
            cfg.clone(),
            "clone".to_owned(),
            "-q".to_owned(),
            pair.by_git.display().to_string(),
            dest.to_owned(),
        ];
        let mut cmd = std::process::Command::new(if who == "git" { "git" } else { GIT_PAR });
        clean_env(&mut cmd)
            .current_dir(s.path())
            .env("HOOK_LOG", &log)
            .args(&args);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{who} clone failed: {out:?}");
        logs.push(
            fs::read_to_string(&log)
                .unwrap_or_else(|_| "<no hook run>".into())
                .replace(dest, "<dest>"),
        );
    }
    assert_eq!(logs[0], logs[1], "clone: post-checkout runs differ");
    assert!(logs[0].contains("/<dest>/.git\n"), "{}", logs[0]);
}

#[test]
fn orphan_switches_keep_staged_new_files() {
    let pair = Pair::new(history);
    for side in pair.sides() {
        write(side, "added", "new\n");
        git_ok(side, ["add", "added"]);
    }
    pair.run(&["switch", "--orphan", "fresh"]);
    pair.assert_same();
    pair.both(&["checkout", "-q", "-f", "main"]);
    for side in pair.sides() {
        write(side, "added2", "new\n");
        git_ok(side, ["add", "added2"]);
    }
    pair.run(&["checkout", "--orphan", "fresh2", "other"]);
    pair.assert_same();
}

#[test]
fn a_finished_cherry_pick_sequence_is_removed() {
    let pair = Pair::new(|dir| {
        history(dir);
        git_ok(dir, ["checkout", "-q", "-b", "picks", "main~1"]);
        for n in ["x", "y"] {
            write(dir, n, n);
            git_ok(dir, ["add", n]);
            git_ok(dir, ["commit", "-q", "-m", n]);
        }
        git_ok(dir, ["checkout", "-q", "main"]);
        write(dir, "y", "conflict");
        git_ok(dir, ["add", "y"]);
        git_ok(dir, ["commit", "-q", "-m", "y here"]);
    });
    for side in pair.sides() {
        // x applies, y conflicts: the sequencer stops with one pick left in its todo.
        git_dated(side, &["cherry-pick", "picks~1", "picks"]).assert_failure();
        assert!(side.join(".git/sequencer").is_dir());
    }
    pair.run(&["reset", "--hard"]);
    pair.assert_same();
}

#[test]
fn a_hook_without_a_shebang_runs_under_the_shell() {
    let pair = Pair::new(history);
    for side in pair.sides() {
        let p = side.join(".git/hooks/post-checkout");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "echo \"$*\" >>.git/hook.log\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    pair.run(&["checkout", "other"]);
    assert_eq!(assert_same_hook_log(&pair).lines().count(), 1);
}

#[test]
fn a_hook_sees_the_commands_c_options() {
    let pair = Pair::new(history);
    for side in pair.sides() {
        let p = side.join(".git/hooks/post-checkout");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(
            &p,
            "#!/bin/sh\necho \"$(git config x.y) $(git config x.bang)\" >>.git/hook.log\n",
        )
        .unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    pair.run(&["-c", "x.y=it's", "-c", "x.bang=a!b", "checkout", "other"]);
    assert_eq!(assert_same_hook_log(&pair), "it's a!b\n");
}

/// git's t7102 case: after `--end-of-options` the revision may look like an option (a branch
/// named `--foo`); `reset --hard` resets to it as git does.
#[test]
fn reset_hard_end_of_options_takes_what_follows_as_the_revision() {
    let pair = Pair::new(history);
    pair.both(&["update-ref", "refs/heads/--foo", "other"]);
    pair.run(&["reset", "--hard", "--end-of-options", "--foo"]);
    pair.assert_same();
}

/// Install a `post-index-change` hook in `dir` that appends its arguments (and whether the
/// index is in place and unlocked when it runs) to `.git/index-changes`.
fn index_change_hook(dir: &Path) {
    let hook = dir.join(".git/hooks/post-index-change");
    fs::write(
        &hook,
        "#!/bin/sh\nstate=ok\ntest -f .git/index.lock && state=locked\ntest -f .git/index || state=missing\n\
         echo \"$1 $2 $state\" >>.git/index-changes\n",
    )
    .unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn post_index_change_runs_as_git_runs_it() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    write(&by_git, "dir1/a", "a\n");
    write(&by_git, "dir2/b", "b\n");
    git_ok(&by_git, ["add", "."]);
    git_ok(&by_git, ["commit", "-q", "-m", "one"]);
    git_ok(&by_git, ["branch", "other"]);
    write(&by_git, "dir1/a", "a2\n");
    git_ok(&by_git, ["commit", "-q", "-am", "two"]);
    index_change_hook(&by_git);
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    // Each step in both; between steps a file's stat data moves (its content does not), so
    // that a status or a no-op checkout has an index to write, as in git's t7113.
    let steps: &[&[&str]] = &[
        &["status", "--porcelain"],
        &["checkout", "-q", "other"],
        &["checkout", "-q", "HEAD"],
        &["checkout", "main", "--", "dir1/a"],
        &["reset", "-q", "--hard"],
        &["switch", "-q", "-c", "topic"],
        &["restore", "dir1/a"],
        &["refresh"],
        &["sparse-checkout", "set", "dir1"],
        &["sparse-checkout", "disable"],
    ];
    for step in steps {
        for dir in [&by_git, &by_par] {
            let file = dir.join("dir2/b");
            let when = fs::metadata(&file).unwrap().modified().unwrap()
                + std::time::Duration::from_secs(60);
            fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        let git_step: Vec<&str> = match *step {
            ["refresh"] => vec!["update-index", "-q", "--refresh"],
            other => other.to_vec(),
        };
        let by = git(&by_git, &git_step);
        let par = git_par(&by_par, *step);
        assert_eq!(par.status.code(), by.status.code(), "{step:?}");
        let log =
            |dir: &Path| fs::read_to_string(dir.join(".git/index-changes")).unwrap_or_default();
        assert_eq!(log(&by_par), log(&by_git), "{step:?}");
    }
    assert!(fs::read_to_string(by_git.join(".git/index-changes"))
        .unwrap()
        .contains("1 0 ok"));
}
