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

use crate::node::{Ev, Gnb, Layer, Output};
use tcran_core::{DropReason, Instant, Packet};
use tcran_ran::rlc::{RlcMode, RlcPdu, StatusPdu};

impl Gnb {
    pub(crate) fn at_ue(&mut self, u: usize, mut pdus: Vec<RlcPdu>) {
        let now = self.now;
        let mut delivered = std::mem::take(&mut self.scratch_packets);
        for pdu in pdus.drain(..) {
            let Some(d) = self.ues[u].drbs.iter().position(|x| x.id == pdu.drb) else {
                continue;
            };
            let first = delivered.len();
            let drb = &mut self.ues[u].drbs[d];
            drb.rx.on_pdu(pdu, now, &mut delivered);
            for p in &delivered[first..] {
                if let Some(t) = p.stamps.rlc_in.get() {
                    drb.counters.delivered_packets += 1;
                    drb.counters.rlc_delay_ns += now.saturating_since(t).as_nanos();
                }
            }
            // Only an AM transmitter gives up on SDUs the UE may hold.
            if drb.tx.params().mode == RlcMode::Am {
                for p in &delivered[first..] {
                    self.remember_delivery(u, d, p.id);
                }
            }
            self.pdcp_in(u, d, &mut delivered, first);
            self.send_status(u, d);
            self.arm_rlc(u, d);
        }
        self.pdu_lists.push(pdus);
        self.deliver_up(u, &mut delivered);
        self.scratch_packets = delivered;
    }

    /// Passes the SDUs the RLC of (UE, DRB) just delivered (`sdus[first..]`)
    /// through the UE's PDCP receiver: `sdus[first..]` becomes what PDCP
    /// lets go up; what it discards is counted.
    fn pdcp_in(&mut self, u: usize, d: usize, sdus: &mut Vec<Packet>, first: usize) {
        let now = self.now;
        let mut counts = std::mem::take(&mut self.scratch_counts);
        let drb = &mut self.ues[u].drbs[d];
        drb.rx.drain_counts(&mut counts);
        // The common case, SDUs in order: they stay where they are.
        if !drb.pdcp.pass_in_order(&counts) {
            let mut from_rlc = std::mem::take(&mut self.scratch_pdcp);
            let mut dropped = Vec::new();
            from_rlc.extend(sdus.drain(first..));
            for (p, &c) in from_rlc.drain(..).zip(&counts) {
                drb.pdcp.on_sdu(c, p, now, sdus, &mut dropped);
            }
            self.scratch_pdcp = from_rlc;
            for (p, reason) in dropped {
                self.count_drop(Layer::Pdcp, reason, p);
            }
        }
        counts.clear();
        self.scratch_counts = counts;
    }

    /// Hands the packets UE `u`'s PDCP released to its IP layer.
    fn deliver_up(&mut self, u: usize, delivered: &mut Vec<Packet>) {
        let (rnti, at) = (self.ues[u].rnti, self.now);
        for packet in delivered.drain(..) {
            self.outputs.push(Output::Delivered { rnti, packet, at });
        }
    }

    pub(crate) fn status_at_gnb(&mut self, u: usize, d: usize, status: &StatusPdu) {
        let now = self.now;
        let drb = &mut self.ues[u].drbs[d];
        let mut departures = std::mem::take(&mut self.scratch_departures);
        drb.tx.on_status(status, now, &mut departures);
        drb.pipeline.on_status_pdu(now);
        self.departed(u, d, &mut departures);
        self.scratch_departures = departures;
        self.abandoned(u, d);
        self.arm_rlc(u, d);
    }

    pub(crate) fn arm_rlc(&mut self, u: usize, d: usize) {
        // A triggered STATUS waiting for an uplink grant needs no wake-up:
        // the grant builds it.
        let waits_for_grant = self.sr.is_some() && self.ues[u].ul_grant.is_some();
        let drb = &mut self.ues[u].drbs[d];
        let status = if waits_for_grant {
            None
        } else {
            drb.rx.status_at()
        };
        let next = Instant::earliest(
            Instant::earliest(drb.tx.next_wakeup(), drb.rx.next_timer()),
            Instant::earliest(status, drb.pdcp.next_wakeup()),
        );
        if let Some(t) = next {
            let t = t.max(self.now);
            if drb.rlc_wake.is_none_or(|w| t < w) {
                drb.rlc_wake = Some(t);
                self.events.schedule(t, Ev::RlcWake(u, d));
            }
        }
    }

    pub(crate) fn rlc_timers(&mut self, u: usize, d: usize) {
        let now = self.now;
        let mut lost = std::mem::take(&mut self.scratch_packets);
        let drb = &mut self.ues[u].drbs[d];
        drb.tx.on_timer(now);
        drb.rx.on_timer(now, &mut lost);
        for p in lost.drain(..) {
            self.count_drop(Layer::Air, DropReason::AirLoss, p);
        }
        self.scratch_packets = lost;
        // t-Reordering: what it lets go goes up to the applications.
        let mut up = Vec::new();
        self.ues[u].drbs[d].pdcp.on_timer(now, &mut up);
        self.send_status(u, d);
        self.abandoned(u, d);
        self.arm_rlc(u, d);
        if !up.is_empty() {
            self.deliver_up(u, &mut up);
        }
    }
}
