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
//! Often what is left is the same for every file (`* text=auto eol=lf` at the top, nothing
//! relevant below it or in the repository's other attribute files): [`Reduced::uniform`] says
//! so, and the writers of a fresh work tree (where no untracked attribute file can add to the
//! tree's) then look the attributes up once instead of once per file.

use std::collections::HashMap;

use bstr::ByteSlice;
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
    /// Whether the attributes a checkout reads are the same for every file (see
    /// [`Reduced::uniform`]).
    uniform: bool,
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
        let mut blobs = HashMap::new();
        let mut uniform = !globals_relevant
            && std::env::var_os("GIT_ATTR_SOURCE").is_none()
            && repo.config_snapshot().string("attr.tree").is_none();
        for (path, id) in entries {
            let top = path == ".gitattributes";
            if !(top || path.ends_with(b"/.gitattributes")) {
                continue;
            }
            let Ok(object) = repo.find_object(*id) else {
                uniform = false;
                continue;
            };
            match reduce(&object.data) {
                Ok(reduction) => {
                    uniform &= reduction.relevant == 0 || (top && reduction.everywhere);
                    if let Some(bytes) = reduction.bytes {
                        blobs.insert(*id, bytes);
                    }
                }
                Err(Unreducible::Unparsable) => uniform = false,
                Err(Unreducible::Macros) => return Reduced::default(),
            }
        }
        Reduced { blobs, uniform }
    }

    /// Returns true if and only if every file of the tree has the same attributes as far as a
    /// checkout reads them: outside the top `.gitattributes` no attribute file of the tree or
    /// of the repository assigns one of them, and every line of it that does is `*`. Untracked
    /// attribute files in the work tree are not looked at: only a fresh work tree may rely on
    /// this.
    pub(crate) fn uniform(&self) -> bool {
        self.uniform
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
    /// Whether every kept line's pattern is `*` (it applies to every file below the file's
    /// directory).
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
    let mut everywhere = true;
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
            everywhere &= pattern.text == "*"
                && !pattern
                    .mode
                    .intersects(Mode::ABSOLUTE | Mode::MUST_BE_DIR | Mode::NEGATIVE);
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
        everywhere,
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
        assert!(!reduction.everywhere);
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
        assert!(reduction.everywhere && reduction.relevant == 1);
        for not_everywhere in [&b"*.md text\n"[..], b"*/ text\n", b"/* text\n", b"a text\n"] {
            assert!(!reduce(not_everywhere).expect("reducible").everywhere);
        }
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
