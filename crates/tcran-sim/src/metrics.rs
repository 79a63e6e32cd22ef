//! Run metrics: delay distributions in bounded memory and fixed-bin time
//! series.
//!
//! Percentiles use the nearest-rank definition (the smallest sample such
//! that at least p% of samples are <= it; Hyndman & Fan type 1).
//!
//! Memory does not grow with the simulated duration: a distribution keeps
//! its samples exactly up to [`EXACT_SAMPLES`] of them (8 bytes each), then
//! moves them into an HDR histogram (`hdrhistogram`, [`HISTOGRAM_SIGFIG`]
//! significant digits, a few hundred kB at most). Accuracy:
//! - count, mean, minimum and maximum are exact in both modes;
//! - with at most [`EXACT_SAMPLES`] samples, every percentile and CDF point
//!   is a delay some packet really had;
//! - beyond, a percentile or CDF point is the upper end of the histogram
//!   bucket holding the exact nearest-rank sample, clamped to the maximum:
//!   never below the exact value and at most 1/1024 (0.098 %) above it
//!   (hdrhistogram's sub-bucket width at 3 significant digits).
use hdrhistogram::Histogram;
use serde::Serialize;
use tcran_core::{Duration, Instant};

/// Samples a [`DelayRecorder`] keeps exactly (128 kB) before it moves to a
/// histogram.
pub const EXACT_SAMPLES: usize = 1 << 14;

/// Significant decimal digits of the histogram: hdrhistogram then uses
/// 2048 sub-buckets per power of two, so a bucket spans at most 1/1024 of
/// its values.
pub const HISTOGRAM_SIGFIG: u8 = 3;

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

/// Collects delay samples (ns) and summarises them: exactly up to
/// [`EXACT_SAMPLES`] samples, then from a histogram (module docs).
///
/// While every sample has the same value (a layer that never holds a
/// packet, the constant core delay, one slot of air on a clean channel)
/// only that value and the count are kept: no memory per sample and no
/// sort; the first different sample turns them into the sample vector (or
/// the histogram, past [`EXACT_SAMPLES`]). Either way the results are the
/// same.
#[derive(Debug, Clone, Default)]
pub struct DelayRecorder {
    samples: Vec<u64>,
    sorted: bool,
    /// While `samples` is empty: every sample so far was `same_value`, and
    /// there were `same_count` of them.
    same_value: u64,
    same_count: u64,
    /// Past [`EXACT_SAMPLES`]: every sample, with the exact sum, minimum
    /// and maximum.
    hist: Option<Box<Binned>>,
}

/// The histogram mode of a [`DelayRecorder`].
#[derive(Debug, Clone)]
struct Binned {
    hist: Histogram<u64>,
    sum: u128,
    min: u64,
    max: u64,
}

impl Binned {
    fn new() -> Binned {
        Binned {
            // Auto-resizing: the buckets grow with the largest value seen.
            hist: Histogram::new(HISTOGRAM_SIGFIG).expect("3 significant digits are valid"),
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
    #[inline]
    fn record_n(&mut self, v: u64, n: u64) {
        // `record_n` grows the auto-resizing histogram to `v`; only a value
        // beyond what it can ever track (~2^62 ns) is clamped.
        if self.hist.record_n(v, n).is_err() {
            self.hist.saturating_record_n(v, n);
        }
        self.sum += u128::from(v) * u128::from(n);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }
    /// Nearest-rank value at quantile `q`: the upper end of its bucket,
    /// within the exact minimum and maximum.
    fn at(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q).clamp(self.min, self.max)
    }
}

impl DelayRecorder {
    /// Records one sample. A delivered packet is recorded six times (its
    /// delay and each layer's), and most layers repeat one value (the core
    /// delay, an idle UPF or TC layer): that case stays in the caller, a
    /// compare and an add, and the rest goes to [`DelayRecorder::record_other`].
    /// `same_count > 0` only while neither samples nor a histogram are kept
    /// (`keep` and `bin_all` zero it), so the shortcut is the equal-value
    /// branch of `record_other`, taken before the call.
    #[inline]
    pub fn record(&mut self, d: Duration) {
        let v = d.as_nanos();
        if self.same_count > 0 && self.same_value == v {
            self.same_count += 1;
            return;
        }
        self.record_other(v);
    }

    /// Every other sample: into the histogram, the sample vector, or the
    /// first of a run of equal values. Out of line, so that the shortcut
    /// above stays small enough to inline at the six call sites.
    #[inline(never)]
    fn record_other(&mut self, v: u64) {
        if let Some(h) = &mut self.hist {
            h.record_n(v, 1);
            return;
        }
        if self.samples.is_empty() && (self.same_count == 0 || self.same_value == v) {
            self.same_value = v;
            self.same_count += 1;
            return;
        }
        self.keep(v);
    }

    /// Keeps `v` in the sample vector, moving the equal samples counted so
    /// far there first; past [`EXACT_SAMPLES`], moves everything into the
    /// histogram.
    #[inline]
    fn keep(&mut self, v: u64) {
        if self.samples.is_empty() {
            if self.same_count as usize >= EXACT_SAMPLES {
                self.bin_all();
                self.hist.as_mut().expect("just made").record_n(v, 1);
                return;
            }
            self.samples = vec![self.same_value; self.same_count as usize];
            self.same_count = 0;
        }
        self.samples.push(v);
        self.sorted = false;
        if self.samples.len() >= EXACT_SAMPLES {
            self.bin_all();
        }
    }

    /// Moves every sample kept so far into a histogram and frees them.
    #[cold]
    fn bin_all(&mut self) {
        let mut h = Binned::new();
        if self.same_count > 0 {
            h.record_n(self.same_value, self.same_count);
            self.same_count = 0;
        }
        for &x in &self.samples {
            h.record_n(x, 1);
        }
        self.samples = Vec::new();
        self.hist = Some(Box::new(h));
    }

    /// Whether the summaries are exact (at most [`EXACT_SAMPLES`] samples,
    /// or all equal).
    pub fn is_exact(&self) -> bool {
        self.hist.is_none()
    }

    /// `(value, count)` while every sample so far had the same value.
    fn same(&self) -> Option<(u64, u64)> {
        (self.same_count > 0).then_some((self.same_value, self.same_count))
    }

    pub fn len(&self) -> usize {
        if let Some(h) = &self.hist {
            return h.hist.len() as usize;
        }
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
    /// The `i`-th smallest sample (0-based, `i < len`), exact modes only.
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
        if let Some(h) = &self.hist {
            return Some(Duration::from_nanos(h.at(p / 100.0)));
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
        let sum: u128 = match (&self.hist, self.same()) {
            (Some(h), _) => h.sum,
            (None, Some((x, k))) => u128::from(x) * u128::from(k),
            (None, None) => self.samples.iter().map(|s| *s as u128).sum(),
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
        let ranks = || (step - 1..n).step_by(step);
        let mut out: Vec<(f64, f64)> = if let Some(h) = &self.hist {
            // Rank i + 1 of n as a quantile, nudged below so that rounding
            // cannot push ceil(q n) to the next rank.
            let qs = ranks().map(|i| ((i + 1) as f64 - 0.5) / n as f64);
            h.hist
                .value_at_quantiles(qs)
                .zip(ranks())
                .map(|(v, i)| {
                    let v = v.clamp(h.min, h.max);
                    (v as f64 / 1e6, (i + 1) as f64 / n as f64)
                })
                .collect()
        } else {
            ranks()
                .map(|i| (self.nth(i) as f64 / 1e6, (i + 1) as f64 / n as f64))
                .collect()
        };
        if out.last().is_none_or(|(_, f)| *f < 1.0) {
            let max = match &self.hist {
                Some(h) => h.max,
                None => self.nth(n - 1),
            };
            out.push((max as f64 / 1e6, 1.0));
        }
        out
    }
}

/// The mean over fixed-width time bins of each bin's mean sample (e.g. the
/// RLC occupancy sampled per slot, averaged per 10 ms, then over the run),
/// streamed: O(1) memory whatever the duration. Bins without samples do
/// not count. Samples must come in time order.
#[derive(Debug, Clone)]
pub struct BinnedMean {
    bin: Duration,
    /// The open bin: its index, sum and count.
    at: u64,
    sum: f64,
    count: u64,
    /// Closed bins: sum of their means, and how many.
    means: f64,
    bins: u64,
}

impl BinnedMean {
    pub fn new(bin: Duration) -> BinnedMean {
        assert!(!bin.is_zero(), "time series bin must be positive");
        BinnedMean {
            bin,
            at: 0,
            sum: 0.0,
            count: 0,
            means: 0.0,
            bins: 0,
        }
    }
    /// Adds `value` to the bin containing `at` (not before the last one).
    pub fn add(&mut self, at: Instant, value: f64) {
        let i = at.as_nanos() / self.bin.as_nanos();
        if i != self.at {
            self.close();
            self.at = i;
        }
        self.sum += value;
        self.count += 1;
    }
    fn close(&mut self) {
        if self.count > 0 {
            self.means += self.sum / self.count as f64;
            self.bins += 1;
        }
        self.sum = 0.0;
        self.count = 0;
    }
    /// The sum of the bin means (the open bin's included).
    pub fn sum_of_means(&self) -> f64 {
        if self.count > 0 {
            self.means + self.sum / self.count as f64
        } else {
            self.means
        }
    }
    /// The mean of the bin means; 0 without samples.
    pub fn mean(&self) -> f64 {
        match self.bins() {
            0 => 0.0,
            n => self.sum_of_means() / n as f64,
        }
    }
    /// The bins with samples so far.
    pub fn bins(&self) -> u64 {
        self.bins + u64::from(self.count > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// `record`'s inline shortcut for a repeated value records exactly
        /// what the general path does: runs of equal samples (a few values,
        /// long runs), past EXACT_SAMPLES into the histogram too.
        #[test]
        fn the_repeated_value_shortcut_records_as_the_general_path(
            runs in proptest::collection::vec((0u64..3, 1usize..4000), 0..12),
        ) {
            let (mut shortcut, mut general) = (DelayRecorder::default(), DelayRecorder::default());
            for (value, n) in runs {
                for _ in 0..n {
                    shortcut.record(Duration::from_micros(value));
                    general.record_other(Duration::from_micros(value).as_nanos());
                }
            }
            proptest::prop_assert_eq!(shortcut.len(), general.len());
            proptest::prop_assert_eq!(shortcut.is_exact(), general.is_exact());
            proptest::prop_assert_eq!(shortcut.summary(), general.summary());
            proptest::prop_assert_eq!(shortcut.cdf(50), general.cdf(50));
        }
    }

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

    /// Past EXACT_SAMPLES, each percentile and CDF point is the exact
    /// nearest-rank value or at most 1/1024 above it, count, mean and max
    /// stay exact, and no sample is kept.
    #[test]
    fn long_runs_switch_to_a_histogram_within_its_stated_error() {
        let mut exact: Vec<u64> = Vec::new();
        let mut r = DelayRecorder::default();
        // A spread from microseconds to seconds (log-uniform-ish), from a
        // fixed LCG so the test is deterministic.
        let mut x: u64 = 12345;
        for _ in 0..(3 * EXACT_SAMPLES) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = 1000 + ((x >> 33) % 1_000_000) * ((x >> 20) % 2000 + 1);
            exact.push(v);
            r.record(Duration::from_nanos(v));
        }
        assert!(!r.is_exact() && r.samples.capacity() == 0, "samples freed");
        exact.sort_unstable();
        let n = exact.len();
        for p in [0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            let rank = ((p / 100.0) * n as f64).ceil() as usize;
            let want = exact[rank.clamp(1, n) - 1];
            let got = r.percentile(p).unwrap().as_nanos();
            assert!(
                got >= want && (got - want) as f64 <= want as f64 / 1024.0,
                "p{p}: {got} vs exact {want}"
            );
        }
        let s = r.summary();
        let mean = exact.iter().map(|v| *v as u128).sum::<u128>() as f64 / n as f64 / 1e6;
        assert_eq!((s.count, s.mean), (n as u64, mean));
        assert_eq!(s.max, *exact.last().unwrap() as f64 / 1e6);
        let c = r.cdf(200);
        assert!(c.len() <= 201 && c.last().unwrap() == &(s.max, 1.0));
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        for (d, f) in &c {
            let rank = (f * n as f64).round() as usize;
            let want = exact[rank - 1] as f64 / 1e6;
            assert!(
                *d >= want && d - want <= want / 1024.0,
                "{d} vs {want} at {f}"
            );
        }
    }

    /// Millions of equal samples cost nothing, and a different one then
    /// goes to the histogram, not to a vector of millions.
    #[test]
    fn many_equal_samples_then_a_different_one_stay_small() {
        let mut r = DelayRecorder::default();
        for _ in 0..5_000_000 {
            r.record(Duration::from_millis(10));
        }
        r.record(Duration::from_millis(20));
        assert!(!r.is_exact() && r.samples.capacity() == 0);
        let s = r.summary();
        assert_eq!((s.count, s.max), (5_000_001, 20.0));
        assert!(s.p50 >= 10.0 && s.p50 - 10.0 <= 10.0 / 1024.0, "{}", s.p50);
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
    fn binned_mean_averages_the_means_of_the_bins_with_samples() {
        let mut m = BinnedMean::new(Duration::from_millis(100));
        assert_eq!(m.mean(), 0.0);
        m.add(Instant::from_millis(10), 1500.0);
        m.add(Instant::from_millis(90), 500.0);
        // Bin 1 has no sample; bin 2 one.
        m.add(Instant::from_millis(250), 4000.0);
        assert_eq!(m.bins(), 2);
        assert_eq!(m.mean(), (1000.0 + 4000.0) / 2.0);
    }
}
