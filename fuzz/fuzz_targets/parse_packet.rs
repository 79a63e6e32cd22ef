//! Arbitrary bytes as a live packet, with and without the SDAP header:
//! parsing never panics, `packet_from_bytes` agrees with `parse`, and
//! marking CE keeps a parsed packet parseable with CE and a valid IPv4
//! checksum. The body is `tcran_wire::fuzz_parse` (also run by `cargo test`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_wire::fuzz_parse(data);
});
