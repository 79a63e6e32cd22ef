//! # tcran-sim: the deterministic simulation engine
//!
//! Building blocks of the downlink simulator: the event queue that orders
//! everything by `(time, sequence)` so equal-time events always run in the
//! order they were scheduled (ARCHITECTURE.md principle 5), and the metrics
//! that summarise a run.

pub mod event;
pub mod metrics;
