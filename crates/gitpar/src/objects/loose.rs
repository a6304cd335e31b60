//! Loose objects read into a writer's own buffers: one `open`, one `fstat`, one `read` and one
//! `close` per object, no memory map.
//!
//! Through the object database a loose blob costs two lookups (its header for the budget and
//! the streaming decision, then the object), each a `stat`, an `open`, an `fstat`, an `mmap`, a
//! `munmap` and a `close`. Unmapping in a process whose other threads are running makes the
//! kernel interrupt every core they ran on to flush its TLB, and every map and unmap waits on
//! the process's one mmap lock, so with several writers the maps cost more than the reads.
//! Here the compressed file is read once into a buffer the writer keeps, its header inflated
//! for the size, and the rest inflated into the writer's blob buffer once the budget granted
//! it. The format is gix's: the inflate is gix-zlib's, the header gix-object's; only the
//! reading is ours. A file bigger than [`WHOLE`] is left to the object database (mapped, as
//! before): a big blob is streamed or read whole there, and the buffer stays small.

use std::io::Read;
use std::path::PathBuf;

use gix::hash::{oid, ObjectId};

/// The largest compressed loose object read into the buffer; bigger ones are the object
/// database's. The writer count is budgeted at 1 MiB a thread, which this stays within.
pub(crate) const WHOLE: u64 = 512 * 1024;

/// Room for a loose header: `blob ` (or a longer kind), up to 20 digits, a NUL.
const HEADER_MAX: usize = 32;

/// A loose object's kind and size, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The object's kind.
    pub(crate) kind: gix::objs::Kind,
    /// Its inflated size, header excluded.
    pub(crate) size: u64,
}

/// What [`Loose::open`] found for an object.
pub(crate) enum Opened {
    /// Read and its header decoded: [`Loose::body`] inflates the rest.
    Read(Header),
    /// No loose object of that id in any of the object directories.
    Missing,
    /// A loose object this does not read (bigger than [`WHOLE`], or unreadable): the caller
    /// asks the object database, which reads it or says why not in git's words.
    Elsewhere,
}

/// One writer's loose-object reader: the object directories (the repository's own first, then
/// its alternates'), the compressed bytes of the object opened last and its inflate state.
pub(crate) struct Loose {
    dirs: Vec<PathBuf>,
    input: Vec<u8>,
    inflate: gix::zlib::Inflate,
    /// The object read last, its header's inflated bytes and what the header consumed.
    current: Option<Current>,
}

struct Current {
    id: ObjectId,
    header: Header,
    head: [u8; HEADER_MAX],
    /// Bytes of `head` written, of the input consumed, and of `head` that are the header.
    written: usize,
    consumed: usize,
    header_len: usize,
}

impl Loose {
    /// A reader of the loose objects under `dirs`, searched in order.
    pub(crate) fn new(dirs: Vec<PathBuf>) -> Loose {
        Loose {
            dirs,
            input: Vec::new(),
            inflate: gix::zlib::Inflate::default(),
            current: None,
        }
    }

    /// Read the loose object `id` from the first object directory that has it and decode its
    /// header. After [`Opened::Read`], [`Loose::body`] gives the content.
    pub(crate) fn open(&mut self, id: &oid) -> Opened {
        self.current = None;
        let hex = id.to_hex().to_string();
        for dir in &self.dirs {
            let path = dir.join(&hex[..2]).join(&hex[2..]);
            let mut file = match std::fs::File::open(&path) {
                Ok(file) => file,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return Opened::Elsewhere,
            };
            return match self.read_file(&mut file) {
                Ok(true) => self.decode_header(id),
                _ => Opened::Elsewhere,
            };
        }
        Opened::Missing
    }

    /// Read all of `file` into the input buffer; `false` for a file too big to hold.
    fn read_file(&mut self, file: &mut std::fs::File) -> std::io::Result<bool> {
        let len = file.metadata()?.len();
        if len > WHOLE {
            return Ok(false);
        }
        // Resized, not cleared: only bytes beyond the last object's are zero-filled, and the
        // exact length needs no second read to find the end.
        self.input.resize(len as usize, 0);
        file.read_exact(&mut self.input)?;
        Ok(true)
    }

    /// Inflate the header at the start of the input buffer.
    fn decode_header(&mut self, id: &oid) -> Opened {
        let mut head = [0u8; HEADER_MAX];
        self.inflate.reset();
        let Ok((status, consumed, written)) = self.inflate.prefix(&self.input, &mut head) else {
            return Opened::Elsewhere;
        };
        if status == gix::zlib::Status::BufError {
            return Opened::Elsewhere;
        }
        let Ok((kind, size, header_len)) = gix::objs::decode::loose_header(&head[..written]) else {
            return Opened::Elsewhere;
        };
        let header = Header { kind, size };
        self.current = Some(Current {
            id: id.to_owned(),
            header,
            head,
            written,
            consumed,
            header_len,
        });
        Opened::Read(header)
    }

    /// Whether [`Loose::open`] read `id` last, so that [`Loose::body`] can give its content.
    pub(crate) fn holds(&self, id: &oid) -> Option<Header> {
        self.current
            .as_ref()
            .filter(|c| c.id == id)
            .map(|c| c.header)
    }

    /// Inflate the content of the object opened last into `out` (its previous content
    /// replaced). `None` when nothing is open, or when the stream is corrupt or not as long as
    /// its header says: the caller asks the object database, which says why in git's words.
    pub(crate) fn body(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        let c = self.current.take()?;
        let size = usize::try_from(c.header.size).ok()?;
        let n = self
            .inflate
            .rest(
                &self.input[c.consumed..],
                &c.head[..c.written],
                c.header_len,
                out,
                size,
            )
            .ok()?;
        (n == size).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
        use std::io::Write;
        let mut child = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("git runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.unwrap_or_default())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    }

    /// A repository holding `blobs` as loose objects written by git, and their ids.
    fn loose_repository(blobs: &[&[u8]]) -> (tempfile::TempDir, Vec<ObjectId>) {
        let dir = tempfile::tempdir().expect("temporary directory");
        git(dir.path(), &["init", "-q"], None);
        let ids = blobs
            .iter()
            .map(|data| {
                let out = git(dir.path(), &["hash-object", "-w", "--stdin"], Some(data));
                ObjectId::from_hex(String::from_utf8(out).unwrap().trim().as_bytes()).unwrap()
            })
            .collect();
        (dir, ids)
    }

    fn object_path(dir: &std::path::Path, id: &ObjectId) -> PathBuf {
        let hex = id.to_hex().to_string();
        dir.join(".git/objects").join(&hex[..2]).join(&hex[2..])
    }

    #[test]
    fn loose_blobs_read_as_git_wrote_them_one_after_another() {
        let big: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let blobs: [&[u8]; 4] = [b"", b"hello\n", &big, b"after a big one\n"];
        let (dir, ids) = loose_repository(&blobs);
        let mut loose = Loose::new(vec![dir.path().join(".git/objects")]);
        let mut out = b"left over from an earlier blob".to_vec();
        for (data, id) in blobs.iter().zip(&ids) {
            let Opened::Read(header) = loose.open(id) else {
                panic!("{id} not read");
            };
            assert_eq!(header.kind, gix::objs::Kind::Blob);
            assert_eq!(header.size, data.len() as u64);
            assert_eq!(loose.holds(id), Some(header));
            assert_eq!(loose.body(&mut out), Some(data.len()));
            assert_eq!(&out[..data.len()], *data);
            assert_eq!(loose.holds(id), None, "the body is given once");
        }
    }

    #[test]
    fn missing_big_and_corrupt_objects_are_left_to_the_object_database() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let big: Vec<u8> = (0..600_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let (dir, ids) = loose_repository(&[b"some text that compresses\n", &big]);
        let objects = dir.path().join(".git/objects");
        let mut loose = Loose::new(vec![dir.path().join("nothing-here"), objects.clone()]);
        let absent = ObjectId::from_hex(b"0123456789012345678901234567890123456789").unwrap();
        assert!(matches!(loose.open(&absent), Opened::Missing));
        assert!(
            std::fs::metadata(object_path(dir.path(), &ids[1]))
                .unwrap()
                .len()
                > WHOLE
        );
        assert!(matches!(loose.open(&ids[1]), Opened::Elsewhere));
        // Truncated: the header still decodes, the body does not.
        let path = object_path(dir.path(), &ids[0]);
        let bytes = std::fs::read(&path).unwrap();
        let mut writable = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        writable.set_readonly(false);
        std::fs::set_permissions(&path, writable).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 6]).unwrap();
        assert!(matches!(loose.open(&ids[0]), Opened::Read(_)));
        assert_eq!(loose.body(&mut Vec::new()), None);
        // Not zlib at all.
        std::fs::write(&path, b"not a zlib stream").unwrap();
        assert!(matches!(loose.open(&ids[0]), Opened::Elsewhere));
    }
}
