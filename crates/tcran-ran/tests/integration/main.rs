//! The integration tests of tcran-ran, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-ran --test integration NAME::`.

mod common;
mod fuzz_trace;
mod l2_stack;
mod mac;
mod oracle_copies;
mod rlc;
mod rlc_aqm;
mod schema;
mod sdap;
mod tables_match_shared;
mod tbs_vectors;
mod traces;
