//! Congestion controls behind one trait (ARCHITECTURE.md principle 2).
//!
//! The TCP engine ([`crate::tcp::TcpSender`]) owns the common machinery (RTT,
//! loss detection, recovery, ECN feedback, rate sampling, pacing) and calls
//! the congestion control at five points: every ACK ([`CongestionControl::on_ack`]),
//! a congestion event when loss recovery or an ECN reduction starts
//! ([`CongestionControl::on_congestion_event`]), a retransmission timeout
//! ([`CongestionControl::on_rto`]), the end of loss recovery
//! ([`CongestionControl::on_recovery_exit`]) and a transmission with
//! nothing in flight ([`CongestionControl::on_tx_start`]). The controller changes `cwnd`
//! and `ssthresh` in the shared [`CcState`] and may set its own pacing rate.
//!
//! Units: windows in bytes (payload bytes, the way Linux counts segments ×
//! MSS), rates in payload bytes per second, times in [`Duration`].
//!
//! | `cc =` | module | source |
//! |---|---|---|
//! | `newreno` | [`reno`] | RFC 5681 + RFC 3465 byte counting as Linux Reno (algorithms.md §3.1) |
//! | `cubic` | [`cubic`] | RFC 9438 + Linux HyStart delay detection and 5 %/RTT growth before the first loss (§3.2) |
//! | `bbr` | [`bbr`] | BBR v1, Linux `tcp_bbr.c` (§3.3) |
//! | `dctcp` | [`dctcp`] | RFC 8257 (§3.5) |
//! | `prague` | [`dctcp`] | L4S `tcp_prague.c` (§3.6) |

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod reno;

use serde::{Deserialize, Serialize};
use tcran_core::rng::RngStream;
use tcran_core::{Duration, Ecn, Instant};

/// Window state shared between the engine and the congestion control.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CcState {
    /// Congestion window, bytes. The engine never lets it fall below 1 MSS.
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`u64::MAX` = infinite).
    pub ssthresh: u64,
    /// Sender maximum segment size (payload bytes).
    pub mss: u64,
}

impl CcState {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd as f64 / self.mss as f64
    }
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSample {
    /// Payload bytes delivered during `interval`.
    pub delivered: u64,
    /// The longer of the send and the ACK interval of the sampled packet.
    pub interval: Duration,
    /// `delivered` of the connection when the sampled packet was sent.
    pub prior_delivered: u64,
    /// The sampled packet was sent while the application had nothing to send.
    pub is_app_limited: bool,
}

impl RateSample {
    /// Bytes per second; `None` when the interval is too short to trust
    /// (shorter than the minimum RTT, as Linux discards it).
    pub fn rate(&self, min_rtt: Option<Duration>) -> Option<f64> {
        if self.interval.is_zero() || min_rtt.is_some_and(|m| self.interval < m) {
            None
        } else {
            Some(self.delivered as f64 / self.interval.as_secs_f64())
        }
    }
}

/// Everything a congestion control may use about one incoming ACK.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckEvent {
    pub now: Instant,
    /// Payload bytes newly delivered (cumulatively ACKed or SACKed) by this ACK.
    pub acked: u64,
    /// Of `acked`, bytes whose ACK carried ECE (accurate echo: CE-marked bytes).
    pub ece_acked: u64,
    /// The ACK carried ECE.
    pub ece: bool,
    /// RTT measured by this ACK (Karn: never from a retransmitted segment).
    pub rtt: Option<Duration>,
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    /// Bytes in flight (RFC 6675 `pipe`) before and after this ACK.
    pub prior_inflight: u64,
    pub inflight: u64,
    /// Total payload bytes delivered since the start of the connection.
    pub delivered: u64,
    /// This ACK ends a packet-timed round trip (a packet sent after the
    /// previous round started has been delivered).
    pub round_start: bool,
    pub rate: Option<RateSample>,
    /// Segments newly marked lost while processing this ACK.
    pub newly_lost: u64,
    /// In fast recovery or in an ECN congestion-window-reduced (CWR) period:
    /// loss-based controls must not grow the window.
    pub in_reduction: bool,
    /// The window was fully used recently (RFC 7661 / Linux
    /// `tcp_is_cwnd_limited`): growing it is only meaningful when true.
    pub is_cwnd_limited: bool,
}

/// Why the window is being reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CongestionEvent {
    /// Fast retransmit / SACK loss detection; `flight` = bytes outstanding
    /// (`snd_nxt − snd_una`, RFC 5681 FlightSize), `inflight` = pipe.
    Loss { flight: u64, inflight: u64 },
    /// An ACK with ECE outside a reduction period.
    Ece { flight: u64, inflight: u64 },
}

/// One congestion-control algorithm.
pub trait CongestionControl {
    fn name(&self) -> &'static str;
    /// Called for every ACK that delivers data, during recovery too.
    fn on_ack(&mut self, s: &mut CcState, ack: &AckEvent);
    fn on_congestion_event(&mut self, s: &mut CcState, ev: CongestionEvent, now: Instant);
    /// Retransmission timeout: `flight` = bytes outstanding before it.
    fn on_rto(&mut self, s: &mut CcState, flight: u64, now: Instant);
    /// Fast recovery ended (the recovery point was ACKed).
    fn on_recovery_exit(&mut self, _s: &mut CcState, _now: Instant) {}
    /// A data segment is about to be sent with nothing in flight (Linux
    /// `CA_EVENT_TX_START`); `app_limited`: the sender had run out of
    /// application data (an idle restart, Linux `tp->app_limited`).
    fn on_tx_start(&mut self, _s: &mut CcState, _now: Instant, _app_limited: bool) {}
    /// The controller replaces Linux's window logic wholesale (a
    /// `tcp_congestion_ops.cong_control`: BBR, Prague), so the engine leaves
    /// the restart after idle to it (Linux `tcp_slow_start_after_idle_check`).
    fn has_cong_control(&self) -> bool {
        false
    }
    /// The controller's own pacing rate in payload bytes/s, or `None` for the
    /// engine's Linux default (2·cwnd/SRTT below ssthresh/2, else 1.2·cwnd/SRTT).
    fn pacing_rate(&self, _s: &CcState, _srtt: Option<Duration>) -> Option<f64> {
        None
    }
    /// ECN codepoint of data segments when ECN is in use.
    fn ect(&self) -> Ecn {
        Ecn::Ect0
    }
    /// Whether the receiver must echo CE per packet (DCTCP/Prague, RFC 8257
    /// §3.2) rather than RFC 3168 sticky-until-CWR.
    fn wants_accurate_ecn(&self) -> bool {
        false
    }
}

/// Which congestion control (`cc = "cubic"`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    /// NewReno (RFC 5681 with RFC 3465 byte counting, as Linux Reno).
    #[serde(rename = "newreno")]
    NewReno,
    /// CUBIC (RFC 9438), the Linux default.
    #[default]
    Cubic,
    /// BBR v1 (Linux `tcp_bbr.c`).
    Bbr,
    /// DCTCP (RFC 8257): ECN-fraction window reduction.
    Dctcp,
    /// TCP Prague (L4S, Linux `tcp_prague.c`).
    Prague,
}

/// The built-in congestion controls, statically dispatched.
#[derive(Debug, Clone)]
pub enum AnyCongestionControl {
    NewReno(reno::NewReno),
    Cubic(cubic::Cubic),
    Bbr(Box<bbr::Bbr>),
    Dctcp(dctcp::Dctcp),
}

impl AnyCongestionControl {
    /// `rng` is used only by BBR (random PROBE_BW start phase);
    /// `hystart` and `loss_free_growth` only by CUBIC.
    pub fn new(
        kind: CcKind,
        hystart: bool,
        loss_free_growth: f64,
        rng: RngStream,
    ) -> AnyCongestionControl {
        match kind {
            CcKind::NewReno => AnyCongestionControl::NewReno(reno::NewReno::default()),
            CcKind::Cubic => AnyCongestionControl::Cubic(
                cubic::Cubic::new(hystart).loss_free_growth(loss_free_growth),
            ),
            CcKind::Bbr => AnyCongestionControl::Bbr(Box::new(bbr::Bbr::new(rng))),
            CcKind::Dctcp => AnyCongestionControl::Dctcp(dctcp::Dctcp::new_dctcp()),
            CcKind::Prague => AnyCongestionControl::Dctcp(dctcp::Dctcp::new_prague()),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCongestionControl::NewReno($c) => $e,
            AnyCongestionControl::Cubic($c) => $e,
            AnyCongestionControl::Bbr($c) => $e,
            AnyCongestionControl::Dctcp($c) => $e,
        }
    };
}

impl CongestionControl for AnyCongestionControl {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    fn on_ack(&mut self, s: &mut CcState, ack: &AckEvent) {
        dispatch!(self, c => c.on_ack(s, ack))
    }
    fn on_congestion_event(&mut self, s: &mut CcState, ev: CongestionEvent, now: Instant) {
        dispatch!(self, c => c.on_congestion_event(s, ev, now))
    }
    fn on_rto(&mut self, s: &mut CcState, flight: u64, now: Instant) {
        dispatch!(self, c => c.on_rto(s, flight, now))
    }
    fn on_recovery_exit(&mut self, s: &mut CcState, now: Instant) {
        dispatch!(self, c => c.on_recovery_exit(s, now))
    }
    fn on_tx_start(&mut self, s: &mut CcState, now: Instant, app_limited: bool) {
        dispatch!(self, c => c.on_tx_start(s, now, app_limited))
    }
    fn has_cong_control(&self) -> bool {
        dispatch!(self, c => c.has_cong_control())
    }
    fn pacing_rate(&self, s: &CcState, srtt: Option<Duration>) -> Option<f64> {
        dispatch!(self, c => c.pacing_rate(s, srtt))
    }
    fn ect(&self) -> Ecn {
        dispatch!(self, c => c.ect())
    }
    fn wants_accurate_ecn(&self) -> bool {
        dispatch!(self, c => c.wants_accurate_ecn())
    }
}

/// Linux Reno slow start (`tcp_slow_start`): cwnd grows by the bytes ACKed,
/// capped at ssthresh; returns the ACKed bytes left over for congestion
/// avoidance.
pub(crate) fn slow_start(s: &mut CcState, acked: u64) -> u64 {
    let room = s.ssthresh.saturating_sub(s.cwnd);
    let grow = acked.min(room);
    s.cwnd += grow;
    acked - grow
}

/// Reno congestion avoidance, byte-exact version of Linux
/// `tcp_cong_avoid_ai`: count ACKed bytes in `acc`; each time a whole
/// window's worth has been ACKed the window grows by one MSS. This gives
/// exactly 1 MSS per RTT and never more.
pub(crate) fn reno_additive_increase(s: &mut CcState, acc: &mut u64, acked: u64) {
    *acc += acked;
    let w = s.cwnd.max(s.mss);
    if *acc >= w {
        let segments = *acc / w;
        *acc -= segments * w;
        s.cwnd += segments * s.mss;
    }
}
