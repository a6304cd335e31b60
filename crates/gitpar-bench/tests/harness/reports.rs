//! Reports and exports of hand-made results, so that every number in them is known.

use std::collections::BTreeMap;

use gitpar_bench::export::{
    self, CsvExporter, Exporter, JsonExporter, MarkdownExporter, SvgExporter,
};
use gitpar_bench::report::{self, Thresholds, Warning};
use gitpar_bench::run::{
    CaseResult, ContenderResult, Environment, Failure, Plan, Results, Round, Saved,
};
use gitpar_bench::stats::{Interval, Summary};

fn contender(name: &str, median: f64, saved: Option<(f64, f64, f64)>) -> ContenderResult {
    ContenderResult {
        name: name.to_owned(),
        command: vec![name.to_owned()],
        times: vec![median; 13],
        summary: Summary::of(&[median]),
        median_interval: Some(Interval {
            lo: median * 0.95,
            hi: median * 1.05,
        }),
        saved: saved.map(|(median, lo, hi)| Saved {
            median,
            interval: Some(Interval { lo, hi }),
        }),
        max_rss_kib: Some(10 * 1024),
        outliers: Vec::new(),
        failure: None,
        allocated: Vec::new(),
        allocated_median: None,
    }
}

fn case(n: usize, base: f64, workers: (f64, f64, f64), par: (f64, f64, f64)) -> CaseResult {
    CaseResult {
        operation: "switch".to_owned(),
        n,
        plan: Plan::default(),
        contenders: vec![
            contender("git (sequential)", base, None),
            contender("git -c checkout.workers=4", base - workers.0, Some(workers)),
            contender("git-par", base - par.0, Some(par)),
        ],
    }
}

/// The Dev Drive column of the seed's table, with a git-par column made up for the test.
fn results() -> Results {
    let mut facts = BTreeMap::new();
    facts.insert("repository".to_owned(), "synthetic, 40000 files".to_owned());
    let mut clone = case(40_000, 7.07, (2.56, 2.00, 3.13), (3.5, 3.2, 3.9));
    clone.operation = "worktree add".to_owned();
    clone.contenders[2].failure = Some(Failure {
        round: Round::Measured(2),
        message: "exit code 1: error: unknown switch".to_owned(),
    });
    clone.contenders[2].summary = None;
    clone.contenders[2].saved = None;
    Results {
        environment: Environment {
            filesystem: Some("ext4".to_owned()),
            facts,
        },
        cases: vec![
            case(250, 0.145, (0.010, 0.004, 0.016), (0.020, 0.012, 0.030)),
            case(500, 0.187, (0.0, -0.036, 0.007), (0.060, 0.050, 0.070)),
            case(2000, 0.461, (0.129, 0.061, 0.180), (0.300, 0.280, 0.320)),
            clone,
        ],
    }
}

#[test]
fn text_report_matches_the_write_ups() {
    let r = results();
    let table = report::time_table(&r, "switch").to_text();
    assert_eq!(
        table,
        "\
N files   git (sequential)   saved by git -c checkout.workers=4   saved by git-par
250       145 ms             10 ms [4, 16]                        20 ms [12, 30]
500       187 ms             0 ms [-36, 7]                        60 ms [50, 70]
2000      461 ms             129 ms [61, 180]                     300 ms [280, 320]
"
    );
    let text = report::render(&r, &report::warnings(&r, &Thresholds::default()));
    assert!(
        text.starts_with("filesystem: ext4\nrepository: synthetic, 40000 files\n"),
        "{text}"
    );
    assert!(
        text.contains("40000     7.07 s             2.56 s [2.00, 3.13]                  failed\n"),
        "{text}"
    );
    assert!(
        text.contains("\nswitch         250       10.0 MiB           10.0 MiB"),
        "{text}"
    );
}

#[test]
fn warnings_say_what_to_do() {
    let mut r = results();
    r.cases[0].contenders[2].outliers = vec![3, 7];
    let w = report::warnings(&r, &Thresholds::default());
    // 500: [-36, 7] is 43 ms wide, 23% of 187 ms; 2000: [61, 180] is 119 ms, 26% of 461 ms.
    let wide: Vec<(usize, &str)> = w
        .iter()
        .filter_map(|w| match w {
            Warning::WideInterval { n, contender, .. } => Some((*n, contender.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        wide,
        [
            (500, "git -c checkout.workers=4"),
            (2000, "git -c checkout.workers=4")
        ]
    );
    assert!(w.contains(&Warning::Outliers {
        operation: "switch".into(),
        n: 250,
        contender: "git-par".into(),
        count: 2,
        runs: 13,
    }));
    let failed = w
        .iter()
        .find(|w| matches!(w, Warning::ContenderFailed { .. }))
        .unwrap();
    assert_eq!(
        failed.to_string(),
        "worktree add (N = 40000): git-par failed at round 3 and has no result: exit code 1: error: unknown switch. \
         Run its command by hand in a prepared directory to see why"
    );
    let wide = w
        .iter()
        .find(|w| matches!(w, Warning::WideInterval { n: 500, .. }))
        .unwrap()
        .to_string();
    assert!(
        wide.contains("0 ms [-36, 7], has an interval 23% as wide as the baseline's 187 ms"),
        "{wide}"
    );
    assert!(wide.contains("Run more rounds"), "{wide}");
}

#[test]
fn json_round_trips() {
    let r = results();
    let bytes = JsonExporter.export(&r).unwrap();
    let back: Results = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(back, r);
}

#[test]
fn csv_has_one_row_per_contender() {
    let csv = String::from_utf8(CsvExporter.export(&results()).unwrap()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 4 * 3);
    assert!(lines[0].starts_with("operation,n,contender,baseline,runs,median_s,"));
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[2].split(',').collect();
    assert_eq!(row.len(), header.len());
    let field = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        &row[..5],
        [
            "switch",
            "250",
            "git -c checkout.workers=4",
            "git (sequential)",
            "13"
        ]
    );
    // Shortest round-trip formatting: the CSV reads back to the very numbers of the results.
    assert_eq!(field("median_s").parse::<f64>().unwrap(), 0.145 - 0.010);
    assert_eq!(
        (field("saved_s"), field("saved_lo_s"), field("saved_hi_s")),
        ("0.01", "0.004", "0.016")
    );
    assert_eq!(
        (field("max_rss_kib"), field("outliers"), field("failure")),
        ("10240", "0", "")
    );
    assert_eq!(
        lines[1].split(',').nth(12),
        Some(""),
        "the baseline saves nothing"
    );
    assert!(
        lines[12].ends_with(",round 3: exit code 1: error: unknown switch"),
        "{}",
        lines[12]
    );
}

#[test]
fn markdown_and_svg() {
    let r = results();
    let md = String::from_utf8(MarkdownExporter.export(&r).unwrap()).unwrap();
    assert!(md.contains("### switch"));
    assert!(
        md.contains("| 500 | 187 ms | 0 ms [-36, 7] | 60 ms [50, 70] |"),
        "{md}"
    );
    assert!(md.contains("### worktree add"));

    let svg = String::from_utf8(SvgExporter::default().export(&r).unwrap()).unwrap();
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">git -c checkout.workers=4</text>"));
    assert_eq!(
        svg.matches("<circle").count(),
        3 * 3 + 2,
        "one point per median; the failed one has none"
    );
    assert_eq!(
        svg.matches("<polyline").count(),
        3,
        "one line per contender with several Ns"
    );
}

#[test]
fn files_are_written_atomically() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("results.json");
    for exporter in export::all() {
        let path = path.with_extension(exporter.extension());
        export::write_atomically(&path, &exporter.export(&results()).unwrap()).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        4,
        "no temporary file left"
    );
}

/// A worktree add measured with its disk allocation: git writes 9.5 MiB, git-par as much, git-par from a
/// donor 0.4 MiB in 98% of git-par's time.
fn with_disk() -> Results {
    let mut case = CaseResult {
        operation: "worktree add".to_owned(),
        n: 2000,
        plan: Plan::default(),
        contenders: vec![
            contender("git (sequential)", 0.200, None),
            contender("git-par", 0.100, Some((0.1, 0.09, 0.11))),
            contender("git-par --donor", 0.098, Some((0.102, 0.09, 0.11))),
        ],
    };
    let mib = |x: f64| x * 1024.0 * 1024.0;
    for (c, bytes) in case.contenders.iter_mut().zip([9.5, 9.6, 0.4]) {
        c.allocated = vec![mib(bytes) as i64; 13];
        c.allocated_median = Some(mib(bytes));
    }
    Results {
        cases: vec![case],
        ..Results::default()
    }
}

#[test]
fn disk_is_reported_with_ratios_to_git_par() {
    let r = with_disk();
    assert_eq!(report::disk_table(&results(), "switch"), None);
    let table = report::disk_table(&r, "worktree add").unwrap();
    assert!(
        table.title.contains("ratios to git-par's"),
        "{}",
        table.title
    );
    assert_eq!(
        table.to_text(),
        "\
N files   git (sequential)               git-par    git-par --donor
2000      9.50 MiB (0.99x, time 2.00x)   9.60 MiB   0.40 MiB (0.042x, time 0.98x)
"
    );
    let text = report::render(&r, &[]);
    assert!(text.contains(&table.to_text()), "{text}");
    let md = String::from_utf8(MarkdownExporter.export(&r).unwrap()).unwrap();
    assert!(
        md.contains(
            "| 2000 | 9.50 MiB (0.99x, time 2.00x) | 9.60 MiB | 0.40 MiB (0.042x, time 0.98x) |"
        ),
        "{md}"
    );

    let csv = String::from_utf8(CsvExporter.export(&r).unwrap()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let field = |line: usize, name: &str| {
        lines[line]
            .split(',')
            .nth(header.iter().position(|h| *h == name).unwrap())
            .unwrap()
    };
    assert_eq!(field(2, "allocated_bytes"), "10066329.6");
    assert_eq!(field(2, "allocated_ratio"), "1");
    assert_eq!(field(3, "allocated_bytes"), "419430.4");
    assert_eq!(
        field(3, "allocated_ratio").parse::<f64>().unwrap(),
        0.4 / 9.6
    );
    // Without a disk measurement the columns are empty.
    let csv = String::from_utf8(CsvExporter.export(&results()).unwrap()).unwrap();
    assert!(csv.lines().nth(1).unwrap().ends_with(",10240,,,0,"));

    let bytes = JsonExporter.export(&r).unwrap();
    assert_eq!(export::read_json(&bytes).unwrap(), r);
    let json = String::from_utf8(bytes).unwrap();
    assert!(json.contains("\"allocated_median\": 419430.4"), "{json}");
    // Results written before the disk was measured still read.
    let old = String::from_utf8(JsonExporter.export(&results()).unwrap()).unwrap();
    assert!(!old.contains("allocated"));
    assert_eq!(export::read_json(old.as_bytes()).unwrap(), results());
}
