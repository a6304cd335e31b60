//! Benchmark harness of git-par.
//!
//! It measures checkouts the way `/work/shared/BENCHMARKS.md` asks: one command against another in the same
//! series, on the same files, in interleaved rounds (A B C A B C ...), and reports the time saved as the
//! median paired difference with its 95% bootstrap interval, never an absolute time against a number from
//! another day. The crate knows nothing of the engine: every contender, git-par included, is an external
//! command, so that git-par is measured exactly as a user runs it.
//!
//! The pipeline has four steps, one module each:
//! 1. [`synth`] makes the repository to check out (deterministic, cached);
//! 2. [`run`] times the contenders in interleaved rounds, with untimed per-run setup and cleanup;
//! 3. [`stats`] turns the raw times into medians, paired differences, intervals and outliers;
//! 4. [`report`] and [`export`] present the results (text table, warnings; JSON, CSV, Markdown, SVG).
//!
//! [`filesystem`] names the filesystem under a benchmark, because the same checkout costs 15 µs a file on
//! tmpfs and hundreds on an aged ext4; [`pack_shape`] says how deep the checked-out blobs sit in their
//! pack's delta chains, because a checkout of whole objects costs far less than one of deltas. These
//! modules never print.
//!
//! [`suite`] is `git par bench` itself, built on them: the synthetic or the user's repository, the
//! switch, worktree-add, clone, status and refresh experiments, the contenders (git, git's workers,
//! git-par, gitoxide, any command), the threads sweep, progress on stderr and the report on stdout. The
//! `git-par` binary only parses the subcommand's arguments into [`suite::Options`].
//!
//! A whole series in miniature, with scripted times instead of real processes:
//!
//! ```
//! use gitpar_bench::report;
//! use gitpar_bench::run::{Case, Contender, FnFixture, MockExecutor, Plan, Prepared, Results, Run, Runner, Vars};
//!
//! // One warm-up run, then three rounds each, in milliseconds.
//! let mut executor = MockExecutor::new();
//! executor.times_ms("git (sequential)", [160, 150, 145, 155]);
//! executor.times_ms("git-par", [110, 100, 105, 100]);
//! let contenders = [
//!     Contender::new("git (sequential)", ["git", "switch", "--quiet", "{branch}"]),
//!     Contender::new("git-par", ["git", "par", "switch", "{branch}"]),
//! ];
//! // Each run would get a fresh clone here, made and removed outside the timed part.
//! let mut fixture = FnFixture::new(
//!     |run: &Run<'_>| {
//!         let branch = format!("diff-{}", run.case.n);
//!         Ok(Prepared { dir: "/".into(), vars: Vars::new().set("branch", branch) })
//!     },
//!     |_: &Run<'_>, _| Ok(()),
//! );
//! let plan = Plan { runs: 3, ..Plan::default() };
//! let case = Runner::new(&mut executor, plan).run(&Case::new("switch", 250), &contenders, &mut fixture)?;
//!
//! // Saved per round: 150 - 100, 145 - 105, 155 - 100 = 50, 40, 55 ms; the median is 50 ms.
//! assert!((case.contenders[1].saved.unwrap().median - 0.050).abs() < 1e-12);
//! let results = Results { cases: vec![case], ..Results::default() };
//! let table = report::time_table(&results, "switch").to_text();
//! assert!(table.starts_with("N files   git (sequential)   saved by git-par\n250       150 ms             50 ms ["));
//! # Ok::<(), gitpar_bench::run::Error>(())
//! ```

#![warn(missing_docs)]

pub mod export;
pub mod filesystem;
mod git;
pub mod pack_shape;
mod platform;
pub mod report;
mod rng;
pub mod run;
pub mod stats;
pub mod suite;
pub mod synth;
