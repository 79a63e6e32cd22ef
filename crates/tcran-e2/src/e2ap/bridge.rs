//! The bridge between [`E2apPdu`] and the generated E2AP types: the table
//! at the end of this file declares every message tcran implements (E2AP
//! v02.03 clause 9.1) once, with its IEs (clause 9.2); `bridge!` expands
//! it to both directions, [`to_asn`] and [`from_asn`], and to
//! [`E2apPdu::name`], so encoder and decoder cannot drift apart.
//!
//! A message: `Variant(Struct) "name" = kind CODE CRIT Id_Message(AsnType)
//! { IEs }`: the [`E2apPdu`] variant and its struct (none for a variant with
//! fields), the message's name as E2AP writes it, the E2AP-PDU alternative
//! (`initiating`, `successful`, `unsuccessful`: clause 9.3.3), the
//! procedure code and criticality (9.3.7) and the generated message. An
//! IE: `ID CRIT Id_Variant field: presence;`: the IE id (9.3.7), its
//! criticality in this message (the IE sets of 9.3.4), hampi's variant of
//! the message's IE set, and the struct field it carries (`(a, b)`: one IE
//! for two fields) with its presence:
//! - `mandatory`: always written; a message without it is
//!   [`DecodeError::MissingIe`];
//! - `optional`: an `Option` field, written when `Some`;
//! - `ignored` (field `_`): never written, accepted and dropped when read.
//!
//! `to_asn` writes the IEs in table order, the order of the ASN.1 IE set,
//! which is what standard peers (FlexRIC) send. `from_asn` takes them in
//! any order, each at most once ([`DecodeError::DuplicateIe`]); when
//! several mandatory IEs are missing, the error names the first in table
//! order. A field's value is converted by the `Put`/`Get` pair of its two
//! types (`convert.rs`). Every field of a struct is in the table, or the match
//! pattern `to_asn` destructures it with does not compile.

use super::convert::{Get, Put};
use super::*;
use crate::asn::e2ap::ies;

fn set<T>(
    slot: &mut Option<T>,
    v: T,
    message: &'static str,
    ie: &'static str,
) -> Result<(), DecodeError> {
    if slot.is_some() {
        return Err(DecodeError::DuplicateIe { message, ie });
    }
    *slot = Some(v);
    Ok(())
}

fn need<T>(slot: Option<T>, message: &'static str, ie: &'static str) -> Result<T, DecodeError> {
    slot.ok_or(DecodeError::MissingIe { message, ie })
}

fn get<A, D: Get<A>>(a: A, message: &'static str) -> Result<D, DecodeError> {
    D::get(a).map_err(|what| DecodeError::Invalid { message, what })
}

/// The bytes of `variant` without `Id_` and with `-` for `_`.
const fn asn1_name<const N: usize>(variant: &str) -> [u8; N] {
    let b = variant.as_bytes();
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        out[i] = if b[i + 3] == b'_' { b'-' } else { b[i + 3] };
        i += 1;
    }
    out
}

/// An IE's name in errors, from hampi's variant for it: the ASN.1 name of
/// its id without `id-` (`id-GlobalE2node-ID` is `Id_GlobalE2node_ID`,
/// named `GlobalE2node-ID`).
macro_rules! ie_name {
    ($var:ident) => {{
        const B: [u8; stringify!($var).len() - 3] = asn1_name(stringify!($var));
        const NAME: &str = match std::str::from_utf8(&B) {
            Ok(s) => s,
            Err(_) => panic!("an ASCII name"),
        };
        NAME
    }};
}

macro_rules! bridge {
    // The struct pattern or value of a message, from its fields.
    (@fields [$($shape:tt)*] [$($done:ident)*]) => { bridge!(@shape $($shape)* {$($done),*}) };
    (@fields $s:tt [$($done:ident)*] _ $($rest:tt)*) => {
        bridge!(@fields $s [$($done)*] $($rest)*)
    };
    (@fields $s:tt [$($done:ident)*] ($($f:ident),+) $($rest:tt)*) => {
        bridge!(@fields $s [$($done)* $($f)+] $($rest)*)
    };
    (@fields $s:tt [$($done:ident)*] $f:ident $($rest:tt)*) => {
        bridge!(@fields $s [$($done)* $f] $($rest)*)
    };
    (@shape $variant:ident ($ty:ident) {$($f:ident),*}) => { E2apPdu::$variant($ty { $($f),* }) };
    (@shape $variant:ident () {$($f:ident),*}) => { E2apPdu::$variant { $($f),* } };

    // The E2AP-PDU alternative (E2AP 9.3.3), as a value (`pdu`) or a pattern (`pat`).
    (@kind initiating $how:ident $($t:tt)*) => {
        bridge!(@$how InitiatingMessage InitiatingMessageValue $($t)*)
    };
    (@kind successful $how:ident $($t:tt)*) => {
        bridge!(@$how SuccessfulOutcome SuccessfulOutcomeValue $($t)*)
    };
    (@kind unsuccessful $how:ident $($t:tt)*) => {
        bridge!(@$how UnsuccessfulOutcome UnsuccessfulOutcomeValue $($t)*)
    };
    (@pdu $pdu:ident $value:ident $code:expr, $crit:expr, $m:ident($x:expr)) => {
        asn::E2AP_PDU::$pdu(asn::$pdu {
            procedure_code: asn::ProcedureCode($code),
            criticality: asn::Criticality($crit),
            value: asn::$value::$m($x),
        })
    };
    (@pat $pdu:ident $value:ident $m:ident($x:pat)) => {
        asn::E2AP_PDU::$pdu(asn::$pdu { value: asn::$value::$m($x), .. })
    };

    // Encode one IE into `$v`.
    (@put mandatory $v:ident $msg:ident $ie:ident $crit:ident $var:ident $field:tt) => {
        $v.push(ies::$msg::Entry {
            id: asn::ProtocolIE_ID(ie::$ie),
            criticality: asn::Criticality($crit),
            value: ies::$msg::Value::$var(Put::put($field)),
        })
    };
    (@put optional $v:ident $msg:ident $ie:ident $crit:ident $var:ident $field:ident) => {
        if let Some(x) = $field {
            bridge!(@put mandatory $v $msg $ie $crit $var x)
        }
    };
    (@put ignored $($t:tt)*) => {};

    // Decode: a slot per IE, filled once, then the field's value.
    (@slot ignored $var:ident) => {};
    (@slot $presence:ident $var:ident) => { let mut $var = None; };
    (@take ignored $var:ident $v:ident) => { drop($v) };
    (@take $presence:ident $var:ident $v:ident) => { set(&mut $var, $v, M, ie_name!($var))? };
    (@get mandatory $var:ident $field:tt) => {
        let $field = get(need($var, M, ie_name!($var))?, M)?;
    };
    (@get optional $var:ident $field:tt) => { let $field = $var.map(|v| get(v, M)).transpose()?; };
    (@get ignored $($t:tt)*) => {};

    ($(
        $variant:ident $(($ty:ident))? $name:literal =
            $kind:ident $code:ident $crit:ident $m:ident($msg:ident) {
            $($ie:ident $iecrit:ident $var:ident $field:tt: $presence:ident;)*
        }
    )*) => {
        impl E2apPdu {
            /// The message's name as E2AP writes it (for logs and errors).
            pub fn name(&self) -> &'static str {
                match self {
                    $(E2apPdu::$variant { .. } => $name,)*
                }
            }
        }

        /// Converts a PDU to its generated ASN.1 form.
        #[allow(clippy::vec_init_then_push)] // a push per IE of the table
        pub fn to_asn(pdu: &E2apPdu) -> asn::E2AP_PDU {
            match pdu {
                $(bridge!(@fields [$variant ($($ty)?)] [] $($field)*) => {
                    let mut v = Vec::new();
                    $(bridge!(@put $presence v $msg $ie $iecrit $var $field);)*
                    let m = asn::$msg { protocol_i_es: ies::$msg::Container(v) };
                    bridge!(@kind $kind pdu procedure::$code, $crit, $m(m))
                })*
            }
        }

        /// Converts a decoded generated PDU into an [`E2apPdu`], checking
        /// that every mandatory IE is present exactly once.
        #[allow(non_snake_case)] // a slot per IE, named after its variant
        pub fn from_asn(pdu: asn::E2AP_PDU) -> Result<E2apPdu, DecodeError> {
            match pdu {
                $(bridge!(@kind $kind pat $m(x)) => {
                    const M: &str = $name;
                    $(bridge!(@slot $presence $var);)*
                    for e in x.protocol_i_es.0 {
                        match e.value {
                            $(ies::$msg::Value::$var(v) => bridge!(@take $presence $var v),)*
                        }
                    }
                    $(bridge!(@get $presence $var $field);)*
                    Ok(bridge!(@fields [$variant ($($ty)?)] [] $($field)*))
                })*
                bridge!(@kind initiating pat Id_RICsubscriptionDeleteRequired(_)) => {
                    Err(DecodeError::Unsupported(procedure::RIC_SUBSCRIPTION_DELETE_REQUIRED))
                }
            }
        }
    };
}

bridge! {
    // E2 Setup (E2AP 9.1.2.2 - 9.1.2.4)
    E2SetupRequest(E2SetupRequest) "E2 Setup Request" =
        initiating E2_SETUP REJECT Id_E2setup(E2setupRequest) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        GLOBAL_E2NODE_ID REJECT Id_GlobalE2node_ID node: mandatory;
        RAN_FUNCTIONS_ADDED REJECT Id_RANfunctionsAdded functions: mandatory;
        COMPONENT_CONFIG_ADDITION REJECT Id_E2nodeComponentConfigAddition components: mandatory;
    }
    E2SetupResponse(E2SetupResponse) "E2 Setup Response" =
        successful E2_SETUP REJECT Id_E2setup(E2setupResponse) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        GLOBAL_RIC_ID REJECT Id_GlobalRIC_ID ric: mandatory;
        RAN_FUNCTIONS_ACCEPTED REJECT Id_RANfunctionsAccepted accepted: optional;
        RAN_FUNCTIONS_REJECTED REJECT Id_RANfunctionsRejected rejected: optional;
        COMPONENT_CONFIG_ADDITION_ACK REJECT Id_E2nodeComponentConfigAdditionAck
            components: mandatory;
    }
    E2SetupFailure(E2SetupFailure) "E2 Setup Failure" =
        unsuccessful E2_SETUP REJECT Id_E2setup(E2setupFailure) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        CAUSE IGNORE Id_Cause cause: mandatory;
        TIME_TO_WAIT IGNORE Id_TimeToWait time_to_wait: optional;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
        // The RIC's alternative address: tcran reconnects to the address it was given.
        TNL_INFORMATION IGNORE Id_TNLinformation _: ignored;
    }

    // RIC Subscription (E2AP 9.1.1.1 - 9.1.1.3)
    SubscriptionRequest(SubscriptionRequest) "RIC Subscription Request" =
        initiating RIC_SUBSCRIPTION REJECT Id_RICsubscription(RICsubscriptionRequest) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        SUBSCRIPTION_DETAILS REJECT Id_RICsubscriptionDetails (event_trigger, actions): mandatory;
    }
    SubscriptionResponse(SubscriptionResponse) "RIC Subscription Response" =
        successful RIC_SUBSCRIPTION REJECT Id_RICsubscription(RICsubscriptionResponse) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        ACTIONS_ADMITTED REJECT Id_RICactions_Admitted admitted: mandatory;
        ACTIONS_NOT_ADMITTED REJECT Id_RICactions_NotAdmitted not_admitted: optional;
    }
    SubscriptionFailure(SubscriptionFailure) "RIC Subscription Failure" =
        unsuccessful RIC_SUBSCRIPTION REJECT Id_RICsubscription(RICsubscriptionFailure) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        CAUSE REJECT Id_Cause cause: mandatory;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }

    // RIC Subscription Delete (E2AP 9.1.1.4 - 9.1.1.6)
    SubscriptionDeleteRequest(SubscriptionDelete) "RIC Subscription Delete Request" =
        initiating RIC_SUBSCRIPTION_DELETE REJECT Id_RICsubscriptionDelete(RICsubscriptionDeleteRequest) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
    }
    SubscriptionDeleteResponse(SubscriptionDelete) "RIC Subscription Delete Response" =
        successful RIC_SUBSCRIPTION_DELETE REJECT Id_RICsubscriptionDelete(RICsubscriptionDeleteResponse) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
    }
    SubscriptionDeleteFailure(SubscriptionDeleteFailure) "RIC Subscription Delete Failure" =
        unsuccessful RIC_SUBSCRIPTION_DELETE REJECT Id_RICsubscriptionDelete(RICsubscriptionDeleteFailure) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        CAUSE IGNORE Id_Cause cause: mandatory;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }

    // RIC Indication (E2AP 9.1.1.8; `encode` and `decode` take codec.rs's fast path first)
    Indication(Indication) "RIC Indication" =
        initiating RIC_INDICATION IGNORE Id_RICindication(RICindication) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        ACTION_ID REJECT Id_RICactionID action: mandatory;
        INDICATION_SN REJECT Id_RICindicationSN sn: optional;
        INDICATION_TYPE REJECT Id_RICindicationType kind: mandatory;
        INDICATION_HEADER REJECT Id_RICindicationHeader header: mandatory;
        INDICATION_MESSAGE REJECT Id_RICindicationMessage message: mandatory;
        CALL_PROCESS_ID REJECT Id_RICcallProcessID call_process_id: optional;
    }

    // RIC Control (E2AP 9.1.1.9 - 9.1.1.11)
    ControlRequest(ControlRequest) "RIC Control Request" =
        initiating RIC_CONTROL REJECT Id_RICcontrol(RICcontrolRequest) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        CALL_PROCESS_ID REJECT Id_RICcallProcessID call_process_id: optional;
        CONTROL_HEADER REJECT Id_RICcontrolHeader header: mandatory;
        CONTROL_MESSAGE REJECT Id_RICcontrolMessage message: mandatory;
        CONTROL_ACK_REQUEST REJECT Id_RICcontrolAckRequest ack_request: optional;
    }
    ControlAcknowledge(ControlAcknowledge) "RIC Control Acknowledge" =
        successful RIC_CONTROL REJECT Id_RICcontrol(RICcontrolAcknowledge) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        CALL_PROCESS_ID REJECT Id_RICcallProcessID call_process_id: optional;
        CONTROL_OUTCOME REJECT Id_RICcontrolOutcome outcome: optional;
    }
    ControlFailure(ControlFailure) "RIC Control Failure" =
        unsuccessful RIC_CONTROL REJECT Id_RICcontrol(RICcontrolFailure) {
        REQUEST_ID REJECT Id_RICrequestID request: mandatory;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: mandatory;
        CALL_PROCESS_ID REJECT Id_RICcallProcessID call_process_id: optional;
        CAUSE IGNORE Id_Cause cause: mandatory;
        CONTROL_OUTCOME REJECT Id_RICcontrolOutcome outcome: optional;
        // An extension IE of v2.03 that tcran neither sends nor needs.
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics _: ignored;
    }

    // Error Indication (E2AP 9.1.2.1)
    ErrorIndication(ErrorIndication) "Error Indication" =
        initiating ERROR_INDICATION IGNORE Id_ErrorIndication(ErrorIndication) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: optional;
        REQUEST_ID REJECT Id_RICrequestID request: optional;
        RAN_FUNCTION_ID REJECT Id_RANfunctionID function: optional;
        CAUSE IGNORE Id_Cause cause: optional;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }

    // Reset (E2AP 9.1.2.5 - 9.1.2.6)
    ResetRequest(ResetRequest) "Reset Request" =
        initiating RESET REJECT Id_Reset(ResetRequest) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        CAUSE IGNORE Id_Cause cause: mandatory;
    }
    ResetResponse(ResetResponse) "Reset Response" =
        successful RESET REJECT Id_Reset(ResetResponse) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }

    // RIC Service Update and Query (E2AP 9.1.2.7 - 9.1.2.10)
    ServiceUpdate(ServiceUpdate) "RIC Service Update" =
        initiating RIC_SERVICE_UPDATE REJECT Id_RICserviceUpdate(RICserviceUpdate) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        RAN_FUNCTIONS_ADDED REJECT Id_RANfunctionsAdded added: optional;
        RAN_FUNCTIONS_MODIFIED REJECT Id_RANfunctionsModified modified: optional;
        RAN_FUNCTIONS_DELETED REJECT Id_RANfunctionsDeleted deleted: optional;
    }
    ServiceUpdateAcknowledge(ServiceUpdateAcknowledge) "RIC Service Update Acknowledge" =
        successful RIC_SERVICE_UPDATE REJECT Id_RICserviceUpdate(RICserviceUpdateAcknowledge) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        RAN_FUNCTIONS_ACCEPTED REJECT Id_RANfunctionsAccepted accepted: optional;
        RAN_FUNCTIONS_REJECTED REJECT Id_RANfunctionsRejected rejected: optional;
    }
    ServiceUpdateFailure(ServiceUpdateFailure) "RIC Service Update Failure" =
        unsuccessful RIC_SERVICE_UPDATE REJECT Id_RICserviceUpdate(RICserviceUpdateFailure) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        CAUSE REJECT Id_Cause cause: mandatory;
        TIME_TO_WAIT IGNORE Id_TimeToWait time_to_wait: optional;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }
    ServiceQuery(ServiceQuery) "RIC Service Query" =
        initiating RIC_SERVICE_QUERY IGNORE Id_RICserviceQuery(RICserviceQuery) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        RAN_FUNCTIONS_ACCEPTED REJECT Id_RANfunctionsAccepted accepted: optional;
    }

    // E2 Removal (E2AP 9.1.2.18 - 9.1.2.20)
    E2RemovalRequest "E2 Removal Request" =
        initiating E2_REMOVAL REJECT Id_E2removal(E2RemovalRequest) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
    }
    E2RemovalResponse(E2RemovalResponse) "E2 Removal Response" =
        successful E2_REMOVAL REJECT Id_E2removal(E2RemovalResponse) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }
    E2RemovalFailure(E2RemovalFailure) "E2 Removal Failure" =
        unsuccessful E2_REMOVAL REJECT Id_E2removal(E2RemovalFailure) {
        TRANSACTION_ID REJECT Id_TransactionID transaction: mandatory;
        CAUSE IGNORE Id_Cause cause: mandatory;
        CRITICALITY_DIAGNOSTICS IGNORE Id_CriticalityDiagnostics diagnostics: optional;
    }
}
