//! Interleaved, paired runs of external commands.
//!
//! A benchmark compares [`Contender`]s, each an external command line with placeholders, on one [`Case`]
//! (an operation at a size N). The [`Runner`] runs a warm-up per contender, then `runs` rounds of
//! A B C A B C ..., so that every contender sees the same drift (thermal state, page cache, background
//! load) within a round and the difference of two contenders in one round cancels it. Each run gets a fresh
//! setup from a [`Fixture`] (a new directory to check out into, a clone to switch in) that is prepared and
//! cleaned up outside the timed part, because deleting a checkout changes what the next one costs.
//!
//! Commands are run by an [`Executor`]: [`ProcessExecutor`] for real, [`MockExecutor`] with scripted times,
//! so that everything from here to the report is tested with exact numbers.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::stats::{self, Bootstrap, Interval, Summary};

/// An error from a fixture, which may come from anything the fixture does (git, the filesystem, ...).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One command under comparison: a name for the report and an argv template.
///
/// The template is an argv, not a shell line, so that paths with spaces need no quoting and no shell's
/// start-up is timed. Each argument may contain placeholders such as `{src}`, `{dst}` or `{branch}`, filled
/// per run from the [`Vars`] of the [`Fixture`]; `{{` and `}}` stand for literal braces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contender {
    /// Name shown in reports, e.g. `git (sequential)` or `git-par`.
    pub name: String,
    /// The argv template, program first, e.g. `["git", "-C", "{dst}", "switch", "{branch}"]`.
    pub command: Vec<String>,
}

/// A placeholder could not be filled: the template or the fixture has a mistake, which no run can fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The fixture gave no value for a placeholder.
    #[error("argument `{arg}` uses {{{name}}}, but the fixture gives no value for it (it gives: {known})")]
    Unknown {
        /// The argument template.
        arg: String,
        /// The placeholder's name.
        name: String,
        /// The names the fixture gave, comma-separated.
        known: String,
    },
    /// A `{` is not closed.
    #[error("argument `{arg}` has an unclosed `{{` (write `{{{{` for a literal brace)")]
    Unclosed {
        /// The argument template.
        arg: String,
    },
    /// The template is empty: there is no program to run.
    #[error("the command template is empty")]
    Empty,
}

impl Contender {
    /// Creates a contender from a name and an argv template.
    pub fn new(
        name: impl Into<String>,
        command: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            command: command.into_iter().map(Into::into).collect(),
        }
    }

    /// Returns the argv with every placeholder replaced by its value from `vars`.
    ///
    /// Values are `OsString`s, so paths that are not UTF-8 pass through untouched.
    pub fn render(&self, vars: &Vars) -> Result<Vec<OsString>, TemplateError> {
        if self.command.is_empty() {
            return Err(TemplateError::Empty);
        }
        self.command
            .iter()
            .map(|arg| substitute(arg, vars))
            .collect()
    }
}

fn substitute(arg: &str, vars: &Vars) -> Result<OsString, TemplateError> {
    let mut out = OsString::new();
    let mut rest = arg;
    while let Some(i) = rest.find(['{', '}']) {
        out.push(&rest[..i]);
        let brace = &rest[i..];
        if let Some(after) = brace
            .strip_prefix("{{")
            .or_else(|| brace.strip_prefix("}}"))
        {
            out.push(&brace[..1]);
            rest = after;
        } else if let Some(after) = brace.strip_prefix('}') {
            out.push("}"); // a lone `}` cannot be mistaken for anything: keep it
            rest = after;
        } else {
            let end = brace.find('}').ok_or_else(|| TemplateError::Unclosed {
                arg: arg.to_owned(),
            })?;
            let name = &brace[1..end];
            let value = vars.get(name).ok_or_else(|| TemplateError::Unknown {
                arg: arg.to_owned(),
                name: name.to_owned(),
                known: vars
                    .0
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            out.push(value);
            rest = &brace[end + 1..];
        }
    }
    out.push(rest);
    Ok(out)
}

/// Values of placeholders for one run, e.g. `src` = the synthetic repository, `dst` = this run's directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars(BTreeMap<String, OsString>);

impl Vars {
    /// Creates an empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` to `value`, replacing any previous value, and returns `self` for chaining.
    pub fn set(mut self, name: impl Into<String>, value: impl AsRef<OsStr>) -> Self {
        self.0.insert(name.into(), value.as_ref().to_owned());
        self
    }

    /// Returns the value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.0.get(name).map(OsString::as_os_str)
    }
}

/// What a process returned, kept apart from the time so that a failure is never averaged in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exit {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

impl Exit {
    /// Returns true if and only if the process exited with code 0.
    pub fn success(&self) -> bool {
        *self == Self::Code(0)
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(c) => write!(f, "exit code {c}"),
            Self::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// One timed execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measurement {
    /// Wall-clock time from spawn to reaping the process: what the user waits for.
    pub wall: Duration,
    /// Peak resident set size in KiB, as `wait4` reports it: the largest of the process and of every
    /// descendant it waited for, *not* their sum, so concurrent worker processes are each counted alone.
    /// `None` where the platform does not tell.
    pub max_rss_kib: Option<u64>,
    /// How the process ended.
    pub exit: Exit,
    /// The end of what it printed on stderr, to explain a failure.
    pub stderr: String,
}

/// One command to execute: what an [`Executor`] is asked to run.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    /// The contender's name, which lets a [`MockExecutor`] pick the scripted result.
    pub contender: &'a str,
    /// The rendered argv, program first.
    pub argv: &'a [OsString],
    /// Working directory.
    pub dir: &'a Path,
}

/// Runs one command and measures it. A trait so that the runner and everything downstream can be tested
/// with scripted times ([`MockExecutor`]) and never depend on how fast the test machine is.
pub trait Executor {
    /// Runs `invocation` to completion. An `Err` means the command could not be run at all (e.g. the
    /// program does not exist); a command that ran and failed is an `Ok` with a non-success [`Exit`].
    fn execute(&mut self, invocation: &Invocation<'_>) -> io::Result<Measurement>;
}

/// How many bytes of a command's stderr are kept, enough for git's error message without letting a chatty
/// command grow the harness's memory.
const STDERR_TAIL: usize = 4096;

/// Runs real processes: stdin and stdout are closed (`/dev/null`), stderr is kept for error messages, and
/// the process is reaped with `wait4` to get its peak RSS. Nothing else runs in the harness meanwhile but
/// a thread that drains stderr.
///
/// The environment is the harness's own, changed by [`ProcessExecutor::env`] and
/// [`ProcessExecutor::env_remove`]: a benchmark isolates its commands from the caller's (no `GIT_DIR` of an
/// enclosing hook, no system git config) without changing its own process's environment.
#[derive(Debug, Clone, Default)]
pub struct ProcessExecutor {
    /// Changes to the inherited environment, in order: `Some` sets a variable, `None` removes it.
    env: Vec<(OsString, Option<OsString>)>,
}

impl ProcessExecutor {
    /// Creates an executor whose commands inherit the harness's environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value` in the environment of every command, and returns `self` for chaining.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes `key` from the environment of every command, and returns `self` for chaining.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }
}

fn read_tail(mut from: impl Read) -> String {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match from.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                kept.extend_from_slice(&chunk[..n]);
                if kept.len() > 2 * STDERR_TAIL {
                    kept.drain(..kept.len() - STDERR_TAIL);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if kept.len() > STDERR_TAIL {
        kept.drain(..kept.len() - STDERR_TAIL);
    }
    String::from_utf8_lossy(&kept).trim().to_owned()
}

impl Executor for ProcessExecutor {
    fn execute(&mut self, invocation: &Invocation<'_>) -> io::Result<Measurement> {
        let (program, args) = invocation
            .argv
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        let mut command = Command::new(program);
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let start = Instant::now();
        let mut child = command
            .args(args)
            .current_dir(invocation.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().expect("stderr was piped above");
        let reader = std::thread::spawn(move || read_tail(stderr));
        let (ended, max_rss_kib) = crate::platform::wait(&mut child)?;
        let exit = match ended {
            crate::platform::Ended::Code(code) => Exit::Code(code),
            crate::platform::Ended::Signal(signal) => Exit::Signal(signal),
        };
        let wall = start.elapsed();
        let stderr = reader.join().unwrap_or_default();
        Ok(Measurement {
            wall,
            max_rss_kib,
            exit,
            stderr,
        })
    }
}

/// One command that a [`MockExecutor`] was asked to run, recorded so that tests can check the order of
/// runs and the rendered arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockCall {
    /// The contender's name.
    pub contender: String,
    /// The rendered argv.
    pub argv: Vec<OsString>,
    /// The working directory.
    pub dir: PathBuf,
}

/// An executor that runs nothing and returns scripted measurements, one per call, per contender, in order.
///
/// It is how the runner, the statistics and the reports are tested with exact numbers (hyperfine's
/// hidden mock mode plays the same role). A contender whose script is exhausted gets an `Err`, which the
/// runner treats like a program that does not exist.
#[derive(Debug, Clone, Default)]
pub struct MockExecutor {
    scripts: HashMap<String, VecDeque<Measurement>>,
    calls: Vec<MockCall>,
}

impl MockExecutor {
    /// Creates an executor with no scripts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a measurement to `contender`'s script.
    pub fn push(&mut self, contender: &str, measurement: Measurement) -> &mut Self {
        self.scripts
            .entry(contender.to_owned())
            .or_default()
            .push_back(measurement);
        self
    }

    /// Appends successful runs of the given durations in milliseconds (whole milliseconds, so that the
    /// seconds reported are the nearest `f64` to `ms / 1000` and tests can compare exactly), without RSS.
    pub fn times_ms(&mut self, contender: &str, ms: impl IntoIterator<Item = u64>) -> &mut Self {
        for ms in ms {
            self.push(
                contender,
                Measurement {
                    wall: Duration::from_millis(ms),
                    max_rss_kib: None,
                    exit: Exit::Code(0),
                    stderr: String::new(),
                },
            );
        }
        self
    }

    /// Appends a run that exits with `code` after printing `stderr`.
    pub fn fail(&mut self, contender: &str, code: i32, stderr: &str) -> &mut Self {
        self.push(
            contender,
            Measurement {
                wall: Duration::from_millis(1),
                max_rss_kib: None,
                exit: Exit::Code(code),
                stderr: stderr.to_owned(),
            },
        )
    }

    /// Returns every call so far, in order.
    pub fn calls(&self) -> &[MockCall] {
        &self.calls
    }
}

impl Executor for MockExecutor {
    fn execute(&mut self, invocation: &Invocation<'_>) -> io::Result<Measurement> {
        self.calls.push(MockCall {
            contender: invocation.contender.to_owned(),
            argv: invocation.argv.to_vec(),
            dir: invocation.dir.to_owned(),
        });
        self.scripts
            .get_mut(invocation.contender)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "the mock has no more runs scripted for {}",
                        invocation.contender
                    ),
                )
            })
    }
}

/// Which run of a contender this is. Warm-up runs are executed like the others but not recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Round {
    /// Warm-up run number `n` (from 0).
    Warmup(usize),
    /// Measured round number `n` (from 0): the index into [`ContenderResult::times`].
    Measured(usize),
}

impl fmt::Display for Round {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Warmup(n) => write!(f, "warm-up run {}", n + 1),
            Self::Measured(n) => write!(f, "round {}", n + 1),
        }
    }
}

/// What a benchmark measures: an operation at a size, e.g. `switch` with N = 250 files changed, or
/// `worktree add` with N = 40,000 files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// The operation, which groups cases into one table (`switch`, `clone`, `worktree add`, ...).
    pub operation: String,
    /// The number of files involved, the row of the table.
    pub n: usize,
}

impl Case {
    /// Creates a case.
    pub fn new(operation: impl Into<String>, n: usize) -> Self {
        Self {
            operation: operation.into(),
            n,
        }
    }
}

/// The run a [`Fixture`] is asked to prepare or clean up.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// The case being measured.
    pub case: &'a Case,
    /// The contender about to run (or that just ran).
    pub contender: &'a Contender,
    /// Its index in the contender list (0 is the baseline).
    pub index: usize,
    /// Which run it is.
    pub round: Round,
}

/// What a fixture prepared for one run: where to run the command and the values of its placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// Working directory of the command.
    pub dir: PathBuf,
    /// Values of the placeholders in the contender's template.
    pub vars: Vars,
}

/// Per-run setup and teardown, both outside the timed part.
///
/// A checkout must land in a fresh directory each time (on ext4 the cost of creating files depends on
/// what was deleted just before), and the state a command starts from (a clone on `main` about to switch)
/// must be the same for every contender. Implement this trait, or build one from two closures with
/// [`FnFixture`].
pub trait Fixture {
    /// Prepares one run and says where and with what values to run it.
    fn prepare(&mut self, run: &Run<'_>) -> Result<Prepared, BoxError>;

    /// Checks, outside the timed part, that a command that exited successfully left the result it should
    /// (the branch checked out, no file missing): a fast but wrong checkout must not win a benchmark. An
    /// `Err` says what is wrong and makes the run a failure of its contender. Accepts anything by default.
    ///
    /// Called before [`Fixture::cleanup`]; a fixture may check only some rounds when checking costs much.
    fn verify(&mut self, run: &Run<'_>, prepared: &Prepared) -> Result<(), String> {
        let _ = (run, prepared);
        Ok(())
    }

    /// Cleans up after one run, whether the command succeeded or not. Does nothing by default.
    fn cleanup(&mut self, run: &Run<'_>, prepared: Prepared) -> Result<(), BoxError> {
        let _ = (run, prepared);
        Ok(())
    }

    /// Returns the bytes allocated on the disk the run writes to (see
    /// [`crate::filesystem::used_bytes`]), or `None` if the fixture does not measure it, which is the
    /// default. Called just before and just after the timed command, untimed: the difference is what the
    /// command allocated, reported per round in [`ContenderResult::allocated`].
    fn disk_used(&mut self, run: &Run<'_>, prepared: &Prepared) -> Result<Option<u64>, BoxError> {
        let _ = (run, prepared);
        Ok(None)
    }
}

/// A [`Fixture`] made of two closures, for fixtures too small to deserve a type.
pub struct FnFixture<P, C> {
    prepare: P,
    cleanup: C,
}

impl<P, C> FnFixture<P, C>
where
    P: FnMut(&Run<'_>) -> Result<Prepared, BoxError>,
    C: FnMut(&Run<'_>, Prepared) -> Result<(), BoxError>,
{
    /// Creates a fixture that calls `prepare` before and `cleanup` after each run.
    pub fn new(prepare: P, cleanup: C) -> Self {
        Self { prepare, cleanup }
    }
}

impl<P, C> Fixture for FnFixture<P, C>
where
    P: FnMut(&Run<'_>) -> Result<Prepared, BoxError>,
    C: FnMut(&Run<'_>, Prepared) -> Result<(), BoxError>,
{
    fn prepare(&mut self, run: &Run<'_>) -> Result<Prepared, BoxError> {
        (self.prepare)(run)
    }

    fn cleanup(&mut self, run: &Run<'_>, prepared: Prepared) -> Result<(), BoxError> {
        (self.cleanup)(run, prepared)
    }
}

/// How many runs, and how their uncertainty is computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Measured rounds per contender. 13 by default: within the 12-15 that give a bootstrap interval
    /// narrow enough to tell a 10% difference, in minutes rather than hours.
    pub runs: usize,
    /// Warm-up runs per contender before the first round, which fill the page cache with the repository
    /// and the programs so that round 1 is not an outlier by construction.
    pub warmup: usize,
    /// How intervals are computed.
    pub bootstrap: Bootstrap,
}

impl Default for Plan {
    fn default() -> Self {
        Self {
            runs: 13,
            warmup: 1,
            bootstrap: Bootstrap::default(),
        }
    }
}

/// Something that happened during a case, for a binary to show progress. The library itself never prints.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A run ended and was measured (its command may still have failed: see [`Measurement::exit`]).
    Measured {
        /// Which run.
        run: &'a Run<'a>,
        /// Its measurement.
        measurement: &'a Measurement,
    },
    /// A run could not be executed at all; the contender is dropped from the rest of the case.
    Failed {
        /// Which run.
        run: &'a Run<'a>,
        /// Why.
        message: &'a str,
    },
}

/// Why a case could not be completed. A contender that fails is *not* an error of the case: it is
/// recorded in its [`ContenderResult::failure`] and the others go on.
///
/// The message includes its cause and [`std::error::Error::source`] is `None`, so that a printer of error
/// chains (anyhow's `{:#}`) shows the cause once, not once in the message and again as the source.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// There is nothing to compare.
    #[error("a case needs at least one contender, the baseline")]
    NoContenders,
    /// The fixture could not prepare a run; the setup is broken for everyone, so the case stops.
    #[error("preparing {round} of {contender} for {operation} (N = {n}): {cause}")]
    Prepare {
        /// The case's operation.
        operation: String,
        /// The case's N.
        n: usize,
        /// The contender's name.
        contender: String,
        /// Which run.
        round: Round,
        /// The fixture's error.
        cause: BoxError,
    },
    /// The fixture could not measure the disk used around a run.
    #[error(
        "measuring the disk used by {round} of {contender} for {operation} (N = {n}): {cause}"
    )]
    Disk {
        /// The case's operation.
        operation: String,
        /// The case's N.
        n: usize,
        /// The contender's name.
        contender: String,
        /// Which run.
        round: Round,
        /// The fixture's error.
        cause: BoxError,
    },
    /// The fixture could not clean up after a run; going on could measure on a polluted state.
    #[error("cleaning up after {round} of {contender} for {operation} (N = {n}): {cause}")]
    Cleanup {
        /// The case's operation.
        operation: String,
        /// The case's N.
        n: usize,
        /// The contender's name.
        contender: String,
        /// Which run.
        round: Round,
        /// The fixture's error.
        cause: BoxError,
    },
    /// A contender's template does not match the fixture's placeholders.
    #[error("command of {contender}: {cause}")]
    Template {
        /// The contender's name.
        contender: String,
        /// What is wrong.
        cause: TemplateError,
    },
}

/// Why a contender has no result: the first failed run. Later runs of that contender are skipped, since a
/// command that failed once would make its remaining times incomparable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The run that failed.
    pub round: Round,
    /// What went wrong: the exit status and the end of stderr, or why it could not start.
    pub message: String,
}

/// Time saved by a contender against the baseline, from the paired differences `baseline[i] - contender[i]`
/// of each round: positive when the contender is faster.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// Median paired difference, in seconds: the number reported.
    pub median: f64,
    /// Bootstrap interval of that median, in seconds; `None` only if no round was paired.
    pub interval: Option<Interval>,
}

/// The outcome of one contender on one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContenderResult {
    /// The contender's name.
    pub name: String,
    /// Its command template, so that a result file says what was run.
    pub command: Vec<String>,
    /// Wall times of the measured rounds in seconds, in round order (the pairing key).
    pub times: Vec<f64>,
    /// Summary of `times`, if the contender did not fail.
    pub summary: Option<Summary>,
    /// Bootstrap interval of the median time, for plots.
    pub median_interval: Option<Interval>,
    /// Time saved against the baseline; `None` for the baseline itself, or if either failed.
    pub saved: Option<Saved>,
    /// Peak RSS over the measured rounds, in KiB (see [`Measurement::max_rss_kib`]).
    pub max_rss_kib: Option<u64>,
    /// Rounds whose time is an outlier by modified Z-score (indices into `times`).
    pub outliers: Vec<usize>,
    /// Why the contender has no result, if it failed.
    pub failure: Option<Failure>,
    /// Bytes each measured round allocated on the checkouts' filesystem (blocks used after the command
    /// less blocks used before it, both read after a sync; negative if the filesystem freed more than it
    /// allocated meanwhile), in round order; empty where the fixture does not measure it
    /// ([`Fixture::disk_used`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocated: Vec<i64>,
    /// Median of `allocated` in bytes, if the contender did not fail and it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_median: Option<f64>,
}

/// The outcome of one case: every contender's times and statistics, the baseline first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The operation measured.
    pub operation: String,
    /// The number of files involved.
    pub n: usize,
    /// How it was measured.
    pub plan: Plan,
    /// One result per contender, in the order given; the first is the baseline.
    pub contenders: Vec<ContenderResult>,
}

impl CaseResult {
    /// Returns the baseline's result (the first contender).
    pub fn baseline(&self) -> Option<&ContenderResult> {
        self.contenders.first()
    }
}

/// Where and on what a series of cases was measured, which a result is meaningless without.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// Filesystem of the directories checked out into (see [`crate::filesystem`]).
    pub filesystem: Option<String>,
    /// Anything else worth stating: repository, machine, git version, CPU count, ...
    pub facts: BTreeMap<String, String>,
}

/// Every case of a benchmark series and its environment: what the exporters write and reports show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Where it was measured.
    pub environment: Environment,
    /// The cases, in the order run.
    pub cases: Vec<CaseResult>,
}

/// Runs cases: the warm-up, the interleaved rounds, and the statistics of the result.
pub struct Runner<'e> {
    executor: &'e mut dyn Executor,
    plan: Plan,
}

#[derive(Default)]
struct Tally {
    times: Vec<f64>,
    allocated: Vec<i64>,
    max_rss_kib: Option<u64>,
    failure: Option<Failure>,
}

impl<'e> Runner<'e> {
    /// Creates a runner that executes commands with `executor` according to `plan`.
    pub fn new(executor: &'e mut dyn Executor, plan: Plan) -> Self {
        Self { executor, plan }
    }

    /// Runs `case` for every contender (the first is the baseline) and returns the result.
    pub fn run(
        &mut self,
        case: &Case,
        contenders: &[Contender],
        fixture: &mut dyn Fixture,
    ) -> Result<CaseResult, Error> {
        self.run_observed(case, contenders, fixture, &mut |_| {})
    }

    /// Like [`Runner::run`], calling `observer` after every run so that a binary can show progress.
    pub fn run_observed(
        &mut self,
        case: &Case,
        contenders: &[Contender],
        fixture: &mut dyn Fixture,
        observer: &mut dyn FnMut(&Event<'_>),
    ) -> Result<CaseResult, Error> {
        if contenders.is_empty() {
            return Err(Error::NoContenders);
        }
        let mut tallies: Vec<Tally> = contenders.iter().map(|_| Tally::default()).collect();
        let rounds = (0..self.plan.warmup)
            .map(Round::Warmup)
            .chain((0..self.plan.runs).map(Round::Measured));
        for round in rounds {
            for (index, contender) in contenders.iter().enumerate() {
                let tally = &mut tallies[index];
                if tally.failure.is_some() {
                    continue;
                }
                let run = Run {
                    case,
                    contender,
                    index,
                    round,
                };
                match self.one(&run, fixture, observer)? {
                    Ok((m, allocated)) => {
                        if let Round::Measured(_) = round {
                            tally.times.push(m.wall.as_secs_f64());
                            tally.max_rss_kib = tally.max_rss_kib.max(m.max_rss_kib);
                            tally.allocated.extend(allocated);
                        }
                    }
                    Err(message) => tally.failure = Some(Failure { round, message }),
                }
            }
        }
        Ok(self.result(case, contenders, tallies))
    }

    /// One prepared, timed and cleaned-up run, with the bytes it allocated if the fixture measures them.
    /// The outer `Result` is the case's, the inner the contender's.
    #[allow(clippy::type_complexity)]
    fn one(
        &mut self,
        run: &Run<'_>,
        fixture: &mut dyn Fixture,
        observer: &mut dyn FnMut(&Event<'_>),
    ) -> Result<Result<(Measurement, Option<i64>), String>, Error> {
        let prepared = fixture.prepare(run).map_err(|cause| Error::Prepare {
            operation: run.case.operation.clone(),
            n: run.case.n,
            contender: run.contender.name.clone(),
            round: run.round,
            cause,
        })?;
        let argv = match run.contender.render(&prepared.vars) {
            Ok(argv) => argv,
            Err(cause) => {
                let _ = fixture.cleanup(run, prepared);
                return Err(Error::Template {
                    contender: run.contender.name.clone(),
                    cause,
                });
            }
        };
        let invocation = Invocation {
            contender: &run.contender.name,
            argv: &argv,
            dir: &prepared.dir,
        };
        let disk_error = |cause| Error::Disk {
            operation: run.case.operation.clone(),
            n: run.case.n,
            contender: run.contender.name.clone(),
            round: run.round,
            cause,
        };
        let before = fixture.disk_used(run, &prepared).map_err(disk_error)?;
        let executed = self.executor.execute(&invocation);
        // Read right after the command, before `verify` (whose `git status` may rewrite an index).
        let allocated = match before {
            Some(before) => fixture
                .disk_used(run, &prepared)
                .map_err(disk_error)?
                .map(|after| after as i64 - before as i64),
            None => None,
        };
        let outcome = match executed {
            Ok(m) => {
                observer(&Event::Measured {
                    run,
                    measurement: &m,
                });
                if m.exit.success() {
                    fixture
                        .verify(run, &prepared)
                        .map(|()| (m, allocated))
                        .map_err(|wrong| {
                            format!("exited with code 0 but left a wrong result: {wrong}")
                        })
                } else if m.stderr.is_empty() {
                    Err(m.exit.to_string())
                } else {
                    Err(format!("{}: {}", m.exit, m.stderr))
                }
            }
            Err(err) => {
                let message = format!("could not run {:?}: {err}", argv[0]);
                observer(&Event::Failed {
                    run,
                    message: &message,
                });
                Err(message)
            }
        };
        fixture
            .cleanup(run, prepared)
            .map_err(|cause| Error::Cleanup {
                operation: run.case.operation.clone(),
                n: run.case.n,
                contender: run.contender.name.clone(),
                round: run.round,
                cause,
            })?;
        Ok(outcome)
    }

    fn result(&self, case: &Case, contenders: &[Contender], tallies: Vec<Tally>) -> CaseResult {
        let bootstrap = &self.plan.bootstrap;
        let baseline_times = (tallies[0].failure.is_none()).then(|| tallies[0].times.clone());
        let results = contenders
            .iter()
            .zip(tallies)
            .enumerate()
            .map(|(i, (c, t))| {
                let ok = t.failure.is_none();
                let saved = match &baseline_times {
                    Some(base) if i > 0 && ok => {
                        let diffs = stats::paired_differences(base, &t.times).expect(
                            "contenders that did not fail ran every round, as the baseline did",
                        );
                        stats::median(&diffs).map(|median| Saved {
                            median,
                            interval: bootstrap.median_interval(&diffs),
                        })
                    }
                    _ => None,
                };
                ContenderResult {
                    name: c.name.clone(),
                    command: c.command.clone(),
                    summary: ok.then(|| Summary::of(&t.times)).flatten(),
                    median_interval: ok.then(|| bootstrap.median_interval(&t.times)).flatten(),
                    saved,
                    max_rss_kib: t.max_rss_kib,
                    outliers: if ok {
                        stats::outliers(&t.times)
                    } else {
                        Vec::new()
                    },
                    failure: t.failure,
                    times: t.times,
                    allocated_median: if ok {
                        let bytes: Vec<f64> = t.allocated.iter().map(|&b| b as f64).collect();
                        stats::median(&bytes)
                    } else {
                        None
                    },
                    allocated: t.allocated,
                }
            })
            .collect();
        CaseResult {
            operation: case.operation.clone(),
            n: case.n,
            plan: self.plan,
            contenders: results,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_placeholders_and_escape_braces() {
        let vars = Vars::new()
            .set("dst", "/tmp/run 1")
            .set("branch", "diff-250");
        let c = Contender::new(
            "git",
            [
                "git",
                "-C",
                "{dst}",
                "switch",
                "{branch}",
                "--format={{x}}",
                "a}b",
            ],
        );
        let argv = c.render(&vars).unwrap();
        assert_eq!(
            argv,
            [
                "git",
                "-C",
                "/tmp/run 1",
                "switch",
                "diff-250",
                "--format={x}",
                "a}b"
            ]
        );

        let bad = Contender::new("x", ["x", "{src}"]);
        let err = bad.render(&vars).unwrap_err();
        assert!(matches!(&err, TemplateError::Unknown { name, .. } if name == "src"));
        assert!(err.to_string().contains("branch, dst"), "{err}");
        assert_eq!(
            Contender::new("x", ["x", "{dst"]).render(&vars),
            Err(TemplateError::Unclosed { arg: "{dst".into() })
        );
        assert_eq!(
            Contender::new("x", Vec::<String>::new()).render(&vars),
            Err(TemplateError::Empty)
        );
    }

    #[test]
    fn read_tail_keeps_the_end() {
        let long = "x".repeat(10_000) + "the error";
        let tail = read_tail(long.as_bytes());
        assert_eq!(tail.len(), STDERR_TAIL);
        assert!(tail.ends_with("the error"));
    }
}
