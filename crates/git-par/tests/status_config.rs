//! `git par status` against `git status` under git's status configuration and the options that
//! go with it: `status.displayCommentPrefix` and `core.commentChar`, `status.showUntrackedFiles`
//! and `-u<mode>` (booleans are `no`/`normal`), `status.relativePaths`, `status.short`,
//! `status.branch` and `status.aheadBehind` (weaker than the options, ignored by the porcelain
//! formats), `--[no-]ahead-behind`, `status.submoduleSummary`, submodule `ignore` settings from
//! `--ignore-submodules`, `diff.ignoreSubmodules`, `.gitmodules` and `.git/config`,
//! `status.showStash`, `status.renames` over `diff.renames`, and the advice on a slow untracked
//! walk. Every case compares stdout and exit code byte for byte, on repositories built by git in
//! the states of git's t7508-status.sh (`tests/fixtures/status_config.sh`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

fn build(dir: &Path, case: &str) -> PathBuf {
    build_case("status_config.sh", dir, case)
}

/// One `status` run: `-c` values, environment, the directory in the work tree, the arguments.
#[derive(Clone, Default)]
struct Call<'a> {
    config: &'a [&'a str],
    env: &'a [(&'a str, &'a str)],
    sub: &'a str,
    args: &'a [&'a str],
}

fn call<'a>(config: &'a [&'a str], args: &'a [&'a str]) -> Call<'a> {
    Call {
        config,
        args,
        ..Call::default()
    }
}

fn status_of(program: &str, dir: &Path, c: &Call<'_>) -> Run {
    let mut cmd = Command::new(program);
    clean_env(&mut cmd).current_dir(dir.join(c.sub));
    for kv in c.config {
        cmd.args(["-c", kv]);
    }
    cmd.arg("status").args(c.args);
    for (k, v) in c.env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run status");
    Run {
        command: format!("{program} {:?} status {:?}", c.config, c.args),
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// Run `git status` and `git par status` as `c` says in two copies of `repo` (neither sees the
/// index the other refreshed); `None` when stdout and exit code are the same (and, when git
/// fails, git-par fails too without printing anything on stdout).
fn compare(scratch: &Scratch, repo: &Path, c: &Call<'_>) -> Option<String> {
    let (g, p) = two_copies(scratch, repo);
    let git_out = status_of("git", &g, c);
    let par_out = status_of(GIT_PAR, &p, c);
    let _ = std::fs::remove_dir_all(&g);
    let _ = std::fs::remove_dir_all(&p);
    let same = git_out.stdout == par_out.stdout && git_out.status.code() == par_out.status.code();
    (!same).then(|| {
        let what = format!(
            "-c {:?} env {:?} in {:?}: status {:?}",
            c.config, c.env, c.sub, c.args
        );
        side_by_side(&what, &git_out, &par_out)
    })
}

fn compare_all(scratch: &Scratch, repo: &Path, calls: &[Call<'_>]) {
    let failures: Vec<String> = calls
        .iter()
        .filter_map(|c| compare(scratch, repo, c))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        calls.len(),
        failures.join("\n")
    );
}

/// A copy of `repo` named `name`, changed by the shell commands `setup`.
fn variant(scratch: &Scratch, repo: &Path, name: &str, setup: &str) -> PathBuf {
    let to = scratch.join(name);
    copy_repo(repo, &to);
    run("bash", &to, ["-c", &format!("set -e; {setup}")]).assert_success();
    to
}

const PREFIX: &str = "status.displayCommentPrefix=true";
const ON: &str = "advice.statusUoption=true";

#[test]
fn comment_prefix_and_comment_char() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let calls = [
        call(&[PREFIX], &[]),
        call(&["status.displayCommentPrefix=false"], &[]),
        call(&[PREFIX, "core.commentChar=;"], &[]),
        call(&[PREFIX, "core.commentChar=;;"], &[]),
        call(&[PREFIX, "core.commentString=//"], &[]),
        call(&[PREFIX, "core.commentChar=auto"], &[]),
        call(&[PREFIX, "advice.statusHints=false"], &[]),
        call(&[PREFIX], &["-uno"]),
        call(&[PREFIX], &["-uall"]),
        call(&[PREFIX], &["--ignored"]),
        call(&[PREFIX], &["-s"]),
        call(&[PREFIX], &["--porcelain=v2", "-b"]),
        call(&[PREFIX, "status.showUntrackedFiles=no"], &["dir1/tracked"]),
        Call {
            config: &[PREFIX],
            sub: "dir1",
            ..Call::default()
        },
    ];
    compare_all(&scratch, &repo, &calls);
    // A clean tree, an unborn branch and a merge with conflicts end differently.
    let clean = variant(&scratch, &repo, "clean", "git add -A && git commit -qm all");
    compare_all(
        &scratch,
        &clean,
        &[call(&[PREFIX], &[]), call(&[PREFIX], &["-uno"])],
    );
    for case in ["unborn", "unmerged", "upstream"] {
        let other = build_case("status_cases.sh", scratch.path(), case);
        compare_all(&scratch, &other, &[call(&[PREFIX], &[])]);
    }
}

#[test]
fn untracked_files_modes_from_options_and_configuration() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let mut calls: Vec<Call<'_>> = Vec::new();
    let values = [
        "no", "false", "0", "off", "normal", "true", "1", "yes", "on", "all", "2",
    ];
    let configs: Vec<String> = values
        .iter()
        .map(|v| format!("status.showUntrackedFiles={v}"))
        .collect();
    let configs: Vec<[&str; 1]> = configs.iter().map(|c| [c.as_str()]).collect();
    for config in &configs {
        calls.push(call(config, &[]));
        calls.push(call(config, &["-s"]));
    }
    let options: &[&[&str]] = &[
        &["-u"],
        &["-uno"],
        &["-unormal"],
        &["-utrue"],
        &["-uyes"],
        &["-u1"],
        &["-ufalse"],
        &["-uall"],
        &["--untracked-files"],
        &["--untracked-files="],
        &["--untracked-files=true"],
        &["--untracked-files=off"],
        &["-s", "-utrue"],
        &["-ubogus"],
    ];
    for args in options {
        calls.push(call(&[], args));
    }
    // The option wins over the configuration.
    calls.push(call(&["status.showUntrackedFiles=no"], &["-unormal"]));
    calls.push(call(&["status.showUntrackedFiles=all"], &["-utrue"]));
    calls.push(call(&["status.showUntrackedFiles=CORRUPT"], &[]));
    calls.push(call(&["status.showUntrackedFiles=CORRUPT"], &["-uno"]));
    compare_all(&scratch, &repo, &calls);
}

#[test]
fn relative_paths_setting() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let mut calls = Vec::new();
    for config in [
        &["status.relativePaths=false"][..],
        &["status.relativePaths=true"][..],
        &[][..],
    ] {
        for args in [
            &[][..],
            &["-s"][..],
            &["--porcelain"][..],
            &["--porcelain=v2"][..],
            &["-s", "."][..],
        ] {
            calls.push(Call {
                config,
                sub: "dir1",
                args,
                ..Call::default()
            });
        }
    }
    compare_all(&scratch, &repo, &calls);
}

#[test]
fn short_branch_and_ahead_behind_settings_are_weaker_than_options_and_porcelain() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let short = ["status.short=true"];
    let long = ["status.short=false"];
    let branch = ["status.branch=true"];
    let no_branch = ["status.branch=false"];
    let quick = ["status.aheadBehind=false"];
    let calls = [
        call(&short, &[]),
        call(&short, &["--no-short"]),
        call(&short, &["--long"]),
        call(&short, &["--porcelain"]),
        call(&short, &["-z"]),
        call(&short, &["--no-short", "-z"]),
        call(&long, &[]),
        call(&long, &["-s"]),
        call(&branch, &["-s"]),
        call(&branch, &["-s", "--no-branch"]),
        call(&branch, &["--porcelain"]),
        call(&branch, &["--porcelain=v2"]),
        call(&branch, &["-s", "-z"]),
        call(&["status.branch=true", "status.short=true"], &[]),
        call(&no_branch, &["-sb"]),
        call(&quick, &[]),
        call(&quick, &["-sb"]),
        call(&quick, &["--porcelain=v2", "-b"]),
        call(&quick, &["--porcelain", "-b"]),
        call(&quick, &["--ahead-behind"]),
        call(&[], &["--no-ahead-behind"]),
        call(&[], &["--no-ahead-behind", "-sb"]),
        call(&[], &["--no-ahead-behind", "--porcelain=v2", "--branch"]),
        call(&[], &["--no-ahead-behind", "--ahead-behind", "-sb"]),
        call(&[], &["--long", "-z"]),
        call(&["status.short=yes-please"], &[]),
    ];
    compare_all(&scratch, &repo, &calls);
    // Up to date with the upstream: "--no-ahead-behind" still says so.
    let even = variant(
        &scratch,
        &repo,
        "even",
        "git update-ref refs/heads/upstream HEAD",
    );
    compare_all(
        &scratch,
        &even,
        &[
            call(&[], &["--no-ahead-behind"]),
            call(&[], &["--no-ahead-behind", "--porcelain=v2", "-b"]),
            call(&[], &["--no-ahead-behind", "-sb"]),
        ],
    );
}

/// The states of t7508's submodule tests: `sm` staged as new (summary `0000000...`), then
/// moved on and staged, moved on again unstaged, with modified or untracked content, under every
/// way of setting what is ignored.
#[test]
fn submodule_summary_and_ignore_settings() {
    let scratch = scratch();
    let new = build(scratch.path(), "sm-new");
    const SUMMARY: &str = "status.submoduleSummary=10";
    compare_all(
        &scratch,
        &new,
        &[
            call(&[], &[]),
            call(&[SUMMARY], &[]),
            call(&[SUMMARY], &["-uall", "-s"]),
            call(&[SUMMARY, PREFIX], &[]),
            call(&["status.submoduleSummary=true"], &[]),
            call(&["status.submoduleSummary=false"], &[]),
        ],
    );
    let changed = build(scratch.path(), "sm-changed");
    let whens = ["none", "untracked", "dirty", "all"];
    let owned =
        |c: &[String], a: &[String]| -> (Vec<String>, Vec<String>) { (c.to_vec(), a.to_vec()) };
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    for (content, setup) in [
        ("none", "true"),
        ("untracked", "echo u >sm/untracked"),
        ("modified", "echo modified >sm/foo"),
        ("both", "echo u >sm/untracked && echo modified >sm/foo"),
    ] {
        let repo = variant(&scratch, &changed, content, setup);
        let mut calls = vec![
            owned(&s(&[SUMMARY]), &[]),
            owned(&s(&[SUMMARY]), &s(&["-s"])),
            owned(&s(&[SUMMARY]), &s(&["--porcelain=v2"])),
        ];
        if content == "none" {
            calls.push(owned(&s(&[SUMMARY, PREFIX]), &[]));
            calls.push(owned(&s(&[SUMMARY, PREFIX, "core.commentChar=;"]), &[]));
            calls.push(owned(&s(&[SUMMARY, PREFIX, "core.commentChar=;;"]), &[]));
            calls.push(owned(&s(&["status.submoduleSummary=1"]), &[]));
            calls.push(owned(&s(&[SUMMARY]), &s(&["-uno"])));
        }
        if content == "both" || content == "untracked" {
            for when in whens {
                calls.push(owned(
                    &s(&[SUMMARY]),
                    &[format!("--ignore-submodules={when}")],
                ));
                calls.push(owned(
                    &[SUMMARY.into(), format!("diff.ignoreSubmodules={when}")],
                    &[],
                ));
            }
        }
        if content == "both" {
            for when in whens {
                calls.push(owned(
                    &[],
                    &[format!("--ignore-submodules={when}"), "-s".into()],
                ));
                calls.push(owned(
                    &[format!("diff.ignoreSubmodules={when}")],
                    &s(&["-s", "-uno"]),
                ));
            }
            calls.push(owned(&[], &s(&["--ignore-submodules", "--porcelain=v2"])));
            calls.push(owned(&[], &s(&["--ignore-submodules=bogus"])));
        }
        let borrowed: Vec<(Vec<&str>, Vec<&str>)> = calls
            .iter()
            .map(|(c, a)| {
                (
                    c.iter().map(String::as_str).collect(),
                    a.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        let list: Vec<Call<'_>> = borrowed.iter().map(|(c, a)| call(c, a)).collect();
        compare_all(&scratch, &repo, &list);
        if content != "both" && content != "untracked" {
            continue;
        }
        // The submodule's own setting, from .gitmodules and from .git/config (which wins).
        for when in whens {
            for (name, setup) in [
                (
                    "gitmodules",
                    format!(
                        "git config -f .gitmodules submodule.subname.path sm && \
                         git config -f .gitmodules submodule.subname.ignore {when}"
                    ),
                ),
                (
                    "config",
                    format!(
                        "git config -f .gitmodules submodule.subname.path sm && \
                         git config -f .gitmodules submodule.subname.ignore none && \
                         git config submodule.subname.ignore {when}"
                    ),
                ),
            ] {
                if content == "untracked" && name == "config" {
                    continue;
                }
                let repo = variant(&scratch, &repo, &format!("{content}-{name}-{when}"), &setup);
                let calls: &[Call<'_>] = if content == "both" {
                    &[
                        call(&[SUMMARY], &[]),
                        call(&[], &["-s"]),
                        call(&["diff.ignoreSubmodules=dirty"], &["-uno"]),
                    ]
                } else {
                    &[call(&[SUMMARY], &[])]
                };
                compare_all(&scratch, &repo, calls);
                let _ = std::fs::remove_dir_all(&repo);
            }
        }
    }
}

#[test]
fn slow_untracked_walk_advice() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let clean = variant(&scratch, &repo, "clean", "git add -A && git commit -qm all");
    let slow = [("GIT_TEST_UF_DELAY_WARNING", "1")];
    let mut calls = Vec::new();
    for config in [
        &[ON, "core.untrackedCache=false", "core.fsmonitor=false"][..],
        &[ON, "core.untrackedCache=true", "core.fsmonitor=false"][..],
        &[ON, "core.untrackedCache=true", "core.fsmonitor=true"][..],
        &[ON, "status.displayCommentPrefix=true"][..],
        &["advice.statusUoption=false"][..],
        &[][..],
    ] {
        for args in [&[][..], &["-uno"][..], &["-s"][..], &["--ignored"][..]] {
            calls.push(Call {
                config,
                env: &slow,
                args,
                ..Call::default()
            });
        }
    }
    calls.push(Call {
        config: &[ON],
        env: &[("GIT_TEST_UF_DELAY_WARNING", "1"), ("GIT_ADVICE", "0")],
        ..Call::default()
    });
    compare_all(&scratch, &clean, &calls);
    compare_all(&scratch, &repo, &calls);
}

#[test]
fn stash_count() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let calls = [
        call(&[], &["--show-stash"]),
        call(&["status.showStash=true"], &[]),
        call(&["status.showStash=true"], &["--no-show-stash"]),
        call(&["status.showStash=false"], &["--show-stash"]),
        call(&[], &["--show-stash", "--porcelain=v2"]),
        call(&[], &["--show-stash", "--porcelain=v2", "-z"]),
        call(&[], &["--show-stash", "-s"]),
        call(&["status.displayCommentPrefix=true"], &["--show-stash"]),
    ];
    compare_all(&scratch, &repo, &calls);
    let one = variant(
        &scratch,
        &repo,
        "one",
        "echo 1 >file && git add file && git stash -q",
    );
    compare_all(&scratch, &one, &calls);
    let two = variant(
        &scratch,
        &one,
        "two",
        "echo 2 >file && git add file && git stash -q",
    );
    compare_all(&scratch, &two, &calls);
}

/// t7525: `status.renames` decides over `diff.renames`, the option over both.
#[test]
fn renames_settings() {
    let scratch = scratch();
    let repo = variant(
        &scratch,
        &build(scratch.path(), "diverged"),
        "renamed",
        "git add -A && git commit -qm all && seq 1 20 >original && git add original && \
         git commit -qm original && git mv original renamed && echo 21 >>renamed && git add renamed",
    );
    let calls = [
        call(&[], &[]),
        call(&["diff.renames=false"], &[]),
        call(&["diff.renames=true", "status.renames=false"], &[]),
        call(&["diff.renames=false", "status.renames=true"], &[]),
        call(&["diff.renames=false", "status.renames=true"], &["-s"]),
        call(&["status.renames=true"], &["--no-renames"]),
        call(
            &["diff.renames=false", "status.renames=true"],
            &["--porcelain=v2"],
        ),
    ];
    compare_all(&scratch, &repo, &calls);
}

/// `column.status`/`column.ui` lay the untracked files out in columns: git-par hands such a
/// status to git, so the output is git's.
#[test]
fn column_settings_are_git_s() {
    let scratch = scratch();
    let repo = build(scratch.path(), "diverged");
    let calls = [
        call(&["column.status=always"], &[]),
        call(&["column.ui=column"], &[]),
        call(&["column.ui=always", "column.status=never"], &[]),
        call(&["column.ui=auto"], &[]),
        call(&["column.ui=always"], &["--no-column"]),
    ];
    compare_all(&scratch, &repo, &calls);
}
