//! One scenario, run twice: built in two directories by the same script, the command run by
//! git in one and by git-par in the other, then both read and compared.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::compare::{self, Difference};
use crate::generate::Flavour;
use crate::observe::{self, Git, WorkTree};
use crate::process::{self, Output};
use crate::scenario::Scenario;

/// Where scenarios run and which programs they run.
pub struct Setup {
    /// The real git.
    pub git: PathBuf,
    /// The git-par binary under test.
    pub git_par: PathBuf,
    /// The directory scenarios run in (one subdirectory each).
    pub root: PathBuf,
    /// `PATH` for git's side and for reading results.
    pub path_var: String,
    /// A directory holding `git`, a link to git-par: first on `PATH` for its transparent mode.
    pub shim: PathBuf,
    /// Whether to keep every scenario's directory (else only the failing ones').
    pub keep: bool,
    /// Which scenarios the seeds make: Linux's (the default), or Windows' for git-par.exe.
    pub flavour: Flavour,
    /// When git-par is a Windows program (`git-par.exe`): the Wine loader that runs it
    /// (`/usr/lib/wine/wine64`). The scenarios' environment is cleared for every process, so
    /// the variables Wine and the git bridge need ([`WINE_ENV`]) are passed on to git-par's
    /// from git-fuzz's own environment; the shim is then a copy named `git.exe`, the name
    /// git-par.exe answers to as `git`.
    pub wine: Option<PathBuf>,
}

/// The variables git-par.exe under Wine needs from git-fuzz's environment: Wine's prefix and
/// its debug channels, and the git bridge's folder (`WINEPATH`) and port
/// (`scripts/windows bridge` sets them; docs/windows.md).
pub const WINE_ENV: &[&str] = &["WINEPREFIX", "WINEDEBUG", "WINEPATH", "WINBRIDGE_PORT"];

impl Setup {
    /// Finds the real git on `PATH`, makes `root` and the shim for git-par's transparent mode.
    pub fn new(git_par: &Path, root: &Path) -> Result<Setup, String> {
        Setup::with_wine(git_par, root, None)
    }

    /// [`Setup::new`] for git-par.exe run by the Wine loader `wine` ([`Setup::wine`]), when
    /// given.
    pub fn with_wine(git_par: &Path, root: &Path, wine: Option<&Path>) -> Result<Setup, String> {
        let path_var =
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        let git_par = fs::canonicalize(git_par)
            .map_err(|e| format!("git-par at {}: {e}", git_par.display()))?;
        let git = std::env::split_paths(&path_var)
            .map(|d| d.join("git"))
            .find(|g| g.is_file() && fs::canonicalize(g).ok().as_ref() != Some(&git_par))
            .ok_or("no git on PATH")?;
        fs::create_dir_all(root).map_err(|e| format!("creating {}: {e}", root.display()))?;
        let root = fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
        let shim = root.join("shim");
        fs::create_dir_all(&shim).map_err(|e| format!("creating {}: {e}", shim.display()))?;
        if wine.is_some() {
            // Wine follows no Unix symlink to name the program: git-par.exe sees the name it
            // was started by only in a copy (a hard link cannot cross from /work to /dev/shm).
            let copy = shim.join("git.exe");
            let _ = fs::remove_file(&copy);
            fs::copy(&git_par, &copy).map_err(|e| format!("copying to {}: {e}", copy.display()))?;
        } else {
            let link = shim.join("git");
            let _ = fs::remove_file(&link);
            std::os::unix::fs::symlink(&git_par, &link)
                .map_err(|e| format!("linking {}: {e}", link.display()))?;
        }
        Ok(Setup {
            git,
            git_par,
            root,
            path_var,
            shim,
            keep: false,
            flavour: Flavour::Linux,
            wine: wine.map(Path::to_path_buf),
        })
    }
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Both sides alike in every aspect.
    Same,
    /// They differ in a way documented as git-par's safer choice (the reason).
    Allowed(String),
    /// They differ. `lost` names local content git kept and git-par lost.
    Differs {
        lost: Vec<String>,
        differences: Vec<Difference>,
    },
    /// The scenario could not be built or read (a generator bug, not git-par's).
    Invalid(String),
    /// git itself was killed by a signal (a crash of git's, its last words): there is no
    /// result to compare with. Reported, never counted against git-par.
    GitCrashed(String),
}

/// A scenario's result.
#[derive(Debug, Clone)]
pub struct Report {
    /// The scenario.
    pub scenario: Scenario,
    /// How it ended.
    pub verdict: Verdict,
    /// What git's command printed and returned.
    pub git: Option<Output>,
    /// What git-par's command printed and returned.
    pub par: Option<Output>,
    /// Where it ran (kept when it failed).
    pub dir: PathBuf,
}

impl Report {
    /// Whether the scenario counts against git-par.
    pub fn failed(&self) -> bool {
        matches!(self.verdict, Verdict::Differs { .. })
    }

    /// The aspects that differ (empty unless it failed).
    pub fn aspects(&self) -> Vec<String> {
        match &self.verdict {
            Verdict::Differs { differences, .. } => {
                differences.iter().map(|d| d.aspect.clone()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The report as text: the command, both outcomes, each difference as a line diff.
    pub fn render(&self) -> String {
        let s = &self.scenario;
        let mut out = format!(
            "{}: {} (git-par {}{})\n",
            s.name,
            crate::generate::describe(&s.command),
            if s.transparent { "as git" } else { "direct" },
            if s.par_config.is_empty() {
                String::new()
            } else {
                format!(", -c {}", s.par_config.join(" -c "))
            }
        );
        for (who, output) in [("git", &self.git), ("git-par", &self.par)] {
            if let Some(o) = output {
                out.push_str(&format!(
                    "  {who}: exit {}, stderr: {}\n",
                    o.code.map_or("by signal".into(), |c| c.to_string()),
                    String::from_utf8_lossy(&o.stderr)
                        .trim_end()
                        .replace('\n', "\n      ")
                ));
            }
        }
        match &self.verdict {
            Verdict::Same => out.push_str("  same\n"),
            Verdict::Allowed(why) => out.push_str(&format!("  allowed: {why}\n")),
            Verdict::Invalid(why) => out.push_str(&format!("  invalid scenario: {why}\n")),
            Verdict::GitCrashed(why) => out.push_str(&format!("  git crashed: {why}\n")),
            Verdict::Differs { lost, differences } => {
                if !lost.is_empty() {
                    out.push_str(&format!(
                        "  LOSS: git kept and git-par lost the local content of {}\n",
                        lost.join(", ")
                    ));
                }
                for d in differences {
                    out.push_str(&d.render());
                }
            }
        }
        out.push_str(&format!("  in {}\n", self.dir.display()));
        out
    }
}

/// The two sides' directories of a scenario run in `dir`.
fn sides(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("git"), dir.join("git-par"))
}

/// Runs `scenario` in `setup.root/name` and compares.
pub fn run(setup: &Setup, scenario: &Scenario, name: &str) -> Report {
    let dir = setup.root.join(name);
    let mut report = Report {
        scenario: scenario.clone(),
        verdict: Verdict::Same,
        git: None,
        par: None,
        dir: dir.clone(),
    };
    if let Err(why) = run_in(setup, scenario, &dir, &mut report) {
        report.verdict = Verdict::Invalid(why);
    }
    if !setup.keep && !report.failed() {
        let _ = fs::remove_dir_all(&dir);
    }
    report
}

/// The steps of [`run`]: build both sides, check that git built them alike, run the command on
/// each, compare, and judge a difference. An `Err` is a scenario that could not be built or
/// read, reported invalid.
fn run_in(
    setup: &Setup,
    scenario: &Scenario,
    dir: &Path,
    report: &mut Report,
) -> Result<(), String> {
    let (git_side, par_side) = build(setup, scenario, dir)?;
    let before = Before::read(&reader(setup, &par_side), &par_side.join(&scenario.cwd))?;
    let git_rechecked = same_builds(setup, scenario, (&git_side, &par_side), &before)?;
    let (git_out, par_out) = run_command(setup, scenario, (&git_side, &par_side))?;
    if git_out.code.is_none() {
        let stderr = String::from_utf8_lossy(&git_out.stderr);
        report.verdict = Verdict::GitCrashed(stderr.lines().last().unwrap_or("").to_owned());
        report.git = Some(git_out);
        report.par = Some(par_out);
        return Ok(());
    }

    let mut differ = Differ::new(&git_side, &par_side);
    differ.outputs(&git_out, &par_out);
    let trees = differ.observed(setup, scenario, (&git_side, &par_side))?;
    let differences = differ.found;
    let lost = compare::lost(
        &before.tree,
        &trees.0.iter().collect::<Vec<_>>(),
        &trees.1.iter().collect::<Vec<_>>(),
    );
    if !differences.is_empty() {
        let allowed = safer_refusal(
            scenario,
            &before,
            &reader(setup, &git_side),
            &git_side.join(&scenario.cwd),
            &reader(setup, &par_side),
            &par_side.join(&scenario.cwd),
            (&git_out, &par_out),
        )?;
        let allowed = allowed.or_else(|| symlink_kept(scenario, &before, &differences));
        if allowed.is_none() && git_rechecked != before.rechecked {
            return Err(
                "the two builds by git differ in the entries git must read again \
                 (racily clean or smudged), as the second boundaries fell"
                    .into(),
            );
        }
        report.verdict = match allowed {
            Some(why) if lost.is_empty() => Verdict::Allowed(why),
            _ => Verdict::Differs { lost, differences },
        };
    }
    report.git = Some(git_out);
    report.par = Some(par_out);
    Ok(())
}

/// Builds both sides in `dir` (emptied first) by running the scenario's script in each, and
/// returns their directories ([`sides`]). The script is written to `dir/scenario.sh`, where a
/// kept scenario can be run again by hand.
fn build(setup: &Setup, scenario: &Scenario, dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    let (git_side, par_side) = sides(dir);
    for side in [&git_side, &par_side] {
        fs::create_dir_all(side).map_err(|e| format!("creating {}: {e}", side.display()))?;
    }
    let script = dir.join("scenario.sh");
    fs::write(&script, scenario.render()).map_err(|e| format!("writing the script: {e}"))?;
    for side in [&git_side, &par_side] {
        let mut sh = process::command(Path::new("/bin/sh"), side, side, &setup.path_var);
        sh.arg(&script);
        let out = process::run(&mut sh)?;
        if !out.ok() {
            // git's warnings about line endings say nothing about why the script stopped.
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why: Vec<&str> = stderr
                .lines()
                .filter(|l| !l.starts_with("warning: in the working copy of"))
                .collect();
            return Err(format!("the script failed: {}", why.join("\n")));
        }
    }
    Ok((git_side, par_side))
}

/// Runs the scenario's command, by git on git's side, then by git-par on its side
/// ([`par_command`]); each unprivileged where the scenario says so.
fn run_command(
    setup: &Setup,
    scenario: &Scenario,
    (git_side, par_side): (&Path, &Path),
) -> Result<(Output, Output), String> {
    let git_out = {
        let mut cmd = process::command(
            &setup.git,
            &git_side.join(&scenario.cwd),
            git_side,
            &setup.path_var,
        );
        cmd.args(&scenario.command);
        process::run(&mut unprivileged(cmd, scenario))?
    };
    let par_out = process::run(&mut unprivileged(
        par_command(setup, scenario, par_side),
        scenario,
    ))?;
    Ok((git_out, par_out))
}

/// The differences found between the two sides so far, in the order they were compared.
struct Differ {
    /// git's side's directory, as values name it.
    git_name: String,
    /// git-par's side's directory, as values name it.
    par_name: String,
    /// The differences.
    found: Vec<Difference>,
}

impl Differ {
    fn new(git_side: &Path, par_side: &Path) -> Differ {
        Differ {
            git_name: git_side.display().to_string(),
            par_name: par_side.display().to_string(),
            found: Vec::new(),
        }
    }

    /// Records `aspect` as a difference if the two values differ. Each side's own directory is
    /// named in some values (a clone's `remote.origin.url`, a reflog's `clone: from`): said the
    /// same way on both sides, it is no difference.
    fn check(&mut self, aspect: &str, git: String, par: String) {
        let git = git.replace(&self.git_name, "$SIDE");
        let par = par.replace(&self.par_name, "$SIDE");
        if git != par {
            self.found.push(Difference {
                aspect: aspect.to_owned(),
                git,
                par,
            });
        }
    }

    /// Compares what the two commands returned and printed (the first line of stderr only
    /// when one failed: messages are not git-par's to copy word for word).
    fn outputs(&mut self, git_out: &Output, par_out: &Output) {
        self.check(
            "exit code",
            format!("{:?}", git_out.code),
            format!("{:?}", par_out.code),
        );
        self.check("stdout", git_out.text(), par_out.text());
        if !git_out.ok() || !par_out.ok() {
            self.check(
                "stderr's first line",
                git_out.first_error_line(),
                par_out.first_error_line(),
            );
        }
    }

    /// Compares every aspect of each directory the scenario observes, and returns the work
    /// trees read on each side (git's, git-par's), for [`compare::lost`].
    fn observed(
        &mut self,
        setup: &Setup,
        scenario: &Scenario,
        (git_side, par_side): (&Path, &Path),
    ) -> Result<(Vec<WorkTree>, Vec<WorkTree>), String> {
        let mut trees = (Vec::new(), Vec::new());
        for observed in &scenario.observe {
            let g = observe::aspects(&reader(setup, git_side), &git_side.join(observed))?;
            let p = observe::aspects(&reader(setup, par_side), &par_side.join(observed))?;
            for ((aspect, gv), (_, pv)) in g.into_iter().zip(p) {
                let pv = if aspect == "fsck" {
                    beyond_git(&gv, pv)
                } else {
                    pv
                };
                self.check(&format!("{observed}: {aspect}"), gv, pv);
            }
            trees.0.push(observe::work_tree(&git_side.join(observed))?);
            trees.1.push(observe::work_tree(&par_side.join(observed))?);
        }
        Ok(trees)
    }
}

/// git-par's `fsck` report as compared with git's `git_fsck`: dangling objects git leaves and
/// git-par does not are no difference, only those git-par alone leaves are. Returns git's
/// report when git-par's has no line of its own, else git-par's.
fn beyond_git(git_fsck: &str, par_fsck: String) -> String {
    let extra: Vec<&str> = par_fsck
        .lines()
        .filter(|l| !git_fsck.lines().any(|g| g == *l))
        .collect();
    if extra.is_empty() {
        git_fsck.to_owned()
    } else {
        par_fsck
    }
}

/// The two copies git built must be the same before the command runs: where they are not (a
/// racily clean file that `git add` re-hashed under new attributes on one side only, as the
/// second boundary fell), the scenario is not a fair comparison and is reported invalid.
/// Returns the entries git must read again in git's copy ([`observe::index_and_rechecked`]).
fn same_builds(
    setup: &Setup,
    scenario: &Scenario,
    (git_side, par_side): (&Path, &Path),
    par_before: &Before,
) -> Result<String, String> {
    let refs = |side: &Path| -> Result<String, String> {
        Ok(reader(setup, side)
            .run(
                &side.join(&scenario.cwd),
                &["for-each-ref", "--format=%(objectname) %(refname)"],
            )?
            .text())
    };
    let git_dir = git_side.join(&scenario.cwd);
    let git = reader(setup, git_side);
    if refs(git_side)? != refs(par_side)? {
        return Err("the two builds by git differ in their refs".into());
    }
    let (index, rechecked) = observe::index_and_rechecked(&git, &git_dir)?;
    if index != par_before.index {
        return Err("the two builds by git differ in their index".into());
    }
    Ok(rechecked)
}

/// Real git, to read a side's results.
fn reader<'a>(setup: &'a Setup, side: &'a Path) -> Git<'a> {
    Git {
        program: &setup.git,
        home: side,
        path_var: &setup.path_var,
    }
}

/// `cmd` as it is, or for an [`Scenario::unprivileged`] one through `setpriv` without the
/// capabilities that let root ignore file permissions.
fn unprivileged(cmd: std::process::Command, scenario: &Scenario) -> std::process::Command {
    if !scenario.unprivileged {
        return cmd;
    }
    let mut wrapped = std::process::Command::new("setpriv");
    wrapped
        .args([
            "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search",
            "--",
        ])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .stdin(std::process::Stdio::null());
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// git-par's command: `git-par ARGS`, or `git ARGS` with git-par first on `PATH` as `git`.
fn par_command(setup: &Setup, scenario: &Scenario, side: &Path) -> std::process::Command {
    let cwd = side.join(&scenario.cwd);
    let config = scenario
        .par_config
        .iter()
        .flat_map(|c| ["-c".to_owned(), c.clone()]);
    if scenario.transparent {
        let path_var = format!("{}:{}", setup.shim.display(), setup.path_var);
        let mut cmd = match &setup.wine {
            Some(wine) => under_wine(wine, &setup.shim.join("git.exe"), &cwd, side, &path_var),
            None => process::command(&setup.shim.join("git"), &cwd, side, &path_var),
        };
        cmd.args(config).args(&scenario.command);
        cmd
    } else {
        let mut cmd = match &setup.wine {
            Some(wine) => under_wine(wine, &setup.git_par, &cwd, side, &setup.path_var),
            None => process::command(&setup.git_par, &cwd, side, &setup.path_var),
        };
        let args: Vec<String> = match scenario
            .command
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()[..]
        {
            ["update-index", "--refresh"] => vec!["refresh".into()],
            ["update-index", "-q", "--refresh"] => vec!["refresh".into(), "-q".into()],
            _ => scenario.command.clone(),
        };
        cmd.args(config).args(args);
        cmd
    }
}

/// The Windows program `exe` run by the Wine loader `wine`, with the scenario's environment and
/// the variables of git-fuzz's own that Wine and the git bridge need ([`WINE_ENV`]).
fn under_wine(
    wine: &Path,
    exe: &Path,
    cwd: &Path,
    home: &Path,
    path_var: &str,
) -> std::process::Command {
    let mut cmd = process::command(wine, cwd, home, path_var);
    cmd.arg(exe);
    // Wine names Unix files in the locale's encoding: under `LC_ALL=C` the UTF-8 bytes of `é`,
    // as the host's git wrote them, would be two other characters to git-par.exe. A Windows
    // program sees every name in Unicode; so does git-par.exe with a UTF-8 locale. (Messages
    // are the same: C.UTF-8 has no translations.)
    cmd.env("LC_ALL", "C.UTF-8");
    for name in WINE_ENV {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd
}

/// git-par's side before the command: its work tree, index, `HEAD` and `HEAD`'s tree.
struct Before {
    tree: WorkTree,
    index: String,
    /// The entries git must read again ([`observe::index_and_rechecked`]).
    rechecked: String,
    head: String,
    head_tree: String,
}

impl Before {
    fn read(git: &Git<'_>, dir: &Path) -> Result<Before, String> {
        let (index, rechecked) = observe::index_and_rechecked(git, dir)?;
        Ok(Before {
            tree: observe::work_tree(dir)?,
            index,
            rechecked,
            head: observe::head(git, dir)?,
            head_tree: git
                .run(dir, &["ls-tree", "-r", "--full-tree", "HEAD"])?
                .text(),
        })
    }
}

/// The second documented difference: git's `sparse-checkout` removes the directories that
/// left the cone (`clean_tracked_sparse_directories`) with `remove_dir_recursively`, which
/// follows a symlink standing where such a directory was and deletes what it leads to (here it
/// deleted the link itself through `d -> ..`, by luck of the directory order; it can delete
/// files outside the work tree). git-par never follows a link there and leaves it. Returns the
/// reason when the only differences are such links, present before and kept by git-par only.
fn symlink_kept(
    scenario: &Scenario,
    before: &Before,
    differences: &[Difference],
) -> Option<String> {
    if scenario.command.first().map(String::as_str) != Some("sparse-checkout") {
        return None;
    }
    let cwd = &scenario.cwd;
    let mut links = Vec::new();
    let mut outside = false;
    for d in differences {
        if d.aspect == format!("{cwd}: status") {
            continue;
        }
        // Outside the work tree, what git deleted through the link and git-par kept.
        if d.aspect.ends_with(": work tree") && d.aspect != format!("{cwd}: work tree") {
            if compare::diff_lines(&d.git, &d.par)
                .iter()
                .any(|l| l.starts_with("- "))
            {
                return None;
            }
            outside = true;
            continue;
        }
        if d.aspect != format!("{cwd}: work tree") {
            return None;
        }
        // Each line only git-par has must be what was there before, unchanged: a link git
        // removed through, or what git removed through it.
        let was_there: Vec<String> = observe::render(&before.tree)
            .lines()
            .map(str::to_owned)
            .collect();
        for line in compare::diff_lines(&d.git, &d.par) {
            if line.starts_with("- ") {
                return None;
            }
            let Some(added) = line.strip_prefix("+ ") else {
                continue;
            };
            if !was_there.iter().any(|l| l == added) {
                return None;
            }
            if let Some((path, _)) = added.strip_prefix("l ").and_then(|l| l.split_once(" -> ")) {
                links.push(path.to_owned());
            }
        }
    }
    if outside && links.is_empty() {
        return Some(
            "git removed files outside the work tree through a symlink where a directory left \
             the cone; git-par leaves the link and them"
                .to_owned(),
        );
    }
    (!links.is_empty()).then(|| {
        format!(
            "git removes through the symlink {} where a directory left the cone; git-par leaves the link",
            links.join(", ")
        )
    })
}

/// The documented safer refusal: a branch switch or a fast-forward (neither forced nor
/// merging local changes) that git makes by dropping a change staged in the index, and that git-par refuses as it refuses to lose
/// local changes ("would be overwritten"), having changed nothing. Returns the reason when
/// that is what happened.
///
/// The cases are tried in turn, each a function below: `--discard-changes` over untracked
/// files, untracked files git deletes in a sparse checkout, then a refusal over staged changes
/// (git died on a permission, git refused for something else, or git dropped the change), and
/// last a directory/file conflict git leaves out of its index.
fn safer_refusal(
    scenario: &Scenario,
    before: &Before,
    git: &Git<'_>,
    git_dir: &Path,
    par: &Git<'_>,
    par_dir: &Path,
    (git_out, par_out): (&Output, &Output),
) -> Result<Option<String>, String> {
    let command = &scenario.command;
    let unchanged = || -> Result<bool, String> {
        Ok(observe::work_tree(par_dir)? == before.tree
            && observe::index(par, par_dir)? == before.index
            && observe::head(par, par_dir)? == before.head)
    };
    if let Some(why) = untracked_named(command, (git_out, par_out)) {
        if unchanged()? {
            return Ok(Some(why));
        }
    }
    let par_err = String::from_utf8_lossy(&par_out.stderr).into_owned();
    if let Some(why) = lost_by_git(before, (git, git_dir), (git_out, &par_err))? {
        if unchanged()? {
            return Ok(Some(why));
        }
    }
    let both_refused = both_refused(git_out, par_out);
    // git set out to remove what is staged and died on a permission.
    let git_died = git_out.code == Some(128);
    if !refused_over_local_changes(command, (git_out, par_out), both_refused || git_died) {
        return Ok(None);
    }
    if !unchanged()? {
        return Ok(None);
    }
    let in_head = head_entries(before);
    let git_index = observe::index(git, git_dir)?;
    let git_tree = git
        .run(git_dir, &["ls-tree", "-r", "--full-tree", "HEAD"])?
        .text();
    let staged_paths = staged_paths(before, &in_head);
    if git_died && !both_refused {
        return Ok(died_over_staged((git_out, par_out), &staged_paths));
    }
    if both_refused {
        return Ok(also_staged((git_out, par_out), &staged_paths));
    }
    if let Some(why) = dropped_by_git(before, &in_head, &git_index, &git_tree) {
        return Ok(Some(why));
    }
    Ok(left_out(&git_index, &git_tree, &par_out.stderr))
}

/// `--discard-changes` (a reset that protects untracked files): git names the untracked files
/// in the way, then goes on and removes them; git-par stops at that same error. Returns the
/// reason when both said so (whether git-par changed nothing is the caller's to check).
fn untracked_named(command: &[String], (git_out, par_out): (&Output, &Output)) -> Option<String> {
    let par_err = String::from_utf8_lossy(&par_out.stderr).into_owned();
    let first = par_err.lines().next().unwrap_or_default();
    (command.iter().any(|a| a == "--discard-changes")
        && git_out.ok()
        && par_out.code == Some(128)
        && first.starts_with("error: ")
        && first.contains("untracked")
        && String::from_utf8_lossy(&git_out.stderr)
            .lines()
            .any(|l| l == first))
    .then(|| format!("git reports \"{first}\" and removes them all the same; git-par stops there"))
}

/// Whether git refused too (for something else), with the same exit code, and git-par names
/// every line git names, and more.
fn both_refused(git_out: &Output, par_out: &Output) -> bool {
    !git_out.ok()
        && git_out.code == par_out.code
        && String::from_utf8_lossy(&git_out.stderr).lines().all(|l| {
            String::from_utf8_lossy(&par_out.stderr)
                .lines()
                .any(|p| p == l)
        })
}

/// Whether this can be the refusal over a staged change at all: a switch, checkout or merge,
/// not forced nor merging local changes, that git made (or failed for a reason the caller
/// weighs, `git_excused`) and git-par refused as "would be overwritten".
fn refused_over_local_changes(
    command: &[String],
    (git_out, par_out): (&Output, &Output),
    git_excused: bool,
) -> bool {
    let forcing = ["-f", "--force", "--discard-changes", "-m", "--merge", "--"];
    matches!(command[0].as_str(), "switch" | "checkout" | "merge")
        && !command.iter().any(|a| forcing.contains(&a.as_str()))
        && (git_out.ok() || git_excused)
        && !par_out.ok()
        && String::from_utf8_lossy(&par_out.stderr).contains("would be overwritten")
}

/// `HEAD`'s entries before the command, as (path, object id) pairs.
fn head_entries(before: &Before) -> HashSet<(String, String)> {
    before
        .head_tree
        .lines()
        .filter_map(|l| {
            let (meta, path) = l.split_once('\t')?;
            Some((path.to_owned(), meta.split(' ').nth(2)?.to_owned()))
        })
        .collect()
}

/// The paths of the index before the command whose object `HEAD` does not have there: the
/// staged changes.
fn staged_paths<'a>(before: &'a Before, in_head: &HashSet<(String, String)>) -> Vec<&'a str> {
    before
        .index
        .lines()
        .filter_map(|l| {
            let (meta, path) = l.split_once('\t')?;
            let id = meta.split(' ').nth(1)?;
            let path = path.split(" flags=").next().unwrap_or(path);
            (!in_head.contains(&(path.to_owned(), id.to_owned()))).then_some(path)
        })
        .collect()
}

/// git died (on a permission) while removing paths: the reason when every path git-par refuses
/// over is a staged change git failed to unlink.
fn died_over_staged(
    (git_out, par_out): (&Output, &Output),
    staged_paths: &[&str],
) -> Option<String> {
    let git_err = String::from_utf8_lossy(&git_out.stderr).into_owned();
    let par_err = String::from_utf8_lossy(&par_out.stderr).into_owned();
    let removing = |path: &str| {
        git_err
            .lines()
            .any(|l| l.starts_with(&format!("warning: unable to unlink '{path}': ")))
    };
    let refused: Vec<&str> = par_err
        .lines()
        .filter_map(|l| l.strip_prefix('\t'))
        .collect();
    let all_staged = !refused.is_empty()
        && refused
            .iter()
            .all(|p| staged_paths.contains(p) && removing(p));
    all_staged.then(|| {
        format!(
            "git sets out to drop the change staged to {} (and dies on a permission); git-par refuses",
            refused.join(", ")
        )
    })
}

/// Both refused: the reason when the paths git-par lists beyond git's are all changes staged
/// under a directory git would drop (git's refusal is for something else).
fn also_staged((git_out, par_out): (&Output, &Output), staged_paths: &[&str]) -> Option<String> {
    let git_err = String::from_utf8_lossy(&git_out.stderr).into_owned();
    let par_err = String::from_utf8_lossy(&par_out.stderr).into_owned();
    let extra: Vec<&str> = par_err
        .lines()
        .filter(|l| !git_err.lines().any(|g| g == *l))
        .filter_map(|l| l.strip_prefix('\t'))
        .collect();
    let all_staged = !extra.is_empty() && extra.iter().all(|p| staged_paths.contains(p));
    all_staged.then(|| {
        format!(
            "git refuses for something else; git-par also names the staged {}",
            extra.join(", ")
        )
    })
}

/// git made the switch: the reason when a change staged before (an object of stage 0 that
/// `HEAD` did not have there) is in neither git's index nor git's `HEAD` after it.
fn dropped_by_git(
    before: &Before,
    in_head: &HashSet<(String, String)>,
    git_index: &str,
    git_tree: &str,
) -> Option<String> {
    for line in before.index.lines() {
        let Some((meta, path)) = line.split_once('\t') else {
            continue;
        };
        let mut fields = meta.split(' ');
        let (Some(_mode), Some(id), Some("0")) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let path = path.split(" flags=").next().unwrap_or(path);
        let staged = !in_head.contains(&(path.to_owned(), id.to_owned()));
        if staged && !git_index.contains(id) && !git_tree.contains(id) {
            return Some(format!(
                "git drops the change staged to {path}; git-par refuses the switch and changes nothing"
            ));
        }
    }
    None
}

/// git-par refuses to replace directories holding untracked files ("would lose untracked files
/// in them"), and git, with a sparse checkout on, goes ahead and deletes such files: every
/// directory git-par names held an untracked file that git's work tree no longer has. Returns
/// the reason then.
fn lost_by_git(
    before: &Before,
    (git, git_dir): (&Git<'_>, &Path),
    (git_out, par_err): (&Output, &str),
) -> Result<Option<String>, String> {
    let Some((_, list)) = par_err.split_once("would lose untracked files in them:\n") else {
        return Ok(None);
    };
    let sparse = git
        .run(git_dir, &["config", "--bool", "core.sparseCheckout"])?
        .text();
    if !git_out.ok() || sparse.trim() != "true" {
        return Ok(None);
    }
    let dirs: Vec<&str> = list.lines().map_while(|l| l.strip_prefix('\t')).collect();
    let tracked: std::collections::HashSet<&str> = before
        .index
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(_, p)| p.split(" flags=").next().unwrap_or(p))
        .collect();
    let git_tree = observe::work_tree(git_dir)?;
    let lost_in = |dir: &str| {
        let prefix = format!("{dir}/");
        before.tree.iter().any(|(path, item)| {
            path.starts_with(&prefix)
                && matches!(item, observe::Item::File(..))
                && !tracked.contains(path.as_str())
                && git_tree.get(path) != Some(item)
        })
    };
    Ok((!dirs.is_empty() && dirs.iter().all(|d| lost_in(d))).then(|| {
        format!(
            "git replaces {} and deletes the untracked files in it; git-par refuses, as git does without a sparse checkout",
            dirs.join(", ")
        )
    }))
}

/// The other side of a directory/file conflict in the index: git keeps an entry staged below a
/// path `P` that the target makes a file (left out of the work tree by the sparse patterns),
/// and leaves the target's `P` out of its index without a word; git-par refuses, naming the
/// staged entry. Returns the reason when the paths git-par names are such entries.
fn left_out(git_index: &str, git_tree: &str, par_stderr: &[u8]) -> Option<String> {
    let paths = |text: &str| -> std::collections::HashSet<String> {
        text.lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(_, p)| p.split(" flags=").next().unwrap_or(p).to_owned())
            .collect()
    };
    let (indexed, in_tree) = (paths(git_index), paths(git_tree));
    let par_err = String::from_utf8_lossy(par_stderr);
    let named: Vec<&str> = par_err
        .lines()
        .filter_map(|l| l.strip_prefix('\t'))
        .collect();
    let left: Vec<String> = named
        .iter()
        .filter_map(|p| {
            p.match_indices('/')
                .map(|(end, _)| &p[..end])
                .find(|dir| in_tree.contains(*dir) && !indexed.contains(*dir))
                .map(|dir| format!("{dir} (for {p})"))
        })
        .collect();
    (!named.is_empty() && left.len() == named.len()).then(|| {
        format!(
            "git leaves the target's {} out of its index to keep what is staged below; git-par refuses",
            left.join(", ")
        )
    })
}
