//! parse(build(x)) == x for every builder, over random headers (proptest).

use crate::common;

use common::*;
use proptest::prelude::*;
use std::net::IpAddr;
use tcran_core::packet::{L4Meta, TcpFlags, TcpMeta};
use tcran_core::{Ecn, FiveTuple, Instant, PacketId, Protocol, Qfi};
use tcran_wire::*;

fn expected_tcp(t: &TcpSpec, payload: usize) -> L4Meta {
    let mut sack = [(0u64, 0u64); 3];
    for (s, &(l, r)) in sack.iter_mut().zip(t.sack.iter().filter(|&&b| b != (0, 0))) {
        *s = (u64::from(l), u64::from(r));
    }
    L4Meta::Tcp(TcpMeta {
        seq: u64::from(t.seq),
        ack: if t.flags.has(TcpFlags::ACK) {
            u64::from(t.ack)
        } else {
            0
        },
        payload: payload as u32,
        flags: t.flags,
        sack,
        ..TcpMeta::default()
    })
}

#[allow(clippy::too_many_arguments)]
fn headers(
    src: IpAddr,
    dst: IpAddr,
    ports: (u16, u16),
    proto: Protocol,
    dscp: tcran_core::Dscp,
    ecn: Ecn,
    len: usize,
    l4: L4Meta,
) -> Headers {
    Headers {
        sdap: None,
        qfi: Qfi(0),
        tuple: FiveTuple {
            src,
            dst,
            sport: ports.0,
            dport: ports.1,
            proto,
        },
        dscp,
        ecn,
        len: len as u32,
        fragment: None,
        l4,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ipv4_udp_round_trips(ip in ipv4_spec(), sport: u16, dport: u16, data in payload()) {
        let bytes = build_ipv4_udp(&ip, sport, dport, &data).unwrap();
        prop_assert_eq!(bytes.len(), 20 + 8 + data.len());
        prop_assert!(ipv4_header_checksum_ok(&bytes));
        let want = headers(ip.src.into(), ip.dst.into(), (sport, dport), Protocol::UDP,
            ip.dscp, ip.ecn, bytes.len(), L4Meta::Udp { seq: 0 });
        prop_assert_eq!(parse(&bytes, false).unwrap(), want);
    }

    #[test]
    fn ipv6_udp_round_trips(ip in ipv6_spec(), sport: u16, dport: u16, data in payload()) {
        let bytes = build_ipv6_udp(&ip, sport, dport, &data).unwrap();
        prop_assert_eq!(bytes.len(), 40 + 8 + data.len());
        let want = headers(ip.src.into(), ip.dst.into(), (sport, dport), Protocol::UDP,
            ip.dscp, ip.ecn, bytes.len(), L4Meta::Udp { seq: 0 });
        prop_assert_eq!(parse(&bytes, false).unwrap(), want);
    }

    #[test]
    fn ipv4_tcp_round_trips(ip in ipv4_spec(), tcp in tcp_spec(), data in payload()) {
        let bytes = build_ipv4_tcp(&ip, &tcp, &data).unwrap();
        prop_assert!(ipv4_header_checksum_ok(&bytes));
        let want = headers(ip.src.into(), ip.dst.into(), (tcp.sport, tcp.dport), Protocol::TCP,
            ip.dscp, ip.ecn, bytes.len(), expected_tcp(&tcp, data.len()));
        prop_assert_eq!(parse(&bytes, false).unwrap(), want);
    }

    #[test]
    fn ipv6_tcp_round_trips(ip in ipv6_spec(), tcp in tcp_spec(), data in payload()) {
        let bytes = build_ipv6_tcp(&ip, &tcp, &data).unwrap();
        let want = headers(ip.src.into(), ip.dst.into(), (tcp.sport, tcp.dport), Protocol::TCP,
            ip.dscp, ip.ecn, bytes.len(), expected_tcp(&tcp, data.len()));
        prop_assert_eq!(parse(&bytes, false).unwrap(), want);
    }

    #[test]
    fn icmp_echo_round_trips(
        ip4 in ipv4_spec(), ip6 in ipv6_spec(), ident: u16, seq: u16, reply: bool, data in payload()
    ) {
        let l4 = L4Meta::IcmpEcho { ident, seq, reply };
        let b4 = build_ipv4_icmp_echo(&ip4, ident, seq, reply, &data).unwrap();
        let want4 = headers(ip4.src.into(), ip4.dst.into(), (0, 0), Protocol::ICMP,
            ip4.dscp, ip4.ecn, b4.len(), l4);
        prop_assert_eq!(parse(&b4, false).unwrap(), want4);
        let b6 = build_ipv6_icmp_echo(&ip6, ident, seq, reply, &data).unwrap();
        let want6 = headers(ip6.src.into(), ip6.dst.into(), (0, 0), Protocol::ICMPV6,
            ip6.dscp, ip6.ecn, b6.len(), l4);
        prop_assert_eq!(parse(&b6, false).unwrap(), want6);
    }

    #[test]
    fn sdap_header_round_trips_and_packet_carries_it(
        ip in ipv4_spec(), sport: u16, dport: u16, data in payload(),
        rdi: bool, rqi: bool, qfi in 0u8..64, id: u64, now: u64,
    ) {
        let sdap = SdapDlHeader { rdi, rqi, qfi: Qfi(qfi) };
        prop_assert_eq!(SdapDlHeader::from_byte(sdap.to_byte()), sdap);
        let ipb = build_ipv4_udp(&ip, sport, dport, &data).unwrap();
        let bytes = with_sdap(sdap, &ipb);
        let h = parse(&bytes, true).unwrap();
        prop_assert_eq!(h.sdap, Some(sdap));
        prop_assert_eq!(h.qfi, Qfi(qfi));
        prop_assert_eq!(h.len as usize, ipb.len());
        prop_assert_eq!(Headers { sdap: None, qfi: Qfi(0), ..h }, parse(&ipb, false).unwrap());

        let p = packet_from_bytes(PacketId(id), bytes.clone().into(), true, Instant::from_nanos(now));
        prop_assert!(!p.malformed);
        prop_assert_eq!(p.id, PacketId(id));
        prop_assert_eq!(p.created, Instant::from_nanos(now));
        prop_assert_eq!(p.enqueued_at, Instant::from_nanos(now));
        prop_assert_eq!((p.len, p.tuple, p.dscp, p.ecn, p.qfi, p.l4), (h.len, h.tuple, h.dscp, h.ecn, h.qfi, h.l4));
        prop_assert!(p.sdap_header);
        prop_assert_eq!(p.payload.as_deref(), Some(&bytes[..]));
        prop_assert_eq!(p.flow, None);
    }
}

#[test]
fn builders_reject_payloads_that_do_not_fit() {
    let ip = Ipv4Spec::new(v4(10, 0, 0, 1), v4(10, 0, 0, 2));
    let big = vec![0u8; 70_000];
    assert_eq!(
        build_ipv4_udp(&ip, 1, 2, &big),
        Err(WireError::TooLong(70_000))
    );
    let ip6 = Ipv6Spec::new(v6(1), v6(2));
    assert!(matches!(
        build_ipv6_udp(&ip6, 1, 2, &big),
        Err(WireError::TooLong(_))
    ));
    // The largest that fits: 65535 - 20 - 8.
    let max = vec![0u8; 65_507];
    let b = build_ipv4_udp(&ip, 1, 2, &max).unwrap();
    assert_eq!(parse(&b, false).unwrap().len, 65_535);
}
