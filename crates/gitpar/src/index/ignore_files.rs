//! The global ignore files the untracked cache records: `info/exclude` in the git directory and
//! `core.excludesFile` (by default `$XDG_CONFIG_HOME/git/ignore`), never a work tree's file.

use std::path::PathBuf;

use crate::index::untracked_cache::{global_oid_stat, OidStat};

/// `info/exclude` and `core.excludesFile` as git's `setup_standard_excludes` records them in
/// the untracked cache: their stat data and ids (none for a file that cannot be read).
pub(crate) fn global(repo: &gix::Repository) -> (OidStat, OidStat) {
    let hash = repo.object_hash();
    let read = |path: Option<PathBuf>| -> OidStat {
        let read = path.and_then(|path| {
            let bytes = std::fs::read(&path).ok()?;
            let st = rustix::fs::stat(&path).ok()?;
            Some((bytes, crate::fs::index_stat(&st)))
        });
        global_oid_stat(read, hash)
    };
    let info = read(Some(repo.common_dir().join("info").join("exclude")));
    (info, read(excludes_file(repo)))
}

/// git's `excludes_file`: `core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`, else
/// `$HOME/.config/git/ignore`.
fn excludes_file(repo: &gix::Repository) -> Option<PathBuf> {
    let config = repo.config_snapshot();
    if let Ok(Some(path)) = config.trusted_path("core.excludesFile") {
        return Some(path);
    }
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(xdg) => Some(PathBuf::from(xdg).join("git").join("ignore")),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/git/ignore")),
    }
}

/// The real path of the work tree `path` (git's `real_pathdup`), which the untracked cache's
/// identity names.
pub(crate) fn real_path(path: &std::path::Path) -> Vec<u8> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    real.into_os_string().into_encoded_bytes()
}
