//! Arbitrary bytes as one E2AP PDU: the decoder never panics and re-
//! encoding is stable. The body is `tcran_e2::fuzzing::e2ap_decode` (also
//! run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::e2ap_decode(data);
});
