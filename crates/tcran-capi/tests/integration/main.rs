//! The integration tests of tcran-capi, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-capi --test integration NAME::`.

mod api;
mod e2;
mod header;
