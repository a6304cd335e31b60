//! `filter.<driver>.smudge` and `.clean`: one process per file, as git's
//! `apply_single_file_filter` runs them: `%f` replaced by the shell-quoted path, through the
//! shell when the command needs one, at the top of the work tree; the content goes to its
//! standard input while its standard output is read, and its exit status decides.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdout, Stdio};

use bstr::{BStr, BString, ByteSlice};

/// Input up to this size is written before the output is read: a pipe holds at least one page
/// whatever the system's settings, so the write cannot block on a filter that answers first.
/// Larger input is written by a helper thread while the output is read, as git's async does.
const INLINE_INPUT: usize = 4096;

/// `cmd` with every `%f` replaced by the shell-quoted `path` and `%%` by `%`, as git's
/// `filter_buffer_or_fd` expands it.
pub(crate) fn expand(cmd: &BStr, path: &BStr) -> BString {
    let mut out = BString::default();
    let mut rest: &[u8] = cmd;
    while let Some(pos) = rest.find_byte(b'%') {
        out.extend_from_slice(&rest[..pos]);
        rest = &rest[pos + 1..];
        match rest.first() {
            Some(b'%') => {
                out.push(b'%');
                rest = &rest[1..];
            }
            Some(b'f') => {
                sq_quote(&mut out, path);
                rest = &rest[1..];
            }
            _ => out.push(b'%'),
        }
    }
    out.extend_from_slice(rest);
    out
}

/// git's `sq_quote_buf`: `'...'`, with `'` and `!` written as `'\''` and `'\!'`.
fn sq_quote(out: &mut BString, s: &BStr) {
    out.push(b'\'');
    for &c in s.iter() {
        if c == b'\'' || c == b'!' {
            out.extend_from_slice(b"'\\");
            out.push(c);
            out.push(b'\'');
        } else {
            out.push(c);
        }
    }
    out.push(b'\'');
}

/// A running one-shot filter: its output is read through this, and the end of the output
/// checks how the process and the feeding of its input went.
pub(crate) struct OneShot {
    child: Child,
    stdout: Option<ChildStdout>,
    feeder: Option<std::thread::JoinHandle<io::Result<()>>>,
    /// The result of writing the input when it was written inline.
    fed: Option<io::Result<()>>,
    /// The command as configured (git names it so in its messages).
    command: BString,
    /// git's error lines for what went wrong, filled once the output ended or failed.
    pub(crate) messages: Vec<String>,
}

/// git's message when a filter's process cannot be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot fork to run external filter '{0}'")]
pub(crate) struct CannotFork(BString);

/// Start `template` (expanded for `path`) in `cwd` with `context`, feeding it `input`. The error
/// is git's message when the process cannot be started.
pub(crate) fn spawn(
    template: &BStr,
    path: &BStr,
    context: &gix::command::Context,
    input: &[u8],
) -> Result<OneShot, CannotFork> {
    let cannot = || CannotFork(template.to_owned());
    let expanded = expand(template, path);
    let program = gix::path::from_bstr(expanded.as_bstr())
        .map_err(|_| cannot())?
        .into_owned();
    let mut cmd: std::process::Command = gix::command::prepare(program)
        .command_may_be_shell_script()
        .with_context(context.clone())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .try_into()
        .map_err(|_| cannot())?;
    if let Some(dir) = &context.worktree_dir {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|_| cannot())?;
    let mut stdin = child.stdin.take().expect("spawned with a piped stdin");
    let (feeder, fed) = if input.len() <= INLINE_INPUT {
        (None, Some(stdin.write_all(input)))
    } else {
        let input = input.to_vec();
        let feeder = std::thread::Builder::new()
            .name("git-par filter input".into())
            .spawn(move || stdin.write_all(&input))
            .map_err(|_| cannot())?;
        (Some(feeder), None)
    };
    Ok(OneShot {
        stdout: child.stdout.take(),
        child,
        feeder,
        fed,
        command: template.to_owned(),
        messages: Vec::new(),
    })
}

impl OneShot {
    /// The output ended: check the input was fed and the process exited with 0, recording
    /// git's messages otherwise.
    fn finish(&mut self, read_failed: bool) -> bool {
        let cmd = &self.command;
        self.stdout = None;
        let fed = match (self.feeder.take(), self.fed.take()) {
            (Some(thread), _) => thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("panicked"))),
            (None, Some(fed)) => fed,
            (None, None) => Ok(()),
        };
        // A filter that does not read all of its input is fine (git ignores EPIPE).
        let feed_failed = fed.is_err_and(|e| e.kind() != io::ErrorKind::BrokenPipe);
        let mut ok = !read_failed;
        if feed_failed {
            self.messages
                .push(format!("cannot feed the input to external filter '{cmd}'"));
            ok = false;
        }
        let status = self.child.wait();
        let code = match &status {
            Ok(s) if s.success() => 0,
            Ok(s) => exit_code(s),
            Err(_) => -1,
        };
        if code != 0 {
            self.messages
                .push(format!("external filter '{cmd}' failed {code}"));
            ok = false;
        }
        if read_failed {
            self.messages
                .push(format!("read from external filter '{cmd}' failed"));
        }
        if !ok {
            self.messages
                .push(format!("external filter '{cmd}' failed"));
        }
        ok
    }
}

/// git's `finish_command` code: the exit status, or 128 + the signal.
fn exit_code(status: &std::process::ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| crate::sys::killed_by(status).map(|s| s + 128))
        .unwrap_or(-1)
}

impl Read for OneShot {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(out) = self.stdout.as_mut() else {
            return if self.messages.is_empty() {
                Ok(0)
            } else {
                Err(io::Error::other("the filter failed"))
            };
        };
        match out.read(buf) {
            Ok(0) if self.finish(false) => Ok(0),
            Ok(0) => Err(io::Error::other("the filter failed")),
            Ok(n) => Ok(n),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => Err(err),
            Err(err) => {
                self.finish(true);
                Err(err)
            }
        }
    }
}

impl Drop for OneShot {
    fn drop(&mut self) {
        // A reader dropped early (the caller failed to write the file): the process gets EOF
        // or EPIPE and ends; reap it.
        if self.stdout.take().is_some() {
            if let Some(thread) = self.feeder.take() {
                // Closing our end of its output lets a filter blocked on writing end, and so
                // the feeder blocked on its input.
                let _ = self.child.kill();
                let _ = thread.join();
            }
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_like_git() {
        assert_eq!(
            expand(b"tr %f x %% y %q".as_bstr(), b"a b'c!".as_bstr()),
            "tr 'a b'\\''c'\\!'' x % y %q"
        );
        assert_eq!(expand(b"cat".as_bstr(), b"p".as_bstr()), "cat");
    }
}
