//! Several cells in one event loop ([`crate::cells`] for the scenario
//! syntax): cell 0 is the simulator's `gnb`, the others live here with
//! every UE's measurements and handovers in progress.
//!
//! Contract:
//! - One time order over every cell: at one instant the simulator's own
//!   events run first, then cell 0's, the other cells' in cell order, and
//!   last the mobility timers (a measurement occasion, a UE joining its
//!   target). Deterministic: no draw depends on anything but the seed.
//! - Measurement (TS 38.331 §5.5.3): every `measurement_period` each UE
//!   measures every cell's RSRP from geometry (the cell's received power
//!   over its 12·N_PRB resource elements), filters it (layer 3) and
//!   evaluates the event against its serving cell; a trigger is the
//!   handover decision, to the triggered cell measured strongest.
//! - Handover (TS 38.300 §9.2.3): the source detaches the UE at once
//!   ([`tcran_gnb::Gnb::detach`]); the context and forwarded data travel
//!   over Xn; the target attaches the UE when the interruption is over
//!   and the context has arrived. Downlink packets that reach the core's
//!   end for the UE meanwhile are held here and handed to the target
//!   after the attach (the source forwards them as they come), uplink
//!   packets the UE sends wait in the UE.
//! - The ledger balances across cells at every instant: what a context
//!   carries and what is held here are in flight on Xn.
//! - Each cell's PRB use and carried bytes are counted after warm-up;
//!   its handover counters (`super::nodes`) over the whole run.

use super::{Sim, SlotRecord};
use crate::cells::{CellLoad, HandoverConfig, HandoverRecord};
use crate::scenario::SimConfig;
use std::path::Path;
use tcran_control::HandoverCounters;
use tcran_core::{CellId, ConfigError, Duration, Instant, Packet, Rnti};
use tcran_gnb::{ChannelConfig, ChannelContext, Gnb, GnbConfig, Output, Place, UeContext};
use tcran_ran::channel::GeometryChannel;
use tcran_ran::mobility::events::{EventDetector, L3Filter, Report};
use tcran_ran::AnyChannel;

/// A UE between two cells.
#[derive(Debug)]
struct Moving {
    ctx: UeContext,
    source: usize,
    target: usize,
    attach_at: Instant,
    /// Downlink packets that arrived meanwhile, in arrival order.
    held: Vec<Packet>,
    /// Uplink packets the UE sent meanwhile.
    held_up: Vec<Packet>,
    /// Index in `Cells::records`.
    record: usize,
}

/// One UE's mobility state.
#[derive(Debug)]
struct Ue {
    rnti: Rnti,
    /// Its channel as configured (`geometry`); the sites are the cells'.
    channel: ChannelConfig,
    /// Measures every cell (site = cell 0, interferers = the others).
    meas: GeometryChannel,
    filters: Vec<L3Filter>,
    detector: EventDetector,
    /// `None` while moving.
    serving: Option<usize>,
    /// Its last measurement's strongest neighbour less its serving cell
    /// (layer-3 filtered RSRP, dB): what its measurement report says.
    margin_db: Option<f64>,
    moving: Option<Moving>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Load {
    prbs_used: u64,
    prbs_available: u64,
    carried_bytes: u64,
}

/// A cell's PRB use in the current window, for the interference it
/// causes: the other cells' UEs count its power times its load, the share
/// of its PRBs in use over the last whole window (1, full load, until the
/// first window ends).
#[derive(Debug, Clone, Copy)]
struct Activity {
    since: Instant,
    prbs_used: u64,
    prbs_available: u64,
    load: f64,
}

/// How long a cell's PRB use is averaged over before its neighbours'
/// SINR follows it: ten slots at 15 kHz, long enough that one empty slot
/// does not make a busy cell look idle.
const LOAD_WINDOW: Duration = Duration::from_millis(10);

/// The cells beyond the first, and every UE's mobility.
#[derive(Debug)]
pub(super) struct Cells {
    pub(super) ids: Vec<CellId>,
    sites: Vec<[f64; 2]>,
    /// Resource elements of each cell's bandwidth (12 per PRB), dB.
    re_db: Vec<f64>,
    bandwidth_hz: Vec<f64>,
    /// Cells 1.. (cell 0 is `Sim::gnb`).
    pub(super) others: Vec<Gnb>,
    /// Each cell's handovers as source and target.
    pub(super) handovers: Vec<HandoverCounters>,
    ues: Vec<Ue>,
    cfg: HandoverConfig,
    seed: u64,
    next_measurement: Instant,
    records: Vec<HandoverRecord>,
    load: Vec<Load>,
    activity: Vec<Activity>,
    /// A cell's `activity.load` changed since the nodes were last told.
    loads_changed: bool,
    rsrp: Vec<f64>,
    reports: Vec<Report>,
}

/// The UE's channel configuration served by cell `k` of `sites`.
fn channel_at(c: &ChannelConfig, sites: &[[f64; 2]], k: usize) -> ChannelConfig {
    let mut c = c.clone();
    if let ChannelConfig::Geometry {
        site, interferers, ..
    } = &mut c
    {
        *site = sites[k];
        *interferers = sites
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, s)| *s)
            .collect();
    }
    c
}

/// Builds every cell of a `[[cells]]` scenario: cell 0's node (the
/// simulator's `gnb`) and the rest.
pub(super) fn build(cfg: &SimConfig, base: &Path) -> Result<(Gnb, Box<Cells>), ConfigError> {
    let ho = cfg.handover.clone().unwrap_or_default();
    ho.check()?;
    // A handover carries the downlink's state (`tcran_gnb::UeContext`),
    // not yet a UE's own uplink DRBs.
    if let Some(i) = cfg.ues.iter().position(|u| !u.uplink_drbs.is_empty()) {
        return Err(ConfigError::new(
            format!("ues[{i}].uplink_drbs"),
            format!("{} uplink DRB(s)", cfg.ues[i].uplink_drbs.len()),
            "uplink DRBs are for single-cell scenarios (not with [[cells]] yet)",
        ));
    }
    let sites: Vec<[f64; 2]> = cfg.cells.iter().map(|c| c.site).collect();
    let mut ids: Vec<CellId> = Vec::new();
    for (k, c) in cfg.cells.iter().enumerate() {
        if ids.contains(&CellId(c.id)) {
            return Err(ConfigError::new(
                format!("cells[{k}].id"),
                c.id,
                "must be unique",
            ));
        }
        ids.push(CellId(c.id));
    }
    let macs: Vec<_> = cfg
        .cells
        .iter()
        .map(|c| c.cell.clone().unwrap_or_else(|| cfg.cell.clone()))
        .collect();
    // Each cell's bandwidth, from a node built without UEs.
    let mut bandwidth_hz = Vec::new();
    let mut re_db = Vec::new();
    for (k, mac) in macs.iter().enumerate() {
        let probe = Gnb::new_cell(
            &GnbConfig {
                seed: cfg.seed,
                cell: mac.clone(),
                ul_delay: cfg.ul_delay,
                uplink: cfg.uplink.clone(),
                tc_tick: cfg.tc_tick,
                ues: Vec::new(),
            },
            base,
        )
        .map_err(|e| e.within(format!("cells[{k}].cell")))?;
        let n_prb = f64::from(probe.mac().n_prb());
        let slot_s = probe.mac().slot_duration().as_secs_f64();
        bandwidth_hz.push(n_prb * 12.0 * 15e3 * 1e-3 / slot_s);
        re_db.push(10.0 * (12.0 * n_prb).log10());
    }
    let event = ho
        .trigger
        .build()
        .map_err(|e| e.within("handover.trigger"))?;
    let mut ues = Vec::new();
    let mut per_cell: Vec<Vec<tcran_gnb::UeConfig>> = vec![Vec::new(); sites.len()];
    for (u, uc) in cfg.ues.iter().enumerate() {
        if !matches!(uc.channel, ChannelConfig::Geometry { .. }) {
            return Err(ConfigError::new(
                format!("ues[{u}].channel.kind"),
                "not geometry",
                "with [[cells]] every UE's channel is `geometry` (the cells give the sites)",
            ));
        }
        let ctx = ChannelContext {
            seed: cfg.seed,
            rnti: uc.rnti,
            bandwidth_hz: bandwidth_hz[0],
        };
        let meas = match channel_at(&uc.channel, &sites, 0).build(base, &ctx) {
            Ok(AnyChannel::Geometry(g)) => *g,
            Ok(_) => unreachable!("a geometry config builds a geometry channel"),
            Err(e) => return Err(e.within(format!("ues[{u}].channel"))),
        };
        let mut ue = Ue {
            rnti: Rnti(uc.rnti),
            channel: uc.channel.clone(),
            meas,
            filters: vec![L3Filter::new(event.filter_coefficient); sites.len()],
            detector: EventDetector::new(event),
            serving: None,
            moving: None,
            margin_db: None,
        };
        // Cell selection: the strongest cell at time 0.
        let mut rsrp = Vec::new();
        ue.meas.rx_powers_dbm(Instant::ZERO, &mut rsrp);
        let first = strongest(&rsrp, &re_db);
        ue.serving = Some(first);
        let mut c = uc.clone();
        c.channel = channel_at(&uc.channel, &sites, first);
        per_cell[first].push(c);
        ues.push(ue);
    }
    let mut nodes = Vec::new();
    for (k, mac) in macs.into_iter().enumerate() {
        let node = Gnb::new_cell(
            &GnbConfig {
                // Each cell's own HARQ draws.
                seed: cfg.seed.wrapping_add(k as u64),
                cell: mac,
                ul_delay: cfg.ul_delay,
                uplink: cfg.uplink.clone(),
                tc_tick: cfg.tc_tick,
                ues: std::mem::take(&mut per_cell[k]),
            },
            base,
        )
        .map_err(|e| e.within(format!("cells[{k}]")))?;
        nodes.push(node);
    }
    let mut nodes = nodes.into_iter();
    let first = nodes.next().expect("at least one cell");
    let n = sites.len();
    let cells = Cells {
        ids,
        sites,
        re_db,
        bandwidth_hz,
        others: nodes.collect(),
        ues,
        seed: cfg.seed,
        next_measurement: Instant::ZERO + ho.measurement_period,
        cfg: ho,
        records: Vec::new(),
        handovers: vec![HandoverCounters::default(); n],
        load: vec![Load::default(); n],
        activity: vec![
            Activity {
                since: Instant::ZERO,
                prbs_used: 0,
                prbs_available: 0,
                load: 1.0,
            };
            n
        ],
        loads_changed: false,
        rsrp: Vec::new(),
        reports: Vec::new(),
    };
    Ok((first, Box::new(cells)))
}

/// Cell `k`'s node: cell 0 is the simulator's, the others are `others`.
pub(super) fn node<'a>(first: &'a mut Gnb, others: &'a mut [Gnb], k: usize) -> &'a mut Gnb {
    if k == 0 {
        first
    } else {
        &mut others[k - 1]
    }
}

/// The cell with the highest RSRP (received power less its resource
/// elements); the first on a tie.
fn strongest(rx_dbm: &[f64], re_db: &[f64]) -> usize {
    let mut best = 0;
    for k in 1..rx_dbm.len() {
        if rx_dbm[k] - re_db[k] > rx_dbm[best] - re_db[best] {
            best = k;
        }
    }
    best
}

impl Cells {
    /// When the cells beyond the first or the mobility next need to run.
    pub(super) fn next_wakeup(&self) -> Option<Instant> {
        let mut t = Some(self.next_measurement);
        for g in &self.others {
            t = Instant::earliest(t, g.next_wakeup());
        }
        for ue in &self.ues {
            t = Instant::earliest(t, ue.moving.as_ref().map(|m| m.attach_at));
        }
        t
    }

    /// Every packet the other cells, the contexts on Xn and the held
    /// packets hold.
    pub(super) fn for_each_in_flight(&self, mut f: impl FnMut(Place, &Packet)) {
        for g in &self.others {
            g.for_each_in_flight(&mut f);
        }
        for m in self.ues.iter().filter_map(|u| u.moving.as_ref()) {
            m.ctx.for_each_in_flight(&mut f);
            for p in &m.held {
                f(Place::Xn, p);
            }
        }
    }

    /// Drops and marks of every cell, by (layer, reason).
    pub(super) fn add_counts(
        &self,
        drops: &mut std::collections::BTreeMap<(tcran_gnb::Layer, &'static str), u64>,
        marks: &mut std::collections::BTreeMap<(tcran_gnb::Layer, &'static str), u64>,
    ) {
        for g in &self.others {
            for (k, n) in g.drop_counts() {
                *drops.entry(*k).or_default() += n;
            }
            for (k, n) in g.mark_counts() {
                *marks.entry(*k).or_default() += n;
            }
        }
    }

    pub(super) fn collect_marks(&mut self, now: Instant) {
        for g in &mut self.others {
            g.collect_marks(now);
        }
    }

    /// A scheduling decision of cell `k`.
    pub(super) fn on_slot(&mut self, k: usize, r: &SlotRecord, counting: bool) {
        let a = &mut self.activity[k];
        a.prbs_used += u64::from(r.prbs_used);
        a.prbs_available += u64::from(r.prbs_available);
        if r.at.saturating_since(a.since) >= LOAD_WINDOW && a.prbs_available > 0 {
            a.load = a.prbs_used as f64 / a.prbs_available as f64;
            (a.since, a.prbs_used, a.prbs_available) = (r.at, 0, 0);
            self.loads_changed = true;
        }
        if counting {
            let l = &mut self.load[k];
            l.prbs_used += u64::from(r.prbs_used);
            l.prbs_available += u64::from(r.prbs_available);
            l.carried_bytes += r.used_bytes;
        }
    }

    /// The other cells' loads, as cell `j`'s channels list their
    /// interferers (the other sites in order, [`channel_at`]).
    fn loads_seen_by(&self, j: usize) -> Vec<f64> {
        (self.activity.iter().enumerate())
            .filter(|&(k, _)| k != j)
            .map(|(_, a)| a.load)
            .collect()
    }

    pub(super) fn records(&self) -> &[HandoverRecord] {
        &self.records
    }

    /// Each cell's load over `measured_s` seconds.
    pub(super) fn loads(&self, measured_s: f64) -> Vec<CellLoad> {
        self.load
            .iter()
            .enumerate()
            .map(|(k, l)| CellLoad {
                cell: self.ids[k].0,
                prb_utilization: if l.prbs_available == 0 {
                    0.0
                } else {
                    l.prbs_used as f64 / l.prbs_available as f64
                },
                carried_mbps: if measured_s > 0.0 {
                    l.carried_bytes as f64 * 8.0 / measured_s / 1e6
                } else {
                    0.0
                },
                handovers_out: self
                    .records
                    .iter()
                    .filter(|r| r.source == self.ids[k].0)
                    .count() as u64,
                handovers_in: self
                    .records
                    .iter()
                    .filter(|r| r.target == self.ids[k].0)
                    .count() as u64,
            })
            .collect()
    }

    fn ue_of(&self, rnti: Rnti) -> Option<usize> {
        self.ues.iter().position(|u| u.rnti == rnti)
    }

    /// UE `rnti`'s handover margin from its last measurement (`None`
    /// before the first, and while it moves).
    pub(super) fn margin_db(&self, rnti: Rnti) -> Option<f64> {
        let ue = &self.ues[self.ue_of(rnti)?];
        ue.serving.and(ue.margin_db)
    }

    /// The cell serving UE `rnti` now (`None` while it moves).
    pub(super) fn serving(&self, rnti: Rnti) -> Option<usize> {
        self.ue_of(rnti).and_then(|u| self.ues[u].serving)
    }
}

impl Sim {
    fn cells_mut(&mut self) -> &mut Cells {
        self.cells.as_deref_mut().expect("multi-cell run")
    }

    /// Runs the earliest due thing of the multi-cell run at `t`.
    pub(super) fn step_cells(&mut self, t: Instant) {
        if self.gnb.next_wakeup() == Some(t) {
            self.gnb.step(t);
            self.drain_cell(0);
            return;
        }
        let c = self.cells_mut();
        if let Some(k) = c.others.iter().position(|g| g.next_wakeup() == Some(t)) {
            c.others[k].step(t);
            self.drain_cell(k + 1);
        } else if let Some(u) = c
            .ues
            .iter()
            .position(|ue| ue.moving.as_ref().is_some_and(|m| m.attach_at == t))
        {
            self.attach(u, t);
        } else {
            self.measure(t);
        }
    }

    /// Handles the outputs of cell `k`; their handling (a TCP ACK sent
    /// up on a delivery) may feed any cell.
    pub(super) fn drain_cell(&mut self, k: usize) {
        let counting = self.counting();
        loop {
            let mut batch = std::mem::take(&mut self.outputs);
            let c = self.cells.as_deref_mut().expect("multi-cell run");
            let cell = node(&mut self.gnb, &mut c.others, k);
            if !cell.has_outputs() {
                self.outputs = batch;
                return;
            }
            cell.take_outputs(&mut batch);
            for out in &mut batch {
                if let Output::Slot(r) = out {
                    self.cells_mut().on_slot(k, r, counting);
                    if k > 0 {
                        // One series and PRB total per run: cell 0's.
                        continue;
                    }
                }
                self.on_output(out);
            }
            batch.clear();
            self.tell_loads();
            if self.outputs.is_empty() {
                self.outputs = batch;
            }
        }
    }

    /// Gives every cell its neighbours' loads, in its channels' order of
    /// interferers (the other sites in order), when one changed.
    fn tell_loads(&mut self) {
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        if !std::mem::take(&mut c.loads_changed) {
            return;
        }
        for j in 0..c.activity.len() {
            let loads = c.loads_seen_by(j);
            node(&mut self.gnb, &mut c.others, j).set_interferer_loads(&loads);
        }
    }

    /// A downlink packet at the end of the core for a multi-cell run: to
    /// the UE's serving cell, or held while it moves.
    pub(super) fn downlink_cells(&mut self, p: Packet) {
        let now = self.now;
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        let ue = tcran_gnb::ue_rnti(p.tuple.dst).and_then(|r| c.ue_of(r));
        let k = match ue.map(|u| (u, c.ues[u].serving)) {
            Some((u, None)) => {
                if let Some(m) = c.ues[u].moving.as_mut() {
                    m.held.push(p);
                }
                return;
            }
            Some((_, Some(k))) => k,
            // No such UE: cell 0 counts it unrouted.
            None => 0,
        };
        node(&mut self.gnb, &mut c.others, k).downlink(p, now);
        self.drain_cell(k);
    }

    /// An uplink packet UE `rnti` sends in a multi-cell run.
    pub(super) fn uplink_cells(&mut self, rnti: Rnti, p: Packet) {
        let now = self.now;
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        let k = match c.ue_of(rnti).map(|u| (u, c.ues[u].serving)) {
            Some((u, None)) => {
                if let Some(m) = c.ues[u].moving.as_mut() {
                    m.held_up.push(p);
                }
                return;
            }
            Some((_, Some(k))) => k,
            None => 0,
        };
        node(&mut self.gnb, &mut c.others, k).uplink(rnti, p, now);
        self.drain_cell(k);
    }

    /// A measurement occasion of every UE not moving; a trigger hands the
    /// UE over.
    fn measure(&mut self, now: Instant) {
        let c = self.cells_mut();
        c.next_measurement = now + c.cfg.measurement_period;
        for u in 0..c.ues.len() {
            let c = self.cells_mut();
            let Some(serving) = c.ues[u].serving else {
                continue;
            };
            let mut rsrp = std::mem::take(&mut c.rsrp);
            let ue = &mut c.ues[u];
            ue.meas.rx_powers_dbm(now, &mut rsrp);
            let filtered: Vec<(CellId, f64)> = rsrp
                .iter()
                .enumerate()
                .map(|(k, p)| (c.ids[k], ue.filters[k].update(p - c.re_db[k])))
                .collect();
            c.rsrp = rsrp;
            ue.margin_db = (filtered.iter().enumerate())
                .filter(|&(k, _)| k != serving)
                .map(|(_, (_, p))| p - filtered[serving].1)
                .max_by(f64::total_cmp);
            c.reports.clear();
            ue.detector
                .measure(now, filtered[serving], &filtered, &mut c.reports);
            let target = c
                .reports
                .iter()
                .filter_map(|r| match r {
                    Report::Triggered { cell, .. } => c.ids.iter().position(|x| x == cell),
                    Report::Left { .. } => None,
                })
                .max_by(|&a, &b| filtered[a].1.total_cmp(&filtered[b].1));
            if let Some(target) = target {
                self.hand_over(u, serving, target, now);
            }
        }
    }

    fn hand_over(&mut self, u: usize, source: usize, target: usize, now: Instant) {
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        let rnti = c.ues[u].rnti;
        let tc = c.cfg.tc_forwarding;
        let ctx = node(&mut self.gnb, &mut c.others, source).detach(rnti, now, tc);
        let Some(ctx) = ctx else { return };
        // The target admits every UE: preparation and allocation succeed.
        let from = &mut c.handovers[source];
        from.prep_requested += 1;
        from.prep_succeeded += 1;
        from.exe_requested += 1;
        let to = &mut c.handovers[target];
        to.res_alloc_requested += 1;
        to.res_alloc_succeeded += 1;
        let counts = ctx.counts();
        let gap = c.cfg.interruption.max(c.cfg.xn_delay);
        c.records.push(HandoverRecord {
            ue: rnti.0,
            at_s: now.as_secs_f64(),
            source: c.ids[source].0,
            target: c.ids[target].0,
            interruption_ms: gap.as_millis_f64(),
            forwarded_packets: counts.forwarded(),
            forwarded_bytes: counts.forwarded_bytes(),
            tc_forwarded_packets: counts.tc_forwarded,
            pdcp_forwarded_packets: counts.pdcp_forwarded,
            arrived_meanwhile: 0,
            dropped_packets: counts.dropped,
        });
        let record = c.records.len() - 1;
        let ue = &mut c.ues[u];
        ue.serving = None;
        ue.detector.reset();
        ue.moving = Some(Moving {
            ctx,
            source,
            target,
            attach_at: now + gap,
            held: Vec::new(),
            held_up: Vec::new(),
            record,
        });
        self.drain_cell(source);
    }

    fn attach(&mut self, u: usize, now: Instant) {
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        let m = c.ues[u].moving.take().expect("moving");
        let rnti = c.ues[u].rnti;
        let k = m.target;
        c.records[m.record].arrived_meanwhile = m.held.len() as u64;
        c.handovers[m.source].exe_succeeded += 1;
        let ctx = ChannelContext {
            seed: c.seed,
            rnti: rnti.0,
            bandwidth_hz: c.bandwidth_hz[k],
        };
        let mut channel = channel_at(&c.ues[u].channel, &c.sites, k)
            .build(Path::new("."), &ctx)
            .expect("the same geometry built at the start");
        channel.set_interferer_loads(&c.loads_seen_by(k));
        c.ues[u].serving = Some(k);
        let cell = node(&mut self.gnb, &mut c.others, k);
        if let Err((_, e)) = cell.attach(m.ctx, channel, now) {
            unreachable!("a UE is in one cell at a time: {e}");
        }
        for p in m.held {
            cell.downlink(p, now);
        }
        for p in m.held_up {
            cell.uplink(rnti, p, now);
        }
        self.drain_cell(k);
    }
}

/// The handovers and per-cell load of a multi-cell run (empty for one
/// cell).
pub(super) fn report(
    cells: Option<&Cells>,
    measured_s: f64,
) -> (Vec<HandoverRecord>, Vec<CellLoad>) {
    match cells {
        None => (Vec::new(), Vec::new()),
        Some(c) => (c.records().to_vec(), c.loads(measured_s)),
    }
}
