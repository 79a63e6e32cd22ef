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

/// A [`SeriesSink`] run on a thread of its own: what a run hands on goes
/// through a bounded channel to the sink, so that writing (formatting a
/// CSV row per slot: about a twentieth of what a one-cell run spends) runs
/// beside the simulation instead of inside it. The sink sees the same calls
/// in the same order; [`SeriesSink::end`] returns once the sink has ended,
/// so its files are complete and its errors known when the run returns.
/// Memory: at most [`BackgroundSink::QUEUE`] chunks wait (each at most a
/// few thousand rows); a simulation faster than its sink waits for it.
#[derive(Debug)]
pub struct BackgroundSink {
    to_sink: Option<std::sync::mpsc::SyncSender<Chunk>>,
    worker: Option<std::thread::JoinHandle<()>>,
}

/// One call of [`SeriesSink`], owned, for the sink's thread.
#[derive(Debug)]
enum Chunk {
    Slots(SlotSeries),
    FlowBins(usize, Box<FlowSeries>),
    Events(Vec<EventCount>),
    End,
}

impl BackgroundSink {
    /// Chunks that may wait for the sink.
    pub const QUEUE: usize = 8;

    /// `sink` on a new thread, or `sink` itself, called in place, if no
    /// thread can be started (the outputs are the same either way).
    pub fn spawn(sink: Box<dyn SeriesSink>) -> Box<dyn SeriesSink> {
        let (to_sink, chunks) = std::sync::mpsc::sync_channel(Self::QUEUE);
        let (give_back, take_back) = std::sync::mpsc::channel::<Box<dyn SeriesSink>>();
        let worker = std::thread::Builder::new()
            .name("tcran-series".into())
            .spawn(move || {
                let Ok(mut sink) = take_back.recv() else {
                    return;
                };
                for chunk in chunks {
                    match chunk {
                        Chunk::Slots(s) => sink.slots(&s),
                        Chunk::FlowBins(flow, f) => sink.flow_bins(flow, &f),
                        Chunk::Events(e) => sink.events(&e),
                        Chunk::End => {
                            sink.end();
                            return;
                        }
                    }
                }
            });
        let Ok(worker) = worker else {
            // The sink never left: write in place.
            return sink;
        };
        // The sink goes to the worker only once it runs, so that a thread
        // that cannot be started leaves it here.
        give_back.send(sink).expect("the worker waits for its sink");
        Box::new(BackgroundSink {
            to_sink: Some(to_sink),
            worker: Some(worker),
        })
    }

    fn send(&mut self, chunk: Chunk) {
        // The worker stops only at `End` or if the sink panicked; a
        // panic surfaces when `end` joins it.
        if let Some(tx) = &self.to_sink {
            if tx.send(chunk).is_err() {
                self.to_sink = None;
            }
        }
    }
}

impl SeriesSink for BackgroundSink {
    fn slots(&mut self, chunk: &SlotSeries) {
        self.send(Chunk::Slots(chunk.clone()));
    }

    fn flow_bins(&mut self, flow: usize, chunk: &FlowSeries) {
        self.send(Chunk::FlowBins(flow, Box::new(chunk.clone())));
    }

    fn events(&mut self, chunk: &[EventCount]) {
        self.send(Chunk::Events(chunk.to_vec()));
    }

    fn end(&mut self) {
        self.send(Chunk::End);
        self.to_sink = None;
        if let Some(worker) = self.worker.take() {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

impl Drop for BackgroundSink {
    /// A run dropped before its end (an error) stops the worker without
    /// ending the sink, as the sink itself would have been dropped.
    fn drop(&mut self) {
        self.to_sink = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Logs every call it gets, and whether it ended.
    struct Log(Arc<Mutex<Vec<String>>>);
    impl SeriesSink for Log {
        fn slots(&mut self, chunk: &SlotSeries) {
            let row = format!("slots {:?}", chunk.rlc_bytes);
            self.0.lock().unwrap().push(row);
        }
        fn flow_bins(&mut self, flow: usize, chunk: &FlowSeries) {
            let row = format!("flow {flow} {} {:?}", chunk.name, chunk.t_s);
            self.0.lock().unwrap().push(row);
        }
        fn events(&mut self, chunk: &[EventCount]) {
            let row = format!("events {}", chunk.len());
            self.0.lock().unwrap().push(row);
        }
        fn end(&mut self) {
            // Slow, so that a caller not waiting for it would see no "end".
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.0.lock().unwrap().push("end".into());
        }
    }

    fn calls(sink: &mut dyn SeriesSink) {
        for i in 0..3 * BackgroundSink::QUEUE as u64 {
            let slots = SlotSeries {
                rlc_bytes: vec![i, i + 1],
                ..SlotSeries::default()
            };
            sink.slots(&slots);
            let flow = FlowSeries {
                name: format!("f{i}"),
                t_s: vec![i as f64],
                ..FlowSeries::default()
            };
            sink.flow_bins(i as usize % 2, &flow);
        }
        let event = EventCount {
            t_s: 0.0,
            what: "drop",
            layer: "tc",
            reason: "queue_full",
            count: 1,
        };
        sink.events(&[event.clone(), event]);
        sink.end();
    }

    /// The sink on its thread gets exactly the calls, in order, that it
    /// gets in place, and `end` returns after the sink has ended.
    #[test]
    fn a_background_sink_sees_the_calls_in_place_order_and_ends_before_end_returns() {
        let in_place = Arc::new(Mutex::new(Vec::new()));
        calls(&mut Log(in_place.clone()));
        let background = Arc::new(Mutex::new(Vec::new()));
        let mut sink = BackgroundSink::spawn(Box::new(Log(background.clone())));
        calls(sink.as_mut());
        assert_eq!(*background.lock().unwrap(), *in_place.lock().unwrap());
        assert_eq!(background.lock().unwrap().last().unwrap(), "end");
    }

    /// Dropped before its end (a run that failed), the sink is dropped
    /// without being ended, and nothing hangs.
    #[test]
    fn a_background_sink_dropped_early_is_not_ended() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut sink = BackgroundSink::spawn(Box::new(Log(log.clone())));
        sink.slots(&SlotSeries::default());
        drop(sink);
        assert_eq!(*log.lock().unwrap(), ["slots []"]);
    }
}
