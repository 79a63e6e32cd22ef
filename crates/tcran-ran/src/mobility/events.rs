//! Measurement events as a UE evaluates them (TS 38.331 §5.5.3-§5.5.4):
//! layer-3 filtering of each cell's RSRP, then the entering and leaving
//! conditions of event A2, A3 or A5 with hysteresis, held for
//! time-to-trigger before the UE reports.
//!
//! Contract:
//! - [`L3Filter`] is §5.5.3.2's `F_n = (1 - a) F_(n-1) + a M_n`, `a =
//!   1/2^(k/4)`, `F_1 = M_1`, in the dB domain the events compare in; one
//!   update per measurement (the spec's sample period is the caller's).
//! - [`EventDetector::measure`] takes one measurement occasion (the serving
//!   cell's and the neighbours' filtered RSRP). A cell's event triggers at
//!   the first occasion at which its entering condition has held at every
//!   occasion for at least time-to-trigger (§5.5.4.1: "fulfilled ... for all
//!   measurements ... taken during timeToTrigger"); a triggered cell leaves
//!   the same way on its leaving condition. An occasion that fulfils
//!   neither keeps the cell as it is but restarts the count.
//! - Only RSRP, cell offsets `Ocn = Ocp = 0` and frequency offsets `Ofn =
//!   Ofp = 0` (one carrier); A3's neighbour is any cell but the serving one.
//! - Every configurable value is one the RRC encoding can carry (the
//!   ranges below); [`EventConfig::build`] refuses anything else.

use serde::{Deserialize, Serialize};
use tcran_core::{CellId, ConfigError, Duration, Instant};

/// `TimeToTrigger` (TS 38.331 §6.3.2), ms.
pub const TIME_TO_TRIGGER_MS: [u64; 16] = [
    0, 40, 64, 80, 100, 128, 160, 256, 320, 480, 512, 640, 1024, 1280, 2560, 5120,
];

/// `FilterCoefficient` (TS 38.331 §6.3.2): the values of `k`.
pub const FILTER_COEFFICIENTS: [u8; 15] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 17, 19];

/// `RSRP-Range` (TS 38.331 §6.3.2, TS 38.133 Table 10.1.6.1-1) as a
/// threshold: whole dBm from -156 to -31.
pub const RSRP_THRESHOLD_DBM: (i32, i32) = (-156, -31);

/// Which event, with its own parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum EventKind {
    /// A2: the serving cell becomes worse than `threshold_dbm` (§5.5.4.3).
    A2 { threshold_dbm: f64 },
    /// A3: a neighbour becomes `offset_db` better than the serving cell
    /// (§5.5.4.4); `a3-Offset`, -15 to 15 dB in 0.5 dB steps.
    A3 { offset_db: f64 },
    /// A5: the serving cell becomes worse than `threshold1_dbm` and a
    /// neighbour better than `threshold2_dbm` (§5.5.4.6).
    A5 {
        threshold1_dbm: f64,
        threshold2_dbm: f64,
    },
}

/// One event's `ReportConfigNR` as far as triggering goes, with the
/// layer-3 filter of `QuantityConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    pub event: EventKind,
    /// `Hysteresis`: 0 to 15 dB in 0.5 dB steps.
    #[serde(default = "default_hysteresis")]
    pub hysteresis_db: f64,
    /// `TimeToTrigger`: one of [`TIME_TO_TRIGGER_MS`].
    #[serde(default = "default_time_to_trigger")]
    pub time_to_trigger: Duration,
    /// `filterCoefficientRSRP`: one of [`FILTER_COEFFICIENTS`] (default
    /// fc4, the specification's).
    #[serde(default = "default_filter")]
    pub filter_coefficient: u8,
}

fn default_hysteresis() -> f64 {
    1.0
}

fn default_time_to_trigger() -> Duration {
    Duration::from_millis(160)
}

fn default_filter() -> u8 {
    4
}

/// A checked [`EventConfig`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventParams {
    pub event: EventKind,
    pub hysteresis_db: f64,
    pub time_to_trigger: Duration,
    pub filter_coefficient: u8,
}

impl EventConfig {
    pub fn build(&self) -> Result<EventParams, ConfigError> {
        half_db_steps("hysteresis_db", self.hysteresis_db, 0.0, 15.0)?;
        let ttt_ms = self.time_to_trigger.as_millis_f64();
        if !TIME_TO_TRIGGER_MS
            .iter()
            .any(|&ms| (ms as f64 - ttt_ms).abs() < 1e-9)
        {
            return Err(ConfigError::new(
                "time_to_trigger",
                self.time_to_trigger,
                format!("one of TS 38.331's TimeToTrigger values: {TIME_TO_TRIGGER_MS:?} ms"),
            ));
        }
        if !FILTER_COEFFICIENTS.contains(&self.filter_coefficient) {
            return Err(ConfigError::new(
                "filter_coefficient",
                self.filter_coefficient,
                format!("one of TS 38.331's FilterCoefficient values: {FILTER_COEFFICIENTS:?}"),
            ));
        }
        match self.event {
            EventKind::A2 { threshold_dbm } => rsrp("event.threshold_dbm", threshold_dbm)?,
            EventKind::A3 { offset_db } => {
                half_db_steps("event.offset_db", offset_db, -15.0, 15.0)?
            }
            EventKind::A5 {
                threshold1_dbm,
                threshold2_dbm,
            } => {
                rsrp("event.threshold1_dbm", threshold1_dbm)?;
                rsrp("event.threshold2_dbm", threshold2_dbm)?;
            }
        }
        Ok(EventParams {
            event: self.event,
            hysteresis_db: self.hysteresis_db,
            time_to_trigger: self.time_to_trigger,
            filter_coefficient: self.filter_coefficient,
        })
    }
}

/// `value` within `lo..=hi` in steps of 0.5 dB (an RRC integer times 0.5).
fn half_db_steps(field: &str, value: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
    let steps = value * 2.0;
    if !(lo..=hi).contains(&value) || (steps - steps.round()).abs() > 1e-9 {
        return Err(ConfigError::new(
            field,
            value,
            format!("{lo} to {hi} dB in steps of 0.5 dB"),
        ));
    }
    Ok(())
}

fn rsrp(field: &str, value: f64) -> Result<(), ConfigError> {
    let (lo, hi) = RSRP_THRESHOLD_DBM;
    if !(f64::from(lo)..=f64::from(hi)).contains(&value) || value.fract() != 0.0 {
        return Err(ConfigError::new(
            field,
            value,
            format!("whole dBm from {lo} to {hi} (RSRP-Range)"),
        ));
    }
    Ok(())
}

/// TS 38.331 §5.5.3.2 layer-3 filter of one cell's measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L3Filter {
    a: f64,
    value: Option<f64>,
}

impl L3Filter {
    /// The filter of coefficient `k` (`a = 1/2^(k/4)`; `k = 0` passes
    /// measurements through).
    pub fn new(k: u8) -> L3Filter {
        L3Filter {
            a: 0.5f64.powf(f64::from(k) / 4.0),
            value: None,
        }
    }

    /// Takes measurement `m` and returns the filtered value.
    pub fn update(&mut self, m: f64) -> f64 {
        let f = match self.value {
            None => m,
            Some(prev) => (1.0 - self.a) * prev + self.a * m,
        };
        self.value = Some(f);
        f
    }

    /// The last filtered value.
    pub fn value(&self) -> Option<f64> {
        self.value
    }
}

/// A change of a cell's event state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Report {
    /// The event triggered for `cell` (it joins `cellsTriggeredList`).
    Triggered { cell: CellId, at: Instant },
    /// `cell` fulfilled the leaving condition for time-to-trigger.
    Left { cell: CellId, at: Instant },
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct CellState {
    cell: CellId,
    triggered: bool,
    /// Since when the condition that would change `triggered` has held at
    /// every occasion.
    since: Option<Instant>,
}

/// One event evaluated for every cell a UE measures.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDetector {
    p: EventParams,
    cells: Vec<CellState>,
}

impl EventDetector {
    pub fn new(p: EventParams) -> EventDetector {
        EventDetector {
            p,
            cells: Vec::new(),
        }
    }

    pub fn params(&self) -> &EventParams {
        &self.p
    }

    /// The cells for which the event has triggered and not left.
    pub fn triggered(&self) -> impl Iterator<Item = CellId> + '_ {
        self.cells.iter().filter(|c| c.triggered).map(|c| c.cell)
    }

    /// Forgets every cell's state: after a handover the UE removes its
    /// measurement reporting entries (TS 38.331 §5.5.6.1) and evaluates
    /// the events afresh against the new serving cell.
    pub fn reset(&mut self) {
        self.cells.clear();
    }

    /// One measurement occasion: the serving cell's filtered RSRP and each
    /// neighbour's (dBm). Appends each change of state to `out`.
    pub fn measure(
        &mut self,
        now: Instant,
        serving: (CellId, f64),
        neighbours: &[(CellId, f64)],
        out: &mut Vec<Report>,
    ) {
        let (serving_cell, mp) = serving;
        let hys = self.p.hysteresis_db;
        match self.p.event {
            EventKind::A2 { threshold_dbm } => {
                let entering = mp + hys < threshold_dbm;
                let leaving = mp - hys > threshold_dbm;
                self.step(now, serving_cell, entering, leaving, out);
            }
            EventKind::A3 { offset_db } => {
                for &(cell, mn) in neighbours.iter().filter(|(c, _)| *c != serving_cell) {
                    let entering = mn - hys > mp + offset_db;
                    let leaving = mn + hys < mp + offset_db;
                    self.step(now, cell, entering, leaving, out);
                }
            }
            EventKind::A5 {
                threshold1_dbm,
                threshold2_dbm,
            } => {
                for &(cell, mn) in neighbours.iter().filter(|(c, _)| *c != serving_cell) {
                    let entering = mp + hys < threshold1_dbm && mn - hys > threshold2_dbm;
                    let leaving = mp - hys > threshold1_dbm || mn + hys < threshold2_dbm;
                    self.step(now, cell, entering, leaving, out);
                }
            }
        }
    }

    fn step(
        &mut self,
        now: Instant,
        cell: CellId,
        entering: bool,
        leaving: bool,
        out: &mut Vec<Report>,
    ) {
        let i = match self.cells.binary_search_by_key(&cell, |c| c.cell) {
            Ok(i) => i,
            Err(i) => {
                self.cells.insert(
                    i,
                    CellState {
                        cell,
                        triggered: false,
                        since: None,
                    },
                );
                i
            }
        };
        let ttt = self.p.time_to_trigger;
        let c = &mut self.cells[i];
        let changing = if c.triggered { leaving } else { entering };
        if !changing {
            c.since = None;
            return;
        }
        let since = *c.since.get_or_insert(now);
        if now.saturating_since(since) >= ttt {
            c.triggered = !c.triggered;
            c.since = None;
            out.push(if c.triggered {
                Report::Triggered { cell, at: now }
            } else {
                Report::Left { cell, at: now }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(v)
    }

    fn a3(offset_db: f64, hysteresis_db: f64, ttt_ms: u64) -> EventDetector {
        EventDetector::new(
            EventConfig {
                event: EventKind::A3 { offset_db },
                hysteresis_db,
                time_to_trigger: Duration::from_millis(ttt_ms),
                filter_coefficient: 4,
            }
            .build()
            .expect("valid"),
        )
    }

    /// Runs `rsrp(t)` = (serving, neighbour) at occasions every `step` ms
    /// up to `end` ms; the reports.
    fn run(
        d: &mut EventDetector,
        step: u64,
        end: u64,
        rsrp: impl Fn(u64) -> (f64, f64),
    ) -> Vec<Report> {
        let mut out = Vec::new();
        for t in (0..=end).step_by(step as usize) {
            let (mp, mn) = rsrp(t);
            d.measure(ms(t), (CellId(1), mp), &[(CellId(2), mn)], &mut out);
        }
        out
    }

    /// A3 with Off = 3 dB, Hys = 1 dB (§5.5.4.4): entering is
    /// `Mn - 1 > Mp + 3`, i.e. the neighbour more than 4 dB better; leaving
    /// `Mn + 1 < Mp + 3`, less than 2 dB better. Measured every 40 ms, TTT
    /// 160 ms: a neighbour 4.5 dB better from 200 ms enters at 200, 240,
    /// ..., and triggers at 360 ms, the first occasion 160 ms after the
    /// first.
    #[test]
    fn a3_triggers_after_time_to_trigger_of_entering_occasions() {
        let mut d = a3(3.0, 1.0, 160);
        let r = run(&mut d, 40, 1000, |t| {
            (-90.0, if t >= 200 { -85.5 } else { -95.0 })
        });
        assert_eq!(
            r,
            [Report::Triggered {
                cell: CellId(2),
                at: ms(360)
            }]
        );
        assert_eq!(d.triggered().collect::<Vec<_>>(), [CellId(2)]);
    }

    /// Exactly 4 dB better is not "more than": never enters.
    #[test]
    fn a3_needs_more_than_offset_plus_hysteresis() {
        let mut d = a3(3.0, 1.0, 0);
        assert!(run(&mut d, 40, 1000, |_| (-90.0, -86.0)).is_empty());
    }

    /// An occasion that breaks the entering condition (3.5 dB better at
    /// 280 ms: neither entering nor leaving) restarts the count: 320 ms is
    /// the first entering occasion again, so the event triggers at 480 ms.
    #[test]
    fn a3_time_to_trigger_restarts_when_one_occasion_misses() {
        let mut d = a3(3.0, 1.0, 160);
        let r = run(&mut d, 40, 1000, |t| {
            let better = match t {
                200..=240 => 4.5,
                280 => 3.5,
                t if t >= 320 => 4.5,
                _ => -5.0,
            };
            (-90.0, -90.0 + better)
        });
        assert_eq!(
            r,
            [Report::Triggered {
                cell: CellId(2),
                at: ms(480)
            }]
        );
    }

    /// Leaving: once triggered, the cell leaves after TTT of occasions with
    /// the neighbour less than 2 dB better; 3 dB better (between the two
    /// conditions) keeps it triggered.
    #[test]
    fn a3_leaves_on_the_leaving_condition_only() {
        let mut d = a3(3.0, 1.0, 80);
        let r = run(&mut d, 40, 1000, |t| {
            let better = match t {
                0..=80 => 5.0,
                120..=400 => 3.0,
                _ => 1.5,
            };
            (-90.0, -90.0 + better)
        });
        assert_eq!(
            r,
            [
                Report::Triggered {
                    cell: CellId(2),
                    at: ms(80)
                },
                Report::Left {
                    cell: CellId(2),
                    at: ms(520)
                },
            ]
        );
    }

    /// A2, threshold -110 dBm, Hys 2 dB (§5.5.4.3): entering Ms + 2 < -110.
    #[test]
    fn a2_compares_the_serving_cell_with_its_threshold() {
        let mut d = EventDetector::new(
            EventConfig {
                event: EventKind::A2 {
                    threshold_dbm: -110.0,
                },
                hysteresis_db: 2.0,
                time_to_trigger: Duration::ZERO,
                filter_coefficient: 4,
            }
            .build()
            .expect("valid"),
        );
        let mut out = Vec::new();
        for (t, ms_dbm) in [
            (0, -111.0),
            (40, -112.0),
            (80, -112.5),
            (120, -108.5),
            (160, -107.5),
        ] {
            d.measure(ms(t), (CellId(1), ms_dbm), &[], &mut out);
        }
        assert_eq!(
            out,
            [
                Report::Triggered {
                    cell: CellId(1),
                    at: ms(80)
                },
                Report::Left {
                    cell: CellId(1),
                    at: ms(160)
                },
            ]
        );
    }

    /// A5 (§5.5.4.6) needs both: serving below threshold1 and the
    /// neighbour above threshold2, each with the hysteresis.
    #[test]
    fn a5_needs_both_thresholds() {
        let mut d = EventDetector::new(
            EventConfig {
                event: EventKind::A5 {
                    threshold1_dbm: -100.0,
                    threshold2_dbm: -95.0,
                },
                hysteresis_db: 1.0,
                time_to_trigger: Duration::ZERO,
                filter_coefficient: 4,
            }
            .build()
            .expect("valid"),
        );
        let mut out = Vec::new();
        // Serving good, neighbour good: no. Serving bad, neighbour weak: no.
        d.measure(ms(0), (CellId(1), -98.0), &[(CellId(2), -90.0)], &mut out);
        d.measure(ms(40), (CellId(1), -102.0), &[(CellId(2), -95.5)], &mut out);
        assert!(out.is_empty());
        d.measure(ms(80), (CellId(1), -102.0), &[(CellId(2), -93.0)], &mut out);
        assert_eq!(
            out,
            [Report::Triggered {
                cell: CellId(2),
                at: ms(80)
            }]
        );
    }

    /// §5.5.3.2 with k = 4: a = 1/2, so -80, -90, -90 filter to -80, -85,
    /// -87.5; k = 0 passes the measurements through.
    #[test]
    fn layer3_filter_follows_the_recursion() {
        let mut f = L3Filter::new(4);
        let got: Vec<f64> = [-80.0, -90.0, -90.0].iter().map(|&m| f.update(m)).collect();
        assert_eq!(got, [-80.0, -85.0, -87.5]);
        let mut none = L3Filter::new(0);
        assert_eq!(none.update(-80.0), -80.0);
        assert_eq!(none.update(-90.0), -90.0);
    }

    proptest::proptest! {
        /// Whatever the measurements, each cell's reports alternate
        /// (triggered, left, triggered, ...), and a report comes at least
        /// time-to-trigger after the previous change of that cell.
        #[test]
        fn reports_alternate_and_respect_time_to_trigger(
            ttt in proptest::sample::select(TIME_TO_TRIGGER_MS.to_vec()),
            steps in proptest::collection::vec((-120.0f64..-60.0, -120.0f64..-60.0, -120.0f64..-60.0), 1..200),
        ) {
            let mut d = a3(2.0, 1.0, ttt);
            let mut out = Vec::new();
            for (i, (mp, m2, m3)) in steps.iter().enumerate() {
                let t = 40 * i as u64;
                d.measure(ms(t), (CellId(1), *mp), &[(CellId(2), *m2), (CellId(3), *m3)], &mut out);
            }
            for cell in [CellId(2), CellId(3)] {
                let mine: Vec<&Report> = out.iter().filter(|r| matches!(r, Report::Triggered { cell: c, .. } | Report::Left { cell: c, .. } if *c == cell)).collect();
                let mut last = Instant::ZERO;
                for (k, r) in mine.iter().enumerate() {
                    let (triggered, at) = match r {
                        Report::Triggered { at, .. } => (true, *at),
                        Report::Left { at, .. } => (false, *at),
                    };
                    proptest::prop_assert_eq!(triggered, k % 2 == 0);
                    proptest::prop_assert!(at.saturating_since(last) >= Duration::from_millis(ttt));
                    last = at;
                }
            }
        }
    }

    #[test]
    fn values_rrc_cannot_carry_are_refused_with_their_field() {
        let ok = EventConfig {
            event: EventKind::A3 { offset_db: 3.0 },
            hysteresis_db: 1.0,
            time_to_trigger: Duration::from_millis(160),
            filter_coefficient: 4,
        };
        assert!(ok.build().is_ok());
        let err = |c: EventConfig| c.build().expect_err("refused").to_string();
        assert!(err(EventConfig {
            hysteresis_db: 0.3,
            ..ok
        })
        .starts_with("hysteresis_db = 0.3: 0 to 15 dB"));
        assert!(err(EventConfig {
            time_to_trigger: Duration::from_millis(150),
            ..ok
        })
        .starts_with("time_to_trigger = 150ms: one of TS 38.331's TimeToTrigger values"));
        assert!(err(EventConfig {
            filter_coefficient: 10,
            ..ok
        })
        .starts_with("filter_coefficient = 10"));
        assert!(err(EventConfig {
            event: EventKind::A3 { offset_db: 16.0 },
            ..ok
        })
        .starts_with("event.offset_db = 16"));
        assert!(err(EventConfig {
            event: EventKind::A2 {
                threshold_dbm: -20.0
            },
            ..ok
        })
        .starts_with("event.threshold_dbm = -20: whole dBm from -156 to -31"));
    }
}
