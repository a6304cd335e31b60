//! `git par clone`: git sets the repository up, git-par checks it out.
//!
//! Setting a repository up — transports, credentials, shallow and partial clones, templates,
//! refspecs, `--separate-git-dir`, `-c` — is what git does and what users' credential helpers
//! and ssh configurations are built around; git-par's value is the checkout. So the user's
//! arguments go to `git clone --no-checkout` unchanged, and unless git would not have checked
//! out (`--no-checkout`, `--bare`, `--mirror`, an empty source), the new repository's `HEAD` is
//! checked out by the engine, then `post-checkout` and `--recurse-submodules` run as in git's
//! `builtin/clone.c` `checkout()`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::checkout_args::CheckoutArgs;
use crate::exit::{fatal, FATAL};
use crate::gitopts::{self, Parsed};
use crate::{hooks, interrupt};

/// Run `git par clone ARGS` (the arguments after `clone`).
pub(crate) fn clone(args: Vec<OsString>, overrides: &[String]) -> Result<(), u8> {
    let parsed = gitopts::parse(&args, gitopts::CLONE);
    if parsed.help {
        crate::cli::print_help(&["clone"]);
        return Ok(());
    }
    let bare = parsed.flag("bare") == Some(true) || parsed.flag("mirror") == Some(true);
    // Whatever git-par cannot read is git's to refuse: then git gets the arguments as they are.
    let checks_out = parsed.flag("no-checkout") != Some(true) && !bare && !parsed.unreadable;
    let mut git_args: Vec<OsString> = vec!["clone".into()];
    git_args.extend(args.iter().cloned());
    if checks_out {
        git_args.insert(1 + parsed.append_at(&args), "--no-checkout".into());
    }
    let status = crate::git::run_git(&git_args, None)?;
    if status != 0 || !checks_out {
        return if status == 0 { Ok(()) } else { Err(status) };
    }
    let Some(dir) = destination(&parsed) else {
        // git accepted it, so this cannot happen; say so rather than guess.
        return Err(fatal("cannot tell which directory git cloned into"));
    };
    let quiet = parsed.verbosity() < 0;
    let repo = match open_new(&dir, overrides) {
        Some(repo) => repo,
        // A repository gix cannot read (SHA-256, reftable).
        _ => return checkout_by_git(&parsed, &dir, quiet),
    };
    let Some(workdir) = repo.workdir().map(Path::to_owned) else {
        return Err(fatal("the new repository has no work tree"));
    };
    let Some(commit) = head_to_check_out(&repo)? else {
        return Ok(());
    };
    let tree = crate::engine::tree_of(&repo, commit).map_err(fatal)?;
    let checkout = CheckoutArgs {
        jobs: None,
        quiet,
        // git's clone tells filters the branch HEAD is on (none when detached) and the commit.
        filter_meta: gitpar::FilterMeta {
            ref_name: repo
                .head_name()
                .ok()
                .flatten()
                .map(|n| n.as_bstr().to_owned()),
            treeish: Some(commit),
        },
        ..CheckoutArgs::default()
    };
    let checked_out = crate::engine::run_checkout(&repo, tree, &workdir, &checkout, None);
    if let Ok(outcome) = &checked_out {
        report_collisions(&repo, &outcome.collisions);
    }
    if let Err(err) = checked_out {
        crate::report::checkout_error(&err);
        if matches!(err, gitpar::checkout::Error::Interrupted) {
            return Err(interrupt::EXIT_CODE);
        }
        // git's prefetch and a required filter die on their own; its clone then only warns.
        if !matches!(
            err,
            gitpar::checkout::Error::PromisorFetch(_) | gitpar::checkout::Error::Filter { .. }
        ) {
            eprintln!("fatal: unable to checkout working tree");
        }
        checkout_failed();
        return Err(FATAL);
    }
    // git's `err |= run_hooks_l("post-checkout", null, HEAD, "1")`, then the submodules.
    let rc = hooks::after_clone(&repo, &workdir, commit);
    if rc == 0 && parsed.flag("recurse-submodules") == Some(true) {
        let filter = repo
            .config_snapshot()
            .boolean("clone.filterSubmodules")
            .unwrap_or(false);
        let status = if parsed.flag("remote-submodules") == Some(true) {
            // `--remote-submodules`: each submodule at its remote-tracking branch, which git's
            // `submodule update --remote` fetches and picks; git checks those out itself.
            update_submodules(&parsed, filter, repo.git_dir(), &workdir, None)?
        } else {
            clone_submodules(&parsed, filter, &repo, &workdir, quiet)?
        };
        return if status == 0 { Ok(()) } else { Err(status) };
    }
    hooks::combine(Ok(()), rc)
}

/// `--recurse-submodules`: git clones the submodules (its transports, credentials and options:
/// [`update_submodules`] with every submodule's update command set to `!true`, so that git checks
/// nothing out), then the engine checks all the new ones out at once
/// (`gitpar::update::checkout_submodules`); rounds from the top until no submodule is left, so that git
/// recurses into what the engine checked out and clones the next level. git's "checked out"
/// lines are printed at the end, in git's depth-first order.
fn clone_submodules(
    parsed: &Parsed,
    filter: bool,
    repo: &gix::Repository,
    workdir: &Path,
    quiet: bool,
) -> Result<u8, u8> {
    let opts = gitpar::Options::from_config(&repo.config_snapshot(), None);
    let progress = gitpar::Progress::default();
    let ctx = gitpar::Context {
        progress: &progress,
        interrupt: &interrupt::INTERRUPTED,
    };
    // Every repository checked out so far, as (work tree, path from the top with a slash).
    let mut levels = vec![(workdir.to_owned(), String::new())];
    let mut checked_out: Vec<(String, gix::ObjectId)> = Vec::new();
    let mut first = true;
    loop {
        let mut names: Vec<(String, String)> = Vec::new();
        for (dir, _) in &levels {
            names.extend(submodule_names(dir));
        }
        // git's clone runs `git submodule update` for `--recurse-submodules` even when there is
        // no submodule (its trace and its `--jobs` show: t7406), so the first round always runs.
        if names.is_empty() && !first {
            break;
        }
        first = false;
        let status = update_submodules(parsed, filter, repo.git_dir(), workdir, Some(&names))?;
        if status != 0 || names.is_empty() {
            return Ok(status);
        }
        let mut new_levels = Vec::new();
        for (dir, prefix) in &levels {
            let Ok(level_repo) = gix::open(dir) else {
                continue;
            };
            let index_path = level_repo.index_path();
            let (done, failed) =
                gitpar::update::checkout_submodules(&level_repo, dir, &index_path, &opts, &ctx)
                    .map_err(fatal)?;
            for e in &failed {
                eprintln!("error: {e}");
            }
            if !failed.is_empty() {
                return Ok(1);
            }
            for path in done {
                let sub_dir = dir.join(path.to_string());
                if let Ok(head) = gix::open(&sub_dir).and_then(|s| Ok(s.head_id()?.detach())) {
                    checked_out.push((format!("{prefix}{path}"), head));
                }
                new_levels.push((sub_dir, format!("{prefix}{path}/")));
            }
        }
        if new_levels.is_empty() {
            break;
        }
        levels.extend(new_levels);
    }
    if !quiet {
        // Depth-first, as git updates a submodule and then recurses into it.
        checked_out.sort_by(|(a, _), (b, _)| a.split('/').cmp(b.split('/')));
        for (path, head) in checked_out {
            println!("Submodule path '{path}': checked out '{head}'");
        }
    }
    Ok(0)
}

/// The submodules `.gitmodules` in `dir` names, as `(path, name)`, in file order.
fn submodule_names(dir: &Path) -> Vec<(String, String)> {
    let Some(list) = git_output(
        dir,
        &[
            "config",
            "--file",
            ".gitmodules",
            "--get-regexp",
            r"^submodule\..*\.path$",
        ],
    ) else {
        return Vec::new();
    };
    list.lines()
        .filter_map(|line| {
            let (key, path) = line.split_once(' ')?;
            let name = key.strip_prefix("submodule.")?.strip_suffix(".path")?;
            Some((path.to_owned(), name.to_owned()))
        })
        .collect()
}

/// The directory git cloned into, as `cmd_clone` names it: the second positional argument, or
/// the one `git_url_basename` guesses from the source; its trailing slashes stripped. With
/// `GIT_WORK_TREE` set it is the git directory (the work tree is `GIT_WORK_TREE`).
fn destination(parsed: &Parsed) -> Option<PathBuf> {
    let dir = match parsed.positionals.as_slice() {
        [_, dir] => dir.as_encoded_bytes().to_vec(),
        [source] => url_basename(source.as_encoded_bytes(), is_bundle(source))?,
        _ => return None,
    };
    let mut end = dir.len();
    while end > 1 && std::path::is_separator(char::from(dir[end - 1])) {
        end -= 1;
    }
    // A name Windows cannot hold (not Unicode) is none git could have cloned into.
    crate::platform::path_from_bytes(&dir[..end])
        .ok()
        .map(Path::to_owned)
}

/// git's `get_repo_path`: is the source a bundle file (and not a repository)?
fn is_bundle(source: &OsStr) -> bool {
    let with = |suffix: &str| {
        let mut path = source.to_owned();
        path.push(suffix);
        PathBuf::from(path)
    };
    for suffix in ["/.git", "", ".git/.git", ".git"] {
        let path = with(suffix);
        match std::fs::metadata(&path) {
            Ok(md) if md.is_dir() && path.join("HEAD").exists() => return false,
            Ok(md)
                if md.is_file()
                    && md.len() > 8
                    && std::fs::read(&path).is_ok_and(|b| b.starts_with(b"gitdir: ")) =>
            {
                return false;
            }
            _ => {}
        }
    }
    ["", ".bundle"]
        .iter()
        .any(|s| std::fs::metadata(with(s)).is_ok_and(|m| m.is_file()))
}

/// git's `git_url_basename(repo, is_bundle, 0)`: the directory name a clone of `repo` gets.
/// `None` where git dies ("No directory name could be guessed").
fn url_basename(repo: &[u8], bundle: bool) -> Option<Vec<u8>> {
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut start = find(repo, b"://").map_or(0, |i| i + 3);
    let mut end = repo.len();
    // Authentication data: up to the last '@' of the host part.
    let mut p = start;
    while p < end && repo[p] != b'/' {
        if repo[p] == b'@' {
            start = p + 1;
        }
        p += 1;
    }
    while start < end && (repo[end - 1] == b'/' || space(repo[end - 1])) {
        end -= 1;
    }
    if end - start > 5 && repo[end - 5] == b'/' && &repo[end - 4..end] == b".git" {
        end -= 5;
        while start < end && repo[end - 1] == b'/' {
            end -= 1;
        }
    }
    // A trailing port number of a bare host name.
    let part = &repo[start..end];
    if !part.contains(&b'/') && part.contains(&b':') {
        let mut q = end;
        while start < q && repo[q - 1].is_ascii_digit() {
            q -= 1;
        }
        if start < q && repo[q - 1] == b':' {
            end = q - 1;
        }
    }
    let mut q = end;
    while start < q && repo[q - 1] != b'/' && repo[q - 1] != b':' {
        q -= 1;
    }
    let mut name = &repo[q..end];
    let suffix: &[u8] = if bundle { b".bundle" } else { b".git" };
    if let Some(stripped) = name.strip_suffix(suffix) {
        name = stripped;
    }
    if name.is_empty() || name == b"/" {
        return None;
    }
    // Control characters and runs of white space become one space; none at either end.
    let mut out = Vec::with_capacity(name.len());
    let mut prev_space = true;
    for &b in name {
        let b = if b < 0x20 { b' ' } else { b };
        if space(b) {
            if prev_space {
                continue;
            }
            prev_space = true;
        } else {
            prev_space = false;
        }
        out.push(b);
    }
    if prev_space {
        out.pop();
    }
    Some(out)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Open the repository git just created in `dir` (its git directory when `GIT_WORK_TREE` names
/// the work tree), with the `-c` overrides; `None` when gix cannot.
fn open_new(dir: &Path, overrides: &[String]) -> Option<gix::Repository> {
    let opts = gix::open::Options::default()
        .config_overrides(overrides.iter().cloned())
        .with(gix::sec::Trust::Full);
    let mut repo = gix::open_opts(dir, opts)
        .ok()
        .filter(|repo| !crate::repo::uses_reftable(repo))?;
    if let Some(work_tree) = std::env::var_os("GIT_WORK_TREE") {
        let work_tree =
            crate::platform::canonicalize(&work_tree).unwrap_or_else(|_| work_tree.into());
        repo.set_workdir(Some(work_tree)).ok()?;
    }
    repo.workdir().is_some().then_some(repo)
}

/// `git ARGS` in `dir`, its standard output (trimmed) when it succeeds.
fn git_output(dir: &Path, args: &[&str]) -> Option<String> {
    let out = gitpar::git_command()
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

/// The checkout of git's clone done by git, for a repository gix cannot read (SHA-256):
/// `git read-tree -m -u HEAD` is the one-way merge git's clone runs, then `post-checkout` and
/// the submodules as in [`clone`].
fn checkout_by_git(parsed: &Parsed, dir: &Path, quiet: bool) -> Result<(), u8> {
    let workdir = match std::env::var_os("GIT_WORK_TREE") {
        Some(wt) => PathBuf::from(wt),
        None => dir.to_owned(),
    };
    let Some(git_dir) = git_output(dir, &["rev-parse", "--absolute-git-dir"]) else {
        return Err(fatal(format!(
            "'{}' is not the repository git cloned",
            dir.display()
        )));
    };
    let git_dir = PathBuf::from(git_dir);
    let Some(head) = git_output(dir, &["rev-parse", "-q", "--verify", "HEAD^{commit}"]) else {
        if git_output(dir, &["for-each-ref", "--count=1"]).is_some_and(|r| !r.is_empty()) {
            eprintln!("warning: remote HEAD refers to nonexistent ref, unable to checkout");
        }
        return Ok(());
    };
    match git_output(dir, &["symbolic-ref", "-q", "HEAD"]) {
        None => {
            let advise = git_output(
                dir,
                &[
                    "config",
                    "--type=bool",
                    "--default=true",
                    "advice.detachedHead",
                ],
            );
            if advise.as_deref() == Some("true") {
                eprint!("{}", crate::revision::detach_advice_text(&head));
            }
        }
        Some(name) if !name.starts_with("refs/heads/") => {
            return Err(fatal("HEAD not found below refs/heads!"));
        }
        Some(_) => {}
    }
    let mut read_tree: Vec<OsString> = ["read-tree", "-m", "-u"].map(OsString::from).into();
    if !quiet {
        read_tree.push("-v".into());
    }
    read_tree.push("HEAD".into());
    if crate::git::run_git(&read_tree, Some((&workdir, &git_dir)))? != 0 {
        eprintln!("fatal: unable to checkout working tree");
        checkout_failed();
        return Err(FATAL);
    }
    let null = "0".repeat(head.len());
    let hook: Vec<OsString> = ["hook", "run", "--ignore-missing", "post-checkout", "--"]
        .iter()
        .map(OsString::from)
        .chain([null.into(), head.into(), "1".into()])
        .collect();
    let rc = crate::git::run_git(&hook, Some((&workdir, &git_dir)))?;
    if rc == 0 && parsed.flag("recurse-submodules") == Some(true) {
        let filter = git_output(
            dir,
            &[
                "config",
                "--type=bool",
                "--default=false",
                "clone.filterSubmodules",
            ],
        );
        let status = update_submodules(
            parsed,
            filter.as_deref() == Some("true"),
            &git_dir,
            &workdir,
            None,
        )?;
        return if status == 0 { Ok(()) } else { Err(status) };
    }
    hooks::combine(Ok(()), i32::from(rc))
}

/// What `checkout()` of git's clone finds in `HEAD`: the commit to check out, with git's
/// detached-HEAD advice; `None` (nothing to check out) for an unborn `HEAD`, with git's warning
/// unless the source was empty (then git has said so already).
fn head_to_check_out(repo: &gix::Repository) -> Result<Option<gix::ObjectId>, u8> {
    let head = repo
        .head()
        .map_err(|e| fatal(format!("unable to read HEAD: {e}")))?;
    let name = head.referent_name().map(|n| n.as_bstr().to_string());
    let Some(commit) = repo.head_id().ok().map(gix::Id::detach) else {
        let empty = repo
            .references()
            .ok()
            .and_then(|r| r.all().ok().map(|mut all| all.next().is_none()))
            .unwrap_or(false);
        if !empty {
            eprintln!("warning: remote HEAD refers to nonexistent ref, unable to checkout");
        }
        return Ok(None);
    };
    match name {
        None => {
            if let Some(advice) = crate::revision::detach_advice(repo, &commit.to_string()) {
                eprint!("{advice}");
            }
        }
        Some(name) if !name.starts_with("refs/heads/") => {
            return Err(fatal("HEAD not found below refs/heads!"));
        }
        Some(_) => {}
    }
    Ok(Some(commit))
}

/// `git submodule update --require-init --recursive ...` with the options git's clone gives
/// it, run in the work tree with `GIT_DIR` set, as git's clone runs it. With `engine` (the names
/// of the submodules known so far), git only clones them and the engine checks them out;
/// without (a repository git-par cannot read), git does all of it.
fn update_submodules(
    parsed: &Parsed,
    filter_config: bool,
    git_dir: &Path,
    workdir: &Path,
    engine: Option<&[(String, String)]>,
) -> Result<u8, u8> {
    let mut args: Vec<OsString> = Vec::new();
    // With the engine, git clones and the engine checks out: each submodule's update command
    // is `!true` (git runs it instead of its checkout; the setting reaches git's recursion).
    for (_, name) in engine.unwrap_or_default() {
        args.push("-c".into());
        args.push(format!("submodule.{name}.update=!true").into());
    }
    args.extend(["submodule", "update", "--require-init", "--recursive"].map(OsString::from));
    if parsed.flag("shallow-submodules") == Some(true) {
        args.push("--depth=1".into());
    }
    if let Some(jobs) = parsed.value("jobs") {
        args.push([OsStr::new("--jobs="), jobs].join(OsStr::new("")));
    }
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let progress = parsed
        .flag("progress")
        .unwrap_or(parsed.verbosity() >= 0 && tty);
    if progress {
        args.push("--progress".into());
    }
    if parsed.verbosity() < 0 {
        args.push("--quiet".into());
    }
    if parsed.flag("remote-submodules") == Some(true) {
        args.push("--remote".into());
        args.push("--no-fetch".into());
    }
    if let Some(format) = parsed.value("ref-format") {
        args.push([OsStr::new("--ref-format="), format].join(OsStr::new("")));
    }
    let filter_submodules = parsed
        .flag("also-filter-submodules")
        .unwrap_or(filter_config);
    if filter_submodules {
        for filter in parsed.values("filter") {
            args.push([OsStr::new("--filter="), filter].join(OsStr::new("")));
        }
    }
    let deepen = parsed.value("depth").is_some()
        || parsed.value("shallow-since").is_some()
        || !parsed.values("shallow-exclude").is_empty();
    let single = parsed.flag("single-branch").unwrap_or(deepen);
    args.push(
        if single {
            "--single-branch"
        } else {
            "--no-single-branch"
        }
        .into(),
    );
    let git_dir = crate::platform::canonicalize(git_dir).unwrap_or_else(|_| git_dir.into());
    if engine.is_some() {
        run_git_quiet_stdout(&args, workdir, &git_dir)
    } else {
        crate::git::run_git(&args, Some((workdir, &git_dir)))
    }
}

/// [`crate::git::run_git`] with standard output held back: what git prints for the `!true` update
/// command (`Submodule path 'x': 'true <id>'`) is not what happened; [`clone_submodules`] says
/// what the engine did instead. Standard error (cloning progress, errors) passes through.
fn run_git_quiet_stdout(args: &[OsString], dir: &Path, git_dir: &Path) -> Result<u8, u8> {
    let out = gitpar::git_command()
        .args(args)
        .current_dir(dir)
        .env("GIT_DIR", git_dir)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| fatal(format!("cannot run git: {e}")))?;
    Ok(out
        .code()
        .map_or(FATAL, |c| u8::try_from(c & 0xff).unwrap_or(FATAL)))
}

/// git's words when the clone is done but its checkout is not (`builtin/clone.c`).
/// git's `report_collided_checkout` (a clone's only): the entries of colliding groups, sorted
/// as `fspathcmp` sorts (ignoring ASCII case under `core.ignorecase`; a stable sort, so names
/// equal but for case stay in index order).
fn report_collisions(repo: &gix::Repository, collisions: &[gix::bstr::BString]) {
    if collisions.is_empty() {
        return;
    }
    let ignore_case = repo
        .config_snapshot()
        .boolean("core.ignorecase")
        .unwrap_or(false);
    let mut list: Vec<&gix::bstr::BString> = collisions.iter().collect();
    if ignore_case {
        list.sort_by_key(|p| p.to_ascii_lowercase());
    } else {
        list.sort();
    }
    // warning()'s own newline after a message that ends in one: an empty line follows.
    eprintln!(
        "warning: the following paths have collided (e.g. case-sensitive paths\n\
         on a case-insensitive filesystem) and only one from the same\n\
         colliding group is in the working tree:\n"
    );
    for path in list {
        eprintln!("  '{path}'");
    }
}

fn checkout_failed() {
    eprintln!(
        "warning: Clone succeeded, but checkout failed.\n\
         You can inspect what was checked out with 'git status'\n\
         and retry with 'git restore --source=HEAD :/'\n"
    );
}

#[cfg(test)]
mod tests {
    use super::url_basename;

    fn guess(url: &str) -> Option<String> {
        url_basename(url.as_bytes(), false).map(|v| String::from_utf8(v).unwrap())
    }

    /// The cases of git's t5603-clone-dirname.sh.
    #[test]
    fn directory_names_as_git_guesses_them() {
        for (url, dir) in [
            ("host:foo", "foo"),
            ("host:foo.git", "foo"),
            ("host:foo/.git", "foo"),
            ("ssh://host/foo", "foo"),
            ("ssh://host/foo.git", "foo"),
            ("ssh://host/foo/.git", "foo"),
            ("ssh://host:1234/foo", "foo"),
            ("ssh://user@host/foo", "foo"),
            ("ssh://user:password@host/foo", "foo"),
            ("ssh://user:pass@word@host/foo", "foo"),
            ("ssh://host/", "host"),
            ("ssh://host:1234/", "host"),
            ("ssh://user@host:1234/", "host"),
            ("ssh://user:passw@rd@host:1234/", "host"),
            ("host:/", "host"),
            ("ssh://host/foo/", "foo"),
            ("ssh://host/foo.git/", "foo"),
            ("ssh://host/foo/.git/", "foo"),
            ("ssh://host/foo/.git////", "foo"),
            ("file:///some/path/repo", "repo"),
            ("/a/b/c/d.git", "d"),
            ("/foo/bar:2222.git", "2222"),
            ("src/", "src"),
            ("  my  \trepo  ", "my repo"),
        ] {
            assert_eq!(guess(url).as_deref(), Some(dir), "{url}");
        }
        assert_eq!(guess("/"), None);
        assert_eq!(guess(""), None);
        assert_eq!(
            url_basename(b"/tmp/x.bundle", true),
            Some(b"x".to_vec()),
            "a bundle loses .bundle"
        );
    }
}
