//! The Unix side of [`crate::platform`]: processes replaced by `exec`, signals, permission bits,
//! owners and devices from `stat`, the password database. What git-par always did on Linux.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// git's exit code for a child that ended with `status`: its own code, 128 + the signal that
/// killed it (as a shell reports it), 128 when neither is known.
pub(crate) fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(crate::exit::FATAL),
        (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(crate::exit::FATAL),
        (None, None) => crate::exit::FATAL,
    }
}

/// Replace this process by `cmd` (same standard streams, the environment it was given): a call
/// handed whole to git leaves no git-par behind. Returns only the error of a failed `exec`.
pub(crate) fn exec(cmd: &mut Command) -> std::io::Error {
    cmd.exec()
}

/// Start `cmd` under the program name `name` (`argv[0]`): git handed a call as `git` sees the
/// name it was called by.
pub(crate) fn name_argv0(cmd: &mut Command, name: &str) {
    cmd.arg0(name);
}

/// This program's own file, every link resolved: what a `git` on `PATH` must not be.
pub(crate) fn this_program() -> std::io::Result<PathBuf> {
    std::fs::canonicalize("/proc/self/exe")
        .or_else(|_| std::env::current_exe().and_then(std::fs::canonicalize))
}

/// Returns true if and only if `candidate` is this program (`me`, from [`this_program`]): it
/// resolves to the same file.
pub(crate) fn same_program(candidate: &Path, me: &Path) -> bool {
    std::fs::canonicalize(candidate).ok().as_deref() == Some(me)
}

/// Returns true if and only if `argv0` (how this process was started) names the program
/// `name`: its last component is `name`.
pub(crate) fn invoked_as(argv0: &OsStr, name: &str) -> bool {
    Path::new(argv0).file_name() == Some(OsStr::new(name))
}

/// The program `name` in `dir` as `execvp` would run it: `dir/name`, if someone may execute it.
pub(crate) fn program_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    is_executable(&path).then_some(path)
}

/// The command `name` in `dir` as git looks up its external commands (`git-NAME`): on Unix
/// the same as [`program_in`].
pub(crate) fn command_in(dir: &Path, name: &str) -> Option<PathBuf> {
    program_in(dir, name)
}

/// Returns true if and only if `path` is a file someone may execute.
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The name of the stand-in for git that `git par shim` makes.
pub(crate) const LINK_NAME: &str = "git";

/// Make `link` stand for the program `me`: a symbolic link, which follows git-par when it is
/// rebuilt or reinstalled in place.
pub(crate) fn make_link(me: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(me, link)
}

/// The lines that put `dir` first on `PATH`, for the shell to evaluate
/// (`eval "$(git par shim DIR)"`).
pub(crate) fn path_lines(dir: &Path) -> Vec<String> {
    vec![format!("export PATH=\"{}:$PATH\"", dir.display())]
}

/// What separates the entries of a list of paths in a variable (`GIT_CEILING_DIRECTORIES`).
pub(crate) const PATH_LIST_SEPARATOR: u8 = b':';

/// Whether git-par settles which git it runs when it starts (see the Windows side); on Unix the
/// `git` of `PATH` is found by `execvp` as git's own children find it.
pub(crate) const PINS_REAL_GIT: bool = false;

/// Variables hooks need beyond git's (see the Windows side): none on Unix, where a hook's `#!`
/// is the kernel's business.
pub(crate) fn hook_env() -> Vec<(&'static str, Option<OsString>)> {
    Vec::new()
}

/// The current directory, as the kernel names it (symbolic links resolved).
pub(crate) fn current_dir() -> std::io::Result<PathBuf> {
    std::env::current_dir()
}

/// The current directories of the processes that started this one, nearest first (its parent,
/// the parent's parent, ...), as the kernel names them: where the user was before a `git -C`
/// or a shell's `cd` that git-par cannot see. Empty where `/proc` does not say.
pub(crate) fn callers_dirs() -> Vec<PathBuf> {
    const MOST: usize = 64;
    let mut dirs = Vec::new();
    let mut pid = parent_of("self");
    while let Some(p) = pid.filter(|&p| p > 1 && dirs.len() < MOST) {
        match std::fs::read_link(format!("/proc/{p}/cwd")) {
            Ok(dir) => dirs.push(dir),
            Err(_) => break,
        }
        pid = parent_of(&p.to_string());
    }
    dirs
}

/// The parent of process `pid` (`self` for this one), from `/proc/<pid>/stat`: the field after
/// the command name, which is in parentheses and may hold any byte, so it is read after the last
/// `)`.
fn parent_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let end = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[end + 1..]).ok()?;
    rest.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// Returns true if and only if the directory `path` may be searched (`access(X_OK)`), as git's
/// `is_git_directory` asks of `objects` and `refs`.
pub(crate) fn searchable(path: &Path) -> bool {
    CString::new(path.as_os_str().as_bytes())
        // SAFETY: a valid NUL-terminated string; `access` only reads it.
        .is_ok_and(|c| unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0)
}

/// git's `is_path_owned_by_current_user` (root running through sudo counts as `SUDO_UID`).
pub(crate) fn owned_by_current_user(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    // SAFETY: `geteuid` cannot fail and has no preconditions.
    let mut euid = unsafe { libc::geteuid() };
    if euid == 0 {
        if let Some(uid) = std::env::var("SUDO_UID")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
        {
            euid = uid;
        }
    }
    meta.uid() == euid
}

/// The device `path` is on (`st_dev`): git's discovery stops where it changes.
pub(crate) fn device_of(path: &Path) -> std::io::Result<u64> {
    std::fs::metadata(path).map(|m| m.dev())
}

/// The login name and the GECOS field of the current user, from the password database.
pub(crate) fn account() -> (String, String) {
    // SAFETY: getpwuid returns a pointer to static storage or null; the strings are copied out
    // before any other call could overwrite them.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        if pw.is_null() {
            let login = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
            return (login, String::new());
        }
        let field = |p: *const libc::c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        (field((*pw).pw_name), field((*pw).pw_gecos))
    }
}

/// The e-mail address git takes before `user@host` on systems that have one: none on Unix.
pub(crate) fn user_email() -> Option<String> {
    None
}

/// This machine's host name (`gethostname`), or `localhost` when it has none.
pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Allocations of 1 MiB and more are mapped on their own and given back when freed, always:
/// glibc raises its threshold for that to the size of any mapped block freed (up to 32 MiB),
/// after which the big vectors of a large checkout (a million entries' plan, scan and index,
/// tens of MiB each) came from the heap, stayed resident once freed and were copied when they
/// grew, instead of being moved by `mremap`. A fixed threshold turns that adjustment off.
pub(crate) fn tune_allocator() {
    #[cfg(target_os = "linux")]
    // SAFETY: mallopt only sets a parameter of glibc's allocator, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    super::interrupted();
}

/// Have SIGINT and SIGTERM call [`super::interrupted`] instead of ending the process.
pub(super) fn install_interrupt_handler() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: `on_signal` only touches an atomic and calls the async-signal-safe `_exit`.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// End the process at once with `code`, running no destructor: safe in a signal handler.
pub(crate) fn exit_now(code: u8) -> ! {
    // SAFETY: `_exit` is async-signal-safe and has no preconditions.
    unsafe { libc::_exit(i32::from(code)) }
}
