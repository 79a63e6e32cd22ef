//! Several cells with UEs handing over between them (`[[cells]]`,
//! `scenarios/ns3-handover.toml`, `scenarios/handover-drive.toml`,
//! `scenarios/drive-trace.toml`): the
//! handover happens where the A3 condition and time-to-trigger put it,
//! the forwarded data reaches the UE, and every packet is accounted for.

use std::path::{Path, PathBuf};
use tcran_sim::{RunSummary, Sim, SimConfig};

fn load(name: &str) -> SimConfig {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("scenario readable");
    SimConfig::from_toml(&text).expect("scenario parses")
}

fn run(cfg: &SimConfig, variant: Option<&str>) -> RunSummary {
    let c = match variant {
        None => cfg.clone(),
        Some(v) => {
            cfg.runs()
                .into_iter()
                .find(|(n, _)| n == v)
                .unwrap_or_else(|| panic!("no variant {v}"))
                .1
        }
    };
    Sim::new(&c, Path::new("."))
        .expect("scenario builds")
        .run()
        .summary
}

/// TR 38.901 UMa NLOS path loss (Table 7.4.1-1, PL'_UMa-NLOS, which
/// exceeds PL_UMa-LOS at these distances): 13.54 + 39.08 log10(d3D) +
/// 20 log10(fc) - 0.6 (h_UT - 1.5).
fn uma_nlos_db(d2d: f64) -> f64 {
    let d3d = d2d.hypot(25.0 - 1.5);
    13.54 + 39.08 * d3d.log10() + 20.0 * 2.12f64.log10()
}

/// Case A of the ns-3 comparison: equal sites, equal powers, so A3 with
/// offset 0 and hysteresis 3 dB enters where the target's path loss is 3
/// dB below the source's. Worked by hand: that is x = 272.2 m along the
/// line (bisection below, 3D distances), 17.22 s into the drive from x =
/// 100 m at 10 m/s. The trigger then needs the condition at every 200-ms measurement
/// for 256 ms (three occasions) and the layer-3 filter (k = 4, a = 1/2)
/// lags by about one occasion: the handover comes 0.4 to 1.0 s later.
/// Exactly one handover, from cell 1 to cell 2; the ledger balances.
#[test]
fn ns3_case_a_hands_over_once_where_a3_and_time_to_trigger_say() {
    let (mut lo, mut hi) = (250.0, 400.0);
    for _ in 0..60 {
        let x = (lo + hi) / 2.0;
        if uma_nlos_db(x) - uma_nlos_db(500.0 - x) > 3.0 {
            hi = x;
        } else {
            lo = x;
        }
    }
    let entering_s = (lo - 100.0) / 10.0;
    assert!((entering_s - 17.22).abs() < 0.01, "{entering_s}");
    let s = run(&load("ns3-handover.toml"), None);
    assert_eq!(s.handovers.len(), 1, "{:?}", s.handovers);
    let h = &s.handovers[0];
    assert_eq!((h.source, h.target), (1, 2));
    assert!(
        h.at_s >= entering_s + 0.4 && h.at_s <= entering_s + 1.0,
        "handover at {} s, A3 entering at {entering_s} s",
        h.at_s
    );
    assert_eq!(s.packets.unaccounted, 0, "{:?} {:?}", s.packets, s.drops);
    // ns-3 LENA's download in the same scene: 62.5 Mbit/s over 1-40 s
    // (scripts/ns3/results/handover.json). Neither counts the idle cell 2
    // as an interferer (a neighbour interferes by its load), so both run
    // on the SNR along the whole track; their link adaptations differ
    // (TR 36.942's bound against LENA's error model): within 25 %.
    let download = &s.flows[0];
    assert!(
        (62.5 * 0.75..=62.5 * 1.25).contains(&download.throughput_mbps),
        "{} Mbit/s against LENA's 62.5",
        download.throughput_mbps
    );
    assert_eq!(s.cells.len(), 2);
    assert!(
        s.cells.iter().all(|c| c.prb_utilization > 0.1),
        "{:?}",
        s.cells
    );
}

/// The drive with a download and a call: the vanilla bearer forwards its
/// bloated RLC buffer at the handover, the paced one far less, and the
/// call's worst delay is lower with the pacer.
#[test]
fn the_paced_pipeline_forwards_far_less_at_handover() {
    let cfg = load("handover-drive.toml");
    let (vanilla, paced) = (run(&cfg, Some("vanilla")), run(&cfg, Some("priority+jit")));
    for s in [&vanilla, &paced] {
        assert_eq!(s.packets.unaccounted, 0, "{:?}", s.packets);
        assert!(!s.handovers.is_empty());
    }
    let bytes = |s: &RunSummary| s.handovers.iter().map(|h| h.forwarded_bytes).sum::<u64>();
    assert!(
        bytes(&paced) * 4 < bytes(&vanilla),
        "forwarded: paced {} B, vanilla {} B",
        bytes(&paced),
        bytes(&vanilla)
    );
    let voip_max = |s: &RunSummary| {
        s.flows
            .iter()
            .find(|f| f.name == "voip")
            .expect("voip")
            .delay_ms
            .max
    };
    assert!(voip_max(&paced) < voip_max(&vanilla));
}

/// The recorded drive (`scenarios/drive-trace.toml`, six cells of the
/// UCC 5G dataset) against the recording network's own decisions, the
/// trace's serving-cell changes: an outside check of tcran's A3 decisions
/// (3 dB hysteresis, 256 ms time-to-trigger) on real RSRPs. The recording
/// changed cell 9 times (at 61, 64, 66, 81, 91, 95, 107, 110 and 113 s;
/// data/traces/ucc-drive/README.md). Its rows are 1 s apart, its
/// neighbour readings carry no cell id (the conversion attributes them to
/// the next serving cell) and the operator's own hysteresis and
/// time-to-trigger are unknown, so the bounds are loose and stated: a
/// recorded change is matched by a decision of tcran's within 3 s (one
/// row to see the new cell's RSRP, one to confirm it, the time-to-trigger
/// and the layer-3 filter's lag, k = 4: about one 200-ms occasion), at
/// least 5 of the 9 are matched, and tcran decides 9 ± 2 handovers.
/// (Today: 10 handovers, 5 matched; the unmatched are three early ones,
/// at 21.6, 35.6 and 51.4 s, where the trace's neighbour stayed 3 dB
/// above the serving cell for two rows and the operator did not move,
/// and the 107-113 s ping-pongs, over which tcran stays put: the
/// neighbour readings there are within 3 dB of the serving cell.)
#[test]
fn drive_trace_handovers_follow_the_recorded_ones() {
    const TOLERANCE_S: f64 = 3.0;
    let mut cfg = load("drive-trace.toml");
    // The decisions do not depend on the traffic: the call is enough.
    cfg.flows.retain(|f| f.name == "voip");
    let s = run(&cfg, Some("vanilla"));
    let recorded = [61.0, 64.0, 66.0, 81.0, 91.0, 95.0, 107.0, 110.0, 113.0];
    let ours: Vec<f64> = s.handovers.iter().map(|h| h.at_s).collect();
    let matched = recorded
        .iter()
        .filter(|r| ours.iter().any(|o| (o - *r).abs() <= TOLERANCE_S))
        .count();
    assert!(matched >= 5, "matched {matched} of 9: {ours:?}");
    assert!((7..=11).contains(&ours.len()), "{ours:?}");
    // Every decision is between two cells of the drive.
    let cells = [10945805, 11187723, 11194123, 10945804, 11127051, 10945803];
    assert!(s
        .handovers
        .iter()
        .all(|h| h.source != h.target && cells.contains(&h.source) && cells.contains(&h.target)));
    assert_eq!(s.packets.unaccounted, 0, "{:?} {:?}", s.packets, s.drops);
}

/// `[handover] preparation` (decision -> command, TS 38.300 §9.2.3.2.1
/// steps 2-5) moves the command exactly that much after the decision,
/// and the source serves the UE meanwhile: ns-3 case A's one handover,
/// at 18.0 s without it, comes at 18.12 s with 120 ms.
#[test]
fn preparation_delays_the_command_by_its_length() {
    let mut cfg = load("ns3-handover.toml");
    cfg.duration = tcran_core::Duration::from_secs(20);
    let at = |cfg: &SimConfig| {
        let s = run(cfg, None);
        assert_eq!(s.handovers.len(), 1, "{:?}", s.handovers);
        assert_eq!(s.packets.unaccounted, 0);
        (s.handovers[0].at_s, s.handovers[0].preparation_ms)
    };
    let (t0, p0) = at(&cfg);
    let mut ho = cfg.handover.clone().unwrap_or_default();
    ho.preparation = tcran_core::Duration::from_millis(120);
    cfg.handover = Some(ho);
    let (t1, p1) = at(&cfg);
    assert_eq!((p0, p1), (0.0, 120.0));
    assert!((t1 - t0 - 0.12).abs() < 1e-9, "{t0} -> {t1}");
    // Between the decision and the command the source has prepared the
    // handover (MM.HoPrepInter*) and the target allocated resources
    // (MM.HoResAlloInter*), but no execution has been requested
    // (MM.HoExeInterReq counts the command, TS 28.552 §5.1.1.6.1).
    let mut sim = Sim::new(&cfg, Path::new(".")).expect("scenario builds");
    let (source, target) = (0, 1);
    let midway = tcran_core::Instant::ZERO + tcran_core::Duration::from_secs_f64(t0 + 0.06);
    sim.run_until(midway);
    let (s, t) = (sim.handover_counters(source), sim.handover_counters(target));
    assert_eq!((s.prep_requested, s.prep_succeeded), (1, 1), "{s:?}");
    assert_eq!(
        (t.res_alloc_requested, t.res_alloc_succeeded),
        (1, 1),
        "{t:?}"
    );
    assert_eq!(s.exe_requested, 0, "{s:?}");
    sim.run_until(tcran_core::Instant::ZERO + tcran_core::Duration::from_secs_f64(t1 + 0.5));
    let s = sim.handover_counters(source);
    assert_eq!(
        (s.prep_requested, s.exe_requested, s.exe_succeeded),
        (1, 1, 1),
        "{s:?}"
    );
}
