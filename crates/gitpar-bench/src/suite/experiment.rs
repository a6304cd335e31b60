//! The experiment: operations become cases, each case is run by the harness's [`Runner`] with a fixture
//! that prepares every run in a fresh directory and removes it afterwards, outside the timed part.
//!
//! - `switch`: a work tree of `main` is made with `git worktree add` and settled (see [`settle`]); the
//!   timed command switches it to `diff-N`, in it.
//! - `worktree add`: the timed command creates a work tree of `main` at a path that does not exist yet.
//! - `clone`: the timed command clones the source repository (a local clone) into such a path.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::filesystem::{self, FsKind};
use crate::run::{
    BoxError, Case, Contender, Event, Fixture, Plan, Prepared, Results, Round, Run, Runner, Vars,
};
use anyhow::Context as _;

use super::contenders::Spec;
use super::git;
use super::source::{Source, Target};

/// What is measured, as `--operations` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Switch a work tree of `main` to each `diff-N` branch: only the N changed files are written.
    Switch,
    /// Create a linked work tree of `main`: every file is written.
    WorktreeAdd,
    /// Clone the repository locally and check out `main`: objects are linked or copied, every file written.
    Clone,
    /// `status --porcelain` in a work tree of `main` with 2,000 files touched and 200 edited.
    Status,
    /// `update-index -q --refresh` (git) / `refresh -q` (git-par) in that work tree.
    Refresh,
}

impl Operation {
    /// Every operation, in the order a default run measures them.
    pub const ALL: [Self; 3] = [Self::Switch, Self::WorktreeAdd, Self::Clone];

    /// Returns the name in tables and result files, as git spells the command.
    pub fn title(self) -> &'static str {
        match self {
            Self::Switch => "switch",
            Self::WorktreeAdd => "worktree add",
            Self::Clone => "clone",
            Self::Status => "status",
            Self::Refresh => "refresh",
        }
    }

    /// Every operation `--operations` accepts.
    pub const NAMED: [Self; 5] = [
        Self::Switch,
        Self::WorktreeAdd,
        Self::Clone,
        Self::Status,
        Self::Refresh,
    ];

    /// Returns the name on the command line and in the `{op}` placeholder, without blanks.
    pub fn cli_name(self) -> &'static str {
        match self {
            Self::Switch => "switch",
            Self::WorktreeAdd => "worktree-add",
            Self::Clone => "clone",
            Self::Status => "status",
            Self::Refresh => "refresh",
        }
    }
}

impl std::str::FromStr for Operation {
    type Err = String;

    /// Parses a name of `--operations` ([`Operation::cli_name`]).
    fn from_str(s: &str) -> Result<Self, String> {
        Self::NAMED
            .into_iter()
            .find(|op| op.cli_name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMED.iter().map(|op| op.cli_name()).collect();
                format!("unknown operation `{s}`: choose among {}", names.join(", "))
            })
    }
}

/// The directory where every run's checkout lands: a fresh `git-par-bench-<pid>` inside the directory the
/// user chose (or the temporary directory), removed with everything in it when the bench ends.
#[derive(Debug)]
pub struct Checkouts {
    /// The directory.
    pub root: PathBuf,
    /// Its filesystem, which a result is meaningless without.
    pub filesystem: FsKind,
}

impl Checkouts {
    /// Creates the directory inside `parent` (the temporary directory if `None`).
    pub fn create(parent: Option<&Path>) -> anyhow::Result<Self> {
        let parent = parent.map_or_else(std::env::temp_dir, Path::to_owned);
        let root = parent.join(format!("git-par-bench-{}", std::process::id()));
        if root.exists() {
            std::fs::remove_dir_all(&root)
                .with_context(|| format!("could not remove {}", root.display()))?;
        }
        std::fs::create_dir_all(&root).with_context(|| {
            format!(
                "could not create the checkouts directory {}",
                root.display()
            )
        })?;
        // Canonical, so that git's worktree records and our placeholders name the same path.
        let root = root.canonicalize().unwrap_or(root);
        let filesystem = filesystem::kind(&root)
            .with_context(|| format!("could not tell the filesystem of {}", root.display()))?;
        Ok(Self { root, filesystem })
    }
}

impl Drop for Checkouts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// One case to run: an operation at one size, and for a switch the branch to switch to.
#[derive(Debug, Clone)]
pub struct Planned<'s> {
    /// The operation.
    pub operation: Operation,
    /// Its case (title and N).
    pub case: Case,
    /// The branch a switch goes to; `None` for the other operations.
    pub target: Option<&'s Target>,
}

/// What the experiment reports while it runs, so that the binary can show progress and write results
/// after every case: a crash or a Ctrl-C then loses one case at most.
pub trait Observer {
    /// A case starts: `index` of `total`, with `contenders` contenders.
    fn case_started(&mut self, index: usize, total: usize, case: &Case, contenders: usize);
    /// A run ended (see [`Event`]).
    fn event(&mut self, event: &Event<'_>);
    /// A case ended; `results` holds every case so far.
    fn case_done(&mut self, results: &Results) -> anyhow::Result<()>;
}

/// Everything one series needs.
pub struct Experiment<'a> {
    /// The repository checked out.
    pub source: &'a Source,
    /// Where checkouts land.
    pub checkouts: &'a Checkouts,
    /// The operations, in order.
    pub operations: &'a [Operation],
    /// The contenders; the first is the baseline.
    pub contenders: &'a [Spec],
    /// Runs and warm-ups per contender, bootstrap settings.
    pub plan: Plan,
    /// This executable, the `{git_par}` of the git-par contenders.
    pub git_par: PathBuf,
}

impl Experiment<'_> {
    /// Returns the cases in the order they will run: for each operation, switches from small to large.
    pub fn cases(&self) -> Vec<Planned<'_>> {
        let mut out = Vec::new();
        for &operation in self.operations {
            if operation == Operation::Switch {
                for target in &self.source.targets {
                    out.push(Planned {
                        operation,
                        case: Case::new(operation.title(), target.changed),
                        target: Some(target),
                    });
                }
            } else {
                out.push(Planned {
                    operation,
                    case: Case::new(operation.title(), self.source.files),
                    target: None,
                });
            }
        }
        out
    }

    /// Runs every case into `results`, telling `observer`. Returns how many files were deleted in the
    /// checkouts directory, for the warning about deletions on disk filesystems.
    ///
    /// A contender that fails is recorded in its result and the series goes on; an error here means the
    /// setup itself failed (git could not make a work tree), which no contender can be measured without.
    pub fn run(&self, results: &mut Results, observer: &mut dyn Observer) -> anyhow::Result<u64> {
        // Work trees of an earlier, interrupted series would make `worktree add` pick other names.
        git::output(&self.source.path, &["worktree", "prune"])?;
        let mut executor = git::executor();
        let cases = self.cases();
        // One work tree for the status and refresh cases (`suite/status.rs`), made once.
        let status_tree = if self
            .operations
            .iter()
            .any(|o| matches!(o, Operation::Status | Operation::Refresh))
        {
            Some(super::status::StatusTree::create(
                self.source,
                &self.checkouts.root,
                &self.git_par,
            )?)
        } else {
            None
        };
        let mut deleted = 0;
        for (index, planned) in cases.iter().enumerate() {
            let contenders: Vec<Contender> = self
                .contenders
                .iter()
                .map(|s| s.contender(planned.operation))
                .collect();
            observer.case_started(index, cases.len(), &planned.case, contenders.len());
            if let (Operation::Status | Operation::Refresh, Some(tree)) =
                (planned.operation, &status_tree)
            {
                let mut fixture = super::status::StatusFixture {
                    tree,
                    git_par: &self.git_par,
                };
                let result = Runner::new(&mut executor, self.plan).run_observed(
                    &planned.case,
                    &contenders,
                    &mut fixture,
                    &mut |event| observer.event(event),
                );
                results.cases.push(result?);
                observer.case_done(results)?;
                continue;
            }
            let mut fixture = CheckoutFixture {
                operation: planned.operation,
                source: self.source,
                target: planned.target,
                root: &self.checkouts.root,
                git_par: &self.git_par,
                deleted: 0,
            };
            let result = Runner::new(&mut executor, self.plan).run_observed(
                &planned.case,
                &contenders,
                &mut fixture,
                &mut |event| observer.event(event),
            );
            deleted += fixture.deleted;
            results.cases.push(result?);
            observer.case_done(results)?;
        }
        Ok(deleted)
    }
}

/// Prepares, checks and removes the runs of one case.
struct CheckoutFixture<'a> {
    operation: Operation,
    source: &'a Source,
    target: Option<&'a Target>,
    root: &'a Path,
    git_par: &'a Path,
    /// Files removed so far (estimated as the files of `main` per checkout removed).
    deleted: u64,
}

impl CheckoutFixture<'_> {
    /// Where a run's checkout goes: named after the run, so that no two runs share a directory (or a
    /// worktree name in the source repository).
    fn destination(&self, run: &Run<'_>) -> PathBuf {
        let round = match run.round {
            Round::Warmup(i) => format!("w{i}"),
            Round::Measured(i) => format!("r{i}"),
        };
        self.root.join(format!(
            "{}-{}-c{}-{round}",
            self.operation.cli_name(),
            run.case.n,
            run.index
        ))
    }

    /// The commit a run must leave checked out.
    fn expected_commit(&self) -> &str {
        self.target.map_or(&self.source.main, |t| &t.commit)
    }
}

impl Fixture for CheckoutFixture<'_> {
    fn prepare(&mut self, run: &Run<'_>) -> Result<Prepared, BoxError> {
        let dst = self.destination(run);
        if dst.exists() {
            std::fs::remove_dir_all(&dst)?;
        }
        let dir = match self.operation {
            Operation::Switch => {
                // git's own parallel checkout: correct, and the fastest way git has to make the start state.
                git::output(
                    &self.source.path,
                    &[
                        "-c".as_ref(),
                        "checkout.workers=0".as_ref(),
                        "-c".as_ref(),
                        "checkout.thresholdForParallelism=0".as_ref(),
                        "worktree".as_ref(),
                        "add".as_ref(),
                        "-q".as_ref(),
                        "-f".as_ref(),
                        "--detach".as_ref(),
                        dst.as_os_str(),
                        "main".as_ref(),
                    ],
                )?;
                settle(&dst)?;
                dst.clone()
            }
            Operation::WorktreeAdd => self.source.path.clone(),
            Operation::Clone | Operation::Status | Operation::Refresh => self.root.to_owned(),
        };
        let rev = self.target.map_or("main", |t| t.branch.as_str());
        Ok(Prepared {
            dir,
            vars: Vars::new()
                .set("op", self.operation.cli_name())
                .set("n", run.case.n.to_string())
                .set("src", &self.source.path)
                .set("dst", &dst)
                .set("rev", rev)
                .set("git_par", self.git_par),
        })
    }

    /// Checks the warm-up runs and the first measured round (checking costs a `git status` of the whole
    /// tree): HEAD at the right commit, and nothing modified, missing or left over.
    fn verify(&mut self, run: &Run<'_>, prepared: &Prepared) -> Result<(), String> {
        if !matches!(run.round, Round::Warmup(_) | Round::Measured(0)) {
            return Ok(());
        }
        let dst = PathBuf::from(prepared.vars.get("dst").expect("prepare always sets dst"));
        let head =
            git::line(&dst, &["rev-parse", "--verify", "HEAD"]).map_err(|e| e.to_string())?;
        if head != self.expected_commit() {
            return Err(format!(
                "HEAD of {} is {head}, not {}",
                dst.display(),
                self.expected_commit()
            ));
        }
        let status = git::output(&dst, &["status", "--porcelain", "--untracked-files=all"])
            .map_err(|e| e.to_string())?;
        if !status.is_empty() {
            let lines: Vec<&str> = status.lines().take(5).collect();
            return Err(format!(
                "`git status` in {} is not clean: {}{}",
                dst.display(),
                lines.join("; "),
                if status.lines().count() > 5 {
                    "; ..."
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }

    fn cleanup(&mut self, run: &Run<'_>, _prepared: Prepared) -> Result<(), BoxError> {
        let dst = self.destination(run);
        if dst.exists() {
            std::fs::remove_dir_all(&dst)?;
            self.deleted += self.source.files as u64;
        }
        if self.operation != Operation::Clone {
            git::output(&self.source.path, &["worktree", "prune"])?;
        }
        Ok(())
    }
}

/// How far [`settle`] moves the index's modification time ahead: more than git's one-second
/// granularity.
const SETTLE_AHEAD: Duration = Duration::from_secs(10);

/// Makes a fresh work tree look like one that has been sitting for a while, as the trees users switch in
/// do.
///
/// Files written in the same second as the index are "racily clean": git cannot trust their stat data
/// and compares their contents again, so the timed switch would hash part of the tree as well as write
/// the changed files, by chance of the clock. Racy means "modified no earlier than the index file", so
/// moving the index file's modification time ahead (untimed) makes every recorded stat trustworthy
/// without touching or re-reading the 40,000 files.
fn settle(worktree: &Path) -> Result<(), BoxError> {
    let git_dir = git::line(worktree, &["rev-parse", "--absolute-git-dir"])?;
    let index = Path::new(&git_dir).join("index");
    let when = SystemTime::now() + SETTLE_AHEAD;
    std::fs::File::options()
        .write(true)
        .open(&index)?
        .set_modified(when)?;
    Ok(())
}
