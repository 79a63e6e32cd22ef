//! CUBIC, RFC 9438 (algorithms.md §3.2). Windows in segments, time in seconds.
//!
//! - W_cubic(t) = C·(t − K)³ + W_max, K = ∛((W_max − cwnd_epoch)/C)
//!   (§4.2, eq. 1–2), C = 0.4, β_cubic = 0.7. `t` runs from the first
//!   congestion-avoidance ACK after a reduction (the epoch start); the target
//!   is evaluated at `t + RTT` (§4.2; RTT = minimum RTT, as Linux `delay_min`).
//! - Reno-friendly region (§4.3): W_est starts at cwnd_epoch and grows by
//!   α_cubic·(segments ACKed)/cwnd with α_cubic = 3(1 − β)/(1 + β), switching
//!   to 1 once W_est ≥ cwnd_prior; if W_cubic(t) < W_est, cwnd = W_est.
//! - Concave / convex regions (§4.4–4.5): target = clamp(W_cubic(t + RTT),
//!   cwnd, 1.5·cwnd); cwnd += (target − cwnd)/cwnd per segment ACKed.
//! - Congestion event (§4.6–4.7): ssthresh = max(cwnd·β, 2 MSS) (Linux and
//!   ns-3 use cwnd where the RFC writes flight size; identical while the
//!   flow is cwnd-limited), cwnd = ssthresh, W_max = cwnd with fast
//!   convergence: if cwnd < the previous W_max, W_max = cwnd·(1 + β)/2.
//! - Timeout (§4.8): as a congestion event, but cwnd = 1 MSS and a fresh
//!   slow start (W_max forgotten).
//! - Growth before the first loss (Linux, not in RFC 9438): while no
//!   congestion event has happened (Linux `last_max_cwnd == 0`, again after
//!   a timeout, which resets CUBIC), `bictcp_update` caps `ca->cnt` (ACKed
//!   segments per +1 segment of cwnd) at 20: "the initial growth of cubic
//!   function may be too conservative when the available bandwidth is still
//!   unknown", so cwnd grows by at least 1/20 segment per segment ACKed, 5 %
//!   per RTT (`tcp = { cubic_loss_free_growth = 0.05 }`; 0 = RFC 9438 alone).
//!   After HyStart leaves slow start early, this is what fills a deep
//!   buffer: with the queue's delay growing with cwnd, 5 % per RTT is a
//!   constant 1/20 of the bottleneck rate per second.
//! - Slow start: Reno byte counting with Linux HyStart *delay detection*
//!   (`tcp_cubic.c` `hystart_update`, algorithms.md §3.2): in each round take
//!   the minimum of the first 8 RTT samples; if cwnd ≥ 16 segments and it
//!   exceeds delay_min + clamp(delay_min/8, 4 ms, 16 ms), leave slow start
//!   (ssthresh = cwnd). The ACK-train heuristic is not modelled: it depends
//!   on ACK spacing at µs scale, which a packet-level model of a RAN does not
//!   reproduce meaningfully.

use super::{slow_start, AckEvent, CcState, CongestionControl, CongestionEvent};
use tcran_core::{Duration, Instant};

/// RFC 9438 §5 C.
pub const C: f64 = 0.4;
/// RFC 9438 §4.6 β_cubic.
pub const BETA: f64 = 0.7;
/// HyStart: window (segments) below which delay detection is off.
const HYSTART_LOW_WINDOW: f64 = 16.0;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// Linux `bictcp_update`: `ca->cnt` at most 20 while `last_max_cwnd == 0`.
pub const LINUX_LOSS_FREE_GROWTH: f64 = 1.0 / 20.0;

/// K = ∛((W_max − cwnd_epoch)/C), 0 when cwnd_epoch ≥ W_max (RFC 9438 eq. 2).
pub fn cubic_k(w_max: f64, cwnd_epoch: f64) -> f64 {
    if cwnd_epoch >= w_max {
        0.0
    } else {
        ((w_max - cwnd_epoch) / C).cbrt()
    }
}

/// W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 eq. 1).
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

#[derive(Debug, Clone)]
pub struct Cubic {
    hystart: bool,
    /// Least growth per RTT (fraction of cwnd) before the first congestion
    /// event (Linux: 1/20, `ca->cnt <= 20` while `last_max_cwnd == 0`).
    loss_free_growth: f64,
    /// A congestion event has happened since the start or the last timeout
    /// (Linux `last_max_cwnd != 0`).
    loss_seen: bool,
    fast_convergence: bool,
    w_max: f64,
    cwnd_prior: f64,
    k: f64,
    epoch_start: Option<Instant>,
    cwnd_epoch: f64,
    w_est: f64,
    /// Sub-byte remainder of the cwnd increments.
    frac: f64,
    // HyStart delay detection.
    delay_min: Option<Duration>,
    round_min_rtt: Option<Duration>,
    round_samples: u32,
}

impl Cubic {
    /// CUBIC as Linux runs it: with HyStart if `hystart`, and 5 % growth
    /// per RTT at least before the first loss ([`Cubic::loss_free_growth`]).
    pub fn new(hystart: bool) -> Cubic {
        Cubic {
            hystart,
            loss_free_growth: LINUX_LOSS_FREE_GROWTH,
            loss_seen: false,
            fast_convergence: true,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch_start: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            frac: 0.0,
            delay_min: None,
            round_min_rtt: None,
            round_samples: 0,
        }
    }
    /// Sets the least growth per RTT before the first congestion event
    /// (fraction of cwnd; Linux 0.05, 0 = RFC 9438 only).
    pub fn loss_free_growth(mut self, fraction: f64) -> Cubic {
        self.loss_free_growth = fraction;
        self
    }
    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    pub fn k(&self) -> f64 {
        self.k
    }
    pub fn epoch_start(&self) -> Option<Instant> {
        self.epoch_start
    }

    fn hystart_update(&mut self, s: &mut CcState, ack: &AckEvent) {
        if ack.round_start {
            self.round_min_rtt = None;
            self.round_samples = 0;
        }
        let Some(rtt) = ack.rtt else { return };
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
        if self.round_samples < HYSTART_MIN_SAMPLES {
            self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |d| d.min(rtt)));
            self.round_samples += 1;
        }
        if self.round_samples >= HYSTART_MIN_SAMPLES && s.cwnd_segments() >= HYSTART_LOW_WINDOW {
            let (Some(dmin), Some(cur)) = (self.delay_min, self.round_min_rtt) else {
                return;
            };
            let eta = Duration::from_nanos(dmin.as_nanos() / 8)
                .max(HYSTART_DELAY_MIN)
                .min(HYSTART_DELAY_MAX);
            if cur > dmin + eta {
                s.ssthresh = s.cwnd;
            }
        }
    }

    fn add_bytes(&mut self, s: &mut CcState, delta: f64) {
        let total = s.cwnd as f64 + self.frac + delta.max(0.0);
        s.cwnd = total.floor() as u64;
        self.frac = total - total.floor();
    }

    fn congestion_avoidance(&mut self, s: &mut CcState, ack: &AckEvent, acked: u64) {
        let mss = s.mss as f64;
        let w = s.cwnd as f64 / mss;
        let epoch_start = match self.epoch_start {
            Some(t) => t,
            None => {
                self.cwnd_epoch = w;
                if w >= self.w_max {
                    self.w_max = w;
                }
                self.k = cubic_k(self.w_max, w);
                self.w_est = w;
                self.epoch_start = Some(ack.now);
                ack.now
            }
        };
        let rtt = ack.min_rtt.unwrap_or(Duration::ZERO).as_secs_f64();
        let t = ack.now.saturating_since(epoch_start).as_secs_f64();
        let segs = acked as f64 / mss;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * segs / w;
        let delta = if w_cubic(t, self.k, self.w_max) < self.w_est {
            // Reno-friendly region: at least as fast as Reno would be.
            self.w_est * mss - (s.cwnd as f64 + self.frac)
        } else {
            let target = w_cubic(t + rtt, self.k, self.w_max).clamp(w, 1.5 * w);
            (target - w) / w * segs * mss
        };
        // Linux: ca->cnt = min(cnt, 20) before the first loss, applied
        // before the TCP-friendly cap, so the larger increase wins.
        let floor = if self.loss_seen {
            0.0
        } else {
            self.loss_free_growth * segs * mss
        };
        self.add_bytes(s, delta.max(floor));
    }

    fn reduce(&mut self, s: &mut CcState) {
        self.loss_seen = true;
        let w = s.cwnd_segments();
        self.w_max = if self.fast_convergence && w < self.w_max {
            w * (1.0 + BETA) / 2.0
        } else {
            w
        };
        self.cwnd_prior = w;
        self.epoch_start = None;
        self.frac = 0.0;
        s.ssthresh = ((s.cwnd as f64 * BETA) as u64).max(2 * s.mss);
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn on_ack(&mut self, s: &mut CcState, ack: &AckEvent) {
        if ack.in_reduction || !ack.is_cwnd_limited || ack.acked == 0 {
            return;
        }
        let mut acked = ack.acked;
        if s.in_slow_start() {
            if self.hystart {
                self.hystart_update(s, ack);
            }
            acked = slow_start(s, acked);
        }
        if acked > 0 && !s.in_slow_start() {
            self.congestion_avoidance(s, ack, acked);
        }
    }
    fn on_congestion_event(&mut self, s: &mut CcState, _ev: CongestionEvent, _now: Instant) {
        self.reduce(s);
        s.cwnd = s.ssthresh;
    }
    fn on_rto(&mut self, s: &mut CcState, _flight: u64, _now: Instant) {
        self.reduce(s);
        s.cwnd = s.mss;
        self.w_max = 0.0;
        self.cwnd_prior = 0.0;
        // Linux bictcp_state(TCP_CA_Loss) resets CUBIC: last_max_cwnd = 0.
        self.loss_seen = false;
        self.round_min_rtt = None;
        self.round_samples = 0;
    }
}
