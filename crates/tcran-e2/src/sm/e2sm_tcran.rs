//! tcran's own TC service model, E2SM-TCRAN v1 (`asn1/e2sm-tcran-v1.asn`,
//! the versioned schema): every DRB's pipeline addressed by (RNTI, DRB,
//! direction: an uplink DRB's pipeline is the UE's; the direction is an
//! extension addition of `DrbRef`, absent for the downlink, so a peer of
//! the module's first edition reads every downlink reference unchanged),
//! statistics of every stage plus RLC/MAC KPIs, triggers by period and by
//! condition, and controls that carry any tcran [`Control`] or a whole
//! [`PipelineConfig`] (UTF-8 JSON in tcran's configuration schema).
//!
//! - RAN function definition: name `TCRAN-TC`, version 1, the DRBs now,
//!   downlink then uplink (a
//!   change of DRBs modifies the RAN function, announced by RIC Service
//!   Update to RICs that accept it).
//! - Event trigger: `periodic` (every period, from 1 ms) or `condition`
//!   (checked every period: `metric > threshold` on a DRB; reported at each
//!   check while it holds, or once when it becomes true).
//! - Action definition: the DRBs to report (empty: all, of both directions).
//! - Indication: header (node time, cause), message: one `DrbReport` per
//!   DRB reported.
//! - Control: header = the DRB, message = `control` (one [`Control`] as
//!   a JSON object, or a JSON array of them applied all or none; the empty
//!   array changes nothing and reads the configuration: the node's `apply`
//!   is not called, and the agent counts it as a read, not as an applied
//!   control) or `deploy` (a [`PipelineConfig`] as JSON); the outcome
//!   carries the resulting configuration, or the refusal.

use super::report_stream::ReportStream;
use super::{
    aper, cause, to_aper, ControlOutcome, Indication, Job, JobState, Refusal, ServiceModel,
    SmDecodeError, MAX_MESSAGE, MIN_PERIOD,
};
use crate::asn::e2sm_tcran as t;
use crate::e2ap::{Action, ActionType, RanFunction};
use std::collections::BTreeMap;
use tcran_control::{Direction, DrbKey, LowerLayerKpis, RanNode, TcView};
use tcran_core::reason::{DropReason, MarkReason};
use tcran_core::{Duration, Instant};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{Change, Control, PipelineConfig};

/// Default RAN function id (none of FlexRIC's plugins uses it).
pub const DEFAULT_RAN_FUNCTION_ID: u16 = 246;
/// RAN function OID (tcran has no registered arc; a name instead).
pub const OID: &str = "tcran.e2sm-tcran.1";
/// Name in the RAN function definition.
pub const NAME: &str = "TCRAN-TC";

/// Schema version this module implements.
pub const VERSION: u8 = 1;

/// The E2SM-TCRAN service model.
#[derive(Debug, Clone)]
pub struct TcRan {
    pub ran_function_id: u16,
}

impl Default for TcRan {
    fn default() -> Self {
        TcRan {
            ran_function_id: DEFAULT_RAN_FUNCTION_ID,
        }
    }
}

/// The quantity a condition trigger compares with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Waiting time of the oldest SDU in the RLC buffer, us.
    RlcSojournUs,
    /// Bytes in the RLC buffer.
    RlcBacklogBytes,
    /// Largest last sojourn among the DRB's TC queues, us.
    TcSojournUs,
    /// Packets held by the TC pipeline.
    TcBacklogPackets,
    /// TC drops since the previous check.
    TcDropsPerCheck,
}

/// How a subscription triggers.
#[derive(Debug, Clone, PartialEq)]
pub enum Trigger {
    Periodic {
        period_ms: u32,
    },
    Condition {
        check_period_ms: u32,
        metric: Metric,
        threshold: u64,
        rising_edge_only: bool,
    },
}

/// State of one E2SM-TCRAN report action.
#[derive(Debug, Clone, PartialEq)]
pub struct TcRanJob {
    pub drbs: Vec<DrbKey>,
    pub trigger: Trigger,
    /// Per DRB: whether the condition held at the last check, and the drop
    /// count then.
    held: BTreeMap<DrbKey, (bool, u64)>,
    scratch: Vec<DrbKey>,
    /// The message being written, and one DRB's statistics: reused every
    /// period and DRB, so a report allocates nothing per DRB.
    work: Box<Work>,
}

/// See [`TcRanJob`].
#[derive(Debug, Clone, Default, PartialEq)]
struct Work {
    stream: ReportStream,
    stats: PipelineStats,
    lower: LowerLayerKpis,
}

/// `TcDirection`'s value for the uplink (`ENUMERATED { downlink, uplink, ... }`).
const UPLINK: u8 = 1;

fn drb_ref(d: DrbKey) -> t::DrbRef {
    t::DrbRef {
        rnti: t::DrbRefRnti(d.rnti.0),
        drb: t::DrbRefDrb(d.drb.0.clamp(1, 32)),
        // Absent for the downlink: the first edition's encoding.
        direction: match d.dir {
            Direction::Downlink => None,
            Direction::Uplink => Some(t::TcDirection(UPLINK)),
        },
    }
}

/// The DRB a `DrbRef` names (no direction, or `downlink`: the downlink).
pub(crate) fn drb_key(d: &t::DrbRef) -> DrbKey {
    match d.direction {
        Some(t::TcDirection(UPLINK)) => DrbKey::uplink(d.rnti.0, d.drb.0),
        _ => DrbKey::new(d.rnti.0, d.drb.0),
    }
}

/// Encodes an event trigger (for RIC-side tools and tests).
pub fn event_trigger(trigger: &Trigger) -> Vec<u8> {
    to_aper(&match *trigger {
        Trigger::Periodic { period_ms } => t::TcEventTrigger::Periodic(t::TcPeriodic {
            period_ms: t::TcPeriodicPeriodMs(period_ms),
        }),
        Trigger::Condition {
            check_period_ms,
            metric,
            threshold,
            rising_edge_only,
        } => t::TcEventTrigger::Condition(t::TcCondition {
            check_period_ms: t::TcConditionCheckPeriodMs(check_period_ms),
            metric: t::TcMetric(metric as u8),
            threshold: t::Counter(threshold),
            rising_edge_only: t::TcConditionRisingEdgeOnly(rising_edge_only),
        }),
    })
}

/// Decodes an event trigger.
pub fn decode_event_trigger(bytes: &[u8]) -> Result<Trigger, SmDecodeError> {
    Ok(match aper::<t::TcEventTrigger>(bytes)? {
        t::TcEventTrigger::Periodic(p) => Trigger::Periodic {
            period_ms: p.period_ms.0,
        },
        t::TcEventTrigger::Condition(c) => Trigger::Condition {
            check_period_ms: c.check_period_ms.0,
            metric: match c.metric.0 {
                0 => Metric::RlcSojournUs,
                1 => Metric::RlcBacklogBytes,
                2 => Metric::TcSojournUs,
                3 => Metric::TcBacklogPackets,
                4 => Metric::TcDropsPerCheck,
                m => {
                    return Err(SmDecodeError::Unknown {
                        what: "condition metric",
                        value: m.into(),
                    })
                }
            },
            threshold: c.threshold.0,
            rising_edge_only: c.rising_edge_only.0,
        },
    })
}

/// Encodes an action definition: the DRBs to report (empty: all).
pub fn action_definition(drbs: &[DrbKey]) -> Vec<u8> {
    to_aper(&t::TcActionDefinition {
        drbs: t::DrbList(drbs.iter().map(|d| drb_ref(*d)).collect()),
    })
}

/// Encodes a control header and message.
pub fn control(drb: DrbKey, change: &Change) -> (Vec<u8>, Vec<u8>) {
    let header = to_aper(&t::TcControlHeader { drb: drb_ref(drb) });
    let one = |c: &Control| {
        t::TcControlMessage::Control(t::TcControlMessage_control(
            serde_json::to_string(c).expect("serialisable"),
        ))
    };
    let message = match change {
        Change::Control(c) => one(c),
        Change::Controls(c) if c.len() == 1 => one(&c[0]),
        // Several controls (all or none) travel as a JSON array; an empty
        // array changes nothing and asks for the configuration (the
        // outcome carries it).
        Change::Controls(c) => t::TcControlMessage::Control(t::TcControlMessage_control(
            serde_json::to_string(c).expect("serialisable"),
        )),
        Change::Deploy(cfg) => t::TcControlMessage::Deploy(t::TcControlMessage_deploy(
            serde_json::to_string(cfg).expect("serialisable"),
        )),
    };
    (header, to_aper(&message))
}

/// A node's answer to a control, as the RIC reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcOutcome {
    /// Applied (or read): the DRB's configuration as JSON, empty if the
    /// node did not send it.
    Applied(String),
    /// Refused, nothing changed: the node's reason in one line.
    Refused(String),
}

/// Decodes a control outcome; `Err` is an outcome that does not decode.
pub fn decode_outcome(bytes: &[u8]) -> Result<TcOutcome, SmDecodeError> {
    let o: t::TcControlOutcome = aper(bytes)?;
    Ok(match (o.pipeline, o.refusal) {
        (_, Some(r)) => TcOutcome::Refused(r.0),
        (Some(p), None) => TcOutcome::Applied(p.0),
        (None, None) => TcOutcome::Applied(String::new()),
    })
}

/// Decodes an indication (header, message) into E2SM-TCRAN's ASN.1
/// types, by hampi's derived decoder. The RIC's hot path does not go
/// through these types: [`super::tc_status::decode_tc`] reads the message
/// straight into tcran's statistics types.
pub fn decode_indication(
    header: &[u8],
    message: &[u8],
) -> Result<(t::TcIndicationHeader, t::TcIndicationMessage), SmDecodeError> {
    Ok((aper(header)?, aper(message)?))
}

fn reasons<R: Copy + std::fmt::Display>(all: &[R], counts: &[u64]) -> Vec<t::ReasonCount> {
    all.iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(r, n)| t::ReasonCount {
            reason: t::ReasonCountReason(r.to_string()),
            count: t::Counter(*n),
        })
        .collect()
}

fn us(ms: f64) -> t::Counter {
    t::Counter((ms * 1000.0).max(0.0) as u64)
}

fn bps(b: f64) -> t::Counter {
    t::Counter(b.max(0.0) as u64)
}

/// The report of one DRB.
pub fn drb_report(drb: DrbKey, v: &TcView) -> t::DrbReport {
    drb_report_of(drb, &v.stats, &v.lower)
}

/// The report of one DRB from its statistics and lower-layer KPIs.
pub fn drb_report_of(drb: DrbKey, s: &PipelineStats, lower: &LowerLayerKpis) -> t::DrbReport {
    let tot = &s.totals;
    t::DrbReport {
        drb: drb_ref(drb),
        totals: t::PipelineTotals {
            in_packets: t::Counter(tot.in_packets),
            in_bytes: t::Counter(tot.in_bytes),
            out_packets: t::Counter(tot.out_packets),
            out_bytes: t::Counter(tot.out_bytes),
            dropped_packets: t::Counter(tot.dropped_packets),
            dropped_bytes: t::Counter(tot.dropped_bytes),
            queued_packets: t::Counter(tot.queued_packets),
            queued_bytes: t::Counter(tot.queued_bytes),
        },
        classifier: t::ClassifierCounters {
            classified: t::Counter(s.classifier.classified),
            defaulted: t::Counter(s.classifier.defaulted),
            missing_queue: t::Counter(s.classifier.missing_queue),
            malformed: t::Counter(s.classifier.malformed),
        },
        queues: t::DrbReportQueues(
            s.queues
                .iter()
                .map(|q| t::QueueReport {
                    id: t::QueueReportId(q.id.0),
                    kind: t::QueueReportKind(q.kind.to_string()),
                    backlog_packets: t::Counter(q.backlog_packets as u64),
                    backlog_bytes: t::Counter(q.backlog_bytes),
                    offered_packets: t::Counter(q.offered_packets),
                    offered_bytes: t::Counter(q.offered_bytes),
                    forwarded_packets: t::Counter(q.forwarded_packets),
                    forwarded_bytes: t::Counter(q.forwarded_bytes),
                    drops: t::QueueReportDrops(reasons(DropReason::ALL, &q.drops.0)),
                    marks: t::QueueReportMarks(reasons(MarkReason::ALL, &q.marks.0)),
                    redirected_out: t::Counter(q.redirected_out),
                    moved_in_packets: t::Counter(q.moved_in_packets),
                    avg_sojourn_us: us(q.avg_sojourn_ms),
                    last_sojourn_us: us(q.last_sojourn_ms),
                    policer: q.policer.as_ref().map(|p| t::PolicerReport {
                        rate_bps: t::Counter(p.rate_bps),
                        burst_bytes: t::Counter(p.burst_bytes),
                        passed_packets: t::Counter(p.passed_packets),
                        dropped_packets: t::Counter(p.dropped_packets),
                        marked_packets: t::Counter(p.marked_packets),
                        redirected_packets: t::Counter(p.redirected_packets),
                        measured_bps: bps(p.measured_bps),
                        out_of_profile_bps: bps(p.out_of_profile_bps),
                    }),
                    shaper: q.shaper.as_ref().map(|sh| t::ShaperReport {
                        rate_bps: t::Counter(sh.rate_bps),
                        measured_bps: bps(sh.measured_bps),
                        delayed: t::Counter(sh.delayed),
                    }),
                    aqm: t::AqmReport {
                        probability_ppm: q
                            .aqm
                            .probability
                            .map(|p| t::AqmReportProbabilityPpm((p.clamp(0.0, 1.0) * 1e6) as u32)),
                        dropping: q.aqm.dropping.map(t::AqmReportDropping),
                        count: q.aqm.count.map(|c| t::Counter(c as u64)),
                    },
                })
                .collect(),
        ),
        scheduler: t::DrbReportScheduler(s.scheduler.clone()),
        pacer: t::PacerReport {
            kind: t::PacerReportKind(s.pacer_kind.clone()),
            bandwidth_bps: bps(s.pacer.bandwidth_bps * 8.0),
            allowance_bytes: bps(s.pacer.allowance_bytes),
            limit: s.pacer.limit.map(bps),
            refused: t::Counter(s.pacer.refused),
        },
        lower: t::LowerLayerKpis {
            rlc_backlog_bytes: t::Counter(lower.rlc_backlog_bytes),
            rlc_backlog_sdus: t::Counter(lower.rlc_backlog_sdus as u64),
            rlc_sojourn_us: t::Counter(lower.rlc_sojourn.as_nanos() / 1000),
            rlc_tx_bytes: t::Counter(lower.rlc_tx_bytes),
            mac_tx_bytes: t::Counter(lower.mac_tx_bytes),
            mac_prbs: t::Counter(lower.mac_prbs),
            mcs: t::LowerLayerKpisMcs(lower.mcs.min(31)),
            handover_margin: lower
                .handover_margin_cdb
                .map(|m| t::HandoverMargin(m.clamp(-12500, 12500))),
        },
    }
}

fn metric_value(
    m: Metric,
    stats: &PipelineStats,
    lower: &LowerLayerKpis,
    drops_before: u64,
) -> u64 {
    match m {
        Metric::RlcSojournUs => lower.rlc_sojourn.as_nanos() / 1000,
        Metric::RlcBacklogBytes => lower.rlc_backlog_bytes,
        Metric::TcSojournUs => stats
            .queues
            .iter()
            .map(|q| (q.last_sojourn_ms * 1000.0) as u64)
            .max()
            .unwrap_or(0),
        Metric::TcBacklogPackets => stats.totals.queued_packets,
        Metric::TcDropsPerCheck => stats.totals.dropped_packets.saturating_sub(drops_before),
    }
}

impl ServiceModel for TcRan {
    fn ran_function_id(&self) -> u16 {
        self.ran_function_id
    }

    fn ran_function(&self, node: &dyn RanNode) -> RanFunction {
        let mut drbs = Vec::new();
        node.drbs(&mut drbs);
        node.uplink_drbs(&mut drbs);
        RanFunction {
            id: self.ran_function_id,
            definition: to_aper(&t::TcRanFunctionDefinition {
                name: t::TcRanFunctionDefinitionName(NAME.into()),
                version: t::TcRanFunctionDefinitionVersion(VERSION),
                drbs: t::DrbList(drbs.into_iter().map(drb_ref).collect()),
            }),
            revision: VERSION as u16,
            oid: OID.into(),
        }
    }

    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        _node: &dyn RanNode,
    ) -> Result<Job, Refusal> {
        if action.kind != ActionType::Report {
            return Err(Refusal::action_not_supported(
                "only REPORT actions are supported",
            ));
        }
        let trigger = decode_event_trigger(trigger)
            .map_err(|e| Refusal::action_not_supported(format!("event trigger: {e}")))?;
        let drbs = match &action.definition {
            None => Vec::new(),
            Some(d) => aper::<t::TcActionDefinition>(d)
                .map_err(|e| Refusal::action_not_supported(format!("action definition: {e}")))?
                .drbs
                .0
                .iter()
                .map(drb_key)
                .collect(),
        };
        let period_ms = match trigger {
            Trigger::Periodic { period_ms } => period_ms,
            Trigger::Condition {
                check_period_ms, ..
            } => check_period_ms,
        };
        Ok(Job {
            period: Duration::from_millis(period_ms as u64).max(MIN_PERIOD),
            state: JobState::TcRan(TcRanJob {
                drbs,
                trigger,
                held: BTreeMap::new(),
                scratch: Vec::new(),
                work: Box::default(),
            }),
        })
    }

    fn indicate(&self, job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication> {
        let JobState::TcRan(job) = job else {
            return Vec::new();
        };
        job.scratch.clear();
        if job.drbs.is_empty() {
            node.drbs(&mut job.scratch);
            node.uplink_drbs(&mut job.scratch);
        } else {
            job.scratch.extend_from_slice(&job.drbs);
        }
        let (condition, cause) = match job.trigger {
            Trigger::Periodic { .. } => (None, 0),
            Trigger::Condition {
                metric,
                threshold,
                rising_edge_only,
                ..
            } => (Some((metric, threshold, rising_edge_only)), 1),
        };
        // The hot path: each DRB's report is written from its statistics
        // straight into the job's reused buffer (super::report_stream,
        // hampi's bytes); a message is closed when the next report would
        // take it past MAX_MESSAGE.
        let mut messages = Vec::new();
        let Work {
            stream,
            stats,
            lower,
        } = &mut *job.work;
        stream.start();
        for drb in &job.scratch {
            if !node.tc_stats_into(*drb, now, stats, lower) {
                continue;
            }
            if let Some((metric, threshold, rising_edge_only)) = condition {
                let (held_before, drops_before) = job.held.get(drb).copied().unwrap_or_default();
                let holds = metric_value(metric, stats, lower, drops_before) > threshold;
                job.held.insert(*drb, (holds, stats.totals.dropped_packets));
                if !holds || (rising_edge_only && held_before) {
                    continue;
                }
            }
            if !stream.push(*drb, stats, lower, MAX_MESSAGE) {
                messages.push(stream.finish().to_vec());
                stream.start();
                stream.push(*drb, stats, lower, MAX_MESSAGE);
            }
        }
        // A periodic report is sent even without DRBs; a condition only
        // when it held somewhere.
        if !stream.is_empty() || (condition.is_none() && messages.is_empty()) {
            messages.push(stream.finish().to_vec());
        }
        if messages.is_empty() {
            return Vec::new();
        }
        let header = to_aper(&t::TcIndicationHeader {
            time_ns: t::Counter(now.as_nanos()),
            cause: t::TcIndicationHeaderCause(cause),
        });
        messages.into_iter().map(|m| (header.clone(), m)).collect()
    }

    fn control(
        &mut self,
        header: &[u8],
        message: &[u8],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> ControlOutcome {
        let refused = |cause: u8, why: String| ControlOutcome::Refused {
            refusal: Refusal::ric_request(cause, why.clone()),
            outcome: Some(to_aper(&t::TcControlOutcome {
                pipeline: None,
                refusal: Some(t::TcControlOutcomeRefusal(why)),
            })),
        };
        let invalid = |what: String| refused(cause::CONTROL_MESSAGE_INVALID, what);
        let drb = match aper::<t::TcControlHeader>(header) {
            Ok(h) => drb_key(&h.drb),
            Err(e) => return invalid(format!("control header: {e}")),
        };
        let change = match aper::<t::TcControlMessage>(message) {
            Ok(t::TcControlMessage::Control(c)) if c.0.trim_start().starts_with('[') => {
                match serde_json::from_str::<Vec<Control>>(&c.0) {
                    Ok(list) => Change::Controls(list),
                    Err(e) => return invalid(format!("control list: {e}")),
                }
            }
            Ok(t::TcControlMessage::Control(c)) => match serde_json::from_str::<Control>(&c.0) {
                Ok(c) => Change::Control(c),
                Err(e) => return invalid(format!("control: {e}")),
            },
            Ok(t::TcControlMessage::Deploy(d)) => {
                match serde_json::from_str::<PipelineConfig>(&d.0) {
                    Ok(c) => Change::Deploy(c),
                    Err(e) => return invalid(format!("deploy: {e}")),
                }
            }
            Err(e) => return invalid(format!("control message: {e}")),
        };
        let failed = |why: String| refused(cause::CONTROL_FAILED_TO_EXECUTE, why);
        let outcome = |config: &PipelineConfig| {
            Some(to_aper(&t::TcControlOutcome {
                pipeline: serde_json::to_string(config)
                    .ok()
                    .map(t::TcControlOutcomePipeline),
                refusal: None,
            }))
        };
        // A read goes nowhere near the node's `apply`: a node that logs
        // its reconfigurations must not log one for it.
        if change.is_read() {
            return match node.tc_view(drb, now) {
                Some(v) => ControlOutcome::Read {
                    outcome: outcome(&v.config),
                },
                None => failed(format!("{drb}: the DRB does not exist")),
            };
        }
        match node.apply(drb, &change, now) {
            Ok(applied) => ControlOutcome::Done {
                outcome: outcome(&applied.config),
            },
            Err(why) => failed(format!("{drb}: {why}")),
        }
    }
}
