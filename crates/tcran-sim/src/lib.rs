//! # tcran-sim: the deterministic downlink simulator
//!
//! A discrete-event model of one cell's downlink with the TC pipeline in the
//! loop: servers run the sans-IO transports of `tcran-traffic`, packets
//! cross a core network delay to the RAN node (`tcran_gnb::Gnb`: SDAP maps
//! them to DRBs, each DRB's TC pipeline feeds its RLC entity, a per-slot
//! MAC schedules them over a modelled channel to the UE), whose ACKs, echo
//! replies and RLC status PDUs return through the node's uplink. The node
//! is driven through its public API on a virtual clock, exactly as the
//! other front ends drive it.
//!
//! - [`scenario`]: what to simulate (serde).
//! - [`engine`]: the event loop.
//! - [`report`]: what a run reports.
//! - [`series`]: what a run records over time (plots, CSV).
//! - [`controller`]: scheduled reconfiguration events and closed-loop
//!   controllers (xApps).
//! - [`event`], [`metrics`]: the deterministic event queue and exact
//!   percentiles.

pub mod controller;
pub mod engine;
/// The deterministic event queue, now in `tcran-core`.
pub use tcran_core::event;
pub mod metrics;
mod recorder;
pub mod report;
pub mod scenario;
pub mod series;

pub use engine::{LiveOutput, Sim};
pub use report::{
    FlowSummary, InFlight, PacketCounts, RunSummary, ScenarioSummary, VariantSummary,
};
pub use scenario::SimConfig;
pub use series::RunSeries;

use std::path::Path;
use tcran_core::ConfigError;

/// What one run produced: the summary and the time series.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub summary: RunSummary,
    pub series: RunSeries,
}

/// What a whole scenario produced: the summary JSON and, per variant in the
/// same order, its time series.
#[derive(Debug, Clone)]
pub struct ScenarioOutput {
    pub summary: ScenarioSummary,
    pub series: Vec<RunSeries>,
}

/// Where a scenario run is, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Index of the running variant, and how many there are.
    pub variant: usize,
    pub variants: usize,
    /// Simulated seconds done in this variant, and its duration.
    pub sim_s: f64,
    pub duration_s: f64,
}

/// Builds every variant first (so a bad variant fails before anything
/// runs), then runs them in order. `base` resolves relative trace paths.
pub fn run_scenario(
    name: &str,
    cfg: &SimConfig,
    base: &Path,
) -> Result<ScenarioOutput, ConfigError> {
    run_scenario_with_progress(name, cfg, base, &mut |_| {})
}

/// Builds the simulator of every run a scenario asks for (its variants, or
/// itself once), checking everything without running anything: what
/// `tcran validate` does, and the first step of [`run_scenario`].
///
/// The scenario as written is built first, so a mistake in it is reported
/// with its own path (`ues[0].channel.path`); only then is each variant
/// built, and a mistake that only a variant makes is reported under
/// `variants[i].` (`variants[1].ues[0].drbs[0].pipeline.pacer.offset`).
/// Building the scenario as written also checks the parts that every
/// variant replaces (e.g. the DRB pipelines): a wrong value is a mistake
/// even where a variant overrides it.
pub fn build_scenario(cfg: &SimConfig, base: &Path) -> Result<Vec<(String, Sim)>, ConfigError> {
    if cfg.variants.is_empty() {
        return Ok(vec![("default".to_string(), Sim::new(cfg, base)?)]);
    }
    Sim::new(cfg, base)?;
    // Variants are told apart by name (in the table, the report, the CSV
    // folders): two with one name would silently share them.
    for (i, v) in cfg.variants.iter().enumerate() {
        if let Some(j) = cfg.variants[..i].iter().position(|w| w.name == v.name) {
            return Err(ConfigError::new(
                format!("variants[{i}].name"),
                format!("{:?}", v.name),
                format!("must be unique: variants[{j}] has the same name"),
            ));
        }
    }
    cfg.variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let sim = Sim::new(&cfg.for_variant(v), base)
                .map_err(|e| e.within(format!("variants[{i}]")))?;
            Ok((v.name.clone(), sim))
        })
        .collect()
}

/// [`run_scenario`], calling `progress` as simulated time advances (about
/// every simulated second) and once at the end of each variant.
pub fn run_scenario_with_progress(
    name: &str,
    cfg: &SimConfig,
    base: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<ScenarioOutput, ConfigError> {
    let sims = build_scenario(cfg, base)?;
    let n = sims.len();
    let duration_s = cfg.duration.as_secs_f64();
    let mut variants = Vec::with_capacity(n);
    let mut series = Vec::with_capacity(n);
    for (i, (name, sim)) in sims.into_iter().enumerate() {
        let out = sim.run_with_progress(&mut |sim_s| {
            progress(Progress {
                variant: i,
                variants: n,
                sim_s,
                duration_s,
            })
        });
        variants.push(VariantSummary {
            name,
            run: out.summary,
        });
        series.push(out.series);
    }
    Ok(ScenarioOutput {
        summary: ScenarioSummary {
            scenario: name.to_string(),
            seed: cfg.seed,
            sim_s: duration_s,
            wall_s: 0.0,
            variants,
        },
        series,
    })
}
