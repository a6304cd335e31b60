//! Branch helpers shared by the commands that create branches: git's "DWIM" guess of a
//! remote-tracking branch, and the upstream configuration `branch.<name>.{remote,merge}`.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use bstr::ByteSlice;

/// The remote-tracking branches named `refs/remotes/<remote>/<name>`, as `(remote, full ref)`.
/// `git switch <name>` creates a local branch from it when exactly one exists.
pub fn remote_candidates(repo: &gix::Repository, name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(platform) = repo.references() else {
        return out;
    };
    let Ok(iter) = platform.prefixed("refs/remotes/") else {
        return out;
    };
    for r in iter.flatten() {
        let full = r.name().as_bstr().to_str_lossy().into_owned();
        let Some(rest) = full.strip_prefix("refs/remotes/") else {
            continue;
        };
        if let Some((remote, branch)) = rest.split_once('/') {
            if branch == name && branch != "HEAD" {
                out.push((remote.to_owned(), full.clone()));
            }
        }
    }
    out
}

/// Why `branch.<name>.*` could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `config.lock` is held (or cannot be created): git's words, the config is untouched.
    #[error("could not lock config file {}: {}", display_path(.path), strerror(.source))]
    Lock {
        /// The config file.
        path: PathBuf,
        /// Why the lock could not be created (`File exists` when another process holds it).
        #[source]
        source: io::Error,
    },
    /// The config could not be parsed, edited or written.
    #[error("{0}")]
    Other(String),
}

/// Write `branch.<branch>.remote = <remote>` and `branch.<branch>.merge = <merge>` into the
/// repository's local config file, as `git branch --track` does: under `config.lock`, created
/// exclusively before the file is read, renamed into place. A held lock changes nothing.
pub fn set_upstream(
    repo: &gix::Repository,
    branch: &str,
    remote: &str,
    merge: &str,
) -> Result<(), ConfigError> {
    let path = repo.common_dir().join("config");
    let lock = FileLock::acquire(&path).map_err(|source| ConfigError::Lock {
        path: path.clone(),
        source,
    })?;
    let other = |e: &dyn std::fmt::Display| ConfigError::Other(e.to_string());
    let mut config =
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .map_err(|e| other(&e))?;
    config
        .set_raw_value(
            &format!("branch.{branch}.remote"),
            remote.as_bytes().as_bstr(),
        )
        .map_err(|e| other(&e))?;
    config
        .set_raw_value(
            &format!("branch.{branch}.merge"),
            merge.as_bytes().as_bstr(),
        )
        .map_err(|e| other(&e))?;
    let mut out = Vec::new();
    config.write_to(&mut out).map_err(|e| other(&e))?;
    lock.commit(&out)
        .map_err(|e| ConfigError::Other(format!("{}: {e}", path.display())))
}

/// `path` as git names it in messages: relative to the current directory when below it,
/// without `.` components (`.git/config`).
fn display_path(path: &Path) -> String {
    let path = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned());
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect::<PathBuf>()
        .display()
        .to_string()
}

/// The system's message for `err` as C's `strerror` gives it (`File exists`), without Rust's
/// ` (os error 17)` suffix.
pub(crate) fn strerror(err: &io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(at) if err.raw_os_error().is_some() => text[..at].to_owned(),
        _ => text,
    }
}

/// A repository file rewritten the way git's `lockfile.c` does it: `<file>.lock` is created
/// exclusively (`O_CREAT|O_EXCL`; an existing one means another process holds the file),
/// written, and renamed over `<file>`. Dropped without [`FileLock::commit`], the lock file is
/// removed and `<file>` is left as it was.
#[derive(Debug)]
pub struct FileLock {
    lock_path: PathBuf,
    target: PathBuf,
    file: Option<std::fs::File>,
}

impl FileLock {
    /// Take the lock on `target` by creating `target.lock` exclusively; the error is the
    /// system's (`File exists` when held).
    pub fn acquire(target: &Path) -> io::Result<FileLock> {
        let mut lock_path = target.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock_path)?;
        Ok(FileLock {
            lock_path,
            target: target.to_owned(),
            file: Some(file),
        })
    }

    /// The lock file's path (`<file>.lock`).
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// Write `contents` into the lock file and rename it over the target.
    pub fn commit(mut self, contents: &[u8]) -> io::Result<()> {
        let mut file = self.file.take().expect("committed at most once, by value");
        file.write_all(contents)?;
        drop(file);
        std::fs::rename(&self.lock_path, &self.target)?;
        self.lock_path = PathBuf::new();
        Ok(())
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if !self.lock_path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
    }
}

/// Append one line to the reflog of `name` (`HEAD` or a full ref name), as git writes it:
/// `<old> <new> <committer>\t<message>`.
///
/// gix's ref transactions write reflogs too, but skip entries whose old and new ids are equal
/// (git logs `reset --hard HEAD` all the same) and cannot give a symbolic `HEAD` the previous
/// commit; the commands that need git's exact reflog write it here, after updating the ref with
/// reflogs disabled.
pub fn append_reflog(
    repo: &gix::Repository,
    name: &str,
    old: Option<gix::ObjectId>,
    new: gix::ObjectId,
    message: &str,
) -> Result<(), String> {
    if repo.refs.write_reflog == gix::refs::store::WriteReflog::Disable {
        return Ok(());
    }
    let base = if name == "HEAD" {
        repo.git_dir()
    } else {
        repo.common_dir()
    };
    let path = base.join("logs").join(name);
    let autocreate = name == "HEAD" || name.starts_with("refs/heads/");
    if !autocreate && !path.exists() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let committer = repo
        .committer()
        .ok_or_else(|| {
            "unable to determine the committer (set user.name and user.email)".to_string()
        })?
        .map_err(|e| e.to_string())?;
    let mut line = Vec::new();
    line.extend_from_slice(
        old.unwrap_or_else(|| new.kind().null())
            .to_string()
            .as_bytes(),
    );
    line.push(b' ');
    line.extend_from_slice(new.to_string().as_bytes());
    line.push(b' ');
    committer
        .trim()
        .write_to(&mut line)
        .map_err(|e| e.to_string())?;
    line.push(b'\t');
    line.extend_from_slice(message.as_bytes());
    line.push(b'\n');
    // git appends the reflog while it holds the ref's lock (`<ref>.lock`); so do we, so that a
    // concurrent git never interleaves its own line with ours.
    let ref_path = base.join(name);
    if let Some(parent) = ref_path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let _lock = FileLock::acquire(&ref_path).map_err(|e| {
        format!(
            "cannot lock ref '{name}': Unable to create '{}.lock': {}.",
            ref_path.display(),
            strerror(&e)
        )
    })?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&line))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A handle on `repo` whose ref edits write no reflog, for edits whose reflog lines
/// [`append_reflog`] writes.
pub fn without_reflog(repo: &gix::Repository) -> gix::Repository {
    let mut quiet = repo.clone();
    quiet.refs.write_reflog = gix::refs::store::WriteReflog::Disable;
    quiet
}
