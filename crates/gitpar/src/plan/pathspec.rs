//! Pathspecs as git reads them for `checkout [<rev>] -- <pathspec>` and `restore <pathspec>`:
//! parsed and matched by gix-pathspec, so that git's magic (`:(glob)`, `:(exclude)`/`:!`/`:^`,
//! `:(icase)`, `:(literal)`, `:(top)`/`:/`, `:(attr:...)`), the `GIT_*_PATHSPECS` defaults and
//! pathspecs relative to a subdirectory behave as in git's `pathspec.c`.
//!
//! git tells the user which pathspecs matched nothing (`report_path_error`): each positive
//! pathspec is "seen" when it matches a candidate path on its own, whatever an exclude pathspec
//! then removes, and exclude pathspecs always count as seen. [`Matcher::item_matches`] answers
//! that question per pathspec; [`Matcher::selects`] is the combined selection.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use bstr::{BStr, BString, ByteSlice};
use gix::pathspec::{Defaults, MagicSignature, Pattern, Search};

/// Why pathspecs could not be used; git's `fatal:` for each (exit 128).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// git refuses `""` as a pathspec.
    #[error("empty string is not a valid pathspec. please use . instead if you meant to match all paths")]
    Empty,
    /// A pathspec that names a path outside the work tree (`../x` at the top).
    #[error("{spec}: '{spec}' is outside repository at '{}'", root.display())]
    Outside {
        /// The pathspec as given.
        spec: BString,
        /// The top of the work tree.
        root: PathBuf,
    },
    /// Invalid magic or an otherwise unparsable pathspec, in git's words where gix-pathspec's
    /// reason has a counterpart in git's `pathspec.c`.
    #[error("{message}")]
    Invalid {
        /// The pathspec as given.
        spec: BString,
        /// gix-pathspec's reason.
        message: String,
    },
    /// The `GIT_*_PATHSPECS` variables contradict each other.
    #[error("{0}")]
    Environment(String),
    /// The attributes `:(attr:...)` magic needs could not be read; gix's message.
    #[error(transparent)]
    Attributes(Box<dyn std::error::Error + Send + Sync>),
}

/// The `GIT_LITERAL_PATHSPECS`, `GIT_GLOB_PATHSPECS`, `GIT_NOGLOB_PATHSPECS` and
/// `GIT_ICASE_PATHSPECS` defaults of this process, which git's `--literal-pathspecs` and
/// friends set for the commands they run.
pub fn defaults_from_environment() -> Result<Defaults, Error> {
    Defaults::from_environment(&mut |name| std::env::var_os(name))
        .map_err(|e| Error::Environment(e.to_string()))
}

/// One pathspec as given, with a search of its own when it is a positive one.
#[derive(Debug, Clone)]
struct Item {
    /// The argument as the user gave it (git's `item.original`), for messages.
    original: BString,
    /// The pathspec alone, for "did it match anything"; `None` for an exclude pathspec.
    alone: Option<Search>,
    /// With `builtin_objectmode` magic somewhere: the pathspec alone, exclude or not, and
    /// what its `attr:builtin_objectmode` asks of the path's mode, if anything.
    own: Option<(Search, Option<ModeWanted>)>,
}

/// What `attr:builtin_objectmode...` asks of a path's mode: `=VALUE` that value (`100644`,
/// `100755`, `120000`, `040000`, `160000`); set, unset or unspecified match no mode.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ModeWanted {
    Value(BString),
    Other,
}

/// git's built-in attribute `builtin_objectmode` (git 2.45): the path's mode as git would
/// record it, from the work tree (`lstat`), which no attribute file sets; gix-pathspec asks
/// the attribute stack, so the pathspecs that name it are matched here instead, one by one.
const BUILTIN_OBJECTMODE: &str = "builtin_objectmode";

/// Parsed pathspecs, normalized against the current directory's place in the work tree.
#[derive(Debug, Clone)]
pub struct Pathspec {
    /// All pathspecs together: the selection.
    search: Search,
    /// Each pathspec, in the order given.
    items: Vec<Item>,
    /// Whether some pathspec has `:(attr:...)` magic (then matching needs the attributes).
    needs_attributes: bool,
}

impl Pathspec {
    /// Parse `specs` as git's `parse_pathspec` does with `defaults`. `prefix` is the current
    /// directory relative to the top of the work tree (`""` at the top) and `root` the top
    /// itself (absolute), against which absolute pathspecs are made relative.
    pub fn new<S: AsRef<[u8]>>(
        specs: &[S],
        prefix: &Path,
        root: &Path,
        defaults: Defaults,
    ) -> Result<Pathspec, Error> {
        let mut patterns = Vec::with_capacity(specs.len());
        let mut items = Vec::with_capacity(specs.len());
        let mut requirements = Vec::with_capacity(specs.len());
        for spec in specs {
            let spec = spec.as_ref().as_bstr();
            if spec.is_empty() {
                return Err(Error::Empty);
            }
            let pattern = gix::pathspec::parse(spec, defaults).map_err(|e| Error::Invalid {
                spec: spec.to_owned(),
                message: git_message(spec, &e.to_string()),
            })?;
            let mut pattern = whole_tree_as_empty(pattern, prefix, root);
            let objectmode = pattern
                .attributes
                .iter()
                .position(|a| a.name.as_str() == BUILTIN_OBJECTMODE)
                .map(|k| pattern.attributes.remove(k));
            requirements.push(objectmode.map(|a| match a.state {
                gix::attrs::State::Value(v) => ModeWanted::Value(v.as_ref().as_bstr().to_owned()),
                _ => ModeWanted::Other,
            }));
            let alone = if pattern.is_excluded() {
                None
            } else {
                Some(search([pattern.clone()], spec, prefix, root)?)
            };
            patterns.push(pattern);
            items.push(Item {
                original: spec.to_owned(),
                alone,
                own: None,
            });
        }
        if requirements.iter().any(Option::is_some) {
            for ((item, pattern), requirement) in items.iter_mut().zip(&patterns).zip(requirements)
            {
                let alone = search([pattern.clone()], item.original.as_bstr(), prefix, root)?;
                item.own = Some((alone, requirement));
            }
        }
        let needs_attributes = patterns.iter().any(|p| !p.attributes.is_empty());
        let all = specs
            .first()
            .map_or(BStr::new(b""), |s| s.as_ref().as_bstr());
        Ok(Pathspec {
            search: search(patterns, all, prefix, root)?,
            items,
            needs_attributes,
        })
    }

    /// Whether some pathspec asks for `attr:builtin_objectmode`, which only this crate's
    /// [`Matcher`] knows: a walk that matches pathspecs itself (gix-dir) must walk everything
    /// and leave the selection to the matcher.
    pub fn has_builtin_attributes(&self) -> bool {
        self.items.iter().any(|i| i.own.is_some())
    }

    /// The number of pathspecs given.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no pathspec was given.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The `k`-th pathspec as given.
    pub fn original(&self, k: usize) -> &BStr {
        self.items[k].original.as_bstr()
    }

    /// Whether the `k`-th pathspec is an exclude pathspec (never reported as unmatched).
    pub fn is_exclude(&self, k: usize) -> bool {
        self.items[k].alone.is_none()
    }

    /// A matcher over the paths of `index` (and of trees checked out into it), with the
    /// attributes `:(attr:...)` magic needs taken from the work tree, then the index.
    pub fn matcher<'r>(
        &self,
        repo: &'r gix::Repository,
        index: &gix::index::State,
    ) -> Result<Matcher<'r>, Error> {
        let attributes = if self.needs_attributes {
            let stack = repo
                .attributes_only(
                    index,
                    gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
                )
                .map_err(|e| Error::Attributes(Box::new(e)))?
                .detach();
            Some(RefCell::new(stack))
        } else {
            None
        };
        let own = self.items.iter().all(|i| i.own.is_some()).then(|| {
            self.items
                .iter()
                .filter_map(|i| i.own.clone())
                .zip(&self.items)
                .map(|((search, wanted), item)| Own {
                    search: RefCell::new(search),
                    exclude: item.alone.is_none(),
                    wanted,
                })
                .collect::<Vec<_>>()
        });
        let root = match (&own, repo.workdir()) {
            (Some(_), Some(top)) => crate::fs::Root::open(top).ok(),
            _ => None,
        };
        Ok(Matcher {
            repo,
            search: RefCell::new(self.search.clone()),
            items: self
                .items
                .iter()
                .map(|i| i.alone.clone().map(RefCell::new))
                .collect(),
            attributes,
            own: own.filter(|o| !o.is_empty()),
            root,
        })
    }
}

/// git's `die` text for a pathspec gix-pathspec refused with `reason`.
fn git_message(spec: &BStr, reason: &str) -> String {
    // gix-pathspec appends the offending bytes as `input="..."`.
    let input = reason
        .split_once("input=\"")
        .and_then(|(_, rest)| rest.rsplit_once('"'))
        .map_or("", |(input, _)| input);
    if reason.starts_with("Found invalid keyword") {
        format!("Invalid pathspec magic '{input}' in '{spec}'")
    } else if reason.starts_with("Unimplemented short keyword") {
        format!("Unimplemented pathspec magic '{input}' in '{spec}'")
    } else if reason.starts_with("Missing ')'") {
        format!("Missing ')' at the end of pathspec magic in '{spec}'")
    } else if reason.contains("'literal' and 'glob'") {
        format!("{spec}: 'literal' and 'glob' are incompatible")
    } else {
        format!("{spec}: {reason}")
    }
}

/// A pathspec that names the top of the work tree (`.` there, `..` from `sub/`) as the empty
/// path from the top, which matches everything. gix-pathspec 0.22 normalizes it to `.` and
/// then takes that `.` as a literal prefix every path must start with, so it matched nothing.
fn whole_tree_as_empty(pattern: Pattern, prefix: &Path, root: &Path) -> Pattern {
    let mut normalized = pattern.clone();
    match normalized.normalize(prefix, root) {
        Ok(n) if n.is_nil() && n.path() == "." => {
            let mut empty = Pattern::from_literal(b"", pattern.signature | MagicSignature::TOP);
            empty.search_mode = pattern.search_mode;
            empty.attributes = pattern.attributes;
            empty
        }
        _ => pattern,
    }
}

/// A search over `patterns`, normalized; a pathspec leaving the work tree is git's "outside
/// repository" error, named by `spec`.
fn search(
    patterns: impl IntoIterator<Item = Pattern>,
    spec: &BStr,
    prefix: &Path,
    root: &Path,
) -> Result<Search, Error> {
    let patterns: Vec<Pattern> = patterns.into_iter().collect();
    // Normalize one at a time first, so that the error names the pathspec that leaves.
    for p in &patterns {
        if p.clone().normalize(prefix, root).is_err() {
            let original = if patterns.len() == 1 {
                spec.to_owned()
            } else {
                p.path().to_owned()
            };
            return Err(Error::Outside {
                spec: original,
                root: root.to_owned(),
            });
        }
    }
    Search::from_specs(patterns, Some(prefix), root).map_err(|e| Error::Invalid {
        spec: spec.to_owned(),
        message: e.to_string(),
    })
}

/// Matches repository-relative paths against a [`Pathspec`]. Not `Sync`: the searches and the
/// attribute stack keep state between calls, as gix's matching requires.
pub struct Matcher<'r> {
    repo: &'r gix::Repository,
    search: RefCell<Search>,
    items: Vec<Option<RefCell<Search>>>,
    attributes: Option<RefCell<gix::worktree::Stack>>,
    /// With `builtin_objectmode` magic: every pathspec alone, matched one by one.
    own: Option<Vec<Own>>,
    /// The work tree, for the modes `builtin_objectmode` asks about.
    root: Option<crate::fs::Root>,
}

/// One pathspec of a [`Matcher`] that matches them one by one.
struct Own {
    search: RefCell<Search>,
    exclude: bool,
    wanted: Option<ModeWanted>,
}

impl Matcher<'_> {
    /// Whether the pathspecs together select the file `path`: some positive pathspec matches
    /// it and no exclude pathspec does (git's `match_pathspec`).
    pub fn selects(&self, path: &BStr) -> bool {
        if let Some(own) = &self.own {
            return self.selects_one_by_one(own, path, false);
        }
        let mut search = self.search.borrow_mut();
        self.matches(&mut search, path)
            .is_some_and(|excluded| !excluded)
    }

    /// [`Matcher::selects`] for the directory `path` (without its trailing slash): a pathspec
    /// naming it as a directory (`dir/`) selects it, as git's walk matches directories.
    pub fn selects_dir(&self, path: &BStr) -> bool {
        if let Some(own) = &self.own {
            return self.selects_one_by_one(own, path, true);
        }
        let mut search = self.search.borrow_mut();
        self.matches_as(&mut search, path, true)
            .is_some_and(|excluded| !excluded)
    }

    /// Whether the `k`-th pathspec alone matches `path` (git's `ps_matched[k]`); an exclude
    /// pathspec always counts as matched.
    pub fn item_matches(&self, k: usize, path: &BStr) -> bool {
        if let Some(o) = self.own.as_ref().and_then(|own| own.get(k)) {
            return o.exclude || self.own_hit(o, path, false);
        }
        match &self.items[k] {
            None => true,
            Some(search) => self.matches(&mut search.borrow_mut(), path).is_some(),
        }
    }

    /// git's `match_pathspec` over the pathspecs one by one: no exclude one matches `path`,
    /// and a positive one does (or there is none: the implicit `.`).
    fn selects_one_by_one(&self, own: &[Own], path: &BStr, is_dir: bool) -> bool {
        let mut positive = false;
        let mut included = false;
        for o in own {
            positive |= !o.exclude;
            if self.own_hit(o, path, is_dir) {
                if o.exclude {
                    return false;
                }
                included = true;
            }
        }
        included || !positive
    }

    /// Whether the pathspec `o` alone matches `path`, its `builtin_objectmode` included.
    fn own_hit(&self, o: &Own, path: &BStr, is_dir: bool) -> bool {
        let matched = self
            .matches_as(&mut o.search.borrow_mut(), path, is_dir)
            .is_some();
        matched
            && match &o.wanted {
                None => true,
                Some(ModeWanted::Other) => false,
                Some(ModeWanted::Value(v)) => self.object_mode(path).is_some_and(|m| m == *v),
            }
    }

    /// git's `builtin_objectmode` of `path` as git's status asks it (`GIT_ATTR_CHECKIN`):
    /// the mode of what is in the work tree, as git would record it.
    fn object_mode(&self, path: &BStr) -> Option<&'static str> {
        let st = self.root.as_ref()?.dirs().lstat(path).ok()??;
        let kind = crate::fs::FileType::from_raw_mode(st.st_mode);
        Some(match kind {
            crate::fs::FileType::Symlink => "120000",
            crate::fs::FileType::Directory => "040000",
            _ if st.st_mode & 0o111 != 0 => "100755",
            _ => "100644",
        })
    }

    /// `Some(excluded)` when a pattern of `search` matches the file `path`.
    fn matches(&self, search: &mut Search, path: &BStr) -> Option<bool> {
        self.matches_as(search, path, false)
    }

    /// `Some(excluded)` when a pattern of `search` matches `path`, a directory if `is_dir`.
    fn matches_as(&self, search: &mut Search, path: &BStr, is_dir: bool) -> Option<bool> {
        let (repo, attributes) = (self.repo, &self.attributes);
        let m = search.pattern_matching_relative_path(
            path,
            Some(is_dir),
            &mut |relative, case, is_dir, out| {
                let Some(stack) = attributes else {
                    return false;
                };
                let mut stack = stack.borrow_mut();
                let mode = if is_dir {
                    gix::index::entry::Mode::DIR
                } else {
                    gix::index::entry::Mode::FILE
                };
                stack
                    .set_case(case)
                    .at_entry(relative, Some(mode), &repo.objects)
                    .is_ok_and(|platform| platform.matching_attributes(out))
            },
        )?;
        Some(m.is_excluded())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(specs: &[&str], prefix: &str) -> Pathspec {
        let specs: Vec<&BStr> = specs.iter().map(|s| s.as_bytes().as_bstr()).collect();
        Pathspec::new(
            &specs,
            Path::new(prefix),
            Path::new("/top"),
            Defaults::default(),
        )
        .unwrap()
    }

    #[test]
    fn empty_and_outside_pathspecs_are_refused_as_git_refuses_them() {
        let empty: [&BStr; 1] = [b"".as_bstr()];
        let err = Pathspec::new(
            &empty,
            Path::new(""),
            Path::new("/top"),
            Defaults::default(),
        );
        assert!(matches!(err, Err(Error::Empty)));
        let up: [&BStr; 1] = [b"../x".as_bstr()];
        let err =
            Pathspec::new(&up, Path::new(""), Path::new("/top"), Defaults::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "../x: '../x' is outside repository at '/top'"
        );
    }

    #[test]
    fn exclude_pathspecs_are_never_unmatched() {
        let p = spec(&["a", ":!b"], "");
        assert!(!p.is_exclude(0));
        assert!(p.is_exclude(1));
        assert_eq!(p.original(1), ":!b");
        assert_eq!(p.len(), 2);
    }
}
