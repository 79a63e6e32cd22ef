//! A fast APER encoder for E2SM-TCRAN's indication message, the one hot
//! message (a report per DRB, every period, for up to thousands of DRBs).
//!
//! hampi's derived encoder appends bit by bit (about 10 µs per DRB report);
//! this one writes whole bytes where APER aligns and small bit-fields into
//! a 64-bit accumulator. It produces exactly hampi's encoding (X.691
//! aligned: constrained whole numbers as bit-fields up to a range of 255,
//! one aligned octet for 256, two for up to 64K, a length-prefixed
//! minimum-octet value above; strings as length then aligned octets),
//! which `tests/roundtrip.rs` checks value by value; hampi still decodes.

use crate::asn::e2sm_tcran as t;

/// APER bit writer.
struct Bits {
    out: Vec<u8>,
    /// Pending bits, left-aligned count in `n` (0..8).
    acc: u8,
    n: u32,
}

impl Bits {
    fn with_capacity(n: usize) -> Bits {
        Bits {
            out: Vec::with_capacity(n),
            acc: 0,
            n: 0,
        }
    }

    /// Appends the `width` low bits of `v`, most significant first.
    #[inline]
    fn bits(&mut self, v: u64, width: u32) {
        for i in (0..width).rev() {
            let bit = ((v >> i) & 1) as u8;
            self.acc |= bit << (7 - self.n);
            self.n += 1;
            if self.n == 8 {
                self.out.push(self.acc);
                self.acc = 0;
                self.n = 0;
            }
        }
    }

    #[inline]
    fn align(&mut self) {
        if self.n > 0 {
            self.out.push(self.acc);
            self.acc = 0;
            self.n = 0;
        }
    }

    #[inline]
    fn octets(&mut self, b: &[u8]) {
        self.align();
        self.out.extend_from_slice(b);
    }

    /// Constrained whole number `v` in `lb..=ub` (X.691 10.5.7, aligned).
    #[inline]
    fn constrained(&mut self, v: u64, lb: u64, ub: u64) {
        let range = (ub - lb) as u128 + 1;
        let v = v - lb;
        match range {
            1 => {}
            2..=255 => self.bits(v, 64 - ((range - 1) as u64).leading_zeros()),
            256 => self.octets(&[v as u8]),
            257..=65536 => self.octets(&(v as u16).to_be_bytes()),
            _ => {
                let max_octets = (range - 1)
                    .to_be_bytes()
                    .iter()
                    .skip_while(|b| **b == 0)
                    .count() as u64;
                let be = v.to_be_bytes();
                let first = be.iter().position(|b| *b != 0).unwrap_or(7);
                self.constrained((8 - first) as u64, 1, max_octets);
                self.octets(&be[first..]);
            }
        }
    }

    #[inline]
    fn counter(&mut self, c: &t::Counter) {
        self.constrained(c.0, 0, u64::MAX);
    }

    /// A PrintableString of `lb..=ub` characters, as hampi writes it:
    /// the length, then the characters as octets, aligned when there are
    /// more than two.
    #[inline]
    fn string(&mut self, s: &str, lb: u64, ub: u64) {
        self.constrained(s.len() as u64, lb, ub);
        if s.len() > 2 {
            self.octets(s.as_bytes());
        } else {
            for c in s.bytes() {
                self.bits(c as u64, 8);
            }
        }
    }

    fn finish(mut self) -> Vec<u8> {
        self.align();
        self.out
    }
}

fn drb_report(b: &mut Bits, r: &t::DrbReport) {
    b.bits(0, 1); // extension
    b.bits(0, 1);
    b.constrained(r.drb.rnti.0 as u64, 0, 65535);
    b.constrained(r.drb.drb.0 as u64, 1, 32);
    let x = &r.totals;
    b.bits(0, 1);
    for c in [
        &x.in_packets,
        &x.in_bytes,
        &x.out_packets,
        &x.out_bytes,
        &x.dropped_packets,
        &x.dropped_bytes,
        &x.queued_packets,
        &x.queued_bytes,
    ] {
        b.counter(c);
    }
    let c = &r.classifier;
    b.bits(0, 1);
    for c in [&c.classified, &c.defaulted, &c.missing_queue, &c.malformed] {
        b.counter(c);
    }
    b.constrained(r.queues.0.len() as u64, 0, 8192);
    for q in &r.queues.0 {
        queue(b, q);
    }
    b.string(&r.scheduler.0, 1, 32);
    let p = &r.pacer;
    b.bits(0, 1);
    b.bits(p.limit.is_some() as u64, 1);
    b.string(&p.kind.0, 1, 16);
    b.counter(&p.bandwidth_bps);
    b.counter(&p.allowance_bytes);
    if let Some(l) = &p.limit {
        b.counter(l);
    }
    b.counter(&p.refused);
    let l = &r.lower;
    b.bits(0, 1);
    for c in [
        &l.rlc_backlog_bytes,
        &l.rlc_backlog_sdus,
        &l.rlc_sojourn_us,
        &l.rlc_tx_bytes,
        &l.mac_tx_bytes,
        &l.mac_prbs,
    ] {
        b.counter(c);
    }
    b.constrained(l.mcs.0 as u64, 0, 31);
}

fn reasons(b: &mut Bits, list: &[t::ReasonCount]) {
    b.constrained(list.len() as u64, 0, 64);
    for r in list {
        b.bits(0, 1);
        b.string(&r.reason.0, 1, 32);
        b.counter(&r.count);
    }
}

fn queue(b: &mut Bits, q: &t::QueueReport) {
    b.bits(0, 1);
    b.bits(q.policer.is_some() as u64, 1);
    b.bits(q.shaper.is_some() as u64, 1);
    b.constrained(q.id.0 as u64, 0, 8191);
    b.string(&q.kind.0, 1, 16);
    for c in [
        &q.backlog_packets,
        &q.backlog_bytes,
        &q.offered_packets,
        &q.offered_bytes,
        &q.forwarded_packets,
        &q.forwarded_bytes,
    ] {
        b.counter(c);
    }
    reasons(b, &q.drops.0);
    reasons(b, &q.marks.0);
    for c in [
        &q.redirected_out,
        &q.moved_in_packets,
        &q.avg_sojourn_us,
        &q.last_sojourn_us,
    ] {
        b.counter(c);
    }
    if let Some(p) = &q.policer {
        b.bits(0, 1);
        for c in [
            &p.rate_bps,
            &p.burst_bytes,
            &p.passed_packets,
            &p.dropped_packets,
            &p.marked_packets,
            &p.redirected_packets,
            &p.measured_bps,
            &p.out_of_profile_bps,
        ] {
            b.counter(c);
        }
    }
    if let Some(s) = &q.shaper {
        b.bits(0, 1);
        for c in [&s.rate_bps, &s.measured_bps, &s.delayed] {
            b.counter(c);
        }
    }
    let a = &q.aqm;
    b.bits(0, 1);
    b.bits(a.probability_ppm.is_some() as u64, 1);
    b.bits(a.dropping.is_some() as u64, 1);
    b.bits(a.count.is_some() as u64, 1);
    if let Some(p) = &a.probability_ppm {
        b.constrained(p.0 as u64, 0, 1_000_000);
    }
    if let Some(d) = &a.dropping {
        b.bits(d.0 as u64, 1);
    }
    if let Some(c) = &a.count {
        b.counter(c);
    }
}

/// APER encoding of a `TcIndicationMessage` holding `reports`; the same
/// bytes as hampi's encoder.
pub fn indication_message(reports: &[t::DrbReport]) -> Vec<u8> {
    let mut b = Bits::with_capacity(64 + reports.len() * 160);
    b.bits(0, 1);
    b.constrained(reports.len() as u64, 0, 65535);
    for r in reports {
        drb_report(&mut b, r);
    }
    b.finish()
}

/// Length of one report's own encoding (for splitting large messages).
pub fn drb_report_len(r: &t::DrbReport) -> usize {
    let mut b = Bits::with_capacity(256);
    drb_report(&mut b, r);
    b.finish().len()
}
