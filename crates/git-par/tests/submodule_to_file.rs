//! A switch that replaces a populated submodule by a regular file (issue 23): git removes the
//! submodule's work tree (its repository lives on in `.git/modules`) and writes the file,
//! silently. git-par does the same; only a submodule whose repository is inside its directory
//! (`.git` a directory, never absorbed) is kept, since removing it would lose that repository:
//! the file is then not written and the path reported. And the local-change lines a switch
//! prints (`M\tm`) for submodules, as git's `show_local_changes` prints them.

mod support;

use std::path::{Path, PathBuf};

use support::*;

/// `top`, whose `main` has the submodule `m` (populated) and whose `plain` has a file `m`.
fn repository(dir: &Path) -> PathBuf {
    let sub = dir.join("sub");
    git_ok(dir, ["init", "-q", "-b", "main", sub.to_str().unwrap()]);
    std::fs::write(sub.join("s"), "s\n").unwrap();
    git_ok(&sub, ["add", "s"]);
    git_ok(&sub, ["commit", "-q", "-m", "s"]);
    let top = dir.join("top");
    git_ok(dir, ["init", "-q", "-b", "main", top.to_str().unwrap()]);
    std::fs::write(top.join("a"), "a\n").unwrap();
    git_ok(&top, ["add", "a"]);
    git_ok(&top, ["commit", "-q", "-m", "a"]);
    git_ok(&top, ["branch", "plain"]);
    git_ok(
        &top,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "-q",
            "add",
            "../sub",
            "m",
        ],
    );
    git_ok(&top, ["commit", "-q", "-m", "submodule"]);
    // `plain` gets a file `m`, made in a work tree of its own.
    let wt = dir.join("plain-wt");
    git_ok(
        &top,
        ["worktree", "add", "-q", wt.to_str().unwrap(), "plain"],
    );
    std::fs::write(wt.join("m"), "file\n").unwrap();
    git_ok(&wt, ["add", "m"]);
    git_ok(&wt, ["commit", "-q", "-m", "m file"]);
    git_ok(&top, ["worktree", "remove", wt.to_str().unwrap()]);
    top
}

#[test]
fn a_submodule_replaced_by_a_file_ends_as_with_git() {
    let s = scratch();
    let base = repository(s.path());
    let mut results = Vec::new();
    for par in [false, true] {
        let repo = s.join(format!("r-{par}"));
        copy_repo(&base, &repo);
        let run = if par {
            git_par(&repo, ["checkout", "plain"])
        } else {
            git(&repo, ["checkout", "plain"])
        };
        results.push((
            run.status.code(),
            run.stderr_str(),
            std::fs::read_to_string(repo.join("m")).ok(),
            git_str(&repo, ["status", "--porcelain"]),
            repo.join(".git/modules/m/HEAD").exists(),
        ));
    }
    assert_eq!(results[0], results[1], "left: git, right: git-par");
    assert_eq!(results[1].2.as_deref(), Some("file\n"));
}

#[test]
fn a_submodule_with_its_own_repository_inside_is_kept() {
    let s = scratch();
    let base = repository(s.path());
    let repo = s.join("r");
    copy_repo(&base, &repo);
    // Un-absorb: the submodule's repository moves into its directory.
    std::fs::remove_file(repo.join("m/.git")).unwrap();
    std::fs::rename(repo.join(".git/modules/m"), repo.join("m/.git")).unwrap();
    let config = repo.join("m/.git/config");
    git_ok(
        &repo,
        [
            "config",
            "--file",
            config.to_str().unwrap(),
            "--unset",
            "core.worktree",
        ],
    );
    let run = git_par(&repo, ["checkout", "plain"]);
    assert!(
        repo.join("m/.git/HEAD").exists(),
        "the submodule's repository is gone"
    );
    assert!(
        run.stderr_str().contains("m"),
        "the path is not reported: {}",
        run.stderr_str()
    );
}

/// git's local-change lines after a switch list a submodule whose HEAD moved, or whose content
/// is modified or has untracked files (`diff.ignoreSubmodules` unset), and not a clean one.
#[test]
fn local_changes_after_a_switch_list_submodules_as_git_does() {
    let s = scratch();
    let base = repository(s.path());
    git_ok(&base, ["submodule", "-q", "update"]);
    git_ok(&base, ["branch", "other"]);
    type Change = fn(&Path);
    let states: [(&str, Change); 4] = [
        ("clean", |_| {}),
        ("moved", |m| {
            std::fs::write(m.join("s2"), "more\n").unwrap();
            git_ok(m, ["add", "s2"]);
            git_ok(m, ["commit", "-q", "-m", "more"]);
        }),
        ("modified", |m| {
            std::fs::write(m.join("s"), "changed\n").unwrap()
        }),
        ("untracked", |m| {
            std::fs::write(m.join("new"), "new\n").unwrap()
        }),
    ];
    for (name, change) in states {
        let mut outs = Vec::new();
        for par in [false, true] {
            let repo = s.join(format!("{name}-{par}"));
            copy_repo(&base, &repo);
            change(&repo.join("m"));
            let run = if par {
                git_par(&repo, ["checkout", "other"])
            } else {
                git(&repo, ["checkout", "other"])
            };
            outs.push((run.status.code(), run.stdout_str()));
        }
        assert_eq!(outs[0], outs[1], "{name} (left: git, right: git-par)");
        assert_eq!(
            outs[0].1.contains("M\tm"),
            name != "clean",
            "{name}: {:?}",
            outs[0]
        );
    }
}

/// `submodule.<name>.ignore` (from the configuration, else `.gitmodules`) hides what it says
/// from those lines, as git's `set_diffopt_flags_from_submodule_config` does (t2013.5–6).
#[test]
fn local_changes_honour_the_submodules_ignore_setting() {
    let s = scratch();
    let base = repository(s.path());
    git_ok(&base, ["branch", "other"]);
    for (place, value) in [("config", "all"), (".gitmodules", "untracked")] {
        let mut outs = Vec::new();
        for par in [false, true] {
            let repo = s.join(format!("{place}-{par}"));
            copy_repo(&base, &repo);
            let mut args = vec!["config"];
            if place == ".gitmodules" {
                args.extend(["-f", ".gitmodules"]);
            }
            args.extend(["submodule.m.ignore", value]);
            git_ok(&repo, &args);
            std::fs::write(repo.join("m/new"), "new\n").unwrap();
            let run = if par {
                git_par(&repo, ["checkout", "other"])
            } else {
                git(&repo, ["checkout", "other"])
            };
            outs.push((run.status.code(), run.stdout_str()));
        }
        assert_eq!(outs[0], outs[1], "{place} (left: git, right: git-par)");
    }
}
