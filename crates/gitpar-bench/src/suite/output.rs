//! What `git par bench` shows and writes: progress on stderr, the report on stdout, and the result files
//! (JSON, CSV, Markdown, SVG plot), rewritten after every case.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::export::{self, CsvExporter, Exporter, JsonExporter, MarkdownExporter, SvgExporter};
use crate::report::{self, Thresholds, Warning};
use crate::run::{Case, Event, Plan, Results, Round};
use anyhow::{bail, Context as _};

use super::experiment::Observer;

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
/// printed, so a log says how far a series got without thousands of lines.
pub struct Console<'a> {
    exports: &'a Exports,
    /// Runs and warm-ups per contender, which events do not carry.
    plan: Plan,
    quiet: bool,
    tty: bool,
    case: String,
    contenders: usize,
    started: Instant,
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
            contenders: 0,
            started: Instant::now(),
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
}

fn round_text(round: Round, runs: usize, warmup: usize) -> String {
    match round {
        Round::Warmup(i) => format!("warm-up {}/{warmup}", i + 1),
        Round::Measured(i) => format!("run {}/{runs}", i + 1),
    }
}

impl Observer for Console<'_> {
    fn case_started(&mut self, index: usize, total: usize, case: &Case, contenders: usize) {
        self.case = format!("{} N={}", case.operation, case.n);
        self.contenders = contenders;
        self.started = Instant::now();
        self.failed.clear();
        self.say(&format!("[{}/{total}] {}", index + 1, self.case));
    }

    fn event(&mut self, event: &Event<'_>) {
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
                "\r\x1b[K  {}: {progress}, {} ({:.0} s)",
                self.case,
                run.contender.name,
                self.started.elapsed().as_secs_f64()
            );
            let _ = std::io::stderr().flush();
        } else if run.index + 1 == self.contenders {
            eprintln!("  {}: {progress}", self.case);
        }
    }

    fn case_done(&mut self, results: &Results) -> anyhow::Result<()> {
        if self.tty && !self.quiet {
            eprint!("\r\x1b[K");
        }
        self.exports.write(results)
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
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let at = |secs| timestamp(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "19700101-000000");
        assert_eq!(at(951_782_400 + 3_723), "20000229-010203");
        assert_eq!(at(1_704_067_199), "20231231-235959");
    }
}
