//! `.worktreeinclude`: the donor's ignored files a new work tree starts with (issue 22).
//!
//! `git par worktree add` checks a new work tree out and then carries over, from an existing work
//! tree of the same repository (the donor), the ignored files that the donor's top-level
//! `.worktreeinclude` names: build caches such as `target/` or `node_modules/`, which would
//! otherwise be rebuilt from nothing. The file has gitignore syntax and is the one agent tools use
//! for the same purpose. A path is carried if and only if it is ignored in the donor (git's rules:
//! `.gitignore` files, `info/exclude`, `core.excludesFile`; tracked paths are never ignored) and
//! the last `.worktreeinclude` pattern matching it (or one of its directories) is not a negation.
//! As in gitignore, a matched directory brings everything below it, and a negation cannot take a
//! path back out of a matched directory (`target/*` with `!target/tmp/` can, `target/` cannot).
//!
//! Two steps, as everywhere in the engine: `plan` walks the donor through the path-safe layer
//! (`crate::fs`: no symlink is followed, nothing outside the donor is read, a nested repository is
//! not entered, directories no pattern can reach are not read) and decides; then the directories
//! are made, in order, and the files and symlinks are carried by a few threads, each over a
//! contiguous part of the sorted list with its own directory caches. A regular file is cloned
//! (`fs::clone_file_at`) where the filesystem can share blocks, copied otherwise; a symlink is
//! made again with the donor's target, never followed. Nothing in the new work tree is
//! overwritten: a path that is tracked there, or that exists there, is reported in
//! [`Carried::skipped`](crate::ops::carry::Carried::skipped) with why, and the walk and the other paths go on.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use crate::fs::FileType;
use bstr::{BStr, BString, ByteSlice};
use gix::glob::pattern::Case;
use gix::index::entry::Mode;

use crate::fs::{self, CloneError, CreateError, Dirs, Root};
use crate::write::error::Error;

/// The file at the donor's top that says what to carry.
const INCLUDE_FILE: &str = ".worktreeinclude";

/// What carry did.
#[derive(Debug, Default)]
pub struct Carried {
    /// Regular files cloned (their blocks shared with the donor's).
    pub cloned: usize,
    /// Regular files copied (the filesystem cannot clone, or `reflink` was false).
    pub copied: usize,
    /// Symlinks made with the donor's targets.
    pub symlinks: usize,
    /// Directories made in the new work tree.
    pub dirs: usize,
    /// Paths not carried, with why (already exists in the new work tree, tracked there,
    /// unreadable...).
    pub skipped: Vec<(BString, String)>,
}

/// Carry the donor's ignored files that `.worktreeinclude` (at the donor's top) matches into
/// `target`.
///
/// `donor` is the donor work tree's repository (gix, opened on the donor work tree), `target` the
/// new work tree's directory, `tracked` the new work tree's index (paths never overwritten),
/// `reflink` whether cloning may be tried (false: copy only), `threads` the parallelism.
/// Without `.worktreeinclude` it returns `Ok(Carried::default())` having read nothing else; with
/// something other than a regular file in its place (a symlink is not followed) it returns that
/// path in [`Carried::skipped`] and carries nothing.
///
/// Only a failure to open either work tree or to read the donor's ignore rules is an error; a
/// path that cannot be carried is reported in [`Carried::skipped`].
pub fn carry(
    donor: &gix::Repository,
    target: &Path,
    tracked: &gix::index::State,
    reflink: bool,
    threads: usize,
) -> Result<Carried, Error> {
    let workdir = donor.workdir().ok_or_else(|| Error::Repository {
        context: "the donor has no work tree",
        source: Box::new(io::Error::other("a bare repository cannot be a donor")),
    })?;
    let donor_root = Root::open(workdir).map_err(io_error("opening the donor work tree"))?;
    let mut carried = Carried::default();
    let case = if donor.config_snapshot().boolean("core.ignoreCase") == Some(true) {
        Case::Fold
    } else {
        Case::Sensitive
    };
    let Some(include) = Include::read(&donor_root, case, &mut carried.skipped)
        .map_err(io_error("reading the donor's .worktreeinclude"))?
    else {
        return Ok(carried);
    };
    let target_root = Root::open(target).map_err(io_error("opening the new work tree"))?;
    let plan = plan(donor, &donor_root, &include, tracked, &mut carried.skipped)?;
    let items = make_dirs(&target_root, plan, &mut carried);
    let done = carry_items(&donor_root, &target_root, &items, reflink, threads);
    carried.cloned = done.cloned;
    carried.copied = done.copied;
    carried.symlinks = done.symlinks;
    carried.skipped.extend(done.skipped);
    carried.skipped.sort();
    Ok(carried)
}

/// The `map_err` of a system call that carrying cannot go on without: the error says which step
/// failed, since the system's message names no path.
fn io_error(context: &'static str) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::Repository {
        context,
        source: Box::new(source),
    }
}

/// The patterns of `.worktreeinclude`, relative to the donor's top.
struct Include {
    list: gix::glob::search::pattern::List<gix::ignore::search::Ignore>,
    case: Case,
}

impl Include {
    /// Read `.worktreeinclude` from the donor's top as a regular file; `None` when there is none.
    /// Something else in its place (a symlink, a fifo) is not read: it is reported in `skipped`
    /// and nothing is carried.
    fn read(
        root: &Root,
        case: Case,
        skipped: &mut Vec<(BString, String)>,
    ) -> io::Result<Option<Include>> {
        use std::io::Read;
        let mut dirs = root.dirs();
        let name = INCLUDE_FILE.as_bytes().as_bstr();
        let Some((mut file, _)) = dirs.open_regular(name)? else {
            if dirs.lstat(name)?.is_some() {
                skipped.push((name.into(), "not a regular file, not read".into()));
            }
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let parse = gix::ignore::search::Ignore::default();
        let list =
            gix::glob::search::pattern::List::from_bytes(&bytes, INCLUDE_FILE.into(), None, parse)?;
        Ok(Some(Include { list, case }))
    }

    /// Returns true if and only if the last pattern matching `path` is not a negation.
    fn matches(&self, path: &BStr, is_dir: bool) -> bool {
        let basename = path.rfind_byte(b'/').map(|p| p + 1);
        gix::ignore::search::pattern_matching_relative_path(
            &self.list,
            path,
            basename,
            Some(is_dir),
            self.case,
        )
        .is_some_and(|m| !m.pattern.is_negative())
    }

    /// Returns true if and only if a pattern could match something below the directory `dir`:
    /// one that matches a name at any depth (no slash), or whose literal beginning (up to its
    /// first wildcard; the whole pattern and a slash when it has none) agrees with `dir/`. A directory for which this is false is not read.
    fn could_match_below(&self, dir: &BStr) -> bool {
        use gix::glob::pattern::Mode as P;
        let mut below = BString::from(dir);
        below.push(b'/');
        let same = |a: &[u8], b: &[u8]| match self.case {
            Case::Sensitive => a == b,
            Case::Fold => a.eq_ignore_ascii_case(b),
        };
        self.list.patterns.iter().any(|m| {
            let p = &m.pattern;
            if p.is_negative() {
                return false;
            }
            if p.mode.contains(P::NO_SUB_DIR) && !p.mode.contains(P::ABSOLUTE) {
                return true;
            }
            let literal = match p.first_wildcard_pos {
                Some(pos) => BString::from(&p.text[..pos]),
                // All literal: it names one path, which is below `dir` or is `dir` itself.
                None => {
                    let mut whole = p.text.clone();
                    whole.push(b'/');
                    whole
                }
            };
            let n = literal.len().min(below.len());
            same(&literal[..n], &below[..n])
        })
    }
}

/// What to carry, as the walk of the donor decided it.
#[derive(Debug, Default)]
struct Plan {
    /// Directories to make in the new work tree (carried ones and the leading directories of
    /// carried paths); sorted, so a parent comes before what it holds.
    dirs: BTreeSet<BString>,
    /// Files and symlinks to carry, sorted by path.
    items: Vec<Item>,
}

/// One file or symlink to carry.
#[derive(Debug)]
struct Item {
    path: BString,
    symlink: bool,
}

/// A directory of the donor still to read, with what holds for everything in it.
struct Pending {
    dir: BString,
    /// The directory is ignored, so everything below it is.
    ignored: bool,
    /// `.worktreeinclude` matched the directory, so everything below it is included.
    included: bool,
}

/// The walk of the donor: which paths are ignored there and included.
struct Walk<'a> {
    dirs: Dirs<'a>,
    excludes: gix::AttributeStack<'a>,
    /// The donor's index: its tracked paths are not ignored.
    index: &'a gix::index::State,
    /// The new work tree's index: its tracked paths are never carried.
    tracked: &'a gix::index::State,
    include: &'a Include,
    plan: Plan,
    skipped: &'a mut Vec<(BString, String)>,
}

/// Walk the donor and decide what to carry.
fn plan(
    donor: &gix::Repository,
    root: &Root,
    include: &Include,
    tracked: &gix::index::State,
    skipped: &mut Vec<(BString, String)>,
) -> Result<Plan, Error> {
    let index = donor.index_or_empty().map_err(|e| Error::Repository {
        context: "reading the donor's index",
        source: Box::new(e),
    })?;
    let excludes = donor
        .excludes(
            &index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|e| Error::Repository {
            context: "reading the donor's ignore rules",
            source: Box::new(e),
        })?;
    let mut walk = Walk {
        dirs: root.dirs(),
        excludes,
        index: &index,
        tracked,
        include,
        plan: Plan::default(),
        skipped,
    };
    let mut pending = vec![Pending {
        dir: BString::default(),
        ignored: false,
        included: false,
    }];
    while let Some(dir) = pending.pop() {
        walk.read_dir(&dir, &mut pending);
    }
    let mut plan = walk.plan;
    plan.items.sort_by(|a, b| a.path.cmp(&b.path));
    plan.dirs.extend(
        fs::leading_dirs_of(plan.items.iter().map(|item| item.path.as_bstr())).map(BString::from),
    );
    Ok(plan)
}

impl Walk<'_> {
    /// Decide about every entry of the directory `at`; push the directories to read next.
    fn read_dir(&mut self, at: &Pending, pending: &mut Vec<Pending>) {
        let entries = match self.dirs.entries(at.dir.as_bstr()) {
            Ok(entries) => entries,
            Err(err) => {
                if at.ignored && at.included {
                    self.skipped.push((at.dir.clone(), fs::strerror(&err)));
                }
                return;
            }
        };
        for (name, kind) in entries {
            if at.dir.is_empty() && name == ".git" {
                continue;
            }
            let mut path = at.dir.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(&name);
            if self.index.entry_index_by_path(path.as_bstr()).is_ok() {
                continue; // Tracked in the donor: the checkout wrote it, it is not ignored.
            }
            let is_dir = kind == FileType::Directory;
            let included = at.included || self.include.matches(path.as_bstr(), is_dir);
            let worth_it = included || is_dir && self.include.could_match_below(path.as_bstr());
            if !worth_it {
                continue;
            }
            let ignored = at.ignored || self.is_ignored(path.as_bstr(), kind);
            if is_dir {
                self.directory(path, ignored, included, pending);
            } else if ignored && included {
                self.file(path, kind);
            }
        }
    }

    /// Returns true if and only if the untracked `path` is ignored by the donor's rules.
    fn is_ignored(&mut self, path: &BStr, kind: FileType) -> bool {
        let mode = match kind {
            FileType::Directory => Mode::DIR,
            FileType::Symlink => Mode::SYMLINK,
            _ => Mode::FILE,
        };
        match self.excludes.at_entry(path, Some(mode)) {
            Ok(platform) => platform.is_excluded(),
            Err(err) => {
                self.skipped.push((path.into(), err.to_string()));
                false
            }
        }
    }

    /// A directory worth entering: carried itself when ignored and included, never entered when
    /// it is a nested repository or tracked as a file in the new work tree.
    fn directory(
        &mut self,
        path: BString,
        ignored: bool,
        included: bool,
        pending: &mut Vec<Pending>,
    ) {
        let carried = ignored && included;
        let mut dot_git = path.clone();
        dot_git.extend_from_slice(b"/.git");
        if matches!(self.dirs.lstat(dot_git.as_bstr()), Ok(Some(_))) {
            if carried {
                self.skipped
                    .push((path, "a nested repository, not entered".into()));
            }
            return;
        }
        if carried {
            if self.tracked.entry_index_by_path(path.as_bstr()).is_ok() {
                self.skipped
                    .push((path, "tracked in the new work tree".into()));
                return;
            }
            self.plan.dirs.insert(path.clone());
        }
        pending.push(Pending {
            dir: path,
            ignored,
            included,
        });
    }

    /// A file, symlink or special file that is ignored and included.
    fn file(&mut self, path: BString, kind: FileType) {
        let tracked = self.tracked.entry_index_by_path(path.as_bstr()).is_ok()
            || self.tracked.path_is_directory(path.as_bstr());
        let why = match kind {
            _ if tracked => "tracked in the new work tree",
            FileType::RegularFile | FileType::Symlink => {
                let symlink = kind == FileType::Symlink;
                self.plan.items.push(Item { path, symlink });
                return;
            }
            _ => "not a regular file, symlink or directory",
        };
        self.skipped.push((path, why.into()));
    }
}

/// Make the plan's directories in the new work tree, parents first, and return the items whose
/// directories are there. A directory that cannot be made is reported once, and nothing below it
/// is tried.
fn make_dirs(root: &Root, plan: Plan, carried: &mut Carried) -> Vec<Item> {
    let mut dirs = root.dirs();
    let mut failed: BTreeSet<BString> = BTreeSet::new();
    let under_failed = |failed: &BTreeSet<BString>, path: &BStr| {
        fs::leading_dirs(path).any(|dir| failed.contains(dir))
    };
    for dir in plan.dirs {
        if under_failed(&failed, dir.as_bstr()) {
            continue;
        }
        let made = match dirs.file_type(dir.as_bstr()) {
            Ok(Some(FileType::Directory)) => Ok(false),
            Ok(Some(_)) => Err(Skip::InTheWay),
            Ok(None) => dirs
                .mkdir(dir.as_bstr(), false)
                .map(|()| true)
                .map_err(in_the_way),
            Err(err) => Err(Skip::Io(err)),
        };
        match made {
            Ok(made) => carried.dirs += usize::from(made),
            Err(why) => {
                carried.skipped.push((dir.clone(), why.to_string()));
                failed.insert(dir);
            }
        }
    }
    let mut items = plan.items;
    if !failed.is_empty() {
        items.retain(|item| !under_failed(&failed, item.path.as_bstr()));
    }
    items
}

/// Why a path was not carried, as [`Carried::skipped`] gives it.
#[derive(Debug, thiserror::Error)]
enum Skip {
    /// The donor's file changed between the walk and its carrying.
    #[error("{}", CHANGED)]
    Changed,
    /// Something is already at the path in the new work tree.
    #[error("already exists in the new work tree")]
    InTheWay,
    /// A system error, in `strerror`'s words.
    #[error("{}", fs::strerror(.0))]
    Io(#[from] io::Error),
}

/// Why a path of the new work tree could not be created.
fn in_the_way(err: io::Error) -> Skip {
    if fs::is_collision(&err) {
        Skip::InTheWay
    } else {
        Skip::Io(err)
    }
}

/// Carry `items` with up to `threads` threads, each over a contiguous part of the list.
fn carry_items(
    donor: &Root,
    target: &Root,
    items: &[Item],
    reflink: bool,
    threads: usize,
) -> Carried {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return Worker::new(donor, target, reflink).run(items);
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || Worker::new(donor, target, reflink).run(part)))
            .collect();
        let mut total = Carried::default();
        for worker in workers {
            let done = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            total.cloned += done.cloned;
            total.copied += done.copied;
            total.symlinks += done.symlinks;
            total.skipped.extend(done.skipped);
        }
        total
    })
}

/// How one item was carried.
enum How {
    Cloned,
    Copied,
    Symlink,
}

/// One thread's share of the carrying: both work trees' directory caches, and whether cloning
/// is still worth trying (a filesystem that cannot clone one file cannot clone the next).
struct Worker<'a> {
    donor: Dirs<'a>,
    target: Dirs<'a>,
    reflink: bool,
}

/// The reason given for a donor file that changed between the walk and its carrying.
const CHANGED: &str = "changed in the donor while it was carried";

impl<'a> Worker<'a> {
    fn new(donor: &'a Root, target: &'a Root, reflink: bool) -> Worker<'a> {
        Worker {
            donor: donor.dirs(),
            target: target.dirs(),
            reflink,
        }
    }

    /// Carry `items`, counting what was done and reporting what was not.
    fn run(mut self, items: &[Item]) -> Carried {
        let mut done = Carried::default();
        for item in items {
            let path = item.path.as_bstr();
            let how = if item.symlink {
                self.symlink(path)
            } else {
                self.file(path)
            };
            match how {
                Ok(How::Cloned) => done.cloned += 1,
                Ok(How::Copied) => done.copied += 1,
                Ok(How::Symlink) => done.symlinks += 1,
                Err(why) => done.skipped.push((item.path.clone(), why.to_string())),
            }
        }
        done
    }

    /// Make the symlink `path` again with the donor's target; the target is never followed.
    fn symlink(&mut self, path: &BStr) -> Result<How, Skip> {
        let link = self.donor.read_link(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => Skip::Changed,
            _ => Skip::Io(e),
        })?;
        self.target.symlink(&link, path).map_err(in_the_way)?;
        Ok(How::Symlink)
    }

    /// Clone or copy the regular file `path`, with the donor's executable bit.
    fn file(&mut self, path: &BStr) -> Result<How, Skip> {
        let st = match self.donor.lstat(path) {
            Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => st,
            Ok(_) => return Err(Skip::Changed),
            Err(err) => return Err(Skip::Io(err)),
        };
        let executable = st.st_mode & 0o100 != 0;
        let (dir, name) = fs::split_path(path);
        if self.reflink {
            let donor_dir = self.donor.dir(dir)?;
            let target_dir = self.target.dir(dir)?;
            let same = |s: &crate::fs::Stat| (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino);
            match fs::clone_file_at(donor_dir, name, same, target_dir, name, executable) {
                Ok(_) => return Ok(How::Cloned),
                Err(CloneError::Unsupported(_)) => self.reflink = false,
                Err(CloneError::Changed) => return Err(Skip::Changed),
                Err(CloneError::Create(e)) => return Err(in_the_way(e)),
                Err(CloneError::Io(e)) => return Err(Skip::Io(e)),
            }
        }
        self.copy(path, &st, executable)
    }

    /// Copy the regular file `path` (stat-ed as `st` by the caller) into a file created
    /// exclusively; a donor that changes meanwhile leaves no copy behind.
    fn copy(&mut self, path: &BStr, st: &crate::fs::Stat, executable: bool) -> Result<How, Skip> {
        let same = |a: &crate::fs::Stat, b: &crate::fs::Stat| {
            (a.st_dev, a.st_ino, a.st_size) == (b.st_dev, b.st_ino, b.st_size)
                && (a.st_mtime, a.st_mtime_nsec) == (b.st_mtime, b.st_mtime_nsec)
        };
        let (mut from, opened) = match self.donor.open_regular(path) {
            Ok(Some((file, opened))) if same(&opened, st) => (file, opened),
            Ok(_) => return Err(Skip::Changed),
            Err(err) => return Err(Skip::Io(err)),
        };
        let (dir, name) = fs::split_path(path);
        let target_dir = self.target.dir(dir)?;
        let written = fs::create_file_with(target_dir, name, executable, |to| {
            io::copy(&mut from, to)?;
            let after = fs::fstat_file(&from)?;
            if same(&after, &opened) && after.st_ctime == opened.st_ctime {
                Ok(())
            } else {
                Err(io::Error::other(CHANGED))
            }
        });
        match written {
            Ok(_) => Ok(How::Copied),
            Err(CreateError::Create(e)) => Err(in_the_way(e)),
            Err(CreateError::Unlink(e) | CreateError::Write(e)) => Err(Skip::Io(e)),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;
    use std::process::Command;

    use super::*;

    /// What a test sees at a path: a file's bytes and executable bit, a symlink's target, a
    /// directory, or something else (a fifo).
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Node {
        File(Vec<u8>, bool),
        Link(PathBuf),
        Dir,
        Other,
    }

    /// Everything below `dir` but its top-level `.git`, never following a symlink.
    fn tree(dir: &Path) -> BTreeMap<String, Node> {
        fn walk(top: &Path, dir: &Path, out: &mut BTreeMap<String, Node>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let rela = path.strip_prefix(top).unwrap().to_str().unwrap().to_owned();
                if rela == ".git" {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let node = if meta.is_symlink() {
                    Node::Link(std::fs::read_link(&path).unwrap())
                } else if meta.is_dir() {
                    walk(top, &path, out);
                    Node::Dir
                } else if meta.is_file() {
                    let exec = meta.permissions().mode() & 0o100 != 0;
                    Node::File(std::fs::read(&path).unwrap(), exec)
                } else {
                    Node::Other
                };
                out.insert(rela, node);
            }
        }
        let mut out = BTreeMap::new();
        walk(dir, dir, &mut out);
        out
    }

    /// `tests/fixtures/make_carry.sh` run into `dest`: `dest/donor` and `dest/outside`.
    fn fixture(dest: &Path) {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/make_carry.sh");
        let out = Command::new("bash")
            .arg(script)
            .arg(dest)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `git worktree add --detach new other` in the donor: a work tree of branch `other`, where
    /// `.env` is tracked.
    fn add_worktree(dest: &Path) -> PathBuf {
        let new = dest.join("new");
        let out = Command::new("git")
            .current_dir(dest.join("donor"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["worktree", "add", "-q", "--detach"])
            .arg(&new)
            .arg("other")
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        new
    }

    fn run(dest: &Path, new: &Path, reflink: bool, threads: usize) -> Carried {
        let donor = gix::open(dest.join("donor")).expect("open the donor");
        let index = gix::open(new)
            .expect("open the new work tree")
            .index()
            .expect("its index");
        carry(&donor, new, &index, reflink, threads).expect("carry")
    }

    /// git's answer to what carry should take from the donor: the untracked files it ignores
    /// (`--exclude-standard`) that `.worktreeinclude`'s patterns also exclude (git's own reading of
    /// gitignore syntax, negations and directories included); a nested repository as `dir/`.
    fn git_oracle(donor: &Path) -> BTreeSet<String> {
        let list = |exclude: &str| -> BTreeSet<String> {
            let out = Command::new("git")
                .current_dir(donor)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .args(["ls-files", "-z", "--others", "--ignored", exclude])
                .output()
                .expect("run git");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)
                .unwrap()
                .split_terminator('\0')
                .map(str::to_owned)
                .collect()
        };
        let ignored = list("--exclude-standard");
        let included = list("--exclude-from=.worktreeinclude");
        ignored.intersection(&included).cloned().collect()
    }

    /// What `make_carry.sh`'s `.worktreeinclude` carries: ignored in the donor, included, not a
    /// nested repository, not a fifo, not tracked in a work tree of `other` (`.env`).
    const CARRIED: &[&str] = &[
        "app.log",
        "node_modules",
        "node_modules/pkg",
        "node_modules/pkg/index.js",
        "src/gen.log",
        "target",
        "target/debug",
        "target/debug/app",
        "target/debug/deps",
        "target/debug/deps/libx.rlib",
        "target/dirlink",
        "target/empty",
        "target/link",
    ];

    /// Carry from the fixture's donor into a new work tree of `other` in which `in_the_way` was
    /// written first; check that exactly the expected paths appeared, with the donor's bytes,
    /// executable bits and symlink targets, that nothing was overwritten and that the canary
    /// beside the donor is untouched. Returns what carry said.
    fn carries_exactly(dest: &Path, in_the_way: &str, reflink: bool, threads: usize) -> Carried {
        fixture(dest);
        let new = add_worktree(dest);
        std::fs::write(new.join(in_the_way), "mine\n").unwrap();
        let (donor, before, outside) = (
            tree(&dest.join("donor")),
            tree(&new),
            tree(&dest.join("outside")),
        );
        let carried = run(dest, &new, reflink, threads);
        let files: BTreeSet<String> = CARRIED
            .iter()
            .filter(|p| donor[**p] != Node::Dir)
            .map(|p| (*p).to_owned())
            .chain([".env".to_owned(), "node_modules/nested/".to_owned()])
            .collect();
        assert_eq!(git_oracle(&dest.join("donor")), files, "git disagrees");
        let mut expected = before.clone();
        for path in CARRIED.iter().filter(|p| **p != in_the_way) {
            assert!(
                expected
                    .insert((*path).to_owned(), donor[*path].clone())
                    .is_none(),
                "{path}"
            );
        }
        assert_eq!(tree(&new), expected, "{carried:?}");
        assert_eq!(tree(&dest.join("outside")), outside);
        assert_eq!(before[".env"], Node::File(b"tracked env\n".to_vec(), false));
        assert_eq!(
            donor["target/debug/app"],
            Node::File(b"#!/bin/sh\necho app\n".to_vec(), true)
        );
        let skipped: Vec<(&str, &str)> = carried
            .skipped
            .iter()
            .map(|(p, why)| (p.to_str().unwrap(), why.as_str()))
            .collect();
        let mut want = vec![
            (".env", "tracked in the new work tree"),
            ("node_modules/nested", "a nested repository, not entered"),
            (in_the_way, "already exists in the new work tree"),
            ("target/fifo", "not a regular file, symlink or directory"),
        ];
        want.sort_unstable();
        assert_eq!(skipped, want);
        assert_eq!((carried.symlinks, carried.dirs), (2, 6), "{carried:?}");
        carried
    }

    #[test]
    fn carry_brings_the_included_ignored_files_and_nothing_else() {
        for threads in [1, 4] {
            let tmp = tempfile::tempdir().unwrap();
            let carried = carries_exactly(tmp.path(), "src/gen.log", false, threads);
            assert_eq!((carried.cloned, carried.copied), (0, 4), "{carried:?}");
        }
    }

    /// With cloning allowed where the filesystem cannot clone (or can: whichever the temporary
    /// directory's is), every file is carried one way or the other.
    #[test]
    fn carry_falls_back_to_copying() {
        let tmp = tempfile::tempdir().unwrap();
        let carried = carries_exactly(tmp.path(), "app.log", true, 2);
        assert_eq!(carried.cloned + carried.copied, 4, "{carried:?}");
    }

    #[test]
    fn carry_clones_on_reflink_xfs() {
        let Some(fs) =
            crate::fs::tests::LoopMount::new(&["mkfs.xfs", "-q", "-f", "-m", "reflink=1"])
        else {
            return;
        };
        let carried = carries_exactly(&fs.mnt, "app.log", true, 2);
        assert_eq!((carried.cloned, carried.copied), (4, 0), "{carried:?}");
    }

    #[test]
    fn carry_without_worktreeinclude_carries_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        std::fs::remove_file(tmp.path().join("donor/.worktreeinclude")).unwrap();
        let new = add_worktree(tmp.path());
        let before = tree(&new);
        let carried = run(tmp.path(), &new, true, 2);
        assert_eq!(format!("{carried:?}"), format!("{:?}", Carried::default()));
        assert_eq!(tree(&new), before);
    }

    /// `.worktreeinclude` is read only as a regular file: a symlink in its place is reported
    /// and not followed (here it points out of the donor, to a file that would carry everything).
    #[test]
    fn carry_does_not_follow_a_symlinked_worktreeinclude() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let include = tmp.path().join("donor/.worktreeinclude");
        std::fs::remove_file(&include).unwrap();
        std::fs::write(tmp.path().join("outside/include"), "*\n").unwrap();
        std::os::unix::fs::symlink("../outside/include", &include).unwrap();
        let new = add_worktree(tmp.path());
        let before = tree(&new);
        let carried = run(tmp.path(), &new, false, 1);
        assert_eq!(carried.copied + carried.dirs + carried.symlinks, 0);
        assert_eq!(carried.skipped.len(), 1, "{carried:?}");
        assert_eq!(carried.skipped[0].0, ".worktreeinclude");
        assert_eq!(tree(&new), before);
    }

    /// A new work tree inside the donor (`git worktree add .worktrees/new`, ignored there) is a
    /// nested repository to the donor's walk: never carried into itself, even by `*`.
    #[test]
    fn carry_does_not_carry_a_new_work_tree_inside_the_donor_into_itself() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let donor = tmp.path().join("donor");
        std::fs::write(donor.join(".git/info/exclude"), ".worktrees/\n").unwrap();
        std::fs::write(donor.join(".worktreeinclude"), "*\n").unwrap();
        let out = Command::new("git")
            .current_dir(&donor)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args([
                "worktree",
                "add",
                "-q",
                "--detach",
                ".worktrees/new",
                "other",
            ])
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let new = donor.join(".worktrees/new");
        let carried = run(tmp.path(), &new, false, 2);
        let nested: Vec<&BString> = carried
            .skipped
            .iter()
            .filter(|(_, why)| why.contains("nested repository"))
            .map(|(path, _)| path)
            .collect();
        assert_eq!(nested, [".worktrees/new", "node_modules/nested"]);
        assert!(!new.join(".worktrees/new").exists());
        // `*` takes every ignored file, `build/` and `debug.log` too.
        assert!(new.join("build/out.o").is_file() && new.join("debug.log").is_file());
    }

    /// Directories are entered only when a pattern could reach below them.
    #[test]
    fn include_could_match_below_only_where_a_pattern_reaches() {
        let parse = |text: &str| Include {
            list: gix::glob::search::pattern::List::from_bytes(
                text.as_bytes(),
                INCLUDE_FILE.into(),
                None,
                gix::ignore::search::Ignore::default(),
            )
            .unwrap(),
            case: Case::Sensitive,
        };
        let b = |s: &'static str| s.as_bytes().as_bstr();
        let anchored = parse("/target/\nweb/node_modules/\n!other/\nsub/*.o\n");
        for dir in ["target", "web", "web/node_modules", "sub"] {
            assert!(anchored.could_match_below(b(dir)), "{dir}");
        }
        for dir in ["src", "other", "web/src", "targets", "sub/deeper"] {
            let reaches = anchored.could_match_below(b(dir));
            // `sub/*.o` cannot match below `sub/deeper`; the check is a cheap over-estimate.
            assert_eq!(reaches, dir == "sub/deeper", "{dir}");
        }
        let anywhere = parse("node_modules/\n");
        assert!(anywhere.could_match_below(b("a/b/c")));
        assert!(anchored.matches(b("target"), true));
        assert!(
            !anchored.matches(b("target"), false),
            "a file named like a directory pattern"
        );
        assert!(
            !parse("*\n!x\n").matches(b("x"), false),
            "the last match decides"
        );
    }
}
