//! The TC-RAN paper's xApps and the L4S xApp, as `Controller`s: the same
//! code runs in the simulator (a `[[variants.controllers]]` of a scenario,
//! or [`tcran_control::controller::AnyController::Custom`]) and over E2
//! ([`crate::adapter`]).
//!
//! | xApp | figure | controller |
//! |---|---|---|
//! | `flow-slicing` | TC-RAN Fig. 6a: flow 1 in one slice, the others in a second, 50 %-50 % | `flow_slicing`, equal weights |
//! | `shaper-slice` | TC-RAN Fig. 6b: all flows but the last capped at 15 Mbit/s | `flow_slicing` with a token-bucket shaper |
//! | `low-latency` | TC-RAN Fig. 7: RLC sojourn above 10 ms -> CoDel + round robin + 5G-BDP | `sojourn_deploy` |
//! | `online-game` | TC-RAN Figs. 8-10: RLC sojourn above 10 ms -> a second, CoDel queue; greedy flows moved there by 5-tuple | `sojourn_codel` |
//! | `l4s` | Brunello Fig. 4.2 / sec. 4.2, 5.2: ECN ramp marking with 5G-BDP once scalable (ECT(1)) traffic is seen | [`L4sOnScalable`] |
//! | `handover-guard` | a paced pipeline around each handover, from the UEs' measurement reports (E2SM-TCRAN's handover margin) | `handover_guard` |
//!
//! The paper's own numbers are the defaults (10 ms threshold, 15 Mbit/s,
//! 5-10 ms ramp, alpha 0.25, dT 5 ms, tail marking).

use crate::report::TcIndication;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tcran_control::controller::{
    Command, ControlView, Controller, ControllerKind, FlowSliceConfig,
};
use tcran_core::{BitRate, ConfigError, Duration};
use tcran_tc::classify::{ClassifierConfig, FilterRule};
use tcran_tc::{Change, Control, PipelineConfig};

/// TC-RAN Fig. 6a: the first flow in one slice, the others in another,
/// shared 50 %-50 % (deficit round robin, equal weights) with 5G-BDP.
pub fn flow_slicing(flows: &[String]) -> Result<ControllerKind, ConfigError> {
    if flows.len() < 2 {
        return Err(ConfigError::new(
            "flows",
            flows.len(),
            "flow slicing needs at least two flows (the first one gets a slice of its own)",
        ));
    }
    Ok(ControllerKind::FlowSlicing {
        slices: vec![
            FlowSliceConfig {
                flows: vec![flows[0].clone()],
                weight: 1,
                shaper: None,
            },
            FlowSliceConfig {
                flows: flows[1..].to_vec(),
                weight: 1,
                shaper: None,
            },
        ],
        pacer: None,
    })
}

/// TC-RAN Fig. 6b: every flow but the last in a slice shaped at `rate`
/// (token bucket), the last flow in a slice of its own.
pub fn shaper_slice(flows: &[String], rate: BitRate) -> Result<ControllerKind, ConfigError> {
    if flows.len() < 2 {
        return Err(ConfigError::new(
            "flows",
            flows.len(),
            "the shaper slice needs at least two flows (the last one is not shaped)",
        ));
    }
    let shaper = serde_json::from_value(serde_json::json!({
        "kind": "token_bucket",
        "rate": rate,
    }))
    .map_err(|e| ConfigError::new("rate", rate, e.to_string()))?;
    let n = flows.len();
    Ok(ControllerKind::FlowSlicing {
        slices: vec![
            FlowSliceConfig {
                flows: flows[..n - 1].to_vec(),
                weight: 1,
                shaper: Some(shaper),
            },
            FlowSliceConfig {
                flows: vec![flows[n - 1].clone()],
                weight: 1,
                shaper: None,
            },
        ],
        pacer: None,
    })
}

/// TC-RAN Fig. 7's cure: CoDel (RFC 8289 defaults) + round robin +
/// 5G-BDP.
pub fn low_latency_pipeline() -> PipelineConfig {
    serde_json::from_value(serde_json::json!({
        "scheduler": { "kind": "round_robin" },
        "pacer": { "kind": "bdp" },
        "queues": [ { "id": 0, "kind": "codel" } ],
    }))
    .expect("CoDel + RR + 5G-BDP is a valid pipeline")
}

/// TC-RAN Fig. 7: above `threshold`, deploy [`low_latency_pipeline`].
pub fn low_latency(threshold: Duration) -> ControllerKind {
    ControllerKind::SojournDeploy {
        threshold,
        pipeline: low_latency_pipeline(),
    }
}

/// Mobility (docs/xapps.md, "A mobility-aware controller"): `pipeline`
/// once a UE's strongest neighbour comes within `ahead_db` of its serving
/// cell (the handover margin of its measurement reports), the bearer's
/// previous pipeline again once the margin is below `-clear_db`.
pub fn handover_guard(ahead_db: f64, clear_db: f64, pipeline: PipelineConfig) -> ControllerKind {
    ControllerKind::HandoverGuard {
        ahead_db,
        clear_db,
        pipeline,
    }
}

/// TC-RAN Figs. 8-10: above `threshold`, a CoDel queue for the greedy
/// flows (goodput at least `greedy_rate`), 5G-BDP if the bearer has no
/// pacer.
pub fn online_game(threshold: Duration, greedy_rate: BitRate) -> ControllerKind {
    ControllerKind::SojournCodel {
        threshold,
        greedy_rate,
        queue: None,
        scheduler: None,
        pacer: None,
    }
}

/// The L4S xApp (Brunello, thesis-brunello-l4s-5g.txt sec. 4.2 and 5.2).
///
/// Watching: on its first call for a DRB whose pipeline has no classifier,
/// it installs a filter with one rule, ECT(1) -> the default queue: no
/// packet changes queue, but the classifier's `classified` counter now
/// counts scalable (ECT(1), RFC 9331) packets, which E2SM-TCRAN reports.
/// A DRB that already has a classifier is not watched (the rule could
/// steal packets from its rules).
///
/// Acting: when `classified` grew since the watch began, it deploys
/// `pipeline` once: by default the thesis' setting, an L queue with the
/// marking ramp (5-10 ms, alpha 0.25, dT 5 ms, marks at the tail) for
/// ECT(1), a classic FIFO for the rest, round robin, and a 5G-BDP pacer
/// so that the queue (and the marking) stays above RLC.
#[derive(Debug)]
pub struct L4sOnScalable {
    pipeline: PipelineConfig,
    /// Per DRB: `classified` when the watch began, or `None` once deployed.
    watched: BTreeMap<(u16, u8), Option<u64>>,
}

impl L4sOnScalable {
    pub fn new(pipeline: PipelineConfig) -> Result<L4sOnScalable, ConfigError> {
        pipeline.build().map_err(|e| e.within("pipeline"))?;
        Ok(L4sOnScalable {
            pipeline,
            watched: BTreeMap::new(),
        })
    }

    /// The thesis' L4S pipeline with the ramp between `low` and `high`.
    pub fn default_pipeline(low: Duration, high: Duration) -> PipelineConfig {
        serde_json::from_value(serde_json::json!({
            "default_queue": 1,
            "classifier": { "kind": "filter", "rules": [ { "priority": 1, "ecn": "ect1", "queue": 0 } ] },
            "scheduler": { "kind": "round_robin" },
            "pacer": { "kind": "bdp" },
            "queues": [
                { "id": 0, "kind": "l4s", "low_threshold": low, "high_threshold": high,
                  "alpha": 0.25, "update_interval": "5ms", "tail_marking": true },
                { "id": 1, "kind": "fifo" }
            ],
        }))
        .expect("the L4S pipeline is valid")
    }
}

impl Controller for L4sOnScalable {
    fn on_tick(&mut self, view: &ControlView<'_>, out: &mut Vec<Command>) {
        for d in view.drbs {
            let key = (d.rnti, d.drb);
            let classified = d.stats.classifier.classified;
            match self.watched.get(&key) {
                None => {
                    if d.config.classifier != ClassifierConfig::None {
                        continue;
                    }
                    let Some(default) = d.config.default_queue_id() else {
                        continue;
                    };
                    let mut rule = FilterRule::new(1, default);
                    rule.ecn = Some("ect1".into());
                    out.push(Command {
                        rnti: d.rnti,
                        drb: d.drb,
                        dir: d.dir,
                        change: Change::Control(Control::SetClassifier {
                            classifier: ClassifierConfig::Filter { rules: vec![rule] },
                        }),
                    });
                    self.watched.insert(key, Some(classified));
                }
                Some(Some(base)) if classified > *base => {
                    out.push(Command {
                        rnti: d.rnti,
                        drb: d.drb,
                        dir: d.dir,
                        change: Change::Deploy(self.pipeline.clone()),
                    });
                    self.watched.insert(key, None);
                }
                Some(_) => {}
            }
        }
    }
}

/// The monitor's text view of one indication: one block per DRB, one line
/// per queue.
pub fn render(node: &str, ind: &TcIndication) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "node {node}  t = {:.3} s  {} DRB(s)",
        ind.time_ns as f64 / 1e9,
        ind.drbs.len()
    );
    for d in &ind.drbs {
        let st = &d.stats;
        let _ = writeln!(
            s,
            "  {}  RLC {} B / {} SDUs, sojourn {:.1} ms, MCS {}  |  TC in {} out {} dropped {} queued {}  |  {} scheduler, pacer {} allowance {:.0} B{}",
            d.drb,
            d.lower.rlc_backlog_bytes,
            d.lower.rlc_backlog_sdus,
            d.lower.rlc_sojourn.as_millis_f64(),
            d.lower.mcs,
            st.totals.in_packets,
            st.totals.out_packets,
            st.totals.dropped_packets,
            st.totals.queued_packets,
            st.scheduler,
            st.pacer_kind,
            st.pacer.allowance_bytes,
            st.pacer
                .limit
                .map(|l| format!(" limit {l:.0}"))
                .unwrap_or_default(),
        );
        for q in &st.queues {
            let mut extra = String::new();
            if let Some(p) = q.aqm.probability {
                let _ = write!(extra, " p {p:.3}");
            }
            if let Some(sh) = &q.shaper {
                let _ = write!(extra, " shaper {:.1} Mbit/s", sh.measured_bps / 1e6);
            }
            let _ = writeln!(
                s,
                "    q{:<3} {:<6} {:>6} pkts {:>9} B  sojourn {:>7.2} ms (avg {:>7.2})  drops {:>6}  marks {:>6}{extra}",
                q.id.0,
                q.kind,
                q.backlog_packets,
                q.backlog_bytes,
                q.last_sojourn_ms,
                q.avg_sojourn_ms,
                q.drops.total(),
                q.marks.total(),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_control::controller::DrbView;
    use tcran_tc::queue::{FifoConfig, QueueKindConfig};

    fn view_of(config: PipelineConfig, classified: u64) -> DrbView {
        let p = config.build().unwrap();
        let mut stats = p.stats(tcran_core::Instant::ZERO);
        stats.classifier.classified = classified;
        DrbView {
            rnti: 1,
            drb: 1,
            dir: tcran_control::Direction::Downlink,
            config: p.config(),
            stats,
            rlc_bytes: 0,
            rlc_delivered: 0,
            rlc_delay_ms: None,
            rlc_departed: 0,
            rlc_sojourn_ms: None,
            handover_margin_db: None,
        }
    }

    #[test]
    fn l4s_watches_then_deploys_once_when_ect1_is_counted() {
        let pipeline =
            L4sOnScalable::default_pipeline(Duration::from_millis(5), Duration::from_millis(10));
        let mut c = L4sOnScalable::new(pipeline.clone()).unwrap();
        let fifo = PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {}));
        let tick = |c: &mut L4sOnScalable, d: DrbView| {
            let mut out = Vec::new();
            c.on_tick(
                &ControlView {
                    now: tcran_core::Instant::ZERO,
                    drbs: &[d],
                    flows: &[],
                },
                &mut out,
            );
            out
        };
        let first = tick(&mut c, view_of(fifo.clone(), 0));
        assert!(matches!(
            &first[..],
            [Command {
                change: Change::Control(Control::SetClassifier { .. }),
                ..
            }]
        ));
        // Nothing scalable yet: nothing more.
        assert!(tick(&mut c, view_of(fifo.clone(), 0)).is_empty());
        let deploy = tick(&mut c, view_of(fifo.clone(), 3));
        assert_eq!(deploy[0].change, Change::Deploy(pipeline));
        assert!(tick(&mut c, view_of(fifo, 9)).is_empty());
    }

    #[test]
    fn slicing_needs_two_flows() {
        assert!(flow_slicing(&["a".into()]).is_err());
        assert!(shaper_slice(&["a".into(), "b".into()], BitRate(15_000_000)).is_ok());
    }
}
