//! Scenarios from a seed: a repository of two or three commits (`main`, a mutation `b` of it,
//! sometimes a third `c`), a work tree changed the ways people change work trees, and one of the
//! commands git-par owns.
//!
//! The names come from a small alphabet (`a`, `A`, `b`, `d`, `é`...), so that paths collide: a
//! file in one commit is a directory in the other, two names differ only in case, a branch and
//! a file share a name. Local changes lean towards the paths the target changes, where a
//! checkout has something to decide.

use std::collections::BTreeSet;

use crate::model::{self, leading, Content, Node, Tree};
use crate::rng::Rng;
use crate::scenario::Scenario;
use crate::shell::{join, quote};

/// First components of paths: short names (some a branch's name, some differing only in case),
/// names whose extension an attribute may name, a non-ASCII name, a name with a space.
const TOP: &[&str] = &[
    "a", "A", "b", "d", "D", "f", "F", "x.txt", "y.bin", "z.crlf", "w.id", "v.log", "é", "s p",
];
/// Further components.
const SUB: &[&str] = &["a", "b", "e", "E", "f", "x.txt", "n.lf", "q.log", "é"];
/// [`TOP`] for the Windows flavour: no two names that differ only in case, which a Windows
/// volume cannot hold side by side (and the host's case-sensitive git would compare apart).
const TOP_WINDOWS: &[&str] = &[
    "a", "b", "d", "f", "x.txt", "y.bin", "z.crlf", "w.id", "v.log", "é", "s p",
];
/// [`SUB`] for the Windows flavour, for the same reason as [`TOP_WINDOWS`].
const SUB_WINDOWS: &[&str] = &["a", "b", "e", "f", "x.txt", "n.lf", "q.log", "é"];

/// Which system's repositories a scenario stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavour {
    /// Linux's: symlinks, executable bits, names differing only in case, read-only directories.
    #[default]
    Linux,
    /// Git for Windows' on NTFS, so that git-par.exe is tested as a Windows user meets it: every
    /// repository configured as its `git init` configures one (`core.symlinks=false`,
    /// `core.filemode=false`; `core.ignorecase` left unset, since the host's git that builds
    /// and reads the scenario is case-sensitive), no symlinks, no executable files, no names a
    /// Windows volume cannot hold (two differing only in case among them), no read-only
    /// directories (a Windows directory's read-only attribute stops no one).
    Windows,
}

/// The configuration Git for Windows' `git init` writes (on NTFS, as its probes find it), as
/// `git config` arguments: written into every repository of a Windows-flavour scenario.
pub const WINDOWS_CONFIG: &[(&str, &str)] =
    &[("core.symlinks", "false"), ("core.filemode", "false")];

/// What a Windows-flavour scenario sets besides [`WINDOWS_CONFIG`], for both sides:
/// `core.checkStat=minimal`, so that only the stat data Linux and Windows report alike (the
/// modification time and the size) decide whether a file is stat-clean. The host's git records
/// Linux's inode, owner and change time, which Windows reports otherwise (0, 0, the creation
/// time): git-par.exe, as Git for Windows would, finds every entry the host's git wrote
/// stat-dirty, and git's racy smudge (`ce_smudge_racily_clean_entry`) is skipped for a
/// stat-dirty entry. A file rewritten with the same size in the second its index was written
/// is then smudged by the host's git and left to the stat data by git-par.exe, which the host's
/// git, reading it later, takes as clean: a difference of two systems sharing one index, not
/// of git-par (`docs/windows.md`).
pub const WINDOWS_SHARED_STAT: (&str, &str) = ("core.checkStat", "minimal");

/// Whether Windows can hold a file named `name` (one component): none of the characters it
/// refuses, no trailing dot or space, no device name (`CON`, `aux.txt`, `COM1`...). The
/// Windows flavour's alphabets are checked against it.
pub fn windows_can_hold(name: &str) -> bool {
    const DEVICES: &[&str] = &[
        "con", "prn", "aux", "nul", "conin$", "conout$", "com0", "com1", "com2", "com3", "com4",
        "com5", "com6", "com7", "com8", "com9", "lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5",
        "lpt6", "lpt7", "lpt8", "lpt9",
    ];
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    !name.is_empty()
        && !name.ends_with('.')
        && !name.ends_with(' ')
        && !name
            .chars()
            .any(|c| c < ' ' || matches!(c, ':' | '<' | '>' | '"' | '|' | '?' | '*' | '\\' | '/'))
        && !DEVICES.contains(&stem.to_ascii_lowercase().as_str())
}
/// Lines of a random `.gitattributes`.
const ATTRIBUTES: &[&str] = &[
    "*.txt text",
    "*.bin -text",
    "*.crlf text eol=crlf",
    "*.lf eol=lf",
    "*.id ident",
    "* text=auto",
    "*.txt eol=crlf",
    "d/** -text",
    "a* text",
];
/// Lines of a random `.gitignore`.
const IGNORES: &[&str] = &["*.log", "ign/", "*.o", "/f", "tmp*", "E"];

/// The weights of the kinds of change to the work tree, by the number [`Generator::dirty_once`]
/// matches on: edits (0, 1) most, new untracked files (3) next.
const DIRTY_WEIGHTS: [usize; 16] = [20, 8, 8, 16, 5, 6, 4, 6, 4, 4, 3, 4, 3, 3, 3, 2];

/// The weights of the kinds of command, by the number [`Generator::command`] matches on.
const COMMAND_WEIGHTS: [usize; 11] = [
    20, // switch
    18, // checkout of a branch
    10, // checkout of paths
    10, // restore
    8,  // reset --hard
    12, // status
    4,  // update-index --refresh
    5,  // sparse-checkout
    4,  // merge --ff-only
    3,  // clone
    4,  // worktree add
];

/// The ways `switch` is asked to switch (`-m` twice as often: it merges, where losses hide).
const SWITCH_MODES: &[&[&str]] = &[
    &[],
    &["-f"],
    &["-m"],
    &["-m"],
    &["--detach"],
    &["-c", "new"],
    &["-C", "new"],
    &["--discard-changes"],
];
/// The ways `checkout` is asked to switch.
const CHECKOUT_MODES: &[&[&str]] = &[
    &[],
    &["-f"],
    &["-m"],
    &["-m"],
    &["--detach"],
    &["-B", "main"],
    &["-b", "new"],
];

/// The scenario of `seed`.
pub fn scenario(seed: u64) -> Scenario {
    scenario_of(seed, Flavour::Linux)
}

/// The scenario of `seed` in `flavour` (the Linux flavour's are [`scenario`]'s, draw for draw).
pub fn scenario_of(seed: u64, flavour: Flavour) -> Scenario {
    let mut generator = Generator::new(seed);
    generator.windows = flavour == Flavour::Windows;
    generator.build()
}

struct Generator {
    rng: Rng,
    lines: Vec<String>,
    a: Tree,
    b: Tree,
    c: Option<Tree>,
    /// What the work tree holds (tracked or not), as far as the generator knows.
    wt: Tree,
    /// The paths the index tracks, as far as the generator knows.
    tracked: BTreeSet<String>,
    ignores: Vec<&'static str>,
    submodule: bool,
    sparse: bool,
    merging: bool,
    detached: bool,
    unprivileged: bool,
    /// The Windows flavour ([`Flavour::Windows`]).
    windows: bool,
}

impl Generator {
    fn new(seed: u64) -> Generator {
        Generator {
            rng: Rng::new(seed),
            lines: Vec::new(),
            a: Tree::default(),
            b: Tree::default(),
            c: None,
            wt: Tree::default(),
            tracked: BTreeSet::new(),
            ignores: Vec::new(),
            submodule: false,
            sparse: false,
            merging: false,
            detached: false,
            unprivileged: false,
            windows: false,
        }
    }

    /// The first components of paths of this flavour.
    fn top(&self) -> &'static [&'static str] {
        if self.windows {
            TOP_WINDOWS
        } else {
            TOP
        }
    }

    /// The further components of paths of this flavour.
    fn sub(&self) -> &'static [&'static str] {
        if self.windows {
            SUB_WINDOWS
        } else {
            SUB
        }
    }

    /// In the Windows flavour, configures the repository `dir` (`.` for the current one) as Git
    /// for Windows' `git init` would ([`WINDOWS_CONFIG`]).
    fn as_on_windows(&mut self, dir: &str) {
        if self.windows {
            for (key, value) in WINDOWS_CONFIG.iter().chain([&WINDOWS_SHARED_STAT]) {
                self.emit(format!("git -C {dir} config {key} {value}"));
            }
        }
    }

    fn emit(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    fn build(mut self) -> Scenario {
        self.repository();
        self.dirty();
        let (command, cwd, observe) = self.command();
        let transparent = self.rng.chance(50);
        let workers = *self.rng.pick(&["1", "2", "8"]);
        let par_config = if self.rng.chance(70) {
            vec![
                format!("checkout.workers={workers}"),
                "checkout.thresholdForParallelism=0".to_owned(),
            ]
        } else {
            Vec::new()
        };
        let mut script = self.lines.join("\n");
        script.push('\n');
        Scenario {
            name: String::new(),
            script,
            command,
            cwd,
            observe,
            transparent,
            par_config,
            unprivileged: self.unprivileged,
        }
    }

    // -----------------------------------------------------------------------------------------
    // The repository

    fn repository(&mut self) {
        self.submodule = self.rng.chance(8);
        if self.submodule {
            self.emit("git init -q -b main subrepo");
            self.as_on_windows("subrepo");
            self.emit("printf 'one\\n' >subrepo/s && git -C subrepo add s && git -C subrepo commit -q -m s1 && git -C subrepo tag s1");
            self.emit("printf 'two\\n' >subrepo/s && git -C subrepo commit -q -a -m s2 && git -C subrepo tag s2");
        }
        self.emit("git init -q -b main repo");
        self.emit("cd repo");
        self.as_on_windows(".");
        match self.rng.weighted(&[60, 20, 12, 8]) {
            1 => self.emit("git config core.autocrlf true"),
            2 => self.emit("git config core.autocrlf input"),
            3 => self.emit("git config core.eol crlf"),
            _ => {}
        }
        let mut a = self.random_tree();
        if self.rng.chance(30) {
            a.nodes
                .insert(".gitattributes".into(), Node::file(self.attributes()));
        }
        if self.rng.chance(50) {
            let n = self.rng.range(1, 2);
            for _ in 0..n {
                let line = *self.rng.pick(IGNORES);
                if !self.ignores.contains(&line) {
                    self.ignores.push(line);
                }
            }
            let content = Content::Lines {
                lines: self.ignores.iter().map(|s| s.to_string()).collect(),
                crlf: false,
                final_newline: true,
            };
            a.nodes.insert(".gitignore".into(), Node::file(content));
        }
        let transition = Tree::default().transition(&a);
        self.lines.extend(transition);
        if self.submodule {
            self.emit("git -c protocol.file.allow=always submodule add -q ../subrepo m");
            self.emit("git -C m checkout -q --detach s1 && git add m");
            self.as_on_windows("m");
            a.nodes.insert("m".into(), Node::Gitlink(1));
        }
        self.emit("git add -A -f . && git commit -q -m a");

        let b = self.mutated(&a);
        self.emit("git switch -q -c b");
        self.commit(&a, &b, "b");
        if self.rng.chance(35) {
            let c = self.mutated(&a);
            self.emit("git switch -q -c c main");
            self.commit(&a, &c, "c");
            self.c = Some(c);
        }
        self.detached = self.rng.chance(10);
        self.emit(if self.detached {
            "git switch -q --detach main"
        } else {
            "git switch -q main"
        });
        if self.submodule {
            self.emit("git -c protocol.file.allow=always submodule update -q");
        }
        self.tracked = a.nodes.keys().cloned().collect();
        self.wt = a.clone();
        self.a = a;
        self.b = b;
    }

    fn commit(&mut self, from: &Tree, to: &Tree, name: &str) {
        let transition = from.transition(to);
        self.lines.extend(transition);
        self.emit(format!(
            "git add -A -f . && git commit -q --allow-empty -m {name}"
        ));
    }

    fn random_tree(&mut self) -> Tree {
        let mut tree = Tree::default();
        let n = self.rng.range(2, 12);
        for _ in 0..n {
            let path = self.random_path();
            if tree.fits(&path) {
                let node = self.random_node(&tree, &path);
                tree.nodes.insert(path, node);
            }
        }
        tree
    }

    fn random_path(&mut self) -> String {
        let depth = 1 + self.rng.weighted(&[45, 40, 15]);
        let mut path = self.rng.pick(self.top()).to_string();
        for _ in 1..depth {
            let name = *self.rng.pick(self.sub());
            path.push('/');
            path.push_str(name);
        }
        path
    }

    fn random_node(&mut self, tree: &Tree, path: &str) -> Node {
        if self.windows {
            return Node::file(self.content_for(path));
        }
        if self.rng.chance(18) {
            return Node::Link(self.link_target(tree, path));
        }
        Node::File {
            content: self.content_for(path),
            exec: self.rng.chance(12),
        }
    }

    fn content_for(&mut self, path: &str) -> Content {
        let mut content = Content::random(&mut self.rng);
        if path.ends_with(".id") && self.rng.chance(60) {
            content = Content::Lines {
                lines: vec!["$Id$".into(), model::line(&mut self.rng)],
                crlf: false,
                final_newline: true,
            };
        }
        content
    }

    /// A symlink target: a path of the tree (relative to the link), a directory, a dangling
    /// name, or a path leaving the work tree.
    fn link_target(&mut self, tree: &Tree, path: &str) -> String {
        let up = "../".repeat(path.matches('/').count());
        let paths: Vec<String> = tree.nodes.keys().cloned().collect();
        let dirs: Vec<String> = tree.dirs().into_iter().collect();
        match self.rng.weighted(&[40, 20, 25, 15]) {
            0 if !paths.is_empty() => format!("{up}{}", self.rng.pick(&paths)),
            1 if !dirs.is_empty() => format!("{up}{}", self.rng.pick(&dirs)),
            3 => self
                .rng
                .pick(&["../outside", "/dev/null", ".."])
                .to_string(),
            _ => "nowhere".into(),
        }
    }

    fn attributes(&mut self) -> Content {
        let n = self.rng.range(1, 3);
        let mut lines: Vec<String> = Vec::new();
        for _ in 0..n {
            let line = self.rng.pick(ATTRIBUTES).to_string();
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        Content::Lines {
            lines,
            crlf: false,
            final_newline: true,
        }
    }

    /// `tree` after one to five mutations: edits, deletions, additions, renames, a file that
    /// becomes a directory or the reverse, a file that becomes a symlink or the reverse, a mode
    /// change, new attributes; the submodule moved.
    fn mutated(&mut self, tree: &Tree) -> Tree {
        let mut next = tree.clone();
        let n = self.rng.range(1, 5);
        for _ in 0..n {
            self.mutate_once(&mut next);
        }
        if self.submodule && self.rng.chance(50) {
            next.nodes.insert("m".into(), Node::Gitlink(2));
        }
        next
    }

    fn mutate_once(&mut self, t: &mut Tree) {
        let files = t.files();
        let paths = t.plain_paths();
        let dirs: Vec<String> = t
            .dirs()
            .into_iter()
            .filter(|d| d != "m" && !d.starts_with(".git"))
            .collect();
        match self.rng.weighted(&[35, 12, 15, 8, 8, 6, 6, 6, 4]) {
            0 if !files.is_empty() => {
                let p = self.rng.pick(&files).clone();
                if let Some(Node::File { content, .. }) = t.nodes.get_mut(&p) {
                    *content = content.mutated(&mut self.rng);
                }
            }
            1 if !paths.is_empty() => {
                let p = self.rng.pick(&paths).clone();
                t.nodes.remove(&p);
            }
            3 if !paths.is_empty() => {
                let p = self.rng.pick(&paths).clone();
                let node = t.nodes.remove(&p).expect("picked");
                let q = self.random_path();
                if t.fits(&q) {
                    t.nodes.insert(q, node);
                } else {
                    t.nodes.insert(p, node);
                }
            }
            4 if !files.is_empty() => {
                let p = self.rng.pick(&files).clone();
                t.nodes.remove(&p);
                let q = format!("{p}/{}", self.rng.pick(self.sub()));
                let node = self.random_node(t, &q);
                t.nodes.insert(q, node);
            }
            5 if !dirs.is_empty() => {
                let d = self.rng.pick(&dirs).clone();
                t.remove_all(&d);
                let node = Node::file(self.content_for(&d));
                t.nodes.insert(d, node);
            }
            6 if !self.windows && !paths.is_empty() => {
                let p = self.rng.pick(&paths).clone();
                let node = match t.nodes.get(&p) {
                    Some(Node::Link(_)) => Node::file(self.content_for(&p)),
                    _ => Node::Link(self.link_target(t, &p)),
                };
                t.nodes.insert(p, node);
            }
            7 if !self.windows && !files.is_empty() => {
                let p = self.rng.pick(&files).clone();
                if let Some(Node::File { exec, .. }) = t.nodes.get_mut(&p) {
                    *exec = !*exec;
                }
            }
            8 => {
                if t.nodes.contains_key(".gitattributes") && self.rng.chance(30) {
                    t.nodes.remove(".gitattributes");
                } else {
                    let content = self.attributes();
                    t.nodes.insert(".gitattributes".into(), Node::file(content));
                }
            }
            _ => {
                let p = self.random_path();
                if t.fits(&p) {
                    let node = self.random_node(t, &p);
                    t.nodes.insert(p, node);
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // The work tree

    fn dirty(&mut self) {
        // The work tree's changes are made best effort: where the generator's model of the work
        // tree has drifted from the disk (a sparse checkout removed files, a merge moved them),
        // a change that cannot be made is left out, the same way in both copies.
        self.emit("set +e");
        if self.rng.chance(8) {
            self.sparse_checkout();
        }
        if self.c.is_some() && !self.sparse && self.rng.chance(30) {
            self.emit("git merge -q c >/dev/null 2>&1");
            self.merging = true;
            // Which paths the merge leaves in conflict is git's to say; the model takes `c`'s
            // paths as the work tree's, and both commits' as tracked.
            let c = self.c.clone().expect("checked");
            self.tracked.extend(c.nodes.keys().cloned());
            self.wt = c;
        }
        let n = self.rng.range(0, 6);
        for _ in 0..n {
            self.dirty_once();
        }
        // The script's status is its last command's: a change left out does not fail it.
        self.emit("true");
    }

    fn sparse_checkout(&mut self) {
        let dirs: Vec<String> = self.a.dirs().into_iter().filter(|d| d != "m").collect();
        if self.rng.chance(70) && !dirs.is_empty() {
            let d = self.rng.pick(&dirs).clone();
            self.emit(format!("git sparse-checkout set {}", quote(&d)));
        } else {
            let pattern = self.rng.pick(&["/*.txt", "d/", "!a", "/*"]).to_string();
            self.emit(format!(
                "git sparse-checkout set --no-cone {}",
                quote(&pattern)
            ));
        }
        self.sparse = true;
    }

    fn tracked_files(&self) -> Vec<String> {
        self.wt
            .files()
            .into_iter()
            .filter(|p| self.tracked.contains(p))
            .collect()
    }

    /// One change to the work tree or the index, of a kind drawn with [`DIRTY_WEIGHTS`]; each kind
    /// is one method below. A kind that has nothing to change (no tracked file, no directory)
    /// falls back to a new untracked file, as the last arm says.
    fn dirty_once(&mut self) {
        let files = self.tracked_files();
        let tracked: Vec<String> = self
            .tracked
            .iter()
            .filter(|p| *p != "m" && !p.starts_with(".git"))
            .cloned()
            .collect();
        let dirs: Vec<String> = self
            .wt
            .dirs()
            .into_iter()
            .filter(|d| d != "m" && !d.starts_with(".git"))
            .collect();
        match self.rng.weighted(&DIRTY_WEIGHTS) {
            0 if !files.is_empty() => self.edit_tracked(&files, false),
            1 if !files.is_empty() => self.edit_tracked(&files, true),
            2 if !tracked.is_empty() => self.delete_tracked(&tracked),
            3 => self.new_untracked(None),
            4 => {
                if let Some(p) = self.ignored_place() {
                    self.write_untracked(&p);
                }
            }
            5 => self.new_untracked(Some("git add --sparse -f")),
            6 => self.new_untracked(Some("git add --sparse -f -N")),
            7 if !tracked.is_empty() => self.retype_tracked(&tracked),
            8 if !self.windows && !files.is_empty() => self.flip_exec(&files),
            9 if !tracked.is_empty() => self.touch_in_the_past(&tracked),
            10 if !tracked.is_empty() => self.untrack(&tracked),
            11 if !tracked.is_empty() => self.skip_worktree(&tracked, &files),
            12 if !dirs.is_empty() => self.dir_to_file(&dirs),
            13 if !self.windows && !dirs.is_empty() => self.dir_to_link(&dirs),
            15 if !self.windows && !dirs.is_empty() => self.read_only_dir(&dirs),
            14 if !tracked.is_empty() => self.git_rm(&tracked),
            _ => self.new_untracked(None),
        }
    }

    /// Edits a tracked file (kinds 0 and 1), and stages the edit when `stage`: an unstaged edit
    /// is what a checkout must keep or refuse over, a staged one what it must compare with the
    /// index.
    fn edit_tracked(&mut self, files: &[String], stage: bool) {
        let p = self.rng.pick(files).clone();
        self.edit(&p);
        if stage {
            self.emit(format!("git add --sparse -f {}", quote(&p)));
        }
    }

    /// Deletes a tracked path from the disk only (kind 2): the index still has it.
    fn delete_tracked(&mut self, tracked: &[String]) {
        let p = self.rng.pick(tracked).clone();
        self.emit(format!("rm -rf {}", quote(&p)));
        self.wt.remove_all(&p);
    }

    /// Writes a new file where the target most likely needs the path (kinds 3, 5, 6 and the
    /// fallback), then runs `add` on it when given (`git add`, with `-N` an intent to add), so
    /// that the index tracks it too.
    fn new_untracked(&mut self, add: Option<&str>) {
        if let Some(p) = self.untracked_place() {
            self.write_untracked(&p);
            if let Some(add) = add {
                self.emit(format!("{add} {}", quote(&p)));
                self.tracked.insert(p);
            }
        }
    }

    /// Replaces a tracked path by a directory holding an untracked file, or by a symbolic link
    /// (kind 7): a change of type the index does not know, under or at a tracked path. Left out
    /// where the work tree (as the generator models it) holds a file, link or submodule in the
    /// place of a leading directory of the path.
    fn retype_tracked(&mut self, tracked: &[String]) {
        let p = self.rng.pick(tracked).clone();
        if leading(&p).any(|d| self.wt.nodes.contains_key(d)) {
            return;
        }
        let q = quote(&p);
        self.wt.remove_all(&p);
        if self.rng.chance(60) || self.windows {
            let inside = format!("{p}/inside");
            self.emit(format!("rm -rf {q} && mkdir {q}"));
            self.write_untracked(&inside);
        } else {
            let target = self.link_target(&self.a.clone(), &p);
            self.emit(format!("rm -rf {q}"));
            self.ensure_parent(&p);
            self.emit(format!("ln -s {} {q}", quote(&target)));
            self.wt.nodes.insert(p, Node::Link(target));
        }
    }

    /// Flips the executable bit of a tracked file (kind 8): a change of mode alone.
    fn flip_exec(&mut self, files: &[String]) {
        let p = self.rng.pick(files).clone();
        let flip = match self.wt.nodes.get_mut(&p) {
            Some(Node::File { exec, .. }) => {
                *exec = !*exec;
                if *exec {
                    "+x"
                } else {
                    "-x"
                }
            }
            _ => "+x",
        };
        self.emit(format!("chmod {flip} {}", quote(&p)));
    }

    /// Changes the modification time of a tracked path, not its content (kind 9): the index's
    /// stat data no longer matches, and the content must be compared.
    fn touch_in_the_past(&mut self, tracked: &[String]) {
        let p = self.rng.pick(tracked).clone();
        // A time in the past, not "now": whether "now" falls in the second the file
        // was written decides what git (which counts whole seconds) sees, and that
        // would differ between the two copies.
        self.emit(format!(
            "touch -h -d '2001-02-03 04:05:06' {} 2>/dev/null",
            quote(&p)
        ));
    }

    /// Removes a path from the index and keeps it on the disk (kind 10): it becomes untracked.
    fn untrack(&mut self, tracked: &[String]) {
        let p = self.rng.pick(tracked).clone();
        self.emit(format!(
            "git rm --sparse -q -r --cached {} 2>/dev/null",
            quote(&p)
        ));
        self.tracked.remove(&p);
    }

    /// Marks a tracked path skip-worktree (kind 11), then deletes it half the time, else edits
    /// it if it is a file: what a checkout must do with a path the index says not to look at.
    fn skip_worktree(&mut self, tracked: &[String], files: &[String]) {
        let p = self.rng.pick(tracked).clone();
        self.emit(format!(
            "git update-index --skip-worktree {} 2>/dev/null",
            quote(&p)
        ));
        if self.rng.chance(50) {
            self.emit(format!("rm -rf {}", quote(&p)));
            self.wt.remove_all(&p);
        } else if files.contains(&p) {
            self.edit(&p);
        }
    }

    /// Replaces a directory by an untracked file of the same name (kind 12).
    fn dir_to_file(&mut self, dirs: &[String]) {
        let d = self.rng.pick(dirs).clone();
        self.wt.remove_all(&d);
        self.emit(format!("rm -rf {}", quote(&d)));
        self.write_untracked(&d);
    }

    /// Replaces a directory by a symbolic link that leads out of it, out of the work tree or
    /// nowhere (kind 13): a checkout must not write through it.
    fn dir_to_link(&mut self, dirs: &[String]) {
        let d = self.rng.pick(dirs).clone();
        self.wt.remove_all(&d);
        let target = self.rng.pick(&["..", "../outside", "nowhere"]).to_string();
        self.emit(format!("rm -rf {}", quote(&d)));
        self.ensure_parent(&d);
        self.emit(format!("ln -s {} {}", quote(&target), quote(&d)));
        self.wt.nodes.insert(d, Node::Link(target));
    }

    /// Makes a directory read-only (kind 15): the command then runs without root's permission
    /// bypass, so that git and git-par both meet the refusal.
    fn read_only_dir(&mut self, dirs: &[String]) {
        let d = self.rng.pick(dirs).clone();
        self.emit(format!("chmod 555 {}", quote(&d)));
        self.unprivileged = true;
    }

    /// Removes a tracked path from the index and the disk with `git rm` (kind 14).
    fn git_rm(&mut self, tracked: &[String]) {
        let p = self.rng.pick(tracked).clone();
        self.emit(format!(
            "git rm --sparse -q -r -f {} 2>/dev/null",
            quote(&p)
        ));
        self.tracked.remove(&p);
        self.wt.remove_all(&p);
    }

    fn edit(&mut self, path: &str) {
        let (content, exec) = match self.wt.nodes.get(path) {
            Some(Node::File { content, exec }) => (content.mutated(&mut self.rng), *exec),
            _ => (Content::random(&mut self.rng), false),
        };
        self.ensure_parent(path);
        self.emit(content.write_command(&quote(path)));
        self.wt
            .nodes
            .insert(path.to_owned(), Node::File { content, exec });
    }

    /// Makes the leading directories of `path` (a sparse checkout or an earlier change may
    /// have removed them).
    fn ensure_parent(&mut self, path: &str) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.emit(format!("mkdir -p {}", quote(parent)));
        }
    }

    /// Writes a new (untracked) file at `path`, whose leading directories the work tree has or
    /// can have.
    fn write_untracked(&mut self, path: &str) {
        let content = Content::Lines {
            lines: vec![format!("local {}", model::line(&mut self.rng))],
            crlf: false,
            final_newline: true,
        };
        let node = Node::file(content);
        let mut after = self.wt.clone();
        after.nodes.insert(path.to_owned(), node.clone());
        let mut lines = self.wt.transition(&after);
        lines.retain(|l| !l.starts_with("rm "));
        self.lines.extend(lines);
        self.wt.nodes.insert(path.to_owned(), node);
    }

    /// Where an untracked file goes: most often where the target needs the path (a path only
    /// the target has, or a path inside a directory the target replaces by a file), else
    /// anywhere new.
    fn untracked_place(&mut self) -> Option<String> {
        let target = if self.c.is_some() && self.rng.chance(25) {
            self.c.clone().expect("checked")
        } else {
            self.b.clone()
        };
        let mut candidates: Vec<String> = target
            .nodes
            .keys()
            .filter(|p| !self.a.nodes.contains_key(*p) && *p != "m")
            .cloned()
            .collect();
        for (p, _) in target.nodes.iter() {
            if self.a.is_dir(p) {
                candidates.push(format!("{p}/{}", self.rng.pick(self.sub())));
            }
        }
        for _ in 0..4 {
            let p = if !candidates.is_empty() && self.rng.chance(70) {
                self.rng.pick(&candidates).clone()
            } else {
                self.random_path()
            };
            if self.wt.fits(&p) && !p.starts_with("m/") && p != "m" {
                return Some(p);
            }
        }
        None
    }

    /// Where an ignored file goes: inside a directory the target removes or replaces, or where
    /// the target has a file, when `.gitignore` ignores `*.log`.
    fn ignored_place(&mut self) -> Option<String> {
        if !self.ignores.contains(&"*.log") {
            return self.untracked_place();
        }
        let gone: Vec<String> = self
            .a
            .dirs()
            .into_iter()
            .filter(|d| !self.b.is_dir(d) && d != "m")
            .collect();
        let p = if !gone.is_empty() && self.rng.chance(60) {
            format!("{}/junk.log", self.rng.pick(&gone))
        } else {
            "v.log".to_owned()
        };
        (self.wt.fits(&p) && leading(&p).all(|d| !self.wt.nodes.contains_key(d))).then_some(p)
    }

    // -----------------------------------------------------------------------------------------
    // The command

    fn target(&mut self) -> String {
        let mut targets = vec!["b", "b", "b", "main", "HEAD"];
        if self.c.is_some() {
            targets.push("c");
            targets.push("c");
        }
        self.rng.pick(&targets).to_string()
    }

    fn pathspec(&mut self) -> String {
        let mut paths: Vec<String> = self.a.plain_paths();
        paths.extend(self.b.plain_paths());
        paths.extend(self.wt.plain_paths());
        paths.extend(self.a.dirs());
        match self.rng.weighted(&[70, 8, 8, 6, 4, 4]) {
            0 if !paths.is_empty() => self.rng.pick(&paths).clone(),
            1 => ".".into(),
            2 => "*.txt".into(),
            3 => ":/".into(),
            4 => "d".into(),
            _ => "nope".into(),
        }
    }

    fn pathspecs(&mut self) -> Vec<String> {
        let n = self.rng.weighted(&[0, 75, 20, 5]);
        (0..n).map(|_| self.pathspec()).collect()
    }

    /// The command under test, the directory it runs in and the directories compared after it.
    /// The target (`t`) is drawn first, whether the command uses it or not, then the kind of
    /// command; each kind's arguments are one method below.
    fn command(&mut self) -> (Vec<String>, String, Vec<String>) {
        let t = self.target();
        // In the middle of a conflicted merge, the commands that resolve paths come more often.
        let pick = if self.merging && self.rng.chance(40) {
            *self.rng.pick(&[2, 3])
        } else {
            self.rng.weighted(&COMMAND_WEIGHTS)
        };
        let args = match pick {
            0 => self.switch_args(t),
            1 => self.checkout_args(t),
            2 => self.checkout_paths_args(t),
            3 => self.restore_args(t),
            4 => {
                if self.rng.chance(30) {
                    strings(&["reset", "--hard"])
                } else {
                    vec!["reset".into(), "--hard".into(), t]
                }
            }
            5 => self.status_args(),
            6 => {
                if self.rng.chance(60) {
                    strings(&["update-index", "--refresh"])
                } else {
                    strings(&["update-index", "-q", "--refresh"])
                }
            }
            7 => self.sparse_checkout_args(),
            8 => vec!["merge".into(), "--ff-only".into(), t],
            9 => {
                let mut args = strings(&["clone", "-q"]);
                if self.windows {
                    // The clone configured as Git for Windows' clone (its `git init`) would be.
                    for (key, value) in WINDOWS_CONFIG {
                        args.extend(["-c".into(), format!("{key}={value}")]);
                    }
                }
                if self.rng.chance(40) {
                    args.extend(["-b".into(), "b".into()]);
                }
                args.extend(strings(&["repo", "copy"]));
                return (args, ".".into(), strings(&["repo", "copy"]));
            }
            _ => {
                let args = self.worktree_add_args(t);
                return (args, "repo".into(), strings(&["repo", "wt"]));
            }
        };
        (args, "repo".to_owned(), vec!["repo".to_owned()])
    }

    /// `switch` to the target, in one of [`SWITCH_MODES`].
    fn switch_args(&mut self, t: String) -> Vec<String> {
        let mode = self.rng.pick(SWITCH_MODES);
        let mut args = strings(&["switch"]);
        args.extend(strings(mode));
        args.push(t);
        args
    }

    /// `checkout` of the target as a branch, in one of [`CHECKOUT_MODES`].
    fn checkout_args(&mut self, t: String) -> Vec<String> {
        let mode = self.rng.pick(CHECKOUT_MODES);
        let mut args = strings(&["checkout"]);
        args.extend(strings(mode));
        args.push(t);
        args
    }

    /// `checkout` of paths: from the target, from the index, or one side of a conflict.
    fn checkout_paths_args(&mut self, t: String) -> Vec<String> {
        let mut args = strings(&["checkout"]);
        match self.rng.weighted(&[30, 25, 15, 10, 10, 10]) {
            0 => args.extend([t, "--".into()]),
            1 => args.push("--".into()),
            2 => {}
            3 => args.extend(strings(&["--ours", "--"])),
            4 => args.extend(strings(&["--theirs", "--"])),
            _ => args.extend(strings(&["-m", "--"])),
        }
        args.extend(self.pathspecs());
        args
    }

    /// `restore` of paths: the work tree, the index or both, from the index, the target or one
    /// side of a conflict.
    fn restore_args(&mut self, t: String) -> Vec<String> {
        let mut args = strings(&["restore"]);
        match self.rng.weighted(&[25, 25, 20, 15, 10, 5]) {
            0 => {}
            1 => args.extend(["--source".into(), t]),
            2 => args.push("--staged".into()),
            3 => args.extend(["--staged".into(), "--worktree".into(), "--source".into(), t]),
            4 => args.push("--ours".into()),
            _ => args.push("--merge".into()),
        }
        args.extend(self.pathspecs());
        args
    }

    /// `sparse-checkout` of a directory of either commit (cone mode), or out of sparse mode, or
    /// a non-cone pattern.
    fn sparse_checkout_args(&mut self) -> Vec<String> {
        let mut dirs: Vec<String> = self.b.dirs().into_iter().collect();
        dirs.extend(self.a.dirs());
        dirs.retain(|d| d != "m");
        let dir = if dirs.is_empty() {
            "d".to_owned()
        } else {
            self.rng.pick(&dirs).clone()
        };
        match self.rng.weighted(&[40, 20, 25, 15]) {
            0 => vec!["sparse-checkout".into(), "set".into(), dir],
            1 => vec!["sparse-checkout".into(), "add".into(), dir],
            2 => strings(&["sparse-checkout", "disable"]),
            _ => strings(&["sparse-checkout", "set", "--no-cone", "/*.txt"]),
        }
    }

    /// `worktree add` of a new work tree beside the repository: of `b`, or of the target
    /// detached or on a new branch.
    fn worktree_add_args(&mut self, t: String) -> Vec<String> {
        let mut args = strings(&["worktree", "add"]);
        match self.rng.weighted(&[50, 25, 25]) {
            0 => args.extend(strings(&["../wt", "b"])),
            1 => args.extend(strings(&["--detach", "../wt"]).into_iter().chain([t])),
            _ => args.extend(strings(&["-b", "new", "../wt"]).into_iter().chain([t])),
        }
        args
    }

    fn status_args(&mut self) -> Vec<String> {
        let mut args = vec!["status".to_owned()];
        let format = self
            .rng
            .pick(&["", "-s", "--porcelain", "--porcelain=v2", "--short"]);
        if !format.is_empty() {
            args.push(format.to_string());
        }
        if self.rng.chance(40) {
            args.push("-b".into());
        }
        if self.rng.chance(25) && !format.is_empty() {
            args.push("-z".into());
        }
        if self.rng.chance(40) {
            args.push(self.rng.pick(&["-uno", "-unormal", "-uall"]).to_string());
        }
        if self.rng.chance(25) {
            args.push(
                self.rng
                    .pick(&["--ignored", "--ignored=matching"])
                    .to_string(),
            );
        }
        args
    }
}

/// Owned copies of `words`, for an argument list.
fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

/// The command line of a scenario, for reports: `git switch -m b`.
pub fn describe(command: &[String]) -> String {
    format!("git {}", join(command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_alphabets_hold_only_names_windows_can_hold() {
        for name in TOP_WINDOWS.iter().chain(SUB_WINDOWS) {
            assert!(windows_can_hold(name), "{name}");
        }
        for alphabet in [TOP_WINDOWS, SUB_WINDOWS] {
            let mut folded: Vec<String> = alphabet.iter().map(|n| n.to_lowercase()).collect();
            folded.sort();
            folded.dedup();
            assert_eq!(folded.len(), alphabet.len(), "{alphabet:?}");
        }
        for name in [
            "a.", "a ", "a:b", "a*", "a\\b", "CON", "aux.txt", "Com1", "nul.x.y", "lpt9",
        ] {
            assert!(!windows_can_hold(name), "{name}");
        }
        for name in ["console", "s p", "é", "x.txt", "com10"] {
            assert!(windows_can_hold(name), "{name}");
        }
    }

    #[test]
    fn windows_scenarios_have_no_symlinks_exec_bits_or_read_only_dirs() {
        for seed in 1..2000 {
            let s = scenario_of(seed, Flavour::Windows);
            let script = s.script.as_str();
            for banned in ["ln -s", "chmod"] {
                assert!(!script.contains(banned), "seed {seed}: {script}");
            }
            assert!(!s.unprivileged, "seed {seed}");
            assert!(
                script.contains("git -C . config core.filemode false"),
                "seed {seed}"
            );
            let inits = script.matches("git init").count();
            assert_eq!(
                script.matches("config core.symlinks false").count(),
                inits + usize::from(script.contains("submodule add")),
                "seed {seed}: {script}"
            );
            if s.command[0] == "clone" {
                assert!(s.command.contains(&"core.filemode=false".to_owned()));
            }
        }
    }

    #[test]
    fn the_linux_flavour_is_the_default_scenario() {
        for seed in 1..50 {
            assert_eq!(scenario(seed), scenario_of(seed, Flavour::Linux));
        }
    }
}
