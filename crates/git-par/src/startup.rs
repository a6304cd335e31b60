//! What git-par does before and around a command: the command line it parses (run as `git`,
//! only what it owns; `-p` handed to git), the allocator's setting, the time zone looked up
//! early, and the configuration given to the command.

use std::ffi::OsString;

use crate::cli::{Command, WorktreeCommand};
use crate::exit::fatal;
use crate::{config_env, git, identity, patch, transparent};

/// The command line for clap, program name first: run as `git`, what the routing leaves to
/// git-par ([`transparent::route`]). `Err` with the exit code when git-par runs no command of
/// its own: git ran it (`-p/--patch`, or a command git-par does not own) or could not start.
pub(crate) fn command_line() -> Result<Vec<OsString>, u8> {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // Run as `git` (a link first on PATH): what git-par does not own goes to git by exec.
    let transparent = transparent::invoked_as_git(&argv0);
    if transparent {
        args = transparent::route(args)?;
    } else if crate::platform::PINS_REAL_GIT {
        transparent::pin_real_git();
    }
    git::set_own_args(args.clone());
    crate::platform::tune_allocator();
    // `-p/--patch` is git's interactive loop: hand the call to git unchanged (docs/differences.md).
    if let Some(git_args) = patch::delegated(&args) {
        let err = patch::exec_git(&git_args);
        return Err(fatal(format!("cannot run git: {err}")));
    }
    let program = if transparent { "git-par".into() } else { argv0 };
    let args = patch::end_of_options(args);
    Ok(std::iter::once(program).chain(args).collect())
}

/// For the commands that write reflogs, look up the local time zone on a thread of its own.
pub(crate) fn warm_time_zone(command: &Command) {
    if matches!(
        command,
        Command::Clone(_)
            | Command::Worktree(WorktreeCommand::Add(_))
            | Command::Switch(_)
            | Command::Checkout(_)
            | Command::Reset(_)
            | Command::Merge(_)
            | Command::Pull(_)
    ) {
        // These write reflogs, whose times name the local offset: the first look at the system
        // time zone lists the whole zoneinfo database (jiff, under gix-date: a millisecond),
        // which is done here beside the operation instead of on its sequential end. The zone
        // is cached for the process.
        let _ = std::thread::Builder::new()
            .name("git-par tz".into())
            .spawn(|| {
                let _ = gix::date::Time::now_local_or_utc();
            });
    }
}

/// The configuration a command runs with beyond the repository's: git's default identity first,
/// so that any configured one (or `-c`) takes precedence, then `GIT_CONFIG_PARAMETERS`, then
/// `-c`, which the processes git-par starts (hooks) see as git's children do.
pub(crate) fn config_overrides(config: &[String]) -> Vec<String> {
    let mut overrides = identity::fallback_overrides();
    overrides.extend(config_env::from_git_config_parameters());
    overrides.extend(config.iter().cloned());
    config_env::export(config);
    overrides
}
