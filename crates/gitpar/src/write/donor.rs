//! A donor work tree: the clean files of another work tree of the same repository, cloned
//! (copy-on-write: the two files share their blocks until one is written) instead of written
//! from the object database, where the filesystem can clone and the donor's copy is exactly
//! what the checkout would write.
//!
//! What is decided here, before the writers start (`Donor::prepare`): whether the donor can
//! give anything at all (a work tree of the same repository, the same conversion
//! configuration, the same `.gitattributes` as the tree checked out, all of them clean, no
//! split index; the filesystem able to clone between the two work trees), and per plan entry
//! whether its donor entry is trustworthy — the same path, object id and mode at stage 0,
//! neither skip-worktree, assume-unchanged nor intent-to-add, older than the donor's index
//! (not racily clean), and at least as big as the crossover. What is decided by the writer,
//! file by file: whether the file's attributes convert it (then it is written), a donor
//! directory with an untracked `.gitattributes` (its files are written), and, on the opened
//! donor file, whether its stat data are still those of its index entry (and, where check-in
//! converts line endings, whether its size is the blob's); after the clone, whether the donor
//! changed meanwhile (`fs::clone_file_at`). Any "no" writes the blob as without a
//! donor: the result is, byte for byte and entry for entry, a plain checkout's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use bstr::{BStr, BString, ByteSlice};

use crate::fs::tune;
use crate::fs::{self, Root};
use crate::plan::{Kind, Plan};

/// Whether a checkout may clone files from a donor (`par.reflink`, `--no-reflink`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reflink {
    /// Clone where the filesystem can (`par.reflink=auto`, the default).
    #[default]
    Auto,
    /// Never clone (`par.reflink=false`, `--no-reflink`).
    Never,
}

impl Reflink {
    /// `par.reflink` from the configuration: `false` (or `no`, `off`, `0`) turns cloning off;
    /// `auto`, `true` and anything else leave it on where the filesystem can.
    pub fn from_config(config: &gix::config::Snapshot<'_>) -> Reflink {
        match config.string("par.reflink") {
            Some(v) if v.eq_ignore_ascii_case(b"auto") => Reflink::Auto,
            _ if config.boolean("par.reflink") == Some(false) => Reflink::Never,
            _ => Reflink::Auto,
        }
    }
}

/// Files smaller than this are written, not cloned, unless `par.reflinkMinSize` says
/// otherwise. A clone is a metadata transaction of its own; measured on a fresh reflink XFS
/// image (`scripts/bench-xfs`, 15 interleaved rounds), cloning tldr's 38,491 small files took
/// 1.04× the time of writing them and allocated 12% of the disk; bigger files only gain (40 of
/// 8 MiB: 0.07× the time, 0.01% of the disk). So every size is cloned.
pub const DEFAULT_MIN_SIZE: u64 = 0;

/// Why a file was written rather than cloned, counted for `GIT_PAR_TRACE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The donor's index has no entry at the path with the same object id and mode at stage 0
    /// (or it is skip-worktree, assume-unchanged or intent-to-add).
    NotInDonor,
    /// The donor's entry is racily clean: not older than the donor's index.
    Racy,
    /// Smaller than the crossover: writing costs less.
    Small,
    /// Its attributes convert it (or may have made the donor's copy differ from the blob).
    Converted,
    /// An untracked `.gitattributes` in the donor could have changed how it was written.
    Attributes,
    /// The donor's file did not match its index entry, or changed while it was cloned.
    Modified,
    /// The clone failed for another reason (the donor unreadable, say).
    Failed,
}

impl Written {
    const ALL: [Written; 7] = [
        Written::NotInDonor,
        Written::Racy,
        Written::Small,
        Written::Converted,
        Written::Attributes,
        Written::Modified,
        Written::Failed,
    ];

    /// The reason in a few words, for the trace.
    pub fn describe(self) -> &'static str {
        match self {
            Written::NotInDonor => "not in the donor's index",
            Written::Racy => "racily clean in the donor",
            Written::Small => "below the clone size",
            Written::Converted => "converted by attributes",
            Written::Attributes => "untracked .gitattributes in the donor",
            Written::Modified => "modified in the donor",
            Written::Failed => "clone failed",
        }
    }
}

/// What a checkout did with its donor, for `GIT_PAR_TRACE`.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The donor work tree.
    pub path: PathBuf,
    /// Why nothing was cloned at all, if so (not the same repository, the filesystem cannot
    /// clone, `.gitattributes` differ, ...).
    pub off: Option<String>,
    /// Files cloned.
    pub cloned: usize,
    /// Files written instead, per reason.
    pub written: Vec<(Written, usize)>,
    /// The first error a clone met, if any (why cloning stopped, when the filesystem said it
    /// cannot).
    pub failure: Option<String>,
}

/// The donor of one checkout, shared by its writers.
pub(crate) struct Donor {
    root: Root,
    /// Per plan entry: the donor index's stat data of a trustworthy entry, or why the file is
    /// written ([`Donor::prepare`]).
    entries: Vec<Result<gix::index::entry::Stat, Written>>,
    /// The donor's tracked `.gitattributes` files (all of them clean).
    attribute_files: std::collections::HashSet<BString>,
    /// The plan's directories (sorted), and per directory whether the donor has no untracked
    /// `.gitattributes` there nor above: decided by the first writer that needs it.
    plan_dirs: Vec<BString>,
    dirs: Vec<OnceLock<bool>>,
    /// Whether the root has none.
    top: OnceLock<bool>,
    /// Set when a clone says the filesystem cannot: the writers stop trying.
    unsupported: AtomicBool,
    cloned: AtomicUsize,
    written: [AtomicUsize; Written::ALL.len()],
    failure: std::sync::Mutex<Option<String>>,
    /// The filesystem's `f_type` magic number (see [`Donor::writers`]).
    kind: u64,
    /// How many plan entries may be cloned.
    candidates: usize,
    report: Report,
}

impl Donor {
    /// The donor at `path` for the checkout of `plan` into `target` (the repository `repo`
    /// opened on the new work tree): every plan entry the donor may give. `Err` says why the
    /// donor gives nothing (the caller writes every file, and reports it).
    pub(crate) fn prepare(
        repo: &gix::Repository,
        plan: &Plan,
        target: &Root,
        path: &Path,
        min_size: u64,
    ) -> Result<Donor, Error> {
        // Only the same filesystem, of a kind that can clone, is worth opening the donor's
        // repository and reading its index for (tmpfs and ext4 cannot: a plain checkout there
        // pays one statfs). `path` is the top of the donor's work tree, as the callers name it;
        // a work tree found elsewhere is checked again.
        let root = Root::open(path).map_err(Error::Open)?;
        let kind = can_clone(&root, target)?;
        let (donor, workdir) = open_donor(repo, target, path)?;
        let (root, kind) = if workdir == path {
            (root, kind)
        } else {
            let root = Root::open(&workdir).map_err(Error::Open)?;
            let kind = can_clone(&root, target)?;
            (root, kind)
        };
        let (index, stamp) = read_index(&donor)?;
        let attribute_files = same_attributes(repo, plan, &index, &root)?;
        let entries = trusted_entries(plan, &index, stamp, min_size);
        probe(&root, target, &entries, plan)?;
        let candidates = entries.iter().filter(|e| e.is_ok()).count();
        Ok(Donor {
            kind,
            candidates,
            root,
            entries,
            attribute_files,
            plan_dirs: {
                let mut dirs = plan.dirs.clone();
                dirs.sort_unstable();
                dirs
            },
            dirs: (0..plan.dirs.len()).map(|_| OnceLock::new()).collect(),
            top: OnceLock::new(),
            unsupported: AtomicBool::new(false),
            cloned: AtomicUsize::new(0),
            written: Default::default(),
            failure: std::sync::Mutex::new(None),
            report: Report {
                path: path.to_owned(),
                ..Report::default()
            },
        })
    }

    /// The most writers for a run of `n` files where the donor gives most of them, if cloning
    /// wants fewer than writing does. A clone is a metadata transaction that locks shared
    /// structures (XFS's refcount btree and log, btrfs's trees), so clones scale worse than
    /// writes. Measured on 2 CPUs (tldr's 38,491 files, each cloned, fresh images, medians of 5
    /// to 7 alternated runs): XFS with reflink 594 ms with 1 writer, 469 with 2, 537 with 3,
    /// 579 with 4, 663 with 8; btrfs 673 with 1, 733 with 2, 732 with 4.
    pub(crate) fn writers(&self, n: usize) -> Option<usize> {
        if self.candidates * 2 < n {
            return None;
        }
        match self.kind {
            tune::BTRFS_MAGIC => Some(1),
            // XFS: no more writers than CPUs.
            tune::XFS_MAGIC => Some(crate::sys::cpus::online_cpus()),
            _ => None,
        }
    }

    /// The donor's root, for the writers' directory caches.
    pub(crate) fn root(&self) -> &Root {
        &self.root
    }

    /// The donor index's stat data for plan entry `entry`, if its file may be cloned, else
    /// why it is written.
    pub(crate) fn candidate(&self, entry: usize) -> Result<&gix::index::entry::Stat, Written> {
        if self.unsupported.load(Ordering::Relaxed) {
            return Err(Written::Failed);
        }
        match self.entries.get(entry) {
            Some(Ok(stat)) => Ok(stat),
            Some(Err(why)) => Err(*why),
            None => Err(Written::NotInDonor),
        }
    }

    /// Returns true if and only if no untracked `.gitattributes` of the donor applies to files
    /// in `dir` (one of `plan.dirs`, or the root): decided once per directory, by the first
    /// writer to ask, with an `lstat` in each directory from the root down.
    pub(crate) fn attributes_clean(&self, dirs: &mut fs::Dirs<'_>, dir: &BStr) -> bool {
        let top = || self.untracked_attributes_in(dirs, b"".as_bstr());
        if !*self.top.get_or_init(top) {
            return false;
        }
        self.dir_clean(dirs, dir)
    }

    fn dir_clean(&self, dirs: &mut fs::Dirs<'_>, dir: &BStr) -> bool {
        if dir.is_empty() {
            return true;
        }
        let Ok(k) = self.plan_dirs.binary_search_by(|d| d.as_bstr().cmp(dir)) else {
            return false;
        };
        if let Some(done) = self.dirs[k].get() {
            return *done;
        }
        let parent = fs::split_path(dir).0;
        let clean = self.dir_clean(dirs, parent) && self.untracked_attributes_in(dirs, dir);
        *self.dirs[k].get_or_init(|| clean)
    }

    /// Returns true if and only if `dir` of the donor holds no `.gitattributes` that its index
    /// does not track (tracked ones were checked clean by [`Donor::prepare`]).
    fn untracked_attributes_in(&self, dirs: &mut fs::Dirs<'_>, dir: &BStr) -> bool {
        let mut path = BString::from(dir);
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(b".gitattributes");
        match dirs.lstat(path.as_bstr()) {
            Ok(None) => true,
            Ok(Some(_)) => self.attribute_files.contains(&path),
            Err(_) => false,
        }
    }

    /// Count a file written for `why`.
    pub(crate) fn count(&self, why: Written) {
        let k = Written::ALL.iter().position(|w| *w == why).unwrap_or(0);
        self.written[k].fetch_add(1, Ordering::Relaxed);
    }

    /// Count a file cloned.
    pub(crate) fn cloned(&self) {
        self.cloned.fetch_add(1, Ordering::Relaxed);
    }

    /// A clone failed with `err`: counted, the first error kept for the report; with
    /// `unsupported` (the filesystem cannot clone), every file is written from now on.
    pub(crate) fn failed(&self, err: &std::io::Error, unsupported: bool) {
        if unsupported {
            self.unsupported.store(true, Ordering::Relaxed);
        }
        self.count(Written::Failed);
        let mut first = self
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        first.get_or_insert_with(|| fs::strerror(err));
    }

    /// What was cloned and written, and why.
    pub(crate) fn report(&self) -> Report {
        let mut report = self.report.clone();
        report.cloned = self.cloned.load(Ordering::Relaxed);
        report.failure = self
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        report.written = Written::ALL
            .iter()
            .zip(&self.written)
            .map(|(w, n)| (*w, n.load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .collect();
        report
    }
}

/// Why a donor gives nothing: the caller writes every file, and reports this.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The path does not open as a repository.
    #[error("not a git work tree: {0}")]
    NotAWorkTree(gix::Error),
    /// A bare repository.
    #[error("a bare repository has no work tree")]
    Bare,
    /// A work tree of another repository.
    #[error("a work tree of another repository")]
    OtherRepository,
    /// The work tree being checked out itself.
    #[error("the work tree being checked out")]
    Itself,
    /// Its `core.autocrlf`, `core.eol` or `core.attributesFile` differ from the checkout's.
    #[error("its end-of-line or attributes configuration differs")]
    Configuration,
    /// Its work tree cannot be opened.
    #[error("cannot open it: {0}")]
    Open(#[source] std::io::Error),
    /// Its index cannot be found or its time read.
    #[error("cannot read its index: {0}")]
    IndexTime(#[source] std::io::Error),
    /// Its index cannot be read.
    #[error("cannot read its index: {0}")]
    Index(gix::Error),
    /// Its index is split.
    #[error("its index is split (core.splitIndex)")]
    SplitIndex,
    /// Its tracked `.gitattributes` are not the checkout's.
    #[error("its .gitattributes differ from the checkout's")]
    AttributesDiffer,
    /// This `.gitattributes` of it is not clean.
    #[error("its {0} is modified")]
    AttributesModified(BString),
    /// The filesystem cannot clone between the two work trees.
    #[error(transparent)]
    Unclonable(#[from] Unclonable),
}

/// Why the filesystem cannot clone from the donor into the target ([`can_clone`], [`probe`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unclonable {
    /// The two work trees are on different filesystems.
    #[error("it is on another filesystem")]
    OtherFilesystem,
    /// `fstatfs` failed.
    #[error("cannot tell the filesystem")]
    UnknownFilesystem,
    /// A filesystem (this `f_type`) that cannot clone.
    #[error("the filesystem (type {0:#x}) cannot clone")]
    Kind(u64),
    /// The probe's clone failed.
    #[error("the filesystem cannot clone between the two work trees ({})", fs::strerror(.0))]
    Probe(#[source] std::io::Error),
    /// None of the probed files was there.
    #[error("its files are not there")]
    Gone,
}

/// The donor repository at `path` and its work tree, if it is a work tree of `repo`'s
/// repository other than `target`, with the same configuration of what converts files (which
/// may differ per work tree: `config.worktree`).
fn open_donor(
    repo: &gix::Repository,
    target: &Root,
    path: &Path,
) -> Result<(gix::Repository, PathBuf), Error> {
    let donor = gix::open_opts(
        path,
        gix::open::Options::default().with(gix::sec::Trust::Full),
    )
    .map_err(Error::NotAWorkTree)?;
    let workdir = donor.workdir().ok_or(Error::Bare)?.to_owned();
    let same = |a: &Path, b: &Path| matches!((crate::sys::canonicalize(a), crate::sys::canonicalize(b)), (Ok(a), Ok(b)) if a == b);
    if !same(donor.common_dir(), repo.common_dir()) {
        return Err(Error::OtherRepository);
    }
    if same(&workdir, target.path()) {
        return Err(Error::Itself);
    }
    let (ours, theirs) = (repo.config_snapshot(), donor.config_snapshot());
    if crate::convert::EolConfig::of(&ours) != crate::convert::EolConfig::of(&theirs)
        || ours.string("core.attributesFile") != theirs.string("core.attributesFile")
    {
        return Err(Error::Configuration);
    }
    Ok((donor, workdir))
}

/// The donor's index, and its modification time in seconds: an entry not older than it is
/// racily clean. The time is read before the index itself, so that an index rewritten
/// meanwhile only makes more entries racy. A split index is refused.
fn read_index(donor: &gix::Repository) -> Result<(gix::index::File, i64), Error> {
    let index_path = donor.index_path();
    let stamp = crate::fs::stat_path(&index_path).map_err(Error::IndexTime)?;
    let index = gix::index::File::at(
        &index_path,
        donor.object_hash(),
        crate::index::format::SKIP_HASH_ON_READ,
        gix::index::decode::Options::default(),
    )
    .map_err(Error::Index)?;
    if index.link().is_some() {
        return Err(Error::SplitIndex);
    }
    Ok((index, stamp.st_mtime))
}

/// Returns true if and only if the donor's entry `e` may be trusted to describe its file: at
/// stage 0, neither skip-worktree, assume-unchanged nor intent-to-add.
fn trusted(e: &gix::index::Entry) -> bool {
    use gix::index::entry::Flags;
    e.stage_raw() == 0
        && !e
            .flags
            .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD)
}

/// The donor's tracked `.gitattributes` files, if they are the same blobs at the same paths as
/// the plan's, each clean in the donor (`root`).
fn same_attributes(
    repo: &gix::Repository,
    plan: &Plan,
    index: &gix::index::File,
    root: &Root,
) -> Result<std::collections::HashSet<BString>, Error> {
    let is_attributes = |p: &BStr| p == ".gitattributes" || p.ends_with(b"/.gitattributes");
    let theirs: Vec<(&BStr, &gix::index::Entry)> = index
        .entries()
        .iter()
        .map(|e| (e.path(index), e))
        .filter(|(p, e)| is_attributes(p) && e.stage_raw() == 0)
        .collect();
    let ours: Vec<(&BStr, gix::ObjectId)> = plan
        .entries
        .iter()
        .filter(|e| is_attributes(e.path.as_bstr()))
        .map(|e| (e.path.as_bstr(), e.id))
        .collect();
    if theirs.len() != ours.len()
        || theirs
            .iter()
            .zip(&ours)
            .any(|((p, e), (q, id))| p != q || e.id != *id)
    {
        return Err(Error::AttributesDiffer);
    }
    // Their content is compared, not their stat data: a racily clean attribute file (a donor
    // checked out a moment ago) is as good as any once read.
    let mut dirs = root.dirs();
    for (p, e) in &theirs {
        let same = trusted(e)
            && dirs
                .open_regular(p)
                .ok()
                .flatten()
                .and_then(|(mut file, _)| {
                    let mut bytes = Vec::new();
                    std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
                    let blob = repo.find_object(e.id).ok()?;
                    Some(blob.data == bytes)
                })
                == Some(true);
        if !same {
            return Err(Error::AttributesModified((*p).to_owned()));
        }
    }
    Ok(theirs.iter().map(|(p, _)| (*p).to_owned()).collect())
}

/// Per plan entry, the donor index's stat data where its entry is trustworthy (the same path,
/// object id and mode, [`trusted`], older than the index's time `stamp`, at least `min_size`
/// bytes), else why the file is written. The plan and the index are both in index order: one
/// merge of the two.
fn trusted_entries(
    plan: &Plan,
    index: &gix::index::File,
    stamp: i64,
    min_size: u64,
) -> Vec<Result<gix::index::entry::Stat, Written>> {
    let racy = |stat: &gix::index::entry::Stat| i64::from(stat.mtime.secs) >= stamp;
    let mut entries = vec![Err(Written::NotInDonor); plan.entries.len()];
    let donor_entries = index.entries();
    let mut j = 0;
    for (k, entry) in plan.entries.iter().enumerate() {
        if !matches!(entry.kind, Kind::File | Kind::Executable) {
            continue;
        }
        let path = entry.path.as_bstr();
        while j < donor_entries.len() && donor_entries[j].path(index) < path {
            j += 1;
        }
        // Stage 0 sorts first among the stages of a path.
        let Some(e) = donor_entries.get(j).filter(|e| e.path(index) == path) else {
            continue;
        };
        if e.id != entry.id || e.mode != entry.kind.index_mode() || !trusted(e) {
            continue;
        }
        entries[k] = if racy(&e.stat) {
            Err(Written::Racy)
        } else if u64::from(e.stat.size) < min_size {
            Err(Written::Small)
        } else {
            Ok(e.stat)
        };
    }
    entries
}

/// Returns true if and only if the donor file's stat data `st` are those its index recorded
/// (`entry`): size, inode, owner, and times to the nanosecond. git built without `USE_NSEC`
/// compares the times in seconds only, and so calls clean a file rewritten to the same size
/// within a second of its refresh with its mtime put back; its ctime's nanoseconds tell, and
/// such a file is written. (The price: where git left an entry's nanoseconds stale, a `touch`
/// within the second of a refresh, the file is written rather than cloned.)
pub(crate) fn matches(entry: &gix::index::entry::Stat, st: &crate::fs::Stat) -> bool {
    let now = fs::index_stat(st);
    (now.mtime, now.ctime, now.ino, now.uid, now.gid, now.size)
        == (
            entry.mtime,
            entry.ctime,
            entry.ino,
            entry.uid,
            entry.gid,
            entry.size,
        )
}

/// Filesystems whose files may share blocks (`FICLONE`): XFS (when made with `reflink=1`,
/// which only a clone tells), btrfs, bcachefs, OCFS2, ZFS 2.2 (block cloning), NFS 4.2 and SMB
/// (the server clones, where it can).
const CLONING: &[u64] = &[
    tune::XFS_MAGIC,
    tune::BTRFS_MAGIC,
    tune::BCACHEFS_MAGIC,
    0x7461_636f, // OCFS2
    tune::ZFS_MAGIC,
    tune::NFS_MAGIC,
    tune::SMB2_MAGIC,
    tune::CIFS_MAGIC,
    tune::REFS_MAGIC,
];

/// Whether the donor and the target are one filesystem of a kind that can clone: its `f_type`.
fn can_clone(donor: &Root, target: &Root) -> Result<u64, Unclonable> {
    let stat = |root: &Root| crate::fs::volume_id(root.fd());
    if stat(donor).ok() != stat(target).ok() {
        return Err(Unclonable::OtherFilesystem);
    }
    let kind = tune::magic(target.fd()).ok_or(Unclonable::UnknownFilesystem)?;
    if CLONING.contains(&kind) {
        Ok(kind)
    } else {
        Err(Unclonable::Kind(kind))
    }
}

/// Whether the filesystem clones from the donor into `target`: a candidate's donor file
/// (the first few that are there) cloned into an unnamed file of the target's root
/// (`O_TMPFILE`, gone when closed). Without a candidate there is nothing to probe.
fn probe(
    donor: &Root,
    target: &Root,
    entries: &[Result<gix::index::entry::Stat, Written>],
    plan: &Plan,
) -> Result<(), Unclonable> {
    if !entries.iter().any(Result::is_ok) {
        // Nothing to clone: the counts say why (racily clean, modified, ...).
        return Ok(());
    }
    let mut dirs = donor.dirs();
    let mut last = None;
    for k in (0..entries.len())
        .filter(|&k| entries[k].is_ok())
        .take(PROBES)
    {
        let (dir, name) = fs::split_path(plan.entries[k].path.as_bstr());
        let probed = dirs
            .dir(dir)
            .and_then(|fd| fs::clone_probe(fd, name, target.fd()));
        match probed {
            Ok(()) => return Ok(()),
            Err(err) if fs::is_not_there(&err) => last = Some(err),
            Err(err) => return Err(Unclonable::Probe(err)),
        }
    }
    match last {
        Some(_) => Err(Unclonable::Gone),
        None => Ok(()),
    }
}

/// How many donor files the probe tries before it concludes they are gone.
const PROBES: usize = 16;
