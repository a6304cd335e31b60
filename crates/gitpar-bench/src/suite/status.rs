//! The `status` and `refresh` operations of `git par bench`: `git status --porcelain` and
//! `git update-index -q --refresh` against `git par status --porcelain` and `git par refresh -q`.
//!
//! One work tree of `main` is made for both (`git worktree add`, untimed), then 2,000 of its files
//! are *touched* (mtime moved a day back: same content, so the refresh must re-hash them and
//! store fresh stat data) and 200 are *edited* (a line appended: modified). That index is saved;
//! every run starts from a fresh copy of it, so each contender does the same work each time. Before
//! the first run the outputs are compared (`needs update` lists and the porcelain status): a bench
//! of commands that disagree would mean nothing. Then the bench waits for the tree to settle
//! ([`super::settle`]) and states the refresh's floor it measured while waiting.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::run::{BoxError, Fixture, Prepared, Run, Vars};
use anyhow::{bail, Context as _};

use super::source::Source;
use crate::git;

/// Files touched (stat data changed, content not) in the bench's work tree.
pub const TOUCHED: usize = 2_000;
/// Files edited (content changed) in the bench's work tree.
pub const EDITED: usize = 200;

/// The prepared work tree and its saved index.
#[derive(Debug)]
pub struct StatusTree {
    /// The work tree.
    pub dir: PathBuf,
    /// Its index file.
    index: PathBuf,
    /// The saved index every run starts from.
    master: PathBuf,
    /// Its tracked files, as `git ls-files` lists them.
    files: Vec<String>,
    /// When its files were last written (touched and edited).
    written: Instant,
}

impl StatusTree {
    /// Make the work tree under `root`, touch and edit its files, save the index, and check that
    /// git and `git_par` agree on it.
    pub fn create(source: &Source, root: &Path, git_par: &Path) -> anyhow::Result<StatusTree> {
        let dir = root.join("status-tree");
        git::worktree_of_main(&source.path, &dir)?;
        let listing = git::output(&dir, &["ls-files"])?;
        let files: Vec<&str> = listing.lines().collect();
        if files.len() < TOUCHED + EDITED {
            bail!(
                "the status bench needs at least {} files, the repository has {}",
                TOUCHED + EDITED,
                files.len()
            );
        }
        let past = SystemTime::now() - Duration::from_secs(24 * 3600);
        let touch_every = files.len() / TOUCHED;
        for k in 0..TOUCHED {
            let path = dir.join(files[k * touch_every]);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(past))
                .with_context(|| format!("could not touch {}", path.display()))?;
        }
        let edit_every = files.len() / EDITED;
        for k in 0..EDITED {
            let path = dir.join(files[k * edit_every + 1]);
            let mut data = std::fs::read(&path)?;
            data.extend_from_slice(b"\nedited by the status bench\n");
            std::fs::write(&path, data)?;
        }
        let written = Instant::now();
        let index = PathBuf::from(git::line(
            &dir,
            &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        )?);
        let master = root.join("status-index.master");
        std::fs::copy(&index, &master)?;
        let files = files.iter().map(|f| (*f).to_owned()).collect();
        let tree = StatusTree {
            dir,
            index,
            master,
            files,
            written,
        };
        tree.check_agreement(git_par)?;
        Ok(tree)
    }

    /// Wait until an lstat pass over the tree no longer gets faster ([`super::settle`]), with as
    /// many threads as git-par's refresh takes on tmpfs (one per CPU).
    pub fn settle(&self) -> anyhow::Result<super::settle::Settled> {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        super::settle::settle(
            &self.dir,
            &self.index,
            self.files.iter().map(String::as_str),
            threads,
            self.written,
        )
    }

    /// Put a fresh copy of the saved index in place, on disk before the run: the copy replaces
    /// the file in place, so ext4 starts writing it back at once (`auto_da_alloc`), and a run
    /// that replaced the index while that write was in flight waited for it when the old file's
    /// pages were freed (git-par's refresh, about 140 ms after the copy: 7 runs of 20 took
    /// 35 ms longer, git's at 190 ms none). The setup's I/O is the setup's, not the run's.
    fn reset_index(&self) -> std::io::Result<()> {
        std::fs::copy(&self.master, &self.index)?;
        std::fs::File::open(&self.index)?.sync_all()
    }

    /// git and git-par print the same on the same fresh index.
    fn check_agreement(&self, git_par: &Path) -> anyhow::Result<()> {
        let run = |program: &Path, args: &[&str]| -> anyhow::Result<Vec<u8>> {
            self.reset_index()?;
            let out = std::process::Command::new(program)
                .args(args)
                .current_dir(&self.dir)
                .output()
                .with_context(|| format!("could not run {}", program.display()))?;
            Ok(out.stdout)
        };
        let git = Path::new("git");
        let pairs: [(&[&str], &[&str]); 2] = [
            (&["update-index", "--refresh"], &["refresh"]),
            (&["status", "--porcelain"], &["status", "--porcelain"]),
        ];
        for (g, p) in pairs {
            let (a, b) = (run(git, g)?, run(git_par, p)?);
            if a != b {
                bail!(
                    "`git {}` and `git par {}` disagree in {}",
                    g.join(" "),
                    p.join(" "),
                    self.dir.display()
                );
            }
            if a.is_empty() {
                bail!(
                    "`git {}` printed nothing: the bench tree has no changes",
                    g.join(" ")
                );
            }
        }
        Ok(())
    }
}

/// Prepares each run of a `status` or `refresh` case: a fresh copy of the saved index.
pub struct StatusFixture<'a> {
    /// The tree.
    pub tree: &'a StatusTree,
    /// This executable.
    pub git_par: &'a Path,
}

impl Fixture for StatusFixture<'_> {
    fn prepare(&mut self, _run: &Run<'_>) -> Result<Prepared, BoxError> {
        self.tree.reset_index()?;
        Ok(Prepared {
            dir: self.tree.dir.clone(),
            vars: Vars::new()
                .set("dst", &self.tree.dir)
                .set("git_par", self.git_par),
        })
    }

    fn cleanup(&mut self, _run: &Run<'_>, _prepared: Prepared) -> Result<(), BoxError> {
        Ok(())
    }
}
