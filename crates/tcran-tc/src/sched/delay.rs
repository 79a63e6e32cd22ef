//! Delay-based scheduling (Brunello sec. 4.5, "DBS"): serve the queue whose
//! head packet is oldest; a queue whose head has waited longer than the
//! threshold is boosted above every priority level. Without priorities this
//! is oldest-head-first (earliest-deadline-like); with priorities it keeps
//! low-priority queues from starving past the threshold.
//!
//! Which queues may be boosted: Brunello's DBS boosts the video gaming
//! queues only ("if among the video gaming users queues one packet is older
//! than 10 ms, the whole queue is prioritized"; "web traffic is always kept
//! with the default priority", sec. 4.5). `boost` lists those queues; when
//! it is `None` every queue may be boosted. A queue not in the list is
//! ranked by its priority level and head age only, so a long-waiting web
//! queue is still served oldest-first among its equals but never jumps
//! above a boosted video queue.

use super::active::ActiveList;
use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use tcran_core::{Duration, Instant, QueueId};

#[derive(Debug)]
pub struct DelayBased {
    threshold: Duration,
    /// Queues that the threshold may boost; `None`: all.
    boost: Option<Vec<QueueId>>,
    active: ActiveList,
}

impl DelayBased {
    /// Every queue may be boosted.
    pub fn new(threshold: Duration) -> DelayBased {
        DelayBased::with_boost(threshold, None)
    }

    /// Only the queues in `boost` (when given) may be boosted.
    pub fn with_boost(threshold: Duration, boost: Option<Vec<QueueId>>) -> DelayBased {
        DelayBased {
            threshold,
            boost,
            active: ActiveList::default(),
        }
    }

    fn may_boost(&self, q: QueueId) -> bool {
        self.boost.as_ref().is_none_or(|b| b.contains(&q))
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
                let boosted = self.may_boost(q) && now.saturating_since(head) > self.threshold;
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

    /// Brunello sec. 4.5's example: DBS threshold 10 ms; web traffic keeps
    /// the default priority, a video queue whose head is older than 10 ms is
    /// prioritised. Below the threshold the oldest head goes first, even if
    /// it is the web queue's; above it the video queue goes first although
    /// the web head is older still, and the web queue, however old, is
    /// never boosted.
    #[test]
    fn only_the_listed_queues_are_boosted() {
        let video = QueueId(0);
        let mut s = DelayBased::with_boost(Duration::from_millis(10), Some(vec![video]));
        let mut v = FakeQueues::default();
        arrive(&mut s, &mut v, 1, 1500, Instant::from_millis(0)); // web
        arrive(&mut s, &mut v, 0, 1200, Instant::from_millis(5)); // video
        let pick = |s: &mut DelayBased, v: &FakeQueues, t| {
            s.select(Instant::from_millis(t), v, &Blocked::default())
        };
        // At 14 ms: web head 14 ms old (past the threshold, not boosted),
        // video head 9 ms: the oldest head, the web queue's.
        assert_eq!(pick(&mut s, &v, 14), Some(QueueId(1)));
        // At 16 ms the video head waited 11 ms > 10 ms: boosted above the
        // 16-ms-old web head.
        assert_eq!(pick(&mut s, &v, 16), Some(video));
        // Without the list, the web queue is boosted too and, older, wins.
        let mut all = DelayBased::new(Duration::from_millis(10));
        let mut w = FakeQueues::default();
        arrive(&mut all, &mut w, 1, 1500, Instant::from_millis(0));
        arrive(&mut all, &mut w, 0, 1200, Instant::from_millis(5));
        assert_eq!(pick(&mut all, &w, 16), Some(QueueId(1)));
    }

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
