//! The sending end (server side) of a TCP connection: segmentation, the SACK
//! scoreboard, loss recovery, RTO, ECN reaction, rate sampling and pacing.
//! The congestion control is pluggable ([`crate::cc`]); everything else is
//! implemented once here. See the [module docs](super) for the rules.

use super::rtt::RttEstimator;
use super::{SendBuffer, TcpParams, HEADER_BYTES};
use crate::cc::{
    AckEvent, AnyCongestionControl, CcState, CongestionControl, CongestionEvent, RateSample,
};
use crate::flow::FlowSpec;
use std::collections::VecDeque;
use tcran_core::packet::{L4Meta, TcpFlags, TcpMeta};
use tcran_core::rng::RngStream;
use tcran_core::{Duration, Ecn, Instant, Packet};

/// One segment on the retransmission queue. Boundaries are fixed when it is
/// first sent; retransmissions resend the same bytes.
#[derive(Debug, Clone, Copy)]
struct Segment {
    seq: u64,
    len: u32,
    sent_at: Instant,
    transmissions: u32,
    sacked: bool,
    /// Marked lost (RFC 6675 IsLost, dupACK threshold, partial ACK or RTO).
    lost: bool,
    /// Retransmitted since it was last marked lost.
    retransmitted: bool,
    /// Counted in `pipe`: not SACKed and either not lost or retransmitted.
    in_pipe: bool,
    // Delivery-rate snapshot taken when (re)sent.
    delivered: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    app_limited: bool,
}

impl Segment {
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    fn counts_in_pipe(&self) -> bool {
        !self.sacked && (!self.lost || self.retransmitted)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// Fast recovery until `recover` (highest sequence sent at entry) is ACKed.
    Fast { recover: u64 },
    /// Retransmitting after a timeout until `recover` is ACKed.
    Timeout { recover: u64 },
}

/// Remembers the most recently sent delivered segment (its snapshot gives
/// the rate sample) and the newest never-retransmitted one (Karn: its send
/// time gives the RTT sample).
fn note(s: &Segment, sample: &mut Option<Segment>, rtt_sent: &mut Option<Instant>) {
    if sample.is_none_or(|c| s.sent_at >= c.sent_at) {
        *sample = Some(*s);
    }
    if s.transmissions == 1 && rtt_sent.is_none_or(|t| s.sent_at > t) {
        *rtt_sent = Some(s.sent_at);
    }
}

/// Counters for metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub data_packets_sent: u64,
    pub payload_bytes_sent: u64,
    pub retransmissions: u64,
    pub fast_recoveries: u64,
    pub timeouts: u64,
    pub ecn_reductions: u64,
    pub acks_received: u64,
}

/// TCP sender state machine.
#[derive(Debug, Clone)]
pub struct TcpSender {
    p: TcpParams,
    flow: FlowSpec,
    cc: AnyCongestionControl,
    st: CcState,
    rtt: RttEstimator,
    snd_una: u64,
    snd_nxt: u64,
    /// Bytes the application has written (`u64::MAX` = bulk).
    app_written: u64,
    /// Of those, the bytes it could hand to the socket so far: the send
    /// buffer holds them until they are cumulatively ACKed (module docs).
    /// Equal to `app_written` with `send_buffer = "unlimited"`.
    sock_written: u64,
    /// Linux `sk_sndbuf`, bytes of skb truesize (autotuned).
    sndbuf: u64,
    /// The application waits for the socket to become writable again
    /// (Linux `SOCK_NOSPACE`): until a third of the buffer is free.
    app_blocked: bool,
    segs: VecDeque<Segment>,
    /// SACK blocks already walked: every segment still held inside one is
    /// marked SACKed (marks are never cleared), so a growing block is only
    /// walked over its new part. Ring of the last few blocks.
    sack_walked: [(u64, u64); 4],
    sack_walked_next: usize,
    /// Sequence numbers of the `dup_ack_threshold` highest SACKed segments,
    /// ascending: the RFC 6675 IsLost boundary, kept incrementally.
    top_sacked: Vec<u64>,
    /// Holes below this sequence number were already judged by IsLost.
    lost_judged_below: u64,
    pipe: u64,
    lost_pending: u64,
    /// No segment below this sequence number waits for retransmission
    /// (lost, not retransmitted, not SACKed): where the search for the next
    /// one starts, so that it does not walk the whole window each time.
    retx_from: u64,
    dupacks: u32,
    /// Without SACK: bytes that duplicate ACKs say have left the network.
    reno_dup_bytes: u64,
    recovery: Option<Recovery>,
    cwr_until: Option<u64>,
    send_cwr: bool,
    rto_deadline: Option<Instant>,
    pacing_next: Instant,
    delivered: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    app_limited_until: u64,
    next_round_delivered: u64,
    rounds: u64,
    is_cwnd_limited: bool,
    max_pipe: u64,
    cwnd_usage_seq: u64,
    ts_recent: u64,
    all_acked_at: Option<Instant>,
    /// When the last data segment (new or retransmitted) left: Linux
    /// `lsndtime`, the start of an idle period.
    last_data_sent: Option<Instant>,
    last_rate: Option<RateSample>,
    stats: TcpStats,
}

impl TcpSender {
    /// A sender with nothing to send yet; call [`TcpSender::bulk`] or
    /// [`TcpSender::write`]. `rng` is the flow's own stream (BBR draws its
    /// PROBE_BW phase from it).
    pub fn new(params: TcpParams, flow: FlowSpec, rng: RngStream) -> TcpSender {
        let mss = params.mss as u64;
        let st = CcState {
            cwnd: params.initial_window as u64 * mss,
            ssthresh: params.initial_ssthresh,
            mss,
        };
        TcpSender {
            cc: AnyCongestionControl::new(
                params.cc,
                params.hystart,
                params.cubic_loss_free_growth,
                rng,
            ),
            rtt: RttEstimator::new(params.initial_rto, params.min_rto, params.max_rto),
            st,
            flow,
            snd_una: 0,
            snd_nxt: 0,
            app_written: 0,
            sock_written: 0,
            sndbuf: 0,
            app_blocked: false,
            segs: VecDeque::new(),
            sack_walked: [(0, 0); 4],
            sack_walked_next: 0,
            top_sacked: Vec::new(),
            lost_judged_below: 0,
            pipe: 0,
            lost_pending: 0,
            retx_from: 0,
            dupacks: 0,
            reno_dup_bytes: 0,
            recovery: None,
            cwr_until: None,
            send_cwr: false,
            rto_deadline: None,
            pacing_next: Instant::ZERO,
            delivered: 0,
            delivered_time: Instant::ZERO,
            first_sent_time: Instant::ZERO,
            app_limited_until: 0,
            next_round_delivered: 0,
            rounds: 0,
            is_cwnd_limited: false,
            max_pipe: 0,
            cwnd_usage_seq: 0,
            ts_recent: 0,
            all_acked_at: None,
            last_data_sent: None,
            last_rate: None,
            stats: TcpStats::default(),
            p: params,
        }
        .with_initial_sndbuf()
    }

    /// Linux `tcp_init_buffer_space`: `tcp_sndbuf_expand` once at the
    /// start, from `tcp_wmem[1]`.
    fn with_initial_sndbuf(mut self) -> TcpSender {
        self.sndbuf = super::LINUX_WMEM_DEFAULT.min(self.p.send_buffer_max);
        self.sndbuf_expand();
        self
    }

    /// Infinite backlog (iperf-style bulk transfer).
    pub fn bulk(mut self) -> TcpSender {
        self.app_written = u64::MAX;
        self.fill_socket();
        self
    }

    /// A bulk application stops writing: what has been sent is all there
    /// is (its retransmissions still go). A finite write is kept whole.
    pub fn stop_writing(&mut self) {
        if self.app_written == u64::MAX {
            self.app_written = self.snd_nxt;
            self.sock_written = self.snd_nxt;
        }
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, bytes: u64) {
        self.app_written = self.app_written.saturating_add(bytes);
        if bytes > 0 {
            self.all_acked_at = None;
        }
        self.fill_socket();
    }

    // ---- observers (time series) ----

    pub fn cwnd(&self) -> u64 {
        self.st.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.st.ssthresh
    }
    pub fn mss(&self) -> u64 {
        self.st.mss
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Bytes in flight (RFC 6675 pipe).
    pub fn inflight(&self) -> u64 {
        self.pipe.saturating_sub(self.reno_dup_bytes)
    }
    /// Bytes sent and not cumulatively ACKed (RFC 5681 FlightSize).
    pub fn outstanding(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Payload bytes delivered (cumulatively ACKed or SACKed).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn rounds(&self) -> u64 {
        self.rounds
    }
    pub fn last_rate_sample(&self) -> Option<RateSample> {
        self.last_rate
    }
    pub fn congestion_control(&self) -> &AnyCongestionControl {
        &self.cc
    }
    /// When everything written so far was ACKed (finite transfers: the
    /// completion time as the server sees it).
    pub fn all_acked_at(&self) -> Option<Instant> {
        self.all_acked_at
    }
    /// Linux `sk_sndbuf` (bytes of skb truesize; `u64::MAX` with
    /// `send_buffer = "unlimited"`).
    pub fn send_buffer(&self) -> u64 {
        match self.p.send_buffer {
            SendBuffer::Auto => self.sndbuf,
            SendBuffer::Unlimited => u64::MAX,
        }
    }

    /// Bytes the socket holds (sent and not cumulatively ACKed, or not
    /// sent yet) counted as Linux charges them (`sk_wmem_queued`): payload
    /// plus one skb's overhead per skb, sent data in skbs of
    /// [`TcpSender::tso_segs`] segments, unsent data in 64 KB skbs.
    pub fn wmem_queued(&self) -> u64 {
        let mss = self.st.mss;
        let sent = self.snd_nxt - self.snd_una;
        let unsent = self.sock_written.saturating_sub(self.snd_nxt);
        let sent_skb = self.tso_segs() * mss;
        let unsent_skb = (super::GSO_MAX_SIZE / mss).max(1) * mss;
        let ovh = self.p.skb_overhead;
        sent + sent.div_ceil(sent_skb) * ovh + unsent + unsent.div_ceil(unsent_skb) * ovh
    }

    /// Segments per skb as Linux `tcp_tso_autosize` sizes them: the
    /// pacing rate's bytes per 2^-10 s (`sk_pacing_shift` 10), plus
    /// 64 KB >> (min RTT in µs >> 9) (`tcp_tso_rtt_log` 9), at most 64 KB,
    /// at least `tcp_min_tso_segs`.
    pub fn tso_segs(&self) -> u64 {
        let mss = self.st.mss;
        let min = u64::from(self.p.min_tso_segs);
        let Some(srtt) = self.rtt.srtt().filter(|d| !d.is_zero()) else {
            return min;
        };
        // tcp_update_pacing_rate (set whatever the qdisc).
        let rate = self.linux_pacing_factor() * self.st.cwnd.max(self.inflight()) as f64
            / srtt.as_secs_f64();
        let mut bytes = (rate / 1024.0) as u64;
        let r = (self.rtt.min_rtt().unwrap_or(srtt).as_nanos() / 1000) >> 9;
        if r < 32 {
            bytes += super::GSO_MAX_SIZE >> r;
        }
        (bytes.min(super::GSO_MAX_SIZE) / mss).max(min)
    }

    /// Linux `tcp_sndbuf_expand`: room for twice the congestion window (at
    /// least the initial 10 segments) of worst-case skbs, each
    /// `per_mss` = roundup_pow_of_two(MSS option + `MAX_TCP_HEADER` +
    /// `skb_shared_info`) + `sk_buff` bytes, at most `tcp_wmem[2]`; never
    /// shrinks.
    fn sndbuf_expand(&mut self) {
        let per_mss = super::sndbuf_per_mss(self.st.mss);
        let nr_segs = (self.st.cwnd / self.st.mss).max(super::TCP_INIT_CWND);
        let sndmem = 2 * nr_segs * per_mss;
        if self.sndbuf < sndmem {
            self.sndbuf = sndmem.min(self.p.send_buffer_max);
        }
    }

    /// Linux `tcp_check_space` after `tcp_push_pending_frames` (ACKs that
    /// free sent data): the send buffer grows unless the congestion window
    /// is full (`tcp_should_expand_sndbuf`: "If we filled the congestion
    /// window, do not expand"), i.e. when the buffer, not cwnd, is the limit.
    fn expand_unless_cwnd_full(&mut self) {
        if self.p.send_buffer == SendBuffer::Auto
            && self.inflight() < self.st.cwnd
            && self.sndbuf < self.p.send_buffer_max
        {
            self.sndbuf_expand();
        }
    }

    /// The application writes into the socket what the send buffer takes
    /// (Linux `sk_stream_memory_free`: while `sk_wmem_queued < sk_sndbuf`,
    /// a 64 KB skb at a time); once refused it waits until the socket is
    /// writable again, a third of the buffer free (`sk_stream_write_space`
    /// and `tcp_poll`: `sk_stream_wspace >= sk_wmem_queued / 2`).
    ///
    /// Asked on every segment sent and every ACK: the answers that need no
    /// charge are given inline, the rest out of line.
    #[inline]
    fn fill_socket(&mut self) {
        if self.p.send_buffer == SendBuffer::Unlimited {
            self.sock_written = self.app_written;
            return;
        }
        if self.sock_written >= self.app_written {
            return;
        }
        // A blocked socket stays blocked while even its payload alone,
        // without the skb overheads `wmem_queued` adds, leaves less than
        // half of it free: the test in `fill_charged_socket` only gets
        // truer as the charge grows. Most calls (one per segment sent, one
        // per ACK) end here, without the charge's divisions and `tso_segs`.
        let payload = self.sock_written.max(self.snd_nxt) - self.snd_una;
        if self.app_blocked && self.sndbuf.saturating_sub(payload) < payload / 2 {
            return;
        }
        self.fill_charged_socket();
    }

    /// [`TcpSender::fill_socket`] once the socket's charge is needed.
    #[inline(never)]
    fn fill_charged_socket(&mut self) {
        let mut queued = self.wmem_queued();
        if self.app_blocked {
            if self.sndbuf.saturating_sub(queued) < queued / 2 {
                return;
            }
            self.app_blocked = false;
        }
        if queued >= self.sndbuf {
            self.app_blocked = true;
            return;
        }
        let mss = self.st.mss;
        let skb = (super::GSO_MAX_SIZE / mss).max(1) * mss;
        // First top up the last unsent skb, then whole skbs.
        let unsent = self.sock_written.saturating_sub(self.snd_nxt);
        let partial = (skb - unsent % skb) % skb;
        let top = partial.min(self.app_written - self.sock_written);
        self.sock_written += top;
        queued += top;
        if queued < self.sndbuf && self.sock_written < self.app_written {
            let n = (self.sndbuf - queued).div_ceil(skb + self.p.skb_overhead);
            self.sock_written = self
                .sock_written
                .saturating_add(n.saturating_mul(skb))
                .min(self.app_written);
        }
        if self.sock_written < self.app_written {
            self.app_blocked = true;
        }
    }

    /// Current pacing rate in payload bytes/s (`None` = unpaced).
    pub fn pacing_rate(&self) -> Option<f64> {
        if let Some(r) = self.cc.pacing_rate(&self.st, self.rtt.srtt()) {
            return Some(r);
        }
        if !self.p.pacing {
            return None;
        }
        let srtt = self.rtt.srtt()?.as_secs_f64();
        Some(self.linux_pacing_factor() * self.st.cwnd as f64 / srtt)
    }

    /// Linux `tcp_update_pacing_rate`'s ratio: 200 % in slow start below
    /// ssthresh/2 (`tcp_pacing_ss_ratio`), else 120 % (`tcp_pacing_ca_ratio`).
    fn linux_pacing_factor(&self) -> f64 {
        if self.st.cwnd < self.st.ssthresh / 2 {
            2.0
        } else {
            1.2
        }
    }

    /// Checks the scoreboard bookkeeping (pipe and lost counters equal a
    /// recount over the retransmission queue). O(n): for tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let pipe: u64 = self
            .segs
            .iter()
            .filter(|s| s.counts_in_pipe())
            .map(|s| s.len as u64)
            .sum();
        let flagged = self.segs.iter().filter(|s| s.in_pipe).count();
        let counted = self.segs.iter().filter(|s| s.counts_in_pipe()).count();
        let lost = self
            .segs
            .iter()
            .filter(|s| s.lost && !s.retransmitted && !s.sacked)
            .count() as u64;
        if pipe != self.pipe || flagged != counted || lost != self.lost_pending {
            return Err(format!(
                "pipe {} (recount {pipe}), in_pipe flags {flagged} vs {counted}, lost {} (recount {lost})",
                self.pipe, self.lost_pending
            ));
        }
        if self.segs.front().is_some_and(|s| s.seq != self.snd_una) {
            return Err("retransmission queue does not start at snd_una".into());
        }
        if let Some(s) = self
            .segs
            .iter()
            .find(|s| s.lost && !s.retransmitted && !s.sacked && s.seq < self.retx_from)
        {
            return Err(format!(
                "segment {} awaits retransmission below the search start {}",
                s.seq, self.retx_from
            ));
        }
        Ok(())
    }

    // ---- sans-IO interface ----

    fn has_data_to_send(&self) -> bool {
        self.lost_pending > 0
            || (self.snd_nxt < self.sock_written
                && self.snd_nxt < self.snd_una + self.p.receive_window)
    }

    fn window_allows(&self) -> bool {
        self.inflight() + self.st.mss <= self.st.cwnd
    }

    /// When the sender next needs [`TcpSender::on_timer`] or
    /// [`TcpSender::poll_transmit`]: the RTO deadline, or the pacing release
    /// time when data is waiting only for it (may be `<= now`: poll now).
    pub fn next_wakeup(&self) -> Option<Instant> {
        let pacing = (self.has_data_to_send() && self.window_allows()).then_some(self.pacing_next);
        Instant::earliest(self.rto_deadline, pacing)
    }

    /// Linux `tcp_cwnd_validate`: remember whether the window was the limit
    /// during the current window of data.
    fn cwnd_validate(&mut self, limited: bool) {
        let pipe = self.inflight();
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.is_cwnd_limited && pipe > self.max_pipe)
        {
            self.is_cwnd_limited = limited;
            self.max_pipe = pipe;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    fn cwnd_limited_now(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        // In slow start, let the window grow to twice what was used.
        self.st.in_slow_start() && self.st.cwnd < 2 * self.max_pipe
    }

    /// Restart after idle (module docs; Linux `tcp_slow_start_after_idle_check`
    /// and `tcp_cwnd_restart`, in segments as Linux counts them): new data
    /// with nothing outstanding, more than one RTO after the last data
    /// segment left.
    fn restart_after_idle(&mut self, now: Instant) {
        if !self.p.slow_start_after_idle || self.outstanding() > 0 || self.cc.has_cong_control() {
            return;
        }
        let Some(last) = self.last_data_sent else {
            return;
        };
        let (idle, rto) = (now.saturating_since(last), self.rtt.rto());
        if idle <= rto {
            return;
        }
        let mss = self.st.mss;
        let mut cwnd = self.st.cwnd / mss;
        // tcp_current_ssthresh: 3/4 of cwnd unless already reducing.
        if self.recovery.is_none() && self.cwr_until.is_none() {
            self.st.ssthresh = self.st.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) * mss);
        }
        let restart = u64::from(self.p.initial_window).min(cwnd);
        let mut left = idle.as_nanos();
        while left > rto.as_nanos() && cwnd > restart {
            left -= rto.as_nanos();
            cwnd >>= 1;
        }
        self.st.cwnd = (cwnd.max(restart) * mss).max(mss);
    }

    /// The next packet to send now, if cwnd, the receive window and pacing allow.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.fill_socket();
        let retransmit = if self.lost_pending > 0 {
            let from = self.segs.partition_point(|s| s.seq < self.retx_from);
            let found = self
                .segs
                .range(from..)
                .position(|s| s.lost && !s.retransmitted && !s.sacked)
                .map(|k| from + k);
            debug_assert_eq!(
                found,
                self.segs
                    .iter()
                    .position(|s| s.lost && !s.retransmitted && !s.sacked)
            );
            self.retx_from = found.map_or(self.snd_nxt, |i| self.segs[i].seq);
            found
        } else {
            None
        };
        let new_data = retransmit.is_none()
            && self.snd_nxt < self.sock_written
            && self.snd_nxt < self.snd_una + self.p.receive_window;
        if retransmit.is_none() && !new_data {
            // Pushed all the socket holds: room for the application?
            self.expand_unless_cwnd_full();
            let before = self.sock_written;
            self.fill_socket();
            if self.sock_written > before {
                return self.poll_transmit(now);
            }
            if self.window_allows() && self.app_limited_until == 0 {
                // Application-limited: rate samples taken now underestimate.
                self.app_limited_until = (self.delivered + self.inflight()).max(1);
            }
            return None;
        }
        if retransmit.is_none() {
            self.restart_after_idle(now);
        }
        if !self.window_allows() {
            self.cwnd_validate(true);
            return None;
        }
        if now < self.pacing_next {
            return None;
        }
        if self.inflight() == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
            // Linux `tcp_event_data_sent`: CA_EVENT_TX_START.
            self.cc
                .on_tx_start(&mut self.st, now, self.app_limited_until != 0);
        }
        let snapshot = (
            self.delivered,
            self.delivered_time,
            self.first_sent_time,
            self.app_limited_until != 0,
        );
        let (seq, len, is_new) = match retransmit {
            Some(i) => {
                let s = &mut self.segs[i];
                s.sent_at = now;
                s.transmissions += 1;
                s.retransmitted = true;
                (
                    s.delivered,
                    s.delivered_time,
                    s.first_sent_time,
                    s.app_limited,
                ) = snapshot;
                s.in_pipe = true;
                self.pipe += s.len as u64;
                self.lost_pending -= 1;
                self.stats.retransmissions += 1;
                (s.seq, s.len, false)
            }
            None => {
                let len = (self.sock_written - self.snd_nxt).min(self.st.mss) as u32;
                let seg = Segment {
                    seq: self.snd_nxt,
                    len,
                    sent_at: now,
                    transmissions: 1,
                    sacked: false,
                    lost: false,
                    retransmitted: false,
                    in_pipe: true,
                    delivered: snapshot.0,
                    delivered_time: snapshot.1,
                    first_sent_time: snapshot.2,
                    app_limited: snapshot.3,
                };
                self.segs.push_back(seg);
                self.pipe += len as u64;
                self.snd_nxt += len as u64;
                (seg.seq, len, true)
            }
        };
        self.last_data_sent = Some(now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if let Some(rate) = self.pacing_rate() {
            if rate > 0.0 {
                let gap_ns = (len as f64 * 1e9 / rate).round() as u64;
                self.pacing_next = now + Duration::from_nanos(gap_ns);
            }
        }
        let limited = self.inflight() >= self.st.cwnd;
        self.cwnd_validate(limited);

        let mut flags = TcpFlags::ACK;
        if is_new && self.send_cwr {
            flags |= TcpFlags::CWR;
            self.send_cwr = false;
        }
        let ecn = if !self.p.ecn {
            Ecn::NotEct
        } else if self.p.accurate_ecn {
            self.cc.ect()
        } else if is_new {
            // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
            self.cc.ect()
        } else {
            Ecn::NotEct
        };
        let meta = TcpMeta {
            seq,
            ack: 0,
            payload: len,
            flags: TcpFlags(flags),
            ts_val: now.as_nanos(),
            ts_ecr: self.ts_recent,
            sack: [(0, 0); 3],
        };
        let mut pkt = self.flow.packet(len + HEADER_BYTES, now, L4Meta::Tcp(meta));
        pkt.ecn = ecn;
        self.stats.data_packets_sent += 1;
        self.stats.payload_bytes_sent += len as u64;
        Some(pkt)
    }

    /// Runs the retransmission timer.
    pub fn on_timer(&mut self, now: Instant) {
        if self.rto_deadline.is_none_or(|d| d > now) {
            return;
        }
        if self.snd_una >= self.snd_nxt {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        let flight = self.outstanding();
        self.cc.on_rto(&mut self.st, flight, now);
        self.st.cwnd = self.st.cwnd.max(self.st.mss);
        self.rtt.on_timeout();
        self.pipe = 0;
        self.lost_pending = 0;
        self.retx_from = self.snd_una;
        for s in self.segs.iter_mut() {
            if !s.sacked {
                s.lost = true;
                s.retransmitted = false;
                s.in_pipe = false;
                self.lost_pending += 1;
            }
        }
        self.reno_dup_bytes = 0;
        self.dupacks = 0;
        self.cwr_until = None;
        self.recovery = Some(Recovery::Timeout {
            recover: self.snd_nxt,
        });
        self.pacing_next = now;
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    fn mark_lost(&mut self, i: usize) -> bool {
        let s = &mut self.segs[i];
        if s.sacked || (s.lost && !s.retransmitted) {
            return false;
        }
        if s.lost && s.retransmitted {
            // Already retransmitted: only the RTO recovers a lost retransmission.
            return false;
        }
        s.lost = true;
        s.retransmitted = false;
        self.retx_from = self.retx_from.min(s.seq);
        if s.in_pipe {
            s.in_pipe = false;
            self.pipe -= s.len as u64;
        }
        self.lost_pending += 1;
        true
    }

    /// RFC 6675 IsLost: a hole with at least DupThresh SACKed segments above it.
    ///
    /// The DupThresh-th highest SACKed sequence number is a boundary below
    /// which every hole is lost, and it only moves up (SACK marks are never
    /// cleared), so each hole is judged once, when the boundary passes it:
    /// amortised O(1) per ACK instead of a scan of the whole window, which
    /// matters with thousands of segments in a bloated buffer.
    fn mark_lost_by_sack(&mut self) -> u64 {
        if self.top_sacked.len() < self.p.dup_ack_threshold as usize {
            return 0;
        }
        let boundary = self.top_sacked[0];
        if boundary <= self.lost_judged_below {
            return 0;
        }
        let from = self.lost_judged_below;
        self.lost_judged_below = boundary;
        let mut newly = 0;
        let mut i = self.segs.partition_point(|s| s.seq < from);
        while i < self.segs.len() && self.segs[i].seq < boundary {
            if self.mark_lost(i) {
                newly += 1;
            }
            i += 1;
        }
        newly
    }

    /// Records a newly SACKed segment in the IsLost boundary.
    fn note_sacked(&mut self, seq: u64) {
        let k = self.p.dup_ack_threshold as usize;
        let pos = self.top_sacked.partition_point(|s| *s < seq);
        if self.top_sacked.len() < k {
            self.top_sacked.insert(pos, seq);
        } else if pos > 0 {
            self.top_sacked.insert(pos, seq);
            self.top_sacked.remove(0);
        }
    }

    /// Processes an arriving packet (ACKs; anything else is ignored).
    pub fn on_packet(&mut self, pkt: &Packet, now: Instant) {
        let L4Meta::Tcp(m) = pkt.l4 else { return };
        if !m.flags.has(TcpFlags::ACK) {
            return;
        }
        self.stats.acks_received += 1;
        self.ts_recent = m.ts_val;
        let ack = m.ack.min(self.snd_nxt);
        let prior_una = self.snd_una;
        let prior_inflight = self.inflight();
        let mut newly_acked = 0u64;
        let mut newly_sacked = 0u64;
        // The most recently sent delivered segment: its snapshot gives the
        // rate sample; its send time (if never retransmitted) the RTT.
        let mut sample: Option<Segment> = None;
        let mut rtt_sent: Option<Instant> = None;

        while let Some(front) = self.segs.front() {
            if front.end() > ack {
                break;
            }
            let s = self.segs.pop_front().expect("front exists");
            if s.in_pipe {
                self.pipe -= s.len as u64;
            }
            if s.lost && !s.retransmitted && !s.sacked {
                self.lost_pending -= 1;
            }
            if !s.sacked {
                newly_acked += s.len as u64;
                note(&s, &mut sample, &mut rtt_sent);
            }
        }
        self.snd_una = self.snd_una.max(ack);

        if self.p.sack {
            for (start, end) in m.sack {
                if end <= start || end <= self.snd_una {
                    continue;
                }
                // Skip the part of this block an earlier walk covered.
                let mut from = start;
                for (ws, we) in self.sack_walked {
                    if ws <= from && from < we {
                        from = we.min(end);
                    }
                }
                let mut i = self.segs.partition_point(|s| s.seq < from);
                while i < self.segs.len() && self.segs[i].end() <= end {
                    let s = &mut self.segs[i];
                    if !s.sacked {
                        if s.in_pipe {
                            self.pipe -= s.len as u64;
                            s.in_pipe = false;
                        }
                        if s.lost && !s.retransmitted {
                            self.lost_pending -= 1;
                        }
                        s.sacked = true;
                        newly_sacked += s.len as u64;
                        let copy = *s;
                        note(&copy, &mut sample, &mut rtt_sent);
                        self.note_sacked(copy.seq);
                    }
                    i += 1;
                }
                // Everything in [start, walked end) is now SACKed.
                let walked_end = if i < self.segs.len() {
                    self.segs[i].seq.min(end)
                } else {
                    end
                };
                if walked_end > start {
                    self.sack_walked[self.sack_walked_next] = (start, walked_end);
                    self.sack_walked_next = (self.sack_walked_next + 1) % self.sack_walked.len();
                }
            }
        }
        let newly_delivered = newly_acked + newly_sacked;
        if newly_delivered > 0 {
            self.delivered += newly_delivered;
            self.delivered_time = now;
        }

        // Duplicate ACK (RFC 5681 §2): no new data ACKed, data outstanding.
        let is_dup = ack == prior_una && newly_acked == 0 && m.payload == 0 && self.snd_nxt > ack;
        if newly_acked > 0 {
            self.dupacks = 0;
            self.reno_dup_bytes = self.reno_dup_bytes.saturating_sub(newly_acked);
        } else if is_dup {
            self.dupacks += 1;
            if !self.p.sack {
                let outstanding_but_one = self.outstanding().saturating_sub(self.st.mss);
                self.reno_dup_bytes = (self.reno_dup_bytes + self.st.mss).min(outstanding_but_one);
            }
        }

        // Leaving recovery (checked first, so a new loss can start a new episode).
        if let Some(Recovery::Fast { recover } | Recovery::Timeout { recover }) = self.recovery {
            if self.snd_una >= recover {
                self.recovery = None;
                self.reno_dup_bytes = 0;
                self.cc.on_recovery_exit(&mut self.st, now);
            }
        }
        if self.cwr_until.is_some_and(|u| self.snd_una >= u) {
            self.cwr_until = None;
        }

        // Loss detection.
        let mut newly_lost = 0;
        if self.p.sack && newly_sacked > 0 {
            newly_lost += self.mark_lost_by_sack();
        }
        if is_dup
            && self.dupacks == self.p.dup_ack_threshold
            && !self.segs.is_empty()
            && self.mark_lost(0)
        {
            newly_lost += 1;
        }
        match self.recovery {
            None => {
                if self
                    .segs
                    .front()
                    .is_some_and(|s| s.lost && !s.retransmitted)
                {
                    self.recovery = Some(Recovery::Fast {
                        recover: self.snd_nxt,
                    });
                    self.cwr_until = None;
                    self.stats.fast_recoveries += 1;
                    let ev = CongestionEvent::Loss {
                        flight: self.outstanding(),
                        inflight: self.inflight(),
                    };
                    self.cc.on_congestion_event(&mut self.st, ev, now);
                }
            }
            Some(Recovery::Fast { .. }) => {
                // RFC 6582 §3.2 step 5: a partial ACK retransmits the next hole.
                if newly_acked > 0 && !self.segs.is_empty() && self.mark_lost(0) {
                    newly_lost += 1;
                }
            }
            Some(Recovery::Timeout { .. }) => {}
        }

        // ECN (RFC 3168 §6.1.2 / RFC 8257 §3.3): at most one reduction per window.
        let ece = self.p.ecn && m.flags.has(TcpFlags::ECE);
        if ece && self.recovery.is_none() && self.cwr_until.is_none() {
            let ev = CongestionEvent::Ece {
                flight: self.outstanding(),
                inflight: self.inflight(),
            };
            self.cc.on_congestion_event(&mut self.st, ev, now);
            self.cwr_until = Some(self.snd_nxt);
            self.send_cwr = !self.p.accurate_ecn;
            self.stats.ecn_reductions += 1;
        }

        if let Some(sent) = rtt_sent {
            self.rtt.on_sample(now.saturating_since(sent));
        }
        if newly_acked > 0 {
            self.rto_deadline = (self.snd_una < self.snd_nxt).then(|| now + self.rtt.rto());
        }
        if self.app_written != u64::MAX && self.app_written > 0 && self.snd_una == self.app_written
        {
            self.all_acked_at.get_or_insert(now);
        }

        // Delivery-rate sample and packet-timed rounds.
        let mut round_start = false;
        let mut rate = None;
        if let Some(p) = sample {
            if p.delivered >= self.next_round_delivered {
                round_start = true;
                self.rounds += 1;
                self.next_round_delivered = self.delivered;
            }
            self.first_sent_time = p.sent_at;
            let send_elapsed = p.sent_at.saturating_since(p.first_sent_time);
            let ack_elapsed = now.saturating_since(p.delivered_time);
            rate = Some(RateSample {
                delivered: self.delivered - p.delivered,
                interval: send_elapsed.max(ack_elapsed),
                prior_delivered: p.delivered,
                is_app_limited: p.app_limited,
            });
            self.last_rate = rate;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }

        if newly_delivered > 0 {
            let ev = AckEvent {
                now,
                acked: newly_delivered,
                ece_acked: if ece { newly_delivered } else { 0 },
                ece,
                rtt: rtt_sent.map(|s| now.saturating_since(s)),
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                prior_inflight,
                inflight: self.inflight(),
                delivered: self.delivered,
                round_start,
                rate,
                newly_lost,
                in_reduction: matches!(self.recovery, Some(Recovery::Fast { .. }))
                    || self.cwr_until.is_some(),
                is_cwnd_limited: self.cwnd_limited_now(),
            };
            self.cc.on_ack(&mut self.st, &ev);
        }
        self.st.cwnd = self.st.cwnd.max(self.st.mss);
        if newly_acked > 0 {
            // tcp_check_space -> tcp_new_space -> sk_stream_write_space.
            self.fill_socket();
        }
    }
}
