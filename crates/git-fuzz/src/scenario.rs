//! A scenario: a script that builds a repository and a work tree with plain git commands, the
//! one command to run there with git and with git-par, and where to look afterwards. Generated
//! from a seed ([`crate::generate`]) or read from a file (a kept case), in one text format: the
//! script, with the rest in `#@ key: value` comment lines, so that the file is itself the
//! reproduction anyone can run.

use crate::shell;

/// The environment of every process of a scenario: no user or system configuration, fixed
/// identities and dates (so that both copies, and every rerun, make the same commit ids), and
/// no editor.
pub const ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("LC_ALL", "C"),
    ("TZ", "UTC"),
    ("GIT_AUTHOR_NAME", "A U Thor"),
    ("GIT_AUTHOR_EMAIL", "author@example.com"),
    ("GIT_COMMITTER_NAME", "C O Mitter"),
    ("GIT_COMMITTER_EMAIL", "committer@example.com"),
    ("GIT_AUTHOR_DATE", "1700000000 +0000"),
    ("GIT_COMMITTER_DATE", "1700000000 +0000"),
    ("GIT_EDITOR", "true"),
    ("GIT_MERGE_AUTOEDIT", "no"),
    ("GIT_CONFIG_COUNT", "1"),
    ("GIT_CONFIG_KEY_0", "init.defaultBranch"),
    ("GIT_CONFIG_VALUE_0", "main"),
];

/// One scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// What it is called in reports: `seed N`, or the file it was read from.
    pub name: String,
    /// The `sh` script that builds the scenario in an empty directory (without the header that
    /// sets [`ENV`], which [`Scenario::render`] adds).
    pub script: String,
    /// The command's arguments after `git`.
    pub command: Vec<String>,
    /// Where the command runs, relative to the scenario's directory.
    pub cwd: String,
    /// The work trees compared afterwards, relative to the scenario's directory.
    pub observe: Vec<String>,
    /// Whether git-par runs as `git` (its transparent mode) rather than as `git-par ARGS`.
    pub transparent: bool,
    /// `NAME=VALUE` configuration given to git-par only (its worker count, its threshold).
    pub par_config: Vec<String>,
    /// Whether both commands run without the permission bypass of root (`setpriv`), so that
    /// a read-only directory of the scenario stops a write as it stops a user's.
    pub unprivileged: bool,
}

impl Scenario {
    /// The scenario as a file: a script that rebuilds it, with the command in its comments.
    pub fn render(&self) -> String {
        let mut out = String::from("#!/bin/sh\n");
        out.push_str(&format!("# git-fuzz scenario: {}\n", self.name));
        out.push_str(
            "# Run in an empty directory: it builds the repository with plain git. Then, in\n",
        );
        out.push_str(
            "# the directory `cwd` names, run `git` with the command's arguments (git), or\n",
        );
        out.push_str(
            "# git-par the same way (`unprivileged`: through `setpriv --inh-caps=-dac_override\n",
        );
        out.push_str(
            "# --bounding-set=-dac_override --`); `git-fuzz replay FILE` does both and compares.\n",
        );
        out.push_str(&format!("#@ command: {}\n", shell::join(&self.command)));
        out.push_str(&format!("#@ cwd: {}\n", self.cwd));
        out.push_str(&format!("#@ observe: {}\n", self.observe.join(" ")));
        out.push_str(&format!(
            "#@ git-par: {}\n",
            if self.transparent { "as-git" } else { "direct" }
        ));
        if !self.par_config.is_empty() {
            out.push_str(&format!(
                "#@ git-par-config: {}\n",
                self.par_config.join(" ")
            ));
        }
        if self.unprivileged {
            out.push_str("#@ unprivileged: yes\n");
        }
        out.push_str("set -e\n");
        for (name, value) in ENV {
            out.push_str(&format!("export {name}={}\n", shell::quote(value)));
        }
        out.push_str("export HOME=\"$PWD\"\n");
        out.push_str(&self.script);
        out
    }

    /// Reads a scenario file written by [`Scenario::render`] (or by hand in its format).
    pub fn parse(name: &str, text: &str) -> Result<Scenario, String> {
        let mut scenario = Scenario {
            name: name.to_owned(),
            script: String::new(),
            command: Vec::new(),
            cwd: "repo".to_owned(),
            observe: vec!["repo".to_owned()],
            transparent: false,
            par_config: Vec::new(),
            unprivileged: false,
        };
        let mut header = true;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("#@ ") {
                let (key, value) = rest
                    .split_once(':')
                    .ok_or_else(|| format!("{name}: no ':' in `{line}`"))?;
                let value = value.trim();
                match key {
                    "command" => scenario.command = shell::split(value)?,
                    "cwd" => scenario.cwd = value.to_owned(),
                    "observe" => {
                        scenario.observe = value.split_whitespace().map(str::to_owned).collect()
                    }
                    "git-par" => scenario.transparent = value == "as-git",
                    "git-par-config" => {
                        scenario.par_config = value.split_whitespace().map(str::to_owned).collect()
                    }
                    "unprivileged" => scenario.unprivileged = value == "yes",
                    _ => return Err(format!("{name}: unknown key `{key}`")),
                }
                continue;
            }
            // The rendered header (shebang, comments, `set -e`, the environment) is not part of
            // the script proper: render adds it again.
            let is_header = line.starts_with('#')
                || line == "set -e"
                || line.starts_with("export ")
                || line.is_empty();
            if header && is_header {
                continue;
            }
            header = false;
            scenario.script.push_str(line);
            scenario.script.push('\n');
        }
        if scenario.command.is_empty() {
            return Err(format!("{name}: no `#@ command:` line"));
        }
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_scenario_parses_back() {
        let scenario = Scenario {
            name: "x".into(),
            script: "git init -q -b main repo\ncd repo\nprintf 'a\\n' >f\n".into(),
            command: vec!["switch".into(), "-m".into(), "it's".into()],
            cwd: "repo".into(),
            observe: vec!["repo".into(), "wt".into()],
            transparent: true,
            par_config: vec!["checkout.workers=2".into()],
            unprivileged: true,
        };
        assert_eq!(Scenario::parse("x", &scenario.render()).unwrap(), scenario);
    }
}
