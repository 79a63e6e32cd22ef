//! # tcran-sim: the deterministic downlink simulator
//!
//! A discrete-event model of one cell's downlink with the TC pipeline in the
//! loop: servers run the sans-IO transports of `tcran-traffic`, packets
//! cross a core network delay to the RAN node (`tcran_gnb::Gnb`: SDAP maps
//! them to DRBs, each DRB's TC pipeline feeds its RLC entity, a per-slot
//! MAC schedules them over a modelled channel to the UE), whose ACKs, echo
//! replies and RLC status PDUs return through the node's uplink. The node
//! is driven through its public API on a virtual clock, exactly as the
//! other front ends drive it.
//!
//! - [`scenario`]: what to simulate (serde).
//! - [`engine`]: the event loop.
//! - [`report`]: what a run reports.
//! - [`series`]: what a run records over time (plots, CSV).
//! - scheduled reconfiguration events and closed-loop controllers
//!   (xApps) come from `tcran_control::controller`, the vocabulary the
//!   xApp SDK runs over E2 as well.
//! - [`event`], [`metrics`]: the deterministic event queue and exact
//!   percentiles.

pub mod cells;
pub mod engine;
pub mod fidelity;
pub mod handover_impact;
/// The deterministic event queue, now in `tcran-core`.
pub use tcran_core::event;
pub mod metrics;
pub mod recorder;
pub mod report;
pub mod scenario;
pub mod seeds;
pub mod series;

pub use engine::{LiveOutput, Sim};
pub use report::{
    FlowSummary, InFlight, PacketCounts, RunSummary, ScenarioSummary, VariantSummary,
};
pub use scenario::SimConfig;
pub use series::RunSeries;

use std::path::Path;
use tcran_core::ConfigError;

/// What one run produced: the summary and the time series.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub summary: RunSummary,
    pub series: RunSeries,
}

/// What a whole scenario produced: the summary JSON and, per variant in the
/// same order, its time series (of the first seed).
#[derive(Debug, Clone)]
pub struct ScenarioOutput {
    pub summary: ScenarioSummary,
    pub series: Vec<RunSeries>,
    /// With several seeds: per seed (the first included), per variant, the
    /// series with only their CDFs kept ([`RunSeries::cdfs_only`]), for
    /// bands across seeds.
    pub seed_series: Vec<Vec<RunSeries>>,
}

/// Where a scenario run is, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Index of the running seed, and how many there are.
    pub seed: usize,
    pub seeds: usize,
    /// Index of the running variant, and how many there are.
    pub variant: usize,
    pub variants: usize,
    /// Simulated seconds done in this variant, and its duration.
    pub sim_s: f64,
    pub duration_s: f64,
}

/// Builds every variant first (so a bad variant fails before anything
/// runs), then runs them in order. `base` resolves relative trace paths.
pub fn run_scenario(
    name: &str,
    cfg: &SimConfig,
    base: &Path,
) -> Result<ScenarioOutput, ConfigError> {
    run_scenario_with_progress(name, cfg, base, std::num::NonZeroUsize::MIN, &|_| {})
}

/// Builds the simulator of every run a scenario asks for (its variants, or
/// itself once), checking everything without running anything: what
/// `tcran validate` does, and the first step of [`run_scenario`].
///
/// The scenario as written is built first, so a mistake in it is reported
/// with its own path (`ues[0].channel.path`); only then is each variant
/// built, and a mistake that only a variant makes is reported under
/// `variants[i].` (`variants[1].ues[0].drbs[0].pipeline.pacer.offset`).
/// Building the scenario as written also checks the parts that every
/// variant replaces (e.g. the DRB pipelines): a wrong value is a mistake
/// even where a variant overrides it.
pub fn build_scenario(cfg: &SimConfig, base: &Path) -> Result<Vec<(String, Sim)>, ConfigError> {
    fidelity::check(cfg)?;
    if cfg.variants.is_empty() {
        return Ok(vec![("default".to_string(), Sim::new(cfg, base)?)]);
    }
    Sim::new(cfg, base)?;
    // Variants are told apart by name (in the table, the report, the CSV
    // folders): two with one name would silently share them.
    for (i, v) in cfg.variants.iter().enumerate() {
        tcran_core::config::check_name(&format!("variants[{i}].name"), &v.name)?;
        if let Some(j) = cfg.variants[..i].iter().position(|w| w.name == v.name) {
            return Err(ConfigError::new(
                format!("variants[{i}].name"),
                format!("{:?}", v.name),
                format!("must be unique: variants[{j}] has the same name"),
            ));
        }
    }
    cfg.variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let sim = Sim::new(&cfg.for_variant(v), base)
                .map_err(|e| e.within(format!("variants[{i}]")))?;
            Ok((v.name.clone(), sim))
        })
        .collect()
}

/// [`run_scenario`], calling `progress` as simulated time advances (about
/// every simulated second) and once at the end of each variant. With
/// several seeds (`seeds`), every variant runs once per seed; the runs of
/// the first seed keep their whole series, the others only their CDFs, so
/// memory does not grow with the number of seeds beyond the summaries.
///
/// Up to `jobs` runs (a variant under one seed) go at once, each on a
/// thread of its own: every run is its own simulator with its own seeded
/// randomness, so the output is the same for any `jobs` (a test holds
/// that), only sooner. `progress` may then be called from several
/// threads, each run reporting its own [`Progress`].
pub fn run_scenario_with_progress(
    name: &str,
    cfg: &SimConfig,
    base: &Path,
    jobs: std::num::NonZeroUsize,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<ScenarioOutput, ConfigError> {
    run_scenario_streaming(name, cfg, base, jobs, progress, &|_| None)
}

/// [`run_scenario_with_progress`], where the first seed's run of variant
/// `i` hands its series at full resolution to `sinks(i)`, if that gives
/// one, as it goes ([`Sim::stream_series`]); [`ScenarioOutput::series`]
/// then holds that run's bounded display copy.
pub fn run_scenario_streaming(
    name: &str,
    cfg: &SimConfig,
    base: &Path,
    jobs: std::num::NonZeroUsize,
    progress: &(dyn Fn(Progress) + Sync),
    sinks: &(dyn Fn(usize) -> Option<Box<dyn series::SeriesSink>> + Sync),
) -> Result<ScenarioOutput, ConfigError> {
    let seeds = cfg.seed_list();
    let duration_s = cfg.duration.as_secs_f64();
    let per_seed: Vec<SimConfig> = seeds
        .iter()
        .map(|&seed| {
            let mut c = cfg.clone();
            c.seed = seed;
            c.seeds = None;
            c
        })
        .collect();
    // Everything is checked before anything runs; the first seed's
    // simulators, built for that check, are the ones its runs use.
    let (variant_names, first_seed): (Vec<String>, Vec<_>) = build_scenario(&per_seed[0], base)?
        .into_iter()
        .map(|(name, sim)| (name, std::sync::Mutex::new(Some(sim))))
        .unzip();
    let n = variant_names.len();
    let several = seeds.len() > 1;
    // Run `u` is variant `u % n` under seed `u / n`.
    let run = |u: usize| -> Result<Finished, ConfigError> {
        let (k, i) = (u / n, u % n);
        let c = &per_seed[k];
        let built = (k == 0)
            .then(|| {
                first_seed[i]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
            })
            .flatten();
        let mut sim = match (built, c.variants.get(i)) {
            (Some(sim), _) => sim,
            (None, Some(v)) => {
                Sim::new(&c.for_variant(v), base).map_err(|e| e.within(format!("variants[{i}]")))?
            }
            (None, None) => Sim::new(c, base)?,
        };
        if let Some(sink) = (k == 0).then(|| sinks(i)).flatten() {
            sim.stream_series(sink);
        }
        let out = sim.run_with_progress(&mut |sim_s| {
            progress(Progress {
                seed: k,
                seeds: seeds.len(),
                variant: i,
                variants: n,
                sim_s,
                duration_s,
            })
        });
        let cdfs = several.then(|| out.series.cdfs_only());
        Ok(Finished {
            summary: out.summary,
            series: (k == 0).then_some(out.series),
            cdfs,
        })
    };
    let mut finished = in_order(seeds.len() * n, jobs, run)?.into_iter();
    let mut seed_runs = Vec::with_capacity(seeds.len());
    let mut series = Vec::with_capacity(n);
    let mut seed_series = Vec::new();
    for &seed in &seeds {
        let mut variants = Vec::with_capacity(n);
        let mut this = Vec::with_capacity(n);
        for name in &variant_names {
            let f = finished.next().expect("one result per run");
            variants.push(VariantSummary {
                name: name.clone(),
                run: f.summary,
            });
            series.extend(f.series);
            this.extend(f.cdfs);
        }
        if several {
            seed_series.push(this);
        }
        seed_runs.push(seeds::SeedRuns { seed, variants });
    }
    let mut summary = ScenarioSummary::single(
        name.to_string(),
        seeds[0],
        duration_s,
        seed_runs[0].variants.clone(),
    );
    if seeds.len() > 1 {
        summary.seeds = seeds;
        summary.across_seeds = seeds::across_seeds(&seed_runs);
        summary.seed_runs = seed_runs;
    }
    Ok(ScenarioOutput {
        summary,
        series,
        seed_series,
    })
}

/// What one run leaves for the scenario's output.
struct Finished {
    summary: RunSummary,
    /// The whole series (first seed only).
    series: Option<RunSeries>,
    /// Its CDFs (with several seeds).
    cdfs: Option<RunSeries>,
}

/// `run(0..count)`, up to `jobs` at a time, results in index order; the
/// first error in that order wins. Runs are taken in order, so with one
/// job this is a plain loop on the caller's thread.
fn in_order<T: Send>(
    count: usize,
    jobs: std::num::NonZeroUsize,
    run: impl Fn(usize) -> Result<T, ConfigError> + Sync,
) -> Result<Vec<T>, ConfigError> {
    let jobs = jobs.get().min(count);
    if jobs <= 1 {
        return (0..count).map(run).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<T, ConfigError>>>> =
        (0..count).map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let u = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if u >= count {
                    return;
                }
                let r = run(u);
                *slots[u].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every run was taken")
        })
        .collect()
}
