//! The per-10-ms capacity traces of the thesis emulator (Irazabal,
//! Dynamic-buffer-TMC `scripts/packets_{pedestrian,train}.txt`).
//!
//! Format (see `data/traces/dynamic-buffer-tmc/README.md`): line 1 is the
//! number N of samples; lines 2..=N+1 are the capacity in packets per 10-ms
//! emulator TTI. Each sample is held for 100 TTIs, i.e. one sample per second
//! (the emulator indexes `tick / 100`). A packet is a 1460-byte payload.
//!
//! Model: each sample is one CQI reading converted to a capacity and held
//! for a second, so second k offers `samples[k] x 100 x 1460` bytes at a
//! constant rate; bytes in `[t, t + dt)` are the integer difference of the
//! cumulative capacity, exact over any partition of time. (The emulator
//! handed the 10-ms amount to its MAC once per 10-ms TTI; a slot-based MAC of
//! 1 ms or less must see the same capacity spread over its slots, or 9 slots
//! in 10 would look empty.) After N seconds the trace loops (the thesis used
//! only the first 200 s, so looping is our choice, matching mahimahi).

use super::{
    data_lines, mbps, not_a_number_hint, window_stats, Channel, ChannelSample, TraceError,
    TraceFormat, TraceInfo,
};
use tcran_core::{Duration, Instant};

/// Payload bytes per "packet" of the thesis traces.
pub const THESIS_PACKET_BYTES: u64 = 1460;
/// The emulator's MAC tick.
pub const THESIS_TICK: Duration = Duration::from_millis(10);
/// Ticks each sample is held: 1 sample = 1 s.
pub const THESIS_TICKS_PER_SAMPLE: u64 = 100;

/// A parsed thesis trace.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ThesisTrace {
    name: String,
    samples: Vec<u32>,
    /// `prefix[i]` = packets in samples 0..i (x100 ticks).
    prefix: Vec<u64>,
}

impl ThesisTrace {
    /// Parses the text of a trace; `name` appears in error messages.
    pub fn parse(name: &str, text: &str) -> Result<ThesisTrace, TraceError> {
        let mut lines = data_lines(name, text);
        let (hline, header) = match lines.next() {
            None => {
                return Err(TraceError::file(
                    name,
                    "empty trace: expected the sample count on line 1",
                ))
            }
            Some(r) => r?,
        };
        let n: usize = header.parse().map_err(|_| {
            TraceError::at(
                name,
                hline,
                header,
                format!(
                    "line 1 must be the number of samples that follow{}",
                    not_a_number_hint(header)
                ),
            )
        })?;
        let mut samples = Vec::with_capacity(n.min(1 << 20));
        let mut last_line = hline;
        for item in lines {
            let (line, l) = item?;
            let v: u32 = l.parse().map_err(|_| {
                TraceError::at(
                    name,
                    line,
                    l,
                    "not a packet count (a non-negative integer per line)",
                )
            })?;
            if samples.len() == n {
                let mut why = format!("more values than the {n} announced on line 1");
                if is_mahimahi_like(header, text) {
                    why.push_str(MAHIMAHI_HINT);
                }
                return Err(TraceError::at(name, line, l, why));
            }
            samples.push(v);
            last_line = line;
        }
        if samples.len() < n {
            return Err(TraceError::at(
                name,
                last_line,
                "",
                format!(
                    "line 1 announces {n} samples but only {} follow (truncated file?)",
                    samples.len()
                ),
            ));
        }
        if n == 0 {
            return Err(TraceError::at(
                name,
                hline,
                header,
                "a trace needs at least one sample",
            ));
        }
        if samples.iter().all(|&s| s == 0) {
            return Err(TraceError::file(
                name,
                "every sample is 0: the link never delivers",
            ));
        }
        let mut prefix = Vec::with_capacity(samples.len() + 1);
        prefix.push(0u64);
        for &s in &samples {
            prefix
                .push(prefix.last().copied().unwrap_or(0) + u64::from(s) * THESIS_TICKS_PER_SAMPLE);
        }
        Ok(ThesisTrace {
            name: name.to_string(),
            samples,
            prefix,
        })
    }

    /// Reads and parses a file.
    pub fn from_path(path: &std::path::Path) -> Result<ThesisTrace, TraceError> {
        let (name, text) = super::read_trace_file(path)?;
        ThesisTrace::parse(&name, &text)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Packets per 10-ms tick, one value per second.
    pub fn samples(&self) -> &[u32] {
        &self.samples
    }

    /// Length of one pass: one second per sample.
    pub fn duration(&self) -> Duration {
        Duration::from_secs(self.samples.len() as u64)
    }

    /// Bytes offered in `[0, x)`. Each sample is one CQI reading held for a
    /// second, so its capacity (`packets per 10 ms` x 100 x 1460 B) is
    /// offered at a constant rate through that second; the integer floor of
    /// this monotone function makes `bytes_between` over any partition of
    /// time add up exactly.
    fn cumulative_bytes(&self, x: Instant) -> u64 {
        const SECOND: u128 = 1_000_000_000;
        let ns = u128::from(x.as_nanos());
        let n = self.samples.len() as u128;
        let (m, rem) = (ns / SECOND, ns % SECOND);
        let (passes, i) = (m / n, (m % n) as usize);
        let whole = (passes * u128::from(self.prefix[self.samples.len()])
            + u128::from(self.prefix[i]))
            * u128::from(THESIS_PACKET_BYTES);
        let per_second = u128::from(self.samples[i])
            * u128::from(THESIS_TICKS_PER_SAMPLE)
            * u128::from(THESIS_PACKET_BYTES);
        (whole + per_second * rem / SECOND) as u64
    }

    /// Bytes available in `[from, to)`.
    pub fn bytes_between(&self, from: Instant, to: Instant) -> u64 {
        if to <= from {
            return 0;
        }
        self.cumulative_bytes(to) - self.cumulative_bytes(from)
    }

    /// Duration, mean and per-second min/max capacity (1460-byte payload units).
    pub fn info(&self) -> TraceInfo {
        let d = self.duration();
        let window = Duration::from_secs(1);
        let (min, max) = window_stats(|a, b| self.bytes_between(a, b), Instant::ZERO, d, window);
        TraceInfo {
            format: TraceFormat::ThesisPackets,
            samples: self.samples.len(),
            duration: d,
            mean_mbps: mbps(self.prefix[self.samples.len()] * THESIS_PACKET_BYTES, d),
            min_mbps: min,
            max_mbps: max,
            window,
        }
    }
}

const MAHIMAHI_HINT: &str =
    "; the values never decrease and line 1 is not their count: this looks like a mahimahi delivery trace";

/// Whether the text reads like mahimahi timestamps (non-decreasing numbers
/// whose first value is not the count of the rest).
fn is_mahimahi_like(header: &str, text: &str) -> bool {
    let mut prev: Option<u64> = header.parse().ok();
    for l in text
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        match (l.parse::<u64>(), prev) {
            (Ok(v), Some(p)) if v >= p => prev = Some(v),
            _ => return false,
        }
    }
    true
}

impl Channel for ThesisTrace {
    fn sample(&mut self, now: Instant, dt: Duration) -> ChannelSample {
        ChannelSample::Bytes(self.bytes_between(now, now + dt))
    }
    fn info(&self) -> Option<TraceInfo> {
        Some(ThesisTrace::info(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }

    #[test]
    fn capacity_is_spread_evenly_and_samples_last_one_second() {
        let t = ThesisTrace::parse("t", "2\n3\n1\n").unwrap();
        // 3 packets per 10 ms = 300 x 1460 B per second, at a constant rate.
        assert_eq!(t.bytes_between(ms(0), ms(1)), 438);
        assert_eq!(t.bytes_between(ms(1), ms(10)), 3942);
        assert_eq!(t.bytes_between(ms(0), ms(10)), 3 * 1460);
        assert_eq!(t.bytes_between(ms(0), ms(1000)), 300 * 1460);
        assert_eq!(t.bytes_between(ms(1000), ms(2000)), 100 * 1460);
        // Loops after 2 s.
        assert_eq!(t.bytes_between(ms(2000), ms(2010)), 3 * 1460);
        let total: u64 = (0..400)
            .map(|k| t.bytes_between(ms(k * 10), ms(k * 10 + 10)))
            .sum();
        assert_eq!(total, 2 * 400 * 1460);
        let i = t.info();
        assert_eq!(i.duration, Duration::from_secs(2));
        assert!((i.max_mbps - 300.0 * 1460.0 * 8.0 / 1e6).abs() < 1e-9);
        assert!((i.min_mbps - 100.0 * 1460.0 * 8.0 / 1e6).abs() < 1e-9);
    }

    #[test]
    fn malformed_input_names_the_line() {
        let e = ThesisTrace::parse("p.txt", "3\n1\nfoo\n2\n").unwrap_err();
        assert_eq!((e.line, e.value.as_deref()), (Some(3), Some("foo")));
        let e = ThesisTrace::parse("p.txt", "3\n1\n2\n").unwrap_err();
        assert!(e.problem.contains("only 2 follow"), "{e}");
        let e = ThesisTrace::parse("p.txt", "1\n1\n2\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = ThesisTrace::parse("p.txt", "x\n1\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(ThesisTrace::parse("p.txt", "").is_err());
        assert!(ThesisTrace::parse("p.txt", "0\n").is_err());
        assert!(ThesisTrace::parse("p.txt", "1\n0\n").is_err());
        let e = ThesisTrace::parse("p.csv", "Timestamp,CQI\n1\n").unwrap_err();
        assert!(e.problem.contains("CSV"), "{e}");
    }

    #[test]
    fn mahimahi_file_is_recognised() {
        let e = ThesisTrace::parse("x.down", "0\n0\n1\n1\n4\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.problem.contains("mahimahi"), "{e}");
    }
}
