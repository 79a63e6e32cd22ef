//! ICMP echo (ping): a [`Pinger`] on the server side sends echo requests at
//! a fixed interval and records the RTT of each reply; a [`PingResponder`]
//! on the UE answers each request at once with a reply of the same size.
//! Default size 84 B = 20 IPv4 + 8 ICMP + 56 data (Linux `ping`).

use super::PacketSource;
use crate::flow::FlowSpec;
use std::collections::VecDeque;
use tcran_core::packet::L4Meta;
use tcran_core::{ConfigError, Duration, Instant, Packet};

/// Linux `ping` default packet size.
pub const PING_DEFAULT_SIZE: u32 = 84;
/// Requests older than this are counted lost and forgotten.
pub const PING_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Pinger {
    flow: FlowSpec,
    ident: u16,
    size: u32,
    interval: Duration,
    next: Instant,
    stop: Option<Instant>,
    seq: u16,
    sent: u64,
    outstanding: VecDeque<(u16, Instant)>,
    /// `(reply arrival, RTT)` per answered request.
    pub rtts: Vec<(Instant, Duration)>,
    pub lost: u64,
}

impl Pinger {
    pub fn new(
        flow: FlowSpec,
        ident: u16,
        size: u32,
        interval: Duration,
        start: Instant,
        stop: Option<Instant>,
    ) -> Result<Pinger, ConfigError> {
        tcran_core::config::check_range("size", size, 28, 65_535)?;
        tcran_core::config::check_range(
            "interval",
            interval,
            Duration::from_micros(1),
            Duration::from_secs(3600),
        )?;
        Ok(Pinger {
            flow,
            ident,
            size,
            interval,
            next: start,
            stop,
            seq: 0,
            sent: 0,
            outstanding: VecDeque::new(),
            rtts: Vec::new(),
            lost: 0,
        })
    }

    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// An echo reply arrived.
    pub fn on_packet(&mut self, pkt: &Packet, now: Instant) {
        let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: true,
        } = pkt.l4
        else {
            return;
        };
        if ident != self.ident {
            return;
        }
        while let Some(&(_, t)) = self.outstanding.front() {
            if now.saturating_since(t) <= PING_TIMEOUT {
                break;
            }
            self.outstanding.pop_front();
            self.lost += 1;
        }
        if let Some(i) = self.outstanding.iter().position(|&(s, _)| s == seq) {
            let (_, sent_at) = self.outstanding.remove(i).expect("index exists");
            self.rtts.push((now, now.saturating_since(sent_at)));
        }
    }
}

impl PacketSource for Pinger {
    fn next_send(&self) -> Option<Instant> {
        super::unless_stopped(self.next, self.stop)
    }
    fn poll(&mut self, now: Instant) -> Option<Packet> {
        let due = self.next_send()?;
        if due > now {
            return None;
        }
        let l4 = L4Meta::IcmpEcho {
            ident: self.ident,
            seq: self.seq,
            reply: false,
        };
        let p = self.flow.packet(self.size, due, l4);
        self.outstanding.push_back((self.seq, due));
        self.seq = self.seq.wrapping_add(1);
        self.sent += 1;
        self.next = due + self.interval;
        Some(p)
    }
}

/// The UE side: turns each echo request into a reply.
#[derive(Debug, Clone, Default)]
pub struct PingResponder {
    out: VecDeque<Packet>,
    pub replied: u64,
}

impl PingResponder {
    pub fn on_packet(&mut self, pkt: &Packet, now: Instant) {
        let L4Meta::IcmpEcho {
            ident,
            seq,
            reply: false,
        } = pkt.l4
        else {
            return;
        };
        let back = FlowSpec {
            flow: pkt.flow.unwrap_or_default(),
            tuple: pkt.tuple,
            dscp: pkt.dscp,
            ecn: pkt.ecn,
            qfi: pkt.qfi,
        }
        .reversed();
        let mut reply = back.packet(
            pkt.len,
            now,
            L4Meta::IcmpEcho {
                ident,
                seq,
                reply: true,
            },
        );
        reply.flow = pkt.flow;
        self.out.push_back(reply);
        self.replied += 1;
    }
    pub fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.out.pop_front()
    }
}
