//! The text report: the tables of the project's benchmark write-ups, and warnings that say what to do.
//!
//! One table per operation, one row per N, the baseline's median time in the first column and, for every
//! other contender, the time it saved with its 95% interval:
//!
//! ```text
//! N files   git (sequential)   saved by git-par
//! 250       145 ms             40 ms [27, 66]
//! ```
//!
//! Times in a row share the unit of the baseline's median (seconds from 1 s up, milliseconds below), so
//! that an interval reads at the precision of the number it qualifies.

use std::fmt;
use std::path::PathBuf;

use crate::filesystem::FsKind;
use crate::run::{CaseResult, ContenderResult, Failure, Results};
use crate::stats::{Interval, OUTLIER_Z};

/// A table of cells, rendered as aligned text or Markdown from the same content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// What the table shows, e.g. the operation.
    pub title: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Rows of cells, each as long as `header`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Renders the table as plain text: left-aligned columns three spaces apart, as in the write-ups, and
    /// readable in a terminal or a commit message. The title is not included.
    pub fn to_text(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if c + 1 < row.len() {
                    let pad = widths[c] - cell.chars().count() + 3;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Renders the table as a GitHub-flavoured Markdown table, numbers right-aligned. The title is not
    /// included.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = String::new();
        out.push_str(&format!(
            "| {} |\n",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        out.push_str(&format!("|{}\n", "---:|".repeat(self.header.len())));
        for row in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                row.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }
}

/// Returns the operations of `results` in the order they were first run: one table each.
pub fn operations(results: &Results) -> Vec<&str> {
    let mut ops: Vec<&str> = Vec::new();
    for case in &results.cases {
        if !ops.contains(&case.operation.as_str()) {
            ops.push(&case.operation);
        }
    }
    ops
}

/// The unit of a row: chosen from the baseline's median so that every number in the row has a sensible
/// precision (a 7 s clone in hundredths of seconds, a 145 ms switch in whole milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Seconds with two decimals, from 1 s.
    Seconds,
    /// Whole milliseconds, from 10 ms.
    Millis,
    /// Milliseconds with one decimal, below 10 ms (tiny repositories, tests).
    FineMillis,
}

impl Scale {
    /// Returns the scale for a row whose reference time is `seconds`.
    pub fn for_seconds(seconds: f64) -> Self {
        if seconds.abs() >= 1.0 {
            Self::Seconds
        } else if seconds.abs() >= 0.01 {
            Self::Millis
        } else {
            Self::FineMillis
        }
    }

    fn number(self, seconds: f64) -> String {
        let (value, decimals) = match self {
            Self::Seconds => (seconds, 2),
            Self::Millis => (seconds * 1e3, 0),
            Self::FineMillis => (seconds * 1e3, 1),
        };
        let p = 10f64.powi(decimals);
        let mut rounded = (value * p).round() / p;
        if rounded == 0.0 {
            rounded = 0.0; // no "-0"
        }
        format!("{:.*}", decimals as usize, rounded)
    }

    fn unit(self) -> &'static str {
        match self {
            Self::Seconds => "s",
            Self::Millis | Self::FineMillis => "ms",
        }
    }

    /// Formats a duration given in seconds, with its unit: `145 ms`, `2.56 s`.
    pub fn duration(self, seconds: f64) -> String {
        format!("{} {}", self.number(seconds), self.unit())
    }

    /// Formats a value and its interval: `40 ms [27, 66]`.
    pub fn with_interval(self, seconds: f64, interval: Option<&Interval>) -> String {
        match interval {
            Some(i) => format!(
                "{} [{}, {}]",
                self.duration(seconds),
                self.number(i.lo),
                self.number(i.hi)
            ),
            None => self.duration(seconds),
        }
    }
}

fn contender_names(cases: &[&CaseResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for case in cases {
        for c in &case.contenders {
            if !names.contains(&c.name) {
                names.push(c.name.clone());
            }
        }
    }
    names
}

fn cases_of<'r>(results: &'r Results, operation: &str) -> Vec<&'r CaseResult> {
    results
        .cases
        .iter()
        .filter(|c| c.operation == operation)
        .collect()
}

/// Returns the time table of `operation`: the baseline's median, then the time saved by each contender
/// with its interval, one row per N in the order run.
///
/// A contender that failed shows `failed`; one that was not part of a case shows `-`.
pub fn time_table(results: &Results, operation: &str) -> Table {
    let cases = cases_of(results, operation);
    let names = contender_names(&cases);
    let mut header = vec!["N files".to_owned()];
    for (i, name) in names.iter().enumerate() {
        header.push(if i == 0 {
            name.clone()
        } else {
            format!("saved by {name}")
        });
    }
    let rows = cases
        .iter()
        .map(|case| {
            let scale = Scale::for_seconds(
                case.baseline()
                    .and_then(|b| b.summary)
                    .map_or(0.0, |s| s.median),
            );
            let mut row = vec![case.n.to_string()];
            for name in &names {
                let c = case.contenders.iter().position(|c| &c.name == name);
                row.push(match c {
                    None => "-".to_owned(),
                    Some(i) => time_cell(&case.contenders[i], i == 0, scale),
                });
            }
            row
        })
        .collect();
    Table {
        title: operation.to_owned(),
        header,
        rows,
    }
}

fn time_cell(c: &ContenderResult, baseline: bool, scale: Scale) -> String {
    if c.failure.is_some() {
        return "failed".to_owned();
    }
    if baseline {
        return c
            .summary
            .map_or_else(|| "-".to_owned(), |s| scale.duration(s.median));
    }
    c.saved.map_or_else(
        || "-".to_owned(),
        |s| scale.with_interval(s.median, s.interval.as_ref()),
    )
}

/// Formats a size in KiB as MiB (or GiB from 10 GiB), the unit in which checkout memory is discussed.
pub fn format_kib(kib: u64) -> String {
    let mib = kib as f64 / 1024.0;
    if mib >= 10.0 * 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

/// The name of the contender that disk allocations and times are compared with in [`disk_table`]:
/// git-par with its defaults, the plain checkout that a checkout from a donor is measured against.
pub const REFERENCE: &str = "git-par";

/// Returns the contender of `case` that ratios are taken against: [`REFERENCE`] if the case has it,
/// else the baseline.
pub fn reference(case: &CaseResult) -> Option<&ContenderResult> {
    case.contenders
        .iter()
        .find(|c| c.name == REFERENCE)
        .or_else(|| case.baseline())
}

/// Returns `c`'s median allocation as a fraction of the [`reference()`]'s, if both were measured and the
/// reference allocated anything.
pub fn allocated_ratio(case: &CaseResult, c: &ContenderResult) -> Option<f64> {
    let base = reference(case)?.allocated_median.filter(|&b| b > 0.0)?;
    Some(c.allocated_median? / base)
}

/// Returns `c`'s median time as a fraction of the [`reference()`]'s.
pub fn time_ratio(case: &CaseResult, c: &ContenderResult) -> Option<f64> {
    let base = reference(case)?.summary?.median;
    (base > 0.0).then_some(c.summary?.median / base)
}

/// Formats a number of bytes as MiB, with two decimals below 10 MiB (a small tree, or what clones
/// allocate), one above.
pub fn format_mib(bytes: f64) -> String {
    let mib = bytes / (1024.0 * 1024.0);
    let decimals = if mib.abs() < 10.0 { 2 } else { 1 };
    let p = 10f64.powi(decimals);
    let mut rounded = (mib * p).round() / p;
    if rounded == 0.0 {
        rounded = 0.0; // no "-0"
    }
    format!("{:.*} MiB", decimals as usize, rounded)
}

/// Formats a ratio: `0.98x` from 0.1 up, two significant digits below (`0.042x`, `0.00013x`), where
/// a goal like "1% of the disk" needs them.
pub fn format_ratio(r: f64) -> String {
    if r.abs() >= 0.1 || r == 0.0 || !r.is_finite() {
        return format!("{r:.2}x");
    }
    let decimals = (1.0 - r.abs().log10().floor()) as usize;
    format!("{r:.decimals$}x")
}

/// Returns the disk table of `operation`, or `None` if no run of it measured its allocation: per N and
/// contender, the median bytes a run allocated, and for every contender other than the [`reference()`]
/// its allocation and its median time as ratios to the reference's, e.g. `0.41 MiB (0.042x, time
/// 0.98x)`.
pub fn disk_table(results: &Results, operation: &str) -> Option<Table> {
    let cases = cases_of(results, operation);
    if !cases
        .iter()
        .flat_map(|c| &c.contenders)
        .any(|c| !c.allocated.is_empty())
    {
        return None;
    }
    let names = contender_names(&cases);
    let mut header = vec!["N files".to_owned()];
    header.extend(names.iter().cloned());
    let rows = cases
        .iter()
        .map(|case| {
            let reference = reference(case).map(|r| r.name.as_str());
            let mut row = vec![case.n.to_string()];
            for name in &names {
                let cell = match case.contenders.iter().find(|c| &c.name == name) {
                    None => "-".to_owned(),
                    Some(c) if c.failure.is_some() => "failed".to_owned(),
                    Some(c) => match c.allocated_median {
                        None => "-".to_owned(),
                        Some(bytes) if reference == Some(name.as_str()) => format_mib(bytes),
                        Some(bytes) => {
                            let ratios: Vec<String> = [
                                allocated_ratio(case, c).map(format_ratio),
                                time_ratio(case, c).map(|r| format!("time {}", format_ratio(r))),
                            ]
                            .into_iter()
                            .flatten()
                            .collect();
                            if ratios.is_empty() {
                                format_mib(bytes)
                            } else {
                                format!("{} ({})", format_mib(bytes), ratios.join(", "))
                            }
                        }
                    },
                };
                row.push(cell);
            }
            row
        })
        .collect();
    let reference = cases
        .first()
        .and_then(|c| reference(c))
        .map_or(REFERENCE, |r| r.name.as_str());
    Some(Table {
        title: format!(
            "{operation}: disk allocated per run (median; blocks used after less before, each read after \
             a sync); in brackets the allocation and the median time as ratios to {reference}'s"
        ),
        header,
        rows,
    })
}

/// Returns the peak-memory table of every case, or `None` if no run reported its memory.
///
/// The numbers are the peak RSS of the largest single process of each command (what `wait4` reports),
/// so a command that spreads work over several processes at once uses more than its number here.
pub fn memory_table(results: &Results) -> Option<Table> {
    if !results
        .cases
        .iter()
        .flat_map(|c| &c.contenders)
        .any(|c| c.max_rss_kib.is_some())
    {
        return None;
    }
    let all: Vec<&CaseResult> = results.cases.iter().collect();
    let names = contender_names(&all);
    let mut header = vec!["operation".to_owned(), "N files".to_owned()];
    header.extend(names.iter().cloned());
    let rows = all
        .iter()
        .map(|case| {
            let mut row = vec![case.operation.clone(), case.n.to_string()];
            for name in &names {
                let kib = case
                    .contenders
                    .iter()
                    .find(|c| &c.name == name)
                    .and_then(|c| c.max_rss_kib);
                row.push(kib.map_or_else(|| "-".to_owned(), format_kib));
            }
            row
        })
        .collect();
    Some(Table {
        title: "peak memory (max RSS of the largest process)".to_owned(),
        header,
        rows,
    })
}

/// Renders the whole text report: environment, one table per operation, peak memory, then `warnings`.
pub fn render(results: &Results, warnings: &[Warning]) -> String {
    let mut out = String::new();
    let env = &results.environment;
    out.push_str(&format!(
        "filesystem: {}\n",
        env.filesystem.as_deref().unwrap_or("unknown")
    ));
    for (k, v) in &env.facts {
        out.push_str(&format!("{k}: {v}\n"));
    }
    for op in operations(results) {
        let runs = cases_of(results, op).first().map_or(0, |c| c.plan.runs);
        out.push_str(&format!(
            "\n{op}: medians of {runs} interleaved rounds; saved = median paired difference [95% bootstrap interval]\n"
        ));
        out.push_str(&time_table(results, op).to_text());
        if let Some(t) = disk_table(results, op) {
            out.push_str(&format!("\n{}\n{}", t.title, t.to_text()));
        }
    }
    if let Some(t) = memory_table(results) {
        out.push_str(&format!("\n{}\n{}", t.title, t.to_text()));
    }
    if !warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in warnings {
            out.push_str(&format!("- {w}\n"));
        }
    }
    out
}

/// When [`warnings`] speaks up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// An interval of the time saved wider than this fraction of the baseline's median is "wide": the
    /// measurement cannot tell differences of that size apart. 0.2 by default.
    pub interval_fraction: f64,
    /// This many outliers or more in one contender's rounds trigger a warning. 2 by default: one outlier
    /// in 13 rounds is common, moves no median, and a warning for each would drown the ones that matter.
    pub outliers: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            interval_fraction: 0.2,
            outliers: 2,
        }
    }
}

/// Deleting at least this many files on a disk filesystem is a "mass deletion" that slows the next file
/// creations down (see [`Warning::RecentMassDeletion`]).
pub const MASS_DELETION_FILES: u64 = 10_000;

/// Something that makes a result less trustworthy than its numbers look, with what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// The interval of the time saved is wide compared with the time itself.
    WideInterval {
        /// The case's operation.
        operation: String,
        /// The case's N.
        n: usize,
        /// The contender.
        contender: String,
        /// Median time saved, in seconds.
        saved: f64,
        /// Its interval, in seconds.
        interval: Interval,
        /// The baseline's median time, in seconds.
        baseline: f64,
    },
    /// Some rounds of a contender were outliers.
    Outliers {
        /// The case's operation.
        operation: String,
        /// The case's N.
        n: usize,
        /// The contender.
        contender: String,
        /// How many rounds were outliers.
        count: usize,
        /// Out of how many.
        runs: usize,
    },
    /// A contender failed, so it has no result for this case.
    ContenderFailed {
        /// The case's operation.
        operation: String,
        /// The case's N.
        n: usize,
        /// The contender.
        contender: String,
        /// Its first failure.
        failure: Failure,
    },
    /// Many files were deleted on a disk filesystem during the series (e.g. the checkouts of earlier runs),
    /// which makes creating files there slower for a while.
    RecentMassDeletion {
        /// Where the files were deleted.
        path: PathBuf,
        /// The filesystem there.
        filesystem: FsKind,
        /// How many files were deleted.
        files: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WideInterval {
                operation,
                n,
                contender,
                saved,
                interval,
                baseline,
            } => {
                let scale = Scale::for_seconds(*baseline);
                write!(
                    f,
                    "{operation} (N = {n}): the time saved by {contender}, {}, has an interval {:.0}% as wide as the \
                     baseline's {}; differences of that size are not resolved. Run more rounds, close other programs, \
                     or fix the CPU frequency, and compare again",
                    scale.with_interval(*saved, Some(interval)),
                    100.0 * interval.width() / baseline,
                    scale.duration(*baseline),
                )
            }
            Self::Outliers {
                operation,
                n,
                contender,
                count,
                runs,
            } => write!(
                f,
                "{operation} (N = {n}): {count} of {runs} rounds of {contender} {} (modified Z-score above \
                 {OUTLIER_Z}). Something else was probably running; medians resist a few outliers, but for cleaner \
                 numbers use a quiet machine and more warm-up runs",
                if *count == 1 { "was an outlier" } else { "were outliers" }
            ),
            Self::ContenderFailed {
                operation,
                n,
                contender,
                failure,
            } => write!(
                f,
                "{operation} (N = {n}): {contender} failed at {} and has no result: {}. Run its command by hand in a \
                 prepared directory to see why",
                failure.round, failure.message
            ),
            Self::RecentMassDeletion { path, filesystem, files } => write!(
                f,
                "{files} files were deleted under {} ({filesystem}) during the series: on a disk filesystem, creating \
                 files right after mass deletions is slower (ext4 scans recently freed inodes), so later runs pay more \
                 than earlier ones. Measure on a freshly made filesystem (mkfs a loop image between series) or on \
                 tmpfs, or say so with the results",
                path.display()
            ),
        }
    }
}

/// Returns the warnings that the statistics of `results` call for: wide intervals, outliers and failures.
/// [`Warning::RecentMassDeletion`] depends on what the fixtures did, so it comes from
/// [`mass_deletion_warning`] instead.
pub fn warnings(results: &Results, thresholds: &Thresholds) -> Vec<Warning> {
    let mut out = Vec::new();
    for case in &results.cases {
        let baseline = case.baseline().and_then(|b| b.summary).map(|s| s.median);
        for c in &case.contenders {
            let (operation, n, contender) = (case.operation.clone(), case.n, c.name.clone());
            if let Some(failure) = &c.failure {
                out.push(Warning::ContenderFailed {
                    operation,
                    n,
                    contender,
                    failure: failure.clone(),
                });
                continue;
            }
            if c.outliers.len() >= thresholds.outliers.max(1) {
                out.push(Warning::Outliers {
                    operation: operation.clone(),
                    n,
                    contender: contender.clone(),
                    count: c.outliers.len(),
                    runs: c.times.len(),
                });
            }
            if let (Some(saved), Some(base)) = (c.saved, baseline) {
                if let Some(interval) = saved.interval {
                    if base > 0.0 && interval.width() > thresholds.interval_fraction * base {
                        out.push(Warning::WideInterval {
                            operation,
                            n,
                            contender,
                            saved: saved.median,
                            interval,
                            baseline: base,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Returns a [`Warning::RecentMassDeletion`] if `files` deletions under `path` (on `filesystem`) are enough to
/// slow later file creations: at least [`MASS_DELETION_FILES`], on anything but memory.
///
/// Fixtures that remove checkouts between runs count what they removed and ask this at the end of a series.
pub fn mass_deletion_warning(
    path: impl Into<PathBuf>,
    filesystem: FsKind,
    files: u64,
) -> Option<Warning> {
    (files >= MASS_DELETION_FILES && !filesystem.is_memory()).then(|| Warning::RecentMassDeletion {
        path: path.into(),
        filesystem,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_keep_two_significant_digits_below_a_tenth() {
        assert_eq!(format_ratio(0.98), "0.98x");
        assert_eq!(format_ratio(2.0), "2.00x");
        assert_eq!(format_ratio(0.042), "0.042x");
        assert_eq!(format_ratio(0.000125), "0.00013x");
        assert_eq!(format_ratio(0.0), "0.00x");
        assert_eq!(format_mib(0.4 * 1048576.0), "0.40 MiB");
        assert_eq!(format_mib(320.0 * 1048576.0), "320.0 MiB");
    }

    #[test]
    fn scales_round_like_the_write_ups() {
        assert_eq!(Scale::for_seconds(0.145).duration(0.145), "145 ms");
        assert_eq!(Scale::for_seconds(7.07), Scale::Seconds);
        assert_eq!(
            Scale::Seconds.with_interval(2.56, Some(&Interval { lo: 2.0, hi: 3.13 })),
            "2.56 s [2.00, 3.13]"
        );
        assert_eq!(
            Scale::Millis.with_interval(
                -0.0004,
                Some(&Interval {
                    lo: -0.036,
                    hi: 0.007
                })
            ),
            "0 ms [-36, 7]"
        );
        assert_eq!(Scale::for_seconds(0.0042).duration(0.0042), "4.2 ms");
    }

    #[test]
    fn text_and_markdown_tables() {
        let t = Table {
            title: "switch".into(),
            header: vec![
                "N files".into(),
                "git (sequential)".into(),
                "saved by git-par".into(),
            ],
            rows: vec![vec!["250".into(), "145 ms".into(), "40 ms [27, 66]".into()]],
        };
        assert_eq!(
            t.to_text(),
            "N files   git (sequential)   saved by git-par\n250       145 ms             40 ms [27, 66]\n"
        );
        assert_eq!(
            t.to_markdown(),
            "| N files | git (sequential) | saved by git-par |\n|---:|---:|---:|\n| 250 | 145 ms | 40 ms [27, 66] |\n"
        );
    }

    #[test]
    fn mass_deletions_matter_on_disks_only() {
        assert!(mass_deletion_warning("/tmp", FsKind::Ext4, 40_000).is_some());
        assert!(mass_deletion_warning("/dev/shm", FsKind::Tmpfs, 40_000).is_none());
        assert!(mass_deletion_warning("/tmp", FsKind::Ext4, 100).is_none());
        let w = mass_deletion_warning("/tmp", FsKind::Ext4, 40_000)
            .unwrap()
            .to_string();
        assert!(
            w.contains("40000 files were deleted under /tmp (ext4)"),
            "{w}"
        );
    }

    #[test]
    fn formats_memory() {
        assert_eq!(format_kib(2048), "2.0 MiB");
        assert_eq!(format_kib(20 * 1024 * 1024), "20.0 GiB");
    }
}
