//! One UE's uplink data path, sans-IO: the UE's SDAP (QFI -> DRB), a TC
//! pipeline per uplink DRB, its RLC transmitter (with the UE's buffer
//! limit) and MAC ([`tcran_ran::mac::ue`]: BSR, SR, LCP), and at the gNB
//! the DRB's RLC and PDCP receivers.
//!
//! Contract:
//! - [`UeUplink::push`] takes a packet of the UE's IP layer: SDAP maps its
//!   QFI to an uplink DRB (unmapped: dropped, [`Layer::Sdap`]), whose
//!   pipeline takes it; what the pipeline lets go enters RLC (full:
//!   dropped, [`Layer::Rlc`]).
//! - [`UeUplink::on_slot`] runs the UE's slot: the MAC sees each DRB's
//!   RLC buffer (one logical channel per DRB, in configuration order),
//!   triggers BSRs and SRs, and for a grant (the DCI's TB for this slot)
//!   shares it by LCP; each RLC entity fills its share into the MAC PDU.
//!   Then every pipeline gets the per-TTI report a UE's MAC can fill
//!   ([`tcran_tc::LowerLayerReport`]): the grant's TBS, MCS and PRBs as
//!   the DCI gave them, what its RLC sent, what its RLC holds and how old
//!   its head is, and the HARQ outcomes the caller reports (a UE learns
//!   them from the new-data indicator of its next DCI). A pacer (5G-BDP,
//!   e5G-BDP, DynRLC...) works on this report unchanged.
//! - [`UeUplink::at_gnb`] takes a PDU the gNB decoded: RLC rx, PDCP rx,
//!   and the packets PDCP lets go up are appended for the core.
//! - AM: the gNB's receiver's STATUS PDUs come out of
//!   [`UeUplink::poll_status`] for the caller to carry on the downlink,
//!   and go in at the UE by [`UeUplink::on_status`].
//! - Timers: [`UeUplink::next_wakeup`] / [`UeUplink::on_timeout`] (pacer
//!   releases, RLC and PDCP timers of both ends).
//! - Nothing is lost uncounted: every packet pushed is, at any time,
//!   in a pipeline, in RLC (either end), in PDCP reordering, delivered up,
//!   or in [`UeUplink::take_drops`] with its layer and reason.

use crate::config::DrbConfig;
use crate::drb::{Drb, Outputs, Scratch};
use crate::node::{Layer, Output};
use tcran_core::{ConfigError, DrbId, DropReason, Duration, Instant, Packet, Rnti};
use tcran_ran::mac::ue::{LogicalChannelConfig, UeMac, UeMacConfig, UeMacSlot};
use tcran_ran::rlc::{RlcPdu, StatusPdu};
use tcran_ran::sdap::{Sdap, SdapConfig, SdapRule};
use tcran_tc::LowerLayerReport;

/// What the DCI of a grant for new data told the UE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UlDci {
    pub tb_bytes: u32,
    pub mcs: Option<u8>,
    pub prbs: u16,
    /// The TBS every PRB of the UE's bandwidth part would carry at the
    /// DCI's MCS: the UE knows both (RRC gave the BWP, the DCI the MCS)
    /// and the TS 38.214 procedure, so its MAC can tell its pacer the
    /// capacity of its channel.
    pub bwp_tb_bytes: u32,
}

/// One UE's uplink DRBs and MAC (module docs).
#[derive(Debug)]
pub struct UeUplink {
    rnti: Rnti,
    sdap: Sdap,
    /// Per DRB: the pipeline and RLC transmitter at the UE, the RLC and
    /// PDCP receivers at the gNB.
    drbs: Vec<Drb>,
    mac: UeMac,
    tti: Duration,
    /// The channel's capacity per slot as the last DCI showed it.
    capacity: u64,
    buffers: Vec<u64>,
    shares: Vec<u64>,
    outputs: Outputs,
    scratch: Scratch,
}

impl UeUplink {
    /// The UE `rnti`'s uplink DRBs `drbs`, SDAP rules `sdap` (default:
    /// every QFI to the first DRB) and MAC `mac`: its logical channels are
    /// the DRBs' in order; left at the default single channel, each DRB
    /// gets one with its `priority` + 1 (TS 38.331 priorities start at 1).
    /// `slot` is the numerology's slot (the reports' TTI).
    pub fn new(
        rnti: Rnti,
        drbs: &[DrbConfig],
        sdap: Option<&SdapConfig>,
        mac: &UeMacConfig,
        slot: Duration,
        now: Instant,
    ) -> Result<UeUplink, ConfigError> {
        if drbs.is_empty() {
            return Err(ConfigError::new(
                "drbs",
                "[]",
                "at least one uplink DRB is needed",
            ));
        }
        let mut mac = mac.clone();
        if mac.logical_channels == UeMacConfig::default().logical_channels {
            mac.logical_channels = drbs
                .iter()
                .map(|d| LogicalChannelConfig {
                    priority: d.priority.saturating_add(1).min(16),
                    ..LogicalChannelConfig::default()
                })
                .collect();
        }
        if mac.logical_channels.len() != drbs.len() {
            return Err(ConfigError::new(
                "mac.logical_channels",
                mac.logical_channels.len(),
                format!("must list one channel per uplink DRB ({})", drbs.len()),
            ));
        }
        let mac = mac.build(now).map_err(|e| e.within("mac"))?;
        let sdap = match sdap {
            Some(c) => c.build().map_err(|e| e.within("sdap"))?,
            None => SdapConfig {
                rules: (0..64)
                    .map(|qfi| SdapRule {
                        qfi,
                        drb: drbs[0].id,
                    })
                    .collect(),
                ..SdapConfig::default()
            }
            .build()?,
        };
        let mut built = Vec::with_capacity(drbs.len());
        for (d, dc) in drbs.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("drbs[{d}]"));
            if drbs[..d].iter().any(|o| o.id == dc.id) {
                return Err(ConfigError::new(
                    format!("drbs[{d}].id"),
                    dc.id,
                    "must be unique within the UE",
                ));
            }
            built.push(Drb::from_config(dc).map_err(at)?);
        }
        let n = built.len();
        Ok(UeUplink {
            rnti,
            sdap,
            drbs: built,
            mac,
            tti: slot,
            capacity: 0,
            buffers: vec![0; n],
            shares: vec![0; n],
            outputs: Outputs::default(),
            scratch: Scratch::default(),
        })
    }

    pub fn rnti(&self) -> Rnti {
        self.rnti
    }

    /// The UE's MAC (its counters, whether an SR is pending).
    pub fn mac(&self) -> &UeMac {
        &self.mac
    }

    /// The uplink DRB ids, in configuration (logical channel) order.
    pub fn drb_ids(&self) -> impl Iterator<Item = DrbId> + '_ {
        self.drbs.iter().map(|d| d.id)
    }

    /// Bytes the UE's RLC transmitters hold (headers included: what a BSR
    /// reports).
    pub fn rlc_bytes(&self) -> u64 {
        self.drbs.iter().map(|d| d.tx.buffer_status().total()).sum()
    }

    /// The uplink DRBs, in configuration (logical channel) order.
    pub(crate) fn drbs(&self) -> &[Drb] {
        &self.drbs
    }

    /// The per-TTI report DRB `d`'s pipeline got last.
    pub fn last_report(&self, d: usize) -> &LowerLayerReport {
        &self.drbs[d].last_tti.report
    }

    /// A packet of the UE's IP layer.
    pub fn push(&mut self, p: Packet, now: Instant) {
        let drb = match self.sdap.map(p.qfi) {
            Ok(m) => m.drb,
            Err(reason) => {
                self.outputs.drop(Layer::Sdap, reason, p, now);
                return;
            }
        };
        match self.drbs.iter_mut().find(|d| d.id == drb) {
            Some(d) => {
                d.push(p, now, &mut self.outputs);
            }
            None => self.outputs.drop(Layer::Sdap, DropReason::NoRoute, p, now),
        }
    }

    /// The UE's slot `slot` starting at `now` (module docs); `dci`: a grant
    /// for new data in this slot; `harq`: (ACKs, NACKs) the UE learnt of
    /// since its last slot. PDUs for the grant are appended to `pdus`.
    pub fn on_slot(
        &mut self,
        now: Instant,
        slot: u64,
        dci: Option<UlDci>,
        harq: (u16, u16),
        pdus: &mut Vec<RlcPdu>,
    ) -> UeMacSlot {
        for (b, d) in self.buffers.iter_mut().zip(&self.drbs) {
            *b = d.tx.buffer_status().total();
        }
        let out = self.mac.on_slot(
            now,
            slot,
            &self.buffers,
            dci.map(|g| g.tb_bytes),
            &mut self.shares,
        );
        if let Some(g) = dci {
            self.capacity = u64::from(g.bwp_tb_bytes.max(g.tb_bytes));
        }
        let dci = dci.unwrap_or_default();
        // 5G-BDP's channel capacity is what the channel offers, not the
        // grant: on the uplink the grant follows the BSR, which follows the
        // RLC buffer the pacer keeps short, so a pacer fed the grant alone
        // shrinks the grants it is fed (the non-virtuous cycle of thesis
        // sec. 3.4). The downlink reports the larger of the grant and a
        // fair share for the same reason; a UE does not know how many UEs
        // share the cell, so its share is the whole bandwidth part.
        let granted = u64::from(dci.tb_bytes).max(self.capacity);
        for (d, drb) in self.drbs.iter_mut().enumerate() {
            let share = u32::try_from(self.shares[d]).unwrap_or(u32::MAX);
            let pulled = if share > 0 {
                drb.fill(share, now, pdus, &mut self.scratch, &mut self.outputs)
            } else {
                0
            };
            let bs = drb.tx.buffer_status();
            let report = LowerLayerReport {
                tti: self.tti,
                backlog_bytes: bs.new_payload_bytes + bs.retx_bytes,
                backlog_sdus: bs.sdus_held,
                pulled_bytes: pulled,
                granted_bytes: granted,
                max_bytes: self.capacity,
                head_of_line_age: drb
                    .tx
                    .head_of_line_arrival()
                    .map_or(Duration::ZERO, |t| now.saturating_since(t)),
                mcs: dci.mcs,
                prbs: u32::from(dci.prbs),
                harq_acks: harq.0,
                harq_nacks: harq.1,
                ..LowerLayerReport::default()
            };
            drb.pipeline.on_report(&report, now);
            drb.last_tti.at = now;
            drb.last_tti.report = report;
            drb.last_tti.new_payload_bytes = bs.new_payload_bytes;
            drb.egress(now, &mut self.outputs);
        }
        out
    }

    /// A PDU the gNB decoded; what PDCP lets go up is appended to `up`.
    pub fn at_gnb(&mut self, pdu: RlcPdu, now: Instant, up: &mut Vec<Packet>) {
        if let Some(d) = self.drbs.iter_mut().find(|d| d.id == pdu.drb) {
            d.at_ue(pdu, now, up, &mut self.scratch, &mut self.outputs);
        }
    }

    /// A PDU the gNB will never decode (HARQ gave up): RLC UM counts the
    /// SDUs it loses; AM recovers them by its STATUS reports.
    pub fn lost(&mut self, pdu: &RlcPdu, now: Instant) {
        if let Some(d) = self.drbs.iter_mut().find(|d| d.id == pdu.drb) {
            d.rx.on_pdu_lost(pdu, &mut self.scratch.packets);
            for p in self.scratch.packets.drain(..) {
                self.outputs.drop(Layer::Air, DropReason::AirLoss, p, now);
            }
        }
    }

    /// An AM STATUS PDU the gNB's receiver of `drb` has ready at `now`.
    pub fn poll_status(&mut self, drb: DrbId, now: Instant) -> Option<StatusPdu> {
        self.drbs
            .iter_mut()
            .find(|d| d.id == drb)?
            .rx
            .poll_status(now)
    }

    /// An AM STATUS PDU of `drb` reached the UE's transmitter.
    pub fn on_status(&mut self, drb: DrbId, status: &StatusPdu, now: Instant) {
        if let Some(d) = self.drbs.iter_mut().find(|d| d.id == drb) {
            d.on_status(status, now, &mut self.scratch, &mut self.outputs);
        }
    }

    /// When the pipelines or the RLC/PDCP timers next need to run.
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        self.drbs
            .iter()
            .flat_map(|d| {
                [
                    d.pipeline.next_wakeup(now),
                    d.tx.next_wakeup(),
                    d.rx.next_timer(),
                    d.pdcp.next_wakeup(),
                ]
            })
            .flatten()
            .min()
    }

    /// Runs what is due at `now`; packets PDCP's t-Reordering lets go are
    /// appended to `up`.
    pub fn on_timeout(&mut self, now: Instant, up: &mut Vec<Packet>) {
        for d in &mut self.drbs {
            d.on_rlc_timers(now, up, &mut self.scratch, &mut self.outputs);
            d.abandoned(now, &mut self.outputs, &mut self.scratch);
            d.egress(now, &mut self.outputs);
        }
    }

    /// Moves the drops since the last call to the node's outputs, counted
    /// there by layer and reason (the node's drop counts cover both
    /// directions).
    pub(crate) fn take_outputs(&mut self, into: &mut Outputs) {
        if self.outputs.list.is_empty() {
            return;
        }
        for o in self.outputs.list.drain(..) {
            match o {
                Output::Dropped {
                    packet,
                    layer,
                    reason,
                    at,
                } => into.drop(layer, reason, packet, at),
                Output::DropWithdrawn { id, flow, at, .. } => {
                    into.withdraw_air_loss(id, flow, at);
                }
                other => into.list.push(other),
            }
        }
    }

    /// Moves the drops since the last call to `into`, as
    /// [`Output::Dropped`] (and [`Output::DropWithdrawn`]) values.
    pub fn take_drops(&mut self, into: &mut Vec<Output>) {
        into.append(&mut self.outputs.list);
    }
}

mod control;
#[cfg(test)]
mod tests;
