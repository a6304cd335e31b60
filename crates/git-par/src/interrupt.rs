//! Ctrl-C and `kill`: the first SIGINT/SIGTERM (Ctrl-C or Ctrl-Break on Windows) asks the engine
//! to stop at the next entry, so the index lock is removed and the index stays as it was; a
//! second one exits at once, as fd and ripgrep do. The exit code is 130, the shell's code for
//! SIGINT.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the signal handler; the engine polls it between entries.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit code after an interruption (128 + SIGINT).
pub const EXIT_CODE: u8 = 130;

/// What the platform's handler ([`crate::platform::catch_interrupts`]) does on an interruption:
/// flag the first, end the process on the second. Safe in a signal handler: an atomic, then an
/// exit that runs nothing else.
pub(crate) fn interrupted() {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // Second signal: the user means it. Destructors do not run.
        crate::platform::exit_now(EXIT_CODE);
    }
}

/// Install the handlers for SIGINT and SIGTERM (the console's Ctrl-C and Ctrl-Break on Windows).
pub fn install() {
    crate::platform::catch_interrupts(interrupted);
}
