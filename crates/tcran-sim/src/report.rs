//! What a run reports: per-flow throughput and delay distributions with the
//! per-layer breakdown, PRB utilisation, RLC occupancy and sojourn, and every
//! drop by layer and reason. Serde-serializable (the summary JSON).

use crate::metrics::{DelayRecorder, DelaySummary};
use crate::scenario::Direction;
use crate::series::LayerCdfs;
use serde::Serialize;
use std::collections::BTreeMap;
use tcran_core::{Instant, Packet};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub sim_s: f64,
    /// What the run's seed drew, one line each (where a channel recording
    /// starts, when each flow starts, HARQ outcomes, arrival processes,
    /// BBR's cycle phase). Empty: nothing in the run is random, so every
    /// seed gives the same run.
    pub seed_draws: Vec<String>,
    pub flows: Vec<FlowSummary>,
    /// PRBs used / PRBs available in DL slots, after warm-up.
    pub prb_utilization: f64,
    /// Utilisation of the capacity the channel offered, after warm-up:
    /// the bytes the transport blocks carried (data pulled from RLC and
    /// HARQ retransmissions) over the bytes the DL slots newly offered
    /// with every PRB (`slots.csv`'s `capacity_bytes`), summed over DL
    /// slots. Close to `prb_utilization` on a channel of constant
    /// capacity (padding inside the last PRB counts as unused); on a
    /// capacity trace a slot without a delivery opportunity offers
    /// nothing and counts for nothing, where PRB use counts its PRBs as
    /// unused, and capacity a trace carries over counts once, where it
    /// was offered.
    pub capacity_utilization: f64,
    pub rlc: RlcSummary,
    /// Dropped packets by layer (`sdap`, `tc`, `rlc`, `air`) and reason.
    pub drops: BTreeMap<String, BTreeMap<String, u64>>,
    /// CE-marked packets by layer and reason (whole run, like `drops`).
    pub marks: BTreeMap<String, BTreeMap<String, u64>>,
    /// Pipeline changes made by events and controllers, and those refused
    /// (details in the series).
    pub reconfigurations: ReconfigCounts,
    /// Downlink packets over the whole run: every packet a server sent
    /// (retransmissions included) was delivered to the UE, dropped (counted
    /// in `drops`) or is still on its way, counted where it is at the end:
    /// `created = delivered + dropped + in_flight`, and `unaccounted` (the
    /// difference) is 0.
    pub packets: PacketCounts,
    /// Every handover of a multi-cell run, in time order (absent with one
    /// cell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handovers: Vec<crate::cells::HandoverRecord>,
    /// Each cell's load in a multi-cell run (absent with one cell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<crate::cells::CellLoad>,
}

/// The downlink packet ledger. `in_flight` is not a difference: each packet
/// still on its way is found and counted in the place it is in when the run
/// ends ([`InFlight`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PacketCounts {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// The sum of `in_flight_by_place`.
    pub in_flight: u64,
    pub in_flight_by_place: InFlight,
    /// `created - delivered - dropped - in_flight`: packets the simulator
    /// lost track of. Always 0 unless the simulator has a bug.
    pub unaccounted: i64,
}

/// Packets on their way at the end of a run, by where they are. A packet
/// spread over several places (an RLC SDU with segments on the air and at
/// the UE) is counted once, in the first place listed that holds a part
/// of it still to be sent, retransmitted or received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct InFlight {
    /// Between the server and the gNB (core network delay).
    pub core: u64,
    /// The UE's UPF queue.
    pub upf: u64,
    /// The TC pipeline queues of the DRBs.
    pub tc: u64,
    /// The RLC transmitter: SDUs with bytes waiting for their first
    /// transmission or a retransmission, and (AM) SDUs sent but lost on
    /// the air, waiting for the receiver's NACK.
    pub rlc: u64,
    /// On the air: in a transport block not yet decoded, or waiting for a
    /// HARQ retransmission.
    pub air: u64,
    /// The UE's RLC receiver: SDUs partly received (reassembly), and UM
    /// SDUs just discarded whose loss is not counted yet.
    pub reassembly: u64,
    /// The UE's PDCP receiver: SDUs waiting for earlier COUNTs (reordering).
    pub reordering: u64,
    /// Forwarded over Xn between two cells in a handover (absent from
    /// single-cell summaries, which never have any).
    #[serde(skip_serializing_if = "is_zero")]
    pub xn: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl InFlight {
    pub fn total(&self) -> u64 {
        self.core
            + self.upf
            + self.tc
            + self.rlc
            + self.air
            + self.reassembly
            + self.reordering
            + self.xn
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReconfigCounts {
    pub applied: u64,
    pub failed: u64,
}

/// A whole scenario: every variant's run (the summary JSON of
/// docs/simulator.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioSummary {
    pub scenario: String,
    /// The seed of the runs in `variants` (with several seeds, the first).
    pub seed: u64,
    /// With several seeds (`seeds`, `--seeds`): all of them, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<u64>,
    pub sim_s: f64,
    /// Wall-clock seconds, filled in by the caller that measured them.
    pub wall_s: f64,
    pub variants: Vec<VariantSummary>,
    /// With several seeds: the runs of every seed (the first is
    /// `variants` again).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seed_runs: Vec<crate::seeds::SeedRuns>,
    /// With several seeds: per variant, each metric's mean and 95 %
    /// Student t confidence interval across the seeds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub across_seeds: Vec<crate::seeds::VariantStats>,
    /// How the runs were made, filled in by the front end that read the
    /// scenario: enough to run them again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub made_with: Option<Provenance>,
}

/// What a summary's runs were made from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    /// tcran's version.
    pub tcran: String,
    /// The scenario file as given (or the embedded scenario's name).
    pub file: String,
    /// The `--set` overrides, as given, in order.
    pub overrides: Vec<String>,
    /// The scenario as run: the file with the overrides, `--seed` and
    /// `--seeds` applied (every field, defaults included).
    pub scenario: serde_json::Value,
}

impl ScenarioSummary {
    /// A summary of one seed's runs.
    pub fn single(scenario: String, seed: u64, sim_s: f64, variants: Vec<VariantSummary>) -> Self {
        ScenarioSummary {
            scenario,
            seed,
            seeds: Vec::new(),
            sim_s,
            wall_s: 0.0,
            variants,
            seed_runs: Vec::new(),
            across_seeds: Vec::new(),
            made_with: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantSummary {
    pub name: String,
    #[serde(flatten)]
    pub run: RunSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub kind: String,
    /// `"uplink"` for a flow from the UE to its server; absent for the
    /// downlink (the default), which keeps the summaries of downlink-only
    /// scenarios as they were.
    #[serde(skip_serializing_if = "Direction::is_downlink")]
    pub direction: Direction,
    /// IP bytes delivered to the receiver (the UE; the server for an
    /// uplink flow) per second, after warm-up.
    pub throughput_mbps: f64,
    /// One-way delay from sender to receiver.
    pub delay_ms: DelaySummary,
    /// Ping round-trip times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<DelaySummary>,
    /// Web and FTP flows: download time (request to last byte acknowledged
    /// at the server) of the pages or files requested after warm-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_ms: Option<DelaySummary>,
    /// The one-way delay split by layer (core, UPF queue, TC queues, RLC,
    /// air), each with its distribution.
    pub layers_ms: LayerSummaries,
    /// Packets of this flow dropped anywhere (all layers, whole run).
    pub lost_packets: u64,
    /// The flow's downlink ledger (whole run): packets its server sent,
    /// those delivered to the UE, and those still on their way at the end
    /// (`created = delivered + lost + in_flight`).
    pub created_packets: u64,
    pub delivered_packets: u64,
    pub in_flight_packets: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RlcSummary {
    /// Mean bytes waiting in RLC (sampled per slot, all DRBs).
    pub mean_bytes: f64,
    pub max_bytes: u64,
    /// Mean time from RLC enqueue to SDU departure.
    pub mean_sojourn_ms: f64,
    /// AM STATUS PDUs the UEs sent (all DRBs, whole run).
    pub status_pdus: u64,
}

/// Per-layer delays of the delivered packets (after warm-up), each layer
/// with its exact distribution. A packet's layers are the gaps between its
/// consecutive stamps ([`tcran_core::packet::LayerStamps`]), so per packet
/// they add up to its one-way delay in integer nanoseconds, and the layer
/// means add up to the flow's mean delay (up to float rounding).
///
/// Memory: one 8-byte sample per layer and delivered packet, like the
/// flow's own [`DelayRecorder`].
#[derive(Debug, Clone, Default)]
pub struct LayerDelays {
    core: DelayRecorder,
    upf: DelayRecorder,
    tc: DelayRecorder,
    rlc: DelayRecorder,
    air: DelayRecorder,
}

/// The delay of each layer, from the server to delivery at the UE.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LayerSummaries {
    /// Server to the UPF (core network).
    pub core: DelaySummary,
    /// The UE's UPF queue (0 without one).
    pub upf: DelaySummary,
    /// TC pipeline queues (SDAP to RLC).
    pub tc: DelaySummary,
    /// RLC: from entering the RLC buffer until the SDU's last byte was
    /// first handed to the MAC (queueing behind other SDUs, waiting for a
    /// grant, segmentation across grants).
    pub rlc: DelaySummary,
    /// Air: from that first transmission of the last byte to delivery at
    /// the UE (the transport block's time on the air, HARQ and RLC ARQ
    /// retransmissions, waiting for the other segments to be reassembled).
    pub air: DelaySummary,
}

impl LayerDelays {
    /// Records the layers of a packet delivered at `delivered`; a packet
    /// missing a stamp (it never crossed that layer) is not recorded.
    #[inline]
    pub fn add(&mut self, p: &Packet, delivered: Instant) {
        // `tc_in` is stamped by the last pipeline the packet entered: the
        // DRB's, after the UPF queue if there is one.
        let s = &p.stamps;
        let (Some(upf), Some(tc), Some(rlc), Some(mac)) = (
            s.upf_in.get(),
            s.tc_in.get(),
            s.rlc_in.get(),
            s.mac_in.get(),
        ) else {
            return;
        };
        self.core.record(upf.saturating_since(p.created));
        self.upf.record(tc.saturating_since(upf));
        self.tc.record(rlc.saturating_since(tc));
        self.rlc.record(mac.saturating_since(rlc));
        self.air.record(delivered.saturating_since(mac));
    }

    pub fn summaries(&mut self) -> LayerSummaries {
        LayerSummaries {
            core: self.core.summary(),
            upf: self.upf.summary(),
            tc: self.tc.summary(),
            rlc: self.rlc.summary(),
            air: self.air.summary(),
        }
    }

    /// Each layer's CDF thinned to at most `points` + 1 points.
    pub fn cdfs(&mut self, points: usize) -> LayerCdfs {
        LayerCdfs {
            core: self.core.cdf(points),
            upf: self.upf.cdf(points),
            tc: self.tc.cdf(points),
            rlc: self.rlc.cdf(points),
            air: self.air.cdf(points),
        }
    }
}
