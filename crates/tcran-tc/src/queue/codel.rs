//! CoDel, "Controlled Delay" (RFC 8289), with the semantics of Linux
//! `include/net/codel_impl.h` (reference/algorithms.md sec. 1.1, 1.11).
//!
//! Contract:
//! - Acts at dequeue only. A packet whose sojourn stayed at or above
//!   `target` for more than `interval` (strictly after, as Linux), with more
//!   than `mtu` bytes still queued behind it, may be dropped (or CE-marked
//!   with `ecn = true` and an ECN-capable packet). In the dropping state the
//!   next drop is scheduled `interval / sqrt(count)` after the previous one
//!   (RFC 8289 sec. 3.3 control law); drops are reported as
//!   [`DropReason::Codel`], marks as [`MarkReason::Codel`].
//! - Re-entering the dropping state soon after leaving it (less than 16
//!   intervals after the last scheduled drop) restarts from the previous
//!   drop rate: `count = count - lastcount` when that is above 1 (RFC 8289
//!   dequeue pseudo-code; Linux `codel_dequeue`).
//! - `ce_threshold`: any ECN-capable packet leaving with a sojourn strictly
//!   above it is CE-marked ([`MarkReason::CeThreshold`]), like Linux
//!   `ce_threshold`. A packet CoDel itself has just marked is not counted a
//!   second time (ns-3 behaviour; Linux counts both).
//! - Time base: Linux `codel_time_t`, nanoseconds >> 10 (1.024 us ticks), so
//!   the fixed-point control law is bit-identical to Linux. We keep the
//!   ticks in 64 bits, so there is no 71-minute wrap.
//! - `inv_sqrt = "newton"` (default): 1/sqrt(count) is Linux's Q0.16
//!   `rec_inv_sqrt`, refined by one Newton step per count change, and
//!   `control_law(t) = t + ((interval * (rec_inv_sqrt << 16)) >> 32)`. The
//!   approximation is coarse for small counts (count 2 gives 0.5, not 0.707)
//!   and changes observable drop counts (algorithms.md sec. 2.1.3).
//!   `"exact"`: `t + interval / sqrt(count)` in floating point, as RFC 8289.
//! - The MTU floor compares the backlog *after* removing the packet under
//!   test with `mtu` (`backlog <= mtu` means no drop), as Linux.

use super::fifo::PacketFifo;
use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, DropReason, Duration, Instant, MarkReason, Packet};

/// Linux `CODEL_SHIFT`: CoDel time counts units of 2^10 ns.
const CODEL_SHIFT: u32 = 10;
/// Linux `REC_INV_SQRT_SHIFT`: `rec_inv_sqrt` keeps the top 16 bits of a
/// Q0.32 number.
const REC_INV_SQRT_SHIFT: u32 = 16;
/// Q0.16 approximation of 1.0, the value for count 1 (Linux `~0U >> 16`).
const REC_INV_SQRT_ONE: u16 = u16::MAX;

fn ticks(t: Instant) -> u64 {
    t.as_nanos() >> CODEL_SHIFT
}

fn duration_ticks(d: Duration) -> u64 {
    d.as_nanos() >> CODEL_SHIFT
}

/// One Newton-Raphson step for 1/sqrt(count) in Q0.16, bit-identical to
/// Linux `codel_Newton_step`: x' = x * (3 - count * x^2) / 2, computed in
/// Q0.32 with the intermediate scaled down by 4 so the product fits 64 bits.
/// Wrapping arithmetic reproduces Linux for out-of-range inputs too.
pub fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let x = u64::from(rec_inv_sqrt) << REC_INV_SQRT_SHIFT;
    let x_squared = (x * x) >> 32;
    let three_minus = (3u64 << 32).wrapping_sub(u64::from(count).wrapping_mul(x_squared));
    let next = ((three_minus >> 2).wrapping_mul(x)) >> (32 - 2 + 1);
    (next >> REC_INV_SQRT_SHIFT) as u16
}

/// Linux `codel_control_law`: `t + interval * rec_inv_sqrt`, where
/// `reciprocal_scale` multiplies by a Q0.32 fraction. `t` and `interval` are
/// CoDel ticks; `interval` must fit 32 bits as in Linux.
pub fn control_law_fixed(t: u64, interval: u32, rec_inv_sqrt: u16) -> u64 {
    let fraction = u64::from(rec_inv_sqrt) << REC_INV_SQRT_SHIFT;
    t + ((u64::from(interval) * fraction) >> 32)
}

/// How 1/sqrt(count) is computed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InvSqrt {
    /// Linux/ns-3 Q0.16 with one Newton step per count change.
    #[default]
    Newton,
    /// Floating-point `interval / sqrt(count)` (RFC 8289 pseudo-code).
    Exact,
}

/// CoDel parameters (Linux `codel_params`). Defaults are RFC 8289's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CodelConfig {
    /// Acceptable standing sojourn. Default 5 ms (RFC 8289).
    pub target: Duration,
    /// Sliding window for the minimum sojourn, about a worst-case RTT.
    /// Default 100 ms (RFC 8289).
    pub interval: Duration,
    /// No drop while this many bytes or fewer remain queued (RFC 8289
    /// "MAXPACKET"). Default 1500 B: the RAN carries IP packets, no
    /// Ethernet header.
    pub mtu: ByteSize,
    /// CE-mark ECN-capable packets instead of dropping them. Default off
    /// (Linux sch_codel).
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this. Default off.
    pub ce_threshold: Option<Duration>,
    /// `"newton"` (Linux fixed point, default) or `"exact"`.
    pub inv_sqrt: InvSqrt,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu: ByteSize(1500),
            ecn: false,
            ce_threshold: None,
            inv_sqrt: InvSqrt::Newton,
        }
    }
}

/// Validated parameters in CoDel ticks.
#[derive(Debug, Clone, PartialEq)]
struct Params {
    target: u64,
    interval: u32,
    mtu: u64,
    ecn: bool,
    ce_threshold: Option<u64>,
    inv_sqrt: InvSqrt,
}

impl CodelConfig {
    fn params(&self) -> Result<Params, ConfigError> {
        check_range(
            "target",
            self.target,
            Duration::from_micros(1),
            Duration::from_secs(10),
        )?;
        // 100 s keeps interval * 2^32 inside 64 bits, as Linux needs.
        check_range(
            "interval",
            self.interval,
            Duration::from_micros(1),
            Duration::from_secs(100),
        )?;
        check_range("mtu", self.mtu, ByteSize(0), ByteSize(10_000_000))?;
        if let Some(ce) = self.ce_threshold {
            check_range("ce_threshold", ce, Duration::ZERO, Duration::from_secs(10))?;
        }
        Ok(Params {
            target: duration_ticks(self.target),
            interval: duration_ticks(self.interval) as u32,
            mtu: self.mtu.0,
            ecn: self.ecn,
            ce_threshold: self.ce_threshold.map(duration_ticks),
            inv_sqrt: self.inv_sqrt,
        })
    }

    pub fn build(&self) -> Result<Codel, ConfigError> {
        Ok(Codel {
            params: self.params()?,
            vars: CodelVars::default(),
            stats: CodelStats::default(),
            fifo: PacketFifo::default(),
        })
    }

    /// Applies these parameters to `codel`, keeping its packets and state
    /// (Linux `codel_change`).
    pub fn reconfigure(&self, codel: &mut Codel) -> Result<(), ConfigError> {
        codel.params = self.params()?;
        Ok(())
    }
}

/// Control-loop state (Linux `codel_vars`). Times are CoDel ticks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// Q0.16 1/sqrt(count), kept up to date in both modes so that switching
    /// mode live does not start from a stale value.
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for a whole interval;
    /// `None` while it is below.
    pub first_above_time: Option<u64>,
    /// When the next drop is due while dropping.
    pub drop_next: u64,
    /// Sojourn of the last packet examined, in ticks.
    pub ldelay: u64,
}

impl Default for CodelVars {
    fn default() -> Self {
        CodelVars {
            count: 0,
            lastcount: 0,
            dropping: false,
            rec_inv_sqrt: REC_INV_SQRT_ONE,
            first_above_time: None,
            drop_next: 0,
            ldelay: 0,
        }
    }
}

/// Counters (Linux `codel_stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodelStats {
    pub drop_count: u64,
    pub ecn_mark: u64,
    pub ce_mark: u64,
    pub max_packet: u32,
}

/// A CoDel queue.
#[derive(Debug)]
pub struct Codel {
    params: Params,
    vars: CodelVars,
    stats: CodelStats,
    fifo: PacketFifo,
}

impl Codel {
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
    pub fn stats(&self) -> &CodelStats {
        &self.stats
    }

    fn control_law(&self, t: u64) -> u64 {
        match self.params.inv_sqrt {
            InvSqrt::Newton => control_law_fixed(t, self.params.interval, self.vars.rec_inv_sqrt),
            InvSqrt::Exact => {
                let step = f64::from(self.params.interval) / f64::from(self.vars.count).sqrt();
                t + step.round() as u64
            }
        }
    }

    /// RFC 8289 `dodequeue` minus the pop (Linux `codel_should_drop`):
    /// whether the packet just taken from the head may be dropped.
    fn should_drop(&mut self, packet: Option<&Packet>, now: u64) -> bool {
        let Some(packet) = packet else {
            self.vars.first_above_time = None;
            return false;
        };
        self.vars.ldelay = now.saturating_sub(ticks(packet.enqueued_at));
        self.stats.max_packet = self.stats.max_packet.max(packet.len);
        if self.vars.ldelay < self.params.target || self.fifo.bytes() <= self.params.mtu {
            self.vars.first_above_time = None;
            return false;
        }
        match self.vars.first_above_time {
            None => {
                self.vars.first_above_time = Some(now + u64::from(self.params.interval));
                false
            }
            Some(t) => now > t,
        }
    }

    /// Removes the head and runs the AQM on it (after `should_drop` the
    /// queue backlog excludes it, which is what the MTU floor tests).
    fn take_head(&mut self, now: u64) -> (Option<Packet>, bool) {
        let packet = self.fifo.pop_front();
        let drop = self.should_drop(packet.as_ref(), now);
        (packet, drop)
    }

    /// Signals congestion on `packet`: returns it CE-marked, or `None` if it
    /// was dropped.
    fn signal(&mut self, packet: Packet, ev: &mut Events) -> Option<Packet> {
        let marked = ev.signal(
            packet,
            self.params.ecn,
            MarkReason::Codel,
            DropReason::Codel,
        );
        if marked.is_some() {
            self.stats.ecn_mark += 1;
        } else {
            self.stats.drop_count += 1;
        }
        marked
    }
}

impl Queue for Codel {
    fn enqueue(&mut self, packet: Packet, _now: Instant, _ev: &mut Events) {
        self.fifo.push_back(packet);
    }

    fn dequeue(&mut self, now: Instant, ev: &mut Events) -> Option<Packet> {
        let now = ticks(now);
        let (mut packet, drop) = self.take_head(now);
        if packet.is_none() {
            self.vars.dropping = false;
            return None;
        }
        let mut marked_by_codel = false;
        if self.vars.dropping {
            if !drop {
                self.vars.dropping = false;
            } else {
                // Several drops may be due at once when the backlog is large;
                // each is scheduled from the previous drop_next, not from now.
                while self.vars.dropping && now >= self.vars.drop_next {
                    let count = self.vars.count.wrapping_add(1);
                    self.vars.count = count;
                    self.vars.rec_inv_sqrt = newton_step(self.vars.rec_inv_sqrt, count);
                    let head = packet.take().expect("dropping with a packet in hand");
                    if let Some(marked) = self.signal(head, ev) {
                        packet = Some(marked);
                        marked_by_codel = true;
                        self.vars.drop_next = self.control_law(self.vars.drop_next);
                        break;
                    }
                    let (next, next_drop) = self.take_head(now);
                    packet = next;
                    if next_drop {
                        self.vars.drop_next = self.control_law(self.vars.drop_next);
                    } else {
                        self.vars.dropping = false;
                    }
                }
            }
        } else if drop {
            let head = packet.take().expect("checked above");
            match self.signal(head, ev) {
                Some(marked) => {
                    packet = Some(marked);
                    marked_by_codel = true;
                }
                // Linux re-runs should_drop on the new head only for its side
                // effects (ldelay, first_above_time); the dropping state is
                // entered regardless.
                None => packet = self.take_head(now).0,
            }
            self.vars.dropping = true;
            // If the queue went bad again soon after the last dropping cycle,
            // that cycle's drop rate is a better start than count = 1.
            let delta = self.vars.count.wrapping_sub(self.vars.lastcount);
            let since_drop_next = now as i64 - self.vars.drop_next as i64;
            if delta > 1 && since_drop_next < 16 * i64::from(self.params.interval) {
                self.vars.count = delta;
                self.vars.rec_inv_sqrt = newton_step(self.vars.rec_inv_sqrt, delta);
            } else {
                self.vars.count = 1;
                self.vars.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
            self.vars.lastcount = self.vars.count;
            self.vars.drop_next = self.control_law(now);
        }
        let mut packet = packet?;
        if let Some(threshold) = self.params.ce_threshold {
            let sojourn = now.saturating_sub(ticks(packet.enqueued_at));
            if !marked_by_codel
                && sojourn > threshold
                && ev.mark(&mut packet, MarkReason::CeThreshold)
            {
                self.stats.ce_mark += 1;
            }
        }
        Some(packet)
    }

    crate::queue::fifo::fifo_storage!(fifo);
    fn aqm_stats(&self) -> AqmStats {
        AqmStats {
            dropping: Some(self.vars.dropping),
            count: Some(self.vars.count),
            ..AqmStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::testing::*;
    use crate::queue::{AnyQueue, QueueKindConfig};
    use crate::{PipelineConfig, PushOutcome};
    use proptest::prelude::*;
    use tcran_core::Ecn;

    /// Independent port of Linux `codel_Newton_step`, typed as the C code
    /// (u32 `invsqrt`/`invsqrt2`, u64 `val`), `REC_INV_SQRT_BITS = 16`.
    fn linux_newton_step(count: u32, rec_inv_sqrt: u16) -> u16 {
        let invsqrt: u32 = u32::from(rec_inv_sqrt) << 16;
        let invsqrt2: u32 = ((u64::from(invsqrt) * u64::from(invsqrt)) >> 32) as u32;
        let mut val: u64 = (3u64 << 32).wrapping_sub(u64::from(count) * u64::from(invsqrt2));
        val >>= 2;
        val = val.wrapping_mul(u64::from(invsqrt)) >> (32 - 2 + 1);
        (val >> 16) as u16
    }

    /// Independent port of Linux `codel_control_law` with `reciprocal_scale`,
    /// on the wrapping u32 `codel_time_t`.
    fn linux_control_law(t: u32, interval: u32, rec_inv_sqrt: u16) -> u32 {
        let ep_ro: u32 = u32::from(rec_inv_sqrt) << 16;
        t.wrapping_add(((u64::from(interval) * u64::from(ep_ro)) >> 32) as u32)
    }

    fn codel(cfg: CodelConfig) -> Codel {
        cfg.build().unwrap()
    }

    /// Twenty 1000-byte packets at t = 0 (ns-3 codel test setup).
    fn twenty_packets(q: &mut Codel, ecn: impl Fn(u64) -> Ecn) {
        let mut ev = Events::default();
        for id in 1..=20 {
            q.enqueue(pkt(id, 1000, ecn(id), ms(0)), ms(0), &mut ev);
        }
    }

    fn ticks_to_ms(t: u64) -> f64 {
        (t << CODEL_SHIFT) as f64 * 1e-6
    }

    /// algorithms.md sec. 2.1.3 with Linux fixed point: lengths 19, 17, 16,
    /// 12 and cumulative drops 0, 1, 1, 4; count 4; drop_next ~465.03 ms.
    #[test]
    fn ns3_basic_drop_with_newton_steps_drops_four() {
        let mut q = codel(CodelConfig::default());
        twenty_packets(&mut q, |_| Ecn::NotEct);
        let mut ev = Events::default();
        let mut seen = Vec::new();
        for t in [10, 210, 210, 420] {
            assert!(q.dequeue(ms(t), &mut ev).is_some());
            seen.push((q.packets(), ev.dropped.len()));
        }
        assert_eq!(seen, vec![(19, 0), (17, 1), (16, 1), (12, 4)]);
        assert_eq!(ev.drop_counts.get(DropReason::Codel), 4);
        assert_eq!(q.vars().count, 4);
        assert!((ticks_to_ms(q.vars().drop_next) - 465.03).abs() < 0.05);
    }

    /// Same scenario with exact 1/sqrt: 13 left after 3 drops, drop_next
    /// ~438.44 ms (algorithms.md sec. 2.1.3).
    #[test]
    fn ns3_basic_drop_with_exact_inverse_sqrt_drops_three() {
        let mut q = codel(CodelConfig {
            inv_sqrt: InvSqrt::Exact,
            ..CodelConfig::default()
        });
        twenty_packets(&mut q, |_| Ecn::NotEct);
        let mut ev = Events::default();
        for t in [10, 210, 210, 420] {
            q.dequeue(ms(t), &mut ev);
        }
        assert_eq!((q.packets(), ev.dropped.len()), (13, 3));
        assert!((ticks_to_ms(q.vars().drop_next) - 438.44).abs() < 0.05);
    }

    #[test]
    fn newton_step_from_one_at_count_two_gives_0x8001() {
        assert_eq!(newton_step(0xFFFF, 2), 0x8001);
        assert_eq!(linux_newton_step(2, 0xFFFF), 0x8001);
    }

    /// algorithms.md sec. 2.1.4: bit-identical to Linux over rec_inv_sqrt in
    /// {0xff, 0x7f, ..., 1} (also shifted into the high byte, where real
    /// values live) and count in {1, 2, 4, ..., 128}; plus every 16-bit value.
    #[test]
    fn newton_step_is_bit_identical_to_linux() {
        let mut recs = Vec::new();
        let mut r: u16 = 0xff;
        while r > 0 {
            recs.push(r);
            recs.push(r << 8);
            r /= 2;
        }
        recs.push(0xFFFF);
        for count in (0..8).map(|i| 1u32 << i) {
            for &rec in &recs {
                assert_eq!(
                    newton_step(rec, count),
                    linux_newton_step(count, rec),
                    "rec {rec:#x} count {count}"
                );
            }
            for rec in 0..=u16::MAX {
                assert_eq!(newton_step(rec, count), linux_newton_step(count, rec));
            }
        }
    }

    /// algorithms.md sec. 2.1.4: control law over t = 0..20 s step 100 ms,
    /// interval 100 ms, rec_inv_sqrt in {0xff, ..., 1} and the Newton
    /// sequence from 0xFFFF.
    #[test]
    fn control_law_is_bit_identical_to_linux() {
        let interval = duration_ticks(Duration::from_millis(100)) as u32;
        let mut recs: Vec<u16> = Vec::new();
        let mut r: u16 = 0xff;
        while r > 0 {
            recs.push(r);
            r /= 2;
        }
        let mut rec = REC_INV_SQRT_ONE;
        for count in 1..=128 {
            rec = newton_step(rec, count);
            recs.push(rec);
        }
        for step in 0..=200u64 {
            let t = ticks(Instant::from_millis(step * 100));
            for &rec in &recs {
                assert_eq!(
                    control_law_fixed(t, interval, rec) as u32,
                    linux_control_law(t as u32, interval, rec)
                );
            }
        }
    }

    /// RFC 8289 sec. 3.3: in the dropping state the gap between drops is
    /// interval / sqrt(count) (exact mode; dequeues every 1 ms, so the
    /// observed gap may be late by up to 1 ms).
    #[test]
    fn drop_gaps_shrink_as_interval_over_sqrt_count() {
        let mut q = codel(CodelConfig {
            inv_sqrt: InvSqrt::Exact,
            ..CodelConfig::default()
        });
        let mut ev = Events::default();
        for id in 0..3000 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        let mut drops = Vec::new();
        for t in 1..=2000 {
            let before = ev.dropped.len();
            q.dequeue(ms(t), &mut ev);
            assert!(ev.dropped.len() - before <= 1);
            if ev.dropped.len() > before {
                drops.push((t, q.vars().count));
            }
        }
        assert!(drops.len() > 40, "{drops:?}");
        for w in drops.windows(2) {
            let ((t0, c0), (t1, c1)) = (w[0], w[1]);
            assert_eq!(c1, c0 + 1);
            let expect = 100.0 / f64::from(c0).sqrt();
            let gap = (t1 - t0) as f64;
            assert!(
                (gap - expect).abs() <= 1.1,
                "count {c0}: gap {gap} vs {expect}"
            );
        }
    }

    /// Enters dropping, runs up to `count >= 6`, then empties the queue.
    fn dropping_then_drained(q: &mut Codel, ev: &mut Events) -> (u64, u32) {
        for id in 0..500 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), ev);
        }
        let mut t = 0;
        while q.vars().count < 6 {
            t += 1;
            q.dequeue(ms(t), ev);
        }
        while q.pop_oldest().is_some() {}
        t += 1;
        assert!(q.dequeue(ms(t), ev).is_none());
        assert!(!q.vars().dropping);
        (t, q.vars().count)
    }

    /// Re-entering soon after leaving restarts from count - lastcount.
    #[test]
    fn reentering_dropping_soon_resumes_the_previous_rate() {
        let mut q = codel(CodelConfig::default());
        let mut ev = Events::default();
        let (t, count) = dropping_then_drained(&mut q, &mut ev);
        for id in 0..100 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(t)), ms(t), &mut ev);
        }
        q.dequeue(ms(t + 10), &mut ev); // above target: arm first_above_time
        q.dequeue(ms(t + 111), &mut ev); // a whole interval later: drop
        assert!(q.vars().dropping);
        assert_eq!(q.vars().count, count - 1, "lastcount was 1");
        assert_eq!(q.vars().lastcount, count - 1);
    }

    #[test]
    fn reentering_dropping_after_sixteen_intervals_starts_at_count_one() {
        let mut q = codel(CodelConfig::default());
        let mut ev = Events::default();
        let (t, _) = dropping_then_drained(&mut q, &mut ev);
        let t = t + 2000;
        for id in 0..100 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(t)), ms(t), &mut ev);
        }
        q.dequeue(ms(t + 10), &mut ev);
        q.dequeue(ms(t + 111), &mut ev);
        assert!(q.vars().dropping);
        assert_eq!(q.vars().count, 1);
    }

    fn run_ecn_case(q: &mut Codel, times: &[u64]) -> Vec<(u64, u64, u64)> {
        let mut ev = Events::default();
        times
            .iter()
            .map(|t| {
                q.dequeue(ms(*t), &mut ev);
                (
                    ev.drop_counts.get(DropReason::Codel),
                    ev.marks.get(MarkReason::Codel),
                    ev.marks.get(MarkReason::CeThreshold),
                )
            })
            .collect()
    }

    /// algorithms.md sec. 2.1.5 case 1: ECN on but Not-ECT packets: drops
    /// exactly as without ECN, and the first signal hits the 2nd packet.
    #[test]
    fn ns3_mark_case1_not_ect_packets_are_dropped_as_without_ecn() {
        let mut q = codel(CodelConfig {
            ecn: true,
            ..CodelConfig::default()
        });
        twenty_packets(&mut q, |_| Ecn::NotEct);
        let seen = run_ecn_case(&mut q, &[10, 210, 210, 420]);
        assert_eq!(seen, vec![(0, 0, 0), (1, 0, 0), (1, 0, 0), (4, 0, 0)]);
        assert_eq!(q.packets(), 12);
    }

    /// Case 2: ECT packets: no drops; one mark at the first 210 ms dequeue,
    /// none at the second, two after 420 ms (one per call); the first packet
    /// signalled is the same as the first dropped in case 1.
    #[test]
    fn ns3_mark_case2_ect_packets_are_marked_not_dropped() {
        let mut q = codel(CodelConfig {
            ecn: true,
            ..CodelConfig::default()
        });
        twenty_packets(&mut q, |_| Ecn::Ect0);
        let mut ev = Events::default();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for t in [10, 210, 210, 420] {
            out.push(q.dequeue(ms(t), &mut ev).unwrap());
            seen.push((ev.dropped.len(), ev.marks.get(MarkReason::Codel)));
        }
        assert_eq!(seen, vec![(0, 0), (0, 1), (0, 1), (0, 2)]);
        let first_marked = out.iter().find(|p| p.ecn == Ecn::Ce).unwrap();
        assert_eq!(first_marked.id.0, 2);
        let mut dropped_case1 = codel(CodelConfig::default());
        twenty_packets(&mut dropped_case1, |_| Ecn::NotEct);
        let mut ev1 = Events::default();
        for t in [10, 210] {
            dropped_case1.dequeue(ms(t), &mut ev1);
        }
        assert_eq!(ev1.dropped[0].packet.id.0, 2);
    }

    /// Case 3: ce_threshold 2 ms, 3 ECT then 17 Not-ECT packets.
    #[test]
    fn ns3_mark_case3_ce_threshold_marks_ect_and_target_drops_not_ect() {
        let mut q = codel(CodelConfig {
            ecn: true,
            ce_threshold: Some(Duration::from_millis(2)),
            ..CodelConfig::default()
        });
        twenty_packets(&mut q, |id| if id <= 3 { Ecn::Ect0 } else { Ecn::NotEct });
        let seen = run_ecn_case(&mut q, &[10, 210, 210, 420]);
        // (codel drops, target marks, CE-threshold marks), cumulative.
        assert_eq!(seen, vec![(0, 0, 1), (0, 1, 1), (0, 1, 2), (3, 1, 2)]);
    }

    /// Case 4: ce_threshold 2 ms, all ECT; dequeues at 1, 3, 10 ms.
    #[test]
    fn ns3_mark_case4_ce_threshold_marks_only_above_threshold() {
        let mut q = codel(CodelConfig {
            ecn: true,
            ce_threshold: Some(Duration::from_millis(2)),
            ..CodelConfig::default()
        });
        twenty_packets(&mut q, |_| Ecn::Ect0);
        let seen = run_ecn_case(&mut q, &[1, 3, 10, 210]);
        let ce: Vec<u64> = seen.iter().map(|s| s.2).take(3).collect();
        assert_eq!(ce, vec![0, 1, 2]);
        assert!(seen.iter().all(|s| s.0 == 0), "no drops: {seen:?}");
    }

    #[test]
    fn no_drop_while_backlog_is_within_one_mtu() {
        let mut q = codel(CodelConfig::default());
        let mut ev = Events::default();
        q.enqueue(pkt(1, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.enqueue(pkt(2, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.enqueue(pkt(3, 500, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        for t in [10, 300, 900] {
            q.dequeue(ms(t), &mut ev);
        }
        assert!(ev.dropped.is_empty());
        assert!(q.vars().first_above_time.is_none());
    }

    fn pipeline_codel(limit: u32) -> crate::Pipeline {
        let mut cfg = PipelineConfig::single_queue(QueueKindConfig::Codel(CodelConfig {
            mtu: ByteSize(1000),
            interval: Duration::from_millis(50),
            target: Duration::from_millis(4),
            ..CodelConfig::default()
        }));
        cfg.queues[0].limit_packets = Some(limit);
        cfg.build().unwrap()
    }

    /// algorithms.md sec. 2.1.1 through the pipeline: FIFO order, sizes,
    /// nothing on the 7th pull, no drops.
    #[test]
    fn ns3_basic_enqueue_dequeue_through_the_pipeline() {
        let mut p = pipeline_codel(1500);
        let q0 = tcran_core::QueueId(0);
        for id in 1..=6 {
            assert_eq!(
                p.push(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0)),
                PushOutcome::Enqueued(q0)
            );
            assert_eq!(p.queue_backlog(q0), Some((id as usize, id * 1000)));
        }
        let ids: Vec<u64> = std::iter::from_fn(|| p.pull(ms(0)).map(|p| p.id.0)).collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5, 6]);
        assert!(p.pull(ms(0)).is_none());
        assert_eq!(p.totals().dropped_packets, 0);
    }

    /// algorithms.md sec. 2.1.2: limit 500 packets, 503 offered: exactly 3
    /// tail drops, 500 held.
    #[test]
    fn ns3_overflow_tail_drops_exactly_three() {
        let mut p = pipeline_codel(500);
        for id in 1..=503 {
            p.push(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0));
        }
        let stats = p.stats(ms(0));
        assert_eq!(stats.queues[0].backlog_packets, 500);
        assert_eq!(stats.queues[0].drops.get(DropReason::QueueFull), 3);
        assert_eq!(stats.queues[0].drops.get(DropReason::Codel), 0);
    }

    #[test]
    fn config_reads_units_and_rejects_unknown_fields_and_bad_values() {
        let cfg: crate::QueueConfig = toml::from_str(
            "id = 0\nkind = \"codel\"\ntarget = \"3ms\"\nce_threshold = \"1ms\"\ninv_sqrt = \"exact\"",
        )
        .unwrap();
        let QueueKindConfig::Codel(c) = &cfg.kind else {
            panic!("{cfg:?}")
        };
        assert_eq!(c.target, Duration::from_millis(3));
        assert_eq!(c.interval, Duration::from_millis(100));
        assert_eq!(c.ce_threshold, Some(Duration::from_millis(1)));
        assert_eq!(c.inv_sqrt, InvSqrt::Exact);
        assert!(toml::from_str::<crate::QueueConfig>(
            "id = 0\nkind = \"codel\"\ntarghet = \"3ms\""
        )
        .is_err());
        let e = QueueKindConfig::Codel(CodelConfig {
            interval: Duration::ZERO,
            ..CodelConfig::default()
        })
        .build()
        .unwrap_err();
        assert_eq!(e.to_string(), "interval = 0ms: must be in 1us..=100s");
    }

    /// Linux `change()`: new parameters apply, packets and control state stay.
    #[test]
    fn reconfigure_keeps_packets_and_dropping_state() {
        let mut q = QueueKindConfig::Codel(CodelConfig::default())
            .build()
            .unwrap();
        let mut ev = Events::default();
        for id in 0..200 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        for t in [10, 210, 420] {
            q.dequeue(ms(t), &mut ev);
        }
        let AnyQueue::Codel(c) = &q else { panic!() };
        let (vars, held) = (c.vars().clone(), q.packets());
        assert!(vars.dropping && vars.count > 1);
        let new = QueueKindConfig::Codel(CodelConfig {
            target: Duration::from_millis(2),
            interval: Duration::from_millis(50),
            ..CodelConfig::default()
        });
        assert!(new.reconfigure(&mut q).unwrap());
        let AnyQueue::Codel(c) = &q else { panic!() };
        assert_eq!((c.vars(), q.packets()), (&vars, held));
        assert_eq!(
            c.params.interval,
            duration_ticks(Duration::from_millis(50)) as u32
        );
        assert!(!QueueKindConfig::Fifo(Default::default())
            .reconfigure(&mut q)
            .unwrap());
    }

    proptest! {
        #[test]
        fn conserves_packets_under_random_operations(ops in ops(), ecn: bool, exact: bool) {
            let mut q = CodelConfig {
                ecn,
                ce_threshold: ecn.then_some(Duration::from_millis(3)),
                inv_sqrt: if exact { InvSqrt::Exact } else { InvSqrt::Newton },
                ..CodelConfig::default()
            }
            .build()
            .unwrap();
            check_conservation(&mut q, &ops)?;
        }
    }
}
