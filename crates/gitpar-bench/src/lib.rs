//! Benchmark harness of git-par.
