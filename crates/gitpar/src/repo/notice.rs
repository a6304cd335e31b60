//! What git says along the way without stopping: a hook that was ignored or died, a cherry-pick
//! cancelled by a switch, an autostash turned into a stash entry, an upstream not set up.
//!
//! The engine never prints. The operations that run hooks, move refs and clean state files
//! (`switch`, `reset`, the hooks and ref transactions) hand each notice to a [`Sink`] at the
//! moment git would print it, so the binary keeps git's order of messages — a hook's own output
//! between them included — and turns each into git's words in one place.

use std::path::PathBuf;

/// One thing git would say without stopping the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A hook exists but is not executable (git's `advice.ignoredHook` hint); `path` as git
    /// names it. Given once per hook and process, and only when the advice is enabled.
    HookIgnored {
        /// The hook's path as git shows it.
        path: PathBuf,
    },
    /// A hook was killed by `signal`.
    HookDied {
        /// The hook's path.
        path: PathBuf,
        /// The signal number.
        signal: i32,
    },
    /// A hook could not be started.
    HookCannotRun {
        /// The hook's path.
        path: PathBuf,
        /// The C library's text for the error.
        error: String,
    },
    /// A branch switch cancelled a cherry-pick in progress (`CHERRY_PICK_HEAD` removed).
    CancelledCherryPick,
    /// A branch switch cancelled a revert in progress (`REVERT_HEAD` removed).
    CancelledRevert,
    /// The sequencer directory of a finished pick could not be removed.
    CouldNotRemove {
        /// The directory.
        path: PathBuf,
    },
    /// `MERGE_AUTOSTASH` is a symbolic ref and was left alone.
    AutostashSymref,
    /// The merge's autostash became a stash entry.
    AutostashStored,
    /// The merge's autostash could not be stored (`git stash store` failed).
    AutostashNotStored {
        /// The stash commit as `MERGE_AUTOSTASH` named it.
        oid: String,
    },
    /// `ORIG_HEAD` could not be updated (the reset goes on, as git's `UPDATE_REFS_MSG_ON_ERR`).
    OrigHeadNotUpdated {
        /// Why.
        error: String,
    },
    /// A new branch's upstream was set up (git prints it unless `-q`).
    TrackingSetUp {
        /// The new branch's short name.
        branch: String,
        /// The upstreams as git names them (`origin/main`, or a local branch's short name).
        upstreams: Vec<String>,
        /// `branch.autoSetupRebase` makes it rebase.
        rebasing: bool,
    },
    /// `--track=inherit` from a branch without `branch.<name>.remote`.
    InheritNoRemote {
        /// The start branch.
        branch: String,
    },
    /// `--track=inherit` from a branch without `branch.<name>.merge`.
    InheritNoMerge {
        /// The start branch.
        branch: String,
    },
    /// A local start point that is the new branch itself is not made its own upstream.
    NotOwnUpstream {
        /// The branch.
        branch: String,
    },
}

/// Where notices go as they happen. The binary prints them; library callers may collect or
/// ignore them ([`Ignore`]).
pub trait Sink {
    /// Take one notice.
    fn notice(&self, notice: Notice);
}

/// A sink that drops every notice: for callers that want only outcomes.
pub struct Ignore;

impl Sink for Ignore {
    fn notice(&self, _: Notice) {}
}

impl<F: Fn(Notice)> Sink for F {
    fn notice(&self, notice: Notice) {
        self(notice);
    }
}
