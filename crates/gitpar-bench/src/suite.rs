//! `git par bench`: the parallel-checkout experiment, git-par against git, on a built-in synthetic
//! repository or on yours.
//!
//! Four steps, one module each after the first:
//! 1. the options become `Settings` (here), contenders parsed by [`contenders`];
//! 2. `source` makes the repository to check out (the cached synthetic one, or a clone of `--repo`);
//! 3. `experiment` turns operations into cases and runs them, interleaved, through the harness;
//! 4. `output` shows progress, prints the report and writes the result files after every case.
//!
//! The statistics, the runner and the exporters are the crate's other modules; this one is the only
//! part of the crate that prints (progress on stderr, the report on stdout). The binary keeps only
//! the subcommand's arguments: it fills [`Options`] and calls [`run`].

pub mod contenders;
mod experiment;
mod loose;
mod operation;
mod output;
mod settle;
mod source;
mod status;
pub mod sweep;

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use anyhow::{bail, Context as _};

use crate::run::{Environment, Plan, Results};
use crate::synth::{self, SynthSpec};
use crate::{pack_shape, report};

use contenders::Spec;
use experiment::{Checkouts, Experiment};
pub use operation::Operation;
use output::{Console, ExportPaths, Exports};
use source::Source;

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
    /// `--big-files`: bench a repository of this many files of random bytes instead.
    pub big_files: Option<usize>,
    /// `--big-size`: the size of each of those files, in bytes.
    pub big_size: Option<u64>,
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
    /// `--threads-sweep`: git-par alone with these writer counts and its automatic choice, on one
    /// operation (an empty list means [`sweep::DEFAULT_COUNTS`]).
    pub threads_sweep: Option<Vec<usize>>,
    /// `--prepare-only`: make the repository (generate or clone it) and print its path, measure
    /// nothing, so that scripts (`scripts/real-checkout`) check out the very repository the bench would.
    pub prepare_only: bool,
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
Each case runs every contender in interleaved rounds (A B C A B C ...) after a warm-up. A worktree add
or a clone lands in a fresh directory, removed after the run; a switch runs in a work tree of main made
once per contender, which git brings back to main after every run. None of this preparation is timed.
The report gives the baseline's median time and, for every other contender, the median paired
difference it saved with its 95% bootstrap interval, and peak memory. Progress on stderr says which
case and run is going and about how long is left.

Checkouts land on /dev/shm (tmpfs) unless --dir says otherwise: the CPU floor of each contender, and
a default run of a few minutes. On a disk, a file create costs far more; measure the filesystem you
care about with --dir (scripts/bench-ext4 and scripts/bench-testfs make a fresh ext4 or a FUSE mount
with latency).

git-par-donor is `git par worktree add --donor DONOR`: it clones (copy-on-write, where the filesystem
can: XFS with reflink, Btrfs) the clean files of a donor work tree of main, which the bench makes once
on the --dir filesystem, untimed, and removes at the end (scripts/bench-xfs makes such a filesystem).
Every worktree add and clone run also reads the blocks used on the --dir filesystem before and after
the timed command, each after a sync (untimed): the disk table gives the median MiB a run allocated
and, with the times, its ratio to git-par's. Only a filesystem nothing else writes to gives exact
figures.

gix is gitoxide's full checkout (`cargo install gitoxide`): gix=PATH, else $GITPAR_BENCH_GIX, else gix
on PATH; absent, it is left out with a note. It is measured on worktree add only.

A cmd: TEMPLATE is split like a shell line (quote it) and may use the placeholders {op} (switch,
worktree-add, clone), {N} (the N of the case), {src} (the source repository), {dst} (the work tree to switch
in, or the directory to create), {rev} (the branch to check out), {tmp} (a scratch path, removed after
the run), {git_par} (this program) and {donor} (the donor work tree of main, made when a template
uses it). Switches run in the work tree, worktree adds in the source repository, clones in the
checkouts directory. Example:
  --contenders 'git,git-par,cmd(gix):gix clone {src} {dst}' --operations clone

The synthetic repository is cached under $GITPAR_BENCH_CACHE, else $XDG_CACHE_HOME/git-par/bench,
else ~/.cache/git-par/bench.";

/// Everything the options decide, checked before any work starts, so that a typo fails at once rather
/// than after minutes of generating and measuring.
struct Settings {
    repo: Option<PathBuf>,
    big: Option<synth::BigSpec>,
    dir: Option<PathBuf>,
    plan: Plan,
    contenders: Vec<Spec>,
    operations: Vec<Operation>,
    spec: SynthSpec,
    cache: PathBuf,
    exports: Exports,
    quiet: bool,
    /// Whether this is a `--threads-sweep`, and where its CSV goes.
    sweep: Option<PathBuf>,
    /// What the user should know about the contenders (one left out, and why).
    notes: Vec<String>,
    /// Only make the repository and print its path.
    prepare_only: bool,
}

impl Settings {
    /// Checks the options in the order a user reads them, each step a function below: the
    /// threads sweep, the contenders, the operations, the synthetic repository, the runs, the
    /// big-files repository, then where the result files go.
    fn from_options(args: Options) -> anyhow::Result<Self> {
        let sweep = Self::sweep(&args)?;
        let (contenders, notes) = Self::contenders(&args, sweep.as_ref())?;
        let mut operations = Vec::new();
        for op in match &sweep {
            Some((_, op)) => vec![*op],
            None if args.operations.is_empty() => Operation::ALL.to_vec(),
            None => args.operations.clone(),
        } {
            if !operations.contains(&op) {
                operations.push(op);
            }
        }
        let spec = Self::synth_spec(&args)?;
        let runs = args.runs.unwrap_or(if args.quick { 3 } else { 12 });
        if runs == 0 {
            bail!("--runs: at least one run is measured");
        }
        let big = Self::big(&args)?;
        let cache = synth::cache_dir();
        let results_dir = args.results_dir.unwrap_or_else(|| cache.join("results"));
        let stem = format!(
            "bench-{}{}",
            output::timestamp(SystemTime::now()),
            if sweep.is_some() { "-sweep" } else { "" }
        );
        let exports = Exports::resolve(
            ExportPaths {
                json: args.export_json,
                csv: args.export_csv,
                markdown: args.export_markdown,
                plot: args.plot,
            },
            &results_dir,
            &stem,
        )?;
        Ok(Self {
            repo: args.repo,
            big,
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
            sweep: sweep.map(|_| results_dir.join(format!("{stem}-writers.csv"))),
            notes,
            prepare_only: args.prepare_only,
        })
    }

    /// `--threads-sweep`: the git-par contenders of its writer counts and the one operation it
    /// measures, or `None` without it. It chooses the contenders itself, so `--contenders` is
    /// refused with it.
    fn sweep(args: &Options) -> anyhow::Result<Option<(Vec<Spec>, Operation)>> {
        let Some(counts) = &args.threads_sweep else {
            return Ok(None);
        };
        if !args.contenders.is_empty() {
            bail!("--threads-sweep chooses the contenders (git-par -j K): drop --contenders");
        }
        let counts = if counts.is_empty() {
            sweep::DEFAULT_COUNTS.to_vec()
        } else {
            counts.clone()
        };
        if counts.contains(&0) {
            bail!("--threads-sweep: a writer count is at least 1");
        }
        let op = sweep::operation(&args.operations).map_err(anyhow::Error::msg)?;
        Ok(Some((sweep::contenders(&counts), op)))
    }

    /// The contenders to measure (the sweep's, `--contenders`, or [`contenders::DEFAULT`]), with
    /// gitoxide found or left out, and the notes that say what was left out and why. At least
    /// one must be left.
    fn contenders(
        args: &Options,
        sweep: Option<&(Vec<Spec>, Operation)>,
    ) -> anyhow::Result<(Vec<Spec>, Vec<String>)> {
        let mut contenders = match sweep {
            Some((specs, _)) => specs.clone(),
            None if args.contenders.is_empty() => {
                contenders::parse(&[contenders::DEFAULT.to_owned()]).context("--contenders")?
            }
            None => contenders::parse(&args.contenders).context("--contenders")?,
        };
        let notes = contenders::resolve_gix(&mut contenders);
        if contenders.is_empty() {
            bail!("--contenders: no contender is left to measure");
        }
        Ok((contenders, notes))
    }

    /// The synthetic repository: `--files` and `--diffs`, else the `--quick` sizes, else the
    /// defaults; checked before minutes go into generating it.
    fn synth_spec(args: &Options) -> anyhow::Result<SynthSpec> {
        let default = SynthSpec::default();
        let spec = SynthSpec {
            files: args
                .files
                .unwrap_or(if args.quick { 2_000 } else { default.files }),
            diffs: if !args.diffs.is_empty() {
                args.diffs.clone()
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
        Ok(spec)
    }

    /// `--big-files` and `--big-size`: the big-files repository to bench instead, if any. It is
    /// made by the bench, so it excludes `--repo`.
    fn big(args: &Options) -> anyhow::Result<Option<synth::BigSpec>> {
        let big = match (args.big_files, args.big_size) {
            (Some(files), size) => Some(synth::BigSpec {
                files,
                size: size.unwrap_or(synth::BigSpec::DEFAULT_SIZE),
            }),
            (None, Some(_)) => {
                bail!("--big-size sizes the files of --big-files, which is not given")
            }
            (None, None) => None,
        };
        if let Some(big) = big {
            if args.repo.is_some() {
                bail!("--big-files makes the repository to bench: drop --repo");
            }
            if big.files == 0 || big.size == 0 {
                bail!("--big-files and --big-size: at least one file of at least one byte");
            }
        }
        Ok(big)
    }
}

/// Runs the benchmark: progress on stderr, the report on stdout, the result files. A contender that
/// fails is not a failure of the bench: it is reported in the warnings, and the others are measured;
/// an `Err` means the bench itself could not run (bad options, no git, a setup git refused).
pub fn run(options: Options, program: &Program) -> anyhow::Result<()> {
    let settings = Settings::from_options(options)?;
    let git_par = program.path.clone();
    let mut console = Console::new(&settings.exports, settings.plan, settings.quiet);

    let source = prepare_source(&settings, &console)?;
    // What the checkouts decode: without it, a synthetic and a real repository's figures do not compare.
    let chains = pack_shape::of_commit(&source.path, &source.main)
        .map(|shape| shape.to_string())
        .unwrap_or_else(|err| format!("not measured: {err:#}"));
    console.say(&format!("pack of main: {chains}"));
    if settings.prepare_only {
        println!("{}", source.path.display());
        return Ok(());
    }
    let checkouts = create_checkouts(&settings, &console)?;

    let experiment = Experiment {
        source: &source,
        checkouts: &checkouts,
        operations: &settings.operations,
        contenders: &settings.contenders,
        plan: settings.plan,
        git_par,
        trace_git_par: settings.sweep.is_some(),
    };
    let mut notes = settings.notes.clone();
    notes.extend(experiment.left_out());
    for note in &notes {
        console.say(&format!("note: {note}"));
    }
    let mut results = Results {
        environment: environment(&experiment, &program.version, chains)?,
        cases: Vec::new(),
    };
    let mut tracing = sweep::Tracing {
        inner: &mut console,
        writers: sweep::Writers::default(),
    };
    let deleted = experiment.run(&mut results, &mut tracing)?;
    let writers = tracing.writers;
    if results.cases.is_empty() {
        // Nothing ran (e.g. only switches on a repository without history): still leave valid files.
        settings.exports.write(&results)?;
    }
    console.say(&format!(
        "bench done in {}",
        output::minutes(console.elapsed().as_secs_f64())
    ));

    let warnings = output::warnings(&results, &checkouts, deleted);
    let mut stdout = String::new();
    for note in source.notes.iter().chain(&notes) {
        stdout.push_str(&format!("note: {note}\n"));
    }
    stdout.push_str(&report::render(&results, &warnings));
    stdout.push_str(&written(&settings, &results, &writers)?);
    print!("{stdout}");
    Ok(())
}

/// Makes (or finds cached) the repository to check out: the big-files one, a clone of `--repo`, or
/// the synthetic one, saying which on the console and how long it took.
fn prepare_source(settings: &Settings, console: &Console<'_>) -> anyhow::Result<Source> {
    let started = Instant::now();
    let source = match (&settings.repo, settings.big) {
        (_, Some(big)) => {
            console.say(&format!(
                "preparing the big-files repository ({} files of {} bytes) under {} ...",
                big.files,
                big.size,
                settings.cache.display()
            ));
            source::big(&settings.cache, big)?
        }
        (Some(repo), None) => {
            console.say(&format!("preparing a clone of {} ...", repo.display()));
            source::real(repo, &settings.cache, &settings.spec.diffs)?
        }
        (None, None) => {
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
    Ok(source)
}

/// Creates the checkouts directory and says where it is and on which filesystem: a tmpfs default
/// measures the CPU floor only, which the reader of the progress must know.
fn create_checkouts(settings: &Settings, console: &Console<'_>) -> anyhow::Result<Checkouts> {
    let checkouts = Checkouts::create(settings.dir.as_deref())?;
    for stale in &checkouts.removed_stale {
        console.say(&format!(
            "removed {}, left by a bench that was killed",
            stale.display()
        ));
    }
    console.say(&format!(
        "checkouts in {} ({}{})",
        checkouts.root.display(),
        checkouts.filesystem,
        if checkouts.is_default && checkouts.filesystem.is_memory() {
            ", the default: the CPU floor of a checkout; --dir PATH measures a disk or a mount"
        } else if checkouts.is_default {
            ", the default"
        } else {
            ""
        }
    ));
    Ok(checkouts)
}

/// The end of the report: a threads sweep's table (whose CSV it writes here), then the list of
/// the result files written.
fn written(
    settings: &Settings,
    results: &Results,
    writers: &sweep::Writers,
) -> anyhow::Result<String> {
    let mut stdout = String::new();
    let mut paths: Vec<PathBuf> = settings.exports.paths().map(Path::to_owned).collect();
    if let Some(csv) = &settings.sweep {
        if let Some(table) = sweep::table(results, writers) {
            stdout.push_str(&format!("\n{}\n{}", table.title, table.to_text()));
        }
        crate::export::write_atomically(csv, sweep::csv(results, writers).as_bytes())?;
        paths.push(csv.clone());
    }
    stdout.push_str("\nresults written to:\n");
    for path in paths {
        stdout.push_str(&format!("  {}\n", path.display()));
    }
    Ok(stdout)
}

/// What the results are meaningless without: the filesystem, the repository and the delta chains of its
/// pack, the programs, the machine.
fn environment(
    experiment: &Experiment<'_>,
    version: &str,
    chains: String,
) -> anyhow::Result<Environment> {
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
    fact("pack of main", chains);
    if let Ok(kind) = crate::filesystem::kind(&experiment.source.path) {
        fact(
            "repository filesystem",
            format!("{kind} ({})", experiment.source.path.display()),
        );
    }
    fact(
        "git",
        crate::git::line(&experiment.source.path, &["--version"])?
            .trim_start_matches("git version ")
            .to_owned(),
    );
    fact(
        "git-par",
        format!("{version} ({})", experiment.git_par.display()),
    );
    for spec in experiment.contenders {
        if let Spec::Gix(Some(program)) = spec {
            let version = std::process::Command::new(program)
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or_default();
            fact("gix", format!("{version} ({})", program.display()));
        }
    }
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
