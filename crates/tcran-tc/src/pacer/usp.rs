//! `usp`: the UPF-SDAP Pacer, thesis-irazabal-5g-qos.txt sec. 3.5,
//! Algorithms 6 (`DEQUEUED`) and 7 (`GET_OPT_OCCUPANCY`).
//!
//! USP sits one level higher than the other pacers: the pipeline using it
//! is the UPF's, and its "lower" buffer is the SDAP/TC queue below the UPF
//! (which itself feeds RLC through its own pacer). The reports describe
//! that queue: `pulled_bytes` = bytes it handed down in the period,
//! `backlog_bytes` = bytes it still holds.
//!
//! Contract:
//! - `admits(len)` calls `GET_OPT_OCCUPANCY(now)` (one query = one tick) and
//!   admits iff `lower.bytes + len <= occupancy` (or the queue below is
//!   empty, so an oversized packet cannot stall the bearer). The occupancy is
//!   `optimal_occ`, or `clamp(incr x optimal_occ)` once more than `T/2` has
//!   passed since the interval began (Alg. 7 line 3) — "doubled once every
//!   T", never compounded.
//! - `on_report` runs `DEQUEUED(pulled_bytes)` when the queue below handed
//!   something down, then sets `saturation_detected` if the report shows the
//!   queue below still holding data (`backlog_bytes > 0`).
//! - `next_wakeup`: the `T/2` instant, if the refused candidate would fit
//!   the raised occupancy.
//!
//! Interpretations of the underspecified parts (each a choice):
//! - **Saturation** ("the RLC buffer stopped accepting data"): the queue
//!   below ended the period with data it could not hand down, i.e.
//!   `report.backlog_bytes > 0`. (`pulled_bytes < granted_bytes` was
//!   considered and rejected: a queue drained at full grant that still holds
//!   data is exactly the congested state, and it would never be flagged.)
//!   The flag set by one report is consumed by the next `DEQUEUED`.
//! - **"calculate optimal_occ"** (Alg. 6 line 8): the bytes dequeued in the
//!   current interval, scaled to one `T` (`bytes x T / (now - last_time)`,
//!   which is just the bytes when the interval is exactly `T`), clamped to
//!   `[min_occ, max_occ]`. The thesis also mentions `num_ticks`; it is kept
//!   (and exposed) but does not enter the formula: the occupancy must cover
//!   the drain between two queries *at the worst query jitter*, and the
//!   doubling after T/2 is what the thesis says handles query deviations.
//! - **Line 17 order**: a report arrives *after* the period it describes, so
//!   its bytes are added to `dequeued_bytes` before the interval checks
//!   (Alg. 6 adds them after, because there `DEQUEUED` runs at the moment of
//!   dequeuing, at the start of what follows).
//! - **Line 12** `now > last_time + T` is taken as `>=`: reports come
//!   exactly one TTI apart and `T = TTI`, so a strict test would make every
//!   interval two TTIs long. Alg. 7's `> T/2` stays strict (queries are not
//!   periodic).
//! - `last_time` (never initialised in Alg. 6) starts at the first event the
//!   pacer sees.
//!
//! Deviation (named, opt-in): **`starvation_guard`**. Alg. 6 moves
//! `optimal_occ` only when a saturation was flagged, and Alg. 7 raises the
//! occupancy at most to `incr x optimal_occ`, once per `T`. Once
//! `optimal_occ` has fallen (a stretch of low capacity sets it to what the
//! queue below handed down then) and `incr x optimal_occ` is less than what
//! the queue below can hand down per `T`, that queue is emptied at every
//! pull: no saturation is ever flagged again and the bearer is held at
//! `incr x optimal_occ` per `T` for good, however much the capacity grows.
//! Measured on the thesis' second scenario (10-ms MAC, pedestrian trace,
//! USP@5G-BDP): 99-100 % of the PRBs for 80 s, then a constant 3.4-3.8 kB
//! per 10 ms (35-83 % of the PRBs) to the end. The thesis says USP must
//! "not starve the SDAP queues, since that would also starve the RLC
//! queues" (sec. 3.5), so the guard does what Alg. 6 does for saturation
//! in the opposite case, as DQL does on starvation: when the queue below
//! handed down everything it held (`backlog_bytes == 0`, `pulled_bytes >
//! 0`) while USP had refused a candidate since the previous report,
//! `optimal_occ += pulled_bytes` (clamped). The default, `false`, runs
//! Alg. 6-7 as written (the unit test
//! `without_the_guard_a_fallen_occupancy_never_recovers` shows the stall;
//! `the_starvation_guard_lets_the_occupancy_grow_back` the cure).
//!
//! Defaults (sec. 3.6.1): MAX_OCC = 1024 packets = 1 536 000 B, `incr` 2
//! ("doubled"), `T` = the TTI of the reports, `min_occ` one MTU.
//!
//! Reads from the report (of the UPF queue's lower layer, the UE's TC
//! pipelines): `pulled_bytes`, `backlog_bytes`, `tti`.

use super::{settle, tti_of, DEFAULT_MTU, DEFAULT_TTI, MAX_1024_PACKETS};
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::{ByteSize, ConfigError, Duration, Instant};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct UspConfig {
    /// Multiplier applied after half an interval (thesis: "doubled").
    pub incr: f64,
    /// Lower clamp of the occupancy ("not to fall to zero").
    pub min_occ: ByteSize,
    /// MAX_OCC: initial value and upper clamp (1024 packets).
    pub max_occ: ByteSize,
    /// Interval `T`; unset = the TTI of the reports (Alg. 6 line 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// Grow `optimal_occ` by the bytes handed down when the queue below was
    /// emptied while USP held packets back (a deviation from the paper;
    /// default `false` = Alg. 6-7 as written, which can stall).
    pub starvation_guard: bool,
}

impl Default for UspConfig {
    fn default() -> Self {
        UspConfig {
            incr: 2.0,
            min_occ: ByteSize(DEFAULT_MTU as u64),
            max_occ: ByteSize(MAX_1024_PACKETS),
            interval: None,
            starvation_guard: false,
        }
    }
}

impl UspConfig {
    pub fn build(&self) -> Result<Usp, ConfigError> {
        let incr = check_f64("incr", self.incr, 1.0, 16.0)?;
        let min = check_range(
            "min_occ",
            self.min_occ,
            ByteSize(1),
            ByteSize(1_000_000_000),
        )?;
        let max = check_range("max_occ", self.max_occ, min, ByteSize(1_000_000_000))?;
        if let Some(i) = self.interval {
            check_range(
                "interval",
                i,
                Duration::from_micros(1),
                Duration::from_secs(10),
            )?;
        }
        Ok(Usp {
            incr,
            min_occ: min.0 as f64,
            max_occ: max.0 as f64,
            interval: self.interval,
            tti: DEFAULT_TTI,
            num_ticks: 0,
            dequeued_bytes: 0,
            dequeued_bytes_last: 0,
            saturation_detected: false,
            optimal_occ: max.0 as f64,
            last_time: None,
            pending: None,
            refused: 0,
            refused_since_report: false,
            starvation_guard: self.starvation_guard,
            rate: super::PulledRate::default(),
        })
    }
}

#[derive(Debug, Clone)]
pub struct Usp {
    incr: f64,
    min_occ: f64,
    max_occ: f64,
    interval: Option<Duration>,
    tti: Duration,
    num_ticks: u64,
    dequeued_bytes: u64,
    dequeued_bytes_last: u64,
    saturation_detected: bool,
    optimal_occ: f64,
    last_time: Option<Instant>,
    /// Bytes below plus the refused candidate, until something goes down.
    pending: Option<u64>,
    refused: u64,
    /// A candidate was refused since the previous report.
    refused_since_report: bool,
    starvation_guard: bool,
    rate: super::PulledRate,
}

impl Usp {
    fn t(&self) -> Duration {
        self.interval.unwrap_or(self.tti)
    }

    fn clamp(&self, x: f64) -> f64 {
        x.clamp(self.min_occ, self.max_occ)
    }

    pub fn optimal_occ(&self) -> f64 {
        self.optimal_occ
    }

    /// Queries in the current interval.
    pub fn num_ticks(&self) -> u64 {
        self.num_ticks
    }

    /// Alg. 7 without the tick count: the occupancy allowed at `now`.
    pub fn occupancy_at(&self, now: Instant) -> f64 {
        let half = Duration::from_nanos(self.t().as_nanos() / 2);
        match self.last_time {
            Some(t0) if now > t0 + half => self.clamp(self.incr * self.optimal_occ),
            _ => self.optimal_occ,
        }
    }

    /// Alg. 7 `GET_OPT_OCCUPANCY`.
    fn get_opt_occupancy(&mut self, now: Instant) -> f64 {
        self.num_ticks += 1;
        self.occupancy_at(now)
    }

    /// Alg. 6 `DEQUEUED(bytes)` (line 17 moved first, see the module doc).
    fn dequeued(&mut self, bytes: u64, now: Instant) {
        self.dequeued_bytes += bytes;
        let Some(last_time) = self.last_time else {
            // The first event: these bytes left before the pacer existed.
            self.restart(now);
            return;
        };
        let window = now.saturating_since(last_time);
        if self.saturation_detected {
            self.saturation_detected = false;
            if !window.is_zero() {
                let d = (self.dequeued_bytes - self.dequeued_bytes_last) as f64;
                self.optimal_occ = self.clamp(d * self.t().ratio(window));
            }
            self.restart(now);
        } else if now >= last_time + self.t() {
            self.restart(now);
        }
    }

    fn restart(&mut self, now: Instant) {
        self.last_time = Some(now);
        self.dequeued_bytes_last = self.dequeued_bytes;
        self.num_ticks = 0;
    }
}

impl Pacer for Usp {
    fn admits(&mut self, len: u32, now: Instant, lower: &LowerState) -> bool {
        self.last_time.get_or_insert(now);
        let occ = self.get_opt_occupancy(now);
        let want = lower.bytes + len as u64;
        let ok = lower.bytes == 0 || want as f64 <= occ;
        if !ok {
            self.refused += 1;
            self.refused_since_report = true;
            self.pending = Some(want);
        }
        ok
    }
    fn on_forwarded(&mut self, _len: u32, _now: Instant) {
        self.pending = None;
    }
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        self.tti = tti_of(report, self.tti);
        self.rate.update(report);
        if report.pulled_bytes > 0 {
            self.dequeued(report.pulled_bytes, now);
        } else {
            self.last_time.get_or_insert(now);
        }
        let refused = std::mem::take(&mut self.refused_since_report);
        if report.backlog_bytes > 0 {
            self.saturation_detected = true;
        } else if self.starvation_guard && refused && report.pulled_bytes > 0 {
            // The guard (module docs): the queue below ran dry while USP
            // held packets back.
            self.optimal_occ = self.clamp(self.optimal_occ + report.pulled_bytes as f64);
        }
    }
    fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        let want = self.pending? as f64;
        let t0 = self.last_time?;
        let half = t0 + Duration::from_nanos(self.t().as_nanos() / 2);
        if now > half || want > self.clamp(self.incr * self.optimal_occ) {
            return None;
        }
        let at = half + Duration::from_nanos(1);
        Some(settle(at, |t| want <= self.occupancy_at(t)))
    }
    fn stats(&self) -> PacerStats {
        PacerStats {
            bandwidth_bps: self.rate.get(),
            allowance_bytes: self.optimal_occ,
            limit: Some(self.optimal_occ),
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::testing::FakeLink;

    fn us(n: u64) -> Instant {
        Instant::from_micros(n)
    }

    fn report(pulled: u64, backlog: u64) -> LowerLayerReport {
        LowerLayerReport {
            tti: Duration::from_millis(1),
            backlog_bytes: backlog,
            backlog_sdus: backlog.div_ceil(1500) as u32,
            pulled_bytes: pulled,
            granted_bytes: pulled,
            max_bytes: pulled,
            ..LowerLayerReport::default()
        }
    }

    fn low(bytes: u64) -> LowerState {
        LowerState {
            bytes,
            sdus: bytes.div_ceil(1500) as u32,
        }
    }

    /// Alg. 6-7 by hand, T = TTI = 1 ms.
    #[test]
    fn occupancy_is_measured_on_saturation_and_doubled_after_half_t() {
        let mut p = UspConfig {
            starvation_guard: false,
            ..UspConfig::default()
        }
        .build()
        .unwrap();
        // Starts at MAX_OCC = 1 536 000 B.
        assert!(p.admits(1500, us(0), &low(1_534_500)));
        assert!(!p.admits(1500, us(0), &low(1_534_501)));
        // t = 1 ms: 3000 B handed down, 9000 B left: saturation flagged; the
        // interval [0, 1 ms] is over (>= T), restart.
        p.on_report(&report(3000, 9000), us(1000));
        assert_eq!(p.optimal_occ(), 1_536_000.0);
        // t = 2 ms: the flag is consumed: 4500 B dequeued in the last T.
        p.on_report(&report(4500, 0), us(2000));
        assert_eq!(p.optimal_occ(), 4500.0);
        // Before T/2: occupancy 4500.
        assert!(p.admits(1500, us(2500), &low(3000)));
        assert!(!p.admits(1500, us(2500), &low(3001)));
        // After T/2: doubled once, 9000.
        assert!(p.admits(1500, us(2501), &low(7500)));
        assert!(!p.admits(1500, us(2501), &low(7501)));
        assert_eq!(p.num_ticks(), 4);
        // t = 3 ms: no saturation, interval restarts; 3 ms: ticks reset.
        p.on_report(&report(2000, 0), us(3000));
        assert_eq!(p.optimal_occ(), 4500.0);
        assert_eq!(p.num_ticks(), 0);
        // t = 4 ms: backlog left -> saturation; t = 5 ms: recompute from the
        // 500 B of that interval: clamped up to min_occ = 1500.
        p.on_report(&report(1000, 200), us(4000));
        p.on_report(&report(500, 0), us(5000));
        assert_eq!(p.optimal_occ(), 1500.0);
    }

    #[test]
    fn occupancy_is_scaled_to_one_interval() {
        let mut p = UspConfig {
            interval: Some(Duration::from_millis(2)),
            ..UspConfig::default()
        }
        .build()
        .unwrap();
        p.on_report(&report(1000, 0), us(0)); // starts the interval at 0
        p.on_report(&report(1000, 500), us(1000)); // saturation, 1 ms < T
                                                   // Consumed 1 ms later: 3000 B over [0, 2 ms] = 3000 B per T = 2 ms.
        p.on_report(&report(2000, 0), us(2000));
        assert_eq!(p.optimal_occ(), 3000.0);
        // Over a 1-ms window: 2000 B, i.e. 4000 B per 2-ms T.
        p.on_report(&report(1000, 100), us(2500));
        p.on_report(&report(1000, 0), us(3000));
        assert_eq!(p.optimal_occ(), 4000.0);
    }

    #[test]
    fn next_wakeup_is_half_an_interval_if_the_candidate_then_fits() {
        let mut p = UspConfig::default().build().unwrap();
        p.on_report(&report(3000, 1), us(1000));
        p.on_report(&report(3000, 0), us(2000));
        assert_eq!(p.optimal_occ(), 3000.0);
        assert!(!p.admits(1500, us(2100), &low(3000)));
        let w = p.next_wakeup(us(2100)).unwrap();
        assert_eq!(w, us(2500) + Duration::from_nanos(1));
        assert!(p.admits(1500, w, &low(3000)));
        // Too big even when doubled: no wake-up.
        assert!(!p.admits(1500, us(2100), &low(5000)));
        assert_eq!(p.next_wakeup(us(2100)), None);
    }

    #[test]
    fn constant_capacity_keeps_the_queue_below_bounded_and_fed() {
        for capacity in [3000, 7700] {
            let mut p = UspConfig::default().build().unwrap();
            let mut link = FakeLink::new(capacity);
            link.run(&mut p, 3000);
            link.assert_steady(3 * capacity, 0.0);
        }
    }

    /// Brings `optimal_occ` down to `min_occ` (a saturation while the queue
    /// below handed down 500 B), then runs a 6000 B/TTI link.
    fn after_a_low_capacity_stretch(guard: bool) -> FakeLink {
        let mut p = UspConfig {
            starvation_guard: guard,
            ..UspConfig::default()
        }
        .build()
        .unwrap();
        p.on_report(&report(0, 0), us(0));
        p.on_report(&report(500, 100), us(1000));
        p.on_report(&report(500, 0), us(2000));
        assert_eq!(p.optimal_occ(), 1500.0);
        let mut link = FakeLink::new(6000);
        link.now = us(3000);
        link.run(&mut p, 2000);
        link
    }

    /// Alg. 6-7 as written: the queue below is emptied at every pull, no
    /// saturation is flagged, and the occupancy stays at incr x 1500 B per
    /// TTI: half the link unused for good.
    #[test]
    fn without_the_guard_a_fallen_occupancy_never_recovers() {
        let link = after_a_low_capacity_stretch(false);
        let tail: u64 = link.pulled[1000..].iter().sum();
        let share = tail as f64 / (6000.0 * 1000.0);
        assert!(share <= 0.5, "carried {share}");
    }

    /// With the guard the occupancy grows back to the link (the thesis: USP
    /// must not starve the queues below, sec. 3.5).
    #[test]
    fn the_starvation_guard_lets_the_occupancy_grow_back() {
        let link = after_a_low_capacity_stretch(true);
        link.assert_steady(4 * 6000, 0.02);
    }
}
