//! `git par pull`: git 2.47's `builtin/pull.c` with its merge step in git-par. The fetch is
//! git's own (`git fetch --update-head-ok` with the options `pull` passes it, rebuilt as
//! parse-options' `OPT_PASSTHRU` rebuilds them, under pull's `GIT_REFLOG_ACTION`); then pull's
//! checks (no candidates, `--ff-only` on diverging branches, the divergent-branches advice) are
//! made here with git's messages, and the merge step is [`crate::merge::run`] with the arguments
//! `pull` would give `git merge FETCH_HEAD`: a fast-forward or "Already up to date." is
//! git-par's, any other merge is `exec`ed as `git merge ARGS FETCH_HEAD`, which is what git's
//! pull runs at that point. A pull that rebases (`--rebase`, `pull.rebase`,
//! `branch.<name>.rebase`), recurses into submodules, is a `--dry-run`, checks `--cleanup`, or
//! starts from an unborn branch, unmerged entries or a merge in progress is handed to git whole
//! before anything runs.

use std::ffi::OsString;

use crate::branches::{advise_if_enabled, advise_in};
use crate::exit::fatal;
use crate::gitopts::{self, both, long, short, Arity, Given, Parsed, Spec};
use crate::merge::Caller;

/// The options of `git pull` (git 2.47's `pull_options`).
const PULL: &[Spec] = &[
    both("verbose", 'v', Arity::Flag),
    both("quiet", 'q', Arity::Flag),
    long("progress", Arity::Flag),
    long("recurse-submodules", Arity::Optional),
    both("rebase", 'r', Arity::Optional),
    short("n", 'n', Arity::Flag),
    long("stat", Arity::Flag),
    long("summary", Arity::Flag),
    long("log", Arity::Optional),
    long("signoff", Arity::Optional),
    long("squash", Arity::Flag),
    long("commit", Arity::Flag),
    long("edit", Arity::Flag),
    long("cleanup", Arity::Value),
    long("ff", Arity::Flag),
    long("ff-only", Arity::Flag),
    long("verify", Arity::Flag),
    long("verify-signatures", Arity::Flag),
    long("autostash", Arity::Flag),
    both("strategy", 's', Arity::Value),
    both("strategy-option", 'X', Arity::Value),
    both("gpg-sign", 'S', Arity::Optional),
    long("allow-unrelated-histories", Arity::Flag),
    long("all", Arity::Flag),
    both("append", 'a', Arity::Flag),
    long("upload-pack", Arity::Value),
    both("force", 'f', Arity::Flag),
    both("tags", 't', Arity::Flag),
    both("prune", 'p', Arity::Flag),
    both("jobs", 'j', Arity::Optional),
    long("dry-run", Arity::Flag),
    both("keep", 'k', Arity::Flag),
    long("depth", Arity::Value),
    long("shallow-since", Arity::Value),
    long("shallow-exclude", Arity::Value),
    long("deepen", Arity::Value),
    long("unshallow", Arity::Flag),
    long("update-shallow", Arity::Flag),
    long("refmap", Arity::Value),
    both("server-option", 'o', Arity::Value),
    both("ipv4", '4', Arity::Flag),
    both("ipv6", '6', Arity::Flag),
    long("negotiation-tip", Arity::Value),
    long("show-forced-updates", Arity::Flag),
    long("set-upstream", Arity::Flag),
];

/// The options parse-options refuses to negate (`PARSE_OPT_NONEG`), which gitopts reads.
const NONEG: &[&str] = &["n", "ff-only", "unshallow", "refmap"];

/// Replace this process by `git pull` with git-par's own arguments, saying why with
/// `GIT_PAR_TRACE`.
fn hand_to_git(why: &str) -> u8 {
    crate::patch::hand_to_git("pull", why, &crate::git::own_args())
}

/// An option as `OPT_PASSTHRU` rebuilds it: `--[no-]<long>[=<value>]`, or `-<short><value>`
/// for an option without a long name.
fn passthru(o: &Given) -> OsString {
    let spec = PULL
        .iter()
        .find(|s| s.name == o.name)
        .expect("a pull option");
    let mut out = OsString::new();
    match spec.long {
        Some(l) => {
            out.push(if o.negated { "--no-" } else { "--" });
            out.push(l);
            if let Some(v) = &o.value {
                out.push("=");
                out.push(v);
            }
        }
        None => {
            out.push(format!("-{}", spec.short.unwrap_or('?')));
            if let Some(v) = &o.value {
                out.push(v);
            }
        }
    }
    out
}

/// The last `OPT_PASSTHRU` among the options `names` (they share one variable), rebuilt.
fn slot(p: &Parsed, names: &[&str]) -> Option<OsString> {
    p.options
        .iter()
        .rev()
        .find(|o| names.contains(&o.name))
        .map(passthru)
}

/// Every `OPT_PASSTHRU_ARGV` among `names`, rebuilt, in the order given.
fn slots(p: &Parsed, names: &[&str]) -> Vec<OsString> {
    p.options
        .iter()
        .filter(|o| names.contains(&o.name))
        .map(passthru)
        .collect()
}

/// git's `argv_push_verbosity`.
fn verbosity_args(p: &Parsed) -> Vec<OsString> {
    let v = p.verbosity();
    let word = if v > 0 { "-v" } else { "-q" };
    (0..v.unsigned_abs())
        .map(|_| OsString::from(word))
        .collect()
}

/// `git_parse_maybe_bool`: `Some(true/false)` for git's boolean spellings and integers.
fn maybe_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else {
        return Some(true);
    };
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" | "" => Some(false),
        other => other.parse::<i64>().ok().map(|n| n != 0),
    }
}

/// A configuration value as git's `git_config_get_value` gives it: `None` when unset,
/// `Some(None)` for a key without `=`.
fn config_value(config: &gix::config::Snapshot<'_>, key: &str) -> Option<Option<String>> {
    let file = config.plumbing();
    // gix's boolean reads a key without `=` as true (git's NULL value); an empty value is false.
    let implicit_true = file.boolean(key).is_ok_and(|b| b == Some(true));
    match file.raw_value(key) {
        Ok(v) if !v.is_empty() => Some(Some(String::from_utf8_lossy(&v).into_owned())),
        Ok(_) if implicit_true => Some(None),
        Ok(_) => Some(Some(String::new())),
        Err(_) => implicit_true.then_some(None),
    }
}

/// `git par pull ARGS` (the arguments after `pull`).
pub(crate) fn pull(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let p = gitopts::parse(&args, PULL);
    refuse_unread_options(&p)?;
    let opened = crate::hooks::open_repo(overrides)?;
    let repo = &opened.repo;
    let config = repo.config_snapshot();
    if config.boolean("submodule.recurse") == Some(true) {
        return Err(hand_to_git("submodule.recurse"));
    }
    // `--rebase[=<how>]`, `-r`, `--no-rebase`: anything but false rebases.
    let cli_rebase = p.options.iter().rev().find(|o| o.name == "rebase");
    let opt_ff = ff_option(&p, &config, cli_rebase.is_some())?;
    let branch = repo
        .head_name()
        .ok()
        .flatten()
        .map(|n| n.shorten().to_string());
    let (rebase, rebase_unspecified) = rebase_choice(cli_rebase, branch.as_deref(), &config);
    if rebase != Some(false) {
        return Err(hand_to_git("a rebasing pull"));
    }
    if p.flag("autostash") == Some(true) {
        return Err(hand_to_git("--autostash"));
    }
    let orig_head = refuse_repository_state(&opened)?;
    // From here on the pull is git-par's: git's pull names itself in every reflog line.
    set_reflog_action(&args);
    let (remote, refspecs) = match p.positionals.split_first() {
        Some((r, rest)) => (Some(r.clone()), rest.to_vec()),
        None => (None, Vec::new()),
    };
    let code = crate::git::run_git(&fetch_args(&p, remote.as_ref(), &refspecs), None)?;
    if code != 0 {
        return Err(1);
    }
    // The fetch wrote objects and refs: read them afresh.
    let opened = crate::hooks::open_repo(overrides)?;
    let repo = &opened.repo;
    let curr_head = repo.head_commit().map(|c| c.id).ok();
    if let Some(curr) = curr_head.filter(|c| *c != orig_head) {
        catch_up_work_tree(&opened, orig_head, curr)?;
    }
    let Some(merge_heads) = crate::merge::fetch_head_commits(repo) else {
        return Err(fatal(format!(
            "could not open '{}' for reading: No such file or directory",
            repo.git_dir().join("FETCH_HEAD").display()
        )));
    };
    if merge_heads.is_empty() {
        no_merge_candidates(repo, branch.as_deref(), remote.as_ref(), &refspecs);
        return Err(1);
    }
    let ff_only = opt_ff.as_deref() == Some("--ff-only".as_ref());
    if merge_heads.len() > 1 && ff_only {
        return Err(fatal("Cannot fast-forward to multiple branches."));
    }
    let divergent = diverges(repo, orig_head, &merge_heads)?;
    if divergent {
        refuse_divergent(repo, ff_only, opt_ff.is_none() && rebase_unspecified)?;
    }
    let args = merge_args(&p, opt_ff);
    crate::merge::run(&args, overrides, Caller::Pull)
}

/// The options git-par's pull does not carry out itself: the call is git's (before the
/// repository is opened, as git-par reads nothing of it for them).
fn refuse_unread_options(p: &Parsed) -> Result<(), u8> {
    if p.unreadable || p.help {
        return Err(hand_to_git("an option git-par does not read"));
    }
    if p.options
        .iter()
        .any(|o| o.negated && NONEG.contains(&o.name))
    {
        return Err(hand_to_git("a negation git refuses"));
    }
    for (name, why) in [
        ("recurse-submodules", "--recurse-submodules"),
        ("cleanup", "--cleanup"),
    ] {
        if p.options.iter().any(|o| o.name == name) {
            return Err(hand_to_git(why));
        }
    }
    if p.flag("dry-run") == Some(true) {
        return Err(hand_to_git("--dry-run"));
    }
    Ok(())
}

/// git's `opt_ff`: `--ff`, `--no-ff` or `--ff-only` as given, else from `pull.ff` (where
/// `--rebase` on the command line turns `only` into `--ff`). An invalid `pull.ff` is git's.
fn ff_option(
    p: &Parsed,
    config: &gix::config::Snapshot<'_>,
    cli_rebase: bool,
) -> Result<Option<OsString>, u8> {
    let mut opt_ff = slot(p, &["ff", "ff-only"]);
    if opt_ff.is_none() {
        opt_ff = match config_value(config, "pull.ff") {
            None => None,
            Some(v) => match (maybe_bool(v.as_deref()), v.as_deref()) {
                (Some(false), _) => Some("--no-ff".into()),
                (Some(true), _) => Some("--ff".into()),
                (None, Some("only")) => Some("--ff-only".into()),
                _ => return Err(hand_to_git("an invalid pull.ff")),
            },
        };
        if cli_rebase && opt_ff.as_deref() == Some("--ff-only".as_ref()) {
            opt_ff = Some("--ff".into());
        }
    }
    Ok(opt_ff)
}

/// git's `config_get_rebase`: `--[no-]rebase[=<how>]`, else `branch.<name>.rebase`, else
/// `pull.rebase` (`Some(false)`: merge; `None`: a value that is no boolean, which rebases), and
/// whether none of them was given (git then asks how to reconcile divergent branches).
fn rebase_choice(
    cli_rebase: Option<&Given>,
    branch: Option<&str>,
    config: &gix::config::Snapshot<'_>,
) -> (Option<bool>, bool) {
    match cli_rebase {
        Some(o) if o.negated => (Some(false), false),
        Some(o) => match &o.value {
            None => (Some(true), false),
            Some(v) => (maybe_bool(Some(&v.to_string_lossy())), false),
        },
        None => {
            let key = branch.map(|b| format!("branch.{b}.rebase"));
            match key
                .as_deref()
                .and_then(|k| config_value(config, k))
                .or_else(|| config_value(config, "pull.rebase"))
            {
                Some(v) => (maybe_bool(v.as_deref()), false),
                None => (Some(false), true),
            }
        }
    }
}

/// The states git-par's pull leaves to git: a merge in progress, no commit on `HEAD`, unmerged
/// entries. Returns the commit `HEAD` is at.
fn refuse_repository_state(opened: &crate::repo::Opened) -> Result<gix::ObjectId, u8> {
    let repo = &opened.repo;
    if repo.git_dir().join("MERGE_HEAD").exists() {
        return Err(hand_to_git("a merge in progress"));
    }
    let Ok(orig_head) = repo.head_commit().map(|c| c.id) else {
        return Err(hand_to_git("no commit on HEAD"));
    };
    if crate::merge::has_unmerged_entries(&opened.index_path, repo) {
        return Err(hand_to_git("unmerged entries"));
    }
    Ok(orig_head)
}

/// git's pull names itself in every reflog line: `GIT_REFLOG_ACTION=pull ARGS`, unless set.
fn set_reflog_action(args: &[OsString]) {
    if std::env::var_os("GIT_REFLOG_ACTION").is_none() {
        let mut msg = String::from("pull");
        for a in args {
            msg.push(' ');
            msg.push_str(&a.to_string_lossy());
        }
        std::env::set_var("GIT_REFLOG_ACTION", msg);
    }
}

/// Whether `HEAD` (`orig_head`) and the fetched heads diverge: neither a fast-forward to the
/// one head nor already containing them all. git compares commits: a fetched tag stands for the
/// commit it points to.
fn diverges(
    repo: &gix::Repository,
    orig_head: gix::ObjectId,
    merge_heads: &[gix::ObjectId],
) -> Result<bool, u8> {
    let relation = |theirs: gix::ObjectId| {
        let commit = repo
            .find_object(theirs)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id)
            .map_err(|e| fatal(format!("unable to read {theirs}: {e}")))?;
        gitpar::fast_forward::relation(repo, orig_head, commit)
            .map_err(|e| fatal(format!("unable to find the merge bases: {e}")))
    };
    let can_ff = match merge_heads {
        [one] => {
            matches!(relation(*one)?, gitpar::fast_forward::Relation::FastForward)
                || *one == orig_head
        }
        _ => false,
    };
    let mut up_to_date = true;
    for mh in merge_heads {
        if relation(*mh)? != gitpar::fast_forward::Relation::UpToDate {
            up_to_date = false;
            break;
        }
    }
    Ok(!can_ff && !up_to_date)
}

/// git's refusals of a divergent pull: with `--ff-only`, and when nothing says how to reconcile
/// (`unspecified`: neither `--[no-]ff[-only]`/`pull.ff` nor a rebase setting), with its advice.
fn refuse_divergent(repo: &gix::Repository, ff_only: bool, unspecified: bool) -> Result<(), u8> {
    if ff_only {
        advise_if_enabled(
            repo,
            "diverging",
            "Diverging branches can't be fast-forwarded, you need to either:\n\
             \n\
             \tgit merge --no-ff\n\
             \n\
             or:\n\
             \n\
             \tgit rebase\n",
        );
        return Err(fatal("Not possible to fast-forward, aborting."));
    }
    if unspecified {
        advise_in(
            repo,
            "You have divergent branches and need to specify how to reconcile them.\n\
             You can do so by running one of the following commands sometime before\n\
             your next pull:\n\
             \n\
             \x20 git config pull.rebase false  # merge\n\
             \x20 git config pull.rebase true   # rebase\n\
             \x20 git config pull.ff only       # fast-forward only\n\
             \n\
             You can replace \"git config\" with \"git config --global\" to set a default\n\
             preference for all repositories. You can also pass --rebase, --no-rebase,\n\
             or --ff-only on the command line to override the configured default per\n\
             invocation.",
        );
        return Err(fatal(
            "Need to specify how to reconcile divergent branches.",
        ));
    }
    Ok(())
}

/// git's `run_fetch`: `fetch --update-head-ok` and the fetch options, rebuilt, then the
/// repository and refspecs.
fn fetch_args(p: &Parsed, remote: Option<&OsString>, refspecs: &[OsString]) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec!["fetch".into(), "--update-head-ok".into()];
    out.extend(verbosity_args(p));
    out.extend(slot(p, &["progress"]));
    for names in [&["all"][..], &["append"], &["upload-pack"]] {
        out.extend(slot(p, names));
    }
    let mut force = 0;
    for o in p.options.iter().filter(|o| o.name == "force") {
        force = if o.negated { 0 } else { force + 1 };
    }
    out.extend((0..force).map(|_| OsString::from("-f")));
    for names in [&["tags"][..], &["prune"], &["jobs"]] {
        out.extend(slot(p, names));
    }
    for names in [
        &["keep"][..],
        &["depth"],
        &["unshallow"],
        &["update-shallow"],
        &["refmap"],
        &["ipv4"],
        &["ipv6"],
    ] {
        out.extend(slot(p, names));
    }
    match p.flag("show-forced-updates") {
        Some(true) => out.push("--show-forced-updates".into()),
        Some(false) => out.push("--no-show-forced-updates".into()),
        None => {}
    }
    out.extend(slot(p, &["set-upstream"]));
    out.extend(slots(
        p,
        &[
            "shallow-since",
            "shallow-exclude",
            "deepen",
            "server-option",
            "negotiation-tip",
        ],
    ));
    if let Some(r) = remote {
        out.push(r.clone());
        out.extend(refspecs.iter().cloned());
    }
    out
}

/// git's `run_merge`: the arguments of `git merge` for the merge step.
fn merge_args(p: &Parsed, opt_ff: Option<OsString>) -> Vec<OsString> {
    let mut out = verbosity_args(p);
    out.extend(slot(p, &["progress"]));
    out.extend(slot(p, &["n", "stat", "summary"]));
    for names in [
        &["log"][..],
        &["signoff"],
        &["squash"],
        &["commit"],
        &["edit"],
    ] {
        out.extend(slot(p, names));
    }
    out.extend(opt_ff);
    out.extend(slot(p, &["verify"]));
    out.extend(slot(p, &["verify-signatures"]));
    out.extend(slots(p, &["strategy"]));
    out.extend(slots(p, &["strategy-option"]));
    out.extend(slot(p, &["gpg-sign"]));
    if p.flag("autostash") == Some(false) {
        out.push("--no-autostash".into());
    }
    if p.flag("allow-unrelated-histories") == Some(true) {
        out.push("--allow-unrelated-histories".into());
    }
    out.push("FETCH_HEAD".into());
    out
}

/// The fetch moved the branch `HEAD` is on (`pull . x:main`): the work tree follows it from
/// `orig` to `curr` as git's pull makes it follow (ignored files kept), or git's pull dies.
fn catch_up_work_tree(
    opened: &crate::repo::Opened,
    orig: gix::ObjectId,
    curr: gix::ObjectId,
) -> Result<(), u8> {
    let repo = &opened.repo;
    // git's `warning()` prefixes the first line only.
    eprintln!(
        "warning: fetch updated the current branch head.\n\
         fast-forwarding your working tree from\n\
         commit {orig}."
    );
    let workdir = opened.require_workdir()?.to_owned();
    let args = crate::checkout_args::CheckoutArgs {
        preserve_ignored: true,
        ..crate::checkout_args::CheckoutArgs::default()
    };
    let options = crate::engine::update_options(repo, &args, gitpar::update::Policy::Safe);
    let result = crate::engine::with_progress(&args, |ctx| {
        gitpar::fast_forward::update(
            repo,
            orig,
            curr,
            &workdir,
            &opened.index_path,
            &options,
            ctx,
        )
    });
    match result {
        Ok(outcome) => {
            crate::report::update_outcome(&outcome, crate::report::SparseWords::Porcelain);
            Ok(())
        }
        Err(e) => {
            if let gitpar::switch::Error::Update(e) = e {
                let advice = crate::branches::advice_enabled(repo, "commitBeforeMerge");
                crate::report::update_error_for(e, crate::report::Porcelain::Merge { advice });
            }
            Err(fatal(format!(
                "Cannot fast-forward your working tree.\n\
                 After making sure that you saved anything precious from\n\
                 $ git diff {orig}\n\
                 output, run\n\
                 $ git reset --hard\n\
                 to recover."
            )))
        }
    }
}

/// git's `die_no_merge_candidates` (without its rebase wording: a rebasing pull is git's),
/// before pull exits 1.
fn no_merge_candidates(
    repo: &gix::Repository,
    branch: Option<&str>,
    remote: Option<&OsString>,
    refspecs: &[OsString],
) {
    let config = repo.config_snapshot();
    let file = config.plumbing();
    let branch_remote = branch.and_then(|b| {
        file.string(format!("branch.{b}.remote").as_str())
            .map(|v| v.to_string())
    });
    let merges: Vec<String> = branch
        .filter(|_| branch_remote.is_some())
        .and_then(|b| file.strings(format!("branch.{b}.merge").as_str()))
        .map(|v| v.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    let remote = remote.map(|r| r.to_string_lossy().into_owned());
    let specify = "Please specify which branch you want to merge with.";
    if !refspecs.is_empty() {
        eprintln!("There are no candidates for merging among the refs that you just fetched.");
        eprintln!(
            "Generally this means that you provided a wildcard refspec which had no\n\
             matches on the remote end."
        );
    } else if let (Some(repo_name), Some(_)) = (
        remote
            .as_deref()
            .filter(|r| branch_remote.as_deref() != Some(*r)),
        branch,
    ) {
        eprintln!(
            "You asked to pull from the remote '{repo_name}', but did not specify\n\
             a branch. Because this is not the default configured remote\n\
             for your current branch, you must specify a branch on the command line."
        );
    } else if let Some(b) = branch {
        if merges.is_empty() {
            let remotes = gitpar::repo::branch::remotes(repo);
            let name = match remotes.as_slice() {
                [only] => only.name.clone(),
                _ => "<remote>".to_owned(),
            };
            eprintln!("There is no tracking information for the current branch.");
            eprintln!("{specify}");
            eprintln!("See git-pull(1) for details.");
            eprintln!();
            eprintln!("    git pull <remote> <branch>");
            eprintln!();
            eprintln!(
                "If you wish to set tracking information for this branch you can do so with:"
            );
            eprintln!();
            eprintln!("    git branch --set-upstream-to={name}/<branch> {b}\n");
        } else {
            eprintln!(
                "Your configuration specifies to merge with the ref '{}'\n\
                 from the remote, but no such ref was fetched.",
                merges[0]
            );
        }
    } else {
        eprintln!("You are not currently on a branch.");
        eprintln!("{specify}");
        eprintln!("See git-pull(1) for details.");
        eprintln!();
        eprintln!("    git pull <remote> <branch>");
        eprintln!();
    }
}
