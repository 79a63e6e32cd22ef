//! Body of the fuzz target `xapp_termination` (fuzz/fuzz_targets/), also
//! run on stable `cargo test` by `tests/integration/fuzz_xapp.rs`. Panics on a
//! violated invariant.
//!
//! Invariants: whatever a node sends after E2 Setup (with a TC
//! subscription, a KPM subscription and a control outstanding), the
//! termination never panics, every PDU it sends is valid E2AP, a closed
//! association sends nothing more, and the SDK's decoders of what the node
//! sent (E2SM-TCRAN and KPM indications, control outcomes) never panic.

use crate::report;
use crate::termination::{ControlAnswer, Event, State, Termination};
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu, RanFunction};
use tcran_e2::sm::{e2sm_tcran, kpm};

/// An E2 Setup Request of gNB `gnb` offering `functions`, with the one
/// component configuration E2AP requires (SIZE(1..)), as tcran-e2's
/// agent sends it.
pub fn setup_request_of(gnb: u32, functions: Vec<RanFunction>) -> Vec<u8> {
    use tcran_e2::asn::e2ap as asn;
    e2ap::encode(&E2apPdu::E2SetupRequest(e2ap::E2SetupRequest {
        transaction: 1,
        node: e2ap::gnb_node_id([0x00, 0xf1, 0x10], gnb, 22),
        functions,
        components: vec![e2ap::ComponentConfig {
            interface: asn::E2nodeComponentInterfaceType::NG,
            id: e2ap::E2nodeComponentID::E2nodeComponentInterfaceTypeNG(
                asn::E2nodeComponentInterfaceNG {
                    amf_name: asn::AMFName("amf".into()),
                },
            ),
            request_part: b"NG setup request".to_vec(),
            response_part: b"NG setup response".to_vec(),
        }],
    }))
    .expect("a valid setup request")
}

/// The node's E2 Setup Request offering E2SM-TCRAN (246) and KPM (2).
pub fn setup_request() -> Vec<u8> {
    setup_request_of(
        1,
        vec![
            RanFunction {
                id: e2sm_tcran::DEFAULT_RAN_FUNCTION_ID,
                definition: Vec::new(),
                revision: 1,
                oid: e2sm_tcran::OID.into(),
            },
            RanFunction {
                id: kpm::RAN_FUNCTION_ID,
                definition: Vec::new(),
                revision: 1,
                oid: kpm::OID.into(),
            },
        ],
    )
}

fn check_out(t: &mut Termination) {
    while let Some(pdu) = t.poll_transmit() {
        if let Err(e) = e2ap::decode(&pdu) {
            panic!("the termination sent an invalid PDU ({e}): {pdu:02x?}");
        }
        if matches!(t.state(), State::Closed(_)) {
            panic!("a closed association sent a PDU");
        }
    }
}

/// A termination after E2 Setup with requests 1 (TC subscription), 2
/// (control) and 3 (KPM subscription) outstanding, fed frames cut from
/// `data` (a length byte, then that many bytes).
pub fn termination(data: &[u8]) {
    let mut t = Termination::new(e2ap::GlobalRicId {
        plmn: [0x00, 0xf1, 0x10],
        ric_id: 1,
    });
    t.handle(&setup_request());
    t.query_unanswered();
    let action = |definition| {
        vec![Action {
            id: 1,
            kind: ActionType::Report,
            definition: Some(definition),
            subsequent: None,
        }]
    };
    let tc_trigger = e2sm_tcran::event_trigger(&e2sm_tcran::Trigger::Periodic { period_ms: 1 });
    t.subscribe(
        e2sm_tcran::DEFAULT_RAN_FUNCTION_ID,
        tc_trigger,
        action(e2sm_tcran::action_definition(&[])),
    )
    .expect("ready after setup");
    let (h, m) = e2sm_tcran::control(
        tcran_control::DrbKey::new(1, 1),
        &tcran_tc::Change::Controls(Vec::new()),
    );
    t.control(e2sm_tcran::DEFAULT_RAN_FUNCTION_ID, h, m)
        .expect("ready after setup");
    t.subscribe(
        kpm::RAN_FUNCTION_ID,
        kpm::event_trigger(10),
        action(kpm::action_definition(1, &["DRB.UEThpDl"], 10)),
    )
    .expect("ready after setup");
    check_out(&mut t);
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        let len = (len as usize).min(tail.len());
        let (frame, tail) = tail.split_at(len);
        t.handle(frame);
        check_out(&mut t);
        while let Some(ev) = t.poll_event() {
            match ev {
                Event::Indication(ind) if ind.function == kpm::RAN_FUNCTION_ID => {
                    let _ = kpm::decode_indication(&ind.message);
                }
                Event::Indication(ind) => {
                    let _ = report::decode_tc(&ind.header, &ind.message);
                }
                Event::Control {
                    answer:
                        ControlAnswer::Acknowledged { outcome: Some(o) }
                        | ControlAnswer::Failed {
                            outcome: Some(o), ..
                        },
                    ..
                } => {
                    let _ = e2sm_tcran::decode_outcome(&o);
                }
                Event::FunctionsChanged { functions } => {
                    for f in functions {
                        let _ = report::tc_function_drbs(&f.definition);
                    }
                }
                _ => {}
            }
        }
        rest = tail;
    }
}
