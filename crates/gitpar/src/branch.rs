//! Branch helpers shared by the commands that create branches: git's "DWIM" guess of a
//! remote-tracking branch, and the upstream configuration `branch.<name>.{remote,merge}`.

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

/// Write `branch.<branch>.remote = <remote>` and `branch.<branch>.merge = <merge>` into the
/// repository's local config file, as `git branch --track` does.
pub fn set_upstream(
    repo: &gix::Repository,
    branch: &str,
    remote: &str,
    merge: &str,
) -> Result<(), String> {
    let path = repo.common_dir().join("config");
    let mut config =
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .map_err(|e| e.to_string())?;
    config
        .set_raw_value(
            &format!("branch.{branch}.remote"),
            remote.as_bytes().as_bstr(),
        )
        .map_err(|e| e.to_string())?;
    config
        .set_raw_value(
            &format!("branch.{branch}.merge"),
            merge.as_bytes().as_bstr(),
        )
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    config.write_to(&mut out).map_err(|e| e.to_string())?;
    std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))
}
