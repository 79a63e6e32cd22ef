//! Arbitrary bytes as FlexRIC MAC, RLC, PDCP and GTP PLAIN messages (first
//! byte: which), event triggers and controls: no panic, exact
//! re-encoding, tcran's own indications decode, controls change nothing.
//! The body is `tcran_e2::fuzzing::flexric_stats` (also run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::flexric_stats(data);
});
