//! The time series of every variant as CSV files, one directory per
//! variant (`DIR/<variant>/slots.csv`, `flows.csv`, `delay_cdf.csv`,
//! `layer_delay_cdf.csv`, `events.csv`, `reconfigurations.csv`; columns in
//! docs/report.md). A bin
//! without a sample is an empty field, never a made-up zero.

use serde::Serialize;
use std::path::Path;
use tcran_sim::RunSeries;

/// File-system-safe, distinct directory names for the variants: letters,
/// digits, `-`, `_` and `.` are kept, anything else becomes `_`; a name
/// that is empty, starts with a dot or repeats an earlier one gets a
/// suffix.
pub fn dir_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let mut s: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if s.is_empty() || s.starts_with('.') {
            s.insert_str(0, "variant");
        }
        let base = s.clone();
        let mut k = 2;
        while out.iter().any(|o| o.eq_ignore_ascii_case(&s)) {
            s = format!("{base}-{k}");
            k += 1;
        }
        out.push(s);
    }
    out
}

#[derive(Serialize)]
struct SlotRow {
    t_s: f64,
    rlc_bytes: u64,
    capacity_bytes: u64,
    prbs_used: u32,
    prbs_available: u32,
}

#[derive(Serialize)]
struct FlowRow<'a> {
    flow: &'a str,
    kind: &'a str,
    t_s: f64,
    goodput_mbps: Option<f64>,
    delay_ms: Option<f64>,
    cwnd_bytes: Option<f64>,
    srtt_ms: Option<f64>,
}

#[derive(Serialize)]
struct CdfRow<'a> {
    flow: &'a str,
    delay_ms: f64,
    fraction: f64,
}

#[derive(Serialize)]
struct LayerCdfRow<'a> {
    flow: &'a str,
    layer: &'a str,
    delay_ms: f64,
    fraction: f64,
}

/// The CSV files of a variant, by stem (`DIR/<variant>/<stem>.csv`), in
/// the order they are written.
pub const FILES: [&str; 6] = [
    "slots",
    "flows",
    "delay_cdf",
    "layer_delay_cdf",
    "events",
    "reconfigurations",
];

/// Writes the CSV files of one variant into `dir` (created if needed).
pub fn write(dir: &Path, s: &RunSeries) -> Result<(), csv::Error> {
    std::fs::create_dir_all(dir)?;
    for stem in FILES {
        let file = std::fs::File::create(dir.join(format!("{stem}.csv")))?;
        write_one(stem, s, file)?;
    }
    Ok(())
}

/// Writes the series `stem` (one of [`FILES`]) of one variant as CSV into
/// `out`: exactly the bytes of `<stem>.csv` (other front ends, such as the
/// Python package, read the same text). An unknown stem is an
/// `InvalidInput` error naming the allowed ones.
pub fn write_one<W: std::io::Write>(stem: &str, s: &RunSeries, out: W) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    match stem {
        "slots" => {
            let sl = &s.slots;
            if sl.t_s.is_empty() {
                w.write_record([
                    "t_s",
                    "rlc_bytes",
                    "capacity_bytes",
                    "prbs_used",
                    "prbs_available",
                ])?;
            }
            for i in 0..sl.t_s.len() {
                w.serialize(SlotRow {
                    t_s: sl.t_s[i],
                    rlc_bytes: sl.rlc_bytes.get(i).copied().unwrap_or(0),
                    capacity_bytes: sl.capacity_bytes.get(i).copied().unwrap_or(0),
                    prbs_used: sl.prbs_used.get(i).copied().unwrap_or(0),
                    prbs_available: sl.prbs_available.get(i).copied().unwrap_or(0),
                })?;
            }
        }
        "flows" => {
            let mut any = false;
            for f in &s.flows {
                for (i, t) in f.t_s.iter().enumerate() {
                    any = true;
                    let at = |v: &Vec<Option<f64>>| v.get(i).copied().flatten();
                    w.serialize(FlowRow {
                        flow: &f.name,
                        kind: &f.kind,
                        t_s: *t,
                        goodput_mbps: f.goodput_mbps.get(i).copied(),
                        delay_ms: at(&f.delay_ms),
                        cwnd_bytes: at(&f.cwnd_bytes),
                        srtt_ms: at(&f.srtt_ms),
                    })?;
                }
            }
            if !any {
                w.write_record([
                    "flow",
                    "kind",
                    "t_s",
                    "goodput_mbps",
                    "delay_ms",
                    "cwnd_bytes",
                    "srtt_ms",
                ])?;
            }
        }
        "delay_cdf" => {
            let mut any = false;
            for f in &s.flows {
                for (d, p) in &f.delay_cdf {
                    any = true;
                    w.serialize(CdfRow {
                        flow: &f.name,
                        delay_ms: *d,
                        fraction: *p,
                    })?;
                }
            }
            if !any {
                w.write_record(["flow", "delay_ms", "fraction"])?;
            }
        }
        // A file of its own, so delay_cdf.csv keeps its columns.
        "layer_delay_cdf" => {
            let mut any = false;
            for f in &s.flows {
                for (layer, points) in f.layer_delay_cdf.iter() {
                    for (d, p) in points {
                        any = true;
                        w.serialize(LayerCdfRow {
                            flow: &f.name,
                            layer,
                            delay_ms: *d,
                            fraction: *p,
                        })?;
                    }
                }
            }
            if !any {
                w.write_record(["flow", "layer", "delay_ms", "fraction"])?;
            }
        }
        "events" => {
            if s.events.is_empty() {
                w.write_record(["t_s", "what", "layer", "reason", "count"])?;
            }
            for e in &s.events {
                w.serialize(e)?;
            }
        }
        "reconfigurations" => {
            if s.reconfigurations.is_empty() {
                w.write_record(["t_s", "by", "rnti", "drb", "what"])?;
            }
            for r in &s.reconfigurations {
                w.serialize(r)?;
            }
        }
        other => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("no series `{other}` (series: {})", FILES.join(", ")),
            )
            .into())
        }
    }
    w.flush()?;
    Ok(())
}

#[derive(Serialize)]
struct SeedRow<'a> {
    seed: u64,
    variant: &'a str,
    flow: &'a str,
    throughput_mbps: f64,
    delay_mean_ms: f64,
    delay_p50_ms: f64,
    delay_p95_ms: f64,
    delay_p99_ms: f64,
    rtt_mean_ms: Option<f64>,
    rtt_p95_ms: Option<f64>,
    lost_packets: u64,
    prb_utilization: f64,
    capacity_utilization: f64,
}

/// `seeds.csv`: one row per seed, variant and flow with the figures the
/// confidence intervals of the summary are computed from.
pub fn write_seeds(path: &Path, s: &tcran_sim::ScenarioSummary) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for r in &s.seed_runs {
        for v in &r.variants {
            for f in &v.run.flows {
                w.serialize(SeedRow {
                    seed: r.seed,
                    variant: &v.name,
                    flow: &f.name,
                    throughput_mbps: f.throughput_mbps,
                    delay_mean_ms: f.delay_ms.mean,
                    delay_p50_ms: f.delay_ms.p50,
                    delay_p95_ms: f.delay_ms.p95,
                    delay_p99_ms: f.delay_ms.p99,
                    rtt_mean_ms: f.rtt_ms.map(|d| d.mean),
                    rtt_p95_ms: f.rtt_ms.map(|d| d.p95),
                    lost_packets: f.lost_packets,
                    prb_utilization: v.run.prb_utilization,
                    capacity_utilization: v.run.capacity_utilization,
                })?;
            }
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_sim::series::{EventCount, FlowSeries, LayerCdfs, Reconfiguration};

    #[test]
    fn names_are_safe_and_distinct() {
        assert_eq!(
            dir_names(["fq_codel+5g-bdp", "a/b", "A/B", "", "..", "ok.1"]),
            [
                "fq_codel_5g-bdp",
                "a_b",
                "A_B-2",
                "variant",
                "variant..",
                "ok.1"
            ]
        );
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn files_have_headers_and_empty_fields_for_missing_samples() {
        let dir = std::env::temp_dir().join(format!("tcran-csv-test-{}", std::process::id()));
        let mut s = RunSeries {
            bin_s: 0.1,
            ..RunSeries::default()
        };
        s.slots.t_s = vec![0.0, 0.0005];
        s.slots.rlc_bytes = vec![0, 1500];
        s.slots.capacity_bytes = vec![3000, 0];
        s.slots.prbs_used = vec![0, 25];
        s.slots.prbs_available = vec![25, 0];
        s.flows.push(FlowSeries {
            name: "voip".into(),
            kind: "voip".into(),
            t_s: vec![0.0, 0.1],
            goodput_mbps: vec![0.08, 0.0],
            delay_ms: vec![Some(12.5), None],
            cwnd_bytes: vec![None, None],
            srtt_ms: vec![None, None],
            delay_cdf: vec![(12.5, 1.0)],
            rtt_cdf: Vec::new(),
            layer_delay_cdf: LayerCdfs {
                core: vec![(10.0, 1.0)],
                rlc: vec![(0.5, 0.5), (1.5, 1.0)],
                air: vec![(1.0, 1.0)],
                ..LayerCdfs::default()
            },
        });
        s.events.push(EventCount {
            t_s: 0.1,
            what: "drop",
            layer: "rlc",
            reason: "buffer_full",
            count: 3,
        });
        s.reconfigurations.push(Reconfiguration {
            t_s: 1.0,
            by: "event".into(),
            rnti: 1,
            drb: 1,
            what: "pacer bdp, offset 0.5".into(),
        });
        write(&dir, &s).unwrap();
        assert_eq!(
            read(&dir.join("slots.csv")),
            "t_s,rlc_bytes,capacity_bytes,prbs_used,prbs_available\n0.0,0,3000,0,25\n0.0005,1500,0,25,0\n"
        );
        assert_eq!(
            read(&dir.join("flows.csv")),
            "flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms\nvoip,voip,0.0,0.08,12.5,,\nvoip,voip,0.1,0.0,,,\n"
        );
        assert_eq!(
            read(&dir.join("delay_cdf.csv")),
            "flow,delay_ms,fraction\nvoip,12.5,1.0\n"
        );
        assert_eq!(
            read(&dir.join("layer_delay_cdf.csv")),
            "flow,layer,delay_ms,fraction\nvoip,core,10.0,1.0\nvoip,rlc,0.5,0.5\nvoip,rlc,1.5,1.0\nvoip,air,1.0,1.0\n"
        );
        assert_eq!(
            read(&dir.join("events.csv")),
            "t_s,what,layer,reason,count\n0.1,drop,rlc,buffer_full,3\n"
        );
        assert_eq!(
            read(&dir.join("reconfigurations.csv")),
            "t_s,by,rnti,drb,what\n1.0,event,1,1,\"pacer bdp, offset 0.5\"\n"
        );
        // An empty run still gets every file with its header.
        write(&dir, &RunSeries::default()).unwrap();
        assert_eq!(
            read(&dir.join("events.csv")),
            "t_s,what,layer,reason,count\n"
        );
        assert_eq!(
            read(&dir.join("flows.csv")),
            "flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms\n"
        );
        assert_eq!(
            read(&dir.join("layer_delay_cdf.csv")),
            "flow,layer,delay_ms,fraction\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
