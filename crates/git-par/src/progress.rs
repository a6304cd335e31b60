//! Progress on stderr the way git shows it: "Updating files:  45% (18000/40000)", then, when a
//! long-running filter delayed entries, "Filtering content: 50% (1/2)" while they are collected
//! (git's `finish_delayed_checkout`), only when the operation takes long enough to be worth it
//! (`GIT_PROGRESS_DELAY`, 2 seconds by default). The engine's `error:` lines that did not fail
//! the operation (a non-required filter that failed) are printed when it returns.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use gitpar::Progress;

use crate::checkout_args::CheckoutArgs;

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// Whether to show progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// On a terminal only (git's default).
    Auto,
    /// Not at all (`--quiet`, `--no-progress`).
    Never,
    /// Even when stderr is no terminal (`--progress`).
    Always,
}

/// git's rule for `checkout`/`switch`/`restore`: `--[no-]progress` decides, else `--quiet`
/// turns it off, else it shows on a terminal.
pub(crate) fn mode(args: &CheckoutArgs) -> Mode {
    match args.progress_flag() {
        Some(true) => Mode::Always,
        Some(false) => Mode::Never,
        None if args.quiet => Mode::Never,
        None => Mode::Auto,
    }
}

/// git's `GIT_PROGRESS_DELAY`: seconds before a progress line first shows.
fn delay() -> Duration {
    let secs = std::env::var("GIT_PROGRESS_DELAY")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(2);
    Duration::from_secs(secs)
}

/// Run `work` while showing `progress` under `title` on stderr as `mode` says. `ok` tells from
/// the result whether to end the line with git's ", done.". The engine's error lines for what
/// went wrong without failing are printed once `work` returns.
pub fn show_while<T>(
    progress: &Progress,
    title: &str,
    mode: Mode,
    work: impl FnOnce() -> T,
    ok: impl Fn(&T) -> bool,
) -> T {
    let show = match mode {
        Mode::Never => false,
        Mode::Auto => std::io::stderr().is_terminal(),
        Mode::Always => true,
    };
    let result = if show {
        with_progress(progress, title, work, ok)
    } else {
        work()
    };
    let messages = std::mem::take(
        &mut *progress
            .messages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for message in messages {
        eprintln!("error: {message}");
    }
    result
}

/// The phases git shows, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Updating,
    Filtering,
}

fn with_progress<T>(
    progress: &Progress,
    title: &str,
    work: impl FnOnce() -> T,
    ok: impl Fn(&T) -> bool,
) -> T {
    let delay = delay();
    let (tx, rx) = mpsc::channel::<bool>();
    thread::scope(|scope| {
        scope.spawn(move || {
            // Each phase has its own delay, as git starts a progress for each.
            let mut phase = Phase::Updating;
            let mut shown = false;
            let mut waited = Duration::ZERO;
            let done_ok = loop {
                match rx.recv_timeout(TICK) {
                    Ok(ok) => break ok,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break false,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                }
                waited += TICK;
                if phase == Phase::Updating && updated_all(progress) && pending(progress) {
                    if shown {
                        draw(progress, title, phase, ", done.\n");
                    }
                    phase = Phase::Filtering;
                    shown = false;
                    waited = Duration::ZERO;
                }
                if waited >= delay {
                    shown = true;
                    draw(progress, title, phase, "\r");
                }
            };
            let end = if done_ok { ", done.\n" } else { "\n" };
            // With no delay, git shows every phase that had something to count.
            let counted = progress.total.load(Ordering::Relaxed) > 0;
            if phase == Phase::Updating && (shown || delay.is_zero() && counted) {
                draw(progress, title, Phase::Updating, end);
            }
            let delayed = progress.delayed.load(Ordering::Relaxed) > 0;
            if delayed && (phase == Phase::Filtering && shown || delay.is_zero()) {
                draw(progress, title, Phase::Filtering, end);
            }
        });
        let result = work();
        let _ = tx.send(ok(&result));
        result
    })
}

/// Every entry is written or delayed.
fn updated_all(progress: &Progress) -> bool {
    progress.done.load(Ordering::Relaxed) >= progress.total.load(Ordering::Relaxed)
}

/// Some delayed entry is not written yet.
fn pending(progress: &Progress) -> bool {
    progress.filtered.load(Ordering::Relaxed) < progress.delayed.load(Ordering::Relaxed)
}

fn draw(progress: &Progress, title: &str, phase: Phase, end: &str) {
    let (title, total, done) = match phase {
        Phase::Updating => (
            title,
            progress.total.load(Ordering::Relaxed),
            progress.done.load(Ordering::Relaxed),
        ),
        Phase::Filtering => (
            "Filtering content",
            progress.delayed.load(Ordering::Relaxed),
            progress.filtered.load(Ordering::Relaxed),
        ),
    };
    let done = done.min(total);
    let line = match (done * 100).checked_div(total) {
        Some(percent) => format!("{title}: {percent:3}% ({done}/{total}){end}"),
        None => format!("{title}: {done}{end}"),
    };
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}
