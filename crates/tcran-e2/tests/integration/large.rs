//! Reports too large for one E2 message: E2SM-TCRAN and KPM style 4 split
//! them over several indications within the codec's 16 KB per message;
//! FlexRIC's one-pipeline message keeps the queues that fit.

use tcran_control::DrbKey;
use tcran_core::{Duration, FiveTuple, Instant};
use tcran_e2::asn::e2sm_kpm as k;
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::{e2sm_tcran as tcsm, flexric_tc, kpm, ServiceModel, MAX_MESSAGE};
use tcran_tc::PipelineConfig;

fn action(definition: Option<Vec<u8>>) -> Action {
    Action {
        id: 0,
        kind: ActionType::Report,
        definition,
        subsequent: None,
    }
}

fn wraps(h: Vec<u8>, m: Vec<u8>) {
    let pdu = E2apPdu::Indication(e2ap::Indication {
        request: e2ap::RicRequestId {
            requestor: 1,
            instance: 1,
        },
        function: 1,
        action: 0,
        sn: None,
        kind: e2ap::IndicationType::Report,
        header: h,
        message: m,
        call_process_id: None,
    });
    let bytes = e2ap::encode(&pdu).expect("fits the codec");
    assert!(bytes.len() <= 65536, "fits a frame");
}

#[test]
fn a_thousand_drbs_are_split_over_several_indications() {
    let mut n = FakeNode::new();
    let cfg: PipelineConfig = toml::from_str(
        "[[queues]]\nid = 0\nkind = \"codel\"\n[[queues]]\nid = 1\nkind = \"fifo\"\n",
    )
    .unwrap();
    for i in 0..1000 {
        n.add_drb(DrbKey::new(i, 1), &cfg).unwrap();
    }
    let m = tcsm::TcRan::default();
    let mut job = m
        .subscribe(
            &tcsm::event_trigger(&tcsm::Trigger::Periodic { period_ms: 1 }),
            &action(None),
            &n,
        )
        .unwrap();
    let inds = m.indicate(&mut job.state, &n, Instant::ZERO);
    assert!(inds.len() > 1);
    let mut reports = 0;
    for (h, msg) in inds {
        assert!(msg.len() <= MAX_MESSAGE, "{}", msg.len());
        reports += tcsm::decode_indication(&h, &msg).unwrap().1.reports.0.len();
        wraps(h, msg);
    }
    assert_eq!(reports, 1000);

    // KPM style 4 over 1000 UEs.
    let def = kpm::action_definition(4, &kpm::MEASUREMENTS, 1);
    let mut job = kpm::Kpm::default()
        .subscribe(&kpm::event_trigger(1), &action(Some(def)), &n)
        .unwrap();
    assert!(kpm::Kpm::default()
        .indicate(&mut job.state, &n, Instant::ZERO)
        .is_empty());
    let inds =
        kpm::Kpm::default().indicate(&mut job.state, &n, Instant::ZERO + Duration::from_millis(1));
    assert!(inds.len() > 1);
    let mut ues = 0;
    for (h, msg) in inds {
        assert!(msg.len() <= MAX_MESSAGE);
        use asn1_codecs::aper::AperCodec;
        let m = k::E2SM_KPM_IndicationMessage::aper_decode(
            &mut asn1_codecs::PerCodecData::from_slice_aper(&msg),
        )
        .unwrap();
        let k::E2SM_KPM_IndicationMessageIndicationMessage_formats::IndicationMessage_Format3(f3) =
            m.indication_message_formats
        else {
            panic!()
        };
        ues += f3.ue_meas_report_list.0.len();
        wraps(h, msg);
    }
    assert_eq!(ues, 1000);
}

#[test]
fn a_flexric_indication_keeps_the_queues_that_fit() {
    let mut n = FakeNode::new();
    let cfg: PipelineConfig = toml::from_str(
        "classifier = { kind = \"flow_hash\", first_queue = 0, buckets = 1024 }\n[[queues]]\nid = 0\ncount = 1024\nkind = \"codel\"\n",
    )
    .unwrap();
    let drb = DrbKey::new(1, 1);
    n.add_drb(drb, &cfg).unwrap();
    n.push(drb, FiveTuple::default(), 100, Instant::ZERO);
    let m = flexric_tc::FlexricTc {
        drb: None,
        time_offset_us: 0,
    };
    let mut job = m.subscribe(&1u32.to_le_bytes(), &action(None), &n).unwrap();
    let inds = m.indicate(&mut job.state, &n, Instant::ZERO);
    assert_eq!(inds.len(), 1);
    let (h, msg) = inds.into_iter().next().unwrap();
    assert!(msg.len() <= MAX_MESSAGE);
    let ind = flexric_tc::PlainIndication::decode(&msg).unwrap();
    assert!(
        ind.queues.len() > 100 && ind.queues.len() < 1024,
        "{}",
        ind.queues.len()
    );
    wraps(h, msg);
}
