//! git's hooks (`hook.c`, `run-command.c`) as the checkout family runs them: `post-checkout`
//! after `switch`/`checkout` (flag 1), `checkout -- paths` and `restore` (flag 0), `clone` and
//! `worktree add` (old id null, flag 1), and `reference-transaction` around every ref update
//! (`reftx`).
//!
//! The hook is `hooks/<name>` of the common git directory, or of `core.hooksPath`; it runs only
//! when it is executable (git's `advice.ignoredHook` hint otherwise), with standard input from
//! `/dev/null` (or the transaction's lines), its standard output sent to standard error, from
//! the directory git would run it in and with git's environment ([`Launch`], which the caller
//! builds from its repository setup). A script without `#!` runs under `/bin/sh`, as git
//! retries it. Its exit status is returned: the commands fold it into theirs as git does.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::repo::notice::{Notice, Sink};

/// How hooks are started: where, and which variables change in their environment. The binary
/// builds it from git's setup (`GIT_DIR`, `GIT_PREFIX`, ...); [`Launch::at`] is the plain one.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The directory the hook runs in; `None`: [`Launch::git_cwd`].
    pub dir: Option<PathBuf>,
    /// Where git is when it looks the hook up (relative `core.hooksPath` and the default
    /// `.git/hooks` are relative to it).
    pub git_cwd: PathBuf,
    /// git names the git directory relatively (`.git` found at the top, or a relative
    /// `GIT_DIR`): the default hook path is then relative too (the hook's `$0`).
    pub relative_git_dir: bool,
    /// Variables set (`Some`) or removed (`None`) for the hook.
    pub env: Vec<(&'static str, Option<OsString>)>,
}

impl Launch {
    /// Hooks run in `top` with git-par's own environment: for library callers and for
    /// repositories whose setup exported nothing.
    pub fn at(top: PathBuf) -> Launch {
        Launch {
            dir: None,
            git_cwd: top,
            relative_git_dir: false,
            env: Vec::new(),
        }
    }
}

/// Where a command's hooks run and where what git would say along the way goes: what every
/// operation that moves refs or runs hooks needs from its caller.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// How hooks are started.
    pub launch: &'a Launch,
    /// Where notices go ([`crate::repo::notice`]).
    pub sink: &'a dyn Sink,
}

/// The path of hook `name` as git's `find_hook` names it (relative to `launch.git_cwd` or
/// absolute), if it is there and executable.
fn find(repo: &gix::Repository, name: &str, launch: &Launch, sink: &dyn Sink) -> Option<PathBuf> {
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
        crate::sys::canonicalize(common)
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
    let denied = match crate::sys::may_execute(&path) {
        Ok(()) => return Some(named),
        Err(err) => err.kind() == std::io::ErrorKind::PermissionDenied,
    };
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
        sink.notice(Notice::HookIgnored { path: named });
    }
    None
}

/// `path` as git names it: relative to where git is when it is below it.
fn shown<'a>(path: &'a Path, git_cwd: &Path) -> &'a Path {
    path.strip_prefix(git_cwd).unwrap_or(path)
}

/// Run hook `name` with `args`; its exit status (0 when there is no hook), as git's
/// `run_hooks_opt` returns it: the exit code, 128 + the signal for a killed hook, 1 when it
/// cannot be started (with a [`Notice`]).
pub fn run(
    repo: &gix::Repository,
    name: &str,
    args: &[String],
    launch: &Launch,
    sink: &dyn Sink,
) -> i32 {
    run_with_input(repo, name, args, launch, None, sink)
}

/// [`run`], with `input` on the hook's standard input instead of `/dev/null` (git's
/// `proc.in = -1`); a hook that does not read it all is no error (git ignores `EPIPE`).
pub(crate) fn run_with_input(
    repo: &gix::Repository,
    name: &str,
    args: &[String],
    launch: &Launch,
    input: Option<&[u8]>,
    sink: &dyn Sink,
) -> i32 {
    let Some(path) = find(repo, name, launch, sink) else {
        return 0;
    };
    // What the caller printed so far comes before the hook's output.
    let _ = std::io::stdout().flush();
    let spawn = |mut cmd: Command| {
        cmd.args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::from(std::io::stderr()));
        cmd.current_dir(launch.dir.as_deref().unwrap_or(&launch.git_cwd));
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
    let with_shell = || {
        let mut shell = crate::sys::script_shell();
        // git names the hook with `/` on every system; Git for Windows' shell reads it so.
        shell.arg(crate::sys::slashed(&path));
        spawn(shell)
    };
    let status = if crate::sys::runs_directly(&path) {
        match spawn(Command::new(&path)) {
            // git's `execve` retries a script without `#!` with the shell.
            Err(e) if crate::sys::is_not_a_program(&e) => with_shell(),
            other => other,
        }
    } else {
        with_shell()
    };
    match status {
        Ok(s) => match (s.code(), crate::sys::killed_by(&s)) {
            (Some(code), _) => code,
            (None, Some(signal)) => {
                sink.notice(Notice::HookDied { path, signal });
                128 + signal
            }
            (None, None) => 1,
        },
        Err(e) => {
            let error = strerror(&e);
            sink.notice(Notice::HookCannotRun { path, error });
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

/// What runs git's `post-index-change` hook for the engine: set once by the program (which
/// knows where and with which environment git would launch it), called after every index the
/// engine writes, as git's `do_write_locked_index` runs the hook after it wrote one.
type IndexHook = dyn Fn(&gix::Repository, bool, bool) + Send + Sync;

static INDEX_HOOK: std::sync::OnceLock<Box<IndexHook>> = std::sync::OnceLock::new();

/// Have `hook` run `post-index-change` after each index the engine writes, with the
/// repository, whether the work tree was updated with it and whether skip-worktree bits
/// changed (git's `updated_workdir` and `updated_skipworktree`); the first call wins. Without
/// it, library callers run no such hook.
pub fn on_index_change(hook: Box<IndexHook>) {
    let _ = INDEX_HOOK.set(hook);
}

/// An index of `repo` was written (see [`on_index_change`]). Not for the transient index an
/// update writes before the final one: git writes only the final one.
pub(crate) fn index_changed(
    repo: &gix::Repository,
    updated_workdir: bool,
    updated_skipworktree: bool,
) {
    if let Some(hook) = INDEX_HOOK.get() {
        hook(repo, updated_workdir, updated_skipworktree);
    }
}

/// `post-index-change <updated_workdir> <updated_skipworktree>` ("1" or "0" each) after an
/// index was written; git ignores its exit status.
pub fn post_index_change(
    repo: &gix::Repository,
    launch: &Launch,
    updated_workdir: bool,
    updated_skipworktree: bool,
    sink: &dyn Sink,
) {
    let flag = |b: bool| if b { "1" } else { "0" }.to_owned();
    let args = [flag(updated_workdir), flag(updated_skipworktree)];
    let _ = run(repo, "post-index-change", &args, launch, sink);
}

/// `post-checkout <old> <new> <flag>`: after a branch switch (`branch`: flag 1) or a path
/// checkout (flag 0), with the old and new `HEAD` commits (null when there is none). Returns the
/// hook's status, which the commands fold into their exit code as git's `errs |= hook`.
pub fn post_checkout(
    repo: &gix::Repository,
    launch: &Launch,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    branch: bool,
    sink: &dyn Sink,
) -> i32 {
    let args = [
        hex(repo, old),
        hex(repo, new),
        if branch { "1" } else { "0" }.to_owned(),
    ];
    run(repo, "post-checkout", &args, launch, sink)
}

/// Run the `reference-transaction` hook with `state` (`prepared`, `committed`, `aborted`) and
/// the updates (`<old> SP <new> SP <ref> LF` lines) on its standard input, as git's
/// `run_transaction_hook`; its exit status (0 when there is no hook).
pub(crate) fn reference_transaction(
    repo: &gix::Repository,
    launch: &Launch,
    state: &str,
    updates: &[u8],
    sink: &dyn Sink,
) -> i32 {
    let args = [state.to_owned()];
    run_with_input(
        repo,
        "reference-transaction",
        &args,
        launch,
        Some(updates),
        sink,
    )
}
