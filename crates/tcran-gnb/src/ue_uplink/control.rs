//! The control surface of a UE's uplink DRBs: what E2 service models and
//! xApps read of a UE-side pipeline, and the one apply of a [`Change`] to
//! it (the downlink's is `crate::control`).
//!
//! Contract:
//! - [`UeUplink::apply`] applies one change to one uplink DRB's pipeline
//!   all or nothing, with the pipeline's own rule
//!   ([`tcran_tc::Pipeline::apply_change`]), through the same bearer code
//!   as the downlink ([`crate::drb::Drb::apply`]): marks counted so far are
//!   collected first, what the change sheds is dropped with its reason,
//!   and what it lets go enters the UE's RLC at once. The UE's timers
//!   need no arming: the cell's uplink runs each UE's due timers at every
//!   slot ([`crate::uplink_drbs`]).
//! - [`UeUplink::kpis`] is the view of the layers below the pipeline. The
//!   RLC occupancy is the UE's own buffer, exactly (bytes a grant needs to
//!   empty it, SDUs not completely sent, the oldest one's age), not the
//!   gNB's estimate from BSRs: the pipeline it sits below is the UE's, its
//!   queues and drops can only be the UE's report, and the buffer in the
//!   same report is the one the UE's pacer reads (a BSR's value is
//!   quantised into TS 38.321 Table 6.1.3.1-1's ranges, up to 14 % too
//!   high at 5 MB, and one grant loop old). MCS is the last new-data
//!   DCI's; PRBs are those of every PUSCH granted to the UE (new data and
//!   retransmissions), counted on its first uplink DRB as the downlink
//!   counts them on its first DRB.

use super::UeUplink;
use crate::drb::Drb;
use tcran_control::LowerLayerKpis;
use tcran_core::{DrbId, Duration, Instant};
use tcran_tc::{Applied, Change, Refused};

impl UeUplink {
    /// Applies `change` to uplink DRB `drb`'s pipeline at `now` (module
    /// docs); its drops go to the UE's outputs.
    pub(crate) fn apply(
        &mut self,
        drb: DrbId,
        change: &Change,
        now: Instant,
    ) -> Result<Applied, Refused> {
        let d = self
            .drbs
            .iter_mut()
            .find(|d| d.id == drb)
            .ok_or(Refused::NoSuchDrb)?;
        d.apply(change, now, &mut self.outputs).0
    }

    /// The uplink DRB the UE's SDAP maps QoS flow `qfi` to.
    pub(crate) fn sdap_drb(&self, qfi: tcran_core::Qfi) -> Option<DrbId> {
        self.sdap.map(qfi).ok().map(|m| m.drb)
    }

    /// Uplink DRB `drb`, if the UE has it.
    pub(crate) fn drb(&self, drb: DrbId) -> Option<&Drb> {
        self.drbs.iter().find(|d| d.id == drb)
    }

    /// What the UE's RLC and MAC below uplink DRB `drb` report at `now`
    /// (module docs); `ue_prbs` is the PRB·slots granted to the UE so far.
    pub(crate) fn kpis(&self, drb: DrbId, ue_prbs: u64, now: Instant) -> Option<LowerLayerKpis> {
        let d = self.drb(drb)?;
        let bs = d.tx.buffer_status();
        let oldest =
            d.tx.held_sdus()
                .find(|s| s.to_send)
                .and_then(|s| s.packet.stamps.rlc_in.get());
        let first = self.drbs.first().is_some_and(|f| f.id == drb);
        Some(LowerLayerKpis {
            rlc_backlog_bytes: bs.total(),
            rlc_backlog_sdus: bs.new_sdus,
            rlc_sojourn: oldest.map_or(Duration::ZERO, |t| now.saturating_since(t)),
            rlc_tx_bytes: d.counters.rlc_sdu_tx_bytes,
            mac_tx_bytes: d.counters.mac_tx_bytes,
            mac_prbs: if first { ue_prbs } else { 0 },
            mcs: d.last_tti.report.mcs.unwrap_or(0),
            handover_margin_cdb: None,
        })
    }
}
