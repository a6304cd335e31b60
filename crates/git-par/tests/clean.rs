//! `git par clean` against `git clean`: the repository `make_clean.sh` builds (untracked and
//! ignored files and directories, nested repositories, quoted names, a symlink out of the
//! repository) copied twice, git cleaning one copy and git-par the other with the same
//! arguments, from the same directory. Compared: exit code, standard output and error, every
//! path left (with each file's bytes), `git status --porcelain --ignored`, and the directory
//! outside the repository the symlink points to, which neither may touch.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// Every path below `dir` but the main repository's `.git`, with each file's bytes and each
/// symlink's target.
fn listing(dir: &Path) -> Vec<String> {
    disk_listing(dir, |rel| rel == "repo/.git")
}

/// `clean ARGS` run in `<side>/repo/CWD` by git on one copy of the fixture and by git-par on
/// the other; everything git shows compared.
#[track_caller]
fn same_as_git(cwd: &str, args: &[&str]) {
    same_as_git_with(cwd, &["clean"], args, |dir, args| git_par(dir, args));
}

/// [`same_as_git`] with git-par run as `git` (a link named `git` first on `PATH`, as `git par
/// shim` makes), `git_args` (git's options, then `clean`) before `args`.
#[track_caller]
fn same_as_git_as_git(cwd: &str, git_args: &[&str], args: &[&str]) {
    same_as_git_on_path(cwd, "git", git_args, git_args, args);
}

/// [`same_as_git`] with git-par started by git as `git par` (a link named `git-par` first on
/// `PATH`): git runs `git_args` then `args`, git-par's side `par_args` (git's options, then `par
/// clean`) then `args`.
#[track_caller]
fn same_as_git_par_by_git(cwd: &str, git_args: &[&str], par_args: &[&str], args: &[&str]) {
    same_as_git_on_path(cwd, "git-par", git_args, par_args, args);
}

/// git-par linked as `link` in a directory first on `PATH`, and the call started from there:
/// `link` itself when it is `git`, else git from a shell, git starting git-par for `git par`.
#[track_caller]
fn same_as_git_on_path(cwd: &str, link: &str, git_args: &[&str], par_args: &[&str], args: &[&str]) {
    let shim = scratch();
    std::os::unix::fs::symlink(GIT_PAR, shim.join(link)).unwrap();
    let path = format!(
        "{}:{}",
        shim.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut par_call: Vec<&str> = Vec::new();
    let program = if link == "git" {
        shim.join("git")
    } else {
        // A shell that stays in `cwd` while git runs, as the user's does: it is the caller
        // whose directory git-par keeps.
        par_call.extend(["-c", "git \"$@\"; exit $?", "sh"]);
        "sh".into()
    };
    par_call.extend(par_args);
    par_call.extend(args);
    same_as_git_with(cwd, git_args, args, |dir, _| {
        run_with(&program, dir, &par_call, &[("PATH", &path)])
    });
}

#[track_caller]
fn same_as_git_with(
    cwd: &str,
    git_args: &[&str],
    args: &[&str],
    par: impl Fn(&Path, &[&str]) -> Run,
) {
    let s = scratch();
    let src = fixture_named("clean");
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    for side in [&by_git, &by_par] {
        copy_repo(src, &side.join("repo"));
        copy_repo(&src.join("../clean-canary"), &side.join("clean-canary"));
    }
    let mut clean = git_args.to_vec();
    clean.extend(args);
    let git_run = git(&by_git.join("repo").join(cwd), &clean);
    let par_run = par(&by_par.join("repo").join(cwd), &clean);
    let what = format!("clean {args:?} in {cwd:?}");
    assert_same_output(&what, &git_run, &par_run, true);
    assert_eq!(
        listing(&by_git),
        listing(&by_par),
        "what is left after {what}"
    );
    let canary = by_par.join("clean-canary/keep");
    assert_eq!(fs::read(&canary).unwrap(), b"outside\n", "{what}");
    assert_same_views(
        &by_git.join("repo"),
        &by_par.join("repo"),
        &[&[
            "status",
            "--porcelain",
            "--ignored",
            "--untracked-files=all",
        ]],
        &what,
    );
}

#[test]
fn untracked_files_only() {
    same_as_git("", &["-f"]);
}

#[test]
fn untracked_directories_nested_repositories_kept() {
    same_as_git("", &["-f", "-d"]);
}

#[test]
fn ignored_too_and_nested_repositories_removed_with_force_twice() {
    same_as_git("", &["-fdx"]);
    same_as_git("", &["-ffdx"]);
}

#[test]
fn ignored_only() {
    same_as_git("", &["-fX"]);
    same_as_git("", &["-fdX"]);
}

#[test]
fn quiet_excludes_and_pathspecs() {
    same_as_git("", &["-fdq"]);
    same_as_git("", &["-fd", "-e", "*.txt", "-e", "new"]);
    same_as_git("", &["-fdx", "--", "dir", "vendor", "*.o"]);
}

#[test]
fn from_a_subdirectory_its_own_paths_and_the_parent() {
    same_as_git("dir", &["-fdx"]);
    same_as_git("dir/sub", &["-fdx", ".."]);
}

#[test]
fn inside_an_untracked_directory_git_keeps_it_and_finishes_the_call() {
    same_as_git("new/inner", &["-fdx", "../.."]);
    // Run as `git -C DIR`, git-par moves to DIR itself: the directory the call started in is
    // still the one git keeps.
    same_as_git_as_git("new/inner", &["-C", "../..", "clean"], &["-fd", "new"]);
    // Started by git as `git -C DIR par clean`, git-par is already in DIR: the caller's
    // directory stands for the one the call started in.
    same_as_git_par_by_git(
        "new/inner",
        &["-C", "../..", "clean"],
        &["-C", "../..", "par", "clean"],
        &["-fd", "new"],
    );
}

#[test]
fn what_git_runs_itself_refuses_and_dry_runs_alike() {
    same_as_git("", &["-d"]);
    same_as_git("", &["-n", "-d", "-x"]);
    same_as_git("", &["-f", "--bogus"]);
}
