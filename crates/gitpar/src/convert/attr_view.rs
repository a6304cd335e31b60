//! The `.gitattributes` of a checkout as its writers read them: only the lines that can
//! convert a file.
//!
//! A writer looks up six attributes per file (`text`, `crlf`, `eol`, `ident`, `filter`,
//! `working-tree-encoding`), and gix-attributes matches every pattern of every attribute file
//! on the path against it, whatever the pattern assigns. Most lines of real `.gitattributes`
//! assign attributes no checkout reads (`linguist-*`, `diff`, `whitespace`, `export-ignore`,
//! `conflict-marker-size`): tldr's `pages*/**/*.md linguist-detectable` made the lookups a
//! third of its checkout's instructions. git resolves each attribute on its own (the last
//! matching line that assigns it, from the deepest file up), so a line that assigns none of the
//! six can be left out without changing any of them. [`Reduced`] holds the plan's
//! `.gitattributes` blobs without such lines, and [`View`] hands them to the attribute stack in
//! place of the object database's. Macros (`[attr]`) can assign anything: where any attribute
//! file defines one, nothing is reduced. The lines are parsed by gix-attributes; only which of
//! them to keep is decided here.
//!
//! What is left is a few lines, whose matches decide everything a checkout reads: which of
//! them match a path ([`Reduced::signature`], each pattern matched with gix-glob as
//! gix-attributes matches it, relative to its file's directory; a nested file's `*` lines as
//! "below its directory") determines its attributes, since every other relevant line either
//! matches every path (the top file's `*` lines) or none. The writers of a fresh work tree
//! (where no untracked attribute file can add to the tree's) look the attributes up once per
//! signature and reuse them: tldr's 38,491 files have one, git/git's 4,847 a few dozen.

use std::collections::HashMap;

use bstr::{BString, ByteSlice};
use gix::hash::ObjectId;

/// The attributes a checkout's conversion reads, and `binary`, git's built-in macro (`-text`).
const RELEVANT: [&str; 7] = [
    "text",
    "crlf",
    "eol",
    "ident",
    "filter",
    "working-tree-encoding",
    "binary",
];

/// The reduced `.gitattributes` blobs of one checkout, by object id.
#[derive(Debug, Default)]
pub(crate) struct Reduced {
    blobs: HashMap<ObjectId, Vec<u8>>,
    /// Whether [`Reduced::signature`] can tell anything: no attribute source outside the tree
    /// assigns an attribute a checkout reads, no macro, no `attr.tree`, at most 64 conditions.
    known: bool,
    /// The relevant lines that do not match every path, one bit of a signature each.
    conditions: Vec<Condition>,
    /// How paths compare (`core.ignorecase`).
    case: gix::glob::pattern::Case,
}

/// Set [`Condition::shares_dir`] of each of `conditions`.
fn mark_shared_dirs(conditions: &mut [Condition]) {
    for k in 1..conditions.len() {
        let (before, after) = conditions.split_at_mut(k);
        after[0].shares_dir = after[0].dir == before[k - 1].dir;
    }
}

/// A relevant attribute line that matches some paths only.
#[derive(Debug)]
struct Condition {
    /// The directory of its `.gitattributes`, with a trailing `/` (empty at the top): it
    /// matches paths below it only, relative to it.
    dir: BString,
    /// Its pattern; `None` for a nested file's `*` lines, which match every path below it.
    pattern: Option<gix::glob::Pattern>,
    /// Whether `dir` is the previous condition's: a file's lines are consecutive, so whether a
    /// path is below `dir` is known already (one comparison per attribute file and path, not
    /// one per line: git/git's lines made those comparisons 3% of its checkout).
    shares_dir: bool,
}

impl Reduced {
    /// The `.gitattributes` blobs among `entries` (paths and ids of a plan), each without the
    /// lines that assign none of the attributes a checkout reads. Nothing is reduced when an
    /// attribute file defines a macro, here or in the repository's other attribute sources
    /// (`info/attributes`, `core.attributesFile`, the user's and the system's), or when a blob
    /// does not parse (the stack then reports it as it would have).
    pub(crate) fn of<'a>(
        repo: &gix::Repository,
        entries: impl Iterator<Item = (&'a bstr::BStr, &'a ObjectId)>,
    ) -> Reduced {
        let Some(globals_relevant) = global_attributes(repo) else {
            return Reduced::default();
        };
        let config = repo.config_snapshot();
        let mut reduced = Reduced {
            known: !globals_relevant
                && std::env::var_os("GIT_ATTR_SOURCE").is_none()
                && config.string("attr.tree").is_none(),
            case: if config.boolean("core.ignorecase") == Some(true) {
                gix::glob::pattern::Case::Fold
            } else {
                gix::glob::pattern::Case::Sensitive
            },
            ..Reduced::default()
        };
        for (path, id) in entries {
            let top = path == ".gitattributes";
            if !(top || path.ends_with(b"/.gitattributes")) {
                continue;
            }
            let Ok(object) = repo.find_object(*id) else {
                reduced.known = false;
                continue;
            };
            match reduce(&object.data) {
                Ok(reduction) => {
                    let dir: BString = path[..path.len() - ".gitattributes".len()].into();
                    if !top && reduction.everywhere {
                        reduced.conditions.push(Condition {
                            dir: dir.clone(),
                            pattern: None,
                            shares_dir: false,
                        });
                    }
                    reduced
                        .conditions
                        .extend(reduction.specific.into_iter().map(|pattern| Condition {
                            dir: dir.clone(),
                            pattern: Some(pattern),
                            shares_dir: false,
                        }));
                    if let Some(bytes) = reduction.bytes {
                        reduced.blobs.insert(*id, bytes);
                    }
                }
                Err(Unreducible::Unparsable) => reduced.known = false,
                Err(Unreducible::Macros) => return Reduced::default(),
            }
        }
        if reduced.conditions.len() > 64 {
            reduced.known = false;
        }
        mark_shared_dirs(&mut reduced.conditions);
        reduced
    }

    /// Which of the relevant lines that do not match every path match the file `path`, as bits:
    /// two files with the same signature have the same attributes as far as a checkout reads
    /// them (the relevant lines that match them are the same). `None` where that cannot be
    /// told (see [`Reduced::known`](Self)). Untracked attribute files in the work tree are not
    /// looked at: only a fresh work tree may rely on this.
    pub(crate) fn signature(&self, path: &bstr::BStr) -> Option<u64> {
        if !self.known {
            return None;
        }
        let fold = self.case == gix::glob::pattern::Case::Fold;
        let mut bits = 0u64;
        let mut below = false;
        for (k, condition) in self.conditions.iter().enumerate() {
            let dir = &condition.dir;
            if !condition.shares_dir {
                below = path.len() > dir.len()
                    && (dir.is_empty()
                        || if fold {
                            path[..dir.len()].eq_ignore_ascii_case(dir)
                        } else {
                            path.starts_with(dir)
                        });
            }
            if !below {
                continue;
            }
            let rest = path[dir.len()..].as_bstr();
            let matches = condition.pattern.as_ref().is_none_or(|pattern| {
                pattern.matches_repo_relative_path(
                    rest,
                    crate::fs::last_slash(rest).map(|p| p + 1),
                    Some(false),
                    self.case,
                    gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
                )
            });
            if matches {
                bits |= 1 << k;
            }
        }
        Some(bits)
    }

    /// The object database `objects` with the reduced blobs in place of the originals.
    pub(crate) fn view<'a>(&'a self, objects: &'a dyn gix::objs::Find) -> View<'a> {
        View {
            reduced: self,
            objects,
        }
    }
}

/// An object database whose `.gitattributes` blobs are the [`Reduced`] ones.
pub(crate) struct View<'a> {
    reduced: &'a Reduced,
    objects: &'a dyn gix::objs::Find,
}

impl gix::objs::Find for View<'_> {
    fn try_find<'b>(
        &self,
        id: &gix::hash::oid,
        buffer: &'b mut Vec<u8>,
    ) -> gix::Result<Option<gix::objs::Data<'b>>> {
        match self.reduced.blobs.get(id) {
            Some(bytes) => {
                buffer.clear();
                buffer.extend_from_slice(bytes);
                Ok(Some(gix::objs::Data::new(
                    buffer,
                    gix::objs::Kind::Blob,
                    id.kind(),
                )))
            }
            None => self.objects.try_find(id, buffer),
        }
    }
}

/// What [`reduce`] made of an attribute file.
#[derive(Debug, PartialEq, Eq)]
struct Reduction {
    /// The file as the writers read it, when lines were left out.
    bytes: Option<Vec<u8>>,
    /// Lines kept: those that assign an attribute a checkout reads.
    relevant: usize,
    /// The patterns of the kept lines other than `*` (which applies to every file below the
    /// file's directory).
    specific: Vec<gix::glob::Pattern>,
    /// Whether a kept line's pattern is `*`.
    everywhere: bool,
}

/// Why [`reduce`] left an attribute file as it is.
#[derive(Debug, PartialEq, Eq)]
enum Unreducible {
    /// The file does not parse: the attribute stack reports it as it would have.
    Unparsable,
    /// The file defines a macro, which may assign anything: no file may be reduced.
    Macros,
}

/// `bytes` without the lines that assign none of [`RELEVANT`]; a line left out becomes an
/// empty line, so that line numbers stay those of the file.
fn reduce(bytes: &[u8]) -> Result<Reduction, Unreducible> {
    let mut keep = Vec::new();
    let mut specific = Vec::new();
    let mut any_everywhere = false;
    for item in gix::attrs::parse(bytes) {
        let (kind, assignments, line) = item.map_err(|_| Unreducible::Unparsable)?;
        let pattern = match kind {
            gix::attrs::parse::Kind::Macro(_) => return Err(Unreducible::Macros),
            gix::attrs::parse::Kind::Pattern(pattern) => pattern,
        };
        let mut relevant = false;
        for assignment in assignments {
            let assignment = assignment.map_err(|_| Unreducible::Unparsable)?;
            relevant |= RELEVANT.contains(&assignment.name.as_str());
        }
        if relevant {
            // `/*` (the top directory only) and `*/` (directories only) are not everywhere.
            use gix::glob::pattern::Mode;
            let everywhere = pattern.text == "*"
                && !pattern
                    .mode
                    .intersects(Mode::ABSOLUTE | Mode::MUST_BE_DIR | Mode::NEGATIVE);
            if everywhere {
                any_everywhere = true;
            } else {
                specific.push(pattern);
            }
            keep.push(line);
        }
    }
    // gix numbers the lines from 1 after a byte-order mark, as bstr's `lines` splits them.
    let bom = bytes.len() - bytes.trim_start_with(|c| c == '\u{feff}').len();
    let (head, body) = bytes.split_at(bom);
    let mut out = head.to_vec();
    let mut dropped = false;
    for (n, line) in body.lines_with_terminator().enumerate() {
        if keep.binary_search(&(n + 1)).is_ok() {
            out.extend_from_slice(line);
        } else {
            dropped |= !line.trim().is_empty();
            out.push(b'\n');
        }
    }
    Ok(Reduction {
        bytes: dropped.then_some(out),
        relevant: keep.len(),
        specific,
        everywhere: any_everywhere,
    })
}

/// Whether the attribute sources outside the tree (`info/attributes`, `core.attributesFile` or
/// the user's default, the system's file) assign an attribute a checkout reads: `None` where
/// one defines a macro or cannot be read, so that nothing is reduced.
fn global_attributes(repo: &gix::Repository) -> Option<bool> {
    let config = repo.config_snapshot();
    let mut files = vec![
        repo.common_dir().join("info").join("attributes"),
        std::path::PathBuf::from("/etc/gitattributes"),
    ];
    match config.trusted_path("core.attributesFile") {
        Ok(Some(path)) => files.push(path),
        Err(_) => return None,
        Ok(None) => {
            let xdg = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".config"))
                });
            files.extend(xdg.map(|d| d.join("git").join("attributes")));
        }
    }
    let mut relevant = false;
    for file in files {
        match std::fs::read(&file) {
            Ok(bytes) => match reduce(&bytes) {
                Ok(reduction) => relevant |= reduction.relevant > 0,
                Err(Unreducible::Unparsable) => relevant = true,
                Err(Unreducible::Macros) => return None,
            },
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    Some(relevant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_assign_no_conversion_attribute_are_left_out() {
        let file = b"# comment\n* text=auto eol=lf\npages*/**/*.md linguist-detectable=true\n\
            *.c diff=cpp whitespace=indent\n*.sh whitespace=trail text eol=lf\n*.png binary\n\
            \"quoted name\" -text\n*.lfs filter=lfs diff=lfs\n";
        let reduction = reduce(file).expect("reducible");
        assert_eq!(
            reduction.bytes.expect("lines were left out").as_bstr(),
            b"\n* text=auto eol=lf\n\n\n*.sh whitespace=trail text eol=lf\n*.png binary\n\
            \"quoted name\" -text\n*.lfs filter=lfs diff=lfs\n"
                .as_bstr()
        );
        assert_eq!(reduction.relevant, 5);
        let specific: Vec<String> = reduction
            .specific
            .iter()
            .map(|p| p.text.to_string())
            .collect();
        assert_eq!(specific, ["*.sh", "*.png", "quoted name", "*.lfs"]);
    }

    #[test]
    fn files_whose_lines_all_matter_macros_and_errors_are_read_as_they_are() {
        let reduction = reduce(b"* text\n*.bat eol=crlf\n").expect("reducible");
        assert_eq!((reduction.bytes, reduction.relevant), (None, 2));
        assert_eq!(
            reduce(b"[attr]mine -text\n*.x mine\n*.y diff\n"),
            Err(Unreducible::Macros)
        );
        assert_eq!(
            reduce(b"* builtin_x\n*.y diff\n"),
            Err(Unreducible::Unparsable)
        );
    }

    #[test]
    fn star_lines_alone_apply_to_every_file() {
        let tldr = b"* text=auto eol=lf\npages*/**/*.md linguist-detectable=true\n";
        let reduction = reduce(tldr).expect("reducible");
        assert!(reduction.specific.is_empty() && reduction.everywhere && reduction.relevant == 1);
        for not_everywhere in [&b"*.md text\n"[..], b"*/ text\n", b"/* text\n", b"a text\n"] {
            assert_eq!(reduce(not_everywhere).expect("reducible").specific.len(), 1);
        }
    }

    #[test]
    fn signatures_are_the_relevant_lines_that_match() {
        let top = b"* text=auto eol=lf\n*.png -text\n/tests/enc/* -text\n*.md diff\n";
        let nested = b"/chain/*.expect eol=lf\n*.x linguist\n*.bin -text\n";
        let mut reduced = Reduced {
            known: true,
            conditions: reduce(top)
                .expect("reducible")
                .specific
                .into_iter()
                .map(|p| ("", Some(p)))
                .chain([("vendor/", None)])
                .chain(
                    reduce(nested)
                        .expect("reducible")
                        .specific
                        .into_iter()
                        .map(|p| ("t/", Some(p))),
                )
                .map(|(dir, pattern)| Condition {
                    dir: dir.into(),
                    pattern,
                    shares_dir: false,
                })
                .collect(),
            ..Reduced::default()
        };
        mark_shared_dirs(&mut reduced.conditions);
        let shared: Vec<bool> = reduced.conditions.iter().map(|c| c.shares_dir).collect();
        assert_eq!(shared, [false, true, false, false, true]);
        let cases = [
            ("a.rs", 0),
            ("src/a.md", 0),
            ("tests/enc", 0),
            ("x/tests/enc/y", 0),
            ("vendor", 0),
            ("a.png", 0b1),
            ("deep/dir/b.png", 0b1),
            ("tests/enc/x", 0b10),
            ("vendor/x", 0b100),
            ("vendor/deep/y.png", 0b101),
            ("t/chain/a.expect", 0b1000),
            ("t/x/chain/a.expect", 0),
            ("chain/a.expect", 0),
            ("t/deep/a.bin", 0b10000),
            ("u/a.bin", 0),
            ("t/chain/b.bin", 0b10000),
        ];
        for (path, bits) in cases {
            assert_eq!(reduced.signature(path.into()), Some(bits), "{path}");
        }
        let unknown = Reduced {
            known: false,
            ..Reduced::default()
        };
        assert_eq!(unknown.signature("a.rs".into()), None);
    }

    #[test]
    fn a_byte_order_mark_and_crlf_line_ends_are_kept() {
        let file = "\u{feff}* text\r\n*.md linguist-documentation\r\n*.bat eol=crlf\r\n";
        let reduction = reduce(file.as_bytes()).expect("reducible");
        assert_eq!(
            reduction.bytes.expect("a line was left out").as_bstr(),
            "\u{feff}* text\r\n\n*.bat eol=crlf\r\n"
                .as_bytes()
                .as_bstr()
        );
    }
}
