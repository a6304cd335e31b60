//! The repository a benchmark checks out: the built-in synthetic one, or a private clone of the user's
//! (`--repo`) in which commit pairs with diffs of about the asked sizes are named like the synthetic
//! branches, so that the experiment does not care which it got.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::synth::{self, SynthSpec};
use anyhow::Context as _;

use crate::git;

/// A repository prepared for the experiment: `main` is checked out by `worktree add` and `clone`, and
/// switched away from to each [`Target`].
#[derive(Debug, Clone)]
pub struct Source {
    /// The repository (a work tree whose `.git` holds everything; the work tree itself is empty).
    pub path: PathBuf,
    /// What it is, for the report: the synthetic spec, or the user's repository and commit.
    pub description: String,
    /// Commit id of `main`.
    pub main: String,
    /// Number of files (tree entries other than directories) on `main`: the N of `worktree add` and `clone`.
    pub files: usize,
    /// The switches to measure, in increasing size.
    pub targets: Vec<Target>,
    /// Anything the user should know about how the source was made (a size that could not be matched).
    pub notes: Vec<String>,
}

/// A branch to switch to from `main`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The branch name in [`Source::path`], `diff-<changed>`.
    pub branch: String,
    /// Its commit id, to check that a contender switched where it was told.
    pub commit: String,
    /// Files that differ from `main` (added, deleted or modified, renames counted as two): the N of a switch.
    pub changed: usize,
    /// Whether its changed blobs are loose objects ([`super::loose`]) rather than packed.
    pub loose: bool,
}

/// Returns the synthetic repository of `spec` under `cache`, generating it on first use.
pub fn synthetic(cache: &Path, spec: &SynthSpec) -> anyhow::Result<Source> {
    let synth = synth::ensure_cached(cache, spec).with_context(|| {
        format!(
            "could not generate the synthetic repository under {}",
            cache.display()
        )
    })?;
    let mut targets: Vec<Target> = synth
        .branches
        .iter()
        .map(|b| Target {
            branch: b.name.clone(),
            commit: b.commit.clone(),
            changed: b.changed,
            loose: false,
        })
        .collect();
    targets.sort_by_key(|t| t.changed);
    targets.push(loose(&synth.path, &synth.main, spec.files)?);
    Ok(Source {
        description: format!(
            "synthetic, {} files in {} directories ({:.1} MiB), seed {:#x}, generator version {}",
            spec.files,
            synth.directories,
            synth.bytes as f64 / (1024.0 * 1024.0),
            spec.seed,
            synth::GENERATOR_VERSION
        ),
        path: synth.path,
        main: synth.main,
        files: spec.files,
        targets,
        notes: Vec::new(),
    })
}

/// The switch target whose blobs are loose ([`super::loose`]).
fn loose(dir: &Path, main: &str, files: usize) -> anyhow::Result<Target> {
    let made = super::loose::loose_target(dir, main, files)?;
    Ok(Target {
        branch: made.branch,
        commit: made.commit,
        changed: made.changed,
        loose: true,
    })
}

impl Target {
    /// The title of this target's switch case: its own table for loose blobs.
    pub fn case_title(&self) -> &'static str {
        if self.loose {
            "switch (loose blobs)"
        } else {
            super::operation::Operation::Switch.title()
        }
    }
}

/// Returns the big-files repository of `spec` under `cache` (`--big-files`), generating it on first
/// use: one commit, so there is no switch to measure.
pub fn big(cache: &Path, spec: synth::BigSpec) -> anyhow::Result<Source> {
    let (path, main) = synth::ensure_big_cached(cache, spec).with_context(|| {
        format!(
            "could not generate the big-files repository under {}",
            cache.display()
        )
    })?;
    Ok(Source {
        description: format!(
            "big files: {} files of {} bytes of random data ({:.1} MiB), one commit",
            spec.files,
            spec.size,
            (spec.files as u64 * spec.size) as f64 / (1024.0 * 1024.0)
        ),
        path,
        main,
        files: spec.files,
        targets: Vec::new(),
        notes: vec![
            "the big-files repository has one commit: there is no switch to measure".into(),
        ],
    })
}

/// How far back the first-parent history of `HEAD` is searched for commit pairs.
const MAX_HISTORY: usize = 20_000;

/// A size is "matched" when the closest commit's diff is within this fraction of it.
const MATCH_TOLERANCE: f64 = 0.25;

/// Makes a private clone of `repo` under `cache` (hard links where the filesystem allows, so it costs
/// little) and names in it `main` (the `HEAD` of `repo`) and, for each of `sizes`, `diff-<n>`: the commit
/// of `HEAD`'s first-parent history whose diff with `HEAD` is closest to that size.
///
/// A partial clone or snapshot (public snapshots lack blobs of 4 MiB and more) cannot check out the
/// paths whose blobs it lacks, and no contender may fetch them during a timed run: those paths are
/// left out of `main` and of every target (a commit on top of each, without them; a note says how many),
/// and git runs with `GIT_NO_LAZY_FETCH=1` throughout.
///
/// The user's repository is only read: worktrees, refs and configuration are added to the private clone.
pub fn real(repo: &Path, cache: &Path, sizes: &[usize]) -> anyhow::Result<Source> {
    let repo = crate::platform::canonicalize(repo)
        .with_context(|| format!("--repo {}", repo.display()))?;
    let tip = git::line(
        &repo,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
    )
    .with_context(|| format!("{} has no commit to check out", repo.display()))?;
    let dest = private_clone(&repo, &tip, cache)?;
    let mut notes = Vec::new();
    let mut targets = switch_targets(&repo, &dest, &tip, sizes, &mut notes)?;
    let dropped = without_missing_blobs(&dest, &tip, &mut targets)?;
    let main = if dropped.paths > 0 {
        notes.push(format!(
            "left out of main and of the switch targets: {}, whose blobs {} lacks (a partial clone or \
             snapshot; {} on main)",
            plural(dropped.paths, "path"),
            repo.display(),
            dropped.on_main
        ));
        git::line(&dest, &["rev-parse", "main"])?
    } else {
        tip.clone()
    };
    targets.sort_by_key(|t| t.changed);
    let files = count_nul(&git::output(
        &dest,
        &["ls-tree", "-r", "-z", "--name-only", "main"],
    )?);
    targets.push(loose(&dest, &main, files)?);
    let short = &tip[..tip.len().min(12)];
    let without = if dropped.on_main > 0 {
        format!(
            " without {} whose blobs it lacks",
            plural(dropped.on_main, "path")
        )
    } else {
        String::new()
    };
    Ok(Source {
        description: format!(
            "{} at {short}{without} ({files} files), switching back to older commits of its first-parent \
             history",
            repo.display()
        ),
        path: dest,
        main,
        files,
        targets,
        notes,
    })
}

/// Clones `repo` (canonical) afresh into the cache, named after it and a hash of its path, without a
/// checkout and without automatic gc or maintenance (which would run during timed runs), with `main`
/// at `tip` and `HEAD` on it. Returns the clone's path.
fn private_clone(repo: &Path, tip: &str, cache: &Path) -> anyhow::Result<PathBuf> {
    let dest = cache.join("repos").join(format!(
        "{}-{:016x}",
        repo.file_name()
            .map_or_else(|| "repo".into(), |n| n.to_string_lossy()),
        fnv1a(repo.as_os_str().as_encoded_bytes())
    ));
    if dest.exists() {
        std::fs::remove_dir_all(&dest)
            .with_context(|| format!("could not remove the old clone {}", dest.display()))?;
    }
    std::fs::create_dir_all(cache.join("repos"))
        .with_context(|| format!("could not create {}", cache.display()))?;
    git::output(
        cache,
        &[
            "clone".as_ref(),
            "-q".as_ref(),
            "--no-checkout".as_ref(),
            repo.as_os_str(),
            dest.as_os_str(),
        ],
    )?;
    for (key, value) in [("gc.auto", "0"), ("maintenance.auto", "false")] {
        git::output(&dest, &["config", key, value])?;
    }
    git::output(&dest, &["update-ref", "refs/heads/main", tip])?;
    git::output(&dest, &["symbolic-ref", "HEAD", "refs/heads/main"])?;
    Ok(dest)
}

/// Picks, for each of `sizes` (smallest first), the commit of `tip`'s first-parent history whose diff
/// with `tip` is closest, and names it `diff-<n>` in the clone `dest`. A size no commit comes near,
/// and a history too short for any switch, are said in `notes`; a commit already picked is not picked
/// twice.
fn switch_targets(
    repo: &Path,
    dest: &Path,
    tip: &str,
    sizes: &[usize],
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Target>> {
    let history: Vec<String> = git::output(
        dest,
        &[
            "rev-list",
            "--first-parent",
            &format!("--max-count={MAX_HISTORY}"),
            tip,
        ],
    )?
    .lines()
    .map(str::to_owned)
    .collect();
    let mut picker = Picker {
        dir: dest,
        tip,
        history: &history,
        counts: HashMap::new(),
    };
    let mut targets: Vec<Target> = Vec::new();
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    for &size in &sizes {
        let Some((commit, changed)) = picker.closest(size)? else {
            notes.push(format!(
                "HEAD of {} has no parent: there is no switch to measure",
                repo.display()
            ));
            break;
        };
        if (changed as f64 - size as f64).abs() > MATCH_TOLERANCE * size as f64 {
            notes.push(format!(
                "no commit in the last {} of HEAD's first-parent history changes about {size} files; the \
                 closest changes {changed}",
                history.len()
            ));
        }
        if changed == 0 || targets.iter().any(|t| t.commit == commit) {
            continue;
        }
        let branch = unique_branch(changed, |b| targets.iter().any(|t| t.branch == b));
        git::output(
            dest,
            &["update-ref", &format!("refs/heads/{branch}"), &commit],
        )?;
        targets.push(Target {
            branch,
            commit,
            changed,
            loose: false,
        });
    }
    Ok(targets)
}

/// `diff-<changed>`, or `diff-<changed>-<k>` for the first `k` from 2 that is not `taken`: two commits
/// of a history may differ from the tip in as many files.
fn unique_branch(changed: usize, taken: impl Fn(&str) -> bool) -> String {
    let mut branch = format!("diff-{changed}");
    let mut k = 2;
    while taken(&branch) {
        branch = format!("diff-{changed}-{k}");
        k += 1;
    }
    branch
}

/// How many paths [`without_missing_blobs`] left out.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Dropped {
    /// Paths left out of `main` or of a target (each path counted once).
    paths: usize,
    /// Of those, the paths of `main`.
    on_main: usize,
}

/// The blob entries of `commit`'s tree: (blob id, path).
fn blobs_of(dir: &Path, commit: &str) -> anyhow::Result<Vec<(String, String)>> {
    let listing = git::output(dir, &["ls-tree", "-r", "-z", commit])?;
    let mut blobs = Vec::new();
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        // `<mode> SP <type> SP <id> TAB <path>`
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let mut meta = meta.split(' ');
        if let (_, Some("blob"), Some(id)) = (meta.next(), meta.next(), meta.next()) {
            blobs.push((id.to_owned(), path.to_owned()));
        }
    }
    Ok(blobs)
}

/// Leaves the paths whose blobs are missing (a partial clone's) out of `main` (at `tip`) and out of every
/// target: each commit that has such a path is replaced by a commit on top of it without those paths,
/// `main` and the target branches are moved there, and the targets' `changed` counts are recounted.
/// A path missing from one commit is left out of all of them, so that a switch never writes a path that
/// `main` lacks only because its blob was missing there. Targets left without a difference are dropped.
fn without_missing_blobs(
    dir: &Path,
    tip: &str,
    targets: &mut Vec<Target>,
) -> anyhow::Result<Dropped> {
    let mut commits: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for commit in std::iter::once(tip).chain(targets.iter().map(|t| t.commit.as_str())) {
        commits.push((commit.to_owned(), blobs_of(dir, commit)?));
    }
    let dropped = missing_paths(dir, &commits)?;
    if dropped.is_empty() {
        return Ok(Dropped::default());
    }
    let index = dir.join(".git").join("gitpar-bench-drop.index");
    let mut replaced = Vec::with_capacity(commits.len());
    for (commit, blobs) in &commits {
        let gone: Vec<&str> = blobs
            .iter()
            .map(|(_, path)| path.as_str())
            .filter(|p| dropped.contains(p))
            .collect();
        if gone.is_empty() {
            replaced.push(commit.clone());
            continue;
        }
        replaced.push(commit_without(dir, &index, commit, &gone)?);
    }
    let _ = std::fs::remove_file(&index);
    let on_main = commits[0]
        .1
        .iter()
        .filter(|(_, path)| dropped.contains(path.as_str()))
        .count();
    git::output(dir, &["update-ref", "refs/heads/main", &replaced[0]])?;
    move_targets(dir, &replaced, targets)?;
    Ok(Dropped {
        paths: dropped.len(),
        on_main,
    })
}

/// The paths of any of `commits` (each with its [`blobs_of`]) whose blob the repository lacks,
/// asked of git in one `cat-file --batch-check` for all the blobs.
fn missing_paths<'a>(
    dir: &Path,
    commits: &'a [(String, Vec<(String, String)>)],
) -> anyhow::Result<BTreeSet<&'a str>> {
    let mut ids: Vec<&str> = commits
        .iter()
        .flat_map(|(_, blobs)| blobs.iter().map(|(id, _)| id.as_str()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let input = ids.join("\n") + "\n";
    let checked = git::output_with(
        dir,
        &["cat-file", "--batch-check"],
        Some(input.as_bytes()),
        &[],
    )?;
    let missing: HashSet<&str> = checked
        .lines()
        .filter_map(|l| l.strip_suffix(" missing"))
        .collect();
    Ok(commits
        .iter()
        .flat_map(|(_, blobs)| blobs.iter())
        .filter(|(id, _)| missing.contains(id.as_str()))
        .map(|(_, path)| path.as_str())
        .collect())
}

/// A new commit on top of `commit` whose tree is `commit`'s without the paths `gone`, built in
/// the scratch index file `index` (the clone's own index is left alone).
fn commit_without(dir: &Path, index: &Path, commit: &str, gone: &[&str]) -> anyhow::Result<String> {
    let _ = std::fs::remove_file(index);
    let env = [("GIT_INDEX_FILE", index.as_os_str())];
    git::output_with(dir, &["read-tree", commit], None, &env)?;
    // Mode 0 removes an entry; -z lets paths hold any byte but NUL.
    let zeros = "0".repeat(commit.len());
    let input: String = gone.iter().map(|p| format!("0 {zeros}\t{p}\0")).collect();
    git::output_with(
        dir,
        &["update-index", "-z", "--index-info"],
        Some(input.as_bytes()),
        &env,
    )?;
    let tree = git::output_with(dir, &["write-tree"], None, &env)?;
    let message = format!(
        "{commit} without the {} paths whose blobs this clone lacks",
        gone.len()
    );
    git::line(
        dir,
        &["commit-tree", tree.trim(), "-p", commit, "-m", &message],
    )
}

/// Moves the targets to their `replaced` commits (`replaced[0]` is the new `main`, then one per
/// target, in order): recounts what each changes from the new `main`, drops those left without a
/// difference, and names the branches again after their new sizes.
fn move_targets(dir: &Path, replaced: &[String], targets: &mut Vec<Target>) -> anyhow::Result<()> {
    for (target, commit) in targets.iter_mut().zip(&replaced[1..]) {
        git::output(
            dir,
            &["update-ref", "-d", &format!("refs/heads/{}", target.branch)],
        )?;
        target.commit = commit.clone();
        target.changed = changed_files(dir, &replaced[0], commit)?;
    }
    targets.retain(|t| t.changed > 0);
    // Named again after their new sizes.
    let mut names = HashSet::new();
    for target in targets.iter_mut() {
        target.branch = unique_branch(target.changed, |b| names.contains(b));
        names.insert(target.branch.clone());
        git::output(
            dir,
            &[
                "update-ref",
                &format!("refs/heads/{}", target.branch),
                &target.commit,
            ],
        )?;
    }
    Ok(())
}

/// Finds commits by the size of their diff with the tip, remembering every diff it computed.
struct Picker<'a> {
    dir: &'a Path,
    tip: &'a str,
    /// First-parent history, the tip first.
    history: &'a [String],
    counts: HashMap<usize, usize>,
}

impl Picker<'_> {
    /// Files changed between the tip and `history[k]`.
    fn count(&mut self, k: usize) -> anyhow::Result<usize> {
        if let Some(&c) = self.counts.get(&k) {
            return Ok(c);
        }
        let c = changed_files(self.dir, self.tip, &self.history[k])?;
        self.counts.insert(k, c);
        Ok(c)
    }

    /// Returns the commit (and its diff size) closest to `size`, or `None` if the tip has no parent.
    ///
    /// Diffs with the tip mostly grow with the distance, so a binary search for the first commit whose
    /// diff reaches `size` finds it in a few dozen `diff-tree`s; its neighbour before is the other
    /// candidate. On a history where diffs shrink again (reverts) the result is close rather than closest.
    fn closest(&mut self, size: usize) -> anyhow::Result<Option<(String, usize)>> {
        if self.history.len() < 2 {
            return Ok(None);
        }
        let (mut lo, mut hi) = (1, self.history.len() - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.count(mid)? >= size {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let mut best = (lo, self.count(lo)?);
        if lo > 1 {
            let before = self.count(lo - 1)?;
            if before.abs_diff(size) <= best.1.abs_diff(size) {
                best = (lo - 1, before);
            }
        }
        Ok(Some((self.history[best.0].clone(), best.1)))
    }
}

/// Files that differ between commits `a` and `b` (added, deleted or modified; a rename counts as two),
/// the N of a switch between them.
fn changed_files(dir: &Path, a: &str, b: &str) -> anyhow::Result<usize> {
    let out = git::output(
        dir,
        &[
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--name-only",
            "--no-commit-id",
            a,
            b,
        ],
    )?;
    Ok(count_nul(&out))
}

/// `1 path`, `2 paths`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// Entries of a `-z` listing.
fn count_nul(s: &str) -> usize {
    s.bytes().filter(|&b| b == 0).count()
}

/// FNV-1a, a stable hash for naming a repository's private clone after its path (std's hasher may change
/// between releases, which would orphan clones).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
