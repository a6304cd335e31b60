//! The ground floor's system calls on Windows, the same functions as `unix.rs`.

use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Threading::{
    GetCurrentThread, GetThreadTimes, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
};

/// The CPU time (user and kernel) the calling thread has used, in nanoseconds
/// (`GetThreadTimes`, in 100 ns units).
pub fn thread_cpu_ns() -> u64 {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo handle of the current thread and four writable FILETIMEs.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return 0;
    }
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    (ticks(kernel) + ticks(user)) * 100
}

/// Windows keeps no per-thread time waiting for a CPU that a program can read.
pub fn thread_wait_ns() -> Option<u64> {
    None
}

/// Lower the calling thread's priority, as nice 10 does on Linux.
pub(crate) fn lower_thread_priority() {
    // SAFETY: the pseudo handle of the current thread; a failure leaves the priority as it was.
    unsafe {
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
    }
}

/// Stop `child`: Windows has no SIGTERM, so it is terminated, as Git for Windows' `kill` does.
pub(crate) fn terminate(child: &std::process::Child) {
    use std::os::windows::io::AsRawHandle;
    // SAFETY: the child's own process handle, open while `child` lives.
    unsafe {
        windows_sys::Win32::System::Threading::TerminateProcess(child.as_raw_handle(), 1);
    }
}

/// The system's name as Git for Windows' `uname` gives it (`compat/mingw.c`).
pub(crate) fn sysname() -> Vec<u8> {
    b"Windows".to_vec()
}

/// Windows has no signals: no process is killed by one.
pub fn killed_by(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// The shell Git for Windows runs commands and hooks with: its own `sh.exe` next to `git.exe`
/// (found as gix finds it), else `sh.exe` from `PATH`.
pub fn shell() -> std::process::Command {
    gix::path::env::shell_command()
}

/// The shell a script runs with: Git for Windows starts every script through its `sh.exe`,
/// which reads the `#!` line.
pub(crate) fn script_shell() -> std::process::Command {
    shell()
}

/// The absolute path of `path` with every link resolved, without the `\\?\` prefix std's
/// `canonicalize` gives it: git and `CreateProcess` refuse that prefix, and Git for Windows'
/// `real_path` never writes it.
pub fn canonicalize(path: impl AsRef<std::path::Path>) -> std::io::Result<std::path::PathBuf> {
    let resolved = path.as_ref().canonicalize()?;
    let Some(text) = resolved.to_str() else {
        return Ok(resolved);
    };
    if let Some(rest) = text.strip_prefix(r"\\?\UNC\") {
        return Ok(std::path::PathBuf::from(format!(r"\\{rest}")));
    }
    match text.strip_prefix(r"\\?\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => Ok(std::path::PathBuf::from(rest)),
        _ => Ok(resolved),
    }
}

/// `path` as git writes it, with `/` between components: Git for Windows' shell and git itself
/// read both separators, but a script sees the path as given.
pub(crate) fn slashed(path: &std::path::Path) -> std::path::PathBuf {
    std::path::PathBuf::from(path.to_string_lossy().replace('\\', "/"))
}

/// Returns true if and only if the hook at `path` is started as a program: only a `.exe`. Git
/// for Windows runs any other hook through its shell, which reads the `#!` line.
pub(crate) fn runs_directly(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("exe"))
}

/// Whether the hook at `path` may run: Git for Windows' `access` drops `X_OK`, so a hook that
/// exists runs (Windows has no executable bit).
pub(crate) fn may_execute(path: &std::path::Path) -> std::io::Result<()> {
    if path.is_file() {
        Ok(())
    } else {
        Err(std::io::ErrorKind::NotFound.into())
    }
}

/// Returns true if and only if starting a program failed because it is no Windows program (a
/// script): Git for Windows runs those through its shell, reading their `#!` line.
pub(crate) fn is_not_a_program(err: &std::io::Error) -> bool {
    // ERROR_BAD_EXE_FORMAT, ERROR_EXE_MACHINE_TYPE_MISMATCH
    matches!(err.raw_os_error(), Some(193 | 216))
}
