//! `git-par`: the command-line front of the git-par engine, run as `git par <command>`.
//!
//! The binary is thin: it parses arguments, resolves configuration, shows progress the way git
//! does and turns the library's errors into git's messages and exit codes. The work happens in
//! the `gitpar` library.

mod bench;
mod branches;
mod checkout;
mod checkout_args;
mod clean;
mod cli;
mod clone;
mod completion;
mod config_env;
mod engine;
mod exit;
mod git;
mod gitopts;
mod hooks;
mod identity;
mod interrupt;
mod man_page;
mod merge;
mod names;
mod option_groups;
mod patch;
mod paths;
mod pathspec_file;
mod platform;
mod progress;
mod pull;
mod quote;
mod repo;
mod report;
mod reset;
mod restore;
mod revision;
mod sparse_checkout;
mod startup;
mod state;
mod status;
mod switch;
mod switching;
mod trace2;
mod transparent;
mod unborn;
mod worktree;
mod worktree_remove;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, WorktreeCommand};

fn main() -> ExitCode {
    // The clock of GIT_PAR_TRACE_PERF starts here.
    gitpar::sys::phase::mark("main");
    let argv = match startup::command_line() {
        Ok(argv) => argv,
        Err(code) => return ExitCode::from(code),
    };
    let cli = Cli::parse_from(argv);
    interrupt::install();
    hooks::run_post_index_change();
    startup::warm_time_zone(&cli.command);
    let overrides = startup::config_overrides(&cli.config);
    let result = match cli.command {
        Command::Clone(args) => clone::clone(args.args, &overrides),
        Command::Worktree(WorktreeCommand::Add(args)) => worktree::add(args.args, &overrides),
        Command::Worktree(WorktreeCommand::Remove(args)) => {
            worktree_remove::remove(args.args, &overrides)
        }
        Command::Switch(args) => switch::switch(args, &overrides),
        Command::Checkout(args) => checkout::checkout(args, &overrides),
        Command::Reset(args) => reset::reset(args, &overrides),
        Command::Restore(args) => restore::restore(args, &overrides),
        Command::Clean(args) => clean::clean(args.args, &overrides),
        Command::Status(args) => status::status(args.args, &overrides),
        Command::Refresh(args) => status::refresh(args.quiet, &overrides),
        Command::SparseCheckout(args) => sparse_checkout::run(args.args, &overrides),
        Command::Merge(args) => merge::merge(args.args, &overrides),
        Command::Pull(args) => pull::pull(args.args, &overrides),
        Command::Bench(args) => bench::run(args),
        Command::Shim { dir } => transparent::shim(&dir),
        Command::Completion { shell } => completion::print(shell),
        Command::Manpage => man_page::print(),
    };
    // git waits for its long-running filters when it exits.
    gitpar::finish_filters();
    gitpar::sys::phase::mark("done");
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => ExitCode::from(code),
    }
}
