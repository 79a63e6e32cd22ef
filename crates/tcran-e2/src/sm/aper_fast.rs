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

// ------------------------------------------------------------------ decode
//
// The matching decoder, for the RIC side (an xApp receives every report of
// every node). It reads what hampi's derived decoder reads, the same way:
// integers are not range-checked beyond what their bit-field holds and are
// cast to their Rust type as hampi casts them, padding bits are skipped
// unread, strings are UTF-8 checked. It is stricter in three places, where
// it returns `None` so that the caller falls back to hampi (which then
// accepts or reports the input as it always has): an extension bit set (a
// newer schema's additions), bytes left after the value, and a length
// determinant beyond 16383 (X.691 fragmentation). `tests/roundtrip.rs`
// holds both decoders to the same result over the encoder's output and
// mutations of it; the `e2_tcran_sm` fuzz target over arbitrary bytes.

/// APER bit reader.
struct Reader<'a> {
    buf: &'a [u8],
    /// Bit position.
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// The next `width` (at most 64) bits, most significant first.
    #[inline]
    fn bits(&mut self, width: u32) -> Option<u64> {
        debug_assert!(width <= 64);
        let end = self.pos.checked_add(width as usize)?;
        if end > self.buf.len() * 8 {
            return None;
        }
        let mut v = 0u64;
        let mut p = self.pos;
        while p < end {
            let off = p % 8;
            let take = (8 - off).min(end - p);
            let chunk = (self.buf[p / 8] >> (8 - off - take)) as u64 & ((1u64 << take) - 1);
            // `take` < 64, so the shift never overflows; bits above the
            // 64th cannot exist since width <= 64.
            v = (v << take) | chunk;
            p += take;
        }
        self.pos = end;
        Some(v)
    }

    #[inline]
    fn bit(&mut self) -> Option<bool> {
        self.bits(1).map(|b| b == 1)
    }

    /// An extension bit that must be clear (else: not ours, fall back).
    #[inline]
    fn no_extension(&mut self) -> Option<()> {
        (!self.bit()?).then_some(())
    }

    #[inline]
    fn align(&mut self) {
        self.pos = self.pos.div_ceil(8) * 8;
    }

    /// `n` whole octets, aligned first.
    #[inline]
    fn octets(&mut self, n: usize) -> Option<&'a [u8]> {
        self.align();
        let start = self.pos / 8;
        let b = self.buf.get(start..start.checked_add(n)?)?;
        self.pos += n * 8;
        Some(b)
    }

    /// Constrained whole number in `lb..=ub` (X.691 10.5.7, aligned), as
    /// hampi reads it: the offset is added to `lb` unchecked.
    #[inline]
    fn constrained(&mut self, lb: u64, ub: u64) -> Option<u64> {
        let range = (ub - lb) as u128 + 1;
        let v = match range {
            1 => 0,
            2..=255 => self.bits(64 - ((range - 1) as u64).leading_zeros())?,
            256 => {
                self.align();
                self.bits(8)?
            }
            257..=65536 => {
                self.align();
                self.bits(16)?
            }
            _ => {
                let max_octets = (128 - (range - 1).leading_zeros()).div_ceil(8) as u64;
                let n = self.constrained(1, max_octets)?;
                // hampi reads up to 8 octets here into an i128; more
                // (impossible for tcran's ranges) is left to hampi.
                if n > 8 {
                    return None;
                }
                let mut v = 0u64;
                for b in self.octets(n as usize)? {
                    v = (v << 8) | *b as u64;
                }
                v
            }
        };
        lb.checked_add(v)
    }

    #[inline]
    fn counter(&mut self) -> Option<t::Counter> {
        self.constrained(0, u64::MAX).map(t::Counter)
    }

    /// A PrintableString of `lb..=ub` characters (8 bits each, aligned when
    /// more than two), UTF-8 checked as hampi does.
    #[inline]
    fn string(&mut self, lb: u64, ub: u64) -> Option<String> {
        let n = self.constrained(lb, ub)? as usize;
        if n > 2 {
            let b = self.octets(n)?;
            std::str::from_utf8(b).ok().map(str::to_owned)
        } else {
            let mut b = Vec::with_capacity(n);
            for _ in 0..n {
                b.push(self.bits(8)? as u8);
            }
            String::from_utf8(b).ok()
        }
    }

    /// Nothing but padding left.
    fn finished(mut self) -> Option<()> {
        self.align();
        (self.pos == self.buf.len() * 8).then_some(())
    }

    /// A capacity for `n` items of at least `min_bits` each: never more
    /// than what the remaining input can hold.
    fn capacity(&self, n: u64, min_bits: usize) -> usize {
        let left = (self.buf.len() * 8).saturating_sub(self.pos) / min_bits.max(1);
        (n as usize).min(left)
    }
}

fn read_counters<const N: usize>(r: &mut Reader) -> Option<[t::Counter; N]> {
    let mut out = [const { t::Counter(0) }; N];
    for c in &mut out {
        *c = r.counter()?;
    }
    Some(out)
}

fn read_reasons(r: &mut Reader) -> Option<Vec<t::ReasonCount>> {
    let n = r.constrained(0, 64)?;
    let mut out = Vec::with_capacity(r.capacity(n, 8));
    for _ in 0..n {
        r.no_extension()?;
        out.push(t::ReasonCount {
            reason: t::ReasonCountReason(r.string(1, 32)?),
            count: r.counter()?,
        });
    }
    Some(out)
}

fn read_queue(r: &mut Reader) -> Option<t::QueueReport> {
    r.no_extension()?;
    let has_policer = r.bit()?;
    let has_shaper = r.bit()?;
    let id = t::QueueReportId(r.constrained(0, 8191)? as u16);
    let kind = t::QueueReportKind(r.string(1, 16)?);
    let [backlog_packets, backlog_bytes, offered_packets, offered_bytes, forwarded_packets, forwarded_bytes] =
        read_counters(r)?;
    let drops = t::QueueReportDrops(read_reasons(r)?);
    let marks = t::QueueReportMarks(read_reasons(r)?);
    let [redirected_out, moved_in_packets, avg_sojourn_us, last_sojourn_us] = read_counters(r)?;
    let policer = if has_policer {
        r.no_extension()?;
        let [rate_bps, burst_bytes, passed_packets, dropped_packets, marked_packets, redirected_packets, measured_bps, out_of_profile_bps] =
            read_counters(r)?;
        Some(t::PolicerReport {
            rate_bps,
            burst_bytes,
            passed_packets,
            dropped_packets,
            marked_packets,
            redirected_packets,
            measured_bps,
            out_of_profile_bps,
        })
    } else {
        None
    };
    let shaper = if has_shaper {
        r.no_extension()?;
        let [rate_bps, measured_bps, delayed] = read_counters(r)?;
        Some(t::ShaperReport {
            rate_bps,
            measured_bps,
            delayed,
        })
    } else {
        None
    };
    r.no_extension()?;
    let (has_p, has_d, has_c) = (r.bit()?, r.bit()?, r.bit()?);
    let probability_ppm = match has_p {
        true => Some(t::AqmReportProbabilityPpm(
            r.constrained(0, 1_000_000)? as u32
        )),
        false => None,
    };
    let dropping = match has_d {
        true => Some(t::AqmReportDropping(r.bit()?)),
        false => None,
    };
    let count = match has_c {
        true => Some(r.counter()?),
        false => None,
    };
    Some(t::QueueReport {
        id,
        kind,
        backlog_packets,
        backlog_bytes,
        offered_packets,
        offered_bytes,
        forwarded_packets,
        forwarded_bytes,
        drops,
        marks,
        redirected_out,
        moved_in_packets,
        avg_sojourn_us,
        last_sojourn_us,
        policer,
        shaper,
        aqm: t::AqmReport {
            probability_ppm,
            dropping,
            count,
        },
    })
}

fn read_drb_report(r: &mut Reader) -> Option<t::DrbReport> {
    r.no_extension()?;
    r.no_extension()?; // DrbRef
    let drb = t::DrbRef {
        rnti: t::DrbRefRnti(r.constrained(0, 65535)? as u16),
        drb: t::DrbRefDrb(r.constrained(1, 32)? as u8),
    };
    r.no_extension()?;
    let [in_packets, in_bytes, out_packets, out_bytes, dropped_packets, dropped_bytes, queued_packets, queued_bytes] =
        read_counters(r)?;
    r.no_extension()?;
    let [classified, defaulted, missing_queue, malformed] = read_counters(r)?;
    let n = r.constrained(0, 8192)?;
    // A queue report is at least 16 octets.
    let mut queues = Vec::with_capacity(r.capacity(n, 128));
    for _ in 0..n {
        queues.push(read_queue(r)?);
    }
    let scheduler = t::DrbReportScheduler(r.string(1, 32)?);
    r.no_extension()?;
    let has_limit = r.bit()?;
    let kind = t::PacerReportKind(r.string(1, 16)?);
    let bandwidth_bps = r.counter()?;
    let allowance_bytes = r.counter()?;
    let limit = match has_limit {
        true => Some(r.counter()?),
        false => None,
    };
    let refused = r.counter()?;
    r.no_extension()?;
    let [rlc_backlog_bytes, rlc_backlog_sdus, rlc_sojourn_us, rlc_tx_bytes, mac_tx_bytes, mac_prbs] =
        read_counters(r)?;
    let mcs = t::LowerLayerKpisMcs(r.constrained(0, 31)? as u8);
    Some(t::DrbReport {
        drb,
        totals: t::PipelineTotals {
            in_packets,
            in_bytes,
            out_packets,
            out_bytes,
            dropped_packets,
            dropped_bytes,
            queued_packets,
            queued_bytes,
        },
        classifier: t::ClassifierCounters {
            classified,
            defaulted,
            missing_queue,
            malformed,
        },
        queues: t::DrbReportQueues(queues),
        scheduler,
        pacer: t::PacerReport {
            kind,
            bandwidth_bps,
            allowance_bytes,
            limit,
            refused,
        },
        lower: t::LowerLayerKpis {
            rlc_backlog_bytes,
            rlc_backlog_sdus,
            rlc_sojourn_us,
            rlc_tx_bytes,
            mac_tx_bytes,
            mac_prbs,
            mcs,
        },
    })
}

/// Decodes a `TcIndicationMessage` as hampi would, or `None` where this
/// decoder leaves the input to hampi (see above).
pub fn decode_indication_message(bytes: &[u8]) -> Option<t::TcIndicationMessage> {
    let mut r = Reader::new(bytes);
    r.no_extension()?;
    let n = r.constrained(0, 65535)?;
    // A DRB report is at least 40 octets.
    let mut reports = Vec::with_capacity(r.capacity(n, 320));
    for _ in 0..n {
        reports.push(read_drb_report(&mut r)?);
    }
    r.finished()?;
    Some(t::TcIndicationMessage {
        reports: t::TcIndicationMessageReports(reports),
    })
}

/// Decodes a `TcIndicationHeader` as hampi would, or `None` where this
/// decoder leaves the input to hampi.
pub fn decode_indication_header(bytes: &[u8]) -> Option<t::TcIndicationHeader> {
    let mut r = Reader::new(bytes);
    r.no_extension()?;
    let time_ns = r.counter()?;
    // ENUMERATED { periodic, condition, ... }: extension bit, one bit.
    r.no_extension()?;
    let cause = t::TcIndicationHeaderCause(r.bits(1)? as u8);
    r.finished()?;
    Some(t::TcIndicationHeader { time_ns, cause })
}
