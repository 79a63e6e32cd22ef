//! Run metrics: delay distributions with exact percentiles and fixed-bin
//! time series.
//!
//! Percentiles use the nearest-rank definition (the smallest sample such
//! that at least p% of samples are <= it; Hyndman & Fan type 1), so every
//! reported value is a delay some packet really had.

use serde::Serialize;
use tcran_core::{Duration, Instant};

/// Mean and tail of a delay distribution, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DelaySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// Sorts `v` ascending: an LSD radix sort on bytes, skipping the bytes in
/// which all samples agree (delays in ns use 4-6 of the 8), for the large
/// sample sets of a run (hundreds of thousands of packets): a few linear
/// passes instead of O(n log n) comparisons. The result is the sorted
/// sequence, whatever the algorithm.
fn radix_sort(v: &mut Vec<u64>) {
    if v.len() < 1024 {
        v.sort_unstable();
        return;
    }
    let (or, and) = v.iter().fold((0u64, u64::MAX), |(o, a), &x| (o | x, a & x));
    let varying = or ^ and;
    let mut src = std::mem::take(v);
    let mut dst = vec![0u64; src.len()];
    for shift in (0..u64::BITS).step_by(8) {
        if (varying >> shift) & 0xff == 0 {
            continue;
        }
        let mut at = [0usize; 256];
        for &x in &src {
            at[((x >> shift) & 0xff) as usize] += 1;
        }
        let mut sum = 0;
        for c in &mut at {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &x in &src {
            let d = ((x >> shift) & 0xff) as usize;
            dst[at[d]] = x;
            at[d] += 1;
        }
        std::mem::swap(&mut src, &mut dst);
    }
    *v = src;
}

/// Collects delay samples (ns) and summarises them exactly.
///
/// While every sample has the same value (a layer that never holds a
/// packet, the constant core delay, one slot of air on a clean channel)
/// only that value and the count are kept: no memory per sample and no
/// sort; the first different sample turns them into the sample vector.
/// Either way the results are the same.
#[derive(Debug, Clone, Default)]
pub struct DelayRecorder {
    samples: Vec<u64>,
    sorted: bool,
    /// While `samples` is empty: every sample so far was `same_value`, and
    /// there were `same_count` of them.
    same_value: u64,
    same_count: u64,
}

impl DelayRecorder {
    #[inline]
    pub fn record(&mut self, d: Duration) {
        let v = d.as_nanos();
        if self.samples.is_empty() && (self.same_count == 0 || self.same_value == v) {
            self.same_value = v;
            self.same_count += 1;
            return;
        }
        self.keep(v);
    }

    /// Keeps `v` in the sample vector, moving the equal samples counted so
    /// far there first.
    #[inline]
    fn keep(&mut self, v: u64) {
        if self.samples.is_empty() {
            self.samples = vec![self.same_value; self.same_count as usize];
            self.same_count = 0;
        }
        self.samples.push(v);
        self.sorted = false;
    }

    /// `(value, count)` while every sample so far had the same value.
    fn same(&self) -> Option<(u64, u64)> {
        (self.same_count > 0).then_some((self.same_value, self.same_count))
    }

    pub fn len(&self) -> usize {
        match self.same() {
            Some((_, n)) => n as usize,
            None => self.samples.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn sort(&mut self) {
        if !self.sorted {
            radix_sort(&mut self.samples);
            self.sorted = true;
        }
    }
    /// The `i`-th smallest sample (0-based, `i < len`).
    fn nth(&mut self, i: usize) -> u64 {
        match self.same() {
            Some((x, _)) => x,
            None => {
                self.sort();
                self.samples[i]
            }
        }
    }
    /// Nearest-rank percentile, `p` in [0, 100].
    pub fn percentile(&mut self, p: f64) -> Option<Duration> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        Some(Duration::from_nanos(self.nth(rank.clamp(1, n) - 1)))
    }
    pub fn summary(&mut self) -> DelaySummary {
        let n = self.len();
        if n == 0 {
            return DelaySummary::default();
        }
        let ms = |d: Option<Duration>| d.map_or(0.0, Duration::as_millis_f64);
        let sum: u128 = match self.same() {
            Some((x, k)) => u128::from(x) * u128::from(k),
            None => self.samples.iter().map(|s| *s as u128).sum(),
        };
        DelaySummary {
            count: n as u64,
            mean: sum as f64 / n as f64 / 1e6,
            p50: ms(self.percentile(50.0)),
            p95: ms(self.percentile(95.0)),
            p99: ms(self.percentile(99.0)),
            max: ms(self.percentile(100.0)),
        }
    }
    /// `(delay_ms, cumulative fraction)` points of the empirical CDF, thinned
    /// to at most `points` evenly spaced ranks (for plots).
    pub fn cdf(&mut self, points: usize) -> Vec<(f64, f64)> {
        let n = self.len();
        if n == 0 || points == 0 {
            return Vec::new();
        }
        let step = n.div_ceil(points).max(1);
        let mut out: Vec<(f64, f64)> = (step - 1..n)
            .step_by(step)
            .map(|i| (self.nth(i) as f64 / 1e6, (i + 1) as f64 / n as f64))
            .collect();
        if out.last().is_none_or(|(_, f)| *f < 1.0) {
            out.push((self.nth(n - 1) as f64 / 1e6, 1.0));
        }
        out
    }
}

/// A value accumulated into fixed-width time bins (e.g. bytes delivered per
/// 100 ms for a throughput plot, or RLC bytes sampled per slot).
#[derive(Debug, Clone)]
pub struct TimeSeries {
    bin: Duration,
    sums: Vec<f64>,
    counts: Vec<u64>,
}

impl TimeSeries {
    pub fn new(bin: Duration) -> TimeSeries {
        assert!(!bin.is_zero(), "time series bin must be positive");
        TimeSeries {
            bin,
            sums: Vec::new(),
            counts: Vec::new(),
        }
    }
    fn index(&mut self, at: Instant) -> usize {
        let i = (at.as_nanos() / self.bin.as_nanos()) as usize;
        if self.sums.len() <= i {
            self.sums.resize(i + 1, 0.0);
            self.counts.resize(i + 1, 0);
        }
        i
    }
    /// Adds `value` to the bin containing `at`.
    pub fn add(&mut self, at: Instant, value: f64) {
        let i = self.index(at);
        self.sums[i] += value;
        self.counts[i] += 1;
    }
    pub fn bin(&self) -> Duration {
        self.bin
    }
    /// `(bin start s, sum)` per bin.
    pub fn sums(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let w = self.bin.as_secs_f64();
        self.sums
            .iter()
            .enumerate()
            .map(move |(i, s)| (i as f64 * w, *s))
    }
    /// `(bin start s, mean of the samples)`; bins without samples are skipped.
    pub fn means(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let w = self.bin.as_secs_f64();
        self.sums
            .iter()
            .zip(&self.counts)
            .enumerate()
            .filter(|(_, (_, c))| **c > 0)
            .map(move |(i, (s, c))| (i as f64 * w, s / *c as f64))
    }
    /// `(bin start s, sum / bin width)`: a rate per second.
    pub fn rates(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let w = self.bin.as_secs_f64();
        self.sums().map(move |(t, s)| (t, s / w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn radix_sort_sorts(mut v in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..3000), mask in proptest::prelude::any::<u64>()) {
            // Masked: some bytes all equal, as in delays.
            for x in &mut v {
                *x &= mask;
            }
            let mut want = v.clone();
            want.sort_unstable();
            radix_sort(&mut v);
            proptest::prop_assert_eq!(v, want);
        }
    }

    #[test]
    fn nearest_rank_percentiles_match_the_textbook_example() {
        // Wikipedia "Percentile", nearest-rank method: {15, 20, 35, 40, 50}:
        // p30 = 20, p40 = 20, p50 = 35, p100 = 50.
        let mut r = DelayRecorder::default();
        for v in [15, 20, 35, 40, 50] {
            r.record(Duration::from_millis(v));
        }
        assert_eq!(r.percentile(30.0), Some(Duration::from_millis(20)));
        assert_eq!(r.percentile(40.0), Some(Duration::from_millis(20)));
        assert_eq!(r.percentile(50.0), Some(Duration::from_millis(35)));
        assert_eq!(r.percentile(100.0), Some(Duration::from_millis(50)));
        let s = r.summary();
        assert_eq!((s.count, s.mean, s.max), (5, 32.0, 50.0));
    }

    #[test]
    fn equal_samples_summarise_as_if_each_was_kept() {
        let mut same = DelayRecorder::default();
        let mut kept = DelayRecorder::default();
        for _ in 0..1000 {
            same.record(Duration::from_millis(10));
        }
        // The same values, but kept one by one (a different one first).
        kept.record(Duration::from_millis(3));
        for _ in 0..1000 {
            kept.record(Duration::from_millis(10));
        }
        assert!(same.samples.is_empty(), "no memory per sample");
        assert_eq!(same.len(), 1000);
        let (s, k) = (same.summary(), kept.summary());
        assert_eq!((s.count, s.mean, s.p50, s.max), (1000, 10.0, 10.0, 10.0));
        assert_eq!((k.count, k.p50, k.p99, k.max), (1001, 10.0, 10.0, 10.0));
        assert_eq!(same.cdf(200).len(), 200);
        assert_eq!(same.cdf(200).last(), Some(&(10.0, 1.0)));
        // A different value later: everything is kept from then on.
        same.record(Duration::from_millis(2));
        assert_eq!(same.len(), 1001);
        assert_eq!(same.percentile(0.0), Some(Duration::from_millis(2)));
        assert_eq!(same.summary().max, 10.0);
    }

    #[test]
    fn empty_recorder_summarises_to_zero() {
        assert_eq!(DelayRecorder::default().summary(), DelaySummary::default());
    }

    #[test]
    fn cdf_ends_at_one_and_is_monotone() {
        let mut r = DelayRecorder::default();
        for v in (1..=1000).rev() {
            r.record(Duration::from_micros(v));
        }
        let c = r.cdf(50);
        assert!(c.len() <= 51);
        assert_eq!(c.last().unwrap().1, 1.0);
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
    }

    #[test]
    fn time_series_bins_sums_and_rates() {
        let mut ts = TimeSeries::new(Duration::from_millis(100));
        ts.add(Instant::from_millis(10), 1500.0);
        ts.add(Instant::from_millis(90), 1500.0);
        ts.add(Instant::from_millis(250), 500.0);
        let sums: Vec<_> = ts.sums().collect();
        assert_eq!(sums, vec![(0.0, 3000.0), (0.1, 0.0), (0.2, 500.0)]);
        let rates: Vec<_> = ts.rates().map(|(_, r)| r).collect();
        assert_eq!(rates, vec![30000.0, 0.0, 5000.0]);
        let means: Vec<_> = ts.means().map(|(_, m)| m).collect();
        assert_eq!(means, vec![1500.0, 500.0]);
    }
}
