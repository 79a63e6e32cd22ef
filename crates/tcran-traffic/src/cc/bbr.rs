//! BBR v1 (Cardwell et al., ACM Queue 2016; Linux `net/ipv4/tcp_bbr.c`;
//! algorithms.md §3.3).
//!
//! Model: BtlBw = max delivery rate over the last 10 packet-timed rounds,
//! RTprop = min RTT over 10 s, BDP = BtlBw·RTprop. Outputs: pacing rate =
//! pacing_gain·BtlBw·0.99 and cwnd = cwnd_gain·BDP + 3 TSO quanta (+2
//! segments in the 1.25 phase, rounded up to an even segment count), at
//! least 4 segments.
//!
//! | state | pacing gain | cwnd gain | leaves when |
//! |---|---|---|---|
//! | STARTUP | 2/ln 2 = 2.885 | 2.885 | BtlBw grew < 25 % for 3 non-app-limited rounds |
//! | DRAIN | 1/2.885 | 2.885 | inflight ≤ BDP |
//! | PROBE_BW | [1.25, 0.75, 1, 1, 1, 1, 1, 1] | 2 | (cycle) |
//! | PROBE_RTT | 1 | cwnd ≤ 4 segments | 200 ms and one round after inflight ≤ 4 |
//!
//! The PROBE_BW start phase is drawn from the flow's RNG stream like Linux
//! (`cycle_idx = 7 − U{0..6}`, then advanced once, so never the 0.75 phase).
//! Loss: packet conservation for one round after entering recovery, then
//! normal growth; the pre-recovery cwnd is restored when recovery ends.
//! Not modelled: the long-term (policer) bandwidth mode, the ACK-aggregation
//! cwnd allowance and idle restart; BBR v1 ignores ECN.

use super::{AckEvent, CcState, CongestionControl, CongestionEvent};
use tcran_core::rng::RngStream;
use tcran_core::{Duration, Instant};

/// 2/ln 2, STARTUP gain.
pub const HIGH_GAIN: f64 = 2.885;
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
pub const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Rounds of the max-bandwidth filter (`bbr_bw_rtts`).
const BW_WINDOW_ROUNDS: usize = 10;
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// Minimum cwnd and PROBE_RTT cwnd, segments.
pub const MIN_PIPE_SEGMENTS: u64 = 4;
const PACING_MARGIN: f64 = 0.99;
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_COUNT: u32 = 3;
const INITIAL_WINDOW_SEGMENTS: u64 = 10;

/// BBR state-machine mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BbrMode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Debug, Clone)]
pub struct Bbr {
    rng: RngStream,
    mode: BbrMode,
    pacing_gain: f64,
    cwnd_gain: f64,
    bw_ring: [(u64, f64); BW_WINDOW_ROUNDS],
    round_count: u64,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    packet_conservation: bool,
    in_recovery: bool,
    cycle_idx: usize,
    cycle_stamp: Instant,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    pacing_rate: Option<f64>,
}

impl Bbr {
    pub fn new(rng: RngStream) -> Bbr {
        Bbr {
            rng,
            mode: BbrMode::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw_ring: [(0, 0.0); BW_WINDOW_ROUNDS],
            round_count: 0,
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            packet_conservation: false,
            in_recovery: false,
            cycle_idx: 0,
            cycle_stamp: Instant::ZERO,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            pacing_rate: None,
        }
    }
    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }
    /// Windowed max delivery rate, payload bytes/s.
    pub fn max_bw(&self) -> f64 {
        self.bw_ring
            .iter()
            .filter(|(r, _)| r + BW_WINDOW_ROUNDS as u64 > self.round_count)
            .map(|(_, bw)| *bw)
            .fold(0.0, f64::max)
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    fn tso_segs(&self, mss: u64) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0.0);
        let min = if rate * 8.0 < 1.2e6 { 1 } else { 2 };
        ((rate / 1024.0) as u64 / mss).max(min)
    }

    /// `bbr_bdp` + `bbr_quantization_budget`, bytes.
    fn inflight(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        let bdp = match self.min_rtt {
            None => INITIAL_WINDOW_SEGMENTS * mss,
            Some(rtt) => (bw * rtt.as_secs_f64() * gain).ceil() as u64,
        };
        let mut segs = bdp.div_ceil(mss) + 3 * self.tso_segs(mss);
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            segs += 2;
        }
        segs = (segs + 1) & !1;
        segs * mss
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        self.prior_cwnd = if !self.in_recovery && self.mode != BbrMode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE.len();
        self.cycle_stamp = now;
    }

    fn reset_probe_bw(&mut self, now: Instant) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx =
            CYCLE.len() - 1 - (self.rng.next_u64() % (CYCLE.len() as u64 - 1)) as usize;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Instant) {
        if self.full_bw_reached {
            self.reset_probe_bw(now);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn is_next_cycle_phase(&self, ack: &AckEvent, mss: u64) -> bool {
        let min_rtt = self.min_rtt.unwrap_or(Duration::ZERO);
        let full_length = ack.now.saturating_since(self.cycle_stamp) > min_rtt;
        let gain = CYCLE[self.cycle_idx];
        if gain == 1.0 {
            return full_length;
        }
        let bw = self.max_bw();
        if gain > 1.0 {
            full_length
                && (ack.newly_lost > 0 || ack.prior_inflight >= self.inflight(bw, gain, mss))
        } else {
            full_length || ack.prior_inflight <= self.inflight(bw, 1.0, mss)
        }
    }

    fn update_bw(&mut self, ack: &AckEvent) {
        if ack.round_start {
            self.round_count += 1;
            self.packet_conservation = false;
        }
        let Some(rs) = ack.rate else { return };
        let Some(bw) = rs.rate(ack.min_rtt) else {
            return;
        };
        if !rs.is_app_limited || bw >= self.max_bw() {
            let slot = &mut self.bw_ring[(self.round_count as usize) % BW_WINDOW_ROUNDS];
            if slot.0 != self.round_count {
                *slot = (self.round_count, bw);
            } else {
                slot.1 = slot.1.max(bw);
            }
        }
    }

    fn check_full_bw_reached(&mut self, ack: &AckEvent) {
        if self.full_bw_reached || !ack.round_start || ack.rate.is_none_or(|r| r.is_app_limited) {
            return;
        }
        let bw = self.max_bw();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_COUNT;
    }

    fn update_min_rtt(&mut self, s: &mut CcState, ack: &AckEvent) {
        let expired = ack.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = ack.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = ack.now;
            }
        }
        if expired && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(s.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            match self.probe_rtt_done {
                None => {
                    if ack.inflight <= MIN_PIPE_SEGMENTS * s.mss {
                        self.probe_rtt_done = Some(ack.now + PROBE_RTT_DURATION);
                        self.probe_rtt_round_done = false;
                    }
                }
                Some(done) => {
                    if ack.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && ack.now >= done {
                        self.min_rtt_stamp = ack.now;
                        s.cwnd = s.cwnd.max(self.prior_cwnd);
                        self.reset_mode(ack.now);
                    }
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => (CYCLE[self.cycle_idx], 2.0),
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn set_pacing_rate(&mut self, s: &CcState, ack: &AckEvent) {
        let bw = self.max_bw();
        if bw <= 0.0 {
            // No bandwidth sample yet: high_gain · cwnd / RTT (1 ms before
            // the first RTT sample), `bbr_init_pacing_rate_from_rtt`.
            let rtt = ack.srtt.unwrap_or(Duration::from_millis(1)).as_secs_f64();
            self.pacing_rate = Some(HIGH_GAIN * s.cwnd as f64 / rtt);
            return;
        }
        let rate = self.pacing_gain * bw * PACING_MARGIN;
        if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    fn set_cwnd(&mut self, s: &mut CcState, ack: &AckEvent) {
        let mss = s.mss;
        if ack.acked > 0 {
            if self.packet_conservation {
                s.cwnd = s.cwnd.max(ack.inflight + ack.acked);
            } else {
                let target = self.inflight(self.max_bw(), self.cwnd_gain, mss);
                if self.full_bw_reached {
                    s.cwnd = (s.cwnd + ack.acked).min(target);
                } else if s.cwnd < target || ack.delivered < INITIAL_WINDOW_SEGMENTS * mss {
                    s.cwnd += ack.acked;
                }
                s.cwnd = s.cwnd.max(MIN_PIPE_SEGMENTS * mss);
            }
        }
        if self.mode == BbrMode::ProbeRtt {
            s.cwnd = s.cwnd.min(MIN_PIPE_SEGMENTS * mss);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn on_ack(&mut self, s: &mut CcState, ack: &AckEvent) {
        self.update_bw(ack);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(ack, s.mss) {
            self.advance_cycle_phase(ack.now);
        }
        self.check_full_bw_reached(ack);
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            s.ssthresh = self.inflight(self.max_bw(), 1.0, s.mss);
        }
        if self.mode == BbrMode::Drain && ack.inflight <= self.inflight(self.max_bw(), 1.0, s.mss) {
            self.reset_probe_bw(ack.now);
        }
        self.update_min_rtt(s, ack);
        self.update_gains();
        self.set_pacing_rate(s, ack);
        self.set_cwnd(s, ack);
    }
    fn on_congestion_event(&mut self, s: &mut CcState, ev: CongestionEvent, _now: Instant) {
        // BBR v1 does not react to ECN.
        let CongestionEvent::Loss { inflight, .. } = ev else {
            return;
        };
        self.save_cwnd(s.cwnd);
        self.in_recovery = true;
        self.packet_conservation = true;
        s.cwnd = inflight.max(s.mss);
    }
    fn on_rto(&mut self, s: &mut CcState, _flight: u64, _now: Instant) {
        self.save_cwnd(s.cwnd);
        self.in_recovery = true;
        self.full_bw = 0.0;
        s.cwnd = s.mss;
    }
    fn on_recovery_exit(&mut self, s: &mut CcState, _now: Instant) {
        self.in_recovery = false;
        self.packet_conservation = false;
        s.cwnd = s.cwnd.max(self.prior_cwnd);
    }
    fn pacing_rate(&self, _s: &CcState, _srtt: Option<Duration>) -> Option<f64> {
        self.pacing_rate
    }
}
