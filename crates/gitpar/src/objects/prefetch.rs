//! Partial clones: fetch the blobs a checkout needs and lacks, in one batch, before writing.
//!
//! A clone made with `--filter=blob:none` has the trees but not the blobs. git fetches missing
//! objects from its promisor remotes (`remote.<name>.promisor`, `extensions.partialClone`) when
//! it meets them; its checkout collects them first and fetches them with one `git fetch` per
//! remote (`promisor_remote_get_direct` in git's `promisor-remote.c`). git-par does the same, so
//! a checkout of N missing blobs costs one round trip rather than N — and the writers then find
//! every blob in the object database. The transport, credentials and pack handling are git's:
//! the fetch is git's own subprocess, with the arguments git gives it.

use std::io::Write;
use std::process::Stdio;

use gix::hash::ObjectId;

use crate::plan::{Entry, Kind};

/// Why the blobs a checkout needs could not all be had; nothing was written yet.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user interrupted the fetch.
    #[error("interrupted")]
    Interrupted,
    /// No promisor remote gave this blob. git dies with the same words.
    #[error("could not fetch {0} from promisor remote")]
    PromisorFetch(ObjectId),
}

/// The promisor remotes of `repo` in git's order: `extensions.partialClone` first, then every
/// remote with `remote.<name>.promisor` set, in configuration order.
fn promisor_remotes(repo: &gix::Repository) -> Vec<String> {
    let config = repo.config_snapshot();
    let mut out: Vec<String> = Vec::new();
    if let Some(name) = config.string("extensions.partialClone") {
        out.push(name.to_string());
    }
    for name in repo.remote_names() {
        let name = name.to_string();
        let key = format!("remote.{name}.promisor");
        if config.boolean(key.as_str()).unwrap_or(false) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Fetch the blobs of `entries` that the object database lacks, one `git fetch` per promisor
/// remote for all of them, as git's checkout does. Does nothing (and looks nothing up) in a
/// repository without promisor remotes. A blob still missing after every remote was asked stops
/// the checkout before anything is written: [`Error::PromisorFetch`], git's `could not fetch
/// <id> from promisor remote`.
pub fn missing_blobs<'a>(
    repo: &gix::Repository,
    entries: impl Iterator<Item = &'a Entry>,
    ctx: &crate::sys::context::Context<'_>,
) -> Result<usize, Error> {
    let remotes = promisor_remotes(repo);
    if remotes.is_empty() {
        return Ok(0);
    }
    let mut missing: Vec<ObjectId> = entries
        .filter(|e| matches!(e.kind, Kind::File | Kind::Executable | Kind::Symlink))
        .filter(|e| !repo.has_object(e.id))
        .map(|e| e.id)
        .collect();
    missing.sort();
    missing.dedup();
    let wanted = missing.len();
    if missing.is_empty() || no_lazy_fetch() {
        return Ok(0);
    }
    for remote in remotes {
        if ctx.interrupted() {
            return Err(Error::Interrupted);
        }
        // A failed fetch is not fatal by itself: the next remote may have the objects, and
        // whatever is still missing is reported by the writers.
        let _ = fetch(repo, &remote, &missing);
        missing.retain(|id| !repo.has_object(*id));
        if missing.is_empty() {
            break;
        }
    }
    match missing.first() {
        Some(id) => Err(Error::PromisorFetch(*id)),
        None => Ok(wanted),
    }
}

/// git's `GIT_NO_LAZY_FETCH`: the user (or git, for a server process) asked for no fetching.
fn no_lazy_fetch() -> bool {
    std::env::var("GIT_NO_LAZY_FETCH").is_ok_and(|v| {
        let v = v.to_ascii_lowercase();
        !matches!(v.as_str(), "" | "0" | "false" | "no" | "off")
    })
}

/// One batched fetch of `ids` from `remote`: the command line of git's `fetch_objects`.
fn fetch(repo: &gix::Repository, remote: &str, ids: &[ObjectId]) -> std::io::Result<bool> {
    let quiet = repo
        .config_snapshot()
        .boolean("promisor.quiet")
        .unwrap_or(false);
    let mut cmd = crate::sys::git::git_command();
    cmd.arg("--git-dir")
        .arg(repo.git_dir())
        .args(["-c", "fetch.negotiationAlgorithm=noop", "fetch", remote])
        .args([
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
        ]);
    if quiet {
        cmd.arg("--quiet");
    }
    // The repository is named by --git-dir; the caller's work tree and index mean nothing here.
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
    ] {
        cmd.env_remove(var);
    }
    let mut child = cmd.stdin(Stdio::piped()).spawn()?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        let mut list = String::with_capacity(ids.len() * 41);
        for id in ids {
            list.push_str(&id.to_string());
            list.push('\n');
        }
        stdin.write_all(list.as_bytes())?;
    }
    Ok(child.wait()?.success())
}
