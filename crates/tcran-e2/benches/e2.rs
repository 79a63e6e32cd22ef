//! The agent's share of E2 work, per operation (docs/performance.md, "E2
//! agent"):
//! - `control_round_trip/*`: a RIC Control Request's bytes in, the
//!   Acknowledge's bytes out: E2AP decode, service model decode, mapping,
//!   the node applying it to a real pipeline (all or nothing), encode.
//! - `indication/*`: one RIC Indication from the node's state to bytes
//!   (view, service model encoding, E2AP encoding): FlexRIC TC for one
//!   DRB, E2SM-TCRAN for 1,000 DRBs in one indication, KPM style 4 for
//!   1,000 UEs, FlexRIC's MAC, RLC, PDCP and GTP monitoring of 1,000 UEs
//!   with a DRB each (the four models' indications of one period, what
//!   `xapp_gtp_mac_rlc_pdcp_moni` asks for every 1 ms).
//! - `breakdown_1000_drbs/*`: the steps of the 1,000-DRB E2SM-TCRAN report.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use tcran_control::DrbKey;
use tcran_core::{Duration, FiveTuple, Instant};
use tcran_e2::agent::{Agent, AgentConfig, RicProfile};
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu, RicRequestId};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::flexric_stats;
use tcran_e2::sm::flexric_tc::{self, PlainControl};
use tcran_e2::sm::{e2sm_tcran as tcsm, kpm, AnyModel, ServiceModel};
use tcran_tc::PipelineConfig;

fn pipeline() -> PipelineConfig {
    toml::from_str(
        "scheduler = { kind = \"priority\" }\npacer = { kind = \"bdp\" }\n\
         classifier = { kind = \"filter\", rules = [ { priority = 1, protocol = \"udp\", queue = 1 } ] }\n\
         [[queues]]\nid = 0\nkind = \"codel\"\n[[queues]]\nid = 1\nkind = \"fifo\"\npriority = 1\n",
    )
    .unwrap()
}

fn node(drbs: u16) -> FakeNode {
    let mut n = FakeNode::new();
    let cfg = pipeline();
    for i in 0..drbs {
        let d = DrbKey::new(0x4601 + i, 1);
        n.add_drb(d, &cfg).unwrap();
        for k in 0..20 {
            n.push(d, FiveTuple::default(), 1200 + k, Instant::ZERO);
        }
        n.transmit(d, 6000, Duration::from_millis(2), Instant::ZERO);
    }
    n
}

fn ready(profile: RicProfile, models: Vec<AnyModel>, n: &mut FakeNode) -> Agent {
    let mut a = Agent::new(AgentConfig::new(models, profile));
    a.connected(n, Instant::ZERO);
    let Ok(E2apPdu::E2SetupRequest(req)) = e2ap::decode(&a.poll_transmit().unwrap()) else {
        panic!()
    };
    let resp = E2apPdu::E2SetupResponse(req.accept(e2ap::GlobalRicId {
        plmn: [0, 0xf1, 0x10],
        ric_id: 1,
    }));
    a.handle(&e2ap::encode(&resp).unwrap(), n, Instant::ZERO);
    a
}

fn control_pdu(function: u16, header: Vec<u8>, message: Vec<u8>) -> Vec<u8> {
    e2ap::encode(&E2apPdu::ControlRequest(e2ap::ControlRequest {
        request: RicRequestId {
            requestor: 1021,
            instance: 1,
        },
        function,
        call_process_id: None,
        header,
        message,
        ack_request: Some(true),
    }))
    .unwrap()
}

fn control_round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("control_round_trip");
    // Shaper on, shaper off: each control changes the pipeline.
    let mut n = node(1);
    let mut a = ready(
        RicProfile::Flexric,
        vec![AnyModel::FlexricTc(flexric_tc::FlexricTc {
            drb: None,
            time_offset_us: 0,
        })],
        &mut n,
    );
    let on = control_pdu(
        146,
        vec![0; 4],
        PlainControl::ShpMod {
            id: 1,
            window_ms: 100,
            rate_kbps: 15000,
            active: 1,
        }
        .encode(),
    );
    let off = control_pdu(
        146,
        vec![0; 4],
        PlainControl::ShpMod {
            id: 1,
            window_ms: 100,
            rate_kbps: 15000,
            active: 0,
        }
        .encode(),
    );
    let mut flip = false;
    g.bench_function("flexric_tc_shaper", |b| {
        b.iter(|| {
            flip = !flip;
            a.handle(if flip { &on } else { &off }, &mut n, Instant::ZERO);
            a.poll_transmit().unwrap()
        })
    });
    assert_eq!(a.stats().controls_refused, 0);

    let mut n = node(1);
    let mut a = ready(
        RicProfile::Standard,
        vec![AnyModel::TcRan(tcsm::TcRan::default())],
        &mut n,
    );
    let drb = DrbKey::new(0x4601, 1);
    let set = |p: tcran_tc::pacer::PacerConfig| {
        let (h, m) = tcsm::control(
            drb,
            &tcran_tc::Change::Control(tcran_tc::Control::SetPacer { pacer: p }),
        );
        control_pdu(tcsm::DEFAULT_RAN_FUNCTION_ID, h, m)
    };
    let bdp = set(tcran_tc::pacer::PacerConfig::Bdp(Default::default()));
    let none = set(tcran_tc::pacer::PacerConfig::None);
    g.bench_function("tcran_sm_pacer", |b| {
        b.iter(|| {
            flip = !flip;
            a.handle(if flip { &bdp } else { &none }, &mut n, Instant::ZERO);
            a.poll_transmit().unwrap()
        })
    });
    assert_eq!(a.stats().controls_refused, 0);
    g.finish();
}

fn indication(c: &mut Criterion) {
    let mut g = c.benchmark_group("indication");
    let action = |definition| Action {
        id: 0,
        kind: ActionType::Report,
        definition,
        subsequent: None,
    };
    let wrap = |h: Vec<u8>, m: Vec<u8>, function| {
        e2ap::encode(&E2apPdu::Indication(e2ap::Indication {
            request: RicRequestId {
                requestor: 1,
                instance: 1,
            },
            function,
            action: 0,
            sn: Some(1),
            kind: e2ap::IndicationType::Report,
            header: h,
            message: m,
            call_process_id: None,
        }))
        .unwrap()
    };

    let n = node(1);
    let model = flexric_tc::FlexricTc {
        drb: None,
        time_offset_us: 0,
    };
    let mut job = model
        .subscribe(&1u32.to_le_bytes(), &action(None), &n)
        .unwrap();
    g.throughput(Throughput::Elements(1));
    g.bench_function("flexric_tc_1_drb", |b| {
        b.iter(|| {
            let inds = model.indicate(&mut job.state, &n, Instant::ZERO);
            inds.into_iter()
                .map(|(h, m)| wrap(h, m, 146))
                .collect::<Vec<_>>()
        })
    });

    let n = node(1000);
    let model = tcsm::TcRan::default();
    let trig = tcsm::event_trigger(&tcsm::Trigger::Periodic { period_ms: 1 });
    let mut job = model.subscribe(&trig, &action(None), &n).unwrap();
    g.throughput(Throughput::Elements(1000));
    g.bench_function("tcran_sm_1000_drbs", |b| {
        b.iter(|| {
            let inds = model.indicate(&mut job.state, &n, Instant::ZERO);
            assert!(inds.len() > 1, "1,000 DRBs take several messages");
            inds.into_iter()
                .map(|(h, m)| wrap(h, m, 246))
                .collect::<Vec<_>>()
        })
    });

    let n = node(1000);
    let mut jobs: Vec<_> = flexric_stats::FlexricStats::all(0)
        .into_iter()
        .map(|m| {
            let job = m.subscribe(&1u32.to_le_bytes(), &action(None), &n).unwrap();
            (m, job)
        })
        .collect();
    g.throughput(Throughput::Elements(1000));
    g.bench_function("flexric_mac_rlc_pdcp_gtp_1000_drbs", |b| {
        b.iter(|| {
            let mut pdus = Vec::new();
            for (m, job) in &mut jobs {
                let id = m.ran_function_id();
                pdus.extend(
                    m.indicate(&mut job.state, &n, Instant::ZERO)
                        .into_iter()
                        .map(|(h, msg)| wrap(h, msg, id)),
                );
            }
            pdus
        })
    });

    let n = node(1000);
    let def = kpm::action_definition(4, &kpm::MEASUREMENTS, 1);
    let job = kpm::Kpm::default()
        .subscribe(&kpm::event_trigger(1), &action(Some(def)), &n)
        .unwrap();
    let mut t = 0u64;
    g.bench_function("kpm_style4_1000_ues", |b| {
        b.iter_batched(
            || {
                let mut j = job.state.clone();
                t += 2;
                let t0 = Instant::ZERO + Duration::from_millis(t);
                assert!(kpm::Kpm::default().indicate(&mut j, &n, t0).is_empty());
                (j, t0 + Duration::from_millis(1))
            },
            |(mut j, t1)| {
                let inds = kpm::Kpm::default().indicate(&mut j, &n, t1);
                inds.into_iter()
                    .map(|(h, m)| wrap(h, m, 2))
                    .collect::<Vec<_>>()
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Where the 1,000-DRB indication's time goes.
fn breakdown(c: &mut Criterion) {
    use tcran_control::RanNode;
    let mut g = c.benchmark_group("breakdown_1000_drbs");
    let n = node(1000);
    let mut drbs = Vec::new();
    n.drbs(&mut drbs);
    g.bench_function("tc_view", |b| {
        b.iter(|| {
            drbs.iter()
                .map(|d| n.tc_view(*d, Instant::ZERO).unwrap())
                .collect::<Vec<_>>()
        })
    });
    g.bench_function("tc_stats", |b| {
        b.iter(|| {
            drbs.iter()
                .map(|d| n.tc_stats(*d, Instant::ZERO).unwrap())
                .collect::<Vec<_>>()
        })
    });
    let views: Vec<_> = drbs
        .iter()
        .map(|d| (*d, n.tc_view(*d, Instant::ZERO).unwrap()))
        .collect();
    // Statistics to E2SM-TCRAN messages directly (the model's path).
    let mut stream = tcran_e2::sm::report_stream::ReportStream::new();
    g.bench_function("report_stream_encode", |b| {
        b.iter(|| {
            let mut bytes = 0;
            stream.start();
            for (d, v) in &views {
                if !stream.push(*d, &v.stats, &v.lower, tcran_e2::sm::MAX_MESSAGE) {
                    bytes += stream.finish().len();
                    stream.start();
                    stream.push(*d, &v.stats, &v.lower, tcran_e2::sm::MAX_MESSAGE);
                }
            }
            bytes + stream.finish().len()
        })
    });
    g.bench_function("to_asn", |b| {
        b.iter(|| {
            views
                .iter()
                .map(|(d, v)| tcsm::drb_report(*d, v))
                .collect::<Vec<_>>()
        })
    });
    let reports: Vec<_> = views.iter().map(|(d, v)| tcsm::drb_report(*d, v)).collect();
    g.bench_function("aper_encode", |b| {
        b.iter(|| {
            use asn1_codecs::aper::AperCodec;
            let m = tcran_e2::asn::e2sm_tcran::TcIndicationMessage {
                reports: tcran_e2::asn::e2sm_tcran::TcIndicationMessageReports(reports.clone()),
            };
            let mut d = asn1_codecs::PerCodecData::new_aper();
            m.aper_encode(&mut d).unwrap();
            d.into_bytes().len()
        })
    });
    g.finish();
}

criterion_group!(benches, control_round_trip, indication, breakdown);
criterion_main!(benches);
