//! A deterministic event queue: earliest time first, and among events at the
//! same instant, the one scheduled first runs first. With seeded RNG streams
//! this makes a run a pure function of its scenario and seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use tcran_core::Instant;

struct Entry<E> {
    at: Instant,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so the max-heap pops the earliest `(at, seq)`.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// Pending events ordered by `(time, insertion sequence)`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> std::fmt::Debug for EventQueue<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventQueue")
            .field("pending", &self.heap.len())
            .finish()
    }
}

impl<E> EventQueue<E> {
    pub fn schedule(&mut self, at: Instant, event: E) {
        self.heap.push(Entry {
            at,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.heap.pop().map(|e| (e.at, e.event))
    }
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| e.at)
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pops_in_time_then_insertion_order(times in proptest::collection::vec(0u64..20, 0..200)) {
            let mut q = EventQueue::default();
            for (i, t) in times.iter().enumerate() {
                q.schedule(Instant::from_nanos(*t), i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop()).map(|(t, i)| (t.as_nanos(), i)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
