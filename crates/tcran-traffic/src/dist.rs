//! Random variates for the traffic models, drawn from a seeded
//! [`RngStream`] (principle 5). Written out here rather than pulled from
//! `rand_distr` so the exact transformation (and therefore every packet
//! time) is pinned by this crate and cannot shift with a dependency update.

use tcran_core::rng::RngStream;

/// Standard normal ([`RngStream::standard_normal`]).
pub fn standard_normal(rng: &mut RngStream) -> f64 {
    rng.standard_normal()
}

/// Normal(mean, sd).
pub fn normal(rng: &mut RngStream, mean: f64, sd: f64) -> f64 {
    mean + sd * standard_normal(rng)
}

/// Normal(mean, sd) conditioned on `>= lo` (rejection: redraw until the
/// value is acceptable, i.e. a truncated, not a clamped, distribution).
/// Gives up after 1000 tries and returns `lo` (only if `lo` is far in the
/// upper tail, which configurations reject).
pub fn truncated_normal_at_least(rng: &mut RngStream, mean: f64, sd: f64, lo: f64) -> f64 {
    for _ in 0..1000 {
        let x = normal(rng, mean, sd);
        if x >= lo {
            return x;
        }
    }
    lo
}

/// Exponential with the given mean.
pub fn exponential(rng: &mut RngStream, mean: f64) -> f64 {
    -mean * (1.0 - rng.uniform()).ln()
}

/// Log-normal whose *own* mean and standard deviation are `mean` and `sd`
/// (not those of the underlying normal): sigma² = ln(1 + sd²/mean²),
/// mu = ln(mean) − sigma²/2.
pub fn lognormal_mean_sd(rng: &mut RngStream, mean: f64, sd: f64) -> f64 {
    let sigma2 = (1.0 + (sd * sd) / (mean * mean)).ln();
    let mu = mean.ln() - sigma2 / 2.0;
    (mu + sigma2.sqrt() * standard_normal(rng)).exp()
}

/// Pareto with scale (location, minimum) `xm` and shape `alpha`, by inversion.
pub fn pareto(rng: &mut RngStream, xm: f64, alpha: f64) -> f64 {
    xm / (1.0 - rng.uniform()).powf(1.0 / alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_sd(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        (m, v.sqrt())
    }

    #[test]
    fn normal_exponential_lognormal_and_pareto_have_their_moments() {
        let mut r = RngStream::new(1, "dist");
        let n: Vec<f64> = (0..50_000).map(|_| normal(&mut r, 3.0, 2.0)).collect();
        let (m, s) = mean_sd(&n);
        assert!((m - 3.0).abs() < 0.05 && (s - 2.0).abs() < 0.05, "{m} {s}");
        let e: Vec<f64> = (0..50_000).map(|_| exponential(&mut r, 5.0)).collect();
        assert!((mean_sd(&e).0 - 5.0).abs() < 0.1);
        let l: Vec<f64> = (0..200_000)
            .map(|_| lognormal_mean_sd(&mut r, 100.0, 50.0))
            .collect();
        let (m, s) = mean_sd(&l);
        assert!((m - 100.0).abs() < 1.0 && (s - 50.0).abs() < 2.0, "{m} {s}");
        // Pareto mean = alpha xm / (alpha - 1) = 3.1 * 15 / 2.1 = 22.14.
        let p: Vec<f64> = (0..200_000).map(|_| pareto(&mut r, 15.0, 3.1)).collect();
        assert!((mean_sd(&p).0 - 22.14).abs() < 0.3);
        assert!(p.iter().all(|&x| x >= 15.0));
    }
}
