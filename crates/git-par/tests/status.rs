//! `git par status` and `git par refresh` against git: every format of `git status` on
//! repositories built by git (`tests/fixtures/status_cases.sh`) in every state the issue lists,
//! and `git par refresh` against `git update-index --refresh` — what it prints, its exit code,
//! what `git diff-files` then says, and that git trusts the stat data it wrote (re-reads nothing).

mod support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use support::*;

/// Build the fixture `case` under `dir` and return the repository.
fn build(dir: &Path, case: &str) -> PathBuf {
    build_case("status_cases.sh", dir, case)
}

/// The formats compared on every fixture.
const FORMATS: &[&[&str]] = &[
    &["--porcelain"],
    &["--porcelain=v1", "-b"],
    &["-s"],
    &["-sb"],
    &["--porcelain=v2"],
    &["--porcelain=v2", "--branch"],
    &["-z"],
    &["--porcelain=v2", "-z"],
    &["-s", "-z", "-b"],
    &["-uno", "-s"],
    &["-unormal", "--porcelain=v2"],
    &["--untracked-files=all", "-s"],
    &["--ignored", "-s"],
    &["--ignored=matching", "-s"],
    &["--ignored", "-uall", "-s"],
    &["--ignored=matching", "-uall", "--porcelain=v2"],
    &["--ignored=matching", "-uno", "-s"],
    &["--no-renames", "-s"],
    &[],
    &["--long", "-uno"],
    &["--ignored"],
];

/// Run `git status ARGS` and `git-par status ARGS` in `sub` of two copies of `repo` (so that
/// neither sees the index the other refreshed) and compare output and exit code.
fn compare(scratch: &Scratch, repo: &Path, sub: &str, args: &[&str]) -> Option<String> {
    let (g, p) = two_copies(scratch, repo);
    let mut with = vec!["status"];
    with.extend_from_slice(args);
    let git_out = git(&g.join(sub), &with);
    let par_out = git_par(&p.join(sub), &with);
    let _ = std::fs::remove_dir_all(&g);
    let _ = std::fs::remove_dir_all(&p);
    let same = git_out.stdout == par_out.stdout
        && git_out.status.code() == par_out.status.code()
        && (git_out.status.success() || git_out.stderr == par_out.stderr);
    (!same).then(|| side_by_side(&format!("status {args:?} in {sub:?}"), &git_out, &par_out))
}

fn every_format(case: &str, formats: &[&[&str]]) {
    let scratch = scratch();
    let repo = build(scratch.path(), case);
    let failures: Vec<String> = formats
        .iter()
        .filter_map(|args| compare(&scratch, &repo, "", args))
        .collect();
    assert!(failures.is_empty(), "{case}:\n{}", failures.join("\n"));
}

#[test]
fn every_kind_of_change_in_every_format() {
    every_format("changes", FORMATS);
}

#[test]
fn submodules_with_modified_content_untracked_content_and_new_commits() {
    every_format("submodules", FORMATS);
}

/// A submodule git cannot look into (its own `.git` directory lost its objects; t5526.38): git
/// dies rather than call it unmodified, and so does git-par, with git's message.
#[test]
fn a_broken_submodule_repository_is_an_error() {
    let s = scratch();
    let sub = init_repo(s.path(), "sub");
    git_ok(&sub, ["commit", "-q", "--allow-empty", "-m", "in sub"]);
    let top = init_repo(s.path(), "top");
    commit_files(&top, &["a"]);
    git_ok(
        &top,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            "../sub",
            "sub",
        ],
    );
    git_ok(&top, ["commit", "-q", "-m", "with sub"]);
    let mut runs = Vec::new();
    for name in ["by-git", "by-par"] {
        let dir = s.join(name);
        git_ok(s.path(), ["clone", "-q", "top", name]);
        // The submodule cloned into place, its `.git` a directory (the old layout).
        git_ok(&dir, ["clone", "-q", "../sub", "sub"]);
        std::fs::remove_dir_all(dir.join("sub/.git/objects")).unwrap();
        runs.push(if name == "by-git" {
            git(&dir, ["status"])
        } else {
            git_par(&dir, ["status"])
        });
    }
    let (by_git, by_par) = (&runs[0], &runs[1]);
    assert_eq!(by_git.status.code(), Some(128), "{}", by_git.describe());
    assert_eq!(by_par.status.code(), Some(128), "{}", by_par.describe());
    assert_eq!(by_par.stderr_str(), by_git.stderr_str());
}

/// A repository with git's deprecated graft file is git's (gix does not read grafts): the
/// status, and git's hint about the file, are git's (t6050.37).
#[test]
fn a_repository_with_grafts_is_left_to_git() {
    let s = scratch();
    let repo = init_repo(s.path(), "repo");
    commit_files(&repo, &["a"]);
    commit_files(&repo, &["b"]);
    let head = git_str(&repo, ["rev-parse", "HEAD"]);
    std::fs::write(repo.join(".git/info/grafts"), format!("{}\n", head.trim())).unwrap();
    let (by_git, by_par) = (git(&repo, ["status"]), git_par(&repo, ["status"]));
    assert!(
        by_git.stderr_str().contains("grafts is deprecated"),
        "{}",
        by_git.describe()
    );
    assert_eq!(by_par.stdout_str(), by_git.stdout_str());
    assert_eq!(by_par.stderr_str(), by_git.stderr_str());
    assert_eq!(by_par.status.code(), by_git.status.code());
}

#[test]
fn sparse_checkouts() {
    every_format("sparse", FORMATS);
}

#[test]
fn unmerged_paths() {
    every_format("unmerged", FORMATS);
}

/// Renames between the index and the work tree (intent-to-add destinations), as git's status
/// finds them (t2203.15-16), in every format and with renames off.
#[test]
fn renames_between_the_index_and_the_work_tree() {
    every_format("itarenames", FORMATS);
    let scratch = scratch();
    let repo = build(scratch.path(), "itarenames");
    let failures: Vec<String> = [
        &["-c", "status.renames=false", "status", "-s"][..],
        &["-c", "diff.renames=false", "status", "--porcelain=v2"],
        &["-c", "status.renameLimit=1", "status"],
    ]
    .iter()
    .filter_map(|args| {
        let (g, p) = two_copies(&scratch, &repo);
        let (a, b) = (git(&g, *args), git_par(&p, *args));
        (a.stdout != b.stdout || a.status.code() != b.status.code())
            .then(|| side_by_side(&format!("{args:?}"), &a, &b))
    })
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unborn_branch() {
    every_format("unborn", FORMATS);
}

#[test]
fn upstream_ahead_and_behind() {
    every_format("upstream", FORMATS);
}

/// `--no-ahead-behind` (git's t7064.20): "refer to different commits", `[different]`,
/// `branch.ab +? -?`; `status.aheadBehind=false` only for the human formats.
#[test]
fn upstream_without_counting() {
    let scratch = scratch();
    let repo = build(scratch.path(), "upstream");
    let mut failures: Vec<String> = [
        &["--no-ahead-behind"][..],
        &["--no-ahead-behind", "-sb"],
        &["--no-ahead-behind", "--porcelain=v2", "--branch"],
        &[
            "--no-ahead-behind",
            "--ahead-behind",
            "--porcelain=v2",
            "--branch",
        ],
    ]
    .iter()
    .filter_map(|args| compare(&scratch, &repo, "", args))
    .collect();
    git(&repo, ["config", "status.aheadBehind", "false"]).assert_success();
    for args in [
        &[][..],
        &["-sb"],
        &["--porcelain=v2", "--branch"],
        &["--ahead-behind"],
    ] {
        failures.extend(compare(&scratch, &repo, "", args));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A tracked file replaced by a directory: with `-uall` git lists the files inside. Left out:
/// `--ignored` without `-uall`, where git lists the ignored files inside such a directory
/// (collapsed or matching) but not its untracked ones; git-par lists neither (docs/differences.md, not done).
#[test]
fn file_replaced_by_a_directory() {
    let formats: Vec<&[&str]> = FORMATS
        .iter()
        .copied()
        .filter(|f| {
            let ignored = f.iter().any(|a| a.starts_with("--ignored"));
            let all = f.iter().any(|a| a.contains("all"));
            !ignored || all
        })
        .collect();
    assert_eq!(formats.len(), FORMATS.len() - 4);
    every_format("filedir", &formats);
}

#[test]
fn from_a_subdirectory_and_with_pathspecs() {
    let scratch = scratch();
    let repo = build(scratch.path(), "changes");
    let cases: &[(&str, &[&str])] = &[
        ("a", &["-s"]),
        ("a", &[]),
        ("a/b", &["--porcelain"]),
        ("a", &["--porcelain=v2"]),
        ("", &["-s", "a"]),
        ("", &["-s", "--", "c", "u"]),
        ("a", &["-s", "b"]),
        ("", &["--porcelain=v2", "sp ace"]),
        ("", &["-s", "*.log", "--ignored"]),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(sub, args)| compare(&scratch, &repo, sub, args))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn status_writes_the_refreshed_index_unless_optional_locks_are_off() {
    let scratch = scratch();
    let repo = build(scratch.path(), "upstream");
    // Stat data that no longer matches: every entry must be re-hashed.
    run("touch", &repo, ["-d", "2001-01-01 00:00:00", "a", "b", "c"]).assert_success();
    let before = std::fs::read(repo.join(".git/index")).unwrap();
    // `git --no-optional-locks par status` exports GIT_OPTIONAL_LOCKS=0.
    let mut cmd = std::process::Command::new(GIT_PAR);
    clean_env(&mut cmd)
        .current_dir(&repo)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args(["status", "-s"]);
    assert!(cmd.status().unwrap().success());
    assert_eq!(before, std::fs::read(repo.join(".git/index")).unwrap());
    let out = run(GIT_PAR, &repo, ["status", "-s"]);
    assert!(out.success());
    assert_ne!(before, std::fs::read(repo.join(".git/index")).unwrap());
    // git now trusts the stat data git-par wrote: a same-size change keeping mtime goes unseen.
    let entries = index_entries(&repo, &[]);
    let b = entries.iter().find(|e| e.path == b"b").unwrap();
    assert_eq!(
        b.mtime.0,
        std::fs::metadata(repo.join("b")).unwrap().mtime() as u32
    );
}

/// Set every tracked file's mtime to `when` (GNU touch syntax), without following symlinks.
fn age(repo: &Path, when: &str) {
    let files = git_ok(repo, ["ls-files", "-z"]);
    for f in files.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let path = repo.join(std::str::from_utf8(f).unwrap());
        if path.symlink_metadata().is_ok() {
            run("touch", repo, ["-h", "-d", when, path.to_str().unwrap()]).assert_success();
        }
    }
}

#[test]
fn refresh_matches_update_index_and_git_rereads_nothing() {
    let scratch = scratch();
    let repo = build(scratch.path(), "changes");
    // An untracked cache for git-par to keep, then stat data that differs from the index
    // while the contents do not.
    git_ok(&repo, ["update-index", "--untracked-cache"]);
    git_ok(
        &repo,
        ["-c", "core.untrackedCache=true", "status", "--porcelain"],
    );
    age(&repo, "-2 hours");
    for quiet in [false, true] {
        let (g, p) = (
            scratch.join(format!("g{quiet}")),
            scratch.join(format!("p{quiet}")),
        );
        copy_repo(&repo, &g);
        copy_repo(&repo, &p);
        let q: &[&str] = if quiet { &["-q"] } else { &[] };
        let mut git_args = vec!["update-index"];
        git_args.extend_from_slice(q);
        git_args.push("--refresh");
        let git_out = git(&g, &git_args);
        let mut par_args = vec!["refresh"];
        par_args.extend_from_slice(q);
        let before = std::fs::read(p.join(".git/index")).unwrap();
        let par_out = git_par(&p, &par_args);
        assert_eq!(
            (git_out.stdout_str(), git_out.status.code()),
            (par_out.stdout_str(), par_out.status.code()),
            "refresh -q={quiet}: {}",
            par_out.describe()
        );
        let diff_g = git_str(&g, ["diff-files", "--name-only"]);
        let diff_p = git_str(&p, ["diff-files", "--name-only"]);
        assert_eq!(diff_g, diff_p);
        assert!(
            diff_p.contains("a/b/f1") && !diff_p.contains("a/f2"),
            "{diff_p}"
        );
        // The untracked cache extension is carried over byte for byte.
        let after = std::fs::read(p.join(".git/index")).unwrap();
        let untr = before
            .windows(4)
            .position(|w| w == b"UNTR")
            .expect("UNTR written by git");
        let tail = &before[untr..before.len() - 20];
        assert!(after.windows(tail.len()).any(|w| w == tail), "UNTR changed");
        git_ok(&p, ["fsck", "--no-progress", "--cache"]);
        // git trusts the refreshed stat data: rewrite every clean regular file in place with
        // other bytes of the same size and the same mtime; git must not notice.
        let changed: Vec<&str> = diff_p.lines().collect();
        let files = git_str(&p, ["ls-files", "-s"]);
        let mut rewritten = 0;
        for line in files.lines() {
            let (meta, path) = line.split_once('\t').unwrap();
            if !meta.starts_with("100") || changed.contains(&path) {
                continue;
            }
            let file = p.join(path);
            let md = std::fs::metadata(&file).unwrap();
            let len = md.len() as usize;
            std::fs::write(&file, vec![b'#'; len]).unwrap();
            let stamp = format!("@{}.{:09}", md.mtime(), md.mtime_nsec());
            run("touch", &p, ["-d", &stamp, file.to_str().unwrap()]).assert_success();
            rewritten += 1;
        }
        assert!(rewritten >= 5, "only {rewritten} files rewritten");
        let diff = git_str(
            &p,
            ["-c", "core.trustctime=false", "diff-files", "--name-only"],
        );
        assert_eq!(diff, diff_p, "git re-read files git-par refreshed");
    }
}

#[test]
fn refresh_reports_unmerged_paths_as_git_does() {
    let scratch = scratch();
    let repo = build(scratch.path(), "unmerged");
    let g = scratch.join("g");
    copy_repo(&repo, &g);
    for q in [&[][..], &["-q"][..]] {
        let mut ga = vec!["update-index"];
        ga.extend_from_slice(q);
        ga.push("--refresh");
        let mut pa = vec!["refresh"];
        pa.extend_from_slice(q);
        let (go, po) = (git(&g, &ga), git_par(&repo, &pa));
        assert_eq!(
            (go.stdout_str(), go.status.code()),
            (po.stdout_str(), po.status.code())
        );
    }
}

#[test]
fn colour_and_hints_as_configured() {
    let scratch = scratch();
    for case in ["changes", "upstream"] {
        let repo = build(scratch.path(), case);
        for (config, args) in [
            ("color.status=always", &["status", "-s"][..]),
            ("color.status=always", &["status", "-sb"][..]),
            ("color.ui=always", &["status"][..]),
            ("advice.statusHints=false", &["status"][..]),
            ("status.showUntrackedFiles=no", &["status"][..]),
        ] {
            let (g, p) = (
                scratch.join(format!("{case}-g")),
                scratch.join(format!("{case}-p")),
            );
            copy_repo(&repo, &g);
            copy_repo(&repo, &p);
            let mut with = vec!["-c", config];
            with.extend_from_slice(args);
            let (go, po) = (git(&g, &with), git_par(&p, &with));
            assert_eq!(
                go.stdout_str(),
                po.stdout_str(),
                "{case}: {with:?}\n{}",
                po.describe()
            );
            std::fs::remove_dir_all(&g).unwrap();
            std::fs::remove_dir_all(&p).unwrap();
        }
    }
}

/// The index `git par refresh` writes is, byte for byte, the one `git update-index --refresh`
/// writes from the same index and work tree: in index versions 2, 3 (an intent-to-add entry's
/// extended flags) and 4, with `index.skipHash`, and with racily clean entries, one of which
/// changed without its stat data showing it (git smudges its size to 0).
#[test]
fn refresh_writes_the_index_git_writes() {
    let scratch = scratch();
    let repo = build(scratch.path(), "changes");
    let cases: &[(&str, &[&str], bool)] = &[
        ("v2", &["update-index", "--index-version", "2"], false),
        ("v3", &["update-index", "--index-version", "3"], false),
        ("v4", &["update-index", "--index-version", "4"], false),
        ("skip-hash", &["config", "index.skipHash", "true"], false),
        ("racy", &["config", "core.trustctime", "false"], true),
    ];
    for &(name, setup, racy) in cases {
        let p = scratch.join(name);
        copy_repo(&repo, &p);
        let index = p.join(".git/index");
        git_ok(&p, setup);
        age(&p, "-2 hours");
        if racy {
            // The index takes the aged stat data, then one file changes in place, keeping its
            // size and mtime, and the index becomes older than every file: all are racy.
            git_ok(&p, ["update-index", "-q", "--refresh"]);
            let file = p.join("d/keep");
            let md = std::fs::metadata(&file).unwrap();
            std::fs::write(&file, vec![b'#'; md.len() as usize]).unwrap();
            let stamp = format!("@{}.{:09}", md.mtime(), md.mtime_nsec());
            run("touch", &p, ["-d", &stamp, file.to_str().unwrap()]).assert_success();
            run("touch", &p, ["-d", "-3 hours", index.to_str().unwrap()]).assert_success();
        }
        let saved = std::fs::read(&index).unwrap();
        let when = std::fs::metadata(&index).unwrap();
        let stamp = format!("@{}.{:09}", when.mtime(), when.mtime_nsec());
        let par = git_par(&p, ["refresh"]);
        let by_par = std::fs::read(&index).unwrap();
        std::fs::write(&index, &saved).unwrap();
        run("touch", &p, ["-d", &stamp, index.to_str().unwrap()]).assert_success();
        let by_git_out = git(&p, ["update-index", "--refresh"]);
        let by_git = std::fs::read(&index).unwrap();
        assert_eq!(
            (par.stdout_str(), par.status.code()),
            (by_git_out.stdout_str(), by_git_out.status.code()),
            "{name}: {}",
            par.describe()
        );
        assert_ne!(by_git, saved, "{name}: git wrote nothing new");
        if by_par != by_git {
            let at = by_par.iter().zip(&by_git).position(|(a, b)| a != b);
            std::fs::write(scratch.join("by_par"), &by_par).unwrap();
            std::fs::write(scratch.join("by_git"), &by_git).unwrap();
            let debug = |f: &str| {
                let mut cmd = std::process::Command::new("git");
                cmd.args(["ls-files", "--debug"])
                    .current_dir(&p)
                    .env("GIT_INDEX_FILE", scratch.join(f));
                String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
            };
            panic!(
                "{name}: git-par's index differs from git's at byte {at:?} ({} and {} bytes)\n{}\n----\n{}",
                by_par.len(),
                by_git.len(),
                debug("by_par"),
                debug("by_git")
            );
        }
        if racy {
            assert!(par.stdout_str().contains("d/keep"), "{}", par.stdout_str());
        }
    }
}

/// A refresh changes stat data alone, so git leaves the cache-tree as it was, invalid nodes
/// included, also when it writes the index anew. So does `git par refresh` where it cannot carry
/// the index's extensions byte for byte: here an optional extension neither knows, which both
/// drop. The directory `d` has a path staged changed and then staged back: git invalidated its
/// node and nothing made it valid again, though its entries are HEAD's tree.
#[test]
fn refresh_that_rewrites_the_index_keeps_the_cache_tree_as_git_does() {
    let scratch = scratch();
    let repo = build(scratch.path(), "changes");
    let p = scratch.join("unknown-extension");
    copy_repo(&repo, &p);
    // A zero trailing hash is not checked: the extension goes in without a new checksum.
    git_ok(&p, ["config", "index.skipHash", "true"]);
    let keep = p.join("d/keep");
    let content = std::fs::read(&keep).unwrap();
    std::fs::write(&keep, b"changed\n").unwrap();
    git_ok(&p, ["add", "d/keep"]);
    std::fs::write(&keep, &content).unwrap();
    git_ok(&p, ["add", "d/keep"]);
    let index = p.join(".git/index");
    let mut bytes = std::fs::read(&index).unwrap();
    let end = bytes.len() - 20;
    assert!(
        bytes[end..].iter().all(|&b| b == 0),
        "the index has a checksum"
    );
    bytes.splice(end..end, *b"X1YZ\0\0\0\x04data");
    std::fs::write(&index, &bytes).unwrap();
    age(&p, "-2 hours");
    let saved = std::fs::read(&index).unwrap();
    let before = cache_tree_dump(&p);
    assert!(
        before.contains("num_entries: None"),
        "no invalid node to keep: {before}"
    );
    let par = git_par(&p, ["refresh", "-q"]);
    assert!(par.status.success(), "{}", par.describe());
    let (by_par, tree_by_par) = (std::fs::read(&index).unwrap(), cache_tree_dump(&p));
    std::fs::write(&index, &saved).unwrap();
    git_ok(&p, ["update-index", "-q", "--refresh"]);
    let (by_git, tree_by_git) = (std::fs::read(&index).unwrap(), cache_tree_dump(&p));
    assert_ne!(by_git, saved, "git wrote nothing new");
    assert_eq!(tree_by_par, tree_by_git);
    assert_eq!(tree_by_git, before, "git changed the cache-tree");
    assert!(by_par == by_git, "git-par's index differs from git's");
}

/// What git's walk decides where the index says otherwise (git's t7515.3, t7061.7 and
/// t7061.25): a symlink or file in place of a tracked directory is untracked; an untracked
/// directory named by a pathspec is collapsed, and its ignored file is not untracked; a
/// repository inside an ignored directory is shown as itself, also when a pathspec points into
/// it.
#[test]
fn symlinks_files_and_repositories_where_the_walk_must_stop() {
    let scratch = scratch();
    let repo = build(scratch.path(), "walk");
    let mut cases: Vec<(&str, Vec<&str>)> = FORMATS.iter().map(|f| ("", f.to_vec())).collect();
    cases.extend([
        ("", vec!["--porcelain", "--ignored", "untracked/"]),
        ("", vec!["--porcelain", "--ignored", "untracked"]),
        ("", vec!["--porcelain", "untracked/"]),
        ("", vec!["--porcelain", "--ignored", "-u", "ign/repo"]),
        ("", vec!["--porcelain", "--ignored", "-u", "ign"]),
        ("", vec!["--porcelain", "copy"]),
        ("", vec!["--porcelain", "-uall", "sub"]),
    ]);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(sub, args)| compare(&scratch, &repo, sub, args))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `status.renames` wins over `diff.renames`, both ways, and `copies` finds copies (git's
/// t7525.7; gix 0.90 reads `status.renames` as `merge.renames`).
#[test]
fn status_renames_overrides_diff_renames() {
    let scratch = scratch();
    let repo = build(scratch.path(), "changes");
    let mut failures = Vec::new();
    for (diff, status) in [("false", "true"), ("true", "false"), ("false", "copies")] {
        git(&repo, ["config", "diff.renames", diff]).assert_success();
        git(&repo, ["config", "status.renames", status]).assert_success();
        for args in [&["-s"][..], &[], &["--porcelain=v2"]] {
            failures.extend(compare(&scratch, &repo, "", args));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Porcelain v2 lists the unmerged entries after every other changed one (git's
/// `wt_porcelain_v2_print`), not in path order among them.
#[test]
fn porcelain_v2_lists_unmerged_entries_last() {
    let scratch = scratch();
    let repo = build(scratch.path(), "unmerged");
    std::fs::write(repo.join("clean"), "staged\n").unwrap();
    git_ok(&repo, ["add", "clean"]);
    let failures: Vec<String> = [&["--porcelain=v2"][..], &["--porcelain=v2", "-z"][..]]
        .iter()
        .filter_map(|args| compare(&scratch, &repo, "", args))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `:(attr:builtin_objectmode=...)` selects by the mode in the work tree, as git's status does
/// (t6135): untracked and changed files, and as an exclude pathspec. The same commands by git
/// and by git-par in one repository built by git (status changes nothing but stat data).
#[test]
fn builtin_objectmode_pathspecs_match_git() {
    use std::os::unix::fs::PermissionsExt;
    let s = scratch();
    let repo = s.join("repo");
    git_ok(s.path(), ["init", "-q", repo.to_str().unwrap()]);
    std::fs::write(repo.join("tracked"), "t\n").unwrap();
    git_ok(&repo, ["add", "tracked"]);
    git_ok(&repo, ["commit", "-q", "-m", "t"]);
    for name in ["mode_regular", "mode_exec", "tracked"] {
        std::fs::write(repo.join(name), "x\n").unwrap();
    }
    for name in ["mode_exec", "tracked"] {
        std::fs::set_permissions(repo.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for args in [
        &["status", "-s", ":(attr:builtin_objectmode=100644)mode_*"][..],
        &["status", "-s", ":(attr:builtin_objectmode=100755)"],
        &[
            "status",
            "-s",
            ":(exclude,attr:builtin_objectmode=100644)",
            "mode_*",
        ],
        &["status", "-s", ":(exclude,attr:builtin_objectmode=100755)"],
    ] {
        let theirs = git(&repo, args).assert_success().stdout_str();
        let ours = git_par(&repo, args).assert_success().stdout_str();
        assert_eq!(ours, theirs, "{args:?} (left: git-par, right: git)");
        assert!(!theirs.is_empty(), "{args:?} selects nothing");
    }
}

/// In a sparse checkout, a directory whose tracked files are all outside the patterns is still
/// a directory the index has: git lists the untracked files in it one by one, and collapses
/// only the directories the index lacks (t1091.51).
#[test]
fn untracked_files_below_sparse_directories_are_listed_as_git_lists_them() {
    let s = scratch();
    let repo = s.join("repo");
    git_ok(s.path(), ["init", "-q", repo.to_str().unwrap()]);
    for dir in ["folder1", "deep", "deep/deeper1", "deep/deeper2"] {
        std::fs::create_dir_all(repo.join(dir)).unwrap();
        std::fs::write(repo.join(dir).join("a"), "a\n").unwrap();
    }
    std::fs::write(repo.join(".gitignore"), "*.o\n").unwrap();
    git_ok(&repo, ["add", "."]);
    git_ok(&repo, ["commit", "-q", "-m", "initial"]);
    git_ok(&repo, ["sparse-checkout", "set", "folder1"]);
    std::fs::create_dir_all(repo.join("deep/deeper2/new/inner")).unwrap();
    for file in [
        "deep/deeper2/untracked",
        "deep/deeper2/ignored.o",
        "deep/deeper2/new/inner/x",
        "deep/only.o",
    ] {
        std::fs::write(repo.join(file), "u\n").unwrap();
    }
    for args in [
        &["status", "--porcelain=v2"][..],
        &["status", "--short"],
        &["status", "--short", "deep"],
    ] {
        let theirs = git(&repo, args).assert_success().stdout_str();
        let ours = git_par(&repo, args).assert_success().stdout_str();
        assert_eq!(ours, theirs, "{args:?} (left: git-par, right: git)");
    }
    assert!(git_str(&repo, ["status", "--short"]).contains("deep/deeper2/untracked"));
}

/// git's command line for git-par's `args`: `refresh` (last, after any `-c`) is git's
/// `update-index --refresh`; everything else is the same.
fn as_git<'a>(args: &[&'a str]) -> Vec<&'a str> {
    match args.split_last() {
        Some((&"refresh", options)) => options
            .iter()
            .copied()
            .chain(["update-index", "--refresh"])
            .collect(),
        _ => args.to_vec(),
    }
}

/// Whether the index of `repo` is split (git names its shared index).
fn is_split(repo: &Path) -> bool {
    !shared_index(repo).is_empty()
}

#[test]
fn a_split_index_is_written_split_as_git_writes_it() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    commit_files(&by_git, &["a", "b", "c"]);
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    // The same steps in both, git's status and update-index --refresh in one, git-par's in the
    // other: whether the index is split afterwards, and what git then sees, are the same.
    let steps: &[(&[&str], Option<&str>)] = &[
        // core.splitIndex=true: the index is split at its next write, a status's included.
        (
            &["-c", "core.splitIndex=true", "status", "--porcelain"],
            None,
        ),
        // An index already split, core.splitIndex unset: a refresh that rewrites a stat, a
        // status (git keeps or drops the split as it decides).
        (
            &["-c", "core.splitIndex=true", "status", "--porcelain"],
            None,
        ),
        (&["refresh"], Some("a")),
        (&["-c", "core.splitIndex=true", "refresh"], Some("b")),
        (&["status", "--porcelain"], Some("c")),
        // core.splitIndex=false: unsplit.
        (
            &["-c", "core.splitIndex=true", "status", "--porcelain"],
            None,
        ),
        (&["-c", "core.splitIndex=false", "refresh"], Some("a")),
    ];
    for (n, &(args, touch)) in steps.iter().enumerate() {
        if let Some(name) = touch {
            for dir in [&by_git, &by_par] {
                std::fs::write(dir.join(name), format!("{name}\n")).unwrap();
            }
        }
        let par = git_par(&by_par, args);
        let by = git(&by_git, as_git(args));
        assert_eq!(par.status.code(), by.status.code(), "step {n}: {args:?}");
        assert_eq!(par.stdout_str(), by.stdout_str(), "step {n}: {args:?}");
        assert_eq!(is_split(&by_par), is_split(&by_git), "step {n}: {args:?}");
        assert_eq!(git_str(&by_par, ["diff-files", "--name-only"]), "");
    }
}

/// The two porcelain formats of `git status`.
const PORCELAINS: [&[&str]; 2] = [&["status", "--porcelain=v2"], &["status", "--porcelain"]];

/// Each of [`PORCELAINS`] by git in `by_git` and by git-par in `by_par`: the same output.
/// Returns git-par's.
fn same_porcelain(by_git: &Path, by_par: &Path) -> Vec<String> {
    PORCELAINS
        .iter()
        .map(|args| {
            let (theirs, ours) = (git(by_git, *args), git_par(by_par, *args));
            assert_eq!(ours.stdout_str(), theirs.stdout_str(), "{args:?}");
            ours.stdout_str().to_owned()
        })
        .collect()
}

/// A repository `repo` in `dir` with `files` committed, made a cone-mode sparse checkout of
/// `in` with a sparse index by git (the directories outside the cone single entries).
fn sparse_index_repo(dir: &Path, files: &[&str]) -> PathBuf {
    let repo = init_repo(dir, "repo");
    commit_files(&repo, files);
    git_ok(
        &repo,
        ["sparse-checkout", "init", "--cone", "--sparse-index"],
    );
    git_ok(&repo, ["sparse-checkout", "set", "in"]);
    repo
}

/// A sparse index that git wrote (cone mode, `index.sparse`, directories outside the cone as
/// single entries): git-par's status expands it, and compares HEAD with it as git does, staged
/// changes included (t1092.5: the expanded index still called itself sparse, and the diff
/// refused it).
#[test]
fn status_of_a_sparse_index_git_wrote() {
    let s = scratch();
    let repo = sparse_index_repo(
        s.path(),
        &["in/a", "in/deep/b", "out/c", "out/deep/d", "top"],
    );
    std::fs::write(repo.join("in/a"), "changed\n").unwrap();
    std::fs::write(repo.join("top"), "staged\n").unwrap();
    git_ok(&repo, ["add", "top"]);
    std::fs::write(repo.join("in/new"), "new\n").unwrap();
    assert!(git_str(&repo, ["ls-files", "--sparse"]).contains("out/\n"));
    for args in [
        &["status", "--porcelain=v2"][..],
        &["status", "--porcelain"],
        &["status", "-uno", "--porcelain=v2"],
    ] {
        let by_git = git(&repo, args);
        let by_par = git_par(&repo, args);
        assert_eq!(by_par.status.code(), by_git.status.code(), "{args:?}");
        assert_eq!(by_par.stdout_str(), by_git.stdout_str(), "{args:?}");
    }
}

/// A sparse index git wrote, expanded by git-par's status and written back with fresh stat
/// data: its cache-tree is the expanded index's, as git's `ensure_full_index` hashes it anew.
/// Written as read, each sparse directory counted one entry in it, and git, making the index
/// sparse again from those counts, kept a directory entry per file below it (t1092.5: `git
/// ls-files --sparse` listed `folder1/` three times, and `git add` then wrote a tree with
/// every name twice).
#[test]
fn a_sparse_index_written_back_by_status_has_its_entries_counted() {
    let s = scratch();
    let repo = sparse_index_repo(s.path(), &["in/a", "out/b", "out/c", "out/deep/d", "top"]);
    let other = s.join("other");
    copy_repo(&repo, &other);
    // Stat data to refresh, so that both write the index back.
    for dir in [&repo, &other] {
        std::fs::write(dir.join("in/a"), "in/a\n").unwrap();
    }
    git_ok(&repo, ["status", "--porcelain"]);
    git_par(&other, ["status", "--porcelain"]).assert_success();
    let listing = |dir: &Path| git_str(dir, ["ls-files", "--sparse", "-s"]);
    assert_eq!(listing(&other), listing(&repo));
    std::fs::write(repo.join("new"), "new\n").unwrap();
    std::fs::write(other.join("new"), "new\n").unwrap();
    git_ok(&repo, ["add", "new"]);
    git_ok(&other, ["add", "new"]);
    assert_eq!(listing(&other), listing(&repo));
    assert_eq!(
        git_str(&other, ["write-tree"]),
        git_str(&repo, ["write-tree"])
    );
    same_porcelain(&repo, &other);
    for args in PORCELAINS {
        assert_eq!(
            git_str(&other, args),
            git_str(&repo, args),
            "git's, {args:?}"
        );
    }
}

/// A skip-worktree entry whose file is in the work tree all the same (copied back by hand) is
/// an ordinary tracked entry to git (`clear_skip_worktree_from_present_files`): its changes
/// show in status, and a refresh sees it (t1092.29).
#[test]
fn a_present_file_outside_the_sparse_patterns_is_tracked_again() {
    let s = scratch();
    let repo = init_repo(s.path(), "repo");
    for path in ["in/a", "out/b"] {
        let file = repo.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("{path}\n")).unwrap();
    }
    git_ok(&repo, ["add", "."]);
    git_ok(&repo, ["commit", "-q", "-m", "one"]);
    git_ok(&repo, ["sparse-checkout", "set", "in"]);
    std::fs::create_dir_all(repo.join("out")).unwrap();
    std::fs::write(repo.join("out/b"), "out/b\nmore\n").unwrap();
    let other = s.join("other");
    copy_repo(&repo, &other);
    for out in same_porcelain(&repo, &other) {
        assert!(out.contains("out/b"), "{out}");
    }
    let by_git = git(&repo, ["update-index", "--refresh"]);
    let by_par = git_par(&other, ["refresh"]);
    assert_eq!(by_par.status.code(), by_git.status.code());
    assert_eq!(by_par.stdout_str(), by_git.stdout_str());
    assert_eq!(
        git_str(&other, ["ls-files", "-t"]),
        git_str(&repo, ["ls-files", "-t"])
    );
}

/// `core.fsmonitor` set to a hook: git-par's status and refresh ask it as git does (its
/// arguments, protocol versions 2 and 1, a trivial `/` answer), trust what it does not report
/// (a change it leaves out is not seen, by git either), and write back the extension git
/// writes: after each step `git ls-files -f` (which reads the extension) and the hook's calls
/// are the same in a repository git works in and one git-par works in; with index versions 2
/// and 4 (whose prefix-compressed entries git-par must step over to find the extension).
#[test]
fn an_fsmonitor_hook_is_asked_and_trusted_as_git_does() {
    fsmonitor_steps("2");
    fsmonitor_steps("4");
}

/// Files written first (empty: deleted), what the hook reports, the command.
type Step<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a [&'a str]);

fn fsmonitor_steps(version: &str) {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    commit_files(&by_git, &["a", "b", "d/c", "d/e", "f/g"]);
    // The hook reports what `.git/report` lists (NUL-separated), after a token; with version 1
    // (asked with a time) only the paths. Its calls are logged with the time made a word.
    let hook = "#!/bin/sh\n\
                case \"$2\" in *[!0-9]*) t=\"$2\";; *) t=TIME;; esac\n\
                echo \"$1 $t\" >>.git/calls\n\
                test \"$1\" = 2 && printf 'token\\0'\n\
                cat .git/report 2>/dev/null\n\
                exit 0\n";
    std::fs::write(by_git.join(".git/fsm"), hook).unwrap();
    run("chmod", &by_git, ["+x", ".git/fsm"]).assert_success();
    git_ok(&by_git, ["config", "core.fsmonitor", ".git/fsm"]);
    git_ok(&by_git, ["update-index", "--index-version", version]);
    age(&by_git, "-2 hours");
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    // (setup, report, command): each repository gets the same setup and report, then git's
    // command in one and git-par's in the other.
    let steps: &[Step] = &[
        // No extension yet: added, everything checked, the fresh stat data not yet trusted.
        (&[], "", &["status", "--porcelain"]),
        // Now trusted: the clean files are fsmonitor-valid.
        (&[], "", &["status", "--porcelain"]),
        // A change the hook reports is seen; one it does not report is not, by git either.
        (
            &[("a", "A\n"), ("d/c", "C\n")],
            "a\0",
            &["status", "--porcelain"],
        ),
        (&[], "a\0", &["refresh"]),
        // A directory reported: everything below it is looked at again.
        (&[], "d\0", &["status", "--porcelain"]),
        (&[], "d/\0", &["refresh"]),
        // A trivial answer: nothing is trusted.
        (&[], "/", &["status", "--porcelain"]),
        // A deleted file the hook reports; a hook that fails.
        (&[("f/g", "")], "f/g\0", &["status", "--porcelain"]),
        (
            &[("b", "B\n")],
            "",
            &["-c", "core.fsmonitor=false", "status", "--porcelain"],
        ),
        (&[], "", &["status", "--porcelain"]),
        (
            &[("a", "a2\n")],
            "a\0",
            &["-c", "core.fsmonitorHookVersion=1", "refresh"],
        ),
    ];
    let fsmn = |repo: &Path| {
        std::fs::read(repo.join(".git/index"))
            .unwrap()
            .windows(4)
            .any(|w| w == b"FSMN")
    };
    for (n, &(setup, report, args)) in steps.iter().enumerate() {
        for dir in [&by_git, &by_par] {
            for &(name, content) in setup {
                if name == "f/g" {
                    std::fs::remove_file(dir.join(name)).unwrap();
                } else {
                    std::fs::write(dir.join(name), content).unwrap();
                    run("touch", dir, ["-d", "-1 hour", name]).assert_success();
                }
            }
            std::fs::write(dir.join(".git/report"), report).unwrap();
        }
        let par = git_par(&by_par, args);
        let by = git(&by_git, as_git(args));
        let n = format!("v{version} {n}");
        assert_eq!(par.status.code(), by.status.code(), "step {n}: {args:?}");
        assert_eq!(par.stdout_str(), by.stdout_str(), "step {n}: {args:?}");
        assert_eq!(
            fsmn(&by_par),
            fsmn(&by_git),
            "step {n}: {args:?}: extension"
        );
        // What the extension says, as git reads it (ls-files asks the hook too, in both).
        assert_eq!(
            git_str(&by_par, ["ls-files", "-f"]),
            git_str(&by_git, ["ls-files", "-f"]),
            "step {n}: {args:?}: fsmonitor-valid entries"
        );
        assert_eq!(
            std::fs::read_to_string(by_par.join(".git/calls")).unwrap_or_default(),
            std::fs::read_to_string(by_git.join(".git/calls")).unwrap_or_default(),
            "step {n}: {args:?}: the hook's calls"
        );
    }
}

/// A switch, a `reset --hard` and a path restore carry the index's fsmonitor extension as git's
/// `unpack_trees` does: the token stays, the files the command wrote are not trusted (`H` in
/// `git ls-files -f`), what it left alone keeps its validity (`h`), and `git status` afterwards
/// says what it says in a twin repository where git ran the same commands.
#[test]
fn tree_updates_carry_the_fsmonitor_extension() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    commit_files(&by_git, &["a", "b", "d/c", "d/e"]);
    git_ok(&by_git, ["checkout", "-q", "-b", "other"]);
    std::fs::write(by_git.join("a"), "a on other\n").unwrap();
    std::fs::write(by_git.join("d/new"), "new\n").unwrap();
    git_ok(&by_git, ["add", "."]);
    git_ok(&by_git, ["commit", "-q", "-m", "two"]);
    git_ok(&by_git, ["tag", "two"]);
    git_ok(&by_git, ["checkout", "-q", "main"]);
    let hook = "#!/bin/sh\nprintf 'token\\0'\ncat .git/report 2>/dev/null\nexit 0\n";
    std::fs::write(by_git.join(".git/fsm"), hook).unwrap();
    run("chmod", &by_git, ["+x", ".git/fsm"]).assert_success();
    git_ok(&by_git, ["config", "core.fsmonitor", ".git/fsm"]);
    age(&by_git, "-2 hours");
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    let flags = |repo: &Path| -> Vec<(String, char)> {
        git_str(repo, ["ls-files", "-f"])
            .lines()
            .map(|l| (l[2..].to_owned(), l.chars().next().unwrap()))
            .collect()
    };
    for dir in [&by_git, &by_par] {
        // Twice: the first adds the extension, the second trusts the clean files.
        git_ok(dir, ["status", "--porcelain"]);
        git_ok(dir, ["status", "--porcelain"]);
        assert!(
            flags(dir).iter().all(|(_, f)| *f == 'h'),
            "{:?}",
            flags(dir)
        );
    }
    let steps: &[(&[&str], &[&str])] = &[
        (&["switch", "-q", "other"], &["a", "d/new"]),
        (&["reset", "-q", "--hard", "main"], &["a", "d/new"]),
        // (`other` is `main` now: the reset moved it.)
        (&["checkout", "two", "--", "a"], &["a"]),
    ];
    for &(args, written) in steps {
        git_ok(&by_git, args);
        let par = git_par(&by_par, args);
        assert!(par.status.success(), "{args:?}: {}", par.describe());
        let index = std::fs::read(by_par.join(".git/index")).unwrap();
        assert!(
            index.windows(4).any(|w| w == b"FSMN"),
            "{args:?}: the extension was dropped"
        );
        for (path, flag) in flags(&by_par) {
            let expected = if written.contains(&path.as_str()) {
                'H'
            } else {
                'h'
            };
            assert_eq!(flag, expected, "{args:?}: {path}");
        }
        assert_eq!(
            git_str(&by_par, ["status", "--porcelain"]),
            git_str(&by_git, ["status", "--porcelain"]),
            "{args:?}"
        );
    }
}

/// Every directory of the work tree `dir` to the instant `at` (seconds since the epoch), so
/// that no directory is racily clean and two twins see the same changes; and every other entry
/// written since `at` (by the step before) to `at` as well, so that no file the index records
/// is racily clean either. A racy entry makes git write the index at its next status (and with
/// it an updated untracked cache), which then depends on whether a second ticked between the
/// write and the index in each twin; older entries keep their times (and ctimes).
fn age_dirs(dir: &Path, at: u32) {
    let script = format!(
        "find . -path ./.git -prune -o -type d -exec touch -d @{at} {{}} + && \
         find . -path ./.git -prune -o ! -type d -newermt @{at} -exec touch -h -d @{at} {{}} +"
    );
    run("sh", dir, ["-c", &script]).assert_success();
}

/// `program ARGS` in `dir` with `GIT_TRACE2_PERF` set, and the `read_directory` statistics
/// it traced (what git's t7063 compares; the `*-visited` counts left out, as t7063 does).
fn with_trace2(program: &str, dir: &Path, args: &[&str]) -> (Run, Vec<String>) {
    let trace = dir.join(".git/trace2");
    let _ = std::fs::remove_file(&trace);
    let mut argv = vec![
        format!("GIT_TRACE2_PERF={}", trace.display()),
        program.to_owned(),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    let out = run("env", dir, &argv);
    let data: Vec<String> = std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("| data ") && l.contains("read_directo"))
        .filter_map(|l| l.rsplit('|').next().map(|f| f.trim().to_owned()))
        .filter(|f| !f.contains("visited"))
        .collect();
    (out, data)
}

/// git's `ARGS` in `by_git` and git-par's in `by_par` (twins), with `GIT_TRACE2_PERF`: the same
/// exit code, output and warnings, the same walk statistics, the same untracked cache written.
fn same_status_as_git(by_git: &Path, by_par: &Path, args: &[&str], step: &str) {
    let (by, git_data) = with_trace2("git", by_git, args);
    let (par, par_data) = with_trace2(GIT_PAR, by_par, args);
    assert_eq!(
        par.status.code(),
        by.status.code(),
        "step {step}: {}",
        par.describe()
    );
    assert_eq!(par.stdout_str(), by.stdout_str(), "step {step}");
    assert_eq!(par.stderr_str(), by.stderr_str(), "step {step}");
    assert_eq!(par_data, git_data, "step {step}: read_directory statistics");
    assert_eq!(
        untracked_cache_dump(by_par),
        untracked_cache_dump(by_git),
        "step {step}: the untracked cache"
    );
}

/// `git status` with an untracked cache, against git in a twin repository at every step: the
/// cache is made (`core.untrackedCache=true`), used where nothing changed (no directory read),
/// invalidated by a new file, a changed `.gitignore` (per directory, or `info/exclude`), a
/// removed directory, a new one, an index change; bypassed by `-uall` while the configuration
/// says `normal`, rebuilt when the configuration changes to `all`, kept unwritten with
/// `core.untrackedCache` unset, dropped with `false`. At each step the output, the exit code,
/// the walk's statistics (`GIT_TRACE2_PERF`'s `read_directory` data, git's t7063 reads them) and
/// the cache written to the index are git's. Directory times are set to fixed instants (never
/// "now"), so that no directory is racily clean and both twins see the same changes.
#[test]
fn an_untracked_cache_is_used_and_written_back_as_git_does() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    commit_files(&by_git, &["one", "two", "done/four", "tracked/sub/five"]);
    for (path, content) in [
        ("three", "3\n"),
        ("dthree/x", "x\n"),
        ("dtwo/y", "y\n"),
        (".gitignore", "ignored\n*.o\n"),
        ("done/ignored", "i\n"),
        ("done/a.o", "o\n"),
    ] {
        let p = by_git.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    std::fs::write(by_git.join(".git/info/exclude"), "dtwo\n").unwrap();
    git_ok(&by_git, ["config", "core.untrackedCache", "true"]);
    age(&by_git, "-2 hours");
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    // Every directory of both work trees to the instant `at` (seconds since the epoch).
    for dir in [&by_git, &by_par] {
        age_dirs(dir, 1_700_000_000);
    }
    type Change = &'static dyn Fn(&Path);
    let none: Change = &|_| {};
    let steps: &[(&str, Change, &[&str])] = &[
        ("made", none, &["status", "--porcelain"]),
        ("all valid", none, &["status", "--porcelain"]),
        (
            "new file",
            &|d| std::fs::write(d.join("done/new"), "n\n").unwrap(),
            &["status", "--porcelain"],
        ),
        (
            "gitignore",
            &|d| std::fs::write(d.join(".gitignore"), "ignored\n*.o\nthree\n").unwrap(),
            &["status", "--porcelain"],
        ),
        (
            "dir removed",
            &|d| std::fs::remove_dir_all(d.join("dthree")).unwrap(),
            &["status", "--porcelain"],
        ),
        (
            "dir added",
            &|d| {
                std::fs::create_dir_all(d.join("u/v")).unwrap();
                std::fs::write(d.join("u/v/w"), "w\n").unwrap();
                std::fs::create_dir_all(d.join("tracked/sub/empty")).unwrap();
            },
            &["status", "--porcelain"],
        ),
        (
            "info/exclude",
            &|d| std::fs::write(d.join(".git/info/exclude"), "dtwo\nu\n").unwrap(),
            &["status", "--porcelain"],
        ),
        (
            "nested gitignore",
            &|d| std::fs::write(d.join("done/.gitignore"), "new\n").unwrap(),
            &["status"],
        ),
        (
            "index change",
            &|d| {
                git_ok(d, ["add", "done/.gitignore"]);
            },
            &["status", "--porcelain"],
        ),
        ("-uall bypasses", none, &["status", "--porcelain", "-uall"]),
        (
            "showUntrackedFiles=all rebuilds",
            none,
            &[
                "-c",
                "status.showUntrackedFiles=all",
                "status",
                "--porcelain",
                "-uall",
            ],
        ),
        ("back to normal", none, &["status", "--porcelain"]),
        (
            "kept unwritten",
            &|d| {
                git_ok(d, ["config", "--unset", "core.untrackedCache"]);
                std::fs::write(d.join("done/kept"), "k\n").unwrap();
            },
            &["status", "--porcelain"],
        ),
        (
            "dropped",
            none,
            &["-c", "core.untrackedCache=false", "status", "--porcelain"],
        ),
    ];
    for (n, &(what, change, args)) in steps.iter().enumerate() {
        let at = 1_700_000_100 + 100 * n as u32;
        for dir in [&by_git, &by_par] {
            change(dir);
            age_dirs(dir, at);
        }
        same_status_as_git(&by_git, &by_par, args, &format!("{n} ({what})"));
    }
}

/// `git par refresh` (`git update-index --refresh`) adds an untracked cache with
/// `core.untrackedCache=true` and drops one with `false`, as git's `tweak_untracked_cache` does
/// when the index is read, in a twin repository where git runs the same commands.
#[test]
fn refresh_adds_and_drops_the_untracked_cache_as_git_does() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    commit_files(&by_git, &["a", "d/b"]);
    age(&by_git, "-2 hours");
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    for (n, setting) in ["true", "true", "false", "false"].iter().enumerate() {
        let config = format!("core.untrackedCache={setting}");
        git_ok(&by_git, ["-c", &config, "update-index", "--refresh"]);
        git_par(&by_par, ["-c", &config, "refresh"]).assert_success();
        assert_eq!(
            untracked_cache_dump(&by_par),
            untracked_cache_dump(&by_git),
            "step {n}: core.untrackedCache={setting}"
        );
    }
    // Then a status of each, by git, finds the same cache to use.
    git_ok(
        &by_git,
        [
            "-c",
            "core.untrackedCache=true",
            "update-index",
            "--refresh",
        ],
    );
    git_par(&by_par, ["-c", "core.untrackedCache=true", "refresh"]).assert_success();
    for dir in [&by_git, &by_par] {
        git_ok(dir, ["status", "--porcelain"]);
    }
    assert_eq!(untracked_cache_dump(&by_par), untracked_cache_dump(&by_git));
}

/// An fsmonitor hook and an untracked cache together, against git in a twin repository: the
/// hook's answer invalidates the cache's directories holding what it reports (`.git` paths
/// excepted), valid directories are trusted without an `lstat` (an unreported new file stays
/// unseen, by git too), and a trivial answer makes every directory checked again. At each step
/// the output, the walk's statistics and the cache written are git's.
#[test]
fn an_fsmonitor_hook_invalidates_the_untracked_cache_as_git_does() {
    let s = scratch();
    let by_git = init_repo(s.path(), "by-git");
    commit_files(&by_git, &["a", "d/b", "e/f/g"]);
    std::fs::write(by_git.join("d/u"), "u\n").unwrap();
    let hook = "#!/bin/sh\nprintf 'token\\0'\ncat .git/report 2>/dev/null\nexit 0\n";
    std::fs::write(by_git.join(".git/fsm"), hook).unwrap();
    run("chmod", &by_git, ["+x", ".git/fsm"]).assert_success();
    git_ok(&by_git, ["config", "core.fsmonitor", ".git/fsm"]);
    git_ok(&by_git, ["config", "core.untrackedCache", "true"]);
    age(&by_git, "-2 hours");
    let by_par = s.join("by-par");
    copy_repo(&by_git, &by_par);
    type Change = &'static dyn Fn(&Path);
    let none: Change = &|_| {};
    let new_file: Change = &|d| std::fs::write(d.join("e/f/new"), "n\n").unwrap();
    let steps: &[(&str, Change, &str)] = &[
        ("made", none, ""),
        ("trusted", none, ""),
        ("unreported new file", new_file, ""),
        ("git directory reported", none, ".git\0.git/index\0d/.git\0"),
        ("file reported", none, "e/f/new\0"),
        (
            "directory reported",
            &|d| std::fs::write(d.join("d/v"), "v\n").unwrap(),
            "d/\0",
        ),
        (
            "trivial answer",
            &|d| std::fs::write(d.join("e/w"), "w\n").unwrap(),
            "/",
        ),
        ("after", none, ""),
    ];
    let args: &[&str] = &["status", "--porcelain"];
    for (n, &(what, change, report)) in steps.iter().enumerate() {
        for dir in [&by_git, &by_par] {
            change(dir);
            age_dirs(dir, 1_700_000_000 + 100 * n as u32);
            std::fs::write(dir.join(".git/report"), report).unwrap();
        }
        same_status_as_git(&by_git, &by_par, args, &format!("{n} ({what})"));
    }
}
