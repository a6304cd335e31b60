//! The wire format (the crate's documentation draws it): frames of a kind, a length and a
//! payload, and the request's fields inside the first one. Both ends share this module, so the
//! two programs cannot disagree on it.

use std::io::{self, Read, Write};

/// The first bytes a client sends: a server that gets anything else closes the connection at
/// once instead of taking stray bytes for a request. The last byte is the protocol's version.
pub const MAGIC: &[u8; 4] = b"WBR1";

/// The largest payload a frame may carry: a bound that stops a corrupt length from making the
/// reader allocate gigabytes. Data frames are far smaller ([`CHUNK`]); a request (arguments and
/// environment) fits many times over.
pub const MAX_PAYLOAD: usize = 16 << 20;

/// How much stream data one frame carries at most: the size both ends read their pipes in, big
/// enough that megabytes of output cost few frames, small enough to interleave stdout and stderr.
pub const CHUNK: usize = 64 << 10;

/// What a frame holds, as the byte on the wire names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// The client's first frame: what to run, where and with which environment.
    Request = 1,
    /// Bytes for the program's standard input.
    Stdin = 2,
    /// The client's standard input is at its end: the server closes the program's.
    StdinEof = 3,
    /// Bytes the program wrote to its standard output.
    Stdout = 4,
    /// Bytes the program wrote to its standard error.
    Stderr = 5,
    /// The program's exit code; nothing follows it.
    Exit = 6,
}

impl Kind {
    fn from_byte(byte: u8) -> Result<Kind, Error> {
        Ok(match byte {
            1 => Kind::Request,
            2 => Kind::Stdin,
            3 => Kind::StdinEof,
            4 => Kind::Stdout,
            5 => Kind::Stderr,
            6 => Kind::Exit,
            other => return Err(Error::UnknownKind(other)),
        })
    }
}

/// What the client asks the server to run, as the Windows side sees it (paths untranslated).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// The program's bare name (`git`, `sh`): the client's own file stem.
    pub program: Vec<u8>,
    /// The arguments after the program name.
    pub args: Vec<Vec<u8>>,
    /// The client's working directory.
    pub cwd: Vec<u8>,
    /// The client's whole environment, names and values; the server decides what to keep.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// See [`Kind::Request`].
    Request(Request),
    /// See [`Kind::Stdin`].
    Stdin(Vec<u8>),
    /// See [`Kind::StdinEof`].
    StdinEof,
    /// See [`Kind::Stdout`].
    Stdout(Vec<u8>),
    /// See [`Kind::Stderr`].
    Stderr(Vec<u8>),
    /// See [`Kind::Exit`].
    Exit(i32),
}

/// Why a peer's bytes could not be read as the protocol: the connection is then given up, as
/// nothing after a bad frame can be trusted.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection failed, or closed in the middle of a frame.
    #[error("connection: {0}")]
    Io(#[from] io::Error),
    /// The peer is not a winbridge client of this version.
    #[error("the peer did not open with {MAGIC:?} (not a winbridge client of this version)")]
    BadMagic,
    /// A frame kind this version does not know.
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    /// A length beyond [`MAX_PAYLOAD`].
    #[error("frame of {0} bytes is over the limit of {MAX_PAYLOAD}")]
    TooLong(u64),
    /// A frame of a kind that does not belong where it came (a request in the middle of a run,
    /// stdin data from the server).
    #[error("unexpected {0:?} frame")]
    Unexpected(Kind),
    /// A payload that does not hold what its kind says it does.
    #[error("malformed {kind:?} frame: {why}")]
    Malformed {
        /// The frame's kind.
        kind: Kind,
        /// What was wrong with it.
        why: &'static str,
    },
}

impl Frame {
    /// The frame's kind, as the wire names it.
    pub fn kind(&self) -> Kind {
        match self {
            Frame::Request(_) => Kind::Request,
            Frame::Stdin(_) => Kind::Stdin,
            Frame::StdinEof => Kind::StdinEof,
            Frame::Stdout(_) => Kind::Stdout,
            Frame::Stderr(_) => Kind::Stderr,
            Frame::Exit(_) => Kind::Exit,
        }
    }
}

/// Encodes a frame carrying `payload` as one buffer, so that it goes out in one write (with
/// `TCP_NODELAY`, as one segment where it fits).
pub fn encode_raw(kind: Kind, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() <= MAX_PAYLOAD, "frame payload over the limit");
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(kind as u8);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Encodes a whole frame, for the few frames that are not raw data.
pub fn encode(frame: &Frame) -> Vec<u8> {
    match frame {
        Frame::Request(request) => encode_raw(Kind::Request, &encode_request(request)),
        Frame::Stdin(data) => encode_raw(Kind::Stdin, data),
        Frame::StdinEof => encode_raw(Kind::StdinEof, &[]),
        Frame::Stdout(data) => encode_raw(Kind::Stdout, data),
        Frame::Stderr(data) => encode_raw(Kind::Stderr, data),
        Frame::Exit(code) => encode_raw(Kind::Exit, &code.to_le_bytes()),
    }
}

/// Writes one frame and flushes it: frames are the unit the peer waits for.
pub fn write_frame(out: &mut impl Write, frame: &Frame) -> io::Result<()> {
    out.write_all(&encode(frame))?;
    out.flush()
}

fn encode_request(request: &Request) -> Vec<u8> {
    fn field(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = Vec::new();
    field(&mut out, &request.program);
    field(&mut out, &request.cwd);
    out.extend_from_slice(&(request.args.len() as u32).to_le_bytes());
    for arg in &request.args {
        field(&mut out, arg);
    }
    out.extend_from_slice(&(request.env.len() as u32).to_le_bytes());
    for (name, value) in &request.env {
        field(&mut out, name);
        field(&mut out, value);
    }
    out
}

/// Reads the client's opening bytes; [`Error::BadMagic`] when they are not [`MAGIC`].
pub fn read_magic(input: &mut impl Read) -> Result<(), Error> {
    let mut magic = [0; 4];
    input.read_exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(Error::BadMagic);
    }
    Ok(())
}

/// Reads the next frame; `None` when the connection ends cleanly between frames (an end in
/// the middle of one is an error).
pub fn read_frame(input: &mut impl Read) -> Result<Option<Frame>, Error> {
    let mut header = [0; 5];
    let mut got = 0;
    while got < header.len() {
        match input.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let kind = Kind::from_byte(header[0])?;
    let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]);
    if len as usize > MAX_PAYLOAD {
        return Err(Error::TooLong(len.into()));
    }
    let mut payload = vec![0; len as usize];
    input.read_exact(&mut payload)?;
    decode(kind, payload).map(Some)
}

fn decode(kind: Kind, payload: Vec<u8>) -> Result<Frame, Error> {
    let malformed = |why| Error::Malformed { kind, why };
    Ok(match kind {
        Kind::Request => Frame::Request(decode_request(&payload).map_err(malformed)?),
        Kind::Stdin => Frame::Stdin(payload),
        Kind::StdinEof if payload.is_empty() => Frame::StdinEof,
        Kind::StdinEof => return Err(malformed("payload not empty")),
        Kind::Stdout => Frame::Stdout(payload),
        Kind::Stderr => Frame::Stderr(payload),
        Kind::Exit => {
            let code: [u8; 4] = payload.try_into().map_err(|_| malformed("not 4 bytes"))?;
            Frame::Exit(i32::from_le_bytes(code))
        }
    })
}

/// The request's payload read field by field; every read checks the bytes are there.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn u32(&mut self) -> Result<u32, &'static str> {
        let (head, rest) = self.rest.split_first_chunk::<4>().ok_or("truncated")?;
        self.rest = rest;
        Ok(u32::from_le_bytes(*head))
    }

    fn bytes(&mut self) -> Result<Vec<u8>, &'static str> {
        let len = self.u32()? as usize;
        if len > self.rest.len() {
            return Err("field longer than the frame");
        }
        let (field, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(field.to_vec())
    }
}

fn decode_request(payload: &[u8]) -> Result<Request, &'static str> {
    let mut fields = Fields { rest: payload };
    let program = fields.bytes()?;
    let cwd = fields.bytes()?;
    // No preallocation from the counts: a corrupt count fails on the first missing field
    // instead of reserving memory for it.
    let args = (0..fields.u32()?)
        .map(|_| fields.bytes())
        .collect::<Result<_, _>>()?;
    let env = (0..fields.u32()?)
        .map(|_| Ok((fields.bytes()?, fields.bytes()?)))
        .collect::<Result<_, _>>()?;
    if !fields.rest.is_empty() {
        return Err("bytes after the environment");
    }
    Ok(Request {
        program,
        args,
        cwd,
        env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(frame: Frame) {
        let bytes = encode(&frame);
        let mut input = &bytes[..];
        assert_eq!(read_frame(&mut input).unwrap(), Some(frame));
        assert!(input.is_empty(), "the frame's bytes are read exactly");
    }

    fn request() -> Request {
        Request {
            program: b"git".to_vec(),
            args: vec![b"rev-parse".to_vec(), Vec::new(), vec![0xff, 0, b'\\']],
            cwd: b"Z:\\work\\repo".to_vec(),
            env: vec![
                (b"GIT_DIR".to_vec(), b"C:\\x\\.git".to_vec()),
                (b"EMPTY".to_vec(), Vec::new()),
            ],
        }
    }

    #[test]
    fn every_frame_round_trips() {
        round_trip(Frame::Request(request()));
        round_trip(Frame::Request(Request::default()));
        round_trip(Frame::Stdin(b"data".to_vec()));
        round_trip(Frame::StdinEof);
        round_trip(Frame::Stdout(vec![0; CHUNK]));
        round_trip(Frame::Stderr(b"fatal: x\n".to_vec()));
        round_trip(Frame::Exit(-1));
        round_trip(Frame::Exit(128 + 9));
    }

    #[test]
    fn frames_follow_each_other_and_end_cleanly() {
        let mut bytes = encode(&Frame::Stdout(b"a".to_vec()));
        bytes.extend(encode(&Frame::Exit(3)));
        let mut input = &bytes[..];
        assert_eq!(
            read_frame(&mut input).unwrap(),
            Some(Frame::Stdout(b"a".to_vec()))
        );
        assert_eq!(read_frame(&mut input).unwrap(), Some(Frame::Exit(3)));
        assert_eq!(read_frame(&mut input).unwrap(), None);
    }

    #[test]
    fn the_wire_format_is_the_documented_one() {
        assert_eq!(encode(&Frame::Exit(1)), [6, 4, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(encode(&Frame::StdinEof), [3, 0, 0, 0, 0]);
        let request = Request {
            program: b"sh".to_vec(),
            args: vec![b"-c".to_vec()],
            cwd: b"/".to_vec(),
            env: vec![(b"A".to_vec(), b"b".to_vec())],
        };
        let mut want = vec![1, 35, 0, 0, 0];
        want.extend([2, 0, 0, 0, b's', b'h', 1, 0, 0, 0, b'/']);
        want.extend([1, 0, 0, 0, 2, 0, 0, 0, b'-', b'c']);
        want.extend([1, 0, 0, 0, 1, 0, 0, 0, b'A', 1, 0, 0, 0, b'b']);
        assert_eq!(encode(&Frame::Request(request)), want);
    }

    #[test]
    fn a_frame_cut_short_is_an_error_not_an_end() {
        let bytes = encode(&Frame::Stdout(b"abc".to_vec()));
        for len in 1..bytes.len() {
            let err = read_frame(&mut &bytes[..len]).unwrap_err();
            assert!(matches!(err, Error::Io(ref e) if e.kind() == io::ErrorKind::UnexpectedEof));
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let err = |bytes: &[u8]| read_frame(&mut &bytes[..]).unwrap_err();
        assert!(matches!(err(&[9, 0, 0, 0, 0]), Error::UnknownKind(9)));
        assert!(matches!(
            err(&[4, 0xff, 0xff, 0xff, 0xff]),
            Error::TooLong(_)
        ));
        assert!(matches!(
            err(&[6, 1, 0, 0, 0, 0]),
            Error::Malformed {
                kind: Kind::Exit,
                ..
            }
        ));
        assert!(matches!(err(&[3, 1, 0, 0, 0, 0]), Error::Malformed { .. }));
        // A request whose argument count promises more than the frame holds.
        let mut payload = vec![0; 8];
        payload.extend(u32::MAX.to_le_bytes());
        let frame = encode_raw(Kind::Request, &payload);
        assert!(matches!(
            err(&frame),
            Error::Malformed {
                kind: Kind::Request,
                ..
            }
        ));
        // Bytes after the environment.
        let mut payload = encode(&Frame::Request(request()))[5..].to_vec();
        payload.push(0);
        let frame = encode_raw(Kind::Request, &payload);
        assert!(matches!(
            err(&frame),
            Error::Malformed {
                kind: Kind::Request,
                ..
            }
        ));
    }

    #[test]
    fn magic_is_checked() {
        read_magic(&mut &MAGIC[..]).unwrap();
        assert!(matches!(
            read_magic(&mut &b"GET "[..]),
            Err(Error::BadMagic)
        ));
    }
}
