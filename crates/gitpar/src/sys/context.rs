//! What a run of any operation shares with its caller: the [`Context`] the caller watches and
//! stops it through, and its [`Progress`] counters. They live at the bottom of the engine so that
//! every layer above can be handed the one value without reaching into an operation.

use std::sync::atomic::{AtomicBool, AtomicUsize};

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
