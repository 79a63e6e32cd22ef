//! E2SM-TCRAN and FlexRIC TC for uplink DRBs (the UEs' pipelines).
//!
//! The wire: `tests/data/e2sm-tcran-vectors.json` holds messages that
//! address uplink DRBs (and one that carries a UE's handover margin,
//! `LowerLayerKpis`' extension addition), encoded by asn1tools (`scripts/e2sm-tcran-vectors.py`,
//! an APER codec written apart from hampi) from the module's ASN.1, where
//! the direction is `DrbRef`'s extension addition. tcran's encoders give
//! those bytes and its decoders (hampi's, and the fast ones of the RIC's
//! hot path) read them back. The model: a control addressed to the uplink
//! DRB changes that pipeline only, and an indication of every DRB carries
//! both directions.

use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use tcran_control::{Direction, DrbKey, RanNode};
use tcran_core::Instant;
use tcran_e2::asn::e2sm_tcran as t;
use tcran_e2::e2ap::{Action, ActionType};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::e2sm_tcran::{self as tcsm, TcOutcome, Trigger};
use tcran_e2::sm::{aper_fast, flexric_tc, tc_status, ControlOutcome, ServiceModel};
use tcran_tc::queue::{FifoConfig, QueueKindConfig};
use tcran_tc::{Change, Control, PipelineConfig};

const UE: u16 = 0x4601;

fn vector(what_starts: &str) -> Vec<u8> {
    let text = include_str!("../data/e2sm-tcran-vectors.json");
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    let v = doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["what"].as_str().unwrap().starts_with(what_starts))
        .unwrap_or_else(|| panic!("no vector {what_starts:?}"));
    let h = v["aper_hex"].as_str().unwrap();
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

fn hampi<T: AperCodec<Output = T>>(bytes: &[u8]) -> T {
    T::aper_decode(&mut PerCodecData::from_slice_aper(bytes)).expect("hampi decodes")
}

fn encode<T: AperCodec>(v: &T) -> Vec<u8> {
    let mut d = PerCodecData::new_aper();
    v.aper_encode(&mut d).unwrap();
    d.into_bytes()
}

fn node() -> FakeNode {
    let mut n = FakeNode::new();
    for drb in [DrbKey::new(UE, 1), DrbKey::uplink(UE, 1)] {
        n.add_drb(
            drb,
            &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
        )
        .unwrap();
    }
    n
}

#[test]
fn control_headers_and_definitions_are_the_outside_encoders_bytes() {
    let read = Change::Controls(vec![]);
    let (up, _) = tcsm::control(DrbKey::uplink(UE, 1), &read);
    assert_eq!(up, vector("control header, uplink"));
    // The downlink keeps the first edition's bytes (no extension bit).
    let (down, _) = tcsm::control(DrbKey::new(UE, 1), &read);
    assert_eq!(down, vector("control header, downlink"));
    assert_eq!(down, [0x00, 0x46, 0x01, 0x00]);
    assert_eq!(
        tcsm::action_definition(&[DrbKey::new(UE, 1), DrbKey::uplink(UE, 1)]),
        vector("action definition")
    );
    let f = tcsm::TcRan::default().ran_function(&node());
    assert_eq!(f.definition, vector("RAN function definition"));
    // hampi (with the hand-written DrbRef) reads them back and writes the
    // same bytes.
    for (what, bytes) in [
        ("header", vector("control header, uplink")),
        ("header", vector("control header, downlink")),
    ] {
        let h: t::TcControlHeader = hampi(&bytes);
        assert_eq!(encode(&h), bytes, "{what}");
    }
    let a: t::TcActionDefinition = hampi(&vector("action definition"));
    assert_eq!(a.drbs.0[0].direction, None);
    assert_eq!(a.drbs.0[1].direction, Some(t::TcDirection(1)));
    assert_eq!(encode(&a), vector("action definition"));
}

#[test]
fn an_uplink_report_of_the_outside_encoder_decodes_alike_on_both_paths() {
    let bytes = vector("indication message");
    let m: t::TcIndicationMessage = hampi(&bytes);
    assert_eq!(encode(&m), bytes, "hampi re-encodes it byte for byte");
    let fast = aper_fast::decode_statuses(&bytes, 1.5).expect("the fast decoder takes it");
    assert_eq!(Some(fast.clone()), tc_status::statuses_generic(&bytes, 1.5));
    assert_eq!(fast.len(), 1);
    let s = &fast[0];
    assert_eq!(s.drb, DrbKey::uplink(UE, 1));
    assert_eq!(s.stats.totals.dropped_packets, 39);
    assert_eq!(s.stats.pacer_kind, "static");
    assert_eq!(s.lower.rlc_backlog_bytes, 19_876);
    assert_eq!(s.lower.mcs, 10);
}

/// A report carrying its UE's handover margin (`LowerLayerKpis`'
/// extension addition, -4.12 dB in the outside encoder's bytes) decodes
/// alike on both paths, and the node's streamed encoder writes the same
/// bytes from the decoded statistics.
#[test]
fn a_report_with_the_ues_handover_margin_is_the_outside_encoders_bytes() {
    let bytes = vector("handover margin");
    let m: t::TcIndicationMessage = hampi(&bytes);
    assert_eq!(encode(&m), bytes, "hampi re-encodes it byte for byte");
    assert_eq!(
        m.reports.0[0].lower.handover_margin,
        Some(t::HandoverMargin(-412))
    );
    let fast = aper_fast::decode_statuses(&bytes, 1.5).expect("the fast decoder takes it");
    assert_eq!(Some(fast.clone()), tc_status::statuses_generic(&bytes, 1.5));
    let s = &fast[0];
    assert_eq!(s.drb, DrbKey::new(UE, 1));
    assert_eq!(s.lower.handover_margin_cdb, Some(-412));
    let mut stream = tcran_e2::sm::report_stream::ReportStream::new();
    stream.start();
    assert!(stream.push(s.drb, &s.stats, &s.lower, usize::MAX));
    assert_eq!(stream.finish(), bytes.as_slice());
}

/// A control addressed to the uplink DRB reconfigures the UE's pipeline;
/// the downlink DRB of the same id keeps its own; an indication of every
/// DRB reports both, each with its direction.
#[test]
fn the_model_controls_and_reports_the_uplink_drb() {
    let mut n = node();
    let mut model = tcsm::TcRan::default();
    let add = Change::Control(Control::AddQueue {
        queue: tcran_tc::QueueConfig::new(1, QueueKindConfig::Fifo(FifoConfig {})),
    });
    let (h, m) = tcsm::control(DrbKey::uplink(UE, 1), &add);
    let out = model.control(&h, &m, &mut n, Instant::ZERO);
    let ControlOutcome::Done { outcome: Some(o) } = out else {
        panic!("applied: {out:?}");
    };
    let outcome = tcsm::decode_outcome(&o);
    assert!(matches!(outcome, Ok(TcOutcome::Applied(_))), "{outcome:?}");
    // Queues, a bank of consecutive FIFOs counting as its size.
    let queues = |k: DrbKey| -> u32 {
        let c = n.tc_view(k, Instant::ZERO).unwrap().config;
        c.queues.iter().map(|q| u32::from(q.count)).sum()
    };
    assert_eq!(queues(DrbKey::uplink(UE, 1)), 2);
    assert_eq!(queues(DrbKey::new(UE, 1)), 1);

    let trigger = tcsm::event_trigger(&Trigger::Periodic { period_ms: 10 });
    let action = Action {
        id: 1,
        kind: ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let mut job = model.subscribe(&trigger, &action, &n).unwrap();
    let ind = model.indicate(&mut job.state, &n, Instant::ZERO);
    assert_eq!(ind.len(), 1);
    let got = tc_status::decode_tc(&ind[0].0, &ind[0].1).unwrap();
    let keys: Vec<(DrbKey, usize)> = got
        .drbs
        .iter()
        .map(|d| (d.drb, d.stats.queues.len()))
        .collect();
    assert_eq!(
        keys,
        vec![(DrbKey::new(UE, 1), 1), (DrbKey::uplink(UE, 1), 2)]
    );
    assert_eq!(got.drbs[1].drb.dir, Direction::Uplink);
}

/// FlexRIC's TC model has no direction: DRB numbers 33..=64 name the
/// uplink DRBs 1..=32.
#[test]
fn flexric_tc_numbers_uplink_drbs_above_32() {
    assert_eq!(flexric_tc::drb_key(1, 1), Some(DrbKey::new(1, 1)));
    assert_eq!(flexric_tc::drb_key(1, 32), Some(DrbKey::new(1, 32)));
    assert_eq!(flexric_tc::drb_key(1, 33), Some(DrbKey::uplink(1, 1)));
    assert_eq!(flexric_tc::drb_key(1, 64), Some(DrbKey::uplink(1, 32)));
    assert_eq!(flexric_tc::drb_key(1, 0), None);
    assert_eq!(flexric_tc::drb_key(1, 65), None);
    for n in 1..=64 {
        assert_eq!(
            flexric_tc::drb_number(flexric_tc::drb_key(7, n).unwrap()),
            n
        );
    }
}
