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
pub use report::RunSummary;
pub use scenario::SimConfig;
