//! One entry written by a writer: its attributes looked up, its blob read under the budget (or
//! a big blob that needs no conversion streamed from its pack), then `ident`, gix-filter's
//! conversion, the `-BOM` encodings and the filter driver, in git's order, and the file created
//! with `O_EXCL` (the tracked file in its place unlinked right before, for a [`Job`] that
//! replaces one). What fails is put in git's words; something in the way is a collision for the
//! tail.

use std::sync::atomic::Ordering;

use bstr::ByteSlice;

use super::attributes::OwnAttributes;
use super::failure::{create_failure, entry_failure, Failure};
use super::filters::queue_of;
use super::{Job, Shared, Worker};
use crate::convert::filter::{Direction, Filtered};
use crate::fs::{self, Dirs};
use crate::plan::{self, Kind};

impl<'r> Worker<'r> {
    /// Read, convert and write one entry. With `job.replace`, the tracked file at the path is
    /// unlinked first, right before the create; a directory there, or a leading directory that
    /// is not a real one, is a collision for the sequential tail. `can_delay` says whether a
    /// long-running filter may deliver the content later ([`Failure::Delayed`]). A filtered
    /// entry met by a writer that defers them is handed over ([`Failure::Queued`]).
    pub(super) fn write_entry(
        &mut self,
        entry: &plan::Entry,
        job: Job,
        shared: &Shared<'_>,
        can_delay: bool,
    ) -> Result<gix::index::entry::Stat, Failure> {
        if entry.kind == Kind::Symlink {
            return self.write_link_as_file(entry, job, shared);
        }
        let looked = (&self.repo, &self.runner, &mut self.outcome);
        let (platform, own) = Self::attributes_of(
            &mut self.attributes,
            looked,
            &mut self.signatures,
            entry,
            shared,
        )?;
        if let Some(kind) = own.driver.map(queue_of).filter(|&k| self.defer[k]) {
            return Err(Failure::Queued(kind));
        }
        if let Some(donor) = shared.donor.filter(|_| !job.replace) {
            let parts = (
                &mut self.reader,
                (&mut self.loose, &self.repo),
                &mut self.donor_dirs,
                &mut self.dirs,
            );
            if let Some(cloned) = Self::clone_from(parts, donor, entry, job, own, shared) {
                return cloned;
            }
        }
        // The blob is read after the attributes, so that the budget can hold what a filter
        // needs from the start (no second request while holding the first). Its size comes
        // from its pack entry when it is stored whole, from its header in the object database
        // when the scan did not find it; a delta's is known once it is decoded.
        let located = shared.blobs.located(job.entry);
        let size = match located {
            Some(located) => located.whole_size(),
            None => match Self::unpacked_size((&mut self.loose, &self.repo), entry) {
                Ok(size) => Some(size),
                Err(err) => return Err(self.unreadable(entry, job, Failure::Error(err))),
            },
        };
        if let Some(size) = size.filter(|&s| s >= shared.stream_above) {
            if own.plain(shared.eol) {
                if let Some(source) = self.streamer.locate(&entry.id) {
                    return self.write_streamed(entry, job, &source, size, shared);
                }
            }
        }
        let reading = (&mut self.reader, &mut self.loose, &self.repo, &mut self.buf);
        let (data, _grant) =
            match Self::read_content(reading, entry, located, size, own.driver, shared) {
                Ok(read) => read,
                Err(failure) => return Err(self.unreadable(entry, job, failure)),
            };
        let expanded = expand_ident(own, entry, &data);
        let input = expanded.as_deref().unwrap_or(&data[..]);
        let bytes = match &platform {
            Some(platform) if own.pipeline_converts(shared.eol) => {
                Self::to_worktree(&mut self.filter, platform, entry, input)?
            }
            _ => input,
        };
        let encoded = encode(own, entry, bytes)?;
        let bytes = encoded.as_deref().unwrap_or(bytes);
        let sink = (&mut self.runner, &mut self.dirs, &mut self.chunk);
        let result =
            Self::smudge_and_create(sink, entry, job, own.driver, bytes, shared, can_delay);
        self.buf = data.into_buf();
        let st = result?.map_err(|err| create_failure(entry, err))?;
        Ok(shared.wrote(&st))
    }

    /// `failure` to read the blob of `entry`, after unlinking the file it was to replace: git
    /// unlinks the old file before it reads the new blob (`checkout_entry`), so a blob it cannot
    /// read leaves the path missing, not the old content under the new entry.
    fn unreadable(&mut self, entry: &plan::Entry, job: Job, failure: Failure) -> Failure {
        if job.replace && matches!(failure, Failure::Error(_)) {
            let (dir, name) = fs::split_path(entry.path.as_bstr());
            // The error already names the path; an unlink that fails as well leaves the old
            // file, as before.
            let _ = Self::prepare(&mut self.dirs, dir, name, true);
        }
        failure
    }

    /// A symlink written as a plain file (`core.symlinks=false`): its target becomes the
    /// file's content, unconverted, as in git, so none of the attribute and conversion phases
    /// apply.
    fn write_link_as_file(
        &mut self,
        entry: &plan::Entry,
        job: Job,
        shared: &Shared<'_>,
    ) -> Result<gix::index::entry::Stat, Failure> {
        debug_assert!(!self.symlinks);
        let (data, _grant) = Self::read_blob((&self.repo, &mut self.buf), entry, None, shared)
            .map_err(Failure::Error)?;
        let (dir, name) = fs::split_path(entry.path.as_bstr());
        let result = Self::create(&mut self.dirs, dir, name, &data, false, job.replace);
        self.buf = data.into_buf();
        result
            .map(|st| fs::index_stat(&st))
            .map_err(|err| create_failure(entry, err))
    }

    /// The attributes of `entry` the writer applies itself, and the lookup the pipeline's
    /// conversion reads (`None` where nothing can convert). Looked up once, before the blob is
    /// read, so that the budget can hold what a filter needs from the start; an associated
    /// function so that the lookup may borrow the attribute stack while the later phases use
    /// the writer's other parts.
    #[inline]
    fn attributes_of<'s>(
        stack: &'s mut gix::worktree::Stack,
        (repo, runner, outcome): (
            &gix::Repository,
            &crate::convert::filter::Runner<'r>,
            &mut gix::attrs::search::Outcome,
        ),
        signatures: &mut Vec<(u64, OwnAttributes<'r>)>,
        entry: &plan::Entry,
        shared: &Shared<'_>,
    ) -> Result<
        (
            Option<gix::worktree::stack::Platform<'s>>,
            OwnAttributes<'r>,
        ),
        Failure,
    > {
        // Without any attribute file, and without configuration that converts files nobody
        // marked (`core.autocrlf=true`; `core.eol` applies to `text` files only), nothing can
        // convert: no attribute lookup, no pipeline. An entry whose attribute signature was met
        // before takes the attributes found then, and is looked up again only for the
        // pipeline's conversion.
        let lookup =
            shared.attributes_present || shared.eol.autocrlf == crate::convert::AutoCrlf::True;
        let signature = shared
            .common_attributes
            .then(|| shared.reduced.signature(entry.path.as_bstr()))
            .flatten();
        let known = signature.and_then(|sig| {
            signatures
                .iter()
                .find(|(s, _)| *s == sig)
                .map(|(_, own)| *own)
        });
        let platform = if lookup && known.is_none_or(|own| own.pipeline_converts(shared.eol)) {
            let platform = stack
                .at_entry(
                    entry.path.as_bstr(),
                    Some(entry.kind.index_mode()),
                    &shared.reduced.view(&repo.objects),
                )
                .map_err(|err| {
                    entry_failure(
                        entry,
                        format!("unable to read the attributes of {}: {err}", entry.path),
                    )
                })?;
            Some(platform)
        } else {
            None
        };
        let own = match (known, &platform) {
            (Some(own), _) => own,
            (None, Some(platform)) if shared.attributes_present => {
                Self::own_attributes(platform, runner, outcome)
            }
            _ => OwnAttributes::default(),
        };
        if let Some(sig) = signature.filter(|_| known.is_none() && signatures.len() < 256) {
            signatures.push((sig, own));
        }
        Ok((platform, own))
    }

    /// gix-filter's conversion of `input` to the work tree (end of line, `working-tree-encoding`
    /// without `-BOM`), under the attributes `platform` found: the converted bytes live in the
    /// pipeline's buffer, or are `input` itself when it changed nothing.
    fn to_worktree<'b>(
        filter: &'b mut gix::filter::plumbing::Pipeline,
        platform: &gix::worktree::stack::Platform<'_>,
        entry: &plan::Entry,
        input: &'b [u8],
    ) -> Result<&'b [u8], Failure> {
        use gix::filter::plumbing::pipeline::convert::{to_worktree, ToWorktreeOutcome};
        let converted = filter
            .convert_to_worktree(
                input,
                entry.path.as_bstr(),
                &mut |_, attrs| {
                    platform.matching_attributes(attrs);
                },
                to_worktree::Options::default(),
            )
            .map_err(|err| {
                entry_failure(
                    entry,
                    format!("unable to convert {} to the work tree: {err}", entry.path),
                )
            })?;
        match converted {
            ToWorktreeOutcome::Unchanged(b) | ToWorktreeOutcome::Buffer(b) => Ok(b),
            ToWorktreeOutcome::Process(_) => {
                unreachable!("the writers' pipelines have no drivers")
            }
        }
    }

    /// The last phase: the filter driver, if any, runs on what ident, eol and the encoding made
    /// (git's order in `convert_to_working_tree_ca_internal`), and the file is created with its
    /// output, or with `bytes` where no driver converted them. `Err` is a delay or a required
    /// filter's failure; the inner result is the create's.
    fn smudge_and_create(
        (runner, dirs, chunk): (
            &mut crate::convert::filter::Runner<'r>,
            &mut Dirs<'r>,
            &mut Vec<u8>,
        ),
        entry: &plan::Entry,
        job: Job,
        driver: Option<&gix::filter::plumbing::Driver>,
        bytes: &[u8],
        shared: &Shared<'_>,
        can_delay: bool,
    ) -> Result<Result<crate::fs::Stat, fs::CreateError>, Failure> {
        let (dir, name) = fs::split_path(entry.path.as_bstr());
        let executable = entry.kind == Kind::Executable;
        let landed = match driver {
            None => Filtered::Unconverted,
            Some(driver) => runner
                .run(
                    driver,
                    Direction::Smudge,
                    entry.path.as_bstr(),
                    (&shared.meta, Some(entry.id)),
                    bytes,
                    can_delay,
                    |r| Self::land(dirs, chunk, (dir, name), r, (executable, job.replace)),
                )
                .map_err(Failure::Fatal)?,
        };
        if let Filtered::Delayed = landed {
            return Err(Failure::Delayed);
        }
        // No driver, a driver that does not convert this entry, or a non-required filter that
        // failed (a partial file is gone): the content unconverted, as git writes it.
        let create = (dir, name, executable, job.replace);
        Ok(Self::create_landed(dirs, create, landed, bytes))
    }

    /// Clone `entry`'s file from the donor instead of writing it, where the donor's copy is
    /// what the checkout would write ([`crate::write::donor`]): `None` when it is to be written (the
    /// reason counted), else the clone's stat data or the failure to create it.
    fn clone_from(
        (reader, (loose, repo), donor_dirs, dirs): (
            &mut crate::objects::blobs::Reader,
            (&mut crate::objects::loose::Loose, &gix::Repository),
            &mut Option<Dirs<'_>>,
            &mut Dirs<'_>,
        ),
        donor: &crate::write::donor::Donor,
        entry: &plan::Entry,
        job: Job,
        own: OwnAttributes<'_>,
        shared: &Shared<'_>,
    ) -> Option<Result<gix::index::entry::Stat, Failure>> {
        use crate::write::donor::Written;
        let written = |why| {
            donor.count(why);
            None
        };
        let expected = match donor.candidate(job.entry) {
            Ok(stat) => *stat,
            Err(why) => return written(why),
        };
        let Some(check_size) = own.clonable(shared.eol) else {
            return written(Written::Converted);
        };
        let located = shared.blobs.located(job.entry);
        // Where check-in converts line endings, the donor's file is the blob only if it is as
        // long as the blob.
        let size = if check_size {
            match located.and_then(|l| shared.blobs.size(reader, &l)) {
                Some(size) => Some(size),
                None => match Self::unpacked_size((loose, repo), entry) {
                    Ok(size) => Some(size),
                    Err(_) => return written(Written::Failed),
                },
            }
        } else {
            None
        };
        let (dir, name) = fs::split_path(entry.path.as_bstr());
        let donor_dirs = donor_dirs.as_mut()?;
        if !donor.attributes_clean(donor_dirs, dir) {
            return written(Written::Attributes);
        }
        let Ok(donor_dir) = donor_dirs.dir(dir) else {
            return written(Written::Modified);
        };
        let target_dir = match dirs.dir(dir) {
            Ok(fd) => fd,
            Err(err) => return Some(Err(create_failure(entry, fs::CreateError::Create(err)))),
        };
        let executable = entry.kind == Kind::Executable;
        let expect = |st: &crate::fs::Stat| {
            crate::write::donor::matches(&expected, st)
                && (st.st_mode & 0o100 != 0) == executable
                && size.is_none_or(|s| u64::try_from(st.st_size).ok() == Some(s))
        };
        match fs::clone_file_at(donor_dir, name, expect, target_dir, name, executable) {
            Ok(st) => {
                donor.cloned();
                if let Some(located) = located {
                    shared.blobs.skip(&located);
                }
                Some(Ok(fs::index_stat(&st)))
            }
            Err(fs::CloneError::Unsupported(err)) => {
                donor.failed(&err, true);
                None
            }
            Err(fs::CloneError::Changed) => written(Written::Modified),
            Err(fs::CloneError::Io(err)) => {
                donor.failed(&err, false);
                None
            }
            Err(fs::CloneError::Create(err)) => {
                Some(Err(create_failure(entry, fs::CreateError::Create(err))))
            }
        }
    }

    /// Write a blob that needs no conversion straight from where it is stored whole
    /// ([`crate::objects::stream`]), a piece at a time: the budget holds one piece, whatever its size.
    fn write_streamed(
        &mut self,
        entry: &plan::Entry,
        job: Job,
        source: &crate::objects::stream::Source,
        size: u64,
        shared: &Shared<'_>,
    ) -> Result<gix::index::entry::Stat, Failure> {
        use std::io::Write as _;
        let _grant = shared.budget.acquire(crate::objects::stream::PIECE as u64);
        let (dir, name) = fs::split_path(entry.path.as_bstr());
        let fd = Self::prepare(&mut self.dirs, dir, name, job.replace)
            .map_err(|err| create_failure(entry, err))?;
        self.chunk.resize(crate::objects::stream::PIECE, 0);
        let mut read_error = None;
        let chunk = &mut self.chunk;
        let result = fs::create_file_with(fd, name, entry.kind == Kind::Executable, |file| {
            let mut sink = |piece: &[u8]| file.write_all(piece);
            crate::objects::stream::Streamer::copy(source, size, chunk, &mut sink).inspect_err(
                |err| {
                    if err.kind() == std::io::ErrorKind::InvalidData {
                        read_error = Some(err.to_string());
                    }
                },
            )
        });
        if let Some(err) = read_error {
            return Err(entry_failure(
                entry,
                format!(
                    "unable to read sha1 file of {} ({}): {err}",
                    entry.path, entry.id
                ),
            ));
        }
        let st = result.map_err(|err| create_failure(entry, err))?;
        shared.streamed.fetch_add(1, Ordering::Relaxed);
        Ok(shared.wrote(&st))
    }

    /// Create `name` in the directory `dir`, unlinking what is there first when `replace`.
    pub(super) fn create(
        dirs: &mut Dirs<'_>,
        dir: &bstr::BStr,
        name: &bstr::BStr,
        data: &[u8],
        executable: bool,
        replace: bool,
    ) -> Result<crate::fs::Stat, fs::CreateError> {
        if !replace {
            return dirs.create_file(dir, name, data, executable);
        }
        let fd = Self::prepare(dirs, dir, name, replace)?;
        fs::create_file_at(fd, name, data, executable)
    }

    /// The open directory `dir`, with `name` unlinked from it first when `replace`.
    pub(super) fn prepare<'d>(
        dirs: &'d mut Dirs<'_>,
        dir: &bstr::BStr,
        name: &bstr::BStr,
        replace: bool,
    ) -> Result<crate::fs::Fd<'d>, fs::CreateError> {
        let fd = dirs.dir(dir).map_err(fs::CreateError::Create)?;
        if replace {
            match fs::unlink_in(fd, name) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                // A directory in the way is a collision for the tail, not a failure.
                Err(err) if err.kind() == std::io::ErrorKind::IsADirectory => {
                    return Err(fs::CreateError::Create(err))
                }
                Err(err) => return Err(fs::CreateError::Unlink(err)),
            }
        }
        Ok(fd)
    }
}

/// `entry`'s content with `$Id$` expanded, where its `ident` attribute asks for it and the
/// keyword is there; `None` (no allocation) otherwise.
#[inline]
fn expand_ident(own: OwnAttributes<'_>, entry: &plan::Entry, data: &[u8]) -> Option<Vec<u8>> {
    (own.ident && crate::convert::may_have_ident(data))
        .then(|| crate::convert::ident_to_worktree(data, entry.id.to_hex().to_string().as_bytes()))
        .flatten()
}

/// `bytes` re-encoded for a `working-tree-encoding` with `-BOM` (which gix-filter does not
/// know); `None` where there is none. Its failure is git's.
#[inline]
fn encode(
    own: OwnAttributes<'_>,
    entry: &plan::Entry,
    bytes: &[u8],
) -> Result<Option<Vec<u8>>, Failure> {
    let Some(enc) = own.encoding else {
        return Ok(None);
    };
    let encoded = enc.encode(bytes).ok_or_else(|| {
        entry_failure(
            entry,
            format!(
                "failed to encode '{}' from UTF-8 to {}",
                entry.path,
                enc.name()
            ),
        )
    })?;
    Ok(Some(encoded))
}
