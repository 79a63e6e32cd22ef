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
    ooo: VecDeque<OooRange>,
    /// The (up to) three ranges of `ooo` touched last, most recent first,
    /// when `recent_known`: what the SACK option reports, kept up to date
    /// as ranges come and go so that an ACK does not scan the (possibly
    /// hundreds of) ranges. Ranges never change in place (a merge makes a
    /// new range with a new `touched`), so copies stay exact.
    recent: [Option<OooRange>; 3],
    recent_known: bool,
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
            ooo: VecDeque::new(),
            recent: [None; 3],
            recent_known: true,
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
        while let Some(first) = self.ooo.front() {
            if first.start > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(first.end);
            let gone = self.ooo.pop_front().expect("non-empty");
            self.forget_recent(gone.touched);
        }
    }

    /// A range left `ooo`: drop it from `recent`; if that leaves fewer
    /// known than `ooo` has to report, the next ACK looks again.
    fn forget_recent(&mut self, touched: u64) {
        if !self.recent_known {
            return;
        }
        let Some(k) = self
            .recent
            .iter()
            .position(|r| r.is_some_and(|r| r.touched == touched))
        else {
            return;
        };
        self.recent.copy_within(k + 1.., k);
        self.recent[2] = None;
        let known = self.recent.iter().flatten().count();
        if known < self.ooo.len().min(3) {
            self.recent_known = false;
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
        for r in self.ooo.range(i..j) {
            let k = self
                .recent
                .iter()
                .position(|x| x.is_some_and(|x| x.touched == r.touched));
            if let Some(k) = k {
                self.recent.copy_within(k + 1.., k);
                self.recent[2] = None;
            }
        }
        if i == j {
            self.ooo.insert(i, merged);
        } else {
            self.ooo[i] = merged;
            self.ooo.drain(i + 1..j);
        }
        // The new range is the most recent; the others keep their order.
        self.recent.copy_within(0..2, 1);
        self.recent[0] = Some(merged);
        let known = self.recent.iter().flatten().count();
        if known < self.ooo.len().min(3) {
            self.recent_known = false;
        }
    }

    /// The three most recently touched ranges, most recent first.
    fn scan_recent(&self) -> [Option<OooRange>; 3] {
        let mut picked: [Option<OooRange>; 3] = [None; 3];
        for r in &self.ooo {
            let mut cand = *r;
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
        picked
    }

    fn sack_blocks(&mut self) -> [(u64, u64); 3] {
        let mut blocks = [(0, 0); 3];
        if !self.p.sack {
            return blocks;
        }
        if !self.recent_known {
            self.recent = self.scan_recent();
            self.recent_known = true;
        }
        debug_assert_eq!(
            self.recent.map(|r| r.map(|r| r.touched)),
            self.scan_recent().map(|r| r.map(|r| r.touched))
        );
        for (b, r) in blocks.iter_mut().zip(self.recent) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::TcpConfig;
    use tcran_core::{FiveTuple, FlowId};

    /// The SACK ranges kept up to date as ranges come, merge and go are
    /// those a full scan picks, through random reordering and loss.
    #[test]
    fn recent_ranges_match_a_full_scan() {
        let p = TcpConfig::default().build().unwrap();
        let mss = u64::from(p.mss);
        for seed in 1..200u64 {
            let mut rx =
                TcpReceiver::new(p.clone(), FlowSpec::new(FlowId(0), FiveTuple::default()));
            let mut x = seed;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            // Segments 0..n arrive shuffled within a sliding window; some
            // are lost and retransmitted later.
            let n = 300;
            let mut order: Vec<u64> = (0..n).collect();
            for i in 0..order.len() {
                let j = (i + (next() % 12) as usize).min(order.len() - 1);
                order.swap(i, j);
            }
            let mut lost = Vec::new();
            let mut now = Instant::ZERO;
            let deliver = |rx: &mut TcpReceiver, k: u64, now: Instant| {
                let meta = TcpMeta {
                    seq: k * mss,
                    payload: p.mss,
                    ..TcpMeta::default()
                };
                let pkt = FlowSpec::new(FlowId(0), FiveTuple::default()).packet(
                    1500,
                    now,
                    L4Meta::Tcp(meta),
                );
                rx.on_packet(&pkt, now);
                while rx.poll_transmit(now).is_some() {}
                if rx.recent_known {
                    let got = rx.recent.map(|r| r.map(|r| (r.start, r.end, r.touched)));
                    let want = rx
                        .scan_recent()
                        .map(|r| r.map(|r| (r.start, r.end, r.touched)));
                    assert_eq!(got, want, "seed {seed}");
                }
                rx.sack_blocks();
                assert!(rx.recent_known);
            };
            for k in order {
                now += Duration::from_micros(100);
                if next() % 10 == 0 {
                    lost.push(k);
                    continue;
                }
                deliver(&mut rx, k, now);
                if next() % 7 == 0 {
                    if let Some(l) = lost.pop() {
                        deliver(&mut rx, l, now);
                    }
                }
            }
            for l in lost {
                deliver(&mut rx, l, now);
            }
            assert_eq!(rx.rcv_nxt(), n * mss, "seed {seed}");
            assert!(rx.ooo.is_empty());
        }
    }
}
