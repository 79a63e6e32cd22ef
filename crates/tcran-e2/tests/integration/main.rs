//! The integration tests of tcran-e2, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-e2 --test integration NAME::`.

mod agent;
mod all_sms;
mod common;
mod e2e;
mod flexric_tc;
mod framed;
mod fuzz_e2;
mod gnb;
mod golden;
mod kpm;
mod large;
mod procedures;
mod rc;
mod report_stream;
mod roundtrip;
mod uplink;
