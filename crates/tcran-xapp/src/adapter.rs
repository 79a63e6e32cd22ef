//! One controller code, two places: any `tcran_control::controller::Controller`
//! (the simulator's in-process xApps) run over E2, unchanged.
//!
//! The simulator calls a controller every `period` with a [`ControlView`]
//! built from its own counters. Here the view is built from E2SM-TCRAN
//! indications sampled every `sample` (default period / 10, at least 1 ms)
//! and the controller's [`Command`]s are sent as E2SM-TCRAN controls, one
//! by one, in order, each waiting for its outcome (a refused one changes
//! nothing on the node and is recorded; the next ones are still sent, as
//! the simulator does).
//!
//! How each field of the view is obtained over E2:
//!
//! | field | over E2 |
//! |---|---|
//! | DRBs | those of the indications in scope: the UE and DRB asked for, of one direction ([`AdapterOptions::direction`]: the downlink's by default, or the uplink's, the UEs' pipelines); a DRB none of the window's indications reported has left the node (a handover) and is out of the view |
//! | `now` | the node's clock in the last indication |
//! | `config` | read once per DRB with an empty control list, then the configuration each control outcome returns |
//! | `stats` | the last report's pipeline statistics |
//! | `rlc_bytes` | the last report's RLC backlog |
//! | `rlc_delay_ms`, `rlc_sojourn_ms` | mean of the sampled RLC head-of-line sojourns over the window (`None` without samples). The simulator averages the delay of the SDUs delivered; the head-of-line sojourn is the delay the next SDU to leave has seen, the quantity the TC-RAN xApps watch (paper sec. V-C) |
//! | `rlc_delivered`, `rlc_departed` | packets the pipeline passed to RLC in the window |
//! | `handover_margin_db` | the last report's (E2SM-TCRAN's `handoverMargin`, from the UE's measurement reports: a node of a multi-cell run sends it, so a `handover_guard` acts over E2 as in the simulator; `None` where the node has none) |
//! | `flows` | the [`FlowEntry`] table given to the adapter: E2SM-TCRAN has no per-flow counters, so a flow's goodput is what the table declares (`greedy`: +inf Mbit/s, above any threshold; else 0) and its delay is unknown |

use crate::report::DrbStatus;
use crate::server::{ControlOutcome, NodeId, Xapp, XappError};
use std::collections::BTreeMap;
use tcran_control::controller::{Command, ControlView, Controller, DrbView, FlowView};
use tcran_control::{Direction, DrbKey};
use tcran_core::{FiveTuple, Instant};
use tcran_e2::sm::e2sm_tcran::Trigger;
use tcran_tc::PipelineConfig;

/// One flow the xApp knows by its 5-tuple.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowEntry {
    pub name: String,
    /// "tcp", "udp", "gaming", ... as the simulator names flow kinds.
    pub kind: &'static str,
    pub rnti: u16,
    pub drb: u8,
    /// Downlink 5-tuple (server to UE).
    pub tuple: FiveTuple,
    /// A greedy (bulk, capacity-seeking) flow.
    pub greedy: bool,
}

/// How the adapter runs a controller.
#[derive(Debug, Clone)]
pub struct AdapterOptions {
    /// How often the controller is called.
    pub period: std::time::Duration,
    /// Report period of the E2SM-TCRAN subscription (default: period /
    /// 10, at least 1 ms).
    pub sample: Option<std::time::Duration>,
    /// Only this UE (default every UE).
    pub ue: Option<u16>,
    /// Only this DRB (default every DRB).
    pub drb: Option<u8>,
    /// The DRBs of this direction (default downlink): a controller
    /// addresses DRBs by (RNTI, DRB), and a UE numbers its uplink DRBs on
    /// their own, so one controller watches one direction; its commands go
    /// to the DRBs of that direction (uplink: the UEs' pipelines).
    pub direction: Direction,
    pub flows: Vec<FlowEntry>,
}

impl AdapterOptions {
    pub fn every(period: std::time::Duration) -> AdapterOptions {
        AdapterOptions {
            period,
            sample: None,
            ue: None,
            drb: None,
            direction: Direction::Downlink,
            flows: Vec::new(),
        }
    }
    fn sample(&self) -> std::time::Duration {
        self.sample
            .unwrap_or(self.period / 10)
            .max(std::time::Duration::from_millis(1))
    }
}

/// One change the controller made, as the node answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconfiguration {
    /// The node's clock when the controller decided.
    pub at: Instant,
    pub drb: DrbKey,
    pub what: String,
    /// `Err`: the node's refusal.
    pub result: Result<(), String>,
}

#[derive(Debug, Default)]
struct Window {
    last: Option<DrbStatus>,
    sojourn_sum_ms: f64,
    samples: u64,
    out_packets_at_start: Option<u64>,
}

/// Why the adapter stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Stopped {
    /// The stop signal.
    Requested,
    /// The node went away (its association ended).
    NodeGone,
}

/// Runs `controller` against `node` until `stop` turns true or the node
/// disconnects, calling `on_change` for every reconfiguration.
pub async fn run<C: Controller + ?Sized>(
    xapp: &Xapp,
    node: NodeId,
    controller: &mut C,
    opts: &AdapterOptions,
    mut stop: tokio::sync::watch::Receiver<bool>,
    on_change: &mut (dyn FnMut(&Reconfiguration) + Send),
) -> Result<Stopped, XappError> {
    let sample_ms = opts.sample().as_millis().min(86_400_000) as u32;
    let mut sub = xapp
        .subscribe_tc(
            node,
            Trigger::Periodic {
                period_ms: sample_ms.max(1),
            },
            &[],
        )
        .await?;
    let in_scope = |d: DrbKey| {
        d.dir == opts.direction
            && opts.ue.is_none_or(|u| u == d.rnti.0)
            && opts.drb.is_none_or(|x| x == d.drb.0)
    };
    let mut windows: BTreeMap<DrbKey, Window> = BTreeMap::new();
    let mut configs: BTreeMap<DrbKey, PipelineConfig> = BTreeMap::new();
    let mut now = Instant::ZERO;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + opts.period, opts.period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut commands = Vec::new();
    loop {
        tokio::select! {
            ind = sub.recv() => {
                let Some(ind) = ind else { return Ok(Stopped::NodeGone) };
                now = Instant::from_nanos(ind.time_ns);
                for d in ind.drbs {
                    if !in_scope(d.drb) {
                        continue;
                    }
                    let w = windows.entry(d.drb).or_default();
                    w.sojourn_sum_ms += d.lower.rlc_sojourn.as_millis_f64();
                    w.samples += 1;
                    w.out_packets_at_start.get_or_insert(d.stats.totals.out_packets);
                    w.last = Some(d);
                }
            }
            _ = tick.tick() => {
                // A DRB the node's last two sample periods of reports did
                // not name has left the node (its UE handed over or
                // detached): out of the view, and met anew (a new RLC
                // entity, its own pipeline) if it comes back.
                let gone_before = now.as_secs_f64() - 2.0 * opts.sample().as_secs_f64();
                windows.retain(|key, w| {
                    let here = w.last.as_ref().is_some_and(|l| l.stats.time_s >= gone_before);
                    if !here {
                        configs.remove(key);
                    }
                    here
                });
                let mut drbs = Vec::new();
                for (key, w) in windows.iter_mut() {
                    let Some(last) = &w.last else { continue };
                    if !configs.contains_key(key) {
                        match xapp.pipeline(node, *key).await {
                            Ok(c) => { configs.insert(*key, c); }
                            Err(XappError::Refused { .. }) => continue, // the DRB went away
                            Err(e) => return Err(e),
                        }
                    }
                    let mean = (w.samples > 0).then(|| w.sojourn_sum_ms / w.samples as f64);
                    let out = last.stats.totals.out_packets;
                    let passed = out.saturating_sub(w.out_packets_at_start.unwrap_or(out));
                    drbs.push(DrbView {
                        rnti: key.rnti.0,
                        drb: key.drb.0,
                        dir: key.dir,
                        config: configs[key].clone(),
                        stats: last.stats.clone(),
                        rlc_bytes: last.lower.rlc_backlog_bytes,
                        rlc_delivered: passed,
                        rlc_delay_ms: mean,
                        rlc_departed: passed,
                        rlc_sojourn_ms: mean,
                        handover_margin_db: last
                            .lower
                            .handover_margin_cdb
                            .map(|c| f64::from(c) / 100.0),
                    });
                    w.sojourn_sum_ms = 0.0;
                    w.samples = 0;
                    w.out_packets_at_start = Some(out);
                }
                let flows: Vec<FlowView> = opts
                    .flows
                    .iter()
                    .filter(|f| opts.ue.is_none_or(|u| u == f.rnti))
                    .map(|f| FlowView {
                        name: f.name.clone(),
                        kind: f.kind,
                        rnti: f.rnti,
                        dir: opts.direction,
                        drb: Some(f.drb),
                        tuple: f.tuple,
                        goodput_mbps: if f.greedy { f64::INFINITY } else { 0.0 },
                        delay_ms: None,
                    })
                    .collect();
                let view = ControlView { now, drbs: &drbs, flows: &flows };
                commands.clear();
                controller.on_tick(&view, &mut commands);
                for cmd in commands.drain(..) {
                    let r = apply(xapp, node, &cmd, opts.direction, now, &mut configs).await?;
                    // An empty list of controls reads the configuration
                    // (refreshing `configs`); it reconfigures nothing.
                    if !cmd.change.is_read() {
                        on_change(&r);
                    }
                }
            }
            _ = stop.changed() => {
                if *stop.borrow() {
                    return Ok(Stopped::Requested);
                }
            }
        }
    }
}

async fn apply(
    xapp: &Xapp,
    node: NodeId,
    cmd: &Command,
    direction: Direction,
    now: Instant,
    configs: &mut BTreeMap<DrbKey, PipelineConfig>,
) -> Result<Reconfiguration, XappError> {
    let drb = DrbKey {
        dir: direction,
        ..DrbKey::new(cmd.rnti, cmd.drb)
    };
    let result = match xapp.control(node, drb, &cmd.change).await? {
        ControlOutcome::Applied(p) => {
            configs.insert(drb, p);
            Ok(())
        }
        ControlOutcome::Refused(why) => Err(why),
    };
    Ok(Reconfiguration {
        at: now,
        drb,
        what: cmd.change.describe(),
        result,
    })
}
