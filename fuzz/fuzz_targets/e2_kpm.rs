//! Arbitrary bytes as every E2SM-KPM message and as a subscription: no
//! panic, stable re-encoding. The body is `tcran_e2::fuzzing::kpm` (also
//! run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::kpm(data);
});
