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
    use std::io::Write;
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
