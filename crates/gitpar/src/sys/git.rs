//! The real git: every git the engine and the binary start, never git-par standing in for it.

/// The environment variable naming the real git, for git-par run as `git` (its transparent
/// mode: a link named `git` first on `PATH`), where `git` on `PATH` is git-par itself.
pub const REAL_GIT: &str = "GIT_PAR_REAL_GIT";

/// A command that runs the real git: `$GIT_PAR_REAL_GIT` when set (git-par run as `git` sets
/// it for itself and its children), else `git` from `PATH`. Every git the engine and the binary
/// start goes through here, so that git-par standing in for git never starts itself.
pub fn git_command() -> std::process::Command {
    match std::env::var_os(REAL_GIT).filter(|g| !g.is_empty()) {
        Some(git) => std::process::Command::new(git),
        None => std::process::Command::new("git"),
    }
}
