//! Shared bodies of the fuzz targets that cannot live in the crate they
//! test without changing its manifest. `pipeline_config.rs` is also compiled
//! into `crates/tcran-tc/tests/fuzz_config.rs` (via `#[path]`), so stable
//! `cargo test` runs it.

pub mod pipeline_config;
