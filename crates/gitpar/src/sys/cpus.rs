//! The machine's CPUs, as git counts them: the ground of every thread count.

/// The number of CPUs, as git's `online_cpus()` counts them.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}
