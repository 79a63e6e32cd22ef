//! The receiving end (UE side) of a TCP connection: reassembly, delayed and
//! selective ACKs, ECN echo. See the [module docs](super) for the rules.

use super::{TcpParams, HEADER_BYTES};
use crate::flow::FlowSpec;
use std::collections::VecDeque;
use tcran_core::packet::{L4Meta, TcpFlags, TcpMeta};
use tcran_core::{Duration, Instant, Packet};

/// An out-of-order range `[start, end)` and when it last grew (for the RFC
/// 2018 rule that the first SACK block reports the most recent arrival).
#[derive(Debug, Clone, Copy)]
struct OooRange {
    start: u64,
    end: u64,
    touched: u64,
}

/// Receiver statistics and the inputs for one-way-delay metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpReceiverStats {
    pub segments_received: u64,
    pub payload_bytes_received: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    pub ce_segments: u64,
    pub acks_sent: u64,
    /// One-way delay (arrival − `packet.created`) of the last data segment.
    pub last_one_way_delay: Option<Duration>,
}

/// TCP receiver state machine.
#[derive(Debug, Clone)]
pub struct TcpReceiver {
    p: TcpParams,
    /// Identity of the ACK direction (the data flow reversed).
    ack_flow: FlowSpec,
    rcv_nxt: u64,
    ooo: Vec<OooRange>,
    arrivals: u64,
    /// Full-sized segments received since the last ACK.
    unacked_segments: u32,
    delack_deadline: Option<Instant>,
    /// Accurate echo: CE state of the data not yet acknowledged.
    ce_state: bool,
    /// RFC 3168: ECE on every ACK until a CWR arrives.
    ece_sticky: bool,
    ts_recent: u64,
    out: VecDeque<Packet>,
    stats: TcpReceiverStats,
    /// `(time, in-order bytes)` whenever `rcv_nxt` crosses a watched offset.
    completion_watch: Option<u64>,
    completed_at: Option<Instant>,
}

impl TcpReceiver {
    /// `data_flow` is the identity of the *data* direction; ACKs use its reverse.
    pub fn new(params: TcpParams, data_flow: FlowSpec) -> TcpReceiver {
        TcpReceiver {
            p: params,
            ack_flow: data_flow.reversed(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            arrivals: 0,
            unacked_segments: 0,
            delack_deadline: None,
            ce_state: false,
            ece_sticky: false,
            ts_recent: 0,
            out: VecDeque::new(),
            stats: TcpReceiverStats::default(),
            completion_watch: None,
            completed_at: None,
        }
    }

    /// Next byte expected (= in-order bytes delivered to the application).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn stats(&self) -> &TcpReceiverStats {
        &self.stats
    }
    /// Records the time at which `bytes` in-order bytes have arrived (e.g. the
    /// end of a finite transfer or of a web page).
    pub fn watch_completion(&mut self, bytes: u64) {
        self.completion_watch = Some(bytes);
        self.completed_at = None;
        if self.rcv_nxt >= bytes {
            self.completion_watch = None;
        }
    }
    pub fn completed_at(&self) -> Option<Instant> {
        self.completed_at
    }

    pub fn on_packet(&mut self, pkt: &Packet, now: Instant) {
        let L4Meta::Tcp(m) = pkt.l4 else { return };
        if m.payload == 0 {
            return;
        }
        self.stats.segments_received += 1;
        self.stats.payload_bytes_received += m.payload as u64;
        self.stats.last_one_way_delay = Some(now.saturating_since(pkt.created));
        let ce = pkt.ecn == tcran_core::Ecn::Ce;
        if ce {
            self.stats.ce_segments += 1;
        }
        let mut ack_now = false;
        if self.p.accurate_ecn {
            if ce != self.ce_state && self.unacked_segments > 0 {
                // RFC 8257 §3.2: ACK what came before with the old CE state.
                self.emit_ack(now);
            }
            self.ce_state = ce;
        } else if self.p.ecn {
            if m.flags.has(TcpFlags::CWR) {
                self.ece_sticky = false;
            }
            if ce {
                self.ece_sticky = true;
            }
        }

        let start = m.seq;
        let end = m.seq + m.payload as u64;
        let had_holes = !self.ooo.is_empty();
        if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            ack_now = true;
        } else if start <= self.rcv_nxt {
            if start == self.rcv_nxt || m.ts_val > self.ts_recent {
                self.ts_recent = m.ts_val;
            }
            self.rcv_nxt = end;
            self.absorb_ooo();
            ack_now |= had_holes;
        } else {
            self.stats.out_of_order_segments += 1;
            self.insert_ooo(start, end);
            ack_now = true;
        }
        if let Some(target) = self.completion_watch {
            if self.rcv_nxt >= target {
                self.completed_at = Some(now);
                self.completion_watch = None;
            }
        }

        if m.payload >= self.p.mss {
            self.unacked_segments += 1;
        } else {
            // A small segment still needs acknowledging, by the timer at latest.
            self.unacked_segments = self.unacked_segments.max(1);
        }
        if ack_now || self.unacked_segments >= self.p.delayed_ack_segments {
            self.emit_ack(now);
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.p.delayed_ack_timeout);
        }
    }

    pub fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.out.pop_front()
    }

    pub fn next_wakeup(&self) -> Option<Instant> {
        self.delack_deadline
    }

    pub fn on_timer(&mut self, now: Instant) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.emit_ack(now);
        }
    }

    fn absorb_ooo(&mut self) {
        // Ranges are sorted by start and disjoint.
        while let Some(first) = self.ooo.first() {
            if first.start > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(first.end);
            self.ooo.remove(0);
        }
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        self.arrivals += 1;
        let touched = self.arrivals;
        let i = self.ooo.partition_point(|r| r.end < start);
        let mut merged = OooRange {
            start,
            end,
            touched,
        };
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].start <= end {
            merged.start = merged.start.min(self.ooo[j].start);
            merged.end = merged.end.max(self.ooo[j].end);
            j += 1;
        }
        self.ooo.splice(i..j, std::iter::once(merged));
    }

    fn sack_blocks(&self) -> [(u64, u64); 3] {
        let mut blocks = [(0, 0); 3];
        if !self.p.sack {
            return blocks;
        }
        // The three most recently touched ranges, most recent first.
        let mut picked: [Option<&OooRange>; 3] = [None; 3];
        for r in &self.ooo {
            let mut cand = r;
            for slot in picked.iter_mut() {
                match slot {
                    None => {
                        *slot = Some(cand);
                        break;
                    }
                    Some(s) if cand.touched > s.touched => {
                        let prev = *s;
                        *slot = Some(cand);
                        cand = prev;
                    }
                    _ => {}
                }
            }
        }
        for (b, r) in blocks.iter_mut().zip(picked) {
            if let Some(r) = r {
                *b = (r.start, r.end);
            }
        }
        blocks
    }

    fn emit_ack(&mut self, now: Instant) {
        let sack = self.sack_blocks();
        let n_blocks = sack.iter().filter(|b| b.1 > b.0).count() as u32;
        let sack_option = if n_blocks == 0 {
            0
        } else {
            (2 + 8 * n_blocks).div_ceil(4) * 4
        };
        let ece = if self.p.accurate_ecn {
            self.ce_state
        } else {
            self.p.ecn && self.ece_sticky
        };
        let mut flags = TcpFlags::ACK;
        if ece {
            flags |= TcpFlags::ECE;
        }
        let meta = TcpMeta {
            seq: 0,
            ack: self.rcv_nxt,
            payload: 0,
            flags: TcpFlags(flags),
            ts_val: now.as_nanos(),
            ts_ecr: self.ts_recent,
            sack,
        };
        let pkt = self
            .ack_flow
            .packet(HEADER_BYTES + sack_option, now, L4Meta::Tcp(meta));
        self.out.push_back(pkt);
        self.stats.acks_sent += 1;
        self.unacked_segments = 0;
        self.delack_deadline = None;
    }
}
