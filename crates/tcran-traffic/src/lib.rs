//! # tcran-traffic
//!
//! Traffic sources and transport endpoints as sans-IO state machines
//! (ARCHITECTURE.md principle 1): no clock, no I/O, no global RNG. Every
//! endpoint is driven with the same small vocabulary:
//!
//! - `on_packet(&pkt, now)` hands it a packet that arrived,
//! - `poll_transmit(now)` / `poll(now)` returns the next packet it wants to
//!   send *now* (call until `None`),
//! - `next_wakeup()` / `next_send()` says when it next needs to run, and
//! - `on_timer(now)` runs its timers (RTO, delayed ACK, pacing).
//!
//! Modules:
//! - [`tcp`]: one TCP engine (RFC 6298 RTO, RFC 6928 IW, RFC 6675 SACK loss
//!   recovery with RFC 6582 partial-ACK handling, delayed ACKs, ECN, pacing,
//!   delivery-rate sampling) and its receiver.
//! - [`cc`]: the pluggable congestion controls (NewReno, CUBIC, BBR v1,
//!   DCTCP, Prague) behind [`cc::CongestionControl`].
//! - [`sources`]: UDP/ICMP sources (CBR, VoIP G.711, online gaming, video
//!   frames, ping) and request-driven TCP downloads (web pages, FTP files).
//! - [`flow`]: how a flow stamps its packets (flow id, 5-tuple, DSCP, ECN).
//! - [`dist`]: the few random distributions the sources need, drawn from a
//!   per-flow [`tcran_core::rng::RngStream`].
//!
//! ## Packet ids
//!
//! Every packet leaves an endpoint with `id == PacketId(0)`. The engine that
//! owns the event loop stamps the run-wide monotonically increasing id when it
//! accepts the packet (it is the only place that sees packets from all flows
//! in order, so it is the only place that can number them deterministically).

pub mod cc;
pub mod dist;
pub mod flow;
pub mod sources;
pub mod tcp;

pub use cc::{AnyCongestionControl, CcKind, CongestionControl};
pub use flow::FlowSpec;
pub use tcp::{TcpConfig, TcpParams, TcpReceiver, TcpSender, TcpStats};
