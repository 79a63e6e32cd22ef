//! Classifiers (TC-RAN stage 1): which queue does a packet go to?

use crate::stage::Classifier;
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Packet, QueueId};

/// The classifier, tagged by `kind`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClassifierConfig {
    /// Everything to the default queue (the 3GPP baseline: one queue per DRB).
    #[default]
    None,
    /// 5-tuple filter rules, first match by priority (TC-RAN's OSI classifier).
    Filter { rules: Vec<FilterRule> },
}

/// One filter rule. Fields left out match anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterRule {
    /// Lower values are tried first; unique within a classifier.
    pub priority: u32,
    /// Destination queue.
    pub queue: QueueId,
}

impl ClassifierConfig {
    pub fn kind_name(&self) -> &'static str {
        match self {
            ClassifierConfig::None => "none",
            ClassifierConfig::Filter { .. } => "filter",
        }
    }
    pub fn build(&self) -> Result<AnyClassifier, ConfigError> {
        Ok(match self {
            ClassifierConfig::None => AnyClassifier::None,
            ClassifierConfig::Filter { rules } => {
                let mut rules = rules.clone();
                rules.sort_by_key(|r| r.priority);
                AnyClassifier::Filter(rules)
            }
        })
    }
    /// Queues this classifier can send packets to.
    pub fn referenced_queues(&self) -> Vec<QueueId> {
        match self {
            ClassifierConfig::None => Vec::new(),
            ClassifierConfig::Filter { rules } => rules.iter().map(|r| r.queue).collect(),
        }
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
    pub fn add_rule(&mut self, rule: FilterRule) -> Result<(), ConfigError> {
        let rules = self.rules_mut()?;
        if rules.iter().any(|r| r.priority == rule.priority) {
            return Err(ConfigError::new(
                "rule.priority",
                rule.priority,
                "a rule with this priority exists already",
            ));
        }
        rules.push(rule);
        Ok(())
    }
    pub fn modify_rule(&mut self, rule: FilterRule) -> Result<(), ConfigError> {
        let rules = self.rules_mut()?;
        let slot = rules
            .iter_mut()
            .find(|r| r.priority == rule.priority)
            .ok_or_else(|| {
                ConfigError::new("rule.priority", rule.priority, "no rule with this priority")
            })?;
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

#[derive(Debug)]
pub enum AnyClassifier {
    None,
    Filter(Vec<FilterRule>),
    Custom(Box<dyn Classifier>),
}

impl Classifier for AnyClassifier {
    fn classify(&mut self, packet: &Packet) -> Option<QueueId> {
        match self {
            AnyClassifier::None => None,
            AnyClassifier::Filter(rules) => rules.first().map(|r| r.queue),
            AnyClassifier::Custom(c) => c.classify(packet),
        }
    }
}
