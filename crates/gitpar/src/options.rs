//! Resolving what a checkout should do from the command line and git's configuration.
//!
//! Precedence follows git: an explicit `-j N` wins, then `checkout.workers`, then our default.
//! `checkout.thresholdForParallelism` keeps its meaning (fewer files than this are written
//! sequentially).

/// Git's default for `checkout.thresholdForParallelism`.
pub const DEFAULT_THRESHOLD: usize = 100;

/// The memory budget for blobs in flight when nothing else is configured: enough for many
/// workers on typical source files, small enough for a CI runner.
pub const DEFAULT_BUDGET: u64 = 256 * 1024 * 1024;

/// How many processes of one long-running filter a parallel checkout runs at most (never more
/// than there are CPUs), unless `par.filterProcesses` says otherwise. Measured with
/// `scripts/bench-filters` on 2 CPUs: two processes beat one for a perl filter (2,000 of 4,000
/// files: 164 against 175 ms, git 152) and for git-lfs (a clone of 300 LFS and 2,000 other files:
/// 422 against 481 ms, git 471), four lose (the processes' start and CPU); a second process starts
/// only once a backlog builds up, so a few filtered files run through one, as with git.
pub const DEFAULT_FILTER_PROCESSES: usize = 2;

/// Everything the engine needs to know about how to check out, decided once per run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Number of writer threads; 1 means the main thread writes everything.
    pub workers: usize,
    /// Below this many regular files the checkout is sequential, as with git.
    pub threshold: usize,
    /// `core.symlinks`: when false, symlinks are written as plain files holding the target.
    pub symlinks: bool,
    /// Path-component protections (gix-validate), from `core.protectNTFS`/`core.protectHFS`.
    pub protect: gix_validate::path::component::Options,
    /// Bytes of blob data allowed in flight across all workers.
    pub budget: u64,
    /// After a safe update, list the local changes carried over (git's `M\tpath` lines). It
    /// costs a walk of the whole target tree, so only callers that print it ask for it.
    pub report_local_changes: bool,
    /// `--recurse-submodules` / `submodule.recurse`: the work trees of active, populated
    /// submodules follow their gitlinks ([`crate::submodule`]).
    pub recurse_submodules: bool,
    /// Ignored files in the way of a safe update are expendable and removed (git's default,
    /// `--overwrite-ignore`); when false (`--no-overwrite-ignore`) they refuse the update like
    /// untracked files (git's `preserve_ignored`).
    pub overwrite_ignore: bool,
    /// What long-running filters are told about the checkout (`ref=`, `treeish=`), as git
    /// tells them: set by the command (the ref and commit it checks out).
    pub filter_meta: crate::filter::Meta,
    /// The most filter threads of a parallel checkout for long-running filters, so the most
    /// processes of one (`par.filterProcesses`; [`DEFAULT_FILTER_PROCESSES`], at most one per
    /// CPU, by default).
    pub filter_processes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            workers: default_workers(),
            threshold: DEFAULT_THRESHOLD,
            symlinks: true,
            protect: default_protect(),
            budget: DEFAULT_BUDGET,
            report_local_changes: false,
            recurse_submodules: false,
            overwrite_ignore: true,
            filter_meta: crate::filter::Meta::default(),
            filter_processes: DEFAULT_FILTER_PROCESSES.min(online_cpus()),
        }
    }
}

/// The number of CPUs, as git's `online_cpus()` counts them.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Our default worker count when neither `-j` nor `checkout.workers` says otherwise.
///
/// Creating files is mostly waiting on the kernel and the filesystem, not computing, so threads
/// beyond the CPU count still overlap useful work (and threads, unlike git's processes, cost no
/// extra memory under the budget). The tuning work refines this per filesystem.
pub fn default_workers() -> usize {
    (online_cpus() * 4).clamp(4, 16)
}

/// Path protections that are safe everywhere: NTFS and HFS aliases of `.git` are refused on every
/// platform (a repository carrying them is hostile, whatever filesystem it lands on); Windows
/// device names are refused only on Windows, as gix-validate and git do.
pub fn default_protect() -> gix_validate::path::component::Options {
    gix_validate::path::component::Options {
        protect_windows: cfg!(windows),
        protect_hfs: true,
        protect_ntfs: true,
    }
}

impl Options {
    /// Resolve the options from a repository's configuration (including `-c` overrides it was
    /// opened with) and an optional `-j` from the command line.
    pub fn from_config(config: &gix::config::Snapshot<'_>, jobs: Option<usize>) -> Self {
        let mut opts = Options::default();
        let from_config = config.integer("checkout.workers").map(|n| {
            usize::try_from(n)
                .ok()
                .filter(|n| *n >= 1)
                .unwrap_or_else(online_cpus)
        });
        opts.workers = jobs
            .map(|n| if n < 1 { online_cpus() } else { n })
            .or(from_config)
            .unwrap_or_else(default_workers);
        if let Some(t) = config.integer("checkout.thresholdForParallelism") {
            opts.threshold = usize::try_from(t).unwrap_or(0);
        }
        opts.symlinks = config.boolean("core.symlinks").unwrap_or(true);
        if let Some(v) = config.boolean("core.protectNTFS") {
            opts.protect.protect_ntfs = v;
        }
        if let Some(v) = config.boolean("core.protectHFS") {
            opts.protect.protect_hfs = v;
        }
        if let Some(n) = config.integer("par.filterProcesses") {
            opts.filter_processes = usize::try_from(n).unwrap_or(1).max(1);
        }
        if let Some(bytes) = config.integer("par.memoryBudget") {
            opts.budget = u64::try_from(bytes).unwrap_or(1).max(1);
        }
        opts
    }
}
