//! `tcran run --seeds`: every variant per seed, the summary's means and
//! 95 % intervals across seeds, seeds.csv, the table with intervals.

use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-seeds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tcran(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tcran"))
        .args(args)
        .output()
        .unwrap()
}

/// `tcran run small_scenario.toml --seeds 1..3 --json --out DIR`'s summary.
fn small_scenario_seeds_1_to_3(out_dir: &str) -> serde_json::Value {
    let out = tcran(&[
        "run",
        &fixture("small_scenario.toml"),
        "--seeds",
        "1..3",
        "--json",
        "--out",
        out_dir,
    ]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn three_seeds_give_per_seed_runs_and_intervals() {
    let dir = temp_dir("run");
    let d = dir.display().to_string();
    let v = small_scenario_seeds_1_to_3(&d);
    assert_eq!(v["seeds"], serde_json::json!([1, 2, 3]));
    assert_eq!(v["seed"], 1);
    let runs = v["seed_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["variants"], v["variants"], "the first seed's runs");
    let stats = &v["across_seeds"][0];
    let thr = &stats["flows"][0]["throughput_mbps"];
    assert_eq!(thr["n"], 3);
    // The mean is the mean of the seeds' values; the interval is around it.
    let per_seed: Vec<f64> = runs
        .iter()
        .map(|r| {
            r["variants"][0]["flows"][0]["throughput_mbps"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let mean = per_seed.iter().sum::<f64>() / 3.0;
    assert!((thr["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    let (lo, hi) = (thr["low"].as_f64().unwrap(), thr["high"].as_f64().unwrap());
    assert!(lo <= mean && mean <= hi);
    assert!(stats["flows"][1]["rtt_mean_ms"]["n"] == 3, "ping RTT");
    let csv = std::fs::read_to_string(dir.join("seeds.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2, "header, 3 seeds x 2 flows");
    assert!(csv.starts_with("seed,variant,flow,throughput_mbps"));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Seeds 1..3"));
    // The table: means with half-widths.
    let table = tcran(&[
        "run",
        &fixture("small_scenario.toml"),
        "--seeds",
        "1,2",
        "--out",
        &d,
    ]);
    assert!(table.status.success());
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("x 2 seeds (1..2)") && text.contains(" ±"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Seeds vary what is random: with the defaults (flows start at a random
/// point of the first radio frame) the seeds give different runs and
/// each says what it drew; with every flow started exactly on a fixed
/// MCS channel nothing is random, and the table says so instead of
/// offering zero-width intervals as a result.
#[test]
fn seeds_vary_what_is_random_and_the_table_says_when_nothing_is() {
    let dir = temp_dir("random");
    let d = dir.display().to_string();
    let text = std::fs::read_to_string(fixture("small_scenario.toml")).unwrap();
    let v = small_scenario_seeds_1_to_3(&d);
    let draws: Vec<&serde_json::Value> = v["seed_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["variants"][0]["seed_draws"])
        .collect();
    assert!(
        draws.iter().all(|d| !d.as_array().unwrap().is_empty()),
        "{draws:?}"
    );
    assert_ne!(draws[0], draws[1], "each seed draws its own start times");
    let fixed = dir.join("fixed.toml");
    let fixed_text = text
        .lines()
        .map(|l| match l {
            l if l.starts_with("channel =") => "channel = { kind = \"mcs\", mcs = 20 }".to_string(),
            "ue = 1" => "ue = 1\nstart_jitter = \"0s\"".to_string(),
            l => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&fixed, fixed_text).unwrap();
    let table = tcran(&[
        "run",
        &fixed.display().to_string(),
        "--seeds",
        "1..3",
        "--out",
        &d,
    ]);
    assert!(table.status.success(), "{table:?}");
    let shown = String::from_utf8_lossy(&table.stdout);
    assert!(
        shown.contains("nothing in this scenario is random"),
        "{shown}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_seed_lists_are_one_line_errors() {
    for (args, want) in [
        (vec!["--seeds", "5..1"], "ends before it starts"),
        (vec!["--seeds", "3"], "at least 2"),
        (
            vec!["--seeds", "1..3", "--seed", "4"],
            "cannot be used with",
        ),
    ] {
        let mut a = vec!["run", "x.toml"];
        a.extend(args);
        let out = tcran(&a);
        assert_eq!(out.status.code(), Some(2), "{a:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{a:?}: {err}");
    }
    let dir = temp_dir("bad");
    let file = dir.join("s.toml");
    let text = std::fs::read_to_string(fixture("small_scenario.toml"))
        .unwrap()
        .replace("duration = \"3s\"", "duration = \"3s\"\nseeds = [1, 1]")
        .replace(
            "../../../../data/traces/mahimahi/Verizon-LTE-short.down",
            "builtin:verizon-lte-short",
        );
    std::fs::write(&file, text).unwrap();
    let out = tcran(&[
        "run",
        &file.display().to_string(),
        "--out",
        &dir.join("out").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.toml:2:") && err.contains("seed 1 is listed twice"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A second run into the same `--out` replaces the first one whole: the
/// first run's `seeds.csv` does not stay beside a one-seed summary. A
/// directory tcran did not write is refused (exit 2) and left alone.
#[test]
fn a_rerun_into_the_same_out_leaves_nothing_of_the_first() {
    let dir = temp_dir("rerun");
    let out = dir.join("X");
    let o = out.display().to_string();
    small_scenario_seeds_1_to_3(&o);
    assert!(out.join("seeds.csv").is_file());
    let second = tcran(&[
        "run",
        &fixture("small_scenario.toml"),
        "--json",
        "--out",
        &o,
    ]);
    assert!(second.status.success(), "{second:?}");
    assert!(
        !out.join("seeds.csv").exists(),
        "the first run's seeds.csv is gone"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert!(v.get("seeds").is_none());
    let beside: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(beside.len(), 1, "no staging directory left: {beside:?}");

    let foreign = dir.join("notes");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("draft.txt"), "mine").unwrap();
    let refused = tcran(&[
        "run",
        &fixture("small_scenario.toml"),
        "--out",
        &foreign.display().to_string(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("holds files tcran did not write"), "{err}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("draft.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The summary records how its runs were made, and the scenario it
/// records runs again to the same results.
#[test]
fn the_summary_says_how_its_runs_were_made_and_that_runs_again() {
    let dir = temp_dir("made-with");
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "duration = \"2s\"\n[[ues]]\nrnti = 1\nchannel = { kind = \"mcs\", mcs = 12 }\n\
         [[flows]]\nname = \"bulk\"\nue = 1\nkind = \"tcp\"\n\
         [[flows]]\nname = \"ping\"\nue = 1\nkind = \"ping\"\ninterval = \"50ms\"\n",
    )
    .unwrap();
    let first = tcran(&[
        "run",
        &file.display().to_string(),
        "--json",
        "--seed",
        "7",
        "--set",
        "cell.bler=0.1",
        "--out",
        &dir.join("a").display().to_string(),
    ]);
    assert!(first.status.success(), "{first:?}");
    let a: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let made = &a["made_with"];
    assert_eq!(made["file"], file.display().to_string());
    assert_eq!(made["overrides"], serde_json::json!(["cell.bler=0.1"]));
    assert_eq!(made["scenario"]["seed"], 7);
    assert_eq!(made["scenario"]["cell"]["bler"], 0.1);
    let again = dir.join("again.json");
    std::fs::write(&again, made["scenario"].to_string()).unwrap();
    let second = tcran(&[
        "run",
        &again.display().to_string(),
        "--json",
        "--out",
        &dir.join("b").display().to_string(),
    ]);
    assert!(second.status.success(), "{second:?}");
    let b: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(
        a["variants"], b["variants"],
        "the recorded scenario gives the same runs"
    );
    assert_eq!(b["made_with"]["scenario"], made["scenario"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
