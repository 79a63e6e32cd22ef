//! Uplink flows through the UE's own DRBs, run by the `tcran` binary: the
//! shipped uplink scenarios run with the ledger balanced, uplink bloat and
//! its cure in the UE show in the numbers, FTP, web and video uploads run
//! with their upload times, and an uplink flow on a UE without uplink DRBs
//! is refused naming the flow and the field.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

/// Runs `name` with its duration cut to `duration` (a copy in the test's
/// own directory); returns the summary.
fn run_short(name: &str, duration: &str, tag: &str) -> Value {
    let dir = std::env::temp_dir().join(format!("tcran-uplink-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(scenario(name)).unwrap();
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("duration = ") {
                format!("duration = \"{duration}\"")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let summary = run_text(&dir, name, &text);
    let _ = std::fs::remove_dir_all(&dir);
    summary
}

/// Writes `text` as `dir/name`, runs it (it must succeed) and returns its
/// summary.
fn run_text(dir: &Path, name: &str, text: &str) -> Value {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = Command::cargo_bin("tcran")
        .unwrap()
        .args(["run", &file.display().to_string(), "--json"])
        .args(["--out", &dir.join("out").display().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn flow<'a>(variant: &'a Value, name: &str) -> &'a Value {
    variant["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

fn variant<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

fn balanced(v: &Value) {
    let p = &v["packets"];
    assert_eq!(p["unaccounted"], 0, "{}: {p}", v["name"]);
    assert!(p["created"].as_u64().unwrap() > 0);
}

/// scenarios/uplink-backup.toml, cut to 10 s (5 s measured): a CUBIC
/// backup fills the UE's 5-MB RLC buffer and the call's upstream waits
/// behind it; a UE-side pipeline (priority + a 20-kB limit, or FQ-CoDel +
/// the limit) brings the call's delay down more than tenfold and keeps the
/// backup's throughput (at least 90 % of vanilla's, at most vanilla's +
/// 1 %: the cure does not make the cell faster).
#[test]
fn a_ue_side_pipeline_cures_uplink_bloat() {
    let s = run_short("uplink-backup.toml", "10s", "backup");
    let vanilla = variant(&s, "vanilla");
    let call = |v: &Value| flow(v, "call")["delay_ms"]["p50"].as_f64().unwrap();
    let backup = |v: &Value| flow(v, "backup")["throughput_mbps"].as_f64().unwrap();
    for v in s["variants"].as_array().unwrap() {
        balanced(v);
        for f in v["flows"].as_array().unwrap() {
            assert_eq!(f["direction"], "uplink", "{f}");
        }
    }
    assert!(call(vanilla) > 200.0, "vanilla call {} ms", call(vanilla));
    for cured in ["priority+static", "fq_codel+static"] {
        let c = variant(&s, cured);
        assert!(
            call(c) * 10.0 <= call(vanilla),
            "{cured}: call {} ms vs vanilla {} ms",
            call(c),
            call(vanilla)
        );
        let ratio = backup(c) / backup(vanilla);
        assert!(
            (0.9..=1.01).contains(&ratio),
            "{cured}: backup {} Mbit/s vs vanilla {}",
            backup(c),
            backup(vanilla)
        );
    }
}

/// scenarios/ns3-uplink.toml (case B of the ns-3 comparison), cut to 8 s:
/// the upload and the ping run, every packet is accounted for.
#[test]
fn the_ns3_uplink_case_runs_and_balances() {
    let s = run_short("ns3-uplink.toml", "8s", "ns3");
    let v = &s["variants"][0];
    balanced(v);
    assert!(flow(v, "upload")["throughput_mbps"].as_f64().unwrap() > 10.0);
    assert!(flow(v, "ping")["rtt_ms"]["count"].as_u64().unwrap() >= 25);
}

/// An uplink flow needs uplink DRBs on its UE: exit code 2, one line
/// naming the flow's field, its value and what is missing.
#[test]
fn an_uplink_flow_without_uplink_drbs_is_refused() {
    let dir = std::env::temp_dir().join(format!("tcran-uplink-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("no_uplink_drb.toml");
    std::fs::write(
        &file,
        "duration = \"1s\"\n[[ues]]\nrnti = 1\nchannel = { kind = \"mcs\", mcs = 10 }\n\
         [[flows]]\nname = \"up\"\nue = 1\ndirection = \"uplink\"\nkind = \"voip\"\n",
    )
    .unwrap();
    for cmd in ["validate", "run"] {
        let out = Command::cargo_bin("tcran")
            .unwrap()
            .args([cmd, &file.display().to_string()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}: {out:?}");
        let e = String::from_utf8(out.stderr).unwrap();
        assert!(
            e.contains("flows[0].direction = uplink")
                && e.contains("needs uplink DRBs on UE 1")
                && e.lines().count() == 1,
            "{cmd}: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bad `uplink_channel` is one line naming the field and its value, exit
/// code 2: a downlink-only kind (with the kinds an uplink takes), a trace
/// file that is not there.
#[test]
fn a_bad_uplink_channel_is_refused_naming_the_field() {
    let s = scenario("uplink-backup.toml").display().to_string();
    let cases = [
        (
            "ues[0].uplink_channel={ kind = \"drive\", path = \"builtin:ucc-drive-cork\" }",
            "ues[0].uplink_channel.kind = drive: an uplink channel is one of mcs, cqi, mcs_ramp or trace",
        ),
        (
            "ues[0].uplink_channel={ kind = \"trace\", path = \"no-such.up\" }",
            "no-such.up: cannot read",
        ),
        (
            "ues[0].uplink_channel={ kind = \"trace\", path = \"builtin:verizon-lte-short-upp\" }",
            "builtin:verizon-lte-short-up, builtin:tmobile-lte-short-up",
        ),
    ];
    for (set, want) in cases {
        let out = Command::cargo_bin("tcran")
            .unwrap()
            .args(["validate", &s, "--set", set])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}: {out:?}");
        let e = String::from_utf8(out.stderr).unwrap();
        assert!(e.contains(want) && e.lines().count() == 1, "{set}: {e}");
    }
}

/// Uploads of every kind (issue 28): FTP files, web pages and a live
/// video stream leave a UE through its uplink DRB, next to a call. Each
/// is an uplink flow in the summary, the FTP and web uploads have upload
/// times (`page_ms`), and the ledger balances. A 1-MB file cannot go up
/// faster than the cell's uplink (25 PRB at MCS 10 carry about 5 Mbit/s,
/// docs/simulator.md: 1.6 s), and alone on it (one file every 10 s on
/// average) it takes not much longer.
#[test]
fn ftp_web_and_video_uploads_run_with_upload_times_and_a_balanced_ledger() {
    let dir = std::env::temp_dir().join(format!("tcran-uplink-kinds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let summary = run_text(
        &dir,
        "uploads.toml",
        r#"
duration = "30s"
warmup = "1s"
seed = 3
[cell]
bandwidth_mhz = 5
[[ues]]
rnti = 1
channel = { kind = "mcs", mcs = 10 }
[[ues.uplink_drbs]]
rlc = { mode = "um", buffer_limit = "5MB" }
[[ues]]
rnti = 2
channel = { kind = "mcs", mcs = 10 }
[[ues.uplink_drbs]]
rlc = { mode = "um", buffer_limit = "5MB" }
[[ues]]
rnti = 3
channel = { kind = "mcs", mcs = 10 }
[[ues.uplink_drbs]]
rlc = { mode = "um", buffer_limit = "5MB" }
[[flows]]
name = "photos"
ue = 1
direction = "uplink"
kind = "ftp"
file_size = "1MB"
per_second = 0.1
[[flows]]
name = "form"
ue = 2
direction = "uplink"
kind = "web"
reading_mean = "1s"
[[flows]]
name = "live"
ue = 3
direction = "uplink"
kind = "video"
fps = 30
frame_size = "1kB"
iframe_size = "5kB"
iframe_period = "1s"
"#,
    );
    let v = &summary["variants"][0];
    balanced(v);
    for name in ["photos", "form", "live"] {
        let f = flow(v, name);
        assert_eq!(f["direction"], "uplink", "{name}");
        assert!(f["throughput_mbps"].as_f64().unwrap() > 0.0, "{name}: {f}");
    }
    let files = &flow(v, "photos")["page_ms"];
    let pages = &flow(v, "form")["page_ms"];
    assert!(files["count"].as_u64().unwrap() >= 1, "{files}");
    assert!(pages["count"].as_u64().unwrap() >= 3, "{pages}");
    let p50 = files["p50"].as_f64().unwrap();
    assert!((1600.0..6000.0).contains(&p50), "1-MB upload time {p50} ms");
    assert!(flow(v, "live").get("page_ms").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
