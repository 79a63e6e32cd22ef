//! E2AP v2.03 messages as plain Rust values, and their APER transfer syntax
//! (O-RAN.WG3.E2AP-v02.03 clause 9.4: BASIC-PER, aligned).
//!
//! [`E2apPdu`] is one PDU; [`encode`] and [`decode`] convert it to and from
//! bytes through the types that `build.rs` generates from
//! `asn1/e2ap-v02.03.asn` ([`crate::asn::e2ap`]).
//!
//! | file | what |
//! |---|---|
//! | `e2ap.rs` | the values (IEs of clause 9.2), the messages (clause 9.1), errors, `encode`/`decode` |
//! | `e2ap/bridge.rs` | one table of every message and its IEs, expanded to [`to_asn`] and [`from_asn`] |
//! | `e2ap/convert.rs` | the value conversions between the IEs here and the generated ones |
//! | `e2ap/codec.rs` | the RIC Indication's hand-written APER codec (the hot path) |
//!
//! Contract:
//! - `decode` never panics and never allocates more than a small multiple
//!   of its input (the APER decoder reads lengths before contents); a
//!   missing mandatory IE, a repeated IE or a procedure tcran does not
//!   implement is a [`DecodeError`] naming the message and the IE.
//! - `encode` writes the IEs in the order of the ASN.1 IE set, with the
//!   criticality the standard assigns to each (clause 9.3.4), so a PDU that
//!   a standard peer built decodes and re-encodes byte for byte (checked
//!   against FlexRIC's PDUs in `tests/integration/golden.rs`; the bytes of
//!   every message are recorded in `tests/data/e2ap-procedures.txt`,
//!   `tests/integration/procedures.rs`). An IE value outside its ASN.1
//!   range (e.g. a RAN function id above 4095) is an [`EncodeError`].
//! - The RIC Indication's fast paths ([`encode_indication`],
//!   [`decode_indication`]) give the same bytes and values as the bridge.
//! - Identifiers of the other structures that this layer does not model
//!   (GlobalE2node-ID, E2 node component ids, Cause, criticality
//!   diagnostics) are the generated ASN.1 types, re-exported here.

mod bridge;
mod codec;
mod convert;

pub use bridge::{from_asn, to_asn};
pub use codec::{decode_indication, encode_indication};
use convert::{bits, bits_value};

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
    #[allow(dead_code)] // an IE tcran reads and drops: in the table, never written
    pub const TNL_INFORMATION: u16 = 48;
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

impl ComponentConfigAck {
    /// The RIC's acceptance of one of the node's component configurations.
    pub fn accept(c: &ComponentConfig) -> ComponentConfigAck {
        ComponentConfigAck {
            interface: c.interface,
            id: c.id.clone(),
            success: true,
            failure_cause: None,
        }
    }
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

impl E2SetupRequest {
    /// The RIC `ric`'s response accepting every RAN function and component
    /// configuration of this request (E2AP 8.3.1.2).
    pub fn accept(&self, ric: GlobalRicId) -> E2SetupResponse {
        let accepted: Vec<RanFunctionRevision> = self
            .functions
            .iter()
            .map(|f| RanFunctionRevision {
                id: f.id,
                revision: f.revision,
            })
            .collect();
        E2SetupResponse {
            transaction: self.transaction,
            ric,
            accepted: (!accepted.is_empty()).then_some(accepted),
            rejected: None,
            components: self
                .components
                .iter()
                .map(ComponentConfigAck::accept)
                .collect(),
        }
    }
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

// ------------------------------------------------------- encode and decode

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

// ----------------------------------------------------------------- helpers

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
