//! `git par sparse-checkout init|set|add|reapply|disable` (and `list`, `check-rules`, handed to
//! git): git 2.47's `builtin/sparse-checkout.c`, with the work tree updated by the engine.
//!
//! The command is two things: the patterns and the configuration it records, and the work tree
//! it brings into line with them (git's `update_sparsity`). The first is git's own, byte for
//! byte: git-par runs the real `git sparse-checkout` with the user's arguments and
//! `GIT_INDEX_FILE` naming an index that does not exist, which git treats as an unborn index
//! ("no branch has been checked out, there are no updates to make"), so git parses and checks
//! the arguments, writes `info/sparse-checkout` (cone layout, sorting, quoting), the
//! configuration (`core.sparseCheckout`, `core.sparseCheckoutCone`, `index.sparse`, in
//! `config.worktree` as its `set_config` does) and prints its own errors and warnings, and
//! touches nothing else. Then the engine ([`gitpar::update::sparsity`]) applies the recorded
//! patterns to the real index and work tree, in parallel, with git's warnings. `disable` runs
//! the other way round, as git does: the full work tree first, then the configuration.
//!
//! What git cannot see through the unborn index, git-par checks first, with git's words:
//! `set`/`add` arguments that name a file of the index (`sanitize_paths`), and an index that is
//! locked. Handed to git whole, by `exec` (docs/differences.md): `list` and `check-rules`
//! (they read, nothing to parallelise), every call where the sparse index is or becomes on
//! (`--sparse-index`, `index.sparse`, `GIT_TEST_SPARSE_INDEX`: the engine writes full indexes),
//! and command lines git would refuse (git prints its usage).

use std::ffi::OsString;

use bstr::{BString, ByteSlice};

use crate::exit::{fatal, FATAL};
use crate::gitopts::{self, long, Arity, Parsed};

/// The subcommands git-par runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sub {
    Init,
    Set,
    Add,
    Reapply,
    Disable,
}

/// Each subcommand's options, as its `struct option` array declares them.
fn specs(sub: Sub) -> &'static [gitopts::Spec] {
    const CONE: gitopts::Spec = long("cone", Arity::Flag);
    const SPARSE_INDEX: gitopts::Spec = long("sparse-index", Arity::Flag);
    const SKIP_CHECKS: gitopts::Spec = long("skip-checks", Arity::Flag);
    const STDIN: gitopts::Spec = long("stdin", Arity::Flag);
    match sub {
        Sub::Init | Sub::Reapply => &[CONE, SPARSE_INDEX],
        Sub::Set => &[CONE, SPARSE_INDEX, SKIP_CHECKS, STDIN],
        Sub::Add => &[SKIP_CHECKS, STDIN],
        Sub::Disable => &[],
    }
}

/// `git par sparse-checkout ARGS` (ARGS begin with the subcommand).
pub(crate) fn run(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let sub = match args.first().and_then(|a| a.to_str()) {
        Some("init") => Sub::Init,
        Some("set") => Sub::Set,
        Some("add") => Sub::Add,
        Some("reapply") => Sub::Reapply,
        Some("disable") => Sub::Disable,
        // `list`, `check-rules`, no subcommand, `-h`, an unknown one: git's.
        _ => return Err(hand_to_git("a read-only or unknown subcommand")),
    };
    let parsed = gitopts::parse(&args[1..], specs(sub));
    // git refuses `--no-skip-checks` and `set --no-stdin` (PARSE_OPT_NONEG): let it say so.
    let refused_negation = parsed
        .options
        .iter()
        .any(|o| o.negated && (o.name == "skip-checks" || (o.name == "stdin" && sub == Sub::Set)));
    if parsed.unreadable || parsed.help || refused_negation {
        return Err(hand_to_git("git refuses or explains this command line"));
    }
    if std::env::var_os("GIT_TEST_SPARSE_INDEX").is_some() {
        return Err(hand_to_git("GIT_TEST_SPARSE_INDEX"));
    }
    // Outside a repository: git's message, from git-par's setup (as git's).
    let opened = crate::repo::open(overrides)?;
    if opened.workdir.is_none() {
        // A bare repository: git's "this operation must be run in a work tree".
        return Err(hand_to_git("no work tree"));
    }
    let sparse_index = parsed.flag("sparse-index").unwrap_or_else(|| {
        opened
            .repo
            .config_snapshot()
            .boolean("index.sparse")
            .unwrap_or(false)
    });
    if sparse_index && sub != Sub::Disable {
        return Err(hand_to_git("the sparse index"));
    }
    match sub {
        Sub::Disable => disable(&opened),
        _ => narrow(sub, &parsed, &opened, overrides),
    }
}

/// `init`, `set`, `add`, `reapply`: git records the patterns and configuration, then the
/// engine applies them to the index and work tree.
fn narrow(
    sub: Sub,
    parsed: &Parsed,
    opened: &crate::repo::Opened,
    overrides: &[String],
) -> Result<(), u8> {
    if matches!(sub, Sub::Set | Sub::Add) {
        sanitize_against_index(sub, parsed, opened)?;
    }
    let born = opened.index_path.exists();
    if born {
        // git takes the index lock before it writes the patterns, and dies if it cannot.
        gitpar::lock::IndexLock::acquire(&opened.index_path).map_err(fatal)?;
    }
    let patterns_file = opened.repo.git_dir().join("info/sparse-checkout");
    let old_patterns = std::fs::read(&patterns_file).ok();
    // `set`, `add`, and `init` without patterns write new ones (git's
    // `write_patterns_and_update`); `reapply` and `init` with patterns apply the recorded ones.
    let writes_patterns = match sub {
        Sub::Init => old_patterns.is_none(),
        _ => sub != Sub::Reapply,
    };
    let was_sparse = opened
        .repo
        .config_snapshot()
        .boolean("core.sparseCheckout")
        .unwrap_or(false);
    record_with_git(&opened.repo)?;
    if !born {
        // git: "If no branch has been checked out, there are no updates to make."
        return Ok(());
    }
    let reopened = crate::repo::open(overrides)?;
    // git read the index before it recorded the configuration.
    let selection = if was_sparse {
        gitpar::update::Selection::Recorded
    } else {
        gitpar::update::Selection::Enabled
    };
    // Applying the recorded patterns, git reads the file twice (`update_sparsity`, then
    // `clean_tracked_sparse_directories`), and warns each time about one that is not
    // cone-shaped; patterns it was given it has in memory.
    let cone_warning = (!writes_patterns)
        .then(|| gitpar::update::cone_warning(&reopened.repo))
        .flatten();
    let warn = || {
        if let Some(w) = &cone_warning {
            eprintln!("warning: {w}\nwarning: disabling cone pattern matching");
        }
    };
    warn();
    let outcome = apply(&reopened, selection)?;
    warn();
    if outcome.errors.is_empty() {
        return Ok(());
    }
    if writes_patterns {
        // git's `write_patterns_and_update` when the work tree could not be updated: the old
        // patterns stay (the new ones were never committed) and are applied again.
        restore_patterns(&patterns_file, old_patterns.as_deref())?;
        apply(&reopened, selection)?;
    }
    // git returns UPDATE_SPARSITY_WORKTREE_UPDATE_FAILURES (-2) as its exit status.
    Err(254)
}

/// Put the pattern file back as it was before git wrote the new patterns (`None`: there was
/// none), under its lock file as git writes it.
fn restore_patterns(path: &std::path::Path, old: Option<&[u8]>) -> Result<(), u8> {
    let failed = |e: std::io::Error| fatal(format!("unable to write {}: {e}", path.display()));
    match old {
        Some(bytes) => gitpar::lock::FileLock::acquire(path)
            .and_then(|lock| lock.commit(bytes))
            .map_err(failed),
        None => std::fs::remove_file(path).map_err(failed),
    }
}

/// `disable`: every entry back in the work tree (git's `/*` pattern), then git sets
/// `core.sparseCheckout` (and the rest of its `MODE_NO_PATTERNS` configuration).
fn disable(opened: &crate::repo::Opened) -> Result<(), u8> {
    if opened.index_path.exists() {
        // git dies when entries cannot be written, its index lock rolled back: the index keeps
        // the skip-worktree bits it had.
        let outcome = apply_keeping_index(opened, gitpar::update::Selection::Everything, true)?;
        if !outcome.errors.is_empty() {
            return Err(fatal("error while refreshing working directory"));
        }
    }
    record_with_git(&opened.repo)
}

/// The engine's `update_sparsity` on `opened`'s index and work tree, with git's progress and
/// warnings; an error is printed as git prints it.
fn apply(
    opened: &crate::repo::Opened,
    selection: gitpar::update::Selection,
) -> Result<gitpar::update::Outcome, u8> {
    apply_keeping_index(opened, selection, false)
}

/// [`apply`]; with `keep_index`, entries that cannot be written leave the index as it was
/// (each is printed as git prints it, then git's death).
fn apply_keeping_index(
    opened: &crate::repo::Opened,
    selection: gitpar::update::Selection,
    keep_index: bool,
) -> Result<gitpar::update::Outcome, u8> {
    let repo = &opened.repo;
    let worktree = opened.require_workdir()?;
    let args = crate::checkout_args::CheckoutArgs::default();
    let mut opts = crate::engine::engine_options(repo, &args);
    opts.keep_index_on_failed_writes = keep_index;
    let progress = gitpar::Progress::default();
    let result = crate::progress::show_while(
        &progress,
        "Updating files",
        crate::progress::mode(&args),
        || {
            gitpar::update::sparsity(
                repo,
                worktree,
                &opened.index_path,
                selection,
                &opts,
                &gitpar::Context {
                    progress: &progress,
                    interrupt: &crate::interrupt::INTERRUPTED,
                },
            )
        },
        Result::is_ok,
    );
    let outcome = result.map_err(|err| match err {
        gitpar::update::Error::Checkout(gitpar::checkout::Error::Entries(errors)) if keep_index => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            fatal("error while refreshing working directory")
        }
        err => crate::report::update_error(err),
    })?;
    crate::report::update_outcome(&outcome, crate::report::SparseWords::Sparsity);
    Ok(outcome)
}

/// Run the real `git sparse-checkout` with git-par's own arguments against an index that does
/// not exist: git records the patterns and configuration exactly as it does, prints its own
/// messages, and updates no work tree. Its failure (exit code) is the command's.
fn record_with_git(repo: &gix::Repository) -> Result<(), u8> {
    // A path in a directory that does not exist: git reads it as an unborn index and, were it
    // ever to try, could not write anything there.
    let unborn = repo.git_dir().join("git-par-unborn-index.d/index");
    let status = gitpar::git_command()
        .args(crate::git::own_args())
        .env("GIT_INDEX_FILE", &unborn)
        .status()
        .map_err(|e| fatal(format!("cannot run git: {e}")))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(u8::try_from(code).unwrap_or(FATAL)),
        None => Err(FATAL),
    }
}

/// Replace this process by git with git-par's own arguments (a documented delegation).
fn hand_to_git(why: &str) -> u8 {
    crate::patch::hand_to_git("sparse-checkout", why, &crate::git::own_args())
}

/// The part of git's `sanitize_paths` that reads the index, which git cannot see through the
/// unborn index it is given: an argument that names a file of the index dies in cone mode
/// ("is not a directory") and warns otherwise ("pass a leading slash"). Only where git would
/// get that far: past `add`'s "no sparse-checkout to add to", past the checks of the
/// arguments' form, which git makes for all arguments first (and then dies with its message).
fn sanitize_against_index(
    sub: Sub,
    parsed: &Parsed,
    opened: &crate::repo::Opened,
) -> Result<(), u8> {
    let config = opened.repo.config_snapshot();
    let sparse = config.boolean("core.sparseCheckout").unwrap_or(false);
    let recorded_cone = config.boolean("core.sparseCheckoutCone").unwrap_or(false);
    let stdin = parsed.flag("stdin").unwrap_or(false);
    let skip_checks = parsed.flag("skip-checks").unwrap_or(false);
    let cone = match sub {
        Sub::Add if !sparse => return Ok(()),
        Sub::Add => recorded_cone,
        // git's `update_cone_mode`: as given, else as recorded, else cone.
        _ => match parsed.flag("cone") {
            Some(cone) => cone,
            None if sparse => recorded_cone,
            None => true,
        },
    };
    // `set` in non-cone mode without patterns takes git's defaults, unchecked.
    if skip_checks || stdin || parsed.positionals.is_empty() {
        return Ok(());
    }
    let prefix = crate::platform::git_path_bytes_lossy(&opened.prefix);
    let prefix: &[u8] = &prefix;
    if !prefix.is_empty() && !cone {
        return Ok(());
    }
    let mut paths = Vec::new();
    for arg in &parsed.positionals {
        let arg = arg.as_encoded_bytes();
        let path = if cone && !prefix.is_empty() {
            match prefixed(prefix, arg) {
                Some(p) => p,
                // git dies: outside the repository.
                None => return Ok(()),
            }
        } else {
            BString::from(arg)
        };
        if cone
            && (path.first().is_some_and(|&b| b == b'/' || b == b'!')
                || path.iter().any(|b| b"*?[]".contains(b)))
        {
            return Ok(());
        }
        paths.push(path);
    }
    let index = match gix::index::File::at(
        &opened.index_path,
        opened.repo.object_hash(),
        true,
        Default::default(),
    ) {
        Ok(index) => index,
        Err(_) => return Ok(()),
    };
    for path in &paths {
        let tracked = index
            .entry_by_path_and_stage(path.as_bstr(), gix::index::entry::Stage::Unconflicted)
            .is_some_and(|e| e.mode != gix::index::entry::Mode::DIR);
        if !tracked {
            continue;
        }
        if cone {
            if sub == Sub::Set {
                record_modes_with_git(&opened.repo, parsed);
            }
            return Err(fatal(format!(
                "'{path}' is not a directory; to treat it as a directory anyway, rerun with --skip-checks"
            )));
        }
        eprintln!(
            "warning: pass a leading slash before paths such as '{path}' if you want a single file (see NON-CONE PROBLEMS in the git-sparse-checkout manual)."
        );
    }
    Ok(())
}

/// git's `set` records the mode (`update_modes`: `core.sparseCheckout`,
/// `core.sparseCheckoutCone`, `index.sparse`, `extensions.worktreeConfig`) before it checks
/// the arguments against the index and dies: git does that part here, with the user's options
/// and one argument it refuses right after (`/`, in cone mode), its message not shown.
fn record_modes_with_git(repo: &gix::Repository, parsed: &Parsed) {
    let own = crate::git::own_args();
    let Some(at) = crate::patch::subcommand_at(&own) else {
        return;
    };
    // The subcommand's arguments start after `sparse-checkout set`.
    let base = at + 2;
    let mut args: Vec<OsString> = own[..base.min(own.len())].to_vec();
    args.extend(parsed.options.iter().map(|o| own[base + o.arg].clone()));
    args.push("--end-of-options".into());
    args.push("/".into());
    let unborn = repo.git_dir().join("git-par-unborn-index.d/index");
    let _ = gitpar::git_command()
        .args(args)
        .env("GIT_INDEX_FILE", &unborn)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// git's `prefix_path` for an argument given below the top of the work tree: `prefix/arg` with
/// `.` and `..` resolved and repeated slashes folded; `None` when it leaves the work tree (git
/// dies) or is absolute (git resolves it against the work tree; left to git).
fn prefixed(prefix: &[u8], arg: &[u8]) -> Option<BString> {
    if arg.first() == Some(&b'/') {
        return None;
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    let joined: Vec<u8> = [prefix, b"/", arg].concat();
    for part in joined.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let mut out = BString::from(parts.join(&b'/'));
    if arg.ends_with(b"/") && !out.is_empty() {
        out.push(b'/');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_paths_resolve_dots_and_refuse_to_leave() {
        assert_eq!(prefixed(b"a/b", b"c").unwrap(), "a/b/c");
        assert_eq!(prefixed(b"a/b", b"../c").unwrap(), "a/c");
        assert_eq!(prefixed(b"a", b"./c//d/").unwrap(), "a/c/d/");
        assert_eq!(prefixed(b"a", b"../../c"), None);
        assert_eq!(prefixed(b"a", b"/abs"), None);
    }

    #[test]
    fn options_are_read_per_subcommand() {
        let words = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
        let p = gitopts::parse(&words(&["--no-cone", "--skip", "a"]), specs(Sub::Set));
        assert_eq!(p.flag("cone"), Some(false));
        assert_eq!(p.flag("skip-checks"), Some(true));
        assert_eq!(p.positionals, words(&["a"]));
        assert!(gitopts::parse(&words(&["--cone"]), specs(Sub::Add)).unreadable);
        let p = gitopts::parse(&words(&["--end-of-options", "--cone"]), specs(Sub::Set));
        assert_eq!(p.flag("cone"), None);
        assert_eq!(p.positionals, words(&["--cone"]));
    }
}
