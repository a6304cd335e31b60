//! Rendering of a scenario as `sh` text: quoting, and file contents as `printf` formats, so that
//! a failing scenario is a script anyone can run with plain git.

/// `word` quoted for `sh`: single quotes, with each `'` written as `'\''`.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:+,@".contains(&b))
    {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Words quoted and joined by spaces.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// A `printf` format (already single-quoted) that prints exactly `bytes`: printable ASCII as
/// itself, `\n` as `\n`, everything else (and `'`, `\`, `%`) escaped.
pub fn printf_format(bytes: &[u8]) -> String {
    let mut out = String::from("'");
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            // A format starting with `-` would be read as an option.
            b'-' if i == 0 => out.push_str(r"\055"),
            b'\n' => out.push_str(r"\n"),
            b'\\' => out.push_str(r"\\"),
            b'%' => out.push_str("%%"),
            b'\'' => out.push_str(r"\047"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('\'');
    out
}

/// Splits a command line written by [`join`] (or by hand, with quotes) into words, as a POSIX
/// shell would for plain words and quotes: the bench's splitter, which reads its `cmd:`
/// contenders the same way.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    gitpar_bench::suite::contenders::split_words(line).map_err(|e| format!("{e} in: {line}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn quoted_words_split_back() {
        let words: Vec<String> = ["switch", "-m", "it's", "a b", "é", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(split(&join(&words)).unwrap(), words);
    }

    #[test]
    fn printf_prints_the_bytes() {
        let bytes: Vec<u8> = b"-n "
            .iter()
            .copied()
            .chain(0..=255u8)
            .chain(*b"%s\\n'x\r\n")
            .collect();
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf {}", printf_format(&bytes)))
            .output()
            .unwrap();
        assert_eq!(out.stdout, bytes);
    }
}
