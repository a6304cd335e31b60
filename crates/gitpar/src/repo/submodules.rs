//! The submodules a work tree's `.gitmodules` names, and which of them are active: the
//! configuration that status, the updates and their recursion read alike.

use std::collections::HashMap;
use std::io::Read;

use bstr::{BStr, BString, ByteSlice};

use crate::fs::Root;

/// The submodules `.gitmodules` names, by path: the superproject's `submodule_from_path`.
#[derive(Debug, Default)]
pub struct Modules {
    names: HashMap<BString, String>,
    /// `submodule.<name>.ignore` by name: the first valid value, as git's submodule config.
    ignores: HashMap<String, BString>,
}

impl Modules {
    /// Read `.gitmodules` from the work tree (through the path-safe layer; a symlinked
    /// `.gitmodules` is not followed, as git refuses one). Missing or unreadable: no submodules.
    pub fn load(root: &Root) -> Modules {
        let mut bytes = Vec::new();
        let read = root
            .dirs()
            .open_read(b".gitmodules".as_bstr())
            .and_then(|mut f| f.read_to_end(&mut bytes));
        if read.is_err() {
            return Modules::default();
        }
        let Ok(file) = gix::config::File::from_bytes_no_includes(
            &bytes,
            gix::config::file::Metadata::from(gix::config::Source::Worktree),
            Default::default(),
        ) else {
            return Modules::default();
        };
        let mut names = HashMap::new();
        let mut ignores = HashMap::new();
        for section in file.sections_by_name("submodule").into_iter().flatten() {
            let Some(name) = section.header().subsection_name() else {
                continue;
            };
            if let Some(path) = section.value("path") {
                names.entry(path).or_insert_with(|| name.to_string());
            }
            // git warns about and skips a value other than these four.
            let valid =
                |v: &BStr| matches!(v.as_bytes(), b"none" | b"untracked" | b"dirty" | b"all");
            if let Some(ignore) = section
                .values("ignore")
                .into_iter()
                .find(|v| valid(v.as_bstr()))
            {
                ignores.entry(name.to_string()).or_insert(ignore);
            }
        }
        Modules { names, ignores }
    }

    /// The name `.gitmodules` gives the submodule at `path`, active or not (git's
    /// `submodule_from_path`).
    pub fn name(&self, path: &BStr) -> Option<&str> {
        self.names.get(path).map(String::as_str)
    }

    /// `.gitmodules`' `submodule.<name>.ignore` (`none`, `untracked`, `dirty` or `all`), which
    /// the repository's own `submodule.<name>.ignore` overrides.
    pub fn ignore(&self, name: &str) -> Option<&BStr> {
        self.ignores.get(name).map(|v| v.as_bstr())
    }

    /// The name of the submodule at `path` if it takes part in recursive updates: named in
    /// `.gitmodules` and active, git's `is_submodule_active`.
    pub fn active(&self, repo: &gix::Repository, path: &BStr) -> Option<&str> {
        let name = self.names.get(path)?;
        let config = repo.config_snapshot();
        if let Some(active) = config.boolean(format!("submodule.{name}.active").as_str()) {
            return active.then_some(name.as_str());
        }
        let specs = config
            .plumbing()
            .strings("submodule.active")
            .unwrap_or_default();
        if !specs.is_empty() {
            let matched = specs.iter().any(|spec| {
                let spec = spec.as_bstr();
                // `.` and `:/` are the whole tree (`git clone --recurse-submodules` sets `.`).
                matches!(spec.as_bytes(), b"." | b":/" | b"*")
                    || spec == path
                    || (path.starts_with(spec) && path.get(spec.len()) == Some(&b'/'))
                    || gix::glob::wildmatch(spec, path, gix::glob::wildmatch::Mode::empty())
            });
            return matched.then_some(name.as_str());
        }
        config
            .string(format!("submodule.{name}.url").as_str())
            .is_some()
            .then_some(name.as_str())
    }
}
