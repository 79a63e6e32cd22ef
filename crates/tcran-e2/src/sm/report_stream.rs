//! E2SM-TCRAN indication messages written straight from the node's
//! statistics, one DRB at a time, into one reused buffer: the path that
//! reports 1,000 DRBs every millisecond.
//!
//! hampi encodes `DrbReport` values of the generated ASN.1 types, bit by
//! bit; building those values alone costs a dozen allocations per DRB (a
//! vector of queues, a string per queue kind and per drop reason). [`ReportStream`] writes the same bytes from
//! [`PipelineStats`] and [`LowerLayerKpis`] as they are (the field mapping
//! of [`super::e2sm_tcran::drb_report_of`], value for value), without an
//! allocation once its buffer has grown, and closes a message before it
//! would exceed its size limit, so a large report is split over the fewest
//! messages without encoding anything twice.
//!
//! The bytes are X.691 ALIGNED PER exactly as hampi writes
//! `TcIndicationMessage` (`asn1/e2sm-tcran-v1.asn`): `tests/integration/roundtrip.rs`
//! checks them against hampi's own encoder over `drb_report_of`, value by
//! value.
//!
//! Layout facts the writer relies on (X.691 10.5.7, 11.9, 27):
//! - a message is the extension bit, the report count as two aligned
//!   octets (0..65535), then the reports; the count is patched in when
//!   the message is closed;
//! - reports are not octet-aligned at their ends (a report ends with the
//!   5-bit MCS, or the handover margin's open type, the next begins with
//!   two bits), so a report that does not
//!   fit is undone by restoring the writer's position (octets written and
//!   the pending bits), never by cutting octets.

use tcran_control::{Direction, DrbKey, LowerLayerKpis};
use tcran_core::reason::{DropReason, MarkReason};
use tcran_tc::stats::{PipelineStats, QueueStats};

/// An APER bit writer over a reused buffer: pending bits are kept
/// left-aligned in a 64-bit accumulator and written out a whole octet at a
/// time. The buffer is kept longer than what was written (`pos`), so a
/// field is stored with one fixed-size copy (eight octets of a counter,
/// of which only the significant ones count) rather than a call to copy a
/// variable length.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Writer {
    buf: Vec<u8>,
    /// Octets written.
    pos: usize,
    /// Pending bits, left-aligned; fewer than 8 between calls.
    acc: u64,
    n: u32,
}

/// Where a [`Writer`] was (to undo what followed).
#[derive(Debug, Clone, Copy)]
struct Mark {
    pos: usize,
    acc: u64,
    n: u32,
}

impl Writer {
    fn clear(&mut self) {
        self.pos = 0;
        self.acc = 0;
        self.n = 0;
    }

    #[inline]
    fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            acc: self.acc,
            n: self.n,
        }
    }

    #[inline]
    fn reset_to(&mut self, m: Mark) {
        self.pos = m.pos;
        self.acc = m.acc;
        self.n = m.n;
    }

    /// Octets the message takes if it ended here.
    #[inline]
    fn len(&self) -> usize {
        self.pos + (self.n > 0) as usize
    }

    /// Room for `extra` more octets past `pos`.
    #[inline(always)]
    fn room(&mut self, extra: usize) {
        if self.pos + extra > self.buf.len() {
            self.grow(extra);
        }
    }

    #[cold]
    fn grow(&mut self, extra: usize) {
        let want = (self.pos + extra).max(self.buf.len() * 2).max(4096);
        self.buf.resize(want, 0);
    }

    /// Stores the eight octets of `v` at `pos` (the caller advances).
    #[inline(always)]
    fn put8(&mut self, v: u64) {
        self.room(8);
        self.buf[self.pos..self.pos + 8].copy_from_slice(&v.to_be_bytes());
    }

    /// Appends the `width` (at most 32) low bits of `v`, most significant
    /// first.
    #[inline(always)]
    fn bits(&mut self, v: u64, width: u32) {
        debug_assert!(width <= 32 && self.n < 8);
        if width == 0 {
            return;
        }
        let v = v & ((1u64 << width) - 1);
        self.acc |= v << (64 - self.n - width);
        self.n += width;
        if self.n >= 8 {
            // At most 39 bits pending: whole octets out, the rest kept.
            let whole = self.n / 8;
            self.put8(self.acc);
            self.pos += whole as usize;
            self.acc <<= 8 * whole;
            self.n -= 8 * whole;
        }
    }

    #[inline(always)]
    fn align(&mut self) {
        if self.n > 0 {
            self.put8(self.acc);
            self.pos += 1;
            self.acc = 0;
            self.n = 0;
        }
    }

    #[inline]
    fn octets(&mut self, b: &[u8]) {
        self.align();
        self.room(b.len());
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }

    /// A 16-bit aligned field (a constrained whole number of range
    /// 257..=65536, X.691 10.5.7.3).
    #[inline(always)]
    fn u16_aligned(&mut self, v: u16) {
        self.align();
        self.put8(u64::from(v) << 48);
        self.pos += 2;
    }

    /// A whole number in the minimum octets (at least one), aligned after
    /// its length (`len_width` bits holding the octet count minus one):
    /// X.691 10.5.7.4 for a range above 65536.
    #[inline(always)]
    fn min_octets(&mut self, v: u64, len_width: u32) {
        let len = ((64 - v.leading_zeros()).div_ceil(8)).max(1);
        self.bits(u64::from(len - 1), len_width);
        self.align();
        // The significant octets first in the eight stored.
        self.put8(v << (64 - 8 * len));
        self.pos += len as usize;
    }

    /// `Counter ::= INTEGER (0..18446744073709551615)`: range 2^64, so
    /// the length in octets (1..=8) as 3 bits, then the minimum octets,
    /// aligned.
    #[inline(always)]
    fn counter(&mut self, v: u64) {
        self.min_octets(v, 3);
    }

    /// A constrained whole number of a range above 65536 whose upper bound
    /// takes `max_octets` octets: the length (1..=max_octets) as a
    /// constrained number (X.691 10.9.3.3), then the minimum octets.
    #[inline]
    fn long_constrained(&mut self, v: u64, max_octets: u32) {
        self.min_octets(v, 32 - (max_octets - 1).leading_zeros());
    }

    /// A PrintableString of `1..=ub` characters (ub at most 32): the length
    /// (lb 1) as a bit-field, then the characters, octet-aligned when there
    /// are more than two, as hampi writes them.
    #[inline]
    fn string(&mut self, s: &str, ub: u32) {
        let width = 32 - (ub - 1).leading_zeros();
        self.bits((s.len() as u64).wrapping_sub(1), width);
        if s.len() > 2 {
            self.octets(s.as_bytes());
        } else {
            for c in s.bytes() {
                self.bits(u64::from(c), 8);
            }
        }
    }

    /// What was written, aligned.
    fn finish(&mut self) -> &[u8] {
        self.align();
        &self.buf[..self.pos]
    }
}

/// Microseconds of a duration in ms (a `Counter`: negative is 0).
#[inline]
fn us(ms: f64) -> u64 {
    (ms * 1000.0).max(0.0) as u64
}

/// A non-negative rate or size as a `Counter`.
#[inline]
fn whole(v: f64) -> u64 {
    v.max(0.0) as u64
}

/// Messages of E2SM-TCRAN `TcIndicationMessage`, written report by report
/// (see the module docs). Reuse one across periods: its buffer keeps its
/// capacity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportStream {
    w: Writer,
    count: u16,
}

impl ReportStream {
    pub fn new() -> ReportStream {
        ReportStream::default()
    }

    /// Starts a new, empty message (what was written is discarded).
    pub fn start(&mut self) {
        self.w.clear();
        // Extension bit and padding, then the count (patched at the end).
        self.w.octets(&[0, 0, 0]);
        self.count = 0;
    }

    /// Reports in the message so far.
    pub fn count(&self) -> usize {
        usize::from(self.count)
    }

    /// Octets the message takes so far.
    pub fn len(&self) -> usize {
        self.w.len()
    }

    /// Whether the message has no report yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends the report of `drb` if the message then takes at most
    /// `limit` octets, or if it is the message's first report (a report
    /// that alone exceeds the limit goes alone); returns whether it was
    /// appended (otherwise the message is as it was).
    pub fn push(
        &mut self,
        drb: DrbKey,
        stats: &PipelineStats,
        lower: &LowerLayerKpis,
        limit: usize,
    ) -> bool {
        if self.count == u16::MAX {
            return false;
        }
        let mark = self.w.mark();
        drb_report(&mut self.w, drb, stats, lower);
        if self.w.len() > limit && self.count > 0 {
            self.w.reset_to(mark);
            return false;
        }
        self.count += 1;
        true
    }

    /// The message as it stands: aligned, with its report count.
    pub fn finish(&mut self) -> &[u8] {
        let [hi, lo] = self.count.to_be_bytes();
        self.w.buf[1] = hi;
        self.w.buf[2] = lo;
        self.w.finish()
    }
}

/// The open type of `DrbRef`'s direction addition for the uplink: length
/// 1, then `TcDirection` uplink (`0 1` and padding).
pub(crate) const UPLINK_DIRECTION: [u8; 2] = [0x01, 0x40];

/// One `DrbReport` (the mapping of [`super::e2sm_tcran::drb_report_of`]).
fn drb_report(w: &mut Writer, drb: DrbKey, s: &PipelineStats, l: &LowerLayerKpis) {
    let uplink = drb.dir == Direction::Uplink;
    // DrbReport's extension bit (no optional field), DrbRef's (set when
    // its direction, an extension addition, is present: uplink only).
    w.bits(u64::from(uplink), 2);
    w.u16_aligned(drb.rnti.0);
    w.bits(u64::from(drb.drb.0.clamp(1, 32) - 1), 5);
    if uplink {
        // X.691 19.8: one addition (a normally small length, 0 + n - 1 in
        // six bits), present (bitmap 1); then the addition as an open type
        // (11.2): its length (1, aligned) and its octet, `TcDirection`'s
        // extension bit 0 and index 1 (uplink), padded.
        w.bits(0b0000_0001, 8);
        w.octets(&UPLINK_DIRECTION);
    }
    let t = &s.totals;
    w.bits(0, 1);
    for c in [
        t.in_packets,
        t.in_bytes,
        t.out_packets,
        t.out_bytes,
        t.dropped_packets,
        t.dropped_bytes,
        t.queued_packets,
        t.queued_bytes,
    ] {
        w.counter(c);
    }
    let c = &s.classifier;
    w.bits(0, 1);
    for c in [c.classified, c.defaulted, c.missing_queue, c.malformed] {
        w.counter(c);
    }
    // SIZE (0..8192): range 8193, two aligned octets.
    w.u16_aligned(s.queues.len() as u16);
    for q in &s.queues {
        queue(w, q);
    }
    w.string(&s.scheduler, 32);
    let p = &s.pacer;
    w.bits(0, 1);
    w.bits(p.limit.is_some() as u64, 1);
    w.string(&s.pacer_kind, 16);
    w.counter(whole(p.bandwidth_bps * 8.0));
    w.counter(whole(p.allowance_bytes));
    if let Some(limit) = p.limit {
        w.counter(whole(limit));
    }
    w.counter(p.refused);
    // LowerLayerKpis' extension bit: set when the handover margin, an
    // extension addition, is present.
    w.bits(u64::from(l.handover_margin_cdb.is_some()), 1);
    for c in [
        l.rlc_backlog_bytes,
        u64::from(l.rlc_backlog_sdus),
        l.rlc_sojourn.as_nanos() / 1000,
        l.rlc_tx_bytes,
        l.mac_tx_bytes,
        l.mac_prbs,
    ] {
        w.counter(c);
    }
    w.bits(u64::from(l.mcs.min(31)), 5);
    if let Some(m) = l.handover_margin_cdb {
        // As for DrbRef's direction above: one addition, present, then
        // the open type: its length (2, aligned) and `HandoverMargin`
        // (-12500..12500: a range of 25001, two aligned octets, X.691
        // 10.5.7.3) as the offset from -12500.
        w.bits(0b0000_0001, 8);
        let [hi, lo] = ((i32::from(m.clamp(-12500, 12500)) + 12500) as u16).to_be_bytes();
        w.octets(&[0x02, hi, lo]);
    }
}

/// The non-zero counts of `reasons` (SIZE (0..64): 7 bits), each a
/// `ReasonCount` (extension bit, name 1..32, count).
#[inline]
fn reasons(w: &mut Writer, labels: impl Iterator<Item = &'static str> + Clone, counts: &[u64]) {
    let n = labels.clone().zip(counts).filter(|(_, c)| **c > 0).count();
    w.bits(n as u64, 7);
    for (label, c) in labels.zip(counts) {
        if *c > 0 {
            w.bits(0, 1);
            w.string(label, 32);
            w.counter(*c);
        }
    }
}

fn queue(w: &mut Writer, q: &QueueStats) {
    w.bits(0, 1);
    w.bits(q.policer.is_some() as u64, 1);
    w.bits(q.shaper.is_some() as u64, 1);
    // (0..8191): range 8192, two aligned octets.
    w.u16_aligned(q.id.0);
    w.string(q.kind, 16);
    for c in [
        q.backlog_packets as u64,
        q.backlog_bytes,
        q.offered_packets,
        q.offered_bytes,
        q.forwarded_packets,
        q.forwarded_bytes,
    ] {
        w.counter(c);
    }
    reasons(w, DropReason::ALL.iter().map(|r| r.label()), &q.drops.0);
    reasons(w, MarkReason::ALL.iter().map(|r| r.label()), &q.marks.0);
    for c in [
        q.redirected_out,
        q.moved_in_packets,
        us(q.avg_sojourn_ms),
        us(q.last_sojourn_ms),
    ] {
        w.counter(c);
    }
    if let Some(p) = &q.policer {
        w.bits(0, 1);
        for c in [
            p.rate_bps,
            p.burst_bytes,
            p.passed_packets,
            p.dropped_packets,
            p.marked_packets,
            p.redirected_packets,
            whole(p.measured_bps),
            whole(p.out_of_profile_bps),
        ] {
            w.counter(c);
        }
    }
    if let Some(s) = &q.shaper {
        w.bits(0, 1);
        for c in [s.rate_bps, whole(s.measured_bps), s.delayed] {
            w.counter(c);
        }
    }
    let a = &q.aqm;
    w.bits(0, 1);
    w.bits(a.probability.is_some() as u64, 1);
    w.bits(a.dropping.is_some() as u64, 1);
    w.bits(a.count.is_some() as u64, 1);
    if let Some(p) = a.probability {
        // (0..1000000): range above 65536, at most 3 octets.
        w.long_constrained((p.clamp(0.0, 1.0) * 1e6) as u32 as u64, 3);
    }
    if let Some(d) = a.dropping {
        w.bits(d as u64, 1);
    }
    if let Some(c) = a.count {
        w.counter(u64::from(c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_take_the_minimum_octets() {
        let mut w = Writer::default();
        w.counter(0);
        assert_eq!(w.finish(), [0x00, 0x00]);
        let mut w = Writer::default();
        w.counter(0x1_0000);
        // length 3 -> "010" then aligned 01 00 00
        assert_eq!(w.finish(), [0b0100_0000, 0x01, 0x00, 0x00]);
        let mut w = Writer::default();
        w.bits(0b1, 1);
        w.counter(u64::MAX);
        assert_eq!(w.finish()[0], 0b1111_0000);
        assert_eq!(&w.finish()[1..], &[0xff; 8]);
    }

    #[test]
    fn an_undone_report_leaves_the_message_as_it_was() {
        let mut w = Writer::default();
        w.bits(0b101, 3);
        let m = w.mark();
        w.counter(12345);
        w.bits(1, 5);
        w.reset_to(m);
        assert_eq!((w.pos, w.n, w.acc >> 61), (0, 3, 0b101));
        w.bits(0b11111, 5);
        assert_eq!(w.finish(), [0b1011_1111]);
    }
}
