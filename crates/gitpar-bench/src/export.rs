//! Writing results to files: one [`Exporter`] per format, as in hyperfine.
//!
//! - [`JsonExporter`]: everything, raw times included, for other tools and for comparing series later;
//! - [`CsvExporter`]: one summary row per (operation, N, contender), for spreadsheets;
//! - [`MarkdownExporter`]: the report's tables, for READMEs and pull requests;
//! - [`SvgExporter`]: time against N for each contender with interval bars, one panel per operation.
//!
//! Exporters are pure (results in, bytes out); [`write_atomically`] puts the bytes in place, so that a
//! binary can rewrite its files after every case and a crash never leaves a half-written one.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::report;
use crate::run::{CaseResult, Results};
use crate::stats::Interval;

/// Why results could not be exported.
///
/// An I/O failure's message includes its cause, which is therefore not also given as `source()`: a printer
/// of error chains shows it once.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Serialization to JSON failed (it does not with the types of this crate, but serde's API says it may).
    #[error("could not serialize the results to JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The file could not be written.
    #[error("could not write {}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: io::Error,
    },
}

/// One output format.
pub trait Exporter {
    /// The usual file extension of the format, without the dot, for naming output files.
    fn extension(&self) -> &'static str;

    /// Returns `results` in this format.
    fn export(&self, results: &Results) -> Result<Vec<u8>, Error>;
}

/// Returns one exporter of each format, for a binary that writes them all.
pub fn all() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(JsonExporter),
        Box::new(CsvExporter),
        Box::new(MarkdownExporter),
        Box::new(SvgExporter::default()),
    ]
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so that readers
/// see the old file or the new one, never a truncated one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io_err = |cause| Error::Io {
        path: path.to_owned(),
        cause,
    };
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(name);
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io_err)
}

/// The whole [`Results`] as pretty-printed JSON (times in seconds, memory in KiB), readable back with
/// serde into the same types.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn extension(&self) -> &'static str {
        "json"
    }

    fn export(&self, results: &Results) -> Result<Vec<u8>, Error> {
        let mut out = serde_json::to_vec_pretty(results)?;
        out.push(b'\n');
        Ok(out)
    }
}

/// Reads back what [`JsonExporter`] wrote, e.g. to compare two series or to check an export in a test.
pub fn read_json(bytes: &[u8]) -> Result<Results, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// One row per (operation, N, contender) with the summary, the time saved and its interval (seconds),
/// the peak RSS (KiB), the median bytes a run allocated on disk and its ratio to git-par's (see
/// [`report::disk_table`]), the outlier count and the failure, if any. Empty cells stand for "not applicable".
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExporter;

/// Quotes a CSV field when it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map_or_else(String::new, |x| x.to_string())
}

impl Exporter for CsvExporter {
    fn extension(&self) -> &'static str {
        "csv"
    }

    fn export(&self, results: &Results) -> Result<Vec<u8>, Error> {
        let mut out = String::from(
            "operation,n,contender,baseline,runs,median_s,mean_s,stddev_s,min_s,max_s,median_lo_s,median_hi_s,\
             saved_s,saved_lo_s,saved_hi_s,max_rss_kib,allocated_bytes,allocated_ratio,outliers,failure\n",
        );
        for case in &results.cases {
            let baseline = case.baseline().map_or("", |b| b.name.as_str());
            for c in &case.contenders {
                let s = c.summary;
                let saved_interval = c.saved.and_then(|s| s.interval);
                let fields = [
                    csv_field(&case.operation),
                    case.n.to_string(),
                    csv_field(&c.name),
                    csv_field(baseline),
                    c.times.len().to_string(),
                    opt(s.map(|s| s.median)),
                    opt(s.map(|s| s.mean)),
                    opt(s.map(|s| s.stddev)),
                    opt(s.map(|s| s.min)),
                    opt(s.map(|s| s.max)),
                    opt(c.median_interval.map(|i| i.lo)),
                    opt(c.median_interval.map(|i| i.hi)),
                    opt(c.saved.map(|s| s.median)),
                    opt(saved_interval.map(|i| i.lo)),
                    opt(saved_interval.map(|i| i.hi)),
                    opt(c.max_rss_kib),
                    opt(c.allocated_median),
                    opt(report::allocated_ratio(case, c)),
                    c.outliers.len().to_string(),
                    c.failure.as_ref().map_or_else(String::new, |f| {
                        csv_field(&format!("{}: {}", f.round, f.message))
                    }),
                ];
                out.push_str(&fields.join(","));
                out.push('\n');
            }
        }
        Ok(out.into_bytes())
    }
}

/// The report's tables in Markdown: the environment, one table per operation, and peak memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn extension(&self) -> &'static str {
        "md"
    }

    fn export(&self, results: &Results) -> Result<Vec<u8>, Error> {
        let mut out = String::new();
        let env = &results.environment;
        let _ = writeln!(
            out,
            "Filesystem: {}",
            env.filesystem.as_deref().unwrap_or("unknown")
        );
        for (k, v) in &env.facts {
            let _ = writeln!(out, "{k}: {v}  ");
        }
        for op in report::operations(results) {
            let runs = results
                .cases
                .iter()
                .find(|c| c.operation == op)
                .map_or(0, |c| c.plan.runs);
            let _ = write!(
                out,
                "\n### {op}\n\nMedians of {runs} interleaved rounds; time saved is the median paired difference \
                 with its 95% bootstrap interval.\n\n{}",
                report::time_table(results, op).to_markdown()
            );
            if let Some(t) = report::disk_table(results, op) {
                let _ = write!(out, "\n{}\n\n{}", t.title, t.to_markdown());
            }
        }
        if let Some(t) = report::memory_table(results) {
            let _ = write!(out, "\n### {}\n\n{}", t.title, t.to_markdown());
        }
        Ok(out.into_bytes())
    }
}

/// A line chart per operation, stacked vertically: median time (y, from 0) against N (x, logarithmic when
/// the Ns span a factor of 4 or more, as 250..2000 do), one line per contender, with bars for the bootstrap
/// interval of each median. Hand-written SVG: a plotting crate would cost more compile time than the
/// chart is worth.
#[derive(Debug, Clone, Copy)]
pub struct SvgExporter {
    /// Width of the image in pixels, at least; it grows to fit long contender names in the legend.
    pub width: u32,
    /// Height of one operation's panel in pixels.
    pub panel_height: u32,
}

impl Default for SvgExporter {
    fn default() -> Self {
        Self {
            width: 760,
            panel_height: 380,
        }
    }
}

/// Colours of the contenders, in order (a colour-blind-safe palette, Okabe and Ito).
const PALETTE: &[&str] = &[
    "#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
];

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A "nice" step (1, 2 or 5 times a power of ten) that divides `max` into about five ticks.
fn nice_step(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let raw = max / 5.0;
    // A whole power of ten, below 1 as one division by an exact one: `powf` of a negative
    // exponent is not correctly rounded everywhere (Windows' gives 10^-2 as 0.010000000000000002).
    let exp = raw.log10().floor() as i32;
    let pow = if exp >= 0 {
        10f64.powi(exp)
    } else {
        1.0 / 10f64.powi(-exp)
    };
    let m = raw / pow;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * pow
}

impl SvgExporter {
    /// Draws one operation's panel in a `width`-wide image whose right `legend` pixels hold the legend:
    /// its frame (title, axes, grid and ticks), then one series per contender, in first-seen order.
    fn panel(
        &self,
        out: &mut String,
        cases: &[&CaseResult],
        operation: &str,
        top: f64,
        width: f64,
        legend: f64,
    ) {
        let mut ns: Vec<usize> = cases.iter().map(|c| c.n).collect();
        ns.sort_unstable();
        ns.dedup();
        let frame = Frame::new(cases, &ns, f64::from(self.panel_height), top, width, legend);
        frame.draw(out, operation, &ns);
        let mut names: Vec<&str> = Vec::new();
        for c in cases.iter().flat_map(|c| &c.contenders) {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
        for (k, name) in names.iter().enumerate() {
            frame.series(out, cases, name, k, names.len());
        }
    }
}

/// Where one panel's figures land: the plot area in image pixels and the scales that map a case's N
/// (x, logarithmic when the sizes span a factor of 4 or more) and a time in seconds (y, from 0 to a
/// round `ytop`) into it.
struct Frame {
    /// The top of the panel, above its title.
    top: f64,
    /// Left and right of the plot area.
    x0: f64,
    x1: f64,
    /// Bottom (the time axis's 0) and top of the plot area: SVG's y grows downwards.
    y0: f64,
    y1: f64,
    /// The smallest and largest N of the cases.
    nmin: f64,
    nmax: f64,
    /// Whether N is on a logarithmic scale.
    log: bool,
    /// The time at the top of the y axis, and the grid's step.
    ytop: f64,
    step: f64,
    /// How times are written on the y axis and in the points' titles.
    scale: report::Scale,
}

impl Frame {
    /// The frame of a panel `height` pixels high from `top` in a `width`-wide image, for `cases`
    /// of sizes `ns` (sorted, distinct): the y axis reaches the largest median or interval bound.
    fn new(
        cases: &[&CaseResult],
        ns: &[usize],
        height: f64,
        top: f64,
        width: f64,
        legend: f64,
    ) -> Self {
        let (w, h) = (width, height);
        let (left, right, head, foot) = (70.0, legend, 40.0, 50.0);
        let (x0, x1, y0, y1) = (left, w - right, top + h - foot, top + head);
        let (nmin, nmax) = (ns[0] as f64, ns[ns.len() - 1] as f64);
        let log = nmin > 0.0 && nmax / nmin >= 4.0;
        let mut ymax: f64 = 0.0;
        for c in cases.iter().flat_map(|c| &c.contenders) {
            if let Some(s) = c.summary {
                ymax = ymax.max(s.median);
            }
            if let Some(i) = c.median_interval {
                ymax = ymax.max(i.hi);
            }
        }
        let step = nice_step(ymax);
        let ytop = (ymax / step).ceil().max(1.0) * step;
        Self {
            top,
            x0,
            x1,
            y0,
            y1,
            nmin,
            nmax,
            log,
            ytop,
            step,
            scale: report::Scale::for_seconds(ytop),
        }
    }

    /// The x of size `n`: centred when every case has one size, else 20 pixels in from each side.
    fn tx(&self, n: f64) -> f64 {
        let (x0, x1, nmin, nmax) = (self.x0, self.x1, self.nmin, self.nmax);
        if nmax == nmin {
            return (x0 + x1) / 2.0;
        }
        let t = if self.log {
            (n.ln() - nmin.ln()) / (nmax.ln() - nmin.ln())
        } else {
            (n - nmin) / (nmax - nmin)
        };
        x0 + 20.0 + t * (x1 - x0 - 40.0)
    }

    /// The y of `s` seconds.
    fn ty(&self, s: f64) -> f64 {
        self.y0 - (s / self.ytop) * (self.y0 - self.y1)
    }

    /// Draws the panel's title (`operation`), its axes, the time grid and the ticks of the sizes `ns`.
    fn draw(&self, out: &mut String, operation: &str, ns: &[usize]) {
        let (top, x0, x1, y0, y1) = (self.top, self.x0, self.x1, self.y0, self.y1);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="15" font-weight="bold">{}</text>"#,
            x0,
            top + 24.0,
            xml_escape(operation)
        );
        // Axes, grid and ticks.
        let _ = writeln!(
            out,
            r##"<path d="M{x0},{y1} V{y0} H{x1}" fill="none" stroke="#333"/>"##
        );
        let mut v = 0.0;
        while v <= self.ytop + self.step / 2.0 {
            let y = self.ty(v);
            let _ = writeln!(
                out,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
                x0 - 6.0,
                y + 4.0,
                self.scale.duration(v)
            );
            v += self.step;
        }
        for &n in ns {
            let x = self.tx(n as f64);
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="#333"/><text x="{x:.1}" y="{}" text-anchor="middle" font-size="11">{n}</text>"##,
                y0 + 5.0,
                y0 + 18.0
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="12">N files</text>"#,
            (x0 + x1) / 2.0,
            y0 + 38.0
        );
    }

    /// Draws contender `name`'s series, the `k`th of `count`: its medians joined by a line, each
    /// with the bar of its interval (set apart from the other contenders' by a few pixels), and its
    /// entry in the legend.
    fn series(&self, out: &mut String, cases: &[&CaseResult], name: &str, k: usize, count: usize) {
        let colour = PALETTE[k % PALETTE.len()];
        // (N, median, interval of the median), in order of N.
        let mut points: Vec<(f64, f64, Option<Interval>)> = cases
            .iter()
            .filter_map(|case| {
                let c = case.contenders.iter().find(|c| c.name == name)?;
                let s = c.summary?;
                Some((case.n as f64, s.median, c.median_interval))
            })
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if points.len() > 1 {
            let d: Vec<String> = points
                .iter()
                .map(|&(n, m, _)| format!("{:.1},{:.1}", self.tx(n), self.ty(m)))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
                d.join(" ")
            );
        }
        for &(n, m, interval) in &points {
            let x = self.tx(n) + (k as f64 - (count as f64 - 1.0) / 2.0) * 3.0; // keep bars apart
            if let Some(Interval { lo, hi }) = interval {
                let _ = writeln!(
                    out,
                    r#"<path d="M{:.1},{:.1} H{:.1} M{x:.1},{:.1} V{:.1} M{:.1},{:.1} H{:.1}" stroke="{colour}" fill="none"/>"#,
                    x - 4.0,
                    self.ty(lo),
                    x + 4.0,
                    self.ty(lo),
                    self.ty(hi),
                    x - 4.0,
                    self.ty(hi),
                    x + 4.0
                );
            }
            let _ = writeln!(
                out,
                r#"<circle cx="{x:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{}: N = {n}, median {}</title></circle>"#,
                self.ty(m),
                xml_escape(name),
                self.scale.duration(m)
            );
        }
        let ly = self.y1 + 18.0 * k as f64;
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{}" y="{:.1}" font-size="12">{}</text>"#,
            self.x1 + 16.0,
            ly - 10.0,
            self.x1 + 34.0,
            ly,
            xml_escape(name)
        );
    }
}

impl Exporter for SvgExporter {
    fn extension(&self) -> &'static str {
        "svg"
    }

    fn export(&self, results: &Results) -> Result<Vec<u8>, Error> {
        let ops = report::operations(results);
        let height = self.panel_height as usize * ops.len().max(1);
        // Room for the longest name in the legend (about 7 px a character at 12 px), so none is cut off;
        // the image grows rather than the plot shrinking below 400 px.
        let longest = results
            .cases
            .iter()
            .flat_map(|c| &c.contenders)
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0);
        let legend = 50.0 + 7.0 * longest as f64;
        let width = f64::from(self.width).max(70.0 + 400.0 + legend).ceil();
        let mut out = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" \
             font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
            w = width
        );
        for (i, op) in ops.iter().enumerate() {
            let cases: Vec<&CaseResult> = results
                .cases
                .iter()
                .filter(|c| c.operation == *op)
                .collect();
            let top = f64::from(self.panel_height) * i as f64;
            self.panel(&mut out, &cases, op, top, width, legend);
        }
        out.push_str("</svg>\n");
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("git-par"), "git-par");
        assert_eq!(csv_field("git -c a=1,b"), "\"git -c a=1,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.461), 0.1);
        assert_eq!(nice_step(7.07), 2.0);
        assert_eq!(nice_step(0.0), 1.0);
    }

    #[test]
    fn xml_is_escaped() {
        assert_eq!(xml_escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
