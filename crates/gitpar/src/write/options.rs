//! Resolving what a checkout should do from the command line and git's configuration.
//!
//! Precedence follows git: an explicit `-j N` wins, then `checkout.workers`, then our default,
//! which is chosen per run from the work tree's filesystem ([`crate::fs::tune`]).
//! `checkout.thresholdForParallelism` keeps its meaning (fewer files than this are written
//! sequentially); unset, it depends on the filesystem too.

use crate::sys::cpus::online_cpus;

/// Git's default for `checkout.thresholdForParallelism`.
pub const DEFAULT_THRESHOLD: usize = 100;

/// The memory budget for blobs in flight when nothing else is configured: enough for many
/// workers on typical source files, small enough for a CI runner.
pub const DEFAULT_BUDGET: u64 = 256 * 1024 * 1024;

/// The size from which a blob that needs no conversion is streamed, unless
/// `core.bigFileThreshold` (git's 512 MiB default) is lower. Lower than git's: streaming costs
/// no more than reading whole (the same inflate, writes of a quarter MiB), and a blob read whole
/// takes its size in memory.
pub const STREAM_THRESHOLD: u64 = 4 * 1024 * 1024;

/// How many processes of one long-running filter a parallel checkout runs at most (never more
/// than there are CPUs), unless `par.filterProcesses` says otherwise. Measured with
/// `scripts/bench-filters` on 2 CPUs: two processes beat one for a perl filter (2,000 of 4,000
/// files: 164 against 175 ms, git 152) and for git-lfs (a clone of 300 LFS and 2,000 other files:
/// 422 against 481 ms, git 471), four lose (the processes' start and CPU); a second process starts
/// only once a backlog builds up, so a few filtered files run through one, as with git. git-lfs
/// alone delivering the 300 files (`scripts/bench-filters lfs-parts`, the files dealt in turn):
/// 348 ms with two processes, 375 with one, 368 with three (each downloads its share one object
/// after the other, each start costs a transfer agent and some 20 git commands).
pub const DEFAULT_FILTER_PROCESSES: usize = 2;

/// Everything the engine needs to know about how to check out, decided once per run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Number of writer threads; 1 means the main thread writes everything. With
    /// [`tune::Source::Auto`](crate::fs::tune::Source) this is only a fallback: each run chooses
    /// from its work tree's filesystem ([`Options::choice`]).
    pub workers: usize,
    /// Where `workers` came from: `-j`, `checkout.workers`, or nothing (auto).
    pub workers_source: crate::fs::tune::Source,
    /// Below this many regular files the checkout is sequential, as with git.
    pub threshold: usize,
    /// Whether `threshold` was configured (`checkout.thresholdForParallelism`); when not, the
    /// filesystem decides ([`crate::fs::tune::default_threshold`]).
    pub threshold_set: bool,
    /// `core.symlinks`: when false, symlinks are written as plain files holding the target.
    pub symlinks: bool,
    /// Path-component protections (gix-validate), from `core.protectNTFS`/`core.protectHFS`.
    pub protect: gix_validate::path::component::Options,
    /// Bytes of blob data allowed in flight across all workers.
    pub budget: u64,
    /// Blobs of at least this many bytes that need no conversion are streamed into their
    /// files in pieces rather than read whole: git's `core.bigFileThreshold` when it is lower
    /// than [`STREAM_THRESHOLD`], else that.
    pub stream_threshold: u64,
    /// After a safe update, list the local changes carried over (git's `M\tpath` lines). It
    /// costs a walk of the whole target tree, so only callers that print it ask for it.
    pub report_local_changes: bool,
    /// `--recurse-submodules` / `submodule.recurse`: the work trees of active, populated
    /// submodules follow their gitlinks (`crate::ops::update::submodule`).
    pub recurse_submodules: bool,
    /// Ignored files in the way of a safe update are expendable and removed (git's default,
    /// `--overwrite-ignore`); when false (`--no-overwrite-ignore`) they refuse the update like
    /// untracked files (git's `preserve_ignored`).
    pub overwrite_ignore: bool,
    /// A forced update protects untracked files where a path the index does not have goes: an
    /// untracked file there, or a directory holding untracked files, refuses it (git's reset
    /// with `UNPACK_RESET_PROTECT_UNTRACKED`: `switch --discard-changes` without `--force`).
    /// Paths the index has are replaced whatever is there, as in any forced update.
    pub protect_untracked: bool,
    /// What long-running filters are told about the checkout (`ref=`, `treeish=`), as git
    /// tells them: set by the command (the ref and commit it checks out).
    pub filter_meta: crate::convert::filter::Meta,
    /// The most filter threads of a parallel checkout for long-running filters, so the most
    /// processes of one (`par.filterProcesses`; [`DEFAULT_FILTER_PROCESSES`], at most one per
    /// CPU, by default).
    pub filter_processes: usize,
    /// The work tree a full checkout may clone clean files from ([`crate::write::donor`]): set by
    /// `worktree add` (the work tree it runs in, or `--donor`).
    pub donor: Option<std::path::PathBuf>,
    /// Whether files may be cloned from the donor (`par.reflink`, `--no-reflink`).
    pub reflink: crate::write::donor::Reflink,
    /// Files smaller than this are written even where they could be cloned
    /// (`par.reflinkMinSize`; [`crate::write::donor::DEFAULT_MIN_SIZE`]).
    pub clone_min_size: u64,
    /// The process's current directory relative to the top of the work tree, when it is below
    /// it (git's `startup_info->original_cwd`): an update never removes it. Emptied, it stays;
    /// an update that would put a file in its place refuses
    /// ([`crate::ops::update::Error::CwdInTheWay`]), as git 2.35 and later do.
    pub cwd: Option<bstr::BString>,
    /// `reset --hard`: when entries cannot be written, the index is left as it was and the
    /// update fails ([`crate::ops::update::Error::Checkout`] with the entries), as git's `reset`
    /// dies before it writes the index ("Could not reset index file to revision").
    pub keep_index_on_failed_writes: bool,
    /// `switch -m`/`checkout -m`: git's two-way attempt runs quiet, and then a path the sparse
    /// patterns cannot be applied to (a warning otherwise: not up to date, already present)
    /// fails it like a local change ([`crate::ops::update::Error::WouldLose`]), for git's merge to
    /// take over; nothing was changed.
    pub sparse_warnings_refuse: bool,
    /// `reset --hard` and `worktree add` (which runs git's `reset --hard`): the new index's
    /// cache-tree records the checked-out tree's own ids, as git's `prime_cache_tree` does,
    /// even for trees git would not write as they are (`100664` modes, names out of order,
    /// empty subtrees), so that `git write-tree` and the next commit give back that tree, as
    /// after git's command. Otherwise (`clone`, `checkout`) the directories' ids are those
    /// hashing the new index gives, as git's `cache_tree_update`.
    pub prime_cache_tree: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            workers: default_workers(),
            workers_source: crate::fs::tune::Source::Auto,
            threshold: DEFAULT_THRESHOLD,
            threshold_set: false,
            symlinks: default_symlinks(),
            protect: default_protect(),
            budget: DEFAULT_BUDGET,
            stream_threshold: STREAM_THRESHOLD,
            report_local_changes: false,
            recurse_submodules: false,
            overwrite_ignore: true,
            protect_untracked: false,
            filter_meta: crate::convert::filter::Meta::default(),
            filter_processes: DEFAULT_FILTER_PROCESSES.min(online_cpus()),
            donor: None,
            reflink: crate::write::donor::Reflink::Auto,
            clone_min_size: crate::write::donor::DEFAULT_MIN_SIZE,
            cwd: None,
            keep_index_on_failed_writes: false,
            sparse_warnings_refuse: false,
            prime_cache_tree: false,
        }
    }
}

/// The fallback worker count when neither `-j` nor `checkout.workers` says otherwise and the
/// filesystem is not known (a run that knows its work tree asks [`Options::choice`]).
///
/// Creating files is mostly waiting on the kernel and the filesystem, not computing, so threads
/// beyond the CPU count still overlap useful work (and threads, unlike git's processes, cost no
/// extra memory under the budget).
pub fn default_workers() -> usize {
    (online_cpus() * 4).clamp(4, 16)
}

/// `core.symlinks` when unset: symbolic links are made, except on Windows, where making one
/// needs a privilege and Git for Windows checks a link out as a file holding its target.
pub fn default_symlinks() -> bool {
    !cfg!(windows)
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
        let explicit = jobs.map(|n| if n < 1 { online_cpus() } else { n });
        opts.workers_source = match (explicit, from_config) {
            (Some(_), _) => crate::fs::tune::Source::Explicit,
            (None, Some(_)) => crate::fs::tune::Source::Config,
            (None, None) => crate::fs::tune::Source::Auto,
        };
        opts.workers = explicit.or(from_config).unwrap_or_else(default_workers);
        if let Some(t) = config.integer("checkout.thresholdForParallelism") {
            opts.threshold = usize::try_from(t).unwrap_or(0);
            opts.threshold_set = true;
        }
        opts.symlinks = config
            .boolean("core.symlinks")
            .unwrap_or(default_symlinks());
        if let Some(v) = config.boolean("core.protectNTFS") {
            opts.protect.protect_ntfs = v;
            // Git for Windows' `is_valid_win32_path` (device names, `:`, trailing dots and
            // spaces) is part of the same protection.
            opts.protect.protect_windows = v && default_protect().protect_windows;
        }
        if let Some(v) = config.boolean("core.protectHFS") {
            opts.protect.protect_hfs = v;
        }
        if let Some(bytes) = config.integer("core.bigFileThreshold") {
            opts.stream_threshold = u64::try_from(bytes).unwrap_or(0).min(STREAM_THRESHOLD);
        }
        if let Some(n) = config.integer("par.filterProcesses") {
            opts.filter_processes = usize::try_from(n).unwrap_or(1).max(1);
        }
        if let Some(bytes) = config.integer("par.memoryBudget") {
            opts.budget = u64::try_from(bytes).unwrap_or(1).max(1);
        }
        opts.reflink = crate::write::donor::Reflink::from_config(config);
        if let Some(bytes) = config.integer("par.reflinkMinSize") {
            opts.clone_min_size = u64::try_from(bytes).unwrap_or(0);
        }
        opts
    }

    /// The worker count for a pass over `n_items` files on a filesystem of `kind`: sequential
    /// below the threshold (configured, or the filesystem's default), else `-j` or
    /// `checkout.workers` as given, else the filesystem's choice ([`crate::fs::tune::workers_for`]),
    /// whose growth the memory budget bounds.
    pub fn choice(&self, kind: crate::fs::tune::Kind, n_items: usize) -> crate::fs::tune::Choice {
        use crate::fs::tune::{self, Choice, Source};
        let threshold = if self.threshold_set {
            self.threshold
        } else {
            tune::default_threshold(kind)
        };
        if n_items < threshold.max(1) {
            return Choice {
                workers: 1,
                max: 1,
                source: self.workers_source,
            };
        }
        let explicit = (self.workers_source != Source::Auto)
            .then_some((self.workers.max(1), self.workers_source));
        tune::within_budget(tune::workers_for(kind, n_items, explicit), self.budget)
    }
}
