//! The identity git falls back to when `user.name`/`user.email` are not configured.
//!
//! Reflog entries need a committer. git then uses the account's full name and
//! `user@host` (with `.(none)` for a host without a domain), so `git clone` works on a fresh
//! machine. gix has no such default, but it reads `gitoxide.committer.nameFallback` and
//! `gitoxide.committer.emailFallback` only when nothing else is configured, so git's default is
//! handed to it as those two overrides. (Git for Windows takes the account's user principal name
//! as the e-mail address first, and its display name as the name: see [`platform::account`].)

use crate::platform;

/// `-c` style overrides that give gix git's default identity as a fallback.
pub fn fallback_overrides() -> Vec<String> {
    let (login, gecos) = platform::account();
    let name = gecos
        .split(',')
        .next()
        .filter(|n| !n.is_empty())
        .map_or_else(|| login.clone(), ToOwned::to_owned);
    let email = std::env::var("EMAIL")
        .ok()
        .filter(|e| !e.is_empty())
        .or_else(platform::user_email)
        .unwrap_or_else(|| {
            let host = platform::hostname();
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
