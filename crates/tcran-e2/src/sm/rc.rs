//! E2SM-RC v01.03 (O-RAN.WG3.E2SM-RC-v01.03), RAN function 3: the RAN
//! control model, ASN.1 APER (`asn1/e2sm-rc-v01.03.asn`). tcran offers
//! the three services FlexRIC's and O-RAN SC's xApps use:
//!
//! | service (E2SM-RC clause) | formats | on the node |
//! |---|---|---|
//! | REPORT style 4 "UE Information" (7.4.5), RAN parameter 202 "RRC State" (8.2.4) | event trigger 4 (UE information change), action definition 1, indication header 1, message 2 | a UE with a DRB is RRC connected, a UE that had one and has none left is RRC idle: the first report lists every UE, later ones the UEs whose state changed (checked every [`POLL`]) |
//! | CONTROL style 1 "Radio Bearer Control", action 2 "QoS flow mapping configuration" (7.6.2, 8.4.2.2) | header 1, message 1, outcome 1 | SDAP maps each listed QFI of the header's UE to the DRB of parameter 1 ([`RanNode::map_qos_flow`]); later packets of the flow take that DRB |
//! | CONTROL style 2 "Radio Resource Allocation Control", action 6 "Slice-level PRB quota" (7.6.3, 8.4.3.6) | header 1, message 1, outcome 1 | the header's UE gets a share of the cell's PRBs (the RRM policy's max ratio, else its dedicated ratio, else its min ratio) in the MAC's slicing, every other UE the rest ([`RanNode::set_slices`]) |
//!
//! UEs are named as FlexRIC's xApps name them: `gNB-UEID` with the AMF UE
//! NGAP ID = RNTI (PLMN 001/01, AMF region, set and pointer 0); a control
//! header's UE may also be a `gNB-DU-UEID` with its F1AP id = RNTI (how
//! tcran's KPM model names UEs, which `xapp_kpm_rc` copies).
//!
//! Two [`Dialect`]s of the RAN function definition (FLEXRIC-SMS.md
//! section 10): FlexRIC's xApps read its format numbers from 0 (format 1
//! is 0, event trigger style 4 is 3) and assert that every REPORT style is
//! "UE Information" and every CONTROL style "Radio Bearer Control" with
//! one action, so under FlexRIC's rules the definition is exactly the one
//! FlexRIC's emulated gNB sends (CONTROL style 2 is executed but not
//! announced); the standard dialect numbers formats as the text does and
//! announces style 2.
//!
//! A slice-level PRB quota has no S-NSSAI to act on in tcran (its UEs
//! carry none): the policy applies to the header's UE, one RRM policy
//! ratio group per control; a max ratio of 100 % removes the UE's quota.
//! The last control of this model or of FlexRIC's SLICE model sets the
//! MAC's slices.

use super::{
    aper, cause, to_aper, ControlOutcome, Indication, Job, JobState, Refusal, ServiceModel,
    SmDecodeError,
};
use crate::asn::e2sm_rc as r;
use crate::e2ap::{Action, ActionType, RanFunction};
use tcran_control::{DrbKey, RanNode};
use tcran_core::{DrbId, Duration, Instant, Qfi, Rnti};

/// RAN function id of E2SM-RC in FlexRIC and OAI.
pub const RAN_FUNCTION_ID: u16 = 3;
/// E2SM-RC OID (O-RAN.WG3.E2SM-RC-v01.03 clause 6.1).
pub const OID: &str = "1.3.6.1.4.1.53148.1.1.2.3";
/// How often a REPORT style 4 job looks for RRC state changes.
pub const POLL: Duration = Duration::from_millis(10);

/// Service styles and control actions (E2SM-RC 7.3-7.6).
pub mod style {
    /// Event trigger style 4 "UE Information Change" (format 4).
    pub const UE_INFORMATION_CHANGE: i64 = 4;
    /// REPORT style 4 "UE Information".
    pub const UE_INFORMATION: i64 = 4;
    /// CONTROL style 1 "Radio Bearer Control".
    pub const RADIO_BEARER_CONTROL: i64 = 1;
    /// Its action 2 "QoS flow mapping configuration".
    pub const QOS_FLOW_MAPPING: u16 = 2;
    /// CONTROL style 2 "Radio Resource Allocation Control".
    pub const RADIO_RESOURCE_ALLOCATION: i64 = 2;
    /// Its action 6 "Slice-level PRB quota".
    pub const SLICE_PRB_QUOTA: u16 = 6;
}

/// RAN parameter ids (E2SM-RC 8.2.4, 8.4.2.2, 8.4.3.6).
pub mod param {
    /// REPORT style 4: "RRC State" (RRC-State: 0 connected, 1 inactive, 2 idle).
    pub const RRC_STATE: u32 = 202;
    /// QoS flow mapping: "DRB ID".
    pub const DRB_ID: u32 = 1;
    /// QoS flow mapping: "List of QoS Flows to be modified in DRB".
    pub const QOS_FLOWS: u32 = 2;
    /// QoS flow mapping: one "QoS Flow Item" of the list.
    pub const QOS_FLOW_ITEM: u32 = 3;
    /// QoS flow mapping: "QoS Flow Identifier".
    pub const QFI: u32 = 4;
    /// QoS flow mapping: "QoS Flow Mapping Indication" (TS 38.473: 0 ul, 1 dl).
    pub const QOS_FLOW_MAPPING_INDICATION: u32 = 5;
    /// Slice-level PRB quota: "RRM Policy Ratio List".
    pub const RRM_POLICY_RATIO_LIST: u32 = 1;
    /// Slice-level PRB quota: "Min PRB Policy Ratio" (%).
    pub const MIN_PRB_POLICY_RATIO: u32 = 10;
    /// Slice-level PRB quota: "Max PRB Policy Ratio" (%).
    pub const MAX_PRB_POLICY_RATIO: u32 = 11;
    /// Slice-level PRB quota: "Dedicated PRB Policy Ratio" (%).
    pub const DEDICATED_PRB_POLICY_RATIO: u32 = 12;
    /// The slice-level PRB quota parameters in order (8.4.3.6).
    pub const SLICE_PRB_QUOTA: [(u32, &str); 12] = [
        (1, "RRM Policy Ratio List"),
        (2, "RRM Policy Ratio Group"),
        (3, "RRM Policy"),
        (4, "RRM Policy Member List"),
        (5, "RRM Policy Member"),
        (6, "PLMN Identity"),
        (7, "S-NSSAI"),
        (8, "SST"),
        (9, "SD"),
        (10, "Min PRB Policy Ratio"),
        (11, "Max PRB Policy Ratio"),
        (12, "Dedicated PRB Policy Ratio"),
    ];
}

/// RRC-State values (E2SM-RC 9.3.37).
const RRC_CONNECTED: i64 = 0;
const RRC_IDLE: i64 = 2;

/// How the RIC reads the RAN function definition (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialect {
    #[default]
    Standard,
    Flexric,
}

/// The E2SM-RC service model.
#[derive(Debug, Clone, Default)]
pub struct Rc {
    pub dialect: Dialect,
    /// PRB shares of the cell set by slice-level PRB quota controls.
    quotas: Vec<(Rnti, f64)>,
}

/// State of one REPORT style 4 action.
#[derive(Debug, Clone, PartialEq)]
pub struct RcJob {
    /// The event trigger's condition id, echoed in the indication header.
    condition_id: Option<u16>,
    /// The UEs reported RRC connected so far (`None` before the first report).
    connected: Option<Vec<Rnti>>,
}

fn style_item(ty: i64, name: &str) -> (r::RIC_Style_Type, r::RIC_Style_Name) {
    (r::RIC_Style_Type(ty), r::RIC_Style_Name(name.into()))
}

fn param_name(id: u32, name: &str) -> (r::RANParameter_ID, r::RANParameter_Name) {
    (r::RANParameter_ID(id), r::RANParameter_Name(name.into()))
}

impl Rc {
    /// A format number as `dialect` writes it.
    fn format(&self, n: i64) -> r::RIC_Format_Type {
        r::RIC_Format_Type(match self.dialect {
            Dialect::Standard => n,
            Dialect::Flexric => n - 1,
        })
    }

    /// E2SM-RC-RANFunctionDefinition of tcran's node (module docs).
    pub fn description(&self) -> r::E2SM_RC_RANFunctionDefinition {
        let (ty, name) = style_item(style::UE_INFORMATION_CHANGE, "UE Information Change");
        let event_trigger = r::RANFunctionDefinition_EventTrigger {
            ric_event_trigger_style_list:
                r::RANFunctionDefinition_EventTriggerRic_EventTriggerStyle_List(vec![
                    r::RANFunctionDefinition_EventTrigger_Style_Item {
                        ric_event_trigger_style_type: ty,
                        ric_event_trigger_style_name: name,
                        ric_event_trigger_format_type: self.format(4),
                    },
                ]),
            ran_l2_parameters_list: None,
            ran_call_process_types_list: None,
            ran_ue_identification_parameters_list: None,
            ran_cell_identification_parameters_list: None,
        };
        let (id, pname) = param_name(param::RRC_STATE, "RRC State");
        let (ty, name) = style_item(style::UE_INFORMATION, "UE Information");
        let report = r::RANFunctionDefinition_Report {
            ric_report_style_list: r::RANFunctionDefinition_ReportRic_ReportStyle_List(vec![
                r::RANFunctionDefinition_Report_Item {
                    ric_report_style_type: ty,
                    ric_report_style_name: name,
                    // FlexRIC writes the event trigger *format* here, from 0.
                    ric_supported_event_trigger_style_type: match self.dialect {
                        Dialect::Standard => r::RIC_Style_Type(style::UE_INFORMATION_CHANGE),
                        Dialect::Flexric => r::RIC_Style_Type(3),
                    },
                    ric_report_action_format_type: self.format(1),
                    ric_indication_header_format_type: self.format(1),
                    ric_indication_message_format_type: self.format(2),
                    ran_report_parameters_list: Some(
                        r::RANFunctionDefinition_Report_ItemRan_ReportParameters_List(vec![
                            r::Report_RANParameter_Item {
                                ran_parameter_id: id,
                                ran_parameter_name: pname,
                                ran_parameter_definition: None,
                            },
                        ]),
                    ),
                },
            ]),
        };
        let action_param = |id: u32, name: &str, definition| {
            let (id, name) = param_name(id, name);
            r::ControlAction_RANParameter_Item {
                ran_parameter_id: id,
                ran_parameter_name: name,
                ran_parameter_definition: definition,
            }
        };
        let list_of = |items: &[(u32, &str)]| r::RANParameter_Definition {
            ran_parameter_definition_choice: r::RANParameter_Definition_Choice::ChoiceLIST(
                r::RANParameter_Definition_Choice_LIST {
                    ran_parameter_list: r::RANParameter_Definition_Choice_LISTRanParameter_List(
                        items
                            .iter()
                            .map(|&(id, name)| {
                                let (id, name) = param_name(id, name);
                                r::RANParameter_Definition_Choice_LIST_Item {
                                    ran_parameter_id: id,
                                    ran_parameter_name: name,
                                    ran_parameter_definition: None,
                                }
                            })
                            .collect(),
                    ),
                },
            ),
        };
        let control_style = |ty: i64, name: &str, action: u16, action_name: &str, params| {
            let (ty, name) = style_item(ty, name);
            r::RANFunctionDefinition_Control_Item {
                ric_control_style_type: ty,
                ric_control_style_name: name,
                ric_control_action_list: Some(
                    r::RANFunctionDefinition_Control_ItemRic_ControlAction_List(vec![
                        r::RANFunctionDefinition_Control_Action_Item {
                            ric_control_action_id: r::RIC_ControlAction_ID(action),
                            ric_control_action_name: r::RIC_ControlAction_Name(
                                action_name.into(),
                            ),
                            ran_control_action_parameters_list: Some(
                                r::RANFunctionDefinition_Control_Action_ItemRan_ControlActionParameters_List(
                                    params,
                                ),
                            ),
                        },
                    ]),
                ),
                ric_control_header_format_type: self.format(1),
                ric_control_message_format_type: self.format(1),
                ric_call_process_id_format_type: None,
                ric_control_outcome_format_type: self.format(1),
                ran_control_outcome_parameters_list: None,
            }
        };
        let mut controls = vec![control_style(
            style::RADIO_BEARER_CONTROL,
            "Radio Bearer Control",
            style::QOS_FLOW_MAPPING,
            "QoS flow mapping configuration",
            vec![
                action_param(param::DRB_ID, "DRB ID", None),
                action_param(
                    param::QOS_FLOWS,
                    "List of QoS Flows to be modified in DRB",
                    Some(list_of(&[
                        (param::QFI, "QoS Flow Identifier"),
                        (
                            param::QOS_FLOW_MAPPING_INDICATION,
                            "QoS Flow Mapping Indication",
                        ),
                    ])),
                ),
            ],
        )];
        // FlexRIC's xApps assert every CONTROL style is Radio Bearer Control.
        if self.dialect == Dialect::Standard {
            controls.push(control_style(
                style::RADIO_RESOURCE_ALLOCATION,
                "Radio Resource Allocation Control",
                style::SLICE_PRB_QUOTA,
                "Slice-level PRB quota",
                param::SLICE_PRB_QUOTA
                    .iter()
                    .map(|&(id, name)| action_param(id, name, None))
                    .collect(),
            ));
        }
        r::E2SM_RC_RANFunctionDefinition {
            ran_function_name: r::RANfunction_Name {
                ran_function_short_name: r::RANfunction_NameRanFunction_ShortName(
                    "ORAN-E2SM-RC".into(),
                ),
                ran_function_e2sm_oid: r::RANfunction_NameRanFunction_E2SM_OID(OID.into()),
                ran_function_description: r::RANfunction_NameRanFunction_Description(
                    "RAN Control".into(),
                ),
                ran_function_instance: None,
            },
            ran_function_definition_event_trigger: Some(event_trigger),
            ran_function_definition_report: Some(report),
            ran_function_definition_insert: None,
            ran_function_definition_control: Some(r::RANFunctionDefinition_Control {
                ric_control_style_list: r::RANFunctionDefinition_ControlRic_ControlStyle_List(
                    controls,
                ),
            }),
            ran_function_definition_policy: None,
        }
    }

    /// The MAC slices of the UE quotas: first the slice of every UE
    /// without a quota (the default slice, where a UE that attaches later
    /// goes), then one per UE with a quota.
    fn partition(&self, node: &dyn RanNode) -> Vec<(f64, Vec<Rnti>)> {
        if self.quotas.is_empty() {
            return Vec::new();
        }
        let rest: Vec<Rnti> = ues_of(node)
            .into_iter()
            .filter(|u| !self.quotas.iter().any(|(q, _)| q == u))
            .collect();
        let used: f64 = self.quotas.iter().map(|(_, s)| s).sum();
        let mut out = vec![((1.0 - used).max(0.0), rest)];
        out.extend(self.quotas.iter().map(|(u, s)| (*s, vec![*u])));
        out
    }

    fn qos_flow_mapping(
        &mut self,
        rnti: Rnti,
        params: &[(u32, r::RANParameter_ValueType)],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> Result<(), String> {
        let drb = element_int(params, param::DRB_ID)?;
        let drb = u8::try_from(drb)
            .ok()
            .filter(|d| (1..=32).contains(d))
            .ok_or_else(|| format!("DRB ID {drb} is not within 1..=32"))?;
        let drb = DrbId(drb);
        let mut drbs = Vec::new();
        node.drbs(&mut drbs);
        if !drbs.contains(&DrbKey::new(rnti.0, drb.0)) {
            return Err(format!("UE {} has no DRB {}", rnti.0, drb.0));
        }
        let flows = list_of(params, param::QOS_FLOWS)?;
        let mut qfis = Vec::with_capacity(flows.len());
        for flow in flows {
            let qfi = element_int(&flow, param::QFI)?;
            let qfi = u8::try_from(qfi)
                .ok()
                .filter(|q| *q <= 63)
                .ok_or_else(|| format!("QoS Flow Identifier {qfi} is not within 0..=63"))?;
            match element_int(&flow, param::QOS_FLOW_MAPPING_INDICATION) {
                Err(_) | Ok(1) => {}
                Ok(0) => {
                    return Err(format!(
                    "QFI {qfi}: an uplink-only mapping (indication 0); tcran carries the downlink"
                ))
                }
                Ok(v) => return Err(format!("QoS Flow Mapping Indication {v} is not 0 or 1")),
            }
            qfis.push(Qfi(qfi));
        }
        for qfi in qfis {
            node.map_qos_flow(rnti, qfi, drb, now)?;
        }
        Ok(())
    }

    fn slice_prb_quota(
        &mut self,
        rnti: Rnti,
        params: &[(u32, r::RANParameter_ValueType)],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> Result<(), String> {
        let groups = list_of(params, param::RRM_POLICY_RATIO_LIST)?;
        let [group] = groups.as_slice() else {
            return Err(format!(
                "{} RRM policy ratio groups: tcran's UEs carry no S-NSSAI, so a control \
                 sets the quota of the header's UE from exactly one group",
                groups.len()
            ));
        };
        let ratio = [
            param::MAX_PRB_POLICY_RATIO,
            param::DEDICATED_PRB_POLICY_RATIO,
            param::MIN_PRB_POLICY_RATIO,
        ]
        .into_iter()
        .find_map(|id| find_int(group, id))
        .ok_or("the RRM policy ratio group has no PRB policy ratio (10, 11 or 12)")?;
        if !(0..=100).contains(&ratio) {
            return Err(format!("PRB policy ratio {ratio} % is not within 0..=100"));
        }
        if !ues_of(node).contains(&rnti) {
            return Err(format!("UE {} does not exist", rnti.0));
        }
        let mut next = self.clone();
        next.quotas.retain(|(u, _)| *u != rnti);
        if ratio < 100 {
            next.quotas.push((rnti, ratio as f64 / 100.0));
            next.quotas.sort_by_key(|(u, _)| *u);
        }
        node.set_slices(next.partition(node), now)?;
        self.quotas = next.quotas;
        Ok(())
    }
}

/// The node's UEs with a DRB, ascending.
fn ues_of(node: &dyn RanNode) -> Vec<Rnti> {
    let mut drbs: Vec<DrbKey> = Vec::new();
    node.drbs(&mut drbs);
    let mut ues: Vec<Rnti> = drbs.iter().map(|d| d.rnti).collect();
    ues.dedup();
    ues
}

/// A UE as tcran's RC model names it: `gNB-UEID`, AMF UE NGAP ID = RNTI.
pub fn ue_id(rnti: Rnti) -> r::UEID {
    let bits = |n: usize| bitvec::bitvec![u8, bitvec::order::Msb0; 0; n];
    r::UEID::GNB_UEID(r::UEID_GNB {
        amf_ue_ngap_id: r::AMF_UE_NGAP_ID(u64::from(rnti.0)),
        guami: r::GUAMI {
            plmn_identity: r::PLMNIdentity(vec![0x00, 0xf1, 0x10]),
            amf_region_id: r::AMFRegionID(bits(8)),
            amf_set_id: r::AMFSetID(bits(10)),
            amf_pointer: r::AMFPointer(bits(6)),
        },
        gnb_cu_ue_f1ap_id_list: None,
        gnb_cu_cp_ue_e1ap_id_list: None,
        ran_ueid: None,
        m_ng_ran_ue_xn_ap_id: None,
        global_gnb_id: None,
        global_ng_ran_node_id: None,
    })
}

/// The RNTI of an RC UE id: the AMF UE NGAP ID of a `gNB-UEID`, the F1AP
/// id of a `gNB-DU-UEID`.
pub fn rnti_of(id: &r::UEID) -> Result<Rnti, SmDecodeError> {
    let v: u64 = match id {
        r::UEID::GNB_UEID(u) => u.amf_ue_ngap_id.0,
        r::UEID::GNB_DU_UEID(u) => u.gnb_cu_ue_f1ap_id.0.into(),
        _ => {
            return Err(SmDecodeError::NotUnderstood(
                "a UE id other than gNB-UEID or gNB-DU-UEID",
            ))
        }
    };
    u16::try_from(v)
        .map(Rnti)
        .map_err(|_| SmDecodeError::NotAnRnti(v))
}

/// The value of an ELEMENT parameter, if it has one.
fn element_value(v: &r::RANParameter_ValueType) -> Option<&r::RANParameter_Value> {
    match v {
        r::RANParameter_ValueType::RanP_Choice_ElementTrue(e) => Some(&e.ran_parameter_value),
        r::RANParameter_ValueType::RanP_Choice_ElementFalse(e) => e.ran_parameter_value.as_ref(),
        _ => None,
    }
}

/// The items of a STRUCTURE as (id, value type) pairs.
fn structure_items(s: &r::RANParameter_STRUCTURE) -> Vec<(u32, r::RANParameter_ValueType)> {
    s.sequence_of_ran_parameters
        .iter()
        .flat_map(|l| l.0.iter())
        .map(|i| (i.ran_parameter_id.0, i.ran_parameter_value_type.clone()))
        .collect()
}

/// The integer value of ELEMENT parameter `id` among `params`.
fn element_int(params: &[(u32, r::RANParameter_ValueType)], id: u32) -> Result<i64, String> {
    let (_, v) = params
        .iter()
        .find(|(i, _)| *i == id)
        .ok_or_else(|| format!("RAN parameter {id} is missing"))?;
    match element_value(v) {
        Some(r::RANParameter_Value::ValueInt(i)) => Ok(i.0),
        _ => Err(format!("RAN parameter {id} is not an integer element")),
    }
}

/// The structures of LIST parameter `id` among `params`.
fn list_of(
    params: &[(u32, r::RANParameter_ValueType)],
    id: u32,
) -> Result<Vec<Vec<(u32, r::RANParameter_ValueType)>>, String> {
    match params.iter().find(|(i, _)| *i == id) {
        Some((_, r::RANParameter_ValueType::RanP_Choice_List(l))) => Ok(l
            .ran_parameter_list
            .list_of_ran_parameter
            .0
            .iter()
            .map(structure_items)
            .collect()),
        Some(_) => Err(format!("RAN parameter {id} is not a list")),
        None => Err(format!("RAN parameter {id} is missing")),
    }
}

/// The integer of ELEMENT parameter `id` anywhere in `params` and the
/// structures and lists below them (depth first).
fn find_int(params: &[(u32, r::RANParameter_ValueType)], id: u32) -> Option<i64> {
    for (i, v) in params {
        if *i == id {
            if let Some(r::RANParameter_Value::ValueInt(n)) = element_value(v) {
                return Some(n.0);
            }
        }
        let below: Vec<Vec<(u32, r::RANParameter_ValueType)>> = match v {
            r::RANParameter_ValueType::RanP_Choice_Structure(s) => {
                vec![structure_items(&s.ran_parameter_structure)]
            }
            r::RANParameter_ValueType::RanP_Choice_List(l) => l
                .ran_parameter_list
                .list_of_ran_parameter
                .0
                .iter()
                .map(structure_items)
                .collect(),
            _ => Vec::new(),
        };
        if let Some(n) = below.iter().find_map(|p| find_int(p, id)) {
            return Some(n);
        }
    }
    None
}

/// A control as the model reads it: the UE, style, action and RAN parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RcControl {
    pub rnti: Rnti,
    pub style: i64,
    pub action: u16,
    pub params: Vec<(u32, r::RANParameter_ValueType)>,
}

/// Decodes a control header and message of format 1.
pub fn decode_control(header: &[u8], message: &[u8]) -> Result<RcControl, SmDecodeError> {
    let h: r::E2SM_RC_ControlHeader = aper(header)?;
    let r::E2SM_RC_ControlHeaderRic_controlHeader_formats::ControlHeader_Format1(h) =
        h.ric_control_header_formats
    else {
        return Err(SmDecodeError::NotUnderstood("a control header of format 2"));
    };
    let m: r::E2SM_RC_ControlMessage = aper(message)?;
    let r::E2SM_RC_ControlMessageRic_controlMessage_formats::ControlMessage_Format1(m) =
        m.ric_control_message_formats
    else {
        return Err(SmDecodeError::NotUnderstood(
            "a control message of format 2",
        ));
    };
    Ok(RcControl {
        rnti: rnti_of(&h.ue_id)?,
        style: h.ric_style_type.0,
        action: h.ric_control_action_id.0,
        params: m
            .ran_p_list
            .0
            .into_iter()
            .map(|i| (i.ran_parameter_id.0, i.ran_parameter_value_type))
            .collect(),
    })
}

/// The control outcome tcran sends: format 1 with no parameter (as
/// FlexRIC's emulated gNB does: `0000`).
pub fn outcome() -> Vec<u8> {
    to_aper(&r::E2SM_RC_ControlOutcome {
        ric_control_outcome_formats:
            r::E2SM_RC_ControlOutcomeRic_controlOutcome_formats::ControlOutcome_Format1(
                r::E2SM_RC_ControlOutcome_Format1 {
                    ran_p_list: r::E2SM_RC_ControlOutcome_Format1RanP_List(Vec::new()),
                },
            ),
    })
}

/// One UE's RRC state in an indication (as [`decode_indication`] reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RrcChange {
    pub rnti: Rnti,
    /// RRC-State: 0 connected, 1 inactive, 2 idle.
    pub state: i64,
}

fn indication_message(changes: &[RrcChange]) -> Vec<u8> {
    let items = changes
        .iter()
        .map(|c| r::E2SM_RC_IndicationMessage_Format2_Item {
            ue_id: ue_id(c.rnti),
            ran_p_list: r::E2SM_RC_IndicationMessage_Format2_ItemRanP_List(vec![
                r::E2SM_RC_IndicationMessage_Format2_RANParameter_Item {
                    ran_parameter_id: r::RANParameter_ID(param::RRC_STATE),
                    ran_parameter_value_type: r::RANParameter_ValueType::RanP_Choice_ElementFalse(
                        r::RANParameter_ValueType_Choice_ElementFalse {
                            ran_parameter_value: Some(r::RANParameter_Value::ValueInt(
                                r::RANParameter_Value_valueInt(c.state),
                            )),
                        },
                    ),
                },
            ]),
        })
        .collect();
    to_aper(&r::E2SM_RC_IndicationMessage {
        ric_indication_message_formats:
            r::E2SM_RC_IndicationMessageRic_indicationMessage_formats::IndicationMessage_Format2(
                r::E2SM_RC_IndicationMessage_Format2 {
                    ue_parameter_list: r::E2SM_RC_IndicationMessage_Format2UeParameter_List(items),
                },
            ),
    })
}

/// Decodes an indication message of format 2: each UE's RRC state (UEs
/// without parameter 202 are left out).
pub fn decode_indication(message: &[u8]) -> Result<Vec<RrcChange>, SmDecodeError> {
    let m: r::E2SM_RC_IndicationMessage = aper(message)?;
    let r::E2SM_RC_IndicationMessageRic_indicationMessage_formats::IndicationMessage_Format2(m) =
        m.ric_indication_message_formats
    else {
        return Err(SmDecodeError::NotUnderstood(
            "an indication message other than format 2",
        ));
    };
    let mut out = Vec::new();
    for item in &m.ue_parameter_list.0 {
        let rnti = rnti_of(&item.ue_id)?;
        for p in &item.ran_p_list.0 {
            if p.ran_parameter_id.0 != param::RRC_STATE {
                continue;
            }
            if let Some(r::RANParameter_Value::ValueInt(v)) =
                element_value(&p.ran_parameter_value_type)
            {
                out.push(RrcChange { rnti, state: v.0 });
            }
        }
    }
    Ok(out)
}

/// The REPORT style 4 event trigger (format 4, RRC state "any") with
/// condition id `condition` (for RIC-side tools and tests).
pub fn event_trigger(condition: u16) -> Vec<u8> {
    to_aper(&r::E2SM_RC_EventTrigger {
        ric_event_trigger_formats:
            r::E2SM_RC_EventTriggerRic_eventTrigger_formats::EventTrigger_Format4(
                r::E2SM_RC_EventTrigger_Format4 {
                    ue_info_change_list: r::E2SM_RC_EventTrigger_Format4UEInfoChange_List(vec![
                        r::E2SM_RC_EventTrigger_Format4_Item {
                            ric_event_trigger_condition_id: r::RIC_EventTriggerCondition_ID(
                                condition,
                            ),
                            trigger_type: r::TriggerType_Choice::TriggerType_Choice_RRCstate(
                                r::TriggerType_Choice_RRCstate {
                                    rrc_state_list: r::TriggerType_Choice_RRCstateRrcState_List(
                                        vec![r::TriggerType_Choice_RRCstate_Item {
                                            state_changed_to: r::RRC_State(r::RRC_State::ANY),
                                            logical_or: None,
                                        }],
                                    ),
                                },
                            ),
                            associated_ue_info: None,
                            logical_or: None,
                        },
                    ]),
                },
            ),
    })
}

/// The REPORT style 4 action definition (format 1, parameter 202).
pub fn action_definition() -> Vec<u8> {
    to_aper(&r::E2SM_RC_ActionDefinition {
        ric_style_type: r::RIC_Style_Type(style::UE_INFORMATION),
        ric_action_definition_formats:
            r::E2SM_RC_ActionDefinitionRic_actionDefinition_formats::ActionDefinition_Format1(
                r::E2SM_RC_ActionDefinition_Format1 {
                    ran_p_to_be_reported_list:
                        r::E2SM_RC_ActionDefinition_Format1RanP_ToBeReported_List(vec![
                            r::E2SM_RC_ActionDefinition_Format1_Item {
                                ran_parameter_id: r::RANParameter_ID(param::RRC_STATE),
                                ran_parameter_definition: None,
                            },
                        ]),
                },
            ),
    })
}

fn element(id: u32, key: bool, v: i64) -> r::RANParameter_STRUCTURE_Item {
    let value = r::RANParameter_Value::ValueInt(r::RANParameter_Value_valueInt(v));
    r::RANParameter_STRUCTURE_Item {
        ran_parameter_id: r::RANParameter_ID(id),
        ran_parameter_value_type: if key {
            r::RANParameter_ValueType::RanP_Choice_ElementTrue(
                r::RANParameter_ValueType_Choice_ElementTrue {
                    ran_parameter_value: value,
                },
            )
        } else {
            r::RANParameter_ValueType::RanP_Choice_ElementFalse(
                r::RANParameter_ValueType_Choice_ElementFalse {
                    ran_parameter_value: Some(value),
                },
            )
        },
    }
}

fn structure(items: Vec<r::RANParameter_STRUCTURE_Item>) -> r::RANParameter_STRUCTURE {
    r::RANParameter_STRUCTURE {
        sequence_of_ran_parameters: Some(r::RANParameter_STRUCTURESequence_of_ranParameters(items)),
    }
}

fn list(id: u32, structures: Vec<r::RANParameter_STRUCTURE>) -> r::RANParameter_STRUCTURE_Item {
    r::RANParameter_STRUCTURE_Item {
        ran_parameter_id: r::RANParameter_ID(id),
        ran_parameter_value_type: r::RANParameter_ValueType::RanP_Choice_List(
            r::RANParameter_ValueType_Choice_List {
                ran_parameter_list: r::RANParameter_LIST {
                    list_of_ran_parameter: r::RANParameter_LISTList_of_ranParameter(structures),
                },
            },
        ),
    }
}

/// A control (header, message) of `style` and `action` for `rnti` with
/// `params` (for RIC-side tools and tests).
fn control(
    rnti: Rnti,
    style: i64,
    action: u16,
    params: Vec<r::RANParameter_STRUCTURE_Item>,
) -> (Vec<u8>, Vec<u8>) {
    let header = to_aper(&r::E2SM_RC_ControlHeader {
        ric_control_header_formats:
            r::E2SM_RC_ControlHeaderRic_controlHeader_formats::ControlHeader_Format1(
                r::E2SM_RC_ControlHeader_Format1 {
                    ue_id: ue_id(rnti),
                    ric_style_type: r::RIC_Style_Type(style),
                    ric_control_action_id: r::RIC_ControlAction_ID(action),
                    ric_control_decision: None,
                },
            ),
    });
    let message = to_aper(&r::E2SM_RC_ControlMessage {
        ric_control_message_formats:
            r::E2SM_RC_ControlMessageRic_controlMessage_formats::ControlMessage_Format1(
                r::E2SM_RC_ControlMessage_Format1 {
                    ran_p_list: r::E2SM_RC_ControlMessage_Format1RanP_List(
                        params
                            .into_iter()
                            .map(|p| r::E2SM_RC_ControlMessage_Format1_Item {
                                ran_parameter_id: p.ran_parameter_id,
                                ran_parameter_value_type: p.ran_parameter_value_type,
                            })
                            .collect(),
                    ),
                },
            ),
    });
    (header, message)
}

/// A QoS flow mapping control: `qfis` of `rnti` onto `drb`, downlink
/// (as `xapp_kpm_rc` writes it).
pub fn qos_flow_mapping_control(rnti: Rnti, drb: DrbId, qfis: &[Qfi]) -> (Vec<u8>, Vec<u8>) {
    let flows = qfis
        .iter()
        .map(|q| {
            structure(vec![
                element(param::QFI, true, i64::from(q.0)),
                element(param::QOS_FLOW_MAPPING_INDICATION, false, 1),
            ])
        })
        .collect();
    control(
        rnti,
        style::RADIO_BEARER_CONTROL,
        style::QOS_FLOW_MAPPING,
        vec![
            element(param::DRB_ID, true, i64::from(drb.0)),
            list(param::QOS_FLOWS, flows),
        ],
    )
}

/// A slice-level PRB quota control: `rnti` at most `max_ratio` % of the
/// cell's PRBs (one RRM policy ratio group, S-NSSAI SST 1, as O-RAN SC's
/// and srsRAN's xApps write it).
pub fn slice_prb_quota_control(rnti: Rnti, max_ratio: i64) -> (Vec<u8>, Vec<u8>) {
    let snssai = r::RANParameter_STRUCTURE_Item {
        ran_parameter_id: r::RANParameter_ID(7),
        ran_parameter_value_type: r::RANParameter_ValueType::RanP_Choice_Structure(
            r::RANParameter_ValueType_Choice_Structure {
                ran_parameter_structure: structure(vec![element(8, true, 1)]),
            },
        ),
    };
    let member = structure(vec![snssai]);
    let policy = r::RANParameter_STRUCTURE_Item {
        ran_parameter_id: r::RANParameter_ID(3),
        ran_parameter_value_type: r::RANParameter_ValueType::RanP_Choice_Structure(
            r::RANParameter_ValueType_Choice_Structure {
                ran_parameter_structure: structure(vec![list(4, vec![member])]),
            },
        ),
    };
    let group = structure(vec![
        policy,
        element(param::MIN_PRB_POLICY_RATIO, false, 0),
        element(param::MAX_PRB_POLICY_RATIO, false, max_ratio),
    ]);
    control(
        rnti,
        style::RADIO_RESOURCE_ALLOCATION,
        style::SLICE_PRB_QUOTA,
        vec![list(param::RRM_POLICY_RATIO_LIST, vec![group])],
    )
}

impl ServiceModel for Rc {
    fn ran_function_id(&self) -> u16 {
        RAN_FUNCTION_ID
    }

    fn ran_function(&self, _node: &dyn RanNode) -> RanFunction {
        RanFunction {
            id: RAN_FUNCTION_ID,
            definition: to_aper(&self.description()),
            revision: 1,
            oid: OID.into(),
        }
    }

    fn set_flexric_dialect(&mut self, flexric: bool) {
        self.dialect = if flexric {
            Dialect::Flexric
        } else {
            Dialect::Standard
        };
    }

    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        _node: &dyn RanNode,
    ) -> Result<Job, Refusal> {
        if action.kind != ActionType::Report {
            return Err(Refusal::action_not_supported(
                "only REPORT actions are supported (REPORT style 4)",
            ));
        }
        let t: r::E2SM_RC_EventTrigger = aper(trigger)
            .map_err(|e| Refusal::action_not_supported(format!("event trigger: {e}")))?;
        let r::E2SM_RC_EventTriggerRic_eventTrigger_formats::EventTrigger_Format4(t) =
            t.ric_event_trigger_formats
        else {
            return Err(Refusal::action_not_supported(
                "only event trigger format 4 (UE information change) is supported",
            ));
        };
        let condition_id = t
            .ue_info_change_list
            .0
            .first()
            .map(|i| i.ric_event_trigger_condition_id.0);
        let def = action.definition.as_deref().ok_or_else(|| {
            Refusal::action_not_supported("an RC REPORT action needs an action definition")
        })?;
        let def: r::E2SM_RC_ActionDefinition = aper(def)
            .map_err(|e| Refusal::action_not_supported(format!("action definition: {e}")))?;
        let r::E2SM_RC_ActionDefinitionRic_actionDefinition_formats::ActionDefinition_Format1(f1) =
            def.ric_action_definition_formats
        else {
            return Err(Refusal::action_not_supported(
                "REPORT style 4 takes action definition format 1",
            ));
        };
        if def.ric_style_type.0 != style::UE_INFORMATION {
            return Err(Refusal::action_not_supported(format!(
                "REPORT style {} is not supported (style 4 UE Information is)",
                def.ric_style_type.0
            )));
        }
        if !f1
            .ran_p_to_be_reported_list
            .0
            .iter()
            .any(|p| p.ran_parameter_id.0 == param::RRC_STATE)
        {
            return Err(Refusal::action_not_supported(
                "REPORT style 4: tcran reports RAN parameter 202 (RRC State) only",
            ));
        }
        Ok(Job {
            period: POLL,
            state: JobState::Rc(RcJob {
                condition_id,
                connected: None,
            }),
        })
    }

    fn indicate(&self, job: &mut JobState, node: &dyn RanNode, _now: Instant) -> Vec<Indication> {
        let JobState::Rc(job) = job else {
            return Vec::new();
        };
        let now_connected = ues_of(node);
        let changes: Vec<RrcChange> = match job.connected.replace(now_connected.clone()) {
            None => now_connected
                .iter()
                .map(|&rnti| RrcChange {
                    rnti,
                    state: RRC_CONNECTED,
                })
                .collect(),
            Some(before) => {
                let idle = before
                    .iter()
                    .filter(|u| !now_connected.contains(u))
                    .map(|&rnti| RrcChange {
                        rnti,
                        state: RRC_IDLE,
                    });
                let connected = now_connected
                    .iter()
                    .filter(|u| !before.contains(u))
                    .map(|&rnti| RrcChange {
                        rnti,
                        state: RRC_CONNECTED,
                    });
                idle.chain(connected).collect()
            }
        };
        if changes.is_empty() {
            return Vec::new();
        }
        let header = to_aper(&r::E2SM_RC_IndicationHeader {
            ric_indication_header_formats:
                r::E2SM_RC_IndicationHeaderRic_indicationHeader_formats::IndicationHeader_Format1(
                    r::E2SM_RC_IndicationHeader_Format1 {
                        ric_event_trigger_condition_id: job
                            .condition_id
                            .map(r::RIC_EventTriggerCondition_ID),
                    },
                ),
        });
        // A UE item is about 30 bytes: 500 per message stay below MAX_MESSAGE.
        changes
            .chunks(500)
            .map(|c| (header.clone(), indication_message(c)))
            .collect()
    }

    fn control(
        &mut self,
        header: &[u8],
        message: &[u8],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> ControlOutcome {
        let refused = |c, why: String| ControlOutcome::Refused {
            refusal: Refusal::ric_request(c, why),
            outcome: None,
        };
        let ctrl = match decode_control(header, message) {
            Ok(c) => c,
            Err(e) => return refused(cause::CONTROL_MESSAGE_INVALID, e.to_string()),
        };
        let result = match (ctrl.style, ctrl.action) {
            (style::RADIO_BEARER_CONTROL, style::QOS_FLOW_MAPPING) => {
                self.qos_flow_mapping(ctrl.rnti, &ctrl.params, node, now)
            }
            (style::RADIO_RESOURCE_ALLOCATION, style::SLICE_PRB_QUOTA) => {
                self.slice_prb_quota(ctrl.rnti, &ctrl.params, node, now)
            }
            (s, a) => {
                return ControlOutcome::Refused {
                    refusal: Refusal::action_not_supported(format!(
                        "CONTROL style {s} action {a} is not supported (style 1 action 2, \
                         style 2 action 6 are)"
                    )),
                    outcome: None,
                }
            }
        };
        match result {
            Ok(()) => ControlOutcome::Done {
                outcome: Some(outcome()),
            },
            Err(why) => refused(cause::CONTROL_FAILED_TO_EXECUTE, why),
        }
    }
}
