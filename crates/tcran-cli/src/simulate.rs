//! `tcran run` and `tcran demo`: run a scenario's variants and show what
//! each did, as a table or as the summary JSON (docs/simulator.md).

use crate::error::CliError;
use crate::load::read_config;
use std::fmt::Write as _;
use std::path::Path;
use tcran_sim::{ScenarioSummary, SimConfig};

/// The scenario `tcran demo` runs, shipped inside the binary.
pub const DEMO: &str = include_str!("../../../scenarios/demo.toml");

/// Runs a scenario given as text; `base` resolves relative trace paths.
pub fn run_text(
    name: &str,
    file: &str,
    text: &str,
    base: &Path,
    seed: Option<u64>,
) -> Result<ScenarioSummary, CliError> {
    let src = crate::load::Source {
        name: file.to_string(),
        text: text.to_string(),
        syntax: crate::load::Syntax::Toml,
    };
    run_source(name, &src, base, seed)
}

/// Runs the scenario in `path` (TOML or JSON).
pub fn run_file(path: &Path, seed: Option<u64>) -> Result<ScenarioSummary, CliError> {
    let src = read_config(path)?;
    let name = path
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().to_string());
    let base = path.parent().unwrap_or(Path::new("."));
    run_source(&name, &src, base, seed)
}

#[allow(clippy::disallowed_types, clippy::disallowed_methods)] // wall_s is a wall-clock measurement
fn run_source(
    name: &str,
    src: &crate::load::Source,
    base: &Path,
    seed: Option<u64>,
) -> Result<ScenarioSummary, CliError> {
    let mut cfg: SimConfig = src.parse()?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let started = std::time::Instant::now();
    let mut out = tcran_sim::run_scenario(name, &cfg, base).map_err(|error| CliError::Config {
        file: src.name.clone(),
        error,
    })?;
    out.summary.wall_s = started.elapsed().as_secs_f64();
    Ok(out.summary)
}

/// One row per flow and variant, then the cell and drop figures.
pub fn to_text(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} variant(s), {:.0} s simulated in {:.2} s (seed {})\n",
        s.scenario,
        s.variants.len(),
        s.sim_s,
        s.wall_s,
        s.seed
    );
    let _ = writeln!(
        out,
        "{:<20} {:<8} {:>9} {:>10} {:>10} {:>10} {:>6} {:>7} {:>9}",
        "variant", "flow", "Mbit/s", "mean ms", "p95 ms", "p99 ms", "lost", "PRB use", "RLC kB"
    );
    for v in &s.variants {
        for (i, f) in v.run.flows.iter().enumerate() {
            let d = f.rtt_ms.unwrap_or(f.delay_ms);
            let (prb, rlc) = if i == 0 {
                (
                    format!("{:.1}%", 100.0 * v.run.prb_utilization),
                    format!("{:.1}", v.run.rlc.mean_bytes / 1e3),
                )
            } else {
                (String::new(), String::new())
            };
            let name = if i == 0 { v.name.as_str() } else { "" };
            let flow = if f.rtt_ms.is_some() {
                format!("{} rtt", f.name)
            } else {
                f.name.clone()
            };
            let _ = writeln!(
                out,
                "{:<20} {:<8} {:>9.2} {:>10.1} {:>10.1} {:>10.1} {:>6} {:>7} {:>9}",
                name, flow, f.throughput_mbps, d.mean, d.p95, d.p99, f.lost_packets, prb, rlc
            );
        }
        let drops: Vec<String> = v
            .run
            .drops
            .iter()
            .flat_map(|(layer, reasons)| {
                reasons.iter().map(move |(r, n)| format!("{layer}/{r} {n}"))
            })
            .collect();
        if !drops.is_empty() {
            let _ = writeln!(out, "{:<20} drops: {}", "", drops.join(", "));
        }
    }
    out
}

/// Writes `summary.json` into `dir` (created if needed).
pub fn write_summary(dir: &Path, s: &ScenarioSummary) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::Read {
        file: dir.display().to_string(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let json = serde_json::to_string_pretty(s).expect("summary serializes");
    std::fs::write(dir.join("summary.json"), json + "\n").map_err(io)
}
