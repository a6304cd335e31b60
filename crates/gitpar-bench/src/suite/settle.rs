//! Waiting for the status tree to settle before the `status` and `refresh` cases are timed.
//!
//! A refresh is mostly one `lstat` per tracked file, so what the bench times there is only
//! comparable between runs (and with the floor measured by `scripts/refresh-floor`) once what
//! the setup started is over: the writeback of the files and index it wrote (hundreds of MB on a
//! disk filesystem, written out by the kernel's flusher threads on the same CPUs up to 30 s
//! later), and whatever else makes a stat cost more right after the tree was written. So the
//! bench first syncs the filesystems of the work tree and of its index, then makes *lstat
//! passes* over the tracked files (what `scripts/refresh-floor`'s program does: a few threads,
//! 64 files at a time, each `fstatat` relative to an open descriptor of the file's directory)
//! until a pass no longer gets faster: none of the last [`RECENT`] passes is [`GAIN`] faster
//! than the best one before them. The best pass is the refresh's floor on this machine now,
//! and the report states it.
//!
//! Measured on this project's 2-CPU machine, the 200,000-file tree written by `git worktree
//! add`: on tmpfs, and on a just-made ext4 (1 GB dirty, written back over 40 s), a pass costs
//! the same CPU time (172-185 ms) from the first second on, also right after another
//! 200,000-file tree was deleted; what varies is the wall time, with the CPU other programs
//! leave (93-100 ms with both CPUs free, 150-180 ms with one). So on a quiet machine the wait
//! ends after [`MIN_PASSES`] passes; it lasts longer only where passes do get faster.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::platform;

/// Passes made at least.
pub const MIN_PASSES: usize = 5;
/// The passes compared with the best one before them.
pub const RECENT: usize = 3;
/// How much faster than the best earlier pass a recent one must be to count as still dropping.
pub const GAIN: f64 = 0.02;
/// The wait ends after this long, settled or not (a pass that starts before is finished).
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// Files a thread takes at a time, as git-par's refresh does.
const CHUNK: usize = 64;

/// Returns true if and only if `passes` (their times, in order) no longer get faster: at least
/// [`MIN_PASSES`] of them, and none of the last [`RECENT`] faster than `1 - GAIN` times the best
/// one before them.
pub fn settled(passes: &[Duration]) -> bool {
    if passes.len() < MIN_PASSES.max(RECENT + 1) {
        return false;
    }
    let (before, recent) = passes.split_at(passes.len() - RECENT);
    let best_before = before.iter().min().expect("at least one").as_secs_f64();
    let best_recent = recent.iter().min().expect("RECENT > 0").as_secs_f64();
    best_recent >= best_before * (1.0 - GAIN)
}

/// The tracked files of a work tree, ready to be stat'ed: each file's directory (an index into
/// `dirs`) and name, as the system takes them (C strings on Unix), made once.
pub struct Floor {
    root: platform::Root,
    dirs: Vec<platform::Name>,
    files: Vec<(usize, platform::Name)>,
}

impl Floor {
    /// The files `files` (repository-relative, `/`-separated, as `git ls-files` lists them) of
    /// the work tree at `root`.
    pub fn new<'a>(root: &Path, files: impl IntoIterator<Item = &'a str>) -> anyhow::Result<Floor> {
        let open = platform::open_root(root)
            .with_context(|| format!("could not open {}", root.display()))?;
        let mut dirs: Vec<platform::Name> = Vec::new();
        let mut last_dir: Option<&str> = None;
        let mut out = Vec::new();
        for path in files {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            if last_dir != Some(dir) {
                dirs.push(platform::name(dir)?);
                last_dir = Some(dir);
            }
            out.push((dirs.len() - 1, platform::name(name)?));
        }
        Ok(Floor {
            root: open,
            dirs,
            files: out,
        })
    }

    /// How many files a pass stats.
    pub fn count(&self) -> usize {
        self.files.len()
    }

    /// One pass: every file `lstat`ed by `threads` threads. Returns its wall time.
    pub fn pass(&self, threads: usize) -> std::io::Result<Duration> {
        let next = AtomicUsize::new(0);
        let started = Instant::now();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    scope.spawn(|| -> std::io::Result<()> {
                        // The open directory of the files this thread stats now.
                        let mut current: Option<(usize, platform::Dir)> = None;
                        loop {
                            let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                            if start >= self.files.len() {
                                return Ok(());
                            }
                            let end = (start + CHUNK).min(self.files.len());
                            for (dir, name) in &self.files[start..end] {
                                let open = match current.take() {
                                    Some((d, fd)) if d == *dir => fd,
                                    _ => platform::open_dir(&self.root, &self.dirs[*dir])?,
                                };
                                platform::lstat_in(&open, name)?;
                                current = Some((*dir, open));
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
        Ok(started.elapsed())
    }
}

/// Flush the filesystem that `path` is on (`syncfs(2)`; nothing on Windows), so that no
/// writeback of what the setup wrote runs while commands are timed.
pub fn sync_filesystem(path: &Path) -> anyhow::Result<()> {
    platform::sync_filesystem(path)
        .with_context(|| format!("could not sync the filesystem of {}", path.display()))
}

/// What [`settle`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// Whether the passes stopped getting faster before [`TIMEOUT`].
    pub settled: bool,
    /// From when the tree was written to the end of the wait.
    pub after: Duration,
    /// The times of the passes, in order.
    pub passes: Vec<Duration>,
    /// Files per pass.
    pub files: usize,
    /// Threads per pass.
    pub threads: usize,
}

impl Settled {
    /// The fastest pass: the floor of a refresh of this tree, now.
    pub fn best(&self) -> Duration {
        self.passes.iter().min().copied().unwrap_or_default()
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        format!(
            "{} ms (best of {} lstat passes over its {} files, {} threads); {} {:.1} s after it was \
             written (filesystems synced, then passes until none of the last {RECENT} was {:.0}% \
             faster than the best before)",
            self.best().as_millis(),
            self.passes.len(),
            self.files,
            self.threads,
            if self.settled {
                "settled"
            } else {
                "NOT settled: timed anyway"
            },
            self.after.as_secs_f64(),
            GAIN * 100.0,
        )
    }
}

/// Wait for the tree at `dir` (its tracked files `files`, its index `index`, written at
/// `written`) to settle: sync the filesystems of the tree and of its index, then make lstat
/// passes of `threads` threads until [`settled`] or [`TIMEOUT`].
pub fn settle<'a>(
    dir: &Path,
    index: &Path,
    files: impl IntoIterator<Item = &'a str>,
    threads: usize,
    written: Instant,
) -> anyhow::Result<Settled> {
    sync_filesystem(dir)?;
    if let Some(git_dir) = index.parent() {
        sync_filesystem(git_dir)?;
    }
    let floor = Floor::new(dir, files)?;
    let started = Instant::now();
    let mut passes = Vec::new();
    let settled = loop {
        passes.push(
            floor
                .pass(threads)
                .with_context(|| format!("an lstat pass over {} failed", dir.display()))?,
        );
        if settled(&passes) {
            break true;
        }
        if started.elapsed() >= TIMEOUT {
            break false;
        }
    };
    Ok(Settled {
        settled,
        after: written.elapsed(),
        passes,
        files: floor.count(),
        threads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn passes_that_still_get_faster_are_not_settled() {
        assert!(!settled(&ms(&[100, 100, 100, 100])), "too few passes");
        assert!(!settled(&ms(&[200, 180, 150, 120, 100])), "still dropping");
        assert!(!settled(&ms(&[100, 100, 100, 100, 97])), "3% faster");
    }

    #[test]
    fn passes_no_faster_than_the_best_before_are_settled() {
        assert!(settled(&ms(&[100, 100, 100, 100, 100])));
        // Slower recent passes (another program took a CPU) do not hold the wait up.
        assert!(settled(&ms(&[200, 95, 160, 170, 180])));
        assert!(settled(&ms(&[100, 100, 99, 150, 100])), "1% is noise");
    }

    #[test]
    fn a_pass_stats_every_file_and_fails_on_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        for f in ["top", "a/x", "a/b/y", "a/b/z"] {
            std::fs::write(dir.path().join(f), f).unwrap();
        }
        let floor = Floor::new(dir.path(), ["top", "a/x", "a/b/y", "a/b/z"]).unwrap();
        assert_eq!(floor.count(), 4);
        floor.pass(2).unwrap();
        let missing = Floor::new(dir.path(), ["a/x", "a/gone"]).unwrap();
        assert!(missing.pass(1).is_err());
    }
}
