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
    set_tracking(repo, branch, remote, &[merge.to_owned()], false)
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

pub use crate::fs::lock::FileLock;

/// Why a reflog line could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReflogError {
    /// The reflog (or its directory) could not be created or appended to.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// No committer identity is configured or guessable.
    #[error("unable to determine the committer (set user.name and user.email)")]
    NoCommitter,
    /// The committer identity is malformed.
    #[error("{0}")]
    Committer(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Another process holds the ref's lock.
    #[error("cannot lock ref '{name}': Unable to create '{}.lock': {}.", .path.display(), strerror(.source))]
    Lock {
        /// The ref.
        name: String,
        /// The ref's file (the lock is `<path>.lock`).
        path: PathBuf,
        /// Why the lock could not be created.
        #[source]
        source: io::Error,
    },
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
) -> Result<(), ReflogError> {
    if repo.refs.write_reflog == gix::refs::store::WriteReflog::Disable {
        return Ok(());
    }
    write_reflog_line(repo, name, old, new, message, false)
}

/// Append one line to the reflog of `name`, creating the reflog whatever
/// `core.logAllRefUpdates` says: git's `REF_FORCE_CREATE_REFLOG`, which `checkout -l -b NEW`
/// asks for. gix writes no reflog at all when the setting is off, so the line is written here.
pub fn force_reflog(
    repo: &gix::Repository,
    name: &str,
    old: Option<gix::ObjectId>,
    new: gix::ObjectId,
    message: &str,
) -> Result<(), ReflogError> {
    write_reflog_line(repo, name, old, new, message, true)
}

/// The line [`append_reflog`] and [`force_reflog`] write; `force` creates a reflog that is
/// not there even for a ref git would not create one for.
fn write_reflog_line(
    repo: &gix::Repository,
    name: &str,
    old: Option<gix::ObjectId>,
    new: gix::ObjectId,
    message: &str,
    force: bool,
) -> Result<(), ReflogError> {
    let base = if name == "HEAD" {
        repo.git_dir()
    } else {
        repo.common_dir()
    };
    let path = base.join("logs").join(name);
    let autocreate = force || name == "HEAD" || name.starts_with("refs/heads/");
    if !autocreate && !path.exists() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ReflogError::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    let committer = repo
        .committer()
        .ok_or(ReflogError::NoCommitter)?
        .map_err(|e| ReflogError::Committer(Box::new(e)))?;
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
        .map_err(|e| ReflogError::Committer(Box::new(e)))?;
    // git writes the tab only before a message (`update-ref` without `-m` logs none).
    if !message.is_empty() {
        line.push(b'\t');
        line.extend_from_slice(message.as_bytes());
    }
    line.push(b'\n');
    // git appends the reflog while it holds the ref's lock (`<ref>.lock`); so do we, so that a
    // concurrent git never interleaves its own line with ours.
    let ref_path = base.join(name);
    if let Some(parent) = ref_path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ReflogError::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    let _lock = FileLock::acquire(&ref_path).map_err(|source| ReflogError::Lock {
        name: name.to_owned(),
        path: ref_path.clone(),
        source,
    })?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&line))
        .map_err(|source| ReflogError::Io { path, source })
}

/// A handle on `repo` whose ref edits write no reflog, for edits whose reflog lines
/// [`append_reflog`] writes.
pub fn without_reflog(repo: &gix::Repository) -> gix::Repository {
    let mut quiet = repo.clone();
    quiet.refs.write_reflog = gix::refs::store::WriteReflog::Disable;
    quiet
}

/// Point `HEAD` at `target` without a reflog line (the caller appends git's own with
/// [`append_reflog`]); `deref` moves the branch `HEAD` names instead, as `reset` does.
pub fn set_head_without_reflog(
    repo: &gix::Repository,
    target: gix::refs::Target,
    deref: bool,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    let quiet = without_reflog(repo);
    let committer = quiet.committer().transpose()?;
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: "".into(),
            },
            expected: PreviousValue::Any,
            new: target,
        },
        name: "HEAD".try_into().expect("a valid ref name"),
        deref,
    };
    quiet.edit_references_as([edit], committer)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Remotes and their fetch refspecs, as git's `remote.c` reads and queries them.

/// One `remote.<name>.fetch` refspec, split as git's `parse_refspec` splits a fetch refspec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refspec {
    /// The remote side (`refs/heads/*`).
    pub src: String,
    /// The local side (`refs/remotes/origin/*`); `None` for a refspec without `:`.
    pub dst: Option<String>,
    /// `^refs/heads/x`: a negative refspec.
    pub negative: bool,
    /// The source holds a `*`.
    pub pattern: bool,
}

impl Refspec {
    /// Parse one fetch refspec (`[+]src[:dst]` or `^src`); `None` for what git would refuse.
    pub fn parse_fetch(spec: &str) -> Option<Refspec> {
        let spec = spec.trim();
        if let Some(src) = spec.strip_prefix('^') {
            if src.is_empty() || src.contains(':') {
                return None;
            }
            return Some(Refspec {
                src: src.to_owned(),
                dst: None,
                negative: true,
                pattern: src.contains('*'),
            });
        }
        let spec = spec.strip_prefix('+').unwrap_or(spec);
        let (src, dst) = match spec.rfind(':') {
            Some(at) => (&spec[..at], Some(&spec[at + 1..])),
            None => (spec, None),
        };
        let pattern = src.contains('*');
        if let Some(dst) = dst {
            if pattern != dst.contains('*') && !dst.is_empty() {
                return None;
            }
        }
        Some(Refspec {
            src: src.to_owned(),
            dst: dst.filter(|d| !d.is_empty()).map(str::to_owned),
            negative: false,
            pattern,
        })
    }
}

/// A configured remote: its name and fetch refspecs.
#[derive(Debug, Clone)]
pub struct Remote {
    /// `origin`.
    pub name: String,
    /// Its `remote.<name>.fetch` refspecs, in configuration order.
    pub fetch: Vec<Refspec>,
}

/// Every remote named in the configuration (`remote.<name>.*`), in the order git's
/// `for_each_remote` visits them: the order of their first appearance.
pub fn remotes(repo: &gix::Repository) -> Vec<Remote> {
    let config = repo.config_snapshot();
    let file = config.plumbing();
    let mut out: Vec<Remote> = Vec::new();
    let Some(sections) = file.sections_by_name("remote") else {
        return out;
    };
    for section in sections {
        let Some(name) = section.header().subsection_name() else {
            continue;
        };
        let name = name.to_str_lossy().into_owned();
        let at = match out.iter().position(|r| r.name == name) {
            Some(at) => at,
            None => {
                out.push(Remote {
                    name,
                    fetch: Vec::new(),
                });
                out.len() - 1
            }
        };
        for value in section.values("fetch") {
            if let Some(spec) = Refspec::parse_fetch(&value.to_str_lossy()) {
                out[at].fetch.push(spec);
            }
        }
    }
    out
}

/// git's `match_name_with_pattern`: `name` against the pattern `key` (one `*`); with `value`,
/// what `name` maps to through `value`'s `*`.
fn match_pattern(key: &str, name: &str, value: Option<&str>) -> Option<String> {
    let star = key.find('*')?;
    let (prefix, suffix) = (&key[..star], &key[star + 1..]);
    let fits = name.starts_with(prefix)
        && name.len() >= prefix.len() + suffix.len()
        && name.ends_with(suffix);
    if !fits {
        return None;
    }
    let middle = &name[prefix.len()..name.len() - suffix.len()];
    match value {
        Some(value) => {
            let vstar = value.find('*')?;
            Some(format!(
                "{}{middle}{}",
                &value[..vstar],
                &value[vstar + 1..]
            ))
        }
        None => Some(String::new()),
    }
}

/// git's `query_matches_negative_refspec`.
fn matches_negative(fetch: &[Refspec], needle: &str) -> bool {
    let mut reversed = Vec::new();
    for spec in fetch.iter().filter(|s| !s.negative) {
        if spec.pattern {
            let key = spec.dst.as_deref().unwrap_or(&spec.src);
            if let Some(name) = match_pattern(key, needle, Some(&spec.src)) {
                reversed.push(name);
            }
        } else if needle == spec.src {
            reversed.push(spec.src.clone());
        }
    }
    reversed.iter().any(|name| {
        fetch.iter().filter(|s| s.negative).any(|neg| {
            if neg.pattern {
                match_pattern(&neg.src, name, None).is_some()
            } else {
                neg.src == *name
            }
        })
    })
}

/// git's `query_refspecs` over a remote's fetch refspecs: the local ref `needle` maps to
/// (`find_src == false`: `needle` is a remote ref) or the remote ref it comes from
/// (`find_src == true`: `needle` is a local ref). The first refspec that matches decides.
pub fn query_refspecs(fetch: &[Refspec], needle: &str, find_src: bool) -> Option<String> {
    if matches_negative(fetch, needle) {
        return None;
    }
    for spec in fetch {
        let Some(dst) = spec.dst.as_deref() else {
            continue;
        };
        if spec.negative {
            continue;
        }
        let (key, value) = if find_src {
            (dst, spec.src.as_str())
        } else {
            (spec.src.as_str(), dst)
        };
        if spec.pattern {
            if let Some(result) = match_pattern(key, needle, Some(value)) {
                return Some(result);
            }
        } else if needle == key {
            return Some(value.to_owned());
        }
    }
    None
}

/// The commit a full ref name points to (following symbolic refs), if it exists.
fn ref_target(repo: &gix::Repository, full: &str) -> Option<gix::ObjectId> {
    let name: &gix::refs::FullNameRef = full.try_into().ok()?;
    let mut reference = repo.try_find_reference(name).ok().flatten()?;
    reference.peel_to_id().ok().map(gix::Id::detach)
}

/// What git's `unique_tracking_name` finds for `git checkout <name>`: the remote-tracking refs
/// that the remotes' fetch refspecs map `refs/heads/<name>` to and that exist.
#[derive(Debug, Clone, Default)]
pub struct TrackingName {
    /// The ref to start from: the only match, or the match of `checkout.defaultRemote`.
    pub found: Option<(String, gix::ObjectId)>,
    /// How many remotes matched.
    pub matches: usize,
}

/// git's `unique_tracking_name`: the remote-tracking ref of `refs/heads/<name>` when exactly
/// one remote has one, or when `default_remote` (`checkout.defaultRemote`) has one.
pub fn unique_tracking_name(
    repo: &gix::Repository,
    name: &str,
    default_remote: Option<&str>,
) -> TrackingName {
    let src = format!("refs/heads/{name}");
    let mut first = None;
    let mut default = None;
    let mut matches = 0;
    for remote in remotes(repo) {
        let Some(dst) = query_refspecs(&remote.fetch, &src, false) else {
            continue;
        };
        let Some(id) = ref_target(repo, &dst) else {
            continue;
        };
        matches += 1;
        if default_remote == Some(remote.name.as_str()) {
            default = Some((dst.clone(), id));
        }
        if first.is_none() {
            first = Some((dst, id));
        }
    }
    let found = if matches == 1 { first } else { default };
    TrackingName { found, matches }
}

/// git's `find_tracked_branch` over all remotes: the `(remote, remote ref)` pairs whose fetch
/// refspecs map to the local ref `dst` (`refs/remotes/origin/x` → `("origin", "refs/heads/x")`).
pub fn tracked_by(repo: &gix::Repository, dst: &str) -> Vec<(String, String)> {
    remotes(repo)
        .into_iter()
        .filter_map(|remote| query_refspecs(&remote.fetch, dst, true).map(|src| (remote.name, src)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Branches in use by work trees (git's `die_if_checked_out` / `is_shared_symref`)

/// What a work tree's `HEAD` file says: `Some(ref)` when symbolic (a `ref:` line, or a symlink
/// into `refs/` as older gits made), `None` when detached or unreadable.
fn symbolic_head(git_dir: &Path) -> Option<String> {
    let head = git_dir.join("HEAD");
    let meta = std::fs::symlink_metadata(&head).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&head).ok()?;
        let target = target.to_str()?.to_owned();
        return target.starts_with("refs/").then_some(target);
    }
    let text = std::fs::read(&head).ok()?;
    let text = text.trim_end().to_str_lossy().into_owned();
    text.strip_prefix("ref:").map(|r| r.trim().to_owned())
}

/// git's `get_branch` for a state file (`rebase-merge/head-name`, `BISECT_START`): its first
/// line, with `refs/heads/` removed.
fn state_branch(path: &Path) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = text
        .trim_end_with(|c| c == '\n')
        .to_str_lossy()
        .into_owned();
    if text.is_empty() || text == "detached HEAD" {
        return None;
    }
    Some(text.strip_prefix("refs/heads/").unwrap_or(&text).to_owned())
}

/// git's `is_shared_symref(wt, "HEAD", full_ref)` for the work tree whose git dir is `git_dir`:
/// its HEAD names `full_ref`, or it is detached in the middle of a rebase or bisect that
/// started from that branch.
fn worktree_uses(git_dir: &Path, full_ref: &str) -> bool {
    match symbolic_head(git_dir) {
        Some(head) => head == full_ref,
        None => {
            let Some(branch) = full_ref.strip_prefix("refs/heads/") else {
                return false;
            };
            let rebase = if git_dir.join("rebase-apply").exists() {
                (!git_dir.join("rebase-apply/applying").exists())
                    .then(|| state_branch(&git_dir.join("rebase-apply/head-name")))
                    .flatten()
            } else if git_dir.join("rebase-merge").exists() {
                state_branch(&git_dir.join("rebase-merge/head-name"))
            } else {
                None
            };
            let bisect = git_dir
                .join("BISECT_LOG")
                .exists()
                .then(|| state_branch(&git_dir.join("BISECT_START")))
                .flatten();
            rebase.as_deref() == Some(branch) || bisect.as_deref() == Some(branch)
        }
    }
}

/// git's `die_if_checked_out(full_ref, ignore_current)`: the path of the first work tree (the
/// main one first, then the linked ones) that has `full_ref` (`refs/heads/x`) checked out, or is
/// rebasing or bisecting it; with `ignore_current`, the current work tree does not count. A bare
/// main repository holds no branch.
pub fn worktree_using(
    repo: &gix::Repository,
    full_ref: &str,
    ignore_current: bool,
) -> Option<PathBuf> {
    let canonical = |p: &Path| crate::sys::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let current = canonical(repo.git_dir());
    let common = canonical(repo.common_dir());
    let bare = repo.main_repo().ok().is_some_and(|main| main.is_bare());
    let skip_main = bare || (ignore_current && current == common);
    if !skip_main && worktree_uses(&common, full_ref) {
        let path = common.to_string_lossy().into_owned();
        let path = path.strip_suffix("/.git").unwrap_or(&path).to_owned();
        return Some(PathBuf::from(path));
    }
    let entries = std::fs::read_dir(common.join("worktrees")).ok()?;
    for entry in entries.flatten() {
        let admin = entry.path();
        let Ok(gitdir) = std::fs::read(admin.join("gitdir")) else {
            continue;
        };
        if ignore_current && canonical(&admin) == current {
            continue;
        }
        if worktree_uses(&admin, full_ref) {
            let path = gitdir.trim_end().to_str_lossy().into_owned();
            let path = path.strip_suffix("/.git").unwrap_or(&path).to_owned();
            return Some(PathBuf::from(path));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Upstream configuration with several merge refs and `branch.<name>.rebase`

/// git's `install_branch_config_multiple_remotes` without its messages: `branch.<branch>.remote =
/// <remote>`, every `branch.<branch>.merge` replaced by `merges` (in order), and with `rebase`,
/// `branch.<branch>.rebase = true`; under `config.lock`, as [`set_upstream`].
pub fn set_tracking(
    repo: &gix::Repository,
    branch: &str,
    remote: &str,
    merges: &[String],
    rebase: bool,
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
    // `git config --unset-all branch.<branch>.merge`: from every section of that name.
    let ids: Vec<_> = config
        .sections_and_ids_by_name("branch")
        .into_iter()
        .flatten()
        .filter(|(s, _)| s.header().subsection_name() == Some(branch.as_bytes().as_bstr()))
        .map(|(_, id)| id)
        .collect();
    for id in ids {
        if let Some(mut section) = config.section_mut_by_id(id) {
            while section.remove("merge").is_some() {}
        }
    }
    {
        let mut section = config
            .section_mut_or_create_new("branch", Some(branch.as_bytes().as_bstr()))
            .map_err(|e| other(&e))?;
        for merge in merges {
            section
                .push("merge", Some(merge.as_bytes().as_bstr()))
                .map_err(|e| other(&e))?;
        }
    }
    if rebase {
        config
            .set_raw_value(
                &format!("branch.{branch}.rebase"),
                "true".as_bytes().as_bstr(),
            )
            .map_err(|e| other(&e))?;
    }
    let mut out = Vec::new();
    config.write_to(&mut out).map_err(|e| other(&e))?;
    lock.commit(&out)
        .map_err(|e| ConfigError::Other(format!("{}: {e}", path.display())))
}

// ---------------------------------------------------------------------------------------------
// Submodule git directories

/// Why a submodule's git directory could not be set up, in git's words.
#[derive(Debug, thiserror::Error)]
pub enum GitDirError {
    /// `config.lock` is held or could not be made.
    #[error("could not lock config file {}: {source}", path.display())]
    Lock {
        /// The config file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The config file could not be read or changed; gix's message.
    #[error(transparent)]
    Config(Box<dyn std::error::Error + Send + Sync>),
    /// A file or directory could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// What was being written.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Set (or with `None` remove) `core.worktree` in a git directory's own config (a submodule's,
/// under `.git/modules`), under `config.lock` as git's `git_config_set_in_file` does.
pub fn set_core_worktree(git_dir: &Path, value: Option<&Path>) -> Result<(), GitDirError> {
    let path = git_dir.join("config");
    let lock = FileLock::acquire(&path).map_err(|e| GitDirError::Lock {
        path: path.clone(),
        source: e.into(),
    })?;
    let mut config =
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .map_err(|e| GitDirError::Config(e.into()))?;
    match value {
        Some(v) => {
            let v = v.to_string_lossy();
            config
                .set_raw_value("core.worktree", v.as_bytes().as_bstr())
                .map_err(|e| GitDirError::Config(e.into()))?;
        }
        None => {
            if let Ok(mut values) = config.raw_values_mut("core.worktree") {
                values.delete_all();
            }
        }
    }
    let mut out = Vec::new();
    config
        .write_to(&mut out)
        .map_err(|e| GitDirError::Config(e.into()))?;
    lock.commit(&out).map_err(|e| GitDirError::Write {
        path,
        source: e.into(),
    })
}

/// Create `path` and its missing parents inside a git directory (`.git/modules/...`).
pub fn create_git_dirs(path: &Path) -> Result<(), GitDirError> {
    std::fs::create_dir_all(path).map_err(|e| GitDirError::Write {
        path: path.to_owned(),
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::{query_refspecs, Refspec};

    fn specs(list: &[&str]) -> Vec<Refspec> {
        list.iter()
            .map(|s| Refspec::parse_fetch(s).expect("valid refspec"))
            .collect()
    }

    #[test]
    fn a_pattern_maps_both_ways() {
        let fetch = specs(&["+refs/heads/*:refs/remotes/origin/*"]);
        assert_eq!(
            query_refspecs(&fetch, "refs/heads/x/y", false).as_deref(),
            Some("refs/remotes/origin/x/y")
        );
        assert_eq!(
            query_refspecs(&fetch, "refs/remotes/origin/x", true).as_deref(),
            Some("refs/heads/x")
        );
        assert_eq!(query_refspecs(&fetch, "refs/tags/x", false), None);
    }

    #[test]
    fn unusual_destinations_and_exact_refspecs() {
        let fetch = specs(&[
            "+refs/heads/*:refs/remotes/extra/repo/extra/*",
            "refs/heads/main:refs/main-copy",
            "refs/heads/only",
        ]);
        assert_eq!(
            query_refspecs(&fetch, "refs/remotes/extra/repo/extra/spam", true).as_deref(),
            Some("refs/heads/spam")
        );
        assert_eq!(
            query_refspecs(&fetch, "refs/main-copy", true).as_deref(),
            Some("refs/heads/main")
        );
        // No destination: maps nothing.
        assert_eq!(query_refspecs(&fetch[2..], "refs/heads/only", false), None);
    }

    #[test]
    fn a_negative_refspec_excludes_its_branch() {
        let fetch = specs(&["+refs/heads/*:refs/remotes/origin/*", "^refs/heads/secret"]);
        assert_eq!(
            query_refspecs(&fetch, "refs/remotes/origin/secret", true),
            None
        );
        assert_eq!(
            query_refspecs(&fetch, "refs/remotes/origin/open", true).as_deref(),
            Some("refs/heads/open")
        );
    }
}
