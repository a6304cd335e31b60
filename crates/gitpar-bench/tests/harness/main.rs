//! Integration tests of the benchmark harness, one binary split by topic: the synthetic repository checked
//! with real git, the runner with scripted and real processes, and the reports and exports of known results.

mod reports;
mod runs;
mod synth;
