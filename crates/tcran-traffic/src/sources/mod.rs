//! UDP and ICMP traffic sources, and request-driven TCP downloads (web
//! pages, FTP files).
//!
//! Every source is a state machine: [`PacketSource::next_send`] says when it
//! next has a packet, [`PacketSource::poll`] returns the packets due at
//! `now` (call until `None`). Randomness comes from the flow's own
//! [`RngStream`](tcran_core::rng::RngStream), so the same seed always gives
//! the same packet sequence.
//!
//! Header sizes assumed: IPv4 20 B, UDP 8 B, ICMP 8 B, RTP 12 B. Packet
//! sizes in the APIs are **IP packet** sizes (what the RAN must carry).

pub mod downloads;
pub mod ping;
pub mod udp;
pub mod web;

pub use downloads::{Demand, DownloadRecord, DownloadServer};
pub use ping::{PingResponder, Pinger};
pub use udp::{GamingSource, PeriodicSource, UdpSink, VideoSource};
pub use web::WebPageModel;

use tcran_core::{Instant, Packet};

/// IPv4 header bytes.
pub const IPV4_HEADER: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER: u32 = 8;
/// RTP fixed header bytes (RFC 3550 §5.1).
pub const RTP_HEADER: u32 = 12;

/// `next` unless the source stops at or before it (`stop` is exclusive).
pub(crate) fn unless_stopped(next: Instant, stop: Option<Instant>) -> Option<Instant> {
    match stop {
        Some(stop) if next >= stop => None,
        _ => Some(next),
    }
}

/// A packet source driven by time.
pub trait PacketSource {
    /// When the next packet is due (`None` = finished).
    fn next_send(&self) -> Option<Instant>;
    /// The next packet due at or before `now`, if any.
    fn poll(&mut self, now: Instant) -> Option<Packet>;
}
