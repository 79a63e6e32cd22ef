//! Every PDU FlexRIC sent or received (tests/data, see its README) decodes
//! and re-encodes byte for byte, both through the generated ASN.1 types and
//! through tcran's message layer.

use crate::common;

use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use tcran_e2::asn::e2ap::E2AP_PDU;
use tcran_e2::e2ap::{self, E2apPdu};

#[test]
fn the_copy_of_the_vectors_matches_the_shared_data_when_present() {
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/e2/flexric-golden-vectors.jsonl"
    );
    match std::fs::read_to_string(shared) {
        Ok(text) => assert_eq!(
            text,
            common::VECTORS,
            "tests/data copy differs from {shared}"
        ),
        Err(_) => eprintln!("{shared} not present; using the copy in tests/data"),
    }
    assert_eq!(common::vectors().len(), 30);
}

#[test]
fn every_flexric_pdu_round_trips_through_the_generated_types() {
    for v in common::vectors() {
        let mut d = PerCodecData::from_slice_aper(&v.bytes);
        let pdu = E2AP_PDU::aper_decode(&mut d)
            .unwrap_or_else(|e| panic!("line {} ({}): {e}", v.line, v.message));
        let mut out = PerCodecData::new_aper();
        pdu.aper_encode(&mut out).expect("encodes");
        assert_eq!(out.into_bytes(), v.bytes, "line {} ({})", v.line, v.message);
    }
}

/// FlexRIC gives the items of two lists criticality `reject` where the IE
/// sets of E2AP 9.3.4 say `ignore` (RANfunction-Item in E2 Setup Request,
/// RICaction-ToBeSetup-Item in RIC Subscription Request); tcran's encoder
/// writes the standard value. This puts the standard value into a decoded
/// FlexRIC PDU so that the rest can be compared byte for byte.
fn with_standard_item_criticality(pdu: &mut E2AP_PDU) -> usize {
    use tcran_e2::asn::e2ap as a;
    let mut changed = 0;
    let mut fix = |c: &mut a::Criticality| {
        if c.0 != a::Criticality::IGNORE {
            c.0 = a::Criticality::IGNORE;
            changed += 1;
        }
    };
    if let E2AP_PDU::InitiatingMessage(m) = pdu {
        match &mut m.value {
            a::InitiatingMessageValue::Id_E2setup(x) => {
                for ie in &mut x.protocol_i_es.0 {
                    if let a::E2setupRequestProtocolIEs_EntryValue::Id_RANfunctionsAdded(l) =
                        &mut ie.value
                    {
                        l.0.iter_mut().for_each(|e| fix(&mut e.criticality));
                    }
                }
            }
            a::InitiatingMessageValue::Id_RICsubscription(x) => {
                for ie in &mut x.protocol_i_es.0 {
                    if let a::RICsubscriptionRequestProtocolIEs_EntryValue::Id_RICsubscriptionDetails(d) = &mut ie.value {
                        d.ric_action_to_be_setup_list.0.iter_mut().for_each(|e| fix(&mut e.criticality));
                    }
                }
            }
            _ => {}
        }
    }
    changed
}

#[test]
fn every_flexric_pdu_round_trips_through_the_message_layer() {
    let mut normalised = 0;
    for v in common::vectors() {
        let pdu = e2ap::decode(&v.bytes)
            .unwrap_or_else(|e| panic!("line {} ({}): {e}", v.line, v.message));
        let name = v.message.to_lowercase();
        let expected = match &pdu {
            E2apPdu::E2SetupRequest(_) => "e2setuprequest",
            E2apPdu::E2SetupResponse(_) => "e2setupresponse",
            E2apPdu::SubscriptionRequest(_) => "ricsubscriptionrequest",
            E2apPdu::SubscriptionResponse(_) => "ricsubscriptionresponse",
            E2apPdu::SubscriptionDeleteRequest(_) => "ricsubscriptiondeleterequest",
            E2apPdu::SubscriptionDeleteResponse(_) => "ricsubscriptiondeleteresponse",
            E2apPdu::Indication(_) => "ricindication",
            E2apPdu::ControlRequest(_) => "riccontrolrequest",
            E2apPdu::ControlAcknowledge(_) => "riccontrolacknowledge",
            other => panic!("line {}: unexpected {}", v.line, other.name()),
        };
        assert_eq!(name, expected, "line {}", v.line);

        let mut raw = E2AP_PDU::aper_decode(&mut PerCodecData::from_slice_aper(&v.bytes)).unwrap();
        let changed = with_standard_item_criticality(&mut raw);
        normalised += changed;
        let mut standard = PerCodecData::new_aper();
        raw.aper_encode(&mut standard).unwrap();
        let standard = standard.into_bytes();
        // Only the criticality bits of the items changed: one byte each.
        let differing = standard
            .iter()
            .zip(&v.bytes)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            (standard.len(), differing),
            (v.bytes.len(), changed),
            "line {}",
            v.line
        );
        assert_eq!(
            e2ap::encode(&pdu).expect("encodes"),
            standard,
            "line {} ({})",
            v.line,
            v.message
        );
    }
    // 8 RAN functions in each of the 2 setup requests, 1 action in each of
    // the 2 subscription requests.
    assert_eq!(normalised, 18);
}

#[test]
fn flexric_subscription_request_has_the_documented_fields() {
    // FLEXRIC-INTEROP.md step 2: requestor 1021, instance 0, RAN function
    // 146, trigger = u32 10 ms, one report action 0 without definition.
    let v = common::vectors()
        .into_iter()
        .find(|v| v.message == "RICsubscriptionRequest")
        .unwrap();
    let E2apPdu::SubscriptionRequest(s) = e2ap::decode(&v.bytes).unwrap() else {
        panic!()
    };
    assert_eq!(
        (s.request.requestor, s.request.instance, s.function),
        (1021, 0, 146)
    );
    assert_eq!(s.event_trigger, [10, 0, 0, 0]);
    assert_eq!(s.actions.len(), 1);
    assert_eq!(
        (s.actions[0].id, s.actions[0].kind),
        (0, e2ap::ActionType::Report)
    );
    assert_eq!(s.actions[0].definition, None);
}

#[test]
fn flexric_setup_request_offers_function_146_with_its_definition_and_oid() {
    let v = common::vectors()
        .into_iter()
        .find(|v| v.message == "E2setupRequest")
        .unwrap();
    let E2apPdu::E2SetupRequest(s) = e2ap::decode(&v.bytes).unwrap() else {
        panic!()
    };
    let tc = s
        .functions
        .iter()
        .find(|f| f.id == 146)
        .expect("TC function");
    assert_eq!(tc.definition, b"TC_STATS_V0");
    assert_eq!(tc.revision, 1);
    assert_eq!(tc.oid, "0.0.0.0.0.0.0.0.1.146.0");
    assert!(!s.components.is_empty());
}

#[test]
fn truncated_and_corrupted_pdus_are_errors_not_panics() {
    for v in common::vectors() {
        for cut in 0..v.bytes.len() {
            let _ = e2ap::decode(&v.bytes[..cut]);
        }
        let mut b = v.bytes.clone();
        for i in 0..b.len() {
            b[i] ^= 0xff;
            let _ = e2ap::decode(&b);
            b[i] ^= 0xff;
        }
    }
}
