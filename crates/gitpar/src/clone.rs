//! `clone` of a local repository, set up the way `git clone --local` does it, so that the
//! checkout that follows is the only part that differs from git.
//!
//! Objects are hard-linked (copied across filesystems), the source's branches become
//! `refs/remotes/origin/*` in `packed-refs`, tags are copied, `origin/HEAD` and the local branch
//! follow the source's `HEAD`, and the config gets `remote.origin.*` and `branch.<name>.*`.

use std::io;
use std::path::{Path, PathBuf};

use bstr::{BString, ByteSlice};
use gix::hash::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

/// What to clone and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The source as the user typed it: a path or a `file://` URL.
    pub source: String,
    /// The directory to create (or fill, if it exists and is empty).
    pub destination: PathBuf,
    /// `-b`: the branch (or tag) to check out instead of the source's `HEAD`.
    pub branch: Option<String>,
    /// `-c key=value` overrides, applied when opening the new repository.
    pub config_overrides: Vec<String>,
}

/// What the repository setup decided; the caller checks out `commit` (when there is one) and
/// prints git's messages.
#[derive(Debug)]
pub struct Prepared {
    /// The new repository, opened with the caller's overrides.
    pub repo: gix::Repository,
    /// The commit to check out, or `None` for an empty source (git warns about that).
    pub commit: Option<ObjectId>,
    /// The local branch `HEAD` points to, or `None` when `HEAD` is detached.
    pub branch: Option<String>,
}

/// Why a clone could not be set up. Messages are git's where git has one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A URL scheme git-par does not fetch from.
    #[error("git-par clone supports only local repositories for now: '{0}' (clone it with git)")]
    UnsupportedUrl(String),
    /// The source is not a repository.
    #[error("repository '{0}' does not exist")]
    NoSource(String),
    /// The destination exists and holds something.
    #[error("destination path '{0}' already exists and is not an empty directory.")]
    DestinationExists(String),
    /// `-b` named neither a branch nor a tag of the source.
    #[error("Remote branch {0} not found in upstream origin")]
    NoSuchBranch(String),
    /// Creating or linking a file failed.
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
    /// gix could not read the source or write the new repository.
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

/// Turn the user's source argument into a local path and the URL git records for it:
/// a `file://` URL is recorded as typed, a path as an absolute path (not normalised, as git does).
pub fn resolve_source(source: &str) -> Result<(PathBuf, String), Error> {
    if let Some(rest) = source.strip_prefix("file://") {
        return Ok((PathBuf::from(rest), source.to_owned()));
    }
    let looks_remote = source.contains("://")
        || source
            .split_once(':')
            .is_some_and(|(host, _)| !host.contains('/') && !Path::new(source).exists());
    if looks_remote {
        return Err(Error::UnsupportedUrl(source.to_owned()));
    }
    let path = PathBuf::from(source);
    let absolute = if path.is_absolute() {
        path.clone()
    } else {
        std::env::current_dir()
            .map_err(io_err(
                "unable to read the current directory",
                Path::new("."),
            ))?
            .join(&path)
    };
    Ok((path, absolute.to_string_lossy().into_owned()))
}

/// Returns true if and only if `dir` does not exist or is an empty directory: the only
/// destinations git accepts.
pub fn is_empty_or_missing(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(err) => err.kind() == io::ErrorKind::NotFound,
    }
}

/// Set up the new repository: everything `git clone --local --no-checkout` does.
///
/// On error the caller removes the destination (git does the same); nothing outside it is
/// touched.
pub fn prepare(req: &Request) -> Result<Prepared, Error> {
    let (source_path, url) = resolve_source(&req.source)?;
    let source = gix::open(&source_path).map_err(|_| Error::NoSource(req.source.clone()))?;
    if !is_empty_or_missing(&req.destination) {
        return Err(Error::DestinationExists(
            req.destination.display().to_string(),
        ));
    }

    let open_opts =
        gix::open::Options::default().config_overrides(req.config_overrides.iter().cloned());
    let create_opts = gix::create::Options {
        destination_must_be_empty: Some(true),
        ..Default::default()
    };
    let repo = gix::ThreadSafeRepository::init_opts(
        &req.destination,
        gix::create::Kind::WithWorktree,
        create_opts,
        open_opts.clone(),
    )
    .map_err(gix_err("unable to create the repository"))?;
    let git_dir = repo.git_dir().to_owned();

    link_objects(
        &source.common_dir().join("objects"),
        &git_dir.join("objects"),
    )?;
    copy_shallow(source.common_dir(), &git_dir)?;

    // The source's refs, and what its HEAD points to.
    let mut branches: Vec<(BString, ObjectId)> = Vec::new();
    let mut tags: Vec<(FullName, ObjectId)> = Vec::new();
    let platform = source
        .references()
        .map_err(gix_err("unable to read the source's refs"))?;
    for reference in platform
        .all()
        .map_err(gix_err("unable to read the source's refs"))?
    {
        let Ok(reference) = reference else { continue };
        let Some(id) = reference.target().try_id().map(ToOwned::to_owned) else {
            continue;
        };
        let name = reference.name();
        if let Some(short) = name.as_bstr().strip_prefix(b"refs/heads/") {
            branches.push((short.into(), id));
        } else if name.as_bstr().starts_with(b"refs/tags/") {
            tags.push((name.to_owned(), id));
        }
    }
    let source_head = source
        .head()
        .map_err(gix_err("unable to read the source's HEAD"))?;
    let head_branch: Option<BString> = source_head
        .referent_name()
        .and_then(|n| n.as_bstr().strip_prefix(b"refs/heads/").map(BString::from));
    let head_id: Option<ObjectId> = source_head.id().map(gix::Id::detach);
    branches.sort();
    // The branch `origin/HEAD` follows: the source's HEAD branch, or — for a detached HEAD —
    // git's guess: the default branch name if it points at HEAD's commit, else the first branch
    // that does.
    let remote_head: Option<BString> = match (&head_branch, head_id) {
        (Some(b), _) => branches.iter().any(|(n, _)| n == b).then(|| b.clone()),
        (None, Some(id)) => {
            let default = source
                .config_snapshot()
                .string("init.defaultBranch")
                .unwrap_or_else(|| "master".into());
            branches
                .iter()
                .find(|(n, i)| *i == id && *n == default)
                .or_else(|| branches.iter().find(|(_, i)| *i == id))
                .map(|(n, _)| n.clone())
        }
        (None, None) => None,
    };

    // Decide what HEAD of the clone becomes.
    enum Head {
        Branch(BString, Option<ObjectId>),
        Detached(ObjectId),
    }
    let head = match &req.branch {
        Some(wanted) => {
            if let Some((_, id)) = branches.iter().find(|(b, _)| b == wanted.as_bytes()) {
                Head::Branch(wanted.as_str().into(), Some(*id))
            } else if let Some((_, id)) = tags
                .iter()
                .find(|(n, _)| n.as_bstr().strip_prefix(b"refs/tags/") == Some(wanted.as_bytes()))
            {
                let commit = source
                    .find_object(*id)
                    .map_err(gix_err("unable to read the tag"))?
                    .peel_to_commit()
                    .map_err(gix_err("unable to peel the tag to a commit"))?
                    .id;
                Head::Detached(commit)
            } else {
                return Err(Error::NoSuchBranch(wanted.clone()));
            }
        }
        None => match (&remote_head, &head_branch, head_id) {
            (Some(b), _, _) => Head::Branch(
                b.clone(),
                branches.iter().find(|(n, _)| n == b).map(|(_, id)| *id),
            ),
            (None, Some(b), _) => Head::Branch(b.clone(), None),
            (None, None, Some(id)) => Head::Detached(id),
            (None, None, None) => Head::Branch("main".into(), None),
        },
    };

    // Config: remote.origin.*, branch.<name>.*
    let config_path = git_dir.join("config");
    let probed =
        gix::config::File::from_path_no_includes(config_path.clone(), gix::config::Source::Local)
            .map_err(gix_err("unable to read the new repository's config"))?;
    // Rebuild `core` in git's order with git's keys: gix's init also writes `ignorecase` and
    // `precomposeunicode` as false, which git writes only where they are true.
    let mut config = gix::config::File::new(gix::config::file::Metadata::from(
        gix::config::Source::Local,
    ));
    let set = |config: &mut gix::config::File, key: &str, value: &str| {
        config
            .set_raw_value(key, value.as_bytes().as_bstr())
            .map(|_| ())
            .map_err(gix_err("unable to set config"))
    };
    let probed_bool = |key: &str| probed.boolean(key).ok().flatten();
    set(&mut config, "core.repositoryformatversion", "0")?;
    set(
        &mut config,
        "core.filemode",
        if probed_bool("core.filemode").unwrap_or(true) {
            "true"
        } else {
            "false"
        },
    )?;
    set(&mut config, "core.bare", "false")?;
    set(&mut config, "core.logallrefupdates", "true")?;
    if probed_bool("core.symlinks") == Some(false) {
        set(&mut config, "core.symlinks", "false")?;
    }
    if probed_bool("core.ignorecase") == Some(true) {
        set(&mut config, "core.ignorecase", "true")?;
    }
    set(&mut config, "remote.origin.url", &url)?;
    set(
        &mut config,
        "remote.origin.fetch",
        "+refs/heads/*:refs/remotes/origin/*",
    )?;
    if let Head::Branch(b, _) = &head {
        let b = b.to_str_lossy();
        set(&mut config, &format!("branch.{b}.remote"), "origin")?;
        set(
            &mut config,
            &format!("branch.{b}.merge"),
            &format!("refs/heads/{b}"),
        )?;
    }
    let mut out = Vec::new();
    config
        .write_to(&mut out)
        .map_err(io_err("unable to write config", &config_path))?;
    // Under `config.lock`, as git writes config.
    crate::branch::FileLock::acquire(&config_path)
        .and_then(|lock| lock.commit(&out))
        .map_err(io_err("could not lock config file", &config_path))?;

    let repo = gix::open_opts(&req.destination, open_opts)
        .map_err(gix_err("unable to open the new repository"))?;
    let message: BString = format!("clone: from {url}").into();
    let committer = repo
        .committer()
        .transpose()
        .map_err(gix_err("unable to determine the committer"))?;

    // Remote-tracking branches and tags go to packed-refs, as git's clone writes them.
    let packed: Vec<RefEdit> = branches
        .iter()
        .map(|(b, id)| (format!("refs/remotes/origin/{b}"), *id))
        .chain(tags.iter().map(|(n, id)| (n.as_bstr().to_string(), *id)))
        .map(|(name, id)| -> Result<RefEdit, Error> {
            Ok(RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: BString::default(),
                    },
                    expected: PreviousValue::Any,
                    new: Target::Object(id),
                },
                name: name.try_into().map_err(gix_err("invalid ref name"))?,
                deref: false,
            })
        })
        .collect::<Result<_, _>>()?;
    if !packed.is_empty() {
        repo.refs
            .transaction()
            .packed_refs(gix::refs::file::transaction::PackedRefs::DeletionsAndNonSymbolicUpdatesRemoveLooseSourceReference(
                Box::new(&repo.objects),
            ))
            .prepare(packed, gix::lock::acquire::Fail::Immediately, gix::lock::acquire::Fail::Immediately)
            .map_err(gix_err("unable to write remote-tracking refs"))?
            .commit(committer)
            .map_err(gix_err("unable to write remote-tracking refs"))?;
    }

    let update =
        |name: &str, new: Target, deref: bool, message: &BString| -> Result<RefEdit, Error> {
            Ok(RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: message.clone(),
                    },
                    expected: PreviousValue::Any,
                    new,
                },
                name: name.try_into().map_err(gix_err("invalid ref name"))?,
                deref,
            })
        };
    let mut edits = Vec::new();
    if let Some(b) = &remote_head {
        let target: FullName = format!("refs/remotes/origin/{b}")
            .try_into()
            .map_err(gix_err("invalid branch name"))?;
        edits.push(update(
            "refs/remotes/origin/HEAD",
            Target::Symbolic(target),
            false,
            &message,
        )?);
    }
    let (commit, branch) = match &head {
        Head::Branch(b, id) => {
            let local: FullName = format!("refs/heads/{b}")
                .try_into()
                .map_err(gix_err("invalid branch name"))?;
            edits.push(update("HEAD", Target::Symbolic(local), false, &message)?);
            (*id, Some(b.to_str_lossy().into_owned()))
        }
        Head::Detached(id) => {
            edits.push(update("HEAD", Target::Object(*id), false, &message)?);
            (Some(*id), None)
        }
    };
    repo.edit_references_as(edits, committer)
        .map_err(gix_err("unable to write HEAD"))?;
    if let (Head::Branch(..), Some(id)) = (&head, commit) {
        // Through HEAD, so that both HEAD's and the branch's reflog get git's "clone: from" line.
        repo.edit_references_as(
            Some(update("HEAD", Target::Object(id), true, &message)?),
            committer,
        )
        .map_err(gix_err("unable to write the local branch"))?;
    }
    Ok(Prepared {
        repo,
        commit,
        branch,
    })
}

/// Hard-link every file of the source's object directory into the new one, copying where a
/// link is impossible (another filesystem, or a filesystem without hard links), as
/// `git clone --local` does. `info/alternates` is copied with relative paths made absolute,
/// so borrowed objects stay reachable.
fn link_objects(src: &Path, dst: &Path) -> Result<(), Error> {
    let entries = std::fs::read_dir(src).map_err(io_err("unable to read", src))?;
    std::fs::create_dir_all(dst).map_err(io_err("unable to create directory", dst))?;
    for entry in entries {
        let entry = entry.map_err(io_err("unable to read", src))?;
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let kind = entry.file_type().map_err(io_err("unable to stat", &from))?;
        if kind.is_dir() {
            link_objects(&from, &to)?;
        } else if kind.is_file() {
            if from.ends_with("info/alternates") {
                copy_alternates(src, &from, &to)?;
                continue;
            }
            if to.exists() {
                std::fs::remove_file(&to).map_err(io_err("unable to replace", &to))?;
            }
            if std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to).map_err(io_err("failed to copy file to", &to))?;
            }
        }
    }
    Ok(())
}

fn copy_alternates(objects_info: &Path, from: &Path, to: &Path) -> Result<(), Error> {
    let text = std::fs::read(from).map_err(io_err("unable to read", from))?;
    let objects_dir = objects_info.parent().unwrap_or(objects_info);
    let mut out = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let p = PathBuf::from(line.to_os_str_lossy().into_owned());
        let abs = if p.is_absolute() {
            p
        } else {
            objects_dir.join(p)
        };
        out.extend_from_slice(abs.to_string_lossy().as_bytes());
        out.push(b'\n');
    }
    std::fs::write(to, out).map_err(io_err("unable to write", to))
}

/// A shallow source's `shallow` file (the commits whose parents it lacks) goes into the clone, under
/// `shallow.lock`: without it the clone's history would end in missing parents, a corrupt
/// repository. git's clone of a shallow source (which falls back from `--local` to its transport)
/// leaves the same list: every shallow commit the copied refs reach, and we copy every ref.
fn copy_shallow(source_common: &Path, git_dir: &Path) -> Result<(), Error> {
    let from = source_common.join("shallow");
    let text = match std::fs::read(&from) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(io_err("unable to read", &from)(err)),
    };
    if text.trim().is_empty() {
        return Ok(());
    }
    let to = git_dir.join("shallow");
    crate::branch::FileLock::acquire(&to)
        .and_then(|lock| lock.commit(&text))
        .map_err(io_err("unable to write", &to))
}
