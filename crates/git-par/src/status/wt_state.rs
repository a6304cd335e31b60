//! What `git status` (long format) says about an operation in progress and a detached HEAD:
//! git's `wt-status.c` state section, ported so that `git par status` prints the same bytes.
//!
//! [`WtState::get`] is `wt_status_get_state` (with `wt_status_check_rebase`,
//! `wt_status_check_bisect`, `get_branch`, `sequencer_get_last_command` and
//! `wt_status_get_detached_from`): it only reads the git directory's state files
//! (`rebase-apply/`, `rebase-merge/`, `MERGE_HEAD`, `CHERRY_PICK_HEAD`, `REVERT_HEAD`,
//! `sequencer/todo`, `BISECT_LOG`, `BISECT_START`) and HEAD's reflog, never the work tree.
//! [`WtState::lines`] is `wt_longstatus_print_state` and the `show_*_in_progress` functions;
//! [`WtState::detached_header`] is the first line's `HEAD detached at`/`from`, `rebase in
//! progress; onto` or `Not currently on any branch.`. The sparse-checkout line is printed by the
//! caller, after these lines, as git does.

use std::path::Path;

use bstr::{BString, ByteSlice, ByteVec};

use crate::repo::Opened;

/// The state of the repository as git's `struct wt_status_state` holds it.
#[derive(Debug, Default)]
pub(super) struct WtState {
    merge: bool,
    am: bool,
    am_empty_patch: bool,
    rebase: bool,
    rebase_interactive: bool,
    /// The branch being rebased (`rebase-*/head-name`), `None` for a detached rebase.
    branch: Option<BString>,
    /// What the rebase replays onto (`rebase-*/onto`, abbreviated).
    onto: Option<BString>,
    /// `Some(None)`: the sequencer's next command is a pick but CHERRY_PICK_HEAD is gone (git's
    /// null oid: "Cherry-pick currently in progress.").
    cherry_pick: Option<Option<gix::ObjectId>>,
    /// As `cherry_pick`, for `revert`.
    revert: Option<Option<gix::ObjectId>>,
    bisect: bool,
    /// `BISECT_START`: the branch (or abbreviated commit) the bisection started from.
    bisecting_from: Option<BString>,
    /// HEAD's reflog's last `checkout: moving from A to B`: B's short name and whether HEAD is
    /// still at it (`HEAD detached at B`) or moved since (`HEAD detached from B`).
    detached_from: Option<(BString, bool)>,
}

/// What the state section's wording depends on besides the state files.
pub(super) struct View {
    /// `advice.statusHints`.
    pub hints: bool,
    /// An index entry has a stage other than 0 (git's `has_unmerged`).
    pub has_unmerged: bool,
    /// The work tree differs from the index (git's `workdir_dirty`: unstaged or unmerged).
    pub workdir_dirty: bool,
    /// HEAD is detached (git's `s->branch` is `"HEAD"`).
    pub detached: bool,
}

/// git prints a NULL `onto` with glibc's `%s`.
const NULL: &str = "(null)";

impl WtState {
    /// git's `wt_status_get_state(r, state, get_detached_from = detached)`.
    pub(super) fn get(repo: &gix::Repository, detached: bool) -> WtState {
        let dir = repo.git_dir();
        let mut st = WtState::default();
        if dir.join("MERGE_HEAD").exists() {
            st.check_rebase(repo, dir);
            st.merge = true;
        } else if st.check_rebase(repo, dir) {
            // all set
        } else if let Some(id) = pseudo_ref(repo, "CHERRY_PICK_HEAD") {
            st.cherry_pick = Some(Some(id));
        }
        if dir.join("BISECT_LOG").exists() {
            st.bisect = true;
            st.bisecting_from = get_branch(repo, &dir.join("BISECT_START"));
        }
        if let Some(id) = pseudo_ref(repo, "REVERT_HEAD") {
            st.revert = Some(Some(id));
        }
        match sequencer_last_command(dir) {
            Some(Replay::Pick) if st.cherry_pick.is_none() => st.cherry_pick = Some(None),
            Some(Replay::Revert) if st.revert.is_none() => st.revert = Some(None),
            _ => {}
        }
        if detached {
            st.detached_from = detached_from(repo);
        }
        st
    }

    /// git's `wt_status_check_rebase`: true when a rebase or an am is in progress.
    fn check_rebase(&mut self, repo: &gix::Repository, dir: &Path) -> bool {
        let apply = dir.join("rebase-apply");
        let merge = dir.join("rebase-merge");
        if apply.exists() {
            if apply.join("applying").exists() {
                self.am = true;
                self.am_empty_patch = std::fs::metadata(apply.join("patch"))
                    .map(|m| m.len() == 0)
                    .unwrap_or(false);
            } else {
                self.rebase = true;
                self.branch = get_branch(repo, &apply.join("head-name"));
                self.onto = get_branch(repo, &apply.join("onto"));
            }
        } else if merge.exists() {
            if merge.join("interactive").exists() {
                self.rebase_interactive = true;
            } else {
                self.rebase = true;
            }
            self.branch = get_branch(repo, &merge.join("head-name"));
            self.onto = get_branch(repo, &merge.join("onto"));
        } else {
            return false;
        }
        true
    }

    /// The first line of the long format when HEAD is detached, as git's `wt_longstatus_print`
    /// words it: the part git paints in the "nobranch" colour, and the name after it.
    pub(super) fn detached_header(&self) -> (&'static str, BString) {
        if self.rebase || self.rebase_interactive {
            let on_what = if self.rebase_interactive {
                "interactive rebase in progress; onto "
            } else {
                "rebase in progress; onto "
            };
            (on_what, self.onto.clone().unwrap_or_else(|| NULL.into()))
        } else if let Some((from, at)) = &self.detached_from {
            let on_what = if *at {
                "HEAD detached at "
            } else {
                "HEAD detached from "
            };
            (on_what, from.clone())
        } else {
            ("Not currently on any branch.", BString::default())
        }
    }

    /// git's `wt_longstatus_print_state` (without the sparse-checkout line): the lines to print,
    /// each without its newline; an empty string is a blank line (git's trailer).
    pub(super) fn lines(&self, opened: &Opened, view: &View) -> Vec<BString> {
        let repo = &opened.repo;
        let mut out = Lines(Vec::new());
        if self.merge {
            if self.rebase_interactive {
                self.rebase_information(opened, view, &mut out);
                out.line("");
            }
            if view.has_unmerged {
                out.line("You have unmerged paths.");
                if view.hints {
                    out.line("  (fix conflicts and run \"git commit\")");
                    out.line("  (use \"git merge --abort\" to abort the merge)");
                }
            } else {
                out.line("All conflicts fixed but you are still merging.");
                if view.hints {
                    out.line("  (use \"git commit\" to conclude merge)");
                }
            }
            out.line("");
        } else if self.am {
            self.am_in_progress(view, &mut out);
        } else if self.rebase || self.rebase_interactive {
            self.rebase_in_progress(opened, view, &mut out);
        } else if let Some(id) = self.cherry_pick {
            sequencer_in_progress(repo, view, &mut out, id, &CHERRY_PICK);
        } else if let Some(id) = self.revert {
            sequencer_in_progress(repo, view, &mut out, id, &REVERT);
        }
        if self.bisect {
            match &self.bisecting_from {
                Some(from) => out.push(
                    format!(
                        "You are currently bisecting, started from branch '{}'.",
                        from.as_bstr()
                    )
                    .into(),
                ),
                None => out.line("You are currently bisecting."),
            }
            if view.hints {
                out.line("  (use \"git bisect reset\" to get back to the original branch)");
            }
            out.line("");
        }
        out.0
    }

    fn am_in_progress(&self, view: &View, out: &mut Lines) {
        out.line("You are in the middle of an am session.");
        if self.am_empty_patch {
            out.line("The current patch is empty.");
        }
        if view.hints {
            if !self.am_empty_patch {
                out.line("  (fix conflicts and then run \"git am --continue\")");
            }
            out.line("  (use \"git am --skip\" to skip this patch)");
            if self.am_empty_patch {
                out.line(
                    "  (use \"git am --allow-empty\" to record this patch as an empty commit)",
                );
            }
            out.line("  (use \"git am --abort\" to restore the original branch)");
        }
        out.line("");
    }

    /// `You are currently <doing> while rebasing branch 'B' on 'X'.`, or `<fallback>` for a
    /// detached rebase.
    fn rebasing(&self, doing: &str, fallback: &str) -> BString {
        match &self.branch {
            Some(b) => format!(
                "You are currently {doing} branch '{}' on '{}'.",
                b.as_bstr(),
                self.onto.as_ref().map_or(NULL.into(), |o| o.as_bstr())
            )
            .into(),
            None => fallback.into(),
        }
    }

    /// git's `show_rebase_in_progress`.
    fn rebase_in_progress(&self, opened: &Opened, view: &View, out: &mut Lines) {
        let repo = &opened.repo;
        self.rebase_information(opened, view, out);
        let dir = repo.git_dir();
        if view.has_unmerged {
            out.push(self.rebasing("rebasing", "You are currently rebasing."));
            if view.hints {
                out.line("  (fix conflicts and then run \"git rebase --continue\")");
                out.line("  (use \"git rebase --skip\" to skip this patch)");
                out.line("  (use \"git rebase --abort\" to check out the original branch)");
            }
        } else if self.rebase || dir.join("MERGE_MSG").exists() {
            out.push(self.rebasing("rebasing", "You are currently rebasing."));
            if view.hints {
                out.line("  (all conflicts fixed: run \"git rebase --continue\")");
            }
        } else if split_commit_in_progress(repo, view) {
            out.push(self.rebasing(
                "splitting a commit while rebasing",
                "You are currently splitting a commit during a rebase.",
            ));
            if view.hints {
                out.line("  (Once your working directory is clean, run \"git rebase --continue\")");
            }
        } else {
            out.push(self.rebasing(
                "editing a commit while rebasing",
                "You are currently editing a commit during a rebase.",
            ));
            if view.hints {
                out.line("  (use \"git commit --amend\" to amend the current commit)");
                out.line(
                    "  (use \"git rebase --continue\" once you are satisfied with your changes)",
                );
            }
        }
        out.line("");
    }

    /// git's `show_rebase_information`: the last two commands done and the next two to do of an
    /// interactive rebase.
    fn rebase_information(&self, opened: &Opened, view: &View, out: &mut Lines) {
        if !self.rebase_interactive {
            return;
        }
        let repo = &opened.repo;
        const SHOWN: usize = 2;
        let dir = repo.git_dir();
        let comment = comment_string(repo);
        let done =
            read_todo_list(repo, &dir.join("rebase-merge/done"), &comment).unwrap_or_default();
        let todo = read_todo_list(repo, &dir.join("rebase-merge/git-rebase-todo"), &comment);
        if todo.is_none() {
            out.line("git-rebase-todo is missing.");
        }
        let todo = todo.unwrap_or_default();
        if done.is_empty() {
            out.line("No commands done.");
        } else {
            let n = done.len();
            out.push(if n == 1 {
                "Last command done (1 command done):".into()
            } else {
                format!("Last commands done ({n} commands done):").into()
            });
            for line in &done[n.saturating_sub(SHOWN)..] {
                out.indented(line);
            }
            if n > SHOWN && view.hints {
                let mut see = BString::from("  (see more in file ");
                see.push_str(shown_git_path(opened, "rebase-merge/done"));
                see.push_str(")");
                out.push(see);
            }
        }
        if todo.is_empty() {
            out.line("No commands remaining.");
        } else {
            let n = todo.len();
            out.push(if n == 1 {
                "Next command to do (1 remaining command):".into()
            } else {
                format!("Next commands to do ({n} remaining commands):").into()
            });
            for line in todo.iter().take(SHOWN) {
                out.indented(line);
            }
            if view.hints {
                out.line("  (use \"git rebase --edit-todo\" to view and edit)");
            }
        }
    }
}

/// The resolution hint under `Unmerged paths:` (git's `wt_longstatus_print_unmerged_header`)
/// for the unmerged entries' stage masks (1: both deleted, 3 and 5: deleted by them/us): `git
/// rm` when every conflict is a deletion on both sides, `git add` when none deletes, else both.
pub(super) fn resolution_hint(masks: impl IntoIterator<Item = u8>) -> &'static [u8] {
    let (mut both_deleted, mut del_mod, mut not_deleted) = (false, false, false);
    for mask in masks {
        match mask {
            0 => {}
            1 => both_deleted = true,
            3 | 5 => del_mod = true,
            _ => not_deleted = true,
        }
    }
    if !both_deleted && !del_mod {
        b"  (use \"git add <file>...\" to mark resolution)\n"
    } else if both_deleted && !del_mod && !not_deleted {
        b"  (use \"git rm <file>...\" to mark resolution)\n"
    } else {
        b"  (use \"git add/rm <file>...\" as appropriate to mark resolution)\n"
    }
}

/// The lines of the state section under construction.
struct Lines(Vec<BString>);

impl Lines {
    fn line(&mut self, text: &str) {
        self.0.push(text.into());
    }
    fn push(&mut self, text: BString) {
        self.0.push(text);
    }
    fn indented(&mut self, text: &BString) {
        let mut l = BString::from("   ");
        l.push_str(text);
        self.0.push(l);
    }
}

/// The words of `show_cherry_pick_in_progress` and `show_revert_in_progress`, which differ
/// only in them.
struct Sequencing {
    null: &'static str,
    doing: &'static str,
    command: &'static str,
    operation: &'static str,
}

const CHERRY_PICK: Sequencing = Sequencing {
    null: "Cherry-pick currently in progress.",
    doing: "cherry-picking",
    command: "cherry-pick",
    operation: "cherry-pick",
};

const REVERT: Sequencing = Sequencing {
    null: "Revert currently in progress.",
    doing: "reverting",
    command: "revert",
    operation: "revert",
};

fn sequencer_in_progress(
    repo: &gix::Repository,
    view: &View,
    out: &mut Lines,
    id: Option<gix::ObjectId>,
    w: &Sequencing,
) {
    match id {
        None => out.line(w.null),
        Some(id) => out.push(
            format!(
                "You are currently {} commit {}.",
                w.doing,
                crate::names::short(repo, id)
            )
            .into(),
        ),
    }
    if view.hints {
        let c = w.command;
        out.push(if view.has_unmerged {
            format!("  (fix conflicts and run \"git {c} --continue\")").into()
        } else if id.is_none() {
            format!("  (run \"git {c} --continue\" to continue)").into()
        } else {
            format!("  (all conflicts fixed: run \"git {c} --continue\")").into()
        });
        out.push(format!("  (use \"git {c} --skip\" to skip this patch)").into());
        out.push(
            format!(
                "  (use \"git {c} --abort\" to cancel the {} operation)",
                w.operation
            )
            .into(),
        );
    }
    out.line("");
}

/// The pseudo-ref `name` (exactly, not a ref DWIM finds under `refs/`) and its object, as git's
/// `refs_ref_exists(name) && !repo_get_oid(name)`.
fn pseudo_ref(repo: &gix::Repository, name: &str) -> Option<gix::ObjectId> {
    let r = exact_ref(repo, name)?;
    resolve(r).map(|(_, id)| id)
}

/// The reference named exactly `full` (gix's lookup would also try `refs/tags/<full>` etc.).
fn exact_ref<'r>(repo: &'r gix::Repository, full: &str) -> Option<gix::Reference<'r>> {
    let r = repo.try_find_reference(full).ok()??;
    (r.name().as_bstr() == full.as_bytes()).then_some(r)
}

/// Follow symbolic references to the last one's name and the object it names (unpeeled), as
/// git's `refs_resolve_ref_unsafe` with `RESOLVE_REF_READING`; `None` for a dangling symref.
fn resolve(mut r: gix::Reference<'_>) -> Option<(BString, gix::ObjectId)> {
    for _ in 0..5 {
        if let Some(id) = r.target().try_id() {
            return Some((r.name().as_bstr().to_owned(), id.to_owned()));
        }
        r = r.follow()?.ok()?;
    }
    None
}

/// git's `get_branch`: a rebase's `head-name`/`onto` or bisect's `BISECT_START`, with
/// `refs/heads/` dropped and a full object name abbreviated; `None` for a missing or empty file
/// and for a rebase's `detached HEAD`.
fn get_branch(repo: &gix::Repository, path: &Path) -> Option<BString> {
    let mut text = std::fs::read(path).ok()?;
    while text.last() == Some(&b'\n') {
        text.pop();
    }
    if text.is_empty() {
        return None;
    }
    if let Some(rest) = text.strip_prefix(b"refs/heads/") {
        return Some(rest.into());
    }
    if text.starts_with(b"refs/") {
        return Some(text.into());
    }
    let hex_len = repo.object_hash().len_in_hex();
    if let Some(id) = text
        .get(..hex_len)
        .and_then(|h| gix::ObjectId::from_hex(h).ok())
    {
        return Some(crate::names::short(repo, id).into());
    }
    if text == b"detached HEAD" {
        return None;
    }
    Some(text.into())
}

/// What the sequencer (`git cherry-pick`/`git revert` of several commits) does next.
enum Replay {
    Pick,
    Revert,
}

/// git's `sequencer_get_last_command`: the first command of `sequencer/todo`. A missing
/// file, or a `sequencer` that is a file, is no sequencer.
fn sequencer_last_command(dir: &Path) -> Option<Replay> {
    let text = std::fs::read(dir.join("sequencer/todo")).ok()?;
    let start = text
        .iter()
        .position(|b| !b" \t\r\n".contains(b))
        .unwrap_or(text.len());
    let bol = &text[start..];
    // git's `is_command` then a blank: the word or its one-letter nickname.
    let command = |word: &[u8], nick: Option<u8>| {
        let rest = bol
            .strip_prefix(word)
            .or_else(|| nick.and_then(|n| bol.strip_prefix(&[n][..])))?;
        matches!(rest.first(), Some(b' ' | b'\t')).then_some(())
    };
    if command(b"pick", Some(b'p')).is_some() {
        Some(Replay::Pick)
    } else if command(b"revert", None).is_some() {
        Some(Replay::Revert)
    } else {
        None
    }
}

/// `core.commentString` or `core.commentChar` (`#` by default and for `auto`): todo-list lines
/// starting with it are comments.
fn comment_string(repo: &gix::Repository) -> BString {
    let config = repo.config_snapshot();
    let value = config
        .string("core.commentString")
        .or_else(|| config.string("core.commentChar"));
    match value {
        Some(v) if !v.is_empty() && v != "auto" => v,
        _ => "#".into(),
    }
}

/// git's `read_rebase_todolist`: the commands of a todo list without comments and blank lines,
/// trimmed, with their object names abbreviated. `None` when the file does not exist.
fn read_todo_list(repo: &gix::Repository, path: &Path, comment: &BString) -> Option<Vec<BString>> {
    let text = std::fs::read(path).ok()?;
    let mut lines = Vec::new();
    let mut rest = &text[..];
    while !rest.is_empty() {
        let (line, next) = match rest.find_byte(b'\n') {
            Some(p) => (&rest[..p], &rest[p + 1..]),
            None => (rest, &[][..]),
        };
        rest = next;
        if line.starts_with(comment) {
            continue;
        }
        let line = trim(line);
        if line.is_empty() {
            continue;
        }
        lines.push(abbrev_oid_in_line(repo, line));
    }
    Some(lines)
}

/// git's `strbuf_trim`: its `isspace` is space, tab, CR and LF.
fn trim(s: &[u8]) -> &[u8] {
    let space = |b: &u8| b" \t\r\n".contains(b);
    let start = s.iter().position(|b| !space(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !space(b)).map_or(start, |p| p + 1);
    &s[start..end.max(start)]
}

/// git's `abbrev_oid_in_line`: `pick <full oid> subject` becomes `pick <abbrev> subject`. The
/// line is cut at its first two spaces (each piece keeps its space); when the second piece,
/// trimmed, names an object (any revision, as `repo_get_oid`), it is replaced by the
/// abbreviated name and a space. `exec` and `label` lines are left alone.
fn abbrev_oid_in_line(repo: &gix::Repository, line: &[u8]) -> BString {
    for skip in [&b"exec "[..], b"x ", b"label ", b"l "] {
        if line.starts_with(skip) {
            return line.into();
        }
    }
    let Some(first) = line.find_byte(b' ') else {
        return line.into();
    };
    let (head, rest) = line.split_at(first + 1);
    if rest.is_empty() {
        return line.into();
    }
    let (second, third) = match rest.find_byte(b' ') {
        Some(p) => rest.split_at(p + 1),
        None => (rest, &[][..]),
    };
    let name = trim(second);
    match repo.rev_parse_single(name.as_bstr()) {
        Ok(id) if !name.is_empty() => {
            let mut out = BString::from(head);
            out.push_str(crate::names::short(repo, id.detach()));
            out.push(b' ');
            out.push_str(third);
            out
        }
        _ => line.into(),
    }
}

/// `git_path(name)` as git prints it, from the git directory as git's setup leaves it: a
/// discovered `.git` directory is the relative `.git` (git runs from the top of the work tree);
/// `GIT_DIR` is kept as given when the command runs from the top of the work tree (or with no
/// work tree named), else made absolute; a `.git` file's target is absolute.
fn shown_git_path(opened: &Opened, name: &str) -> BString {
    use crate::platform::{canonicalize, git_path_bytes_lossy};
    let repo = &opened.repo;
    let dir = repo.git_dir();
    let canon = |p: &Path| canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut base: BString = match std::env::var_os("GIT_DIR") {
        Some(given) if opened.prefix.as_os_str().is_empty() => {
            let given = given.as_encoded_bytes();
            // git's `strbuf_cleanup_path`: no leading `./`.
            match given.strip_prefix(b"./") {
                Some(rest) => rest.trim_start_with(|c| c == '/').into(),
                None => given.into(),
            }
        }
        Some(_) => git_path_bytes_lossy(&canon(dir)).into_owned(),
        None => {
            let top_dot_git = opened.workdir.as_ref().map(|w| w.join(".git"));
            match top_dot_git {
                Some(d) if d.is_dir() && canon(&d) == canon(dir) => ".git".into(),
                _ => git_path_bytes_lossy(&canon(dir)).into_owned(),
            }
        }
    };
    if !base.is_empty() && !base.ends_with(b"/") {
        base.push(b'/');
    }
    base.push_str(name);
    base
}

/// git's `split_commit_in_progress`: during an `edit` stop, HEAD moved away from the commit
/// being edited (`git reset HEAD^`) and the work tree is dirty.
fn split_commit_in_progress(repo: &gix::Repository, view: &View) -> bool {
    if !view.workdir_dirty || !view.detached {
        return false;
    }
    let direct = |name: &str| -> Option<gix::ObjectId> {
        let r = exact_ref(repo, name)?;
        r.target().try_id().map(ToOwned::to_owned)
    };
    let (Some(head), Some(orig_head)) = (direct("HEAD"), direct("ORIG_HEAD")) else {
        return false;
    };
    let first_line = |name: &str| -> Option<BString> {
        let text = std::fs::read(repo.git_dir().join(name)).ok()?;
        let end = text.find_byte(b'\n').unwrap_or(text.len());
        Some(text[..end].into())
    };
    let (Some(amend), Some(orig)) = (
        first_line("rebase-merge/amend"),
        first_line("rebase-merge/orig-head"),
    ) else {
        return false;
    };
    if amend == orig {
        head.to_string().as_bytes() != amend.as_slice()
    } else {
        orig_head.to_string().as_bytes() != orig.as_slice()
    }
}

/// git's `wt_status_get_detached_from`: the target of HEAD's most recent `checkout: moving from
/// A to B` and whether HEAD is still there. B is shown as the tag or remote-tracking branch it
/// names (without `refs/tags/`/`refs/remotes/`) when exactly one ref of that name exists and
/// points (maybe through a tag) to the commit the checkout moved to; otherwise as the
/// abbreviated commit.
fn detached_from(repo: &gix::Repository) -> Option<(BString, bool)> {
    let head = repo.head().ok()?;
    let mut platform = head.log_iter();
    let lines = platform.rev().ok()??;
    let (target, new) = lines.filter_map(Result::ok).find_map(|line| {
        let msg = line.message.strip_prefix(b"checkout: moving from ")?;
        let at = msg.find(" to ")?;
        let target = &msg[at + 4..];
        let end = target.find_byte(b'\n').unwrap_or(target.len());
        Some((BString::from(&target[..end]), line.new_oid))
    })?;
    let target = if target == "HEAD" {
        crate::names::short(repo, new).into()
    } else {
        target
    };
    let from = match dwim_ref(repo, &target) {
        Some((name, id)) if id == new || peel_to_commit(repo, id) == Some(new) => {
            let name = name.as_bstr();
            name.strip_prefix(b"refs/tags/")
                .or_else(|| name.strip_prefix(b"refs/remotes/"))
                .unwrap_or(name)
                .into()
        }
        _ => crate::names::short(repo, new).into(),
    };
    let at = repo.head_id().ok().map(gix::Id::detach) == Some(new);
    Some((from, at))
}

fn peel_to_commit(repo: &gix::Repository, id: gix::ObjectId) -> Option<gix::ObjectId> {
    let object = repo.find_object(id).ok()?;
    object.peel_to_commit().ok().map(|c| c.id)
}

/// git's `repo_dwim_ref` when it finds exactly one ref: the `ref_rev_parse_rules` candidates for
/// `short`, each resolved through symrefs, and the one found with its object. A name that
/// several rules find (a tag and a branch of the same name) is `None`, as git's count of 2.
/// (The bare `%s` rule is tried only for `refs/...` names and all-capital ones such as
/// `FETCH_HEAD`, the names git can find there in practice.)
fn dwim_ref(repo: &gix::Repository, short: &BString) -> Option<(BString, gix::ObjectId)> {
    let s = short.to_str().ok()?;
    let bare_ok = s.starts_with("refs/") || s.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    let candidates = [
        bare_ok.then(|| s.to_owned()),
        Some(format!("refs/{s}")),
        Some(format!("refs/tags/{s}")),
        Some(format!("refs/heads/{s}")),
        Some(format!("refs/remotes/{s}")),
        Some(format!("refs/remotes/{s}/HEAD")),
    ];
    let mut found = candidates
        .into_iter()
        .flatten()
        .filter_map(|full| exact_ref(repo, &full).and_then(resolve));
    let first = found.next()?;
    let ambiguous = repo
        .config_snapshot()
        .boolean("core.warnAmbiguousRefs")
        .unwrap_or(true)
        && found.next().is_some();
    (!ambiguous).then_some(first)
}
