//! The node's cumulative counters, and the TS 28.552 measurements they
//! give over a measurement interval.
//!
//! Counters only grow (from the node's start); a measurement over an
//! interval is the difference of two snapshots ([`DrbCounters::kpis`],
//! [`CellCounters::kpis`]), as an O-RAN E2SM-KPM report or an xApp takes it
//! per granularity period. The measurement names and units are those of
//! 3GPP TS 28.552 (5G performance measurements), so the E2 agent's KPM
//! service model exposes them without translation:
//!
//! | measurement | TS 28.552 (gNB, §5.1.1) | unit | from |
//! |---|---|---|---|
//! | `DRB.UEThpDl` | UE throughput (§5.1.1.3): average DL UE throughput | kbit/s | `thp_volume_bits` / `thp_time_ns` |
//! | `DRB.RlcSduDelayDl` | packet delay (§5.1.1.1): average delay in the RLC sublayer | 0.1 ms | `rlc_sdu_sojourn_ns` / `rlc_sdus_departed` |
//! | `DRB.RlcSduTransmittedVolumeDL` | transmitted RLC SDU data volume | kbit | `rlc_sdu_tx_bytes` |
//! | `DRB.PdcpSduVolumeDL` | DL PDCP SDU data volume | Mbit | `pdcp_sdu_bytes` |
//! | `RRU.PrbUsedDl` | radio resource utilisation (§5.1.1.2): mean DL PRBs used | PRBs | `prb_used` / `dl_slots` |
//! | `RRU.PrbAvailDl` | mean DL PRBs available | PRBs | `prb_available` / `dl_slots` |
//! | `RRU.PrbTotDl` | DL total PRB usage | % | `prb_used` / `prb_available` |
//!
//! What each counter counts, in this node:
//! - the RLC SDU delay is the time from an SDU's entry into the RLC buffer
//!   to its departure: in UM when its last byte was sent, in AM when a
//!   STATUS PDU acknowledged all of it (the gNB-DU's view, TS 28.552 "RLC
//!   SDU delay"); Kumar et al.'s DynRLC sojourn is the same quantity;
//! - UE throughput follows 28.552's definition: per DRB, a slot in which the buffer
//!   held data at the start and still holds data after the MAC pulled adds
//!   the bytes pulled to the volume and the slot (period) to the time; the
//!   slot that empties the buffer adds neither, so bursts smaller than a
//!   slot's capacity do not count as slow;
//! - the PDCP SDU volume counts the IP packets the TC pipeline handed down
//!   to PDCP/RLC; the RLC SDU volume counts the SDU bytes sent on the air
//!   for the first time (retransmissions and headers excluded).

use crate::node::SlotRecord;
use serde::Serialize;
use tcran_core::{Duration, Instant};

/// Cumulative counters of one DRB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DrbCounters {
    /// SDUs that left the RLC buffer (UM: sent, AM: acknowledged) and the
    /// sum of their sojourns in it: `DRB.RlcSduDelayDl`.
    pub rlc_sdus_departed: u64,
    pub rlc_sdu_sojourn_ns: u64,
    /// Packets delivered to the UE's PDCP and the sum of their times from
    /// RLC entry to delivery (RLC queue, MAC scheduling, HARQ, air): the
    /// RLC delay the TC-RAN xApps watch.
    pub delivered_packets: u64,
    pub rlc_delay_ns: u64,
    /// Bytes of the IP packets handed to PDCP: `DRB.PdcpSduVolumeDL`.
    pub pdcp_sdu_bytes: u64,
    /// SDU bytes transmitted on the air for the first time:
    /// `DRB.RlcSduTransmittedVolumeDL`.
    pub rlc_sdu_tx_bytes: u64,
    /// `DRB.UEThpDl`'s ThpVolDl (bits) and ThpTimeDl (ns).
    pub thp_volume_bits: u64,
    pub thp_time_ns: u64,
    /// Bytes the MAC pulled from the DRB's RLC entity (new data and
    /// retransmissions, RLC headers included).
    pub mac_tx_bytes: u64,
}

/// Adds one slot of a DRB to the UE throughput counters (see the module
/// docs): `had_data` before the MAC pulled, `has_data` after.
pub(crate) fn thp_update(
    c: &mut DrbCounters,
    had_data: bool,
    has_data: bool,
    pulled: u64,
    slot: Duration,
) {
    if had_data && has_data {
        c.thp_volume_bits += pulled * 8;
        c.thp_time_ns += slot.as_nanos();
    }
}

/// A DRB's TS 28.552 measurements over an interval; `None` where the
/// interval had no sample (28.552's "no value", not zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DrbKpis {
    /// `DRB.UEThpDl`, kbit/s.
    #[serde(rename = "DRB.UEThpDl")]
    pub ue_thp_dl_kbps: Option<f64>,
    /// `DRB.RlcSduDelayDl`, 0.1 ms.
    #[serde(rename = "DRB.RlcSduDelayDl")]
    pub rlc_sdu_delay_dl: Option<f64>,
    /// `DRB.RlcSduTransmittedVolumeDL`, kbit.
    #[serde(rename = "DRB.RlcSduTransmittedVolumeDL")]
    pub rlc_sdu_transmitted_volume_dl_kbit: f64,
    /// `DRB.PdcpSduVolumeDL`, Mbit.
    #[serde(rename = "DRB.PdcpSduVolumeDL")]
    pub pdcp_sdu_volume_dl_mbit: f64,
}

impl DrbCounters {
    /// The measurements over the interval from `earlier` to `self`.
    pub fn kpis(&self, earlier: &DrbCounters) -> DrbKpis {
        let thp_time = self.thp_time_ns - earlier.thp_time_ns;
        let departed = self.rlc_sdus_departed - earlier.rlc_sdus_departed;
        DrbKpis {
            // bits / ns * 1e6 = kbit/s
            ue_thp_dl_kbps: (thp_time > 0).then(|| {
                (self.thp_volume_bits - earlier.thp_volume_bits) as f64 * 1e6 / thp_time as f64
            }),
            // ns / 1e5 = units of 0.1 ms
            rlc_sdu_delay_dl: (departed > 0).then(|| {
                (self.rlc_sdu_sojourn_ns - earlier.rlc_sdu_sojourn_ns) as f64
                    / departed as f64
                    / 1e5
            }),
            rlc_sdu_transmitted_volume_dl_kbit: (self.rlc_sdu_tx_bytes - earlier.rlc_sdu_tx_bytes)
                as f64
                * 8.0
                / 1e3,
            pdcp_sdu_volume_dl_mbit: (self.pdcp_sdu_bytes - earlier.pdcp_sdu_bytes) as f64 * 8.0
                / 1e6,
        }
    }
}

/// Cumulative counters of the cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CellCounters {
    /// Scheduling decisions (slots, or periods of several).
    pub decisions: u64,
    /// Slots that carried downlink (PDSCH).
    pub dl_slots: u64,
    /// PRB·slots granted (new data and HARQ retransmissions) and offered.
    pub prb_used: u64,
    pub prb_available: u64,
}

impl CellCounters {
    pub(crate) fn add_slot(&mut self, r: &SlotRecord, dl_slots: u64) {
        self.decisions += 1;
        self.dl_slots += dl_slots;
        self.prb_used += u64::from(r.prbs_used);
        self.prb_available += u64::from(r.prbs_available);
    }

    /// The measurements over the interval from `earlier` to `self`.
    pub fn kpis(&self, earlier: &CellCounters) -> CellKpis {
        let slots = self.dl_slots - earlier.dl_slots;
        let used = self.prb_used - earlier.prb_used;
        let avail = self.prb_available - earlier.prb_available;
        CellKpis {
            prb_used_dl: (slots > 0).then(|| used as f64 / slots as f64),
            prb_avail_dl: (slots > 0).then(|| avail as f64 / slots as f64),
            prb_tot_dl_percent: (avail > 0).then(|| used as f64 * 100.0 / avail as f64),
        }
    }
}

/// The cell's TS 28.552 measurements over an interval (`None`: no DL slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CellKpis {
    /// `RRU.PrbUsedDl`: mean PRBs used per DL slot.
    #[serde(rename = "RRU.PrbUsedDl")]
    pub prb_used_dl: Option<f64>,
    /// `RRU.PrbAvailDl`: mean PRBs available per DL slot.
    #[serde(rename = "RRU.PrbAvailDl")]
    pub prb_avail_dl: Option<f64>,
    /// `RRU.PrbTotDl`: PRBs used / available, %.
    #[serde(rename = "RRU.PrbTotDl")]
    pub prb_tot_dl_percent: Option<f64>,
}

/// How late the node's events ran relative to their time: always zero
/// under a virtual clock; a wall-clock driver sees its scheduling jitter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Timing {
    pub events: u64,
    /// Events run after their time, and the largest and total lateness.
    pub late_events: u64,
    pub max_lateness_ns: u64,
    pub total_lateness_ns: u64,
}

impl Timing {
    pub(crate) fn record(&mut self, due: Instant, now: Instant) {
        self.events += 1;
        let late = now.saturating_since(due).as_nanos();
        if late > 0 {
            self.late_events += 1;
            self.max_lateness_ns = self.max_lateness_ns.max(late);
            self.total_lateness_ns += late;
        }
    }
}
