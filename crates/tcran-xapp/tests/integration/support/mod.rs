//! Test and bench helpers: E2 nodes made of tcran-e2's agent and FakeNode
//! (real pipelines), connected to the SDK over loopback framed TCP.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tcran_control::DrbKey;
use tcran_e2::agent::{Agent, AgentConfig, AgentStats, RicProfile};
use tcran_e2::e2ap;
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::{e2sm_tcran as tcsm, kpm, AnyModel};
use tcran_e2::transport::{self, Connector, TlsPem, WallClock};
use tcran_tc::queue::{FifoConfig, QueueKindConfig};
use tcran_tc::PipelineConfig;
use tokio::sync::watch;

pub const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A running node: its state, its stop switch, its driver.
pub struct TestNode {
    pub node: Arc<Mutex<FakeNode>>,
    pub stop: watch::Sender<bool>,
    pub driver: tokio::task::JoinHandle<AgentStats>,
}

impl TestNode {
    pub async fn stop(self) -> AgentStats {
        let _ = self.stop.send(true);
        self.driver.await.unwrap()
    }
}

pub fn fifo() -> PipelineConfig {
    PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {}))
}

/// A FakeNode with `drbs` DRBs: RNTI 1.. , DRB 1, FIFO pipelines.
pub fn fake(drbs: u16) -> Arc<Mutex<FakeNode>> {
    let mut n = FakeNode::new();
    for r in 1..=drbs {
        n.add_drb(DrbKey::new(r, 1), &fifo()).unwrap();
    }
    Arc::new(Mutex::new(n))
}

pub fn agent(gnb_id: u32) -> Agent {
    agent_as(gnb_id, RicProfile::Standard)
}

pub fn agent_as(gnb_id: u32, profile: RicProfile) -> Agent {
    let mut cfg = AgentConfig::new(
        vec![
            AnyModel::TcRan(tcsm::TcRan::default()),
            AnyModel::Kpm(kpm::Kpm::default()),
        ],
        profile,
    );
    cfg.node_id = e2ap::gnb_node_id([0x00, 0xf1, 0x10], gnb_id, 22);
    Agent::new(cfg)
}

/// Starts the node `gnb_id` over `node` towards `addr` (optionally TLS).
pub fn spawn_node(
    addr: SocketAddr,
    gnb_id: u32,
    node: Arc<Mutex<FakeNode>>,
    tls: Option<&TlsPem>,
) -> TestNode {
    spawn_agent(addr, agent(gnb_id), node, tls)
}

/// Starts `agent` over `node` towards `addr` (optionally TLS).
pub fn spawn_agent(
    addr: SocketAddr,
    agent: Agent,
    node: Arc<Mutex<FakeNode>>,
    tls: Option<&TlsPem>,
) -> TestNode {
    let (stop, rx) = watch::channel(false);
    let tls = tls.map(|pem| {
        (
            transport::tls_client_config(pem).unwrap(),
            "localhost".to_string(),
        )
    });
    let driver = tokio::spawn(transport::run(
        agent,
        node.clone(),
        Connector::Tcp { addr, tls },
        WallClock::start(),
        rx,
        |_| {},
    ));
    TestNode { node, stop, driver }
}

/// CA-signed RIC and node material, and a node certificate from another
/// CA (the same helper as tcran-e2's end-to-end tests).
#[path = "../../../../tcran-e2/tests/integration/common/tls.rs"]
mod tls;
#[allow(unused_imports)] // not every test binary has TLS nodes
pub use tls::pem_set;

/// An xApp on a free loopback port, configured by `cfg`, and its address.
pub async fn start_xapp(
    cfg: impl FnOnce(&mut tcran_xapp::XappConfig),
) -> (tcran_xapp::Xapp, SocketAddr) {
    let mut c = tcran_xapp::XappConfig::tcp("127.0.0.1:0".parse().unwrap());
    cfg(&mut c);
    let x = tcran_xapp::Xapp::start(c).await.unwrap();
    let addr = x.local_addrs()[0];
    (x, addr)
}

/// Waits for an event matching `f`.
pub async fn event(
    rx: &mut tokio::sync::broadcast::Receiver<tcran_xapp::NodeEvent>,
    f: impl Fn(&tcran_xapp::NodeEvent) -> bool,
) -> tcran_xapp::NodeEvent {
    loop {
        let e = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("the event comes in time")
            .expect("events flow");
        if f(&e) {
            return e;
        }
    }
}
