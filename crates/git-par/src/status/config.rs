//! The configuration `git status` reads, in one place: git's `git_status_config` and
//! `finalize_deferred_config` (builtin/commit.c), the advice settings, the comment string and
//! the few `core.`/`column.` settings that change what status prints.
//!
//! Values are parsed with git's rules rather than gix's: `status.showUntrackedFiles=true` is
//! `normal` (git 2.46 and later), a boolean may be any integer, `status.submoduleSummary` is a
//! boolean or a limit, and a value git rejects stops the command as git stops it.

use bstr::{BStr, BString, ByteSlice};
use gitpar::status::Untracked;

use crate::exit::fatal;

/// git's `git_parse_maybe_bool`: a valueless key (`None`) is true, the empty string false,
/// `true`/`yes`/`on` and `false`/`no`/`off` in any case, or an integer (true unless 0).
pub(super) fn maybe_bool(v: Option<&[u8]>) -> Option<bool> {
    let Some(v) = v else {
        return Some(true);
    };
    if v.is_empty() {
        return Some(false);
    }
    let lower = v.to_ascii_lowercase();
    match lower.as_slice() {
        b"true" | b"yes" | b"on" => Some(true),
        b"false" | b"no" | b"off" => Some(false),
        _ => parse_int(v).map(|n| n != 0),
    }
}

/// git's `git_parse_int`: an optional sign, a number in C's notation (`0x1f`, `017`, `31`) and
/// an optional unit `k`, `m` or `g`; `None` when it is not one or does not fit an `int`.
pub(super) fn parse_int(v: &[u8]) -> Option<i64> {
    let s = v.to_str().ok()?;
    let (negative, s) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let unit_at = s
        .find(|c: char| !c.is_ascii_hexdigit() && c != 'x' && c != 'X')
        .unwrap_or(s.len());
    let (digits, unit) = s.split_at(unit_at);
    let factor: i64 = match unit.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    let magnitude = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    let n = magnitude.checked_mul(factor)?;
    let n = if negative { -n } else { n };
    i32::try_from(n).ok().map(i64::from)
}

/// git's `parse_untracked_setting_name` (`-u<mode>`, `status.showUntrackedFiles`): a boolean
/// is `no` or `normal`, else `no`, `normal` or `all`.
pub(super) fn untracked_mode(v: Option<&[u8]>) -> Option<Untracked> {
    match maybe_bool(v) {
        Some(false) => return Some(Untracked::No),
        Some(true) => return Some(Untracked::Normal),
        None => {}
    }
    match v? {
        b"no" => Some(Untracked::No),
        b"normal" => Some(Untracked::Normal),
        b"all" => Some(Untracked::All),
        _ => None,
    }
}

/// `status.showUntrackedFiles` alone (`normal` when unset), for a status that only asks whether
/// anything would be listed; `None` for a value git refuses.
pub(super) fn untracked_setting(config: &gix::config::Snapshot<'_>) -> Option<Untracked> {
    match raw(config, "status.showUntrackedFiles") {
        None => Some(Untracked::Normal),
        Some(v) => untracked_mode(v.as_ref().map(|v| v.as_slice())),
    }
}

/// What the configuration says, before the command line has its word.
pub(super) struct Settings {
    /// `status.showUntrackedFiles`.
    pub untracked: Option<Untracked>,
    /// `status.short` (only for the human formats, as git's deferred config).
    pub short: Option<bool>,
    /// `status.branch` (likewise).
    pub branch: Option<bool>,
    /// `status.aheadBehind` (likewise).
    pub ahead_behind: Option<bool>,
    /// `status.showStash`.
    pub show_stash: bool,
    /// `status.displayCommentPrefix`.
    pub comment_prefix: bool,
    /// `core.commentString` / `core.commentChar` (`#`; `auto` keeps it).
    pub comment: BString,
    /// `status.relativePaths` (default true).
    pub relative_paths: bool,
    /// `status.submoduleSummary`: 0 off, -1 no limit, else the limit.
    pub submodule_summary: i64,
    /// `status.renames`, else `diff.renames` (`copies` counts as on).
    pub renames: Option<bool>,
    /// `advice.statusHints` (and `GIT_ADVICE`).
    pub hints: bool,
    /// `advice.statusUoption` (and `GIT_ADVICE`): the slow untracked walk advice.
    pub untracked_advice: bool,
    /// fsmonitor is configured (git's `fsm_settings__get_mode() > FSMONITOR_MODE_DISABLED`):
    /// the slow-walk advice then says the results were cached.
    pub fsmonitor: bool,
    /// `column.status` / `column.ui` ask for columns (`always`, a layout, or `auto` on a
    /// terminal): git-par hands such a status to git.
    pub columns: bool,
}

/// The raw value of `key` as git's callbacks get it: `None` unset, `Some(None)` valueless.
fn raw(config: &gix::config::Snapshot<'_>, key: &str) -> Option<Option<BString>> {
    config.plumbing().string_implicit(key)
}

/// git's `git_config_bool`: a value that is no boolean is fatal.
fn boolean(config: &gix::config::Snapshot<'_>, key: &str) -> Result<Option<bool>, u8> {
    let Some(v) = raw(config, key) else {
        return Ok(None);
    };
    maybe_bool(v.as_ref().map(|v| v.as_slice()))
        .map(Some)
        .ok_or_else(|| {
            fatal(format!(
                "bad boolean config value '{}' for '{key}'",
                v.unwrap_or_default()
            ))
        })
}

/// git's `advice_enabled`: `GIT_ADVICE=false` turns every advice off, else `advice.<name>`
/// (default on).
pub(super) fn advice(config: &gix::config::Snapshot<'_>, name: &str) -> Result<bool, u8> {
    if let Some(v) = std::env::var_os("GIT_ADVICE") {
        if maybe_bool(Some(v.as_encoded_bytes())) == Some(false) {
            return Ok(false);
        }
    }
    Ok(boolean(config, &format!("advice.{name}"))?.unwrap_or(true))
}

/// git's `git_config_rename`: `copies`/`copy` or a boolean.
fn renames(config: &gix::config::Snapshot<'_>, key: &str) -> Result<Option<bool>, u8> {
    match raw(config, key) {
        Some(Some(v)) if v == "copies" || v == "copy" => Ok(Some(true)),
        Some(_) => boolean(config, key),
        None => Ok(None),
    }
}

/// `column.ui` then `column.status` as git's `git_column_config` and `finalize_colopts` read
/// them: whether the untracked files would be listed in columns.
fn columns(config: &gix::config::Snapshot<'_>, tty: bool) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Enable {
        Disabled,
        Enabled,
        Auto,
    }
    let mut enable = Enable::Disabled;
    for key in ["column.ui", "column.status"] {
        let Some(Some(value)) = raw(config, key) else {
            continue;
        };
        let (mut enable_set, mut layout_set) = (None, false);
        for word in value.split(|&b| b == b' ' || b == b',') {
            match word {
                b"always" => enable_set = Some(Enable::Enabled),
                b"never" => enable_set = Some(Enable::Disabled),
                b"auto" => enable_set = Some(Enable::Auto),
                b"plain" | b"column" | b"row" => layout_set = true,
                _ => {}
            }
        }
        match enable_set {
            Some(e) => enable = e,
            None if layout_set => enable = Enable::Enabled,
            None => {}
        }
    }
    enable == Enable::Enabled || (enable == Enable::Auto && tty)
}

/// git's `lookup_fsmonitor_settings`: `core.fsmonitor` true (the daemon) or a hook path, or
/// when unset `GIT_TEST_FSMONITOR`.
fn fsmonitor(config: &gix::config::Snapshot<'_>) -> bool {
    match raw(config, "core.fsmonitor") {
        Some(v) => match maybe_bool(v.as_ref().map(|v| v.as_slice())) {
            Some(on) => on,
            None => v.is_some_and(|v| !v.is_empty()),
        },
        None => std::env::var_os("GIT_TEST_FSMONITOR").is_some_and(|v| !v.is_empty()),
    }
}

impl Settings {
    /// Read every setting git's status reads, failing as git fails on a bad value.
    pub(super) fn read(config: &gix::config::Snapshot<'_>, tty: bool) -> Result<Settings, u8> {
        let untracked = match raw(config, "status.showUntrackedFiles") {
            None => None,
            Some(v) => Some(
                untracked_mode(v.as_ref().map(|v| v.as_slice())).ok_or_else(|| {
                    eprintln!(
                        "error: Invalid untracked files mode '{}'",
                        v.unwrap_or_default()
                    );
                    fatal("bad config variable 'status.showuntrackedfiles'")
                })?,
            ),
        };
        let submodule_summary = match raw(config, "status.submoduleSummary") {
            None => 0,
            Some(v) => {
                let bytes = v.as_ref().map(|v| v.as_slice());
                // git_config_bool_or_int: the boolean words first, then an integer.
                let word = match bytes {
                    None => Some(true),
                    Some(b"") => Some(false),
                    Some(b) => match b.to_ascii_lowercase().as_slice() {
                        b"true" | b"yes" | b"on" => Some(true),
                        b"false" | b"no" | b"off" => Some(false),
                        _ => None,
                    },
                };
                match word {
                    Some(true) => -1,
                    Some(false) => 0,
                    None => parse_int(bytes.unwrap_or_default()).ok_or_else(|| {
                        fatal(format!(
                            "bad numeric config value '{}' for 'status.submodulesummary': invalid unit",
                            v.unwrap_or_default()
                        ))
                    })?,
                }
            }
        };
        let comment = ["core.commentString", "core.commentChar"]
            .iter()
            .find_map(|key| raw(config, key).flatten())
            .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case(b"auto"))
            .unwrap_or_else(|| "#".into());
        Ok(Settings {
            untracked,
            short: boolean(config, "status.short")?,
            branch: boolean(config, "status.branch")?,
            ahead_behind: boolean(config, "status.aheadBehind")?,
            show_stash: boolean(config, "status.showStash")?.unwrap_or(false),
            comment_prefix: boolean(config, "status.displayCommentPrefix")?.unwrap_or(false),
            comment,
            relative_paths: boolean(config, "status.relativePaths")?.unwrap_or(true),
            submodule_summary,
            renames: match renames(config, "status.renames")? {
                Some(v) => Some(v),
                None => renames(config, "diff.renames")?,
            },
            hints: advice(config, "statusHints")?,
            untracked_advice: advice(config, "statusUoption")?,
            fsmonitor: fsmonitor(config),
            columns: columns(config, tty),
        })
    }
}

/// git's `status_vprintf` with `status.displayCommentPrefix`: every line of `text` starts with
/// the comment string, followed by a space unless the line is empty or starts with a tab
/// (`strbuf_add_commented_lines` follows the same rule for the submodule summary).
pub(super) fn commented(text: &[u8], comment: &BStr) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    for line in text.lines_with_terminator() {
        out.extend_from_slice(comment);
        if !matches!(line.first(), Some(b'\n' | b'\t')) {
            out.push(b' ');
        }
        out.extend_from_slice(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_are_read_as_git_reads_them() {
        assert_eq!(maybe_bool(None), Some(true));
        assert_eq!(maybe_bool(Some(b"")), Some(false));
        assert_eq!(maybe_bool(Some(b"YES")), Some(true));
        assert_eq!(maybe_bool(Some(b"Off")), Some(false));
        assert_eq!(maybe_bool(Some(b"2")), Some(true));
        assert_eq!(maybe_bool(Some(b"0x0")), Some(false));
        assert_eq!(maybe_bool(Some(b"1k")), Some(true));
        assert_eq!(maybe_bool(Some(b"normal")), None);
    }

    #[test]
    fn untracked_modes_take_booleans_as_no_and_normal() {
        assert_eq!(untracked_mode(Some(b"true")), Some(Untracked::Normal));
        assert_eq!(untracked_mode(Some(b"1")), Some(Untracked::Normal));
        assert_eq!(untracked_mode(Some(b"yes")), Some(Untracked::Normal));
        assert_eq!(untracked_mode(Some(b"")), Some(Untracked::No));
        assert_eq!(untracked_mode(Some(b"0")), Some(Untracked::No));
        assert_eq!(untracked_mode(Some(b"all")), Some(Untracked::All));
        assert_eq!(untracked_mode(Some(b"ALL")), None);
        assert_eq!(untracked_mode(Some(b"CORRUPT")), None);
    }

    #[test]
    fn comment_prefix_follows_status_vprintf() {
        let text = b"On branch main\n\n\tnew file:   a\n  (use x)\n";
        assert_eq!(
            commented(text, b";;".as_bstr()),
            b";; On branch main\n;;\n;;\tnew file:   a\n;;   (use x)\n".to_vec()
        );
    }
}
