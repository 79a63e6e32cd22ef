//! Accumulates a run's time series ([`crate::series::RunSeries`]) while the
//! engine runs: O(1) work per delivered packet, per drop and per slot.
//!
//! Memory does not grow with the simulated duration: a run keeps at most
//! [`MAX_BINS`] bins per flow and [`MAX_SLOT_SAMPLES`] slot samples, at
//! most [`MAX_RECONFIGURATIONS`] reconfiguration records of each kind,
//! and nothing is allocated before the run reaches it (building a
//! simulator, e.g. `tcran validate`, allocates no bins at all).
//!
//! Contract: bins are `[k * bin, (k + 1) * bin)` of simulated time, counted
//! from the start of the run (warm-up included); a packet counts in the bin
//! of the instant it is delivered (or dropped). `bin` is the scenario's
//! `series_bin`, or for runs longer than [`MAX_BINS`] of them the smallest
//! whole multiple of it that fits (coarsened, `RunSeries::bin_s` says so).
//! Per-slot samples are taken every `stride`-th slot, where `stride` is 1
//! unless the run has more than [`MAX_SLOT_SAMPLES`] slots; with a MAC
//! scheduling period, "slot" means the period here (one sample per
//! scheduling decision).

use crate::series::{EventCount, FlowSeries, LayerCdfs, Reconfiguration, RunSeries, SlotSeries};
use std::collections::BTreeMap;
use tcran_core::{Duration, Instant};

/// Most per-slot samples one run keeps (32 bytes each: 6.4 MB); longer runs
/// sample every n-th slot instead.
pub const MAX_SLOT_SAMPLES: u64 = 200_000;

/// Most bins per flow (an hour at the default 100 ms; at most 52 bytes
/// each while running); longer runs get wider bins.
pub const MAX_BINS: u64 = 36_000;

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

/// `v.push(x)`, growing like [`resize_capped`].
fn push_capped<T: Clone>(v: &mut Vec<T>, x: T, cap: usize) {
    resize_capped(v, v.len() + 1, x, cap);
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
    flows: Vec<FlowBins>,
    /// (bin, what, layer, reason) -> count.
    events: BTreeMap<(u32, &'static str, &'static str, &'static str), u64>,
    reconfigurations: Vec<Reconfiguration>,
    failed: Vec<Reconfiguration>,
    /// Reconfigurations past [`MAX_RECONFIGURATIONS`], not listed.
    omitted: u64,
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
        let run = end.saturating_since(Instant::ZERO).as_nanos();
        let requested = bin;
        let widen = run.div_ceil(bin.as_nanos()).div_ceil(MAX_BINS).max(1);
        let bin = Duration::from_nanos(bin.as_nanos().saturating_mul(widen));
        let bins = run.div_ceil(bin.as_nanos()) as usize;
        let slots = run.div_ceil(slot.as_nanos());
        let stride = slots.div_ceil(MAX_SLOT_SAMPLES).max(1);
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
            flows,
            events: BTreeMap::new(),
            reconfigurations: Vec::new(),
            failed: Vec::new(),
            omitted: 0,
        }
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
        let (s, cap) = (&mut self.slots, self.slot_samples);
        push_capped(&mut s.t_s, at.as_secs_f64(), cap);
        push_capped(&mut s.rlc_bytes, rlc_bytes, cap);
        push_capped(&mut s.capacity_bytes, capacity, cap);
        push_capped(&mut s.prbs_used, used, cap);
        push_capped(&mut s.prbs_available, available, cap);
    }

    pub(crate) fn delivered(&mut self, flow: usize, at: Instant, bytes: u32, delay: Duration) {
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

    /// The finished series; `names[i]` labels flow `i`.
    pub(crate) fn finish(mut self, names: Vec<FlowLabel>) -> RunSeries {
        // Every flow gets every bin (those the run never touched are empty).
        for f in &mut self.flows {
            f.grow(self.bins, self.bins);
        }
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
            .map(|(f, l)| FlowSeries {
                name: l.name,
                kind: l.kind,
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
                delay_cdf: l.delay_cdf,
                rtt_cdf: l.rtt_cdf,
                layer_delay_cdf: l.layer_delay_cdf,
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
            requested_bin_s: self.requested.as_secs_f64(),
            flows,
            events,
            reconfigurations: self.reconfigurations,
            failed_reconfigurations: self.failed,
            reconfigurations_omitted: self.omitted,
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
            if r.samples_slot(slot) {
                r.slot(Instant::from_millis(slot), 1, 2, 3, 4);
            }
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
}
