//! Sparse checkout: which paths of the index a work tree leaves out (their skip-worktree bit).
//!
//! With `core.sparseCheckout` set and `$GIT_DIR/info/sparse-checkout` present (the per-worktree
//! git directory, as git reads it), every checkout and update decides anew, for every entry of
//! its result, whether the entry is in the work tree: git's `mark_new_skip_worktree` and
//! `apply_sparse_checkout` in `unpack_trees`. The pattern matching itself — cone mode
//! (`core.sparseCheckoutCone`, falling back to ordinary matching when the patterns are not
//! cone-shaped, as git does) and gitignore-style patterns with git's directory recursion — is
//! gitoxide's ([`gix::worktree::sparse`]); this module loads the configuration and answers per
//! path.

use std::path::PathBuf;

use bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stat};

/// Why the sparse-checkout patterns could not be read or applied: the step, and what gix said.
/// The operations report it as a repository error (`run::Error::Repository`).
#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct Error {
    /// What we were doing.
    pub context: &'static str,
    /// What went wrong.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

/// Why a pattern file is not cone-shaped, in git's words (git then warns "disabling cone
/// pattern matching" and reads the file as plain patterns).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotCone {
    /// A pattern no cone can hold: `unrecognized pattern: '…'`.
    #[error("unrecognized pattern: '{0}'")]
    Pattern(String),
    /// A negative pattern that does not undo a directory taken whole.
    #[error("unrecognized negative pattern: '{0}'")]
    Negative(String),
    /// A directory named twice.
    #[error("your sparse-checkout file may have issues: pattern '{0}' is repeated")]
    Repeated(String),
}

/// The sparse-checkout selection of a work tree, loaded once per operation.
#[derive(Debug, Clone)]
pub struct Sparse {
    patterns: Vec<u8>,
    source: PathBuf,
    cone: bool,
    case: gix::glob::pattern::Case,
}

impl Sparse {
    /// The work tree's sparse-checkout patterns, or `None` when it is not sparse: git's
    /// `core_apply_sparse_checkout` is off, or the patterns file does not exist (git then skips
    /// sparse checkout entirely, `populate_from_existing_patterns`). An empty file is a
    /// selection of nothing but the root's files in cone mode, of nothing otherwise.
    pub fn load(repo: &gix::Repository) -> Result<Option<Sparse>, Error> {
        let config = repo.config_snapshot();
        if !config.boolean("core.sparseCheckout").unwrap_or(false) {
            return Ok(None);
        }
        let git_dir = repo.git_dir();
        let source = git_dir.join("info/sparse-checkout");
        let patterns = gix::worktree::sparse::read_patterns(git_dir).map_err(|err| Error {
            context: "reading the sparse-checkout patterns",
            source: format!("{}: {err}", source.display()).into(),
        })?;
        let Some(patterns) = patterns else {
            return Ok(None);
        };
        let case = if config.boolean("core.ignoreCase").unwrap_or(false) {
            gix::glob::pattern::Case::Fold
        } else {
            gix::glob::pattern::Case::Sensitive
        };
        Ok(Some(Sparse {
            patterns,
            source,
            cone: config.boolean("core.sparseCheckoutCone").unwrap_or(false),
            case,
        }))
    }

    /// [`Sparse::excluded`] as git decides it: for a pattern that matches directories only
    /// (`dir/`, outside cone mode), git takes an entry's type from the disk (its `ce_to_dtype`
    /// reads the in-memory mode as if in network byte order, finds no type, and `resolve_dtype`
    /// looks at the work tree). So a file entry `d` is matched by `d/` when a directory stands
    /// in its place, and a gitlink is not when its directory is missing. Paths whose answer
    /// depends on that are looked up with `is_dir`; the others are not.
    pub fn excluded_as_on_disk<'a>(
        &self,
        object_hash: gix::hash::Kind,
        paths: impl IntoIterator<Item = (&'a BStr, Mode)>,
        mut is_dir: impl FnMut(&BStr) -> bool,
    ) -> Result<Vec<bool>, Error> {
        let paths: Vec<(&BStr, Mode)> = paths.into_iter().collect();
        if self.cone || !self.has_directory_patterns() {
            return self.excluded(object_hash, paths);
        }
        let as_files = self.excluded(object_hash, paths.iter().map(|&(p, _)| (p, Mode::FILE)))?;
        let as_dirs = self.excluded(object_hash, paths.iter().map(|&(p, _)| (p, Mode::DIR)))?;
        Ok(paths
            .iter()
            .zip(as_files.into_iter().zip(as_dirs))
            .map(|(&(path, _), (file, dir))| {
                if file != dir && is_dir(path) {
                    dir
                } else {
                    file
                }
            })
            .collect())
    }

    /// Whether a pattern (not a comment) ends in `/`: it matches directories only.
    fn has_directory_patterns(&self) -> bool {
        self.patterns.lines().any(|line| {
            let line = line.trim_end_with(|c| c == ' ');
            !line.is_empty() && !line.starts_with(b"#") && line.ends_with(b"/")
        })
    }

    /// For each of `paths` (with their index modes; in index order, which makes the directory
    /// decisions reusable), whether sparse checkout leaves it out of the work tree.
    pub fn excluded<'a>(
        &self,
        object_hash: gix::hash::Kind,
        paths: impl IntoIterator<Item = (&'a BStr, Mode)>,
    ) -> Result<Vec<bool>, Error> {
        let mut state = gix::index::State::new(object_hash);
        let null = gix::ObjectId::null(object_hash);
        for (path, mode) in paths {
            state.dangerously_push_entry(Stat::default(), null, Flags::empty(), mode, path);
        }
        gix::worktree::sparse::apply_patterns(
            &mut state,
            &self.patterns,
            &self.source,
            self.cone,
            self.case,
        )
        .map_err(|err| Error {
            context: "applying the sparse-checkout patterns",
            source: Box::new(err),
        })?;
        Ok(state
            .entries()
            .iter()
            .map(|e| e.flags.contains(Flags::SKIP_WORKTREE))
            .collect())
    }
}

/// Whether git clears the skip-worktree bit of entries whose files are present when it reads
/// the index: in a sparse checkout (`core.sparseCheckout`), unless
/// `sparse.expectFilesOutsideOfPatterns` says such files are expected.
pub fn clears_present_files(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    config.boolean("core.sparseCheckout").unwrap_or(false)
        && !config
            .boolean("sparse.expectFilesOutsideOfPatterns")
            .unwrap_or(false)
}

/// git's `clear_skip_worktree_from_present_files`: a skip-worktree entry whose path exists in the
/// work tree (a file the user brought back, or one another tool wrote) is treated as an ordinary
/// tracked entry, so that its changes are seen and never silently overwritten or left behind.
/// Paths are looked up without following symlinks; a missing leading directory is checked once.
/// Returns whether any entry lost its bit.
pub fn clear_present(root: &crate::fs::Root, index: &mut gix::index::File) -> bool {
    let mut dirs = root.dirs();
    let mut missing_dir: Option<Vec<u8>> = None;
    let mut clear = Vec::new();
    for (k, entry) in index.entries().iter().enumerate() {
        if !entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        let path = entry.path(index);
        let dir = &path[..path.iter().rposition(|&b| b == b'/').unwrap_or(0)];
        if missing_dir.as_deref() == Some(dir) {
            continue;
        }
        match dirs.file_type(path) {
            Ok(Some(_)) => clear.push(k),
            _ => {
                let dir_there = dir.is_empty()
                    || matches!(
                        dirs.file_type(dir),
                        Ok(Some(crate::fs::FileType::Directory))
                    );
                missing_dir = (!dir_there).then(|| dir.to_vec());
            }
        }
    }
    let entries = index.entries_mut();
    for &k in &clear {
        entries[k].flags.remove(Flags::SKIP_WORKTREE);
    }
    !clear.is_empty()
}

/// git's `ensure_full_index`: replace every sparse-directory entry of a sparse index
/// (`index.sparse`, an entry of mode `040000` standing for a whole tree outside the cone) by the
/// files of its tree, each with the skip-worktree bit. The engine works on full indexes; the one
/// it writes is full (no `sdir` extension), which git reads as it reads any index and makes
/// sparse again at its next write. Nothing happens to an index that is not sparse. Returns
/// whether the index was sparse (its cache-tree then describes the sparse one).
pub(crate) fn expand(
    objects: &impl gix::objs::Find,
    state: &mut gix::index::State,
) -> Result<bool, Box<dyn std::error::Error + Send + Sync>> {
    if !state.entries().iter().any(|e| e.mode == Mode::DIR) {
        return Ok(false);
    }
    let dirs: Vec<(bstr::BString, gix::ObjectId)> = state
        .entries()
        .iter()
        .filter(|e| e.mode == Mode::DIR)
        .map(|e| (e.path(state).to_owned(), e.id))
        .collect();
    for (dir, tree) in dirs {
        let sub = gix::index::State::from_tree(&tree, objects, Default::default())
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
        let prefix = if dir.ends_with(b"/") {
            dir
        } else {
            let mut d = dir;
            d.push(b'/');
            d
        };
        for e in sub.entries() {
            let mut path = prefix.clone();
            path.extend_from_slice(e.path(&sub));
            state.dangerously_push_entry(
                Stat::default(),
                e.id,
                e.flags | Flags::SKIP_WORKTREE | Flags::EXTENDED,
                e.mode,
                path.as_ref(),
            );
        }
    }
    state.remove_entries(|_, _, e| e.mode == Mode::DIR);
    state.sort_entries();
    Ok(true)
}

/// A cone-mode pattern file as git reads it (`add_pattern_to_hashsets` in dir.c): the
/// directories taken whole (`recursive`: `/A/B/`) and those whose files alone are taken
/// (`parents`: `/A/` followed by `!/A/*/`), each as `/`-led paths without the trailing slash.
/// `None` from [`Cone::parse`] when the file is not cone-shaped (git then warns and matches the
/// patterns as ordinary ones).
#[derive(Debug, Default)]
pub(crate) struct Cone {
    full: bool,
    recursive: std::collections::HashSet<Vec<u8>>,
    parents: std::collections::HashSet<Vec<u8>>,
}

/// git's `is_glob_special`.
fn glob_special(b: u8) -> bool {
    matches!(b, b'*' | b'?' | b'[' | b'\\')
}

/// git's `dup_and_filter_pattern`: escapes removed, a trailing `/*` dropped.
fn unescaped(pattern: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut i = 0;
    while i < pattern.len() {
        if pattern[i] == b'\\' {
            i += 1;
            if i == pattern.len() {
                break;
            }
        }
        out.push(pattern[i]);
        i += 1;
    }
    if out.len() > 2 && out.ends_with(b"/*") {
        out.truncate(out.len() - 2);
    }
    out
}

impl Cone {
    /// Read a pattern file's bytes as git does (a UTF-8 BOM skipped, `#` comments and empty
    /// lines ignored, `\r` and unescaped trailing spaces cut) into cone-mode sets.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Cone> {
        Cone::read(bytes).ok()
    }

    /// [`Cone::parse`], or why not: git's warning about the first pattern that is not
    /// cone-shaped (git then warns "disabling cone pattern matching").
    pub(crate) fn read(bytes: &[u8]) -> Result<Cone, NotCone> {
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let mut cone = Cone::default();
        for line in bytes.split(|&b| b == b'\n') {
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let mut line = line.strip_suffix(b"\r").unwrap_or(line);
            while line.len() > 1 && line.ends_with(b" ") && line[line.len() - 2] != b'\\' {
                line = &line[..line.len() - 1];
            }
            if line == b" " {
                line = b"";
            }
            cone.add(line)?;
        }
        Ok(cone)
    }

    /// One pattern line (git's `parse_path_pattern`, then `add_pattern_to_hashsets`).
    fn add(&mut self, line: &[u8]) -> Result<(), NotCone> {
        let (negative, p) = match line.strip_prefix(b"!") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let (dir_only, p) = match p.strip_suffix(b"/") {
            Some(rest) => (true, rest),
            None => (false, p),
        };
        if negative && dir_only && p == b"/*" {
            self.full = false;
            return Ok(());
        }
        if !negative && !dir_only && p == b"/*" {
            self.full = true;
            return Ok(());
        }
        let shown = || String::from_utf8_lossy(p).into_owned();
        let unrecognized = || Err(NotCone::Pattern(shown()));
        if p.len() < 2 || p[0] != b'/' || p.windows(2).any(|w| w == b"**") || !dir_only {
            return unrecognized();
        }
        for k in 1..p.len() {
            let (prev, cur, next) = (p[k - 1], p[k], p.get(k + 1).copied().unwrap_or(0));
            let fine = !glob_special(cur)
                || prev == b'\\'
                || (cur == b'\\' && glob_special(next))
                || (prev == b'/' && cur == b'*' && next == 0);
            if !fine {
                return unrecognized();
            }
        }
        if p.len() > 2 && p.ends_with(b"/*") {
            if !negative {
                return unrecognized();
            }
            let parent = unescaped(p);
            if !self.recursive.remove(&parent) {
                return Err(NotCone::Negative(shown()));
            }
            self.parents.insert(parent);
            return Ok(());
        }
        if negative {
            return Err(NotCone::Negative(shown()));
        }
        let dir = unescaped(p);
        if self.parents.contains(&dir) {
            return Err(NotCone::Repeated(shown()));
        }
        self.recursive.insert(dir);
        Ok(())
    }

    /// Whether the directory `dir` (no trailing slash) is in the cone, as git's
    /// `path_in_sparse_checkout` answers for `dir/`: its files are taken (a parent), or it or a
    /// directory above it is taken whole.
    pub(crate) fn contains_dir(&self, dir: &[u8]) -> bool {
        if self.full {
            return true;
        }
        let mut p = Vec::with_capacity(dir.len() + 1);
        p.push(b'/');
        p.extend_from_slice(dir);
        if self.parents.contains(&p) || self.recursive.contains(&p) {
            return true;
        }
        (1..p.len())
            .filter(|&k| p[k] == b'/')
            .any(|k| self.recursive.contains(&p[..k]))
    }
}

/// git's warning when it reads the work tree's pattern file in cone mode
/// (`core.sparseCheckout` and `core.sparseCheckoutCone`) and the file is not cone-shaped:
/// `unrecognized pattern: '…'`, `unrecognized negative pattern: '…'` or `… is repeated`,
/// after which git warns "disabling cone pattern matching". `None` when there is nothing to
/// say (not cone mode, no file, a cone-shaped file).
pub fn cone_warning(repo: &gix::Repository) -> Option<String> {
    let cone_mode = {
        let config = repo.config_snapshot();
        config.boolean("core.sparseCheckout").unwrap_or(false)
            && config.boolean("core.sparseCheckoutCone").unwrap_or(false)
    };
    if !cone_mode {
        return None;
    }
    let bytes = gix::worktree::sparse::read_patterns(repo.git_dir()).ok()??;
    Cone::read(&bytes).err().map(|not| not.to_string())
}

/// A directory outside the cone that `clean_directories` left in the work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Left {
    /// It holds untracked files that are not ignored (git's warning `directory '<dir>'
    /// contains untracked files, but is not in the sparse-checkout cone`).
    Untracked(BString),
    /// Removing it failed (git's `failed to remove directory '<dir>'`).
    Failed(BString),
}

/// git's `clean_tracked_sparse_directories`, which `sparse-checkout` runs after updating the
/// work tree: in cone mode, with no unmerged entries, every directory that a sparse index
/// would collapse (outside the cone, every entry below it skip-worktree, no gitlink) and that
/// is still on disk (ignored build output, emptied directories) is removed with all it holds,
/// unless an untracked, not ignored, file is in it. Directory names end in `/`, as git prints
/// them. Everything goes through the path-safe layer.
pub(crate) fn clean_directories(
    repo: &gix::Repository,
    root: &crate::fs::Root,
    state: &gix::index::State,
) -> Vec<Left> {
    let cone_mode = {
        let config = repo.config_snapshot();
        config.boolean("core.sparseCheckout").unwrap_or(false)
            && config.boolean("core.sparseCheckoutCone").unwrap_or(false)
    };
    if !cone_mode {
        return Vec::new();
    }
    let Ok(Some(bytes)) = gix::worktree::sparse::read_patterns(repo.git_dir()) else {
        return Vec::new();
    };
    let Some(cone) = Cone::parse(&bytes) else {
        return Vec::new();
    };
    if state.entries().iter().any(|e| e.stage_raw() != 0) {
        return Vec::new();
    }
    // Every directory of the index, with whether all entries below it are sparse files.
    let mut collapsible: std::collections::BTreeMap<&BStr, bool> = Default::default();
    for e in state.entries() {
        let sparse = e.flags.contains(Flags::SKIP_WORKTREE) && e.mode != Mode::COMMIT;
        for dir in crate::fs::leading_dirs(e.path(state)) {
            let ok = collapsible.entry(dir).or_insert(true);
            *ok &= sparse;
        }
    }
    let mut chosen: Vec<&BStr> = Vec::new();
    for (dir, ok) in collapsible {
        let below_chosen = chosen
            .last()
            .is_some_and(|c| dir.starts_with(c) && dir.get(c.len()) == Some(&b'/'));
        if ok && !below_chosen && !cone.contains_dir(dir) {
            chosen.push(dir);
        }
    }
    if chosen.is_empty() {
        return Vec::new();
    }
    let Ok(mut excludes) = repo.excludes(
        state,
        None,
        gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
    ) else {
        return Vec::new();
    };
    let mut dirs = root.dirs();
    let mut left = Vec::new();
    for dir in chosen {
        if dirs.file_type(dir).ok().flatten() != Some(crate::fs::FileType::Directory) {
            continue;
        }
        let mut named = BString::from(dir);
        named.push(b'/');
        if holds_untracked(&mut dirs, &mut excludes, state, dir) {
            left.push(Left::Untracked(named));
        } else if dirs.remove_all(dir).is_err() {
            left.push(Left::Failed(named));
        }
    }
    left
}

/// Whether `dir` holds a file (or a nested repository) that is neither tracked nor ignored:
/// what git's `fill_directory` would list for it.
fn holds_untracked(
    dirs: &mut crate::fs::Dirs<'_>,
    excludes: &mut gix::AttributeStack<'_>,
    state: &gix::index::State,
    dir: &BStr,
) -> bool {
    use crate::fs::FileType;
    let mut is_ignored = |path: &BStr, kind: FileType| {
        let mode = match kind {
            FileType::Directory => Mode::DIR,
            FileType::Symlink => Mode::SYMLINK,
            _ => Mode::FILE,
        };
        excludes
            .at_entry(path, Some(mode))
            .is_ok_and(|p| p.is_excluded())
    };
    let above_ignored = crate::fs::leading_dirs(dir)
        .chain(std::iter::once(dir))
        .any(|d| is_ignored(d, FileType::Directory));
    let mut pending: Vec<(BString, bool)> = vec![(dir.to_owned(), above_ignored)];
    while let Some((at, ignored)) = pending.pop() {
        let Ok(entries) = dirs.entries(at.as_bstr()) else {
            continue;
        };
        for (name, kind) in entries {
            let mut path = at.clone();
            path.push(b'/');
            path.extend_from_slice(&name);
            if state.entry_by_path(path.as_bstr()).is_some() {
                continue;
            }
            let ignored = ignored || is_ignored(path.as_bstr(), kind);
            if ignored {
                continue;
            }
            if kind == FileType::Directory && name != ".git" {
                pending.push((path, false));
            } else {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use bstr::ByteSlice;

    fn sparse(patterns: &str, cone: bool) -> Sparse {
        Sparse {
            patterns: patterns.as_bytes().to_vec(),
            source: PathBuf::from("info/sparse-checkout"),
            cone,
            case: gix::glob::pattern::Case::Sensitive,
        }
    }

    fn out(s: &Sparse, paths: &[&str]) -> Vec<String> {
        let ex = s
            .excluded(
                gix::hash::Kind::Sha1,
                paths.iter().map(|p| (p.as_bytes().as_bstr(), Mode::FILE)),
            )
            .unwrap();
        paths
            .iter()
            .zip(ex)
            .filter(|(_, e)| *e)
            .map(|(p, _)| p.to_string())
            .collect()
    }

    #[test]
    fn cone_files_are_read_as_git_reads_them() {
        let cone = Cone::parse(b"/*\n!/*/\n/deep/\n!/deep/*/\n/deep/deeper1/\n/a\\*b/\n").unwrap();
        assert!(cone.contains_dir(b"deep"));
        assert!(cone.contains_dir(b"deep/deeper1"));
        assert!(cone.contains_dir(b"deep/deeper1/deepest"));
        assert!(cone.contains_dir(b"a*b/c"));
        assert!(!cone.contains_dir(b"deep/deeper2"));
        assert!(!cone.contains_dir(b"folder1"));
        // Not cone-shaped: a pattern that is not a directory, a repeated parent, `**`.
        assert!(Cone::parse(b"/*\n!/*/\n/deep/a\n").is_none());
        assert!(Cone::parse(b"/*\n!/*/\n/foo/\n!/foo/*/\n/foo/\n").is_none());
        assert!(Cone::parse(b"/*\n!/*/\n/A/**/\n").is_none());
    }

    #[test]
    fn non_cone_patterns_follow_gitignore_rules_with_directory_recursion() {
        let s = sparse("!/*\n/a\n/c\n/d/\n", false);
        assert_eq!(out(&s, &["a", "b", "c", "d/x/y", "e/f"]), ["b", "e/f"]);
    }

    #[test]
    fn cone_patterns_select_parents_and_recursive_directories() {
        let s = sparse("/*\n!/*/\n/A/\n!/A/*/\n/A/B/\n", true);
        assert_eq!(
            out(&s, &["A/B/C/f", "A/D/f", "A/f", "E/f", "top"]),
            ["A/D/f", "E/f"]
        );
    }
}
