//! The index on disk below the decisions that fill it: its format, its checksum and the
//! extensions that need nothing of an operation (fsmonitor, resolve-undo, the untracked cache
//! and the global ignore files it records).

pub(crate) mod checksum;
pub(crate) mod encode;
pub(crate) mod format;
pub(crate) mod fsmonitor;
pub(crate) mod ignore_files;
/// Writing the index as git would: version, cache-tree and the extensions git carries over.
pub(crate) mod record;
pub(crate) mod resolve_undo;
pub(crate) mod split_index;
pub mod untracked_cache;
