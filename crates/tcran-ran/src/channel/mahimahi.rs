//! mahimahi packet-delivery traces (`mm-link`, Netravali et al.; recorded
//! with Saturator, Winstein et al., NSDI 2013).
//!
//! Format: one non-negative integer per line, a timestamp in milliseconds
//! from the start of the trace, non-decreasing. Each line is one opportunity
//! to deliver one 1500-byte packet at that millisecond; a timestamp repeated
//! k times means k packets. The trace repeats with a period equal to its last
//! timestamp (which must be > 0), exactly as `mm-link` loops it: the
//! opportunities of pass j sit at `ts + j·last`.
//!
//! Bytes in `[t, t + dt)` = 1500 x the opportunities whose instant falls in
//! the interval. The 1500 bytes are whole IP packets (mahimahi's MTU unit).

use super::{
    data_lines, mbps, not_a_number_hint, window_stats, Channel, ChannelSample, TraceError,
    TraceFormat, TraceInfo,
};
use tcran_core::{Duration, Instant};

/// Bytes per delivery opportunity.
pub const MAHIMAHI_PACKET_BYTES: u64 = 1500;

/// A carry-over window that models receiver-side bunching (opt-in, the
/// default is none, as `mm-link`): (4 - 1) HARQ retransmissions x the 8-ms
/// LTE FDD HARQ round trip (TS 36.213 §10.1), the span a receiver-side
/// delivery time can lag the TTI that carried the bytes ([`crate::mac`]
/// module docs).
pub const MAHIMAHI_CARRY_OVER: Duration = Duration::from_millis(24);

const NS_PER_MS: u64 = 1_000_000;

/// The longest trace accepted: 30 days of milliseconds. Real recordings
/// last minutes; the bound keeps every instant of a pass, in nanoseconds,
/// far inside `u64` (a pass ends at 2.6e15 ns) and `trace info`'s per-second
/// statistics finite.
pub const MAHIMAHI_MAX_TIMESTAMP_MS: u64 = 30 * 24 * 3600 * 1000;

/// A parsed mahimahi trace.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MahimahiTrace {
    name: String,
    /// Opportunity timestamps, ms, non-decreasing.
    ts: Vec<u64>,
}

impl MahimahiTrace {
    /// Parses the text of a trace; `name` appears in error messages.
    pub fn parse(name: &str, text: &str) -> Result<MahimahiTrace, TraceError> {
        let mut ts: Vec<u64> = Vec::new();
        let mut first_value: Option<u64> = None;
        for item in data_lines(name, text) {
            let (line, l) = item?;
            let v: u64 = l.parse().map_err(|_| {
                TraceError::at(
                    name,
                    line,
                    l,
                    format!(
                        "not a millisecond timestamp (a non-negative integer per line){}",
                        not_a_number_hint(l)
                    ),
                )
            })?;
            if v > MAHIMAHI_MAX_TIMESTAMP_MS {
                return Err(TraceError::at(
                    name,
                    line,
                    l,
                    format!(
                        "timestamp beyond {MAHIMAHI_MAX_TIMESTAMP_MS} ms (30 days), the longest trace accepted"
                    ),
                ));
            }
            if let Some(&prev) = ts.last() {
                if v < prev {
                    let mut why = format!("timestamp goes back in time (previous line: {prev}); mahimahi timestamps never decrease");
                    // The thesis format starts with the number of samples that follow.
                    let rest = text
                        .lines()
                        .skip(1)
                        .filter(|l| !l.trim().is_empty())
                        .count() as u64;
                    if first_value == Some(rest) {
                        why.push_str("; the first line equals the number of lines that follow: this looks like a thesis packets-per-10-ms trace");
                    }
                    return Err(TraceError::at(name, line, l, why));
                }
            }
            first_value.get_or_insert(v);
            ts.push(v);
        }
        match ts.last() {
            None => Err(TraceError::file(name, "empty trace: no timestamps")),
            Some(0) => Err(TraceError::file(
                name,
                "the trace must last a nonzero time (last timestamp is 0), as mm-link requires",
            )),
            Some(_) => Ok(MahimahiTrace {
                name: name.to_string(),
                ts,
            }),
        }
    }

    /// Reads and parses a file.
    pub fn from_path(path: &std::path::Path) -> Result<MahimahiTrace, TraceError> {
        let (name, text) = super::read_trace_file(path)?;
        MahimahiTrace::parse(&name, &text)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of delivery opportunities per pass.
    pub fn opportunities(&self) -> usize {
        self.ts.len()
    }

    /// Length of one pass (the last timestamp).
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.period_ms())
    }

    fn period_ms(&self) -> u64 {
        self.ts.last().copied().unwrap_or(1)
    }

    /// Opportunities of one pass at instants < `r_ns` after the pass start.
    fn count_lt(&self, r_ns: u64) -> u64 {
        self.ts.partition_point(|&t| t * NS_PER_MS < r_ns) as u64
    }

    /// Opportunities at instants < `x` over the looped schedule.
    fn cumulative(&self, x: Instant) -> u64 {
        let x = x.as_nanos();
        let p = self.period_ms() * NS_PER_MS;
        let (q, rem) = (x / p, x % p);
        let n = self.ts.len() as u64;
        // Passes 0..q-1 are complete, except that pass q-1 ends exactly at q·p
        // (its last timestamps equal the period), which is not < x when rem = 0.
        let mut c = self.count_lt(rem);
        if q >= 1 {
            c += (q - 1) * n + self.count_lt(p + rem);
        }
        c
    }

    /// Bytes deliverable in `[from, to)`.
    pub fn bytes_between(&self, from: Instant, to: Instant) -> u64 {
        if to <= from {
            return 0;
        }
        (self.cumulative(to) - self.cumulative(from)) * MAHIMAHI_PACKET_BYTES
    }

    /// Duration, mean and 1-s min/max of the capacity (one steady-state pass).
    pub fn info(&self) -> TraceInfo {
        let period = self.period();
        let window = Duration::from_secs(1);
        // Windows over the second pass, where the opportunities at ts = period
        // of the first pass are counted like every later pass counts them.
        let (min, max) = window_stats(
            |a, b| self.bytes_between(a, b),
            Instant::ZERO + period,
            period,
            window,
        );
        TraceInfo {
            format: TraceFormat::Mahimahi,
            samples: self.ts.len(),
            duration: period,
            mean_mbps: mbps(self.ts.len() as u64 * MAHIMAHI_PACKET_BYTES, period),
            min_mbps: min,
            max_mbps: max,
            window,
        }
    }
}

impl Channel for MahimahiTrace {
    fn sample(&mut self, now: Instant, dt: Duration) -> ChannelSample {
        ChannelSample::Bytes(self.bytes_between(now, now + dt))
    }
    fn info(&self) -> Option<TraceInfo> {
        Some(MahimahiTrace::info(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }

    #[test]
    fn counts_opportunities_in_half_open_intervals_and_loops() {
        // 2 packets at 0 ms, 1 at 3 ms, 1 at 5 ms; period 5 ms.
        let t = MahimahiTrace::parse("t", "0\n0\n3\n5\n").unwrap();
        assert_eq!(t.bytes_between(ms(0), ms(1)), 3000);
        assert_eq!(t.bytes_between(ms(1), ms(3)), 0);
        assert_eq!(t.bytes_between(ms(3), ms(4)), 1500);
        // At 5 ms: the last opportunity of pass 0 and the two of pass 1 at ts 0.
        assert_eq!(t.bytes_between(ms(5), ms(6)), 4500);
        assert_eq!(t.bytes_between(ms(8), ms(9)), 1500);
        // Adjacent intervals add up; [0, 50 ms) holds 10 passes of 4 packets
        // minus the last one of pass 9, which sits at exactly 50 ms.
        let total: u64 = (0..50).map(|k| t.bytes_between(ms(k), ms(k + 1))).sum();
        assert_eq!(total, t.bytes_between(ms(0), ms(50)));
        assert_eq!(t.bytes_between(ms(0), ms(50)), 39 * 1500);
        assert_eq!(t.period(), Duration::from_millis(5));
    }

    #[test]
    fn one_line_trace_is_a_fixed_12_mbps_link() {
        // README.traces: a file containing just "1" is 1 packet/ms = 12 Mbit/s.
        // The opportunities sit at 1, 2, 3, ... ms.
        let mut t = MahimahiTrace::parse("one", "1").unwrap();
        let half = Instant::from_micros(500);
        assert_eq!(
            t.sample(half, Duration::from_secs(1)),
            ChannelSample::Bytes(1_500_000)
        );
        assert_eq!(
            t.sample(ms(0), Duration::from_secs(1)),
            ChannelSample::Bytes(999 * 1500)
        );
        let i = t.info();
        assert!((i.mean_mbps - 12.0).abs() < 1e-9 && (i.min_mbps - 12.0).abs() < 1e-9);
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = MahimahiTrace::parse("bad.down", "0\n1\nx7\n").unwrap_err();
        assert_eq!((e.line, e.value.as_deref()), (Some(3), Some("x7")));
        assert!(e.to_string().starts_with("bad.down:3: \"x7\""), "{e}");
        let e = MahimahiTrace::parse("neg", "0\n-1\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = MahimahiTrace::parse("dec", "0\n5\n4\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.problem.contains("back in time"));
        assert!(MahimahiTrace::parse("empty", "\n").is_err());
        assert!(MahimahiTrace::parse("zero", "0\n0\n")
            .unwrap_err()
            .problem
            .contains("nonzero"));
        let e = MahimahiTrace::parse("csv", "Timestamp,CQI\n").unwrap_err();
        assert!(e.problem.contains("CSV"), "{e}");
        // A timestamp past 30 days would overflow the nanosecond clock of
        // a pass (found by fuzzing): refused, naming the line.
        let e = MahimahiTrace::parse("long", "0\n18446744073709551615\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.problem.contains("30 days"), "{e}");
        assert!(MahimahiTrace::parse("ok", "0\n2592000000\n").is_ok());
    }

    #[test]
    fn thesis_file_is_recognised() {
        let e = MahimahiTrace::parse("packets.txt", "3\n2\n4\n6\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.problem.contains("thesis packets-per-10-ms"), "{e}");
    }
}
