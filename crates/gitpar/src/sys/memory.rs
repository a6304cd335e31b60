//! The memory a run gives back: big values dropped on a thread of their own, freed pages
//! returned to the system, and the lower priority of work that only has to be done by the time
//! the writers are.

/// Drop `value` on a thread of its own: a checkout's plan and blob cache (tens of thousands of
/// paths and buffers to free, the packs to unmap) took 3 ms of tldr's checkout after its files
/// were written, on the sequential end of it where the other CPUs have nothing to do. Dropped
/// here when no thread can be started.
pub(crate) fn drop_apart<T: Send + 'static>(value: T) {
    // A thread that cannot start drops its closure, and `value` with it, here.
    let _ = std::thread::Builder::new()
        .name("git-par drop".into())
        .spawn(move || {
            yield_to_the_others();
            drop(value)
        });
}

/// Give the pages of freed memory back to the system when a run has just freed many small
/// blocks (`entries` of them, about) amid blocks it keeps. glibc returns a heap's free memory
/// only from the top of the heap; the rest stays resident until it is used again. The walk of a
/// million-entry tree frees its parts (80 MiB, in blocks below the mapping threshold) amid the
/// plan's paths, which stay: 35 to 65 MiB of a checkout's peak memory that nothing used again
/// (`malloc_trim` gives back every whole free page in every arena, 13 ms for a million
/// entries). Below [`TRIM_MIN`] entries the memory is small and the call is not worth its time.
pub(crate) fn give_back_freed(entries: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if entries >= TRIM_MIN {
        // SAFETY: malloc_trim only releases free memory of glibc's own heaps.
        unsafe {
            libc::malloc_trim(0);
        }
        crate::sys::phase::mark("freed memory given back");
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = entries;
}

/// The fewest freed blocks for which [`give_back_freed`] trims the heaps.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_MIN: usize = 100_000;

/// Lower the calling thread's priority (nice 10) for work that only has to be done by the time
/// the others are (an index encoded beside the writers, memory freed): the scheduler then gives
/// the CPUs to the threads that decide when the checkout ends, and this one the time they leave.
pub(crate) fn yield_to_the_others() {
    crate::sys::lower_thread_priority();
}
