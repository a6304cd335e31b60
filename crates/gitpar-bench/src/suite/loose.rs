//! The switch whose blobs are loose objects: a commit on top of `main` changing some of its files, as
//! a developer's own commit or a small fetch leaves them (one zlib file per object, until a `gc`).
//! Packed targets measure the writers; this one measures reading objects one file each, which costs
//! a checkout more system calls per file than anything else it does.

use std::ffi::OsStr;
use std::path::Path;

use crate::git;

/// The loose target's branch, commit and number of files changed; `source` makes it a switch
/// target.
pub struct Loose {
    /// `loose-<n>`.
    pub branch: String,
    /// Its commit id.
    pub commit: String,
    /// Files changed from `main`.
    pub changed: usize,
}

/// The files the loose commit changes, at most: the issue's everyday case.
pub const LOOSE_CHANGED: usize = 2_000;

/// The branch of the loose target for `changed` files.
fn branch(changed: usize) -> String {
    format!("{}{changed}", crate::synth::ADDED_BRANCH_PREFIX)
}

/// The loose target of the repository at `dir` (a work tree or a bare repository) whose `main`
/// is `main` with `files` files: `loose-<n>`, a commit on `main` appending a line to `n` of its
/// regular files (every k-th, so that every part of the tree has some), `n` the smaller of
/// [`LOOSE_CHANGED`] and a tenth of the files. Made once and kept while its blobs are still loose;
/// made again (new content, new loose objects) when they were packed or `main` moved.
pub fn loose_target(dir: &Path, main: &str, files: usize) -> anyhow::Result<Loose> {
    let changed = LOOSE_CHANGED.min(files / 10).max(1);
    let name = branch(changed);
    if let Some(target) = existing(dir, main, &name)? {
        return Ok(target);
    }
    let paths = chosen_paths(dir, main, changed)?;
    let commit = loose_commit(dir, main, &paths)?;
    git::output(dir, &["update-ref", &format!("refs/heads/{name}"), &commit])?;
    Ok(Loose {
        branch: name,
        commit,
        changed: paths.len(),
    })
}

/// The branch `name` if it is a child of `main` whose changed blobs are all still loose.
fn existing(dir: &Path, main: &str, name: &str) -> anyhow::Result<Option<Loose>> {
    let Ok(commit) = git::line(
        dir,
        &["rev-parse", "--verify", "-q", &format!("{name}^{{commit}}")],
    ) else {
        return Ok(None);
    };
    if git::line(dir, &["rev-parse", &format!("{commit}^")])
        .ok()
        .as_deref()
        != Some(main)
    {
        return Ok(None);
    }
    let diff = git::output(dir, &["diff-tree", "-r", "--no-renames", main, &commit])?;
    let ids: Vec<&str> = diff
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    let objects = git::line(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "objects",
        ],
    )?;
    let loose = |id: &&str| Path::new(&objects).join(&id[..2]).join(&id[2..]).is_file();
    Ok((!ids.is_empty() && ids.iter().all(loose)).then(|| Loose {
        branch: name.to_owned(),
        commit,
        changed: ids.len(),
    }))
}

/// Every k-th regular file of `main`, `changed` of them.
fn chosen_paths(dir: &Path, main: &str, changed: usize) -> anyhow::Result<Vec<String>> {
    let tree = git::output(dir, &["ls-tree", "-r", "-z", main])?;
    let regular: Vec<&str> = tree
        .split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            meta.starts_with("100").then_some(path)
        })
        .collect();
    let step = (regular.len() / changed.max(1)).max(1);
    Ok(regular
        .iter()
        .step_by(step)
        .take(changed)
        .map(|p| (*p).to_owned())
        .collect())
}

/// A commit on `main` with a line appended to each of `paths`, made as `git commit` makes one:
/// the files written from a scratch index into a scratch work tree, edited, added back (which
/// writes their blobs loose), the tree written (its trees loose too) and committed. The
/// repository's own index and work tree are left alone.
fn loose_commit(dir: &Path, main: &str, paths: &[String]) -> anyhow::Result<String> {
    // The scratch index and work tree live in the git directory, removed when done.
    let scratch = Path::new(&git::line(dir, &["rev-parse", "--absolute-git-dir"])?)
        .join("gitpar-bench-loose");
    let _ = std::fs::remove_dir_all(&scratch);
    let index = scratch.join("index");
    let tree = scratch.join("tree");
    std::fs::create_dir_all(&tree)?;
    let commit = commit_edited(dir, main, paths, (&index, &tree));
    std::fs::remove_dir_all(&scratch)?;
    commit
}

/// [`loose_commit`] with its scratch `index` file and work `tree`.
fn commit_edited(
    dir: &Path,
    main: &str,
    paths: &[String],
    (index, tree): (&Path, &Path),
) -> anyhow::Result<String> {
    let env = [
        ("GIT_INDEX_FILE", index.as_os_str()),
        ("GIT_WORK_TREE", tree.as_os_str()),
    ];
    let listed: String = paths.iter().map(|p| format!("{p}\0")).collect();
    let with = |args: &[&str], input: Option<&[u8]>| git::output_with(dir, args, input, &env);
    with(&["read-tree", main], None)?;
    with(
        &["checkout-index", "-z", "--stdin"],
        Some(listed.as_bytes()),
    )?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    for path in paths {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(tree.join(path))?;
        writeln!(file, "changed by the bench's loose commit {stamp}")?;
    }
    with(&["update-index", "-z", "--stdin"], Some(listed.as_bytes()))?;
    let written = with(&["write-tree"], None)?;
    let message = format!("{} files changed, their blobs loose", paths.len());
    let no_env: [(&str, &OsStr); 0] = [];
    let commit = git::output_with(
        dir,
        &["commit-tree", written.trim(), "-p", main, "-m", &message],
        None,
        &no_env,
    )?;
    Ok(commit.trim().to_owned())
}
