//! The errors of writing entries ([`EntryError`], [`Error`]): the writers report them, and the
//! operations above (`checkout`, `update`, `restore`, `merge`, `submodule`) return them. The
//! machinery below has errors of its own (`plan::sparse::Error`, `objects::prefetch::Error`),
//! taken here with `From`. The public paths stay those of `checkout`, which re-exports them.

use bstr::BString;
use gix::hash::ObjectId;

use crate::plan;

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
    Lock(#[from] crate::fs::lock::Error),
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

/// A partial clone's missing blobs stop the checkout with the same words as git.
impl From<crate::objects::prefetch::Error> for Error {
    fn from(err: crate::objects::prefetch::Error) -> Error {
        match err {
            crate::objects::prefetch::Error::Interrupted => Error::Interrupted,
            crate::objects::prefetch::Error::PromisorFetch(id) => Error::PromisorFetch(id),
        }
    }
}

/// The sparse-checkout patterns are part of the repository's configuration: a failure to read
/// or apply them is reported as git reports a configuration it cannot read.
impl From<crate::plan::sparse::Error> for Error {
    fn from(err: crate::plan::sparse::Error) -> Error {
        Error::Repository {
            context: err.context,
            source: err.source,
        }
    }
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
