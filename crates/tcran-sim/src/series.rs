//! What a run records over time, for plots and CSV files: per-slot cell
//! samples (RLC occupancy against what the slot could carry, PRBs), per-flow
//! series binned at `SimConfig::series_bin` (goodput, delay, TCP cwnd and
//! sRTT), the drop/mark timeline and every reconfiguration.
//!
//! Memory is bounded whatever the duration (`recorder` in this crate):
//! long runs keep wider bins ([`RunSeries::bin_s`] against
//! [`RunSeries::requested_bin_s`]) and slot samples that aggregate several
//! slots ([`SlotSeries::stride`]); a [`SeriesSink`] gets the full
//! resolution as the run goes.
//!
//! Contract: every vector of a group has the same length; times are seconds
//! since the start of the run (warm-up included, so plots show it); a bin
//! without a sample holds `None` (serialized as `null`, written as an empty
//! CSV field), never a made-up zero.

use serde::Serialize;

/// The time series of one run (one variant).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunSeries {
    pub slots: SlotSeries,
    /// Width of the per-flow and event bins, seconds: the scenario's
    /// `series_bin`, or for a run longer than 36 000 of them the smallest
    /// whole multiple of it that keeps 36 000 bins.
    pub bin_s: f64,
    /// The scenario's `series_bin`, seconds.
    pub requested_bin_s: f64,
    pub flows: Vec<FlowSeries>,
    /// Drops and marks, one entry per (bin, layer, reason, what) that has any.
    pub events: Vec<EventCount>,
    /// Pipeline changes made while running (scheduled events, controllers).
    pub reconfigurations: Vec<Reconfiguration>,
    /// Changes that were asked for but refused (nothing changed); `what`
    /// ends with the error.
    pub failed_reconfigurations: Vec<Reconfiguration>,
    /// Reconfigurations not listed above: each list keeps the first 10 000
    /// (the summary counts them all).
    pub reconfigurations_omitted: u64,
    /// Updates a streaming run could not pass on because their bin had
    /// already gone to its sink (a drop withdrawn, or a sample timed, more
    /// than the run holds back: 30 s and 2 s): what the sink got misses
    /// them. 0 unless something reports events far out of time order.
    pub late_updates: u64,
}

impl RunSeries {
    /// Only the distributions: the flows' names, kinds and CDFs, nothing
    /// per bin or slot (a few kB whatever the duration).
    pub fn cdfs_only(&self) -> RunSeries {
        RunSeries {
            bin_s: self.bin_s,
            requested_bin_s: self.requested_bin_s,
            flows: self
                .flows
                .iter()
                .map(|f| FlowSeries {
                    name: f.name.clone(),
                    kind: f.kind.clone(),
                    delay_cdf: f.delay_cdf.clone(),
                    rtt_cdf: f.rtt_cdf.clone(),
                    layer_delay_cdf: f.layer_delay_cdf.clone(),
                    ..FlowSeries::default()
                })
                .collect(),
            ..RunSeries::default()
        }
    }
}

/// One sample per slot, for the whole cell (all UEs and DRBs). With a MAC
/// scheduling period (`cell.scheduling_period`), one sample per period
/// instead: a "slot" below is then the whole period, and PRBs are PRB·slots
/// (the PRBs of each DL slot of the period, summed).
///
/// With `stride` > 1 (a long run's kept series) each sample aggregates
/// `stride` consecutive slots: `t_s` is the first one's start, `rlc_bytes`
/// their maximum, `capacity_bytes` the mean over those with downlink PRBs
/// (0 if none), `prbs_used` and `prbs_available` their sums.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SlotSeries {
    /// Slot start, seconds.
    pub t_s: Vec<f64>,
    /// Bytes waiting in RLC transmit buffers at the start of the slot.
    pub rlc_bytes: Vec<u64>,
    /// Bytes the slot could carry: the transport blocks the MAC would build
    /// with every PRB at the scheduled UEs' MCS (0 in UL slots and outages).
    /// With several UEs scheduled, their full-cell TBS weighted by the PRBs
    /// each got (new data and HARQ retransmissions); in a slot that
    /// schedules nobody, the mean over the UEs.
    pub capacity_bytes: Vec<u64>,
    pub prbs_used: Vec<u32>,
    /// PRBs available for the downlink in this slot (0 in UL slots).
    pub prbs_available: Vec<u32>,
    /// Slots per sample: 1 unless the run has more slots than the series
    /// may keep (200 000; 65 536 in a streaming run's display copy), then
    /// the smallest stride that fits.
    pub stride: u64,
}

/// One flow's series, one value per bin.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FlowSeries {
    pub name: String,
    pub kind: String,
    /// Bin start, seconds.
    pub t_s: Vec<f64>,
    /// IP bytes delivered to the UE in the bin, as Mbit/s.
    pub goodput_mbps: Vec<f64>,
    /// Mean one-way delay of the packets delivered in the bin.
    pub delay_ms: Vec<Option<f64>>,
    /// Congestion window at the end of the bin (TCP flows only, else empty).
    pub cwnd_bytes: Vec<Option<f64>>,
    /// Smoothed RTT at the end of the bin (TCP flows only, else empty).
    pub srtt_ms: Vec<Option<f64>>,
    /// Delay CDF after warm-up: (delay ms, fraction of packets <= it),
    /// at most 200 points, increasing in both.
    pub delay_cdf: Vec<(f64, f64)>,
    /// Ping flows: the round-trip-time CDF after warm-up, like
    /// `delay_cdf` (empty for other flows).
    pub rtt_cdf: Vec<(f64, f64)>,
    /// The same for each layer of the delay (core, UPF queue, TC, RLC,
    /// air; summary `layers_ms`), after warm-up, at most 200 points each.
    pub layer_delay_cdf: LayerCdfs,
}

/// Per-layer delay CDFs (`(delay ms, fraction <= it)`, like the flow's
/// delay CDF); thesis Fig. 3.22 plots the SDAP and RLC ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LayerCdfs {
    pub core: Vec<(f64, f64)>,
    pub upf: Vec<(f64, f64)>,
    pub tc: Vec<(f64, f64)>,
    pub rlc: Vec<(f64, f64)>,
    pub air: Vec<(f64, f64)>,
}

impl LayerCdfs {
    /// `(layer name, CDF)` in data-path order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &[(f64, f64)])> {
        [
            ("core", &self.core),
            ("upf", &self.upf),
            ("tc", &self.tc),
            ("rlc", &self.rlc),
            ("air", &self.air),
        ]
        .into_iter()
        .map(|(n, v)| (n, v.as_slice()))
    }
}

/// Where a streaming run ([`crate::Sim::stream_series`]) hands its series
/// at full resolution as it goes: every MAC step, every `series_bin`,
/// whatever the duration. Each call continues the previous one of its kind
/// (slots and each flow's bins in time order, events in order of bin, then
/// `what`, layer and reason); the chunks are at most a few thousand long.
/// A sink keeps its own errors (e.g. a full disk) and reports them when its
/// owner asks, after [`SeriesSink::end`].
pub trait SeriesSink: Send {
    /// Consecutive slot samples (`stride` 1).
    fn slots(&mut self, chunk: &SlotSeries);
    /// Consecutive bins of flow `flow` (scenario order; live flows after),
    /// name and kind set, no CDFs.
    fn flow_bins(&mut self, flow: usize, chunk: &FlowSeries);
    /// Drop and mark counts of whole bins.
    fn events(&mut self, chunk: &[EventCount]);
    /// The run ended: nothing follows.
    fn end(&mut self) {}
}

/// Packets dropped or marked in one bin for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventCount {
    /// Bin start, seconds.
    pub t_s: f64,
    /// `drop` or `mark`.
    pub what: &'static str,
    /// `upf`, `sdap`, `tc`, `rlc`, `air`.
    pub layer: &'static str,
    pub reason: &'static str,
    pub count: u64,
}

/// A pipeline change applied during the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reconfiguration {
    pub t_s: f64,
    /// Who asked: `event` or the controller's name.
    pub by: String,
    /// UE rnti and DRB id it applied to.
    pub rnti: u16,
    pub drb: u8,
    /// Human-readable description of the change (e.g. "add queue 1 codel").
    pub what: String,
}
