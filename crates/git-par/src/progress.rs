//! Progress on stderr the way git shows it: "Updating files:  45% (18000/40000)", only on a
//! terminal, only when the operation takes long enough to be worth it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use gitpar::Progress;

/// Git shows checkout progress only after this delay (`start_delayed_progress`).
const DELAY: Duration = Duration::from_secs(2);
/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// Run `work` while showing `progress` under `title` on stderr, if `enabled` and stderr is a
/// terminal. `ok` tells from the result whether to end the line with git's ", done.".
pub fn show_while<T>(
    progress: &Progress,
    title: &str,
    enabled: bool,
    work: impl FnOnce() -> T,
    ok: impl Fn(&T) -> bool,
) -> T {
    if !enabled || !std::io::stderr().is_terminal() {
        return work();
    }
    let (tx, rx) = mpsc::channel::<bool>();
    thread::scope(|scope| {
        scope.spawn(move || {
            let mut shown = false;
            let mut waited = Duration::ZERO;
            let done_ok = loop {
                match rx.recv_timeout(TICK) {
                    Ok(ok) => break ok,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break false,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                }
                waited += TICK;
                if waited >= DELAY {
                    shown = true;
                    draw(progress, title, "\r");
                }
            };
            if shown {
                draw(progress, title, if done_ok { ", done.\n" } else { "\n" });
            }
        });
        let result = work();
        let _ = tx.send(ok(&result));
        result
    })
}

fn draw(progress: &Progress, title: &str, end: &str) {
    let total = progress.total.load(Ordering::Relaxed);
    let done = progress.done.load(Ordering::Relaxed).min(total);
    let line = match (done * 100).checked_div(total) {
        Some(percent) => format!("{title}: {percent:3}% ({done}/{total}){end}"),
        None => format!("{title}: {done}{end}"),
    };
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}
