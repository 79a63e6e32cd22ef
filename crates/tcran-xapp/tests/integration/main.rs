//! The integration tests of tcran-xapp, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-xapp --test integration NAME::`.

mod adapter;
mod docs;
mod fuzz_xapp;
mod hostile;
mod sdk;
mod support;
