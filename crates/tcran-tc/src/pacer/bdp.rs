//! `bdp`: 5G-BDP, thesis-irazabal-5g-qos.txt sec. 3.3, Algorithm 2 — forward
//! per TTI the bandwidth-delay product the last grant showed, spread evenly
//! over the TTI.
//!
//! Contract:
//! - `on_report` is `SET_VALUES(remaining, channel_capacity)` (lines 3-11)
//!   with `channel_capacity = report.granted_bytes` and
//!   `remaining = report.backlog_bytes`: `bytes_to_send = capacity -
//!   remaining` if positive else 0, `bytes_tx = 0`, `last_time = now`.
//! - `admits(len)` is `GET_OPTIMAL_VALUE` (lines 12-22) compared with the
//!   candidate: `normal_tti = min(elapsed / TTI, 1) + offset`,
//!   `soll_tx = normal_tti x bytes_to_send`, admitted iff
//!   `soll_tx - bytes_tx >= len`; `on_forwarded` adds to `bytes_tx`.
//! - `next_wakeup` is the instant at which the last refused candidate would
//!   pass, if that happens before `normal_tti` stops growing.
//!
//! Interpretations:
//! - `elapsed / TTI` is clamped to 1 before adding the offset, so the most a
//!   TTI can forward is `(1 + offset) x bytes_to_send`. The thesis says the
//!   normalised TTI "will be in the range [0, 1]" (sec. 3.3); without the
//!   clamp a late or missing report (a DU hiccup, F1-U loss) would let the
//!   allowance grow without bound and flood the RLC — the bufferbloat the
//!   algorithm exists to prevent.
//! - `TTI` is the time from the last report to the next MAC pull (the
//!   report's `next_pull_in`, else its `tti`; 1 ms before the first): the
//!   interval Alg. 2 spreads `bytes_to_send` over. In DDDSU the S slot's
//!   allowance spreads over the S and the U slot, which has no pull and no
//!   report.
//!
//! Reads from the report: `granted_bytes`, `backlog_bytes`, `tti`,
//! `next_pull_in`.
//! - Before the first report `bytes_to_send = 0` (line 2), so nothing goes
//!   down until the MAC has reported once.
//! - `offset` default 0.33 (thesis sec. 3.6.1, `NORMALIZED_OFFSET`); the
//!   thesis range is [0, 1).
//! - Starvation guard (not in Alg. 2): when a TTI carries less than one
//!   packet, `(1 + offset) x bytes_to_send` never reaches the packet's size
//!   and, since `bytes_tx` resets every TTI, nothing would ever go down. So
//!   while the RLC buffer is empty and nothing went down this TTI, one packet
//!   is admitted whatever its size (the static pacer's rule). The guard
//!   only applies to packets the allowance could not admit at all in this
//!   TTI, so wherever Alg. 2 works it paces exactly as written.

use super::{pull_gap, settle, DEFAULT_TTI};
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::config::check_f64;
use tcran_core::{ConfigError, Duration, Instant};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BdpConfig {
    /// NORMALIZED_OFFSET added to the normalised elapsed time (thesis sec.
    /// 3.6.1: 0.33, "to avoid a starving fatal condition").
    pub offset: f64,
}

impl Default for BdpConfig {
    fn default() -> Self {
        BdpConfig { offset: 0.33 }
    }
}

impl BdpConfig {
    pub fn build(&self) -> Result<Bdp, ConfigError> {
        Ok(Bdp {
            offset: check_f64("offset", self.offset, 0.0, 1.0)?,
            tti: DEFAULT_TTI,
            bytes_to_send: 0,
            bytes_tx: 0,
            last_time: None,
            drained: false,
            granted_per_sec: 0.0,
            pending: None,
            refused: 0,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Bdp {
    offset: f64,
    tti: Duration,
    bytes_to_send: u64,
    bytes_tx: u64,
    last_time: Option<Instant>,
    /// The last report found the RLC buffer empty.
    drained: bool,
    /// Last grant per second, for the statistics.
    granted_per_sec: f64,
    /// Length of the last refused candidate, until something goes down.
    pending: Option<u32>,
    refused: u64,
}

impl Bdp {
    /// `GET_OPTIMAL_VALUE` at `now`: bytes that may still go down this TTI.
    pub fn allowance(&self, now: Instant) -> f64 {
        let Some(t0) = self.last_time else {
            return 0.0;
        };
        let normal_tti = now.saturating_since(t0).ratio(self.tti).min(1.0) + self.offset;
        let soll_tx = normal_tti * self.bytes_to_send as f64;
        (soll_tx - self.bytes_tx as f64).max(0.0)
    }

    pub fn bytes_to_send(&self) -> u64 {
        self.bytes_to_send
    }
}

impl Pacer for Bdp {
    fn admits(&mut self, len: u32, now: Instant, lower: &LowerState) -> bool {
        // Alg. 2 can never admit `len` this TTI: the guard's only case.
        let never = (1.0 + self.offset) * (self.bytes_to_send as f64) < len as f64;
        let starving = never && self.drained && lower.bytes == 0 && self.bytes_tx == 0;
        let ok = starving || self.allowance(now) >= len as f64;
        if !ok {
            self.refused += 1;
            self.pending = Some(len);
        }
        ok
    }
    fn on_forwarded(&mut self, len: u32, _now: Instant) {
        self.bytes_tx += len as u64;
        self.pending = None;
    }
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        self.tti = pull_gap(report, self.tti);
        // Lines 4-8.
        self.bytes_to_send = report.granted_bytes.saturating_sub(report.backlog_bytes);
        self.bytes_tx = 0; // line 9
        self.last_time = Some(now); // line 10
        self.drained = report.backlog_bytes == 0;
        self.granted_per_sec = report.granted_bytes as f64 / self.tti.as_secs_f64();
    }
    fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        let len = self.pending?;
        let t0 = self.last_time?;
        if self.bytes_to_send == 0 {
            return None;
        }
        // (e + offset) x bytes_to_send - bytes_tx >= len, e <= 1.
        let e = (len as f64 + self.bytes_tx as f64) / self.bytes_to_send as f64 - self.offset;
        if e > 1.0 {
            return None; // only the next report can help
        }
        let at = t0 + Duration::from_nanos((e.max(0.0) * self.tti.as_nanos() as f64).ceil() as u64);
        let at = settle(at.max(now), |t| self.allowance(t) >= len as f64);
        Some(at)
    }
    fn stats(&self) -> PacerStats {
        PacerStats {
            bandwidth_bps: self.granted_per_sec,
            allowance_bytes: self.last_time.map_or(0.0, |t| self.allowance(t)),
            limit: None,
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::testing::FakeLink;

    const T0: Instant = Instant::from_millis(10);

    fn at_us(us: u64) -> Instant {
        T0 + Duration::from_micros(us)
    }

    fn report(granted: u64, backlog: u64) -> LowerLayerReport {
        LowerLayerReport {
            tti: Duration::from_millis(1),
            backlog_bytes: backlog,
            backlog_sdus: 1,
            pulled_bytes: granted,
            granted_bytes: granted,
            max_bytes: granted,
            ..LowerLayerReport::default()
        }
    }

    fn bdp() -> Bdp {
        BdpConfig::default().build().unwrap()
    }

    /// Alg. 2 by hand: grant 3000 B, 600 B left: bytes_to_send = 2400.
    /// soll_tx(t) = (t/TTI + 0.33) x 2400.
    /// A TTI smaller than one packet: Alg. 2 alone would never admit it.
    #[test]
    fn an_empty_rlc_buffer_admits_one_packet_per_tti_even_below_one_mtu() {
        let mut p = bdp();
        p.on_report(&report(600, 0), T0);
        let empty = LowerState::default();
        assert!(p.admits(1500, at_us(500), &empty), "starvation guard");
        p.on_forwarded(1500, at_us(500));
        assert!(!p.admits(
            1500,
            at_us(900),
            &LowerState {
                bytes: 1500,
                sdus: 1
            }
        ));
        assert!(!p.admits(1500, at_us(900), &empty), "one packet per TTI");
    }

    #[test]
    fn allowance_within_a_tti_by_hand() {
        let mut p = bdp();
        let lower = LowerState::default();
        assert!(!p.admits(1, T0, &lower), "nothing before the first report");
        p.on_report(&report(3000, 600), T0);
        assert_eq!(p.bytes_to_send(), 2400);
        // t = 0: soll = 0.33 x 2400 = 792.
        assert!((p.allowance(at_us(0)) - 792.0).abs() < 1e-6);
        assert!(p.admits(500, at_us(0), &lower));
        p.on_forwarded(500, at_us(0));
        // 792 - 500 = 292 left.
        assert!(!p.admits(500, at_us(0), &lower));
        // t = TTI/4: soll = 0.58 x 2400 = 1392; 1392 - 500 = 892.
        assert!((p.allowance(at_us(250)) - 892.0).abs() < 1e-6);
        assert!(!p.admits(1500, at_us(250), &lower));
        assert!(p.admits(800, at_us(250), &lower));
        p.on_forwarded(800, at_us(250));
        // t = TTI: soll = 1.33 x 2400 = 3192; 3192 - 1300 = 1892.
        assert!((p.allowance(at_us(1000)) - 1892.0).abs() < 1e-6);
        assert!(p.admits(1500, at_us(1000), &lower));
        p.on_forwarded(1500, at_us(1000));
        // Late report: normal_tti is clamped at 1 + offset, 3192 - 2800 = 392.
        assert!((p.allowance(at_us(1700)) - 392.0).abs() < 1e-6);
        assert!(!p.admits(1500, at_us(1700), &lower));
        // The next report resets bytes_tx; a backlog above the grant means
        // nothing to send (line 7).
        p.on_report(&report(3000, 3500), at_us(2000));
        assert_eq!(p.bytes_to_send(), 0);
        assert!(!p.admits(40, at_us(2900), &lower));
        assert_eq!(p.stats().refused, 5);
    }

    #[test]
    fn zero_offset_starts_each_tti_at_zero() {
        let mut p = BdpConfig { offset: 0.0 }.build().unwrap();
        p.on_report(&report(2000, 0), T0);
        // soll(t) = t/TTI x 2000: 1000 B at half a TTI.
        assert!(!p.admits(1000, at_us(499), &LowerState::default()));
        assert!(p.admits(1000, at_us(500), &LowerState::default()));
    }

    /// The refused 1500-B candidate passes when (e + 0.33) x 2400 = 1500,
    /// e = 0.295 TTI = 295 us.
    #[test]
    fn next_wakeup_is_when_the_refused_candidate_passes() {
        let mut p = bdp();
        p.on_report(&report(3000, 600), T0);
        assert_eq!(p.next_wakeup(T0), None, "nothing refused");
        assert!(!p.admits(1500, T0, &LowerState::default()));
        let w = p.next_wakeup(T0).unwrap();
        assert!(w >= at_us(295) && w <= at_us(295) + Duration::from_nanos(8));
        assert!(p.admits(1500, w, &LowerState::default()));
        // Beyond what the TTI can ever allow: only a report helps.
        assert!(!p.admits(4000, w, &LowerState::default()));
        assert_eq!(p.next_wakeup(w), None);
    }

    #[test]
    fn constant_capacity_keeps_the_buffer_bounded_and_the_mac_fed() {
        for capacity in [3000, 7700] {
            let mut p = bdp();
            let mut link = FakeLink::new(capacity);
            link.run(&mut p, 3000);
            link.assert_steady(capacity, 0.0);
        }
    }
}
