//! Content conversions that we do ourselves because the library version differs from git.
//!
//! gix-filter 0.36 expands `$Id$` to `$Id: <hex>$`, while git writes `$Id: <hex> $` (with a
//! space) and also re-expands `$Id: <anything>$` keywords that crept into the repository. A file
//! checked out with gix's form shows as modified to git, so the `ident` step is done here, with
//! git's algorithm (`ident_to_worktree` in git's convert.c), before the rest of the pipeline runs;
//! gix's own ident step then finds no `$Id$` left and does nothing.

use bstr::ByteSlice;

/// Returns true if and only if `src` may contain an ident keyword, so the attribute lookup for
/// `ident` can be skipped for (almost) every file.
pub fn may_have_ident(src: &[u8]) -> bool {
    src.find(b"$Id").is_some()
}

/// Expand every `$Id$` and `$Id: ...$` keyword of `src` to `$Id: <hex> $`, where `hex` is the
/// blob's object id, exactly as git does. Returns `None` if there is nothing to expand.
pub fn ident_to_worktree(src: &[u8], hex: &[u8]) -> Option<Vec<u8>> {
    if !has_keyword(src) {
        return None;
    }
    let mut out = Vec::with_capacity(src.len() + 64);
    let mut src = src;
    // Step 1: run to the next '$'.
    while let Some(dollar) = src.find_byte(b'$') {
        out.extend_from_slice(&src[..=dollar]);
        src = &src[dollar + 1..];
        // Step 2: does it look like "Id$" or "Id:...$"?
        if src.len() < 3 || &src[..2] != b"Id" {
            continue;
        }
        // Step 3: skip over it.
        if src[2] == b'$' {
            src = &src[3..];
        } else if src[2] == b':' {
            let Some(end) = src[3..].find_byte(b'$').map(|p| p + 3) else {
                break;
            };
            if src[3..end].contains(&b'\n') {
                continue;
            }
            // Spaces in unexpected places: an id from another versioning system; keep it.
            if end > 4 {
                if let Some(spc) = src[4..end].find_byte(b' ').map(|p| p + 4) {
                    if spc < end - 1 {
                        continue;
                    }
                }
            }
            src = &src[end + 1..];
        } else {
            continue;
        }
        // Step 4: substitute.
        out.extend_from_slice(b"Id: ");
        out.extend_from_slice(hex);
        out.extend_from_slice(b" $");
    }
    out.extend_from_slice(src);
    Some(out)
}

/// git's `count_ident`: is there at least one keyword git would expand?
fn has_keyword(mut src: &[u8]) -> bool {
    while let Some(dollar) = src.find_byte(b'$') {
        src = &src[dollar + 1..];
        if src.len() < 3 || &src[..2] != b"Id" {
            continue;
        }
        match src[2] {
            b'$' => return true,
            b':' => {
                let rest = &src[3..];
                for &c in rest {
                    match c {
                        b'\n' => break,
                        b'$' => return true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &[u8] = b"055c8729cdcc372500a08db659c045e16c4409fb";

    #[test]
    fn expands_like_git() {
        let out = ident_to_worktree(b"a $Id$ b\n", HEX).unwrap();
        assert_eq!(
            out.as_bstr(),
            b"a $Id: 055c8729cdcc372500a08db659c045e16c4409fb $ b\n".as_bstr()
        );
        let out = ident_to_worktree(b"$Id: old $\n", HEX).unwrap();
        assert_eq!(
            out.as_bstr(),
            b"$Id: 055c8729cdcc372500a08db659c045e16c4409fb $\n".as_bstr()
        );
    }

    #[test]
    fn leaves_foreign_keywords_and_plain_text_alone() {
        assert!(ident_to_worktree(b"no keyword here $ Id $", HEX).is_none());
        let foreign = b"$Id: file.c,v 1.2 2001 joe $\n";
        assert_eq!(
            ident_to_worktree(foreign, HEX).unwrap().as_bstr(),
            foreign.as_bstr()
        );
    }
}
