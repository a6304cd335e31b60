//! `--pathspec-from-file`/`--pathspec-file-nul` and `--[no-]overlay` for `checkout` (paths form)
//! and `restore`, as git's `builtin/checkout.c` and `pathspec.c` (`parse_pathspec_file`) read them.

use std::io::Read;
use std::path::PathBuf;

use clap::Args;

use crate::exit::fatal;

/// `--pathspec-from-file=FILE` (`-`: standard input) and `--pathspec-file-nul`.
#[derive(Args, Debug, Default)]
pub struct PathspecFileArgs {
    /// Read the pathspecs from FILE (`-`: standard input), one per line.
    #[arg(long = "pathspec-from-file", value_name = "FILE")]
    from_file: Option<PathBuf>,
    /// With --pathspec-from-file, pathspecs are separated by NUL characters.
    #[arg(long = "pathspec-file-nul")]
    nul: bool,
}

/// `--overlay`/`--no-overlay` (the last one given wins).
#[derive(Args, Debug, Default)]
pub struct OverlayArgs {
    /// Keep paths the source lacks (checkout's default).
    #[arg(long = "overlay", overrides_with = "no_overlay")]
    overlay: bool,
    /// Remove tracked paths the source lacks (restore's default).
    #[arg(long = "no-overlay", overrides_with = "overlay")]
    no_overlay: bool,
}

impl OverlayArgs {
    /// Whether one of the two options was given.
    pub fn given(&self) -> bool {
        self.overlay || self.no_overlay
    }

    /// The overlay mode: the option given, else `default`.
    pub fn resolve(&self, default: bool) -> bool {
        match (self.overlay, self.no_overlay) {
            (true, _) => true,
            (_, true) => false,
            _ => default,
        }
    }
}

impl PathspecFileArgs {
    /// The pathspecs: `args` (from the command line), or those read from the file, with git's
    /// checks (`'--pathspec-from-file' and pathspec arguments cannot be used together`, ...).
    /// `detach` is checkout's `--detach`, which git refuses with a pathspec file.
    pub fn pathspecs(&self, args: Vec<String>, detach: bool) -> Result<Vec<String>, u8> {
        let Some(file) = &self.from_file else {
            if self.nul {
                return Err(fatal(
                    "the option '--pathspec-file-nul' requires '--pathspec-from-file'",
                ));
            }
            return Ok(args);
        };
        if !args.is_empty() {
            return Err(fatal(
                "'--pathspec-from-file' and pathspec arguments cannot be used together",
            ));
        }
        if detach {
            return Err(fatal(
                "options '--pathspec-from-file' and '--detach' cannot be used together",
            ));
        }
        let mut data = Vec::new();
        let read = if file.as_os_str() == "-" {
            std::io::stdin().lock().read_to_end(&mut data)
        } else {
            std::fs::File::open(file).and_then(|mut f| f.read_to_end(&mut data))
        };
        if let Err(e) = read {
            let s = e.to_string();
            let s = s.find(" (os error").map_or(s.as_str(), |i| &s[..i]);
            return Err(fatal(format!(
                "could not open '{}' for reading: {s}",
                file.display()
            )));
        }
        let specs = parse(&data, self.nul)?;
        if specs.iter().any(String::is_empty) {
            return Err(fatal(
                "empty string is not a valid pathspec. please use . instead if you meant to match all paths",
            ));
        }
        Ok(specs)
    }
}

/// git's `parse_pathspec_file`: records ended by LF (a CR before it dropped) or NUL, the last
/// one unterminated allowed; without NUL, a record starting with `"` is unquoted C-style.
fn parse(data: &[u8], nul: bool) -> Result<Vec<String>, u8> {
    let term = if nul { 0 } else { b'\n' };
    let mut records: Vec<&[u8]> = data.split(|&b| b == term).collect();
    if data.is_empty() || data.last() == Some(&term) {
        records.pop();
    }
    let unterminated = data.last().is_some_and(|&b| b != term);
    let last = records.len().saturating_sub(1);
    let mut out = Vec::new();
    for (i, mut rec) in records.into_iter().enumerate() {
        if !nul {
            // Only a CR before an LF goes (the last record may have had no LF).
            if !(unterminated && i == last) {
                rec = rec.strip_suffix(b"\r").unwrap_or(rec);
            }
            if rec.first() == Some(&b'"') {
                let unquoted = unquote_c_style(rec).ok_or_else(|| {
                    fatal(format!(
                        "line is badly quoted: {}",
                        String::from_utf8_lossy(rec)
                    ))
                })?;
                out.push(String::from_utf8_lossy(&unquoted).into_owned());
                continue;
            }
        }
        out.push(String::from_utf8_lossy(rec).into_owned());
    }
    Ok(out)
}

/// git's `unquote_c_style`: what follows the closing quote is ignored.
fn unquote_c_style(quoted: &[u8]) -> Option<Vec<u8>> {
    let mut it = quoted.strip_prefix(b"\"")?.iter().copied();
    let mut out = Vec::new();
    loop {
        match it.next()? {
            b'"' => return Some(out),
            b'\\' => {}
            c => {
                out.push(c);
                continue;
            }
        }
        let c = match it.next()? {
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            c @ (b'\\' | b'"') => c,
            c @ b'0'..=b'3' => {
                let mut ac = (c - b'0') << 6;
                let d = it.next().filter(|d| (b'0'..=b'7').contains(d))?;
                ac |= (d - b'0') << 3;
                let d = it.next().filter(|d| (b'0'..=b'7').contains(d))?;
                ac | (d - b'0')
            }
            _ => return None,
        };
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_quotes() {
        assert_eq!(parse(b"a\nb", false).unwrap(), ["a", "b"]);
        assert_eq!(parse(b"a\r\nb\r\n", false).unwrap(), ["a", "b"]);
        assert_eq!(parse(b"a\0b\0", true).unwrap(), ["a", "b"]);
        assert_eq!(parse(b"", false).unwrap(), Vec::<String>::new());
        assert_eq!(parse(b"\"a\\tb\\101\"x\n", false).unwrap(), ["a\tbA"]);
        assert!(unquote_c_style(b"\"abc").is_none());
        assert!(unquote_c_style(b"\"a\\q\"").is_none());
    }
}
