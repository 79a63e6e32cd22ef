//! `tcran dashboard` at scale (docs/performance.md, "Dashboard"): 100 E2
//! nodes of 10 DRBs each (tcran-e2's agent on a FakeNode with real
//! pipelines, the priority + e5G-BDP preset, traffic pushed and pulled
//! every 10 ms) report to the dashboard 10 times a second, one browser
//! stream reads its pushes and a second one reads nothing (a stalled
//! browser). Prints the server's CPU (from /proc, the dashboard being its
//! own process), its cost per node report, the pushes the reading stream
//! got and their size, and the server's memory before and after, which
//! must not grow with the stalled stream.
//!
//! Then the page itself, in Debian's headless Chromium (the DevTools
//! driver of the browser test), on one node of the hundred for 10 s: the
//! pushes it handled (10/s means it keeps up), the script's time per push
//! and the time between painted frames.
//!
//! `cargo bench -p tcran-cli --bench dashboard` (about 40 s; needs an
//! otherwise idle machine for the CPU figures to mean anything).

#[allow(dead_code)] // the bench clicks and reads; it neither types nor takes pictures
#[path = "../tests/integration/support/cdp.rs"]
mod cdp;
#[allow(dead_code)] // the DevTools driver uses its binary lookup only
#[path = "../tests/integration/support/chromium.rs"]
mod chromium;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcran_control::DrbKey;
use tcran_core::FiveTuple;
use tcran_e2::agent::{Agent, AgentConfig, RicProfile};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::{e2sm_tcran as tcsm, kpm, AnyModel};
use tcran_e2::transport::{self, Connector, WallClock};

const NODES: u32 = 100;
const DRBS: u16 = 10;
const MEASURE: Duration = Duration::from_secs(10);

fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces): utime is
    // the 14th field, stime the 15th, in clock ticks (100 per second on
    // Linux).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}

fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn pipeline() -> tcran_tc::PipelineConfig {
    tcran_cli::dashboard::presets::pipeline("priority+e5g-bdp").unwrap()
}

/// One node: 10 DRBs with traffic, its E2 agent towards `addr`.
fn spawn_node(rt: &tokio::runtime::Runtime, addr: SocketAddr, gnb: u32) {
    let mut n = FakeNode::new();
    for r in 1..=DRBS {
        n.add_drb(DrbKey::new(r, 1), &pipeline()).unwrap();
    }
    let node = Arc::new(Mutex::new(n));
    let mut cfg = AgentConfig::new(
        vec![
            AnyModel::TcRan(tcsm::TcRan::default()),
            AnyModel::Kpm(kpm::Kpm::default()),
        ],
        RicProfile::Standard,
    );
    cfg.node_id = tcran_e2::e2ap::gnb_node_id([0x00, 0xf1, 0x10], gnb, 22);
    let (_stop, rx) = tokio::sync::watch::channel(false);
    std::mem::forget(_stop);
    let clock = WallClock::start();
    rt.spawn(transport::run(
        Agent::new(cfg),
        node.clone(),
        Connector::Tcp { addr, tls: None },
        clock,
        rx,
        |_| {},
    ));
    // Traffic: 12 packets in and 10 out per DRB every 10 ms, so queues,
    // sojourns and counters move.
    rt.spawn(async move {
        let started = tokio::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        loop {
            tick.tick().await;
            let now = tcran_core::Instant::from_nanos(started.elapsed().as_nanos() as u64);
            let mut n = node.lock().unwrap();
            for r in 1..=DRBS {
                let drb = DrbKey::new(r, 1);
                for _ in 0..12 {
                    n.push(drb, FiveTuple::default(), 1200, now);
                }
                n.transmit(drb, 12_000, tcran_core::Duration::from_millis(2), now);
            }
        }
    });
}

/// An SSE stream of the dashboard; `read`: whether anyone reads it.
fn stream(http: SocketAddr, node: Option<u32>) -> TcpStream {
    let mut s = TcpStream::connect(http).unwrap();
    let q = node.map(|n| format!("?node={n}")).unwrap_or_default();
    write!(
        s,
        "GET /api/events{q} HTTP/1.1\r\nhost: bench\r\naccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    s
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` does not run it.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcran"))
        .args([
            "dashboard",
            "--ric-listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--read-only",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let (mut e2, mut http) = (None, None);
    while http.is_none() {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the dashboard ended");
        let addr = line
            .split(|c: char| c.is_whitespace() || c == '/')
            .find_map(|w| w.parse::<SocketAddr>().ok());
        if line.contains("E2 nodes") {
            e2 = addr;
        } else if line.contains("http://") {
            http = addr;
        }
    }
    let (e2, http) = (e2.unwrap(), http.unwrap());
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    for g in 0..NODES {
        spawn_node(&rt, e2, 1 + g);
    }
    // Until every node reports.
    let mut s = BufReader::new(stream(http, None));
    let started = Instant::now();
    loop {
        line.clear();
        s.read_line(&mut line).unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            let v: serde_json::Value = serde_json::from_str(data).unwrap();
            let reporting = v["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|n| n["reports"].as_u64() > Some(0))
                .count();
            if reporting == NODES as usize {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the nodes did not all report within 30 s"
        );
    }
    drop(s);
    std::thread::sleep(Duration::from_secs(2));
    // A browser looking at node 50, and one that stalls.
    let reader = stream(http, Some(50));
    let _stalled = stream(http, Some(1));
    let rss_before = rss_kb(pid);
    let cpu_before = cpu_seconds(pid);
    let t0 = Instant::now();
    let counted = std::thread::spawn(move || {
        let mut r = BufReader::new(reader);
        let (mut pushes, mut bytes, mut skipped) = (0u64, 0u64, 0u64);
        let mut line = String::new();
        while t0.elapsed() < MEASURE {
            line.clear();
            if r.read_line(&mut line).unwrap() == 0 {
                break;
            }
            if let Some(data) = line.strip_prefix("data: ") {
                pushes += 1;
                bytes += data.len() as u64;
                let v: serde_json::Value = serde_json::from_str(data).unwrap();
                skipped = v["skipped"].as_u64().unwrap_or(0);
            }
        }
        (pushes, bytes, skipped)
    });
    let (pushes, bytes, skipped) = counted.join().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_before;
    let rss_after = rss_kb(pid);
    let reports = f64::from(NODES) * 10.0 * secs;
    println!(
        "dashboard, {NODES} nodes x {DRBS} DRBs reporting 10/s ({:.0} node reports/s, {:.0} DRB reports/s), \
         one browser stream reading and one stalled, over {secs:.1} s:",
        reports / secs,
        reports * f64::from(DRBS) / secs
    );
    println!(
        "  server CPU {:.1} % of one core, {:.1} us per node report (E2 decode, hub, pushes included)",
        100.0 * cpu / secs,
        1e6 * cpu / reports
    );
    println!(
        "  reading stream: {pushes} pushes ({:.1}/s), {:.1} kB each, {skipped} skipped",
        pushes as f64 / secs,
        bytes as f64 / pushes.max(1) as f64 / 1000.0
    );
    println!("  server memory {rss_before} kB before, {rss_after} kB after (the stalled stream holds no backlog)");
    browser(http);
    let _ = child.kill();
    let _ = child.wait();
    rt.shutdown_background();
}

/// The page on node 50 of the hundred for 10 s in headless Chromium.
fn browser(http: SocketAddr) {
    let mut b = cdp::Browser::launch(1400, 1100);
    b.navigate(&format!("http://{http}/"));
    b.wait_for(
        "document.querySelectorAll('#nodes li[data-node]').length === 100",
        Duration::from_secs(10),
    );
    b.click("#nodes li:nth-child(50)");
    b.wait_for(
        "Number(document.getElementById('chart-sojourn').dataset.points) >= 10",
        Duration::from_secs(10),
    );
    b.eval(
        "Object.assign(window.tcranStats, { updates: 0, meanMs: 0, maxMs: 0, frames: 0, frameMeanMs: 0, frameMaxMs: 0 })",
    );
    std::thread::sleep(MEASURE);
    let s = b.eval("window.tcranStats");
    let skipped = b.eval("document.getElementById('skipped').textContent");
    println!(
        "  the page (Chromium, headless) on 1 of the {NODES} nodes over {:.0} s: {} pushes handled, \
         {:.2} ms mean / {:.1} ms max of script per push; {} frames, {:.1} ms mean / {:.1} ms max between frames; {}",
        MEASURE.as_secs_f64(),
        s["updates"],
        s["meanMs"].as_f64().unwrap_or(f64::NAN),
        s["maxMs"].as_f64().unwrap_or(f64::NAN),
        s["frames"],
        s["frameMeanMs"].as_f64().unwrap_or(f64::NAN),
        s["frameMaxMs"].as_f64().unwrap_or(f64::NAN),
        match skipped.as_str() {
            Some("") | None => "no push skipped".to_string(),
            Some(t) => t.to_string(),
        }
    );
    assert!(b.errors.is_empty(), "errors on the page: {:?}", b.errors);
}
