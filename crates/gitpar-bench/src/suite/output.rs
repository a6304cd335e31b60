//! What `git par bench` shows and writes: progress on stderr, the report on stdout, and the result files
//! (JSON, CSV, Markdown, SVG plot), rewritten after every case.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::export::{self, CsvExporter, Exporter, JsonExporter, MarkdownExporter, SvgExporter};
use crate::report::{self, Thresholds, Warning};
use crate::run::{Case, Event, Plan, Results, Round};
use anyhow::{bail, Context as _};

use super::experiment::{Observer, PlannedCase};

/// The files results are written to, and which exporter writes each.
pub struct Exports {
    files: Vec<(PathBuf, Box<dyn Exporter>)>,
}

/// Paths asked for on the command line; `None` means "the default name in the results directory".
#[derive(Debug, Default)]
pub struct ExportPaths {
    /// `--export-json`.
    pub json: Option<PathBuf>,
    /// `--export-csv`.
    pub csv: Option<PathBuf>,
    /// `--export-markdown`.
    pub markdown: Option<PathBuf>,
    /// `--plot`.
    pub plot: Option<PathBuf>,
}

impl Exports {
    /// Resolves every output file: the paths given, else `<results_dir>/<stem>.<ext>`. Fails before any
    /// run if the plot's format is not one this build draws, so that a long series is not lost to it.
    pub fn resolve(paths: ExportPaths, results_dir: &Path, stem: &str) -> anyhow::Result<Self> {
        let default = |ext: &str| results_dir.join(format!("{stem}.{ext}"));
        let plot = paths.plot.unwrap_or_else(|| default("svg"));
        match plot.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("svg") => {}
            Some("png") => bail!(
                "--plot {}: PNG is not drawn by this build (it would need a rasterizer); write an SVG with \
                 --plot FILE.svg and convert it if needed, e.g. `rsvg-convert -o plot.png plot.svg`",
                plot.display()
            ),
            _ => bail!(
                "--plot {}: the plot format comes from the extension, and only .svg is supported",
                plot.display()
            ),
        }
        let files: Vec<(PathBuf, Box<dyn Exporter>)> = vec![
            (
                paths.json.unwrap_or_else(|| default("json")),
                Box::new(JsonExporter),
            ),
            (
                paths.csv.unwrap_or_else(|| default("csv")),
                Box::new(CsvExporter),
            ),
            (
                paths.markdown.unwrap_or_else(|| default("md")),
                Box::new(MarkdownExporter),
            ),
            (plot, Box::new(SvgExporter::default())),
        ];
        for (path, _) in &files {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("could not create {}", parent.display()))?;
            }
        }
        Ok(Self { files })
    }

    /// Writes `results` to every file, each atomically.
    pub fn write(&self, results: &Results) -> anyhow::Result<()> {
        for (path, exporter) in &self.files {
            let bytes = exporter.export(results)?;
            export::write_atomically(path, &bytes)?;
        }
        Ok(())
    }

    /// Returns the files, in the order JSON, CSV, Markdown, plot.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }
}

/// Returns a UTC time stamp like `20250102-030405` for naming result files, so that series do not
/// overwrite each other and sort by date.
pub fn timestamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Shows progress on stderr and writes the result files after every case.
///
/// On a terminal one line is redrawn per run; otherwise (a log, CI, a test) one line per round is
/// printed, so a log says how far a series got without thousands of lines. Both say how much time is
/// left, as [`Eta`] estimates it.
pub struct Console<'a> {
    exports: &'a Exports,
    /// Runs and warm-ups per contender, which events do not carry.
    plan: Plan,
    quiet: bool,
    tty: bool,
    case: String,
    /// `[i/total]` of the current case.
    position: String,
    contenders: usize,
    /// When the series started.
    series: Instant,
    /// When the last run ended (or the current case started).
    last: Instant,
    /// An untimed setup going on: when it started and how many full checkouts it makes.
    setup: Option<(Instant, usize)>,
    eta: Eta,
    /// Contenders of the current case already reported as failed.
    failed: Vec<usize>,
}

impl<'a> Console<'a> {
    /// Creates a console writing results to `exports`; `quiet` silences progress (not errors).
    pub fn new(exports: &'a Exports, plan: Plan, quiet: bool) -> Self {
        Self {
            exports,
            plan,
            quiet,
            tty: std::io::stderr().is_terminal(),
            case: String::new(),
            position: String::new(),
            contenders: 0,
            series: Instant::now(),
            last: Instant::now(),
            setup: None,
            eta: Eta::default(),
            failed: Vec::new(),
        }
    }

    /// Prints a line of progress (a status line on a terminal is cleared first).
    pub fn say(&self, line: &str) {
        if self.quiet {
            return;
        }
        if self.tty {
            eprint!("\r\x1b[K");
        }
        eprintln!("{line}");
    }

    /// Returns how long the series has run so far.
    pub fn elapsed(&self) -> Duration {
        self.series.elapsed()
    }

    fn left(&self) -> String {
        self.eta
            .remaining()
            .map_or_else(String::new, |s| format!(", about {} left", minutes(s)))
    }
}

/// A duration for a progress line: `42s`, `3m05s`, `1h02m`.
pub fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

fn round_text(round: Round, runs: usize, warmup: usize) -> String {
    match round {
        Round::Warmup(i) => format!("warm-up {}/{warmup}", i + 1),
        Round::Measured(i) => format!("run {}/{runs}", i + 1),
    }
}

impl Observer for Console<'_> {
    fn series_started(&mut self, cases: &[PlannedCase]) {
        let per_contender = self.plan.runs + self.plan.warmup;
        self.eta = Eta::new(
            cases
                .iter()
                .map(|c| EtaCase {
                    group: c.case.operation.clone(),
                    n: c.case.n,
                    full_checkout: c.full_checkout,
                    runs: c.contenders * per_contender,
                    ..EtaCase::default()
                })
                .collect(),
        );
        self.series = Instant::now();
    }

    fn setup(&mut self, what: &str, checkouts: usize) {
        self.setup = Some((Instant::now(), checkouts));
        self.say(what);
    }

    fn case_started(&mut self, index: usize, total: usize, case: &Case, contenders: usize) {
        if let Some((started, checkouts)) = self.setup.take() {
            if checkouts > 0 {
                self.eta
                    .calibrate(started.elapsed().as_secs_f64() / checkouts as f64);
            }
        }
        self.case = format!("{} N={}", case.operation, case.n);
        self.position = format!("[{}/{total}]", index + 1);
        self.contenders = contenders;
        self.last = Instant::now();
        self.eta.start_case(index);
        self.failed.clear();
        self.say(&format!(
            "{} {} ({} elapsed{})",
            self.position,
            self.case,
            minutes(self.elapsed().as_secs_f64()),
            self.left()
        ));
    }

    fn event(&mut self, event: &Event<'_>) {
        let now = Instant::now();
        self.eta
            .record(now.saturating_duration_since(self.last).as_secs_f64());
        self.last = now;
        if self.quiet {
            return;
        }
        let (run, failure) = match event {
            Event::Measured { run, measurement } => (
                run,
                (!measurement.exit.success()).then(|| {
                    let first = measurement.stderr.lines().next().unwrap_or_default();
                    format!("{}: {first}", measurement.exit)
                }),
            ),
            Event::Failed { run, message } => (run, Some((*message).to_owned())),
        };
        if let Some(why) = failure {
            if !self.failed.contains(&run.index) {
                self.failed.push(run.index);
                self.say(&format!(
                    "  {} failed ({why}); it is left out of the rest of this case",
                    run.contender.name
                ));
            }
        }
        let progress = round_text(run.round, self.plan.runs, self.plan.warmup);
        if self.tty {
            eprint!(
                "\r\x1b[K{} {}: {progress}, {} ({} elapsed{})",
                self.position,
                self.case,
                run.contender.name,
                minutes(self.elapsed().as_secs_f64()),
                self.left()
            );
            let _ = std::io::stderr().flush();
        } else if run.index + 1 == self.contenders {
            eprintln!("  {}: {progress}{}", self.case, self.left());
        }
    }

    fn case_done(&mut self, results: &Results) -> anyhow::Result<()> {
        if self.tty && !self.quiet {
            eprint!("\r\x1b[K");
        }
        self.exports.write(results)
    }
}

/// Estimates the time a series has left from the runs done so far: each case's remaining runs cost what
/// its runs have cost on average (preparation and cleanup included). A case not started yet is predicted
/// from the cases of its operation measured so far (a straight line through their mean cost per run
/// against N: a constant for the process start and the index, plus a cost per file); a full checkout of
/// an operation not measured yet, from another full checkout's cost, else from the untimed full checkouts
/// of the setup ([`Eta::calibrate`]). Rough by design: it only has to say whether to wait or to come
/// back later.
#[derive(Debug, Default, Clone)]
pub struct Eta {
    cases: Vec<EtaCase>,
    current: usize,
    /// Seconds one untimed full checkout of the setup took.
    calibration: Option<f64>,
}

/// One case as [`Eta`] sees it.
#[derive(Debug, Default, Clone)]
pub struct EtaCase {
    /// Its operation: cases of one operation are predicted from each other.
    pub group: String,
    /// Its N.
    pub n: usize,
    /// Whether a run writes every file (see [`PlannedCase::full_checkout`]).
    pub full_checkout: bool,
    /// Runs of all its contenders, warm-ups included.
    pub runs: usize,
    /// Runs done.
    pub done: usize,
    /// Seconds those took.
    pub seconds: f64,
}

impl EtaCase {
    fn mean(&self) -> Option<f64> {
        (self.done > 0).then(|| self.seconds / self.done as f64)
    }
}

/// When only one N has been measured, a case of another N is predicted as proportional to N plus
/// this many files: what starting the process and reading and writing the index cost, in files.
const ETA_OVERHEAD_FILES: f64 = 1000.0;

/// A full-checkout run costs the checkout and the removal of its files afterwards, which costs about half
/// as much again (more on a disk, less on tmpfs).
const ETA_REMOVAL: f64 = 1.5;

impl Eta {
    /// An estimator for these cases, in the order they run.
    pub fn new(cases: Vec<EtaCase>) -> Self {
        Self {
            cases,
            current: 0,
            calibration: None,
        }
    }

    /// An untimed full checkout of the setup took `seconds`: what a full checkout costs here.
    pub fn calibrate(&mut self, seconds: f64) {
        self.calibration = Some(seconds);
    }

    /// Case `index` starts: the ones before it are over (a case may end early when contenders fail).
    pub fn start_case(&mut self, index: usize) {
        self.current = index;
        let before = index.min(self.cases.len());
        for case in &mut self.cases[..before] {
            case.runs = case.done;
        }
    }

    /// A run of the current case ended, `seconds` after the one before it.
    pub fn record(&mut self, seconds: f64) {
        if let Some(case) = self.cases.get_mut(self.current) {
            case.done += 1;
            case.seconds += seconds;
        }
    }

    /// Seconds left, or `None` while nothing is known to predict from.
    pub fn remaining(&self) -> Option<f64> {
        let mut left = 0.0;
        for case in &self.cases[self.current.min(self.cases.len())..] {
            let cost = match case.mean() {
                Some(mean) => mean,
                None => self.predict(case)?,
            };
            left += case.runs.saturating_sub(case.done) as f64 * cost;
        }
        Some(left)
    }

    fn predict(&self, case: &EtaCase) -> Option<f64> {
        let points = |same: &dyn Fn(&EtaCase) -> bool| -> Vec<(f64, f64)> {
            self.cases
                .iter()
                .filter(|c| same(c))
                .filter_map(|c| c.mean().map(|m| (c.n as f64, m)))
                .collect()
        };
        let same_group = points(&|c| c.group == case.group);
        if !same_group.is_empty() {
            return Some(fit(&same_group)(case.n as f64));
        }
        if case.full_checkout {
            let full = points(&|c| c.full_checkout);
            if !full.is_empty() {
                return Some(fit(&full)(case.n as f64));
            }
            if let Some(seconds) = self.calibration {
                return Some(seconds * ETA_REMOVAL);
            }
        }
        let any = points(&|_| true);
        (!any.is_empty()).then(|| fit(&any)(case.n as f64))
    }
}

/// The cost per run against N through the measured (N, mean cost) points: least squares when there are
/// two Ns or more (never a negative cost per file), else proportional to N plus [`ETA_OVERHEAD_FILES`].
fn fit(points: &[(f64, f64)]) -> impl Fn(f64) -> f64 {
    let k = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    let (mx, my) = (sx / k, sy / k);
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let (a, b, proportional) = if sxx > 0.0 {
        let b = (sxy / sxx).max(0.0);
        (my - b * mx, b, false)
    } else {
        (0.0, my / (mx + ETA_OVERHEAD_FILES), true)
    };
    move |n: f64| {
        if proportional {
            b * (n + ETA_OVERHEAD_FILES)
        } else {
            (a + b * n).max(0.0)
        }
    }
}

/// Returns every warning of a series: the statistics' (noise, outliers, failed contenders) and, if many
/// files were deleted on a disk filesystem meanwhile, the one about slower file creation after deletions.
pub fn warnings(
    results: &Results,
    checkouts: &super::experiment::Checkouts,
    deleted: u64,
) -> Vec<Warning> {
    let mut out = report::warnings(results, &Thresholds::default());
    out.extend(report::mass_deletion_warning(
        &checkouts.root,
        checkouts.filesystem,
        deleted,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_durations() {
        assert_eq!(minutes(0.4), "0s");
        assert_eq!(minutes(59.4), "59s");
        assert_eq!(minutes(185.0), "3m05s");
        assert_eq!(minutes(3720.0), "1h02m");
    }

    fn case(group: &str, n: usize, full_checkout: bool, runs: usize) -> EtaCase {
        EtaCase {
            group: group.into(),
            n,
            full_checkout,
            runs,
            ..EtaCase::default()
        }
    }

    #[test]
    fn time_left_follows_the_runs_done() {
        // Two switch cases of 4 runs, N = 100 then N = 1000, and a full checkout of 10,000 files.
        let mut eta = Eta::new(vec![
            case("switch", 100, false, 4),
            case("switch", 1000, false, 4),
            case("clone", 10_000, true, 2),
        ]);
        assert_eq!(eta.remaining(), None, "nothing measured yet");
        eta.calibrate(4.0);
        assert_eq!(eta.remaining(), None, "the switches are not known yet");
        eta.start_case(0);
        eta.record(1.0);
        eta.record(1.0);
        // 2 runs left at 1 s; the second switch case proportional to N + 1000: 4 × 2000/1100 s; the
        // clone from the setup's full checkout (4 s) and its removal: 2 × 6 s.
        let left = eta.remaining().unwrap();
        assert!(
            (left - (2.0 + 4.0 * 2000.0 / 1100.0 + 12.0)).abs() < 1e-9,
            "{left}"
        );
        eta.record(1.0);
        eta.record(1.0);
        eta.start_case(1);
        eta.record(3.0);
        assert!((eta.remaining().unwrap() - (9.0 + 12.0)).abs() < 1e-9);
        // A case that ended early (its contenders failed) counts as over.
        let mut eta = Eta::new(vec![case("a", 100, false, 4), case("a", 100, false, 4)]);
        eta.record(2.0);
        eta.start_case(1);
        assert!((eta.remaining().unwrap() - 8.0).abs() < 1e-9);
        // A full checkout of another operation is predicted from the one measured.
        let mut eta = Eta::new(vec![
            case("worktree add", 500, true, 2),
            case("clone", 500, true, 2),
        ]);
        eta.record(5.0);
        assert!((eta.remaining().unwrap() - 15.0).abs() < 1e-9);
    }

    #[test]
    fn unmeasured_cases_are_predicted_by_a_line_through_the_measured_ones() {
        let predict = fit(&[(250.0, 1.0), (2000.0, 2.0)]);
        assert!((predict(40_000.0) - (1.0 + 39_750.0 / 1750.0)).abs() < 1e-9);
        // A cost falling with N is noise: flat, never negative.
        let predict = fit(&[(250.0, 2.0), (2000.0, 1.0)]);
        assert!((predict(40_000.0) - 1.5).abs() < 1e-9);
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let at = |secs| timestamp(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "19700101-000000");
        assert_eq!(at(951_782_400 + 3_723), "20000229-010203");
        assert_eq!(at(1_704_067_199), "20231231-235959");
    }
}
