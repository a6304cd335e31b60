#![warn(missing_docs)]
//! The engine of git-par: it writes Git trees into work trees in parallel and records them in
//! the index so that git itself accepts the result as its own.
//!
//! The folders are layers, lowest first; a module imports only from its own layer and those
//! below (`tests/layers.rs` holds the order, `docs/ARCHITECTURE.md` draws it):
//!
//! ```text
//! ops      checkout, update (+ initial, submodule), switch, reset, restore, merge, fast_forward, carry,
//!          remove_worktree
//! inspect  refresh, status
//! write    the writer pool, one entry's write, the tail, donor, options, the write error
//! objects  pack scan and inflation, streaming, prefetch
//! plan     tree walk and diff, pathspecs, sparse patterns
//! index    the index file: format, encode, record, split index, extensions
//! repo     refs, branches, hooks, state files, submodule config   convert  attributes, filters
//! fs       the path-safe filesystem layer, locks, removal (entries, whole trees), tuning: the
//!          platform seam
//! sys      cpus, environment, git, memory budget, context, phases
//! ```
//!
//! `clone` and `worktree add` let git set the repository up and then run a
//! [`checkout::checkout`]; [`update`] and [`restore`] change an existing work tree, with
//! `refresh` checking what is on disk.
//!
//! The library never prints; the `git-par` binary turns outcomes, notices and errors into git's
//! messages. Its public surface is the operations (`checkout`, `update`, `restore`, `merge`, and
//! the whole transactions of a branch switch, [`switch`], and of `reset --hard`, [`reset`]:
//! work tree, index, branch creation, `HEAD` with its reflog, state files, hooks), their
//! [`options`], outcomes and typed errors, what they say along the way ([`repo::notice`]), the
//! repository-side pieces the binary shares ([`repo`]: `branch`, `create_branch`, `hooks`,
//! `reftx`, `state`; and `plan::pathspec`), and [`status`]; the machinery (writers, budget,
//! path-safe layer, refresh, index writing, sparse, submodules, prefetch) is crate-private, so
//! it can change without breaking callers. The root re-exports keep the public paths of the
//! operations (`gitpar::checkout`, `gitpar::update`, ...) whatever folder holds them.

pub(crate) mod convert;
pub(crate) mod fs;
pub(crate) mod index;
pub mod inspect;
pub(crate) mod objects;
pub mod ops;
pub mod plan;
pub mod repo;
pub mod sys;
pub(crate) mod write;

pub use inspect::status;
pub use ops::checkout::{checkout, checkout_planned, plan_ahead, Outcome, Planned};
pub use ops::remove_worktree;
pub use ops::{carry, checkout, fast_forward, merge, reset, restore, switch, update};

pub use convert::filter::{finish_filters, Meta as FilterMeta};
pub use fs::{lock, remove_tree, tune};
pub use index::untracked_cache;
pub use sys::context::{Context, Progress};
pub use sys::git::{git_command, REAL_GIT};
pub use write::donor;
pub use write::options::{self, Options};
