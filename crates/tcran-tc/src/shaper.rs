//! Shapers (TC-RAN stage 5): limit the rate leaving a queue by delaying.

use crate::stage::{Shaper, ShaperStats};
use serde::{Deserialize, Serialize};
use tcran_core::{BitRate, ByteSize, ConfigError, Instant};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ShaperConfig {
    TokenBucket { rate: BitRate, burst: ByteSize },
}

impl ShaperConfig {
    pub fn build(&self) -> Result<AnyShaper, ConfigError> {
        Ok(AnyShaper::Open)
    }
}

#[derive(Debug)]
pub enum AnyShaper {
    Open,
}

impl Shaper for AnyShaper {
    fn admits(&mut self, _len: u32, _now: Instant) -> bool {
        true
    }
    fn on_sent(&mut self, _len: u32, _now: Instant) {}
    fn ready_at(&self, _len: u32, now: Instant) -> Instant {
        now
    }
    fn stats(&self) -> ShaperStats {
        ShaperStats::default()
    }
}
