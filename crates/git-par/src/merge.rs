//! `git par merge`: the merges that move no content of their own — "Already up to date." and
//! the fast-forward, whose work tree update is a parallel two-way update by the engine
//! ([`gitpar::fast_forward`]) — done as git 2.47's `builtin/merge.c` does them, with its
//! messages, reflog lines, `ORIG_HEAD`, diffstat and `post-merge` hook. Every other merge (a
//! real one, `--no-ff`, `--squash`, strategies, octopus, `--abort`/`--continue`/`--quit`,
//! `--autostash`, an unborn branch, unmerged entries, a merge in progress, ...) is handed to git
//! whole, by `exec`, before anything has changed: git-par decides from what it can read
//! without writing (the arguments, the configuration, the state files, the index and the
//! commits' merge bases). `pull` runs its merge step through [`run`] too, with the arguments
//! git's `pull` gives `git merge`.

use std::ffi::{OsStr, OsString};
use std::io::Write as _;

use gix::ObjectId;

use crate::checkout_args::CheckoutArgs;
use crate::gitopts::{self, alias, both, long, short, Arity, Spec};
use crate::report;

/// The options of `git merge` (git 2.47's `builtin_merge_options`).
pub(crate) const MERGE: &[Spec] = &[
    short("n", 'n', Arity::Flag),
    long("stat", Arity::Flag),
    alias("summary", "stat", Arity::Flag),
    long("log", Arity::Optional),
    long("squash", Arity::Flag),
    long("commit", Arity::Flag),
    both("edit", 'e', Arity::Flag),
    long("cleanup", Arity::Value),
    long("ff", Arity::Flag),
    long("ff-only", Arity::Flag),
    long("rerere-autoupdate", Arity::Flag),
    long("verify-signatures", Arity::Flag),
    both("strategy", 's', Arity::Value),
    both("strategy-option", 'X', Arity::Value),
    both("message", 'm', Arity::Value),
    both("file", 'F', Arity::Value),
    long("into-name", Arity::Value),
    both("verbose", 'v', Arity::Flag),
    both("quiet", 'q', Arity::Flag),
    long("abort", Arity::Flag),
    long("quit", Arity::Flag),
    long("continue", Arity::Flag),
    long("allow-unrelated-histories", Arity::Flag),
    long("progress", Arity::Flag),
    both("gpg-sign", 'S', Arity::Optional),
    long("autostash", Arity::Flag),
    long("overwrite-ignore", Arity::Flag),
    long("signoff", Arity::Flag),
    long("no-verify", Arity::Flag),
];

/// Who asked for the merge, which decides how a merge git-par does not do goes to git.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Caller {
    /// `git par merge ARGS`: git gets git-par's own command line.
    User,
    /// `pull`'s merge step: git gets `git merge ARGS`, as git's `pull` runs it (with
    /// `GIT_REFLOG_ACTION` already in the environment).
    Pull,
}

/// `git par merge ARGS` (the arguments after `merge`).
pub(crate) fn merge(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    if opens_an_editor(&args) {
        // An editor session on a merge commit is git's alone: refused as usage git-par does not
        // take (exit 2), so that whoever runs git-par in git's place runs git itself, in the
        // same process (a test, or a tool, may signal the process it started by its pid); run
        // as `git`, git-par never takes such a call (`transparent::parses`).
        eprintln!(
            "error: unexpected argument '--edit' found\n\n  tip: a merge message edited in an \
             editor is git's: run `git merge` for it\n\nUsage: git par merge [every option of git \
             merge] COMMIT\n\nFor more information, try '--help'."
        );
        return Err(2);
    }
    run(&args, overrides, Caller::User)
}

/// Whether `git merge ARGS` asks for the merge message in an editor (`-e`/`--edit`), which
/// only a merge commit has: git's, whole.
pub(crate) fn opens_an_editor(args: &[OsString]) -> bool {
    gitopts::parse(args, MERGE).flag("edit") == Some(true)
}

/// Replace this process by git for this merge, saying why with `GIT_PAR_TRACE`.
fn hand_to_git(args: &[OsString], caller: Caller, why: &str) -> u8 {
    let git = match caller {
        Caller::User => crate::git::own_args(),
        Caller::Pull => std::iter::once(OsString::from("merge"))
            .chain(args.iter().cloned())
            .collect(),
    };
    crate::patch::hand_to_git("merge", why, &git)
}

/// What the command line asks for, when git-par can do it.
struct Wanted {
    /// The merged commit as given (`-` already `@{-1}`).
    target: String,
    /// `OPT__VERBOSITY`.
    verbosity: i32,
    /// `-n`/`--[no-]stat`/`--[no-]summary`, the last one given.
    stat: Option<bool>,
    /// `-m`: git notes that no commit was created.
    message: bool,
    /// `--ff-only` (last of `--ff`, `--no-ff`, `--ff-only`).
    ff: Option<Ff>,
    /// `--[no-]overwrite-ignore` (default: ignored files are overwritten).
    overwrite_ignore: bool,
}

/// `--ff`, `--no-ff`, `--ff-only` and `merge.ff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ff {
    Allow,
    No,
    Only,
}

/// Read the command line; `Err(why)` when git does this merge.
fn wanted(args: &[OsString]) -> Result<Wanted, &'static str> {
    let p = gitopts::parse(args, MERGE);
    if p.unreadable || p.help {
        return Err("an option git-par does not read");
    }
    for (name, why) in [
        ("abort", "--abort"),
        ("quit", "--quit"),
        ("continue", "--continue"),
        ("squash", "--squash"),
        ("autostash", "--autostash"),
        ("verify-signatures", "--verify-signatures"),
    ] {
        if p.flag(name) == Some(true) {
            return Err(why);
        }
    }
    for (name, why) in [
        ("strategy", "a strategy"),
        ("strategy-option", "a strategy option"),
        ("file", "-F"),
        ("cleanup", "--cleanup"),
    ] {
        if p.options.iter().any(|o| o.name == name) {
            return Err(why);
        }
    }
    // Options git refuses to negate, or takes only one way: git says so.
    if p.options
        .iter()
        .any(|o| o.negated && matches!(o.name, "ff-only" | "n" | "file"))
    {
        return Err("a negation git refuses");
    }
    let target = match p.positionals.as_slice() {
        [one] => one.to_str().ok_or("a name that is not UTF-8")?,
        [] => return Err("no commit named (merge.defaultToUpstream)"),
        _ => return Err("an octopus merge"),
    };
    let target = if target == "-" { "@{-1}" } else { target }.to_owned();
    let mut stat = None;
    let mut ff = None;
    for o in &p.options {
        match o.name {
            "n" => stat = Some(false),
            "stat" => stat = Some(!o.negated),
            "ff" => ff = Some(if o.negated { Ff::No } else { Ff::Allow }),
            "ff-only" => ff = Some(Ff::Only),
            _ => {}
        }
    }
    Ok(Wanted {
        target,
        verbosity: p.verbosity(),
        stat,
        message: p.options.iter().any(|o| o.name == "message" && !o.negated),
        ff,
        overwrite_ignore: p.flag("overwrite-ignore").unwrap_or(true),
    })
}

/// `merge.ff` as git reads it (an unknown value is ignored, for future versions).
fn config_ff(config: &gix::config::Snapshot<'_>) -> Option<Ff> {
    let value = config.string("merge.ff");
    if value.as_ref().is_some_and(|v| v.as_slice() == b"only") {
        return Some(Ff::Only);
    }
    config
        .boolean("merge.ff")
        .map(|b| if b { Ff::Allow } else { Ff::No })
}

/// A merge of `args` (the arguments `git merge` would get), done here when it is up to date or
/// a fast-forward, else handed to git before anything changed.
pub(crate) fn run(args: &[OsString], overrides: &[String], caller: Caller) -> Result<(), u8> {
    let hand = |why: &str| hand_to_git(args, caller, why);
    let w = wanted(args).map_err(hand)?;
    let opened = crate::hooks::open_repo(overrides)?;
    gitpar::sys::phase::mark("repository opened");
    let repo = &opened.repo;
    let config = repo.config_snapshot();
    let branch = repo.head_name().ok().flatten();
    if let Some(b) = &branch {
        let key = format!("branch.{}.mergeoptions", b.shorten());
        if config.string(key.as_str()).is_some() {
            return Err(hand("branch.<name>.mergeOptions"));
        }
    }
    for (key, why) in [
        ("merge.verifySignatures", "merge.verifySignatures"),
        ("merge.autoStash", "merge.autoStash"),
    ] {
        if config.boolean(key) == Some(true) {
            return Err(hand(why));
        }
    }
    for key in ["pull.twohead", "pull.octopus", "commit.cleanup"] {
        if config.string(key).is_some() {
            return Err(hand(key));
        }
    }
    let ff = w.ff.or_else(|| config_ff(&config)).unwrap_or(Ff::Allow);
    if ff == Ff::No {
        return Err(hand("--no-ff"));
    }
    let dir = repo.git_dir();
    if dir.join("MERGE_HEAD").exists() || dir.join("CHERRY_PICK_HEAD").exists() {
        return Err(hand("a merge or cherry-pick in progress"));
    }
    let Ok(head) = repo.head_commit().map(|c| c.id) else {
        return Err(hand("no commit on HEAD"));
    };
    let theirs = if w.target == "FETCH_HEAD" {
        // `pull`'s merge step: the one commit to merge, named in the reflog by `pull`.
        if std::env::var_os("GIT_REFLOG_ACTION").is_none() {
            return Err(hand("FETCH_HEAD outside of pull"));
        }
        match fetch_head_commits(repo).as_deref() {
            Some([one]) => *one,
            _ => return Err(hand("not exactly one commit in FETCH_HEAD")),
        }
    } else {
        if w.target.contains("...") {
            return Err(hand("a merge-base revision"));
        }
        // git warns of an ambiguous name once: let it name it.
        if crate::revision::ambiguous(repo, &w.target).is_some() {
            return Err(hand("an ambiguous name"));
        }
        let Some(id) = crate::revision::resolve_mb(repo, &w.target, false) else {
            return Err(hand("a name git-par does not resolve"));
        };
        id
    };
    match repo.find_object(theirs).map(|o| o.kind) {
        Ok(gix::object::Kind::Commit) => {}
        _ => return Err(hand("not a commit (a tag, or another object)")),
    }
    if has_unmerged_entries(&opened.index_path, repo) {
        return Err(hand("unmerged entries"));
    }
    gitpar::sys::phase::mark("index read for unmerged entries");
    let relation = gitpar::fast_forward::relation(repo, head, theirs)
        .map_err(|_| hand("the merge bases could not be computed"))?;
    gitpar::sys::phase::mark("merge bases");
    let env = crate::hooks::env();
    match relation {
        gitpar::fast_forward::Relation::Diverged => Err(hand("not a fast-forward")),
        gitpar::fast_forward::Relation::UpToDate => {
            gitpar::fast_forward::record_orig_head(repo, env, head).map_err(report::aborted)?;
            if w.verbosity >= 0 {
                println!("Already up to date.");
            }
            gitpar::repo::state::remove_merge_branch_state(repo, env).map_err(report::aborted)?;
            Ok(())
        }
        gitpar::fast_forward::Relation::FastForward => {
            fast_forward(&opened, &w, &config, (head, theirs))
        }
    }
}

/// The commits `FETCH_HEAD` lists for merging (git's `get_merge_heads`: lines that begin with
/// an object id and are not `not-for-merge`), or `None` if it cannot be read.
pub(crate) fn fetch_head_commits(repo: &gix::Repository) -> Option<Vec<ObjectId>> {
    let text = std::fs::read(repo.git_dir().join("FETCH_HEAD")).ok()?;
    let len = repo.object_hash().len_in_hex();
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let Some(hex) = line.get(..len) else {
            continue;
        };
        let Ok(id) = ObjectId::from_hex(hex) else {
            continue;
        };
        if line[len..].starts_with(b"\tnot-for-merge\t") {
            continue;
        }
        out.push(id);
    }
    Some(out)
}

/// Returns true if and only if the index has entries at a stage other than 0 (git's
/// `repo_read_index_unmerged`, whose "Merging is not possible" git prints). An index that
/// cannot be read counts as unmerged, so that git says what is wrong with it.
pub(crate) fn has_unmerged_entries(index_path: &std::path::Path, repo: &gix::Repository) -> bool {
    if !index_path.exists() {
        return false;
    }
    match gix::index::File::at(
        index_path,
        repo.object_hash(),
        true,
        gix::index::decode::Options::default(),
    ) {
        Ok(index) => index
            .entries()
            .iter()
            .any(|e| e.stage() != gix::index::entry::Stage::Unconflicted),
        Err(_) => true,
    }
}

/// The fast-forward of `HEAD` from `head` to `theirs`, as `cmd_merge` and `finish()` do it.
fn fast_forward(
    opened: &crate::repo::Opened,
    w: &Wanted,
    config: &gix::config::Snapshot<'_>,
    (head, theirs): (ObjectId, ObjectId),
) -> Result<(), u8> {
    let repo = &opened.repo;
    let env = crate::hooks::env();
    let workdir = opened.require_workdir()?.to_owned();
    gitpar::fast_forward::record_orig_head(repo, env, head).map_err(report::aborted)?;
    if w.verbosity >= 0 {
        println!(
            "Updating {}..{}",
            crate::names::short(repo, head),
            crate::names::short(repo, theirs)
        );
    }
    let stat = w.verbosity >= 0
        && w.stat.unwrap_or_else(|| {
            config
                .boolean("merge.stat")
                .or_else(|| config.boolean("merge.diffstat"))
                .unwrap_or(true)
        });
    // The diffstat depends on the two commits only: git's `diff` makes it while the work tree
    // is written, and it is printed where merge prints it.
    let mut stat = stat.then(|| Diffstat::start(head, theirs));
    let args = CheckoutArgs {
        preserve_ignored: !w.overwrite_ignore,
        filter_meta: gitpar::FilterMeta {
            ref_name: None,
            treeish: Some(theirs),
        },
        ..CheckoutArgs::default()
    };
    let options = crate::engine::update_options(repo, &args, gitpar::update::Policy::Safe);
    let outcome = crate::engine::with_progress(&args, |ctx| {
        gitpar::fast_forward::update(
            repo,
            head,
            theirs,
            &workdir,
            &opened.index_path,
            &options,
            ctx,
        )
    })
    .map_err(|e| match e {
        // `checkout_fast_forward` reports the lock as an error and the merge fails (1).
        gitpar::switch::Error::Update(gitpar::update::Error::Checkout(
            gitpar::checkout::Error::Lock(e),
        )) => {
            eprintln!("error: {e}");
            1
        }
        gitpar::switch::Error::Update(e) => {
            let advice = crate::branches::advice_enabled(repo, "commitBeforeMerge");
            report::update_error_for(e, report::Porcelain::Merge { advice });
            1
        }
        other => report::switch_error(repo, other),
    })?;
    report::update_outcome(&outcome, report::SparseWords::Porcelain);
    gitpar::sys::phase::mark("work tree updated");
    let msg = if w.message {
        "Fast-forward (no commit created; -m option ignored)"
    } else {
        "Fast-forward"
    };
    if w.verbosity >= 0 {
        println!("{msg}");
    }
    let action =
        std::env::var("GIT_REFLOG_ACTION").unwrap_or_else(|_| format!("merge {}", w.target));
    gitpar::fast_forward::move_head(repo, env, head, theirs, &format!("{action}: {msg}"))
        .map_err(|e| report::switch_error(repo, e))?;
    gitpar::sys::phase::mark("HEAD moved");
    auto_maintenance(config, w.verbosity < 0);
    gitpar::sys::phase::mark("maintenance");
    if let Some(stat) = stat.take() {
        stat.finish();
    }
    gitpar::sys::phase::mark("diffstat");
    gitpar::fast_forward::post_merge(repo, env, false);
    gitpar::repo::state::remove_merge_branch_state(repo, env).map_err(report::aborted)?;
    Ok(())
}

/// git's `run_auto_maintenance` after `HEAD` moved: `git maintenance run --auto`, unless
/// `maintenance.auto` is off; its failure is ignored, as git ignores it.
fn auto_maintenance(config: &gix::config::Snapshot<'_>, quiet: bool) {
    if config.boolean("maintenance.auto") == Some(false) {
        return;
    }
    let detach = config
        .boolean("maintenance.autoDetach")
        .or_else(|| config.boolean("gc.autoDetach"))
        .unwrap_or(true);
    let _ = std::io::stdout().flush();
    let _ = gitpar::git_command()
        .args(["maintenance", "run", "--auto"])
        .arg(if quiet { "--quiet" } else { "--no-quiet" })
        .arg(if detach { "--detach" } else { "--no-detach" })
        .status();
}

/// `finish()`'s diffstat of `head..theirs` (`DIFF_FORMAT_DIFFSTAT | DIFF_FORMAT_SUMMARY`,
/// renames detected, git's diff configuration): git's own `diff`, which prints it byte for
/// byte as merge does. When standard output is no terminal, git's diff runs from
/// [`Diffstat::start`] on, beside the work tree update, into pipes read by threads (so that a
/// large diffstat never blocks it), replayed in place (its warnings, then the diffstat); on a
/// terminal (colour and width are the terminal's) it runs
/// at [`Diffstat::finish`], onto standard output itself.
struct Diffstat {
    ids: (ObjectId, ObjectId),
    running: Option<Running>,
}

/// git's diff running into pipes: the child and the threads reading its standard output and
/// error.
type Running = (
    std::process::Child,
    std::thread::JoinHandle<Vec<u8>>,
    std::thread::JoinHandle<Vec<u8>>,
);

impl Diffstat {
    /// git's command for the diffstat.
    fn command((head, theirs): (ObjectId, ObjectId)) -> std::process::Command {
        let mut cmd = gitpar::git_command();
        cmd.args([
            OsStr::new("--no-pager"),
            OsStr::new("diff"),
            OsStr::new("--stat"),
            OsStr::new("--summary"),
            OsStr::new("-M"),
            OsStr::new("--no-relative"),
        ])
        .arg(head.to_string())
        .arg(theirs.to_string())
        .arg("--");
        cmd
    }

    /// Start the diffstat of `head..theirs` now if its output can wait in a pipe.
    fn start(head: ObjectId, theirs: ObjectId) -> Diffstat {
        use std::io::{IsTerminal, Read};
        let ids = (head, theirs);
        let running = (!std::io::stdout().is_terminal())
            .then(|| {
                let mut child = Diffstat::command(ids)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .ok()?;
                let read = |mut from: Box<dyn Read + Send>| {
                    std::thread::spawn(move || {
                        let mut buf = Vec::new();
                        let _ = from.read_to_end(&mut buf);
                        buf
                    })
                };
                let out = read(Box::new(child.stdout.take()?));
                let err = read(Box::new(child.stderr.take()?));
                Some((child, out, err))
            })
            .flatten();
        Diffstat { ids, running }
    }

    /// Print the diffstat where merge prints it.
    fn finish(mut self) {
        let _ = std::io::stdout().flush();
        match self.running.take() {
            Some((mut child, out, err)) => {
                let out = out.join().unwrap_or_default();
                let err = err.join().unwrap_or_default();
                let _ = child.wait();
                // diff's warnings (rename limits) come before its output, as in merge.
                let _ = std::io::stderr().write_all(&err);
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(&out);
                let _ = stdout.flush();
            }
            None => {
                let _ = Diffstat::command(self.ids).status();
            }
        }
    }
}

impl Drop for Diffstat {
    /// A merge that stopped prints no diffstat: git's diff is stopped.
    fn drop(&mut self) {
        if let Some((mut child, out, err)) = self.running.take() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = out.join();
            let _ = err.join();
        }
    }
}
