//! Faults in the middle of a checkout, injected by testfs on the whole repository (work tree and
//! `.git` on one mount, as on a real disk): `ENOSPC` once a byte count is written (the index
//! write fails too), `EIO` and `EACCES` on some of the paths being written. For clone, switch and
//! reset --hard, git-par must stop with a message naming a path and the cause, write nothing
//! outside the repository, leave no `index.lock` and an index git reads (and fsck accepts), and,
//! once the fault is lifted on the live mount, a rerun must converge to git's result (git's own
//! commands, on a copy without faults).

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::Path;

use support::*;
use testfs::Faults;

const WORKERS: &str = "checkout.workers=8";

/// A repository built by git: `main` with 60 files of 4,000 bytes in d1/, d2/, d3/; `other`
/// changes the 40 files of d1/ and d2/ and adds d4/ (10 files).
fn source(dir: &Path) {
    git_ok(
        dir.parent().unwrap(),
        ["init", "-q", "-b", "main", dir.to_str().unwrap()],
    );
    for d in ["d1", "d2", "d3"] {
        fs::create_dir_all(dir.join(d)).unwrap();
        for i in 0..20 {
            fs::write(
                dir.join(format!("{d}/f{i:02}.txt")),
                format!("{d} {i}\n").repeat(500),
            )
            .unwrap();
        }
    }
    git_ok(dir, ["add", "-A"]);
    git_ok(dir, ["commit", "-q", "-m", "main"]);
    git_ok(dir, ["switch", "-q", "-c", "other"]);
    for d in ["d1", "d2"] {
        for i in 0..20 {
            fs::write(
                dir.join(format!("{d}/f{i:02}.txt")),
                format!("{d} {i} other\n").repeat(400),
            )
            .unwrap();
        }
    }
    fs::create_dir_all(dir.join("d4")).unwrap();
    for i in 0..10 {
        fs::write(
            dir.join(format!("d4/n{i:02}.txt")),
            format!("new {i}\n").repeat(600),
        )
        .unwrap();
    }
    git_ok(dir, ["add", "-A"]);
    git_ok(dir, ["commit", "-q", "-m", "other"]);
    git_ok(dir, ["switch", "-q", "main"]);
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Writes fail once about half of what the checkout writes has been written.
    Enospc,
    /// `EIO` on every `f07.txt` and `n03.txt`.
    Eio,
    /// `EACCES` on the same names.
    Eacces,
}

impl Fault {
    fn faults(self, half_of_the_writes: u64) -> Faults {
        let names = vec!["f07.txt".to_owned(), "n03.txt".to_owned()];
        match self {
            Fault::Enospc => Faults {
                enospc_after: Some(half_of_the_writes),
                ..Faults::default()
            },
            Fault::Eio => Faults {
                eio: names,
                ..Faults::default()
            },
            Fault::Eacces => Faults {
                eacces: names,
                ..Faults::default()
            },
        }
    }

    fn cause(self) -> &'static str {
        match self {
            Fault::Enospc => "No space left on device",
            Fault::Eio => "Input/output error",
            Fault::Eacces => "Permission denied",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Clone,
    Switch,
    ResetHard,
    /// `merge --ff-only origin/other` on `main`.
    FastForward,
}

fn par<S: AsRef<std::ffi::OsStr>>(cwd: &Path, args: &[S]) -> Run {
    let mut all: Vec<OsString> = config_args(&[THRESHOLD_ZERO.to_owned(), WORKERS.to_owned()]);
    all.extend(args.iter().map(|a| a.as_ref().to_owned()));
    git_par(cwd, all)
}

/// Every path under `dir`, relative, sorted (what is on the mount besides the repository).
fn names_under(dir: &Path) -> Vec<String> {
    dir_names(dir)
}

fn lock_files(dir: &Path, found: &mut Vec<String>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            lock_files(&p, found);
        } else if p.extension().is_some_and(|x| x == "lock") {
            found.push(p.display().to_string());
        }
    }
}

fn fault_mid_checkout(op: Op, fault: Fault) {
    let s = scratch();
    let src = s.join("src");
    source(&src);
    let Some(mount) = testfs_mount(&s.join("fs"), testfs::Options::default()) else {
        return;
    };
    let m = mount.path().to_path_buf();
    let wt = m.join("wt");
    let oracle = s.join("oracle");
    let no_hardlinks = |dst: &Path| -> Vec<OsString> {
        vec![
            "clone".into(),
            "-q".into(),
            "--no-hardlinks".into(),
            src.clone().into(),
            dst.into(),
        ]
    };
    // What the checkout writes, roughly: the target's files.
    let half = match op {
        Op::Clone => 120_000,
        Op::Switch | Op::ResetHard | Op::FastForward => 90_000,
    };

    // The oracle: git's own commands on a copy without faults.
    git_ok(s.path(), no_hardlinks(&oracle));
    match op {
        Op::Clone => {}
        Op::Switch => {
            git_ok(&oracle, ["switch", "-q", "other"]);
        }
        Op::ResetHard => {
            git_ok(&oracle, ["reset", "-q", "--hard", "origin/other"]);
        }
        Op::FastForward => {
            git_ok(&oracle, ["merge", "-q", "--ff-only", "origin/other"]);
        }
    }

    let run = match op {
        Op::Clone => {
            // The repository's setup (by git, inside git-par's clone) writes its packs and refs
            // first: the byte count starts after a measured dry run of that setup.
            let probe = m.join("probe");
            mount.set_faults(Faults::default());
            let mut args = no_hardlinks(&probe);
            args.insert(1, "--no-checkout".into());
            git_ok(s.path(), args);
            let setup = mount.stats().bytes_written;
            fs::remove_dir_all(&probe).unwrap();
            mount.set_faults(fault.faults(setup + half));
            par(s.path(), &no_hardlinks(&wt))
        }
        Op::Switch | Op::ResetHard | Op::FastForward => {
            git_ok(s.path(), no_hardlinks(&wt));
            // Files as old as the index would be racily clean: the switch would read them to
            // compare, and the fault would hit that check instead of the writes. Age them and
            // let git record their stat data again.
            run(
                "sh",
                &wt,
                [
                    "-c",
                    "find . -path ./.git -prune -o -type f -exec touch -d 2020-01-01 {} +",
                ],
            )
            .assert_success();
            git_ok(&wt, ["update-index", "-q", "--refresh"]);
            mount.set_faults(fault.faults(half));
            match op {
                Op::Switch => par(&wt, &["switch", "other"]),
                Op::FastForward => par(&wt, &["merge", "--ff-only", "origin/other"]),
                _ => par(&wt, &["reset", "--hard", "origin/other"]),
            }
        }
    };
    let stats = mount.stats();
    mount.set_faults(Faults::default());

    let mut problems = Vec::new();
    let err = run.stderr_str();
    // git's safe switch reports the paths it could not write and still exits 0
    // (`merge_working_tree` ignores `unpack_trees`' -2), unless the index cannot be written
    // either (a full disk: "unable to write new index file"); every other operation fails (a
    // fast-forward: `checkout_fast_forward` fails on the -2, HEAD and the index stay).
    let git_succeeds = matches!(op, Op::Switch) && !matches!(fault, Fault::Enospc);
    if run.success() != git_succeeds {
        problems.push(format!(
            "git-par exited {:?} despite the fault, where git exits {}",
            run.status.code(),
            if git_succeeds { "0" } else { "non-zero" }
        ));
    }
    if stats.faults_injected == 0 {
        problems.push("testfs injected no fault (the test is wrong)".to_owned());
    }
    if !err.contains(fault.cause()) {
        problems.push(format!(
            "stderr does not give the cause `{}`",
            fault.cause()
        ));
    }
    // A path of the work tree, with the cause: not only the index that could not be written
    // afterwards.
    if !err.lines().any(|l| {
        l.contains(fault.cause())
            && ["d1/f", "d2/f", "d3/f", "d4/n"]
                .iter()
                .any(|p| l.contains(p))
    }) {
        problems.push("no line of stderr names a work-tree path with the cause".to_owned());
    }
    if names_under(&m) != ["wt"] {
        problems.push(format!(
            "the mount holds {:?}, not just wt",
            names_under(&m)
        ));
    }
    let mut locks = Vec::new();
    lock_files(&wt.join(".git"), &mut locks);
    if !locks.is_empty() {
        problems.push(format!("lock files left: {locks:?}"));
    }
    let st = git(&wt, ["status", "--porcelain"]);
    if !st.success() {
        problems.push(format!("git status fails: {}", st.describe()));
    }
    let fsck = git(&wt, ["fsck", "--no-progress", "--no-dangling"]);
    if !fsck.success() {
        problems.push(format!("git fsck fails: {}", fsck.describe()));
    }

    // The fault lifted: git-par's rerun converges to git's result. A switch whose index could
    // not be written (a full disk) left the old index under new files, which a plain rerun
    // refuses as local changes, as git's does: it is forced.
    let rerun = match op {
        Op::Clone => par(&wt, &["reset", "--hard"]),
        Op::Switch => {
            let head = git_str(&wt, ["symbolic-ref", "-q", "HEAD"]);
            if head == "refs/heads/other" {
                par(&wt, &["reset", "--hard"])
            } else {
                par(&wt, &["switch", "-f", "other"])
            }
        }
        Op::ResetHard => par(&wt, &["reset", "--hard", "origin/other"]),
        // The files written are local changes to the index kept, as after git's failed merge:
        // the fast-forward is finished by force.
        Op::FastForward => {
            if git_str(&wt, ["rev-parse", "HEAD"]) != git_str(&wt, ["rev-parse", "origin/main"]) {
                problems.push("the failed fast-forward moved the branch".to_owned());
            }
            par(&wt, &["reset", "--hard", "origin/other"])
        }
    };
    if !rerun.success() {
        problems.push(format!("the rerun fails: {}", rerun.describe()));
    }
    if let Err(e) = std::panic::catch_unwind(|| compare_worktrees(&oracle, &wt)) {
        problems.push(format!("after the rerun: {:?}", e.downcast_ref::<String>()));
    }
    for args in [
        &["ls-files", "-s"][..],
        &["symbolic-ref", "-q", "HEAD"],
        &["rev-parse", "HEAD"],
        &["status", "--porcelain", "--untracked-files=all"],
    ] {
        let (a, b) = (git(&oracle, args).stdout_str(), git(&wt, args).stdout_str());
        if a != b {
            problems.push(format!(
                "after the rerun `git {}` differs:\n git:     {a:?}\n git-par: {b:?}",
                args.join(" ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{op:?} with {fault:?}: {} problem(s):\n  {}\n--- git-par under the fault:\n{}",
        problems.len(),
        problems.join("\n  "),
        run.describe()
    );
    drop(mount);
}

macro_rules! fault_matrix {
    ($($name:ident: $op:expr, $fault:expr;)*) => {
        $(
            #[test]
            fn $name() {
                fault_mid_checkout($op, $fault);
            }
        )*
    };
}

fault_matrix! {
    enospc_mid_clone_then_reset_hard_converges_to_git: Op::Clone, Fault::Enospc;
    eio_mid_clone_then_reset_hard_converges_to_git: Op::Clone, Fault::Eio;
    eacces_mid_clone_then_reset_hard_converges_to_git: Op::Clone, Fault::Eacces;
    enospc_mid_switch_then_rerun_converges_to_git: Op::Switch, Fault::Enospc;
    eio_mid_switch_then_rerun_converges_to_git: Op::Switch, Fault::Eio;
    eacces_mid_switch_then_rerun_converges_to_git: Op::Switch, Fault::Eacces;
    enospc_mid_reset_hard_then_rerun_converges_to_git: Op::ResetHard, Fault::Enospc;
    eio_mid_reset_hard_then_rerun_converges_to_git: Op::ResetHard, Fault::Eio;
    eacces_mid_reset_hard_then_rerun_converges_to_git: Op::ResetHard, Fault::Eacces;
    enospc_mid_fast_forward_then_reset_converges_to_git: Op::FastForward, Fault::Enospc;
    eio_mid_fast_forward_then_reset_converges_to_git: Op::FastForward, Fault::Eio;
    eacces_mid_fast_forward_then_reset_converges_to_git: Op::FastForward, Fault::Eacces;
}
