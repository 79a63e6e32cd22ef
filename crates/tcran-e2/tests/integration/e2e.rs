//! End to end over framed TCP on loopback: a scripted RIC built on the same
//! codec talks to the agent, run by the tokio driver, on an in-memory node
//! with real pipelines. Setup, TC and KPM subscriptions, the four controls
//! of FLEXRIC-INTEROP.md taking effect, a malformed control changing
//! nothing, a RIC restart leading to a new E2 Setup with the pipelines
//! kept; and TLS with client certificates.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;
use tcran_control::DrbKey;
use tcran_core::{FiveTuple, Instant, Protocol, QueueId};
use tcran_e2::agent::{Agent, AgentConfig, RicProfile};
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu, RicRequestId};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::flexric_tc::{self, PlainControl, PlainFilter, PlainIndication};
use tcran_e2::sm::{e2sm_tcran as tcsm, kpm, AnyModel};
use tcran_e2::transport::{self, Connector, Link, WallClock};
use tcran_tc::queue::{FifoConfig, QueueKindConfig};
use tcran_tc::{PipelineConfig, PushOutcome};
use tokio::net::TcpListener;
use tokio::sync::watch;

#[path = "common/tls.rs"]
mod tls;
use tls::pem_set;

const DRB: DrbKey = DrbKey::new(0x4601, 1);
const WAIT: StdDuration = StdDuration::from_secs(10);

/// The RIC side of one association.
struct Ric {
    link: Link,
}

impl Ric {
    async fn recv(&mut self) -> E2apPdu {
        let frame = tokio::time::timeout(WAIT, self.link.rx.recv())
            .await
            .expect("the node answers in time")
            .expect("association open")
            .expect("frame");
        e2ap::decode(&frame).expect("the node sends valid E2AP")
    }
    async fn send(&mut self, pdu: E2apPdu) {
        self.link
            .tx
            .send(e2ap::encode(&pdu).unwrap())
            .await
            .unwrap();
    }
    /// Next PDU that is not an indication (indications keep flowing).
    async fn recv_answer(&mut self) -> E2apPdu {
        loop {
            let p = self.recv().await;
            if !matches!(p, E2apPdu::Indication(_)) {
                return p;
            }
        }
    }
    async fn setup(&mut self) -> e2ap::E2SetupRequest {
        let E2apPdu::E2SetupRequest(req) = self.recv().await else {
            panic!("E2 Setup first")
        };
        let components = req
            .components
            .iter()
            .map(e2ap::ComponentConfigAck::accept)
            .collect();
        self.send(E2apPdu::E2SetupResponse(e2ap::E2SetupResponse {
            transaction: req.transaction,
            ric: e2ap::GlobalRicId {
                plmn: [0x00, 0xf1, 0x10],
                ric_id: 1,
            },
            accepted: Some(
                req.functions
                    .iter()
                    .map(|f| e2ap::RanFunctionRevision {
                        id: f.id,
                        revision: f.revision,
                    })
                    .collect(),
            ),
            rejected: None,
            components,
        }))
        .await;
        req
    }
    async fn subscribe(
        &mut self,
        instance: u16,
        function: u16,
        trigger: Vec<u8>,
        definition: Option<Vec<u8>>,
    ) {
        self.send(E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
            request: RicRequestId {
                requestor: 1021,
                instance,
            },
            function,
            event_trigger: trigger,
            actions: vec![Action {
                id: 0,
                kind: ActionType::Report,
                definition,
                subsequent: None,
            }],
        }))
        .await;
        match self.recv_answer().await {
            E2apPdu::SubscriptionResponse(r) => assert_eq!(r.admitted, [0]),
            other => panic!("{other:?}"),
        }
    }
    async fn control(&mut self, instance: u16, function: u16, message: Vec<u8>) -> E2apPdu {
        self.send(E2apPdu::ControlRequest(e2ap::ControlRequest {
            request: RicRequestId {
                requestor: 1021,
                instance,
            },
            function,
            call_process_id: None,
            header: vec![0; 4],
            message,
            ack_request: Some(true),
        }))
        .await;
        self.recv_answer().await
    }
}

fn node() -> Arc<Mutex<FakeNode>> {
    let mut n = FakeNode::new();
    n.add_drb(
        DRB,
        &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
    )
    .unwrap();
    Arc::new(Mutex::new(n))
}

fn agent(profile: RicProfile) -> Agent {
    Agent::new(AgentConfig::new(
        vec![
            AnyModel::FlexricTc(flexric_tc::FlexricTc {
                drb: Some(DRB),
                time_offset_us: 0,
            }),
            AnyModel::Kpm(kpm::Kpm::default()),
            AnyModel::TcRan(tcsm::TcRan::default()),
        ],
        profile,
    ))
}

fn udp(dport: u16) -> FiveTuple {
    FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        sport: 40000,
        dport,
        proto: Protocol::UDP,
    }
}

async fn accept(listener: &TcpListener) -> Ric {
    let (s, _) = tokio::time::timeout(WAIT, listener.accept())
        .await
        .expect("the node connects")
        .unwrap();
    s.set_nodelay(true).unwrap();
    Ric {
        link: transport::link_of_stream(s),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flexric_session_over_framed_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let node = node();
    let (stop_tx, stop) = watch::channel(false);
    let driver = tokio::spawn(transport::run(
        agent(RicProfile::Flexric),
        node.clone(),
        Connector::Tcp { addr, tls: None },
        WallClock::start(),
        stop,
        |_| {},
    ));

    let mut ric = accept(&listener).await;
    let req = ric.setup().await;
    assert_eq!(
        req.functions.iter().map(|f| f.id).collect::<Vec<_>>(),
        [146, 2],
        "E2SM-TCRAN is never offered to FlexRIC"
    );

    // TC every 5 ms, KPM style 1 every 10 ms.
    ric.subscribe(0, 146, 5u32.to_le_bytes().to_vec(), None)
        .await;
    ric.subscribe(
        1,
        2,
        kpm::event_trigger(10),
        Some(kpm::action_definition(1, &kpm::MEASUREMENTS, 10)),
    )
    .await;
    let (mut tc, mut kpm_seen) = (0, 0);
    while tc < 3 || kpm_seen < 2 {
        let E2apPdu::Indication(i) = ric.recv().await else {
            panic!("only indications now")
        };
        match i.function {
            146 => {
                let ind = PlainIndication::decode(&i.message).unwrap();
                assert_eq!(ind.queues.len(), 1);
                tc += 1;
            }
            2 => {
                use asn1_codecs::aper::AperCodec;
                let m = tcran_e2::asn::e2sm_kpm::E2SM_KPM_IndicationMessage::aper_decode(
                    &mut asn1_codecs::PerCodecData::from_slice_aper(&i.message),
                )
                .unwrap();
                let tcran_e2::asn::e2sm_kpm::E2SM_KPM_IndicationMessageIndicationMessage_formats::IndicationMessage_Format1(f1) =
                    m.indication_message_formats else { panic!("format 1") };
                assert_eq!(f1.meas_data.0[0].meas_record.0.len(), 7);
                kpm_seen += 1;
            }
            f => panic!("indication of function {f}"),
        }
    }

    // The four controls of FLEXRIC-INTEROP.md.
    let filter = PlainFilter {
        id: 1,
        src_addr: -1,
        dst_addr: -1,
        src_port: -1,
        dst_port: 5000,
        protocol: 17,
        dst_queue: 1,
    };
    let controls = [
        PlainControl::QueueAdd {
            kind: 1,
            target_ms: 5,
            interval_ms: 100,
        },
        PlainControl::ClsOsiFilter {
            modify: true,
            filter,
        },
        PlainControl::PcrMod {
            kind: 1,
            drb_sz: 25000,
            timestamp_us: 0,
        },
        PlainControl::ShpMod {
            id: 1,
            window_ms: 100,
            rate_kbps: 15000,
            active: 1,
        },
    ];
    for (i, c) in controls.iter().enumerate() {
        let answer = ric.control(10 + i as u16, 146, c.encode()).await;
        assert!(
            matches!(answer, E2apPdu::ControlAcknowledge(_)),
            "{c:?}: {answer:?}"
        );
    }
    let applied = {
        let mut n = node.lock().unwrap();
        assert_eq!(n.applied, 4);
        let cfg = n.drb(DRB).unwrap().pipeline.config();
        let q1 = cfg
            .queues
            .iter()
            .find(|q| q.id == QueueId(1))
            .expect("CoDel queue 1");
        assert_eq!(q1.kind.kind_name(), "codel");
        assert!(q1.shaper.is_some(), "shaper on queue 1");
        assert_eq!(cfg.pacer.kind_name(), "bdp");
        // The filter steers UDP to port 5000 into queue 1, the rest to 0.
        let now = Instant::ZERO;
        assert_eq!(
            n.push(DRB, udp(5000), 200, now),
            Some(PushOutcome::Enqueued(QueueId(1)))
        );
        assert_eq!(
            n.push(DRB, udp(6000), 200, now),
            Some(PushOutcome::Enqueued(QueueId(0)))
        );
        cfg
    };

    // A malformed control is acknowledged (FlexRIC) and changes nothing.
    let answer = ric.control(20, 146, vec![0x07, 0, 0, 0, 0x09]).await;
    assert!(
        matches!(answer, E2apPdu::ControlAcknowledge(_)),
        "{answer:?}"
    );
    // So is one the node refuses (a queue that does not exist).
    let answer = ric
        .control(21, 146, PlainControl::QueueDel { id: 42, kind: 1 }.encode())
        .await;
    assert!(
        matches!(answer, E2apPdu::ControlAcknowledge(_)),
        "{answer:?}"
    );
    assert_eq!(
        node.lock().unwrap().drb(DRB).unwrap().pipeline.config(),
        applied
    );

    // The RIC restarts: the connection goes, the port comes back.
    drop(ric);
    drop(listener);
    let listener = TcpListener::bind(addr).await.unwrap();
    let mut ric = accept(&listener).await;
    ric.setup().await;
    ric.subscribe(0, 146, 5u32.to_le_bytes().to_vec(), None)
        .await;
    let E2apPdu::Indication(i) = ric.recv().await else {
        panic!()
    };
    let ind = PlainIndication::decode(&i.message).unwrap();
    assert_eq!(
        ind.queues.len(),
        2,
        "the pipeline kept its CoDel queue across the restart"
    );
    assert_eq!(ind.queues[1].2.packets, 1, "and the packet queued in it");
    assert_eq!(
        node.lock().unwrap().drb(DRB).unwrap().pipeline.config(),
        applied
    );

    stop_tx.send(true).unwrap();
    let stats = tokio::time::timeout(WAIT, driver).await.unwrap().unwrap();
    assert_eq!(stats.setups_done, 2);
    assert_eq!(stats.controls_applied, 4);
    assert_eq!(
        (stats.controls_refused, stats.controls_refused_acknowledged),
        (2, 2)
    );
    assert_eq!(stats.error_indications_sent, 0, "never to FlexRIC");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_client_certificates() {
    let (ric_pem, node_pem, rogue_pem) = pem_set();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(transport::tls_server_config(&ric_pem).unwrap());

    // The rogue node is refused during the handshake.
    let (stop_tx, stop) = watch::channel(false);
    let rogue = tokio::spawn(transport::run(
        agent(RicProfile::Standard),
        node(),
        Connector::Tcp {
            addr,
            tls: Some((
                transport::tls_client_config(&rogue_pem).unwrap(),
                "localhost".into(),
            )),
        },
        WallClock::start(),
        stop,
        |_| {},
    ));
    let (s, _) = tokio::time::timeout(WAIT, listener.accept())
        .await
        .unwrap()
        .unwrap();
    assert!(
        acceptor.accept(s).await.is_err(),
        "a certificate from another CA is refused"
    );
    stop_tx.send(true).unwrap();
    let stats = tokio::time::timeout(WAIT, rogue).await.unwrap().unwrap();
    assert_eq!(stats.setups_done, 0);

    // The good node completes E2 Setup over TLS.
    let (stop_tx, stop) = watch::channel(false);
    let good = tokio::spawn(transport::run(
        agent(RicProfile::Standard),
        node(),
        Connector::Tcp {
            addr,
            tls: Some((
                transport::tls_client_config(&node_pem).unwrap(),
                "localhost".into(),
            )),
        },
        WallClock::start(),
        stop,
        |_| {},
    ));
    let mut ric = loop {
        let (s, _) = tokio::time::timeout(WAIT, listener.accept())
            .await
            .unwrap()
            .unwrap();
        // A leftover connection attempt of the rogue node fails here; skip it.
        if let Ok(tls) = acceptor.accept(s).await {
            break Ric {
                link: transport::link_of_stream(tls),
            };
        }
    };
    ric.setup().await;
    ric.subscribe(0, 146, 5u32.to_le_bytes().to_vec(), None)
        .await;
    assert!(matches!(ric.recv().await, E2apPdu::Indication(_)));
    stop_tx.send(true).unwrap();
    let stats = tokio::time::timeout(WAIT, good).await.unwrap().unwrap();
    assert_eq!(stats.setups_done, 1);
}

#[test]
fn sctp_is_detected_at_run_time() {
    // This machine's kernel has no SCTP; where it has, the check passes.
    match transport::sctp_available() {
        Ok(()) => eprintln!("SCTP available here"),
        Err(e) => assert!(
            e.contains("SCTP is not available") && e.contains("framed TCP"),
            "{e}"
        ),
    }
}
