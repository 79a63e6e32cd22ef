//! Weighted deficit round robin: queue `i` receives bytes in proportion to
//! its `weight` (quantum_i = quantum x weight). With equal weights this is
//! the byte-fair 50%-50% flow slicing of TC-RAN Fig. 6a.
//!
//! The deficit is charged after sending (as in DRR++), which bounds each
//! queue's lag behind its share by one quantum plus one maximum packet and
//! needs no look at the head packet, whose size an AQM may still change.

use super::active::ActiveList;
use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use tcran_core::{Instant, QueueId};

#[derive(Debug)]
pub struct Weighted {
    quantum: i64,
    active: ActiveList,
    deficit: Vec<i64>,
    weight: Vec<u32>,
}

impl Weighted {
    pub fn new(quantum: i64) -> Weighted {
        Weighted {
            quantum,
            active: ActiveList::default(),
            deficit: Vec::new(),
            weight: Vec::new(),
        }
    }
    fn ensure(&mut self, q: QueueId) {
        if self.deficit.len() <= q.index() {
            self.deficit.resize(q.index() + 1, 0);
            self.weight.resize(q.index() + 1, 1);
        }
    }
    fn quantum_of(&self, q: QueueId) -> i64 {
        self.quantum * self.weight[q.index()] as i64
    }
}

impl Scheduler for Weighted {
    fn on_queue_added(&mut self, q: QueueId, attrs: QueueAttrs) {
        self.ensure(q);
        self.weight[q.index()] = attrs.weight.max(1);
    }
    fn on_queue_removed(&mut self, q: QueueId) {
        self.active.remove(q);
    }
    fn on_backlogged(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.ensure(q);
        if !self.active.contains(q) {
            self.deficit[q.index()] = self.quantum_of(q);
            self.active.push_back(q);
        }
    }
    fn select(
        &mut self,
        _now: Instant,
        view: &dyn QueueView,
        blocked: &Blocked,
    ) -> Option<QueueId> {
        // A queue whose deficit is spent is refilled and sent to the tail;
        // after one full round every ready queue has a positive deficit.
        let mut guard = 2 * self.deficit.len() + 2;
        loop {
            guard = guard.checked_sub(1)?;
            let q = self.active.first_ready(view, blocked)?;
            if self.deficit[q.index()] <= 0 {
                self.deficit[q.index()] += self.quantum_of(q);
                self.active.rotate(q);
                continue;
            }
            return Some(q);
        }
    }
    fn on_sent(&mut self, q: QueueId, len: u32, view: &dyn QueueView) {
        self.ensure(q);
        self.deficit[q.index()] -= len as i64;
        if view.packets(q) == 0 {
            self.active.remove(q);
        }
    }
    fn on_empty(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.active.remove(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testing::*;

    fn shares(weights: [u32; 2], sizes: [u32; 2]) -> [u64; 2] {
        let t = Instant::ZERO;
        let mut s = Weighted::new(1500);
        let mut v = FakeQueues::default();
        for (i, w) in weights.iter().enumerate() {
            s.on_queue_added(
                QueueId(i as u16),
                QueueAttrs {
                    priority: 0,
                    weight: *w,
                },
            );
        }
        for _ in 0..20_000 {
            arrive(&mut s, &mut v, 0, sizes[0], t);
            arrive(&mut s, &mut v, 1, sizes[1], t);
        }
        let mut sent = [0u64; 2];
        for _ in 0..10_000 {
            let q = serve(&mut s, &mut v, t).unwrap() as usize;
            sent[q] += sizes[q] as u64;
        }
        sent
    }

    #[test]
    fn equal_weights_split_bytes_evenly_whatever_the_packet_sizes() {
        let [a, b] = shares([1, 1], [1500, 300]);
        let ratio = a as f64 / b as f64;
        assert!((ratio - 1.0).abs() < 0.01, "{a} vs {b}");
    }

    #[test]
    fn weights_three_to_one_give_three_to_one_bytes() {
        let [a, b] = shares([3, 1], [1000, 1000]);
        let ratio = a as f64 / b as f64;
        assert!((ratio - 3.0).abs() < 0.02, "{a} vs {b}");
    }
}
