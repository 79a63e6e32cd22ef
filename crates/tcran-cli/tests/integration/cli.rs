//! Runs the built `tcran` binary: every command, every class of bad input
//! (issue 3 "Bad input"): one line on stderr naming the file and the line or
//! field, exit code 2, no panic, no backtrace; clean stdout with `--json`.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn trace(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/traces")
        .join(rel)
        .display()
        .to_string()
}

fn tcran(args: &[&str]) -> Command {
    let mut c = Command::cargo_bin("tcran").unwrap();
    // A backtrace request must change nothing.
    c.env("RUST_BACKTRACE", "1").args(args);
    c
}

/// Runs a command that must succeed; returns stdout.
fn ok(args: &[&str]) -> String {
    let out = tcran(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail with a user error; returns the one stderr line.
fn user_error(args: &[&str]) -> String {
    let out = tcran(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {:?}", out);
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.ends_with('\n'));
    for bad in ["panicked", "backtrace", "RUST_BACKTRACE", "internal error"] {
        assert!(!stderr.contains(bad), "{stderr}");
    }
    let line = stderr.trim_end().to_string();
    assert!(line.starts_with("error: "), "{line}");
    line
}

fn json(args: &[&str]) -> Value {
    let out = ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {out}"))
}

// ------------------------------------------------------------------ stages

#[test]
fn stages_lists_every_stage_and_kind_with_references() {
    let out = ok(&["stages"]);
    for s in [
        "CLASSIFIER",
        "POLICER",
        "QUEUE",
        "SCHEDULER",
        "SHAPER",
        "PACER",
        "UNITS",
    ] {
        assert!(out.contains(s), "{s} missing");
    }
    for k in [
        "\"codel\"",
        "\"dualq\"",
        "\"e5g_bdp\"",
        "\"delay_based\"",
        "\"flow_hash\"",
    ] {
        assert!(out.contains(&format!("kind = {k}")), "{k} missing");
    }
    assert!(out.contains("RFC 8289"));
    // Defaults with their units, from the code.
    assert!(out
        .lines()
        .any(|l| l.trim_start().starts_with("interval") && l.contains("100ms")));
}

#[test]
fn stages_json_is_stable_and_complete() {
    let v = json(&["stages", "--json"]);
    assert_eq!(v["format_version"], 1);
    let stages = v["stages"].as_array().unwrap();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "classifier",
            "policer",
            "queue",
            "scheduler",
            "shaper",
            "pacer"
        ]
    );
    let queue = &stages[2];
    let codel = queue["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "codel")
        .unwrap();
    assert!(codel["reference"].as_str().unwrap().contains("RFC 8289"));
    let target = codel["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "target")
        .unwrap();
    assert_eq!(target["type"], "duration");
    assert_eq!(target["unit"], "duration");
    assert_eq!(target["default"], "5ms");
    assert_eq!(target["required"], false);
    assert!(queue["common_parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "limit_packets"));
    for s in stages {
        for k in s["kinds"].as_array().unwrap() {
            assert!(k["reference"].is_string(), "no reference: {k}");
        }
    }
    let units: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(units, ["duration", "size", "rate"]);
}

// ------------------------------------------------------------------ schema

#[test]
fn schema_prints_the_pipeline_json_schema() {
    let v = json(&["schema"]);
    assert_eq!(v["title"], "PipelineConfig");
    assert_eq!(v["additionalProperties"], false);
    assert!(v["$defs"]["Duration"]["pattern"].is_string());
    assert!(v["$defs"]["Duration"]["description"]
        .as_str()
        .unwrap()
        .contains("ns, us, ms, s"));
    assert_eq!(json(&["schema", "pipeline"]), v);
    let e = user_error(&["schema", "scenarioo"]);
    assert!(e.contains("scenarioo") && e.contains("pipeline"), "{e}");
}

// ------------------------------------------------------------------ trace info

#[test]
fn trace_info_autodetects_mahimahi() {
    let out = ok(&["trace", "info", &trace("mahimahi/Verizon-LTE-short.down")]);
    assert!(out.contains("format:    mahimahi"), "{out}");
    assert!(out.contains("duration:  140.000 s"), "{out}");
    assert!(out.contains("mean 5.03 Mbit/s"), "{out}");
}

#[test]
fn trace_info_json_for_the_thesis_format() {
    let f = trace("dynamic-buffer-tmc/packets_pedestrian.txt");
    let v = json(&["trace", "info", "--json", &f]);
    assert_eq!(v["format"], "thesis");
    assert_eq!(v["file"], f.as_str());
    let samples = v["samples"].as_u64().unwrap();
    assert!(samples > 0);
    // One sample per second.
    assert_eq!(v["duration_s"].as_f64().unwrap(), samples as f64);
    let (min, mean, max) = (
        v["min_mbps"].as_f64().unwrap(),
        v["mean_mbps"].as_f64().unwrap(),
        v["max_mbps"].as_f64().unwrap(),
    );
    assert!(min <= mean && mean <= max && mean > 0.0, "{v}");
    // Forcing the right format gives the same answer.
    assert_eq!(
        json(&["trace", "info", "--json", "--format", "thesis", &f]),
        v
    );
}

#[test]
fn trace_info_reads_a_ucc_csv() {
    let v = json(&["trace", "info", "--json", &fixture("ucc_small.csv")]);
    assert_eq!(v["format"], "ucc");
    assert_eq!(v["samples"], 3);
    // DL_bitrate 1000, 2000, 3000 kbit/s.
    assert_eq!(v["mean_mbps"].as_f64().unwrap(), 2.0);
    assert_eq!(v["min_mbps"].as_f64().unwrap(), 1.0);
    assert_eq!(v["max_mbps"].as_f64().unwrap(), 3.0);
    // The simulator uses the CQI column: 11, 12, then the missing one held.
    assert_eq!(v["simulator_uses"], "cqi");
    assert_eq!(v["cqi"]["min"], 11);
    assert_eq!(v["cqi"]["max"], 12);
    assert_eq!(v["cqi"]["missing"], 1);
    let text = ok(&["trace", "info", &fixture("ucc_small.csv")]);
    assert!(text.contains("uses the CQI column"), "{text}");
    assert!(text.contains("DL_bitrate: "), "{text}");
}

#[test]
fn trace_in_the_wrong_format_names_file_line_and_the_likely_format() {
    let f = trace("dynamic-buffer-tmc/packets_train.txt");
    let e = user_error(&["trace", "info", "--format", "mahimahi", &f]);
    assert!(e.contains(&format!("{f}:2:")), "{e}");
    assert!(e.contains("thesis"), "{e}");
    let f = trace("mahimahi/Verizon-LTE-short.down");
    let e = user_error(&["trace", "info", "--format", "ucc", &f]);
    assert!(e.contains(&format!("{f}:1:")) && e.contains("CQI"), "{e}");
}

#[test]
fn trace_that_no_reader_recognises_or_is_empty() {
    let f = fixture("not_a_trace.csv");
    let e = user_error(&["trace", "info", &f]);
    assert!(
        e.contains(&f) && e.contains("cannot tell the trace format"),
        "{e}"
    );
    assert!(e.contains("--format"), "{e}");
    let f = fixture("empty.down");
    let e = user_error(&["trace", "info", &f]);
    assert!(e.contains(&f) && e.contains("empty trace"), "{e}");
    // Forced formats say it too, through their own readers.
    for fmt in ["mahimahi", "thesis", "ucc"] {
        let e = user_error(&["trace", "info", "--format", fmt, &f]);
        assert!(e.contains("empty"), "{fmt}: {e}");
    }
}

#[test]
fn trace_file_missing_or_a_directory() {
    let e = user_error(&["trace", "info", "no/such/file.down"]);
    assert_eq!(
        e,
        "error: no/such/file.down: cannot read: No such file or directory"
    );
    let d = trace("mahimahi");
    let e = user_error(&["trace", "info", &d]);
    assert!(e.starts_with(&format!("error: {d}: cannot read:")), "{e}");
    // A file that never ends is refused at the size limit, not read forever.
    let e = user_error(&["trace", "info", "/dev/zero"]);
    assert_eq!(
        e,
        "error: /dev/zero: cannot read: larger than 256 MiB, the largest trace file accepted"
    );
}

// ------------------------------------------------------------------ validate

#[test]
fn validate_accepts_good_toml_and_json() {
    let f = fixture("good.toml");
    let out = ok(&["validate", &f]);
    assert_eq!(
        out,
        format!("ok {f}: pipeline: classifier filter (1 rule) -> queues [0 fifo, 1 codel +shaper] -> scheduler priority -> pacer e5g_bdp\n")
    );
    let out = ok(&["validate", &fixture("good.json")]);
    assert!(
        out.starts_with("ok ") && out.contains("queues [0-3 codel (x4)]"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1);
}

#[test]
fn validate_accepts_the_documented_examples() {
    // docs/cli.md and README examples must stay valid.
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples");
    for f in ["pipeline.toml", "fq_codel.json"] {
        ok(&["validate", &docs.join(f).display().to_string()]);
    }
}

/// (fixture, expected "file:line:column: " or "file: field" start, words the message must contain)
const PARSE_ERRORS: &[(&str, &str, &[&str])] = &[
    ("malformed.toml", ":3:9: ", &["invalid table header"]),
    ("malformed.json", ":3:1: ", &["expected `,` or `]`"]),
    (
        "unknown_key.toml",
        ":2:1: ",
        &["unknown field `limit_pakets`", "limit_packets"],
    ),
    (
        "unknown_key_in_queue.toml",
        ":4:1: ",
        &["unknown field `targett`", "`target`"],
    ),
    (
        "unknown_key.json",
        ":3:29: ",
        &["unknown field `offst`", "`offset`"],
    ),
    (
        "bare_number.toml",
        ":1:49: ",
        &["\"5\" is not a duration", "ns, us, ms, s"],
    ),
    (
        "wrong_unit_in_queue.toml",
        ":4:10: ",
        &["\"5\" is not a duration", "ms"],
    ),
    (
        "unknown_kind.toml",
        ":3:8: ",
        &["unknown variant `codl`", "`codel`"],
    ),
    (
        "unknown_pacer.toml",
        ":1:18: ",
        &["unknown variant `bdpp`", "`e5g_bdp`"],
    ),
    (
        "control_char_in_comment.toml",
        ":2:26: ",
        &["control character U+0003 is not allowed in TOML"],
    ),
];

#[test]
fn parse_errors_name_file_line_column_value_and_allowed() {
    for (name, pos, words) in PARSE_ERRORS {
        let f = fixture(name);
        let e = user_error(&["validate", &f]);
        assert!(e.starts_with(&format!("error: {f}{pos}")), "{name}: {e}");
        for w in *words {
            assert!(e.contains(w), "{name}: {w:?} not in {e}");
        }
    }
}

#[test]
fn build_errors_name_file_field_value_and_range() {
    let f = fixture("out_of_range.toml");
    let e = user_error(&["validate", &f]);
    assert_eq!(
        e,
        format!("error: {f}: scheduler.quantum = 10B: must be in 64B..=1MB")
    );
    let f = fixture("missing_queue.toml");
    let e = user_error(&["validate", &f]);
    assert!(e.starts_with(&format!("error: {f}: classifier")), "{e}");
    assert!(e.contains("queue 9") && e.contains("configured: 0"), "{e}");
    let f = fixture("missing_redirect_queue.toml");
    let e = user_error(&["validate", &f]);
    assert_eq!(
        e,
        format!("error: {f}: queues[0].policer.redirect = 5: must name a configured queue (configured: 0)")
    );
}

#[test]
fn validate_file_problems() {
    let e = user_error(&["validate", "missing.toml"]);
    assert_eq!(
        e,
        "error: missing.toml: cannot read: No such file or directory"
    );
    let f = fixture("pipeline.yaml");
    let e = user_error(&["validate", &f]);
    assert!(
        e.contains(&f) && e.contains(".yaml") && e.contains(".toml or .json"),
        "{e}"
    );
    let f = fixture("binary.toml");
    let e = user_error(&["validate", &f]);
    assert!(e.contains(&f) && e.contains("not UTF-8"), "{e}");
    // A scenario name that leads to a file that never ends is refused at
    // the size limit.
    let dir = std::env::temp_dir().join(format!("tcran-endless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let endless = dir.join("endless.toml");
    let _ = std::fs::remove_file(&endless);
    std::os::unix::fs::symlink("/dev/zero", &endless).unwrap();
    let f = endless.display().to_string();
    let e = user_error(&["validate", &f]);
    assert_eq!(
        e,
        format!(
            "error: {f}: cannot read: larger than 16 MiB, the largest configuration file accepted"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------------ the command line

#[test]
fn usage_errors_are_one_line_with_exit_code_2() {
    let e = user_error(&["frobnicate"]);
    assert!(e.contains("frobnicate"), "{e}");
    let e = user_error(&["trace", "info", "--format", "csv", "x"]);
    assert!(
        e.contains("'csv'") && e.contains("mahimahi, thesis, ucc"),
        "{e}"
    );
    let e = user_error(&["validate"]);
    assert!(e.contains("<FILE>"), "{e}");
    let e = user_error(&["stages", "--jsn"]);
    assert!(e.contains("--json"), "{e}");
}

#[test]
fn help_and_version_succeed() {
    assert!(ok(&["--help"]).contains("validate"));
    assert!(ok(&["--version"]).starts_with("tcran "));
    assert!(ok(&["trace", "info", "--help"]).contains("--format"));
}

#[test]
fn a_panic_is_one_line_with_exit_code_101_and_no_backtrace() {
    for bt in ["0", "1", "full"] {
        let out = tcran(&["internal-panic"])
            .env("RUST_BACKTRACE", bt)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(101));
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("tcran: internal error"), "{stderr}");
        assert!(!stderr.contains("stack backtrace"), "{stderr}");
    }
}

#[test]
fn demo_runs_every_variant_and_shows_the_cure() {
    let dir = std::env::temp_dir().join(format!("tcran-cli-demo-{}", std::process::id()));
    let out = dir.display().to_string();
    let v = json(&["demo", "--json", "--out", &out]);
    assert!(dir.join("summary.json").exists());
    assert_eq!(v["scenario"], "demo");
    let variants = v["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "vanilla",
            "codel@rlc",
            "bbr",
            "fq_codel+5g-bdp",
            "priority+e5g-bdp",
            "priority+jit"
        ]
    );
    let voip = |i: usize, key: &str| {
        variants[i]["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "voip")
            .unwrap()["delay_ms"][key]
            .as_f64()
            .unwrap()
    };
    // The demo's core delay is 10 ms: a call that waits less than another
    // 10 ms in the RAN is cured; the bloated 5 MB buffer costs seconds.
    assert!(
        voip(0, "mean") > 500.0,
        "vanilla bloats: {}",
        voip(0, "mean")
    );
    assert!(
        voip(1, "mean") < voip(0, "mean") / 10.0,
        "CoDel in RLC shortens the queue"
    );
    for (i, name) in names.iter().enumerate().skip(3) {
        assert!(voip(i, "p95") < 20.0, "{name} cures: {}", voip(i, "p95"));
    }
    let prb = variants[5]["prb_utilization"].as_f64().unwrap();
    assert!(prb > 0.98, "the best pipeline keeps the link busy: {prb}");
    let text = ok(&["demo", "--out", &out]);
    assert!(
        text.contains("priority+jit") && text.contains("PRB use"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn run_reads_a_scenario_with_a_relative_trace_and_writes_the_summary() {
    let dir = std::env::temp_dir().join(format!("tcran-cli-run-{}", std::process::id()));
    let v = json(&[
        "run",
        &fixture("small_scenario.toml"),
        "--json",
        "--seed",
        "9",
        "--out",
        &dir.display().to_string(),
    ]);
    assert_eq!(
        (v["scenario"].as_str(), v["seed"].as_u64()),
        (Some("small_scenario"), Some(9))
    );
    assert_eq!(v["variants"][0]["name"], "default");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(written["variants"], v["variants"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_bad_variant_or_a_missing_trace_is_one_line_naming_the_field() {
    let e = user_error(&["run", &fixture("bad_variant.toml")]);
    assert!(
        e.contains("bad_variant.toml")
            && e.contains("variants[1].ues[0].drbs[0].pipeline.pacer.offset = 3"),
        "{e}"
    );
    let e = user_error(&["run", &fixture("missing_trace.toml")]);
    assert!(
        e.contains("ues[0].channel.path")
            && e.contains("no-such-trace.down")
            && e.contains("cannot read"),
        "{e}"
    );
}

#[test]
fn every_shipped_scenario_validates() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let out = ok(&["validate", &path.display().to_string()]);
            assert!(out.starts_with("ok ") && out.contains("scenario:"), "{out}");
            n += 1;
        }
    }
    assert!(n >= 2, "scenarios/ holds the ready scenarios");
}

#[test]
fn validate_names_the_variant_field_of_a_bad_scenario() {
    let e = user_error(&["validate", &fixture("bad_variant.toml")]);
    assert!(
        e.contains("variants[1].ues[0].drbs[0].pipeline.pacer.offset = 3"),
        "{e}"
    );
}

/// A mistake in the scenario itself is reported at its own path, even when
/// the scenario has variants (they all inherit it): `ues[0].channel.path`,
/// not `variants[0].ues[0].channel.path`. Validate and run agree.
#[test]
fn a_mistake_in_the_base_scenario_is_not_blamed_on_a_variant() {
    let f = fixture("missing_trace_with_variants.toml");
    for cmd in ["validate", "run"] {
        let e = user_error(&[cmd, &f]);
        assert!(e.contains(": ues[0].channel.path = "), "{cmd}: {e}");
        assert!(!e.contains("variants["), "{cmd}: {e}");
    }
}

/// A scenario without UEs or without flows would print an empty table:
/// both commands refuse it, exit code 2, naming the key.
#[test]
fn a_scenario_without_ues_or_flows_is_refused() {
    for cmd in ["validate", "run"] {
        let e = user_error(&[cmd, &fixture("no_ues.toml")]);
        assert!(
            e.ends_with("no_ues.toml: ues = []: must hold at least one UE"),
            "{cmd}: {e}"
        );
        let e = user_error(&[cmd, &fixture("no_flows.toml")]);
        assert!(
            e.contains("no_flows.toml: flows = []: must hold at least one flow"),
            "{cmd}: {e}"
        );
    }
}

/// An unreadable trace names its path once (as the field's value) and the
/// OS reason without Rust's "(os error N)".
#[test]
fn an_unreadable_trace_names_its_path_once_without_the_os_code() {
    let f = fixture("missing_trace.toml");
    let path = Path::new(&f)
        .parent()
        .unwrap()
        .join("no-such-trace.down")
        .display()
        .to_string();
    let e = user_error(&["validate", &f]);
    assert_eq!(
        e,
        format!("error: {f}: ues[0].channel.path = {path}: cannot read: No such file or directory")
    );
    assert_eq!(e.matches("no-such-trace.down").count(), 1, "{e}");
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn run_writes_the_summary_csv_series_and_report_and_json_stays_alone_on_stdout() {
    let dir = temp("outputs");
    let v = json(&[
        "run",
        &fixture("small_scenario.toml"),
        "--json",
        "--out",
        &dir.display().to_string(),
    ]);
    assert_eq!(v["variants"][0]["name"], "default");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("small_scenario"));
    let flows = std::fs::read_to_string(dir.join("default/flows.csv")).unwrap();
    assert!(flows.starts_with("flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms\n"));
    let slots = std::fs::read_to_string(dir.join("default/slots.csv")).unwrap();
    assert!(slots.starts_with("t_s,rlc_bytes,capacity_bytes,prbs_used,prbs_available\n"));
    let _ = std::fs::remove_dir_all(dir);
}

/// A two-cell scenario (`[[cells]]`): the summary lists the handover,
/// `handovers.csv` has a row per handover and the report a timeline.
#[test]
fn run_of_a_multi_cell_scenario_writes_the_handovers() {
    let dir = temp("handovers");
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/ns3-handover.toml")
        .display()
        .to_string();
    let v = json(&[
        "run",
        &scenario,
        "--json",
        "--out",
        &dir.display().to_string(),
        "--set",
        "duration=20s",
    ]);
    let run = &v["variants"][0];
    assert_eq!(run["handovers"].as_array().map(Vec::len), Some(1), "{run}");
    assert_eq!(
        (
            run["handovers"][0]["source"].as_u64(),
            run["handovers"][0]["target"].as_u64()
        ),
        (Some(1), Some(2))
    );
    assert_eq!(run["cells"].as_array().map(Vec::len), Some(2));
    assert_eq!(run["packets"]["unaccounted"], 0);
    let csv = std::fs::read_to_string(dir.join("handovers.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("variant,ue,at_s,source,target,interruption_ms,"),
        "{csv}"
    );
    assert_eq!(lines.len(), 2, "{csv}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<table id=\"handovers\">"));
    let _ = std::fs::remove_dir_all(dir);
}

/// The thesis' train scenario with handovers
/// (`scenarios/reproduction/thesis-ch3-s1-train-handover.toml`) through
/// `tcran reproduce`: the handovers are decided on the drive's RSRPs, so
/// every variant hands over at the same times; the unpaced RLC buffer
/// holds the download's backlog, so the vanilla bearer forwards far more
/// PDCP SDUs than the paced ones, whose RLC buffer the pacer keeps small
/// (thesis sec. 3.6.1); and the game, queued behind that backlog, is
/// later around the handovers than with jit.
#[test]
fn reproduce_runs_the_train_with_handovers() {
    let dir = temp("train-handover");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let name = "thesis-ch3-s1-train-handover";
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../scenarios/reproduction/{name}.toml")),
        input.join(format!("{name}.toml")),
    )
    .unwrap();
    let out = dir.join("out");
    let path = |p: &PathBuf| p.display().to_string();
    ok(&[
        "reproduce",
        "--dir",
        &path(&input),
        "--out",
        &path(&out),
        "--seed",
        "1",
    ]);
    let csv = std::fs::read_to_string(out.join(name).join("handovers.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (variant, at, pdcp, call) = (
        col("variant"),
        col("at_s"),
        col("pdcp_forwarded_packets"),
        col("call_max_delay_ms"),
    );
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let of =
        |v: &str| -> Vec<&csv::StringRecord> { rows.iter().filter(|r| &r[variant] == v).collect() };
    let times = |v: &str| -> Vec<String> { of(v).iter().map(|r| r[at].to_string()).collect() };
    assert!(times("vanilla").len() >= 3, "{csv}");
    for v in ["dynrlc", "drql", "5g-bdp", "jit"] {
        assert_eq!(times(v), times("vanilla"), "{v}");
    }
    let sum =
        |v: &str, c: usize| -> f64 { of(v).iter().map(|r| r[c].parse::<f64>().unwrap()).sum() };
    assert!(sum("vanilla", pdcp) > 10.0 * sum("jit", pdcp), "{csv}");
    let median = |v: &str| {
        let mut d: Vec<f64> = of(v)
            .iter()
            .map(|r| r[call].parse::<f64>().unwrap())
            .collect();
        d.sort_by(f64::total_cmp);
        d[d.len() / 2]
    };
    assert!(median("jit") < median("vanilla"), "{csv}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A bad drive trace is a user error naming the file, line, column and
/// value (exit 2), never a panic.
#[test]
fn a_bad_drive_trace_is_named_with_its_line_column_and_value() {
    let dir = temp("bad-drive");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("d.csv"),
        "time_s,serving,cqi,rsrp:1,rsrp:2\n0,1,9,-90,-95\n1,1,9,-90,-20\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "duration = \"5s\"\n[[cells]]\nid = 1\n[[cells]]\nid = 2\n\
         [[ues]]\nrnti = 1\nchannel = { kind = \"drive\", path = \"d.csv\" }\n\
         [[flows]]\nname = \"p\"\nue = 1\nkind = \"voip\"\n",
    )
    .unwrap();
    let e = user_error(&[
        "run",
        &dir.join("s.toml").display().to_string(),
        "--out",
        &dir.join("o").display().to_string(),
    ]);
    for want in ["d.csv", "line 3", "rsrp:2", "\"-20\"", "-156 to -31"] {
        assert!(e.contains(want), "{want}: {e}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn set_changes_the_scenario_before_it_runs() {
    let dir = temp("set");
    let v = json(&[
        "run",
        &fixture("small_scenario.toml"),
        "--json",
        "--out",
        &dir.display().to_string(),
        "--set",
        "duration=2s",
        "--set",
        "seed=5",
        "--set",
        "flows[1].interval=\"50ms\"",
        "--set",
        "cell.bandwidth_mhz=10",
    ]);
    assert_eq!(
        (v["sim_s"].as_f64(), v["seed"].as_u64()),
        (Some(2.0), Some(5))
    );
    let _ = std::fs::remove_dir_all(dir);
    let out = ok(&[
        "validate",
        &fixture("good.toml"),
        "--set",
        "pacer.kind=bdp",
        "--set",
        "queues[1].target=7ms",
    ]);
    assert!(out.contains("pacer bdp"), "{out}");
}

#[test]
fn bad_set_arguments_are_one_line_naming_the_key_and_what_is_there() {
    let scenario = fixture("small_scenario.toml");
    let cases: [(&str, &[&str]); 6] = [
        (
            "ues[3].channel.mcs=10",
            &["--set ues[3].channel.mcs=10: ues[3] does not exist: ues has 1 element (ues[0] to ues[0])"],
        ),
        (
            "duration.unit=s",
            &["--set duration.unit=s: duration is a string (\"3s\"), not a table"],
        ),
        (
            "flows.name=x",
            &["--set flows.name=x: flows is an array of 2, not a table"],
        ),
        ("duration", &["--set duration: expected KEY=VALUE"]),
        (
            "ues[x]=1",
            &["--set ues[x]=1: bad key `ues[x]`: `x` is not an array index"],
        ),
        (
            "nosuchkey=1",
            &["small_scenario.toml with --set nosuchkey=1: nosuchkey: unknown field `nosuchkey`", "duration"],
        ),
    ];
    for (set, expect) in cases {
        let e = user_error(&["run", &scenario, "--set", set]);
        for x in expect {
            assert!(e.contains(x), "--set {set}: {e}");
        }
    }
    let e = user_error(&["run", &scenario, "--set", "duration=fast"]);
    assert!(
        e.contains("with --set duration=fast: duration: \"fast\" is not a duration"),
        "{e}"
    );
    // A bad value deep down is named by its path.
    let e = user_error(&["run", &scenario, "--set", "cell.bandwidth_mhz=wide"]);
    assert!(
        e.contains(
            "--set cell.bandwidth_mhz=wide: cell.bandwidth_mhz: invalid type: string \"wide\""
        ),
        "{e}"
    );
    let e = user_error(&[
        "validate",
        &fixture("good.toml"),
        "--set",
        "queues[2].kind=fifo",
    ]);
    assert!(
        e.contains("queues[2] does not exist: queues has 2 elements"),
        "{e}"
    );
}

#[test]
fn reproduce_runs_every_scenario_of_a_directory_in_name_order_with_an_index() {
    let dir = temp("repro-in");
    let out = temp("repro-out");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("b-variants.toml"),
        r#"
duration = "5s"
[[ues]]
rnti = 1
channel = { kind = "mcs", mcs = 10 }
[[flows]]
name = "bulk"
ue = 1
kind = "tcp"
[[variants]]
name = "vanilla"
[[variants]]
name = "paced"
pipeline = { pacer = { kind = "bdp" }, queues = [ { id = 0, kind = "codel" } ] }
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("a-ping.json"),
        r#"{ "duration": "5s", "ues": [ { "rnti": 1, "channel": { "kind": "mcs", "mcs": 5 } } ],
             "flows": [ { "name": "ping", "ue": 1, "kind": "ping", "interval": "100ms" } ] }"#,
    )
    .unwrap();
    std::fs::write(dir.join("notes.md"), "not a scenario").unwrap();
    let figures = out.join("figures");
    let text = ok(&[
        "reproduce",
        "--dir",
        &dir.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--figures",
        &figures.display().to_string(),
        "--jobs",
        "2",
        "--set",
        "duration=1s",
    ]);
    let a = text.find("a-ping").unwrap();
    let b = text.find("b-variants").unwrap();
    assert!(a < b, "sorted by name: {text}");
    assert!(
        text.contains("1 s simulated"),
        "--set applies to all: {text}"
    );
    for s in ["a-ping", "b-variants"] {
        assert!(out.join(s).join("report.html").exists(), "{s}");
        assert!(out.join(s).join("summary.json").exists(), "{s}");
    }
    assert!(out.join("b-variants/paced/slots.csv").exists());
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("href=\"a-ping/report.html\""));
    assert!(index.contains("href=\"b-variants/report.html#variant-1\">paced<"));
    assert_eq!(
        index.matches("<tr>").count(),
        1 + 1 + 2,
        "header + 3 variants"
    );
    // The combined index carries each scenario's two figures; --figures
    // writes them as standalone SVG files with the legend inside.
    assert_eq!(index.matches("data-plot=\"scatter\"").count(), 2);
    assert_eq!(index.matches("data-plot=\"cdf\"").count(), 2);
    assert!(index.contains("(key flow: ping)") && index.contains("(key flow: bulk)"));
    for s in ["a-ping", "b-variants"] {
        for kind in ["scatter", "cdf"] {
            let svg = std::fs::read_to_string(figures.join(format!("{s}-{kind}.svg")))
                .unwrap_or_else(|e| panic!("{s}-{kind}.svg: {e}"));
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        }
    }
    let scatter = std::fs::read_to_string(figures.join("b-variants-scatter.svg")).unwrap();
    for label in [
        "vanilla",
        "paced",
        "utilisation of the capacity offered (%)",
    ] {
        assert!(scatter.contains(label), "{label} in the figure");
    }
    assert!(text.contains("2 scenario(s) in"), "{text}");
    // A bad scenario among good ones: its one-line error, whatever the jobs.
    std::fs::write(
        dir.join("c-bad.toml"),
        "duration = \"1s\"\nwarmup = \"soon\"\nues = []\nflows = []\n",
    )
    .unwrap();
    for jobs in ["1", "3"] {
        let e = user_error(&[
            "reproduce",
            "--dir",
            &dir.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--jobs",
            jobs,
            "--set",
            "duration=1s",
        ]);
        assert!(e.contains("c-bad.toml"), "{e}");
    }
    let e = user_error(&["reproduce", "--jobs", "0"]);
    assert!(e.contains("--jobs 0"), "{e}");
    // An empty directory is a one-line error.
    let empty = temp("repro-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = user_error(&["reproduce", "--dir", &empty.display().to_string()]);
    assert!(e.contains("no scenario files"), "{e}");
    for d in [dir, out, empty] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn an_output_directory_that_cannot_be_written_is_one_line_with_exit_code_1() {
    // A regular file where the output directory should be.
    let blocker = temp("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let out = blocker.join("out");
    let o = tcran(&[
        "run",
        &fixture("small_scenario.toml"),
        "--out",
        &out.display().to_string(),
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(o.stdout.is_empty());
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}: cannot write: ", out.display()))
            && !stderr.contains("os error"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(blocker);
}

/// The scenario schema is generated from the serde types; every shipped
/// scenario must satisfy it, and a wrong unit or an unknown key must not.
#[test]
fn schema_scenario_accepts_every_shipped_scenario_and_rejects_mistakes() {
    let schema = json(&["schema", "scenario"]);
    assert_eq!(schema["title"], "SimConfig");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("reproduction")] {
        for entry in std::fs::read_dir(&dir).expect("scenarios directory") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 5, "{files:?}");
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable");
        let doc: serde_json::Value = toml::from_str(&text).expect("TOML");
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
    let bad_unit: serde_json::Value =
        toml::from_str("duration = \"5 parsecs\"\nues = []\nflows = []").unwrap();
    assert!(!validator.is_valid(&bad_unit));
    let unknown_key: serde_json::Value =
        toml::from_str("duration = \"5s\"\nues = []\nflows = []\ncolour = \"red\"").unwrap();
    assert!(!validator.is_valid(&unknown_key));
    let empty: serde_json::Value =
        toml::from_str("duration = \"5s\"\nues = []\nflows = []").unwrap();
    assert!(!validator.is_valid(&empty), "a run needs a UE and a flow");
    let good: serde_json::Value = toml::from_str(
        "duration = \"5s\"\nues = [{ rnti = 1, channel = { kind = \"mcs\", mcs = 9 } }]\n\
         flows = [{ name = \"p\", ue = 1, kind = \"ping\", interval = \"1s\" }]",
    )
    .unwrap();
    assert!(validator.is_valid(&good));
}

// ------------------------------------------------- kinds, names, durations

/// The demo scenario (builtin trace, six variants).
fn scenario() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/demo.toml")
        .display()
        .to_string()
}

fn error_example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/examples/errors")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn validate_reads_a_misspelled_scenario_as_a_scenario_and_takes_kind() {
    let f = error_example("scenario-misspelled-key.toml");
    let e = user_error(&["validate", &f]);
    assert!(e.contains("unknown field `duraton`"), "{e}");
    assert!(e.contains("`duration`") && e.contains("`ues`"), "{e}");
    assert!(
        !e.contains("queues"),
        "the pipeline's keys are not the point: {e}"
    );
    // --kind reads it as the user says.
    let e = user_error(&["validate", "--kind", "pipeline", &f]);
    assert!(
        e.contains("unknown field `duraton`") && e.contains("queues"),
        "{e}"
    );
    let e = user_error(&["validate", "--kind", "scenario", &fixture("good.toml")]);
    assert!(e.contains("unknown field"), "{e}");
    ok(&["validate", "--kind", "pipeline", &fixture("good.toml")]);
    // Empty: both kinds' keys, no guess.
    let e = user_error(&["validate", &error_example("empty.toml")]);
    assert!(e.contains("empty"), "{e}");
    assert!(
        e.contains("a scenario has") && e.contains("`duration`"),
        "{e}"
    );
    assert!(
        e.contains("a pipeline has") && e.contains("`queues`"),
        "{e}"
    );
    // Keys of no kind: no guess either.
    let dir = temp("kind");
    std::fs::create_dir_all(&dir).unwrap();
    let odd = dir.join("odd.toml");
    std::fs::write(&odd, "colour = \"blue\"\n").unwrap();
    let e = user_error(&["validate", &odd.display().to_string()]);
    assert!(
        e.contains("cannot tell the kind") && e.contains("--kind"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn durations_say_why_they_are_refused_and_take_min_and_h() {
    let e = user_error(&["validate", &error_example("negative-duration.toml")]);
    assert!(e.contains("negative durations are not allowed"), "{e}");
    let s = scenario();
    let e = user_error(&["validate", &s, "--set", "duration=99999999999999999999s"]);
    assert!(e.contains("too large: the largest duration is"), "{e}");
    // 1 min and 1 h are durations (a 1-hour run is only validated here).
    ok(&["validate", &s, "--set", "duration=1min"]);
    let out = ok(&["validate", &s, "--set", "duration=1h"]);
    assert!(out.contains("3600s"), "{out}");
}

#[test]
fn integers_too_large_for_their_type_name_the_range_the_field_allows() {
    let e = user_error(&["validate", &error_example("huge-bandwidth.toml")]);
    assert!(e.contains("0..=4294967295"), "{e}");
    // The cell's own list of bandwidths, from the builder.
    assert!(e.contains("bandwidth_mhz: must be one of 5, 10"), "{e}");
    let e = user_error(&[
        "validate",
        &scenario(),
        "--set",
        "cell.bandwidth_mhz=4294967296",
    ]);
    assert!(
        e.contains("0..=4294967295") && e.contains("must be one of"),
        "{e}"
    );
}

#[test]
fn duplicate_names_are_refused() {
    let e = user_error(&["validate", &error_example("duplicate-flow.toml")]);
    assert!(
        e.contains("flows[1].name = \"ping\": must be unique: flows[0]"),
        "{e}"
    );
    let e = user_error(&["validate", &scenario(), "--set", "variants[1].name=vanilla"]);
    assert!(
        e.contains("variants[1].name = \"vanilla\": must be unique"),
        "{e}"
    );
}

#[test]
fn traces_in_scenarios_keep_their_detail() {
    let e = user_error(&["validate", &error_example("misspelled-builtin.toml")]);
    assert!(e.contains("builtin:thesis-pedestrain"), "{e}");
    assert!(
        e.contains("builtin:thesis-pedestrian") && e.contains("builtin:tmobile-lte-short"),
        "{e}"
    );
    let f = error_example("bad-trace-line.toml");
    let e = user_error(&["validate", &f]);
    assert!(
        e.contains("read as mahimahi") && e.contains("line 4: \"2x\""),
        "{e}"
    );
    // A forced format goes straight to its reader.
    let e = user_error(&["validate", &f, "--set", "ues[0].channel.format=thesis"]);
    assert!(e.contains("broken.down") && !e.contains("read as"), "{e}");
    let e = user_error(&["validate", &f, "--set", "ues[0].channel.format=csv"]);
    assert!(
        e.contains("unknown variant `csv`") && e.contains("`mahimahi`"),
        "{e}"
    );
}

#[test]
fn reproduce_checks_every_scenario_before_writing_anything() {
    let dir = temp("precheck-in");
    let out = temp("precheck-out");
    std::fs::create_dir_all(&dir).unwrap();
    let good = "duration = \"2s\"\n[[ues]]\nrnti = 1\nchannel = { kind = \"mcs\", mcs = 10 }\n[[flows]]\nname = \"ping\"\nue = 1\nkind = \"ping\"\ninterval = \"100ms\"\n";
    std::fs::write(dir.join("a-good.toml"), good).unwrap();
    // The last file in name order fails only with the --set.
    std::fs::write(dir.join("z-late.toml"), format!("warmup = \"1s\"\n{good}")).unwrap();
    let e = user_error(&[
        "reproduce",
        "--dir",
        &dir.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--jobs",
        "1",
        "--set",
        "duration=1s",
    ]);
    assert!(e.contains("z-late.toml") && e.contains("warmup"), "{e}");
    assert!(!out.exists(), "nothing written before the check");
    for d in [dir, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// `tcran sweep` hands over to a Python with the `tcran` package; without
/// one it says so in one line (the sweep itself is tested with the
/// package, python/tests/test_sweep.py).
#[test]
fn sweep_without_the_python_package_says_how_to_get_it() {
    let run = |python: &str| {
        let out = tcran(&["sweep", "sweep.toml"])
            .env("TCRAN_PYTHON", python)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let e = run("/nonexistent/python");
    assert!(
        e.starts_with("error: sweep: cannot run /nonexistent/python:") && e.contains("make python"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    // A Python without the package (the system's, with no virtualenv).
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_ok()
    {
        let e = run("python3");
        let missing = e == "error: sweep: python3 has no `tcran` package: sweeps run in the Python package (`make python` installs it into target/venv; set TCRAN_PYTHON to a Python that has it)\n";
        // A python3 that has the package installed is fine too.
        assert!(missing || !e.contains("sweep:"), "{e}");
    }
}

/// A valid duration beyond a day is more often a wrong unit than a plan:
/// `validate` says so on stderr (and still succeeds); a day itself passes
/// silently.
#[test]
fn validate_warns_of_a_duration_beyond_a_day() {
    let f = scenario();
    let out = tcran(&["validate", &f, "--set", "duration=18000000000s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("warning: {f}: duration = "))
            && stderr.contains(" days of simulated time"),
        "{stderr}"
    );
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("ok "));
    ok(&["validate", &f, "--set", "duration=24h"]);
}
