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
//! options, outcomes and typed errors, what they say along the way ([`repo::notice`]), and the
//! repository-side pieces the binary shares ([`repo`]: `branch`, `create_branch`, `hooks`,
//! `reftx`, `state`; and `plan::pathspec`); the machinery (writers, budget, path-safe layer, refresh,
//! index writing, sparse, submodules, prefetch) is crate-private, so it can change without
//! breaking callers. The folders are layers, lowest first: [`sys`], `fs`, [`repo`], `convert`,
//! `index`, [`plan`]; the modules not yet in one stand above them (`docs/ARCHITECTURE.md`).

/// `.worktreeinclude`: the donor's ignored files (build caches) carried into a new work tree.
pub mod carry;
pub(crate) mod convert;
pub mod donor;
pub(crate) mod execute;
pub(crate) mod fs;
pub(crate) mod index;
pub(crate) mod objects;
pub mod ops;
pub mod plan;
pub(crate) mod refresh;
pub mod repo;
pub mod status;
pub mod sys;
pub mod update;

pub use ops::checkout::{checkout, checkout_planned, plan_ahead, Outcome, Planned};
pub use ops::{checkout, fast_forward, merge, reset, restore, switch};

pub use convert::filter::{finish_filters, Meta as FilterMeta};
pub use execute::options::{self, Options};
pub use fs::{lock, tune};
pub use index::untracked_cache;
pub use sys::context::{Context, Progress};
pub use sys::git::{git_command, REAL_GIT};
