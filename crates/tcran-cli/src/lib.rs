//! The library behind the `tcran` command: loading configuration files
//! with one-line errors, `--set` overrides, running scenarios, and writing
//! what they produced (summary JSON, CSV time series, `report.html`). The
//! binary (`src/main.rs`) is the command-line parsing around it.

pub mod dashboard;
pub mod emulate;
pub mod error;
pub mod load;
pub mod outdir;
pub mod output;
pub mod progress;
pub mod realtime;
pub mod report;
pub mod reproduce;
pub mod schema;
pub mod series_csv;
pub mod set;
pub mod simulate;
pub mod stages;
pub mod sweep;
pub mod trace;
pub mod validate;
pub mod xapp;
