//! The RAN node of one cell as a [`RanNode`]: what E2 service models, xApps
//! and the emulator read and change.
//!
//! Every value comes from the node's own state and cumulative counters
//! (`tcran_gnb::counters`), so what the RIC reads is what the simulator's
//! summary and the emulator's reports measure:
//!
//! | E2 quantity | from the node |
//! |---|---|
//! | DRBs | [`Gnb::drb_ids`], sorted by (RNTI, DRB) |
//! | TC view: configuration, statistics | the DRB's pipeline ([`DrbRef::config`], [`DrbRef::stats`]) |
//! | RLC backlog (bytes, SDUs) | the RLC transmitter's buffer status: bytes a grant needs to empty it, SDUs not yet completely sent |
//! | RLC sojourn | age of the oldest SDU with bytes still to send (zero when none) |
//! | RLC / MAC bytes sent | `DrbCounters::rlc_sdu_tx_bytes` (first transmissions, payload) and `mac_tx_bytes` (what the MAC pulled) |
//! | MAC PRBs | PRB·slots granted to the UE; the MAC grants PRBs per UE, so they are counted on the UE's first DRB (sums over a UE's DRBs are exact) |
//! | MCS | the UE's MCS at the last scheduling decision (0 for capacity traces and outages) |
//! | KPM `DRB.*` inputs | `DrbCounters` (PDCP SDU bytes, RLC SDU bytes sent, RLC SDU sojourn sum and count, ThpVolDl/ThpTimeDl) |
//! | KPM `RRU.*` inputs | `CellCounters` (PRB·slots used and available, DL slots) |
//! | slicing | the MAC's downlink slices; set at run time by `Mac::set_slices` |
//! | QoS flow mapping (E2SM-RC) | the UE's SDAP table: the QFI's rule names the DRB from then on |
//! | bearer (FlexRIC MAC/RLC/PDCP/GTP) | the two rows above without the pipeline's statistics, the RLC mode, the lowest QFI SDAP maps onto the DRB |
//!
//! Uplink DRBs (keys with [`Direction::Uplink`]) are the UEs' pipelines:
//! their TC views and changes go to `crate::uplink_control` (what each
//! value is: `ue_uplink::control`); the KPM counters and the bearer view
//! stay the downlink's (`None` for an uplink key).
//!
//! Changes go through [`Gnb::apply`], the node's control surface: all or
//! nothing, with the same refusals as the simulator's in-process
//! controllers.

use crate::counters::DrbCounters;
use crate::{DrbRef, Gnb};
use tcran_control::{
    Bearer, Direction, DrbKey, KpmCounters, LowerLayerKpis, RanNode, RlcMode, Slicing, TcView,
};
use tcran_core::{Duration, Instant};
use tcran_ran::ChannelSample;
use tcran_tc::{Applied, Change, Refused};

/// What the RLC entity and the MAC below `d` report at `now`.
pub fn lower_layer_kpis(d: &DrbRef<'_>, now: Instant) -> LowerLayerKpis {
    let bs = d.rlc_buffer();
    let oldest = d
        .rlc_tx()
        .held_sdus()
        .find(|s| s.to_send)
        .and_then(|s| s.packet.stamps.rlc_in.get());
    let c = d.counters();
    LowerLayerKpis {
        rlc_backlog_bytes: bs.total(),
        rlc_backlog_sdus: bs.new_sdus,
        rlc_sojourn: oldest.map_or(Duration::ZERO, |t| now.saturating_since(t)),
        rlc_tx_bytes: c.rlc_sdu_tx_bytes,
        mac_tx_bytes: c.mac_tx_bytes,
        mac_prbs: if d.is_first_of_ue() { d.ue_prbs() } else { 0 },
        mcs: match d.channel() {
            ChannelSample::Mcs(m) => m.index,
            ChannelSample::Bytes(_) | ChannelSample::Outage => 0,
        },
        // The UE's measurements are the mobility's, not the node's: a
        // multi-cell run adds them (`tcran_sim`'s cells).
        handover_margin_cdb: None,
    }
}

/// The KPM counters of one DRB (PRB fields: see the module docs).
pub fn drb_kpm(gnb: &Gnb, d: &DrbRef<'_>) -> KpmCounters {
    let cell = gnb.cell_counters();
    let prbs = if d.is_first_of_ue() { d.ue_prbs() } else { 0 };
    KpmCounters {
        prb_used_dl: prbs,
        prb_available_dl: cell.prb_available,
        prb_used_total_dl: prbs,
        slots: cell.dl_slots,
        ..volumes(d.counters())
    }
}

/// The volume, delay and throughput counters of one DRB, as E2SM-KPM
/// reads them.
pub(crate) fn volumes(c: &DrbCounters) -> KpmCounters {
    KpmCounters {
        pdcp_sdu_bits_dl: c.pdcp_sdu_bytes * 8,
        rlc_sdu_transmitted_bits_dl: c.rlc_sdu_tx_bytes * 8,
        rlc_sdu_delay_sum: Duration::from_nanos(c.rlc_sdu_sojourn_ns),
        rlc_sdus_delivered: c.rlc_sdus_departed,
        thp_volume_bits_dl: c.thp_volume_bits,
        thp_time_dl: Duration::from_nanos(c.thp_time_ns),
        ..KpmCounters::default()
    }
}

impl RanNode for Gnb {
    fn drbs(&self, out: &mut Vec<DrbKey>) {
        let start = out.len();
        out.extend(self.drb_ids().map(|(rnti, drb)| DrbKey::new(rnti.0, drb.0)));
        out[start..].sort_unstable();
    }

    fn uplink_drbs(&self, out: &mut Vec<DrbKey>) {
        let start = out.len();
        out.extend(self.uplink_drb_ids());
        out[start..].sort_unstable();
    }

    fn tc_view(&self, drb: DrbKey, now: Instant) -> Option<TcView> {
        if drb.dir == Direction::Uplink {
            return self.uplink_tc_view(drb, now);
        }
        let d = self.drb(drb.rnti, drb.drb)?;
        Some(TcView {
            config: d.config(),
            stats: d.stats(now),
            lower: lower_layer_kpis(&d, now),
        })
    }

    fn tc_stats(
        &self,
        drb: DrbKey,
        now: Instant,
    ) -> Option<(tcran_tc::stats::PipelineStats, LowerLayerKpis)> {
        if drb.dir == Direction::Uplink {
            return self.uplink_tc_stats(drb, now);
        }
        let d = self.drb(drb.rnti, drb.drb)?;
        Some((d.stats(now), lower_layer_kpis(&d, now)))
    }

    fn tc_stats_into(
        &self,
        drb: DrbKey,
        now: Instant,
        stats: &mut tcran_tc::stats::PipelineStats,
        lower: &mut LowerLayerKpis,
    ) -> bool {
        if drb.dir == Direction::Uplink {
            return self.uplink_tc_stats_into(drb, now, stats, lower);
        }
        let Some(d) = self.drb(drb.rnti, drb.drb) else {
            return false;
        };
        d.pipeline().stats_into(now, stats);
        *lower = lower_layer_kpis(&d, now);
        true
    }

    fn kpm_cell(&self) -> KpmCounters {
        // The DRBs here and those UEs took away by handover: the cell's
        // volumes only grow.
        let mut sum = self.departed;
        for d in self.drbs() {
            sum.add_bearer(&volumes(d.counters()));
        }
        let cell = self.cell_counters();
        // The cell's PRBs include every grant (no control channel is
        // modelled, so PRBs used for any purpose are those for data).
        KpmCounters {
            prb_used_dl: cell.prb_used,
            prb_available_dl: cell.prb_available,
            prb_used_total_dl: cell.prb_used,
            slots: cell.dl_slots,
            ..sum
        }
    }

    fn kpm_drb(&self, drb: DrbKey) -> Option<KpmCounters> {
        if drb.dir == Direction::Uplink {
            return None;
        }
        let d = self.drb(drb.rnti, drb.drb)?;
        Some(drb_kpm(self, &d))
    }

    fn slicing(&self) -> Option<Slicing> {
        Some(Slicing {
            n_prb: self.mac.n_prb(),
            slices: self.mac.params().slices.clone(),
        })
    }

    fn set_slices(
        &mut self,
        slices: Vec<(f64, Vec<tcran_core::Rnti>)>,
        _now: Instant,
    ) -> Result<(), String> {
        self.mac.set_slices(slices)
    }

    fn bearer(&self, drb: DrbKey, now: Instant) -> Option<Bearer> {
        if drb.dir == Direction::Uplink {
            return None;
        }
        let d = self.drb(drb.rnti, drb.drb)?;
        Some(Bearer {
            lower: lower_layer_kpis(&d, now),
            counters: drb_kpm(self, &d),
            rlc_mode: match d.rlc_tx().params().mode {
                tcran_ran::rlc::RlcMode::Am => RlcMode::Am,
                tcran_ran::rlc::RlcMode::Um => RlcMode::Um,
            },
            qfi: d.lowest_qfi().map(|q| q.0),
            harq: if d.is_first_of_ue() {
                d.ue_harq()
            } else {
                Default::default()
            },
        })
    }

    fn map_qos_flow(
        &mut self,
        rnti: tcran_core::Rnti,
        qfi: tcran_core::Qfi,
        drb: tcran_core::DrbId,
        _now: Instant,
    ) -> Result<(), String> {
        let u = self
            .ue_of(rnti)
            .ok_or_else(|| format!("UE {} does not exist", rnti.0))?;
        let ue = &mut self.ues[u];
        if !ue.drbs.iter().any(|d| d.id == drb) {
            return Err(format!("UE {} has no DRB {}", rnti.0, drb.0));
        }
        ue.sdap.map_flow(qfi, drb).map_err(|e| e.to_string())
    }

    fn apply(&mut self, drb: DrbKey, change: &Change, now: Instant) -> Result<Applied, Refused> {
        match drb.dir {
            Direction::Downlink => Gnb::apply(self, drb.rnti, drb.drb, change, now),
            Direction::Uplink => self.apply_uplink(drb.rnti, drb.drb, change, now),
        }
    }
}
