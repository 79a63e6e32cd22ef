//! The SDK against tcran-e2's agent on FakeNodes (real pipelines) over
//! loopback framed TCP and TLS: subscriptions, typed indications, control
//! outcomes, KPM; nodes joining, leaving, coming back, sending garbage;
//! TLS client certificates; the blocking facade.

use crate::support;

use std::net::SocketAddr;
use std::time::Duration as StdDuration;
use support::*;
use tcran_core::{Duration, FiveTuple, Instant, QueueId};
use tcran_e2::e2ap::{self, E2apPdu};
use tcran_e2::transport;
use tcran_tc::queue::{CodelConfig, QueueKindConfig};
use tcran_tc::{Change, Control, QueueConfig};
use tcran_xapp::{
    blocking, CloseCause, ControlOutcome, DrbKey, KpmQuery, KpmValue, Metric, NodeEvent, Trigger,
    Xapp, XappConfig,
};
use tokio::io::AsyncWriteExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_indications_and_control_outcomes() {
    let (x, addr) = start_xapp(|_| {}).await;
    let node = fake(2);
    let d1 = DrbKey::new(1, 1);
    let d2 = DrbKey::new(2, 1);
    {
        let mut n = node.lock().unwrap();
        for _ in 0..7 {
            n.push(d1, FiveTuple::default(), 1000, Instant::ZERO);
        }
        n.drb_mut(d2).unwrap().lower.rlc_sojourn = Duration::from_millis(20);
    }
    let tn = spawn_node(addr, 11, node.clone(), None);
    let nodes = x.wait_for_nodes(1, WAIT).await.unwrap();
    let id = nodes[0].id;
    assert_eq!(nodes[0].name, "gnb:00f110:11");
    assert_eq!(x.drbs(id).unwrap(), vec![d1, d2]);

    // Values the service model cannot carry are refused before sending.
    let bad = x
        .subscribe_tc(id, Trigger::Periodic { period_ms: 0 }, &[])
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("period_ms 0"), "{bad}");

    // Periodic: every DRB, the node's numbers.
    let mut sub = x
        .subscribe_tc(id, Trigger::Periodic { period_ms: 5 }, &[])
        .await
        .unwrap();
    let ind = tokio::time::timeout(WAIT, sub.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(!ind.condition);
    assert_eq!(ind.drbs.len(), 2);
    assert_eq!(ind.drbs[0].drb, d1);
    assert_eq!(ind.drbs[0].stats.totals.in_packets, 7);
    assert_eq!(ind.drbs[0].stats.queues[0].backlog_packets, 7);
    assert_eq!(ind.drbs[1].lower.rlc_sojourn, Duration::from_millis(20));

    // Condition: RLC sojourn above 10 ms holds on DRB 2 only.
    let mut cond = x
        .subscribe_tc(
            id,
            Trigger::Condition {
                check_period_ms: 5,
                metric: Metric::RlcSojournUs,
                threshold: 10_000,
                rising_edge_only: true,
            },
            &[],
        )
        .await
        .unwrap();
    let c = tokio::time::timeout(WAIT, cond.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(c.condition);
    assert_eq!(c.drbs.iter().map(|d| d.drb).collect::<Vec<_>>(), vec![d2]);

    // A control that applies: the outcome is the new configuration, and
    // the node's pipeline really has it.
    let codel = QueueConfig::new(1, QueueKindConfig::Codel(CodelConfig::default()));
    let out = x
        .control(
            id,
            d1,
            &Change::Controls(vec![Control::AddQueue {
                queue: codel.clone(),
            }]),
        )
        .await
        .unwrap();
    let ControlOutcome::Applied(cfg) = out else {
        panic!("applied: {out:?}")
    };
    assert_eq!(cfg.queues.len(), 2);
    assert_eq!(node.lock().unwrap().drb(d1).unwrap().pipeline.config(), cfg);
    assert_eq!(x.pipeline(id, d1).await.unwrap(), cfg);

    // A list is all or nothing: the second control fails, nothing changes.
    let out = x
        .control(
            id,
            d1,
            &Change::Controls(vec![
                Control::DeleteQueue { id: QueueId(1) },
                Control::DeleteQueue { id: QueueId(9) },
            ]),
        )
        .await
        .unwrap();
    let ControlOutcome::Refused(why) = out else {
        panic!("refused: {out:?}")
    };
    assert!(why.contains("control 2 of 2"), "{why}");
    assert_eq!(node.lock().unwrap().drb(d1).unwrap().pipeline.config(), cfg);

    // A deploy to a DRB that does not exist is refused with the reason.
    let out = x.deploy(id, DrbKey::new(9, 1), fifo()).await.unwrap();
    assert!(
        matches!(out, ControlOutcome::Refused(ref w) if w.contains("no such UE/DRB")),
        "{out:?}"
    );

    // KPM, style 1: the node's transmitted volume per granularity period.
    node.lock().unwrap().cell_mut().rlc_sdu_transmitted_bits_dl = 0;
    let mut k = x
        .subscribe_kpm(
            id,
            &KpmQuery {
                style: 1,
                names: vec!["DRB.RlcSduTransmittedVolumeDL".into()],
                granularity_ms: 10,
                report_ms: 10,
            },
        )
        .await
        .unwrap();
    let r = tokio::time::timeout(WAIT, k.recv()).await.unwrap().unwrap();
    assert_eq!(r.names, vec!["DRB.RlcSduTransmittedVolumeDL".to_string()]);
    assert_eq!(r.records[0].0, None);
    assert!(matches!(r.records[0].1[0][0], KpmValue::Integer(_)));

    drop(sub);
    let stats = tn.stop().await;
    assert_eq!(stats.decode_errors, 0);
    // One change applied (the queue added), one read (`pipeline`), two
    // refused (the list and the deploy to no DRB).
    assert_eq!(
        (
            stats.controls_applied,
            stats.controls_read,
            stats.controls_refused
        ),
        (1, 1, 2)
    );
}

/// Several callers at once on one association, all on the same DRB:
/// every call gets the outcome of its own control (the configuration
/// right after the node applied it, which carries that call's limit),
/// whatever else is in flight; and each caller's controls apply in the
/// order it made them, so the pipeline ends with some caller's last value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_each_get_their_own_outcome() {
    const CALLERS: u32 = 4;
    const EACH: u32 = 25;
    let (x, addr) = start_xapp(|_| {}).await;
    let tn = spawn_node(addr, 21, fake(1), None);
    let id = x.wait_for_nodes(1, WAIT).await.unwrap()[0].id;
    let drb = DrbKey::new(1, 1);
    let callers: Vec<_> = (0..CALLERS)
        .map(|c| {
            let x = x.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                for i in 0..EACH {
                    let limit = 10_000 * (c + 1) + i;
                    let change = Change::Controls(vec![Control::SetTotalLimit {
                        limit_packets: Some(limit),
                    }]);
                    match x.control(id, drb, &change).await.unwrap() {
                        ControlOutcome::Applied(p) => seen.push((limit, p.limit_packets)),
                        ControlOutcome::Refused(why) => panic!("refused: {why}"),
                    }
                }
                seen
            })
        })
        .collect();
    for c in callers {
        let seen = c.await.unwrap();
        assert_eq!(seen.len(), EACH as usize);
        for (sent, got) in seen {
            assert_eq!(got, Some(sent), "the outcome of this call's own control");
        }
    }
    let last = x.pipeline(id, drb).await.unwrap().limit_packets.unwrap();
    assert!(
        (0..CALLERS).any(|c| last == 10_000 * (c + 1) + EACH - 1),
        "the pipeline ends with a caller's last limit, not {last}"
    );
    let stats = tn.stop().await;
    assert_eq!(stats.controls_applied, u64::from(CALLERS * EACH));
    assert_eq!(stats.decode_errors, 0);
}

/// What a node sends before, instead of, or after E2 Setup.
async fn raw_node(addr: SocketAddr) -> tokio::net::TcpStream {
    tokio::net::TcpStream::connect(addr).await.unwrap()
}

fn setup_frame(gnb: u32) -> Vec<u8> {
    // E2AP wants at least one RAN function.
    let f = e2ap::RanFunction {
        id: 300,
        definition: vec![0],
        revision: 1,
        oid: "1.3.6.1.4.1.1".into(),
    };
    transport::frame(&tcran_xapp::fuzzing::setup_request_of(gnb, vec![f])).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_join_leave_come_back_and_garbage_is_cut_off() {
    let (x, addr) = start_xapp(|_| {}).await;
    let mut events = x.events();
    let a = spawn_node(addr, 1, fake(1), None);
    let b = spawn_node(addr, 2, fake(1), None);
    let nodes = x.wait_for_nodes(2, WAIT).await.unwrap();
    let id_of = |name: &str| nodes.iter().find(|n| n.name == name).unwrap().id;
    let (ida, idb) = (id_of("gnb:00f110:1"), id_of("gnb:00f110:2"));
    let mut sa = x
        .subscribe_tc(ida, Trigger::Periodic { period_ms: 2 }, &[])
        .await
        .unwrap();

    // Garbage after a good E2 Setup: disconnected as undecodable.
    let mut g = raw_node(addr).await;
    g.write_all(&setup_frame(66)).await.unwrap();
    let connected = event(
        &mut events,
        |e| matches!(e, NodeEvent::Connected(n) if n.name == "gnb:00f110:66"),
    )
    .await;
    let NodeEvent::Connected(gn) = connected else {
        unreachable!()
    };
    g.write_all(&transport::frame(&[0xde, 0xad, 0xbe, 0xef, 0x00]).unwrap())
        .await
        .unwrap();
    let e = event(
        &mut events,
        |e| matches!(e, NodeEvent::Disconnected { id, .. } if *id == gn.id),
    )
    .await;
    assert!(
        matches!(
            e,
            NodeEvent::Disconnected {
                cause: CloseCause::Undecodable(_),
                ..
            }
        ),
        "{e:?}"
    );
    // A frame length beyond E2's maximum: a transport error.
    let mut h = raw_node(addr).await;
    h.write_all(&u32::MAX.to_be_bytes()).await.unwrap();
    let e = event(&mut events, |e| {
        matches!(
            e,
            NodeEvent::Disconnected {
                cause: CloseCause::Transport(_),
                ..
            }
        )
    })
    .await;
    assert!(format!("{e:?}").contains("frame length"), "{e:?}");
    // Something else than E2 Setup first: a protocol error.
    let mut p = raw_node(addr).await;
    let ei = e2ap::encode(&E2apPdu::ErrorIndication(Default::default())).unwrap();
    p.write_all(&transport::frame(&ei).unwrap()).await.unwrap();
    event(&mut events, |e| {
        matches!(
            e,
            NodeEvent::Disconnected {
                cause: CloseCause::Protocol(_),
                ..
            }
        )
    })
    .await;

    // The others went on.
    assert_eq!(x.nodes().len(), 2);
    for _ in 0..3 {
        tokio::time::timeout(WAIT, sa.recv())
            .await
            .unwrap()
            .unwrap();
    }

    // B leaves: reported, A goes on.
    b.stop().await;
    let e = event(
        &mut events,
        |e| matches!(e, NodeEvent::Disconnected { id, .. } if *id == idb),
    )
    .await;
    assert!(matches!(e, NodeEvent::Disconnected { ref name, .. } if name == "gnb:00f110:2"));
    assert_eq!(x.nodes().len(), 1);
    tokio::time::timeout(WAIT, sa.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(x
        .subscribe_tc(idb, Trigger::Periodic { period_ms: 2 }, &[])
        .await
        .is_err());

    // B comes back: a new association under the same name.
    let b2 = spawn_node(addr, 2, fake(1), None);
    let e = event(
        &mut events,
        |e| matches!(e, NodeEvent::Connected(n) if n.name == "gnb:00f110:2"),
    )
    .await;
    let NodeEvent::Connected(back) = e else {
        unreachable!()
    };
    assert_ne!(back.id, idb);
    let mut sb = x
        .subscribe_tc(back.id, Trigger::Periodic { period_ms: 2 }, &[])
        .await
        .unwrap();
    tokio::time::timeout(WAIT, sb.recv())
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(WAIT, sa.recv())
        .await
        .unwrap()
        .unwrap();

    // A's association ends: its subscription stream ends with it.
    a.stop().await;
    let end = tokio::time::timeout(WAIT, async { while sa.recv().await.is_some() {} }).await;
    assert!(end.is_ok(), "the stream ends when the node goes");
    b2.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_nodes_without_a_trusted_certificate_are_refused() {
    let (ric_pem, node_pem, rogue_pem) = pem_set();
    let mut cfg = XappConfig::tcp("127.0.0.1:0".parse().unwrap());
    cfg.listen[0].transport =
        tcran_xapp::ListenTransport::Tls(transport::tls_server_config(&ric_pem).unwrap());
    let x = Xapp::start(cfg).await.unwrap();
    let addr = x.local_addrs()[0];
    let mut events = x.events();

    let rogue = spawn_node(addr, 5, fake(1), Some(&rogue_pem));
    let e = event(&mut events, |e| matches!(e, NodeEvent::Refused { .. })).await;
    assert!(
        matches!(
            e,
            NodeEvent::Refused {
                cause: CloseCause::Authentication(_),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(x.nodes().is_empty());

    // Plain TCP to the TLS listener is refused too.
    let mut plain = raw_node(addr).await;
    plain.write_all(&setup_frame(9)).await.unwrap();
    event(&mut events, |e| matches!(e, NodeEvent::Refused { .. })).await;

    let good = spawn_node(addr, 6, fake(1), Some(&node_pem));
    let nodes = x.wait_for_nodes(1, WAIT).await.unwrap();
    assert!(nodes[0].tls);
    assert_eq!(nodes[0].name, "gnb:00f110:6");
    let mut s = x
        .subscribe_tc(nodes[0].id, Trigger::Periodic { period_ms: 5 }, &[])
        .await
        .unwrap();
    tokio::time::timeout(WAIT, s.recv()).await.unwrap().unwrap();
    // A control over TLS (written by the association's task).
    let change = Change::Controls(vec![Control::SetTotalLimit {
        limit_packets: Some(77),
    }]);
    match x.control(nodes[0].id, DrbKey::new(1, 1), &change).await {
        Ok(ControlOutcome::Applied(p)) => assert_eq!(p.limit_packets, Some(77)),
        other => panic!("the control applies over TLS: {other:?}"),
    }
    assert_eq!(x.nodes().len(), 1, "the rogue node never got in");
    rogue.stop().await;
    good.stop().await;
}

#[test]
fn sctp_listeners_say_why_not() {
    let mut cfg = XappConfig::tcp("127.0.0.1:0".parse().unwrap());
    cfg.listen[0].transport = tcran_xapp::ListenTransport::Sctp;
    let err = blocking::Xapp::start(cfg).unwrap_err().to_string();
    assert!(err.contains("SCTP"), "{err}");
}

#[test]
fn the_blocking_facade_does_the_same() {
    let x = blocking::Xapp::start(XappConfig::tcp("127.0.0.1:0".parse().unwrap())).unwrap();
    let addr = x.local_addrs()[0];
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let node = fake(1);
    let tn = rt.block_on(async { spawn_node(addr, 3, node.clone(), None) });
    let nodes = x.wait_for_nodes(1, WAIT).unwrap();
    let id = nodes[0].id;
    let mut sub = x
        .subscribe_tc(id, Trigger::Periodic { period_ms: 5 }, &[])
        .unwrap();
    assert!(sub.recv_timeout(StdDuration::from_secs(10)).is_some());
    let codel =
        tcran_tc::PipelineConfig::single_queue(QueueKindConfig::Codel(CodelConfig::default()));
    let out = x.deploy(id, DrbKey::new(1, 1), codel.clone()).unwrap();
    assert!(matches!(out, ControlOutcome::Applied(_)), "{out:?}");
    assert_eq!(
        node.lock()
            .unwrap()
            .drb(DrbKey::new(1, 1))
            .unwrap()
            .pipeline
            .config(),
        codel.build().unwrap().config()
    );
    let r = x
        .query_kpm(
            id,
            &KpmQuery {
                style: 4,
                names: vec!["DRB.RlcSduDelayDl".into()],
                granularity_ms: 10,
                report_ms: 20,
            },
        )
        .unwrap();
    // Style 4: per UE, two granularity periods per report.
    assert_eq!(r.records[0].0, Some(tcran_core::Rnti(1)));
    assert_eq!(r.records[0].1.len(), 2);
    rt.block_on(tn.stop());
}

/// A node under FlexRIC's rules (`--e2-profile flexric`) answers the RIC
/// Service Query the SDK sends after E2 Setup with its FlexRIC functions,
/// so the SDK lists it at once instead of after its query timeout (here a
/// minute, far beyond the wait).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flexric_profile_node_is_listed_without_waiting_for_the_query_timeout() {
    let (x, addr) = start_xapp(|c| c.query_timeout = StdDuration::from_secs(60)).await;
    let agent = agent_as(7, tcran_e2::agent::RicProfile::Flexric);
    let n = spawn_agent(addr, agent, fake(1), None);
    let nodes = x.wait_for_nodes(1, WAIT).await.unwrap();
    let ids: Vec<u16> = nodes[0].functions.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        [2],
        "KPM only: E2SM-TCRAN is never offered under FlexRIC's rules"
    );
    n.stop().await;
}
