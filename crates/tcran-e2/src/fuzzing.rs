//! Bodies of the fuzz targets of this crate (`fuzz/fuzz_targets/e2_*.rs`),
//! also run on stable `cargo test` by `tests/integration/fuzz_e2.rs` over the golden
//! vectors and their mutations. Each panics on a violated invariant.
//!
//! Invariants:
//! - No decoder panics on any input, nor allocates without bound.
//! - E2AP: what tcran's encoder writes is a fixed point: after one encode
//!   and decode, encoding again gives the same value and bytes. The first
//!   round is exempt: hampi's decoder accepts some inputs outside their
//!   constraints (an extension value of an extensible ENUMERATED), which
//!   its encoder then refuses; tcran never echoes received values.
//! - The direct decoders of the RIC Indication and of E2SM-TCRAN's
//!   indication header give hampi's result wherever they take the bytes
//!   (they leave the rest to hampi); the direct decoder of E2SM-TCRAN's
//!   indication message into statuses gives hampi's result converted by
//!   `tc_status::drb_status_of`, and the RIC's decoder (`tc_status::decode_tc`)
//!   always gives what hampi and that conversion give, error included.
//! - FlexRIC TC: an accepted message re-encodes to bytes that decode to
//!   the same message.
//! - The agent survives any sequence of frames in either RIC profile: it
//!   never panics, and every PDU it sends is valid E2AP.
//! - Controls built from arbitrary service model messages either change a
//!   real pipeline or are refused; the pipeline stays valid (its
//!   configuration builds again).

use crate::agent::{Agent, AgentConfig, RicProfile};
use crate::e2ap;
use crate::fake::FakeNode;
use crate::sm::flexric_stats::{self, GtpTunnel, MacUe, PdcpBearer, RlcBearer, StatsKind};
use crate::sm::plain::{PlainList, PlainRecord};
use crate::sm::{e2sm_tcran, flexric_tc, kpm, tc_status, AnyModel, ServiceModel};
use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use tcran_control::DrbKey;
use tcran_core::{Duration, Instant};
use tcran_tc::queue::{FifoConfig, QueueKindConfig};
use tcran_tc::PipelineConfig;

const DRB: DrbKey = DrbKey::new(0x4601, 1);
/// The same UE's uplink DRB 1 (E2SM-TCRAN addresses it by `DrbRef`'s
/// direction, FlexRIC's TC by the DRB number 33).
const UPLINK_DRB: DrbKey = DrbKey::uplink(0x4601, 1);

fn node() -> FakeNode {
    let mut n = FakeNode::new();
    for drb in [DRB, UPLINK_DRB] {
        n.add_drb(
            drb,
            &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
        )
        .expect("a FIFO pipeline builds");
    }
    n
}

fn still_valid(n: &FakeNode) {
    for drb in [DRB, UPLINK_DRB] {
        let cfg = n.drb(drb).expect("DRB kept").pipeline.config();
        if let Err(e) = cfg.build() {
            panic!("{drb}: the pipeline's configuration no longer builds: {e}\n{cfg:?}");
        }
    }
}

/// E2AP decoder: arbitrary bytes as one PDU.
pub fn e2ap_decode(data: &[u8]) {
    // The direct RIC Indication decoder agrees with hampi's wherever it
    // takes the bytes (and `decode` thus with `decode_generic` always).
    if let Some(fast) = e2ap::decode_indication(data) {
        assert_eq!(
            e2ap::decode_generic(data),
            Ok(e2ap::E2apPdu::Indication(fast)),
            "the direct RIC Indication decoder disagrees with hampi's"
        );
    }
    let Ok(pdu) = e2ap::decode(data) else { return };
    let Ok(bytes) = e2ap::encode(&pdu) else {
        return;
    };
    let Ok(again) = e2ap::decode(&bytes) else {
        return;
    };
    assert_eq!(again, pdu, "decode(encode(pdu)) != pdu");
    assert_eq!(
        e2ap::encode(&again).unwrap(),
        bytes,
        "re-encoding is not stable"
    );
}

/// FlexRIC TC PLAIN decoders, and the controls' effect on a pipeline.
pub fn flexric_tc(data: &[u8]) {
    for len in [flexric_tc::FILTER_LEN, flexric_tc::FILTER_LEN_V1] {
        if let Ok(ind) = flexric_tc::PlainIndication::decode_with(data, len) {
            // Floats compare by bits (NaN): compare re-encodings.
            let bytes = ind.encode();
            let again = flexric_tc::PlainIndication::decode(&bytes).expect("re-encoding decodes");
            assert_eq!(again.encode(), bytes);
        }
    }
    let Ok(ctrl) = flexric_tc::PlainControl::decode(data) else {
        return;
    };
    let bytes = ctrl.encode();
    assert_eq!(
        flexric_tc::PlainControl::decode(&bytes).expect("re-encoding decodes"),
        ctrl
    );
    let mut n = node();
    let mut model = flexric_tc::FlexricTc {
        drb: Some(DRB),
        time_offset_us: 0,
    };
    model.control(&[0; 4], data, &mut n, Instant::ZERO);
    still_valid(&n);
}

/// FlexRIC's MAC, RLC, PDCP and GTP models: the first byte picks the
/// model, the rest is its indication message, then its event trigger and
/// control; an accepted message re-encodes to exactly its bytes.
pub fn flexric_stats(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    fn exact<R: PlainRecord>(bytes: &[u8]) {
        if let Ok(list) = PlainList::<R>::decode("fuzz", bytes) {
            assert_eq!(list.encode(), bytes, "a PLAIN list re-encodes exactly");
        }
    }
    let kind = StatsKind::ALL[which as usize % 4];
    match kind {
        StatsKind::Mac => exact::<MacUe>(rest),
        StatsKind::Rlc => exact::<RlcBearer>(rest),
        StatsKind::Pdcp => exact::<PdcpBearer>(rest),
        StatsKind::Gtp => exact::<GtpTunnel>(rest),
    }
    let mut n = node();
    let mut model = flexric_stats::FlexricStats {
        kind,
        time_offset_us: 0,
    };
    let split = rest.len().min(4);
    let action = e2ap::Action {
        id: 0,
        kind: e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    if let Ok(mut job) = model.subscribe(&rest[..split], &action, &n) {
        for (header, message) in model.indicate(&mut job.state, &n, Instant::ZERO) {
            assert_eq!(header, flexric_stats::HEADER);
            let ok = match kind {
                StatsKind::Mac => PlainList::<MacUe>::decode("mac", &message).is_ok(),
                StatsKind::Rlc => PlainList::<RlcBearer>::decode("rlc", &message).is_ok(),
                StatsKind::Pdcp => PlainList::<PdcpBearer>::decode("pdcp", &message).is_ok(),
                StatsKind::Gtp => PlainList::<GtpTunnel>::decode("gtp", &message).is_ok(),
            };
            assert!(ok, "tcran's own indication decodes");
        }
    }
    let before = n.drb(DRB).expect("DRB kept").pipeline.config();
    model.control(&rest[..split], &rest[split..], &mut n, Instant::ZERO);
    assert_eq!(n.drb(DRB).expect("DRB kept").pipeline.config(), before);
}

/// FlexRIC's SLICE PLAIN codec: an accepted indication or control
/// re-encodes to exactly its bytes.
pub fn flexric_slice(data: &[u8]) {
    use crate::sm::flexric_slice_codec as sc;
    if let Ok(ind) = sc::decode::<sc::SliceIndication>(data) {
        assert_eq!(
            sc::encode(&ind),
            data,
            "a SLICE indication re-encodes exactly"
        );
    }
    if let Ok(ctrl) = sc::decode::<sc::SliceControl>(data) {
        assert_eq!(
            sc::encode(&ctrl),
            data,
            "a SLICE control re-encodes exactly"
        );
    }
}

/// Encodes `v`, or `None` when hampi's encoder refuses it.
fn enc<T: AperCodec>(v: &T) -> Option<Vec<u8>> {
    let mut d = PerCodecData::new_aper();
    v.aper_encode(&mut d).ok().map(|()| d.into_bytes())
}

fn dec<T: AperCodec<Output = T>>(b: &[u8]) -> Option<T> {
    T::aper_decode(&mut PerCodecData::from_slice_aper(b)).ok()
}

/// Decodes `data` as a `T` and encodes what decoded: neither may panic.
/// (No fixed point is required here, unlike E2AP: hampi's decoder accepts
/// inputs that violate constraints, such as an empty list where
/// SIZE(1..2147483647) is required or control characters in a
/// PrintableString, and its encoder then writes bytes it cannot read back.
/// tcran refuses such E2SM contents, whose names and values it does not
/// know, and never echoes them; well-formed values round-trip, which
/// `tests/integration/roundtrip.rs` checks.)
fn reencodes<T: AperCodec<Output = T>>(data: &[u8]) {
    if let Some(v) = dec::<T>(data) {
        let _ = enc(&v);
    }
}

/// `data` read as a REPORT subscription: its first half the event
/// trigger, its second half the action definition.
fn report_subscription(data: &[u8]) -> (&[u8], e2ap::Action) {
    let (trigger, definition) = data.split_at(data.len() / 2);
    let action = e2ap::Action {
        id: 0,
        kind: e2ap::ActionType::Report,
        definition: Some(definition.to_vec()),
        subsequent: None,
    };
    (trigger, action)
}

/// E2SM-KPM decoders and subscriptions.
pub fn kpm(data: &[u8]) {
    use crate::asn::e2sm_kpm as k;
    reencodes::<k::E2SM_KPM_EventTriggerDefinition>(data);
    reencodes::<k::E2SM_KPM_ActionDefinition>(data);
    reencodes::<k::E2SM_KPM_IndicationHeader>(data);
    reencodes::<k::E2SM_KPM_IndicationMessage>(data);
    reencodes::<k::E2SM_KPM_RANfunction_Description>(data);
    let n = node();
    let (trigger, action) = report_subscription(data);
    if let Ok(mut job) = kpm::Kpm::default().subscribe(trigger, &action, &n) {
        for ms in 0..4 {
            let _ = kpm::Kpm::default().indicate(
                &mut job.state,
                &n,
                Instant::ZERO + Duration::from_millis(ms),
            );
        }
    }
}

/// E2SM-RC decoders, subscriptions, reports and controls: no panic, and
/// a control changes nothing of a node without SDAP or slicing (the fake
/// node) whatever the bytes.
pub fn rc(data: &[u8]) {
    use crate::asn::e2sm_rc as r;
    use crate::sm::rc;
    reencodes::<r::E2SM_RC_EventTrigger>(data);
    reencodes::<r::E2SM_RC_ActionDefinition>(data);
    reencodes::<r::E2SM_RC_IndicationHeader>(data);
    reencodes::<r::E2SM_RC_IndicationMessage>(data);
    reencodes::<r::E2SM_RC_ControlHeader>(data);
    reencodes::<r::E2SM_RC_ControlMessage>(data);
    reencodes::<r::E2SM_RC_ControlOutcome>(data);
    reencodes::<r::E2SM_RC_RANFunctionDefinition>(data);
    let _ = rc::decode_indication(data);
    let mut n = node();
    let (trigger, action) = report_subscription(data);
    let mut model = rc::Rc::default();
    if let Ok(mut job) = model.subscribe(trigger, &action, &n) {
        let _ = model.indicate(&mut job.state, &n, Instant::ZERO);
    }
    let before = n.drb(DRB).expect("DRB kept").pipeline.config();
    let (header, message) = data.split_at(data.len() / 2);
    model.control(header, message, &mut n, Instant::ZERO);
    assert_eq!(n.drb(DRB).expect("DRB kept").pipeline.config(), before);
}

/// E2SM-TCRAN decoders, subscriptions and controls.
pub fn tcran_sm(data: &[u8]) {
    use crate::asn::e2sm_tcran as t;
    // The direct indication decoders agree with hampi's (and, for the
    // message, with the conversion of hampi's reports to statuses)
    // wherever they take the bytes; the RIC's decoder, which falls back to
    // hampi for the rest, thus always.
    const TIME_NS: u64 = 0x1234_5678_9abc;
    let time_s = TIME_NS as f64 / 1e9;
    let header = enc(&t::TcIndicationHeader {
        time_ns: t::Counter(TIME_NS),
        cause: t::TcIndicationHeaderCause(1),
    })
    .expect("a valid header");
    if let Some(fast) = crate::sm::aper_fast::decode_statuses(data, time_s) {
        assert_eq!(
            tc_status::statuses_generic(data, time_s),
            Some(fast),
            "direct TcIndicationMessage decoder to statuses"
        );
    }
    assert_eq!(
        tc_status::decode_tc(&header, data),
        tc_status::decode_tc_generic(&header, data),
        "E2SM-TCRAN indication message"
    );
    if let Some(fast) = crate::sm::aper_fast::decode_indication_header(data) {
        let hampi = t::TcIndicationHeader::aper_decode(&mut PerCodecData::from_slice_aper(data));
        assert_eq!(hampi.ok(), Some(fast), "direct TcIndicationHeader decoder");
    }
    reencodes::<t::TcEventTrigger>(data);
    reencodes::<t::TcActionDefinition>(data);
    reencodes::<t::TcIndicationHeader>(data);
    reencodes::<t::TcIndicationMessage>(data);
    reencodes::<t::TcControlHeader>(data);
    reencodes::<t::TcControlMessage>(data);
    reencodes::<t::TcControlOutcome>(data);
    reencodes::<t::TcRanFunctionDefinition>(data);
    let mut n = node();
    let mut model = e2sm_tcran::TcRan::default();
    let split = data.len().min(4);
    let action = e2ap::Action {
        id: 0,
        kind: e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    if let Ok(mut job) = model.subscribe(data, &action, &n) {
        let _ = model.indicate(&mut job.state, &n, Instant::ZERO);
    }
    model.control(&data[..split], &data[split..], &mut n, Instant::ZERO);
    still_valid(&n);
}

/// The agent fed frames cut from `data` (first byte: profile and frame
/// sizes), after a completed E2 Setup.
pub fn agent(data: &[u8]) {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    let profile = match ctl % 3 {
        0 => RicProfile::Standard,
        1 => RicProfile::Flexric,
        _ => RicProfile::Auto,
    };
    let mut n = node();
    let models = vec![
        AnyModel::FlexricTc(flexric_tc::FlexricTc {
            drb: None,
            time_offset_us: 0,
        }),
        AnyModel::Kpm(kpm::Kpm::default()),
        AnyModel::TcRan(e2sm_tcran::TcRan::default()),
    ];
    let models = models
        .into_iter()
        .chain(flexric_stats::FlexricStats::all(0).map(AnyModel::FlexricStats))
        .chain([AnyModel::FlexricSlice(
            crate::sm::flexric_slice::FlexricSlice::new(0),
        )])
        .collect();
    let mut a = Agent::new(AgentConfig::new(models, profile));
    a.connected(&n, Instant::ZERO);
    let check_out = |a: &mut Agent| {
        while let Some(pdu) = a.poll_transmit() {
            if let Err(e) = e2ap::decode(&pdu) {
                panic!("the agent sent an invalid PDU ({e}): {pdu:02x?}");
            }
        }
    };
    if let Some(Ok(e2ap::E2apPdu::E2SetupRequest(req))) =
        a.poll_transmit().map(|b| e2ap::decode(&b))
    {
        let resp = e2ap::E2apPdu::E2SetupResponse(req.accept(e2ap::GlobalRicId {
            plmn: [0, 0xf1, 0x10],
            ric_id: 1,
        }));
        a.handle(
            &e2ap::encode(&resp).expect("encodes"),
            &mut n,
            Instant::ZERO,
        );
    }
    // Frames: a length byte, then that many bytes.
    let mut rest = rest;
    let mut now = Instant::ZERO;
    while let Some((&len, tail)) = rest.split_first() {
        let len = (len as usize).min(tail.len());
        let (frame, tail) = tail.split_at(len);
        a.handle(frame, &mut n, now);
        now += Duration::from_millis(1);
        a.on_timeout(&n, now);
        check_out(&mut a);
        rest = tail;
    }
    still_valid(&n);
}
