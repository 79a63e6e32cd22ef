//! DRR++ as in FQ-CoDel (RFC 8290 sec. 4.2; Linux `fq_codel_dequeue`):
//! new flows are served before old ones (sparse-flow optimisation); a flow
//! keeps the turn while its deficit is positive and pays for each packet
//! after sending, so the deficit may go negative.

use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use std::collections::VecDeque;
use tcran_core::{Instant, QueueId};

/// Which list a flow queue is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlowList {
    #[default]
    Inactive,
    New,
    Old,
}

#[derive(Debug)]
pub struct Drr {
    quantum: i64,
    new_flows: VecDeque<QueueId>,
    old_flows: VecDeque<QueueId>,
    deficit: Vec<i64>,
    list: Vec<FlowList>,
}

impl Drr {
    pub fn new(quantum: i64) -> Drr {
        Drr {
            quantum,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            deficit: Vec::new(),
            list: Vec::new(),
        }
    }

    pub fn deficit(&self, q: QueueId) -> i64 {
        self.deficit.get(q.index()).copied().unwrap_or(0)
    }
    pub fn list_of(&self, q: QueueId) -> FlowList {
        self.list.get(q.index()).copied().unwrap_or_default()
    }

    fn ensure(&mut self, q: QueueId) {
        if self.list.len() <= q.index() {
            self.list.resize(q.index() + 1, FlowList::Inactive);
            self.deficit.resize(q.index() + 1, 0);
        }
    }

    fn list_mut(&mut self, l: FlowList) -> &mut VecDeque<QueueId> {
        match l {
            FlowList::New => &mut self.new_flows,
            _ => &mut self.old_flows,
        }
    }

    fn take(&mut self, q: QueueId) {
        let l = self.list_of(q);
        if l == FlowList::Inactive {
            return;
        }
        let list = self.list_mut(l);
        if let Some(i) = list.iter().position(|x| *x == q) {
            list.remove(i);
        }
        self.list[q.index()] = FlowList::Inactive;
    }

    fn move_to_old_tail(&mut self, q: QueueId) {
        self.take(q);
        self.old_flows.push_back(q);
        self.list[q.index()] = FlowList::Old;
    }

    /// RFC 8290 sec. 4.2: an emptied flow from the new list goes to the old
    /// list if that is non-empty (so it cannot starve old flows by coming
    /// back as "new"), otherwise it becomes inactive.
    fn retire_empty(&mut self, q: QueueId) {
        if self.list_of(q) == FlowList::New && !self.old_flows.is_empty() {
            self.move_to_old_tail(q);
        } else {
            self.take(q);
        }
    }
}

impl Scheduler for Drr {
    fn on_queue_added(&mut self, q: QueueId, _attrs: QueueAttrs) {
        self.ensure(q);
    }
    fn on_queue_removed(&mut self, q: QueueId) {
        self.ensure(q);
        self.take(q);
    }
    fn on_backlogged(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.ensure(q);
        if self.list_of(q) == FlowList::Inactive {
            self.new_flows.push_back(q);
            self.list[q.index()] = FlowList::New;
            self.deficit[q.index()] = self.quantum;
        }
    }
    fn select(
        &mut self,
        _now: Instant,
        view: &dyn QueueView,
        blocked: &Blocked,
    ) -> Option<QueueId> {
        // Each flow is visited at most twice per call (once to refill its
        // deficit, once to serve it), so this loop terminates.
        let mut guard = 2 * (self.new_flows.len() + self.old_flows.len()) + 2;
        loop {
            guard = guard.checked_sub(1)?;
            let q = if blocked.is_empty() {
                self.new_flows.front().or(self.old_flows.front()).copied()?
            } else {
                self.new_flows
                    .iter()
                    .chain(self.old_flows.iter())
                    .copied()
                    .find(|q| !blocked.contains(*q))?
            };
            if self.deficit[q.index()] <= 0 {
                self.deficit[q.index()] += self.quantum;
                self.move_to_old_tail(q);
                continue;
            }
            if view.packets(q) == 0 {
                self.retire_empty(q);
                continue;
            }
            return Some(q);
        }
    }
    fn on_sent(&mut self, q: QueueId, len: u32, _view: &dyn QueueView) {
        self.ensure(q);
        self.deficit[q.index()] -= len as i64;
    }
    fn on_empty(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.ensure(q);
        self.retire_empty(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testing::*;

    /// ns-3 fq-codel-queue-disc-test-suite "Deficit" case (quantum 90,
    /// 120-byte items), re-expressed: deficits and lists after each dequeue
    /// (reference/algorithms.md sec. 2.2).
    #[test]
    fn ns3_deficit_sequence() {
        let t = Instant::ZERO;
        let (a, b) = (QueueId(0), QueueId(1));
        let mut s = Drr::new(90);
        let mut v = FakeQueues::default();
        arrive(&mut s, &mut v, 0, 120, t);
        assert_eq!((s.deficit(a), s.list_of(a)), (90, FlowList::New));
        assert_eq!(serve(&mut s, &mut v, t), Some(0));
        assert_eq!(s.deficit(a), -30);
        arrive(&mut s, &mut v, 0, 120, t);
        arrive(&mut s, &mut v, 0, 120, t);
        arrive(&mut s, &mut v, 1, 120, t);
        arrive(&mut s, &mut v, 1, 120, t);
        assert_eq!((s.deficit(b), s.list_of(b)), (90, FlowList::New));
        let expect = [
            (1, (60, FlowList::Old), (-30, FlowList::New)),
            (0, (-60, FlowList::Old), (60, FlowList::Old)),
            (1, (30, FlowList::Old), (-60, FlowList::Old)),
            (0, (-90, FlowList::Old), (30, FlowList::Old)),
        ];
        for (served, da, db) in expect {
            assert_eq!(serve(&mut s, &mut v, t), Some(served));
            assert_eq!((s.deficit(a), s.list_of(a)), da);
            assert_eq!((s.deficit(b), s.list_of(b)), db);
        }
        assert_eq!(serve(&mut s, &mut v, t), None);
        assert_eq!((s.deficit(a), s.list_of(a)), (90, FlowList::Inactive));
        assert_eq!((s.deficit(b), s.list_of(b)), (30, FlowList::Inactive));
    }

    /// Byte fairness: two always-backlogged flows with different packet sizes
    /// get the same bytes, within one quantum plus one maximum packet.
    #[test]
    fn byte_fairness_within_one_quantum() {
        let t = Instant::ZERO;
        let mut s = Drr::new(1500);
        let mut v = FakeQueues::default();
        for _ in 0..2000 {
            arrive(&mut s, &mut v, 0, 1500, t);
            arrive(&mut s, &mut v, 1, 64, t);
        }
        let mut sent = [0u64; 2];
        for _ in 0..1500 {
            let q = serve(&mut s, &mut v, t).unwrap();
            sent[q as usize] += if q == 0 { 1500 } else { 64 };
            let diff = sent[0].abs_diff(sent[1]);
            assert!(diff <= 1500 + 1500, "diff {diff} after {sent:?}");
        }
    }

    #[test]
    fn a_new_sparse_flow_overtakes_backlogged_old_flows() {
        let t = Instant::ZERO;
        let mut s = Drr::new(1500);
        let mut v = FakeQueues::default();
        for _ in 0..10 {
            arrive(&mut s, &mut v, 0, 1500, t);
        }
        serve(&mut s, &mut v, t);
        serve(&mut s, &mut v, t); // flow 0 is now on the old list
        arrive(&mut s, &mut v, 7, 100, t);
        assert_eq!(serve(&mut s, &mut v, t), Some(7));
    }
}
