//! Where git runs hooks, as its setup decides (`setup_git_directory`'s exported `GIT_DIR`,
//! `GIT_WORK_TREE`, `GIT_PREFIX`, the top of the work tree; a clone's or a new work tree's own
//! directory): the [`gitpar::repo::hooks::Launch`] the engine runs `post-checkout` and
//! `reference-transaction` with. Finding and running the hook is the engine's
//! ([`gitpar::repo::hooks`]); what it says on the way is printed by `report.rs`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use gitpar::repo::hooks::{Env, Launch};

use crate::platform;
use crate::repo::Opened;

/// How `switch`/`checkout`/`restore` launch hooks: git has moved to the top of the work tree
/// and runs the hook there, with the environment `setup_git_directory` exported.
fn in_worktree(opened: &Opened) -> Launch {
    let top = opened
        .workdir
        .clone()
        .or_else(|| platform::current_dir().ok())
        .unwrap_or_default();
    let mut env = Vec::new();
    let exported = git_dir_env(opened, &top);
    let relative_git_dir = exported
        .as_ref()
        .is_none_or(|gd| Path::new(gd).is_relative());
    if let Some(gd) = exported {
        env.push(("GIT_DIR", Some(gd)));
    }
    if std::env::var_os("GIT_WORK_TREE").is_some() {
        env.push(("GIT_WORK_TREE", Some(OsString::from("."))));
    }
    env.push(("GIT_PREFIX", Some(git_prefix(&opened.prefix))));
    Launch {
        dir: None,
        git_cwd: top,
        relative_git_dir,
        env: hook_env(env),
    }
}

/// The variables a hook gets: git's (`env`), then what the platform needs to start hooks at
/// all ([`platform::hook_env`]: nothing on Unix, the `PATH` to Git for Windows' shell there).
fn hook_env(
    mut env: Vec<(&'static str, Option<OsString>)>,
) -> Vec<(&'static str, Option<OsString>)> {
    env.extend(platform::hook_env());
    env
}

/// `GIT_PREFIX` as git exports it for the current directory `prefix` (relative to the top of
/// the work tree): `/`-separated, with a trailing `/` unless empty.
fn git_prefix(prefix: &Path) -> OsString {
    let mut p = platform::git_path_bytes_lossy(prefix).into_owned();
    if !p.is_empty() && !p.ends_with(b"/") {
        p.push(b'/');
    }
    // The bytes came from a path, or were replaced by what can be shown of it.
    platform::os_str_from_bytes(&p)
        .map(ToOwned::to_owned)
        .unwrap_or_default()
}

/// The `GIT_DIR` git exports: none for a `.git` directory it found at the top of the work tree
/// (it keeps the default), the given one when `GIT_DIR` was set, else the git directory a
/// `.git` file named (absolute).
fn git_dir_env(opened: &Opened, top: &Path) -> Option<OsString> {
    if let Some(given) = std::env::var_os("GIT_DIR") {
        return Some(given);
    }
    let git_dir = opened.repo.git_dir();
    if git_dir == top.join(".git") {
        return None;
    }
    Some(git_dir.as_os_str().to_owned())
}

/// The launch of [`in_worktree`] for the repository this process works on, remembered by
/// [`remember`] so that every ref update runs `reference-transaction` as git would: from the
/// top of the work tree, with git's environment.
static WORKTREE_LAUNCH: std::sync::OnceLock<Launch> = std::sync::OnceLock::new();

/// Remember how hooks of `opened` are launched (see [`WORKTREE_LAUNCH`]); the first call wins.
pub(crate) fn remember(opened: &Opened) {
    let _ = WORKTREE_LAUNCH.set(in_worktree(opened));
}

/// Hooks as git would launch them for the repository this process works on (the top of the
/// work tree, or the current directory before [`remember`]), and notices printed as git prints
/// them.
pub(crate) fn env() -> Env<'static> {
    static FALLBACK: std::sync::OnceLock<Launch> = std::sync::OnceLock::new();
    let launch = WORKTREE_LAUNCH.get().unwrap_or_else(|| {
        FALLBACK.get_or_init(|| Launch {
            env: hook_env(Vec::new()),
            ..Launch::at(platform::current_dir().unwrap_or_default())
        })
    });
    Env {
        launch,
        sink: &crate::report::Printer,
    }
}

/// Have the engine run `post-index-change` after each index it writes (git's
/// `do_write_locked_index`), launched as git launches hooks for the repository this process
/// works on ([`env()`]); for the index of another work tree (a clone's, a new work tree's), from
/// the top of that work tree, where git's own checkout of it runs.
pub(crate) fn run_post_index_change() {
    gitpar::repo::hooks::on_index_change(Box::new(
        |repo, updated_workdir, updated_skipworktree| {
            let env = env();
            let elsewhere = repo
                .workdir()
                .and_then(|w| platform::canonicalize(w).ok())
                .filter(|w| platform::canonicalize(&env.launch.git_cwd).ok().as_ref() != Some(w))
                .map(|w| {
                    // As git's `git reset --hard` child of `worktree add` (and a clone's checkout)
                    // runs it: in that work tree, its git directory exported.
                    let git_dir = platform::canonicalize(repo.git_dir())
                        .unwrap_or_else(|_| repo.git_dir().to_owned());
                    Launch {
                        dir: Some(w.clone()),
                        git_cwd: w,
                        relative_git_dir: false,
                        env: hook_env(vec![("GIT_DIR", Some(git_dir.into_os_string()))]),
                    }
                });
            let launch = elsewhere.as_ref().unwrap_or(env.launch);
            gitpar::repo::hooks::post_index_change(
                repo,
                launch,
                updated_workdir,
                updated_skipworktree,
                env.sink,
            );
        },
    ));
}

/// `post-checkout <old> <new> <flag>` in the work tree of `opened`, as git launches it there.
pub(crate) fn post_checkout(
    opened: &Opened,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    branch: bool,
) -> i32 {
    let launch = in_worktree(opened);
    let env = env();
    gitpar::repo::hooks::post_checkout(&opened.repo, &launch, old, new, branch, env.sink)
}

/// `checkout -- paths` / `restore`: `post-checkout HEAD HEAD 0` after the paths were written
/// (also when some failed), folded into the exit code as git's `errs |= hook`.
pub(crate) fn after_paths(opened: &Opened, status: Result<(), u8>) -> Result<(), u8> {
    let head = opened.repo.head_commit().ok().map(|c| c.id);
    let rc = post_checkout(opened, head, head, false);
    combine(status, rc)
}

/// git's `err |= hook_status`, as an exit code.
pub(crate) fn combine(status: Result<(), u8>, rc: i32) -> Result<(), u8> {
    let code = i32::from(status.err().unwrap_or(0)) | rc;
    match u8::try_from(code & 0xff).unwrap_or(1) {
        0 if code != 0 => Err(1),
        0 => Ok(()),
        c => Err(c),
    }
}

/// `post-checkout <null> <commit> 1` after `clone` checked out `commit`: git runs it in the new
/// work tree, with `GIT_DIR` set to the new repository (absolute).
pub(crate) fn after_clone(repo: &gix::Repository, workdir: &Path, commit: gix::ObjectId) -> i32 {
    let workdir = platform::canonicalize(workdir).unwrap_or_else(|_| workdir.to_owned());
    let git_dir =
        platform::canonicalize(repo.git_dir()).unwrap_or_else(|_| repo.git_dir().to_owned());
    let launch = Launch {
        dir: Some(workdir.clone()),
        git_cwd: workdir,
        relative_git_dir: false,
        env: hook_env(vec![("GIT_DIR", Some(git_dir.into_os_string()))]),
    };
    gitpar::repo::hooks::post_checkout(repo, &launch, None, Some(commit), true, env().sink)
}

/// `post-checkout <null> <commit> 1` after `worktree add` checked out `commit` in `path`: git
/// runs it in the new work tree with `GIT_DIR` and `GIT_WORK_TREE` removed, so that the hook
/// finds the new work tree's repository itself. `repo` is the repository `worktree add` ran
/// in (whose hooks apply), `git_cwd` where git was.
pub(crate) fn after_worktree_add(
    repo: &gix::Repository,
    git_cwd: PathBuf,
    path: &Path,
    commit: gix::ObjectId,
) -> i32 {
    // git's own `GIT_PREFIX` (from its setup in the work tree it ran in) is inherited.
    let cwd = platform::current_dir().unwrap_or_default();
    let prefix = git_prefix(cwd.strip_prefix(&git_cwd).unwrap_or(Path::new("")));
    let launch = Launch {
        dir: Some(path.to_owned()),
        git_cwd,
        relative_git_dir: false,
        env: hook_env(vec![
            ("GIT_DIR", None),
            ("GIT_WORK_TREE", None),
            ("GIT_PREFIX", Some(prefix)),
        ]),
    };
    gitpar::repo::hooks::post_checkout(repo, &launch, None, Some(commit), true, env().sink)
}

/// The repository, work tree and index as git's setup finds them (`GIT_DIR`, `GIT_WORK_TREE`,
/// `GIT_INDEX_FILE`, `core.worktree`, `safe.directory`, ...).
pub(crate) fn open_repo(overrides: &[String]) -> Result<Opened, u8> {
    let opened = crate::repo::open(overrides)?;
    // The `reference-transaction` hook runs from wherever refs move (`reftx.rs`).
    remember(&opened);
    Ok(opened)
}
