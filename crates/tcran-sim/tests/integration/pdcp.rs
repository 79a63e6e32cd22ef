//! PDCP reordering at the UE (TS 38.323 §5.2.2.2) seen from TCP: with HARQ
//! and RLC AM retransmissions the RLC hands SDUs up out of order; without
//! reordering TCP reads that as loss (duplicate ACKs, spurious fast
//! retransmits, halved windows) and uses a fraction of the link.

use std::path::Path;
use tcran_sim::{RunSummary, Sim, SimConfig};

fn run(bler: f64, pdcp: &str) -> RunSummary {
    let text = format!(
        r#"
    duration = "20s"
    warmup = "2s"
    [cell]
    bandwidth_mhz = 10
    bler = {bler}
    [[ues]]
    rnti = 1
    channel = {{ kind = "mcs", mcs = 20 }}
    [[ues.drbs]]
    id = 1
    rlc = {{ mode = "am" }}
    pdcp = {pdcp}
    [[flows]]
    name = "bulk"
    ue = 1
    kind = "tcp"
    tcp = {{ cc = "cubic" }}
    "#
    );
    let cfg: SimConfig = toml::from_str(&text).expect("scenario parses");
    Sim::new(&cfg, Path::new("."))
        .expect("scenario builds")
        .run()
        .summary
}

#[test]
fn reordering_lets_tcp_cubic_use_a_lossy_link() {
    let reorder = run(0.1, "{}");
    let ooo = run(0.1, "{ out_of_order_delivery = true }");
    let clean = run(0.0, "{}");
    let (r, o, c) = (
        reorder.flows[0].throughput_mbps,
        ooo.flows[0].throughput_mbps,
        clean.flows[0].throughput_mbps,
    );
    println!("bler 0.1: reordering {r:.2} Mbit/s, out of order {o:.2}; bler 0: {c:.2}");
    assert!(r > 1.5 * o, "reordering {r} vs out of order {o}");
    // HARQ makes up for most of a 10 % BLER (at most 10 % of the slots
    // carry a retransmission, plus the RLC/TCP reaction to the rare loss).
    assert!(r > 0.6 * c, "reordering {r} vs clean {c}");
    assert_eq!(reorder.packets.unaccounted, 0);
}
