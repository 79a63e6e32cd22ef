//! Thinning long series for plots without hiding their extremes.
//!
//! A 200 s run has 400 000 slots at 30 kHz; a line with that many points
//! makes a page of tens of MB that no browser draws smoothly. Each plotted
//! line keeps at most [`MAX_POINTS`] points: the samples are cut into
//! buckets of consecutive points and each bucket keeps its minimum and its
//! maximum, in time order (the "min/max" decimation used by oscilloscopes),
//! so every peak and every trough of the original is still drawn.

/// Most points one plotted line keeps.
pub const MAX_POINTS: usize = 2000;

/// `points` (in time order) thinned to at most `max` points (`max` >= 2)
/// keeping each bucket's minimum and maximum value.
pub fn min_max(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points.to_vec();
    }
    let buckets = (max / 2).max(1);
    let size = points.len().div_ceil(buckets);
    let mut out = Vec::with_capacity(2 * buckets);
    for chunk in points.chunks(size) {
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = i;
            }
            if p.1 > chunk[hi].1 {
                hi = i;
            }
        }
        let (a, b) = (lo.min(hi), lo.max(hi));
        out.push(chunk[a]);
        if b != a {
            out.push(chunk[b]);
        }
    }
    out
}

/// A series with gaps (`None` = no sample in that bin) as separate line
/// segments, each thinned with [`min_max`] to its share of `max` points.
pub fn segments(t: &[f64], v: &[Option<f64>], max: usize) -> Vec<Vec<(f64, f64)>> {
    let mut segs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for (t, v) in t.iter().zip(v) {
        match v {
            Some(v) if v.is_finite() && t.is_finite() => cur.push((*t, *v)),
            _ => {
                if !cur.is_empty() {
                    segs.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        segs.push(cur);
    }
    let total: usize = segs.iter().map(Vec::len).sum();
    if total <= max {
        return segs;
    }
    segs.into_iter()
        .map(|s| {
            let share = (max * s.len()).div_ceil(total).max(2);
            min_max(&s, share)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_series_are_kept_whole() {
        let p: Vec<_> = (0..10).map(|i| (i as f64, (i * i) as f64)).collect();
        assert_eq!(min_max(&p, 2000), p);
    }

    #[test]
    fn long_series_keep_every_peak_and_trough_within_the_budget() {
        // A sawtooth with one spike at slot 123 457 and one dip at 300 001.
        let mut p: Vec<_> = (0..400_000)
            .map(|i| (i as f64 * 0.0005, (i % 100) as f64))
            .collect();
        p[123_457].1 = 1e6;
        p[300_001].1 = -5.0;
        let d = min_max(&p, MAX_POINTS);
        assert!(d.len() <= MAX_POINTS, "{}", d.len());
        assert!(d.contains(&p[123_457]));
        assert!(d.contains(&p[300_001]));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "time order");
        // Every bucket of the sawtooth spans a full period: 0 and 99 survive.
        assert_eq!(d.iter().filter(|q| q.1 == 99.0).count(), d.len() / 2 - 1);
    }

    #[test]
    fn gaps_split_lines_and_nan_is_a_gap() {
        let t = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];
        let v = [Some(1.0), Some(2.0), None, Some(f64::NAN), Some(3.0), None];
        assert_eq!(
            segments(&t, &v, 100),
            vec![vec![(0.0, 1.0), (0.1, 2.0)], vec![(0.4, 3.0)]]
        );
    }
}
