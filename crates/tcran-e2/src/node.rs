//! What the E2 agent needs from the RAN node: the [`E2Node`] trait.
//!
//! The agent never owns the node: every call that needs it borrows it, so
//! the gNB (simulator, emulator, a real stack through the C ABI) keeps
//! ownership and its own clock. The trait is small on purpose:
//!
//! | method | used by |
//! |---|---|
//! | [`E2Node::drbs`] | every model: which (RNTI, DRB) exist |
//! | [`E2Node::tc_view`] | TC models: a DRB's pipeline configuration and statistics, RLC/MAC KPIs |
//! | [`E2Node::kpm_cell`], [`E2Node::kpm_drb`] | E2SM-KPM: monotonic counters (TS 28.552 inputs) |
//! | [`E2Node::apply`] | TC models: controls and whole-pipeline deploys, all or nothing |
//!
//! Counters are cumulative and never decrease; the KPM model differences
//! them per granularity period, so the node needs no per-subscription
//! state. [`apply_atomically`] gives a node built on `tcran_tc::Pipeline`s
//! the all-or-nothing semantics in one call.

use tcran_core::{DrbId, Duration, Instant, Rnti};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{Control, Pipeline, PipelineConfig};

/// One data radio bearer of one UE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DrbKey {
    pub rnti: Rnti,
    pub drb: DrbId,
}

impl DrbKey {
    pub fn new(rnti: u16, drb: u8) -> DrbKey {
        DrbKey {
            rnti: Rnti(rnti),
            drb: DrbId(drb),
        }
    }
}

impl std::fmt::Display for DrbKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RNTI {} DRB {}", self.rnti.0, self.drb.0)
    }
}

/// What the RLC entity and the MAC below a DRB's pipeline report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LowerLayerKpis {
    /// Bytes waiting in the RLC buffer.
    pub rlc_backlog_bytes: u64,
    /// SDUs (whole or partly sent) in the RLC buffer.
    pub rlc_backlog_sdus: u32,
    /// How long the oldest SDU in the RLC buffer has waited (zero when
    /// empty): the sojourn the paper's xApps watch.
    pub rlc_sojourn: Duration,
    /// RLC SDU bytes sent so far (cumulative).
    pub rlc_tx_bytes: u64,
    /// Bytes the MAC scheduled for this DRB so far (cumulative).
    pub mac_tx_bytes: u64,
    /// PRBs allocated to this DRB so far (cumulative).
    pub mac_prbs: u64,
    /// MCS of the last transmission (0..=31).
    pub mcs: u8,
}

/// A DRB's traffic-control view: its pipeline as configured now, the
/// pipeline's statistics, and the KPIs of the layers below.
#[derive(Debug, Clone, PartialEq)]
pub struct TcView {
    pub config: PipelineConfig,
    pub stats: PipelineStats,
    pub lower: LowerLayerKpis,
}

/// Cumulative downlink counters of a cell or of one DRB, the inputs of the
/// TS 28.552 measurements E2SM-KPM reports. Every field only grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KpmCounters {
    /// Bits of PDCP SDUs received from the core for transmission
    /// (DRB.PdcpSduVolumeDL, TS 28.552 5.1.2.1.1.1).
    pub pdcp_sdu_bits_dl: u64,
    /// Bits of RLC SDUs transmitted (DRB.RlcSduTransmittedVolumeDL).
    pub rlc_sdu_transmitted_bits_dl: u64,
    /// Sum of the RLC SDU delays (arrival in RLC to delivery) and number of
    /// SDUs delivered (DRB.RlcSduDelayDl = sum / count, 5.1.3.3.3).
    pub rlc_sdu_delay_sum: Duration,
    pub rlc_sdus_delivered: u64,
    /// ThpVolDl and ThpTimeDl of TS 28.552 5.1.1.3.1 (DRB.UEThpDl): bits
    /// and time of transmission bursts, each burst's last slot excluded.
    pub thp_volume_bits_dl: u64,
    pub thp_time_dl: Duration,
    /// PRBs used for data, summed over slots (RRU.PrbUsedDl, 5.1.1.2.5).
    pub prb_used_dl: u64,
    /// PRBs available for data, summed over slots (RRU.PrbAvailDl, 5.1.1.2.7).
    pub prb_available_dl: u64,
    /// PRBs used for any purpose, summed over slots (RRU.PrbTotDl, 5.1.1.2.1).
    pub prb_used_total_dl: u64,
    /// Slots counted in the PRB sums.
    pub slots: u64,
}

/// A change to one DRB's pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum TcChange {
    /// These controls in order, all or none.
    Controls(Vec<Control>),
    /// Replace the whole pipeline configuration.
    Deploy(PipelineConfig),
}

/// The control surface of a RAN node (one cell) as the E2 agent sees it.
pub trait E2Node {
    /// Appends the node's DRBs to `out`, in ascending order.
    fn drbs(&self, out: &mut Vec<DrbKey>);
    /// The DRB's traffic-control view at `now`, or `None` if it does not exist.
    fn tc_view(&self, drb: DrbKey, now: Instant) -> Option<TcView>;
    /// Cumulative counters of the whole cell.
    fn kpm_cell(&self) -> KpmCounters;
    /// Cumulative counters of one DRB (`None` if it does not exist). The
    /// PRB fields count the PRBs allocated to this DRB.
    fn kpm_drb(&self, drb: DrbKey) -> Option<KpmCounters>;
    /// Applies `change` to the DRB's pipeline at `now`, entirely or not at
    /// all. `Err` carries the refusal in one line (the field, the value,
    /// what is allowed), which the agent passes on to the RIC.
    fn apply(&mut self, drb: DrbKey, change: &TcChange, now: Instant) -> Result<(), String>;
}

/// Applies `change` to `pipeline` entirely or not at all.
///
/// `Pipeline::apply` leaves the pipeline unchanged when one control fails,
/// but a list of controls could fail half way. So the list is first
/// applied to a scratch pipeline built from the current configuration
/// (validation depends only on the configuration), and to the real one
/// only if every control passed there and the result is a configuration
/// that builds. A deploy keeps the queued packets
/// of queues whose id survives by reconfiguring in place: the new
/// configuration is reached by deleting the queues it lacks, modifying the
/// ones it keeps, adding the new ones and then replacing the other stages.
pub fn apply_atomically(
    pipeline: &mut Pipeline,
    change: &TcChange,
    now: Instant,
) -> Result<(), String> {
    let controls = match change {
        TcChange::Controls(c) => c.clone(),
        TcChange::Deploy(target) => {
            target.build().map_err(|e| e.to_string())?;
            deploy_controls(&pipeline.config(), target)
        }
    };
    let mut scratch = pipeline.config().build().map_err(|e| e.to_string())?;
    for (i, c) in controls.iter().enumerate() {
        scratch.apply(c.clone(), now).map_err(|e| {
            if controls.len() == 1 {
                e.to_string()
            } else {
                format!("control {} of {}: {e}", i + 1, controls.len())
            }
        })?;
    }
    // `Pipeline::apply` does not check every cross reference (a policer
    // may be pointed at a queue that does not exist); a change whose
    // result would not build as a configuration is refused here.
    scratch
        .config()
        .build()
        .map_err(|e| format!("the resulting pipeline would be invalid: {e}"))?;
    for c in controls {
        pipeline
            .apply(c, now)
            .map_err(|e| format!("internal: a control that passed validation failed: {e}"))?;
    }
    Ok(())
}

/// The controls that turn a pipeline configured as `from` into `to`.
fn deploy_controls(from: &PipelineConfig, to: &PipelineConfig) -> Vec<Control> {
    use tcran_core::QueueId;
    use tcran_tc::classify::ClassifierConfig;
    let expand = |c: &PipelineConfig| -> Vec<(QueueId, tcran_tc::QueueConfig)> {
        c.queues
            .iter()
            .flat_map(|q| {
                q.ids().map(move |id| {
                    (
                        id,
                        tcran_tc::QueueConfig {
                            id,
                            count: 1,
                            ..q.clone()
                        },
                    )
                })
            })
            .collect()
    };
    let old = expand(from);
    let new = expand(to);
    let existed = |id: QueueId| old.iter().any(|(o, _)| *o == id);
    // The classifier may point at queues about to go: everything goes to
    // the default queue until the new classifier is in place (last).
    let mut out = vec![Control::SetClassifier {
        classifier: ClassifierConfig::None,
    }];
    // New queues first, so that the default can move before deletions.
    for (id, q) in &new {
        out.push(if existed(*id) {
            Control::ModifyQueue { queue: q.clone() }
        } else {
            Control::AddQueue { queue: q.clone() }
        });
    }
    out.push(Control::SetDefaultQueue {
        id: to.default_queue_id().expect("a built config has queues"),
    });
    for (id, _) in &old {
        if !new.iter().any(|(n, _)| n == id) {
            out.push(Control::DeleteQueue { id: *id });
        }
    }
    out.push(Control::SetScheduler {
        scheduler: to.scheduler.clone(),
    });
    out.push(Control::SetPacer {
        pacer: to.pacer.clone(),
    });
    out.push(Control::SetTotalLimit {
        limit_packets: to.limit_packets,
    });
    out.push(Control::SetClassifier {
        classifier: to.classifier.clone(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_tc::queue::{CodelConfig, FifoConfig, QueueKindConfig};

    fn fifo_pipeline() -> Pipeline {
        PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {}))
            .build()
            .unwrap()
    }

    #[test]
    fn a_failing_control_in_a_list_changes_nothing() {
        let mut p = fifo_pipeline();
        let before = p.config();
        let change = TcChange::Controls(vec![
            Control::AddQueue {
                queue: tcran_tc::QueueConfig::new(
                    1,
                    QueueKindConfig::Codel(CodelConfig::default()),
                ),
            },
            Control::DeleteQueue {
                id: tcran_core::QueueId(7),
            },
        ]);
        let err = apply_atomically(&mut p, &change, Instant::ZERO).unwrap_err();
        assert!(err.contains("control 2 of 2"), "{err}");
        assert_eq!(p.config(), before);
    }

    #[test]
    fn a_change_leaving_an_invalid_pipeline_is_refused() {
        // Found by the e2_flexric_tc fuzz target: `Pipeline::apply` accepts
        // a policer redirecting to a queue that does not exist.
        let mut p = fifo_pipeline();
        let before = p.config();
        let policer = tcran_tc::policer::PolicerConfig::token_bucket(
            tcran_core::BitRate(1_000_000),
            tcran_core::ByteSize(1500),
            tcran_tc::policer::PolicerAction::Redirect,
        );
        let policer = match policer {
            tcran_tc::policer::PolicerConfig::TokenBucket {
                rate,
                burst,
                action,
                window,
                ..
            } => tcran_tc::policer::PolicerConfig::TokenBucket {
                rate,
                burst,
                action,
                window,
                redirect: Some(tcran_core::QueueId(256)),
            },
        };
        let change = TcChange::Controls(vec![Control::SetPolicer {
            id: tcran_core::QueueId(0),
            policer: Some(policer),
        }]);
        let err = apply_atomically(&mut p, &change, Instant::ZERO).unwrap_err();
        assert!(err.contains("redirect"), "{err}");
        assert_eq!(p.config(), before);
    }

    #[test]
    fn deploy_reaches_the_target_configuration() {
        let mut p = fifo_pipeline();
        let target: PipelineConfig = toml::from_str(
            r#"
            default_queue = 3
            scheduler = { kind = "priority" }
            pacer = { kind = "bdp" }
            classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 2 } ] }
            [[queues]]
            id = 2
            kind = "fifo"
            [[queues]]
            id = 3
            kind = "codel"
            priority = 1
            "#,
        )
        .unwrap();
        apply_atomically(&mut p, &TcChange::Deploy(target.clone()), Instant::ZERO).unwrap();
        assert_eq!(p.config(), target.build().unwrap().config());
    }
}
