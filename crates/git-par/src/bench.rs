//! `git par bench`: the parallel-checkout experiment, git-par against git, on a built-in synthetic
//! repository or on yours.
//!
//! Four steps, one module each after the first:
//! 1. the options become [`Settings`] (here), contenders parsed by [`contenders`];
//! 2. [`source`] makes the repository to check out (the cached synthetic one, or a clone of `--repo`);
//! 3. [`experiment`] turns operations into cases and runs them, interleaved, through the harness;
//! 4. [`output`] shows progress, prints the report and writes the result files after every case.
//!
//! The statistics, the runner and the exporters live in the `gitpar-bench` crate.

mod contenders;
mod experiment;
mod git;
mod output;
mod source;
mod status;

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use anyhow::{bail, Context as _};
use clap::Args;
use gitpar_bench::report;
use gitpar_bench::run::{Environment, Plan, Results};
use gitpar_bench::synth::{self, SynthSpec};

use contenders::Spec;
use experiment::{Checkouts, Experiment, Operation};
use output::{Console, ExportPaths, Exports};

/// Options of `git par bench`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct BenchArgs {
    /// Bench this repository instead of the synthetic one: switches go from its HEAD back to commits
    /// of its first-parent history whose diffs have about the sizes of --diffs. It is only read: the
    /// bench works in a private clone under the cache directory.
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// Where the checkouts land: tmpfs, a fresh loop mount, a network mount... (default: the temporary
    /// directory). Its filesystem is printed with the results.
    #[arg(long, value_name = "PATH")]
    dir: Option<PathBuf>,
    /// Measured runs per contender and case [default: 12, or 3 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    runs: Option<u64>,
    /// Warm-up runs per contender and case, not measured.
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: usize,
    /// Contenders, comma-separated, the baseline first: git, git-workers=K, git-par, git-par-j=K,
    /// cmd:TEMPLATE or cmd(NAME):TEMPLATE (see below). May be repeated.
    #[arg(long, value_name = "LIST", action = clap::ArgAction::Append)]
    contenders: Vec<String>,
    /// Operations to measure, comma-separated [default: switch,worktree-add,clone].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    operations: Vec<Operation>,
    /// A fast look: 2,000 files, switches of 25 and 50 files, 3 runs (unless given otherwise).
    #[arg(long)]
    quick: bool,
    /// Files of the synthetic repository [default: 40000, or 2000 with --quick].
    #[arg(long, value_name = "N", conflicts_with = "repo")]
    files: Option<usize>,
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
}

const AFTER_HELP: &str = "\
Each case runs every contender in interleaved rounds (A B C A B C ...) after a warm-up, each run in a
fresh directory prepared and removed outside the timed part. The report gives the baseline's median
time and, for every other contender, the median paired difference it saved with its 95% bootstrap
interval, and peak memory.

A cmd: TEMPLATE is split like a shell line (quote it) and may use {op} (switch, worktree-add, clone),
{n}, {src} (the source repository), {dst} (the work tree to switch in, or the directory to create),
{rev} (the branch to check out) and {git_par} (this program). Switches run in the work tree, worktree
adds in the source repository, clones in the checkouts directory. Example:
  --contenders 'git,git-par,cmd(gix):gix clone {src} {dst}' --operations clone

The synthetic repository is cached under $GITPAR_BENCH_CACHE, else $XDG_CACHE_HOME/git-par/bench,
else ~/.cache/git-par/bench.";

/// Everything the options decide, checked before any work starts, so that a typo fails at once rather
/// than after minutes of generating and measuring.
struct Settings {
    repo: Option<PathBuf>,
    dir: Option<PathBuf>,
    plan: Plan,
    contenders: Vec<Spec>,
    operations: Vec<Operation>,
    spec: SynthSpec,
    cache: PathBuf,
    exports: Exports,
    quiet: bool,
}

impl Settings {
    fn from_args(args: BenchArgs) -> anyhow::Result<Self> {
        let contenders = if args.contenders.is_empty() {
            contenders::parse(&[contenders::DEFAULT.to_owned()])
        } else {
            contenders::parse(&args.contenders)
        }
        .context("--contenders")?;
        let mut operations = Vec::new();
        for op in if args.operations.is_empty() {
            Operation::ALL.to_vec()
        } else {
            args.operations
        } {
            if !operations.contains(&op) {
                operations.push(op);
            }
        }
        let default = SynthSpec::default();
        let spec = SynthSpec {
            files: args
                .files
                .unwrap_or(if args.quick { 2_000 } else { default.files }),
            diffs: if !args.diffs.is_empty() {
                args.diffs
            } else if args.quick {
                vec![25, 50]
            } else {
                default.diffs
            },
            ..default
        };
        if spec.diffs.contains(&0) {
            bail!("--diffs: a switch changes at least one file");
        }
        spec.validate()?;
        let runs = args.runs.map_or(if args.quick { 3 } else { 12 }, |r| {
            usize::try_from(r).unwrap_or(usize::MAX)
        });
        let cache = synth::cache_dir();
        let results_dir = args.results_dir.unwrap_or_else(|| cache.join("results"));
        let exports = Exports::resolve(
            ExportPaths {
                json: args.export_json,
                csv: args.export_csv,
                markdown: args.export_markdown,
                plot: args.plot,
            },
            &results_dir,
            &format!("bench-{}", output::timestamp(SystemTime::now())),
        )?;
        Ok(Self {
            repo: args.repo,
            dir: args.dir,
            plan: Plan {
                runs,
                warmup: args.warmup,
                ..Plan::default()
            },
            contenders,
            operations,
            spec,
            cache,
            exports,
            quiet: args.quiet,
        })
    }
}

/// Runs the benchmark; returns git's exit code on failure. A contender that fails is not a failure of
/// the bench: it is reported in the warnings, and the others are measured.
pub fn run(args: BenchArgs) -> Result<(), u8> {
    match bench(args) {
        Ok(()) => Ok(()),
        Err(err) => {
            eprintln!("fatal: {err:#}");
            Err(128)
        }
    }
}

fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let settings = Settings::from_args(args)?;
    let git_par = std::env::current_exe().context("could not find this program's path")?;
    let mut console = Console::new(&settings.exports, settings.plan, settings.quiet);

    let started = Instant::now();
    let source = match &settings.repo {
        Some(repo) => {
            console.say(&format!("preparing a clone of {} ...", repo.display()));
            source::real(repo, &settings.cache, &settings.spec.diffs)?
        }
        None => {
            console.say(&format!(
                "preparing the synthetic repository ({} files) under {} ...",
                settings.spec.files,
                settings.cache.display()
            ));
            source::synthetic(&settings.cache, &settings.spec)?
        }
    };
    console.say(&format!(
        "repository ready in {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        source.path.display()
    ));
    let checkouts = Checkouts::create(settings.dir.as_deref())?;
    console.say(&format!(
        "checkouts in {} ({})",
        checkouts.root.display(),
        checkouts.filesystem
    ));

    let experiment = Experiment {
        source: &source,
        checkouts: &checkouts,
        operations: &settings.operations,
        contenders: &settings.contenders,
        plan: settings.plan,
        git_par,
    };
    let mut results = Results {
        environment: environment(&experiment)?,
        cases: Vec::new(),
    };
    let deleted = experiment.run(&mut results, &mut console)?;
    if results.cases.is_empty() {
        // Nothing ran (e.g. only switches on a repository without history): still leave valid files.
        settings.exports.write(&results)?;
    }

    let warnings = output::warnings(&results, &checkouts, deleted);
    let mut stdout = String::new();
    for note in &source.notes {
        stdout.push_str(&format!("note: {note}\n"));
    }
    stdout.push_str(&report::render(&results, &warnings));
    stdout.push_str("\nresults written to:\n");
    for path in settings.exports.paths() {
        stdout.push_str(&format!("  {}\n", path.display()));
    }
    print!("{stdout}");
    Ok(())
}

/// What the results are meaningless without: the filesystem, the repository, the programs, the machine.
fn environment(experiment: &Experiment<'_>) -> anyhow::Result<Environment> {
    let checkouts = experiment.checkouts;
    let mut env = Environment {
        filesystem: Some(format!(
            "{} (checkouts in {})",
            checkouts.filesystem,
            checkouts.root.display()
        )),
        ..Environment::default()
    };
    let mut fact = |k: &str, v: String| {
        env.facts.insert(k.to_owned(), v);
    };
    fact("repository", experiment.source.description.clone());
    if let Ok(kind) = gitpar_bench::filesystem::kind(&experiment.source.path) {
        fact(
            "repository filesystem",
            format!("{kind} ({})", experiment.source.path.display()),
        );
    }
    fact(
        "git",
        git::line(&experiment.source.path, &["--version"])?
            .trim_start_matches("git version ")
            .to_owned(),
    );
    fact(
        "git-par",
        format!(
            "{} ({})",
            env!("CARGO_PKG_VERSION"),
            experiment.git_par.display()
        ),
    );
    fact(
        "cpus",
        std::thread::available_parallelism().map_or_else(|_| "?".to_owned(), |n| n.to_string()),
    );
    if let Ok(kernel) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        fact("kernel", kernel.trim().to_owned());
    }
    fact("date (UTC)", output::timestamp(SystemTime::now()));
    Ok(env)
}
