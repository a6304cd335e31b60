//! Helpers shared by the integration tests of the `git-par` binary.
//!
//! Git is the oracle: every test runs real git and git-par on the same input and compares what they
//! leave behind. This module builds the fixture repositories (`tests/fixtures/make_*.sh` at the root of
//! the workspace, built once and cached under `CARGO_TARGET_TMPDIR`, keyed by the scripts' contents and
//! the git version), runs git and git-par in a clean environment, and compares work trees, indexes and
//! repository metadata.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write as _};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;

pub use tempfile::TempDir;

/// The binary under test.
pub const GIT_PAR: &str = env!("CARGO_BIN_EXE_git-par");
const TARGET_TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// `-c checkout.thresholdForParallelism=0`: makes even a small checkout take the parallel path.
pub const THRESHOLD_ZERO: &str = "checkout.thresholdForParallelism=0";

const GITCONFIG: &str = "\
[user]
\tname = Test User
\temail = test@example.com
[init]
\tdefaultBranch = main
[protocol \"file\"]
\tallow = always
[advice]
\tdetachedHead = false
";

// ---------------------------------------------------------------------------------------------------
// Environment and processes

/// `$HOME` of every git and git-par process: holds a minimal `.gitconfig` and nothing else.
pub fn home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let home = Path::new(TARGET_TMP).join("git-par-tests-home");
        fs::create_dir_all(&home).expect("create test HOME");
        let tmp = home.join(format!(".gitconfig.{}", std::process::id()));
        fs::write(&tmp, GITCONFIG).expect("write .gitconfig");
        fs::rename(&tmp, home.join(".gitconfig")).expect("install .gitconfig");
        home
    })
}

/// Clears the environment of `cmd` down to what git needs: no `GIT_DIR` and friends, no system
/// config, `HOME` with a minimal `.gitconfig`, C locale, no standard input.
pub fn clean_env(cmd: &mut Command) -> &mut Command {
    cmd.env_clear();
    for var in [
        "PATH",
        "RUST_BACKTRACE",
        "RUST_LIB_BACKTRACE",
        "LLVM_PROFILE_FILE",
    ] {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    if std::env::var_os("PATH").is_none() {
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    }
    cmd.env("HOME", home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .stdin(Stdio::null())
}

/// What a finished process left: its status and both outputs, plus the command line for messages.
pub struct Run {
    pub command: String,
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Run {
    pub fn success(&self) -> bool {
        self.status.success()
    }
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// Panics, showing both outputs, unless the process exited 0.
    #[track_caller]
    pub fn assert_success(self) -> Self {
        assert!(self.success(), "command failed: {}", self.describe());
        self
    }
    /// Panics unless the process exited non-zero.
    #[track_caller]
    pub fn assert_failure(self) -> Self {
        assert!(
            !self.success(),
            "command succeeded but should have failed: {}",
            self.describe()
        );
        self
    }
    pub fn describe(&self) -> String {
        format!(
            "`{}` exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.command,
            self.status,
            truncate(&self.stdout_str(), 4000),
            truncate(&self.stderr_str(), 4000)
        )
    }
}

/// What git showed for a command, git-par showed too: the exit code, standard error and, with
/// `stdout`, standard output (`what` names the command in the message, which shows both runs).
#[track_caller]
pub fn assert_same_output(what: &str, by_git: &Run, by_par: &Run, stdout: bool) {
    let both = || {
        format!(
            "--- git:\n{}\n--- git-par:\n{}",
            by_git.describe(),
            by_par.describe()
        )
    };
    assert_eq!(
        by_git.status.code(),
        by_par.status.code(),
        "exit code of {what}\n{}",
        both()
    );
    assert_eq!(
        by_git.stderr_str(),
        by_par.stderr_str(),
        "standard error of {what}\n{}",
        both()
    );
    if stdout {
        assert_eq!(
            by_git.stdout_str(),
            by_par.stdout_str(),
            "standard output of {what}\n{}",
            both()
        );
    }
}

/// git sees both repositories the same way after a command: each of `views` (git's arguments)
/// prints the same in both (`after` says after what, in the message).
#[track_caller]
pub fn assert_same_views(by_git: &Path, by_par: &Path, views: &[&[&str]], after: &str) {
    for view in views {
        assert_eq!(
            git(by_git, *view).stdout_str(),
            git(by_par, *view).stdout_str(),
            "`git {view:?}` after {after}"
        );
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... [{} more bytes]", &s[..end], s.len() - end)
}

/// Runs `program args...` in `cwd` with the clean environment.
pub fn run<I, S>(program: impl AsRef<OsStr>, cwd: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_fed(program.as_ref(), cwd, args, None)
}

/// Runs `program args...` in `cwd` with the clean environment and `input` on its standard
/// input. A command that refuses its arguments exits without reading its input (git does
/// too): a broken pipe is then expected, not a failure.
pub fn run_with_input<I, S>(program: impl AsRef<OsStr>, cwd: &Path, args: I, input: &[u8]) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_fed(program.as_ref(), cwd, args, Some(input))
}

fn run_fed<I, S>(program: &OsStr, cwd: &Path, args: I, input: Option<&[u8]>) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let mut command = String::new();
    let _ = write!(command, "{}", Path::new(program).display());
    for arg in &args {
        let _ = write!(command, " {}", arg.to_string_lossy());
    }
    let _ = write!(command, "  (in {})", cwd.display());
    let mut cmd = Command::new(program);
    clean_env(&mut cmd).current_dir(cwd).args(&args);
    let output = match input {
        None => cmd.output(),
        Some(input) => cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                let fed = child.stdin.take().expect("piped").write_all(input);
                if let Err(e) = fed {
                    assert_eq!(
                        e.kind(),
                        std::io::ErrorKind::BrokenPipe,
                        "feeding {command}: {e}"
                    );
                }
                child.wait_with_output()
            }),
    };
    let output = output.unwrap_or_else(|e| panic!("cannot run {command}: {e}"));
    Run {
        command,
        status: output.status,
        stdout: output.stdout,
        stderr: output.stderr,
    }
}

/// Runs git in `cwd`; returns whatever happened.
pub fn git<I, S>(cwd: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run("git", cwd, args)
}

/// Runs `program ARGS` in `cwd` with the tests' clean environment plus `env`.
pub fn run_with<S: AsRef<OsStr>, V: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    cwd: &Path,
    args: &[S],
    env: &[(&str, V)],
) -> Run {
    let program = program.as_ref();
    let mut cmd = Command::new(program);
    clean_env(&mut cmd).current_dir(cwd).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the command");
    let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    Run {
        command: format!(
            "{} {args:?} (in {})",
            program.to_string_lossy(),
            cwd.display()
        ),
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// Runs `program ARGS` in `cwd` with fixed author and committer dates, so that two sides that
/// commit the same change make the same commit, however long apart they run.
pub fn run_dated(program: impl AsRef<OsStr>, cwd: &Path, args: &[&str]) -> Run {
    let date = OsString::from("1700000000 +0000");
    let env = [
        ("GIT_AUTHOR_DATE", date.clone()),
        ("GIT_COMMITTER_DATE", date),
    ];
    run_with(program, cwd, args, &env)
}

/// [`run_dated`] for git.
pub fn git_dated(cwd: &Path, args: &[&str]) -> Run {
    run_dated("git", cwd, args)
}

/// Runs git in `cwd`, panics unless it succeeds, returns its standard output.
#[track_caller]
pub fn git_ok<I, S>(cwd: &Path, args: I) -> Vec<u8>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    git(cwd, args).assert_success().stdout
}

/// Like [`git_ok`], as a string with the trailing newline removed.
#[track_caller]
pub fn git_str<I, S>(cwd: &Path, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = git_ok(cwd, args);
    String::from_utf8_lossy(&out)
        .trim_end_matches('\n')
        .to_owned()
}

/// Runs the git-par binary in `cwd`.
pub fn git_par<I, S>(cwd: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run(GIT_PAR, cwd, args)
}

/// `["-c", kv1, "-c", kv2, ...]`: the global options that set `config` for one git or git-par run.
pub fn config_args(config: &[String]) -> Vec<OsString> {
    config
        .iter()
        .flat_map(|kv| [OsString::from("-c"), OsString::from(kv)])
        .collect()
}

// ---------------------------------------------------------------------------------------------------
// Settings of a run: the matrix of the checkout tests

/// How git-par is asked to check out: `-j N` with `checkout.thresholdForParallelism=0`, or defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settings {
    /// `-c checkout.thresholdForParallelism=0 <cmd> -j N`.
    Jobs(u32),
    /// No `-j`, no `-c`: whatever git-par decides by itself.
    Default,
}

impl Settings {
    /// The `-c key=value` entries this setting adds (given to git-par and to the git oracle alike).
    pub fn config(self) -> Vec<String> {
        match self {
            Settings::Jobs(_) => vec![THRESHOLD_ZERO.to_owned()],
            Settings::Default => Vec::new(),
        }
    }
    /// `checkout.workers=N` for `Jobs(N)`: the writer count of commands whose `-j` is git's
    /// (`clone`).
    pub fn workers_config(self) -> Vec<String> {
        match self {
            Settings::Jobs(n) => vec![format!("checkout.workers={n}")],
            Settings::Default => Vec::new(),
        }
    }
    /// The options this setting adds after the git-par subcommand name.
    pub fn subcommand_args(self) -> Vec<OsString> {
        match self {
            Settings::Jobs(n) => vec!["-j".into(), n.to_string().into()],
            Settings::Default => Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Fixtures

/// The fixture scripts of `tests/fixtures/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixture {
    KitchenSink,
    ManyFiles,
    BigFile,
    Filter,
    Encoding,
    /// Not one repository: a directory holding one repository per hostile case.
    Hostile,
}

impl Fixture {
    const ALL: [Fixture; 6] = [
        Fixture::KitchenSink,
        Fixture::ManyFiles,
        Fixture::BigFile,
        Fixture::Filter,
        Fixture::Encoding,
        Fixture::Hostile,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Fixture::KitchenSink => "kitchen_sink",
            Fixture::ManyFiles => "many_files",
            Fixture::BigFile => "big_file",
            Fixture::Filter => "filter",
            Fixture::Encoding => "encoding",
            Fixture::Hostile => "hostile",
        }
    }
    fn index(self) -> usize {
        Self::ALL.iter().position(|f| *f == self).unwrap()
    }
}

/// `tests/fixtures` at the root of the workspace.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .canonicalize()
        .expect("tests/fixtures exists")
}

/// The repository the fixture script built (for [`Fixture::Hostile`]: the directory of the case
/// repositories). Built at most once per test process and cached on disk between runs; never modify
/// it: clone or copy it.
pub fn fixture(f: Fixture) -> &'static Path {
    static CELLS: [OnceLock<PathBuf>; 6] = [const { OnceLock::new() }; 6];
    CELLS[f.index()].get_or_init(|| build_fixture(f))
}

/// The case repository `case` of the hostile fixture.
pub fn hostile_case(case: &str) -> PathBuf {
    let dir = fixture(Fixture::Hostile).join(case);
    assert!(
        dir.join(".git").is_dir(),
        "make_hostile.sh built no repository for case {case}"
    );
    dir
}

/// The case names `make_hostile.sh --list` prints.
pub fn hostile_case_names() -> Vec<String> {
    let script = fixtures_dir().join("make_hostile.sh");
    let out = run(
        "bash",
        &fixtures_dir(),
        [script.as_os_str(), OsStr::new("--list")],
    )
    .assert_success();
    out.stdout_str().lines().map(str::to_owned).collect()
}

fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *hash ^= u64::from(*b);
        *hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
}

fn build_fixture(f: Fixture) -> PathBuf {
    build_named_fixture(f.name())
}

/// Builds `tests/fixtures/make_<name>.sh` into the on-disk cache (or finds it there) and returns the
/// repository it made.
fn build_named_fixture(name: &str) -> PathBuf {
    let dir = fixtures_dir();
    let script = dir.join(format!("make_{name}.sh"));
    let mut key = 0xcbf2_9ce4_8422_2325_u64;
    for file in [&script, &dir.join("lib.sh")] {
        let bytes = fs::read(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        fnv1a(&mut key, &bytes);
    }
    fnv1a(&mut key, &git_ok(&dir, ["--version"]));

    let root = Path::new(TARGET_TMP).join("fixtures");
    let done = root.join(format!("{name}-{key:016x}"));
    let repo = done.join("repo");
    if repo.exists() {
        return repo;
    }
    fs::create_dir_all(&root).expect("create fixture cache");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let building = root.join(format!(".building-{name}-{}-{nanos}", std::process::id()));
    fs::create_dir_all(&building).expect("create fixture build dir");
    let started = std::time::Instant::now();
    let out = run(
        "bash",
        &building,
        [script.as_os_str(), building.join("repo").as_os_str()],
    );
    assert!(
        out.success(),
        "fixture script {} failed: {}",
        script.display(),
        out.describe()
    );
    eprintln!("built fixture {name} in {:.1?}", started.elapsed());
    if fs::rename(&building, &done).is_err() {
        // Another test process finished the same fixture first: use its copy.
        assert!(repo.exists(), "cannot install fixture {}", done.display());
        let _ = fs::remove_dir_all(&building);
    }
    repo
}

/// A fresh, empty, canonical directory for one test, removed when the guard drops. It lives under
/// `CARGO_TARGET_TMPDIR`, on the same filesystem as the fixtures (so `git clone --local` hardlinks).
pub struct Scratch {
    _guard: TempDir,
    path: PathBuf,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.path.join(p)
    }
}

/// A new repository `name` under `parent` (`git init -q -b main`), its path.
pub fn init_repo(parent: &Path, name: &str) -> PathBuf {
    let repo = parent.join(name);
    git_ok(parent, ["init", "-q", "-b", "main", repo.to_str().unwrap()]);
    repo
}

/// Write each of `paths` in `repo` (its leading directories made) holding its own path and a
/// newline, and commit them all as "one".
pub fn commit_files(repo: &Path, paths: &[&str]) {
    for path in paths {
        let file = repo.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, format!("{path}\n")).unwrap();
    }
    git_ok(repo, ["add", "."]);
    git_ok(repo, ["commit", "-q", "-m", "one"]);
}

/// The shared index git names for the index of the work tree `dir` (`git rev-parse
/// --shared-index-path`): empty when the index is not split.
pub fn shared_index(dir: &Path) -> String {
    git_str(dir, ["rev-parse", "--shared-index-path"])
        .trim()
        .to_owned()
}

pub fn scratch() -> Scratch {
    let root = Path::new(TARGET_TMP).join("scratch");
    fs::create_dir_all(&root).expect("create scratch root");
    let guard = tempfile::Builder::new()
        .prefix("t-")
        .tempdir_in(&root)
        .expect("create scratch dir");
    let path = guard.path().canonicalize().expect("canonical scratch dir");
    Scratch {
        _guard: guard,
        path,
    }
}

/// Copies a repository (work tree and `.git`) exactly, with `cp -a`.
pub fn copy_repo(from: &Path, to: &Path) {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).expect("create parent of copy");
    }
    run(
        "cp",
        Path::new("/"),
        [OsStr::new("-a"), from.as_os_str(), to.as_os_str()],
    )
    .assert_success();
}

/// Copies only the `.git` directory of a repository (`cp -a`), so `to` is the same repository with
/// an empty main work tree: enough for `git worktree add`, and much cheaper for big fixtures.
pub fn copy_git_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create copy");
    run(
        "cp",
        Path::new("/"),
        [
            OsStr::new("-a"),
            from.join(".git").as_os_str(),
            to.join(".git").as_os_str(),
        ],
    )
    .assert_success();
}

/// `to` expressed relative to the directory `from` (both absolute).
pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..from.len() {
        rel.push("..");
    }
    for c in &to[common..] {
        rel.push(c);
    }
    rel
}

// ---------------------------------------------------------------------------------------------------
// Clone and worktree add, by git and by git-par

/// Options of a clone, given to `git clone` and `git-par clone` alike.
#[derive(Clone, Debug, Default)]
pub struct CloneOpts {
    /// `-c key=value` global options.
    pub config: Vec<String>,
    pub quiet: bool,
    pub no_checkout: bool,
    pub branch: Option<String>,
}

fn clone_args(opts: &CloneOpts) -> Vec<OsString> {
    let mut args = Vec::new();
    if opts.quiet {
        args.push("-q".into());
    }
    if opts.no_checkout {
        args.push("--no-checkout".into());
    }
    if let Some(b) = &opts.branch {
        args.push("-b".into());
        args.push(b.into());
    }
    args
}

/// `git [-c ...] clone --local [opts] SRC DST` in `cwd`.
pub fn git_clone(
    cwd: &Path,
    opts: &CloneOpts,
    src: impl AsRef<OsStr>,
    dst: impl AsRef<OsStr>,
) -> Run {
    let mut args = config_args(&opts.config);
    args.push("clone".into());
    args.push("--local".into());
    args.extend(clone_args(opts));
    args.push(src.as_ref().to_owned());
    args.push(dst.as_ref().to_owned());
    git(cwd, args)
}

/// `git-par [-c ...] [-c checkout.workers=N] clone [opts] SRC DST` in `cwd` (`-j` of clone is
/// git's, for submodules: the writer count is configuration).
pub fn git_par_clone(
    cwd: &Path,
    opts: &CloneOpts,
    settings: Settings,
    src: impl AsRef<OsStr>,
    dst: impl AsRef<OsStr>,
) -> Run {
    let mut config = opts.config.clone();
    config.extend(settings.config());
    config.extend(settings.workers_config());
    let mut args = config_args(&config);
    args.push("clone".into());
    args.extend(clone_args(opts));
    args.push(src.as_ref().to_owned());
    args.push(dst.as_ref().to_owned());
    git_par(cwd, args)
}

/// `git [-c ...] worktree add ARGS...` in `cwd` (the repository).
pub fn git_worktree_add<S: AsRef<OsStr>>(cwd: &Path, config: &[String], args: &[S]) -> Run {
    let mut all = config_args(config);
    all.push("worktree".into());
    all.push("add".into());
    all.extend(args.iter().map(|a| a.as_ref().to_owned()));
    git(cwd, all)
}

/// `git-par [-c ...] worktree add [-j N] ARGS...` in `cwd` (the repository).
pub fn git_par_worktree_add<S: AsRef<OsStr>>(
    cwd: &Path,
    config: &[String],
    settings: Settings,
    args: &[S],
) -> Run {
    let mut config = config.to_vec();
    config.extend(settings.config());
    let mut all = config_args(&config);
    all.push("worktree".into());
    all.push("add".into());
    all.extend(settings.subcommand_args());
    all.extend(args.iter().map(|a| a.as_ref().to_owned()));
    git_par(cwd, all)
}

// ---------------------------------------------------------------------------------------------------
// Work tree comparison

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir { perm: u32 },
    File { perm: u32, len: u64 },
    Symlink { target: OsString },
    Other { file_type: String },
}

/// Every path under `root` (relative, as bytes), `.git` at the top skipped, with what it is.
fn walk(root: &Path) -> BTreeMap<Vec<u8>, Node> {
    let mut out = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let entries =
            fs::read_dir(&dir).unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.expect("read_dir entry");
            let name = entry.file_name();
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let rel_path = rel.join(&name);
            let md = fs::symlink_metadata(root.join(&rel_path)).expect("lstat");
            let ft = md.file_type();
            let perm = md.mode() & 0o7777;
            let node = if ft.is_symlink() {
                Node::Symlink {
                    target: fs::read_link(root.join(&rel_path))
                        .expect("readlink")
                        .into_os_string(),
                }
            } else if ft.is_dir() {
                stack.push(rel_path.clone());
                Node::Dir { perm }
            } else if ft.is_file() {
                Node::File {
                    perm,
                    len: md.len(),
                }
            } else {
                Node::Other {
                    file_type: format!("{ft:?}"),
                }
            };
            out.insert(rel_path.into_os_string().into_vec(), node);
        }
    }
    out
}

fn same_bytes(a: &Path, b: &Path, len: u64) -> bool {
    if len <= 1 << 22 {
        let read = |p: &Path| fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        return read(a) == read(b);
    }
    let mut fa = fs::File::open(a).unwrap_or_else(|e| panic!("open {}: {e}", a.display()));
    let mut fb = fs::File::open(b).unwrap_or_else(|e| panic!("open {}: {e}", b.display()));
    let mut ba = vec![0u8; 1 << 22];
    let mut bb = vec![0u8; 1 << 22];
    loop {
        let na = read_full(&mut fa, &mut ba);
        let nb = read_full(&mut fb, &mut bb);
        if na != nb || ba[..na] != bb[..nb] {
            return false;
        }
        if na == 0 {
            return true;
        }
    }
}

fn read_full(f: &mut fs::File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]).expect("read") {
            0 => break,
            k => n += k,
        }
    }
    n
}

fn show(path: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(path))
}

/// Panics unless the work trees `expected` (made by git) and `actual` (made by git-par) hold the same
/// paths (`.git` at the top skipped; empty directories such as unpopulated gitlinks included), each
/// of the same type, permission bits (so the exec bit), symlink target and bytes.
#[track_caller]
pub fn compare_worktrees(expected: &Path, actual: &Path) {
    let a = walk(expected);
    let b = walk(actual);
    let mut problems = Vec::new();
    for (path, node) in &a {
        match b.get(path) {
            None => problems.push(format!(
                "missing in git-par's tree: {} ({node:?})",
                show(path)
            )),
            Some(other) if other != node => problems.push(format!(
                "differs: {}: git has {node:?}, git-par has {other:?}",
                show(path)
            )),
            Some(Node::File { len, .. }) => {
                let rel = Path::new(OsStr::from_bytes(path));
                if !same_bytes(&expected.join(rel), &actual.join(rel), *len) {
                    problems.push(format!("content differs: {}", show(path)));
                }
            }
            Some(_) => {}
        }
    }
    for (path, node) in &b {
        if !a.contains_key(path) {
            problems.push(format!("only in git-par's tree: {} ({node:?})", show(path)));
        }
    }
    if !problems.is_empty() {
        let total = problems.len();
        problems.truncate(40);
        panic!(
            "work trees differ ({total} problems; git: {}, git-par: {}):\n  {}",
            expected.display(),
            actual.display(),
            problems.join("\n  ")
        );
    }
}

/// The names directly in `dir`, sorted (empty when `dir` does not exist).
pub fn dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| {
            e.expect("read_dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------------
// Index

/// `git ls-files -s` in `dir` (with the `-c` options `config`).
pub fn index_listing(dir: &Path, config: &[String]) -> String {
    let mut args = config_args(config);
    args.extend(["ls-files".into(), "-s".into()]);
    String::from_utf8_lossy(&git_ok(dir, args)).into_owned()
}

/// One entry of `git ls-files -s --debug`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub mode: String,
    pub oid: String,
    pub stage: String,
    pub path: Vec<u8>,
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub dev: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
    /// git's in-memory `ce_flags`.
    pub flags: u32,
}

fn parse_pair(value: &str) -> (u32, u32) {
    let (s, n) = value.split_once(':').expect("S:N");
    (s.parse().expect("seconds"), n.parse().expect("nanoseconds"))
}

/// `git ls-files -z -s --debug` in `dir`, parsed. Does not refresh or write the index.
pub fn index_entries(dir: &Path, config: &[String]) -> Vec<IndexEntry> {
    let mut args = config_args(config);
    args.extend([
        "ls-files".into(),
        "-z".into(),
        "-s".into(),
        "--debug".into(),
    ]);
    let out = git_ok(dir, args);
    let mut entries = Vec::new();
    let mut rest: &[u8] = &out;
    while !rest.is_empty() {
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .expect("NUL after the entry name");
        let header = &rest[..nul];
        rest = &rest[nul + 1..];
        let tab = header
            .iter()
            .position(|&b| b == b'\t')
            .expect("tab in header");
        let meta = String::from_utf8_lossy(&header[..tab]).into_owned();
        let mut meta = meta.split(' ');
        let (mode, oid, stage) = (
            meta.next().expect("mode").to_owned(),
            meta.next().expect("oid").to_owned(),
            meta.next().expect("stage").to_owned(),
        );
        let mut fields = BTreeMap::new();
        for _ in 0..5 {
            let nl = rest.iter().position(|&b| b == b'\n').expect("debug line");
            let line = String::from_utf8_lossy(&rest[..nl]).into_owned();
            rest = &rest[nl + 1..];
            for part in line.split('\t') {
                let (k, v) = part.trim().split_once(": ").expect("key: value");
                fields.insert(k.to_owned(), v.to_owned());
            }
        }
        let num = |k: &str| -> u32 { fields[k].parse().unwrap_or_else(|_| panic!("field {k}")) };
        entries.push(IndexEntry {
            mode,
            oid,
            stage,
            path: header[tab + 1..].to_vec(),
            ctime: parse_pair(&fields["ctime"]),
            mtime: parse_pair(&fields["mtime"]),
            dev: num("dev"),
            ino: num("ino"),
            uid: num("uid"),
            gid: num("gid"),
            size: num("size"),
            // git prints the flags in hexadecimal.
            flags: u32::from_str_radix(&fields["flags"], 16).expect("field flags"),
        });
    }
    entries
}

/// The index as `git ls-files -s --debug` shows it, minus the fields that depend on when and where
/// the files were written (ctime, mtime, dev, ino): mode, id, stage, path, uid, gid, size, flags.
pub fn index_debug_without_stat(dir: &Path, config: &[String]) -> Vec<String> {
    index_entries(dir, config)
        .into_iter()
        .map(|e| {
            format!(
                "{} {} {}\t{}  uid: {} gid: {} size: {} flags: {}",
                e.mode,
                e.oid,
                e.stage,
                show(&e.path),
                e.uid,
                e.gid,
                e.size,
                e.flags
            )
        })
        .collect()
}

/// Panics unless the indexes of `expected` (git) and `actual` (git-par) list the same entries
/// (`git ls-files -s`) with the same non-stat debug fields.
#[track_caller]
pub fn compare_indexes(expected: &Path, actual: &Path, config: &[String]) {
    assert_eq!(
        index_listing(expected, config),
        index_listing(actual, config),
        "`git ls-files -s` differs (left: git, right: git-par)"
    );
    let a = index_debug_without_stat(expected, config);
    let b = index_debug_without_stat(actual, config);
    if a != b {
        let diffs: Vec<String> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .take(20)
            .map(|(x, y)| format!("git:     {x}\ngit-par: {y}"))
            .collect();
        panic!(
            "`git ls-files -s --debug` (without stat fields) differs: git has {} entries, git-par {}\n{}",
            a.len(),
            b.len(),
            diffs.join("\n")
        );
    }
}

/// Panics unless every index entry of `dir` (gitlinks skipped) carries the real `lstat` data of its
/// file: ctime, mtime (seconds and nanoseconds), dev, ino, uid, gid and size as git truncates them to
/// 32 bits; and unless `git diff-files --quiet` (which compares stat data without refreshing the
/// index and without hashing stat-clean files) finds nothing. Run it before any git command that may
/// refresh or rewrite the index (status, update-index, checkout...).
#[track_caller]
pub fn assert_real_stat(dir: &Path, config: &[String]) {
    assert_real_stat_except(dir, config, &[]);
    let mut args = config_args(config);
    args.extend(["diff-files".into(), "--name-only".into()]);
    let out = git(dir, args).assert_success();
    assert!(
        out.stdout.is_empty(),
        "`git diff-files` (no refresh) in {} calls these entries modified: their stat data differs \
         from the index, or they are racily clean and their content does not convert back to the \
         indexed blob:\n{}",
        dir.display(),
        truncate(&out.stdout_str(), 4000)
    );
}

// ---------------------------------------------------------------------------------------------------
// Status

/// What git says about the state of a work tree: porcelain status, `update-index --refresh`, and
/// `diff-index --quiet HEAD` (with and without `--cached`).
#[derive(Debug, PartialEq, Eq)]
pub struct Cleanliness {
    pub status_porcelain: String,
    pub refresh_exit: Option<i32>,
    pub refresh_output: String,
    pub diff_index_exit: Option<i32>,
    pub diff_index_cached_exit: Option<i32>,
}

impl Cleanliness {
    pub fn is_clean(&self) -> bool {
        self.status_porcelain.is_empty()
            && self.refresh_exit == Some(0)
            && self.refresh_output.is_empty()
            && self.diff_index_exit == Some(0)
            && self.diff_index_cached_exit == Some(0)
    }
}

/// Collects [`Cleanliness`] of `dir`. Refreshes the index: run [`assert_real_stat`] first.
pub fn cleanliness(dir: &Path, config: &[String]) -> Cleanliness {
    let with = |extra: &[&str]| {
        let mut args = config_args(config);
        args.extend(extra.iter().map(OsString::from));
        git(dir, args)
    };
    let status = with(&["status", "--porcelain", "--untracked-files=all"]).assert_success();
    let refresh = with(&["update-index", "--refresh"]);
    let diff_index = with(&["diff-index", "--quiet", "HEAD", "--"]);
    let diff_index_cached = with(&["diff-index", "--quiet", "--cached", "HEAD", "--"]);
    Cleanliness {
        status_porcelain: status.stdout_str(),
        refresh_exit: refresh.status.code(),
        refresh_output: refresh.stdout_str() + &refresh.stderr_str(),
        diff_index_exit: diff_index.status.code(),
        diff_index_cached_exit: diff_index_cached.status.code(),
    }
}

/// Panics unless `git status --porcelain`, `git update-index --refresh` and `git diff-index --quiet
/// HEAD` say of `actual` (git-par) what they say of `expected` (git). Refreshes both indexes: run
/// [`assert_real_stat`] first.
#[track_caller]
pub fn assert_status_like_git(expected: &Path, actual: &Path, config: &[String]) {
    let git_side = cleanliness(expected, config);
    let par_side = cleanliness(actual, config);
    assert_eq!(
        git_side, par_side,
        "git's view of the work tree differs (left: after git, right: after git-par)"
    );
}

/// Panics unless `dir` is clean by `git status --porcelain`, `git update-index --refresh` and
/// `git diff-index --quiet HEAD`.
#[track_caller]
pub fn assert_clean(dir: &Path, config: &[String]) {
    let c = cleanliness(dir, config);
    assert!(c.is_clean(), "{} is not clean: {c:#?}", dir.display());
}

// ---------------------------------------------------------------------------------------------------
// Repository metadata

fn git_opt(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    if out.success() {
        out.stdout_str().trim_end_matches('\n').to_owned()
    } else {
        format!("<exit {:?}>", out.status.code())
    }
}

/// HEAD, branch, refs and remote setup of the repository at `dir`, labelled, for comparing a git-par
/// clone with a git clone of the same source.
pub fn clone_metadata(dir: &Path) -> Vec<(&'static str, String)> {
    let head_ref = git_opt(dir, &["symbolic-ref", "-q", "HEAD"]);
    let branch = head_ref
        .strip_prefix("refs/heads/")
        .unwrap_or("")
        .to_owned();
    vec![
        ("rev-parse HEAD", git_opt(dir, &["rev-parse", "HEAD"])),
        ("symbolic-ref HEAD", head_ref),
        (
            "for-each-ref",
            git_opt(
                dir,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname) %(symref)",
                ],
            ),
        ),
        (
            "remote.origin.url",
            git_opt(dir, &["config", "--get-all", "remote.origin.url"]),
        ),
        (
            "remote.origin.fetch",
            git_opt(dir, &["config", "--get-all", "remote.origin.fetch"]),
        ),
        (
            "branch.<head>.remote",
            git_opt(
                dir,
                &["config", "--get-all", &format!("branch.{branch}.remote")],
            ),
        ),
        (
            "branch.<head>.merge",
            git_opt(
                dir,
                &["config", "--get-all", &format!("branch.{branch}.merge")],
            ),
        ),
    ]
}

/// Panics unless `git fsck` and `git log` work in `dir`.
#[track_caller]
pub fn assert_repository_usable(dir: &Path) {
    git(dir, ["fsck", "--no-progress"]).assert_success();
    git(dir, ["log", "--oneline", "-n", "3"]).assert_success();
}

// ---------------------------------------------------------------------------------------------------
// Hostile input

/// The marker every hostile payload carries in its name or content.
pub const PAYLOAD_NAME: &str = "pwned";
pub const PAYLOAD_MARKER: &[u8] = b"pwned-by-hostile-tree";
/// Where the `absolute` hostile case points.
pub const ABSOLUTE_TARGET: &str = "/tmp/git-par-hostile-absolute";

/// Every file under `root` (not following symlinks, `objects` directories skipped) that is named
/// like the payload or holds the payload marker.
pub fn find_payloads(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let entry = entry.expect("read_dir entry");
            let path = entry.path();
            let name = entry.file_name();
            let Ok(md) = fs::symlink_metadata(&path) else {
                continue;
            };
            if name.as_bytes() == PAYLOAD_NAME.as_bytes() {
                found.push(path.clone());
            }
            if md.is_dir() {
                if name != "objects" {
                    stack.push(path);
                }
            } else if md.is_file() && md.len() <= 1 << 20 {
                if let Ok(bytes) = fs::read(&path) {
                    if bytes
                        .windows(PAYLOAD_MARKER.len())
                        .any(|w| w == PAYLOAD_MARKER)
                    {
                        found.push(path);
                    }
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// A file and a directory with a file, placed beside a destination to prove nothing is written
/// outside it.
pub struct Canary {
    pub file: PathBuf,
    pub dir_file: PathBuf,
}

pub const CANARY_BYTES: &[u8] = b"canary: must stay byte-identical\n";

impl Canary {
    pub fn plant(parent: &Path) -> Canary {
        let file = parent.join("canary");
        fs::write(&file, CANARY_BYTES).expect("write canary");
        let dir = parent.join("canary-dir");
        fs::create_dir_all(&dir).expect("create canary dir");
        let dir_file = dir.join("canary");
        fs::write(&dir_file, CANARY_BYTES).expect("write canary");
        Canary { file, dir_file }
    }
    #[track_caller]
    pub fn assert_intact(&self) {
        for f in [&self.file, &self.dir_file] {
            let md = fs::symlink_metadata(f)
                .unwrap_or_else(|e| panic!("canary {} gone: {e}", f.display()));
            assert!(
                md.is_file(),
                "canary {} is no longer a plain file",
                f.display()
            );
            assert_eq!(
                fs::read(f).unwrap(),
                CANARY_BYTES,
                "canary {} changed",
                f.display()
            );
        }
        assert_eq!(
            dir_names(self.dir_file.parent().unwrap()),
            vec!["canary".to_owned()],
            "something was written into the canary directory"
        );
    }
}

// ---------------------------------------------------------------------------------------------------
// Fixtures by name, stat snapshots, stat checks that tolerate local modifications

/// The repository that `tests/fixtures/make_<name>.sh` built: like [`fixture`], for scripts that have
/// no [`Fixture`] variant (built at most once per test process, cached on disk between runs). Never
/// modify it: clone or copy it.
pub fn fixture_named(name: &str) -> &'static Path {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static CELLS: OnceLock<Mutex<HashMap<String, &'static OnceLock<PathBuf>>>> = OnceLock::new();
    let cell: &'static OnceLock<PathBuf> = {
        let mut cells = CELLS
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        cells
            .entry(name.to_owned())
            .or_insert_with(|| Box::leak(Box::new(OnceLock::new())))
    };
    cell.get_or_init(|| build_named_fixture(name))
}

/// What `lstat` says of one path, enough to tell whether it was rewritten, replaced, chmod-ed or (for
/// a directory) had entries created or removed in it: type and permission bits, inode, size, mtime and
/// ctime (with nanoseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatId {
    pub mode: u32,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

/// [`StatId`] of every path under `root` (relative, as bytes; `.git` at the top skipped; symlinks
/// not followed), the root directory itself included as the empty path.
pub fn stat_snapshot(root: &Path) -> BTreeMap<Vec<u8>, StatId> {
    let stat = |p: &Path| {
        let md = fs::symlink_metadata(p).unwrap_or_else(|e| panic!("lstat {}: {e}", p.display()));
        StatId {
            mode: md.mode(),
            ino: md.ino(),
            size: md.size(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        }
    };
    let mut out = BTreeMap::new();
    out.insert(Vec::new(), stat(root));
    for path in walk(root).keys() {
        out.insert(path.clone(), stat(&root.join(OsStr::from_bytes(path))));
    }
    out
}

/// Panics unless `root` still holds exactly the paths of `before` (a [`stat_snapshot`]) with the same
/// stat data: nothing created, removed, rewritten or chmod-ed.
#[track_caller]
pub fn assert_stat_unchanged(before: &BTreeMap<Vec<u8>, StatId>, root: &Path, who: &str) {
    let after = stat_snapshot(root);
    let mut problems = Vec::new();
    for (path, b) in before {
        match after.get(path) {
            None => problems.push(format!("removed: {}", show(path))),
            Some(a) if a != b => problems.push(format!("changed: {}: {b:?} -> {a:?}", show(path))),
            Some(_) => {}
        }
    }
    for path in after.keys() {
        if !before.contains_key(path) {
            problems.push(format!("created: {}", show(path)));
        }
    }
    if !problems.is_empty() {
        problems.truncate(40);
        panic!(
            "{who} touched the work tree {}:\n  {}",
            root.display(),
            problems.join("\n  ")
        );
    }
}

/// `git diff-files --name-only -z` in `dir` (compares stat data without refreshing or writing the
/// index; re-hashes only racily clean entries): the paths git calls modified or deleted in the work
/// tree.
pub fn diff_files_names(dir: &Path, config: &[String]) -> Vec<Vec<u8>> {
    let mut args = config_args(config);
    args.extend(["diff-files".into(), "--name-only".into(), "-z".into()]);
    git_ok(dir, args)
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// git's in-memory `CE_SKIP_WORKTREE` bit, as `git ls-files --debug` prints the flags.
const CE_SKIP_WORKTREE: u32 = 1 << 30;

/// Like [`assert_real_stat`] for a work tree that may hold local modifications: panics unless every
/// index entry of `dir` (gitlinks, skip-worktree entries — sparse checkout leaves them out of the
/// work tree, and git's `diff-files` does not look at them — and the paths in `skip` excepted)
/// carries the real `lstat` data of its file. Does not refresh or write the index.
#[track_caller]
pub fn assert_real_stat_except(dir: &Path, config: &[String], skip: &[Vec<u8>]) {
    let mut problems = Vec::new();
    let entries = index_entries(dir, config);
    for e in &entries {
        if e.mode == "160000" || e.flags & CE_SKIP_WORKTREE != 0 || skip.contains(&e.path) {
            continue;
        }
        let path = dir.join(OsStr::from_bytes(&e.path));
        let md = match fs::symlink_metadata(&path) {
            Ok(md) => md,
            Err(err) => {
                problems.push(format!("{}: lstat failed: {err}", show(&e.path)));
                continue;
            }
        };
        let real = (
            (md.ctime() as u32, md.ctime_nsec() as u32),
            (md.mtime() as u32, md.mtime_nsec() as u32),
            md.dev() as u32,
            md.ino() as u32,
            md.uid(),
            md.gid(),
            md.size() as u32,
        );
        let recorded = (e.ctime, e.mtime, e.dev, e.ino, e.uid, e.gid, e.size);
        if real != recorded {
            problems.push(format!(
                "{}: index has (ctime, mtime, dev, ino, uid, gid, size) = {recorded:?}, lstat says {real:?}",
                show(&e.path)
            ));
        }
    }
    if !problems.is_empty() {
        let total = problems.len();
        problems.truncate(20);
        panic!(
            "index of {} does not carry the real stat data ({total} of {} entries):\n  {}",
            dir.display(),
            entries.len(),
            problems.join("\n  ")
        );
    }
}

/// Panics unless `git diff-files` (no refresh) says of `actual` (git-par) what it says of `expected`
/// (git), and unless, in both, every index entry that git does not call modified carries the real stat
/// data of its file: after git-par, git needs to re-hash nothing it would not re-hash after git. Run
/// it before any git command that may refresh or rewrite the index.
#[track_caller]
pub fn assert_real_stat_like_git(expected: &Path, actual: &Path, config: &[String]) {
    let git_side = diff_files_names(expected, config);
    let par_side = diff_files_names(actual, config);
    let shown = |v: &[Vec<u8>]| v.iter().map(|p| show(p)).collect::<Vec<_>>();
    assert_eq!(
        shown(&git_side),
        shown(&par_side),
        "`git diff-files` (no refresh) differs (left: after git, right: after git-par)"
    );
    assert_real_stat_except(expected, config, &git_side);
    assert_real_stat_except(actual, config, &par_side);
}

// ---------------------------------------------------------------------------------------------------
// One repository, two copies

/// A repository built once by a test's `setup` (run with git in an empty repository on `main`)
/// and copied twice: git runs in `by_git`, git-par in `by_par`, and the test compares them. Test
/// files add their own comparisons in `impl Pair` blocks.
pub struct Pair {
    _s: Scratch,
    pub by_git: PathBuf,
    pub by_par: PathBuf,
}

impl Pair {
    /// The two copies at `<scratch>/git/repo` and `<scratch>/par/repo`.
    pub fn new(setup: impl FnOnce(&Path)) -> Pair {
        Pair::named("repo", setup)
    }

    /// The two copies at `<scratch>/git/<name>` and `<scratch>/par/<name>` (a name with a space
    /// tests what goes through a shell).
    pub fn named(name: &str, setup: impl FnOnce(&Path)) -> Pair {
        let s = scratch();
        let src = s.join("src");
        fs::create_dir_all(&src).unwrap();
        git_ok(&src, ["init", "-q", "-b", "main"]);
        setup(&src);
        let by_git = s.join("git").join(name);
        let by_par = s.join("par").join(name);
        copy_repo(&src, &by_git);
        copy_repo(&src, &by_par);
        Pair {
            _s: s,
            by_git,
            by_par,
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// testfs: a FUSE filesystem with case folding, latency and faults

/// Mounts testfs over `dir/back` at `dir/mnt` (both created) with `options`, or prints why not and
/// returns `None` when the machine has no /dev/fuse (the only reason a testfs test may skip).
/// Keep the returned mount in a variable declared after `dir`'s guard: it must drop (unmount)
/// first.
pub fn testfs_mount(dir: &Path, options: testfs::Options) -> Option<testfs::Mount> {
    if let Some(why) = testfs::unavailable() {
        eprintln!("skipped: {why}");
        return None;
    }
    let (back, mnt) = (dir.join("back"), dir.join("mnt"));
    fs::create_dir_all(&back).expect("create testfs backing directory");
    fs::create_dir_all(&mnt).expect("create testfs mount point");
    Some(testfs::Mount::new(&back, &mnt, options).expect("mount testfs"))
}

/// Build the case `case` of the fixture script `script` (in `tests/fixtures`, called as
/// `script DEST CASE`) under `dir`, and return the repository: the status tests' fixtures
/// (`status_cases.sh`, `status_states.sh`, `status_config.sh`) are all made this way.
pub fn build_case(script: &str, dir: &Path, case: &str) -> PathBuf {
    let script = fixtures_dir().join(script);
    let repo = dir.join(case);
    run(
        "bash",
        dir,
        [script.as_os_str(), repo.as_os_str(), case.as_ref()],
    )
    .assert_success();
    repo
}

/// Two fresh copies of `repo` in `scratch` (`g<n>` for git, `p<n>` for git-par), so that
/// neither command sees what the other wrote (a refreshed index): the status tests run git and
/// git-par side by side this way.
pub fn two_copies(scratch: &Scratch, repo: &Path) -> (PathBuf, PathBuf) {
    let n = scratch.path().read_dir().unwrap().count();
    let (g, p) = (scratch.join(format!("g{n}")), scratch.join(format!("p{n}")));
    copy_repo(repo, &g);
    copy_repo(repo, &p);
    (g, p)
}

/// A difference between git's and git-par's run of the command described by `what`, in full:
/// exit codes, stdout and stderr of both.
pub fn side_by_side(what: &str, git_out: &Run, par_out: &Run) -> String {
    format!(
        "{what}:\n--- git ({:?})\n{}{}\n--- git-par ({:?})\n{}{}",
        git_out.status.code(),
        String::from_utf8_lossy(&git_out.stdout),
        String::from_utf8_lossy(&git_out.stderr),
        par_out.status.code(),
        String::from_utf8_lossy(&par_out.stdout),
        String::from_utf8_lossy(&par_out.stderr),
    )
}

/// The untracked cache (`UNTR`) of `repo`'s index as git's `test-tool dump-untracked-cache`
/// shows it, without what differs between two twin repositories (the work tree's path in the
/// identity, the directories' stat data): flags, ignore files' ids, and per directory (depth
/// first) its name, whether it is valid and check-only, its `.gitignore` id and its untracked
/// names. "no index" where there is no index file.
pub fn untracked_cache_dump(repo: &Path) -> String {
    let repository = gix::open(repo).unwrap();
    let Ok(index) = repository.open_index() else {
        return "no index".into();
    };
    let Some(uc) = index.untracked() else {
        return "no untracked cache".into();
    };
    let top = std::fs::canonicalize(repo).unwrap();
    let ident = uc
        .identifier()
        .to_string()
        .replace(top.to_str().unwrap(), "<work tree>");
    let mut out = format!(
        "ident {ident:?}\nflags {:x}\ninfo/exclude {:?}\nexcludesfile {:?}\nper-dir {}\n",
        uc.dir_flags(),
        uc.info_exclude().map(|s| s.id()),
        uc.excludes_file().map(|s| s.id()),
        uc.exclude_filename_per_dir(),
    );
    fn dir(uc: &gix::index::extension::UntrackedCache, k: usize, prefix: &str, out: &mut String) {
        let d = &uc.directories()[k];
        let path = format!("{prefix}{}/", d.name);
        let mut untracked: Vec<String> =
            d.untracked_entries.iter().map(|u| u.to_string()).collect();
        untracked.sort();
        out.push_str(&format!(
            "{path} valid={} check_only={} gitignore={:?} untracked={untracked:?}\n",
            d.stat.is_some(),
            d.check_only,
            d.exclude_file_oid,
        ));
        let mut subs = d.sub_directories.clone();
        subs.sort_by(|&a, &b| uc.directories()[a].name.cmp(&uc.directories()[b].name));
        for s in subs {
            dir(uc, s, &path, out);
        }
    }
    if !uc.directories().is_empty() {
        dir(uc, 0, "", &mut out);
    }
    out
}

/// The cache-tree (`TREE`) of `repo`'s index as gix decodes it (every node's name, object id
/// or invalidity, entry count and children), or that there is none (or no index).
pub fn cache_tree_dump(repo: &Path) -> String {
    let repository = gix::open(repo).unwrap();
    match repository.open_index() {
        Ok(index) => format!("{:#?}", index.tree()),
        Err(_) => "no index".into(),
    }
}

/// Every path below `dir` but those `skip` names (and what is below them), sorted, each as
/// `rel/` for a directory, `rel -> target` for a symlink, and for a file `rel: "bytes"`, or its
/// name alone inside a `.git` directory or for a `.git` file (each side's git writes those its
/// own way): what is left on disk, compared between git's side and git-par's.
pub fn disk_listing(dir: &Path, skip: impl Fn(&str) -> bool) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, skip: &dyn Fn(&str) -> bool, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
        names.sort();
        for name in names {
            let rel = format!("{rel}{}", name.to_string_lossy());
            if skip(&rel) {
                continue;
            }
            let path = dir.join(&name);
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                out.push(format!(
                    "{rel} -> {}",
                    fs::read_link(&path).unwrap().display()
                ));
            } else if meta.is_dir() {
                out.push(format!("{rel}/"));
                walk(&path, &format!("{rel}/"), skip, out);
            } else if rel.contains(".git/") || rel.ends_with("/.git") {
                out.push(rel);
            } else {
                let bytes = fs::read(&path).unwrap();
                out.push(format!("{rel}: {:?}", String::from_utf8_lossy(&bytes)));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &skip, &mut out);
    out
}

/// `git status --porcelain --untracked-files=all` in `dir`: everything git sees changed or new,
/// one line each (empty after a checkout git would call clean).
pub fn porcelain_all(dir: &Path) -> String {
    git_str(dir, ["status", "--porcelain", "--untracked-files=all"])
}

/// The arguments of `clone -q --no-hardlinks SRC DST`: a clone onto another filesystem (a
/// testfs mount) than its source's.
pub fn clone_elsewhere_args(src: &Path, dst: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "clone".into(),
        "-q".into(),
        "--no-hardlinks".into(),
        src.into(),
        dst.into(),
    ]
}

/// [`testfs_mount`] under `dir` with `options`, and the two sides on it: `by-git` and
/// `by-git-par`, where git and git-par then clone or check out the same thing.
pub fn testfs_sides(
    dir: &Path,
    options: testfs::Options,
) -> Option<(testfs::Mount, PathBuf, PathBuf)> {
    let mount = testfs_mount(dir, options)?;
    let (by_git, by_par) = (mount.path().join("by-git"), mount.path().join("by-git-par"));
    Some((mount, by_git, by_par))
}
