//! Which repository, work tree and index a command works on: git-par against git's
//! `setup_git_directory` — `GIT_DIR`, `GIT_WORK_TREE`, `git --git-dir/--work-tree par`,
//! `GIT_INDEX_FILE`, `core.worktree`, subdirectories, `GIT_CEILING_DIRECTORIES`, a pruned linked
//! work tree, a `GIT_DIR` that is no repository and `safe.directory`.
//!
//! Every case builds one directory tree with git (`<scratch>/git`), copies it (`<scratch>/par`),
//! runs git in the first and git-par in the second with the same relative paths and environment,
//! then compares the exit codes, the first line of stderr (the side's own path replaced), and for
//! each repository involved its HEAD, its index (`git ls-files -s`) and its work tree files.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

/// One directory tree, built by git, in two copies.
struct Case {
    s: Scratch,
}

/// What to compare after a command: a git directory, the index to read (default: its own), and
/// the work tree files.
struct Repo<'a> {
    git_dir: &'a str,
    index: Option<&'a str>,
    work_tree: Option<&'a str>,
}

fn repo<'a>(work_tree: &'a str, git_dir: &'a str) -> Repo<'a> {
    Repo {
        git_dir,
        index: None,
        work_tree: Some(work_tree),
    }
}

impl Case {
    fn new(build: impl FnOnce(&Path)) -> Case {
        let s = scratch();
        let git_side = s.join("git");
        fs::create_dir_all(&git_side).unwrap();
        build(&git_side);
        run("cp", s.path(), ["-a", "git", "par"]).assert_success();
        Case { s }
    }

    fn side(&self, par: bool) -> PathBuf {
        self.s.join(if par { "par" } else { "git" })
    }

    /// Runs `git ARGS` in the git copy and `git-par ARGS` (or `git PAR_ARGS` with git-par on
    /// `PATH` when `via_git`) in the other, in `cwd`, with `env` (`{side}` stands for the copy).
    fn run(&self, cwd: &str, env: &[(&str, &str)], args: &[&str]) -> (Run, Run) {
        (
            self.run_one(false, cwd, env, args, false),
            self.run_one(true, cwd, env, args, false),
        )
    }

    fn run_via_git(&self, cwd: &str, env: &[(&str, &str)], args: &[&str]) -> (Run, Run) {
        (
            self.run_one(false, cwd, env, args, true),
            self.run_one(true, cwd, env, args, true),
        )
    }

    fn run_one(
        &self,
        par: bool,
        cwd: &str,
        env: &[(&str, &str)],
        args: &[&str],
        via_git: bool,
    ) -> Run {
        let side = self.side(par);
        let fill = |v: &str| v.replace("{side}", &side.to_string_lossy());
        let args: Vec<String> = args.iter().map(|a| fill(a)).collect();
        let (program, args): (OsString, Vec<String>) = match (par, via_git) {
            (false, _) => ("git".into(), args),
            (true, false) => (GIT_PAR.into(), args),
            (true, true) => {
                // `git [global options] COMMAND ...` becomes `git [global options] par COMMAND ...`.
                let at = args.iter().position(|a| !a.starts_with('-')).unwrap_or(0);
                let mut with_par = args.clone();
                with_par.insert(at, "par".into());
                ("git".into(), with_par)
            }
        };
        let dir = side.join(cwd);
        let mut cmd = Command::new(&program);
        clean_env(&mut cmd).current_dir(&dir).args(&args);
        if par && via_git {
            let bin_dir = Path::new(GIT_PAR).parent().unwrap();
            let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
            let mut joined = OsString::from(bin_dir);
            joined.push(":");
            joined.push(path);
            cmd.env("PATH", joined);
        }
        for (k, v) in env {
            cmd.env(k, fill(v));
        }
        let out = cmd.output().expect("run");
        Run {
            command: format!(
                "{} {}  (in {})",
                program.to_string_lossy(),
                args.join(" "),
                dir.display()
            ),
            status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
        }
    }

    /// Panics unless both runs exited alike with the same first line of stderr, and every repository
    /// in `repos` has the same HEAD, index and work tree in both copies.
    #[track_caller]
    fn compare(&self, (by_git, by_par): &(Run, Run), repos: &[Repo]) {
        let context = format!(
            "\ngit: {}\ngit-par: {}",
            by_git.describe(),
            by_par.describe()
        );
        assert_eq!(
            by_git.status.code(),
            by_par.status.code(),
            "exit codes differ{context}"
        );
        let first = |r: &Run, par: bool| {
            let side = self.side(par).to_string_lossy().into_owned();
            r.stderr_str()
                .lines()
                .find(|l| !l.starts_with("Updating files"))
                .unwrap_or("")
                .replace(&side, "{side}")
        };
        assert_eq!(
            first(by_git, false),
            first(by_par, true),
            "first stderr lines differ{context}"
        );
        for r in repos {
            assert_eq!(
                self.state(false, r),
                self.state(true, r),
                "HEAD or index of {} differ{context}",
                r.git_dir
            );
            if let Some(w) = r.work_tree {
                compare_worktrees(&self.side(false).join(w), &self.side(true).join(w));
            }
        }
    }

    /// HEAD (symbolic and resolved) and `ls-files -s` of one repository in one copy.
    fn state(&self, par: bool, r: &Repo) -> String {
        let side = self.side(par);
        let git_dir = format!("--git-dir={}", side.join(r.git_dir).display());
        let with = |args: &[&str]| {
            let mut cmd = Command::new("git");
            clean_env(&mut cmd)
                .current_dir(&side)
                .arg(&git_dir)
                .args(args);
            if let Some(index) = r.index {
                cmd.env("GIT_INDEX_FILE", side.join(index));
            }
            let out = cmd.output().expect("git");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        format!(
            "HEAD: {}{}index:\n{}",
            with(&["symbolic-ref", "-q", "HEAD"]),
            with(&["rev-parse", "HEAD"]),
            with(&["ls-files", "-s"])
        )
    }
}

/// `dir/name`: a repository with `a`, `sub/s`, `sub/t` on `main` and a branch `other` that changes
/// `a`, removes `sub/t` and adds `b` and `sub/u`.
fn make_repo(dir: &Path, name: &str) {
    git_ok(dir, ["init", "-q", "-b", "main", name]);
    let r = dir.join(name);
    fs::create_dir_all(r.join("sub")).unwrap();
    fs::write(r.join("a"), "a on main\n").unwrap();
    fs::write(r.join("sub/s"), "s\n").unwrap();
    fs::write(r.join("sub/t"), "t\n").unwrap();
    git_ok(&r, ["add", "."]);
    git_ok(&r, ["commit", "-q", "-m", "main"]);
    git_ok(&r, ["checkout", "-q", "-b", "other"]);
    fs::write(r.join("a"), "a on other\n").unwrap();
    fs::write(r.join("b"), "b\n").unwrap();
    fs::write(r.join("sub/u"), "u\n").unwrap();
    git_ok(&r, ["rm", "-q", "sub/t"]);
    git_ok(&r, ["add", "."]);
    git_ok(&r, ["commit", "-q", "-m", "other"]);
    git_ok(&r, ["checkout", "-q", "main"]);
}

fn two_repos(dir: &Path) {
    make_repo(dir, "r1");
    make_repo(dir, "r2");
}

#[test]
fn git_dir_and_work_tree_name_another_repository() {
    let case = Case::new(two_repos);
    let runs = case.run(
        "r1",
        &[("GIT_DIR", "../r2/.git"), ("GIT_WORK_TREE", "../r2")],
        &["switch", "other"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git"), repo("r2", "r2/.git")]);
}

#[test]
fn git_dir_and_work_tree_given_to_git_before_par() {
    let case = Case::new(two_repos);
    let runs = case.run_via_git(
        "r1",
        &[],
        &[
            "--git-dir=../r2/.git",
            "--work-tree=../r2",
            "switch",
            "other",
        ],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git"), repo("r2", "r2/.git")]);
    // And with an absolute --git-dir only, from a directory that is the work tree.
    let runs = case.run_via_git(
        "r2",
        &[],
        &["--git-dir={side}/r2/.git", "reset", "--hard", "main"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git"), repo("r2", "r2/.git")]);
}

#[test]
fn git_dir_alone_makes_the_current_directory_the_work_tree() {
    let case = Case::new(|dir| {
        make_repo(dir, "r1");
        // A plain directory holding what main has: the work tree git will use.
        fs::create_dir_all(dir.join("w/sub")).unwrap();
        fs::copy(dir.join("r1/a"), dir.join("w/a")).unwrap();
        fs::copy(dir.join("r1/sub/s"), dir.join("w/sub/s")).unwrap();
        fs::copy(dir.join("r1/sub/t"), dir.join("w/sub/t")).unwrap();
    });
    let runs = case.run("w", &[("GIT_DIR", "../r1/.git")], &["switch", "other"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git"), repo("w", "r1/.git")]);
    // From a subdirectory, that subdirectory is the whole work tree: git writes the tree there.
    let runs = case.run("r1/sub", &[("GIT_DIR", "../.git")], &["reset", "--hard"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
}

#[test]
fn index_file_from_the_environment() {
    let case = Case::new(|dir| {
        make_repo(dir, "r1");
        fs::copy(dir.join("r1/.git/index"), dir.join("alt-index")).unwrap();
        fs::copy(dir.join("r1/.git/index"), dir.join("rel-index")).unwrap();
    });
    let alt = Repo {
        git_dir: "r1/.git",
        index: Some("alt-index"),
        work_tree: Some("r1"),
    };
    let rel = Repo {
        git_dir: "r1/.git",
        index: Some("rel-index"),
        work_tree: None,
    };
    let runs = case.run(
        "r1",
        &[("GIT_INDEX_FILE", "{side}/alt-index")],
        &["switch", "other"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git"), alt]);
    // A relative GIT_INDEX_FILE is relative to the top of the work tree, even from a subdirectory:
    // `../rel-index` is `<side>/rel-index`, not `r1/rel-index`.
    let runs = case.run(
        "r1/sub",
        &[("GIT_INDEX_FILE", "../rel-index")],
        &["reset", "--hard", "other"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git"), rel]);
    assert!(!case.side(true).join("r1/rel-index").exists());
    assert!(!case.side(true).join("r1/sub/rel-index").exists());
    let runs = case.run(
        "r1/sub",
        &[("GIT_INDEX_FILE", "../rel-index")],
        &["restore", "--source", "main", "s"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
}

#[test]
fn core_worktree_names_the_work_tree() {
    // A git directory `gd` whose core.worktree is `../w` (relative to the git directory).
    let case = Case::new(|dir| {
        make_repo(dir, "r1");
        fs::rename(dir.join("r1/.git"), dir.join("gd")).unwrap();
        fs::rename(dir.join("r1"), dir.join("w")).unwrap();
        git_ok(dir, ["--git-dir=gd", "config", "core.worktree", "../w"]);
        fs::create_dir_all(dir.join("elsewhere")).unwrap();
    });
    let w = || repo("w", "gd");
    // Discovered from inside the git directory: setup as for a bare repository with a work tree.
    let runs = case.run("gd", &[], &["switch", "other"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[w()]);
    // Explicit GIT_DIR from a subdirectory of the work tree: pathspecs are relative to it.
    for (path, content) in [("w/a", "edited\n"), ("w/sub/s", "edited\n")] {
        fs::write(case.side(false).join(path), content).unwrap();
        fs::write(case.side(true).join(path), content).unwrap();
    }
    let runs = case.run("w/sub", &[("GIT_DIR", "../../gd")], &["restore", "s"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[w()]);
    // From outside the work tree.
    let runs = case.run(
        "elsewhere",
        &[("GIT_DIR", "../gd")],
        &["reset", "--hard", "main"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[w()]);
}

#[test]
fn from_a_subdirectory() {
    let case = Case::new(|dir| make_repo(dir, "r1"));
    for (path, content) in [("r1/a", "edited\n"), ("r1/sub/s", "edited\n")] {
        fs::write(case.side(false).join(path), content).unwrap();
        fs::write(case.side(true).join(path), content).unwrap();
    }
    let runs = case.run("r1/sub", &[], &["restore", "s"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
    let runs = case.run("r1/sub", &[], &["checkout", "other", "--", "../b", "u"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
    let runs = case.run("r1/sub", &[], &["switch", "-f", "other"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
    // A ceiling above the current directory stops the search before the repository.
    let runs = case.run(
        "r1/sub",
        &[("GIT_CEILING_DIRECTORIES", "{side}/r1")],
        &["reset", "--hard", "main"],
    );
    assert_eq!(runs.0.status.code(), Some(128), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
}

#[test]
fn pruned_linked_work_tree_is_not_a_repository() {
    let case = Case::new(|dir| {
        make_repo(dir, "r1");
        git_ok(&dir.join("r1"), ["worktree", "add", "-q", "../wt", "other"]);
        fs::remove_dir_all(dir.join("r1/.git/worktrees/wt")).unwrap();
        // An uncommitted edit in the main work tree, which nothing may touch.
        fs::write(dir.join("r1/a"), "precious local edit\n").unwrap();
    });
    // The copy's `.git` file names its own (pruned) admin directory.
    let gitfile = format!(
        "gitdir: {}/r1/.git/worktrees/wt\n",
        case.side(true).display()
    );
    fs::write(case.side(true).join("wt/.git"), gitfile).unwrap();
    for (cwd, args) in [
        ("wt", &["reset", "--hard"][..]),
        ("wt", &["switch", "-f", "main"][..]),
        ("wt", &["restore", "a"][..]),
        ("wt", &["worktree", "add", "../wt2", "main"][..]),
    ] {
        let runs = case.run(cwd, &[], args);
        assert_eq!(runs.0.status.code(), Some(128), "{}", runs.0.describe());
        case.compare(&runs, &[repo("r1", "r1/.git")]);
        for side in [case.side(false), case.side(true)] {
            assert_eq!(
                fs::read_to_string(side.join("r1/a")).unwrap(),
                "precious local edit\n"
            );
            assert!(!side.join("wt2").exists());
        }
    }
    // GIT_DIR naming the `.git` file of the pruned work tree: the same refusal.
    let runs = case.run("wt", &[("GIT_DIR", ".git")], &["reset", "--hard"]);
    assert_eq!(runs.0.status.code(), Some(128), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
}

#[test]
fn git_dir_that_is_not_a_repository() {
    let case = Case::new(|dir| {
        make_repo(dir, "r1");
        fs::create_dir_all(dir.join("r1/empty")).unwrap();
        fs::write(dir.join("r1/a"), "precious local edit\n").unwrap();
    });
    for git_dir in ["empty", "missing", "{side}/missing", "a"] {
        for args in [&["reset", "--hard"][..], &["switch", "other"][..]] {
            let runs = case.run("r1", &[("GIT_DIR", git_dir)], args);
            assert_eq!(runs.0.status.code(), Some(128), "{}", runs.0.describe());
            case.compare(&runs, &[repo("r1", "r1/.git")]);
        }
    }
}

#[test]
fn dubious_ownership_as_git() {
    let case = Case::new(|dir| make_repo(dir, "r1"));
    for side in [case.side(false), case.side(true)] {
        run("chown", &side, ["-R", "nobody", "r1"]).assert_success();
    }
    // Refused, from the top and from a subdirectory, and with GIT_WORK_TREE.
    for (cwd, env) in [
        ("r1", &[][..]),
        ("r1/sub", &[][..]),
        ("r1", &[("GIT_WORK_TREE", ".")][..]),
    ] {
        let runs = case.run(cwd, env, &["switch", "other"]);
        assert_eq!(runs.0.status.code(), Some(128), "{}", runs.0.describe());
        assert!(runs
            .1
            .stderr_str()
            .contains("git config --global --add safe.directory"));
        let lines = |r: &Run, par: bool| {
            r.stderr_str()
                .replace(&case.side(par).to_string_lossy().into_owned(), "{side}")
        };
        assert_eq!(lines(&runs.0, false), lines(&runs.1, true));
        case.compare(&runs, &[repo("r1", "r1/.git")]);
    }
    // A safe.directory that does not match changes nothing.
    let runs = case.run(
        "r1",
        &[],
        &["-c", "safe.directory={side}/elsewhere", "switch", "other"],
    );
    assert_eq!(runs.0.status.code(), Some(128), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
    // An explicit GIT_DIR is not checked.
    let runs = case.run("r1", &[("GIT_DIR", ".git")], &["switch", "other"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
    // `-c safe.directory=*`, the exact path, and `path/*`.
    for value in ["*", "{side}/r1", "{side}/*"] {
        let target = if value == "{side}/r1" {
            "other"
        } else {
            "main"
        };
        let flag = format!("safe.directory={value}");
        let runs = case.run("r1/sub", &[], &["-c", &flag, "switch", target]);
        assert!(runs.0.success(), "{value}: {}", runs.0.describe());
        case.compare(&runs, &[repo("r1", "r1/.git")]);
    }
    // `git config --global` in a HOME of the test's own.
    for side in [case.side(false), case.side(true)] {
        let home = side.join("home");
        fs::create_dir_all(&home).unwrap();
        let config = format!(
            "[user]\n\tname = Test User\n\temail = test@example.com\n[safe]\n\tdirectory = {}\n",
            side.join("r1").display()
        );
        fs::write(home.join(".gitconfig"), config).unwrap();
    }
    let runs = case.run("r1", &[("HOME", "{side}/home")], &["switch", "other"]);
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(&runs, &[repo("r1", "r1/.git")]);
}

#[test]
fn worktree_add_through_git_dir() {
    let case = Case::new(|dir| {
        make_repo(dir, "r1");
        fs::create_dir_all(dir.join("elsewhere")).unwrap();
    });
    let runs = case.run(
        "elsewhere",
        &[("GIT_DIR", "../r1/.git")],
        &["worktree", "add", "-q", "../wt", "other"],
    );
    assert!(runs.0.success(), "{}", runs.0.describe());
    case.compare(
        &runs,
        &[repo("r1", "r1/.git"), repo("wt", "r1/.git/worktrees/wt")],
    );
    for side in [case.side(false), case.side(true)] {
        assert_clean(&side.join("wt"), &[]);
    }
}

/// Repositories git reads and gix cannot open — a linked work tree whose `HEAD` is a symbolic
/// link (git's t2400.19), a SHA-256 repository — are handed to git whole: the same result, exit
/// code and messages as git's own, where git-par used to refuse them as "not a git repository".
#[test]
fn repositories_gix_cannot_open_are_handed_to_git() {
    let s = scratch();
    let mut dirs = Vec::new();
    for side in ["git", "par"] {
        let root = s.join(side);
        fs::create_dir_all(&root).unwrap();
        make_repo(&root, "main");
        let main = root.join("main");
        git_ok(&main, ["branch", "newmain"]);
        git_ok(&main, ["worktree", "add", "-q", "../there", "newmain"]);
        let there = root.join("there");
        let head = PathBuf::from(git_str(&there, ["rev-parse", "--git-path", "HEAD"]));
        let head = if head.is_absolute() {
            head
        } else {
            there.join(head)
        };
        fs::remove_file(&head).unwrap();
        std::os::unix::fs::symlink("refs/heads/newmain", &head).unwrap();
        dirs.push(root);
    }
    // The SHA-256 repository is built once and copied, so that both sides have the same commits.
    let sha256 = dirs[0].join("sha256");
    fs::create_dir(&sha256).unwrap();
    git_ok(
        &sha256,
        ["init", "-q", "-b", "main", "--object-format=sha256"],
    );
    fs::write(sha256.join("f"), "one\n").unwrap();
    git_ok(&sha256, ["add", "f"]);
    git_ok(&sha256, ["commit", "-q", "-m", "one"]);
    git_ok(&sha256, ["branch", "other"]);
    fs::write(sha256.join("f"), "two\n").unwrap();
    git_ok(&sha256, ["commit", "-q", "-am", "two"]);
    copy_repo(&sha256, &dirs[1].join("sha256"));
    for (dir, args) in [
        ("there", &["checkout", "newmain"][..]),
        ("sha256", &["switch", "other"][..]),
        ("sha256", &["reset", "--hard", "main"][..]),
    ] {
        let by_git = git(&dirs[0].join(dir), args);
        let by_par = git_par(&dirs[1].join(dir), args);
        assert_eq!(
            (
                by_git.status.code(),
                by_git.stderr_str(),
                by_git.stdout_str()
            ),
            (
                by_par.status.code(),
                by_par.stderr_str(),
                by_par.stdout_str()
            ),
            "{dir}: {args:?}"
        );
        assert_eq!(
            git_str(&dirs[0].join(dir), ["ls-files", "-s"]),
            git_str(&dirs[1].join(dir), ["ls-files", "-s"])
        );
        compare_worktrees(&dirs[0].join(dir), &dirs[1].join(dir));
    }
}
