//! External filter drivers: `filter.<driver>.smudge` and `.clean` (one process per file,
//! [`oneshot`]) and `filter.<driver>.process` (git's long-running filter protocol, version 2,
//! with `delay`: [`process`]), run as git's `convert.c` runs them.
//!
//! This module decides what git decides around them: which driver applies (only drivers from
//! the configuration, never anything from the tree), what `filter.<driver>.required` means when
//! a filter fails (git dies: [`Fatal`]; otherwise the content goes unconverted, with git's
//! `error:` lines), what a long-running filter is told (`pathname`, and `ref`, `treeish` and
//! `blob` as git 2.47 sends them: [`Meta`]), when it is restarted (after anything but an
//! `error` or `abort` status) and how a delayed entry is fetched again (git's
//! `finish_delayed_checkout`: `list_available_blobs`, then a `smudge` without content).
//!
//! A [`Runner`] is one thread's set of filter processes; how many runners a checkout has, and
//! which entries each gets, is the writers' business (`execute/`). A long-running filter a
//! runner no longer needs is kept running for the next one ([`IDLE`]), as git keeps its filter
//! processes to its end: the refresh's `clean` and the checkout's `smudge` of one command talk
//! to one process, as with git. [`finish_filters`] ends them all.

pub(crate) mod oneshot;
pub(crate) mod process;
pub(crate) mod queue;
pub(crate) mod to_git;

pub(crate) use to_git::ToGit;

use std::io::{self, Read};
use std::sync::{Mutex, PoisonError};

use bstr::{BStr, BString, ByteSlice};
use gix::filter::plumbing::Driver;

/// Why the conversion of files could not be set up: the filter configuration, the command
/// context or the attributes could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The filter configuration (`filter.<driver>.*`, `core.autocrlf`, ...) or the context
    /// commands run with; gix's message.
    #[error(transparent)]
    Config(Box<dyn std::error::Error + Send + Sync>),
    /// The attributes of the work tree and the index.
    #[error("reading attributes: {0}")]
    Attributes(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The configured filter drivers: those that define a command (`smudge`, `clean` or
/// `process`), and required ones (a required driver without the command for a direction fails
/// every entry in that direction, as in git). Only configuration (repository, global, system,
/// `-c`) defines drivers; a `.gitattributes` merely names one.
pub(crate) fn drivers(repo: &gix::Repository) -> Result<Vec<Driver>, Error> {
    Ok(gix::filter::Pipeline::options(repo)
        .map_err(|e| Error::Config(Box::new(e)))?
        .drivers
        .into_iter()
        .filter(|d| d.smudge.is_some() || d.clean.is_some() || d.process.is_some() || d.required)
        .collect())
}

/// Long-running filters started by a runner that is gone, ready for the next one with the same
/// command in the same repository and work tree ([`Key`]).
static IDLE: Mutex<Vec<(Key, process::Process)>> = Mutex::new(Vec::new());

/// What makes a long-running filter reusable: its command, and the git directory and work tree
/// it runs for (a submodule's filter is another process, as with git).
type Key = (
    BString,
    Option<std::path::PathBuf>,
    Option<std::path::PathBuf>,
);

fn key(command: &BStr, context: &gix::command::Context) -> Key {
    (
        command.to_owned(),
        context.git_dir.clone(),
        context.worktree_dir.clone(),
    )
}

/// Close the input of every long-running filter still running and wait for them to exit, as git
/// does when it exits (a filter may still be writing its log or cleaning up). Call it once the
/// operations are done; filters started after it start afresh.
pub fn finish_filters() {
    let idle = std::mem::take(&mut *IDLE.lock().unwrap_or_else(PoisonError::into_inner));
    for (_, p) in idle {
        p.finish();
    }
}

/// What a long-running filter is told about the checkout besides the path, as git's
/// `checkout_metadata`: the ref being checked out and the commit (or tree) it names. The blob
/// is per entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// `ref=`: the full name of the ref checked out (`refs/heads/main`), when the command names
    /// one (`switch main`, `reset --hard main`, a clone's branch); none for a detached commit.
    pub ref_name: Option<BString>,
    /// `treeish=`: the commit (or tree) checked out; none when the content comes from the index
    /// (`checkout -- paths`, `restore`).
    pub treeish: Option<gix::ObjectId>,
}

/// The two directions a driver converts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// To the work tree (`smudge`).
    Smudge,
    /// To the repository (`clean`).
    Clean,
}

impl Direction {
    fn name(self) -> &'static str {
        match self {
            Direction::Smudge => "smudge",
            Direction::Clean => "clean",
        }
    }

    fn cap(self) -> u8 {
        match self {
            Direction::Smudge => process::SMUDGE,
            Direction::Clean => process::CLEAN,
        }
    }
}

/// A required filter failed: git dies with this message (`fatal: <path>: smudge filter <driver>
/// failed`, exit 128) after the `error:` lines the failure printed.
#[derive(Debug, Clone)]
pub(crate) struct Fatal {
    /// The entry's path.
    pub path: BString,
    /// git's message, without `fatal: `.
    pub message: String,
}

/// What a driver made of one entry.
pub(crate) enum Filtered<T> {
    /// Not converted: the driver has no command for this direction, the long-running filter
    /// lacks the capability, or a non-required filter failed. The content is written as it was
    /// before the driver step, as git does.
    Unconverted,
    /// The long-running filter will deliver the content later (`status=delayed`).
    Delayed,
    /// The filter's output went through the consumer, which made this of it.
    Converted(T),
}

/// One thread's filter processes: the long-running filters it started (one per `process`
/// command, started on first use and kept to the end of the run, restarted after a failure)
/// and git's error lines for what failed on the way (printed by the binary before the result).
pub(crate) struct Runner<'d> {
    drivers: &'d [Driver],
    context: gix::command::Context,
    running: Vec<(BString, process::Process)>,
    /// git's `error:` lines (without the prefix), in the order git would print them.
    pub messages: Vec<String>,
}

/// A reader that remembers whether the filter behind it failed (as opposed to the consumer
/// giving up), and whether it was read to its end.
struct Watched<R> {
    inner: R,
    failed: bool,
    ended: bool,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(0) if !buf.is_empty() => {
                self.ended = true;
                Ok(0)
            }
            Ok(n) => Ok(n),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => Err(err),
            Err(err) => {
                self.failed = true;
                Err(err)
            }
        }
    }
}

impl<'d> Runner<'d> {
    /// A runner over `drivers` whose processes run as git runs them: at the top of the work
    /// tree, with git's environment (`GIT_DIR` and friends) from `context`.
    pub(crate) fn new(drivers: &'d [Driver], context: gix::command::Context) -> Self {
        Runner {
            drivers,
            context,
            running: Vec::new(),
            messages: Vec::new(),
        }
    }

    /// The configured driver named by a `filter` attribute, if any.
    pub(crate) fn driver(&self, name: &BStr) -> Option<&'d Driver> {
        self.drivers.iter().find(|d| d.name == name)
    }

    /// Returns true if and only if no driver is configured, so the `filter` attribute need not be
    /// looked up at all.
    pub(crate) fn is_idle(&self) -> bool {
        self.drivers.is_empty()
    }

    /// Run `driver` in `direction` on `input` for `path` (blob `blob` when known), and hand
    /// its output to `consume`, which reads it (to its end, for the output to count) and makes
    /// a `T` of it. With `can_delay`, a long-running filter with the `delay` capability may
    /// answer [`Filtered::Delayed`] instead. A failure of a non-required driver is
    /// [`Filtered::Unconverted`] (with git's error lines in [`Runner::messages`]); of a
    /// required one, [`Fatal`]. Whatever `consume` made of a failed output is dropped: it must
    /// leave nothing behind on a read error.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run<T>(
        &mut self,
        driver: &Driver,
        direction: Direction,
        path: &BStr,
        (meta, blob): (&Meta, Option<gix::ObjectId>),
        input: &[u8],
        can_delay: bool,
        consume: impl FnOnce(&mut dyn Read) -> T,
    ) -> Result<Filtered<T>, Fatal> {
        // git's `apply_filter`: the per-file command only when no `process` is configured at
        // all (even an empty one), an empty command is none (`-c filter.x.smudge=` turns it
        // off), and then the `process`, if not empty.
        let command = match direction {
            Direction::Smudge => driver.smudge.as_ref(),
            Direction::Clean => driver.clean.as_ref(),
        }
        .filter(|c| driver.process.is_none() && !c.is_empty());
        let process = driver.process.as_ref().filter(|p| !p.is_empty());
        let outcome = match (command, process) {
            (Some(command), _) => self.oneshot(command.as_bstr(), path, input, consume),
            (None, Some(process)) => self.multi(
                process.as_bstr(),
                direction,
                path,
                (meta, blob),
                input,
                can_delay,
                consume,
            ),
            (None, None) => Err(()),
        };
        match outcome {
            Ok(filtered) => Ok(filtered),
            Err(()) if driver.required => Err(self.fatal(driver, direction, path)),
            Err(()) => Ok(Filtered::Unconverted),
        }
    }

    /// git's message for a required driver that did not convert `path`.
    pub(crate) fn fatal(&self, driver: &Driver, direction: Direction, path: &BStr) -> Fatal {
        let message = match direction {
            Direction::Smudge => format!("{path}: smudge filter {} failed", driver.name.as_bstr()),
            Direction::Clean => format!("{path}: clean filter '{}' failed", driver.name.as_bstr()),
        };
        Fatal {
            path: path.to_owned(),
            message,
        }
    }

    fn oneshot<T>(
        &mut self,
        command: &BStr,
        path: &BStr,
        input: &[u8],
        consume: impl FnOnce(&mut dyn Read) -> T,
    ) -> Result<Filtered<T>, ()> {
        let child = match oneshot::spawn(command, path, &self.context, input) {
            Ok(child) => child,
            Err(message) => {
                self.messages.push(message.to_string());
                return Err(());
            }
        };
        let mut watched = Watched {
            inner: child,
            failed: false,
            ended: false,
        };
        let made = consume(&mut watched);
        if !watched.failed && !watched.ended {
            // The consumer stopped early: the process is reaped when dropped; its output is
            // what the consumer made of it.
            return Ok(Filtered::Converted(made));
        }
        self.messages.append(&mut watched.inner.messages);
        if watched.failed {
            return Err(());
        }
        Ok(Filtered::Converted(made))
    }

    /// The running long-running filter `command`, started (with its handshake) if need be.
    fn process(&mut self, command: &BStr) -> Option<&mut process::Process> {
        if let Some(i) = self.running.iter().position(|(c, _)| c == command) {
            return Some(&mut self.running[i].1);
        }
        let reused = {
            let wanted = key(command, &self.context);
            let mut idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
            let found = idle.iter().position(|(k, _)| *k == wanted);
            found.map(|i| idle.swap_remove(i).1)
        };
        if let Some(reused) = reused {
            self.running.push((command.to_owned(), reused));
            return self.running.last_mut().map(|(_, p)| p);
        }
        let cmd: Option<std::process::Command> =
            gix::path::from_bstr(command).ok().and_then(|program| {
                gix::command::prepare(program.into_owned())
                    .command_may_be_shell_script()
                    .with_context(self.context.clone())
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::inherit())
                    .try_into()
                    .ok()
            });
        let spawned = cmd.and_then(|mut cmd| {
            if let Some(dir) = &self.context.worktree_dir {
                cmd.current_dir(dir);
            }
            cmd.spawn().ok()
        });
        let Some(child) = spawned else {
            self.messages
                .push(format!("cannot fork to run subprocess '{command}'"));
            return None;
        };
        match process::Process::handshake(child) {
            Ok(p) => {
                self.running.push((command.to_owned(), p));
                self.running.last_mut().map(|(_, p)| p)
            }
            Err((mut child, message)) => {
                self.messages.push(message.to_string());
                self.messages
                    .push(format!("initialization for subprocess '{command}' failed"));
                let _ = child.kill();
                let _ = child.wait();
                None
            }
        }
    }

    /// git's `handle_filter_error`: `error` leaves the filter running, `abort` drops the
    /// capability for the rest of the run, anything else stops it (restarted on next use) with
    /// git's error line.
    fn broken(&mut self, command: &BStr, status: Option<&BStr>, cap: u8) {
        let Some(i) = self.running.iter().position(|(c, _)| c == command) else {
            return;
        };
        match status {
            Some(s) if s == "error" => {}
            Some(s) if s == "abort" && cap != 0 => self.running[i].1.caps &= !cap,
            _ => {
                self.messages
                    .push(format!("external filter '{command}' failed"));
                let (_, p) = self.running.swap_remove(i);
                p.stop();
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn multi<T>(
        &mut self,
        command: &BStr,
        direction: Direction,
        path: &BStr,
        (meta, blob): (&Meta, Option<gix::ObjectId>),
        input: &[u8],
        can_delay: bool,
        consume: impl FnOnce(&mut dyn Read) -> T,
    ) -> Result<Filtered<T>, ()> {
        let Some(p) = self.process(command) else {
            return Err(());
        };
        if p.caps & direction.cap() == 0 {
            return Err(());
        }
        if path.len() > process::MAX_DATA - "pathname=\n".len() {
            self.messages
                .push("path name too long for external filter".into());
            return Err(());
        }
        let can_delay = can_delay && p.caps & process::DELAY != 0;
        let treeish = meta.treeish.map(|id| id.to_hex().to_string());
        let blob = blob.map(|id| id.to_hex().to_string());
        let mut lines: Vec<(&str, &[u8])> = Vec::with_capacity(4);
        if let Some(r) = &meta.ref_name {
            lines.push(("ref", r.as_slice()));
        }
        if let Some(t) = &treeish {
            lines.push(("treeish", t.as_bytes()));
        }
        if let Some(b) = &blob {
            lines.push(("blob", b.as_bytes()));
        }
        if can_delay {
            lines.push(("can-delay", b"1"));
        }
        let status = match p.request(direction.name(), path, &lines, input, BString::default()) {
            Ok(status) => status,
            Err(_) => {
                self.broken(command, None, direction.cap());
                return Err(());
            }
        };
        if can_delay && status == "delayed" {
            return Ok(Filtered::Delayed);
        }
        if status != "success" {
            self.broken(command, Some(status.as_bstr()), direction.cap());
            return Err(());
        }
        let p = self.process(command).expect("running: it just answered");
        let mut watched = Watched {
            inner: p.content(),
            failed: false,
            ended: false,
        };
        let made = consume(&mut watched);
        let (failed, ended) = (watched.failed, watched.ended);
        let failure = watched.inner.failure();
        if failed {
            let status = failure.ok();
            self.broken(
                command,
                status.as_ref().map(|s| s.as_bstr()),
                direction.cap(),
            );
            return Err(());
        }
        if !ended {
            // The consumer gave up in the middle of the content (it could not write the
            // file): the protocol cannot resume there, so the filter is stopped quietly.
            if let Some(i) = self.running.iter().position(|(c, _)| c == command) {
                let (_, p) = self.running.swap_remove(i);
                p.stop();
            }
        }
        Ok(Filtered::Converted(made))
    }

    /// Ask the long-running filter `command` which delayed paths it can deliver now
    /// (`list_available_blobs`, which blocks until it has some); an empty list means it will
    /// deliver nothing more. `Err` with git's error lines recorded when it failed or is gone.
    pub(crate) fn available(&mut self, command: &BStr) -> Result<Vec<BString>, ()> {
        let Some(i) = self.running.iter().position(|(c, _)| c == command) else {
            self.messages.push(format!(
                "external filter '{command}' is not available anymore although not all paths \
                 have been filtered"
            ));
            return Err(());
        };
        match self.running[i].1.list_available() {
            Ok((paths, status)) if status == "success" => Ok(paths),
            Ok((_, status)) => {
                self.broken(command, Some(status.as_bstr()), 0);
                Err(())
            }
            Err(_) => {
                self.broken(command, None, 0);
                Err(())
            }
        }
    }
}

impl Drop for Runner<'_> {
    /// The long-running filters go on running for the next runner ([`finish_filters`]).
    fn drop(&mut self) {
        let context = &self.context;
        IDLE.lock().unwrap_or_else(PoisonError::into_inner).extend(
            self.running
                .drain(..)
                .map(|(command, p)| (key(command.as_bstr(), context), p)),
        );
    }
}
