//! Clones onto a case-insensitive filesystem (testfs `--case-insensitive`, folding names as NTFS
//! and APFS do): paths that differ only in case collide, as in git's
//! t2081-parallel-checkout-collisions.sh (which Linux alone cannot run). git-par, with one writer
//! and with eight, must print git's warning with git's list, leave git's one file per colliding
//! group (the last in index order) and record git's index.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// A repository whose tree holds a group of four names equal but for case (distinct contents), a
/// file `a` colliding with the directory `A/` of `A/B` and `A/C` (the file after them in index
/// order: it wins), a file `B` before the directory `b/` of `b/c` (the directory wins, and git
/// reports nothing), two directories equal but for
/// case (`DIR/y`, `dir/x`: no collision, one directory), and ordinary files.
fn colliding_repo(dir: &Path) {
    git_ok(dir.parent().unwrap(), ["init", "-q", dir.to_str().unwrap()]);
    let mut info = String::new();
    let blob = |content: &str| -> String {
        let path = dir.join(".blob");
        fs::write(&path, content).unwrap();
        let oid = git_str(dir, ["hash-object", "-w", ".blob"]);
        fs::remove_file(path).unwrap();
        oid
    };
    for path in [
        "FILE_X", "FILE_x", "file_X", "file_x", "A/B", "A/C", "a", "B", "b/c", "DIR/y", "dir/x",
        "README", "sub/one",
    ] {
        info.push_str(&format!("100644 {}\t{path}\n", blob(&format!("{path}\n"))));
    }
    fs::write(dir.join(".info"), info).unwrap();
    let status = std::process::Command::new("sh")
        .current_dir(dir)
        .args(["-c", "git update-index --index-info <.info"])
        .env("HOME", home())
        .status()
        .unwrap();
    assert!(status.success());
    fs::remove_file(dir.join(".info")).unwrap();
    git_ok(dir, ["commit", "-q", "-m", "colliding paths"]);
}

fn clone_collisions_match_git(jobs: u32) {
    let s = scratch();
    let src = s.join("src");
    colliding_repo(&src);
    let Some((mount, by_git, by_par)) = testfs_sides(
        &s.join("fs"),
        testfs::Options {
            case_insensitive: true,
            ..testfs::Options::default()
        },
    ) else {
        return;
    };
    let git_run = git(s.path(), clone_elsewhere_args(&src, &by_git)).assert_success();
    let workers = format!("checkout.workers={jobs}");
    let mut par_args: Vec<std::ffi::OsString> = vec![
        "-c".into(),
        THRESHOLD_ZERO.into(),
        "-c".into(),
        workers.into(),
    ];
    par_args.extend(clone_elsewhere_args(&src, &by_par));
    let par_run = git_par(s.path(), par_args).assert_success();

    // The mount really folds case: git saw the collisions (else this test proves nothing).
    assert!(
        git_run
            .stderr_str()
            .contains("the following paths have collided"),
        "git reported no collision on the case-insensitive mount: {}",
        git_run.describe()
    );
    assert_eq!(
        par_run.stderr_str(),
        git_run.stderr_str(),
        "the collision report differs (left: git-par, right: git)"
    );

    // One file per group, the same one as git's (the last in index order), same contents.
    compare_worktrees(&by_git, &by_par);
    let names = dir_names(&by_par);
    assert_eq!(
        names
            .iter()
            .filter(|n| n.eq_ignore_ascii_case("file_x"))
            .count(),
        1,
        "one file of the FILE_X group on disk: {names:?}"
    );
    assert_eq!(index_listing(&by_git, &[]), index_listing(&by_par, &[]));
    assert_eq!(
        porcelain_all(&by_git),
        porcelain_all(&by_par),
        "git status (left: git)"
    );
    drop(mount);
}

#[test]
fn clone_collisions_with_1_worker_match_git() {
    clone_collisions_match_git(1);
}

#[test]
fn clone_collisions_with_8_workers_match_git() {
    clone_collisions_match_git(8);
}

/// A group of three names equal but for case (`FILE_X`, `FILE_x`, `file_X`) where the writer of
/// the middle one, `FILE_x`, creates its file first: the other two are filtered by a smudge
/// command that waits until the group's file exists (under any spelling, the mount folds case),
/// and only `FILE_x`'s writer can make it then. Its two neighbours collide and are written by
/// the sequential tail; git, in index order, leaves the last one, `file_X`, on disk. (That the
/// writer of a middle entry wins happens by chance with eight writers and no filter; here it
/// happens every time.) `core.ignorecase` is false for both, so that the attribute patterns do
/// not fold and `FILE_x` itself is not filtered; the collisions are found by inode numbers, as
/// git finds them.
#[test]
fn clone_collision_won_by_a_middle_entry_matches_git() {
    let s = scratch();
    let src = s.join("src");
    git_ok(s.path(), ["init", "-q", src.to_str().unwrap()]);
    for path in ["FILE_X", "FILE_x", "file_X"] {
        fs::write(src.join(".blob"), format!("{path}\n")).unwrap();
        let oid = git_str(&src, ["hash-object", "-w", ".blob"]);
        git_ok(
            &src,
            [
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{oid},{path}"),
            ],
        );
    }
    fs::remove_file(src.join(".blob")).unwrap();
    fs::write(
        src.join(".gitattributes"),
        "FILE_X filter=wait\nfile_X filter=wait\n",
    )
    .unwrap();
    git_ok(&src, ["add", ".gitattributes"]);
    git_ok(&src, ["commit", "-q", "-m", "colliding paths"]);
    let Some((mount, by_git, by_par)) = testfs_sides(
        &s.join("fs"),
        testfs::Options {
            case_insensitive: true,
            ..testfs::Options::default()
        },
    ) else {
        return;
    };
    let git_run = git(
        s.path(),
        [
            "-c".as_ref(),
            "core.ignorecase=false".as_ref(),
            "clone".as_ref(),
            "-q".as_ref(),
            "--no-hardlinks".as_ref(),
            src.as_os_str(),
            by_git.as_os_str(),
        ],
    )
    .assert_success();
    // Waits for the group's file (a condition, polled; the bound only turns a hang into a
    // failure of the required filter), then passes the content through unchanged.
    let group = by_par.join("FILE_x");
    let smudge = format!(
        "filter.wait.smudge=i=0; until test -e '{}'; do i=$((i+1)); \
         test $i -lt 1200 || exit 1; sleep 0.05; done; cat",
        group.display()
    );
    let par_run = git_par(
        s.path(),
        [
            "-c".as_ref(),
            THRESHOLD_ZERO.as_ref(),
            "-c".as_ref(),
            "checkout.workers=8".as_ref(),
            "-c".as_ref(),
            "core.ignorecase=false".as_ref(),
            "-c".as_ref(),
            smudge.as_ref(),
            "-c".as_ref(),
            "filter.wait.required=true".as_ref(),
            "clone".as_ref(),
            "-q".as_ref(),
            "--no-hardlinks".as_ref(),
            src.as_os_str(),
            by_par.as_os_str(),
        ],
    )
    .assert_success();
    assert!(
        git_run
            .stderr_str()
            .contains("the following paths have collided"),
        "git reported no collision on the case-insensitive mount: {}",
        git_run.describe()
    );
    assert_eq!(
        par_run.stderr_str(),
        git_run.stderr_str(),
        "the collision report differs (left: git-par, right: git)"
    );
    compare_worktrees(&by_git, &by_par);
    assert!(
        dir_names(&by_par).contains(&"file_X".to_string()),
        "{:?}",
        dir_names(&by_par)
    );
    assert_eq!(index_listing(&by_git, &[]), index_listing(&by_par, &[]));
    assert_eq!(
        porcelain_all(&by_git),
        porcelain_all(&by_par),
        "git status (left: git)"
    );
    drop(mount);
}

/// A symlink `D` and files under the directory `d/` fold to one name (issue 23): git's clone,
/// in index order, makes the symlink, then replaces it by the directory `d` for `d/x` (a
/// leading path that is not a real directory goes), reports the collision and leaves the
/// symlink out (`git status` shows it deleted). git-par's writers make `d/x` first; its tail
/// must end the same way, not fail on the symlink.
#[test]
fn clone_symlink_folding_onto_a_directory_matches_git() {
    let s = scratch();
    let src = s.join("src");
    git_ok(s.path(), ["init", "-q", src.to_str().unwrap()]);
    let blob = |content: &str| -> String {
        fs::write(src.join(".blob"), content).unwrap();
        let oid = git_str(&src, ["hash-object", "-w", ".blob"]);
        fs::remove_file(src.join(".blob")).unwrap();
        oid
    };
    for (mode, path, content) in [
        ("120000", "D", "elsewhere"),
        ("100644", "d/x", "x\n"),
        ("100644", "d/y", "y\n"),
        ("100644", "z", "z\n"),
    ] {
        git_ok(
            &src,
            [
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("{mode},{},{path}", blob(content)),
            ],
        );
    }
    git_ok(
        &src,
        [
            "commit",
            "-q",
            "-m",
            "a symlink and a directory folding to one name",
        ],
    );
    let Some((mount, by_git, by_par)) = testfs_sides(
        &s.join("fs"),
        testfs::Options {
            case_insensitive: true,
            ..testfs::Options::default()
        },
    ) else {
        return;
    };
    let git_run = git(
        s.path(),
        [
            "clone".as_ref(),
            "-q".as_ref(),
            "--no-hardlinks".as_ref(),
            src.as_os_str(),
            by_git.as_os_str(),
        ],
    );
    for jobs in ["1", "8"] {
        let _ = fs::remove_dir_all(&by_par);
        let workers = format!("checkout.workers={jobs}");
        let par_run = git_par(
            s.path(),
            [
                "-c".as_ref(),
                THRESHOLD_ZERO.as_ref(),
                "-c".as_ref(),
                workers.as_ref(),
                "clone".as_ref(),
                "-q".as_ref(),
                "--no-hardlinks".as_ref(),
                src.as_os_str(),
                by_par.as_os_str(),
            ],
        );
        assert_eq!(
            (par_run.status.code(), par_run.stderr_str()),
            (git_run.status.code(), git_run.stderr_str()),
            "{jobs} writers (left: git-par, right: git)"
        );
        compare_worktrees(&by_git, &by_par);
        assert_eq!(index_listing(&by_git, &[]), index_listing(&by_par, &[]));
        assert_eq!(
            porcelain_all(&by_git),
            porcelain_all(&by_par),
            "git status (left: git)"
        );
    }
    drop(mount);
}
