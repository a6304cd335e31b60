//! The queue between the writers and the filter threads of a parallel checkout.
//!
//! A writer that meets an entry whose `filter` attribute names a configured driver does not run
//! the filter: it hands the entry over and goes on with the next one, so that no unfiltered
//! entry ever waits for a filter. The filter threads (a few, each with its own filter
//! processes) take the entries in the order they came.
//!
//! The entries are dealt to the threads in turn, one lane per thread, as they come. Thread 0
//! takes from its own lane and from the lanes of threads that have not joined; the others join
//! only once their lane holds a backlog, so that a checkout with a handful of filtered files
//! starts one filter process, as git does, and a long-running filter with an expensive start
//! (git-lfs) is not started many times for little.
//!
//! A thread whose filter works on each request as it gets it takes the oldest entry of any lane
//! once its own is empty (`steal`), so that no thread idles while another has a backlog. A
//! thread whose filter delays its entries (`status=delayed`: git-lfs queues the download and
//! answers at once) does not: the real work happens in the filter, later, and a filter that
//! answers faster (it started first) would otherwise take most of them and do their downloads
//! one after the other while the other filter idles. (A clone of 300 LFS files through two
//! git-lfs processes, taking as they came: splits from 61/239 to 239/61, the larger share the
//! checkout's critical path.)

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Jobs waiting (in all lanes) before a second (third...) filter thread joins.
const BACKLOG: usize = 16;

/// How long a waiting filter thread sleeps before it looks at the interrupt flag again.
const TICK: Duration = Duration::from_millis(50);

/// A queue of `T` fed by producers that each hold a [`Producer`], drained by a fixed number of
/// consumer threads ([`Queue::lanes`]).
pub(crate) struct Queue<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

struct State<T> {
    /// One lane per consumer thread: the jobs dealt to it, with their arrival number.
    lanes: Vec<VecDeque<(usize, T)>>,
    /// Which consumers have joined (thread 0 from the start): a lane whose thread has not is
    /// drained by the others.
    joined: Vec<bool>,
    /// Jobs pushed so far (the next job's arrival number).
    pushed: usize,
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
    /// An empty queue with one consumer and no producer yet.
    pub(crate) fn new() -> Self {
        Queue {
            state: Mutex::new(State {
                lanes: vec![VecDeque::new()],
                joined: vec![true],
                pushed: 0,
                producers: 0,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Set the number of consumer threads (at least one), before anything is pushed.
    pub(crate) fn lanes(&self, consumers: usize) {
        let mut state = self.lock();
        debug_assert_eq!(state.pushed, 0, "lanes are set before the first push");
        let n = consumers.max(1);
        state.lanes = (0..n).map(|_| VecDeque::new()).collect();
        state.joined = (0..n).map(|i| i == 0).collect();
    }

    /// A new producer's handle: the queue is not done while it is held. Take them all before
    /// any consumer starts.
    pub(crate) fn producer(&self) -> Producer<'_, T> {
        self.lock().producers += 1;
        Producer { queue: self }
    }

    /// Add `job` at the end of the next lane in turn.
    pub(crate) fn push(&self, job: T) {
        let mut state = self.lock();
        let seq = state.pushed;
        state.pushed += 1;
        let lane = seq % state.lanes.len();
        state.lanes[lane].push_back((seq, job));
        drop(state);
        self.ready.notify_all();
    }

    /// The next job for consumer `index`, waiting for one; `None` once every producer is done
    /// and nothing is left that this consumer may take, or when `stop` says so. A consumer takes
    /// the oldest job of its own lane and of the lanes of consumers that have not joined, and
    /// with `steal` of any lane. A consumer other than the first joins once its lane holds its
    /// share of a backlog.
    pub(crate) fn pop(&self, index: usize, steal: bool, stop: impl Fn() -> bool) -> Option<T> {
        let mut state = self.lock();
        let n = state.lanes.len();
        let index = index.min(n - 1);
        loop {
            if stop() {
                return None;
            }
            if !state.joined[index] && state.lanes[index].len() >= (BACKLOG / n).max(1) {
                state.joined[index] = true;
            }
            if state.joined[index] {
                let mine = |lane: usize| lane == index || steal || !state.joined[lane];
                let oldest = (0..n)
                    .filter(|&lane| mine(lane))
                    .filter_map(|lane| state.lanes[lane].front().map(|(seq, _)| (*seq, lane)))
                    .min();
                if let Some((_, lane)) = oldest {
                    return state.lanes[lane].pop_front().map(|(_, job)| job);
                }
            }
            if state.producers == 0 {
                // Nothing more will come: what this consumer may take is done, or (not joined)
                // what is left in its lane is too little for it to join, and the first
                // consumer drains it.
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
        q.lanes(2);
        let p = q.producer();
        q.push(1);
        q.push(2);
        drop(p);
        // A second consumer that has not joined leaves a small backlog to the first.
        assert_eq!(q.pop(1, true, || false), None);
        assert_eq!(q.pop(0, false, || false), Some(1));
        assert_eq!(q.pop(0, false, || false), Some(2));
        assert_eq!(q.pop(0, false, || false), None);
    }

    #[test]
    fn a_backlog_lets_other_consumers_join_with_their_share() {
        let q = Queue::new();
        q.lanes(2);
        let p = q.producer();
        for i in 0..BACKLOG {
            q.push(i);
        }
        // Joined, consumer 1 takes its lane (the odd ones); consumer 0, not stealing, its own.
        assert_eq!(q.pop(1, false, || false), Some(1));
        assert_eq!(q.pop(1, false, || false), Some(3));
        assert_eq!(q.pop(0, false, || false), Some(0));
        drop(p);
        let mut rest0 = Vec::new();
        while let Some(job) = q.pop(0, false, || false) {
            rest0.push(job);
        }
        assert_eq!(rest0, (2..BACKLOG).step_by(2).collect::<Vec<_>>());
        // Consumer 0 left consumer 1's lane alone; stealing, it takes the oldest of any lane.
        assert_eq!(q.pop(0, true, || false), Some(5));
        assert_eq!(q.pop(1, false, || false), Some(7));
        assert_eq!(q.pop(2, false, || true), None);
    }
}
