//! One controller code, two places: the simulator's built-in controllers
//! run unchanged over E2 and leave a node's pipeline exactly as they leave
//! it when called in process on the same view.

use crate::support;

use std::net::{IpAddr, Ipv4Addr};
use support::*;
use tcran_control::controller::{
    AnyController, Command, ControlView, Controller, ControllerConfig, ControllerKind, DrbView,
    FlowView,
};
use tcran_control::RanNode;
use tcran_core::{BitRate, Duration, FiveTuple, Instant, Protocol};
use tcran_xapp::adapter::{self, AdapterOptions, FlowEntry, Stopped};
use tcran_xapp::{xapps, DrbKey, Xapp, XappConfig};

const DRB: DrbKey = DrbKey::new(1, 1);

fn tuple(sport: u16, proto: Protocol) -> FiveTuple {
    FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 1)),
        sport,
        dport: 40000,
        proto,
    }
}

fn flows() -> Vec<FlowEntry> {
    vec![
        FlowEntry {
            name: "game".into(),
            kind: "gaming",
            rnti: 1,
            drb: 1,
            tuple: tuple(5000, Protocol::UDP),
            greedy: false,
        },
        FlowEntry {
            name: "background".into(),
            kind: "tcp",
            rnti: 1,
            drb: 1,
            tuple: tuple(5001, Protocol::TCP),
            greedy: true,
        },
    ]
}

fn build(kind: ControllerKind) -> AnyController {
    ControllerConfig {
        name: None,
        period: Duration::from_millis(20),
        start: None,
        ue: None,
        drb: None,
        direction: tcran_control::Direction::Downlink,
        kind,
    }
    .build(&["game", "background"])
    .unwrap()
}

/// The controller called once in process on `node`'s own view, its
/// commands applied: the configuration it leaves.
fn in_process(
    kind: ControllerKind,
    node: &mut tcran_e2::fake::FakeNode,
) -> tcran_tc::PipelineConfig {
    let mut c = build(kind);
    let v = node.tc_view(DRB, Instant::ZERO).unwrap();
    let sojourn = v.lower.rlc_sojourn.as_millis_f64();
    let drbs = [DrbView {
        rnti: 1,
        drb: 1,
        dir: tcran_control::Direction::Downlink,
        config: v.config.clone(),
        stats: v.stats.clone(),
        rlc_bytes: v.lower.rlc_backlog_bytes,
        rlc_delivered: 1,
        rlc_delay_ms: Some(sojourn),
        rlc_departed: 1,
        rlc_sojourn_ms: Some(sojourn),
        handover_margin_db: None,
    }];
    let flows: Vec<FlowView> = flows()
        .iter()
        .map(|f| FlowView {
            name: f.name.clone(),
            kind: f.kind,
            rnti: f.rnti,
            dir: tcran_control::Direction::Downlink,
            drb: Some(f.drb),
            tuple: f.tuple,
            goodput_mbps: if f.greedy { 30.0 } else { 0.2 },
            delay_ms: None,
        })
        .collect();
    let mut out: Vec<Command> = Vec::new();
    c.on_tick(
        &ControlView {
            now: Instant::ZERO,
            drbs: &drbs,
            flows: &flows,
        },
        &mut out,
    );
    assert!(!out.is_empty(), "the controller acts in process");
    for cmd in out {
        node.apply(DRB, &cmd.change, Instant::ZERO).unwrap();
    }
    node.drb(DRB).unwrap().pipeline.config()
}

/// The same controller over E2 until its first reconfiguration is done.
async fn over_e2(kind: ControllerKind, gnb: u32) -> tcran_tc::PipelineConfig {
    let x = Xapp::start(XappConfig::tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let node = fake(1);
    node.lock().unwrap().drb_mut(DRB).unwrap().lower.rlc_sojourn = Duration::from_millis(25);
    let tn = spawn_node(x.local_addrs()[0], gnb, node.clone(), None);
    let id = x.wait_for_nodes(1, WAIT).await.unwrap()[0].id;
    let mut c = build(kind);
    let mut opts = AdapterOptions::every(std::time::Duration::from_millis(20));
    opts.flows = flows();
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let mut changes = Vec::new();
    let mut on_change = |r: &adapter::Reconfiguration| {
        assert_eq!(r.result, Ok(()), "{}", r.what);
        changes.push(r.clone());
    };
    // Stop a little after the first call (period 20 ms).
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        let _ = stop_tx.send(true);
        stop_tx
    });
    let r = tokio::time::timeout(
        WAIT,
        adapter::run(&x, id, &mut c, &opts, stop, &mut on_change),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(r, Stopped::Requested);
    let _ = stopper.await;
    assert!(!changes.is_empty(), "the controller acted over E2");
    let cfg = node.lock().unwrap().drb(DRB).unwrap().pipeline.config();
    tn.stop().await;
    cfg
}

fn node_with_sojourn() -> tcran_e2::fake::FakeNode {
    let mut n = tcran_e2::fake::FakeNode::new();
    n.add_drb(DRB, &fifo()).unwrap();
    n.drb_mut(DRB).unwrap().lower.rlc_sojourn = Duration::from_millis(25);
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn low_latency_xapp_deploys_the_same_pipeline_both_ways() {
    let kind = xapps::low_latency(Duration::from_millis(10));
    let local = in_process(kind.clone(), &mut node_with_sojourn());
    let remote = over_e2(kind, 21).await;
    assert_eq!(local, remote);
    assert_eq!(remote.queues[0].kind.kind_name(), "codel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn online_game_xapp_moves_the_greedy_flow_the_same_way() {
    let kind = xapps::online_game(Duration::from_millis(10), BitRate(1_000_000));
    let local = in_process(kind.clone(), &mut node_with_sojourn());
    let remote = over_e2(kind, 22).await;
    assert_eq!(local, remote);
    // A CoDel queue and one rule: the background flow's 5-tuple.
    assert_eq!(remote.queues.len(), 2);
    let tcran_tc::classify::ClassifierConfig::Filter { rules } = &remote.classifier else {
        panic!("a filter: {:?}", remote.classifier)
    };
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].src_port, Some(5001i64.into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_slicing_xapp_deploys_the_same_slices_both_ways() {
    let names = ["game".to_string(), "background".to_string()];
    let kind = xapps::flow_slicing(&names).unwrap();
    let local = in_process(kind.clone(), &mut node_with_sojourn());
    let remote = over_e2(kind, 23).await;
    assert_eq!(local, remote);
    // Two queues (a configuration may write identical neighbours as one
    // entry with a count).
    assert_eq!(remote.queues.iter().map(|q| q.count).sum::<u16>(), 2);
}
