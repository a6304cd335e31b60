//! Phase timings for profiling (`GIT_PAR_TRACE_PERF=1`): the time since the first call, and
//! since the last, printed to stderr at each named step, as git's `GIT_TRACE_PERFORMANCE`
//! does for its regions. `status`, `refresh` and a full checkout (`clone`, `worktree add`)
//! mark their steps, which shows what is serial around the parallel part. Each line also gives
//! the process's resident memory at that point and the most it has held so far (`VmRSS` and
//! `VmHWM` of `/proc/self/status`), which shows which step a big checkout's peak comes from,
//! and the page faults of the step (a fresh or file-backed page costs microseconds to map).
//! Costs a `OnceLock` read when unset.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<std::sync::Mutex<(Instant, Instant, u64)>>> = OnceLock::new();

/// Mark the end of the step `name`.
pub fn mark(name: &str) {
    let Some(clock) = START.get_or_init(|| {
        std::env::var_os("GIT_PAR_TRACE_PERF").map(|_| {
            let now = Instant::now();
            std::sync::Mutex::new((now, now, faults()))
        })
    }) else {
        return;
    };
    let mut clock = clock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Instant::now();
    let (rss, peak) = memory();
    let faults = faults();
    eprintln!(
        "perf: {:8.3} ms {:8.3} ms  rss {rss:>4} MiB  peak {peak:>4} MiB  faults {:>7}  {name}",
        (now - clock.0).as_secs_f64() * 1e3,
        (now - clock.1).as_secs_f64() * 1e3,
        faults.saturating_sub(clock.2),
    );
    clock.1 = now;
    clock.2 = faults;
}

/// Page faults of the process so far (minor and major, all threads), from `/proc/self/stat`.
fn faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command name in parentheses: state, then fields 4 to 12; minflt is the 10th
    // field of the line and majflt the 12th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    field(10).unwrap_or(0) + field(12).unwrap_or(0)
}

/// The process's resident memory now and at its peak, in MiB (0 where `/proc` says nothing).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
