//! Arbitrary bytes as FlexRIC TC PLAIN indications (48- and 40-byte
//! filters) and controls: no panic, stable re-encoding, and a decoded
//! control applied to a real pipeline leaves it valid. The body is
//! `tcran_e2::fuzzing::flexric_tc` (also run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::flexric_tc(data);
});
