//! Strict priority (Linux `prio`): the lowest `priority` value with a
//! backlogged queue is always served first; queues of equal priority share
//! round robin. Lower levels can starve, which is the point.

use super::active::ActiveList;
use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use std::collections::BTreeMap;
use tcran_core::{Instant, QueueId};

#[derive(Debug, Default)]
pub struct StrictPriority {
    levels: BTreeMap<u8, ActiveList>,
    level_of: Vec<u8>,
}

impl StrictPriority {
    fn level(&self, q: QueueId) -> u8 {
        self.level_of.get(q.index()).copied().unwrap_or(0)
    }
}

impl Scheduler for StrictPriority {
    fn on_queue_added(&mut self, q: QueueId, attrs: QueueAttrs) {
        if self.level_of.len() <= q.index() {
            self.level_of.resize(q.index() + 1, 0);
        }
        self.level_of[q.index()] = attrs.priority;
        self.levels.entry(attrs.priority).or_default();
    }
    fn on_queue_removed(&mut self, q: QueueId) {
        let l = self.level(q);
        if let Some(list) = self.levels.get_mut(&l) {
            list.remove(q);
        }
    }
    fn on_backlogged(&mut self, q: QueueId, _view: &dyn QueueView) {
        let l = self.level(q);
        self.levels.entry(l).or_default().push_back(q);
    }
    fn select(
        &mut self,
        _now: Instant,
        view: &dyn QueueView,
        blocked: &Blocked,
    ) -> Option<QueueId> {
        self.levels
            .values_mut()
            .find_map(|list| list.first_ready(view, blocked))
    }
    fn on_sent(&mut self, q: QueueId, _len: u32, view: &dyn QueueView) {
        let l = self.level(q);
        if let Some(list) = self.levels.get_mut(&l) {
            if view.packets(q) == 0 {
                list.remove(q);
            } else {
                list.rotate(q);
            }
        }
    }
    fn on_empty(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.on_queue_removed(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testing::*;

    #[test]
    fn higher_priority_always_first_then_round_robin_within_a_level() {
        let t = Instant::ZERO;
        let mut s = StrictPriority::default();
        let mut v = FakeQueues::default();
        for (q, prio) in [(0u16, 1u8), (1, 0), (2, 1)] {
            let a = QueueAttrs {
                priority: prio,
                weight: 1,
            };
            v.set_attrs(q, a);
            s.on_queue_added(QueueId(q), a);
        }
        for _ in 0..2 {
            arrive(&mut s, &mut v, 0, 1500, t);
            arrive(&mut s, &mut v, 2, 1500, t);
        }
        arrive(&mut s, &mut v, 1, 200, t);
        let order: Vec<u16> = std::iter::from_fn(|| serve(&mut s, &mut v, t)).collect();
        assert_eq!(order, vec![1, 0, 2, 0, 2]);
    }
}
