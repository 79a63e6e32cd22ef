//! An E2 node on an in-memory cell (one UE, one DRB with a FIFO pipeline
//! and synthetic traffic) that connects to a RIC, for trying tcran's agent
//! against FlexRIC or another RIC:
//!
//! ```sh
//! cargo run -p tcran-e2 --example agent -- 127.0.0.1:36421 --flexric
//! cargo run -p tcran-e2 --example agent -- 127.0.0.1:36421 --tls ca.pem node.pem node.key ric.example
//! ```
//!
//! `--flexric` uses the FlexRIC profile and offers FlexRIC TC (146) and
//! KPM (2) only; without it E2SM-TCRAN (246) is offered too. The framed
//! TCP transport is used (docs/e2.md). Events are printed; Ctrl-C stops.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tcran_control::DrbKey;
use tcran_core::{Duration, FiveTuple};
use tcran_e2::agent::{Agent, AgentConfig, RicProfile};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::{e2sm_tcran as tcsm, flexric_tc, kpm, AnyModel};
use tcran_e2::transport::{self, Connector, TlsPem, WallClock};
use tcran_tc::queue::{FifoConfig, QueueKindConfig};
use tcran_tc::PipelineConfig;

fn usage(why: &str) -> ! {
    eprintln!("error: {why}\nusage: agent HOST:PORT [--flexric] [--tls CA CERT KEY SERVER_NAME]");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(addr) = args.first() else {
        usage("the RIC's address is missing")
    };
    let addr: SocketAddr = addr.parse().unwrap_or_else(|e| {
        usage(&format!(
            "address {addr:?}: {e} (expected HOST:PORT, e.g. 127.0.0.1:36421)"
        ))
    });
    let flexric = args.iter().any(|a| a == "--flexric");
    let tls = args.iter().position(|a| a == "--tls").map(|i| {
        let part = |k: usize| {
            args.get(i + k)
                .cloned()
                .unwrap_or_else(|| usage("--tls needs CA CERT KEY SERVER_NAME"))
        };
        let read = |k: usize| {
            let f = part(k);
            std::fs::read_to_string(&f).unwrap_or_else(|e| usage(&format!("{f}: {e}")))
        };
        let pem = TlsPem {
            ca: read(1),
            cert: read(2),
            key: read(3),
        };
        let cfg = transport::tls_client_config(&pem).unwrap_or_else(|e| usage(&e.to_string()));
        (cfg, part(4))
    });

    let drb = DrbKey::new(0x4601, 1);
    let mut node = FakeNode::new();
    node.add_drb(
        drb,
        &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
    )
    .expect("a FIFO pipeline builds");
    let node = Arc::new(Mutex::new(node));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async move {
        let clock = WallClock::start();
        let mut models = vec![
            AnyModel::FlexricTc(flexric_tc::FlexricTc {
                drb: Some(drb),
                time_offset_us: clock.unix_offset_us(),
            }),
            AnyModel::Kpm(kpm::Kpm::default()),
        ];
        let profile = if flexric {
            RicProfile::Flexric
        } else {
            models.push(AnyModel::TcRan(tcsm::TcRan::default()));
            RicProfile::Standard
        };
        // Synthetic traffic: 10 packets in, up to 12 kB out, every ms.
        let traffic = node.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_millis(1));
            loop {
                tick.tick().await;
                let now = clock.now();
                let mut n = traffic.lock().unwrap_or_else(|p| p.into_inner());
                for _ in 0..10 {
                    n.push(drb, FiveTuple::default(), 1200, now);
                }
                n.transmit(drb, 12_000, Duration::from_millis(2), now);
            }
        });
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            let _ = stop_tx.send(true);
        });
        let agent = Agent::new(AgentConfig::new(models, profile));
        let stats = transport::run(
            agent,
            node,
            Connector::Tcp { addr, tls },
            clock,
            stop,
            |ev| println!("{ev:?}"),
        )
        .await;
        println!("{stats:?}");
    });
}
