//! `tcran run` and `tcran demo`: run a scenario's variants and show what
//! each did, as a table or as the summary JSON (docs/simulator.md).

use crate::error::CliError;
use crate::load::read_config;
use crate::set::Override;
use std::fmt::Write as _;
use std::path::Path;
use tcran_sim::{ScenarioOutput, ScenarioSummary, SimConfig};

/// The scenario `tcran demo` runs, shipped inside the binary.
pub const DEMO: &str = include_str!("../../../scenarios/demo.toml");

/// What running a scenario produced, with the configuration of every
/// variant (for the report's pipeline drawings).
#[derive(Debug)]
pub struct Outcome {
    pub output: ScenarioOutput,
    pub runs: Vec<(String, SimConfig)>,
}

/// How to run: seed override, `--set` overrides, progress bar.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    pub seed: Option<u64>,
    pub sets: &'a [Override],
    /// Draw a progress bar on stderr (the caller checks it is a terminal).
    pub progress: bool,
}

/// Runs a scenario given as text; `base` resolves relative trace paths.
pub fn run_text(
    name: &str,
    file: &str,
    text: &str,
    base: &Path,
    opts: Options,
) -> Result<Outcome, CliError> {
    let src = crate::load::Source {
        name: file.to_string(),
        text: text.to_string(),
        syntax: crate::load::Syntax::Toml,
    };
    run_source(name, &src, base, opts, None)
}

/// The scenario's name: its file name without the extension.
pub fn scenario_name(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().to_string())
}

/// Runs the scenario in `path` (TOML or JSON).
pub fn run_file(path: &Path, opts: Options) -> Result<Outcome, CliError> {
    let src = read_config(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    run_source(&scenario_name(path), &src, base, opts, None)
}

/// Reads the scenario in `path` and builds every variant (channels and
/// traces loaded, every stage checked) without running it: what `run`
/// would refuse, this refuses, and it writes nothing.
pub fn check_file(path: &Path, opts: Options) -> Result<(), CliError> {
    let src = read_config(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut cfg: SimConfig = src.parse_checked(opts.sets, |c| {
        tcran_sim::build_scenario(c, base).map(drop)
    })?;
    if let Some(s) = opts.seed {
        cfg.seed = s;
    }
    tcran_sim::build_scenario(&cfg, base)
        .map(drop)
        .map_err(|error| CliError::Config {
            file: src.name.clone(),
            error,
        })
}

/// Runs a scenario read into `src` (a file, or text from another front
/// end such as the Python package); `base` resolves relative trace paths.
/// With `only`, just the variants named there run, in the scenario's
/// order; a name the scenario does not have is an error listing those it
/// has.
#[allow(clippy::disallowed_types, clippy::disallowed_methods)] // wall_s is a wall-clock measurement
pub fn run_source(
    name: &str,
    src: &crate::load::Source,
    base: &Path,
    opts: Options,
    only: Option<&[String]>,
) -> Result<Outcome, CliError> {
    let mut cfg: SimConfig = src.parse_checked(opts.sets, |c| {
        tcran_sim::build_scenario(c, base).map(drop)
    })?;
    if let Some(s) = opts.seed {
        cfg.seed = s;
    }
    if let Some(only) = only {
        select_variants(&mut cfg, only).map_err(|(name, known)| CliError::UnknownVariant {
            file: src.name.clone(),
            name,
            known,
        })?;
    }
    let runs = cfg.runs();
    let bar = opts
        .progress
        .then(|| crate::progress::Bar::new(name, &runs, cfg.duration.as_secs_f64()));
    let started = std::time::Instant::now();
    let result = tcran_sim::run_scenario_with_progress(name, &cfg, base, &mut |p| {
        if let Some(b) = &bar {
            b.update(p);
        }
    });
    if let Some(b) = bar {
        b.finish();
    }
    let mut output = result.map_err(|error| CliError::Config {
        file: src.name.clone(),
        error,
    })?;
    output.summary.wall_s = started.elapsed().as_secs_f64();
    Ok(Outcome { output, runs })
}

/// Keeps only the variants named in `only`. A scenario without variants
/// has one run named `default`. Errors with the unknown name and the
/// names there are.
fn select_variants(cfg: &mut SimConfig, only: &[String]) -> Result<(), (String, String)> {
    let known: Vec<String> = cfg.runs().into_iter().map(|(n, _)| n).collect();
    if let Some(bad) = only.iter().find(|n| !known.contains(n)) {
        return Err((bad.clone(), known.join(", ")));
    }
    if !cfg.variants.is_empty() {
        cfg.variants.retain(|v| only.contains(&v.name));
    }
    Ok(())
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

/// Writes everything a run produced into `dir` (created if needed):
/// `summary.json`, the CSV time series per variant and `report.html`.
pub fn write_outputs(dir: &Path, o: &Outcome) -> Result<(), CliError> {
    let io = |path: &Path, e: &dyn std::fmt::Display| CliError::Write {
        file: path.display().to_string(),
        reason: tcran_core::text_file::without_os_code(&e.to_string()).to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, &e))?;
    let s = &o.output.summary;
    let json = serde_json::to_string_pretty(s).expect("summary serializes");
    let path = dir.join("summary.json");
    std::fs::write(&path, json + "\n").map_err(|e| io(&path, &e))?;
    let names = crate::series_csv::dir_names(s.variants.iter().map(|v| v.name.as_str()));
    for (name, series) in names.iter().zip(&o.output.series) {
        let d = dir.join(name);
        crate::series_csv::write(&d, series).map_err(|e| io(&d, &e))?;
    }
    let html = crate::report::render(&crate::report::Report {
        summary: s,
        series: &o.output.series,
        runs: &o.runs,
        csv_dirs: Some(&names),
    });
    let path = dir.join("report.html");
    std::fs::write(&path, html).map_err(|e| io(&path, &e))
}
