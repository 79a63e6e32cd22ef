//! Property tests: every message of E2AP and of each service model decodes
//! back to what was encoded.

use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use proptest::prelude::*;
use tcran_e2::asn::e2ap as a;
use tcran_e2::asn::e2sm_kpm as k;
use tcran_e2::asn::e2sm_tcran as t;
use tcran_e2::e2ap::*;
use tcran_e2::sm::aper_fast;
use tcran_e2::sm::flexric_tc::*;
use tcran_e2::sm::tc_status::{self, DrbStatus};

fn printable(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Za-z0-9 '()+,./:=?-]{{1,{max}}}")).unwrap()
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

fn rid() -> impl Strategy<Value = RicRequestId> {
    (any::<u16>(), any::<u16>()).prop_map(|(requestor, instance)| RicRequestId {
        requestor,
        instance,
    })
}

fn function_id() -> impl Strategy<Value = u16> {
    0u16..=4095
}

fn cause() -> impl Strategy<Value = Cause> {
    prop_oneof![
        (0u8..=13).prop_map(|v| Cause::RicRequest(a::CauseRICrequest(v))),
        (0u8..=2).prop_map(|v| Cause::RicService(a::CauseRICservice(v))),
        Just(Cause::E2Node(a::CauseE2node(0))),
        (0u8..=1).prop_map(|v| Cause::Transport(a::CauseTransport(v))),
        (0u8..=6).prop_map(|v| Cause::Protocol(a::CauseProtocol(v))),
        (0u8..=3).prop_map(|v| Cause::Misc(a::CauseMisc(v))),
    ]
}

fn diagnostics() -> impl Strategy<Value = Option<CriticalityDiagnostics>> {
    proptest::option::of(
        (
            proptest::option::of(any::<u8>()),
            proptest::option::of(rid()),
        )
            .prop_map(|(code, r)| CriticalityDiagnostics {
                procedure_code: code.map(a::ProcedureCode),
                triggering_message: Some(a::TriggeringMessage(0)),
                procedure_criticality: Some(a::Criticality(1)),
                ric_requestor_id: r.map(|r| a::RICrequestID {
                    ric_requestor_id: a::RICrequestIDRicRequestorID(r.requestor),
                    ric_instance_id: a::RICrequestIDRicInstanceID(r.instance),
                }),
                i_es_criticality_diagnostics: None,
            }),
    )
}

fn function() -> impl Strategy<Value = RanFunction> {
    (function_id(), bytes(64), 0u16..=4095, printable(40)).prop_map(
        |(id, definition, revision, oid)| RanFunction {
            id,
            definition,
            revision,
            oid,
        },
    )
}

fn revision() -> impl Strategy<Value = RanFunctionRevision> {
    (function_id(), 0u16..=4095).prop_map(|(id, revision)| RanFunctionRevision { id, revision })
}

fn component_id() -> impl Strategy<Value = E2nodeComponentID> {
    prop_oneof![
        printable(20).prop_map(|n| E2nodeComponentID::E2nodeComponentInterfaceTypeNG(
            a::E2nodeComponentInterfaceNG {
                amf_name: a::AMFName(n)
            }
        )),
        (0u64..=68_719_476_735).prop_map(|d| E2nodeComponentID::E2nodeComponentInterfaceTypeF1(
            a::E2nodeComponentInterfaceF1 {
                gnb_du_id: a::GNB_DU_ID(d)
            }
        )),
    ]
}

fn actions() -> impl Strategy<Value = Vec<Action>> {
    proptest::collection::vec(
        (
            any::<u8>(),
            0..3u8,
            proptest::option::of(bytes(32)),
            proptest::option::of((any::<bool>(), 0u8..=16)),
        )
            .prop_map(|(id, k, definition, sub)| Action {
                id,
                kind: [ActionType::Report, ActionType::Insert, ActionType::Policy][k as usize],
                definition,
                subsequent: sub.map(|(wait, time_to_wait)| SubsequentAction { wait, time_to_wait }),
            }),
        1..16,
    )
}

fn indication_pdu() -> impl Strategy<Value = E2apPdu> {
    (
        rid(),
        function_id(),
        any::<u8>(),
        proptest::option::of(any::<u16>()),
        any::<bool>(),
        bytes(64),
        bytes(300),
        proptest::option::of(bytes(8)),
    )
        .prop_map(
            |(request, function, action, sn, report, header, message, call_process_id)| {
                E2apPdu::Indication(Indication {
                    request,
                    function,
                    action,
                    sn,
                    kind: if report {
                        IndicationType::Report
                    } else {
                        IndicationType::Insert
                    },
                    header,
                    message,
                    call_process_id,
                })
            },
        )
}

fn pdu() -> impl Strategy<Value = E2apPdu> {
    let setup = (
        any::<u8>(),
        (any::<[u8; 3]>(), any::<u32>(), 22u8..=32),
        proptest::collection::vec(function(), 1..8),
        proptest::collection::vec((0u8..=6, component_id(), bytes(32), bytes(32)), 1..4),
    )
        .prop_map(|(transaction, (plmn, id, bits), functions, comps)| {
            E2apPdu::E2SetupRequest(E2SetupRequest {
                transaction,
                node: gnb_node_id(plmn, id & ((1u64 << bits) - 1) as u32, bits),
                functions,
                components: comps
                    .into_iter()
                    .map(
                        |(interface, id, request_part, response_part)| ComponentConfig {
                            interface,
                            id,
                            request_part,
                            response_part,
                        },
                    )
                    .collect(),
            })
        });
    let setup_response = (
        any::<u8>(),
        (any::<[u8; 3]>(), 0u32..(1 << 20)),
        proptest::option::of(proptest::collection::vec(revision(), 1..8)),
        proptest::option::of(proptest::collection::vec((function_id(), cause()), 1..4)),
        proptest::collection::vec(
            (
                0u8..=6,
                component_id(),
                any::<bool>(),
                proptest::option::of(cause()),
            ),
            1..4,
        ),
    )
        .prop_map(|(transaction, (plmn, ric_id), accepted, rejected, comps)| {
            E2apPdu::E2SetupResponse(E2SetupResponse {
                transaction,
                ric: GlobalRicId { plmn, ric_id },
                accepted,
                rejected,
                components: comps
                    .into_iter()
                    .map(
                        |(interface, id, success, failure_cause)| ComponentConfigAck {
                            interface,
                            id,
                            success,
                            failure_cause,
                        },
                    )
                    .collect(),
            })
        });
    let setup_failure = (
        any::<u8>(),
        cause(),
        proptest::option::of(0u8..=5),
        diagnostics(),
    )
        .prop_map(|(transaction, cause, time_to_wait, diagnostics)| {
            E2apPdu::E2SetupFailure(E2SetupFailure {
                transaction,
                cause,
                time_to_wait,
                diagnostics,
            })
        });
    let subscription = (rid(), function_id(), bytes(32), actions()).prop_map(
        |(request, function, event_trigger, actions)| {
            E2apPdu::SubscriptionRequest(SubscriptionRequest {
                request,
                function,
                event_trigger,
                actions,
            })
        },
    );
    let subscription_response = (
        rid(),
        function_id(),
        proptest::collection::vec(any::<u8>(), 1..16),
        proptest::option::of(proptest::collection::vec((any::<u8>(), cause()), 0..16)),
    )
        .prop_map(|(request, function, admitted, not_admitted)| {
            E2apPdu::SubscriptionResponse(SubscriptionResponse {
                request,
                function,
                admitted,
                not_admitted,
            })
        });
    let failures = (rid(), function_id(), cause(), diagnostics(), 0..2u8).prop_map(
        |(request, function, cause, diagnostics, which)| match which {
            0 => E2apPdu::SubscriptionFailure(SubscriptionFailure {
                request,
                function,
                cause,
                diagnostics,
            }),
            _ => E2apPdu::SubscriptionDeleteFailure(SubscriptionDeleteFailure {
                request,
                function,
                cause,
                diagnostics,
            }),
        },
    );
    let deletes = (rid(), function_id(), any::<bool>()).prop_map(|(request, function, req)| {
        let d = SubscriptionDelete { request, function };
        if req {
            E2apPdu::SubscriptionDeleteRequest(d)
        } else {
            E2apPdu::SubscriptionDeleteResponse(d)
        }
    });
    let indication = indication_pdu();
    let control = (
        rid(),
        function_id(),
        proptest::option::of(bytes(8)),
        bytes(16),
        bytes(100),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(
            |(request, function, call_process_id, header, message, ack_request)| {
                E2apPdu::ControlRequest(ControlRequest {
                    request,
                    function,
                    call_process_id,
                    header,
                    message,
                    ack_request,
                })
            },
        );
    let control_answers = (
        rid(),
        function_id(),
        proptest::option::of(bytes(8)),
        proptest::option::of(bytes(16)),
        proptest::option::of(cause()),
    )
        .prop_map(
            |(request, function, call_process_id, outcome, cause)| match cause {
                None => E2apPdu::ControlAcknowledge(ControlAcknowledge {
                    request,
                    function,
                    call_process_id,
                    outcome,
                }),
                Some(cause) => E2apPdu::ControlFailure(ControlFailure {
                    request,
                    function,
                    call_process_id,
                    cause,
                    outcome,
                }),
            },
        );
    let global = (
        proptest::option::of(any::<u8>()),
        proptest::option::of(rid()),
        proptest::option::of(function_id()),
        proptest::option::of(cause()),
        diagnostics(),
        any::<u8>(),
        0..9u8,
    )
        .prop_map(
            |(transaction, request, function, c, diagnostics, tr, which)| {
                let c2 = c.clone().unwrap_or(Cause::Misc(a::CauseMisc(3)));
                match which {
                    0 => E2apPdu::ErrorIndication(ErrorIndication {
                        transaction,
                        request,
                        function,
                        cause: c,
                        diagnostics,
                    }),
                    1 => E2apPdu::ResetRequest(ResetRequest {
                        transaction: tr,
                        cause: c2,
                    }),
                    2 => E2apPdu::ResetResponse(ResetResponse {
                        transaction: tr,
                        diagnostics,
                    }),
                    3 => E2apPdu::E2RemovalRequest { transaction: tr },
                    4 => E2apPdu::E2RemovalResponse(E2RemovalResponse {
                        transaction: tr,
                        diagnostics,
                    }),
                    5 => E2apPdu::E2RemovalFailure(E2RemovalFailure {
                        transaction: tr,
                        cause: c2,
                        diagnostics,
                    }),
                    6 => E2apPdu::ServiceUpdateFailure(ServiceUpdateFailure {
                        transaction: tr,
                        cause: c2,
                        time_to_wait: Some(3),
                        diagnostics,
                    }),
                    7 => E2apPdu::ServiceQuery(ServiceQuery {
                        transaction: tr,
                        accepted: None,
                    }),
                    _ => E2apPdu::ServiceUpdateAcknowledge(ServiceUpdateAcknowledge {
                        transaction: tr,
                        accepted: function.map(|id| vec![RanFunctionRevision { id, revision: 1 }]),
                        rejected: c.map(|c| vec![(7, c)]),
                    }),
                }
            },
        );
    let update = (
        any::<u8>(),
        proptest::option::of(proptest::collection::vec(function(), 1..4)),
        proptest::option::of(proptest::collection::vec(function(), 1..4)),
        proptest::option::of(proptest::collection::vec(revision(), 1..4)),
    )
        .prop_map(|(transaction, added, modified, deleted)| {
            E2apPdu::ServiceUpdate(ServiceUpdate {
                transaction,
                added,
                modified,
                deleted,
            })
        });
    prop_oneof![
        setup,
        setup_response,
        setup_failure,
        subscription,
        subscription_response,
        failures,
        deletes,
        indication,
        control,
        control_answers,
        global,
        update
    ]
}

fn filter() -> impl Strategy<Value = PlainFilter> {
    (
        any::<u32>(),
        any::<i64>(),
        any::<i64>(),
        any::<i32>(),
        any::<i32>(),
        any::<i32>(),
        any::<i32>(),
    )
        .prop_map(
            |(id, src_addr, dst_addr, src_port, dst_port, protocol, dst_queue)| PlainFilter {
                id,
                src_addr,
                dst_addr,
                src_port,
                dst_port,
                protocol,
                dst_queue,
            },
        )
}

fn finite() -> impl Strategy<Value = f32> {
    any::<f32>().prop_filter("finite", |f| f.is_finite())
}

fn indication() -> impl Strategy<Value = PlainIndication> {
    let queue = (
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            finite(),
            any::<u32>(),
        ),
        (
            any::<u32>(),
            finite(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            finite(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
        ),
        (
            0u32..3,
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            finite(),
            any::<i64>(),
        ),
    )
        .prop_map(|(s, p, q)| {
            (
                PlainShaper {
                    id: s.0,
                    active: s.1,
                    max_rate_kbps: s.2,
                    measured_kbps: s.3,
                    window_ms: s.4,
                },
                PlainPolicer {
                    id: p.0,
                    measured_kbps: p.1,
                    window_ms: p.2,
                    dropped: p.3,
                    marked: p.4,
                    max_rate_kbps: p.5,
                    active: p.6,
                    dst_id: p.7,
                    dev_id: p.8,
                },
                PlainQueue {
                    kind: q.0,
                    bytes: q.1,
                    packets: q.2,
                    bytes_forwarded: q.3,
                    packets_forwarded: q.4,
                    dropped_or_marked: q.5,
                    avg_sojourn_ms: q.6,
                    last_sojourn_us: q.7,
                },
            )
        });
    (
        prop_oneof![
            Just(PlainScheduler::RoundRobin),
            proptest::collection::vec(any::<u32>(), 0..8).prop_map(PlainScheduler::Priority)
        ],
        (0u32..2, any::<u32>(), finite(), any::<u32>()),
        prop_oneof![
            any::<u32>().prop_map(|dummy| PlainClassifier::RoundRobin { dummy }),
            proptest::collection::vec(filter(), 0..6).prop_map(PlainClassifier::Osi),
            any::<u32>().prop_map(|dummy| PlainClassifier::Stochastic { dummy }),
        ],
        proptest::collection::vec(queue, 0..12),
        any::<i64>(),
    )
        .prop_map(
            |(scheduler, p, classifier, queues, timestamp_us)| PlainIndication {
                scheduler,
                pacer: PlainPacer {
                    kind: p.0,
                    id: p.1,
                    bandwidth_kbps: p.2,
                    window_ms: p.3,
                },
                classifier,
                queues,
                timestamp_us,
            },
        )
}

fn plain_control() -> impl Strategy<Value = PlainControl> {
    let u = any::<u32>;
    prop_oneof![
        (1u32..3, u(), u()).prop_map(|(kind, target_ms, interval_ms)| PlainControl::QueueAdd {
            kind,
            target_ms,
            interval_ms
        }),
        Just(PlainControl::QueueAdd {
            kind: 0,
            target_ms: 0,
            interval_ms: 0
        }),
        (u(), u()).prop_map(|(id, kind)| PlainControl::QueueDel { id, kind }),
        (u(), 1u32..3, u(), u()).prop_map(|(id, kind, target_ms, interval_ms)| {
            PlainControl::QueueMod {
                id,
                kind,
                target_ms,
                interval_ms,
            }
        }),
        (any::<bool>(), filter())
            .prop_map(|(modify, filter)| PlainControl::ClsOsiFilter { modify, filter }),
        u().prop_map(|id| PlainControl::ClsOsiDel { id }),
        prop_oneof![Just(0u32), Just(2u32)].prop_map(|kind| PlainControl::ClsSet { kind }),
        Just(PlainControl::SchRoundRobin),
        proptest::collection::vec(u(), 0..8).prop_map(PlainControl::SchPriority),
        Just(PlainControl::ShpAdd),
        (u(), u(), u(), u()).prop_map(|(id, window_ms, rate_kbps, active)| PlainControl::ShpMod {
            id,
            window_ms,
            rate_kbps,
            active
        }),
        (u(), u(), u(), u(), u()).prop_map(
            |(id, drop_rate_kbps, dev_id, dev_rate_kbps, active)| PlainControl::PlcMod {
                id,
                drop_rate_kbps,
                dev_id,
                dev_rate_kbps,
                active
            }
        ),
        (u(), any::<i64>()).prop_map(|(drb_sz, timestamp_us)| PlainControl::PcrMod {
            kind: 1,
            drb_sz,
            timestamp_us
        }),
        any::<i64>().prop_map(|timestamp_us| PlainControl::PcrMod {
            kind: 0,
            drb_sz: 0,
            timestamp_us
        }),
    ]
}

fn aper<T: AperCodec<Output = T>>(v: &T) -> T {
    let mut d = PerCodecData::new_aper();
    v.aper_encode(&mut d).unwrap();
    T::aper_decode(&mut PerCodecData::from_slice_aper(&d.into_bytes())).unwrap()
}

fn kpm_record() -> impl Strategy<Value = k::MeasurementRecordItem> {
    prop_oneof![
        any::<u32>()
            .prop_map(|v| k::MeasurementRecordItem::Integer(k::MeasurementRecordItem_integer(v))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|v| k::MeasurementRecordItem::Real(k::MeasurementRecordItem_real(v))),
        Just(k::MeasurementRecordItem::NoValue(
            k::MeasurementRecordItem_noValue
        )),
    ]
}

fn kpm_format1() -> impl Strategy<Value = k::E2SM_KPM_IndicationMessage_Format1> {
    (
        proptest::collection::vec(proptest::collection::vec(kpm_record(), 1..8), 1..4),
        proptest::option::of(1u32..=u32::MAX),
    )
        .prop_map(|(records, granul)| k::E2SM_KPM_IndicationMessage_Format1 {
            meas_data: k::MeasurementData(
                records
                    .into_iter()
                    .map(|r| k::MeasurementDataItem {
                        meas_record: k::MeasurementRecord(r),
                        incomplete_flag: None,
                    })
                    .collect(),
            ),
            meas_info_list: None,
            granul_period: granul.map(k::GranularityPeriod),
        })
}

/// Counters of every size class (one to eight octets), zero included, so
/// that narrowing conversions (to u32, usize) see values on both sides.
fn counter() -> impl Strategy<Value = t::Counter> {
    prop_oneof![Just(0u64), 0u64..256, 0u64..=u32::MAX as u64, any::<u64>(),].prop_map(t::Counter)
}

fn lower() -> impl Strategy<Value = t::LowerLayerKpis> {
    (
        counter(),
        counter(),
        counter(),
        counter(),
        counter(),
        counter(),
        0u8..=31,
        proptest::option::of(-12500i16..=12500),
    )
        .prop_map(|(a, b, c, d, e, f, mcs, margin)| t::LowerLayerKpis {
            rlc_backlog_bytes: a,
            rlc_backlog_sdus: b,
            rlc_sojourn_us: c,
            rlc_tx_bytes: d,
            mac_tx_bytes: e,
            mac_prbs: f,
            mcs: t::LowerLayerKpisMcs(mcs),
            handover_margin: margin.map(t::HandoverMargin),
        })
}

/// The largest indication tcran sends (a 16,000-byte message, two-octet
/// lengths at every level) and the empty one are hampi's bytes too.
#[test]
fn fast_ric_indication_encoding_at_the_size_limits() {
    for (header, message) in [
        (vec![], vec![]),
        (vec![7; 127], vec![9; 128]),
        (vec![1; 40], vec![0xa5; 16_000]),
    ] {
        let p = E2apPdu::Indication(Indication {
            request: RicRequestId {
                requestor: 65535,
                instance: 1,
            },
            function: 4095,
            action: 255,
            sn: Some(65535),
            kind: IndicationType::Report,
            header,
            message,
            call_process_id: Some(vec![3; 200]),
        });
        let E2apPdu::Indication(m) = &p else {
            unreachable!()
        };
        assert_eq!(
            tcran_e2::e2ap::encode_indication(m).unwrap(),
            tcran_e2::e2ap::encode_generic(&p).unwrap()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn e2ap_messages_round_trip(p in pdu()) {
        let bytes = encode(&p).unwrap();
        prop_assert_eq!(decode(&bytes).unwrap(), p);
    }

    #[test]
    fn flexric_tc_indications_round_trip(i in indication()) {
        prop_assert_eq!(PlainIndication::decode(&i.encode()).unwrap(), i);
    }

    #[test]
    fn flexric_tc_controls_round_trip(c in plain_control(), trailing in bytes(8)) {
        let mut b = c.encode();
        prop_assert_eq!(PlainControl::decode(&b).unwrap(), c.clone());
        b.extend_from_slice(&trailing);
        // Trailing bytes are tolerated, except where they would complete a
        // longer form (a 40-byte filter followed by 8 more bytes reads as
        // a 48-byte one; PCR's optional timestamp).
        if !matches!(c, PlainControl::ClsOsiFilter { .. } | PlainControl::PcrMod { .. }) {
            prop_assert_eq!(PlainControl::decode(&b).unwrap(), c);
        }
    }

    #[test]
    fn kpm_messages_round_trip(f1 in kpm_format1(), ues in proptest::collection::vec((any::<u16>(), kpm_format1()), 1..4), period in 1u32..=u32::MAX) {
        use k::E2SM_KPM_IndicationMessageIndicationMessage_formats as M;
        let m1 = k::E2SM_KPM_IndicationMessage { indication_message_formats: M::IndicationMessage_Format1(f1) };
        prop_assert_eq!(aper(&m1), m1);
        let m3 = k::E2SM_KPM_IndicationMessage {
            indication_message_formats: M::IndicationMessage_Format3(k::E2SM_KPM_IndicationMessage_Format3 {
                ue_meas_report_list: k::UEMeasurementReportList(
                    ues.into_iter()
                        .map(|(rnti, f)| k::UEMeasurementReportItem { ue_id: tcran_e2::sm::kpm::ue_id(tcran_core::Rnti(rnti)), meas_report: f })
                        .collect(),
                ),
            }),
        };
        prop_assert_eq!(aper(&m3), m3);
        let trig = tcran_e2::sm::kpm::event_trigger(period);
        let back = k::E2SM_KPM_EventTriggerDefinition::aper_decode(&mut PerCodecData::from_slice_aper(&trig)).unwrap();
        let k::E2SM_KPM_EventTriggerDefinitionEventDefinition_formats::EventDefinition_Format1(f) = back.event_definition_formats;
        prop_assert_eq!(f.reporting_period.0, period);
    }

    #[test]
    fn tcran_model_messages_round_trip(
        rnti in any::<u16>(), drb in 1u8..=32, up in any::<bool>(), lower in lower(), time in any::<u64>(),
        threshold in any::<u64>(), period in 1u32..=86_400_000, metric in 0u8..5, edge in any::<bool>(),
    ) {
        use tcran_e2::sm::e2sm_tcran as m;
        let report = t::DrbReport {
            drb: t::DrbRef { rnti: t::DrbRefRnti(rnti), drb: t::DrbRefDrb(drb), direction: up.then_some(t::TcDirection(1)) },
            totals: t::PipelineTotals {
                in_packets: t::Counter(time), in_bytes: t::Counter(1), out_packets: t::Counter(2), out_bytes: t::Counter(3),
                dropped_packets: t::Counter(4), dropped_bytes: t::Counter(5), queued_packets: t::Counter(6), queued_bytes: t::Counter(7),
            },
            classifier: t::ClassifierCounters { classified: t::Counter(1), defaulted: t::Counter(2), missing_queue: t::Counter(3), malformed: t::Counter(threshold) },
            queues: t::DrbReportQueues(vec![]),
            scheduler: t::DrbReportScheduler("priority".into()),
            pacer: t::PacerReport { kind: t::PacerReportKind("bdp".into()), bandwidth_bps: t::Counter(time), allowance_bytes: t::Counter(1), limit: None, refused: t::Counter(0) },
            lower,
        };
        let msg = t::TcIndicationMessage { reports: t::TcIndicationMessageReports(vec![report]) };
        prop_assert_eq!(aper(&msg), msg);
        let metric = [m::Metric::RlcSojournUs, m::Metric::RlcBacklogBytes, m::Metric::TcSojournUs, m::Metric::TcBacklogPackets, m::Metric::TcDropsPerCheck][metric as usize];
        for trig in [
            m::Trigger::Periodic { period_ms: period },
            m::Trigger::Condition { check_period_ms: period, metric, threshold, rising_edge_only: edge },
        ] {
            prop_assert_eq!(m::decode_event_trigger(&m::event_trigger(&trig)).unwrap(), trig);
        }
    }
}

fn short_string(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[a-z_0-9]{{1,{max}}}")).unwrap()
}

/// A reason name: one tcran knows (drop or mark; a short list of them
/// repeats names) or any other.
fn reason_name() -> impl Strategy<Value = String> {
    use tcran_core::reason::{DropReason, MarkReason};
    let known: Vec<&'static str> = DropReason::ALL
        .iter()
        .map(|r| r.label())
        .chain(MarkReason::ALL.iter().map(|r| r.label()))
        .collect();
    prop_oneof![
        2 => proptest::sample::select(known).prop_map(str::to_owned),
        1 => short_string(32),
    ]
}

/// A queue kind tcran's statistics know, one they do not, or any name.
fn queue_kind_name() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => proptest::sample::select(&["fifo", "codel", "red", "pie", "l4s", "dualq", "plugin", "fq_codel"][..])
            .prop_map(str::to_owned),
        1 => short_string(16),
    ]
}

fn reasons() -> impl Strategy<Value = Vec<t::ReasonCount>> {
    proptest::collection::vec(
        (reason_name(), counter()).prop_map(|(r, c)| t::ReasonCount {
            reason: t::ReasonCountReason(r),
            count: c,
        }),
        0..4,
    )
}

fn queue_report() -> impl Strategy<Value = t::QueueReport> {
    (
        (
            0u16..=8191,
            queue_kind_name(),
            proptest::collection::vec(counter(), 10),
        ),
        (reasons(), reasons()),
        (
            proptest::option::of(proptest::collection::vec(counter(), 8)),
            proptest::option::of(proptest::collection::vec(counter(), 3)),
        ),
        (
            proptest::option::of(0u32..=1_000_000),
            proptest::option::of(any::<bool>()),
            proptest::option::of(counter()),
        ),
    )
        .prop_map(
            |((id, kind, c), (drops, marks), (pol, shp), (prob, dropping, count))| t::QueueReport {
                id: t::QueueReportId(id),
                kind: t::QueueReportKind(kind),
                backlog_packets: c[0].clone(),
                backlog_bytes: c[1].clone(),
                offered_packets: c[2].clone(),
                offered_bytes: c[3].clone(),
                forwarded_packets: c[4].clone(),
                forwarded_bytes: c[5].clone(),
                drops: t::QueueReportDrops(drops),
                marks: t::QueueReportMarks(marks),
                redirected_out: c[6].clone(),
                moved_in_packets: c[7].clone(),
                avg_sojourn_us: c[8].clone(),
                last_sojourn_us: c[9].clone(),
                policer: pol.map(|p| t::PolicerReport {
                    rate_bps: p[0].clone(),
                    burst_bytes: p[1].clone(),
                    passed_packets: p[2].clone(),
                    dropped_packets: p[3].clone(),
                    marked_packets: p[4].clone(),
                    redirected_packets: p[5].clone(),
                    measured_bps: p[6].clone(),
                    out_of_profile_bps: p[7].clone(),
                }),
                shaper: shp.map(|s| t::ShaperReport {
                    rate_bps: s[0].clone(),
                    measured_bps: s[1].clone(),
                    delayed: s[2].clone(),
                }),
                aqm: t::AqmReport {
                    probability_ppm: prob.map(t::AqmReportProbabilityPpm),
                    dropping: dropping.map(t::AqmReportDropping),
                    count,
                },
            },
        )
}

fn drb_report() -> impl Strategy<Value = t::DrbReport> {
    (
        (
            any::<u16>(),
            1u8..=32,
            proptest::collection::vec(counter(), 12),
            proptest::option::of(0u8..=1),
        ),
        proptest::collection::vec(queue_report(), 0..4),
        (
            short_string(32),
            short_string(16),
            proptest::collection::vec(counter(), 3),
            proptest::option::of(counter()),
        ),
        lower(),
    )
        .prop_map(
            |((rnti, drb, c, direction), queues, (sched, pacer, p, limit), lower)| t::DrbReport {
                drb: t::DrbRef {
                    rnti: t::DrbRefRnti(rnti),
                    drb: t::DrbRefDrb(drb),
                    direction: direction.map(t::TcDirection),
                },
                totals: t::PipelineTotals {
                    in_packets: c[0].clone(),
                    in_bytes: c[1].clone(),
                    out_packets: c[2].clone(),
                    out_bytes: c[3].clone(),
                    dropped_packets: c[4].clone(),
                    dropped_bytes: c[5].clone(),
                    queued_packets: c[6].clone(),
                    queued_bytes: c[7].clone(),
                },
                classifier: t::ClassifierCounters {
                    classified: c[8].clone(),
                    defaulted: c[9].clone(),
                    missing_queue: c[10].clone(),
                    malformed: c[11].clone(),
                },
                queues: t::DrbReportQueues(queues),
                scheduler: t::DrbReportScheduler(sched),
                pacer: t::PacerReport {
                    kind: t::PacerReportKind(pacer),
                    bandwidth_bps: p[0].clone(),
                    allowance_bytes: p[1].clone(),
                    limit,
                    refused: p[2].clone(),
                },
                lower,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The direct encoder of RIC Indications writes exactly hampi's bytes.
    #[test]
    fn fast_ric_indication_encoding_is_hampis(p in indication_pdu()) {
        let E2apPdu::Indication(m) = &p else { unreachable!() };
        let fast = tcran_e2::e2ap::encode_indication(m).expect("no fragmentation needed");
        prop_assert_eq!(fast, tcran_e2::e2ap::encode_generic(&p).unwrap());
    }
}

/// `bytes` with a few bytes XORed (`flips`: position, mask) and cut to
/// `keep` of its length (in 1/256ths; 256 keeps everything).
fn mutated(mut bytes: Vec<u8>, flips: &[(usize, u8)], keep: usize) -> Vec<u8> {
    if !bytes.is_empty() {
        let n = bytes.len();
        for (i, m) in flips {
            bytes[i % n] ^= m;
        }
    }
    let keep = (bytes.len() * keep.min(256)).div_ceil(256);
    bytes.truncate(keep);
    bytes
}

fn flips() -> impl Strategy<Value = Vec<(usize, u8)>> {
    proptest::collection::vec((any::<usize>(), 1u8..=255), 0..3)
}

fn keep() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(256usize), 1 => 0usize..256]
}

/// hampi's encoding of a `TcIndicationMessage` of `reports` (the node's
/// streamed bytes are these, `tests/integration/report_stream.rs`).
fn hampi_tc_bytes(reports: Vec<t::DrbReport>) -> Vec<u8> {
    let msg = t::TcIndicationMessage {
        reports: t::TcIndicationMessageReports(reports),
    };
    let mut d = PerCodecData::new_aper();
    msg.aper_encode(&mut d).unwrap();
    d.into_bytes()
}

fn hampi_tc_message(bytes: &[u8]) -> Result<t::TcIndicationMessage, String> {
    t::TcIndicationMessage::aper_decode(&mut PerCodecData::from_slice_aper(bytes))
        .map_err(|e| e.to_string())
}

fn hampi_tc_header_bytes(h: &t::TcIndicationHeader) -> Vec<u8> {
    let mut d = PerCodecData::new_aper();
    h.aper_encode(&mut d).unwrap();
    d.into_bytes()
}

fn hampi_tc_header(bytes: &[u8]) -> Result<t::TcIndicationHeader, String> {
    t::TcIndicationHeader::aper_decode(&mut PerCodecData::from_slice_aper(bytes))
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The direct decoder of RIC Indications takes every indication tcran
    /// encodes and gives what hampi's decoder gives.
    #[test]
    fn fast_ric_indication_decoding_is_hampis(p in indication_pdu()) {
        let E2apPdu::Indication(m) = &p else { unreachable!() };
        let bytes = tcran_e2::e2ap::encode(&p).unwrap();
        prop_assert_eq!(tcran_e2::e2ap::decode_indication(&bytes), Some(m.clone()));
        prop_assert_eq!(tcran_e2::e2ap::decode_generic(&bytes).unwrap(), p.clone());
        prop_assert_eq!(tcran_e2::e2ap::decode(&bytes).unwrap(), p);
    }

    /// On damaged indications, whatever the direct decoder accepts hampi
    /// decodes identically (the rest falls back to hampi).
    #[test]
    fn fast_ric_indication_decoding_agrees_on_damaged_bytes(
        p in indication_pdu(), f in flips(), k in keep(),
    ) {
        let bytes = mutated(tcran_e2::e2ap::encode(&p).unwrap(), &f, k);
        if let Some(fast) = tcran_e2::e2ap::decode_indication(&bytes) {
            prop_assert_eq!(tcran_e2::e2ap::decode_generic(&bytes), Ok(E2apPdu::Indication(fast)));
        }
        prop_assert_eq!(tcran_e2::e2ap::decode(&bytes), tcran_e2::e2ap::decode_generic(&bytes));
    }

    /// The direct E2SM-TCRAN decoder takes every indication message and
    /// header hampi encodes, and gives hampi's header and hampi's reports
    /// converted to statuses (`drb_status_of`).
    #[test]
    fn fast_tcran_indication_decoding_is_hampis(
        reports in proptest::collection::vec(drb_report(), 0..5),
        time in any::<u64>(), condition in any::<bool>(),
    ) {
        let bytes = hampi_tc_bytes(reports.clone());
        let msg = t::TcIndicationMessage { reports: t::TcIndicationMessageReports(reports.clone()) };
        prop_assert_eq!(hampi_tc_message(&bytes).unwrap(), msg);
        let time_s = time as f64 / 1e9;
        let want: Vec<DrbStatus> = reports.into_iter().map(|r| tc_status::drb_status_of(r, time_s)).collect();
        prop_assert_eq!(aper_fast::decode_statuses(&bytes, time_s), Some(want.clone()));
        let h = t::TcIndicationHeader {
            time_ns: t::Counter(time),
            cause: t::TcIndicationHeaderCause(condition as u8),
        };
        let hb = hampi_tc_header_bytes(&h);
        prop_assert_eq!(aper_fast::decode_indication_header(&hb), Some(h.clone()));
        prop_assert_eq!(hampi_tc_header(&hb).unwrap(), h);
        let ind = tc_status::decode_tc(&hb, &bytes).unwrap();
        prop_assert_eq!(&ind, &tc_status::decode_tc_generic(&hb, &bytes).unwrap());
        prop_assert_eq!((ind.time_ns, ind.condition), (time, condition));
        prop_assert_eq!(ind.drbs, want);
    }

    /// On damaged E2SM-TCRAN messages and headers, whatever the direct
    /// decoders accept hampi decodes (and converts) identically, and the
    /// RIC's decoder always gives hampi's result, error included.
    #[test]
    fn fast_tcran_indication_decoding_agrees_on_damaged_bytes(
        reports in proptest::collection::vec(drb_report(), 0..3),
        time in any::<u64>(), f in flips(), k in keep(),
    ) {
        let bytes = mutated(hampi_tc_bytes(reports), &f, k);
        let time_s = time as f64 / 1e9;
        if let Some(fast) = aper_fast::decode_statuses(&bytes, time_s) {
            prop_assert_eq!(tc_status::statuses_generic(&bytes, time_s), Some(fast));
        }
        let h = t::TcIndicationHeader {
            time_ns: t::Counter(time),
            cause: t::TcIndicationHeaderCause(0),
        };
        let hb = mutated(hampi_tc_header_bytes(&h), &f, k);
        if let Some(fast) = aper_fast::decode_indication_header(&hb) {
            prop_assert_eq!(hampi_tc_header(&hb), Ok(fast));
        }
        prop_assert_eq!(
            tc_status::decode_tc(&hb, &bytes),
            tc_status::decode_tc_generic(&hb, &bytes)
        );
    }

    /// The node's own encoder output (`sm::report_stream`, from pipeline
    /// statistics with tcran's queue kinds and reasons): the direct
    /// decoder takes it and gives hampi's reports converted to statuses;
    /// on damaged copies of it, the RIC's decoder gives hampi's result.
    #[test]
    fn fast_tcran_statuses_of_the_node_encoder_are_hampis(
        drbs in proptest::collection::vec(
            (crate::report_stream::drb(), crate::report_stream::stats(), crate::report_stream::lower()),
            0..5,
        ),
        time in any::<u64>(), f in flips(), k in keep(),
    ) {
        let mut s = tcran_e2::sm::report_stream::ReportStream::new();
        s.start();
        for (d, st, l) in &drbs {
            prop_assert!(s.push(*d, st, l, usize::MAX));
        }
        let bytes = s.finish().to_vec();
        let time_s = time as f64 / 1e9;
        let fast = aper_fast::decode_statuses(&bytes, time_s);
        prop_assert!(fast.is_some(), "the direct decoder takes the node's messages");
        prop_assert_eq!(&fast, &tc_status::statuses_generic(&bytes, time_s));
        // The statuses carry the node's DRBs, queue kinds and drops.
        let fast = fast.unwrap();
        prop_assert_eq!(fast.len(), drbs.len());
        for (got, (d, st, l)) in fast.iter().zip(&drbs) {
            prop_assert_eq!((got.drb.rnti, got.drb.dir), (d.rnti, d.dir));
            prop_assert_eq!(got.lower.rlc_backlog_bytes, l.rlc_backlog_bytes);
            prop_assert_eq!(&got.stats.scheduler, &st.scheduler);
            prop_assert_eq!(got.stats.queues.len(), st.queues.len());
            for (a, b) in got.stats.queues.iter().zip(&st.queues) {
                prop_assert_eq!(a.kind, tc_status::queue_kind(b.kind));
                prop_assert_eq!(&a.drops, &b.drops);
                prop_assert_eq!(&a.marks, &b.marks);
            }
        }
        let hb = hampi_tc_header_bytes(&t::TcIndicationHeader {
            time_ns: t::Counter(time),
            cause: t::TcIndicationHeaderCause(1),
        });
        let damaged = mutated(bytes, &f, k);
        if let Some(fast) = aper_fast::decode_statuses(&damaged, time_s) {
            prop_assert_eq!(tc_status::statuses_generic(&damaged, time_s), Some(fast));
        }
        prop_assert_eq!(
            tc_status::decode_tc(&hb, &damaged),
            tc_status::decode_tc_generic(&hb, &damaged)
        );
    }
}
