//! # tcran-capi: tcran for C and C++ gNB stacks
//!
//! `libtcran.so` / `libtcran.a` and `include/tcran.h` (generated from this
//! crate by cbindgen). A gNB that owns its threads and its clock creates
//! one instance (`tcran_t`) per UE data radio bearer (RNTI, DRB) from a
//! pipeline config, pushes packets from SDAP, pulls them towards PDCP when
//! its egress timer fires, and feeds the per-TTI RLC report back, as the
//! TC-RAN prototype does inside OpenAirInterface (paper sec. IV-C).
//! docs/c-api.md is the user's guide.
//!
//! Contract:
//! - Ownership: `tcran_push` copies the packet (the caller's buffer is its
//!   own again when the call returns). A pulled packet is copied into the
//!   caller's buffer, or lent to the egress callback for its duration.
//!   Instances and plug-in registries are freed by their `_free` function.
//! - Errors: every entry point returns a `tcran_status`; errors come with a
//!   one-line message from `tcran_last_error()`. NULL pointers, zero or
//!   oversized lengths, unknown flags, bad configs and garbage packets are
//!   errors or counted outcomes, never a crash. No panic unwinds into C:
//!   every entry point catches it (`TCRAN_ERR_INTERNAL`).
//! - Threading: see [`instance`] (a mutex per instance; reentry refused).
//! - Drops are never silent: counted by reason in the statistics, and
//!   reported one by one to the drop callback if set.
//! - Plug-in stages: C ops tables, see [`plugin`].
//! - E2: an E2 node on its own thread serving the caller's instances to a
//!   RIC, see [`e2`].
//!
//! The Rust side is safe code except the `ffi` and `plugin` modules, which
//! allow `unsafe` for raw pointers and C function calls.

pub mod e2;
pub mod error;
mod ffi;
pub mod instance;
pub mod plugin;
pub mod types;

pub use ffi::*;
pub use instance::Instance;
