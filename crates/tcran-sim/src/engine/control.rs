//! Reconfiguration in the simulator: scheduled events and closed-loop
//! controllers (the TC-RAN xApps), applied through the RAN node's control
//! surface ([`tcran_gnb::Gnb::apply`]) and recorded in the run's series.
//!
//! Contract: a controller is called every `period` with a view of what
//! happened since its previous call (per-DRB RLC sojourn and delay from
//! the node's cumulative counters, per-flow goodput and delay); its
//! commands are applied in order, each atomically, and every change,
//! applied or refused, is recorded with who asked for it.
//!
//! With several cells a controller sees the DRBs of every cell (a UE on
//! its way between two is in none), and a command goes to the cell that
//! serves the UE then; a UE's DRB counters start again in each cell it
//! enters, so its first view there covers the time since it attached.

use super::{Ev, Sim};
use crate::scenario::SimConfig;
use crate::series::Reconfiguration;
use std::collections::BTreeMap;
use tcran_control::controller::{
    AnyController, Command, ControlView, Controller, DrbView, FlowView,
};
use tcran_control::{Direction, DrbKey, RanNode};
use tcran_core::{ConfigError, DrbId, Duration, Instant, Rnti};
use tcran_tc::{Applied, Change, Refused};

/// A scheduled change: who, where (`None` = every UE / DRB of the
/// direction), what.
#[derive(Debug)]
pub(super) struct Scheduled {
    ue: Option<u16>,
    drb: Option<u8>,
    dir: Direction,
    change: Change,
}

/// A controller with its schedule, scope and the counters it last saw.
#[derive(Debug)]
pub(super) struct ControllerSlot {
    name: String,
    period: Duration,
    ue: Option<u16>,
    drb: Option<u8>,
    dir: Direction,
    controller: AnyController,
    /// Per DRB (cell, key): (departed, sojourn sum, delivered, RLC delay
    /// sum) at the previous call.
    prev_drb: BTreeMap<(usize, DrbKey), [u64; 4]>,
    /// Per flow: (bytes, delay sum ns, packets) at the previous call.
    prev_flow: Vec<(u64, u64, u64)>,
    prev_at: Instant,
}

impl Sim {
    /// The scenario's scheduled events and controllers.
    pub(super) fn schedule_events(&mut self, cfg: &SimConfig) -> Result<(), ConfigError> {
        for (i, ev) in cfg.events.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("events[{i}]"));
            self.check_scope(ev.ue, ev.drb, ev.direction).map_err(at)?;
            if ev.at > cfg.duration {
                return Err(at(ConfigError::new(
                    "at",
                    ev.at,
                    format!("must be within the duration ({})", cfg.duration),
                )));
            }
            self.events
                .schedule(Instant::ZERO + ev.at, Ev::Scheduled(self.scheduled.len()));
            self.scheduled.push(Scheduled {
                ue: ev.ue,
                drb: ev.drb,
                dir: ev.direction,
                change: ev.change().map_err(at)?,
            });
        }
        let names: Vec<&str> = cfg.flows.iter().map(|f| f.name.as_str()).collect();
        for (i, c) in cfg.controllers.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("controllers[{i}]"));
            self.check_scope(c.ue, c.drb, c.direction).map_err(at)?;
            let controller = c.build(&names).map_err(at)?;
            let start = c.start.unwrap_or(c.period);
            let scope = (c.ue, c.drb, c.direction);
            self.add_controller(c.name(), c.period, start, scope, controller);
        }
        Ok(())
    }

    /// Adds a controller (e.g. an [`AnyController::Custom`] one) called
    /// every `period` from `start`, watching `(ue, drb, direction)`: UE
    /// `ue` and DRB `drb` (`None` = all) of that direction.
    pub fn add_controller(
        &mut self,
        name: String,
        period: Duration,
        start: Duration,
        (ue, drb, dir): (Option<u16>, Option<u8>, Direction),
        controller: AnyController,
    ) {
        let i = self.controllers.len();
        self.controllers.push(ControllerSlot {
            name,
            period: period.max(Duration::from_nanos(1)),
            ue,
            drb,
            dir,
            controller,
            prev_drb: BTreeMap::new(),
            prev_flow: vec![(0, 0, 0); self.flows.len()],
            prev_at: Instant::ZERO,
        });
        let at = Instant::ZERO + start;
        if at <= self.end {
            self.events.schedule(at, Ev::Control(i));
        }
    }

    fn check_scope(
        &self,
        ue: Option<u16>,
        drb: Option<u8>,
        dir: Direction,
    ) -> Result<(), ConfigError> {
        let known = self.scope(ue, None, Direction::Downlink);
        if known.is_empty() {
            return Err(ConfigError::new(
                "ue",
                ue.unwrap_or_default(),
                "must be the rnti of a configured UE",
            ));
        }
        let mut drbs = self
            .scope(ue, None, dir)
            .into_iter()
            .map(|(_, key)| key.drb);
        match (drb, dir) {
            (Some(d), _) if !drbs.any(|x| x.0 == d) => {
                let what = match dir {
                    Direction::Downlink => "no such DRB on the UE(s)",
                    Direction::Uplink => "no such uplink DRB on the UE(s) (ues[].uplink_drbs)",
                };
                Err(ConfigError::new("drb", d, what))
            }
            (None, Direction::Uplink) if drbs.next().is_none() => Err(ConfigError::new(
                "direction",
                dir.as_str(),
                "the UE(s) have no uplink DRBs (ues[].uplink_drbs)",
            )),
            _ => Ok(()),
        }
    }

    /// The DRBs of direction `dir` in scope: the cell that has each now
    /// and its key, in cell order and each node's order.
    fn scope(&self, ue: Option<u16>, drb: Option<u8>, dir: Direction) -> Vec<(usize, DrbKey)> {
        let mut keys = Vec::new();
        for k in 0..self.cell_count() {
            let Some(g) = self.cell_gnb(k) else {
                continue;
            };
            match dir {
                Direction::Downlink => {
                    keys.extend(g.drb_ids().map(|(r, d)| (k, DrbKey::new(r.0, d.0))))
                }
                Direction::Uplink => keys.extend(g.uplink_drb_ids().map(|key| (k, key))),
            }
        }
        keys.retain(|(_, key)| {
            ue.is_none_or(|x| key.rnti.0 == x) && drb.is_none_or(|x| key.drb.0 == x)
        });
        keys
    }

    pub(super) fn run_scheduled(&mut self, i: usize) {
        let s = &self.scheduled[i];
        let (ue, drb, dir) = (s.ue, s.drb, s.dir);
        let change = s.change.clone();
        for (k, key) in self.scope(ue, drb, dir) {
            let _ = self.apply_control_in(k, "event", key, &change);
        }
    }

    /// Calls controller `i` with what happened since its previous call and
    /// applies its commands.
    pub(super) fn run_controller(&mut self, i: usize) {
        let now = self.now;
        let c = &self.controllers[i];
        let window = now.saturating_since(c.prev_at).as_secs_f64();
        let scope = self.scope(c.ue, c.drb, c.dir);
        let mut drbs = Vec::with_capacity(scope.len());
        let mut prev_drb = BTreeMap::new();
        for (k, key) in scope {
            let g = self.cell_gnb(k).expect("in scope");
            let (rnti, id) = (key.rnti, key.drb);
            let (config, stats, rlc_bytes, n) = match key.dir {
                Direction::Downlink => {
                    let drb = g.drb(rnti, id).expect("in scope");
                    let rlc = drb.rlc_buffer().total();
                    (drb.config(), drb.stats(now), rlc, drb.counters())
                }
                Direction::Uplink => {
                    let view = g.tc_view(key, now).expect("in scope");
                    let n = g.uplink_drb_counters(rnti, id).expect("in scope");
                    let rlc = view.lower.rlc_backlog_bytes;
                    (view.config, view.stats, rlc, n)
                }
            };
            let key = (k, key);
            let [n0, s0, m0, r0] = c.prev_drb.get(&key).copied().unwrap_or_default();
            let departed = n.rlc_sdus_departed - n0;
            let delivered = n.delivered_packets - m0;
            drbs.push(DrbView {
                rnti: rnti.0,
                drb: id.0,
                dir: key.1.dir,
                config,
                stats,
                rlc_bytes,
                rlc_departed: departed,
                rlc_sojourn_ms: (departed > 0)
                    .then(|| (n.rlc_sdu_sojourn_ns - s0) as f64 / departed as f64 / 1e6),
                rlc_delivered: delivered,
                rlc_delay_ms: (delivered > 0)
                    .then(|| (n.rlc_delay_ns - r0) as f64 / delivered as f64 / 1e6),
                handover_margin_db: self.handover_margin_db(rnti),
            });
            prev_drb.insert(
                key,
                [
                    n.rlc_sdus_departed,
                    n.rlc_sdu_sojourn_ns,
                    n.delivered_packets,
                    n.rlc_delay_ns,
                ],
            );
        }
        let mut flows = Vec::new();
        let mut prev_flow = Vec::with_capacity(self.flows.len());
        for (k, f) in self.flows.iter().enumerate() {
            prev_flow.push((f.total_bytes, f.total_delay_ns, f.total_packets));
            if c.ue.is_some_and(|r| r != f.rnti.0) {
                continue;
            }
            // Live flows appear during the run.
            let (b0, d0, n0) = c.prev_flow.get(k).copied().unwrap_or_default();
            let n = f.total_packets - n0;
            flows.push(FlowView {
                name: f.name.clone(),
                kind: f.kind,
                rnti: f.rnti.0,
                dir: f.dir(),
                drb: if f.first_at_gnb.is_some_and(|t| t < now) {
                    (self.serving_cell(f.rnti))
                        .and_then(|k| self.cell_gnb(k))
                        .and_then(|g| f.drb_in(g))
                        .map(|d| d.0)
                } else {
                    None
                },
                tuple: f.tuple,
                goodput_mbps: if window > 0.0 {
                    (f.total_bytes - b0) as f64 * 8.0 / window / 1e6
                } else {
                    0.0
                },
                delay_ms: (n > 0).then(|| (f.total_delay_ns - d0) as f64 / n as f64 / 1e6),
            });
        }
        let view = ControlView {
            now,
            drbs: &drbs,
            flows: &flows,
        };
        let mut commands: Vec<Command> = Vec::new();
        let c = &mut self.controllers[i];
        c.controller.on_tick(&view, &mut commands);
        c.prev_drb = prev_drb;
        c.prev_flow = prev_flow;
        c.prev_at = now;
        let (name, next) = (c.name.clone(), now + c.period);
        for cmd in commands {
            let key = DrbKey {
                rnti: Rnti(cmd.rnti),
                drb: DrbId(cmd.drb),
                dir: cmd.dir,
            };
            let cell = (self.serving_cell(key.rnti)).filter(|&k| {
                self.cell_gnb(k).is_some_and(|g| match key.dir {
                    Direction::Downlink => g.drb(key.rnti, key.drb).is_some(),
                    Direction::Uplink => g.uplink_drb_ids().any(|x| x == key),
                })
            });
            if let Some(k) = cell {
                let _ = self.apply_control_in(k, &name, key, &cmd.change);
            } else {
                let what = match key.dir {
                    Direction::Downlink => "command",
                    Direction::Uplink => "uplink command",
                };
                self.refused(&name, cmd.rnti, cmd.drb, what.into(), &Refused::NoSuchDrb);
            }
        }
        if next <= self.end {
            self.events.schedule(next, Ev::Control(i));
        }
    }

    /// Applies `change` to the pipeline of (UE, DRB) now, through the RAN
    /// node's control surface, and records it in the run's
    /// reconfigurations (applied or refused, with `by` as who asked), as
    /// for the scenario's own events and controllers: what an outside
    /// controller (an xApp over E2) calls between two events of a
    /// real-time run. An empty list of controls ([`Change::is_read`]) is a
    /// read: checked against the DRB like any change, but not recorded nor
    /// counted as a reconfiguration.
    pub fn apply_control(
        &mut self,
        by: &str,
        rnti: Rnti,
        drb: DrbId,
        change: &Change,
    ) -> Result<Applied, Refused> {
        self.apply_control_to(by, DrbKey::new(rnti.0, drb.0), change)
    }

    /// [`Sim::apply_control`] for a DRB of either direction: an uplink
    /// DRB's pipeline is the UE's (`ues[].uplink_drbs`), and its
    /// reconfigurations are recorded with `uplink` before what changed.
    pub fn apply_control_to(
        &mut self,
        by: &str,
        key: DrbKey,
        change: &Change,
    ) -> Result<Applied, Refused> {
        self.apply_control_in(0, by, key, change)
    }

    /// Records a change's outcome (a read is not a reconfiguration).
    pub(super) fn record_control(
        &mut self,
        by: &str,
        key: DrbKey,
        change: &Change,
        result: &Result<Applied, Refused>,
    ) {
        if !change.is_read() {
            let what = match key.dir {
                Direction::Downlink => change.describe(),
                Direction::Uplink => format!("uplink {}", change.describe()),
            };
            match result {
                Ok(_) => self.applied(by, key.rnti.0, key.drb.0, what),
                Err(r) => self.refused(by, key.rnti.0, key.drb.0, what, r),
            }
        }
    }

    /// Replaces the MAC's downlink slices now (an outside controller's
    /// slice control, e.g. FlexRIC's SLICE model over E2), recorded among
    /// the run's reconfigurations as a change of the cell (RNTI and DRB 0).
    pub fn set_slices(&mut self, by: &str, slices: Vec<(f64, Vec<Rnti>)>) -> Result<(), String> {
        self.set_slices_in(0, by, slices)
    }

    /// Maps QoS flow `qfi` of `rnti` onto its DRB `drb` in SDAP now (an
    /// E2SM-RC control), recorded among the run's reconfigurations like a
    /// slice change.
    pub fn map_qos_flow(
        &mut self,
        by: &str,
        rnti: Rnti,
        qfi: tcran_core::Qfi,
        drb: tcran_core::DrbId,
    ) -> Result<(), String> {
        self.map_qos_flow_in(0, by, rnti, qfi, drb)
    }

    /// Records a change of a cell's MAC or SDAP (applied or failed).
    pub(super) fn record_cell_change(
        &mut self,
        by: &str,
        rnti: u16,
        drb: u8,
        what: String,
        result: &Result<(), String>,
    ) {
        match result {
            Ok(()) => self.applied(by, rnti, drb, what),
            Err(e) => {
                self.reconfig_counts.failed += 1;
                self.series.reconfiguration(
                    true,
                    Reconfiguration {
                        t_s: self.now.as_secs_f64(),
                        by: by.to_string(),
                        rnti,
                        drb,
                        what: format!("{what}: {e}"),
                    },
                );
            }
        }
    }

    fn applied(&mut self, by: &str, rnti: u16, drb: u8, what: String) {
        self.reconfig_counts.applied += 1;
        self.series.reconfiguration(
            false,
            Reconfiguration {
                t_s: self.now.as_secs_f64(),
                by: by.to_string(),
                rnti,
                drb,
                what,
            },
        );
    }

    fn refused(&mut self, by: &str, rnti: u16, drb: u8, what: String, error: &Refused) {
        self.reconfig_counts.failed += 1;
        self.series.reconfiguration(
            true,
            Reconfiguration {
                t_s: self.now.as_secs_f64(),
                by: by.to_string(),
                rnti,
                drb,
                what: format!("{what}: {error}"),
            },
        );
    }
}

/// How a slice change is recorded: each slice's share and UEs.
pub(super) fn describe_slices(slices: &[(f64, Vec<Rnti>)]) -> String {
    format!(
        "slices {}",
        slices
            .iter()
            .map(|(share, ues)| format!(
                "{:.1}% [{}]",
                share * 100.0,
                ues.iter()
                    .map(|u| u.0.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
