//! Shapers (TC-RAN stage 5, paper-tc-ran.txt sec. IV-A "Egress::Shaper"):
//! limit the rate leaving one queue by *delaying* its head packet; a shaper
//! never drops.
//!
//! ## `kind = "token_bucket"`: Linux TBF / ns-3 `TbfQueueDisc` semantics
//!
//! (algorithms.md sec. 1.9.) A main bucket of `burst` bytes fills at `rate`;
//! an optional peak bucket of `mtu` bytes fills at `peak_rate`. Both start
//! full. With `len` the head packet's size:
//!
//! - [`Shaper::admits`]`(len, now)` is true iff the tokens of *both* buckets,
//!   refilled to `now`, are `>= len`. (A packet larger than a bucket waits
//!   until that bucket is full instead; see "bound" below.)
//! - [`Shaper::on_sent`]`(len, now)` takes `len` bytes from both buckets.
//! - [`Shaper::ready_at`]`(len, now)` is the earliest time `admits` turns
//!   true if nothing else is sent: `now + max(deficit_main / rate,
//!   deficit_peak / peak_rate)`, ceiled to the nanosecond, exactly ns-3's
//!   wake-up rule `max(-btoks/rate, -ptoks/peak)`.
//!
//! Bound (checked by a property test): over any interval `[t0, t1]`, the
//! bytes sent are at most `rate * (t1 - t0) + max(burst, L)`, where `L` is the
//! largest packet sent; with the peak bucket also at most
//! `peak_rate * (t1 - t0) + max(mtu, L)`. For packets no larger than the
//! buckets this is the classic `rate * T + burst` (no "one extra packet":
//! a packet must find `len` tokens, not merely a positive count). A packet
//! larger than a bucket is the exception: dropping it is not a shaper's
//! business and blocking it would stall the queue forever, so it leaves
//! once that bucket is full and puts the bucket in debt by `len - size`.
//!
//! ## Defaults
//!
//! - `burst`: `max(1500 B, rate x 10 ms)`. tc-tbf(8) requires the bucket to
//!   hold at least one timer tick of tokens (`rate / HZ`, HZ = 100 -> 10 ms);
//!   otherwise a shaper that is only asked once per slot/TTI loses the tokens
//!   that overflow a too-small bucket and delivers less than `rate`. One MTU
//!   is the floor so a full-size packet can go without debt.
//! - `mtu` (peak bucket size): 1500 B, the IP MTU (ns-3: device MTU).
//!   Only meaningful with `peak_rate`, which Linux requires to exceed `rate`.
//! - `window`: 1 s, over which `measured_bps` is reported.

pub mod bucket;

use crate::stage::{Shaper, ShaperStats};
use bucket::{RateMeter, TokenBucket};
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{BitRate, ByteSize, ConfigError, Duration, Instant};

/// Lowest and highest rates accepted (1 bit/s .. 1 Tbit/s).
const MIN_RATE: BitRate = BitRate(1);
const MAX_RATE: BitRate = BitRate(1_000_000_000_000);
/// Largest bucket: same ceiling as a queue's `limit_bytes`.
const MAX_BUCKET: ByteSize = ByteSize(10_000_000_000);
/// One IP MTU.
const MTU: ByteSize = ByteSize(1500);

pub(crate) fn default_window() -> Duration {
    Duration::from_secs(1)
}

pub(crate) fn check_window(window: Duration) -> Result<Duration, ConfigError> {
    check_range(
        "window",
        window,
        Duration::from_millis(1),
        Duration::from_secs(3600),
    )
}

pub(crate) fn check_rate(field: &str, rate: BitRate) -> Result<BitRate, ConfigError> {
    check_range(field, rate, MIN_RATE, MAX_RATE)
}

pub(crate) fn check_bucket(field: &str, size: ByteSize) -> Result<ByteSize, ConfigError> {
    check_range(field, size, ByteSize(1), MAX_BUCKET)
}

/// A shaper, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ShaperConfig {
    /// Token bucket filter (Linux `tbf`), optionally with a peak-rate bucket.
    TokenBucket {
        /// Long-term rate, e.g. `"15Mbit/s"`.
        rate: BitRate,
        /// Main bucket size. Default `max(1500B, rate x 10ms)`: 10 ms at the
        /// rate, and at least one full-size packet.
        #[serde(default)]
        burst: Option<ByteSize>,
        /// Peak rate of the second bucket; must exceed `rate`. Default: none.
        #[serde(default)]
        peak_rate: Option<BitRate>,
        /// Size of the peak bucket. Default 1500B; only with `peak_rate`.
        #[serde(default)]
        mtu: Option<ByteSize>,
        /// Window of the measured rate. Default 1s.
        #[serde(default = "default_window")]
        window: Duration,
    },
}

impl ShaperConfig {
    /// A token-bucket shaper with every optional field at its default.
    pub fn token_bucket(rate: BitRate) -> ShaperConfig {
        ShaperConfig::TokenBucket {
            rate,
            burst: None,
            peak_rate: None,
            mtu: None,
            window: default_window(),
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            ShaperConfig::TokenBucket { .. } => "token_bucket",
        }
    }

    /// Validates and builds. Errors name the field (`rate`, `burst`,
    /// `peak_rate`, `mtu`, `window`).
    pub fn build(&self) -> Result<AnyShaper, ConfigError> {
        match *self {
            ShaperConfig::TokenBucket {
                rate,
                burst,
                peak_rate,
                mtu,
                window,
            } => {
                check_rate("rate", rate)?;
                let burst = match burst {
                    Some(b) => check_bucket("burst", b)?,
                    None => default_burst(rate),
                };
                let peak = match (peak_rate, mtu) {
                    (None, None) => None,
                    (None, Some(m)) => {
                        return Err(ConfigError::new(
                            "mtu",
                            m,
                            "is the peak bucket size and needs peak_rate",
                        ))
                    }
                    (Some(p), m) => {
                        check_rate("peak_rate", p)?;
                        if p <= rate {
                            return Err(ConfigError::new(
                                "peak_rate",
                                p,
                                format!("must be greater than rate ({rate}), as in Linux tbf"),
                            ));
                        }
                        let m = check_bucket("mtu", m.unwrap_or(MTU))?;
                        Some(TokenBucket::new(p, m))
                    }
                };
                let window = check_window(window)?;
                Ok(AnyShaper::TokenBucket(TokenBucketShaper {
                    main: TokenBucket::new(rate, burst),
                    peak,
                    meter: RateMeter::new(window),
                    delayed: 0,
                    last_event: Instant::ZERO,
                }))
            }
        }
    }
}

/// `max(1500 B, rate x 10 ms)`, capped at the largest bucket.
fn default_burst(rate: BitRate) -> ByteSize {
    let ten_ms = rate.bps() / 8 / 100;
    ByteSize(ten_ms.clamp(MTU.bytes(), MAX_BUCKET.bytes()))
}

/// The built-in shapers plus a plug-in escape hatch.
#[derive(Debug)]
pub enum AnyShaper {
    TokenBucket(TokenBucketShaper),
    Custom(Box<dyn Shaper>),
}

impl AnyShaper {
    /// Statistics as of `now` (the rate window and the tokens are brought up
    /// to date; [`Shaper::stats`] reports them as of the last event).
    pub fn stats_at(&self, now: Instant) -> ShaperStats {
        match self {
            AnyShaper::TokenBucket(s) => s.stats_at(now),
            AnyShaper::Custom(s) => s.stats(),
        }
    }
}

impl Shaper for AnyShaper {
    #[inline]
    fn admits(&mut self, len: u32, now: Instant) -> bool {
        match self {
            AnyShaper::TokenBucket(s) => s.admits(len, now),
            AnyShaper::Custom(s) => s.admits(len, now),
        }
    }
    #[inline]
    fn on_sent(&mut self, len: u32, now: Instant) {
        match self {
            AnyShaper::TokenBucket(s) => s.on_sent(len, now),
            AnyShaper::Custom(s) => s.on_sent(len, now),
        }
    }
    fn ready_at(&self, len: u32, now: Instant) -> Instant {
        match self {
            AnyShaper::TokenBucket(s) => s.ready_at(len, now),
            AnyShaper::Custom(s) => s.ready_at(len, now),
        }
    }
    fn stats(&self) -> ShaperStats {
        match self {
            AnyShaper::TokenBucket(s) => s.stats(),
            AnyShaper::Custom(s) => s.stats(),
        }
    }
}

/// Token bucket filter: main bucket plus optional peak bucket.
#[derive(Debug, Clone)]
pub struct TokenBucketShaper {
    main: TokenBucket,
    peak: Option<TokenBucket>,
    meter: RateMeter,
    delayed: u64,
    last_event: Instant,
}

impl TokenBucketShaper {
    /// Main-bucket tokens (bytes) at `now`.
    pub fn tokens_at(&self, now: Instant) -> f64 {
        self.main.tokens_bytes_at(now)
    }

    /// Peak-bucket tokens (bytes) at `now`, if there is a peak bucket.
    pub fn peak_tokens_at(&self, now: Instant) -> Option<f64> {
        self.peak.as_ref().map(|p| p.tokens_bytes_at(now))
    }

    pub fn stats_at(&self, now: Instant) -> ShaperStats {
        ShaperStats {
            rate_bps: self.main.rate().bps(),
            measured_bps: self.meter.rate_bps_at(now),
            tokens_bytes: self.main.tokens_bytes_at(now),
            delayed: self.delayed,
        }
    }
}

impl Shaper for TokenBucketShaper {
    /// Counts every refusal in `delayed` (the pipeline asks again on each
    /// pull, so one packet held for several pulls counts several times).
    #[inline]
    fn admits(&mut self, len: u32, now: Instant) -> bool {
        self.last_event = self.last_event.max(now);
        let ok =
            self.main.can_send(len, now) && self.peak.as_ref().is_none_or(|p| p.can_send(len, now));
        if !ok {
            self.delayed += 1;
        }
        ok
    }

    #[inline]
    fn on_sent(&mut self, len: u32, now: Instant) {
        self.last_event = self.last_event.max(now);
        self.main.consume(len, now);
        if let Some(p) = self.peak.as_mut() {
            p.consume(len, now);
        }
        self.meter.record(len as u64, now);
    }

    fn ready_at(&self, len: u32, now: Instant) -> Instant {
        let main = self.main.time_until_send(len, now);
        let peak = self
            .peak
            .as_ref()
            .map_or(Duration::ZERO, |p| p.time_until_send(len, now));
        now + main.max(peak)
    }

    fn stats(&self) -> ShaperStats {
        self.stats_at(self.last_event)
    }
}

#[cfg(test)]
mod tests;
