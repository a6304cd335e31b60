//! How one entry failed: what a writer hands back instead of the entry's stat data, and git's
//! words for it. Shared by the writers' paths (`write`, `filters`, `tail`), so that none of
//! them reaches into another for it.

use crate::convert::filter::Fatal;
use crate::fs;
use crate::plan;
use crate::write::error::EntryError;

/// Why a writer did not hand back an entry's stat data.
pub(super) enum Failure {
    /// Something already exists at the path: handled by the sequential tail.
    Collision,
    Error(EntryError),
    /// A required filter failed: the run stops (git dies).
    Fatal(Fatal),
    /// Not a failure: the long-running filter will deliver the content later, and the thread
    /// whose process holds it fetches it once its other entries are written.
    Delayed,
    /// Not a failure: a writer handed the filtered entry to the filter threads (this queue).
    Queued(usize),
}

/// A failure of `entry` with `message`.
pub(super) fn entry_failure(entry: &plan::Entry, message: String) -> Failure {
    Failure::Error(EntryError {
        path: entry.path.clone(),
        message,
    })
}

/// git's words (`entry.c`) for a file that could not be created or written; something in the
/// way is a collision for the tail.
pub(super) fn create_failure(entry: &plan::Entry, err: fs::CreateError) -> Failure {
    if fs::is_collision(err.io()) || fs::is_not_there(err.io()) {
        return Failure::Collision;
    }
    let path = &entry.path;
    let message = match err {
        fs::CreateError::Unlink(e) => {
            format!("unable to unlink old '{path}': {}", fs::strerror(&e))
        }
        fs::CreateError::Create(e) => format!("unable to create file {path}: {}", fs::strerror(&e)),
        fs::CreateError::Write(e) => format!("unable to write file {path}: {}", fs::strerror(&e)),
    };
    entry_failure(entry, message)
}
