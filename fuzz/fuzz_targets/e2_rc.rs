//! Arbitrary bytes as E2SM-RC event triggers, action definitions,
//! indications, controls, outcomes and RAN function definitions, and as a
//! subscription and a control of tcran's RC model: no panic. The body is
//! `tcran_e2::fuzzing::rc` (also run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::rc(data);
});
