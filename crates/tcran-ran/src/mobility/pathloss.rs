//! Large-scale propagation of TR 38.901 §7.4 for the urban macro (UMa) and
//! urban micro street-canyon (UMi) scenarios.
//!
//! Contract:
//! - [`path_loss_db`] is Table 7.4.1-1: the LOS formula with its
//!   breakpoint `d'_BP = 4 h'_BS h'_UT f_c / c` (Note 1, effective
//!   environment height `h_E = 1 m`), and NLOS as the larger of the LOS
//!   value and the NLOS formula. `h_E = 1 m` is the table's value for UMi
//!   and, for UMa, the one it takes with certainty below `h_UT = 13 m`
//!   (Note 1's `C(d_2D, h_UT) = 0`); above 13 m UMa draws `h_E` at random,
//!   which is not modelled (a known simplification).
//! - [`los_probability`] is Table 7.4.2-1 (outdoor users).
//! - [`ShadowFading`] is log-normal shadowing with the standard deviation
//!   of Table 7.4.1-1 and the decorrelation distance of Table 7.5-6,
//!   correlated along a UE's track with the exponential autocorrelation
//!   `exp(-Δx / d_cor)` (the Gudmundson model §7.6.3.1's procedure
//!   assumes): each step mixes the previous value with a fresh draw.
//! - [`Link::check`] refuses geometry outside the table's applicability
//!   (its field, value and range); `d_2D` below 10 m is evaluated at 10 m,
//!   the table's smallest distance.

use serde::{Deserialize, Serialize};
use tcran_core::rng::RngStream;
use tcran_core::ConfigError;

/// Speed of light, m/s.
const C: f64 = 299_792_458.0;

/// The deployment scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scenario {
    /// Urban macro: base stations above the rooftops (nominally 25 m).
    Uma,
    /// Urban micro, street canyon: base stations below the rooftops
    /// (nominally 10 m).
    UmiStreetCanyon,
}

/// One base station - UE geometry on one carrier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Horizontal distance, m.
    pub d2d_m: f64,
    pub h_bs_m: f64,
    pub h_ut_m: f64,
    /// Carrier frequency, GHz.
    pub fc_ghz: f64,
}

/// Where Table 7.4.1-1 applies.
const FC_GHZ: (f64, f64) = (0.5, 100.0);
const H_UT_M: (f64, f64) = (1.5, 22.5);
const D2D_MAX_M: f64 = 5000.0;
const D2D_MIN_M: f64 = 10.0;

impl Link {
    /// Refuses a geometry the table does not cover.
    pub fn check(&self) -> Result<(), ConfigError> {
        let within = |field: &str, v: f64, (lo, hi): (f64, f64), unit: &str| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(
                    field,
                    v,
                    format!("{lo} to {hi} {unit} (TR 38.901 Table 7.4.1-1)"),
                ))
            }
        };
        within("fc_ghz", self.fc_ghz, FC_GHZ, "GHz")?;
        within("h_ut_m", self.h_ut_m, H_UT_M, "m")?;
        within("d2d_m", self.d2d_m, (0.0, D2D_MAX_M), "m")?;
        if !(self.h_bs_m > self.h_ut_m && self.h_bs_m <= 150.0) {
            return Err(ConfigError::new(
                "h_bs_m",
                self.h_bs_m,
                format!("above the UE ({} m), at most 150 m", self.h_ut_m),
            ));
        }
        Ok(())
    }

    /// `d'_BP` with `h_E = 1 m`.
    pub fn breakpoint_m(&self) -> f64 {
        4.0 * (self.h_bs_m - 1.0) * (self.h_ut_m - 1.0) * self.fc_ghz * 1e9 / C
    }
}

/// Table 7.4.1-1's path loss, dB, without shadow fading.
pub fn path_loss_db(s: Scenario, l: &Link, los: bool) -> f64 {
    PathLoss::new(s, l).db(l.d2d_m, los)
}

/// Table 7.4.1-1 for one scenario, base station height, UE height and
/// carrier: the terms that do not depend on the distance computed once,
/// for a channel that evaluates every site's path loss on every sample.
/// [`PathLoss::db`] gives [`path_loss_db`]'s values exactly (the same
/// operations in the same order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathLoss {
    s: Scenario,
    h_bs_m: f64,
    h_ut_m: f64,
    /// `d'_BP`, m.
    dbp: f64,
    /// `log10(f_c)`, f_c in GHz.
    fc_log10: f64,
    /// `log10(d'_BP² + (h_BS - h_UT)²)`, of the LOS formula beyond `d'_BP`.
    bp_log10: f64,
}

impl PathLoss {
    /// The terms of `l`'s geometry but its distance.
    pub fn new(s: Scenario, l: &Link) -> PathLoss {
        let dbp = l.breakpoint_m();
        let dh2 = (l.h_bs_m - l.h_ut_m).powi(2);
        PathLoss {
            s,
            h_bs_m: l.h_bs_m,
            h_ut_m: l.h_ut_m,
            dbp,
            fc_log10: l.fc_ghz.log10(),
            bp_log10: (dbp * dbp + dh2).log10(),
        }
    }

    /// The path loss at horizontal distance `d2d_m`, dB.
    pub fn db(&self, d2d_m: f64, los: bool) -> f64 {
        let d2d = d2d_m.max(D2D_MIN_M);
        let d3d = d2d.hypot(self.h_bs_m - self.h_ut_m);
        let (dbp, fc_log10) = (self.dbp, self.fc_log10);
        let los_db = match self.s {
            Scenario::Uma if d2d <= dbp => 28.0 + 22.0 * d3d.log10() + 20.0 * fc_log10,
            Scenario::Uma => 28.0 + 40.0 * d3d.log10() + 20.0 * fc_log10 - 9.0 * self.bp_log10,
            Scenario::UmiStreetCanyon if d2d <= dbp => 32.4 + 21.0 * d3d.log10() + 20.0 * fc_log10,
            Scenario::UmiStreetCanyon => {
                32.4 + 40.0 * d3d.log10() + 20.0 * fc_log10 - 9.5 * self.bp_log10
            }
        };
        if los {
            return los_db;
        }
        let nlos_db = match self.s {
            Scenario::Uma => {
                13.54 + 39.08 * d3d.log10() + 20.0 * fc_log10 - 0.6 * (self.h_ut_m - 1.5)
            }
            Scenario::UmiStreetCanyon => {
                35.3 * d3d.log10() + 22.4 + 21.3 * fc_log10 - 0.3 * (self.h_ut_m - 1.5)
            }
        };
        los_db.max(nlos_db)
    }
}

/// Table 7.4.2-1: the probability that an outdoor UE at `d2d_m` sees the
/// base station.
pub fn los_probability(s: Scenario, d2d_m: f64, h_ut_m: f64) -> f64 {
    if d2d_m <= 18.0 {
        return 1.0;
    }
    let near = 18.0 / d2d_m;
    match s {
        Scenario::Uma => {
            let c = if h_ut_m <= 13.0 {
                0.0
            } else {
                ((h_ut_m - 13.0) / 10.0).powf(1.5)
            };
            (near + (-d2d_m / 63.0).exp() * (1.0 - near))
                * (1.0 + c * 1.25 * (d2d_m / 100.0).powi(3) * (-d2d_m / 150.0).exp())
        }
        Scenario::UmiStreetCanyon => near + (-d2d_m / 36.0).exp() * (1.0 - near),
    }
}

/// The shadow fading's standard deviation (Table 7.4.1-1), dB.
pub fn shadow_sigma_db(s: Scenario, los: bool) -> f64 {
    match (s, los) {
        (Scenario::Uma, true) => 4.0,
        (Scenario::Uma, false) => 6.0,
        (Scenario::UmiStreetCanyon, true) => 4.0,
        (Scenario::UmiStreetCanyon, false) => 7.82,
    }
}

/// The shadow fading's decorrelation distance (Table 7.5-6), m.
pub fn shadow_decorrelation_m(s: Scenario, los: bool) -> f64 {
    match (s, los) {
        (Scenario::Uma, true) => 37.0,
        (Scenario::Uma, false) => 50.0,
        (Scenario::UmiStreetCanyon, true) => 10.0,
        (Scenario::UmiStreetCanyon, false) => 13.0,
    }
}

/// Log-normal shadowing of one base station - UE link, correlated along
/// the UE's track.
#[derive(Debug, Clone)]
pub struct ShadowFading {
    sigma_db: f64,
    decorrelation_m: f64,
    value_db: Option<f64>,
    rng: RngStream,
}

impl ShadowFading {
    /// `rng` is the link's own stream (one per cell and UE).
    pub fn new(sigma_db: f64, decorrelation_m: f64, rng: RngStream) -> ShadowFading {
        ShadowFading {
            sigma_db,
            decorrelation_m,
            value_db: None,
            rng,
        }
    }

    /// The shadowing after the UE moved `moved_m` since the last call (the
    /// first call draws the initial value).
    pub fn step(&mut self, moved_m: f64) -> f64 {
        self.step_correlated(self.correlation(moved_m))
    }

    /// The autocorrelation over `moved_m`, `exp(-|Δx| / d_cor)`: the same
    /// for every process of one decorrelation distance, so a caller that
    /// steps several of them over one move may compute it once.
    pub fn correlation(&self, moved_m: f64) -> f64 {
        (-moved_m.abs() / self.decorrelation_m).exp()
    }

    /// [`ShadowFading::step`] with the move's [`ShadowFading::correlation`]
    /// `rho` given.
    pub fn step_correlated(&mut self, rho: f64) -> f64 {
        let fresh = self.sigma_db * self.rng.standard_normal();
        let v = match self.value_db {
            None => fresh,
            Some(prev) => rho * prev + (1.0 - rho * rho).sqrt() * fresh,
        };
        self.value_db = Some(v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-3's test vectors for its independent implementation of Table
    /// 7.4.1-1 (src/propagation/test/three-gpp-propagation-loss-model-
    /// test-suite.cc: 5 GHz, UMa h_BS 25 m, UMi h_BS 10 m, h_UT 1.5 m, no
    /// shadowing, received power for 0 dBm sent), to their 0.05 dB.
    #[test]
    fn path_loss_matches_ns3s_test_vectors() {
        let uma = [
            (10.0, true, 72.9380),
            (100.0, true, 86.2362),
            (1000.0, true, 109.7252),
            (5000.0, true, 137.6794),
            (10.0, false, 82.5131),
            (100.0, false, 106.1356),
            (1000.0, false, 144.7641),
            (5000.0, false, 172.0753),
        ];
        let umi = [
            (10.0, true, 69.8591),
            (100.0, true, 88.4122),
            (1000.0, true, 119.3114),
            (5000.0, true, 147.2696),
            (10.0, false, 76.7563),
            (100.0, false, 107.9432),
            (1000.0, false, 143.1886),
            (5000.0, false, 167.8617),
        ];
        for (s, h_bs, vectors) in [
            (Scenario::Uma, 25.0, uma),
            (Scenario::UmiStreetCanyon, 10.0, umi),
        ] {
            for (d, los, want) in vectors {
                let l = Link {
                    d2d_m: d,
                    h_bs_m: h_bs,
                    h_ut_m: 1.5,
                    fc_ghz: 5.0,
                };
                l.check().expect("inside the table");
                let got = path_loss_db(s, &l, los);
                assert!(
                    (got - want).abs() < 0.05,
                    "{s:?} {d} m los {los}: {got} vs {want}"
                );
            }
        }
    }

    /// Table 7.4.2-1 by hand: within 18 m always LOS; UMa at 100 m,
    /// h_UT 1.5 m: 0.18 + e^(-100/63) 0.82 = 0.3477; UMi at 100 m: 0.18 +
    /// e^(-100/36) 0.82 = 0.2309.
    #[test]
    fn los_probability_follows_the_table() {
        assert_eq!(los_probability(Scenario::Uma, 18.0, 1.5), 1.0);
        assert!((los_probability(Scenario::Uma, 100.0, 1.5) - 0.3477).abs() < 1e-4);
        assert!((los_probability(Scenario::UmiStreetCanyon, 100.0, 1.5) - 0.2309).abs() < 1e-4);
        let mut last = 1.0;
        for d in (20..5000).step_by(10) {
            let p = los_probability(Scenario::Uma, f64::from(d), 1.5);
            assert!(p <= last && p > 0.0);
            last = p;
        }
    }

    /// The shadowing keeps its standard deviation and decorrelates over
    /// its distance: about exp(-1) = 0.37 correlation one decorrelation
    /// distance apart, about 1 a metre apart.
    #[test]
    fn shadowing_has_its_spread_and_its_correlation() {
        let corr = |step_m: f64| {
            let mut s = ShadowFading::new(6.0, 50.0, RngStream::new(1, "sf"));
            let xs: Vec<f64> = (0..40_000).map(|_| s.step(step_m)).collect();
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
            let cov = xs
                .windows(2)
                .map(|w| (w[0] - mean) * (w[1] - mean))
                .sum::<f64>()
                / (n - 1.0);
            (var.sqrt(), cov / var)
        };
        let (sd, r) = corr(50.0);
        assert!((sd - 6.0).abs() < 0.15, "sd {sd}");
        assert!((r - (-1.0f64).exp()).abs() < 0.03, "rho {r}");
        let (_, r) = corr(1.0);
        assert!((r - (-1.0f64 / 50.0).exp()).abs() < 0.01, "rho {r}");
    }

    #[test]
    fn geometry_outside_the_table_is_refused() {
        let ok = Link {
            d2d_m: 100.0,
            h_bs_m: 25.0,
            h_ut_m: 1.5,
            fc_ghz: 3.5,
        };
        assert!(ok.check().is_ok());
        let err = |l: Link| l.check().expect_err("refused").to_string();
        assert!(err(Link { fc_ghz: 0.1, ..ok }).starts_with("fc_ghz = 0.1: 0.5 to 100 GHz"));
        assert!(err(Link {
            d2d_m: 6000.0,
            ..ok
        })
        .starts_with("d2d_m = 6000"));
        assert!(err(Link { h_bs_m: 1.0, ..ok }).starts_with("h_bs_m = 1: above the UE"));
    }
}
