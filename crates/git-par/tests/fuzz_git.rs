//! Random differential testing against git (crates/git-fuzz): the scenarios kept in
//! `tests/fuzz/` (each a difference the generator once found, reduced by hand), then a bounded
//! run of fixed seeds. Every scenario is built twice with plain git, its command run by git in
//! one copy and by git-par in the other, and everything a user or the next git command can see
//! compared. `scripts/fuzz-git N [SEED]` runs any number of seeds.

use std::path::{Path, PathBuf};

use git_fuzz::{Report, Scenario, Setup, Verdict};

const GIT_PAR: &str = env!("CARGO_BIN_EXE_git-par");

/// Seeds of the bounded run: fixed, so that a failure names a scenario anyone can rerun
/// (`git-fuzz show SEED`, `scripts/fuzz-git 1 SEED`).
const SEEDS: std::ops::Range<u64> = 1..301;

/// Where scenarios run: tmpfs when there is one (each scenario creates a few hundred files,
/// which the aged root filesystem of the CI machines makes slow), else the target's temporary
/// directory. Removed when the test passes; kept for inspection when it fails.
fn setup(name: &str) -> Setup {
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
    };
    let root = base.join(format!("git-par-{name}-{}", std::process::id()));
    Setup::new(Path::new(GIT_PAR), &root).expect("set up the scenarios' directory")
}

/// A scenario counts against git-par unless both sides are alike, the difference is a
/// documented safer refusal, or git itself crashed (nothing to compare with).
fn failed(report: &Report) -> bool {
    !matches!(
        report.verdict,
        Verdict::Same | Verdict::Allowed(_) | Verdict::GitCrashed(_)
    )
}

#[test]
fn kept_scenarios_match_git() {
    let setup = setup("fuzz-kept");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzz");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fuzz")
        .map(|e| e.expect("tests/fuzz entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "the kept scenarios are missing: {files:?}"
    );
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a kept scenario");
        let name = file.file_stem().expect("a file name").to_string_lossy();
        let scenario = Scenario::parse(&name, &text).expect("parse a kept scenario");
        let report = git_fuzz::run::run(&setup, &scenario, &name);
        if failed(&report) {
            failures.push(report.render());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} kept scenarios differ from git:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&setup.root);
}

#[test]
fn seeded_scenarios_match_git() {
    let setup = setup("fuzz-seeds");
    let failures = std::sync::Mutex::new(Vec::new());
    git_fuzz::run_seeds(
        &setup,
        SEEDS.start,
        SEEDS.end - SEEDS.start,
        2,
        &|_, report, _| {
            if failed(report) {
                let script =
                    std::fs::read_to_string(report.dir.join("scenario.sh")).unwrap_or_default();
                failures
                    .lock()
                    .unwrap()
                    .push(format!("{}\n{script}", report.render()));
            }
        },
    );
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} seeded scenarios differ from git (or could not be built):\n{}",
        failures.len(),
        SEEDS.end - SEEDS.start,
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&setup.root);
}
