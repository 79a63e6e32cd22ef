//! Handover: a UE leaves one [`Gnb`] ([`Gnb::detach`]) and joins another
//! ([`Gnb::attach`]) with what TS 38.300 §9.2.3.2 moves between them.
//!
//! Contract:
//! - **What moves** (the [`UeContext`], carried over Xn by the driver):
//!   - the TC pipeline's queued packets of each bearer, in arrival order,
//!     pushed into the target's pipeline for that bearer (built from the
//!     source's configuration as it stands), or dropped by configuration
//!     ([`TcForwarding`]): the TC pipeline sits above PDCP, so forwarding
//!     it is the operator's choice, not the standard's;
//!   - the PDCP SDUs not yet acknowledged (§9.2.3.2.2 data forwarding):
//!     RLC AM: every SDU the transmitter holds that the UE has not
//!     received (new, sent but unacknowledged, lost on the air, partly
//!     received); RLC UM: the SDUs not completely sent;
//!   - the PDCP SN status (SN STATUS TRANSFER): SDUs that had a COUNT keep
//!     it and the target numbers new SDUs from the source's next COUNT, so
//!     the UE's PDCP receiver, which moves with the UE, keeps delivering
//!     in order;
//!   - the UE itself: its SDAP rules, its UPF queue (the core's, it does
//!     not depend on the cell), its uplink packets waiting for a grant.
//! - **What does not**: RLC is re-established (TS 38.322 §5.1.2: fresh
//!   entities at the target, partial SDUs at the UE discarded), HARQ is
//!   flushed (TS 38.321 §5.12). UM data on the air or partly received is
//!   lost: dropped at [`Layer::Handover`] with reason `air_loss`; TC
//!   packets not forwarded are dropped at [`Layer::Handover`] with reason
//!   `no_route`. Nothing is lost uncounted: every packet the source held
//!   for the UE is in the context ([`UeContext::for_each_in_flight`],
//!   [`Place::Xn`]), delivered already, or reported dropped by the source.
//! - **Indices stay stable**: the source keeps the UE's slot as a
//!   tombstone (no bearers, out of its RNTI index and of the MAC's
//!   inputs); the node's events still pending for it (transport blocks
//!   on their way, STATUS PDUs, timers) find nothing when they fire, and
//!   the data they carried was accounted at the detach. A UE that comes
//!   back gets a new slot.
//! - The driver decides the timing: it holds the context for the
//!   interruption and the Xn delay and hands it to the target's
//!   [`Gnb::attach`]; downlink packets for the UE arriving meanwhile go to
//!   the target after the attach, behind the forwarded ones, as the
//!   source's forwarding would deliver them.

use crate::drb::Drb;
use crate::ledger::Place;
use crate::node::{Gnb, Layer, Upf};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use tcran_core::{ConfigError, DrbId, DropReason, Instant, Packet, Rnti};
use tcran_ran::pdcp::PdcpRx;
use tcran_ran::rlc::{RlcMode, RlcParams, RlcRx, RlcTx};
use tcran_ran::sdap::Sdap;
use tcran_ran::{AnyChannel, ChannelSample};
use tcran_tc::PipelineConfig;

/// What a source cell does with the TC pipeline's queued packets of a
/// handed-over UE.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TcForwarding {
    /// Forwarded over Xn, in arrival order, into the target's pipeline of
    /// the same bearer.
    #[default]
    Forward,
    /// Dropped at the source (counted at [`Layer::Handover`]).
    Drop,
}

/// A UE on its way between two cells: what the source hands the target
/// (module docs).
#[derive(Debug)]
pub struct UeContext {
    rnti: Rnti,
    sdap: Sdap,
    upf: Option<Upf>,
    uplink: Vec<Packet>,
    bearers: Vec<Bearer>,
    counts: HandoverCounts,
}

/// One bearer's part of a [`UeContext`].
#[derive(Debug)]
struct Bearer {
    id: DrbId,
    priority: u8,
    pipeline: PipelineConfig,
    rlc: RlcParams,
    /// The UE's PDCP receiver (the UE keeps it).
    pdcp: PdcpRx,
    /// SN STATUS TRANSFER: the COUNT of the next SDU not yet numbered.
    next_count: u64,
    /// PDCP SDUs forwarded, oldest first, with the COUNT they had.
    pdcp_sdus: Vec<(Packet, Option<u64>)>,
    /// The TC pipeline's queued packets, in arrival order.
    tc: Vec<Packet>,
}

/// What a handover moved and lost, counted at the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HandoverCounts {
    /// Packets forwarded out of the TC pipelines (and their bytes).
    pub tc_forwarded: u64,
    pub tc_forwarded_bytes: u64,
    /// PDCP SDUs forwarded (not yet acknowledged, or not yet sent).
    pub pdcp_forwarded: u64,
    pub pdcp_forwarded_bytes: u64,
    /// Packets the handover dropped (TC packets not forwarded, UM data
    /// lost with the source's RLC).
    pub dropped: u64,
}

impl HandoverCounts {
    /// Packets forwarded over Xn.
    pub fn forwarded(&self) -> u64 {
        self.tc_forwarded + self.pdcp_forwarded
    }
    /// Bytes forwarded over Xn.
    pub fn forwarded_bytes(&self) -> u64 {
        self.tc_forwarded_bytes + self.pdcp_forwarded_bytes
    }
}

impl UeContext {
    pub fn rnti(&self) -> Rnti {
        self.rnti
    }

    /// What the handover forwarded and dropped at the source.
    pub fn counts(&self) -> HandoverCounts {
        self.counts
    }

    /// Calls `f` once for every downlink packet the context carries: on
    /// Xn ([`Place::Xn`]) for forwarded data, in the UE's UPF queue or
    /// PDCP reordering buffer for what moves with the UE. With
    /// [`Gnb::for_each_in_flight`] of every cell, the ledger of a
    /// multi-cell driver balances while a UE is between cells.
    pub fn for_each_in_flight(&self, mut f: impl FnMut(Place, &Packet)) {
        if let Some(upf) = &self.upf {
            upf.pipeline.for_each_queued(|p| f(Place::Upf, p));
        }
        for b in &self.bearers {
            for (p, _) in &b.pdcp_sdus {
                f(Place::Xn, p);
            }
            for p in &b.tc {
                f(Place::Xn, p);
            }
            for p in b.pdcp.held() {
                f(Place::Reordering, p);
            }
        }
    }
}

impl Gnb {
    /// Takes UE `rnti` out of the cell at `now` (the handover command:
    /// the UE stops listening to this cell). Returns `None` if the UE is
    /// not here. See the module docs for what the context carries.
    pub fn detach(&mut self, rnti: Rnti, now: Instant, tc: TcForwarding) -> Option<UeContext> {
        self.advance(now);
        let u = self.ue_of(rnti)?;
        // Copies of SDUs on the air (transport blocks on their way, HARQ
        // processes): only UM loses them; AM forwards the SDU itself.
        let mut on_air: Vec<(DrbId, Packet, bool, u64)> = Vec::new();
        let copy = |p: &tcran_ran::rlc::RlcPdu| (p.drb, p.sdu_copy(), p.complete, p.sn);
        for ev in self.events.pending() {
            if let crate::node::Ev::AtUe(x, pdus) = ev {
                if *x == u {
                    on_air.extend(pdus.iter().map(copy));
                }
            }
        }
        for tb in self.mac.harq_tbs().filter(|tb| tb.rnti == rnti) {
            on_air.extend(tb.pdus.iter().map(copy));
        }
        self.mac.flush_harq(rnti);
        self.ue_index.retain(|&(r, _)| r != rnti);
        let ue = &mut self.ues[u];
        ue.detached = true;
        ue.sample = ChannelSample::Outage;
        ue.ul_grant = None;
        let drbs = std::mem::take(&mut ue.drbs);
        let uplink = std::mem::take(&mut ue.ul_queue);
        let mut upf = ue.upf.take();
        if let Some(upf) = &mut upf {
            upf.wake = None;
        }
        let sdap = ue.sdap.clone();
        let mut counts = HandoverCounts::default();
        let mut lost = Vec::new();
        let mut bearers = Vec::with_capacity(drbs.len());
        for drb in drbs {
            self.departed
                .add_bearer(&crate::ran_node::volumes(&drb.counters));
            let mut queued = Vec::new();
            drb.pipeline.for_each_queued(|p| queued.push(p.clone()));
            // Arrival order across the pipeline's queues.
            queued.sort_by_key(|p| (p.enqueued_at, p.id));
            let tc_packets = match tc {
                TcForwarding::Forward => {
                    counts.tc_forwarded += queued.len() as u64;
                    counts.tc_forwarded_bytes +=
                        queued.iter().map(|p| u64::from(p.len)).sum::<u64>();
                    queued
                }
                TcForwarding::Drop => {
                    for p in queued {
                        lost.push((DropReason::NoRoute, p));
                    }
                    Vec::new()
                }
            };
            let mut pdcp_sdus = Vec::new();
            let mut held = BTreeSet::new();
            for h in drb.tx.held_sdus() {
                let delivered = h.sn.is_some_and(|sn| drb.rx.has_delivered(sn));
                let lost_um = drb.tx.params().mode == RlcMode::Um
                    && h.sn.is_some_and(|sn| drb.rx.reported_lost(sn));
                // Delivered: the UE has it (its acknowledgement was on the
                // way); UM reported lost: counted dropped already.
                if delivered || lost_um {
                    continue;
                }
                held.insert(h.packet.id);
                counts.pdcp_forwarded += 1;
                counts.pdcp_forwarded_bytes += u64::from(h.packet.len);
                pdcp_sdus.push((h.packet.clone(), h.count));
            }
            if drb.tx.params().mode == RlcMode::Um {
                // UM SDUs completely sent but not yet received: lost with
                // the source's HARQ and the UE's re-established RLC (the
                // ledger's UM rules, `crate::ledger`).
                for (d, p, complete, sn) in &on_air {
                    let open =
                        *complete || !(drb.rx.reported_lost(*sn) || drb.rx.has_delivered(*sn));
                    if *d == drb.id && open && held.insert(p.id) {
                        lost.push((DropReason::AirLoss, p.clone()));
                    }
                }
                for (sn, p) in drb.rx.partial_sdus() {
                    if sn.is_none_or(|sn| !drb.rx.reported_lost(sn)) && held.insert(p.id) {
                        lost.push((DropReason::AirLoss, p.clone()));
                    }
                }
            }
            bearers.push(Bearer {
                id: drb.id,
                priority: drb.priority,
                pipeline: drb.pipeline.config(),
                rlc: drb.tx.params().clone(),
                next_count: drb.tx.next_count(),
                pdcp: drb.pdcp,
                pdcp_sdus,
                tc: tc_packets,
            });
        }
        counts.dropped = lost.len() as u64;
        for (reason, p) in lost {
            self.count_drop(Layer::Handover, reason, p);
        }
        Some(UeContext {
            rnti,
            sdap,
            upf,
            uplink,
            bearers,
            counts,
        })
    }

    /// Puts the UE of `ctx` into this cell at `now`, on `channel`: fresh
    /// RLC entities, the UE's PDCP receiver, the forwarded PDCP SDUs (with
    /// their COUNTs) in the RLC transmitter, then the forwarded TC packets
    /// pushed into the bearer's pipeline in order. Refused (the context
    /// handed back) if a UE with that RNTI is already here.
    #[allow(clippy::result_large_err)]
    pub fn attach(
        &mut self,
        ctx: UeContext,
        channel: AnyChannel,
        now: Instant,
    ) -> Result<(), (UeContext, ConfigError)> {
        self.advance(now);
        if self.ue_of(ctx.rnti).is_some() {
            let e = ConfigError::new("rnti", ctx.rnti.0, "a UE with this RNTI is in the cell");
            return Err((ctx, e));
        }
        let built: Result<Vec<_>, ConfigError> = ctx
            .bearers
            .iter()
            .map(|b| b.pipeline.build().map_err(|e| e.within("pipeline")))
            .collect();
        let pipelines = match built {
            Ok(v) => v,
            Err(e) => return Err((ctx, e)),
        };
        let u = self.ues.len();
        let mut forwarded = Vec::with_capacity(ctx.bearers.len());
        let bearers = ctx
            .bearers
            .into_iter()
            .zip(pipelines)
            .map(|(b, pipeline)| {
                let mut tx = RlcTx::new(b.rlc.clone(), b.id);
                tx.continue_counts_from(b.next_count);
                forwarded.push((b.pdcp_sdus, b.tc));
                Drb::new(
                    b.id,
                    b.priority,
                    pipeline,
                    tx,
                    RlcRx::new(b.rlc, b.id),
                    b.pdcp,
                )
            })
            .collect();
        self.ues.push(crate::node::Ue::attached(
            ctx.rnti, channel, ctx.sdap, bearers, ctx.upf,
        ));
        let at = self
            .ue_index
            .binary_search_by_key(&ctx.rnti, |&(r, _)| r)
            .unwrap_or_else(|i| i);
        self.ue_index.insert(at, (ctx.rnti, u));
        for (d, (pdcp_sdus, tc)) in forwarded.into_iter().enumerate() {
            for (p, count) in pdcp_sdus {
                if let Err(p) = self.ues[u].drbs[d].tx.enqueue_forwarded(p, count, self.now) {
                    self.count_drop(Layer::Rlc, DropReason::RlcFull, p);
                }
            }
            let mut released = 0;
            for p in tc {
                released += self.ues[u].drbs[d].push(p, self.now, &mut self.outputs);
            }
            self.released_to_rlc(u, d, released);
        }
        if self.ues[u].upf.is_some() {
            self.upf_egress(u);
        }
        for p in ctx.uplink {
            self.uplink_from(u, p);
        }
        Ok(())
    }
}
