//! The value conversions of the bridge: one [`Put`] (domain value to the
//! generated ASN.1 value) and one [`Get`] (back, or what is invalid) per
//! pair of types, chosen by type: the table in `bridge.rs` names an IE's
//! ASN.1 variant and its domain field, and the types of both pick the
//! conversion. IE definitions: E2AP v02.03 clause 9.2; their ASN.1 and the
//! criticality of list items: clause 9.3.

use super::{
    ie, Action, ActionType, ComponentConfig, ComponentConfigAck, GlobalRicId, IndicationType,
    RanFunction, RanFunctionRevision, RicRequestId, SubsequentAction, IGNORE, REJECT,
};
use crate::asn::e2ap::{self as asn, ies, Cause};
use bitvec::{order::Msb0, slice::BitSlice, vec::BitVec};

/// A domain value (by reference) as the ASN.1 value `A`.
pub(super) trait Put<A> {
    fn put(self) -> A;
}

/// The ASN.1 value `A` as a domain value, or what is wrong with it.
pub(super) trait Get<A>: Sized {
    fn get(a: A) -> Result<Self, String>;
}

/// Types tcran keeps as generated (Cause, CriticalityDiagnostics,
/// GlobalE2node-ID, E2 node component id).
impl<T: Clone> Put<T> for &T {
    fn put(self) -> T {
        self.clone()
    }
}

impl<T> Get<T> for T {
    fn get(a: T) -> Result<T, String> {
        Ok(a)
    }
}

/// Generated newtypes around a domain value.
macro_rules! newtypes {
    ($($d:ty => $($a:ident),+;)*) => {$($(
        impl Put<asn::$a> for &$d {
            fn put(self) -> asn::$a {
                asn::$a(self.to_owned())
            }
        }
        impl Get<asn::$a> for $d {
            fn get(a: asn::$a) -> Result<Self, String> {
                Ok(a.0)
            }
        }
    )+)*};
}

newtypes! {
    u8 => TransactionID, RICactionID, TimeToWait;
    u16 => RANfunctionID, RICindicationSN;
    Vec<u8> => RICindicationHeader, RICindicationMessage, RICcallProcessID, RICcontrolHeader,
        RICcontrolMessage, RICcontrolOutcome, RICeventTriggerDefinition;
}

/// Lists of single containers (`X_List`): each item in its container with
/// the item IE's id and criticality (E2AP 9.3.4), converted by the item's
/// own `Put`/`Get`.
macro_rules! lists {
    ($($d:ty => $list:ident: $id:ident $crit:ident $var:ident;)*) => {$(
        impl Put<asn::$list> for &Vec<$d> {
            fn put(self) -> asn::$list {
                asn::$list(
                    self.iter()
                        .map(|d| ies::$list::Entry {
                            id: asn::ProtocolIE_ID(ie::$id),
                            criticality: asn::Criticality($crit),
                            value: ies::$list::Value::$var(d.put()),
                        })
                        .collect(),
                )
            }
        }
        impl Get<asn::$list> for Vec<$d> {
            fn get(a: asn::$list) -> Result<Self, String> {
                a.0.into_iter()
                    .map(|e| {
                        let ies::$list::Value::$var(item) = e.value;
                        Get::get(item)
                    })
                    .collect()
            }
        }
    )*};
}

lists! {
    RanFunction => RANfunctions_List: RAN_FUNCTION_ITEM IGNORE Id_RANfunction_Item;
    RanFunctionRevision => RANfunctionsID_List: RAN_FUNCTION_ID_ITEM IGNORE Id_RANfunctionID_Item;
    (u16, Cause) => RANfunctionsIDcause_List:
        RAN_FUNCTION_IE_CAUSE_ITEM IGNORE Id_RANfunctionIEcause_Item;
    Action => RICactions_ToBeSetup_List:
        ACTION_TO_BE_SETUP_ITEM IGNORE Id_RICaction_ToBeSetup_Item;
    u8 => RICaction_Admitted_List: ACTION_ADMITTED_ITEM IGNORE Id_RICaction_Admitted_Item;
    (u8, Cause) => RICaction_NotAdmitted_List:
        ACTION_NOT_ADMITTED_ITEM IGNORE Id_RICaction_NotAdmitted_Item;
    ComponentConfig => E2nodeComponentConfigAddition_List:
        COMPONENT_CONFIG_ADDITION_ITEM REJECT Id_E2nodeComponentConfigAddition_Item;
    ComponentConfigAck => E2nodeComponentConfigAdditionAck_List:
        COMPONENT_CONFIG_ADDITION_ACK_ITEM REJECT Id_E2nodeComponentConfigAdditionAck_Item;
}

/// Both directions of one conversion: `(domain, ASN.1) { d => ASN.1 } { a => domain }`.
macro_rules! both {
    ($(($d:ty, $a:ty) { $dv:ident => $put:expr } { $av:ident => $get:expr })*) => {$(
        impl Put<$a> for &$d {
            fn put(self) -> $a {
                let $dv = self;
                $put
            }
        }
        impl Get<$a> for $d {
            fn get($av: $a) -> Result<Self, String> {
                $get
            }
        }
    )*};
}

both! {
    (RicRequestId, asn::RICrequestID) {
        r => asn::RICrequestID {
            ric_requestor_id: asn::RICrequestIDRicRequestorID(r.requestor),
            ric_instance_id: asn::RICrequestIDRicInstanceID(r.instance),
        }
    } {
        r => Ok(RicRequestId {
            requestor: r.ric_requestor_id.0,
            instance: r.ric_instance_id.0,
        })
    }

    (GlobalRicId, asn::GlobalRIC_ID) {
        r => asn::GlobalRIC_ID {
            plmn_identity: asn::PLMN_Identity(r.plmn.to_vec()),
            ric_id: asn::GlobalRIC_IDRic_ID(bits(r.ric_id as u64, 20)),
        }
    } {
        r => Ok(GlobalRicId {
            plmn: r.plmn_identity.0.as_slice().try_into().map_err(|_| {
                format!("PLMN identity of {} octets (3 expected)", r.plmn_identity.0.len())
            })?,
            ric_id: bits_value(&r.ric_id.0) as u32,
        })
    }

    (IndicationType, asn::RICindicationType) {
        k => asn::RICindicationType(match k {
            IndicationType::Report => asn::RICindicationType::REPORT,
            IndicationType::Insert => asn::RICindicationType::INSERT,
        })
    } {
        k => match k.0 {
            asn::RICindicationType::REPORT => Ok(IndicationType::Report),
            asn::RICindicationType::INSERT => Ok(IndicationType::Insert),
            other => Err(format!("indication type {other} unknown")),
        }
    }

    // RICcontrolAckRequest: `false` = noAck, `true` = ack.
    (bool, asn::RICcontrolAckRequest) {
        ack => asn::RICcontrolAckRequest(*ack as u8)
    } {
        a => Ok(a.0 == asn::RICcontrolAckRequest::ACK)
    }

    (RanFunction, asn::RANfunction_Item) {
        f => asn::RANfunction_Item {
            ran_function_id: asn::RANfunctionID(f.id),
            ran_function_definition: asn::RANfunctionDefinition(f.definition.clone()),
            ran_function_revision: asn::RANfunctionRevision(f.revision),
            ran_function_oid: asn::RANfunctionOID(f.oid.clone()),
        }
    } {
        f => Ok(RanFunction {
            id: f.ran_function_id.0,
            definition: f.ran_function_definition.0,
            revision: f.ran_function_revision.0,
            oid: f.ran_function_oid.0,
        })
    }

    (RanFunctionRevision, asn::RANfunctionID_Item) {
        f => asn::RANfunctionID_Item {
            ran_function_id: asn::RANfunctionID(f.id),
            ran_function_revision: asn::RANfunctionRevision(f.revision),
        }
    } {
        f => Ok(RanFunctionRevision {
            id: f.ran_function_id.0,
            revision: f.ran_function_revision.0,
        })
    }

    ((u16, Cause), asn::RANfunctionIDcause_Item) {
        r => asn::RANfunctionIDcause_Item {
            ran_function_id: asn::RANfunctionID(r.0),
            cause: r.1.clone(),
        }
    } {
        r => Ok((r.ran_function_id.0, r.cause))
    }

    (u8, asn::RICaction_Admitted_Item) {
        id => asn::RICaction_Admitted_Item { ric_action_id: asn::RICactionID(*id) }
    } {
        a => Ok(a.ric_action_id.0)
    }

    ((u8, Cause), asn::RICaction_NotAdmitted_Item) {
        r => asn::RICaction_NotAdmitted_Item {
            ric_action_id: asn::RICactionID(r.0),
            cause: r.1.clone(),
        }
    } {
        r => Ok((r.ric_action_id.0, r.cause))
    }

    (Action, asn::RICaction_ToBeSetup_Item) {
        a => asn::RICaction_ToBeSetup_Item {
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
        }
    } {
        a => Ok(Action {
            id: a.ric_action_id.0,
            kind: match a.ric_action_type.0 {
                asn::RICactionType::REPORT => ActionType::Report,
                asn::RICactionType::INSERT => ActionType::Insert,
                asn::RICactionType::POLICY => ActionType::Policy,
                other => {
                    return Err(format!(
                        "action type {other} is an extension tcran does not know"
                    ))
                }
            },
            definition: a.ric_action_definition.map(|d| d.0),
            subsequent: a.ric_subsequent_action.map(|s| SubsequentAction {
                wait: s.ric_subsequent_action_type.0 == asn::RICsubsequentActionType::WAIT,
                time_to_wait: s.ric_time_to_wait.0,
            }),
        })
    }

    (ComponentConfig, asn::E2nodeComponentConfigAddition_Item) {
        c => asn::E2nodeComponentConfigAddition_Item {
            e2node_component_interface_type: asn::E2nodeComponentInterfaceType(c.interface),
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
        }
    } {
        c => Ok(ComponentConfig {
            interface: c.e2node_component_interface_type.0,
            id: c.e2node_component_id,
            request_part: c.e2node_component_configuration.e2node_component_request_part.0,
            response_part: c.e2node_component_configuration.e2node_component_response_part.0,
        })
    }

    (ComponentConfigAck, asn::E2nodeComponentConfigAdditionAck_Item) {
        c => asn::E2nodeComponentConfigAdditionAck_Item {
            e2node_component_interface_type: asn::E2nodeComponentInterfaceType(c.interface),
            e2node_component_id: c.id.clone(),
            e2node_component_configuration_ack: asn::E2nodeComponentConfigurationAck {
                update_outcome: asn::E2nodeComponentConfigurationAckUpdateOutcome(
                    if c.success { 0 } else { 1 },
                ),
                failure_cause: c.failure_cause.clone(),
            },
        }
    } {
        c => Ok(ComponentConfigAck {
            interface: c.e2node_component_interface_type.0,
            id: c.e2node_component_id,
            success: c.e2node_component_configuration_ack.update_outcome.0 == 0,
            failure_cause: c.e2node_component_configuration_ack.failure_cause,
        })
    }
}

/// RIC Subscription Details (E2AP 9.1.1.1): the event trigger and the
/// actions, two fields of [`super::SubscriptionRequest`].
impl Put<asn::RICsubscriptionDetails> for (&Vec<u8>, &Vec<Action>) {
    fn put(self) -> asn::RICsubscriptionDetails {
        asn::RICsubscriptionDetails {
            ric_event_trigger_definition: self.0.put(),
            ric_action_to_be_setup_list: self.1.put(),
        }
    }
}

impl Get<asn::RICsubscriptionDetails> for (Vec<u8>, Vec<Action>) {
    fn get(d: asn::RICsubscriptionDetails) -> Result<Self, String> {
        Ok((
            Get::get(d.ric_event_trigger_definition)?,
            Get::get(d.ric_action_to_be_setup_list)?,
        ))
    }
}

/// `value` as a BIT STRING of `width` bits, most significant first.
pub(super) fn bits(value: u64, width: usize) -> BitVec<u8, Msb0> {
    (0..width).rev().map(|i| (value >> i) & 1 == 1).collect()
}

/// A BIT STRING's value, most significant bit first.
pub(super) fn bits_value(b: &BitSlice<u8, Msb0>) -> u64 {
    b.iter().fold(0u64, |acc, bit| acc << 1 | *bit as u64)
}
