//! Run-time reconfiguration: scheduled events ("at t = 30 s deploy pipeline
//! X") and closed-loop controllers, the simulator's stand-in for the TC-RAN
//! xApps (paper-tc-ran.txt sec. V-B and V-C).
//!
//! Contract:
//! - A [`Controller`] is sans-IO: every `period` the engine hands it a
//!   read-only [`ControlView`] (per-DRB pipeline configuration and stats,
//!   RLC backlog, and the mean RLC sojourn of the packets delivered since
//!   its previous call; per-flow goodput and delay over the same window) and
//!   it returns [`Command`]s. It never touches the simulator.
//! - Commands are applied in order, each atomically: a refused one changes
//!   nothing, is recorded in `RunSeries::failed_reconfigurations` with the
//!   error and counted in the summary; the run goes on.
//! - A command carries a [`Change`], tcran-tc's one vocabulary of
//!   changes, applied by the pipeline all or nothing
//!   ([`tcran_tc::Pipeline::apply_change`]): [`Change::Deploy`] replaces a
//!   DRB's whole pipeline without losing a packet.
//!
//! Built-in controllers ([`ControllerKind`]):
//! - `sojourn_codel`: the online-game xApp of TC-RAN Figs. 8-10: when the
//!   RLC sojourn exceeds 10 ms it deploys a second, CoDel queue and moves the
//!   greedy flows (goodput above `greedy_rate`) there with 5-tuple rules; a
//!   pacer (5G-BDP) is added if the bearer had none, since without one the
//!   TC queues never hold anything (the RLC buffer takes every packet).
//! - `sojourn_deploy`: the low-latency xApp of Fig. 7: when the RLC sojourn
//!   exceeds the threshold, deploy a given pipeline (e.g. CoDel + round robin
//!   + 5G-BDP).
//! - `flow_slicing`: RAN flow slicing of Fig. 6: flows (by name) grouped
//!   into slices, one queue each, shared by weight (deficit round robin,
//!   equal weights = the paper's 50 %-50 % round robin), optionally capped
//!   by a shaper (Fig. 6b: 15 Mbit/s), with a 5G-BDP pacer ("without the
//!   pacer ... no slicing effects would have been perceived").
//! - `handover_guard`: a mobility-aware xApp. A UE whose strongest
//!   neighbour comes within `ahead_db` of its serving cell (the handover
//!   margin its measurement reports give, TS 38.331 §5.5.5) will soon be
//!   handed over, and what waits for it in RLC and PDCP then crosses Xn
//!   and waits again in the target: the guard deploys `pipeline` on its
//!   bearers (a pacer and an AQM, so that little waits below the pipeline
//!   and TCP slows down) ahead of the handover, and puts each bearer's own
//!   pipeline back once the UE is well inside a cell again (margin below
//!   `-clear_db`, normally in the new one).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use tcran_core::{BitRate, ConfigError, Duration, FiveTuple, Instant, QueueId};
use tcran_tc::classify::{ClassifierConfig, FilterRule};
use tcran_tc::pacer::PacerConfig;
use tcran_tc::sched::SchedulerConfig;
use tcran_tc::shaper::ShaperConfig;
use tcran_tc::stats::PipelineStats;
use tcran_tc::{Change, Control, PipelineConfig, QueueConfig};

use crate::node::Direction;

/// A change to the DRB `drb` of UE `rnti` in direction `dir` (an uplink
/// DRB's pipeline is the UE's).
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub rnti: u16,
    pub drb: u8,
    pub dir: Direction,
    pub change: Change,
}

/// One DRB as a controller sees it.
#[derive(Debug, Clone)]
pub struct DrbView {
    pub rnti: u16,
    pub drb: u8,
    /// Downlink (the gNB's pipeline) or uplink (the UE's; its RLC figures
    /// are the UE's transmitter's, delivery is to the gNB's PDCP).
    pub dir: Direction,
    /// The pipeline's configuration as it stands (after earlier changes).
    pub config: PipelineConfig,
    pub stats: PipelineStats,
    /// Bytes waiting in the RLC transmit buffer (new data + retransmissions).
    pub rlc_bytes: u64,
    /// Packets of this DRB delivered to the UE since the controller's
    /// previous call, and their mean time from RLC entry to delivery (RLC
    /// queue, MAC scheduling, HARQ, air): the RLC sojourn the TC-RAN xApps
    /// watch. `None` when nothing was delivered.
    pub rlc_delivered: u64,
    pub rlc_delay_ms: Option<f64>,
    /// SDUs that left the RLC buffer (sent in UM, acknowledged in AM) in
    /// the same window and their mean sojourn. In AM it includes the wait
    /// for the status report (uplink delay, t-StatusProhibit), so even an
    /// idle bearer shows about 10 ms: the built-ins use `rlc_delay_ms`.
    pub rlc_departed: u64,
    pub rlc_sojourn_ms: Option<f64>,
    /// The UE's handover margin: its strongest neighbour's RSRP less its
    /// serving cell's, dB, layer-3 filtered, from its last measurement
    /// (what its measurement reports tell the gNB, TS 38.331 §5.5.5;
    /// A3 triggers once it stays above offset + hysteresis for the
    /// time-to-trigger). `None` with one cell, or where the controller
    /// has no measurement reports (over E2).
    pub handover_margin_db: Option<f64>,
}

/// One flow as a controller sees it.
#[derive(Debug, Clone)]
pub struct FlowView {
    pub name: String,
    pub kind: &'static str,
    pub rnti: u16,
    /// The way its data goes: its DRB is of this direction.
    pub dir: Direction,
    /// DRB its packets go to (SDAP, the UE's for an uplink flow, maps its
    /// QFI; `None` before its first packet reached the gNB).
    pub drb: Option<u8>,
    /// The 5-tuple of its data (server to UE, or UE to server for an
    /// uplink flow), for classifier rules.
    pub tuple: FiveTuple,
    /// IP bytes delivered to the UE since the previous call, as Mbit/s.
    pub goodput_mbps: f64,
    /// Mean one-way delay of those packets.
    pub delay_ms: Option<f64>,
}

/// What a controller is shown on each call.
#[derive(Debug, Clone, Copy)]
pub struct ControlView<'a> {
    pub now: Instant,
    /// The DRBs and flows of the UEs (and DRBs) the controller watches.
    pub drbs: &'a [DrbView],
    pub flows: &'a [FlowView],
}

/// A closed-loop controller (an xApp), called every `period`.
pub trait Controller: std::fmt::Debug + Send {
    /// Appends the commands to apply now to `out`.
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>);
}

/// Built-in controllers plus a plug-in escape hatch.
#[derive(Debug)]
pub enum AnyController {
    SojournCodel(SojournCodel),
    SojournDeploy(SojournDeploy),
    FlowSlicing(FlowSlicing),
    HandoverGuard(HandoverGuard),
    Custom(Box<dyn Controller>),
}

impl Controller for AnyController {
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>) {
        match self {
            AnyController::SojournCodel(c) => c.on_tick(view, out),
            AnyController::SojournDeploy(c) => c.on_tick(view, out),
            AnyController::FlowSlicing(c) => c.on_tick(view, out),
            AnyController::HandoverGuard(c) => c.on_tick(view, out),
            AnyController::Custom(c) => c.on_tick(view, out),
        }
    }
}

// ------------------------------------------------------------------ config

fn default_period() -> Duration {
    Duration::from_millis(100)
}
fn default_threshold() -> Duration {
    Duration::from_millis(10)
}
fn default_greedy_rate() -> BitRate {
    BitRate(1_000_000)
}
fn one() -> u32 {
    1
}
fn default_ahead_db() -> f64 {
    6.0
}
fn default_clear_db() -> f64 {
    9.0
}

/// A controller in a scenario (`[[controllers]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ControllerConfig {
    /// Shown in `reconfigurations[].by`; default: the kind.
    #[serde(default)]
    pub name: Option<String>,
    /// How often it is called: 1 ms to 10 s. Default 100 ms.
    #[serde(default = "default_period")]
    pub period: Duration,
    /// First call (then every `period`). Default: one period into the run.
    #[serde(default)]
    pub start: Option<Duration>,
    /// RNTI of the UE it watches; default every UE.
    #[serde(default)]
    pub ue: Option<u16>,
    /// DRB it watches; default every DRB.
    #[serde(default)]
    pub drb: Option<u8>,
    /// Which DRBs it watches and reconfigures: `"downlink"` (default, the
    /// gNB's pipelines) or `"uplink"` (the UEs' pipelines of their
    /// `uplink_drbs`).
    #[serde(default, skip_serializing_if = "Direction::is_downlink")]
    pub direction: Direction,
    #[serde(flatten)]
    pub kind: ControllerKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerKind {
    /// TC-RAN Figs. 8-10: RLC sojourn above `threshold` -> CoDel queue for
    /// the greedy flows.
    SojournCodel {
        /// Default 10 ms (the paper's xApp).
        #[serde(default = "default_threshold")]
        threshold: Duration,
        /// A flow is greedy when its goodput over the last period is at
        /// least this. Default 1 Mbit/s.
        #[serde(default = "default_greedy_rate")]
        greedy_rate: BitRate,
        /// The queue for the greedy flows. Default: CoDel with RFC 8289
        /// defaults (5 ms / 100 ms), id one above the highest existing.
        #[serde(default)]
        queue: Option<QueueConfig>,
        /// Scheduler to set with it; default: keep the pipeline's.
        #[serde(default)]
        scheduler: Option<SchedulerConfig>,
        /// Pacer to set if the bearer has none. Default 5G-BDP.
        #[serde(default)]
        pacer: Option<PacerConfig>,
    },
    /// TC-RAN Fig. 7: RLC sojourn above `threshold` -> deploy `pipeline`
    /// (once per DRB).
    SojournDeploy {
        #[serde(default = "default_threshold")]
        threshold: Duration,
        pipeline: PipelineConfig,
    },
    /// TC-RAN Fig. 6: flows grouped into slices sharing the bearer by
    /// weight, deployed on the first call.
    FlowSlicing {
        /// Slice `i` gets queue `i`; flows in no slice go to slice 0.
        slices: Vec<FlowSliceConfig>,
        /// Default 5G-BDP.
        #[serde(default)]
        pacer: Option<PacerConfig>,
    },
    /// A mobility-aware xApp: a UE's handover margin at or above
    /// `-ahead_db` (a handover is near) -> deploy `pipeline` on its
    /// bearers; margin below `-clear_db` -> each bearer's own pipeline
    /// back.
    HandoverGuard {
        /// dB. Default 6: with A3's default 3 dB hysteresis (and 0 dB
        /// offset) the guard acts 9 dB of margin before the trigger,
        /// seconds ahead at vehicle speeds (the margin moves about
        /// 1 dB/s at 10 m/s between sites 500 m apart), time for the
        /// bearer's RLC backlog to drain.
        #[serde(default = "default_ahead_db")]
        ahead_db: f64,
        /// dB, more than `ahead_db`. Default 9: after the handover the
        /// old cell is the neighbour, about `hysteresis` dB below, so
        /// the guard stays until the UE is well inside its new cell.
        #[serde(default = "default_clear_db")]
        clear_db: f64,
        pipeline: PipelineConfig,
    },
}

/// One flow slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSliceConfig {
    /// Names of the scenario flows in this slice.
    pub flows: Vec<String>,
    /// Relative share (deficit round robin weight). Default 1.
    #[serde(default = "one")]
    pub weight: u32,
    /// Optional rate cap of the slice (e.g. a token bucket at 15 Mbit/s).
    #[serde(default)]
    pub shaper: Option<ShaperConfig>,
}

impl ControllerConfig {
    pub fn name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            match self.kind {
                ControllerKind::SojournCodel { .. } => "sojourn_codel",
                ControllerKind::SojournDeploy { .. } => "sojourn_deploy",
                ControllerKind::FlowSlicing { .. } => "flow_slicing",
                ControllerKind::HandoverGuard { .. } => "handover_guard",
            }
            .to_string()
        })
    }

    /// Validates and builds; `flow_names` are the scenario's flows.
    pub fn build(&self, flow_names: &[&str]) -> Result<AnyController, ConfigError> {
        tcran_core::config::check_range(
            "period",
            self.period,
            Duration::from_millis(1),
            Duration::from_secs(10),
        )?;
        let threshold_ok = |t: Duration| {
            if t.is_zero() {
                Err(ConfigError::new("threshold", t, "must be > 0"))
            } else {
                Ok(())
            }
        };
        Ok(match &self.kind {
            ControllerKind::SojournCodel {
                threshold,
                greedy_rate,
                queue,
                scheduler,
                pacer,
            } => {
                threshold_ok(*threshold)?;
                if let Some(q) = queue {
                    q.validate().map_err(|e| e.within("queue"))?;
                }
                if let Some(s) = scheduler {
                    s.build().map_err(|e| e.within("scheduler"))?;
                }
                let pacer = pacer.clone().unwrap_or_else(default_pacer);
                pacer.build().map_err(|e| e.within("pacer"))?;
                AnyController::SojournCodel(SojournCodel {
                    threshold: *threshold,
                    greedy_rate: *greedy_rate,
                    queue: queue.clone(),
                    scheduler: scheduler.clone(),
                    pacer,
                    deployed: BTreeMap::new(),
                })
            }
            ControllerKind::SojournDeploy {
                threshold,
                pipeline,
            } => {
                threshold_ok(*threshold)?;
                pipeline.build().map_err(|e| e.within("pipeline"))?;
                AnyController::SojournDeploy(SojournDeploy {
                    threshold: *threshold,
                    pipeline: pipeline.clone(),
                    deployed: BTreeSet::new(),
                })
            }
            ControllerKind::FlowSlicing { slices, pacer } => {
                if slices.is_empty() {
                    return Err(ConfigError::new("slices", "[]", "at least one slice"));
                }
                let mut seen = BTreeSet::new();
                for (i, s) in slices.iter().enumerate() {
                    tcran_core::config::check_range("weight", s.weight, 1, 1_000_000)
                        .map_err(|e| e.within(format!("slices[{i}]")))?;
                    if let Some(sh) = &s.shaper {
                        sh.build()
                            .map_err(|e| e.within(format!("slices[{i}].shaper")))?;
                    }
                    for f in &s.flows {
                        if !flow_names.contains(&f.as_str()) {
                            return Err(ConfigError::new(
                                format!("slices[{i}].flows"),
                                f,
                                format!("must name a scenario flow ({})", flow_names.join(", ")),
                            ));
                        }
                        if !seen.insert(f.clone()) {
                            return Err(ConfigError::new(
                                format!("slices[{i}].flows"),
                                f,
                                "a flow can be in one slice only",
                            ));
                        }
                    }
                }
                let pacer = pacer.clone().unwrap_or_else(default_pacer);
                pacer.build().map_err(|e| e.within("pacer"))?;
                AnyController::FlowSlicing(FlowSlicing {
                    slices: slices.clone(),
                    pacer,
                    deployed: BTreeSet::new(),
                })
            }
            ControllerKind::HandoverGuard {
                ahead_db,
                clear_db,
                pipeline,
            } => {
                tcran_core::config::check_range("ahead_db", *ahead_db, -30.0, 30.0)?;
                if !(clear_db > ahead_db && *clear_db <= 60.0) {
                    return Err(ConfigError::new(
                        "clear_db",
                        clear_db,
                        format!("must be above ahead_db ({ahead_db}) and at most 60"),
                    ));
                }
                pipeline.build().map_err(|e| e.within("pipeline"))?;
                AnyController::HandoverGuard(HandoverGuard {
                    ahead_db: *ahead_db,
                    clear_db: *clear_db,
                    pipeline: pipeline.clone(),
                    guarded: BTreeMap::new(),
                })
            }
        })
    }
}

fn default_pacer() -> PacerConfig {
    serde_json::from_value(serde_json::json!({ "kind": "bdp" })).expect("5G-BDP defaults")
}

/// A scheduled change (`[[events]]`): at `at`, apply `control` or deploy
/// `pipeline` (exactly one) on DRB `drb` of UE `ue` (default: every DRB of
/// every UE).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    pub at: Duration,
    #[serde(default)]
    pub ue: Option<u16>,
    #[serde(default)]
    pub drb: Option<u8>,
    /// `"downlink"` (default) or `"uplink"`: the UEs' pipelines of their
    /// `uplink_drbs`.
    #[serde(default, skip_serializing_if = "Direction::is_downlink")]
    pub direction: Direction,
    #[serde(default)]
    pub control: Option<Control>,
    #[serde(default)]
    pub pipeline: Option<PipelineConfig>,
}

impl EventConfig {
    pub fn change(&self) -> Result<Change, ConfigError> {
        match (&self.control, &self.pipeline) {
            (Some(c), None) => Ok(Change::Control(c.clone())),
            (None, Some(p)) => {
                p.build().map_err(|e| e.within("pipeline"))?;
                Ok(Change::Deploy(p.clone()))
            }
            _ => Err(ConfigError::new(
                "control",
                if self.control.is_some() {
                    "control and pipeline"
                } else {
                    "neither"
                },
                "give exactly one of `control` (one change) or `pipeline` (deploy a whole pipeline)",
            )),
        }
    }
}

// --------------------------------------------------------------- built-ins

/// A filter rule matching exactly one flow's downlink 5-tuple.
pub fn flow_rule(priority: u32, queue: QueueId, t: &FiveTuple) -> FilterRule {
    let mut r = FilterRule::new(priority, queue);
    r.src = Some(t.src.to_string());
    r.dst = Some(t.dst.to_string());
    if t.sport != 0 || t.dport != 0 {
        r.src_port = Some(i64::from(t.sport).into());
        r.dst_port = Some(i64::from(t.dport).into());
    }
    r.protocol = Some(i64::from(t.proto.0).into());
    r
}

fn next_rule_priority(c: &ClassifierConfig) -> u32 {
    match c {
        ClassifierConfig::Filter { rules } => {
            rules.iter().map(|r| r.priority + 1).max().unwrap_or(1)
        }
        _ => 1,
    }
}

/// TC-RAN's online-game xApp (Figs. 8-10).
#[derive(Debug)]
pub struct SojournCodel {
    threshold: Duration,
    greedy_rate: BitRate,
    queue: Option<QueueConfig>,
    scheduler: Option<SchedulerConfig>,
    pacer: PacerConfig,
    /// Per (rnti, drb, direction): the greedy queue and the flows moved
    /// there.
    deployed: BTreeMap<(u16, u8, Direction), (QueueId, BTreeSet<String>)>,
}

impl Controller for SojournCodel {
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>) {
        let limit = self.threshold.as_millis_f64();
        for d in view.drbs {
            if d.rlc_delay_ms.is_none_or(|s| s <= limit) {
                continue;
            }
            let cmd = |change| Command {
                rnti: d.rnti,
                drb: d.drb,
                dir: d.dir,
                change,
            };
            let key = (d.rnti, d.drb, d.dir);
            let mut classifier = d.config.classifier.clone();
            if !self.deployed.contains_key(&key) {
                let top = d.config.queues.iter().map(|q| q.id.0 + q.count).max();
                let queue = self.queue.clone().unwrap_or_else(|| {
                    serde_json::from_value(serde_json::json!({
                        "id": top.unwrap_or(0),
                        "kind": "codel",
                        "priority": 1,
                    }))
                    .expect("CoDel defaults")
                });
                let id = queue.id;
                out.push(cmd(Change::Control(Control::AddQueue { queue })));
                if !matches!(classifier, ClassifierConfig::Filter { .. }) {
                    classifier = ClassifierConfig::Filter { rules: Vec::new() };
                    out.push(cmd(Change::Control(Control::SetClassifier {
                        classifier: classifier.clone(),
                    })));
                }
                if let Some(s) = &self.scheduler {
                    out.push(cmd(Change::Control(Control::SetScheduler {
                        scheduler: s.clone(),
                    })));
                }
                if d.config.pacer == PacerConfig::None {
                    out.push(cmd(Change::Control(Control::SetPacer {
                        pacer: self.pacer.clone(),
                    })));
                }
                self.deployed.insert(key, (id, BTreeSet::new()));
            }
            let (queue, moved) = self.deployed.get_mut(&key).expect("inserted");
            let mut priority = next_rule_priority(&classifier);
            let greedy = self.greedy_rate.mbps();
            for f in view.flows {
                if f.rnti == d.rnti
                    && f.dir == d.dir
                    && f.drb == Some(d.drb)
                    && f.goodput_mbps >= greedy
                    && !moved.contains(&f.name)
                {
                    out.push(cmd(Change::Control(Control::AddRule {
                        rule: flow_rule(priority, *queue, &f.tuple),
                    })));
                    priority += 1;
                    moved.insert(f.name.clone());
                }
            }
        }
    }
}

/// TC-RAN's low-latency xApp (Fig. 7).
#[derive(Debug)]
pub struct SojournDeploy {
    threshold: Duration,
    pipeline: PipelineConfig,
    deployed: BTreeSet<(u16, u8, Direction)>,
}

impl Controller for SojournDeploy {
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>) {
        let limit = self.threshold.as_millis_f64();
        for d in view.drbs {
            if d.rlc_delay_ms.is_some_and(|s| s > limit)
                && self.deployed.insert((d.rnti, d.drb, d.dir))
            {
                out.push(Command {
                    rnti: d.rnti,
                    drb: d.drb,
                    dir: d.dir,
                    change: Change::Deploy(self.pipeline.clone()),
                });
            }
        }
    }
}

/// TC-RAN's RAN flow slicing (Fig. 6).
#[derive(Debug)]
pub struct FlowSlicing {
    slices: Vec<FlowSliceConfig>,
    pacer: PacerConfig,
    deployed: BTreeSet<(u16, u8, Direction)>,
}

impl FlowSlicing {
    /// The slicing pipeline for the flows of UE `rnti` in direction `dir`.
    pub fn pipeline(&self, rnti: u16, dir: Direction, flows: &[FlowView]) -> PipelineConfig {
        let mut rules = Vec::new();
        let mut queues = Vec::new();
        for (i, s) in self.slices.iter().enumerate() {
            let mut q: QueueConfig =
                serde_json::from_value(serde_json::json!({ "id": i, "kind": "fifo" }))
                    .expect("FIFO defaults");
            q.weight = s.weight;
            q.shaper = s.shaper.clone();
            queues.push(q);
            for f in flows.iter().filter(|f| f.rnti == rnti && f.dir == dir) {
                if s.flows.contains(&f.name) {
                    let priority = rules.len() as u32 + 1;
                    rules.push(flow_rule(priority, QueueId(i as u16), &f.tuple));
                }
            }
        }
        PipelineConfig {
            classifier: ClassifierConfig::Filter { rules },
            queues,
            default_queue: Some(QueueId(0)),
            scheduler: serde_json::from_value(serde_json::json!({ "kind": "weighted" }))
                .expect("weighted defaults"),
            pacer: self.pacer.clone(),
            limit_packets: None,
        }
    }
}

impl Controller for FlowSlicing {
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>) {
        for d in view.drbs {
            if self.deployed.insert((d.rnti, d.drb, d.dir)) {
                out.push(Command {
                    rnti: d.rnti,
                    drb: d.drb,
                    dir: d.dir,
                    change: Change::Deploy(self.pipeline(d.rnti, d.dir, view.flows)),
                });
            }
        }
    }
}

/// A mobility-aware xApp (module docs, `handover_guard`).
#[derive(Debug)]
pub struct HandoverGuard {
    ahead_db: f64,
    clear_db: f64,
    pipeline: PipelineConfig,
    /// The bearers guarded now, by (rnti, drb, direction), with the
    /// pipeline each had.
    guarded: BTreeMap<(u16, u8, Direction), PipelineConfig>,
}

impl Controller for HandoverGuard {
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>) {
        for d in view.drbs {
            let Some(margin) = d.handover_margin_db else {
                continue;
            };
            let key = (d.rnti, d.drb, d.dir);
            let deploy = |pipeline: PipelineConfig| Command {
                rnti: d.rnti,
                drb: d.drb,
                dir: d.dir,
                change: Change::Deploy(pipeline),
            };
            match self.guarded.get(&key) {
                None if margin >= -self.ahead_db => {
                    self.guarded.insert(key, d.config.clone());
                    out.push(deploy(self.pipeline.clone()));
                }
                Some(own) if margin < -self.clear_db => {
                    out.push(deploy(own.clone()));
                    self.guarded.remove(&key);
                }
                _ => {}
            }
        }
    }
}
