//! DCTCP (RFC 8257, algorithms.md §3.5) and TCP Prague (L4S
//! `tcp_prague.c`, draft-briscoe-iccrg-prague-congestion-control,
//! algorithms.md §3.6), which share the α estimator.
//!
//! - The receiver echoes CE per packet (RFC 8257 §3.2; the engine selects
//!   that echo mode through [`CongestionControl::wants_accurate_ecn`]).
//! - Once per window of data (a packet-timed round, RFC 8257 §3.3):
//!   F = bytes ACKed with ECE / bytes ACKed, α ← (1 − g)·α + g·F with
//!   g = 1/16; α starts at 1 (Linux `dctcp_alpha_on_init`). Prague updates α
//!   only once a CE mark has been seen.
//! - On ECE, at most once per window (the engine's CWR period):
//!   cwnd ← max(cwnd·(1 − α/2), 2 MSS), ssthresh = cwnd (RFC 8257 §3.3 step 8).
//! - Loss: Reno halving. Growth: Reno; Prague applies its additive increase
//!   only to bytes ACKed *without* ECE (1 MSS per RTT scaled by 1 − p).
//! - DCTCP marks data ECT(0) (ns-3 `UseEct0` default); Prague ECT(1), the
//!   L4S identifier (RFC 9331).
//! - Prague paces at 100 % of cwnd/SRTT in congestion avoidance and 200 % in
//!   slow start below ssthresh/2 (`tcp_prague.c`); the RTT-independence
//!   mode (`prague_rtt_target` 25 ms) is not modelled.

use super::reno::reno_ssthresh;
use super::{
    reno_additive_increase, slow_start, AckEvent, CcState, CongestionControl, CongestionEvent,
};
use tcran_core::{Duration, Ecn, Instant};

/// EWMA gain g = 1/16 (RFC 8257 §4.2, `PRAGUE_SHIFT_G` 4).
pub const G: f64 = 1.0 / 16.0;

#[derive(Debug, Clone)]
pub struct Dctcp {
    prague: bool,
    alpha: f64,
    window_acked: u64,
    window_ece: u64,
    saw_ce: bool,
    ca_acc: u64,
    /// Sub-byte remainder of Prague's multiplicative decrease.
    frac: f64,
}

impl Dctcp {
    pub fn new_dctcp() -> Dctcp {
        Dctcp {
            prague: false,
            alpha: 1.0,
            window_acked: 0,
            window_ece: 0,
            saw_ce: false,
            ca_acc: 0,
            frac: 0.0,
        }
    }
    pub fn new_prague() -> Dctcp {
        Dctcp {
            prague: true,
            ..Dctcp::new_dctcp()
        }
    }
    /// Current α estimate (fraction of marked bytes, smoothed).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        if self.prague {
            "prague"
        } else {
            "dctcp"
        }
    }
    fn on_ack(&mut self, s: &mut CcState, ack: &AckEvent) {
        self.window_acked += ack.acked;
        self.window_ece += ack.ece_acked;
        if ack.ece_acked > 0 {
            self.saw_ce = true;
        }
        if ack.round_start && self.window_acked > 0 {
            let f = self.window_ece as f64 / self.window_acked as f64;
            if !self.prague || self.saw_ce {
                self.alpha = (1.0 - G) * self.alpha + G * f;
            }
            self.window_acked = 0;
            self.window_ece = 0;
        }
        if ack.in_reduction || !ack.is_cwnd_limited || ack.acked == 0 {
            return;
        }
        let mut acked = ack.acked;
        if s.in_slow_start() {
            acked = slow_start(s, acked);
        }
        if self.prague {
            // Unsaturated additive increase: only unmarked bytes count.
            let unmarked = ack.acked.saturating_sub(ack.ece_acked);
            acked = acked.min(unmarked);
        }
        if acked > 0 && !s.in_slow_start() {
            reno_additive_increase(s, &mut self.ca_acc, acked);
        }
    }
    fn on_congestion_event(&mut self, s: &mut CcState, ev: CongestionEvent, _now: Instant) {
        match ev {
            CongestionEvent::Ece { .. } => {
                self.saw_ce = true;
                let reduced = s.cwnd as f64 * (1.0 - self.alpha / 2.0) + self.frac;
                let floor = reduced.floor();
                self.frac = if self.prague { reduced - floor } else { 0.0 };
                s.cwnd = (floor as u64).max(2 * s.mss);
                s.ssthresh = s.cwnd;
            }
            CongestionEvent::Loss { flight, .. } => {
                s.ssthresh = reno_ssthresh(flight, s.mss);
                s.cwnd = s.ssthresh;
            }
        }
        self.ca_acc = 0;
    }
    fn on_rto(&mut self, s: &mut CcState, flight: u64, _now: Instant) {
        s.ssthresh = reno_ssthresh(flight, s.mss);
        s.cwnd = s.mss;
        self.ca_acc = 0;
    }
    /// `tcp_prague.c` sets `.cong_control = prague_cong_control`; Linux
    /// DCTCP has none.
    fn has_cong_control(&self) -> bool {
        self.prague
    }
    fn pacing_rate(&self, s: &CcState, srtt: Option<Duration>) -> Option<f64> {
        if !self.prague {
            return None;
        }
        let srtt = srtt?.as_secs_f64();
        let factor = if s.cwnd < s.ssthresh / 2 { 2.0 } else { 1.0 };
        Some(factor * s.cwnd as f64 / srtt)
    }
    fn ect(&self) -> Ecn {
        if self.prague {
            Ecn::Ect1
        } else {
            Ecn::Ect0
        }
    }
    fn wants_accurate_ecn(&self) -> bool {
        true
    }
}
