//! `checkout -m`, `restore --merge` and `--conflict=<style>`, against git: each case builds one
//! repository with real git, copies it twice, runs the same command with git and with git-par
//! and compares exit code, standard output and error, the work tree byte for byte, the index
//! (`git ls-files -s`: the conflict stages), `git status --porcelain` and `HEAD`.
//!
//! - paths: the conflict of an unmerged path is recreated from its stages (and a path resolved
//!   with `git add` gets its recorded conflict back first), in each conflict style;
//! - branch switches: local changes that the switch would overwrite are merged into the new
//!   branch, cleanly or with conflicts; changes staged against `HEAD` and untracked files in
//!   the way stop it.

mod support;

use std::fs;
use std::path::Path;

use support::*;

fn write(root: &Path, path: &str, contents: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

impl Pair {
    /// The same command with git and with git-par; everything git shows must be the same.
    /// Returns git's exit code.
    #[track_caller]
    fn same(&self, args: &[&str]) -> Option<i32> {
        let g = git(&self.by_git, args);
        let p = git_par(&self.by_par, args);
        let both = || format!("--- git:\n{}\n--- git-par:\n{}", g.describe(), p.describe());
        assert_same_output(&format!("{args:?}"), &g, &p, true);
        compare_worktrees(&self.by_git, &self.by_par);
        assert_same_views(
            &self.by_git,
            &self.by_par,
            &[
                &["ls-files", "-s"],
                &["status", "--porcelain"],
                &["rev-parse", "HEAD"],
                &["symbolic-ref", "-q", "HEAD"],
            ],
            &format!("{args:?}\n{}", both()),
        );
        g.status.code()
    }

    /// Runs real git with `args` on both copies.
    #[track_caller]
    fn both(&self, args: &[&str]) {
        for side in [&self.by_git, &self.by_par] {
            git(side, args).assert_success();
        }
    }

    /// Writes `contents` to `path` in both work trees.
    fn write(&self, path: &str, contents: &str) {
        write(&self.by_git, path, contents);
        write(&self.by_par, path, contents);
    }
}

/// The middle of a conflicted `git merge side` on `main`:
/// - `both.txt`: changed on both sides (stages 1, 2, 3);
/// - `each.txt`: added on both sides (stages 2, 3: an empty base);
/// - `wide.txt`: changed on both sides, with `conflict-marker-size=10`;
/// - `gone.txt`: changed on main, deleted on side (stages 1, 2: nothing to merge);
/// - `resolved.txt`: conflicted, then resolved with `git add` (a resolve-undo record);
/// - `bin`: binary, changed on both sides;
/// - `clean.txt`: merged cleanly, then changed in the work tree.
fn conflicted(root: &Path) {
    write(root, ".gitattributes", "wide.txt conflict-marker-size=10\n");
    write(root, "both.txt", "one\ntwo\nthree\n");
    write(root, "wide.txt", "one\ntwo\nthree\n");
    write(root, "gone.txt", "gone\n");
    write(root, "resolved.txt", "r\n");
    write(root, "bin", "a\0b\n");
    write(root, "clean.txt", "clean\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "base"]);
    git_ok(root, ["checkout", "-qb", "side"]);
    write(root, "both.txt", "one\nTWO side\nthree\n");
    write(root, "wide.txt", "one\nTWO side\nthree\n");
    write(root, "each.txt", "each side\n");
    write(root, "resolved.txt", "r side\n");
    write(root, "bin", "a\0side\n");
    git_ok(root, ["rm", "-q", "gone.txt"]);
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "side"]);
    git_ok(root, ["checkout", "-q", "main"]);
    write(root, "both.txt", "one\ntwo main\nthree\n");
    write(root, "wide.txt", "one\ntwo main\nthree\n");
    write(root, "each.txt", "each main\n");
    write(root, "resolved.txt", "r main\n");
    write(root, "gone.txt", "gone main\n");
    write(root, "bin", "a\0main\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "main"]);
    git(root, ["merge", "side"]).assert_failure();
    write(root, "resolved.txt", "resolved by hand\n");
    git_ok(root, ["add", "resolved.txt"]);
    write(root, "both.txt", "edited in the work tree\n");
    write(root, "clean.txt", "changed\n");
}

#[test]
fn merge_recreates_the_conflict_of_unmerged_paths() {
    for args in [
        ["restore", "--merge", "both.txt"].as_slice(),
        &["restore", "-m", "each.txt", "clean.txt"],
        &["checkout", "-m", "--", "both.txt", "each.txt"],
        &["checkout", "--merge", "--", "wide.txt"],
        // Without `--`, git counts: "Recreated N merge conflicts".
        &["checkout", "-m", "both.txt", "each.txt", "clean.txt"],
        &["checkout", "--merge", "wide.txt"],
        // A binary conflict keeps our side, with git's warning.
        &["checkout", "-m", "--", "bin"],
    ] {
        let pair = Pair::named("the repo", conflicted);
        assert_eq!(pair.same(args), Some(0), "{args:?}");
        // The index keeps the stages: the paths are still unmerged.
        let unmerged = git_str(&pair.by_par, ["diff", "--name-only", "--diff-filter=U"]);
        assert!(unmerged.contains("both.txt"), "{args:?}: {unmerged}");
    }
}

/// The attributes come from the work tree's `.gitattributes` first, as git's `ll_merge` reads
/// them: a marker size added there and not staged is used (t6406.5).
#[test]
fn merge_reads_attributes_from_the_work_tree() {
    let pair = Pair::named("the repo", conflicted);
    let attrs = "wide.txt conflict-marker-size=10\nboth.txt conflict-marker-size=32\n";
    pair.write(".gitattributes", attrs);
    assert_eq!(pair.same(&["checkout", "-m", "--", "both.txt"]), Some(0));
    let text = fs::read_to_string(pair.by_par.join("both.txt")).unwrap();
    assert!(
        text.contains(&format!("\n{} ours\n", "<".repeat(32))),
        "{text}"
    );
}

#[test]
fn merge_restores_a_resolved_conflict_from_the_resolve_undo_record() {
    for args in [
        ["checkout", "-m", "--", "resolved.txt"].as_slice(),
        &["restore", "--merge", "resolved.txt"],
        &["checkout", "--conflict=merge", "resolved.txt"],
    ] {
        let pair = Pair::named("the repo", conflicted);
        assert_eq!(pair.same(args), Some(0), "{args:?}");
        let text = fs::read_to_string(pair.by_par.join("resolved.txt")).unwrap();
        assert!(text.starts_with("<<<<<<< ours\n"), "{args:?}: {text}");
        // The record was used up, as git uses it up, and the others are kept as git keeps them.
        let left = git_str(&pair.by_par, ["ls-files", "--resolve-undo", "resolved.txt"]);
        assert_eq!(left, "", "{args:?}");
        assert_eq!(
            git_str(&pair.by_git, ["ls-files", "--resolve-undo"]),
            git_str(&pair.by_par, ["ls-files", "--resolve-undo"]),
            "{args:?}"
        );
    }
}

/// Path restores keep the index's resolve-undo records and add one for each conflict they
/// resolve (git's `record_resolve_undo`), so that a later `checkout -m` can bring it back; the
/// records after each step are git's.
#[test]
fn path_restores_keep_and_add_resolve_undo_records_like_git() {
    let pair = Pair::named("the repo", conflicted);
    for args in [
        ["restore", "wide.txt"].as_slice(),
        &["checkout", "HEAD", "--", "both.txt"],
        &["checkout", "-m", "--", "both.txt"],
    ] {
        pair.same(args);
        assert_eq!(
            git_str(&pair.by_git, ["ls-files", "--resolve-undo"]),
            git_str(&pair.by_par, ["ls-files", "--resolve-undo"]),
            "{args:?}"
        );
    }
}

#[test]
fn conflict_styles_come_from_the_option_or_the_configuration() {
    for args in [
        ["restore", "--conflict=diff3", "both.txt"].as_slice(),
        &["restore", "--conflict=zdiff3", "both.txt", "wide.txt"],
        &["checkout", "--conflict=diff3", "--", "each.txt"],
        &["checkout", "--conflict=merge", "--", "both.txt"],
        &[
            "-c",
            "merge.conflictStyle=diff3",
            "restore",
            "-m",
            "both.txt",
        ],
        &[
            "-c",
            "merge.conflictStyle=zdiff3",
            "checkout",
            "-m",
            "--",
            "both.txt",
            "wide.txt",
            "each.txt",
        ],
        // The option wins over the configuration.
        &[
            "-c",
            "merge.conflictStyle=diff3",
            "checkout",
            "--conflict=merge",
            "--",
            "both.txt",
        ],
    ] {
        let pair = Pair::named("the repo", conflicted);
        assert_eq!(pair.same(args), Some(0), "{args:?}");
    }
    let pair = Pair::named("the repo", conflicted);
    pair.same(&["restore", "--conflict=diff3", "both.txt"]);
    let text = fs::read_to_string(pair.by_par.join("both.txt")).unwrap();
    assert!(text.contains("||||||| base\ntwo\n"), "{text}");
}

#[test]
fn the_last_of_merge_no_merge_conflict_and_no_conflict_wins() {
    for (args, code) in [
        (
            [
                "checkout",
                "--conflict=diff3",
                "--no-merge",
                "--",
                "both.txt",
            ]
            .as_slice(),
            1,
        ),
        (
            &[
                "checkout",
                "--no-merge",
                "--conflict=diff3",
                "--",
                "both.txt",
            ],
            0,
        ),
        (&["restore", "-m", "--no-conflict", "both.txt"], 0),
        (
            &["restore", "--conflict=diff3", "--no-conflict", "both.txt"],
            1,
        ),
        (&["checkout", "-m", "--no-merge", "--", "both.txt"], 1),
    ] {
        let pair = Pair::named("the repo", conflicted);
        assert_eq!(pair.same(args), Some(code), "{args:?}");
    }
}

#[test]
fn a_custom_merge_driver_that_reports_a_conflict_still_writes_its_result() {
    let pair = Pair::named("the repo", |root| {
        conflicted(root);
        // git's `ll_ext_merge`: a non-zero exit is a conflict, the file is the result.
        write(root, "driver.sh", "#!/bin/sh\n{ echo driver; cat \"$2\" \"$3\"; } >\"$2.new\"\nmv \"$2.new\" \"$2\"\nexit 1\n");
        git_ok(root, ["update-index", "--chmod=+x", "--add", "driver.sh"]);
        fs::set_permissions(
            root.join("driver.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        git_ok(
            root,
            ["config", "merge.mine.driver", "./driver.sh %O %A %B"],
        );
        write(root, ".git/info/attributes", "both.txt merge=mine\n");
    });
    assert_eq!(pair.same(&["checkout", "-m", "--", "both.txt"]), Some(0));
    let text = fs::read_to_string(pair.by_par.join("both.txt")).unwrap();
    assert!(text.starts_with("driver\n"), "{text}");
}

#[test]
fn a_path_without_both_sides_is_refused() {
    for args in [
        ["restore", "--merge", "gone.txt"].as_slice(),
        &["checkout", "-m", "--", "gone.txt", "both.txt"],
        &["checkout", "--conflict=diff3", "--", "."],
        // `.` selects `gone.txt` too, whatever the style.
        &[
            "-c",
            "merge.conflictStyle=zdiff3",
            "checkout",
            "-m",
            "--",
            ".",
        ],
    ] {
        let pair = Pair::named("the repo", conflicted);
        assert_eq!(pair.same(args), Some(1), "{args:?}");
    }
}

#[test]
fn merge_options_are_refused_where_git_refuses_them() {
    for (args, code) in [
        (
            ["restore", "--staged", "--merge", "both.txt"].as_slice(),
            128,
        ),
        (
            &[
                "restore",
                "--staged",
                "--worktree",
                "--conflict=zdiff3",
                ".",
            ],
            128,
        ),
        (&["restore", "--source=HEAD", "--merge", "both.txt"], 128),
        (&["restore", "--ours", "--merge", "both.txt"], 128),
        (&["restore", "--ignore-unmerged", "-m", "both.txt"], 128),
        (&["checkout", "-f", "-m", "--", "both.txt"], 128),
        (
            &["checkout", "--theirs", "--conflict=diff3", "--", "both.txt"],
            128,
        ),
        (&["checkout", "-m", "HEAD", "--", "both.txt"], 128),
        (&["restore", "--conflict=bogus", "both.txt"], 129),
    ] {
        let pair = Pair::named("the repo", conflicted);
        assert_eq!(pair.same(args), Some(code), "{args:?}");
    }
}

/// `main` and `side` differ in `f` (line 2) and `g`; `side` also adds `u` and `dir/x`.
fn branches(root: &Path) {
    write(root, "f", "1\n2\n3\n4\n5\n6\n7\n");
    write(root, "g", "g\n");
    write(root, "h", "h\n");
    write(root, "x", "#!/bin/sh\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "base"]);
    git_ok(root, ["checkout", "-qb", "side"]);
    write(root, "f", "1\n2 side\n3\n4\n5\n6\n7\n");
    write(root, "g", "g side\n");
    write(root, "u", "u\n");
    git_ok(root, ["add", "."]);
    git_ok(root, ["commit", "-qm", "side"]);
    git_ok(root, ["checkout", "-q", "main"]);
}

#[test]
fn switch_merge_carries_a_local_change_cleanly() {
    for args in [
        ["switch", "-m", "side"].as_slice(),
        &["checkout", "-m", "side"],
        &["checkout", "--merge", "-q", "side"],
        &["checkout", "-m", "side~0"],
    ] {
        let pair = Pair::named("the repo", branches);
        // Line 6 of `f` (the switch changes line 2), a deletion and a mode change.
        pair.write("f", "1\n2\n3\n4\n5\n6 local\n7\n");
        for side in [&pair.by_git, &pair.by_par] {
            fs::remove_file(side.join("g")).unwrap();
        }
        pair.both(&["update-index", "--chmod=+x", "x"]);
        pair.both(&["commit", "-qm", "x is executable"]);
        pair.write("h", "h local\n");
        assert_eq!(pair.same(args), Some(0), "{args:?}");
        let f = fs::read_to_string(pair.by_par.join("f")).unwrap();
        assert_eq!(f, "1\n2 side\n3\n4\n5\n6 local\n7\n", "{args:?}");
    }
}

#[test]
fn switch_merge_leaves_conflicts_in_index_and_work_tree() {
    for args in [
        ["switch", "-m", "side"].as_slice(),
        &["checkout", "-m", "side"],
        &["switch", "--conflict=diff3", "side"],
        &["checkout", "--conflict=zdiff3", "side"],
        &["-c", "merge.conflictStyle=diff3", "checkout", "-m", "side"],
    ] {
        let pair = Pair::named("the repo", branches);
        pair.write("f", "1\n2 local\n3\n4\n5\n6\n7\n");
        pair.write("g", "g local\n");
        assert_eq!(pair.same(args), Some(0), "{args:?}");
        let stages = git_str(&pair.by_par, ["ls-files", "-u", "f"]);
        assert_eq!(stages.lines().count(), 3, "{args:?}: {stages}");
    }
    // From a detached HEAD the ancestor is named by its abbreviated commit.
    let pair = Pair::named("the repo", branches);
    pair.both(&["checkout", "-q", "--detach", "main"]);
    pair.write("f", "1\n2 local\n3\n4\n5\n6\n7\n");
    assert_eq!(
        pair.same(&["checkout", "--conflict=diff3", "side"]),
        Some(0)
    );
}

#[test]
fn switch_merge_is_refused_with_staged_changes_or_untracked_files_in_the_way() {
    // Staged changes: git refuses to merge and names them.
    let pair = Pair::named("the repo", branches);
    pair.write("f", "1\n2 local\n3\n4\n5\n6\n7\n");
    pair.write("h", "h staged\n");
    pair.both(&["add", "h", "f"]);
    assert_eq!(pair.same(&["switch", "-m", "side"]), Some(128));
    // An untracked file where the branch has one.
    let pair = Pair::named("the repo", branches);
    pair.write("f", "1\n2 local\n3\n4\n5\n6\n7\n");
    pair.write("u", "untracked\n");
    assert_eq!(pair.same(&["checkout", "-m", "side"]), Some(128));
    // `-f` and `-m` together.
    let pair = Pair::named("the repo", branches);
    assert_eq!(pair.same(&["checkout", "-f", "-m", "side"]), Some(128));
    assert_eq!(
        pair.same(&["switch", "--conflict=bogus", "side"]),
        Some(129)
    );
}

#[test]
fn switch_merge_without_a_blocking_change_is_a_plain_switch() {
    let pair = Pair::named("the repo", branches);
    pair.write("h", "h local\n");
    assert_eq!(pair.same(&["switch", "-m", "side"]), Some(0));
    assert_eq!(
        git_str(&pair.by_par, ["status", "--porcelain"]),
        " M h",
        "the local change is carried over"
    );
}
