//! git's revision syntax for `switch` and `checkout`, and the messages that depend on it.
//!
//! What git's `builtin/checkout.c` does with its first argument before anything is written:
//! `-` for `@{-1}`, `@{-N}` (the N-th branch checked out before, from the HEAD reflog's
//! `checkout: moving from X to Y` lines: a *branch*, not a detached commit), `A...B` (their one
//! merge base; a missing side is `HEAD`), `@` for `HEAD`, `@{upstream}` naming a local upstream
//! branch (`branch.<name>.remote = .`), the disambiguation between a revision and
//! a path when no `--` is given (`parse_branchname_arg`), the validation of a new branch's name
//! (`validate_new_branchname`), and the texts git prints around a detached HEAD: the ambiguous-ref
//! warning, the detached-HEAD advice, "Previous HEAD position was" and the warning about commits
//! left behind.

use std::path::Path;

use bstr::ByteSlice;
use gix::ObjectId;

use crate::exit::{fatal, FATAL};

/// What a branch-switching argument names, as git's `setup_new_branch_info_and_source_tree` sees
/// it.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The name git carries on (reflog lines, messages, start points): as typed, with `@` as
    /// `HEAD` and a leading `@{-N}` (or `-`) replaced by what it stands for.
    pub(crate) name: String,
    /// The local branch it names, when `refs/heads/<name>` exists.
    pub(crate) branch: Option<String>,
    /// The commit, or `None` when the argument names a tree that is no commit.
    pub(crate) commit: Option<ObjectId>,
    /// The tree to check out (or to take paths from).
    pub(crate) tree: ObjectId,
}

/// The arguments of `checkout`/`switch` sorted out as git's `parse_branchname_arg` does.
pub(crate) enum Parsed<G> {
    /// No revision: every argument (perhaps none) is a pathspec.
    Paths(Vec<String>),
    /// A revision, and the pathspecs after it (perhaps none).
    Rev(Target, Vec<String>),
    /// A name that is no revision but a remote-tracking branch to create a local branch from
    /// (git's `--guess`), as the caller's guess described it.
    Guessed(G),
}

/// The positional arguments of the command.
pub(crate) struct Words<'a> {
    /// The arguments before `--` (or all of them).
    pub(crate) before: &'a [String],
    /// Whether `--` was given.
    pub(crate) dash_dash: bool,
    /// The arguments after `--`.
    pub(crate) after: &'a [String],
}

/// Whether `--` was on the command line, given clap's arguments after it (`last = true`): clap
/// drops the separator, and with nothing after it, it is the last word of the command line.
pub(crate) fn dash_dash_given(after: &[String]) -> bool {
    !after.is_empty() || std::env::args_os().last().is_some_and(|a| a == "--")
}

/// git's `parse_branchname_arg`: is the first argument a revision (and the rest pathspecs), a
/// remote branch to guess a local branch from (`guess`, tried only when `dwim_ok` and the name
/// is alone; it may refuse, as git does for a name on several remotes), or a pathspec like the
/// others? `accept_pathspec` is false for `switch`, whose one argument must be a revision.
pub(crate) fn parse_branchname_arg<G>(
    repo: &gix::Repository,
    words: &Words<'_>,
    accept_pathspec: bool,
    dwim_ok: bool,
    guess: impl FnOnce(&str) -> Result<Option<G>, u8>,
) -> Result<Parsed<G>, u8> {
    let Some(first) = words.before.first() else {
        return Ok(Parsed::Paths(words.after.to_vec()));
    };
    if !accept_pathspec && words.before.len() > 1 {
        return Err(fatal("only one reference expected"));
    }
    if accept_pathspec && words.dash_dash && words.before.len() >= 2 {
        return Err(fatal(format!(
            "only one reference expected, {} given.",
            words.before.len()
        )));
    }
    // `switch` takes no paths: its argument is as good as followed by `--`.
    let has_dash_dash = !accept_pathspec || words.dash_dash;
    let arg = if first == "-" {
        "@{-1}"
    } else {
        first.as_str()
    };
    let Some(rev) = resolve_mb(repo, arg, true) else {
        let could_be_paths = !has_dash_dash && check_filename(repo, arg);
        let alone = if words.dash_dash {
            words.before.len() == 1 && words.after.is_empty()
        } else {
            words.before.len() == 1
        };
        let dwim = dwim_ok && (has_dash_dash || !has_wildcard(arg)) && (alone || !accept_pathspec);
        if dwim {
            if let Some(guessed) = guess(arg)? {
                if could_be_paths {
                    return Err(fatal(format!(
                        "'{arg}' could be both a local file and a tracking branch.\n\
                         Please use -- (and optionally --no-guess) to disambiguate"
                    )));
                }
                return Ok(Parsed::Guessed(guessed));
            }
        }
        if has_dash_dash {
            return Err(fatal(format!("invalid reference: {arg}")));
        }
        return Ok(Parsed::Paths(words.before.to_vec()));
    };
    let target = target_of(repo, arg, rev)?;
    let paths = if words.dash_dash {
        words.after.to_vec()
    } else {
        words.before[1..].to_vec()
    };
    if !has_dash_dash && !paths.is_empty() {
        verify_non_filename(repo, arg)?;
    }
    Ok(Parsed::Rev(target, paths))
}

/// git's `setup_new_branch_info_and_source_tree`: the name as git carries it, the branch it
/// names (which wins over a tag of the same name), its commit and tree.
fn target_of(repo: &gix::Repository, arg: &str, rev: ObjectId) -> Result<Target, u8> {
    let typed = if arg == "@" { "HEAD" } else { arg };
    let name = interpret_branch_name(repo, typed);
    // `setup_branch_path`: for a name that is no ref, git looks it up once more, and warns again.
    if dwim_ref_count(repo, typed) == 0 && !typed.contains("...") {
        warn_if_ambiguous(repo, typed);
    }
    let branch_rev = branch_full_name(&name).and_then(|full| {
        repo.try_find_reference(full.as_str())
            .ok()
            .flatten()
            .and_then(|mut r| r.peel_to_id().ok().map(gix::Id::detach))
    });
    let branch = branch_rev.is_some().then(|| name.clone());
    let rev = branch_rev.unwrap_or(rev);
    let unreadable = || fatal(format!("unable to read tree ({rev})"));
    let commit = repo
        .find_object(rev)
        .map_err(|_| unreadable())?
        .peel_to_commit()
        .ok();
    let tree = match &commit {
        Some(c) => c.tree_id().map(gix::Id::detach).ok(),
        None => repo
            .find_object(rev)
            .ok()
            .and_then(|o| o.peel_to_tree().ok())
            .map(|t| t.id),
    }
    .ok_or_else(unreadable)?;
    Ok(Target {
        name,
        branch,
        commit: commit.map(|c| c.id),
        tree,
    })
}

/// `refs/heads/<name>` when that is a valid ref name.
fn branch_full_name(name: &str) -> Option<String> {
    let full = format!("refs/heads/{name}");
    gix::refs::FullName::try_from(full.as_str()).ok()?;
    Some(full)
}

/// git's `strbuf_branchname(…, INTERPRET_BRANCH_LOCAL)`: a leading `@{-N}` replaced by the branch
/// (or commit id) checked out N switches ago; any other name, or too few switches, unchanged.
pub(crate) fn interpret_branch_name(repo: &gix::Repository, name: &str) -> String {
    let name = match nth_prior_prefix(repo, name) {
        Some((len, previous)) => format!("{previous}{}", &name[len..]),
        None => name.to_owned(),
    };
    local_upstream(repo, &name).unwrap_or(name)
}

/// `<branch>@{upstream}` (`@{u}`, any case; no branch: the current one) when the upstream is a
/// local branch (`branch.<name>.remote = .`): that branch's name, as git's
/// `INTERPRET_BRANCH_LOCAL` gives it. Remote-tracking upstreams are left to the revision parser.
fn local_upstream(repo: &gix::Repository, name: &str) -> Option<String> {
    let (full, rest) = upstream_ref(repo, name)?;
    Some(format!("{}{rest}", full.strip_prefix("refs/heads/")?))
}

/// The upstream ref of `<branch>@{upstream}` (`refs/heads/…` for `remote = .`, else
/// `refs/remotes/<remote>/…`) and what follows the mark.
fn upstream_ref<'a>(repo: &gix::Repository, name: &'a str) -> Option<(String, &'a str)> {
    let at = name.find("@{")?;
    let (branch, mark) = (&name[..at], &name[at + 2..]);
    let close = mark.find('}')?;
    let word = &mark[..close];
    if !(word.eq_ignore_ascii_case("u") || word.eq_ignore_ascii_case("upstream")) {
        return None;
    }
    let branch = if branch.is_empty() {
        let head = repo.head_name().ok().flatten()?;
        head.as_bstr()
            .to_str_lossy()
            .strip_prefix("refs/heads/")?
            .to_owned()
    } else {
        branch.to_owned()
    };
    let config = repo.config_snapshot();
    let remote = config.string(format!("branch.{branch}.remote").as_str())?;
    let merge = config.string(format!("branch.{branch}.merge").as_str())?;
    let merged = merge.to_str_lossy().strip_prefix("refs/heads/")?.to_owned();
    let full = if remote.as_slice() == b"." {
        format!("refs/heads/{merged}")
    } else {
        format!("refs/remotes/{}/{merged}", remote.to_str_lossy())
    };
    Some((full, &mark[close + 1..]))
}

/// The length of a leading `@{-N}` in `name` and what it stands for.
fn nth_prior_prefix(repo: &gix::Repository, name: &str) -> Option<(usize, String)> {
    let rest = name.strip_prefix("@{-")?;
    let close = rest.find('}')?;
    let digits = &rest[..close];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: usize = digits.parse().ok().filter(|n| *n > 0)?;
    Some((3 + close + 1, nth_prior_checkout(repo, n)?))
}

/// git's `interpret_nth_prior_checkout`: the "from" part of the N-th newest `checkout: moving
/// from X to Y` line of this work tree's HEAD reflog.
pub(crate) fn nth_prior_checkout(repo: &gix::Repository, n: usize) -> Option<String> {
    let log = std::fs::read(repo.git_dir().join("logs").join("HEAD")).ok()?;
    let mut remaining = n;
    for line in log.lines().rev() {
        let Some(tab) = line.find_byte(b'\t') else {
            continue;
        };
        let Some(from_to) = line[tab + 1..].strip_prefix(b"checkout: moving from ") else {
            continue;
        };
        let Some(to) = from_to.find(" to ") else {
            continue;
        };
        remaining -= 1;
        if remaining == 0 {
            return Some(from_to[..to].to_str_lossy().into_owned());
        }
    }
    None
}

/// git's `repo_get_oid_mb`: `A...B` is the one merge base of A and B (a missing side is `HEAD`;
/// several merge bases or none resolve to nothing), anything else is an ordinary revision.
/// With `warn`, git's ambiguous-ref warning is printed for the names looked up.
pub(crate) fn resolve_mb(repo: &gix::Repository, spec: &str, warn: bool) -> Option<ObjectId> {
    let Some(dots) = spec.find("...") else {
        return get_oid(repo, spec, warn);
    };
    let (left, right) = (&spec[..dots], &spec[dots + 3..]);
    let one = get_oid(repo, if left.is_empty() { "HEAD" } else { left }, warn)?;
    let one = repo.find_object(one).ok()?.peel_to_commit().ok()?.id;
    let two = get_oid(repo, if right.is_empty() { "HEAD" } else { right }, warn)?;
    let two = repo.find_object(two).ok()?.peel_to_commit().ok()?.id;
    match repo.merge_bases_many(one, &[two]).ok()?.as_slice() {
        [base] => Some(base.detach()),
        _ => None,
    }
}

/// The commit a revision (with `A...B`) names, quietly.
pub(crate) fn commit_mb(repo: &gix::Repository, spec: &str) -> Option<ObjectId> {
    let id = resolve_mb(repo, spec, false)?;
    Some(repo.find_object(id).ok()?.peel_to_commit().ok()?.id)
}

fn get_oid(repo: &gix::Repository, spec: &str, warn: bool) -> Option<ObjectId> {
    // `@{N}`, `@{u}` without a name: the current branch's (git's `!len && reflog_len`).
    let id = if spec.starts_with("@{") && !spec.starts_with("@{-") {
        let head = repo.head_name().ok().flatten();
        let name = head.map_or_else(|| "HEAD".to_owned(), |n| n.as_bstr().to_string());
        repo.rev_parse_single(format!("{name}{spec}").as_str())
    } else {
        repo.rev_parse_single(spec)
    }
    .ok()
    .or_else(|| {
        // A local upstream (`@{u}` of a branch whose remote is `.`), which gix does not follow.
        let local = local_upstream(repo, spec)?;
        repo.rev_parse_single(local.as_str()).ok()
    })?
    .detach();
    if warn {
        warn_if_ambiguous(repo, spec);
    }
    Some(id)
}

/// git's `get_oid_basic` warning: `warning: refname 'X' is ambiguous.` when the name part of
/// `spec` matches several refs (or a ref and an abbreviated object id), unless
/// `core.warnAmbiguousRefs` is false.
fn warn_if_ambiguous(repo: &gix::Repository, spec: &str) {
    if let Some(label) = ambiguous(repo, spec) {
        eprintln!("warning: refname '{label}' is ambiguous.");
    }
}

/// The ref part of `spec` when git's `get_oid` would warn that it is ambiguous ("refname '…'
/// is ambiguous": several refs, or a ref that is also an abbreviated object id), as
/// `core.warnAmbiguousRefs` allows.
pub(crate) fn ambiguous(repo: &gix::Repository, spec: &str) -> Option<String> {
    if repo
        .config_snapshot()
        .boolean("core.warnAmbiguousRefs")
        .is_some_and(|b| !b)
    {
        return None;
    }
    // The ref part: up to the first `^`, `~` or `:`, and before a reflog `@{…}` suffix.
    let end = spec.find(['^', '~', ':']).unwrap_or(spec.len());
    let mut label = &spec[..end];
    if let Some(at) = label.rfind("@{") {
        if at > 0 && label.ends_with('}') && !label[at..].starts_with("@{-") {
            label = &label[..at];
        }
    }
    if label.is_empty() || label.len() == repo.object_hash().len_in_hex() {
        return None;
    }
    let name = interpret_branch_name(repo, label);
    if name != label && ObjectId::from_hex(name.as_bytes()).is_ok() {
        return None; // `@{-N}` naming a detached commit
    }
    let refs = dwim_ref_count(repo, &name);
    if refs == 0 {
        return None;
    }
    (refs > 1 || unique_abbrev(repo, label)).then(|| label.to_owned())
}

/// How many of git's `ref_rev_parse_rules` find a ref for `name` (`repo_dwim_ref`).
fn dwim_ref_count(repo: &gix::Repository, name: &str) -> usize {
    let name = interpret_branch_name(repo, name);
    let name = if name == "@" { "HEAD".to_owned() } else { name };
    let mut count = 0;
    let root_like = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    if root_like
        && (repo.git_dir().join(&name).is_file() || repo.common_dir().join(&name).is_file())
    {
        count += 1;
    }
    for candidate in [
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ] {
        if gix::refs::FullName::try_from(candidate.as_str()).is_err() {
            continue;
        }
        if let Ok(Some(mut r)) = repo.try_find_reference(candidate.as_str()) {
            if r.peel_to_id().is_ok() {
                count += 1;
            }
        }
    }
    count
}

/// Whether `name` is an abbreviated object id of exactly one object (git's `get_short_oid`).
fn unique_abbrev(repo: &gix::Repository, name: &str) -> bool {
    if name.len() < 4 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    let Ok(prefix) = gix::hash::Prefix::from_hex(name) else {
        return false;
    };
    matches!(repo.objects.lookup_prefix(prefix, None), Ok(Some(Ok(_))))
}

/// git's `no_wildcard` negated: glob characters make a name a pattern rather than a branch.
fn has_wildcard(arg: &str) -> bool {
    arg.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
}

/// git's `check_filename`: whether `arg` names something in the work tree (relative to the
/// current directory; `:/…` from the top; `:!…`/`:^…` excluding).
pub(crate) fn check_filename(repo: &gix::Repository, arg: &str) -> bool {
    let path = if let Some(rest) = arg.strip_prefix(":/") {
        if rest.is_empty() {
            return true;
        }
        match repo.workdir() {
            Some(top) => top.join(rest),
            None => return false,
        }
    } else if let Some(rest) = arg.strip_prefix(":!").or_else(|| arg.strip_prefix(":^")) {
        if rest.is_empty() {
            return true;
        }
        Path::new(rest).to_owned()
    } else {
        Path::new(arg).to_owned()
    };
    std::fs::symlink_metadata(path).is_ok()
}

/// git's `verify_non_filename`: a revision followed by paths must not name a file as well.
pub(crate) fn verify_non_filename(repo: &gix::Repository, arg: &str) -> Result<(), u8> {
    if repo.workdir().is_none() || arg.starts_with('-') || !check_filename(repo, arg) {
        return Ok(());
    }
    Err(fatal(format!(
        "ambiguous argument '{arg}': both revision and filename\n\
         Use '--' to separate paths from revisions, like this:\n\
         'git <command> [<revision>...] -- [<file>...]'"
    )))
}

/// git's `validate_new_branchname` without `-B`: the name (with `@{-N}` expanded) of a branch to
/// create, refused with git's words when it is no valid branch name or exists already.
pub(crate) fn validate_new_branch(repo: &gix::Repository, name: &str) -> Result<String, u8> {
    let expanded = interpret_branch_name(repo, name);
    let full = format!("refs/heads/{expanded}");
    if name.starts_with('-')
        || full == "refs/heads/HEAD"
        || gix::refs::FullName::try_from(full.as_str()).is_err()
    {
        eprintln!("fatal: '{name}' is not a valid branch name");
        if advice(repo, "refSyntax") {
            eprintln!("hint: See `man git check-ref-format`");
            eprintln!("hint: Disable this message with \"git config advice.refSyntax false\"");
        }
        return Err(FATAL);
    }
    if repo
        .try_find_reference(full.as_str())
        .ok()
        .flatten()
        .is_some()
    {
        return Err(fatal(format!("a branch named '{expanded}' already exists")));
    }
    Ok(expanded)
}

/// git's `--detach` with `-b`/`-c` (or a branch guessed from a remote one).
pub(crate) fn refuse_detach_with_new_branch() -> u8 {
    fatal("'--detach' cannot be used with '-b/-B/--orphan'")
}

/// git's `die_expecting_a_branch` (`switch` to something that is no local branch).
pub(crate) fn die_expecting_a_branch(repo: &gix::Repository, target: &Target) -> u8 {
    let name = &target.name;
    let mut found = Vec::new();
    if let Some((full, "")) = upstream_ref(repo, name) {
        found.push(full);
    }
    // dwim_ref's first rule, the name itself: `HEAD` (or another pseudo-ref), named by what it
    // resolves to (the branch `HEAD` is on, or `HEAD` when detached).
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
        if let Ok(Some(mut r)) = repo.try_find_reference(name.as_str()) {
            if r.name().as_bstr() == name.as_bytes() {
                let mut resolved = r.name().as_bstr().to_string();
                while let Some(next) = r.follow().and_then(Result::ok) {
                    resolved = next.name().as_bstr().to_string();
                    r = next;
                }
                found.push(resolved);
            }
        }
    }
    for candidate in [
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ] {
        if gix::refs::FullName::try_from(candidate.as_str()).is_ok()
            && repo
                .try_find_reference(candidate.as_str())
                .ok()
                .flatten()
                .is_some()
        {
            found.push(candidate);
        }
    }
    let message = match found.as_slice() {
        [one] => {
            if let Some(tag) = one.strip_prefix("refs/tags/") {
                format!("a branch is expected, got tag '{tag}'")
            } else if let Some(remote) = one.strip_prefix("refs/remotes/") {
                format!("a branch is expected, got remote branch '{remote}'")
            } else {
                format!("a branch is expected, got '{one}'")
            }
        }
        _ if target.commit.is_some() => format!("a branch is expected, got commit '{name}'"),
        _ => format!("a branch is expected, got '{name}'"),
    };
    eprintln!("fatal: {message}");
    if advice(repo, "suggestDetachingHead") {
        eprintln!(
            "hint: If you want to detach HEAD at the commit, try again with the --detach option."
        );
    }
    FATAL
}

/// `advice.<name>` (default true).
fn advice(repo: &gix::Repository, name: &str) -> bool {
    repo.config_snapshot()
        .boolean(format!("advice.{name}").as_str())
        .unwrap_or(true)
}

/// git's `describe_detached_head`: `<msg> <abbrev>[...] <subject>`, the ellipsis only under
/// `GIT_PRINT_SHA1_ELLIPSIS=yes`.
pub(crate) fn describe_detached(repo: &gix::Repository, msg: &str, commit: ObjectId) -> String {
    let ellipsis =
        std::env::var("GIT_PRINT_SHA1_ELLIPSIS").is_ok_and(|v| v.eq_ignore_ascii_case("yes"));
    format!(
        "{msg} {}{} {}",
        crate::names::short(repo, commit),
        if ellipsis { "..." } else { "" },
        subject(repo, commit)
    )
}

/// The one-line subject, in the log output encoding (`state::subject`).
fn subject(repo: &gix::Repository, commit: ObjectId) -> String {
    String::from_utf8_lossy(&crate::state::subject(repo, commit)).into_owned()
}

/// git's `detach_advice` (under `advice.detachedHead`, default true), printed when a symbolic
/// HEAD is detached without `--detach`.
pub(crate) fn detach_advice(repo: &gix::Repository, name: &str) -> Option<String> {
    advice(repo, "detachedHead").then(|| detach_advice_text(name))
}

/// The text of git's `detach_advice` for `name`, for callers that read `advice.detachedHead`
/// themselves (a clone gix cannot open).
pub(crate) fn detach_advice_text(name: &str) -> String {
    {
        format!(
            "Note: switching to '{name}'.\n\
             \n\
             You are in 'detached HEAD' state. You can look around, make experimental\n\
             changes and commit them, and you can discard any commits you make in this\n\
             state without impacting any branches by switching back to a branch.\n\
             \n\
             If you want to create a new branch to retain commits you create, you may\n\
             do so (now or later) by using -c with the switch command. Example:\n\
             \n  git switch -c <new-branch-name>\n\
             \n\
             Or undo this operation with:\n\
             \n  git switch -\n\
             \n\
             Turn off this advice by setting config variable advice.detachedHead to false\n\n"
        )
    }
}

/// git's `orphaned_commit_warning`, on leaving the detached commit `old` for `new` (none for
/// `switch --orphan`, which leaves for the empty tree): the commits
/// that no ref (nor `new`) reaches any more, with advice, or else "Previous HEAD position was".
pub(crate) fn leaving_detached(
    repo: &gix::Repository,
    old: ObjectId,
    new: Option<ObjectId>,
) -> String {
    let mut hidden: Vec<ObjectId> = new.into_iter().collect();
    if let Ok(platform) = repo.references() {
        if let Ok(all) = platform.all() {
            for mut reference in all.filter_map(Result::ok) {
                let commit = reference
                    .peel_to_id()
                    .ok()
                    .and_then(|id| id.object().ok())
                    .and_then(|o| o.peel_to_commit().ok());
                if let Some(commit) = commit {
                    hidden.push(commit.id);
                }
            }
        }
    }
    let lost: Vec<ObjectId> = repo
        .rev_walk([old])
        .with_hidden(hidden)
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
        ))
        .all()
        .map(|walk| walk.filter_map(Result::ok).map(|info| info.id).collect())
        .unwrap_or_default();
    if lost.is_empty() {
        return describe_detached(repo, "Previous HEAD position was", old) + "\n";
    }
    const CUTOFF: usize = 4;
    let one = |id: ObjectId| {
        format!(
            "  {} {}\n",
            crate::names::short(repo, id),
            subject(repo, id)
        )
    };
    let mut list: String = lost.iter().take(CUTOFF).map(|id| one(*id)).collect();
    match lost.len().saturating_sub(CUTOFF) {
        0 => {}
        1 => list.push_str(&one(lost[CUTOFF])),
        more => list.push_str(&format!(" ... and {more} more.\n")),
    }
    let n = lost.len();
    let mut out = if n == 1 {
        format!(
            "Warning: you are leaving {n} commit behind, not connected to\n\
             any of your branches:\n\n{list}\n"
        )
    } else {
        format!(
            "Warning: you are leaving {n} commits behind, not connected to\n\
             any of your branches:\n\n{list}\n"
        )
    };
    if advice(repo, "detachedHead") {
        let them = if n == 1 { "it" } else { "them" };
        out.push_str(&format!(
            "If you want to keep {them} by creating a new branch, this may be a good time\n\
             to do so with:\n\n git branch <new-branch-name> {}\n\n",
            crate::names::short(repo, old)
        ));
    }
    out
}

/// git's count after `checkout [<rev>] <paths>` without `--`: `Updated N path(s) from the index`
/// or `… from <abbreviated tree id>`.
pub(crate) fn updated_paths(repo: &gix::Repository, source: Option<ObjectId>, n: usize) -> String {
    let paths = if n == 1 { "path" } else { "paths" };
    match source {
        Some(tree) => format!(
            "Updated {n} {paths} from {}",
            crate::names::short(repo, tree)
        ),
        None => format!("Updated {n} {paths} from the index"),
    }
}
