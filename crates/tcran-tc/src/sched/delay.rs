//! Delay-based scheduling (Brunello sec. 4.5, "DBS"): serve the queue whose
//! head packet is oldest; a queue whose head has waited longer than the
//! threshold is boosted above every priority level. Without priorities this
//! is oldest-head-first (earliest-deadline-like); with priorities it keeps
//! low-priority queues from starving past the threshold.

use super::active::ActiveList;
use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use tcran_core::{Duration, Instant, QueueId};

#[derive(Debug)]
pub struct DelayBased {
    threshold: Duration,
    active: ActiveList,
}

impl DelayBased {
    pub fn new(threshold: Duration) -> DelayBased {
        DelayBased {
            threshold,
            active: ActiveList::default(),
        }
    }
}

impl Scheduler for DelayBased {
    fn on_queue_added(&mut self, _q: QueueId, _attrs: QueueAttrs) {}
    fn on_queue_removed(&mut self, q: QueueId) {
        self.active.remove(q);
    }
    fn on_backlogged(&mut self, q: QueueId, _view: &dyn QueueView) {
        self.active.push_back(q);
    }
    fn select(&mut self, now: Instant, view: &dyn QueueView, blocked: &Blocked) -> Option<QueueId> {
        // Rank: (boosted first, then priority level, then oldest head, then id).
        self.active
            .iter()
            .filter(|q| view.packets(*q) > 0 && !blocked.contains(*q))
            .filter_map(|q| {
                let head = view.oldest_enqueued_at(q)?;
                let boosted = now.saturating_since(head) > self.threshold;
                let level = if boosted {
                    0
                } else {
                    1 + view.attrs(q).priority as u16
                };
                Some(((level, head, q), q))
            })
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, q)| q)
    }
    fn on_sent(&mut self, q: QueueId, _len: u32, view: &dyn QueueView) {
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

    #[test]
    fn oldest_head_first() {
        let mut s = DelayBased::new(Duration::from_millis(10));
        let mut v = FakeQueues::default();
        arrive(&mut s, &mut v, 0, 1500, Instant::from_millis(5));
        arrive(&mut s, &mut v, 1, 100, Instant::from_millis(2));
        arrive(&mut s, &mut v, 0, 1500, Instant::from_millis(6));
        let now = Instant::from_millis(7);
        assert_eq!(serve(&mut s, &mut v, now), Some(1));
        assert_eq!(serve(&mut s, &mut v, now), Some(0));
    }

    #[test]
    fn a_low_priority_queue_past_the_threshold_jumps_the_line() {
        let mut s = DelayBased::new(Duration::from_millis(10));
        let mut v = FakeQueues::default();
        v.set_attrs(
            0,
            QueueAttrs {
                priority: 0,
                weight: 1,
            },
        );
        v.set_attrs(
            1,
            QueueAttrs {
                priority: 3,
                weight: 1,
            },
        );
        arrive(&mut s, &mut v, 1, 1500, Instant::from_millis(0));
        arrive(&mut s, &mut v, 0, 100, Instant::from_millis(1));
        // At 5 ms the low-priority head is young: priority wins.
        assert_eq!(
            s.select(Instant::from_millis(5), &v, &Blocked::default()),
            Some(QueueId(0))
        );
        // At 11 ms it waited 11 ms > 10 ms: boosted.
        assert_eq!(
            s.select(Instant::from_millis(11), &v, &Blocked::default()),
            Some(QueueId(1))
        );
    }
}
