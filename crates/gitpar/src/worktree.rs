//! `worktree add`: register a linked work tree exactly as `git worktree add` does, so that
//! `git worktree list`, `git status` and `git worktree remove` treat it as their own.
//!
//! Layout written: `<common>/worktrees/<name>/{gitdir,commondir,HEAD,locked}` and `<path>/.git`
//! (a `gitdir:` file). `locked` ("initializing") guards the half-made work tree against
//! `git worktree prune` until the checkout is done, as in git.

use std::io;
use std::path::{Path, PathBuf};

use gix::hash::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

/// What to add.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Where the new work tree goes.
    pub path: PathBuf,
    /// The commit-ish to check out; `HEAD` when `None`.
    pub commit_ish: Option<String>,
    /// `-b NEW`: create this branch at the commit and check it out.
    pub new_branch: Option<String>,
    /// `--detach`: detached `HEAD` even when the commit-ish is a branch.
    pub detach: bool,
}

/// What HEAD of the new work tree becomes; also what git says in "Preparing worktree (...)".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadKind {
    /// A branch created for this work tree.
    NewBranch(String),
    /// An existing branch checked out in it.
    Existing(String),
    /// A detached HEAD.
    Detached,
}

/// A registered, not yet checked out, work tree.
#[derive(Debug)]
pub struct Prepared {
    /// The new work tree's repository (its `git_dir` is the admin directory).
    pub repo: gix::Repository,
    /// The commit to check out.
    pub commit: ObjectId,
    /// What HEAD is.
    pub head: HeadKind,
    /// The admin directory, `<common>/worktrees/<name>`.
    pub admin_dir: PathBuf,
    /// The work tree's absolute path.
    pub path: PathBuf,
    /// Whether we created `path` (and so may remove it again on failure).
    pub created_path: bool,
}

/// Why a work tree could not be added. Messages are git's where git has one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The path exists and is not an empty directory.
    #[error("'{0}' already exists")]
    PathExists(String),
    /// `-b` names an existing branch.
    #[error("a branch named '{0}' already exists")]
    BranchExists(String),
    /// The branch is the HEAD of another work tree.
    #[error("'{branch}' is already used by worktree at '{}'", at.display())]
    BranchInUse {
        /// The branch.
        branch: String,
        /// The work tree that has it checked out.
        at: PathBuf,
    },
    /// The commit-ish does not name a commit.
    #[error("invalid reference: {0}")]
    InvalidReference(String),
    /// A file of the registration could not be written.
    #[error("{context} '{}': {source}", path.display())]
    Io {
        /// What we were doing.
        context: &'static str,
        /// Where.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// gix could not read or write the repository.
    #[error("{context}: {message}")]
    Repository {
        /// What we were doing.
        context: &'static str,
        /// What gix reported.
        message: String,
    },
}

fn gix_err<E: std::fmt::Display>(context: &'static str) -> impl FnOnce(E) -> Error {
    move |err| Error::Repository {
        context,
        message: err.to_string(),
    }
}

fn io_err(context: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    let path = path.to_owned();
    move |source| Error::Io {
        context,
        path,
        source,
    }
}

/// Register a new work tree for `repo` (the repository the command runs in) and point its HEAD
/// where `req` says. The checkout itself is the caller's next step; on failure the caller calls
/// [`remove_junk`] as git does.
pub fn prepare(
    repo: &gix::Repository,
    req: &Request,
    overrides: &[String],
) -> Result<Prepared, Error> {
    let cwd = std::env::current_dir().map_err(io_err(
        "unable to read the current directory",
        Path::new("."),
    ))?;
    let path = if req.path.is_absolute() {
        req.path.clone()
    } else {
        cwd.join(&req.path)
    };
    let path = normalize(&path);
    if !crate::clone::is_empty_or_missing(&path) {
        return Err(Error::PathExists(req.path.display().to_string()));
    }

    // Decide the branch and commit, as git's DWIM does.
    let branch_exists = |name: &str| -> bool {
        repo.try_find_reference(format!("refs/heads/{name}").as_str())
            .ok()
            .flatten()
            .is_some()
    };
    let resolve = |spec: &str| -> Result<ObjectId, Error> {
        repo.rev_parse_single(spec)
            .map_err(|_| Error::InvalidReference(spec.to_owned()))?
            .object()
            .map_err(|_| Error::InvalidReference(spec.to_owned()))?
            .peel_to_commit()
            .map(|c| c.id)
            .map_err(|_| Error::InvalidReference(spec.to_owned()))
    };
    let (head, commit, start_point) = if let Some(new) = &req.new_branch {
        if branch_exists(new) {
            return Err(Error::BranchExists(new.clone()));
        }
        let start = req.commit_ish.clone().unwrap_or_else(|| "HEAD".into());
        (HeadKind::NewBranch(new.clone()), resolve(&start)?, start)
    } else if req.detach {
        let start = req.commit_ish.clone().unwrap_or_else(|| "HEAD".into());
        (HeadKind::Detached, resolve(&start)?, start)
    } else if let Some(spec) = &req.commit_ish {
        if spec != "HEAD" && branch_exists(spec) {
            (
                HeadKind::Existing(spec.clone()),
                resolve(&format!("refs/heads/{spec}"))?,
                spec.clone(),
            )
        } else {
            (HeadKind::Detached, resolve(spec)?, spec.clone())
        }
    } else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if branch_exists(&name) {
            (
                HeadKind::Existing(name.clone()),
                resolve(&format!("refs/heads/{name}"))?,
                name,
            )
        } else {
            (HeadKind::NewBranch(name), resolve("HEAD")?, "HEAD".into())
        }
    };
    if let HeadKind::Existing(branch) = &head {
        if let Some(at) = checked_out_at(repo, branch)? {
            return Err(Error::BranchInUse {
                branch: branch.clone(),
                at,
            });
        }
    }

    // The branch first, in the common repository, as `git branch NEW START` would.
    if let HeadKind::NewBranch(b) = &head {
        let committer = repo
            .committer()
            .transpose()
            .map_err(gix_err("unable to determine the committer"))?;
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: format!("branch: Created from {start_point}").into(),
                },
                expected: PreviousValue::MustNotExist,
                new: Target::Object(commit),
            },
            name: FullName::try_from(format!("refs/heads/{b}"))
                .map_err(gix_err("invalid branch name"))?,
            deref: false,
        };
        repo.edit_references_as(Some(edit), committer)
            .map_err(gix_err("unable to create the branch"))?;
    }

    // Register: admin directory first (locked), then the work tree's .git file.
    let common = std::fs::canonicalize(repo.common_dir())
        .map_err(io_err("unable to resolve", repo.common_dir()))?;
    let worktrees = common.join("worktrees");
    std::fs::create_dir_all(&worktrees)
        .map_err(io_err("could not create directory", &worktrees))?;
    let base = sanitize_name(&path);
    let mut name = base.clone();
    let mut counter = 0;
    let admin_dir = loop {
        let candidate = worktrees.join(&name);
        match std::fs::create_dir(&candidate) {
            Ok(()) => break candidate,
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                counter += 1;
                name = format!("{base}{counter}");
            }
            Err(err) => return Err(io_err("could not create directory", &candidate)(err)),
        }
    };
    let created_path = !path.exists();
    let register = || -> Result<gix::Repository, Error> {
        std::fs::create_dir_all(&path).map_err(io_err("could not create directory", &path))?;
        let write = |file: &Path, text: String| {
            std::fs::write(file, text).map_err(io_err("could not write", file))
        };
        write(&admin_dir.join("locked"), "initializing\n".into())?;
        write(
            &admin_dir.join("gitdir"),
            format!("{}\n", path.join(".git").display()),
        )?;
        write(
            &path.join(".git"),
            format!("gitdir: {}\n", admin_dir.display()),
        )?;
        write(&admin_dir.join("commondir"), "../..\n".into())?;
        // HEAD in the loose-ref format git writes for a work tree: a symbolic ref to the branch,
        // or the commit id when detached.
        let head_text = match &head {
            HeadKind::NewBranch(b) | HeadKind::Existing(b) => format!("ref: refs/heads/{b}\n"),
            HeadKind::Detached => format!("{commit}\n"),
        };
        // git writes HEAD with `update-ref`/`symbolic-ref`, under `HEAD.lock`.
        let head_path = admin_dir.join("HEAD");
        crate::branch::FileLock::acquire(&head_path)
            .and_then(|lock| lock.commit(head_text.as_bytes()))
            .map_err(io_err("unable to write", &head_path))?;
        let open_opts = gix::open::Options::default().config_overrides(overrides.iter().cloned());
        gix::open_opts(&path, open_opts).map_err(gix_err("unable to open the new worktree"))
    };
    let wt_repo = match register() {
        Ok(r) => r,
        Err(err) => {
            let _ = std::fs::remove_dir_all(&admin_dir);
            if created_path {
                let _ = std::fs::remove_dir_all(&path);
            }
            return Err(err);
        }
    };
    Ok(Prepared {
        repo: wt_repo,
        commit,
        head,
        admin_dir,
        path,
        created_path,
    })
}

/// The checkout is done: remove the `locked` marker so that git treats the work tree as
/// complete.
pub fn finish(prepared: &Prepared) -> Result<(), Error> {
    let locked = prepared.admin_dir.join("locked");
    std::fs::remove_file(&locked).map_err(io_err("could not remove", &locked))
}

/// Undo a failed `worktree add` the way git's `remove_junk` does: the admin directory and the
/// work tree directory (if we created it; its contents otherwise) go away.
pub fn remove_junk(prepared: &Prepared) {
    let _ = std::fs::remove_dir_all(&prepared.admin_dir);
    if prepared.created_path {
        let _ = std::fs::remove_dir_all(&prepared.path);
    } else if let Ok(entries) = std::fs::read_dir(&prepared.path) {
        for entry in entries.flatten() {
            let p = entry.path();
            let _ = if p.is_dir() && !p.is_symlink() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// The work tree (main or linked) whose HEAD is `refs/heads/<branch>`, or that is rebasing or
/// bisecting it, if any: git's `die_if_checked_out(branch, 0)` ([`crate::branch::worktree_using`]).
fn checked_out_at(repo: &gix::Repository, branch: &str) -> Result<Option<PathBuf>, Error> {
    Ok(crate::branch::worktree_using(
        repo,
        &format!("refs/heads/{branch}"),
        false,
    ))
}

/// The admin directory's name: the work tree's base name, with characters git would not allow in
/// a ref component replaced, as git's `sanitize_refname_component` does for this purpose.
fn sanitize_name(path: &Path) -> String {
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "worktree".into());
    let mut out: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_control() || " ~^:?*[\\".contains(c) {
                '-'
            } else {
                c
            }
        })
        .collect();
    while out.starts_with('.') {
        out.remove(0);
    }
    if out.ends_with(".lock") {
        out.truncate(out.len() - 5);
    }
    if out.is_empty() {
        out = "worktree".into();
    }
    out
}

/// Make `path` absolute-clean: drop `.` components and resolve `..` lexically, the way git's
/// `strbuf_realpath` would for a path that does not exist yet.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    // Resolve symlinks in the existing part so the paths recorded match git's realpath.
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_owned();
            }
            _ => return out,
        }
    }
    let mut real = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_names_are_valid_ref_components() {
        assert_eq!(sanitize_name(Path::new("/x/feature")), "feature");
        assert_eq!(sanitize_name(Path::new("/x/.hidden")), "hidden");
        assert_eq!(sanitize_name(Path::new("/x/a b:c")), "a-b-c");
        assert_eq!(sanitize_name(Path::new("/x/t.lock")), "t");
    }

    #[test]
    fn normalize_removes_dot_components() {
        let tmp = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(tmp.path()).unwrap();
        assert_eq!(normalize(&tmp.path().join("./a/../b")), real.join("b"));
    }
}
