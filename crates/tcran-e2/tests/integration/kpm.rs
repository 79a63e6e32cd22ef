//! E2SM-KPM: FlexRIC's KPM RAN function description (in its E2 Setup
//! Request) round-trips through tcran's ASN.1; the extension alternatives
//! hampi lacks are encoded as X.691 says; measurements follow TS 28.552.

use crate::common;

use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use tcran_control::KpmCounters;
use tcran_core::Duration;
use tcran_e2::asn::e2sm_kpm as k;
use tcran_e2::e2ap::{self, E2apPdu};
use tcran_e2::sm::kpm::{self, measure, Value};

fn encode<T: AperCodec>(v: &T) -> Vec<u8> {
    let mut d = PerCodecData::new_aper();
    v.aper_encode(&mut d).unwrap();
    d.into_bytes()
}

#[test]
fn flexrics_kpm_function_description_round_trips() {
    let v = common::vectors()
        .into_iter()
        .find(|v| v.message == "E2setupRequest")
        .unwrap();
    let E2apPdu::E2SetupRequest(s) = e2ap::decode(&v.bytes).unwrap() else {
        panic!()
    };
    let f = s
        .functions
        .iter()
        .find(|f| f.id == 2)
        .expect("KPM function");
    assert_eq!(f.oid, kpm::OID);
    let d = k::E2SM_KPM_RANfunction_Description::aper_decode(&mut PerCodecData::from_slice_aper(
        &f.definition,
    ))
    .expect("decodes");
    assert_eq!(
        d.ran_function_name.ran_function_short_name.0,
        "ORAN-E2SM-KPM"
    );
    let styles = d.ric_report_style_list.as_ref().unwrap();
    assert_eq!(styles.0[0].ric_report_style_name.0, "Dummy style name");
    let names: Vec<String> = styles.0[0]
        .meas_info_action_list
        .0
        .iter()
        .map(|m| m.meas_name.0.clone())
        .collect();
    assert!(names.contains(&"DRB.UEThpDl".to_string()), "{names:?}");
    assert_eq!(encode(&d), f.definition);
}

#[test]
fn extension_alternatives_are_open_types_after_a_normally_small_index() {
    // X.691 23.8: extension bit 1, index as a normally small number (bit 0
    // + 6 bits), then the value as an open type (11.2): octet-aligned
    // length and the value's complete encoding.
    let def = kpm::action_definition(4, &["DRB.UEThpDl"], 100);
    let f4 = {
        let d = k::E2SM_KPM_ActionDefinition::aper_decode(&mut PerCodecData::from_slice_aper(&def))
            .unwrap();
        let k::E2SM_KPM_ActionDefinitionActionDefinition_formats::ActionDefinition_Format4(f4) =
            d.action_definition_formats.clone()
        else {
            panic!("format 4")
        };
        assert_eq!(encode(&d), def);
        f4
    };
    let inner = encode(&f4);
    // SEQUENCE ext bit 0 + padding; ric-Style-Type 4: length 1, value 4;
    // CHOICE: ext bit 1, index 0 as 0|000000 = 0x80; open type length.
    let mut expected = vec![0x00, 0x01, 0x04, 0x80, inner.len() as u8];
    expected.extend_from_slice(&inner);
    assert_eq!(def, expected);

    // Indication message format 3: SEQUENCE ext bit 0, CHOICE ext bit 1,
    // index 0 (0|000000): bits 0 1 0000000 -> 0x40 0x00, then the open type.
    let f3 = k::E2SM_KPM_IndicationMessage_Format3 {
        ue_meas_report_list: k::UEMeasurementReportList(vec![k::UEMeasurementReportItem {
            ue_id: kpm::ue_id(tcran_core::Rnti(0x4601)),
            meas_report: k::E2SM_KPM_IndicationMessage_Format1 {
                meas_data: k::MeasurementData(vec![k::MeasurementDataItem {
                    meas_record: k::MeasurementRecord(vec![k::MeasurementRecordItem::NoValue(
                        k::MeasurementRecordItem_noValue,
                    )]),
                    incomplete_flag: None,
                }]),
                meas_info_list: None,
                granul_period: None,
            },
        }]),
    };
    let inner = encode(&f3);
    let msg = k::E2SM_KPM_IndicationMessage {
        indication_message_formats:
            k::E2SM_KPM_IndicationMessageIndicationMessage_formats::IndicationMessage_Format3(f3),
    };
    let bytes = encode(&msg);
    let mut expected = vec![0x40, 0x00, inner.len() as u8];
    expected.extend_from_slice(&inner);
    assert_eq!(bytes, expected);
    let back =
        k::E2SM_KPM_IndicationMessage::aper_decode(&mut PerCodecData::from_slice_aper(&bytes))
            .unwrap();
    assert_eq!(back, msg);
}

#[test]
fn measurements_follow_ts_28_552() {
    let a = KpmCounters::default();
    let b = KpmCounters {
        // 12 Mbit in 0.8 s of bursts: 15,000 kbit/s.
        thp_volume_bits_dl: 12_000_000,
        thp_time_dl: Duration::from_millis(800),
        // 4 SDUs, 10 ms in total: 2.5 ms = 25 x 0.1 ms.
        rlc_sdu_delay_sum: Duration::from_millis(10),
        rlc_sdus_delivered: 4,
        rlc_sdu_transmitted_bits_dl: 12_345_678,
        pdcp_sdu_bits_dl: 12_999_999,
        // 1000 slots of 106 available PRBs, 53 used for data, 60 in total.
        prb_used_dl: 53_000,
        prb_available_dl: 106_000,
        prb_used_total_dl: 60_000,
        slots: 1000,
        ..KpmCounters::default()
    };
    assert_eq!(measure("DRB.UEThpDl", &a, &b), Value::Real(15_000.0));
    assert_eq!(measure("DRB.RlcSduDelayDl", &a, &b), Value::Real(25.0));
    assert_eq!(
        measure("DRB.RlcSduTransmittedVolumeDL", &a, &b),
        Value::Integer(12_345)
    );
    assert_eq!(measure("DRB.PdcpSduVolumeDL", &a, &b), Value::Integer(12));
    assert_eq!(measure("RRU.PrbUsedDl", &a, &b), Value::Integer(53));
    assert_eq!(measure("RRU.PrbAvailDl", &a, &b), Value::Integer(106));
    assert_eq!(measure("RRU.PrbTotDl", &a, &b), Value::Integer(57)); // 56.6 %
                                                                     // No samples: no value.
    for m in [
        "DRB.UEThpDl",
        "DRB.RlcSduDelayDl",
        "RRU.PrbUsedDl",
        "RRU.PrbAvailDl",
        "RRU.PrbTotDl",
    ] {
        assert_eq!(measure(m, &b, &b), Value::NoValue, "{m}");
    }
    // Volumes carry their remainder: 0.999999 Mbit then 0.000002 Mbit more
    // reports 0 then 1, adding up to the whole.
    let c = KpmCounters {
        pdcp_sdu_bits_dl: 13_000_001,
        ..b
    };
    assert_eq!(measure("DRB.PdcpSduVolumeDL", &b, &c), Value::Integer(1));
}

#[test]
fn handover_counters_report_the_handovers_of_the_period() {
    use tcran_control::HandoverCounters;
    // Before: 3 handovers out (2 completed), 1 in. During the period one
    // more out, decided and completed, and the third completed.
    let a = KpmCounters {
        handovers: HandoverCounters {
            prep_requested: 3,
            prep_succeeded: 3,
            res_alloc_requested: 1,
            res_alloc_succeeded: 1,
            exe_requested: 3,
            exe_succeeded: 2,
        },
        ..KpmCounters::default()
    };
    let b = KpmCounters {
        handovers: HandoverCounters {
            prep_requested: 4,
            prep_succeeded: 4,
            exe_requested: 4,
            exe_succeeded: 4,
            ..a.handovers
        },
        ..a
    };
    let period: Vec<Value> = kpm::MOBILITY_MEASUREMENTS
        .iter()
        .map(|m| measure(m, &a, &b))
        .collect();
    // MM.HoPrepInterReq, -Succ, MM.HoResAlloInterReq, -Succ,
    // MM.HoExeInterReq, -Succ (TS 28.552 5.1.1.6.1.1/2/4/5/7/8).
    let n = Value::Integer;
    assert_eq!(period, [n(1), n(1), n(0), n(0), n(1), n(2)]);
    // Offered in the RAN function definition with the others.
    let d = kpm::Kpm::description();
    let offered: Vec<String> = d.ric_report_style_list.unwrap().0[0]
        .meas_info_action_list
        .0
        .iter()
        .map(|m| m.meas_name.0.clone())
        .collect();
    for m in kpm::MOBILITY_MEASUREMENTS {
        assert!(offered.iter().any(|o| o == m), "{m}: {offered:?}");
    }
}

mod styles {
    use tcran_control::DrbKey;
    use tcran_core::{Duration, Instant, Rnti};
    use tcran_e2::e2ap::{Action, ActionType};
    use tcran_e2::fake::FakeNode;
    use tcran_e2::sm::kpm::{self, Dialect, Kpm};
    use tcran_e2::sm::ServiceModel;
    use tcran_tc::queue::{FifoConfig, QueueKindConfig};
    use tcran_tc::PipelineConfig;

    fn node() -> FakeNode {
        let mut n = FakeNode::new();
        for rnti in [0x4601, 0x4602] {
            n.add_drb(
                DrbKey::new(rnti, 1),
                &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
            )
            .unwrap();
        }
        n
    }

    /// The report of `style` after one granularity period (10 ms).
    fn report(style: i64, ues: &[Rnti], dialect: Dialect) -> kpm::KpmReport {
        let n = node();
        let m = Kpm {
            dialect,
            ..Kpm::default()
        };
        let def = kpm::action_definition_of_ues(style, &["DRB.UEThpDl", "RRU.PrbAvailDl"], 10, ues);
        let action = Action {
            id: 0,
            kind: ActionType::Report,
            definition: Some(def),
            subsequent: None,
        };
        let mut job = m.subscribe(&kpm::event_trigger(10), &action, &n).unwrap();
        assert!(m.indicate(&mut job.state, &n, Instant::ZERO).is_empty());
        let inds = m.indicate(
            &mut job.state,
            &n,
            Instant::ZERO + Duration::from_millis(10),
        );
        assert_eq!(inds.len(), 1, "style {style}");
        kpm::decode_indication(&inds[0].1).unwrap()
    }

    #[test]
    fn each_report_style_answers_with_its_message_format() {
        let (a, b) = (Rnti(0x4601), Rnti(0x4602));
        // Style 1 and 3: the cell (formats 1 and 2).
        for style in [1, 3] {
            let r = report(style, &[], Dialect::Standard);
            assert_eq!(r.records.len(), 1);
            assert_eq!(r.records[0].0, None, "style {style}");
            assert_eq!(r.names, ["DRB.UEThpDl", "RRU.PrbAvailDl"]);
        }
        // Style 2: the one UE asked for (format 1).
        let r = report(2, &[b], Dialect::Standard);
        assert_eq!(r.records.len(), 1);
        // Style 4: every UE; style 5: those listed that exist (format 3).
        let ues = |r: kpm::KpmReport| r.records.iter().map(|(u, _)| *u).collect::<Vec<_>>();
        assert_eq!(ues(report(4, &[], Dialect::Standard)), [Some(a), Some(b)]);
        assert_eq!(ues(report(5, &[b, Rnti(7)], Dialect::Standard)), [Some(b)]);
    }

    #[test]
    fn flexrics_dialect_writes_zero_where_the_standard_has_no_value() {
        // An idle node: no burst, so no throughput sample.
        let std = report(1, &[], Dialect::Standard);
        assert_eq!(std.records[0].1[0][0], kpm::Value::NoValue);
        let flexric = report(1, &[], Dialect::Flexric);
        assert_eq!(flexric.records[0].1[0][0], kpm::Value::Integer(0));
    }

    #[test]
    fn collect_start_time_is_ntp_seconds_or_flexrics_microseconds() {
        // 2023-11-14T22:13:20Z = Unix 1,700,000,000 s; NTP = Unix +
        // 2,208,988,800 s (RFC 5905 figure 4: the eras' offset).
        let unix_us = 1_700_000_000_000_000i64;
        let t = Instant::ZERO + Duration::from_micros(250);
        let standard = Kpm {
            time_offset_us: unix_us,
            dialect: Dialect::Standard,
        };
        assert_eq!(
            standard.collect_start_time(t),
            3_908_988_800u32.to_be_bytes()
        );
        let flexric = Kpm {
            time_offset_us: unix_us,
            dialect: Dialect::Flexric,
        };
        // FlexRIC reads the 4 octets little-endian as the low 32 bits of
        // its microsecond clock (FLEXRIC-SMS.md section 9).
        assert_eq!(
            flexric.collect_start_time(t),
            ((unix_us + 250) as u32).to_le_bytes()
        );
    }
}
