//! The repository around the work tree: branches and their remotes, the reference
//! transactions and the hooks that watch them, the state files of a merge or cherry-pick, what
//! git says along the way, the submodules `.gitmodules` names, and the linked work trees
//! registered in the common directory. Nothing here reads the index or writes a work tree.

pub mod branch;
pub mod create_branch;
pub(crate) mod git_dir;
pub mod hooks;
pub mod notice;
pub mod reftx;
pub mod state;
pub(crate) mod submodules;
pub mod worktrees;
