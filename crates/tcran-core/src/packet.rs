//! The packet as every tcran layer sees it.
//!
//! A simulated packet is metadata only: its size, 5-tuple, DSCP/ECN, QFI and
//! timestamps. A live packet additionally carries its bytes in `payload`
//! (the IP packet, optionally behind a 1-byte SDAP header); tcran-wire parses
//! them into the same metadata, so every stage works on both alike.

use crate::ids::{FlowId, Qfi};
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::num::NonZeroU64;

/// Unique number of a packet within a run (assigned by whoever creates it).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PacketId(pub u64);

impl fmt::Debug for PacketId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pkt{}", self.0)
    }
}

/// The 2-bit ECN field of the IP header (RFC 3168 §5; ECT(1) is the L4S
/// identifier, RFC 9331).
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Ecn {
    /// `00`: not ECN-capable transport.
    #[default]
    NotEct,
    /// `01`: ECT(1), the L4S identifier.
    Ect1,
    /// `10`: ECT(0), classic ECN.
    Ect0,
    /// `11`: congestion experienced.
    Ce,
}

impl Ecn {
    pub const fn from_bits(b: u8) -> Ecn {
        match b & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }
    /// Whether a congestion signal may be given by marking instead of dropping.
    pub const fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
    /// RFC 9331 §5.1: ECT(1) and CE are classified as L4S.
    pub const fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
}

/// Differentiated Services Code Point, 0..=63 (RFC 2474).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Dscp(pub u8);

impl Dscp {
    pub const DEFAULT: Dscp = Dscp(0);
    /// Expedited Forwarding (RFC 3246).
    pub const EF: Dscp = Dscp(46);
    pub const CS1: Dscp = Dscp(8);
    pub const CS5: Dscp = Dscp(40);
    pub const AF41: Dscp = Dscp(34);
}

impl fmt::Debug for Dscp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dscp{}", self.0)
    }
}

/// IP protocol number (IANA).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Protocol(pub u8);

impl Protocol {
    pub const ICMP: Protocol = Protocol(1);
    pub const TCP: Protocol = Protocol(6);
    pub const UDP: Protocol = Protocol(17);
    pub const ICMPV6: Protocol = Protocol(58);
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Protocol::ICMP => f.write_str("icmp"),
            Protocol::TCP => f.write_str("tcp"),
            Protocol::UDP => f.write_str("udp"),
            Protocol::ICMPV6 => f.write_str("icmpv6"),
            Protocol(p) => write!(f, "proto{p}"),
        }
    }
}

/// Source/destination address and port plus protocol. Ports are 0 for
/// protocols without ports (ICMP).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FiveTuple {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    pub proto: Protocol,
}

impl Default for FiveTuple {
    fn default() -> Self {
        FiveTuple {
            src: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            dst: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            sport: 0,
            dport: 0,
            proto: Protocol::default(),
        }
    }
}

impl fmt::Debug for FiveTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} {}:{} > {}:{}",
            self.proto, self.src, self.sport, self.dst, self.dport
        )
    }
}

/// TCP header fields the transport models exchange.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct TcpMeta {
    /// First sequence number of the payload (byte-counted).
    pub seq: u64,
    /// Cumulative acknowledgement (next byte expected), if the ACK flag is set.
    pub ack: u64,
    /// TCP payload bytes carried.
    pub payload: u32,
    pub flags: TcpFlags,
    /// Timestamp option (RFC 7323): sender's clock and the echoed value, in ns.
    pub ts_val: u64,
    pub ts_ecr: u64,
    /// Up to three SACK blocks `[start, end)` (RFC 2018); `(0, 0)` = unused.
    pub sack: [(u64, u64); 3],
}

/// TCP flag bits as a small set.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
    pub const fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// Layer-4 facts the traffic models need end to end.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub enum L4Meta {
    #[default]
    None,
    Tcp(TcpMeta),
    /// A UDP datagram with the application's sequence number (loss counting).
    Udp {
        seq: u64,
    },
    /// ICMP echo request (`reply = false`) or reply.
    IcmpEcho {
        ident: u16,
        seq: u16,
        reply: bool,
    },
}

/// When a packet passed a point, if it did: an `Option<Instant>` in 8
/// bytes instead of 16. Every packet carries four and is moved by value
/// along the data path, where its size is what a move costs (a packet of
/// more than 256 bytes takes glibc's slower `memcpy` path).
#[derive(Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "Option<Instant>", into = "Option<Instant>")]
pub struct Stamp(Option<NonZeroU64>);

impl Stamp {
    /// Not passed yet.
    pub const NONE: Stamp = Stamp(None);

    /// Passed at `t`.
    #[inline]
    pub fn at(t: Instant) -> Stamp {
        // Nanoseconds + 1, so that instant 0 is a value too (u64::MAX ns,
        // 584 years, is the one instant that cannot be told from its
        // predecessor).
        Stamp(NonZeroU64::new(t.as_nanos().saturating_add(1)))
    }

    #[inline]
    pub fn get(self) -> Option<Instant> {
        self.0.map(|n| Instant::from_nanos(n.get() - 1))
    }

    pub fn is_none(self) -> bool {
        self.0.is_none()
    }

    /// `self` if set, else `other`.
    pub fn or(self, other: Stamp) -> Stamp {
        if self.0.is_some() {
            self
        } else {
            other
        }
    }
}

impl From<Option<Instant>> for Stamp {
    fn from(t: Option<Instant>) -> Stamp {
        t.map_or(Stamp::NONE, Stamp::at)
    }
}

impl From<Stamp> for Option<Instant> {
    fn from(s: Stamp) -> Option<Instant> {
        s.get()
    }
}

impl fmt::Debug for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// Where a packet was when, for the per-layer delay breakdown (creation ->
/// `upf_in` -> `tc_in` -> `rlc_in` -> `mac_in` -> delivery; each layer's
/// delay is the gap between two consecutive stamps, so they add up to the
/// one-way delay).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct LayerStamps {
    /// Reached the UPF (end of the core network).
    pub upf_in: Stamp,
    /// Entered the TC pipeline of its DRB (after the UPF queue, if any).
    pub tc_in: Stamp,
    /// Entered the RLC transmit buffer.
    pub rlc_in: Stamp,
    /// The SDU's last byte was first handed to the MAC: the first
    /// transmission of its last segment. Before it the SDU waited in RLC
    /// (queueing, segmentation); after it, only the air (transmission,
    /// HARQ, RLC ARQ retransmissions, reassembly) stands between it and
    /// the UE.
    pub mac_in: Stamp,
}

/// A packet.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Packet {
    pub id: PacketId,
    /// Size of the IP packet in bytes (what the RLC must carry).
    pub len: u32,
    pub tuple: FiveTuple,
    pub dscp: Dscp,
    pub ecn: Ecn,
    pub qfi: Qfi,
    /// The simulator's flow, for metrics; `None` for live packets.
    pub flow: Option<FlowId>,
    /// When the sender created it.
    pub created: Instant,
    /// When the stage currently holding it enqueued it (sojourn = now - this).
    pub enqueued_at: Instant,
    pub stamps: LayerStamps,
    pub l4: L4Meta,
    /// True when the packet has real bytes that did not parse as IPv4/IPv6:
    /// classifiers send it to the default queue and count it.
    pub malformed: bool,
    /// The real bytes (IP packet, behind an SDAP header if `sdap_header`).
    pub payload: Option<Box<[u8]>>,
    pub sdap_header: bool,
}

impl Packet {
    /// A metadata-only packet of `len` bytes.
    pub fn new(id: PacketId, len: u32, tuple: FiveTuple, created: Instant) -> Packet {
        Packet {
            id,
            len,
            tuple,
            created,
            enqueued_at: created,
            ..Packet::default()
        }
    }
}

impl fmt::Debug for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packet")
            .field("id", &self.id)
            .field("len", &self.len)
            .field("tuple", &self.tuple)
            .field("dscp", &self.dscp)
            .field("ecn", &self.ecn)
            .field("qfi", &self.qfi)
            .field("flow", &self.flow)
            .field("l4", &self.l4)
            .field("bytes", &self.payload.as_ref().map(|p| p.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_small_and_keep_every_instant() {
        assert_eq!(std::mem::size_of::<Stamp>(), 8);
        for t in [0, 1, 1_000_000, u64::MAX - 1] {
            let s = Stamp::at(Instant::from_nanos(t));
            assert_eq!(s.get(), Some(Instant::from_nanos(t)));
            assert_eq!(Stamp::from(s.get()), s);
        }
        assert_eq!(Stamp::NONE.get(), None);
        assert_eq!(Stamp::default(), Stamp::NONE);
        assert!(Stamp::NONE.or(Stamp::at(Instant::ZERO)).get().is_some());
        // The data path moves packets by value: keep them within 256 bytes.
        assert!(std::mem::size_of::<Packet>() <= 256);
    }

    #[test]
    fn ecn_bits_round_trip_and_l4s_identifier() {
        for b in 0..4u8 {
            assert_eq!(Ecn::from_bits(b).bits(), b);
        }
        assert!(Ecn::Ect1.is_l4s() && Ecn::Ce.is_l4s());
        assert!(!Ecn::Ect0.is_l4s() && !Ecn::NotEct.is_l4s());
        assert!(!Ecn::NotEct.is_ect() && Ecn::Ect0.is_ect());
    }
}
