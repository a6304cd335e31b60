//! `git-fuzz`: random scenarios, each run by git and by git-par and compared (see the library's
//! documentation). `scripts/fuzz-git N [SEED]` runs it on a release build.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Parser, Subcommand};
use git_fuzz::generate::Flavour;
use git_fuzz::{Report, Scenario, Setup, Verdict};

#[derive(Parser)]
#[command(about = "Random differential testing of git-par against git")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct Where {
    /// The git-par binary under test (default: the one beside git-fuzz, else `git-par` on PATH).
    #[arg(long)]
    git_par: Option<PathBuf>,
    /// Where scenarios run (default: a new directory under /dev/shm, else under the temporary
    /// directory); failing ones are kept there.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep every scenario's directory, not only the failing ones'.
    #[arg(long)]
    keep: bool,
    /// git-par is a Windows program (git-par.exe), run by this Wine loader (e.g.
    /// /usr/lib/wine/wine64) with Wine's and the git bridge's variables passed on: run under
    /// `scripts/windows bridge`, which sets them.
    #[arg(long, value_name = "LOADER")]
    wine: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run COUNT scenarios, seeds FIRST, FIRST+1...; report each failure and a summary.
    Run {
        count: u64,
        #[arg(default_value_t = 1)]
        first: u64,
        /// Scenarios run at once (default: one per CPU).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// Windows-flavour scenarios (for git-par.exe): repositories configured as Git for
        /// Windows' `git init` does, no symlinks, no executable files, no names Windows cannot
        /// hold.
        #[arg(long)]
        windows: bool,
        #[command(flatten)]
        at: Where,
    },
    /// Print the scenario of SEED as the script that builds it.
    Show {
        seed: u64,
        /// The Windows flavour's scenario (as `run --windows` makes it).
        #[arg(long)]
        windows: bool,
    },
    /// Run scenario files (as `show` prints them, or kept in tests/fuzz/) and compare.
    Replay {
        files: Vec<PathBuf>,
        #[command(flatten)]
        at: Where,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Show { seed, windows } => {
            print!("{}", git_fuzz::seeded_as(seed, flavour(windows)).render());
            ExitCode::SUCCESS
        }
        Command::Run {
            count,
            first,
            jobs,
            windows,
            at,
        } => match setup(&at) {
            Ok(mut setup) => {
                setup.flavour = flavour(windows);
                run(&setup, first, count, jobs)
            }
            Err(e) => fatal(&e),
        },
        Command::Replay { files, at } => match setup(&at) {
            Ok(setup) => replay(&setup, &files),
            Err(e) => fatal(&e),
        },
    }
}

fn flavour(windows: bool) -> Flavour {
    if windows {
        Flavour::Windows
    } else {
        Flavour::Linux
    }
}

fn fatal(message: &str) -> ExitCode {
    eprintln!("git-fuzz: {message}");
    ExitCode::from(2)
}

fn setup(at: &Where) -> Result<Setup, String> {
    let git_par = match &at.git_par {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|d| d.join("git-par")))
            .filter(|p| p.is_file())
            .or_else(|| {
                std::env::split_paths(&std::env::var_os("PATH")?)
                    .map(|d| d.join("git-par"))
                    .find(|p| p.is_file())
            })
            .ok_or("no git-par beside git-fuzz nor on PATH: give --git-par")?,
    };
    let dir = at.dir.clone().unwrap_or_else(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        base.join(format!("git-fuzz-{}", std::process::id()))
    });
    let mut setup = Setup::with_wine(&git_par, &dir, at.wine.as_deref())?;
    setup.keep = at.keep;
    Ok(setup)
}

#[derive(Default)]
struct Tally {
    done: u64,
    same: u64,
    allowed: Vec<(u64, String)>,
    failed: Vec<(u64, bool)>,
    lost: Vec<u64>,
    invalid: Vec<(u64, String)>,
    git_crashed: Vec<(u64, String)>,
}

fn run(setup: &Setup, first: u64, count: u64, jobs: Option<usize>) -> ExitCode {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    eprintln!(
        "git-fuzz: {count} scenarios from seed {first}, {jobs} at a time, in {}",
        setup.root.display()
    );
    let tally = Mutex::new(Tally::default());
    let started = std::time::Instant::now();
    git_fuzz::run_seeds(setup, first, count, jobs, &|seed, report, again| {
        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
        t.done += 1;
        match &report.verdict {
            Verdict::Same => t.same += 1,
            Verdict::Allowed(why) => t.allowed.push((seed, why.clone())),
            Verdict::Invalid(why) => t.invalid.push((seed, why.clone())),
            Verdict::GitCrashed(why) => {
                t.git_crashed.push((seed, why.clone()));
                println!("GIT CRASHED {}", report.render());
            }
            Verdict::Differs { lost, .. } => {
                let reproduced = again.is_some_and(|a| a.aspects() == report.aspects());
                if !lost.is_empty() {
                    t.lost.push(seed);
                }
                t.failed.push((seed, reproduced));
                let script = report.dir.join("scenario.sh");
                println!(
                    "FAIL {}{}\n  rebuild: {}\n",
                    report.render(),
                    if reproduced {
                        "  reproduced: the second run differs in the same aspects"
                    } else {
                        "  NOT reproduced: the second run differs otherwise (or not at all)"
                    },
                    script.display()
                );
            }
        }
        if t.done % 100 == 0 || t.done == count {
            eprintln!(
                "git-fuzz: {}/{count} ({} s): {} same, {} allowed, {} failed, {} invalid",
                t.done,
                started.elapsed().as_secs(),
                t.same,
                t.allowed.len(),
                t.failed.len(),
                t.invalid.len()
            );
        }
    });
    let t = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    summary(&t, started.elapsed().as_secs_f64());
    if t.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn summary(t: &Tally, seconds: f64) {
    println!(
        "git-fuzz: {} scenarios in {seconds:.0} s: {} the same as git, {} documented safer refusals, {} differ ({} losing local content), {} invalid, {} where git crashed",
        t.done,
        t.same,
        t.allowed.len(),
        t.failed.len(),
        t.lost.len(),
        t.invalid.len(),
        t.git_crashed.len()
    );
    let seeds = |label: &str, list: Vec<String>| {
        if !list.is_empty() {
            println!("  {label}: {}", list.join(" "));
        }
    };
    let mut failed = t.failed.clone();
    failed.sort();
    seeds(
        "differ (* = did not reproduce)",
        failed
            .iter()
            .map(|(s, r)| format!("{s}{}", if *r { "" } else { "*" }))
            .collect(),
    );
    let mut allowed = t.allowed.clone();
    allowed.sort();
    seeds(
        "allowed",
        allowed.iter().map(|(s, _)| s.to_string()).collect(),
    );
    let mut invalid = t.invalid.clone();
    invalid.sort();
    for (seed, why) in &invalid {
        println!("  invalid seed {seed}: {why}");
    }
    let mut crashed = t.git_crashed.clone();
    crashed.sort();
    for (seed, why) in &crashed {
        println!("  git itself crashed on seed {seed} (not compared): {why}");
    }
}

fn replay(setup: &Setup, files: &[PathBuf]) -> ExitCode {
    let mut failed = 0;
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => return fatal(&format!("{}: {e}", file.display())),
        };
        let scenario = match Scenario::parse(&file.display().to_string(), &text) {
            Ok(s) => s,
            Err(e) => return fatal(&e),
        };
        let name = file
            .file_stem()
            .map_or("replay".into(), |s| s.to_string_lossy().into_owned());
        let report: Report = git_fuzz::run::run(setup, &scenario, &name);
        print!("{}", report.render());
        if !matches!(
            report.verdict,
            Verdict::Same | Verdict::Allowed(_) | Verdict::GitCrashed(_)
        ) {
            failed += 1;
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
