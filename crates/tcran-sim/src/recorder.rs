//! Accumulates a run's time series ([`crate::series::RunSeries`]) while the
//! engine runs: O(1) work per delivered packet, per drop and per slot, and
//! memory bounded by the number of bins and of recorded slots.
//!
//! Contract: bins are `[k * bin, (k + 1) * bin)` of simulated time, counted
//! from the start of the run (warm-up included); a packet counts in the bin
//! of the instant it is delivered (or dropped). Per-slot samples are taken
//! every `stride`-th slot, where `stride` is 1 unless the run has more than
//! [`MAX_SLOT_SAMPLES`] slots; with a MAC scheduling period, "slot" means
//! the period here (one sample per scheduling decision).

use crate::series::{EventCount, FlowSeries, LayerCdfs, Reconfiguration, RunSeries, SlotSeries};
use std::collections::BTreeMap;
use tcran_core::{Duration, Instant};

/// Most per-slot samples one run keeps (about 28 MB of samples); longer runs
/// sample every n-th slot instead.
pub const MAX_SLOT_SAMPLES: u64 = 1_000_000;

/// Points of each flow's delay CDF.
pub const CDF_POINTS: usize = 200;

/// Name, kind, delay CDF and per-layer delay CDFs of a flow, for
/// [`SeriesRecorder::finish`].
pub(crate) type FlowLabel = (String, String, Vec<(f64, f64)>, LayerCdfs);

/// Per-bin accumulators of one flow.
#[derive(Debug, Default)]
struct FlowBins {
    bytes: Vec<u64>,
    delay_sum_ns: Vec<u64>,
    delivered: Vec<u32>,
    cwnd: Vec<Option<f64>>,
    srtt_ms: Vec<Option<f64>>,
}

#[derive(Debug)]
pub(crate) struct SeriesRecorder {
    bin: Duration,
    bins: usize,
    end: Instant,
    stride: u64,
    slots: SlotSeries,
    flows: Vec<FlowBins>,
    /// (bin, what, layer, reason) -> count.
    events: BTreeMap<(u32, &'static str, &'static str, &'static str), u64>,
    pub(crate) reconfigurations: Vec<Reconfiguration>,
    pub(crate) failed: Vec<Reconfiguration>,
}

impl SeriesRecorder {
    /// `slot` is the MAC's step: a slot, or the scheduling period.
    pub(crate) fn new(
        bin: Duration,
        end: Instant,
        slot: Duration,
        flows: usize,
        tcp: impl Fn(usize) -> bool,
    ) -> SeriesRecorder {
        let run = end.saturating_since(Instant::ZERO).as_nanos();
        let bins = run.div_ceil(bin.as_nanos()) as usize;
        let slots = run.div_ceil(slot.as_nanos());
        let stride = slots.div_ceil(MAX_SLOT_SAMPLES).max(1);
        let samples = (slots / stride + 1) as usize;
        let slots = SlotSeries {
            t_s: Vec::with_capacity(samples),
            rlc_bytes: Vec::with_capacity(samples),
            capacity_bytes: Vec::with_capacity(samples),
            prbs_used: Vec::with_capacity(samples),
            prbs_available: Vec::with_capacity(samples),
            stride,
        };
        let flows = (0..flows)
            .map(|i| {
                let per_tcp = if tcp(i) { bins } else { 0 };
                FlowBins {
                    bytes: vec![0; bins],
                    delay_sum_ns: vec![0; bins],
                    delivered: vec![0; bins],
                    cwnd: vec![None; per_tcp],
                    srtt_ms: vec![None; per_tcp],
                }
            })
            .collect();
        SeriesRecorder {
            bin,
            bins,
            end,
            stride,
            slots,
            flows,
            events: BTreeMap::new(),
            reconfigurations: Vec::new(),
            failed: Vec::new(),
        }
    }

    pub(crate) fn bin(&self) -> Duration {
        self.bin
    }

    fn index(&self, at: Instant) -> usize {
        ((at.as_nanos() / self.bin.as_nanos()) as usize).min(self.bins.saturating_sub(1))
    }

    /// Whether MAC step number `slot` (a slot, or a scheduling period) is
    /// sampled.
    pub(crate) fn samples_slot(&self, slot: u64) -> bool {
        slot.is_multiple_of(self.stride)
    }

    pub(crate) fn slot(
        &mut self,
        at: Instant,
        rlc_bytes: u64,
        capacity: u64,
        used: u32,
        available: u32,
    ) {
        let s = &mut self.slots;
        s.t_s.push(at.as_secs_f64());
        s.rlc_bytes.push(rlc_bytes);
        s.capacity_bytes.push(capacity);
        s.prbs_used.push(used);
        s.prbs_available.push(available);
    }

    pub(crate) fn delivered(&mut self, flow: usize, at: Instant, bytes: u32, delay: Duration) {
        let i = self.index(at);
        let f = &mut self.flows[flow];
        f.bytes[i] += u64::from(bytes);
        f.delay_sum_ns[i] += delay.as_nanos();
        f.delivered[i] += 1;
    }

    /// `what` is `drop` or `mark`.
    pub(crate) fn event(
        &mut self,
        at: Instant,
        what: &'static str,
        layer: &'static str,
        reason: &'static str,
        n: u64,
    ) {
        let i = self.index(at) as u32;
        *self.events.entry((i, what, layer, reason)).or_default() += n;
    }

    /// Takes back one drop counted earlier (in the bin it was counted in, or
    /// the latest bin before `at` that has one).
    pub(crate) fn withdraw_drop(&mut self, at: Instant, layer: &'static str, reason: &'static str) {
        let i = self.index(at) as u32;
        let key = self
            .events
            .range(..=(i, "drop", layer, reason))
            .rev()
            .find(|(k, _)| k.1 == "drop" && k.2 == layer && k.3 == reason)
            .map(|(k, _)| *k);
        if let Some(k) = key {
            let n = self.events.get_mut(&k).expect("found");
            *n -= 1;
            if *n == 0 {
                self.events.remove(&k);
            }
        }
    }

    /// TCP state at the end of the bin that ends at `at` (or contains it).
    pub(crate) fn tcp_state(
        &mut self,
        flow: usize,
        at: Instant,
        cwnd: u64,
        srtt: Option<Duration>,
    ) {
        let i = self.index(at - Duration::from_nanos(1));
        let f = &mut self.flows[flow];
        if let Some(c) = f.cwnd.get_mut(i) {
            *c = Some(cwnd as f64);
        }
        if let Some(s) = f.srtt_ms.get_mut(i) {
            *s = srtt.map(Duration::as_millis_f64);
        }
    }

    /// A flow that appears during the run (a live flow of the emulator).
    pub(crate) fn add_flow(&mut self, tcp: bool) {
        let per_tcp = if tcp { self.bins } else { 0 };
        self.flows.push(FlowBins {
            bytes: vec![0; self.bins],
            delay_sum_ns: vec![0; self.bins],
            delivered: vec![0; self.bins],
            cwnd: vec![None; per_tcp],
            srtt_ms: vec![None; per_tcp],
        });
    }

    /// Ends the series at `end` (a run that stopped before its planned
    /// end): the bins after it go.
    pub(crate) fn cut_at(&mut self, end: Instant) {
        if end >= self.end {
            return;
        }
        let run = end.saturating_since(Instant::ZERO).as_nanos();
        self.bins = (run.div_ceil(self.bin.as_nanos()) as usize).max(1);
        self.end = end;
        for f in &mut self.flows {
            f.bytes.truncate(self.bins);
            f.delay_sum_ns.truncate(self.bins);
            f.delivered.truncate(self.bins);
            f.cwnd.truncate(self.bins);
            f.srtt_ms.truncate(self.bins);
        }
    }

    /// The finished series; `names[i]` = (name, kind, delay CDFs) of flow `i`.
    pub(crate) fn finish(self, names: Vec<FlowLabel>) -> RunSeries {
        let bin_s = self.bin.as_secs_f64();
        let run_s = self.end.as_secs_f64();
        let bin_ns = self.bin.as_nanos();
        let t: Vec<f64> = (0..self.bins)
            .map(|i| (i as u64 * bin_ns) as f64 / 1e9)
            .collect();
        let flows = self
            .flows
            .into_iter()
            .zip(names)
            .map(|(f, (name, kind, delay_cdf, layer_delay_cdf))| FlowSeries {
                name,
                kind,
                t_s: t.clone(),
                goodput_mbps: f
                    .bytes
                    .iter()
                    .zip(&t)
                    // The last bin may be cut short by the end of the run.
                    .map(|(b, t0)| *b as f64 * 8.0 / (run_s - t0).min(bin_s) / 1e6)
                    .collect(),
                delay_ms: f
                    .delay_sum_ns
                    .iter()
                    .zip(&f.delivered)
                    .map(|(s, n)| (*n > 0).then(|| *s as f64 / *n as f64 / 1e6))
                    .collect(),
                cwnd_bytes: f.cwnd,
                srtt_ms: f.srtt_ms,
                delay_cdf,
                layer_delay_cdf,
            })
            .collect();
        let events = self
            .events
            .into_iter()
            .map(|((i, what, layer, reason), count)| EventCount {
                t_s: (u64::from(i) * bin_ns) as f64 / 1e9,
                what,
                layer,
                reason,
                count,
            })
            .collect();
        RunSeries {
            slots: self.slots,
            bin_s,
            flows,
            events,
            reconfigurations: self.reconfigurations,
            failed_reconfigurations: self.failed,
        }
    }
}
