//! E2AP v2.03 messages as plain Rust values, and their APER transfer syntax
//! (O-RAN.WG3.E2AP-v02.03 clause 9.4: BASIC-PER, aligned).
//!
//! [`E2apPdu`] is one PDU; [`encode`] and [`decode`] convert it to and from
//! bytes through the types that `build.rs` generates from
//! `asn1/e2ap-v02.03.asn` ([`crate::asn::e2ap`]).
//!
//! Contract:
//! - `decode` never panics and never allocates more than a small multiple
//!   of its input (the APER decoder reads lengths before contents); a
//!   missing mandatory IE, a repeated IE or a procedure tcran does not
//!   implement is a [`DecodeError`] naming the message and the IE.
//! - `encode` writes the IEs in the order of the ASN.1 IE set, with the
//!   criticality the standard assigns to each, so a PDU that a standard
//!   peer built decodes and re-encodes byte for byte (checked against
//!   FlexRIC's PDUs in `tests/integration/golden.rs`). An IE value outside its ASN.1
//!   range (e.g. a RAN function id above 4095) is an [`EncodeError`].
//! - Identifiers of the other structures that this layer does not model
//!   (GlobalE2node-ID, E2 node component ids, Cause, criticality
//!   diagnostics) are the generated ASN.1 types, re-exported here.

use crate::asn::e2ap as asn;
use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use thiserror::Error;

pub use asn::{
    Cause, CauseE2node, CauseMisc, CauseProtocol, CauseRICrequest, CauseRICservice, CauseTransport,
    CriticalityDiagnostics, E2nodeComponentID, GlobalE2node_ID,
};

/// E2AP procedure codes (E2AP clause 9.3.7, `E2AP-Constants`).
pub mod procedure {
    pub const E2_SETUP: u8 = 1;
    pub const ERROR_INDICATION: u8 = 2;
    pub const RESET: u8 = 3;
    pub const RIC_CONTROL: u8 = 4;
    pub const RIC_INDICATION: u8 = 5;
    pub const RIC_SERVICE_QUERY: u8 = 6;
    pub const RIC_SERVICE_UPDATE: u8 = 7;
    pub const RIC_SUBSCRIPTION: u8 = 8;
    pub const RIC_SUBSCRIPTION_DELETE: u8 = 9;
    pub const RIC_SUBSCRIPTION_DELETE_REQUIRED: u8 = 12;
    pub const E2_REMOVAL: u8 = 13;
}

/// Protocol IE ids (E2AP clause 9.3.7).
mod ie {
    pub const CAUSE: u16 = 1;
    pub const CRITICALITY_DIAGNOSTICS: u16 = 2;
    pub const GLOBAL_E2NODE_ID: u16 = 3;
    pub const GLOBAL_RIC_ID: u16 = 4;
    pub const RAN_FUNCTION_ID: u16 = 5;
    pub const RAN_FUNCTION_ID_ITEM: u16 = 6;
    pub const RAN_FUNCTION_IE_CAUSE_ITEM: u16 = 7;
    pub const RAN_FUNCTION_ITEM: u16 = 8;
    pub const RAN_FUNCTIONS_ACCEPTED: u16 = 9;
    pub const RAN_FUNCTIONS_ADDED: u16 = 10;
    pub const RAN_FUNCTIONS_DELETED: u16 = 11;
    pub const RAN_FUNCTIONS_MODIFIED: u16 = 12;
    pub const RAN_FUNCTIONS_REJECTED: u16 = 13;
    pub const ACTION_ADMITTED_ITEM: u16 = 14;
    pub const ACTION_ID: u16 = 15;
    pub const ACTION_NOT_ADMITTED_ITEM: u16 = 16;
    pub const ACTIONS_ADMITTED: u16 = 17;
    pub const ACTIONS_NOT_ADMITTED: u16 = 18;
    pub const ACTION_TO_BE_SETUP_ITEM: u16 = 19;
    pub const CALL_PROCESS_ID: u16 = 20;
    pub const CONTROL_ACK_REQUEST: u16 = 21;
    pub const CONTROL_HEADER: u16 = 22;
    pub const CONTROL_MESSAGE: u16 = 23;
    pub const INDICATION_HEADER: u16 = 25;
    pub const INDICATION_MESSAGE: u16 = 26;
    pub const INDICATION_SN: u16 = 27;
    pub const INDICATION_TYPE: u16 = 28;
    pub const REQUEST_ID: u16 = 29;
    pub const SUBSCRIPTION_DETAILS: u16 = 30;
    pub const TIME_TO_WAIT: u16 = 31;
    pub const CONTROL_OUTCOME: u16 = 32;
    pub const TRANSACTION_ID: u16 = 49;
    pub const COMPONENT_CONFIG_ADDITION: u16 = 50;
    pub const COMPONENT_CONFIG_ADDITION_ITEM: u16 = 51;
    pub const COMPONENT_CONFIG_ADDITION_ACK: u16 = 52;
    pub const COMPONENT_CONFIG_ADDITION_ACK_ITEM: u16 = 53;
}

const REJECT: u8 = asn::Criticality::REJECT;
const IGNORE: u8 = asn::Criticality::IGNORE;

// ------------------------------------------------------------------ values

/// RIC Request ID (E2AP 9.2.7): who asked (requestor) and which of its
/// requests (instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RicRequestId {
    pub requestor: u16,
    pub instance: u16,
}

/// One RAN function offered by the node (E2AP 9.2.23): the service model's
/// id, its RAN function definition (E2SM-specific bytes), revision and OID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RanFunction {
    pub id: u16,
    pub definition: Vec<u8>,
    pub revision: u16,
    pub oid: String,
}

/// A RAN function id with its revision (E2AP 9.2.24).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RanFunctionRevision {
    pub id: u16,
    pub revision: u16,
}

/// A E2 node component configuration (E2AP 9.2.26-9.2.27): the interface
/// (`E2nodeComponentInterfaceType`: 0 NG, 1 Xn, 2 E1, 3 F1, 4 W1, 5 S1,
/// 6 X2), its component id, and the setup request/response of that
/// interface as opaque bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentConfig {
    pub interface: u8,
    pub id: E2nodeComponentID,
    pub request_part: Vec<u8>,
    pub response_part: Vec<u8>,
}

/// The RIC's answer for one component configuration (E2AP 9.2.28).
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentConfigAck {
    pub interface: u8,
    pub id: E2nodeComponentID,
    pub success: bool,
    pub failure_cause: Option<Cause>,
}

/// Global RIC ID (E2AP 9.2.4): PLMN identity (3 octets, TS 38.413
/// 9.3.3.5 BCD) and a 20-bit RIC id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalRicId {
    pub plmn: [u8; 3],
    pub ric_id: u32,
}

/// Action type (E2AP 9.2.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionType {
    Report,
    Insert,
    Policy,
}

/// Subsequent action (E2AP 9.2.13): continue or wait, and how long
/// (`RICtimeToWait` index: 0 = 1 ms ... 16 = 60 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubsequentAction {
    pub wait: bool,
    pub time_to_wait: u8,
}

/// One action of a subscription (E2AP 9.1.1.1, RIC Action to be Setup Item).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub id: u8,
    pub kind: ActionType,
    pub definition: Option<Vec<u8>>,
    pub subsequent: Option<SubsequentAction>,
}

/// Indication type (E2AP 9.2.19).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndicationType {
    Report,
    Insert,
}

// ---------------------------------------------------------------- messages

#[derive(Debug, Clone, PartialEq)]
pub struct E2SetupRequest {
    pub transaction: u8,
    pub node: GlobalE2node_ID,
    pub functions: Vec<RanFunction>,
    pub components: Vec<ComponentConfig>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct E2SetupResponse {
    pub transaction: u8,
    pub ric: GlobalRicId,
    pub accepted: Option<Vec<RanFunctionRevision>>,
    pub rejected: Option<Vec<(u16, Cause)>>,
    pub components: Vec<ComponentConfigAck>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct E2SetupFailure {
    pub transaction: u8,
    pub cause: Cause,
    /// `TimeToWait` index: 0 = 1 s, 1 = 2 s, 2 = 5 s, 3 = 10 s, 4 = 20 s, 5 = 60 s.
    pub time_to_wait: Option<u8>,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionRequest {
    pub request: RicRequestId,
    pub function: u16,
    pub event_trigger: Vec<u8>,
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionResponse {
    pub request: RicRequestId,
    pub function: u16,
    pub admitted: Vec<u8>,
    /// Present (possibly empty) or absent, as the sender chose.
    pub not_admitted: Option<Vec<(u8, Cause)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionFailure {
    pub request: RicRequestId,
    pub function: u16,
    pub cause: Cause,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

/// RIC Subscription Delete Request and Response carry the same IEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriptionDelete {
    pub request: RicRequestId,
    pub function: u16,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionDeleteFailure {
    pub request: RicRequestId,
    pub function: u16,
    pub cause: Cause,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indication {
    pub request: RicRequestId,
    pub function: u16,
    pub action: u8,
    pub sn: Option<u16>,
    pub kind: IndicationType,
    pub header: Vec<u8>,
    pub message: Vec<u8>,
    pub call_process_id: Option<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlRequest {
    pub request: RicRequestId,
    pub function: u16,
    pub call_process_id: Option<Vec<u8>>,
    pub header: Vec<u8>,
    pub message: Vec<u8>,
    /// `RICcontrolAckRequest`: `Some(false)` = noAck, `Some(true)` = ack.
    pub ack_request: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlAcknowledge {
    pub request: RicRequestId,
    pub function: u16,
    pub call_process_id: Option<Vec<u8>>,
    pub outcome: Option<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ControlFailure {
    pub request: RicRequestId,
    pub function: u16,
    pub call_process_id: Option<Vec<u8>>,
    pub cause: Cause,
    pub outcome: Option<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorIndication {
    pub transaction: Option<u8>,
    pub request: Option<RicRequestId>,
    pub function: Option<u16>,
    pub cause: Option<Cause>,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResetRequest {
    pub transaction: u8,
    pub cause: Cause,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResetResponse {
    pub transaction: u8,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceUpdate {
    pub transaction: u8,
    pub added: Option<Vec<RanFunction>>,
    pub modified: Option<Vec<RanFunction>>,
    pub deleted: Option<Vec<RanFunctionRevision>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServiceUpdateAcknowledge {
    pub transaction: u8,
    pub accepted: Option<Vec<RanFunctionRevision>>,
    pub rejected: Option<Vec<(u16, Cause)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServiceUpdateFailure {
    pub transaction: u8,
    pub cause: Cause,
    pub time_to_wait: Option<u8>,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceQuery {
    pub transaction: u8,
    pub accepted: Option<Vec<RanFunctionRevision>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct E2RemovalResponse {
    pub transaction: u8,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct E2RemovalFailure {
    pub transaction: u8,
    pub cause: Cause,
    pub diagnostics: Option<CriticalityDiagnostics>,
}

/// One E2AP PDU of the procedures tcran implements.
#[derive(Debug, Clone, PartialEq)]
pub enum E2apPdu {
    E2SetupRequest(E2SetupRequest),
    E2SetupResponse(E2SetupResponse),
    E2SetupFailure(E2SetupFailure),
    SubscriptionRequest(SubscriptionRequest),
    SubscriptionResponse(SubscriptionResponse),
    SubscriptionFailure(SubscriptionFailure),
    SubscriptionDeleteRequest(SubscriptionDelete),
    SubscriptionDeleteResponse(SubscriptionDelete),
    SubscriptionDeleteFailure(SubscriptionDeleteFailure),
    Indication(Indication),
    ControlRequest(ControlRequest),
    ControlAcknowledge(ControlAcknowledge),
    ControlFailure(ControlFailure),
    ErrorIndication(ErrorIndication),
    ResetRequest(ResetRequest),
    ResetResponse(ResetResponse),
    ServiceUpdate(ServiceUpdate),
    ServiceUpdateAcknowledge(ServiceUpdateAcknowledge),
    ServiceUpdateFailure(ServiceUpdateFailure),
    ServiceQuery(ServiceQuery),
    E2RemovalRequest { transaction: u8 },
    E2RemovalResponse(E2RemovalResponse),
    E2RemovalFailure(E2RemovalFailure),
}

impl E2apPdu {
    /// The message's name as E2AP writes it (for logs and errors).
    pub fn name(&self) -> &'static str {
        match self {
            E2apPdu::E2SetupRequest(_) => "E2 Setup Request",
            E2apPdu::E2SetupResponse(_) => "E2 Setup Response",
            E2apPdu::E2SetupFailure(_) => "E2 Setup Failure",
            E2apPdu::SubscriptionRequest(_) => "RIC Subscription Request",
            E2apPdu::SubscriptionResponse(_) => "RIC Subscription Response",
            E2apPdu::SubscriptionFailure(_) => "RIC Subscription Failure",
            E2apPdu::SubscriptionDeleteRequest(_) => "RIC Subscription Delete Request",
            E2apPdu::SubscriptionDeleteResponse(_) => "RIC Subscription Delete Response",
            E2apPdu::SubscriptionDeleteFailure(_) => "RIC Subscription Delete Failure",
            E2apPdu::Indication(_) => "RIC Indication",
            E2apPdu::ControlRequest(_) => "RIC Control Request",
            E2apPdu::ControlAcknowledge(_) => "RIC Control Acknowledge",
            E2apPdu::ControlFailure(_) => "RIC Control Failure",
            E2apPdu::ErrorIndication(_) => "Error Indication",
            E2apPdu::ResetRequest(_) => "Reset Request",
            E2apPdu::ResetResponse(_) => "Reset Response",
            E2apPdu::ServiceUpdate(_) => "RIC Service Update",
            E2apPdu::ServiceUpdateAcknowledge(_) => "RIC Service Update Acknowledge",
            E2apPdu::ServiceUpdateFailure(_) => "RIC Service Update Failure",
            E2apPdu::ServiceQuery(_) => "RIC Service Query",
            E2apPdu::E2RemovalRequest { .. } => "E2 Removal Request",
            E2apPdu::E2RemovalResponse(_) => "E2 Removal Response",
            E2apPdu::E2RemovalFailure(_) => "E2 Removal Failure",
        }
    }
}

// ------------------------------------------------------------------ errors

/// Why bytes are not an E2AP PDU tcran understands.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("not an APER E2AP PDU: {0}")]
    Syntax(String),
    #[error("{message}: mandatory IE {ie} missing")]
    MissingIe {
        message: &'static str,
        ie: &'static str,
    },
    #[error("{message}: IE {ie} present more than once")]
    DuplicateIe {
        message: &'static str,
        ie: &'static str,
    },
    #[error("{message}: {what}")]
    Invalid { message: &'static str, what: String },
    #[error("procedure code {0} is not implemented by tcran")]
    Unsupported(u8),
}

/// Why a PDU could not be encoded: a value outside its ASN.1 range.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot encode {message}: {reason}")]
pub struct EncodeError {
    pub message: &'static str,
    pub reason: String,
}

fn set<T>(
    slot: &mut Option<T>,
    value: T,
    message: &'static str,
    ie: &'static str,
) -> Result<(), DecodeError> {
    if slot.is_some() {
        return Err(DecodeError::DuplicateIe { message, ie });
    }
    *slot = Some(value);
    Ok(())
}

fn need<T>(slot: Option<T>, message: &'static str, ie: &'static str) -> Result<T, DecodeError> {
    slot.ok_or(DecodeError::MissingIe { message, ie })
}

// ------------------------------------------------------------- conversions

fn rid_from(r: &asn::RICrequestID) -> RicRequestId {
    RicRequestId {
        requestor: r.ric_requestor_id.0,
        instance: r.ric_instance_id.0,
    }
}

fn rid_to(r: RicRequestId) -> asn::RICrequestID {
    asn::RICrequestID {
        ric_requestor_id: asn::RICrequestIDRicRequestorID(r.requestor),
        ric_instance_id: asn::RICrequestIDRicInstanceID(r.instance),
    }
}

fn functions_to(list: &[RanFunction]) -> asn::RANfunctions_List {
    asn::RANfunctions_List(
        list.iter()
            .map(|f| asn::RANfunctions_List_Entry {
                id: asn::ProtocolIE_ID(ie::RAN_FUNCTION_ITEM),
                criticality: asn::Criticality(IGNORE),
                value: asn::RANfunctions_List_EntryValue::Id_RANfunction_Item(
                    asn::RANfunction_Item {
                        ran_function_id: asn::RANfunctionID(f.id),
                        ran_function_definition: asn::RANfunctionDefinition(f.definition.clone()),
                        ran_function_revision: asn::RANfunctionRevision(f.revision),
                        ran_function_oid: asn::RANfunctionOID(f.oid.clone()),
                    },
                ),
            })
            .collect(),
    )
}

fn functions_from(list: asn::RANfunctions_List) -> Vec<RanFunction> {
    list.0
        .into_iter()
        .map(|e| {
            let asn::RANfunctions_List_EntryValue::Id_RANfunction_Item(f) = e.value;
            RanFunction {
                id: f.ran_function_id.0,
                definition: f.ran_function_definition.0,
                revision: f.ran_function_revision.0,
                oid: f.ran_function_oid.0,
            }
        })
        .collect()
}

fn revisions_to(list: &[RanFunctionRevision]) -> asn::RANfunctionsID_List {
    asn::RANfunctionsID_List(
        list.iter()
            .map(|f| asn::RANfunctionsID_List_Entry {
                id: asn::ProtocolIE_ID(ie::RAN_FUNCTION_ID_ITEM),
                criticality: asn::Criticality(IGNORE),
                value: asn::RANfunctionsID_List_EntryValue::Id_RANfunctionID_Item(
                    asn::RANfunctionID_Item {
                        ran_function_id: asn::RANfunctionID(f.id),
                        ran_function_revision: asn::RANfunctionRevision(f.revision),
                    },
                ),
            })
            .collect(),
    )
}

fn revisions_from(list: asn::RANfunctionsID_List) -> Vec<RanFunctionRevision> {
    list.0
        .into_iter()
        .map(|e| {
            let asn::RANfunctionsID_List_EntryValue::Id_RANfunctionID_Item(f) = e.value;
            RanFunctionRevision {
                id: f.ran_function_id.0,
                revision: f.ran_function_revision.0,
            }
        })
        .collect()
}

fn rejected_to(list: &[(u16, Cause)]) -> asn::RANfunctionsIDcause_List {
    asn::RANfunctionsIDcause_List(
        list.iter()
            .map(|(id, cause)| asn::RANfunctionsIDcause_List_Entry {
                id: asn::ProtocolIE_ID(ie::RAN_FUNCTION_IE_CAUSE_ITEM),
                criticality: asn::Criticality(IGNORE),
                value: asn::RANfunctionsIDcause_List_EntryValue::Id_RANfunctionIEcause_Item(
                    asn::RANfunctionIDcause_Item {
                        ran_function_id: asn::RANfunctionID(*id),
                        cause: cause.clone(),
                    },
                ),
            })
            .collect(),
    )
}

fn rejected_from(list: asn::RANfunctionsIDcause_List) -> Vec<(u16, Cause)> {
    list.0
        .into_iter()
        .map(|e| {
            let asn::RANfunctionsIDcause_List_EntryValue::Id_RANfunctionIEcause_Item(f) = e.value;
            (f.ran_function_id.0, f.cause)
        })
        .collect()
}

fn bits(value: u64, width: usize) -> bitvec::vec::BitVec<u8, bitvec::order::Msb0> {
    (0..width).rev().map(|i| (value >> i) & 1 == 1).collect()
}

fn bits_value(b: &bitvec::slice::BitSlice<u8, bitvec::order::Msb0>) -> u64 {
    b.iter().fold(0u64, |acc, bit| acc << 1 | *bit as u64)
}

fn plmn(bytes: &[u8], message: &'static str) -> Result<[u8; 3], DecodeError> {
    bytes.try_into().map_err(|_| DecodeError::Invalid {
        message,
        what: format!("PLMN identity of {} octets (3 expected)", bytes.len()),
    })
}

fn action_to(a: &Action) -> asn::RICactions_ToBeSetup_List_Entry {
    asn::RICactions_ToBeSetup_List_Entry {
        id: asn::ProtocolIE_ID(ie::ACTION_TO_BE_SETUP_ITEM),
        criticality: asn::Criticality(IGNORE),
        value: asn::RICactions_ToBeSetup_List_EntryValue::Id_RICaction_ToBeSetup_Item(
            asn::RICaction_ToBeSetup_Item {
                ric_action_id: asn::RICactionID(a.id),
                ric_action_type: asn::RICactionType(match a.kind {
                    ActionType::Report => asn::RICactionType::REPORT,
                    ActionType::Insert => asn::RICactionType::INSERT,
                    ActionType::Policy => asn::RICactionType::POLICY,
                }),
                ric_action_definition: a.definition.clone().map(asn::RICactionDefinition),
                ric_subsequent_action: a.subsequent.map(|s| asn::RICsubsequentAction {
                    ric_subsequent_action_type: asn::RICsubsequentActionType(s.wait as u8),
                    ric_time_to_wait: asn::RICtimeToWait(s.time_to_wait),
                }),
            },
        ),
    }
}

fn action_from(e: asn::RICactions_ToBeSetup_List_Entry) -> Result<Action, DecodeError> {
    let asn::RICactions_ToBeSetup_List_EntryValue::Id_RICaction_ToBeSetup_Item(a) = e.value;
    Ok(Action {
        id: a.ric_action_id.0,
        kind: match a.ric_action_type.0 {
            asn::RICactionType::REPORT => ActionType::Report,
            asn::RICactionType::INSERT => ActionType::Insert,
            asn::RICactionType::POLICY => ActionType::Policy,
            other => {
                return Err(DecodeError::Invalid {
                    message: "RIC Subscription Request",
                    what: format!("action type {other} is an extension tcran does not know"),
                })
            }
        },
        definition: a.ric_action_definition.map(|d| d.0),
        subsequent: a.ric_subsequent_action.map(|s| SubsequentAction {
            wait: s.ric_subsequent_action_type.0 == asn::RICsubsequentActionType::WAIT,
            time_to_wait: s.ric_time_to_wait.0,
        }),
    })
}

fn components_to(list: &[ComponentConfig]) -> asn::E2nodeComponentConfigAddition_List {
    asn::E2nodeComponentConfigAddition_List(
        list.iter()
            .map(|c| asn::E2nodeComponentConfigAddition_List_Entry {
                id: asn::ProtocolIE_ID(ie::COMPONENT_CONFIG_ADDITION_ITEM),
                criticality: asn::Criticality(REJECT),
                value:
                    asn::E2nodeComponentConfigAddition_List_EntryValue::Id_E2nodeComponentConfigAddition_Item(
                        asn::E2nodeComponentConfigAddition_Item {
                            e2node_component_interface_type: asn::E2nodeComponentInterfaceType(
                                c.interface,
                            ),
                            e2node_component_id: c.id.clone(),
                            e2node_component_configuration: asn::E2nodeComponentConfiguration {
                                e2node_component_request_part:
                                    asn::E2nodeComponentConfigurationE2nodeComponentRequestPart(
                                        c.request_part.clone(),
                                    ),
                                e2node_component_response_part:
                                    asn::E2nodeComponentConfigurationE2nodeComponentResponsePart(
                                        c.response_part.clone(),
                                    ),
                            },
                        },
                    ),
            })
            .collect(),
    )
}

fn components_from(list: asn::E2nodeComponentConfigAddition_List) -> Vec<ComponentConfig> {
    list.0
        .into_iter()
        .map(|e| {
            let asn::E2nodeComponentConfigAddition_List_EntryValue::Id_E2nodeComponentConfigAddition_Item(c) =
                e.value;
            ComponentConfig {
                interface: c.e2node_component_interface_type.0,
                id: c.e2node_component_id,
                request_part: c.e2node_component_configuration.e2node_component_request_part.0,
                response_part: c
                    .e2node_component_configuration
                    .e2node_component_response_part
                    .0,
            }
        })
        .collect()
}

fn component_acks_to(list: &[ComponentConfigAck]) -> asn::E2nodeComponentConfigAdditionAck_List {
    asn::E2nodeComponentConfigAdditionAck_List(
        list.iter()
            .map(|c| asn::E2nodeComponentConfigAdditionAck_List_Entry {
                id: asn::ProtocolIE_ID(ie::COMPONENT_CONFIG_ADDITION_ACK_ITEM),
                criticality: asn::Criticality(REJECT),
                value:
                    asn::E2nodeComponentConfigAdditionAck_List_EntryValue::Id_E2nodeComponentConfigAdditionAck_Item(
                        asn::E2nodeComponentConfigAdditionAck_Item {
                            e2node_component_interface_type: asn::E2nodeComponentInterfaceType(
                                c.interface,
                            ),
                            e2node_component_id: c.id.clone(),
                            e2node_component_configuration_ack:
                                asn::E2nodeComponentConfigurationAck {
                                    update_outcome:
                                        asn::E2nodeComponentConfigurationAckUpdateOutcome(
                                            if c.success { 0 } else { 1 },
                                        ),
                                    failure_cause: c.failure_cause.clone(),
                                },
                        },
                    ),
            })
            .collect(),
    )
}

fn component_acks_from(
    list: asn::E2nodeComponentConfigAdditionAck_List,
) -> Vec<ComponentConfigAck> {
    list.0
        .into_iter()
        .map(|e| {
            let asn::E2nodeComponentConfigAdditionAck_List_EntryValue::Id_E2nodeComponentConfigAdditionAck_Item(c) =
                e.value;
            ComponentConfigAck {
                interface: c.e2node_component_interface_type.0,
                id: c.e2node_component_id,
                success: c.e2node_component_configuration_ack.update_outcome.0 == 0,
                failure_cause: c.e2node_component_configuration_ack.failure_cause,
            }
        })
        .collect()
}

/// Builds one protocol IE entry of a message's container.
macro_rules! entry {
    ($entry:ident, $value:ident, $id:expr, $crit:expr, $variant:ident($v:expr)) => {
        asn::$entry {
            id: asn::ProtocolIE_ID($id),
            criticality: asn::Criticality($crit),
            value: asn::$value::$variant($v),
        }
    };
}

// ----------------------------------------------------------------- encode

/// Encodes one PDU (APER).
pub fn encode(pdu: &E2apPdu) -> Result<Vec<u8>, EncodeError> {
    // The hot PDU (every report period, every subscription) has a direct
    // encoder; hampi's bytes, checked by `tests/integration/roundtrip.rs`.
    if let E2apPdu::Indication(m) = pdu {
        if let Some(bytes) = encode_indication(m) {
            return Ok(bytes);
        }
    }
    encode_generic(pdu)
}

/// Encodes one PDU with hampi's derived encoder (what [`encode`] does for
/// every PDU but the RIC Indication).
pub fn encode_generic(pdu: &E2apPdu) -> Result<Vec<u8>, EncodeError> {
    let asn_pdu = to_asn(pdu);
    let mut data = PerCodecData::new_aper();
    asn_pdu.aper_encode(&mut data).map_err(|e| EncodeError {
        message: pdu.name(),
        reason: e.to_string(),
    })?;
    Ok(data.into_bytes())
}

/// APER length determinant of an unconstrained length (X.691 11.9.3.6,
/// aligned): one octet below 128, two below 16384; `None` above (X.691
/// fragmentation, which tcran's messages never need: [`crate::sm::MAX_MESSAGE`]).
fn length_determinant(out: &mut Vec<u8>, n: usize) -> Option<()> {
    match n {
        0..=127 => out.push(n as u8),
        128..=16383 => out.extend_from_slice(&(0x8000 | n as u16).to_be_bytes()),
        _ => return None,
    }
    Some(())
}

/// A RIC Indication, APER-encoded directly: E2AP-PDU `initiatingMessage`
/// (procedure 5, criticality ignore) whose RICindication holds the IEs in
/// the order and with the criticality (reject) of E2AP 9.1.1.7, each an
/// open type (X.691 10.2: length, then the value's octets). The same bytes
/// as hampi's derived encoder (property test in `tests/integration/roundtrip.rs`);
/// `None` when a length needs fragmentation (the caller then uses hampi,
/// which reports it).
pub fn encode_indication(m: &Indication) -> Option<Vec<u8>> {
    // Octets of an APER length determinant (X.691 11.9.3.6, aligned).
    fn ld(n: usize) -> usize {
        if n < 128 {
            1
        } else {
            2
        }
    }
    // Every IE: id (2 octets), criticality reject (2 bits, padded), open
    // type length, value.
    fn ie_len(value: usize) -> usize {
        3 + ld(value) + value
    }
    // An OCTET STRING IE: the open type holds the string's own length.
    fn octets_ie_len(v: usize) -> usize {
        ie_len(ld(v) + v)
    }
    fn put_ie(out: &mut Vec<u8>, id: u16, value: &[u8]) -> Option<()> {
        out.extend_from_slice(&id.to_be_bytes());
        out.push(0);
        length_determinant(out, value.len())?;
        out.extend_from_slice(value);
        Some(())
    }
    fn octets_ie(out: &mut Vec<u8>, id: u16, v: &[u8]) -> Option<()> {
        out.extend_from_slice(&id.to_be_bytes());
        out.push(0);
        length_determinant(out, ld(v.len()) + v.len())?;
        length_determinant(out, v.len())?;
        out.extend_from_slice(v);
        Some(())
    }
    if m.function > 4095 {
        return None; // out of RANfunctionID's range: hampi says so
    }
    let count = 6 + m.sn.is_some() as u16 + m.call_process_id.is_some() as u16;
    // The RICindication value's length comes first on the wire: it is
    // computed, so the value is written once, straight into the PDU (a
    // 16 KB report is not copied twice).
    let value_len = 3
        + ie_len(5)
        + ie_len(2)
        + ie_len(1)
        + m.sn.map_or(0, |_| ie_len(2))
        + ie_len(1)
        + octets_ie_len(m.header.len())
        + octets_ie_len(m.message.len())
        + m.call_process_id
            .as_ref()
            .map_or(0, |c| octets_ie_len(c.len()));
    let mut out = Vec::with_capacity(value_len + 6);
    // CHOICE initiatingMessage (extension bit, index 0 of 3), procedure
    // code (one octet), criticality ignore (2 bits, padded).
    out.extend_from_slice(&[0x00, procedure::RIC_INDICATION, 0x40]);
    length_determinant(&mut out, value_len)?;
    // RICindication: extension bit (padded), then the IE count (0..65535,
    // two aligned octets).
    out.push(0);
    out.extend_from_slice(&count.to_be_bytes());
    let r = m.request;
    let [a, b] = r.requestor.to_be_bytes();
    let [c, d] = r.instance.to_be_bytes();
    put_ie(&mut out, ie::REQUEST_ID, &[0, a, b, c, d])?;
    put_ie(&mut out, ie::RAN_FUNCTION_ID, &m.function.to_be_bytes())?;
    put_ie(&mut out, ie::ACTION_ID, &[m.action])?;
    if let Some(sn) = m.sn {
        put_ie(&mut out, ie::INDICATION_SN, &sn.to_be_bytes())?;
    }
    // ENUMERATED { report, insert, ... }: extension bit, one bit.
    let kind = match m.kind {
        IndicationType::Report => 0x00,
        IndicationType::Insert => 0x40,
    };
    put_ie(&mut out, ie::INDICATION_TYPE, &[kind])?;
    octets_ie(&mut out, ie::INDICATION_HEADER, &m.header)?;
    octets_ie(&mut out, ie::INDICATION_MESSAGE, &m.message)?;
    if let Some(c) = &m.call_process_id {
        octets_ie(&mut out, ie::CALL_PROCESS_ID, c)?;
    }
    debug_assert_eq!(out.len(), value_len + 3 + ld(value_len));
    Some(out)
}

/// Reads an APER length determinant (X.691 11.9.3.6, aligned) of at most
/// 16383 from `b` at `*at`: `None` for the fragmented form.
fn read_length(b: &[u8], at: &mut usize) -> Option<usize> {
    let first = *b.get(*at)?;
    match first >> 6 {
        0 | 1 => {
            *at += 1;
            Some(first as usize)
        }
        2 => {
            let second = *b.get(*at + 1)?;
            *at += 2;
            Some(((first as usize & 0x3f) << 8) | second as usize)
        }
        _ => None,
    }
}

/// A RIC Indication decoded directly, the inverse of
/// [`encode_indication`], for the RIC side's hot path: the same
/// [`Indication`] hampi's decoder and [`from_asn`] give, or `None` where
/// this decoder leaves the bytes to them. It takes the PDU tcran and
/// asn1c-based nodes send: `initiatingMessage` of procedure 5 with
/// criticality ignore, the IEs of E2AP 9.1.1.7 each once with criticality
/// reject, in any order, every open type exactly as long as its value and
/// nothing after the PDU. Anything else (another criticality, an unknown
/// or repeated IE, an extension, a fragmented length, trailing bytes) goes
/// to hampi, which decodes or rejects it as it always has. The property
/// test in `tests/integration/roundtrip.rs` and the `e2_e2ap` fuzz target hold both
/// paths to the same result.
pub fn decode_indication(bytes: &[u8]) -> Option<Indication> {
    if bytes.get(..3)? != [0x00, procedure::RIC_INDICATION, 0x40] {
        return None;
    }
    let mut at = 3;
    let len = read_length(bytes, &mut at)?;
    if bytes.len() - at != len {
        return None;
    }
    // RICindication: extension bit clear (its padding too), IE count.
    let count = match bytes.get(at..at + 3)? {
        [0, hi, lo] => u16::from_be_bytes([*hi, *lo]),
        _ => return None,
    };
    at += 3;
    let (mut request, mut function, mut action, mut sn, mut kind) = (None, None, None, None, None);
    let (mut header, mut message, mut call_process_id) = (None, None, None);
    fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
        if slot.is_some() {
            return None; // a repeated IE: hampi's path names it
        }
        *slot = Some(v);
        Some(())
    }
    for _ in 0..count {
        let [a, b, 0] = *bytes.get(at..at + 3)? else {
            return None;
        };
        at += 3;
        let id = u16::from_be_bytes([a, b]);
        let n = read_length(bytes, &mut at)?;
        let v = bytes.get(at..at.checked_add(n)?)?;
        at += n;
        // An OCTET STRING inside the open type: its own length, then
        // exactly that many octets.
        let octets = |v: &[u8]| -> Option<Vec<u8>> {
            let mut i = 0;
            let n = read_length(v, &mut i)?;
            (v.len() - i == n).then(|| v[i..].to_vec())
        };
        match id {
            ie::REQUEST_ID => match *v {
                [0, a, b, c, d] => once(
                    &mut request,
                    RicRequestId {
                        requestor: u16::from_be_bytes([a, b]),
                        instance: u16::from_be_bytes([c, d]),
                    },
                )?,
                _ => return None,
            },
            ie::RAN_FUNCTION_ID => match *v {
                [a, b] if u16::from_be_bytes([a, b]) <= 4095 => {
                    once(&mut function, u16::from_be_bytes([a, b]))?
                }
                _ => return None,
            },
            ie::ACTION_ID => match *v {
                [a] => once(&mut action, a)?,
                _ => return None,
            },
            ie::INDICATION_SN => match *v {
                [a, b] => once(&mut sn, u16::from_be_bytes([a, b]))?,
                _ => return None,
            },
            ie::INDICATION_TYPE => match *v {
                [0x00] => once(&mut kind, IndicationType::Report)?,
                [0x40] => once(&mut kind, IndicationType::Insert)?,
                _ => return None,
            },
            ie::INDICATION_HEADER => once(&mut header, octets(v)?)?,
            ie::INDICATION_MESSAGE => once(&mut message, octets(v)?)?,
            ie::CALL_PROCESS_ID => once(&mut call_process_id, octets(v)?)?,
            _ => return None,
        }
    }
    if at != bytes.len() {
        return None;
    }
    Some(Indication {
        request: request?,
        function: function?,
        action: action?,
        sn,
        kind: kind?,
        header: header?,
        message: message?,
        call_process_id,
    })
}

/// Decodes one PDU (APER).
pub fn decode(bytes: &[u8]) -> Result<E2apPdu, DecodeError> {
    // The hot PDU at a RIC has a direct decoder (hampi's result).
    if let Some(m) = decode_indication(bytes) {
        return Ok(E2apPdu::Indication(m));
    }
    decode_generic(bytes)
}

/// Decodes one PDU with hampi's derived decoder (what [`decode`] does for
/// every PDU but the RIC Indications [`decode_indication`] takes).
pub fn decode_generic(bytes: &[u8]) -> Result<E2apPdu, DecodeError> {
    let mut data = PerCodecData::from_slice_aper(bytes);
    let pdu =
        asn::E2AP_PDU::aper_decode(&mut data).map_err(|e| DecodeError::Syntax(e.to_string()))?;
    from_asn(pdu)
}

fn initiating(code: u8, crit: u8, value: asn::InitiatingMessageValue) -> asn::E2AP_PDU {
    asn::E2AP_PDU::InitiatingMessage(asn::InitiatingMessage {
        procedure_code: asn::ProcedureCode(code),
        criticality: asn::Criticality(crit),
        value,
    })
}

fn successful(code: u8, crit: u8, value: asn::SuccessfulOutcomeValue) -> asn::E2AP_PDU {
    asn::E2AP_PDU::SuccessfulOutcome(asn::SuccessfulOutcome {
        procedure_code: asn::ProcedureCode(code),
        criticality: asn::Criticality(crit),
        value,
    })
}

fn unsuccessful(code: u8, crit: u8, value: asn::UnsuccessfulOutcomeValue) -> asn::E2AP_PDU {
    asn::E2AP_PDU::UnsuccessfulOutcome(asn::UnsuccessfulOutcome {
        procedure_code: asn::ProcedureCode(code),
        criticality: asn::Criticality(crit),
        value,
    })
}

/// Converts a PDU to its generated ASN.1 form.
pub fn to_asn(pdu: &E2apPdu) -> asn::E2AP_PDU {
    use asn::InitiatingMessageValue as I;
    use asn::SuccessfulOutcomeValue as S;
    use asn::UnsuccessfulOutcomeValue as U;
    use procedure as p;
    match pdu {
        E2apPdu::E2SetupRequest(m) => {
            let v = vec![
                entry!(
                    E2setupRequestProtocolIEs_Entry,
                    E2setupRequestProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(m.transaction))
                ),
                entry!(
                    E2setupRequestProtocolIEs_Entry,
                    E2setupRequestProtocolIEs_EntryValue,
                    ie::GLOBAL_E2NODE_ID,
                    REJECT,
                    Id_GlobalE2node_ID(m.node.clone())
                ),
                entry!(
                    E2setupRequestProtocolIEs_Entry,
                    E2setupRequestProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_ADDED,
                    REJECT,
                    Id_RANfunctionsAdded(functions_to(&m.functions))
                ),
                entry!(
                    E2setupRequestProtocolIEs_Entry,
                    E2setupRequestProtocolIEs_EntryValue,
                    ie::COMPONENT_CONFIG_ADDITION,
                    REJECT,
                    Id_E2nodeComponentConfigAddition(components_to(&m.components))
                ),
            ];
            initiating(
                p::E2_SETUP,
                REJECT,
                I::Id_E2setup(asn::E2setupRequest {
                    protocol_i_es: asn::E2setupRequestProtocolIEs(v),
                }),
            )
        }
        E2apPdu::E2SetupResponse(m) => {
            let mut v = vec![
                entry!(
                    E2setupResponseProtocolIEs_Entry,
                    E2setupResponseProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(m.transaction))
                ),
                entry!(
                    E2setupResponseProtocolIEs_Entry,
                    E2setupResponseProtocolIEs_EntryValue,
                    ie::GLOBAL_RIC_ID,
                    REJECT,
                    Id_GlobalRIC_ID(asn::GlobalRIC_ID {
                        plmn_identity: asn::PLMN_Identity(m.ric.plmn.to_vec()),
                        ric_id: asn::GlobalRIC_IDRic_ID(bits(m.ric.ric_id as u64, 20)),
                    })
                ),
            ];
            if let Some(a) = &m.accepted {
                v.push(entry!(
                    E2setupResponseProtocolIEs_Entry,
                    E2setupResponseProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_ACCEPTED,
                    REJECT,
                    Id_RANfunctionsAccepted(revisions_to(a))
                ));
            }
            if let Some(r) = &m.rejected {
                v.push(entry!(
                    E2setupResponseProtocolIEs_Entry,
                    E2setupResponseProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_REJECTED,
                    REJECT,
                    Id_RANfunctionsRejected(rejected_to(r))
                ));
            }
            v.push(entry!(
                E2setupResponseProtocolIEs_Entry,
                E2setupResponseProtocolIEs_EntryValue,
                ie::COMPONENT_CONFIG_ADDITION_ACK,
                REJECT,
                Id_E2nodeComponentConfigAdditionAck(component_acks_to(&m.components))
            ));
            successful(
                p::E2_SETUP,
                REJECT,
                S::Id_E2setup(asn::E2setupResponse {
                    protocol_i_es: asn::E2setupResponseProtocolIEs(v),
                }),
            )
        }
        E2apPdu::E2SetupFailure(m) => {
            let mut v = vec![
                entry!(
                    E2setupFailureProtocolIEs_Entry,
                    E2setupFailureProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(m.transaction))
                ),
                entry!(
                    E2setupFailureProtocolIEs_Entry,
                    E2setupFailureProtocolIEs_EntryValue,
                    ie::CAUSE,
                    IGNORE,
                    Id_Cause(m.cause.clone())
                ),
            ];
            if let Some(t) = m.time_to_wait {
                v.push(entry!(
                    E2setupFailureProtocolIEs_Entry,
                    E2setupFailureProtocolIEs_EntryValue,
                    ie::TIME_TO_WAIT,
                    IGNORE,
                    Id_TimeToWait(asn::TimeToWait(t))
                ));
            }
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    E2setupFailureProtocolIEs_Entry,
                    E2setupFailureProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            unsuccessful(
                p::E2_SETUP,
                REJECT,
                U::Id_E2setup(asn::E2setupFailure {
                    protocol_i_es: asn::E2setupFailureProtocolIEs(v),
                }),
            )
        }
        E2apPdu::SubscriptionRequest(m) => {
            let v = vec![
                entry!(
                    RICsubscriptionRequestProtocolIEs_Entry,
                    RICsubscriptionRequestProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICsubscriptionRequestProtocolIEs_Entry,
                    RICsubscriptionRequestProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
                entry!(
                    RICsubscriptionRequestProtocolIEs_Entry,
                    RICsubscriptionRequestProtocolIEs_EntryValue,
                    ie::SUBSCRIPTION_DETAILS,
                    REJECT,
                    Id_RICsubscriptionDetails(asn::RICsubscriptionDetails {
                        ric_event_trigger_definition: asn::RICeventTriggerDefinition(
                            m.event_trigger.clone()
                        ),
                        ric_action_to_be_setup_list: asn::RICactions_ToBeSetup_List(
                            m.actions.iter().map(action_to).collect(),
                        ),
                    })
                ),
            ];
            initiating(
                p::RIC_SUBSCRIPTION,
                REJECT,
                I::Id_RICsubscription(asn::RICsubscriptionRequest {
                    protocol_i_es: asn::RICsubscriptionRequestProtocolIEs(v),
                }),
            )
        }
        E2apPdu::SubscriptionResponse(m) => {
            let admitted = asn::RICaction_Admitted_List(
                m.admitted
                    .iter()
                    .map(|id| asn::RICaction_Admitted_List_Entry {
                        id: asn::ProtocolIE_ID(ie::ACTION_ADMITTED_ITEM),
                        criticality: asn::Criticality(IGNORE),
                        value: asn::RICaction_Admitted_List_EntryValue::Id_RICaction_Admitted_Item(
                            asn::RICaction_Admitted_Item {
                                ric_action_id: asn::RICactionID(*id),
                            },
                        ),
                    })
                    .collect(),
            );
            let mut v = vec![
                entry!(
                    RICsubscriptionResponseProtocolIEs_Entry,
                    RICsubscriptionResponseProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICsubscriptionResponseProtocolIEs_Entry,
                    RICsubscriptionResponseProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
                entry!(
                    RICsubscriptionResponseProtocolIEs_Entry,
                    RICsubscriptionResponseProtocolIEs_EntryValue,
                    ie::ACTIONS_ADMITTED,
                    REJECT,
                    Id_RICactions_Admitted(admitted)
                ),
            ];
            if let Some(na) = &m.not_admitted {
                let list = asn::RICaction_NotAdmitted_List(
                    na.iter()
                        .map(|(id, cause)| asn::RICaction_NotAdmitted_List_Entry {
                            id: asn::ProtocolIE_ID(ie::ACTION_NOT_ADMITTED_ITEM),
                            criticality: asn::Criticality(IGNORE),
                            value: asn::RICaction_NotAdmitted_List_EntryValue::Id_RICaction_NotAdmitted_Item(
                                asn::RICaction_NotAdmitted_Item {
                                    ric_action_id: asn::RICactionID(*id),
                                    cause: cause.clone(),
                                },
                            ),
                        })
                        .collect(),
                );
                v.push(entry!(
                    RICsubscriptionResponseProtocolIEs_Entry,
                    RICsubscriptionResponseProtocolIEs_EntryValue,
                    ie::ACTIONS_NOT_ADMITTED,
                    REJECT,
                    Id_RICactions_NotAdmitted(list)
                ));
            }
            successful(
                p::RIC_SUBSCRIPTION,
                REJECT,
                S::Id_RICsubscription(asn::RICsubscriptionResponse {
                    protocol_i_es: asn::RICsubscriptionResponseProtocolIEs(v),
                }),
            )
        }
        E2apPdu::SubscriptionFailure(m) => {
            let mut v = vec![
                entry!(
                    RICsubscriptionFailureProtocolIEs_Entry,
                    RICsubscriptionFailureProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICsubscriptionFailureProtocolIEs_Entry,
                    RICsubscriptionFailureProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
                entry!(
                    RICsubscriptionFailureProtocolIEs_Entry,
                    RICsubscriptionFailureProtocolIEs_EntryValue,
                    ie::CAUSE,
                    REJECT,
                    Id_Cause(m.cause.clone())
                ),
            ];
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    RICsubscriptionFailureProtocolIEs_Entry,
                    RICsubscriptionFailureProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            unsuccessful(
                p::RIC_SUBSCRIPTION,
                REJECT,
                U::Id_RICsubscription(asn::RICsubscriptionFailure {
                    protocol_i_es: asn::RICsubscriptionFailureProtocolIEs(v),
                }),
            )
        }
        E2apPdu::SubscriptionDeleteRequest(m) => {
            let v = vec![
                entry!(
                    RICsubscriptionDeleteRequestProtocolIEs_Entry,
                    RICsubscriptionDeleteRequestProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICsubscriptionDeleteRequestProtocolIEs_Entry,
                    RICsubscriptionDeleteRequestProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
            ];
            initiating(
                p::RIC_SUBSCRIPTION_DELETE,
                REJECT,
                I::Id_RICsubscriptionDelete(asn::RICsubscriptionDeleteRequest {
                    protocol_i_es: asn::RICsubscriptionDeleteRequestProtocolIEs(v),
                }),
            )
        }
        E2apPdu::SubscriptionDeleteResponse(m) => {
            let v = vec![
                entry!(
                    RICsubscriptionDeleteResponseProtocolIEs_Entry,
                    RICsubscriptionDeleteResponseProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICsubscriptionDeleteResponseProtocolIEs_Entry,
                    RICsubscriptionDeleteResponseProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
            ];
            successful(
                p::RIC_SUBSCRIPTION_DELETE,
                REJECT,
                S::Id_RICsubscriptionDelete(asn::RICsubscriptionDeleteResponse {
                    protocol_i_es: asn::RICsubscriptionDeleteResponseProtocolIEs(v),
                }),
            )
        }
        E2apPdu::SubscriptionDeleteFailure(m) => {
            let mut v = vec![
                entry!(
                    RICsubscriptionDeleteFailureProtocolIEs_Entry,
                    RICsubscriptionDeleteFailureProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICsubscriptionDeleteFailureProtocolIEs_Entry,
                    RICsubscriptionDeleteFailureProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
                entry!(
                    RICsubscriptionDeleteFailureProtocolIEs_Entry,
                    RICsubscriptionDeleteFailureProtocolIEs_EntryValue,
                    ie::CAUSE,
                    IGNORE,
                    Id_Cause(m.cause.clone())
                ),
            ];
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    RICsubscriptionDeleteFailureProtocolIEs_Entry,
                    RICsubscriptionDeleteFailureProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            unsuccessful(
                p::RIC_SUBSCRIPTION_DELETE,
                REJECT,
                U::Id_RICsubscriptionDelete(asn::RICsubscriptionDeleteFailure {
                    protocol_i_es: asn::RICsubscriptionDeleteFailureProtocolIEs(v),
                }),
            )
        }
        E2apPdu::Indication(m) => {
            let mut v = vec![
                entry!(
                    RICindicationProtocolIEs_Entry,
                    RICindicationProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICindicationProtocolIEs_Entry,
                    RICindicationProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
                entry!(
                    RICindicationProtocolIEs_Entry,
                    RICindicationProtocolIEs_EntryValue,
                    ie::ACTION_ID,
                    REJECT,
                    Id_RICactionID(asn::RICactionID(m.action))
                ),
            ];
            if let Some(sn) = m.sn {
                v.push(entry!(
                    RICindicationProtocolIEs_Entry,
                    RICindicationProtocolIEs_EntryValue,
                    ie::INDICATION_SN,
                    REJECT,
                    Id_RICindicationSN(asn::RICindicationSN(sn))
                ));
            }
            v.push(entry!(
                RICindicationProtocolIEs_Entry,
                RICindicationProtocolIEs_EntryValue,
                ie::INDICATION_TYPE,
                REJECT,
                Id_RICindicationType(asn::RICindicationType(match m.kind {
                    IndicationType::Report => asn::RICindicationType::REPORT,
                    IndicationType::Insert => asn::RICindicationType::INSERT,
                }))
            ));
            v.push(entry!(
                RICindicationProtocolIEs_Entry,
                RICindicationProtocolIEs_EntryValue,
                ie::INDICATION_HEADER,
                REJECT,
                Id_RICindicationHeader(asn::RICindicationHeader(m.header.clone()))
            ));
            v.push(entry!(
                RICindicationProtocolIEs_Entry,
                RICindicationProtocolIEs_EntryValue,
                ie::INDICATION_MESSAGE,
                REJECT,
                Id_RICindicationMessage(asn::RICindicationMessage(m.message.clone()))
            ));
            if let Some(c) = &m.call_process_id {
                v.push(entry!(
                    RICindicationProtocolIEs_Entry,
                    RICindicationProtocolIEs_EntryValue,
                    ie::CALL_PROCESS_ID,
                    REJECT,
                    Id_RICcallProcessID(asn::RICcallProcessID(c.clone()))
                ));
            }
            initiating(
                p::RIC_INDICATION,
                IGNORE,
                I::Id_RICindication(asn::RICindication {
                    protocol_i_es: asn::RICindicationProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ControlRequest(m) => {
            let mut v = vec![
                entry!(
                    RICcontrolRequestProtocolIEs_Entry,
                    RICcontrolRequestProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICcontrolRequestProtocolIEs_Entry,
                    RICcontrolRequestProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
            ];
            if let Some(c) = &m.call_process_id {
                v.push(entry!(
                    RICcontrolRequestProtocolIEs_Entry,
                    RICcontrolRequestProtocolIEs_EntryValue,
                    ie::CALL_PROCESS_ID,
                    REJECT,
                    Id_RICcallProcessID(asn::RICcallProcessID(c.clone()))
                ));
            }
            v.push(entry!(
                RICcontrolRequestProtocolIEs_Entry,
                RICcontrolRequestProtocolIEs_EntryValue,
                ie::CONTROL_HEADER,
                REJECT,
                Id_RICcontrolHeader(asn::RICcontrolHeader(m.header.clone()))
            ));
            v.push(entry!(
                RICcontrolRequestProtocolIEs_Entry,
                RICcontrolRequestProtocolIEs_EntryValue,
                ie::CONTROL_MESSAGE,
                REJECT,
                Id_RICcontrolMessage(asn::RICcontrolMessage(m.message.clone()))
            ));
            if let Some(ack) = m.ack_request {
                v.push(entry!(
                    RICcontrolRequestProtocolIEs_Entry,
                    RICcontrolRequestProtocolIEs_EntryValue,
                    ie::CONTROL_ACK_REQUEST,
                    REJECT,
                    Id_RICcontrolAckRequest(asn::RICcontrolAckRequest(ack as u8))
                ));
            }
            initiating(
                p::RIC_CONTROL,
                REJECT,
                I::Id_RICcontrol(asn::RICcontrolRequest {
                    protocol_i_es: asn::RICcontrolRequestProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ControlAcknowledge(m) => {
            let mut v = vec![
                entry!(
                    RICcontrolAcknowledgeProtocolIEs_Entry,
                    RICcontrolAcknowledgeProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICcontrolAcknowledgeProtocolIEs_Entry,
                    RICcontrolAcknowledgeProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
            ];
            if let Some(c) = &m.call_process_id {
                v.push(entry!(
                    RICcontrolAcknowledgeProtocolIEs_Entry,
                    RICcontrolAcknowledgeProtocolIEs_EntryValue,
                    ie::CALL_PROCESS_ID,
                    REJECT,
                    Id_RICcallProcessID(asn::RICcallProcessID(c.clone()))
                ));
            }
            if let Some(o) = &m.outcome {
                v.push(entry!(
                    RICcontrolAcknowledgeProtocolIEs_Entry,
                    RICcontrolAcknowledgeProtocolIEs_EntryValue,
                    ie::CONTROL_OUTCOME,
                    REJECT,
                    Id_RICcontrolOutcome(asn::RICcontrolOutcome(o.clone()))
                ));
            }
            successful(
                p::RIC_CONTROL,
                REJECT,
                S::Id_RICcontrol(asn::RICcontrolAcknowledge {
                    protocol_i_es: asn::RICcontrolAcknowledgeProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ControlFailure(m) => {
            let mut v = vec![
                entry!(
                    RICcontrolFailureProtocolIEs_Entry,
                    RICcontrolFailureProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(m.request))
                ),
                entry!(
                    RICcontrolFailureProtocolIEs_Entry,
                    RICcontrolFailureProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(m.function))
                ),
            ];
            if let Some(c) = &m.call_process_id {
                v.push(entry!(
                    RICcontrolFailureProtocolIEs_Entry,
                    RICcontrolFailureProtocolIEs_EntryValue,
                    ie::CALL_PROCESS_ID,
                    REJECT,
                    Id_RICcallProcessID(asn::RICcallProcessID(c.clone()))
                ));
            }
            v.push(entry!(
                RICcontrolFailureProtocolIEs_Entry,
                RICcontrolFailureProtocolIEs_EntryValue,
                ie::CAUSE,
                IGNORE,
                Id_Cause(m.cause.clone())
            ));
            if let Some(o) = &m.outcome {
                v.push(entry!(
                    RICcontrolFailureProtocolIEs_Entry,
                    RICcontrolFailureProtocolIEs_EntryValue,
                    ie::CONTROL_OUTCOME,
                    REJECT,
                    Id_RICcontrolOutcome(asn::RICcontrolOutcome(o.clone()))
                ));
            }
            unsuccessful(
                p::RIC_CONTROL,
                REJECT,
                U::Id_RICcontrol(asn::RICcontrolFailure {
                    protocol_i_es: asn::RICcontrolFailureProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ErrorIndication(m) => {
            let mut v = Vec::new();
            if let Some(t) = m.transaction {
                v.push(entry!(
                    ErrorIndicationProtocolIEs_Entry,
                    ErrorIndicationProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(t))
                ));
            }
            if let Some(r) = m.request {
                v.push(entry!(
                    ErrorIndicationProtocolIEs_Entry,
                    ErrorIndicationProtocolIEs_EntryValue,
                    ie::REQUEST_ID,
                    REJECT,
                    Id_RICrequestID(rid_to(r))
                ));
            }
            if let Some(f) = m.function {
                v.push(entry!(
                    ErrorIndicationProtocolIEs_Entry,
                    ErrorIndicationProtocolIEs_EntryValue,
                    ie::RAN_FUNCTION_ID,
                    REJECT,
                    Id_RANfunctionID(asn::RANfunctionID(f))
                ));
            }
            if let Some(c) = &m.cause {
                v.push(entry!(
                    ErrorIndicationProtocolIEs_Entry,
                    ErrorIndicationProtocolIEs_EntryValue,
                    ie::CAUSE,
                    IGNORE,
                    Id_Cause(c.clone())
                ));
            }
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    ErrorIndicationProtocolIEs_Entry,
                    ErrorIndicationProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            initiating(
                p::ERROR_INDICATION,
                IGNORE,
                I::Id_ErrorIndication(asn::ErrorIndication {
                    protocol_i_es: asn::ErrorIndicationProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ResetRequest(m) => {
            let v = vec![
                entry!(
                    ResetRequestProtocolIEs_Entry,
                    ResetRequestProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(m.transaction))
                ),
                entry!(
                    ResetRequestProtocolIEs_Entry,
                    ResetRequestProtocolIEs_EntryValue,
                    ie::CAUSE,
                    IGNORE,
                    Id_Cause(m.cause.clone())
                ),
            ];
            initiating(
                p::RESET,
                REJECT,
                I::Id_Reset(asn::ResetRequest {
                    protocol_i_es: asn::ResetRequestProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ResetResponse(m) => {
            let mut v = vec![entry!(
                ResetResponseProtocolIEs_Entry,
                ResetResponseProtocolIEs_EntryValue,
                ie::TRANSACTION_ID,
                REJECT,
                Id_TransactionID(asn::TransactionID(m.transaction))
            )];
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    ResetResponseProtocolIEs_Entry,
                    ResetResponseProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            successful(
                p::RESET,
                REJECT,
                S::Id_Reset(asn::ResetResponse {
                    protocol_i_es: asn::ResetResponseProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ServiceUpdate(m) => {
            let mut v = vec![entry!(
                RICserviceUpdateProtocolIEs_Entry,
                RICserviceUpdateProtocolIEs_EntryValue,
                ie::TRANSACTION_ID,
                REJECT,
                Id_TransactionID(asn::TransactionID(m.transaction))
            )];
            if let Some(a) = &m.added {
                v.push(entry!(
                    RICserviceUpdateProtocolIEs_Entry,
                    RICserviceUpdateProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_ADDED,
                    REJECT,
                    Id_RANfunctionsAdded(functions_to(a))
                ));
            }
            if let Some(a) = &m.modified {
                v.push(entry!(
                    RICserviceUpdateProtocolIEs_Entry,
                    RICserviceUpdateProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_MODIFIED,
                    REJECT,
                    Id_RANfunctionsModified(functions_to(a))
                ));
            }
            if let Some(d) = &m.deleted {
                v.push(entry!(
                    RICserviceUpdateProtocolIEs_Entry,
                    RICserviceUpdateProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_DELETED,
                    REJECT,
                    Id_RANfunctionsDeleted(revisions_to(d))
                ));
            }
            initiating(
                p::RIC_SERVICE_UPDATE,
                REJECT,
                I::Id_RICserviceUpdate(asn::RICserviceUpdate {
                    protocol_i_es: asn::RICserviceUpdateProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ServiceUpdateAcknowledge(m) => {
            let mut v = vec![entry!(
                RICserviceUpdateAcknowledgeProtocolIEs_Entry,
                RICserviceUpdateAcknowledgeProtocolIEs_EntryValue,
                ie::TRANSACTION_ID,
                REJECT,
                Id_TransactionID(asn::TransactionID(m.transaction))
            )];
            if let Some(a) = &m.accepted {
                v.push(entry!(
                    RICserviceUpdateAcknowledgeProtocolIEs_Entry,
                    RICserviceUpdateAcknowledgeProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_ACCEPTED,
                    REJECT,
                    Id_RANfunctionsAccepted(revisions_to(a))
                ));
            }
            if let Some(r) = &m.rejected {
                v.push(entry!(
                    RICserviceUpdateAcknowledgeProtocolIEs_Entry,
                    RICserviceUpdateAcknowledgeProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_REJECTED,
                    REJECT,
                    Id_RANfunctionsRejected(rejected_to(r))
                ));
            }
            successful(
                p::RIC_SERVICE_UPDATE,
                REJECT,
                S::Id_RICserviceUpdate(asn::RICserviceUpdateAcknowledge {
                    protocol_i_es: asn::RICserviceUpdateAcknowledgeProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ServiceUpdateFailure(m) => {
            let mut v = vec![
                entry!(
                    RICserviceUpdateFailureProtocolIEs_Entry,
                    RICserviceUpdateFailureProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(m.transaction))
                ),
                entry!(
                    RICserviceUpdateFailureProtocolIEs_Entry,
                    RICserviceUpdateFailureProtocolIEs_EntryValue,
                    ie::CAUSE,
                    REJECT,
                    Id_Cause(m.cause.clone())
                ),
            ];
            if let Some(t) = m.time_to_wait {
                v.push(entry!(
                    RICserviceUpdateFailureProtocolIEs_Entry,
                    RICserviceUpdateFailureProtocolIEs_EntryValue,
                    ie::TIME_TO_WAIT,
                    IGNORE,
                    Id_TimeToWait(asn::TimeToWait(t))
                ));
            }
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    RICserviceUpdateFailureProtocolIEs_Entry,
                    RICserviceUpdateFailureProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            unsuccessful(
                p::RIC_SERVICE_UPDATE,
                REJECT,
                U::Id_RICserviceUpdate(asn::RICserviceUpdateFailure {
                    protocol_i_es: asn::RICserviceUpdateFailureProtocolIEs(v),
                }),
            )
        }
        E2apPdu::ServiceQuery(m) => {
            let mut v = vec![entry!(
                RICserviceQueryProtocolIEs_Entry,
                RICserviceQueryProtocolIEs_EntryValue,
                ie::TRANSACTION_ID,
                REJECT,
                Id_TransactionID(asn::TransactionID(m.transaction))
            )];
            if let Some(a) = &m.accepted {
                v.push(entry!(
                    RICserviceQueryProtocolIEs_Entry,
                    RICserviceQueryProtocolIEs_EntryValue,
                    ie::RAN_FUNCTIONS_ACCEPTED,
                    REJECT,
                    Id_RANfunctionsAccepted(revisions_to(a))
                ));
            }
            initiating(
                p::RIC_SERVICE_QUERY,
                IGNORE,
                I::Id_RICserviceQuery(asn::RICserviceQuery {
                    protocol_i_es: asn::RICserviceQueryProtocolIEs(v),
                }),
            )
        }
        E2apPdu::E2RemovalRequest { transaction } => {
            let v = vec![entry!(
                E2RemovalRequestProtocolIEs_Entry,
                E2RemovalRequestProtocolIEs_EntryValue,
                ie::TRANSACTION_ID,
                REJECT,
                Id_TransactionID(asn::TransactionID(*transaction))
            )];
            initiating(
                p::E2_REMOVAL,
                REJECT,
                I::Id_E2removal(asn::E2RemovalRequest {
                    protocol_i_es: asn::E2RemovalRequestProtocolIEs(v),
                }),
            )
        }
        E2apPdu::E2RemovalResponse(m) => {
            let mut v = vec![entry!(
                E2RemovalResponseProtocolIEs_Entry,
                E2RemovalResponseProtocolIEs_EntryValue,
                ie::TRANSACTION_ID,
                REJECT,
                Id_TransactionID(asn::TransactionID(m.transaction))
            )];
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    E2RemovalResponseProtocolIEs_Entry,
                    E2RemovalResponseProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            successful(
                p::E2_REMOVAL,
                REJECT,
                S::Id_E2removal(asn::E2RemovalResponse {
                    protocol_i_es: asn::E2RemovalResponseProtocolIEs(v),
                }),
            )
        }
        E2apPdu::E2RemovalFailure(m) => {
            let mut v = vec![
                entry!(
                    E2RemovalFailureProtocolIEs_Entry,
                    E2RemovalFailureProtocolIEs_EntryValue,
                    ie::TRANSACTION_ID,
                    REJECT,
                    Id_TransactionID(asn::TransactionID(m.transaction))
                ),
                entry!(
                    E2RemovalFailureProtocolIEs_Entry,
                    E2RemovalFailureProtocolIEs_EntryValue,
                    ie::CAUSE,
                    IGNORE,
                    Id_Cause(m.cause.clone())
                ),
            ];
            if let Some(d) = &m.diagnostics {
                v.push(entry!(
                    E2RemovalFailureProtocolIEs_Entry,
                    E2RemovalFailureProtocolIEs_EntryValue,
                    ie::CRITICALITY_DIAGNOSTICS,
                    IGNORE,
                    Id_CriticalityDiagnostics(d.clone())
                ));
            }
            unsuccessful(
                p::E2_REMOVAL,
                REJECT,
                U::Id_E2removal(asn::E2RemovalFailure {
                    protocol_i_es: asn::E2RemovalFailureProtocolIEs(v),
                }),
            )
        }
    }
}

// ----------------------------------------------------------------- decode

/// Converts a decoded generated PDU into an [`E2apPdu`], checking that
/// every mandatory IE is present exactly once.
pub fn from_asn(pdu: asn::E2AP_PDU) -> Result<E2apPdu, DecodeError> {
    use asn::InitiatingMessageValue as I;
    use asn::SuccessfulOutcomeValue as S;
    use asn::UnsuccessfulOutcomeValue as U;
    Ok(match pdu {
        asn::E2AP_PDU::InitiatingMessage(m) => match m.value {
            I::Id_E2setup(x) => {
                const M: &str = "E2 Setup Request";
                let (mut t, mut node, mut f, mut c) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::E2setupRequestProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_GlobalE2node_ID(v) => set(&mut node, v, M, "GlobalE2node-ID")?,
                        V::Id_RANfunctionsAdded(v) => {
                            set(&mut f, functions_from(v), M, "RANfunctionsAdded")?
                        }
                        V::Id_E2nodeComponentConfigAddition(v) => set(
                            &mut c,
                            components_from(v),
                            M,
                            "E2nodeComponentConfigAddition",
                        )?,
                    }
                }
                E2apPdu::E2SetupRequest(E2SetupRequest {
                    transaction: need(t, M, "TransactionID")?,
                    node: need(node, M, "GlobalE2node-ID")?,
                    functions: need(f, M, "RANfunctionsAdded")?,
                    components: need(c, M, "E2nodeComponentConfigAddition")?,
                })
            }
            I::Id_RICsubscription(x) => {
                const M: &str = "RIC Subscription Request";
                let (mut r, mut f, mut d) = (None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICsubscriptionRequestProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_RICsubscriptionDetails(v) => {
                            set(&mut d, v, M, "RICsubscriptionDetails")?
                        }
                    }
                }
                let d = need(d, M, "RICsubscriptionDetails")?;
                E2apPdu::SubscriptionRequest(SubscriptionRequest {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    event_trigger: d.ric_event_trigger_definition.0,
                    actions: d
                        .ric_action_to_be_setup_list
                        .0
                        .into_iter()
                        .map(action_from)
                        .collect::<Result<_, _>>()?,
                })
            }
            I::Id_RICsubscriptionDelete(x) => {
                const M: &str = "RIC Subscription Delete Request";
                let (mut r, mut f) = (None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICsubscriptionDeleteRequestProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                    }
                }
                E2apPdu::SubscriptionDeleteRequest(SubscriptionDelete {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                })
            }
            I::Id_RICindication(x) => {
                const M: &str = "RIC Indication";
                let (mut r, mut f, mut a, mut sn, mut k, mut h, mut msg, mut cp) =
                    (None, None, None, None, None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICindicationProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_RICactionID(v) => set(&mut a, v.0, M, "RICactionID")?,
                        V::Id_RICindicationSN(v) => set(&mut sn, v.0, M, "RICindicationSN")?,
                        V::Id_RICindicationType(v) => set(&mut k, v.0, M, "RICindicationType")?,
                        V::Id_RICindicationHeader(v) => set(&mut h, v.0, M, "RICindicationHeader")?,
                        V::Id_RICindicationMessage(v) => {
                            set(&mut msg, v.0, M, "RICindicationMessage")?
                        }
                        V::Id_RICcallProcessID(v) => set(&mut cp, v.0, M, "RICcallProcessID")?,
                    }
                }
                E2apPdu::Indication(Indication {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    action: need(a, M, "RICactionID")?,
                    sn,
                    kind: match need(k, M, "RICindicationType")? {
                        asn::RICindicationType::REPORT => IndicationType::Report,
                        asn::RICindicationType::INSERT => IndicationType::Insert,
                        other => {
                            return Err(DecodeError::Invalid {
                                message: M,
                                what: format!("indication type {other} unknown"),
                            })
                        }
                    },
                    header: need(h, M, "RICindicationHeader")?,
                    message: need(msg, M, "RICindicationMessage")?,
                    call_process_id: cp,
                })
            }
            I::Id_RICcontrol(x) => {
                const M: &str = "RIC Control Request";
                let (mut r, mut f, mut cp, mut h, mut msg, mut ack) =
                    (None, None, None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICcontrolRequestProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_RICcallProcessID(v) => set(&mut cp, v.0, M, "RICcallProcessID")?,
                        V::Id_RICcontrolHeader(v) => set(&mut h, v.0, M, "RICcontrolHeader")?,
                        V::Id_RICcontrolMessage(v) => set(&mut msg, v.0, M, "RICcontrolMessage")?,
                        V::Id_RICcontrolAckRequest(v) => set(
                            &mut ack,
                            v.0 == asn::RICcontrolAckRequest::ACK,
                            M,
                            "RICcontrolAckRequest",
                        )?,
                    }
                }
                E2apPdu::ControlRequest(ControlRequest {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    call_process_id: cp,
                    header: need(h, M, "RICcontrolHeader")?,
                    message: need(msg, M, "RICcontrolMessage")?,
                    ack_request: ack,
                })
            }
            I::Id_ErrorIndication(x) => {
                const M: &str = "Error Indication";
                let mut out = ErrorIndication::default();
                for e in x.protocol_i_es.0 {
                    use asn::ErrorIndicationProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => {
                            set(&mut out.transaction, v.0, M, "TransactionID")?
                        }
                        V::Id_RICrequestID(v) => {
                            set(&mut out.request, rid_from(&v), M, "RICrequestID")?
                        }
                        V::Id_RANfunctionID(v) => set(&mut out.function, v.0, M, "RANfunctionID")?,
                        V::Id_Cause(v) => set(&mut out.cause, v, M, "Cause")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut out.diagnostics, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::ErrorIndication(out)
            }
            I::Id_Reset(x) => {
                const M: &str = "Reset Request";
                let (mut t, mut c) = (None, None);
                for e in x.protocol_i_es.0 {
                    use asn::ResetRequestProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                    }
                }
                E2apPdu::ResetRequest(ResetRequest {
                    transaction: need(t, M, "TransactionID")?,
                    cause: need(c, M, "Cause")?,
                })
            }
            I::Id_RICserviceUpdate(x) => {
                const M: &str = "RIC Service Update";
                let (mut t, mut a, mut m2, mut d) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICserviceUpdateProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_RANfunctionsAdded(v) => {
                            set(&mut a, functions_from(v), M, "RANfunctionsAdded")?
                        }
                        V::Id_RANfunctionsModified(v) => {
                            set(&mut m2, functions_from(v), M, "RANfunctionsModified")?
                        }
                        V::Id_RANfunctionsDeleted(v) => {
                            set(&mut d, revisions_from(v), M, "RANfunctionsDeleted")?
                        }
                    }
                }
                E2apPdu::ServiceUpdate(ServiceUpdate {
                    transaction: need(t, M, "TransactionID")?,
                    added: a,
                    modified: m2,
                    deleted: d,
                })
            }
            I::Id_RICserviceQuery(x) => {
                const M: &str = "RIC Service Query";
                let (mut t, mut a) = (None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICserviceQueryProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_RANfunctionsAccepted(v) => {
                            set(&mut a, revisions_from(v), M, "RANfunctionsAccepted")?
                        }
                    }
                }
                E2apPdu::ServiceQuery(ServiceQuery {
                    transaction: need(t, M, "TransactionID")?,
                    accepted: a,
                })
            }
            I::Id_E2removal(x) => {
                const M: &str = "E2 Removal Request";
                let mut t = None;
                for e in x.protocol_i_es.0 {
                    use asn::E2RemovalRequestProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                    }
                }
                E2apPdu::E2RemovalRequest {
                    transaction: need(t, M, "TransactionID")?,
                }
            }
            I::Id_RICsubscriptionDeleteRequired(_) => {
                return Err(DecodeError::Unsupported(
                    procedure::RIC_SUBSCRIPTION_DELETE_REQUIRED,
                ))
            }
        },
        asn::E2AP_PDU::SuccessfulOutcome(m) => match m.value {
            S::Id_E2setup(x) => {
                const M: &str = "E2 Setup Response";
                let (mut t, mut ric, mut acc, mut rej, mut comp) = (None, None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::E2setupResponseProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_GlobalRIC_ID(v) => set(
                            &mut ric,
                            GlobalRicId {
                                plmn: plmn(&v.plmn_identity.0, M)?,
                                ric_id: bits_value(&v.ric_id.0) as u32,
                            },
                            M,
                            "GlobalRIC-ID",
                        )?,
                        V::Id_RANfunctionsAccepted(v) => {
                            set(&mut acc, revisions_from(v), M, "RANfunctionsAccepted")?
                        }
                        V::Id_RANfunctionsRejected(v) => {
                            set(&mut rej, rejected_from(v), M, "RANfunctionsRejected")?
                        }
                        V::Id_E2nodeComponentConfigAdditionAck(v) => set(
                            &mut comp,
                            component_acks_from(v),
                            M,
                            "E2nodeComponentConfigAdditionAck",
                        )?,
                    }
                }
                E2apPdu::E2SetupResponse(E2SetupResponse {
                    transaction: need(t, M, "TransactionID")?,
                    ric: need(ric, M, "GlobalRIC-ID")?,
                    accepted: acc,
                    rejected: rej,
                    components: need(comp, M, "E2nodeComponentConfigAdditionAck")?,
                })
            }
            S::Id_RICsubscription(x) => {
                const M: &str = "RIC Subscription Response";
                let (mut r, mut f, mut a, mut na) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICsubscriptionResponseProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_RICactions_Admitted(v) => set(
                            &mut a,
                            v.0.into_iter()
                                .map(|e| {
                                    let asn::RICaction_Admitted_List_EntryValue::Id_RICaction_Admitted_Item(i) =
                                        e.value;
                                    i.ric_action_id.0
                                })
                                .collect(),
                            M,
                            "RICactions-Admitted",
                        )?,
                        V::Id_RICactions_NotAdmitted(v) => set(
                            &mut na,
                            v.0.into_iter()
                                .map(|e| {
                                    let asn::RICaction_NotAdmitted_List_EntryValue::Id_RICaction_NotAdmitted_Item(
                                        i,
                                    ) = e.value;
                                    (i.ric_action_id.0, i.cause)
                                })
                                .collect(),
                            M,
                            "RICactions-NotAdmitted",
                        )?,
                    }
                }
                E2apPdu::SubscriptionResponse(SubscriptionResponse {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    admitted: need(a, M, "RICactions-Admitted")?,
                    not_admitted: na,
                })
            }
            S::Id_RICsubscriptionDelete(x) => {
                const M: &str = "RIC Subscription Delete Response";
                let (mut r, mut f) = (None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICsubscriptionDeleteResponseProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                    }
                }
                E2apPdu::SubscriptionDeleteResponse(SubscriptionDelete {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                })
            }
            S::Id_RICcontrol(x) => {
                const M: &str = "RIC Control Acknowledge";
                let (mut r, mut f, mut cp, mut o) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICcontrolAcknowledgeProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_RICcallProcessID(v) => set(&mut cp, v.0, M, "RICcallProcessID")?,
                        V::Id_RICcontrolOutcome(v) => set(&mut o, v.0, M, "RICcontrolOutcome")?,
                    }
                }
                E2apPdu::ControlAcknowledge(ControlAcknowledge {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    call_process_id: cp,
                    outcome: o,
                })
            }
            S::Id_Reset(x) => {
                const M: &str = "Reset Response";
                let (mut t, mut d) = (None, None);
                for e in x.protocol_i_es.0 {
                    use asn::ResetResponseProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::ResetResponse(ResetResponse {
                    transaction: need(t, M, "TransactionID")?,
                    diagnostics: d,
                })
            }
            S::Id_RICserviceUpdate(x) => {
                const M: &str = "RIC Service Update Acknowledge";
                let (mut t, mut a, mut r) = (None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICserviceUpdateAcknowledgeProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_RANfunctionsAccepted(v) => {
                            set(&mut a, revisions_from(v), M, "RANfunctionsAccepted")?
                        }
                        V::Id_RANfunctionsRejected(v) => {
                            set(&mut r, rejected_from(v), M, "RANfunctionsRejected")?
                        }
                    }
                }
                E2apPdu::ServiceUpdateAcknowledge(ServiceUpdateAcknowledge {
                    transaction: need(t, M, "TransactionID")?,
                    accepted: a,
                    rejected: r,
                })
            }
            S::Id_E2removal(x) => {
                const M: &str = "E2 Removal Response";
                let (mut t, mut d) = (None, None);
                for e in x.protocol_i_es.0 {
                    use asn::E2RemovalResponseProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::E2RemovalResponse(E2RemovalResponse {
                    transaction: need(t, M, "TransactionID")?,
                    diagnostics: d,
                })
            }
        },
        asn::E2AP_PDU::UnsuccessfulOutcome(m) => match m.value {
            U::Id_E2setup(x) => {
                const M: &str = "E2 Setup Failure";
                let (mut t, mut c, mut w, mut d) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::E2setupFailureProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                        V::Id_TimeToWait(v) => set(&mut w, v.0, M, "TimeToWait")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                        // The RIC's alternative address: tcran reconnects to
                        // the address it was given, so it ignores this IE.
                        V::Id_TNLinformation(_) => {}
                    }
                }
                E2apPdu::E2SetupFailure(E2SetupFailure {
                    transaction: need(t, M, "TransactionID")?,
                    cause: need(c, M, "Cause")?,
                    time_to_wait: w,
                    diagnostics: d,
                })
            }
            U::Id_RICsubscription(x) => {
                const M: &str = "RIC Subscription Failure";
                let (mut r, mut f, mut c, mut d) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICsubscriptionFailureProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::SubscriptionFailure(SubscriptionFailure {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    cause: need(c, M, "Cause")?,
                    diagnostics: d,
                })
            }
            U::Id_RICsubscriptionDelete(x) => {
                const M: &str = "RIC Subscription Delete Failure";
                let (mut r, mut f, mut c, mut d) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICsubscriptionDeleteFailureProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::SubscriptionDeleteFailure(SubscriptionDeleteFailure {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    cause: need(c, M, "Cause")?,
                    diagnostics: d,
                })
            }
            U::Id_RICcontrol(x) => {
                const M: &str = "RIC Control Failure";
                let (mut r, mut f, mut cp, mut c, mut o) = (None, None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICcontrolFailureProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_RICrequestID(v) => set(&mut r, rid_from(&v), M, "RICrequestID")?,
                        V::Id_RANfunctionID(v) => set(&mut f, v.0, M, "RANfunctionID")?,
                        V::Id_RICcallProcessID(v) => set(&mut cp, v.0, M, "RICcallProcessID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                        V::Id_RICcontrolOutcome(v) => set(&mut o, v.0, M, "RICcontrolOutcome")?,
                        // An extension IE of v2.03 that tcran neither sends nor needs.
                        V::Id_CriticalityDiagnostics(_) => {}
                    }
                }
                E2apPdu::ControlFailure(ControlFailure {
                    request: need(r, M, "RICrequestID")?,
                    function: need(f, M, "RANfunctionID")?,
                    call_process_id: cp,
                    cause: need(c, M, "Cause")?,
                    outcome: o,
                })
            }
            U::Id_RICserviceUpdate(x) => {
                const M: &str = "RIC Service Update Failure";
                let (mut t, mut c, mut w, mut d) = (None, None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::RICserviceUpdateFailureProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                        V::Id_TimeToWait(v) => set(&mut w, v.0, M, "TimeToWait")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::ServiceUpdateFailure(ServiceUpdateFailure {
                    transaction: need(t, M, "TransactionID")?,
                    cause: need(c, M, "Cause")?,
                    time_to_wait: w,
                    diagnostics: d,
                })
            }
            U::Id_E2removal(x) => {
                const M: &str = "E2 Removal Failure";
                let (mut t, mut c, mut d) = (None, None, None);
                for e in x.protocol_i_es.0 {
                    use asn::E2RemovalFailureProtocolIEs_EntryValue as V;
                    match e.value {
                        V::Id_TransactionID(v) => set(&mut t, v.0, M, "TransactionID")?,
                        V::Id_Cause(v) => set(&mut c, v, M, "Cause")?,
                        V::Id_CriticalityDiagnostics(v) => {
                            set(&mut d, v, M, "CriticalityDiagnostics")?
                        }
                    }
                }
                E2apPdu::E2RemovalFailure(E2RemovalFailure {
                    transaction: need(t, M, "TransactionID")?,
                    cause: need(c, M, "Cause")?,
                    diagnostics: d,
                })
            }
        },
    })
}

/// A gNB's GlobalE2node-ID (E2AP 9.2.6): PLMN identity and a gNB id of
/// `gnb_id_bits` (22..=32) bits, without the optional CU-UP/DU ids.
pub fn gnb_node_id(plmn: [u8; 3], gnb_id: u32, gnb_id_bits: u8) -> GlobalE2node_ID {
    GlobalE2node_ID::GNB(asn::GlobalE2node_gNB_ID {
        global_g_nb_id: asn::GlobalgNB_ID {
            plmn_id: asn::PLMN_Identity(plmn.to_vec()),
            gnb_id: asn::GNB_ID_Choice::Gnb_ID(asn::GNB_ID_Choice_gnb_ID(bits(
                gnb_id as u64,
                gnb_id_bits as usize,
            ))),
        },
        global_en_g_nb_id: None,
        gnb_cu_up_id: None,
        gnb_du_id: None,
    })
}

/// Cause `ricRequest: <value>` (E2AP 9.2.1).
pub fn ric_request_cause(value: u8) -> Cause {
    Cause::RicRequest(CauseRICrequest(value))
}

/// Cause `protocol: <value>` (E2AP 9.2.1).
pub fn protocol_cause(value: u8) -> Cause {
    Cause::Protocol(CauseProtocol(value))
}

/// A GlobalE2node-ID in one short line for logs and node lists: a gNB as
/// `gnb:<PLMN hex>:<gNB id>`, other node types by their type name.
pub fn node_id_string(id: &GlobalE2node_ID) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    match id {
        GlobalE2node_ID::GNB(g) => {
            let n = match &g.global_g_nb_id.gnb_id {
                asn::GNB_ID_Choice::Gnb_ID(b) => bits_value(&b.0),
            };
            let mut s = format!("gnb:{}:{n}", hex(&g.global_g_nb_id.plmn_id.0));
            if let Some(du) = &g.gnb_du_id {
                s.push_str(&format!(":du{}", du.0));
            }
            s
        }
        GlobalE2node_ID::En_gNB(_) => "en-gnb".into(),
        GlobalE2node_ID::Ng_eNB(_) => "ng-enb".into(),
        GlobalE2node_ID::ENB(_) => "enb".into(),
    }
}
