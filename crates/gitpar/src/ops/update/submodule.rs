//! Submodules in a recursive update (`--recurse-submodules`, `submodule.recurse`): when the
//! superproject's update moves a gitlink, the submodule's own work tree, index and `HEAD` follow,
//! as git's `submodule_move_head` makes them follow — but through this engine (an in-process
//! [`crate::ops::update::update`] of the submodule, itself recursive) rather than a `git read-tree`
//! child per submodule.
//!
//! Which submodules take part is git's rule: the gitlink's path is named in `.gitmodules` and the
//! submodule is active (`submodule.<name>.active`, else `submodule.active`, else a configured
//! `submodule.<name>.url`); a submodule that is not populated (no `.git` in its directory) is
//! left alone when it moves or goes, and populated from `.git/modules/<name>` when it appears.
//! The order is git's `check_updates`: submodules that go are taken down before the
//! superproject's removals, submodules that appear or move are brought to their commit after
//! the superproject's files are written.

use std::path::{Path, PathBuf};

use bstr::{BStr, BString, ByteSlice};
use gix::hash::ObjectId;

use crate::fs::{Dirs, Root};
use crate::ops::update::{Error as UpdateError, Policy, SubmoduleRefusal, SubmoduleRefused};
use crate::sys::context::{Context, Progress};
use crate::write::error::{EntryError, Error as CheckoutError};
use crate::write::options::Options;

/// Why a submodule could not be taken down or brought to its commit, in git's words as the
/// superproject prints them (after its own "error: ", which the messages that carry one of
/// their own lose, see [`crate::ops::update`]'s `bring_submodules`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The submodule's own update failed.
    #[error("error: {0}")]
    Update(#[from] Box<UpdateError>),
    /// An entry of the submodule's own update could not be written.
    #[error("error: {0}")]
    Entry(crate::write::error::EntryError),
    /// The submodule lacks the commit the superproject records (git's read-tree message).
    #[error("fatal: failed to unpack tree object {0}")]
    MissingCommit(ObjectId),
    /// git's `validate_submodule_path`: a leading directory of the submodule's path is a
    /// symbolic link.
    #[error("expected '{prefix}' in submodule path '{path}' not to be a symbolic link")]
    LinkInPath {
        /// The leading directory.
        prefix: BString,
        /// The submodule's path.
        path: BString,
    },
    /// git's `validate_submodule_path`: the submodule's path is a symbolic link.
    #[error("expected submodule path '{0}' not to be a symbolic link")]
    Link(BString),
    /// git's `validate_submodule_git_dir`: the submodule's git directory would lie inside
    /// another submodule's.
    #[error(
        "error: submodule git dir '{}' is inside git dir '{}'\n\
         fatal: refusing to create/use '{}' in another submodule's git dir",
        .git_dir.display(),
        .outer.display(),
        .git_dir.display()
    )]
    Nested {
        /// The submodule's git directory.
        git_dir: PathBuf,
        /// The outermost git directory above it.
        outer: PathBuf,
    },
    /// The submodule's `.git` directory cannot be absorbed: its place in `.git/modules` is
    /// taken.
    #[error("fatal: refusing to move '{0}/.git' into an existing git dir")]
    ExistingGitDir(BString),
    /// The submodule's `.git` directory could not be moved into `.git/modules`.
    #[error("could not migrate git directory from '{path}/.git': {source}")]
    Migrate {
        /// The submodule's path.
        path: BString,
        /// The system error.
        source: std::io::Error,
    },
    /// The submodule's directory could not be made.
    #[error("unable to create directory '{path}': {source}")]
    Mkdir {
        /// The submodule's path.
        path: BString,
        /// The system error.
        source: std::io::Error,
    },
    /// The submodule's `.git` file could not be written.
    #[error("could not write {path}/.git: {source}")]
    WriteGitFile {
        /// The submodule's path.
        path: BString,
        /// The system error.
        source: std::io::Error,
    },
    /// The submodule's `.git` file could not be removed.
    #[error("unable to unlink '{path}': {source}")]
    Unlink {
        /// The `.git` file's path.
        path: BString,
        /// The system error.
        source: std::io::Error,
    },
    /// The submodule's directory was connected, and is no repository all the same.
    #[error("fatal: not a git repository: {}", .0.display())]
    NotARepository(PathBuf),
    /// The submodule's path is no file name on this system.
    #[error(transparent)]
    Path(#[from] bstr::Utf8Error),
    /// A path of the connection could not be resolved.
    #[error(transparent)]
    Realpath(#[from] gix::Error),
    /// The submodule's `HEAD` could not be detached.
    #[error(transparent)]
    Head(#[from] Box<dyn std::error::Error + Send + Sync>),
    /// The submodule's `HEAD` reflog could not be written.
    #[error(transparent)]
    Reflog(#[from] crate::repo::branch::ReflogError),
    /// git's words from [`crate::repo::branch`] (the submodule's configuration or its git
    /// directory's leading directories).
    #[error(transparent)]
    Repo(#[from] crate::repo::branch::GitDirError),
}

/// One gitlink whose submodule the update moves: from `old` (`None`: it appears) to `new`
/// (`None`: it goes). A forced update also lists unchanged gitlinks (`old == new`): their work
/// trees are reset, as git's `oneway_merge` marks them for update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The gitlink's path in the superproject.
    pub path: BString,
    /// The commit the superproject's index records now.
    pub old: Option<ObjectId>,
    /// The commit the update records.
    pub new: Option<ObjectId>,
}

pub use crate::repo::submodules::Modules;

/// git's `validate_submodule_git_dir`: the git directory of submodule `name` must not lie
/// inside another submodule's (a submodule `hippo/hooks` would put its repository in the hooks
/// directory of submodule `hippo`'s, t7450). `Some` with the outermost directory of `modules/`
/// above it that is a git directory ([`Error::Nested`] in git's words): the submodule is then
/// neither connected nor checked out.
fn nesting(repo: &gix::Repository, name: &str) -> Option<PathBuf> {
    let git_dir = module_git_dir(repo, name);
    let modules = repo.common_dir().join("modules");
    let mut above = git_dir.parent();
    let mut found = None;
    while let Some(dir) = above.filter(|d| d.starts_with(&modules) && *d != modules) {
        if gix::discover::is_git(dir).is_ok() {
            found = Some(dir.to_owned());
        }
        above = dir.parent();
    }
    // git reports the outermost.
    found
}

/// The submodule's git directory in the superproject: `<common dir>/modules/<name>`.
fn module_git_dir(repo: &gix::Repository, name: &str) -> PathBuf {
    repo.common_dir().join("modules").join(name)
}

/// The populated submodule at `path`: its directory is a real directory (no symlink on the
/// way) with a `.git` that opens as a repository whose work tree is that directory.
fn open_populated(root: &Root, path: &BStr) -> Option<gix::Repository> {
    let mut dirs = root.dirs();
    let dot_git = join(path, ".git");
    dirs.file_type(dot_git.as_bstr()).ok().flatten()?;
    if !dirs.has_dirs_only_path(dot_git.as_bstr()) {
        return None;
    }
    let workdir = root.path().join(path.to_path().ok()?);
    let repo = gix::open(&workdir).ok()?;
    repo.workdir()?;
    Some(repo)
}

fn join(dir: &BStr, name: &str) -> BString {
    let mut p = dir.to_owned();
    p.push(b'/');
    p.extend_from_slice(name.as_bytes());
    p
}

fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    out
}

/// git's `connect_work_tree_and_git_dir`: the submodule directory's `.git` file names its git
/// directory, and the git directory's `core.worktree` names the directory, both relative.
fn connect(root: &Root, path: &BStr, git_dir: &Path) -> Result<(), Error> {
    let workdir = root.path().join(path.to_path()?);
    let git_dir = gix::path::realpath(git_dir)?;
    let workdir_real = gix::path::realpath(&workdir)?;
    let link = format!(
        "gitdir: {}\n",
        relative(&workdir_real, &git_dir).to_string_lossy()
    );
    root.dirs()
        .write_file(join(path, ".git").as_bstr(), link.as_bytes())
        .map_err(|source| Error::WriteGitFile {
            path: path.to_owned(),
            source,
        })?;
    crate::repo::branch::set_core_worktree(&git_dir, Some(&relative(&git_dir, &workdir_real)))
        .map_err(Error::Repo)
}

/// The tree of `HEAD` in `repo`, if it has one.
fn head_tree(repo: &gix::Repository) -> Option<ObjectId> {
    repo.head_commit()
        .ok()
        .and_then(|c| c.tree_id().ok())
        .map(gix::Id::detach)
}

/// The tree of `commit` in the submodule, or git's read-tree message when it has no such commit.
fn tree_of(repo: &gix::Repository, commit: ObjectId) -> Result<ObjectId, Error> {
    repo.find_commit(commit)
        .ok()
        .and_then(|c| c.tree_id().ok())
        .map(gix::Id::detach)
        .ok_or(Error::MissingCommit(commit))
}

/// `git update-ref --no-deref HEAD <new>` in the submodule: a detached `HEAD`, with the
/// message-less reflog line git writes for it.
fn detach_head(repo: &gix::Repository, new: ObjectId) -> Result<(), Error> {
    let old = repo.head_id().ok().map(gix::Id::detach);
    crate::repo::branch::set_head_without_reflog(repo, gix::refs::Target::Object(new), false)?;
    crate::repo::branch::append_reflog(repo, "HEAD", old, new, "")?;
    Ok(())
}

/// Whether the submodule's index differs from its `HEAD` tree (git's `submodule_has_dirty_index`,
/// which refuses a safe move).
fn has_dirty_index(repo: &gix::Repository) -> bool {
    let Ok(index) = repo.index_or_empty() else {
        return true;
    };
    let Some(tree) = head_tree(repo) else {
        return !index.entries().is_empty();
    };
    let Ok(plan) = crate::plan::from_tree(
        &repo.objects,
        tree,
        crate::write::options::default_protect(),
    ) else {
        return true;
    };
    let staged: Vec<_> = index
        .entries()
        .iter()
        .map(|e| (e.path(&index), e.id, e.mode, e.stage_raw()))
        .collect();
    staged.len() != plan.entries.len()
        || staged
            .iter()
            .zip(&plan.entries)
            .any(|((p, id, mode, stage), e)| {
                *stage != 0 || *p != e.path.as_bstr() || *id != e.id || *mode != e.kind.index_mode()
            })
}

/// Check, before the superproject changes anything, that every populated submodule the update
/// moves can follow: the target commit exists, a safe update finds no staged changes in it and
/// no local changes the move would lose (a dry run of the submodule's own update). Removing a
/// submodule is refused when its work tree has local changes, in a safe update (git's forced
/// removal would discard them). A refusal is [`Error::Submodules`]; nothing is changed.
pub fn check(
    repo: &gix::Repository,
    root: &Root,
    moves: &[Move],
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<(), UpdateError> {
    if moves.is_empty() {
        return Ok(());
    }
    let modules = Modules::load(root);
    let mut dirs = root.dirs();
    for m in moves {
        if modules.active(repo, m.path.as_bstr()).is_some() {
            validate_path(&mut dirs, m.path.as_bstr())
                .map_err(|e| UpdateError::SubmodulePathSymlink(e.to_string()))?;
        }
    }
    let mut refused = Vec::new();
    for m in moves {
        if m.old.is_none() {
            continue;
        }
        if modules.active(repo, m.path.as_bstr()).is_none() {
            continue;
        }
        let Some(sub) = open_populated(root, m.path.as_bstr()) else {
            continue;
        };
        if let Err(reason) = check_one(&sub, m, mode, opts, ctx) {
            refused.push(SubmoduleRefused {
                path: m.path.clone(),
                reason,
            });
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(UpdateError::Submodules(refused))
    }
}

/// git's `validate_submodule_path`: no leading directory of the submodule's `path`, nor the
/// path itself, may be a symbolic link (missing ones are fine); `Err` with git's message.
fn validate_path(dirs: &mut crate::fs::Dirs<'_>, path: &BStr) -> Result<(), Error> {
    let is_link = |dirs: &mut crate::fs::Dirs<'_>, p: &BStr| {
        dirs.lstat(p).ok().flatten().is_some_and(|st| {
            crate::fs::FileType::from_raw_mode(st.st_mode) == crate::fs::FileType::Symlink
        })
    };
    for (i, _) in path.iter().enumerate().filter(|(_, &b)| b == b'/') {
        let prefix = path[..i].as_bstr();
        if is_link(dirs, prefix) {
            return Err(Error::LinkInPath {
                prefix: prefix.to_owned(),
                path: path.to_owned(),
            });
        }
    }
    if is_link(dirs, path) {
        return Err(Error::Link(path.to_owned()));
    }
    Ok(())
}

fn check_one(
    sub: &gix::Repository,
    m: &Move,
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<(), SubmoduleRefusal> {
    let Some(workdir) = sub.workdir().map(Path::to_owned) else {
        return Ok(());
    };
    if mode == Policy::Safe && has_dirty_index(sub) {
        return Err(SubmoduleRefusal::DirtyIndex(m.path.clone()));
    }
    let new_tree = match m.new {
        Some(new) => tree_of(sub, new).map_err(|_| SubmoduleRefusal::MissingCommit(new))?,
        None if mode == Policy::Safe => ObjectId::empty_tree(sub.object_hash()),
        None => return Ok(()),
    };
    // A private progress: the superproject's counters are not the submodule's.
    let progress = Progress::default();
    crate::ops::update::check(
        sub,
        head_tree(sub),
        new_tree,
        &workdir,
        &sub.index_path(),
        mode,
        opts,
        &Context {
            progress: &progress,
            interrupt: ctx.interrupt,
        },
    )
    .map_err(|e| SubmoduleRefusal::Update(Box::new(e)))
}

/// Take down the submodule of a gitlink that goes (git's `unlink_entry` → `submodule_move_head`
/// to nothing, always forced): its `.git` directory is absorbed into `.git/modules` if it is
/// not there already, its tracked files are removed by a forced update to the empty tree, its
/// `.git` file is removed, its directory too if that left it empty, and `core.worktree` is
/// unset in its git directory.
pub fn take_down(
    repo: &gix::Repository,
    root: &Root,
    modules: &Modules,
    path: &BStr,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<(), Error> {
    let Some(name) = modules.active(repo, path) else {
        return Ok(());
    };
    let mut dirs = root.dirs();
    let dot_git = join(path, ".git");
    if dirs.file_type(dot_git.as_bstr()).ok().flatten() == Some(crate::fs::FileType::Directory) {
        absorb(repo, root, &mut dirs, path, name)?;
    }
    let Some(sub) = open_populated(root, path) else {
        return Ok(());
    };
    let workdir = sub.workdir().map(Path::to_owned).unwrap_or_default();
    let progress = Progress::default();
    crate::ops::update::update(
        &sub,
        head_tree(&sub),
        ObjectId::empty_tree(sub.object_hash()),
        &workdir,
        &sub.index_path(),
        Policy::Force,
        opts,
        &Context {
            progress: &progress,
            interrupt: ctx.interrupt,
        },
    )
    .map_err(Box::new)?;
    let git_dir = sub.git_dir().to_owned();
    let expendable = only_ignored_left(&sub, root, path);
    drop(sub);
    dirs.unlink(dot_git.as_bstr())
        .map_err(|source| Error::Unlink {
            path: dot_git.clone(),
            source,
        })?;
    // What the submodule's ignore rules call expendable goes with it; anything else stays, and
    // so does the directory.
    if expendable {
        let _ = dirs.remove_all(path);
    } else {
        let _ = dirs.rmdir(path);
    }
    crate::repo::branch::set_core_worktree(&git_dir, None).map_err(Error::Repo)
}

/// Whether every file left in the submodule's directory (its `.git` aside) is ignored by the
/// submodule's own rules (`.gitignore`, `info/exclude`, `core.excludesFile`).
fn only_ignored_left(sub: &gix::Repository, root: &Root, path: &BStr) -> bool {
    let Ok(index) = sub.index_or_empty() else {
        return false;
    };
    let Ok(excludes) = sub.excludes(
        &index,
        None,
        gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
    ) else {
        return false;
    };
    let mut excludes = excludes.detach();
    let mut dirs = root.dirs();
    let mut stack = vec![BString::default()];
    while let Some(rel) = stack.pop() {
        let dir = if rel.is_empty() {
            path.to_owned()
        } else {
            let mut d = path.to_owned();
            d.push(b'/');
            d.extend_from_slice(&rel);
            d
        };
        let Ok(entries) = dirs.read_dir(dir.as_bstr()) else {
            return false;
        };
        for (name, is_dir) in entries {
            if rel.is_empty() && name == ".git" {
                continue;
            }
            let mut child = rel.clone();
            if !child.is_empty() {
                child.push(b'/');
            }
            child.extend_from_slice(&name);
            let mode = is_dir.then_some(gix::index::entry::Mode::DIR);
            let ignored = excludes
                .at_entry(child.as_bstr(), mode, &sub.objects)
                .is_ok_and(|p| p.is_excluded());
            if ignored {
                continue;
            }
            if is_dir {
                stack.push(child);
            } else {
                return false;
            }
        }
    }
    true
}

/// git's `absorb_git_dir_into_superproject`: move the submodule's `.git` directory to
/// `.git/modules/<name>` and connect the two.
fn absorb(
    repo: &gix::Repository,
    root: &Root,
    dirs: &mut Dirs<'_>,
    path: &BStr,
    name: &str,
) -> Result<(), Error> {
    let target = module_git_dir(repo, name);
    if target.exists() {
        return Err(Error::ExistingGitDir(path.to_owned()));
    }
    if let Some(parent) = target.parent() {
        crate::repo::branch::create_git_dirs(parent).map_err(Error::Repo)?;
    }
    dirs.rename_out(join(path, ".git").as_bstr(), &target)
        .map_err(|source| Error::Migrate {
            path: path.to_owned(),
            source,
        })?;
    connect(root, path, &target)
}

/// Bring every submodule of `moves` that appears or moves to its commit ([`bring`]), several at
/// once: up to `opts.workers` submodules are updated concurrently, each with its share of the
/// writer threads and of the memory budget, so the whole stays within the one budget (git
/// moves them one after another). Returns the failures, in the order of `moves`, each with
/// git's messages.
pub fn bring_all(
    repo: &gix::Repository,
    root: &Root,
    moves: &[Move],
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Vec<(BString, String)> {
    let modules = Modules::load(root);
    // What each submodule needs from the superproject, resolved here: the threads below share
    // nothing but the work tree's root.
    let work: Vec<(&Move, PathBuf, Option<PathBuf>)> = moves
        .iter()
        .filter(|m| m.new.is_some())
        .filter_map(|m| {
            let name = modules.active(repo, m.path.as_bstr())?;
            Some((m, module_git_dir(repo, name), nesting(repo, name)))
        })
        .collect();
    if work.is_empty() {
        return Vec::new();
    }
    let at_once = work.len().min(opts.workers.max(1));
    let share = Options {
        workers: (opts.workers / at_once).max(1),
        budget: (opts.budget / at_once as u64).max(1),
        report_local_changes: false,
        ..opts.clone()
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Error>>> =
        work.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..at_once {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((m, git_dir, nested)) = work.get(k) else {
                    break;
                };
                let brought = match nested {
                    Some(outer) => Err(Error::Nested {
                        git_dir: git_dir.clone(),
                        outer: outer.clone(),
                    }),
                    None => bring(root, git_dir, m, mode, &share, ctx),
                };
                if let Err(err) = brought {
                    *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(err);
                }
            });
        }
    });
    work.iter()
        .zip(results)
        .filter_map(|((m, _, _), r)| {
            let err = r.into_inner().unwrap_or_else(|e| e.into_inner())?;
            Some((m.path.clone(), err.to_string()))
        })
        .collect()
}

/// Bring the submodule of a gitlink that appears or moves to its commit (git's
/// `checkout_entry` for a gitlink): a populated submodule is updated from its `HEAD` to the
/// commit (safe or forced, as the superproject's update); one that is not populated is
/// connected to its git directory `git_dir` (`.git/modules/<name>`, if that exists), its stale
/// index cleared, and checked out; then its `HEAD` is detached at the commit.
fn bring(
    root: &Root,
    git_dir: &Path,
    m: &Move,
    mode: Policy,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<(), Error> {
    let Some(new) = m.new else { return Ok(()) };
    let progress = Progress::default();
    let ctx = Context {
        progress: &progress,
        interrupt: ctx.interrupt,
    };
    let run = |sub: &gix::Repository, old: Option<ObjectId>, tree: ObjectId, policy: Policy| {
        let workdir = sub.workdir().map(Path::to_owned).unwrap_or_default();
        crate::ops::update::update(
            sub,
            old,
            tree,
            &workdir,
            &sub.index_path(),
            policy,
            opts,
            &ctx,
        )
        .map_err(|e| Error::Update(Box::new(e)))
        .and_then(|outcome| match outcome.errors.into_iter().next() {
            Some(e) => Err(Error::Entry(e)),
            None => Ok(()),
        })
    };
    let sub = match open_populated(root, m.path.as_bstr()) {
        Some(sub) => {
            let tree = tree_of(&sub, new)?;
            run(&sub, head_tree(&sub), tree, mode)?;
            sub
        }
        None => {
            if !git_dir.is_dir() {
                return Ok(());
            }
            let mut dirs = root.dirs();
            if let Ok(Some(kind)) = dirs.file_type(m.path.as_bstr()) {
                if kind != crate::fs::FileType::Directory {
                    let _ = dirs.unlink(m.path.as_bstr());
                }
            }
            dirs.mkdir_all(m.path.as_bstr(), false)
                .map_err(|source| Error::Mkdir {
                    path: m.path.clone(),
                    source,
                })?;
            connect(root, m.path.as_bstr(), git_dir)?;
            let sub = open_populated(root, m.path.as_bstr())
                .ok_or_else(|| Error::NotARepository(git_dir.to_owned()))?;
            let empty = ObjectId::empty_tree(sub.object_hash());
            // git's `submodule_reset_index`, then `read-tree -u -m <empty> <new>`.
            run(&sub, None, empty, Policy::Force)?;
            let tree = tree_of(&sub, new)?;
            run(&sub, Some(empty), tree, Policy::Safe)?;
            sub
        }
    };
    detach_head(&sub, new)
}

/// Check out the submodules of a fresh checkout: every gitlink of the index at `index_path` whose
/// submodule is active, set up (its git directory cloned — by git's `submodule update` during a
/// clone) and not checked out yet (no index) is brought to its recorded commit by this engine,
/// several at once, and its `HEAD` detached there. Returns the paths checked out and what
/// failed, per submodule, with git's messages; nested submodules are the caller's next round
/// (their `.gitmodules` exists only once this ran).
pub fn checkout_submodules(
    repo: &gix::Repository,
    worktree: &Path,
    index_path: &Path,
    opts: &Options,
    ctx: &Context<'_>,
) -> Result<(Vec<BString>, Vec<EntryError>), CheckoutError> {
    let index = gix::index::File::at(
        index_path,
        repo.object_hash(),
        crate::index::format::SKIP_HASH_ON_READ,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| CheckoutError::Repository {
        context: "reading the index",
        source: Box::new(e),
    })?;
    let moves: Vec<crate::ops::update::submodule::Move> = index
        .entries()
        .iter()
        .filter(|e| e.mode == gix::index::entry::Mode::COMMIT && e.stage_raw() == 0)
        .filter(|e| {
            let path = e.path(&index).to_path_lossy();
            gix::open(worktree.join(path)).is_ok_and(|sub| !sub.index_path().exists())
        })
        .map(|e| crate::ops::update::submodule::Move {
            path: e.path(&index).to_owned(),
            old: None,
            new: Some(e.id),
        })
        .collect();
    if moves.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let root = crate::fs::Root::open(worktree).map_err(|source| CheckoutError::Directory {
        path: BString::from(worktree.as_os_str().as_encoded_bytes()),
        source,
    })?;
    let failed: Vec<EntryError> = crate::ops::update::submodule::bring_all(
        repo,
        &root,
        &moves,
        crate::ops::update::Policy::Safe,
        opts,
        ctx,
    )
    .into_iter()
    .map(|(path, message)| EntryError { path, message })
    .collect();
    let done = moves
        .into_iter()
        .map(|m| m.path)
        .filter(|p| !failed.iter().any(|f| f.path == *p))
        .collect();
    Ok((done, failed))
}
