//! What a run of any operation shares with its caller and with the machinery below it: the
//! [`Context`] the caller watches and stops it through, its [`Progress`] counters, and the errors
//! of writing entries ([`EntryError`], [`Error`]).
//!
//! They live here, below both, so that the operations (`checkout`, `update`, `restore`,
//! `merge`, `submodule`) and the machinery they drive (`execute`, `sparse`, `prefetch`) depend
//! on this room rather than on one another: the machinery never reaches up into an operation.
//! The public paths stay those of [`crate::checkout`](mod@crate::checkout), which re-exports them.

use std::sync::atomic::{AtomicBool, AtomicUsize};

use bstr::BString;
use gix::hash::ObjectId;

use crate::plan;

/// Counters the caller can read from another thread to show progress, like git's
/// "Updating files:  45% (18000/40000)".
#[derive(Debug, Default)]
pub struct Progress {
    /// Entries the checkout will create; set once planning is done.
    pub total: AtomicUsize,
    /// Entries created so far.
    pub done: AtomicUsize,
    /// Entries a long-running filter delayed, written at the end when the filter delivers them
    /// (git's "Filtering content" progress counts these; `done` counts them when delayed, as
    /// git's "Updating files" does).
    pub delayed: AtomicUsize,
    /// Delayed entries written since.
    pub filtered: AtomicUsize,
    /// git's `error:` lines (without the prefix) for what went wrong on the way without
    /// failing the operation, such as a non-required filter that failed; the caller prints them
    /// once the operation returns.
    pub messages: std::sync::Mutex<Vec<String>>,
}

/// What every operation of the engine shares with its caller while it runs: the progress
/// counters the caller may display from another thread, and the flag that asks the operation
/// to stop (set by the binary's Ctrl-C handler). One value passed down, so that an operation's
/// signature says what it does rather than how it is watched, and so that work the operation
/// starts on its own (submodules) stops on the same Ctrl-C.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Where the operation counts what it writes.
    pub progress: &'a Progress,
    /// Set to ask the operation to stop at the next entry.
    pub interrupt: &'a AtomicBool,
}

impl Context<'_> {
    /// Returns true if and only if the caller asked the operation to stop.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Why an entry could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct EntryError {
    /// The entry's path.
    pub path: BString,
    /// What went wrong, phrased for the user as git phrases it, naming the path and the cause
    /// (`unable to create file a/b: Permission denied`).
    pub message: String,
}

impl EntryError {
    /// A delayed entry its long-running filter never delivered: git's "'<path>' was not
    /// filtered properly".
    pub(crate) fn undelivered(path: &bstr::BStr) -> EntryError {
        EntryError {
            path: path.to_owned(),
            message: format!("'{path}' was not filtered properly"),
        }
    }

    /// Whether this is an undelivered one ("was not filtered properly"): git counts those apart from the
    /// writes that failed (`finish_delayed_checkout` returns how many, `checkout_entry` -1),
    /// and its exit status says which.
    pub fn is_undelivered(&self) -> bool {
        self.message == format!("'{}' was not filtered properly", self.path)
    }
}

/// Why a checkout failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The index lock is held or could not be written.
    #[error(transparent)]
    Lock(#[from] crate::lock::Error),
    /// The target tree is unsafe or unreadable; nothing was written.
    #[error(transparent)]
    Plan(#[from] plan::Error),
    /// A leading directory could not be created.
    #[error("unable to create directory '{path}': {source}")]
    Directory {
        /// The directory.
        path: BString,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// Some entries could not be written; the others were, but the index was left unwritten.
    #[error("{} entries could not be written: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Entries(Vec<EntryError>),
    /// The repository's configuration or attributes could not be read.
    #[error("{context}: {source}")]
    Repository {
        /// What we were doing.
        context: &'static str,
        /// What gix reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The user interrupted the checkout.
    #[error("interrupted")]
    Interrupted,
    /// A required filter failed (git's `<path>: smudge filter <driver> failed`): git dies
    /// there, so the index is left as it was; what was written before stays. `errors` are the
    /// entries that failed before it (git reports them first).
    #[error("{message}")]
    Filter {
        /// Entries that could not be written before the fatal one.
        errors: Vec<EntryError>,
        /// git's message, without `fatal: `.
        message: String,
    },
    /// A partial clone lacks a blob the checkout needs, and no promisor remote gave it; nothing
    /// was written. git dies with the same words.
    #[error("could not fetch {0} from promisor remote")]
    PromisorFetch(ObjectId),
}

/// The `map_err` of a gix call that reads the repository's configuration or attributes: the
/// error becomes an [`Error::Repository`] that says what we were doing (`context`), since gix's
/// own message does not name the step of the operation that failed.
pub(crate) fn repo_err(context: &'static str) -> impl FnOnce(gix::Error) -> Error {
    move |err| Error::Repository {
        context,
        source: Box::new(err),
    }
}

/// Drop `value` on a thread of its own: a checkout's plan and blob cache (tens of thousands of
/// paths and buffers to free, the packs to unmap) took 3 ms of tldr's checkout after its files
/// were written, on the sequential end of it where the other CPUs have nothing to do. Dropped
/// here when no thread can be started.
pub(crate) fn drop_apart<T: Send + 'static>(value: T) {
    // A thread that cannot start drops its closure, and `value` with it, here.
    let _ = std::thread::Builder::new()
        .name("git-par drop".into())
        .spawn(move || {
            yield_to_the_others();
            drop(value)
        });
}

/// Give the pages of freed memory back to the system when a run has just freed many small
/// blocks (`entries` of them, about) amid blocks it keeps. glibc returns a heap's free memory
/// only from the top of the heap; the rest stays resident until it is used again. The walk of a
/// million-entry tree frees its parts (80 MiB, in blocks below the mapping threshold) amid the
/// plan's paths, which stay: 35 to 65 MiB of a checkout's peak memory that nothing used again
/// (`malloc_trim` gives back every whole free page in every arena, 13 ms for a million
/// entries). Below [`TRIM_MIN`] entries the memory is small and the call is not worth its time.
pub(crate) fn give_back_freed(entries: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if entries >= TRIM_MIN {
        // SAFETY: malloc_trim only releases free memory of glibc's own heaps.
        unsafe {
            libc::malloc_trim(0);
        }
        crate::phase::mark("freed memory given back");
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = entries;
}

/// The fewest freed blocks for which [`give_back_freed`] trims the heaps.
const TRIM_MIN: usize = 100_000;

/// Lower the calling thread's priority (nice 10) for work that only has to be done by the time
/// the others are (an index encoded beside the writers, memory freed): the scheduler then gives
/// the CPUs to the threads that decide when the checkout ends, and this one the time they leave.
/// On Linux `setpriority(PRIO_PROCESS, 0, ..)` changes the calling thread alone.
pub(crate) fn yield_to_the_others() {
    // SAFETY: setpriority only reads its arguments; a failure leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}
