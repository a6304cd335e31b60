//! What the work tree holds against the index: the parallel refresh of the index's stat data
//! (`refresh`), and what `git status` reports ([`status`]).

pub(crate) mod refresh;
pub mod status;
