//! Retransmission timer computation, RFC 6298 §2–§5.
//!
//! - First sample R: SRTT = R, RTTVAR = R/2.
//! - Later samples: RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R| (with the *old*
//!   SRTT), then SRTT = 7/8·SRTT + 1/8·R.
//! - RTO = SRTT + max(G, 4·RTTVAR), clamped to `[min_rto, max_rto]`. The
//!   clock granularity G is 1 ns here (virtual time), so it never matters.
//! - Before any sample RTO = `initial_rto` (1 s, §2.1).
//! - Each expiry doubles the timer (§5.5, "back off"); the back-off is kept
//!   until a new valid sample arrives (Karn: samples come only from segments
//!   that were not retransmitted).
//!
//! `min_rto` defaults to Linux's 200 ms (`TCP_RTO_MIN`) rather than the RFC's
//! 1 s, because the simulated servers are Linux; `max_rto` to 60 s (RFC
//! 6298 §2.5 allows any maximum of at least 60 s).

use tcran_core::{Duration, Instant};

/// SRTT / RTTVAR / RTO state of one connection plus the minimum RTT seen.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    latest: Option<Duration>,
    min_rtt: Option<Duration>,
    backoff_exponent: u32,
    min_rto: Duration,
    max_rto: Duration,
    initial_rto: Duration,
}

impl RttEstimator {
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            latest: None,
            min_rtt: None,
            backoff_exponent: 0,
            min_rto,
            max_rto,
            initial_rto,
        }
    }

    /// Feeds one RTT measurement `r` and clears the back-off.
    pub fn on_sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration::from_nanos(r.as_nanos() / 2);
            }
            Some(srtt) => {
                let diff = srtt.as_nanos().abs_diff(r.as_nanos());
                // Integer arithmetic with the RFC's 1/4 and 1/8 gains.
                self.rttvar = Duration::from_nanos((3 * self.rttvar.as_nanos() + diff) / 4);
                self.srtt = Some(Duration::from_nanos(
                    (7 * srtt.as_nanos() + r.as_nanos()) / 8,
                ));
            }
        }
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.backoff_exponent = 0;
    }

    /// RFC 6298 §5.5: the timer doubles on each expiry.
    pub fn on_timeout(&mut self) {
        self.backoff_exponent = (self.backoff_exponent + 1).min(30);
    }

    /// The un-backed-off RTO, `SRTT + max(G, 4·RTTVAR)` clamped to range.
    pub fn base_rto(&self) -> Duration {
        match self.srtt {
            None => self.initial_rto,
            Some(srtt) => {
                let var4 =
                    Duration::from_nanos(4 * self.rttvar.as_nanos()).max(Duration::from_nanos(1));
                (srtt + var4).max(self.min_rto).min(self.max_rto)
            }
        }
    }

    /// The RTO to arm now, including exponential back-off (capped at `max_rto`).
    pub fn rto(&self) -> Duration {
        let base = self.base_rto().as_nanos();
        let backed = base.saturating_mul(1u64 << self.backoff_exponent);
        Duration::from_nanos(backed).min(self.max_rto.max(self.base_rto()))
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    pub fn backoff_exponent(&self) -> u32 {
        self.backoff_exponent
    }
    /// When an RTO armed at `armed_at` fires.
    pub fn deadline(&self, armed_at: Instant) -> Instant {
        armed_at + self.rto()
    }
}
