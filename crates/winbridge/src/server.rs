//! The Linux side: accepts clients on the loopback address and runs each request's program on
//! the host, a thread per connection and one per stream, so that a program's input is fed while
//! its output is read.

use std::ffi::OsString;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::environment;
use crate::protocol::{self, Frame, Kind, Request, CHUNK};
use crate::translate::Drives;

/// What every connection shares: how to map drives, and whether to log.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The Wine prefix's drives, for translating paths (see [`crate::translate`]).
    pub drives: Drives,
    /// Log each request and its exit code on stderr, for debugging a test.
    pub verbose: bool,
}

/// Serves connections from `listener` until accepting fails (which a loopback listener does
/// not do in practice: the server runs until it is killed). Each connection gets a thread, as
/// git-par runs several gits at once and a hook may start git while another git waits for it.
pub fn serve(listener: TcpListener, config: Config) -> io::Error {
    let config = Arc::new(config);
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return e,
        };
        let config = Arc::clone(&config);
        thread::spawn(move || {
            if let Err(e) = handle(stream, &config) {
                eprintln!("winbridge: {e}");
            }
        });
    }
}

/// The output half of a connection, shared by the stdout and stderr pumps: a frame is written
/// under the lock in one call, so frames never interleave.
type Sink = Arc<Mutex<TcpStream>>;

/// Serves one connection: reads the request, runs it, streams, ends with the exit code.
fn handle(stream: TcpStream, config: &Config) -> Result<(), protocol::Error> {
    stream.set_nodelay(true)?;
    let mut input = BufReader::new(stream.try_clone()?);
    protocol::read_magic(&mut input)?;
    let request = match protocol::read_frame(&mut input)? {
        Some(Frame::Request(request)) => request,
        Some(other) => return Err(protocol::Error::Unexpected(other.kind())),
        None => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
    };
    let sink: Sink = Arc::new(Mutex::new(stream));
    let code = match spawn(&request, config) {
        Ok(child) => run(child, input, &sink),
        Err(e) => {
            let program = String::from_utf8_lossy(&request.program);
            let message = format!("winbridge: cannot run {program}: {e}\n");
            send(&sink, &Frame::Stderr(message.into_bytes()))?;
            if e.kind() == io::ErrorKind::NotFound {
                127
            } else {
                126
            }
        }
    };
    if config.verbose {
        eprintln!("winbridge: {} -> {code}", describe(&request));
    }
    send(&sink, &Frame::Exit(code))?;
    // The end of the output; the input half stays open for the stdin pump, which may still be
    // draining the client's frames (closing with unread bytes would reset the connection and
    // could destroy the exit code before the client reads it).
    lock(&sink).shutdown(Shutdown::Write)?;
    Ok(())
}

/// Starts the request's program on the host with its streams piped.
fn spawn(request: &Request, config: &Config) -> io::Result<Child> {
    let program = &request.program;
    if program.is_empty() || program.contains(&b'/') || program == b"." || program == b".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the program is not a bare name",
        ));
    }
    let drives = &config.drives;
    let env = environment::child_env(environment::server_env(), &request.env, drives);
    Command::new(os(program))
        .args(request.args.iter().map(|arg| os(&drives.arg(arg))))
        .current_dir(os(&drives.arg(&request.cwd)))
        .env_clear()
        .envs(env.into_iter().map(|(name, value)| (os(&name), os(&value))))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Streams between the connection and `child` until it exits; returns its exit code.
fn run(mut child: Child, input: BufReader<TcpStream>, sink: &Sink) -> i32 {
    let stdin = child.stdin.take();
    // Not joined: it ends when the client sends EOF or goes away, which may be after the exit.
    thread::spawn(move || pump_stdin(input, stdin));
    let pumps = [
        child
            .stdout
            .take()
            .map(|out| pump_output(out, Kind::Stdout, sink)),
        child
            .stderr
            .take()
            .map(|err| pump_output(err, Kind::Stderr, sink)),
    ];
    let status = child.wait();
    // Everything the program wrote goes out before its exit code.
    for pump in pumps.into_iter().flatten() {
        let _ = pump.join();
    }
    match status {
        Ok(status) => exit_code(status),
        Err(_) => 128,
    }
}

/// Feeds the client's stdin frames to the program until EOF. Once the program stops reading
/// (a broken pipe), the frames are still read and dropped until EOF, so that the client's
/// writes never block and the connection is not reset under unread bytes.
fn pump_stdin(mut input: BufReader<TcpStream>, mut stdin: Option<ChildStdin>) {
    loop {
        match protocol::read_frame(&mut input) {
            Ok(Some(Frame::Stdin(data))) => {
                if let Some(pipe) = stdin.as_mut() {
                    if pipe.write_all(&data).is_err() {
                        stdin = None;
                    }
                }
            }
            Ok(Some(Frame::StdinEof)) | Ok(None) => return,
            Ok(Some(other)) => {
                let e = protocol::Error::Unexpected(other.kind());
                eprintln!("winbridge: reading the client's stdin: {e}");
                return;
            }
            Err(e) => {
                eprintln!("winbridge: reading the client's stdin: {e}");
                return;
            }
        }
    }
}

/// Sends what `source` yields as frames of `kind` until it ends. When the client is gone the
/// pump stops reading, so the program gets a broken pipe on its next write, as it would
/// writing into a closed pipe on the host.
fn pump_output(
    mut source: impl Read + Send + 'static,
    kind: Kind,
    sink: &Sink,
) -> thread::JoinHandle<()> {
    let sink = Arc::clone(sink);
    thread::spawn(move || {
        let mut buf = vec![0; CHUNK];
        loop {
            let n = match source.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            let frame = protocol::encode_raw(kind, &buf[..n]);
            if lock(&sink).write_all(&frame).is_err() {
                return;
            }
        }
    })
}

fn send(sink: &Sink, frame: &Frame) -> io::Result<()> {
    protocol::write_frame(&mut *lock(sink), frame)
}

fn lock(sink: &Sink) -> std::sync::MutexGuard<'_, TcpStream> {
    // A pump that panicked mid-frame would have left the stream unusable anyway; the writes
    // after it fail on their own.
    sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The exit code a shell reports for `status`: the code, or 128 plus the killing signal.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 128,
    }
}

fn os(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

fn describe(request: &Request) -> String {
    let mut line = String::from_utf8_lossy(&request.program).into_owned();
    for arg in &request.args {
        line.push(' ');
        line.push_str(&String::from_utf8_lossy(arg));
    }
    line.push_str(&format!(" (in {})", String::from_utf8_lossy(&request.cwd)));
    line
}
