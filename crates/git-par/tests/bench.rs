//! `git par bench` end to end on tiny repositories: the report is printed, the result files exist and
//! parse, every run's checkout is removed, failures are reported as warnings. No time is ever asserted:
//! the numbers depend on the machine, only their presence and shape are checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gitpar_bench::run::{CaseResult, Results};

/// The CSV header the exporter writes; a change here is a change of the file format.
const CSV_HEADER: &str =
    "operation,n,contender,baseline,runs,median_s,mean_s,stddev_s,min_s,max_s,\
median_lo_s,median_hi_s,saved_s,saved_lo_s,saved_hi_s,max_rss_kib,allocated_bytes,allocated_ratio,outliers,failure";

/// A scratch directory with the bench's cache and checkouts directory inside.
struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(tmp.path().join("checkouts")).expect("create checkouts");
        Self { tmp }
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    fn cache(&self) -> PathBuf {
        self.path().join("cache")
    }

    fn checkouts(&self) -> PathBuf {
        self.path().join("checkouts")
    }

    /// Runs `git par bench --dir <checkouts> ARGS` with the cache in the scratch directory.
    fn bench(&self, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_git-par"))
            .arg("bench")
            .arg("--dir")
            .arg(self.checkouts())
            .args(args)
            .env("GITPAR_BENCH_CACHE", self.cache())
            // The default contenders include gitoxide where it is installed: these tests pin it absent
            // (or give a fake one), so that their tables do not depend on the machine.
            .env("GITPAR_BENCH_GIX", self.path().join("no-gix-here"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .current_dir(self.path())
            .output()
            .expect("run git-par");
        Run { output }
    }
}

struct Run {
    output: Output,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    #[track_caller]
    fn assert_success(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "git par bench failed ({}):\nstdout:\n{}\nstderr:\n{}",
            self.output.status,
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// The files listed under "results written to:", in order.
    fn result_files(&self) -> Vec<PathBuf> {
        self.stdout()
            .lines()
            .skip_while(|l| *l != "results written to:")
            .skip(1)
            .map(|l| PathBuf::from(l.trim()))
            .collect()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cases(results: &Results) -> Vec<(&str, usize)> {
    results
        .cases
        .iter()
        .map(|c| (c.operation.as_str(), c.n))
        .collect()
}

fn names(case: &CaseResult) -> Vec<&str> {
    case.contenders.iter().map(|c| c.name.as_str()).collect()
}

/// Asserts that `contender` measured every round of `case` and has a result.
#[track_caller]
fn assert_measured(case: &CaseResult, contender: &str, runs: usize) {
    let c = case
        .contenders
        .iter()
        .find(|c| c.name == contender)
        .unwrap_or_else(|| panic!("{contender} is not in {} {}", case.operation, case.n));
    assert!(
        c.failure.is_none(),
        "{contender} failed on {} {}: {:?}",
        case.operation,
        case.n,
        c.failure
    );
    assert_eq!(
        c.times.len(),
        runs,
        "{contender} on {} {}",
        case.operation,
        case.n
    );
    assert!(c.summary.is_some() && c.max_rss_kib.is_some());
    if contender != case.contenders[0].name {
        assert!(c.saved.is_some_and(|s| s.interval.is_some()));
    }
}

#[test]
fn quick_run_prints_the_tables_and_writes_every_result_file() {
    let s = Scratch::new();
    let run = s.bench(&["--quick", "--files", "300", "--runs", "2"]);
    run.assert_success();
    let stdout = run.stdout();
    // gitoxide, a default contender, is absent: left out with a note, once.
    assert_eq!(
        stdout.matches("gitoxide is left out").count(),
        1,
        "{stdout}"
    );

    // The report: filesystem, one table per operation with the baseline and the time saved, memory.
    assert!(stdout.contains("filesystem: "), "{stdout}");
    for op in ["switch", "worktree add", "clone"] {
        assert!(
            stdout.contains(&format!(
                "\n{op}: medians of 2 interleaved rounds; saved = median paired difference"
            )),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("N files   git (sequential)   saved by git workers=4   saved by git-par\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\n25  "), "a row for N = 25:\n{stdout}");
    assert!(stdout.contains("\n50  "), "a row for N = 50:\n{stdout}");
    assert!(stdout.contains("\n300  "), "a row for N = 300:\n{stdout}");
    assert!(stdout.contains("peak memory"), "{stdout}");
    // Progress went to stderr, one line per case at least.
    let stderr = run.stderr();
    assert!(stderr.contains("[1/5] switch N=25"), "{stderr}");
    assert!(
        stderr.contains("[3/5] switch (loose blobs) N=30"),
        "{stderr}"
    );
    assert!(stderr.contains("[5/5] clone N=300"), "{stderr}");
    assert!(stderr.contains("run 2/2"), "{stderr}");
    assert!(
        stderr.contains(" left"),
        "an estimate of the time left:\n{stderr}"
    );
    assert!(stderr.contains("bench done in "), "{stderr}");

    // Four files, by default in the results directory of the cache.
    let files = run.result_files();
    let exts: Vec<_> = files
        .iter()
        .map(|f| f.extension().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(exts, ["json", "csv", "md", "svg"], "{stdout}");
    for f in &files {
        assert!(f.starts_with(s.cache().join("results")), "{}", f.display());
    }

    // JSON: every case, every contender; the git contenders and git-par's worktree add and clone measured.
    let results = gitpar_bench::export::read_json(read(&files[0]).as_bytes()).expect("JSON parses");
    assert_eq!(
        cases(&results),
        [
            ("switch", 25),
            ("switch", 50),
            ("switch (loose blobs)", 30),
            ("worktree add", 300),
            ("clone", 300)
        ]
    );
    for case in &results.cases {
        assert_eq!(
            names(case),
            ["git (sequential)", "git workers=4", "git-par"]
        );
        assert_measured(case, "git (sequential)", 2);
        assert_measured(case, "git workers=4", 2);
        if case.operation.starts_with("switch") {
            // `git par switch` is younger than the bench: if this build lacks it (or it fails), the bench
            // says so in a warning and measures the others.
            let par = &case.contenders[2];
            if par.failure.is_some() {
                let warning = format!("switch (N = {}): git-par failed", case.n);
                assert!(stdout.contains(&warning), "{stdout}");
            } else {
                assert_measured(case, "git-par", 2);
            }
        } else {
            assert_measured(case, "git-par", 2);
        }
    }
    let filesystem = results.environment.filesystem.as_deref().unwrap();
    assert!(filesystem.contains("checkouts in "), "{filesystem}");
    assert!(results.environment.facts.contains_key("git"));
    // The delta chains of main's blobs, in the report and the exports' metadata.
    let chains = &results.environment.facts["pack of main"];
    assert!(
        chains.starts_with("300 blobs by delta depth: 0: "),
        "{chains}"
    );
    assert!(
        stdout.contains(&format!("pack of main: {chains}\n")),
        "{stdout}"
    );

    // CSV: the header and one row per case and contender, in order.
    let csv = read(&files[1]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(CSV_HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.splitn(4, ',').collect()).collect();
    assert_eq!(rows.len(), 15, "{csv}");
    assert_eq!(rows[0][..3], ["switch", "25", "git (sequential)"]);
    assert_eq!(rows[5][..3], ["switch", "50", "git-par"]);
    assert_eq!(
        rows[6][..3],
        ["switch (loose blobs)", "30", "git (sequential)"]
    );
    assert_eq!(rows[10][..3], ["worktree add", "300", "git workers=4"]);
    assert_eq!(rows[14][..3], ["clone", "300", "git-par"]);

    // Markdown tables, and an SVG document with one panel per operation.
    assert!(read(&files[2]).contains("| N files | git (sequential) |"));
    let svg = read(&files[3]);
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">worktree add</text>"));

    // Every checkout was removed, and no worktree is left registered in the repository.
    let left: Vec<_> = std::fs::read_dir(s.checkouts()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let repo = std::fs::read_dir(s.cache())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("synth-")
        })
        .expect("the synthetic repository is cached");
    let worktrees = repo.join(".git/worktrees");
    assert!(
        !worktrees.exists() || std::fs::read_dir(&worktrees).unwrap().next().is_none(),
        "worktrees left registered in {}",
        worktrees.display()
    );
}

#[test]
fn command_templates_run_and_their_failures_are_warnings() {
    let s = Scratch::new();
    let json = s.path().join("out/r.json");
    let csv = s.path().join("out/r.csv");
    let plot = s.path().join("out/r.svg");
    let run = s.bench(&[
        "--files",
        "50",
        "--diffs",
        "5",
        "--runs",
        "2",
        "--operations",
        "worktree-add",
        "--contenders",
        "git,cmd(template):git worktree add -q --detach {dst} {rev}",
        // A template takes the rest of its value, commas included: the next one needs its own option.
        "--contenders",
        "cmd(broken):git no-such-command {dst}",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "--quiet",
    ]);
    run.assert_success();
    assert_eq!(run.stderr(), "", "--quiet shows no progress");
    let files = run.result_files();
    assert_eq!(files[0], json);
    assert_eq!(files[1], csv);
    assert_eq!(files[3], plot);
    assert!(read(&plot).starts_with("<svg"));

    let results = gitpar_bench::export::read_json(read(&json).as_bytes()).unwrap();
    assert_eq!(cases(&results), [("worktree add", 50)]);
    let case = &results.cases[0];
    assert_eq!(names(case), ["git (sequential)", "template", "broken"]);
    assert_measured(case, "template", 2);
    let broken = case.contenders[2].failure.as_ref().expect("broken fails");
    assert!(
        broken.message.contains("no-such-command"),
        "{}",
        broken.message
    );
    let stdout = run.stdout();
    assert!(
        stdout.contains("worktree add (N = 50): broken failed at warm-up run 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("   failed\n"),
        "the table shows the failure:\n{stdout}"
    );
    assert!(read(&csv)
        .lines()
        .nth(3)
        .unwrap()
        .contains("no-such-command"));
}

/// Runs git in `dir` for a fixture, with a fixed identity.
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env_remove("GIT_DIR")
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// A new repository `name` in the scratch directory, on branch `trunk`, with `files` files `f<i>.txt`
/// holding `<i>`, not committed yet.
fn repository_of_small_files(s: &Scratch, name: &str, files: usize) -> PathBuf {
    let repo = s.path().join(name);
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "trunk"]);
    for i in 0..files {
        std::fs::write(repo.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    repo
}

#[test]
fn a_real_repository_is_benched_on_commit_pairs_of_its_history() {
    let s = Scratch::new();
    // 40 files, then commits changing 2, 4, 8 and 16 of them: switching back from HEAD to older commits
    // changes 16, 24, 28 and 30 files.
    let repo = repository_of_small_files(&s, "repo", 40);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let mut first = 0;
    for k in [2, 4, 8, 16] {
        for i in first..first + k {
            std::fs::write(repo.join(format!("f{i}.txt")), format!("{i} changed\n")).unwrap();
        }
        first += k;
        git(&repo, &["commit", "-q", "-am", &format!("change {k}")]);
    }

    let run = s.bench(&[
        "--repo",
        repo.to_str().unwrap(),
        "--diffs",
        "16,29",
        "--runs",
        "2",
        "--operations",
        "switch,worktree-add",
        "--contenders",
        "git,git-workers=2",
    ]);
    run.assert_success();
    let files = run.result_files();
    let results = gitpar_bench::export::read_json(read(&files[0]).as_bytes()).unwrap();
    assert_eq!(
        cases(&results),
        [
            ("switch", 16),
            ("switch", 28),
            ("switch (loose blobs)", 4),
            ("worktree add", 40)
        ],
        "29 is matched by the closest pair, 28 files; the loose commit changes a tenth of 40"
    );
    for case in &results.cases {
        assert_measured(case, "git workers=2", 2);
    }
    assert!(
        run.stdout()
            .contains(&repo.canonicalize().unwrap().display().to_string()),
        "the report names the repository"
    );
    // The user's repository was only read.
    assert!(!repo.join(".git/worktrees").exists());
}

#[test]
fn a_partial_clone_is_benched_without_the_paths_whose_blobs_it_lacks() {
    let s = Scratch::new();
    // 30 small files and one of 4 KB, which the partial clone below leaves out (as public snapshots
    // leave out blobs of 4 MiB and more); then commits changing 4 and 8 small files, and the big one.
    let src = repository_of_small_files(&s, "src", 30);
    let big: String = (0..400).map(|i| format!("line {i:5}\n")).collect();
    std::fs::write(src.join("big.txt"), &big).unwrap();
    git(&src, &["add", "."]);
    git(&src, &["commit", "-q", "-m", "base"]);
    for (first, k) in [(0, 4), (4, 8)] {
        for i in first..first + k {
            std::fs::write(src.join(format!("f{i}.txt")), format!("{i} changed\n")).unwrap();
        }
        git(&src, &["commit", "-q", "-am", &format!("change {k}")]);
    }
    std::fs::write(src.join("big.txt"), big + "one more\n").unwrap();
    git(&src, &["commit", "-q", "-am", "big"]);
    git(&src, &["config", "uploadpack.allowFilter", "true"]);
    let url = format!("file://{}", src.display());
    git(
        s.path(),
        &[
            "clone",
            "-q",
            "--no-checkout",
            "--filter=blob:limit=1k",
            &url,
            "part",
        ],
    );
    let part = s.path().join("part");

    let run = s.bench(&[
        "--repo",
        part.to_str().unwrap(),
        "--diffs",
        "8,12",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--operations",
        "switch,worktree-add",
        "--contenders",
        "git,git-par",
    ]);
    run.assert_success();
    let stdout = run.stdout();
    assert!(
        stdout.contains("note: left out of main and of the switch targets: 1 path, whose blobs"),
        "{stdout}"
    );
    let results = gitpar_bench::export::read_json(read(&run.result_files()[0]).as_bytes()).unwrap();
    // big.txt differs between HEAD and every older commit, but it is left out of all of them: the
    // switches write only the small files, and the worktree add the 30 of main.
    assert_eq!(
        cases(&results),
        [
            ("switch", 8),
            ("switch", 12),
            ("switch (loose blobs)", 3),
            ("worktree add", 30)
        ]
    );
    for case in &results.cases {
        assert_measured(case, "git-par", 1);
    }
    let chains = &results.environment.facts["pack of main"];
    assert!(chains.starts_with("30 blobs by delta depth: "), "{chains}");
    // Nothing was fetched: the clone still lacks the blob.
    let lacks = Command::new("git")
        .args(["cat-file", "-e", "HEAD:big.txt"])
        .current_dir(&part)
        .env("GIT_NO_LAZY_FETCH", "1")
        .env_remove("GIT_DIR")
        .status()
        .unwrap();
    assert!(!lacks.success());
}

#[test]
fn prepare_only_makes_the_repository_and_prints_its_path() {
    let s = Scratch::new();
    let run = s.bench(&["--prepare-only", "--files", "50", "--diffs", "5"]);
    run.assert_success();
    let stdout = run.stdout();
    let path = PathBuf::from(stdout.trim_end());
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(path.starts_with(s.cache()), "{stdout}");
    assert!(path.join(".git").is_dir(), "{stdout}");
    assert!(
        run.stderr().contains("pack of main: 50 blobs"),
        "{}",
        run.stderr()
    );
    // Nothing was measured: no checkouts, no results.
    assert!(std::fs::read_dir(s.checkouts()).unwrap().next().is_none());
    let results = s.cache().join("results");
    assert!(!results.exists() || std::fs::read_dir(&results).unwrap().next().is_none());
}

#[test]
fn bad_options_fail_before_any_work() {
    let s = Scratch::new();
    let png = s.bench(&["--quick", "--plot", "plot.png"]);
    assert_eq!(png.output.status.code(), Some(128));
    assert!(png.stderr().contains("PNG"), "{}", png.stderr());

    let hg = s.bench(&["--quick", "--contenders", "git,hg"]);
    assert_eq!(hg.output.status.code(), Some(128));
    assert!(
        hg.stderr().contains("unknown contender `hg`"),
        "{}",
        hg.stderr()
    );
    assert!(
        !s.cache().exists(),
        "nothing was generated or written before the options were checked"
    );
}

/// A stand-in for gitoxide's `gix` that does what the bench asks of it with git: `index from-tree -f -i
/// INDEX REV` reads the tree into INDEX, `free index -i INDEX checkout-exclusive -r REPO DIR` writes its
/// files into the new DIR. With `BREAK` in the environment it leaves one file wrong.
const FAKE_GIX: &str = r#"#!/bin/sh
set -e
case "$1 $2" in
"index from-tree") git read-tree --index-output="$5" "$6" ;;
"free index")
  index=$4 repo=$7 dir=$8
  mkdir "$dir"
  GIT_DIR="$repo/.git" GIT_INDEX_FILE="$index" GIT_WORK_TREE="$dir" git checkout-index -a
  if [ -n "$BREAK" ]; then echo wrong > "$dir/$(cd "$dir" && find . -type f | head -n 1)"; fi ;;
*) echo "fake gix: unexpected $*" >&2; exit 2 ;;
esac
"#;

#[test]
fn gitoxide_is_measured_on_worktree_add_and_its_files_are_checked() {
    let s = Scratch::new();
    let gix = s.path().join("gix");
    std::fs::write(&gix, FAKE_GIX).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&gix, std::fs::Permissions::from_mode(0o755)).unwrap();
    let contenders = format!("git,gix={}", gix.display());
    let args = [
        "--files",
        "60",
        "--diffs",
        "5",
        "--runs",
        "2",
        "--contenders",
        &contenders,
    ];
    let run = s.bench(&args);
    run.assert_success();
    let stdout = run.stdout();
    assert!(
        stdout.contains("note: gix is left out of switch, clone: its contender is a full checkout"),
        "{stdout}"
    );
    let results = gitpar_bench::export::read_json(read(&run.result_files()[0]).as_bytes()).unwrap();
    for case in &results.cases {
        if case.operation == "worktree add" {
            assert_eq!(names(case), ["git (sequential)", "gix"]);
            assert_measured(case, "gix", 2);
        } else {
            assert_eq!(names(case), ["git (sequential)"], "{}", case.operation);
        }
    }
    // Its scratch index is removed with the run's directory.
    let left: Vec<_> = std::fs::read_dir(s.checkouts()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");

    // A gix that leaves a wrong file fails the check of its files, like a wrong git work tree.
    let broken = Command::new(env!("CARGO_BIN_EXE_git-par"))
        .arg("bench")
        .arg("--dir")
        .arg(s.checkouts())
        .args(args)
        .args(["--operations", "worktree-add"])
        .env("GITPAR_BENCH_CACHE", s.cache())
        .env("BREAK", "1")
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&broken.stdout);
    assert!(broken.status.success(), "{stdout}");
    assert!(
        stdout.contains("gix failed at warm-up run 1") && stdout.contains("is not clean: M\t"),
        "{stdout}"
    );
}

#[test]
fn a_threads_sweep_shows_throughput_against_the_writer_count() {
    let s = Scratch::new();
    let run = s.bench(&[
        "--files",
        "200",
        "--diffs",
        "5",
        "--runs",
        "2",
        "--threads-sweep=1,4",
    ]);
    run.assert_success();
    let stdout = run.stdout();
    let title =
        "threads sweep: git-par worktree add of 200 files, median of 2 interleaved rounds\n";
    let table = &stdout[stdout.find(title).expect(&stdout) + title.len()..];
    let lines: Vec<&str> = table.lines().take(4).collect();
    // Columns are as wide as their widest cell ("auto: 2-4" when the rounds chose differently).
    assert!(
        lines[0].starts_with("writers ") && lines[0].contains(" median "),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("1  ") && lines[1].ends_with("1.00x"),
        "{stdout}"
    );
    assert!(lines[2].starts_with("4  "), "{stdout}");
    // The automatic choice, with the count git-par reported (git-par never starts more writers than
    // one per 16 files on tmpfs or a disk, nor fewer than one).
    assert!(lines[3].starts_with("auto: "), "{stdout}");
    let files = run.result_files();
    let csv = read(files.last().unwrap());
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "operation,n,writers,auto,median_s,files_per_s");
    assert!(rows[1].starts_with("worktree add,200,1,false,"), "{csv}");
    assert!(rows[3].starts_with("worktree add,200,"), "{csv}");
    assert!(rows[3].contains(",true,"), "{csv}");

    let bad = s.bench(&["--threads-sweep", "--operations", "switch"]);
    assert_eq!(bad.output.status.code(), Some(128));
    assert!(bad
        .stderr()
        .contains("--threads-sweep measures one operation"));
}
