//! The paper's xApps end to end: `tcran xapp NAME` over E2 (framed TCP on
//! loopback) against `tcran run --realtime --e2` on the xApp's scenario,
//! shortened, compared with the same controller run in process on the
//! same scenario (`--set controllers=[...]`, virtual time): the same kind
//! of change at a comparable time and the same qualitative outcome.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-xapp-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn tcran(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tcran"));
    c.args(args).stdin(Stdio::null());
    c
}

/// `tcran xapp ...` and the address it listens on.
fn start_xapp(args: &[&str]) -> (Child, SocketAddr) {
    let mut child = tcran(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .split_whitespace()
        .find_map(|w| w.parse::<SocketAddr>().ok())
        .unwrap_or_else(|| panic!("the first line names the address: {line}"));
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
    });
    (child, addr)
}

fn run_realtime(file: &str, addr: SocketAddr, out: &Path) {
    let o = tcran(&[
        "run",
        file,
        "--realtime",
        "--e2",
        &addr.to_string(),
        "--json",
        "--out",
    ])
    .arg(out)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn run_in_process(file: &str, controller: &str, out: &Path) {
    let set = format!("controllers=[{controller}]");
    let o = tcran(&["run", file, "--json", "--set", &set, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// (t_s, by, what) of the single variant's reconfigurations.
fn reconfigurations(out: &Path) -> Vec<(f64, String, String)> {
    let mut r = csv::Reader::from_path(out.join("default/reconfigurations.csv")).unwrap();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                rec[0].parse().unwrap(),
                rec[1].to_string(),
                rec[4].to_string(),
            )
        })
        .collect()
}

/// (flow, t_s, goodput Mbit/s, delay ms) per series bin.
fn flows(out: &Path) -> Vec<(String, f64, f64, Option<f64>)> {
    let mut r = csv::Reader::from_path(out.join("default/flows.csv")).unwrap();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                rec[0].to_string(),
                rec[2].parse().unwrap(),
                rec[3].parse().unwrap_or(0.0),
                rec[4].parse().ok(),
            )
        })
        .collect()
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    assert!(!v.is_empty());
    v.iter().sum::<f64>() / v.len() as f64
}

fn xapp_changes(child: Child) -> Vec<Value> {
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The op of a change ("add queue ...", "deploy pipeline ..."): its first two words.
fn kind(what: &str) -> String {
    what.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn online_game_xapp_over_e2_brings_the_game_delay_back() {
    let file = fixture("xapp_game.toml");
    let (xapp, addr) = start_xapp(&[
        "xapp",
        "online-game",
        "--ric-listen",
        "127.0.0.1:0",
        "--scenario",
        &file,
        "--duration",
        "9s",
        "--json",
    ]);
    let e2 = out_dir("game-e2");
    run_realtime(&file, addr, &e2);
    let changes = xapp_changes(xapp);
    assert!(changes.iter().all(|c| c["applied"] == true), "{changes:?}");
    let local = out_dir("game-local");
    run_in_process(
        &file,
        r#"{kind="sojourn_codel",period="100ms",threshold="10ms"}"#,
        &local,
    );
    let over_e2: Vec<_> = reconfigurations(&e2)
        .into_iter()
        // An empty control list is the xApp reading the pipeline.
        .filter(|r| r.1 == "e2" && !r.2.is_empty())
        .collect();
    let in_proc = reconfigurations(&local);
    assert!(
        !over_e2.is_empty() && !in_proc.is_empty(),
        "{over_e2:?} {in_proc:?}"
    );
    // The same kinds of change, in the same order.
    let kinds = |v: &[(f64, String, String)]| v.iter().map(|r| kind(&r.2)).collect::<Vec<_>>();
    assert_eq!(kinds(&over_e2), kinds(&in_proc), "{over_e2:?}\n{in_proc:?}");
    // At a comparable time: the download starts at 1 s and bloats the
    // RLC buffer within a few hundred ms.
    let (t_e2, t_local) = (over_e2[0].0, in_proc[0].0);
    assert!((t_e2 - t_local).abs() < 1.0, "{t_e2} vs {t_local}");
    // The game's delay is back under 30 ms from a second after the trigger.
    for (out, t) in [(&e2, t_e2), (&local, t_local)] {
        let after = mean(
            flows(out)
                .into_iter()
                .filter(|f| f.0 == "game" && f.1 > t + 1.0)
                .filter_map(|f| f.3),
        );
        assert!(
            after < 30.0,
            "{}: game delay {after:.1} ms after the trigger",
            out.display()
        );
    }
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&local);
}

#[test]
fn flow_slicing_xapp_over_e2_splits_50_50() {
    let file = fixture("xapp_slicing.toml");
    let (xapp, addr) = start_xapp(&[
        "xapp",
        "flow-slicing",
        "--ric-listen",
        "127.0.0.1:0",
        "--scenario",
        &file,
        "--duration",
        "9s",
        "--json",
    ]);
    let e2 = out_dir("slicing-e2");
    run_realtime(&file, addr, &e2);
    let changes = xapp_changes(xapp);
    assert_eq!(changes.len(), 1, "one deploy: {changes:?}");
    assert_eq!(changes[0]["applied"], true);
    let local = out_dir("slicing-local");
    run_in_process(
        &file,
        r#"{kind="flow_slicing",slices=[{flows=["flow1"]},{flows=["flow2","flow3","flow4"]}]}"#,
        &local,
    );
    let over_e2: Vec<_> = reconfigurations(&e2)
        .into_iter()
        // An empty control list is the xApp reading the pipeline.
        .filter(|r| r.1 == "e2" && !r.2.is_empty())
        .collect();
    let in_proc = reconfigurations(&local);
    assert_eq!(kind(&over_e2[0].2), "deploy pipeline");
    assert_eq!(kind(&in_proc[0].2), "deploy pipeline");
    // flow1 alone gets half of the bearer, flows 2-4 share the other half
    // (over the last 3 s, after TCP settled).
    for out in [&e2, &local] {
        let f = flows(out);
        let rate = |name: &str| mean(f.iter().filter(|r| r.0 == name && r.1 > 4.0).map(|r| r.2));
        let one = rate("flow1");
        let rest = rate("flow2") + rate("flow3") + rate("flow4");
        let share = one / (one + rest);
        assert!(
            (share - 0.5).abs() < 0.1,
            "{}: flow1 {one:.1} Mbit/s, flows 2-4 {rest:.1} Mbit/s",
            out.display()
        );
    }
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&local);
}

/// Starts `tcran xapp NAME --scenario FILE` for `secs` seconds, runs the
/// scenario in real time against it, and returns the xApp's changes and
/// the node's reconfigurations made over E2 (empty control lists, the
/// xApp reading a pipeline, are not reconfigurations: the node does not
/// record them).
fn over_e2(
    name: &str,
    file: &str,
    secs: u32,
    out: &Path,
) -> (Vec<Value>, Vec<(f64, String, String)>) {
    let duration = format!("{secs}s");
    let (xapp, addr) = start_xapp(&[
        "xapp",
        name,
        "--ric-listen",
        "127.0.0.1:0",
        "--scenario",
        file,
        "--duration",
        &duration,
        "--json",
    ]);
    run_realtime(file, addr, out);
    let changes = xapp_changes(xapp);
    assert!(changes.iter().all(|c| c["applied"] == true), "{changes:?}");
    let reconf = reconfigurations(out);
    assert!(
        reconf.iter().all(|r| r.1 == "e2" && !r.2.is_empty()),
        "only the xApp's changes: {reconf:?}"
    );
    assert_eq!(reconf.len(), changes.len(), "{reconf:?}\n{changes:?}");
    (changes, reconf)
}

/// Mean goodput (Mbit/s) of `flow` over the bins from `from` s.
fn goodput(out: &Path, flow: &str, from: f64) -> f64 {
    mean(
        flows(out)
            .into_iter()
            .filter(|f| f.0 == flow && f.1 >= from)
            .map(|f| f.2),
    )
}

#[test]
fn shaper_slice_xapp_over_e2_caps_the_slice_at_15_mbit_s() {
    let file = fixture("xapp_shaper.toml");
    let e2 = out_dir("shaper-e2");
    let (_, over_e2) = over_e2("shaper-slice", &file, 6, &e2);
    let local = out_dir("shaper-local");
    run_in_process(
        &file,
        r#"{kind="flow_slicing",slices=[{flows=["flow1","flow2","flow3"],shaper={kind="token_bucket",rate="15Mbit/s"}},{flows=["flow4"]}]}"#,
        &local,
    );
    let in_proc = reconfigurations(&local);
    assert_eq!(over_e2.len(), 1, "one deploy: {over_e2:?}");
    assert_eq!(kind(&over_e2[0].2), "deploy pipeline");
    assert_eq!(kind(&in_proc[0].2), "deploy pipeline");
    assert!(over_e2[0].2.contains("token_bucket"), "{}", over_e2[0].2);
    // On the first call of either: within a second of the start.
    assert!(
        over_e2[0].0 < 1.0 && in_proc[0].0 < 1.0,
        "{over_e2:?} {in_proc:?}"
    );
    // Fig. 6b: flows 1-3 together get the shaper's 15 Mbit/s (goodput,
    // so a little less), flow4 the rest of the ~40 Mbit/s bearer (it had
    // a quarter of it, about 7 Mbit/s, with no xApp), from 2 s on.
    for out in [&e2, &local] {
        let shaped: f64 = ["flow1", "flow2", "flow3"]
            .iter()
            .map(|f| goodput(out, f, 2.0))
            .sum();
        let alone = goodput(out, "flow4", 2.0);
        assert!(
            (13.5..=15.5).contains(&shaped) && alone > 12.0,
            "{}: flows 1-3 {shaped:.1} Mbit/s, flow4 {alone:.1} Mbit/s",
            out.display()
        );
    }
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&local);
}

#[test]
fn low_latency_xapp_over_e2_deploys_codel_rr_5g_bdp_and_the_ping_recovers() {
    let file = fixture("xapp_low_latency.toml");
    let e2 = out_dir("lowlat-e2");
    let (_, over_e2) = over_e2("low-latency", &file, 6, &e2);
    let local = out_dir("lowlat-local");
    run_in_process(
        &file,
        r#"{kind="sojourn_deploy",period="100ms",threshold="10ms",pipeline={scheduler={kind="round_robin"},pacer={kind="bdp"},queues=[{id=0,kind="codel"}]}}"#,
        &local,
    );
    let in_proc = reconfigurations(&local);
    assert_eq!(over_e2.len(), 1, "one deploy: {over_e2:?}");
    assert_eq!(in_proc.len(), 1, "one deploy: {in_proc:?}");
    for r in [&over_e2[0], &in_proc[0]] {
        assert_eq!(kind(&r.2), "deploy pipeline");
        for part in ["codel", "round_robin", "bdp"] {
            assert!(r.2.contains(part), "{part} in {}", r.2);
        }
    }
    // Four CUBIC flows bloat the RLC buffer past 10 ms within the first
    // few hundred ms: both deploy early, within a second of each other.
    let (t_e2, t_local) = (over_e2[0].0, in_proc[0].0);
    assert!((t_e2 - t_local).abs() < 1.0, "{t_e2} vs {t_local}");
    // Fig. 7: the ping's delay falls (with no xApp it keeps growing past
    // 100 ms in this run) and stays low from 1.5 s after the deployment.
    for (out, t) in [(&e2, t_e2), (&local, t_local)] {
        let ping = mean(
            flows(out)
                .into_iter()
                .filter(|f| f.0 == "ping" && f.1 > t + 1.5)
                .filter_map(|f| f.3),
        );
        assert!(
            ping < 30.0,
            "{}: ping delay {ping:.1} ms after the deployment",
            out.display()
        );
    }
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&local);
}

/// (t_s, what, reason, count) of the single variant's drop and mark bins.
fn events(out: &Path) -> Vec<(f64, String, String, u64)> {
    let mut r = csv::Reader::from_path(out.join("default/events.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (t, what, reason, count) = (col("t_s"), col("what"), col("reason"), col("count"));
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                rec[t].parse().unwrap(),
                rec[what].to_string(),
                rec[reason].to_string(),
                rec[count].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn l4s_xapp_over_e2_deploys_the_marking_ramp_once_scalable_flows_appear() {
    use tcran_core::Duration;
    let file = fixture("xapp_l4s.toml");
    let e2 = out_dir("l4s-e2");
    let (_, over_e2) = over_e2("l4s", &file, 6, &e2);
    // The same controller in process (it has no scenario `kind`: it is a
    // custom controller), its series written as `tcran run` writes them.
    let local = out_dir("l4s-local");
    let cfg: tcran_sim::SimConfig =
        toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut sim = tcran_sim::Sim::new(&cfg, Path::new(".")).unwrap();
    let l4s =
        tcran_xapp::xapps::L4sOnScalable::new(tcran_xapp::xapps::L4sOnScalable::default_pipeline(
            Duration::from_millis(5),
            Duration::from_millis(10),
        ))
        .unwrap();
    let period = Duration::from_millis(100);
    sim.add_controller(
        "l4s".into(),
        period,
        period,
        (None, None, tcran_control::Direction::Downlink),
        tcran_control::controller::AnyController::Custom(Box::new(l4s)),
    );
    let run = sim.run();
    tcran_cli::series_csv::write(&local.join("default"), &run.series).unwrap();
    let in_proc = reconfigurations(&local);
    // Watch (a classifier that counts ECT(1) packets), then the ramp.
    let kinds = |v: &[(f64, String, String)]| v.iter().map(|r| kind(&r.2)).collect::<Vec<_>>();
    assert_eq!(kinds(&over_e2), ["set classifier", "deploy pipeline"]);
    assert_eq!(kinds(&over_e2), kinds(&in_proc), "{over_e2:?}\n{in_proc:?}");
    // The deployment follows the scalable flow's start (1 s) within a
    // second, over E2 as in process.
    let (t_e2, t_local) = (over_e2[1].0, in_proc[1].0);
    for t in [t_e2, t_local] {
        assert!((1.0..2.0).contains(&t), "deployed at {t} s");
    }
    for out in [&e2, &local] {
        let ev = events(out);
        let t_deploy = if out == &e2 { t_e2 } else { t_local };
        // Brunello sec. 4.2: the L queue marks CE along the ramp, and
        // nothing was marked before the xApp deployed it.
        let marks: u64 = ev
            .iter()
            .filter(|e| e.1 == "mark" && e.2 == "l4s")
            .map(|e| e.3)
            .sum();
        assert!(marks > 0, "{}: no L4S marks: {ev:?}", out.display());
        assert!(
            ev.iter().all(|e| e.1 != "mark" || e.0 + 0.1 >= t_deploy),
            "{}: marks before the deployment at {t_deploy} s",
            out.display()
        );
        // Marked, the scalable flow keeps its delay low while the
        // classic flow fills its own queue.
        let scalable = mean(
            flows(out)
                .into_iter()
                .filter(|f| f.0 == "scalable" && f.1 > t_deploy + 1.0)
                .filter_map(|f| f.3),
        );
        assert!(
            scalable < 40.0,
            "{}: scalable flow delay {scalable:.1} ms",
            out.display()
        );
    }
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&local);
}

/// scenarios/uplink-backup.toml's vanilla variant, shortened to `secs`
/// with no warm-up (arguments of `tcran run`).
fn uplink_backup_args(secs: u32) -> Vec<String> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/uplink-backup.toml")
        .display()
        .to_string();
    [
        file.as_str(),
        "--set",
        &format!("duration={secs}s"),
        "--set",
        "warmup=0s",
        "--set",
        "variants=[{ name = \"vanilla\" }]",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Mean one-way delay (ms) of `flow` in `out`'s vanilla variant over the
/// bins from `from` s.
fn uplink_delay(out: &Path, flow: &str, from: f64) -> f64 {
    let mut r = csv::Reader::from_path(out.join("vanilla/flows.csv")).unwrap();
    mean(r.records().filter_map(|rec| {
        let rec = rec.unwrap();
        let t: f64 = rec[2].parse().unwrap();
        (&rec[0] == flow && t >= from)
            .then(|| rec[4].parse().ok())
            .flatten()
    }))
}

/// Issue 28, the cure upstream over E2: in scenarios/uplink-backup.toml's
/// vanilla variant the backup upload fills the UE's 5-MB RLC buffer and
/// the call waits behind it (about 1 s). `tcran xapp low-latency
/// --direction uplink` reads the uplink DRB's RLC sojourn in E2SM-TCRAN
/// reports, sees it pass 20 ms and deploys the scenario's own cure
/// (FQ-CoDel + a 20-kB static pacer, tests/fixtures/uplink_cure.toml) into
/// the UE's pipeline, addressed by the uplink DRB: the call's delay falls
/// to the cured variant's tens of ms while the same run without the xApp
/// (virtual time) stays bloated.
#[test]
fn low_latency_xapp_over_e2_cures_the_uplink_bloat_in_the_ues_pipeline() {
    let secs = 6;
    let pipeline = fixture("uplink_cure.toml");
    let duration = format!("{secs}s");
    let (xapp, addr) = start_xapp(&[
        "xapp",
        "low-latency",
        "--direction",
        "uplink",
        "--threshold",
        "20ms",
        "--pipeline",
        &pipeline,
        "--ric-listen",
        "127.0.0.1:0",
        "--duration",
        &duration,
        "--json",
    ]);
    let e2 = out_dir("uplink-e2");
    let o = tcran(&["run", "--realtime", "--e2", &addr.to_string(), "--json"])
        .args(uplink_backup_args(secs))
        .arg("--out")
        .arg(&e2)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let changes = xapp_changes(xapp);
    assert_eq!(changes.len(), 1, "one deploy: {changes:?}");
    assert_eq!(changes[0]["direction"], "uplink");
    assert_eq!(changes[0]["applied"], true, "{changes:?}");
    let mut r = csv::Reader::from_path(e2.join("vanilla/reconfigurations.csv")).unwrap();
    let reconf: Vec<(f64, String, String)> = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                rec[0].parse().unwrap(),
                rec[1].to_string(),
                rec[4].to_string(),
            )
        })
        .collect();
    assert_eq!(reconf.len(), 1, "{reconf:?}");
    let (t, by, what) = &reconf[0];
    assert_eq!(by, "e2");
    assert!(what.starts_with("uplink deploy pipeline"), "{what}");
    assert!(what.contains("codel") && what.contains("static"), "{what}");
    // The backup fills the UE's buffer within its first second.
    assert!(*t < 2.0, "deployed at {t} s");

    let plain = out_dir("uplink-plain");
    let o = tcran(&["run", "--json"])
        .args(uplink_backup_args(secs))
        .arg("--out")
        .arg(&plain)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cured = uplink_delay(&e2, "call", t + 2.0);
    let bloated = uplink_delay(&plain, "call", t + 2.0);
    assert!(
        cured < 100.0 && bloated > 3.0 * cured,
        "call delay {cured:.1} ms after the deploy over E2, {bloated:.1} ms without"
    );
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&plain);
}

/// The mobility-aware guard over E2: `tcran xapp handover-guard` against
/// both cells of tests/fixtures/e2_cells.toml (each an E2 node), reading
/// the UE's handover margin from E2SM-TCRAN's reports, against the same
/// guard in process: the paced pipeline deployed in the source cell
/// before the handover and the bearer's own restored in the target cell
/// after it, at comparable times.
#[test]
fn handover_guard_xapp_over_e2_guards_across_the_handover() {
    let file = fixture("e2_cells.toml");
    let e2 = out_dir("guard-e2");
    let (_, over_e2) = over_e2("handover-guard", &file, 7, &e2);
    let local = out_dir("guard-local");
    run_in_process(
        &file,
        r#"{kind="handover_guard",period="100ms",ahead_db=6,clear_db=9,pipeline={scheduler={kind="round_robin"},pacer={kind="bdp"},queues=[{id=0,kind="codel"}]}}"#,
        &local,
    );
    let in_proc = reconfigurations(&local);
    let kinds = |v: &[(f64, String, String)]| v.iter().map(|r| kind(&r.2)).collect::<Vec<_>>();
    assert_eq!(kinds(&over_e2), kinds(&in_proc), "{over_e2:?}\n{in_proc:?}");
    assert_eq!(over_e2.len(), 2, "guard, then restore: {over_e2:?}");
    let handover = |out: &Path| {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        s["variants"][0]["handovers"][0]["at_s"].as_f64().unwrap()
    };
    for (out, r) in [(&e2, &over_e2), (&local, &in_proc)] {
        let at = handover(out);
        assert!(
            r[0].0 < at && at < r[1].0,
            "{}: {r:?}, handover at {at}",
            out.display()
        );
    }
    for (a, b) in over_e2.iter().zip(&in_proc) {
        assert!((a.0 - b.0).abs() < 0.5, "{over_e2:?}\n{in_proc:?}");
    }
    let _ = std::fs::remove_dir_all(&e2);
    let _ = std::fs::remove_dir_all(&local);
}
