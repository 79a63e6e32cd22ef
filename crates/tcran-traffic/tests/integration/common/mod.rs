//! Test harness (not part of the product): a TCP sender and receiver joined
//! by a bottleneck link (constant rate, FIFO with a byte limit and tail drop,
//! optional CE marking above a threshold, fixed one-way propagation delay)
//! and a return path (pure delay), stepped from one wake-up time to the next.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use tcran_core::packet::L4Meta;
use tcran_core::rng::RngStream;
use tcran_core::{BitRate, Duration, FiveTuple, FlowId, Instant, Packet, Protocol};
use tcran_traffic::tcp::{TcpConfig, TcpReceiver, TcpSender};
use tcran_traffic::FlowSpec;

pub fn tuple(proto: Protocol) -> FiveTuple {
    FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 2)),
        sport: 5201,
        dport: 40000,
        proto,
    }
}

pub fn flow(id: u32, proto: Protocol) -> FlowSpec {
    FlowSpec::new(FlowId(id), tuple(proto))
}

/// One direction of a path.
#[derive(Debug)]
pub struct Link {
    /// `None` = infinitely fast (no serialization, no queue).
    pub rate: Option<BitRate>,
    pub delay: Duration,
    pub limit_bytes: u64,
    /// CE-mark ECT packets when the backlog found on arrival exceeds this.
    pub mark_above: Option<u64>,
    busy_until: Instant,
    backlog: VecDeque<(Instant, u32)>,
    backlog_bytes: u64,
    in_flight: VecDeque<(Instant, Packet)>,
    /// One-shot drops of data segments by sequence number.
    pub drop_seqs: Vec<u64>,
    pub drops: u64,
    pub marks: u64,
    pub ect_packets: u64,
    pub ect1_packets: u64,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// `(enqueue time, queueing delay)` per packet admitted.
    pub queue_delays: Vec<(Instant, Duration)>,
}

impl Link {
    pub fn new(rate: Option<BitRate>, delay: Duration, limit_bytes: u64) -> Link {
        Link {
            rate,
            delay,
            limit_bytes,
            mark_above: None,
            busy_until: Instant::ZERO,
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            in_flight: VecDeque::new(),
            drop_seqs: Vec::new(),
            drops: 0,
            marks: 0,
            ect_packets: 0,
            ect1_packets: 0,
            sent_packets: 0,
            sent_bytes: 0,
            queue_delays: Vec::new(),
        }
    }

    pub fn drain_backlog(&mut self, now: Instant) {
        while let Some(&(end, len)) = self.backlog.front() {
            if end > now {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= len as u64;
        }
    }

    pub fn send(&mut self, mut p: Packet, now: Instant) {
        if let L4Meta::Tcp(m) = p.l4 {
            if m.payload > 0 {
                if let Some(i) = self.drop_seqs.iter().position(|&s| s == m.seq) {
                    self.drop_seqs.remove(i);
                    self.drops += 1;
                    return;
                }
            }
        }
        let Some(rate) = self.rate else {
            self.sent_packets += 1;
            self.sent_bytes += p.len as u64;
            self.in_flight.push_back((now + self.delay, p));
            return;
        };
        self.drain_backlog(now);
        if self.backlog_bytes + p.len as u64 > self.limit_bytes {
            self.drops += 1;
            return;
        }
        if p.ecn.is_ect() {
            self.ect_packets += 1;
            if p.ecn == tcran_core::Ecn::Ect1 {
                self.ect1_packets += 1;
            }
            if self.mark_above.is_some_and(|k| self.backlog_bytes > k) {
                p.ecn = tcran_core::Ecn::Ce;
                self.marks += 1;
            }
        }
        let start = self.busy_until.max(now);
        let end = start + rate.time_to_send(p.len as u64);
        self.busy_until = end;
        self.backlog.push_back((end, p.len));
        self.backlog_bytes += p.len as u64;
        self.queue_delays.push((now, start.saturating_since(now)));
        self.sent_packets += 1;
        self.sent_bytes += p.len as u64;
        self.in_flight.push_back((end + self.delay, p));
    }

    pub fn next_arrival(&self) -> Option<Instant> {
        self.in_flight.front().map(|(t, _)| *t)
    }

    pub fn pop_arrival(&mut self, now: Instant) -> Option<Packet> {
        if self.next_arrival()? <= now {
            self.in_flight.pop_front().map(|(_, p)| p)
        } else {
            None
        }
    }
}

/// A record of one data packet sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendRecord {
    pub t: Instant,
    pub seq: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Option<Duration>,
}

pub struct TcpPair {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub fwd: Link,
    pub rev: Link,
    pub now: Instant,
    /// Application writes `(time, bytes)` still to happen.
    pub writes: VecDeque<(Instant, u64)>,
    pub log: Vec<SendRecord>,
    pub keep_log: bool,
}

impl TcpPair {
    /// `bulk`: infinite backlog from time 0; otherwise use `writes`.
    pub fn new(cfg: &TcpConfig, fwd: Link, rev: Link, bulk: bool, seed: u64) -> TcpPair {
        let params = cfg.build().expect("valid config");
        let f = flow(1, Protocol::TCP);
        let mut sender = TcpSender::new(params.clone(), f, RngStream::new(seed, "flow/1/tcp"));
        if bulk {
            sender = sender.bulk();
        }
        TcpPair {
            sender,
            receiver: TcpReceiver::new(params, f),
            fwd,
            rev,
            now: Instant::ZERO,
            writes: VecDeque::new(),
            log: Vec::new(),
            keep_log: false,
        }
    }

    /// The classic dumbbell: bottleneck `rate` with `buffer` bytes, one-way
    /// delay `rtt/2` each way, ACK path uncongested.
    pub fn dumbbell(
        cfg: &TcpConfig,
        rate: BitRate,
        rtt: Duration,
        buffer: u64,
        seed: u64,
    ) -> TcpPair {
        let half = Duration::from_nanos(rtt.as_nanos() / 2);
        TcpPair::new(
            cfg,
            Link::new(Some(rate), half, buffer),
            Link::new(None, half, u64::MAX),
            true,
            seed,
        )
    }

    pub fn next_time(&self) -> Option<Instant> {
        [
            self.sender.next_wakeup(),
            self.receiver.next_wakeup(),
            self.fwd.next_arrival(),
            self.rev.next_arrival(),
            self.writes.front().map(|w| w.0),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Processes everything due at the next wake-up time. Returns that time.
    pub fn step(&mut self) -> Option<Instant> {
        let t = self.next_time()?.max(self.now);
        self.now = t;
        while self.writes.front().is_some_and(|w| w.0 <= t) {
            let (_, b) = self.writes.pop_front().unwrap();
            self.sender.write(b);
        }
        if self.sender.next_wakeup().is_some_and(|w| w <= t) {
            self.sender.on_timer(t);
        }
        if self.receiver.next_wakeup().is_some_and(|w| w <= t) {
            self.receiver.on_timer(t);
        }
        while let Some(p) = self.fwd.pop_arrival(t) {
            self.receiver.on_packet(&p, t);
        }
        while let Some(p) = self.rev.pop_arrival(t) {
            self.sender.on_packet(&p, t);
        }
        while let Some(p) = self.sender.poll_transmit(t) {
            if self.keep_log {
                let L4Meta::Tcp(m) = p.l4 else { unreachable!() };
                self.log.push(SendRecord {
                    t,
                    seq: m.seq,
                    cwnd: self.sender.cwnd(),
                    ssthresh: self.sender.ssthresh(),
                    srtt: self.sender.srtt(),
                });
            }
            self.fwd.send(p, t);
        }
        while let Some(a) = self.receiver.poll_transmit(t) {
            self.rev.send(a, t);
        }
        Some(t)
    }

    /// Steps until `end` (or nothing is left to do), guarding against a
    /// state machine that keeps asking to run at the same instant.
    pub fn run_until(&mut self, end: Instant) {
        self.run_until_with(end, |_| {});
    }

    pub fn run_until_with(&mut self, end: Instant, mut each: impl FnMut(&TcpPair)) {
        let mut same = 0;
        let mut last = Instant::ZERO;
        while self.next_time().is_some_and(|t| t <= end) {
            let t = self.step().unwrap();
            if t == last {
                same += 1;
                assert!(same < 10_000, "no progress at {t:?}");
            } else {
                same = 0;
                last = t;
            }
            each(self);
        }
        self.now = end;
    }

    /// Bottleneck utilisation from 0 to `now`: bytes that finished
    /// serialization / capacity.
    pub fn utilisation(&mut self) -> f64 {
        let now = self.now;
        self.fwd.drain_backlog(now);
        let rate = self.fwd.rate.expect("rate-limited link");
        let done = self.fwd.sent_bytes - self.fwd.backlog_bytes;
        done as f64 / rate.bytes_in(now.saturating_since(Instant::ZERO))
    }
}

pub fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    assert!(!xs.is_empty());
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let i = ((xs.len() - 1) as f64 * p).round() as usize;
    xs[i]
}
