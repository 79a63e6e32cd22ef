//! What the radio link offers at time `t`.
//!
//! Two kinds of channel, because the available data differ:
//!
//! - **Link adaptation** channels give an MCS: fixed, from a fixed CQI (via
//!   the CQI -> MCS table), a piecewise-constant MCS series (with a linear
//!   ramp helper for the TC-RAN Fig. 12 profile "MCS 6 -> 18 over 60 s"), or a
//!   CQI series from the UCC 5G dataset. The MAC turns the MCS and the PRBs it
//!   grants into bytes with [`crate::phy::tbs`].
//! - **Capacity traces** give bytes directly: mahimahi delivery traces and
//!   the thesis packets-per-10-ms traces ([`RateSeries`] reads the UCC
//!   `DL_bitrate` column, but scenarios use a UCC CSV through its CQI
//!   column, as an MCS channel). They already include scheduling,
//!   retransmissions and sharing, so the MAC uses the bytes as the grant
//!   (summed over whatever it serves; an unused opportunity is lost, as in
//!   `mm-link`, unless the scenario lets the MAC carry it over a window,
//!   [`crate::mac::Mac::set_carry_over`]) and does not apply a TBS on top.
//!
//! - **Geometry** ([`GeometryChannel`]): a UE moving past sites, TR 38.901
//!   path loss and shadowing, SINR -> CQI -> MCS: link adaptation computed
//!   rather than recorded.
//!
//! [`ChannelSample`] carries either. The MAC asks once per scheduling
//! decision for the interval it covers: one slot, or the whole scheduling
//! period when the cell has one (`MacConfig::scheduling_period`, the thesis
//! emulator's 10-ms TTI). For a capacity trace that is exact: the bytes of
//! the whole period (the thesis traces offer a constant rate within each
//! second, so a 10-ms period gets exactly the emulator's per-TTI amount).
//! An MCS channel answers for the period's start, and that MCS holds for
//! the period, as the emulator held one capacity per TTI: a change of MCS
//! mid-period takes effect at the next period.
//!
//! Every channel is sans-IO: it answers for
//! a time the caller passes and never reads a clock; trace time 0 is
//! [`Instant::ZERO`], and traces loop at their end like mahimahi's `mm-link`.
//! The parsers take text; [`read_trace_file`] is the one function that
//! touches the file system.

pub(crate) mod geometry;
mod mahimahi;
mod series;
mod thesis;
mod ucc;

pub use geometry::{GeometryChannel, GeometryParams, LosMode};
pub use mahimahi::{MahimahiTrace, MAHIMAHI_CARRY_OVER, MAHIMAHI_PACKET_BYTES};
pub use series::McsSeries;
pub use thesis::{ThesisTrace, THESIS_PACKET_BYTES, THESIS_TICK, THESIS_TICKS_PER_SAMPLE};
pub use ucc::{CqiSeries, RateSeries, UccTrace};

use crate::phy::mcs::{CqiTable, Mcs, McsTable};
use serde::Serialize;
use std::fmt;
use tcran_core::{ConfigError, Duration, Instant};

/// What the link offers for an interval `[now, now + dt)`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelSample {
    /// Link adaptation chose this MCS; bytes = TBS of the granted PRBs.
    Mcs(Mcs),
    /// A capacity trace: at most this many bytes can leave in the interval
    /// (already the whole link's capacity, no TBS to apply).
    Bytes(u64),
    /// CQI 0 ("out of range", TS 38.214 Table 5.2.2.1-2): nothing can be sent.
    Outage,
}

/// A channel model.
pub trait Channel: fmt::Debug + Send {
    /// What the link offers in `[now, now + dt)`. MCS channels answer for
    /// `now` and ignore `dt`; capacity traces count the bytes in the interval,
    /// so consecutive calls over adjacent intervals never lose or double-count
    /// a byte.
    fn sample(&mut self, now: Instant, dt: Duration) -> ChannelSample;

    /// Summary statistics for capacity traces (`None` for MCS channels).
    fn info(&self) -> Option<TraceInfo> {
        None
    }
}

/// The built-in channels, plus an escape hatch for custom models.
#[derive(Debug)]
pub enum AnyChannel {
    /// A constant sample (fixed MCS, or a fixed CQI already mapped).
    Fixed(ChannelSample),
    McsSeries(McsSeries),
    Cqi(CqiSeries),
    Mahimahi(MahimahiTrace),
    Thesis(ThesisTrace),
    Rate(RateSeries),
    /// A UE moving through a deployment (boxed: it is the largest).
    Geometry(Box<GeometryChannel>),
    /// A recorded drive's CQI column ([`crate::mobility::drive`]).
    Drive(crate::mobility::drive::DriveChannel),
    Custom(Box<dyn Channel>),
}

impl AnyChannel {
    /// Each interferer's load for a geometry channel
    /// ([`GeometryChannel::set_interferer_loads`]); other channels have no
    /// interferers and ignore it.
    pub fn set_interferer_loads(&mut self, loads: &[f64]) {
        if let AnyChannel::Geometry(c) = self {
            c.set_interferer_loads(loads);
        }
    }

    /// A fixed MCS (reserved indices are rejected).
    pub fn fixed_mcs(table: McsTable, index: u8) -> Result<AnyChannel, ConfigError> {
        Ok(AnyChannel::Fixed(ChannelSample::Mcs(Mcs::new(
            table, index,
        )?)))
    }

    /// A fixed CQI mapped to an MCS of the matching table; CQI 0 is an outage.
    pub fn fixed_cqi(table: CqiTable, cqi: u8) -> Result<AnyChannel, ConfigError> {
        Ok(AnyChannel::Fixed(
            table
                .to_mcs(cqi)?
                .map_or(ChannelSample::Outage, ChannelSample::Mcs),
        ))
    }
}

impl AnyChannel {
    /// Length of one pass of a recorded channel that loops (a capacity
    /// trace, a CQI series); `None` for a fixed channel or an MCS profile,
    /// which have no recording to start elsewhere in.
    pub fn loop_length(&self) -> Option<Duration> {
        match self {
            AnyChannel::Fixed(_)
            | AnyChannel::McsSeries(_)
            | AnyChannel::Geometry(_)
            | AnyChannel::Drive(_)
            | AnyChannel::Custom(_) => None,
            AnyChannel::Cqi(c) => Some(c.duration()),
            AnyChannel::Mahimahi(c) => Some(c.period()),
            AnyChannel::Thesis(c) => Some(c.duration()),
            AnyChannel::Rate(c) => Some(c.duration()),
        }
    }
}

impl Channel for AnyChannel {
    fn sample(&mut self, now: Instant, dt: Duration) -> ChannelSample {
        match self {
            AnyChannel::Fixed(s) => *s,
            AnyChannel::McsSeries(c) => c.sample(now, dt),
            AnyChannel::Cqi(c) => c.sample(now, dt),
            AnyChannel::Mahimahi(c) => c.sample(now, dt),
            AnyChannel::Thesis(c) => c.sample(now, dt),
            AnyChannel::Rate(c) => c.sample(now, dt),
            AnyChannel::Geometry(c) => c.sample(now, dt),
            AnyChannel::Drive(c) => c.sample(now, dt),
            AnyChannel::Custom(c) => c.sample(now, dt),
        }
    }

    fn info(&self) -> Option<TraceInfo> {
        match self {
            AnyChannel::Fixed(_)
            | AnyChannel::McsSeries(_)
            | AnyChannel::Cqi(_)
            | AnyChannel::Geometry(_)
            | AnyChannel::Drive(_) => None,
            AnyChannel::Mahimahi(c) => Some(c.info()),
            AnyChannel::Thesis(c) => Some(c.info()),
            AnyChannel::Rate(c) => Some(c.info()),
            AnyChannel::Custom(c) => c.info(),
        }
    }
}

/// The trace file formats tcran reads.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// mahimahi: one millisecond timestamp per 1500-byte delivery opportunity.
    Mahimahi,
    /// Dynamic-buffer-TMC thesis traces: sample count, then packets per 10 ms, 1 sample per second.
    ThesisPackets,
    /// UCC 5G dataset CSV (G-NetTrack Pro export), 1 row per second.
    Ucc5g,
}

impl TraceFormat {
    /// Guesses the format of a trace's text: a CSV header with `CQI` and
    /// `DL_bitrate` is UCC; a first number equal to the count of the numbers
    /// that follow is the thesis format; non-decreasing numbers are mahimahi.
    pub fn detect(text: &str) -> Option<TraceFormat> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines.next()?;
        if first.contains(',') {
            let cols: Vec<&str> = first.split(',').map(str::trim).collect();
            return (cols.contains(&"CQI") && cols.contains(&"DL_bitrate"))
                .then_some(TraceFormat::Ucc5g);
        }
        let first: u64 = first.parse().ok()?;
        let mut count = 0u64;
        let mut prev = first;
        let mut sorted = true;
        for l in lines {
            let v: u64 = l.parse().ok()?;
            sorted &= v >= prev;
            prev = v;
            count += 1;
        }
        if count == first && count > 0 {
            Some(TraceFormat::ThesisPackets)
        } else if sorted {
            Some(TraceFormat::Mahimahi)
        } else {
            None
        }
    }

    /// The format a trace that [`TraceFormat::detect`] cannot tell was most
    /// likely meant to be, so that its reader can say which line is wrong:
    /// a first line with commas is a UCC CSV, a first number equal to the
    /// count of the lines that follow is a thesis trace, anything else is
    /// read as mahimahi (one number per line, the most common format).
    pub fn guess(text: &str) -> TraceFormat {
        if let Some(f) = TraceFormat::detect(text) {
            return f;
        }
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines.next().unwrap_or("");
        if first.contains(',') {
            return TraceFormat::Ucc5g;
        }
        match first.parse::<u64>() {
            Ok(n) if n == lines.count() as u64 => TraceFormat::ThesisPackets,
            _ => TraceFormat::Mahimahi,
        }
    }

    /// The name a configuration or `--format` uses for it.
    pub fn short_name(self) -> &'static str {
        match self {
            TraceFormat::Mahimahi => "mahimahi",
            TraceFormat::ThesisPackets => "thesis",
            TraceFormat::Ucc5g => "ucc",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TraceFormat::Mahimahi => "mahimahi delivery trace",
            TraceFormat::ThesisPackets => "thesis packets-per-10-ms trace",
            TraceFormat::Ucc5g => "UCC 5G dataset CSV",
        })
    }
}

/// Summary of a capacity trace (for `tcran trace info`).
#[derive(Clone, Copy, PartialEq, Debug, Serialize)]
pub struct TraceInfo {
    pub format: TraceFormat,
    /// Samples in the file (lines for mahimahi, values for the thesis format, rows for UCC).
    pub samples: usize,
    /// Length of one pass; the trace loops after it.
    pub duration: Duration,
    /// Mean capacity over one pass, Mbit/s (10^6 bit/s) of the trace's packet unit.
    pub mean_mbps: f64,
    /// Lowest and highest capacity over consecutive `window`s, Mbit/s.
    pub min_mbps: f64,
    pub max_mbps: f64,
    pub window: Duration,
}

impl fmt::Display for TraceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} samples, {:.3} s, mean {:.2} Mbit/s, min {:.2}, max {:.2} (per {})",
            self.format,
            self.samples,
            self.duration.as_secs_f64(),
            self.mean_mbps,
            self.min_mbps,
            self.max_mbps,
            self.window
        )
    }
}

/// A trace that could not be read: names the file, the 1-based line and the
/// offending text where there is one.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub struct TraceError {
    pub file: String,
    pub line: Option<usize>,
    pub value: Option<String>,
    pub problem: String,
}

impl TraceError {
    pub(crate) fn at(file: &str, line: usize, value: &str, problem: impl Into<String>) -> Self {
        // Long values (a whole CSV row) are cut so the message stays one line.
        let value = if value.chars().count() > 60 {
            format!("{}...", value.chars().take(60).collect::<String>())
        } else {
            value.to_string()
        };
        TraceError {
            file: file.into(),
            line: Some(line),
            value: Some(value),
            problem: problem.into(),
        }
    }

    pub(crate) fn file(file: &str, problem: impl Into<String>) -> Self {
        TraceError {
            file: file.into(),
            line: None,
            value: None,
            problem: problem.into(),
        }
    }
}

impl TraceError {
    /// The message without the file name, for callers that already name
    /// the file (a scenario error shows the path as the field's value):
    /// `line 7: "abc": not a number` or `cannot read: No such file or
    /// directory`.
    pub fn detail(&self) -> String {
        let mut s = String::new();
        if let Some(l) = self.line {
            s.push_str(&format!("line {l}: "));
        }
        if let Some(v) = &self.value {
            s.push_str(&format!("{v:?}: "));
        }
        s.push_str(&self.problem);
        s
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(v) = &self.value {
            write!(f, ": {v:?}")?;
        }
        write!(f, ": {}", self.problem)
    }
}

/// Non-empty lines as (1-based line number, trimmed text). Blank lines at the
/// end are ignored; a blank line before more data is an error, because in a
/// one-value-per-line file it usually means a damaged file.
pub(crate) fn data_lines<'a>(
    file: &'a str,
    text: &'a str,
) -> impl Iterator<Item = Result<(usize, &'a str), TraceError>> + 'a {
    let mut blank: Option<usize> = None;
    text.lines().enumerate().filter_map(move |(i, l)| {
        let l = l.trim();
        if l.is_empty() {
            blank.get_or_insert(i + 1);
            return None;
        }
        if let Some(b) = blank.take() {
            return Some(Err(TraceError::at(
                file,
                b,
                "",
                "empty line inside the trace",
            )));
        }
        Some(Ok((i + 1, l)))
    })
}

/// A hint for a line that is not a number in a one-number-per-line format.
pub(crate) fn not_a_number_hint(l: &str) -> &'static str {
    if l.contains(',') {
        " (this looks like a CSV file: the UCC 5G dataset reader takes those)"
    } else {
        ""
    }
}

/// The largest trace file read: real traces are kilobytes to a few
/// megabytes; an hour of mahimahi opportunities at 50 Mbit/s is ~135 MB.
pub const MAX_TRACE_FILE_BYTES: u64 = 256 << 20;

/// Reads a trace file as UTF-8 text and returns (display name, text). The
/// one place this crate does I/O.
pub fn read_trace_file(path: &std::path::Path) -> Result<(String, String), TraceError> {
    use tcran_core::text_file::{read_text_file, TextFileError};
    let name = path.display().to_string();
    match read_text_file(path, "trace file", MAX_TRACE_FILE_BYTES) {
        Ok(text) => Ok((name, text)),
        Err(TextFileError::NotUtf8 { line }) => Err(TraceError::at(
            &name,
            line,
            "",
            "not UTF-8 text (a binary file?)",
        )),
        Err(e) => Err(TraceError::file(&name, format!("cannot read: {e}"))),
    }
}

/// Mbit/s for `bytes` over `d`.
pub(crate) fn mbps(bytes: u64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        bytes as f64 * 8.0 / d.as_secs_f64() / 1e6
    }
}

/// 1-s window statistics of a byte trace over one pass starting at `start`.
pub(crate) fn window_stats(
    bytes_between: impl Fn(Instant, Instant) -> u64,
    start: Instant,
    duration: Duration,
    window: Duration,
) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    let mut t = Duration::ZERO;
    while t < duration {
        let w = window.min(duration - t);
        let r = mbps(bytes_between(start + t, start + t + w), w);
        lo = lo.min(r);
        hi = hi.max(r);
        t += w;
    }
    (if lo.is_finite() { lo } else { 0.0 }, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_cqi_zero_is_an_outage() {
        let mut c = AnyChannel::fixed_cqi(CqiTable::Table1, 0).unwrap();
        assert_eq!(
            c.sample(Instant::ZERO, Duration::from_millis(1)),
            ChannelSample::Outage
        );
        let mut c = AnyChannel::fixed_cqi(CqiTable::Table2, 15).unwrap();
        assert_eq!(
            c.sample(Instant::ZERO, Duration::ZERO),
            ChannelSample::Mcs(Mcs {
                table: McsTable::Qam256,
                index: 27
            })
        );
        assert!(AnyChannel::fixed_cqi(CqiTable::Table1, 16).is_err());
        assert!(AnyChannel::fixed_mcs(McsTable::Qam64, 29).is_err());
        assert!(c.info().is_none());
    }

    #[test]
    fn detects_formats() {
        assert_eq!(
            TraceFormat::detect("3\n1\n2\n1\n"),
            Some(TraceFormat::ThesisPackets)
        );
        assert_eq!(
            TraceFormat::detect("0\n0\n1\n5\n"),
            Some(TraceFormat::Mahimahi)
        );
        assert_eq!(
            TraceFormat::detect("Timestamp,CQI,DL_bitrate\n"),
            Some(TraceFormat::Ucc5g)
        );
        assert_eq!(TraceFormat::detect("5\n3\n1\n"), None);
        assert_eq!(TraceFormat::detect("hello"), None);
        assert_eq!(TraceFormat::detect(""), None);
    }

    #[test]
    fn guesses_the_format_a_broken_trace_was_meant_to_have() {
        // A mahimahi trace with a bad line, or going back in time.
        assert_eq!(TraceFormat::guess("0\n1\nx\n2\n"), TraceFormat::Mahimahi);
        assert_eq!(TraceFormat::guess("5\n3\n1\n"), TraceFormat::Mahimahi);
        // The thesis count line matches the lines that follow, one is bad.
        assert_eq!(
            TraceFormat::guess("3\n1\n-\n1\n"),
            TraceFormat::ThesisPackets
        );
        // A CSV without the columns UCC needs.
        assert_eq!(TraceFormat::guess("a,b\n1,2\n"), TraceFormat::Ucc5g);
        // What detect tells, guess keeps.
        assert_eq!(
            TraceFormat::guess("3\n1\n2\n1\n"),
            TraceFormat::ThesisPackets
        );
        assert_eq!(TraceFormat::guess("hello"), TraceFormat::Mahimahi);
    }

    #[test]
    fn error_display_names_file_line_and_value() {
        let e = TraceError::at("x.down", 7, "abc", "not a number");
        assert_eq!(e.to_string(), "x.down:7: \"abc\": not a number");
        assert_eq!(TraceError::file("x", "empty").to_string(), "x: empty");
        assert_eq!(e.detail(), "line 7: \"abc\": not a number");
        assert_eq!(TraceError::file("x", "empty").detail(), "empty");
    }

    #[test]
    fn unreadable_file_says_why_once_without_the_os_code() {
        let e = read_trace_file(std::path::Path::new("/no/such/trace.down")).unwrap_err();
        assert_eq!(e.file, "/no/such/trace.down");
        assert_eq!(e.detail(), "cannot read: No such file or directory");
    }

    #[test]
    fn blank_line_inside_is_reported_with_its_line() {
        let r: Result<Vec<_>, _> = data_lines("f", "1\n\n2\n").collect();
        assert_eq!(r.unwrap_err().line, Some(2));
        let r: Vec<_> = data_lines("f", "1\n2\n\n\n")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(r, [(1, "1"), (2, "2")]);
    }
}
