//! Run-time reconfiguration of a DRB's pipeline: the node's side of the
//! TC service model (TC-RAN sec. IV-B), used alike by the simulator's
//! scheduled events and controllers, the E2 agent and the C ABI.
//!
//! Contract:
//! - [`Gnb::apply`] applies one [`Action`] to (RNTI, DRB) atomically: a
//!   refused change changes nothing and says why ([`Refused`]).
//! - All or nothing is [`apply_atomically`], the one implementation every
//!   front end uses (the E2 agent's in-memory test node too): the controls
//!   are first rehearsed on a scratch pipeline built from the running
//!   configuration (validation depends on the configuration only), and
//!   the result must itself be a configuration that builds
//!   (`Pipeline::apply` checks each control, not every cross reference: a
//!   policer may be pointed at a queue that does not exist). Only then are
//!   they applied to the real pipeline.
//! - [`Action::Deploy`] replaces a DRB's whole pipeline without losing a
//!   packet: it is turned into the [`Control`] sequence that transforms the
//!   running configuration into the target ([`deploy_controls`]: queues
//!   added or changed in place, stages replaced, queues that are gone
//!   deleted so their packets move to the new default queue).
//! - Marks the pipeline counted so far are collected first (queues about to
//!   be deleted lose none), and the pipeline's egress runs right after (a
//!   new pacer may let packets go at once).

use crate::node::Gnb;
use serde::Serialize;
use std::collections::BTreeSet;
use tcran_core::{DrbId, Instant, QueueId, Rnti};
use tcran_tc::{Control, Pipeline, PipelineConfig, QueueConfig};

/// What to do to one DRB's pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// One TC control message (add / modify / delete of a stage).
    Control(Control),
    /// Several controls, in order, all or none (e.g. FlexRIC's "modify
    /// the OSI filter", which is a rule change plus a default queue).
    Controls(Vec<Control>),
    /// Replace the whole pipeline, keeping every queued packet.
    Deploy(PipelineConfig),
}

impl Action {
    /// An empty list of controls: it changes nothing, and an E2 control
    /// carrying it is a read of the configuration (E2SM-TCRAN's outcome
    /// returns it), not a reconfiguration.
    pub fn is_read(&self) -> bool {
        matches!(self, Action::Controls(c) if c.is_empty())
    }

    /// A short description for logs and reports (`reconfigurations[].what`).
    pub fn describe(&self) -> String {
        match self {
            Action::Control(c) => describe(c),
            Action::Controls(cs) => cs.iter().map(describe).collect::<Vec<_>>().join("; "),
            Action::Deploy(target) => format!("deploy pipeline {}", json(target)),
        }
    }
}

/// A change the node did not make, and why; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// What was asked ([`Action::describe`]).
    pub what: String,
    pub error: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
    }
}

impl std::error::Error for Refused {}

impl Gnb {
    /// Applies `action` to the pipeline of DRB `drb` of UE `rnti` at `now`;
    /// returns what was done, or why nothing was.
    pub fn apply(
        &mut self,
        rnti: Rnti,
        drb: DrbId,
        action: Action,
        now: Instant,
    ) -> Result<String, Refused> {
        let what = action.describe();
        let target = self
            .ue_of(rnti)
            .and_then(|u| Some((u, self.ues[u].drbs.iter().position(|d| d.id == drb)?)));
        let Some((u, d)) = target else {
            return Err(Refused {
                what,
                error: "no such UE/DRB".into(),
            });
        };
        // Run what was due before `now` (an input at `now` comes first).
        self.advance(now);
        let now = self.now;
        self.collect_drb_marks(u, d);
        let result = apply_atomically(&mut self.ues[u].drbs[d].pipeline, &action, now);
        self.collect_tc_drops(u, d);
        self.egress(u, d);
        match result {
            Ok(()) => Ok(what),
            Err(error) => Err(Refused { what, error }),
        }
    }
}

/// Applies `action` to `pipeline` entirely or not at all (see the module
/// docs); `Err` says why in one line, and the pipeline is unchanged.
pub fn apply_atomically(
    pipeline: &mut Pipeline,
    action: &Action,
    now: Instant,
) -> Result<(), String> {
    let deploy;
    let controls: &[Control] = match action {
        Action::Control(c) => std::slice::from_ref(c),
        Action::Controls(cs) => cs,
        Action::Deploy(target) => {
            // The target's own mistakes first, named by their field.
            target.build().map_err(|e| e.to_string())?;
            deploy = deploy_controls(&pipeline.config(), target);
            &deploy
        }
    };
    let numbered = |i: usize, e: String| {
        if controls.len() == 1 {
            e
        } else {
            format!("control {} of {}: {e}", i + 1, controls.len())
        }
    };
    match pipeline.config().build() {
        Ok(mut scratch) => {
            for (i, c) in controls.iter().enumerate() {
                scratch
                    .apply(c.clone(), now)
                    .map_err(|e| numbered(i, e.to_string()))?;
            }
            scratch
                .config()
                .build()
                .map_err(|e| format!("the resulting pipeline would be invalid: {e}"))?;
        }
        // A pipeline with plug-in stages cannot be rebuilt without their
        // resolver: one control is still atomic (`Pipeline::apply` changes
        // nothing when it fails), a sequence cannot be rehearsed.
        Err(_) if controls.len() == 1 => {
            return pipeline
                .apply(controls[0].clone(), now)
                .map_err(|e| e.to_string());
        }
        Err(e) => {
            return Err(format!(
                "the running pipeline cannot be rebuilt to rehearse {} controls ({e}); send them one at a time",
                controls.len()
            ))
        }
    }
    for (i, c) in controls.iter().enumerate() {
        pipeline.apply(c.clone(), now).map_err(|e| {
            numbered(
                i,
                format!("internal: passed the rehearsal, then failed: {e}"),
            )
        })?;
    }
    Ok(())
}

/// The controls that turn a pipeline configured as `current` into `target`
/// while keeping its packets (see the module docs).
pub fn deploy_controls(current: &PipelineConfig, target: &PipelineConfig) -> Vec<Control> {
    let existing: BTreeSet<QueueId> = current.queues.iter().flat_map(|q| q.ids()).collect();
    let mut out = Vec::new();
    for q in &target.queues {
        if q.ids().all(|id| !existing.contains(&id)) {
            out.push(Control::AddQueue { queue: q.clone() });
            continue;
        }
        for id in q.ids() {
            let one = QueueConfig {
                id,
                count: 1,
                ..q.clone()
            };
            out.push(if existing.contains(&id) {
                Control::ModifyQueue { queue: one }
            } else {
                Control::AddQueue { queue: one }
            });
        }
    }
    let default = target
        .default_queue
        .or_else(|| target.queues.first().map(|q| q.id));
    if let Some(id) = default {
        out.push(Control::SetDefaultQueue { id });
    }
    out.push(Control::SetClassifier {
        classifier: target.classifier.clone(),
    });
    out.push(Control::SetScheduler {
        scheduler: target.scheduler.clone(),
    });
    out.push(Control::SetPacer {
        pacer: target.pacer.clone(),
    });
    out.push(Control::SetTotalLimit {
        limit_packets: target.limit_packets,
    });
    let kept: BTreeSet<QueueId> = target.queues.iter().flat_map(|q| q.ids()).collect();
    for id in existing.difference(&kept) {
        out.push(Control::DeleteQueue { id: *id });
    }
    out
}

/// A short description of a control for `reconfigurations[].what`.
pub fn describe(c: &Control) -> String {
    let queue = |q: &QueueConfig| {
        let ids = if q.count > 1 {
            format!("{}..{}", q.id.0, q.id.0 + q.count - 1)
        } else {
            q.id.0.to_string()
        };
        format!("{ids} {}", q.kind.kind_name())
    };
    match c {
        Control::SetClassifier { classifier } => format!("set classifier {}", json(classifier)),
        Control::AddRule { rule } => format!("add rule {}", json(rule)),
        Control::ModifyRule { rule } => format!("modify rule {}", json(rule)),
        Control::DeleteRule { priority } => format!("delete rule {priority}"),
        Control::AddQueue { queue: q } => format!("add queue {}", queue(q)),
        Control::ModifyQueue { queue: q } => format!("modify queue {}", queue(q)),
        Control::DeleteQueue { id } => format!("delete queue {}", id.0),
        Control::SetPolicer { id, policer } => {
            format!("set policer of queue {} {}", id.0, json(policer))
        }
        Control::SetShaper { id, shaper } => {
            format!("set shaper of queue {} {}", id.0, json(shaper))
        }
        Control::SetScheduler { scheduler } => format!("set scheduler {}", json(scheduler)),
        Control::SetPacer { pacer } => format!("set pacer {}", json(pacer)),
        Control::SetDefaultQueue { id } => format!("set default queue {}", id.0),
        Control::SetTotalLimit { limit_packets } => format!("set total limit {limit_packets:?}"),
    }
}

/// Compact JSON of a serde value (for descriptions).
fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
