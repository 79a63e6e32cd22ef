//! Typed indications: E2SM-TCRAN reports as tcran's own statistics types.
//!
//! The types and decoders live in `tcran_e2::sm::tc_status` (next to the
//! APER decoder that reads indications straight into them) and are
//! re-exported here: a `DrbReport` of E2SM-TCRAN is the node's
//! `PipelineStats` and lower-layer KPIs in ASN.1; [`DrbStatus`] turns it
//! back into those types, so an xApp reads the same structs an in-process
//! controller does. What the ASN.1 does not carry is zero: the policer's
//! and shaper's token levels and byte counters (`tokens_bytes`,
//! `passed_bytes`, ...), RED's average queue size. Rates travel in whole
//! bit/s and sojourns in whole microseconds.

use tcran_control::DrbKey;
use tcran_e2::asn::e2sm_tcran as t;

pub use tcran_e2::sm::tc_status::{
    decode_tc, decode_tc_generic, drb_status, drb_status_of, DrbStatus, TcIndication,
};

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
    use tcran_control::{LowerLayerKpis, TcView};
    use tcran_core::{Duration, Instant};
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
                handover_margin_cdb: Some(-412),
            },
        };
        let drb = DrbKey::new(17, 1);
        let asn = tcran_e2::sm::e2sm_tcran::drb_report(drb, &view);
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
}
