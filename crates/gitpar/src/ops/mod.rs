//! The operations: each one a command's whole job on a work tree and its index, built on the
//! layers below (plan, objects, writers, refresh). A full checkout ([`checkout`]), the update
//! of a work tree from one tree to another ([`update`], with the empty work tree's shortcut and
//! the submodule recursion inside it), a branch switch ([`switch`]), `reset --hard`
//! ([`reset`]), `restore` and `checkout -- paths` ([`restore`]), the blob merges of `-m`
//! ([`merge`]), a merge's fast-forward ([`fast_forward`]), the donor's ignored files carried
//! into a new work tree ([`carry`]) and the deletion of a linked work tree
//! ([`remove_worktree`]).

/// `.worktreeinclude`: the donor's ignored files (build caches) carried into a new work tree.
pub mod carry;
pub mod checkout;
pub mod fast_forward;
pub mod merge;
pub mod remove_worktree;
pub mod reset;
pub mod restore;
pub mod switch;
pub mod update;
