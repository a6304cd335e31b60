//! A clone onto a filesystem where every `mkdir` is slow (testfs with a mkdir latency): in a fresh
//! tree git-par's writers start before the thread that makes the directories is done, so they
//! overtake it and must wait for the directories they need. The result must be git's: the same
//! files, the same index, a clean status.

mod support;

use std::time::Duration;

use support::*;

#[test]
fn clone_with_directories_slow_to_make_matches_git() {
    let s = scratch();
    // 350 directories, 10,500 files: the directory thread runs, and takes a second here.
    let src = fixture(Fixture::ManyFiles);
    let Some((mount, by_git, by_par)) = testfs_sides(
        &s.join("fs"),
        testfs::Options {
            mkdir_latency: Duration::from_millis(2),
            ..testfs::Options::default()
        },
    ) else {
        return;
    };
    git(s.path(), clone_elsewhere_args(src, &by_git)).assert_success();
    let par_run = git_par(s.path(), clone_elsewhere_args(src, &by_par)).assert_success();
    assert_eq!(par_run.stderr_str(), "", "git-par said something");

    compare_worktrees(&by_git, &by_par);
    assert_eq!(index_listing(&by_git, &[]), index_listing(&by_par, &[]));
    assert_eq!(
        porcelain_all(&by_par),
        "",
        "git status after git-par's clone"
    );
    drop(mount);
}
