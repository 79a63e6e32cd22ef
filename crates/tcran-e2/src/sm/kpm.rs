//! E2SM-KPM v02.03 (O-RAN.WG3.E2SM-KPM-v02.03): REPORT style 1 (E2 node
//! measurements, action definition format 1, indication message format 1)
//! and style 4 (condition-based UE-level measurements, action definition
//! format 4, indication message format 3), periodic event trigger
//! (format 1).
//!
//! Measurements (TS 28.552), computed from the node's cumulative
//! [`KpmCounters`] over each granularity period:
//!
//! | name | TS 28.552 | value | unit |
//! |---|---|---|---|
//! | `DRB.UEThpDl` | 5.1.1.3.1 | real, ThpVolDl / ThpTimeDl | kbit/s |
//! | `DRB.RlcSduDelayDl` | 5.1.3.3.3 | real, mean RLC SDU delay | 0.1 ms |
//! | `DRB.RlcSduTransmittedVolumeDL` | 5.1.3.6.1.1 | integer | kbit |
//! | `DRB.PdcpSduVolumeDL` | 5.1.2.1.1.1 | integer | Mbit |
//! | `RRU.PrbUsedDl` | 5.1.1.2.5 | integer, mean PRBs per slot | PRB |
//! | `RRU.PrbAvailDl` | 5.1.1.2.7 | integer, mean PRBs per slot | PRB |
//! | `RRU.PrbTotDl` | 5.1.1.2.1 | integer, used / available | % |
//!
//! A ratio without samples (no burst, no SDU, no slot in the period) is
//! `noValue`. Volumes are whole units of the cumulative counter, so the
//! reports of consecutive periods add up to the total (the remainder of
//! one period is carried into the next, never lost).
//!
//! UEs are identified as `gNB-DU-UEID` with `gNB-CU-UE-F1AP-ID` = RNTI.
//! tcran evaluates no radio test condition (RSRP, CQI, ...), so the UEs
//! of a style 4 subscription are all UEs with a DRB; the condition list
//! must still be well formed.

use super::{
    aper, encode_in_messages, to_aper, ControlOutcome, Indication, Job, JobState, Refusal,
    ServiceModel, SmDecodeError, MIN_PERIOD,
};
use crate::asn::e2sm_kpm as k;
use crate::e2ap::{Action, ActionType, RanFunction};
use tcran_control::{DrbKey, KpmCounters, RanNode};
use tcran_core::{Duration, Instant, Rnti};

/// RAN function id of E2SM-KPM in FlexRIC and OAI.
pub const RAN_FUNCTION_ID: u16 = 2;
/// E2SM-KPM v2 OID (O-RAN.WG3.E2SM-KPM-v02.03 clause 6.1).
pub const OID: &str = "1.3.6.1.4.1.53148.1.2.2.2";

/// The measurements tcran reports.
pub const MEASUREMENTS: [&str; 7] = [
    "DRB.UEThpDl",
    "DRB.RlcSduDelayDl",
    "DRB.RlcSduTransmittedVolumeDL",
    "DRB.PdcpSduVolumeDL",
    "RRU.PrbUsedDl",
    "RRU.PrbAvailDl",
    "RRU.PrbTotDl",
];

/// The E2SM-KPM service model.
#[derive(Debug, Clone, Default)]
pub struct Kpm;

/// One value of a measurement record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Integer(u32),
    Real(f64),
    NoValue,
}

/// Computes measurement `name` from the counters at the start (`a`) and
/// end (`b`) of a granularity period.
pub fn measure(name: &str, a: &KpmCounters, b: &KpmCounters) -> Value {
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let whole = |x: u64, y: u64, unit: u64| {
        Value::Integer((y / unit).saturating_sub(x / unit).min(u32::MAX as u64) as u32)
    };
    let mean_per_slot = |x: u64, y: u64| {
        let slots = d(a.slots, b.slots);
        if slots == 0 {
            Value::NoValue
        } else {
            Value::Integer(((d(x, y) as f64 / slots as f64).round()).min(u32::MAX as f64) as u32)
        }
    };
    match name {
        "DRB.UEThpDl" => {
            let t = d(a.thp_time_dl.as_nanos(), b.thp_time_dl.as_nanos());
            if t == 0 {
                Value::NoValue
            } else {
                let bits = d(a.thp_volume_bits_dl, b.thp_volume_bits_dl) as f64;
                Value::Real(bits / (t as f64 * 1e-9) / 1000.0)
            }
        }
        "DRB.RlcSduDelayDl" => {
            let n = d(a.rlc_sdus_delivered, b.rlc_sdus_delivered);
            if n == 0 {
                Value::NoValue
            } else {
                let sum = d(
                    a.rlc_sdu_delay_sum.as_nanos(),
                    b.rlc_sdu_delay_sum.as_nanos(),
                );
                Value::Real(sum as f64 / n as f64 / 100_000.0)
            }
        }
        "DRB.RlcSduTransmittedVolumeDL" => whole(
            a.rlc_sdu_transmitted_bits_dl,
            b.rlc_sdu_transmitted_bits_dl,
            1000,
        ),
        "DRB.PdcpSduVolumeDL" => whole(a.pdcp_sdu_bits_dl, b.pdcp_sdu_bits_dl, 1_000_000),
        "RRU.PrbUsedDl" => mean_per_slot(a.prb_used_dl, b.prb_used_dl),
        "RRU.PrbAvailDl" => mean_per_slot(a.prb_available_dl, b.prb_available_dl),
        "RRU.PrbTotDl" => {
            let avail = d(a.prb_available_dl, b.prb_available_dl);
            if avail == 0 {
                Value::NoValue
            } else {
                let used = d(a.prb_used_total_dl, b.prb_used_total_dl) as f64;
                Value::Integer((100.0 * used / avail as f64).round().min(100.0) as u32)
            }
        }
        _ => Value::NoValue,
    }
}

/// What a KPM subscription reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// Style 1: the whole node.
    Node,
    /// Style 4: each UE.
    Ues,
}

/// State of one KPM report action.
#[derive(Debug, Clone, PartialEq)]
pub struct KpmJob {
    pub scope: Scope,
    pub names: Vec<String>,
    /// Granularity periods per report.
    pub periods_per_report: u32,
    pub granularity_ms: u32,
    /// Counters at the start of the current granularity period (node, or
    /// per UE in RNTI order); `None` until the first tick.
    last: Option<Vec<(Rnti, KpmCounters)>>,
    /// Records collected so far in this report, per UE (or one for the node).
    collected: Vec<(Rnti, Vec<Vec<Value>>)>,
    /// Node time at the start of this report.
    report_start: Option<Instant>,
}

/// The measurement names of a format 1 subscription, checked.
fn names_of(f1: &k::E2SM_KPM_ActionDefinition_Format1) -> Result<Vec<String>, Refusal> {
    let mut names = Vec::new();
    for item in &f1.meas_info_list.0 {
        let name = match &item.meas_type {
            k::MeasurementType::MeasName(n) => n.0.clone(),
            k::MeasurementType::MeasID(id) => {
                return Err(Refusal::action_not_supported(format!(
                    "measurement id {} is not supported: name the measurement",
                    id.0
                )))
            }
        };
        if !MEASUREMENTS.contains(&name.as_str()) {
            return Err(Refusal::action_not_supported(format!(
                "measurement {name} is not supported (supported: {})",
                MEASUREMENTS.join(", ")
            )));
        }
        let plain = item.label_info_list.0.iter().all(|l| {
            let m = &l.meas_label;
            m.plmn_id.is_none() && m.slice_id.is_none() && m.five_qi.is_none() && m.qfi.is_none()
        });
        if !plain {
            return Err(Refusal::action_not_supported(format!(
                "measurement {name}: only the no-label variant is supported"
            )));
        }
        names.push(name);
    }
    Ok(names)
}

fn record(values: &[Value]) -> k::MeasurementDataItem {
    k::MeasurementDataItem {
        meas_record: k::MeasurementRecord(
            values
                .iter()
                .map(|v| match v {
                    Value::Integer(i) => {
                        k::MeasurementRecordItem::Integer(k::MeasurementRecordItem_integer(*i))
                    }
                    Value::Real(r) => {
                        k::MeasurementRecordItem::Real(k::MeasurementRecordItem_real(*r))
                    }
                    Value::NoValue => {
                        k::MeasurementRecordItem::NoValue(k::MeasurementRecordItem_noValue)
                    }
                })
                .collect(),
        ),
        incomplete_flag: None,
    }
}

fn info_list(names: &[String]) -> k::MeasurementInfoList {
    k::MeasurementInfoList(
        names
            .iter()
            .map(|n| k::MeasurementInfoItem {
                meas_type: k::MeasurementType::MeasName(k::MeasurementTypeName(n.clone())),
                label_info_list: k::LabelInfoList(vec![k::LabelInfoItem {
                    meas_label: no_label(),
                }]),
            })
            .collect(),
    )
}

fn no_label() -> k::MeasurementLabel {
    k::MeasurementLabel {
        no_label: Some(k::MeasurementLabelNoLabel(0)),
        plmn_id: None,
        slice_id: None,
        five_qi: None,
        qfi: None,
        qci: None,
        qc_imax: None,
        qc_imin: None,
        ar_pmax: None,
        ar_pmin: None,
        bitrate_range: None,
        layer_mu_mimo: None,
        sum: None,
        dist_bin_x: None,
        dist_bin_y: None,
        dist_bin_z: None,
        pre_label_override: None,
        start_end_ind: None,
        min: None,
        max: None,
        avg: None,
    }
}

/// The E2 node's UEs and their summed DRB counters, in RNTI order.
fn ue_counters(node: &dyn RanNode) -> Vec<(Rnti, KpmCounters)> {
    let mut drbs: Vec<DrbKey> = Vec::new();
    node.drbs(&mut drbs);
    let mut out: Vec<(Rnti, KpmCounters)> = Vec::new();
    for drb in drbs {
        let Some(c) = node.kpm_drb(drb) else { continue };
        match out.last_mut() {
            Some((rnti, sum)) if *rnti == drb.rnti => add(sum, &c),
            _ => out.push((drb.rnti, c)),
        }
    }
    out
}

fn add(sum: &mut KpmCounters, c: &KpmCounters) {
    sum.pdcp_sdu_bits_dl += c.pdcp_sdu_bits_dl;
    sum.rlc_sdu_transmitted_bits_dl += c.rlc_sdu_transmitted_bits_dl;
    sum.rlc_sdu_delay_sum += c.rlc_sdu_delay_sum;
    sum.rlc_sdus_delivered += c.rlc_sdus_delivered;
    sum.thp_volume_bits_dl += c.thp_volume_bits_dl;
    sum.thp_time_dl += c.thp_time_dl;
    sum.prb_used_dl += c.prb_used_dl;
    // Available PRBs and slots are the cell's, the same for every DRB.
    sum.prb_available_dl = sum.prb_available_dl.max(c.prb_available_dl);
    sum.prb_used_total_dl += c.prb_used_total_dl;
    sum.slots = sum.slots.max(c.slots);
}

impl Kpm {
    /// E2SM-KPM-RANfunction-Description of tcran's node.
    pub fn description() -> k::E2SM_KPM_RANfunction_Description {
        let actions = k::MeasurementInfo_Action_List(
            MEASUREMENTS
                .iter()
                .map(|m| k::MeasurementInfo_Action_Item {
                    meas_name: k::MeasurementTypeName(m.to_string()),
                    meas_id: None,
                })
                .collect(),
        );
        let style = |ty: i64, name: &str, action: i64, msg: i64| k::RIC_ReportStyle_Item {
            ric_report_style_type: k::RIC_Style_Type(ty),
            ric_report_style_name: k::RIC_Style_Name(name.to_string()),
            ric_action_format_type: k::RIC_Format_Type(action),
            meas_info_action_list: actions.clone(),
            ric_indication_header_format_type: k::RIC_Format_Type(1),
            ric_indication_message_format_type: k::RIC_Format_Type(msg),
        };
        k::E2SM_KPM_RANfunction_Description {
            ran_function_name: k::RANfunction_Name {
                ran_function_short_name: k::RANfunction_NameRanFunction_ShortName(
                    "ORAN-E2SM-KPM".into(),
                ),
                ran_function_e2sm_oid: k::RANfunction_NameRanFunction_E2SM_OID(OID.into()),
                ran_function_description: k::RANfunction_NameRanFunction_Description(
                    "KPM Monitor".into(),
                ),
                ran_function_instance: None,
            },
            ric_event_trigger_style_list: Some(
                k::E2SM_KPM_RANfunction_DescriptionRic_EventTriggerStyle_List(vec![
                    k::RIC_EventTriggerStyle_Item {
                        ric_event_trigger_style_type: k::RIC_Style_Type(1),
                        ric_event_trigger_style_name: k::RIC_Style_Name("Periodic Report".into()),
                        ric_event_trigger_format_type: k::RIC_Format_Type(1),
                    },
                ]),
            ),
            ric_report_style_list: Some(k::E2SM_KPM_RANfunction_DescriptionRic_ReportStyle_List(
                vec![
                    style(1, "E2 Node Measurement", 1, 1),
                    style(4, "Common Condition-based, UE-level Measurement", 4, 3),
                ],
            )),
        }
    }
}

impl ServiceModel for Kpm {
    fn ran_function_id(&self) -> u16 {
        RAN_FUNCTION_ID
    }

    fn ran_function(&self, _node: &dyn RanNode) -> RanFunction {
        RanFunction {
            id: RAN_FUNCTION_ID,
            definition: to_aper(&Kpm::description()),
            revision: 1,
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
        let t: k::E2SM_KPM_EventTriggerDefinition = aper(trigger)
            .map_err(|e| Refusal::action_not_supported(format!("event trigger: {e}")))?;
        let k::E2SM_KPM_EventTriggerDefinitionEventDefinition_formats::EventDefinition_Format1(f) =
            t.event_definition_formats;
        let report_ms = f.reporting_period.0;
        let def = action.definition.as_deref().ok_or_else(|| {
            Refusal::action_not_supported("a KPM action needs an action definition")
        })?;
        let def: k::E2SM_KPM_ActionDefinition = aper(def)
            .map_err(|e| Refusal::action_not_supported(format!("action definition: {e}")))?;
        use k::E2SM_KPM_ActionDefinitionActionDefinition_formats as F;
        let (scope, f1) = match (def.ric_style_type.0, def.action_definition_formats) {
            (1, F::ActionDefinition_Format1(f1)) => (Scope::Node, f1),
            (4, F::ActionDefinition_Format4(f4)) => (Scope::Ues, f4.subscription_info),
            (style, _) => {
                return Err(Refusal::action_not_supported(format!(
                    "REPORT style {style} with this action definition format is not supported \
                     (style 1 with format 1, style 4 with format 4)"
                )))
            }
        };
        let names = names_of(&f1)?;
        let granularity_ms = f1.granul_period.0;
        if granularity_ms == 0 || report_ms < granularity_ms || report_ms % granularity_ms != 0 {
            return Err(Refusal::action_not_supported(format!(
                "reporting period {report_ms} ms must be a multiple of the granularity period \
                 {granularity_ms} ms"
            )));
        }
        Ok(Job {
            period: Duration::from_millis(granularity_ms as u64).max(MIN_PERIOD),
            state: JobState::Kpm(KpmJob {
                scope,
                names,
                periods_per_report: report_ms / granularity_ms,
                granularity_ms,
                last: None,
                collected: Vec::new(),
                report_start: None,
            }),
        })
    }

    fn indicate(&self, job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication> {
        let JobState::Kpm(job) = job else {
            return Vec::new();
        };
        let current = match job.scope {
            Scope::Node => vec![(Rnti(0), node.kpm_cell())],
            Scope::Ues => ue_counters(node),
        };
        let Some(last) = job.last.replace(current.clone()) else {
            // First tick: the start of the first granularity period.
            job.report_start = Some(now);
            return Vec::new();
        };
        for (rnti, c) in &current {
            let Some((_, a)) = last.iter().find(|(r, _)| r == rnti) else {
                continue; // a UE that appeared during the period: from the next one
            };
            let values: Vec<Value> = job.names.iter().map(|n| measure(n, a, c)).collect();
            match job.collected.iter_mut().find(|(r, _)| r == rnti) {
                Some((_, v)) => v.push(values),
                None => job.collected.push((*rnti, vec![values])),
            }
        }
        let periods = job
            .collected
            .iter()
            .map(|(_, v)| v.len())
            .max()
            .unwrap_or(0);
        if periods < job.periods_per_report as usize {
            return Vec::new();
        }
        let start = job.report_start.replace(now).unwrap_or(now);
        let collected = std::mem::take(&mut job.collected);
        let header = k::E2SM_KPM_IndicationHeader {
            indication_header_formats:
                k::E2SM_KPM_IndicationHeaderIndicationHeader_formats::IndicationHeader_Format1(
                    k::E2SM_KPM_IndicationHeader_Format1 {
                        collet_start_time: k::TimeStamp(
                            ((start.as_nanos() / 1_000_000_000) as u32)
                                .to_be_bytes()
                                .to_vec(),
                        ),
                        file_formatversion: None,
                        sender_name: None,
                        sender_type: None,
                        vendor_name: None,
                    },
                ),
        };
        let format1 = |records: &[Vec<Value>]| k::E2SM_KPM_IndicationMessage_Format1 {
            meas_data: k::MeasurementData(records.iter().map(|r| record(r)).collect()),
            meas_info_list: Some(info_list(&job.names)),
            granul_period: Some(k::GranularityPeriod(job.granularity_ms)),
        };
        use k::E2SM_KPM_IndicationMessageIndicationMessage_formats as M;
        let header = to_aper(&header);
        let message = |m| {
            to_aper(&k::E2SM_KPM_IndicationMessage {
                indication_message_formats: m,
            })
        };
        match job.scope {
            Scope::Node => match collected.first() {
                Some((_, records)) => vec![(
                    header,
                    message(M::IndicationMessage_Format1(format1(records))),
                )],
                None => Vec::new(),
            },
            Scope::Ues => {
                let items: Vec<k::UEMeasurementReportItem> = collected
                    .iter()
                    .map(|(rnti, records)| k::UEMeasurementReportItem {
                        ue_id: ue_id(*rnti),
                        meas_report: format1(records),
                    })
                    .collect();
                // Many UEs: several indications, each within MAX_MESSAGE.
                let group = |g| {
                    message(M::IndicationMessage_Format3(
                        k::E2SM_KPM_IndicationMessage_Format3 {
                            ue_meas_report_list: k::UEMeasurementReportList(g),
                        },
                    ))
                };
                encode_in_messages(
                    &items,
                    &|g: &[k::UEMeasurementReportItem]| group(g.to_vec()),
                    &|i| to_aper(i).len(),
                )
                .into_iter()
                .map(|m| (header.clone(), m))
                .collect()
            }
        }
    }

    fn control(
        &mut self,
        _header: &[u8],
        _message: &[u8],
        _node: &mut dyn RanNode,
        _now: Instant,
    ) -> ControlOutcome {
        ControlOutcome::Refused {
            refusal: Refusal::action_not_supported("E2SM-KPM defines no control"),
            outcome: None,
        }
    }
}

/// A UE as KPM names it: `gNB-DU-UEID` with the RNTI as F1AP UE id.
pub fn ue_id(rnti: Rnti) -> k::UEID {
    k::UEID::GNB_DU_UEID(k::UEID_GNB_DU {
        gnb_cu_ue_f1ap_id: k::GNB_CU_UE_F1AP_ID(rnti.0 as u32),
        ran_ueid: None,
    })
}

/// The KPM event trigger for a reporting period (for RIC-side tools and tests).
pub fn event_trigger(report_ms: u32) -> Vec<u8> {
    to_aper(&k::E2SM_KPM_EventTriggerDefinition {
        event_definition_formats:
            k::E2SM_KPM_EventTriggerDefinitionEventDefinition_formats::EventDefinition_Format1(
                k::E2SM_KPM_EventTriggerDefinition_Format1 {
                    reporting_period: k::E2SM_KPM_EventTriggerDefinition_Format1ReportingPeriod(
                        report_ms,
                    ),
                },
            ),
    })
}

/// A KPM action definition of `style` 1 or 4 for `names` (for RIC-side
/// tools and tests). Style 4 carries one test condition (UL RSRP present),
/// which tcran matches for every UE.
pub fn action_definition(style: i64, names: &[&str], granularity_ms: u32) -> Vec<u8> {
    let f1 = k::E2SM_KPM_ActionDefinition_Format1 {
        meas_info_list: info_list(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        granul_period: k::GranularityPeriod(granularity_ms),
        cell_global_id: None,
    };
    use k::E2SM_KPM_ActionDefinitionActionDefinition_formats as F;
    let formats = if style == 4 {
        F::ActionDefinition_Format4(k::E2SM_KPM_ActionDefinition_Format4 {
            matching_ue_cond_list: k::MatchingUeCondPerSubList(vec![k::MatchingUeCondPerSubItem {
                test_cond_info: k::TestCondInfo {
                    test_type: k::TestCond_Type::Ul_rSRP(k::TestCond_Type_ul_rSRP(0)),
                    test_expr: Some(k::TestCond_Expression(k::TestCond_Expression::PRESENT)),
                    test_value: None,
                },
            }]),
            subscription_info: f1,
        })
    } else {
        F::ActionDefinition_Format1(f1)
    };
    to_aper(&k::E2SM_KPM_ActionDefinition {
        ric_style_type: k::RIC_Style_Type(style),
        action_definition_formats: formats,
    })
}

/// A KPM indication message as a RIC reads it (for RIC-side tools: the
/// xApp SDK, tests).
#[derive(Debug, Clone, PartialEq)]
pub struct KpmReport {
    /// Measurement names, in the order of each record's values.
    pub names: Vec<String>,
    /// Granularity period, ms (when the message carries it).
    pub granularity_ms: Option<u32>,
    /// Per UE (`None`: the whole node, style 1), one record per
    /// granularity period, oldest first.
    pub records: Vec<(Option<Rnti>, Vec<Vec<Value>>)>,
}

/// Decodes a KPM indication message of format 1 (node) or 3 (per UE, with
/// the RNTI as `gNB-DU-UEID`, as [`ue_id`] writes it).
pub fn decode_indication(message: &[u8]) -> Result<KpmReport, SmDecodeError> {
    use k::E2SM_KPM_IndicationMessageIndicationMessage_formats as M;
    let m: k::E2SM_KPM_IndicationMessage = aper(message)?;
    let mut names = Vec::new();
    let mut granularity_ms = None;
    let mut take = |f1: &k::E2SM_KPM_IndicationMessage_Format1| -> Vec<Vec<Value>> {
        if let Some(list) = &f1.meas_info_list {
            if names.is_empty() {
                names = list
                    .0
                    .iter()
                    .map(|i| match &i.meas_type {
                        k::MeasurementType::MeasName(n) => n.0.clone(),
                        k::MeasurementType::MeasID(id) => format!("id {}", id.0),
                    })
                    .collect();
            }
        }
        if let Some(g) = &f1.granul_period {
            granularity_ms = Some(g.0);
        }
        f1.meas_data
            .0
            .iter()
            .map(|item| {
                item.meas_record
                    .0
                    .iter()
                    .map(|v| match v {
                        k::MeasurementRecordItem::Integer(i) => Value::Integer(i.0),
                        k::MeasurementRecordItem::Real(r) => Value::Real(r.0),
                        k::MeasurementRecordItem::NoValue(_) => Value::NoValue,
                    })
                    .collect()
            })
            .collect()
    };
    let records = match &m.indication_message_formats {
        M::IndicationMessage_Format1(f1) => vec![(None, take(f1))],
        M::IndicationMessage_Format3(f3) => {
            let mut out = Vec::new();
            for item in &f3.ue_meas_report_list.0 {
                let rnti = match &item.ue_id {
                    k::UEID::GNB_DU_UEID(u) => u16::try_from(u.gnb_cu_ue_f1ap_id.0)
                        .map_err(|_| SmDecodeError::NotAnRnti(u.gnb_cu_ue_f1ap_id.0.into()))?,
                    _ => {
                        return Err(SmDecodeError::NotUnderstood(
                            "a UE id other than gNB-DU-UEID",
                        ))
                    }
                };
                out.push((Some(Rnti(rnti)), take(&item.meas_report)));
            }
            out
        }
        #[allow(unreachable_patterns)]
        _ => return Err(SmDecodeError::NotUnderstood("indication message format 2")),
    };
    Ok(KpmReport {
        names,
        granularity_ms,
        records,
    })
}
