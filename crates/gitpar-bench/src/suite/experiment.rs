//! The experiment: operations become cases, each case is run by the harness's [`Runner`] with a fixture
//! that prepares every run and cleans up after it, outside the timed part.
//!
//! - `switch`: every contender has its own work tree of `main`, made once with `git worktree add` before
//!   the first switch case (untimed). The timed command switches it to `diff-N`, in it; afterwards git
//!   brings it back to `main` (`git switch -f --detach main`, untimed, which rewrites only the N files),
//!   and the next run starts from that tree, settled (see [`settle`]). Preparing 40,000 files per run
//!   would cost far more than the switch measured (15 s against 0.5 s on an aged ext4).
//! - `worktree add`: the timed command creates a work tree of `main` at a path that does not exist yet;
//!   it is removed after the run.
//! - `clone`: the timed command clones the source repository (a local clone) into such a path.
//!
//! A contender that checks out from a donor (`git-par-donor`, or a command using `{donor}`) gets one
//! work tree of `main` made by git in the checkouts directory (so on the filesystem measured) before
//! the first case that runs it, untimed, kept for every run and removed when the series ends.
//!
//! Every worktree add and clone run also reads the blocks used on the checkouts' filesystem just before
//! and just after the timed command, each after a sync, untimed ([`crate::filesystem::used_bytes`]):
//! the disk the checkout allocated, which a donor's copy-on-write clones save.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::filesystem::{self, FsKind};
use crate::run::{
    BoxError, Case, Contender, Event, Fixture, Plan, Prepared, ProcessExecutor, Results, Round,
    Run, Runner, Vars,
};
use anyhow::Context as _;

use super::contenders::Spec;
use super::operation::Operation;
use super::source::{Source, Target};
use crate::git;

/// The directory where every run's checkout lands: a fresh `git-par-bench-<pid>` inside the directory the
/// user chose (by default tmpfs, see [`default_parent`]), removed with everything in it when the bench ends.
#[derive(Debug)]
pub struct Checkouts {
    /// The directory.
    pub root: PathBuf,
    /// Its filesystem, which a result is meaningless without.
    pub filesystem: FsKind,
    /// Whether the user chose nothing and got [`default_parent`].
    pub is_default: bool,
    /// Directories of earlier benches that were killed before they could remove them.
    pub removed_stale: Vec<PathBuf>,
}

/// The prefix of the checkouts directory's name, followed by the bench's process id.
const ROOT_PREFIX: &str = "git-par-bench-";

/// Where checkouts land when `--dir` is not given: `/dev/shm` if it is a tmpfs (Linux has one), else the
/// temporary directory.
///
/// tmpfs is the default because the main job must finish in minutes on any machine: on tmpfs a file costs
/// its CPU only, so the figures are the floor of what each contender costs and are repeatable; on an aged
/// disk filesystem one file create costs hundreds of µs and deletions slow later creates down. The report
/// says which filesystem was measured, and `--dir` measures another.
pub fn default_parent() -> PathBuf {
    let shm = Path::new("/dev/shm");
    let writable = |p: &Path| {
        let probe = p.join(format!(".git-par-bench-probe-{}", std::process::id()));
        let ok = std::fs::create_dir(&probe).is_ok();
        let _ = std::fs::remove_dir(&probe);
        ok
    };
    if filesystem::kind(shm).is_ok_and(|k| k.is_memory()) && writable(shm) {
        shm.to_owned()
    } else {
        std::env::temp_dir()
    }
}

impl Checkouts {
    /// Creates the directory inside `parent` (the [`default_parent`] if `None`), after removing the
    /// directories that benches killed earlier (by a signal, which skips every destructor) left there: on
    /// tmpfs each holds memory until it is removed.
    pub fn create(parent: Option<&Path>) -> anyhow::Result<Self> {
        let is_default = parent.is_none();
        let parent = parent.map_or_else(default_parent, Path::to_owned);
        let removed_stale = remove_stale(&parent);
        let root = parent.join(format!("{ROOT_PREFIX}{}", std::process::id()));
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
        let root = crate::platform::canonicalize(&root).unwrap_or(root);
        let filesystem = filesystem::kind(&root)
            .with_context(|| format!("could not tell the filesystem of {}", root.display()))?;
        Ok(Self {
            root,
            filesystem,
            is_default,
            removed_stale,
        })
    }
}

/// Removes the `git-par-bench-<pid>` directories in `parent` whose process is gone (Linux: no
/// `/proc/<pid>`; Windows: no such process, or one that ended); returns them. A directory of a
/// live bench, or one that cannot be told, is left alone.
fn remove_stale(parent: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    if crate::platform::process_gone(std::process::id()).is_none() {
        return removed;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(ROOT_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        if pid != std::process::id()
            && crate::platform::process_gone(pid) == Some(true)
            && entry.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::remove_dir_all(&path).is_ok()
        {
            removed.push(path);
        }
    }
    removed
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

/// A case as progress needs to know it before it runs.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    /// The case.
    pub case: Case,
    /// How many contenders run it (each the plan's warm-ups and rounds).
    pub contenders: usize,
    /// Whether each run writes every file of `main` (worktree add, clone) rather than a diff.
    pub full_checkout: bool,
}

/// What the experiment reports while it runs, so that the binary can show progress and write results
/// after every case: a crash or a Ctrl-C then loses one case at most.
pub trait Observer {
    /// The series is about to start: every case in order, so that progress can tell how much is left.
    fn series_started(&mut self, cases: &[PlannedCase]);
    /// Untimed setup that takes a while is about to start: `what`, which makes `checkouts` full
    /// checkouts of `main` (a measure of what a full checkout costs here, before any is timed).
    fn setup(&mut self, what: &str, checkouts: usize);
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
    /// Set `GIT_PAR_TRACE` for every timed command, so that git-par reports its writer count
    /// (`--threads-sweep`).
    pub trace_git_par: bool,
}

impl Experiment<'_> {
    /// Notes about contenders left out of some operations (gitoxide does only the full checkout),
    /// one per contender, so that no contender is missing from a table without a word.
    pub fn left_out(&self) -> Vec<String> {
        self.contenders
            .iter()
            .filter_map(|spec| {
                let out: Vec<&str> = self
                    .operations
                    .iter()
                    .filter(|&&op| spec.contender(op).is_none())
                    .map(|op| op.title())
                    .collect();
                if out.is_empty() {
                    return None;
                }
                let why = match spec {
                    Spec::GitParDonor => ": it measures worktree add from a donor work tree",
                    Spec::Gix(_) => {
                        ": its contender is a full checkout of a commit into a new directory \
                         (gix index from-tree, then gix free index checkout-exclusive), measured as \
                         worktree add"
                    }
                    _ => "",
                };
                Some(format!(
                    "{} is left out of {}{why}",
                    spec.name(),
                    out.join(", ")
                ))
            })
            .collect()
    }

    /// Returns the cases in the order they will run: for each operation, switches from small to large.
    pub fn cases(&self) -> Vec<Planned<'_>> {
        let mut out = Vec::new();
        for &operation in self.operations {
            if operation == Operation::Switch {
                for target in &self.source.targets {
                    out.push(Planned {
                        operation,
                        case: Case::new(target.case_title(), target.changed),
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

    /// The contenders that do `operation` (see [`Spec::contender`]), with their specs, in order.
    pub fn contenders_for(&self, operation: Operation) -> Vec<(&Spec, Contender)> {
        self.contenders
            .iter()
            .filter_map(|s| s.contender(operation).map(|c| (s, c)))
            .collect()
    }

    /// Runs every case into `results`, telling `observer`. Returns how many files were deleted in the
    /// checkouts directory, for the warning about deletions on disk filesystems.
    ///
    /// A contender that fails is recorded in its result and the series goes on; an error here means the
    /// setup itself failed (git could not make a work tree), which no contender can be measured without.
    pub fn run(&self, results: &mut Results, observer: &mut dyn Observer) -> anyhow::Result<u64> {
        // Work trees of an earlier, interrupted series would make `worktree add` pick other names.
        git::output(&self.source.path, &["worktree", "prune"])?;
        let mut executor = executor();
        if self.trace_git_par {
            executor = executor.env("GIT_PAR_TRACE", "1");
        }
        let cases: Vec<Planned<'_>> = self
            .cases()
            .into_iter()
            .filter(|p| !self.contenders_for(p.operation).is_empty())
            .collect();
        observer.series_started(&self.for_progress(&cases));
        let status_tree = self.status_tree(&cases, results, observer)?;
        let mut series = Series {
            executor,
            switch_trees: SwitchTrees::new(self.source, &self.checkouts.root),
            donor: None,
            deleted: 0,
        };
        for (index, planned) in cases.iter().enumerate() {
            let (specs, contenders): (Vec<&Spec>, Vec<Contender>) =
                self.contenders_for(planned.operation).into_iter().unzip();
            self.prepare_case(&mut series, planned, &specs, contenders.len(), observer)?;
            observer.case_started(index, cases.len(), &planned.case, contenders.len());
            if let (Operation::Status | Operation::Refresh, Some(tree)) =
                (planned.operation, &status_tree)
            {
                let mut fixture = super::status::StatusFixture {
                    tree,
                    git_par: &self.git_par,
                };
                self.run_case(
                    &mut series.executor,
                    planned,
                    &contenders,
                    &mut fixture,
                    observer,
                    results,
                )?;
                continue;
            }
            self.run_checkout_case(&mut series, planned, &specs, &contenders, observer, results)?;
            let last_switch = planned.operation == Operation::Switch
                && cases
                    .get(index + 1)
                    .is_none_or(|next| next.operation != Operation::Switch);
            if last_switch {
                series.deleted += series.switch_trees.remove_all()?;
            }
        }
        if let Some(donor) = series.donor {
            std::fs::remove_dir_all(&donor)
                .with_context(|| format!("could not remove {}", donor.display()))?;
            git::output(&self.source.path, &["worktree", "prune"])?;
            series.deleted += self.source.files as u64;
        }
        Ok(series.deleted)
    }

    /// `cases` as progress needs to know them before the series starts.
    fn for_progress(&self, cases: &[Planned<'_>]) -> Vec<PlannedCase> {
        cases
            .iter()
            .map(|p| PlannedCase {
                case: p.case.clone(),
                contenders: self.contenders_for(p.operation).len(),
                full_checkout: matches!(p.operation, Operation::WorktreeAdd | Operation::Clone),
            })
            .collect()
    }

    /// The one work tree of the status and refresh cases (`suite/status.rs`), made and settled once
    /// before the first case if any of `cases` needs it (its lstat floor goes into the results'
    /// environment); `None` otherwise.
    fn status_tree(
        &self,
        cases: &[Planned<'_>],
        results: &mut Results,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<Option<super::status::StatusTree>> {
        if !cases
            .iter()
            .any(|p| matches!(p.operation, Operation::Status | Operation::Refresh))
        {
            return Ok(None);
        }
        observer.setup(
            "preparing the work tree of the status and refresh cases (untimed)",
            1,
        );
        let tree =
            super::status::StatusTree::create(self.source, &self.checkouts.root, &self.git_par)?;
        observer.setup(
            "waiting for the status tree to settle: lstat passes until they no longer get faster (untimed)",
            0,
        );
        let settled = tree.settle()?;
        results
            .environment
            .facts
            .insert("status tree lstat floor".to_owned(), settled.describe());
        Ok(Some(tree))
    }

    /// The untimed setup a case needs before its first run, made once for the series: the donor work
    /// tree when one of its contenders (`specs`) uses it, and the switch work trees (one per
    /// contender, `contenders` of them) before the first switch case.
    fn prepare_case(
        &self,
        series: &mut Series<'_>,
        planned: &Planned<'_>,
        specs: &[&Spec],
        contenders: usize,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<()> {
        if series.donor.is_none() && specs.iter().any(|s| s.uses_donor()) {
            observer.setup(
                "preparing the donor work tree of main, kept for every run (untimed)",
                1,
            );
            series.donor = Some(make_donor(self.source, &self.checkouts.root)?);
        }
        if planned.operation == Operation::Switch && series.switch_trees.is_empty() {
            observer.setup(
                &format!(
                    "preparing {contenders} work trees of main for the switches, one per contender (untimed)"
                ),
                contenders,
            );
            for k in 0..contenders {
                series.switch_trees.ensure(k)?;
            }
        }
        Ok(())
    }

    /// Runs one switch, worktree add or clone case through a [`CheckoutFixture`], adds its result to
    /// `results` and counts the files its cleanup deleted.
    fn run_checkout_case<'a>(
        &'a self,
        series: &mut Series<'a>,
        planned: &Planned<'a>,
        specs: &[&Spec],
        contenders: &[Contender],
        observer: &mut dyn Observer,
        results: &mut Results,
    ) -> anyhow::Result<()> {
        let mut fixture = CheckoutFixture {
            operation: planned.operation,
            source: self.source,
            target: planned.target,
            root: &self.checkouts.root,
            git_par: &self.git_par,
            makes_git_work_tree: specs.iter().map(|s| s.makes_git_work_tree()).collect(),
            switch_trees: &mut series.switch_trees,
            donor: series.donor.clone(),
            deleted: 0,
        };
        let result = self.run_case(
            &mut series.executor,
            planned,
            contenders,
            &mut fixture,
            observer,
            results,
        );
        series.deleted += fixture.deleted;
        result
    }

    /// Runs one case with `fixture` through the harness's [`Runner`], telling `observer` of every
    /// run, then adds its result to `results` and tells `observer` the case is done (so that the
    /// result files are written after every case).
    fn run_case(
        &self,
        executor: &mut ProcessExecutor,
        planned: &Planned<'_>,
        contenders: &[Contender],
        fixture: &mut dyn Fixture,
        observer: &mut dyn Observer,
        results: &mut Results,
    ) -> anyhow::Result<()> {
        let result = Runner::new(executor, self.plan).run_observed(
            &planned.case,
            contenders,
            fixture,
            &mut |event| observer.event(event),
        );
        results.cases.push(result?);
        observer.case_done(results)?;
        Ok(())
    }
}

/// What a series carries from case to case: the executor of every run, the switch work trees and the
/// donor work tree (each made once, when a case first needs it), and the files deleted so far.
struct Series<'a> {
    executor: ProcessExecutor,
    switch_trees: SwitchTrees<'a>,
    donor: Option<PathBuf>,
    deleted: u64,
}

/// Makes the donor work tree: `main` checked out by git into `root` (the filesystem measured), its index
/// settled (see [`settle`]) so that its entries are not racily clean, as in a work tree that has sat for
/// a while: a checkout from a donor clones only the files whose index entries it can trust.
fn make_donor(source: &Source, root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("donor-main");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("could not remove {}", dir.display()))?;
        git::output(&source.path, &["worktree", "prune"])?;
    }
    git::worktree_of_main(&source.path, &dir)?;
    let index = git::line(
        &dir,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?;
    settle(Path::new(&index))
        .map_err(|e| anyhow::anyhow!("could not settle the donor's index {index}: {e}"))?;
    Ok(dir)
}

/// The switch cases' work trees of `main`, one per contender, made once and brought back to `main` by git
/// after every run, so that a run costs its switch and the way back rather than a fresh 40,000-file tree.
struct SwitchTrees<'a> {
    source: &'a Source,
    root: &'a Path,
    /// Per contender index: the work tree and its index file, or `None` when not made (or lost).
    trees: Vec<Option<SwitchTree>>,
}

#[derive(Debug, Clone)]
struct SwitchTree {
    dir: PathBuf,
    index: PathBuf,
}

impl<'a> SwitchTrees<'a> {
    fn new(source: &'a Source, root: &'a Path) -> Self {
        Self {
            source,
            root,
            trees: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.trees.iter().all(Option::is_none)
    }

    /// Returns contender `k`'s tree, made with `git worktree add` of `main` if it is not there.
    fn ensure(&mut self, k: usize) -> anyhow::Result<SwitchTree> {
        if self.trees.len() <= k {
            self.trees.resize(k + 1, None);
        }
        if let Some(tree) = &self.trees[k] {
            return Ok(tree.clone());
        }
        let dir = self.root.join(format!("switch-tree-c{k}"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("could not remove {}", dir.display()))?;
            git::output(&self.source.path, &["worktree", "prune"])?;
        }
        git::worktree_of_main(&self.source.path, &dir)?;
        let index = PathBuf::from(git::line(
            &dir,
            &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        )?);
        let tree = SwitchTree { dir, index };
        self.trees[k] = Some(tree.clone());
        Ok(tree)
    }

    /// Brings contender `k`'s tree back to `main` after a run: git switches it back, forced (whatever the
    /// contender left of the tracked files is overwritten), writing only the files the run changed. If git
    /// cannot (a contender killed mid-run left a lock), the tree is removed and made again next time.
    /// Returns the files deleted.
    fn restore(&mut self, k: usize) -> anyhow::Result<u64> {
        let Some(tree) = self.trees.get(k).cloned().flatten() else {
            return Ok(0);
        };
        if git::output(&tree.dir, &["switch", "-q", "-f", "--detach", "main"]).is_ok() {
            return Ok(0);
        }
        self.trees[k] = None;
        std::fs::remove_dir_all(&tree.dir)
            .with_context(|| format!("could not remove {}", tree.dir.display()))?;
        git::output(&self.source.path, &["worktree", "prune"])?;
        Ok(self.source.files as u64)
    }

    /// Removes every tree; returns the files deleted.
    fn remove_all(&mut self) -> anyhow::Result<u64> {
        let mut deleted = 0;
        for tree in self.trees.drain(..).flatten() {
            std::fs::remove_dir_all(&tree.dir)
                .with_context(|| format!("could not remove {}", tree.dir.display()))?;
            deleted += self.source.files as u64;
        }
        git::output(&self.source.path, &["worktree", "prune"])?;
        Ok(deleted)
    }
}

/// Prepares, checks and cleans up the runs of one case.
struct CheckoutFixture<'a, 't> {
    operation: Operation,
    source: &'a Source,
    target: Option<&'a Target>,
    root: &'a Path,
    git_par: &'a Path,
    /// Per contender index: whether it leaves a work tree git knows ([`Spec::makes_git_work_tree`]).
    makes_git_work_tree: Vec<bool>,
    switch_trees: &'t mut SwitchTrees<'a>,
    /// The donor work tree (`{donor}`), if a contender of the series uses it.
    donor: Option<PathBuf>,
    /// Files removed so far (estimated as the files of `main` per checkout removed).
    deleted: u64,
}

impl CheckoutFixture<'_, '_> {
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

    /// The run's scratch path (`{tmp}`), next to its destination, removed after the run.
    fn scratch(&self, run: &Run<'_>) -> PathBuf {
        let mut name = self.destination(run).into_os_string();
        name.push(".tmp");
        PathBuf::from(name)
    }

    /// The commit a run must leave checked out.
    fn expected_commit(&self) -> &str {
        self.target.map_or(&self.source.main, |t| &t.commit)
    }
}

impl Fixture for CheckoutFixture<'_, '_> {
    fn prepare(&mut self, run: &Run<'_>) -> Result<Prepared, BoxError> {
        let (dir, dst) = match self.operation {
            Operation::Switch => {
                let tree = self.switch_trees.ensure(run.index)?;
                settle(&tree.index)?;
                (tree.dir.clone(), tree.dir)
            }
            _ => {
                let dst = self.destination(run);
                if dst.exists() {
                    std::fs::remove_dir_all(&dst)?;
                }
                let dir = match self.operation {
                    Operation::WorktreeAdd => self.source.path.clone(),
                    _ => self.root.to_owned(),
                };
                (dir, dst)
            }
        };
        let rev = self.target.map_or("main", |t| t.branch.as_str());
        let mut vars = Vars::new();
        if let Some(donor) = &self.donor {
            vars = vars.set("donor", donor);
        }
        Ok(Prepared {
            dir,
            vars: vars
                .set("op", self.operation.cli_name())
                .set("n", run.case.n.to_string())
                // `{N}` too: clap turns `{n}` into a line break in `--help`, which documents `{N}`.
                .set("N", run.case.n.to_string())
                .set("src", &self.source.path)
                .set("dst", &dst)
                .set("rev", rev)
                .set("tmp", self.scratch(run))
                .set("git_par", self.git_par),
        })
    }

    /// Checks the warm-up runs and the first measured round (checking costs a `git status` of the whole
    /// tree): HEAD at the right commit, and nothing modified, missing or left over. A contender that
    /// makes no work tree git knows (gitoxide) has its files checked against the commit's tree instead.
    fn verify(&mut self, run: &Run<'_>, prepared: &Prepared) -> Result<(), String> {
        if !matches!(run.round, Round::Warmup(_) | Round::Measured(0)) {
            return Ok(());
        }
        let dst = PathBuf::from(prepared.vars.get("dst").expect("prepare always sets dst"));
        if !self
            .makes_git_work_tree
            .get(run.index)
            .copied()
            .unwrap_or(true)
        {
            return verify_files(
                &self.source.path,
                &dst,
                self.expected_commit(),
                &self.scratch(run),
            );
        }
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
        not_listed(&status, &format!("`git status` in {}", dst.display()))
    }

    /// The blocks used on the checkouts' filesystem, for the full checkouts (worktree add, clone), once
    /// the filesystem has finished freeing what the previous run's cleanup deleted.
    fn disk_used(&mut self, _run: &Run<'_>, _prepared: &Prepared) -> Result<Option<u64>, BoxError> {
        match self.operation {
            Operation::WorktreeAdd | Operation::Clone => {
                Ok(Some(crate::filesystem::used_bytes_settled(self.root)?))
            }
            _ => Ok(None),
        }
    }

    fn cleanup(&mut self, run: &Run<'_>, _prepared: Prepared) -> Result<(), BoxError> {
        let scratch = self.scratch(run);
        if scratch.is_dir() {
            std::fs::remove_dir_all(&scratch)?;
        } else if scratch.exists() {
            std::fs::remove_file(&scratch)?;
        }
        if self.operation == Operation::Switch {
            self.deleted += self.switch_trees.restore(run.index)?;
            return Ok(());
        }
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

/// `Ok` if git listed nothing, else the first lines of what it listed, as a failure of the contender.
fn not_listed(listing: &str, what: &str) -> Result<(), String> {
    if listing.is_empty() {
        return Ok(());
    }
    let lines: Vec<&str> = listing.lines().take(5).collect();
    Err(format!(
        "{what} is not clean: {}{}",
        lines.join("; "),
        if listing.lines().count() > 5 {
            "; ..."
        } else {
            ""
        }
    ))
}

/// Checks that `dst` holds exactly the files of `commit` of the repository `src`, with their contents
/// and modes, for a contender that writes the files only: git reads the commit into a scratch index
/// (`scratch`, removed with the run's other scratch files), refreshes it against `dst` (hashing every
/// file, since the index has no stat data yet) and lists what differs and what is not in the commit,
/// submodules aside.
fn verify_files(src: &Path, dst: &Path, commit: &str, scratch: &Path) -> Result<(), String> {
    let mut index = scratch.as_os_str().to_owned();
    index.push(".verify-index");
    let git_dir =
        git::line(src, &["rev-parse", "--absolute-git-dir"]).map_err(|e| e.to_string())?;
    let run = |args: &[&str], check: bool| -> Result<String, String> {
        let out = git::command(dst)
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", dst)
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .output()
            .map_err(|e| format!("could not run git: {e}"))?;
        if check && !out.status.success() {
            return Err(format!(
                "`git {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let result = (|| {
        run(&["read-tree", commit], true)?;
        run(&["update-index", "-q", "--refresh"], false)?;
        let what = format!("{} against {commit}", dst.display());
        // A submodule (gitlink) is written as an empty directory by git and not at all by gix; its
        // files are no checkout's without recursion, so neither is a wrong result.
        let changed = run(
            &["diff-files", "--name-status", "--ignore-submodules=all"],
            true,
        )?;
        not_listed(&changed, &what)?;
        not_listed(&run(&["ls-files", "--others"], true)?, &what)
    })();
    let _ = std::fs::remove_file(&index);
    result
}

/// How far [`settle`] moves the index's modification time ahead: more than git's one-second
/// granularity.
const SETTLE_AHEAD: Duration = Duration::from_secs(10);

/// Makes a work tree (given by its index file) look like one that has been sitting for a while, as the
/// trees users switch in do.
///
/// Files written in the same second as the index are "racily clean": git cannot trust their stat data
/// and compares their contents again, so the timed switch would hash part of the tree as well as write
/// the changed files, by chance of the clock. Racy means "modified no earlier than the index file", so
/// moving the index file's modification time ahead (untimed) makes every recorded stat trustworthy
/// without touching or re-reading the 40,000 files.
fn settle(index: &Path) -> Result<(), BoxError> {
    let when = SystemTime::now() + SETTLE_AHEAD;
    std::fs::File::options()
        .write(true)
        .open(index)?
        .set_modified(when)?;
    Ok(())
}

/// The executor of the timed commands, with the bench's git environment ([`crate::git`]): the
/// contenders run as the untimed setup's git does.
fn executor() -> ProcessExecutor {
    let mut executor = ProcessExecutor::new();
    for var in git::REMOVED {
        executor = executor.env_remove(var);
    }
    for (key, value) in git::SET {
        executor = executor.env(key, value);
    }
    executor
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_verified_against_the_tree_submodules_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir(&src).unwrap();
        let git = |args: &[&str]| git::output(&src, args).unwrap();
        git(&["init", "-q"]);
        std::fs::write(src.join("a"), "a\n").unwrap();
        git(&["add", "a"]);
        // A submodule: git's checkout makes an empty directory for it, gix's none.
        let gitlink = "160000,1a3e64c6c4a623626ff0687008732a8e007e2a1c,sub";
        git(&["update-index", "--add", "--cacheinfo", gitlink]);
        git(&["commit", "-q", "-m", "one file and a submodule"]);
        let commit = git::line(&src, &["rev-parse", "HEAD"]).unwrap();

        let dst = tmp.path().join("dst");
        std::fs::create_dir(&dst).unwrap();
        std::fs::write(dst.join("a"), "a\n").unwrap();
        let scratch = tmp.path().join("scratch");
        assert_eq!(verify_files(&src, &dst, &commit, &scratch), Ok(()));

        std::fs::write(dst.join("a"), "b\n").unwrap();
        let err = verify_files(&src, &dst, &commit, &scratch).unwrap_err();
        assert!(err.ends_with("is not clean: M\ta"), "{err}");
        std::fs::write(dst.join("a"), "a\n").unwrap();
        std::fs::write(dst.join("extra"), "x\n").unwrap();
        let err = verify_files(&src, &dst, &commit, &scratch).unwrap_err();
        assert!(err.ends_with("is not clean: extra"), "{err}");
    }
}
