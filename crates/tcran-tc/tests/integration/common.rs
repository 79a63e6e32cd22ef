//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};
use tcran_core::{Ecn, FiveTuple, FlowId, Instant, Packet, PacketId, Protocol};

/// A UDP packet of flow `flow` (distinct source port per flow).
pub fn packet(id: u64, flow: u16, len: u32, ecn: Ecn, now: Instant) -> Packet {
    let tuple = FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 2)),
        sport: 10_000 + flow,
        dport: 5_000,
        proto: Protocol::UDP,
    };
    let mut p = Packet::new(PacketId(id), len, tuple, now);
    p.flow = Some(FlowId(flow as u32));
    p.ecn = ecn;
    p
}
