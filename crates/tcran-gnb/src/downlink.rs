//! The downlink into the RAN: the UPF queue (optional), SDAP's QFI -> DRB
//! mapping, the DRB's TC pipeline, and its egress into PDCP/RLC.
//!
//! Contract: a packet is pushed at once (`at_gnb`); the pipeline's egress
//! runs right after every arrival and every per-TTI report, and again
//! whenever the pipeline's `next_wakeup()` says a refusal may turn into a
//! yes (pacers release bytes as the TTI elapses, thesis Fig. 3.4; shapers
//! refill), rounded up to the `tc_tick` timer grid when one is configured.
//! Every packet a stage drops comes out as [`Output::Dropped`] with its
//! layer (`upf`, `sdap`, `tc`, `rlc`).
//!
//! [`Output::Dropped`]: crate::Output::Dropped

use crate::drb::arm_pipeline;
use crate::node::{Ev, Gnb, Layer};
use tcran_core::{DropReason, Packet, Stamp};

impl Gnb {
    #[inline(always)]
    pub(crate) fn at_gnb(&mut self, mut p: Packet) {
        let now = self.now;
        p.stamps.upf_in = Stamp::at(now);
        let Some(u) = self.route(&p) else {
            self.count_drop(Layer::Sdap, DropReason::NoRoute, p);
            return;
        };
        if let Some(upf) = self.ues[u].upf.as_mut() {
            upf.pipeline.push(p, now);
            self.collect_upf_drops(u);
            self.upf_egress(u);
            return;
        }
        self.sdap_in(u, p);
    }

    /// Moves what the UE's UPF queue lets go on to SDAP.
    pub(crate) fn upf_egress(&mut self, u: usize) {
        let now = self.now;
        while let Some(p) = self.ues[u]
            .upf
            .as_mut()
            .and_then(|upf| upf.pipeline.pull(now))
        {
            self.sdap_in(u, p);
        }
        self.collect_upf_drops(u);
        let Some(upf) = self.ues[u].upf.as_mut() else {
            return;
        };
        if let Some(t) = arm_pipeline(&upf.pipeline, &mut upf.wake, now, self.tc_tick) {
            self.events.schedule(t, Ev::UpfWake(u));
        }
    }

    fn collect_upf_drops(&mut self, u: usize) {
        let Some(upf) = self.ues[u].upf.as_mut() else {
            return;
        };
        self.outputs
            .pipeline_drops(Layer::Upf, &mut upf.pipeline, self.now);
    }

    /// SDAP: maps the packet to its DRB and pushes it into that DRB's TC
    /// pipeline.
    #[inline(always)]
    fn sdap_in(&mut self, u: usize, mut p: Packet) {
        let now = self.now;
        let had_header = p.sdap_header;
        let mapping = match self.ues[u].sdap.apply(&mut p) {
            Ok(m) => m,
            Err(reason) => {
                self.count_drop(Layer::Sdap, reason, p);
                return;
            }
        };
        if mapping.header_bytes > 0 && !had_header {
            // Real bytes get the real header (TS 37.324 §6.2.2.2), so a
            // CE mark or a capture finds the IP header where it is.
            if let Some(ip) = p.payload.take() {
                let h = tcran_wire::SdapDlHeader {
                    rdi: false,
                    rqi: false,
                    qfi: p.qfi,
                };
                p.payload = Some(tcran_wire::with_sdap(h, &ip).into_boxed_slice());
            }
        }
        let Some(d) = self.ues[u].drbs.iter().position(|d| d.id == mapping.drb) else {
            self.count_drop(Layer::Sdap, DropReason::NoRoute, p);
            return;
        };
        let drb = &mut self.ues[u].drbs[d];
        let released = drb.push(p, now, &mut self.outputs);
        self.released_to_rlc(u, d, released);
    }

    /// Moves what the pipeline lets go down into PDCP/RLC.
    pub(crate) fn egress(&mut self, u: usize, d: usize) {
        let released = self.ues[u].drbs[d].egress(self.now, &mut self.outputs);
        self.released_to_rlc(u, d, released);
    }

    /// After an egress of (UE, DRB) that released `bytes` into RLC: the
    /// UPF queue's report counts them, and both timers are armed.
    pub(crate) fn released_to_rlc(&mut self, u: usize, d: usize, bytes: u64) {
        if let Some(upf) = self.ues[u].upf.as_mut() {
            upf.released += bytes;
        }
        self.arm_rlc(u, d);
        if let Some(t) = self.ues[u].drbs[d].arm_tc(self.now, self.tc_tick) {
            self.events.schedule(t, Ev::TcWake(u, d));
        }
    }
}
