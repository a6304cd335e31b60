//! What one side of a scenario holds, read with real git and from the disk: the state that a
//! user (or the next git command) can see, and the hidden state that only shows later (dangling
//! objects, the reflog, `ORIG_HEAD`, the cache-tree that `git write-tree` trusts).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::process::{self, Output};

/// The flags of `ls-files --debug` that are on disk and mean something: assume-unchanged,
/// intent-to-add, skip-worktree (git keeps other, in-memory bits in the same word).
const FLAG_MASK: u32 = 0x8000 | (1 << 29) | (1 << 30);

/// Where git is, and the environment git runs in.
pub struct Git<'a> {
    /// The real git.
    pub program: &'a Path,
    /// `HOME` of the side.
    pub home: &'a Path,
    /// `PATH` (without git-par on it).
    pub path_var: &'a str,
}

impl Git<'_> {
    /// Runs git with `args` in `dir`, paths unquoted (`core.quotePath=false`), as messages
    /// name them.
    pub fn run(&self, dir: &Path, args: &[&str]) -> Result<Output, String> {
        let mut cmd = process::command(self.program, dir, self.home, self.path_var);
        cmd.args(["-c", "core.quotePath=false"]).args(args);
        process::run(&mut cmd)
    }

    /// Standard output of git `args` in `dir`, whatever its exit code.
    fn text(&self, dir: &Path, args: &[&str]) -> Result<String, String> {
        Ok(self.run(dir, args)?.text())
    }
}

/// A regular file, symlink or directory of a work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A regular file, its bytes and whether it is executable.
    File(Vec<u8>, bool),
    /// A symlink and its target.
    Link(Vec<u8>),
    /// A directory.
    Dir,
}

/// A work tree as it is on disk, `.git` left out, by path relative to it.
pub type WorkTree = BTreeMap<String, Item>;

/// Reads the work tree at `dir` (without following symlinks, without entering `.git`).
pub fn work_tree(dir: &Path) -> Result<WorkTree, String> {
    let mut out = WorkTree::new();
    walk(dir, "", &mut out)?;
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut WorkTree) -> Result<(), String> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && prefix.is_empty() => return Ok(()),
        Err(e) => return Err(format!("reading {}: {e}", dir.display())),
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let path = format!("{prefix}{}", String::from_utf8_lossy(name.as_bytes()));
        let full = entry.path();
        let meta = fs::symlink_metadata(&full).map_err(|e| format!("lstat {path}: {e}"))?;
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&full).map_err(|e| format!("readlink {path}: {e}"))?;
            out.insert(path, Item::Link(target.as_os_str().as_bytes().to_vec()));
        } else if meta.is_dir() {
            out.insert(path.clone(), Item::Dir);
            walk(&full, &format!("{path}/"), out)?;
        } else {
            let bytes = fs::read(&full).map_err(|e| format!("reading {path}: {e}"))?;
            let exec = meta.permissions().mode() & 0o100 != 0;
            out.insert(path, Item::File(bytes, exec));
        }
    }
    Ok(())
}

/// A work tree as text lines, one per entry: `d path/`, `l path -> target`, `f path bytes`
/// (`x` for an executable), long contents shortened with their length and a hash.
pub fn render(tree: &WorkTree) -> String {
    let mut out = String::new();
    for (path, item) in tree {
        let line = match item {
            Item::Dir => format!("d {path}/"),
            Item::Link(t) => format!("l {path} -> {}", String::from_utf8_lossy(t)),
            Item::File(bytes, exec) => {
                format!(
                    "{} {path} {}",
                    if *exec { "x" } else { "f" },
                    preview(bytes)
                )
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Bytes as a short escaped string; past 48 bytes, their start, length and FNV-1a hash.
pub fn preview(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(48)];
    let mut s: String = shown.escape_ascii().to_string();
    s = format!("\"{s}\"");
    if bytes.len() > shown.len() {
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        s.push_str(&format!("... ({} bytes, {hash:016x})", bytes.len()));
    }
    s
}

/// The index as `ls-files -s` lines, each followed by the meaningful flags when set.
pub fn index(git: &Git<'_>, dir: &Path) -> Result<String, String> {
    Ok(render_index(
        &git.text(dir, &["ls-files", "-s", "--debug"])?,
    ))
}

/// [`index`], and the entries git must read again before it trusts them: racily clean ones
/// (modified in or after the second the index was written) and smudged ones (size 0). Where a
/// file's bytes match its stat data but not its blob (its attributes changed since), only these
/// are found changed: two builds of one scenario that differ here, as the second boundaries
/// fell, may rightly give two results. One read of the index serves both.
pub fn index_and_rechecked(git: &Git<'_>, dir: &Path) -> Result<(String, String), String> {
    let out = git.text(dir, &["ls-files", "-s", "--debug"])?;
    let index = git.text(dir, &["rev-parse", "--git-path", "index"])?;
    let stamp = fs::metadata(dir.join(index.trim()))
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    Ok((render_index(&out), rechecked(&out, stamp)))
}

/// `ls-files -s --debug` output as [`index`] shows it.
fn render_index(out: &str) -> String {
    let mut rendered = String::new();
    for line in out.lines() {
        if !line.starts_with(' ') {
            rendered.push_str(line);
        } else if let Some(flags) = line.split("flags: ").nth(1) {
            let flags = u32::from_str_radix(flags.trim(), 16).unwrap_or(0) & FLAG_MASK;
            if flags != 0 {
                rendered.push_str(&format!(" flags={flags:x}"));
            }
            rendered.push('\n');
        }
    }
    rendered
}

/// The racily clean or smudged entries of `ls-files -s --debug` output, for an index file
/// written in second `stamp` (see [`index_and_rechecked`]).
fn rechecked(out: &str, stamp: u64) -> String {
    let mut rendered = String::new();
    let mut path = "";
    let mut racy = false;
    for line in out.lines() {
        let field = line.trim_start();
        if !line.starts_with(' ') {
            path = line;
        } else if let Some(mtime) = field.strip_prefix("mtime: ") {
            let secs = mtime.split(':').next().unwrap_or("0").parse::<u64>();
            racy = secs.is_ok_and(|secs| stamp != 0 && secs >= stamp);
        } else if let Some(size) = field.strip_prefix("size: ") {
            let smudged = size.split_whitespace().next() == Some("0");
            if racy || smudged {
                rendered.push_str(&format!("{path} racy={racy} smudged={smudged}\n"));
            }
        }
    }
    rendered
}

/// `HEAD`: the branch it names, or the commit it holds.
pub fn head(git: &Git<'_>, dir: &Path) -> Result<String, String> {
    let symbolic = git.run(dir, &["symbolic-ref", "-q", "HEAD"])?;
    if symbolic.ok() {
        return Ok(symbolic.text());
    }
    Ok(format!(
        "detached {}",
        git.text(dir, &["rev-parse", "-q", "--verify", "HEAD"])?
    ))
}

/// What one work tree (and its repository) shows after the command, aspect by aspect, in the
/// order they are read (each read that writes, as `status` may write the index, comes after
/// the reads it could change).
pub fn aspects(git: &Git<'_>, dir: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let mut out = Vec::new();
    if !dir.join(".git").exists() {
        out.push(("work tree", render(&work_tree(dir)?)));
        return Ok(out);
    }
    out.push(("HEAD", head(git, dir)?));
    out.push((
        "refs",
        git.text(dir, &["for-each-ref", "--format=%(refname) %(objectname)"])?,
    ));
    let index = index(git, dir)?;
    let unmerged = index
        .lines()
        .any(|l| l.split('\t').next().is_some_and(|s| !s.ends_with(" 0")));
    out.push(("index", index));
    out.push(("work tree", render(&work_tree(dir)?)));
    out.push(("repository state", state_files(git, dir)?));
    out.push(("reflog", reflogs(git, dir)?));
    out.push((
        "status",
        git.text(
            dir,
            &[
                "status",
                "--porcelain=v2",
                "--branch",
                "-uall",
                "--ignored=matching",
            ],
        )?,
    ));
    let mut fsck: Vec<String> = git
        .text(dir, &["fsck", "--no-progress", "--dangling"])?
        .lines()
        .map(str::to_owned)
        .collect();
    fsck.sort();
    out.push(("fsck", fsck.join("\n")));
    if !unmerged {
        let tree = git.run(dir, &["write-tree"])?;
        out.push((
            "write-tree",
            format!("{}{}", tree.text(), tree.first_error_line()),
        ));
    }
    Ok(out)
}

/// `ORIG_HEAD`, `MERGE_HEAD` and the other state files, the sparse patterns, and the local
/// configuration.
fn state_files(git: &Git<'_>, dir: &Path) -> Result<String, String> {
    let git_dir = git.text(dir, &["rev-parse", "--absolute-git-dir"])?;
    let git_dir = Path::new(git_dir.trim());
    let mut out = String::new();
    for name in [
        "ORIG_HEAD",
        "MERGE_HEAD",
        "MERGE_MODE",
        "CHERRY_PICK_HEAD",
        "AUTO_MERGE",
        "info/sparse-checkout",
    ] {
        if let Ok(bytes) = fs::read(git_dir.join(name)) {
            out.push_str(&format!(
                "{name}: {}\n",
                String::from_utf8_lossy(&bytes).trim_end()
            ));
        }
    }
    out.push_str(&git.text(dir, &["config", "--list", "--local"])?);
    Ok(out)
}

/// The last entry of `HEAD`'s reflog (and of the branch's, when `HEAD` names one), without its
/// time, and how many entries each has.
fn reflogs(git: &Git<'_>, dir: &Path) -> Result<String, String> {
    let mut out = String::new();
    let mut refs = vec!["HEAD".to_owned()];
    let symbolic = git.run(dir, &["symbolic-ref", "-q", "HEAD"])?;
    if symbolic.ok() {
        refs.push(symbolic.text().trim().to_owned());
    }
    for name in refs {
        let log = git.text(dir, &["reflog", "show", "--format=%H %gs", &name, "--"])?;
        let last = log.lines().next().unwrap_or("");
        out.push_str(&format!(
            "{name}: {} entries, last: {last}\n",
            log.lines().count()
        ));
    }
    Ok(out)
}
