//! A change to a running pipeline, the one vocabulary every front end
//! speaks (the RAN node, the simulator's events and controllers, the E2
//! service models, xApps, C and Python), applied by the pipeline itself as
//! Linux's qdiscs own their `change()`.
//!
//! Contract of [`Pipeline::apply_change`]:
//! - **All or nothing.** A refused change changes nothing and says why with
//!   a typed [`Refused`] (which control, the field, the value, what is
//!   allowed). The controls are first rehearsed on a scratch pipeline built
//!   from the running configuration with the pipeline's own plug-in
//!   resolver (validation depends on the configuration only; a C plug-in
//!   stage is created for the rehearsal and destroyed after it), and the
//!   result must itself be a configuration that builds
//!   ([`Pipeline::apply`] checks each control, not every cross reference: a
//!   policer may be pointed at a queue that does not exist). Only then are
//!   they applied to the pipeline.
//! - A pipeline whose configuration cannot be rebuilt (a plug-in stage
//!   without a resolver) is not rehearsed: one control is still atomic
//!   ([`Pipeline::apply`] changes nothing when it fails), a sequence of
//!   several is refused.
//! - **Deploy** ([`Change::Deploy`]) replaces the whole pipeline without
//!   losing or reordering a packet: it is the [`Control`] sequence that
//!   turns the running configuration into the target ([`deploy_controls`]:
//!   queues added or changed in place, stages replaced, queues that are
//!   gone deleted so their packets move, in order, to the new default
//!   queue).
//! - Nothing queued is lost silently: what a change sheds (a lowered limit)
//!   is dropped with reason `Reconfigured` and handed back by
//!   [`Pipeline::drain_dropped`] like any drop.

use crate::config::{PipelineConfig, QueueConfig};
use crate::control::Control;
use crate::pipeline::Pipeline;
use serde::Serialize;
use std::collections::BTreeSet;
use tcran_core::{ConfigError, Instant, QueueId};

/// What to do to one bearer's pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// One control (add / modify / delete of a stage).
    Control(Control),
    /// Several controls, in order, all or none (e.g. FlexRIC's "modify
    /// the OSI filter", which is a rule change plus a default queue). An
    /// empty list changes nothing: it reads the configuration.
    Controls(Vec<Control>),
    /// Replace the whole pipeline, keeping every queued packet in order.
    Deploy(PipelineConfig),
}

/// A change that was made: the pipeline's configuration after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub config: PipelineConfig,
}

/// A change that was not made, and why; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The node has no such (UE, DRB): there is no pipeline to change.
    NoSuchDrb,
    /// A deploy's target configuration is itself invalid.
    InvalidTarget(ConfigError),
    /// Control `index` (from 0) of `count` cannot be applied.
    Control {
        index: usize,
        count: usize,
        error: ConfigError,
    },
    /// Every control applies, but the configuration they leave would not
    /// build (a reference to a queue that does not exist).
    InvalidResult(ConfigError),
    /// Several controls for a pipeline that cannot be rebuilt to rehearse
    /// them (its plug-in stages need their resolver).
    NotRehearsable { count: usize, error: ConfigError },
    /// Control `index` of `count` passed the rehearsal, then failed on the
    /// pipeline: a bug (the controls before it stay applied).
    Diverged {
        index: usize,
        count: usize,
        error: ConfigError,
    },
}

/// One line, as the simulator's reports and the E2 models' refusals carry
/// it; a control of a list is numbered ("control 2 of 3: ...").
impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let numbered = |f: &mut std::fmt::Formatter<'_>, index: usize, count: usize| {
            if count == 1 {
                Ok(())
            } else {
                write!(f, "control {} of {count}: ", index + 1)
            }
        };
        match self {
            Refused::NoSuchDrb => write!(f, "no such UE/DRB"),
            Refused::InvalidTarget(e) => write!(f, "{e}"),
            Refused::Control {
                index,
                count,
                error,
            } => {
                numbered(f, *index, *count)?;
                write!(f, "{error}")
            }
            Refused::InvalidResult(e) => write!(f, "the resulting pipeline would be invalid: {e}"),
            Refused::NotRehearsable { count, error } => write!(
                f,
                "the running pipeline cannot be rebuilt to rehearse {count} controls ({error}); send them one at a time"
            ),
            Refused::Diverged {
                index,
                count,
                error,
            } => {
                numbered(f, *index, *count)?;
                write!(f, "internal: passed the rehearsal, then failed: {error}")
            }
        }
    }
}

impl std::error::Error for Refused {}

impl Refused {
    /// The configuration error behind the refusal (field, value, what is
    /// allowed), if a configuration was at fault.
    pub fn config_error(&self) -> Option<&ConfigError> {
        match self {
            Refused::NoSuchDrb => None,
            Refused::InvalidTarget(error)
            | Refused::Control { error, .. }
            | Refused::InvalidResult(error)
            | Refused::NotRehearsable { error, .. }
            | Refused::Diverged { error, .. } => Some(error),
        }
    }
}

impl Change {
    /// An empty list of controls: it changes nothing, and an E2 control
    /// carrying it is a read of the configuration (E2SM-TCRAN's outcome
    /// returns it), not a reconfiguration.
    pub fn is_read(&self) -> bool {
        matches!(self, Change::Controls(c) if c.is_empty())
    }

    /// A short description for logs and reports (`reconfigurations[].what`).
    pub fn describe(&self) -> String {
        match self {
            Change::Control(c) => describe(c),
            Change::Controls(cs) => cs.iter().map(describe).collect::<Vec<_>>().join("; "),
            Change::Deploy(target) => format!("deploy pipeline {}", json(target)),
        }
    }
}

impl Pipeline {
    /// Applies `change` at `now` entirely or not at all (see the module
    /// docs).
    pub fn apply_change(&mut self, change: &Change, now: Instant) -> Result<Applied, Refused> {
        let deploy;
        let controls: &[Control] = match change {
            Change::Control(c) => std::slice::from_ref(c),
            Change::Controls(cs) => cs,
            Change::Deploy(target) => {
                // The target's own mistakes first, named by their field.
                self.sibling(target.clone())
                    .map_err(Refused::InvalidTarget)?;
                deploy = deploy_controls(&self.config(), target);
                &deploy
            }
        };
        let count = controls.len();
        match self.sibling(self.config()) {
            Ok(mut scratch) => {
                for (index, c) in controls.iter().enumerate() {
                    scratch
                        .apply(c.clone(), now)
                        .map_err(|error| Refused::Control {
                            index,
                            count,
                            error,
                        })?;
                }
                self.sibling(scratch.config())
                    .map_err(Refused::InvalidResult)?;
            }
            Err(_) if count == 1 => {
                self.apply(controls[0].clone(), now)
                    .map_err(|error| Refused::Control {
                        index: 0,
                        count,
                        error,
                    })?;
                return Ok(Applied {
                    config: self.config(),
                });
            }
            Err(error) => return Err(Refused::NotRehearsable { count, error }),
        }
        for (index, c) in controls.iter().enumerate() {
            self.apply(c.clone(), now)
                .map_err(|error| Refused::Diverged {
                    index,
                    count,
                    error,
                })?;
        }
        Ok(Applied {
            config: self.config(),
        })
    }
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
    if let Some(id) = target.default_queue_id() {
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
