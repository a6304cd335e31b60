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

use bstr::BStr;
use gix::index::entry::{Flags, Mode, Stat};

use crate::run::Error;

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
        let patterns =
            gix::worktree::sparse::read_patterns(git_dir).map_err(|err| Error::Repository {
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
        .map_err(|err| Error::Repository {
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
pub fn clear_present(root: &crate::fs::Root, index: &mut gix::index::File) {
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
                        Ok(Some(rustix::fs::FileType::Directory))
                    );
                missing_dir = (!dir_there).then(|| dir.to_vec());
            }
        }
    }
    let entries = index.entries_mut();
    for k in clear {
        entries[k].flags.remove(Flags::SKIP_WORKTREE);
    }
}

/// git's `ensure_full_index`: replace every sparse-directory entry of a sparse index
/// (`index.sparse`, an entry of mode `040000` standing for a whole tree outside the cone) by the
/// files of its tree, each with the skip-worktree bit. The engine works on full indexes; the one
/// it writes is full (no `sdir` extension), which git reads as it reads any index and makes
/// sparse again at its next write. Nothing happens to an index that is not sparse.
pub(crate) fn expand(
    objects: &impl gix::objs::Find,
    state: &mut gix::index::State,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if !state.entries().iter().any(|e| e.mode == Mode::DIR) {
        return Ok(());
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
    Ok(())
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
