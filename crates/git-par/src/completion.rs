//! `git par completion <shell>`: completion scripts rendered by clap_complete from git-par's own
//! command line ([`Cli`]), so that they list the commands and options the parser takes. For
//! bash, a `_git_par` function follows, which git's own completion calls for `git par ...`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, Shell};
use crate::exit::fatal;

/// git's bash completion completes `git par ...` with a function named `_git_par`, if there is
/// one: this one hands the words after `par` to clap_complete's `_git__par`, as if `git-par` had
/// been typed. `__git_cmd_idx` is where git's completion found the command (after git's global
/// options); older versions of it do not set it, then `par` is the word after `git`.
const GIT_HOOK: &str = r#"
# `git par ...` in git's own completion: the words after `par`, completed as `git-par ...`.
_git_par ()
{
	local __git_par_at=${__git_cmd_idx:-1}
	local COMP_WORDS=(git-par "${words[@]:__git_par_at+1}")
	local COMP_CWORD=$((cword - __git_par_at))
	local COMP_LINE="${COMP_WORDS[*]}"
	local COMP_POINT=${#COMP_LINE}
	_git__par git-par "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

/// The completion script for `shell`, as `git par completion <shell>` prints it.
pub(crate) fn script(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(generator, &mut cmd, "git-par", &mut out);
    if shell == Shell::Bash {
        // clap_complete names a command's case in the bash script after its usage name (`git
        // par switch`: `git__subcmd__par__subcmd__switch`), and the state that selects it after
        // the script's name (`git-par`: `git__par__subcmd__switch`): one name for both.
        let text = String::from_utf8_lossy(&out).replace("git__subcmd__par", "git__par");
        out = text.into_bytes();
        out.extend_from_slice(GIT_HOOK.as_bytes());
    }
    out
}

/// Print the completion script for `shell` on standard output.
pub(crate) fn print(shell: Shell) -> Result<(), u8> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&script(shell))
        .and_then(|()| stdout.flush())
        .map_err(|e| fatal(format!("could not write the completion script: {e}")))
}
