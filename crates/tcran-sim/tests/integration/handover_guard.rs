//! A controller in a multi-cell run: the mobility-aware `handover_guard`
//! on the ns-3 comparison drive (`scenarios/ns3-handover.toml`: no
//! shadowing, NLOS, so the handover margin moves smoothly along the road).
//!
//! Worked by hand: the margin is the neighbour's RSRP less the serving
//! cell's, i.e. the serving cell's TR 38.901 UMa NLOS path loss less the
//! neighbour's. On the way from x = 100 m to x = 400 m at 10 m/s it
//! reaches -6 dB (`ahead_db`) at x_a, where PL(x_a) - PL(500 - x_a) =
//! -6 dB; after the handover cell 2 serves and the margin PL(500 - x) -
//! PL(x) falls below -9 dB (`clear_db`) at x_c. The layer-3 filter lags
//! one or two 200-ms occasions, so the guard deploys its pipeline within
//! a second after x_a is passed, before the handover, and puts the
//! bearer's own back within a second after x_c, after it. With the guard
//! the handover forwards less than the 3GPP bearer without it.

use std::path::{Path, PathBuf};
use tcran_sim::{RunOutput, Sim, SimConfig};

/// TR 38.901 UMa NLOS path loss (Table 7.4.1-1), the scenario's geometry.
fn uma_nlos_db(d2d: f64) -> f64 {
    let d3d = d2d.hypot(25.0 - 1.5);
    13.54 + 39.08 * d3d.log10() + 20.0 * 2.12f64.log10()
}

/// Where `f` (increasing in x) crosses `y` between 100 and 400 m.
fn crossing(f: impl Fn(f64) -> f64, y: f64) -> f64 {
    let (mut lo, mut hi) = (100.0, 400.0);
    for _ in 0..60 {
        let x = (lo + hi) / 2.0;
        if f(x) > y {
            hi = x;
        } else {
            lo = x;
        }
    }
    lo
}

const GUARD: &str = r#"
[[controllers]]
kind = "handover_guard"
period = "100ms"
ahead_db = 6
clear_db = 9
[controllers.pipeline]
pacer = { kind = "jit" }
[[controllers.pipeline.queues]]
id = 0
kind = "codel"
"#;

fn run(guard: bool) -> RunOutput {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ns3-handover.toml");
    let mut text = std::fs::read_to_string(path).unwrap();
    if guard {
        text.push_str(GUARD);
    }
    let cfg = SimConfig::from_toml(&text).unwrap();
    Sim::new(&cfg, Path::new(".")).unwrap().run()
}

#[test]
fn the_guard_paces_the_bearer_from_before_the_handover_until_after_it() {
    let x_a = crossing(|x| uma_nlos_db(x) - uma_nlos_db(500.0 - x), -6.0);
    let x_c = crossing(|x| uma_nlos_db(x) - uma_nlos_db(500.0 - x), 9.0);
    let at = |x: f64| (x - 100.0) / 10.0;
    let with = run(true);
    let handovers = &with.summary.handovers;
    assert_eq!(handovers.len(), 1, "{handovers:?}");
    let ho = handovers[0].at_s;
    let changes: Vec<(f64, &str)> = with
        .series
        .reconfigurations
        .iter()
        .map(|r| (r.t_s, r.by.as_str()))
        .collect();
    assert_eq!(with.series.failed_reconfigurations.len(), 0);
    assert_eq!(changes.len(), 2, "deploy, then restore: {changes:?}");
    let (deploy, restore) = (changes[0].0, changes[1].0);
    assert!(
        (at(x_a)..at(x_a) + 1.0).contains(&deploy) && deploy < ho,
        "deploy at {deploy} s: x_a = {x_a:.1} m ({:.2} s), handover at {ho} s",
        at(x_a)
    );
    assert!(
        (at(x_c)..at(x_c) + 1.0).contains(&restore) && restore > ho,
        "restore at {restore} s: x_c = {x_c:.1} m ({:.2} s), handover at {ho} s",
        at(x_c)
    );
    assert!(changes.iter().all(|(_, by)| *by == "handover_guard"));
    let without = run(false);
    let forwarded = |o: &RunOutput| o.summary.handovers[0].forwarded_packets;
    assert!(
        forwarded(&with) < forwarded(&without),
        "{} with the guard, {} without",
        forwarded(&with),
        forwarded(&without)
    );
    assert_eq!(with.summary.packets.created, {
        let p = &with.summary.packets;
        p.delivered + p.dropped + p.in_flight
    });
}

#[test]
fn a_guard_that_would_restore_before_it_deploys_is_refused_by_name() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ns3-handover.toml");
    let text =
        std::fs::read_to_string(path).unwrap() + &GUARD.replace("clear_db = 9", "clear_db = 5");
    let cfg = SimConfig::from_toml(&text).unwrap();
    let e = Sim::new(&cfg, Path::new(".")).unwrap_err().to_string();
    assert!(
        e.contains("controllers[0]") && e.contains("clear_db") && e.contains("above ahead_db (6)"),
        "{e}"
    );
}
