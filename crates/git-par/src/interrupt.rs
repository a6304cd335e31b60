//! Ctrl-C and `kill`: the first SIGINT/SIGTERM asks the engine to stop at the next entry, so
//! the index lock is removed and the index stays as it was; a second one exits at once, as fd
//! and ripgrep do. The exit code is 130, the shell's code for SIGINT.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the signal handler; the engine polls it between entries.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit code after an interruption (128 + SIGINT).
pub const EXIT_CODE: u8 = 130;

extern "C" fn on_signal(_: libc::c_int) {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // Second signal: the user means it. `_exit` is async-signal-safe; destructors do not run.
        unsafe { libc::_exit(i32::from(EXIT_CODE)) };
    }
}

/// Install the handlers for SIGINT and SIGTERM.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: `on_signal` only touches an atomic and calls the async-signal-safe `_exit`.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
