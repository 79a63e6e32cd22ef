//! The packet ledger's in-flight count: at the end of a run, every
//! downlink packet neither delivered nor dropped is looked for where it
//! can be, and counted there once ([`InFlight`]). Nothing here is a
//! difference of counters, so `created = delivered + dropped + in_flight`
//! is a real check: a packet the simulator lost without counting it shows
//! up as `unaccounted`.
//!
//! Below the TC pipeline a packet is an RLC SDU that may be in several
//! places at once (segments still in the transmitter, on the air, at the
//! receiver), and stale pieces of SDUs already delivered or dropped may
//! still travel (an AM retransmission of an SDU the UE got meanwhile, the
//! other segments of a UM SDU counted lost). Which SDUs are still open:
//! - AM: those the transmitter holds (neither acknowledged nor given up)
//!   that the receiver has not delivered;
//! - UM: those the transmitter holds (not completely sent) that the
//!   receiver has not reported lost, those with a
//!   PDU on the air that the receiver neither delivered nor reported lost,
//!   and those it holds partly received (or discarded, not yet reported).
//!
//! Cost: runs once per run, O(packets in flight); nothing on the hot path.

use super::{Ev, Sim};
use crate::report::InFlight;
use std::collections::{BTreeMap, BTreeSet};
use tcran_core::{Packet, PacketId};
use tcran_ran::rlc::{RlcMode, RlcPdu};

/// Packets in flight by place and by flow.
pub(super) struct Ledger {
    pub by_place: InFlight,
    pub by_flow: Vec<u64>,
}

impl Ledger {
    fn add(&mut self, place: fn(&mut InFlight) -> &mut u64, p: &Packet) {
        *place(&mut self.by_place) += 1;
        if let Some(n) = p.flow.and_then(|f| self.by_flow.get_mut(f.0 as usize)) {
            *n += 1;
        }
    }
}

impl Sim {
    pub(super) fn ledger(&self) -> Ledger {
        let mut l = Ledger {
            by_place: InFlight::default(),
            by_flow: vec![0; self.flows.len()],
        };
        // PDUs on the air: in transport blocks on their way to a UE, or
        // waiting for a HARQ retransmission; by (UE, DRB id).
        let mut air: BTreeMap<(usize, u8), Vec<&RlcPdu>> = BTreeMap::new();
        for ev in self.events.pending() {
            match ev {
                Ev::AtGnb(p) => l.add(|f| &mut f.core, p),
                Ev::AtUe(u, pdus) => {
                    for pdu in pdus {
                        air.entry((*u, pdu.drb.0)).or_default().push(pdu);
                    }
                }
                _ => {}
            }
        }
        for tb in self.mac.harq_tbs() {
            if let Some(u) = self.ues.iter().position(|x| x.rnti == tb.rnti) {
                for pdu in &tb.pdus {
                    air.entry((u, pdu.drb.0)).or_default().push(pdu);
                }
            }
        }
        for (u, ue) in self.ues.iter().enumerate() {
            if let Some(upf) = &ue.upf {
                upf.pipeline.for_each_queued(|p| l.add(|f| &mut f.upf, p));
            }
            for drb in &ue.drbs {
                drb.pipeline.for_each_queued(|p| l.add(|f| &mut f.tc, p));
                for p in drb.pdcp.held() {
                    l.add(|f| &mut f.reordering, p);
                }
                let on_air = air.get(&(u, drb.id.0)).map_or(&[][..], |v| &v[..]);
                let air_ids: BTreeSet<PacketId> = on_air.iter().map(|p| p.packet.id).collect();
                let partial: BTreeMap<PacketId, &Packet> =
                    drb.rx.partial_sdus().map(|(_, p)| (p.id, p)).collect();
                match drb.tx.params().mode {
                    RlcMode::Am => {
                        for h in drb.tx.held_sdus() {
                            if h.sn.is_some_and(|sn| drb.rx.has_delivered(sn)) {
                                continue; // its acknowledgement is on the way
                            }
                            let id = h.packet.id;
                            if h.to_send {
                                l.add(|f| &mut f.rlc, h.packet);
                            } else if air_ids.contains(&id) {
                                l.add(|f| &mut f.air, h.packet);
                            } else if partial.contains_key(&id) {
                                l.add(|f| &mut f.reassembly, h.packet);
                            } else {
                                // Lost on the air; the NACK will come.
                                l.add(|f| &mut f.rlc, h.packet);
                            }
                        }
                    }
                    RlcMode::Um => {
                        let mut seen = BTreeSet::new();
                        for h in drb.tx.held_sdus() {
                            // A segmented SDU the receiver found lost (a
                            // segment lost on the air) is counted dropped, or
                            // waits for that in the receiver (below), whatever
                            // of it is still to be sent.
                            if h.sn.is_some_and(|sn| drb.rx.reported_lost(sn)) {
                                continue;
                            }
                            seen.insert(h.packet.id);
                            l.add(|f| &mut f.rlc, h.packet);
                        }
                        for pdu in on_air {
                            let open = pdu.complete
                                || !(drb.rx.reported_lost(pdu.sn) || drb.rx.has_delivered(pdu.sn));
                            if open && seen.insert(pdu.packet.id) {
                                l.add(|f| &mut f.air, &pdu.packet);
                            }
                        }
                        let partial = drb
                            .rx
                            .partial_sdus()
                            .filter(|(sn, _)| sn.is_none_or(|sn| !drb.rx.reported_lost(sn)));
                        for (_, p) in partial {
                            if seen.insert(p.id) {
                                l.add(|f| &mut f.reassembly, p);
                            }
                        }
                    }
                }
            }
        }
        l
    }
}
