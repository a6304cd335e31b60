#![warn(missing_docs)]
//! The engine of git-par: it writes Git trees into work trees in parallel and records them in
//! the index so that git itself accepts the result as its own.
//!
//! Every operation is the same four steps (see `docs/ARCHITECTURE.md`):
//! resolve ([`options`]) → plan ([`plan`]) → execute ([`execute`](mod@execute),
//! [`fs`], [`budget`]) → record ([`lock`], [`record`]). [`clone`] and [`worktree`]
//! set up repositories and then run a [`checkout::checkout`]; [`update`] and [`restore`] change an
//! existing work tree, with [`refresh`] checking what is on disk.
//!
//! The library never prints; the `git-par` binary turns outcomes and errors into git's messages.

pub mod branch;
pub mod budget;
pub mod checkout;
pub mod clone;
pub mod convert;
pub mod execute;
pub(crate) mod filter;
pub mod fs;
pub mod lock;
pub mod merge;
pub mod options;
pub mod plan;
pub mod prefetch;
/// Writing the index as git would: version, cache-tree and the extensions git carries over.
pub mod record;
pub mod refresh;
pub mod remove;
pub mod resolve_undo;
pub mod restore;
pub mod sparse;
pub mod submodule;
pub mod update;
pub mod worktree;

pub use checkout::{checkout, Outcome, Progress};
pub use options::Options;
