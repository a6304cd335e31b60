//! git's fsmonitor hook (`core.fsmonitor` set to a program): asked which paths may have changed
//! since the token the index's `FSMN` extension records, it spares `status` and
//! `update-index --refresh` the `lstat` of every other tracked file, as git's `fsmonitor.c` and
//! `refresh_index` do.
//!
//! The index file carries the token and a bitmap of the entries *not* known valid; every other
//! entry (gitlinks excepted) is "fsmonitor-valid": unchanged since it was last found clean. When
//! the index is read ([`Monitor::start`], git's `tweak_fsmonitor`), the hook is run with the
//! token (protocol version 2, else version 1 with a time in nanoseconds, or as
//! `core.fsmonitorHookVersion` says) and every path it names loses its validity, a directory
//! (`dir/`, or a name no entry has) all the entries below it; an answer of `/`, or a failed
//! hook, invalidates everything. The refresh skips the valid entries, and marks valid the ones it
//! finds clean ([`Monitor::checked`]). The index written back carries the new token and bitmap
//! ([`Monitor::extension`]). Without an extension yet (git's `add_fsmonitor`) everything is
//! invalid, the token is the time now, and the index is written so that the next command can
//! trust it.
//!
//! What stays git's (the callers hand the command to it): the built-in daemon
//! (`core.fsmonitor=true`), an untracked cache (which git invalidates from the same answer), a
//! split or sparse index (whose bitmap positions are not those of the expanded entries), and
//! `core.ignoreCase` (git then looks the reported paths up case-insensitively).

use std::io::Read;
use std::path::Path;

use bstr::{BStr, BString, ByteSlice};
use gix::index::entry::Mode;
use gix::index::State;

/// The extension's signature.
const SIGNATURE: &[u8; 4] = b"FSMN";

/// Above this many reported paths, the index is written even if nothing else changed, so that
/// the next command starts from a newer token (git's `fsmonitor_force_update_threshold`).
const FORCE_UPDATE_THRESHOLD: usize = 100;

/// What `core.fsmonitor` (or, unset, `GIT_TEST_FSMONITOR`) asks for: git's
/// `lookup_fsmonitor_settings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setting {
    /// No fsmonitor: an `FSMN` extension found is dropped at the next write.
    Disabled,
    /// The program to run (git's `fsm_settings__get_hook_path`, run through the shell).
    Hook(BString),
    /// `core.fsmonitor=true`: git's built-in daemon, which git-par does not speak to.
    Daemon,
}

impl Setting {
    /// The setting of `repo`.
    pub(crate) fn of(repo: &gix::Repository) -> Setting {
        let config = repo.config_snapshot();
        let value = match config.string("core.fsmonitor") {
            Some(v) => match config.boolean("core.fsmonitor") {
                Some(true) => return Setting::Daemon,
                Some(false) => return Setting::Disabled,
                None => Some(expand_home(BString::from(v.to_vec()))),
            },
            None => std::env::var_os("GIT_TEST_FSMONITOR")
                .map(|v| BString::from(v.into_encoded_bytes())),
        };
        match value {
            Some(v) if !v.is_empty() => Setting::Hook(v),
            _ => Setting::Disabled,
        }
    }
}

/// git's `repo_config_get_pathname`: a leading `~/` is the home directory.
fn expand_home(v: BString) -> BString {
    match (v.strip_prefix(b"~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => {
            let mut out = BString::from(home.into_encoded_bytes());
            out.push(b'/');
            out.extend_from_slice(rest);
            out
        }
        _ => v,
    }
}

/// The `FSMN` extension of the index file `bytes`, which gix decoded into `index`: the token
/// and the positions of the entries not known valid. `None` when there is none (or it cannot
/// be read: git then fails to read the index; here everything is taken as invalid).
pub(crate) fn read_extension(bytes: &[u8], index: &State) -> Option<(BString, Vec<usize>)> {
    index.fs_monitor()?;
    let end = bytes
        .len()
        .checked_sub(index.object_hash().len_in_bytes())?;
    let start = extensions_start(bytes, index)?;
    let mut iter = gix::index::extension::Iter::new(bytes.get(start..end)?);
    let data = iter.find(|(sig, _)| sig == SIGNATURE).map(|(_, d)| d)?;
    let (version, rest) = data.split_first_chunk::<4>()?;
    let (token, rest) = match u32::from_be_bytes(*version) {
        1 => {
            let (nanos, rest) = rest.split_first_chunk::<8>()?;
            (BString::from(u64::from_be_bytes(*nanos).to_string()), rest)
        }
        2 => {
            let nul = rest.find_byte(0)?;
            (BString::from(&rest[..nul]), &rest[nul + 1..])
        }
        _ => return None,
    };
    let (size, rest) = rest.split_first_chunk::<4>()?;
    let ewah = rest.get(..u32::from_be_bytes(*size) as usize)?;
    let (bitmap, _) = gix_bitmap::ewah::decode(ewah).ok()?;
    let mut dirty = Vec::new();
    bitmap.for_each_set_bit(|i| {
        dirty.push(i);
        Some(())
    })?;
    Some((token, dirty))
}

/// Where the extensions of the index file `bytes` start: after the header and the entries,
/// whose lengths follow from their flags and paths as gix decoded them (`index`): padded to 8
/// bytes in versions 2 and 3, prefix-compressed in version 4. Checked: from there to the
/// checksum must be a whole sequence of extensions.
fn extensions_start(bytes: &[u8], index: &State) -> Option<usize> {
    let version = u32::from_be_bytes(*bytes.get(4..8)?.first_chunk::<4>()?);
    let hash = index.object_hash().len_in_bytes();
    let mut at = 12;
    let mut previous: &[u8] = b"";
    let mut varint = Vec::with_capacity(10);
    for entry in index.entries() {
        at += match version {
            2 | 3 => crate::index::format::entry_size(entry, index),
            4 => {
                // The padded version-2 size less its path and padding, plus git's
                // `varint(bytes dropped) + suffix + NUL` (as `record` encodes it).
                let path: &[u8] = entry.path(index);
                let extended = entry.flags.contains(gix::index::entry::Flags::EXTENDED);
                let fixed = 40 + hash + 2 + if extended { 2 } else { 0 };
                let common = previous
                    .iter()
                    .zip(path)
                    .take_while(|(a, b)| a == b)
                    .count();
                varint.clear();
                crate::index::format::encode_varint((previous.len() - common) as u64, &mut varint);
                previous = path;
                fixed + varint.len() + (path.len() - common) + 1
            }
            _ => return None,
        };
    }
    let end = bytes.len().checked_sub(hash)?;
    let ext = bytes.get(at..end)?;
    let mut iter = gix::index::extension::Iter::new(ext);
    iter.by_ref().for_each(drop);
    (iter.consumed == ext.len()).then_some(at)
}

/// The fsmonitor's view of an index being refreshed.
pub(crate) struct Monitor {
    /// Per entry: fsmonitor-valid (git's `CE_FSMONITOR_VALID`).
    valid: Vec<bool>,
    /// The token to write.
    token: BString,
    /// Something the index file records changed (git's `FSMONITOR_CHANGED`).
    pub(crate) changed: bool,
    /// The paths the hook reported, as it reported them (`dir/` for a directory), when it
    /// answered with a list; `None` after a trivial answer or a failure (nothing is trusted).
    /// The untracked cache is invalidated from them, and trusted without `lstat` only then.
    pub(crate) reported: Option<Vec<BString>>,
    /// The index had no fsmonitor extension: git's `add_fsmonitor` ran.
    pub(crate) added: bool,
}

impl Monitor {
    /// git's `tweak_fsmonitor` for `index` as read, whose file had `extension`
    /// ([`read_extension`]): the hook at `hook` run from the work tree `worktree`.
    pub(crate) fn start(
        repo: &gix::Repository,
        worktree: &Path,
        hook: &BStr,
        index: &State,
        extension: Option<(BString, Vec<usize>)>,
    ) -> Monitor {
        let n = index.entries().len();
        let mut monitor = Monitor {
            valid: vec![false; n],
            token: BString::default(),
            changed: false,
            reported: None,
            added: false,
        };
        let last = match extension {
            Some((token, dirty)) => {
                for (valid, entry) in monitor.valid.iter_mut().zip(index.entries()) {
                    *valid = entry.mode != Mode::COMMIT;
                }
                for i in dirty {
                    match monitor.valid.get_mut(i) {
                        Some(v) => *v = false,
                        // More bits than entries (git: a BUG): nothing is trusted.
                        None => monitor.valid.iter_mut().for_each(|v| *v = false),
                    }
                }
                token
            }
            None => {
                // git's `add_fsmonitor`: the token is the time now, everything to be checked,
                // and the index to be written with the extension.
                monitor.changed = true;
                monitor.added = true;
                BString::from(nanotime().to_string())
            }
        };
        monitor.refresh(repo, worktree, hook, index, last.as_bstr());
        monitor
    }

    /// git's `refresh_fsmonitor`: ask the hook what changed since `last` and invalidate it.
    fn refresh(
        &mut self,
        repo: &gix::Repository,
        worktree: &Path,
        hook: &BStr,
        index: &State,
        last: &BStr,
    ) {
        let config = repo.config_snapshot();
        let mut version = match config.integer("core.fsmonitorHookVersion") {
            None => None,
            Some(v @ (1 | 2)) => Some(v),
            Some(v) => {
                eprintln!(
                    "warning: Invalid hook version '{v}' in core.fsmonitorhookversion. Must be 1 or 2."
                );
                None
            }
        };
        // Taken before the hook runs, so that what changes while it runs is asked again.
        let now = nanotime();
        let mut token = BString::default();
        if version == Some(1) {
            token = BString::from(now.to_string());
        }
        let mut answer: Option<(Vec<u8>, usize)> = None;
        if version.is_none() || version == Some(2) {
            match query(worktree, hook, 2, last) {
                Some(out) => {
                    version.get_or_insert(2);
                    let nul = out.find_byte(0).unwrap_or(out.len());
                    token = BString::from(&out[..nul]);
                    if token.is_empty() {
                        eprintln!("warning: Empty last update token.");
                    } else {
                        answer = Some((out, nul + 1));
                    }
                }
                None if version.is_none() => {
                    version = Some(1);
                    if token.is_empty() {
                        token = BString::from(now.to_string());
                    }
                }
                None => {}
            }
        }
        if version == Some(1) {
            answer = query(worktree, hook, 1, last).map(|out| (out, 0));
        }
        let paths = answer.and_then(|(out, from)| {
            // A trivial answer: the hook knows nothing, everything is to be checked.
            (out.get(from) != Some(&b'/')).then(|| out.get(from..).unwrap_or_default().to_vec())
        });
        match paths {
            Some(paths) => {
                let mut count = 0;
                let mut reported = Vec::new();
                for path in paths.split(|&b| b == 0) {
                    if path.is_empty() {
                        continue;
                    }
                    self.invalidate(index, path.as_bstr());
                    reported.push(path.into());
                    count += 1;
                }
                self.reported = Some(reported);
                if count > FORCE_UPDATE_THRESHOLD {
                    self.changed = true;
                }
            }
            None => {
                self.reported = None;
                if self.valid.iter().any(|&v| v) {
                    self.changed = true;
                }
                self.valid.iter_mut().for_each(|v| *v = false);
            }
        }
        self.token = token;
    }

    /// git's `fsmonitor_refresh_callback`: the entry `path` names, else (or for `dir/`) every
    /// entry below it, is no longer valid.
    fn invalidate(&mut self, index: &State, path: &BStr) {
        let (dir, exact) = match path.strip_suffix(b"/") {
            Some(_) => (path.to_owned(), false),
            None => {
                let mut dir = path.to_owned();
                dir.push(b'/');
                (dir, true)
            }
        };
        if exact {
            if let Some(i) =
                index.entry_index_by_path_and_stage(path, gix::index::entry::Stage::Unconflicted)
            {
                self.valid[i] = false;
                return;
            }
        }
        if let Some(range) = index.prefixed_entries_range(dir.as_bstr()) {
            for v in &mut self.valid[range] {
                *v = false;
            }
        }
    }

    /// Whether the entry at `i` is fsmonitor-valid: unchanged, no `lstat` needed.
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        self.valid.get(i).copied().unwrap_or(false)
    }

    /// The refresh found the entry at `i` clean (`true`) or changed: git's
    /// `mark_fsmonitor_valid` (gitlinks are never marked) and `mark_fsmonitor_invalid`.
    pub(crate) fn checked(&mut self, i: usize, clean: bool, gitlink: bool) {
        let valid = clean && !gitlink;
        if let Some(v) = self.valid.get_mut(i) {
            if valid && !*v {
                self.changed = true;
            }
            *v = valid;
        }
    }

    /// The `FSMN` extension to write for the entries as they are (git's
    /// `write_fsmonitor_extension`, version 2): the token, then the bitmap of the entries not
    /// valid, as long as the last of them.
    pub(crate) fn extension(&self) -> Vec<u8> {
        let last = self.valid.iter().rposition(|&v| !v).map_or(0, |i| i + 1);
        let bits: Vec<bool> = self.valid[..last].iter().map(|&v| !v).collect();
        let mut ewah = Vec::new();
        gix_bitmap::ewah::Vec::from_bits(&bits)
            .expect("an index has fewer than 2^32 entries")
            .write_to(&mut ewah)
            .expect("writing to memory");
        let mut data = Vec::with_capacity(self.token.len() + ewah.len() + 9);
        data.extend_from_slice(&2u32.to_be_bytes());
        data.extend_from_slice(&self.token);
        data.push(0);
        data.extend_from_slice(&(ewah.len() as u32).to_be_bytes());
        data.extend_from_slice(&ewah);
        data
    }
}

/// git's `getnanotime`: nanoseconds since the epoch.
fn nanotime() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// git's `query_fsmonitor_hook`: `HOOK VERSION TOKEN` through the shell from the work tree,
/// its standard output captured; `None` if it cannot run or exits with a failure.
fn query(worktree: &Path, hook: &BStr, version: u8, last: &BStr) -> Option<Vec<u8>> {
    let mut cmd = shell_command(hook);
    cmd.arg(version.to_string())
        .arg(&*last.to_os_str_lossy())
        .current_dir(worktree)
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().ok()?;
    let mut out = Vec::with_capacity(1024);
    let read = child.stdout.take()?.read_to_end(&mut out);
    let status = child.wait().ok()?;
    (read.is_ok() && status.success()).then_some(out)
}

/// git's `prepare_shell_cmd` for a command with arguments: run directly unless it has shell
/// metacharacters, else `sh -c 'CMD "$@"' CMD ARGS...`.
fn shell_command(program: &BStr) -> std::process::Command {
    const META: &[u8] = b"|&;<>()$`\\\"' \t\n*?[#~=%";
    let program = program.to_os_str_lossy().into_owned();
    if program.as_encoded_bytes().iter().any(|b| META.contains(b)) {
        let mut script = program.clone();
        script.push(" \"$@\"");
        let mut cmd = crate::sys::shell();
        cmd.arg("-c").arg(script).arg(program);
        cmd
    } else {
        std::process::Command::new(program)
    }
}

/// The fsmonitor extension of an index a command is about to replace (a switch, a reset, a path
/// restore), to be carried into the new index as git's `unpack_trees` carries it: the same
/// token, and every entry that comes through unchanged keeps its validity ([`Previous::carried`]).
#[derive(Debug, Clone)]
pub struct Previous {
    token: BString,
    dirty: Vec<usize>,
}

impl Previous {
    /// The extension of the index file at `index_path`, decoded into `index`, if it has one and
    /// an fsmonitor is configured (git drops it otherwise: `remove_fsmonitor`). None either for
    /// a split or sparse index (their bitmap positions are not those of the entries as read
    /// here) or when the file cannot be read back: the new index then has no extension, and git
    /// adds one at its next command.
    pub(crate) fn of(repo: &gix::Repository, index_path: &Path, index: &State) -> Option<Previous> {
        index.fs_monitor()?;
        if Setting::of(repo) == Setting::Disabled
            || index.link().is_some()
            || index.entries().iter().any(|e| e.mode == Mode::DIR)
        {
            return None;
        }
        // The index is held under `index.lock` by the caller: the file read is the one decoded.
        let bytes = std::fs::read(index_path).ok()?;
        let (token, dirty) = read_extension(&bytes, index)?;
        Some(Previous { token, dirty })
    }

    /// The extension for `state`, the new entries of an index whose previous entries were
    /// `previous`: an entry is valid when the same path and stage was valid before with the same
    /// object, mode, stat data and skip-worktree bit (untouched by the command); anything
    /// written, added or changed is not (git's `mark_fsmonitor_invalid` after a checkout writes
    /// it). Entries marked for removal are not written and have no bit.
    pub(crate) fn carried(&self, previous: &State, state: &State) -> Vec<u8> {
        use gix::index::entry::Flags;
        let mut was_valid = vec![true; previous.entries().len()];
        for &i in &self.dirty {
            if let Some(v) = was_valid.get_mut(i) {
                *v = false;
            }
        }
        let old = previous.entries();
        let mut j = 0;
        let mut valid = Vec::with_capacity(state.entries().len());
        for entry in state.entries() {
            if entry.flags.contains(Flags::REMOVE) {
                continue;
            }
            let key = (entry.path(state), entry.stage_raw());
            while j < old.len() && (old[j].path(previous), old[j].stage_raw()) < key {
                j += 1;
            }
            let same = old.get(j).is_some_and(|o| {
                (o.path(previous), o.stage_raw()) == key
                    && was_valid[j]
                    && o.mode != Mode::COMMIT
                    && o.id == entry.id
                    && o.mode == entry.mode
                    && o.stat == entry.stat
                    && o.flags.contains(Flags::SKIP_WORKTREE)
                        == entry.flags.contains(Flags::SKIP_WORKTREE)
            });
            valid.push(same);
        }
        Monitor {
            valid,
            token: self.token.clone(),
            changed: false,
            reported: None,
            added: false,
        }
        .extension()
    }
}
