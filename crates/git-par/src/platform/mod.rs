//! What the binary does differently on Unix and on Windows, behind one interface: the rest of the
//! crate names no `std::os::unix`, no `libc` and no Win32 call, and has no `cfg` of its own, so
//! that every command reads the same on both and a port only ever touches this module.
//!
//! `unix.rs` is the behaviour git-par always had on Linux; `windows/` is Git for Windows'
//! behaviour where git has one (exit codes, `st_dev`, the identity, where git and its shell are),
//! and says so where it approximates it. The helpers of this file are portable already: paths
//! as git's bytes, through gix's conversions (UTF-8 on Windows, as Git for Windows keeps them).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::Path;

use bstr::BStr;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

/// The function the platform's interruption handler calls (`interrupt.rs`'s), set once by
/// [`catch_interrupts`]: the handler lives here, what it does above.
static ON_INTERRUPT: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Have the system's interruptions (SIGINT and SIGTERM; Ctrl-C and Ctrl-Break on Windows) call
/// `on_interrupt` instead of ending the process; the first caller's function is kept.
pub(crate) fn catch_interrupts(on_interrupt: fn()) {
    let _ = ON_INTERRUPT.set(on_interrupt);
    os::install_interrupt_handler();
}

/// What the system's handler calls: the function [`catch_interrupts`] was given. Only an atomic
/// read, safe in a signal handler.
fn interrupted() {
    if let Some(on_interrupt) = ON_INTERRUPT.get() {
        on_interrupt();
    }
}

/// The real path, without Windows' verbatim prefix: the engine's, one for both crates.
pub(crate) use gitpar::sys::canonicalize;

pub(crate) use os::{
    account, callers_dirs, command_in, current_dir, device_of, exec, exit_code, exit_now, hook_env,
    hostname, invoked_as, make_link, name_argv0, owned_by_current_user, path_lines, program_in,
    same_program, searchable, this_program, tune_allocator, user_email, LINK_NAME,
    PATH_LIST_SEPARATOR, PINS_REAL_GIT,
};

/// A path or argument that cannot be turned into the bytes git uses, or back: on Windows, text
/// that is not valid Unicode (Git for Windows keeps every path in UTF-8). Never made on Unix,
/// where a path is its bytes.
#[derive(Debug)]
pub(crate) struct NotUnicode(String);

impl NotUnicode {
    /// What can be shown of the text: invalid parts replaced by U+FFFD.
    pub(crate) fn lossy(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for NotUnicode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "'{}' is not valid Unicode, which git-par needs on this system",
            self.0
        )
    }
}

/// The path that git's bytes name (from its files, its variables or an argument): the bytes
/// themselves on Unix, UTF-8 on Windows.
pub(crate) fn path_from_bytes(bytes: &[u8]) -> Result<&Path, NotUnicode> {
    gix::path::from_byte_slice(bytes)
        .map_err(|_| NotUnicode(String::from_utf8_lossy(bytes).into_owned()))
}

/// [`path_from_bytes`] as an `OsStr`: for a value git hands around that is not a path.
pub(crate) fn os_str_from_bytes(bytes: &[u8]) -> Result<&OsStr, NotUnicode> {
    path_from_bytes(bytes).map(Path::as_os_str)
}

/// `path` as git writes it in its files and variables (`GIT_PREFIX`, `git rev-parse`'s output):
/// its bytes, with `/` between the components also on Windows.
pub(crate) fn git_path_bytes(path: &Path) -> Result<Cow<'_, BStr>, NotUnicode> {
    gix::path::into_bstr(path)
        .map(gix::path::to_unix_separators_on_windows)
        .map_err(|_| NotUnicode(path.to_string_lossy().into_owned()))
}

/// [`git_path_bytes`], or what can be shown of it: for values git would have no way to refuse
/// either (a variable set for a hook), where an error would help no one.
pub(crate) fn git_path_bytes_lossy(path: &Path) -> Cow<'_, BStr> {
    git_path_bytes(path).unwrap_or_else(|e| Cow::Owned(e.lossy().into()))
}
