//! The branch switch `switch`, `checkout <branch>` and an unborn branch's `--orphan` share:
//! where `HEAD` goes (git's `checkout_branch` refusals and choices), the engine's switch
//! transaction with git's messages between its steps, and what git says about where `HEAD` is.

use bstr::ByteSlice;
use gitpar::switch::Head;
use gitpar::update::Policy;

use crate::checkout_args::CheckoutArgs;
use crate::engine::{update_options, with_progress};
use crate::exit::fatal;
use crate::repo::Opened;
use crate::report;
use crate::revision::Parsed;

/// The commit `spec` names (`A...B` too), quietly: `None` when it names none.
pub(crate) fn resolve_commit(repo: &gix::Repository, spec: &str) -> Option<gix::ObjectId> {
    crate::revision::commit_mb(repo, spec)
}

/// `-c/-C NEW [START]` / `-b/-B NEW [START]`: the branch `new` (validated, `branches.rs`) at
/// START (default HEAD).
pub(crate) fn new_branch(
    repo: &gix::Repository,
    new: &crate::branches::Create,
    start: Option<&str>,
) -> Result<(Head, gix::ObjectId), u8> {
    let name = start.unwrap_or("HEAD");
    let commit =
        resolve_commit(repo, name).ok_or_else(|| fatal(format!("invalid reference: {name}")))?;
    let branch = crate::branches::new_branch(new, start);
    Ok((Head::NewBranch(branch), commit))
}

/// git's `die_if_some_operation_in_progress` for `switch` (checkout may switch anyway): a merge,
/// am, rebase, cherry-pick or revert in progress stops it, with git's words (exit 128).
pub(crate) fn refuse_operation_in_progress(repo: &gix::Repository) -> Result<(), u8> {
    let dir = repo.git_dir();
    let what = if dir.join("MERGE_HEAD").exists() {
        Some(("while merging", "git merge --quit"))
    } else if dir.join("rebase-apply/applying").exists() {
        Some(("in the middle of an am session", "git am --quit"))
    } else if dir.join("rebase-merge").is_dir() || dir.join("rebase-apply").is_dir() {
        Some(("while rebasing", "git rebase --quit"))
    } else if dir.join("CHERRY_PICK_HEAD").exists() {
        Some(("while cherry-picking", "git cherry-pick --quit"))
    } else if dir.join("REVERT_HEAD").exists() {
        Some(("while reverting", "git revert --quit"))
    } else {
        None
    };
    if let Some((state, quit)) = what {
        return Err(fatal(format!(
            "cannot switch branch {state}\nConsider \"{quit}\" or \"git worktree add\"."
        )));
    }
    if dir.join("BISECT_START").exists() {
        eprintln!("warning: you are switching branch while bisecting");
    }
    Ok(())
}

/// git's `--guess`: a name that is no local branch but the branch of exactly one remote (or of
/// `checkout.defaultRemote`) becomes a new local branch from it; several remotes refuse.
pub(crate) fn guess_tracking_branch(
    repo: &gix::Repository,
    name: &str,
    opts: &crate::branches::BranchOpts,
) -> Result<Option<(Head, gix::ObjectId)>, u8> {
    let guessed = crate::branches::guess(repo, name, opts)?;
    Ok(guessed.map(|(branch, commit)| (Head::NewBranch(branch), commit)))
}

/// git's `die_if_switching_to_a_branch_in_use` guards the branch switched to.
pub(crate) trait Guarded {
    fn guarded_branch(&self) -> Option<&str>;
}

impl Guarded for Head {
    /// The branch git's `die_if_switching_to_a_branch_in_use` guards: an existing branch to
    /// switch to, or the one `-B`/`-C` resets.
    fn guarded_branch(&self) -> Option<&str> {
        match self {
            Head::Branch(b) => Some(b),
            Head::NewBranch(nb) if nb.force => Some(&nb.name),
            _ => None,
        }
    }
}

/// git's `checkout_branch` for a parsed argument without paths: its refusals (`--detach` with a
/// new branch, a tree that is no commit; for `switch`, no argument, or no branch without
/// `--detach`, and an operation in progress), then where HEAD goes: a new branch (`new`, validated,
/// at the argument or HEAD), the branch named, HEAD unchanged (`checkout [HEAD]`), or detached.
pub(crate) fn switch_target(
    repo: &gix::Repository,
    parsed: Parsed<(Head, gix::ObjectId)>,
    new: Option<&crate::branches::Create>,
    detach: bool,
    is_switch: bool,
) -> Result<(Head, gix::ObjectId), u8> {
    let (target, guessed) = match parsed {
        Parsed::Rev(target, _) => (Some(target), None),
        Parsed::Guessed(guessed) => (None, Some(guessed)),
        Parsed::Paths(_) => (None, None),
    };
    if detach && (new.is_some() || guessed.is_some()) {
        return Err(crate::revision::refuse_detach_with_new_branch());
    }
    if let Some(target) = target.as_ref().filter(|t| t.commit.is_none()) {
        return Err(fatal(format!(
            "Cannot switch branch to a non-commit '{}'",
            target.name
        )));
    }
    if is_switch {
        if target.is_none() && guessed.is_none() && new.is_none() && !detach {
            return Err(fatal("missing branch or commit argument"));
        }
        if let Some(target) = target.as_ref().filter(|t| t.branch.is_none()) {
            if !detach && new.is_none() {
                return Err(crate::revision::die_expecting_a_branch(repo, target));
            }
        }
        refuse_operation_in_progress(repo)?;
    }
    if let Some(guessed) = guessed {
        return Ok(guessed);
    }
    if let Some(new) = new {
        return new_branch(repo, new, target.as_ref().map(|t| t.name.as_str()));
    }
    let Some(target) = target else {
        let commit = repo
            .head_commit()
            .map_err(|_| fatal("You are on a branch yet to be born"))?
            .id;
        let head = if detach {
            Head::Detached {
                name: "HEAD".into(),
                explicit: true,
            }
        } else {
            Head::Unchanged
        };
        return Ok((head, commit));
    };
    let commit = target.commit.expect("refused above: not a commit");
    Ok(match target.branch {
        Some(branch) if !detach => (Head::Branch(branch), commit),
        // `checkout HEAD` (or `@`): HEAD stays as it is.
        _ if target.name == "HEAD" && !detach => (Head::Unchanged, commit),
        _ => (
            Head::Detached {
                name: target.name,
                explicit: detach,
            },
            commit,
        ),
    })
}

/// The common tail of `switch` and `checkout`, the engine's switch transaction
/// ([`gitpar::switch`]) with git's messages between its steps: the update (with `-m`, merging
/// local changes it would lose) and the changes carried over; the new branch and `HEAD`; then
/// what git says about where `HEAD` is; then the state files and `post-checkout`.
pub(crate) fn run(
    opened: &Opened,
    (head, target): (Head, Option<&str>),
    commit: Option<gix::ObjectId>,
    force: bool,
    merge: bool,
    args: &CheckoutArgs,
    verb: &str,
) -> Result<(), u8> {
    let repo = &opened.repo;
    let workdir = opened.require_workdir()?.to_owned();
    let policy = if force { Policy::Force } else { Policy::Safe };
    // What git's `switch_branches` tells filters: the ref the argument names, and the commit.
    let ref_name = match &head {
        Head::Branch(b) => Some(format!("refs/heads/{b}").into()),
        Head::NewBranch(nb) => crate::names::dwim_ref(repo, &nb.start),
        Head::Detached { name, .. } => crate::names::dwim_ref(repo, name),
        // `checkout HEAD` names HEAD (so its branch); a bare `checkout` names nothing.
        Head::Unchanged => target.and_then(|t| crate::names::dwim_ref(repo, t)),
        Head::Orphan(_) => None,
    };
    let args = &CheckoutArgs {
        filter_meta: gitpar::FilterMeta {
            ref_name,
            treeish: commit,
        },
        ..args.clone()
    };
    let request = gitpar::switch::Request {
        head,
        commit,
        force,
        merge,
        options: update_options(repo, args, policy),
        worktree: &workdir,
        index_path: &opened.index_path,
        quiet: args.quiet,
        verb,
    };
    let fail = |e| report::switch_error(repo, e);
    let switch = gitpar::switch::Switch::new(repo, crate::hooks::env(), request);
    let updated = match with_progress(args, |ctx| switch.update(ctx)) {
        Ok(updated) => updated,
        // Nothing has changed: git makes the same two-way attempt, then merges.
        Err(gitpar::switch::Error::MergeIsGits) => {
            return Err(crate::patch::hand_to_git(
                verb,
                "-m with local changes to merge into the new branch",
                &crate::git::own_args(),
            ))
        }
        Err(e) => return Err(fail(e)),
    };
    report::update_outcome(&updated.outcome, report::SparseWords::of_update(force));
    // `--orphan` to the empty tree carries nothing over that git would list.
    if commit.is_some() {
        for (status, path) in &updated.local_changes {
            println!("{status}\t{}", crate::quote::quote_path(path.as_ref()));
        }
    }
    let moved = updated.move_head().map_err(fail)?;
    if !args.quiet {
        say_where_head_is(repo, &moved);
    }
    // Paths that could not be written were reported; git still switches, and exits 1 only
    // when it discarded local changes (`-f`: `reset_tree` sets `writeout_error`); a safe
    // switch's failed writes do not change its status (`merge_working_tree` returns 0 after
    // `unpack_trees`' -2), the paths show as local changes instead.
    let status = if moved.outcome.errors.is_empty() || !force {
        Ok(())
    } else {
        Err(1)
    };
    // A failing `post-checkout` makes a switch exit 1 (git's `ret || writeout_error`), unlike
    // a path checkout, which exits with the hook's status.
    let rc = moved.finish().map_err(fail)?;
    match status {
        Ok(()) if rc != 0 => Err(1),
        status => status,
    }
}

/// What git says once `HEAD` moved: the commits a detached `HEAD` left behind, then "Switched
/// to branch …", "Already on …", "HEAD is now at …" with the detached-HEAD advice, and the
/// upstream's ahead/behind.
pub(crate) fn say_where_head_is(repo: &gix::Repository, moved: &gitpar::switch::Moved<'_>) {
    let old = moved.old_head();
    let request = moved.request();
    let was_detached = old.branch.is_none();
    // git's `orphaned_commit_warning`: on leaving a detached commit, the commits no ref reaches
    // any more, or else where HEAD was.
    if let Some(c) = old
        .commit
        .filter(|c| was_detached && request.commit != Some(*c))
    {
        eprint!(
            "{}",
            crate::revision::leaving_detached(repo, c, request.commit)
        );
    }
    let old_short = old
        .branch
        .as_ref()
        .map(|n| n.shorten().to_str_lossy().into_owned());
    match &request.head {
        Head::Branch(b) => {
            if old_short.as_deref() == Some(b.as_str()) {
                eprintln!("Already on '{b}'");
            } else {
                eprintln!("Switched to branch '{b}'");
            }
            if let Some(info) = tracking_info(repo, b) {
                print!("{info}");
            }
        }
        Head::NewBranch(nb) => {
            let old_full = old.branch.as_ref().map(|n| n.as_bstr().to_str_lossy());
            eprintln!(
                "{}",
                crate::branches::switched_message(nb, old_full.as_deref())
            );
            if let Some(info) = tracking_info(repo, &nb.name) {
                print!("{info}");
            }
        }
        Head::Unchanged => {
            if let Some(info) = old_short.as_deref().and_then(|b| tracking_info(repo, b)) {
                print!("{info}");
            }
        }
        Head::Orphan(full) => {
            eprintln!("Switched to a new branch '{}'", full.shorten());
        }
        Head::Detached { name, explicit } => {
            if !was_detached && !explicit {
                if let Some(advice) = crate::revision::detach_advice(repo, name) {
                    eprint!("{advice}");
                }
            }
            if let Some(commit) = request.commit {
                let now = crate::revision::describe_detached(repo, "HEAD is now at", commit);
                eprintln!("{now}");
            }
        }
    }
}

/// git's `format_tracking_info` after switching to `branch`: how it stands against its upstream
/// (`branch.<name>.remote`/`.merge`, mapped to `refs/remotes/<remote>/<branch>`), with git's
/// advice lines. `None` when the branch has no upstream.
pub(crate) fn tracking_info(repo: &gix::Repository, branch: &str) -> Option<String> {
    // git's `branch_get_upstream` through the remote's fetch refspecs (`remote = .`: a local
    // ref), named as `shorten_unambiguous_ref` names it (`branches.rs`).
    let (upstream_ref, short) = crate::branches::upstream(repo, branch)?;
    let Some(upstream) = resolve_commit(repo, &upstream_ref) else {
        return Some(format!(
            "Your branch is based on '{short}', but the upstream is gone.\n  (use \"git branch --unset-upstream\" to fixup)\n"
        ));
    };
    let local = resolve_commit(repo, &format!("refs/heads/{branch}"))?;
    let count = |tip: gix::ObjectId, hidden: gix::ObjectId| -> Option<usize> {
        Some(
            repo.rev_walk([tip])
                .with_hidden([hidden])
                .all()
                .ok()?
                .filter_map(Result::ok)
                .count(),
        )
    };
    let ahead = count(local, upstream)?;
    let behind = count(upstream, local)?;
    let plural = |n: usize| if n == 1 { "commit" } else { "commits" };
    Some(match (ahead, behind) {
        (0, 0) => format!("Your branch is up to date with '{short}'.\n"),
        (a, 0) => format!(
            "Your branch is ahead of '{short}' by {a} {}.\n  (use \"git push\" to publish your local commits)\n",
            plural(a)
        ),
        (0, b) => format!(
            "Your branch is behind '{short}' by {b} {}, and can be fast-forwarded.\n  (use \"git pull\" to update your local branch)\n",
            plural(b)
        ),
        (a, b) => format!(
            "Your branch and '{short}' have diverged,\nand have {a} and {b} different commits each, respectively.\n  (use \"git pull\" if you want to integrate the remote branch with yours)\n"
        ),
    })
}
