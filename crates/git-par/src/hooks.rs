//! git's hooks (`hook.c`, `run-command.c`) as the checkout family runs them: `post-checkout`
//! after `switch`/`checkout` (flag 1), `checkout -- paths` and `restore` (flag 0), `clone` and
//! `worktree add` (old id null, flag 1).
//!
//! The hook is `hooks/<name>` of the common git directory, or of `core.hooksPath`; it runs only
//! when it is executable (git's `advice.ignoredHook` hint otherwise), with standard input from
//! `/dev/null`, its standard output sent to standard error, from the directory git would run it
//! in and with git's environment. A script without `#!` runs under `/bin/sh`, as git retries it.
//! Its exit status is returned: the commands fold it into theirs as git does.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::repo::Opened;

/// How a hook is started: where, and which variables change in its environment.
pub(crate) struct Launch<'a> {
    /// The directory the hook runs in; `None`: git-par's (git's) current directory.
    pub dir: Option<&'a Path>,
    /// Where git is when it looks the hook up (relative `core.hooksPath` and the default
    /// `.git/hooks` are relative to it).
    pub git_cwd: PathBuf,
    /// git names the git directory relatively (`.git` found at the top, or a relative
    /// `GIT_DIR`): the default hook path is then relative too (the hook's `$0`).
    pub relative_git_dir: bool,
    /// Variables set (`Some`) or removed (`None`) for the hook.
    pub env: Vec<(&'static str, Option<OsString>)>,
}

/// The path of hook `name` as git's `find_hook` names it (relative to `launch.git_cwd` or
/// absolute), if it is there and executable.
fn find(repo: &gix::Repository, name: &str, launch: &Launch<'_>) -> Option<PathBuf> {
    let git_cwd = launch.git_cwd.as_path();
    let configured = repo
        .config_snapshot()
        .trusted_path("core.hooksPath")
        .ok()
        .flatten();
    let relative = match &configured {
        Some(dir) => dir.is_relative(),
        None => launch.relative_git_dir && repo.common_dir() == repo.git_dir(),
    };
    let dir = configured.unwrap_or_else(|| {
        let common = repo.common_dir();
        std::fs::canonicalize(common)
            .unwrap_or_else(|_| common.to_owned())
            .join("hooks")
    });
    let path = git_cwd.join(dir).join(name);
    // git makes the path absolute when the hook runs elsewhere.
    let named = if relative && launch.dir.is_none() {
        shown(&path, git_cwd).to_owned()
    } else {
        path.clone()
    };
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid NUL-terminated path; access(2) only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
        return Some(named);
    }
    let denied = std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES);
    // git gives the hint once per hook and process (`advise_given`), however often it looks.
    static ADVISED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut advised = ADVISED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if advised.iter().any(|n| n == name) {
        return None;
    }
    advised.push(name.to_owned());
    let advise = repo
        .config_snapshot()
        .boolean("advice.ignoredHook")
        .unwrap_or(true);
    if denied && advise {
        eprintln!(
            "hint: The '{}' hook was ignored because it's not set as executable.\n\
             hint: You can disable this warning with `git config advice.ignoredHook false`.",
            named.display()
        );
    }
    None
}

/// `path` as git names it: relative to where git is when it is below it.
fn shown<'a>(path: &'a Path, git_cwd: &Path) -> &'a Path {
    path.strip_prefix(git_cwd).unwrap_or(path)
}

/// Run hook `name` with `args`; its exit status (0 when there is no hook), as git's
/// `run_hooks_opt` returns it: the exit code, 128 + the signal for a killed hook, 1 when it
/// cannot be started (with git's message).
pub(crate) fn run(repo: &gix::Repository, name: &str, args: &[String], launch: &Launch<'_>) -> i32 {
    run_with_input(repo, name, args, launch, None)
}

/// [`run`], with `input` on the hook's standard input instead of `/dev/null` (git's
/// `proc.in = -1`); a hook that does not read it all is no error (git ignores `EPIPE`).
fn run_with_input(
    repo: &gix::Repository,
    name: &str,
    args: &[String],
    launch: &Launch<'_>,
    input: Option<&[u8]>,
) -> i32 {
    let Some(path) = find(repo, name, launch) else {
        return 0;
    };
    // What git printed so far comes before the hook's output.
    let _ = std::io::stdout().flush();
    let spawn = |program: &Path, script: Option<&Path>| {
        let mut cmd = Command::new(program);
        if let Some(script) = script {
            cmd.arg(script);
        }
        cmd.args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::from(std::io::stderr()));
        cmd.current_dir(launch.dir.unwrap_or(&launch.git_cwd));
        for (key, value) in &launch.env {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        let mut child = cmd.spawn()?;
        if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
            // EPIPE (the hook did not read it all) is ignored, as git ignores it.
            let _ = stdin.write_all(input);
        }
        child.wait()
    };
    let status = match spawn(&path, None) {
        // git's `execve` retries a script without `#!` with the shell.
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
            spawn(Path::new("/bin/sh"), Some(&path))
        }
        other => other,
    };
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => code,
            (None, Some(sig)) => {
                eprintln!("error: {} died of signal {sig}", path.display());
                128 + sig
            }
            (None, None) => 1,
        },
        Err(e) => {
            eprintln!("error: cannot run {}: {}", path.display(), strerror(&e));
            1
        }
    }
}

/// The C library's text for an I/O error, without Rust's "(os error N)".
fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// The 40 (or 64) hex digits of `id`, or git's null id.
fn hex(repo: &gix::Repository, id: Option<gix::ObjectId>) -> String {
    id.unwrap_or_else(|| repo.object_hash().null()).to_string()
}

/// How `switch`/`checkout`/`restore` launch hooks: git has moved to the top of the work tree
/// and runs the hook there, with the environment `setup_git_directory` exported.
fn in_worktree(opened: &Opened) -> Launch<'_> {
    let top = opened
        .workdir
        .clone()
        .or_else(|| std::env::current_dir().ok())
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
    let prefix = opened.prefix.as_os_str().as_bytes();
    let mut p = prefix.to_vec();
    if !p.is_empty() && !p.ends_with(b"/") {
        p.push(b'/');
    }
    env.push((
        "GIT_PREFIX",
        Some(std::ffi::OsStr::from_bytes(&p).to_owned()),
    ));
    Launch {
        dir: None,
        git_cwd: top,
        relative_git_dir,
        env,
    }
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
/// [`remember`] so that the ref-moving code, which has only a `gix::Repository`, runs
/// `reference-transaction` as git would: from the top of the work tree, with git's environment.
static WORKTREE_LAUNCH: std::sync::OnceLock<Launch<'static>> = std::sync::OnceLock::new();

/// Remember how hooks of `opened` are launched (see [`WORKTREE_LAUNCH`]); the first call wins.
pub(crate) fn remember(opened: &Opened) {
    let _ = WORKTREE_LAUNCH.set(in_worktree(opened).into_owned());
}

impl Launch<'_> {
    /// The same launch, owning what it borrowed (only the directory, which [`in_worktree`]
    /// never sets).
    fn into_owned(self) -> Launch<'static> {
        Launch {
            dir: None,
            git_cwd: self.dir.map_or(self.git_cwd, Path::to_owned),
            relative_git_dir: self.relative_git_dir,
            env: self.env,
        }
    }
}

/// Run the `reference-transaction` hook with `state` (`prepared`, `committed`, `aborted`) and
/// the updates (`<old> SP <new> SP <ref> LF` lines) on its standard input, as git's
/// `run_transaction_hook`; its exit status (0 when there is no hook).
pub(crate) fn reference_transaction(repo: &gix::Repository, state: &str, updates: &[u8]) -> i32 {
    let fallback;
    let launch = match WORKTREE_LAUNCH.get() {
        Some(l) => l,
        None => {
            let top = repo
                .workdir()
                .map(Path::to_owned)
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_default();
            fallback = Launch {
                dir: None,
                git_cwd: top,
                relative_git_dir: false,
                env: Vec::new(),
            };
            &fallback
        }
    };
    let args = [state.to_owned()];
    run_with_input(repo, "reference-transaction", &args, launch, Some(updates))
}

/// `post-checkout` after a branch switch (`flag` 1) or a path checkout (`flag` 0), with the
/// old and new `HEAD` commits (null when there is none). Returns the hook's status.
pub(crate) fn post_checkout(
    opened: &Opened,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    branch: bool,
) -> i32 {
    let repo = &opened.repo;
    let args = [
        hex(repo, old),
        hex(repo, new),
        if branch { "1" } else { "0" }.to_owned(),
    ];
    run(repo, "post-checkout", &args, &in_worktree(opened))
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
    let workdir = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_owned());
    let git_dir =
        std::fs::canonicalize(repo.git_dir()).unwrap_or_else(|_| repo.git_dir().to_owned());
    let launch = Launch {
        dir: Some(&workdir),
        git_cwd: workdir.clone(),
        relative_git_dir: false,
        env: vec![("GIT_DIR", Some(git_dir.into_os_string()))],
    };
    let args = [hex(repo, None), hex(repo, Some(commit)), "1".to_owned()];
    run(repo, "post-checkout", &args, &launch)
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
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut prefix = cwd
        .strip_prefix(&git_cwd)
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default();
    if !prefix.is_empty() {
        prefix.push(b'/');
    }
    let prefix = std::ffi::OsStr::from_bytes(&prefix).to_owned();
    let launch = Launch {
        dir: Some(path),
        git_cwd,
        relative_git_dir: false,
        env: vec![
            ("GIT_DIR", None),
            ("GIT_WORK_TREE", None),
            ("GIT_PREFIX", Some(prefix)),
        ],
    };
    let args = [hex(repo, None), hex(repo, Some(commit)), "1".to_owned()];
    run(repo, "post-checkout", &args, &launch)
}
