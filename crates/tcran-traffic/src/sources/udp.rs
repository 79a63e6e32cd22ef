//! UDP sources: constant bit rate, VoIP G.711, online gaming and video
//! frames, plus a sink that measures loss and one-way delay.

use super::{PacketSource, IPV4_HEADER, RTP_HEADER, UDP_HEADER};
use crate::dist::truncated_normal_at_least;
use crate::flow::FlowSpec;
use std::collections::VecDeque;
use tcran_core::packet::L4Meta;
use tcran_core::rng::RngStream;
use tcran_core::{BitRate, ConfigError, Duration, Instant, Packet};

/// Fixed-size packets at fixed intervals (CBR, VoIP).
#[derive(Debug, Clone)]
pub struct PeriodicSource {
    flow: FlowSpec,
    size: u32,
    interval: Duration,
    next: Instant,
    stop: Option<Instant>,
    seq: u64,
}

/// G.711 at 20 ms packetization: 160 B of voice + 12 B RTP = **172 B**, the
/// UDP payload irtt sends in the thesis (thesis-irazabal-5g-qos.txt §3.6.3,
/// "UDP data frames of 172 bytes with an interval of 20 ms"); with UDP (8 B)
/// and IPv4 (20 B) headers that is a **200-byte IP packet** (the thesis
/// itself: "200 bytes long (i.e., 172 bytes of data, 20 bytes of IPv4 header
/// and 8 bytes of UDP header)"), 80 kbit/s at the IP layer (64 kbit/s of voice).
pub const G711_PAYLOAD: u32 = 160 + RTP_HEADER;
pub const G711_IP_PACKET: u32 = G711_PAYLOAD + UDP_HEADER + IPV4_HEADER;
pub const G711_INTERVAL: Duration = Duration::from_millis(20);

impl PeriodicSource {
    /// `size`-byte IP packets every `interval` from `start` (until `stop`).
    pub fn new(
        flow: FlowSpec,
        size: u32,
        interval: Duration,
        start: Instant,
        stop: Option<Instant>,
    ) -> Result<PeriodicSource, ConfigError> {
        if !(IPV4_HEADER + UDP_HEADER..=65_535).contains(&size) {
            return Err(ConfigError::new(
                "size",
                size,
                "must be in 28..=65535 bytes",
            ));
        }
        if interval.is_zero() {
            return Err(ConfigError::new("interval", interval, "must be > 0"));
        }
        Ok(PeriodicSource {
            flow,
            size,
            interval,
            next: start,
            stop,
            seq: 0,
        })
    }

    /// Constant bit rate: `size`-byte packets spaced `size·8/rate`.
    pub fn cbr(
        flow: FlowSpec,
        rate: BitRate,
        size: u32,
        start: Instant,
        stop: Option<Instant>,
    ) -> Result<PeriodicSource, ConfigError> {
        if rate.bps() == 0 {
            return Err(ConfigError::new("rate", rate, "must be > 0"));
        }
        PeriodicSource::new(flow, size, rate.time_to_send(size as u64), start, stop)
    }

    /// One G.711 call leg: 200-byte IP packets every 20 ms (see [`G711_IP_PACKET`]).
    pub fn voip_g711(flow: FlowSpec, start: Instant, stop: Option<Instant>) -> PeriodicSource {
        PeriodicSource::new(flow, G711_IP_PACKET, G711_INTERVAL, start, stop)
            .expect("G.711 constants are valid")
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }
    pub fn packets_sent(&self) -> u64 {
        self.seq
    }
}

impl PacketSource for PeriodicSource {
    fn next_send(&self) -> Option<Instant> {
        super::unless_stopped(self.next, self.stop)
    }
    fn poll(&mut self, now: Instant) -> Option<Packet> {
        let due = self.next_send()?;
        if due > now {
            return None;
        }
        let p = self
            .flow
            .packet(self.size, due, L4Meta::Udp { seq: self.seq });
        self.seq += 1;
        self.next = due + self.interval;
        Some(p)
    }
}

/// Online-gaming downlink (thesis-irazabal-5g-qos.txt §3.6, "online gaming",
/// after real traces): inter-arrival times Normal(mean, 5 ms), truncated to
/// ≥ 1 ms (redrawn, not clamped), the thesis evaluating means of 20, 40, 60
/// and 70 ms. Packet size is a parameter (the thesis does not state one).
#[derive(Debug, Clone)]
pub struct GamingSource {
    flow: FlowSpec,
    size: u32,
    mean: Duration,
    sd: Duration,
    rng: RngStream,
    next: Instant,
    stop: Option<Instant>,
    seq: u64,
}

/// Smallest inter-arrival time the gaming model allows.
pub const GAMING_MIN_GAP: Duration = Duration::from_millis(1);
/// The thesis' standard deviation.
pub const GAMING_SD: Duration = Duration::from_millis(5);

impl GamingSource {
    /// The first packet leaves one inter-arrival time after `start`.
    pub fn new(
        flow: FlowSpec,
        size: u32,
        mean: Duration,
        sd: Duration,
        rng: RngStream,
        start: Instant,
        stop: Option<Instant>,
    ) -> Result<GamingSource, ConfigError> {
        if !(IPV4_HEADER + UDP_HEADER..=65_535).contains(&size) {
            return Err(ConfigError::new(
                "size",
                size,
                "must be in 28..=65535 bytes",
            ));
        }
        tcran_core::config::check_range(
            "mean",
            mean,
            Duration::from_millis(2),
            Duration::from_secs(10),
        )?;
        tcran_core::config::check_range("sd", sd, Duration::ZERO, mean)?;
        let mut g = GamingSource {
            flow,
            size,
            mean,
            sd,
            rng,
            next: start,
            stop,
            seq: 0,
        };
        g.next = start + g.draw_gap();
        Ok(g)
    }

    /// One inter-arrival time.
    pub fn draw_gap(&mut self) -> Duration {
        let s = truncated_normal_at_least(
            &mut self.rng,
            self.mean.as_secs_f64(),
            self.sd.as_secs_f64(),
            GAMING_MIN_GAP.as_secs_f64(),
        );
        Duration::from_nanos((s * 1e9).round() as u64).max(GAMING_MIN_GAP)
    }
}

impl PacketSource for GamingSource {
    fn next_send(&self) -> Option<Instant> {
        super::unless_stopped(self.next, self.stop)
    }
    fn poll(&mut self, now: Instant) -> Option<Packet> {
        let due = self.next_send()?;
        if due > now {
            return None;
        }
        let p = self
            .flow
            .packet(self.size, due, L4Meta::Udp { seq: self.seq });
        self.seq += 1;
        self.next = due + self.draw_gap();
        Some(p)
    }
}

/// Video frames at a fixed frame rate, each fragmented into MTU-sized UDP
/// packets sent back to back at the frame time. A larger I-frame every
/// `iframe_period` (Brunello thesis §4.4: I-frames every 2 s in the AR
/// gaming trace) models the scene-change bursts; the trace itself is not
/// available, so frame sizes are constant per type.
#[derive(Debug, Clone)]
pub struct VideoSource {
    flow: FlowSpec,
    frame_interval: Duration,
    frame_bytes: u64,
    iframe_bytes: u64,
    iframe_every: Option<u64>,
    mtu: u32,
    next_frame: Instant,
    frame_index: u64,
    pending: VecDeque<u32>,
    pending_created: Instant,
    stop: Option<Instant>,
    seq: u64,
}

impl VideoSource {
    /// `frame_bytes` of application payload per frame at `fps`; every
    /// `iframe_period` one frame of `iframe_bytes` instead. Packets are at
    /// most `mtu` IP bytes (payload per packet = mtu − 28 − 12 RTP).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: FlowSpec,
        fps: f64,
        frame_bytes: u64,
        iframe_bytes: u64,
        iframe_period: Option<Duration>,
        mtu: u32,
        start: Instant,
        stop: Option<Instant>,
    ) -> Result<VideoSource, ConfigError> {
        tcran_core::config::check_f64("fps", fps, 0.1, 1000.0)?;
        tcran_core::config::check_range("mtu", mtu, 100, 9000)?;
        tcran_core::config::check_range("frame_bytes", frame_bytes, 1, 100_000_000)?;
        let frame_interval = Duration::from_secs_f64(1.0 / fps);
        let iframe_every = iframe_period.map(|p| ((p.as_secs_f64() * fps).round() as u64).max(1));
        Ok(VideoSource {
            flow,
            frame_interval,
            frame_bytes,
            iframe_bytes: iframe_bytes.max(1),
            iframe_every,
            mtu,
            next_frame: start,
            frame_index: 0,
            pending: VecDeque::new(),
            pending_created: start,
            stop,
            seq: 0,
        })
    }
    fn payload_per_packet(&self) -> u64 {
        (self.mtu - IPV4_HEADER - UDP_HEADER - RTP_HEADER) as u64
    }
}

impl PacketSource for VideoSource {
    fn next_send(&self) -> Option<Instant> {
        if !self.pending.is_empty() {
            return Some(self.pending_created);
        }
        super::unless_stopped(self.next_frame, self.stop)
    }
    fn poll(&mut self, now: Instant) -> Option<Packet> {
        if self.pending.is_empty() {
            let due = self.next_send()?;
            if due > now {
                return None;
            }
            let is_iframe = self
                .iframe_every
                .is_some_and(|n| self.frame_index.checked_rem(n) == Some(0));
            let bytes = if is_iframe {
                self.iframe_bytes
            } else {
                self.frame_bytes
            };
            let per = self.payload_per_packet();
            let mut left = bytes;
            while left > 0 {
                let chunk = left.min(per);
                self.pending
                    .push_back((chunk + (IPV4_HEADER + UDP_HEADER + RTP_HEADER) as u64) as u32);
                left -= chunk;
            }
            self.pending_created = due;
            self.frame_index += 1;
            self.next_frame = due + self.frame_interval;
        }
        let len = self.pending.pop_front()?;
        let p = self
            .flow
            .packet(len, self.pending_created, L4Meta::Udp { seq: self.seq });
        self.seq += 1;
        Some(p)
    }
}

/// Receiving end of a UDP flow: counts packets, detects losses and
/// reordering from the sequence numbers, and sums one-way delays
/// (`arrival − packet.created`). Constant memory, whatever the run's
/// length: the distribution of the delays is the simulator's to record
/// (bounded histograms), not the sink's.
#[derive(Debug, Clone, Default)]
pub struct UdpSink {
    pub received: u64,
    pub bytes: u64,
    /// Highest sequence number seen + 1.
    pub next_expected: u64,
    pub reordered: u64,
    /// Sum and largest of the one-way delays of the packets received.
    pub delay_total: Duration,
    pub delay_max: Duration,
}

impl UdpSink {
    pub fn on_packet(&mut self, pkt: &Packet, now: Instant) {
        let L4Meta::Udp { seq } = pkt.l4 else { return };
        self.received += 1;
        self.bytes += pkt.len as u64;
        if seq < self.next_expected {
            self.reordered += 1;
        } else {
            self.next_expected = seq + 1;
        }
        let delay = now.saturating_since(pkt.created);
        self.delay_total += delay;
        self.delay_max = self.delay_max.max(delay);
    }
    /// Packets with a sequence number below the highest seen that never came.
    pub fn lost(&self) -> u64 {
        self.next_expected.saturating_sub(self.received)
    }
}
