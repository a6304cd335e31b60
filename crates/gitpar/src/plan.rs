//! Planning: turn a target tree into the list of everything a checkout will create, validated
//! before a single byte reaches the disk.
//!
//! A [`Plan`] is the contract between the planner and the writer: if planning succeeds, every path
//! in it is safe to create below the work tree (no `..`, no `.git` in any of its disguises, no
//! duplicates, no directory/file conflicts), and every object it names is a blob or a gitlink.

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
    /// Gitlink directories are not in this list: they are entries.
    pub dirs: Vec<BString>,
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
    let mut plan = Plan::default();
    let mut buf = Vec::new();
    // Depth first, each tree's entries in its order: git sorts a tree's names with a
    // directory's as `name/`, so that this walk lists the leaves in index order (paths sorted
    // by bytes), and a well-formed tree needs no sort of 40,000 paths afterwards.
    let mut stack = vec![children(
        objects,
        tree,
        BString::default(),
        &mut buf,
        protect,
    )?];
    while let Some(top) = stack.last_mut() {
        let Some((path, id, kind)) = top.next() else {
            stack.pop();
            continue;
        };
        match kind {
            None => {
                plan.dirs.push(path.clone());
                stack.push(children(objects, id, path, &mut buf, protect)?);
            }
            Some(kind) => plan.entries.push(Entry { path, id, kind }),
        }
    }
    // A tree that lists its names out of order (only a hand-made one does) is sorted here.
    if !plan.entries.is_sorted_by(|a, b| a.path <= b.path) {
        plan.entries.sort_by(|a, b| a.path.cmp(&b.path));
    }
    plan.dirs.sort();
    Ok(plan)
}

/// The entries of the tree `tree_id` at `prefix`, validated as [`read_tree`] does, with their
/// full paths.
fn children(
    objects: &dyn Find,
    tree_id: ObjectId,
    prefix: BString,
    buf: &mut Vec<u8>,
    protect: gix_validate::path::component::Options,
) -> Result<std::vec::IntoIter<(BString, ObjectId, Option<Kind>)>, Error> {
    let items = read_tree(objects, tree_id, &prefix, buf, Some(protect))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name_sorts_and_keeps_the_first_of_a_repeated_name() {
        let id = |b: u8| ObjectId::from_bytes_or_panic(&[b; 20]);
        let item = |name: &'static str, b: u8| Item {
            name: name.as_bytes().as_bstr(),
            id: id(b),
            kind: Some(Kind::File),
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
        use std::io::Write as _;
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().expect("temporary directory");
        let git = |args: &[&str], input: &[u8]| {
            let mut child = Command::new("git")
                .current_dir(dir.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("git runs");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input)
                .expect("write");
            let out = child.wait_with_output().expect("git ends");
            assert!(out.status.success(), "git {args:?}");
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .trim()
                .to_owned()
        };
        git(&["init", "-q"], b"");
        let blob = git(&["hash-object", "-w", "--stdin"], b"x\n");
        let entry = |mode: &str, name: &str, hex: &str| {
            let mut e = format!("{mode} {name}\0").into_bytes();
            e.extend(ObjectId::from_hex(hex.as_bytes()).expect("hex").as_bytes());
            e
        };
        let mktree = |entries: &[Vec<u8>]| {
            git(
                &["hash-object", "-w", "--literally", "-t", "tree", "--stdin"],
                &entries.concat(),
            )
        };
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
        let paths = |tree: &str| -> Vec<String> {
            let tree = ObjectId::from_hex(tree.as_bytes()).expect("hex");
            from_tree(&repo.objects, tree, Default::default())
                .expect("plan")
                .entries
                .iter()
                .map(|e| e.path.to_string())
                .collect()
        };
        assert_eq!(paths(&sorted), ["a.b", "a/c", "a0"]);
        assert_eq!(paths(&unsorted), ["a/c", "b", "z"]);
    }

    #[test]
    fn join_builds_slash_separated_paths() {
        assert_eq!(join(b"".as_bstr(), b"a".as_bstr()), "a");
        assert_eq!(join(b"a/b".as_bstr(), b"c".as_bstr()), "a/b/c");
    }
}
