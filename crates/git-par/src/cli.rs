//! The command line as clap reads it: git-par's commands and their options, and the help of the
//! commands whose arguments go to git.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::{bench, checkout, reset, restore, switch};

#[derive(Parser, Debug)]
#[command(
    name = "git-par",
    bin_name = "git par",
    version,
    about = "Parallel checkout for git: clone and worktree add, written by threads under one memory budget",
    propagate_version = true
)]
pub(crate) struct Cli {
    /// Set a configuration value for this run, like `git -c name=value`.
    #[arg(short = 'c', value_name = "NAME=VALUE", global = false, action = clap::ArgAction::Append)]
    pub(crate) config: Vec<String>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Clone with git (`git clone --no-checkout`, every option of git's), then check out in
    /// parallel.
    #[command(
        override_usage = "git par [-c checkout.workers=N] clone [git clone's options] <repository> [<directory>]",
        long_about = "Clone a repository: `git clone --no-checkout` with these arguments (every \
                      option and every kind of URL git clone takes; -j/--jobs is git's, for \
                      submodules), then git-par checks HEAD out in parallel and runs post-checkout \
                      and, with --recurse-submodules, `git submodule update`. git-par's writer \
                      threads: -c checkout.workers=N (before `clone`) or configuration."
    )]
    Clone(PassThrough),
    /// Manage linked work trees.
    #[command(subcommand)]
    Worktree(WorktreeCommand),
    /// Switch branches, updating the work tree in parallel (like `git switch`).
    Switch(switch::SwitchArgs),
    /// Switch branches or detach HEAD, updating the work tree in parallel (like `git checkout <rev>`).
    Checkout(checkout::CheckoutCmdArgs),
    /// Restore work tree files (and with --staged, index entries) from the index or a tree.
    Restore(restore::RestoreArgs),
    /// Reset HEAD, index and work tree (`--hard` only), writing in parallel.
    Reset(reset::ResetArgs),
    /// Show the working tree status (like `git status`), the work tree checked in parallel.
    #[command(
        override_usage = "git par status [-s | --short | --porcelain[=v1|v2] | --long] [-b] [-z] [-u[<mode>]] [--ignored[=<mode>]] [--] [<pathspec>...]"
    )]
    Status(PassThrough),
    /// Remove untracked files (like `git clean`): git chooses them, worker threads remove them.
    #[command(
        override_usage = "git par clean [-q] [-f] [-d] [-x | -X] [-e <pattern>] [--] [<pathspec>...]",
        long_about = "Remove untracked files from the work tree, as `git clean` does: git decides \
                      what goes (its dry run of the same arguments: untracked or ignored files, \
                      -e patterns, pathspecs, nested repositories kept without -f -f), then \
                      worker threads remove it, never following a symbolic link, and git's lines \
                      are printed (Removing ..., unless -q). A dry run (-n), -i, a call without \
                      -f and anything git-par cannot read are run by git itself."
    )]
    Clean(PassThrough),
    /// Refresh the index's stat data in parallel (like `git update-index --refresh`).
    Refresh(RefreshArgs),
    /// Change which files a sparse checkout has (like `git sparse-checkout`), the work tree
    /// updated in parallel.
    #[command(
        name = "sparse-checkout",
        override_usage = "git par sparse-checkout (init | list | set | add | reapply | disable | check-rules) [<options>]"
    )]
    SparseCheckout(PassThrough),
    /// Measure git-par against git: interleaved runs on a built-in synthetic repository (or yours).
    Bench(bench::BenchArgs),
    /// Fast-forward or confirm "Already up to date." with a parallel work tree update (like
    /// `git merge`); every other merge is git's.
    #[command(override_usage = "git par merge [git merge's options] [<commit>...]")]
    Merge(PassThrough),
    /// Fetch with git, then fast-forward in parallel (like `git pull`); rebases and real
    /// merges are git's.
    #[command(override_usage = "git par pull [git pull's options] [<repository> [<refspec>...]]")]
    Pull(PassThrough),
    /// Print a completion script for bash, zsh or fish (for `git par ...` and `git-par ...`).
    #[command(long_about = COMPLETION_HELP)]
    Completion {
        /// The shell to complete in.
        shell: Shell,
    },
    /// Print git-par's manual page (roff), the one docs/git-par.1 holds.
    #[command(hide = true)]
    Manpage,
    /// Make git-par stand in for git: a link named `git` in DIR, and the PATH line to use.
    #[command(
        long_about = "Make a link named `git` to git-par in DIR (created if missing) and print the \
                      line that puts DIR first on PATH (on Windows: `git.exe`, a hard link or a \
                      copy, and a line for each shell). Invoked as `git`, git-par runs the \
                      commands it owns (checkout, switch, restore, reset --hard, clone, worktree \
                      add, worktree remove, status, update-index --refresh) and hands every \
                      other call to the real git ($GIT_PAR_REAL_GIT, else the next git on PATH) \
                      unchanged."
    )]
    Shim {
        /// The directory for the link.
        dir: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum WorktreeCommand {
    /// Create a linked work tree with git (`git worktree add --no-checkout`, every option of
    /// git's), then check it out in parallel.
    #[command(
        override_usage = "git par worktree add [-j N] [--donor PATH] [--[no-]reflink] [git worktree add's options] <path> [<commit-ish>]",
        long_about = "Create a linked work tree: `git worktree add --no-checkout` with these \
                      arguments (every option of `git worktree add`: -b, -B, --detach, --orphan, \
                      --lock [--reason], --track, --guess-remote, -f, -q, --no-checkout), then \
                      git-par checks the new HEAD out in parallel and runs post-checkout. \
                      -j N sets git-par's writer threads (else checkout.workers). The clean \
                      files of a donor work tree (--donor PATH, else the one the command runs \
                      in) are cloned instead of written where the filesystem can (reflinks on \
                      XFS, btrfs); --no-reflink writes every file."
    )]
    Add(PassThrough),
    /// Remove a linked work tree (like `git worktree remove`): git's checks, the local-change
    /// check by the parallel status, the files deleted in parallel.
    #[command(
        override_usage = "git par worktree remove [-f | --force [-f]] <worktree>",
        long_about = "Remove a linked work tree, as `git worktree remove` does: refused for the \
                      main work tree, a locked one (unless -f -f), one with submodules or with \
                      what `git status --porcelain` would list (modified, staged or untracked \
                      files; ignored files go with the rest) unless -f; a work tree whose \
                      directory is gone only loses its registration. The check runs the \
                      parallel status; the work tree is deleted by worker threads, never \
                      following a symbolic link, its .git file last; then its administrative \
                      directory goes. -f/--force, given twice for a locked work tree."
    )]
    Remove(PassThrough),
}

/// How to install each shell's completion: `git par completion --help`.
const COMPLETION_HELP: &str = "Print a completion script for git-par's commands and options.

bash: put this line in ~/.bashrc (git's own completion then completes `git par ...` too):
    eval \"$(git par completion bash)\"

zsh: write the script to a directory on fpath, before compinit runs in ~/.zshrc:
    git par completion zsh > ~/.zfunc/_git-par
    (and in ~/.zshrc: fpath=(~/.zfunc $fpath); autoload -Uz compinit; compinit)

fish: write the script where fish looks for completions:
    git par completion fish > ~/.config/fish/completions/git-par.fish

The manual page (for `git par --help`, which runs `man git-par`):
    install -Dm644 docs/git-par.1 ~/.local/share/man/man1/git-par.1";

/// The shells `git par completion` writes a script for.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shell {
    /// GNU bash, hooked into git's own completion.
    Bash,
    /// zsh.
    Zsh,
    /// fish.
    Fish,
}

/// `git par refresh`'s options.
#[derive(Args, Debug)]
pub(crate) struct RefreshArgs {
    /// Do not list the changed paths nor fail because of them (`update-index -q`).
    #[arg(short = 'q', long = "quiet")]
    pub(crate) quiet: bool,
}

/// The arguments of a command git-par hands to git first (`clone`, `worktree add`), or reads as
/// git's parse-options does (`worktree remove`): every option git takes, read by `gitopts` as git
/// reads them and passed on unchanged.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub(crate) struct PassThrough {
    /// git's options and arguments, as for git.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "ARGS"
    )]
    pub(crate) args: Vec<OsString>,
}

/// Print the help of the subcommand at `path` (`["worktree", "add"]`): the commands whose
/// arguments go to git read `-h`/`--help` themselves.
pub(crate) fn print_help(path: &[&str]) {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let mut sub = &mut cmd;
    for name in path {
        let Some(next) = sub.find_subcommand_mut(name) else {
            return;
        };
        sub = next;
    }
    let _ = sub.print_long_help();
}
