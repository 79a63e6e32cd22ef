//! The downlink simulator: servers -> core network -> the RAN node
//! (`tcran_gnb::Gnb`: UPF, SDAP, TC pipelines, PDCP, RLC, MAC/HARQ, the UE
//! side and the uplink model) -> UE applications, and back.
//!
//! Contract:
//! - The RAN node is driven through its public API only, on a virtual
//!   clock: the simulator's own events (servers, UE-side application
//!   timers, packets crossing the core network, series bins, scheduled
//!   reconfigurations, controllers) and the node's events run in one
//!   time order. At one instant the simulator's events run first, then
//!   the node's (its inputs at `t` come before its own events at `t`), one
//!   node event at a time, and the node's outputs are handled after each.
//! - Deterministic: events run in `(time, sequence)` order and every random
//!   draw comes from a stream seeded by the run seed and the entity's name,
//!   so a scenario and a seed give byte-identical results.
//! - The core network delays packets by `core_delay` each way; the node
//!   says when an uplink packet reaches the UPF, the simulator adds the
//!   core delay to the server.
//! - Every packet that leaves the data path is counted with its layer and
//!   reason; the summary's packet ledger checks `created = delivered +
//!   dropped + in flight` for the downlink.
//! - Scheduled events and controllers run as events of their own, between
//!   packet events; each change is applied atomically by the node and
//!   recorded ([`crate::controller`]).
//! - Statistics ignore what happens before `warmup` (the node's cumulative
//!   counters are read at the first event at or after it); the time series
//!   ([`crate::series`]) cost O(1) per delivered packet, drop and slot.

mod cells;
mod control;
mod flows;
mod ledger;
mod live;
mod nodes;
mod summary;

pub use live::LiveOutput;

use crate::metrics::BinnedMean;
use crate::recorder::SeriesRecorder;
use crate::report::{PacketCounts, ReconfigCounts};
use crate::scenario::SimConfig;
use crate::RunOutput;
use control::{ControllerSlot, Scheduled};
use flows::{Endpoints, Flow};
use slab::Slab;
use std::path::Path;
use tcran_core::event::EventQueue;
use tcran_core::{ConfigError, Duration, Instant, Packet};
use tcran_gnb::{DrbCounters, Gnb, Output, SlotRecord};

#[derive(Debug)]
enum Ev {
    /// End of a series bin: sample TCP state and TC marks.
    Bin,
    /// Scheduled reconfiguration `usize` is due.
    Scheduled(usize),
    /// Controller `usize` is due.
    Control(usize),
    ServerWake(usize),
    ClientWake(usize),
    /// A downlink packet reached the gNB (after the core network).
    AtGnb(CoreKey),
    /// An uplink packet reached its server.
    AtServer(CoreKey),
}

/// Where a packet crossing the core network waits in [`Sim::core`].
#[derive(Debug, Clone, Copy)]
struct CoreKey(usize);

/// What the simulator measures of one DRB after the warm-up.
#[derive(Debug)]
struct DrbMeasure {
    /// RLC occupancy (payload bytes awaiting transmission) per slot,
    /// averaged per 10 ms.
    occupancy: BinnedMean,
    occupancy_max: u64,
    /// The node's counters at the end of the warm-up.
    at_warmup: DrbCounters,
}

/// The simulator of one scenario run.
#[derive(Debug)]
pub struct Sim {
    now: Instant,
    end: Instant,
    warmup_end: Instant,
    /// Whether the node's counters were read at the end of the warm-up.
    warm: bool,
    core_delay: Duration,
    events: EventQueue<Ev>,
    /// The packets crossing the core network, either way, under the key
    /// their `AtGnb` or `AtServer` event carries: events stay small (the
    /// queue moves every event in and out), and a packet moves once in and
    /// once out without an allocation of its own, which boxing it in the
    /// event cost (docs/performance.md).
    core: Slab<Packet>,
    gnb: Gnb,
    next_id: u64,
    flows: Vec<Flow>,
    /// What the seed drew ([`RunSummary::seed_draws`]).
    seed_draws: Vec<String>,
    /// One per DRB of the node, in its order ([`Gnb::drbs`]).
    drbs: Vec<DrbMeasure>,
    prbs_used: u64,
    prbs_available: u64,
    /// Bytes the DL slots newly offered with every PRB, and bytes their
    /// transport blocks carried (after warm-up), for
    /// `capacity_utilization`.
    capacity_offered: f64,
    capacity_used: f64,
    series: SeriesRecorder,
    scheduled: Vec<Scheduled>,
    controllers: Vec<ControllerSlot>,
    reconfig_counts: ReconfigCounts,
    packets: PacketCounts,
    scratch_packets: Vec<Packet>,
    scratch_up: Vec<Packet>,
    /// The node's outputs being handled (a buffer kept between batches).
    outputs: Vec<Output>,
    live: live::Live,
    /// The other cells and the UEs' mobility of a `[[cells]]` scenario
    /// (`None`: one cell, `gnb`).
    cells: Option<Box<cells::Cells>>,
}

impl Sim {
    /// Builds the run; `base` resolves relative trace paths.
    pub fn new(cfg: &SimConfig, base: &Path) -> Result<Sim, ConfigError> {
        if cfg.duration.is_zero() {
            return Err(ConfigError::new("duration", cfg.duration, "must be > 0"));
        }
        if cfg.warmup >= cfg.duration {
            return Err(ConfigError::new(
                "warmup",
                cfg.warmup,
                format!("must be shorter than duration ({})", cfg.duration),
            ));
        }
        // A run without UEs or flows measures nothing: an empty table is
        // never what was meant.
        if cfg.ues.is_empty() {
            return Err(ConfigError::new("ues", "[]", "must hold at least one UE"));
        }
        if cfg.flows.is_empty() {
            return Err(ConfigError::new(
                "flows",
                "[]",
                "must hold at least one flow (a run without traffic measures nothing)",
            ));
        }
        Sim::build(cfg, base)
    }

    /// [`Sim::new`] without the checks that only a modelled run needs.
    fn build(cfg: &SimConfig, base: &Path) -> Result<Sim, ConfigError> {
        let (gnb, cells) = if cfg.cells.is_empty() {
            (Gnb::new(&cfg.gnb(), base)?, None)
        } else {
            let (first, others) = cells::build(cfg, base)?;
            (first, Some(others))
        };
        let end = Instant::ZERO + cfg.duration;
        let flows = flows::build_flows(cfg, |r| {
            cfg.ues
                .iter()
                .find(|u| u.rnti == r)
                .map(|u| !u.uplink_drbs.is_empty())
        })?;
        if cfg.series_bin < Duration::from_millis(1) || cfg.series_bin > cfg.duration {
            return Err(ConfigError::new(
                "series_bin",
                cfg.series_bin,
                format!("must be between 1ms and the duration ({})", cfg.duration),
            ));
        }
        let series = SeriesRecorder::new(cfg.series_bin, end, gnb.period(), flows.len(), |i| {
            matches!(flows[i].ends, Endpoints::Tcp { .. })
        });
        // Per-DRB measures follow the DRBs of one node; in a multi-cell
        // run DRBs move between nodes, and the per-cell load replaces them.
        let drbs = gnb
            .drbs()
            .filter(|_| cells.is_none())
            .map(|_| DrbMeasure {
                occupancy: BinnedMean::new(Duration::from_millis(10)),
                occupancy_max: 0,
                at_warmup: DrbCounters::default(),
            })
            .collect();
        let seed_draws = seed_draws(cfg, &gnb, &flows);
        let mut sim = Sim {
            now: Instant::ZERO,
            seed_draws,
            end,
            warmup_end: Instant::ZERO + cfg.warmup,
            warm: false,
            core_delay: cfg.core_delay,
            events: EventQueue::default(),
            core: Slab::new(),
            gnb,
            next_id: 0,
            flows,
            drbs,
            prbs_used: 0,
            prbs_available: 0,
            capacity_offered: 0.0,
            capacity_used: 0.0,
            series,
            scheduled: Vec::new(),
            controllers: Vec::new(),
            reconfig_counts: ReconfigCounts::default(),
            packets: PacketCounts::default(),
            scratch_packets: Vec::new(),
            scratch_up: Vec::new(),
            outputs: Vec::new(),
            live: live::Live::new(cfg),
            cells,
        };
        let first_bin = Instant::ZERO + sim.series.tick();
        sim.events.schedule(first_bin.min(end), Ev::Bin);
        for i in 0..sim.flows.len() {
            sim.wake_server(i, sim.flows[i].start);
        }
        sim.schedule_events(cfg)?;
        Ok(sim)
    }

    /// A run with live traffic (the emulator): like [`Sim::new`], but the
    /// scenario's modelled flows run only if `modelled_flows` (they are
    /// checked either way), and a scenario without flows is fine: the live
    /// flows are found as their packets come.
    pub fn new_live(
        cfg: &SimConfig,
        base: &Path,
        modelled_flows: bool,
    ) -> Result<Sim, ConfigError> {
        if cfg.flows.is_empty() || !modelled_flows {
            let mut probe = cfg.clone();
            if probe.flows.is_empty() {
                // Checks everything but the flows.
                probe.flows.push(crate::scenario::FlowConfig {
                    name: "check".into(),
                    ue: cfg.ues.first().map_or(0, |u| u.rnti),
                    qfi: 0,
                    dscp: 0,
                    start: Duration::ZERO,
                    start_jitter: Duration::ZERO,
                    stop: None,
                    direction: Default::default(),
                    kind: crate::scenario::FlowKind::Voip {},
                });
            }
            Sim::new(&probe, base)?;
            let mut live = cfg.clone();
            live.flows.clear();
            return Sim::build(&live, base);
        }
        Sim::new(cfg, base)
    }

    /// Hands the run's time series at full resolution to `sink` as the run
    /// goes (every MAC step, every `series_bin`, in chunks of a few
    /// thousand), keeping for [`RunOutput::series`] only a display copy of
    /// bounded size ([`crate::recorder::PLOT_BINS`] bins per flow,
    /// [`crate::recorder::PLOT_SLOT_SAMPLES`] slot samples): a front end that
    /// writes the sink's rows to files holds a bounded amount of series
    /// whatever the duration. Call before the run starts.
    pub fn stream_series(&mut self, sink: Box<dyn crate::series::SeriesSink>) {
        let names = self
            .flows
            .iter()
            .map(|f| (f.name.clone(), f.kind.to_string()))
            .collect();
        self.series.stream_to(sink, self.gnb.period(), names);
    }

    /// Runs to the end; returns the summary and the time series.
    pub fn run(self) -> RunOutput {
        self.run_with_progress(&mut |_| {})
    }

    /// [`Sim::run`], calling `progress` with the simulated seconds done
    /// about every simulated second and once at the end.
    pub fn run_with_progress(mut self, progress: &mut dyn FnMut(f64)) -> RunOutput {
        let second = Duration::from_secs(1);
        let mut next_report = Instant::ZERO + second;
        let end = self.end;
        while let Some(t) = self.step(end) {
            if t >= next_report {
                progress(next_report.as_secs_f64());
                next_report += second;
            }
        }
        progress(end.as_secs_f64());
        self.finish_at(end)
    }

    /// The RAN node, read-only (its counters, timing, DRBs).
    pub fn gnb(&self) -> &Gnb {
        &self.gnb
    }

    /// The scenario's flows as a controller sees them, with nothing
    /// measured yet (goodput 0, no delay): names, kinds, UEs, directions,
    /// the 5-tuples of their data, and the DRB SDAP maps each flow's QFI
    /// to. What an xApp outside the simulator needs to address flows by
    /// 5-tuple.
    pub fn flow_views(&self) -> Vec<tcran_control::controller::FlowView> {
        self.flows
            .iter()
            .map(|f| tcran_control::controller::FlowView {
                name: f.name.clone(),
                kind: f.kind,
                rnti: f.rnti.0,
                dir: f.dir(),
                drb: f.drb_in(&self.gnb).map(|d| d.0),
                tuple: f.tuple,
                goodput_mbps: 0.0,
                delay_ms: None,
            })
            .collect()
    }

    /// When the next event (of the simulator or of the RAN node) is due;
    /// `None` when nothing is pending. A real-time driver sleeps until then
    /// (or until live input arrives).
    pub fn next_event_time(&self) -> Option<Instant> {
        Instant::earliest(self.events.peek_time(), self.node_wakeup())
    }

    /// When the RAN (one node, or every cell and the mobility) next needs
    /// to run.
    #[inline]
    fn node_wakeup(&self) -> Option<Instant> {
        match &self.cells {
            None => self.gnb.next_wakeup(),
            Some(c) => Instant::earliest(self.gnb.next_wakeup(), c.next_wakeup()),
        }
    }

    /// Runs every event due by `until` (and by the end of the run), in
    /// order. What a real-time driver calls with the wall clock's `now`.
    pub fn run_until(&mut self, until: Instant) {
        let until = until.min(self.end);
        while self.step(until).is_some() {}
        self.now = self.now.max(until);
    }

    /// Runs the earliest event if it is due by `until`; returns its time.
    #[inline]
    fn step(&mut self, until: Instant) -> Option<Instant> {
        let sim_t = self.events.peek_time();
        let gnb_t = self.node_wakeup();
        // At one instant the simulator's events come first: they are the
        // node's inputs at that instant.
        let (t, node) = match (sim_t, gnb_t) {
            (Some(s), Some(g)) if g < s => (g, true),
            (Some(s), _) => (s, false),
            (None, Some(g)) => (g, true),
            (None, None) => return None,
        };
        if t > until {
            return None;
        }
        if !self.warm && t >= self.warmup_end {
            self.end_warmup();
        }
        self.now = t;
        if node {
            if self.cells.is_none() {
                self.gnb.step(t);
            } else {
                self.step_cells(t);
            }
        } else {
            let (_, ev) = self.events.pop().expect("peeked");
            self.handle(ev);
        }
        if self.gnb.has_outputs() {
            self.drain_outputs();
        }
        Some(t)
    }

    /// Ends the run at `end` (at most the configured end; a live run may
    /// stop early): the summary measures up to `end`, the series stop
    /// there.
    pub fn finish_at(mut self, end: Instant) -> RunOutput {
        let end = end.clamp(self.warmup_end, self.end);
        self.run_until(end);
        if !self.warm {
            self.end_warmup();
        }
        self.end = end;
        self.now = end;
        self.finish()
    }

    fn counting(&self) -> bool {
        self.now >= self.warmup_end
    }

    /// Reads the node's counters at the end of the warm-up: measurements
    /// over the run are taken from there.
    fn end_warmup(&mut self) {
        self.warm = true;
        for (m, d) in self.drbs.iter_mut().zip(self.gnb.drbs()) {
            m.at_warmup = *d.counters();
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Bin => self.on_bin(),
            Ev::Scheduled(i) => self.run_scheduled(i),
            Ev::Control(i) => self.run_controller(i),
            Ev::ServerWake(i) => self.on_server_wake(i),
            Ev::ClientWake(i) => self.on_client_wake(i),
            Ev::AtGnb(k) => {
                let p = self.core.remove(k.0);
                if self.cells.is_none() {
                    self.gnb.downlink(p, self.now);
                } else {
                    self.downlink_cells(p);
                }
            }
            Ev::AtServer(k) => {
                let p = self.core.remove(k.0);
                if p.flow.is_some_and(|f| self.is_live(f.0 as usize)) {
                    self.live_at_server(p);
                } else {
                    self.at_server(&p);
                }
            }
        }
    }

    /// Handles everything the node reported, oldest first (outputs the
    /// handling causes, e.g. a TCP ACK sent up on a delivery, come after).
    fn drain_outputs(&mut self) {
        while self.gnb.has_outputs() {
            let mut batch = std::mem::take(&mut self.outputs);
            self.gnb.take_outputs(&mut batch);
            for out in &mut batch {
                self.on_output(out);
            }
            batch.clear();
            self.outputs = batch;
        }
    }

    fn on_output(&mut self, out: &mut Output) {
        match out {
            Output::Delivered { packet, .. } => {
                self.deliver(packet);
                if packet.flow.is_some_and(|f| self.is_live(f.0 as usize)) {
                    self.live_delivered(out);
                }
            }
            Output::Uplink { packet, at, .. } => {
                let k = CoreKey(self.core.insert(std::mem::take(packet)));
                self.events.schedule(*at + self.core_delay, Ev::AtServer(k));
            }
            Output::Dropped {
                packet,
                layer,
                reason,
                at,
            } => {
                self.series
                    .event(*at, "drop", layer.label(), reason.label(), 1);
                // An ACK or echo reply lost on its way back is counted by
                // the node and the series, not in the ledger of data.
                if !self.is_data(packet) {
                    return;
                }
                self.packets.dropped += 1;
                if let Some(f) = packet.flow.and_then(|f| self.flows.get_mut(f.0 as usize)) {
                    f.lost += 1;
                }
            }
            Output::DropWithdrawn {
                flow,
                layer,
                reason,
                at,
                ..
            } => {
                self.packets.dropped -= 1;
                self.series
                    .withdraw_drop(*at, layer.label(), reason.label());
                if let Some(f) = flow.and_then(|f| self.flows.get_mut(f.0 as usize)) {
                    f.lost -= 1;
                }
            }
            Output::Marked {
                layer,
                reason,
                count,
                at,
            } => {
                // The bin that just ended (marks are looked at on its end).
                let at = Instant::from_nanos(at.as_nanos().saturating_sub(1));
                self.series
                    .event(at, "mark", layer.label(), reason.label(), *count);
            }
            Output::Slot(record) => {
                let record = *record;
                self.on_slot(&record);
            }
        }
    }

    /// A scheduling decision of the node: the cell's series sample, PRB use
    /// and each DRB's RLC occupancy after the MAC pulled.
    fn on_slot(&mut self, r: &SlotRecord) {
        let now = r.at;
        if now < self.end {
            self.series.slot(
                now,
                r.rlc_bytes,
                r.capacity_bytes,
                r.prbs_used,
                r.prbs_available,
            );
        }
        if now >= self.warmup_end {
            self.prbs_used += u64::from(r.prbs_used);
            self.prbs_available += u64::from(r.prbs_available);
            if r.prbs_available > 0 {
                self.capacity_offered += r.capacity_bytes as f64;
                self.capacity_used += r.used_bytes as f64;
            }
            for (m, d) in self.drbs.iter_mut().zip(self.gnb.drbs()) {
                let bytes = d.last_tti().new_payload_bytes;
                m.occupancy.add(now, bytes as f64);
                m.occupancy_max = m.occupancy_max.max(bytes);
            }
        }
    }

    /// Closes the series bin ending now: TCP state and the TC marks of the
    /// bin.
    fn on_bin(&mut self) {
        let now = self.now;
        let warmup_end = self.warmup_end;
        for (i, f) in self.flows.iter_mut().enumerate() {
            if let Endpoints::Tcp { tx, .. } = &f.ends {
                let tx = tx.sender();
                self.series.tcp_state(i, now, tx.cwnd(), tx.srtt());
            }
            f.take_samples(warmup_end);
        }
        self.gnb.collect_marks(now);
        if let Some(c) = &mut self.cells {
            c.collect_marks(now);
        }
        if now < self.end {
            let next = (now + self.series.tick()).min(self.end);
            self.events.schedule(next, Ev::Bin);
        }
    }
}

/// What the seed of a run draws ([`RunSummary::seed_draws`]), from the
/// built node and flows (the variant's configuration resolved).
fn seed_draws(cfg: &SimConfig, gnb: &Gnb, flows: &[Flow]) -> Vec<String> {
    use crate::scenario::FlowKind;
    let mut draws: Vec<String> = gnb
        .random_channel_starts()
        .map(|(rnti, at)| {
            format!(
                "UE {}: the channel recording starts {:.3} s in",
                rnti.0,
                at.as_secs_f64()
            )
        })
        .chain(gnb.random_uplink_channel_starts().map(|(rnti, at)| {
            format!(
                "UE {}: the uplink channel recording starts {:.3} s in",
                rnti.0,
                at.as_secs_f64()
            )
        }))
        .collect();
    for ue in &cfg.ues {
        if let tcran_gnb::ChannelConfig::Geometry { los, shadowing, .. } = &ue.channel {
            let what = match (los, shadowing) {
                (tcran_gnb::LosName::Random, true) => "LOS states and shadow fading",
                (tcran_gnb::LosName::Random, false) => "LOS states",
                (_, true) => "shadow fading",
                (_, false) => continue,
            };
            draws.push(format!("UE {}: the geometry channel's {what}", ue.rnti));
        }
    }
    if cfg.cell.bler > 0.0 {
        draws.push(format!("HARQ outcomes (BLER {})", cfg.cell.bler));
    }
    for (fc, f) in cfg.flows.iter().zip(flows) {
        if fc.start_jitter > Duration::ZERO {
            draws.push(format!(
                "{}: starts at {:.6} s ({} + up to {})",
                fc.name,
                f.start.as_secs_f64(),
                fc.start,
                fc.start_jitter
            ));
        }
        let arrivals = match &fc.kind {
            FlowKind::Gaming { .. } => Some("packet inter-arrival times"),
            FlowKind::Web { .. } => Some("page sizes and reading times"),
            FlowKind::Ftp { .. } => Some("file arrival times"),
            _ => None,
        };
        if let Some(what) = arrivals {
            draws.push(format!("{}: {what}", fc.name));
        }
        let cc = match &fc.kind {
            FlowKind::Tcp { tcp, .. } | FlowKind::Web { tcp, .. } | FlowKind::Ftp { tcp, .. } => {
                Some(tcp.cc)
            }
            _ => None,
        };
        if cc == Some(tcran_traffic::CcKind::Bbr) {
            draws.push(format!("{}: BBR's ProbeBW cycle phase", fc.name));
        }
    }
    draws
}
