//! Parser behaviour on hand-built packets: extension headers, fragments,
//! truncation, lengths, SDAP, malformed input.

use crate::common;

use common::*;
use std::net::IpAddr;
use tcran_core::packet::{L4Meta, TcpFlags};
use tcran_core::{Dscp, Ecn, Instant, PacketId, Protocol, Qfi};
use tcran_wire::*;

const HOP_BY_HOP: u8 = 0;
const TCP: u8 = 6;
const UDP: u8 = 17;
const ROUTING: u8 = 43;
const FRAGMENT: u8 = 44;
const ESP: u8 = 50;
const AH: u8 = 51;
const ICMPV6: u8 = 58;
const NO_NEXT: u8 = 59;
const DEST_OPTS: u8 = 60;
const MOBILITY: u8 = 135;

/// A UDP header (checksum 0) + payload.
fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&sport.to_be_bytes());
    b.extend_from_slice(&dport.to_be_bytes());
    b.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(payload);
    b
}

/// A 20-byte TCP header, ACK|PSH, + payload.
fn tcp(sport: u16, dport: u16, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&sport.to_be_bytes());
    b.extend_from_slice(&dport.to_be_bytes());
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&ack.to_be_bytes());
    b.push(5 << 4);
    b.push(0x18);
    b.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
    b.extend_from_slice(payload);
    b
}

/// A generic extension header (hop-by-hop, routing, destination options
/// layout) of `8 * (1 + len8)` octets with PadN filling.
fn ext(next: u8, len8: u8) -> Vec<u8> {
    let mut b = vec![next, len8];
    let body = 6 + 8 * usize::from(len8);
    b.push(1); // PadN
    b.push((body - 2) as u8);
    b.resize(2 + body, 0);
    b
}

fn frag(next: u8, offset8: u16, more: bool, ident: u32) -> Vec<u8> {
    let mut b = vec![next, 0];
    b.extend_from_slice(&((offset8 << 3) | u16::from(more)).to_be_bytes());
    b.extend_from_slice(&ident.to_be_bytes());
    b
}

fn ah(next: u8) -> Vec<u8> {
    // Payload length 4 = (6 words - 2): SPI, sequence, 96-bit ICV.
    let mut b = vec![next, 4, 0, 0];
    b.extend_from_slice(&0x1234u32.to_be_bytes());
    b.extend_from_slice(&7u32.to_be_bytes());
    b.extend_from_slice(&[0xaa; 12]);
    b
}

fn ipv6(next: u8, tc: u8, rest: &[u8]) -> Vec<u8> {
    let mut b = vec![0x60 | (tc >> 4), (tc << 4) | 0x1, 0x23, 0x45];
    b.extend_from_slice(&(rest.len() as u16).to_be_bytes());
    b.push(next);
    b.push(64);
    b.extend_from_slice(&v6(1).octets());
    b.extend_from_slice(&v6(2).octets());
    b.extend_from_slice(rest);
    b
}

/// IPv4 header with `opts` (multiple of 4) and a correct checksum.
fn ipv4(proto: u8, tos: u8, flags_frag: u16, opts: &[u8], rest: &[u8]) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let hlen = 20 + opts.len();
    let mut b = vec![0x40 | (hlen / 4) as u8, tos];
    b.extend_from_slice(&((hlen + rest.len()) as u16).to_be_bytes());
    b.extend_from_slice(&0xbeefu16.to_be_bytes());
    b.extend_from_slice(&flags_frag.to_be_bytes());
    b.push(64);
    b.push(proto);
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&v4(10, 0, 0, 1).octets());
    b.extend_from_slice(&v4(10, 0, 0, 2).octets());
    b.extend_from_slice(opts);
    let sum = inet_checksum(&b);
    b[10..12].copy_from_slice(&sum.to_be_bytes());
    b.extend_from_slice(rest);
    b
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn ipv4_udp_with_options_and_sdap() {
    // Two option words (NOP NOP NOP EOL ...), DSCP EF, ECT(1).
    let ip = ipv4(
        UDP,
        (46 << 2) | 1,
        0x4000,
        &[1, 1, 1, 0, 0, 0, 0, 0],
        &udp(53, 4000, b"abcd"),
    );
    assert!(ipv4_header_checksum_ok(&ip));
    let b = with_sdap(
        SdapDlHeader {
            rdi: true,
            rqi: false,
            qfi: Qfi(9),
        },
        &ip,
    );
    assert_eq!(b[0], 0x89);
    let h = parse(&b, true).unwrap();
    assert_eq!(h.qfi, Qfi(9));
    assert_eq!(
        h.sdap,
        Some(SdapDlHeader {
            rdi: true,
            rqi: false,
            qfi: Qfi(9)
        })
    );
    assert_eq!(h.tuple.src, IpAddr::V4(v4(10, 0, 0, 1)));
    assert_eq!(h.tuple.dst, IpAddr::V4(v4(10, 0, 0, 2)));
    assert_eq!(
        (h.tuple.sport, h.tuple.dport, h.tuple.proto),
        (53, 4000, Protocol::UDP)
    );
    assert_eq!((h.dscp, h.ecn), (Dscp::EF, Ecn::Ect1));
    assert_eq!(h.len, 28 + 8 + 4);
    assert_eq!(h.fragment, None);
    assert_eq!(h.l4, L4Meta::Udp { seq: 0 });
    // The same bytes without the SDAP flag: the first octet 0x89 is no IP version.
    assert_eq!(parse(&b, false), Err(WireError::BadVersion(8)));
}

#[test]
fn ipv4_fragments_first_has_ports_others_do_not() {
    let seg = tcp(80, 5555, 1000, 2000, &[0u8; 16]);
    // First fragment: MF set, offset 0.
    let first = ipv4(TCP, 0, 0x2000, &[], &seg);
    let h = parse(&first, false).unwrap();
    assert_eq!((h.tuple.sport, h.tuple.dport), (80, 5555));
    assert_eq!(
        h.fragment,
        Some(Fragment {
            offset: 0,
            more: true,
            ident: 0xbeef
        })
    );
    assert!(matches!(h.l4, L4Meta::Tcp(t) if t.seq == 1000 && t.ack == 2000 && t.payload == 16));
    // Non-first fragment: offset 5 (40 octets); its bytes look like a TCP
    // header but must not be read as one.
    let later = ipv4(TCP, 0, 5, &[], &seg);
    let h = parse(&later, false).unwrap();
    assert_eq!(
        (h.tuple.sport, h.tuple.dport, h.tuple.proto),
        (0, 0, Protocol::TCP)
    );
    assert_eq!(h.l4, L4Meta::None);
    assert_eq!(
        h.fragment,
        Some(Fragment {
            offset: 5,
            more: false,
            ident: 0xbeef
        })
    );
    // A non-first fragment too short for any transport header is fine.
    let tiny = ipv4(UDP, 0, 0x2000 | 100, &[], &[1, 2, 3]);
    assert_eq!(parse(&tiny, false).unwrap().tuple.sport, 0);
    // A first UDP fragment carries only part of the datagram: its UDP
    // length may exceed the fragment.
    let mut long = udp(1, 2, &[0u8; 8]);
    long[4..6].copy_from_slice(&1000u16.to_be_bytes());
    let h = parse(&ipv4(UDP, 0, 0x2000, &[], &long), false).unwrap();
    assert_eq!((h.tuple.sport, h.tuple.dport), (1, 2));
    assert_eq!(
        parse(&ipv4(UDP, 0, 0, &[], &long), false).unwrap_err(),
        WireError::Truncated("udp datagram shorter than its length")
    );
}

#[test]
fn ipv4_authentication_header_is_skipped_only_in_first_fragments() {
    let b = ipv4(AH, 0, 0, &[], &cat(&[&ah(UDP), &udp(7, 8, b"x")]));
    let h = parse(&b, false).unwrap();
    assert_eq!(
        (h.tuple.proto, h.tuple.sport, h.tuple.dport),
        (Protocol::UDP, 7, 8)
    );
    let later = ipv4(AH, 0, 3, &[], &[0xff; 5]);
    let h = parse(&later, false).unwrap();
    assert_eq!((h.tuple.proto, h.tuple.sport), (Protocol(AH), 0));
}

#[test]
fn ipv6_extension_chain_is_skipped() {
    let payload = udp(1234, 443, b"quic");
    // hop-by-hop -> routing -> destination options -> fragment (atomic, RFC
    // 6946: not fragmenting) -> mobility -> destination options -> AH -> UDP
    let body = cat(&[
        &ext(ROUTING, 0),
        &ext(DEST_OPTS, 0),
        &ext(FRAGMENT, 1),
        &frag(MOBILITY, 0, false, 1),
        &ext(DEST_OPTS, 0),
        &ext(AH, 0),
        &ah(UDP),
        &payload,
    ]);
    let b = ipv6(HOP_BY_HOP, (10 << 2) | 2, &body);
    let h = parse(&b, false).unwrap();
    assert_eq!(h.tuple.proto, Protocol::UDP);
    assert_eq!((h.tuple.sport, h.tuple.dport), (1234, 443));
    assert_eq!((h.dscp, h.ecn), (Dscp(10), Ecn::Ect0));
    assert_eq!(h.len as usize, b.len());
    assert_eq!(h.fragment, None);
    assert_eq!(h.tuple.src, IpAddr::V6(v6(1)));
    assert_eq!(h.tuple.dst, IpAddr::V6(v6(2)));
    // Cut anywhere inside the chain: truncated, never a panic.
    for n in 40..b.len() {
        let mut cut = b[..n].to_vec();
        cut[4..6].copy_from_slice(&((n - 40) as u16).to_be_bytes());
        assert!(parse(&cut, false).is_err(), "cut at {n}");
    }
}

/// RFC 8200 sec. 4.5 byte layout, written by hand: offset 0, M = 1 is
/// `00 01`; offset 185, M = 0 is `05 c8`.
#[test]
fn ipv6_fragment_word_is_read_in_network_order() {
    assert_eq!(&frag(TCP, 0, true, 0)[2..4], &[0x00, 0x01]);
    assert_eq!(&frag(TCP, 185, false, 0)[2..4], &[0x05, 0xc8]);
}

#[test]
fn ipv6_fragments_first_has_ports_others_do_not() {
    let seg = tcp(443, 50000, 7, 9, &[1u8; 10]);
    let first = ipv6(
        DEST_OPTS,
        0,
        &cat(&[&ext(FRAGMENT, 0), &frag(TCP, 0, true, 0xdead_beef), &seg]),
    );
    let h = parse(&first, false).unwrap();
    assert_eq!(
        (h.tuple.proto, h.tuple.sport, h.tuple.dport),
        (Protocol::TCP, 443, 50000)
    );
    assert_eq!(
        h.fragment,
        Some(Fragment {
            offset: 0,
            more: true,
            ident: 0xdead_beef
        })
    );
    // Non-first fragment whose next header claims destination options:
    // nothing after the fragment header may be read.
    let later = ipv6(
        FRAGMENT,
        0,
        &cat(&[&frag(DEST_OPTS, 185, false, 3), &[0xff; 3]]),
    );
    let h = parse(&later, false).unwrap();
    assert_eq!(
        (h.tuple.proto, h.tuple.sport, h.tuple.dport),
        (Protocol(DEST_OPTS), 0, 0)
    );
    assert_eq!(h.l4, L4Meta::None);
    assert_eq!(h.fragment.map(|f| (f.offset, f.more)), Some((185, false)));
}

#[test]
fn ipv6_hop_by_hop_must_come_first() {
    let b = ipv6(
        DEST_OPTS,
        0,
        &cat(&[&ext(HOP_BY_HOP, 0), &ext(UDP, 0), &udp(1, 2, b"")]),
    );
    assert!(matches!(parse(&b, false), Err(WireError::Invalid(_))));
}

#[test]
fn ipv6_esp_and_no_next_header_end_the_walk() {
    let esp = ipv6(ESP, 0, &[0xab; 24]);
    let h = parse(&esp, false).unwrap();
    assert_eq!(
        (h.tuple.proto, h.tuple.sport, h.l4),
        (Protocol(ESP), 0, L4Meta::None)
    );
    let none = ipv6(DEST_OPTS, 0, &cat(&[&ext(NO_NEXT, 0), &[1, 2, 3]]));
    assert_eq!(parse(&none, false).unwrap().tuple.proto, Protocol(NO_NEXT));
}

#[test]
fn icmpv6_echo_and_other_types() {
    let mut echo = vec![129, 0, 0, 0];
    echo.extend_from_slice(&0x0102u16.to_be_bytes());
    echo.extend_from_slice(&0x0304u16.to_be_bytes());
    let h = parse(&ipv6(ICMPV6, 0, &echo), false).unwrap();
    assert_eq!(
        h.l4,
        L4Meta::IcmpEcho {
            ident: 0x0102,
            seq: 0x0304,
            reply: true
        }
    );
    let unreachable = [1u8, 4, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        parse(&ipv6(ICMPV6, 0, &unreachable), false).unwrap().l4,
        L4Meta::None
    );
    assert!(parse(&ipv6(ICMPV6, 0, &[128, 0, 0]), false).is_err());
    // ICMPv4 type 13 (timestamp) with a wrong length: no L4 facts, not malformed.
    let h = parse(&ipv4(1, 0, 0, &[], &[13, 0, 0, 0, 0, 0, 0, 0]), false).unwrap();
    assert_eq!((h.tuple.proto, h.l4), (Protocol::ICMP, L4Meta::None));
}

#[test]
fn tcp_flags_sack_and_ack_rules() {
    let ip = Ipv4Spec::new(v4(1, 1, 1, 1), v4(2, 2, 2, 2));
    let spec = TcpSpec {
        sport: 1,
        dport: 2,
        seq: u32::MAX,
        ack: 77,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR),
        window: 100,
        sack: [(10, 20), (30, 40), (0, 0)],
    };
    let h = parse(&build_ipv4_tcp(&ip, &spec, b"").unwrap(), false).unwrap();
    let L4Meta::Tcp(t) = h.l4 else {
        panic!("{h:?}")
    };
    assert_eq!(t.seq, u64::from(u32::MAX));
    assert_eq!(t.ack, 0, "no ACK flag, no ack number");
    assert!(t.flags.has(TcpFlags::SYN) && t.flags.has(TcpFlags::ECE) && t.flags.has(TcpFlags::CWR));
    assert!(!t.flags.has(TcpFlags::ACK));
    assert_eq!(t.sack, [(10, 20), (30, 40), (0, 0)]);
    // Data offset below 5 is invalid.
    let mut bad = tcp(1, 2, 3, 4, b"");
    bad[12] = 4 << 4;
    assert!(matches!(
        parse(&ipv4(TCP, 0, 0, &[], &bad), false),
        Err(WireError::Invalid(_))
    ));
    // Data offset beyond the segment is truncation.
    bad[12] = 15 << 4;
    assert!(matches!(
        parse(&ipv4(TCP, 0, 0, &[], &bad), false),
        Err(WireError::Truncated(_))
    ));
}

#[test]
fn lengths_bound_the_packet() {
    let ip = Ipv4Spec::new(v4(1, 1, 1, 1), v4(2, 2, 2, 2));
    let b = build_ipv4_udp(&ip, 1, 2, b"0123456789").unwrap();
    // Trailing bytes (link padding) are ignored, len is the header's.
    let mut padded = b.clone();
    padded.extend_from_slice(&[0; 6]);
    assert_eq!(parse(&padded, false).unwrap(), parse(&b, false).unwrap());
    // Every strict prefix is truncated, never a panic.
    for n in 0..b.len() {
        assert!(parse(&b[..n], false).is_err(), "prefix {n}");
        assert!(parse(&with_sdap(SdapDlHeader::default(), &b[..n]), true).is_err());
    }
    let b6 = build_ipv6_tcp(&Ipv6Spec::new(v6(1), v6(2)), &TcpSpec::default(), b"xyz").unwrap();
    for n in 0..b6.len() {
        assert!(parse(&b6[..n], false).is_err(), "prefix {n}");
    }
    // Total length shorter than the header.
    let mut short = b.clone();
    short[2..4].copy_from_slice(&19u16.to_be_bytes());
    assert!(matches!(parse(&short, false), Err(WireError::Invalid(_))));
    // IHL below 5.
    let mut ihl = b.clone();
    ihl[0] = 0x44;
    assert!(matches!(parse(&ihl, false), Err(WireError::Invalid(_))));
    // UDP length below 8.
    let mut ulen = b.clone();
    ulen[24..26].copy_from_slice(&7u16.to_be_bytes());
    assert!(matches!(parse(&ulen, false), Err(WireError::Invalid(_))));
    // IPv6 payload length 0 (jumbogram style) carries nothing.
    let mut jumbo = b6.clone();
    jumbo[4..6].copy_from_slice(&[0, 0]);
    assert!(parse(&jumbo, false).is_err());
}

#[test]
fn unknown_protocols_parse_without_ports() {
    let gre = ipv4(47, 0, 0, &[], &[0; 12]);
    let h = parse(&gre, false).unwrap();
    assert_eq!(
        (h.tuple.proto, h.tuple.sport, h.tuple.dport, h.l4),
        (Protocol(47), 0, 0, L4Meta::None)
    );
    // ICMPv6 inside IPv4 and ICMP inside IPv6 are just numbers.
    assert_eq!(
        parse(&ipv4(ICMPV6, 0, 0, &[], &[]), false).unwrap().l4,
        L4Meta::None
    );
    assert_eq!(parse(&ipv6(1, 0, &[]), false).unwrap().l4, L4Meta::None);
}

#[test]
fn malformed_bytes_become_malformed_packets() {
    let now = Instant::from_millis(5);
    for (bytes, sdap) in [
        (vec![], false),
        (vec![], true),
        (vec![0x45, 0, 0], false),
        (vec![0x3f, 0x45], true),
        (vec![0xff; 64], false),
    ] {
        let p = packet_from_bytes(PacketId(3), bytes.clone().into(), sdap, now);
        assert!(p.malformed, "{bytes:?}");
        assert_eq!(p.len as usize, bytes.len());
        assert_eq!(p.payload.as_deref(), Some(&bytes[..]));
        assert_eq!(p.sdap_header, sdap);
        assert_eq!(p.created, now);
        assert_eq!(p.ecn, Ecn::NotEct);
        if sdap && !bytes.is_empty() {
            assert_eq!(p.qfi, Qfi(bytes[0] & 0x3f));
        }
    }
    // A well-formed one is not.
    let ip = Ipv4Spec::new(v4(1, 1, 1, 1), v4(2, 2, 2, 2));
    let b = build_ipv4_udp(&ip, 1, 2, b"").unwrap();
    let p = packet_from_bytes(PacketId(4), b.into(), false, now);
    assert!(!p.malformed);
    assert_eq!(p.len, 28);
}
