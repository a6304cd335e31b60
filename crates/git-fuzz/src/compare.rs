//! The two results of a scenario side by side: which aspects differ, whether git-par lost
//! content that git kept, and whether a difference is one of the documented safer refusals.

use std::collections::HashSet;

use crate::observe::{Item, WorkTree};

/// One aspect in which the two sides differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What differs: `exit code`, `repo: index`, `copy: work tree`...
    pub aspect: String,
    /// git's value.
    pub git: String,
    /// git-par's value.
    pub par: String,
}

impl Difference {
    /// The two values as a line diff: ` ` both, `-` git's only, `+` git-par's only.
    pub fn render(&self) -> String {
        let mut out = format!("--- {} (-git +git-par)\n", self.aspect);
        for line in diff_lines(&self.git, &self.par) {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// A line diff by longest common subsequence (the values are a few hundred lines at most).
pub fn diff_lines(a: &str, b: &str) -> Vec<String> {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(format!("  {}", a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("+ {}", b[j]));
            j += 1;
        } else {
            out.push(format!("- {}", a[i]));
            i += 1;
        }
    }
    out
}

/// The paths of `before` whose non-empty content git's result still holds somewhere and
/// git-par's result holds nowhere: local content git kept and git-par lost.
pub fn lost(before: &WorkTree, git: &[&WorkTree], par: &[&WorkTree]) -> Vec<String> {
    let contents = |trees: &[&WorkTree]| -> HashSet<Vec<u8>> {
        trees
            .iter()
            .flat_map(|t| t.values())
            .filter_map(|i| match i {
                Item::File(bytes, _) if !bytes.is_empty() => Some(bytes.clone()),
                _ => None,
            })
            .collect()
    };
    let (kept_by_git, kept_by_par) = (contents(git), contents(par));
    before
        .iter()
        .filter_map(|(path, item)| match item {
            Item::File(bytes, _)
                if !bytes.is_empty()
                    && kept_by_git.contains(bytes)
                    && !kept_by_par.contains(bytes) =>
            {
                Some(path.clone())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_marks_each_side() {
        assert_eq!(
            diff_lines("a\nb\nc\n", "a\nx\nc\n"),
            ["  a", "+ x", "- b", "  c"]
        );
    }

    #[test]
    fn content_git_kept_and_git_par_lost_is_lost() {
        let file = |s: &str| Item::File(s.as_bytes().to_vec(), false);
        let before: WorkTree = [("d/inside".to_owned(), file("precious"))].into();
        let git: WorkTree = [("d/inside".to_owned(), file("precious"))].into();
        let par: WorkTree = [("d".to_owned(), file("two"))].into();
        assert_eq!(lost(&before, &[&git], &[&par]), ["d/inside"]);
        let moved: WorkTree = [("elsewhere".to_owned(), file("precious"))].into();
        assert!(lost(&before, &[&git], &[&moved]).is_empty());
    }
}
