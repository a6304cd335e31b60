//! Integration tests of the benchmark harness, one binary split by topic: the synthetic repository checked
//! with real git, the delta chains of its pack against `git verify-pack`, the runner with scripted and real
//! processes, and the reports and exports of known results.

mod pack_shape;
mod reports;
mod runs;
mod synth;
