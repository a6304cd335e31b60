//! The ground floor's system calls on Unix; `windows.rs` has the same functions. Nothing else in
//! the engine's `sys/` names the platform.

/// The CPU time the calling thread has used, in nanoseconds. Through libc rather than rustix's
/// own vDSO lookup, which crashes under valgrind (callgrind is how the writers' instruction
/// counts are measured).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID always exists on Linux.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// The time the calling thread has waited for a CPU (runnable, on a runqueue), in nanoseconds:
/// `/proc/thread-self/schedstat`'s second field; `None` where the kernel keeps no scheduler
/// statistics.
pub fn thread_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_ascii_whitespace().map(str::parse::<u64>);
    fields.next()?.ok()?;
    fields.next()?.ok()
}

/// Lower the calling thread's priority (nice 10). On Linux `setpriority(PRIO_PROCESS, 0, ..)`
/// changes the calling thread alone.
pub(crate) fn lower_thread_priority() {
    // SAFETY: setpriority only reads its arguments; a failure leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// Ask `child` to stop as git's `subprocess_stop` does (SIGTERM); the caller waits for it.
pub(crate) fn terminate(child: &std::process::Child) {
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::TERM,
    );
}

/// The system's name as git's `get_ident_string` puts it in the untracked cache (`uname -s`).
pub(crate) fn sysname() -> Vec<u8> {
    rustix::system::uname().sysname().to_bytes().to_vec()
}

/// The signal that killed the process of `status`, if one did (git reports 128 plus it).
pub fn killed_by(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// The shell git runs commands and scripts without `#!` with (`sh` from `PATH`).
pub fn shell() -> std::process::Command {
    std::process::Command::new("sh")
}

/// The shell git retries a script without `#!` with (`/bin/sh`, git's `SHELL_PATH`).
pub(crate) fn script_shell() -> std::process::Command {
    std::process::Command::new("/bin/sh")
}

/// The absolute path of `path` with every link resolved, as git's `real_path`.
pub fn canonicalize(path: impl AsRef<std::path::Path>) -> std::io::Result<std::path::PathBuf> {
    path.as_ref().canonicalize()
}

/// `path` as git writes it, with `/` between components (unchanged on Unix).
pub(crate) fn slashed(path: &std::path::Path) -> std::path::PathBuf {
    path.to_owned()
}

/// Returns true if and only if the hook at `path` is started as a program, git retrying it with
/// the shell only when the system refuses it (a script without `#!`).
pub(crate) fn runs_directly(_path: &std::path::Path) -> bool {
    true
}

/// Whether the file at `path` (outside any work tree: a hook) may be executed, as git's
/// `access(path, X_OK)` asks; the error says why not (`PermissionDenied`: not executable).
pub(crate) fn may_execute(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: `c` is a valid NUL-terminated path; access(2) only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Returns true if and only if starting a program failed because it is not a binary the
/// system runs (a script without `#!`): git then runs it with the shell.
pub(crate) fn is_not_a_program(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(libc::ENOEXEC)
}
