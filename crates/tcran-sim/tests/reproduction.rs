//! The seeds' qualitative claims, checked on the scenarios of
//! `scenarios/reproduction/` (docs/reproduction.md has the full runs, the
//! papers' numbers next to ours and every difference explained).
//!
//! Each test loads a shipped scenario, keeps only the variants a claim needs
//! and usually shortens the run; it asserts orderings and rough factors taken
//! from the paper (the factor the paper reports, with a margin), never our
//! own output pasted back.

use std::path::{Path, PathBuf};
use tcran_core::Duration;
use tcran_sim::report::FlowSummary;
use tcran_sim::{RunSummary, Sim, SimConfig};

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/reproduction")
}

fn load(name: &str) -> SimConfig {
    let path = scenario_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    SimConfig::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Runs one variant of a scenario (`"default"` for a scenario without
/// variants), optionally with a shorter duration.
fn run(cfg: &SimConfig, variant: &str, duration: Option<Duration>) -> RunSummary {
    let (_, mut c) = cfg
        .runs()
        .into_iter()
        .find(|(n, _)| n == variant)
        .unwrap_or_else(|| panic!("no variant {variant}"));
    if let Some(d) = duration {
        c.duration = d;
    }
    Sim::new(&c, &scenario_dir())
        .expect("scenario builds")
        .run()
        .summary
}

fn flow<'a>(s: &'a RunSummary, name: &str) -> &'a FlowSummary {
    s.flows
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

/// The thesis' delay "at the eNodeB": from SDAP/UPF entry to delivery, i.e.
/// the TC queues plus RLC and air (our one-way delay minus the core).
fn ran_delay(s: &RunSummary, name: &str) -> f64 {
    let l = flow(s, name).layers_ms;
    l.tc + l.rlc_air
}

fn total_mbps(s: &RunSummary) -> f64 {
    s.flows.iter().map(|f| f.throughput_mbps).sum()
}

#[test]
fn every_reproduction_scenario_parses_builds_and_says_what_it_reproduces() {
    let mut names: Vec<_> = std::fs::read_dir(scenario_dir())
        .expect("scenarios/reproduction exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{} scenarios", names.len());
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# Reproduces"),
            "{}: header must say which paper/figure it reproduces",
            path.display()
        );
        assert!(text.contains("# Shows:"), "{}", path.display());
        let cfg = SimConfig::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (variant, c) in cfg.runs() {
            if let Err(e) = Sim::new(&c, &scenario_dir()) {
                panic!("{} variant {variant}: {e}", path.display());
            }
        }
    }
}

/// Thesis Fig. 3.8 (emulator, first scenario, pedestrian): 5G-BDP reduces
/// the game's mean delay about 7.9x against vanilla, 3.5x against BBR and
/// 1.7x against DRQL; DynRLC, stepping its SDU limit, uses fewer resources
/// (utilisation 0.988 against 5G-BDP's 0.9995).
#[test]
fn thesis_ch3_emulator_pacers_cut_the_game_delay_and_bbr_sits_between() {
    let cfg = load("thesis-ch3-s1-pedestrian.toml");
    let d = Some(secs(80));
    let [vanilla, bbr, drql, bdp, dynrlc] =
        ["vanilla", "bbr", "drql", "5g-bdp", "dynrlc"].map(|v| run(&cfg, v, d));
    assert!(dynrlc.prb_utilization < bdp.prb_utilization);
    let [vanilla, bbr, drql, bdp] = [vanilla, bbr, drql, bdp].map(|s| ran_delay(&s, "gaming"));
    assert!(vanilla > 5.0 * bdp, "vanilla {vanilla} vs 5G-BDP {bdp}");
    assert!(vanilla > bbr, "vanilla {vanilla} vs BBR {bbr}");
    assert!(bbr > 2.0 * bdp, "BBR {bbr} vs 5G-BDP {bdp}");
    assert!(drql > 1.2 * bdp, "DRQL {drql} vs 5G-BDP {bdp}");
}

/// Thesis Figs. 3.14-3.15 (second scenario, one shared SDAP queue): CoDel
/// at SDAP over 5G-BDP beats BBR (3.1 / 1.5 = about 2x) and vanilla (7.3 /
/// 1.5 = about 5x); 5G-BDP without an AQM above it only moves the bloat from
/// RLC to SDAP (the thesis' case for USP and CoDel at SDAP).
#[test]
fn thesis_ch3_shared_sdap_needs_an_aqm_above_the_pacer() {
    let cfg = load("thesis-ch3-s2-train.toml");
    let d = Some(secs(60));
    let [vanilla, bbr, codel, fifo] = ["vanilla", "bbr", "codel@5g-bdp", "fifo@5g-bdp"]
        .map(|v| ran_delay(&run(&cfg, v, d), "gaming"));
    assert!(bbr > 1.2 * codel, "BBR {bbr} vs CoDel@5G-BDP {codel}");
    assert!(
        vanilla > 3.0 * codel,
        "vanilla {vanilla} vs CoDel@5G-BDP {codel}"
    );
    assert!(
        fifo > 10.0 * codel,
        "FIFO@5G-BDP {fifo} vs CoDel@5G-BDP {codel}"
    );
}

/// Thesis Figs. 3.22-3.23 and Table 3.2 (OAI testbed, MCS 28): the call
/// waits seconds in vanilla, tens of ms with BBR, a few TTIs with the RLC
/// pacers, e5G-BDP fastest; e5G-BDP keeps the throughput (16.20 vs 16.58
/// Mbit/s) and loses 1.9 % of the RBs.
#[test]
fn thesis_ch3_testbed_orders_vanilla_bbr_and_the_rlc_pacers() {
    let cfg = load("thesis-ch3-testbed-mcs28.toml");
    let d = Some(secs(35));
    let runs: Vec<_> = ["vanilla", "bbr", "dynrlc", "drql", "e5g-bdp"]
        .iter()
        .map(|v| run(&cfg, v, d))
        .collect();
    let delay: Vec<f64> = runs.iter().map(|s| ran_delay(s, "voip1")).collect();
    let [vanilla, bbr, dynrlc, drql, e5g] = delay[..] else {
        unreachable!()
    };
    // Table 3.2: vanilla/BBR about 30x, BBR/e5G-BDP about 40x.
    assert!(vanilla > 5.0 * bbr, "vanilla {vanilla} BBR {bbr}");
    assert!(bbr > 3.0 * e5g, "BBR {bbr} e5G-BDP {e5g}");
    // Fig. 3.22: e5G-BDP delivers within a TTI what DRQL and DynRLC need two for.
    assert!(e5g < drql && e5g < dynrlc, "{e5g} {drql} {dynrlc}");
    let e5g_run = &runs[4];
    assert!(
        e5g_run.prb_utilization > 0.97,
        "{}",
        e5g_run.prb_utilization
    );
    let (v_thr, e_thr) = (
        flow(&runs[0], "bulk").throughput_mbps,
        flow(e5g_run, "bulk").throughput_mbps,
    );
    assert!(
        e_thr > 0.9 * v_thr,
        "e5G-BDP {e_thr} vanilla {v_thr} Mbit/s"
    );
}

/// Thesis Table 3.4 (pedestrian profile): DynRLC, counting SDUs instead of
/// bytes, leaves 19 % of the RBs unused where e5G-BDP leaves 0.7 %.
#[test]
fn thesis_ch3_testbed_dynrlc_wastes_prbs_that_e5g_bdp_uses() {
    let cfg = load("thesis-ch3-testbed-pedestrian.toml");
    let d = Some(secs(35));
    let unused_dynrlc = 1.0 - run(&cfg, "dynrlc", d).prb_utilization;
    let unused_e5g = 1.0 - run(&cfg, "e5g-bdp", d).prb_utilization;
    assert!(unused_dynrlc > 0.05, "DynRLC leaves {unused_dynrlc}");
    assert!(
        unused_dynrlc > 3.0 * unused_e5g,
        "DynRLC {unused_dynrlc} e5G-BDP {unused_e5g}"
    );
}

/// TC-RAN Fig. 6a: OSI classifier + round robin + 5G-BDP split the cell
/// 50 %-50 % between flow 1 and flows 2-4 (20 and 20 Mbit/s), where without
/// the pipeline flow 1 gets about a quarter.
#[test]
fn tcran_flow_slicing_gives_flow_one_half_of_the_cell() {
    let cfg = load("tcran-fig6a-flow-slicing.toml");
    let d = Some(secs(30));
    let share = |s: &RunSummary| {
        let one = flow(s, "flow1").throughput_mbps;
        one / (total_mbps(s) - one)
    };
    let sliced = share(&run(&cfg, "osi+rr+5g-bdp", d));
    let vanilla = share(&run(&cfg, "vanilla", d));
    assert!(
        (0.8..1.25).contains(&sliced),
        "flow 1 / flows 2-4 = {sliced}"
    );
    assert!(vanilla < 0.6, "vanilla flow 1 / flows 2-4 = {vanilla}");
}

/// TC-RAN Fig. 6b: flows 1-3 shaped to 15 Mbit/s, flow 4 takes the rest
/// (25 Mbit/s in the paper).
#[test]
fn tcran_shaper_holds_the_slice_at_15_mbit() {
    let cfg = load("tcran-fig6b-shaper.toml");
    let s = run(&cfg, "osi+shaper+rr+5g-bdp", Some(secs(30)));
    let shaped: f64 = ["flow1", "flow2", "flow3"]
        .iter()
        .map(|f| flow(&s, f).throughput_mbps)
        .sum();
    assert!((13.5..=15.5).contains(&shaped), "shaped slice {shaped}");
    assert!(flow(&s, "flow4").throughput_mbps > shaped);
}

/// TC-RAN Fig. 7: four CUBIC flows bloat the RLC buffer beyond 1.5 MB and
/// the ping waits above 300 ms; CoDel + RR + 5G-BDP empties RLC and cuts the
/// ping's delay. (The paper also sees "no throughput decrease"; our run loses
/// about 12 %, a known difference explained in docs/reproduction.md, so it is
/// not asserted here.)
#[test]
fn tcran_codel_rr_5g_bdp_empties_rlc_and_cures_the_ping() {
    let cfg = load("tcran-fig7-codel-5g-bdp.toml");
    let d = Some(secs(30));
    let vanilla = run(&cfg, "vanilla", d);
    let cured = run(&cfg, "codel+rr+5g-bdp", d);
    let rtt = |s: &RunSummary| flow(s, "ping").rtt_ms.expect("ping rtt").mean;
    assert!(vanilla.rlc.mean_bytes > 1.5e6, "{}", vanilla.rlc.mean_bytes);
    assert!(rtt(&vanilla) > 300.0, "vanilla ping {}", rtt(&vanilla));
    assert!(
        rtt(&cured) < rtt(&vanilla) / 10.0,
        "cured ping {}",
        rtt(&cured)
    );
    assert!(cured.rlc.mean_bytes < vanilla.rlc.mean_bytes / 100.0);
}

/// TC-RAN Figs. 9-10: the game's delay goes up to 1.8 s in vanilla and
/// stays around 20 ms once the greedy flows are in a CoDel queue; the RLC
/// sojourn never exceeds 20 ms; throughput 30 instead of 40 Mbit/s.
#[test]
fn tcran_online_game_survives_when_greedy_flows_go_to_codel() {
    let cfg = load("tcran-fig9-online-game.toml");
    let d = Some(secs(30));
    let vanilla = run(&cfg, "vanilla", d);
    let cured = run(&cfg, "greedy-to-codel", d);
    let (v, c) = (
        flow(&vanilla, "game").delay_ms.mean,
        flow(&cured, "game").delay_ms.mean,
    );
    assert!(v > 10.0 * c, "game: vanilla {v} ms, CoDel {c} ms");
    assert!(cured.rlc.mean_sojourn_ms < 20.0);
    assert!(total_mbps(&cured) > 0.6 * total_mbps(&vanilla));
}

/// TC-RAN Fig. 15 (MCS 6 -> 18): CUBIC's mean delay (210 ms) is 7-10x that
/// of BBR, Prague and FQ-CoDel (20-30 ms), and it uses the most PRBs (86 %
/// against 78-83 %).
#[test]
fn tcran_dynamic_mcs_cubic_bloats_and_the_others_do_not() {
    let cfg = load("tcran-fig15-dynamic-mcs.toml");
    let cubic = run(&cfg, "cubic", None);
    let c_delay = flow(&cubic, "flow1").delay_ms.mean;
    for v in ["bbr", "prague+l4s-mark+5g-bdp", "fq_codel+5g-bdp"] {
        let s = run(&cfg, v, None);
        let delay = flow(&s, "flow1").delay_ms.mean;
        assert!(c_delay > 5.0 * delay, "{v}: {delay} ms vs CUBIC {c_delay}");
        assert!(cubic.prb_utilization >= s.prb_utilization, "{v}");
    }
}

/// Kumar et al. Fig. 2: the 1024-SDU RLC buffer adds about 540 ms to a
/// 15 ms ping; PDCP flow queues over a small RLC limit cut it, too small a
/// limit costs throughput, the RTT grows with the limit; the dynamic
/// controller keeps full throughput (15.4 Mbit/s, -3.8 %) at low RTT (31 ms).
#[test]
fn kumar_rlc_limit_trades_throughput_for_ping_rtt() {
    let cfg = load("kumar-fig2-static-rlc.toml");
    let d = Some(secs(30));
    let runs: Vec<_> = [
        "rlc-only",
        "pdcp-fq+rlc16",
        "pdcp-fq+rlc48",
        "pdcp-fq+rlc96",
        "pdcp-fq+dynamic",
    ]
    .iter()
    .map(|v| run(&cfg, v, d))
    .collect();
    let rtt: Vec<f64> = runs
        .iter()
        .map(|s| flow(s, "ping").rtt_ms.expect("rtt").mean)
        .collect();
    let thr: Vec<f64> = runs
        .iter()
        .map(|s| flow(s, "iperf").throughput_mbps)
        .collect();
    assert!(
        rtt[0] > 5.0 * rtt[2],
        "rlc-only {} vs 48 SDUs {}",
        rtt[0],
        rtt[2]
    );
    assert!(
        rtt[1] < rtt[2] && rtt[2] < rtt[3],
        "RTT grows with the limit: {rtt:?}"
    );
    assert!(thr[1] < 0.95 * thr[3], "16 SDUs starve TCP: {thr:?}");
    assert!(
        thr[4] > 0.9 * thr[0],
        "dynamic keeps the throughput: {thr:?}"
    );
    assert!(rtt[4] < rtt[0] / 4.0, "dynamic cuts the RTT: {rtt:?}");
}

/// Kumar et al. Fig. 6: a larger beta (DLT multiplier) buys throughput with
/// delay: the ping RTT grows with beta.
#[test]
fn kumar_dynamic_rtt_grows_with_beta() {
    let cfg = load("kumar-fig6-status-prohibit-25ms.toml");
    let d = Some(secs(30));
    let rtt = |v| flow(&run(&cfg, v, d), "ping").rtt_ms.expect("rtt").mean;
    let (low, high) = (rtt("pdcp-fq+dynamic-b1.25"), rtt("pdcp-fq+dynamic-b2.5"));
    assert!(low < high, "beta 1.25: {low} ms, beta 2.5: {high} ms");
}

/// Thesis Figs. 4.12-4.13: EQP cuts the VoIP packets' RLC (segmentation)
/// delay against FP in the 25 % slice (78 % vs 15 % within 1 ms) at almost
/// no throughput cost (15.60 vs 15.80 Mbit/s).
#[test]
fn thesis_ch4_eqp_cuts_segmentation_delay_against_fixed_partition() {
    for shares in ["25-75", "50-50"] {
        let fp = run(
            &load(&format!("thesis-ch4-fp-{shares}.toml")),
            "default",
            Some(secs(30)),
        );
        let eqp = run(
            &load(&format!("thesis-ch4-eqp-{shares}.toml")),
            "default",
            Some(secs(30)),
        );
        let (f, e) = (ran_delay(&fp, "voip1"), ran_delay(&eqp, "voip1"));
        assert!(e < f, "{shares}: EQP {e} ms, FP {f} ms");
        assert!(total_mbps(&eqp) > 0.95 * total_mbps(&fp), "{shares}");
    }
}

/// The student ns-3 study: the elephant multiplies the mice flow's delay
/// (3.9 -> 54.4 ms, 14x); BQL + FQ-CoDel brings it back (4.4 ms, 1.12x).
#[test]
fn student_elephant_bloats_mice_and_bql_fq_codel_cures_it() {
    let d = Some(secs(15));
    let alone = flow(&run(&load("student-mice-alone.toml"), "default", d), "mice")
        .delay_ms
        .mean;
    let cfg = load("student-mice-elephant.toml");
    let bloated = flow(&run(&cfg, "vanilla", d), "mice").delay_ms.mean;
    let cured = flow(&run(&cfg, "bql+fq_codel", d), "mice").delay_ms.mean;
    assert!(
        bloated > 5.0 * alone,
        "alone {alone}, with elephant {bloated}"
    );
    assert!(cured < 2.0 * alone, "alone {alone}, BQL + FQ-CoDel {cured}");
}

/// The student ns-3 study, second setup: a 10 kB RLC buffer drops most of a
/// 205.6 Mbit/s UDP elephant (71.5 Mbit/s delivered); with DRQL nothing is
/// dropped and the elephant gets 190.4 Mbit/s (2.7x).
#[test]
fn student_drql_saves_the_elephant_from_the_small_rlc_buffer() {
    let small = run(&load("student-drql-udp-rlc10k.toml"), "default", None);
    let drql = run(&load("student-drql-udp-drql.toml"), "drql", None);
    let (s, d) = (flow(&small, "elephant"), flow(&drql, "elephant"));
    assert!(s.lost_packets > 0);
    assert_eq!(d.lost_packets, 0);
    assert!(
        d.throughput_mbps > 1.25 * s.throughput_mbps,
        "{} vs {}",
        d.throughput_mbps,
        s.throughput_mbps
    );
}

/// Brunello secs. 5.1-5.2: the 5-10 ms span queues less than 7-15 ms
/// (Figs. 5.3-5.6), and alpha changes little (Table 5.2: mean queue delay
/// 3.02 vs 2.54 ms between alpha 1 and 0.125, within 20 %); without L4S
/// marking the scalable flow's queue is unbounded.
#[test]
fn brunello_lower_thresholds_queue_less_and_alpha_matters_little() {
    let cfg = load("brunello-l4s-thresholds.toml");
    let d = Some(secs(40));
    let tc = |v| flow(&run(&cfg, v, d), "scalable").layers_ms.tc;
    let (low, high) = (tc("l4s-5-10-a0.25-dbs"), tc("l4s-7-15-a0.25-dbs"));
    assert!(low < high, "5-10 ms: {low}, 7-15 ms: {high}");
    let (a1, a8) = (tc("l4s-5-10-a1.0-dbs"), tc("l4s-5-10-a0.125-dbs"));
    assert!(
        (a1 - a8).abs() < 0.2 * a1.max(a8),
        "alpha 1: {a1}, alpha 0.125: {a8}"
    );
    let none = tc("no-l4s");
    assert!(none > 10.0 * low, "no L4S: {none}, L4S: {low}");
}
