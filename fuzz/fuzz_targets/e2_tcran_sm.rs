//! Arbitrary bytes as every E2SM-TCRAN message, a subscription and a
//! control on a real pipeline: no panic, stable re-encoding, the pipeline
//! stays valid. The body is `tcran_e2::fuzzing::tcran_sm` (also run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::tcran_sm(data);
});
