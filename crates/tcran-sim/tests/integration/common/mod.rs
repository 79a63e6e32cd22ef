//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)] // each test file uses its own part

use std::path::Path;
use tcran_sim::{RunOutput, RunSummary, Sim, SimConfig};

/// Runs a scenario given as TOML text (trace paths relative to the crate).
pub fn run_output(toml_text: &str) -> RunOutput {
    let cfg: SimConfig = toml::from_str(toml_text).expect("scenario parses");
    Sim::new(&cfg, Path::new("."))
        .expect("scenario builds")
        .run()
}

/// [`run_output`]'s summary.
pub fn run(toml_text: &str) -> RunSummary {
    run_output(toml_text).summary
}
