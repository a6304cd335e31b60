//! `--threads-sweep`: git-par's throughput against its writer count on one full checkout, so that the
//! automatic choice can be seen against the counts around it.
//!
//! The contenders are git-par with `-j K` for each K of the list (the first is the baseline of the
//! usual tables) and git-par with no count (its automatic choice), interleaved as in any case. Every
//! git-par run has `GIT_PAR_TRACE` set, which makes a `worktree add` or a `clone` print the writer count it
//! used (`git-par: N files, K writers, ...`, the most threads at once when the count grew at run time);
//! the sweep reads it from the automatic runs' stderr to mark where the choice sits in the table.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::Table;
use crate::run::{Case, Event, Results};

use super::contenders::Spec;
use super::experiment::{Observer, PlannedCase};
use super::operation::Operation;

/// The writer counts swept when `--threads-sweep` is given no list.
pub const DEFAULT_COUNTS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The contenders of a sweep over `counts`: `git-par -j K` for each, then git-par's automatic choice.
pub fn contenders(counts: &[usize]) -> Vec<Spec> {
    counts
        .iter()
        .map(|&k| Spec::GitParJobs(k))
        .chain([Spec::GitPar])
        .collect()
}

/// The operation a sweep measures: a full checkout whose writer count git-par reports.
pub fn operation(asked: &[Operation]) -> Result<Operation, String> {
    match asked {
        [] => Ok(Operation::WorktreeAdd),
        [op @ (Operation::WorktreeAdd | Operation::Clone)] => Ok(*op),
        _ => Err(
            "--threads-sweep measures one operation, worktree-add (the default) or clone"
                .to_owned(),
        ),
    }
}

/// The writer counts the automatic runs reported, per contender name.
#[derive(Debug, Default)]
pub struct Writers(BTreeMap<String, BTreeSet<usize>>);

impl Writers {
    /// Reads the trace line of one run's stderr, if it has one.
    pub fn record(&mut self, contender: &str, stderr: &str) {
        if let Some(k) = stderr.lines().find_map(parse_trace) {
            self.0.entry(contender.to_owned()).or_default().insert(k);
        }
    }

    /// What the automatic choice used, as `K` or `K-L` when runs differed, if it reported it.
    pub fn of(&self, contender: &str) -> Option<String> {
        let set = self.0.get(contender)?;
        let (lo, hi) = (set.first()?, set.last()?);
        Some(if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        })
    }
}

/// The writer count of git-par's trace line `git-par: 40000 files, 2 writers, 0 blobs streamed`.
fn parse_trace(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("git-par: ")?;
    let writers = rest.split(", ").nth(1)?.strip_suffix(" writers")?;
    writers.parse().ok()
}

/// An observer that passes everything on and reads the writer counts from the runs' stderr.
pub struct Tracing<'o> {
    /// The observer shown everything.
    pub inner: &'o mut dyn Observer,
    /// What the runs reported.
    pub writers: Writers,
}

impl Observer for Tracing<'_> {
    fn series_started(&mut self, cases: &[PlannedCase]) {
        self.inner.series_started(cases);
    }

    fn setup(&mut self, what: &str, checkouts: usize) {
        self.inner.setup(what, checkouts);
    }

    fn case_started(&mut self, index: usize, total: usize, case: &Case, contenders: usize) {
        self.inner.case_started(index, total, case, contenders);
    }

    fn event(&mut self, event: &Event<'_>) {
        if let Event::Measured { run, measurement } = event {
            self.writers
                .record(&run.contender.name, &measurement.stderr);
        }
        self.inner.event(event);
    }

    fn case_done(&mut self, results: &Results) -> anyhow::Result<()> {
        self.inner.case_done(results)
    }
}

/// The sweep's table: per writer count, the median time, the files written per second and the speed-up
/// against the first count; the automatic choice last, with the count it used.
pub fn table(results: &Results, writers: &Writers) -> Option<Table> {
    let case = results.cases.first()?;
    let base = case.baseline()?.summary.as_ref()?.median;
    let mut rows = Vec::new();
    for c in &case.contenders {
        let auto = c.name == Spec::GitPar.name();
        let label = if auto {
            match writers.of(&c.name) {
                Some(k) => format!("auto: {k}"),
                None => "auto (count not reported)".to_owned(),
            }
        } else {
            c.name
                .strip_prefix("git-par -j ")
                .unwrap_or(&c.name)
                .to_owned()
        };
        let row = match &c.summary {
            Some(s) if c.failure.is_none() && s.median > 0.0 => vec![
                label,
                format!("{:.3} s", s.median),
                format!("{:.0}", case.n as f64 / s.median),
                format!("{:.2}x", base / s.median),
            ],
            _ => vec![label, "failed".into(), String::new(), String::new()],
        };
        rows.push(row);
    }
    Some(Table {
        title: format!(
            "threads sweep: git-par {} of {} files, median of {} interleaved rounds",
            case.operation, case.n, case.plan.runs
        ),
        header: ["writers", "median", "files/s", "speed-up"]
            .map(String::from)
            .into(),
        rows,
    })
}

/// The sweep as CSV, one row per writer count (the automatic choice with `auto` set and the count it used).
pub fn csv(results: &Results, writers: &Writers) -> String {
    let mut out = String::from("operation,n,writers,auto,median_s,files_per_s\n");
    let Some(case) = results.cases.first() else {
        return out;
    };
    for c in &case.contenders {
        let auto = c.name == Spec::GitPar.name();
        let count = if auto {
            writers.of(&c.name).unwrap_or_default()
        } else {
            c.name
                .strip_prefix("git-par -j ")
                .unwrap_or_default()
                .to_owned()
        };
        let (median, rate) = match &c.summary {
            Some(s) if c.failure.is_none() && s.median > 0.0 => (
                format!("{}", s.median),
                format!("{:.1}", case.n as f64 / s.median),
            ),
            _ => (String::new(), String::new()),
        };
        out.push_str(&format!(
            "{},{},{count},{auto},{median},{rate}\n",
            case.operation, case.n
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_give_the_writer_count() {
        assert_eq!(
            parse_trace("git-par: 40000 files, 2 writers, 0 blobs streamed"),
            Some(2)
        );
        assert_eq!(parse_trace("warning: something"), None);
        let mut w = Writers::default();
        w.record(
            "git-par",
            "x\ngit-par: 10 files, 4 writers, 0 blobs streamed",
        );
        assert_eq!(w.of("git-par").as_deref(), Some("4"));
        w.record("git-par", "git-par: 10 files, 8 writers, 0 blobs streamed");
        assert_eq!(w.of("git-par").as_deref(), Some("4-8"));
        assert_eq!(w.of("git-par -j 1"), None);
    }

    #[test]
    fn one_operation_is_swept() {
        assert_eq!(operation(&[]), Ok(Operation::WorktreeAdd));
        assert_eq!(operation(&[Operation::Clone]), Ok(Operation::Clone));
        assert!(operation(&[Operation::Switch]).is_err());
        assert!(operation(&[Operation::Clone, Operation::WorktreeAdd]).is_err());
        assert_eq!(
            contenders(&[1, 2]),
            [Spec::GitParJobs(1), Spec::GitParJobs(2), Spec::GitPar]
        );
    }
}
