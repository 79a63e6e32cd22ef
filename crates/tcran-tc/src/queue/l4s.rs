//! The L4S marking ramp of Brunello's thesis (seeds/thesis-brunello-l4s-5g.txt
//! sec. 4.2), proposed for the gNB's PDCP layer.
//!
//! Contract:
//! - Every `update_interval` (the thesis' dT, default 5 ms) the marking
//!   probability is recomputed from the queueing delay:
//!   `tmp = (qDelay - low) / (high - low)` clamped to [0, 1] (eq. 4.1) and
//!   `pMark = alpha * tmp + (1 - alpha) * pMark` (eq. 4.2). `qDelay` is the
//!   sojourn of the head packet at the update instant (zero when empty):
//!   the delay the next departure will have seen, which is what the PDCP
//!   queue knows.
//! - Updates are caught up lazily at each packet event, each at its own
//!   instant (the head does not change between events, so its sojourn at
//!   each past instant is exact). [`Queue::next_wakeup`] reports the next
//!   update while there is anything to update.
//! - Marking: with probability `pMark`, an ECN-capable packet is CE-marked
//!   ([`MarkReason::L4s`]). By default the departing head packet is
//!   marked (the thesis' optimal placement, `dropFromTail = false`); with
//!   `tail_marking` the arriving packet is marked at enqueue, mimicking a
//!   queue in RLC signalled to PDCP (thesis Fig. 4.2 b; the setting used
//!   in all of the thesis' experiments).
//! - Not-ECT packets are left alone by default: the thesis' L4S flows are
//!   all ECN-capable and classic flows go to other queues. With
//!   `drop_non_ect` they are dropped instead ([`DropReason::L4s`]), as
//!   RFC 3168 would for a marking AQM.
//! - The equations are followed literally: because of the smoothing, a
//!   packet can be marked while the current delay is below `low` if the
//!   delay was high just before. Randomness comes from
//!   `RngStream::new(seed, "l4s")`.

use super::fifo::PacketFifo;
use super::ticker::Ticker;
use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::rng::RngStream;
use tcran_core::{ConfigError, DropReason, Duration, Instant, MarkReason, Packet};

/// L4S ramp parameters; defaults are the thesis' main setting (sec. 4.2,
/// 5.1: l4sLowTh 5 ms, l4sHighTh 10 ms, alpha 0.25, dT 5 ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct L4sConfig {
    /// l4sLowTh: no marking from a delay at or below this. Default 5 ms.
    pub low_threshold: Duration,
    /// l4sHighTh: the instantaneous probability is 1 at or above this.
    /// Default 10 ms.
    pub high_threshold: Duration,
    /// Weight of the new sample in eq. 4.2; 1 = no memory. Default 0.25.
    pub alpha: f64,
    /// dT, the period of the probability update. Default 5 ms.
    pub update_interval: Duration,
    /// Mark arriving packets (thesis `dropFromTail = true`) instead of
    /// departing ones. Default false.
    pub tail_marking: bool,
    /// Drop Not-ECT packets the ramp selects instead of passing them.
    pub drop_non_ect: bool,
    /// Seed of this queue's random stream. Default 1.
    pub seed: u64,
}

impl Default for L4sConfig {
    fn default() -> Self {
        L4sConfig {
            low_threshold: Duration::from_millis(5),
            high_threshold: Duration::from_millis(10),
            alpha: 0.25,
            update_interval: Duration::from_millis(5),
            tail_marking: false,
            drop_non_ect: false,
            seed: 1,
        }
    }
}

impl L4sConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        check_range(
            "low_threshold",
            self.low_threshold,
            Duration::ZERO,
            Duration::from_secs(10),
        )?;
        check_range(
            "high_threshold",
            self.high_threshold,
            Duration::from_micros(1),
            Duration::from_secs(10),
        )?;
        if self.high_threshold <= self.low_threshold {
            return Err(ConfigError::new(
                "high_threshold",
                self.high_threshold,
                format!(
                    "must be greater than low_threshold ({})",
                    self.low_threshold
                ),
            ));
        }
        check_f64("alpha", self.alpha, 0.0, 1.0)?;
        check_range(
            "update_interval",
            self.update_interval,
            Duration::from_micros(100),
            Duration::from_secs(10),
        )?;
        Ok(())
    }

    pub fn build(&self) -> Result<L4sRamp, ConfigError> {
        self.validate()?;
        Ok(L4sRamp {
            ticker: Ticker::new(self.update_interval),
            rng: Box::new(RngStream::new(self.seed, "l4s")),
            params: self.clone(),
            p_mark: 0.0,
            last_qdelay: Duration::ZERO,
            fifo: PacketFifo::default(),
        })
    }

    /// Applies these parameters, keeping packets and `pMark`.
    pub fn reconfigure(&self, ramp: &mut L4sRamp) -> Result<(), ConfigError> {
        self.validate()?;
        if self.seed != ramp.params.seed {
            *ramp.rng = RngStream::new(self.seed, "l4s");
        }
        ramp.ticker.set_period(self.update_interval);
        ramp.params = self.clone();
        Ok(())
    }
}

/// A FIFO with the L4S marking ramp.
#[derive(Debug)]
pub struct L4sRamp {
    params: L4sConfig,
    /// pMark of eq. 4.2.
    p_mark: f64,
    /// qDelay used by the last update.
    last_qdelay: Duration,
    ticker: Ticker,
    rng: Box<RngStream>,
    fifo: PacketFifo,
}

impl L4sRamp {
    /// The current marking probability pMark.
    pub fn p_mark(&self) -> f64 {
        self.p_mark
    }
    /// The queueing delay of the last update.
    pub fn last_qdelay(&self) -> Duration {
        self.last_qdelay
    }

    /// Eq. 4.1: the instantaneous marking probability for `qdelay`.
    fn instantaneous(&self, qdelay: Duration) -> f64 {
        let above = qdelay.saturating_sub(self.params.low_threshold);
        let range = self.params.high_threshold - self.params.low_threshold;
        above.ratio(range).min(1.0)
    }

    /// Runs the updates due by `now` (they also run on every packet event).
    pub fn advance(&mut self, now: Instant) {
        while let Some(at) = self.ticker.pop_due(now) {
            let qdelay = self.fifo.head_sojourn(at);
            let tmp = self.instantaneous(qdelay);
            let before = self.p_mark;
            let alpha = self.params.alpha;
            self.p_mark = alpha * tmp + (1.0 - alpha) * self.p_mark;
            self.last_qdelay = qdelay;
            // Until the next packet event the head's sojourn only grows: once
            // the ramp is saturated (or the queue is empty) and pMark stopped
            // moving, later updates change nothing.
            if self.p_mark == before && (self.fifo.is_empty() || tmp >= 1.0) {
                self.ticker.skip_through(now);
                break;
            }
        }
    }

    /// Marks `packet` with probability pMark; returns it unless it was
    /// dropped (Not-ECT with `drop_non_ect`).
    fn apply(&mut self, packet: Packet, ev: &mut Events) -> Option<Packet> {
        if !packet.ecn.is_ect() && !self.params.drop_non_ect {
            return Some(packet);
        }
        if !self.rng.bernoulli(self.p_mark) {
            return Some(packet);
        }
        ev.signal(packet, true, MarkReason::L4s, DropReason::L4s)
    }
}

impl Queue for L4sRamp {
    fn enqueue(&mut self, packet: Packet, now: Instant, ev: &mut Events) {
        self.advance(now);
        if self.params.tail_marking {
            if let Some(packet) = self.apply(packet, ev) {
                self.fifo.push_back(packet);
            }
        } else {
            self.fifo.push_back(packet);
        }
    }

    fn dequeue(&mut self, now: Instant, ev: &mut Events) -> Option<Packet> {
        self.advance(now);
        loop {
            let packet = self.fifo.pop_front()?;
            if self.params.tail_marking {
                return Some(packet);
            }
            if let Some(packet) = self.apply(packet, ev) {
                return Some(packet);
            }
        }
    }

    crate::queue::fifo::fifo_storage!(fifo);
    fn next_wakeup(&self) -> Option<Instant> {
        if self.fifo.is_empty() && self.p_mark == 0.0 {
            None
        } else {
            self.ticker.next()
        }
    }
    fn aqm_stats(&self) -> AqmStats {
        AqmStats {
            probability: Some(self.p_mark),
            ..AqmStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::testing::*;
    use crate::queue::{AnyQueue, QueueKindConfig};
    use proptest::prelude::*;
    use tcran_core::Ecn;

    /// pMark by hand from eq. 4.1/4.2 (low 5 ms, high 10 ms, alpha 0.25,
    /// dT 5 ms, updates at 5, 10, 15, ... ms after the first event):
    /// t=5: head waited 2.5 ms -> tmp 0 -> 0;
    /// t=10: 7.5 ms -> tmp 0.5 -> 0.25*0.5 = 0.125;
    /// t=15: new head waited 7.5 ms -> 0.125 + 0.75*0.125 = 0.21875;
    /// t=20: 12.5 ms -> tmp 1 -> 0.25 + 0.75*0.21875 = 0.4140625;
    /// t=25: empty -> 0.75*0.4140625 = 0.310546875.
    #[test]
    fn ramp_follows_eq_4_1_and_4_2_for_a_scripted_delay_sequence() {
        let mut q = L4sConfig::default().build().unwrap();
        let mut ev = Events::default();
        q.enqueue(pkt(0, 100, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.dequeue(ms(0), &mut ev);
        q.enqueue(pkt(1, 100, Ecn::NotEct, us(2500)), us(2500), &mut ev);
        q.enqueue(pkt(2, 100, Ecn::NotEct, us(7500)), us(7500), &mut ev);
        q.advance(ms(5));
        assert_eq!(q.p_mark(), 0.0);
        q.advance(ms(10));
        assert_eq!(q.last_qdelay(), Duration::from_micros(7500));
        assert_eq!(q.p_mark(), 0.125);
        assert_eq!(q.dequeue(ms(12), &mut ev).unwrap().id.0, 1);
        q.advance(ms(15));
        assert_eq!(q.p_mark(), 0.21875);
        q.advance(ms(20));
        assert_eq!(q.p_mark(), 0.4140625);
        assert_eq!(q.dequeue(ms(21), &mut ev).unwrap().id.0, 2);
        q.advance(ms(25));
        assert_eq!(q.p_mark(), 0.310546875);
    }

    #[test]
    fn no_marks_while_the_delay_stays_below_the_low_threshold() {
        let mut q = L4sConfig::default().build().unwrap();
        let mut ev = Events::default();
        let mut out = 0;
        for k in 0..2000u64 {
            // Three packets per ms, served after 4 ms: sojourn 4 ms < 5 ms.
            for j in 0..3 {
                q.enqueue(pkt(3 * k + j, 1200, Ecn::Ect1, ms(k)), ms(k), &mut ev);
            }
            while q
                .oldest_enqueued_at()
                .is_some_and(|t| ms(k) >= t + Duration::from_millis(4))
            {
                q.dequeue(ms(k), &mut ev).unwrap();
                out += 1;
            }
        }
        assert!(out > 5000);
        assert_eq!(ev.marks.total(), 0);
        assert_eq!(q.p_mark(), 0.0);
    }

    #[test]
    fn memoryless_ramp_marks_every_packet_above_the_high_threshold() {
        let mut q = L4sConfig {
            alpha: 1.0,
            ..L4sConfig::default()
        }
        .build()
        .unwrap();
        let mut ev = Events::default();
        for id in 0..100 {
            q.enqueue(pkt(id, 1000, Ecn::Ect1, ms(0)), ms(0), &mut ev);
        }
        for k in 0..100 {
            let p = q.dequeue(ms(20 + k), &mut ev).unwrap();
            assert_eq!(p.ecn, Ecn::Ce, "packet {k}");
        }
        assert_eq!(ev.marks.get(MarkReason::L4s), 100);
        assert!(ev.dropped.is_empty());
    }

    /// Three packets queued at 0; at 20 ms pMark is 1 (alpha 1, head delay
    /// above 10 ms) and a fourth packet arrives.
    fn head_or_tail(tail_marking: bool) -> (L4sRamp, Events) {
        let mut q = L4sConfig {
            alpha: 1.0,
            tail_marking,
            ..L4sConfig::default()
        }
        .build()
        .unwrap();
        let mut ev = Events::default();
        for id in 1..=3 {
            q.enqueue(pkt(id, 1000, Ecn::Ect1, ms(0)), ms(0), &mut ev);
        }
        q.enqueue(pkt(4, 1000, Ecn::Ect1, ms(20)), ms(20), &mut ev);
        assert_eq!(q.p_mark(), 1.0);
        (q, ev)
    }

    #[test]
    fn head_marking_marks_the_departing_packet() {
        let (mut q, mut ev) = head_or_tail(false);
        assert_eq!(ev.marks.total(), 0, "nothing marked on arrival");
        let first = q.dequeue(ms(20), &mut ev).unwrap();
        assert_eq!((first.id.0, first.ecn), (1, Ecn::Ce));
    }

    #[test]
    fn tail_marking_marks_the_arriving_packet() {
        let (mut q, mut ev) = head_or_tail(true);
        assert_eq!(ev.marks.total(), 1);
        let first = q.dequeue(ms(20), &mut ev).unwrap();
        assert_eq!(
            (first.id.0, first.ecn),
            (1, Ecn::Ect1),
            "head left unmarked"
        );
        let newest = q.pop_newest().unwrap();
        assert_eq!((newest.id.0, newest.ecn), (4, Ecn::Ce));
    }

    #[test]
    fn not_ect_packets_pass_unless_configured_to_be_dropped() {
        for drop_non_ect in [false, true] {
            let mut q = L4sConfig {
                alpha: 1.0,
                drop_non_ect,
                ..L4sConfig::default()
            }
            .build()
            .unwrap();
            let mut ev = Events::default();
            for id in 0..10 {
                q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
            }
            let out = std::iter::from_fn(|| q.dequeue(ms(30), &mut ev)).count();
            if drop_non_ect {
                assert_eq!((out, ev.drop_counts.get(DropReason::L4s)), (0, 10));
            } else {
                assert_eq!((out, ev.dropped.len()), (10, 0));
            }
            assert_eq!(ev.marks.total(), 0);
        }
    }

    #[test]
    fn config_rejects_inverted_thresholds() {
        let e = L4sConfig {
            low_threshold: Duration::from_millis(10),
            high_threshold: Duration::from_millis(5),
            ..L4sConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "high_threshold = 5ms: must be greater than low_threshold (10ms)"
        );
        let c: crate::QueueConfig = toml::from_str(
            "id = 0\nkind = \"l4s\"\nlow_threshold = \"2ms\"\nhigh_threshold = \"8ms\"\ntail_marking = true",
        )
        .unwrap();
        assert!(c.kind.build().is_ok());
    }

    #[test]
    fn reconfigure_keeps_packets_and_marking_probability() {
        let mut q = QueueKindConfig::L4s(L4sConfig::default()).build().unwrap();
        let mut ev = Events::default();
        for id in 0..10 {
            q.enqueue(pkt(id, 1000, Ecn::Ect1, ms(0)), ms(0), &mut ev);
        }
        q.enqueue(pkt(10, 1000, Ecn::Ect1, ms(12)), ms(12), &mut ev);
        let AnyQueue::L4s(r) = &q else { panic!() };
        let p = r.p_mark();
        assert!(p > 0.0);
        let new = QueueKindConfig::L4s(L4sConfig {
            alpha: 0.5,
            tail_marking: true,
            ..L4sConfig::default()
        });
        assert!(new.reconfigure(&mut q).unwrap());
        let AnyQueue::L4s(r) = &q else { panic!() };
        assert_eq!((r.p_mark(), q.packets()), (p, 11));
        assert!(r.params.tail_marking);
    }

    proptest! {
        #[test]
        fn conserves_packets_under_random_operations(ops in ops(), tail: bool, drop_non_ect: bool) {
            let mut q = L4sConfig {
                tail_marking: tail,
                drop_non_ect,
                ..L4sConfig::default()
            }
            .build()
            .unwrap();
            check_conservation(&mut q, &ops)?;
        }
    }
}
