//! The built-in synthetic repository: many small text files in a realistic directory shape, a history on
//! `main`, packed as real repositories are packed, and branches that differ from `main`'s tip in a known
//! number of files.
//!
//! A benchmark needs a repository that every machine can make, that is the same everywhere (so that two
//! people measure the same checkout), and whose diffs have exactly the sizes under study. Everything here is
//! derived from [`SynthSpec::seed`] with our own PRNG, commit dates are fixed, and the objects are written by
//! `git fast-import`, so the same spec gives the same commit ids on any machine.
//!
//! It must also cost what a real repository costs to check out. A checkout spends much of its time
//! decoding deltas, and a real pack holds most blobs as deltas against other blobs: older versions of
//! the same file that only history has, or similar files (translations, templated files). A single
//! commit of unique files packs with no deltas at all (git-par measured 0.74x gitoxide on such a tree and
//! 1.25-1.54x on git/git, tldr and deno). So `main` has [`REVISIONS`] commits after the first, each
//! rewriting a share of the files with edits that insert and delete lines, a share of the files come in
//! families of near-copies with one name in several directories (git's delta search sorts objects by
//! the end of their path), and the whole is repacked with `git repack -a -d -f --depth=50 --window=250`,
//! as real repositories are ([`pack_shape`](crate::pack_shape) measures the result).
//!
//! The repository is a normal (non-bare) one whose work tree is left empty and which has no index: checking
//! it out would defeat the purpose, since benchmarks clone it, `worktree add` from it, or switch in a clone.
//! `HEAD` points at `refs/heads/main`.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

/// Version of the generator's output. Bump it whenever a change alters the generated objects (layout,
/// contents, dates, messages), so that [`ensure_cached`] rebuilds caches made by an older generator instead
/// of silently benchmarking a different repository under the same name.
pub const GENERATOR_VERSION: u32 = 2;

/// The file, inside the repository's `.git`, that records what a cached repository was generated from.
/// It lives in `.git` so that it is never an untracked file of the work tree.
pub const STAMP_FILE: &str = "gitpar-synth.json";

/// Name and e-mail of the synthetic commits; `.invalid` so that nobody can mistake them for a real person.
const IDENT: &str = "git-par bench <bench@git-par.invalid>";
/// Date of the `main` commit (2024-01-01T00:00:00Z). Fixed so that commit ids depend on the seed alone.
const EPOCH: u64 = 1_704_067_200;

/// Smallest and largest generated file, in bytes.
const MIN_SIZE: f64 = 100.0;
const MAX_SIZE: f64 = 20.0 * 1024.0;
/// Median file size of the log-normal size distribution, and the sigma of its logarithm. Together with the
/// bounds this gives a mean of about 2.3 KiB, like the source files of a typical project.
const MEDIAN_SIZE: f64 = 1_500.0;
const SIZE_SIGMA: f64 = 1.0;

/// What to generate. Two equal specs give identical repositories, commit ids included.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SynthSpec {
    /// Number of files on `main`. 40,000 by default: large enough that per-file costs dominate a checkout,
    /// the size of the repository in the measurements this project grew out of.
    pub files: usize,
    /// Seed of every random choice (layout, sizes, contents, which files each branch changes).
    pub seed: u64,
    /// For each `d`, a branch `diff-<d>` that differs from `main` in exactly `d` files. The defaults straddle
    /// the sizes where parallel checkout starts to pay off.
    pub diffs: Vec<usize>,
}

impl Default for SynthSpec {
    fn default() -> Self {
        Self {
            files: 40_000,
            seed: 0x6769_7470_6172_0001,
            diffs: vec![250, 500, 1000, 2000],
        }
    }
}

impl SynthSpec {
    /// Checks that the spec can be generated as asked: at least one file, no branch changing more files
    /// than `main` has, no branch asked for twice.
    pub fn validate(&self) -> Result<(), Error> {
        if self.files == 0 {
            return Err(Error::InvalidSpec(
                "a repository needs at least one file".into(),
            ));
        }
        let mut seen = HashSet::new();
        for &d in &self.diffs {
            if !seen.insert(d) {
                return Err(Error::InvalidSpec(format!(
                    "branch diff-{d} is asked for twice"
                )));
            }
            let (modified, _, deleted) = split_diff(d);
            if modified + deleted > self.files {
                return Err(Error::InvalidSpec(format!(
                    "branch diff-{d} would change more files than the {} of main",
                    self.files
                )));
            }
        }
        Ok(())
    }
}

/// One generated branch and how it differs from `main`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Branch {
    /// Branch name, `diff-<d>`.
    pub name: String,
    /// Commit id (hex) of the branch tip, whose only parent is `main`.
    pub commit: String,
    /// Files that differ from `main`: `modified + added + deleted`, the `d` of the name.
    pub changed: usize,
    /// Files present on both with different contents.
    pub modified: usize,
    /// Files only on this branch.
    pub added: usize,
    /// Files only on `main`.
    pub deleted: usize,
}

/// A generated repository: where it is and what it holds, so that benchmarks can name branches and
/// commits without asking git.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Synth {
    /// The repository (its work tree directory; the git directory is `path/.git`).
    pub path: PathBuf,
    /// What it was generated from.
    pub spec: SynthSpec,
    /// Commit id (hex) of `main`.
    pub main: String,
    /// The `diff-<d>` branches, in the order of [`SynthSpec::diffs`].
    pub branches: Vec<Branch>,
    /// Number of distinct directories holding files on `main`.
    pub directories: usize,
    /// Total size of the files on `main`, in bytes.
    pub bytes: u64,
}

/// Why a synthetic repository could not be generated or reused.
///
/// Each message includes its cause, which is therefore not also given as `source()`: a printer of error
/// chains shows it once.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec cannot be generated; the message says which part.
    #[error("invalid synthetic repository spec: {0}")]
    InvalidSpec(String),
    /// The destination holds something: we do not write a repository over files we did not make.
    #[error("{}: already exists and is not empty; choose another destination or remove it", path.display())]
    DestinationNotEmpty {
        /// The destination given to [`generate`].
        path: PathBuf,
    },
    /// Git could not be started (most likely it is not installed or not on `PATH`).
    #[error("could not run `git {args}`: {cause}")]
    Spawn {
        /// The arguments given to git.
        args: String,
        /// Why the process could not be started.
        cause: io::Error,
    },
    /// Git ran and failed.
    #[error("`git {args}` failed ({status}): {stderr}")]
    Git {
        /// The arguments given to git.
        args: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed on stderr, trimmed.
        stderr: String,
    },
    /// A file system operation failed.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The path operated on.
        path: PathBuf,
        /// The error.
        cause: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |cause| Error::Io {
        path: path.to_owned(),
        cause,
    }
}

/// A `git` command isolated from the caller's repository and configuration, in the bench's one
/// environment ([`crate::git::command`]): variables such as `GIT_DIR` (set when we run
/// from a hook, or under another git command) would otherwise redirect it to the wrong repository.
fn git(dir: &Path) -> Command {
    crate::git::command(dir)
}

fn describe(args: &[&OsStr]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs git in `dir` and returns its stdout.
fn git_output(dir: &Path, args: &[&OsStr]) -> Result<String, Error> {
    let out = git(dir).args(args).output().map_err(|cause| Error::Spawn {
        args: describe(args),
        cause,
    })?;
    if !out.status.success() {
        return Err(Error::Git {
            args: describe(args),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Words for directory and file names, so that paths look like a source tree (`src/net/codec_12.rs`).
const WORDS: &[&str] = &[
    "core", "util", "net", "io", "fs", "parser", "lexer", "render", "cache", "config", "cli",
    "server", "client", "proto", "codec", "sync", "task", "event", "graph", "index", "store",
    "query", "plan", "exec", "auth", "crypto", "log", "trace", "metrics", "http", "json", "text",
    "image", "audio", "math", "geom", "ui", "widget", "layout", "theme", "db", "schema", "model",
    "view", "router", "worker", "pool", "queue", "stream", "buffer", "alloc", "arena", "hash",
    "tree", "list", "map", "set", "diff", "patch", "merge", "refs", "pack", "object", "commit",
];

/// Top-level directories and the file extensions found under each (repeated to weight them).
const ROOTS: &[(&str, &[&str])] = &[
    ("src", &["rs", "rs", "rs", "rs", "rs", "toml"]),
    ("tests", &["rs", "rs", "txt"]),
    ("docs", &["md", "md", "txt", "html"]),
    ("lib", &["c", "c", "h", "rs"]),
    ("crates", &["rs", "rs", "rs", "toml", "md"]),
    ("include", &["h", "h", "hpp"]),
    ("tools", &["py", "py", "sh"]),
    ("examples", &["rs", "rs", "md"]),
    ("bench", &["rs", "rs", "json"]),
    ("scripts", &["sh", "py"]),
];

/// Deepest directory level (top-level directories are level 1).
const MAX_DEPTH: usize = 4;

/// Commits on `main` after the first (which adds every file). Each rewrites a share of the files, so that
/// the pack holds older versions of most files, against which git deltifies many of the versions checked
/// out, as in a real repository. Six, with `REWRITE_SHARE`: more revisions barely change the chains
/// (eight gave a mean depth of 0.82 instead of 0.79) and cost the repack more.
pub const REVISIONS: usize = 6;

/// Chance that a revision rewrites a given file of its own (not in a family): most such files have two or
/// three versions and an eighth of them only one, as in a project whose files change at different rates.
const REWRITE_SHARE: f64 = 0.3;

/// Chance that a file of the layout starts a family of near-copies (translations of one page, templated
/// files) rather than being a file of its own. Families have 2 to [`MAX_FAMILY`] members, so that about
/// 45% of the files are in one: in a pack, a family is a star of deltas against its largest member, the
/// depth-1 blobs that history alone does not make.
const FAMILY_START: f64 = 0.14;
/// Largest family.
const MAX_FAMILY: usize = 8;
/// Share of a family member's lines that are its own rather than the template's: translations share
/// their structure and examples, not their prose. Below half, so that git finds the deltas.
const FAMILY_VARIATION: f64 = 0.1;
/// Share of the template's lines that a member other than the first (the original) leaves out, so that
/// the original is usually the family's largest file, the one git sorts first and deltifies the others
/// against.
const FAMILY_DROP: f64 = 0.2;
/// Family members are rewritten this much less often than files of their own (translations lag behind),
/// so that most stay deltas of their original rather than of each other's histories.
const FAMILY_REWRITES: f64 = 0.15;

struct Dir {
    path: String,
    depth: usize,
    root: usize,
    /// Files on `main` in this directory; additions on branches continue the numbering, so they never
    /// collide with a file of `main`.
    files: usize,
}

/// One file of `main`.
struct File {
    /// Index of its directory in [`Layout::dirs`].
    dir: usize,
    path: String,
    /// The family it belongs to, if any, and its place in it: the first member (0) is the original, the
    /// family's template itself; the others are variations of it.
    family: Option<(usize, usize)>,
}

/// Where every file of `main` goes.
struct Layout {
    dirs: Vec<Dir>,
    files: Vec<File>,
}

impl Layout {
    /// Builds the directory tree and places the files. About 1.5 √files directories (300 for 40,000 files),
    /// a random recursive tree at most [`MAX_DEPTH`] deep, and log-normal directory weights so that some
    /// directories are crowded and most are small, as in real trees. The members of a family have one
    /// file name in as many directories: `<word>-page-<family>.<ext>`, never the name of a file of its own,
    /// and at least 16 characters long, so that git's delta search, which sorts objects by a hash of the
    /// last 16 characters of their path, puts the family's objects side by side.
    fn new(spec: &SynthSpec) -> Self {
        let mut rng = SplitMix64::derive(spec.seed, 1);
        let n_dirs = ((spec.files as f64).sqrt() * 1.5).round().max(1.0) as usize;
        let n_roots = (n_dirs / 30).clamp(1, ROOTS.len());
        let mut dirs: Vec<Dir> = (0..n_roots)
            .map(|r| Dir {
                path: ROOTS[r].0.to_owned(),
                depth: 1,
                root: r,
                files: 0,
            })
            .collect();
        let mut taken: HashSet<String> = dirs.iter().map(|d| d.path.clone()).collect();
        while dirs.len() < n_dirs {
            let parent = rng.below(dirs.len());
            if dirs[parent].depth >= MAX_DEPTH {
                continue;
            }
            let word = WORDS[rng.below(WORDS.len())];
            let mut path = format!("{}/{word}", dirs[parent].path);
            let mut k = 2;
            while taken.contains(&path) {
                path = format!("{}/{word}{k}", dirs[parent].path);
                k += 1;
            }
            taken.insert(path.clone());
            dirs.push(Dir {
                path,
                depth: dirs[parent].depth + 1,
                root: dirs[parent].root,
                files: 0,
            });
        }

        let mut cumulative = Vec::with_capacity(dirs.len());
        let mut total = 0.0;
        for _ in &dirs {
            total += (1.2 * rng.normal()).exp();
            cumulative.push(total);
        }
        let pick_dir = |rng: &mut SplitMix64| {
            let x = rng.unit() * total;
            cumulative.partition_point(|&c| c <= x).min(n_dirs - 1)
        };
        let mut files: Vec<File> = Vec::with_capacity(spec.files);
        let mut families = 0;
        while files.len() < spec.files {
            let left = spec.files - files.len();
            if left >= 2 && dirs.len() >= MAX_FAMILY && rng.unit() < FAMILY_START {
                let members = (2 + rng.below(MAX_FAMILY - 1)).min(left);
                let word = WORDS[rng.below(WORDS.len())];
                let first = pick_dir(&mut rng);
                let exts = ROOTS[dirs[first].root].1;
                let name = format!("{word}-page-{families:06}.{}", exts[rng.below(exts.len())]);
                let mut used = vec![first];
                while used.len() < members {
                    let d = pick_dir(&mut rng);
                    if !used.contains(&d) {
                        used.push(d);
                    }
                }
                for (member, d) in used.into_iter().enumerate() {
                    dirs[d].files += 1;
                    files.push(File {
                        dir: d,
                        path: format!("{}/{name}", dirs[d].path),
                        family: Some((families, member)),
                    });
                }
                families += 1;
            } else {
                let d = pick_dir(&mut rng);
                let path = file_path(&mut rng, &dirs[d], dirs[d].files);
                dirs[d].files += 1;
                files.push(File {
                    dir: d,
                    path,
                    family: None,
                });
            }
        }
        Self { dirs, files }
    }
}

/// The path of file number `k` of `dir`: `<dir>/<word>_<k>.<ext>`. The number makes it unique in its
/// directory, and the extension keeps it from ever colliding with a subdirectory name.
fn file_path(rng: &mut SplitMix64, dir: &Dir, k: usize) -> String {
    let word = WORDS[rng.below(WORDS.len())];
    let exts = ROOTS[dir.root].1;
    let ext = exts[rng.below(exts.len())];
    format!("{}/{word}_{k}.{ext}", dir.path)
}

/// A file size in bytes, log-normal around [`MEDIAN_SIZE`] and clamped to [`MIN_SIZE`, `MAX_SIZE`].
fn file_size(rng: &mut SplitMix64) -> usize {
    (MEDIAN_SIZE.ln() + SIZE_SIGMA * rng.normal())
        .exp()
        .clamp(MIN_SIZE, MAX_SIZE) as usize
}

/// Appends one line of plausible source text. Text rather than random bytes, so that compression and
/// deltas behave as they do on real repositories.
fn push_line(rng: &mut SplitMix64, out: &mut Vec<u8>) {
    fn w(rng: &mut SplitMix64) -> &'static str {
        WORDS[rng.below(WORDS.len())]
    }
    let r = rng;
    // Writing to a Vec cannot fail.
    let _ = match r.below(8) {
        0 => writeln!(out, "// {} {} {} {} {}", w(r), w(r), w(r), w(r), w(r)),
        1 => writeln!(out, "fn {}_{}({}: u32) -> u32 {{", w(r), w(r), w(r)),
        2 => writeln!(
            out,
            "    let {} = {}({}, {});",
            w(r),
            w(r),
            w(r),
            r.below(1000)
        ),
        3 => writeln!(out, "    if {}.{}() > {} {{", w(r), w(r), r.below(100)),
        4 => writeln!(out, "    }}"),
        5 => writeln!(out, "}}\n"),
        6 => writeln!(out, "    return {}_{};", w(r), w(r)),
        _ => writeln!(
            out,
            "    {}.{}({}, \"{} {}\");",
            w(r),
            w(r),
            r.below(64),
            w(r),
            w(r)
        ),
    };
}

/// Fills `out` with exactly `size` bytes of text ending in a newline.
fn fill(rng: &mut SplitMix64, size: usize, out: &mut Vec<u8>) {
    out.clear();
    while out.len() < size {
        push_line(rng, out);
    }
    out.truncate(size.saturating_sub(1));
    out.push(b'\n');
}

/// Label of the stream of file `i`'s first contents.
const FILE_STREAM: u64 = 0x1000_0000_0000;
/// Label of the stream of a diff branch (plus its size).
const BRANCH_STREAM: u64 = 0x2000_0000_0000;
/// Label of the stream of a family's template (plus the family).
const FAMILY_STREAM: u64 = 0x3000_0000_0000;
/// Label of the stream of revision `r` of file `i` (plus `i * (REVISIONS + 1) + r`).
const REVISION_STREAM: u64 = 0x4000_0000_0000;

/// The contents of file `i` in the first commit of `main`: its own text, or its family's template (the
/// original), or the template with [`FAMILY_VARIATION`] of the lines its own and [`FAMILY_DROP`] of them
/// left out. A function of (seed, i) alone, so that any version of any file can be made again without
/// keeping 40,000 files in memory.
fn first_contents(seed: u64, layout: &Layout, i: usize, out: &mut Vec<u8>) {
    let mut rng = SplitMix64::derive(seed, FILE_STREAM + i as u64);
    let Some((family, member)) = layout.files[i].family else {
        let size = file_size(&mut rng);
        fill(&mut rng, size, out);
        return;
    };
    let mut template_rng = SplitMix64::derive(seed, FAMILY_STREAM + family as u64);
    let size = file_size(&mut template_rng);
    let mut template = Vec::with_capacity(size);
    fill(&mut template_rng, size, &mut template);
    out.clear();
    if member == 0 {
        out.extend_from_slice(&template);
        return;
    }
    for line in template.split_inclusive(|&b| b == b'\n') {
        let x = rng.unit();
        if x < FAMILY_VARIATION {
            push_line(&mut rng, out);
        } else if x >= FAMILY_VARIATION + FAMILY_DROP {
            out.extend_from_slice(line);
        }
    }
    if out.is_empty() {
        out.extend_from_slice(&template);
    }
}

/// Whether revision `r` (1 to [`REVISIONS`]) of `main` rewrites file `i`, and if so the stream of that
/// rewrite.
fn revision_rng(layout: &Layout, seed: u64, i: usize, r: usize) -> Option<SplitMix64> {
    let mut rng = SplitMix64::derive(seed, REVISION_STREAM + (i * (REVISIONS + 1) + r) as u64);
    let share = match layout.files[i].family {
        Some(_) => REWRITE_SHARE * FAMILY_REWRITES,
        None => REWRITE_SHARE,
    };
    (rng.unit() < share).then_some(rng)
}

/// The contents of file `i` after revision `upto` of `main` (0: the first commit): its first contents with
/// every rewrite of the revisions up to `upto` applied in turn.
fn contents_at(seed: u64, layout: &Layout, i: usize, upto: usize, out: &mut Vec<u8>) {
    first_contents(seed, layout, i, out);
    for r in 1..=upto {
        if let Some(mut rng) = revision_rng(layout, seed, i, r) {
            rewrite(&mut rng, out);
        }
    }
}

/// Edits a file as a commit does: one to three hunks, each deleting up to four lines at a line boundary and
/// inserting up to four new ones, with at least one line deleted (if there is one) and one inserted in
/// all, so that sizes move both ways from version to version; the contents always change.
fn rewrite(rng: &mut SplitMix64, buf: &mut Vec<u8>) {
    let before = buf.clone();
    // The lines deleted and inserted may be the same (`    }`), and a diff branch's modified files and a
    // revision's must differ from what they were: edit again until they do.
    loop {
        edit(rng, buf);
        if *buf != before {
            return;
        }
    }
}

/// One attempt of [`rewrite`].
fn edit(rng: &mut SplitMix64, buf: &mut Vec<u8>) {
    let hunks = 1 + rng.below(3);
    let mut deleted_any = false;
    for h in 0..hunks {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(
                buf.iter()
                    .enumerate()
                    .filter(|&(k, &b)| b == b'\n' && k + 1 < buf.len())
                    .map(|(k, _)| k + 1),
            )
            .collect();
        let lines = if buf.is_empty() { 0 } else { starts.len() };
        let last = h + 1 == hunks;
        let mut at = rng.below(lines + 1);
        let mut delete = rng.below(5).min(lines - at);
        if last && !deleted_any && delete == 0 && lines > 0 {
            at = at.min(lines - 1);
            delete = 1;
        }
        deleted_any |= delete > 0;
        let start = starts.get(at).copied().unwrap_or(buf.len());
        let end = starts.get(at + delete).copied().unwrap_or(buf.len());
        let mut insert = Vec::new();
        for _ in 0..rng.below(5).max(usize::from(last)) {
            push_line(rng, &mut insert);
        }
        buf.splice(start..end, insert);
    }
}

/// How a branch of `d` changed files splits into (modified, added, deleted): mostly modifications, with 2%
/// additions and 2% deletions (at least one of each from 3 files up), as in everyday commits.
fn split_diff(d: usize) -> (usize, usize, usize) {
    let each = if d >= 3 { (d / 50).max(1) } else { 0 };
    (d - 2 * each, each, each)
}

/// Writes one fast-import `data` command.
fn data(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    writeln!(out, "data {}", bytes.len())?;
    out.write_all(bytes)?;
    out.write_all(b"\n")
}

fn commit_header(
    out: &mut impl Write,
    branch: &str,
    mark: usize,
    date: u64,
    message: &str,
) -> io::Result<()> {
    writeln!(out, "commit refs/heads/{branch}")?;
    writeln!(out, "mark :{mark}")?;
    writeln!(out, "author {IDENT} {date} +0000")?;
    writeln!(out, "committer {IDENT} {date} +0000")?;
    data(out, message.as_bytes())
}

/// What the stream generator learnt while writing, reported in [`Synth`].
struct Written {
    branches: Vec<Branch>,
    directories: usize,
    bytes: u64,
}

/// Writes the whole fast-import stream: `main`'s first commit with every file, its [`REVISIONS`] commits
/// (a day apart), then one commit per diff branch on top of `main`'s tip.
fn write_stream(spec: &SynthSpec, out: &mut impl Write) -> io::Result<Written> {
    let layout = Layout::new(spec);
    let mut buf = Vec::with_capacity(MAX_SIZE as usize + 256);

    let message = format!(
        "Synthetic repository: {} files, seed {:#x}\n\nGenerated by gitpar-bench (generator version {GENERATOR_VERSION}).\n",
        spec.files, spec.seed
    );
    commit_header(out, "main", 1, EPOCH, &message)?;
    for (i, file) in layout.files.iter().enumerate() {
        first_contents(spec.seed, &layout, i, &mut buf);
        writeln!(out, "M 100644 inline {}", file.path)?;
        data(out, &buf)?;
    }
    out.write_all(b"\n")?;
    for r in 1..=REVISIONS {
        let rewritten: Vec<usize> = (0..spec.files)
            .filter(|&i| revision_rng(&layout, spec.seed, i, r).is_some())
            .collect();
        let message = format!("Revision {r}: rewrite {} files\n", rewritten.len());
        commit_header(out, "main", 1 + r, EPOCH + 86_400 * r as u64, &message)?;
        for i in rewritten {
            contents_at(spec.seed, &layout, i, r, &mut buf);
            writeln!(out, "M 100644 inline {}", layout.files[i].path)?;
            data(out, &buf)?;
        }
        out.write_all(b"\n")?;
    }
    let tip = 1 + REVISIONS;
    let tip_date = EPOCH + 86_400 * REVISIONS as u64;
    let mut bytes = 0u64;
    for i in 0..spec.files {
        contents_at(spec.seed, &layout, i, REVISIONS, &mut buf);
        bytes += buf.len() as u64;
    }

    let mut branches = Vec::with_capacity(spec.diffs.len());
    for (k, &d) in spec.diffs.iter().enumerate() {
        let mut rng = SplitMix64::derive(spec.seed, BRANCH_STREAM + d as u64);
        let (modified, added, deleted) = split_diff(d);
        // A partial Fisher-Yates shuffle picks distinct files: the first `modified` are changed, the next
        // `deleted` removed, so no file is both.
        let mut order: Vec<usize> = (0..spec.files).collect();
        for j in 0..modified + deleted {
            let r = j + rng.below(spec.files - j);
            order.swap(j, r);
        }
        let name = format!("diff-{d}");
        let message =
            format!("Change {d} files ({modified} modified, {added} added, {deleted} deleted)\n");
        // One hour after main's tip, whatever the branch's position in the spec: a branch depends on
        // (seed, d) alone.
        commit_header(out, &name, tip + 1 + k, tip_date + 3600, &message)?;
        writeln!(out, "from :{tip}")?;
        for &i in &order[..modified] {
            contents_at(spec.seed, &layout, i, REVISIONS, &mut buf);
            rewrite(&mut rng, &mut buf);
            writeln!(out, "M 100644 inline {}", layout.files[i].path)?;
            data(out, &buf)?;
        }
        for &i in &order[modified..modified + deleted] {
            writeln!(out, "D {}", layout.files[i].path)?;
        }
        for j in 0..added {
            let dir = layout.files[rng.below(spec.files)].dir;
            // Number additions after the directory's files of main, and after those of earlier additions
            // of this branch, so that each is a new path.
            let path = file_path(&mut rng, &layout.dirs[dir], layout.dirs[dir].files + j);
            let size = file_size(&mut rng);
            fill(&mut rng, size, &mut buf);
            writeln!(out, "M 100644 inline {path}")?;
            data(out, &buf)?;
        }
        out.write_all(b"\n")?;
        branches.push(Branch {
            name,
            commit: String::new(),
            changed: d,
            modified,
            added,
            deleted,
        });
    }
    writeln!(out, "done")?;
    out.flush()?;
    let directories = layout.dirs.iter().filter(|d| d.files > 0).count();
    Ok(Written {
        branches,
        directories,
        bytes,
    })
}

/// How the repository is packed after `git fast-import`: as `git gc --aggressive` packs, and as the
/// maintainers of large repositories repack theirs, so that its delta chains look like theirs (fast-import
/// only deltifies a file against its previous version, in the order it was written).
pub const REPACK: [&str; 7] = [
    "repack",
    "-a",
    "-d",
    "-f",
    "--depth=50",
    "--window=250",
    "-q",
];

/// Generates the repository of `spec` at `dest`, which must not exist or be an empty directory.
///
/// It runs `git init` (with `main` as the initial branch), streams every object into `git fast-import`,
/// repacks them ([`REPACK`]), sets `gc.auto=0` and `maintenance.auto=false` in the repository (so that no
/// automatic gc starts in the middle of a benchmark that uses it), and reads back the commit ids. The work
/// tree is left empty and no index is written. Needs `git` on `PATH`.
pub fn generate(dest: &Path, spec: &SynthSpec) -> Result<Synth, Error> {
    spec.validate()?;
    if dest.exists() {
        let mut entries = std::fs::read_dir(dest).map_err(io_err(dest))?;
        if entries.next().is_some() {
            return Err(Error::DestinationNotEmpty {
                path: dest.to_owned(),
            });
        }
    }
    std::fs::create_dir_all(dest).map_err(io_err(dest))?;
    git_output(
        dest,
        &["-c", "init.defaultBranch=main", "init", "--quiet", "."].map(OsStr::new),
    )?;
    for (key, value) in [("gc.auto", "0"), ("maintenance.auto", "false")] {
        git_output(dest, &["config", key, value].map(OsStr::new))?;
    }

    let args = ["fast-import", "--quiet", "--done", "--date-format=raw"].map(OsStr::new);
    let mut child = git(dest)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|cause| Error::Spawn {
            args: describe(&args),
            cause,
        })?;
    // Drain stderr on a thread: if fast-import complained at length while we block writing its stdin,
    // neither side would make progress.
    let mut stderr = child.stderr.take().expect("stderr was piped above");
    let stderr_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let stdin = child.stdin.take().expect("stdin was piped above");
    let written = write_stream(spec, &mut io::BufWriter::with_capacity(1 << 20, stdin));
    let status = child.wait().map_err(io_err(dest))?;
    let stderr = stderr_reader.join().unwrap_or_default();
    if !status.success() {
        // Prefer git's account: a write error here is only the broken pipe that its exit caused.
        return Err(Error::Git {
            args: describe(&args),
            status,
            stderr: stderr.trim().to_owned(),
        });
    }
    let written = written.map_err(io_err(dest))?;
    git_output(dest, &REPACK.map(OsStr::new))?;

    let mut synth = Synth {
        path: dest.to_owned(),
        spec: spec.clone(),
        main: String::new(),
        branches: written.branches,
        directories: written.directories,
        bytes: written.bytes,
    };
    let mut args = vec![OsStr::new("rev-parse"), OsStr::new("refs/heads/main")];
    let refs: Vec<String> = synth
        .branches
        .iter()
        .map(|b| format!("refs/heads/{}", b.name))
        .collect();
    args.extend(refs.iter().map(OsStr::new));
    let ids = git_output(dest, &args)?;
    let mut ids = ids.lines().map(str::to_owned);
    synth.main = ids.next().unwrap_or_default();
    for (branch, id) in synth.branches.iter_mut().zip(ids) {
        branch.commit = id;
    }
    Ok(synth)
}

/// Where synthetic repositories are cached by default: `$GITPAR_BENCH_CACHE` if set, else
/// `$XDG_CACHE_HOME/git-par/bench`, else `~/.cache/git-par/bench`, else `git-par-bench` in the temporary
/// directory.
///
/// Generating the default repository takes seconds, cloning it milliseconds per thousand files, so a series
/// of benchmarks generates it once. Mind the filesystem of the cache: a local clone hard-links objects only
/// within one filesystem.
pub fn cache_dir() -> PathBuf {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("GITPAR_BENCH_CACHE") {
        return dir;
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return dir.join("git-par").join("bench");
    }
    if let Some(home) = var("HOME") {
        return home.join(".cache").join("git-par").join("bench");
    }
    std::env::temp_dir().join("git-par-bench")
}

/// A repository of a few big files of random bytes (`--big-files`): the shape where a checkout from a
/// donor work tree saves the most (issue 22 asks for 40 files of 8 MiB to check out 20 times faster
/// than a plain checkout with 1% of its disk), and where a plain checkout's cost is its bytes, not its
/// files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BigSpec {
    /// Number of files, `big/file-NNNN.bin`.
    pub files: usize,
    /// Size of each, in bytes.
    pub size: u64,
}

impl BigSpec {
    /// The size of each file when `--big-size` is not given: 8 MiB.
    pub const DEFAULT_SIZE: u64 = 8 << 20;
}

/// The version of what [`generate_big`] writes, in the cached repository's name.
const BIG_VERSION: u32 = 2;

/// Label of the stream of a big file's bytes (plus its number).
const BIG_STREAM: u64 = 0x5000_0000_0000;

/// Generates the repository of `spec` at `dest` (which must not exist): one commit on `main` holding
/// the files, each of `size` bytes of our PRNG's output (incompressible, no deltas: git stores them
/// whole), the same on every machine. Returns the commit id of `main`. The work tree is left empty.
pub fn generate_big(dest: &Path, spec: BigSpec) -> Result<String, Error> {
    if spec.files == 0 || spec.size == 0 {
        return Err(Error::InvalidSpec(
            "--big-files and --big-size need at least one file of at least one byte".into(),
        ));
    }
    std::fs::create_dir_all(dest).map_err(io_err(dest))?;
    git_output(
        dest,
        &["-c", "init.defaultBranch=main", "init", "--quiet", "."].map(OsStr::new),
    )?;
    for (key, value) in [("gc.auto", "0"), ("maintenance.auto", "false")] {
        git_output(dest, &["config", key, value].map(OsStr::new))?;
    }
    // Random bytes do not compress: zlib at level 1 stores them as fast as it can. A pack of fewer than
    // 100 objects would be unpacked into loose objects (fastimport.unpackLimit); a repository keeps its
    // big files in a pack.
    let args = [
        "-c",
        "pack.compression=1",
        "-c",
        "fastimport.unpackLimit=0",
        "fast-import",
        "--quiet",
        "--done",
        "--date-format=raw",
    ]
    .map(OsStr::new);
    let mut child = git(dest)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|cause| Error::Spawn {
            args: describe(&args),
            cause,
        })?;
    let mut stderr = child.stderr.take().expect("stderr was piped above");
    let stderr_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let stdin = child.stdin.take().expect("stdin was piped above");
    let written = (|| -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(1 << 20, stdin);
        let message = format!(
            "Big files: {} files of {} bytes\n\nGenerated by gitpar-bench (big files version {BIG_VERSION}).\n",
            spec.files, spec.size
        );
        commit_header(&mut out, "main", 1, EPOCH, &message)?;
        let mut buf = Vec::with_capacity(usize::try_from(spec.size).unwrap_or(0));
        for i in 0..spec.files {
            let mut rng = SplitMix64::derive(SEED_BIG, BIG_STREAM + i as u64);
            buf.clear();
            while (buf.len() as u64) < spec.size {
                buf.extend_from_slice(&rng.next_u64().to_le_bytes());
            }
            buf.truncate(spec.size as usize);
            writeln!(out, "M 100644 inline big/file-{i:04}.bin")?;
            data(&mut out, &buf)?;
        }
        writeln!(out, "\ndone")?;
        out.flush()
    })();
    let status = child.wait().map_err(io_err(dest))?;
    let stderr = stderr_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(Error::Git {
            args: describe(&args),
            status,
            stderr: stderr.trim().to_owned(),
        });
    }
    written.map_err(io_err(dest))?;
    Ok(
        git_output(dest, &["rev-parse", "refs/heads/main"].map(OsStr::new))?
            .trim()
            .to_owned(),
    )
}

/// The seed of the big files' bytes.
const SEED_BIG: u64 = 0x6769_7470_6172_0b16;

/// Returns the path and `main` of the big-files repository of `spec` under `root`, generating it on
/// first use (in a temporary sibling renamed into place, as [`ensure_cached`] does).
pub fn ensure_big_cached(root: &Path, spec: BigSpec) -> Result<(PathBuf, String), Error> {
    let name = format!("big-{}x{}-v{BIG_VERSION}", spec.files, spec.size);
    let dest = root.join(&name);
    if let Ok(main) = git_output(
        &dest,
        &["rev-parse", "--verify", "--quiet", "refs/heads/main"].map(OsStr::new),
    ) {
        if dest.join(".git").is_dir() {
            return Ok((dest, main.trim().to_owned()));
        }
    }
    std::fs::create_dir_all(root).map_err(io_err(root))?;
    let tmp = root.join(format!(".{name}.tmp-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io_err(&tmp))?;
    }
    let result = generate_big(&tmp, spec).and_then(|main| {
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(io_err(&dest))?;
        }
        std::fs::rename(&tmp, &dest).map_err(io_err(&dest))?;
        Ok((dest.clone(), main))
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

/// What [`STAMP_FILE`] holds: everything that determines the repository, and what it was found to hold.
#[derive(Serialize, Deserialize)]
struct Stamp {
    generator_version: u32,
    synth: Synth,
}

/// The directory name of `spec`'s repository under a cache root. The spec's other fields are checked by the
/// stamp, so a change of `diffs` rebuilds in place rather than piling up repositories.
fn cache_name(spec: &SynthSpec) -> String {
    format!("synth-{}-{:016x}", spec.files, spec.seed)
}

/// Returns the cached repository of `spec` under `root` if its stamp matches (same generator version, same
/// spec, refs still at the recorded commits), and otherwise (re)generates it there.
///
/// The repository is generated in a temporary sibling directory and renamed into place once its stamp is
/// written, so that an interrupted generation, or two processes generating at once, never leave a
/// half-made repository that looks valid.
pub fn ensure_cached(root: &Path, spec: &SynthSpec) -> Result<Synth, Error> {
    spec.validate()?;
    let dest = root.join(cache_name(spec));
    if let Some(synth) = load_cached(&dest, spec) {
        return Ok(synth);
    }
    std::fs::create_dir_all(root).map_err(io_err(root))?;
    let tmp = root.join(format!(".{}.tmp-{}", cache_name(spec), std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io_err(&tmp))?;
    }
    let result = generate_stamped(&tmp, &dest, spec);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn generate_stamped(tmp: &Path, dest: &Path, spec: &SynthSpec) -> Result<Synth, Error> {
    let mut synth = generate(tmp, spec)?;
    synth.path = dest.to_owned();
    let stamp = Stamp {
        generator_version: GENERATOR_VERSION,
        synth,
    };
    let stamp_path = tmp.join(".git").join(STAMP_FILE);
    let json = serde_json::to_vec_pretty(&stamp).expect("a stamp always serializes");
    std::fs::write(&stamp_path, json).map_err(io_err(&stamp_path))?;
    if dest.exists() {
        std::fs::remove_dir_all(dest).map_err(io_err(dest))?;
    }
    if let Err(err) = std::fs::rename(tmp, dest) {
        // Another process may have put an identical repository there first: use it.
        if let Some(synth) = load_cached(dest, spec) {
            let _ = std::fs::remove_dir_all(tmp);
            return Ok(synth);
        }
        return Err(Error::Io {
            path: dest.to_owned(),
            cause: err,
        });
    }
    Ok(stamp.synth)
}

/// Branches the bench adds to a cached repository after it is made, and checks itself: the switch target
/// whose blobs are loose (`loose-<n>`, `suite::loose`). The cache's check leaves them out, so that adding
/// one does not make the next run generate the whole repository again.
pub const ADDED_BRANCH_PREFIX: &str = "loose-";

/// Returns the repository at `dest` if its stamp says it is `spec`'s, made by this generator version, and
/// its refs still point where the stamp says (someone may have committed to the cache), branches under
/// [`ADDED_BRANCH_PREFIX`] aside.
fn load_cached(dest: &Path, spec: &SynthSpec) -> Option<Synth> {
    let json = std::fs::read(dest.join(".git").join(STAMP_FILE)).ok()?;
    let stamp: Stamp = serde_json::from_slice(&json).ok()?;
    if stamp.generator_version != GENERATOR_VERSION || stamp.synth.spec != *spec {
        return None;
    }
    let refs = git_output(
        dest,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/heads/",
        ]
        .map(OsStr::new),
    )
    .ok()?;
    let mut expected = format!("{} refs/heads/main\n", stamp.synth.main);
    for b in &stamp.synth.branches {
        expected.push_str(&format!("{} refs/heads/{}\n", b.commit, b.name));
    }
    let mut expected: Vec<&str> = expected.lines().collect();
    let added = format!(" refs/heads/{ADDED_BRANCH_PREFIX}");
    let mut found: Vec<&str> = refs.lines().filter(|l| !l.contains(&added)).collect();
    expected.sort_unstable();
    found.sort_unstable();
    if expected != found {
        return None;
    }
    let mut synth = stamp.synth;
    synth.path = dest.to_owned();
    Some(synth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn split_diff_is_mostly_modifications() {
        assert_eq!(split_diff(1), (1, 0, 0));
        assert_eq!(split_diff(2), (2, 0, 0));
        assert_eq!(split_diff(10), (8, 1, 1));
        assert_eq!(split_diff(250), (240, 5, 5));
        assert_eq!(split_diff(2000), (1920, 40, 40));
    }

    #[test]
    fn file_sizes_stay_in_bounds() {
        let mut rng = SplitMix64::new(3);
        let mut buf = Vec::new();
        for _ in 0..2000 {
            let size = file_size(&mut rng);
            assert!((100..=20 * 1024).contains(&size));
            fill(&mut rng, size, &mut buf);
            assert_eq!(buf.len(), size);
            assert_eq!(buf.last(), Some(&b'\n'));
        }
    }

    #[test]
    fn layout_has_unique_paths_and_bounded_depth() {
        let spec = SynthSpec {
            files: 40_000,
            ..SynthSpec::default()
        };
        let layout = Layout::new(&spec);
        assert_eq!(layout.dirs.len(), 300);
        let unique: HashSet<&str> = layout.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(unique.len(), 40_000);
        assert!(layout
            .dirs
            .iter()
            .all(|d| (1..=MAX_DEPTH).contains(&d.depth)));
        assert!(layout.dirs.iter().any(|d| d.depth == MAX_DEPTH));
        let used = layout.dirs.iter().filter(|d| d.files > 0).count();
        assert!(used > 200, "{used} directories hold files");
    }

    fn line_counts(b: &[u8]) -> HashMap<&[u8], usize> {
        let mut counts = HashMap::new();
        for line in b.split_inclusive(|&c| c == b'\n') {
            *counts.entry(line).or_default() += 1;
        }
        counts
    }

    #[test]
    fn rewrites_insert_and_delete_lines_so_sizes_move_both_ways() {
        let mut rng = SplitMix64::new(5);
        let (mut grew, mut shrank, mut both) = (0, 0, 0);
        let mut buf = Vec::new();
        for k in 0..500 {
            fill(&mut rng, 100 + k * 7, &mut buf);
            let before = buf.clone();
            rewrite(&mut rng, &mut buf);
            assert_ne!(buf, before);
            assert_eq!(buf.last(), Some(&b'\n'));
            // Lines as a multiset: deleting one `    }` of several is a deletion too.
            let (old, new) = (line_counts(&before), line_counts(&buf));
            let fewer = |a: &HashMap<&[u8], usize>, b: &HashMap<&[u8], usize>| {
                a.iter().any(|(l, n)| b.get(l).copied().unwrap_or(0) < *n)
            };
            // A line may move rather than go (deleted here, inserted there): counted, not asserted.
            both += usize::from(fewer(&old, &new) && fewer(&new, &old));
            match buf.len().cmp(&before.len()) {
                std::cmp::Ordering::Greater => grew += 1,
                std::cmp::Ordering::Less => shrank += 1,
                std::cmp::Ordering::Equal => {}
            }
        }
        assert!(grew > 150 && shrank > 150, "{grew} grew, {shrank} shrank");
        assert!(
            both > 450,
            "{both} of 500 rewrites deleted and inserted lines"
        );
        // A one-line file loses its line and gains others; an empty one gains lines.
        let mut one = b"x\n".to_vec();
        rewrite(&mut rng, &mut one);
        assert!(!one.is_empty() && !one.windows(2).any(|w| w == b"x\n"));
        let mut empty = Vec::new();
        rewrite(&mut rng, &mut empty);
        assert!(!empty.is_empty());
    }

    #[test]
    fn families_share_a_name_in_distinct_directories_and_most_of_their_lines() {
        let spec = SynthSpec::default();
        let layout = Layout::new(&spec);
        let mut families: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (i, f) in layout.files.iter().enumerate() {
            if let Some((family, _)) = f.family {
                families.entry(family).or_default().push(i);
            }
        }
        let members: usize = families.values().map(Vec::len).sum();
        let share = members as f64 / spec.files as f64;
        assert!(
            (0.35..0.55).contains(&share),
            "{share} of the files in families"
        );
        let name = |i: usize| layout.files[i].path.rsplit('/').next().unwrap().to_owned();
        let (mut shared, mut total) = (0, 0);
        for (family, files) in families.iter().take(200) {
            assert!((2..=MAX_FAMILY).contains(&files.len()));
            let dirs: HashSet<usize> = files.iter().map(|&i| layout.files[i].dir).collect();
            assert_eq!(
                dirs.len(),
                files.len(),
                "family {family}: one member per directory"
            );
            // git's delta search sorts by the last 16 characters of the path: one name, one place.
            assert!(name(files[0]).len() >= 16, "{}", name(files[0]));
            assert!(files.iter().all(|&i| name(i) == name(files[0])));
            assert_eq!(layout.files[files[0]].family, Some((*family, 0)));
            let mut original = Vec::new();
            first_contents(spec.seed, &layout, files[0], &mut original);
            let lines: HashSet<&[u8]> = original.split_inclusive(|&c| c == b'\n').collect();
            for &i in &files[1..] {
                let mut copy = Vec::new();
                first_contents(spec.seed, &layout, i, &mut copy);
                for line in copy.split_inclusive(|&c| c == b'\n') {
                    total += 1;
                    shared += usize::from(lines.contains(line));
                }
            }
        }
        let shared = shared as f64 / total as f64;
        assert!(
            shared > 0.8,
            "members share {shared} of their lines with the original"
        );
    }

    #[test]
    fn a_cached_repository_survives_an_added_loose_branch_but_not_another() {
        let root = tempfile::tempdir().unwrap();
        let spec = SynthSpec {
            files: 30,
            seed: 7,
            diffs: vec![3],
        };
        let made = ensure_cached(root.path(), &spec).unwrap();
        let git = |args: &[&str]| {
            git_output(&made.path, &args.iter().map(OsStr::new).collect::<Vec<_>>()).unwrap()
        };
        git(&[
            "update-ref",
            &format!("refs/heads/{ADDED_BRANCH_PREFIX}3"),
            &made.main,
        ]);
        assert!(load_cached(&made.path, &spec).is_some());
        git(&["update-ref", "refs/heads/someone-elses", &made.main]);
        assert!(load_cached(&made.path, &spec).is_none());
    }

    #[test]
    fn spec_validation() {
        let spec = |files, diffs| SynthSpec {
            files,
            seed: 1,
            diffs,
        };
        assert!(spec(10, vec![10]).validate().is_ok());
        assert!(spec(0, vec![]).validate().is_err());
        assert!(spec(10, vec![5, 5]).validate().is_err());
        assert!(spec(10, vec![11]).validate().is_ok()); // 9 modified, 1 added, 1 deleted
        assert!(spec(10, vec![20]).validate().is_err());
    }
}
