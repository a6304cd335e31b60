//! `git par clone` against `git clone --local`, on the same source, compared file by file, entry by
//! entry and ref by ref.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// Clones `fixture` with git (the oracle) and with git-par under `settings` and extra `-c` options,
/// and asserts git-par left what git left: work tree, index (with real stat data), HEAD, refs, remote
/// setup, and git's view of the result.
fn clone_matches_git(fixture: Fixture, settings: Settings, config: &[&str]) {
    let src = support::fixture(fixture);
    let s = scratch();
    let config: Vec<String> = config.iter().map(|c| (*c).to_owned()).collect();
    let opts = CloneOpts {
        config: config.clone(),
        ..CloneOpts::default()
    };
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, settings, src, &by_par).assert_success();

    // Read-only comparisons first, then stat data: anything after it may refresh the index.
    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &config);
    assert_real_stat(&by_git, &config);
    assert_real_stat(&by_par, &config);
    assert_eq!(
        clone_metadata(&by_git),
        clone_metadata(&by_par),
        "HEAD, refs or remote setup differ (left: git, right: git-par)"
    );
    assert_status_like_git(&by_git, &by_par, &config);
    assert_repository_usable(&by_par);
}

macro_rules! clone_matrix {
    ($($name:ident: $fixture:expr, $settings:expr;)*) => {
        $(
            #[test]
            fn $name() {
                clone_matches_git($fixture, $settings, &[]);
            }
        )*
    };
}

clone_matrix! {
    clone_kitchen_sink_with_1_worker_matches_git: Fixture::KitchenSink, Settings::Jobs(1);
    clone_kitchen_sink_with_2_workers_matches_git: Fixture::KitchenSink, Settings::Jobs(2);
    clone_kitchen_sink_with_8_workers_matches_git: Fixture::KitchenSink, Settings::Jobs(8);
    clone_kitchen_sink_with_default_settings_matches_git: Fixture::KitchenSink, Settings::Default;
    clone_many_files_with_1_worker_matches_git: Fixture::ManyFiles, Settings::Jobs(1);
    clone_many_files_with_2_workers_matches_git: Fixture::ManyFiles, Settings::Jobs(2);
    clone_many_files_with_8_workers_matches_git: Fixture::ManyFiles, Settings::Jobs(8);
    clone_many_files_with_default_settings_matches_git: Fixture::ManyFiles, Settings::Default;
    clone_big_file_with_1_worker_matches_git: Fixture::BigFile, Settings::Jobs(1);
    clone_big_file_with_8_workers_matches_git: Fixture::BigFile, Settings::Jobs(8);
}

/// A budget smaller than most blobs (and far smaller than the 100 MiB one) must neither deadlock
/// nor change the result: oversized blobs run alone, the others wait their turn.
#[test]
fn clone_under_a_memory_budget_smaller_than_the_blobs_matches_git() {
    clone_matches_git(
        Fixture::BigFile,
        Settings::Jobs(8),
        &["par.memoryBudget=4096"],
    );
    clone_matches_git(
        Fixture::ManyFiles,
        Settings::Jobs(8),
        &["par.memoryBudget=100"],
    );
}

#[test]
fn clone_with_core_symlinks_false_writes_symlinks_as_plain_files_like_git() {
    clone_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(8),
        &["core.symlinks=false"],
    );
}

#[test]
fn clone_with_core_autocrlf_true_converts_text_like_git() {
    clone_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(8),
        &["core.autocrlf=true"],
    );
}

#[test]
fn clone_with_core_eol_crlf_converts_text_like_git() {
    clone_matches_git(Fixture::KitchenSink, Settings::Jobs(2), &["core.eol=crlf"]);
}

#[test]
fn clone_with_working_tree_encoding_reencodes_like_git() {
    clone_matches_git(Fixture::Encoding, Settings::Jobs(2), &[]);
}

#[test]
fn clone_ignores_an_undefined_filter_driver_like_git() {
    // .gitattributes names filter "fake" but no filter.fake.* is configured: git writes the blobs as
    // they are.
    clone_matches_git(Fixture::Filter, Settings::Jobs(2), &[]);
}

/// With an external smudge filter configured for `*.lfs`, git-par runs it as git does (the
/// filter tests are in `filters.rs`).
#[test]
fn clone_runs_a_configured_smudge_filter_like_git() {
    clone_matches_git(
        Fixture::Filter,
        Settings::Jobs(2),
        &[
            "filter.fake.smudge=tr a-z n-za-m",
            "filter.fake.clean=tr a-z n-za-m",
        ],
    );
}

/// Without any configured identity, git falls back to the account's name and `user@host`; the
/// clone must work all the same and sign its reflog the way git does.
#[test]
fn clone_without_a_configured_identity_signs_the_reflog_like_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let home = s.join("empty-home");
    fs::create_dir(&home).unwrap();
    let clone_with = |program: &str, dst: &Path| {
        let mut cmd = std::process::Command::new(program);
        clean_env(&mut cmd)
            .env("HOME", &home)
            .env_remove("EMAIL")
            .current_dir(s.path())
            .args(["clone", "-q"])
            .arg(src)
            .arg(dst);
        let out = cmd.output().expect("runs");
        assert!(
            out.status.success(),
            "{program} clone failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    clone_with("git", &by_git);
    clone_with(env!("CARGO_BIN_EXE_git-par"), &by_par);
    let identity = |dir: &Path| {
        let log = fs::read_to_string(dir.join(".git/logs/HEAD")).unwrap();
        let line = log.lines().last().unwrap().to_owned();
        // "<old> <new> <name> <<email>> <time> <tz>\t<message>": keep name and email.
        let sig = line.split('\t').next().unwrap();
        let start = sig.find(' ').unwrap() + 1;
        let start = start + sig[start..].find(' ').unwrap() + 1;
        let end = sig.rfind('>').unwrap() + 1;
        sig[start..end].to_owned()
    };
    assert_eq!(identity(&by_git), identity(&by_par));
}

#[test]
fn clone_no_checkout_matches_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let opts = CloneOpts {
        no_checkout: true,
        ..CloneOpts::default()
    };
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &by_par).assert_success();
    compare_worktrees(&by_git, &by_par);
    assert_eq!(
        by_git.join(".git/index").exists(),
        by_par.join(".git/index").exists(),
        "git and git-par disagree on writing an index with --no-checkout"
    );
    assert_eq!(index_listing(&by_git, &[]), index_listing(&by_par, &[]));
    assert_eq!(clone_metadata(&by_git), clone_metadata(&by_par));
    assert_repository_usable(&by_par);
}

#[test]
fn clone_of_branch_other_with_b_matches_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let opts = CloneOpts {
        branch: Some("other".to_owned()),
        ..CloneOpts::default()
    };
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(8), src, &by_par).assert_success();
    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &[]);
    assert_real_stat(&by_par, &[]);
    assert_eq!(clone_metadata(&by_git), clone_metadata(&by_par));
    assert_status_like_git(&by_git, &by_par, &[]);
}

#[test]
fn clone_from_file_url_matches_git() {
    let src = fixture(Fixture::KitchenSink);
    let url = format!("file://{}", src.display());
    let s = scratch();
    let opts = CloneOpts::default();
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, &url, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), &url, &by_par).assert_success();
    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &[]);
    assert_real_stat(&by_par, &[]);
    assert_eq!(clone_metadata(&by_git), clone_metadata(&by_par));
    assert_status_like_git(&by_git, &by_par, &[]);
    assert_repository_usable(&by_par);
}

#[test]
fn clone_with_relative_source_and_destination_records_the_same_remote_as_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let rel_src = relative_path(s.path(), src);
    let opts = CloneOpts::default();
    git_clone(s.path(), &opts, &rel_src, "by-git").assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), &rel_src, "by-git-par").assert_success();
    let (by_git, by_par) = (s.join("by-git"), s.join("by-git-par"));
    compare_worktrees(&by_git, &by_par);
    assert_real_stat(&by_par, &[]);
    assert_eq!(clone_metadata(&by_git), clone_metadata(&by_par));
    assert_status_like_git(&by_git, &by_par, &[]);
}

#[test]
fn clone_of_source_with_detached_head_matches_git() {
    let s = scratch();
    let src = s.join("source");
    copy_repo(fixture(Fixture::KitchenSink), &src);
    git(&src, ["checkout", "-q", "--detach", "other"]).assert_success();
    let opts = CloneOpts::default();
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, &src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), &src, &by_par).assert_success();
    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &[]);
    assert_real_stat(&by_par, &[]);
    assert_eq!(clone_metadata(&by_git), clone_metadata(&by_par));
    assert_status_like_git(&by_git, &by_par, &[]);
}

#[test]
fn clone_writes_the_same_local_config_as_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let opts = CloneOpts {
        config: vec![THRESHOLD_ZERO.to_owned(), "core.autocrlf=false".to_owned()],
        ..CloneOpts::default()
    };
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &by_par).assert_success();
    let config = |dir: &Path| {
        let mut lines: Vec<String> = git_str(dir, ["config", "--local", "--list"])
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(
        config(&by_git),
        config(&by_par),
        "`git config --local --list` differs (left: git, right: git-par); -c options must not persist"
    );
}

#[test]
fn clone_writes_the_same_reflog_messages_as_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let opts = CloneOpts::default();
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &by_par).assert_success();
    for reference in ["HEAD", "refs/heads/main"] {
        let log = |dir: &Path| git_str(dir, ["log", "-g", "--format=%H %gs", reference, "--"]);
        assert_eq!(log(&by_git), log(&by_par), "reflog of {reference} differs");
    }
}

#[test]
fn clone_leaves_nothing_in_git_dir_that_git_would_not_create() {
    let src = fixture(Fixture::ManyFiles);
    let s = scratch();
    let opts = CloneOpts::default();
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(8), src, &by_par).assert_success();
    let git_names = dir_names(&by_git.join(".git"));
    let extra: Vec<String> = dir_names(&by_par.join(".git"))
        .into_iter()
        .filter(|n| !git_names.contains(n))
        .collect();
    assert!(
        extra.is_empty(),
        "git-par left {extra:?} in .git (git has only {git_names:?})"
    );
    assert!(!by_par.join(".git/index.lock").exists());
}

#[test]
fn clone_quiet_prints_nothing_like_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let opts = CloneOpts {
        quiet: true,
        ..CloneOpts::default()
    };
    let by_git = git_clone(s.path(), &opts, src, s.join("by-git")).assert_success();
    let by_par = git_par_clone(
        s.path(),
        &opts,
        Settings::Jobs(2),
        src,
        s.join("by-git-par"),
    )
    .assert_success();
    assert_eq!(
        (by_git.stdout.is_empty(), by_git.stderr.is_empty()),
        (by_par.stdout.is_empty(), by_par.stderr.is_empty()),
        "git -q printed {:?}/{:?}, git-par -q printed {:?}/{:?}",
        by_git.stdout_str(),
        by_git.stderr_str(),
        by_par.stdout_str(),
        by_par.stderr_str()
    );
}

#[test]
fn clone_into_existing_empty_directory_matches_git() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let by_git = s.join("by-git");
    let by_par = s.join("by-git-par");
    fs::create_dir(&by_git).unwrap();
    fs::create_dir(&by_par).unwrap();
    let opts = CloneOpts::default();
    git_clone(s.path(), &opts, src, &by_git).assert_success();
    git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &by_par).assert_success();
    compare_worktrees(&by_git, &by_par);
    compare_indexes(&by_git, &by_par, &[]);
    assert_real_stat(&by_par, &[]);
    assert_status_like_git(&by_git, &by_par, &[]);
}

#[test]
fn clone_into_non_empty_directory_is_refused_like_git_and_leaves_it_untouched() {
    let src = fixture(Fixture::KitchenSink);
    let s = scratch();
    let opts = CloneOpts::default();
    for (who, dir) in [("git", s.join("by-git")), ("git-par", s.join("by-git-par"))] {
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("README"), b"mine\n").unwrap();
        let run = if who == "git" {
            git_clone(s.path(), &opts, src, &dir)
        } else {
            git_par_clone(s.path(), &opts, Settings::Jobs(2), src, &dir)
        };
        run.assert_failure();
        assert_eq!(
            dir_names(&dir),
            vec!["README".to_owned()],
            "{who} changed {}",
            dir.display()
        );
        assert_eq!(fs::read(dir.join("README")).unwrap(), b"mine\n");
    }
}

#[test]
fn clone_of_missing_source_fails_like_git_without_creating_destination() {
    let s = scratch();
    let missing = s.join("no-such-repository");
    let opts = CloneOpts::default();
    git_clone(s.path(), &opts, &missing, s.join("by-git")).assert_failure();
    let run = git_par_clone(
        s.path(),
        &opts,
        Settings::Jobs(2),
        &missing,
        s.join("by-git-par"),
    )
    .assert_failure();
    assert!(
        !run.stderr.is_empty(),
        "no error message: {}",
        run.describe()
    );
    assert_eq!(
        s.join("by-git").exists(),
        s.join("by-git-par").exists(),
        "git and git-par disagree on leaving a destination behind"
    );
    assert!(!s.join("by-git-par").exists());
}

#[test]
fn fixtures_are_deterministic_and_git_clone_checks_them_out_cleanly() {
    // The oracle itself: git's own clone of each fixture is clean and carries real stat data ...
    for f in [
        Fixture::KitchenSink,
        Fixture::ManyFiles,
        Fixture::Filter,
        Fixture::Encoding,
    ] {
        let s = scratch();
        let dst = s.join("clone");
        git_clone(s.path(), &CloneOpts::default(), fixture(f), &dst).assert_success();
        assert_real_stat(&dst, &[]);
        assert_clean(&dst, &[]);
    }
    // ... and a fixture built again has the same commits, tags and branches.
    let s = scratch();
    let again = s.join("again");
    let script = fixtures_dir().join("make_kitchen_sink.sh");
    run("bash", s.path(), [script.as_os_str(), again.as_os_str()]).assert_success();
    let refs = |dir: &Path| git_str(dir, ["for-each-ref", "--format=%(objectname) %(refname)"]);
    assert_eq!(refs(fixture(Fixture::KitchenSink)), refs(&again));
}
