//! The integration tests of tcran-sim, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-sim --test integration NAME::`.

mod common;
mod conservation;
mod controllers;
mod docs;
mod engine;
mod flows;
mod fuzz_scenario;
mod geometry;
mod handover;
mod handover_guard;
mod layers;
mod live;
mod pacer_comparison;
mod pdcp;
mod period;
mod reproduction;
mod series;
mod upf;
mod uplink;
