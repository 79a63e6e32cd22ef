//! `tcran run --realtime --e2` on a two-cell scenario: each cell is an E2
//! node of its own, and the xApp SDK (`tcran_xapp::Xapp`, what `tcran
//! xapp` runs) sees both.
//!
//! The scenario (tests/fixtures/e2_cells.toml) drives one UE from cell 1
//! to cell 2; the run hands it over once, about 2.4 s in. The test checks
//! that both nodes set up under the documented gNB ids (1000 × 1 + cell
//! id), that each node's per-UE KPM reports carry the UE only while it is
//! attached there (cell 1's before the handover, cell 2's after, never
//! both at once), that the cells' TS 28.552 handover counters count the
//! handover the run's summary lists (the source's preparation and
//! execution, the target's resource allocation), and that a control for
//! the UE's DRB sent to a cell the UE is not in is refused while the same
//! control to its serving cell is applied. The run lasts 4 s of wall
//! clock.

use super::{out_dir, run_realtime};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tcran_tc::pacer::PacerConfig;
use tcran_tc::{Change, Control};
use tcran_xapp::server::{ControlOutcome, KpmQuery};
use tcran_xapp::{DrbKey, KpmReport, KpmValue, NodeInfo, Xapp, XappConfig};

const UE: DrbKey = DrbKey::new(1, 1);

const COUNTERS: [&str; 6] = [
    "MM.HoPrepInterReq",
    "MM.HoPrepInterSucc",
    "MM.HoResAlloInterReq",
    "MM.HoResAlloInterSucc",
    "MM.HoExeInterReq",
    "MM.HoExeInterSucc",
];

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// What one node reported: per-UE reports (arrival order, the UEs in
/// each) and the node's handover counters summed over its reports.
#[derive(Debug, Default)]
struct Seen {
    ue_reports: Vec<(std::time::Instant, Vec<u16>)>,
    counters: BTreeMap<String, u64>,
}

fn add_counters(seen: &mut Seen, r: &KpmReport) {
    for (_, records) in &r.records {
        for record in records {
            for (name, v) in r.names.iter().zip(record) {
                if let KpmValue::Integer(n) = v {
                    *seen.counters.entry(name.clone()).or_default() += u64::from(*n);
                }
            }
        }
    }
}

/// A pacer for the UE's bearer: the control the test sends both cells.
fn pacer_change() -> Change {
    let pacer: PacerConfig =
        serde_json::from_value(serde_json::json!({ "kind": "static", "limit_bytes": "20000B" }))
            .unwrap();
    Change::Control(Control::SetPacer { pacer })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cell_is_an_e2_node_and_a_ue_moves_between_their_reports() {
    let x = Xapp::start(XappConfig::tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = x.local_addrs()[0];
    let out = out_dir("cells");
    let child = run_realtime("e2_cells.toml", addr, &[], &out);

    // Both E2 Setups accepted, under 1000 x (variant 0 + 1) + cell id.
    let nodes = x.wait_for_nodes(2, Duration::from_secs(10)).await.unwrap();
    let by_name: BTreeMap<String, NodeInfo> =
        nodes.into_iter().map(|n| (n.name.clone(), n)).collect();
    let names: Vec<&str> = by_name.keys().map(String::as_str).collect();
    assert_eq!(names, ["gnb:00f110:1001", "gnb:00f110:1002"]);
    let cell = [&by_name["gnb:00f110:1001"], &by_name["gnb:00f110:1002"]];
    assert_eq!(cell[0].drbs, [UE], "the UE starts in cell 1");
    assert!(cell[1].drbs.is_empty(), "{:?}", cell[1].drbs);

    // Cell 2 refuses a control for a UE it does not serve.
    let answer = x.control(cell[1].id, UE, &pacer_change()).await.unwrap();
    assert!(
        matches!(&answer, ControlOutcome::Refused(why) if why.contains("no such UE/DRB")),
        "{answer:?}"
    );

    // Per node: the UEs (style 4) and the node's counters (style 1).
    let query = |style: i64, names: &[&str]| KpmQuery {
        style,
        names: names.iter().map(|s| s.to_string()).collect(),
        granularity_ms: 100,
        report_ms: 100,
    };
    let mut subs = Vec::new();
    for n in cell {
        let ues = x
            .subscribe_kpm(n.id, &query(4, &["DRB.RlcSduTransmittedVolumeDL"]))
            .await
            .unwrap();
        let node = x.subscribe_kpm(n.id, &query(1, &COUNTERS)).await.unwrap();
        subs.push((ues, node));
    }
    let mut seen = [Seen::default(), Seen::default()];
    let mut controlled = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let mut open = [true; 4];
    while open.iter().any(|&o| o) {
        let [(u0, n0), (u1, n1)] = &mut subs[..] else {
            unreachable!()
        };
        let (k, report) = tokio::select! {
            r = u0.recv(), if open[0] => (0, r),
            r = n0.recv(), if open[1] => (1, r),
            r = u1.recv(), if open[2] => (2, r),
            r = n1.recv(), if open[3] => (3, r),
            _ = tokio::time::sleep_until(deadline) => panic!("the run ends in time"),
        };
        let Some(report) = report else {
            open[k] = false;
            continue;
        };
        let c = k / 2;
        if k % 2 == 0 {
            let ues: Vec<u16> = report
                .records
                .iter()
                .filter_map(|(r, _)| *r)
                .map(|r| r.0)
                .collect();
            seen[c].ue_reports.push((std::time::Instant::now(), ues));
        } else {
            add_counters(&mut seen[c], &report);
        }
        // Once cell 2 reports the UE, the handover is done: cell 1 refuses
        // a control for it, cell 2 applies it.
        if c == 1 && k == 2 && !controlled {
            controlled = true;
            let refused = x.control(cell[0].id, UE, &pacer_change()).await.unwrap();
            assert!(
                matches!(&refused, ControlOutcome::Refused(why) if why.contains("no such UE/DRB")),
                "{refused:?}"
            );
            let applied = x.control(cell[1].id, UE, &pacer_change()).await.unwrap();
            assert!(
                matches!(&applied, ControlOutcome::Applied(p) if p.pacer.kind_name() == "static"),
                "{applied:?}"
            );
        }
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(controlled, "cell 2 reported the UE: {seen:?}");

    // The UE is in one node's reports at a time: cell 1's first, then
    // cell 2's.
    let with_ue = |s: &Seen| -> Vec<std::time::Instant> {
        s.ue_reports
            .iter()
            .filter(|(_, ues)| ues.contains(&1))
            .map(|(t, _)| *t)
            .collect()
    };
    let (in1, in2) = (with_ue(&seen[0]), with_ue(&seen[1]));
    assert!(!in1.is_empty() && !in2.is_empty(), "{seen:?}");
    assert!(in1.last() < in2.first(), "{seen:?}");

    // The counters count the summary's handovers.
    let summary = json(&out.join("summary.json"));
    let handovers = summary["variants"][0]["handovers"].as_array().unwrap();
    assert_eq!(handovers.len(), 1, "{handovers:?}");
    assert_eq!(
        (
            handovers[0]["source"].as_u64(),
            handovers[0]["target"].as_u64()
        ),
        (Some(1), Some(2))
    );
    let count = |c: usize, name: &str| seen[c].counters.get(name).copied().unwrap_or(0);
    for name in [
        "MM.HoPrepInterReq",
        "MM.HoPrepInterSucc",
        "MM.HoExeInterReq",
        "MM.HoExeInterSucc",
    ] {
        assert_eq!((count(0, name), count(1, name)), (1, 0), "{name}: {seen:?}");
    }
    for name in ["MM.HoResAlloInterReq", "MM.HoResAlloInterSucc"] {
        assert_eq!((count(0, name), count(1, name)), (0, 1), "{name}: {seen:?}");
    }

    // The run records both controls to the UE's DRB that cell 1 and 2
    // refused and the one cell 2 applied; each node counts its own.
    let reconf = &summary["variants"][0]["reconfigurations"];
    assert_eq!(
        (reconf["applied"].as_u64(), reconf["failed"].as_u64()),
        (Some(1), Some(2)),
        "{reconf}"
    );
    let realtime = json(&out.join("realtime.json"));
    let nodes = realtime[0]["e2_cells"].as_array().unwrap();
    let ids: Vec<(u64, u64)> = nodes
        .iter()
        .map(|n| (n["gnb_id"].as_u64().unwrap(), n["cell"].as_u64().unwrap()))
        .collect();
    assert_eq!(ids, [(1001, 1), (1002, 2)]);
    let refused: Vec<u64> = nodes
        .iter()
        .map(|n| n["controls_refused"].as_u64().unwrap())
        .collect();
    let applied: Vec<u64> = nodes
        .iter()
        .map(|n| n["controls_applied"].as_u64().unwrap())
        .collect();
    assert_eq!((refused, applied), (vec![1, 1], vec![0, 1]));
    let _ = std::fs::remove_dir_all(&out);
}
