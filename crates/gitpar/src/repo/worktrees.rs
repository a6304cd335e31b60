//! The work trees of a repository as git's `worktree.c` knows them: the main one and the linked
//! ones registered in `$GIT_COMMON_DIR/worktrees/<id>`, found by a name or a path
//! (`find_worktree`), their lock, and whether a linked one is still what its registration says
//! (`validate_worktree`).
//!
//! Everything is read from the git directory, but for the linked work tree's own `.git` file,
//! which is read through the path-safe layer.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use bstr::{BStr, BString, ByteSlice};

/// A work tree of the repository, as git's `get_worktrees` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// The name of a linked work tree's administrative directory (`worktrees/<id>`); `None`
    /// for the main work tree.
    pub id: Option<OsString>,
    /// Where it is: for a linked work tree, its `gitdir` file without the trailing `/.git`, as
    /// written there (absolute unless someone edited it); for the main one, the common
    /// directory's real path without `/.git` (a bare repository's is the repository itself).
    pub path: PathBuf,
}

impl Worktree {
    /// Returns true if and only if this is the main work tree (git's `is_main_worktree`).
    pub fn is_main(&self) -> bool {
        self.id.is_none()
    }

    /// A linked work tree's administrative directory, `<common_dir>/worktrees/<id>`; `None` for
    /// the main one.
    pub fn admin_dir(&self, common_dir: &Path) -> Option<PathBuf> {
        let id = self.id.as_ref()?;
        Some(common_dir.join("worktrees").join(id))
    }

    /// Why the work tree is locked (`worktrees/<id>/locked`, its content trimmed as git's
    /// `worktree_lock_reason` trims it: empty when no reason was given); `None` when it is not
    /// locked, or is the main one. `Err` when the lock file exists but cannot be read (git
    /// dies: `failed to read '<path>'`).
    pub fn lock_reason(&self, common_dir: &Path) -> Result<Option<String>, ReadError> {
        let Some(admin) = self.admin_dir(common_dir) else {
            return Ok(None);
        };
        let locked = admin.join("locked");
        if std::fs::symlink_metadata(&locked).is_err() {
            return Ok(None);
        }
        let bytes = std::fs::read(&locked).map_err(|source| ReadError {
            path: locked,
            source,
        })?;
        Ok(Some(bytes.trim().to_str_lossy().into_owned()))
    }

    /// Returns true if and only if a linked work tree's administrative directory holds a
    /// `modules` directory (git's `validate_no_submodules` takes it for submodules).
    pub fn has_modules_dir(&self, common_dir: &Path) -> bool {
        self.admin_dir(common_dir)
            .is_some_and(|admin| std::fs::metadata(admin.join("modules")).is_ok_and(|m| m.is_dir()))
    }

    /// git's `validate_worktree` for a linked work tree with `WT_VALIDATE_WORKTREE_MISSING_OK`
    /// (what `worktree remove` asks): its recorded path is absolute, and, unless the work tree
    /// is gone altogether, its `.git` file names the administrative directory. The main work
    /// tree is not asked (git refuses to remove it before).
    pub fn validate(&self, common_dir: &Path, ignore_case: bool) -> Result<(), Invalid> {
        let Some(admin) = self.admin_dir(common_dir) else {
            return Ok(());
        };
        if !self.path.is_absolute() {
            return Err(Invalid::NotAbsolute(admin.join("gitdir")));
        }
        if std::fs::symlink_metadata(&self.path).is_err() {
            return Ok(());
        }
        let named = read_gitfile(&self.path)?;
        let back = crate::sys::canonicalize(&admin).unwrap_or_else(|_| admin.clone());
        if same_path(&named, &back, ignore_case) {
            Ok(())
        } else {
            Err(Invalid::NotPointingBack {
                worktree: self.path.clone(),
                admin,
            })
        }
    }
}

/// A file of the git directory that exists but could not be read, in git's words.
#[derive(Debug, thiserror::Error)]
#[error("failed to read '{}': {}", path.display(), crate::fs::strerror(source))]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// The system error.
    #[source]
    pub source: io::Error,
}

/// Why a linked work tree does not validate, in git's words (`validation failed, cannot remove
/// working tree: <this>`).
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// Its `gitdir` file holds a relative path.
    #[error("'{}' file does not contain absolute path to the working tree location", .0.display())]
    NotAbsolute(PathBuf),
    /// The work tree is there, its `.git` is not.
    #[error("'{}' does not exist", .0.display())]
    NoDotGit(PathBuf),
    /// Its `.git` is no valid `.git` file: git's `read_gitfile_gently` error code (2 not a
    /// file, 3 cannot be opened, 4 cannot be read, 5 no `gitdir: ` line, 6 no path, 7 not a
    /// repository, 8 too large).
    #[error("'{}' is not a .git file, error code {code}", path.display())]
    NotAGitFile {
        /// The `.git` file.
        path: PathBuf,
        /// git's error code.
        code: u8,
    },
    /// Its `.git` file names another repository.
    #[error("'{}' does not point back to '{}'", worktree.display(), admin.display())]
    NotPointingBack {
        /// The work tree.
        worktree: PathBuf,
        /// Its administrative directory.
        admin: PathBuf,
    },
}

/// The git directory the `.git` file of the work tree at `worktree` names, real path: git's
/// `read_gitfile_gently` ([`gitfile_at`]), its error codes turned into git's messages.
fn read_gitfile(worktree: &Path) -> Result<PathBuf, Invalid> {
    let dot_git = worktree.join(".git");
    let root = crate::fs::Root::open(worktree).map_err(|_| Invalid::NoDotGit(dot_git.clone()))?;
    let mut dirs = root.dirs();
    if !matches!(dirs.lstat(b".git".as_bstr()), Ok(Some(_))) {
        return Err(Invalid::NoDotGit(dot_git));
    }
    gitfile_at(&mut dirs, b".git".as_bstr(), worktree).map_err(|code| Invalid::NotAGitFile {
        path: dot_git,
        code,
    })
}

/// git's `read_gitfile_gently` for the `.git` file at `path` in the work tree `dirs` opens,
/// whose directory is `dir` on disk: the git directory it names (relative to `dir`), real path;
/// or git's error code (1 not there, 2 not a regular file, 3 cannot be opened, 4 cannot be
/// read, 5 no `gitdir: ` line, 6 no path, 7 not a repository, 8 too large). The file is read
/// through the path-safe layer: a `.git` that is a symlink is no `.git` file here.
fn gitfile_at(dirs: &mut crate::fs::Dirs<'_>, path: &BStr, dir: &Path) -> Result<PathBuf, u8> {
    match dirs.file_type(path) {
        Ok(None) | Err(_) => return Err(1),
        Ok(Some(crate::fs::FileType::RegularFile)) => {}
        Ok(Some(_)) => return Err(2),
    }
    let mut file = dirs.open_read(path).map_err(|_| 3)?;
    let mut bytes = Vec::new();
    file.by_ref()
        .take((1 << 20) + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| 4)?;
    if bytes.len() > 1 << 20 {
        return Err(8);
    }
    let rest = bytes.strip_prefix(b"gitdir: ").ok_or(5u8)?;
    let end = rest.len()
        - rest
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'\n' | b'\r'))
            .count();
    if end == 0 {
        return Err(6);
    }
    let named = gix::path::from_byte_slice(&rest[..end]).map_err(|_| 5u8)?;
    let git_dir = dir.join(named);
    if !is_git_directory(&git_dir) {
        return Err(7);
    }
    Ok(crate::sys::canonicalize(&git_dir).unwrap_or(git_dir))
}

/// git's `is_submodule_populated_gently` for the submodule at `path` of the work tree `dirs`
/// opens (at `worktree` on disk): its `.git` is a repository, or a `.git` file naming one.
pub(crate) fn submodule_populated(
    dirs: &mut crate::fs::Dirs<'_>,
    worktree: &Path,
    path: &BStr,
) -> bool {
    let dot_git = BString::from(format!("{path}/.git"));
    crate::repo::git_dir::is_git_directory(dirs, dot_git.as_bstr())
        || gitfile_at(
            dirs,
            dot_git.as_bstr(),
            &worktree.join(path.to_path_lossy()),
        )
        .is_ok()
}

/// git's `is_git_directory` for a directory outside the work tree: a `HEAD`, and `objects`
/// and `refs` directories where a `commondir` file does not say they are elsewhere.
fn is_git_directory(dir: &Path) -> bool {
    let is_dir = |p: PathBuf| std::fs::metadata(p).is_ok_and(|m| m.is_dir());
    std::fs::symlink_metadata(dir.join("HEAD")).is_ok()
        && (std::fs::symlink_metadata(dir.join("commondir")).is_ok()
            || (is_dir(dir.join("objects")) && is_dir(dir.join("refs"))))
}

/// The work trees of the repository whose common directory is `common_dir`, main first, then
/// the linked ones in the order their administrative directories are read (git's
/// `get_worktrees`). A linked work tree whose `gitdir` file is missing or empty is left out,
/// as git leaves it out. `Err` when the common directory has no real path (git dies).
pub fn list(common_dir: &Path) -> io::Result<Vec<Worktree>> {
    let real = crate::sys::canonicalize(common_dir)?;
    let main = match real.file_name() {
        Some(name) if name == ".git" => real.parent().map_or(real.clone(), Path::to_owned),
        _ => real,
    };
    let mut out = vec![Worktree {
        id: None,
        path: main,
    }];
    let Ok(entries) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Ok(out);
    };
    for entry in entries.flatten() {
        let id = entry.file_name();
        let Ok(bytes) = std::fs::read(entry.path().join("gitdir")) else {
            continue;
        };
        if bytes.is_empty() {
            continue;
        }
        let trimmed = bytes.trim_end();
        let path = trimmed.strip_suffix(b"/.git").unwrap_or(trimmed);
        let Ok(path) = gix::path::from_byte_slice(path) else {
            continue;
        };
        out.push(Worktree {
            id: Some(id),
            path: path.to_owned(),
        });
    }
    Ok(out)
}

/// The work tree `arg` names (git's `find_worktree`): the one whose path ends in `arg` at a
/// directory boundary, if exactly one does (`worktree remove wt`); else the one at the path
/// `arg` names, relative to `base` (where git runs the command), compared by real path (the
/// last component may be gone). `ignore_case`: `core.ignoreCase`, git's `fspathcmp`.
pub fn find<'w>(
    list: &'w [Worktree],
    arg: &Path,
    base: &Path,
    ignore_case: bool,
) -> Option<&'w Worktree> {
    by_suffix(list, arg, ignore_case).or_else(|| {
        let wanted = real_path(&base.join(arg))?;
        list.iter().find(|wt| {
            real_path(&wt.path).is_some_and(|have| same_path(&have, &wanted, ignore_case))
        })
    })
}

/// git's `find_worktree_by_suffix`.
fn by_suffix<'w>(list: &'w [Worktree], suffix: &Path, ignore_case: bool) -> Option<&'w Worktree> {
    let suffix = suffix.as_os_str().as_encoded_bytes();
    if suffix.is_empty() {
        return None;
    }
    let mut found = list.iter().filter(|wt| {
        let path = wt.path.as_os_str().as_encoded_bytes();
        let Some(start) = path.len().checked_sub(suffix.len()) else {
            return false;
        };
        (start == 0 || is_dir_sep(path[start - 1]))
            && same_bytes(&path[start..], suffix, ignore_case)
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// git's `is_dir_sep`.
fn is_dir_sep(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}

/// git's `fspathcmp(a, b) == 0`.
fn same_path(a: &Path, b: &Path, ignore_case: bool) -> bool {
    same_bytes(
        a.as_os_str().as_encoded_bytes(),
        b.as_os_str().as_encoded_bytes(),
        ignore_case,
    )
}

fn same_bytes(a: &[u8], b: &[u8], ignore_case: bool) -> bool {
    if ignore_case {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// git's `strbuf_realpath(.., die_on_error = 0)`: every link resolved, the last component
/// allowed not to exist; `None` when more is missing.
fn real_path(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = crate::sys::canonicalize(path) {
        return Some(real);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(crate::sys::canonicalize(parent).ok()?.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wt(id: Option<&str>, path: &str) -> Worktree {
        Worktree {
            id: id.map(OsString::from),
            path: PathBuf::from(path),
        }
    }

    #[test]
    fn a_suffix_names_one_work_tree_at_a_directory_boundary() {
        let list = [
            wt(None, "/r/main"),
            wt(Some("a"), "/r/x/wt"),
            wt(Some("b"), "/r/y/wt"),
        ];
        let find = |arg: &str| find(&list, Path::new(arg), Path::new("/nonexistent"), false);
        assert_eq!(find("main"), Some(&list[0]));
        assert_eq!(find("x/wt"), Some(&list[1]));
        // Two end in `wt`: neither by suffix, and no such path.
        assert_eq!(find("wt"), None);
        // `ain` is no whole component.
        assert_eq!(find("ain"), None);
        assert_eq!(find("X/WT"), None);
        assert_eq!(
            super::find(&list, Path::new("X/WT"), Path::new("/"), true),
            Some(&list[1])
        );
    }
}
