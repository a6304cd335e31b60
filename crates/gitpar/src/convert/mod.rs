//! Content conversions that we do ourselves because the library version differs from git.
//!
//! gix-filter 0.36 expands `$Id$` to `$Id: <hex>$`, while git writes `$Id: <hex> $` (with a
//! space) and also re-expands `$Id: <anything>$` keywords that crept into the repository. A file
//! checked out with gix's form shows as modified to git, so the `ident` step is done here, with
//! git's algorithm (`ident_to_worktree` in git's convert.c), before the rest of the pipeline runs;
//! gix's own ident step then finds no `$Id$` left and does nothing.
//!
//! The UTF-16 and UTF-32 `working-tree-encoding`s are ours too, both ways ([`BomEncoding`]):
//! encoding_rs, under gix-filter, cannot encode them and does not know the `-BOM` names.
//!
//! Whether a file's end of lines change on its way to the work tree ([`Eol`]) is decided here as
//! git's `convert_attrs` and `output_eol` decide it, so that a writer runs gix-filter's pipeline
//! (which looks every attribute up a second time) only for the files it can change: a
//! repository whose `.gitattributes` says `* text=auto eol=lf` converts nothing on checkout.

pub(crate) mod attr_view;
pub(crate) mod filter;

use bstr::ByteSlice;

/// A `text` or `crlf` attribute as git's `git_path_check_crlf` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TextAttr {
    /// Not specified, or a value git does not know.
    #[default]
    Undefined,
    /// Set: text.
    Text,
    /// Unset: binary, never converted.
    Binary,
    /// `input`: text, checked out as it is stored.
    Input,
    /// `auto`: text if it looks like text.
    Auto,
}

impl TextAttr {
    /// The attribute's meaning from its state in an attribute search.
    pub(crate) fn from_state(state: gix::attrs::StateRef<'_>) -> TextAttr {
        match state {
            gix::attrs::StateRef::Set => TextAttr::Text,
            gix::attrs::StateRef::Unset => TextAttr::Binary,
            gix::attrs::StateRef::Value(v) if v.as_bstr() == "input" => TextAttr::Input,
            gix::attrs::StateRef::Value(v) if v.as_bstr() == "auto" => TextAttr::Auto,
            _ => TextAttr::Undefined,
        }
    }
}

/// `core.autocrlf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum AutoCrlf {
    /// `false`, or unset.
    #[default]
    False,
    /// `true`: text files get CRLF in the work tree.
    True,
    /// `input`: text files are stored with LF, checked out as stored.
    Input,
}

/// What decides whether checking a file out changes its end of lines: its `text`, `crlf` and
/// `eol` attributes and the configuration (`core.autocrlf`, `core.eol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Eol {
    /// The `text` attribute.
    pub(crate) text: TextAttr,
    /// The `crlf` attribute (older; read when `text` says nothing).
    pub(crate) crlf: TextAttr,
    /// The `eol` attribute: `Some(true)` for `crlf`, `Some(false)` for `lf`, else `None`.
    pub(crate) eol_crlf: Option<bool>,
}

/// The configuration [`Eol::converts_on_checkout`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct EolConfig {
    /// `core.autocrlf`.
    pub(crate) autocrlf: AutoCrlf,
    /// Whether `core.eol` is `crlf` (`native` and `lf` are LF on the platforms git-par runs on).
    pub(crate) core_eol_crlf: bool,
}

impl EolConfig {
    /// `core.autocrlf` and `core.eol` of `config`, as git reads them.
    pub(crate) fn of(config: &gix::config::Snapshot<'_>) -> EolConfig {
        let autocrlf = match config.string("core.autocrlf") {
            Some(v) if v.eq_ignore_ascii_case(b"input") => AutoCrlf::Input,
            _ if config.boolean("core.autocrlf") == Some(true) => AutoCrlf::True,
            _ => AutoCrlf::False,
        };
        let core_eol_crlf = config
            .string("core.eol")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"crlf"));
        EolConfig {
            autocrlf,
            core_eol_crlf,
        }
    }

    /// git's `text_eol_is_crlf`: whether a `text` file without `eol` gets CRLF.
    fn text_eol_is_crlf(self) -> bool {
        match self.autocrlf {
            AutoCrlf::True => true,
            AutoCrlf::Input => false,
            AutoCrlf::False => self.core_eol_crlf,
        }
    }
}

impl Eol {
    /// The `eol` attribute's meaning from its state in an attribute search: `Some(true)` for
    /// `crlf`, `Some(false)` for `lf`, `None` for anything else.
    pub(crate) fn eol_attr(state: gix::attrs::StateRef<'_>) -> Option<bool> {
        match state {
            gix::attrs::StateRef::Value(v) if v.as_bstr() == "crlf" => Some(true),
            gix::attrs::StateRef::Value(v) if v.as_bstr() == "lf" => Some(false),
            _ => None,
        }
    }

    /// Returns true if and only if git would convert LF to CRLF when writing the file to the
    /// work tree: git's `convert_attrs` turns the attributes and the configuration into a
    /// `crlf_action`, and `crlf_to_worktree` converts only when `output_eol` of it is CRLF.
    pub(crate) fn converts_on_checkout(self, config: EolConfig) -> bool {
        self.action(config).1
    }

    /// Returns true if and only if git may convert CRLF to LF when it reads the file into the
    /// index (`git add`): its `crlf_action` is anything but binary. A work tree file recorded
    /// clean under such attributes may hold CRLF where its blob holds LF (a donor's file that
    /// was added, not checked out), so it equals its blob only where their sizes are equal.
    pub(crate) fn converts_on_checkin(self, config: EolConfig) -> bool {
        self.action(config).0
    }

    /// git's `crlf_action` of these attributes under `config`: whether it is anything but
    /// binary (a conversion on check-in is possible), and whether it converts on checkout.
    fn action(self, config: EolConfig) -> (bool, bool) {
        #[derive(PartialEq)]
        enum Action {
            Undefined,
            Binary,
            Text,
            TextInput,
            TextCrlf,
            Auto,
            AutoInput,
            AutoCrlf,
        }
        let from = |attr: TextAttr| match attr {
            TextAttr::Undefined => Action::Undefined,
            TextAttr::Text => Action::Text,
            TextAttr::Binary => Action::Binary,
            TextAttr::Input => Action::TextInput,
            TextAttr::Auto => Action::Auto,
        };
        let mut action = from(self.text);
        if action == Action::Undefined {
            action = from(self.crlf);
        }
        if action != Action::Binary {
            action = match (action, self.eol_crlf) {
                (Action::Auto, Some(false)) => Action::AutoInput,
                (Action::Auto, Some(true)) => Action::AutoCrlf,
                (_, Some(false)) => Action::TextInput,
                (_, Some(true)) => Action::TextCrlf,
                (action, None) => action,
            };
        }
        if action == Action::Text {
            action = if config.text_eol_is_crlf() {
                Action::TextCrlf
            } else {
                Action::TextInput
            };
        }
        if action == Action::Undefined {
            action = match config.autocrlf {
                AutoCrlf::False => Action::Binary,
                AutoCrlf::True => Action::AutoCrlf,
                AutoCrlf::Input => Action::AutoInput,
            };
        }
        let checkout = match action {
            Action::Binary | Action::TextInput | Action::AutoInput => false,
            Action::TextCrlf | Action::AutoCrlf | Action::Undefined => true,
            Action::Text | Action::Auto => config.text_eol_is_crlf(),
        };
        (action != Action::Binary, checkout)
    }
}

/// A Unicode `working-tree-encoding` that gix-filter cannot write (encoding_rs, after the WHATWG
/// encoding standard, has no UTF-16 or UTF-32 encoder: it would write UTF-8, which git then
/// reports as modified), written here as git's iconv writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BomEncoding {
    /// `UTF-16LE-BOM`: little-endian UTF-16 preceded by `FF FE`.
    Utf16LeBom,
    /// `UTF-16BE-BOM`: big-endian UTF-16 preceded by `FE FF`.
    Utf16BeBom,
    /// `UTF-16LE`: little-endian UTF-16, no byte-order mark.
    Utf16Le,
    /// `UTF-16BE`: big-endian UTF-16, no byte-order mark.
    Utf16Be,
    /// `UTF-16`: a byte-order mark, then the platform's order (glibc's iconv, which git uses,
    /// writes `FF FE` and little-endian on the platforms git-par runs on).
    Utf16,
    /// `UTF-32LE`: little-endian UTF-32.
    Utf32Le,
    /// `UTF-32BE`: big-endian UTF-32.
    Utf32Be,
    /// `UTF-32`: `FF FE 00 00`, then little-endian, as glibc's iconv writes it.
    Utf32,
}

impl BomEncoding {
    /// Recognise the attribute value, case-insensitively and with or without the dash after
    /// `UTF`, as git's `same_utf_encoding` does.
    pub fn from_name(name: &bstr::BStr) -> Option<Self> {
        let upper = name.to_ascii_uppercase();
        let rest = upper
            .strip_prefix(b"UTF-")
            .or_else(|| upper.strip_prefix(b"UTF"))?;
        match rest {
            b"16LE-BOM" => Some(Self::Utf16LeBom),
            b"16BE-BOM" => Some(Self::Utf16BeBom),
            b"16LE" => Some(Self::Utf16Le),
            b"16BE" => Some(Self::Utf16Be),
            b"16" => Some(Self::Utf16),
            b"32LE" => Some(Self::Utf32Le),
            b"32BE" => Some(Self::Utf32Be),
            b"32" => Some(Self::Utf32),
            _ => None,
        }
    }

    /// The name git prints in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Utf16LeBom => "UTF-16LE-BOM",
            Self::Utf16BeBom => "UTF-16BE-BOM",
            Self::Utf16Le => "UTF-16LE",
            Self::Utf16Be => "UTF-16BE",
            Self::Utf16 => "UTF-16",
            Self::Utf32Le => "UTF-32LE",
            Self::Utf32Be => "UTF-32BE",
            Self::Utf32 => "UTF-32",
        }
    }

    /// Encode UTF-8 `src` (after the eol conversion) for the work tree; `None` if `src` is not
    /// UTF-8, which git reports as a failure to encode.
    pub fn encode(self, src: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(src).ok()?;
        let mut out = Vec::with_capacity(4 + src.len() * 4);
        let utf16 = |out: &mut Vec<u8>, le: bool| {
            for u in text.encode_utf16() {
                out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
            }
        };
        let utf32 = |out: &mut Vec<u8>, le: bool| {
            for c in text.chars() {
                let c = c as u32;
                out.extend_from_slice(&if le { c.to_le_bytes() } else { c.to_be_bytes() });
            }
        };
        match self {
            Self::Utf16LeBom | Self::Utf16 => {
                out.extend_from_slice(&[0xFF, 0xFE]);
                utf16(&mut out, true);
            }
            Self::Utf16BeBom => {
                out.extend_from_slice(&[0xFE, 0xFF]);
                utf16(&mut out, false);
            }
            Self::Utf16Le => utf16(&mut out, true),
            Self::Utf16Be => utf16(&mut out, false),
            Self::Utf32 => {
                out.extend_from_slice(&[0xFF, 0xFE, 0, 0]);
                utf32(&mut out, true);
            }
            Self::Utf32Le => utf32(&mut out, true),
            Self::Utf32Be => utf32(&mut out, false),
        }
        Some(out)
    }

    /// Decode the work tree's `src` to UTF-8 for the repository, as git's `encode_to_git` does
    /// through glibc's iconv; `None` where git leaves the content as it is (it cannot decode
    /// it, or its `validate_encoding` refuses it): a byte-order mark where the name fixes the
    /// order (`UTF-16LE`, `UTF-32BE`...), none where it is required (`UTF-16`, `UTF-32`),
    /// malformed input, and `UTF-16BE-BOM`, which git writes but cannot read back. Empty input
    /// is left as it is too.
    pub fn decode(self, src: &[u8]) -> Option<Vec<u8>> {
        const BOM16_LE: &[u8] = &[0xFF, 0xFE];
        const BOM16_BE: &[u8] = &[0xFE, 0xFF];
        const BOM32_LE: &[u8] = &[0xFF, 0xFE, 0, 0];
        const BOM32_BE: &[u8] = &[0, 0, 0xFE, 0xFF];
        if src.is_empty() {
            return None;
        }
        let bom16 = src.starts_with(BOM16_LE) || src.starts_with(BOM16_BE);
        let bom32 = src.starts_with(BOM32_LE) || src.starts_with(BOM32_BE);
        match self {
            Self::Utf16Le | Self::Utf16Be if bom16 => None,
            Self::Utf32Le | Self::Utf32Be if bom32 => None,
            Self::Utf16 if !bom16 => None,
            Self::Utf32 if !bom32 => None,
            Self::Utf16BeBom => None,
            Self::Utf16Le => utf16(src, true),
            Self::Utf16Be => utf16(src, false),
            Self::Utf32Le => utf32(src, true),
            Self::Utf32Be => utf32(src, false),
            // iconv's "UTF-16" (which git reads UTF-16LE-BOM as): the mark decides, big-endian
            // without one.
            Self::Utf16 | Self::Utf16LeBom => match src {
                [0xFF, 0xFE, rest @ ..] => utf16(rest, true),
                [0xFE, 0xFF, rest @ ..] => utf16(rest, false),
                _ => utf16(src, false),
            },
            Self::Utf32 => match src {
                [0xFF, 0xFE, 0, 0, rest @ ..] => utf32(rest, true),
                [0, 0, 0xFE, 0xFF, rest @ ..] => utf32(rest, false),
                _ => None,
            },
        }
    }
}

/// UTF-16 (`le` or big-endian) to UTF-8; `None` for an odd length or an unpaired surrogate.
fn utf16(src: &[u8], le: bool) -> Option<Vec<u8>> {
    if !src.len().is_multiple_of(2) {
        return None;
    }
    let units = src.chunks_exact(2).map(|c| {
        let pair = [c[0], c[1]];
        if le {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    let mut out = String::with_capacity(src.len());
    for c in char::decode_utf16(units) {
        out.push(c.ok()?);
    }
    Some(out.into_bytes())
}

/// UTF-32 (`le` or big-endian) to UTF-8; `None` for a length not a multiple of four or a value
/// that is no Unicode scalar.
fn utf32(src: &[u8], le: bool) -> Option<Vec<u8>> {
    if !src.len().is_multiple_of(4) {
        return None;
    }
    let mut out = String::with_capacity(src.len());
    for c in src.chunks_exact(4) {
        let quad = [c[0], c[1], c[2], c[3]];
        let v = if le {
            u32::from_le_bytes(quad)
        } else {
            u32::from_be_bytes(quad)
        };
        out.push(char::from_u32(v)?);
    }
    Some(out.into_bytes())
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
    fn end_of_lines_convert_on_checkout_as_git_decides() {
        use TextAttr::{Auto, Binary, Input, Text, Undefined};
        let config = |autocrlf, core_eol_crlf| EolConfig {
            autocrlf,
            core_eol_crlf,
        };
        let plain = config(AutoCrlf::False, false);
        let eol = |text, crlf, eol_crlf| Eol {
            text,
            crlf,
            eol_crlf,
        };
        // (attributes, configuration, converts): git's convert_attrs and output_eol.
        let cases = [
            (eol(Undefined, Undefined, None), plain, false),
            (
                eol(Undefined, Undefined, None),
                config(AutoCrlf::True, false),
                true,
            ),
            (
                eol(Undefined, Undefined, None),
                config(AutoCrlf::Input, false),
                false,
            ),
            // core.eol applies to text files only.
            (
                eol(Undefined, Undefined, None),
                config(AutoCrlf::False, true),
                false,
            ),
            (
                eol(Text, Undefined, None),
                config(AutoCrlf::False, true),
                true,
            ),
            (
                eol(Auto, Undefined, None),
                config(AutoCrlf::False, true),
                true,
            ),
            (eol(Text, Undefined, None), plain, false),
            (
                eol(Auto, Undefined, None),
                config(AutoCrlf::True, false),
                true,
            ),
            // autocrlf=input wins over core.eol.
            (
                eol(Text, Undefined, None),
                config(AutoCrlf::Input, true),
                false,
            ),
            // The eol attribute: lf never converts, crlf does, and implies text.
            (
                eol(Auto, Undefined, Some(false)),
                config(AutoCrlf::True, true),
                false,
            ),
            (
                eol(Text, Undefined, Some(false)),
                config(AutoCrlf::True, true),
                false,
            ),
            (eol(Undefined, Undefined, Some(true)), plain, true),
            (eol(Auto, Undefined, Some(true)), plain, true),
            // Binary ignores eol; crlf is read only when text says nothing.
            (
                eol(Binary, Undefined, Some(true)),
                config(AutoCrlf::True, true),
                false,
            ),
            (
                eol(Undefined, Binary, Some(true)),
                config(AutoCrlf::True, true),
                false,
            ),
            (
                eol(Undefined, Text, None),
                config(AutoCrlf::False, true),
                true,
            ),
            (
                eol(Undefined, Input, None),
                config(AutoCrlf::True, true),
                false,
            ),
            (eol(Binary, Text, None), config(AutoCrlf::True, true), false),
            // crlf=input with eol=crlf is TEXT_CRLF in git.
            (eol(Undefined, Input, Some(true)), plain, true),
        ];
        for (attrs, config, converts) in cases {
            assert_eq!(
                attrs.converts_on_checkout(config),
                converts,
                "{attrs:?} under {config:?}"
            );
        }
    }

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
        assert_eq!(
            BomEncoding::from_name(b"utf16le".as_bstr()),
            Some(BomEncoding::Utf16Le)
        );
        assert!(BomEncoding::from_name(b"ISO-8859-1".as_bstr()).is_none());
    }

    #[test]
    fn bom_encodings_decode_what_they_encode_as_git_reads_it() {
        let text = "héllo 😀\r\n".as_bytes();
        for enc in [
            BomEncoding::Utf16LeBom,
            BomEncoding::Utf16Le,
            BomEncoding::Utf16Be,
            BomEncoding::Utf16,
            BomEncoding::Utf32Le,
            BomEncoding::Utf32Be,
            BomEncoding::Utf32,
        ] {
            let encoded = enc.encode(text).unwrap();
            assert_eq!(enc.decode(&encoded).unwrap(), text, "{}", enc.name());
        }
        // git writes UTF-16BE-BOM but cannot read it back.
        let be = BomEncoding::Utf16BeBom.encode(text).unwrap();
        assert!(BomEncoding::Utf16BeBom.decode(&be).is_none());
        // A mark where the name fixes the order, none where it is required, bad input.
        assert!(BomEncoding::Utf16Le
            .decode(&[0xFF, 0xFE, b'a', 0])
            .is_none());
        assert!(BomEncoding::Utf16.decode(&[b'a', 0]).is_none());
        assert!(BomEncoding::Utf32.decode(&[b'a', 0, 0, 0]).is_none());
        assert!(BomEncoding::Utf16Le.decode(&[b'a', 0, 0]).is_none());
        assert!(BomEncoding::Utf16Le.decode(&[0x00, 0xD8]).is_none());
        // UTF-16LE-BOM without its mark is read as iconv's UTF-16: big-endian.
        assert_eq!(
            BomEncoding::Utf16LeBom.decode(&[0, b'a']).unwrap(),
            b"a".to_vec()
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
