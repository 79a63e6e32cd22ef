//! The identity a flow stamps on every packet it creates.

use tcran_core::packet::L4Meta;
use tcran_core::{Dscp, Ecn, FiveTuple, FlowId, Instant, Packet, PacketId, Qfi};

/// Flow id, 5-tuple, DSCP, ECN codepoint and QFI of one direction of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    pub flow: FlowId,
    pub tuple: FiveTuple,
    pub dscp: Dscp,
    /// ECN codepoint of data packets. TCP endpoints override it per packet
    /// (ECT only on data, following their congestion control).
    pub ecn: Ecn,
    pub qfi: Qfi,
}

impl FlowSpec {
    pub fn new(flow: FlowId, tuple: FiveTuple) -> FlowSpec {
        FlowSpec {
            flow,
            tuple,
            dscp: Dscp::DEFAULT,
            ecn: Ecn::NotEct,
            qfi: Qfi::default(),
        }
    }

    /// The opposite direction (ACKs, echo replies): addresses and ports
    /// swapped, same flow id, DSCP and QFI, not ECN-capable.
    pub fn reversed(&self) -> FlowSpec {
        let t = self.tuple;
        FlowSpec {
            tuple: FiveTuple {
                src: t.dst,
                dst: t.src,
                sport: t.dport,
                dport: t.sport,
                proto: t.proto,
            },
            ecn: Ecn::NotEct,
            ..*self
        }
    }

    /// A packet of `len` IP bytes created `now` (id 0: the engine numbers it).
    pub fn packet(&self, len: u32, now: Instant, l4: L4Meta) -> Packet {
        let mut p = Packet::new(PacketId(0), len, self.tuple, now);
        p.dscp = self.dscp;
        p.ecn = self.ecn;
        p.qfi = self.qfi;
        p.flow = Some(self.flow);
        p.l4 = l4;
        p
    }
}
