//! Live traffic: flows whose endpoints are real programs outside the
//! process (the emulator's network namespaces), carried through the same
//! core network and RAN node as the modelled flows, and measured alike.
//!
//! Contract:
//! - A packet from a server ([`Sim::live_downlink`]) crosses the core
//!   delay and enters the node; one from a UE ([`Sim::live_uplink`])
//!   enters the node's uplink at once. What the node delivers to a UE, or
//!   what reaches the server side after the core delay, comes out as
//!   [`LiveOutput`] for the driver to write.
//! - Flows are found by 5-tuple: the first packet of a connection (either
//!   way) opens a flow keyed by its downlink direction (server to UE), and
//!   the flow is measured like a modelled one (throughput, one-way delay
//!   and its layers, losses). ICMP echo pairs give round-trip times: from
//!   the request entering the emulated network to the reply leaving it,
//!   whichever side sent the request.
//! - The driver advances the simulator to `now` ([`Sim::run_until`])
//!   before handing it live packets at `now`.

use super::flows::{Endpoints, Flow};
use super::{CoreKey, Ev, Sim};
use std::collections::BTreeMap;
use tcran_core::packet::L4Meta;
use tcran_core::{FiveTuple, FlowId, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_gnb::Output;

/// A packet for the driver to write out.
#[derive(Debug)]
pub enum LiveOutput {
    /// Delivered to UE `rnti` at `at`.
    ToUe {
        rnti: Rnti,
        packet: Packet,
        at: Instant,
    },
    /// Reached the server side of the core network at `at`.
    ToServer { packet: Packet, at: Instant },
}

/// The live side of a run: flows by downlink 5-tuple and packets to write.
#[derive(Debug, Default)]
pub(super) struct Live {
    flows: BTreeMap<FiveTuple, usize>,
    out: std::collections::VecDeque<LiveOutput>,
}

/// A live flow's round-trip measurement: echo requests in flight by
/// (identifier, sequence), and the RTTs measured.
#[derive(Debug, Default)]
pub(super) struct LiveEnds {
    echo: BTreeMap<(u16, u16), Instant>,
    pub rtts: Vec<(Instant, tcran_core::Duration)>,
}

fn reversed(t: &FiveTuple) -> FiveTuple {
    FiveTuple {
        src: t.dst,
        dst: t.src,
        sport: t.dport,
        dport: t.sport,
        proto: t.proto,
    }
}

impl Sim {
    /// A packet a server sent at `now` (read from the server side): it
    /// reaches the RAN node after the core delay.
    pub fn live_downlink(&mut self, mut packet: Packet, now: Instant) {
        self.now = self.now.max(now);
        let i = self.live_flow(packet.tuple, now);
        packet.flow = Some(FlowId(i as u32));
        packet.created = now;
        packet.enqueued_at = now;
        self.next_id += 1;
        packet.id = PacketId(self.next_id);
        self.packets.created += 1;
        self.flows[i].created += 1;
        if let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: false,
        } = packet.l4
        {
            if let Endpoints::Live(ends) = &mut self.flows[i].ends {
                ends.echo.insert((ident, seq), now);
            }
        }
        let k = CoreKey(self.core.insert(packet));
        self.events.schedule(now + self.core_delay, Ev::AtGnb(k));
    }

    /// A packet UE `rnti` sent at `now` (read from the UE's side): it goes
    /// up through the node's uplink model.
    pub fn live_uplink(&mut self, rnti: Rnti, mut packet: Packet, now: Instant) {
        self.now = self.now.max(now);
        let i = self.live_flow(reversed(&packet.tuple), now);
        packet.flow = Some(FlowId(i as u32));
        packet.created = now;
        self.next_id += 1;
        packet.id = PacketId(self.next_id);
        if let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: false,
        } = packet.l4
        {
            if let Endpoints::Live(ends) = &mut self.flows[i].ends {
                ends.echo.insert((ident, seq), now);
            }
        }
        self.gnb.uplink(rnti, packet, now);
        if self.gnb.has_outputs() {
            self.drain_outputs();
        }
    }

    /// Downlink packets inside the model (the core, the node's queues, on
    /// the air): created, and neither delivered to the UE side (for a live
    /// flow: handed out to be written) nor dropped.
    pub fn downlink_held(&self) -> u64 {
        let p = &self.packets;
        p.created.saturating_sub(p.delivered + p.dropped)
    }

    /// The next packet to write out, oldest first.
    pub fn poll_live(&mut self) -> Option<LiveOutput> {
        self.live.out.pop_front()
    }

    /// The flow of downlink 5-tuple `tuple`, opened on first sight.
    fn live_flow(&mut self, tuple: FiveTuple, now: Instant) -> usize {
        if let Some(&i) = self.live.flows.get(&tuple) {
            return i;
        }
        let i = self.flows.len();
        let kind = match tuple.proto {
            Protocol::TCP => "tcp",
            Protocol::UDP => "udp",
            Protocol::ICMP | Protocol::ICMPV6 => "ping",
            _ => "ip",
        };
        let name = if tuple.sport == 0 && tuple.dport == 0 {
            format!("{kind} {} > {}", tuple.src, tuple.dst)
        } else {
            format!(
                "{kind} {}:{} > {}:{}",
                tuple.src, tuple.sport, tuple.dst, tuple.dport
            )
        };
        let rnti = tcran_gnb::ue_rnti(tuple.dst).unwrap_or(Rnti(0));
        self.flows.push(Flow::live(name, kind, rnti, tuple, now));
        self.series.add_flow(tuple.proto == Protocol::TCP);
        self.live.flows.insert(tuple, i);
        i
    }

    /// Whether flow `i` is a live one.
    pub(super) fn is_live(&self, i: usize) -> bool {
        matches!(self.flows[i].ends, Endpoints::Live(_))
    }

    /// A live packet the node delivered to a UE: its RTT if it answers an
    /// echo the UE sent, then out to the driver.
    pub(super) fn live_delivered(&mut self, out: &mut Output) {
        let Output::Delivered { rnti, packet, at } = out else {
            return;
        };
        self.echo_reply(packet, *at);
        self.live.out.push_back(LiveOutput::ToUe {
            rnti: *rnti,
            packet: std::mem::take(packet),
            at: *at,
        });
    }

    /// A live packet that crossed the core network up to the server side.
    pub(super) fn live_at_server(&mut self, packet: Packet) {
        self.echo_reply(&packet, self.now);
        self.live.out.push_back(LiveOutput::ToServer {
            packet,
            at: self.now,
        });
    }

    /// Records an RTT when `p` is an echo reply to a request of its flow.
    fn echo_reply(&mut self, p: &Packet, at: Instant) {
        let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: true,
        } = p.l4
        else {
            return;
        };
        let Some(i) = p.flow.map(|f| f.0 as usize) else {
            return;
        };
        if let Endpoints::Live(ends) = &mut self.flows[i].ends {
            if let Some(sent) = ends.echo.remove(&(ident, seq)) {
                ends.rtts.push((sent, at.saturating_since(sent)));
            }
        }
    }
}
