//! `git par clone` against `git clone --local`, on the same source, compared file by file, entry by
//! entry and ref by ref.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use support::*;

/// Clones `fixture` with git (the oracle) and with git-par under `settings` and extra `-c` options,
/// and asserts git-par left what git left: work tree, index (with real stat data), HEAD, refs, remote
/// setup, and git's view of the result.
fn clone_matches_git(fixture: Fixture, settings: Settings, config: &[&str]) {
    clone_of_matches_git(support::fixture(fixture), settings, config);
}

/// [`clone_matches_git`] for the repository at `src`.
fn clone_of_matches_git(src: &Path, settings: Settings, config: &[&str]) {
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

/// Every combination of the `text`, `crlf` and `eol` attributes (`make_eol.sh`) under every
/// `core.autocrlf` and `core.eol`: the writers skip gix-filter's pipeline where git's
/// `convert_attrs` and `output_eol` say nothing changes, and must convert exactly what git does.
#[test]
fn clone_converts_end_of_lines_like_git_under_every_setting() {
    let src = fixture_named("eol");
    for config in [
        &[][..],
        &["core.autocrlf=true"],
        &["core.autocrlf=input"],
        &["core.eol=crlf"],
        &["core.eol=lf"],
        &["core.autocrlf=true", "core.eol=lf"],
        &["core.autocrlf=input", "core.eol=crlf"],
    ] {
        clone_of_matches_git(src, Settings::Jobs(2), config);
    }
}

/// Attributes that are the same for every file (`make_eol_uniform.sh`: `* text`, other lines
/// irrelevant to a checkout), looked up once by each writer of the fresh work tree: every
/// text file converted exactly as git converts it.
#[test]
fn clone_with_the_same_attributes_everywhere_converts_like_git() {
    let src = fixture_named("eol_uniform");
    for config in [
        &[][..],
        &["core.eol=crlf"],
        &["core.autocrlf=true"],
        &["core.autocrlf=input"],
    ] {
        clone_of_matches_git(src, Settings::Jobs(2), config);
        clone_of_matches_git(src, Settings::Jobs(1), config);
    }
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

// ---------------------------------------------------------------------------------------------------
// git sets the repository up, git-par checks it out: every option and every kind of source

/// `tests/fixtures/make_clone_sources.sh`: the repositories to clone from.
fn sources() -> &'static Path {
    fixture_named("clone_sources")
}

/// The two sides of a clone comparison: `<scratch>/git` and `<scratch>/par`, each the current
/// directory of its clone, so that relative destinations name the same thing on both sides.
struct Sides {
    s: Scratch,
}

impl Sides {
    fn new() -> Sides {
        let s = scratch();
        fs::create_dir(s.join("git")).unwrap();
        fs::create_dir(s.join("par")).unwrap();
        Sides { s }
    }
    fn git(&self) -> PathBuf {
        self.s.join("git")
    }
    fn par(&self) -> PathBuf {
        self.s.join("par")
    }
    /// `text` with each side's directory replaced by `<side>`.
    fn normalize(&self, text: &str) -> String {
        text.replace(&self.git().display().to_string(), "<side>")
            .replace(&self.par().display().to_string(), "<side>")
    }
}

fn os(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// `git [-c ...] clone ARGS` on the git side and `git-par [-c ...] -c checkout.workers=2 -c
/// checkout.thresholdForParallelism=0 clone ARGS` on the other, with `env`; returns both runs.
fn clone_both(
    sides: &Sides,
    config: &[&str],
    args: &[OsString],
    env: &[(&str, OsString)],
) -> (Run, Run) {
    let config: Vec<String> = config.iter().map(|c| (*c).to_owned()).collect();
    let mut git_args = config_args(&config);
    git_args.push("clone".into());
    git_args.extend(args.iter().cloned());
    let mut par_config = config.clone();
    par_config.extend(Settings::Jobs(2).config());
    par_config.extend(Settings::Jobs(2).workers_config());
    let mut par_args = config_args(&par_config);
    par_args.push("clone".into());
    par_args.extend(args.iter().cloned());
    let by_git = run_with("git", &sides.git(), &git_args, env);
    let by_par = run_with(GIT_PAR, &sides.par(), &par_args, env);
    (by_git, by_par)
}

/// What a clone left, as git reports it, with the sides' directories normalized: git
/// directory, HEAD, refs, local config, `shallow`, the git directory's top-level names, the
/// `post-checkout` record of the template hook; and for a work tree the index and status.
fn clone_state(sides: &Sides, dir: &Path) -> Vec<(String, String)> {
    let opt = |args: &[&str]| {
        let run = git(dir, args);
        let out = if run.success() {
            run.stdout_str()
        } else {
            format!("<exit {:?}>", run.status.code())
        };
        sides.normalize(out.trim_end())
    };
    let git_dir = opt(&["rev-parse", "--absolute-git-dir"]);
    let git_dir_path = PathBuf::from(
        git(dir, ["rev-parse", "--absolute-git-dir"])
            .stdout_str()
            .trim(),
    );
    let mut out = vec![
        ("git dir".to_owned(), git_dir),
        (
            "bare".to_owned(),
            opt(&["rev-parse", "--is-bare-repository"]),
        ),
        (
            "HEAD".to_owned(),
            opt(&["rev-parse", "-q", "--verify", "HEAD"]),
        ),
        (
            "symbolic-ref HEAD".to_owned(),
            opt(&["symbolic-ref", "-q", "HEAD"]),
        ),
        (
            "refs".to_owned(),
            opt(&[
                "for-each-ref",
                "--format=%(refname) %(objectname) %(symref)",
            ]),
        ),
        (
            "config --local".to_owned(),
            opt(&["config", "--list", "--local"]),
        ),
        (
            "shallow".to_owned(),
            fs::read_to_string(git_dir_path.join("shallow")).unwrap_or_default(),
        ),
        (
            "git dir names".to_owned(),
            format!("{:?}", dir_names(&git_dir_path)),
        ),
        (
            "hook record".to_owned(),
            sides.normalize(
                &fs::read_to_string(git_dir_path.join("hook-record")).unwrap_or_default(),
            ),
        ),
    ];
    if opt(&["rev-parse", "--is-bare-repository"]) == "false" {
        out.push(("ls-files -s".to_owned(), opt(&["ls-files", "-s"])));
        out.push((
            "status".to_owned(),
            opt(&["status", "--porcelain", "--ignored"]),
        ));
    }
    out
}

/// Clones with both, with `args` (which name the source and, maybe, the destination `dest`),
/// and asserts that git-par did what git did: exit status, messages, work tree, index, status,
/// HEAD, refs, configuration and git directory.
fn clone_like_git(
    config: &[&str],
    args: &[OsString],
    dest: &str,
    env: &[(&str, OsString)],
) -> Sides {
    let sides = Sides::new();
    let (by_git, by_par) = clone_both(&sides, config, args, env);
    assert_eq!(
        by_git.status.code(),
        by_par.status.code(),
        "exit codes differ\n{}\n{}",
        by_git.describe(),
        by_par.describe()
    );
    assert_eq!(
        sides.normalize(&by_git.stderr_str()),
        sides.normalize(&by_par.stderr_str()),
        "messages differ (left: git, right: git-par)"
    );
    assert_eq!(by_git.stdout_str(), by_par.stdout_str());
    let (git_dest, par_dest) = (sides.git().join(dest), sides.par().join(dest));
    assert_eq!(
        git_dest.exists(),
        par_dest.exists(),
        "{dest} exists on one side only"
    );
    if !git_dest.exists() {
        return sides;
    }
    assert_eq!(
        clone_state(&sides, &git_dest),
        clone_state(&sides, &par_dest),
        "the clones differ (left: git, right: git-par)"
    );
    if git_dest.join(".git").exists() {
        compare_worktrees(&git_dest, &par_dest);
        // Skip-worktree entries (a sparse checkout) have no file to compare stat data with.
        let sparse = git_str(&par_dest, ["ls-files", "-t"])
            .lines()
            .any(|l| l.starts_with("S "));
        // A submodule git leaves at another commit than the superproject records
        // (`--remote-submodules`) is modified in both: the files' stat data is checked alone.
        let moved = !git_str(&git_dest, ["diff-files", "--name-only"]).is_empty();
        if moved {
            assert_eq!(
                git_str(&par_dest, ["diff-files", "--name-only"]),
                git_str(&git_dest, ["diff-files", "--name-only"])
            );
            assert_real_stat_except(&par_dest, &[], &[]);
        } else if !sparse {
            assert_real_stat(&par_dest, &[]);
        }
    }
    sides
}

fn source(name: &str) -> OsString {
    sources().join(name).into_os_string()
}

fn file_url(name: &str) -> OsString {
    format!("file://{}", sources().join(name).display()).into()
}

#[test]
fn clone_of_a_local_path_matches_git() {
    clone_like_git(&[], &[source("plain"), "dest".into()], "dest", &[]);
}

#[test]
fn clone_guesses_the_directory_name_as_git_does() {
    clone_like_git(&[], &[source("plain")], "plain", &[]);
    clone_like_git(&[], &[file_url("plain/.git")], "plain", &[]);
    clone_like_git(&[], &[source("bare.git")], "bare", &[]);
    clone_like_git(&[], &[source("plain/"), "dest///".into()], "dest", &[]);
}

/// A template directory whose `post-checkout` hook records its arguments, where it runs and
/// its `GIT_DIR`: the hook comes from the template (git's business), runs after git-par's
/// checkout as git runs it.
fn template_with_hook(dir: &Path) -> PathBuf {
    let template = dir.join("template");
    fs::create_dir_all(template.join("hooks")).unwrap();
    let hook = template.join("hooks/post-checkout");
    fs::write(
        &hook,
        "#!/bin/sh\nprintf '%s\\n' \"$*\" \"$(pwd)\" \"$GIT_DIR\" >\"$GIT_DIR/hook-record\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    template
}

#[test]
fn clone_with_a_template_holding_an_executable_post_checkout_hook_matches_git() {
    let s = scratch();
    let template = template_with_hook(s.path());
    let mut arg = OsString::from("--template=");
    arg.push(&template);
    for src in [source("plain"), file_url("plain")] {
        let sides = clone_like_git(&[], &[arg.clone(), src, "dest".into()], "dest", &[]);
        let record = fs::read_to_string(sides.par().join("dest/.git/hook-record")).unwrap();
        assert!(
            record.starts_with("0000000000000000000000000000000000000000 "),
            "the hook did not run as post-checkout of a clone: {record}"
        );
    }
}

#[test]
fn clone_bare_and_mirror_match_git() {
    clone_like_git(
        &[],
        &os(&["--bare"])
            .into_iter()
            .chain([source("plain"), "dest.git".into()])
            .collect::<Vec<_>>(),
        "dest.git",
        &[],
    );
    clone_like_git(
        &[],
        &[OsString::from("--mirror"), source("plain")],
        "plain.git",
        &[],
    );
}

#[test]
fn clone_depth_1_through_a_file_url_matches_git() {
    clone_like_git(
        &[],
        &[
            OsString::from("--depth"),
            "1".into(),
            file_url("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
}

#[test]
fn clone_single_branch_of_another_branch_matches_git() {
    clone_like_git(
        &[],
        &[
            OsString::from("--single-branch"),
            "-b".into(),
            "topic".into(),
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
}

#[test]
fn clone_of_a_tag_detaches_like_git() {
    clone_like_git(
        &[],
        &[OsString::from("-bv1"), source("plain"), "dest".into()],
        "dest",
        &[],
    );
}

#[test]
fn clone_no_tags_and_origin_name_match_git() {
    clone_like_git(
        &[],
        &[
            OsString::from("--no-tags"),
            "-o".into(),
            "upstream".into(),
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    clone_like_git(
        &["clone.defaultRemoteName=theirs"],
        &[source("plain"), "dest".into()],
        "dest",
        &[],
    );
}

#[test]
fn clone_with_a_separate_git_dir_matches_git() {
    clone_like_git(
        &[],
        &[
            OsString::from("--separate-git-dir=sep-gitdir"),
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
}

#[test]
fn clone_config_options_are_written_and_honoured_like_git() {
    // `-c` of clone goes into the new repository and applies to its checkout.
    clone_like_git(
        &[],
        &[
            OsString::from("-c"),
            "core.autocrlf=true".into(),
            "--config=my.key=value".into(),
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
}

#[test]
fn clone_of_an_empty_repository_warns_like_git() {
    let sides = clone_like_git(&[], &[source("empty.git"), "dest".into()], "dest", &[]);
    assert!(!sides.par().join("dest/.git/index").exists());
}

#[test]
fn clone_of_a_shallow_source_matches_git() {
    clone_like_git(&[], &[source("shallow"), "dest".into()], "dest", &[]);
    clone_like_git(&[], &[file_url("shallow"), "dest".into()], "dest", &[]);
}

#[test]
fn clone_of_a_source_with_symbolic_refs_matches_git() {
    // plain has refs/heads/alias -> refs/heads/main; a mirror keeps it symbolic.
    clone_like_git(&[], &[source("plain"), "dest".into()], "dest", &[]);
    clone_like_git(
        &[],
        &[OsString::from("--mirror"), source("plain"), "dest".into()],
        "dest",
        &[],
    );
}

#[test]
fn clone_of_a_percent_encoded_file_url_matches_git() {
    let url: OsString = format!("file://{}", sources().join("my%20src").display()).into();
    clone_like_git(&[], &[url.clone(), "dest".into()], "dest", &[]);
    // The guessed name is not decoded, by git or git-par.
    clone_like_git(&[], &[url], "my%20src", &[]);
}

#[test]
fn clone_option_errors_are_gits() {
    clone_like_git(
        &[],
        &[
            OsString::from("--no-such-option"),
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    clone_like_git(
        &[],
        &[
            OsString::from("--bare"),
            "--separate-git-dir=x".into(),
            source("plain"),
        ],
        "plain.git",
        &[],
    );
    clone_like_git(&[], &[source("no-such-source"), "dest".into()], "dest", &[]);
    clone_like_git(&[], &[], "dest", &[]);
}

#[test]
fn clone_recurse_submodules_runs_gits_submodule_update_like_git() {
    let sides = clone_like_git(
        &[],
        &[
            OsString::from("--recurse-submodules"),
            "-q".into(),
            source("super"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    for m in ["mods/one", "mods/two"] {
        let d = sides.par().join("dest").join(m);
        assert_eq!(
            clone_state(&sides, &sides.git().join("dest").join(m)),
            clone_state(&sides, &d),
            "submodule {m} differs"
        );
        compare_worktrees(&sides.git().join("dest").join(m), &d);
    }
}

/// git's clone runs `git submodule update` for `--recurse-submodules` whether or not there are
/// submodules, with the clone's `--jobs` (t7406 "git clone passes the parallel jobs config on to
/// submodules" greps git's trace for it).
#[test]
fn clone_recurse_submodules_without_submodules_still_runs_the_update_like_git() {
    let sides = Sides::new();
    let args = [
        OsString::from("--recurse-submodules"),
        "--jobs".into(),
        "3".into(),
        "-q".into(),
        source("plain"),
        "dest".into(),
    ];
    let (by_git, by_par) = clone_both(&sides, &[], &args, &[("GIT_TRACE", "2".into())]);
    for run in [by_git, by_par] {
        let run = run.assert_success();
        assert!(
            run.stderr_str()
                .contains("run_processes_parallel: preparing to run up to 3 tasks"),
            "{}",
            run.describe()
        );
    }
}

/// `--recurse-submodules` on a superproject with several submodules, nested ones included (with
/// relative URLs): git clones each, the engine checks them all out, a level at a time; the
/// messages on both streams, the files and every submodule's HEAD and status are git's.
#[test]
fn clone_recurse_nested_submodules_checked_out_by_the_engine_like_git() {
    let s = scratch();
    let env = file_protocol_allowed();
    let git_env = |dir: &Path, args: &[&str]| {
        run_with("git", dir, &os(args), &env).assert_success();
    };
    for (name, file) in [("sub2", "f2"), ("sub1", "f1"), ("super", "top")] {
        let dir = s.join(name);
        fs::create_dir(&dir).unwrap();
        git_env(&dir, &["init", "-q", "-b", "main"]);
        fs::write(dir.join(file), format!("{name}\n")).unwrap();
        git_env(&dir, &["add", file]);
        match name {
            "sub1" => git_env(&dir, &["submodule", "add", "-q", "../sub2", "nested"]),
            "super" => {
                git_env(&dir, &["submodule", "add", "-q", "../sub1", "a"]);
                git_env(&dir, &["submodule", "add", "-q", "../sub1", "b/c"]);
            }
            _ => {}
        }
        git_env(&dir, &["commit", "-q", "-m", name]);
    }
    // From a local path, and over git:// (the relative submodule URLs then resolve to the same
    // daemon: git's transport clones every level).
    let daemon = Daemon::start(s.path());
    let sources = [
        s.join("super").into_os_string(),
        OsString::from(format!("git://127.0.0.1:{}/super", daemon.port)),
    ];
    for src in sources {
        let sides = clone_like_git(
            &[],
            &[OsString::from("--recurse-submodules"), src, "dest".into()],
            "dest",
            &env,
        );
        for sub in ["a", "b/c", "a/nested", "b/c/nested"] {
            let (g, p) = (
                sides.git().join("dest").join(sub),
                sides.par().join("dest").join(sub),
            );
            assert!(
                p.join("f1").exists() || p.join("f2").exists(),
                "{sub} checked out"
            );
            compare_worktrees(&g, &p);
            assert_eq!(clone_state(&sides, &g), clone_state(&sides, &p), "{sub}");
        }
    }
}

/// `--remote-submodules`: each submodule at the tip of its remote-tracking branch, not at the
/// commit the superproject records (t5617), as git's `submodule update --remote` picks it.
#[test]
fn clone_remote_submodules_checks_out_the_remote_branch_like_git() {
    let s = scratch();
    let env = file_protocol_allowed();
    let git_env = |dir: &Path, args: &[&str]| {
        run_with("git", dir, &os(args), &env).assert_success();
    };
    for name in ["sub", "super"] {
        let dir = s.join(name);
        fs::create_dir(&dir).unwrap();
        git_env(&dir, &["init", "-q", "-b", "main"]);
        fs::write(dir.join(name), "one\n").unwrap();
        git_env(&dir, &["add", name]);
        if name == "super" {
            git_env(&dir, &["submodule", "add", "-q", "../sub", "sub"]);
        }
        git_env(&dir, &["commit", "-q", "-m", name]);
    }
    // The submodule moves on after the superproject recorded it.
    fs::write(s.join("sub/sub"), "two\n").unwrap();
    git_env(&s.join("sub"), &["commit", "-q", "-am", "two"]);
    let tip = git_str(&s.join("sub"), ["rev-parse", "HEAD"]);
    for flag in ["--remote-submodules", "--no-remote-submodules"] {
        let sides = clone_like_git(
            &[],
            &[
                OsString::from("--recurse-submodules"),
                flag.into(),
                s.join("super").into_os_string(),
                "dest".into(),
            ],
            "dest",
            &env,
        );
        let (g, p) = (sides.git().join("dest/sub"), sides.par().join("dest/sub"));
        compare_worktrees(&g, &p);
        assert_eq!(clone_state(&sides, &g), clone_state(&sides, &p), "{flag}");
        assert_eq!(
            git_str(&p, ["rev-parse", "HEAD"]) == tip,
            flag == "--remote-submodules",
            "{flag}"
        );
    }
}

/// The environment that lets git clone submodules from local paths (`protocol.file.allow`,
/// which git 2.38.1 and later deny to submodules by default), for git and git-par alike.
fn file_protocol_allowed() -> [(&'static str, OsString); 3] {
    [
        ("GIT_CONFIG_COUNT", OsString::from("1")),
        ("GIT_CONFIG_KEY_0", OsString::from("protocol.file.allow")),
        ("GIT_CONFIG_VALUE_0", OsString::from("always")),
    ]
}

/// A `git daemon` on a free loopback port, serving `base`; killed on drop.
struct Daemon {
    child: std::process::Child,
    port: u16,
}

/// A free loopback port that no other server of this test binary was given. Tests run in
/// parallel threads, and the kernel may hand the port one test's probe just freed to another
/// test's probe: two servers then try the same port, one fails to listen, and its test talks to
/// the other test's server, until that test ends and kills it ("Failed to connect").
fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if given.insert(port) {
            return port;
        }
    }
}

impl Daemon {
    fn start(base: &Path) -> Daemon {
        let port = free_port();
        let mut cmd = std::process::Command::new("git");
        clean_env(&mut cmd).args([
            "daemon".into(),
            "--listen=127.0.0.1".into(),
            format!("--port={port}").into(),
            "--export-all".into(),
            "--reuseaddr".into(),
            OsString::from(format!("--base-path={}", base.display())),
            base.as_os_str().to_owned(),
        ]);
        // Blobless clones need the server to allow filters (its upload-pack inherits this).
        cmd.env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "uploadpack.allowFilter")
            .env("GIT_CONFIG_VALUE_0", "true");
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("git daemon starts");
        // Ready when it accepts a connection (polled, with a deadline).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("git daemon exited: {status}");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "git daemon never listened"
            );
            std::thread::yield_now();
        }
        Daemon { child, port }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn clone_over_git_protocol_from_a_loopback_daemon_matches_git() {
    let daemon = Daemon::start(sources());
    let url = format!("git://127.0.0.1:{}/bare.git", daemon.port);
    clone_like_git(&[], &[OsString::from(&url), "dest".into()], "dest", &[]);
    clone_like_git(
        &[],
        &[
            OsString::from("--depth=1"),
            OsString::from(&url),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    clone_like_git(
        &[],
        &[
            OsString::from("--single-branch"),
            "--branch=topic".into(),
            OsString::from(&url),
        ],
        "bare",
        &[],
    );
}

/// Smart HTTP without a new service: Python's standard `http.server --cgi` (Python 3.11 on these
/// machines) on a free loopback port runs `git http-backend` as a CGI script
/// (`/cgi-bin/git/<repo>`), serving `base`; killed on drop.
struct HttpBackend {
    child: std::process::Child,
    port: u16,
    _dir: Scratch,
}

impl HttpBackend {
    /// `allow_any`: `uploadpack.allowAnySHA1InWant`, which a v0 server needs for the lazy fetch
    /// of a blobless clone (Python's CGI passes no `Git-Protocol` header, so this is v0).
    fn start(base: &Path, allow_any: bool) -> HttpBackend {
        let dir = scratch();
        let cgi = dir.join("cgi-bin");
        fs::create_dir(&cgi).unwrap();
        fs::write(
            cgi.join("git"),
            format!(
                // Run as root, http.server drops the CGI to `nobody`, for whom the sources
                // are someone else's: command-line safe.directory, no HOME to read.
                "#!/bin/sh\nexport HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_COUNT=3 \
                 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
                 GIT_CONFIG_KEY_1=uploadpack.allowFilter GIT_CONFIG_VALUE_1=true \
                 GIT_CONFIG_KEY_2=uploadpack.allowAnySHA1InWant GIT_CONFIG_VALUE_2={allow_any}\n\
                 GIT_PROJECT_ROOT='{}' GIT_HTTP_EXPORT_ALL=1 exec git http-backend\n",
                base.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(cgi.join("git"), fs::Permissions::from_mode(0o755)).unwrap();
        let port = free_port();
        let mut cmd = std::process::Command::new("python3");
        clean_env(&mut cmd)
            .current_dir(dir.path())
            .args(["-m", "http.server", "--cgi", "--bind", "127.0.0.1"])
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("python3 http.server starts");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("http.server exited: {status}");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "http.server never listened"
            );
            std::thread::yield_now();
        }
        HttpBackend {
            child,
            port,
            _dir: dir,
        }
    }
}

impl Drop for HttpBackend {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn clone_over_smart_http_through_git_http_backend_matches_git() {
    let server = HttpBackend::start(sources(), true);
    let url = format!("http://127.0.0.1:{}/cgi-bin/git/bare.git", server.port);
    for extra in [&[][..], &["--filter=blob:none"][..]] {
        let mut args: Vec<OsString> = extra.iter().map(OsString::from).collect();
        args.extend([OsString::from(&url), "dest".into()]);
        let sides = clone_like_git(&[], &args, "dest", &[]);
        // Over HTTP for real: the clone has the source's history and files (a blobless one
        // fetched its blobs lazily, over HTTP too).
        let dest = sides.par().join("dest");
        assert_eq!(
            git_str(&dest, ["rev-parse", "HEAD"]),
            git_str(&sources().join("bare.git"), ["rev-parse", "HEAD"])
        );
        assert!(!git_str(&dest, ["ls-files"]).is_empty());
    }
    clone_like_git(
        &[],
        &[
            OsString::from("--depth=1"),
            "--single-branch".into(),
            "--branch=topic".into(),
            OsString::from(&url),
            "dest".into(),
        ],
        "dest",
        &[],
    );
}

/// A blobless clone whose server refuses the lazy fetch (a v0 server without
/// `uploadpack.allowAnySHA1InWant`): git's `could not fetch <id> from promisor remote`, the clone
/// kept, its checkout failed — and nothing written, where git has written nothing either.
#[test]
fn blobless_clone_whose_blobs_cannot_be_fetched_fails_like_git() {
    let server = HttpBackend::start(sources(), false);
    let url = format!("http://127.0.0.1:{}/cgi-bin/git/bare.git", server.port);
    let sides = clone_like_git(
        &[],
        &[
            OsString::from("--filter=blob:none"),
            OsString::from(&url),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    assert!(git_str(&sides.par().join("dest"), ["ls-files"]).is_empty());
}

/// How many `git fetch --stdin` processes (the lazy fetch of missing blobs) a run started, from
/// git's trace2 event stream.
fn lazy_fetches(trace: &Path) -> usize {
    fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            l.contains(r#""event":"start""#)
                && l.contains(r#""fetch""#)
                && l.contains(r#""--stdin""#)
        })
        .count()
}

/// A blobless clone over each network transport: git sets it up, the engine's checkout fetches
/// every blob it writes in one batch (one `git fetch --stdin`, as git's own checkout), and the
/// result is git's.
#[test]
fn blobless_clones_fetch_their_blobs_in_one_batch_over_every_transport() {
    let daemon = Daemon::start(sources());
    let http = HttpBackend::start(sources(), true);
    let s = scratch();
    // git clears GIT_CONFIG_* for the ssh command: the "remote" side sets its own (a "simple"
    // ssh speaks protocol v0, whose lazy fetch needs allowAnySHA1InWant).
    let ssh = s.join("fake-ssh");
    fs::write(
        &ssh,
        "#!/bin/sh\nfor last; do :; done\nexport GIT_CONFIG_COUNT=2 \
         GIT_CONFIG_KEY_0=uploadpack.allowFilter GIT_CONFIG_VALUE_0=true \
         GIT_CONFIG_KEY_1=uploadpack.allowAnySHA1InWant GIT_CONFIG_VALUE_1=true\n\
         exec sh -c \"$last\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).unwrap();
    let ssh_env = vec![
        ("GIT_SSH_COMMAND", ssh.clone().into_os_string()),
        ("GIT_SSH_VARIANT", OsString::from("simple")),
    ];
    let cases: Vec<(String, Vec<(&str, OsString)>)> = vec![
        (format!("git://127.0.0.1:{}/bare.git", daemon.port), vec![]),
        (
            format!("ssh://localhost{}", sources().join("bare.git").display()),
            ssh_env,
        ),
        (
            format!("http://127.0.0.1:{}/cgi-bin/git/bare.git", http.port),
            vec![],
        ),
    ];
    for (url, env) in cases {
        let sides = Sides::new();
        let mut counts = Vec::new();
        for (program, cwd, name) in [
            ("git", sides.git(), "git.trace"),
            (GIT_PAR, sides.par(), "par.trace"),
        ] {
            let trace = s.join(name);
            let _ = fs::remove_file(&trace);
            let mut env = env.clone();
            env.push(("GIT_TRACE2_EVENT", trace.clone().into_os_string()));
            let args = os(&["clone", "-q", "--filter=blob:none", &url, "dest"]);
            run_with(program, &cwd, &args, &env).assert_success();
            counts.push(lazy_fetches(&trace));
        }
        assert_eq!(counts, [1, 1], "{url}: lazy fetches by git and by git-par");
        compare_worktrees(&sides.git().join("dest"), &sides.par().join("dest"));
        assert_eq!(
            clone_state(&sides, &sides.git().join("dest")),
            clone_state(&sides, &sides.par().join("dest")),
            "{url}"
        );
    }
}

#[test]
fn clone_over_ssh_through_git_ssh_command_matches_git() {
    let s = scratch();
    // A stand-in for ssh: the last argument is the command to run on the "remote" side.
    let ssh = s.join("fake-ssh");
    fs::write(
        &ssh,
        "#!/bin/sh\nfor last; do :; done\nexec sh -c \"$last\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).unwrap();
    let env = [
        ("GIT_SSH_COMMAND", ssh.clone().into_os_string()),
        ("GIT_SSH_VARIANT", OsString::from("simple")),
    ];
    let url = format!("ssh://localhost{}", sources().join("bare.git").display());
    clone_like_git(&[], &[OsString::from(&url), "dest".into()], "dest", &env);
    let scp_like = format!("localhost:{}", sources().join("bare.git").display());
    clone_like_git(
        &[],
        &[OsString::from("--depth=1"), OsString::from(&scp_like)],
        "bare",
        &env,
    );
}

#[test]
fn clone_of_a_sha256_repository_matches_git() {
    let s = scratch();
    let src = s.join("sha256");
    fs::create_dir(&src).unwrap();
    git_ok(&src, ["init", "-q", "--object-format=sha256"]);
    fs::create_dir(src.join("d")).unwrap();
    fs::write(src.join("d/f.txt"), "sha-256\n").unwrap();
    fs::write(src.join("top"), "top\n").unwrap();
    git_ok(&src, ["add", "-A"]);
    git_ok(&src, ["commit", "-q", "-m", "sha-256 commit"]);
    let sides = clone_like_git(&[], &[src.into_os_string(), "dest".into()], "dest", &[]);
    assert_eq!(
        git_str(
            &sides.par().join("dest"),
            ["rev-parse", "--show-object-format"]
        ),
        "sha256"
    );
}

#[test]
fn partial_clone_matches_git() {
    let s = scratch();
    let template = template_with_hook(s.path());
    let mut t = OsString::from("--template=");
    t.push(&template);
    // A server that allows filters (upload-pack does not see the client's `-c`).
    let server = s.join("server");
    copy_repo(&sources().join("plain"), &server);
    git_ok(&server, ["config", "uploadpack.allowFilter", "true"]);
    git_ok(&server, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = OsString::from(format!("file://{}", server.display()));
    for filter in ["--filter=blob:none", "--filter=blob:limit=0"] {
        let sides = clone_like_git(
            &[],
            &[
                OsString::from(filter),
                t.clone(),
                url.clone(),
                "dest".into(),
            ],
            "dest",
            &[],
        );
        let missing = git_str(
            &sides.par().join("dest"),
            ["rev-list", "--objects", "--missing=print", "--all"],
        );
        assert!(
            missing.lines().any(|l| l.starts_with('?')),
            "not a partial clone: nothing is missing"
        );
    }
}

#[test]
fn clone_sparse_matches_git() {
    let s = scratch();
    let template = template_with_hook(s.path());
    let mut t = OsString::from("--template=");
    t.push(&template);
    let sides = clone_like_git(
        &[],
        &[
            OsString::from("--sparse"),
            t,
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    // Only the files at the top are there, the others are skip-worktree, as git leaves them.
    assert!(!sides.par().join("dest/dir").exists());
    assert!(sides.par().join("dest/top.txt").exists());
}

/// A repository whose references are in a reftable (`--ref-format=reftable`), which gix cannot
/// read: the clone is checked out by git (as a SHA-256 one), and git-par's commands in it are
/// git's (t7424).
#[test]
fn reftable_repositories_are_gits() {
    let sides = clone_like_git(
        &[],
        &[
            OsString::from("--ref-format=reftable"),
            "-q".into(),
            source("plain"),
            "dest".into(),
        ],
        "dest",
        &[],
    );
    let (g, p) = (sides.git().join("dest"), sides.par().join("dest"));
    git_ok(&g, ["checkout", "-q", "-b", "topic"]);
    git_par(&p, ["checkout", "-q", "-b", "topic"]).assert_success();
    assert_eq!(
        git_str(&p, ["symbolic-ref", "HEAD"]),
        git_str(&g, ["symbolic-ref", "HEAD"])
    );
    assert_eq!(git_str(&p, ["status", "--porcelain"]), "");
}
