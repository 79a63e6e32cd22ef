//! The periodic-update clock shared by the AQMs whose probability is
//! recomputed every fixed period (PIE `T_UPDATE`, the L4S ramp `dT`, DualPI2
//! `Tupdate`).
//!
//! Sans-IO: nothing fires on its own. The queue calls [`Ticker::pop_due`]
//! at every packet event and runs each elapsed update in order, at the
//! update's own instant. Between packet events the queue's content does not
//! change, so replaying the missed updates then gives exactly the state a
//! timer would have produced.

use tcran_core::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ticker {
    period: Duration,
    /// The next update instant; `None` until the first packet event anchors
    /// the schedule (a queue does not know when it was created).
    next: Option<Instant>,
}

impl Ticker {
    pub(crate) fn new(period: Duration) -> Ticker {
        debug_assert!(!period.is_zero());
        Ticker { period, next: None }
    }

    /// Returns and consumes the next update instant that is not after `now`.
    /// The first call anchors the schedule at `now + period`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Instant> {
        match self.next {
            None => {
                self.next = Some(now + self.period);
                None
            }
            Some(t) if t <= now => {
                self.next = Some(t + self.period);
                Some(t)
            }
            Some(_) => None,
        }
    }

    /// Skips every update instant up to and including `now`: used once an
    /// update left the state unchanged and the input cannot change before the
    /// next packet event, so the remaining updates would be no-ops.
    pub(crate) fn skip_through(&mut self, now: Instant) {
        if let Some(t) = self.next {
            if t <= now {
                let period = self.period.as_nanos();
                let n = (now.as_nanos() - t.as_nanos()) / period + 1;
                self.next = Some(t + Duration::from_nanos(n.saturating_mul(period)));
            }
        }
    }

    /// The scheduled next update, if the schedule is anchored.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.next
    }

    /// Changes the period; the update already scheduled keeps its instant.
    pub(crate) fn set_period(&mut self, period: Duration) {
        debug_assert!(!period.is_zero());
        self.period = period;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_event_anchors_then_every_elapsed_period_is_due_in_order() {
        let ms = Instant::from_millis;
        let mut t = Ticker::new(Duration::from_millis(5));
        assert_eq!(t.pop_due(ms(2)), None);
        assert_eq!(t.next(), Some(ms(7)));
        assert_eq!(t.pop_due(ms(6)), None);
        let due: Vec<_> = std::iter::from_fn(|| t.pop_due(ms(18))).collect();
        assert_eq!(due, vec![ms(7), ms(12), ms(17)]);
        assert_eq!(t.next(), Some(ms(22)));
    }

    #[test]
    fn skipping_lands_on_the_first_instant_after_now() {
        let ms = Instant::from_millis;
        let mut t = Ticker::new(Duration::from_millis(5));
        t.pop_due(ms(0));
        t.skip_through(ms(20));
        assert_eq!(t.next(), Some(ms(25)));
        t.skip_through(ms(24));
        assert_eq!(t.next(), Some(ms(25)));
    }
}
