//! BBR v1 (Cardwell et al., ACM Queue 2016; Linux `net/ipv4/tcp_bbr.c`;
//! algorithms.md §3.3).
//!
//! Model: BtlBw = max delivery rate over the last 10 packet-timed rounds,
//! RTprop = min RTT over 10 s, BDP = BtlBw·RTprop. Outputs: pacing rate =
//! pacing_gain·BtlBw·0.99 and cwnd = cwnd_gain·BDP + ACK-aggregation
//! allowance + 3 TSO quanta (+2 segments in the 1.25 phase, rounded up to an
//! even segment count), at least 4 segments.
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
//!
//! ACK aggregation (Linux 5.1 and later, `bbr_update_ack_aggregation`,
//! `bbr_ack_aggregation_cwnd`): on every ACK with a valid rate sample the
//! data ACKed since the start of the current ACK epoch is compared with
//! what BtlBw would have delivered over the epoch (`expected`). The epoch
//! restarts at this ACK when the ACKs fell behind (`acked ≤ expected`), when
//! 2^20 segments would have been ACKed in it, and when the sender starts
//! transmitting again after an application-limited idle period
//! (`CA_EVENT_TX_START`). The excess `acked − expected`, capped at the cwnd,
//! feeds a max filter of two slots of 5 rounds each (so an aggregate is
//! remembered for 5-10 rounds). Once STARTUP has found the full bandwidth,
//! `min(max excess, BtlBw · 100 ms)` (gain 1) is added to the BDP part of
//! the target cwnd before the quantization budget, in every state; it does
//! not apply to the packet-conservation round of recovery (which bypasses
//! the target) and the PROBE_RTT cap of 4 segments still applies on top. It
//! keeps the sender busy through the silences between ACK bursts (Wi-Fi,
//! cellular MACs), at the cost of that much more queue. Units: bytes (Linux
//! counts segments; the allowance is rounded the way Linux's segment counts
//! round: the excess up, the 100 ms cap down).
//!
//! Not modelled: the long-term (policer) bandwidth mode and the rest of idle
//! restart (pacing at 1·BtlBw and no PROBE_RTT entry right after an idle
//! period); BBR v1 ignores ECN.

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
/// Rounds per slot of the two-slot max filter of the ACK-aggregation excess
/// (`bbr_extra_acked_win_rtts`).
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Saturation of the slot's round counter (the 5-bit `extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1f;
/// An ACK epoch restarts before this many segments are ACKed in it
/// (`bbr_ack_epoch_acked_reset_thresh`, the 20-bit `ack_epoch_acked`).
pub const ACK_EPOCH_RESET_SEGMENTS: u64 = 1 << 20;
/// The allowance is at most BtlBw times this (`bbr_extra_acked_max_us`).
pub const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// `bbr_extra_acked_gain` (`BBR_UNIT`, i.e. 1).
const EXTRA_ACKED_GAIN: f64 = 1.0;

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
    /// Max excess ACKed per slot, bytes (`extra_acked[2]`).
    extra_acked: [u64; 2],
    /// Rounds since the current slot was started (`extra_acked_win_rtts`).
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Start of the ACK epoch (`ack_epoch_mstamp`).
    ack_epoch_start: Instant,
    /// Bytes ACKed in the ACK epoch (`ack_epoch_acked`).
    ack_epoch_acked: u64,
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
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            // `bbr_init` starts the epoch with the connection; nothing being
            // ACKed in it, the first valid ACK restarts it either way.
            ack_epoch_start: Instant::ZERO,
            ack_epoch_acked: 0,
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
    /// STARTUP found the full bandwidth (`bbr_full_bw_reached`).
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Max excess data ACKed beyond BtlBw over the last 5-10 rounds, bytes
    /// (`bbr_extra_acked`).
    pub fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }
    /// The cwnd allowance for ACK aggregation, bytes in whole segments
    /// (`bbr_ack_aggregation_cwnd`): 0 before STARTUP found the full
    /// bandwidth, else `min(extra_acked, BtlBw · 100 ms)`. Linux counts
    /// segments: the excess (ACKed segments minus the whole segments
    /// expected) rounds up, the cap (`bw · 100 ms` in segments) down.
    pub fn ack_aggregation_cwnd(&self, mss: u64) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.max_bw() * EXTRA_ACKED_MAX.as_secs_f64()) as u64 / mss;
        let aggr = ((EXTRA_ACKED_GAIN * self.extra_acked() as f64) as u64).div_ceil(mss);
        aggr.min(max_aggr) * mss
    }

    fn tso_segs(&self, mss: u64) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0.0);
        let min = if rate * 8.0 < 1.2e6 { 1 } else { 2 };
        ((rate / 1024.0) as u64 / mss).max(min)
    }

    /// `bbr_bdp`, segments (rounded up).
    fn bdp_segments(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        match self.min_rtt {
            None => INITIAL_WINDOW_SEGMENTS,
            Some(rtt) => ((bw * rtt.as_secs_f64() * gain).ceil() as u64).div_ceil(mss),
        }
    }

    /// `bbr_quantization_budget` of a window of `segs` segments, bytes.
    fn quantization_budget(&self, segs: u64, mss: u64) -> u64 {
        let mut segs = segs + 3 * self.tso_segs(mss);
        segs = (segs + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            segs += 2;
        }
        segs * mss
    }

    /// `bbr_inflight`: `bbr_bdp` + `bbr_quantization_budget`, bytes.
    fn inflight(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        self.quantization_budget(self.bdp_segments(bw, gain, mss), mss)
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

    /// `bbr_update_ack_aggregation`, after [`Bbr::update_bw`] of the same
    /// ACK (so `expected` uses the BtlBw this ACK may have raised) and with
    /// the cwnd from before this ACK's [`Bbr::set_cwnd`].
    fn update_ack_aggregation(&mut self, ack: &AckEvent, cwnd: u64, mss: u64) {
        // Linux starts a round only on a valid rate sample and then
        // rotates here; the engine's rounds (which the bandwidth filter
        // counts too) also end on the rare ACK whose sample is too short,
        // so rotating on every round start keeps this window at 5 of the
        // same rounds.
        if ack.round_start {
            self.extra_acked_win_rtts =
                (self.extra_acked_win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        // Only ACKs with a valid rate sample (Linux: `rs->interval_us > 0`,
        // which `tcp_rate_gen` clears for intervals below min_rtt).
        if ack.acked == 0 || ack.rate.is_none_or(|r| r.rate(ack.min_rtt).is_none()) {
            return;
        }
        let epoch = ack.now.saturating_since(self.ack_epoch_start);
        let mut expected = (self.max_bw() * epoch.as_secs_f64()) as u64;
        // ACKs no faster than BtlBw, or a very old epoch: start a new one
        // at this ACK.
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + ack.acked >= ACK_EPOCH_RESET_SEGMENTS * mss
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_start = ack.now;
            expected = 0;
        }
        self.ack_epoch_acked =
            (self.ack_epoch_acked + ack.acked).min((ACK_EPOCH_RESET_SEGMENTS - 1) * mss);
        let extra = self.ack_epoch_acked.saturating_sub(expected).min(cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
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
                // `bbr_set_cwnd`: the aggregation allowance joins the BDP
                // before the quantization budget.
                let segs = self.bdp_segments(self.max_bw(), self.cwnd_gain, mss)
                    + self.ack_aggregation_cwnd(mss) / mss;
                let target = self.quantization_budget(segs, mss);
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
        self.update_ack_aggregation(ack, s.cwnd, s.mss);
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
    fn on_tx_start(&mut self, _s: &mut CcState, now: Instant, app_limited: bool) {
        // `bbr_cwnd_event(CA_EVENT_TX_START)`: after an application-limited
        // idle period the ACK epoch restarts now, so that the silence is not
        // counted as ACKs behind BtlBw nor the old epoch's data as ahead.
        if app_limited {
            self.ack_epoch_start = now;
            self.ack_epoch_acked = 0;
        }
    }
    /// `tcp_bbr.c` sets `.cong_control = bbr_main`.
    fn has_cong_control(&self) -> bool {
        true
    }
    fn pacing_rate(&self, _s: &CcState, _srtt: Option<Duration>) -> Option<f64> {
        self.pacing_rate
    }
}
