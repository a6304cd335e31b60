//! Which environment the host's program runs with: the client's for what git-par controls, the
//! server's for the rest.
//!
//! A Windows environment under Wine holds variables that would mislead Unix programs: `PATH`
//! (Windows folders, `;`-separated), `windir`, `SystemRoot`, `COMSPEC`, `PATHEXT`, `TEMP` as
//! a `C:\` path, and whatever else Wine sets. So the rule is a short list of what the client
//! decides, and the server's own environment for everything else:
//!
//! - from the client: every name starting with `GIT_`, and `HOME`, `LANG`, `LC_*`, `TZ`,
//!   `EDITOR`, `PAGER` (names compared as written; Windows keeps them as set). These are what
//!   git-par and its tests set to steer git. For these names the client is the authority: one
//!   the client does not have is removed from the child's environment even when the server has
//!   it, so `env_remove("GIT_DIR")` in git-par.exe reaches the host's git.
//! - from the server: everything else (`PATH` above all, so `git` and `sh` are the host's).
//!
//! One exception: Windows (and Wine) usually has no `HOME`. When the client has none, the child
//! gets the one Git for Windows would make for itself (`setup_windows_environment` in its
//! compat/mingw.c): `%HOMEDRIVE%%HOMEPATH%` when that is a directory, else `%USERPROFILE%`. So
//! the host's git reads the same global config as git-par.exe, not the server's `~/.gitconfig`.
//!
//! Values from the client are translated as [`Drives::env_value`] says.

use crate::translate::Drives;

/// Returns true if and only if the variable `name` is the client's to decide (see the module's
/// documentation for the list and why).
pub fn from_client(name: &[u8]) -> bool {
    name.starts_with(b"GIT_")
        || name.starts_with(b"LC_")
        || matches!(name, b"HOME" | b"LANG" | b"TZ" | b"EDITOR" | b"PAGER")
}

/// The child's whole environment: the server's variables that are not the client's to decide,
/// then the client's that are, their values translated by `drives`.
pub fn child_env(
    server: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>,
    client: &[(Vec<u8>, Vec<u8>)],
    drives: &Drives,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut env: Vec<_> = server
        .into_iter()
        .filter(|(name, _)| !from_client(name))
        .collect();
    env.extend(
        client
            .iter()
            .filter(|(name, _)| from_client(name))
            .map(|(name, value)| (name.clone(), drives.env_value(value).into_owned())),
    );
    if !client.iter().any(|(name, _)| name == b"HOME") {
        env.extend(windows_home(client, drives).map(|home| (b"HOME".to_vec(), home)));
    }
    env
}

/// The `HOME` Git for Windows sets when there is none, as a host path (see the module's
/// documentation).
fn windows_home(client: &[(Vec<u8>, Vec<u8>)], drives: &Drives) -> Option<Vec<u8>> {
    let get = |wanted: &[u8]| {
        let found = client.iter().find(|(name, _)| name == wanted);
        found.map(|(_, value)| value.as_slice())
    };
    let home_path = get(b"HOMEDRIVE")
        .zip(get(b"HOMEPATH"))
        .and_then(|(drive, path)| {
            let home = drives.path(&[drive, path].concat())?;
            is_dir(&home).then_some(home)
        });
    home_path.or_else(|| drives.path(get(b"USERPROFILE")?))
}

#[cfg(unix)]
fn is_dir(path: &[u8]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    std::path::Path::new(std::ffi::OsStr::from_bytes(path)).is_dir()
}

#[cfg(not(unix))]
fn is_dir(_: &[u8]) -> bool {
    false
}

/// The server's own environment as bytes, the input [`child_env`] takes.
#[cfg(unix)]
pub fn server_env() -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> {
    use std::os::unix::ffi::OsStringExt;
    std::env::vars_os().map(|(name, value)| (name.into_vec(), value.into_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        list.iter()
            .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn the_client_decides_only_what_git_par_steers() {
        for name in [
            "GIT_DIR",
            "GIT_EDITOR",
            "HOME",
            "LANG",
            "LC_ALL",
            "TZ",
            "EDITOR",
            "PAGER",
        ] {
            assert!(from_client(name.as_bytes()), "{name}");
        }
        for name in [
            "PATH",
            "Path",
            "windir",
            "SystemRoot",
            "COMSPEC",
            "PATHEXT",
            "TEMP",
        ] {
            assert!(!from_client(name.as_bytes()), "{name}");
        }
        for name in [
            "ProgramFiles(x86)",
            "WINEDEBUG",
            "git_dir",
            "GIT",
            "HOMEDRIVE",
            "LANGUAGE",
        ] {
            assert!(!from_client(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn the_child_gets_the_servers_path_and_the_clients_git_variables() {
        let server = pairs(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/root"),
            ("GIT_DIR", "/server/.git"),
            ("USER", "root"),
        ]);
        let client = pairs(&[
            ("PATH", r"C:\windows\system32"),
            ("windir", r"C:\windows"),
            ("HOME", r"Z:\tmp\home"),
            ("GIT_INDEX_FILE", r"Z:\tmp\repo\.git\index2"),
            (
                "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                r"Z:\a\objects;Z:\b\objects",
            ),
            ("GIT_CONFIG_PARAMETERS", r"'core.x'='C:\kept'"),
        ]);
        let mut env = child_env(server, &client, &Drives::wine(None));
        env.sort();
        let want = pairs(&[
            ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "/a/objects:/b/objects"),
            ("GIT_CONFIG_PARAMETERS", r"'core.x'='C:\kept'"),
            ("GIT_INDEX_FILE", "/tmp/repo/.git/index2"),
            ("HOME", "/tmp/home"),
            ("PATH", "/usr/bin"),
            ("USER", "root"),
        ]);
        // The server's GIT_DIR is gone: the client did not set one.
        assert_eq!(env, want);
    }

    #[test]
    fn without_home_the_child_gets_git_for_windows_home() {
        let home = |client: &[(&str, &str)]| {
            let env = child_env(
                pairs(&[("HOME", "/root")]),
                &pairs(client),
                &Drives::wine(None),
            );
            let homes: Vec<_> = env.iter().filter(|(name, _)| name == b"HOME").collect();
            assert!(homes.len() <= 1, "one HOME at most: {homes:?}");
            homes
                .first()
                .map(|(_, value)| String::from_utf8(value.clone()).unwrap())
        };
        let profile = ("USERPROFILE", r"Z:\users\me");
        assert_eq!(home(&[("HOME", r"Z:\h")]).as_deref(), Some("/h"));
        let tmp = [("HOMEDRIVE", "Z:"), ("HOMEPATH", r"\tmp"), profile];
        assert_eq!(home(&tmp).as_deref(), Some("/tmp"));
        let missing = [
            ("HOMEDRIVE", "Z:"),
            ("HOMEPATH", r"\no\such\dir\winbridge"),
            profile,
        ];
        assert_eq!(home(&missing).as_deref(), Some("/users/me"));
        assert_eq!(home(&[profile]).as_deref(), Some("/users/me"));
        assert_eq!(home(&[]), None);
    }
}
