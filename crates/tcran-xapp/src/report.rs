//! Typed indications: E2SM-TCRAN reports as tcran's own statistics types.
//!
//! A `DrbReport` of E2SM-TCRAN (`tcran-e2/asn1/e2sm-tcran-v1.asn`) is the
//! node's `PipelineStats` and lower-layer KPIs in ASN.1; [`DrbStatus`]
//! turns it back into those types, so an xApp reads the same structs an
//! in-process controller does. What the ASN.1 does not carry is zero:
//! the policer's and shaper's token levels and byte counters
//! (`tokens_bytes`, `passed_bytes`, ...), RED's average queue size.
//! Rates travel in whole bit/s and sojourns in whole microseconds.

use tcran_core::reason::{DropReason, MarkReason};
use tcran_core::{Duration, QueueId};
use tcran_e2::asn::e2sm_tcran as t;
use tcran_e2::node::{DrbKey, LowerLayerKpis};
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
fn queue_kind(s: &str) -> &'static str {
    const KINDS: [&str; 7] = ["fifo", "codel", "red", "pie", "l4s", "dualq", "plugin"];
    KINDS.iter().find(|k| **k == s).copied().unwrap_or("other")
}

/// Counts by reason name into `out` (indexed by `index`); a reason this
/// build does not know is left out. Names are compared with the reasons'
/// static labels (no string built per comparison: this runs for every
/// reason of every queue of every DRB of every indication).
fn fill<R: Copy>(
    all: &[R],
    label: impl Fn(R) -> &'static str,
    index: impl Fn(R) -> usize,
    items: &[t::ReasonCount],
    out: &mut [u64],
) {
    for item in items {
        if let Some(r) = all.iter().find(|r| label(**r) == item.reason.0) {
            if let Some(slot) = out.get_mut(index(*r)) {
                *slot = slot.saturating_add(item.count.0);
            }
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Converts one report (`time_s`: the node's clock).
pub fn drb_status(r: &t::DrbReport, time_s: f64) -> DrbStatus {
    drb_status_of(r.clone(), time_s)
}

/// [`drb_status`] of a report the caller gives up: its strings move into
/// the result instead of being copied.
pub fn drb_status_of(r: t::DrbReport, time_s: f64) -> DrbStatus {
    let tot = &r.totals;
    let queues = r
        .queues
        .0
        .iter()
        .map(|q| {
            let mut drops = tcran_core::reason::DropCounts::default();
            fill(
                DropReason::ALL,
                DropReason::label,
                DropReason::index,
                &q.drops.0,
                &mut drops.0,
            );
            let mut marks = tcran_core::reason::MarkCounts::default();
            fill(
                MarkReason::ALL,
                MarkReason::label,
                MarkReason::index,
                &q.marks.0,
                &mut marks.0,
            );
            QueueStats {
                id: QueueId(q.id.0),
                kind: queue_kind(&q.kind.0),
                backlog_packets: q.backlog_packets.0 as usize,
                backlog_bytes: q.backlog_bytes.0,
                offered_packets: q.offered_packets.0,
                offered_bytes: q.offered_bytes.0,
                forwarded_packets: q.forwarded_packets.0,
                forwarded_bytes: q.forwarded_bytes.0,
                drops,
                marks,
                redirected_out: q.redirected_out.0,
                moved_in_packets: q.moved_in_packets.0,
                avg_sojourn_ms: ms(q.avg_sojourn_us.0),
                last_sojourn_ms: ms(q.last_sojourn_us.0),
                policer: q.policer.as_ref().map(|p| tcran_tc::policer::PolicerStats {
                    rate_bps: p.rate_bps.0,
                    burst_bytes: p.burst_bytes.0,
                    passed_packets: p.passed_packets.0,
                    dropped_packets: p.dropped_packets.0,
                    marked_packets: p.marked_packets.0,
                    redirected_packets: p.redirected_packets.0,
                    measured_bps: p.measured_bps.0 as f64,
                    out_of_profile_bps: p.out_of_profile_bps.0 as f64,
                    ..Default::default()
                }),
                shaper: q.shaper.as_ref().map(|s| ShaperStats {
                    rate_bps: s.rate_bps.0,
                    measured_bps: s.measured_bps.0 as f64,
                    tokens_bytes: 0.0,
                    delayed: s.delayed.0,
                }),
                aqm: AqmStats {
                    probability: q.aqm.probability_ppm.as_ref().map(|p| p.0 as f64 / 1e6),
                    dropping: q.aqm.dropping.as_ref().map(|d| d.0),
                    count: q
                        .aqm
                        .count
                        .as_ref()
                        .map(|c| c.0.min(u32::MAX as u64) as u32),
                    average: None,
                },
            }
        })
        .collect();
    let lower = LowerLayerKpis {
        rlc_backlog_bytes: r.lower.rlc_backlog_bytes.0,
        rlc_backlog_sdus: r.lower.rlc_backlog_sdus.0.min(u32::MAX as u64) as u32,
        rlc_sojourn: Duration::from_micros(r.lower.rlc_sojourn_us.0),
        rlc_tx_bytes: r.lower.rlc_tx_bytes.0,
        mac_tx_bytes: r.lower.mac_tx_bytes.0,
        mac_prbs: r.lower.mac_prbs.0,
        mcs: r.lower.mcs.0,
    };
    DrbStatus {
        drb: DrbKey::new(r.drb.rnti.0, r.drb.drb.0),
        stats: PipelineStats {
            time_s,
            totals: Totals {
                in_packets: tot.in_packets.0,
                in_bytes: tot.in_bytes.0,
                out_packets: tot.out_packets.0,
                out_bytes: tot.out_bytes.0,
                dropped_packets: tot.dropped_packets.0,
                dropped_bytes: tot.dropped_bytes.0,
                queued_packets: tot.queued_packets.0,
                queued_bytes: tot.queued_bytes.0,
            },
            classifier: ClassifierStats {
                classified: r.classifier.classified.0,
                defaulted: r.classifier.defaulted.0,
                missing_queue: r.classifier.missing_queue.0,
                malformed: r.classifier.malformed.0,
            },
            queues,
            scheduler: r.scheduler.0,
            pacer_kind: r.pacer.kind.0,
            pacer: PacerStats {
                // The report carries bit/s; PacerStats counts bytes/s.
                bandwidth_bps: r.pacer.bandwidth_bps.0 as f64 / 8.0,
                allowance_bytes: r.pacer.allowance_bytes.0 as f64,
                limit: r.pacer.limit.as_ref().map(|l| l.0 as f64),
                refused: r.pacer.refused.0,
            },
            lower: LowerState {
                bytes: lower.rlc_backlog_bytes,
                sdus: lower.rlc_backlog_sdus,
            },
        },
        lower,
    }
}

/// Decodes an E2SM-TCRAN indication (header, message).
pub fn decode_tc(header: &[u8], message: &[u8]) -> Result<TcIndication, String> {
    let (h, m) = tcran_e2::sm::tcran_tc::decode_indication(header, message)?;
    let time_s = h.time_ns.0 as f64 / 1e9;
    Ok(TcIndication {
        time_ns: h.time_ns.0,
        condition: h.cause.0 == 1,
        drbs: m
            .reports
            .0
            .into_iter()
            .map(|r| drb_status_of(r, time_s))
            .collect(),
    })
}

/// The DRBs an E2SM-TCRAN RAN function definition lists.
pub fn tc_function_drbs(definition: &[u8]) -> Result<Vec<DrbKey>, String> {
    use asn1_codecs::aper::AperCodec;
    let d = t::TcRanFunctionDefinition::aper_decode(
        &mut asn1_codecs::PerCodecData::from_slice_aper(definition),
    )
    .map_err(|e| e.to_string())?;
    Ok(d.drbs
        .0
        .iter()
        .map(|r| DrbKey::new(r.rnti.0, r.drb.0))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_core::Instant;
    use tcran_e2::node::TcView;
    use tcran_tc::queue::{CodelConfig, QueueKindConfig};
    use tcran_tc::PipelineConfig;

    /// Every field E2SM-TCRAN carries comes back as the node had it.
    #[test]
    fn a_report_converts_back_to_the_node_statistics() {
        let cfg = PipelineConfig::single_queue(QueueKindConfig::Codel(CodelConfig::default()));
        let mut p = cfg.build().unwrap();
        let t0 = Instant::ZERO;
        for i in 0..20u64 {
            let pkt = tcran_core::Packet::new(
                tcran_core::PacketId(i),
                1200,
                tcran_core::FiveTuple::default(),
                t0,
            );
            let _ = p.push(pkt, t0);
        }
        let now = t0 + Duration::from_millis(30);
        for _ in 0..5 {
            let _ = p.pull(now);
        }
        let view = TcView {
            config: p.config(),
            stats: p.stats(now),
            lower: LowerLayerKpis {
                rlc_backlog_bytes: 4800,
                rlc_backlog_sdus: 4,
                rlc_sojourn: Duration::from_micros(12_345),
                rlc_tx_bytes: 6000,
                mac_tx_bytes: 6100,
                mac_prbs: 77,
                mcs: 10,
            },
        };
        let drb = DrbKey::new(17, 1);
        let asn = tcran_e2::sm::tcran_tc::drb_report(drb, &view);
        let back = drb_status(&asn, view.stats.time_s);
        assert_eq!(back.drb, drb);
        assert_eq!(back.lower, view.lower);
        assert_eq!(back.stats.totals, view.stats.totals);
        assert_eq!(back.stats.classifier, view.stats.classifier);
        let (a, b) = (&back.stats.queues[0], &view.stats.queues[0]);
        assert_eq!(a.kind, b.kind);
        assert_eq!(a.forwarded_packets, b.forwarded_packets);
        assert_eq!(a.drops, b.drops);
        assert_eq!(a.backlog_packets, b.backlog_packets);
        assert!((a.last_sojourn_ms - b.last_sojourn_ms).abs() < 1e-3);
        assert_eq!(back.stats.scheduler, view.stats.scheduler);
        assert_eq!(back.stats.pacer_kind, view.stats.pacer_kind);
    }

    #[test]
    fn unknown_queue_kinds_show_as_other() {
        assert_eq!(queue_kind("codel"), "codel");
        assert_eq!(queue_kind("quantum"), "other");
    }
}
