//! Creating (or with `-B`/`-C` resetting) the branch a `switch -c`/`checkout -b` switches to,
//! and its upstream, as git's `create_branch` (`branch.c`): the ref with its reflog ("branch:
//! Created from START" / "branch: Reset to START") in one ref transaction, then
//! `dwim_branch_start`, `setup_tracking` and `install_branch_config_multiple_remotes`.
//! Resolving which branch to create (`-c/-C`, `--track`, `--guess`) is the caller's; this is
//! what happens once the work tree was updated.

use bstr::ByteSlice;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;

use crate::repo::branch::{append_reflog, force_reflog, set_tracking, tracked_by, ReflogError};
use crate::repo::hooks::Env;
use crate::repo::notice::Notice;
use crate::repo::reftx::{self, Update, Value};

/// git's `enum branch_track` (without `OVERRIDE`, which only `git branch -u` uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// `--no-track`, or `branch.autoSetupMerge=false`.
    Never,
    /// `branch.autoSetupMerge=true` (the default): track a remote-tracking start point.
    Remote,
    /// `branch.autoSetupMerge=always`: track the start point, local branches too.
    Always,
    /// `--track` / `--track=direct`.
    Explicit,
    /// `--track=inherit` / `branch.autoSetupMerge=inherit`: copy the start branch's upstream.
    Inherit,
    /// `branch.autoSetupMerge=simple`: track a remote branch of the same name only.
    Simple,
}

impl Track {
    /// `branch.autoSetupMerge`, as git's `git_default_branch_config` reads it: the mode of a
    /// new branch when no `--track`/`--no-track` was given.
    pub fn configured(repo: &gix::Repository) -> Track {
        match config_string(repo, "branch.autoSetupMerge").as_deref() {
            Some("always") => Track::Always,
            Some("inherit") => Track::Inherit,
            Some("simple") => Track::Simple,
            _ => match repo.config_snapshot().boolean("branch.autoSetupMerge") {
                Some(false) => Track::Never,
                _ => Track::Remote,
            },
        }
    }
}

/// A branch a switch creates (or, with `-B`/`-C`, resets) after updating the work tree.
#[derive(Debug, Clone)]
pub struct NewBranch {
    /// Its short name.
    pub name: String,
    /// The start point as given (`HEAD` when none was), for the reflog and tracking.
    pub start: String,
    /// `-B`/`-C`: reset the branch if it exists.
    pub force: bool,
    /// It exists already (so `-B`/`-C` resets it).
    pub exists: bool,
    /// How its upstream is chosen.
    pub track: Track,
    /// Whether the work tree is updated at all: git skips it for `switch -c NEW` and
    /// `checkout -b NEW` without a start point (`only_merge_on_switching_branches`).
    pub update: bool,
    /// `checkout -l`: git's `REF_FORCE_CREATE_REFLOG`, a reflog for the branch even when
    /// `core.logAllRefUpdates` is off.
    pub reflog: bool,
}

/// Why the branch or its upstream could not be created; the work tree was already updated, as
/// in git, which dies at this point too.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--track` from a start point that is no branch.
    #[error("cannot set up tracking information; starting point '{0}' is not a branch")]
    NotABranch(String),
    /// The start point names several refs.
    #[error("ambiguous object name: '{0}'")]
    Ambiguous(String),
    /// The name makes no valid ref.
    #[error("'{0}' is not a valid branch name")]
    InvalidName(String),
    /// No committer identity for the reflog.
    #[error("unable to determine the committer: {0}")]
    Committer(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The ref could not be written.
    #[error("cannot lock ref '{name}': {source}")]
    Ref {
        /// The full ref name.
        name: String,
        /// gix's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A reflog line could not be written.
    #[error(transparent)]
    Reflog(#[from] ReflogError),
    /// The start point is tracked through several remotes' fetch refspecs.
    #[error("not tracking: ambiguous information for ref '{orig_ref}'")]
    AmbiguousTracking {
        /// The remote-tracking ref.
        orig_ref: String,
        /// The remotes whose refspecs map to it.
        remotes: Vec<String>,
    },
    /// `--track=inherit` of several upstreams while `branch.autoSetupRebase` asks to rebase.
    #[error("cannot inherit upstream tracking configuration of multiple refs when rebasing is requested")]
    RebaseMultiple,
    /// The `reference-transaction` hook refused.
    #[error("ref updates aborted by hook")]
    AbortedByHook,
    /// The branch exists, but its upstream configuration could not be written (git exits 1
    /// here, before `HEAD` moves).
    #[error("unable to write upstream branch configuration")]
    UpstreamNotWritten {
        /// The branch.
        branch: String,
        /// The upstream's remote (`None`: a local start point).
        remote: Option<String>,
        /// The upstream refs.
        srcs: Vec<String>,
        /// What failed.
        #[source]
        source: crate::repo::branch::ConfigError,
    },
}

fn config_string(repo: &gix::Repository, key: &str) -> Option<String> {
    repo.config_snapshot()
        .string(key)
        .map(|v| v.to_str_lossy().into_owned())
}

/// git's `repo_dwim_ref`: how many of the ref rules `name` matches, and the first match with its
/// symbolic refs resolved (`HEAD` → `refs/heads/main`, `origin` → `refs/remotes/origin/main`).
///
/// `<branch>@{upstream}` (`@{u}`, any case; no branch: the current one) is the upstream's ref,
/// as git's `interpret_branch_name` substitutes it first (t1507.13: a branch made from
/// `my-side@{u}` tracks what `my-side` tracks).
pub fn dwim_ref(repo: &gix::Repository, name: &str) -> (usize, Option<String>) {
    if let Some(at) = name.rfind("@{") {
        if let Some(mark) = name[at + 2..].strip_suffix('}') {
            if mark.eq_ignore_ascii_case("u") || mark.eq_ignore_ascii_case("upstream") {
                let branch = match &name[..at] {
                    "" | "HEAD" => repo
                        .head_name()
                        .ok()
                        .flatten()
                        .map(|h| h.shorten().to_string()),
                    branch => Some(branch.to_owned()),
                };
                let full = branch.and_then(|b| upstream_ref(repo, &b));
                let found = full.as_deref().and_then(|f| resolve_symbolic(repo, f));
                return (usize::from(found.is_some()), found);
            }
        }
    }
    let literal = name.starts_with("refs/")
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'));
    let mut candidates = Vec::new();
    if literal {
        candidates.push(name.to_owned());
    }
    for rule in [
        "refs/{}",
        "refs/tags/{}",
        "refs/heads/{}",
        "refs/remotes/{}",
        "refs/remotes/{}/HEAD",
    ] {
        candidates.push(rule.replace("{}", name));
    }
    let mut found = 0;
    let mut first = None;
    for candidate in candidates {
        if let Some(resolved) = resolve_symbolic(repo, &candidate) {
            found += 1;
            first.get_or_insert(resolved);
        }
    }
    (found, first)
}

/// git's `branch_get_upstream` for the local branch `branch`: `branch.<name>.remote` and the
/// first `branch.<name>.merge`, mapped through the remote's fetch refspecs; for the remote `.`,
/// the local ref the merge value names. The full ref name, whether it exists or not.
pub fn upstream_ref(repo: &gix::Repository, branch: &str) -> Option<String> {
    let remote = config_string(repo, &format!("branch.{branch}.remote"))?;
    let merge = repo
        .config_snapshot()
        .strings(format!("branch.{branch}.merge").as_str())?
        .first()?
        .to_str_lossy()
        .into_owned();
    if remote == "." {
        return Some(match dwim_ref(repo, &merge) {
            (1, Some(real)) => real,
            _ => merge,
        });
    }
    let fetch = crate::repo::branch::remotes(repo)
        .into_iter()
        .find(|r| r.name == remote)?
        .fetch;
    crate::repo::branch::query_refspecs(&fetch, &merge, false)
}

/// The ref `full` finally names after following symbolic refs, if it exists.
pub fn resolve_symbolic(repo: &gix::Repository, full: &str) -> Option<String> {
    let mut name = full.to_owned();
    for _ in 0..5 {
        let as_ref: &gix::refs::FullNameRef = name.as_str().try_into().ok()?;
        let reference = repo.try_find_reference(as_ref).ok().flatten()?;
        if reference.name().as_bstr() != name.as_bytes() {
            return None;
        }
        match reference.target() {
            gix::refs::TargetRef::Symbolic(next) => {
                name = next.as_bstr().to_str_lossy().into_owned()
            }
            gix::refs::TargetRef::Object(_) => return Some(name),
        }
    }
    None
}

/// Create (or reset) the branch at `commit` and set up its upstream, as git's `create_branch`
/// (reflog "branch: Created from START" / "branch: Reset to START", `setup_tracking`). `quiet`
/// drops the "set up to track" notice, as `-q` does.
pub fn create(
    repo: &gix::Repository,
    env: Env<'_>,
    nb: &NewBranch,
    commit: gix::ObjectId,
    quiet: bool,
) -> Result<(), Error> {
    let real_ref = dwim_branch_start(repo, nb)?;
    let message = if nb.exists {
        format!("branch: Reset to {}", nb.start)
    } else {
        format!("branch: Created from {}", nb.start)
    };
    let full = format!("refs/heads/{}", nb.name);
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: nb.reflog,
                message: message.clone().into(),
            },
            expected: if nb.exists {
                PreviousValue::Any
            } else {
                PreviousValue::MustNotExist
            },
            new: Target::Object(commit),
        },
        name: full
            .as_str()
            .try_into()
            .map_err(|_| Error::InvalidName(nb.name.clone()))?,
        deref: false,
    };
    // git's files backend also logs an update of the branch HEAD is on in HEAD's reflog (even
    // when the value does not change); gix does not.
    let head_on_it = repo
        .head_name()
        .ok()
        .flatten()
        .is_some_and(|h| h.as_bstr() == full.as_bytes());
    let old_value = if head_on_it {
        repo.head_id().ok().map(gix::Id::detach)
    } else {
        None
    };
    let committer = repo
        .committer()
        .transpose()
        .map_err(|e| Error::Committer(Box::new(e)))?;
    // The hook sees the branch, and HEAD's log-only update when HEAD is on it.
    let mut updates = vec![Update::to(full.clone(), Value::Id(commit))];
    if head_on_it {
        updates.push(Update::to("HEAD", Value::Id(commit)));
    }
    reftx::transaction(repo, env, &updates, || {
        repo.edit_references_as([edit], committer)
            .map_err(|e| Error::Ref {
                name: full.clone(),
                source: Box::new(e),
            })?;
        // gix writes no reflog at all with `core.logAllRefUpdates=false`; `-l` wants one.
        if nb.reflog && repo.refs.write_reflog == gix::refs::store::WriteReflog::Disable {
            force_reflog(repo, &full, None, commit, &message)?;
        }
        if head_on_it {
            append_reflog(repo, "HEAD", old_value, commit, &message)?;
        }
        Ok(())
    })
    .map_err(|e| match e {
        reftx::Error::AbortedByHook => Error::AbortedByHook,
        reftx::Error::Apply(e) => e,
    })?;

    match real_ref {
        Some(real) if nb.track != Track::Never => setup_tracking(repo, env, nb, &real, quiet),
        _ => Ok(()),
    }
}

/// git's `dwim_branch_start`: the ref the start point names, when it is a branch or a
/// remote-tracking branch (what tracking can follow); with `--track`, anything else is refused.
fn dwim_branch_start(repo: &gix::Repository, nb: &NewBranch) -> Result<Option<String>, Error> {
    let explicit = nb.track == Track::Explicit;
    let not_a_branch = || Error::NotABranch(nb.start.clone());
    match dwim_ref(repo, &nb.start) {
        (0, _) if explicit => Err(not_a_branch()),
        (0, _) => Ok(None),
        (1, Some(real)) => {
            if !real.starts_with("refs/heads/") && tracked_by(repo, &real).is_empty() {
                if explicit {
                    return Err(not_a_branch());
                }
                Ok(None)
            } else {
                Ok(Some(real))
            }
        }
        _ => Err(Error::Ambiguous(nb.start.clone())),
    }
}

/// git's `setup_tracking(new_ref, orig_ref, track, quiet)`.
fn setup_tracking(
    repo: &gix::Repository,
    env: Env<'_>,
    nb: &NewBranch,
    orig_ref: &str,
    quiet: bool,
) -> Result<(), Error> {
    let (remote, mut srcs, matches) = if nb.track == Track::Inherit {
        let bare = orig_ref.strip_prefix("refs/heads/").unwrap_or(orig_ref);
        let Some(remote) = config_string(repo, &format!("branch.{bare}.remote")) else {
            env.sink.notice(Notice::InheritNoRemote {
                branch: bare.to_owned(),
            });
            return Ok(());
        };
        let merges: Vec<String> = repo
            .config_snapshot()
            .strings(format!("branch.{bare}.merge").as_str())
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.to_str_lossy().into_owned())
            .collect();
        if merges.first().is_none_or(String::is_empty) {
            env.sink.notice(Notice::InheritNoMerge {
                branch: bare.to_owned(),
            });
            return Ok(());
        }
        (Some(remote), merges, 0)
    } else {
        let found = tracked_by(repo, orig_ref);
        if found.len() > 1 {
            return Err(Error::AmbiguousTracking {
                orig_ref: orig_ref.to_owned(),
                remotes: found.into_iter().map(|(remote, _)| remote).collect(),
            });
        }
        let n = found.len();
        match found.into_iter().next() {
            Some((remote, src)) => (Some(remote), vec![src], n),
            None => (None, Vec::new(), 0),
        }
    };
    if matches == 0 && !matches!(nb.track, Track::Always | Track::Explicit | Track::Inherit) {
        return Ok(());
    }
    if nb.track == Track::Simple
        && srcs.first().and_then(|s| s.strip_prefix("refs/heads/")) != Some(nb.name.as_str())
    {
        return Ok(());
    }
    if srcs.is_empty() {
        srcs.push(orig_ref.to_owned());
    }
    install_branch_config(repo, env, &nb.name, remote.as_deref(), &srcs, !quiet)
}

/// git's `install_branch_config_multiple_remotes`: write the upstream, say so.
fn install_branch_config(
    repo: &gix::Repository,
    env: Env<'_>,
    local: &str,
    origin: Option<&str>,
    srcs: &[String],
    verbose: bool,
) -> Result<(), Error> {
    let rebasing = match config_string(repo, "branch.autoSetupRebase").as_deref() {
        Some("always") => true,
        Some("local") => origin.is_none(),
        Some("remote") => origin.is_some(),
        _ => false,
    };
    if rebasing && srcs.len() > 1 {
        return Err(Error::RebaseMultiple);
    }
    if origin.is_none()
        && srcs
            .iter()
            .any(|s| s.strip_prefix("refs/heads/") == Some(local))
    {
        env.sink.notice(Notice::NotOwnUpstream {
            branch: local.to_owned(),
        });
        return Ok(());
    }
    if let Err(source) = set_tracking(repo, local, origin.unwrap_or("."), srcs, rebasing) {
        return Err(Error::UpstreamNotWritten {
            branch: local.to_owned(),
            remote: origin.map(str::to_owned),
            srcs: srcs.to_vec(),
            source,
        });
    }
    if verbose {
        let upstreams = srcs
            .iter()
            .map(|s| {
                let short = s.strip_prefix("refs/heads/").unwrap_or(s);
                match origin {
                    Some(o) => format!("{o}/{short}"),
                    None => short.to_owned(),
                }
            })
            .collect();
        env.sink.notice(Notice::TrackingSetUp {
            branch: local.to_owned(),
            upstreams,
            rebasing,
        });
    }
    Ok(())
}
