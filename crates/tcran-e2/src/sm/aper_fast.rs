//! A fast APER decoder for E2SM-TCRAN's indication message and header,
//! the one hot message on the RIC side (an xApp receives a report per DRB,
//! every period, of every node); the node writes these messages with
//! [`super::report_stream`].
//!
//! It reads what hampi's derived decoder reads, the same way: integers are
//! not range-checked beyond what their bit-field holds and are cast to
//! their Rust type as hampi casts them, padding bits are skipped unread,
//! strings are UTF-8 checked. It is stricter in three places, where it
//! returns `None` so that the caller falls back to hampi (which then
//! accepts or reports the input as it always has): an extension bit set (a
//! newer schema's additions), bytes left after the value, and a length
//! determinant beyond 16383 (X.691 fragmentation). `tests/integration/roundtrip.rs`
//! holds both decoders to the same result over hampi's encoding and
//! mutations of it; the `e2_tcran_sm` fuzz target over arbitrary bytes.

use crate::asn::e2sm_tcran as t;

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
    fn counter(&mut self) -> Option<t::Counter> {
        let n = self.bits(3)? as usize + 1;
        let b = self.octets(n)?;
        Some(t::Counter(b.iter().fold(0u64, |v, b| (v << 8) | *b as u64)))
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
