//! # tcran-control: the control surface of a RAN node
//!
//! Everything that watches or reconfigures a cell's traffic-control
//! pipelines speaks this crate's vocabulary, whatever carries it:
//!
//! ```text
//!   E2 service models (tcran-e2) ----+
//!   xApps over E2 (tcran-xapp) ------+--> node::RanNode --> the node: tcran_gnb::Gnb,
//!   the emulator (tcran-emu) --------+    (view, counters,     the emulator's node, a test's
//!                                    |     apply a Change)     fake node
//!   the simulator's controllers -----+--> controller::Controller (a period's view -> Commands)
//! ```
//!
//! | module | what |
//! |---|---|
//! | [`node`] | the [`RanNode`] trait a RAN node implements: its DRBs, a DRB's pipeline and lower-layer KPIs ([`TcView`]), the TS 28.552 counters ([`KpmCounters`]) and the one apply of a [`tcran_tc::Change`] |
//! | [`controller`] | closed-loop controllers (the TC-RAN paper's xApps as sans-IO code) and scheduled changes, with their scenario configuration |
//!
//! A change is tcran-tc's [`tcran_tc::Change`] and a refusal its typed
//! [`tcran_tc::Refused`]: a node built on `tcran_tc::Pipeline`s gets the
//! all-or-nothing rule from the pipeline itself
//! ([`tcran_tc::Pipeline::apply_change`]). This crate has no I/O, no
//! runtime and no RAN model: the E2 agent and the xApp SDK depend on it
//! and on nothing that simulates a cell.

pub mod controller;
pub mod node;

pub use controller::{Command, ControlView, Controller, DrbView, FlowView};
pub use node::{
    Bearer, Direction, DrbKey, HandoverCounters, HarqCounters, KpmCounters, LowerLayerKpis,
    RanNode, RlcMode, Slicing, TcView,
};
