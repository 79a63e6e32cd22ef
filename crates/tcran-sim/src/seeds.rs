//! One experiment, several seeds: the seed lists of `seeds = ...` and
//! `tcran run --seeds`, and each metric's mean with its 95 % confidence
//! interval across seeds.
//!
//! The interval is Student's t interval for the mean of independent runs:
//! `mean ± t(0.975, n - 1) · s / √n`, with `s` the sample standard
//! deviation (divisor `n - 1`) of the `n` per-seed values and `t` the
//! 0.975 quantile of Student's t distribution with `n - 1` degrees of
//! freedom (`statrs`). Each seed seeds every random stream of a run, so
//! the runs of different seeds are independent samples of the scenario;
//! the interval assumes the metric is roughly normal across seeds, as
//! means of many packets are.

use crate::report::{RunSummary, VariantSummary};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Most seeds one experiment runs.
pub const MAX_SEEDS: usize = 1000;

/// The seeds of an experiment, in order, at least 2 and distinct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeds(Vec<u64>);

impl Seeds {
    /// `a..b` or `a..=b` (both ends included: `1..10` is ten seeds), or a
    /// comma-separated list (`1,5,9`).
    pub fn parse(s: &str) -> Result<Seeds, String> {
        let s = s.trim();
        let num = |t: &str| {
            t.trim().parse::<u64>().map_err(|_| {
                format!(
                    "{t:?} is not a seed (a whole number from 0 to {})",
                    u64::MAX
                )
            })
        };
        if let Some((a, b)) = s.split_once("..") {
            let (a, b) = (num(a)?, num(b.strip_prefix('=').unwrap_or(b))?);
            if b < a {
                return Err(format!("{s:?}: the range ends before it starts"));
            }
            if b - a >= MAX_SEEDS as u64 {
                return Err(format!(
                    "{s:?} is {} seeds: at most {MAX_SEEDS}",
                    u128::from(b - a) + 1
                ));
            }
            return Seeds::new((a..=b).collect());
        }
        Seeds::new(s.split(',').map(num).collect::<Result<_, _>>()?)
    }

    /// A list of seeds: 2 to [`MAX_SEEDS`], no seed twice.
    pub fn new(seeds: Vec<u64>) -> Result<Seeds, String> {
        if seeds.len() < 2 {
            return Err(format!(
                "{} seed(s): a confidence interval needs at least 2 (one run: use `seed`)",
                seeds.len()
            ));
        }
        if seeds.len() > MAX_SEEDS {
            return Err(format!("{} seeds: at most {MAX_SEEDS}", seeds.len()));
        }
        let mut sorted = seeds.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("seed {} is listed twice", w[0]));
        }
        Ok(Seeds(seeds))
    }

    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }
}

impl Serialize for Seeds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Seeds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Seeds, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            List(Vec<u64>),
        }
        let form = Form::deserialize(d).map_err(|_| {
            <D::Error as serde::de::Error>::custom(
                "seeds: expected a range such as \"1..10\" (ten seeds, both ends included) or a list of whole numbers such as [1, 5, 9]",
            )
        })?;
        match form {
            Form::Text(t) => Seeds::parse(&t),
            Form::List(l) => Seeds::new(l),
        }
        .map_err(|e| <D::Error as serde::de::Error>::custom(format!("seeds: {e}")))
    }
}

/// The JSON Schema of `seeds`: a range string or a list.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // Only its schema is used.
#[serde(untagged)]
enum SeedsSchema {
    /// `a..b` or `a..=b`, both ends included, or `a,b,c`.
    Text(String),
    /// 2 to 1000 distinct seeds.
    List(Vec<u64>),
}

impl schemars::JsonSchema for Seeds {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Seeds".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <SeedsSchema as schemars::JsonSchema>::json_schema(g)
    }
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of
/// freedom (`df` >= 1).
pub fn t975(df: u64) -> f64 {
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("df >= 1 is a valid Student's t")
        .inverse_cdf(0.975)
}

/// A metric across seeds: mean, sample standard deviation and the 95 %
/// Student t confidence interval of the mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Seeds (runs) the values come from.
    pub n: u64,
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1).
    pub sd: f64,
    /// `t(0.975, n - 1) · sd / √n`.
    pub half_width: f64,
    /// `mean - half_width`, `mean + half_width`.
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// From the per-seed values (at least 2).
    pub fn of(values: &[f64]) -> Interval {
        let n = values.len();
        assert!(n >= 2, "an interval needs two values");
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Interval::from_moments(n as u64, mean, var.sqrt())
    }

    /// From the count, mean and sample standard deviation.
    pub fn from_moments(n: u64, mean: f64, sd: f64) -> Interval {
        let half_width = t975(n - 1) * sd / (n as f64).sqrt();
        Interval {
            n,
            mean,
            sd,
            half_width,
            low: mean - half_width,
            high: mean + half_width,
        }
    }
}

/// One variant's metrics across seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantStats {
    pub name: String,
    pub prb_utilization: Interval,
    pub capacity_utilization: Interval,
    pub rlc_mean_bytes: Interval,
    pub flows: Vec<FlowStats>,
}

/// One flow's metrics across seeds (delays in ms).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowStats {
    pub name: String,
    pub throughput_mbps: Interval,
    pub delay_mean_ms: Interval,
    pub delay_p50_ms: Interval,
    pub delay_p95_ms: Interval,
    pub delay_p99_ms: Interval,
    /// Ping flows: the round-trip time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_mean_ms: Option<Interval>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_p95_ms: Option<Interval>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_p99_ms: Option<Interval>,
    pub lost_packets: Interval,
}

/// The runs of one seed, every variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedRuns {
    pub seed: u64,
    pub variants: Vec<VariantSummary>,
}

/// Each variant's metrics across the seeds of `runs` (every seed ran the
/// same variants with the same flows, in the same order).
pub fn across_seeds(runs: &[SeedRuns]) -> Vec<VariantStats> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .variants
        .iter()
        .enumerate()
        .map(|(vi, v)| {
            let of = |f: &dyn Fn(&RunSummary) -> f64| {
                let xs: Vec<f64> = runs.iter().map(|r| f(&r.variants[vi].run)).collect();
                Interval::of(&xs)
            };
            let flows = v
                .run
                .flows
                .iter()
                .enumerate()
                .map(|(fi, fl)| {
                    let flow = |r: &RunSummary| r.flows[fi].clone();
                    let is_ping = fl.rtt_ms.is_some();
                    FlowStats {
                        name: fl.name.clone(),
                        throughput_mbps: of(&|r| flow(r).throughput_mbps),
                        delay_mean_ms: of(&|r| flow(r).delay_ms.mean),
                        delay_p50_ms: of(&|r| flow(r).delay_ms.p50),
                        delay_p95_ms: of(&|r| flow(r).delay_ms.p95),
                        delay_p99_ms: of(&|r| flow(r).delay_ms.p99),
                        rtt_mean_ms: is_ping
                            .then(|| of(&|r| flow(r).rtt_ms.unwrap_or_default().mean)),
                        rtt_p95_ms: is_ping
                            .then(|| of(&|r| flow(r).rtt_ms.unwrap_or_default().p95)),
                        rtt_p99_ms: is_ping
                            .then(|| of(&|r| flow(r).rtt_ms.unwrap_or_default().p99)),
                        lost_packets: of(&|r| flow(r).lost_packets as f64),
                    }
                })
                .collect();
            VariantStats {
                name: v.name.clone(),
                prb_utilization: of(&|r| r.prb_utilization),
                capacity_utilization: of(&|r| r.capacity_utilization),
                rlc_mean_bytes: of(&|r| r.rlc.mean_bytes),
                flows,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two-sided 95 % critical values of Student's t from a printed table
    /// (NIST/SEMATECH e-Handbook of Statistical Methods, sec. 1.3.6.7.2,
    /// "Critical Values of the Student's t Distribution", column 0.975),
    /// to the table's three decimals.
    #[test]
    fn t_quantiles_match_the_printed_table() {
        for (df, table) in [
            (1, 12.706),
            (2, 4.303),
            (4, 2.776),
            (9, 2.262),
            (19, 2.093),
            (29, 2.045),
            (100, 1.984),
        ] {
            let t = t975(df);
            assert!((t - table).abs() < 5e-4, "df {df}: {t} vs {table}");
        }
    }

    /// NIST/SEMATECH e-Handbook sec. 1.3.5.2 "Confidence Limits for the
    /// Mean", worked example (ZARR13.DAT): N = 195, mean 9.261460, standard
    /// deviation 0.022789, 95 % interval 9.258242 to 9.264679.
    #[test]
    fn the_interval_matches_the_handbook_example() {
        let i = Interval::from_moments(195, 9.261460, 0.022789);
        assert!((i.low - 9.258242).abs() < 2e-6, "{}", i.low);
        assert!((i.high - 9.264679).abs() < 2e-6, "{}", i.high);
    }

    /// The same quantiles from SciPy 1.17.1, computed offline:
    /// `scipy.stats.t.ppf(0.975, df)`.
    #[test]
    fn t_quantiles_match_scipy() {
        for (df, scipy) in [
            (1, 12.706204736174694),
            (4, 2.7764451051977934),
            (9, 2.262157162798205),
            (29, 2.045229642132703),
            (194, 1.9722675325821355),
        ] {
            let t = t975(df);
            assert!((t - scipy).abs() < 1e-9 * scipy, "df {df}: {t} vs {scipy}");
        }
    }

    /// Ten values whose mean and sample standard deviation are known by
    /// hand: 1..=10 has mean 5.5 and s² = 82.5 / 9. SciPy 1.17.1, offline:
    /// `scipy.stats.t.interval(0.95, df=9, loc=5.5, scale=scipy.stats.sem(x))`
    /// = (3.334149410331831, 7.665850589668169).
    #[test]
    fn the_interval_of_values_uses_the_sample_standard_deviation() {
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let i = Interval::of(&xs);
        assert_eq!(i.n, 10);
        assert_eq!(i.mean, 5.5);
        assert!((i.sd - (82.5f64 / 9.0).sqrt()).abs() < 1e-12);
        assert!((i.low - 3.334149410331831).abs() < 1e-9, "{}", i.low);
        assert!((i.high - 7.665850589668169).abs() < 1e-9, "{}", i.high);
        // Identical runs: a zero-width interval.
        let same = Interval::of(&[3.0, 3.0, 3.0]);
        assert_eq!((same.low, same.high), (3.0, 3.0));
    }

    #[test]
    fn seed_lists_parse_and_bad_ones_say_why() {
        assert_eq!(
            Seeds::parse("1..10").unwrap().as_slice(),
            (1..=10).collect::<Vec<_>>()
        );
        assert_eq!(Seeds::parse("3..=4").unwrap().as_slice(), [3, 4]);
        assert_eq!(Seeds::parse("1, 5,9").unwrap().as_slice(), [1, 5, 9]);
        for (bad, why) in [
            ("5..1", "ends before it starts"),
            ("7", "at least 2"),
            ("1..5000", "at most 1000"),
            ("1,x", "not a seed"),
            ("-1..3", "not a seed"),
            ("2,2", "listed twice"),
        ] {
            let e = Seeds::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        #[derive(Deserialize, Debug)]
        struct Doc {
            #[allow(dead_code)]
            seeds: Seeds,
        }
        assert!(toml::from_str::<Doc>("seeds = [1, 2, 3]").is_ok());
        assert!(toml::from_str::<Doc>("seeds = \"1..3\"").is_ok());
        let e = toml::from_str::<Doc>("seeds = 5").unwrap_err().to_string();
        assert!(e.contains("expected a range"), "{e}");
    }
}
