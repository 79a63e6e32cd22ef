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
    /// Whose time the run's seconds are.
    pub clock: Clock,
    /// The time series are already in `Options::series_dir`.
    pub streamed: bool,
}

/// Whose time a run's seconds are: what the table and the report say ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The simulator's own time, as fast as the machine goes (`tcran run`).
    #[default]
    Simulated,
    /// The simulator paced to the wall clock (`tcran run --realtime`).
    Realtime,
    /// Real programs' traffic through the emulator (`tcran emulate`): real
    /// time, and no seed (nothing is drawn from one).
    Emulated,
}

/// What ran, for the first line of the table and the report's header:
/// the variants, how long on which clock, how long it took, the seed(s).
pub fn what_ran(s: &ScenarioSummary, clock: Clock) -> String {
    let n = s.variants.len();
    match clock {
        Clock::Simulated if !s.seeds.is_empty() => format!(
            "{} variant(s) x {} seeds ({}), {:.0} s simulated each, in {:.2} s",
            s.across_seeds.len().max(n),
            s.seeds.len(),
            seeds_label(&s.seeds),
            s.sim_s,
            s.wall_s
        ),
        Clock::Simulated => format!(
            "{n} variant(s), {:.0} s simulated in {:.2} s (seed {})",
            s.sim_s, s.wall_s, s.seed
        ),
        Clock::Realtime => format!(
            "{n} variant(s), {:.1} s simulated in real time (seed {})",
            s.sim_s, s.seed
        ),
        Clock::Emulated => format!(
            "{n} variant(s), emulated for {:.1} s of real time (real programs, no seed)",
            s.sim_s
        ),
    }
}

/// How to run: seed override, `--set` overrides, progress bar, runs at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// One seed instead of the scenario's `seed` or `seeds`.
    pub seed: Option<u64>,
    /// Several seeds instead of the scenario's `seed` or `seeds`.
    pub seeds: Option<&'a tcran_sim::seeds::Seeds>,
    pub sets: &'a [Override],
    /// Draw a progress bar on stderr (the caller checks it is a terminal).
    pub progress: bool,
    /// Runs (a variant under one seed) simulated at a time; `None`: one
    /// per core. The output does not depend on it.
    pub jobs: Option<std::num::NonZeroUsize>,
    /// Write each variant's time series ([`series_csv::STREAMED`]) into
    /// `DIR/<variant>/` as the run goes, keeping only a display copy in
    /// memory: the run's memory does not grow with its duration
    /// (docs/performance.md#memory). The files are those
    /// [`write_outputs`] writes otherwise.
    ///
    /// [`series_csv::STREAMED`]: crate::series_csv::STREAMED
    pub series_dir: Option<&'a Path>,
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
    let mut cfg: SimConfig =
        src.parse_checked(opts.sets, |c| tcran_sim::build_scenario(c, base).map(drop))?;
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
    let mut cfg: SimConfig =
        src.parse_checked(opts.sets, |c| tcran_sim::build_scenario(c, base).map(drop))?;
    if let Some(s) = opts.seed {
        cfg.seed = s;
        cfg.seeds = None;
    }
    if let Some(s) = opts.seeds {
        cfg.seeds = Some(s.clone());
    }
    if let Some(only) = only {
        select_variants(&mut cfg, only).map_err(|(name, known)| CliError::UnknownVariant {
            file: src.name.clone(),
            name,
            known,
        })?;
    }
    if let Some(w) = long_duration_warning(&cfg) {
        eprintln!("warning: {w}");
    }
    let runs = cfg.runs();
    let seeds = cfg.seed_list().len();
    let bar = opts
        .progress
        .then(|| crate::progress::Bar::new(name, &runs, seeds, cfg.duration.as_secs_f64()));
    let jobs = opts.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().unwrap_or(std::num::NonZeroUsize::MIN)
    });
    let started = std::time::Instant::now();
    let dirs = crate::series_csv::dir_names(runs.iter().map(|(n, _)| n.as_str()));
    let sink_error = crate::series_csv::SinkError::default();
    let sinks = |i: usize| -> Option<Box<dyn tcran_sim::series::SeriesSink>> {
        let dir = opts.series_dir?.join(dirs.get(i)?);
        // Written on a thread of its own, beside the simulation.
        Some(tcran_sim::series::BackgroundSink::spawn(Box::new(
            crate::series_csv::CsvSink::new(&dir, sink_error.clone()),
        )))
    };
    let result = tcran_sim::run_scenario_streaming(
        name,
        &cfg,
        base,
        jobs,
        &|p| {
            if let Some(b) = &bar {
                b.update(p);
            }
        },
        &sinks,
    );
    if let Some(b) = bar {
        b.finish();
    }
    let mut output = result.map_err(|error| CliError::Config {
        file: src.name.clone(),
        error,
    })?;
    let failed = sink_error.lock().ok().and_then(|mut e| e.take());
    if let Some((path, e)) = failed {
        return Err(csv_error(&path, e));
    }
    output.summary.wall_s = started.elapsed().as_secs_f64();
    output.summary.made_with = Some(provenance(src, opts.sets, &cfg));
    Ok(Outcome {
        output,
        runs,
        clock: Clock::Simulated,
        streamed: opts.series_dir.is_some(),
    })
}

/// Simulated time beyond which `validate` and `run` warn: a simulated
/// day already takes minutes of CPU per variant (docs/performance.md).
pub const LONG_DURATION: tcran_core::Duration = tcran_core::Duration::from_secs(86_400);

/// Why a scenario's `duration` deserves a second look, if it does: more
/// than a day of simulated time is more often a wrong unit than a plan.
pub fn long_duration_warning(cfg: &SimConfig) -> Option<String> {
    (cfg.duration > LONG_DURATION).then(|| {
        format!(
            "duration = {} is {:.0} days of simulated time; a simulated day takes minutes of CPU per variant and seed (check the unit: \"60s\", \"10min\")",
            cfg.duration,
            cfg.duration.as_secs_f64() / 86_400.0
        )
    })
}

/// What the summary records of how its runs were made.
pub fn provenance(
    src: &crate::load::Source,
    sets: &[crate::set::Override],
    cfg: &SimConfig,
) -> tcran_sim::report::Provenance {
    tcran_sim::report::Provenance {
        tcran: env!("CARGO_PKG_VERSION").to_string(),
        file: src.name.clone(),
        overrides: sets.iter().map(|s| s.arg.clone()).collect(),
        scenario: serde_json::to_value(cfg).expect("a scenario serializes"),
    }
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

/// One row per flow and variant, then the cell and drop figures; with
/// several seeds, each figure as its mean ± the half-width of its 95 %
/// confidence interval across the seeds.
pub fn to_text(s: &ScenarioSummary, clock: Clock) -> String {
    let mut out = format!("{}: {}\n\n", s.scenario, what_ran(s, clock));
    if !s.across_seeds.is_empty() {
        out.push_str(&seeds_text(s));
        return out;
    }
    let (vw, fw) = name_widths(s);
    let _ = writeln!(
        out,
        "{:<vw$} {:<fw$} {:>9} {:>10} {:>10} {:>10} {:>6} {:>7} {:>9}",
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
            let _ = writeln!(
                out,
                "{:<vw$} {:<fw$} {:>9.2} {:>10.1} {:>10.1} {:>10.1} {:>6} {:>7} {:>9}",
                name,
                flow_label(f.name.as_str(), f.rtt_ms.is_some()),
                f.throughput_mbps,
                d.mean,
                d.p95,
                d.p99,
                f.lost_packets,
                prb,
                rlc
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
            let _ = writeln!(out, "{:<vw$} drops: {}", "", drops.join(", "));
        }
    }
    // Rows without the cell columns end in padding: drop it.
    out.lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

/// A flow's name in the table: a ping's figures are its round-trip time.
fn flow_label(name: &str, rtt: bool) -> String {
    if rtt {
        format!("{name} rtt")
    } else {
        name.to_string()
    }
}

/// The widths of the table's variant and flow columns: 20 and 8
/// characters, or the longest name (an emulation's flows are named by
/// their 5-tuple), so the figures' columns stay in line.
fn name_widths(s: &ScenarioSummary) -> (usize, usize) {
    let variant = s.variants.iter().map(|v| v.name.chars().count());
    let flow = s
        .variants
        .iter()
        .flat_map(|v| &v.run.flows)
        .map(|f| flow_label(&f.name, f.rtt_ms.is_some()).chars().count());
    (variant.fold(20, usize::max), flow.fold(8, usize::max))
}

fn seeds_text(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mean ± half-width of the 95 % confidence interval across seeds (Student t, {} degrees of freedom)\n",
        s.seeds.len().saturating_sub(1)
    );
    if s.variants.iter().all(|v| v.run.seed_draws.is_empty()) {
        let _ = writeln!(
            out,
            "nothing in this scenario is random (no trace starts at a random point, no flow has a start jitter, no HARQ errors, no random arrivals, no BBR): every seed gives the same run, so the intervals have zero width\n"
        );
    }
    let (vw, fw) = name_widths(s);
    let _ = writeln!(
        out,
        "{:<vw$} {:<fw$} {:>15} {:>17} {:>17} {:>13} {:>13}",
        "variant", "flow", "Mbit/s", "mean ms", "p95 ms", "PRB use %", "capacity use %"
    );
    let pm = |i: &tcran_sim::seeds::Interval, scale: f64, prec: usize| {
        format!("{:.prec$} ±{:.prec$}", i.mean * scale, i.half_width * scale)
    };
    for v in &s.across_seeds {
        for (k, f) in v.flows.iter().enumerate() {
            let (mean, p95, flow) = match (&f.rtt_mean_ms, &f.rtt_p95_ms) {
                (Some(m), Some(p)) => (m, p, flow_label(&f.name, true)),
                _ => (
                    &f.delay_mean_ms,
                    &f.delay_p95_ms,
                    flow_label(&f.name, false),
                ),
            };
            let (name, prb, cap) = if k == 0 {
                (
                    v.name.as_str(),
                    pm(&v.prb_utilization, 100.0, 1),
                    pm(&v.capacity_utilization, 100.0, 1),
                )
            } else {
                ("", String::new(), String::new())
            };
            let _ = writeln!(
                out,
                "{:<vw$} {:<fw$} {:>15} {:>17} {:>17} {:>13} {:>13}",
                name,
                flow,
                pm(&f.throughput_mbps, 1.0, 2),
                pm(mean, 1.0, 1),
                pm(p95, 1.0, 1),
                prb,
                cap
            );
        }
    }
    out
}

/// `1..10` for consecutive seeds, else the list.
pub fn seeds_label(seeds: &[u64]) -> String {
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if seeds.windows(2).all(|w| w[1] == w[0] + 1) => format!("{a}..{b}"),
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// Writes everything a run produced into `dir` (created if needed):
/// `summary.json`, the CSV time series per variant (of the first seed),
/// with several seeds `seeds.csv` (every seed's figures), `report.html`
/// and each of its plots alone in `figures/` (SVG and PDF). The series are
/// kept; [`write_outputs_releasing`] frees them as it goes.
pub fn write_outputs(dir: &Path, o: &Outcome) -> Result<(), CliError> {
    let mut w = Writing::start(dir, o)?;
    for i in 0..variants(o) {
        w.variant(o, i)?;
    }
    w.end()
}

/// [`write_outputs`], leaving of each variant's series only its
/// distributions ([`RunSeries::cdfs_only`]) once its CSV files, plots and
/// section of the page are written: the report then never holds more than
/// one variant's time series beside what the run already had (the peak
/// memory of a long run, docs/performance.md#memory).
///
/// [`RunSeries::cdfs_only`]: tcran_sim::series::RunSeries::cdfs_only
pub fn write_outputs_releasing(dir: &Path, o: &mut Outcome) -> Result<(), CliError> {
    let mut w = Writing::start(dir, o)?;
    for i in 0..variants(o) {
        w.variant(o, i)?;
        if let Some(s) = o.output.series.get_mut(i) {
            *s = s.cdfs_only();
        }
    }
    w.end()
}

/// Variants in the summary or with series (the same unless a run was cut
/// short).
fn variants(o: &Outcome) -> usize {
    o.output.summary.variants.len().max(o.output.series.len())
}

/// The outputs being written: the page goes to its file part by part
/// (the head and overview, then a variant at a time), each plot's own files
/// as the plot is drawn.
struct Writing {
    dir: std::path::PathBuf,
    names: Vec<String>,
    figures: crate::report::FigureFiles,
    page_path: std::path::PathBuf,
    page: std::io::BufWriter<std::fs::File>,
}

impl Writing {
    /// Writes `summary.json`, `seeds.csv` and the page up to the variants.
    fn start(dir: &Path, o: &Outcome) -> Result<Writing, CliError> {
        let io = |path: &Path, e: &std::io::Error| CliError::write(path, e);
        std::fs::create_dir_all(dir).map_err(|e| io(dir, &e))?;
        let s = &o.output.summary;
        let json = serde_json::to_string_pretty(s).expect("summary serializes");
        let path = dir.join("summary.json");
        std::fs::write(&path, json + "\n").map_err(|e| io(&path, &e))?;
        if !s.seed_runs.is_empty() {
            let path = dir.join("seeds.csv");
            crate::series_csv::write_seeds(&path, s).map_err(|e| csv_error(&path, e))?;
        }
        if s.variants.iter().any(|v| !v.run.handovers.is_empty()) {
            let path = dir.join("handovers.csv");
            crate::series_csv::write_handovers(&path, s).map_err(|e| csv_error(&path, e))?;
        }
        let names = crate::series_csv::dir_names(s.variants.iter().map(|v| v.name.as_str()));
        let figures = crate::report::FigureFiles::new(&dir.join(crate::report::FIGURE_DIR))?;
        let page_path = dir.join("report.html");
        let file = std::fs::File::create(&page_path).map_err(|e| io(&page_path, &e))?;
        let mut w = Writing {
            dir: dir.to_path_buf(),
            names,
            figures,
            page_path,
            page: std::io::BufWriter::new(file),
        };
        let head = crate::report::page_start(&w.report(o), &mut |id, c| w.figures.write(id, c))?;
        w.put(&head)?;
        Ok(w)
    }

    fn report<'a>(&'a self, o: &'a Outcome) -> crate::report::Report<'a> {
        crate::report::Report {
            summary: &o.output.summary,
            series: &o.output.series,
            seed_series: &o.output.seed_series,
            runs: &o.runs,
            csv_dirs: Some(&self.names),
            figure_dir: Some(crate::report::FIGURE_DIR),
            clock: o.clock,
        }
    }

    /// Variant `i`'s CSV files, plots and section of the page.
    fn variant(&mut self, o: &Outcome, i: usize) -> Result<(), CliError> {
        if let (Some(name), Some(series)) = (self.names.get(i), o.output.series.get(i)) {
            let d = self.dir.join(name);
            let streamed: &[&str] = if o.streamed {
                &crate::series_csv::STREAMED
            } else {
                &[]
            };
            crate::series_csv::write_except(&d, series, streamed).map_err(|e| csv_error(&d, e))?;
        }
        let section = crate::report::variant_section(&self.report(o), i, &mut |id, c| {
            self.figures.write(id, c)
        })?;
        self.put(&section)
    }

    fn put(&mut self, text: &str) -> Result<(), CliError> {
        use std::io::Write as _;
        self.page
            .write_all(text.as_bytes())
            .map_err(|e| CliError::write(&self.page_path, &e))
    }

    /// The end of the page.
    fn end(mut self) -> Result<(), CliError> {
        use std::io::Write as _;
        self.put(&crate::report::page_end())?;
        self.page
            .flush()
            .map_err(|e| CliError::write(&self.page_path, &e))
    }
}

/// A CSV writer's error as the one-line write error of `path`.
fn csv_error(path: &Path, e: csv::Error) -> CliError {
    match e.kind() {
        csv::ErrorKind::Io(e) => CliError::write(path, e),
        _ => CliError::Write {
            file: path.display().to_string(),
            reason: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end of column `head` in the header line, in characters.
    fn column_end(header: &str, head: &str) -> usize {
        header[..header.find(head).unwrap()].chars().count() + head.chars().count()
    }

    /// An emulation names its flows by their 5-tuple: the figures stay
    /// under their headings whatever the names' length.
    #[test]
    fn long_flow_names_keep_the_columns_in_line() {
        let cfg: SimConfig = toml::from_str(
            r#"
            duration = "300ms"
            seeds = [1, 2]
            [[ues]]
            rnti = 1
            channel = { kind = "mcs", mcs = 10 }
            [[flows]]
            name = "ping"
            ue = 1
            kind = "ping"
            interval = "100ms"
            [[flows]]
            name = "voip"
            ue = 1
            kind = "voip"
            "#,
        )
        .unwrap();
        let mut out = tcran_sim::run_scenario("t", &cfg, Path::new(".")).unwrap();
        let long = "udp 10.201.0.1:40000 > 10.201.1.2:5201";
        out.summary.variants[0].run.flows[1].name = long.into();
        out.summary.across_seeds[0].flows[1].name = long.into();
        for (seeds, heads) in [
            (
                false,
                [
                    "Mbit/s", "mean ms", "p95 ms", "p99 ms", "lost", "PRB use", "RLC kB",
                ]
                .as_slice(),
            ),
            (
                true,
                ["Mbit/s", "mean ms", "p95 ms", "PRB use %", "capacity use %"].as_slice(),
            ),
        ] {
            let mut s = out.summary.clone();
            if !seeds {
                s.across_seeds.clear();
            }
            let text = to_text(&s, Clock::Simulated);
            let mut lines = text.lines().skip_while(|l| !l.starts_with("variant"));
            let header = lines.next().unwrap();
            let rows: Vec<&str> = lines.map(str::trim_end).collect();
            assert_eq!(rows.len(), 2, "{text}");
            assert!(rows[1].contains(long), "{text}");
            for row in rows {
                let chars: Vec<char> = row.chars().collect();
                for (k, head) in heads.iter().enumerate() {
                    let end = column_end(header, head);
                    // The first row has every column; the second (a flow
                    // after the first) none of the variant's.
                    if end > chars.len() {
                        assert!(k >= heads.len() - 2, "{head} missing:\n{text}");
                        continue;
                    }
                    assert!(
                        chars[end - 1].is_ascii_digit() || chars[end - 1] == '%',
                        "{head} not ending at column {end}:\n{text}"
                    );
                    assert!(chars.get(end).is_none_or(|c| *c == ' '), "{head}:\n{text}");
                }
            }
        }
    }
}
