//! git's long-running filter protocol (`gitprotocol-common`'s pkt-lines, `gitattributes(5)`,
//! "Long Running Filter Process"), version 2, from the client side, as git's `convert.c` and
//! `sub-process.c` speak it.
//!
//! Every message git sends ends with a flush packet, and the filter answers only after it, so
//! the writes of one message are gathered in a buffer and reach the pipe at each flush: one
//! `write(2)` for a small entry's whole request (command, path, metadata, content) where an
//! unbuffered client makes two or three per packet, and as many wake-ups of the filter. The
//! answers are read through a buffer as well. (gix-filter's client writes each pkt-line
//! unbuffered; over 2,000 small files through a perl filter that alone made the checkout 1.8×
//! slower than git.)

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};

use bstr::{BStr, BString, ByteSlice};

/// The largest payload of one pkt-line (git's `LARGE_PACKET_DATA_MAX`).
pub(crate) const MAX_DATA: usize = 65520 - 4;

/// The capabilities git asks for, as bits.
pub(crate) const CLEAN: u8 = 1;
pub(crate) const SMUDGE: u8 = 2;
pub(crate) const DELAY: u8 = 4;

/// A running long-running filter, after a successful handshake.
pub(crate) struct Process {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// The negotiated capabilities ([`CLEAN`], [`SMUDGE`], [`DELAY`]); an `abort` status
    /// removes one for the rest of the run, as in git.
    pub caps: u8,
    /// The payload of the last packet read.
    line: Vec<u8>,
}

/// What reading one packet gave.
enum Packet {
    /// A data packet; its payload is in `Process::line`.
    Data,
    /// A flush packet (`0000`).
    Flush,
}

/// The protocol could not go on: the filter died, closed its output or sent garbage.
#[derive(Debug)]
pub(crate) struct Broken;

impl From<io::Error> for Broken {
    fn from(_: io::Error) -> Self {
        Broken
    }
}

/// Why the handshake with a long-running filter failed, in git's words (`sub-process.c`,
/// `pkt-line.c`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Handshake {
    /// The client's greeting could not be written.
    #[error("Could not write client identification")]
    Identification,
    /// The filter closed its output.
    #[error("the remote end hung up unexpectedly")]
    HungUp,
    /// The filter said something else than the protocol's next line.
    #[error("Unexpected line '{line}', expected {expected}")]
    Unexpected {
        /// What it said.
        line: String,
        /// What the protocol expects there.
        expected: &'static str,
    },
    /// The filter speaks another version of the protocol.
    #[error("Version {0} not supported")]
    Version(i64),
    /// The capabilities could not be written.
    #[error("Could not write requested capability")]
    Capabilities,
    /// The filter asked for a capability git does not know.
    #[error("subprocess requested unsupported capability '{0}'")]
    Capability(BString),
}

impl Process {
    /// Perform git's handshake with the freshly spawned `child` (`git-filter-client`, version 2,
    /// capabilities clean, smudge and delay). The error is git's message for what went wrong,
    /// as `sub-process.c` words it.
    pub(crate) fn handshake(mut child: Child) -> Result<Process, (Child, Handshake)> {
        let input = child.stdin.take().expect("spawned with a piped stdin");
        let output = child.stdout.take().expect("spawned with a piped stdout");
        let mut p = Process {
            child,
            input: BufWriter::with_capacity(MAX_DATA + 4, input),
            output: BufReader::with_capacity(MAX_DATA + 4, output),
            caps: 0,
            line: Vec::new(),
        };
        match p.negotiate() {
            Ok(()) => Ok(p),
            Err(message) => Err((p.into_child(), message)),
        }
    }

    fn negotiate(&mut self) -> Result<(), Handshake> {
        let wrote = (|| {
            self.text("git-filter-client")?;
            self.text("version=2")?;
            self.flush()
        })();
        if wrote.is_err() {
            return Err(Handshake::Identification);
        }
        let line = self.read_text().map_err(|_| Handshake::HungUp)?;
        if line.as_ref().map(|l| l.as_bstr()) != Some(b"git-filter-server".as_bstr()) {
            return Err(Handshake::Unexpected {
                line: shown(line.as_ref().map(|l| l.as_bstr())),
                expected: "git-filter-server",
            });
        }
        let line = self.read_text().map_err(|_| Handshake::HungUp)?;
        let version = line
            .as_ref()
            .and_then(|l| l.strip_prefix(b"version="))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i64>().ok());
        let Some(version) = version else {
            return Err(Handshake::Unexpected {
                line: shown(line.as_ref().map(|l| l.as_bstr())),
                expected: "version",
            });
        };
        if let Some(line) = self.read_text().map_err(|_| Handshake::HungUp)? {
            return Err(Handshake::Unexpected {
                line: line.to_string(),
                expected: "flush",
            });
        }
        if version != 2 {
            return Err(Handshake::Version(version));
        }
        let wrote = (|| {
            for cap in ["clean", "smudge", "delay"] {
                self.text(&format!("capability={cap}"))?;
            }
            self.flush()
        })();
        if wrote.is_err() {
            return Err(Handshake::Capabilities);
        }
        while let Some(line) = self.read_text().map_err(|_| Handshake::HungUp)? {
            let Some(cap) = line.strip_prefix(b"capability=") else {
                continue;
            };
            self.caps |= match cap {
                b"clean" => CLEAN,
                b"smudge" => SMUDGE,
                b"delay" => DELAY,
                // git dies here; an unknown capability is not something to go on with.
                other => return Err(Handshake::Capability(other.as_bstr().to_owned())),
            };
        }
        Ok(())
    }

    /// Send `command` for `pathname` with the `meta` lines (`ref=`, `treeish=`, `blob=`,
    /// `can-delay=1`, in git's order), then `content` and the closing flush, and read the
    /// status list. Returns the status (git's `subprocess_read_status`: the last `status=` wins,
    /// `previous` is kept when the list has none).
    pub(crate) fn request(
        &mut self,
        command: &str,
        pathname: &BStr,
        meta: &[(&str, &[u8])],
        content: &[u8],
        previous: BString,
    ) -> Result<BString, Broken> {
        self.text(&format!("command={command}"))?;
        let mut line = Vec::with_capacity(pathname.len() + 10);
        line.extend_from_slice(b"pathname=");
        line.extend_from_slice(pathname);
        self.text_bytes(&line)?;
        for (key, value) in meta {
            line.clear();
            line.extend_from_slice(key.as_bytes());
            line.push(b'=');
            line.extend_from_slice(value);
            self.text_bytes(&line)?;
        }
        self.input.write_all(b"0000")?;
        for piece in content.chunks(MAX_DATA) {
            self.packet(piece)?;
        }
        self.flush()?;
        self.status(previous)
    }

    /// `command=list_available_blobs`: the paths the filter can deliver now, and its status.
    pub(crate) fn list_available(&mut self) -> Result<(Vec<BString>, BString), Broken> {
        self.text("command=list_available_blobs")?;
        self.flush()?;
        let mut paths = Vec::new();
        while let Some(line) = self.read_text()? {
            if let Some(path) = line.strip_prefix(b"pathname=") {
                paths.push(path.into());
            }
        }
        let status = self.status(BString::default())?;
        Ok((paths, status))
    }

    /// Read a status list up to its flush packet: the last `status=` wins, `status` is kept
    /// when there is none.
    fn status(&mut self, mut status: BString) -> Result<BString, Broken> {
        while let Some(line) = self.read_text()? {
            if let Some(value) = line.strip_prefix(b"status=") {
                status = value.into();
            }
        }
        Ok(status)
    }

    /// The content the filter sends after `status=success`, read in pieces up to its flush
    /// packet, then the trailing status list.
    pub(crate) fn content(&mut self) -> Content<'_> {
        Content {
            process: self,
            pending: 0,
            done: None,
        }
    }

    /// Close the filter's input and wait for it to exit, as git does at its end.
    pub(crate) fn finish(self) {
        let mut child = self.into_child();
        let _ = child.wait();
    }

    /// Stop the filter as git's `subprocess_stop` does: SIGTERM, then wait.
    pub(crate) fn stop(self) {
        let mut child = self.into_child();
        crate::sys::terminate(&child);
        let _ = child.wait();
    }

    fn into_child(self) -> Child {
        let Process {
            child,
            input,
            output,
            ..
        } = self;
        // Dropping the buffered writer flushes it; a filter that is gone makes that fail,
        // which is of no interest any more.
        let (inner, _) = input.into_parts();
        drop(inner);
        drop(output);
        child
    }

    fn packet(&mut self, data: &[u8]) -> io::Result<()> {
        debug_assert!(data.len() <= MAX_DATA);
        write!(self.input, "{:04x}", data.len() + 4)?;
        self.input.write_all(data)
    }

    fn text(&mut self, line: &str) -> io::Result<()> {
        self.text_bytes(line.as_bytes())
    }

    /// One text packet: `line` and a newline, as git's `packet_write_fmt` sends them.
    fn text_bytes(&mut self, line: &[u8]) -> io::Result<()> {
        if line.len() + 1 > MAX_DATA {
            return Err(io::Error::other("line too long for a pkt-line"));
        }
        write!(self.input, "{:04x}", line.len() + 5)?;
        self.input.write_all(line)?;
        self.input.write_all(b"\n")
    }

    /// A flush packet, and everything gathered so far onto the pipe.
    fn flush(&mut self) -> io::Result<()> {
        self.input.write_all(b"0000")?;
        self.input.flush()
    }

    fn read_packet(&mut self) -> io::Result<Packet> {
        let mut len = [0u8; 4];
        self.output.read_exact(&mut len)?;
        let len = std::str::from_utf8(&len)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad pkt-line length"))?;
        match len {
            0 => Ok(Packet::Flush),
            1..=4 => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "unexpected special pkt-line",
            )),
            n => {
                self.line.resize(n - 4, 0);
                self.output.read_exact(&mut self.line)?;
                Ok(Packet::Data)
            }
        }
    }

    /// A text packet without its trailing newline, or `None` for a flush packet.
    fn read_text(&mut self) -> io::Result<Option<BString>> {
        match self.read_packet()? {
            Packet::Flush => Ok(None),
            Packet::Data => {
                let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                Ok(Some(line.into()))
            }
        }
    }
}

/// git's words when the filter closed its output in the middle of the handshake (it dies
/// there, in `packet_read_line`).
fn shown(line: Option<&BStr>) -> String {
    line.map_or_else(|| "<flush packet>".to_owned(), ToString::to_string)
}

/// The content a filter sends for one request: a reader over its data packets, which checks
/// the trailing status at the end. A read error means the filter broke off or reported an
/// error after the content ([`Content::failure`] says which).
pub(crate) struct Content<'p> {
    process: &'p mut Process,
    /// Bytes of the current packet not read yet (at the end of `process.line`).
    pending: usize,
    /// Set once the content ended: the trailing status, or how the protocol broke.
    done: Option<Result<BString, Broken>>,
}

impl Content<'_> {
    /// After a read error: the status the filter ended with (`Ok`, not `success`), or `Err` if
    /// the protocol broke (the filter died, closed its output or sent garbage).
    pub(crate) fn failure(self) -> Result<BString, Broken> {
        match self.done {
            Some(Ok(status)) => Ok(status),
            Some(Err(broken)) => Err(broken),
            None => Err(Broken),
        }
    }
}

impl Read for Content<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(done) = &self.done {
                return match done {
                    Ok(status) if status == "success" => Ok(0),
                    Ok(_) => Err(io::Error::other("the filter reported an error")),
                    Err(_) => Err(io::Error::other("the filter broke off")),
                };
            }
            if self.pending > 0 {
                let line = &self.process.line;
                let start = line.len() - self.pending;
                let n = self.pending.min(buf.len());
                buf[..n].copy_from_slice(&line[start..start + n]);
                self.pending -= n;
                return Ok(n);
            }
            match self.process.read_packet() {
                Ok(Packet::Data) => self.pending = self.process.line.len(),
                Ok(Packet::Flush) => {
                    // The content is complete; the status list follows. An empty one keeps
                    // the `success` sent before the content.
                    self.done = Some(self.process.status("success".into()));
                }
                Err(err) => self.done = Some(Err(err.into())),
            }
        }
    }
}
