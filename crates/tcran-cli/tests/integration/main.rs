//! The integration tests of tcran-cli, one test binary (one link) for all:
//! each module is one former `tests/NAME.rs`; run one with
//! `cargo test -p tcran-cli --test integration NAME::`.

/// Debian's headless Chromium (the report and dashboard tests).
#[path = "support/chromium.rs"]
mod chromium;

mod cli;
mod dashboard_browser;
mod fidelity;
mod flexric_matrix;
mod limits;
mod report_browser;
mod seeds;
mod uplink;
mod xapp;
