//! Run-time control of a pipeline, as an xApp drives it through the TC
//! service model (TC-RAN sec. IV-B: add / delete / modify of every stage).
//!
//! Commands are serde values so a controller, a scenario event or an E2
//! control message can carry them:
//!
//! ```toml
//! op = "add_queue"
//! queue = { id = 2, kind = "codel", target = "5ms", interval = "100ms" }
//! ```

use crate::classify::{ClassifierConfig, FilterRule};
use crate::config::QueueConfig;
use crate::pacer::PacerConfig;
use crate::pipeline::Pipeline;
use crate::policer::PolicerConfig;
use crate::sched::SchedulerConfig;
use crate::shaper::ShaperConfig;
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Instant, QueueId};

/// One change to a running pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Control {
    /// Replace the classifier.
    SetClassifier {
        classifier: ClassifierConfig,
    },
    /// Add a filter rule to a `filter` classifier.
    AddRule {
        rule: FilterRule,
    },
    /// Replace the filter rule with the same `priority`.
    ModifyRule {
        rule: FilterRule,
    },
    /// Delete the filter rule with this `priority`.
    DeleteRule {
        priority: u32,
    },
    /// Add queue(s).
    AddQueue {
        queue: QueueConfig,
    },
    /// Change existing queue(s), keeping their packets.
    ModifyQueue {
        queue: QueueConfig,
    },
    /// Delete a queue; its packets move to the default queue.
    DeleteQueue {
        id: QueueId,
    },
    /// Attach, replace (`Some`) or remove (`None`) a queue's policer.
    SetPolicer {
        id: QueueId,
        policer: Option<PolicerConfig>,
    },
    /// Attach, replace or remove a queue's shaper.
    SetShaper {
        id: QueueId,
        shaper: Option<ShaperConfig>,
    },
    SetScheduler {
        scheduler: SchedulerConfig,
    },
    SetPacer {
        pacer: PacerConfig,
    },
    SetDefaultQueue {
        id: QueueId,
    },
    /// Set or clear the total packet limit over all queues.
    SetTotalLimit {
        limit_packets: Option<u32>,
    },
}

pub(crate) fn apply(p: &mut Pipeline, control: Control, _now: Instant) -> Result<(), ConfigError> {
    match control {
        Control::SetClassifier { classifier } => p.set_classifier(classifier),
        Control::AddRule { rule } => {
            let mut c = p.config().classifier;
            c.add_rule(rule)?;
            p.set_classifier(c)
        }
        Control::ModifyRule { rule } => {
            let mut c = p.config().classifier;
            c.modify_rule(rule)?;
            p.set_classifier(c)
        }
        Control::DeleteRule { priority } => {
            let mut c = p.config().classifier;
            c.delete_rule(priority)?;
            p.set_classifier(c)
        }
        Control::AddQueue { queue } => p.add_queue(queue).map_err(|e| e.within("queue")),
        Control::ModifyQueue { queue } => p.modify_queue(queue).map_err(|e| e.within("queue")),
        Control::DeleteQueue { id } => p.delete_queue(id),
        Control::SetPolicer { id, policer } => {
            let mut c = existing(p, id)?;
            c.policer = policer;
            p.modify_queue(c)
        }
        Control::SetShaper { id, shaper } => {
            let mut c = existing(p, id)?;
            c.shaper = shaper;
            p.modify_queue(c)
        }
        Control::SetScheduler { scheduler } => p.set_scheduler(scheduler),
        Control::SetPacer { pacer } => p.set_pacer(pacer),
        Control::SetDefaultQueue { id } => p.set_default_queue(id),
        Control::SetTotalLimit { limit_packets } => p.set_total_limit(limit_packets),
    }
}

fn existing(p: &Pipeline, id: QueueId) -> Result<QueueConfig, ConfigError> {
    p.queue_config(id)
        .map(|c| QueueConfig {
            id,
            count: 1,
            ..c.clone()
        })
        .ok_or_else(|| ConfigError::new("id", id.0, "no such queue"))
}
