//! The integration tests of tcran-wire, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-wire --test integration NAME::`.

mod common;
mod fuzz_parse;
mod parse;
mod roundtrip;
mod set_ce;
