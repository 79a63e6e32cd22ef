//! The integration tests of tcran-tc, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-tc --test integration NAME::`.

mod change;
mod common;
mod config_errors;
mod control;
mod docs;
mod fuzz_config;
mod marks;
mod pipeline_properties;
mod plugin;
