//! `git par bench`: the parallel-checkout experiment (see the gitpar-bench crate).

use clap::Args;

/// Options of `git par bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {}

/// Run the benchmark; returns git's exit code on failure.
pub fn run(_args: BenchArgs) -> Result<(), u8> {
    eprintln!("fatal: git par bench is not implemented yet");
    Err(128)
}
