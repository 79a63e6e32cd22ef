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
