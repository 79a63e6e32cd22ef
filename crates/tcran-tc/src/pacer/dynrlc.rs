//! `dynrlc`: dynamic sizing of the RLC buffer from the SDU queuing delay,
//! Kumar et al., kumar-dynamic-rlc-buffer.txt sec. III, Algorithm 1.
//!
//! Contract: admits iff `lower.sdus < floor(QLT)` (Fig. 1: RQL compared with
//! the queue length threshold QLT, in SDUs whatever their size). QLT starts
//! at `qlt_max` (line 1) and changes only when an SDU leaves the RLC buffer
//! (`on_sdu_departed`, lines 3-13):
//! - the sojourn sample joins the delay metric DLM, the *interval average*
//!   of the samples since the previous update (the candidate Kumar found
//!   best, sec. III);
//! - if `now > t_prev + T` (strict, as line 6 writes it; departures are not
//!   periodic so strictness does not matter): `QLT += alpha (QLT_max - QLT)`
//!   when `DLM < DLT`, else `QLT -= alpha (QLT - QLT_min)` (a DLM equal to
//!   DLT shrinks, as the `else` branch of line 9 says); then `t_prev = now`
//!   and the interval average restarts.
//!
//! DLT is either fixed (`dlt`, thesis sec. 3.6.1 used 11 ms with a 10 ms
//! TTI) or, with `dlt_beta`, Kumar sec. IV's `DLT = beta x EWMA(gap between
//! status PDUs)`: every `on_status_pdu` after the first feeds the gap to an
//! EWMA with gain `dlt_ewma_gain` (Kumar gives none; 1/8 as RFC 6298's SRTT)
//! seeded with `dlt_initial_gap` ("at least gamma + SRP"; default 30 ms,
//! Kumar Fig. 5's observed period with the default 25 ms tStatusProhibit).
//! Kumar's best compromise is `beta = 1.75` with gamma = 10 ms.
//!
//! `t_prev = t_now` at start (line 1) is taken at the first event the pacer
//! sees, since it is built without a clock. Nothing changes with time alone,
//! so `next_wakeup` is `None`.
//!
//! Reads from the report: `pulled_bytes` and `tti`, for the bandwidth
//! statistic only; the algorithm reads the SDU sojourns
//! (`on_sdu_departed`), the RLC AM status PDUs (`on_status_pdu`, DLT
//! estimator) and the SDU count of `LowerState`.

use super::PulledRate;
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::{ConfigError, Duration, Instant};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DynRlcConfig {
    /// Smallest QLT, SDUs (depends on the lowest bearer throughput expected).
    pub qlt_min: u32,
    /// Largest and initial QLT, SDUs (OAI's RLC-AM default buffer is 1024
    /// SDUs, Kumar sec. II).
    pub qlt_max: u32,
    /// Step as a fraction of the distance to the bound (thesis sec. 3.6.1: 0.1).
    pub alpha: f64,
    /// Minimum time between QLT updates (Kumar: 200 ms; the thesis: 100 ms).
    pub interval: Duration,
    /// Fixed delay threshold DLT (thesis sec. 3.6.1: 11 ms). Ignored when
    /// `dlt_beta` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dlt: Option<Duration>,
    /// When set, DLT = dlt_beta x EWMA(status PDU gap) (Kumar sec. IV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dlt_beta: Option<f64>,
    /// EWMA gain for the status PDU gap.
    pub dlt_ewma_gain: f64,
    /// Initial status PDU gap (Kumar: at least tStatusProhibit + SR period).
    pub dlt_initial_gap: Duration,
}

/// Thesis sec. 3.6.1's fixed DLT.
const DEFAULT_DLT: Duration = Duration::from_millis(11);

impl Default for DynRlcConfig {
    fn default() -> Self {
        DynRlcConfig {
            qlt_min: 4,
            qlt_max: 1024,
            alpha: 0.1,
            interval: Duration::from_millis(200),
            dlt: None,
            dlt_beta: None,
            dlt_ewma_gain: 0.125,
            dlt_initial_gap: Duration::from_millis(30),
        }
    }
}

impl DynRlcConfig {
    pub fn build(&self) -> Result<DynRlc, ConfigError> {
        let qlt_min = check_range("qlt_min", self.qlt_min, 1, 1_000_000)?;
        let qlt_max = check_range("qlt_max", self.qlt_max, qlt_min, 1_000_000)?;
        let alpha = check_f64("alpha", self.alpha, 0.0, 1.0)?;
        let interval = check_range(
            "interval",
            self.interval,
            Duration::from_micros(1),
            Duration::from_secs(60),
        )?;
        let dlt_range = |field: &str, d: Duration| {
            check_range(field, d, Duration::from_micros(1), Duration::from_secs(10))
        };
        if self.dlt.is_some() && self.dlt_beta.is_some() {
            return Err(ConfigError::new(
                "dlt_beta",
                self.dlt_beta.unwrap_or_default(),
                "set either dlt (fixed) or dlt_beta (from status PDU gaps), not both",
            ));
        }
        let dlt = match self.dlt_beta {
            Some(beta) => Dlt::StatusGap {
                beta: check_f64("dlt_beta", beta, 0.1, 100.0)?,
                gain: check_f64("dlt_ewma_gain", self.dlt_ewma_gain, 0.001, 1.0)?,
                gap_ns: dlt_range("dlt_initial_gap", self.dlt_initial_gap)?.as_nanos() as f64,
                last: None,
            },
            None => Dlt::Fixed(dlt_range("dlt", self.dlt.unwrap_or(DEFAULT_DLT))?),
        };
        Ok(DynRlc {
            qlt_min: qlt_min as f64,
            qlt_max: qlt_max as f64,
            alpha,
            interval,
            dlt,
            qlt: qlt_max as f64,
            t_prev: None,
            sum_ns: 0.0,
            samples: 0,
            refused: 0,
            rate: PulledRate::default(),
        })
    }
}

#[derive(Debug, Clone)]
enum Dlt {
    Fixed(Duration),
    StatusGap {
        beta: f64,
        gain: f64,
        /// EWMA of the gap between status PDUs, ns.
        gap_ns: f64,
        last: Option<Instant>,
    },
}

#[derive(Debug, Clone)]
pub struct DynRlc {
    qlt_min: f64,
    qlt_max: f64,
    alpha: f64,
    interval: Duration,
    dlt: Dlt,
    qlt: f64,
    t_prev: Option<Instant>,
    /// Interval average: sum and count of the samples since the last update.
    sum_ns: f64,
    samples: u64,
    refused: u64,
    rate: PulledRate,
}

impl DynRlc {
    /// Current queue length threshold (real-valued; admission floors it).
    pub fn qlt(&self) -> f64 {
        self.qlt
    }

    /// Current delay threshold.
    pub fn dlt(&self) -> Duration {
        match self.dlt {
            Dlt::Fixed(d) => d,
            Dlt::StatusGap { beta, gap_ns, .. } => Duration::from_nanos((beta * gap_ns) as u64),
        }
    }

    fn start(&mut self, now: Instant) -> Instant {
        *self.t_prev.get_or_insert(now)
    }
}

impl Pacer for DynRlc {
    fn admits(&mut self, _len: u32, now: Instant, lower: &LowerState) -> bool {
        self.start(now);
        // QLT >= qlt_min >= 1, so floor(QLT) >= 1 and the bearer never stalls.
        let ok = (lower.sdus as f64) < self.qlt.floor();
        if !ok {
            self.refused += 1;
        }
        ok
    }
    fn on_forwarded(&mut self, _len: u32, _now: Instant) {}
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        self.start(now);
        self.rate.update(report);
    }
    fn on_sdu_departed(&mut self, sojourn: Duration, now: Instant) {
        let t_prev = self.start(now);
        // Lines 4-5: the sample joins the interval average.
        self.sum_ns += sojourn.as_nanos() as f64;
        self.samples += 1;
        // Line 6.
        if now > t_prev + self.interval {
            let dlm = self.sum_ns / self.samples as f64;
            if dlm < self.dlt().as_nanos() as f64 {
                self.qlt += self.alpha * (self.qlt_max - self.qlt); // line 8
            } else {
                self.qlt -= self.alpha * (self.qlt - self.qlt_min); // line 10
            }
            self.t_prev = Some(now); // line 12
            self.sum_ns = 0.0;
            self.samples = 0;
        }
    }
    fn on_status_pdu(&mut self, now: Instant) {
        if let Dlt::StatusGap {
            gain, gap_ns, last, ..
        } = &mut self.dlt
        {
            if let Some(prev) = *last {
                let gap = now.saturating_since(prev).as_nanos() as f64;
                *gap_ns += *gain * (gap - *gap_ns);
            }
            *last = Some(now);
        }
    }
    fn stats(&self) -> PacerStats {
        PacerStats {
            bandwidth_bps: self.rate.get(),
            allowance_bytes: 0.0,
            limit: Some(self.qlt),
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::testing::FakeLink;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }
    fn d(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn kumar(qlt_min: u32, qlt_max: u32) -> DynRlc {
        DynRlcConfig {
            qlt_min,
            qlt_max,
            alpha: 0.1,
            interval: d(100),
            dlt: Some(d(11)),
            ..DynRlcConfig::default()
        }
        .build()
        .unwrap()
    }

    /// QLT steps computed by hand from Alg. 1 lines 6-12 with QLT_min 16,
    /// QLT_max 96, alpha 0.1, T 100 ms, DLT 11 ms.
    #[test]
    fn qlt_steps_by_hand() {
        let mut p = kumar(16, 96);
        p.on_report(&LowerLayerReport::default(), ms(0)); // t_prev = 0
        assert_eq!(p.qlt(), 96.0);
        p.on_sdu_departed(d(20), ms(50)); // 50 > 100? no
        assert_eq!(p.qlt(), 96.0);
        // 101 > 100: DLM = (20 + 20) / 2 = 20 >= 11: 96 - 0.1 (96 - 16) = 88.
        p.on_sdu_departed(d(20), ms(101));
        assert!((p.qlt() - 88.0).abs() < 1e-9);
        p.on_sdu_departed(d(5), ms(150));
        // 202 > 201: DLM = 5 < 11: 88 + 0.1 (96 - 88) = 88.8.
        p.on_sdu_departed(d(5), ms(202));
        assert!((p.qlt() - 88.8).abs() < 1e-9);
        p.on_sdu_departed(d(30), ms(250));
        p.on_sdu_departed(d(2), ms(302)); // 302 > 302? no
        assert!((p.qlt() - 88.8).abs() < 1e-9);
        // 303 > 302: DLM = (30 + 2 + 1) / 3 = 11, not < 11: shrink:
        // 88.8 - 0.1 (88.8 - 16) = 81.52.
        p.on_sdu_departed(d(1), ms(303));
        assert!((p.qlt() - 81.52).abs() < 1e-9);
        // Admission floors QLT: 81 SDUs fit, the 82nd does not.
        assert!(p.admits(1500, ms(303), &LowerState { bytes: 0, sdus: 80 }));
        assert!(!p.admits(1500, ms(303), &LowerState { bytes: 0, sdus: 81 }));
        assert_eq!(p.stats().refused, 1);
    }

    /// Repeated shrinking converges geometrically on QLT_min and never
    /// passes it.
    #[test]
    fn qlt_stays_within_bounds() {
        let mut p = kumar(16, 96);
        p.on_report(&LowerLayerReport::default(), ms(0));
        for k in 1..=200 {
            p.on_sdu_departed(d(500), ms(101 * k));
        }
        assert!(p.qlt() >= 16.0 && p.qlt() < 16.001);
        for k in 201..=400 {
            p.on_sdu_departed(d(1), ms(101 * k));
        }
        assert!(p.qlt() <= 96.0 && p.qlt() > 95.999);
    }

    /// Kumar sec. IV: DLT = beta x EWMA(status PDU gap). Initial gap 30 ms,
    /// gain 0.25, PDUs at 0, 20, 40 ms: EWMA 30 -> 27.5 -> 25.625;
    /// DLT = 1.5 x 25.625 = 38.4375 ms.
    #[test]
    fn dlt_follows_status_pdu_gaps() {
        let mut p = DynRlcConfig {
            dlt_beta: Some(1.5),
            dlt_ewma_gain: 0.25,
            dlt_initial_gap: d(30),
            ..DynRlcConfig::default()
        }
        .build()
        .unwrap();
        assert_eq!(p.dlt(), Duration::from_micros(45_000));
        p.on_status_pdu(ms(0));
        assert_eq!(p.dlt(), Duration::from_micros(45_000));
        p.on_status_pdu(ms(20));
        assert_eq!(p.dlt(), Duration::from_micros(41_250));
        p.on_status_pdu(ms(40));
        assert_eq!(p.dlt(), Duration::from_nanos(38_437_500));
    }

    #[test]
    fn fixed_and_status_pdu_dlt_are_exclusive() {
        let e = DynRlcConfig {
            dlt: Some(d(11)),
            dlt_beta: Some(1.75),
            ..DynRlcConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.field, "dlt_beta");
        assert_eq!(DynRlcConfig::default().build().unwrap().dlt(), d(11));
    }

    #[test]
    fn constant_capacity_keeps_the_buffer_bounded_and_the_mac_fed() {
        for capacity in [3000, 7700] {
            // Thesis sec. 3.6.1 settings: T 100 ms, DLT 11 ms, alpha 0.1;
            // QLT between Kumar's static extremes 16 and 96... but 7700 B/TTI
            // is ~5 SDUs per TTI, so allow up to 256.
            let mut p = kumar(4, 256);
            let mut link = FakeLink::new(capacity);
            link.run(&mut p, 8000);
            // The sojourn is held near DLT = 11 TTIs: the backlog after the
            // pull stays within about 2 DLT worth of bytes.
            link.assert_steady(22 * capacity, 0.0);
        }
    }

    #[test]
    fn status_pdu_dlt_runs_on_the_fake_link() {
        let mut p = DynRlcConfig {
            qlt_min: 4,
            qlt_max: 256,
            interval: d(100),
            dlt_beta: Some(1.75),
            dlt_initial_gap: d(10),
            ..DynRlcConfig::default()
        }
        .build()
        .unwrap();
        let mut link = FakeLink::new(3000);
        link.status_every = Some(10); // a status PDU every 10 ms
        link.run(&mut p, 8000);
        assert_eq!(p.dlt(), Duration::from_micros(17_500));
        link.assert_steady(40 * 3000, 0.0);
    }
}
