//! Simulation speed on the reference scenario of issue 5: 1 cell, 25 PRB,
//! 15 kHz, 1 UE, one CUBIC bulk download and one VoIP call, 5 MB RLC, 60 s.
//! Prints wall time and the speed-up over real time (median of 5 runs).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // measures wall time

use std::path::Path;
use std::time::Instant;
use tcran_sim::{Sim, SimConfig};

const REFERENCE: &str = r#"
    duration = "60s"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[flows]]
    name = "bulk"
    ue = 1
    kind = "tcp"
    [[flows]]
    name = "voip"
    ue = 1
    kind = "voip"
"#;

fn main() {
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
