//! Running one process of a scenario: captured output, a clean environment, and a watchdog so
//! that a command that hangs (waiting for input, a lock, a loop) fails its scenario instead of
//! stopping the run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::scenario::ENV;

/// How long one process may take before it is killed.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What a finished process left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code; `None` when a signal ended it (the watchdog's, or a crash).
    pub code: Option<i32>,
    /// Everything it printed on standard output.
    pub stdout: Vec<u8>,
    /// Everything it printed on standard error.
    pub stderr: Vec<u8>,
}

impl Output {
    /// Whether it exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Standard output as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The first line of standard error (lossy), empty when there is none.
    pub fn first_error_line(&self) -> String {
        String::from_utf8_lossy(&self.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned()
    }
}

/// A command with the scenario's environment ([`ENV`], `HOME` set to `home`, `PATH` as given)
/// and nothing else, run in `dir`.
pub fn command(program: &Path, dir: &Path, home: &Path, path_var: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .envs(ENV.iter().copied())
        .env("HOME", home)
        .env("PATH", path_var)
        .current_dir(dir)
        .stdin(Stdio::null());
    cmd
}

/// Runs `cmd` to its end (killing it after two minutes) and returns what it left.
pub fn run(cmd: &mut Command) -> Result<Output, String> {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let pid = child.id() as libc::pid_t;
    let (done, watched) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if watched.recv_timeout(TIMEOUT) == Err(mpsc::RecvTimeoutError::Timeout) {
            // SAFETY: kill(2) on the pid of our own child, which has not been waited for (the
            // main thread is still in wait_with_output), so the pid is not reused.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    });
    let out = child.wait_with_output();
    let _ = done.send(());
    let _ = watchdog.join();
    let out = out.map_err(|e| format!("waiting for {:?}: {e}", cmd.get_program()))?;
    Ok(Output {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: out.stderr,
    })
}
