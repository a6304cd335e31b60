//! `git par bench`: the parallel-checkout experiment, git-par against git, on a built-in synthetic
//! repository or on yours.
//!
//! Four steps, one module each after the first:
//! 1. the options become [`Settings`] (here), contenders parsed by [`contenders`];
//! 2. [`source`] makes the repository to check out (the cached synthetic one, or a clone of `--repo`);
//! 3. [`experiment`] turns operations into cases and runs them, interleaved, through the harness;
//! 4. [`output`] shows progress, prints the report and writes the result files after every case.
//!
//! The statistics, the runner and the exporters are the crate's other modules; this one is the only
//! part of the crate that prints (progress on stderr, the report on stdout). The binary keeps only
//! the subcommand's arguments: it fills [`Options`] and calls [`run`].

pub mod contenders;
mod experiment;
mod git;
mod output;
mod source;
mod status;

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use anyhow::{bail, Context as _};

use crate::report;
use crate::run::{Environment, Plan, Results};
use crate::synth::{self, SynthSpec};

use contenders::Spec;
pub use experiment::Operation;
use experiment::{Checkouts, Experiment};
use output::{Console, ExportPaths, Exports};

/// What `git par bench` was asked, as plain values: the binary's command line (clap) fills it, and
/// everything from here on is this library's, so that the binary keeps only its argument parser.
/// `None` and empty lists mean "the default", which [`run`] decides (and documents in `--help`).
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// `--repo`: bench this repository instead of the synthetic one.
    pub repo: Option<PathBuf>,
    /// `--dir`: where the checkouts land.
    pub dir: Option<PathBuf>,
    /// `--runs`: measured runs per contender and case.
    pub runs: Option<usize>,
    /// `--warmup`: warm-up runs per contender and case, not measured.
    pub warmup: usize,
    /// `--contenders`: each value a comma-separated list (see [`contenders::parse`]).
    pub contenders: Vec<String>,
    /// `--operations`.
    pub operations: Vec<Operation>,
    /// `--quick`: 2,000 files, small switches, 3 runs.
    pub quick: bool,
    /// `--files`: files of the synthetic repository.
    pub files: Option<usize>,
    /// `--diffs`: sizes of the switches.
    pub diffs: Vec<usize>,
    /// `--export-json`.
    pub export_json: Option<PathBuf>,
    /// `--export-csv`.
    pub export_csv: Option<PathBuf>,
    /// `--export-markdown`.
    pub export_markdown: Option<PathBuf>,
    /// `--plot`.
    pub plot: Option<PathBuf>,
    /// `--results-dir`.
    pub results_dir: Option<PathBuf>,
    /// `--quiet`: no progress.
    pub quiet: bool,
}

/// The program under test, as the binary knows it: its path (the `{git_par}` of the git-par
/// contenders) and its version (for the report).
#[derive(Debug, Clone)]
pub struct Program {
    /// The executable.
    pub path: PathBuf,
    /// Its version.
    pub version: String,
}

/// The text `git par bench --help` ends with: how a series runs, the `cmd:` placeholders, the cache.
pub const AFTER_HELP: &str = "\
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
    fn from_options(args: Options) -> anyhow::Result<Self> {
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
        let runs = args.runs.unwrap_or(if args.quick { 3 } else { 12 });
        if runs == 0 {
            bail!("--runs: at least one run is measured");
        }
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

/// Runs the benchmark: progress on stderr, the report on stdout, the result files. A contender that
/// fails is not a failure of the bench: it is reported in the warnings, and the others are measured;
/// an `Err` means the bench itself could not run (bad options, no git, a setup git refused).
pub fn run(options: Options, program: &Program) -> anyhow::Result<()> {
    let settings = Settings::from_options(options)?;
    let git_par = program.path.clone();
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
        environment: environment(&experiment, &program.version)?,
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
fn environment(experiment: &Experiment<'_>, version: &str) -> anyhow::Result<Environment> {
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
    if let Ok(kind) = crate::filesystem::kind(&experiment.source.path) {
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
        format!("{version} ({})", experiment.git_par.display()),
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
