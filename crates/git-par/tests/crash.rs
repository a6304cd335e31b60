//! Crashes and per-file failures (issue 7):
//!
//! - a 20,000-file switch (`tests/fixtures/make_kill.sh`, branches `a` and `b` that differ in every
//!   file) interrupted at seeded pseudo-random moments with SIGINT (nothing damaged, no lock left, the
//!   index describes the work tree as left, HEAD still `a`) and with SIGKILL (at most one damaged path
//!   per writer thread, untracked and ignored files intact, and git-par's own `reset --hard` converges
//!   with no leftover files);
//! - ENOSPC on a 2 MiB tmpfs during a switch and during a clone (a clear message naming the path and
//!   the cause, no partial file, a valid index that describes the work tree, and convergence to git's
//!   result once there is space);
//! - EACCES on a read-only directory during a switch, with CAP_DAC_OVERRIDE dropped (git's per-path
//!   messages, the other files written, git's exit status (0) and local-change lines, HEAD and
//!   index as git leaves them, and convergence after `chmod 755`).
//!
//! Interrupt moments are chosen by waiting for `.git/index.lock` to appear and then a seeded number of
//! microseconds within the duration of an uninterrupted run; nothing is synchronised by sleeping.

mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

const KILL: &str = "kill";
const ENOSPC: &str = "enospc";
const EACCES: &str = "eacces";

/// Writer threads of the interrupted switches: the bound on damaged paths after SIGKILL.
const JOBS: usize = 4;
/// Interrupted rounds required of each signal.
const ROUNDS: usize = 20;
/// Attempts allowed to get [`ROUNDS`] interrupted rounds (a signal may arrive after the switch ended).
const MAX_ATTEMPTS: usize = 80;

/// The two kill experiments run one at a time: each calibrates its kill moments on one
/// uninterrupted switch, and the other running beside it on 2 cores would make that calibration
/// (and so the share of signals that land mid-switch) a matter of chance.
static KILL_EXPERIMENT: std::sync::Mutex<()> = std::sync::Mutex::new(());

const CANARY: &str = "canary.txt";
const CANARY_CONTENT: &[u8] = b"untracked canary: must survive every interrupted switch\n";
const IGNORED: &str = "d005/build.ign";
const IGNORED_CONTENT: &[u8] = b"ignored file: must survive every interrupted switch\n";

// ---------------------------------------------------------------------------------------------------
// Trees and their contents

/// `git ls-tree -r -z REV`: path -> blob id (regular files only in these fixtures).
fn tree_blobs(repo: &Path, rev: &str) -> BTreeMap<Vec<u8>, String> {
    let out = git_ok(repo, ["ls-tree", "-r", "-z", rev]);
    out.split(|&b| b == 0)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let tab = line.iter().position(|&b| b == b'\t').expect("tab");
            let meta = String::from_utf8_lossy(&line[..tab]).into_owned();
            let oid = meta.split(' ').nth(2).expect("oid").to_owned();
            (line[tab + 1..].to_vec(), oid)
        })
        .collect()
}

/// The contents of `oids`, read with one `git cat-file --batch`.
fn cat_blobs<'a>(
    repo: &Path,
    oids: impl IntoIterator<Item = &'a String>,
) -> HashMap<String, Vec<u8>> {
    let wanted: BTreeSet<String> = oids.into_iter().cloned().collect();
    let mut cmd = Command::new("git");
    clean_env(&mut cmd)
        .current_dir(repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("git cat-file starts");
    let mut stdin = child.stdin.take().unwrap();
    let list: Vec<String> = wanted.iter().cloned().collect();
    let feeder = std::thread::spawn(move || {
        let mut buf = String::new();
        for oid in &list {
            buf.push_str(oid);
            buf.push('\n');
        }
        stdin.write_all(buf.as_bytes()).expect("feed cat-file");
    });
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut out = HashMap::new();
    for oid in &wanted {
        let mut header = String::new();
        reader.read_line(&mut header).expect("cat-file header");
        let mut parts = header.split_whitespace();
        let got = parts.next().unwrap_or("").to_owned();
        assert_eq!(&got, oid, "cat-file answered {header:?}");
        let size: usize = parts.nth(1).expect("size").parse().expect("size");
        let mut data = vec![0; size + 1];
        reader.read_exact(&mut data).expect("cat-file data");
        data.pop();
        out.insert(oid.clone(), data);
    }
    feeder.join().unwrap();
    assert!(child.wait().unwrap().success());
    out
}

/// When an uninterrupted switch writes, counted from the moment `index.lock` appears.
struct Window {
    writing: Duration,
    total: Duration,
}

impl Window {
    /// A seeded moment: one draw in four anywhere before the end, three in four while files are
    /// written (90% of the way at most, so that most signals arrive before the switch ends).
    fn draw(&self, rng: &mut Rng) -> Duration {
        let (from, to) = if rng.next().is_multiple_of(4) {
            (0, self.total.as_micros() as u64)
        } else {
            (
                self.writing.as_micros() as u64,
                self.total.as_micros() as u64,
            )
        };
        let span = (to - from) * 9 / 10 + 1;
        Duration::from_micros(from + rng.next() % span)
    }
}

/// Two trees of a repository with the content of every path: what the work tree may hold.
struct Expected {
    old: BTreeMap<Vec<u8>, Vec<u8>>,
    new: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Expected {
    fn load(repo: &Path, old_rev: &str, new_rev: &str) -> Expected {
        let old = tree_blobs(repo, old_rev);
        let new = tree_blobs(repo, new_rev);
        let blobs = cat_blobs(repo, old.values().chain(new.values()));
        let resolve = |t: BTreeMap<Vec<u8>, String>| {
            t.into_iter()
                .map(|(p, oid)| (p, blobs[&oid].clone()))
                .collect()
        };
        Expected {
            old: resolve(old),
            new: resolve(new),
        }
    }

    fn union(&self) -> BTreeSet<&Vec<u8>> {
        self.old.keys().chain(self.new.keys()).collect()
    }
}

/// How the paths of both trees were found in a work tree.
#[derive(Default, Debug)]
struct Tally {
    old: usize,
    new: usize,
    absent: usize,
    damaged: Vec<String>,
}

/// Classifies every path of the union of both trees: old content, new content, absent (fine only
/// where one tree lacks the path), or damaged (missing where both trees have it, partial, content of
/// neither, not a regular file).
fn classify(wt: &Path, exp: &Expected) -> Tally {
    let mut t = Tally::default();
    for path in exp.union() {
        let full = wt.join(OsStr::from_bytes(path));
        let (old, new) = (exp.old.get(path), exp.new.get(path));
        let shown = String::from_utf8_lossy(path).into_owned();
        let content = match fs::symlink_metadata(&full) {
            Ok(md) if md.is_file() => match fs::read(&full) {
                Ok(c) => Some(c),
                Err(e) => {
                    t.damaged.push(format!("{shown}: unreadable: {e}"));
                    continue;
                }
            },
            Ok(md) => {
                t.damaged.push(format!(
                    "{shown}: not a regular file ({:?})",
                    md.file_type()
                ));
                continue;
            }
            Err(_) => None,
        };
        match content {
            None if old.is_some() && new.is_some() => t.damaged.push(format!("{shown}: missing")),
            None => t.absent += 1,
            Some(c) if old == Some(&c) => t.old += 1,
            Some(c) if new == Some(&c) => t.new += 1,
            Some(c) => t.damaged.push(format!(
                "{shown}: {} bytes, neither old ({:?} bytes) nor new ({:?} bytes) content",
                c.len(),
                old.map(Vec::len),
                new.map(Vec::len)
            )),
        }
    }
    t
}

/// Every non-directory under `root` (relative; `.git` at the top skipped).
fn all_files(root: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(root.join(&rel)).expect("read_dir") {
            let entry = entry.unwrap();
            if rel.as_os_str().is_empty() && entry.file_name() == ".git" {
                continue;
            }
            let r = rel.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                stack.push(r);
            } else {
                out.push(r.as_os_str().as_bytes().to_vec());
            }
        }
    }
    out.sort();
    out
}

fn lines_of(dir: &Path, args: &[&str]) -> Vec<String> {
    String::from_utf8_lossy(&git_ok(dir, args))
        .lines()
        .map(str::to_owned)
        .collect()
}

fn median(v: &[usize]) -> usize {
    let mut s = v.to_vec();
    s.sort_unstable();
    if s.is_empty() {
        0
    } else {
        s[s.len() / 2]
    }
}

/// A small seeded generator (SplitMix64): the same kill moments on every run of the tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

// ---------------------------------------------------------------------------------------------------
// The kill experiment

/// A copy of the kill fixture on tmpfs (`/dev/shm`, or a scratch directory when there is none), with
/// the canary and the ignored file, and the expected contents of `a` and `b`.
struct KillTree {
    _guard: Option<TempDir>,
    _scratch: Option<Scratch>,
    wt: PathBuf,
    exp: Expected,
}

impl KillTree {
    fn new() -> KillTree {
        let src = fixture_named(KILL);
        let (guard, scratch_dir, root) = match tempfile::Builder::new()
            .prefix("git-par-kill-")
            .tempdir_in("/dev/shm")
        {
            Ok(t) => {
                let p = t.path().to_path_buf();
                (Some(t), None, p)
            }
            Err(e) => {
                eprintln!("no /dev/shm ({e}): the kill test runs in a temporary directory");
                let s = scratch();
                let p = s.path().to_path_buf();
                (None, Some(s), p)
            }
        };
        let wt = root.join("repo");
        copy_repo(src, &wt);
        let info = wt.join(".git/info");
        fs::create_dir_all(&info).unwrap();
        fs::write(info.join("exclude"), "*.ign\n").unwrap();
        let exp = Expected::load(&wt, "a", "b");
        let tree = KillTree {
            _guard: guard,
            _scratch: scratch_dir,
            wt,
            exp,
        };
        tree.back_to_a();
        tree
    }

    fn lock(&self) -> PathBuf {
        self.wt.join(".git/index.lock")
    }

    /// Puts the work tree back on `a` with real git, whatever an interrupted run left: HEAD on `a`,
    /// paths only `b` has and stray files removed, `git reset --hard a`, canary and ignored file as
    /// planted.
    fn back_to_a(&self) {
        let _ = fs::remove_file(self.lock());
        let _ = fs::remove_file(self.wt.join(".git/HEAD.lock"));
        git_ok(&self.wt, ["symbolic-ref", "HEAD", "refs/heads/a"]);
        for f in all_files(&self.wt) {
            let keep =
                self.exp.old.contains_key(&f) || f == CANARY.as_bytes() || f == IGNORED.as_bytes();
            if !keep {
                let _ = fs::remove_file(self.wt.join(OsStr::from_bytes(&f)));
            }
        }
        if !git(&self.wt, ["reset", "-q", "--hard", "a"]).success() {
            // An unreadable index is reported by the round that made it; start over without one.
            let _ = fs::remove_file(self.wt.join(".git/index"));
            git_ok(&self.wt, ["reset", "-q", "--hard", "a"]);
        }
        fs::write(self.wt.join(CANARY), CANARY_CONTENT).unwrap();
        fs::write(self.wt.join(IGNORED), IGNORED_CONTENT).unwrap();
    }

    fn spawn_switch(&self) -> std::process::Child {
        let mut cmd = Command::new(GIT_PAR);
        clean_env(&mut cmd)
            .current_dir(&self.wt)
            .args(["switch", "-q", "-j", &JOBS.to_string(), "b"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd.spawn().expect("git-par starts")
    }

    /// The modification times of a sample of directories (the top, every 20th `dNNN`): when one
    /// changes, the switch has started to write.
    fn dir_mtimes(&self) -> Vec<(i64, i64)> {
        use std::os::unix::fs::MetadataExt;
        let mut dirs = vec![self.wt.clone()];
        dirs.extend(
            (0..200)
                .step_by(20)
                .map(|d| self.wt.join(format!("d{d:03}"))),
        );
        dirs.iter()
            .map(|d| {
                fs::symlink_metadata(d)
                    .map(|m| (m.mtime(), m.mtime_nsec()))
                    .unwrap_or((-1, -1))
            })
            .collect()
    }

    /// One uninterrupted switch: when, after `index.lock` appears, it starts writing (a sampled
    /// directory changes) and when it ends. The kill moments are drawn from these. Leaves the work tree
    /// on `a` again.
    fn calibrate(&self) -> Window {
        let start = Instant::now();
        let before = self.dir_mtimes();
        let mut child = self.spawn_switch();
        let mut locked_at = None;
        let mut writing_at = None;
        let status = loop {
            if locked_at.is_none() && self.lock().exists() {
                locked_at = Some(Instant::now());
            }
            if locked_at.is_some() && writing_at.is_none() && self.dir_mtimes() != before {
                writing_at = Some(Instant::now());
            }
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            std::thread::yield_now();
        };
        let end = Instant::now();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(
            status.success(),
            "an uninterrupted `git par switch -q -j {JOBS} b` fails: {status}\n{err}"
        );
        let locked = locked_at.unwrap_or(start);
        let total = (end - locked).max(Duration::from_millis(1));
        let writing = writing_at.map_or(Duration::ZERO, |w| w - locked).min(total);
        eprintln!(
            "uninterrupted switch a -> b: {:?} in all; after index.lock appeared{}: writes from {writing:?}, ends at {total:?}",
            end - start,
            if locked_at.is_none() { " (lock never seen)" } else { "" }
        );
        self.back_to_a();
        Window { writing, total }
    }

    /// Starts a switch to `b`, waits for `index.lock`, then `delay`, then sends `signal`. Returns
    /// whether the signal was sent while the process still ran, its exit status and stderr.
    fn interrupt(&self, signal: i32, delay: Duration) -> (bool, std::process::ExitStatus, String) {
        let mut child = self.spawn_switch();
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut finished = false;
        while !self.lock().exists() {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
            assert!(
                Instant::now() < deadline,
                "git-par neither took the lock nor finished"
            );
            std::thread::yield_now();
        }
        let locked = Instant::now();
        while !finished && locked.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                finished = true;
            }
            std::hint::spin_loop();
        }
        let mut sent = false;
        if !finished && child.try_wait().unwrap().is_none() {
            let pid = i32::try_from(child.id()).unwrap();
            // SAFETY: signalling our own child, which has not been reaped yet.
            unsafe { libc::kill(pid, signal) };
            sent = true;
        }
        let out = child.wait_with_output().unwrap();
        (
            sent,
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    #[track_caller]
    fn assert_canaries(&self, problems: &mut Vec<String>, round: &str) {
        for (p, c) in [(CANARY, CANARY_CONTENT), (IGNORED, IGNORED_CONTENT)] {
            if fs::read(self.wt.join(p)).ok().as_deref() != Some(c) {
                problems.push(format!("{round}: {p} changed or removed"));
            }
        }
    }
}

#[test]
fn sigint_during_a_20000_file_switch_damages_nothing_and_leaves_an_index_that_describes_the_work_tree(
) {
    let _one_at_a_time = KILL_EXPERIMENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let tree = KillTree::new();
    let window = tree.calibrate();
    let mut rng = Rng(0x5161_4e54);
    let mut problems = Vec::new();
    let mut interrupted = 0;
    let mut attempts = 0;
    let mut written = Vec::new();
    while interrupted < ROUNDS && attempts < MAX_ATTEMPTS {
        attempts += 1;
        let delay = window.draw(&mut rng);
        let (sent, status, stderr) = tree.interrupt(libc::SIGINT, delay);
        let round = format!("SIGINT round {attempts} (after {delay:?})");
        let t = classify(&tree.wt, &tree.exp);
        let head = git_str(&tree.wt, ["symbolic-ref", "-q", "HEAD"]);
        let code = status.code();
        eprintln!(
            "{round}: signal sent: {sent}, exit {status}, old {}, new {}, absent {}, damaged {}",
            t.old,
            t.new,
            t.absent,
            t.damaged.len()
        );
        match code {
            Some(130) => {
                interrupted += 1;
                written.push(t.new);
                if head != "refs/heads/a" {
                    problems.push(format!("{round}: HEAD is {head}, not refs/heads/a"));
                }
            }
            Some(0) => {
                if head != "refs/heads/b" {
                    problems.push(format!("{round}: exit 0 but HEAD is {head}"));
                }
            }
            _ => problems.push(format!(
                "{round}: exit {status} (expected 130, or 0 when the switch had finished); stderr: {}",
                stderr.trim_end()
            )),
        }
        if !t.damaged.is_empty() {
            let n = t.damaged.len();
            let some: Vec<_> = t.damaged.iter().take(5).cloned().collect();
            problems.push(format!("{round}: {n} damaged paths, e.g. {some:?}"));
        }
        if tree.lock().exists() {
            problems.push(format!("{round}: .git/index.lock left behind"));
        }
        tree.assert_canaries(&mut problems, &round);
        match git(&tree.wt, ["diff", "--name-only"]) {
            out if !out.success() => {
                problems.push(format!("{round}: git diff fails: {}", out.stderr_str()))
            }
            out if !out.stdout.is_empty() => {
                let n = out.stdout_str().lines().count();
                let some: Vec<String> = out
                    .stdout_str()
                    .lines()
                    .take(5)
                    .map(str::to_owned)
                    .collect();
                problems.push(format!(
                    "{round}: the index does not describe the work tree: `git diff --name-only` lists {n} paths, e.g. {some:?}"
                ));
            }
            _ => {}
        }
        let untracked = lines_of(&tree.wt, &["ls-files", "--others", "--exclude-standard"]);
        if untracked != [CANARY] {
            let n = untracked.len();
            let some: Vec<_> = untracked.iter().take(5).cloned().collect();
            problems.push(format!(
                "{round}: written files missing from the index, or stray files: {n} untracked paths, e.g. {some:?}"
            ));
        }
        let ignored = lines_of(
            &tree.wt,
            &["ls-files", "--others", "--ignored", "--exclude-standard"],
        );
        if ignored != [IGNORED] {
            problems.push(format!("{round}: ignored files are {ignored:?}"));
        }
        tree.back_to_a();
    }
    eprintln!(
        "SIGINT: {interrupted} interrupted rounds of {attempts}; files of b written before stopping: {written:?}"
    );
    if interrupted < ROUNDS {
        problems.push(format!(
            "only {interrupted} of {attempts} rounds were interrupted (exit 130); {ROUNDS} needed"
        ));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) after SIGINT:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn sigkill_during_a_20000_file_switch_damages_at_most_the_files_in_flight_and_reset_hard_converges()
{
    let _one_at_a_time = KILL_EXPERIMENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let tree = KillTree::new();
    let window = tree.calibrate();
    let mut rng = Rng(0x5349_474b);
    let mut problems = Vec::new();
    let mut damaged_per_kill = Vec::new();
    let mut attempts = 0;
    while damaged_per_kill.len() < ROUNDS && attempts < MAX_ATTEMPTS {
        attempts += 1;
        let delay = window.draw(&mut rng);
        let (sent, status, stderr) = tree.interrupt(libc::SIGKILL, delay);
        let round = format!("SIGKILL round {attempts} (after {delay:?})");
        let t = classify(&tree.wt, &tree.exp);
        eprintln!(
            "{round}: signal sent: {sent}, exit {status}, old {}, new {}, absent {}, damaged {}",
            t.old,
            t.new,
            t.absent,
            t.damaged.len()
        );
        if status.signal() == Some(libc::SIGKILL) {
            damaged_per_kill.push(t.damaged.len());
        } else if status.code() != Some(0) {
            problems.push(format!(
                "{round}: exit {status} (expected death by SIGKILL, or 0 when the switch had finished); stderr: {}",
                stderr.trim_end()
            ));
        }
        if t.damaged.len() > JOBS {
            let some: Vec<_> = t.damaged.iter().take(5).cloned().collect();
            problems.push(format!(
                "{round}: {} damaged paths (more than the {JOBS} writer threads), e.g. {some:?}",
                t.damaged.len()
            ));
        }
        tree.assert_canaries(&mut problems, &round);
        let head = git_str(&tree.wt, ["symbolic-ref", "-q", "HEAD"]);
        if head != "refs/heads/a" && head != "refs/heads/b" {
            problems.push(format!("{round}: HEAD is {head}"));
        }
        let ls = git(&tree.wt, ["ls-files", "-s"]);
        if !ls.success() {
            problems.push(format!(
                "{round}: the index is torn: git ls-files -s fails: {}",
                ls.stderr_str().trim_end()
            ));
        }

        // Recovery: remove the stale locks (a kill can land while `index.lock` or, in the last
        // instant, `HEAD.lock` is held; git names either in its message), then git-par's own
        // reset --hard.
        let _ = fs::remove_file(tree.lock());
        let _ = fs::remove_file(tree.wt.join(".git/HEAD.lock"));
        let reset = git_par(&tree.wt, ["reset", "-q", "--hard"]);
        if !reset.success() {
            problems.push(format!(
                "{round}: git par reset -q --hard fails: {}",
                reset.describe()
            ));
        } else {
            let status = lines_of(
                &tree.wt,
                &[
                    "status",
                    "--porcelain",
                    "--ignored",
                    "--untracked-files=all",
                ],
            );
            let want = vec![format!("?? {CANARY}"), format!("!! {IGNORED}")];
            if status != want {
                let n = status.len();
                let some: Vec<_> = status.iter().take(8).cloned().collect();
                problems.push(format!(
                    "{round}: after git par reset --hard, `git status --porcelain --ignored` has {n} lines, e.g. {some:?}"
                ));
            }
            let tracked: BTreeSet<Vec<u8>> =
                git_ok(&tree.wt, ["ls-tree", "-r", "-z", "--name-only", "HEAD"])
                    .split(|&b| b == 0)
                    .filter(|p| !p.is_empty())
                    .map(<[u8]>::to_vec)
                    .collect();
            let stray: Vec<String> = all_files(&tree.wt)
                .into_iter()
                .filter(|f| {
                    !tracked.contains(f) && f != CANARY.as_bytes() && f != IGNORED.as_bytes()
                })
                .map(|f| String::from_utf8_lossy(&f).into_owned())
                .collect();
            if !stray.is_empty() {
                let some: Vec<_> = stray.iter().take(8).cloned().collect();
                problems.push(format!(
                    "{round}: after git par reset --hard, {} files are neither tracked nor the canary or ignored file (leftover temporary files?), e.g. {some:?}",
                    stray.len()
                ));
            }
            tree.assert_canaries(&mut problems, &format!("{round}, after reset --hard"));
        }
        tree.back_to_a();
    }
    eprintln!(
        "SIGKILL: damaged paths per kill ({} kills of {attempts} rounds, -j {JOBS}): {damaged_per_kill:?}; median {}, max {}",
        damaged_per_kill.len(),
        median(&damaged_per_kill),
        damaged_per_kill.iter().max().copied().unwrap_or(0)
    );
    if damaged_per_kill.len() < ROUNDS {
        problems.push(format!(
            "only {} of {attempts} rounds were killed mid-switch; {ROUNDS} needed",
            damaged_per_kill.len()
        ));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) after SIGKILL:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------------
// ENOSPC: a small tmpfs

/// A tmpfs mounted for one test, unmounted on drop (also on panic).
struct Mount {
    dir: PathBuf,
}

impl Drop for Mount {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
    }
}

impl Mount {
    /// Mounts a tmpfs of `size` (e.g. "2m") at `dir` (created); `None`, said loudly, when this
    /// process may not mount (not root).
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("run mount");
        if out.status.success() {
            return Some(Mount {
                dir: dir.to_path_buf(),
            });
        }
        let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !root || err.contains("permission denied") || err.contains("operation not permitted") {
            eprintln!(
                "\n!!!!!!!! SKIPPED: cannot mount a tmpfs (not root / EPERM): {} !!!!!!!!\n",
                err.trim()
            );
            return None;
        }
        panic!(
            "mount -t tmpfs -o size={size} tmpfs {} failed: {err}",
            dir.display()
        );
    }

    fn resize(&self, size: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.dir)
            .status()
            .expect("run mount");
        assert!(
            st.success(),
            "remount {} to {size} failed",
            self.dir.display()
        );
    }
}

/// `-c checkout.workers=4 -c checkout.thresholdForParallelism=0`, then `args`.
fn par_args(args: &[&str]) -> Vec<OsString> {
    let mut all = config_args(&[
        "checkout.workers=4".to_owned(),
        "checkout.thresholdForParallelism=0".to_owned(),
    ]);
    all.extend(args.iter().map(OsString::from));
    all
}

/// For every stage-0 entry of the index of `wt`: the file is absent or holds the entry's blob (the
/// index never calls a file it did not write, or a partial one, by the blob's name). Also checks that
/// `git status` and `git ls-files -s` work.
fn index_describes_work_tree(wt: &Path, problems: &mut Vec<String>, what: &str) {
    let st = git(wt, ["status", "--porcelain"]);
    if !st.success() {
        problems.push(format!(
            "{what}: git status fails: {}",
            st.stderr_str().trim_end()
        ));
    }
    let ls = git(wt, ["ls-files", "-s", "-z"]);
    if !ls.success() {
        problems.push(format!(
            "{what}: git ls-files -s fails: {}",
            ls.stderr_str().trim_end()
        ));
        return;
    }
    let mut entries = Vec::new();
    for rec in ls.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let tab = rec.iter().position(|&b| b == b'\t').unwrap();
        let meta = String::from_utf8_lossy(&rec[..tab]).into_owned();
        let f: Vec<&str> = meta.split(' ').collect();
        if f[2] == "0" {
            entries.push((rec[tab + 1..].to_vec(), f[1].to_owned()));
        }
    }
    let blobs = cat_blobs(wt, entries.iter().map(|(_, o)| o));
    for (path, oid) in &entries {
        let full = wt.join(OsStr::from_bytes(path));
        if let Ok(c) = fs::read(&full) {
            if c != blobs[oid] {
                problems.push(format!(
                    "{what}: {} holds {} bytes that are not its index entry's blob ({} bytes)",
                    String::from_utf8_lossy(path),
                    c.len(),
                    blobs[oid].len()
                ));
            }
        }
    }
}

/// Paths of the union of both trees that are partial or hold neither content (absent is fine).
fn partial_files(wt: &Path, exp: &Expected, problems: &mut Vec<String>, what: &str) {
    let t = classify(wt, exp);
    for d in t.damaged.iter().filter(|d| !d.ends_with(": missing")) {
        problems.push(format!("{what}: {d}"));
    }
    eprintln!(
        "{what}: old {}, new {}, absent {}, missing {}",
        t.old,
        t.new,
        t.absent,
        t.damaged
            .iter()
            .filter(|d| d.ends_with(": missing"))
            .count()
    );
}

#[test]
fn enospc_during_a_switch_leaves_no_partial_file_and_a_rerun_with_space_converges_to_git() {
    let src = fixture_named(ENOSPC);
    let s = scratch();
    let Some(mnt) = Mount::tmpfs(&s.join("mnt"), "2m") else {
        return;
    };
    // The repository's .git lives outside the small tmpfs (a gitfile points to it), so only the work
    // tree runs out of space.
    let gitdir = s.join("gitdir");
    run(
        "cp",
        s.path(),
        [
            OsStr::new("-a"),
            src.join(".git").as_os_str(),
            gitdir.as_os_str(),
        ],
    )
    .assert_success();
    let wt = mnt.dir.join("wt");
    copy_repo(src, &wt);
    fs::remove_dir_all(wt.join(".git")).unwrap();
    fs::write(wt.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
    git(&wt, ["update-index", "-q", "--refresh"]);
    let exp = Expected::load(&wt, "small", "big");

    let out = git_par(&wt, par_args(&["switch", "big"]));
    let err = out.stderr_str();
    let mut problems = Vec::new();
    // git's safe switch exits 0 when it could still write the index after the failed files
    // (`merge_working_tree` ignores `unpack_trees`' -2), 128 when the index cannot be written
    // either: both are git's; what matters is the report and the state below.
    if !out.success() && !err.contains("index") {
        problems.push("git par switch big failed, and not on the index".to_owned());
    }
    if !err.contains("No space left on device") {
        problems.push("stderr does not give the cause `No space left on device`".to_owned());
    }
    if !exp
        .new
        .keys()
        .any(|p| err.contains(&*String::from_utf8_lossy(p)))
    {
        problems.push("stderr names no path of the switch".to_owned());
    }
    partial_files(&wt, &exp, &mut problems, "after ENOSPC");
    index_describes_work_tree(&wt, &mut problems, "after ENOSPC");
    if gitdir.join("index.lock").exists() {
        problems.push("index.lock left behind".to_owned());
    }

    // Free space, rerun, compare with git's switch on an unconstrained copy.
    mnt.resize("64m");
    let head = git_str(&wt, ["symbolic-ref", "-q", "HEAD"]);
    let rerun = if head == "refs/heads/small" {
        git_par(&wt, par_args(&["switch", "big"]))
    } else {
        git_par(&wt, par_args(&["reset", "--hard"]))
    };
    if !rerun.success() {
        problems.push(format!("rerun with space fails: {}", rerun.describe()));
    }
    let oracle = s.join("oracle");
    copy_repo(src, &oracle);
    git(&oracle, ["update-index", "-q", "--refresh"]);
    git(&oracle, ["switch", "-q", "big"]).assert_success();
    let mut d = Vec::new();
    if let Err(e) = std::panic::catch_unwind(|| compare_worktrees(&oracle, &wt)) {
        d.push(format!("{:?}", e.downcast_ref::<String>()));
    }
    for args in [
        &["ls-files", "-s"][..],
        &["symbolic-ref", "HEAD"],
        &["status", "--porcelain", "--untracked-files=all"],
    ] {
        let (a, b) = (git(&oracle, args).stdout_str(), git(&wt, args).stdout_str());
        if a != b {
            d.push(format!(
                "`git {}` differs:\n git:     {a:?}\n git-par: {b:?}",
                args.join(" ")
            ));
        }
    }
    for x in d {
        problems.push(format!("after the rerun: {x}"));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n  {}\n--- git-par switch on the full tmpfs:\n{}",
        problems.len(),
        problems.join("\n  "),
        out.describe()
    );
}

#[test]
fn enospc_during_a_clone_gives_a_clear_message_and_converges_like_git() {
    let src = fixture_named(ENOSPC);
    let s = scratch();
    let Some(mnt_git) = Mount::tmpfs(&s.join("mnt-git"), "2m") else {
        return;
    };
    let Some(mnt_par) = Mount::tmpfs(&s.join("mnt-par"), "2m") else {
        return;
    };
    let (dst_git, dst_par) = (mnt_git.dir.join("c"), mnt_par.dir.join("c"));
    let by_git = git(
        s.path(),
        [
            OsStr::new("clone"),
            OsStr::new("-q"),
            OsStr::new("-b"),
            OsStr::new("big"),
            src.as_os_str(),
            dst_git.as_os_str(),
        ],
    );
    let mut args = par_args(&["clone", "-q", "-b", "big"]);
    args.push(src.as_os_str().to_owned());
    args.push(dst_par.as_os_str().to_owned());
    let by_par = git_par(s.path(), args);
    assert!(
        !by_git.success(),
        "the oracle's clone fit on the tmpfs (the test is wrong)"
    );

    let mut problems = Vec::new();
    let err = by_par.stderr_str();
    if by_par.status.code() != by_git.status.code() {
        problems.push(format!(
            "exit code {:?}, git's {:?}",
            by_par.status.code(),
            by_git.status.code()
        ));
    }
    if !err.contains("No space left on device") {
        problems.push("stderr does not give the cause `No space left on device`".to_owned());
    }
    if !err.contains("big/f") {
        problems.push("stderr names no path of the checkout".to_owned());
    }
    let kept = (dst_git.exists(), dst_par.exists());
    if kept.0 != kept.1 {
        problems.push(format!(
            "git {} the clone directory, git-par {} it",
            if kept.0 { "kept" } else { "removed" },
            if kept.1 { "kept" } else { "removed" }
        ));
    }
    if kept.0 && kept.1 {
        let exp = Expected::load(src, "big", "big");
        partial_files(&dst_par, &exp, &mut problems, "clone after ENOSPC");
        index_describes_work_tree(&dst_par, &mut problems, "clone after ENOSPC");
        mnt_git.resize("64m");
        mnt_par.resize("64m");
        git_ok(&dst_git, ["reset", "-q", "--hard"]);
        let reset = git_par(&dst_par, par_args(&["reset", "-q", "--hard"]));
        if !reset.success() {
            problems.push(format!(
                "git par reset --hard in the clone fails: {}",
                reset.describe()
            ));
        }
        if let Err(e) = std::panic::catch_unwind(|| compare_worktrees(&dst_git, &dst_par)) {
            problems.push(format!(
                "after reset --hard: {:?}",
                e.downcast_ref::<String>()
            ));
        }
        for a in [
            &["ls-files", "-s"][..],
            &["status", "--porcelain", "--untracked-files=all"],
        ] {
            let (x, y) = (git(&dst_git, a).stdout_str(), git(&dst_par, a).stdout_str());
            if x != y {
                problems.push(format!(
                    "after reset --hard, `git {}` differs:\n git:     {x:?}\n git-par: {y:?}",
                    a.join(" ")
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n  {}\n--- git:\n{}\n--- git-par:\n{}",
        problems.len(),
        problems.join("\n  "),
        by_git.describe(),
        by_par.describe()
    );
}

// ---------------------------------------------------------------------------------------------------
// EACCES: a read-only directory, with CAP_DAC_OVERRIDE dropped

const SETPRIV: [&str; 3] = [
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
    "--",
];

/// Runs `program args` through setpriv without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so that file
/// permissions apply to root too.
fn unprivileged(program: &OsStr, cwd: &Path, args: &[OsString]) -> Run {
    let mut all: Vec<OsString> = SETPRIV.iter().map(OsString::from).collect();
    all.push(program.to_owned());
    all.extend(args.iter().cloned());
    run("setpriv", cwd, all)
}

fn error_lines(r: &Run) -> Vec<String> {
    let mut v: Vec<String> = r
        .stderr_str()
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("fatal:"))
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

#[test]
fn eacces_on_a_read_only_directory_reports_each_path_like_git_writes_the_rest_and_converges() {
    let src = fixture_named(EACCES);
    let s = scratch();
    let (g, p) = (s.join("git/repo"), s.join("par/repo"));
    for side in [&g, &p] {
        copy_repo(src, side);
        git(side, ["update-index", "-q", "--refresh"]);
        run("chmod", side, ["555", "ro"]).assert_success();
    }
    // setpriv must really take the permission bypass away, or the test proves nothing.
    let probe = unprivileged(OsStr::new("touch"), &g, &["ro/probe".into()]);
    assert!(
        !probe.success(),
        "setpriv did not drop CAP_DAC_OVERRIDE: {}",
        probe.describe()
    );

    let by_git = unprivileged(OsStr::new("git"), &g, &["switch".into(), "two".into()]);
    let by_par = unprivileged(OsStr::new(GIT_PAR), &p, &par_args(&["switch", "two"]));
    assert!(
        by_git.stderr_str().contains("Permission denied"),
        "the oracle met no EACCES (the test is wrong): {}",
        by_git.describe()
    );

    let mut problems = Vec::new();
    // git's safe switch reports the paths and exits 0, listing them as local changes.
    if by_par.status.code() != by_git.status.code() {
        problems.push(format!(
            "exit status {:?}, git's {:?}",
            by_par.status.code(),
            by_git.status.code()
        ));
    }
    if by_par.stdout_str() != by_git.stdout_str() {
        problems.push(format!(
            "standard output differs:\n git:     {:?}\n git-par: {:?}",
            by_git.stdout_str(),
            by_par.stdout_str()
        ));
    }
    if error_lines(&by_git) != error_lines(&by_par) {
        problems.push(format!(
            "error messages differ (sorted):\n git:     {:?}\n git-par: {:?}",
            error_lines(&by_git),
            error_lines(&by_par)
        ));
    }
    if let Err(e) = std::panic::catch_unwind(|| compare_worktrees(&g, &p)) {
        problems.push(format!("work tree: {:?}", e.downcast_ref::<String>()));
    }
    for args in [
        &["symbolic-ref", "HEAD"][..],
        &["rev-parse", "HEAD"],
        &["ls-files", "-s"],
        &["diff", "--name-only"],
    ] {
        let (x, y) = (git(&g, args).stdout_str(), git(&p, args).stdout_str());
        if x != y {
            problems.push(format!(
                "`git {}` differs:\n git:     {x:?}\n git-par: {y:?}",
                args.join(" ")
            ));
        }
    }
    // Like git, the index records the target's entries for the paths that could not be written
    // (their old files show as modified, so nothing is silently lost); `ls-files -s` is compared
    // with git's above rather than with the work tree.
    if p.join(".git/index.lock").exists() {
        problems.push("index.lock left behind".to_owned());
    }

    // chmod 755, then each side reruns what finishes the job from where it stands.
    for (side, par) in [(&g, false), (&p, true)] {
        run("chmod", side, ["755", "ro"]).assert_success();
        let head = git_str(side, ["symbolic-ref", "-q", "HEAD"]);
        let args: &[&str] = if head == "refs/heads/two" {
            &["reset", "-q", "--hard"]
        } else {
            &["switch", "-q", "two"]
        };
        let r = if par {
            git_par(side, par_args(args))
        } else {
            git(side, args)
        };
        if !r.success() {
            problems.push(format!("rerun after chmod 755 fails: {}", r.describe()));
        }
    }
    if let Err(e) = std::panic::catch_unwind(|| compare_worktrees(&g, &p)) {
        problems.push(format!(
            "after the rerun, work tree: {:?}",
            e.downcast_ref::<String>()
        ));
    }
    for args in [
        &["symbolic-ref", "HEAD"][..],
        &["ls-files", "-s"],
        &["status", "--porcelain", "--untracked-files=all"],
    ] {
        let (x, y) = (git(&g, args).stdout_str(), git(&p, args).stdout_str());
        if x != y {
            problems.push(format!(
                "after the rerun, `git {}` differs:\n git:     {x:?}\n git-par: {y:?}",
                args.join(" ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n  {}\n--- git:\n{}\n--- git-par:\n{}",
        problems.len(),
        problems.join("\n  "),
        by_git.describe(),
        by_par.describe()
    );
}
