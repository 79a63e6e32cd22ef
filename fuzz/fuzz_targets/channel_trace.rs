//! Arbitrary bytes as a capacity trace file, through every trace reader and
//! the format detector: no panic, and a trace that parses counts its bytes
//! consistently. The body is `tcran_fuzz::channel_trace::fuzz_channel_trace`
//! (also run by `cargo test -p tcran-ran --test integration fuzz_trace::`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcran_fuzz::channel_trace::fuzz_channel_trace(data);
});
