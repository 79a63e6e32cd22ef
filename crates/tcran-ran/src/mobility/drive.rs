//! A drive trace: what one UE measured of every cell along a recorded
//! drive, so that a multi-cell run replays real radio conditions instead
//! of computing them from geometry.
//!
//! Format (tcran's own CSV, `#` lines are comments):
//!
//! ```text
//! time_s,serving,cqi,rsrp:10945805,rsrp:11187723
//! 0,10945805,11,-99,-100
//! 1,10945805,11,-99,
//! 2,11187723,5,-101,-100
//! ```
//!
//! - `time_s`: seconds from the start of the drive, strictly increasing;
//!   row k applies on `[time_k, time_(k+1))`, the last row from its time
//!   on (a drive does not loop: replaying it from the start would invent a
//!   handover back to the first cell).
//! - `serving`: the cell the recording network served the UE from (its
//!   own handover decisions, kept to compare tcran's with; tcran never
//!   uses it to decide).
//! - `cqi`: the serving cell's reported CQI (0..=15, TS 38.214 Table
//!   5.2.2.1-2; 0 is out of range, an outage); the link adaptation of
//!   whichever cell serves the UE in the run.
//! - `rsrp:<cell id>`: that cell's RSRP, dBm, within TS 38.133's reporting
//!   range (-156 to -31 dBm, Table 10.1.6.1-1); empty when the UE did not
//!   measure the cell in that row. The measurement events
//!   ([`super::events`]) compare these.
//!
//! Contract: parsing is total (any text gives a trace or a [`TraceError`]
//! naming the line, the column and the value); lookups take the time as a
//! parameter and never fail.

use crate::channel::geometry::{efficiency, sinr_db_for};
use crate::channel::{Channel, ChannelSample, TraceError};
use crate::phy::mcs::CqiTable;
use std::sync::Arc;
use tcran_core::{CellId, Duration, Instant};

/// RSRP reporting range, dBm (TS 38.133 Table 10.1.6.1-1).
pub const RSRP_RANGE_DBM: (f64, f64) = (-156.0, -31.0);

/// One row of a drive.
#[derive(Clone, PartialEq, Debug)]
struct Row {
    at: Instant,
    serving: CellId,
    cqi: u8,
    /// One per column of [`DriveTrace::cells`].
    rsrp_dbm: Vec<Option<f64>>,
}

/// A parsed drive trace (module docs).
#[derive(Clone, PartialEq, Debug)]
pub struct DriveTrace {
    name: String,
    cells: Vec<CellId>,
    rows: Vec<Row>,
}

/// A change of the recording network's serving cell.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct RecordedHandover {
    pub at: Instant,
    pub source: CellId,
    pub target: CellId,
}

fn parse_time(s: &str) -> Option<Instant> {
    let v: f64 = s.parse().ok()?;
    // Up to ten days, in whole nanoseconds.
    (v.is_finite() && (0.0..=864_000.0).contains(&v))
        .then(|| Instant::from_nanos((v * 1e9).round() as u64))
}

impl DriveTrace {
    /// Parses the CSV text; `name` appears in error messages.
    pub fn parse(name: &str, text: &str) -> Result<DriveTrace, TraceError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let Some((hline, header)) = lines.next() else {
            return Err(TraceError::file(
                name,
                "empty file: expected a header time_s,serving,cqi,rsrp:<cell id>,...",
            ));
        };
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        if cols.len() < 4 || cols[..3] != ["time_s", "serving", "cqi"] {
            return Err(TraceError::at(
                name,
                hline,
                header,
                "not a drive trace: the header is time_s,serving,cqi, then one rsrp:<cell id> column per cell",
            ));
        }
        let mut cells = Vec::new();
        for c in &cols[3..] {
            let id = c
                .strip_prefix("rsrp:")
                .and_then(|v| v.parse::<u32>().ok())
                .map(CellId);
            match id {
                Some(id) if !cells.contains(&id) => cells.push(id),
                Some(_) => {
                    return Err(TraceError::at(
                        name,
                        hline,
                        c,
                        "column named twice: one rsrp:<cell id> column per cell",
                    ))
                }
                None => {
                    return Err(TraceError::at(
                        name,
                        hline,
                        c,
                        "column must be rsrp:<cell id> (a cell id is 0..=4294967295)",
                    ))
                }
            }
        }
        let mut rows: Vec<Row> = Vec::new();
        for (line, l) in lines {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            if f.len() != cols.len() {
                return Err(TraceError::at(
                    name,
                    line,
                    l,
                    format!("row has {} fields, the header {}", f.len(), cols.len()),
                ));
            }
            let bad = |col: &str, v: &str, allowed: &str| {
                TraceError::at(name, line, v, format!("column {col}: {allowed}"))
            };
            let at = parse_time(f[0]).ok_or_else(|| bad("time_s", f[0], "seconds, 0 to 864000"))?;
            if let Some(prev) = rows.last() {
                if at <= prev.at {
                    return Err(bad(
                        "time_s",
                        f[0],
                        "must be after the previous row's time (strictly increasing)",
                    ));
                }
            }
            let serving = f[1]
                .parse::<u32>()
                .map(CellId)
                .map_err(|_| bad("serving", f[1], "a cell id, 0..=4294967295"))?;
            let cqi = match f[2].parse::<u8>() {
                Ok(v) if v <= 15 => v,
                _ => return Err(bad("cqi", f[2], "an integer 0..=15")),
            };
            let mut rsrp_dbm = Vec::with_capacity(cells.len());
            for (k, v) in f[3..].iter().enumerate() {
                if v.is_empty() {
                    rsrp_dbm.push(None);
                    continue;
                }
                match v.parse::<f64>() {
                    Ok(x) if (RSRP_RANGE_DBM.0..=RSRP_RANGE_DBM.1).contains(&x) => {
                        rsrp_dbm.push(Some(x))
                    }
                    _ => return Err(bad(
                        cols[3 + k],
                        v,
                        "dBm, -156 to -31 (TS 38.133 Table 10.1.6.1-1), or empty if not measured",
                    )),
                }
            }
            rows.push(Row {
                at,
                serving,
                cqi,
                rsrp_dbm,
            });
        }
        if rows.is_empty() {
            return Err(TraceError::file(name, "no data rows after the header"));
        }
        Ok(DriveTrace {
            name: name.to_string(),
            cells,
            rows,
        })
    }

    /// Reads and parses a file.
    pub fn from_path(path: &std::path::Path) -> Result<DriveTrace, TraceError> {
        let (name, text) = crate::channel::read_trace_file(path)?;
        DriveTrace::parse(&name, &text)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cells of the `rsrp:` columns, in column order.
    pub fn cells(&self) -> &[CellId] {
        &self.cells
    }

    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// The time of the last row.
    pub fn end(&self) -> Instant {
        self.rows[self.rows.len() - 1].at
    }

    fn row(&self, t: Instant) -> &Row {
        let i = self.rows.partition_point(|r| r.at <= t).saturating_sub(1);
        &self.rows[i]
    }

    /// Each cell's RSRP at `t` (dBm, `None` if not measured), in
    /// [`Self::cells`] order.
    pub fn rsrp_at(&self, t: Instant) -> &[Option<f64>] {
        &self.row(t).rsrp_dbm
    }

    pub fn cqi_at(&self, t: Instant) -> u8 {
        self.row(t).cqi
    }

    /// The recording network's serving cell at `t`.
    pub fn serving_at(&self, t: Instant) -> CellId {
        self.row(t).serving
    }

    /// Every change of the recording network's serving cell, in time order.
    pub fn recorded_handovers(&self) -> Vec<RecordedHandover> {
        self.rows
            .windows(2)
            .filter(|w| w[0].serving != w[1].serving)
            .map(|w| RecordedHandover {
                at: w[1].at,
                source: w[0].serving,
                target: w[1].serving,
            })
            .collect()
    }
}

/// A drive's CQI column as link adaptation, for the UE served from
/// [`DriveChannel::serving_from`]'s cell (or the recording network's).
///
/// The CQI was reported of the recording network's serving cell. When
/// the run serves the UE from another cell of the row (its own handover
/// decisions differ), the CQI is worked out for that cell from the row's
/// RSRPs: the recorded CQI's SINR (TR 36.942 Annex A.2's attenuated
/// Shannon bound at the CQI's efficiency, TS 38.214 Table 5.2.2.1-2..4:
/// the inverse of the geometry channel's mapping) gives the interference
/// and noise the UE saw, `D = S_rec / SINR_rec`. Of `D`, the run's cell
/// `s` contributed `a S_s`, its load `a` at most 1 and at most what `D`
/// holds (`a = min(1, D / S_s)`); served from `s`, that part goes and the
/// recorded cell interferes at the same load: `SINR_s = S_s / (D + a
/// (S_rec - S_s))`. So a cell as strong as the recorded one gets its CQI,
/// and between two cells that limit each other a 1 dB weaker one loses
/// 2 dB of SINR. A recorded outage (CQI 0) stays one, and so does the
/// recorded CQI when either cell went unmeasured in the row (nothing to
/// compare).
#[derive(Clone, Debug)]
pub struct DriveChannel {
    trace: Arc<DriveTrace>,
    table: CqiTable,
    serving: Option<CellId>,
}

impl DriveChannel {
    pub fn new(trace: Arc<DriveTrace>, table: CqiTable) -> DriveChannel {
        DriveChannel {
            trace,
            table,
            serving: None,
        }
    }

    /// The channel from cell `cell` (`None`: whichever cell the recording
    /// network served from).
    pub fn serving_from(mut self, cell: Option<CellId>) -> DriveChannel {
        self.serving = cell;
        self
    }

    pub fn trace(&self) -> &Arc<DriveTrace> {
        &self.trace
    }

    pub fn table(&self) -> CqiTable {
        self.table
    }

    /// The CQI the UE would report at `t` of the channel from its cell
    /// (type docs).
    pub fn cqi_at(&self, t: Instant) -> u8 {
        let row = self.trace.row(t);
        let Some(cell) = self.serving.filter(|&c| c != row.serving) else {
            return row.cqi;
        };
        let rsrp = |id: CellId| {
            let k = self.trace.cells.iter().position(|&c| c == id)?;
            row.rsrp_dbm[k]
        };
        let (Some(recorded), Some(ours)) = (rsrp(row.serving), rsrp(cell)) else {
            return row.cqi;
        };
        let Ok(Some(entry)) = self.table.entry(row.cqi) else {
            return row.cqi;
        };
        let mw = |dbm: f64| 10f64.powf(dbm / 10.0);
        let (s_rec, s_ours) = (mw(recorded), mw(ours));
        let sinr_rec = 10f64.powf(sinr_db_for(entry.efficiency) / 10.0);
        let d = s_rec / sinr_rec;
        let load = (d / s_ours).min(1.0);
        let sinr_db = 10.0 * (s_ours / (d + load * (s_rec - s_ours))).log10();
        self.table.cqi_at_most(efficiency(sinr_db))
    }
}

impl Channel for DriveChannel {
    fn sample(&mut self, now: Instant, _dt: Duration) -> ChannelSample {
        match self.table.to_mcs(self.cqi_at(now)) {
            Ok(Some(m)) => ChannelSample::Mcs(m),
            _ => ChannelSample::Outage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVE: &str = "# a comment\n\
        time_s,serving,cqi,rsrp:7,rsrp:9\n\
        0,7,11,-99,-100\n\
        1.5,7,0,-101.5,\n\
        2,9,15,,-90\n";

    #[test]
    fn rows_apply_from_their_time_until_the_next() {
        let d = DriveTrace::parse("d.csv", DRIVE).unwrap();
        assert_eq!(d.cells(), [CellId(7), CellId(9)]);
        assert_eq!(d.rows(), 3);
        // Hand-read: 1.499 s is still row 0, 1.5 s row 1, 60 s the last.
        let at = |ms| Instant::from_millis(ms);
        assert_eq!(d.rsrp_at(at(1499)), [Some(-99.0), Some(-100.0)]);
        assert_eq!(d.rsrp_at(at(1500)), [Some(-101.5), None]);
        assert_eq!(d.rsrp_at(at(60_000)), [None, Some(-90.0)]);
        assert_eq!((d.cqi_at(at(0)), d.cqi_at(at(1700))), (11, 0));
        assert_eq!(d.serving_at(at(2000)), CellId(9));
        assert_eq!(
            d.recorded_handovers(),
            [RecordedHandover {
                at: at(2000),
                source: CellId(7),
                target: CellId(9)
            }]
        );
        assert_eq!(d.end(), at(2000));
    }

    #[test]
    fn cqi_maps_through_the_table_and_zero_is_an_outage() {
        use crate::phy::mcs::{Mcs, McsTable};
        let d = Arc::new(DriveTrace::parse("d.csv", DRIVE).unwrap());
        let mut c = DriveChannel::new(d, CqiTable::Table1);
        // TS 38.214 Table 5.2.2.1-2 CQI 11 -> 64QAM, as UccTrace maps it
        // (CQI 12 -> MCS 22 there; CQI 11 -> MCS 20).
        assert_eq!(
            c.sample(Instant::ZERO, Duration::ZERO),
            ChannelSample::Mcs(Mcs {
                table: McsTable::Qam64,
                index: 20
            })
        );
        assert_eq!(
            c.sample(Instant::from_millis(1600), Duration::ZERO),
            ChannelSample::Outage
        );
    }

    /// Served from the recorded cell, the CQI is the recorded one; from
    /// another, it follows the RSRPs. Oracle, by hand: CQI 11 of TS 38.214
    /// Table 5.2.2.1-2 is 3.3223 bit/s/Hz, so SINR_rec = 2^(3.3223/0.6) - 1
    /// = 45.44 (16.57 dB), D = S_rec / 45.44. Cell 9 at -100 dBm, 1 dB
    /// under cell 7's -99: S_9 = 0.794 S_rec > D, so a = D / S_9 and
    /// SINR_9 = S_9 / (a S_rec) = 16.57 - 2 = 14.57 dB, efficiency 0.6
    /// log2(1 + 28.66) = 2.93: CQI 10 (2.7305; CQI 11 is 3.3223). A cell
    /// as strong as the recorded one gets its CQI.
    #[test]
    fn another_cell_gets_the_cqi_its_rsrp_affords() {
        let d = Arc::new(DriveTrace::parse("d.csv", DRIVE).unwrap());
        let from = |cell| DriveChannel::new(d.clone(), CqiTable::Table1).serving_from(cell);
        let at = |ms| Instant::from_millis(ms);
        assert_eq!(from(None).cqi_at(at(0)), 11);
        assert_eq!(from(Some(CellId(7))).cqi_at(at(0)), 11);
        assert_eq!(from(Some(CellId(9))).cqi_at(at(0)), 10);
        // Cell 9 unmeasured at 1.5 s: the recorded CQI (an outage) stays.
        assert_eq!(from(Some(CellId(9))).cqi_at(at(1500)), 0);
        // At 2 s the network served from cell 9; cell 7 went unmeasured.
        assert_eq!(from(Some(CellId(7))).cqi_at(at(2000)), 15);
        let equal = "time_s,serving,cqi,rsrp:7,rsrp:9\n0,7,9,-95,-95\n";
        let d = Arc::new(DriveTrace::parse("e.csv", equal).unwrap());
        for cqi_of in [Some(CellId(7)), Some(CellId(9))] {
            let c = DriveChannel::new(d.clone(), CqiTable::Table1).serving_from(cqi_of);
            assert_eq!(c.cqi_at(Instant::ZERO), 9, "{cqi_of:?}");
        }
    }

    #[test]
    fn bad_input_names_line_column_and_value() {
        let h = "time_s,serving,cqi,rsrp:7\n";
        let err = |body: &str| DriveTrace::parse("d.csv", &format!("{h}{body}")).unwrap_err();
        let e = err("0,7,16,-90\n");
        assert_eq!((e.line, e.value.as_deref()), (Some(2), Some("16")));
        assert!(e.problem.contains("cqi"), "{e}");
        let e = err("0,7,3,-20\n");
        assert_eq!((e.line, e.value.as_deref()), (Some(2), Some("-20")));
        assert!(e.problem.contains("rsrp:7"), "{e}");
        let e = err("1,7,3,-90\n1,7,3,-90\n");
        assert_eq!(e.line, Some(3));
        assert!(e.problem.contains("time_s"), "{e}");
        let e = err("0,x,3,-90\n");
        assert!(e.problem.contains("serving"), "{e}");
        let e = err("0,7,3\n");
        assert_eq!(e.line, Some(2));
        assert!(DriveTrace::parse("d.csv", "time_s,serving,cqi,rsrp:1,rsrp:1\n").is_err());
        assert!(DriveTrace::parse("d.csv", "time_s,serving,cqi,snr\n").is_err());
        assert!(DriveTrace::parse("d.csv", h).is_err());
        assert!(DriveTrace::parse("d.csv", "").is_err());
    }
}
