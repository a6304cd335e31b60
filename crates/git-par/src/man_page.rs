//! git-par's manual page, rendered by clap_mangen from its own command line ([`Cli`]): the top
//! command's sections, then one for each command with its synopsis, description and options.
//! `docs/git-par.1` holds it (a test keeps it current); installed as `man1/git-par.1`, it is
//! what `git par --help` shows, since git answers `--help` with `man git-par`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;
use crate::exit::fatal;

/// The page in roff: the top command's sections, then one for each command (`GIT PAR SWITCH`,
/// `GIT PAR WORKTREE ADD`, ...), whose own sections become subsections.
pub(crate) fn render() -> std::io::Result<Vec<u8>> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    // clap_mangen's `render` without its list of commands, which names a page of its own for
    // each (`git-par-switch(1)`): their sections follow on this page instead.
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    for sub in commands(&cmd) {
        command_section(sub, &mut out)?;
    }
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// The commands to document, depth first: every visible subcommand but `help`.
fn commands(cmd: &clap::Command) -> Vec<&clap::Command> {
    let mut all = Vec::new();
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        all.push(sub);
        all.extend(commands(sub));
    }
    all
}

/// One command's section: its name as the heading, then its synopsis, description and options
/// as subsections.
fn command_section(sub: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let name = sub
        .get_bin_name()
        .unwrap_or_else(|| sub.get_name())
        .to_uppercase();
    writeln!(out, ".SH \"{name}\"")?;
    let man = clap_mangen::Man::new(sub.clone());
    let mut parts = Vec::new();
    man.render_synopsis_section(&mut parts)?;
    man.render_description_section(&mut parts)?;
    if sub.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut parts)?;
    }
    let text = String::from_utf8_lossy(&parts).replace("\n.SH ", "\n.SS ");
    let text = text
        .strip_prefix(".SH ")
        .map_or(text.clone(), |t| format!(".SS {t}"));
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

/// Print the page on standard output (`git par manpage`, hidden: the page's source).
pub(crate) fn print() -> Result<(), u8> {
    let page = render().map_err(|e| fatal(format!("could not render the manual page: {e}")))?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&page)
        .and_then(|()| stdout.flush())
        .map_err(|e| fatal(format!("could not write the manual page: {e}")))
}
