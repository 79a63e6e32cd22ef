//! Classifiers (TC-RAN stage 1, paper-tc-ran.txt sec. IV-A
//! "Ingress::Classifier"): which queue does an arriving packet go to?
//!
//! Contract shared by every kind: `classify` returns a queue id or `None`
//! for the pipeline's default queue; it never allocates, never fails, and a
//! malformed packet always gets `None`. Configuration strings are parsed
//! once, in `build()`, whose errors name the field (`rules[2].dst_port`).
//!
//! | `kind` | selects on | reference |
//! |---|---|---|
//! | `none` (default) | nothing: the default queue | 3GPP baseline, one queue per DRB |
//! | `filter` | 5-tuple prefixes/ranges, DSCP, ECN; first match by priority | TC-RAN "OSI classifier"; [`filter`] |
//! | `flow_hash` | keyed hash of the 5-tuple onto a bank of queues | SFQ / fq_codel, RFC 8290 sec. 4.1; [`flow_hash`] |
//! | `l4s` | ECN field: ECT(1) and CE -> L queue | RFC 9331 sec. 5.1 |
//! | `dscp` | DS field -> queue table, optional pfifo_fast bands | RFC 2474, Linux prio; [`dscp`] |
//! | `plugin` | the application's code | TC-RAN sec. IV-C; [`crate::plugin`] |
//!
//! ```toml
//! classifier = { kind = "filter", rules = [
//!   { priority = 1, protocol = "udp", dst_port = "5000-5010", queue = 1 },
//!   { priority = 2, dst = "2001:db8::/32", dscp = "ef", queue = 2 },
//! ] }
//! classifier = { kind = "flow_hash", first_queue = 0, buckets = 1024, perturbation = 7 }
//! classifier = { kind = "l4s", l_queue = 1, c_queue = 0 }
//! classifier = { kind = "dscp", map = { "ef" = 1, "34" = 2 } }
//! ```

pub mod dscp;
pub mod filter;
pub mod flow_hash;
pub mod spec;

#[cfg(test)]
mod tests;

use crate::config::MAX_QUEUE_ID;
use crate::plugin::{no_resolver, PluginConfig, Resolver};
use crate::stage::Classifier;
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ConfigError, Packet, QueueId};

pub use dscp::{DscpClassifier, DscpEntry, DscpMap};
pub use filter::{FilterClassifier, FilterRule};
pub use flow_hash::FlowHash;
pub use spec::NumOrText;

/// Linux fq_codel's default number of flows (`flows 1024`).
pub const DEFAULT_BUCKETS: u32 = 1024;

fn default_buckets() -> u32 {
    DEFAULT_BUCKETS
}

/// The classifier, tagged by `kind`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClassifierConfig {
    /// Everything to the default queue (the 3GPP baseline: one queue per DRB).
    #[default]
    None,
    /// 5-tuple filter rules, first match by priority (TC-RAN's OSI classifier).
    Filter {
        /// The rules: each matches packets on some of their fields (protocol,
        /// addresses, ports, DSCP, ECN) and names the queue they go to.
        rules: Vec<FilterRule>,
    },
    /// Stochastic flow hashing onto queues `first_queue..first_queue+buckets`.
    FlowHash {
        /// First queue of the bank. Default 0, so that a bank declared as
        /// `[[queues]] id = 0, count = 1024` needs no further settings.
        #[serde(default)]
        first_queue: QueueId,
        /// Number of queues (hash buckets). Default 1024 (Linux fq_codel).
        #[serde(default = "default_buckets")]
        buckets: u32,
        /// Hash key seed. Default 0 (deterministic, as ns-3).
        #[serde(default)]
        perturbation: u64,
    },
    /// RFC 9331 sec. 5.1: ECT(1) and CE to `l_queue`, Not-ECT and ECT(0) to
    /// `c_queue`.
    L4s {
        /// Queue of the L4S (low latency) traffic: ECT(1) and CE.
        l_queue: QueueId,
        /// Queue of the classic traffic: Not-ECT and ECT(0).
        c_queue: QueueId,
    },
    /// DSCP -> queue table; unlisted DSCPs go to the default queue, or to
    /// pfifo_fast bands if `bands` is given.
    Dscp {
        /// DSCP (a number or a PHB name such as `"EF"`) -> queue, as a table
        /// or a list of `{ dscp, queue }` tables.
        #[serde(default)]
        map: DscpMap,
        /// Queues for pfifo_fast bands 0, 1, 2 (Linux `ip_tos2prio` and the
        /// default priomap), applied to DSCPs not in `map`.
        #[serde(default)]
        bands: Option<[QueueId; 3]>,
    },
    /// A classifier written in C and loaded through the C library (docs/c-api.md).
    // See `crate::plugin`; boxed, so that the rarely used variant does not
    // grow every config.
    Plugin(Box<PluginConfig>),
}

impl ClassifierConfig {
    pub fn kind_name(&self) -> &'static str {
        match self {
            ClassifierConfig::None => "none",
            ClassifierConfig::Filter { .. } => "filter",
            ClassifierConfig::FlowHash { .. } => "flow_hash",
            ClassifierConfig::L4s { .. } => "l4s",
            ClassifierConfig::Dscp { .. } => "dscp",
            ClassifierConfig::Plugin(_) => "plugin",
        }
    }

    /// Validates and builds. Whether the referenced queues exist is checked
    /// by the pipeline (see [`ClassifierConfig::referenced_queues`]).
    /// Builds a built-in classifier; a plug-in needs [`Self::build_with`].
    pub fn build(&self) -> Result<AnyClassifier, ConfigError> {
        self.build_with(None)
    }

    /// Builds the classifier, resolving a plug-in with `plugins`.
    pub fn build_with(&self, plugins: Resolver<'_>) -> Result<AnyClassifier, ConfigError> {
        Ok(match self {
            ClassifierConfig::None => AnyClassifier::None,
            ClassifierConfig::Filter { rules } => {
                AnyClassifier::Filter(FilterClassifier::new(rules)?)
            }
            ClassifierConfig::FlowHash {
                first_queue,
                buckets,
                perturbation,
            } => {
                let n_max = MAX_QUEUE_ID as u32 + 1;
                check_range("buckets", *buckets, 1, n_max)?;
                let last = first_queue.0 as u32 + buckets - 1;
                if last > MAX_QUEUE_ID as u32 {
                    return Err(ConfigError::new(
                        "first_queue",
                        first_queue.0,
                        format!(
                            "first_queue + buckets - 1 must be at most {MAX_QUEUE_ID} (got {last})"
                        ),
                    ));
                }
                AnyClassifier::FlowHash(FlowHash::new(*first_queue, *buckets, *perturbation))
            }
            ClassifierConfig::L4s { l_queue, c_queue } => {
                if l_queue == c_queue {
                    return Err(ConfigError::new(
                        "l_queue",
                        l_queue.0,
                        "must differ from c_queue, or nothing is separated",
                    ));
                }
                AnyClassifier::L4s {
                    l_queue: *l_queue,
                    c_queue: *c_queue,
                }
            }
            ClassifierConfig::Dscp { map, bands } => {
                AnyClassifier::Dscp(Box::new(DscpClassifier::new(map, *bands)?))
            }
            ClassifierConfig::Plugin(c) => match plugins {
                Some(r) => AnyClassifier::Custom(r.classifier(c)?),
                None => return Err(no_resolver(c)),
            },
        })
    }

    /// Queues this classifier can send packets to, ascending, no duplicates.
    pub fn referenced_queues(&self) -> Vec<QueueId> {
        let mut q: Vec<QueueId> = match self {
            ClassifierConfig::None => Vec::new(),
            ClassifierConfig::Filter { rules } => rules.iter().map(|r| r.queue).collect(),
            ClassifierConfig::FlowHash {
                first_queue,
                buckets,
                ..
            } => {
                let last = (first_queue.0 as u32 + buckets).min(u16::MAX as u32 + 1);
                (first_queue.0 as u32..last)
                    .map(|i| QueueId(i as u16))
                    .collect()
            }
            ClassifierConfig::L4s { l_queue, c_queue } => vec![*l_queue, *c_queue],
            ClassifierConfig::Dscp { map, bands } => {
                let mut v = map.queues();
                v.extend(bands.iter().flatten());
                v
            }
            // A plug-in's targets are its own business; the pipeline sends
            // a packet classified to a missing queue to the default queue
            // and counts it (`missing_queue`).
            ClassifierConfig::Plugin(_) => Vec::new(),
        };
        q.sort_unstable();
        q.dedup();
        q
    }

    fn rules_mut(&mut self) -> Result<&mut Vec<FilterRule>, ConfigError> {
        match self {
            ClassifierConfig::Filter { rules } => Ok(rules),
            other => Err(ConfigError::new(
                "classifier.kind",
                other.kind_name(),
                "rules can only be changed on a \"filter\" classifier",
            )),
        }
    }

    /// Adds a rule (TC-RAN control "add filter"). The rule is validated on
    /// its own first, so errors name `rule.<field>`.
    pub fn add_rule(&mut self, rule: FilterRule) -> Result<(), ConfigError> {
        let rules = self.rules_mut()?;
        if rules.iter().any(|r| r.priority == rule.priority) {
            return Err(ConfigError::new(
                "rule.priority",
                rule.priority,
                "a rule with this priority exists already",
            ));
        }
        filter::compile(&rule).map_err(|e| e.within("rule"))?;
        rules.push(rule);
        Ok(())
    }

    /// Replaces the rule with the same priority.
    pub fn modify_rule(&mut self, rule: FilterRule) -> Result<(), ConfigError> {
        let rules = self.rules_mut()?;
        let slot = rules
            .iter_mut()
            .find(|r| r.priority == rule.priority)
            .ok_or_else(|| {
                ConfigError::new("rule.priority", rule.priority, "no rule with this priority")
            })?;
        filter::compile(&rule).map_err(|e| e.within("rule"))?;
        *slot = rule;
        Ok(())
    }

    pub fn delete_rule(&mut self, priority: u32) -> Result<(), ConfigError> {
        let rules = self.rules_mut()?;
        let before = rules.len();
        rules.retain(|r| r.priority != priority);
        if rules.len() == before {
            return Err(ConfigError::new(
                "priority",
                priority,
                "no rule with this priority",
            ));
        }
        Ok(())
    }
}

/// The built-in classifiers plus a plug-in escape hatch.
#[derive(Debug)]
pub enum AnyClassifier {
    None,
    Filter(FilterClassifier),
    FlowHash(FlowHash),
    L4s { l_queue: QueueId, c_queue: QueueId },
    Dscp(Box<DscpClassifier>),
    Custom(Box<dyn Classifier>),
}

impl Classifier for AnyClassifier {
    #[inline]
    fn classify(&mut self, packet: &Packet) -> Option<QueueId> {
        if packet.malformed {
            return None;
        }
        match self {
            AnyClassifier::None => None,
            AnyClassifier::Filter(f) => f.classify(packet),
            AnyClassifier::FlowHash(h) => Some(h.classify(&packet.tuple)),
            AnyClassifier::L4s { l_queue, c_queue } => Some(if packet.ecn.is_l4s() {
                *l_queue
            } else {
                *c_queue
            }),
            AnyClassifier::Dscp(d) => d.classify(packet.dscp),
            AnyClassifier::Custom(c) => c.classify(packet),
        }
    }
}
