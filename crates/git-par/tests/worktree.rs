//! `git par worktree add` against `git worktree add`, each run in its own copy of the same repository,
//! compared file by file, entry by entry, and by what the repository records about the new worktree.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use support::*;

/// Two identical copies of a fixture repository's `.git` (the main work trees are left empty):
/// `<scratch>/git/repo` for git, `<scratch>/par/repo` for git-par. Their worktrees go to `<side>/wt`
/// (or wherever a test says).
struct Pair {
    s: Scratch,
}

impl Pair {
    fn new(fixture: Fixture) -> Pair {
        let s = scratch();
        let src = support::fixture(fixture);
        copy_git_dir(src, &s.join("git/repo"));
        copy_git_dir(src, &s.join("par/repo"));
        Pair { s }
    }
    fn git_side(&self) -> PathBuf {
        self.s.join("git")
    }
    fn par_side(&self) -> PathBuf {
        self.s.join("par")
    }
    /// `text` with each side's directory replaced by `<side>`, so both sides can be compared.
    fn normalize(&self, text: &str) -> String {
        text.replace(&self.git_side().display().to_string(), "<side>")
            .replace(&self.par_side().display().to_string(), "<side>")
    }
}

fn read_normalized(pair: &Pair, path: &Path) -> String {
    match fs::read(path) {
        Ok(bytes) => pair.normalize(&String::from_utf8_lossy(&bytes)),
        Err(e) => format!("<{}>", e.kind()),
    }
}

/// What the repository and the worktree say about the worktree at `wt` of `repo`, with the side's
/// directory replaced by `<side>`.
fn worktree_metadata(pair: &Pair, repo: &Path, wt: &Path, name: &str) -> Vec<(String, String)> {
    let opt = |dir: &Path, args: &[&str]| {
        if !dir.exists() {
            return "<no such directory>".to_owned();
        }
        let run = git(dir, args);
        if run.success() {
            pair.normalize(run.stdout_str().trim_end_matches('\n'))
        } else {
            format!("<exit {:?}>", run.status.code())
        }
    };
    let admin = repo.join(".git/worktrees").join(name);
    let mut out = vec![
        (
            "wt: .git file".to_owned(),
            read_normalized(pair, &wt.join(".git")),
        ),
        (
            "wt: rev-parse HEAD".to_owned(),
            opt(wt, &["rev-parse", "HEAD"]),
        ),
        (
            "wt: symbolic-ref HEAD".to_owned(),
            opt(wt, &["symbolic-ref", "-q", "HEAD"]),
        ),
        (
            "wt: rev-parse --git-dir --git-common-dir --show-toplevel".to_owned(),
            opt(
                wt,
                &[
                    "rev-parse",
                    "--git-dir",
                    "--git-common-dir",
                    "--show-toplevel",
                ],
            ),
        ),
        (
            "repo: for-each-ref".to_owned(),
            opt(
                repo,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname) %(symref)",
                ],
            ),
        ),
        (
            "repo: worktree list --porcelain".to_owned(),
            opt(repo, &["worktree", "list", "--porcelain"]),
        ),
        (
            "repo: HEAD of the main worktree".to_owned(),
            opt(repo, &["rev-parse", "HEAD"]),
        ),
    ];
    out.push((
        "wt: HEAD reflog".to_owned(),
        opt(wt, &["log", "-g", "--format=%H %gs", "HEAD", "--"]),
    ));
    out.push((
        "repo: config --local".to_owned(),
        opt(repo, &["config", "--list", "--local"]),
    ));
    for file in ["HEAD", "commondir", "gitdir", "ORIG_HEAD", "locked"] {
        out.push((
            format!("admin dir: {file}"),
            read_normalized(pair, &admin.join(file)),
        ));
    }
    out.push((
        "admin dir: index exists".to_owned(),
        admin.join("index").exists().to_string(),
    ));
    out
}

/// Runs `worktree add ARGS` (ARGS name `../wt` or another path) with git in one copy and with
/// git-par under `settings` in the other, from `subdir` of the repository, and asserts they match;
/// then that the new worktree is clean, listed, usable and removable.
fn worktree_add_matches_git(
    fixture: Fixture,
    settings: Settings,
    config: &[&str],
    subdir: &str,
    args: &[&str],
    wt_rel: &str,
) {
    let pair = Pair::new(fixture);
    let config: Vec<String> = config.iter().map(|c| (*c).to_owned()).collect();
    let mut oracle_config = config.clone();
    oracle_config.extend(settings.config());
    let git_repo = pair.git_side().join("repo");
    let par_repo = pair.par_side().join("repo");
    // The copies have no main work tree: make the subdirectory to run from.
    fs::create_dir_all(git_repo.join(subdir)).unwrap();
    fs::create_dir_all(par_repo.join(subdir)).unwrap();
    git_worktree_add(&git_repo.join(subdir), &oracle_config, args).assert_success();
    git_par_worktree_add(&par_repo.join(subdir), &config, settings, args).assert_success();

    let git_wt = pair.git_side().join(wt_rel);
    let par_wt = pair.par_side().join(wt_rel);
    let name = Path::new(wt_rel).file_name().unwrap().to_str().unwrap();

    // Read-only comparisons first, then stat data: anything after it may refresh the index.
    compare_worktrees(&git_wt, &par_wt);
    compare_indexes(&git_wt, &par_wt, &config);
    assert_real_stat(&git_wt, &config);
    assert_real_stat(&par_wt, &config);
    assert_eq!(
        worktree_metadata(&pair, &git_repo, &git_wt, name),
        worktree_metadata(&pair, &par_repo, &par_wt, name),
        "what git records about the worktree differs (left: git, right: git-par)"
    );
    assert_status_like_git(&git_wt, &par_wt, &config);

    // The main worktree is untouched and the new one can be removed like any other.
    assert_eq!(
        index_listing(&git_repo, &config),
        index_listing(&par_repo, &config)
    );
    let mut remove: Vec<OsString> = config_args(&config);
    remove.extend([
        "worktree".into(),
        "remove".into(),
        par_wt.clone().into_os_string(),
    ]);
    git(&par_repo, remove).assert_success();
    assert!(
        !par_wt.exists(),
        "git worktree remove left {}",
        par_wt.display()
    );
    let list = git_str(&par_repo, ["worktree", "list", "--porcelain"]);
    assert!(
        !list.contains(&par_wt.display().to_string()),
        "removed worktree still listed:\n{list}"
    );
}

macro_rules! worktree_matrix {
    ($($name:ident: $fixture:expr, $settings:expr;)*) => {
        $(
            #[test]
            fn $name() {
                worktree_add_matches_git($fixture, $settings, &[], "", &["../wt"], "wt");
            }
        )*
    };
}

worktree_matrix! {
    worktree_add_path_alone_kitchen_sink_with_1_worker_matches_git: Fixture::KitchenSink, Settings::Jobs(1);
    worktree_add_path_alone_kitchen_sink_with_2_workers_matches_git: Fixture::KitchenSink, Settings::Jobs(2);
    worktree_add_path_alone_kitchen_sink_with_8_workers_matches_git: Fixture::KitchenSink, Settings::Jobs(8);
    worktree_add_path_alone_kitchen_sink_with_default_settings_matches_git: Fixture::KitchenSink, Settings::Default;
    worktree_add_path_alone_many_files_with_1_worker_matches_git: Fixture::ManyFiles, Settings::Jobs(1);
    worktree_add_path_alone_many_files_with_2_workers_matches_git: Fixture::ManyFiles, Settings::Jobs(2);
    worktree_add_path_alone_many_files_with_8_workers_matches_git: Fixture::ManyFiles, Settings::Jobs(8);
    worktree_add_path_alone_many_files_with_default_settings_matches_git: Fixture::ManyFiles, Settings::Default;
    worktree_add_path_alone_big_file_with_1_worker_matches_git: Fixture::BigFile, Settings::Jobs(1);
    worktree_add_path_alone_big_file_with_8_workers_matches_git: Fixture::BigFile, Settings::Jobs(8);
}

#[test]
fn worktree_add_new_branch_at_commit_matches_git() {
    worktree_add_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(8),
        &[],
        "",
        &["-b", "topic", "../wt", "other"],
        "wt",
    );
}

#[test]
fn worktree_add_detached_at_branch_matches_git() {
    worktree_add_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(8),
        &[],
        "",
        &["--detach", "../wt", "other"],
        "wt",
    );
}

#[test]
fn worktree_add_detached_at_annotated_tag_matches_git() {
    worktree_add_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(2),
        &[],
        "",
        &["--detach", "../wt", "v1"],
        "wt",
    );
}

#[test]
fn worktree_add_from_a_subdirectory_resolves_path_like_git() {
    worktree_add_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(2),
        &[],
        "dir/sub",
        &["../../../wt"],
        "wt",
    );
}

#[test]
fn worktree_add_nested_path_creates_leading_directories_like_git() {
    worktree_add_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(2),
        &[],
        "",
        &["-b", "nested", "../trees/deeper/wt-nested", "other"],
        "trees/deeper/wt-nested",
    );
}

#[test]
fn worktree_add_with_core_symlinks_false_writes_symlinks_as_plain_files_like_git() {
    worktree_add_matches_git(
        Fixture::KitchenSink,
        Settings::Jobs(8),
        &["core.symlinks=false"],
        "",
        &["../wt"],
        "wt",
    );
}

#[test]
fn worktree_add_with_working_tree_encoding_reencodes_like_git() {
    worktree_add_matches_git(
        Fixture::Encoding,
        Settings::Jobs(2),
        &[],
        "",
        &["../wt"],
        "wt",
    );
}

#[test]
fn worktree_add_quiet_prints_nothing_like_git() {
    let pair = Pair::new(Fixture::KitchenSink);
    let by_git =
        git_worktree_add(&pair.git_side().join("repo"), &[], &["-q", "../wt"]).assert_success();
    let by_par = git_par_worktree_add(
        &pair.par_side().join("repo"),
        &[],
        Settings::Jobs(2),
        &["-q", "../wt"],
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

/// Runs the same `worktree add ARGS` with git and git-par; both must fail, and leave the repository's
/// refs, worktree list and the directories `watch` (relative to the side) as git leaves them.
fn worktree_add_refused_like_git(prepare: impl Fn(&Path), args: &[&str], watch: &[&str]) {
    let pair = Pair::new(Fixture::KitchenSink);
    prepare(&pair.git_side());
    prepare(&pair.par_side());
    let git_repo = pair.git_side().join("repo");
    let par_repo = pair.par_side().join("repo");
    git_worktree_add(&git_repo, &[], args).assert_failure();
    let run = git_par_worktree_add(&par_repo, &[], Settings::Jobs(2), args).assert_failure();
    assert!(
        !run.stderr.is_empty(),
        "no error message: {}",
        run.describe()
    );
    let state = |side: &Path, repo: &Path| {
        let mut v = vec![
            pair.normalize(&git_str(
                repo,
                ["for-each-ref", "--format=%(refname) %(objectname)"],
            )),
            pair.normalize(&git_str(repo, ["worktree", "list", "--porcelain"])),
            format!("{:?}", dir_names(&repo.join(".git/worktrees"))),
        ];
        for w in watch {
            v.push(format!("{w}: {:?}", dir_names(&side.join(w))));
        }
        v
    };
    assert_eq!(
        state(&pair.git_side(), &git_repo),
        state(&pair.par_side(), &par_repo),
        "state after the refused worktree add differs (left: git, right: git-par)"
    );
}

#[test]
fn worktree_add_with_existing_branch_name_is_refused_like_git() {
    worktree_add_refused_like_git(|_| {}, &["-b", "other", "../wt", "main"], &["wt"]);
}

#[test]
fn worktree_add_of_a_branch_checked_out_elsewhere_is_refused_like_git() {
    worktree_add_refused_like_git(|_| {}, &["../wt", "main"], &["wt"]);
}

#[test]
fn worktree_add_into_a_non_empty_directory_is_refused_like_git() {
    worktree_add_refused_like_git(
        |side| {
            fs::create_dir_all(side.join("wt")).unwrap();
            fs::write(side.join("wt/mine"), b"mine\n").unwrap();
        },
        &["--detach", "../wt", "other"],
        &["wt"],
    );
}

#[test]
fn worktree_add_of_an_unknown_commit_is_refused_like_git() {
    worktree_add_refused_like_git(|_| {}, &["--detach", "../wt", "no-such-ref"], &["wt"]);
}

/// A configured smudge filter runs in the new work tree as git runs it (the filter tests are in
/// `filters.rs`).
#[test]
fn worktree_add_runs_a_configured_smudge_filter() {
    let s = scratch();
    let repo = s.join("repo");
    copy_repo(fixture(Fixture::Filter), &repo);
    let config = vec!["filter.fake.smudge=tr a-z A-Z".to_owned()];
    git_par_worktree_add(
        &repo,
        &config,
        Settings::Jobs(2),
        &["--detach", "../wt", "main"],
    )
    .assert_success();
    for path in ["payload.lfs", "dir/second.lfs"] {
        let raw = git_ok(&repo, ["cat-file", "blob", &format!("HEAD:{path}")]);
        let written = fs::read(s.join("wt").join(path)).unwrap();
        assert_eq!(written, raw.to_ascii_uppercase(), "{path}");
    }
    assert_eq!(fs::read(s.join("wt/a.txt")).unwrap(), b"plain a\n");
}

/// A bare repository's HEAD names a branch, but a bare repository has no work tree, so that branch
/// is not "already used" (git's `is_shared_symref` skips bare work trees; t2400 "add" default
/// branch of a bare repo).
#[test]
fn worktree_add_of_a_bare_repositorys_default_branch_matches_git() {
    let s = scratch();
    let src = support::fixture(Fixture::KitchenSink);
    let mut results = Vec::new();
    for (side, by_par) in [("git", false), ("par", true)] {
        let bare = s.join(side).join("bare.git");
        fs::create_dir_all(s.join(side)).unwrap();
        git(
            &s.join(side),
            [
                OsString::from("clone"),
                "-q".into(),
                "--bare".into(),
                src.into(),
                bare.clone().into(),
            ],
        )
        .assert_success();
        let branch = git_str(&bare, ["symbolic-ref", "--short", "HEAD"]);
        let args = ["worktree", "add", "-q", "../wt", branch.as_str()];
        let run = if by_par {
            git_par(&bare, args)
        } else {
            git(&bare, args)
        };
        results.push((run.success(), s.join(side).join("wt")));
    }
    assert!(results[0].0, "git refused");
    assert!(results[1].0, "git-par refused where git adds the work tree");
    compare_worktrees(&results[0].1, &results[1].1);
    assert_clean(&results[1].1, &[]);
}

// ---------------------------------------------------------------------------------------------------
// git registers the work tree, git-par checks it out: every option of `git worktree add`

/// `worktree add ARGS` with git on one side and git-par (2 writers) on the other, after
/// `prepare` ran on both repositories; asserts the same exit code, messages (sides
/// normalized), work tree, index, and what the repository records. Returns the pair.
fn add_like_git(prepare: impl Fn(&Path), args: &[&str], wt_rel: &str) -> Pair {
    let pair = Pair::new(Fixture::KitchenSink);
    let git_repo = pair.git_side().join("repo");
    let par_repo = pair.par_side().join("repo");
    prepare(&git_repo);
    prepare(&par_repo);
    let config = Settings::Jobs(2).config();
    let by_git = git_worktree_add(&git_repo, &config, args);
    let by_par = git_par_worktree_add(&par_repo, &[], Settings::Jobs(2), args);
    assert_eq!(
        by_git.status.code(),
        by_par.status.code(),
        "exit codes differ\n{}\n{}",
        by_git.describe(),
        by_par.describe()
    );
    assert_eq!(
        pair.normalize(&by_git.stderr_str()),
        pair.normalize(&by_par.stderr_str()),
        "messages differ (left: git, right: git-par)"
    );
    assert_eq!(by_git.stdout_str(), by_par.stdout_str());
    let (git_wt, par_wt) = (pair.git_side().join(wt_rel), pair.par_side().join(wt_rel));
    assert_eq!(git_wt.exists(), par_wt.exists());
    let name = Path::new(wt_rel).file_name().unwrap().to_str().unwrap();
    if git_wt.exists() {
        compare_worktrees(&git_wt, &par_wt);
        compare_indexes(&git_wt, &par_wt, &[]);
        assert_status_like_git(&git_wt, &par_wt, &[]);
    }
    assert_eq!(
        worktree_metadata(&pair, &git_repo, &git_wt, name),
        worktree_metadata(&pair, &par_repo, &par_wt, name),
        "what git records about the worktree differs (left: git, right: git-par)"
    );
    for side in [pair.git_side(), pair.par_side()] {
        assert_eq!(
            read_normalized(&pair, &side.join("hook-record"))
                .replace(&side.display().to_string(), "<side>"),
            read_normalized(&pair, &pair.git_side().join("hook-record")),
        );
    }
    pair
}

/// A remote `origin` whose remote-tracking branch `origin/feature` is at `other`.
fn with_remote(repo: &Path) {
    git_ok(repo, ["config", "remote.origin.url", "../elsewhere"]);
    git_ok(
        repo,
        [
            "config",
            "remote.origin.fetch",
            "+refs/heads/*:refs/remotes/origin/*",
        ],
    );
    git_ok(repo, ["update-ref", "refs/remotes/origin/feature", "other"]);
}

/// An executable `post-checkout` hook recording its arguments, directory and `GIT_DIR` in
/// `<side>/hook-record`.
fn with_hook(repo: &Path) {
    let hook = repo.join(".git/hooks/post-checkout");
    fs::create_dir_all(hook.parent().unwrap()).unwrap();
    let record = repo.parent().unwrap().join("hook-record");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" \"$(pwd)\" \"${{GIT_DIR-unset}}\" >>'{}'\n",
            record.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn worktree_add_b_and_force_b_match_git() {
    add_like_git(|_| {}, &["-b", "topic", "../wt", "other"], "wt");
    add_like_git(|_| {}, &["-B", "other", "../wt", "HEAD~0"], "wt");
    add_like_git(|_| {}, &["-Bfresh", "../wt"], "wt");
}

#[test]
fn worktree_add_detach_matches_git_with_abbreviated_options() {
    add_like_git(|_| {}, &["--det", "../wt", "v1"], "wt");
    add_like_git(|_| {}, &["-qd", "../wt", "other"], "wt");
}

#[test]
fn worktree_add_orphan_matches_git() {
    add_like_git(|_| {}, &["--orphan", "../wt"], "wt");
    add_like_git(|_| {}, &["--orphan", "-b", "fresh", "../wt"], "wt");
    add_like_git(with_hook, &["--orphan", "-q", "../wt"], "wt");
}

#[test]
fn worktree_add_lock_matches_git() {
    add_like_git(|_| {}, &["--lock", "../wt", "other"], "wt");
    add_like_git(|_| {}, &["--lock", "--reason", "on a stick", "../wt"], "wt");
    add_like_git(|_| {}, &["--reason", "no lock", "../wt"], "wt");
}

#[test]
fn worktree_add_track_and_guess_remote_match_git() {
    add_like_git(
        with_remote,
        &["--track", "-b", "feat", "../wt", "origin/feature"],
        "wt",
    );
    add_like_git(
        with_remote,
        &["--no-track", "-b", "feat", "../wt", "origin/feature"],
        "wt",
    );
    add_like_git(with_remote, &["--guess-remote", "../feature"], "feature");
    add_like_git(with_remote, &["../wt", "feature"], "wt");
    add_like_git(with_remote, &["--orphan", "--track", "../wt"], "wt");
}

#[test]
fn worktree_add_no_checkout_matches_git() {
    add_like_git(with_hook, &["--no-checkout", "../wt", "other"], "wt");
    add_like_git(
        with_hook,
        &["--no-checkout", "--checkout", "../wt", "other"],
        "wt",
    );
}

#[test]
fn worktree_add_runs_post_checkout_with_gits_arguments() {
    let pair = add_like_git(with_hook, &["-b", "hooked", "../wt", "other"], "wt");
    let record = read_normalized(&pair, &pair.par_side().join("hook-record"));
    assert!(
        record.starts_with("0000000000000000000000000000000000000000 "),
        "the hook did not run: {record:?}"
    );
    add_like_git(with_hook, &["--detach", "-q", "../wt"], "wt");
}

#[test]
fn worktree_add_force_over_a_registered_but_missing_work_tree_matches_git() {
    let missing = |repo: &Path| {
        git_ok(
            repo,
            ["worktree", "add", "-q", "--detach", "../wt", "other"],
        );
        fs::remove_dir_all(repo.parent().unwrap().join("wt")).unwrap();
    };
    add_like_git(missing, &["--detach", "../wt", "HEAD"], "wt");
    add_like_git(missing, &["-f", "--detach", "../wt", "HEAD"], "wt");
}

#[test]
fn worktree_add_option_errors_are_gits() {
    add_like_git(|_| {}, &["--no-such-option", "../wt"], "wt");
    add_like_git(|_| {}, &["--orphan", "--no-checkout", "../wt"], "wt");
    add_like_git(|_| {}, &["-b"], "wt");
    add_like_git(|_| {}, &[], "wt");
}

/// In a repository without a commit, git infers `--orphan` (and refuses it with
/// `--no-checkout`): git-par leaves such a call to git whole.
#[test]
fn worktree_add_in_a_repository_without_commits_matches_git() {
    let s = scratch();
    let mut states = Vec::new();
    for (side, program) in [("git", "git"), ("par", GIT_PAR)] {
        let repo = s.join(side).join("repo");
        fs::create_dir_all(&repo).unwrap();
        git_ok(&repo, ["init", "-q"]);
        let run = support::run(program, &repo, ["worktree", "add", "../wt"]);
        states.push((
            run.status.code(),
            run.stderr_str()
                .replace(&s.join(side).display().to_string(), "<side>"),
            git_str(&s.join(side).join("wt"), ["symbolic-ref", "HEAD"]),
        ));
    }
    assert_eq!(states[0], states[1]);
}

/// The new work tree of a sparse checkout gets its patterns (git copies them): the files
/// outside them are not written, as git's reset leaves them.
#[test]
fn worktree_add_in_a_sparse_checkout_matches_git() {
    let sparse = |repo: &Path| {
        git_ok(repo, ["checkout", "-q", "-f", "main"]);
        git_ok(repo, ["sparse-checkout", "set", "--cone", "dir"]);
    };
    add_like_git(sparse, &["--detach", "../wt", "other"], "wt");
}

/// In a partial clone, the new work tree's missing blobs are fetched (in one batch, by git).
#[test]
fn worktree_add_in_a_partial_clone_matches_git() {
    let s = scratch();
    let server = s.join("server");
    copy_repo(fixture(Fixture::KitchenSink), &server);
    git_ok(&server, ["config", "uploadpack.allowFilter", "true"]);
    git_ok(&server, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = format!("file://{}", server.display());
    let partial = move |repo: &Path| {
        fs::remove_dir_all(repo).unwrap();
        git_ok(
            repo.parent().unwrap(),
            [
                "clone",
                "-q",
                "--no-checkout",
                "--filter=blob:none",
                &url,
                "repo",
            ],
        );
    };
    add_like_git(partial, &["--detach", "../wt", "origin/other"], "wt");
}
