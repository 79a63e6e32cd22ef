//! NewReno window rules: RFC 5681 §3.1 with Linux Reno byte counting
//! (algorithms.md §3.1 and the §2.10 `tcp-linux-reno-test` oracle).
//!
//! - Slow start: cwnd += bytes ACKed, capped at ssthresh (no RFC 3465 L
//!   limit, as Linux); the remainder carries into congestion avoidance.
//! - Congestion avoidance: +1 MSS per cwnd of ACKed bytes (1 MSS per RTT).
//! - Loss: ssthresh = max(FlightSize/2, 2·MSS) (RFC 5681 eq. 4), cwnd =
//!   ssthresh (the engine does RFC 6675 pipe-based recovery, so there is no
//!   window inflation; see [`crate::tcp`]).
//! - ECE (RFC 3168 §6.1.2): the same reduction, at most once per window.
//! - RTO: ssthresh as for loss, cwnd = 1 MSS (loss window).
//! - No growth while the window is not the limit (RFC 7661, Linux
//!   `tcp_is_cwnd_limited`) and none during recovery/CWR.

use super::{
    reno_additive_increase, slow_start, AckEvent, CcState, CongestionControl, CongestionEvent,
};
use tcran_core::Instant;

#[derive(Debug, Clone, Default)]
pub struct NewReno {
    /// Bytes ACKed in congestion avoidance not yet turned into cwnd.
    ca_acc: u64,
}

/// RFC 5681 eq. 4.
pub fn reno_ssthresh(flight: u64, mss: u64) -> u64 {
    (flight / 2).max(2 * mss)
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn on_ack(&mut self, s: &mut CcState, ack: &AckEvent) {
        if ack.in_reduction || !ack.is_cwnd_limited || ack.acked == 0 {
            return;
        }
        let mut acked = ack.acked;
        if s.in_slow_start() {
            acked = slow_start(s, acked);
        }
        if acked > 0 && !s.in_slow_start() {
            reno_additive_increase(s, &mut self.ca_acc, acked);
        }
    }
    fn on_congestion_event(&mut self, s: &mut CcState, ev: CongestionEvent, _now: Instant) {
        let (CongestionEvent::Loss { flight, .. } | CongestionEvent::Ece { flight, .. }) = ev;
        s.ssthresh = reno_ssthresh(flight, s.mss);
        s.cwnd = s.ssthresh;
        self.ca_acc = 0;
    }
    fn on_rto(&mut self, s: &mut CcState, flight: u64, _now: Instant) {
        s.ssthresh = reno_ssthresh(flight, s.mss);
        s.cwnd = s.mss;
        self.ca_acc = 0;
    }
}
