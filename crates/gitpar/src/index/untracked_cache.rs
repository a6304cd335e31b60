//! The untracked cache (`core.untrackedCache`, the index's `UNTR` extension), read, used and
//! written back as git's `dir.c` does for `git status`.
//!
//! The cache remembers, per directory of the work tree, its stat data, the object id of its
//! `.gitignore` and the untracked names found in it. A directory whose stat data and ignore
//! rules have not changed since is not read again: its untracked names come from the cache.
//! What the cache holds is a function of git's walk (which directories it enters, where it
//! stops at the first untracked file, in which order `readdir` met the names), so the walk here
//! is git's `read_directory_recursive` with its `treat_path`, `treat_directory`,
//! `valid_cached_dir` and `prep_exclude`, for the flags `git status` uses with a cache (no
//! ignored files, no pathspec), step for step: the cache it leaves, its statistics (git's
//! trace2 `read_directory` counters) and its list of untracked paths are git's.
//!
//! The ignore rules themselves are matched by gix (`is_excluded`); what `prep_exclude` does
//! beside matching — the `.gitignore` object ids it checks against the cache, the nodes it
//! creates, the order in which it does so — is ported here, as it decides what is invalidated.

use crate::fs::FileType;
use bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Mode, Stat};
use gix::ObjectId;

use crate::index::ignore_files::OidStat;

/// The ignore rules or the attributes the untracked walk needs could not be read; gix's
/// message.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct WalkError(Box<dyn std::error::Error + Send + Sync>);

/// git's `DIR_SHOW_OTHER_DIRECTORIES`: an untracked directory is shown as `dir/`.
pub(crate) const DIR_SHOW_OTHER_DIRECTORIES: u32 = 1 << 1;
/// git's `DIR_HIDE_EMPTY_DIRECTORIES`: a directory without untracked files is not shown.
pub(crate) const DIR_HIDE_EMPTY_DIRECTORIES: u32 = 1 << 2;

/// One directory of the cache (git's `untracked_cache_dir`).
#[derive(Debug, Clone, Default)]
struct Node {
    name: BString,
    /// Untracked names in `readdir` order (`sub/` for a directory shown whole).
    untracked: Vec<BString>,
    /// Subdirectories, sorted by name.
    dirs: Vec<usize>,
    valid: bool,
    check_only: bool,
    /// Visited by this walk (or read from the index): written back.
    recurse: bool,
    stat: Stat,
    exclude_oid: Option<ObjectId>,
}

/// What a walk did with the cache: git's trace2 `read_directory` statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// `directories-visited`.
    pub visited_directories: usize,
    /// `paths-visited`.
    pub visited_paths: usize,
    /// `node-creation`: directories added to the cache.
    pub dir_created: usize,
    /// `gitignore-invalidation`: ignore files found changed.
    pub gitignore_invalidated: usize,
    /// `directory-invalidation`: valid directories found changed.
    pub dir_invalidated: usize,
    /// `opendir`: directories read from disk.
    pub dir_opened: usize,
}

/// An untracked cache in memory (git's `struct untracked_cache`).
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    /// `Location <work tree>, system <sysname>` and a NUL, as stored.
    ident: BString,
    /// `info/exclude` when the cache was last validated: a changed id invalidates everything.
    pub info_exclude: OidStat,
    /// `core.excludesFile`, likewise.
    pub excludes_file: OidStat,
    /// The walk flags the cache was made with (`DIR_SHOW_OTHER_DIRECTORIES`, ...): a walk with
    /// other flags cannot use it.
    pub dir_flags: u32,
    exclude_per_dir: BString,
    nodes: Vec<Node>,
    root: Option<usize>,
    /// What the walks and invalidations since the cache was read did (git's statistics).
    pub counters: Counters,
    /// The fsmonitor answered with a list of paths, which invalidated what they touch: a valid
    /// directory is trusted without its `lstat` (git's `use_fsmonitor`, never written).
    use_fsmonitor: bool,
}

/// The identity git gives a cache (`get_ident_string`): `Location <work tree>, system
/// <sysname>` (`uname -s`), the work tree's real path (git's `real_pathdup`).
fn ident_string(worktree: &std::path::Path) -> BString {
    let real = crate::index::ignore_files::real_path(worktree);
    let mut ident = BString::from("Location ");
    ident.extend_from_slice(&real);
    ident.extend_from_slice(b", system ");
    ident.extend_from_slice(&crate::sys::sysname());
    ident
}

impl Cache {
    /// A new, empty cache (git's `new_untracked_cache`) with the identity `ident`
    /// ([`ident_string`]) and `flags`.
    pub(crate) fn new(ident: &BStr, flags: u32) -> Cache {
        let mut ident = ident.to_owned();
        ident.push(0);
        Cache {
            ident,
            info_exclude: OidStat::default(),
            excludes_file: OidStat::default(),
            dir_flags: flags,
            exclude_per_dir: ".gitignore".into(),
            nodes: Vec::new(),
            root: None,
            counters: Counters::default(),
            use_fsmonitor: false,
        }
    }

    /// The cache gix decoded from the index (git's `read_untracked_extension`): every
    /// directory read is marked visited, as git marks them.
    pub(crate) fn from_extension(ext: &gix::index::extension::UntrackedCache) -> Cache {
        let oid_stat = |s: Option<&gix::index::extension::untracked_cache::OidStat>| {
            s.map_or_else(OidStat::default, |s| OidStat {
                stat: *s.stat(),
                id: Some(s.id()),
            })
        };
        let nodes: Vec<Node> = ext
            .directories()
            .iter()
            .map(|d| Node {
                name: d.name.clone(),
                untracked: d.untracked_entries.clone(),
                dirs: d.sub_directories.clone(),
                valid: d.stat.is_some(),
                check_only: d.check_only,
                recurse: true,
                stat: d.stat.unwrap_or_default(),
                exclude_oid: d.exclude_file_oid,
            })
            .collect();
        Cache {
            ident: ext.identifier().to_owned(),
            info_exclude: oid_stat(ext.info_exclude()),
            excludes_file: oid_stat(ext.excludes_file()),
            dir_flags: ext.dir_flags(),
            exclude_per_dir: ext.exclude_filename_per_dir().to_owned(),
            root: (!nodes.is_empty()).then_some(0),
            nodes,
            counters: Counters::default(),
            use_fsmonitor: false,
        }
    }

    /// Whether the cache was made for this work tree on this system (git's
    /// `ident_in_untracked`: only the first of the NUL-separated identities counts).
    pub(crate) fn is_for(&self, ident: &BStr) -> bool {
        let first = self.ident.split_str(b"\0").next().unwrap_or_default();
        first == ident.as_bytes()
    }

    /// The per-directory ignore file's name the cache was made with.
    pub(crate) fn exclude_per_dir(&self) -> &BStr {
        self.exclude_per_dir.as_bstr()
    }

    /// Whether the walk changed anything git would write back (git's condition in
    /// `read_directory`: a directory read, or one invalidated).
    pub(crate) fn changed(&self) -> bool {
        let c = self.counters;
        c.dir_opened != 0 || c.gitignore_invalidated != 0 || c.dir_invalidated != 0
    }

    /// The `UNTR` payload (git's `write_untracked_extension`): the directories visited, depth
    /// first, then the valid, check-only and exclude-id bitmaps (EWAH), the valid ones' stat
    /// data and the exclude ids.
    pub(crate) fn encode(&self, hash: gix::hash::Kind) -> Vec<u8> {
        use crate::index::format::encode_varint;
        let mut out = Vec::new();
        encode_varint(self.ident.len() as u64, &mut out);
        out.extend_from_slice(&self.ident);
        push_stat_data(&mut out, &self.info_exclude.stat);
        push_stat_data(&mut out, &self.excludes_file.stat);
        out.extend_from_slice(&self.dir_flags.to_be_bytes());
        for s in [&self.info_exclude, &self.excludes_file] {
            let id = s.id.unwrap_or_else(|| hash.null());
            out.extend_from_slice(id.as_bytes());
        }
        out.extend_from_slice(&self.exclude_per_dir);
        out.push(0);
        let Some(root) = self.root else {
            encode_varint(0, &mut out);
            return out;
        };
        #[derive(Default)]
        struct Written {
            body: Vec<u8>,
            valid: Vec<bool>,
            check_only: Vec<bool>,
            oid: Vec<bool>,
            stats: Vec<u8>,
            oids: Vec<u8>,
        }
        fn one(nodes: &[Node], k: usize, w: &mut Written) {
            let d = &nodes[k];
            let untracked: &[BString] = if d.valid { &d.untracked } else { &[] };
            w.check_only.push(d.valid && d.check_only);
            w.valid.push(d.valid);
            if d.valid {
                push_stat_data(&mut w.stats, &d.stat);
            }
            w.oid.push(d.exclude_oid.is_some());
            if let Some(id) = d.exclude_oid {
                w.oids.extend_from_slice(id.as_bytes());
            }
            let subs: Vec<usize> = d
                .dirs
                .iter()
                .copied()
                .filter(|&c| nodes[c].recurse)
                .collect();
            encode_varint(untracked.len() as u64, &mut w.body);
            encode_varint(subs.len() as u64, &mut w.body);
            w.body.extend_from_slice(&d.name);
            w.body.push(0);
            for name in untracked {
                w.body.extend_from_slice(name);
                w.body.push(0);
            }
            for c in subs {
                one(nodes, c, w);
            }
        }
        let mut w = Written::default();
        one(&self.nodes, root, &mut w);
        let header = out.len();
        encode_varint(w.valid.len() as u64, &mut out);
        out.extend_from_slice(&w.body);
        for bits in [&w.valid, &w.check_only, &w.oid] {
            // git's `ewah_set` grows a bitmap to its last set bit: trailing unset bits are not
            // counted.
            let used = bits.iter().rposition(|&b| b).map_or(0, |k| k + 1);
            match gix_bitmap::ewah::Vec::from_bits(&bits[..used]) {
                Some(bitmap) => bitmap.write_to(&mut out).expect("writing to a Vec"),
                // Beyond what a bitmap holds: the cache is written without its directories,
                // which git reads as a cache to fill again.
                None => {
                    out.truncate(header);
                    encode_varint(0, &mut out);
                    return out;
                }
            }
        }
        out.extend_from_slice(&w.stats);
        out.extend_from_slice(&w.oids);
        out.push(0);
        out
    }

    /// git's `lookup_untracked`: the subdirectory `name` (a trailing `/` ignored) of `parent`,
    /// added (sorted) if the cache has none.
    fn lookup(&mut self, parent: Option<usize>, name: &[u8]) -> Option<usize> {
        let parent = parent?;
        let name = name.strip_suffix(b"/").unwrap_or(name);
        let found = self.nodes[parent]
            .dirs
            .binary_search_by(|&c| self.nodes[c].name.as_slice().cmp(name));
        match found {
            Ok(k) => Some(self.nodes[parent].dirs[k]),
            Err(k) => {
                self.counters.dir_created += 1;
                self.nodes.push(Node {
                    name: name.into(),
                    ..Node::default()
                });
                let new = self.nodes.len() - 1;
                self.nodes[parent].dirs.insert(k, new);
                Some(new)
            }
        }
    }

    /// git's `invalidate_gitignore`: `node` and everything below it is to be read again.
    fn invalidate_gitignore(&mut self, node: usize) {
        self.counters.gitignore_invalidated += 1;
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            self.nodes[n].valid = false;
            self.nodes[n].untracked.clear();
            stack.extend(self.nodes[n].dirs.iter().copied());
        }
    }

    /// git's `invalidate_directory`: `node` is read again; its subdirectories are written back
    /// only if the new read visits them.
    fn invalidate_directory(&mut self, node: usize) {
        if self.nodes[node].valid {
            self.counters.dir_invalidated += 1;
        }
        self.nodes[node].valid = false;
        self.nodes[node].untracked.clear();
        for k in 0..self.nodes[node].dirs.len() {
            let c = self.nodes[node].dirs[k];
            self.nodes[c].recurse = false;
        }
    }

    /// git's `untracked_cache_invalidate_path` for an index entry added, removed or changed at
    /// `path`: the directory holding it is read again, and with
    /// [`DIR_SHOW_OTHER_DIRECTORIES`] (a change may change how an ancestor shows an untracked
    /// directory) every directory above it too. Missing directories are added on the way,
    /// invalid (and written only if a walk visits them).
    pub(crate) fn invalidate_path(&mut self, path: &BStr) {
        fn one(cache: &mut Cache, dir: usize, path: &[u8]) -> bool {
            let cascade = match path.find_byte(b'/') {
                Some(slash) => {
                    let sub = cache.lookup(Some(dir), &path[..slash]).expect("a parent");
                    one(cache, sub, &path[slash + 1..])
                }
                None => {
                    cache.invalidate_one(dir);
                    return cache.dir_flags & DIR_SHOW_OTHER_DIRECTORIES != 0;
                }
            };
            if cascade {
                cache.invalidate_one(dir);
            }
            cascade
        }
        if let Some(root) = self.root {
            one(self, root, path);
        }
    }

    /// git's `invalidate_one_directory`.
    fn invalidate_one(&mut self, node: usize) {
        self.counters.dir_invalidated += 1;
        self.nodes[node].valid = false;
        self.nodes[node].untracked.clear();
    }

    /// git's `fsmonitor_refresh_callback` for the untracked cache: each path the fsmonitor
    /// reported (`dir/` trimmed) invalidates the directory holding it
    /// (`untracked_cache_invalidate_trimmed_path`), unless git's `verify_path` refuses it (a
    /// `.git` component: changes inside a repository's git directory are no untracked files).
    /// `None`: a trivial answer or none at all, after which every directory is `lstat`ed.
    ///
    /// A path without a slash that is not a stage-0 entry of `index` is invalidated twice, as
    /// git does (once as a file, once as a directory `path/`): git's statistics count both.
    pub(crate) fn apply_fsmonitor(
        &mut self,
        index: &gix::index::State,
        reported: Option<&[BString]>,
    ) {
        let Some(paths) = reported else {
            self.use_fsmonitor = false;
            return;
        };
        for path in paths {
            let (trimmed, times) = match path.strip_suffix(b"/") {
                Some(dir) => (dir.as_bstr(), 1),
                None => {
                    let tracked = index
                        .entry_by_path_and_stage(
                            path.as_bstr(),
                            gix::index::entry::Stage::Unconflicted,
                        )
                        .is_some();
                    (path.as_bstr(), if tracked { 1 } else { 2 })
                }
            };
            // git's `verify_path`: no empty, `.`, `..` or `.git` component.
            let valid = !trimmed.is_empty()
                && trimmed.split_str(b"/").all(|c| {
                    !c.is_empty() && c != b"." && c != b".." && !c.eq_ignore_ascii_case(b".git")
                });
            if valid && self.root.is_some() {
                for _ in 0..times {
                    self.invalidate_path(trimmed);
                }
            }
        }
        self.use_fsmonitor = true;
    }

    /// The cache without its directories (git writes a cache whose root is not yet read so,
    /// and fills it in at its next `status`).
    pub(crate) fn clear(&mut self) {
        self.root = None;
        self.nodes.clear();
    }

    /// git's `validate_untracked_cache` once the cache is known usable: a root made if there is
    /// none, and everything invalidated if `info/exclude` or `core.excludesFile` changed
    /// (`info_exclude`, `excludes_file`: their stat data and ids now). Returns whether the
    /// index is to be written for it (a root made).
    pub(crate) fn prepare(&mut self, info_exclude: OidStat, excludes_file: OidStat) -> bool {
        let mut made = false;
        let root = match self.root {
            Some(root) => root,
            None => {
                self.nodes.push(Node::default());
                self.root = Some(self.nodes.len() - 1);
                made = true;
                self.nodes.len() - 1
            }
        };
        if info_exclude.id != self.info_exclude.id {
            self.invalidate_gitignore(root);
            self.info_exclude = info_exclude;
        }
        if excludes_file.id != self.excludes_file.id {
            self.invalidate_gitignore(root);
            self.excludes_file = excludes_file;
        }
        self.nodes[root].recurse = true;
        made
    }
}

/// Stat data as the untracked cache stores it (git's `stat_data_to_disk`): nine big-endian
/// 32-bit words.
pub(crate) fn push_stat_data(out: &mut Vec<u8>, s: &Stat) {
    for word in [
        s.ctime.secs,
        s.ctime.nsecs,
        s.mtime.secs,
        s.mtime.nsecs,
        s.dev,
        s.ino,
        s.uid,
        s.gid,
        s.size,
    ] {
        out.extend_from_slice(&word.to_be_bytes());
    }
}

/// git's `enum path_treatment`, in its order (a directory's state is the largest of its
/// entries').
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Treatment {
    None,
    Recurse,
    Excluded,
    Untracked,
}

/// Which stat fields decide whether a directory changed (git's `match_stat_data` with
/// `core.trustctime` and `core.checkStat`; git compares whole seconds, built without
/// `USE_NSEC`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatRules {
    /// `core.trustctime`: the ctime counts.
    pub trust_ctime: bool,
    /// `core.checkStat=minimal`: only the mtime's seconds and the size count.
    pub minimal: bool,
    /// The index file's mtime (seconds): a directory not older than it is racy.
    pub index_ts: i64,
}

impl StatRules {
    /// git's `match_stat_data_racy` is zero: `cached` is not racy and matches `now`.
    fn matches(&self, cached: &Stat, now: &Stat) -> bool {
        if self.index_ts != 0 && self.index_ts <= i64::from(cached.mtime.secs) {
            return false;
        }
        let mut same = cached.mtime.secs == now.mtime.secs && cached.size == now.size;
        if !self.minimal {
            same = same
                && (!self.trust_ctime || cached.ctime.secs == now.ctime.secs)
                && cached.uid == now.uid
                && cached.gid == now.gid
                && cached.ino == now.ino;
        }
        same
    }
}

/// What the walk needs besides the cache.
pub(crate) struct Context<'a, 'r> {
    /// The work tree, walked down: every directory on the way kept open
    /// ([`crate::fs::Root::dirs_descending`]).
    pub dirs: crate::fs::Dirs<'a>,
    /// The index (its stat data as read: the walk decides itself which ignore files' entries
    /// are up to date).
    pub index: &'a gix::index::State,
    /// `core.fileMode`.
    pub file_mode: bool,
    /// The ignore rules.
    pub excludes: &'a mut gix::AttributeStack<'r>,
    /// git's `would_convert_to_git` for an ignore file's path.
    pub would_convert: &'a mut dyn FnMut(&BStr) -> bool,
    /// The object hash.
    pub hash: gix::hash::Kind,
    /// The walk's flags (`DIR_SHOW_OTHER_DIRECTORIES | DIR_HIDE_EMPTY_DIRECTORIES`, or none for
    /// `-uall`).
    pub flags: u32,
    /// How a directory's stat data are compared with the cache's.
    pub rules: StatRules,
}

/// A frame of git's exclude stack: a directory (its length with the slash) and its node.
struct Frame {
    baselen: usize,
    node: Option<usize>,
}

/// One walk of the work tree with the cache (git's `read_directory` from the top).
struct Walk<'c, 'a, 'r> {
    cache: &'c mut Cache,
    cx: Context<'a, 'r>,
    frames: Vec<Frame>,
    basebuf: BString,
    /// A directory on the stack is excluded (git's `dir->internal.pattern`).
    excluded_top: bool,
    entries: Vec<BString>,
    warnings: Vec<String>,
}

/// What [`read_directory`] found: the untracked paths as `git status` lists them (sorted,
/// directories with a trailing `/`), and the warnings git prints on the way.
pub(crate) struct Walked {
    /// The untracked paths, sorted, directories with a trailing `/`.
    pub untracked: Vec<BString>,
    /// Warnings to print, without the `warning: `.
    pub warnings: Vec<String>,
}

/// `git status`'s untracked walk with `cache` (git's `fill_directory` without pathspecs, then
/// `wt_status_collect_untracked`'s filter of paths the index has).
pub(crate) fn read_directory(cache: &mut Cache, cx: Context<'_, '_>) -> Walked {
    let root = cache.root;
    let index = cx.index;
    let mut walk = Walk {
        cache,
        cx,
        frames: Vec::new(),
        basebuf: BString::default(),
        excluded_top: false,
        entries: Vec::new(),
        warnings: Vec::new(),
    };
    walk.rdr(BString::default(), root, false, false);
    let mut untracked: Vec<BString> = walk
        .entries
        .into_iter()
        .filter(|p| index_name_is_other(index, p.as_bstr()))
        .collect();
    untracked.sort();
    untracked.dedup();
    Walked {
        untracked,
        warnings: walk.warnings,
    }
}

/// git's `index_name_is_other`: the index has no entry (of any stage) at `path`.
fn index_name_is_other(index: &gix::index::State, path: &BStr) -> bool {
    let path = path.strip_suffix(b"/").unwrap_or(path).as_bstr();
    index.entry_range(path).is_none()
}

/// git's `index_file_exists`: an entry (any stage) at `path`.
fn in_index(index: &gix::index::State, path: &BStr) -> bool {
    index.entry_range(path).is_some()
}

/// One item of a directory being walked: a name read from disk, or from the cache.
enum Item {
    Disk(BString, FileType),
    CachedDir(usize),
    CachedFile(BString),
}

impl Walk<'_, '_, '_> {
    /// git's `read_directory_recursive` of `base` (empty, or a path ending in `/`).
    fn rdr(
        &mut self,
        base: BString,
        node: Option<usize>,
        check_only: bool,
        stop_at_first_file: bool,
    ) -> Treatment {
        let mut dir_state = Treatment::None;
        let baselen = base.len();
        let Ok(listing) = self.open_cached_dir(base.as_bstr(), node, check_only) else {
            return dir_state;
        };
        self.cache.counters.visited_directories += 1;
        if let Some(n) = node {
            self.cache.nodes[n].check_only = check_only;
        }
        let from_disk = listing.is_some();
        let mut disk = listing.map(Vec::into_iter);
        let (mut next_dir, mut next_file) = (0, 0);
        loop {
            let item = match disk.as_mut() {
                Some(it) => match it.next() {
                    Some((name, kind)) => Item::Disk(name, kind),
                    None => break,
                },
                None => match self.read_cached_dir(node, &mut next_dir, &mut next_file) {
                    Some(item) => item,
                    None => break,
                },
            };
            let (state, path) = self.treat_path(node, item, base.as_bstr());
            self.cache.counters.visited_paths += 1;
            dir_state = dir_state.max(state);
            if state == Treatment::Recurse {
                let ud = self.cache.lookup(node, &path[baselen..]);
                let sub = self.rdr(path.clone(), ud, check_only, stop_at_first_file);
                dir_state = dir_state.max(sub);
            }
            if check_only {
                if stop_at_first_file && dir_state >= Treatment::Excluded {
                    dir_state = Treatment::Excluded;
                    break;
                }
                if dir_state == Treatment::Untracked {
                    if from_disk {
                        self.add_untracked(node, &path[baselen..]);
                    }
                    break;
                }
                continue;
            }
            if state == Treatment::Untracked {
                if !in_index(self.cx.index, path.as_bstr()) {
                    self.entries.push(path.clone());
                }
                if from_disk {
                    self.add_untracked(node, &path[baselen..]);
                }
            }
        }
        // close_cached_dir
        if let Some(n) = node {
            self.cache.nodes[n].valid = true;
            self.cache.nodes[n].recurse = true;
        }
        dir_state
    }

    /// git's `open_cached_dir`: `None` when the cache's listing of `base` is valid (the walk
    /// reads it from the cache), else the directory read from disk (its node invalidated);
    /// `Err` when it cannot be read, with git's warning recorded.
    fn open_cached_dir(
        &mut self,
        base: &BStr,
        node: Option<usize>,
        check_only: bool,
    ) -> Result<Option<Vec<(BString, FileType)>>, ()> {
        if self.valid_cached_dir(node, base, check_only) {
            return Ok(None);
        }
        let at = base.strip_suffix(b"/").unwrap_or(base).as_bstr();
        let read = self.cx.dirs.entries(at);
        if let Some(n) = node {
            self.cache.invalidate_directory(n);
            self.cache.counters.dir_opened += 1;
        }
        match read {
            Ok(entries) => Ok(Some(entries)),
            Err(err) => {
                let shown = if at.is_empty() {
                    ".".into()
                } else {
                    at.to_string()
                };
                self.warnings.push(format!(
                    "could not open directory '{shown}': {}",
                    crate::fs::strerror(&err)
                ));
                Err(())
            }
        }
    }

    /// git's `read_cached_dir` over a valid cached directory: its subdirectories still to
    /// recurse into first, then its untracked files; `None` at the end.
    fn read_cached_dir(
        &self,
        node: Option<usize>,
        next_dir: &mut usize,
        next_file: &mut usize,
    ) -> Option<Item> {
        let n = node.expect("a cached directory has a node");
        let cached = &self.cache.nodes[n];
        while *next_dir < cached.dirs.len() {
            let d = cached.dirs[*next_dir];
            *next_dir += 1;
            if self.cache.nodes[d].recurse {
                return Some(Item::CachedDir(d));
            }
        }
        let file = cached.untracked.get(*next_file)?.clone();
        *next_file += 1;
        Some(Item::CachedFile(file))
    }

    fn add_untracked(&mut self, node: Option<usize>, name: &[u8]) {
        if let Some(n) = node {
            self.cache.nodes[n].untracked.push(name.into());
        }
    }

    /// git's `valid_cached_dir` for the directory `path` (empty, or ending in `/`).
    fn valid_cached_dir(&mut self, node: Option<usize>, path: &BStr, check_only: bool) -> bool {
        let Some(n) = node else {
            return false;
        };
        // With an fsmonitor, a valid directory is trusted: the hook would have reported it.
        if self.cache.use_fsmonitor && self.cache.nodes[n].valid {
            return self.still_valid(n, path, check_only);
        }
        let at = path.strip_suffix(b"/").unwrap_or(path).as_bstr();
        let st = self.cx.dirs.stat_dir(at).ok().flatten();
        let Some(st) = st else {
            self.cache.nodes[n].stat = Stat::default();
            return false;
        };
        let now = crate::fs::index_stat(&st);
        let node = &mut self.cache.nodes[n];
        if !node.valid || !self.cx.rules.matches(&node.stat, &now) {
            node.stat = now;
            return false;
        }
        self.still_valid(n, path, check_only)
    }

    /// The rest of git's `valid_cached_dir` once the directory's stat data are trusted: the
    /// same check-only mode, and its ignore rules unchanged (`prep_exclude`).
    fn still_valid(&mut self, n: usize, path: &BStr, check_only: bool) -> bool {
        if self.cache.nodes[n].check_only != check_only {
            return false;
        }
        self.prep_exclude(path);
        self.cache.nodes[n].valid
    }

    /// git's `treat_path` (and `treat_path_fast` for an item from the cache): the item's
    /// treatment and its path (a directory's with a trailing `/`).
    fn treat_path(&mut self, node: Option<usize>, item: Item, base: &BStr) -> (Treatment, BString) {
        let mut path = BString::from(base);
        let (name, kind) = match item {
            Item::CachedFile(name) => {
                path.extend_from_slice(&name);
                return (Treatment::Untracked, path);
            }
            Item::CachedDir(d) => {
                path.extend_from_slice(&self.cache.nodes[d].name);
                path.push(b'/');
                if self.cache.nodes[d].check_only {
                    let state = self.rdr(path.clone(), Some(d), true, false);
                    return (state, path);
                }
                return (Treatment::Recurse, path);
            }
            Item::Disk(name, kind) => (name, kind),
        };
        if name == ".git" {
            return (Treatment::None, path);
        }
        path.extend_from_slice(&name);
        let has_path_in_index = in_index(self.cx.index, path.as_bstr());
        let is_dir = kind == FileType::Directory;
        if !is_dir && has_path_in_index {
            return (Treatment::None, path);
        }
        let excluded = self.is_excluded(path.as_bstr(), is_dir);
        if excluded {
            return (Treatment::Excluded, path);
        }
        match kind {
            FileType::Directory => {
                path.push(b'/');
                let state = self.treat_directory(node, &path, base.len());
                (state, path)
            }
            FileType::RegularFile | FileType::Symlink => (Treatment::Untracked, path),
            _ => (Treatment::None, path),
        }
    }

    /// git's `treat_directory` for `dirname` (ending in `/`), not excluded, without pathspecs
    /// or ignored files.
    fn treat_directory(
        &mut self,
        node: Option<usize>,
        dirname: &BString,
        baselen: usize,
    ) -> Treatment {
        let dir = dirname[..dirname.len() - 1].as_bstr();
        let index = self.cx.index;
        if index
            .entry_by_path(dir)
            .is_some_and(|e| e.mode == Mode::COMMIT)
        {
            return Treatment::None;
        }
        if index
            .prefixed_entries_range(dirname.as_bstr())
            .is_some_and(|r| !r.is_empty())
        {
            return Treatment::Recurse;
        }
        if is_nonbare_repository_dir(&mut self.cx.dirs, dir) {
            return Treatment::Untracked;
        }
        if self.cx.flags & DIR_SHOW_OTHER_DIRECTORIES == 0 {
            return Treatment::Recurse;
        }
        if self.cx.flags & DIR_HIDE_EMPTY_DIRECTORIES == 0 {
            return Treatment::Untracked;
        }
        let ud = self.cache.lookup(node, &dirname[baselen..]);
        self.rdr(dirname.clone(), ud, true, false)
    }

    /// git's `is_excluded` with the side effects of its `prep_exclude`.
    fn is_excluded(&mut self, path: &BStr, is_dir: bool) -> bool {
        let base_end = path.rfind_byte(b'/').map_or(0, |k| k + 1);
        self.prep_exclude(path[..base_end].as_bstr());
        if self.excluded_top {
            return true;
        }
        let mode = if is_dir { Mode::DIR } else { Mode::FILE };
        self.cx
            .excludes
            .at_entry(path, Some(mode))
            .is_ok_and(|p| p.is_excluded())
    }

    /// git's `prep_exclude` for the directory `base` (empty, or ending in `/`): the exclude
    /// stack brought to it, each directory pushed checked for exclusion and its `.gitignore`
    /// id compared with the cache's.
    fn prep_exclude(&mut self, base: &BStr) {
        let baselen = base.len();
        while let Some(top) = self.frames.last() {
            if top.baselen <= baselen && self.basebuf[..top.baselen] == base[..top.baselen] {
                break;
            }
            self.frames.pop();
            self.excluded_top = false;
        }
        if self.excluded_top {
            return;
        }
        let mut current: Option<usize> = self.frames.last().map(|f| f.baselen);
        self.basebuf.truncate(current.unwrap_or(0));
        let mut node = match self.frames.last() {
            Some(f) => f.node,
            None => self.cache.root,
        };
        while current.is_none_or(|c| c < baselen) {
            let (start, end) = match current {
                None => (0, 0),
                Some(start) => {
                    let slash = base[start + 1..]
                        .find_byte(b'/')
                        .map(|k| k + start + 1)
                        .expect("a directory path ends in /");
                    node = self.cache.lookup(node, &base[start..=slash]);
                    (start, slash + 1)
                }
            };
            self.frames.push(Frame { baselen: end, node });
            self.basebuf.extend_from_slice(&base[start..end]);
            // A directory the cache still holds as valid was walked, so it was not excluded,
            // and nothing its rules come from has changed since (a changed ignore file above
            // it, or a global one, invalidated it): git's check would say "not excluded"
            // again, without the ignore files' reads that gix's check costs.
            let known = node.is_some_and(|n| self.cache.nodes[n].valid);
            if end > 0 && !known {
                let dir = self.basebuf[..end - 1].to_owned();
                let excluded = self
                    .cx
                    .excludes
                    .at_entry(dir.as_bstr(), Some(Mode::DIR))
                    .is_ok_and(|p| p.is_excluded());
                if excluded {
                    self.excluded_top = true;
                    return;
                }
            }
            let read = match node {
                None => true,
                Some(n) => !self.cache.nodes[n].valid || self.cache.nodes[n].exclude_oid.is_some(),
            };
            let oid = if read {
                let mut file = self.basebuf[..end].to_owned();
                file.extend_from_slice(&self.cache.exclude_per_dir);
                self.ignore_file_oid(file.as_bstr())
            } else {
                None
            };
            if let Some(n) = node {
                if oid != self.cache.nodes[n].exclude_oid {
                    self.cache.invalidate_gitignore(n);
                    self.cache.nodes[n].exclude_oid = oid;
                }
            }
            current = Some(end);
        }
        self.basebuf.truncate(baselen);
    }

    /// The id git's `add_patterns` gives the ignore file `path` of the work tree: the index's
    /// where the file is tracked, clean and not converted; that of its content with a newline
    /// added otherwise (git hashes the buffer it parses); the empty blob's for an empty file;
    /// the index's for a skip-worktree file not on disk; none for no file.
    fn ignore_file_oid(&mut self, path: &BStr) -> Option<ObjectId> {
        let index = self.cx.index;
        let stage0 = index.entry_by_path_and_stage(path, gix::index::entry::Stage::Unconflicted);
        let opened = self.cx.dirs.open_regular(path).ok().flatten();
        let Some((mut file, st)) = opened else {
            return stage0
                .filter(|e| e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE))
                .map(|e| e.id);
        };
        if st.st_size == 0 {
            return Some(gix::ObjectId::empty_blob(self.cx.hash));
        }
        let mut buf = Vec::new();
        if std::io::Read::read_to_end(&mut file, &mut buf).is_err() {
            return None;
        }
        if let Some(e) = stage0 {
            if self.is_uptodate(e, &st, &buf) && !(self.cx.would_convert)(path) {
                return Some(e.id);
            }
        }
        buf.push(b'\n');
        gix::objs::compute_hash(self.cx.hash, gix::object::Kind::Blob, &buf).ok()
    }
}

impl Walk<'_, '_, '_> {
    /// Whether git's refresh leaves the index entry `e` of an ignore file up to date
    /// (`CE_UPTODATE`), the file being open with stat data `st` and content `content` (git's
    /// walk takes the id of a clean `.gitignore` from the index; this walk runs beside the
    /// refresh, so it decides for itself, as `refresh_cache_ent` would): skip-worktree and
    /// assume-unchanged entries are; otherwise the file's mode must be the entry's, and its stat
    /// data the entry's and not racily clean, or its content the blob.
    fn is_uptodate(&self, e: &gix::index::Entry, st: &crate::fs::Stat, content: &[u8]) -> bool {
        use gix::index::entry::Flags;
        if e.flags
            .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
        {
            return true;
        }
        if e.flags.contains(Flags::INTENT_TO_ADD)
            || !matches!(e.mode, Mode::FILE | Mode::FILE_EXECUTABLE)
        {
            return false;
        }
        if self.cx.file_mode && (st.st_mode & 0o100 != 0) != (e.mode == Mode::FILE_EXECUTABLE) {
            return false;
        }
        let now = crate::fs::index_stat(st);
        let rules = self.cx.rules;
        let same = if rules.minimal {
            now.mtime.secs == e.stat.mtime.secs && now.size == e.stat.size
        } else {
            now.mtime == e.stat.mtime
                && (!rules.trust_ctime || now.ctime == e.stat.ctime)
                && now.ino == e.stat.ino
                && now.uid == e.stat.uid
                && now.gid == e.stat.gid
                && now.size == e.stat.size
        };
        let racy = i64::from(e.stat.mtime.secs) >= rules.index_ts;
        if same && !racy {
            return true;
        }
        // git compares the content where the size alone does not say it changed.
        (e.stat.size == 0 || e.stat.size == now.size)
            && gix::objs::compute_hash(self.cx.hash, gix::object::Kind::Blob, content)
                .is_ok_and(|id| id == e.id)
    }
}

/// git's `is_nonbare_repository_dir`: `dir/.git` is a git directory, or a `gitdir:` file (an
/// unreadable one counts, as in git).
fn is_nonbare_repository_dir(dirs: &mut crate::fs::Dirs<'_>, dir: &BStr) -> bool {
    let mut dot_git = BString::from(dir);
    dot_git.extend_from_slice(b"/.git");
    match dirs.file_type(dot_git.as_bstr()) {
        Ok(Some(FileType::Directory)) => {
            crate::repo::git_dir::is_git_directory(dirs, dot_git.as_bstr())
        }
        Ok(Some(FileType::RegularFile)) => match dirs.open_read(dot_git.as_bstr()) {
            Ok(mut file) => {
                let mut head = Vec::new();
                match std::io::Read::read_to_end(&mut file, &mut head) {
                    Ok(_) => head.starts_with(b"gitdir: "),
                    Err(_) => true,
                }
            }
            Err(_) => true,
        },
        _ => false,
    }
}

/// `core.untrackedCache` (git's `core_untracked_cache` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    /// `keep` (or unset): a cache in the index is used, none is added.
    Keep,
    /// `true` (or `feature.manyFiles`): one is added, and its changes written.
    Write,
    /// `false`: the index's is dropped.
    Remove,
}

impl Setting {
    fn of(config: &gix::config::Snapshot<'_>) -> Setting {
        match config.boolean("core.untrackedCache") {
            Some(true) => Setting::Write,
            Some(false) => Setting::Remove,
            None if config.string("core.untrackedCache").is_none()
                && config.boolean("feature.manyFiles") == Some(true) =>
            {
                Setting::Write
            }
            None => Setting::Keep,
        }
    }
}

/// git's `git_env_bool`: `Some` when the variable is set to a boolean.
fn env_bool(name: &str) -> Option<bool> {
    let value = std::env::var(name).ok()?;
    match value.to_ascii_lowercase().as_str() {
        "" | "false" | "no" | "off" | "0" => Some(false),
        "true" | "yes" | "on" | "1" => Some(true),
        other => other.parse::<i64>().ok().map(|n| n != 0),
    }
}

/// The flags git's `new_untracked_cache_flags` gives a new cache: none with
/// `status.showUntrackedFiles=all`, else those of a `normal` walk.
fn config_flags(config: &gix::config::Snapshot<'_>) -> u32 {
    if config
        .string("status.showUntrackedFiles")
        .is_some_and(|v| v.as_slice() == b"all")
    {
        0
    } else {
        DIR_SHOW_OTHER_DIRECTORIES | DIR_HIDE_EMPTY_DIRECTORIES
    }
}

/// What `git status` does with the untracked cache: git's `tweak_untracked_cache` when the
/// index is read, then `validate_untracked_cache` for the walk.
pub(crate) struct Plan {
    /// The cache as it stands (after the walk, if it was used); `None`: the index has none.
    pub cache: Option<Cache>,
    /// The walk's flags when it uses the cache.
    pub used: Option<u32>,
    /// The cache in memory may differ from the index file's: it goes with the index when that is
    /// written.
    touched: bool,
    /// git's `UNTRACKED_CHANGED`: the index is to be written for the cache.
    changed: bool,
    /// git's `force_untracked_cache`: a walk that changed the cache writes it back.
    force: bool,
    /// Warnings git prints on the way, without the `warning: `.
    pub warnings: Vec<String>,
}

impl Plan {
    /// The plan for a status of `index` in `worktree` that lists untracked
    /// files (`untracked`: not `-uno`; `all`: `-uall`) without ignored ones (`plain`) and
    /// pathspecs. `Err` names why git must run it: an untracked cache with `core.ignoreCase`,
    /// whose case-folded lookups are git's.
    pub(crate) fn of(
        repo: &gix::Repository,
        index: &gix::index::State,
        worktree: &std::path::Path,
        untracked: bool,
        all: bool,
        plain: bool,
        fsmonitor: Option<&crate::index::fsmonitor::Monitor>,
    ) -> Result<Plan, &'static str> {
        let config = repo.config_snapshot();
        let setting = Setting::of(&config);
        let mut plan = Plan {
            cache: index.untracked().map(Cache::from_extension),
            used: None,
            touched: false,
            changed: false,
            force: env_bool("GIT_FORCE_UNTRACKED_CACHE").unwrap_or(setting == Setting::Write),
            warnings: Vec::new(),
        };
        // Without a cache, and none to add, nothing below applies (and no real path is taken).
        if plan.cache.is_none() && setting != Setting::Write {
            return Ok(plan);
        }
        let ident = ident_string(worktree);
        let ident = ident.as_bstr();
        let new_flags = config_flags(&config);
        match setting {
            Setting::Remove if plan.cache.is_some() => {
                plan.cache = None;
                plan.changed = true;
                plan.touched = true;
            }
            Setting::Write if !plan.cache.as_ref().is_some_and(|c| c.is_for(ident)) => {
                plan.cache = Some(Cache::new(ident, new_flags));
                plan.changed = true;
                plan.touched = true;
            }
            _ => {}
        }
        if plan.cache.is_some() && config.boolean("core.ignoreCase") == Some(true) {
            return Err("an untracked cache with core.ignoreCase");
        }
        // git's `tweak_fsmonitor` after `tweak_untracked_cache`: a new fsmonitor extension
        // makes sure the cache is this work tree's (`add_fsmonitor`), and the hook's answer
        // invalidates what it reports.
        if let (Some(monitor), Some(cache)) = (fsmonitor, plan.cache.as_mut()) {
            if monitor.added && !cache.is_for(ident) {
                *cache = Cache::new(ident, new_flags);
                plan.changed = true;
            }
            cache.apply_fsmonitor(index, monitor.reported.as_deref());
            plan.touched = true;
        }
        let Some(cache) = plan.cache.as_mut() else {
            return Ok(plan);
        };
        if !untracked || !plain || env_bool("GIT_DISABLE_UNTRACKED_CACHE") == Some(true) {
            return Ok(plan);
        }
        if cache.exclude_per_dir() != ".gitignore" {
            return Ok(plan);
        }
        if !cache.is_for(ident) {
            plan.warnings
                .push("untracked cache is disabled on this system or location".into());
            return Ok(plan);
        }
        let flags = if all {
            0
        } else {
            DIR_SHOW_OTHER_DIRECTORIES | DIR_HIDE_EMPTY_DIRECTORIES
        };
        if cache.dir_flags != flags {
            if cache.dir_flags == new_flags {
                return Ok(plan);
            }
            *cache = Cache::new(ident, flags);
            plan.changed = true;
        }
        let (info, excludes) = crate::index::ignore_files::global(repo);
        plan.changed |= cache.prepare(info, excludes);
        plan.touched = true;
        plan.used = Some(flags);
        Ok(plan)
    }

    /// The untracked walk with the cache (see [`Plan::used`]) of `index` (read at `index_ts`,
    /// its mtime in seconds), as `git status` lists its result. Needs no refreshed index: it
    /// runs beside the refresh.
    pub(crate) fn walk(
        &mut self,
        repo: &gix::Repository,
        root: &crate::fs::Root,
        index: &gix::index::State,
        index_ts: i64,
        flags: u32,
    ) -> Result<Vec<BString>, WalkError> {
        let cache = self.cache.as_mut().expect("a cache to use");
        let mut excludes = repo
            .excludes(
                index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .map_err(|e| WalkError(e.into()))?;
        let mut attributes = repo
            .attributes_only(
                index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .map_err(|e| WalkError(e.into()))?;
        let config = repo.config_snapshot();
        let mut outcome = gix::attrs::search::Outcome::default();
        outcome.initialize_with_selection(
            &Default::default(),
            [
                "filter",
                "ident",
                "working-tree-encoding",
                "text",
                "crlf",
                "eol",
            ],
        );
        let eol_config = crate::convert::EolConfig::of(&config);
        // git's `would_convert_to_git`: `convert_to_git` without content says yes for a filter
        // driver that cleans, a working-tree encoding, `ident`, and an end-of-line handling
        // that is not binary (`convert_attrs`' `crlf_action`).
        let mut would_convert = |path: &BStr| -> bool {
            use gix::attrs::StateRef;
            let Ok(platform) = attributes.at_entry(path, Some(Mode::FILE)) else {
                return false;
            };
            platform.matching_attributes(&mut outcome);
            let mut eol = crate::convert::Eol::default();
            for m in outcome.iter() {
                match (m.assignment.name.as_str(), m.assignment.state) {
                    ("ident", StateRef::Set) => return true,
                    ("working-tree-encoding", StateRef::Value(enc))
                        if !enc.as_bstr().is_empty()
                            && !enc.as_bstr().eq_ignore_ascii_case(b"utf-8") =>
                    {
                        return true
                    }
                    ("filter", StateRef::Value(driver)) => {
                        let driver = driver.as_bstr();
                        let cleans = ["clean", "process"].iter().any(|key| {
                            config
                                .string(format!("filter.{driver}.{key}").as_str())
                                .is_some()
                        });
                        if cleans {
                            return true;
                        }
                    }
                    ("text", state) => eol.text = crate::convert::TextAttr::from_state(state),
                    ("crlf", state) => eol.crlf = crate::convert::TextAttr::from_state(state),
                    ("eol", state) => eol.eol_crlf = crate::convert::Eol::eol_attr(state),
                    _ => {}
                }
            }
            eol.converts_on_checkin(eol_config)
        };
        let rules = StatRules {
            trust_ctime: config.boolean("core.trustctime").unwrap_or(true),
            minimal: config
                .string("core.checkStat")
                .is_some_and(|v| v.eq_ignore_ascii_case(b"minimal")),
            index_ts,
        };
        let walked = read_directory(
            cache,
            Context {
                dirs: root.dirs_descending(),
                index,
                file_mode: config.boolean("core.fileMode").unwrap_or(true),
                excludes: &mut excludes,
                would_convert: &mut would_convert,
                hash: repo.object_hash(),
                flags,
                rules,
            },
        );
        self.warnings.extend(walked.warnings);
        Ok(walked.untracked)
    }

    /// Whether the index is to be written for the cache (git's `UNTRACKED_CHANGED`).
    pub(crate) fn to_write(&self) -> bool {
        self.changed
            || (self.force
                && self.used.is_some()
                && self.cache.as_ref().is_some_and(Cache::changed))
    }

    /// The `UNTR` payload to write with the index (`Some(None)`: none), or `None` to keep the
    /// file's as it is.
    pub(crate) fn extension(&self, hash: gix::hash::Kind) -> Option<Option<Vec<u8>>> {
        self.touched
            .then(|| self.cache.as_ref().map(|c| c.encode(hash)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// git's own `UNTR` payload, decoded by gix and encoded again by [`Cache::encode`], is the
    /// same bytes: directories, untracked names, flags, bitmaps, stat data and ids as git wrote
    /// them (a cache with check-only directories, `.gitignore` ids and an `info/exclude`).
    #[test]
    fn a_cache_git_wrote_is_encoded_again_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let git = |args: &[&str]| crate::fs::testing::git_in(repo, args);
        git(&["init", "-q"]);
        for (path, text) in [
            ("t", "t"),
            ("a/t", "t"),
            ("a/.gitignore", "*.o\n"),
            ("a/b/t", "t"),
        ] {
            std::fs::create_dir_all(repo.join(path).parent().unwrap()).unwrap();
            std::fs::write(repo.join(path), text).unwrap();
        }
        git(&["add", "."]);
        for path in ["u", "a/u", "a/x.o", "n/m/u", "c/d/u"] {
            std::fs::create_dir_all(repo.join(path).parent().unwrap()).unwrap();
            std::fs::write(repo.join(path), "u").unwrap();
        }
        std::fs::write(repo.join(".git/info/exclude"), "c\n").unwrap();
        git(&["-c", "core.untrackedCache=true", "status", "--porcelain"]);
        git(&["-c", "core.untrackedCache=true", "status", "--porcelain"]);
        let bytes = std::fs::read(repo.join(".git/index")).unwrap();
        let at = bytes
            .windows(4)
            .position(|w| w == b"UNTR")
            .expect("git wrote an untracked cache");
        let len = u32::from_be_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let payload = &bytes[at + 8..at + 8 + len];
        let index = gix::index::File::at(
            repo.join(".git/index"),
            gix::hash::Kind::Sha1,
            false,
            Default::default(),
        )
        .unwrap();
        let cache = Cache::from_extension(index.untracked().unwrap());
        assert!(cache.nodes.len() >= 5, "{:?}", cache.nodes);
        assert!(cache.nodes.iter().any(|n| n.check_only));
        assert!(cache.nodes.iter().any(|n| n.exclude_oid.is_some()));
        assert_eq!(cache.encode(gix::hash::Kind::Sha1), payload);
    }
}
