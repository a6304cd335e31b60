//! What the generator believes a tree holds: paths mapped to files, symlinks and gitlinks, with
//! the operations that mutate it. The scenario's script is rendered from the differences between
//! two such trees; git itself is the truth about what was committed (the model only guides the
//! generator's choices, so that its mutations and local changes hit paths that exist).

use std::collections::{BTreeMap, BTreeSet};

use crate::rng::Rng;
use crate::shell::{printf_format, quote};

/// Words of generated text lines: few, so that edits to different lines of one file merge and
/// edits to the same line conflict.
const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta",
];

/// A file's bytes, kept in a form that renders as a short command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text lines, with LF or CRLF endings, with or without a final newline.
    Lines {
        lines: Vec<String>,
        crlf: bool,
        final_newline: bool,
    },
    /// Arbitrary bytes: empty, or binary (with NUL).
    Bytes(Vec<u8>),
    /// The output of `seq first last`: a large text file.
    Seq { first: u32, last: u32 },
}

impl Content {
    /// Random content of one of the kinds: short text (sometimes CRLF, sometimes without a final
    /// newline, sometimes with an `$Id$` line), empty, binary, large.
    pub fn random(rng: &mut Rng) -> Content {
        match rng.weighted(&[70, 8, 10, 6]) {
            0 => {
                let n = rng.range(1, 8);
                let mut lines: Vec<String> = (0..n).map(|_| line(rng)).collect();
                if rng.chance(10) {
                    lines.insert(rng.below(lines.len() + 1), "$Id$".to_owned());
                }
                Content::Lines {
                    lines,
                    crlf: rng.chance(15),
                    final_newline: rng.chance(85),
                }
            }
            1 => Content::Bytes(Vec::new()),
            2 => {
                let n = rng.range(1, 40);
                let mut bytes: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
                bytes.push(0);
                Content::Bytes(bytes)
            }
            _ => {
                let first = rng.range(1, 100) as u32;
                Content::Seq {
                    first,
                    last: first + rng.range(1000, 30000) as u32,
                }
            }
        }
    }

    /// The same file after an edit: a line replaced, inserted or deleted, the final newline or
    /// the line endings toggled, or new content altogether.
    pub fn mutated(&self, rng: &mut Rng) -> Content {
        let mut next = self.clone();
        match &mut next {
            Content::Lines {
                lines,
                crlf,
                final_newline,
            } => match rng.weighted(&[50, 20, 15, 5, 5, 5]) {
                0 => {
                    let i = rng.below(lines.len());
                    lines[i] = line(rng);
                }
                1 => lines.insert(rng.below(lines.len() + 1), line(rng)),
                2 if lines.len() > 1 => {
                    lines.remove(rng.below(lines.len()));
                }
                3 => *final_newline = !*final_newline,
                4 => *crlf = !*crlf,
                _ => return Content::random(rng),
            },
            Content::Bytes(_) => return Content::random(rng),
            Content::Seq { last, .. } => *last += rng.range(1, 500) as u32,
        }
        if next == *self {
            return Content::Lines {
                lines: vec![line(rng), "changed".to_owned()],
                crlf: false,
                final_newline: true,
            };
        }
        next
    }

    /// The command that writes this content to `path` (quoted already).
    pub fn write_command(&self, path: &str) -> String {
        match self {
            Content::Seq { first, last } => format!("seq {first} {last} >{path}"),
            Content::Bytes(b) if b.is_empty() => format!(": >{path}"),
            Content::Bytes(b) => format!("printf {} >{path}", printf_format(b)),
            Content::Lines {
                lines,
                crlf,
                final_newline,
            } => {
                let eol = if *crlf { "\r\n" } else { "\n" };
                let mut text = lines.join(eol);
                if *final_newline {
                    text.push_str(eol);
                }
                format!("printf {} >{path}", printf_format(text.as_bytes()))
            }
        }
    }
}

/// A random text line, such as `gamma 3`.
pub fn line(rng: &mut Rng) -> String {
    format!("{} {}", rng.pick(WORDS), rng.below(10))
}

/// One entry of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A regular file, executable or not.
    File { content: Content, exec: bool },
    /// A symbolic link and its target.
    Link(String),
    /// A submodule's commit: which of the two commits of the fuzz submodule (tags `s1`, `s2`).
    Gitlink(u8),
}

impl Node {
    /// A regular file (not executable) with this content.
    pub fn file(content: Content) -> Node {
        Node::File {
            content,
            exec: false,
        }
    }
}

/// Paths of a tree (no leading or trailing slash), each a file, a symlink or a gitlink;
/// directories are implied by the paths below them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// The entries, by path.
    pub nodes: BTreeMap<String, Node>,
}

impl Tree {
    /// Whether `path` is a directory of this tree (some entry lies below it).
    pub fn is_dir(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.nodes
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(&prefix))
    }

    /// The directories of this tree, every level.
    pub fn dirs(&self) -> BTreeSet<String> {
        let mut dirs = BTreeSet::new();
        for path in self.nodes.keys() {
            let mut at = 0;
            while let Some(i) = path[at..].find('/') {
                dirs.insert(path[..at + i].to_owned());
                at += i + 1;
            }
        }
        dirs
    }

    /// Whether an entry at `path` fits: nothing there, no entry at one of its leading
    /// directories, no entry below it.
    pub fn fits(&self, path: &str) -> bool {
        !self.nodes.contains_key(path)
            && !self.is_dir(path)
            && leading(path).all(|d| !self.nodes.contains_key(d))
    }

    /// The paths of regular files, leaving out git's own files (`.gitattributes`...).
    pub fn files(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(p, n)| matches!(n, Node::File { .. }) && !p.starts_with(".git"))
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The paths that ordinary mutations may touch (all but git's files and gitlinks).
    pub fn plain_paths(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(p, n)| !matches!(n, Node::Gitlink(_)) && !p.starts_with(".git"))
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Removes `path` and, when it is a directory, everything below it.
    pub fn remove_all(&mut self, path: &str) {
        self.nodes.remove(path);
        let prefix = format!("{path}/");
        self.nodes.retain(|p, _| !p.starts_with(&prefix));
    }

    /// The commands that turn a work tree holding `self` into one holding `next` (the paths
    /// git's `add -A` then records).
    pub fn transition(&self, next: &Tree) -> Vec<String> {
        let mut out = Vec::new();
        for (path, node) in &self.nodes {
            if matches!(node, Node::Gitlink(_)) {
                continue;
            }
            match next.nodes.get(path) {
                Some(n) if same_kind(n, node) => {}
                _ => out.push(format!("rm -rf {}", quote(path))),
            }
        }
        for (path, node) in &next.nodes {
            let old = self.nodes.get(path);
            if old == Some(node) {
                continue;
            }
            out.extend(write_node(path, node, old, self.is_dir(path)));
        }
        out
    }
}

fn same_kind(a: &Node, b: &Node) -> bool {
    matches!(
        (a, b),
        (Node::File { .. }, Node::File { .. })
            | (Node::Link(_), Node::Link(_))
            | (Node::Gitlink(_), Node::Gitlink(_))
    )
}

/// The commands that make `path` hold `node`, where `old` was (a directory, if `was_dir`).
fn write_node(path: &str, node: &Node, old: Option<&Node>, was_dir: bool) -> Vec<String> {
    let q = quote(path);
    let mut out = Vec::new();
    if was_dir {
        out.push(format!("rm -rf {q}"));
    }
    if let Some((parent, _)) = path.rsplit_once('/') {
        out.push(format!("mkdir -p {}", quote(parent)));
    }
    match node {
        Node::File { content, exec } => {
            let old_file = matches!(old, Some(Node::File { .. }));
            let old_content = match old {
                Some(Node::File { content, .. }) => Some(content),
                _ => None,
            };
            if old_content != Some(content) {
                out.push(content.write_command(&q));
            }
            let old_exec = matches!(old, Some(Node::File { exec: true, .. }));
            if *exec && (!old_exec || !old_file) {
                out.push(format!("chmod +x {q}"));
            } else if !*exec && old_exec && old_file {
                out.push(format!("chmod -x {q}"));
            }
        }
        Node::Link(target) => {
            if matches!(old, Some(Node::Link(_))) {
                out.push(format!("rm -f {q}"));
            }
            out.push(format!("ln -s {} {q}", quote(target)));
        }
        Node::Gitlink(tag) => out.push(format!(
            "git -C {q} checkout -q --detach s{tag} && git add {q}"
        )),
    }
    out
}

/// The leading directories of `path`, shortest first (`a`, `a/b` for `a/b/c`).
pub fn leading(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(entries: &[(&str, Node)]) -> Tree {
        Tree {
            nodes: entries
                .iter()
                .map(|(p, n)| (p.to_string(), n.clone()))
                .collect(),
        }
    }

    #[test]
    fn fits_refuses_directory_file_clashes() {
        let t = tree(&[("d/f", Node::Link("x".into()))]);
        assert!(t.is_dir("d"));
        assert!(!t.fits("d"));
        assert!(!t.fits("d/f/g"));
        assert!(t.fits("d/g"));
        assert!(t.fits("e"));
    }

    #[test]
    fn a_file_that_becomes_a_directory_is_removed_first() {
        let a = tree(&[("d", Node::file(Content::Bytes(vec![])))]);
        let b = tree(&[("d/f", Node::file(Content::Bytes(vec![])))]);
        assert_eq!(a.transition(&b), ["rm -rf d", "mkdir -p d", ": >d/f"]);
        assert_eq!(b.transition(&a), ["rm -rf d/f", "rm -rf d", ": >d"]);
    }
}
