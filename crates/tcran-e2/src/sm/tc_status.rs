//! E2SM-TCRAN indications as tcran's own statistics types: the RIC side's
//! view of a node's DRBs (`tcran_xapp` re-exports these as its `report`
//! module).
//!
//! A `DrbReport` of E2SM-TCRAN (`asn1/e2sm-tcran-v1.asn`) is the node's
//! `PipelineStats` and lower-layer KPIs in ASN.1; [`DrbStatus`] turns it
//! back into those types, so an xApp reads the same structs an in-process
//! controller does. What the ASN.1 does not carry is zero: the policer's
//! and shaper's token levels and byte counters (`tokens_bytes`,
//! `passed_bytes`, ...), RED's average queue size. Rates travel in whole
//! bit/s and sojourns in whole microseconds. A queue kind this build does
//! not know shows as "other"; a drop or mark reason it does not know is
//! left out.
//!
//! Two ways to the same result: [`decode_tc`], the RIC's hot path, reads
//! the indication message straight into [`DrbStatus`]es
//! (`super::aper_fast::decode_statuses`: no ASN.1 value in between, no
//! string built for a queue kind or a reason name) and leaves to hampi
//! what that decoder does not take; [`decode_tc_generic`] is hampi's
//! decoder followed by [`drb_status_of`], the reference the direct path
//! is property-tested and fuzzed against. Both build their values with
//! the constructors below, so a conversion rule lives in one place.

use super::{aper, SmDecodeError};
use crate::asn::e2sm_tcran as t;
use tcran_control::{DrbKey, LowerLayerKpis};
use tcran_core::reason::{DropCounts, DropReason, MarkCounts, MarkReason};
use tcran_core::{Duration, QueueId};
use tcran_tc::policer::PolicerStats;
use tcran_tc::stage::{AqmStats, LowerState, PacerStats, ShaperStats};
use tcran_tc::stats::{ClassifierStats, PipelineStats, QueueStats, Totals};

/// One DRB as a report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DrbStatus {
    pub drb: DrbKey,
    pub stats: PipelineStats,
    pub lower: LowerLayerKpis,
}

/// One E2SM-TCRAN indication.
#[derive(Debug, Clone, PartialEq)]
pub struct TcIndication {
    /// The node's clock when it reported, ns.
    pub time_ns: u64,
    /// A condition trigger fired (else: periodic).
    pub condition: bool,
    pub drbs: Vec<DrbStatus>,
}

/// Queue kinds are `&'static str` in `QueueStats`; a kind this build does
/// not know (a newer node, a plug-in) shows as "other".
pub fn queue_kind(s: &str) -> &'static str {
    const KINDS: [&str; 7] = ["fifo", "codel", "red", "pie", "l4s", "dualq", "plugin"];
    KINDS.iter().find(|k| **k == s).copied().unwrap_or("other")
}

/// The index of drop reason `name` in [`DropCounts`], if this build knows
/// it. Names are compared with the reasons' static labels: this runs for
/// every reason of every queue of every DRB of every indication, so no
/// string is built per comparison.
pub(crate) fn drop_index(name: &str) -> Option<usize> {
    DropReason::ALL
        .iter()
        .find(|r| r.label() == name)
        .map(|r| r.index())
}

/// [`drop_index`] for mark reasons ([`MarkCounts`]).
pub(crate) fn mark_index(name: &str) -> Option<usize> {
    MarkReason::ALL
        .iter()
        .find(|r| r.label() == name)
        .map(|r| r.index())
}

/// Adds `count` at `index` (a reason named twice adds up, saturating).
#[inline]
pub(crate) fn add_count(out: &mut [u64], index: Option<usize>, count: u64) {
    if let Some(slot) = index.and_then(|i| out.get_mut(i)) {
        *slot = slot.saturating_add(count);
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

pub(crate) fn totals(c: [u64; 8]) -> Totals {
    let [in_packets, in_bytes, out_packets, out_bytes, dropped_packets, dropped_bytes, queued_packets, queued_bytes] =
        c;
    Totals {
        in_packets,
        in_bytes,
        out_packets,
        out_bytes,
        dropped_packets,
        dropped_bytes,
        queued_packets,
        queued_bytes,
    }
}

pub(crate) fn classifier(c: [u64; 4]) -> ClassifierStats {
    let [classified, defaulted, missing_queue, malformed] = c;
    ClassifierStats {
        classified,
        defaulted,
        missing_queue,
        malformed,
    }
}

/// A queue's statistics: `c` are the six counters before the drops
/// (backlog, offered, forwarded: packets and bytes), `after` the four
/// after the marks (redirected out, moved in, average and last sojourn in
/// µs), as the ASN.1 orders them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn queue_stats(
    id: u16,
    kind: &'static str,
    c: [u64; 6],
    drops: DropCounts,
    marks: MarkCounts,
    after: [u64; 4],
    policer: Option<PolicerStats>,
    shaper: Option<ShaperStats>,
    aqm: AqmStats,
) -> QueueStats {
    let [backlog_packets, backlog_bytes, offered_packets, offered_bytes, forwarded_packets, forwarded_bytes] =
        c;
    let [redirected_out, moved_in_packets, avg_sojourn_us, last_sojourn_us] = after;
    QueueStats {
        id: QueueId(id),
        kind,
        backlog_packets: backlog_packets as usize,
        backlog_bytes,
        offered_packets,
        offered_bytes,
        forwarded_packets,
        forwarded_bytes,
        drops,
        marks,
        redirected_out,
        moved_in_packets,
        avg_sojourn_ms: ms(avg_sojourn_us),
        last_sojourn_ms: ms(last_sojourn_us),
        policer,
        shaper,
        aqm,
    }
}

pub(crate) fn policer(c: [u64; 8]) -> PolicerStats {
    let [rate_bps, burst_bytes, passed_packets, dropped_packets, marked_packets, redirected_packets, measured_bps, out_of_profile_bps] =
        c;
    PolicerStats {
        rate_bps,
        burst_bytes,
        passed_packets,
        dropped_packets,
        marked_packets,
        redirected_packets,
        measured_bps: measured_bps as f64,
        out_of_profile_bps: out_of_profile_bps as f64,
        ..Default::default()
    }
}

pub(crate) fn shaper(c: [u64; 3]) -> ShaperStats {
    let [rate_bps, measured_bps, delayed] = c;
    ShaperStats {
        rate_bps,
        measured_bps: measured_bps as f64,
        tokens_bytes: 0.0,
        delayed,
    }
}

pub(crate) fn aqm(
    probability_ppm: Option<u32>,
    dropping: Option<bool>,
    count: Option<u64>,
) -> AqmStats {
    AqmStats {
        probability: probability_ppm.map(|p| p as f64 / 1e6),
        dropping,
        count: count.map(|c| c.min(u32::MAX as u64) as u32),
        average: None,
    }
}

/// The pacer's statistics from the report's bit/s, allowance, limit and
/// refusals.
pub(crate) fn pacer(
    bandwidth_bps: u64,
    allowance_bytes: u64,
    limit: Option<u64>,
    refused: u64,
) -> PacerStats {
    PacerStats {
        // The report carries bit/s; PacerStats counts bytes/s.
        bandwidth_bps: bandwidth_bps as f64 / 8.0,
        allowance_bytes: allowance_bytes as f64,
        limit: limit.map(|l| l as f64),
        refused,
    }
}

/// RLC backlog, SDUs, sojourn (µs), RLC and MAC bytes sent, PRBs (the
/// ASN.1's order), the MCS and the UE's handover margin (0.01 dB).
pub(crate) fn lower(c: [u64; 6], mcs: u8, handover_margin_cdb: Option<i16>) -> LowerLayerKpis {
    let [rlc_backlog_bytes, rlc_backlog_sdus, rlc_sojourn_us, rlc_tx_bytes, mac_tx_bytes, mac_prbs] =
        c;
    LowerLayerKpis {
        rlc_backlog_bytes,
        rlc_backlog_sdus: rlc_backlog_sdus.min(u32::MAX as u64) as u32,
        // A counter of any size is valid APER: saturate, never overflow.
        rlc_sojourn: Duration::from_nanos(rlc_sojourn_us.saturating_mul(1_000)),
        rlc_tx_bytes,
        mac_tx_bytes,
        mac_prbs,
        mcs,
        handover_margin_cdb,
    }
}

/// A DRB's status from its parts (`time_s`: the node's clock).
#[allow(clippy::too_many_arguments)]
pub(crate) fn drb_status_from(
    drb: DrbKey,
    time_s: f64,
    totals: Totals,
    classifier: ClassifierStats,
    queues: Vec<QueueStats>,
    scheduler: String,
    pacer_kind: String,
    pacer: PacerStats,
    lower: LowerLayerKpis,
) -> DrbStatus {
    DrbStatus {
        drb,
        stats: PipelineStats {
            time_s,
            totals,
            classifier,
            queues,
            scheduler,
            pacer_kind,
            pacer,
            lower: LowerState {
                bytes: lower.rlc_backlog_bytes,
                sdus: lower.rlc_backlog_sdus,
            },
        },
        lower,
    }
}

/// Converts one report (`time_s`: the node's clock).
pub fn drb_status(r: &t::DrbReport, time_s: f64) -> DrbStatus {
    drb_status_of(r.clone(), time_s)
}

/// [`drb_status`] of a report the caller gives up: its scheduler and pacer
/// names move into the result instead of being copied.
pub fn drb_status_of(r: t::DrbReport, time_s: f64) -> DrbStatus {
    let tot = &r.totals;
    let queues = r
        .queues
        .0
        .iter()
        .map(|q| {
            let mut drops = DropCounts::default();
            for item in &q.drops.0 {
                add_count(&mut drops.0, drop_index(&item.reason.0), item.count.0);
            }
            let mut marks = MarkCounts::default();
            for item in &q.marks.0 {
                add_count(&mut marks.0, mark_index(&item.reason.0), item.count.0);
            }
            queue_stats(
                q.id.0,
                queue_kind(&q.kind.0),
                [
                    q.backlog_packets.0,
                    q.backlog_bytes.0,
                    q.offered_packets.0,
                    q.offered_bytes.0,
                    q.forwarded_packets.0,
                    q.forwarded_bytes.0,
                ],
                drops,
                marks,
                [
                    q.redirected_out.0,
                    q.moved_in_packets.0,
                    q.avg_sojourn_us.0,
                    q.last_sojourn_us.0,
                ],
                q.policer.as_ref().map(|p| {
                    policer([
                        p.rate_bps.0,
                        p.burst_bytes.0,
                        p.passed_packets.0,
                        p.dropped_packets.0,
                        p.marked_packets.0,
                        p.redirected_packets.0,
                        p.measured_bps.0,
                        p.out_of_profile_bps.0,
                    ])
                }),
                q.shaper
                    .as_ref()
                    .map(|s| shaper([s.rate_bps.0, s.measured_bps.0, s.delayed.0])),
                aqm(
                    q.aqm.probability_ppm.as_ref().map(|p| p.0),
                    q.aqm.dropping.as_ref().map(|d| d.0),
                    q.aqm.count.as_ref().map(|c| c.0),
                ),
            )
        })
        .collect();
    let l = &r.lower;
    drb_status_from(
        super::e2sm_tcran::drb_key(&r.drb),
        time_s,
        totals([
            tot.in_packets.0,
            tot.in_bytes.0,
            tot.out_packets.0,
            tot.out_bytes.0,
            tot.dropped_packets.0,
            tot.dropped_bytes.0,
            tot.queued_packets.0,
            tot.queued_bytes.0,
        ]),
        classifier([
            r.classifier.classified.0,
            r.classifier.defaulted.0,
            r.classifier.missing_queue.0,
            r.classifier.malformed.0,
        ]),
        queues,
        r.scheduler.0,
        r.pacer.kind.0,
        pacer(
            r.pacer.bandwidth_bps.0,
            r.pacer.allowance_bytes.0,
            r.pacer.limit.as_ref().map(|l| l.0),
            r.pacer.refused.0,
        ),
        lower(
            [
                l.rlc_backlog_bytes.0,
                l.rlc_backlog_sdus.0,
                l.rlc_sojourn_us.0,
                l.rlc_tx_bytes.0,
                l.mac_tx_bytes.0,
                l.mac_prbs.0,
            ],
            l.mcs.0,
            l.handover_margin.as_ref().map(|m| m.0),
        ),
    )
}

/// The node's clock in seconds, as `PipelineStats::time_s` holds it.
fn seconds(time_ns: u64) -> f64 {
    time_ns as f64 / 1e9
}

/// Decodes an E2SM-TCRAN indication (header, message): the direct
/// decoders where they take the bytes, hampi's decoder and
/// [`drb_status_of`] otherwise; the same result either way (an error is
/// hampi's).
pub fn decode_tc(header: &[u8], message: &[u8]) -> Result<TcIndication, SmDecodeError> {
    let h = match super::aper_fast::decode_indication_header(header) {
        Some(h) => h,
        None => aper::<t::TcIndicationHeader>(header)?,
    };
    let time_s = seconds(h.time_ns.0);
    let drbs = match super::aper_fast::decode_statuses(message, time_s) {
        Some(drbs) => drbs,
        None => statuses_of(aper(message)?, time_s),
    };
    Ok(TcIndication {
        time_ns: h.time_ns.0,
        condition: h.cause.0 == 1,
        drbs,
    })
}

fn statuses_of(m: t::TcIndicationMessage, time_s: f64) -> Vec<DrbStatus> {
    m.reports
        .0
        .into_iter()
        .map(|r| drb_status_of(r, time_s))
        .collect()
}

/// [`decode_tc`] by hampi's decoder and [`drb_status_of`] alone: the
/// reference the direct path is held to.
pub fn decode_tc_generic(header: &[u8], message: &[u8]) -> Result<TcIndication, SmDecodeError> {
    let h: t::TcIndicationHeader = aper(header)?;
    let time_s = seconds(h.time_ns.0);
    Ok(TcIndication {
        time_ns: h.time_ns.0,
        condition: h.cause.0 == 1,
        drbs: statuses_of(aper(message)?, time_s),
    })
}

/// The message alone by hampi and [`drb_status_of`] (`None`: hampi refuses
/// it); what [`super::aper_fast::decode_statuses`] must equal wherever it
/// returns a value.
pub fn statuses_generic(message: &[u8], time_s: f64) -> Option<Vec<DrbStatus>> {
    aper(message).ok().map(|m| statuses_of(m, time_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_queue_kinds_show_as_other() {
        assert_eq!(queue_kind("codel"), "codel");
        assert_eq!(queue_kind("quantum"), "other");
    }

    #[test]
    fn reasons_are_found_by_label_and_add_up() {
        let mut drops = DropCounts::default();
        let i = drop_index(DropReason::QueueFull.label());
        assert_eq!(i, Some(DropReason::QueueFull.index()));
        add_count(&mut drops.0, i, u64::MAX - 1);
        add_count(&mut drops.0, i, 5);
        add_count(&mut drops.0, drop_index("no_such_reason"), 7);
        assert_eq!(drops.0[DropReason::QueueFull.index()], u64::MAX);
        assert_eq!(drops.0.iter().filter(|c| **c != 0).count(), 1);
    }
}
