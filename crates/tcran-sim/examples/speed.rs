//! Simulation speed on the reference scenario of issue 5
//! (scenarios/reference.toml: 1 cell, 25 PRB, 15 kHz, 1 UE, one CUBIC bulk
//! download and one VoIP call, 5 MB RLC, 60 s), in the engine alone.
//! Prints wall time and the speed-up over real time (median of 5 runs).
//!
//! `speed scale`: the scale scenario instead: 100 MHz at 30 kHz (273 PRB),
//! 50 UEs each with one CUBIC download and one VoIP call, 10 s simulated,
//! one run (measure memory with `/usr/bin/time -v`).
//!
//! `speed cells`: the multi-cell scale case of issue 29: 7 cells (a
//! centre site and its six neighbours at TR 38.901's 500-m inter-site
//! distance, 20 MHz at 15 kHz each), 30 UEs per cell each with one CUBIC
//! download and one VoIP call, every UE driving 600 m at 10 m/s from near
//! its site, with A3 handovers; 60 s simulated, one run.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // measures wall time

use std::path::Path;
use std::time::Instant;
use tcran_sim::{Sim, SimConfig};

/// The reference scenario, the file `tcran run` times too (`make speed`).
const REFERENCE: &str = include_str!("../../../scenarios/reference.toml");

fn scale() -> String {
    let mut s = String::from(
        r#"
    duration = "10s"
    [cell]
    numerology = 1
    bandwidth_mhz = 100
    "#,
    );
    for u in 1..=50 {
        s.push_str(&format!(
            "[[ues]]\nrnti = {u}\nchannel = {{ kind = \"mcs\", mcs = {} }}\n",
            10 + u % 18
        ));
    }
    for u in 1..=50 {
        s.push_str(&format!(
            "[[flows]]\nname = \"bulk{u}\"\nue = {u}\nkind = \"tcp\"\n\
             [[flows]]\nname = \"voip{u}\"\nue = {u}\nkind = \"voip\"\n"
        ));
    }
    s
}

fn cells() -> String {
    let sites: [(f64, f64); 7] = [
        (0.0, 0.0),
        (500.0, 0.0),
        (250.0, 433.0),
        (-250.0, 433.0),
        (-500.0, 0.0),
        (-250.0, -433.0),
        (250.0, -433.0),
    ];
    let mut s = String::from(
        r#"
    duration = "60s"
    [cell]
    bandwidth_mhz = 20
    "#,
    );
    for (c, (x, y)) in sites.iter().enumerate() {
        s.push_str(&format!("[[cells]]\nid = {}\nsite = [{x}, {y}]\n", c + 1));
    }
    let mut u = 0;
    for (x, y) in sites {
        for _ in 0..30 {
            u += 1;
            // Spread start points and headings deterministically (the
            // golden angle), 40 to 240 m from the site.
            let r = 40.0 + f64::from((u * 37) % 200);
            let a = f64::from(u) * 2.399_963;
            let (x0, y0) = (x + r * a.cos(), y + r * a.sin());
            let (x1, y1) = (x0 + 600.0 * (a + 1.0).cos(), y0 + 600.0 * (a + 1.0).sin());
            s.push_str(&format!(
                "[[ues]]\nrnti = {u}\nchannel = {{ kind = \"geometry\", track = [[{x0:.1}, {y0:.1}], [{x1:.1}, {y1:.1}]], speed_mps = 10 }}\n"
            ));
            s.push_str(&format!(
                "[[flows]]\nname = \"bulk{u}\"\nue = {u}\nkind = \"tcp\"\n\
                 [[flows]]\nname = \"voip{u}\"\nue = {u}\nkind = \"voip\"\n"
            ));
        }
    }
    s
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("cells") {
        let cfg: SimConfig = toml::from_str(&cells()).expect("cells scenario");
        let t = Instant::now();
        let out = Sim::new(&cfg, Path::new(".")).expect("builds").run();
        let wall = t.elapsed().as_secs_f64();
        let s = &out.summary;
        let total: f64 = s.flows.iter().map(|f| f.throughput_mbps).sum();
        assert_eq!(s.packets.unaccounted, 0);
        println!(
            "cells scenario (7 cells x 30 UEs x 2 flows, 60 s simulated): wall {wall:.1} s, \
             {total:.0} Mbit/s delivered, {} handovers, {} packets",
            s.handovers.len(),
            s.packets.created
        );
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("scale") {
        let cfg: SimConfig = toml::from_str(&scale()).expect("scale scenario");
        let t = Instant::now();
        let out = Sim::new(&cfg, Path::new(".")).expect("builds").run();
        let wall = t.elapsed().as_secs_f64();
        let s = &out.summary;
        let total: f64 = s.flows.iter().map(|f| f.throughput_mbps).sum();
        println!(
            "scale scenario (273 PRB, 50 UEs, 10 s simulated): wall {wall:.1} s, \
             {total:.0} Mbit/s delivered, PRB use {:.1} %, {} packets",
            s.prb_utilization * 100.0,
            s.packets.created
        );
        return;
    }
    let cfg: SimConfig = toml::from_str(REFERENCE).expect("reference scenario");
    let mut walls: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let s = Sim::new(&cfg, Path::new("."))
                .expect("builds")
                .run()
                .summary;
            let wall = t.elapsed().as_secs_f64();
            assert!(s.prb_utilization > 0.9);
            wall
        })
        .collect();
    walls.sort_by(f64::total_cmp);
    let median = walls[2];
    println!(
        "reference scenario (60 s simulated): median wall {:.3} s, {:.0}x real time",
        median,
        60.0 / median
    );
}
