//! The integration tests of tcran-traffic, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-traffic --test integration NAME::`.

mod cc_models;
mod common;
mod schema;
mod sources;
mod tcp_engine;
