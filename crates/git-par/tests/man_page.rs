//! `docs/git-par.1` is the manual page clap_mangen renders from git-par's command line (`git par
//! manpage`, hidden): this test renders it and compares, so that the page follows every change
//! to the commands and their options. `GITPAR_UPDATE_MAN=1` rewrites the file instead.

use std::path::PathBuf;
use std::process::Command;

const GIT_PAR: &str = env!("CARGO_BIN_EXE_git-par");

/// The checked-in page, at the top of the workspace.
fn page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/git-par.1")
}

/// The page as the binary renders it now.
fn rendered() -> Vec<u8> {
    let out = Command::new(GIT_PAR)
        .arg("manpage")
        .output()
        .expect("run git-par manpage");
    assert!(
        out.status.success(),
        "git-par manpage failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn checked_in_page_is_current() {
    let page = rendered();
    let path = page_path();
    if std::env::var_os("GITPAR_UPDATE_MAN").is_some() {
        std::fs::write(&path, &page).expect("write docs/git-par.1");
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == page,
        "docs/git-par.1 is not the page git-par's command line renders; regenerate it with\n\
         \tGITPAR_UPDATE_MAN=1 cargo test -p git-par --test man_page\n\
         and commit the result"
    );
}

#[test]
fn rendering_is_deterministic_and_documents_every_command() {
    let page = rendered();
    assert_eq!(page, rendered(), "two renderings differ");
    let text = String::from_utf8(page).expect("the page is UTF-8");
    assert!(text.starts_with(".ie \\n(.g .ds Aq \\(aq") || text.contains(".TH git-par 1"));
    for command in [
        "GIT PAR CLONE",
        "GIT PAR WORKTREE ADD",
        "GIT PAR SWITCH",
        "GIT PAR CHECKOUT",
        "GIT PAR RESTORE",
        "GIT PAR RESET",
        "GIT PAR STATUS",
        "GIT PAR COMPLETION",
    ] {
        assert!(
            text.contains(&format!(".SH \"{command}\"")),
            "no section for {command}"
        );
    }
    assert!(
        !text.contains("MANPAGE"),
        "the hidden command is documented"
    );
}
