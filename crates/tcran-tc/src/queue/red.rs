//! RED, Random Early Detection (Floyd & Jacobson 1993), with the "gentle"
//! extension (Floyd 2000) and the "wait" uniformisation of ns-3
//! (reference/algorithms.md sec. 1.6).
//!
//! Contract:
//! - Acts at enqueue only, on the arriving packet. Each arrival updates the
//!   average queue length `avg <- avg * (1 - w_q)^(m + 1) + w_q * q`, where
//!   `q` is the number of packets held before the arrival and `m` the
//!   number of packets the link could have sent while the queue was idle.
//! - `avg < min_th` (or at most one packet queued): accept. The first
//!   arrival after `avg` crosses `min_th` is accepted and restarts `count`.
//! - `min_th <= avg < max_th`: drop (or CE-mark with `ecn` and an
//!   ECN-capable packet) with `p_b = max_p (avg - min_th) / (max_th -
//!   min_th)`, spread out by the packets since the last drop, `count`:
//!   classic `p_a = p_b / (1 - count p_b)`; with `wait` (default) no drop
//!   while `count p_b < 1`, then `p_b / (2 - count p_b)`.
//! - `gentle` (default): between `max_th` and `2 max_th`, `p_b` rises
//!   linearly from `max_p` to 1; without it, and above `2 max_th` with it,
//!   every arrival is a forced drop. Forced signals drop even ECN-capable
//!   packets when `hard_drop` (default, ns-3 `UseHardDrop`; Linux marks
//!   unless its `harddrop` flag is set).
//! - Idle-time correction needs the link's packet rate, which the queue
//!   cannot know in a RAN bearer (the MAC grant varies per TTI). It is
//!   applied only when `link_rate` is configured (packets of
//!   `mean_packet_size`); otherwise `m = 0` and `avg` decays only with
//!   arrivals. Idle starts when a dequeue empties the queue.
//! - Thresholds count packets (no byte mode). Drops are
//!   [`DropReason::Red`], marks [`MarkReason::Red`]. Randomness comes from
//!   the seeded stream `RngStream::new(seed, "red")`.

use super::fifo::PacketFifo;
use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::rng::RngStream;
use tcran_core::{BitRate, ByteSize, ConfigError, DropReason, Instant, MarkReason, Packet};

/// RED parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RedConfig {
    /// Average queue length (packets) where early drops start. Default 5
    /// (ns-3 `MinTh`).
    pub min_th: f64,
    /// Average queue length (packets) where the probability reaches
    /// `max_p`. Default 15 (ns-3 `MaxTh`; Floyd: at least 2-3 x `min_th`).
    pub max_th: f64,
    /// EWMA weight of the average queue length. Default 0.002 (Floyd).
    pub w_q: f64,
    /// Drop probability at `max_th`. Default 0.1 (Floyd's recommendation
    /// for gentle RED).
    pub max_p: f64,
    /// Probability rises from `max_p` to 1 between `max_th` and `2 max_th`
    /// instead of jumping to 1. Default on (Floyd 2000).
    pub gentle: bool,
    /// No early drop until `count p_b >= 1` (ns-3 `Wait`). Default on.
    pub wait: bool,
    /// CE-mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
    /// Forced signals (above `max_th`, or `2 max_th` gentle) always drop,
    /// even with `ecn`. Default on (ns-3 `UseHardDrop`).
    pub hard_drop: bool,
    /// Link rate for the idle-time correction; none (default) disables it.
    pub link_rate: Option<BitRate>,
    /// Packet size assumed by the idle-time correction. Default 1000 B.
    pub mean_packet_size: ByteSize,
    /// Seed of this queue's random stream. Default 1.
    pub seed: u64,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            gentle: true,
            wait: true,
            ecn: false,
            hard_drop: true,
            link_rate: None,
            mean_packet_size: ByteSize(1000),
            seed: 1,
        }
    }
}

impl RedConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        check_f64("min_th", self.min_th, 0.0, 1e7)?;
        check_f64("max_th", self.max_th, 0.0, 1e7)?;
        if self.max_th <= self.min_th {
            return Err(ConfigError::new(
                "max_th",
                self.max_th,
                format!("must be greater than min_th ({})", self.min_th),
            ));
        }
        check_f64("w_q", self.w_q, 1e-9, 1.0)?;
        check_f64("max_p", self.max_p, 0.0, 1.0)?;
        if let Some(rate) = self.link_rate {
            check_range(
                "link_rate",
                rate,
                BitRate(1_000),
                BitRate(10_000_000_000_000),
            )?;
        }
        check_range(
            "mean_packet_size",
            self.mean_packet_size,
            ByteSize(1),
            ByteSize(1_000_000),
        )?;
        Ok(())
    }

    pub fn build(&self) -> Result<Red, ConfigError> {
        self.validate()?;
        Ok(Red {
            params: self.clone(),
            vars: RedVars::default(),
            stats: RedStats::default(),
            rng: Box::new(RngStream::new(self.seed, "red")),
            fifo: PacketFifo::default(),
        })
    }

    /// Applies these parameters, keeping packets, the average and `count`
    /// (Linux `red_change` keeps them too). A new seed restarts the stream.
    pub fn reconfigure(&self, red: &mut Red) -> Result<(), ConfigError> {
        self.validate()?;
        if self.seed != red.params.seed {
            *red.rng = RngStream::new(self.seed, "red");
        }
        red.params = self.clone();
        Ok(())
    }
}

/// RED state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RedVars {
    /// Average queue length, packets.
    pub avg: f64,
    /// Arrivals since the last drop (or since `avg` crossed `min_th`).
    pub count: u64,
    /// `avg` was above `min_th` at the previous arrival (ns-3 `m_old`).
    pub above_min_th: bool,
    /// The probability used for the last arrival in the early region.
    pub prob: f64,
    /// When a dequeue last emptied the queue.
    pub idle_since: Option<Instant>,
}

/// RED counters by kind of signal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedStats {
    pub early_drops: u64,
    pub forced_drops: u64,
    pub early_marks: u64,
    pub forced_marks: u64,
}

/// A RED queue.
#[derive(Debug)]
pub struct Red {
    params: RedConfig,
    vars: RedVars,
    stats: RedStats,
    rng: Box<RngStream>,
    fifo: PacketFifo,
}

enum Verdict {
    Accept,
    Early,
    Forced,
}

impl Red {
    pub fn vars(&self) -> &RedVars {
        &self.vars
    }
    pub fn stats(&self) -> &RedStats {
        &self.stats
    }

    /// Packets the link could have sent while the queue sat idle.
    fn idle_packets(&self, idle_since: Instant, now: Instant) -> f64 {
        let Some(rate) = self.params.link_rate else {
            return 0.0;
        };
        let bytes = rate.bytes_in(now.saturating_since(idle_since));
        (bytes / self.params.mean_packet_size.0 as f64).floor()
    }

    /// Floyd's `p_b`: the base probability for the current average.
    fn base_probability(&self) -> f64 {
        let p = &self.params;
        let avg = self.vars.avg;
        if avg >= p.max_th {
            if p.gentle {
                p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
            } else {
                1.0
            }
        } else {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        }
    }

    /// Spreads drops evenly instead of geometrically (Floyd sec. 7).
    fn uniformised(&self, p_b: f64) -> f64 {
        let c = self.vars.count as f64 * p_b;
        let p_a = if self.params.wait {
            if c < 1.0 {
                0.0
            } else if c < 2.0 {
                p_b / (2.0 - c)
            } else {
                1.0
            }
        } else if c < 1.0 {
            p_b / (1.0 - c)
        } else {
            1.0
        };
        p_a.clamp(0.0, 1.0)
    }

    fn decide(&mut self, now: Instant) -> Verdict {
        let queued = self.fifo.len();
        let idle = self
            .vars
            .idle_since
            .take()
            .map_or(0.0, |t| self.idle_packets(t, now));
        let w = self.params.w_q;
        self.vars.avg = self.vars.avg * (1.0 - w).powf(idle + 1.0) + w * queued as f64;
        self.vars.count += 1;
        let (avg, p) = (self.vars.avg, &self.params);
        if avg < p.min_th || queued <= 1 {
            self.vars.prob = 0.0;
            self.vars.above_min_th = false;
            return Verdict::Accept;
        }
        let forced_from = if p.gentle { 2.0 * p.max_th } else { p.max_th };
        if avg >= forced_from {
            self.vars.prob = 1.0;
            return Verdict::Forced;
        }
        if !self.vars.above_min_th {
            self.vars.above_min_th = true;
            self.vars.count = 1;
            return Verdict::Accept;
        }
        let p_a = self.uniformised(self.base_probability());
        self.vars.prob = p_a;
        if self.rng.bernoulli(p_a) {
            Verdict::Early
        } else {
            Verdict::Accept
        }
    }
}

impl Queue for Red {
    fn enqueue(&mut self, mut packet: Packet, now: Instant, ev: &mut Events) {
        match self.decide(now) {
            Verdict::Accept => {}
            Verdict::Early => {
                self.vars.count = 0;
                if !(self.params.ecn && ev.mark(&mut packet, MarkReason::Red)) {
                    self.stats.early_drops += 1;
                    ev.drop(packet, DropReason::Red);
                    return;
                }
                self.stats.early_marks += 1;
            }
            Verdict::Forced => {
                self.vars.count = 0;
                let may_mark = self.params.ecn && !self.params.hard_drop;
                if !(may_mark && ev.mark(&mut packet, MarkReason::Red)) {
                    self.stats.forced_drops += 1;
                    ev.drop(packet, DropReason::Red);
                    return;
                }
                self.stats.forced_marks += 1;
            }
        }
        self.fifo.push_back(packet);
    }

    fn dequeue(&mut self, now: Instant, _ev: &mut Events) -> Option<Packet> {
        let packet = self.fifo.pop_front();
        if packet.is_some() && self.fifo.is_empty() {
            self.vars.idle_since = Some(now);
        }
        packet
    }

    crate::queue::fifo::fifo_storage!(fifo);
    fn aqm_stats(&self) -> AqmStats {
        AqmStats {
            probability: Some(self.vars.prob),
            average: Some(self.vars.avg),
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

    /// ns-3 red test setup: `n` back-to-back 500-byte arrivals, no dequeue.
    fn back_to_back(cfg: &RedConfig, n: u64, ecn: Ecn) -> (Red, Events) {
        let mut q = cfg.build().unwrap();
        let mut ev = Events::default();
        for id in 0..n {
            q.enqueue(pkt(id, 500, ecn, ms(0)), ms(0), &mut ev);
        }
        (q, ev)
    }

    /// Total early/forced drops over several seeds: the ns-3 relations are
    /// statistical, summing keeps them from hinging on one draw.
    fn drops_over_seeds(cfg: &RedConfig) -> u64 {
        (1..=10)
            .map(|seed| {
                let (q, _) = back_to_back(
                    &RedConfig {
                        seed,
                        ..cfg.clone()
                    },
                    300,
                    Ecn::NotEct,
                );
                q.stats().early_drops + q.stats().forced_drops
            })
            .sum()
    }

    /// ns-3 case 3 parameters: min 70, max 150, qW 0.02, LInterm 50.
    fn case3() -> RedConfig {
        RedConfig {
            min_th: 70.0,
            max_th: 150.0,
            w_q: 0.02,
            max_p: 1.0 / 50.0,
            ..RedConfig::default()
        }
    }

    /// algorithms.md sec. 2.4 case 2: qW 0.002 keeps avg near 70 for 300
    /// arrivals; with max_p 0.02 and "wait", count p_b < 1: no drop at all.
    /// [derived] avg crosses 70 at the 291st arrival and is ~74.2 after 300.
    #[test]
    fn ns3_case2_slow_average_never_drops() {
        let cfg = RedConfig {
            w_q: 0.002,
            ..case3()
        };
        let mut q = cfg.build().unwrap();
        let mut ev = Events::default();
        let mut crossed_at = None;
        for id in 1..=300u64 {
            q.enqueue(pkt(id, 500, Ecn::NotEct, ms(0)), ms(0), &mut ev);
            if crossed_at.is_none() && q.vars().avg >= 70.0 {
                crossed_at = Some(id);
            }
        }
        assert_eq!(crossed_at, Some(291));
        assert!((q.vars().avg - 74.2).abs() < 0.1, "{}", q.vars().avg);
        assert!(ev.dropped.is_empty());
        assert_eq!(q.packets(), 300);
    }

    /// Cases 3-7: qW 0.02 gives early drops ([derived]: avg crosses 70 at
    /// the 116th arrival); a lower max_th, a higher max_p (LInterm 5),
    /// gentle off and wait off each drop more.
    #[test]
    fn ns3_cases3_to_7_drop_relations() {
        let mut q = case3().build().unwrap();
        let mut ev = Events::default();
        let mut crossed_at = None;
        for id in 1..=300u64 {
            q.enqueue(pkt(id, 500, Ecn::NotEct, ms(0)), ms(0), &mut ev);
            if crossed_at.is_none() && q.vars().avg >= 70.0 {
                crossed_at = Some(id);
            }
        }
        assert_eq!(crossed_at, Some(116));
        let base = drops_over_seeds(&case3());
        assert!(base > 0);
        let variants = [
            (
                "max_th 100",
                RedConfig {
                    max_th: 100.0,
                    ..case3()
                },
            ),
            (
                "LInterm 5",
                RedConfig {
                    max_p: 0.2,
                    ..case3()
                },
            ),
            (
                "gentle off",
                RedConfig {
                    gentle: false,
                    ..case3()
                },
            ),
            (
                "wait off",
                RedConfig {
                    wait: false,
                    ..case3()
                },
            ),
        ];
        for (name, cfg) in variants {
            let d = drops_over_seeds(&cfg);
            assert!(d > base, "{name}: {d} drops, base {base}");
        }
    }

    /// ns-3 ECN cases: min 30, max 90, qW 0.002, LInterm 2.
    fn ecn_case(ecn: bool) -> RedConfig {
        RedConfig {
            min_th: 30.0,
            max_th: 90.0,
            w_q: 0.002,
            max_p: 0.5,
            ecn,
            ..RedConfig::default()
        }
    }

    #[test]
    fn ns3_ecn_cases_mark_only_ect_packets_with_ecn_enabled() {
        let (q, ev) = back_to_back(&ecn_case(true), 300, Ecn::NotEct);
        assert!(q.stats().early_drops > 0);
        assert_eq!(ev.marks.total(), 0);
        let (q, ev) = back_to_back(&ecn_case(false), 300, Ecn::Ect0);
        assert!(q.stats().early_drops > 0);
        assert_eq!(ev.marks.total(), 0);
        let (q, ev) = back_to_back(&ecn_case(true), 300, Ecn::Ect0);
        assert_eq!(q.stats().early_drops, 0);
        assert!(ev.marks.get(MarkReason::Red) > 0);
        assert_eq!(ev.marks.get(MarkReason::Red), q.stats().early_marks);
    }

    #[test]
    fn forced_region_drops_everything_without_gentle() {
        let cfg = RedConfig {
            min_th: 2.0,
            max_th: 4.0,
            w_q: 1.0,
            gentle: false,
            ..RedConfig::default()
        };
        let (q, _) = back_to_back(&cfg, 50, Ecn::NotEct);
        // With w_q = 1 the average is the length found on arrival, so every
        // arrival that finds 4 packets (max_th) is a forced drop.
        assert_eq!(q.packets(), 4);
        assert!(q.stats().forced_drops > 0);
    }

    /// The idle correction ages the average by the packets the link could
    /// have sent: 1 s at 1 Mbit/s with 1000-byte packets is m = 125.
    #[test]
    fn idle_time_decays_the_average_by_virtual_departures() {
        let cfg = RedConfig {
            link_rate: Some(BitRate::from_mbps(1)),
            ..RedConfig::default()
        };
        let mut q = cfg.build().unwrap();
        let mut ev = Events::default();
        for id in 0..20 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        while q.dequeue(ms(10), &mut ev).is_some() {}
        let avg = q.vars().avg;
        q.enqueue(pkt(99, 1000, Ecn::NotEct, ms(1010)), ms(1010), &mut ev);
        let expect = avg * (1.0f64 - 0.002).powi(126);
        assert!((q.vars().avg - expect).abs() < 1e-12);
        let plain = RedConfig::default().build().unwrap();
        assert!(plain.params.link_rate.is_none());
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = RedConfig {
            min_th: 10.0,
            max_th: 10.0,
            ..RedConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.field, "max_th");
        let e = RedConfig {
            w_q: 0.0,
            ..RedConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "w_q = 0: must be a number in 0.000000001..=1"
        );
        let c: crate::QueueConfig = toml::from_str(
            "id = 1\nkind = \"red\"\nmin_th = 30\nmax_th = 90.0\nlink_rate = \"10Mbit/s\"",
        )
        .unwrap();
        assert_eq!(c.kind.kind_name(), "red");
    }

    #[test]
    fn reconfigure_keeps_packets_average_and_count() {
        let mut q = QueueKindConfig::Red(case3()).build().unwrap();
        let mut ev = Events::default();
        for id in 0..200 {
            q.enqueue(pkt(id, 500, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        let AnyQueue::Red(r) = &q else { panic!() };
        let (vars, held) = (r.vars().clone(), q.packets());
        assert!(vars.avg > 70.0);
        let new = QueueKindConfig::Red(RedConfig {
            max_p: 0.5,
            ..case3()
        });
        assert!(new.reconfigure(&mut q).unwrap());
        let AnyQueue::Red(r) = &q else { panic!() };
        assert_eq!((r.vars(), q.packets()), (&vars, held));
        assert_eq!(r.params.max_p, 0.5);
    }

    proptest! {
        #[test]
        fn conserves_packets_under_random_operations(ops in ops(), ecn: bool, gentle: bool) {
            let mut q = RedConfig {
                min_th: 3.0,
                max_th: 9.0,
                w_q: 0.05,
                ecn,
                gentle,
                hard_drop: !ecn,
                link_rate: Some(BitRate::from_mbps(10)),
                ..RedConfig::default()
            }
            .build()
            .unwrap();
            check_conservation(&mut q, &ops)?;
        }
    }
}
