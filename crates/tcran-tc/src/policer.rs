//! Policers (TC-RAN stage 2): meter the rate entering a queue; out-of-profile
//! packets are dropped, marked or deviated to another queue.

use crate::stage::{PoliceVerdict, Policer};
use serde::{Deserialize, Serialize};
use tcran_core::{BitRate, ByteSize, ConfigError, Instant, QueueId};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicerConfig {
    /// Single-rate token bucket meter.
    TokenBucket {
        rate: BitRate,
        burst: ByteSize,
        #[serde(default)]
        redirect: Option<QueueId>,
    },
}

impl PolicerConfig {
    pub fn build(&self) -> Result<AnyPolicer, ConfigError> {
        Ok(AnyPolicer::Pass)
    }
    pub fn redirect_target(&self) -> Option<QueueId> {
        match self {
            PolicerConfig::TokenBucket { redirect, .. } => *redirect,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PolicerStats {
    pub passed: u64,
}

#[derive(Debug)]
pub enum AnyPolicer {
    Pass,
}

impl AnyPolicer {
    pub fn stats(&self) -> PolicerStats {
        PolicerStats::default()
    }
}

impl Policer for AnyPolicer {
    fn police(&mut self, _len: u32, _now: Instant) -> PoliceVerdict {
        PoliceVerdict::Pass
    }
}
