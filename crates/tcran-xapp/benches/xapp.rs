//! xApp SDK costs (docs/performance.md, "xApp SDK"):
//! - `control_round_trip`: one E2SM-TCRAN control from the xApp's call to
//!   its outcome, over loopback framed TCP to a tcran-e2 agent on a
//!   FakeNode running in its own runtime (as another process would): the
//!   control is applied to a real pipeline and the outcome carries the
//!   resulting configuration;
//!   `_cpu_latency_0`: the same while a CPU wake-up latency of 0 is held
//!   (`tcran_e2::cpu_latency`, needs root), so idle cores do not sleep;
//! - `decode_tc_indication_100_drbs`: the SDK's cost to turn one
//!   100-DRB E2SM-TCRAN indication into typed statistics (tcran's direct
//!   decoder, APER straight into `DrbStatus`es; `_hampi_converted`: the
//!   fallback, hampi's derived decoder and the conversion of its reports;
//!   `_aper_hampi`: hampi's decoding alone, code this crate does not
//!   change, a gauge of how the machine's load moved between two runs);
//! - `fan_in_10_nodes_x_100_drbs_1ms`: ten nodes of 100 DRBs each
//!   sending an indication every 1 ms (pre-encoded, so that the node side
//!   costs nothing and the SDK alone is measured); one iteration is 100
//!   indications decoded and delivered to the xApp (10 periods of the 10
//!   nodes), so a median of 10 ms means the SDK keeps up. Afterwards the
//!   rate over 3 s is printed.

#[path = "../tests/integration/support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use tcran_control::DrbKey;
use tcran_tc::{Change, Control};
use tcran_xapp::{report, Trigger, Xapp, XappConfig};
use tokio::time::Instant;

fn node_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn xapp_runtime() -> tokio::runtime::Runtime {
    // One worker: the xApp side on its own core, as a separate process.
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn control_round_trip(c: &mut Criterion) {
    let rt = xapp_runtime();
    let nrt = node_runtime();
    let x = rt
        .block_on(Xapp::start(XappConfig::tcp("127.0.0.1:0".parse().unwrap())))
        .unwrap();
    let addr = x.local_addrs()[0];
    let _node = nrt.block_on(async { support::spawn_node(addr, 1, support::fake(1), None) });
    let id = rt.block_on(x.wait_for_nodes(1, support::WAIT)).unwrap()[0].id;
    let drb = DrbKey::new(1, 1);
    let mut i = 0u32;
    let mut round_trip = |name: &str| {
        c.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                let change = Change::Controls(vec![Control::SetTotalLimit {
                    limit_packets: Some(1000 + (i % 2)),
                }]);
                let out = rt.block_on(x.control(id, drb, &change)).unwrap();
                assert!(matches!(out, tcran_xapp::ControlOutcome::Applied(_)));
            })
        });
    };
    round_trip("xapp/control_round_trip");
    // The same with idle cores kept awake (tcran_e2::cpu_latency): what a
    // deployment that asks for it gets.
    match tcran_e2::cpu_latency::hold(Duration::ZERO) {
        Ok(_awake) => round_trip("xapp/control_round_trip_cpu_latency_0"),
        Err(e) => eprintln!("xapp/control_round_trip_cpu_latency_0 not run: {e}"),
    }
}

fn decode_indication(c: &mut Criterion) {
    use tcran_control::RanNode;
    use tcran_e2::sm::ServiceModel;
    let node = support::fake(100);
    let n = node.lock().unwrap();
    let model = tcran_e2::sm::e2sm_tcran::TcRan::default();
    let action = tcran_e2::e2ap::Action {
        id: 1,
        kind: tcran_e2::e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let trigger = tcran_e2::sm::e2sm_tcran::event_trigger(&Trigger::Periodic { period_ms: 1 });
    let mut job = model.subscribe(&trigger, &action, &*n).unwrap();
    let mut drbs = Vec::new();
    n.drbs(&mut drbs);
    assert_eq!(drbs.len(), 100);
    let ind = model.indicate(&mut job.state, &*n, tcran_core::Instant::ZERO);
    assert_eq!(ind.len(), 1, "100 small DRB reports fit one indication");
    let (h, m) = &ind[0];
    eprintln!(
        "one 100-DRB E2SM-TCRAN indication: {} bytes of message",
        m.len()
    );
    // For comparison: hampi's derived decoder alone, and with the
    // conversion (the fallback path).
    c.bench_function("xapp/decode_tc_indication_100_drbs_aper_hampi", |b| {
        b.iter(|| tcran_e2::sm::e2sm_tcran::decode_indication(h, m).unwrap())
    });
    c.bench_function("xapp/decode_tc_indication_100_drbs_hampi_converted", |b| {
        b.iter(|| report::decode_tc_generic(h, m).unwrap())
    });
    c.bench_function("xapp/decode_tc_indication_100_drbs", |b| {
        b.iter(|| {
            let r = report::decode_tc(h, m).unwrap();
            assert_eq!(r.drbs.len(), 100);
            r
        })
    });
}

/// A node that answers E2 Setup and one subscription, then sends the same
/// pre-encoded 100-DRB E2SM-TCRAN indication every `period` (the node
/// side costs nothing, so the SDK alone is measured).
async fn replay_node(addr: std::net::SocketAddr, gnb: u32, period: Duration) {
    use tcran_e2::e2ap::{self, E2apPdu};
    use tcran_e2::sm::ServiceModel;
    use tcran_e2::transport::{frame, read_frame};
    use tokio::io::AsyncWriteExt;
    let node = support::fake(100);
    let model = tcran_e2::sm::e2sm_tcran::TcRan::default();
    let (function, header, message) = {
        let n = node.lock().unwrap();
        let action = e2ap::Action {
            id: 1,
            kind: e2ap::ActionType::Report,
            definition: None,
            subsequent: None,
        };
        let trigger = tcran_e2::sm::e2sm_tcran::event_trigger(&Trigger::Periodic { period_ms: 1 });
        let mut job = model.subscribe(&trigger, &action, &*n).unwrap();
        let (h, m) = model
            .indicate(&mut job.state, &*n, tcran_core::Instant::ZERO)
            .remove(0);
        (model.ran_function(&*n), h, m)
    };
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let setup = tcran_xapp::fuzzing::setup_request_of(gnb, vec![function]);
    s.write_all(&frame(&setup).unwrap()).await.unwrap();
    let (mut r, mut w) = s.into_split();
    let _response = read_frame(&mut r).await.unwrap().unwrap();
    let sub = read_frame(&mut r).await.unwrap().unwrap();
    let E2apPdu::SubscriptionRequest(sub) = e2ap::decode(&sub).unwrap() else {
        panic!("a subscription")
    };
    let ok = E2apPdu::SubscriptionResponse(e2ap::SubscriptionResponse {
        request: sub.request,
        function: sub.function,
        admitted: vec![1],
        not_admitted: None,
    });
    w.write_all(&frame(&e2ap::encode(&ok).unwrap()).unwrap())
        .await
        .unwrap();
    let ind = frame(
        &e2ap::encode(&E2apPdu::Indication(e2ap::Indication {
            request: sub.request,
            function: sub.function,
            action: 1,
            sn: None,
            kind: e2ap::IndicationType::Report,
            header,
            message,
            call_process_id: None,
        }))
        .unwrap(),
    )
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = read_frame(&mut r).await {} });
    let mut tick = tokio::time::interval(period);
    loop {
        tick.tick().await;
        if w.write_all(&ind).await.is_err() {
            return;
        }
    }
}

fn fan_in(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let nrt = node_runtime();
    let x = rt
        .block_on(Xapp::start(XappConfig::tcp("127.0.0.1:0".parse().unwrap())))
        .unwrap();
    let addr = x.local_addrs()[0];
    for g in 0..10 {
        nrt.spawn(replay_node(addr, 100 + g, Duration::from_millis(1)));
    }
    let nodes = rt.block_on(x.wait_for_nodes(10, support::WAIT)).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::channel(1 << 16);
    let subs: Vec<_> = nodes
        .iter()
        .map(|n| {
            rt.block_on(x.subscribe_tc(n.id, Trigger::Periodic { period_ms: 1 }, &[]))
                .unwrap()
        })
        .collect();
    for mut s in subs {
        let tx = tx.clone();
        rt.spawn(async move {
            while let Some(ind) = s.recv().await {
                if tx.send(ind.drbs.len()).await.is_err() {
                    break;
                }
            }
        });
    }
    // One iteration: 100 indications (10 periods of the 10 nodes).
    c.bench_function("xapp/fan_in_10_nodes_x_100_drbs_1ms", |b| {
        b.iter(|| {
            for _ in 0..100 {
                let n = rt.block_on(rx.recv()).unwrap();
                assert_eq!(n, 100);
            }
        })
    });
    // Throughput over 3 s, draining as fast as it comes.
    while rx.try_recv().is_ok() {}
    let dropped_before: u64 = x.nodes().iter().map(|n| n.indications_dropped).sum();
    let started = Instant::now();
    let mut received = 0u64;
    rt.block_on(async {
        while started.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
                received += 1;
            }
        }
    });
    let secs = started.elapsed().as_secs_f64();
    let dropped: u64 =
        x.nodes().iter().map(|n| n.indications_dropped).sum::<u64>() - dropped_before;
    eprintln!(
        "fan-in over {secs:.1} s: {:.0} indications/s decoded and delivered of 10000/s sent \
         ({:.0} DRB reports/s), {dropped} dropped for a slow subscriber",
        received as f64 / secs,
        received as f64 * 100.0 / secs,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = control_round_trip, decode_indication, fan_in
}
criterion_main!(benches);
