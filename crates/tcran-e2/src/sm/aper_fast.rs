//! A fast APER decoder for E2SM-TCRAN's indication message and header,
//! the one hot message on the RIC side (an xApp receives a report per DRB,
//! every period, of every node); the node writes these messages with
//! [`super::report_stream`].
//!
//! The message is read straight into [`DrbStatus`]es, the statistics types
//! an xApp reads ([`super::tc_status`]): no ASN.1 value in between, and no
//! string built for a queue kind or a reason name (they are compared, as
//! bytes checked to be UTF-8, with the static labels; the scheduler's and
//! pacer's names are the only strings, since `PipelineStats` owns them).
//!
//! It reads what hampi's derived decoder reads, the same way: integers are
//! not range-checked beyond what their bit-field holds and are cast to
//! their Rust type as hampi casts them, padding bits are skipped unread,
//! strings are UTF-8 checked. It is stricter in three places, where it
//! returns `None` so that the caller falls back to hampi (which then
//! accepts or reports the input as it always has): an extension bit set (a
//! newer schema's additions; but for `DrbRef`'s direction and
//! `LowerLayerKpis`' handover margin written as the node writes them), bytes left after the value, and a length
//! determinant beyond 16383 (X.691 fragmentation). Its result is that of
//! hampi's decoder followed by [`super::tc_status::drb_status_of`]:
//! `tests/integration/roundtrip.rs` holds the two to the same result over
//! the node's encoder output and mutations of it, the `e2_tcran_sm` fuzz
//! target over arbitrary bytes.

use super::tc_status::{self as st, DrbStatus};
use crate::asn::e2sm_tcran as t;
use tcran_control::DrbKey;
use tcran_core::reason::{DropCounts, MarkCounts};

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
        // Whole octets at an octet boundary (most of APER once aligned):
        // no shifting bit by bit.
        if self.pos.is_multiple_of(8) && width.is_multiple_of(8) {
            let v = self.buf[self.pos / 8..end / 8]
                .iter()
                .fold(0u64, |v, b| (v << 8) | *b as u64);
            self.pos = end;
            return Some(v);
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

    /// `Counter` (INTEGER (0..18446744073709551615)), the most frequent
    /// field: what [`Reader::constrained`] reads for that range, without
    /// its general steps. The range needs 8 octets, so the length is a
    /// constrained 1..=8 (3 bits), then that many aligned octets.
    #[inline]
    fn counter(&mut self) -> Option<u64> {
        let n = self.bits(3)? as usize + 1;
        let b = self.octets(n)?;
        Some(b.iter().fold(0u64, |v, b| (v << 8) | *b as u64))
    }

    /// A PrintableString of `lb..=ub` characters (8 bits each, aligned when
    /// more than two), UTF-8 checked as hampi does, handed to `f` without
    /// being copied to the heap.
    #[inline]
    fn string_with<R>(&mut self, lb: u64, ub: u64, f: impl FnOnce(&str) -> R) -> Option<R> {
        let n = self.constrained(lb, ub)? as usize;
        if n > 2 {
            let b = self.octets(n)?;
            std::str::from_utf8(b).ok().map(f)
        } else {
            let mut b = [0u8; 2];
            for c in &mut b[..n] {
                *c = self.bits(8)? as u8;
            }
            std::str::from_utf8(&b[..n]).ok().map(f)
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

fn read_counters<const N: usize>(r: &mut Reader) -> Option<[u64; N]> {
    let mut out = [0u64; N];
    for c in &mut out {
        *c = r.counter()?;
    }
    Some(out)
}

/// A list of reason counts into `out`, each name looked up by `index`
/// (a name this build does not know counts nowhere).
fn read_reasons(r: &mut Reader, index: fn(&str) -> Option<usize>, out: &mut [u64]) -> Option<()> {
    let n = r.constrained(0, 64)?;
    for _ in 0..n {
        r.no_extension()?;
        let at = r.string_with(1, 32, index)?;
        let count = r.counter()?;
        st::add_count(out, at, count);
    }
    Some(())
}

fn read_queue(r: &mut Reader) -> Option<tcran_tc::stats::QueueStats> {
    r.no_extension()?;
    let has_policer = r.bit()?;
    let has_shaper = r.bit()?;
    let id = r.constrained(0, 8191)? as u16;
    let kind = r.string_with(1, 16, st::queue_kind)?;
    let counters = read_counters(r)?;
    let mut drops = DropCounts::default();
    read_reasons(r, st::drop_index, &mut drops.0)?;
    let mut marks = MarkCounts::default();
    read_reasons(r, st::mark_index, &mut marks.0)?;
    let after = read_counters(r)?;
    let policer = if has_policer {
        r.no_extension()?;
        Some(st::policer(read_counters(r)?))
    } else {
        None
    };
    let shaper = if has_shaper {
        r.no_extension()?;
        Some(st::shaper(read_counters(r)?))
    } else {
        None
    };
    r.no_extension()?;
    let (has_p, has_d, has_c) = (r.bit()?, r.bit()?, r.bit()?);
    let probability_ppm = match has_p {
        true => Some(r.constrained(0, 1_000_000)? as u32),
        false => None,
    };
    let dropping = match has_d {
        true => Some(r.bit()?),
        false => None,
    };
    let count = match has_c {
        true => Some(r.counter()?),
        false => None,
    };
    Some(st::queue_stats(
        id,
        kind,
        counters,
        drops,
        marks,
        after,
        policer,
        shaper,
        st::aqm(probability_ppm, dropping, count),
    ))
}

fn read_drb(r: &mut Reader, time_s: f64) -> Option<DrbStatus> {
    r.no_extension()?;
    let extended = r.bit()?; // DrbRef's: its direction is present
    let rnti = r.constrained(0, 65535)? as u16;
    let drb = r.constrained(1, 32)? as u8;
    let key = if extended {
        // One addition, present (a normally small length of 1, bitmap 1),
        // as the node writes an uplink DRB (report_stream::UPLINK_DIRECTION)
        // or a peer may write a downlink one; any other shape (a later
        // version's additions) is hampi's to read.
        if r.bits(8)? != 0b0000_0001 {
            return None;
        }
        match r.octets(2)? {
            [0x01, 0x40] => DrbKey::uplink(rnti, drb),
            [0x01, 0x00] => DrbKey::new(rnti, drb),
            _ => return None,
        }
    } else {
        DrbKey::new(rnti, drb)
    };
    r.no_extension()?;
    let totals = st::totals(read_counters(r)?);
    r.no_extension()?;
    let classifier = st::classifier(read_counters(r)?);
    let n = r.constrained(0, 8192)?;
    // A queue report is at least 16 octets.
    let mut queues = Vec::with_capacity(r.capacity(n, 128));
    for _ in 0..n {
        queues.push(read_queue(r)?);
    }
    let scheduler = r.string_with(1, 32, str::to_owned)?;
    r.no_extension()?;
    let has_limit = r.bit()?;
    let pacer_kind = r.string_with(1, 16, str::to_owned)?;
    let bandwidth_bps = r.counter()?;
    let allowance_bytes = r.counter()?;
    let limit = match has_limit {
        true => Some(r.counter()?),
        false => None,
    };
    let refused = r.counter()?;
    let extended = r.bit()?; // LowerLayerKpis': the handover margin is present
    let lower = read_counters(r)?;
    let mcs = r.constrained(0, 31)? as u8;
    let margin = if extended {
        // One addition, present, as the node writes it
        // (report_stream::handover_margin); any other shape is hampi's.
        if r.bits(8)? != 0b0000_0001 {
            return None;
        }
        match r.octets(3)? {
            [0x02, hi, lo] => Some((i32::from(u16::from_be_bytes([*hi, *lo])) - 12500) as i16),
            _ => return None,
        }
    } else {
        None
    };
    Some(st::drb_status_from(
        key,
        time_s,
        totals,
        classifier,
        queues,
        scheduler,
        pacer_kind,
        st::pacer(bandwidth_bps, allowance_bytes, limit, refused),
        st::lower(lower, mcs, margin),
    ))
}

/// Decodes a `TcIndicationMessage` into one [`DrbStatus`] per report
/// (`time_s`: the node's clock, from the header), as hampi's decoder and
/// [`super::tc_status::drb_status_of`] would, or `None` where this decoder
/// leaves the input to hampi (see above).
pub fn decode_statuses(bytes: &[u8], time_s: f64) -> Option<Vec<DrbStatus>> {
    let mut r = Reader::new(bytes);
    r.no_extension()?;
    let n = r.constrained(0, 65535)?;
    // A DRB report is at least 40 octets.
    let mut drbs = Vec::with_capacity(r.capacity(n, 320));
    for _ in 0..n {
        drbs.push(read_drb(&mut r, time_s)?);
    }
    r.finished()?;
    Some(drbs)
}

/// Decodes a `TcIndicationHeader` as hampi would, or `None` where this
/// decoder leaves the input to hampi.
pub fn decode_indication_header(bytes: &[u8]) -> Option<t::TcIndicationHeader> {
    let mut r = Reader::new(bytes);
    r.no_extension()?;
    let time_ns = t::Counter(r.counter()?);
    // ENUMERATED { periodic, condition, ... }: extension bit, one bit.
    r.no_extension()?;
    let cause = t::TcIndicationHeaderCause(r.bits(1)? as u8);
    r.finished()?;
    Some(t::TcIndicationHeader { time_ns, cause })
}
