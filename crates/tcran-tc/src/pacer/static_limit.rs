//! `static`: a fixed RLC buffer limit in bytes and/or SDUs — the "smaller,
//! but static" RLC-AM buffer of Kumar et al. sec. II (16..96 SDUs, Fig. 2),
//! the baseline the dynamic pacers improve on.
//!
//! Contract: admits a packet of `len` bytes iff
//! `lower.bytes + len <= limit_bytes` (when set) and
//! `lower.sdus < limit_sdus` (when set). One liveness exception: an empty RLC
//! buffer always admits, so a packet larger than `limit_bytes` goes down
//! alone instead of blocking the bearer forever. Nothing changes with time
//! alone, so `next_wakeup` is `None`.
//!
//! Reads from the report: `pulled_bytes` and `tti`, for its bandwidth
//! statistic only; the limit reads `LowerState` (RLC bytes and SDUs).

use super::PulledRate;
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, Instant};

/// At least one limit must be given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StaticConfig {
    /// RLC buffer limit in bytes (`"48kB"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<ByteSize>,
    /// RLC buffer limit in SDUs (Kumar: 16..96).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_sdus: Option<u32>,
}

impl StaticConfig {
    pub fn build(&self) -> Result<StaticLimit, ConfigError> {
        if self.limit_bytes.is_none() && self.limit_sdus.is_none() {
            return Err(ConfigError::new(
                "limit_bytes",
                "(unset)",
                "set limit_bytes and/or limit_sdus",
            ));
        }
        if let Some(b) = self.limit_bytes {
            check_range("limit_bytes", b, ByteSize(64), ByteSize(1_000_000_000))?;
        }
        if let Some(s) = self.limit_sdus {
            check_range("limit_sdus", s, 1, 1_000_000)?;
        }
        Ok(StaticLimit {
            limit_bytes: self.limit_bytes.map(|b| b.0),
            limit_sdus: self.limit_sdus,
            refused: 0,
            rate: PulledRate::default(),
        })
    }
}

#[derive(Debug, Clone)]
pub struct StaticLimit {
    limit_bytes: Option<u64>,
    limit_sdus: Option<u32>,
    refused: u64,
    rate: PulledRate,
}

impl Pacer for StaticLimit {
    fn admits(&mut self, len: u32, _now: Instant, lower: &LowerState) -> bool {
        let bytes_ok = lower.bytes == 0
            || self
                .limit_bytes
                .is_none_or(|l| lower.bytes + len as u64 <= l);
        let sdus_ok = self.limit_sdus.is_none_or(|l| lower.sdus < l);
        let ok = bytes_ok && sdus_ok;
        if !ok {
            self.refused += 1;
        }
        ok
    }
    fn on_forwarded(&mut self, _len: u32, _now: Instant) {}
    fn on_report(&mut self, report: &LowerLayerReport, _now: Instant) {
        self.rate.update(report);
    }
    fn stats(&self) -> PacerStats {
        // The limit that binds first is the one reported: bytes if set.
        let limit = self
            .limit_bytes
            .map(|b| b as f64)
            .or(self.limit_sdus.map(f64::from));
        PacerStats {
            bandwidth_bps: self.rate.get(),
            allowance_bytes: limit.unwrap_or(0.0),
            limit,
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::testing::FakeLink;

    fn lower(bytes: u64, sdus: u32) -> LowerState {
        LowerState { bytes, sdus }
    }

    #[test]
    fn byte_limit_admits_up_to_and_including_the_limit() {
        let mut p = StaticConfig {
            limit_bytes: Some(ByteSize(4500)),
            limit_sdus: None,
        }
        .build()
        .unwrap();
        let t = Instant::ZERO;
        assert!(p.admits(1500, t, &lower(3000, 2)));
        assert!(!p.admits(1500, t, &lower(3001, 3)));
        assert!(p.admits(1499, t, &lower(3001, 3)));
        assert_eq!(p.stats().refused, 1);
        assert_eq!(p.stats().limit, Some(4500.0));
    }

    #[test]
    fn sdu_limit_counts_sdus_not_bytes() {
        // Kumar Fig. 2: static RLC limits of 16..96 SDUs.
        let mut p = StaticConfig {
            limit_bytes: None,
            limit_sdus: Some(16),
        }
        .build()
        .unwrap();
        let t = Instant::ZERO;
        assert!(p.admits(1500, t, &lower(15 * 1500, 15)));
        assert!(!p.admits(40, t, &lower(16 * 40, 16)));
    }

    #[test]
    fn both_limits_must_hold() {
        let mut p = StaticConfig {
            limit_bytes: Some(ByteSize(10_000)),
            limit_sdus: Some(4),
        }
        .build()
        .unwrap();
        let t = Instant::ZERO;
        assert!(!p.admits(100, t, &lower(400, 4)));
        assert!(!p.admits(1500, t, &lower(9000, 3)));
        assert!(p.admits(1000, t, &lower(9000, 3)));
    }

    #[test]
    fn an_empty_buffer_takes_even_an_oversized_packet() {
        let mut p = StaticConfig {
            limit_bytes: Some(ByteSize(1000)),
            limit_sdus: None,
        }
        .build()
        .unwrap();
        assert!(p.admits(1500, Instant::ZERO, &lower(0, 0)));
        assert!(!p.admits(1500, Instant::ZERO, &lower(100, 1)));
    }

    #[test]
    fn constant_capacity_keeps_the_buffer_bounded_and_the_mac_fed() {
        for capacity in [3000, 7700] {
            let mut p = StaticConfig {
                limit_bytes: Some(ByteSize(2 * capacity)),
                limit_sdus: None,
            }
            .build()
            .unwrap();
            let mut link = FakeLink::new(capacity);
            link.run(&mut p, 2000);
            link.assert_steady(2 * capacity, 0.0);
        }
    }
}
