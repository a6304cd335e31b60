//! Hostile trees (built by `tests/fixtures/make_hostile.sh`, one repository per case, HEAD = main =
//! the hostile commit): `git par clone` and `git par worktree add` must refuse them with a message
//! naming the bad path, write no work tree file at all (the refusal happens while planning), and
//! write nothing outside the destination nor any payload into `.git`. A few cases are only hostile on
//! other platforms or filesystems; for those git-par may succeed, but then it must leave what git
//! leaves, and still write nothing outside the destination.
//!
//! What git 2.47 on Linux does with each case (`git clone` / `git worktree add`) is noted beside it:
//! "git refuses" means git exits 128 with `error: invalid path '<path>'` (clone then keeps `.git`
//! with an index but no work tree file; worktree add removes the worktree and its admin dir).

mod support;

use std::fs;
use std::path::Path;

use support::*;

struct Case {
    name: &'static str,
    /// Whether git-par must refuse it (on Linux).
    must_refuse: bool,
    /// The stderr of a refusal must mention one of these (the bad path, spelled raw or escaped).
    needles: &'static [&'static str],
}

fn case(name: &str) -> &'static Case {
    CASES
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no hostile case {name}"))
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-' | b'+')
}

/// Whether `text` mentions `needle` as a path or path component: not glued to other name characters.
fn mentions(text: &str, needle: &str) -> bool {
    let bytes = text.as_bytes();
    let n = needle.len();
    text.match_indices(needle).any(|(i, _)| {
        let before_ok = i == 0 || !is_name_byte(bytes[i - 1]);
        let after_ok = i + n == bytes.len() || !is_name_byte(bytes[i + n]);
        before_ok && after_ok
    })
}

#[track_caller]
fn assert_names_bad_path(c: &Case, run: &Run) {
    let stderr = run.stderr_str();
    assert!(
        c.needles.iter().any(|n| mentions(&stderr, n)),
        "case {}: the error names none of {:?}: {}",
        c.name,
        c.needles,
        run.describe()
    );
}

/// Panics if anything was written to the absolute path the `absolute` case names (and cleans it up).
#[track_caller]
fn assert_absolute_target_absent() {
    let target = Path::new(ABSOLUTE_TARGET);
    if target.exists() {
        let _ = fs::remove_dir_all(target);
        panic!("git-par wrote outside the destination: {ABSOLUTE_TARGET}");
    }
}

/// The names in `dir` other than `allowed`.
fn unexpected_names(dir: &Path, allowed: &[&str]) -> Vec<String> {
    dir_names(dir)
        .into_iter()
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect()
}

const SETTINGS: [Settings; 2] = [Settings::Jobs(1), Settings::Jobs(8)];

fn hostile_clone(name: &str) {
    let c = case(name);
    let src = hostile_case(name);
    for settings in SETTINGS {
        let s = scratch();
        let canary = Canary::plant(s.path());
        let dest = s.join("dest");
        let run = git_par_clone(s.path(), &CloneOpts::default(), settings, &src, &dest);

        // Nothing outside the destination, no payload in its .git.
        canary.assert_intact();
        assert_absolute_target_absent();
        assert_eq!(
            unexpected_names(s.path(), &["dest", "canary", "canary-dir"]),
            Vec::<String>::new(),
            "case {name}, {settings:?}: git-par wrote beside the destination"
        );
        let in_git = find_payloads(&dest.join(".git"));
        assert!(
            in_git.is_empty(),
            "case {name}, {settings:?}: hostile payload in .git: {in_git:?}"
        );

        if c.must_refuse {
            assert!(
                !run.success(),
                "case {name}, {settings:?}: git-par accepted a hostile tree: {}",
                run.describe()
            );
            assert_names_bad_path(c, &run);
            assert_eq!(
                unexpected_names(&dest, &[".git"]),
                Vec::<String>::new(),
                "case {name}, {settings:?}: git-par wrote work tree files before refusing"
            );
        } else if run.success() {
            let oracle = scratch();
            let by_git = oracle.join("dest");
            if git_clone(oracle.path(), &CloneOpts::default(), &src, &by_git).success() {
                compare_worktrees(&by_git, &dest);
                compare_indexes(&by_git, &dest, &[]);
            }
        } else {
            assert_names_bad_path(c, &run);
        }
    }
}

fn hostile_worktree_add(name: &str) {
    let c = case(name);
    for settings in SETTINGS {
        let s = scratch();
        let repo = s.join("repo");
        copy_repo(&hostile_case(name), &repo);
        let canary = Canary::plant(s.path());
        let wt = s.join("wt");
        let run = git_par_worktree_add(&repo, &[], settings, &["--detach", "../wt", "main"]);

        canary.assert_intact();
        assert_absolute_target_absent();
        assert_eq!(
            unexpected_names(s.path(), &["repo", "wt", "canary", "canary-dir"]),
            Vec::<String>::new(),
            "case {name}, {settings:?}: git-par wrote beside the worktree"
        );
        let in_repo = find_payloads(&repo);
        assert!(
            in_repo.is_empty(),
            "case {name}, {settings:?}: hostile payload in the repository: {in_repo:?}"
        );

        if c.must_refuse {
            assert!(
                !run.success(),
                "case {name}, {settings:?}: git-par accepted a hostile tree: {}",
                run.describe()
            );
            assert_names_bad_path(c, &run);
            assert_eq!(
                unexpected_names(&wt, &[".git"]),
                Vec::<String>::new(),
                "case {name}, {settings:?}: git-par wrote work tree files before refusing"
            );
            // Like git: a failed worktree add leaves no worktree registered.
            let list = git_str(&repo, ["worktree", "list", "--porcelain"]);
            assert_eq!(
                list.lines().filter(|l| l.starts_with("worktree ")).count(),
                1,
                "case {name}, {settings:?}: the refused worktree is still registered:\n{list}"
            );
        } else if run.success() {
            let oracle = scratch();
            let oracle_repo = oracle.join("repo");
            copy_repo(&hostile_case(name), &oracle_repo);
            if git_worktree_add(&oracle_repo, &[], &["--detach", "../wt", "main"]).success() {
                compare_worktrees(&oracle.join("wt"), &wt);
                compare_indexes(&oracle.join("wt"), &wt, &[]);
            }
        } else {
            assert_names_bad_path(c, &run);
        }
    }
}

macro_rules! hostile_cases {
    ($(
        $case:literal => $clone_test:ident, $worktree_test:ident,
            must_refuse: $refuse:expr, names: [$($needle:expr),* $(,)?];
    )*) => {
        const CASES: &[Case] = &[
            $(Case { name: $case, must_refuse: $refuse, needles: &[$($needle),*] },)*
        ];
        $(
            #[test]
            fn $clone_test() {
                hostile_clone($case);
            }
            #[test]
            fn $worktree_test() {
                hostile_worktree_add($case);
            }
        )*
    };
}

hostile_cases! {
    // git refuses: invalid path '..'
    "dotdot" => clone_refuses_entry_named_dotdot, worktree_add_refuses_entry_named_dotdot,
        must_refuse: true, names: [".."];
    // git refuses: invalid path 'a/../../pwned'
    "dotdot-nested" => clone_refuses_nested_dotdot_trees_escaping_destination,
        worktree_add_refuses_nested_dotdot_trees_escaping_destination,
        must_refuse: true, names: ["..", "a/..", "a/../../pwned"];
    // git refuses: invalid path 'sub/./pwned'
    "dot-nested" => clone_refuses_entry_named_dot, worktree_add_refuses_entry_named_dot,
        must_refuse: true, names: ["sub/.", "sub/./pwned", "."];
    // git refuses: invalid path '../pwned'
    "slash-in-name" => clone_refuses_entry_name_containing_slash_and_dotdot,
        worktree_add_refuses_entry_name_containing_slash_and_dotdot,
        must_refuse: true, names: ["../pwned"];
    // git refuses: invalid path '/tmp/git-par-hostile-absolute/pwned'
    "absolute" => clone_refuses_absolute_entry_name, worktree_add_refuses_absolute_entry_name,
        must_refuse: true, names: ["/tmp/git-par-hostile-absolute/pwned", "/tmp/git-par-hostile-absolute"];
    // git clone refuses with "Untracked working tree file '.git/config' would be overwritten";
    // git worktree add refuses: invalid path '.git/config'
    "dotgit" => clone_refuses_dotgit_tree, worktree_add_refuses_dotgit_tree,
        must_refuse: true, names: [".git", ".git/config", ".git/pwned"];
    // git refuses: invalid path '.GIT/config'
    "dotgit-upper" => clone_refuses_uppercase_dotgit_tree, worktree_add_refuses_uppercase_dotgit_tree,
        must_refuse: true, names: [".GIT", ".GIT/config", ".GIT/pwned"];
    // git refuses (core.protectNTFS defaults to true everywhere): invalid path 'git~1/config'
    "dotgit-ntfs-short" => clone_refuses_ntfs_short_name_of_dotgit,
        worktree_add_refuses_ntfs_short_name_of_dotgit,
        must_refuse: true, names: ["git~1", "git~1/config", "git~1/pwned"];
    // git refuses: invalid path '.git./config'
    "dotgit-trailing-dot" => clone_refuses_dotgit_with_trailing_dot,
        worktree_add_refuses_dotgit_with_trailing_dot,
        must_refuse: true, names: [".git.", ".git./config", ".git./pwned"];
    // git refuses: invalid path '.git /config'
    "dotgit-trailing-space" => clone_refuses_dotgit_with_trailing_space,
        worktree_add_refuses_dotgit_with_trailing_space,
        must_refuse: true, names: [".git ", ".git /config", ".git /pwned", ".git\\u{20}"];
    // git refuses: invalid path '.git::$INDEX_ALLOCATION/config'
    "dotgit-ntfs-stream" => clone_refuses_dotgit_ntfs_alternate_stream,
        worktree_add_refuses_dotgit_ntfs_alternate_stream,
        must_refuse: true, names: [".git::$INDEX_ALLOCATION"];
    // git ACCEPTS on Linux (core.protectHFS is off outside macOS) and writes ".g\u200cit/config";
    // TESTING.md makes it hostile everywhere.
    "dotgit-hfs-ignorable" => clone_refuses_dotgit_with_hfs_ignorable_code_point,
        worktree_add_refuses_dotgit_with_hfs_ignorable_code_point,
        must_refuse: true,
        names: [".g\u{200c}it", ".g\\u{200c}it", ".g\\342\\200\\214it", ".g\\xe2\\x80\\x8cit", ".g\\xE2\\x80\\x8Cit"];
    // git refuses (protectNTFS): invalid path '.git\config'
    "dotgit-backslash" => clone_refuses_dotgit_backslash_path, worktree_add_refuses_dotgit_backslash_path,
        must_refuse: true, names: [".git\\config", ".git\\\\config"];
    // git refuses: invalid path 'sub/.git/config'
    "dotgit-nested" => clone_refuses_dotgit_tree_in_subdirectory,
        worktree_add_refuses_dotgit_tree_in_subdirectory,
        must_refuse: true, names: ["sub/.git", "sub/.git/config", "sub/.git/pwned"];
    // git refuses: invalid path '.gitmodules'
    "gitmodules-symlink" => clone_refuses_gitmodules_symlink, worktree_add_refuses_gitmodules_symlink,
        must_refuse: true, names: [".gitmodules"];
    // git refuses: invalid path '.GITMODULES'
    "gitmodules-symlink-upper" => clone_refuses_uppercase_gitmodules_symlink,
        worktree_add_refuses_uppercase_gitmodules_symlink,
        must_refuse: true, names: [".GITMODULES"];
    // git refuses: invalid path 'gitmod~1'
    "gitmodules-symlink-ntfs" => clone_refuses_ntfs_short_name_gitmodules_symlink,
        worktree_add_refuses_ntfs_short_name_gitmodules_symlink,
        must_refuse: true, names: ["gitmod~1"];
    // git ACCEPTS: writes the second blob (the payload), then `git status` shows "M  dupname".
    "duplicate-blob" => clone_refuses_duplicate_blob_entries, worktree_add_refuses_duplicate_blob_entries,
        must_refuse: true, names: ["dupname"];
    // git ACCEPTS: merges both trees into dupdir/ (one.txt and pwned), status clean.
    "duplicate-tree" => clone_refuses_duplicate_tree_entries, worktree_add_refuses_duplicate_tree_entries,
        must_refuse: true, names: ["dupdir"];
    // git ACCEPTS: the directory wins (dfname/pwned), the index drops the blob, `git status` shows
    // "D  dfname".
    "file-dir-conflict" => clone_refuses_file_and_directory_with_same_name,
        worktree_add_refuses_file_and_directory_with_same_name,
        must_refuse: true, names: ["dfname", "dfname/pwned"];
    // git ACCEPTS: the directory wins (lnk/pwned is a real directory, nothing goes into .git), the
    // index drops the symlink, `git status` shows "D  lnk".
    "symlink-dotgit-then-path" => clone_refuses_symlink_to_dotgit_followed_by_paths_under_it,
        worktree_add_refuses_symlink_to_dotgit_followed_by_paths_under_it,
        must_refuse: true, names: ["lnk", "lnk/pwned"];
    // git ACCEPTS, as above (lnk is a real directory, nothing is written through the symlink).
    "symlink-outside-then-path" => clone_refuses_symlink_outside_followed_by_paths_under_it,
        worktree_add_refuses_symlink_outside_followed_by_paths_under_it,
        must_refuse: true, names: ["lnk", "lnk/pwned"];
    // git ACCEPTS on Linux (only Windows refuses CON, aux.txt, COM1). git-par may refuse or warn as
    // gix-validate's options decide; if it succeeds it must match git.
    "windows-reserved" => clone_of_windows_reserved_names_matches_git_or_is_refused,
        worktree_add_of_windows_reserved_names_matches_git_or_is_refused,
        must_refuse: false, names: ["CON", "aux.txt", "COM1"];
    // git ACCEPTS on a case-sensitive filesystem: symlink A -> .git and a real directory a/ with pwned.
    "symlink-case-dotgit" => clone_of_symlink_and_directory_differing_in_case_matches_git_or_is_refused,
        worktree_add_of_symlink_and_directory_differing_in_case_matches_git_or_is_refused,
        must_refuse: false, names: ["A", "a", "a/pwned"];
}

#[test]
fn every_hostile_fixture_case_has_tests() {
    let mut script: Vec<String> = hostile_case_names();
    script.sort();
    let mut tested: Vec<String> = CASES.iter().map(|c| c.name.to_owned()).collect();
    tested.sort();
    assert_eq!(script, tested, "make_hostile.sh --list and CASES disagree");
}

#[test]
fn mentions_matches_whole_path_names_only() {
    assert!(mentions("error: invalid path '..'", ".."));
    assert!(mentions("invalid path \"a/../../pwned\"", "a/../../pwned"));
    assert!(mentions("refusing .git/config", ".git"));
    assert!(!mentions("refusing .gitmodules", ".git"));
    assert!(!mentions("a/b/dupnames", "dupname"));
}

/// A HEAD whose tree names `dupname` twice, checked out by git (which accepts it, stages the
/// second blob, and then shows "M  dupname" against the first): a checkout of a commit without
/// that name must refuse as git does ("Your local changes ... would be overwritten"), since the
/// staged blob would be lost; git-par used to see the second blob as HEAD's and delete the file.
#[test]
fn checkout_away_from_a_tree_with_a_duplicate_name_refuses_like_git() {
    let s = scratch();
    let mut results = Vec::new();
    for who in ["git", "git-par"] {
        let repo = s.join(who);
        copy_repo(&hostile_case("duplicate-blob"), &repo);
        git_ok(&repo, ["checkout", "-q", "-f", "main"]);
        let before = git_str(&repo, ["status", "--porcelain"]);
        let args = ["checkout", "-q", "--detach", "main~1"];
        let run = if who == "git" {
            git(&repo, args)
        } else {
            git_par(&repo, args)
        };
        results.push((
            run.success(),
            run.stderr_str(),
            before,
            git_str(&repo, ["status", "--porcelain"]),
            git_str(&repo, ["ls-files", "-s"]),
            fs::read(repo.join("dupname")).ok(),
        ));
    }
    assert!(
        !results[0].0 && results[0].2 == "M  dupname",
        "the case this test is about: git refuses, with dupname staged: {:?}",
        results[0]
    );
    assert_eq!(results[0], results[1], "left: git, right: git-par");
}
