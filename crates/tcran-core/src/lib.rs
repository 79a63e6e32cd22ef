//! # tcran-core
//!
//! The vocabulary every other tcran crate speaks:
//!
//! - [`time`]: virtual time as integer nanoseconds. No code in tcran reads a
//!   clock; callers pass `now` (ARCHITECTURE.md, principle 1).
//! - [`units`]: byte sizes, bit rates and durations with explicit units in
//!   configuration (`"5ms"`, `"15Mbit/s"`, `"5MB"`), never bare numbers.
//! - [`ids`]: typed identifiers (`Rnti`, `DrbId`, `Qfi`, `QueueId`, `FlowId`).
//! - [`packet`]: the packet that flows through every layer: metadata for
//!   simulation, optionally the real bytes for live use.
//! - [`reason`]: why a packet was dropped or marked. Drops and marks are values,
//!   never errors, and are always counted (principle 4).
//! - [`rng`]: one seeded RNG stream per entity, so runs are reproducible
//!   (principle 5).
//! - [`event`]: the deterministic event queue (earliest first, then in
//!   scheduling order) that the simulator and the RAN node run on.
//! - [`config`]: the error every `build()` returns for a bad value, naming the
//!   field, the value and the allowed range.
//! - [`text_file`]: reading a user's text file with a size limit and errors
//!   a user can act on.

pub mod config;
pub mod event;
pub mod ids;
pub mod packet;
pub mod reason;
pub mod rng;
pub mod text_file;
pub mod time;
pub mod units;

pub use config::ConfigError;
pub use ids::{CellId, DrbId, FlowId, Qfi, QueueId, Rnti};
pub use packet::{Dscp, Ecn, FiveTuple, LayerStamps, Packet, PacketId, Protocol, Stamp};
pub use reason::{DropReason, Dropped, MarkReason, ReasonCounts};
pub use time::{CallerClock, Duration, Instant};
pub use units::{BitRate, ByteSize};
