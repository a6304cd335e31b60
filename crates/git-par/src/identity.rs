//! The identity git falls back to when `user.name`/`user.email` are not configured.
//!
//! Reflog entries need a committer. git then uses the account's full name and
//! `user@host` (with `.(none)` for a host without a domain), so `git clone` works on a fresh
//! machine. gix has no such default, but it reads `gitoxide.committer.nameFallback` and
//! `gitoxide.committer.emailFallback` only when nothing else is configured, so git's default is
//! handed to it as those two overrides.

use std::ffi::CStr;

/// `-c` style overrides that give gix git's default identity as a fallback.
pub fn fallback_overrides() -> Vec<String> {
    let (login, gecos) = account();
    let name = gecos
        .split(',')
        .next()
        .filter(|n| !n.is_empty())
        .map_or_else(|| login.clone(), ToOwned::to_owned);
    let email = std::env::var("EMAIL")
        .ok()
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| {
            let host = hostname();
            if host.contains('.') {
                format!("{login}@{host}")
            } else {
                format!("{login}@{host}.(none)")
            }
        });
    let mut out = Vec::new();
    for who in ["committer", "author"] {
        out.push(format!("gitoxide.{who}.nameFallback={name}"));
        out.push(format!("gitoxide.{who}.emailFallback={email}"));
    }
    out
}

/// The login name and the GECOS field of the current user, from the password database.
fn account() -> (String, String) {
    // SAFETY: getpwuid returns a pointer to static storage or null; the strings are copied out
    // before any other call could overwrite them.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        if pw.is_null() {
            let login = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
            return (login, String::new());
        }
        let field = |p: *const libc::c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        (field((*pw).pw_name), field((*pw).pw_gecos))
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
