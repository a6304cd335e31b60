#![warn(missing_docs)]
//! The engine of git-par: it writes Git trees into work trees in parallel and records them in
//! the index so that git itself accepts the result as its own.
//!
//! Every operation is the same four steps (see `docs/ARCHITECTURE.md`):
//! resolve ([`options`]) → plan ([`plan`]) → execute (`execute`, `fs`, `sys::budget`) → record
//! ([`lock`], `record`). `clone` and `worktree add` let git set the repository up and then run a
//! [`checkout::checkout`]; [`update`] and [`restore`] change an existing work tree, with
//! `refresh` checking what is on disk.
//!
//! The library never prints; the `git-par` binary turns outcomes, notices and errors into git's
//! messages. Its public surface is the operations (`checkout`, `update`, `restore`, `merge`, and
//! the whole transactions of a branch switch, [`switch`], and of `reset --hard`, [`reset`]:
//! work tree, index, branch creation, `HEAD` with its reflog, state files, hooks), their
//! options, outcomes and typed errors, what they say along the way ([`notice`]), and the
//! repository-side pieces the binary shares (`branch`, `create_branch`, `hooks`, `reftx`,
//! `state`, `pathspec`); the machinery (writers, budget, path-safe layer, refresh, index writing,
//! sparse, submodules, prefetch) is crate-private, so it can change without breaking callers.

pub(crate) mod attr_view;
pub(crate) mod blobs;
pub mod branch;
/// `.worktreeinclude`: the donor's ignored files (build caches) carried into a new work tree.
pub mod carry;
pub mod checkout;
pub(crate) mod convert;
pub mod create_branch;
pub mod donor;
pub(crate) mod execute;
pub mod fast_forward;
pub(crate) mod filter;
pub(crate) mod fs;
pub mod hooks;
pub(crate) mod ignore_files;
pub(crate) mod index;
/// An update of an empty work tree taken as a full checkout.
pub(crate) mod initial;
pub mod merge;
pub mod notice;
pub mod options;
pub mod pathspec;
pub mod plan;
pub(crate) mod prefetch;
/// Writing the index as git would: version, cache-tree and the extensions git carries over.
pub(crate) mod record;
pub(crate) mod refresh;
pub mod reftx;
pub mod reset;
pub mod restore;
pub(crate) mod run;
pub(crate) mod sparse;
pub(crate) mod split_index;
pub mod state;
pub mod status;
pub(crate) mod stream;
pub(crate) mod submodule;
pub mod switch;
pub mod sys;
pub mod untracked_cache;
pub mod update;

pub use checkout::{checkout, checkout_planned, plan_ahead, Outcome, Planned};

/// The environment variable naming the real git, for git-par run as `git` (its transparent
/// mode: a link named `git` first on `PATH`), where `git` on `PATH` is git-par itself.
pub const REAL_GIT: &str = "GIT_PAR_REAL_GIT";

/// A command that runs the real git: `$GIT_PAR_REAL_GIT` when set (git-par run as `git` sets
/// it for itself and its children), else `git` from `PATH`. Every git the engine and the binary
/// start goes through here, so that git-par standing in for git never starts itself.
pub fn git_command() -> std::process::Command {
    match std::env::var_os(REAL_GIT).filter(|g| !g.is_empty()) {
        Some(git) => std::process::Command::new(git),
        None => std::process::Command::new("git"),
    }
}
pub use filter::{finish_filters, Meta as FilterMeta};
pub use fs::{lock, tune};
pub use options::Options;
pub use sys::context::{Context, Progress};
