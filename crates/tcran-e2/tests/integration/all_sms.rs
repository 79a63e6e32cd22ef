//! FlexRIC's eight service models against the 179 frames captured between
//! its RIC, its emulated gNB and each stock xApp (tests/data/
//! flexric-golden-vectors-all-sms.jsonl, shared/e2/README.md): every PDU
//! decodes and re-encodes byte for byte through the generated E2AP types;
//! every MAC, RLC, PDCP and GTP payload decodes with tcran's PLAIN codecs
//! to the values the capture's own decoding lists and re-encodes to the
//! captured bytes; tcran's RAN functions for those ids are FlexRIC's; and
//! every KPM subscription of styles 1 to 5 is admitted.

use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use serde_json::Value;
use tcran_e2::asn::e2ap::E2AP_PDU;
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::flexric_stats::{
    FlexricStats, GtpTunnel, MacUe, PdcpBearer, RlcBearer, StatsKind, MAC_CONTROL,
};
use tcran_e2::sm::plain::{PlainList, PlainRecord};
use tcran_e2::sm::{kpm, ServiceModel};

const ALL_SMS: &str = include_str!("../data/flexric-golden-vectors-all-sms.jsonl");

fn frames() -> Vec<Value> {
    ALL_SMS
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn hex_of(v: &Value, key: &str) -> Option<Vec<u8>> {
    v.get(key)?.as_str().map(crate::common::hex)
}

#[test]
fn the_copy_matches_the_shared_data_when_present() {
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/e2/flexric-golden-vectors-all-sms.jsonl"
    );
    match std::fs::read_to_string(shared) {
        Ok(text) => assert_eq!(text, ALL_SMS, "tests/data copy differs from {shared}"),
        Err(_) => eprintln!("{shared} not present; using the copy in tests/data"),
    }
    assert_eq!(frames().len(), 179);
}

#[test]
fn every_pdu_of_every_model_round_trips_through_e2ap() {
    for (i, f) in frames().iter().enumerate() {
        let bytes = hex_of(f, "hex").unwrap();
        let mut d = PerCodecData::from_slice_aper(&bytes);
        let pdu = E2AP_PDU::aper_decode(&mut d).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let mut out = PerCodecData::new_aper();
        pdu.aper_encode(&mut out).expect("encodes");
        assert_eq!(
            out.into_bytes(),
            bytes,
            "line {} ({})",
            i + 1,
            f["procedure"]
        );
        e2ap::decode(&bytes).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
    }
}

/// A field's name in the capture's decoding and how to read it.
type Field<R> = (&'static str, fn(&R) -> f64);

/// Checks `record` against the capture's own decoding of it (`json`), for
/// the fields named in `fields`.
fn check_fields<R>(record: &R, json: &Value, fields: &[Field<R>]) {
    for (name, get) in fields {
        let want = json[*name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} in {json}"));
        assert_eq!(get(record), want, "{name}");
    }
}

fn plain_round_trip<R: PlainRecord + std::fmt::Debug>(
    sm: &str,
    list_key: &str,
    fields: &[Field<R>],
) -> usize {
    let mut seen = 0;
    for f in frames().iter().filter(|f| f["sm"] == sm) {
        let Some(p) = f.get("sm_payload") else {
            continue;
        };
        let Some(msg) = hex_of(p, "indication_message_hex") else {
            continue;
        };
        assert_eq!(hex_of(p, "indication_header_hex").unwrap(), [0; 4]);
        let list = PlainList::<R>::decode("test", &msg).unwrap();
        assert_eq!(list.encode(), msg, "{sm} re-encodes byte for byte");
        let want = &p["indication_message_plain"];
        assert_eq!(list.tstamp_us, want["tstamp_us"].as_i64().unwrap());
        let records = want[list_key].as_array().unwrap();
        assert_eq!(list.records.len(), records.len());
        for (r, j) in list.records.iter().zip(records) {
            check_fields(r, j, fields);
        }
        seen += 1;
    }
    seen
}

#[test]
fn mac_indications_decode_to_the_captured_values_and_back() {
    let n = plain_round_trip::<MacUe>(
        "MAC",
        "ue_stats",
        &[
            ("dl_aggr_tbs", |r| r.dl_aggr_tbs as f64),
            ("ul_aggr_tbs", |r| r.ul_aggr_tbs as f64),
            ("dl_sched_rb", |r| r.dl_sched_rb as f64),
            ("pusch_snr", |r| r.pusch_snr as f64),
            ("dl_num_harq", |r| r.dl_num_harq as f64),
            ("rnti", |r| r.rnti as f64),
            ("bsr", |r| r.bsr as f64),
            ("frame", |r| r.frame as f64),
            ("slot", |r| r.slot as f64),
            ("wb_cqi", |r| r.wb_cqi as f64),
            ("dl_mcs1", |r| r.dl_mcs1 as f64),
            ("ul_mcs2", |r| r.ul_mcs2 as f64),
            ("phr", |r| r.phr as f64),
        ],
    );
    assert_eq!(n, 6);
}

#[test]
fn rlc_indications_decode_to_the_captured_values_and_back() {
    let n = plain_round_trip::<RlcBearer>(
        "RLC",
        "rb",
        &[
            ("txpdu_pkts", |r| r.txpdu_pkts as f64),
            ("txbuf_occ_bytes", |r| r.txbuf_occ_bytes as f64),
            ("rxbuf_occ_pkts", |r| r.rxbuf_occ_pkts as f64),
            ("txsdu_pkts", |r| r.txsdu_pkts as f64),
            ("txsdu_bytes", |r| r.txsdu_bytes as f64),
            ("txsdu_avg_time_to_tx", |r| r.txsdu_avg_time_to_tx),
            ("txsdu_wt_us", |r| r.txsdu_wt_us as f64),
            ("rxsdu_bytes", |r| r.rxsdu_bytes as f64),
            ("rxsdu_dd_bytes", |r| r.rxsdu_dd_bytes as f64),
            ("rnti", |r| r.rnti as f64),
            ("mode", |r| r.mode as f64),
            ("rbid", |r| r.rbid as f64),
        ],
    );
    assert_eq!(n, 8);
}

#[test]
fn pdcp_indications_decode_to_the_captured_values_and_back() {
    let n = plain_round_trip::<PdcpBearer>(
        "PDCP",
        "rb",
        &[
            ("txpdu_pkts", |r| r.txpdu_pkts as f64),
            ("rxpdu_ro_count", |r| r.rxpdu_ro_count as f64),
            ("txsdu_bytes", |r| r.txsdu_bytes as f64),
            ("rxsdu_bytes", |r| r.rxsdu_bytes as f64),
            ("rnti", |r| r.rnti as f64),
            ("mode", |r| r.mode as f64),
            ("rbid", |r| r.rbid as f64),
        ],
    );
    assert_eq!(n, 6);
}

#[test]
fn gtp_indications_decode_to_the_captured_values_and_back() {
    let n = plain_round_trip::<GtpTunnel>(
        "GTP",
        "ngut",
        &[
            ("rnti", |r| r.rnti as f64),
            ("teidgnb", |r| r.teidgnb as f64),
            ("qfi", |r| r.qfi as f64),
            ("teidupf", |r| r.teidupf as f64),
        ],
    );
    assert_eq!(n, 6);
}

#[test]
fn a_list_whose_counts_do_not_use_up_the_message_is_refused() {
    let mut msg = PlainList::<GtpTunnel> {
        records: vec![GtpTunnel::default(); 2],
        tstamp_us: 7,
    }
    .encode();
    msg.push(0);
    assert!(PlainList::<GtpTunnel>::decode("GTP", &msg).is_err());
    assert!(PlainList::<GtpTunnel>::decode("GTP", &msg[..11]).is_err());
    msg[0] = 0xff;
    assert!(PlainList::<GtpTunnel>::decode("GTP", &msg).is_err());
}

#[test]
fn tcran_announces_flexrics_plain_functions_as_flexric_does() {
    let setup = frames()
        .into_iter()
        .find(|f| f["procedure"] == "E2setupRequest")
        .unwrap();
    let E2apPdu::E2SetupRequest(r) = e2ap::decode(&hex_of(&setup, "hex").unwrap()).unwrap() else {
        panic!("E2 Setup Request")
    };
    let node = FakeNode::new();
    let slice = tcran_e2::sm::flexric_slice::FlexricSlice::new(0).ran_function(&node);
    for ours in FlexricStats::all(0)
        .iter()
        .map(|m| m.ran_function(&node))
        .chain([slice])
    {
        let theirs = r.functions.iter().find(|f| f.id == ours.id).unwrap();
        assert_eq!(ours, *theirs, "RAN function {}", ours.id);
    }
}

#[test]
fn the_stock_mac_control_is_acknowledged_and_changes_nothing() {
    let f = frames()
        .into_iter()
        .find(|f| f["sm"] == "MAC" && f["procedure"] == "RICcontrolRequest")
        .unwrap();
    let p = &f["sm_payload"];
    assert_eq!(hex_of(p, "control_header_hex").unwrap(), MAC_CONTROL.0);
    assert_eq!(hex_of(p, "control_message_hex").unwrap(), MAC_CONTROL.1);
    let mut node = FakeNode::new();
    let mut mac = FlexricStats::all(0)[0].clone();
    assert_eq!(mac.kind, StatsKind::Mac);
    let outcome = mac.control(
        &MAC_CONTROL.0,
        &MAC_CONTROL.1,
        &mut node,
        tcran_core::Instant::ZERO,
    );
    assert_eq!(
        outcome,
        tcran_e2::sm::ControlOutcome::Read { outcome: None }
    );
}

#[test]
fn the_plain_subscriptions_of_the_stock_xapps_are_admitted() {
    let node = FakeNode::new();
    for f in frames()
        .iter()
        .filter(|f| f["procedure"] == "RICsubscriptionRequest")
    {
        let Some(kind) = f["ran_function_id"]
            .as_u64()
            .and_then(|id| StatsKind::of_function(id as u16))
        else {
            continue;
        };
        let trigger = hex_of(&f["sm_payload"], "event_trigger_hex").unwrap();
        let job = FlexricStats {
            kind,
            time_offset_us: 0,
        }
        .subscribe(&trigger, &report(None), &node)
        .unwrap();
        assert!(job.period.as_nanos() >= 1_000_000);
    }
}

fn report(definition: Option<Vec<u8>>) -> Action {
    Action {
        id: 0,
        kind: ActionType::Report,
        definition,
        subsequent: None,
    }
}

#[test]
fn kpm_subscriptions_of_every_style_are_admitted() {
    let node = FakeNode::new();
    let mut styles = Vec::new();
    for f in frames()
        .iter()
        .filter(|f| f["sm"] == "KPM" && f["procedure"] == "RICsubscriptionRequest")
    {
        let p = &f["sm_payload"];
        let trigger = hex_of(p, "event_trigger_hex").unwrap();
        let action = &p["actions"][0];
        let def = hex_of(action, "definition_hex").unwrap();
        styles.push(action["kpm_ric_style_type"].as_u64().unwrap());
        // The UEs and measurements FlexRIC's xApps name (those of FlexRIC's
        // emulated node) are not all tcran's: admitted all the same
        // (FlexRIC aborts on a failure), reported where they exist.
        let flexric = kpm::Kpm {
            dialect: kpm::Dialect::Flexric,
            ..kpm::Kpm::default()
        };
        flexric
            .subscribe(&trigger, &report(Some(def)), &node)
            .unwrap_or_else(|r| panic!("{} style {}: {}", f["xapp"], action, r.message));
    }
    styles.sort();
    styles.dedup();
    assert_eq!(styles, [1, 2, 3, 4, 5]);
}

#[test]
fn kpm_lists_report_style_4_first_as_flexrics_xapps_need() {
    let d = kpm::Kpm::description();
    let styles = d.ric_report_style_list.unwrap().0;
    assert_eq!(styles[0].ric_report_style_type.0, 4);
    let mut all: Vec<i64> = styles.iter().map(|s| s.ric_report_style_type.0).collect();
    all.sort();
    assert_eq!(all, [1, 2, 3, 4, 5]);
    // FlexRIC's xApps assert the first event-trigger style has format 1.
    let t = d.ric_event_trigger_style_list.unwrap().0;
    assert_eq!(t[0].ric_event_trigger_format_type.0, 1);
}

mod slice {
    use super::{frames, hex_of};
    use tcran_e2::sm::flexric_slice_codec::{
        self as sc, SliceControl, SliceIndication, SliceParams, UeSlice,
    };

    fn payloads(key: &str) -> Vec<Vec<u8>> {
        frames()
            .iter()
            .filter(|f| f["sm"] == "SLICE")
            .filter_map(|f| hex_of(f.get("sm_payload")?, key))
            .collect()
    }

    #[test]
    fn every_slice_indication_decodes_and_re_encodes_byte_for_byte() {
        let msgs = payloads("indication_message_hex");
        assert_eq!(msgs.len(), 6);
        for m in &msgs {
            let ind: SliceIndication = sc::decode(m).unwrap();
            assert_eq!(sc::encode(&ind), *m);
            assert_eq!(ind.dl.sched_name, b"MY SLICE");
        }
    }

    #[test]
    fn the_stock_xapps_add_delete_and_associate_decode_as_captured() {
        let msgs = payloads("control_message_hex");
        let ctrls: Vec<SliceControl> = msgs.iter().map(|m| sc::decode(m).unwrap()).collect();
        for (c, m) in ctrls.iter().zip(&msgs) {
            assert_eq!(sc::encode(c), *m);
        }
        // FLEXRIC-SMS.md section 7: ADD = DL scheduler PF, static slices
        // 0 "s1" [0..3], 2 "s2" [4..7], 5 "s3" [8..12]; UL round_robin_ul.
        let SliceControl::AddMod { dl, ul } = &ctrls[0] else {
            panic!("{:?}", ctrls[0])
        };
        assert_eq!(dl.sched_name, b"PF");
        assert_eq!(ul.sched_name, b"round_robin_ul");
        assert!(ul.slices.is_empty());
        let got: Vec<_> = dl
            .slices
            .iter()
            .map(|s| (s.id, s.label.clone(), s.params.clone()))
            .collect();
        let st = |pos_low, pos_high| SliceParams::Static { pos_high, pos_low };
        assert_eq!(
            got,
            [
                (0, b"s1".to_vec(), st(0, 3)),
                (2, b"s2".to_vec(), st(4, 7)),
                (5, b"s3".to_vec(), st(8, 12)),
            ]
        );
        assert_eq!(
            ctrls[1],
            SliceControl::Del {
                dl: vec![2],
                ul: vec![]
            }
        );
        let SliceControl::UeSliceAssoc(a) = &ctrls[2] else {
            panic!("{:?}", ctrls[2])
        };
        assert!(matches!(
            a.0[..],
            [UeSlice {
                dl_id: 5,
                ul_id: 0,
                ..
            }]
        ));
        for o in payloads("control_outcome_hex") {
            assert_eq!(o, sc::outcome(""));
        }
    }

    #[test]
    fn a_truncated_or_padded_slice_message_is_refused() {
        let m = &payloads("control_message_hex")[0];
        for cut in 0..m.len() {
            assert!(
                sc::decode::<SliceControl>(&m[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = m.clone();
        longer.push(0);
        assert!(sc::decode::<SliceControl>(&longer).is_err());
    }
}

mod slice_roundtrip {
    use proptest::prelude::*;
    use tcran_e2::sm::flexric_slice_codec::{
        self as sc, Slice, SliceConf, SliceControl, SliceIndication, SliceParams, UeAssoc, UeSlice,
    };

    fn params() -> impl Strategy<Value = SliceParams> {
        prop_oneof![
            Just(SliceParams::None),
            (any::<u32>(), any::<u32>())
                .prop_map(|(pos_high, pos_low)| SliceParams::Static { pos_high, pos_low }),
            (0f32..1e4, 0f32..1e4).prop_map(|(a, b)| SliceParams::NvsRate {
                mbps_reference: a,
                mbps_required: b
            }),
            (0f32..1.0).prop_map(|p| SliceParams::NvsCapacity { pct_reserved: p }),
            (0f32..1.0, 0f32..1.0, any::<u32>()).prop_map(|(l, p, t)| {
                SliceParams::Scn19OnDemand {
                    log_delta: l,
                    pct_reserved: p,
                    tau: t,
                }
            }),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                prop::collection::vec(any::<u32>(), 0..4)
            )
                .prop_map(|(d, g, m, over)| SliceParams::Edf {
                    deadline: d,
                    guaranteed_prbs: g,
                    max_replenish: m,
                    over
                }),
        ]
    }

    fn conf() -> impl Strategy<Value = SliceConf> {
        let slice = (
            any::<u32>(),
            prop::collection::vec(any::<u8>(), 0..8),
            prop::collection::vec(any::<u8>(), 0..8),
            params(),
        )
            .prop_map(|(id, label, sched, params)| Slice {
                id,
                label,
                sched,
                params,
            });
        (
            prop::collection::vec(any::<u8>(), 0..8),
            prop::collection::vec(slice, 0..4),
        )
            .prop_map(|(sched_name, slices)| SliceConf { sched_name, slices })
    }

    fn assoc() -> impl Strategy<Value = UeAssoc> {
        prop::collection::vec(
            (any::<u32>(), any::<u32>(), any::<u16>()).prop_map(|(dl_id, ul_id, rnti)| UeSlice {
                dl_id,
                ul_id,
                rnti,
            }),
            0..4,
        )
        .prop_map(UeAssoc)
    }

    proptest! {
        #[test]
        fn slice_messages_round_trip(dl in conf(), ul in conf(), ues in assoc(), t in any::<i64>(),
                                     ids in prop::collection::vec(any::<u32>(), 0..4)) {
            let ind = SliceIndication { dl: dl.clone(), ul: ul.clone(), ues: ues.clone(), tstamp_us: t };
            prop_assert_eq!(sc::decode::<SliceIndication>(&sc::encode(&ind)).unwrap(), ind);
            for c in [
                SliceControl::AddMod { dl, ul },
                SliceControl::Del { dl: ids.clone(), ul: ids },
                SliceControl::UeSliceAssoc(ues),
            ] {
                prop_assert_eq!(sc::decode::<SliceControl>(&sc::encode(&c)).unwrap(), c);
            }
        }
    }
}
