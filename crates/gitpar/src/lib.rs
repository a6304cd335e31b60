#![warn(missing_docs)]
//! The engine of git-par: it writes Git trees into work trees in parallel and records them in
//! the index so that git itself accepts the result as its own.
//!
//! Every operation is the same four steps (see `docs/ARCHITECTURE.md`):
//! resolve ([`options`]) → plan ([`plan`]) → execute (`execute`, `fs`, `budget`) → record
//! ([`lock`], `record`). `clone` and `worktree add` let git set the repository up and then run a
//! [`checkout::checkout`]; [`update`] and [`restore`] change an existing work tree, with
//! `refresh` checking what is on disk.
//!
//! The library never prints; the `git-par` binary turns outcomes and errors into git's messages.
//! Its public surface is the operations (`checkout`, `update`, `restore`, `merge`), their
//! options, outcomes and errors, and the repository-side helpers the binary shares (`branch`,
//! `pathspec`); the machinery (writers, budget, path-safe layer, refresh, index writing,
//! sparse, submodules, prefetch) is crate-private, so it can change without breaking callers.

pub mod branch;
pub(crate) mod budget;
pub mod checkout;
pub(crate) mod convert;
pub(crate) mod execute;
pub(crate) mod filter;
pub(crate) mod fs;
pub mod lock;
pub mod merge;
pub mod options;
pub mod pathspec;
pub mod plan;
pub(crate) mod prefetch;
/// Writing the index as git would: version, cache-tree and the extensions git carries over.
pub(crate) mod record;
pub(crate) mod refresh;
pub(crate) mod remove;
pub(crate) mod resolve_undo;
pub mod restore;
pub(crate) mod sparse;
pub(crate) mod submodule;
pub mod update;

pub use checkout::{checkout, Context, Outcome, Progress};
pub use filter::{finish_filters, Meta as FilterMeta};
pub use options::Options;
