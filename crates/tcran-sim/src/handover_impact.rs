//! What a handover does to the flows of the UE it moves, measured at the
//! UE: the bulk (TCP) download's throughput dip and recovery, and the
//! call's (VoIP, ping) delay spike (docs/simulator.md, "What a handover
//! does").
//!
//! Definitions (`at` is the handover command, `gap` the interruption):
//! - **before**: the UE's TCP flows' goodput (bytes delivered to the UE)
//!   over `[at - 1 s, at)`, Mbit/s.
//! - **recovery**: the 100-ms bins from `at` on (`[at + k·100 ms, at +
//!   (k+1)·100 ms)`): the first bin whose goodput is at least 90 % of
//!   *before* ends the recovery, `(k+1)·100 ms` after the command; none
//!   within 5 s (or before the run ends): not recovered.
//! - **minimum after**: the lowest bin goodput from the command to the
//!   recovery bin (within the 5 s when not recovered).
//! - **call delay**: the largest one-way delay of the UE's call packets
//!   (downlink VoIP and ping flows) created in `[at - 500 ms, at + gap +
//!   500 ms]`, against the median delay of those created in the second
//!   before that window (*call delay before*). A packet of the window that
//!   never arrives is not in the maximum: the ledger counts it lost.
//!
//! Contract: the recorder takes each delivery of a multi-cell run in O(1)
//! (goodput in 10-ms bins, call delays as `(created, delay)` pairs);
//! windows are measured on the 10-ms grid (a window edge off the grid is
//! taken at the 10-ms mark before it: handover commands fall on
//! measurement occasions, multiples of the measurement period). Sans-IO:
//! times are parameters.

use serde::Serialize;
use tcran_core::{Duration, Instant};

/// The goodput before a handover is measured over this long.
pub const BEFORE: Duration = Duration::from_secs(1);
/// The dip and the recovery are looked at in bins of this length.
pub const BIN: Duration = Duration::from_millis(100);
/// How long after the command a recovery is looked for.
pub const HORIZON: Duration = Duration::from_secs(5);
/// Recovered: a bin at this share of the goodput before.
pub const RECOVERED: f64 = 0.9;
/// The call's packets created this long before the command and after the
/// interruption count in its delay spike.
pub const CALL_WINDOW: Duration = Duration::from_millis(500);
/// The recorder's grid.
const GRID: Duration = Duration::from_millis(10);

/// What a flow is to the handover measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A TCP download: its goodput dips.
    Bulk,
    /// A downlink call (VoIP, ping): its delay spikes.
    Call,
}

/// The measures of one handover (module docs); `None` where the UE has no
/// such flow, or nothing was delivered to measure against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct HandoverImpact {
    pub tcp_before_mbps: Option<f64>,
    pub tcp_min_after_mbps: Option<f64>,
    /// From the command to the end of the first bin back at 90 % of
    /// *before*, ms (`None`: not within 5 s).
    pub tcp_recovery_ms: Option<f64>,
    pub call_delay_before_ms: Option<f64>,
    pub call_max_delay_ms: Option<f64>,
}

/// Deliveries of every flow that matters to the handover measures.
#[derive(Debug, Clone, Default)]
pub struct ImpactRecorder {
    /// Per flow of the run: its UE and role, if it has one.
    flows: Vec<Option<(u16, Role)>>,
    /// Per flow: bytes delivered in each 10-ms bin from time 0 (bulk).
    bytes: Vec<Vec<u32>>,
    /// Per flow: `(created, delay)` of each delivered packet (call).
    delays: Vec<Vec<(Instant, Duration)>>,
}

fn grid_index(t: Instant) -> usize {
    (t.as_nanos() / GRID.as_nanos()) as usize
}

impl ImpactRecorder {
    /// `flows[i]`: flow i's UE and role (`None`: not measured).
    pub fn new(flows: Vec<Option<(u16, Role)>>) -> ImpactRecorder {
        let n = flows.len();
        ImpactRecorder {
            flows,
            bytes: vec![Vec::new(); n],
            delays: vec![Vec::new(); n],
        }
    }

    /// A flow found during the run (a live one), the next index.
    pub fn add_flow(&mut self, flow: Option<(u16, Role)>) {
        self.flows.push(flow);
        self.bytes.push(Vec::new());
        self.delays.push(Vec::new());
    }

    /// Flow `flow`'s packet of `len` bytes, created at `created`, reached
    /// the UE at `now`.
    pub fn delivered(&mut self, flow: usize, now: Instant, len: u32, created: Instant) {
        match self.flows.get(flow).copied().flatten() {
            Some((_, Role::Bulk)) => {
                let bins = &mut self.bytes[flow];
                let i = grid_index(now);
                if bins.len() <= i {
                    bins.resize(i + 1, 0);
                }
                bins[i] = bins[i].saturating_add(len);
            }
            Some((_, Role::Call)) => {
                self.delays[flow].push((created, now.saturating_since(created)))
            }
            None => {}
        }
    }

    /// UE `ue`'s bulk bytes delivered in `[from, to)` (10-ms grid).
    fn bulk_bytes(&self, ue: u16, from: Instant, to: Instant) -> u64 {
        let (a, b) = (grid_index(from), grid_index(to));
        (self.flows.iter().enumerate())
            .filter(|(_, f)| **f == Some((ue, Role::Bulk)))
            .map(|(i, _)| {
                let bins = &self.bytes[i];
                (a.min(bins.len())..b.min(bins.len()))
                    .map(|k| u64::from(bins[k]))
                    .sum::<u64>()
            })
            .sum()
    }

    /// The delays of UE `ue`'s call packets created in `[from, to]`.
    fn call_delays(&self, ue: u16, from: Instant, to: Instant) -> Vec<Duration> {
        (self.flows.iter().enumerate())
            .filter(|(_, f)| **f == Some((ue, Role::Call)))
            .flat_map(|(i, _)| self.delays[i].iter())
            .filter(|(c, _)| (from..=to).contains(c))
            .map(|&(_, d)| d)
            .collect()
    }

    /// The measures of UE `ue`'s handover commanded at `at` with an
    /// interruption `gap`, in a run that ended at `end`.
    pub fn measure(&self, ue: u16, at: Instant, gap: Duration, end: Instant) -> HandoverImpact {
        let mbps = |bytes: u64, d: Duration| bytes as f64 * 8.0 / d.as_secs_f64() / 1e6;
        let mut out = HandoverImpact::default();
        let has = |r: Role| self.flows.contains(&Some((ue, r)));
        if has(Role::Bulk) && at >= Instant::ZERO + BEFORE {
            let before = mbps(self.bulk_bytes(ue, at - BEFORE, at), BEFORE);
            if before > 0.0 {
                out.tcp_before_mbps = Some(before);
                let mut min = f64::INFINITY;
                let bins = HORIZON.as_nanos() / BIN.as_nanos();
                for k in 0..bins {
                    let from = at + Duration::from_nanos(BIN.as_nanos() * k);
                    if from + BIN > end {
                        break;
                    }
                    let rate = mbps(self.bulk_bytes(ue, from, from + BIN), BIN);
                    min = min.min(rate);
                    if rate >= RECOVERED * before {
                        out.tcp_recovery_ms =
                            Some(from.saturating_since(at).as_millis_f64() + BIN.as_millis_f64());
                        break;
                    }
                }
                out.tcp_min_after_mbps = min.is_finite().then_some(min);
            }
        }
        if has(Role::Call) {
            let from = Instant::from_nanos(at.as_nanos().saturating_sub(CALL_WINDOW.as_nanos()));
            let to = at + gap + CALL_WINDOW;
            let ms = |d: Duration| d.as_millis_f64();
            out.call_max_delay_ms = self.call_delays(ue, from, to).into_iter().max().map(ms);
            let base_from = Instant::from_nanos(from.as_nanos().saturating_sub(BEFORE.as_nanos()));
            let mut base = self.call_delays(ue, base_from, from - Duration::from_nanos(1));
            base.sort_unstable();
            out.call_delay_before_ms = (!base.is_empty()).then(|| ms(base[base.len() / 2]));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    /// A hand-worked case: a download at 12 Mbit/s (15,000 B per 10 ms)
    /// until a handover at 2 s, nothing for 250 ms, 6 Mbit/s for 200 ms,
    /// then 12 Mbit/s again; a call every 20 ms with 30 ms of delay, 400 ms
    /// for the packets created in [1.9 s, 2.1 s).
    #[test]
    fn dip_recovery_and_call_spike_of_a_constructed_handover() {
        let mut r = ImpactRecorder::new(vec![Some((1, Role::Bulk)), Some((1, Role::Call)), None]);
        for k in 0..400u64 {
            let t = ms(k * 10 + 5);
            let len = match k {
                200..225 => 0,
                225..245 => 7_500,
                _ => 15_000,
            };
            if len > 0 {
                r.delivered(0, t, len, t);
            }
        }
        for k in 0..200u64 {
            let created = ms(k * 20);
            let delay = if (95..105).contains(&k) { 400 } else { 30 };
            r.delivered(1, created + Duration::from_millis(delay), 200, created);
        }
        let i = r.measure(1, ms(2000), Duration::from_millis(50), ms(4000));
        // Before: 100 bins × 15,000 B over 1 s = 12 Mbit/s.
        assert_eq!(i.tcp_before_mbps, Some(12.0));
        // Bins from 2.0 s: [2.0, 2.1) 0 B, [2.1, 2.2) 0 B, [2.2, 2.3)
        // 5 × 0 + 5 × 7,500 B = 3 Mbit/s, [2.3, 2.4) 6 Mbit/s, [2.4, 2.5)
        // 5 × 7,500 + 5 × 15,000 = 9 Mbit/s (75 %), [2.5, 2.6) 12 Mbit/s:
        // recovered at the end of the sixth bin, 600 ms; the lowest bin 0.
        assert_eq!(i.tcp_recovery_ms, Some(600.0));
        assert_eq!(i.tcp_min_after_mbps, Some(0.0));
        // Call window [1.5 s, 2.55 s]: the 400-ms packets are in it; the
        // second before it had 30 ms.
        assert_eq!(i.call_max_delay_ms, Some(400.0));
        assert_eq!(i.call_delay_before_ms, Some(30.0));
        // Another UE has no flows: nothing measured.
        assert_eq!(
            r.measure(2, ms(2000), Duration::ZERO, ms(4000)),
            HandoverImpact::default()
        );
    }

    #[test]
    fn no_recovery_within_the_horizon_or_the_run() {
        let mut r = ImpactRecorder::new(vec![Some((1, Role::Bulk))]);
        for k in 0..100u64 {
            r.delivered(0, ms(1000 + k * 10), 1_000, ms(0));
        }
        // Nothing after 2 s; the run ends at 2.35 s: three whole bins.
        let i = r.measure(1, ms(2000), Duration::ZERO, ms(2350));
        assert_eq!((i.tcp_before_mbps, i.tcp_recovery_ms), (Some(0.8), None));
        assert_eq!(i.tcp_min_after_mbps, Some(0.0));
        // A handover less than a second into the run has no "before".
        assert_eq!(
            r.measure(1, ms(900), Duration::ZERO, ms(2350)),
            HandoverImpact::default()
        );
    }
}
