//! Reading a blob under the budget: from where the scan at the start of the run found it in a
//! pack ([`crate::objects::blobs`]), else through the object database. The grant is taken before the
//! blob is inflated (a delta's once its size is known), and sized for what a filtered entry holds
//! on top of the blob.

use super::filters::FILTER_BUFFER;
use super::{Failure, Shared, Worker};
use crate::plan;
use crate::write::error::EntryError;

/// A blob read into a writer's buffer: its first `len` bytes. The buffer keeps its length from
/// file to file (the most any blob needed), so that the next blob is inflated into memory
/// already written rather than zero-filled first wherever it is longer than the last one
/// (4.5% of deno's writers' time was that memset).
pub(super) struct Blob {
    buf: Vec<u8>,
    len: usize,
}

impl Blob {
    /// The writer's buffer, for the next blob.
    pub(super) fn into_buf(self) -> Vec<u8> {
        self.buf
    }
}

impl std::ops::Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Worker<'_> {
    /// Read a blob under the budget: the grant is sized from the object header before the
    /// object is inflated, so the bytes in flight never exceed the budget. A filtered entry
    /// (`driver`) holds more: the filter's output held or streamed, and for a one-shot command
    /// the copy of the input its feeding thread writes.
    /// It is an associated function so that it can run while the attribute stack is borrowed.
    pub(super) fn read_blob<'s>(
        (repo, spare): (&gix::Repository, &mut Vec<u8>),
        entry: &plan::Entry,
        driver: Option<&gix::filter::plumbing::Driver>,
        shared: &'s Shared<'_>,
    ) -> Result<(Blob, crate::sys::budget::Grant<'s>), EntryError> {
        let header = Self::header(repo, entry)?;
        Self::read_blob_with((repo, spare), entry, header.size, driver, shared)
    }

    /// The object header of `entry`'s blob: its size decides the budget and whether to stream.
    pub(super) fn header(
        repo: &gix::Repository,
        entry: &plan::Entry,
    ) -> Result<gix::objs::Header, EntryError> {
        use gix::objs::FindHeader;
        repo.objects
            .try_header(&entry.id)
            .map_err(|err| unreadable(entry, Some(&err)))?
            .ok_or_else(|| unreadable(entry, None))
    }

    /// The size of `entry`'s blob where the pack scan did not find it: from its loose object,
    /// read now and held for [`Worker::read_content`] (one open, no map), else from the object
    /// database's header.
    pub(super) fn unpacked_size(
        (loose, repo): (&mut crate::objects::loose::Loose, &gix::Repository),
        entry: &plan::Entry,
    ) -> Result<u64, EntryError> {
        match loose.open(&entry.id) {
            crate::objects::loose::Opened::Read(header) => Ok(header.size),
            _ => Ok(Self::header(repo, entry)?.size),
        }
    }

    /// `entry`'s blob from the loose object [`Worker::unpacked_size`] read: granted its size,
    /// then inflated into the writer's buffer. `Ok(None)` where the loose object cannot give it
    /// (corrupt, truncated): the object database then reads it or says why.
    fn read_loose<'s>(
        (loose, spare): (&mut crate::objects::loose::Loose, &mut Vec<u8>),
        entry: &plan::Entry,
        header: crate::objects::loose::Header,
        driver: Option<&gix::filter::plumbing::Driver>,
        shared: &'s Shared<'_>,
    ) -> Result<Option<(Blob, crate::sys::budget::Grant<'s>)>, EntryError> {
        if header.kind != gix::objs::Kind::Blob {
            return Err(EntryError {
                path: entry.path.clone(),
                message: format!("{} is a {}, not a blob", entry.id, header.kind),
            });
        }
        let grant = shared.budget.acquire(in_flight(header.size, driver));
        let mut buf = std::mem::take(spare);
        match loose.body(&mut buf) {
            Some(len) => Ok(Some((Blob { buf, len }, grant))),
            None => {
                *spare = buf;
                Ok(None)
            }
        }
    }

    /// [`Worker::read_blob`] for a blob whose header said `size` bytes.
    pub(super) fn read_blob_with<'s>(
        (repo, spare): (&gix::Repository, &mut Vec<u8>),
        entry: &plan::Entry,
        size: u64,
        driver: Option<&gix::filter::plumbing::Driver>,
        shared: &'s Shared<'_>,
    ) -> Result<(Blob, crate::sys::budget::Grant<'s>), EntryError> {
        use gix::objs::Find;
        let fail = |message: String| EntryError {
            path: entry.path.clone(),
            message,
        };
        let grant = shared.budget.acquire(in_flight(size, driver));
        let mut buf = std::mem::take(spare);
        let data = repo
            .objects
            .try_find(&entry.id, &mut buf)
            .map_err(|err| unreadable(entry, Some(&err)))?
            .ok_or_else(|| unreadable(entry, None))?;
        if data.kind != gix::objs::Kind::Blob {
            return Err(fail(format!("{} is a {}, not a blob", entry.id, data.kind)));
        }
        let len = buf.len();
        Ok((Blob { buf, len }, grant))
    }

    /// Read a blob from where the scan found it ([`crate::objects::blobs`]): one
    /// lookup, and a delta's bases from the writers' shared cache. A whole blob's size (`size`,
    /// from its entry header) is granted before it is inflated; a delta is decoded within the
    /// writer's allowance and granted once its size is known. Anything unusual (not a blob, a
    /// corrupt entry, a delta beyond the allowance) is left to the object database
    /// (`Fallback`), which reports errors in git's words.
    /// It is an associated function so that it can run while the attribute stack is borrowed.
    pub(super) fn read_located<'s>(
        (reader, spare): (&mut crate::objects::blobs::Reader, &mut Vec<u8>),
        located: &crate::objects::blobs::Located,
        size: Option<u64>,
        driver: Option<&gix::filter::plumbing::Driver>,
        shared: &'s Shared<'_>,
    ) -> Result<(Blob, crate::sys::budget::Grant<'s>), crate::objects::blobs::Fallback> {
        let before = size.map(|size| shared.budget.acquire(in_flight(size, driver)));
        let mut buf = std::mem::take(spare);
        let len = match shared.blobs.read(reader, located, &mut buf) {
            Ok(len) => len,
            Err(fallback) => {
                *spare = buf;
                return Err(fallback);
            }
        };
        let grant = before.unwrap_or_else(|| shared.budget.acquire(in_flight(len as u64, driver)));
        Ok((Blob { buf, len }, grant))
    }

    /// Read `entry`'s blob for a writer: from where the scan found it (`located`), else from
    /// the loose object [`Worker::unpacked_size`] read, else, or where those fail, through the
    /// object database, whose header gives the size when it is not known yet (`size`). An
    /// associated function so that it can run while the attribute stack is borrowed.
    #[inline]
    pub(super) fn read_content<'s>(
        (reader, loose, repo, spare): (
            &mut crate::objects::blobs::Reader,
            &mut crate::objects::loose::Loose,
            &gix::Repository,
            &mut Vec<u8>,
        ),
        entry: &plan::Entry,
        located: Option<crate::objects::blobs::Located>,
        size: Option<u64>,
        driver: Option<&gix::filter::plumbing::Driver>,
        shared: &'s Shared<'_>,
    ) -> Result<(Blob, crate::sys::budget::Grant<'s>), Failure> {
        if let Some(located) = located {
            if let Ok(read) = Self::read_located((reader, spare), &located, size, driver, shared) {
                return Ok(read);
            }
        }
        if let Some(header) = loose.holds(&entry.id) {
            let read = Self::read_loose((loose, spare), entry, header, driver, shared);
            if let Some(read) = read.map_err(Failure::Error)? {
                return Ok(read);
            }
        }
        let size = match size {
            Some(size) => size,
            None => Self::header(repo, entry).map_err(Failure::Error)?.size,
        };
        Self::read_blob_with((repo, spare), entry, size, driver, shared).map_err(Failure::Error)
    }
}

/// The bytes the budget holds for a blob of `size` bytes: the blob, and for a filtered entry
/// the filter's output held or streamed, plus for a one-shot command the copy of the input its
/// feeding thread writes.
fn in_flight(size: u64, driver: Option<&gix::filter::plumbing::Driver>) -> u64 {
    size + match driver {
        None => 0,
        Some(d) if d.process.is_some() => FILTER_BUFFER as u64,
        Some(_) => FILTER_BUFFER as u64 + size,
    }
}

/// git's error for a blob it cannot read (`unable to read sha1 file of PATH (ID)`), with the
/// object database's reason when it gave one.
fn unreadable(entry: &plan::Entry, reason: Option<&dyn std::fmt::Display>) -> EntryError {
    let mut message = format!("unable to read sha1 file of {} ({})", entry.path, entry.id);
    if let Some(reason) = reason {
        message.push_str(&format!(": {reason}"));
    }
    EntryError {
        path: entry.path.clone(),
        message,
    }
}
