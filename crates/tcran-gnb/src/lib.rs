//! # tcran-gnb: the RAN node of one cell, as one sans-IO component
//!
//! Everything between the core network and the UEs' IP layer for one cell,
//! in one value ([`Gnb`]) that any front end drives with its own clock:
//!
//! ```text
//!  downlink(packet, now) --> UPF queue (optional, e.g. USP) --> SDAP (QFI -> DRB)
//!        --> TC pipeline per DRB --> PDCP --> RLC UM/AM tx --> MAC/HARQ per slot
//!        --> channel --> UE: RLC rx (reassembly) --> PDCP rx (reordering) --> Output::Delivered
//!  uplink(rnti, packet, now) --> SR/grant model --> Output::Uplink (to the core)
//!        UE RLC STATUS PDUs --> uplink --> RLC tx (inside the node)
//! ```
//!
//! This is the way to embed tcran's RAN: the simulator (`tcran-sim`, a
//! virtual clock and modelled TCP/UDP endpoints), the live emulator (the
//! wall clock and real Linux packets) and the E2 agent (through the
//! [`tcran_control::RanNode`] the node implements) all drive this same
//! code; only the clock and the I/O differ. (The C ABI and Python embed a single TC
//! pipeline, not the node.)
//!
//! ## Contract (quinn-proto shaped)
//!
//! - **Inputs** carry the time: [`Gnb::downlink`] (a packet from the core
//!   network, routed to its UE by destination address), [`Gnb::uplink`] (a
//!   packet a UE's IP layer sends), [`Gnb::apply`] (a reconfiguration of a
//!   DRB's pipeline). The node never reads a clock and never does I/O.
//! - **Timers:** [`Gnb::next_wakeup`] says when the node next needs to run
//!   (the next slot, a pacer release, an RLC timer, a transport block
//!   reaching a UE, an uplink grant); [`Gnb::on_timeout`] runs everything
//!   due by `now`. [`Gnb::step`] runs one due event at a time, for drivers
//!   that interleave their own events at the same instant (the simulator).
//! - **Outputs** are polled ([`Gnb::poll_output`]) after every call:
//!   packets delivered to a UE's IP layer, packets sent up to the core,
//!   every drop with its layer and reason, CE marks, one record per slot.
//!   Nothing leaves the data path unreported: at any time, every downlink
//!   packet handed in is delivered, dropped (with a reason) or in flight
//!   where [`Gnb::for_each_in_flight`] finds it.
//! - **Order:** events run in `(time, scheduling order)`. An input given at
//!   time `t` first runs the node's events due *before* `t`, then takes
//!   effect, before the node's own events due *at* `t`: a packet arriving
//!   at a slot boundary makes that slot.
//! - **Late wake-ups** (a wall clock with irregular gaps): the node runs
//!   every missed event at its own time, in order: the slots it missed are
//!   scheduled as they would have been (same capacity, same HARQ draws),
//!   and what they deliver carries the time it should have arrived
//!   (`Output::Delivered::at`), so a late front end writes it at once.
//!   Nothing is skipped; [`Gnb::timing`] counts the events run late and by
//!   how much, so a front end can tell whether it kept up.
//! - **Determinism:** the same inputs at the same times give the same
//!   outputs, whatever the clock: a virtual clock 500 times faster than
//!   real time and the wall clock run the same code.
//!
//! ## Control surface
//!
//! What an xApp needs, per (RNTI, DRB): [`Gnb::drb`] reads the pipeline
//! configuration and statistics, the RLC buffer, the last TTI's report
//! (grant, bytes pulled, backlog), the channel, and cumulative counters
//! with their TS 28.552 names ([`counters`]); [`Gnb::apply`] applies a
//! [`tcran_tc::Change`] (one control, several, or a whole pipeline
//! deployed) all or nothing, refused with the pipeline's typed
//! [`tcran_tc::Refused`] (a refused change changes nothing). The same
//! surface as the [`tcran_control::RanNode`] every E2 service model, xApp
//! and the emulator speak is in `ran_node`.
//!
//! ## Modules
//!
//! - [`config`]: what the node is made of (serde).
//! - [`node`]: the [`Gnb`] and its public API.
//! - `control`: reconfiguration ([`Gnb::apply`] of a [`tcran_tc::Change`]).
//! - `ran_node`: the node as a [`tcran_control::RanNode`] (views, KPM
//!   counters, apply).
//! - [`counters`]: cumulative counters and the TS 28.552 measurements.
//! - `drb`: one bearer (its TC pipeline, RLC transmitter, the UE's RLC
//!   and PDCP receivers, and the glue between them); the node's per-UE
//!   and per-cell code delegates each bearer's work to it and arms the
//!   timers it asks for.
//! - the data path: `downlink` (UPF, SDAP, TC egress), `slot` (MAC, HARQ,
//!   per-TTI reports), `ue` (UE-side RLC/PDCP), `uplink` (SR/grant model),
//!   `ledger` (where in-flight packets are).
//! - [`handover`]: a UE leaves one node and joins another with its
//!   forwarded data (TS 38.300 §9.2.3).
//! - [`ue_uplink`]: one UE's uplink DRBs as data (SDAP, a TC pipeline per
//!   DRB, RLC with the UE's buffer limit, the UE's MAC: BSR, SR, LCP) and
//!   the gNB's receivers for them, driven by the gNB's uplink scheduler
//!   (`tcran_ran::mac::ul`); `uplink_drbs` runs them and the scheduler
//!   every slot for the UEs that declare uplink DRBs (the others keep the
//!   SR/grant delay model above).

pub mod config;
mod control;
pub mod counters;
mod downlink;
mod drb;
pub mod handover;
mod ledger;
pub mod node;
mod ran_node;
mod slot;
mod ue;
pub mod ue_uplink;
mod uplink;
mod uplink_control;
mod uplink_drbs;

pub use config::{
    builtin_trace, load_trace, load_trace_as, ChannelConfig, ChannelContext, DrbConfig, GnbConfig,
    LosName, TraceFormatName, TraceStart, UeConfig, UpfConfig, UplinkConfig, BUILTIN_TRACES,
};
pub use counters::{CellCounters, CellKpis, DrbCounters, DrbKpis, Timing};
pub use handover::{HandoverCounts, TcForwarding, UeContext};
pub use ledger::Place;
pub use node::{ue_address, ue_rnti, DrbRef, Gnb, Layer, Output, SlotRecord, TtiRecord};
pub use ran_node::{drb_kpm, lower_layer_kpis};
