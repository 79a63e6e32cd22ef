//! Policers (TC-RAN stage 2, paper-tc-ran.txt sec. IV-A "Ingress::Policer"):
//! meter the rate entering one queue; out-of-profile packets are dropped,
//! ECN-marked or deviated ("redirected") to another queue.
//!
//! In DiffServ terms (RFC 2475 sec. 2.3.3) a policer is a *meter* followed by
//! a *marker*, *dropper* or (TC-RAN's addition) a re-classifier.
//!
//! ## `kind = "token_bucket"`: a single-rate, two-colour, colour-blind meter
//!
//! RFC 2697 sec. 3 with the excess bucket disabled (EBS = 0), which is also
//! what Linux `act_police` does with only `rate` and `burst`:
//!
//! - a bucket of `burst` bytes fills continuously at `rate`
//!   (`tokens = min(burst, tokens + rate x elapsed)`) and starts full;
//! - a packet of `len` bytes is *in profile* iff `tokens >= len`, and then
//!   `tokens -= len`; otherwise it is out of profile and takes no tokens
//!   (so an out-of-profile burst cannot starve later conforming traffic);
//! - a packet larger than `burst` is never in profile, which is why `burst`
//!   should be at least one MTU (it is only checked to be > 0).
//!
//! Hence the bytes passed in any interval `[t0, t1]` are at most
//! `rate x (t1 - t0) + burst` (a property test checks this).
//!
//! Out of profile, `action` decides (default `"drop"`):
//! - `"drop"`: [`PoliceVerdict::Drop`];
//! - `"mark"`: [`PoliceVerdict::Mark`]: the pipeline sets CE on an
//!   ECN-capable packet and drops a Not-ECT one (RFC 3168 sec. 5), counting
//!   it under the queue's `policer` drops; [`PolicerStats::marked_packets`]
//!   counts the verdicts;
//! - `"redirect"`: [`PoliceVerdict::Redirect`] to `redirect = <queue id>`,
//!   which is required with this action and rejected with the others.
//!
//! Statistics (TC-RAN: "the transmitted rate, and the deviation rate"): the
//! packet and byte counts per outcome, and the in-profile (`measured_bps`)
//! and out-of-profile (`out_of_profile_bps`) rates over the last completed
//! `window` (default 1 s; see [`crate::shaper::bucket::RateMeter`]).

use crate::shaper::bucket::{RateMeter, TokenBucket};
use crate::shaper::{check_bucket, check_rate, check_window, default_window};
use crate::stage::{PoliceVerdict, Policer};
use serde::{Deserialize, Serialize};
use tcran_core::{BitRate, ByteSize, ConfigError, Duration, Instant, QueueId};

/// What happens to an out-of-profile packet.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PolicerAction {
    #[default]
    Drop,
    Mark,
    Redirect,
}

/// A policer, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicerConfig {
    /// Single-rate token bucket meter (RFC 2697 with EBS = 0).
    TokenBucket {
        /// Committed rate, e.g. `"10Mbit/s"`.
        rate: BitRate,
        /// Bucket size (committed burst); at least one MTU recommended.
        burst: ByteSize,
        /// Out-of-profile action. Default `"drop"`.
        #[serde(default)]
        action: PolicerAction,
        /// Target queue; required iff `action = "redirect"`.
        #[serde(default)]
        redirect: Option<QueueId>,
        /// Window of the reported rates. Default 1s.
        #[serde(default = "default_window")]
        window: Duration,
    },
}

impl PolicerConfig {
    /// A token-bucket policer with the given action and a 1 s window.
    pub fn token_bucket(rate: BitRate, burst: ByteSize, action: PolicerAction) -> PolicerConfig {
        PolicerConfig::TokenBucket {
            rate,
            burst,
            action,
            redirect: None,
            window: default_window(),
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            PolicerConfig::TokenBucket { .. } => "token_bucket",
        }
    }

    /// Validates and builds. Errors name the field (`rate`, `burst`,
    /// `redirect`, `window`). Whether the redirect target exists is checked
    /// by the pipeline, which knows the queues.
    pub fn build(&self) -> Result<AnyPolicer, ConfigError> {
        match *self {
            PolicerConfig::TokenBucket {
                rate,
                burst,
                action,
                redirect,
                window,
            } => {
                check_rate("rate", rate)?;
                check_bucket("burst", burst)?;
                let window = check_window(window)?;
                let out = match (action, redirect) {
                    (PolicerAction::Drop, None) => PoliceVerdict::Drop,
                    (PolicerAction::Mark, None) => PoliceVerdict::Mark,
                    (PolicerAction::Redirect, Some(q)) => PoliceVerdict::Redirect(q),
                    (PolicerAction::Redirect, None) => {
                        return Err(ConfigError::new(
                            "redirect",
                            "(missing)",
                            "a queue id is required with action = \"redirect\"",
                        ))
                    }
                    (a, Some(q)) => {
                        return Err(ConfigError::new(
                            "redirect",
                            q.0,
                            format!(
                                "is only used with action = \"redirect\" (action is {:?})",
                                format!("{a:?}").to_lowercase()
                            ),
                        ))
                    }
                };
                Ok(AnyPolicer::TokenBucket(TokenBucketPolicer {
                    bucket: TokenBucket::new(rate, burst),
                    out_of_profile: out,
                    in_meter: RateMeter::new(window),
                    out_meter: RateMeter::new(window),
                    stats: PolicerStats {
                        rate_bps: rate.bps(),
                        burst_bytes: burst.bytes(),
                        ..PolicerStats::default()
                    },
                    last_event: Instant::ZERO,
                }))
            }
        }
    }

    /// The queue out-of-profile packets are deviated to, if the action is
    /// `"redirect"`.
    pub fn redirect_target(&self) -> Option<QueueId> {
        match self {
            PolicerConfig::TokenBucket {
                action: PolicerAction::Redirect,
                redirect,
                ..
            } => *redirect,
            PolicerConfig::TokenBucket { .. } => None,
        }
    }
}

/// Policer statistics (TC-RAN sec. IV-A: transmitted and deviation rates).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PolicerStats {
    /// Configured rate.
    pub rate_bps: u64,
    pub burst_bytes: u64,
    /// Tokens in the bucket, bytes.
    pub tokens_bytes: f64,
    /// In profile.
    pub passed_packets: u64,
    pub passed_bytes: u64,
    /// Out of profile, action drop.
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    /// Out of profile, action mark (verdicts; the pipeline drops Not-ECT ones).
    pub marked_packets: u64,
    pub marked_bytes: u64,
    /// Out of profile, action redirect.
    pub redirected_packets: u64,
    pub redirected_bytes: u64,
    /// In-profile rate over the last completed window.
    pub measured_bps: f64,
    /// Out-of-profile rate over the last completed window.
    pub out_of_profile_bps: f64,
}

/// The built-in policers plus a plug-in escape hatch.
// The built-in variant is stored inline on purpose: one per queue, touched
// on every push, so a Box would cost a pointer chase per packet for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AnyPolicer {
    TokenBucket(TokenBucketPolicer),
    Custom(Box<dyn Policer>),
}

impl AnyPolicer {
    /// Statistics as of the last packet.
    pub fn stats(&self) -> PolicerStats {
        match self {
            AnyPolicer::TokenBucket(p) => p.stats_at(p.last_event),
            AnyPolicer::Custom(_) => PolicerStats::default(),
        }
    }

    /// Statistics as of `now` (rate windows and tokens brought up to date).
    pub fn stats_at(&self, now: Instant) -> PolicerStats {
        match self {
            AnyPolicer::TokenBucket(p) => p.stats_at(now),
            AnyPolicer::Custom(_) => PolicerStats::default(),
        }
    }
}

impl Policer for AnyPolicer {
    #[inline]
    fn police(&mut self, len: u32, now: Instant) -> PoliceVerdict {
        match self {
            AnyPolicer::TokenBucket(p) => p.police(len, now),
            AnyPolicer::Custom(p) => p.police(len, now),
        }
    }
}

/// Token-bucket meter with a fixed out-of-profile verdict.
#[derive(Debug, Clone)]
pub struct TokenBucketPolicer {
    bucket: TokenBucket,
    out_of_profile: PoliceVerdict,
    in_meter: RateMeter,
    out_meter: RateMeter,
    /// Counters; the rate and token fields are filled in by `stats_at`.
    stats: PolicerStats,
    last_event: Instant,
}

impl TokenBucketPolicer {
    pub fn stats_at(&self, now: Instant) -> PolicerStats {
        PolicerStats {
            tokens_bytes: self.bucket.tokens_bytes_at(now),
            measured_bps: self.in_meter.rate_bps_at(now),
            out_of_profile_bps: self.out_meter.rate_bps_at(now),
            ..self.stats.clone()
        }
    }
}

impl Policer for TokenBucketPolicer {
    #[inline]
    fn police(&mut self, len: u32, now: Instant) -> PoliceVerdict {
        self.last_event = self.last_event.max(now);
        let bytes = len as u64;
        if self.bucket.try_take(len, now) {
            self.stats.passed_packets += 1;
            self.stats.passed_bytes += bytes;
            self.in_meter.record(bytes, now);
            return PoliceVerdict::Pass;
        }
        self.out_meter.record(bytes, now);
        let s = &mut self.stats;
        match self.out_of_profile {
            PoliceVerdict::Drop => {
                s.dropped_packets += 1;
                s.dropped_bytes += bytes;
            }
            PoliceVerdict::Mark => {
                s.marked_packets += 1;
                s.marked_bytes += bytes;
            }
            PoliceVerdict::Redirect(_) => {
                s.redirected_packets += 1;
                s.redirected_bytes += bytes;
            }
            PoliceVerdict::Pass => {}
        }
        self.out_of_profile
    }
}

#[cfg(test)]
mod tests;
