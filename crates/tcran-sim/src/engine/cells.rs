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
//!   over its 12·N_PRB resource elements) or reads it from its drive
//!   trace (the row in force), filters it (layer 3) and evaluates the
//!   event against its serving cell; a trigger is the handover decision,
//!   to the triggered cell measured strongest. A cell the drive did not
//!   measure in that row takes no filter update and is not evaluated at
//!   that occasion (its time-to-trigger count neither restarts nor
//!   advances); the serving cell, if unmeasured, is compared at its last
//!   filtered value.
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
use crate::handover_impact::{ImpactRecorder, Role};
use crate::scenario::FlowKind;
use crate::scenario::SimConfig;
use std::path::Path;
use std::sync::Arc;
use tcran_control::HandoverCounters;
use tcran_core::{CellId, ConfigError, Duration, Instant, Packet, Rnti};
use tcran_gnb::{ChannelConfig, ChannelContext, Gnb, GnbConfig, Output, Place, UeContext};
use tcran_ran::channel::GeometryChannel;
use tcran_ran::mobility::drive::{DriveChannel, DriveTrace};
use tcran_ran::mobility::events::{EventDetector, L3Filter, Report};
use tcran_ran::phy::mcs::CqiTable;
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

/// Where a UE's measurements of the cells come from.
#[derive(Debug)]
enum Measure {
    /// Geometry (site = cell 0, interferers = the others).
    Geometry(Box<GeometryChannel>),
    /// A recorded drive; `column[k]` is cell k's `rsrp:` column, if the
    /// drive has one.
    Drive {
        trace: Arc<DriveTrace>,
        table: CqiTable,
        column: Vec<Option<usize>>,
    },
}

impl Measure {
    /// Each cell's RSRP at `now`, dBm (`None`: not measured).
    fn rsrp(&mut self, now: Instant, re_db: &[f64], out: &mut Vec<Option<f64>>) {
        out.clear();
        match self {
            Measure::Geometry(g) => {
                let mut rx = Vec::with_capacity(re_db.len());
                g.rx_powers_dbm(now, &mut rx);
                out.extend(rx.iter().zip(re_db).map(|(p, re)| Some(p - re)));
            }
            Measure::Drive { trace, column, .. } => {
                let row = trace.rsrp_at(now);
                out.extend(column.iter().map(|c| c.and_then(|c| row[c])));
            }
        }
    }
}

/// One UE's mobility state.
#[derive(Debug)]
struct Ue {
    rnti: Rnti,
    /// Its channel as configured (`geometry` or `drive`); the sites are
    /// the cells'.
    channel: ChannelConfig,
    meas: Measure,
    filters: Vec<L3Filter>,
    detector: EventDetector,
    /// `None` while moving.
    serving: Option<usize>,
    /// A handover decided, to this cell, commanded at this time.
    preparing: Option<(usize, Instant)>,
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
    /// The UEs with `preparing` or `moving` set, by index, ascending: the
    /// few with a handover under way, so that the engine's look for the next wake-up, taken before
    /// every event, does not visit every UE.
    in_transit: Vec<usize>,
    cfg: HandoverConfig,
    seed: u64,
    next_measurement: Instant,
    records: Vec<HandoverRecord>,
    load: Vec<Load>,
    activity: Vec<Activity>,
    /// A cell's `activity.load` changed since the nodes were last told.
    loads_changed: bool,
    rsrp: Vec<Option<f64>>,
    reports: Vec<Report>,
    /// Each record's handover command and interruption.
    commands: Vec<(Instant, Duration)>,
    /// Deliveries for the handovers' impact on the flows.
    pub(super) impact: ImpactRecorder,
}

/// The UE's channel configuration served by cell `k` of `sites`.
fn channel_at(c: &ChannelConfig, sites: &[[f64; 2]], ids: &[CellId], k: usize) -> ChannelConfig {
    let mut c = c.clone();
    match &mut c {
        ChannelConfig::Geometry {
            site, interferers, ..
        } => {
            *site = sites[k];
            *interferers = sites
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .map(|(_, s)| *s)
                .collect();
        }
        ChannelConfig::Drive { serving_cell, .. } => *serving_cell = Some(ids[k]),
        _ => {}
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
    let geometry = cfg
        .ues
        .iter()
        .any(|u| matches!(u.channel, ChannelConfig::Geometry { .. }));
    if geometry {
        if let Some(k) = cfg.cells.iter().position(|c| c.site.is_none()) {
            return Err(ConfigError::new(
                format!("cells[{k}].site"),
                "missing",
                "[x, y] metres: a UE's `geometry` channel needs every cell's site",
            ));
        }
    }
    // Without geometry no site is read.
    let sites: Vec<[f64; 2]> = cfg
        .cells
        .iter()
        .map(|c| c.site.unwrap_or([0.0; 2]))
        .collect();
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
        let ctx = ChannelContext {
            seed: cfg.seed,
            rnti: uc.rnti,
            bandwidth_hz: bandwidth_hz[0],
        };
        let meas = match channel_at(&uc.channel, &sites, &ids, 0).build(base, &ctx) {
            Ok(AnyChannel::Geometry(g)) => Measure::Geometry(g),
            Ok(AnyChannel::Drive(d)) => drive_measure(d, &ids)
                .map_err(|e| e.within(format!("ues[{u}].channel")))?,
            Ok(_) => {
                return Err(ConfigError::new(
                    format!("ues[{u}].channel.kind"),
                    "neither geometry nor drive",
                    "with [[cells]] a UE's channel is `geometry` (the cells give the sites) or `drive` (a trace of every cell's RSRP)",
                ))
            }
            Err(e) => return Err(e.within(format!("ues[{u}].channel"))),
        };
        let mut ue = Ue {
            rnti: Rnti(uc.rnti),
            channel: uc.channel.clone(),
            meas,
            filters: vec![L3Filter::new(event.filter_coefficient); sites.len()],
            detector: EventDetector::new(event),
            serving: None,
            preparing: None,
            moving: None,
            margin_db: None,
        };
        // Cell selection: the strongest cell at time 0.
        let mut rsrp = Vec::new();
        ue.meas.rsrp(Instant::ZERO, &re_db, &mut rsrp);
        let first = strongest(&rsrp);
        ue.serving = Some(first);
        let mut c = uc.clone();
        c.channel = channel_at(&uc.channel, &sites, &ids, first);
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
        in_transit: Vec::new(),
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
        commands: Vec::new(),
        impact: ImpactRecorder::new(
            cfg.flows
                .iter()
                .map(|f| {
                    let role = match f.kind {
                        _ if !f.direction.is_downlink() => None,
                        FlowKind::Tcp { .. } => Some(Role::Bulk),
                        FlowKind::Voip { .. } | FlowKind::Ping { .. } | FlowKind::Gaming { .. } => {
                            Some(Role::Call)
                        }
                        _ => None,
                    };
                    role.map(|r| (f.ue, r))
                })
                .collect(),
        ),
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

/// The cell with the highest RSRP; the first on a tie (cell 0 if none is
/// measured).
fn strongest(rsrp: &[Option<f64>]) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for (k, v) in rsrp.iter().enumerate() {
        if let Some(v) = *v {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((k, v));
            }
        }
    }
    best.map_or(0, |(k, _)| k)
}

/// A drive's measurements, its `rsrp:` columns matched to the cells. A
/// column whose cell the scenario lacks is refused (a typo would
/// otherwise silently remove a cell from the drive).
fn drive_measure(d: DriveChannel, ids: &[CellId]) -> Result<Measure, ConfigError> {
    let trace = d.trace().clone();
    if let Some(c) = trace.cells().iter().find(|c| !ids.contains(c)) {
        return Err(ConfigError::new(
            "path",
            format!("{}: column rsrp:{}", trace.name(), c.0),
            "every cell of the drive must be one of the [[cells]] ids",
        ));
    }
    let column = ids
        .iter()
        .map(|id| trace.cells().iter().position(|c| c == id))
        .collect();
    Ok(Measure::Drive {
        trace,
        table: d.table(),
        column,
    })
}

impl Cells {
    /// Counts a handover preparation, when the source decides it: the
    /// target admits every UE, so preparation and allocation succeed.
    fn prepared(&mut self, source: usize, target: usize) {
        let from = &mut self.handovers[source];
        from.prep_requested += 1;
        from.prep_succeeded += 1;
        let to = &mut self.handovers[target];
        to.res_alloc_requested += 1;
        to.res_alloc_succeeded += 1;
    }

    fn in_transit_add(&mut self, u: usize) {
        if let Err(i) = self.in_transit.binary_search(&u) {
            self.in_transit.insert(i, u);
        }
    }

    /// When the cells beyond the first or the mobility next need to run.
    pub(super) fn next_wakeup(&self) -> Option<Instant> {
        let mut t = Some(self.next_measurement);
        for g in &self.others {
            t = Instant::earliest(t, g.next_wakeup());
        }
        for ue in self.in_transit.iter().map(|&u| &self.ues[u]) {
            t = Instant::earliest(t, ue.moving.as_ref().map(|m| m.attach_at));
            t = Instant::earliest(t, ue.preparing.map(|(_, at)| at));
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

    /// A downlink packet of flow `flow` reached its UE.
    pub(super) fn on_delivered(&mut self, flow: usize, now: Instant, p: &Packet) {
        self.impact.delivered(flow, now, p.len, p.created);
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
        } else if let Some(&u) = c
            .in_transit
            .iter()
            .find(|&&u| c.ues[u].moving.as_ref().is_some_and(|m| m.attach_at == t))
        {
            self.attach(u, t);
        } else if let Some(&u) = c
            .in_transit
            .iter()
            .find(|&&u| c.ues[u].preparing.is_some_and(|(_, at)| at == t))
        {
            let ue = &mut c.ues[u];
            let (target, _) = ue.preparing.take().expect("preparing");
            if let Some(serving) = ue.serving {
                self.hand_over(u, serving, target, t);
            }
            let c = self.cells_mut();
            if c.ues[u].moving.is_none() {
                c.in_transit.retain(|&x| x != u);
            }
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
            ue.meas.rsrp(now, &c.re_db, &mut rsrp);
            // The cells measured at this occasion, filtered.
            let filtered: Vec<(CellId, f64)> = (rsrp.iter().enumerate())
                .filter_map(|(k, p)| p.map(|p| (c.ids[k], ue.filters[k].update(p))))
                .collect();
            c.rsrp = rsrp;
            // A drive may not have measured every cell (nor the serving
            // one) at this occasion: the cells are found by id.
            let serving_id = c.ids[serving];
            let serving_now = filtered.iter().find(|(id, _)| *id == serving_id);
            ue.margin_db = serving_now.and_then(|&(_, s)| {
                (filtered.iter())
                    .filter(|(id, _)| *id != serving_id)
                    .map(|(_, p)| p - s)
                    .max_by(f64::total_cmp)
            });
            c.reports.clear();
            let Some(serving_rsrp) = ue.filters[serving].value() else {
                // Never measured its serving cell yet: nothing to compare.
                continue;
            };
            ue.detector.measure(
                now,
                (c.ids[serving], serving_rsrp),
                &filtered,
                &mut c.reports,
            );
            let level = |k: usize| ue.filters[k].value().unwrap_or(f64::NEG_INFINITY);
            let target = c
                .reports
                .iter()
                .filter_map(|r| match r {
                    Report::Triggered { cell, .. } => c.ids.iter().position(|x| x == cell),
                    Report::Left { .. } => None,
                })
                .max_by(|&a, &b| level(a).total_cmp(&level(b)));
            let c = self.cells_mut();
            let prep = c.cfg.preparation;
            match target {
                // One handover in preparation at a time.
                _ if c.ues[u].preparing.is_some() => {}
                Some(target) if prep.is_zero() => {
                    c.prepared(serving, target);
                    self.hand_over(u, serving, target, now);
                }
                Some(target) => {
                    c.prepared(serving, target);
                    c.ues[u].preparing = Some((target, now + prep));
                    c.in_transit_add(u);
                }
                None => {}
            }
        }
    }

    fn hand_over(&mut self, u: usize, source: usize, target: usize, now: Instant) {
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        let rnti = c.ues[u].rnti;
        let tc = c.cfg.tc_forwarding;
        let ctx = node(&mut self.gnb, &mut c.others, source).detach(rnti, now, tc);
        let Some(ctx) = ctx else { return };
        c.handovers[source].exe_requested += 1;
        let counts = ctx.counts();
        let gap = c.cfg.interruption.max(c.cfg.xn_delay);
        // The UE's previous handover, if it brought it here from `target`.
        let ping_pong = (c.records.iter().zip(&c.commands).rev())
            .find(|(r, _)| r.ue == rnti.0)
            .is_some_and(|(r, &(at, _))| {
                r.source == c.ids[target].0
                    && r.target == c.ids[source].0
                    && now.saturating_since(at) < c.cfg.ping_pong_window
            });
        c.commands.push((now, gap));
        c.records.push(HandoverRecord {
            ue: rnti.0,
            at_s: now.as_secs_f64(),
            source: c.ids[source].0,
            target: c.ids[target].0,
            interruption_ms: gap.as_millis_f64(),
            preparation_ms: c.cfg.preparation.as_millis_f64(),
            forwarded_packets: counts.forwarded(),
            forwarded_bytes: counts.forwarded_bytes(),
            tc_forwarded_packets: counts.tc_forwarded,
            pdcp_forwarded_packets: counts.pdcp_forwarded,
            arrived_meanwhile: 0,
            dropped_packets: counts.dropped,
            ping_pong,
            impact: Default::default(),
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
        c.in_transit_add(u);
        self.drain_cell(source);
    }

    fn attach(&mut self, u: usize, now: Instant) {
        let c = self.cells.as_deref_mut().expect("multi-cell run");
        let m = c.ues[u].moving.take().expect("moving");
        c.in_transit.retain(|&x| x != u);
        let rnti = c.ues[u].rnti;
        let k = m.target;
        c.records[m.record].arrived_meanwhile = m.held.len() as u64;
        c.handovers[m.source].exe_succeeded += 1;
        let ctx = ChannelContext {
            seed: c.seed,
            rnti: rnti.0,
            bandwidth_hz: c.bandwidth_hz[k],
        };
        let mut channel = match &c.ues[u].meas {
            // The trace as read at the start (its path was the scenario's).
            Measure::Drive { trace, table, .. } => AnyChannel::Drive(
                DriveChannel::new(trace.clone(), *table).serving_from(Some(c.ids[k])),
            ),
            Measure::Geometry(_) => channel_at(&c.ues[u].channel, &c.sites, &c.ids, k)
                .build(Path::new("."), &ctx)
                .expect("the same geometry built at the start"),
        };
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

/// The handovers (with what each did to its UE's flows) and per-cell
/// load of a multi-cell run that ended at `end` (empty for one cell).
pub(super) fn report(
    cells: Option<&Cells>,
    measured_s: f64,
    end: Instant,
) -> (Vec<HandoverRecord>, Vec<CellLoad>) {
    match cells {
        None => (Vec::new(), Vec::new()),
        Some(c) => {
            let mut records = c.records().to_vec();
            for (r, &(at, gap)) in records.iter_mut().zip(&c.commands) {
                r.impact = c.impact.measure(r.ue, at, gap, end);
            }
            (records, c.loads(measured_s))
        }
    }
}
