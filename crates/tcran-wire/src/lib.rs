//! # tcran-wire: real packet bytes
//!
//! The bridge between live traffic and the metadata every tcran stage works
//! on ([`tcran_core::Packet`]):
//!
//! - [`parse`] / [`packet_from_bytes`]: an IPv4 (RFC 791) or IPv6 (RFC 8200)
//!   packet, optionally behind the 1-octet SDAP DL data PDU header
//!   (TS 37.324 sec. 6.2.2.2: RDI, RQI, 6-bit QFI), with TCP (RFC 9293),
//!   UDP (RFC 768), ICMP (RFC 792) or ICMPv6 (RFC 4443) above it, becomes the
//!   5-tuple, DSCP/ECN (RFC 2474, RFC 3168), IP length, QFI and
//!   [`tcran_core::packet::L4Meta`]. Header layouts are read with the
//!   `etherparse` crate's zero-copy header slices; the walk over IPv6
//!   extension headers and fragments is ours, because a non-first fragment
//!   carries no upper-layer header at all (RFC 8200 sec. 4.5).
//! - [`set_ce`]: in-place ECN Congestion Experienced marking (RFC 3168
//!   sec. 5/6.1.1) with the IPv4 header checksum updated incrementally
//!   (RFC 1624 eqn. 3).
//! - [`build`]: builders of valid packets for tests and the emulator.
//! - [`fuzz_parse`]: the body of the `parse_packet` fuzz target, callable
//!   from stable `cargo test`.
//!
//! ```
//! use tcran_core::{Ecn, Instant, PacketId, Protocol};
//! use tcran_wire::{build_ipv4_udp, packet_from_bytes, parse, set_ce, Ipv4Spec};
//!
//! let mut ip = Ipv4Spec::new([10, 0, 0, 1].into(), [10, 45, 0, 2].into());
//! ip.ecn = Ecn::Ect1;
//! let mut bytes = build_ipv4_udp(&ip, 4000, 5060, b"hello").unwrap();
//! let p = packet_from_bytes(PacketId(1), bytes.clone().into(), false, Instant::ZERO);
//! assert_eq!((p.len, p.tuple.proto, p.tuple.dport), (33, Protocol::UDP, 5060));
//!
//! set_ce(&mut bytes, false).unwrap();
//! assert_eq!(parse(&bytes, false).unwrap().ecn, Ecn::Ce);
//! assert!(tcran_wire::ipv4_header_checksum_ok(&bytes));
//! ```
//!
//! Nothing here panics on any input: bytes that do not parse give a
//! [`WireError`] (or, through [`packet_from_bytes`], a packet flagged
//! `malformed`).

pub mod build;
mod ecn;
mod fuzzing;
mod parse;

pub use build::{
    build_ipv4_icmp_echo, build_ipv4_tcp, build_ipv4_udp, build_ipv6_icmp_echo, build_ipv6_tcp,
    build_ipv6_udp, with_sdap, Ipv4Spec, Ipv6Spec, TcpSpec,
};
pub use ecn::{ipv4_header_checksum, ipv4_header_checksum_ok, set_ce};
pub use fuzzing::fuzz_parse;
pub use parse::{packet_from_bytes, parse, Fragment, Headers, SdapDlHeader};

/// Why bytes could not be read, edited or built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The bytes end before the named header (or the length its header
    /// announces) is complete.
    #[error("packet truncated: {0}")]
    Truncated(&'static str),
    /// The first nibble of the IP header is neither 4 nor 6.
    #[error("not an IPv4 or IPv6 packet (version {0})")]
    BadVersion(u8),
    /// A header field has a value the protocol does not allow.
    #[error("invalid header: {0}")]
    Invalid(&'static str),
    /// A builder was given more payload than the IP length field can carry.
    #[error("payload of {0} bytes does not fit in one IP packet")]
    TooLong(usize),
}
