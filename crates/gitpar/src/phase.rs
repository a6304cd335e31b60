//! Phase timings for profiling (`GIT_PAR_TRACE_PERF=1`): the time since the first call, and
//! since the last, printed to stderr at each named step, as git's `GIT_TRACE_PERFORMANCE`
//! does for its regions. `status`, `refresh` and a full checkout (`clone`, `worktree add`)
//! mark their steps, which shows what is serial around the parallel part. Costs a
//! `OnceLock` read when unset.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<std::sync::Mutex<(Instant, Instant)>>> = OnceLock::new();

/// Mark the end of the step `name`.
pub fn mark(name: &str) {
    let Some(clock) = START.get_or_init(|| {
        std::env::var_os("GIT_PAR_TRACE_PERF").map(|_| {
            let now = Instant::now();
            std::sync::Mutex::new((now, now))
        })
    }) else {
        return;
    };
    let mut clock = clock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Instant::now();
    eprintln!(
        "perf: {:8.3} ms {:8.3} ms  {name}",
        (now - clock.0).as_secs_f64() * 1e3,
        (now - clock.1).as_secs_f64() * 1e3
    );
    clock.1 = now;
}
