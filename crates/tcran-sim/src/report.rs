//! What a run reports: per-flow throughput and delay distributions with the
//! per-layer breakdown, PRB utilisation, RLC occupancy and sojourn, and every
//! drop by layer and reason. Serde-serializable (the summary JSON).

use crate::metrics::DelaySummary;
use serde::Serialize;
use std::collections::BTreeMap;
use tcran_core::{Instant, Packet};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub sim_s: f64,
    pub flows: Vec<FlowSummary>,
    /// PRBs used / PRBs available in DL slots, after warm-up.
    pub prb_utilization: f64,
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
    /// in `drops`) or is still on its way: `created = delivered + dropped +
    /// in_flight`.
    pub packets: PacketCounts,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PacketCounts {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
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
    pub seed: u64,
    pub sim_s: f64,
    /// Wall-clock seconds, filled in by the caller that measured them.
    pub wall_s: f64,
    pub variants: Vec<VariantSummary>,
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
    /// IP bytes delivered to the UE per second, after warm-up.
    pub throughput_mbps: f64,
    /// One-way delay from the server to delivery at the UE.
    pub delay_ms: DelaySummary,
    /// Ping round-trip times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<DelaySummary>,
    /// Web flows: page load time (request to last byte acknowledged at the
    /// server) of the pages requested after warm-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_ms: Option<DelaySummary>,
    /// Mean delay per layer.
    pub layers_ms: LayerMeans,
    /// Packets of this flow dropped anywhere (all layers, whole run).
    pub lost_packets: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RlcSummary {
    /// Mean bytes waiting in RLC (sampled per slot, all DRBs).
    pub mean_bytes: f64,
    pub max_bytes: u64,
    /// Mean time from RLC enqueue to SDU departure.
    pub mean_sojourn_ms: f64,
}

/// Sums of per-layer delays of delivered packets.
#[derive(Debug, Clone, Default)]
pub struct LayerDelays {
    n: u64,
    core: f64,
    upf: f64,
    tc: f64,
    rlc_air: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LayerMeans {
    /// Server to the UPF (core network).
    pub core: f64,
    /// The UE's UPF queue (0 without one).
    pub upf: f64,
    /// TC pipeline queues (SDAP to RLC).
    pub tc: f64,
    /// RLC buffer, MAC scheduling, HARQ and air until delivery.
    pub rlc_air: f64,
}

impl LayerDelays {
    pub fn add(&mut self, p: &Packet, delivered: Instant) {
        // `tc_in` is stamped by the last pipeline the packet entered: the
        // DRB's, after the UPF queue if there is one.
        let (Some(upf), Some(tc), Some(rlc)) = (p.stamps.upf_in, p.stamps.tc_in, p.stamps.rlc_in)
        else {
            return;
        };
        self.n += 1;
        self.core += upf.saturating_since(p.created).as_millis_f64();
        self.upf += tc.saturating_since(upf).as_millis_f64();
        self.tc += rlc.saturating_since(tc).as_millis_f64();
        self.rlc_air += delivered.saturating_since(rlc).as_millis_f64();
    }
    pub fn means(&self) -> LayerMeans {
        if self.n == 0 {
            return LayerMeans::default();
        }
        let n = self.n as f64;
        LayerMeans {
            core: self.core / n,
            upf: self.upf / n,
            tc: self.tc / n,
            rlc_air: self.rlc_air / n,
        }
    }
}
