//! Three-way merges of local changes, as git's `checkout -m` does them:
//!
//! - **paths** (`checkout -m -- <paths>`, `restore --merge`, `--conflict=<style>`): the conflict
//!   of an unmerged path is recreated in the work tree from the index's stages 1/2/3 (git's
//!   `checkout_merged`); [`BlobMerger`] does the blob merge, [`crate::restore`] the rest.
//! - **branch switches** (`checkout -m <branch>`, `switch -m`): when the two-way update refuses
//!   because of local changes, the work tree's tracked changes become a tree ("local") that is
//!   merged with the new branch over the old `HEAD` (git's `merge_working_tree`); [`switch`].
//!
//! The merge algorithms are gitoxide's (`gix::merge`): the blob merge with git's conflict
//! styles and the `merge`/`conflict-marker-size` attributes, and the tree merge. What is ours is
//! the choreography around them, and that every work-tree write goes through the engine's
//! update and restore (the path-safe layer and the writer pool).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;
use gix::index::entry::{Flags, Mode, Stage, Stat};
use gix::merge::blob::builtin_driver::text::{Conflict, ConflictStyle, Labels};

use crate::fs::Root;
use crate::lock::IndexLock;
use crate::options::Options;
use crate::plan::{self, Kind};
use crate::run::{Context, Error as CheckoutError};

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
    /// `checkout -m <branch>` with changes staged against `HEAD`: git refuses to merge them
    /// (`cannot continue with staged changes in the following files:`); nothing was changed.
    #[error("cannot continue with staged changes in the following files:\n{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "))]
    Staged(Vec<BString>),
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
    Update(#[from] crate::update::Error),
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
    use std::os::unix::ffi::OsStrExt;
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
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(std::ffi::OsStr::from_bytes(&cmd))
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

/// The names git puts on the conflict markers of a branch switch with `-m`.
#[derive(Debug, Clone)]
pub struct SwitchLabels {
    /// The old branch's short name, or the old commit's abbreviated id when `HEAD` was detached
    /// (the `|||||||` marker of `diff3`).
    pub ancestor: String,
    /// The new branch as the user named it (`<<<<<<<`).
    pub ours: String,
}

/// What a merging switch did.
#[derive(Debug, Default)]
pub struct SwitchOutcome {
    /// The forced update from the old tree to the merged one (entries written, per-path errors).
    pub update: crate::update::Outcome,
    /// git's `show_local_changes` after the switch: how the work tree and index differ from the
    /// new branch (`M`, `A`, `D`, or `T`, and the path), in path order.
    pub local_changes: Vec<(char, BString)>,
    /// The paths left in conflict (stages 1/2/3 in the index, markers in the work tree).
    pub conflicts: Vec<BString>,
}

/// git's `merge_working_tree` after a refused two-way switch from `old_tree` to `new_tree`:
/// refuse if the index differs from `old_tree` ([`Error::Staged`], nothing changed); take the
/// tracked work-tree changes as a tree; merge it with `new_tree` over `old_tree` (gix's tree
/// merge, ours = the new branch, theirs = "local"); write the merged tree into the work tree
/// with the forced update; then record the index as git leaves it: `new_tree`'s entries,
/// except the conflicted paths, which carry their stages. Untracked files in the way are the
/// caller's to refuse first (the forced update would remove them).
#[allow(clippy::too_many_arguments)]
pub fn switch(
    repo: &gix::Repository,
    old_tree: ObjectId,
    new_tree: ObjectId,
    worktree: &Path,
    index_path: &Path,
    labels: &SwitchLabels,
    style: Style,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<SwitchOutcome, Error> {
    let mut index = gix::index::File::at(
        index_path,
        repo.object_hash(),
        crate::record::SKIP_HASH_ON_READ,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| Error::Index(Box::new(e)))?;
    crate::sparse::expand(&repo.objects, &mut index).map_err(Error::Index)?;
    let old =
        plan::from_tree(&repo.objects, old_tree, opts.protect).map_err(CheckoutError::from)?;
    let staged = staged_changes(&index, &old.entries);
    if !staged.is_empty() {
        return Err(Error::Staged(staged));
    }
    let local = local_tree(repo, worktree, &index, old_tree, opts)?;
    drop(index);

    let mut tree_options: gix::merge::plumbing::tree::Options = repo
        .tree_merge_options()
        .map_err(merge_err("reading the merge configuration"))?
        .into();
    tree_options.blob_merge.text.conflict = Conflict::Keep {
        style: style.to_gix(),
        marker_size: Conflict::DEFAULT_MARKER_SIZE
            .try_into()
            .expect("seven is not zero"),
    };
    let mut merged = repo
        .merge_trees(
            old_tree,
            new_tree,
            local,
            Labels {
                ancestor: Some(labels.ancestor.as_str().into()),
                current: Some(labels.ours.as_str().into()),
                other: Some("local".into()),
            },
            tree_options.into(),
        )
        .map_err(merge_err("merging the local changes"))?;
    let merged_tree = merged
        .tree
        .write()
        .map_err(merge_err("writing the merged tree"))?
        .detach();
    let stages = conflict_stages(repo, merged_tree, &merged.conflicts)?;

    let update = crate::update::update(
        repo,
        Some(old_tree),
        merged_tree,
        worktree,
        index_path,
        crate::update::Policy::Force,
        opts,
        ctx,
    )?;

    let new =
        plan::from_tree(&repo.objects, new_tree, opts.protect).map_err(CheckoutError::from)?;
    let result =
        plan::from_tree(&repo.objects, merged_tree, opts.protect).map_err(CheckoutError::from)?;
    let (local_changes, conflicts) = record(
        repo,
        worktree,
        index_path,
        &new.entries,
        &result.entries,
        &stages,
    )?;
    Ok(SwitchOutcome {
        update,
        local_changes,
        conflicts,
    })
}

/// git's `repo_index_has_changes(old tree)`: the stage-0 paths whose index entry differs from
/// the old tree's, and the old tree's paths the index lacks, in path order. Intent-to-add
/// entries are no staged change.
fn staged_changes(index: &gix::index::File, old: &[plan::Entry]) -> Vec<BString> {
    let mut in_index: BTreeMap<&BStr, &gix::index::Entry> = BTreeMap::new();
    for e in index.entries() {
        if !e.flags.contains(Flags::INTENT_TO_ADD) {
            in_index.insert(e.path(index), e);
        }
    }
    let mut changed: Vec<BString> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for o in old {
        seen.insert(o.path.as_bstr());
        match in_index.get(o.path.as_bstr()) {
            Some(e) if e.stage_raw() == 0 && e.id == o.id && e.mode == o.kind.index_mode() => {}
            _ => changed.push(o.path.clone()),
        }
    }
    for path in in_index.keys() {
        if !seen.contains(path) {
            changed.push((*path).to_owned());
        }
    }
    changed.sort();
    changed.dedup();
    changed
}

/// git's `add_files_to_cache` + `write_in_core_index_as_tree`: `old_tree` (which the index
/// matches) with every tracked path whose work-tree file changed taken as it is now (modified
/// files hashed through the to-git filters and written as blobs, deleted files removed).
/// Skip-worktree entries are not looked at, as git's `run_diff_files` skips them.
fn local_tree(
    repo: &gix::Repository,
    worktree: &Path,
    index: &gix::index::File,
    old_tree: ObjectId,
    opts: &Options,
) -> Result<ObjectId, Error> {
    use rustix::fs::FileType;
    let root = Root::open(worktree).map_err(|source| Error::Read {
        path: BString::from(worktree.as_os_str().as_encoded_bytes()),
        source,
    })?;
    let items: Vec<crate::refresh::Item<'_>> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() == 0 && !e.flags.contains(Flags::SKIP_WORKTREE))
        .filter(|e| !e.flags.contains(Flags::INTENT_TO_ADD) && e.mode != Mode::COMMIT)
        .map(|entry| crate::refresh::Item {
            path: entry.path(index),
            entry,
        })
        .collect();
    let states = crate::refresh::check(
        repo,
        &root,
        index,
        index.timestamp().unix_seconds(),
        items.iter().copied(),
        opts.workers,
    )
    .map_err(|e| Error::Index(e.into()))?;
    let mut editor = repo
        .edit_tree(old_tree)
        .map_err(merge_err("reading the old tree"))?;
    let file_mode = repo
        .config_snapshot()
        .boolean("core.fileMode")
        .unwrap_or(true);
    let drivers = crate::filter::drivers(repo).map_err(|e| Error::Merge {
        context: "reading filter configuration".into(),
        source: Some(e.into()),
    })?;
    let mut filter = None;
    let mut dirs = root.dirs();
    let mut buf = Vec::new();
    for (item, state) in items.iter().zip(states) {
        let path = item.path;
        if state == crate::refresh::State::Missing {
            editor
                .remove(path)
                .map_err(merge_err("building the local tree"))?;
            continue;
        }
        if !state.is_changed() {
            continue;
        }
        let read = |e| Error::Read {
            path: path.to_owned(),
            source: e,
        };
        let st = dirs.lstat(path).map_err(read)?;
        let Some(st) = st else {
            editor
                .remove(path)
                .map_err(merge_err("building the local tree"))?;
            continue;
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        buf.clear();
        let entry_kind = if kind == FileType::Symlink {
            buf.extend_from_slice(&dirs.read_link(path).map_err(read)?);
            gix::objs::tree::EntryKind::Link
        } else if kind == FileType::RegularFile {
            let filter = match &mut filter {
                Some(f) => f,
                None => filter.insert(
                    crate::filter::ToGit::for_work_tree(repo, index, &drivers).map_err(|e| {
                        Error::Merge {
                            context: "setting up filters".into(),
                            source: Some(e.into()),
                        }
                    })?,
                ),
            };
            crate::refresh::to_git(&mut dirs, path, index, filter, &mut buf, None).map_err(read)?;
            let exec = if file_mode {
                st.st_mode & 0o100 != 0
            } else {
                item.entry.mode == Mode::FILE_EXECUTABLE
            };
            if item.entry.mode == Mode::SYMLINK {
                // core.symlinks=false: the file holds the link's target.
                gix::objs::tree::EntryKind::Link
            } else if exec {
                gix::objs::tree::EntryKind::BlobExecutable
            } else {
                gix::objs::tree::EntryKind::Blob
            }
        } else {
            // A directory (or anything else) where a file was: git's `add_files_to_cache` sees
            // the file as deleted.
            editor
                .remove(path)
                .map_err(merge_err("building the local tree"))?;
            continue;
        };
        let id = repo
            .write_blob(&buf)
            .map_err(merge_err("writing a local change"))?;
        editor
            .upsert(path, entry_kind, id)
            .map_err(merge_err("building the local tree"))?;
    }
    Ok(editor
        .write()
        .map_err(merge_err("writing the local tree"))?
        .detach())
}

/// One conflict stage of a path, for the index.
#[derive(Debug, Clone, Copy)]
struct StageEntry {
    stage: Stage,
    id: ObjectId,
    mode: Mode,
}

/// The unmerged paths of the merge and their stages, as gix's `apply_index_entries` places
/// them in an index of the merged tree (1 = the old tree, 2 = the new branch, 3 = local).
fn conflict_stages(
    repo: &gix::Repository,
    merged_tree: ObjectId,
    conflicts: &[gix::merge::tree::Conflict],
) -> Result<BTreeMap<BString, Vec<StageEntry>>, Error> {
    let mut out: BTreeMap<BString, Vec<StageEntry>> = BTreeMap::new();
    if conflicts.is_empty() {
        return Ok(out);
    }
    let mut state = gix::index::State::from_tree(&merged_tree, &repo.objects, Default::default())
        .map_err(|e| Error::Merge {
        context: "reading the merged tree".into(),
        source: Some(Box::new(e)),
    })?;
    gix::merge::tree::apply_index_entries(
        conflicts,
        gix::merge::tree::TreatAsUnresolved::git(),
        &mut state,
        gix::merge::tree::apply_index_entries::RemovalMode::Prune,
    );
    for e in state.entries() {
        if e.stage_raw() != 0 {
            out.entry(e.path(&state).to_owned())
                .or_default()
                .push(StageEntry {
                    stage: e.stage(),
                    id: e.id,
                    mode: e.mode,
                });
        }
    }
    Ok(out)
}

/// **record** the index a merging switch leaves (git's final `reset_tree(new, worktree=0)`, which
/// skips unmerged entries): the new tree's entries, with the stat data the update just recorded
/// where the work tree holds exactly that entry (else none, so git looks at the file), and the
/// conflicted paths with their stages instead. Returns git's `show_local_changes` list and the
/// conflicted paths.
#[allow(clippy::type_complexity)]
fn record(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    new: &[plan::Entry],
    merged: &[plan::Entry],
    stages: &BTreeMap<BString, Vec<StageEntry>>,
) -> Result<(Vec<(char, BString)>, Vec<BString>), Error> {
    let lock = IndexLock::acquire(index_path).map_err(CheckoutError::from)?;
    let mut updated = gix::index::File::at(
        index_path,
        repo.object_hash(),
        crate::record::SKIP_HASH_ON_READ,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| Error::Index(Box::new(e)))?;
    crate::sparse::expand(&repo.objects, &mut updated).map_err(Error::Index)?;
    let merged_by_path: HashMap<&BStr, &plan::Entry> =
        merged.iter().map(|e| (e.path.as_bstr(), e)).collect();
    let mut state = gix::index::State::new(repo.object_hash());
    let mut changes: Vec<(char, BString)> = Vec::new();
    let root = Root::open(worktree).map_err(|source| Error::Read {
        path: BString::from(worktree.as_os_str().as_encoded_bytes()),
        source,
    })?;
    let mut dirs = root.dirs();
    let mut in_new = std::collections::HashSet::new();
    for n in new {
        in_new.insert(n.path.as_bstr());
        if stages.contains_key(&n.path) {
            continue;
        }
        let mode = n.kind.index_mode();
        match merged_by_path.get(n.path.as_bstr()) {
            Some(m) if m.id == n.id && m.kind == n.kind => {
                let kept = updated
                    .entry_by_path(n.path.as_bstr())
                    .filter(|e| e.stage_raw() == 0 && e.id == n.id && e.mode == mode);
                let (stat, flags) = kept.map_or((Stat::default(), Flags::empty()), |e| {
                    (e.stat, e.flags & Flags::SKIP_WORKTREE)
                });
                state.dangerously_push_entry(stat, n.id, flags, mode, n.path.as_bstr());
                continue;
            }
            Some(m) => {
                let type_changed = file_type(m.kind) != file_type(n.kind);
                changes.push((if type_changed { 'T' } else { 'M' }, n.path.clone()));
            }
            None => changes.push(('D', n.path.clone())),
        }
        state.dangerously_push_entry(
            Stat::default(),
            n.id,
            Flags::empty(),
            mode,
            n.path.as_bstr(),
        );
    }
    for (path, entries) in stages {
        for s in entries {
            state.dangerously_push_entry(
                Stat::default(),
                s.id,
                Flags::from_stage(s.stage),
                s.mode,
                path.as_bstr(),
            );
        }
        let on_disk = dirs.lstat(path.as_bstr()).ok().flatten().is_some();
        let status = match (in_new.contains(path.as_bstr()), on_disk) {
            (true, true) => 'M',
            (true, false) => 'D',
            (false, _) => 'A',
        };
        changes.push((status, path.clone()));
    }
    state.sort_entries();
    changes.sort_by(|a, b| a.1.cmp(&b.1));
    crate::record::commit(
        lock,
        repo,
        state,
        crate::record::Keep {
            tree: None,
            previous: Some(&updated),
            cache_tree: crate::record::CacheTree::Rebuild,
            resolve_undo: None,
            changed_paths: None,
            fsmonitor: None,
        },
    )
    .map_err(CheckoutError::from)?;
    crate::hooks::index_changed(repo, true, false);
    Ok((changes, stages.keys().cloned().collect()))
}

/// The file type an entry kind stands for (the exec bit is no type change).
fn file_type(kind: Kind) -> u8 {
    match kind {
        Kind::File | Kind::Executable => 0,
        Kind::Symlink => 1,
        Kind::Gitlink => 2,
    }
}
