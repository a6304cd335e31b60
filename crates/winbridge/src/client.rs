//! The Windows side: the program Wine runs as `git.exe` or `sh.exe`. It sends its own name,
//! arguments, working directory and environment to the server named by `WINBRIDGE_PORT`,
//! forwards its stdin, writes what comes back to its stdout and stderr, and exits with the
//! host program's exit code.
//!
//! The code is plain std and builds on Linux too, so the protocol's two ends are tested
//! against each other there without Wine.

use std::ffi::OsStr;
use std::io::{self, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

use crate::protocol::{self, Frame, Kind, Request, CHUNK};

/// The environment variable holding the server's port on the loopback address; the test
/// harness (`scripts/windows bridge`) sets it.
pub const PORT_VAR: &str = "WINBRIDGE_PORT";

/// The exit code when the bridge itself fails (no port, no server, a broken connection):
/// git's own code for a fatal error, so callers treat it as git failing.
pub const FAILURE: i32 = 128;

/// The exit code after a write to a closed stdout or stderr: what git does on `EPIPE`
/// (`check_pipe` in write-or-die.c: 128 + SIGPIPE).
pub const BROKEN_PIPE: i32 = 141;

/// Why a run through the bridge did not end with the program's exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `WINBRIDGE_PORT` is not set or not a port.
    #[error("{PORT_VAR} is not set to the bridge server's port ({0}); run under `scripts/windows bridge`")]
    NoPort(&'static str),
    /// The server could not be reached, or broke the protocol.
    #[error("bridge server: {0}")]
    Server(#[from] protocol::Error),
    /// Writing the program's output to our own stdout or stderr failed.
    #[error("writing output: {0}")]
    Output(#[source] io::Error),
}

impl Error {
    /// The exit code a run ending in this error gives, as git would for the same failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => BROKEN_PIPE,
            _ => FAILURE,
        }
    }
}

/// The whole client program: runs the request this process stands for and returns the exit
/// code to exit with, having reported any failure of the bridge itself on stderr.
pub fn main() -> i32 {
    let result = port().and_then(|port| {
        let request = this_request();
        let stream =
            TcpStream::connect((Ipv4Addr::LOCALHOST, port)).map_err(protocol::Error::Io)?;
        run(
            stream,
            &request,
            io::stdin(),
            &mut io::stdout(),
            &mut io::stderr(),
        )
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            if !matches!(&e, Error::Output(e) if e.kind() == io::ErrorKind::BrokenPipe) {
                let program = String::from_utf8_lossy(&this_program()).into_owned();
                let _ = writeln!(io::stderr(), "winbridge ({program}.exe): {e}");
            }
            e.exit_code()
        }
    }
}

fn port() -> Result<u16, Error> {
    let value = std::env::var(PORT_VAR).map_err(|_| Error::NoPort("unset"))?;
    value
        .trim()
        .parse()
        .map_err(|_| Error::NoPort("not a port number"))
}

/// The request this process stands for: its name, arguments, working directory, environment.
pub fn this_request() -> Request {
    Request {
        program: this_program(),
        args: std::env::args_os().skip(1).map(|arg| bytes(&arg)).collect(),
        cwd: std::env::current_dir()
            .map(|dir| bytes(dir.as_os_str()))
            .unwrap_or_default(),
        env: std::env::vars_os()
            .map(|(name, value)| (bytes(&name), bytes(&value)))
            .collect(),
    }
}

fn this_program() -> Vec<u8> {
    let argv0 = std::env::args_os().next().or_else(|| {
        let exe = std::env::current_exe().ok()?;
        Some(exe.into_os_string())
    });
    program_name(&argv0.unwrap_or_default())
}

/// The program a client named `argv0` stands for: its file name without folders (either
/// separator) and without `.exe` (any case), so `Z:\bridge\git.exe` and `GIT.EXE` are `git`.
/// Lowercased, as Windows names are case-insensitive and the host's programs are lowercase.
pub fn program_name(argv0: &OsStr) -> Vec<u8> {
    let argv0 = bytes(argv0);
    let start = argv0
        .iter()
        .rposition(|&b| b == b'\\' || b == b'/')
        .map_or(0, |i| i + 1);
    let mut name = argv0[start..].to_ascii_lowercase();
    if name.ends_with(b".exe") {
        name.truncate(name.len() - 4);
    }
    name
}

/// The connection's output half, shared by the request and the stdin thread; `None` once the
/// run is over. Taking it waits for a send in flight and stops any other from starting, so no
/// socket operation is cut off by the process's exit (Wine 8 leaks one, and its server prints
/// the leaked objects on stderr when it shuts down).
type Outgoing = Arc<Mutex<Option<TcpStream>>>;

/// Runs `request` through the server at the other end of `stream`: `stdin` is forwarded by a
/// thread of its own while the output frames are written to `stdout` and `stderr`. Returns the
/// program's exit code. The stdin thread is left behind when the program exits before the
/// input ends (a terminal that never does); the process exits from under its read.
pub fn run(
    stream: TcpStream,
    request: &Request,
    stdin: impl Read + Send + 'static,
    stdout: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<i32, Error> {
    stream.set_nodelay(true).map_err(protocol::Error::Io)?;
    let mut output = stream.try_clone().map_err(protocol::Error::Io)?;
    output
        .write_all(protocol::MAGIC)
        .and_then(|()| protocol::write_frame(&mut output, &Frame::Request(request.clone())))
        .map_err(protocol::Error::Io)?;
    let outgoing: Outgoing = Arc::new(Mutex::new(Some(output)));
    let shared = Arc::clone(&outgoing);
    thread::spawn(move || forward_stdin(stdin, &shared));
    let result = receive(BufReader::new(stream), stdout, stderr);
    lock(&outgoing).take();
    result
}

/// Writes the server's output frames to `stdout` and `stderr` until the exit code comes.
fn receive(
    mut input: BufReader<TcpStream>,
    stdout: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<i32, Error> {
    loop {
        match protocol::read_frame(&mut input)? {
            Some(Frame::Stdout(data)) => stdout.write_all(&data).map_err(Error::Output)?,
            Some(Frame::Stderr(data)) => stderr.write_all(&data).map_err(Error::Output)?,
            Some(Frame::Exit(code)) => {
                stdout.flush().map_err(Error::Output)?;
                stderr.flush().map_err(Error::Output)?;
                return Ok(code);
            }
            Some(other) => return Err(protocol::Error::Unexpected(other.kind()).into()),
            None => {
                let why = "the server closed the connection before the exit code";
                let eof = io::Error::new(io::ErrorKind::UnexpectedEof, why);
                return Err(protocol::Error::Io(eof).into());
            }
        }
    }
}

/// Sends `stdin` as frames until its end, then the end-of-file frame. A read error counts as
/// the end, as a program reading a broken stdin sees one. Stops quietly when the run is over
/// or the connection is gone: the main thread reports that.
fn forward_stdin(mut stdin: impl Read, outgoing: &Outgoing) {
    let mut buf = vec![0; CHUNK];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => 0,
        };
        let frame = match n {
            0 => protocol::encode_raw(Kind::StdinEof, &[]),
            n => protocol::encode_raw(Kind::Stdin, &buf[..n]),
        };
        let mut output = lock(outgoing);
        let Some(stream) = output.as_mut() else {
            return;
        };
        if stream.write_all(&frame).is_err() || n == 0 {
            return;
        }
    }
}

fn lock(outgoing: &Outgoing) -> MutexGuard<'_, Option<TcpStream>> {
    // The stdin thread holds the lock only around a write, which does not panic.
    outgoing
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(unix)]
fn bytes(value: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    value.as_bytes().to_vec()
}

/// Windows strings are UTF-16 (possibly ill-formed); the protocol carries UTF-8.
#[cfg(not(unix))]
fn bytes(value: &OsStr) -> Vec<u8> {
    value.to_string_lossy().into_owned().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_the_file_stem() {
        let name = |argv0: &str| String::from_utf8(program_name(OsStr::new(argv0))).unwrap();
        assert_eq!(name("git"), "git");
        assert_eq!(name("git.exe"), "git");
        assert_eq!(name(r"Z:\work\target\windows\bridge-bin\git.exe"), "git");
        assert_eq!(name("C:/bin/SH.EXE"), "sh");
        assert_eq!(name("git-upload-pack.exe"), "git-upload-pack");
        assert_eq!(name("git.exe.bak"), "git.exe.bak");
    }
}
