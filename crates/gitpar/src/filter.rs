//! External filter drivers on the way to the work tree: `filter.<driver>.smudge` (one process
//! per file, through the shell, `%f` replaced by the quoted path) and `filter.<driver>.process`
//! (git's long-running filter protocol, version 2, with `delay`), as git's `convert.c` runs them.
//!
//! The protocol itself is gix-filter's (`driver::State`); this module decides what git decides
//! around it: which driver applies (only drivers from the configuration, never anything from the
//! tree), what `filter.<driver>.required` means when the filter fails (an error for that path,
//! or the blob unconverted), and how a delayed entry is fetched again (git's
//! `finish_delayed_checkout`: `list_available_blobs`, then a `smudge` without content).
//!
//! Every writer owns one [`Smudger`], so a long-running filter runs once per writer thread: the
//! filtered entries of one writer never wait for another writer's filter, and unfiltered entries
//! never wait for any filter.

use bstr::{BStr, BString, ByteSlice};
use gix::filter::plumbing::driver::{self, apply::Delay, apply::MaybeDelayed, Operation};
use gix::filter::plumbing::Driver;

/// The configured filter drivers that can smudge: those with a `smudge` or `process` command,
/// and required ones (a required driver without a smudge command fails every entry, as in git).
/// Only configuration (repository, global, system, `-c`) defines drivers; a `.gitattributes`
/// merely names one.
pub(crate) fn smudge_drivers(repo: &gix::Repository) -> Result<Vec<Driver>, String> {
    Ok(gix::filter::Pipeline::options(repo)
        .map_err(|e| e.to_string())?
        .drivers
        .into_iter()
        .filter(|d| d.smudge.is_some() || d.process.is_some() || d.required)
        .collect())
}

/// What a driver made of one entry.
pub(crate) enum Smudged<'a> {
    /// The driver does not convert this entry (no smudge command, the long-running filter lacks
    /// the `smudge` capability, or a non-required driver failed): the content is written as it
    /// was before the driver step, as git does.
    Unconverted,
    /// The long-running filter will deliver the content later (`status=delayed`).
    Delayed(driver::Key),
    /// The converted content, to be read to the end; a read error means the filter failed after
    /// it started answering.
    Output(Box<dyn std::io::Read + 'a>),
}

/// A filter failure for a path whose driver is `required` (or a delayed entry, which cannot fall
/// back): git's `<path>: smudge filter <driver> failed`, with the cause.
#[derive(Debug)]
pub(crate) struct Failed {
    /// The message for the entry, naming the path, the driver and the cause.
    pub message: String,
}

/// One writer's filter processes: its long-running filters (one per `process` command, started
/// on first use and kept to the end of the checkout) and the entries they delayed.
pub(crate) struct Smudger<'d> {
    state: driver::State,
    drivers: &'d [Driver],
}

impl<'d> Smudger<'d> {
    /// A smudger over `drivers` whose processes run as git runs them: at the top of the work tree,
    /// with git's environment (`GIT_DIR` and friends) from `context`.
    pub(crate) fn new(drivers: &'d [Driver], context: gix::command::Context) -> Self {
        Smudger {
            state: driver::State::new(context),
            drivers,
        }
    }

    /// The configured driver named by a `filter` attribute, if any can smudge.
    pub(crate) fn driver(&self, name: &BStr) -> Option<&'d Driver> {
        self.drivers.iter().find(|d| d.name == name)
    }

    /// Returns true if and only if no driver is configured, so the `filter` attribute need not be
    /// looked up at all.
    pub(crate) fn is_idle(&self) -> bool {
        self.drivers.is_empty()
    }

    /// Run `driver`'s smudge on `input` (the content after ident, eol and encoding) for `path`
    /// (blob `blob`). With `delay` allowed, a long-running filter with the `delay` capability may
    /// answer [`Smudged::Delayed`]. A failure of a non-required driver is
    /// [`Smudged::Unconverted`]; of a required one, [`Failed`].
    pub(crate) fn smudge(
        &mut self,
        driver: &Driver,
        path: &BStr,
        blob: gix::ObjectId,
        input: &[u8],
        delay: Delay,
    ) -> Result<Smudged<'_>, Failed> {
        let ctx = driver::apply::Context {
            rela_path: path,
            ref_name: None,
            treeish: None,
            blob: Some(blob),
        };
        let required = driver.required;
        let result =
            self.state
                .apply_delayed(driver, &mut &input[..], Operation::Smudge, delay, ctx);
        match result {
            Ok(Some(MaybeDelayed::Immediate(read))) => Ok(Smudged::Output(read)),
            Ok(Some(MaybeDelayed::Delayed(key))) => Ok(Smudged::Delayed(key)),
            Ok(None) if required => Err(failed(path, driver, "it has no smudge command")),
            Ok(None) => Ok(Smudged::Unconverted),
            Err(err) if required => Err(failed(path, driver, &err.to_string())),
            Err(_) => Ok(Smudged::Unconverted),
        }
    }

    /// After `err` ended the output of `driver` early: a long-running filter that did not
    /// answer with an error status but broke off (it died, or closed its output) is stopped,
    /// so the next entry starts it again, as git's `kill_multi_file_filter` does. All of this
    /// writer's long-running filters stop (gix-filter cannot stop one alone): the caller does
    /// this only while none of them owes a delayed entry.
    pub(crate) fn forget_broken(&mut self, driver: &Driver, err: &std::io::Error) {
        let status_error = err.kind() == std::io::ErrorKind::Other
            && err
                .to_string()
                .starts_with("Process indicated error after reading");
        if driver.process.is_some() && !status_error {
            let _ = self
                .state
                .shutdown(driver::shutdown::Mode::WaitForProcesses);
        }
    }

    /// Ask the long-running filter `key` which delayed paths it can deliver now
    /// (`list_available_blobs`); an empty list means it will deliver nothing more.
    pub(crate) fn available(&mut self, key: &driver::Key) -> Result<Vec<BString>, String> {
        self.state
            .list_delayed_paths(key)
            .map_err(|err| err.to_string())
    }

    /// Fetch the content of the delayed `path` from `driver`'s long-running filter, as git's
    /// retry does: `command=smudge` with the path and the blob, without `can-delay` and without
    /// content. The filter must answer now; there is no fallback for a delayed entry.
    pub(crate) fn fetch_delayed(
        &mut self,
        driver: &Driver,
        path: &BStr,
        blob: gix::ObjectId,
    ) -> Result<Box<dyn std::io::Read + '_>, Failed> {
        let ctx = driver::apply::Context {
            rela_path: path,
            ref_name: None,
            treeish: None,
            blob: Some(blob),
        };
        match self
            .state
            .apply_delayed(driver, &mut &b""[..], Operation::Smudge, Delay::Forbid, ctx)
        {
            Ok(Some(MaybeDelayed::Immediate(read))) => Ok(read),
            Ok(Some(MaybeDelayed::Delayed(_)) | None) => Err(failed(
                path,
                driver,
                "the filter did not deliver the delayed content",
            )),
            Err(err) => Err(failed(path, driver, &err.to_string())),
        }
    }
}

/// git's message for a failed smudge (`convert.c`), with the cause appended.
pub(crate) fn failed(path: &BStr, driver: &Driver, cause: &str) -> Failed {
    Failed {
        message: format!(
            "{path}: smudge filter {} failed: {}",
            driver.name.as_bstr(),
            cause.trim_end()
        ),
    }
}
