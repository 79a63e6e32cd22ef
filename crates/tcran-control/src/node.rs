//! What a controller of the RAN node reads and changes: the [`RanNode`]
//! trait (E2 service models, the xApp SDK's in-process runs, the emulator).
//!
//! A controller never owns the node: every call that needs it borrows it,
//! so the gNB (the simulator's, the emulator's, any other implementation
//! of the trait) keeps ownership and its own clock. The trait is small on purpose:
//!
//! | method | used by |
//! |---|---|
//! | [`RanNode::drbs`] | every model: which (RNTI, DRB) exist |
//! | [`RanNode::uplink_drbs`] | TC models: the uplink DRBs, whose pipelines are the UEs' |
//! | [`RanNode::tc_view`] | TC models: a DRB's pipeline configuration and statistics, RLC/MAC KPIs |
//! | [`RanNode::tc_stats_into`] | E2SM-TCRAN reports: the statistics alone, into reused values |
//! | [`RanNode::kpm_cell`], [`RanNode::kpm_drb`] | E2SM-KPM: monotonic counters (TS 28.552 inputs) |
//! | [`RanNode::slicing`], [`RanNode::set_slices`] | FlexRIC's SLICE model: the MAC's downlink slices |
//! | [`RanNode::map_qos_flow`] | E2SM-RC: SDAP's QoS flow -> DRB map |
//! | [`RanNode::bearer`] | FlexRIC's MAC, RLC, PDCP and GTP models: the layers below one DRB's pipeline |
//! | [`RanNode::apply`] | TC models: a [`Change`] (controls, whole-pipeline deploys), all or nothing |
//!
//! Counters are cumulative and never decrease; the KPM model differences
//! them per granularity period, so the node needs no per-subscription
//! state. A change is tcran-tc's [`Change`], and a node built on
//! `tcran_tc::Pipeline`s gets the all-or-nothing rule from the pipeline
//! itself ([`tcran_tc::Pipeline::apply_change`]). `tcran_gnb::Gnb`
//! implements the trait (its `ran_node` module).

use tcran_core::{DrbId, Duration, Instant, Qfi, Rnti};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{Applied, Change, PipelineConfig, Refused};

/// Which way a DRB carries data, and so where its TC pipeline sits: a
/// downlink DRB's pipeline is the gNB's (between SDAP and PDCP, before the
/// MAC's downlink scheduler), an uplink DRB's is the UE's (between the
/// UE's SDAP and PDCP, emptied by the grants the gNB's uplink scheduler
/// gives). A UE's DRB ids are numbered per direction (`ues[].drbs` and
/// `ues[].uplink_drbs`), so the direction is part of a DRB's address. A
/// flow's direction is the way its data goes (`flows[].direction`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Downlink,
    Uplink,
}

impl Direction {
    /// For `skip_serializing_if`: downlink, the default, is not written.
    pub fn is_downlink(&self) -> bool {
        *self == Direction::Downlink
    }

    /// `"downlink"` or `"uplink"`, as scenarios and summaries spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Downlink => "downlink",
            Direction::Uplink => "uplink",
        }
    }
}

/// One data radio bearer of one UE, in one direction. Keys sort by UE,
/// then DRB id, a downlink DRB before the uplink DRB of the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DrbKey {
    pub rnti: Rnti,
    pub drb: DrbId,
    pub dir: Direction,
}

impl DrbKey {
    /// Downlink DRB `drb` of UE `rnti`.
    pub const fn new(rnti: u16, drb: u8) -> DrbKey {
        DrbKey {
            rnti: Rnti(rnti),
            drb: DrbId(drb),
            dir: Direction::Downlink,
        }
    }

    /// Uplink DRB `drb` of UE `rnti`.
    pub const fn uplink(rnti: u16, drb: u8) -> DrbKey {
        DrbKey {
            rnti: Rnti(rnti),
            drb: DrbId(drb),
            dir: Direction::Uplink,
        }
    }
}

impl std::fmt::Display for DrbKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.dir {
            Direction::Downlink => write!(f, "RNTI {} DRB {}", self.rnti.0, self.drb.0),
            Direction::Uplink => write!(f, "RNTI {} uplink DRB {}", self.rnti.0, self.drb.0),
        }
    }
}

/// What the RLC entity and the MAC below a DRB's pipeline report, and
/// what the UE's measurement reports say of its cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LowerLayerKpis {
    /// Bytes waiting in the RLC buffer.
    pub rlc_backlog_bytes: u64,
    /// SDUs (whole or partly sent) in the RLC buffer.
    pub rlc_backlog_sdus: u32,
    /// How long the oldest SDU in the RLC buffer has waited (zero when
    /// empty): the sojourn the paper's xApps watch.
    pub rlc_sojourn: Duration,
    /// RLC SDU bytes sent so far (cumulative).
    pub rlc_tx_bytes: u64,
    /// Bytes the MAC scheduled for this DRB so far (cumulative).
    pub mac_tx_bytes: u64,
    /// PRBs allocated to this DRB so far (cumulative).
    pub mac_prbs: u64,
    /// MCS of the last transmission (0..=31).
    pub mcs: u8,
    /// The DRB's UE's handover margin, 0.01 dB: its strongest
    /// neighbour's RSRP less its serving cell's, layer-3 filtered, from
    /// its last measurement report (TS 38.331 §5.5.5); `None` with one
    /// cell, before the first measurement, and for an uplink DRB.
    pub handover_margin_cdb: Option<i16>,
}

/// A DRB's traffic-control view: its pipeline as configured now, the
/// pipeline's statistics, and the KPIs of the layers below.
#[derive(Debug, Clone, PartialEq)]
pub struct TcView {
    pub config: PipelineConfig,
    pub stats: PipelineStats,
    pub lower: LowerLayerKpis,
}

/// Cumulative downlink counters of a cell or of one DRB, the inputs of the
/// TS 28.552 measurements E2SM-KPM reports. Every field only grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KpmCounters {
    /// Bits of PDCP SDUs received from the core for transmission
    /// (DRB.PdcpSduVolumeDL, TS 28.552 5.1.2.1.1.1).
    pub pdcp_sdu_bits_dl: u64,
    /// Bits of RLC SDUs transmitted (DRB.RlcSduTransmittedVolumeDL).
    pub rlc_sdu_transmitted_bits_dl: u64,
    /// Sum of the RLC SDU delays (arrival in RLC to delivery) and number of
    /// SDUs delivered (DRB.RlcSduDelayDl = sum / count, 5.1.3.3.3).
    pub rlc_sdu_delay_sum: Duration,
    pub rlc_sdus_delivered: u64,
    /// ThpVolDl and ThpTimeDl of TS 28.552 5.1.1.3.1 (DRB.UEThpDl): bits
    /// and time of transmission bursts, each burst's last slot excluded.
    pub thp_volume_bits_dl: u64,
    pub thp_time_dl: Duration,
    /// PRBs used for data, summed over slots (RRU.PrbUsedDl, 5.1.1.2.5).
    pub prb_used_dl: u64,
    /// PRBs available for data, summed over slots (RRU.PrbAvailDl, 5.1.1.2.7).
    pub prb_available_dl: u64,
    /// PRBs used for any purpose, summed over slots (RRU.PrbTotDl, 5.1.1.2.1).
    pub prb_used_total_dl: u64,
    /// Slots counted in the PRB sums.
    pub slots: u64,
    /// The cell's handovers (zero for a DRB, and for a node without
    /// neighbours).
    pub handovers: HandoverCounters,
}

impl KpmCounters {
    /// Adds one bearer's counters to a sum over bearers (a UE's, a
    /// cell's): volumes, delays, throughput bursts and PRB uses add; the
    /// PRBs available and the slots are the cell's, the same for every
    /// bearer, so the sum keeps the largest; handovers are the cell's, not
    /// a bearer's, and stay as they are.
    pub fn add_bearer(&mut self, c: &KpmCounters) {
        self.pdcp_sdu_bits_dl += c.pdcp_sdu_bits_dl;
        self.rlc_sdu_transmitted_bits_dl += c.rlc_sdu_transmitted_bits_dl;
        self.rlc_sdu_delay_sum += c.rlc_sdu_delay_sum;
        self.rlc_sdus_delivered += c.rlc_sdus_delivered;
        self.thp_volume_bits_dl += c.thp_volume_bits_dl;
        self.thp_time_dl += c.thp_time_dl;
        self.prb_used_dl += c.prb_used_dl;
        self.prb_available_dl = self.prb_available_dl.max(c.prb_available_dl);
        self.prb_used_total_dl += c.prb_used_total_dl;
        self.slots = self.slots.max(c.slots);
    }
}

/// Cumulative handover counts of one cell, as the TS 28.552 §5.1.1.6.1
/// measurements of inter-gNB handovers define them (a cell that is an E2
/// node of its own is a gNB of its own: its handovers cross Xn). The
/// target admits every UE in tcran's model, so no preparation or
/// resource allocation fails; an execution succeeds when the UE reaches
/// the target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandoverCounters {
    /// Handover preparations the cell requested as source
    /// (MM.HoPrepInterReq, 5.1.1.6.1.1).
    pub prep_requested: u64,
    /// Of those, prepared (MM.HoPrepInterSucc, 5.1.1.6.1.2).
    pub prep_succeeded: u64,
    /// Resource allocations requested of the cell as target
    /// (MM.HoResAlloInterReq, 5.1.1.6.1.4).
    pub res_alloc_requested: u64,
    /// Of those, allocated (MM.HoResAlloInterSucc, 5.1.1.6.1.5).
    pub res_alloc_succeeded: u64,
    /// Handover executions the cell requested as source
    /// (MM.HoExeInterReq, 5.1.1.6.1.7).
    pub exe_requested: u64,
    /// Of those, completed at the target (MM.HoExeInterSucc, 5.1.1.6.1.8).
    pub exe_succeeded: u64,
}

/// RLC entity mode of a DRB (TS 38.322).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RlcMode {
    #[default]
    Am,
    Um,
}

/// The MAC's downlink HARQ counters of one UE (TS 38.321 5.3.2: a
/// transport block is sent again until decoded or given up), cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HarqCounters {
    /// Transport blocks sent, by transmission: `[0]` first transmissions,
    /// `[1]` second, `[2]` third, `[3]` fourth and later.
    pub tx: [u64; 4],
    /// Transport blocks given up after their last transmission.
    pub lost: u64,
    /// PRB·slots of retransmissions.
    pub retx_prbs: u64,
}

/// What the layers below one DRB's pipeline report, without the
/// pipeline's own statistics: the input of FlexRIC's MAC, RLC, PDCP and
/// GTP monitoring models, read for every DRB every millisecond.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bearer {
    pub lower: LowerLayerKpis,
    pub counters: KpmCounters,
    pub rlc_mode: RlcMode,
    /// The lowest QoS flow SDAP maps onto the DRB, if any.
    pub qfi: Option<u8>,
    /// The UE's HARQ counters, on its first DRB only (as PRBs: the MAC
    /// sends transport blocks per UE); zero on the others.
    pub harq: HarqCounters,
}

/// The MAC's downlink slicing: the cell's PRBs and each slice's share of
/// them (a fraction) with its UEs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slicing {
    pub n_prb: u16,
    pub slices: Vec<(f64, Vec<Rnti>)>,
}

/// The control surface of a RAN node (one cell).
pub trait RanNode {
    /// Appends the node's downlink DRBs to `out`, in ascending order.
    fn drbs(&self, out: &mut Vec<DrbKey>);
    /// Appends the node's uplink DRBs (the UE-side pipelines) to `out`, in
    /// ascending order; the default: none. Only the TC views and
    /// [`RanNode::apply`] take an uplink key; the per-DRB KPM counters and
    /// [`RanNode::bearer`] are the downlink's (`None` for an uplink key).
    fn uplink_drbs(&self, out: &mut Vec<DrbKey>) {
        let _ = out;
    }
    /// The DRB's traffic-control view at `now`, or `None` if it does not exist.
    fn tc_view(&self, drb: DrbKey, now: Instant) -> Option<TcView>;
    /// The DRB's pipeline statistics and lower-layer KPIs at `now`: the
    /// view without the configuration, for reports (cloning a
    /// configuration per DRB per period is most of a large report's cost
    /// otherwise). The default takes them from [`RanNode::tc_view`].
    fn tc_stats(&self, drb: DrbKey, now: Instant) -> Option<(PipelineStats, LowerLayerKpis)> {
        self.tc_view(drb, now).map(|v| (v.stats, v.lower))
    }
    /// [`RanNode::tc_stats`] written over `stats` and `lower`, reusing
    /// their allocations (what a report of 1,000 DRBs every millisecond
    /// needs); `false` if the DRB does not exist. The default copies
    /// [`RanNode::tc_stats`].
    fn tc_stats_into(
        &self,
        drb: DrbKey,
        now: Instant,
        stats: &mut PipelineStats,
        lower: &mut LowerLayerKpis,
    ) -> bool {
        match self.tc_stats(drb, now) {
            Some((s, l)) => {
                *stats = s;
                *lower = l;
                true
            }
            None => false,
        }
    }
    /// Cumulative counters of the whole cell.
    fn kpm_cell(&self) -> KpmCounters;
    /// Cumulative counters of one DRB (`None` if it does not exist). The
    /// PRB fields count the PRBs allocated to this DRB.
    fn kpm_drb(&self, drb: DrbKey) -> Option<KpmCounters>;
    /// The layers below the DRB's pipeline at `now` (`None` if it does not
    /// exist). The default takes them from [`RanNode::tc_stats`] and
    /// [`RanNode::kpm_drb`] (AM, no QoS flow known); a node should answer
    /// without building the pipeline's statistics.
    fn bearer(&self, drb: DrbKey, now: Instant) -> Option<Bearer> {
        let (_, lower) = self.tc_stats(drb, now)?;
        Some(Bearer {
            lower,
            counters: self.kpm_drb(drb)?,
            rlc_mode: RlcMode::Am,
            qfi: None,
            harq: HarqCounters::default(),
        })
    }
    /// The MAC's downlink slicing, `None` when the node cannot slice.
    fn slicing(&self) -> Option<Slicing> {
        None
    }
    /// Replaces the MAC's slices (shares and UEs) at `now`, entirely or not
    /// at all; `Err` says why.
    fn set_slices(&mut self, slices: Vec<(f64, Vec<Rnti>)>, now: Instant) -> Result<(), String> {
        let _ = (slices, now);
        Err("this node has no MAC slicing".into())
    }
    /// Maps QoS flow `qfi` of UE `rnti` onto its DRB `drb` in SDAP from
    /// `now` on (TS 37.324 5.3: a new rule for the flow); `Err` says why
    /// not (no such UE or DRB).
    fn map_qos_flow(
        &mut self,
        rnti: Rnti,
        qfi: Qfi,
        drb: DrbId,
        now: Instant,
    ) -> Result<(), String> {
        let _ = (rnti, qfi, drb, now);
        Err("this node has no SDAP".into())
    }
    /// Applies `change` to the DRB's pipeline at `now`, entirely or not at
    /// all; `Err` says why (the models pass it on to the RIC in one line).
    fn apply(&mut self, drb: DrbKey, change: &Change, now: Instant) -> Result<Applied, Refused>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two bearers of one cell over the same 100 slots of 106 PRBs: what
    /// each carried adds up (a UE's or a cell's DRB.RlcSduDelayDl is the
    /// sum of the delays over the sum of the SDUs), what the cell offered
    /// is counted once.
    #[test]
    fn bearers_add_up_and_the_cells_resources_count_once() {
        let bearer = |bits: u64, sdus: u64, delay_ms: u64, prbs: u64| KpmCounters {
            pdcp_sdu_bits_dl: bits,
            rlc_sdu_transmitted_bits_dl: bits,
            rlc_sdu_delay_sum: Duration::from_millis(delay_ms),
            rlc_sdus_delivered: sdus,
            thp_volume_bits_dl: bits,
            thp_time_dl: Duration::from_millis(90),
            prb_used_dl: prbs,
            prb_available_dl: 100 * 106,
            prb_used_total_dl: prbs,
            slots: 100,
            handovers: HandoverCounters::default(),
        };
        let mut sum = bearer(1_000, 10, 50, 300);
        sum.add_bearer(&bearer(3_000, 30, 450, 900));
        assert_eq!(sum.pdcp_sdu_bits_dl, 4_000);
        assert_eq!(sum.rlc_sdus_delivered, 40);
        assert_eq!(sum.rlc_sdu_delay_sum, Duration::from_millis(500));
        assert_eq!(sum.thp_time_dl, Duration::from_millis(180));
        assert_eq!(sum.prb_used_dl, 1_200);
        assert_eq!(sum.prb_available_dl, 100 * 106);
        assert_eq!(sum.slots, 100);
    }
}
