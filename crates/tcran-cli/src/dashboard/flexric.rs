//! Nodes that offer FlexRIC's TC service model and no E2SM-TCRAN (a node
//! of `--e2-profile flexric`, a FlexRIC agent): their indications as the
//! hub's reports, so the page lists them and draws their pipeline.
//!
//! FlexRIC's TC indication (`tcran_e2::sm::flexric_tc`, the plain layout
//! of FlexRIC's `tc_sm`) carries the pipeline of one DRB: its queues
//! (kind, backlog, forwarded, drops or marks, sojourns), scheduler and
//! pacer. It names no DRB (the node reports the one it was told,
//! `--e2-tc-drb`; the dashboard shows the first its E2 Setup lists) and
//! carries no RLC or MAC figure, nor what entered the pipeline: those
//! show as zero, as E2SM-TCRAN's absent fields do. Controls from the page
//! are E2SM-TCRAN controls; such a node has none and the page shows them
//! failed with the reason.

use tcran_control::{DrbKey, LowerLayerKpis};
use tcran_core::reason::{DropCounts, DropReason, MarkCounts, MarkReason};
use tcran_core::QueueId;
use tcran_e2::sm::flexric_tc::{self as ftc, PlainIndication, PlainScheduler};
use tcran_tc::stage::{AqmStats, PacerStats, ShaperStats};
use tcran_tc::stats::{PipelineStats, QueueStats};
use tcran_xapp::{DrbStatus, NodeInfo, TcIndication};

/// The node's FlexRIC TC function, if it has one.
pub fn function(n: &NodeInfo) -> Option<u16> {
    n.functions
        .iter()
        .find(|(_, oid)| oid == ftc::OID)
        .map(|(id, _)| *id)
}

/// The event trigger: the report period in ms, a little-endian u32.
pub fn trigger(period_ms: u32) -> Vec<u8> {
    period_ms.to_le_bytes().to_vec()
}

/// One indication message of the node as a report of `drb`.
pub fn indication(drb: DrbKey, message: &[u8]) -> Result<TcIndication, String> {
    let p = PlainIndication::decode(message).map_err(|e| e.to_string())?;
    let queues: Vec<QueueStats> = p
        .queues
        .iter()
        .enumerate()
        .map(|(i, (shaper, _, q))| {
            let mut drops = DropCounts::default();
            let mut marks = MarkCounts::default();
            let kind = match q.kind {
                0 => {
                    drops.add(DropReason::QueueFull, u64::from(q.dropped_or_marked));
                    "fifo"
                }
                1 => {
                    drops.add(DropReason::Codel, u64::from(q.dropped_or_marked));
                    "codel"
                }
                // ECN-CoDel: its count is of marks.
                2 => {
                    marks.add(MarkReason::Codel, u64::from(q.dropped_or_marked));
                    "codel"
                }
                _ => "other",
            };
            QueueStats {
                id: QueueId(i.min(usize::from(u16::MAX)) as u16),
                kind,
                backlog_packets: q.packets as usize,
                backlog_bytes: u64::from(q.bytes),
                offered_packets: 0,
                offered_bytes: 0,
                forwarded_packets: u64::from(q.packets_forwarded),
                forwarded_bytes: u64::from(q.bytes_forwarded),
                drops,
                marks,
                redirected_out: 0,
                moved_in_packets: 0,
                avg_sojourn_ms: f64::from(q.avg_sojourn_ms),
                last_sojourn_ms: q.last_sojourn_us as f64 / 1000.0,
                policer: None,
                shaper: (shaper.active != 0).then(|| ShaperStats {
                    rate_bps: u64::from(shaper.max_rate_kbps) * 1000,
                    measured_bps: f64::from(shaper.measured_kbps) * 1000.0,
                    tokens_bytes: 0.0,
                    delayed: 0,
                }),
                aqm: AqmStats::default(),
            }
        })
        .collect();
    let mut stats = PipelineStats {
        time_s: p.timestamp_us as f64 / 1e6,
        scheduler: match p.scheduler {
            PlainScheduler::RoundRobin => "round_robin".into(),
            PlainScheduler::Priority(_) => "priority".into(),
        },
        pacer_kind: match p.pacer.kind {
            0 => "none".into(),
            1 => "bdp".into(),
            _ => "other".into(),
        },
        pacer: PacerStats {
            // kbit/s on the wire, bytes per second in tcran's statistics.
            bandwidth_bps: f64::from(p.pacer.bandwidth_kbps) * 1000.0 / 8.0,
            ..PacerStats::default()
        },
        ..PipelineStats::default()
    };
    stats.totals.out_packets = queues.iter().map(|q| q.forwarded_packets).sum();
    stats.totals.out_bytes = queues.iter().map(|q| q.forwarded_bytes).sum();
    stats.totals.queued_packets = queues.iter().map(|q| q.backlog_packets as u64).sum();
    stats.totals.queued_bytes = queues.iter().map(|q| q.backlog_bytes).sum();
    stats.totals.dropped_packets = queues.iter().map(|q| q.drops.total()).sum();
    stats.queues = queues;
    Ok(TcIndication {
        time_ns: u64::try_from(p.timestamp_us)
            .unwrap_or(0)
            .saturating_mul(1000),
        condition: false,
        drbs: vec![DrbStatus {
            drb,
            stats,
            lower: LowerLayerKpis::default(),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_control::TcView;
    use tcran_tc::queue::{CodelConfig, QueueKindConfig};
    use tcran_tc::PipelineConfig;

    /// What tcran's node encodes for FlexRIC comes back as its queues,
    /// scheduler and pacer.
    #[test]
    fn a_flexric_indication_reads_as_a_report_of_its_drb() {
        let cfg = PipelineConfig::single_queue(QueueKindConfig::Codel(CodelConfig::default()));
        let mut p = cfg.build().unwrap();
        let t0 = tcran_core::Instant::ZERO;
        for i in 0..10u64 {
            let pkt = tcran_core::Packet::new(
                tcran_core::PacketId(i),
                1000,
                tcran_core::FiveTuple::default(),
                t0,
            );
            let _ = p.push(pkt, t0);
        }
        let now = t0 + tcran_core::Duration::from_millis(7);
        for _ in 0..4 {
            let _ = p.pull(now);
        }
        let view = TcView {
            config: p.config(),
            stats: p.stats(now),
            lower: LowerLayerKpis::default(),
        };
        let bytes = ftc::indication(&view, 2_500_000).encode();
        let r = indication(DrbKey::new(3, 1), &bytes).unwrap();
        assert_eq!(r.time_ns, 2_500_000_000);
        let d = &r.drbs[0];
        assert_eq!(d.drb, DrbKey::new(3, 1));
        assert_eq!(d.stats.queues.len(), 1);
        let q = &d.stats.queues[0];
        assert_eq!(q.kind, "codel");
        assert_eq!(q.backlog_packets, 6);
        assert_eq!(q.forwarded_packets, 4);
        assert!(
            (q.last_sojourn_ms - 7.0).abs() < 1e-3,
            "{}",
            q.last_sojourn_ms
        );
        assert_eq!(d.stats.totals.out_packets, 4);
        assert!(indication(DrbKey::new(3, 1), &bytes[..5]).is_err());
    }
}
