//! Paths quoted as git prints them.

/// A path as git prints it with `core.quotePath` (the default): bytes outside printable ASCII,
/// `"` and `\\` make git quote the path and escape them (octal for non-ASCII).
pub(crate) fn quote_path(path: &bstr::BStr) -> String {
    let needs = path
        .iter()
        .any(|&b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\');
    if !needs {
        return path.to_string();
    }
    let mut out = String::from("\"");
    for &b in path.iter() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}
