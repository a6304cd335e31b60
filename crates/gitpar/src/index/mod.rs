//! The index on disk below the decisions that fill it: its format, its checksum and the
//! extensions that need nothing of an operation (fsmonitor, resolve-undo, the untracked cache
//! and the global ignore files it records).

pub(crate) mod checksum;
pub(crate) mod format;
pub(crate) mod fsmonitor;
pub(crate) mod ignore_files;
pub(crate) mod resolve_undo;
pub mod untracked_cache;
