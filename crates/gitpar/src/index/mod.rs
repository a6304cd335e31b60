//! The index on disk below the decisions that fill it: its format, its checksum and the
//! extensions that need nothing of an operation (fsmonitor, resolve-undo).

pub(crate) mod checksum;
pub(crate) mod format;
pub(crate) mod fsmonitor;
pub(crate) mod resolve_undo;
