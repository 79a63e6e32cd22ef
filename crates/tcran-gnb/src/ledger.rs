//! Where the packets the node holds are: every packet handed in by
//! [`Gnb::downlink`] (and by [`Gnb::uplink`] for a UE with uplink DRBs) and neither delivered nor dropped is found in one
//! place ([`Place`]) and reported once. Nothing here is a difference of
//! counters, so a driver's check `in = delivered + dropped + in flight` is
//! a real one: a packet the node lost without a reason shows up.
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
//! Cost: O(packets held); meant for the end of a run or a debug view.

use crate::drb::Drb;
use crate::node::{Ev, Gnb};
use std::collections::{BTreeMap, BTreeSet};
use tcran_core::{Packet, PacketId};
use tcran_ran::rlc::{RlcMode, RlcPdu};

/// Where a packet held by the node is. A packet spread over several
/// places is reported in the first one listed that holds a part of it
/// still to be sent, retransmitted or received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// The UE's UPF queue.
    Upf,
    /// The TC pipeline queues of the DRBs.
    Tc,
    /// The RLC transmitter: SDUs with bytes waiting for their first
    /// transmission or a retransmission, and (AM) SDUs sent but lost on
    /// the air, waiting for the receiver's NACK.
    Rlc,
    /// On the air: in a transport block not yet decoded, or waiting for a
    /// HARQ retransmission.
    Air,
    /// The UE's RLC receiver: SDUs partly received, and UM SDUs just
    /// discarded whose loss is not counted yet.
    Reassembly,
    /// The UE's PDCP receiver: SDUs waiting for earlier COUNTs.
    Reordering,
    /// Forwarded over Xn between two cells in a handover
    /// ([`crate::UeContext`]); never reported by a node itself.
    Xn,
    /// Uplink DRBs (`uplink_drbs`): the TC pipeline in the UE.
    UeTc,
    /// The UE's RLC transmitter (as [`Place::Rlc`] for the downlink).
    UeRlc,
    /// In a PUSCH transport block whose HARQ process is open.
    UplinkAir,
    /// The gNB's RLC receiver (as [`Place::Reassembly`]).
    GnbReassembly,
    /// The gNB's PDCP receiver (as [`Place::Reordering`]).
    GnbReordering,
}

impl Gnb {
    /// Calls `f` once for every packet the node holds (both directions), with where
    /// it is.
    pub fn for_each_in_flight(&self, mut f: impl FnMut(Place, &Packet)) {
        // PDUs on the air: in transport blocks on their way to a UE, or
        // waiting for a HARQ retransmission; by (UE, DRB id).
        let mut air: BTreeMap<(usize, u8), Vec<&RlcPdu>> = BTreeMap::new();
        for ev in self.events.pending() {
            if let Ev::AtUe(u, pdus) = ev {
                for pdu in pdus {
                    air.entry((*u, pdu.drb.0)).or_default().push(pdu);
                }
            }
        }
        for tb in self.mac.harq_tbs() {
            if let Some(u) = self.ue_of(tb.rnti) {
                for pdu in &tb.pdus {
                    air.entry((u, pdu.drb.0)).or_default().push(pdu);
                }
            }
        }
        for (u, ue) in self.ues.iter().enumerate() {
            if let Some(upf) = &ue.upf {
                upf.pipeline.for_each_queued(|p| f(Place::Upf, p));
            }
            for drb in &ue.drbs {
                let on_air = air.get(&(u, drb.id.0)).map_or(&[][..], |v| &v[..]);
                drb_in_flight(drb, on_air, &DOWNLINK, &mut f);
            }
        }
        if let Some(ul) = &self.uplink_drbs {
            ul.for_each_drb(|_, drb, on_air| drb_in_flight(drb, on_air, &UPLINK, &mut f));
        }
    }
}

/// The places of one direction's DRB: its pipeline, RLC transmitter, the
/// air, the RLC and PDCP receivers.
struct Places {
    tc: Place,
    rlc: Place,
    air: Place,
    reassembly: Place,
    reordering: Place,
}

const DOWNLINK: Places = Places {
    tc: Place::Tc,
    rlc: Place::Rlc,
    air: Place::Air,
    reassembly: Place::Reassembly,
    reordering: Place::Reordering,
};

const UPLINK: Places = Places {
    tc: Place::UeTc,
    rlc: Place::UeRlc,
    air: Place::UplinkAir,
    reassembly: Place::GnbReassembly,
    reordering: Place::GnbReordering,
};

/// Calls `f` once for every packet DRB `drb` holds (module docs), its
/// PDUs on the air being `on_air`.
fn drb_in_flight(
    drb: &Drb,
    on_air: &[&RlcPdu],
    places: &Places,
    f: &mut impl FnMut(Place, &Packet),
) {
    drb.pipeline.for_each_queued(|p| f(places.tc, p));
    for p in drb.pdcp.held() {
        f(places.reordering, p);
    }
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
                    f(places.rlc, h.packet);
                } else if air_ids.contains(&id) {
                    f(places.air, h.packet);
                } else if partial.contains_key(&id) {
                    f(places.reassembly, h.packet);
                } else {
                    // Lost on the air; the NACK will come.
                    f(places.rlc, h.packet);
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
                f(places.rlc, h.packet);
            }
            for pdu in on_air {
                let open =
                    pdu.complete || !(drb.rx.reported_lost(pdu.sn) || drb.rx.has_delivered(pdu.sn));
                if open && seen.insert(pdu.packet.id) {
                    f(places.air, &pdu.packet);
                }
            }
            let partial = drb
                .rx
                .partial_sdus()
                .filter(|(sn, _)| sn.is_none_or(|sn| !drb.rx.reported_lost(sn)));
            for (_, p) in partial {
                if seen.insert(p.id) {
                    f(places.reassembly, p);
                }
            }
        }
    }
}
