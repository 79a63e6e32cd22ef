//! `tcran dashboard --replay OUT_DIR`: a finished run's outputs (`tcran
//! run`, `demo`, `emulate`: `summary.json` and each variant's CSV series,
//! docs/report.md) read once into what the page's charts draw.
//!
//! The RLC occupancy and PRB use of `slots.csv` (one row per slot) are
//! averaged into 100 ms bins, the dashboard's live period, so a replay
//! and a live run look alike; the flows' goodput and delay, the drops and
//! marks and the reconfigurations are passed as the run wrote them. A
//! file that is missing or does not parse is an error naming the file and
//! the line; nothing is left out silently.

use crate::error::CliError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The replayed run.
#[derive(Debug, Serialize)]
pub struct Replay {
    pub scenario: String,
    pub variants: Vec<Variant>,
}

/// One variant's series.
#[derive(Debug, Serialize)]
pub struct Variant {
    pub name: String,
    /// Bin starts, s (100 ms bins).
    pub t_s: Vec<f64>,
    /// Mean RLC occupancy in the bin, bytes.
    pub rlc_bytes: Vec<f64>,
    /// PRBs used / available in the bin, %.
    pub prb_use: Vec<Option<f64>>,
    pub flows: Vec<Flow>,
    pub events: Vec<Event>,
    pub reconfigurations: Vec<Reconfiguration>,
}

/// One flow's series (`flows.csv`).
#[derive(Debug, Default, Serialize)]
pub struct Flow {
    pub name: String,
    pub kind: String,
    pub t_s: Vec<f64>,
    pub goodput_mbps: Vec<Option<f64>>,
    pub delay_ms: Vec<Option<f64>>,
}

/// `events.csv`: drops and marks per bin, layer and reason.
#[derive(Debug, Serialize, Deserialize)]
pub struct Event {
    pub t_s: f64,
    pub what: String,
    pub layer: String,
    pub reason: String,
    pub count: u64,
}

/// `reconfigurations.csv`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reconfiguration {
    pub t_s: f64,
    pub by: String,
    pub rnti: u16,
    pub drb: u8,
    pub what: String,
}

#[derive(Deserialize)]
struct SlotRow {
    t_s: f64,
    rlc_bytes: u64,
    prbs_used: u32,
    prbs_available: u32,
}

#[derive(Deserialize)]
struct FlowRow {
    flow: String,
    kind: String,
    t_s: f64,
    goodput_mbps: Option<f64>,
    delay_ms: Option<f64>,
}

#[derive(Deserialize)]
struct Summary {
    scenario: String,
    variants: Vec<SummaryVariant>,
}

#[derive(Deserialize)]
struct SummaryVariant {
    name: String,
}

/// Bins of 100 ms, the dashboard's live period.
const BINS_PER_S: f64 = 10.0;

fn rows<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, CliError> {
    let name = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|e| CliError::Read {
        file: name.clone(),
        reason: e.to_string(),
    })?;
    let mut out = Vec::new();
    for row in r.deserialize() {
        out.push(row.map_err(|e| CliError::Read {
            file: name.clone(),
            reason: match e.position() {
                Some(p) => format!("line {}: {e}", p.line()),
                None => e.to_string(),
            },
        })?);
    }
    Ok(out)
}

impl Replay {
    /// Reads `dir`, an output directory of `tcran run`, `demo` or
    /// `emulate`.
    pub fn read(dir: &Path) -> Result<Replay, CliError> {
        let summary_path = dir.join("summary.json");
        if !summary_path.is_file() {
            return Err(CliError::Usage(format!(
                "--replay {}: not an output directory of tcran run, demo or emulate (no summary.json)",
                dir.display()
            )));
        }
        let (name, text) =
            crate::load::read_text(&summary_path, "summary", crate::load::MAX_CONFIG_FILE_BYTES)?;
        let summary: Summary = serde_json::from_str(&text).map_err(|e| CliError::Read {
            file: name,
            reason: format!("line {}: {e}", e.line()),
        })?;
        let dirs = crate::series_csv::dir_names(summary.variants.iter().map(|v| v.name.as_str()));
        let variants = summary
            .variants
            .iter()
            .zip(dirs)
            .map(|(v, d)| read_variant(&v.name, &dir.join(d)))
            .collect::<Result<_, _>>()?;
        Ok(Replay {
            scenario: summary.scenario,
            variants,
        })
    }
}

fn read_variant(name: &str, dir: &Path) -> Result<Variant, CliError> {
    let slots: Vec<SlotRow> = rows(&dir.join("slots.csv"))?;
    // 100 ms bins: mean occupancy, PRBs used over available.
    let mut t_s = Vec::new();
    let mut rlc_bytes = Vec::new();
    let mut prb_use = Vec::new();
    let mut bin: Option<(i64, f64, u64, u64, u64)> = None; // (index, sum rlc, n, used, available)
    let mut close = |b: (i64, f64, u64, u64, u64)| {
        // A division, so bin 3 starts at 0.3 s, not 0.30000000000000004.
        t_s.push(b.0 as f64 / BINS_PER_S);
        rlc_bytes.push(b.1 / b.2 as f64);
        prb_use.push((b.4 > 0).then(|| 100.0 * b.3 as f64 / b.4 as f64));
    };
    for s in &slots {
        let k = (s.t_s * BINS_PER_S).floor() as i64;
        match &mut bin {
            Some(b) if b.0 == k => {
                b.1 += s.rlc_bytes as f64;
                b.2 += 1;
                b.3 += u64::from(s.prbs_used);
                b.4 += u64::from(s.prbs_available);
            }
            _ => {
                if let Some(b) = bin.take() {
                    close(b);
                }
                bin = Some((
                    k,
                    s.rlc_bytes as f64,
                    1,
                    u64::from(s.prbs_used),
                    u64::from(s.prbs_available),
                ));
            }
        }
    }
    if let Some(b) = bin {
        close(b);
    }
    let mut flows: Vec<Flow> = Vec::new();
    for r in rows::<FlowRow>(&dir.join("flows.csv"))? {
        let f = match flows.iter_mut().position(|f| f.name == r.flow) {
            Some(i) => &mut flows[i],
            None => {
                flows.push(Flow {
                    name: r.flow.clone(),
                    kind: r.kind.clone(),
                    ..Flow::default()
                });
                flows.last_mut().expect("just pushed")
            }
        };
        f.t_s.push(r.t_s);
        f.goodput_mbps.push(r.goodput_mbps);
        f.delay_ms.push(r.delay_ms);
    }
    Ok(Variant {
        name: name.to_string(),
        t_s,
        rlc_bytes,
        prb_use,
        flows,
        events: rows(&dir.join("events.csv"))?,
        reconfigurations: rows(&dir.join("reconfigurations.csv"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_averaged_into_100ms_bins_and_files_are_named_in_errors() {
        let dir = std::env::temp_dir().join(format!("tcran-replay-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let v = dir.join("a_b");
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(
            dir.join("summary.json"),
            r#"{"scenario": "s", "variants": [{"name": "a/b"}]}"#,
        )
        .unwrap();
        std::fs::write(
            v.join("slots.csv"),
            "t_s,rlc_bytes,capacity_bytes,prbs_used,prbs_available\n\
             0.0,100,0,10,25\n0.05,300,0,15,25\n0.1,1000,0,0,0\n0.25,0,0,25,25\n",
        )
        .unwrap();
        std::fs::write(
            v.join("flows.csv"),
            "flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms\nvoip,voip,0.0,0.08,12.5,,\nvoip,voip,0.1,0.0,,,\n",
        )
        .unwrap();
        std::fs::write(
            v.join("events.csv"),
            "t_s,what,layer,reason,count\n0.1,drop,tc,codel,3\n",
        )
        .unwrap();
        std::fs::write(
            v.join("reconfigurations.csv"),
            "t_s,by,rnti,drb,what\n1.0,e2,1,1,deploy\n",
        )
        .unwrap();
        let r = Replay::read(&dir).unwrap();
        let a = &r.variants[0];
        assert_eq!(a.name, "a/b");
        assert_eq!(a.t_s, [0.0, 0.1, 0.2]);
        assert_eq!(a.rlc_bytes, [200.0, 1000.0, 0.0]);
        assert_eq!(a.prb_use, [Some(50.0), None, Some(100.0)]);
        assert_eq!(a.flows[0].delay_ms, [Some(12.5), None]);
        assert_eq!(a.events[0].count, 3);
        assert_eq!(a.reconfigurations[0].by, "e2");

        std::fs::write(
            v.join("events.csv"),
            "t_s,what,layer,reason,count\nx,drop,tc,codel,3\n",
        )
        .unwrap();
        let e = Replay::read(&dir).unwrap_err().to_string();
        assert!(e.contains("events.csv: cannot read: line 2"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        let e = Replay::read(&dir).unwrap_err().to_string();
        assert!(e.contains("no summary.json"), "{e}");
    }
}
