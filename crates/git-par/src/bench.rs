//! `git par bench`: the options of the subcommand. The benchmark itself (the synthetic repository, the
//! experiment, the report) is the `gitpar-bench` crate's [`gitpar_bench::suite`]; the binary only parses
//! its command line.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use gitpar_bench::suite::{self, Operation, Options, Program};

/// Options of `git par bench`.
#[derive(Args, Debug)]
#[command(after_help = gitpar_bench::suite::AFTER_HELP)]
pub struct BenchArgs {
    /// Bench this repository instead of the synthetic one: switches go from its HEAD back to commits
    /// of its first-parent history whose diffs have about the sizes of --diffs. It is only read: the
    /// bench works in a private clone under the cache directory.
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// Where the checkouts land: a fresh loop mount, a network mount, a testfs mount... [default: /dev/shm
    /// when it is a tmpfs, else the temporary directory]. Its filesystem is printed with the results.
    #[arg(long, value_name = "PATH")]
    dir: Option<PathBuf>,
    /// Measured runs per contender and case [default: 12, or 3 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    runs: Option<u64>,
    /// Warm-up runs per contender and case, not measured.
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: usize,
    /// Contenders, comma-separated, the baseline first: git, git-workers=K, git-par, git-par-j=K,
    /// git-par-donor (worktree add from a donor work tree), gix, gix=PATH, cmd:TEMPLATE or
    /// cmd(NAME):TEMPLATE (see below). May be repeated [default: git,git-workers=4,git-par,gix].
    #[arg(long, value_name = "LIST", action = clap::ArgAction::Append)]
    contenders: Vec<String>,
    /// Operations to measure, comma-separated [default: switch,worktree-add,clone].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_operation)]
    operations: Vec<Operation>,
    /// A fast look: 2,000 files, switches of 25 and 50 files, 3 runs (unless given otherwise).
    #[arg(long)]
    quick: bool,
    /// Files of the synthetic repository [default: 40000, or 2000 with --quick].
    #[arg(long, value_name = "N", conflicts_with = "repo")]
    files: Option<usize>,
    /// Bench a repository of N files of random bytes (one commit, generated and cached like the
    /// synthetic one) instead: the shape where a checkout from a donor saves the most.
    #[arg(long, value_name = "N", conflicts_with_all = ["repo", "files"])]
    big_files: Option<usize>,
    /// Size of each file of --big-files, in bytes, or with a suffix K, M or G (KiB, MiB, GiB)
    /// [default: 8M].
    #[arg(long, value_name = "BYTES", requires = "big_files", value_parser = parse_size)]
    big_size: Option<u64>,
    /// Sizes of the switches, in files changed [default: 250,500,1000,2000, or 25,50 with --quick].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    diffs: Vec<usize>,
    /// Write the results as JSON here [default: in the results directory].
    #[arg(long, value_name = "PATH")]
    export_json: Option<PathBuf>,
    /// Write one CSV row per operation, N and contender here [default: in the results directory].
    #[arg(long, value_name = "PATH")]
    export_csv: Option<PathBuf>,
    /// Write the tables as Markdown here [default: in the results directory].
    #[arg(long, value_name = "PATH")]
    export_markdown: Option<PathBuf>,
    /// Draw time against N here; the format comes from the extension (.svg) [default: in the results
    /// directory].
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// Directory of the result files not given a path [default: results/ in the cache directory].
    #[arg(long, value_name = "PATH")]
    results_dir: Option<PathBuf>,
    /// Show no progress.
    #[arg(short, long)]
    quiet: bool,
    /// Instead of the contenders, git-par alone with each of these writer counts (-j K) and with its
    /// automatic choice, on one full checkout (worktree-add, or clone with --operations clone): the
    /// table shows files per second against the count and which count the automatic choice used
    /// [default list: 1,2,4,8,16,32,64].
    #[arg(long, value_name = "LIST", num_args = 0..=1, require_equals = true, value_delimiter = ',')]
    threads_sweep: Option<Vec<usize>>,
    /// Only make the repository the bench would check out (generate the synthetic one, or clone --repo
    /// without the paths whose blobs it lacks) and print its path on stdout; measure nothing.
    #[arg(long)]
    prepare_only: bool,
}

fn parse_operation(s: &str) -> Result<Operation, String> {
    s.parse()
}

/// Parses a size in bytes: a number, or a number followed by K, M or G (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("`{s}` is not a size in bytes (e.g. 8388608 or 8M)"))
}

/// Runs the benchmark; returns git's exit code on failure. A contender that fails is not a failure of
/// the bench: it is reported in the warnings, and the others are measured.
pub fn run(args: BenchArgs) -> Result<(), u8> {
    let program = std::env::current_exe()
        .context("could not find this program's path")
        .map(|path| Program {
            path,
            version: env!("CARGO_PKG_VERSION").to_owned(),
        });
    let options = Options {
        repo: args.repo,
        dir: args.dir,
        runs: args.runs.map(|r| usize::try_from(r).unwrap_or(usize::MAX)),
        warmup: args.warmup,
        contenders: args.contenders,
        operations: args.operations,
        quick: args.quick,
        files: args.files,
        diffs: args.diffs,
        big_files: args.big_files,
        big_size: args.big_size,
        export_json: args.export_json,
        export_csv: args.export_csv,
        export_markdown: args.export_markdown,
        plot: args.plot,
        results_dir: args.results_dir,
        quiet: args.quiet,
        threads_sweep: args.threads_sweep,
        prepare_only: args.prepare_only,
    };
    match program.and_then(|program| suite::run(options, &program)) {
        Ok(()) => Ok(()),
        Err(err) => {
            eprintln!("fatal: {err:#}");
            Err(crate::exit::FATAL)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("8M"), Ok(8 << 20));
        assert_eq!(parse_size("100003"), Ok(100_003));
        assert_eq!(parse_size("2k"), Ok(2048));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("8 MiB").is_err());
    }
}
