//! Scheduled reconfiguration events and the built-in controllers (the
//! TC-RAN xApps), with outcomes that can be checked by hand.

use std::path::Path;
use tcran_sim::{RunOutput, Sim, SimConfig};

fn build(toml_text: &str) -> Result<Sim, String> {
    let cfg: SimConfig = toml::from_str(toml_text).map_err(|e| e.to_string())?;
    Sim::new(&cfg, Path::new(".")).map_err(|e| e.to_string())
}

fn run(toml_text: &str) -> RunOutput {
    build(toml_text).expect("scenario builds").run()
}

/// Mean of the per-bin delays of flow `i` over bins starting in [from, to).
fn mean_delay(out: &RunOutput, i: usize, from: f64, to: f64) -> f64 {
    let f = &out.series.flows[i];
    let v: Vec<f64> = f
        .t_s
        .iter()
        .zip(&f.delay_ms)
        .filter(|(t, _)| **t >= from && **t < to)
        .filter_map(|(_, d)| *d)
        .collect();
    assert!(!v.is_empty(), "no delay samples in [{from}, {to})");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Same CBR stream as tests/integration/series.rs: 800 kbit/s in 1000-byte packets.
const CBR: &str = r#"
    duration = "3s"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[flows]]
    name = "cbr"
    ue = 1
    kind = "cbr"
    rate = "800kbit/s"
    size = "1000B"
"#;

/// At t = 1.5 s a token bucket of 400 kbit/s is put on the only queue: the
/// change is recorded at exactly 1.5 s, the goodput is 0.8 Mbit/s before
/// and half that once the bucket's initial burst is spent.
#[test]
fn a_scheduled_event_applies_at_exactly_its_time() {
    let out = run(&format!(
        r#"{CBR}
    [[events]]
    at = "1.5s"
    ue = 1
    drb = 1
    control = {{ op = "set_shaper", id = 0, shaper = {{ kind = "token_bucket", rate = "400kbit/s", burst = "1500B" }} }}
    "#
    ));
    let r = &out.series.reconfigurations;
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        (r[0].t_s, r[0].by.as_str(), r[0].rnti, r[0].drb),
        (1.5, "event", 1, 1)
    );
    assert!(
        r[0].what.starts_with("set shaper of queue 0"),
        "{}",
        r[0].what
    );
    assert_eq!(out.summary.reconfigurations.applied, 1);
    let g = &out.series.flows[0].goodput_mbps;
    assert!(g[1..15].iter().all(|x| (x - 0.8).abs() < 1e-9), "{g:?}");
    // From 1.7 s on: 400 kbit/s = 5 packets per 100 ms, give or take the
    // one packet a bin boundary splits.
    for (i, x) in g.iter().enumerate().skip(17) {
        assert!((x - 0.4).abs() <= 0.08 + 1e-9, "bin {i}: {x}");
    }
}

#[test]
fn a_refused_control_is_reported_and_the_run_goes_on() {
    let out = run(&format!(
        r#"{CBR}
    [[events]]
    at = "1s"
    control = {{ op = "delete_queue", id = 7 }}
    "#
    ));
    assert_eq!(out.summary.reconfigurations.failed, 1);
    assert_eq!(out.summary.reconfigurations.applied, 0);
    let f = &out.series.failed_reconfigurations[0];
    assert_eq!(f.t_s, 1.0);
    assert!(
        f.what.contains("delete queue 7") && f.what.contains("no such queue"),
        "{}",
        f.what
    );
    assert!(out.summary.flows[0].throughput_mbps > 0.79);
}

#[test]
fn bad_events_and_controllers_are_refused_with_the_field() {
    let both = format!(
        "{CBR}\n[[events]]\nat = \"1s\"\ncontrol = {{ op = \"delete_queue\", id = 0 }}\npipeline = {{ queues = [ {{ id = 0, kind = \"fifo\" }} ] }}\n"
    );
    let e = build(&both).unwrap_err();
    assert!(e.contains("events[0]") && e.contains("exactly one"), "{e}");
    let late =
        format!("{CBR}\n[[events]]\nat = \"5s\"\ncontrol = {{ op = \"delete_queue\", id = 0 }}\n");
    assert!(build(&late).unwrap_err().contains("events[0].at"));
    let period = format!("{CBR}\n[[controllers]]\nkind = \"sojourn_codel\"\nperiod = \"0s\"\n");
    let e = build(&period).unwrap_err();
    assert!(e.contains("controllers[0].period"), "{e}");
    let unknown =
        format!("{CBR}\n[[controllers]]\nkind = \"sojourn_codel\"\nthreshhold = \"5ms\"\n");
    assert!(build(&unknown).unwrap_err().contains("threshhold"));
    let slice = format!(
        "{CBR}\n[[controllers]]\nkind = \"flow_slicing\"\nslices = [ {{ flows = [\"nope\"] }} ]\n"
    );
    let e = build(&slice).unwrap_err();
    assert!(e.contains("slices[0].flows") && e.contains("nope"), "{e}");
}

/// The bufferbloat of tests/integration/engine.rs: CUBIC and a call on one bearer with
/// the default 5 MB RLC buffer.
const BLOAT: &str = r#"
    duration = "20s"
    warmup = "5s"
    seed = 7
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[flows]]
    name = "bulk"
    ue = 1
    kind = "tcp"
    tcp = { cc = "cubic" }
    [[flows]]
    name = "voip"
    ue = 1
    kind = "voip"
    start = "1s"
"#;

/// Deploying a whole pipeline at run time (priority queue for UDP, 5G-BDP)
/// cures the call once the bloated RLC buffer has drained; every packet
/// queued at the change is kept.
#[test]
fn a_scheduled_deployment_cures_the_bufferbloat() {
    let out = run(&format!(
        r#"{BLOAT}
    [[events]]
    at = "8s"
    [events.pipeline]
    default_queue = 1
    classifier = {{ kind = "filter", rules = [ {{ priority = 1, protocol = "udp", queue = 0 }} ] }}
    scheduler = {{ kind = "priority" }}
    pacer = {{ kind = "bdp" }}
    [[events.pipeline.queues]]
    id = 0
    kind = "fifo"
    [[events.pipeline.queues]]
    id = 1
    kind = "fifo"
    priority = 1
    limit_packets = 100000
    "#
    ));
    assert_eq!(
        out.summary.reconfigurations,
        tcran_sim::report::ReconfigCounts {
            applied: 1,
            failed: 0
        }
    );
    assert!(out.series.reconfigurations[0]
        .what
        .starts_with("deploy pipeline"));
    let before = mean_delay(&out, 1, 5.0, 8.0);
    let after = mean_delay(&out, 1, 14.0, 20.0);
    assert!(before > 100.0, "bloated before: {before} ms");
    // No-load delay is 10 ms core + up to 1 ms slot wait + 1 ms air.
    assert!(after < 20.0, "cured after: {after} ms");
    assert!(
        !out.summary.drops.contains_key("tc"),
        "{:?}",
        out.summary.drops
    );
}

/// TC-RAN Figs. 8-10: the sojourn xApp sees the RLC sojourn pass 10 ms,
/// adds a CoDel queue and moves the greedy flow (the download, not the
/// call) there; the call's delay collapses compared with the same run
/// without the controller.
#[test]
fn the_sojourn_controller_moves_the_greedy_flow_to_codel() {
    let plain = run(BLOAT);
    let ctl = run(&format!(
        r#"{BLOAT}
    [[controllers]]
    kind = "sojourn_codel"
    period = "100ms"
    threshold = "10ms"
    "#
    ));
    let r = &ctl.series.reconfigurations;
    let whats: Vec<&str> = r.iter().map(|x| x.what.as_str()).collect();
    assert!(r.iter().all(|x| x.by == "sojourn_codel"));
    assert_eq!(whats[0], "add queue 1 codel", "{whats:?}");
    let rules: Vec<&&str> = whats.iter().filter(|w| w.starts_with("add rule")).collect();
    assert_eq!(rules.len(), 1, "only the download is greedy: {whats:?}");
    assert!(
        rules[0].contains("\"src_port\":5000"),
        "the bulk flow's port: {}",
        rules[0]
    );
    assert_eq!(ctl.summary.reconfigurations.failed, 0);
    let (p, c) = (&plain.summary.flows[1], &ctl.summary.flows[1]);
    assert!(p.delay_ms.mean > 200.0, "without: {}", p.delay_ms.mean);
    assert!(
        c.delay_ms.mean * 10.0 < p.delay_ms.mean,
        "with: {} without: {}",
        c.delay_ms.mean,
        p.delay_ms.mean
    );
    // CoDel now drops the download's packets in the TC layer.
    assert!(ctl.summary.drops["tc"]["codel"] > 0);
    assert!(ctl.summary.flows[0].throughput_mbps > 0.8 * plain.summary.flows[0].throughput_mbps);
}

/// TC-RAN Fig. 7: the low-latency xApp deploys CoDel + round robin + 5G-BDP
/// when the RLC sojourn passes the threshold, once; the RLC buffer then
/// stays short and CoDel drops in the TC layer instead.
#[test]
fn the_sojourn_deploy_controller_deploys_once() {
    let out = run(&format!(
        r#"{BLOAT}
    [[controllers]]
    name = "fig7"
    kind = "sojourn_deploy"
    threshold = "10ms"
    [controllers.pipeline]
    scheduler = {{ kind = "round_robin" }}
    pacer = {{ kind = "bdp" }}
    [[controllers.pipeline.queues]]
    id = 0
    kind = "codel"
    "#
    ));
    let r = &out.series.reconfigurations;
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].by, "fig7");
    // CUBIC's slow start overfills the link (25 PRB at MCS 28 carry 2304 B
    // per 1 ms slot, about 38 MTU packets per 25 ms no-load RTT) within a
    // few round trips, so the RLC sojourn passes 10 ms within the first
    // 100 ms windows.
    assert!(
        r[0].t_s <= 0.5,
        "fires once the RLC sojourn passes 10 ms: {}",
        r[0].t_s
    );
    assert!(out.summary.drops["tc"]["codel"] > 0);
    let voip = &out.summary.flows[1].layers_ms;
    assert!(
        voip.rlc.mean + voip.air.mean < 5.0,
        "the RLC buffer stays short: {voip:?}"
    );
}

/// TC-RAN Fig. 6a: four downloads; at 5 s flow 1 gets one slice and flows
/// 2-4 the other, equal weights: flow 1 gets half of the cell, where before
/// it got about a quarter.
#[test]
fn flow_slicing_gives_each_slice_its_share() {
    let mut scenario = String::from(
        r#"
    duration = "20s"
    warmup = "10s"
    seed = 3
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[controllers]]
    kind = "flow_slicing"
    start = "5s"
    slices = [ { flows = ["f1"] }, { flows = ["f2", "f3", "f4"] } ]
    "#,
    );
    for i in 1..=4 {
        scenario.push_str(&format!(
            "[[flows]]\nname = \"f{i}\"\nue = 1\nkind = \"tcp\"\ntcp = {{ cc = \"cubic\" }}\n"
        ));
    }
    let out = run(&scenario);
    assert_eq!(out.series.reconfigurations.len(), 1);
    assert_eq!(out.series.reconfigurations[0].t_s, 5.0);
    let tput: Vec<f64> = out
        .summary
        .flows
        .iter()
        .map(|f| f.throughput_mbps)
        .collect();
    let total: f64 = tput.iter().sum();
    assert!(
        total > 0.9 * 8.0 * 2.3 * 0.95,
        "the cell stays used: {total}"
    );
    let share = tput[0] / total;
    assert!(
        (0.45..0.55).contains(&share),
        "flow 1 share {share} ({tput:?})"
    );
}

/// A variant can replace every DRB's RLC configuration and bring its own
/// events and controllers; the other variants keep the scenario's.
#[test]
fn variants_override_rlc_events_and_controllers() {
    let scenario = format!(
        r#"{BLOAT}
    [[variants]]
    name = "plain"

    [[variants]]
    name = "xapp"
    [[variants.controllers]]
    kind = "sojourn_codel"

    [[variants]]
    name = "small-rlc"
    rlc = {{ mode = "am", buffer_limit = "30kB" }}
    [[variants.events]]
    at = "2s"
    control = {{ op = "set_pacer", pacer = {{ kind = "bdp" }} }}
    "#
    );
    let cfg: SimConfig = toml::from_str(&scenario).unwrap();
    let out = tcran_sim::run_scenario("v", &cfg, Path::new(".")).unwrap();
    let [plain, xapp, small] = &out.series[..] else {
        panic!("three variants")
    };
    assert!(plain.reconfigurations.is_empty());
    assert!(xapp
        .reconfigurations
        .iter()
        .all(|r| r.by == "sojourn_codel"));
    assert!(!xapp.reconfigurations.is_empty());
    assert_eq!(small.reconfigurations.len(), 1);
    assert_eq!(small.reconfigurations[0].t_s, 2.0);
    let v = &out.summary.variants;
    assert!(!v[0].run.drops.contains_key("rlc"), "{:?}", v[0].run.drops);
    // 30 kB of RLC buffer overflow under CUBIC until the pacer comes at 2 s.
    assert!(
        v[2].run.drops["rlc"]["rlc_full"] > 0,
        "{:?}",
        v[2].run.drops
    );
}

/// A variant can replace the cell (here: LTE and a lower MCS-independent
/// bandwidth) and the flows (here: a second call), and `tcp_cc` applies to
/// the replaced flows; configuration only, no run needed.
#[test]
fn variants_override_the_cell_and_the_flows() {
    let scenario = format!(
        r#"{BLOAT}
    [[variants]]
    name = "as-written"

    [[variants]]
    name = "lte-two-calls"
    tcp_cc = "bbr"
    cell = {{ rat = "lte", bandwidth_mhz = 10 }}
    [[variants.flows]]
    name = "bulk"
    ue = 1
    kind = "tcp"
    [[variants.flows]]
    name = "voip1"
    ue = 1
    kind = "voip"
    [[variants.flows]]
    name = "voip2"
    ue = 1
    kind = "voip"
    "#
    );
    let cfg: SimConfig = toml::from_str(&scenario).unwrap();
    let runs = cfg.runs();
    let (plain, other) = (&runs[0].1, &runs[1].1);
    assert_eq!(plain.cell, cfg.cell);
    assert_eq!(plain.flows, cfg.flows);
    assert_eq!(other.cell.rat, tcran_ran::mac::Rat::Lte);
    assert_eq!(other.cell.bandwidth_mhz, Some(10));
    let names: Vec<&str> = other.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["bulk", "voip1", "voip2"]);
    let v = serde_json::to_value(&other.flows[0]).unwrap();
    assert_eq!(v["tcp"]["cc"], "bbr");
    for (name, c) in &runs {
        tcran_sim::Sim::new(c, Path::new(".")).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// An outside controller (an xApp over E2) reading a DRB's configuration
/// sends an empty list of controls: it changes nothing, so it is neither
/// recorded nor counted as a reconfiguration; a real change still is, and
/// a read of a DRB that does not exist is refused without being counted.
#[test]
fn an_empty_control_list_is_a_read_not_a_reconfiguration() {
    use tcran_core::{DrbId, Instant, Rnti};
    use tcran_tc::{Change, Refused};
    let mut sim = build(CBR).unwrap();
    let t = Instant::from_millis(500);
    sim.run_until(t);
    let read = Change::Controls(vec![]);
    let before = sim.gnb().drb(Rnti(1), DrbId(1)).unwrap().config();
    assert_eq!(
        sim.apply_control("e2", Rnti(1), DrbId(1), &read)
            .map(|a| a.config),
        Ok(before)
    );
    assert_eq!(
        sim.apply_control("e2", Rnti(9), DrbId(1), &read),
        Err(Refused::NoSuchDrb)
    );
    let change = Change::Control(tcran_tc::Control::SetTotalLimit {
        limit_packets: Some(100),
    });
    assert!(sim.apply_control("e2", Rnti(1), DrbId(1), &change).is_ok());
    let out = sim.finish_at(Instant::from_millis(1000));
    let r = &out.series.reconfigurations;
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].what.contains("limit"), "{}", r[0].what);
    assert!(out.series.failed_reconfigurations.is_empty());
    assert_eq!(out.summary.reconfigurations.applied, 1);
    assert_eq!(out.summary.reconfigurations.failed, 0);
}

/// scenarios/uplink-backup.toml's vanilla UE (a CUBIC backup and a call's
/// upstream in one uplink FIFO and a 5-MB UE RLC buffer), 8 s.
fn uplink_backup_vanilla() -> String {
    let text = include_str!("../../../../scenarios/uplink-backup.toml");
    let text = &text[..text.find("[[variants]]").expect("the file has variants")];
    text.replace("duration = \"20s\"", "duration = \"8s\"")
}

/// An in-process controller addresses the UEs' uplink DRBs: with
/// `direction = "uplink"`, `sojourn_deploy` watches the UE's uplink RLC
/// delay and, once the backup has bloated it past 100 ms, deploys the
/// uplink-backup cure (FQ-CoDel + a 20-kB limit) into the UE's pipeline:
/// the change is recorded as an uplink one on the UE's uplink DRB, the
/// downlink pipeline is untouched, and over the last 3 s the call's
/// upstream delay is more than ten times lower than without it.
#[test]
fn an_uplink_controller_deploys_the_cure_into_the_ues_pipeline() {
    let vanilla = run(&uplink_backup_vanilla());
    let cured = run(&format!(
        r#"{}
    [[controllers]]
    kind = "sojourn_deploy"
    direction = "uplink"
    threshold = "100ms"
    [controllers.pipeline]
    classifier = {{ kind = "flow_hash", buckets = 64 }}
    scheduler = {{ kind = "drr" }}
    pacer = {{ kind = "static", limit_bytes = "20kB" }}
    [[controllers.pipeline.queues]]
    id = 0
    count = 64
    kind = "codel"
    "#,
        uplink_backup_vanilla()
    ));
    let r = &cured.series.reconfigurations;
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!((r[0].rnti, r[0].drb), (1, 1));
    assert!(r[0].what.starts_with("uplink deploy"), "{}", r[0].what);
    assert!(r[0].t_s < 3.0, "deployed at {} s", r[0].t_s);
    assert!(vanilla.series.reconfigurations.is_empty());
    // The call is flow 1 (backup, call, ping).
    let before = mean_delay(&vanilla, 1, 5.0, 8.0);
    let after = mean_delay(&cured, 1, 5.0, 8.0);
    assert!(before > 200.0, "vanilla call {before} ms");
    assert!(
        after * 10.0 < before,
        "call {after} ms with the controller, {before} without"
    );
}

/// A scheduled event with `direction = "uplink"` reconfigures the UE's
/// pipeline; an uplink scope on a UE without uplink DRBs is refused
/// naming the field.
#[test]
fn events_and_controllers_name_uplink_drbs_or_are_refused() {
    let out = run(&format!(
        r#"{}
    [[events]]
    at = "1s"
    ue = 1
    drb = 1
    direction = "uplink"
    control = {{ op = "set_pacer", pacer = {{ kind = "static", limit_bytes = "20kB" }} }}
    "#,
        uplink_backup_vanilla()
    ));
    let r = &out.series.reconfigurations;
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!((r[0].t_s, r[0].by.as_str()), (1.0, "event"));
    assert!(r[0].what.starts_with("uplink set pacer"), "{}", r[0].what);
    let e = build(&format!(
        "{CBR}\n[[controllers]]\nkind = \"sojourn_deploy\"\ndirection = \"uplink\"\n\
         pipeline = {{ queues = [ {{ id = 0, kind = \"fifo\" }} ] }}\n"
    ))
    .unwrap_err();
    assert!(
        e.contains("controllers[0].direction = uplink") && e.contains("no uplink DRBs"),
        "{e}"
    );
    let e = build(&format!(
        "{}\n[[events]]\nat = \"1s\"\ndrb = 2\ndirection = \"uplink\"\n\
         control = {{ op = \"set_total_limit\", limit_packets = 10 }}\n",
        uplink_backup_vanilla()
    ))
    .unwrap_err();
    assert!(
        e.contains("events[0].drb = 2") && e.contains("uplink DRB"),
        "{e}"
    );
}
