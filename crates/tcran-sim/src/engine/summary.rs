//! The run's summary and series at its end.

use super::Sim;
use crate::recorder::{FlowLabel, CDF_POINTS};
use crate::report::{FlowSummary, PacketCounts, RlcSummary, RunSummary};
use crate::scenario::Direction;
use crate::RunOutput;
use std::collections::BTreeMap;
use tcran_gnb::Layer;

impl Sim {
    pub(super) fn finish(mut self) -> RunOutput {
        self.gnb.collect_marks(self.end);
        self.drain_outputs();
        self.series.cut_at(self.end);
        let warmup_end = self.warmup_end;
        let names = self
            .flows
            .iter_mut()
            .map(|f| {
                f.take_samples(warmup_end);
                FlowLabel {
                    name: f.name.clone(),
                    kind: f.kind.to_string(),
                    delay_cdf: f.delay.cdf(CDF_POINTS - 1),
                    rtt_cdf: f.rtt.cdf(CDF_POINTS - 1),
                    layer_delay_cdf: f.layers.cdfs(CDF_POINTS - 1),
                }
            })
            .collect();
        let summary = self.summary();
        RunOutput {
            summary,
            series: self.series.finish(names),
        }
    }

    fn summary(&mut self) -> RunSummary {
        let measured = self.end.saturating_since(self.warmup_end).as_secs_f64();
        let ledger = self.ledger();
        let warmup_end = self.warmup_end;
        let flows = self
            .flows
            .iter_mut()
            .zip(&ledger.by_flow)
            .map(|(f, &in_flight)| {
                f.take_samples(warmup_end);
                let rtt = f.is_ping().then(|| f.rtt.summary());
                let pages = f.serves_downloads().then(|| f.downloads.summary());
                FlowSummary {
                    name: f.name.clone(),
                    kind: f.kind.to_string(),
                    direction: if f.uplink {
                        Direction::Uplink
                    } else {
                        Direction::Downlink
                    },
                    throughput_mbps: f.delivered_bytes as f64 * 8.0 / measured / 1e6,
                    delay_ms: f.delay.summary(),
                    rtt_ms: rtt,
                    page_ms: pages,
                    layers_ms: f.layers.summaries(),
                    lost_packets: f.lost,
                    created_packets: f.created,
                    delivered_packets: f.total_packets,
                    in_flight_packets: in_flight,
                }
            })
            .collect();
        let mut occ_sum = 0.0;
        let mut occ_n = 0u64;
        let mut occ_max = 0;
        let (mut sojourn_sum_ms, mut sojourn_n) = (0.0, 0u64);
        let mut status_pdus = 0;
        for (m, d) in self.drbs.iter().zip(self.gnb.drbs()) {
            status_pdus += d.rlc_rx().stats().status_pdus;
            occ_sum += m.occupancy.sum_of_means();
            occ_n += m.occupancy.bins();
            occ_max = occ_max.max(m.occupancy_max);
            // Weighted by SDUs, so the mean is over every SDU of every DRB.
            let (c, w) = (d.counters(), &m.at_warmup);
            let n = c.rlc_sdus_departed - w.rlc_sdus_departed;
            if n > 0 {
                let mean_ms = (c.rlc_sdu_sojourn_ns - w.rlc_sdu_sojourn_ns) as f64 / n as f64 / 1e6;
                sojourn_sum_ms += mean_ms * n as f64;
                sojourn_n += n;
            }
        }
        let mut drops = self.gnb.drop_counts().clone();
        let mut marks = self.gnb.mark_counts().clone();
        if let Some(c) = &self.cells {
            c.add_counts(&mut drops, &mut marks);
        }
        let (handovers, cells) = super::cells::report(self.cells.as_deref(), measured, self.end);
        RunSummary {
            handovers,
            cells,
            sim_s: self.end.as_secs_f64(),
            seed_draws: self.seed_draws.clone(),
            flows,
            prb_utilization: if self.prbs_available == 0 {
                0.0
            } else {
                self.prbs_used as f64 / self.prbs_available as f64
            },
            capacity_utilization: if self.capacity_offered > 0.0 {
                self.capacity_used / self.capacity_offered
            } else {
                0.0
            },
            rlc: RlcSummary {
                mean_bytes: if occ_n == 0 {
                    0.0
                } else {
                    occ_sum / occ_n as f64
                },
                max_bytes: occ_max,
                mean_sojourn_ms: if sojourn_n == 0 {
                    0.0
                } else {
                    sojourn_sum_ms / sojourn_n as f64
                },
                status_pdus,
            },
            drops: by_layer(&drops),
            marks: by_layer(&marks),
            reconfigurations: self.reconfig_counts,
            packets: {
                let p = self.packets;
                let in_flight = ledger.by_place.total();
                PacketCounts {
                    in_flight,
                    in_flight_by_place: ledger.by_place,
                    unaccounted: p.created as i64 - (p.delivered + p.dropped + in_flight) as i64,
                    ..p
                }
            },
        }
    }
}

/// `(layer, reason) -> n` as the summary's nested `layer -> reason -> n`.
fn by_layer(
    counts: &BTreeMap<(Layer, &'static str), u64>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut m: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for ((layer, reason), n) in counts {
        m.entry(layer.label().to_string())
            .or_default()
            .insert(reason.to_string(), *n);
    }
    m
}
