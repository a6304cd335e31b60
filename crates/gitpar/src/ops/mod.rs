//! The operations: each one a command's whole job on a work tree and its index, built on the
//! layers below (plan, objects, writers, refresh). A full checkout ([`checkout`]), a branch
//! switch ([`switch`]), `reset --hard` ([`reset`]), `restore` and `checkout -- paths`
//! ([`restore`]), the blob merges of `-m` ([`merge`]) and a merge's fast-forward
//! ([`fast_forward`]).

pub mod checkout;
pub mod fast_forward;
pub mod merge;
pub mod reset;
pub mod restore;
pub mod switch;
