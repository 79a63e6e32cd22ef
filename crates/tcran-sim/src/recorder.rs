//! Accumulates a run's time series ([`crate::series::RunSeries`]) while the
//! engine runs: O(1) work per delivered packet, per drop and per slot.
//!
//! Memory does not grow with the simulated duration: the series a run
//! keeps ([`RunSeries`]) hold at most [`MAX_BINS`] bins per flow and
//! [`MAX_SLOT_SAMPLES`] slot samples, at most [`MAX_RECONFIGURATIONS`]
//! reconfiguration records of each kind, and nothing is allocated before
//! the run reaches it (building a simulator, e.g. `tcran validate`,
//! allocates no bins at all).
//!
//! A run given a [`SeriesSink`] ([`crate::Sim::stream_series`]) also hands
//! the series at full resolution to it as the run goes (every slot, every
//! `series_bin`, in chunks of bounded size), and keeps for itself only a
//! display copy capped at [`PLOT_BINS`] bins and [`PLOT_SLOT_SAMPLES`]
//! slot samples: a front end that writes the sink's rows to files (the
//! `tcran` CLI) holds a bounded amount of series whatever the duration,
//! and its files lose no resolution.
//!
//! Contract: bins are `[k * bin, (k + 1) * bin)` of simulated time, counted
//! from the start of the run (warm-up included); a packet counts in the bin
//! of the instant it is delivered (or dropped). `bin` is the scenario's
//! `series_bin`, or, in the kept series of a run longer than its bin cap,
//! the smallest whole multiple of it that fits (`RunSeries::bin_s` says
//! so). The kept slot series has one sample per MAC step (a slot, or the
//! scheduling period: one sample per scheduling decision) unless the run
//! has more steps than its cap; then each sample aggregates `stride`
//! consecutive steps ([`SlotSeries`] says how).

use crate::series::{
    EventCount, FlowSeries, LayerCdfs, Reconfiguration, RunSeries, SeriesSink, SlotSeries,
};
use std::collections::BTreeMap;
use tcran_core::{Duration, Instant};

/// Most per-slot samples one run keeps (32 bytes each: 6.4 MB); in longer
/// runs each sample aggregates several slots.
pub const MAX_SLOT_SAMPLES: u64 = 200_000;

/// Most bins per flow (an hour at the default 100 ms; at most 52 bytes
/// each while running); longer runs get wider bins.
pub const MAX_BINS: u64 = 36_000;

/// The caps of the display copy a streaming run keeps
/// ([`crate::Sim::stream_series`]): what its plots need (a plotted line has
/// at most a few thousand points), not what its files get. 65 536 slot
/// samples are 65 s of 1 ms slots (2 MB); 4 096 bins per flow.
pub const PLOT_SLOT_SAMPLES: u64 = 65_536;
/// See [`PLOT_SLOT_SAMPLES`].
pub const PLOT_BINS: u64 = 4_096;

/// Slot samples, and bins per flow, a streaming run buffers before it hands
/// them to its sink.
const CHUNK: usize = 4_096;

/// How long a streaming run holds a bin before it hands it on: a sample
/// may be timed a little ahead of the event that reports it (a delivery at
/// the end of the slot that carries it).
const BIN_HOLD: Duration = Duration::from_secs(2);

/// How long a streaming run holds the drop/mark counts of a bin before it
/// hands them on: an RLC AM give-up the UE turns out to have received is
/// withdrawn from the bin it was counted in (`withdraw_drop`), HARQ and RLC
/// retransmission times (tens to hundreds of ms) after it.
const EVENT_HOLD: Duration = Duration::from_secs(30);

/// Most applied (and, separately, refused) reconfigurations a run lists;
/// the summary still counts every one.
pub const MAX_RECONFIGURATIONS: usize = 10_000;

/// Points of each flow's delay CDF.
pub const CDF_POINTS: usize = 200;

/// What the end of a run knows of a flow, for [`SeriesRecorder::finish`].
#[derive(Debug)]
pub(crate) struct FlowLabel {
    pub name: String,
    pub kind: String,
    pub delay_cdf: Vec<(f64, f64)>,
    pub rtt_cdf: Vec<(f64, f64)>,
    pub layer_delay_cdf: LayerCdfs,
}

/// Per-bin accumulators of one flow, grown up to the last bin touched.
#[derive(Debug, Default)]
struct FlowBins {
    tcp: bool,
    bytes: Vec<u64>,
    delay_sum_ns: Vec<u64>,
    delivered: Vec<u32>,
    cwnd: Vec<Option<f64>>,
    srtt_ms: Vec<Option<f64>>,
}

impl FlowBins {
    fn new(tcp: bool) -> FlowBins {
        FlowBins {
            tcp,
            ..FlowBins::default()
        }
    }
    /// Makes bin `i` (and every one before it) exist; the run has `bins`.
    #[inline]
    fn reach(&mut self, i: usize, bins: usize) {
        if self.bytes.len() <= i {
            self.grow(i + 1, bins);
        }
    }
    #[cold]
    fn grow(&mut self, n: usize, bins: usize) {
        resize_capped(&mut self.bytes, n, 0, bins);
        resize_capped(&mut self.delay_sum_ns, n, 0, bins);
        resize_capped(&mut self.delivered, n, 0, bins);
        if self.tcp {
            resize_capped(&mut self.cwnd, n, None, bins);
            resize_capped(&mut self.srtt_ms, n, None, bins);
        }
    }
    fn truncate(&mut self, n: usize) {
        self.bytes.truncate(n);
        self.delay_sum_ns.truncate(n);
        self.delivered.truncate(n);
        self.cwnd.truncate(n);
        self.srtt_ms.truncate(n);
    }
}

/// `v.resize(n, x)` growing the allocation as `Vec` does (doubling) but
/// never past `cap`, the most the run can need: a series that reaches its
/// cap holds no unused tail (doubling alone leaves up to 45 % of a capped
/// series' allocation unused, e.g. room for 262 144 slot samples holding
/// 200 000).
fn resize_capped<T: Clone>(v: &mut Vec<T>, n: usize, x: T, cap: usize) {
    if n > v.capacity() {
        let room = v.capacity().saturating_mul(2).min(cap).max(n);
        v.reserve_exact(room - v.len());
    }
    v.resize(n, x);
}

/// `v.push(x)`, growing like [`resize_capped`] (a push, not a one-element
/// `resize`: this runs five times a slot).
fn push_capped<T>(v: &mut Vec<T>, x: T, cap: usize) {
    if v.len() == v.capacity() {
        let room = v.capacity().saturating_mul(2).min(cap).max(v.len() + 1);
        v.reserve_exact(room - v.len());
    }
    v.push(x);
}

#[derive(Debug)]
pub(crate) struct SeriesRecorder {
    bin: Duration,
    /// The scenario's `series_bin` (`bin` is a whole multiple of it).
    requested: Duration,
    bins: usize,
    end: Instant,
    stride: u64,
    /// The most slot samples the run can take.
    slot_samples: usize,
    slots: SlotSeries,
    /// The slots of the sample being aggregated (`stride` > 1).
    pending: SlotAggregate,
    flows: Vec<FlowBins>,
    /// (bin, what, layer, reason) -> count.
    events: BTreeMap<(u32, &'static str, &'static str, &'static str), u64>,
    reconfigurations: Vec<Reconfiguration>,
    failed: Vec<Reconfiguration>,
    /// Reconfigurations past [`MAX_RECONFIGURATIONS`], not listed.
    omitted: u64,
    /// The full resolution, handed on as the run goes.
    stream: Option<Stream>,
}

/// The slots of one aggregated sample so far.
#[derive(Debug, Default)]
struct SlotAggregate {
    slots: u64,
    t_s: f64,
    rlc_max: u64,
    capacity_sum: u64,
    downlink_slots: u64,
    used: u64,
    available: u64,
}

impl SlotAggregate {
    fn add(&mut self, at: Instant, rlc: u64, capacity: u64, used: u32, available: u32) {
        if self.slots == 0 {
            self.t_s = at.as_secs_f64();
        }
        self.slots += 1;
        self.rlc_max = self.rlc_max.max(rlc);
        if available > 0 {
            self.capacity_sum += capacity;
            self.downlink_slots += 1;
        }
        self.used += u64::from(used);
        self.available += u64::from(available);
    }

    /// Appends the sample to `s` and starts the next one.
    fn push_to(&mut self, s: &mut SlotSeries, cap: usize) {
        let a = std::mem::take(self);
        push_capped(&mut s.t_s, a.t_s, cap);
        push_capped(&mut s.rlc_bytes, a.rlc_max, cap);
        push_capped(
            &mut s.capacity_bytes,
            a.capacity_sum.checked_div(a.downlink_slots).unwrap_or(0),
            cap,
        );
        push_capped(&mut s.prbs_used, saturate(a.used), cap);
        push_capped(&mut s.prbs_available, saturate(a.available), cap);
    }
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What a streaming run has not yet handed to its sink.
struct Stream {
    sink: Box<dyn SeriesSink>,
    /// The scenario's `series_bin`.
    bin: Duration,
    /// The run's last bin (what reaches the end counts in it).
    last: usize,
    /// (name, kind) of each flow.
    names: Vec<(String, String)>,
    slots: SlotSeries,
    /// The first bin not yet handed on; `flows` start there.
    first: usize,
    flows: Vec<FlowBins>,
    /// (bin, what, layer, reason) -> count, of the bins not yet handed on.
    events: BTreeMap<(u32, &'static str, &'static str, &'static str), u64>,
    late_updates: u64,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("first", &self.first)
            .finish_non_exhaustive()
    }
}

impl Stream {
    fn index(&self, at: Instant) -> usize {
        ((at.as_nanos() / self.bin.as_nanos()) as usize).min(self.last)
    }

    fn slot(&mut self, at: Instant, rlc: u64, capacity: u64, used: u32, available: u32) {
        let s = &mut self.slots;
        s.t_s.push(at.as_secs_f64());
        s.rlc_bytes.push(rlc);
        s.capacity_bytes.push(capacity);
        s.prbs_used.push(used);
        s.prbs_available.push(available);
        if s.t_s.len() >= CHUNK {
            self.hand_on_slots();
        }
    }

    fn hand_on_slots(&mut self) {
        if !self.slots.t_s.is_empty() {
            self.sink.slots(&self.slots);
            let s = &mut self.slots;
            s.t_s.clear();
            s.rlc_bytes.clear();
            s.capacity_bytes.clear();
            s.prbs_used.clear();
            s.prbs_available.clear();
        }
    }

    /// The run reached bin `i`: bins more than [`BIN_HOLD`] before it are
    /// final, so once a chunk of them has gathered they go to the sink, and
    /// so do the drop/mark counts older than [`EVENT_HOLD`].
    fn reached(&mut self, i: usize) {
        let bin = self.bin.as_nanos();
        let hold = |d: Duration| d.as_nanos().div_ceil(bin) as usize + 1;
        let done = i.saturating_sub(hold(BIN_HOLD));
        if done >= self.first + CHUNK {
            self.hand_on_bins(done, None);
            self.hand_on_events(i.saturating_sub(hold(EVENT_HOLD)));
        }
    }

    /// Bin `i` of `flow`, `None` (counted) if it has gone to the sink.
    fn flow(&mut self, flow: usize, i: usize) -> Option<(&mut FlowBins, usize)> {
        let Some(k) = i.checked_sub(self.first) else {
            self.late_updates += 1;
            return None;
        };
        let f = self.flows.get_mut(flow)?;
        f.reach(k, usize::MAX);
        Some((f, k))
    }

    /// Hands bins `first..upto` of every flow to the sink; `last` is the
    /// run's end when `upto` is its last bin (which the end may cut short).
    fn hand_on_bins(&mut self, upto: usize, last: Option<Instant>) {
        while self.first < upto {
            self.hand_on_chunk((self.first + CHUNK).min(upto), last);
        }
    }

    /// [`Stream::hand_on_bins`] for at most [`CHUNK`] bins.
    fn hand_on_chunk(&mut self, upto: usize, last: Option<Instant>) {
        let n = upto - self.first;
        let bin_ns = self.bin.as_nanos();
        let t_s: Vec<f64> = (self.first..upto)
            .map(|i| (i as u64 * bin_ns) as f64 / 1e9)
            .collect();
        for (k, f) in self.flows.iter_mut().enumerate() {
            if f.bytes.len() < n {
                f.grow(n, usize::MAX);
            }
            let (name, kind) = self.names.get(k).cloned().unwrap_or_default();
            let chunk = f.take_front(n, &t_s, self.bin, last, name, kind);
            self.sink.flow_bins(k, &chunk);
        }
        self.first = upto;
    }

    /// Hands the counts of bins before `upto` to the sink.
    fn hand_on_events(&mut self, upto: usize) {
        let upto = u32::try_from(upto).unwrap_or(u32::MAX);
        let keep = self.events.split_off(&(upto, "", "", ""));
        let done = std::mem::replace(&mut self.events, keep);
        if !done.is_empty() {
            self.sink.events(&event_counts(done, self.bin.as_nanos()));
        }
    }

    fn withdraw_drop(&mut self, i: usize, layer: &'static str, reason: &'static str) {
        if !withdraw(&mut self.events, i, layer, reason) {
            self.late_updates += 1;
        }
    }

    /// Hands on everything left: the run ended at `end` after `bins` bins.
    fn finish(mut self, end: Instant, bins: usize) -> u64 {
        self.hand_on_slots();
        self.hand_on_bins(bins, Some(end));
        self.hand_on_events(usize::MAX);
        self.sink.end();
        self.late_updates
    }
}

impl FlowBins {
    /// Takes the first `n` bins (starting at `t_s`) as a flow's series.
    fn take_front(
        &mut self,
        n: usize,
        t_s: &[f64],
        bin: Duration,
        end: Option<Instant>,
        name: String,
        kind: String,
    ) -> FlowSeries {
        let bytes: Vec<u64> = self.bytes.drain(..n).collect();
        let delay: Vec<u64> = self.delay_sum_ns.drain(..n).collect();
        let delivered: Vec<u32> = self.delivered.drain(..n).collect();
        let (cwnd, srtt) = if self.tcp {
            (
                self.cwnd.drain(..n).collect(),
                self.srtt_ms.drain(..n).collect(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        FlowSeries {
            name,
            kind,
            t_s: t_s.to_vec(),
            goodput_mbps: goodput(&bytes, t_s, bin, end),
            delay_ms: mean_delays(&delay, &delivered),
            cwnd_bytes: cwnd,
            srtt_ms: srtt,
            ..FlowSeries::default()
        }
    }
}

/// Bytes per bin as Mbit/s; the run's `end` may cut the last bin short.
fn goodput(bytes: &[u64], t_s: &[f64], bin: Duration, end: Option<Instant>) -> Vec<f64> {
    let bin_s = bin.as_secs_f64();
    let end_s = end.map_or(f64::INFINITY, Instant::as_secs_f64);
    bytes
        .iter()
        .zip(t_s)
        .map(|(b, t0)| *b as f64 * 8.0 / (end_s - t0).min(bin_s) / 1e6)
        .collect()
}

fn mean_delays(sum_ns: &[u64], delivered: &[u32]) -> Vec<Option<f64>> {
    sum_ns
        .iter()
        .zip(delivered)
        .map(|(s, n)| (*n > 0).then(|| *s as f64 / *n as f64 / 1e6))
        .collect()
}

type EventKey = (u32, &'static str, &'static str, &'static str);

fn event_counts(events: BTreeMap<EventKey, u64>, bin_ns: u64) -> Vec<EventCount> {
    events
        .into_iter()
        .map(|((i, what, layer, reason), count)| EventCount {
            t_s: (u64::from(i) * bin_ns) as f64 / 1e9,
            what,
            layer,
            reason,
            count,
        })
        .collect()
}

/// Takes back one drop in bin `i` or the latest bin before it that has
/// one; false if there is none.
fn withdraw(
    events: &mut BTreeMap<EventKey, u64>,
    i: usize,
    layer: &'static str,
    reason: &'static str,
) -> bool {
    let i = u32::try_from(i).unwrap_or(u32::MAX);
    let key = events
        .range(..=(i, "drop", layer, reason))
        .rev()
        .find(|(k, _)| k.1 == "drop" && k.2 == layer && k.3 == reason)
        .map(|(k, _)| *k);
    let Some(k) = key else { return false };
    let n = events.get_mut(&k).expect("found");
    *n -= 1;
    if *n == 0 {
        events.remove(&k);
    }
    true
}

impl SeriesRecorder {
    /// `slot` is the MAC's step: a slot, or the scheduling period.
    /// Allocates nothing per bin or slot: the vectors grow as the run
    /// reaches them.
    pub(crate) fn new(
        bin: Duration,
        end: Instant,
        slot: Duration,
        flows: usize,
        tcp: impl Fn(usize) -> bool,
    ) -> SeriesRecorder {
        Self::with_caps(bin, end, slot, flows, tcp, MAX_BINS, MAX_SLOT_SAMPLES)
    }

    fn with_caps(
        bin: Duration,
        end: Instant,
        slot: Duration,
        flows: usize,
        tcp: impl Fn(usize) -> bool,
        max_bins: u64,
        max_slot_samples: u64,
    ) -> SeriesRecorder {
        let run = end.saturating_since(Instant::ZERO).as_nanos();
        let requested = bin;
        let widen = run.div_ceil(bin.as_nanos()).div_ceil(max_bins).max(1);
        let bin = Duration::from_nanos(bin.as_nanos().saturating_mul(widen));
        let bins = run.div_ceil(bin.as_nanos()) as usize;
        let slots = run.div_ceil(slot.as_nanos());
        let stride = slots.div_ceil(max_slot_samples).max(1);
        let slot_samples = slots.div_ceil(stride) as usize;
        let slots = SlotSeries {
            stride,
            ..SlotSeries::default()
        };
        let flows = (0..flows).map(|i| FlowBins::new(tcp(i))).collect();
        SeriesRecorder {
            bin,
            requested,
            bins,
            end,
            stride,
            slot_samples,
            slots,
            pending: SlotAggregate::default(),
            flows,
            events: BTreeMap::new(),
            reconfigurations: Vec::new(),
            failed: Vec::new(),
            omitted: 0,
            stream: None,
        }
    }

    /// From now on, hands the series at full resolution to `sink` and
    /// keeps only a display copy ([`PLOT_BINS`], [`PLOT_SLOT_SAMPLES`]).
    /// `names` are the flows' (name, kind). Call before the run starts.
    pub(crate) fn stream_to(
        &mut self,
        sink: Box<dyn SeriesSink>,
        slot: Duration,
        names: Vec<(String, String)>,
    ) {
        let tcp: Vec<bool> = self.flows.iter().map(|f| f.tcp).collect();
        let mut plot = Self::with_caps(
            self.requested,
            self.end,
            slot,
            tcp.len(),
            |i| tcp[i],
            PLOT_BINS,
            PLOT_SLOT_SAMPLES,
        );
        let run = self.end.saturating_since(Instant::ZERO).as_nanos();
        plot.stream = Some(Stream {
            sink,
            bin: self.requested,
            last: (run.div_ceil(self.requested.as_nanos()) as usize).saturating_sub(1),
            names,
            slots: SlotSeries {
                stride: 1,
                ..SlotSeries::default()
            },
            first: 0,
            flows: tcp.iter().map(|t| FlowBins::new(*t)).collect(),
            events: BTreeMap::new(),
            late_updates: 0,
        });
        *self = plot;
    }

    /// Lists an applied (`failed` false) or refused reconfiguration, up to
    /// [`MAX_RECONFIGURATIONS`] of each.
    pub(crate) fn reconfiguration(&mut self, failed: bool, r: Reconfiguration) {
        let list = if failed {
            &mut self.failed
        } else {
            &mut self.reconfigurations
        };
        if list.len() < MAX_RECONFIGURATIONS {
            list.push(r);
        } else {
            self.omitted += 1;
        }
    }

    /// The finest bin: the scenario's `series_bin` (the run's bin-end
    /// events come at this pace; the kept series may use wider bins).
    pub(crate) fn tick(&self) -> Duration {
        self.requested
    }

    fn index(&self, at: Instant) -> usize {
        ((at.as_nanos() / self.bin.as_nanos()) as usize).min(self.bins.saturating_sub(1))
    }

    /// One MAC step (a slot, or a scheduling period).
    pub(crate) fn slot(
        &mut self,
        at: Instant,
        rlc_bytes: u64,
        capacity: u64,
        used: u32,
        available: u32,
    ) {
        if let Some(s) = &mut self.stream {
            s.slot(at, rlc_bytes, capacity, used, available);
        }
        let (s, cap) = (&mut self.slots, self.slot_samples);
        if self.stride == 1 {
            push_capped(&mut s.t_s, at.as_secs_f64(), cap);
            push_capped(&mut s.rlc_bytes, rlc_bytes, cap);
            push_capped(&mut s.capacity_bytes, capacity, cap);
            push_capped(&mut s.prbs_used, used, cap);
            push_capped(&mut s.prbs_available, available, cap);
        } else {
            self.pending.add(at, rlc_bytes, capacity, used, available);
            if self.pending.slots == self.stride {
                self.pending.push_to(s, cap);
            }
        }
    }

    pub(crate) fn delivered(&mut self, flow: usize, at: Instant, bytes: u32, delay: Duration) {
        if let Some(s) = &mut self.stream {
            let i = s.index(at);
            s.reached(i);
            if let Some((f, k)) = s.flow(flow, i) {
                f.bytes[k] += u64::from(bytes);
                f.delay_sum_ns[k] += delay.as_nanos();
                f.delivered[k] += 1;
            }
        }
        let i = self.index(at);
        let bins = self.bins;
        let f = &mut self.flows[flow];
        f.reach(i, bins);
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
        if let Some(s) = &mut self.stream {
            let i = s.index(at);
            s.reached(i);
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            *s.events.entry((i, what, layer, reason)).or_default() += n;
        }
        let i = self.index(at) as u32;
        *self.events.entry((i, what, layer, reason)).or_default() += n;
    }

    /// Takes back one drop counted earlier (in the bin it was counted in, or
    /// the latest bin before `at` that has one).
    pub(crate) fn withdraw_drop(&mut self, at: Instant, layer: &'static str, reason: &'static str) {
        if let Some(s) = &mut self.stream {
            let i = s.index(at);
            s.withdraw_drop(i, layer, reason);
        }
        let i = self.index(at);
        withdraw(&mut self.events, i, layer, reason);
    }

    /// TCP state at the end of the bin that ends at `at` (or contains it).
    pub(crate) fn tcp_state(
        &mut self,
        flow: usize,
        at: Instant,
        cwnd: u64,
        srtt: Option<Duration>,
    ) {
        let before = at - Duration::from_nanos(1);
        if let Some(s) = &mut self.stream {
            let i = s.index(before);
            s.reached(i);
            if let Some((f, k)) = s.flow(flow, i) {
                f.cwnd[k] = Some(cwnd as f64);
                f.srtt_ms[k] = srtt.map(Duration::as_millis_f64);
            }
        }
        let i = self.index(before);
        let bins = self.bins;
        let f = &mut self.flows[flow];
        f.reach(i, bins);
        if let Some(c) = f.cwnd.get_mut(i) {
            *c = Some(cwnd as f64);
        }
        if let Some(s) = f.srtt_ms.get_mut(i) {
            *s = srtt.map(Duration::as_millis_f64);
        }
    }

    /// A flow that appears during the run (a live flow of the emulator).
    pub(crate) fn add_flow(&mut self, tcp: bool) {
        if let Some(s) = &mut self.stream {
            s.flows.push(FlowBins::new(tcp));
        }
        self.flows.push(FlowBins::new(tcp));
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
            f.truncate(self.bins);
        }
    }

    /// The finished series; `names[i]` labels flow `i`. A streaming run
    /// hands its last chunks to its sink first.
    pub(crate) fn finish(mut self, names: Vec<FlowLabel>) -> RunSeries {
        let late_updates = match self.stream.take() {
            Some(s) => {
                let run = self.end.saturating_since(Instant::ZERO).as_nanos();
                let bins = (run.div_ceil(s.bin.as_nanos()) as usize).max(1);
                s.finish(self.end, bins)
            }
            None => 0,
        };
        if self.pending.slots > 0 {
            self.pending.push_to(&mut self.slots, self.slot_samples);
        }
        // Every flow gets every bin (those the run never touched are empty).
        for f in &mut self.flows {
            f.grow(self.bins, self.bins);
        }
        let bin_ns = self.bin.as_nanos();
        let t: Vec<f64> = (0..self.bins)
            .map(|i| (i as u64 * bin_ns) as f64 / 1e9)
            .collect();
        let end = Some(self.end);
        let flows = self
            .flows
            .into_iter()
            .zip(names)
            .map(|(f, l)| FlowSeries {
                name: l.name,
                kind: l.kind,
                goodput_mbps: goodput(&f.bytes, &t, self.bin, end),
                delay_ms: mean_delays(&f.delay_sum_ns, &f.delivered),
                t_s: t.clone(),
                cwnd_bytes: f.cwnd,
                srtt_ms: f.srtt_ms,
                delay_cdf: l.delay_cdf,
                rtt_cdf: l.rtt_cdf,
                layer_delay_cdf: l.layer_delay_cdf,
            })
            .collect();
        RunSeries {
            slots: self.slots,
            bin_s: self.bin.as_secs_f64(),
            requested_bin_s: self.requested.as_secs_f64(),
            flows,
            events: event_counts(self.events, bin_ns),
            reconfigurations: self.reconfigurations,
            failed_reconfigurations: self.failed,
            reconfigurations_omitted: self.omitted,
            late_updates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of three years at 1 ms bins on 30 kHz slots: nothing is
    /// allocated up front, the bins widen to a whole multiple of the
    /// requested width that keeps at most MAX_BINS of them, and slots are
    /// sampled with a stride that keeps at most MAX_SLOT_SAMPLES.
    #[test]
    fn long_runs_get_wider_bins_and_allocate_nothing_up_front() {
        let end = Instant::ZERO + Duration::from_secs(100_000_000);
        let r = SeriesRecorder::new(
            Duration::from_millis(1),
            end,
            Duration::from_micros(500),
            3,
            |i| i == 0,
        );
        let run_ms = 100_000_000_000u64;
        assert_eq!(r.bin.as_nanos() % 1_000_000, 0, "a multiple of 1 ms");
        assert_eq!(r.bin.as_nanos() / 1_000_000, run_ms.div_ceil(MAX_BINS));
        assert!(r.bins as u64 <= MAX_BINS);
        assert!(r
            .flows
            .iter()
            .all(|f| f.bytes.capacity() == 0 && f.cwnd.capacity() == 0));
        assert_eq!(r.slots.t_s.capacity(), 0);
        assert!(2 * run_ms / r.stride <= MAX_SLOT_SAMPLES);
        // A short run keeps the requested bins and every slot.
        let r = SeriesRecorder::new(
            Duration::from_millis(100),
            Instant::ZERO + Duration::from_secs(60),
            Duration::from_millis(1),
            1,
            |_| false,
        );
        assert_eq!(
            (r.bin, r.bins, r.stride),
            (Duration::from_millis(100), 600, 1)
        );
    }

    /// Series that reach their caps hold no unused room: 300 s of 1 ms
    /// slots keep 150 000 samples (stride 2) in 150 000 places, not the
    /// 262 144 that doubling reaches, and 3 000 bins in 3 000.
    #[test]
    fn series_at_their_cap_hold_no_unused_room() {
        let end = Instant::ZERO + Duration::from_secs(300);
        let mut r = SeriesRecorder::new(
            Duration::from_millis(100),
            end,
            Duration::from_millis(1),
            1,
            |_| true,
        );
        for slot in 0..300_000 {
            r.slot(Instant::from_millis(slot), 1, 2, 3, 4);
        }
        for ms in (0..300_000).step_by(100) {
            r.delivered(0, Instant::from_millis(ms), 1, Duration::from_millis(1));
            r.tcp_state(0, Instant::from_millis(ms + 100), 1, None);
        }
        let s = &r.slots;
        assert_eq!(s.t_s.len(), 150_000);
        for cap in [
            s.t_s.capacity(),
            s.rlc_bytes.capacity(),
            s.capacity_bytes.capacity(),
            s.prbs_used.capacity(),
            s.prbs_available.capacity(),
        ] {
            assert_eq!(cap, 150_000);
        }
        let f = &r.flows[0];
        assert_eq!(f.bytes.len(), 3_000);
        for cap in [
            f.bytes.capacity(),
            f.delay_sum_ns.capacity(),
            f.delivered.capacity(),
            f.cwnd.capacity(),
            f.srtt_ms.capacity(),
        ] {
            assert_eq!(cap, 3_000);
        }
    }

    #[test]
    fn bins_grow_as_the_run_reaches_them_and_finish_has_them_all() {
        let mut r = SeriesRecorder::new(
            Duration::from_millis(100),
            Instant::ZERO + Duration::from_secs(1),
            Duration::from_millis(1),
            2,
            |i| i == 1,
        );
        r.delivered(0, Instant::from_millis(250), 1000, Duration::from_millis(5));
        assert_eq!(r.flows[0].bytes.len(), 3);
        assert!(r.flows[1].bytes.is_empty());
        r.tcp_state(1, Instant::from_millis(100), 14_600, None);
        let label = |n: &str| FlowLabel {
            name: n.into(),
            kind: "cbr".into(),
            delay_cdf: Vec::new(),
            rtt_cdf: Vec::new(),
            layer_delay_cdf: LayerCdfs::default(),
        };
        let s = r.finish(vec![label("a"), label("b")]);
        assert_eq!(s.flows[0].goodput_mbps.len(), 10);
        assert_eq!(s.flows[0].goodput_mbps[2], 1000.0 * 8.0 / 0.1 / 1e6);
        assert_eq!(s.flows[0].delay_ms[2], Some(5.0));
        assert!(s.flows[0].cwnd_bytes.is_empty(), "not TCP");
        assert_eq!(s.flows[1].cwnd_bytes.len(), 10);
        assert_eq!(s.flows[1].cwnd_bytes[0], Some(14_600.0));
        assert_eq!((s.bin_s, s.requested_bin_s), (0.1, 0.1));
    }

    /// Counts what a sink is handed.
    struct Count(std::sync::Arc<std::sync::atomic::AtomicU64>);
    impl SeriesSink for Count {
        fn slots(&mut self, chunk: &SlotSeries) {
            assert!(chunk.t_s.len() <= CHUNK);
            self.0
                .fetch_add(chunk.t_s.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        fn flow_bins(&mut self, _: usize, chunk: &FlowSeries) {
            assert!(chunk.t_s.len() <= CHUNK);
        }
        fn events(&mut self, _: &[EventCount]) {}
    }

    /// A streaming run of two hours at 1 ms slots and bins: the sink gets
    /// all 7.2 million slots; the display copy holds at most
    /// PLOT_SLOT_SAMPLES samples (each covering 110 slots: the largest RLC
    /// occupancy, the summed PRBs) and PLOT_BINS bins, whatever the
    /// duration.
    #[test]
    fn a_streaming_run_keeps_a_display_copy_within_its_caps() {
        let end = Instant::ZERO + Duration::from_secs(7_200);
        let slot = Duration::from_millis(1);
        let mut r = SeriesRecorder::new(Duration::from_millis(1), end, slot, 1, |_| true);
        let got = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        r.stream_to(
            Box::new(Count(got.clone())),
            slot,
            vec![("f".into(), "tcp".into())],
        );
        for ms in 0..7_200_000u64 {
            r.slot(Instant::from_millis(ms), ms % 1000, 100, 1, 2);
            if ms % 10 == 0 {
                r.delivered(0, Instant::from_millis(ms), 1500, Duration::from_millis(5));
            }
        }
        let label = FlowLabel {
            name: "f".into(),
            kind: "tcp".into(),
            delay_cdf: Vec::new(),
            rtt_cdf: Vec::new(),
            layer_delay_cdf: LayerCdfs::default(),
        };
        let s = r.finish(vec![label]);
        assert_eq!(got.load(std::sync::atomic::Ordering::Relaxed), 7_200_000);
        assert_eq!(s.slots.stride, 7_200_000u64.div_ceil(PLOT_SLOT_SAMPLES));
        assert!(s.slots.t_s.len() as u64 <= PLOT_SLOT_SAMPLES);
        assert_eq!(s.slots.t_s.capacity(), s.slots.t_s.len());
        assert_eq!(s.slots.rlc_bytes[0], 109, "the largest of slots 0..110");
        assert_eq!(s.slots.prbs_used[0], 110);
        assert!(s.flows[0].t_s.len() as u64 <= PLOT_BINS);
        assert_eq!(s.late_updates, 0);
    }
}
