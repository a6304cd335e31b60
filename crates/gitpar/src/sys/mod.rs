//! The ground floor: what every layer of the engine may use and that uses nothing of the
//! engine — the CPUs and environment switches, the memory budget and the memory given back,
//! the context a run shares with its caller, the phase timings, and the real git.

pub(crate) mod budget;
pub mod context;
pub mod cpus;
pub(crate) mod env;
pub mod git;
pub(crate) mod memory;
pub mod phase;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
