//! One memory budget for every byte in flight, however many workers there are.
//!
//! Git's parallel checkout gives every worker process its own inflated objects, so memory grows
//! with the worker count. Here a worker asks the budget for a blob's size before it inflates it
//! and gives it back when the file is written: the total stays under the budget whatever `N` is.

use std::sync::{Condvar, Mutex};

/// A counting semaphore over bytes.
#[derive(Debug)]
pub struct Budget {
    capacity: u64,
    used: Mutex<State>,
    freed: Condvar,
}

/// The bytes held and the number of threads waiting for some; the waiter count lets a release
/// skip the wake-up system call in the common case where nobody waits.
#[derive(Debug, Default)]
struct State {
    used: u64,
    waiting: usize,
}

/// Bytes held from a [`Budget`]; they return to it when this is dropped, so an early return or a
/// panic in a worker cannot leak budget and stall the others.
#[derive(Debug)]
pub struct Grant<'a> {
    budget: &'a Budget,
    bytes: u64,
}

impl Budget {
    /// A budget of `capacity` bytes (at least one byte, so that every request can be served).
    pub fn new(capacity: u64) -> Self {
        Budget {
            capacity: capacity.max(1),
            used: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    /// Block until `bytes` can be held, then hold them.
    ///
    /// A request larger than the whole budget is clamped to the capacity: it waits until nothing
    /// else is in flight and then runs alone, which is the most a bounded budget can do for it.
    pub fn acquire(&self, bytes: u64) -> Grant<'_> {
        let bytes = bytes.min(self.capacity);
        let mut state = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while state.used + bytes > self.capacity {
            state.waiting += 1;
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.waiting -= 1;
        }
        state.used += bytes;
        Grant {
            budget: self,
            bytes,
        }
    }

    /// Bytes currently held; for tests.
    #[cfg(test)]
    pub fn in_use(&self) -> u64 {
        self.used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .used
    }
}

impl Drop for Grant<'_> {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut state = self
            .budget
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.used -= self.bytes;
        if state.waiting > 0 {
            self.budget.freed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn grants_return_their_bytes_on_drop() {
        let budget = Budget::new(100);
        let a = budget.acquire(60);
        let b = budget.acquire(40);
        assert_eq!(budget.in_use(), 100);
        drop(a);
        assert_eq!(budget.in_use(), 40);
        drop(b);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn oversized_requests_are_clamped_to_the_capacity() {
        let budget = Budget::new(10);
        let g = budget.acquire(1_000);
        assert_eq!(budget.in_use(), 10);
        drop(g);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn concurrent_holders_never_exceed_the_capacity() {
        let budget = Budget::new(100);
        let peak = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (budget, peak) = (&budget, &peak);
                s.spawn(move || {
                    for i in 0..200u64 {
                        let _g = budget.acquire(10 + (t * 7 + i) % 50);
                        peak.fetch_max(budget.in_use(), Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 100);
        assert_eq!(budget.in_use(), 0);
    }
}
