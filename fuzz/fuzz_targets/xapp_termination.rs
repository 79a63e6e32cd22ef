//! Arbitrary frames from a node to the xApp SDK's E2 termination after E2
//! Setup, with requests outstanding: no panic, every PDU it sends is valid
//! E2AP, nothing is sent once closed. The body is
//! `tcran_xapp::fuzzing::termination` (also run by
//! `cargo test -p tcran-xapp --test integration fuzz_xapp::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_xapp::fuzzing::termination(data);
});
