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
//!   whichever side sent the request; the RTT belongs to the request's flow.
//! - A UE with uplink DRBs (`[[ues.uplink_drbs]]`) sends through the same
//!   UE-side stack as a modelled uplink flow (SDAP, TC pipeline, PDCP, RLC,
//!   the UE's MAC with its BSRs, SRs and grants, the PUSCH, the gNB's RLC
//!   and PDCP, `tcran_gnb::uplink_drbs`), so its packets are data like the
//!   downlink's: each connection then has a second flow, keyed by its
//!   uplink 5-tuple (UE to server, `direction = "uplink"`), that counts
//!   every packet the UE sent in the ledger (created, delivered at the
//!   server side, dropped by layer and reason, or in flight) and measures
//!   them at the server side, as a modelled uplink flow is measured. A UE
//!   without uplink DRBs keeps the node's uplink delay model, whose packets
//!   (ACKs, echo replies) are not data: the ledger counts the downlink
//!   only, as for modelled downlink flows.
//! - With `[[cells]]` a live packet goes to and from the UE's serving
//!   cell, and waits for the target while its UE hands over, as a
//!   modelled flow's packets do.
//! - The driver advances the simulator to `now` ([`Sim::run_until`])
//!   before handing it live packets at `now`.

use super::flows::{Endpoints, Flow};
use super::{CoreKey, Ev, Sim};
use crate::handover_impact::Role;
use std::collections::{BTreeMap, BTreeSet};
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

/// The live side of a run: flows by 5-tuple ([`Live::key`]) and packets
/// to write.
#[derive(Debug, Default)]
pub(super) struct Live {
    flows: BTreeMap<FiveTuple, usize>,
    out: std::collections::VecDeque<LiveOutput>,
    /// The UEs whose uplink packets cross uplink DRBs (module docs).
    uplink_drbs: BTreeSet<Rnti>,
}

impl Live {
    /// The live side of a run of `cfg`.
    pub(super) fn new(cfg: &crate::scenario::SimConfig) -> Live {
        Live {
            uplink_drbs: cfg
                .ues
                .iter()
                .filter(|u| !u.uplink_drbs.is_empty())
                .map(|u| Rnti(u.rnti))
                .collect(),
            ..Live::default()
        }
    }

    /// Whether a packet from UE `rnti` is its own uplink flow's data
    /// (module docs).
    fn uplink_is_data(&self, rnti: Rnti) -> bool {
        self.uplink_drbs.contains(&rnti)
    }

    /// The key of the flow of a packet with 5-tuple `sent` (as sent) from
    /// UE `from_ue` (`None`: from a server): the 5-tuple as sent, except
    /// for a UE without uplink DRBs, whose packets belong to the
    /// connection's downlink flow.
    fn key(&self, sent: &FiveTuple, from_ue: Option<Rnti>) -> FiveTuple {
        match from_ue {
            Some(rnti) if !self.uplink_is_data(rnti) => reversed(sent),
            _ => *sent,
        }
    }
}

/// A live flow's round-trip measurement: echo requests in flight by
/// (identifier, sequence), and the RTTs measured.
#[derive(Debug, Default)]
pub(super) struct LiveEnds {
    echo: BTreeMap<(u16, u16), Instant>,
    pub rtts: Vec<(Instant, tcran_core::Duration)>,
    /// Whether the flow carried an echo request: it measures RTTs (the
    /// flow of a ping's replies, its own with uplink DRBs, does not).
    pub requests: bool,
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
        let i = self.live_flow(packet.tuple, false, now);
        packet.flow = Some(FlowId(i as u32));
        packet.created = now;
        packet.enqueued_at = now;
        self.next_id += 1;
        packet.id = PacketId(self.next_id);
        self.packets.created += 1;
        self.flows[i].created += 1;
        self.echo_request(i, &packet, now);
        let k = CoreKey(self.core.insert(packet));
        self.events.schedule(now + self.core_delay, Ev::AtGnb(k));
    }

    /// A packet UE `rnti` sent at `now` (read from the UE's side): it goes
    /// up through the node's uplink (its uplink DRBs, else the delay
    /// model); for a UE with uplink DRBs it is its uplink flow's data.
    pub fn live_uplink(&mut self, rnti: Rnti, mut packet: Packet, now: Instant) {
        self.now = self.now.max(now);
        let data = self.live.uplink_is_data(rnti);
        let i = self.live_flow(self.live.key(&packet.tuple, Some(rnti)), data, now);
        packet.flow = Some(FlowId(i as u32));
        packet.created = now;
        self.next_id += 1;
        packet.id = PacketId(self.next_id);
        if data {
            self.packets.created += 1;
            self.flows[i].created += 1;
        }
        self.echo_request(i, &packet, now);
        if self.cells.is_some() {
            self.uplink_cells(rnti, packet);
            return;
        }
        self.gnb.uplink(rnti, packet, now);
        if self.gnb.has_outputs() {
            self.drain_outputs();
        }
    }

    /// Data packets inside the model (the core, the node's queues, on the
    /// air): created, and neither delivered (for a live flow: handed out
    /// to be written) nor dropped. The downlink's, and the uplink's of UEs
    /// with uplink DRBs (module docs).
    pub fn packets_held(&self) -> u64 {
        let p = &self.packets;
        p.created.saturating_sub(p.delivered + p.dropped)
    }

    /// The next packet to write out, oldest first.
    pub fn poll_live(&mut self) -> Option<LiveOutput> {
        self.live.out.pop_front()
    }

    /// The flow keyed by `tuple` ([`Live::key`]), opened on first sight;
    /// `uplink`: its data goes from the UE to the server.
    fn live_flow(&mut self, tuple: FiveTuple, uplink: bool, now: Instant) -> usize {
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
        let ue = if uplink { tuple.src } else { tuple.dst };
        let rnti = tcran_gnb::ue_rnti(ue).unwrap_or(Rnti(0));
        let mut flow = Flow::live(name, kind, rnti, tuple, now);
        flow.uplink = uplink;
        self.flows.push(flow);
        self.series.add_flow(tuple.proto == Protocol::TCP);
        if let Some(c) = self.cells.as_deref_mut() {
            // A live download is a bulk flow to the handover measures, a
            // live echo or datagram flow a call (docs/simulator.md, "What
            // a handover does").
            let role = match tuple.proto {
                _ if uplink => None,
                Protocol::TCP => Some(Role::Bulk),
                Protocol::UDP | Protocol::ICMP | Protocol::ICMPV6 => Some(Role::Call),
                _ => None,
            };
            c.impact.add_flow(role.map(|r| (rnti.0, r)));
        }
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

    /// A live packet that crossed the core network up to the server side:
    /// measured there if it is its uplink flow's data.
    pub(super) fn live_at_server(&mut self, packet: Packet) {
        if let Some(i) = packet.flow.map(|f| f.0 as usize) {
            if self.flows[i].uplink {
                self.receive(i, &packet);
            }
        }
        self.echo_reply(&packet, self.now);
        self.live.out.push_back(LiveOutput::ToServer {
            packet,
            at: self.now,
        });
    }

    /// Notes when `p`, a packet of flow `i` entering the network at `now`,
    /// is an echo request.
    fn echo_request(&mut self, i: usize, p: &Packet, now: Instant) {
        if let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: false,
        } = p.l4
        {
            if let Endpoints::Live(ends) = &mut self.flows[i].ends {
                ends.echo.insert((ident, seq), now);
                ends.requests = true;
            }
        }
    }

    /// Records an RTT on the request's flow when `p` is an echo reply.
    fn echo_reply(&mut self, p: &Packet, at: Instant) {
        let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: true,
        } = p.l4
        else {
            return;
        };
        // The request went the other way, from the reply's destination.
        let request = reversed(&p.tuple);
        let from_ue = tcran_gnb::ue_rnti(request.src);
        let Some(&i) = self.live.flows.get(&self.live.key(&request, from_ue)) else {
            return;
        };
        if let Endpoints::Live(ends) = &mut self.flows[i].ends {
            if let Some(sent) = ends.echo.remove(&(ident, seq)) {
                ends.rtts.push((sent, at.saturating_since(sent)));
            }
        }
    }
}
