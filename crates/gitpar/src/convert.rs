//! Content conversions that we do ourselves because the library version differs from git.
//!
//! gix-filter 0.36 expands `$Id$` to `$Id: <hex>$`, while git writes `$Id: <hex> $` (with a
//! space) and also re-expands `$Id: <anything>$` keywords that crept into the repository. A file
//! checked out with gix's form shows as modified to git, so the `ident` step is done here, with
//! git's algorithm (`ident_to_worktree` in git's convert.c), before the rest of the pipeline runs;
//! gix's own ident step then finds no `$Id$` left and does nothing.

use bstr::ByteSlice;

/// A `working-tree-encoding` that git supports with a byte-order mark and gix-filter does not
/// (it ignores the attribute and writes UTF-8, which git then reports as modified).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BomEncoding {
    /// `UTF-16LE-BOM`: little-endian UTF-16 preceded by `FF FE`.
    Utf16LeBom,
    /// `UTF-16BE-BOM`: big-endian UTF-16 preceded by `FE FF`.
    Utf16BeBom,
}

impl BomEncoding {
    /// Recognise the attribute value, case-insensitively as git does.
    pub fn from_name(name: &bstr::BStr) -> Option<Self> {
        let upper = name.to_ascii_uppercase();
        match upper.as_slice() {
            b"UTF-16LE-BOM" => Some(Self::Utf16LeBom),
            b"UTF-16BE-BOM" => Some(Self::Utf16BeBom),
            _ => None,
        }
    }

    /// The name git prints in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Utf16LeBom => "UTF-16LE-BOM",
            Self::Utf16BeBom => "UTF-16BE-BOM",
        }
    }

    /// Encode UTF-8 `src` (after the eol conversion) for the work tree; `None` if `src` is not
    /// UTF-8, which git reports as a failure to encode.
    pub fn encode(self, src: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(src).ok()?;
        let mut out = Vec::with_capacity(2 + src.len() * 2);
        match self {
            Self::Utf16LeBom => {
                out.extend_from_slice(&[0xFF, 0xFE]);
                text.encode_utf16()
                    .for_each(|u| out.extend_from_slice(&u.to_le_bytes()));
            }
            Self::Utf16BeBom => {
                out.extend_from_slice(&[0xFE, 0xFF]);
                text.encode_utf16()
                    .for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
            }
        }
        Some(out)
    }
}

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
    fn bom_encodings_write_the_mark_and_utf16() {
        let enc = BomEncoding::from_name(b"utf-16le-bom".as_bstr()).unwrap();
        assert_eq!(
            enc.encode(b"a\n").unwrap(),
            vec![0xFF, 0xFE, b'a', 0, b'\n', 0]
        );
        let enc = BomEncoding::from_name(b"UTF-16BE-BOM".as_bstr()).unwrap();
        assert_eq!(
            enc.encode("é".as_bytes()).unwrap(),
            vec![0xFE, 0xFF, 0x00, 0xE9]
        );
        assert!(enc.encode(b"\xff").is_none());
        assert!(BomEncoding::from_name(b"UTF-16LE".as_bstr()).is_none());
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
