//! E2SM-KPM v02.03 (O-RAN.WG3.E2SM-KPM-v02.03 clause 7.4): the five REPORT
//! styles, periodic event trigger (format 1):
//!
//! | style | what | action definition | indication message |
//! |---|---|---|---|
//! | 4 | common condition-based, UE-level | format 4 | format 3, every UE |
//! | 1 | E2 node measurement | format 1 | format 1, the cell |
//! | 2 | E2 node measurement for a single UE | format 2 | format 1, that UE |
//! | 3 | condition-based, UE-level E2 node measurement | format 3 | format 2, the cell, conditions echoed |
//! | 5 | E2 node measurement for multiple UEs | format 5 | format 3, those UEs |
//!
//! Style 4 is listed first in the RAN function definition: FlexRIC's stock
//! KPM xApps take the first REPORT style and only know style 4 (any other
//! first style makes them call a NULL function, FLEXRIC-SMS.md section 9).
//! A UE of style 2 or 5 that the node does not have is left out of the
//! report (FlexRIC aborts on RIC Subscription Failure): the report holds
//! what exists.
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
//! | `MM.HoPrepInterReq` | 5.1.1.6.1.1 | integer, handover preparations requested as source | - |
//! | `MM.HoPrepInterSucc` | 5.1.1.6.1.2 | integer, of those prepared | - |
//! | `MM.HoResAlloInterReq` | 5.1.1.6.1.4 | integer, resource allocations requested as target | - |
//! | `MM.HoResAlloInterSucc` | 5.1.1.6.1.5 | integer, of those allocated | - |
//! | `MM.HoExeInterReq` | 5.1.1.6.1.7 | integer, handover executions requested as source | - |
//! | `MM.HoExeInterSucc` | 5.1.1.6.1.8 | integer, of those completed at the target | - |
//!
//! The `MM.` measurements ([`MOBILITY_MEASUREMENTS`]) count the node's
//! handovers over the period (inter-gNB: each cell of a multi-cell run is
//! a node of its own, [`KpmCounters::handovers`]); they are the cell's,
//! so a UE-level report (styles 2, 4, 5) gives 0 for them.
//!
//! A ratio without samples (no burst, no SDU, no slot in the period) is
//! `noValue`. Volumes are whole units of the cumulative counter, so the
//! reports of consecutive periods add up to the total (the remainder of
//! one period is carried into the next, never lost).
//!
//! UEs are identified as `gNB-DU-UEID` with `gNB-CU-UE-F1AP-ID` = RNTI
//! (a RIC naming a UE by `gNB-UEID` gets its AMF UE NGAP ID read as the
//! RNTI). tcran evaluates no radio test condition (RSRP, CQI, S-NSSAI...),
//! so the UEs of a style 3 or 4 subscription are all UEs with a DRB; the
//! condition list must still be well formed.
//!
//! Two [`Dialect`]s, as the RIC reads E2SM-KPM:
//!
//! | | `Standard` (O-RAN text) | `Flexric` (FlexRIC's codec and stock xApps, FLEXRIC-SMS.md section 9) |
//! |---|---|---|
//! | `collectStartTime` (4 octets) | 32-bit seconds of an NTP timestamp (RFC 5905), big-endian | low 32 bits of the Unix time in µs, little-endian |
//! | a ratio without samples | `noValue` | 0 (the stock xApps call a NULL function on `noValue`) |
//! | a measurement tcran does not have | the action is refused | left out of the report (FlexRIC aborts on a failure); refused only when none is left |

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

/// The mobility measurements tcran reports besides [`MEASUREMENTS`]
/// (TS 28.552 §5.1.1.6.1, inter-gNB handovers), offered in the RAN
/// function definition with them.
pub const MOBILITY_MEASUREMENTS: [&str; 6] = [
    "MM.HoPrepInterReq",
    "MM.HoPrepInterSucc",
    "MM.HoResAlloInterReq",
    "MM.HoResAlloInterSucc",
    "MM.HoExeInterReq",
    "MM.HoExeInterSucc",
];

/// Whether tcran reports measurement `name`.
fn supported(name: &str) -> bool {
    MEASUREMENTS.contains(&name) || MOBILITY_MEASUREMENTS.contains(&name)
}

/// Every measurement's name, for messages.
fn all_names() -> String {
    MEASUREMENTS
        .iter()
        .chain(&MOBILITY_MEASUREMENTS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

/// The E2SM-KPM service model.
#[derive(Debug, Clone, Default)]
pub struct Kpm {
    /// Microseconds from the node's clock to the Unix epoch (0: the
    /// node's clock is the reference).
    pub time_offset_us: i64,
    pub dialect: Dialect,
}

/// How the RIC reads E2SM-KPM (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialect {
    /// E2SM-KPM as specified.
    #[default]
    Standard,
    /// As FlexRIC's KPM codec and stock xApps read it.
    Flexric,
}

/// Seconds from the NTP epoch (1900) to the Unix epoch (RFC 5905).
const NTP_UNIX_OFFSET_S: i64 = 2_208_988_800;

impl Kpm {
    /// The 4 octets of `collectStartTime` for node time `t`.
    pub fn collect_start_time(&self, t: Instant) -> [u8; 4] {
        let unix_us = (t.as_nanos() / 1000) as i64 + self.time_offset_us;
        match self.dialect {
            // Truncation is the format: NTP seconds wrap in 2036 (RFC 5905 era).
            Dialect::Standard => {
                ((unix_us.div_euclid(1_000_000) + NTP_UNIX_OFFSET_S) as u32).to_be_bytes()
            }
            Dialect::Flexric => (unix_us as u32).to_le_bytes(),
        }
    }
}

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
    let count = |x: u64, y: u64| Value::Integer(d(x, y).min(u32::MAX as u64) as u32);
    let (ha, hb) = (&a.handovers, &b.handovers);
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
        "MM.HoPrepInterReq" => count(ha.prep_requested, hb.prep_requested),
        "MM.HoPrepInterSucc" => count(ha.prep_succeeded, hb.prep_succeeded),
        "MM.HoResAlloInterReq" => count(ha.res_alloc_requested, hb.res_alloc_requested),
        "MM.HoResAlloInterSucc" => count(ha.res_alloc_succeeded, hb.res_alloc_succeeded),
        "MM.HoExeInterReq" => count(ha.exe_requested, hb.exe_requested),
        "MM.HoExeInterSucc" => count(ha.exe_succeeded, hb.exe_succeeded),
        _ => Value::NoValue,
    }
}

/// What a KPM subscription reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// Style 1: the whole node (message format 1).
    Node,
    /// Style 2: one UE (message format 1); `None`: a UE id that names no
    /// RNTI, admitted and never reported.
    Ue(Option<Rnti>),
    /// Style 3: the node, one matching-condition list (APER) per
    /// measurement, echoed in message format 2.
    Conditions(Vec<Vec<u8>>),
    /// Style 4: each UE (message format 3).
    Ues,
    /// Style 5: each listed UE (message format 3).
    UeList(Vec<Rnti>),
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

/// A measurement's name, checked against [`MEASUREMENTS`].
fn name_of(t: &k::MeasurementType) -> Result<String, Refusal> {
    let name = match t {
        k::MeasurementType::MeasName(n) => n.0.clone(),
        k::MeasurementType::MeasID(id) => {
            return Err(Refusal::action_not_supported(format!(
                "measurement id {} is not supported: name the measurement",
                id.0
            )))
        }
    };
    if !supported(&name) {
        return Err(Refusal::action_not_supported(format!(
            "measurement {name} is not supported (supported: {})",
            all_names()
        )));
    }
    Ok(name)
}

/// The RNTI of a KPM UE id: `gNB-DU-UEID` as [`ue_id`] writes it, or the
/// AMF UE NGAP ID of a `gNB-UEID` (how FlexRIC's xApps name UEs).
pub fn rnti_of(id: &k::UEID) -> Result<Rnti, SmDecodeError> {
    let v: u64 = match id {
        k::UEID::GNB_DU_UEID(u) => u.gnb_cu_ue_f1ap_id.0.into(),
        k::UEID::GNB_UEID(u) => u.amf_ue_ngap_id.0,
        _ => {
            return Err(SmDecodeError::NotUnderstood(
                "a UE id other than gNB-DU-UEID or gNB-UEID",
            ))
        }
    };
    u16::try_from(v)
        .map(Rnti)
        .map_err(|_| SmDecodeError::NotAnRnti(v))
}

/// The measurement names of a format 1 subscription, checked; with
/// `lenient`, the names tcran does not have are left out.
fn names_of(
    f1: &k::E2SM_KPM_ActionDefinition_Format1,
    lenient: bool,
) -> Result<Vec<String>, Refusal> {
    let mut names = Vec::new();
    for item in &f1.meas_info_list.0 {
        let name = match name_of(&item.meas_type) {
            Ok(n) => n,
            Err(_) if lenient => continue,
            Err(r) => return Err(r),
        };
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
            Some((rnti, sum)) if *rnti == drb.rnti => sum.add_bearer(&c),
            _ => out.push((drb.rnti, c)),
        }
    }
    out
}

impl Kpm {
    /// E2SM-KPM-RANfunction-Description of tcran's node.
    pub fn description() -> k::E2SM_KPM_RANfunction_Description {
        let actions = k::MeasurementInfo_Action_List(
            MEASUREMENTS
                .iter()
                .chain(&MOBILITY_MEASUREMENTS)
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
                // Style 4 first: FlexRIC's stock xApps take the first style.
                vec![
                    style(4, "Common Condition-based, UE-level Measurement", 4, 3),
                    style(1, "E2 Node Measurement", 1, 1),
                    style(2, "E2 Node Measurement for a single UE", 2, 1),
                    style(3, "Condition-based, UE-level E2 Node Measurement", 3, 2),
                    style(5, "E2 Node Measurement for multiple UEs", 5, 3),
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
        // A UE id that names no RNTI is admitted and matches no UE: the
        // report holds what exists (FlexRIC aborts on a failure).
        let ue = |id: &k::UEID| rnti_of(id).ok();
        let lenient = self.dialect == Dialect::Flexric;
        let names_of = |f1: &k::E2SM_KPM_ActionDefinition_Format1| names_of(f1, lenient);
        let (scope, names, granularity_ms) =
            match (def.ric_style_type.0, def.action_definition_formats) {
                (1, F::ActionDefinition_Format1(f1)) => {
                    (Scope::Node, names_of(&f1)?, f1.granul_period.0)
                }
                (2, F::ActionDefinition_Format2(f2)) => (
                    Scope::Ue(ue(&f2.ue_id)),
                    names_of(&f2.subscript_info)?,
                    f2.subscript_info.granul_period.0,
                ),
                (3, F::ActionDefinition_Format3(f3)) => {
                    let mut names = Vec::new();
                    let mut conds = Vec::new();
                    for item in &f3.meas_cond_list.0 {
                        match name_of(&item.meas_type) {
                            Ok(n) => names.push(n),
                            Err(_) if lenient => continue,
                            Err(r) => return Err(r),
                        }
                        conds.push(to_aper(&item.matching_cond));
                    }
                    (Scope::Conditions(conds), names, f3.granul_period.0)
                }
                (4, F::ActionDefinition_Format4(f4)) => (
                    Scope::Ues,
                    names_of(&f4.subscription_info)?,
                    f4.subscription_info.granul_period.0,
                ),
                (5, F::ActionDefinition_Format5(f5)) => {
                    let ues = f5
                        .matching_u_eid_list
                        .0
                        .iter()
                        .filter_map(|i| ue(&i.ue_id))
                        .collect();
                    (
                        Scope::UeList(ues),
                        names_of(&f5.subscription_info)?,
                        f5.subscription_info.granul_period.0,
                    )
                }
                (style, _) => {
                    return Err(Refusal::action_not_supported(format!(
                        "REPORT style {style} with this action definition format is not \
                         supported (style N takes action definition format N, N = 1..=5)"
                    )))
                }
            };
        if names.is_empty() {
            return Err(Refusal::action_not_supported(format!(
                "no measurement tcran has (it has: {})",
                all_names()
            )));
        }
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
        let current = match &job.scope {
            Scope::Node | Scope::Conditions(_) => vec![(Rnti(0), node.kpm_cell())],
            Scope::Ues => ue_counters(node),
            Scope::Ue(rnti) => ue_counters(node)
                .into_iter()
                .filter(|(r, _)| Some(*r) == *rnti)
                .collect(),
            Scope::UeList(ues) => ue_counters(node)
                .into_iter()
                .filter(|(r, _)| ues.contains(r))
                .collect(),
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
            let values: Vec<Value> = job
                .names
                .iter()
                .map(|n| match (measure(n, a, c), self.dialect) {
                    (Value::NoValue, Dialect::Flexric) => Value::Integer(0),
                    (v, _) => v,
                })
                .collect();
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
                        collet_start_time: k::TimeStamp(self.collect_start_time(start).to_vec()),
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
        match &job.scope {
            Scope::Node | Scope::Ue(_) => match collected.first() {
                Some((_, records)) => vec![(
                    header,
                    message(M::IndicationMessage_Format1(format1(records))),
                )],
                None => Vec::new(),
            },
            Scope::Conditions(conds) => match collected.first() {
                Some((_, records)) => {
                    let list = job
                        .names
                        .iter()
                        .zip(conds)
                        .map(|(n, c)| k::MeasurementCondUEidItem {
                            meas_type: k::MeasurementType::MeasName(k::MeasurementTypeName(
                                n.clone(),
                            )),
                            matching_cond: aper(c).expect("encoded by subscribe"),
                            matching_u_eid_list: None,
                        })
                        .collect();
                    let f2 = k::E2SM_KPM_IndicationMessage_Format2 {
                        meas_data: k::MeasurementData(records.iter().map(|r| record(r)).collect()),
                        meas_cond_u_eid_list: k::MeasurementCondUEidList(list),
                        granul_period: Some(k::GranularityPeriod(job.granularity_ms)),
                    };
                    vec![(header, message(M::IndicationMessage_Format2(f2)))]
                }
                None => Vec::new(),
            },
            Scope::Ues | Scope::UeList(_) => {
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

    fn set_flexric_dialect(&mut self, flexric: bool) {
        self.dialect = if flexric {
            Dialect::Flexric
        } else {
            Dialect::Standard
        };
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
    action_definition_of_ues(style, names, granularity_ms, &[])
}

/// A KPM action definition of any `style` 1..=5 (for RIC-side tools and
/// tests): style 2 names `ues[0]`, style 5 all of `ues` (two or more), and
/// styles 3 and 4 carry the test condition "UL RSRP present".
pub fn action_definition_of_ues(
    style: i64,
    names: &[&str],
    granularity_ms: u32,
    ues: &[Rnti],
) -> Vec<u8> {
    let f1 = k::E2SM_KPM_ActionDefinition_Format1 {
        meas_info_list: info_list(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        granul_period: k::GranularityPeriod(granularity_ms),
        cell_global_id: None,
    };
    let rsrp_present = || k::TestCondInfo {
        test_type: k::TestCond_Type::Ul_rSRP(k::TestCond_Type_ul_rSRP(0)),
        test_expr: Some(k::TestCond_Expression(k::TestCond_Expression::PRESENT)),
        test_value: None,
    };
    use k::E2SM_KPM_ActionDefinitionActionDefinition_formats as F;
    let formats = match style {
        2 => F::ActionDefinition_Format2(k::E2SM_KPM_ActionDefinition_Format2 {
            ue_id: ue_id(ues.first().copied().unwrap_or(Rnti(0))),
            subscript_info: f1,
        }),
        3 => F::ActionDefinition_Format3(k::E2SM_KPM_ActionDefinition_Format3 {
            meas_cond_list: k::MeasurementCondList(
                names
                    .iter()
                    .map(|n| k::MeasurementCondItem {
                        meas_type: k::MeasurementType::MeasName(k::MeasurementTypeName(
                            n.to_string(),
                        )),
                        matching_cond: k::MatchingCondList(vec![k::MatchingCondItem {
                            matching_cond_choice: k::MatchingCondItem_Choice::TestCondInfo(
                                rsrp_present(),
                            ),
                            logical_or: None,
                        }]),
                    })
                    .collect(),
            ),
            granul_period: k::GranularityPeriod(granularity_ms),
            cell_global_id: None,
        }),
        4 => F::ActionDefinition_Format4(k::E2SM_KPM_ActionDefinition_Format4 {
            matching_ue_cond_list: k::MatchingUeCondPerSubList(vec![k::MatchingUeCondPerSubItem {
                test_cond_info: rsrp_present(),
            }]),
            subscription_info: f1,
        }),
        5 => F::ActionDefinition_Format5(k::E2SM_KPM_ActionDefinition_Format5 {
            matching_u_eid_list: k::MatchingUEidPerSubList(
                ues.iter()
                    .map(|&u| k::MatchingUEidPerSubItem { ue_id: ue_id(u) })
                    .collect(),
            ),
            subscription_info: f1,
        }),
        _ => F::ActionDefinition_Format1(f1),
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
        M::IndicationMessage_Format2(f2) => {
            let cond_names: Vec<String> = f2
                .meas_cond_u_eid_list
                .0
                .iter()
                .map(|i| match &i.meas_type {
                    k::MeasurementType::MeasName(n) => n.0.clone(),
                    k::MeasurementType::MeasID(id) => format!("id {}", id.0),
                })
                .collect();
            let f1 = k::E2SM_KPM_IndicationMessage_Format1 {
                meas_data: f2.meas_data.clone(),
                meas_info_list: Some(info_list(&cond_names)),
                granul_period: f2.granul_period.clone(),
            };
            vec![(None, take(&f1))]
        }
        M::IndicationMessage_Format3(f3) => {
            let mut out = Vec::new();
            for item in &f3.ue_meas_report_list.0 {
                out.push((Some(rnti_of(&item.ue_id)?), take(&item.meas_report)));
            }
            out
        }
    };
    Ok(KpmReport {
        names,
        granularity_ms,
        records,
    })
}
