//! The UCC 5G production dataset (Raca et al., "Beyond Throughput, The Next
//! Generation: A 5G Dataset with Channel and Context Metrics", MMSys 2020):
//! G-NetTrack Pro CSV exports, one row per sample, nominally one second.
//!
//! Two ways to use a file:
//!
//! - [`UccTrace::cqi_series`]: the `CQI` column (0..=15) as link adaptation,
//!   mapped to an MCS with the CQI -> MCS table, like the thesis used the 4G
//!   dataset. Rows measured in LTE mode report an LTE CQI (TS 36.213 Table
//!   7.2.3-1), which is the same table as NR CQI table 1.
//! - [`UccTrace::dl_rate_series`]: the `DL_bitrate` column (kbit/s of
//!   application throughput) as a capacity trace (bytes per interval).
//!
//! Row k covers `[k s, (k + 1) s)`: the `Timestamp` column has 1-s
//! resolution and repeats or skips seconds, so it is not used. A missing
//! value (`-` or empty) **holds the previous one**; missing values before the
//! first valid one take that first valid value. The counts of filled values
//! are kept ([`UccTrace::missing_cqi`]). Series loop at their end.

use super::{window_stats, Channel, ChannelSample, TraceError, TraceFormat, TraceInfo};
use crate::phy::mcs::{CqiTable, Mcs};
use tcran_core::{Duration, Instant};

const SAMPLE: Duration = Duration::from_secs(1);

/// A parsed UCC 5G dataset CSV.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct UccTrace {
    name: String,
    cqi: Vec<Option<u8>>,
    dl_bps: Vec<Option<u64>>,
}

impl UccTrace {
    /// Parses the CSV text; `name` appears in error messages.
    pub fn parse(name: &str, text: &str) -> Result<UccTrace, TraceError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let Some((_, header)) = lines.next() else {
            return Err(TraceError::file(
                name,
                "empty file: expected a CSV header with CQI and DL_bitrate columns",
            ));
        };
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let find = |c: &str| cols.iter().position(|h| *h == c);
        let (Some(ci), Some(di)) = (find("CQI"), find("DL_bitrate")) else {
            let hint = if header.contains(',') {
                ""
            } else {
                " (one value per line: a mahimahi or thesis trace?)"
            };
            return Err(TraceError::at(
                name,
                1,
                header,
                format!(
                    "not a UCC 5G dataset CSV: the header needs CQI and DL_bitrate columns{hint}"
                ),
            ));
        };
        let mut cqi = Vec::new();
        let mut dl_bps = Vec::new();
        for (line, l) in lines {
            if l.trim().is_empty() {
                continue;
            }
            let cells: Vec<&str> = l.split(',').map(str::trim).collect();
            if cells.len() != cols.len() {
                return Err(TraceError::at(
                    name,
                    line,
                    l,
                    format!("row has {} fields, the header {}", cells.len(), cols.len()),
                ));
            }
            let missing = |s: &str| s.is_empty() || s == "-";
            let c = cells[ci];
            cqi.push(if missing(c) {
                None
            } else {
                match c.parse::<u8>() {
                    Ok(v) if v <= 15 => Some(v),
                    _ => {
                        return Err(TraceError::at(
                            name,
                            line,
                            c,
                            "CQI must be an integer 0..=15 or \"-\"",
                        ))
                    }
                }
            });
            let d = cells[di];
            dl_bps.push(if missing(d) {
                None
            } else {
                match d.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => Some((v * 1000.0).round() as u64),
                    _ => {
                        return Err(TraceError::at(
                            name,
                            line,
                            d,
                            "DL_bitrate must be a non-negative number of kbit/s or \"-\"",
                        ))
                    }
                }
            });
        }
        if cqi.is_empty() {
            return Err(TraceError::file(name, "no data rows after the header"));
        }
        Ok(UccTrace {
            name: name.to_string(),
            cqi,
            dl_bps,
        })
    }

    /// Reads and parses a file.
    pub fn from_path(path: &std::path::Path) -> Result<UccTrace, TraceError> {
        let (name, text) = super::read_trace_file(path)?;
        UccTrace::parse(&name, &text)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn rows(&self) -> usize {
        self.cqi.len()
    }

    /// Rows whose CQI was missing (filled by holding).
    pub fn missing_cqi(&self) -> usize {
        self.cqi.iter().filter(|c| c.is_none()).count()
    }

    /// Rows whose DL_bitrate was missing (filled by holding).
    pub fn missing_dl_bitrate(&self) -> usize {
        self.dl_bps.iter().filter(|c| c.is_none()).count()
    }

    /// The CQI column as link adaptation through `table`'s CQI -> MCS mapping.
    pub fn cqi_series(&self, table: CqiTable) -> Result<CqiSeries, TraceError> {
        let cqi = hold(&self.cqi)
            .ok_or_else(|| TraceError::file(&self.name, "no CQI value in any row"))?;
        Ok(CqiSeries::new(table, cqi))
    }

    /// The DL_bitrate column as a capacity trace.
    pub fn dl_rate_series(&self) -> Result<RateSeries, TraceError> {
        let bps = hold(&self.dl_bps)
            .ok_or_else(|| TraceError::file(&self.name, "no DL_bitrate value in any row"))?;
        Ok(RateSeries::new(TraceFormat::Ucc5g, SAMPLE, bps))
    }
}

/// Fills gaps by holding the previous value (leading gaps: the first value).
fn hold<T: Copy>(v: &[Option<T>]) -> Option<Vec<T>> {
    let mut last = v.iter().flatten().next().copied()?;
    Some(
        v.iter()
            .map(|x| {
                if let Some(x) = x {
                    last = *x;
                }
                last
            })
            .collect(),
    )
}

/// CQI per 1-s sample, mapped to an MCS; loops at the end.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CqiSeries {
    table: CqiTable,
    cqi: Vec<u8>,
    /// Pre-mapped samples, so `sample` cannot fail.
    mapped: Vec<ChannelSample>,
}

impl CqiSeries {
    /// `cqi` values above 15 are clamped to 15; CQI 0 is an outage.
    pub fn new(table: CqiTable, cqi: Vec<u8>) -> CqiSeries {
        let cqi: Vec<u8> = if cqi.is_empty() {
            vec![0]
        } else {
            cqi.into_iter().map(|c| c.min(15)).collect()
        };
        let mapped = cqi
            .iter()
            .map(|&c| match table.to_mcs(c) {
                Ok(Some(m)) => ChannelSample::Mcs(m),
                _ => ChannelSample::Outage,
            })
            .collect();
        CqiSeries { table, cqi, mapped }
    }

    pub fn table(&self) -> CqiTable {
        self.table
    }

    /// One CQI per second.
    pub fn cqi(&self) -> &[u8] {
        &self.cqi
    }

    pub fn duration(&self) -> Duration {
        Duration::from_secs(self.cqi.len() as u64)
    }

    fn index(&self, t: Instant) -> usize {
        ((t.as_nanos() / SAMPLE.as_nanos()) % self.cqi.len() as u64) as usize
    }

    /// CQI at `t`.
    pub fn cqi_at(&self, t: Instant) -> u8 {
        self.cqi[self.index(t)]
    }

    /// MCS at `t` (`None` at CQI 0).
    pub fn mcs_at(&self, t: Instant) -> Option<Mcs> {
        match self.mapped[self.index(t)] {
            ChannelSample::Mcs(m) => Some(m),
            _ => None,
        }
    }
}

impl Channel for CqiSeries {
    fn sample(&mut self, now: Instant, _dt: Duration) -> ChannelSample {
        self.mapped[self.index(now)]
    }
}

/// A bit rate held constant over fixed-length samples, looping at the end.
/// Bytes are integrated exactly (cumulative, floored), so adjacent intervals
/// neither lose nor invent a byte.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RateSeries {
    format: TraceFormat,
    period: Duration,
    bps: Vec<u64>,
    /// `prefix[i]` = bit·ns of samples 0..i.
    prefix: Vec<u128>,
}

impl RateSeries {
    /// `bps[i]` applies on `[i·period, (i+1)·period)`. An empty list or a zero
    /// period gives a zero-capacity series of one 1-s sample.
    pub fn new(format: TraceFormat, period: Duration, bps: Vec<u64>) -> RateSeries {
        let period = if period.is_zero() { SAMPLE } else { period };
        let bps = if bps.is_empty() { vec![0] } else { bps };
        let mut prefix = Vec::with_capacity(bps.len() + 1);
        prefix.push(0u128);
        for &b in &bps {
            prefix.push(
                prefix.last().copied().unwrap_or(0) + u128::from(b) * u128::from(period.as_nanos()),
            );
        }
        RateSeries {
            format,
            period,
            bps,
            prefix,
        }
    }

    /// Bit rate per sample, bit/s.
    pub fn bps(&self) -> &[u64] {
        &self.bps
    }

    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.period.as_nanos().saturating_mul(self.bps.len() as u64))
    }

    fn cumulative_bytes(&self, x: Instant) -> u128 {
        let p = self.period.as_nanos();
        let (k, rem) = (x.as_nanos() / p, x.as_nanos() % p);
        let n = self.bps.len() as u64;
        let (passes, i) = (k / n, (k % n) as usize);
        let bitns = u128::from(passes) * self.prefix[self.bps.len()]
            + self.prefix[i]
            + u128::from(self.bps[i]) * u128::from(rem);
        bitns / 8_000_000_000
    }

    /// Bytes in `[from, to)`.
    pub fn bytes_between(&self, from: Instant, to: Instant) -> u64 {
        if to <= from {
            return 0;
        }
        (self.cumulative_bytes(to) - self.cumulative_bytes(from)).min(u128::from(u64::MAX)) as u64
    }

    pub fn info(&self) -> TraceInfo {
        let d = self.duration();
        let (min, max) = window_stats(
            |a, b| self.bytes_between(a, b),
            Instant::ZERO,
            d,
            self.period,
        );
        let total_bits = self.bps.iter().map(|&b| u128::from(b)).sum::<u128>() as f64;
        TraceInfo {
            format: self.format,
            samples: self.bps.len(),
            duration: d,
            mean_mbps: total_bits / self.bps.len() as f64 / 1e6,
            min_mbps: min,
            max_mbps: max,
            window: self.period,
        }
    }
}

impl Channel for RateSeries {
    fn sample(&mut self, now: Instant, dt: Duration) -> ChannelSample {
        ChannelSample::Bytes(self.bytes_between(now, now + dt))
    }
    fn info(&self) -> Option<TraceInfo> {
        Some(RateSeries::info(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::mcs::McsTable;

    const HDR: &str = "Timestamp,NetworkMode,CQI,DL_bitrate,State";

    fn csv(rows: &[&str]) -> String {
        let mut s = String::from(HDR);
        for r in rows {
            s.push('\n');
            s.push_str(r);
        }
        s
    }

    #[test]
    fn missing_values_hold_the_previous_one() {
        let t = UccTrace::parse(
            "u.csv",
            &csv(&[
                "a,5G,-,-,D",
                "b,5G,12,800,D",
                "c,LTE,-,-,D",
                "d,5G,0,1600,I",
            ]),
        )
        .unwrap();
        assert_eq!(
            (t.rows(), t.missing_cqi(), t.missing_dl_bitrate()),
            (4, 2, 2)
        );
        let s = t.cqi_series(CqiTable::Table1).unwrap();
        assert_eq!(s.cqi(), [12, 12, 12, 0]);
        let mut s2 = s.clone();
        let s1 = Instant::from_millis(1500);
        assert_eq!(
            s.mcs_at(s1),
            Some(Mcs {
                table: McsTable::Qam64,
                index: 22
            })
        );
        assert_eq!(
            s2.sample(Instant::from_millis(3000), Duration::ZERO),
            ChannelSample::Outage
        );
        // Loops: second 4 is row 0 again.
        assert_eq!(s.cqi_at(Instant::from_millis(4000)), 12);
        let r = t.dl_rate_series().unwrap();
        assert_eq!(r.bps(), [800_000, 800_000, 800_000, 1_600_000]);
        assert_eq!(
            r.bytes_between(Instant::ZERO, Instant::from_millis(1000)),
            100_000
        );
        let i = r.info();
        assert!((i.mean_mbps - 1.0).abs() < 1e-9 && (i.max_mbps - 1.6).abs() < 1e-9);
    }

    #[test]
    fn rate_series_integrates_without_drift() {
        // 1 kbit/s: 125 B/s; 1-ms slices must add up exactly.
        let r = RateSeries::new(TraceFormat::Ucc5g, SAMPLE, vec![1000, 3]);
        let sum: u64 = (0..2000)
            .map(|k| r.bytes_between(Instant::from_millis(k), Instant::from_millis(k + 1)))
            .sum();
        assert_eq!(
            sum,
            r.bytes_between(Instant::ZERO, Instant::from_millis(2000))
        );
        assert_eq!(sum, 125);
    }

    #[test]
    fn malformed_rows_are_named() {
        let e = UccTrace::parse("u.csv", &csv(&["a,5G,12,800,D", "b,5G,16,800,D"])).unwrap_err();
        assert_eq!((e.line, e.value.as_deref()), (Some(3), Some("16")));
        let e = UccTrace::parse("u.csv", &csv(&["a,5G,12,fast,D"])).unwrap_err();
        assert_eq!((e.line, e.value.as_deref()), (Some(2), Some("fast")));
        let e = UccTrace::parse("u.csv", &csv(&["a,5G,12"])).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(UccTrace::parse("u.csv", HDR).is_err());
        let all_missing = UccTrace::parse("u.csv", &csv(&["a,5G,-,5,D"])).unwrap();
        assert!(all_missing.cqi_series(CqiTable::Table1).is_err());
        assert!(all_missing.dl_rate_series().is_ok());
    }

    #[test]
    fn line_traces_are_recognised() {
        let e = UccTrace::parse("x.down", "0\n0\n1\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.problem.contains("mahimahi or thesis"), "{e}");
    }
}
