//! Arbitrary bytes as a scenario file: parsing, building every variant and
//! a short run of each never panic, and what runs reports a coherent
//! summary with every packet accounted for. The body is
//! `tcran_fuzz::scenario_config::fuzz_scenario_config` (also run by
//! `cargo test -p tcran-sim --test integration fuzz_scenario::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _runs = tcran_fuzz::scenario_config::fuzz_scenario_config(data);
});
