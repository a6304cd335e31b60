//! Planning: turn a target tree into the list of everything a checkout will create, validated
//! before a single byte reaches the disk.
//!
//! A [`Plan`] is the contract between the planner and the writer: if planning succeeds, every path
//! in it is safe to create below the work tree (no `..`, no `.git` in any of its disguises, no
//! duplicates, no directory/file conflicts), and every object it names is a blob or a gitlink.

pub mod pathspec;
pub(crate) mod sparse;

use std::sync::{Mutex, PoisonError};

use bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::hash::ObjectId;
use gix::objs::tree::EntryKind;
use gix::objs::Find;

/// What kind of work tree item an [`Entry`] becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file, mode 100644.
    File,
    /// A regular file with the executable bit, mode 100755.
    Executable,
    /// A symbolic link, mode 120000: the blob holds the link target.
    Symlink,
    /// A submodule commit, mode 160000: checked out as an empty directory, as git does without
    /// `--recurse-submodules`.
    Gitlink,
}

impl Kind {
    /// The index mode git records for this kind.
    pub fn index_mode(self) -> gix::index::entry::Mode {
        use gix::index::entry::Mode;
        match self {
            Kind::File => Mode::FILE,
            Kind::Executable => Mode::FILE_EXECUTABLE,
            Kind::Symlink => Mode::SYMLINK,
            Kind::Gitlink => Mode::COMMIT,
        }
    }

    /// The kind of an index entry with `mode`; `None` for the directory entries of a sparse
    /// index, which are not files of any kind.
    pub fn from_index_mode(mode: gix::index::entry::Mode) -> Option<Kind> {
        use gix::index::entry::Mode;
        match mode {
            Mode::FILE => Some(Kind::File),
            Mode::FILE_EXECUTABLE => Some(Kind::Executable),
            Mode::SYMLINK => Some(Kind::Symlink),
            Mode::COMMIT => Some(Kind::Gitlink),
            _ => None,
        }
    }
}

/// One leaf of the target tree: a path that will exist in the work tree and in the index.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Repository-relative, slash-separated path, validated component by component.
    pub path: BString,
    /// The blob (or, for a gitlink, the commit) the entry points to.
    pub id: ObjectId,
    /// What the entry becomes on disk.
    pub kind: Kind,
}

/// Everything a checkout of one tree will create, in the order git's index keeps it.
#[derive(Debug, Default)]
pub struct Plan {
    /// All leaves, sorted by path bytes, which is the index order.
    pub entries: Vec<Entry>,
    /// Every directory that must exist before the entries are written, parents before children.
    /// Gitlink directories are not in this list: they are entries; nor are the directories of
    /// subtrees without any leaf below them (an empty tree, or trees of empty trees): git makes
    /// no directory for them.
    pub dirs: Vec<BString>,
    /// The tree object of each of `dirs` (same order) when the plan was made of a whole tree
    /// ([`from_tree`], [`from_tree_parallel`]) that is exactly what git writes for the index
    /// of its leaves; `None` for plans made otherwise, and for [`Plan::odd`] ones. The new
    /// index's cache-tree takes them instead of hashing every directory again (5 of the 10 ms
    /// that encoding deno's index took): the same ids, since git would write the same trees.
    pub trees: Option<Vec<ObjectId>>,
    /// Some tree of the plan is not what git writes for the index of its leaves: it spells a
    /// mode as git does not (`100664`, `040000`), lists its names out of order or holds a
    /// subtree without leaves. Hashing the index then gives other ids than the trees' (git's
    /// `clone` and `checkout` hash, its `reset --hard` and `worktree add` record the tree's own,
    /// [`crate::write::options::Options::prime_cache_tree`]).
    pub odd: bool,
}

/// Why a tree cannot be checked out. Each variant names the offending path, since the tree that
/// holds it may be deep and the user has to find it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path component is unsafe to create: `..`, `.git` or an alias of it, an absolute path...
    #[error("invalid path '{path}': {reason}")]
    InvalidPath {
        /// The full repository-relative path, as far as it could be assembled.
        path: BString,
        /// What gix-validate objected to.
        reason: String,
    },
    /// The same name appears twice in one tree, or as a file and a directory at once.
    #[error("invalid path '{path}': duplicate entry in tree {tree}")]
    Duplicate {
        /// The path that appears more than once.
        path: BString,
        /// The tree holding the duplicate entries.
        tree: ObjectId,
    },
    /// A tree object named by the target could not be found.
    #[error("unable to read tree {id} (at '{path}'): object missing")]
    MissingTree {
        /// The missing tree.
        id: ObjectId,
        /// Where it would have been checked out.
        path: BString,
    },
    /// A tree object could not be read or parsed.
    #[error("unable to read tree {id} (at '{path}'): {message}")]
    BadTree {
        /// The unreadable tree.
        id: ObjectId,
        /// Where it would have been checked out.
        path: BString,
        /// What went wrong.
        message: String,
    },
}

/// Build the plan for checking out `tree` from `objects`, validating every component of every
/// path with `protect` (gix-validate's rules, the same as git's `verify_path`).
///
/// The traversal checks names per tree: a name that appears twice in one tree is either a plain
/// duplicate or a file/directory conflict, and both are refused, which is what keeps the writer
/// free of surprises.
pub fn from_tree(
    objects: &dyn Find,
    tree: ObjectId,
    protect: gix_validate::path::component::Options,
) -> Result<Plan, Error> {
    let mut plan = Plan {
        trees: Some(Vec::new()),
        ..Plan::default()
    };
    walk(objects, tree, BString::default(), protect, &mut plan)?;
    Ok(finish(plan))
}

/// [`from_tree`] on up to `threads` threads, each with its own handle on the object database:
/// the same plan, the same first error.
///
/// A real repository's trees are deltas in chains like its blobs, and reading deno's 4,300 of
/// them took 10 to 15 ms on one thread, which the checkout waited for. Each thread walks its
/// part depth first, as [`from_tree`] does, and gives a subtree it is about to enter to the
/// others instead whenever one of them has nothing to do (sharing every tree through one lock
/// cost more than it saved). The parts are put together in walk order at the end; where reads
/// fail in several places, the error is the first one in walk order, the one the walk on one
/// thread stops at.
pub fn from_tree_parallel(
    objects: &gix::OdbHandle,
    tree: ObjectId,
    protect: gix_validate::path::component::Options,
    threads: usize,
) -> Result<Plan, Error> {
    if threads <= 1 {
        return from_tree(objects, tree, protect);
    }
    let shared = Shared {
        units: Mutex::new(Units {
            trees: vec![(BString::default(), tree)],
            parts: vec![None],
            stack: vec![0],
            open: 1,
        }),
        more: std::sync::Condvar::new(),
        idle: std::sync::atomic::AtomicUsize::new(0),
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let objects = objects.clone();
            let shared = &shared;
            // A thread that cannot start leaves its share to the others.
            let _ = std::thread::Builder::new()
                .name("git-par walk".into())
                .spawn_scoped(scope, move || shared.run(&objects, protect));
        }
        shared.run(objects, protect);
    });
    let mut parts = shared
        .units
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .parts;
    let mut plan = Plan::default();
    let (mut trees, mut odd) = (Vec::new(), false);
    let mut stack = vec![parts[0].take().unwrap_or_default().into_iter()];
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None => {
                stack.pop();
            }
            Some(Part::Entry(entry)) => plan.entries.push(entry),
            Some(Part::Dir(dir, id)) => {
                plan.dirs.push(dir);
                trees.push(id);
            }
            Some(Part::Tree(k)) => stack.push(parts[k].take().unwrap_or_default().into_iter()),
            Some(Part::Failed(err)) => return Err(err),
            Some(Part::Odd) => odd = true,
        }
    }
    (plan.trees, plan.odd) = ((!odd).then_some(trees), odd);
    drop(parts);
    // The parts' blocks, freed amid the paths the plan keeps, stay resident otherwise.
    crate::sys::memory::give_back_freed(plan.entries.len());
    Ok(finish(plan))
}

/// What the threads of [`from_tree_parallel`] share.
struct Shared {
    units: Mutex<Units>,
    /// Signalled when a tree is given away, and when the last one is read.
    more: std::sync::Condvar,
    /// Threads waiting for a tree to walk.
    idle: std::sync::atomic::AtomicUsize,
}

/// The trees given to the threads of [`from_tree_parallel`] (the root first), with their parts.
struct Units {
    trees: Vec<(BString, ObjectId)>,
    parts: Vec<Option<Vec<Part>>>,
    /// The trees no thread has taken yet.
    stack: Vec<usize>,
    /// The trees not walked yet (taken or not).
    open: usize,
}

/// What a walk gives a plan, in walk order.
enum Part {
    Entry(Entry),
    /// A directory, with its tree.
    Dir(BString, ObjectId),
    /// The tree `k` of [`Units::trees`], walked by another thread: its part goes here.
    Tree(usize),
    /// A tree of this part is one git would not write as it is (see [`Plan::trees`]).
    Odd,
    /// The read that failed here, the end of this part.
    Failed(Error),
}

impl Shared {
    /// Walk the trees given away until all are walked.
    fn run(&self, objects: &dyn Find, protect: gix_validate::path::component::Options) {
        use std::sync::atomic::Ordering;
        let mut buf = Vec::new();
        loop {
            let (k, path, id) = {
                let mut units = self.units.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    if let Some(k) = units.stack.pop() {
                        let (path, id) = units.trees[k].clone();
                        break (k, path, id);
                    }
                    if units.open == 0 {
                        return;
                    }
                    self.idle.fetch_add(1, Ordering::Relaxed);
                    units = self
                        .more
                        .wait(units)
                        .unwrap_or_else(PoisonError::into_inner);
                    self.idle.fetch_sub(1, Ordering::Relaxed);
                }
            };
            let mut part = Vec::new();
            // A walk that panics must still close its tree, or the other threads wait forever.
            let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.walk(objects, id, path.clone(), protect, &mut buf, &mut part)
            }));
            match walked {
                Ok(Ok(())) => {}
                Ok(Err(err)) => part.push(Part::Failed(err)),
                Err(_) => part.push(Part::Failed(Error::BadTree {
                    id,
                    path,
                    message: "reading it panicked".into(),
                })),
            }
            let mut units = self.units.lock().unwrap_or_else(PoisonError::into_inner);
            units.parts[k] = Some(part);
            units.open -= 1;
            if units.open == 0 {
                self.more.notify_all();
            }
        }
    }

    /// [`walk`] into `part`, giving the subtrees it reaches to idle threads.
    fn walk(
        &self,
        objects: &dyn Find,
        tree: ObjectId,
        prefix: BString,
        protect: gix_validate::path::component::Options,
        buf: &mut Vec<u8>,
        part: &mut Vec<Part>,
    ) -> Result<(), Error> {
        use std::sync::atomic::Ordering;
        let mut odd = false;
        let mut stack = vec![children(objects, tree, prefix, buf, protect, &mut odd)?];
        while let Some(top) = stack.last_mut() {
            let Some((path, id, kind)) = top.next() else {
                stack.pop();
                continue;
            };
            let Some(kind) = kind else {
                part.push(Part::Dir(path.clone(), id));
                if self.idle.load(Ordering::Relaxed) > 0 {
                    let mut units = self.units.lock().unwrap_or_else(PoisonError::into_inner);
                    let k = units.trees.len();
                    units.trees.push((path, id));
                    units.parts.push(None);
                    units.stack.push(k);
                    units.open += 1;
                    drop(units);
                    self.more.notify_one();
                    part.push(Part::Tree(k));
                } else {
                    stack.push(children(objects, id, path, buf, protect, &mut odd)?);
                }
                continue;
            };
            part.push(Part::Entry(Entry { path, id, kind }));
        }
        if odd {
            part.push(Part::Odd);
        }
        Ok(())
    }
}

/// Walk `tree` (found at `prefix`) depth first into `plan`: each tree's entries in its order
/// (git sorts a tree's names with a directory's as `name/`, so that the leaves come in index
/// order, paths sorted by bytes, and a well-formed tree needs no sort of 40,000 paths), its
/// directories as the walk enters them.
fn walk(
    objects: &dyn Find,
    tree: ObjectId,
    prefix: BString,
    protect: gix_validate::path::component::Options,
    plan: &mut Plan,
) -> Result<(), Error> {
    let mut buf = Vec::new();
    let mut odd = false;
    let mut stack = vec![children(
        objects, tree, prefix, &mut buf, protect, &mut odd,
    )?];
    while let Some(top) = stack.last_mut() {
        let Some((path, id, kind)) = top.next() else {
            stack.pop();
            continue;
        };
        match kind {
            None => {
                plan.dirs.push(path.clone());
                if let Some(trees) = plan.trees.as_mut() {
                    trees.push(id);
                }
                stack.push(children(objects, id, path, &mut buf, protect, &mut odd)?);
            }
            Some(kind) => plan.entries.push(Entry { path, id, kind }),
        }
    }
    if odd {
        (plan.trees, plan.odd) = (None, true);
    }
    Ok(())
}

/// The walk's plan in index order: a tree that lists its names out of order (only a hand-made
/// one does) is sorted here; the directories are sorted, parents before children, each with
/// its tree.
fn finish(mut plan: Plan) -> Plan {
    if !plan.entries.is_sorted_by(|a, b| a.path <= b.path) {
        plan.entries.sort_by(|a, b| a.path.cmp(&b.path));
        // A tree listing its names out of order is not one git writes.
        (plan.trees, plan.odd) = (None, true);
    }
    match plan.trees.take() {
        Some(trees) if trees.len() == plan.dirs.len() => {
            if plan.dirs.is_sorted() {
                plan.trees = Some(trees);
            } else {
                let mut dirs: Vec<(BString, ObjectId)> = std::mem::take(&mut plan.dirs)
                    .into_iter()
                    .zip(trees)
                    .collect();
                dirs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                let (dirs, trees) = dirs.into_iter().unzip();
                (plan.dirs, plan.trees) = (dirs, Some(trees));
            }
        }
        _ => plan.dirs.sort(),
    }
    if plan.odd {
        drop_leafless(&mut plan);
    }
    plan
}

/// Drop the directories no entry is below from `plan.dirs`: no directory is made for them.
/// Only an odd plan (which has no trees) can have them: a subtree without leaves holds an empty
/// tree at its bottom.
fn drop_leafless(plan: &mut Plan) {
    let mut holds = vec![false; plan.dirs.len()];
    let mut last: Option<&[u8]> = None;
    for entry in &plan.entries {
        let Some(slash) = crate::fs::last_slash(&entry.path) else {
            continue;
        };
        let dir = &entry.path[..slash];
        if last == Some(dir) {
            continue;
        }
        last = Some(dir);
        // The entry's directory and each one above it hold a leaf.
        let mut end = dir.len();
        loop {
            if let Ok(k) = plan
                .dirs
                .binary_search_by(|d| d.as_slice().cmp(&dir[..end]))
            {
                if std::mem::replace(&mut holds[k], true) {
                    break;
                }
            }
            match crate::fs::last_slash(&dir[..end]) {
                Some(slash) => end = slash,
                None => break,
            }
        }
    }
    let mut held = holds.into_iter();
    plan.dirs
        .retain(|_| held.next().expect("one per directory"));
}

impl Plan {
    /// The trees of this plan's directories for the new index's cache-tree, the plan being that
    /// of the tree `root`, if the walk knows them all (see [`Plan::trees`]).
    pub fn walked(&self, root: ObjectId) -> Option<Walked<'_>> {
        Some(Walked {
            root,
            dirs: &self.dirs,
            trees: self.trees.as_deref()?,
        })
    }
}

/// The entries of the tree `tree_id` at `prefix`, validated as [`read_tree`] does, with their
/// full paths.
fn children(
    objects: &dyn Find,
    tree_id: ObjectId,
    prefix: BString,
    buf: &mut Vec<u8>,
    protect: gix_validate::path::component::Options,
    odd: &mut bool,
) -> Result<std::vec::IntoIter<(BString, ObjectId, Option<Kind>)>, Error> {
    let items = read_tree(objects, tree_id, &prefix, buf, Some(protect))?;
    *odd |= (items.is_empty() && !prefix.is_empty()) || items.iter().any(|i| !i.exact);
    Ok(items
        .into_iter()
        .map(|item| (join(prefix.as_bstr(), item.name), item.id, item.kind))
        .collect::<Vec<_>>()
        .into_iter())
}

/// One path whose entry differs between two trees.
#[derive(Debug, Clone)]
pub struct Change {
    /// Repository-relative path.
    pub path: BString,
    /// The entry in the old tree, if any.
    pub old: Option<(ObjectId, Kind)>,
    /// The entry in the new tree, if any (validated).
    pub new: Option<(ObjectId, Kind)>,
}

/// The leaves that differ between two trees, found without descending into subtrees that are
/// identical on both sides: a switch between branches that differ in 250 files reads the trees
/// along those 250 paths, not all 40,000 entries.
#[derive(Debug, Default)]
pub struct Diff {
    /// The differing leaves, sorted by path bytes (index order).
    pub changes: Vec<Change>,
    /// Directories of the new tree below which something changed (they may need creating),
    /// parents before children.
    pub new_dirs: Vec<BString>,
}

/// Compare `old` (absent for an unborn HEAD) with `new`. Names on the new side are validated
/// with `protect` exactly as [`from_tree`] does; the old side is what is already checked out.
pub fn diff(
    objects: &dyn Find,
    old: Option<ObjectId>,
    new: ObjectId,
    protect: gix_validate::path::component::Options,
) -> Result<Diff, Error> {
    let mut out = Diff::default();
    let (mut old_buf, mut new_buf) = (Vec::new(), Vec::new());
    let mut stack: Vec<(Option<ObjectId>, Option<ObjectId>, BString)> =
        vec![(old, Some(new), BString::default())];
    while let Some((o, n, prefix)) = stack.pop() {
        if o.is_some() && o == n {
            continue;
        }
        let old_items = match o {
            Some(id) => read_tree(objects, id, &prefix, &mut old_buf, None)?,
            None => Vec::new(),
        };
        let new_items = match n {
            Some(id) => read_tree(objects, id, &prefix, &mut new_buf, Some(protect))?,
            None => Vec::new(),
        };
        // Both sides in name order (the order of their paths, which share `prefix`), walked
        // side by side: only names that differ get a path of their own.
        let (mut olds, mut news) = (
            by_name(old_items).into_iter().peekable(),
            by_name(new_items).into_iter().peekable(),
        );
        loop {
            let (a, b) = match (olds.peek(), news.peek()) {
                (None, None) => break,
                (Some(_), None) => (olds.next(), None),
                (None, Some(_)) => (None, news.next()),
                (Some(x), Some(y)) => match x.name.cmp(y.name) {
                    std::cmp::Ordering::Less => (olds.next(), None),
                    std::cmp::Ordering::Greater => (None, news.next()),
                    std::cmp::Ordering::Equal => (olds.next(), news.next()),
                },
            };
            if let (Some(a), Some(b)) = (&a, &b) {
                if a.id == b.id && a.kind == b.kind {
                    continue;
                }
            }
            let name = a.as_ref().or(b.as_ref()).expect("one side at least").name;
            let path = join(prefix.as_bstr(), name);
            let old_tree = a.as_ref().filter(|i| i.kind.is_none()).map(|i| i.id);
            let new_tree = b.as_ref().filter(|i| i.kind.is_none()).map(|i| i.id);
            if new_tree.is_some() {
                out.new_dirs.push(path.clone());
            }
            if old_tree.is_some() || new_tree.is_some() {
                stack.push((old_tree, new_tree, path.clone()));
            }
            let old_leaf = a.as_ref().and_then(|i| i.kind.map(|k| (i.id, k)));
            let new_leaf = b.as_ref().and_then(|i| i.kind.map(|k| (i.id, k)));
            if old_leaf.is_some() || new_leaf.is_some() {
                out.changes.push(Change {
                    path,
                    old: old_leaf,
                    new: new_leaf,
                });
            }
        }
    }
    out.changes.sort_by(|a, b| a.path.cmp(&b.path));
    out.new_dirs.sort();
    Ok(out)
}

/// `items` sorted by name, one per name. Where a name appears more than once (an old tree that
/// git checked out; a new one is refused before this) the first in tree order stands: it is the
/// entry `git diff-index` and `git status` compare the index with, so a staged change against it
/// is seen and protected as git protects it (git's checkout of such a tree stages the last one,
/// and a switch away from it refuses, "Your local changes ... would be overwritten").
fn by_name(mut items: Vec<Item<'_>>) -> Vec<Item<'_>> {
    // Stable: equal names keep their tree order, and `dedup_by` keeps the first of them.
    items.sort_by(|a, b| a.name.cmp(b.name));
    items.dedup_by(|later, first| later.name == first.name);
    items
}

/// One entry of a tree: `kind` is `None` for a subtree.
#[derive(Debug)]
struct Item<'a> {
    /// The entry's name in its tree (borrowed from the tree's data).
    name: &'a BStr,
    id: ObjectId,
    kind: Option<Kind>,
    /// Whether the tree spells the entry's mode as git writes it (`100644`, not `100664` or
    /// `040000`).
    exact: bool,
}

/// Read and parse the tree `tree_id` found at `prefix`; with `protect`, validate every name and
/// refuse duplicates, as git's `verify_path` and fsck's duplicate check do. The names borrow
/// `buf`, which holds the tree's data: a caller builds full paths only for the entries it keeps.
fn read_tree<'b>(
    objects: &dyn Find,
    tree_id: ObjectId,
    prefix: &BString,
    buf: &'b mut Vec<u8>,
    protect: Option<gix_validate::path::component::Options>,
) -> Result<Vec<Item<'b>>, Error> {
    // git knows the empty tree without storing it (a commit of nothing names it, and no pack
    // need hold it).
    if tree_id.is_empty_tree() {
        return Ok(Vec::new());
    }
    let data = objects
        .try_find(&tree_id, buf)
        .map_err(|err| Error::BadTree {
            id: tree_id,
            path: prefix.clone(),
            message: err.to_string(),
        })?
        .ok_or_else(|| Error::MissingTree {
            id: tree_id,
            path: prefix.clone(),
        })?;
    if data.kind != gix::objs::Kind::Tree {
        return Err(Error::BadTree {
            id: tree_id,
            path: prefix.clone(),
            message: format!("expected a tree, found a {}", data.kind),
        });
    }
    let mut items = Vec::new();
    for entry in gix::objs::TreeRefIter::from_bytes(data.data, tree_id.kind()) {
        let entry = entry.map_err(|err| Error::BadTree {
            id: tree_id,
            path: prefix.clone(),
            message: err.to_string(),
        })?;
        let kind = match entry.mode.kind() {
            EntryKind::Tree => None,
            EntryKind::Blob => Some(Kind::File),
            EntryKind::BlobExecutable => Some(Kind::Executable),
            EntryKind::Link => Some(Kind::Symlink),
            EntryKind::Commit => Some(Kind::Gitlink),
        };
        if let Some(protect) = protect {
            validate(entry.filename, kind, prefix.as_bstr(), protect)?;
        }
        items.push(Item {
            name: entry.filename,
            id: entry.oid.to_owned(),
            kind,
            exact: entry.mode == gix::objs::tree::EntryMode::from(entry.mode.kind()),
        });
    }
    if protect.is_some() {
        // A name twice in one tree, as two files or as a file and a directory, whatever order
        // the tree lists them in: sorted names put equal ones side by side (no hash table whose
        // keys the tree's author chooses).
        let mut names: Vec<&BStr> = items.iter().map(|i| i.name).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(Error::Duplicate {
                path: join(prefix.as_bstr(), pair[0]),
                tree: tree_id,
            });
        }
    }
    Ok(items)
}

/// Validate one tree entry name; `prefix` (its tree's path) is only used in the error.
fn validate(
    name: &BStr,
    kind: Option<Kind>,
    prefix: &BStr,
    protect: gix_validate::path::component::Options,
) -> Result<(), Error> {
    let mode =
        (kind == Some(Kind::Symlink)).then_some(gix_validate::path::component::Mode::Symlink);
    let invalid = |err: gix_validate::path::component::Error| Error::InvalidPath {
        path: join(prefix, name),
        reason: err.to_string(),
    };
    gix_validate::path::component(name, mode, protect).map_err(invalid)?;
    // With NTFS protection, git treats a backslash as a directory separator (Windows would), so
    // `.git\config` is `.git/config` in disguise: check every part.
    if protect.protect_ntfs && name.contains(&b'\\') {
        let parts: Vec<&[u8]> = name.split(|b| *b == b'\\').collect();
        for (k, part) in parts.iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            let part_mode = if k + 1 == parts.len() { mode } else { None };
            gix_validate::path::component(part.as_bstr(), part_mode, protect).map_err(invalid)?;
        }
    }
    Ok(())
}

fn join(prefix: &BStr, name: &BStr) -> BString {
    let mut path = BString::from(Vec::with_capacity(prefix.len() + 1 + name.len()));
    if !prefix.is_empty() {
        path.push_str(prefix);
        path.push_byte(b'/');
    }
    path.push_str(name);
    path
}

/// The trees a full checkout's walk found, for the cache-tree of its index.
pub use crate::index::record::Walked;

#[cfg(test)]
mod tests {
    use super::*;

    /// Run git in `dir` with `input` on its standard input; its standard output, trimmed.
    fn git_in(dir: &std::path::Path, args: &[&str], input: &[u8]) -> String {
        use std::io::Write as _;
        use std::process::{Command, Stdio};
        let mut child = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git runs");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input).expect("write");
        drop(stdin);
        let out = child.wait_with_output().expect("git ends");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    }

    /// One entry of a tree object: mode, name, NUL, the binary id of `hex`.
    fn tree_entry(mode: &str, name: &str, hex: &str) -> Vec<u8> {
        let mut e = format!("{mode} {name}\0").into_bytes();
        e.extend(ObjectId::from_hex(hex.as_bytes()).expect("hex").as_bytes());
        e
    }

    /// A tree object of `entries` as given (any order, any name), written into `dir`'s
    /// repository by git; its id.
    fn mktree_in(dir: &std::path::Path, entries: &[Vec<u8>]) -> String {
        git_in(
            dir,
            &["hash-object", "-w", "--literally", "-t", "tree", "--stdin"],
            &entries.concat(),
        )
    }

    #[test]
    fn by_name_sorts_and_keeps_the_first_of_a_repeated_name() {
        let id = |b: u8| ObjectId::from_bytes_or_panic(&[b; 20]);
        let item = |name: &'static str, b: u8| Item {
            name: name.as_bytes().as_bstr(),
            id: id(b),
            kind: Some(Kind::File),
            exact: true,
        };
        // Tree order: "dup" (1), "b", "dup" (2), "a".
        let items = vec![item("dup", 1), item("b", 3), item("dup", 2), item("a", 4)];
        let sorted: Vec<(String, ObjectId)> = by_name(items)
            .into_iter()
            .map(|i| (i.name.to_string(), i.id))
            .collect();
        assert_eq!(
            sorted,
            vec![
                ("a".to_owned(), id(4)),
                ("b".to_owned(), id(3)),
                ("dup".to_owned(), id(1)),
            ]
        );
    }

    /// The walk lists a well-formed tree's leaves in index order without sorting them, and
    /// sorts those of a tree whose entries are out of order (as only a hand-made one is).
    #[test]
    fn leaves_come_out_in_index_order_whatever_the_trees_order() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let git = |args: &[&str], input: &[u8]| git_in(dir.path(), args, input);
        git(&["init", "-q"], b"");
        let blob = git(&["hash-object", "-w", "--stdin"], b"x\n");
        let entry = tree_entry;
        let mktree = |entries: &[Vec<u8>]| mktree_in(dir.path(), entries);
        // "a.b" sorts before the directory "a" ("a/" in a tree, "a/c" in the index).
        let sub = mktree(&[entry("100644", "c", &blob)]);
        let sorted = mktree(&[
            entry("100644", "a.b", &blob),
            entry("40000", "a", &sub),
            entry("100644", "a0", &blob),
        ]);
        let unsorted = mktree(&[
            entry("100644", "z", &blob),
            entry("40000", "a", &sub),
            entry("100644", "b", &blob),
        ]);
        let repo = gix::open(dir.path()).expect("open");
        let plan = |tree: &str| {
            let tree = ObjectId::from_hex(tree.as_bytes()).expect("hex");
            from_tree(&repo.objects, tree, Default::default()).expect("plan")
        };
        let paths = |tree: &str| -> Vec<String> {
            plan(tree)
                .entries
                .iter()
                .map(|e| e.path.to_string())
                .collect()
        };
        assert_eq!(paths(&sorted), ["a.b", "a/c", "a0"]);
        assert_eq!(paths(&unsorted), ["a/c", "b", "z"]);
        // The trees are kept for the cache-tree only where git would write them as they are;
        // a plan with one it would not is odd.
        let sub_id = ObjectId::from_hex(sub.as_bytes()).expect("hex");
        let normal = plan(&sorted);
        assert_eq!(normal.trees, Some(vec![sub_id]));
        assert!(!normal.odd);
        let odd_mode = mktree(&[entry("100664", "c", &blob)]);
        let odd = mktree(&[entry("40000", "a", &odd_mode)]);
        let zero_padded = mktree(&[entry("040000", "a", &sub)]);
        for tree in [&unsorted, &odd, &zero_padded] {
            let p = plan(tree);
            assert!(p.odd && p.trees.is_none(), "{tree}");
        }
        // A subtree without leaves (an empty tree, a tree of one) is no directory to make.
        let empty = mktree(&[]);
        let of_empty = mktree(&[entry("40000", "f", &empty)]);
        let with_empty = mktree(&[
            entry("40000", "a", &sub),
            entry("40000", "e", &empty),
            entry("40000", "g", &of_empty),
        ]);
        let p = plan(&with_empty);
        assert!(p.odd && p.trees.is_none());
        assert_eq!(p.dirs, ["a"]);
    }

    /// The walk on several threads gives the walk's plan, and its first error: trees whose
    /// units (the trees two levels down) fail in two places report the first in walk order.
    #[test]
    fn the_parallel_walk_is_the_walk() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let git = |args: &[&str], input: Option<&[u8]>| {
            git_in(dir.path(), args, input.unwrap_or_default())
        };
        git(&["init", "-q"], None);
        for path in [
            "top",
            "a.b",
            "a/x",
            "a/b/c/d",
            "a/b/c.e",
            "a/b0",
            "a/z/y",
            "a0",
            "m/n/o/p/q",
            "m/n/r",
            "m/s",
            "z/1/2",
            "z/1/3/4",
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, path.to_string_lossy().as_bytes()).expect("write");
        }
        git(&["add", "."], None);
        let tree = ObjectId::from_hex(git(&["write-tree"], None).as_bytes()).expect("hex");
        let repo = gix::open(dir.path()).expect("open");
        let listed = |plan: Plan| {
            let entries: Vec<(String, ObjectId, Kind)> = plan
                .entries
                .iter()
                .map(|e| (e.path.to_string(), e.id, e.kind))
                .collect();
            (entries, plan.dirs, plan.trees)
        };
        let one = listed(from_tree(&repo.objects, tree, Default::default()).expect("plan"));
        assert_eq!(one.0.len(), 13);
        // Each directory with its own tree, as git names it.
        let trees = one.2.clone().expect("trees git writes");
        assert_eq!(trees.len(), one.1.len());
        for (dir, id) in one.1.iter().zip(&trees) {
            let theirs = git(&["rev-parse", &format!("{tree}:{dir}")], None);
            assert_eq!(id.to_string(), theirs, "{dir}");
        }
        for threads in [2, 3, 8] {
            let many =
                from_tree_parallel(&repo.objects, tree, Default::default(), threads).expect("plan");
            assert_eq!(listed(many), one, "{threads} threads");
        }
        // Two bad names, under `a/b` and under `m/n`: both walks name the one under `a/b`.
        let entry = tree_entry;
        let mktree = |entries: &[Vec<u8>]| mktree_in(dir.path(), entries);
        let blob = git(&["hash-object", "-w", "--stdin"], Some(b"x\n"));
        let bad = mktree(&[entry("100644", ".git", &blob)]);
        let b = mktree(&[entry("40000", "bad", &bad)]);
        let a = mktree(&[entry("40000", "b", &b)]);
        let n = mktree(&[entry("40000", "n", &b)]);
        let root = mktree(&[entry("40000", "a", &a), entry("40000", "m", &n)]);
        let root = ObjectId::from_hex(root.as_bytes()).expect("hex");
        let protect = crate::write::options::default_protect();
        let first = from_tree(&repo.objects, root, protect).expect_err("a bad name");
        assert!(first.to_string().contains("a/b/bad/.git"), "{first}");
        for threads in [2, 4] {
            let err =
                from_tree_parallel(&repo.objects, root, protect, threads).expect_err("a bad name");
            assert_eq!(err.to_string(), first.to_string());
        }
    }

    #[test]
    fn join_builds_slash_separated_paths() {
        assert_eq!(join(b"".as_bstr(), b"a".as_bstr()), "a");
        assert_eq!(join(b"a/b".as_bstr(), b"c".as_bstr()), "a/b/c");
    }
}
