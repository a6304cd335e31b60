//! `--recurse-submodules` and `submodule.recurse` against git, on copies of a superproject built
//! by git in the shape of git's own lib-submodule-update.sh (`tests/fixtures/make_submodules.sh`):
//! submodules that appear, move, go, nest, turn into files or directories, or point at a missing
//! commit; safe and forced. After every step the two copies must show the same files, the same
//! superproject index and status, the same submodule `HEAD`s, status and `core.worktree`
//! settings, and the same exit code and messages.

mod support;

use std::path::{Path, PathBuf};

use support::*;

/// Two fresh copies (git's, git-par's) of the fixture's superproject, with the submodules'
/// index stat data refreshed (a copy changes every inode, which a later `read-tree -m` in git
/// would take for local changes).
fn copies() -> (Scratch, PathBuf, PathBuf) {
    let s = scratch();
    let src = fixture_named("submodules");
    // The superproject, its .git (with modules/) and the upstream repositories it names.
    copy_repo(src, &s.join("fx"));
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    copy_repo(&s.join("fx/super"), &by_git);
    copy_repo(&s.join("fx/super"), &by_par);
    for dir in [&by_git, &by_par] {
        git(&dir.join("sub1"), ["update-index", "-q", "--refresh"]);
    }
    (s, by_git, by_par)
}

/// What both sides must agree on after a step.
fn state(dir: &Path) -> String {
    let opt = |cwd: &Path, args: &[&str]| {
        let r = git(cwd, args);
        format!("{}{}", r.stdout_str(), r.status.code().unwrap_or(-1))
    };
    let mut out = String::new();
    out += &format!("files:\n{}\n", files(dir));
    out += &format!("index:\n{}\n", opt(dir, &["ls-files", "-s"]));
    out += &format!(
        "status:\n{}\n",
        opt(dir, &["status", "--porcelain", "--ignore-submodules=none"])
    );
    let sub1 = dir.join("sub1");
    if sub1.join(".git").exists() {
        out += &format!("sub1 HEAD: {}\n", opt(&sub1, &["rev-parse", "HEAD"]));
        out += &format!(
            "sub1 branch: {}\n",
            opt(&sub1, &["symbolic-ref", "-q", "HEAD"])
        );
        out += &format!("sub1 status:\n{}\n", opt(&sub1, &["status", "--porcelain"]));
    }
    // Where git replaces a submodule by a file it leaves `core.worktree` pointing at that file
    // (see `ignored_files_go_with_a_submodule_replaced_by_a_file`); compared everywhere else.
    if !sub1.is_file() {
        out += &format!(
            "sub1 core.worktree: {}\n",
            core_worktree(dir, "sub1/config")
        );
        out += &format!(
            "sub2 core.worktree: {}\n",
            core_worktree(dir, "sub1/modules/sub2/config")
        );
    }
    out
}

/// `core.worktree` in the config file `.git/modules/<config>`, read from the superproject.
fn core_worktree(dir: &Path, config: &str) -> String {
    let file = dir.join(".git/modules").join(config);
    let r = git(
        dir,
        ["config", "--file", file.to_str().unwrap(), "core.worktree"],
    );
    format!("{}{}", r.stdout_str(), r.status.code().unwrap_or(-1))
}

/// Every path of the work tree outside `.git` directories and files, with file contents.
fn files(dir: &Path) -> String {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            if name == ".git" {
                continue;
            }
            let child = rel.join(&name);
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.push(format!("{}/", child.display()));
                stack.push(child);
            } else {
                let content = std::fs::read(dir.join(&child)).unwrap_or_default();
                out.push(format!(
                    "{} {}",
                    child.display(),
                    String::from_utf8_lossy(&content).trim_end()
                ));
            }
        }
    }
    out.sort();
    out.join("\n")
}

/// Runs each step with git in one copy and git-par in the other and compares after each.
#[track_caller]
fn same_as_git(prepare: impl Fn(&Path), steps: &[&[&str]]) {
    let (_s, by_git, by_par) = copies();
    prepare(&by_git);
    prepare(&by_par);
    for args in steps {
        let expected = git(&by_git, *args);
        let actual = git_par(&by_par, *args);
        assert_eq!(
            (expected.status.code(), expected.stderr_str()),
            (actual.status.code(), actual.stderr_str()),
            "exit code and messages of {args:?}:\n{}\n{}",
            expected.describe(),
            actual.describe()
        );
        assert_eq!(state(&by_git), state(&by_par), "after {args:?}");
    }
}

#[test]
fn safe_switches_move_populate_and_remove_submodules() {
    same_as_git(
        |_| {},
        &[
            &["checkout", "--recurse-submodules", "invalid_sub1"],
            &["checkout", "--recurse-submodules", "modify_sub1"],
            &["checkout", "--recurse-submodules", "remove_sub1"],
            &[
                "checkout",
                "--recurse-submodules",
                "modify_sub1_recursively",
            ],
            &["switch", "--recurse-submodules", "no_submodule"],
            &["checkout", "--recurse-submodules", "replace_file_with_sub1"],
            &[
                "checkout",
                "--recurse-submodules",
                "replace_sub1_with_directory",
            ],
        ],
    );
}

#[test]
fn forced_updates_reset_submodule_work_trees() {
    same_as_git(
        |dir| {
            // Local damage in the submodule that a forced update repairs.
            std::fs::write(dir.join("sub1/file1"), "local\n").unwrap();
            std::fs::remove_file(dir.join("sub1/dir/f")).unwrap();
        },
        &[
            &["checkout", "-f", "--recurse-submodules", "HEAD"],
            &[
                "checkout",
                "-f",
                "--recurse-submodules",
                "modify_sub1_recursively",
            ],
            &["reset", "--hard", "--recurse-submodules", "add_sub1"],
            &[
                "checkout",
                "-f",
                "--recurse-submodules",
                "replace_sub1_with_file",
            ],
        ],
    );
}

#[test]
fn submodule_recurse_config_and_its_override() {
    same_as_git(
        |dir| {
            git_ok(dir, ["config", "submodule.recurse", "true"]);
        },
        &[
            &["switch", "--no-recurse-submodules", "modify_sub1"],
            &["switch", "add_sub1"],
            &["checkout", "modify_sub1"],
        ],
    );
}

#[test]
fn a_submodule_branch_is_kept_and_head_detached() {
    same_as_git(
        |dir| {
            git_ok(&dir.join("sub1"), ["checkout", "-q", "-b", "keep_branch"]);
        },
        &[&["checkout", "--recurse-submodules", "modify_sub1"]],
    );
}

/// A submodule replaced by a file, with only files its own rules ignore left in it: the
/// directory goes, as with git. One deliberate difference: git leaves `core.worktree` in the
/// submodule's git directory pointing at what is now a file (every later `git -C` there fails
/// with "cannot chdir"); git-par takes the submodule down properly and unsets it.
#[test]
fn ignored_files_go_with_a_submodule_replaced_by_a_file() {
    let (_s, by_git, by_par) = copies();
    for dir in [&by_git, &by_par] {
        let info = dir.join(".git/modules/sub1/info");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(info.join("exclude"), "ignored\n").unwrap();
        std::fs::write(dir.join("sub1/ignored"), "").unwrap();
    }
    let args = ["checkout", "--recurse-submodules", "replace_sub1_with_file"];
    let expected = git(&by_git, args);
    let actual = git_par(&by_par, args);
    assert_eq!(expected.status.code(), actual.status.code());
    assert_eq!(expected.stderr_str(), actual.stderr_str());
    assert_eq!(state(&by_git), state(&by_par));
    assert_eq!(core_worktree(&by_git, "sub1/config"), "../../../sub1\n0");
    assert_eq!(core_worktree(&by_par, "sub1/config"), "1");
}

/// Three submodules that move, go and come back in one switch each: git-par updates them
/// concurrently (each with its share of the threads and of the budget); the result must be
/// git's, submodule by submodule.
#[test]
fn several_submodules_move_at_once() {
    let s = scratch();
    copy_repo(fixture_named("submodules"), &s.join("fx"));
    let (by_git, by_par) = (s.join("git"), s.join("par"));
    copy_repo(&s.join("fx/multi"), &by_git);
    copy_repo(&s.join("fx/multi"), &by_par);
    for dir in [&by_git, &by_par] {
        for sub in ["a", "b/c", "d"] {
            git(&dir.join(sub), ["update-index", "-q", "--refresh"]);
        }
    }
    let sub_state = |dir: &Path| -> String {
        ["a", "b/c", "d"]
            .iter()
            .map(|sub| {
                let d = dir.join(sub);
                if !d.join(".git").exists() {
                    return format!("{sub}: not populated\n");
                }
                let head = git(&d, ["rev-parse", "HEAD"]).stdout_str();
                let status = git(&d, ["status", "--porcelain"]).stdout_str();
                format!("{sub}: {head}{status}{}\n", files(&d))
            })
            .collect()
    };
    for target in ["moved", "none", "three", "moved"] {
        let args = ["checkout", "-q", "--recurse-submodules", target];
        let expected = git(&by_git, args);
        let actual = git_par(&by_par, args);
        assert_eq!(
            (expected.status.code(), expected.stderr_str()),
            (actual.status.code(), actual.stderr_str()),
            "{target}"
        );
        assert_eq!(files(&by_git), files(&by_par), "files after {target}");
        assert_eq!(
            git_str(&by_git, ["ls-files", "-s"]),
            git_str(&by_par, ["ls-files", "-s"])
        );
        assert_eq!(sub_state(&by_git), sub_state(&by_par), "after {target}");
    }
}

/// Without `--recurse-submodules`, a populated submodule whose gitlink the target lacks stays,
/// and git warns that it could not remove its directory (t3600 "checking out a commit after
/// submodule removal needs manual updates").
#[test]
fn a_populated_submodule_left_behind_is_warned_about() {
    same_as_git(
        |_| {},
        &[
            &["checkout", "-q", "remove_sub1"],
            &["checkout", "-q", "-"],
            &["reset", "-q", "--hard", "remove_sub1"],
        ],
    );
}

/// Empty the work tree of the superproject at `dir` as `git clone -n` leaves one: nothing but
/// `.git` (the submodules' git directories stay in `.git/modules`) and no index.
fn empty_the_work_tree(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() == ".git" {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    std::fs::remove_file(dir.join(".git/index")).unwrap();
}

/// An emptied work tree (the state `git clone -n` leaves) takes the full checkout's path, and
/// with `--recurse-submodules` the submodules are checked out after it as git checks them out:
/// connected to their git directories, at the recorded commit, nested ones too.
#[test]
fn a_full_checkout_of_an_emptied_work_tree_checks_out_its_submodules() {
    same_as_git(
        empty_the_work_tree,
        &[&["checkout", "-f", "--recurse-submodules", "add_sub1"]],
    );
    same_as_git(
        empty_the_work_tree,
        &[&["reset", "--hard", "--recurse-submodules"]],
    );
    same_as_git(
        empty_the_work_tree,
        &[&[
            "checkout",
            "--recurse-submodules",
            "modify_sub1_recursively",
        ]],
    );
    same_as_git(empty_the_work_tree, &[&["switch", "modify_sub1"]]);
    let (_s, _by_git, by_par) = copies();
    empty_the_work_tree(&by_par);
    let traced = run(
        "env",
        &by_par,
        [
            "GIT_PAR_TRACE=1",
            GIT_PAR,
            "reset",
            "--hard",
            "--recurse-submodules",
        ],
    )
    .assert_success();
    assert!(
        traced
            .stderr_str()
            .lines()
            .any(|l| l == "git-par: full checkout"),
        "the full checkout's path was not taken:\n{}",
        traced.describe()
    );
}

/// A submodule path that is a symbolic link (to a repository elsewhere in the work tree): a
/// recursing checkout that would remove or move that submodule refuses, with git's message and
/// exit code, and follows no link (git's `validate_submodule_path`, t7423). git-par changes
/// nothing; git leaves some of the superproject's update done.
#[test]
fn a_symlinked_submodule_path_is_refused() {
    let s = scratch();
    let repo = init_repo(s.path(), "repo");
    std::fs::write(repo.join("top"), "top\n").unwrap();
    git_ok(&repo, ["add", "top"]);
    git_ok(&repo, ["commit", "-q", "-m", "initial"]);
    git_ok(&repo, ["tag", "initial"]);
    let upstream = repo.join("upstream");
    git_ok(&repo, ["init", "-q", "upstream"]);
    std::fs::write(upstream.join("submodule_file"), "u\n").unwrap();
    git_ok(&upstream, ["add", "."]);
    git_ok(&upstream, ["commit", "-q", "-m", "up"]);
    git_ok(
        &repo,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            "./upstream",
            "a/sm",
        ],
    );
    git_ok(&repo, ["commit", "-q", "-m", "submodule"]);
    std::fs::remove_dir_all(repo.join("a")).unwrap();
    std::fs::create_dir(repo.join("a")).unwrap();
    git_ok(&repo, ["init", "-q", "a/target"]);
    std::os::unix::fs::symlink("target", repo.join("a/sm")).unwrap();
    std::fs::remove_dir_all(repo.join(".git/modules")).unwrap();
    let before = git_str(&repo, ["ls-files", "-s"]);
    let run = git_par(&repo, ["checkout", "-f", "--recurse-submodules", "initial"]);
    assert_eq!(run.status.code(), Some(128));
    assert_eq!(
        run.stderr_str(),
        "error: expected submodule path 'a/sm' not to be a symbolic link\n"
    );
    assert_eq!(
        git_str(&repo, ["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );
    assert_eq!(git_str(&repo, ["ls-files", "-s"]), before);
    assert!(repo.join(".gitmodules").is_file());
    assert!(repo.join("a/target/.git").is_dir());
    assert!(!repo.join(".git/modules/a/sm").exists());
    // git refuses it the same way.
    let by_git = git(&repo, ["checkout", "-f", "--recurse-submodules", "initial"]);
    assert_eq!(by_git.status.code(), Some(128));
    assert!(by_git
        .stderr_str()
        .contains("error: expected submodule path 'a/sm' not to be a symbolic link"));
}

/// Path checkouts and restores with `--recurse-submodules` move the selected submodules'
/// `HEAD` in git (`checkout_entry` of a gitlink); git-par hands such a call to git whole while
/// a submodule is in the index, so that the result is git's.
#[test]
fn recursing_path_restores_are_gits() {
    same_as_git(
        |_| {},
        &[
            &["checkout", "--recurse-submodules", "modify_sub1"],
            &[
                "restore",
                "--recurse-submodules",
                "--source=add_sub1",
                "sub1",
            ],
            &[
                "checkout",
                "--recurse-submodules",
                "modify_sub1",
                "--",
                "sub1",
            ],
            &[
                "-c",
                "submodule.recurse=true",
                "checkout",
                "add_sub1",
                "--",
                "sub1",
            ],
            &[
                "restore",
                "--no-recurse-submodules",
                "--source=modify_sub1",
                "sub1",
            ],
        ],
    );
}

/// Submodules named `hippo` and `hippo/hooks`: the second one's repository would be the first
/// one's hooks directory. A recursing checkout refuses to connect it, with git's words, and
/// leaves no `.git` in its directory (git's `validate_submodule_git_dir`, t7450.49).
#[test]
fn a_submodule_git_dir_inside_another_is_refused() {
    let s = scratch();
    let nested = init_repo(s.path(), "nested");
    std::fs::write(nested.join("file"), "f\n").unwrap();
    git_ok(&nested, ["add", "file"]);
    git_ok(&nested, ["commit", "-q", "-m", "one"]);
    std::fs::write(
        nested.join(".gitmodules"),
        "[submodule \"hippo\"]\n\turl = .\n\tpath = thing1\n\
         [submodule \"hippo/hooks\"]\n\turl = .\n\tpath = thing2\n",
    )
    .unwrap();
    git_ok(&nested, ["clone", "-q", ".", "thing1"]);
    git_ok(&nested, ["clone", "-q", ".", "thing2"]);
    git_ok(&nested, ["add", ".gitmodules", "thing1", "thing2"]);
    git_ok(&nested, ["commit", "-q", "-m", "nested"]);
    let checkout = s.join("checkout");
    git_ok(s.path(), ["clone", "-q", "nested", "checkout"]);
    git_ok(&checkout, ["submodule", "init", "-q"]);
    git_ok(
        &checkout,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "update",
            "-q",
            "thing1",
        ],
    );
    let hooks = checkout.join(".git/modules/hippo/hooks");
    std::fs::create_dir_all(hooks.join("refs")).unwrap();
    std::fs::create_dir_all(hooks.join("objects/info")).unwrap();
    std::fs::write(
        hooks.join("objects/info/alternates"),
        "../../../../objects\n",
    )
    .unwrap();
    std::fs::write(hooks.join("HEAD"), "ref: refs/heads/master\n").unwrap();
    let run = git_par(
        &checkout,
        ["checkout", "-f", "--recurse-submodules", "HEAD"],
    );
    assert!(!run.status.success());
    assert!(
        run.stderr_str().contains("is inside git dir"),
        "{}",
        run.stderr_str()
    );
    assert!(!checkout.join("thing2/.git").exists());
}
