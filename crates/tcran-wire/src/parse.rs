//! Parsing of real packet bytes into [`tcran_core::Packet`] metadata.
//!
//! Layout read (all via `etherparse` header slices, which check every length
//! before reading):
//!
//! ```text
//! [SDAP DL header, 1 octet: RDI | RQI | QFI(6)]   TS 37.324 sec. 6.2.2.2 (optional)
//! IPv4 header (+ options) [+ AH]                  RFC 791, RFC 4302
//!   or IPv6 header + extension headers            RFC 8200 sec. 4
//! TCP | UDP | ICMP | ICMPv6 header                RFC 9293, 768, 792, 4443
//! ```
//!
//! Rules, chosen to match what a receiving host or a Linux flow dissector
//! would see:
//!
//! - The IP length field bounds the packet: `len` is the IPv4 total length or
//!   40 + the IPv6 payload length, bytes past it (link padding) are ignored,
//!   and bytes missing before it make the packet truncated. IPv6 jumbograms
//!   (RFC 2675, payload length 0) are not supported: they cannot cross a 5G
//!   bearer, whose PDCP SDUs are at most 9000 octets (TS 38.323).
//! - IPv6 extension headers are skipped in any order RFC 8200 sec. 4.1
//!   allows, except that Hop-by-Hop must come first (sec. 4.3). Skipped:
//!   Hop-by-Hop (0), Routing (43), Fragment (44), Destination Options (60),
//!   AH (51, RFC 4302), and the other IANA "IPv6 Extension Header Types"
//!   that share the generic TLV layout (Mobility 135, HIP 139, Shim6 140,
//!   experimental 253/254). ESP (50) and No Next Header (59) end the walk.
//! - Fragments (RFC 791 sec. 2.3, RFC 8200 sec. 4.5): the first fragment
//!   carries the upper-layer header and yields ports; a non-first fragment
//!   has no ports and no L4 facts, and its protocol is the one its IPv4
//!   header or IPv6 Fragment header names.
//! - Header checksums are not verified here (see
//!   [`crate::ipv4_header_checksum_ok`]); unknown upper-layer protocols are
//!   fine (ports 0, `L4Meta::None`).

use crate::WireError;
use etherparse::{
    Icmpv4Slice, Icmpv4Type, Icmpv6Slice, Icmpv6Type, IpAuthHeaderSlice, IpNumber, Ipv4HeaderSlice,
    Ipv6FragmentHeaderSlice, Ipv6HeaderSlice, Ipv6RawExtHeaderSlice, TcpHeaderSlice,
    TcpOptionElement, UdpHeaderSlice,
};
use std::net::IpAddr;
use tcran_core::packet::{L4Meta, TcpFlags, TcpMeta};
use tcran_core::{Dscp, Ecn, FiveTuple, Instant, Packet, PacketId, Protocol, Qfi};

/// The SDAP header of a downlink data PDU (TS 37.324 sec. 6.2.2.2,
/// fields in sec. 6.3): one octet, `RDI | RQI | QFI`, most significant bit
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SdapDlHeader {
    /// Reflective QoS flow to DRB mapping Indication (sec. 6.3.3).
    pub rdi: bool,
    /// Reflective QoS Indication (sec. 6.3.4).
    pub rqi: bool,
    /// QoS Flow Identifier, 6 bits (sec. 6.3.2).
    pub qfi: Qfi,
}

impl SdapDlHeader {
    /// Length of the header in octets.
    pub const LEN: usize = 1;

    pub const fn from_byte(b: u8) -> SdapDlHeader {
        SdapDlHeader {
            rdi: b & 0x80 != 0,
            rqi: b & 0x40 != 0,
            qfi: Qfi(b & 0x3f),
        }
    }

    /// The octet; a QFI above 63 is truncated to its 6 low bits.
    pub const fn to_byte(self) -> u8 {
        ((self.rdi as u8) << 7) | ((self.rqi as u8) << 6) | (self.qfi.0 & 0x3f)
    }
}

/// Where a fragment sits in its datagram (RFC 791 sec. 3.1, RFC 8200 sec. 4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// Offset of this fragment's data in 8-octet units; 0 = first fragment.
    pub offset: u16,
    /// More Fragments flag: false on the last fragment.
    pub more: bool,
    /// Identification (16 bits in IPv4, 32 bits in IPv6).
    pub ident: u32,
}

/// Everything [`parse`] reads from a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers {
    /// The SDAP header, when the bytes were parsed with `sdap_header = true`.
    pub sdap: Option<SdapDlHeader>,
    /// QFI from the SDAP header; 0 without one.
    pub qfi: Qfi,
    /// Addresses, ports (0 when the protocol has none, or for a non-first
    /// fragment) and the upper-layer protocol (after IPv6 extension headers).
    pub tuple: FiveTuple,
    pub dscp: Dscp,
    pub ecn: Ecn,
    /// Length of the IP packet in octets as its header states it (IPv4 total
    /// length; 40 + IPv6 payload length). Excludes the SDAP header.
    pub len: u32,
    /// `Some` if the packet is a fragment of a larger datagram.
    pub fragment: Option<Fragment>,
    /// Transport facts. TCP: sequence and acknowledgement numbers are the raw
    /// 32-bit wire values, `ack` is 0 unless the ACK flag is set, SACK blocks
    /// (RFC 2018) are read, timestamps are left 0 (their unit is the sender's
    /// clock, not nanoseconds). UDP: `seq` 0 (the application's numbering is
    /// not on the wire). ICMP/ICMPv6: echo request/reply only.
    pub l4: L4Meta,
}

impl Headers {
    /// Copies the parsed facts into `packet`'s metadata (`len`, `tuple`,
    /// `dscp`, `ecn`, `qfi`, `l4`) and clears `malformed`.
    pub fn apply_to(&self, packet: &mut Packet) {
        packet.len = self.len;
        packet.tuple = self.tuple;
        packet.dscp = self.dscp;
        packet.ecn = self.ecn;
        packet.qfi = self.qfi;
        packet.l4 = self.l4;
        packet.malformed = false;
    }
}

/// Parses an IP packet, behind a 1-octet SDAP DL header if `sdap_header`.
/// Never panics; any input that is not a well-formed packet per the rules in
/// the module documentation gives an error.
pub fn parse(bytes: &[u8], sdap_header: bool) -> Result<Headers, WireError> {
    let (sdap, ip) = if sdap_header {
        let (&b, rest) = bytes
            .split_first()
            .ok_or(WireError::Truncated("sdap header"))?;
        (Some(SdapDlHeader::from_byte(b)), rest)
    } else {
        (None, bytes)
    };
    let first = *ip.first().ok_or(WireError::Truncated("ip header"))?;
    let mut h = match first >> 4 {
        4 => parse_ipv4(ip)?,
        6 => parse_ipv6(ip)?,
        v => return Err(WireError::BadVersion(v)),
    };
    h.sdap = sdap;
    h.qfi = sdap.map_or(Qfi::default(), |s| s.qfi);
    Ok(h)
}

/// A live packet from its bytes. Never fails: bytes that do not parse give a
/// packet with `malformed = true`, `len = bytes.len()`, the QFI of the SDAP
/// header if there is one, and default metadata otherwise. The bytes are
/// kept in `payload` either way.
pub fn packet_from_bytes(
    id: PacketId,
    bytes: Box<[u8]>,
    sdap_header: bool,
    now: Instant,
) -> Packet {
    let mut packet = Packet::new(id, 0, FiveTuple::default(), now);
    match parse(&bytes, sdap_header) {
        Ok(h) => h.apply_to(&mut packet),
        Err(_) => {
            packet.malformed = true;
            packet.len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
            if sdap_header {
                if let Some(&b) = bytes.first() {
                    packet.qfi = SdapDlHeader::from_byte(b).qfi;
                }
            }
        }
    }
    packet.sdap_header = sdap_header;
    packet.payload = Some(bytes);
    packet
}

fn empty_headers(len: u32, src: IpAddr, dst: IpAddr, tos: u8) -> Headers {
    Headers {
        sdap: None,
        qfi: Qfi::default(),
        tuple: FiveTuple {
            src,
            dst,
            sport: 0,
            dport: 0,
            proto: Protocol::default(),
        },
        dscp: Dscp(tos >> 2),
        ecn: Ecn::from_bits(tos),
        len,
        fragment: None,
        l4: L4Meta::None,
    }
}

fn parse_ipv4(ip: &[u8]) -> Result<Headers, WireError> {
    use etherparse::err::ipv4::HeaderSliceError as E;
    let hdr = Ipv4HeaderSlice::from_slice(ip).map_err(|e| match e {
        E::Len(_) => WireError::Truncated("ipv4 header"),
        E::Content(_) => WireError::Invalid("ipv4 header length (IHL) below 5"),
    })?;
    let hlen = hdr.slice().len();
    let total = usize::from(hdr.total_len());
    if total < hlen {
        return Err(WireError::Invalid(
            "ipv4 total length shorter than its header",
        ));
    }
    let payload = ip.get(hlen..total).ok_or(WireError::Truncated(
        "ipv4 packet shorter than its total length",
    ))?;
    let offset = hdr.fragments_offset().value();
    let more = hdr.more_fragments();
    let mut h = empty_headers(
        u32::from(hdr.total_len()),
        IpAddr::V4(hdr.source_addr()),
        IpAddr::V4(hdr.destination_addr()),
        ip[1],
    );
    if offset != 0 || more {
        h.fragment = Some(Fragment {
            offset,
            more,
            ident: u32::from(hdr.identification()),
        });
    }
    let mut proto = hdr.protocol();
    let mut upper = payload;
    // An authentication header sits at the start of the datagram's data,
    // so only a first fragment (or an unfragmented packet) has one.
    if offset == 0 && proto == IpNumber::AUTHENTICATION_HEADER {
        let ah = IpAuthHeaderSlice::from_slice(upper).map_err(auth_err)?;
        proto = ah.next_header();
        upper = &upper[ah.slice().len()..];
    }
    h.tuple.proto = Protocol(proto.0);
    if offset == 0 {
        transport(&mut h, false, upper, more)?;
    }
    Ok(h)
}

fn parse_ipv6(ip: &[u8]) -> Result<Headers, WireError> {
    use etherparse::err::ipv6::HeaderSliceError as E;
    let hdr = Ipv6HeaderSlice::from_slice(ip).map_err(|e| match e {
        E::Len(_) => WireError::Truncated("ipv6 header"),
        E::Content(_) => WireError::BadVersion(ip[0] >> 4),
    })?;
    let plen = usize::from(hdr.payload_length());
    let mut rest = ip.get(40..40 + plen).ok_or(WireError::Truncated(
        "ipv6 packet shorter than its payload length",
    ))?;
    let tc = hdr.traffic_class();
    let mut h = empty_headers(
        40 + u32::from(hdr.payload_length()),
        IpAddr::V6(hdr.source_addr()),
        IpAddr::V6(hdr.destination_addr()),
        tc,
    );
    let mut next = hdr.next_header();
    let mut first_header = true;
    let mut non_first_fragment = false;
    let mut fragmented = false;
    // Every extension header is at least 8 octets, so the walk is bounded
    // by the payload length.
    loop {
        match next {
            IpNumber::IPV6_HEADER_HOP_BY_HOP if !first_header => {
                return Err(WireError::Invalid(
                    "ipv6 hop-by-hop options not directly after the ipv6 header",
                ));
            }
            IpNumber::IPV6_HEADER_HOP_BY_HOP
            | IpNumber::IPV6_ROUTE_HEADER
            | IpNumber::IPV6_DESTINATION_OPTIONS
            | IpNumber::MOBILITY_HEADER
            | IpNumber::HIP
            | IpNumber::SHIM6
            | IpNumber::EXPERIMENTAL_AND_TESTING_0
            | IpNumber::EXPERIMENTAL_AND_TESTING_1 => {
                let ext = Ipv6RawExtHeaderSlice::from_slice(rest)
                    .map_err(|_| WireError::Truncated("ipv6 extension header"))?;
                next = ext.next_header();
                rest = &rest[ext.slice().len()..];
            }
            IpNumber::IPV6_FRAGMENTATION_HEADER => {
                let frag = Ipv6FragmentHeaderSlice::from_slice(rest)
                    .map_err(|_| WireError::Truncated("ipv6 fragment header"))?;
                next = frag.next_header();
                rest = &rest[frag.slice().len()..];
                // RFC 8200 sec. 4.5: octets 2..3 are `Fragment Offset (13) |
                // Res (2) | M (1)`. Read here rather than with etherparse
                // 0.16's `fragment_offset()`/`more_fragments()`, which use
                // the wrong bit positions (etherparse issue #150, fixed in
                // 0.20).
                let word = u16::from_be_bytes([frag.slice()[2], frag.slice()[3]]);
                let (offset, more) = (word >> 3, word & 1 != 0);
                // An "atomic fragment" (offset 0, M = 0; RFC 6946) is a whole
                // datagram: the walk continues.
                if offset != 0 || more {
                    fragmented = fragmented || more;
                    h.fragment = Some(Fragment {
                        offset,
                        more,
                        ident: frag.identification(),
                    });
                    if offset != 0 {
                        // The rest is the middle of the fragmentable part.
                        non_first_fragment = true;
                        break;
                    }
                }
            }
            IpNumber::AUTHENTICATION_HEADER => {
                let ah = IpAuthHeaderSlice::from_slice(rest).map_err(auth_err)?;
                next = ah.next_header();
                rest = &rest[ah.slice().len()..];
            }
            _ => break,
        }
        first_header = false;
    }
    h.tuple.proto = Protocol(next.0);
    if !non_first_fragment {
        transport(&mut h, true, rest, fragmented)?;
    }
    Ok(h)
}

fn auth_err(e: etherparse::err::ip_auth::HeaderSliceError) -> WireError {
    use etherparse::err::ip_auth::HeaderSliceError as E;
    match e {
        E::Len(_) => WireError::Truncated("ip authentication header"),
        E::Content(_) => WireError::Invalid("ip authentication header length"),
    }
}

/// Reads the upper-layer header at the start of `data` (the rest of the
/// datagram, or of its first fragment when `fragmented`).
fn transport(h: &mut Headers, v6: bool, data: &[u8], fragmented: bool) -> Result<(), WireError> {
    match (h.tuple.proto, v6) {
        (Protocol::TCP, _) => {
            use etherparse::err::tcp::HeaderSliceError as E;
            let tcp = TcpHeaderSlice::from_slice(data).map_err(|e| match e {
                E::Len(_) => WireError::Truncated("tcp header"),
                E::Content(_) => WireError::Invalid("tcp data offset below 5"),
            })?;
            h.tuple.sport = tcp.source_port();
            h.tuple.dport = tcp.destination_port();
            let flags = TcpFlags(tcp.slice()[13]);
            let mut meta = TcpMeta {
                seq: u64::from(tcp.sequence_number()),
                ack: if tcp.ack() {
                    u64::from(tcp.acknowledgment_number())
                } else {
                    0
                },
                payload: (data.len() - tcp.slice().len()) as u32,
                flags,
                ..TcpMeta::default()
            };
            // A malformed option ends the option list but not the packet:
            // the segment itself is still deliverable.
            for opt in tcp.options_iterator() {
                match opt {
                    Ok(TcpOptionElement::SelectiveAcknowledgement(first, rest)) => {
                        let blocks = std::iter::once(Some(first)).chain(rest).flatten();
                        for (slot, (l, r)) in meta.sack.iter_mut().zip(blocks) {
                            *slot = (u64::from(l), u64::from(r));
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            h.l4 = L4Meta::Tcp(meta);
        }
        (Protocol::UDP, _) => {
            let udp =
                UdpHeaderSlice::from_slice(data).map_err(|_| WireError::Truncated("udp header"))?;
            h.tuple.sport = udp.source_port();
            h.tuple.dport = udp.destination_port();
            // RFC 768: the length covers header and data. A datagram longer
            // than what the IP packet carries is truncated; a shorter one is
            // accepted and trimmed, as Linux does. A fragment only carries
            // part of the datagram.
            let ulen = usize::from(udp.length());
            if !fragmented {
                if ulen < 8 {
                    return Err(WireError::Invalid("udp length below 8"));
                }
                if ulen > data.len() {
                    return Err(WireError::Truncated("udp datagram shorter than its length"));
                }
            }
            h.l4 = L4Meta::Udp { seq: 0 };
        }
        (Protocol::ICMP, false) => {
            if data.len() < 8 {
                return Err(WireError::Truncated("icmp header"));
            }
            // etherparse also checks type-specific lengths (timestamp
            // messages); a wrong one only hides the L4 facts.
            if let Ok(icmp) = Icmpv4Slice::from_slice(data) {
                h.l4 = match icmp.icmp_type() {
                    Icmpv4Type::EchoRequest(e) => L4Meta::IcmpEcho {
                        ident: e.id,
                        seq: e.seq,
                        reply: false,
                    },
                    Icmpv4Type::EchoReply(e) => L4Meta::IcmpEcho {
                        ident: e.id,
                        seq: e.seq,
                        reply: true,
                    },
                    _ => L4Meta::None,
                };
            }
        }
        (Protocol::ICMPV6, true) => {
            let icmp =
                Icmpv6Slice::from_slice(data).map_err(|_| WireError::Truncated("icmpv6 header"))?;
            h.l4 = match icmp.icmp_type() {
                Icmpv6Type::EchoRequest(e) => L4Meta::IcmpEcho {
                    ident: e.id,
                    seq: e.seq,
                    reply: false,
                },
                Icmpv6Type::EchoReply(e) => L4Meta::IcmpEcho {
                    ident: e.id,
                    seq: e.seq,
                    reply: true,
                },
                _ => L4Meta::None,
            };
        }
        _ => {}
    }
    Ok(())
}
