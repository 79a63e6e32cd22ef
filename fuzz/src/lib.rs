//! Shared bodies of the fuzz targets that cannot live in the crate they
//! test without changing its manifest. `pipeline_config.rs` is also compiled
//! into `crates/tcran-tc/tests/integration/fuzz_config.rs` and `channel_trace.rs` into
//! `crates/tcran-ran/tests/integration/fuzz_trace.rs`, `scenario_config.rs` into
//! `crates/tcran-sim/tests/integration/fuzz_scenario.rs` (via `#[path]`), so stable
//! `cargo test` runs them.

pub mod channel_trace;
pub mod pipeline_config;
pub mod scenario_config;
