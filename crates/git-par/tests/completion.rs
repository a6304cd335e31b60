//! `git par completion bash|zsh|fish`: the scripts clap_complete renders, and for bash the
//! `_git_par` hook that git's own completion calls for `git par ...`, tried in a real bash with
//! git's completion loaded.

use std::process::Command;

const GIT_PAR: &str = env!("CARGO_BIN_EXE_git-par");

/// Where Debian's git package installs git's bash completion.
const GIT_BASH_COMPLETION: &str = "/usr/share/bash-completion/completions/git";

/// `git-par completion <shell>`'s output; the command must succeed.
fn script(shell: &str) -> String {
    let out = Command::new(GIT_PAR)
        .args(["completion", shell])
        .output()
        .expect("run git-par completion");
    assert!(
        out.status.success(),
        "git-par completion {shell} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the script is UTF-8")
}

/// What bash completes for the command line `line` (the cursor at its end) with git's completion
/// and git-par's script loaded: COMPREPLY, one word a line.
fn complete_in_bash(line: &str) -> String {
    let dir = tempfile::tempdir().expect("temporary directory");
    let script_path = dir.path().join("git-par.bash");
    std::fs::write(&script_path, script("bash")).expect("write the script");
    let program = format!(
        r#"source {GIT_BASH_COMPLETION}
source {script}
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
__git_wrap__git_main git "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        script = script_path.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .current_dir(dir.path())
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_completes_git_par_commands_through_gits_completion() {
    assert!(
        std::path::Path::new(GIT_BASH_COMPLETION).exists(),
        "git's bash completion ({GIT_BASH_COMPLETION}) is missing: Debian's git package installs it"
    );
    let words = complete_in_bash("git par sw");
    assert!(
        words.lines().any(|w| w.trim() == "switch"),
        "`git par sw` does not offer switch: {words:?}"
    );
    let words = complete_in_bash("git par switch --det");
    assert!(
        words.lines().any(|w| w.trim() == "--detach"),
        "`git par switch --det` does not offer --detach: {words:?}"
    );
    let words = complete_in_bash("git par completion ");
    for shell in ["bash", "zsh", "fish"] {
        assert!(
            words.lines().any(|w| w.trim() == shell),
            "`git par completion ` does not offer {shell}: {words:?}"
        );
    }
}

#[test]
fn bash_script_completes_git_par_itself() {
    let text = script("bash");
    assert!(
        text.contains("_git__par()"),
        "no completion function for git-par"
    );
    assert!(text.contains("_git_par ()"), "no hook for git's completion");
}

#[test]
fn zsh_and_fish_scripts_name_the_commands() {
    for shell in ["zsh", "fish"] {
        let text = script(shell);
        assert!(!text.is_empty(), "{shell}: empty script");
        for command in ["switch", "checkout", "restore", "reset", "clone", "status"] {
            assert!(text.contains(command), "{shell}: no {command}");
        }
    }
}

#[test]
fn completion_is_git_pars_own_and_says_how_to_install() {
    let out = Command::new(GIT_PAR)
        .args(["completion", "--help"])
        .output()
        .expect("run git-par completion --help");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        help.contains("eval \"$(git par completion bash)\""),
        "{help}"
    );
    assert!(help.contains("_git-par"), "{help}");
    assert!(help.contains("git-par.fish"), "{help}");
}
