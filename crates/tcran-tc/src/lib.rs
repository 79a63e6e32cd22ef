//! # tcran-tc: the TC-RAN traffic-control pipeline
//!
//! One [`Pipeline`] per UE data radio bearer, between SDAP and PDCP
//! (paper-tc-ran.txt sec. III-A), with six stages:
//!
//! ```text
//!  push(pkt, now)                                   pull(now) -> Option<pkt>
//!    classifier -> policer -> queue ... queue -> scheduler -> shaper -> pacer --> PDCP/RLC
//!                                                                        ^  RLC/MAC report per TTI
//! ```
//!
//! Each stage kind is a trait in [`stage`]; built-in implementations are
//! variants of an `Any*` enum (static dispatch) with a `Custom` plug-in
//! variant. Configuration is kind-tagged serde ([`config`]); a run-time
//! change is a [`Change`] (one [`Control`], several all or nothing, or a
//! whole pipeline deployed), applied all or nothing by
//! [`Pipeline::apply_change`] or refused with a typed [`Refused`]
//! ([`change`]); statistics are [`stats`] snapshots.
//! `kind = "plugin"` stages are resolved by the embedding application
//! ([`plugin`]).

pub mod change;
pub mod classify;
pub mod config;
pub mod control;
pub mod mark;
pub mod pacer;
pub mod pipeline;
pub mod plugin;
pub mod policer;
pub mod queue;
pub mod sched;
pub mod shaper;
pub mod stage;
pub mod stats;
pub mod workload;

pub use change::{Applied, Change, Refused};
pub use config::{PipelineConfig, QueueConfig};
pub use control::Control;
pub use pipeline::{Pipeline, PushOutcome};
pub use stage::{LowerLayerReport, LowerState};
