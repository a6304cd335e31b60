//! The queue between the writers and the filter threads of a parallel checkout.
//!
//! A writer that meets an entry whose `filter` attribute names a configured driver does not run
//! the filter: it hands the entry over and goes on with the next one, so that no unfiltered
//! entry ever waits for a filter. The filter threads (a few, each with its own filter
//! processes) take the entries in the order they came. Thread 0 takes any; the others join
//! only once a backlog builds up (or once they have started their processes), so that a
//! checkout with a handful of filtered files starts one filter process, as git does, and a
//! long-running filter with an expensive start (git-lfs) is not started many times for little.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Jobs waiting before a second (third...) filter thread joins.
const BACKLOG: usize = 16;

/// How long a waiting filter thread sleeps before it looks at the interrupt flag again.
const TICK: Duration = Duration::from_millis(50);

/// A queue of `T` fed by producers that each hold a [`Producer`].
pub(crate) struct Queue<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

struct State<T> {
    jobs: VecDeque<T>,
    /// Producers that may still push; when none is left and the queue is empty, it is done.
    producers: usize,
}

/// Ends one producer's share when dropped (also when its thread panics), so that the filter
/// threads are not left waiting for it.
pub(crate) struct Producer<'q, T> {
    queue: &'q Queue<T>,
}

impl<T> Drop for Producer<'_, T> {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.producers -= 1;
        drop(state);
        self.queue.ready.notify_all();
    }
}

impl<T> Queue<T> {
    /// An empty queue with no producer yet.
    pub(crate) fn new() -> Self {
        Queue {
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                producers: 0,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new producer's handle: the queue is not done while it is held. Take them all before
    /// any consumer starts.
    pub(crate) fn producer(&self) -> Producer<'_, T> {
        self.lock().producers += 1;
        Producer { queue: self }
    }

    /// Add `job` at the end.
    pub(crate) fn push(&self, job: T) {
        self.lock().jobs.push_back(job);
        self.ready.notify_all();
    }

    /// The next job for filter thread `index`, waiting for one; `None` once every producer is
    /// done and the queue is empty, or when `stop` says so. A thread other than the first takes
    /// a job only when `joined` (it already works) or a backlog has built up.
    pub(crate) fn pop(&self, index: usize, joined: bool, stop: impl Fn() -> bool) -> Option<T> {
        let mut state = self.lock();
        loop {
            if stop() {
                return None;
            }
            if index == 0 || joined || state.jobs.len() >= BACKLOG {
                if let Some(job) = state.jobs.pop_front() {
                    return Some(job);
                }
            }
            if state.producers == 0 {
                // Nothing more will come: the queue is empty, or what is left is too little for
                // this thread to join (the first thread drains it).
                return None;
            }
            state = self
                .ready
                .wait_timeout(state, TICK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_in_order_and_ends_when_the_producers_are_done() {
        let q = Queue::new();
        let p = q.producer();
        q.push(1);
        q.push(2);
        drop(p);
        assert_eq!(q.pop(0, false, || false), Some(1));
        // A second thread that has not joined leaves a small backlog to the first.
        assert_eq!(q.pop(1, false, || false), None);
        assert_eq!(q.pop(0, false, || false), Some(2));
        assert_eq!(q.pop(0, false, || false), None);
    }

    #[test]
    fn a_backlog_lets_other_threads_join() {
        let q = Queue::new();
        let _p = q.producer();
        for i in 0..BACKLOG {
            q.push(i);
        }
        assert_eq!(q.pop(1, false, || false), Some(0));
        assert_eq!(q.pop(1, true, || false), Some(1));
        assert_eq!(q.pop(2, false, || true), None);
    }
}
