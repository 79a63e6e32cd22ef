//! # tcran-sim: the deterministic downlink simulator
//!
//! A discrete-event model of one cell's downlink with the TC pipeline in the
//! loop: servers run the sans-IO transports of `tcran-traffic`, packets
//! cross a core network delay to the gNB, where SDAP maps them to DRBs, each
//! DRB's TC pipeline (`tcran-tc`) feeds its RLC entity, and a per-slot MAC
//! (`tcran-ran`) schedules them over a modelled channel to the UE, whose
//! ACKs, echo replies and RLC status PDUs return through the uplink.
//!
//! - [`scenario`]: what to simulate (serde).
//! - [`engine`]: the event loop.
//! - [`report`]: what a run reports.
//! - [`event`], [`metrics`]: the deterministic event queue and exact
//!   percentiles.

pub mod engine;
pub mod event;
pub mod metrics;
pub mod report;
pub mod scenario;

pub use engine::Sim;
pub use report::{RunSummary, ScenarioSummary, VariantSummary};
pub use scenario::SimConfig;

use std::path::Path;
use tcran_core::ConfigError;

/// Builds every variant first (so a bad variant fails before anything
/// runs), then runs them in order. `base` resolves relative trace paths.
pub fn run_scenario(
    name: &str,
    cfg: &SimConfig,
    base: &Path,
) -> Result<ScenarioSummary, ConfigError> {
    let mut sims = Vec::new();
    for (i, (variant, c)) in cfg.runs().into_iter().enumerate() {
        let at = |e: ConfigError| {
            if cfg.variants.is_empty() {
                e
            } else {
                e.within(format!("variants[{i}]"))
            }
        };
        sims.push((variant, Sim::new(&c, base).map_err(at)?));
    }
    let variants = sims
        .into_iter()
        .map(|(name, sim)| VariantSummary {
            name,
            run: sim.run(),
        })
        .collect();
    Ok(ScenarioSummary {
        scenario: name.to_string(),
        seed: cfg.seed,
        sim_s: cfg.duration.as_secs_f64(),
        wall_s: 0.0,
        variants,
    })
}
