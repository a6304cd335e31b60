//! The one part of git's trace2 that git-par speaks: the statistics of the untracked walk
//! (`read_directory`'s `data` events), in the `GIT_TRACE2_PERF` format, so that what measures
//! git's untracked cache (git's own t7063, a user's `GIT_TRACE2_PERF=/tmp/perf git status`) sees
//! what git-par's walk did with it. Nothing else is traced: the other events are git's own, and
//! [`enabled`] says when a command had better let a git child of its own write them.

use std::io::Write;

/// Returns true if and only if git would write trace2 events: `GIT_TRACE2`, `GIT_TRACE2_PERF` or
/// `GIT_TRACE2_EVENT` set to a target (not empty, `0` or `false`), or, where the variable is not
/// set, the `trace2.normalTarget`, `trace2.perfTarget` or `trace2.eventTarget` setting of
/// `config` (git's system and global configuration, where telemetry sets them).
pub(crate) fn enabled(config: &gix::config::Snapshot<'_>) -> bool {
    let on = |v: &[u8]| !v.is_empty() && v != b"0" && !v.eq_ignore_ascii_case(b"false");
    [
        ("GIT_TRACE2", "trace2.normalTarget"),
        ("GIT_TRACE2_PERF", "trace2.perfTarget"),
        ("GIT_TRACE2_EVENT", "trace2.eventTarget"),
    ]
    .iter()
    .any(|(var, key)| match std::env::var_os(var) {
        Some(v) => on(v.as_encoded_bytes()),
        None => config.string(*key).is_some_and(|v| on(&v)),
    })
}

/// Append the `read_directory` data events of a walk from the top of the work tree to the
/// `GIT_TRACE2_PERF` target, if one is set: its path, and with an untracked cache
/// (`counters`), the directories and paths visited and the cache's four counters.
pub(crate) fn read_directory(counters: Option<gitpar::untracked_cache::Counters>) {
    let Some(target) = std::env::var_os("GIT_TRACE2_PERF") else {
        return;
    };
    let mut events: Vec<(u32, String)> = vec![(3057, "path:".into())];
    if let Some(c) = counters {
        events.extend([
            (
                3065,
                format!("directories-visited:{}", c.visited_directories),
            ),
            (3067, format!("paths-visited:{}", c.visited_paths)),
            (3072, format!("node-creation:{}", c.dir_created)),
            (
                3074,
                format!("gitignore-invalidation:{}", c.gitignore_invalidated),
            ),
            (
                3077,
                format!("directory-invalidation:{}", c.dir_invalidated),
            ),
            (3080, format!("opendir:{}", c.dir_opened)),
        ]);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() % 86_400;
    let clock = format!(
        "{:02}:{:02}:{:02}.{:06}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        now.subsec_micros()
    );
    let mut text = String::new();
    for (line, message) in events {
        text.push_str(&format!(
            "{clock} {:<28} | d0 | {:<24} | {:<12} | r1  | {:9.6} | {:9.6} | {:<12} | ....{message}\n",
            format!("dir.c:{line}"),
            "main",
            "data",
            0.0,
            0.0,
            "read_directo",
        ));
    }
    let target = target.to_string_lossy();
    match target.as_ref() {
        "1" | "2" | "true" => {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        path if path.starts_with('/') => {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path);
            if let Ok(mut file) = file {
                let _ = file.write_all(text.as_bytes());
            }
        }
        _ => {}
    }
}
