//! Windows absolute paths in a request become the host paths Wine maps them to, so that the
//! host's git finds the files git-par.exe named.
//!
//! Only a value that starts with a drive letter, a colon and a slash or backslash (`Z:\work`,
//! `c:/users`) is a path here; its backslashes become slashes. Everything else is left alone:
//! relative paths mean the same on both sides once the working directory is translated, and a
//! guess at paths inside other text (`--git-dir=Z:\x`, a URL) would turn arguments that
//! merely look like paths into different ones. Verbatim paths (`\\?\Z:\x`) are not translated
//! either: Git for Windows does not take them, so git-par must not pass them to git.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where each drive letter leads on the host: the table one Wine prefix defines.
#[derive(Debug, Clone, Default)]
pub struct Drives {
    /// Host directory for `A:` to `Z:`, without its trailing slash (so `Z:`, the root, is empty).
    roots: [Option<Vec<u8>>; 26],
}

impl Drives {
    /// The drives of the Wine prefix `prefix` (Wine's `WINEPREFIX`): `Z:` is `/` and `C:` is
    /// `PREFIX/drive_c`, as Wine sets them up; any other letter is what the prefix's
    /// `dosdevices/x:` link points at, read now. Without a prefix only `Z:` is known.
    pub fn wine(prefix: Option<&Path>) -> Drives {
        let mut drives = Drives::default();
        drives.set(b'z', b"/");
        let Some(prefix) = prefix else {
            return drives;
        };
        let dosdevices = prefix.join("dosdevices");
        for letter in b'a'..=b'y' {
            let link = dosdevices.join(format!("{}:", letter as char));
            if let Ok(target) = std::fs::read_link(&link) {
                // A relative target (`../drive_c`) is relative to the link's folder.
                drives.set(letter, path_bytes(&dosdevices.join(target)));
            }
        }
        drives.set(b'c', path_bytes(&prefix.join("drive_c")));
        drives
    }

    /// Maps drive `letter` (either case) to the host directory `root`.
    pub fn set(&mut self, letter: u8, root: impl AsRef<[u8]>) {
        let mut root = root.as_ref().to_vec();
        while root.last() == Some(&b'/') {
            root.pop();
        }
        self.roots[usize::from(letter.to_ascii_lowercase() - b'a')] = Some(root);
    }

    /// The host path for `value` when it is a Windows absolute path on a known drive, else
    /// `None`.
    pub fn path(&self, value: &[u8]) -> Option<Vec<u8>> {
        let [letter, b':', b'/' | b'\\', rest @ ..] = value else {
            return None;
        };
        if !letter.is_ascii_alphabetic() {
            return None;
        }
        let root = self.roots[usize::from(letter.to_ascii_lowercase() - b'a')].as_ref()?;
        let mut out = Vec::with_capacity(root.len() + 1 + rest.len());
        out.extend_from_slice(root);
        out.push(b'/');
        out.extend(rest.iter().map(|&b| if b == b'\\' { b'/' } else { b }));
        Some(out)
    }

    /// An argument or the working directory: translated when it is a path, else as it is.
    pub fn arg<'a>(&self, value: &'a [u8]) -> Cow<'a, [u8]> {
        match self.path(value) {
            Some(path) => Cow::Owned(path),
            None => Cow::Borrowed(value),
        }
    }

    /// An environment value: a path, or a `;`-separated list of paths (empty items, as a
    /// trailing `;` makes, are dropped) that becomes a `:`-separated one, as
    /// `GIT_ALTERNATE_OBJECT_DIRECTORIES` is on each system; anything else as it is, including
    /// a list holding one item that is not a path.
    pub fn env_value<'a>(&self, value: &'a [u8]) -> Cow<'a, [u8]> {
        if let Some(path) = self.path(value) {
            if !value.contains(&b';') {
                return Cow::Owned(path);
            }
        }
        let items = value.split(|&b| b == b';').filter(|item| !item.is_empty());
        let paths: Option<Vec<Vec<u8>>> = items.map(|item| self.path(item)).collect();
        match paths {
            Some(paths) if !paths.is_empty() => Cow::Owned(paths.join(&b':')),
            _ => Cow::Borrowed(value),
        }
    }
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

/// The prefix the server maps `C:` and the other drives with: the one given, else the server's
/// own `WINEPREFIX`, else none (only `Z:` is then known).
pub fn prefix_or_env(given: Option<PathBuf>) -> Option<PathBuf> {
    given.or_else(|| std::env::var_os("WINEPREFIX").map(PathBuf::from))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn drives() -> Drives {
        let mut drives = Drives::wine(None);
        drives.set(b'C', "/pfx/drive_c/");
        drives
    }

    fn arg(value: &str) -> String {
        String::from_utf8(drives().arg(value.as_bytes()).into_owned()).unwrap()
    }

    fn env(value: &str) -> String {
        String::from_utf8(drives().env_value(value.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn drive_paths_become_host_paths() {
        assert_eq!(arg(r"Z:\work\repo"), "/work/repo");
        assert_eq!(arg("z:/work/repo"), "/work/repo");
        assert_eq!(arg(r"Z:\work/mixed\sep"), "/work/mixed/sep");
        assert_eq!(arg(r"Z:\"), "/");
        assert_eq!(
            arg(r"C:\users\root\Temp\x"),
            "/pfx/drive_c/users/root/Temp/x"
        );
        assert_eq!(arg("c:/"), "/pfx/drive_c/");
    }

    #[test]
    fn anything_else_is_left_alone() {
        for value in [
            "",
            "Z:",
            "Z:relative",
            r"relative\path",
            r"\rooted\without\drive",
            "/already/unix",
            r"--git-dir=Z:\x",
            r"\\?\Z:\verbatim",
            r"\\server\share",
            "1:/not/a/drive",
            "HEAD:path",
            "https://example.com/x",
            r"D:\unknown\drive",
        ] {
            assert_eq!(arg(value), value);
            assert_eq!(env(value), value);
        }
    }

    #[test]
    fn environment_lists_become_colon_separated() {
        assert_eq!(env(r"Z:\a\objects;C:\b"), "/a/objects:/pfx/drive_c/b");
        assert_eq!(env(r"Z:\a;"), "/a");
        assert_eq!(env(r"Z:\a"), "/a");
        // One item that is not a path leaves the whole value as it is.
        assert_eq!(env(r"Z:\a;relative"), r"Z:\a;relative");
        assert_eq!(env(r"Z:\a;D:\unknown"), r"Z:\a;D:\unknown");
        assert_eq!(env(";"), ";");
        // Arguments are never lists.
        assert_eq!(arg(r"Z:\a;Z:\b"), "/a;Z:/b");
    }

    #[test]
    fn a_prefix_maps_c_and_its_dosdevices() {
        let dir = std::env::temp_dir().join(format!("winbridge-drives-{}", std::process::id()));
        let dosdevices = dir.join("dosdevices");
        std::fs::create_dir_all(&dosdevices).unwrap();
        std::os::unix::fs::symlink("../drive_c", dosdevices.join("c:")).unwrap();
        std::os::unix::fs::symlink("/mnt/data/", dosdevices.join("d:")).unwrap();
        std::os::unix::fs::symlink("../elsewhere", dosdevices.join("e:")).unwrap();
        let drives = Drives::wine(Some(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        let path = |value: &str| String::from_utf8(drives.path(value.as_bytes()).unwrap());
        let dir = dir.to_str().unwrap();
        assert_eq!(path(r"C:\x").unwrap(), format!("{dir}/drive_c/x"));
        assert_eq!(path(r"d:\x\y").unwrap(), "/mnt/data/x/y");
        assert_eq!(
            path(r"E:\x").unwrap(),
            format!("{dir}/dosdevices/../elsewhere/x")
        );
        assert_eq!(path(r"Z:\x").unwrap(), "/x");
        assert_eq!(drives.path(br"F:\x"), None);
    }
}
