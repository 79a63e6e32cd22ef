//! Packet round robin: each backlogged queue sends one packet per turn,
//! whatever its size (TC-RAN's RR scheduler; Kumar et al.'s PDCP scheduler
//! "extracts a single packet, whatever its size, per queue visit").

use super::active::ActiveList;
use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use tcran_core::{Instant, QueueId};

#[derive(Debug, Default)]
pub struct RoundRobin {
    active: ActiveList,
}

impl Scheduler for RoundRobin {
    fn on_queue_added(&mut self, _q: QueueId, _attrs: QueueAttrs) {}
    fn on_queue_removed(&mut self, q: QueueId) {
        self.active.remove(q);
    }
    fn on_backlogged(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.active.push_back(q);
    }
    fn select(
        &mut self,
        _now: Instant,
        view: &dyn QueueView,
        blocked: &Blocked,
    ) -> Option<QueueId> {
        self.active.first_ready(view, blocked)
    }
    fn on_sent(&mut self, q: QueueId, _len: u32, view: &dyn QueueView) {
        if view.packets(q) == 0 {
            self.active.remove(q);
        } else {
            self.active.rotate(q);
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

    #[test]
    fn alternates_one_packet_per_queue_regardless_of_size() {
        let mut s = RoundRobin::default();
        let mut v = FakeQueues::default();
        let t = Instant::ZERO;
        for _ in 0..3 {
            arrive(&mut s, &mut v, 0, 1500, t);
            arrive(&mut s, &mut v, 1, 100, t);
        }
        let order: Vec<u16> = (0..6).filter_map(|_| serve(&mut s, &mut v, t)).collect();
        assert_eq!(order, vec![0, 1, 0, 1, 0, 1]);
        assert_eq!(serve(&mut s, &mut v, t), None);
    }

    #[test]
    fn skips_blocked_queues_without_losing_their_turn() {
        let mut s = RoundRobin::default();
        let mut v = FakeQueues::default();
        let t = Instant::ZERO;
        arrive(&mut s, &mut v, 0, 100, t);
        arrive(&mut s, &mut v, 1, 100, t);
        let mut b = Blocked::default();
        b.insert(QueueId(0));
        assert_eq!(s.select(t, &v, &b), Some(QueueId(1)));
        assert_eq!(s.select(t, &v, &Blocked::default()), Some(QueueId(0)));
    }
}
