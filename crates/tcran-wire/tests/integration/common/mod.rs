//! Strategies and fixtures shared by the tcran-wire integration tests.
#![allow(dead_code)]

use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};
use tcran_core::packet::TcpFlags;
use tcran_core::{Dscp, Ecn};
use tcran_wire::{Ipv4Spec, Ipv6Spec, TcpSpec};

pub fn ecn() -> impl Strategy<Value = Ecn> {
    prop_oneof![
        Just(Ecn::NotEct),
        Just(Ecn::Ect0),
        Just(Ecn::Ect1),
        Just(Ecn::Ce)
    ]
}

pub fn ipv4_spec() -> impl Strategy<Value = Ipv4Spec> {
    (
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        0u8..64,
        ecn(),
        any::<u8>(),
        any::<u16>(),
        any::<bool>(),
    )
        .prop_map(|(s, d, dscp, ecn, ttl, ident, df)| Ipv4Spec {
            src: Ipv4Addr::from(s),
            dst: Ipv4Addr::from(d),
            dscp: Dscp(dscp),
            ecn,
            ttl,
            ident,
            dont_fragment: df,
        })
}

pub fn ipv6_spec() -> impl Strategy<Value = Ipv6Spec> {
    (
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        0u8..64,
        ecn(),
        any::<u8>(),
        0u32..(1 << 20),
    )
        .prop_map(|(s, d, dscp, ecn, hop_limit, flow_label)| Ipv6Spec {
            src: Ipv6Addr::from(s),
            dst: Ipv6Addr::from(d),
            dscp: Dscp(dscp),
            ecn,
            hop_limit,
            flow_label,
        })
}

pub fn tcp_spec() -> impl Strategy<Value = TcpSpec> {
    (
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        any::<u32>(),
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec((1u32.., any::<u32>()), 0..=3),
    )
        .prop_map(|(sport, dport, seq, ack, flags, window, blocks)| {
            let mut sack = [(0, 0); 3];
            for (s, b) in sack.iter_mut().zip(blocks) {
                *s = b;
            }
            TcpSpec {
                sport,
                dport,
                seq,
                ack,
                flags: TcpFlags(flags),
                window,
                sack,
            }
        })
}

pub fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..300)
}

pub fn v4(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
    Ipv4Addr::new(a, b, c, d)
}

pub fn v6(last: u16) -> Ipv6Addr {
    Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, last)
}

/// Internet checksum (RFC 1071) over `bytes`, for building fixtures by hand.
pub fn inet_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for w in bytes.chunks(2) {
        let hi = u32::from(w[0]) << 8;
        let lo = w.get(1).map_or(0, |&b| u32::from(b));
        sum += hi | lo;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}
