//! A scenario paced to the wall clock (`tcran run --realtime`): the
//! simulator engine with its modelled flows, run by the emulator's
//! real-time loop ([`crate::relay`]) without devices, so an outside
//! controller (a RIC and its xApps, over [`crate::e2`]) acts on it as on a
//! live cell while it runs.
//!
//! Contract:
//! - Every variant runs at once, each on a thread of its own with its own
//!   engine, clock and (with E2) one E2 node per cell: a single cell's
//!   gNB id is the variant's index plus one, the cells of a `[[cells]]`
//!   scenario derive theirs from it and their ids
//!   ([`crate::e2::cell_gnb_id`]). Each variant's events
//!   run at their simulated time on CLOCK_MONOTONIC from its start. The
//!   loops run at SCHED_FIFO when there are fewer of them than cores
//!   (realtime.json's `relay.scheduling` says which).
//! - Everything is checked before anything runs: the scenario (as
//!   `tcran run` checks it) and the E2 options of every cell.
//! - The run ends at the scenario's duration, or early when `stop` is set
//!   (Ctrl-C): the outputs then measure up to that moment.
//! - The outputs are those of `tcran run` (the engine's summary and
//!   series; changes made over E2 are among the run's reconfigurations,
//!   `by = "e2"`), plus what the loop measured about its own timing
//!   ([`Report`]).

use crate::clock::Clock;
use crate::e2::{E2Link, E2Options, E2Report};
use crate::error::EmuError;
use crate::relay::{self, Io, RelayStats, Stop};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tcran_core::Instant;
use tcran_sim::{RunOutput, Sim, SimConfig};

/// What the real-time loop of one variant measured about itself.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub variant: String,
    /// `duration` or `signal`.
    pub stopped_by: &'static str,
    /// Seconds of wall clock (and of simulated time) the run lasted.
    pub ran_s: f64,
    /// How late the loop woke for its deadlines (`lateness_us`) and its
    /// turns; the device counters stay 0 (no devices).
    pub relay: RelayStats,
    /// The RAN node's own count of events run late.
    pub node_timing: tcran_gnb::Timing,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2: Option<E2Report>,
    /// With `[[cells]]`: each cell's E2 node, in cell order (`e2` is then
    /// absent).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub e2_cells: Vec<E2Report>,
}

/// One variant's results.
#[derive(Debug)]
pub struct VariantRun {
    pub name: String,
    pub config: SimConfig,
    pub output: RunOutput,
    pub report: Report,
}

/// Runs every variant of `cfg` in real time (see the module docs); `base`
/// resolves relative trace paths.
pub fn run(
    cfg: &SimConfig,
    base: &Path,
    e2: Option<&E2Options>,
    stop: &AtomicBool,
) -> Result<Vec<VariantRun>, EmuError> {
    let scenario = |e: tcran_core::ConfigError| EmuError::Scenario(e.to_string());
    // Checks first: the whole scenario, then each cell's E2 options.
    let built = tcran_sim::build_scenario(cfg, base).map_err(scenario)?;
    let mut links = Vec::new();
    for (i, (_, sim)) in built.iter().enumerate() {
        links.push(match e2 {
            Some(o) => Some(E2Link::new(o, sim, i as u32 + 1)?),
            None => None,
        });
    }
    drop(built);
    let runs = cfg.runs();
    // SCHED_FIFO only while a core is left for everything else.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let realtime = runs.len() < cores;
    // The engines are built on their own threads (a custom controller
    // need not be `Send`); the checks above made them once already.
    std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .into_iter()
            .zip(links)
            .map(|((name, vcfg), link)| {
                scope.spawn(move || -> Result<VariantRun, EmuError> {
                    let sim = Sim::new(&vcfg, base).map_err(scenario)?;
                    let (output, report) =
                        run_one(sim, &name, vcfg.duration, link, stop, realtime)?;
                    Ok(VariantRun {
                        name,
                        config: vcfg,
                        output,
                        report,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Runs one engine in real time until its duration or `stop`, at
/// SCHED_FIFO when `realtime`.
pub fn run_one(
    mut sim: Sim,
    name: &str,
    duration: tcran_core::Duration,
    mut e2: Option<E2Link>,
    stop: &AtomicBool,
    realtime: bool,
) -> Result<(RunOutput, Report), EmuError> {
    let clock = Clock::start();
    let until = Instant::ZERO + duration;
    let mut stats = RelayStats::default();
    let result = relay::run(
        &mut sim,
        Io {
            links: None,
            e2: e2.as_mut(),
        },
        &clock,
        relay::Plan {
            until,
            spin: tcran_core::Duration::ZERO,
            realtime,
        },
        stop,
        &mut || false,
        &mut stats,
    );
    let mut e2 = e2.map(E2Link::finish).unwrap_or_default();
    let e2_cells = if sim.cell_id(0).is_some() {
        std::mem::take(&mut e2)
    } else {
        Vec::new()
    };
    let e2 = e2.pop();
    let (stopped, end) = result?;
    stats.finish();
    let node_timing = *sim.gnb().timing();
    let output = sim.finish_at(end);
    Ok((
        output,
        Report {
            variant: name.to_string(),
            stopped_by: match stopped {
                Stop::Duration => "duration",
                Stop::Done => "done",
                Stop::Signal => "signal",
            },
            ran_s: end.as_secs_f64(),
            relay: stats,
            node_timing,
            e2,
            e2_cells,
        },
    ))
}
