//! A deterministic event queue: earliest time first, and among events at the
//! same instant, the one scheduled first runs first. With seeded RNG streams
//! this makes a run a pure function of its scenario and seed.
//!
//! # Implementation: a radix heap
//!
//! Simulated time never goes backwards, so the queue is a *monotone*
//! priority queue and a radix heap fits it (Ahuja, Mehlhorn, Orlin and
//! Tarjan, "Faster algorithms for the shortest path problem", 1990), here
//! with base-16 digits: an event at time `t` waits in the bucket of the most
//! significant hexadecimal digit in which `t` differs from `last` (the time
//! of the event popped last) and of `t`'s value of that digit; bucket 0
//! holds the events due at `last` itself. Scheduling appends to a bucket
//! (O(1)); popping takes the front of bucket 0 and, when it is empty,
//! redistributes the lowest non-empty bucket around its earliest time. An
//! event only ever moves to a lower digit, so at most 16 times, and in
//! practice about twice: popping costs O(1) amortized however many events
//! wait, where a binary heap pays O(log n) on every push and every pop.
//! That matters because the engine leaves superseded wake-ups (e.g. a TCP
//! retransmission deadline seconds ahead) in the queue, to be skipped when
//! due: they are many (about a thousand in a bulk TCP download), and here
//! they rest in high buckets, untouched until their time comes near. The
//! buckets hold 16-byte keys; the events wait in a slab and move once in,
//! once out.
//!
//! Order among events due at the same instant: every bucket keeps the events
//! of one time in scheduling order (appends come last, redistribution is
//! stable, and all events of one time share a bucket), so bucket 0 is a
//! FIFO and events run in `(time, insertion sequence)` order exactly as a
//! heap ordered by `(time, sequence)` would run them.

use crate::time::Instant;

/// A pending event's time and the slot of its payload.
#[derive(Clone, Copy)]
struct Key {
    at: u64,
    slot: u32,
}

/// Bits per digit: the radix is 16.
const DIGIT: u32 = 4;
const RADIX: usize = 1 << DIGIT;
const LEVELS: usize = (u64::BITS / DIGIT) as usize;
const BUCKETS: usize = LEVELS * RADIX;

/// Pending events ordered by `(time, insertion sequence)`.
pub struct EventQueue<E> {
    /// Bucket 0: the events due at `last`, in scheduling order, from
    /// `due[due_head]` on.
    due: Vec<Key>,
    due_head: usize,
    /// `buckets[RADIX * level + digit]` holds the events whose time first
    /// differs from `last` in base-16 digit `level` (counting from the least
    /// significant), where the time has `digit`. Earlier times are in lower
    /// buckets: the bucket order is the time order.
    buckets: [Vec<Key>; BUCKETS],
    /// `bucket_min[i]`: the earliest time in `buckets[i]` (`u64::MAX` when
    /// empty), kept as keys are filed, so that finding the earliest pending
    /// time after bucket 0 runs dry is a look-up, not a scan of the lowest
    /// bucket.
    bucket_min: [u64; BUCKETS],
    /// Bit `i % 64` of word `i / 64` set when `buckets[i]` is not empty.
    occupied: [u64; BUCKETS / 64],
    /// Time of the last event popped: no pending event is earlier.
    last: u64,
    /// When `due` is empty: the earliest pending time (`u64::MAX` if none).
    /// Kept on every schedule, so peeking and the next pop need no search.
    earliest: u64,
    /// When `due` is empty and an event pending: the bucket of `earliest`,
    /// the lowest non-empty one, which the next pop refills from.
    earliest_bucket: usize,
    /// The events, indexed by `Key::slot`; `free` lists the empty slots.
    slots: Vec<Option<E>>,
    free: Vec<u32>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            due: Vec::new(),
            due_head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            bucket_min: [u64::MAX; BUCKETS],
            occupied: [0; BUCKETS / 64],
            last: 0,
            earliest: u64::MAX,
            earliest_bucket: 0,
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<E> std::fmt::Debug for EventQueue<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventQueue")
            .field("pending", &self.len())
            .finish()
    }
}

impl<E> EventQueue<E> {
    pub fn schedule(&mut self, at: Instant, event: E) {
        let at = at.as_nanos();
        if at < self.last {
            self.rebase(at);
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(event);
                s
            }
            None => {
                self.slots.push(Some(event));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        let bucket = self.put(Key { at, slot });
        if at < self.earliest {
            // Events of one time share a bucket, and an earlier time is in
            // a lower one: the new event's bucket is the lowest. (A key
            // filed in `due` leaves `earliest_bucket` unused until `due` is
            // empty again, and then both are found anew.)
            self.earliest = at;
            self.earliest_bucket = bucket;
        }
    }

    /// Files a key (`at >= last`) behind those already in its bucket;
    /// returns the bucket (0 for `due`).
    #[inline(always)]
    fn put(&mut self, k: Key) -> usize {
        let x = k.at ^ self.last;
        if x == 0 {
            self.due.push(k);
            0
        } else {
            let level = (u64::BITS - 1 - x.leading_zeros()) / DIGIT;
            let digit = (k.at >> (level * DIGIT)) as usize & (RADIX - 1);
            let i = (level as usize * RADIX + digit) % BUCKETS;
            self.buckets[i].push(k);
            self.bucket_min[i] = self.bucket_min[i].min(k.at);
            self.occupied[i / 64] |= 1 << (i % 64);
            i
        }
    }

    /// The lowest non-empty bucket.
    fn first_bucket(&self) -> Option<usize> {
        self.occupied
            .iter()
            .position(|&w| w != 0)
            .map(|w| w * 64 + self.occupied[w].trailing_zeros() as usize)
    }

    /// An event earlier than `last` (a caller going back in time): refile
    /// everything around `at`. Stable per bucket, and all events of one time
    /// share a bucket, so the scheduling order among events of one time is
    /// kept.
    #[cold]
    fn rebase(&mut self, at: u64) {
        let mut all: Vec<Key> = self.due.drain(self.due_head..).collect();
        self.due.clear();
        self.due_head = 0;
        for b in &mut self.buckets {
            all.append(b);
        }
        self.bucket_min = [u64::MAX; BUCKETS];
        self.occupied = [0; BUCKETS / 64];
        self.last = at;
        for k in all {
            self.put(k);
        }
        if self.due.is_empty() {
            self.find_earliest();
        }
    }

    /// Every pending event, in no particular order (inspection only, e.g.
    /// counting what is in flight at the end of a run).
    pub fn pending(&self) -> impl Iterator<Item = &E> {
        self.slots.iter().flatten()
    }

    pub fn pop(&mut self) -> Option<(Instant, E)> {
        if self.due_head == self.due.len() {
            self.due.clear();
            self.due_head = 0;
            if self.earliest == u64::MAX {
                return None;
            }
            let b = self.earliest_bucket;
            debug_assert_eq!(Some(b), self.first_bucket());
            self.occupied[b / 64] &= !(1 << (b % 64));
            self.bucket_min[b] = u64::MAX;
            // The earliest pending event is in the lowest bucket.
            self.last = self.earliest;
            debug_assert_eq!(Some(self.last), self.buckets[b].iter().map(|k| k.at).min());
            if self.buckets[b].len() == 1 {
                // A lone key is the earliest event itself: refiled around
                // its own time it would land in bucket 0, so it goes there.
                self.due.push(self.buckets[b][0]);
                self.buckets[b].clear();
            } else {
                let mut moving = std::mem::take(&mut self.buckets[b]);
                // Every key lands in a lower level (they all share the
                // digits from `b`'s level up with the new `last`), so
                // `moving` is not refilled.
                for &k in &moving {
                    self.put(k);
                }
                // Keep the allocation for the next time this bucket fills.
                moving.clear();
                self.buckets[b] = moving;
            }
        }
        let k = self.due[self.due_head];
        self.due_head += 1;
        if self.due_head == self.due.len() {
            self.find_earliest();
        }
        let event = self.slots[k.slot as usize].take().expect("a pending event");
        self.free.push(k.slot);
        Some((Instant::from_nanos(k.at), event))
    }

    /// Finds the earliest time in the buckets (`u64::MAX` if none) and its
    /// bucket: the lowest bucket and its minimum, as the bucket order is the
    /// time order.
    fn find_earliest(&mut self) {
        match self.first_bucket() {
            Some(b) => {
                self.earliest = self.bucket_min[b];
                self.earliest_bucket = b;
            }
            None => self.earliest = u64::MAX,
        }
    }

    pub fn peek_time(&self) -> Option<Instant> {
        if self.due_head < self.due.len() {
            return Some(Instant::from_nanos(self.last));
        }
        (self.earliest != u64::MAX).then(|| Instant::from_nanos(self.earliest))
    }
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

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

        /// Interleaved as a simulation does it: each popped event schedules
        /// a few more at or after its own time (some at the very same
        /// instant, some far ahead, a few before it), checked against a
        /// `(time, sequence)` binary heap, `peek_time`, `len` and `pending`
        /// included.
        #[test]
        fn matches_a_time_sequence_heap_when_interleaved(
            start in proptest::collection::vec(0u64..1_000_000, 1..50),
            steps in proptest::collection::vec(
                proptest::collection::vec((0u32..5, 0u64..u64::MAX / 4), 0..4),
                1..400,
            ),
        ) {
            let mut q = EventQueue::default();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u64;
            let mut add = |q: &mut EventQueue<u64>, r: &mut BinaryHeap<Reverse<(u64, u64)>>, t: u64| {
                q.schedule(Instant::from_nanos(t), seq);
                r.push(Reverse((t, seq)));
                seq += 1;
            };
            for t in start {
                add(&mut q, &mut reference, t);
            }
            for step in steps {
                prop_assert_eq!(q.len(), reference.len());
                let mut pending: Vec<u64> = q.pending().copied().collect();
                let mut expected: Vec<u64> = reference.iter().map(|Reverse((_, s))| *s).collect();
                pending.sort_unstable();
                expected.sort_unstable();
                prop_assert_eq!(pending, expected);
                prop_assert_eq!(
                    q.peek_time().map(Instant::as_nanos),
                    reference.peek().map(|Reverse((t, _))| *t)
                );
                let Some((now, id)) = q.pop() else { break };
                let Reverse((t, s)) = reference.pop().expect("same length");
                prop_assert_eq!((now.as_nanos(), id), (t, s));
                for (kind, d) in step {
                    let at = match kind {
                        0 => now.as_nanos(),
                        1 => now.as_nanos() + d % 1000,
                        2 => now.as_nanos() + d % 1_000_000_000,
                        3 => now.as_nanos().saturating_add(d),
                        // Back in time (a caller the engines are not, but
                        // the queue allows): everything is refiled.
                        _ => now.as_nanos().saturating_sub(d % 1000),
                    };
                    add(&mut q, &mut reference, at);
                }
            }
        }
    }

    #[test]
    fn an_event_before_the_last_popped_still_comes_first() {
        let mut q = EventQueue::default();
        q.schedule(Instant::from_nanos(50), "a");
        q.schedule(Instant::from_nanos(100), "b");
        q.schedule(Instant::from_nanos(100), "c");
        assert_eq!(q.pop().map(|(t, e)| (t.as_nanos(), e)), Some((50, "a")));
        q.schedule(Instant::from_nanos(10), "d");
        q.schedule(Instant::from_nanos(100), "e");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, ["d", "b", "c", "e"]);
        assert!(q.is_empty());
    }
}
