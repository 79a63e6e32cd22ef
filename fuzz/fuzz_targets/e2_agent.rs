//! Arbitrary frames sent to the agent after E2 Setup, in both RIC profiles:
//! no panic, every PDU it sends is valid E2AP, the node's pipeline stays
//! valid. The body is `tcran_e2::fuzzing::agent` (also run by
//! `cargo test -p tcran-e2 --test integration fuzz_e2::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_e2::fuzzing::agent(data);
});
