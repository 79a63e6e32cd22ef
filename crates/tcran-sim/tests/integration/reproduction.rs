//! The seeds' qualitative claims, checked on the scenarios of
//! `scenarios/reproduction/` (docs/reproduction.md has the full runs, the
//! papers' numbers next to ours and every difference explained).
//!
//! Each test loads a shipped scenario, keeps only the variants a claim needs
//! and usually shortens the run; it asserts the paper's orderings and its
//! numbers two-sided: within 2x of the paper's ([`paper_value`],
//! [`paper_range`], the rule of the fidelity table), or,
//! where a file's `gap` explains a larger difference, within bounds
//! computed from that cause ([`bounded`]), never our own output pasted
//! back. Claims we do not reproduce are listed in docs/reproduction.md and
//! in the files' gaps, and not asserted.

use std::path::{Path, PathBuf};
use tcran_core::Duration;
use tcran_sim::report::FlowSummary;
use tcran_sim::{RunOutput, RunSummary, Sim, SimConfig};

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

/// Runs one variant of a scenario, optionally with a shorter duration;
/// the summary and the series.
fn run_full(cfg: &SimConfig, variant: &str, duration: Option<Duration>) -> RunOutput {
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
}

fn run(cfg: &SimConfig, variant: &str, duration: Option<Duration>) -> RunSummary {
    run_full(cfg, variant, duration).summary
}

fn flow<'a>(s: &'a RunSummary, name: &str) -> &'a FlowSummary {
    s.flows
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

/// The thesis' delay "at the eNodeB" / "from UPF entry until the MAC":
/// the UPF queue, the TC queues, RLC and air (our one-way delay minus the
/// core).
fn ran_delay(s: &RunSummary, name: &str) -> f64 {
    let l = flow(s, name).layers_ms;
    l.upf.mean + l.tc.mean + l.rlc.mean + l.air.mean
}

/// The thesis emulator's delay "from UPF entry until the MAC takes the
/// packet" (sec. 3.6.1): the UPF queue, the TC queues and RLC, without the
/// scheduling period the transport block then spends on the air.
fn enb_delay(s: &RunSummary, name: &str) -> f64 {
    let l = flow(s, name).layers_ms;
    l.upf.mean + l.tc.mean + l.rlc.mean
}

/// The mean RAN delay over every flow whose name starts with `prefix`.
fn ran_delay_of(s: &RunSummary, prefix: &str) -> f64 {
    let d: Vec<f64> = s
        .flows
        .iter()
        .filter(|f| f.name.starts_with(prefix))
        .map(|f| ran_delay(s, &f.name))
        .collect();
    assert!(!d.is_empty(), "no flow {prefix}*");
    d.iter().sum::<f64>() / d.len() as f64
}

/// A value (or ratio) the paper gives, checked two-sided: ours within 2x
/// of it (the rule of `tcran reproduce`'s fidelity table).
/// `TCRAN_PRINT_RATIOS=1` prints every check instead of stopping at the
/// first miss.
fn paper_value(what: &str, ours: f64, paper: f64) {
    bounded(
        what,
        ours,
        paper / 2.0,
        paper * 2.0,
        &format!("the paper's {paper} within 2x"),
    );
}

/// A value the paper gives as a range over its runs, checked two-sided:
/// ours within 2x of the range.
fn paper_range(what: &str, ours: f64, lo: f64, hi: f64) {
    bounded(
        what,
        ours,
        lo / 2.0,
        hi * 2.0,
        &format!("the paper's {lo}..{hi} within 2x"),
    );
}

/// `ours` within `lo..=hi`, bounds that come from `why` (a cause the
/// fidelity table's gap names and measured, not from our own output).
fn bounded(what: &str, ours: f64, lo: f64, hi: f64, why: &str) {
    let ok = (lo..=hi).contains(&ours);
    if std::env::var_os("TCRAN_PRINT_RATIOS").is_some() {
        eprintln!("RATIO {what}: {ours:.3} in {lo:.3}..={hi:.3} ({why}): {ok}");
        return;
    }
    assert!(ok, "{what}: {ours:.3}, outside {lo:.3}..={hi:.3} ({why})");
}

fn total_mbps(s: &RunSummary) -> f64 {
    s.flows.iter().map(|f| f.throughput_mbps).sum()
}

fn rtt(s: &RunSummary) -> f64 {
    flow(s, "ping").rtt_ms.expect("ping rtt").mean
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
/// the game's mean delay about 7.9x against vanilla, 3.5x against BBR,
/// 2.7x against CoDel at the RLC and 1.7x against DRQL; CoDel keeps the
/// utilisation near 1 (0.99967-0.99999) and DynRLC, stepping its SDU
/// limit, uses fewer resources than 5G-BDP (0.988 against 0.9995). With
/// the emulator's 10 ms MAC period 5G-BDP keeps the link full (0.9995) and
/// its delay "cannot go below 5 ms" (half the period).
#[test]
fn thesis_ch3_emulator_pacers_cut_the_game_delay_and_codel_and_bbr_sit_between() {
    let cfg = load("thesis-ch3-s1-pedestrian.toml");
    let d = Some(secs(80));
    let [vanilla, codel, bbr, drql, bdp, dynrlc] =
        ["vanilla", "codel@rlc", "bbr", "drql", "5g-bdp", "dynrlc"].map(|v| run(&cfg, v, d));
    assert!(dynrlc.prb_utilization < bdp.prb_utilization);
    assert!(bdp.prb_utilization > 0.97, "{}", bdp.prb_utilization);
    assert!(codel.prb_utilization > 0.97, "{}", codel.prb_utilization);
    assert!(
        flow(&codel, "gaming").lost_packets > 0,
        "CoDel drops game packets too (thesis: 2.2 %)"
    );
    let [vanilla, codel, bbr, drql, bdp] =
        [vanilla, codel, bbr, drql, bdp].map(|s| enb_delay(&s, "gaming"));
    assert!(bdp >= 5.0, "half the 10 ms MAC period: {bdp}");
    assert!(vanilla > bbr && vanilla > codel, "{vanilla} {bbr} {codel}");
    // BBR / 5G-BDP (thesis 3.5x) is about 7x here: BBR's delay is above
    // the thesis' range (Linux 5.1's ACK-aggregation allowance, fed by the
    // 10 ms MAC's ACK bursts) and 5G-BDP's below it; each within 2x.
    paper_range("BBR game delay (ms)", bbr, 33.40, 42.50);
    paper_range("5G-BDP game delay (ms)", bdp, 9.12, 9.43);
    paper_range("CoDel game delay (ms)", codel, 25.66, 26.69);
    paper_range("DRQL game delay (ms)", drql, 15.92, 16.11);
    paper_value("CoDel / 5G-BDP", codel / bdp, 2.7);
    paper_value("DRQL / 5G-BDP", drql / bdp, 1.7);
    vanilla_drains_the_emulators_queue(vanilla, "packets_pedestrian.txt");
}

/// Vanilla's game delay in the thesis emulator's files: not the thesis'
/// 75-85 ms (its sender held a standing queue of ~40 packets, not
/// isolated; see the gap in the file) but the emulator's own 1024-packet
/// RLC queue (`MAX_NUM_PACK_DRB`) draining at the trace's packet rate over
/// the thesis' first 200 s (the trace file's own numbers: packets per
/// 10 ms). The queue is full only part of the time: between a quarter and
/// twice its drain time.
fn vanilla_drains_the_emulators_queue(vanilla_ms: f64, trace: &str) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/traces/dynamic-buffer-tmc")
            .join(trace),
    )
    .expect("the thesis trace");
    // The first line counts the entries; then one per 10 ms.
    let per_10ms: Vec<f64> = text
        .lines()
        .skip(1)
        .take(20_000)
        .map(|l| l.trim().parse().expect("a packet count"))
        .collect();
    let per_s = per_10ms.iter().sum::<f64>() / per_10ms.len() as f64 * 100.0;
    let full_queue_ms = 1024.0 / per_s * 1e3;
    bounded(
        &format!("vanilla game delay (ms), {trace} at {per_s:.0} packets/s"),
        vanilla_ms,
        full_queue_ms / 4.0,
        full_queue_ms * 2.0,
        "the emulator's 1024-packet queue at the trace's rate",
    );
}

/// Thesis Figs. 3.10-3.11: the ordering holds for the game's other rates
/// (here the slowest, 70 ms between packets).
#[test]
fn thesis_ch3_emulator_ordering_holds_for_a_slower_game() {
    let cfg = load("thesis-ch3-s1-game-rates-train.toml");
    let d = Some(secs(60));
    let [vanilla, bbr, drql, bdp] = ["vanilla/70ms", "bbr/70ms", "drql/70ms", "5g-bdp/70ms"]
        .map(|v| enb_delay(&run(&cfg, v, d), "gaming"));
    // Figs. 3.10-3.11 give the ordering, no numbers.
    assert!(
        vanilla > bbr && bbr > drql && drql > bdp,
        "{vanilla} {bbr} {drql} {bdp}"
    );
    vanilla_drains_the_emulators_queue(vanilla, "packets_train.txt");
}

/// Thesis Figs. 3.14-3.15 (second scenario, one shared SDAP queue):
/// USP@5G-BDP is the best combination, reducing the game's mean delay
/// 7.3x against vanilla, 3.1x against BBR, 1.5x against CoDel@5G-BDP,
/// 2.1x against CoDel@DRQL, 1.9x against CoDel@DynRLC, 1.4x against
/// USP@DynRLC and 1.3x against USP@DRQL; CoDel@X drops 2.4-3.8 % of the
/// game's packets, USP (a pacer) none; 5G-BDP without anything above it
/// only moves the bloat from RLC to SDAP.
#[test]
fn thesis_ch3_shared_sdap_is_cured_best_by_usp_above_5g_bdp() {
    let cfg = load("thesis-ch3-s2-train.toml");
    // The whole 200 s: USP above 5G-BDP settles slowly with the 10 ms MAC.
    let d = None;
    let names = [
        "vanilla",
        "bbr",
        "codel@dynrlc",
        "codel@drql",
        "codel@5g-bdp",
        "usp@dynrlc",
        "usp@drql",
        "usp@5g-bdp",
        "fifo@5g-bdp",
    ];
    let runs: Vec<RunSummary> = names.iter().map(|v| run(&cfg, v, d)).collect();
    let delay: Vec<f64> = runs.iter().map(|s| enb_delay(s, "gaming")).collect();
    let usp = delay[7];
    for (i, name) in names.iter().enumerate().take(7) {
        assert!(
            delay[i] > usp,
            "USP@5G-BDP {usp} must beat {name} {}",
            delay[i]
        );
    }
    for (i, paper) in [(1, 3.1), (2, 1.9), (3, 2.1), (4, 1.5), (6, 1.3)] {
        paper_value(&format!("{} / USP@5G-BDP", names[i]), delay[i] / usp, paper);
    }
    vanilla_drains_the_emulators_queue(delay[0], "packets_train.txt");
    assert!(delay[8] > 10.0 * delay[4], "FIFO@5G-BDP {}", delay[8]);
    for (i, name) in names.iter().enumerate().take(5).skip(2) {
        assert!(
            flow(&runs[i], "gaming").lost_packets > 0,
            "{name} drops game packets"
        );
    }
    for (i, name) in names.iter().enumerate().take(8).skip(5) {
        assert_eq!(flow(&runs[i], "gaming").lost_packets, 0, "{name}");
    }
}

/// Thesis Figs. 3.20-3.23 and Table 3.2 (OAI testbed, MCS 28): the call
/// waits seconds in vanilla, tens of ms with BBR, a few TTIs with the RLC
/// pacers, e5G-BDP fastest; CoDel and BBR cut the RLC occupancy at least
/// 5x against vanilla (Fig. 3.20) but stay above the pacers; e5G-BDP keeps
/// the throughput (16.20 vs 16.58 Mbit/s) and loses 1.9 % of the RBs.
#[test]
fn thesis_ch3_testbed_orders_vanilla_codel_bbr_and_the_rlc_pacers() {
    let cfg = load("thesis-ch3-testbed-mcs28.toml");
    let d = Some(secs(35));
    let runs: Vec<_> = ["vanilla", "codel@rlc", "bbr", "dynrlc", "drql", "e5g-bdp"]
        .iter()
        .map(|v| run(&cfg, v, d))
        .collect();
    let delay: Vec<f64> = runs.iter().map(|s| ran_delay(s, "voip1")).collect();
    let [vanilla, codel, bbr, dynrlc, drql, e5g] = delay[..] else {
        unreachable!()
    };
    // Fig. 3.21 gives the ordering at MCS 28 (its numbers are Table 3.2's,
    // on the traces, checked below).
    assert!(
        vanilla > bbr && vanilla > codel && bbr > e5g && codel > e5g,
        "{vanilla} {codel} {bbr} {e5g}"
    );
    // Fig. 3.22: e5G-BDP delivers within a TTI what DRQL and DynRLC need two for.
    assert!(e5g < drql && e5g < dynrlc, "{e5g} {drql} {dynrlc}");
    let rlc = |i: usize| runs[i].rlc.mean_bytes;
    assert!(rlc(0) > 5.0 * rlc(1) && rlc(0) > 5.0 * rlc(2), "Fig. 3.20");
    // Fig. 3.22, per layer: vanilla, CoDel and BBR add nothing at SDAP;
    // e5G-BDP's call waits less in RLC than DynRLC's ("mostly 750-1000 us"
    // against 500-1000 us) and DRQL's packets that miss the start of a TTI
    // wait a whole TTI more at SDAP, where e5G-BDP forwards at once.
    let layers = |i: usize| flow(&runs[i], "voip1").layers_ms;
    for i in 0..3 {
        assert!(
            layers(i).tc.p95 < 0.1,
            "SDAP adds nothing: {}",
            layers(i).tc.p95
        );
    }
    assert!(
        layers(5).rlc.mean < layers(3).rlc.mean,
        "RLC: e5G-BDP {} DynRLC {}",
        layers(5).rlc.mean,
        layers(3).rlc.mean
    );
    assert!(
        layers(4).tc.mean > layers(5).tc.mean + 0.2,
        "SDAP: DRQL {} e5G-BDP {}",
        layers(4).tc.mean,
        layers(5).tc.mean
    );
    let e5g_run = &runs[5];
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
    // Fig. 3.23's throughputs, Fig. 3.22's RLC delay of the call.
    paper_value("vanilla bulk (Mbit/s)", v_thr, 16.58);
    paper_value("e5G-BDP bulk (Mbit/s)", e_thr, 16.20);
    paper_range(
        "e5G-BDP call's RLC delay (ms)",
        layers(5).rlc.mean,
        0.5,
        1.0,
    );
}

/// Thesis Fig. 3.24: with 8 calls DynRLC, counting SDUs, falls behind the
/// byte-counting DRQL and e5G-BDP, and e5G-BDP stays within a TTI.
#[test]
fn thesis_ch3_testbed_byte_counting_pacers_scale_with_calls() {
    let cfg = load("thesis-ch3-testbed-mcs28-calls.toml");
    let d = Some(secs(35));
    let [dynrlc, drql, e5g] = ["dynrlc/8-calls", "drql/8-calls", "e5g-bdp/8-calls"]
        .map(|v| ran_delay_of(&run(&cfg, v, d), "voip"));
    assert!(e5g < drql && drql < dynrlc, "{e5g} {drql} {dynrlc}");
    // One TTI in RLC plus one of air time.
    assert!(e5g < 2.5, "e5G-BDP with 8 calls: {e5g} ms");
}

/// Thesis Tables 3.2-3.4 (pedestrian profile): vanilla in seconds, BBR
/// (85.6 ms) above CoDel (31.6 ms) above the pacers; DynRLC, counting SDUs
/// instead of bytes, leaves 19 % of the RBs unused where e5G-BDP leaves
/// 0.7 %.
#[test]
fn thesis_ch3_testbed_traces_order_the_variants_and_dynrlc_wastes_prbs() {
    let cfg = load("thesis-ch3-testbed-pedestrian.toml");
    let d = Some(secs(35));
    let [vanilla, codel, bbr, dynrlc, drql, e5g] =
        ["vanilla", "codel@rlc", "bbr", "dynrlc", "drql", "e5g-bdp"].map(|v| run(&cfg, v, d));
    let delay = |s: &RunSummary| ran_delay(s, "voip1");
    // Table 3.2 (pedestrian): the order, and each delay within 2x, but
    // CoDel's: 0.3x of the thesis' 31.6 ms, a gap the file explains (not
    // isolated), so only its place in the order is checked.
    assert!(
        delay(&vanilla) > delay(&bbr)
            && delay(&bbr) > delay(&codel)
            && delay(&codel) > delay(&drql)
            && delay(&drql) > delay(&e5g),
        "Table 3.2's order"
    );
    for (name, s, paper) in [
        ("vanilla", &vanilla, 2842.0),
        ("BBR", &bbr, 85.6),
        ("DynRLC", &dynrlc, 2.92),
        ("DRQL", &drql, 5.59),
        ("e5G-BDP", &e5g, 2.19),
    ] {
        paper_value(&format!("{name} call delay (ms)"), delay(s), paper);
    }
    // Table 3.4: DynRLC, counting SDUs, leaves RBs unused (19.1 %) where
    // e5G-BDP and DRQL use nearly all (99.3 %, 100 %). A 2x band on a
    // share near 100 % says nothing, and one on e5G-BDP's 0.7 % unused is
    // a ratio of near-zero numbers (the file's gap): the order is checked.
    assert!(
        1.0 - dynrlc.prb_utilization > 0.05
            && dynrlc.prb_utilization < e5g.prb_utilization.min(drql.prb_utilization),
        "DynRLC {} e5G-BDP {} DRQL {}",
        dynrlc.prb_utilization,
        e5g.prb_utilization,
        drql.prb_utilization
    );
    assert!(drql.prb_utilization > 0.97, "DRQL {}", drql.prb_utilization);
}

/// TC-RAN Fig. 6: deployed at 5 s, OSI classifier + round robin + 5G-BDP
/// split the cell 50 %-50 % between flow 1 and flows 2-4 (20 and 20
/// Mbit/s), where without a pipeline flow 1 gets about a quarter; deployed
/// at 10 s with a 15 Mbit/s shaper on flows 1-3, flow 4 gets the rest (25
/// Mbit/s).
#[test]
fn tcran_flow_slicing_deployed_at_run_time_splits_and_shapes_the_bearer() {
    let cfg = load("tcran-fig6-flow-slicing.toml");
    let d = Some(secs(30));
    let share = |s: &RunSummary| {
        let one = flow(s, "flow1").throughput_mbps;
        one / (total_mbps(s) - one)
    };
    let sliced = run_full(&cfg, "slicing-50-50", d);
    assert_eq!(sliced.series.reconfigurations.len(), 1);
    assert!((sliced.series.reconfigurations[0].t_s - 5.0).abs() < 1e-6);
    let s = share(&sliced.summary);
    assert!((0.8..1.25).contains(&s), "flow 1 / flows 2-4 = {s}");
    // TCP's own sharing only evens out over the whole minute.
    let v = share(&run(&cfg, "vanilla", None));
    assert!(v < 0.6, "vanilla flow 1 / flows 2-4 = {v}");
    let shaped = run_full(&cfg, "shaper-15mbit", d);
    assert!((shaped.series.reconfigurations[0].t_s - 10.0).abs() < 1e-6);
    let s = &shaped.summary;
    let slice: f64 = ["flow1", "flow2", "flow3"]
        .iter()
        .map(|f| flow(s, f).throughput_mbps)
        .sum();
    assert!((13.5..=15.5).contains(&slice), "shaped slice {slice}");
    assert!(flow(s, "flow4").throughput_mbps > slice);
}

/// TC-RAN Fig. 7: four CUBIC flows bloat the RLC buffer beyond 1.5 MB and
/// the ping's delay goes above 300 ms; CoDel + RR + 5G-BDP, deployed at
/// 31 s, empties RLC and cuts the ping's delay, and "no throughput decrease
/// is observed" (checked with 5G-BDP and with the same pipeline paced by
/// jit, each within 5 % of vanilla).
#[test]
fn tcran_codel_rr_5g_bdp_deployed_at_31_s_empties_rlc_and_cures_the_ping() {
    let cfg = load("tcran-fig7-codel-5g-bdp.toml");
    // The whole minute: statistics start at 36 s, after the deployment.
    let d = None;
    let vanilla = run(&cfg, "vanilla", d);
    let cured = run_full(&cfg, "codel+rr+5g-bdp@31s", d);
    assert!((cured.series.reconfigurations[0].t_s - 31.0).abs() < 1e-6);
    let cured = cured.summary;
    // "grow beyond 1.5 MB": the peak.
    assert!(
        vanilla.rlc.max_bytes > 1_500_000,
        "{}",
        vanilla.rlc.max_bytes
    );
    // "going above 300 ms" (Fig. 7b's time series): the 95th percentile.
    let vanilla_p95 = flow(&vanilla, "ping").rtt_ms.expect("ping rtt").p95;
    assert!(vanilla_p95 > 300.0, "vanilla ping p95 {vanilla_p95}");
    assert!(
        rtt(&cured) < rtt(&vanilla) / 10.0,
        "cured ping {}",
        rtt(&cured)
    );
    assert!(cured.rlc.mean_bytes < vanilla.rlc.mean_bytes / 100.0);
    assert!(
        total_mbps(&cured) > 0.95 * total_mbps(&vanilla),
        "5G-BDP: {} vs {} Mbit/s",
        total_mbps(&cured),
        total_mbps(&vanilla)
    );
    let jit = run(&cfg, "codel+rr+jit@31s", d);
    assert!(rtt(&jit) < rtt(&vanilla) / 10.0, "jit ping {}", rtt(&jit));
    assert!(
        total_mbps(&jit) > 0.95 * total_mbps(&vanilla),
        "{} vs {} Mbit/s",
        total_mbps(&jit),
        total_mbps(&vanilla)
    );
}

/// TC-RAN Figs. 9-10: the game's delay goes up to 1.8 s in vanilla and
/// stays around 20 ms once the xApp, seeing the RLC sojourn above 10 ms,
/// moved the greedy flows to a CoDel queue; the RLC sojourn never exceeds
/// 20 ms; throughput 30 instead of 40 Mbit/s.
#[test]
fn tcran_online_game_survives_when_the_xapp_moves_greedy_flows_to_codel() {
    let cfg = load("tcran-fig9-online-game.toml");
    let d = Some(secs(30));
    let vanilla = run(&cfg, "vanilla", d);
    let cured = run(&cfg, "xapp", d);
    assert!(cured.reconfigurations.applied > 0, "the xApp acted");
    let (v, c) = (
        flow(&vanilla, "game").delay_ms.mean,
        flow(&cured, "game").delay_ms.mean,
    );
    assert!(v > 10.0 * c, "game: vanilla {v} ms, xApp {c} ms");
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
    paper_value("CUBIC ping RTT (ms)", rtt(&cubic), 210.0);
    // Fig. 15's ping RTTs; FQ-CoDel + 5G-BDP's 21 ms is 0.44x here, a gap
    // the file explains (our no-load path is shorter), so it is held to the
    // order only.
    for (v, paper) in [
        ("bbr", Some(30.0)),
        ("prague+l4s-mark+5g-bdp", Some(20.0)),
        ("fq_codel+5g-bdp", None),
    ] {
        let s = run(&cfg, v, None);
        if let Some(paper) = paper {
            paper_value(&format!("{v} ping RTT (ms)"), rtt(&s), paper);
        }
        assert!(rtt(&s) < rtt(&cubic) / 5.0, "{v}: {} ms", rtt(&s));
        let delay = flow(&s, "flow1").delay_ms.mean;
        assert!(c_delay > 5.0 * delay, "{v}: {delay} ms vs CUBIC {c_delay}");
        assert!(cubic.prb_utilization >= s.prb_utilization, "{v}");
    }
}

/// TC-RAN Fig. 12 (sec. V-D): at the end of the ramp, MCS 18, the link
/// carries "more than 9000 bytes per TTI" (a 500 us slot, 106 PRBs, one
/// layer). The scenario's cell must give that TBS (TS 38.214 sec. 5.1.3.2):
/// it does with the 256QAM table and 13 PDSCH symbols, not with the 64QAM
/// table (at most 5252 B) nor with 12 symbols (8448 B).
#[test]
fn tcran_dynamic_mcs_cell_carries_the_papers_tbs_at_mcs_18() {
    use tcran_gnb::config::ChannelConfig;
    use tcran_ran::mac::Mac;
    use tcran_ran::{Mcs, TbsInput};
    let cfg = load("tcran-fig15-dynamic-mcs.toml");
    let ChannelConfig::McsRamp { to, table, .. } = cfg.ues[0].channel else {
        panic!("Fig. 15 is an MCS ramp");
    };
    assert_eq!(to, 18);
    let params = cfg.cell.build().expect("cell");
    let (n_prb, dmrs, layers) = (params.n_prb, params.dmrs_re_per_prb, params.layers);
    let mac = Mac::new(params);
    // Slot 0 of "DDDDDDDSUU" is a full D slot.
    let input = TbsInput {
        n_symb_sh: mac.pdsch_symbols(0),
        n_dmrs_prb: dmrs,
        n_prb,
        layers,
        ..TbsInput::default()
    };
    let bytes = input.tbs(Mcs::new(table, to).unwrap()).unwrap() / 8;
    assert_eq!(layers, 1, "one layer (sec. V-A)");
    assert!(bytes > 9000, "TBS at MCS 18: {bytes} B per slot");
}

/// Kumar et al. Fig. 2 (gamma 25 ms, the default): the 1024-SDU RLC buffer
/// adds about 540 ms to a 15 ms ping; PDCP flow queues over a small RLC
/// limit cut it, the RTT grows with the limit, too small a limit costs
/// throughput and the optimum (the smallest limit at full throughput) lies
/// between 48 and 64 SDUs. Fig. 3: with a fixed delay target the SDU delay
/// follows DLT linearly. Fig. 6: the dynamic controller keeps the
/// throughput at a low RTT (15.5 Mbit/s, 46 ms at gamma 25 ms, beta 1.25);
/// both RTT and throughput grow with gamma, the RTT with beta.
#[test]
fn kumar_rlc_limit_trades_throughput_for_ping_rtt_and_the_controller_finds_it() {
    let cfg = load("kumar-dynamic-rlc.toml");
    let d = Some(secs(30));
    let run = |v: &str| run(&cfg, v, d);
    let only = run("rlc-only");
    let statics: Vec<(u32, RunSummary)> = [16, 32, 48, 64, 96]
        .iter()
        .map(|n| (*n, run(&format!("rlc{n}"))))
        .collect();
    let thr = |s: &RunSummary| flow(s, "iperf").throughput_mbps;
    let full = thr(&statics[4].1);
    // Fig. 5: a STATUS PDU every ~30 ms with a 25-ms tStatusProhibit, the
    // rest being the wait for the next SR occasion and the grant.
    let gap_ms = only.sim_s * 1e3 / only.rlc.status_pdus as f64;
    assert!(
        (28.0..=32.0).contains(&gap_ms),
        "status PDU every {gap_ms} ms"
    );
    assert!(rtt(&only) > 5.0 * rtt(&statics[2].1), "540 ms added");
    for w in statics.windows(2) {
        assert!(rtt(&w[0].1) <= rtt(&w[1].1), "RTT grows with the limit");
    }
    assert!(rtt(&statics[0].1) < rtt(&statics[4].1));
    assert!(thr(&statics[0].1) < 0.95 * full, "16 SDUs starve TCP");
    let optimum = statics
        .iter()
        .find(|(_, s)| thr(s) > 0.97 * full)
        .map(|(n, _)| *n);
    assert!(
        matches!(optimum, Some(48 | 64)),
        "smallest limit at full throughput: {optimum:?}"
    );
    // Fig. 3: the smallest DLT at full throughput is 40 ms (a DLT no
    // larger than the ~30 ms between status PDUs starves the bearer: "DLT
    // must not only be larger than gamma, but also include extra room"),
    // and above it the SDU delay follows DLT (a 20 ms step adds ~20 ms).
    let dlt: Vec<RunSummary> = ["dlt30ms", "dlt40ms", "dlt60ms"]
        .iter()
        .map(|v| run(v))
        .collect();
    assert!(thr(&dlt[0]) < 0.9 * full && thr(&dlt[1]) > 0.97 * full);
    let soj: Vec<f64> = dlt.iter().map(|s| s.rlc.mean_sojourn_ms).collect();
    assert!(
        soj[0] < soj[1] && (10.0..=30.0).contains(&(soj[2] - soj[1])),
        "SDU delay at DLT 30, 40, 60 ms: {soj:?}"
    );
    // Fig. 6.
    let dynamic = |g: u32, b: &str| run(&format!("dynamic-g{g}-b{b}"));
    let g25 = dynamic(25, "1.25");
    assert!(thr(&g25) > 0.9 * thr(&only), "dynamic keeps the throughput");
    assert!(rtt(&g25) < rtt(&only) / 4.0, "dynamic cuts the RTT");
    let g10 = dynamic(10, "1.25");
    assert!(rtt(&g10) < rtt(&g25) && thr(&g10) < thr(&g25), "gamma");
    for g in [10, 25] {
        let (low, high) = (dynamic(g, "1.25"), dynamic(g, "2.5"));
        assert!(rtt(&low) < rtt(&high), "beta at gamma {g}");
    }
    // With QLT_max from the bearer's rate (sec. III) the controller meets
    // its target: the interval-average SDU delay sits at DLT = beta x the
    // status gap (Fig. 3's linearity), at full throughput, and the ping RTT
    // is within a factor of two of Fig. 6's 31 ms (gamma 10 ms, beta 1.75)
    // and 46 ms (gamma 25 ms, beta 1.25).
    for (v, beta, paper_rtt) in [
        ("dynamic-g10-b1.75-qmax96", 1.75, 31.0),
        ("dynamic-g25-b1.25-qmax96", 1.25, 46.0),
    ] {
        let s = run(v);
        let gap_ms = s.sim_s * 1e3 / s.rlc.status_pdus as f64;
        let dlt = beta * gap_ms;
        let soj = s.rlc.mean_sojourn_ms;
        assert!(
            (0.75 * dlt..=1.25 * dlt).contains(&soj),
            "{v}: SDU delay {soj} ms, DLT {dlt} ms"
        );
        assert!(thr(&s) > 0.9 * full, "{v}: {} Mbit/s", thr(&s));
        assert!(
            (paper_rtt / 2.0..=paper_rtt * 2.0).contains(&rtt(&s)),
            "{v}: RTT {} ms, paper {paper_rtt} ms",
            rtt(&s)
        );
    }
}

/// Thesis Figs. 4.12-4.14: EQP cuts the calls' RLC (segmentation) delay
/// against FP in the 25 % slice (78 % vs 15 % within 1 ms), at 50 %-50 %
/// (64 % vs 14 %), in the 75 % slice (88 % vs 73 %) and with 8 calls (94 %
/// within 2 ms vs 88 % within 4 ms), at almost no throughput cost (15.60
/// vs 15.80 Mbit/s). The gain is in the RLC layer, the segmentation delay
/// EQP is built to avoid; it needs the SDU boundaries of each RLC buffer
/// (Alg. 8's `generate_rbs`), which the node gives the MAC.
#[test]
fn thesis_ch4_eqp_cuts_segmentation_delay_against_fixed_partition() {
    let d = Some(secs(30));
    let one = load("thesis-ch4-eqp-vs-fp.toml");
    let calls = load("thesis-ch4-eqp-vs-fp-calls.toml");
    // (scenario, FP, EQP, the delay bound of the thesis' "within x ms of
    // queueing": 8 ms core + x + 1 ms air).
    for (cfg, fp, eqp, bound_ms) in [
        (&one, "fp-25-75", "eqp-25-75", 10.0),
        (&one, "fp-50-50", "eqp-50-50", 10.0),
        (&one, "fp-75-25", "eqp-75-25", 10.0),
        (&calls, "fp/8-calls", "eqp/8-calls", 11.0),
    ] {
        let (fp_out, eqp_out) = (run_full(cfg, fp, d), run_full(cfg, eqp, d));
        let (fp_run, eqp_run) = (&fp_out.summary, &eqp_out.summary);
        // Fig. 4.12: more of the calls' packets within the bound under EQP.
        let (fw, ew) = (
            within_pct(&fp_out, "voip", bound_ms),
            within_pct(&eqp_out, "voip", bound_ms),
        );
        assert!(ew > fw, "within {bound_ms} ms: {eqp} {ew} %, {fp} {fw} %");
        // Where the call waits is RLC (segmentation), what EQP cuts.
        let rlc_of = |s: &RunSummary| {
            let d: Vec<f64> = s
                .flows
                .iter()
                .filter(|f| f.name.starts_with("voip"))
                .map(|f| f.layers_ms.rlc.mean)
                .collect();
            d.iter().sum::<f64>() / d.len() as f64
        };
        let (fr, er) = (rlc_of(fp_run), rlc_of(eqp_run));
        assert!(er < fr, "RLC: {eqp} {er} ms, {fp} {fr} ms");
        // Fig. 4.13: at almost no throughput cost (0.1-0.8 Mbit/s).
        assert!(total_mbps(eqp_run) > 0.95 * total_mbps(fp_run), "{eqp}");
        if eqp != "eqp-75-25" {
            // In the 75 % slice FP's 18 RBs carry most SDUs whole: the
            // mean RAN delays are about equal there.
            let (f, e) = (ran_delay_of(fp_run, "voip"), ran_delay_of(eqp_run, "voip"));
            assert!(e < f, "{eqp} {e} ms, {fp} {f} ms");
        }
        match eqp {
            "eqp-25-75" => paper_value("EQP 25 % slice, within 1 ms (%)", ew, 78.0),
            "eqp/8-calls" => paper_value("EQP 8 calls, within 2 ms (%)", ew, 94.0),
            _ => {}
        }
    }
}

/// The share (%) of the packets of the flows named `prefix*` delivered
/// within `bound_ms` one-way (mean over the flows), read off each flow's
/// delay CDF as `tcran reproduce`'s `delay_within_pct` does.
fn within_pct(out: &RunOutput, prefix: &str, bound_ms: f64) -> f64 {
    let shares: Vec<f64> = out
        .series
        .flows
        .iter()
        .filter(|f| f.name.starts_with(prefix))
        .map(|f| {
            100.0
                * f.delay_cdf
                    .iter()
                    .take_while(|(ms, _)| *ms <= bound_ms + 1e-6)
                    .last()
                    .map_or(0.0, |&(_, share)| share)
        })
        .collect();
    assert!(!shares.is_empty(), "no flow {prefix}*");
    shares.iter().sum::<f64>() / shares.len() as f64
}

/// The student ns-3 study: the elephant multiplies the mice flow's delay
/// (3.9 -> 54.4 ms, 14x); BQL + FQ-CoDel brings it back (4.4 ms, 1.12x);
/// DRQL alone does not ("needs to be paired with an AQM").
#[test]
fn student_elephant_bloats_mice_and_bql_fq_codel_cures_it() {
    let cfg = load("student-mice-elephant.toml");
    let d = Some(secs(15));
    let [alone, bloated, drql, cured, ns3_rwnd] = [
        "mice-alone",
        "vanilla",
        "drql",
        "bql+fq_codel",
        "vanilla-ns3-rwnd",
    ]
    .map(|v| flow(&run(&cfg, v, d), "mice").delay_ms.mean);
    assert!(bloated > 5.0 * alone, "alone {alone}, elephant {bloated}");
    // The bloat is the elephant's standing queue, which the report does not
    // size: ns-3's default 128 KiB receive buffer keeps it below the
    // report's 54.371 / 3.892 = 14x, our 5 MB RLC and 6 MB window above.
    let report = 54.371 / 3.892;
    assert!(
        ns3_rwnd / alone < report && report < bloated / alone,
        "128 KiB window {}x, report {report}x, 5 MB RLC {}x",
        ns3_rwnd / alone,
        bloated / alone
    );
    paper_value("BQL + FQ-CoDel mice / mice alone", cured / alone, 1.12);
    assert!(drql > 5.0 * alone, "DRQL without AQM {drql}");
}

/// The student ns-3 study, second setup: a 10 kB RLC buffer drops most of a
/// 205.6 Mbit/s UDP elephant (71.5 Mbit/s delivered with the report's 1 ms
/// slots); with DRQL nothing is dropped and the elephant gets 190.4 Mbit/s
/// (2.7x); the mice flow is delivered in both. The ratio is compared at the
/// same slot length only (our 1-ms cell carries about half the offered
/// load, so there the gain is smaller than the report's, docs sec. 7).
#[test]
fn student_drql_saves_the_elephant_from_the_small_rlc_buffer() {
    let cfg = load("student-drql-udp.toml");
    // Like for like: the same slot length with and without DRQL.
    for (small, drql) in [("rlc-10k", "drql"), ("rlc-10k/1ms-slots", "drql/1ms-slots")] {
        let (small, drql) = (run(&cfg, small, None), run(&cfg, drql, None));
        let (s, d) = (flow(&small, "elephant"), flow(&drql, "elephant"));
        assert!(s.lost_packets > 0);
        assert_eq!(d.lost_packets, 0);
        assert!(
            d.throughput_mbps > s.throughput_mbps,
            "{} vs {}",
            d.throughput_mbps,
            s.throughput_mbps
        );
        for r in [&small, &drql] {
            assert_eq!(flow(r, "mice").lost_packets, 0);
        }
    }
    // Where the cell carries the offered load (0.5 ms slots), DRQL delivers
    // at least the report's 190.44 of 205.6 Mbit/s.
    let drql = run(&cfg, "drql", None);
    assert!(flow(&drql, "elephant").throughput_mbps >= 190.44);
}

/// Brunello secs. 5.1-5.2: the 5-10 ms span queues less than 7-15 ms and
/// gives the scalable flow a lower rate (the throughput-latency trade-off
/// of Figs. 5.3-5.6); alpha changes little (Table 5.2: mean queue delay
/// within 12-16 % between alpha 1 and 0.0625); without L4S marking the
/// scalable flow's queue is unbounded; DBS keeps the L queue and the
/// video's delay lower than RR.
#[test]
fn brunello_lower_thresholds_trade_rate_for_delay_and_alpha_matters_little() {
    let cfg = load("brunello-l4s-thresholds.toml");
    let r = |v: &str| run(&cfg, v, Some(secs(50)));
    // With DBS the spans' rates differ by 1-4 % (seeds 1-3), within what
    // 30 s of measurement resolve: the spans, and the schedulers at the
    // 5-10 ms span, are compared over the file's whole 100 s.
    let full = |v: &str| run(&cfg, v, None);
    let tc = |s: &RunSummary| flow(s, "scalable").layers_ms.tc.mean;
    let thr = |s: &RunSummary| flow(s, "scalable").throughput_mbps;
    let mut low_span = Vec::new();
    for sched in ["rr", "dbs"] {
        let (low, high) = (
            full(&format!("l4s-5-10-a0.25-{sched}")),
            full(&format!("l4s-7-15-a0.25-{sched}")),
        );
        assert!(
            tc(&low) < tc(&high),
            "{sched}: {} vs {}",
            tc(&low),
            tc(&high)
        );
        assert!(
            thr(&low) < thr(&high),
            "{sched}: rate {} vs {}",
            thr(&low),
            thr(&high)
        );
        let (a1, a8) = (
            tc(&r(&format!("l4s-5-10-a1.0-{sched}"))),
            tc(&r(&format!("l4s-5-10-a0.125-{sched}"))),
        );
        assert!(
            (a1 - a8).abs() < 0.3 * a1.max(a8),
            "{sched}: alpha 1: {a1}, alpha 0.125: {a8}"
        );
        if sched == "rr" {
            let none = tc(&r("no-l4s"));
            assert!(none > 10.0 * tc(&low), "no L4S: {none}");
        }
        low_span.push(low);
    }
    // Table 5.2 (DBS queues less than RR at every alpha: 2.92 vs 3.17 ms at
    // 0.25) and Fig. 5.7 (DBS the best scheduler for the video's delay, 99th
    // percentile included), with DBS boosting the video queue only.
    let (rr, dbs) = (&low_span[0], &low_span[1]);
    assert!(tc(dbs) < tc(rr), "L queue: DBS {}, RR {}", tc(dbs), tc(rr));
    let p99 = |s: &RunSummary| flow(s, "video").delay_ms.p99;
    assert!(
        p99(dbs) < p99(rr),
        "video p99: DBS {}, RR {}",
        p99(dbs),
        p99(rr)
    );
}

/// Brunello sec. 5.1, Tables 5.1-5.2 (4 video users in 9 cells, FTP
/// background): the scalable rate and the L queue delay within a factor
/// of two of the thesis' at every alpha; "the differences ... are minimal"
/// (Table 5.1 spans 1.10x (RR) and 1.15x (DBS) across alpha); the lowest
/// alpha has the lowest rate and delay (the throughput-latency trade-off);
/// DBS queues less than RR at every alpha (Table 5.2).
#[test]
fn brunello_alpha_changes_the_rate_and_delay_little_and_both_match_the_thesis() {
    let cfg = load("brunello-l4s-alpha.toml");
    let d = Some(secs(60));
    // (alpha, Table 5.1 RR, DBS Mbit/s, Table 5.2 RR, DBS ms)
    let thesis = [
        ("1.0", 16.6892, 21.0215, 3.1173, 3.0237),
        ("0.5", 17.0274, 21.1912, 3.2016, 3.0194),
        ("0.25", 16.9791, 21.0817, 3.1712, 2.9241),
        ("0.125", 15.9100, 19.3505, 2.7426, 2.6617),
        ("0.0625", 15.4454, 18.4246, 2.8118, 2.5393),
    ];
    let mut rates = std::collections::BTreeMap::<&str, Vec<f64>>::new();
    let mut delays = std::collections::BTreeMap::<&str, Vec<f64>>::new();
    for (alpha, rr_rate, dbs_rate, rr_delay, dbs_delay) in thesis {
        for (sched, paper_rate, paper_delay) in
            [("rr", rr_rate, rr_delay), ("dbs", dbs_rate, dbs_delay)]
        {
            let s = run(&cfg, &format!("l4s-a{alpha}-{sched}"), d);
            let scalable = flow(&s, "scalable");
            let (rate, delay) = (scalable.throughput_mbps, scalable.layers_ms.tc.mean);
            let name = format!("alpha {alpha} {sched}");
            assert!(
                (0.5..=2.0).contains(&(rate / paper_rate)),
                "{name}: {rate} vs {paper_rate} Mbit/s"
            );
            assert!(
                (0.5..=2.0).contains(&(delay / paper_delay)),
                "{name}: {delay} vs {paper_delay} ms"
            );
            rates.entry(sched).or_default().push(rate);
            delays.entry(sched).or_default().push(delay);
        }
    }
    for sched in ["rr", "dbs"] {
        let (r, q) = (&rates[sched], &delays[sched]);
        let spread =
            r.iter().cloned().fold(f64::MIN, f64::max) / r.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 1.3, "{sched}: rates {r:?}");
        assert!(
            r[4] < r[0] && q[4] < q[0],
            "{sched}: alpha 0.0625 vs 1: {r:?} {q:?}"
        );
    }
    for (rr, dbs) in delays["rr"].iter().zip(&delays["dbs"]) {
        assert!(dbs < rr, "L queue: DBS {dbs}, RR {rr}");
    }
}
