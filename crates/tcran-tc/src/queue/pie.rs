//! PIE, Proportional Integral controller Enhanced (RFC 8033; reference/
//! algorithms.md sec. 1.4).
//!
//! Contract:
//! - Every `t_update` the drop probability `p` moves by
//!   `alpha (qdelay - target) + beta (qdelay - qdelay_old)` (delays in
//!   seconds), scaled down while `p` is small (RFC 8033 sec. 4.2
//!   auto-tuning: /2048 below 1e-6 ... /2 below 0.1, see
//!   [`auto_tune_scale`]). With `cap_drop_adjustment` (default) a step may
//!   not raise `p` by more than 0.02 once `p >= 0.1`. When both the current
//!   and the previous delay are zero, `p` decays by 2 % per update. `p` is
//!   clamped to [0, 1]. (Linux's extra +0.02 above 250 ms is not applied.)
//! - `qdelay` is the sojourn of the most recently dequeued packet, zero
//!   once a dequeue empties the queue (RFC 8033 default timestamp method,
//!   Linux without `dq_rate_estimator`); the dequeue-rate estimator is not
//!   implemented.
//! - Updates are caught up lazily: each packet event first runs every
//!   update whose instant has passed, at that instant. The inputs do not
//!   change between packet events, so this equals a periodic timer;
//!   [`Queue::next_wakeup`] still reports the next update instant.
//! - Burst allowance: starts at `max_burst`, shrinks by `t_update` per
//!   update, and is re-armed when `p == 0` and both delays are below
//!   `target / 2`. While it lasts, nothing is dropped.
//! - Early drop at enqueue (RFC 8033 sec. 4.1): none while the last delay is
//!   below `target / 2` and `p < 0.2`, nor while at most `2 mtu` bytes are
//!   queued. In `bytemode`, `p` is scaled by `size / mtu`. With
//!   `derandomize` (default on, as Linux) the probabilities are summed in
//!   `accu_prob`: no drop below 0.85, certain drop at 8.5, otherwise a
//!   random draw; any drop or mark restarts the sum.
//! - A drop decision CE-marks an ECN-capable packet instead when `ecn` is on
//!   and `p <= mark_ecn_threshold` (default 0.1); otherwise it drops.
//!   Drops are [`DropReason::Pie`], marks [`MarkReason::Pie`]. Randomness
//!   comes from `RngStream::new(seed, "pie")`.

use super::fifo::PacketFifo;
use super::ticker::Ticker;
use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::rng::RngStream;
use tcran_core::{ByteSize, ConfigError, DropReason, Duration, Instant, MarkReason, Packet};

/// PIE parameters. Defaults are RFC 8033's recommended values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PieConfig {
    /// QDELAY_REF, the delay PIE steers to. Default 15 ms.
    pub target: Duration,
    /// T_UPDATE, the period of the probability update. Default 15 ms.
    pub t_update: Duration,
    /// Integral gain, 1/s. Default 0.125.
    pub alpha: f64,
    /// Proportional gain, 1/s. Default 1.25.
    pub beta: f64,
    /// MAX_BURST: no early drop for this long after a calm period.
    /// Default 150 ms.
    pub max_burst: Duration,
    /// CE-mark ECN-capable packets while `p <= mark_ecn_threshold`.
    pub ecn: bool,
    /// Above this probability ECN-capable packets are dropped too. Default
    /// 0.1 (RFC 8033 sec. 5.1).
    pub mark_ecn_threshold: f64,
    /// Spread drops with the accumulated probability (RFC 8033 sec. 5.4).
    /// Default on, as Linux.
    pub derandomize: bool,
    /// Limit each increase of `p` to 0.02 once `p >= 0.1`. Default on.
    pub cap_drop_adjustment: bool,
    /// Scale the probability by packet size (small packets dropped less).
    pub bytemode: bool,
    /// Packet size for the `2 mtu` safeguard and byte mode. Default 1500 B.
    pub mtu: ByteSize,
    /// Seed of this queue's random stream. Default 1.
    pub seed: u64,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            ecn: false,
            mark_ecn_threshold: 0.1,
            derandomize: true,
            cap_drop_adjustment: true,
            bytemode: false,
            mtu: ByteSize(1500),
            seed: 1,
        }
    }
}

impl PieConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        check_range(
            "target",
            self.target,
            Duration::from_micros(1),
            Duration::from_secs(10),
        )?;
        check_range(
            "t_update",
            self.t_update,
            Duration::from_micros(100),
            Duration::from_secs(10),
        )?;
        check_f64("alpha", self.alpha, 0.0, 100.0)?;
        check_f64("beta", self.beta, 0.0, 100.0)?;
        check_range(
            "max_burst",
            self.max_burst,
            Duration::ZERO,
            Duration::from_secs(60),
        )?;
        check_f64("mark_ecn_threshold", self.mark_ecn_threshold, 0.0, 1.0)?;
        check_range("mtu", self.mtu, ByteSize(64), ByteSize(1_000_000))?;
        Ok(())
    }

    pub fn build(&self) -> Result<Pie, ConfigError> {
        self.validate()?;
        Ok(Pie {
            vars: PieVars {
                burst_allowance: self.max_burst,
                ..PieVars::default()
            },
            ticker: Ticker::new(self.t_update),
            rng: Box::new(RngStream::new(self.seed, "pie")),
            params: self.clone(),
            stats: PieStats::default(),
            fifo: PacketFifo::default(),
        })
    }

    /// Applies these parameters, keeping packets and the controller state
    /// (Linux `pie_change`). The update already scheduled keeps its instant.
    pub fn reconfigure(&self, pie: &mut Pie) -> Result<(), ConfigError> {
        self.validate()?;
        if self.seed != pie.params.seed {
            *pie.rng = RngStream::new(self.seed, "pie");
        }
        pie.ticker.set_period(self.t_update);
        pie.vars.burst_allowance = pie.vars.burst_allowance.min(self.max_burst);
        pie.params = self.clone();
        Ok(())
    }
}

/// RFC 8033 sec. 4.2 auto-tuning: the factor applied to the probability
/// step for the current probability `p`, so that a small `p` moves in
/// proportionally small steps.
pub fn auto_tune_scale(p: f64) -> f64 {
    if p < 1e-6 {
        1.0 / 2048.0
    } else if p < 1e-5 {
        1.0 / 512.0
    } else if p < 1e-4 {
        1.0 / 128.0
    } else if p < 1e-3 {
        1.0 / 32.0
    } else if p < 1e-2 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

/// PIE controller state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PieVars {
    /// Drop probability.
    pub prob: f64,
    /// Delay used by the last update.
    pub qdelay_old: Duration,
    /// Sojourn of the last dequeued packet (zero once the queue emptied):
    /// the delay the next update will use.
    pub qdelay: Duration,
    pub burst_allowance: Duration,
    /// Derandomisation accumulator.
    pub accu_prob: f64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PieStats {
    pub early_drops: u64,
    pub ecn_marks: u64,
    pub updates: u64,
    /// Largest single-update increase of `p` seen while `p >= 0.1`.
    pub max_increase_above_0_1: f64,
}

/// A PIE queue.
#[derive(Debug)]
pub struct Pie {
    params: PieConfig,
    vars: PieVars,
    stats: PieStats,
    ticker: Ticker,
    rng: Box<RngStream>,
    fifo: PacketFifo,
}

impl Pie {
    pub fn vars(&self) -> &PieVars {
        &self.vars
    }
    pub fn stats(&self) -> &PieStats {
        &self.stats
    }

    /// Runs the probability updates due by `now` (they also run on every
    /// enqueue and dequeue).
    pub fn advance(&mut self, now: Instant) {
        while let Some(_at) = self.ticker.pop_due(now) {
            let before = self.vars.clone();
            self.update();
            if self.vars == before {
                // qdelay is fixed until the next packet event: every further
                // update would leave the state as it is.
                self.ticker.skip_through(now);
                break;
            }
        }
    }

    /// RFC 8033 sec. 4.2, `calculate_drop_prob`.
    fn update(&mut self) {
        let p = &self.params;
        let v = &mut self.vars;
        let qdelay = v.qdelay.as_secs_f64();
        let qdelay_old = v.qdelay_old.as_secs_f64();
        let target = p.target.as_secs_f64();
        let mut delta = p.alpha * (qdelay - target) + p.beta * (qdelay - qdelay_old);
        delta *= auto_tune_scale(v.prob);
        if p.cap_drop_adjustment && v.prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        let before = v.prob;
        v.prob += delta;
        if v.qdelay.is_zero() && v.qdelay_old.is_zero() {
            v.prob *= 0.98;
        }
        v.prob = v.prob.clamp(0.0, 1.0);
        if before >= 0.1 {
            self.stats.max_increase_above_0_1 =
                self.stats.max_increase_above_0_1.max(v.prob - before);
        }
        v.burst_allowance = v.burst_allowance.saturating_sub(p.t_update);
        let half_target = Duration::from_nanos(p.target.as_nanos() / 2);
        if v.prob == 0.0 && v.qdelay < half_target && v.qdelay_old < half_target {
            v.burst_allowance = p.max_burst;
        }
        v.qdelay_old = v.qdelay;
        self.stats.updates += 1;
    }

    /// RFC 8033 sec. 4.1 `drop_early` with sec. 5.4 derandomisation.
    fn drop_early(&mut self, len: u32) -> bool {
        let p = &self.params;
        let v = &mut self.vars;
        if !v.burst_allowance.is_zero() {
            return false;
        }
        let half_target = Duration::from_nanos(p.target.as_nanos() / 2);
        if v.qdelay_old < half_target && v.prob < 0.2 {
            return false;
        }
        if self.fifo.bytes() <= 2 * p.mtu.0 {
            return false;
        }
        let prob = if p.bytemode && u64::from(len) <= p.mtu.0 {
            v.prob * f64::from(len) / p.mtu.0 as f64
        } else {
            v.prob
        };
        if p.derandomize {
            if prob == 0.0 {
                v.accu_prob = 0.0;
            } else {
                v.accu_prob += prob;
            }
            if v.accu_prob < 0.85 {
                return false;
            }
            if v.accu_prob >= 8.5 {
                v.accu_prob = 0.0;
                return true;
            }
        }
        if self.rng.bernoulli(prob) {
            v.accu_prob = 0.0;
            true
        } else {
            false
        }
    }

    fn at_rest(&self) -> bool {
        self.fifo.is_empty()
            && self.vars.prob == 0.0
            && self.vars.qdelay.is_zero()
            && self.vars.qdelay_old.is_zero()
            && self.vars.burst_allowance == self.params.max_burst
    }
}

impl Queue for Pie {
    fn enqueue(&mut self, mut packet: Packet, now: Instant, ev: &mut Events) {
        self.advance(now);
        if self.drop_early(packet.len) {
            let may_mark = self.params.ecn && self.vars.prob <= self.params.mark_ecn_threshold;
            if may_mark && ev.mark(&mut packet, MarkReason::Pie) {
                self.stats.ecn_marks += 1;
            } else {
                self.stats.early_drops += 1;
                ev.drop(packet, DropReason::Pie);
                return;
            }
        }
        self.fifo.push_back(packet);
    }

    fn dequeue(&mut self, now: Instant, _ev: &mut Events) -> Option<Packet> {
        self.advance(now);
        let packet = self.fifo.pop_front()?;
        self.vars.qdelay = if self.fifo.is_empty() {
            Duration::ZERO
        } else {
            now.saturating_since(packet.enqueued_at)
        };
        Some(packet)
    }

    crate::queue::fifo::fifo_storage!(fifo);
    fn next_wakeup(&self) -> Option<Instant> {
        if self.at_rest() {
            None
        } else {
            self.ticker.next()
        }
    }
    fn aqm_stats(&self) -> AqmStats {
        AqmStats {
            probability: Some(self.vars.prob),
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

    #[test]
    fn auto_tuning_follows_the_rfc_8033_table() {
        let table = [
            (0.0, 1.0 / 2048.0),
            (9.9e-7, 1.0 / 2048.0),
            (1e-6, 1.0 / 512.0),
            (9.9e-6, 1.0 / 512.0),
            (1e-5, 1.0 / 128.0),
            (5e-5, 1.0 / 128.0),
            (1e-4, 1.0 / 32.0),
            (5e-4, 1.0 / 32.0),
            (1e-3, 1.0 / 8.0),
            (5e-3, 1.0 / 8.0),
            (1e-2, 1.0 / 2.0),
            (0.099, 1.0 / 2.0),
            (0.1, 1.0),
            (0.7, 1.0),
        ];
        for (p, scale) in table {
            assert_eq!(auto_tune_scale(p), scale, "p = {p}");
        }
    }

    /// Two updates by hand (RFC 8033 sec. 4.2, defaults): the last dequeue
    /// saw 10 ms. t=15: delta = 0.125 (0.010 - 0.015) + 1.25 (0.010 - 0)
    /// = 0.011875, scaled by 1/2048 (p = 0). t=30: delta = 0.125 (-0.005)
    /// = -0.000625, scaled by 1/512 (1e-6 <= p < 1e-5).
    #[test]
    fn update_applies_the_pi_step_with_auto_tuning() {
        let mut q = PieConfig::default().build().unwrap();
        let mut ev = Events::default();
        for id in 0..10 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        q.dequeue(ms(10), &mut ev);
        q.advance(ms(15));
        let p1 = 0.011875 / 2048.0;
        assert!((q.vars().prob - p1).abs() < 1e-15, "{}", q.vars().prob);
        assert_eq!(q.vars().qdelay_old, Duration::from_millis(10));
        assert_eq!(q.next_wakeup(), Some(ms(30)));
        q.advance(ms(30));
        let p2 = p1 - 0.000625 / 512.0;
        assert!((q.vars().prob - p2).abs() < 1e-15, "{}", q.vars().prob);
    }

    #[test]
    fn probability_decays_two_percent_per_update_when_idle() {
        let mut q = PieConfig::default().build().unwrap();
        let mut ev = Events::default();
        q.enqueue(pkt(0, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.dequeue(ms(1), &mut ev);
        q.vars.prob = 0.5;
        q.advance(ms(15));
        q.advance(ms(30));
        // Both updates saw qdelay = qdelay_old = 0: delta = -alpha target.
        let mut expect = 0.5;
        for _ in 0..2 {
            expect = ((expect - 0.125 * 0.015) * 0.98f64).clamp(0.0, 1.0);
        }
        assert!((q.vars().prob - expect).abs() < 1e-12);
    }

    /// Skipping idle updates is exact: a long silence ends at rest, with no
    /// wakeup requested.
    #[test]
    fn long_idle_periods_settle_and_stop_asking_for_wakeups() {
        let mut q = PieConfig::default().build().unwrap();
        let mut ev = Events::default();
        q.enqueue(pkt(0, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.dequeue(ms(1), &mut ev);
        q.vars.prob = 0.9;
        q.advance(ms(3_600_000));
        assert_eq!(q.vars().prob, 0.0);
        assert_eq!(q.vars().burst_allowance, Duration::from_millis(150));
        assert_eq!(q.next_wakeup(), None);
    }

    /// The ns-3 PIE scenario (algorithms.md sec. 2.3): 400 1000-byte
    /// arrivals every 10 ms from 10 ms, 400 dequeues every `service`, a
    /// 300-packet limit. Returns (early drops, forced drops, marks) summed
    /// over ten seeds.
    fn ns3_run(cfg: &PieConfig, service: Duration, ecn: Ecn) -> (u64, u64, u64) {
        let mut totals = (0, 0, 0);
        for seed in 1..=10 {
            let mut q = PieConfig {
                seed,
                ..cfg.clone()
            }
            .build()
            .unwrap();
            let mut ev = Events::default();
            let (mut arrived, mut served) = (0u64, 0u64);
            while arrived < 400 || served < 400 {
                let next_arrival = ms(10 * (arrived + 1));
                let next_service =
                    Instant::ZERO + Duration::from_nanos(service.as_nanos() * (served + 1));
                if arrived < 400 && (served == 400 || next_arrival <= next_service) {
                    arrived += 1;
                    if q.packets() >= 300 {
                        totals.1 += 1;
                    } else {
                        q.enqueue(pkt(arrived, 1000, ecn, next_arrival), next_arrival, &mut ev);
                    }
                } else {
                    served += 1;
                    q.dequeue(next_service, &mut ev);
                }
            }
            totals.0 += q.stats().early_drops;
            totals.2 += q.stats().ecn_marks;
        }
        totals
    }

    /// ns-3 case 2 parameters (derandomisation off, as ns-3's default).
    fn case2() -> PieConfig {
        PieConfig {
            t_update: Duration::from_millis(30),
            target: Duration::from_millis(20),
            max_burst: Duration::from_millis(100),
            derandomize: false,
            mtu: ByteSize(1000),
            ..PieConfig::default()
        }
    }

    /// Relations 2-5: some early and no forced drops; a higher target drops
    /// less; a slower link drops more; a slower update drops less.
    #[test]
    fn ns3_relations_2_to_5() {
        let (d2, f2, _) = ns3_run(&case2(), Duration::from_millis(12), Ecn::NotEct);
        assert!(d2 > 0);
        assert_eq!(f2, 0);
        let target80 = PieConfig {
            target: Duration::from_millis(80),
            ..case2()
        };
        let (d3, _, _) = ns3_run(&target80, Duration::from_millis(12), Ecn::NotEct);
        assert!(d3 < d2, "case 3 {d3} vs case 2 {d2}");
        let (d4, _, _) = ns3_run(&case2(), Duration::from_millis(15), Ecn::NotEct);
        assert!(d4 > d2, "case 4 {d4} vs case 2 {d2}");
        let slow_update = PieConfig {
            t_update: Duration::from_millis(90),
            ..case2()
        };
        let (d5, _, _) = ns3_run(&slow_update, Duration::from_millis(15), Ecn::NotEct);
        assert!(d5 < d4, "case 5 {d5} vs case 4 {d4}");
    }

    /// Relations 7-8: without the cap some update raises p by more than
    /// 0.02 while p >= 0.1; with it, none does.
    #[test]
    fn ns3_relations_7_and_8_cap_the_increase_above_ten_percent() {
        let run = |cap: bool| {
            let cfg = PieConfig {
                cap_drop_adjustment: cap,
                ..case2()
            };
            let mut q = cfg.build().unwrap();
            let mut ev = Events::default();
            for k in 1..=400u64 {
                q.enqueue(pkt(k, 1000, Ecn::NotEct, ms(10 * k)), ms(10 * k), &mut ev);
                if k % 7 < 5 {
                    q.dequeue(ms(10 * k + 5), &mut ev);
                }
            }
            q.stats().max_increase_above_0_1
        };
        let uncapped = run(false);
        let capped = run(true);
        assert!(uncapped > 0.02, "{uncapped}");
        assert!(capped <= 0.02 + 1e-12 && capped > 0.0, "{capped}");
    }

    /// Relation 12: derandomisation adds exactly p per packet that reaches
    /// it and does not signal.
    #[test]
    fn ns3_relation_12_accumulator_adds_exactly_p() {
        let mut q = PieConfig {
            max_burst: Duration::ZERO,
            derandomize: true,
            ..case2()
        }
        .build()
        .unwrap();
        let mut ev = Events::default();
        let mut additions = 0;
        for k in 1..=400u64 {
            let now = ms(10 * k);
            q.advance(now);
            let (before, p, drops) = (q.vars().accu_prob, q.vars().prob, ev.dropped.len());
            let reaches =
                !(q.vars().qdelay_old < Duration::from_millis(10) && p < 0.2) && q.bytes() > 2000;
            q.enqueue(pkt(k, 1000, Ecn::NotEct, now), now, &mut ev);
            let after = q.vars().accu_prob;
            if !reaches {
                assert_eq!(after, before);
            } else if ev.dropped.len() > drops || p == 0.0 {
                assert_eq!(after, 0.0);
            } else {
                assert_eq!(after, before + p);
                additions += 1;
            }
            if k % 5 != 0 {
                q.dequeue(ms(10 * k + 5), &mut ev);
            }
        }
        assert!(additions > 50, "{additions}");
    }

    /// Relation 13: with the accumulator held at -0.16 before each arrival
    /// it never reaches 0.85, so nothing is dropped early.
    #[test]
    fn ns3_relation_13_accumulator_below_threshold_never_drops() {
        let mut q = PieConfig {
            max_burst: Duration::ZERO,
            derandomize: true,
            ..case2()
        }
        .build()
        .unwrap();
        let mut ev = Events::default();
        for k in 1..=400u64 {
            q.vars.accu_prob = -0.16;
            q.enqueue(pkt(k, 1000, Ecn::NotEct, ms(10 * k)), ms(10 * k), &mut ev);
            if k % 5 != 0 {
                q.dequeue(ms(10 * k + 5), &mut ev);
            }
        }
        assert!(q.vars().prob > 0.1, "the queue was congested");
        assert_eq!(q.stats().early_drops, 0);
    }

    /// ECN: marks while p <= threshold, drops above; Not-ECT always dropped.
    #[test]
    fn ecn_marks_only_capable_packets_below_the_threshold() {
        let ecn = PieConfig {
            ecn: true,
            mark_ecn_threshold: 0.3,
            ..case2()
        };
        let (drops, _, marks) = ns3_run(&ecn, Duration::from_millis(15), Ecn::NotEct);
        assert!(drops > 0 && marks == 0);
        let (drops, _, marks) = ns3_run(&case2(), Duration::from_millis(15), Ecn::Ect0);
        assert!(drops > 0 && marks == 0);
        let (_, _, marks) = ns3_run(&ecn, Duration::from_millis(15), Ecn::Ect0);
        assert!(marks > 0);
    }

    #[test]
    fn burst_allowance_protects_the_first_max_burst() {
        let mut q = PieConfig::default().build().unwrap();
        let mut ev = Events::default();
        q.vars.prob = 1.0;
        q.vars.qdelay_old = Duration::from_millis(100);
        for k in 0..100u64 {
            q.enqueue(pkt(k, 1000, Ecn::NotEct, ms(k)), ms(k), &mut ev);
        }
        assert!(ev.dropped.is_empty(), "within 150 ms of allowance");
        for k in 200..300u64 {
            q.enqueue(pkt(k, 1000, Ecn::NotEct, ms(k)), ms(k), &mut ev);
        }
        assert!(!ev.dropped.is_empty());
    }

    #[test]
    fn config_errors_name_field_value_and_range() {
        let e = PieConfig {
            alpha: -1.0,
            ..PieConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.to_string(), "alpha = -1: must be a number in 0..=100");
        let c: crate::QueueConfig =
            toml::from_str("id = 0\nkind = \"pie\"\ntarget = \"20ms\"\nbytemode = true").unwrap();
        let QueueKindConfig::Pie(p) = &c.kind else {
            panic!()
        };
        assert!(p.bytemode && p.derandomize);
        assert!(
            toml::from_str::<crate::QueueConfig>("id = 0\nkind = \"pie\"\ntarget = 20").is_err()
        );
    }

    #[test]
    fn reconfigure_keeps_packets_and_probability() {
        let mut q = QueueKindConfig::Pie(case2()).build().unwrap();
        let mut ev = Events::default();
        for k in 1..=200u64 {
            q.enqueue(pkt(k, 1000, Ecn::NotEct, ms(10 * k)), ms(10 * k), &mut ev);
            if k % 4 != 0 {
                q.dequeue(ms(10 * k + 5), &mut ev);
            }
        }
        let AnyQueue::Pie(p) = &q else { panic!() };
        let (vars, held) = (p.vars().clone(), q.packets());
        assert!(vars.prob > 0.0);
        let new = QueueKindConfig::Pie(PieConfig {
            target: Duration::from_millis(5),
            ..case2()
        });
        assert!(new.reconfigure(&mut q).unwrap());
        let AnyQueue::Pie(p) = &q else { panic!() };
        assert_eq!((p.vars(), q.packets()), (&vars, held));
        assert_eq!(p.params.target, Duration::from_millis(5));
    }

    proptest! {
        #[test]
        fn conserves_packets_under_random_operations(ops in ops(), ecn: bool, derandomize: bool, bytemode: bool) {
            let mut q = PieConfig {
                ecn,
                derandomize,
                bytemode,
                max_burst: Duration::ZERO,
                ..PieConfig::default()
            }
            .build()
            .unwrap();
            check_conservation(&mut q, &ops)?;
        }
    }
}
