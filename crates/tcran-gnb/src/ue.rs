//! The UE side of the downlink: transport blocks decoded by the UE go
//! through its RLC receiver (reassembly, t-Reassembly, STATUS PDUs in AM)
//! and its PDCP receiver (reordering with t-Reordering, TS 38.323
//! §5.2.2.2) up to its IP layer ([`Output::Delivered`]); and the RLC timers
//! of both ends.
//!
//! Contract: packets come out in the order PDCP releases them, each with
//! the time it reached the UE's IP layer; SDUs PDCP discards (late or
//! duplicate) are drops at layer `pdcp`, SDUs the RLC receiver gives up on
//! are drops at layer `air`.
//!
//! [`Output::Delivered`]: crate::Output::Delivered

use crate::node::{Ev, Gnb, Output};
use tcran_core::Packet;
use tcran_ran::rlc::{RlcPdu, StatusPdu};

impl Gnb {
    pub(crate) fn at_ue(&mut self, u: usize, mut pdus: Vec<RlcPdu>) {
        let now = self.now;
        let mut delivered = std::mem::take(&mut self.scratch.delivered);
        for pdu in pdus.drain(..) {
            let Some(d) = self.ues[u].drbs.iter().position(|x| x.id == pdu.drb) else {
                continue;
            };
            self.ues[u].drbs[d].at_ue(
                pdu,
                now,
                &mut delivered,
                &mut self.scratch,
                &mut self.outputs,
            );
            self.send_status(u, d);
            self.arm_rlc(u, d);
        }
        self.pdu_lists.push(pdus);
        self.deliver_up(u, &mut delivered);
        self.scratch.delivered = delivered;
    }

    /// Hands the packets UE `u`'s PDCP released to its IP layer.
    fn deliver_up(&mut self, u: usize, delivered: &mut Vec<Packet>) {
        let (rnti, at) = (self.ues[u].rnti, self.now);
        // Built in place in the output list, not on the stack and moved there.
        let delivered = delivered.drain(..);
        let outputs = delivered.map(|packet| Output::Delivered { rnti, packet, at });
        self.outputs.list.extend(outputs);
    }

    pub(crate) fn status_at_gnb(&mut self, u: usize, d: usize, status: &StatusPdu) {
        let drb = &mut self.ues[u].drbs[d];
        drb.on_status(status, self.now, &mut self.scratch, &mut self.outputs);
        self.arm_rlc(u, d);
    }

    pub(crate) fn arm_rlc(&mut self, u: usize, d: usize) {
        // A triggered STATUS waiting for an uplink grant needs no wake-up:
        // the grant builds it.
        let waits_for_grant = self.sr.is_some() && self.ues[u].ul_grant.is_some();
        if let Some(t) = self.ues[u].drbs[d].arm_rlc(self.now, waits_for_grant) {
            self.events.schedule(t, Ev::RlcWake(u, d));
        }
    }

    pub(crate) fn rlc_timers(&mut self, u: usize, d: usize) {
        let mut up = Vec::new();
        self.ues[u].drbs[d].on_rlc_timers(self.now, &mut up, &mut self.scratch, &mut self.outputs);
        self.send_status(u, d);
        self.abandoned(u, d);
        self.arm_rlc(u, d);
        if !up.is_empty() {
            self.deliver_up(u, &mut up);
        }
    }
}
