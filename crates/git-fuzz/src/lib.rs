//! Random differential testing of git-par against git.
//!
//! A seed gives a scenario ([`generate`]): a repository built by a script of plain git commands
//! (random trees and commits that mutate them, attributes, ignore rules, sometimes a submodule
//! or sparse patterns), a work tree changed the ways people change them (edits, deletions,
//! untracked and ignored files, staged changes, intent-to-add, a file replaced by a directory
//! or a symlink, unmerged entries, skip-worktree), and one command git-par owns. [`run`] builds
//! the scenario twice, runs the command with git in one copy and with git-par in the other, and
//! compares what a user (or the next git command) can see and what stays hidden
//! ([`observe`]): exit code, output, `HEAD`, refs, index, work tree, `git status`, dangling
//! objects, reflog, `ORIG_HEAD`, the cache-tree. A failing scenario is kept as its script
//! ([`Scenario::render`]), which rebuilds it with plain git, and its report shows both results
//! side by side.
//!
//! Tests and `scripts/fuzz-git` drive it: a bounded run of fixed seeds in `cargo test`, any
//! number of seeds from the script, and the kept scenarios of `tests/fuzz/` replayed as
//! regular tests.

pub mod compare;
pub mod generate;
pub mod model;
pub mod observe;
pub mod process;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod shell;

pub use run::{Report, Setup, Verdict};
pub use scenario::Scenario;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The scenario of `seed`, named after it.
pub fn seeded(seed: u64) -> Scenario {
    seeded_as(seed, generate::Flavour::Linux)
}

/// The scenario of `seed` in `flavour` (Linux's, or Windows' for git-par.exe), named after it.
pub fn seeded_as(seed: u64, flavour: generate::Flavour) -> Scenario {
    let mut scenario = generate::scenario_of(seed, flavour);
    scenario.name = format!("seed {seed}");
    scenario
}

/// Runs the scenario of `seed`, and when it fails, runs it once more to say whether it
/// reproduces (the second report, if any, comes back with the first).
pub fn run_seed(setup: &Setup, seed: u64) -> (Report, Option<Report>) {
    let scenario = seeded_as(seed, setup.flavour);
    let report = run::run(setup, &scenario, &format!("seed-{seed}"));
    if !report.failed() {
        return (report, None);
    }
    let again = run::run(setup, &scenario, &format!("seed-{seed}-again"));
    (report, Some(again))
}

/// Runs `count` seeds from `first` on `jobs` threads, calling `each` with every result as it
/// comes (in no set order).
pub fn run_seeds(
    setup: &Setup,
    first: u64,
    count: u64,
    jobs: usize,
    each: &(dyn Fn(u64, &Report, Option<&Report>) + Sync),
) {
    let next = AtomicU64::new(0);
    let each = Mutex::new(each);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let seed = first + i;
                let (report, again) = run_seed(setup, seed);
                let each = each.lock().unwrap_or_else(|e| e.into_inner());
                each(seed, &report, again.as_ref());
            });
        }
    });
}
