//! E2SM-RC (RAN function 3) against the frames FlexRIC's RIC exchanged
//! with its emulated gNB for the stock `xapp_rc_moni` and `xapp_kpm_rc`
//! (tests/data/flexric-golden-vectors-all-sms.jsonl): every RC payload
//! decodes, and re-encodes to the captured bytes; tcran's RAN function
//! definition under FlexRIC's rules is the captured one byte for byte;
//! the stock xApps' subscription and control are read as they were meant.
//! On the gNB: a QoS flow mapping control moves a QFI's packets to the
//! other DRB, and a slice-level PRB quota changes two UEs' PRB split
//! within a second.

use crate::common::hex;
use crate::common::node::{node, packet, prb_split, run_until, two_saturated_ues};
use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use serde_json::Value;
use tcran_control::RanNode;
use tcran_core::{DrbId, Duration, Instant, Qfi, Rnti};
use tcran_e2::asn::e2sm_rc as r;
use tcran_e2::e2ap::{Action, ActionType};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::rc::{self, Dialect, Rc};
use tcran_e2::sm::{ControlOutcome, JobState, ServiceModel};
use tcran_gnb::Gnb;

const ALL_SMS: &str = include_str!("../data/flexric-golden-vectors-all-sms.jsonl");

/// Every RC frame of the capture.
fn rc_frames() -> Vec<Value> {
    ALL_SMS
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
        .filter(|f| f["sm"] == "RC")
        .collect()
}

/// The sm_payload of a frame (an object, or its Python repr in the capture).
fn payload(f: &Value) -> Option<Value> {
    match &f["sm_payload"] {
        Value::Object(_) => Some(f["sm_payload"].clone()),
        Value::String(s) => {
            let json = s.replace('\'', "\"").replace("None", "null");
            Some(serde_json::from_str(&json).expect("sm_payload"))
        }
        _ => None,
    }
}

/// A node with the DRBs `drbs` (RNTI, DRB), default pipelines.
fn fake(drbs: &[(u16, u8)]) -> FakeNode {
    let mut n = FakeNode::new();
    for &(rnti, drb) in drbs {
        n.add_drb(
            tcran_control::DrbKey::new(rnti, drb),
            &tcran_tc::PipelineConfig::single_queue(tcran_tc::queue::QueueKindConfig::Fifo(
                tcran_tc::queue::FifoConfig {},
            )),
        )
        .unwrap();
    }
    n
}

fn round_trip<T: AperCodec<Output = T> + std::fmt::Debug + PartialEq>(
    bytes: &[u8],
    what: &str,
) -> T {
    let v = T::aper_decode(&mut PerCodecData::from_slice_aper(bytes))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut out = PerCodecData::new_aper();
    v.aper_encode(&mut out).expect("encodes");
    let out = out.into_bytes();
    // hampi writes a REAL in the decimal form (X.690 8.5.8) where FlexRIC
    // (asn1c) writes the binary one: both decode to the same value, so a
    // message with REALs (the emulated node's random RAN parameter values;
    // tcran sends none) is held to the same value instead of the same bytes.
    if out != bytes && format!("{v:?}").contains("ValueReal") {
        let again = T::aper_decode(&mut PerCodecData::from_slice_aper(&out)).expect("decodes");
        assert_eq!(again, v, "{what}: the value survives re-encoding");
        return v;
    }
    if out != bytes {
        let i = out.iter().zip(bytes).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{what} re-encodes differently from byte {i}: {:02x?} / {:02x?}",
            &out[i.saturating_sub(4)..(i + 8).min(out.len())],
            &bytes[i.saturating_sub(4)..(i + 8).min(bytes.len())]
        );
    }
    v
}

/// FlexRIC's emulated gNB's RC RAN function definition, from its E2 Setup.
fn flexric_definition() -> Vec<u8> {
    let setup: Value = serde_json::from_str(ALL_SMS.lines().next().unwrap()).unwrap();
    let functions = match &setup["ran_functions"] {
        Value::String(s) => {
            serde_json::from_str::<Value>(&s.replace('\'', "\"").replace("None", "null")).unwrap()
        }
        v => v.clone(),
    };
    let rc = functions
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["ran_function_id"] == 3)
        .expect("RC in FlexRIC's E2 Setup");
    hex(rc["definition_hex"].as_str().unwrap())
}

#[test]
fn every_captured_rc_payload_decodes_and_re_encodes_byte_for_byte() {
    let frames = rc_frames();
    assert_eq!(frames.len(), 11, "RC frames in the capture");
    let mut checked = 0;
    for f in &frames {
        let Some(p) = payload(f) else { continue };
        let field = |k: &str| p[k].as_str().map(hex);
        if let Some(b) = field("event_trigger_hex") {
            round_trip::<r::E2SM_RC_EventTrigger>(&b, "event trigger");
            checked += 1;
        }
        for a in p["actions"].as_array().into_iter().flatten() {
            let b = hex(a["definition_hex"].as_str().unwrap());
            round_trip::<r::E2SM_RC_ActionDefinition>(&b, "action definition");
            checked += 1;
        }
        if let Some(b) = field("indication_header_hex") {
            round_trip::<r::E2SM_RC_IndicationHeader>(&b, "indication header");
            checked += 1;
        }
        if let Some(b) = field("indication_message_hex") {
            round_trip::<r::E2SM_RC_IndicationMessage>(&b, "indication message");
            checked += 1;
        }
        if let Some(b) = field("control_header_hex") {
            round_trip::<r::E2SM_RC_ControlHeader>(&b, "control header");
            checked += 1;
        }
        if let Some(b) = field("control_message_hex") {
            round_trip::<r::E2SM_RC_ControlMessage>(&b, "control message");
            checked += 1;
        }
        if let Some(b) = field("control_outcome_hex") {
            round_trip::<r::E2SM_RC_ControlOutcome>(&b, "control outcome");
            assert_eq!(b, rc::outcome(), "tcran's outcome is FlexRIC's node's");
            checked += 1;
        }
    }
    round_trip::<r::E2SM_RC_RANFunctionDefinition>(&flexric_definition(), "definition");
    assert_eq!(checked, 15);
}

#[test]
fn under_flexrics_rules_tcran_announces_rc_as_flexrics_node_does() {
    let mut m = Rc::default();
    m.dialect = Dialect::Flexric;
    let f = m.ran_function(&fake(&[(1, 1)]));
    assert_eq!((f.id, f.revision, f.oid.as_str()), (3, 1, rc::OID));
    assert_eq!(f.definition, flexric_definition());
}

#[test]
fn the_standard_definition_numbers_formats_from_1_and_adds_the_prb_quota() {
    let def = Rc::default().description();
    let control = def.ran_function_definition_control.unwrap();
    let styles: Vec<(i64, i64)> = control
        .ric_control_style_list
        .0
        .iter()
        .map(|s| {
            (
                s.ric_control_style_type.0,
                s.ric_control_header_format_type.0,
            )
        })
        .collect();
    assert_eq!(styles, [(1, 1), (2, 1)]);
    let quota = &control.ric_control_style_list.0[1]
        .ric_control_action_list
        .as_ref()
        .unwrap()
        .0[0];
    assert_eq!(quota.ric_control_action_id.0, 6);
    let report = &def
        .ran_function_definition_report
        .unwrap()
        .ric_report_style_list
        .0[0];
    assert_eq!(
        (
            report.ric_supported_event_trigger_style_type.0,
            report.ric_indication_message_format_type.0
        ),
        (4, 2)
    );
}

#[test]
fn xapp_rc_monis_subscription_reports_every_ue_connected_then_changes() {
    let sub = rc_frames()
        .into_iter()
        .find(|f| f["procedure"] == "RICsubscriptionRequest")
        .unwrap();
    let p = payload(&sub).unwrap();
    let trigger = hex(p["event_trigger_hex"].as_str().unwrap());
    let action = Action {
        id: 0,
        kind: ActionType::Report,
        definition: Some(hex(p["actions"][0]["definition_hex"].as_str().unwrap())),
        subsequent: None,
    };
    assert_eq!(trigger, rc::event_trigger(1), "condition 1, RRC state any");
    assert_eq!(
        action.definition.as_deref(),
        Some(&rc::action_definition()[..])
    );
    let m = Rc::default();
    let node = fake(&[(7, 1), (9, 1), (9, 2)]);
    let mut job = m.subscribe(&trigger, &action, &node).expect("admitted");
    assert_eq!(job.period, rc::POLL);
    let inds = m.indicate(&mut job.state, &node, Instant::ZERO);
    assert_eq!(inds.len(), 1);
    let (header, message) = &inds[0];
    let h = round_trip::<r::E2SM_RC_IndicationHeader>(header, "our header");
    assert!(format!("{h:?}").contains("RIC_EventTriggerCondition_ID(1)"));
    round_trip::<r::E2SM_RC_IndicationMessage>(message, "our message");
    let states = rc::decode_indication(message).unwrap();
    assert_eq!(
        states,
        [
            rc::RrcChange {
                rnti: Rnti(7),
                state: 0
            },
            rc::RrcChange {
                rnti: Rnti(9),
                state: 0
            }
        ]
    );
    // Nothing changed: nothing to report.
    assert!(m.indicate(&mut job.state, &node, Instant::ZERO).is_empty());
    // UE 7 leaves (idle), UE 8 attaches (connected).
    let later = fake(&[(8, 1), (9, 1)]);
    let (_, message) = &m.indicate(&mut job.state, &later, Instant::ZERO)[0];
    let states = rc::decode_indication(message).unwrap();
    assert_eq!(
        states,
        [
            rc::RrcChange {
                rnti: Rnti(7),
                state: 2
            },
            rc::RrcChange {
                rnti: Rnti(8),
                state: 0
            }
        ]
    );
    assert!(matches!(job.state, JobState::Rc(_)));
}

#[test]
fn xapp_kpm_rcs_control_is_read_as_qfi_10_onto_drb_5() {
    let ctrl = rc_frames()
        .into_iter()
        .find(|f| f["procedure"] == "RICcontrolRequest")
        .unwrap();
    let p = payload(&ctrl).unwrap();
    let header = hex(p["control_header_hex"].as_str().unwrap());
    let message = hex(p["control_message_hex"].as_str().unwrap());
    // The capture's UE id is the emulated node's (AMF UE NGAP ID beyond
    // an RNTI); the style, action and parameters are what tcran reads.
    let h: r::E2SM_RC_ControlHeader =
        r::E2SM_RC_ControlHeader::aper_decode(&mut PerCodecData::from_slice_aper(&header)).unwrap();
    let r::E2SM_RC_ControlHeaderRic_controlHeader_formats::ControlHeader_Format1(h) =
        h.ric_control_header_formats
    else {
        panic!("format 1")
    };
    assert_eq!((h.ric_style_type.0, h.ric_control_action_id.0), (1, 2));
    let (ours_h, ours_m) = rc::qos_flow_mapping_control(Rnti(1), DrbId(5), &[Qfi(10)]);
    assert_eq!(
        ours_m, message,
        "the stock xApp's message, DRB 5, QFI 10, DL"
    );
    let c = rc::decode_control(&ours_h, &message).unwrap();
    assert_eq!((c.rnti, c.style, c.action), (Rnti(1), 1, 2));
    // A node without DRB 5: refused with the reason (acknowledged under
    // FlexRIC's rules by the agent, counted).
    let mut node = fake(&[(1, 1)]);
    match Rc::default().control(&ours_h, &message, &mut node, Instant::ZERO) {
        ControlOutcome::Refused { refusal, .. } => {
            assert!(refusal.message.contains("no DRB 5"), "{}", refusal.message)
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn malformed_rc_bytes_are_refused_not_panicked_on() {
    let mut node = fake(&[(1, 1)]);
    let mut m = Rc::default();
    for bytes in [&[][..], &[0xff; 7][..], &[0x00, 0x02][..]] {
        assert!(matches!(
            m.control(bytes, bytes, &mut node, Instant::ZERO),
            ControlOutcome::Refused { .. }
        ));
        let action = Action {
            id: 0,
            kind: ActionType::Report,
            definition: Some(bytes.to_vec()),
            subsequent: None,
        };
        assert!(m.subscribe(bytes, &action, &node).is_err());
        assert!(rc::decode_indication(bytes).is_err());
    }
}

// --- the effect on the gNB --------------------------------------------

/// A 1000-byte packet of QoS flow `qfi` to UE `rnti`.
fn packet_of_flow(rnti: u16, id: u64, qfi: u8) -> tcran_core::Packet {
    let mut p = packet(rnti, id, 1000, Instant::ZERO);
    p.qfi = Qfi(qfi);
    p
}

#[test]
fn after_the_qos_flow_mapping_control_a_qfis_packets_take_the_other_drb() {
    let mut gnb = node(
        r#"
        [cell]
        bandwidth_mhz = 5
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        sdap = { rules = [{ qfi = 1, drb = 1 }, { qfi = 2, drb = 2 }] }
        [[ues.drbs]]
        id = 1
        [[ues.drbs]]
        id = 2
    "#,
    );
    let pdcp = |g: &Gnb, drb| {
        g.drb(Rnti(1), DrbId(drb))
            .unwrap()
            .counters()
            .pdcp_sdu_bytes
    };
    gnb.downlink(packet_of_flow(1, 0, 2), Instant::ZERO);
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(5));
    assert_eq!((pdcp(&gnb, 1), pdcp(&gnb, 2)), (0, 1000), "QFI 2 on DRB 2");

    let (h, m) = rc::qos_flow_mapping_control(Rnti(1), DrbId(1), &[Qfi(2)]);
    let t = Instant::ZERO + Duration::from_millis(5);
    let outcome = Rc::default().control(&h, &m, &mut gnb, t);
    assert!(
        matches!(outcome, ControlOutcome::Done { .. }),
        "{outcome:?}"
    );
    assert_eq!(gnb.sdap_drb(Rnti(1), Qfi(2)), Some(DrbId(1)));
    gnb.downlink(packet_of_flow(1, 1, 2), t);
    run_until(&mut gnb, t + Duration::from_millis(5));
    assert_eq!((pdcp(&gnb, 1), pdcp(&gnb, 2)), (1000, 1000), "now on DRB 1");

    // Refused, nothing changes: a DRB the UE does not have, a UE that
    // does not exist.
    let mut model = Rc::default();
    for (ue, drb) in [(1, 3), (4, 1)] {
        let (h, m) = rc::qos_flow_mapping_control(Rnti(ue), DrbId(drb), &[Qfi(2)]);
        assert!(matches!(
            model.control(&h, &m, &mut gnb, t),
            ControlOutcome::Refused { .. }
        ));
    }
    assert_eq!(gnb.sdap_drb(Rnti(1), Qfi(2)), Some(DrbId(1)));
}

#[test]
fn a_slice_level_prb_quota_changes_two_ues_prb_split_within_a_second() {
    let mut gnb = two_saturated_ues();
    let before = prb_split(&mut gnb, 0, 200);
    assert!(
        (before.0 - 12.5).abs() < 1.5 && (before.1 - 12.5).abs() < 1.5,
        "{before:?}"
    );

    let mut model = Rc::default();
    let t = Instant::ZERO + Duration::from_millis(200);
    let (h, m) = rc::slice_prb_quota_control(Rnti(1), 20);
    let outcome = model.control(&h, &m, &mut gnb, t);
    assert!(
        matches!(outcome, ControlOutcome::Done { .. }),
        "{outcome:?}"
    );
    // UE 1 at most 20 % of 25 PRBs, UE 2 the rest, over the next second.
    let after = prb_split(&mut gnb, 200, 1200);
    assert!(
        (after.0 - 5.0).abs() < 0.5 && (after.1 - 20.0).abs() < 0.5,
        "{after:?}"
    );

    // A max ratio of 100 % lifts the quota: round robin again.
    let (h, m) = rc::slice_prb_quota_control(Rnti(1), 100);
    assert!(matches!(
        model.control(
            &h,
            &m,
            &mut gnb,
            Instant::ZERO + Duration::from_millis(1200)
        ),
        ControlOutcome::Done { .. }
    ));
    assert!(gnb.slicing().unwrap().slices.is_empty());
    // Refused: a ratio beyond 100 %, a UE that does not exist.
    for (ue, ratio) in [(1, 101), (9, 10)] {
        let (h, m) = rc::slice_prb_quota_control(Rnti(ue), ratio);
        assert!(matches!(
            model.control(&h, &m, &mut gnb, Instant::ZERO),
            ControlOutcome::Refused { .. }
        ));
    }
}
