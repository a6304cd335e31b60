//! How git-par ends a command the way git does: `fatal:` on standard error and git's exit code.

/// Exit code git uses for `fatal:` errors.
pub(crate) const FATAL: u8 = 128;

/// Print `fatal: <msg>` and return git's exit code for it.
pub(crate) fn fatal(msg: impl std::fmt::Display) -> u8 {
    eprintln!("fatal: {msg}");
    FATAL
}
