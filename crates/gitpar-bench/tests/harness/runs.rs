//! The runner: interleaving, untimed setup and cleanup, failures, and the statistics of its results, with
//! scripted times; and the real process executor, with no assertion on time.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use gitpar_bench::run::{
    BoxError, Case, Contender, Event, Exit, Fixture, FnFixture, MockExecutor, Plan, Prepared,
    ProcessExecutor, Round, Run, Runner, Vars,
};
use gitpar_bench::stats::{self, Bootstrap};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn contenders() -> Vec<Contender> {
    vec![
        Contender::new(
            "git (sequential)",
            ["git", "-C", "{dst}", "switch", "{branch}"],
        ),
        Contender::new("git-par", ["git-par", "-C", "{dst}", "switch", "{branch}"]),
    ]
}

/// A fixture that hands out a directory per run and logs every prepare and cleanup.
struct LoggingFixture {
    log: Rc<RefCell<Vec<String>>>,
}

impl Fixture for LoggingFixture {
    fn prepare(&mut self, run: &Run<'_>) -> Result<Prepared, BoxError> {
        let dir = PathBuf::from(format!("/runs/{}/{:?}", run.index, run.round));
        self.log
            .borrow_mut()
            .push(format!("prepare {} {}", run.contender.name, run.round));
        Ok(Prepared {
            vars: Vars::new()
                .set("dst", &dir)
                .set("branch", format!("diff-{}", run.case.n)),
            dir,
        })
    }

    fn cleanup(&mut self, run: &Run<'_>, prepared: Prepared) -> Result<(), BoxError> {
        self.log.borrow_mut().push(format!(
            "cleanup {} {}",
            run.contender.name,
            prepared.dir.display()
        ));
        Ok(())
    }
}

fn logging_fixture(log: Rc<RefCell<Vec<String>>>) -> LoggingFixture {
    LoggingFixture { log }
}

fn scripted() -> MockExecutor {
    let mut mock = MockExecutor::new();
    mock.times_ms("git (sequential)", [200, 150, 140, 160, 145, 155]);
    mock.times_ms("git-par", [150, 100, 120, 110, 105, 300]);
    mock
}

fn plan(runs: usize) -> Plan {
    Plan {
        runs,
        warmup: 1,
        bootstrap: Bootstrap::default(),
    }
}

#[test]
fn rounds_are_interleaved_after_a_warm_up_and_setup_is_per_run() {
    let mut mock = scripted();
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut fixture = logging_fixture(Rc::clone(&log));
    let case = Case::new("switch", 250);
    let mut events = Vec::new();
    Runner::new(&mut mock, plan(5))
        .run_observed(&case, &contenders(), &mut fixture, &mut |e| {
            if let Event::Measured { run, measurement } = e {
                events.push((run.index, run.round, measurement.wall.as_millis()));
            }
        })
        .unwrap();

    let order: Vec<&str> = mock.calls().iter().map(|c| c.contender.as_str()).collect();
    assert_eq!(order.len(), 12);
    assert!(
        order
            .chunks(2)
            .all(|pair| pair == ["git (sequential)", "git-par"]),
        "{order:?}"
    );
    let first = &mock.calls()[0];
    assert_eq!(
        first.argv,
        ["git", "-C", "/runs/0/Warmup(0)", "switch", "diff-250"]
    );
    assert_eq!(first.dir, PathBuf::from("/runs/0/Warmup(0)"));
    assert_eq!(events[0], (0, Round::Warmup(0), 200));
    assert_eq!(events[11], (1, Round::Measured(4), 300));

    let log = log.borrow();
    assert_eq!(log.len(), 24);
    assert_eq!(log[0], "prepare git (sequential) warm-up run 1");
    assert_eq!(log[1], "cleanup git (sequential) /runs/0/Warmup(0)");
    assert_eq!(log[3], "cleanup git-par /runs/1/Warmup(0)");
    assert_eq!(log[23], "cleanup git-par /runs/1/Measured(4)");
}

#[test]
fn results_have_exact_statistics() {
    let mut mock = scripted();
    let mut fixture = logging_fixture(Rc::default());
    let r = Runner::new(&mut mock, plan(5))
        .run(&Case::new("switch", 250), &contenders(), &mut fixture)
        .unwrap();
    assert_eq!((r.operation.as_str(), r.n), ("switch", 250));

    let base = &r.contenders[0];
    assert_eq!(
        base.times,
        [0.150, 0.140, 0.160, 0.145, 0.155],
        "warm-up not recorded"
    );
    let s = base.summary.unwrap();
    assert!(
        close(s.median, 0.150)
            && close(s.mean, 0.150)
            && close(s.min, 0.140)
            && close(s.max, 0.160)
    );
    assert_eq!(
        base.saved, None,
        "the baseline saves nothing against itself"
    );
    assert!(base.outliers.is_empty());

    let par = &r.contenders[1];
    // Sorted: 100 105 110 120 300 -> median 110, mean 735 / 5 = 147. Deviations from 110: 10 10 0 5 190
    // -> MAD 10; z(300) = 0.6745 * 190 / 10 = 12.8 > 3.5.
    let s = par.summary.unwrap();
    assert!(close(s.median, 0.110) && close(s.mean, 0.147));
    assert_eq!(par.outliers, [4]);
    // Differences per round: 50 20 50 40 -145 -> sorted -145 20 40 50 50 -> median 40 ms saved.
    let saved = par.saved.unwrap();
    assert!(close(saved.median, 0.040), "{saved:?}");
    let diffs = stats::paired_differences(&base.times, &par.times).unwrap();
    assert_eq!(saved.interval, Bootstrap::default().median_interval(&diffs));
    let i = saved.interval.unwrap();
    assert!(
        i.lo <= 0.040 && 0.040 <= i.hi && i.lo >= -0.145 && i.hi <= 0.050 + 1e-12,
        "{i:?}"
    );
    let mi = par.median_interval.unwrap();
    assert!(mi.lo >= 0.100 && mi.hi <= 0.300);
    assert_eq!(par.max_rss_kib, None);
}

#[test]
fn a_failing_contender_is_recorded_and_skipped_while_the_others_go_on() {
    let mut mock = MockExecutor::new();
    mock.times_ms("a", [10, 10, 11, 12]);
    mock.times_ms("b", [9, 9])
        .fail("b", 128, "fatal: not a git repository");
    mock.times_ms("c", [5, 5, 6, 7]);
    let cs = [
        Contender::new("a", ["a"]),
        Contender::new("b", ["b"]),
        Contender::new("c", ["c"]),
    ];
    let mut fixture = FnFixture::new(
        |_: &Run<'_>| {
            Ok(Prepared {
                dir: "/".into(),
                vars: Vars::new(),
            })
        },
        |_: &Run<'_>, _| Ok(()),
    );
    let r = Runner::new(&mut mock, plan(3))
        .run(&Case::new("clone", 40_000), &cs, &mut fixture)
        .unwrap();
    let calls: Vec<&str> = mock.calls().iter().map(|c| c.contender.as_str()).collect();
    assert_eq!(
        calls,
        ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "c"]
    );

    let b = &r.contenders[1];
    let failure = b.failure.as_ref().unwrap();
    assert_eq!(failure.round, Round::Measured(1));
    assert_eq!(
        failure.message,
        "exit code 128: fatal: not a git repository"
    );
    assert_eq!((b.summary, b.saved), (None, None));
    assert_eq!(
        b.times,
        [0.009],
        "the rounds before the failure are kept, raw"
    );

    let c = &r.contenders[2];
    // a - c per round: 10-5, 11-6, 12-7 = 5 ms each.
    assert!(close(c.saved.unwrap().median, 0.005));
    assert!(c.failure.is_none());
}

#[test]
fn a_missing_program_fails_its_contender_only() {
    let mut exec = ProcessExecutor::new();
    let cs = [
        Contender::new("true", ["true"]),
        Contender::new("missing", ["/nonexistent/git-par-bench-test"]),
    ];
    let mut fixture = FnFixture::new(
        |_: &Run<'_>| {
            Ok(Prepared {
                dir: std::env::temp_dir(),
                vars: Vars::new(),
            })
        },
        |_: &Run<'_>, _| Ok(()),
    );
    let r = Runner::new(&mut exec, plan(2))
        .run(&Case::new("noop", 1), &cs, &mut fixture)
        .unwrap();
    assert_eq!(r.contenders[0].times.len(), 2);
    assert!(r.contenders[0].max_rss_kib.unwrap() > 0);
    let failure = r.contenders[1].failure.as_ref().unwrap();
    assert_eq!(failure.round, Round::Warmup(0));
    assert!(
        failure.message.starts_with("could not run"),
        "{}",
        failure.message
    );
}

#[test]
fn setup_errors_stop_the_case() {
    let mut mock = scripted();
    let mut fixture = FnFixture::new(
        |_: &Run<'_>| Err("disk full".into()),
        |_: &Run<'_>, _| Ok(()),
    );
    let err = Runner::new(&mut mock, plan(5))
        .run(&Case::new("switch", 250), &contenders(), &mut fixture)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "preparing warm-up run 1 of git (sequential) for switch (N = 250): disk full"
    );
    // The cause is in the message only: a chain printer (anyhow's `{:#}`) must not print it twice.
    assert!(std::error::Error::source(&err).is_none());
    assert!(mock.calls().is_empty());

    let mut fixture = FnFixture::new(
        |_: &Run<'_>| {
            Ok(Prepared {
                dir: "/".into(),
                vars: Vars::new(),
            })
        },
        |_: &Run<'_>, _| Ok(()),
    );
    let err = Runner::new(&mut mock, plan(5))
        .run(&Case::new("switch", 250), &contenders(), &mut fixture)
        .unwrap_err();
    assert!(err.to_string().contains("uses {dst}"), "{err}");
}

#[cfg(unix)]
#[test]
fn process_executor_reports_exit_stderr_and_memory() {
    use gitpar_bench::run::{Executor, Invocation};
    let mut exec = ProcessExecutor::new();
    let dir = std::env::temp_dir();
    let mut run = |script: &str| {
        let argv = ["sh", "-c", script].map(Into::into);
        exec.execute(&Invocation {
            contender: "sh",
            argv: &argv,
            dir: &dir,
        })
        .unwrap()
    };
    let ok = run("pwd >/dev/null");
    assert_eq!(ok.exit, Exit::Code(0));
    assert!(ok.exit.success());
    assert!(ok.max_rss_kib.unwrap() > 0);

    let failed = run("echo 'fatal: oops' >&2; exit 3");
    assert_eq!(failed.exit, Exit::Code(3));
    assert_eq!(failed.stderr, "fatal: oops");

    let killed = run("kill -9 $$");
    assert_eq!(killed.exit, Exit::Signal(9));

    // The peak RSS covers descendants too: a child that touches 64 MiB shows through its parent shell.
    let big = run("dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null; true");
    assert!(
        big.max_rss_kib.unwrap() >= 60 * 1024,
        "{:?}",
        big.max_rss_kib
    );

    // A command that prints a lot on stderr neither blocks nor grows the kept tail past its limit.
    let chatty = run("i=0; while [ $i -lt 3000 ]; do echo 'line of forty characters, more or less..' >&2; i=$((i+1)); done; echo last >&2");
    assert!(chatty.stderr.ends_with("last") && chatty.stderr.len() <= 4096);
}

/// The whole harness against real git: a fresh clone per run (untimed), a timed `git switch`, the clone
/// removed (untimed). Checks that everything runs and is recorded, never how fast.
#[test]
fn real_git_switch_on_a_synthetic_repository() {
    use gitpar_bench::synth::{self, SynthSpec};

    let tmp = tempfile::tempdir().unwrap();
    let spec = SynthSpec {
        files: 200,
        seed: 9,
        diffs: vec![20],
    };
    let src = synth::generate(&tmp.path().join("src"), &spec)
        .unwrap()
        .path;
    let runs = tmp.path().join("runs");
    let contenders = [
        Contender::new(
            "git (sequential)",
            [
                "git",
                "-c",
                "checkout.workers=1",
                "switch",
                "--quiet",
                "{branch}",
            ],
        ),
        Contender::new(
            "git -c checkout.workers=2",
            [
                "git",
                "-c",
                "checkout.workers=2",
                "-c",
                "checkout.thresholdForParallelism=0",
                "switch",
                "--quiet",
                "{branch}",
            ],
        ),
    ];
    let mut made = 0;
    let mut fixture = FnFixture::new(
        |run: &Run<'_>| {
            made += 1;
            let dst = runs.join(made.to_string());
            let status = std::process::Command::new("git")
                .args(["clone", "--quiet"])
                .arg(&src)
                .arg(&dst)
                .status()?;
            if !status.success() {
                return Err(format!("git clone failed: {status}").into());
            }
            Ok(Prepared {
                vars: Vars::new().set("branch", format!("diff-{}", run.case.n)),
                dir: dst,
            })
        },
        |_: &Run<'_>, prepared: Prepared| Ok(std::fs::remove_dir_all(prepared.dir)?),
    );
    let mut exec = ProcessExecutor::new();
    let case = Runner::new(&mut exec, plan(3))
        .run(&Case::new("switch", 20), &contenders, &mut fixture)
        .unwrap();
    for c in &case.contenders {
        assert!(c.failure.is_none(), "{:?}", c.failure);
        assert_eq!(c.times.len(), 3);
        assert!(c.max_rss_kib.unwrap() > 0);
    }
    assert!(case.contenders[1].saved.unwrap().interval.is_some());
    assert_eq!(
        std::fs::read_dir(&runs).unwrap().count(),
        0,
        "every clone was cleaned up"
    );
}

/// Accepts every run but those of one contender, as a fixture that checks the checkout would.
struct PickyFixture;

impl Fixture for PickyFixture {
    fn prepare(&mut self, _: &Run<'_>) -> Result<Prepared, BoxError> {
        Ok(Prepared {
            dir: "/".into(),
            vars: Vars::new().set("dst", "/d").set("branch", "b"),
        })
    }

    fn verify(&mut self, run: &Run<'_>, _: &Prepared) -> Result<(), String> {
        match (run.contender.name.as_str(), run.round) {
            ("git-par", Round::Measured(1)) => Err("HEAD is main, not diff-250".into()),
            _ => Ok(()),
        }
    }
}

#[test]
fn a_wrong_result_fails_its_contender_like_a_failed_command() {
    let mut mock = scripted();
    let r = Runner::new(&mut mock, plan(5))
        .run(&Case::new("switch", 250), &contenders(), &mut PickyFixture)
        .unwrap();
    assert!(r.contenders[0].failure.is_none());
    let par = &r.contenders[1];
    let failure = par.failure.as_ref().unwrap();
    assert_eq!(failure.round, Round::Measured(1));
    assert_eq!(
        failure.message,
        "exited with code 0 but left a wrong result: HEAD is main, not diff-250"
    );
    assert_eq!(par.times, [0.100], "a wrong run's time is not recorded");
    assert_eq!(par.saved, None);
}

/// The Windows side of the executor: `cmd.exe` for `sh`, the peak working set for the peak RSS.
#[cfg(windows)]
#[test]
fn process_executor_reports_exit_stderr_and_memory() {
    use gitpar_bench::run::{Executor, Invocation};
    let mut exec = ProcessExecutor::new();
    let dir = std::env::temp_dir();
    let mut run = |script: &str| {
        let argv = ["cmd", "/d", "/c", script].map(Into::into);
        exec.execute(&Invocation {
            contender: "cmd",
            argv: &argv,
            dir: &dir,
        })
        .unwrap()
    };
    let ok = run("cd");
    assert_eq!(ok.exit, Exit::Code(0));
    // Wine reports no peak working set of a process that ended: none, or a real one.
    assert!(ok.max_rss_kib.is_none_or(|kib| kib > 0));

    let failed = run("echo fatal: oops>&2& exit /b 3");
    assert_eq!(failed.exit, Exit::Code(3));
    assert_eq!(failed.stderr, "fatal: oops");
}

#[cfg(unix)]
#[test]
fn process_executor_sets_and_removes_variables() {
    use gitpar_bench::run::{Executor, Invocation};
    // HOME is set wherever tests run (and the test still holds where it is not).
    let mut exec = ProcessExecutor::new()
        .env("GITPAR_BENCH_TEST_SET", "x")
        .env_remove("HOME");
    let dir = std::env::temp_dir();
    let script = r#"test "$GITPAR_BENCH_TEST_SET" = x && test -z "${HOME+set}""#;
    let argv = ["sh", "-c", script].map(Into::into);
    let m = exec
        .execute(&Invocation {
            contender: "sh",
            argv: &argv,
            dir: &dir,
        })
        .unwrap();
    assert!(m.exit.success(), "{m:?}");
}

/// A fixture whose disk grows by what each contender "writes": 40 MiB for git, 1 MiB for git-par, read
/// before and after every timed command.
struct DiskFixture {
    used: u64,
    readings: Vec<(String, u64)>,
}

impl Fixture for DiskFixture {
    fn prepare(&mut self, _run: &Run<'_>) -> Result<Prepared, BoxError> {
        Ok(Prepared {
            dir: PathBuf::from("/"),
            vars: Vars::new().set("dst", "/d").set("branch", "b"),
        })
    }

    fn disk_used(&mut self, run: &Run<'_>, _prepared: &Prepared) -> Result<Option<u64>, BoxError> {
        let reading = self.used;
        self.readings.push((run.contender.name.clone(), reading));
        // Every second reading (after the command) sees what it allocated; cleanup would free it.
        if self.readings.len() % 2 == 1 {
            self.used += if run.index == 0 { 40 << 20 } else { 1 << 20 };
        } else {
            self.used = 1 << 30;
        }
        Ok(Some(reading))
    }
}

#[test]
fn disk_allocated_is_read_around_every_timed_command() {
    let mut mock = scripted();
    let mut fixture = DiskFixture {
        used: 1 << 30,
        readings: Vec::new(),
    };
    let case = Runner::new(&mut mock, plan(3))
        .run(
            &Case::new("worktree add", 1000),
            &contenders(),
            &mut fixture,
        )
        .unwrap();
    // Two readings per run, warm-ups included; only the measured rounds are recorded.
    assert_eq!(fixture.readings.len(), 2 * 2 * 4);
    let (git, par) = (&case.contenders[0], &case.contenders[1]);
    assert_eq!(git.allocated, [40 << 20; 3]);
    assert_eq!(par.allocated, [1 << 20; 3]);
    assert_eq!(par.allocated_median, Some(f64::from(1 << 20)));

    // A fixture that does not measure leaves the results without it.
    let mut mock = scripted();
    let log = Rc::new(RefCell::new(Vec::new()));
    let case = Runner::new(&mut mock, plan(3))
        .run(
            &Case::new("switch", 250),
            &contenders(),
            &mut logging_fixture(log),
        )
        .unwrap();
    assert!(case.contenders[1].allocated.is_empty());
    assert_eq!(case.contenders[1].allocated_median, None);
}
