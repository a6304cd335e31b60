//! Opening the repository a command works in, exactly as git's `setup_git_directory` (setup.c)
//! does: `GIT_DIR` (which `git --git-dir=X par ...` exports), `GIT_WORK_TREE` (`--work-tree`),
//! `core.worktree`, `core.bare`, `GIT_COMMON_DIR`, `GIT_INDEX_FILE`, `GIT_CEILING_DIRECTORIES`,
//! `GIT_DISCOVERY_ACROSS_FILESYSTEM`, `.git` files of linked work trees and `safe.directory`.
//!
//! git-par decides which directories are the repository and the work tree itself, with git's
//! rules and git's messages, and only then asks gix to open that git directory: gix's own
//! discovery differs in small ways that matter here (a `.git` file whose gitdir is gone makes
//! it keep searching upwards and open the enclosing repository; `GIT_DIR` alone gives the
//! directory above it as the work tree where git uses the current directory).

use std::path::{Path, PathBuf};

use crate::exit::{fatal, FATAL};
use crate::platform;

/// A repository opened as git opens it.
pub(crate) struct Opened {
    /// The repository; its `workdir()` is [`Opened::workdir`].
    pub repo: gix::Repository,
    /// The work tree (absolute, symlinks resolved), if there is one.
    pub workdir: Option<PathBuf>,
    /// The index: `GIT_INDEX_FILE` if set (relative to the top of the work tree, as git
    /// resolves it after moving there), else `index` in the git directory.
    pub index_path: PathBuf,
    /// The current directory relative to the work tree (empty at its top or outside of it):
    /// what relative pathspecs are relative to.
    pub prefix: PathBuf,
}

impl Opened {
    /// The work tree, or git's `fatal: this operation must be run in a work tree`.
    pub(crate) fn require_workdir(&self) -> Result<&Path, u8> {
        self.workdir
            .as_deref()
            .ok_or_else(|| fatal("this operation must be run in a work tree"))
    }
}

/// Why git can work in the repository at `git_dir` and gix cannot open it: a `HEAD` that is a
/// symbolic link (git's oldest form of a symbolic ref, which git still reads), or the SHA-256
/// object format (git-par's gix is built for SHA-1). `None` when neither explains the failure.
fn unreadable_by_gix(git_dir: &Path) -> Option<&'static str> {
    let head = git_dir.join("HEAD");
    if std::fs::symlink_metadata(&head).is_ok_and(|m| m.file_type().is_symlink()) {
        return Some("its HEAD is a symbolic link");
    }
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .map(|c| git_dir.join(c.trim_end()))
        .unwrap_or_else(|_| git_dir.to_owned());
    let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
    config
        .lines()
        .map(|l| l.trim().to_ascii_lowercase().replace(' ', ""))
        .any(|l| l == "objectformat=sha256")
        .then_some("it uses the SHA-256 object format")
}

/// Returns true if and only if `repo` keeps its references in a reftable
/// (`extensions.refStorage=reftable`), which gix opens but cannot read: such a repository is
/// git's, as a SHA-256 one is.
pub(crate) fn uses_reftable(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .string("extensions.refStorage")
        .is_some_and(|v| v.eq_ignore_ascii_case(b"reftable"))
}

/// Returns true if and only if `repo` has a graft file (`GIT_GRAFT_FILE`, else
/// `info/grafts` in its common directory): git's deprecated grafts rewrite parents as git reads
/// commits (and git hints at their deprecation whenever it reads them: t6050.37); gix does not
/// read them, so history (ahead/behind) would differ: `status` there is git's. (Asked where a
/// command starts, before it changes anything: `worktree add` opens the repository again
/// after git made the work tree.)
pub(crate) fn has_grafts(repo: &gix::Repository) -> bool {
    let file = match std::env::var_os("GIT_GRAFT_FILE") {
        Some(f) => PathBuf::from(f),
        None => repo.common_dir().join("info/grafts"),
    };
    file.is_file()
}

/// Replace this process by git with git-par's own arguments: the one case, besides
/// `-p/--patch`, where git does the whole command, because git-par cannot read the repository
/// at all (see [`unreadable_by_gix`]). Set `GIT_PAR_TRACE` to see it happen.
fn hand_to_git(why: &str) -> ! {
    let code = crate::patch::hand_to_git("command", why, &crate::git::own_args());
    std::process::exit(i32::from(code))
}

/// What the setup decided, before gix opens anything.
struct Setup {
    git_dir: PathBuf,
    workdir: Option<PathBuf>,
}

/// Open the repository of the current directory as git's `setup_git_directory` does, with
/// `overrides` (`name=value`, from `-c` and `GIT_CONFIG_PARAMETERS`) applied to its
/// configuration. Failures print git's message and return its exit code (128).
pub(crate) fn open(overrides: &[String]) -> Result<Opened, u8> {
    let cwd = platform::current_dir()
        .map_err(|e| fatal(format!("unable to get current working directory: {e}")))?;
    let setup = match std::env::var_os("GIT_DIR") {
        Some(dir) => explicit(Path::new(&dir), &cwd)?,
        None => discover(&cwd, overrides)?,
    };
    let git_dir = platform::canonicalize(&setup.git_dir).map_err(|_| {
        fatal(format!(
            "not a git repository: '{}'",
            setup.git_dir.display()
        ))
    })?;
    // Ownership was checked above, as git checks it (and git does not check an explicit
    // GIT_DIR): what is opened now is trusted.
    let opts = gix::open::Options::default()
        .config_overrides(overrides.iter().cloned())
        .open_path_as_is(true)
        .with(gix::sec::Trust::Full);
    let mut repo: gix::Repository = match gix::open_opts(&git_dir, opts) {
        Ok(repo) => repo,
        Err(e) => {
            if let Some(why) = unreadable_by_gix(&git_dir) {
                hand_to_git(why);
            }
            return Err(fatal(format!(
                "not a git repository: '{}': {e}",
                git_dir.display()
            )));
        }
    };
    if uses_reftable(&repo) {
        hand_to_git("it stores its references in a reftable");
    }
    if let Some(common) = std::env::var_os("GIT_COMMON_DIR") {
        // gix reads `commondir` and has no way to be told another one: refuse rather than
        // work on other objects and refs than git would.
        let wanted = platform::canonicalize(&common).ok();
        let found = platform::canonicalize(repo.common_dir()).ok();
        if wanted.is_none() || wanted != found {
            return Err(fatal(format!(
                "GIT_COMMON_DIR='{}' is not the common directory of '{}'; git-par cannot use it",
                Path::new(&common).display(),
                git_dir.display()
            )));
        }
    }
    repo.set_workdir(setup.workdir.clone())
        .map_err(|e| fatal(format!("unable to use the work tree: {e}")))?;
    let index_path = index_path(&git_dir, setup.workdir.as_deref(), &cwd);
    let prefix = setup
        .workdir
        .as_deref()
        .and_then(|w| cwd.strip_prefix(w).ok())
        .map(Path::to_owned)
        .unwrap_or_default();
    Ok(Opened {
        repo,
        workdir: setup.workdir,
        index_path,
        prefix,
    })
}

/// The index git uses: `GIT_INDEX_FILE` (a relative one is relative to the top of the work tree,
/// where git has moved by the time it reads it), else `<git dir>/index`.
pub(crate) fn index_path(git_dir: &Path, workdir: Option<&Path>, cwd: &Path) -> PathBuf {
    match std::env::var_os("GIT_INDEX_FILE").filter(|v| !v.is_empty()) {
        Some(file) => workdir.unwrap_or(cwd).join(file),
        None => git_dir.join("index"),
    }
}

/// `GIT_DIR` is set: git's `setup_explicit_git_dir`.
fn explicit(git_dir_env: &Path, cwd: &Path) -> Result<Setup, u8> {
    let git_dir = match read_gitfile(git_dir_env)? {
        Some(resolved) => resolved,
        None => git_dir_env.to_owned(),
    };
    if !is_git_directory(&git_dir) {
        return Err(fatal(format!(
            "not a git repository: '{}'",
            git_dir.display()
        )));
    }
    let format = read_format(&git_dir)?;
    explicit_work_tree(cwd.join(git_dir), cwd, &format)
}

/// The work tree of `setup_explicit_git_dir`, once the git directory is known to be one.
fn explicit_work_tree(git_dir: PathBuf, cwd: &Path, format: &Format) -> Result<Setup, u8> {
    let workdir =
        if let Some(env) = std::env::var_os("GIT_WORK_TREE") {
            // A work tree that does not exist is no work tree: commands that need one say so.
            platform::canonicalize(cwd.join(env)).ok()
        } else if format.bare == Some(true) {
            if format.worktree.is_some() {
                eprintln!("warning: core.bare and core.worktree do not make sense");
            }
            None
        } else if let Some(configured) = &format.worktree {
            let path = Path::new(configured);
            if path.is_absolute() {
                platform::canonicalize(path).ok()
            } else {
                // git changes into the git directory, then into the configured path.
                let base = platform::canonicalize(&git_dir).map_err(|e| {
                    fatal(format!(
                        "cannot chdir to '{}': {}",
                        git_dir.display(),
                        strerror(&e)
                    ))
                })?;
                Some(platform::canonicalize(base.join(path)).map_err(|e| {
                    fatal(format!("cannot chdir to '{configured}': {}", strerror(&e)))
                })?)
            }
        } else if !env_bool("GIT_IMPLICIT_WORK_TREE", true)? {
            None
        } else {
            // `GIT_DIR` without a work tree: the current directory is the top of the work tree.
            Some(cwd.to_owned())
        };
    Ok(Setup { git_dir, workdir })
}

/// No `GIT_DIR`: search `.git` from the current directory upwards (git's
/// `setup_git_directory_gently_1`), then `setup_discovered_git_dir` / `setup_bare_git_dir`.
fn discover(cwd: &Path, overrides: &[String]) -> Result<Setup, u8> {
    let ceiling = ceiling_offset(cwd);
    let one_filesystem = !env_bool("GIT_DISCOVERY_ACROSS_FILESYSTEM", false)?;
    let device = |p: &Path| {
        platform::device_of(p).map_err(|e| {
            fatal(format!(
                "failed to stat '{}': {}",
                p.display(),
                strerror(&e)
            ))
        })
    };
    let current_device = if one_filesystem {
        Some(device(cwd)?)
    } else {
        None
    };
    let mut dir = cwd.to_owned();
    loop {
        let dot_git = dir.join(".git");
        let found = match read_gitfile(&dot_git)? {
            Some(git_dir) => Some((git_dir, Some(dot_git))),
            None => is_git_directory(&dot_git).then_some((dot_git, None)),
        };
        if let Some((git_dir, gitfile)) = found {
            if !valid_ownership(gitfile.as_deref(), Some(&dir), &git_dir, overrides) {
                return Err(dubious_ownership(&dir));
            }
            return discovered(git_dir, &dir, false, cwd);
        }
        if is_git_directory(&dir) {
            if !valid_ownership(None, None, &dir, overrides) {
                return Err(dubious_ownership(&dir));
            }
            return discovered(dir.clone(), &dir, true, cwd);
        }
        let hit_ceiling = || fatal("not a git repository (or any of the parent directories): .git");
        let Some(parent) = dir.parent() else {
            return Err(hit_ceiling());
        };
        if offset(parent) <= ceiling {
            return Err(hit_ceiling());
        }
        if let Some(current) = current_device {
            if device(parent)? != current {
                return Err(fatal(format!(
                    "not a git repository (or any parent up to mount point {})\n\
                     Stopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).",
                    dir.display()
                )));
            }
        }
        dir = parent.to_owned();
    }
}

/// What git does with a repository found at `dir` (its `.git`, or `dir` itself when `bare`).
fn discovered(git_dir: PathBuf, dir: &Path, bare: bool, cwd: &Path) -> Result<Setup, u8> {
    let format = read_format(&git_dir)?;
    if std::env::var_os("GIT_WORK_TREE").is_some() || format.worktree.is_some() {
        // `--work-tree` without `--git-dir`: the discovered directory, explicitly.
        return explicit_work_tree(git_dir, cwd, &format);
    }
    let workdir = (!bare && format.bare != Some(true)).then(|| dir.to_owned());
    Ok(Setup { git_dir, workdir })
}

/// The repository configuration setup reads (`check_repository_format_gently`).
struct Format {
    /// `core.bare`, unless the git directory shares a common directory (a linked work tree).
    bare: Option<bool>,
    /// `core.worktree`, under the same condition.
    worktree: Option<String>,
}

fn read_format(git_dir: &Path) -> Result<Format, u8> {
    let (common, has_common) = common_dir(git_dir);
    let config =
        gix::config::File::from_path_no_includes(common.join("config"), gix::config::Source::Local)
            .ok();
    let version = config
        .as_ref()
        .and_then(|c| c.integer("core.repositoryformatversion").ok().flatten())
        .unwrap_or(0);
    if version > 1 {
        return Err(fatal(format!(
            "Expected git repo version <= 1, found {version}"
        )));
    }
    if has_common {
        return Ok(Format {
            bare: None,
            worktree: None,
        });
    }
    Ok(Format {
        bare: config
            .as_ref()
            .and_then(|c| c.boolean("core.bare").ok().flatten()),
        worktree: config
            .as_ref()
            .and_then(|c| c.string("core.worktree"))
            .map(|v| v.to_string()),
    })
}

/// git's `get_common_dir`: `GIT_COMMON_DIR`, else the `commondir` file, else the git directory;
/// and whether it is another directory than the git directory.
fn common_dir(git_dir: &Path) -> (PathBuf, bool) {
    if let Some(env) = std::env::var_os("GIT_COMMON_DIR") {
        return (PathBuf::from(env), true);
    }
    match std::fs::read(git_dir.join("commondir")) {
        Ok(data) => {
            let trimmed = data.trim_ascii_end();
            // A path Windows cannot name is no directory there: the repository is then none.
            let named = platform::path_from_bytes(trimmed)
                .map_or_else(|e| PathBuf::from(e.lossy()), Path::to_owned);
            (git_dir.join(named), true)
        }
        Err(_) => (git_dir.to_owned(), false),
    }
}

/// git's `is_git_directory`: a valid `HEAD`, an accessible `objects` and `refs`.
fn is_git_directory(dir: &Path) -> bool {
    if !valid_headref(&dir.join("HEAD")) {
        return false;
    }
    let (common, _) = common_dir(dir);
    let objects = std::env::var_os("GIT_OBJECT_DIRECTORY")
        .map_or_else(|| common.join("objects"), PathBuf::from);
    platform::searchable(&objects) && platform::searchable(&common.join("refs"))
}

/// git's `validate_headref`: a symlink into `refs/`, `ref: refs/...`, or an object id.
fn valid_headref(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if meta.file_type().is_symlink() {
        return std::fs::read_link(path)
            .is_ok_and(|t| platform::git_path_bytes(&t).is_ok_and(|t| t.starts_with(b"refs/")));
    }
    let Ok(data) = std::fs::read(path) else {
        return false;
    };
    let data = &data[..data.len().min(255)];
    if let Some(rest) = data.strip_prefix(b"ref:") {
        if rest.trim_ascii_start().starts_with(b"refs/") {
            return true;
        }
    }
    let hex = data.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    hex == 40 || hex == 64
}

/// git's `read_gitfile` (dying on errors): `None` unless `path` is a regular file, else the git
/// directory it names, which must be a repository.
fn read_gitfile(path: &Path) -> Result<Option<PathBuf>, u8> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > 1 << 20 {
        return Err(fatal(format!(
            "too large to be a .git file: '{}'",
            path.display()
        )));
    }
    let data = std::fs::read(path).map_err(|e| {
        fatal(format!(
            "error opening '{}': {}",
            path.display(),
            strerror(&e)
        ))
    })?;
    let Some(rest) = data.strip_prefix(b"gitdir: ") else {
        return Err(fatal(format!("invalid gitfile format: {}", path.display())));
    };
    let mut end = rest.len();
    while end > 0 && matches!(rest[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    if end == 0 {
        return Err(fatal(format!("no path in gitfile: {}", path.display())));
    }
    let named = platform::path_from_bytes(&rest[..end])
        .map_err(|e| fatal(format!("invalid gitfile format: {}: {e}", path.display())))?;
    let dir = match path.parent() {
        Some(parent) if !named.is_absolute() => parent.join(named),
        _ => named.to_owned(),
    };
    if !is_git_directory(&dir) {
        return Err(fatal(format!("not a git repository: {}", dir.display())));
    }
    Ok(Some(platform::canonicalize(&dir).unwrap_or(dir)))
}

/// git's `ensure_valid_ownership`: everything owned by the current user, or the repository
/// (its work tree, else its git directory) listed in `safe.directory`.
fn valid_ownership(
    gitfile: Option<&Path>,
    worktree: Option<&Path>,
    git_dir: &Path,
    overrides: &[String],
) -> bool {
    let assume_other = env_bool("GIT_TEST_ASSUME_DIFFERENT_OWNER", false).unwrap_or(false);
    if !assume_other
        && gitfile.is_none_or(platform::owned_by_current_user)
        && worktree.is_none_or(platform::owned_by_current_user)
        && platform::owned_by_current_user(git_dir)
    {
        return true;
    }
    let Some(path) = real_path(worktree.unwrap_or(git_dir)) else {
        return false;
    };
    let mut safe = false;
    for value in safe_directories(overrides) {
        match value.as_deref() {
            None | Some("") => safe = false,
            Some("*") => safe = true,
            Some(value) => {
                let allowed = match (value.strip_prefix("~/"), std::env::var_os("HOME")) {
                    (Some(rest), Some(home)) => Path::new(&home).join(rest),
                    _ => PathBuf::from(value),
                };
                if !allowed.is_absolute() && value != "." {
                    eprintln!("warning: safe.directory '{value}' not absolute");
                    continue;
                }
                let Some(normalized) = real_path(&allowed) else {
                    continue;
                };
                let (Ok(normalized), Ok(path)) = (
                    platform::git_path_bytes(&normalized),
                    platform::git_path_bytes(&path),
                ) else {
                    continue;
                };
                if let Some(stem) = normalized.strip_suffix(b"*").filter(|s| s.ends_with(b"/")) {
                    safe |= path.starts_with(stem);
                } else {
                    safe |= path == normalized;
                }
            }
        }
    }
    safe
}

/// The `safe.directory` values of git's protected configuration, in order: system, global,
/// `GIT_CONFIG_COUNT`, then `-c` / `GIT_CONFIG_PARAMETERS` (`None` for a value-less entry).
fn safe_directories(overrides: &[String]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let files = [
        gix::config::File::from_globals().ok(),
        gix::config::File::from_environment_overrides().ok(),
    ];
    for file in files.into_iter().flatten() {
        if let Some(values) = file.strings("safe.directory") {
            out.extend(values.into_iter().map(|v| Some(v.to_string())));
        }
    }
    for entry in overrides {
        let (key, value) = match entry.split_once('=') {
            Some((k, v)) => (k, Some(v.to_owned())),
            None => (entry.as_str(), None),
        };
        if key.trim().eq_ignore_ascii_case("safe.directory") {
            out.push(value);
        }
    }
    out
}

/// git's `die` for a repository owned by someone else.
fn dubious_ownership(dir: &Path) -> u8 {
    let shown = dir.display().to_string();
    eprintln!(
        "fatal: detected dubious ownership in repository at '{shown}'\n\
         To add an exception for this directory, call:\n\
         \n\
         \tgit config --global --add safe.directory {}",
        sq_quote_pretty(&shown)
    );
    FATAL
}

/// git's `sq_quote_buf_pretty`: as is when made of safe characters, else single-quoted.
fn sq_quote_pretty(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+,-./:=@_^".contains(&b))
    {
        return s.to_owned();
    }
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            '!' => out.push_str("'\\!'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// git's `real_path` without dying: symlinks resolved; only the last component may be missing.
fn real_path(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = platform::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    platform::canonicalize(parent).ok().map(|p| p.join(name))
}

/// The length git's discovery loop measures a directory by (`/` is 0).
fn offset(dir: &Path) -> isize {
    let len = dir.as_os_str().len();
    isize::try_from(if len == 1 { 0 } else { len }).unwrap_or(isize::MAX)
}

/// git's `longest_ancestor_length` over `GIT_CEILING_DIRECTORIES` (entries after an empty one
/// are not resolved), or -1: directories not longer than this are not searched.
fn ceiling_offset(cwd: &Path) -> isize {
    let Some(value) = std::env::var_os("GIT_CEILING_DIRECTORIES") else {
        return -1;
    };
    let Ok(cwd) = platform::git_path_bytes(cwd) else {
        return -1;
    };
    let value = value.as_encoded_bytes();
    let mut empty_seen = false;
    let mut best = -1;
    for entry in value.split(|&b| b == platform::PATH_LIST_SEPARATOR) {
        if entry.is_empty() {
            empty_seen = true;
            continue;
        }
        let Ok(entry) = platform::path_from_bytes(entry) else {
            continue;
        };
        if !entry.is_absolute() {
            continue;
        }
        let ceiling = if empty_seen {
            normalize(entry)
        } else {
            match real_path(entry) {
                Some(p) => p,
                None => continue,
            }
        };
        let Ok(ceiling) = platform::git_path_bytes(&ceiling) else {
            continue;
        };
        let mut ceiling = ceiling.to_vec();
        while ceiling.last() == Some(&b'/') {
            ceiling.pop();
        }
        let len = ceiling.len();
        if cwd.len() > len && cwd.starts_with(&ceiling) && cwd[len] == b'/' {
            best = best.max(isize::try_from(len).unwrap_or(isize::MAX));
        }
    }
    best
}

/// `.` and `..` removed lexically (git's `normalize_path_copy`).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// git's `git_env_bool`.
fn env_bool(name: &str, default: bool) -> Result<bool, u8> {
    let Some(value) = std::env::var_os(name) else {
        return Ok(default);
    };
    let value = value.to_string_lossy().to_ascii_lowercase();
    match value.as_str() {
        "true" | "yes" | "on" => Ok(true),
        "false" | "no" | "off" | "" => Ok(false),
        other => other
            .parse::<i64>()
            .map(|n| n != 0)
            .map_err(|_| fatal(format!("bad boolean config value '{value}' for '{name}'"))),
    }
}

/// An I/O error as git prints `strerror(errno)`: without Rust's `(os error N)`.
pub(crate) fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
