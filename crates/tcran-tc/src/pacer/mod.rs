//! Pacers (TC-RAN stage 6): keep the RLC buffer full, but not fuller.

use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Duration, Instant};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PacerConfig {
    /// No pacing: everything goes down at once (3GPP baseline).
    #[default]
    None,
}

impl PacerConfig {
    pub fn kind_name(&self) -> &'static str {
        match self {
            PacerConfig::None => "none",
        }
    }
    pub fn build(&self) -> Result<AnyPacer, ConfigError> {
        Ok(AnyPacer::None)
    }
}

#[derive(Debug)]
pub enum AnyPacer {
    None,
    Custom(Box<dyn Pacer>),
}

impl Pacer for AnyPacer {
    fn admits(&mut self, len: u32, now: Instant, lower: &LowerState) -> bool {
        match self {
            AnyPacer::None => true,
            AnyPacer::Custom(p) => p.admits(len, now, lower),
        }
    }
    fn on_forwarded(&mut self, len: u32, now: Instant) {
        if let AnyPacer::Custom(p) = self {
            p.on_forwarded(len, now)
        }
    }
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        if let AnyPacer::Custom(p) = self {
            p.on_report(report, now)
        }
    }
    fn on_sdu_departed(&mut self, sojourn: Duration, now: Instant) {
        if let AnyPacer::Custom(p) = self {
            p.on_sdu_departed(sojourn, now)
        }
    }
    fn on_status_pdu(&mut self, now: Instant) {
        if let AnyPacer::Custom(p) = self {
            p.on_status_pdu(now)
        }
    }
    fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        match self {
            AnyPacer::None => None,
            AnyPacer::Custom(p) => p.next_wakeup(now),
        }
    }
    fn stats(&self) -> PacerStats {
        match self {
            AnyPacer::None => PacerStats::default(),
            AnyPacer::Custom(p) => p.stats(),
        }
    }
}
