//! Every work tree access goes through the path-safe layer (`src/fs/`): a path-based
//! `std::fs` call in a module that touches work trees could follow a symlinked directory out of
//! the work tree (that bug was real). This test fails when one comes back.
//!
//! Modules that only touch the repository's own files (`.git/...`: locks, config, refs, the
//! objects a clone copies) are listed with the reason they may use `std::fs`.

use std::path::Path;

/// Modules allowed to call `std::fs` with paths (relative to `src/`), and why.
const REPOSITORY_ONLY: &[(&str, &str)] = &[
    (
        "fs/mod.rs",
        "the path-safe layer itself (tests build fixtures with std::fs)",
    ),
    (
        "fs/lock.rs",
        "index.lock and the index, inside the git directory",
    ),
    ("index/record.rs", "writes the index through the lock"),
    (
        "index/split_index.rs",
        "reads the index and writes and removes the shared index files, inside the git directory",
    ),
    ("repo/branch.rs", "config and reflogs, inside the git directory"),
    (
        "index/fsmonitor.rs",
        "reads the index file (its FSMN extension), inside the git directory",
    ),
    (
        "repo/state.rs",
        "merge, cherry-pick and revert state files and pseudo-refs, inside the git directory",
    ),
    (
        "repo/worktrees.rs",
        "reads the registrations of linked work trees in the common directory; a work tree's own .git file goes through the path-safe layer",
    ),
    (
        "repo/hooks.rs",
        "looks the hook up in the git directory or core.hooksPath, never in the work tree",
    ),
    (
        "index/resolve_undo.rs",
        "reads the index file (its REUC extension), inside the git directory",
    ),
    (
        "objects/loose.rs",
        "reads loose objects inside the object database",
    ),
    (
        "objects/stream.rs",
        "reads loose objects and pack indexes inside the object database",
    ),
    (
        "convert/attr_view.rs",
        "reads the attribute files outside the tree: info/attributes in the git directory, core.attributesFile, the user's and the system's, never a work tree",
    ),
    (
        "index/ignore_files.rs",
        "reads info/exclude in the git directory and core.excludesFile, never a work tree",
    ),
    (
        "sys/phase.rs",
        "reads the process's memory from /proc/self/status, never a work tree",
    ),
    (
        "fs/unix.rs",
        "the path-safe layer's system calls; reads the block device's queue/rotational under /sys, never a work tree",
    ),
    (
        "sys/unix.rs",
        "reads the thread's schedstat under /proc, never a work tree",
    ),
    (
        "fs/windows.rs",
        "opens the work tree's root directory by its path (everything below it goes through handles)",
    ),
];

/// Path-taking `std::fs` functions (the `File` type and `OpenOptions` are caught by `open(`).
const FORBIDDEN: &[&str] = &[
    "std::fs::",
    "fs::remove_",
    "fs::create_dir",
    "fs::read_dir",
    "fs::symlink_metadata",
    "fs::metadata",
    "fs::read_link",
    "fs::rename",
    "fs::write",
    "fs::read(",
    "File::open(",
    "File::create(",
    "os::unix::fs::symlink(",
];

#[test]
fn work_tree_modules_use_only_the_path_safe_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offences = Vec::new();
    let mut checked = 0;
    for path in sources(&src) {
        let name = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if !name.ends_with(".rs") || REPOSITORY_ONLY.iter().any(|(m, _)| *m == name) {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        // Unit tests may build fixtures however they like.
        let code = before_tests(&text);
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            // `crate::fs::...` and `rustix::fs::...` are the safe layer and its syscalls.
            let cleaned = line.replace("crate::fs::", "").replace("rustix::fs::", "");
            if let Some(bad) = FORBIDDEN.iter().find(|f| cleaned.contains(*f)) {
                offences.push(format!("{name}:{}: `{bad}` in: {line}", n + 1));
            }
        }
    }
    assert!(checked >= 8, "only {checked} modules were checked");
    assert!(
        offences.is_empty(),
        "path-based filesystem calls outside src/fs/:\n{}",
        offences.join("\n")
    );
}

/// Every file below `dir`, modules in subdirectories (`filter/`, `execute/`) included.
fn sources(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The part of a module's source before its unit tests (`#[cfg(test)]`, or tests for one
/// system only, `#[cfg(all(test, ...))]`).
pub fn before_tests(text: &str) -> &str {
    let end = ["#[cfg(test)]", "#[cfg(all(test"]
        .iter()
        .filter_map(|marker| text.find(marker))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}
