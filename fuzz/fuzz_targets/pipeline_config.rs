//! Arbitrary bytes as a pipeline configuration (TOML and JSON): parsing and
//! `build()` never panic, and a pipeline that builds survives packets,
//! reports and pulls with conservation intact. The body is
//! `tcran_fuzz::pipeline_config::fuzz_pipeline_config` (also run by
//! `cargo test -p tcran-tc --test integration fuzz_config::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_fuzz::pipeline_config::fuzz_pipeline_config(data);
});
