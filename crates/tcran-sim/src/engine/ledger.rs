//! The packet ledger's in-flight count at the end of a run: packets still
//! crossing the core network (pending events here), and every packet the
//! RAN node holds, where it holds it ([`tcran_gnb::Gnb::for_each_in_flight`]).
//! Nothing here is a difference of counters, so `created = delivered +
//! dropped + in_flight` is a real check: a packet lost without being
//! counted shows up as `unaccounted`.

use super::{Ev, Sim};
use crate::report::InFlight;
use tcran_core::Packet;
use tcran_gnb::Place;

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
    /// Whether `p` is its flow's data (what the ledger counts), not an ACK
    /// or echo reply going the other way: a downlink packet is addressed
    /// to a UE.
    #[inline]
    pub(super) fn is_data(&self, p: &Packet) -> bool {
        let downlink = tcran_gnb::ue_rnti(p.tuple.dst).is_some();
        p.flow
            .and_then(|f| self.flows.get(f.0 as usize))
            .is_none_or(|f| f.uplink != downlink)
    }

    pub(super) fn ledger(&self) -> Ledger {
        let mut l = Ledger {
            by_place: InFlight::default(),
            by_flow: vec![0; self.flows.len()],
        };
        for ev in self.events.pending() {
            if let Ev::AtGnb(k) | Ev::AtServer(k) = ev {
                let p = &self.core[k.0];
                if self.is_data(p) {
                    l.add(|f| &mut f.core, p);
                }
            }
        }
        let mut add = |place: Place, p: &Packet| {
            if !self.is_data(p) {
                return;
            }
            let field: fn(&mut InFlight) -> &mut u64 = match place {
                Place::Upf => |f| &mut f.upf,
                // A place of the uplink counts with its downlink twin: the
                // ledger's places are layers, whichever end holds them.
                Place::Tc | Place::UeTc => |f| &mut f.tc,
                Place::Rlc | Place::UeRlc => |f| &mut f.rlc,
                Place::Air | Place::UplinkAir => |f| &mut f.air,
                Place::Reassembly | Place::GnbReassembly => |f| &mut f.reassembly,
                Place::Reordering | Place::GnbReordering => |f| &mut f.reordering,
                Place::Xn => |f| &mut f.xn,
            };
            l.add(field, p);
        };
        self.gnb.for_each_in_flight(&mut add);
        if let Some(c) = &self.cells {
            c.for_each_in_flight(&mut add);
        }
        l
    }
}
