//! The global ignore files the untracked cache records: `info/exclude` in the git directory and
//! `core.excludesFile` (by default `$XDG_CONFIG_HOME/git/ignore`), never a work tree's file.

use std::path::PathBuf;

use gix::index::entry::Stat;
use gix::ObjectId;

/// An ignore file's stat data and object id (`None`: git's null id).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OidStat {
    /// The file's stat data when its id was taken.
    pub stat: Stat,
    /// Its id (`None`: no file, git's null id).
    pub id: Option<ObjectId>,
}

/// `info/exclude` and `core.excludesFile` as git's `setup_standard_excludes` records them in
/// the untracked cache: their stat data and ids (none for a file that cannot be read).
pub(crate) fn global(repo: &gix::Repository) -> (OidStat, OidStat) {
    let hash = repo.object_hash();
    let read = |path: Option<PathBuf>| -> OidStat {
        let read = path.and_then(|path| {
            let bytes = std::fs::read(&path).ok()?;
            let st = crate::fs::stat_path(&path).ok()?;
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
    let real = crate::sys::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    real.into_os_string().into_encoded_bytes()
}

/// The stat data and id git gives a global ignore file (`info/exclude`, `core.excludesFile`)
/// read from `bytes` with `stat` (git's `add_patterns` without an index): the empty blob's for
/// an empty file, else the id of the content with a newline added; none when there is no
/// readable file.
pub(crate) fn global_oid_stat(read: Option<(Vec<u8>, Stat)>, hash: gix::hash::Kind) -> OidStat {
    match read {
        None => OidStat::default(),
        Some((mut bytes, stat)) => {
            let id = if bytes.is_empty() {
                gix::ObjectId::empty_blob(hash)
            } else {
                bytes.push(b'\n');
                gix::objs::compute_hash(hash, gix::object::Kind::Blob, &bytes)
                    .unwrap_or_else(|_| hash.null())
            };
            OidStat { stat, id: Some(id) }
        }
    }
}
