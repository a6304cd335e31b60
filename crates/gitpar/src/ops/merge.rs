//! Three-way merges of unmerged paths, as git's `checkout -m -- <paths>`, `restore --merge` and
//! `--conflict=<style>` do them: the conflict of an unmerged path is recreated in the work tree
//! from the index's stages 1/2/3 (git's `checkout_merged`); [`BlobMerger`] does the blob merge,
//! `restore` the rest.
//!
//! The merge algorithm is gitoxide's (`gix::merge`): the blob merge with git's conflict styles
//! and the `merge`/`conflict-marker-size` attributes. What is ours is the choreography around
//! it, and that every work-tree write goes through the engine's restore (the path-safe layer).
//! A branch switch that has local changes to merge (`switch -m`, `checkout -m <branch>`) is
//! git's whole ([`crate::ops::switch::Error::MergeIsGits`]): merge-ort's renames, directory/file
//! conflicts and `~local` names are its own.

use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;
use gix::index::entry::Mode;
use gix::merge::blob::builtin_driver::text::{Conflict, ConflictStyle, Labels};

use crate::fs::Root;
use crate::write::error::Error as CheckoutError;

/// How conflicts are marked in a merged file (`--conflict=<style>`, `merge.conflictStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// `<<<<<<<`, `=======`, `>>>>>>>` around both sides (git's default).
    #[default]
    Merge,
    /// Also the base version, after `|||||||`.
    Diff3,
    /// `diff3` with the lines both sides share moved out of the conflict.
    ZealousDiff3,
}

impl Style {
    /// git's `parse_conflict_style_name`: `merge`, `diff3` or `zdiff3`, case-sensitive; `None`
    /// for anything else (git: `unknown conflict style '<name>'`).
    pub fn parse(name: &str) -> Option<Style> {
        match name {
            "merge" => Some(Style::Merge),
            "diff3" => Some(Style::Diff3),
            "zdiff3" => Some(Style::ZealousDiff3),
            _ => None,
        }
    }

    /// The style `merge.conflictStyle` configures (git's `git_xmerge_style`), [`Style::Merge`]
    /// when unset or not understood: `--conflict` overrides it, and without it this is what
    /// git's `ll_merge` falls back to.
    pub fn configured(repo: &gix::Repository) -> Style {
        repo.config_snapshot()
            .string("merge.conflictStyle")
            .and_then(|v| Style::parse(&v.to_str_lossy()))
            .unwrap_or_default()
    }

    fn to_gix(self) -> ConflictStyle {
        match self {
            Style::Merge => ConflictStyle::Merge,
            Style::Diff3 => ConflictStyle::Diff3,
            Style::ZealousDiff3 => ConflictStyle::ZealousDiff3,
        }
    }
}

/// Why a merge failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// gitoxide's blob or tree merge, or writing its result to the object database, failed.
    #[error("{context}{}", .source.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
    Merge {
        /// What was being merged or written (`path 'x': cannot merge`, `writing the merged
        /// tree`).
        context: String,
        /// gitoxide's error, when it gave one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The index could not be read.
    #[error("unable to read the index: {0}")]
    Index(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A work tree file could not be read to take it into the merge.
    #[error("unable to read '{path}': {source}")]
    Read {
        /// The path.
        path: BString,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// The forced update to the merged tree failed.
    #[error(transparent)]
    Update(#[from] crate::ops::update::Error),
    /// Writing the index failed.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
}

/// git's `path '<path>': cannot merge`, with gitoxide's reason when there is one.
fn cannot_merge(path: &BStr, source: Option<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    Error::Merge {
        context: format!("path '{path}': cannot merge"),
        source,
    }
}

fn merge_err(context: &str) -> impl FnOnce(gix::Error) -> Error + '_ {
    move |e| Error::Merge {
        context: context.to_owned(),
        source: Some(Box::new(e)),
    }
}

/// The result of one blob merge.
#[derive(Debug, Clone, Copy)]
pub struct MergedBlob {
    /// The merged content, written to the object database (git writes it too): conflict markers
    /// where the sides conflict, or our side for a binary conflict.
    pub id: ObjectId,
    /// The sides conflicted (markers were written, or a binary conflict kept ours).
    pub conflict: bool,
    /// The content was binary and conflicted: git warns `Cannot merge binary files: <path>
    /// (ours vs. theirs)`.
    pub binary: bool,
}

/// Merges blobs of one repository, one path at a time, with the configured drivers and
/// attributes: the state (attribute stack, filters, drivers) is set up once for many paths.
pub struct BlobMerger<'r> {
    repo: &'r gix::Repository,
    /// The work tree: custom merge drivers run at its top, on temporary files created there.
    root: Root,
    platform: gix::merge::blob::Platform,
    options: gix::merge::blob::platform::merge::Options,
    context: gix::command::Context,
    buf: Vec<u8>,
}

impl<'r> BlobMerger<'r> {
    /// A merger for `repo` with its work tree at `worktree` that marks conflicts in `style`
    /// (the marker size comes from each path's `conflict-marker-size` attribute, the driver from
    /// its `merge` attribute).
    pub fn new(repo: &'r gix::Repository, worktree: &Path, style: Style) -> Result<Self, Error> {
        let root = Root::open(worktree).map_err(|source| Error::Read {
            path: BString::from(worktree.as_os_str().as_encoded_bytes()),
            source,
        })?;
        let mut platform = repo
            .merge_resource_cache(Default::default())
            .map_err(merge_err("setting up the blob merge"))?;
        // The attributes (`merge`, `conflict-marker-size`) as git's `ll_merge` reads them: the
        // work tree's `.gitattributes` first, then the index's (gix's default here reads only
        // the index's: t6406.5's uncommitted `conflict-marker-size=32` was not seen).
        let index = repo
            .index_or_empty()
            .map_err(merge_err("reading the index for attributes"))?;
        platform.attr_stack = repo
            .attributes_only(
                &index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .map_err(merge_err("reading attributes"))?
            .detach();
        let mut options = repo
            .blob_merge_options()
            .map_err(merge_err("reading the merge configuration"))?;
        options.text.conflict = Conflict::Keep {
            style: style.to_gix(),
            marker_size: Conflict::DEFAULT_MARKER_SIZE
                .try_into()
                .expect("seven is not zero"),
        };
        let context = repo
            .command_context()
            .map_err(merge_err("setting up merge drivers"))?;
        Ok(BlobMerger {
            repo,
            root,
            platform,
            options,
            context,
            buf: Vec::new(),
        })
    }

    /// Merge `ours` and `theirs` (object id and index mode) over `base` (`None`: an empty
    /// base, as for an add/add conflict) for `path`, labelling the sides as git's
    /// `checkout_merged` does ("base", "ours", "theirs"), and write the result as a blob.
    pub fn merge(
        &mut self,
        path: &BStr,
        base: Option<(ObjectId, Mode)>,
        ours: (ObjectId, Mode),
        theirs: (ObjectId, Mode),
    ) -> Result<MergedBlob, Error> {
        use gix::merge::blob::ResourceKind;
        use gix::objs::tree::EntryKind;
        let kind = |mode: Mode| {
            if mode == Mode::FILE_EXECUTABLE {
                EntryKind::BlobExecutable
            } else {
                EntryKind::Blob
            }
        };
        let null = ObjectId::null(self.repo.object_hash());
        let base = base.unwrap_or((null, Mode::FILE));
        for ((id, mode), side) in [
            (base, ResourceKind::CommonAncestorOrBase),
            (ours, ResourceKind::CurrentOrOurs),
            (theirs, ResourceKind::OtherOrTheirs),
        ] {
            self.platform
                .set_resource(id, kind(mode), path, side, &self.repo.objects)
                .map_err(|e| cannot_merge(path, Some(Box::new(e))))?;
        }
        let prepared = self
            .platform
            .prepare_merge(&self.repo.objects, self.options)
            .map_err(|e| cannot_merge(path, Some(Box::new(e))))?;
        let labels = Labels {
            ancestor: Some("base".into()),
            current: Some("ours".into()),
            other: Some("theirs".into()),
        };
        let failed = |e: &dyn std::fmt::Display| cannot_merge(path, Some(e.to_string().into()));
        let (id, conflict) = match prepared.configured_driver() {
            Ok(driver) => {
                let command = driver.command.clone();
                let marker_size = prepared
                    .options
                    .text
                    .conflict
                    .marker_size()
                    .unwrap_or(Conflict::DEFAULT_MARKER_SIZE);
                let sides = [&prepared.ancestor, &prepared.current, &prepared.other]
                    .map(|side| side.data.as_slice().unwrap_or_default().to_vec());
                let (result, conflict) =
                    run_driver(&self.root, command.as_bstr(), path, marker_size, &sides)
                        .map_err(|e| failed(&e))?;
                let id = self
                    .repo
                    .write_blob(&result)
                    .map_err(merge_err("writing the merge result"))?
                    .detach();
                (id, conflict)
            }
            Err(_) => {
                let (pick, resolution) = prepared
                    .merge(&mut self.buf, labels, &self.context)
                    .map_err(|e| failed(&e))?;
                let id = prepared
                    .id_by_pick(pick, &self.buf, |data| {
                        self.repo.write_blob(data).map(gix::Id::detach)
                    })
                    .map_err(merge_err("writing the merge result"))?
                    .ok_or_else(|| cannot_merge(path, None))?;
                (id, resolution == gix::merge::blob::Resolution::Conflict)
            }
        };
        // A text conflict writes markers; a binary one keeps our side as it is.
        let binary = conflict && id == ours.0;
        Ok(MergedBlob {
            id,
            conflict,
            binary,
        })
    }
}

/// git's `ll_ext_merge` for `checkout -m`: the three sides go to temporary files at the top of
/// the work tree (`.merge_file_*`, created exclusively through the path-safe layer, relative
/// names as git's), the driver's command runs there through `sh -c` with `%O %A %B` (the files),
/// `%L` (marker size), `%P` (the path), `%S %X %Y` (the labels "base", "ours", "theirs")
/// substituted, shell-quoted; what it leaves in `%A` is the result, and a non-zero exit means
/// a conflict. gix's own driver runner passes unquoted absolute paths (a work tree with spaces
/// breaks) and treats a non-zero exit as a failure, so the driver is run here.
fn run_driver(
    root: &Root,
    command: &BStr,
    path: &BStr,
    marker_size: u8,
    sides: &[Vec<u8>; 3],
) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::Read;
    let mut dirs = root.dirs();
    let mut names: Vec<BString> = Vec::new();
    let cleanup = |dirs: &mut crate::fs::Dirs<'_>, names: &[BString]| {
        for name in names {
            let _ = dirs.unlink(name.as_bstr());
        }
    };
    let pid = std::process::id();
    let mut attempt = 0u32;
    for data in sides {
        loop {
            attempt += 1;
            let name = BString::from(format!(".merge_file_{pid}_{attempt}"));
            let dir = dirs.dir(BStr::new(""))?;
            match crate::fs::create_file_at(dir, name.as_bstr(), data, false) {
                Ok(_) => {
                    names.push(name);
                    break;
                }
                Err(crate::fs::CreateError::Create(e))
                    if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => {}
                Err(e) => {
                    let err = std::io::Error::new(e.io().kind(), e.io().to_string());
                    cleanup(&mut dirs, &names);
                    return Err(err);
                }
            }
        }
    }
    let quote = |s: &[u8]| {
        let mut out = Vec::from(&b"'"[..]);
        for &b in s {
            if b == b'\'' {
                out.extend_from_slice(b"'\\''");
            } else {
                out.push(b);
            }
        }
        out.push(b'\'');
        out
    };
    let mut cmd: Vec<u8> = Vec::new();
    let mut bytes = command.iter().copied().peekable();
    while let Some(b) = bytes.next() {
        if b != b'%' {
            cmd.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'O') => cmd.extend(quote(&names[0])),
            Some(b'A') => cmd.extend(quote(&names[1])),
            Some(b'B') => cmd.extend(quote(&names[2])),
            Some(b'L') => cmd.extend_from_slice(marker_size.to_string().as_bytes()),
            Some(b'P') => cmd.extend(quote(path)),
            Some(b'S') => cmd.extend(quote(b"base")),
            Some(b'X') => cmd.extend(quote(b"ours")),
            Some(b'Y') => cmd.extend(quote(b"theirs")),
            Some(b'%') => cmd.push(b'%'),
            Some(other) => cmd.extend_from_slice(&[b'%', other]),
            None => cmd.push(b'%'),
        }
    }
    let status = crate::sys::shell()
        .arg("-c")
        .arg(&*cmd.to_os_str_lossy())
        .current_dir(root.path())
        .status();
    let result = status.and_then(|status| {
        let mut out = Vec::new();
        dirs.open_read(names[1].as_bstr())?.read_to_end(&mut out)?;
        Ok((out, !status.success()))
    });
    cleanup(&mut dirs, &names);
    result
}
