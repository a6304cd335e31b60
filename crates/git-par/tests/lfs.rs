//! Git LFS, the real component: repositories cloned (`git clone --no-checkout`) from a bare
//! `file://` remote that holds LFS objects (`tests/fixtures/make_lfs.sh`; git-lfs's standalone
//! transfer agent serves them, no server), with `git lfs install --local`, then checked out and
//! switched by git on one copy and by git-par on the other. Files must be equal byte for byte,
//! `git lfs ls-files` equal, the index equal and status clean. Needs `git-lfs` (`.ci/run`
//! installs it).

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use support::*;

/// Two clones of the LFS fixture's remote, LFS configured in each, nothing checked out.
struct Pair {
    _s: Scratch,
    by_git: PathBuf,
    by_par: PathBuf,
}

impl Pair {
    fn new() -> Pair {
        let version = git(std::path::Path::new("/"), ["lfs", "version"]);
        assert!(
            version.success(),
            "these tests need git-lfs (apt-get install git-lfs): {}",
            version.describe()
        );
        let remote = fixture_named("lfs").join("remote.git");
        let url = format!("file://{}", remote.display());
        let s = scratch();
        let clone = |name: &str| {
            let repo = s.join(name);
            git_ok(
                s.path(),
                [
                    OsString::from("clone"),
                    "-q".into(),
                    "--no-checkout".into(),
                    url.clone().into(),
                    repo.clone().into(),
                ],
            );
            git_ok(&repo, ["lfs", "install", "--local"]);
            repo
        };
        let (by_git, by_par) = (clone("by-git"), clone("by-par"));
        Pair {
            _s: s,
            by_git,
            by_par,
        }
    }

    fn run(&self, cmd: &[&str], jobs: u32) {
        let mut args: Vec<String> = vec!["-c".into(), THRESHOLD_ZERO.into()];
        args.extend(cmd.iter().map(|s| (*s).to_owned()));
        git(&self.by_git, &args).assert_success();
        let jobs = jobs.to_string();
        args.splice(3..3, ["-j".to_owned(), jobs]);
        git_par(&self.by_par, &args).assert_success();
    }

    #[track_caller]
    fn assert_same(&self) {
        compare_worktrees(&self.by_git, &self.by_par);
        compare_indexes(&self.by_git, &self.by_par, &[]);
        assert_eq!(
            git_str(&self.by_git, ["lfs", "ls-files", "--long"]),
            git_str(&self.by_par, ["lfs", "ls-files", "--long"]),
        );
        assert_status_like_git(&self.by_git, &self.by_par, &[]);
        assert_clean(&self.by_par, &[]);
    }
}

fn lfs_checkout_and_switch_match_git(jobs: u32) {
    let pair = Pair::new();
    pair.run(&["reset", "-q", "--hard"], jobs);
    pair.assert_same();
    // Real content, not pointers: the first bytes of an LFS file are not "version https://".
    let first = fs::read(pair.by_par.join("lfs/d1/f1.bin")).unwrap();
    assert!(!first.starts_with(b"version https://git-lfs"));
    assert!(first.len() > 1024);

    pair.run(&["switch", "-q", "other"], jobs);
    pair.assert_same();

    // Rewritten with the same bytes (new stat data): the clean direction (git-lfs's `clean`)
    // says they are unchanged, so the switch back goes ahead.
    for side in [&pair.by_git, &pair.by_par] {
        for path in ["lfs/d1/f1.bin", "lfs/d2/f2.bin", "lfs/d3/f303.bin"] {
            let content = fs::read(side.join(path)).unwrap();
            fs::remove_file(side.join(path)).unwrap();
            fs::write(side.join(path), content).unwrap();
        }
    }
    pair.run(&["checkout", "-q", "main"], jobs);
    pair.assert_same();
}

#[test]
fn lfs_checkout_and_switch_match_git_with_1_worker() {
    lfs_checkout_and_switch_match_git(1);
}

#[test]
fn lfs_checkout_and_switch_match_git_with_8_workers() {
    lfs_checkout_and_switch_match_git(8);
}

/// `clone` of the LFS remote, filters configured for the command (`-c`, as `git lfs install`
/// would globally): git-par's clone (git fetches, the engine checks out through git-lfs) gives
/// git's files, index and `git lfs ls-files`, and status is clean.
#[test]
fn lfs_clone_matches_git() {
    let remote = fixture_named("lfs").join("remote.git");
    let url = format!("file://{}", remote.display());
    let s = scratch();
    let config = [
        "filter.lfs.process=git-lfs filter-process".to_owned(),
        "filter.lfs.smudge=git-lfs smudge -- %f".to_owned(),
        "filter.lfs.clean=git-lfs clean -- %f".to_owned(),
        "filter.lfs.required=true".to_owned(),
    ];
    let clone = |program: &str, name: &str| {
        let mut args = config_args(&config);
        args.extend([
            OsString::from("clone"),
            "-q".into(),
            url.clone().into(),
            s.join(name).into(),
        ]);
        let run = run(program, s.path(), args);
        assert!(run.success(), "{}", run.describe());
        s.join(name)
    };
    let (by_git, by_par) = (clone("git", "by-git"), clone(GIT_PAR, "by-par"));
    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &config);
    let ls = |dir: &PathBuf| {
        let mut args = config_args(&config);
        args.extend(["lfs", "ls-files", "--long"].map(OsString::from));
        git_str(dir, args)
    };
    assert_eq!(ls(&by_git), ls(&by_par));
    let first = fs::read(by_par.join("lfs/d1/f1.bin")).unwrap();
    assert!(!first.starts_with(b"version https://git-lfs"));
    assert_status_like_git(&by_git, &by_par, &config);
    assert_clean(&by_par, &config);
}
