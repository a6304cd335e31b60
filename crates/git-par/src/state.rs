//! How git names the commit `HEAD` is now at: `HEAD is now at <abbrev> <subject>` after a
//! reset, with the subject recoded from the commit's encoding into `i18n.logOutputEncoding`.
//! (The state files and `ORIG_HEAD` are the engine's: `gitpar::repo::state`.)

use bstr::ByteSlice;

/// A commit's subject as git's one-line format prints it: decoded from the commit's `encoding`
/// header and written in `i18n.logOutputEncoding` (default UTF-8), so `HEAD is now at …` shows
/// a Latin-1 commit message as git does.
pub(crate) fn subject(repo: &gix::Repository, commit: gix::ObjectId) -> Vec<u8> {
    let Ok(commit) = repo.find_commit(commit) else {
        return Vec::new();
    };
    let Ok(decoded) = commit.decode() else {
        return Vec::new();
    };
    let raw = decoded.message_summary().to_vec();
    let declared = decoded.encoding.map(|e| e.to_str_lossy().into_owned());
    let output = repo
        .config_snapshot()
        .string("i18n.logOutputEncoding")
        .map(|s| s.to_str_lossy().into_owned());
    recode(&raw, declared.as_deref(), output.as_deref())
}

/// Re-encode `text` from `from` (default UTF-8) to `to` (default UTF-8), as git's
/// `reencode_string`: unknown encodings and equal ones leave the bytes as they are.
fn recode(text: &[u8], from: Option<&str>, to: Option<&str>) -> Vec<u8> {
    use gix::filter::plumbing::encoding::{Encoding, UTF_8};
    let lookup = |label: Option<&str>| {
        label
            .and_then(|l| Encoding::for_label(l.as_bytes()))
            .unwrap_or(UTF_8)
    };
    let (from, to) = (lookup(from), lookup(to));
    if from == to {
        return text.to_vec();
    }
    let (decoded, _, _) = from.decode(text);
    let (encoded, _, _) = to.encode(&decoded);
    encoded.into_owned()
}

/// `reset --hard`'s `HEAD is now at <abbrev> <subject>` on standard output, the subject in the
/// log output encoding (bytes, as git writes them).
pub(crate) fn print_new_head_line(repo: &gix::Repository, commit: gix::ObjectId) {
    use std::io::Write as _;
    let mut line = format!("HEAD is now at {}", crate::names::short(repo, commit)).into_bytes();
    let subject = subject(repo, commit);
    if !subject.is_empty() {
        line.push(b' ');
        line.extend_from_slice(&subject);
    }
    line.push(b'\n');
    let _ = std::io::stdout().write_all(&line);
}
