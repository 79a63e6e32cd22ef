//! Arbitrary bytes as FlexRIC SLICE PLAIN indications and controls: no
//! panic, no allocation from a count alone, exact re-encoding. The body is
//! `tcran_e2::fuzzing::flexric_slice` (also run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::flexric_slice(data);
});
