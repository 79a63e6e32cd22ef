//! `tcran run --realtime [--e2 HOST:PORT]`: a scenario paced to the wall
//! clock (crate `tcran-emu`, module `realtime`), each cell an E2 node of a
//! RIC if asked, with the outputs of `tcran run` plus `realtime.json`
//! (what the real-time loop measured about itself, and what each E2 node
//! did). The E2 options are shared with `tcran emulate`.

use crate::error::CliError;
use crate::load::read_config;
use crate::simulate::{Options, Outcome};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tcran_e2::RicProfile;
use tcran_emu::e2::{E2Options, E2Transport, TlsFiles};
use tcran_emu::realtime::{self, VariantRun};
use tcran_sim::{ScenarioOutput, ScenarioSummary, SimConfig, VariantSummary};

/// `--e2-transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TransportArg {
    /// TCP, each E2AP PDU after a 4-byte big-endian length (FlexRIC's SCTP carried over TCP).
    Tcp,
    /// The framed TCP transport inside TLS (needs --e2-tls-ca, --e2-tls-cert, --e2-tls-key).
    Tls,
    /// SCTP, port 36421 (refused with the reason on kernels without SCTP).
    Sctp,
}

/// `--e2-profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileArg {
    /// FlexRIC's rules (only its RAN functions, no failure ever sent) until the RIC sends a RIC Service Query (tcran's xApp SDK does), then E2AP as specified with E2SM-TCRAN added.
    Auto,
    /// E2AP as specified: FlexRIC TC (146), E2SM-KPM (2) and E2SM-TCRAN (246); refused controls get RIC Control Failure.
    Standard,
    /// FlexRIC: FlexRIC's RAN functions only; refused controls are acknowledged and refused subscriptions left unanswered (FlexRIC asserts on failures), logged and counted.
    Flexric,
}

/// The E2 options of `tcran run --realtime` and `tcran emulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct E2Args {
    /// Make each cell an E2 node of the RIC at HOST:PORT (docs/e2.md).
    #[arg(long, value_name = "HOST:PORT")]
    pub e2: Option<String>,
    /// The transport to the RIC.
    #[arg(long, value_enum, default_value = "tcp")]
    pub e2_transport: TransportArg,
    /// The DRB FlexRIC's TC service model reports and controls [default: the cell's first].
    #[arg(long, value_name = "RNTI:DRB", requires = "e2")]
    pub e2_tc_drb: Option<String>,
    /// Which RIC the node talks to.
    #[arg(long, value_enum, default_value = "auto")]
    pub e2_profile: ProfileArg,
    /// TLS: the CA certificate (PEM) that signed the RIC's certificate.
    #[arg(long, value_name = "FILE", requires = "e2")]
    pub e2_tls_ca: Option<PathBuf>,
    /// TLS: the node's certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires = "e2")]
    pub e2_tls_cert: Option<PathBuf>,
    /// TLS: the node's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "e2")]
    pub e2_tls_key: Option<PathBuf>,
    /// TLS: the name in the RIC's certificate [default: the HOST of --e2].
    #[arg(long, value_name = "NAME", requires = "e2")]
    pub e2_tls_name: Option<String>,
    /// Also log subscriptions and applied controls on stderr.
    #[arg(long, requires = "e2")]
    pub e2_verbose: bool,
    /// Keep idle CPUs' wake-up latency at or below D while running (Linux
    /// PM QoS, /dev/cpu_dma_latency; needs root), e.g. 0s: E2 round trips
    /// and wake-ups without the cost of leaving a deep idle state.
    #[arg(long, value_name = "D")]
    pub cpu_latency: Option<String>,
}

impl E2Args {
    /// The options, if `--e2` was given.
    pub fn options(&self) -> Result<Option<E2Options>, CliError> {
        let Some(addr) = &self.e2 else {
            return Ok(None);
        };
        let tc_drb = self
            .e2_tc_drb
            .as_deref()
            .map(tcran_emu::e2::parse_drb)
            .transpose()
            .map_err(CliError::Usage)?;
        Ok(Some(E2Options {
            addr: addr.clone(),
            transport: match self.e2_transport {
                TransportArg::Tcp => E2Transport::Tcp,
                TransportArg::Tls => E2Transport::Tls,
                TransportArg::Sctp => E2Transport::Sctp,
            },
            tls: TlsFiles {
                ca: self.e2_tls_ca.clone(),
                cert: self.e2_tls_cert.clone(),
                key: self.e2_tls_key.clone(),
                server_name: self.e2_tls_name.clone(),
            },
            tc_drb,
            profile: match self.e2_profile {
                ProfileArg::Auto => RicProfile::Auto,
                ProfileArg::Standard => RicProfile::Standard,
                ProfileArg::Flexric => RicProfile::Flexric,
            },
            verbose: self.e2_verbose,
        }))
    }
}

/// What a real-time run produced.
#[derive(Debug)]
pub struct Realtime {
    pub outcome: Outcome,
    pub reports: Vec<realtime::Report>,
}

/// Runs the scenario in `path` in real time; Ctrl-C (SIGINT) or SIGTERM
/// ends it early with the outputs so far.
pub fn run(path: &Path, opts: Options, e2: Option<&E2Options>) -> Result<Realtime, CliError> {
    let src = read_config(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    run_source(&crate::simulate::scenario_name(path), &src, base, opts, e2)
}

/// [`run`] on a scenario already read (`base`: where its relative paths
/// start); `name` is the scenario's name in the summary.
#[allow(clippy::disallowed_types, clippy::disallowed_methods)] // wall_s is a wall-clock measurement
pub fn run_source(
    name: &str,
    src: &crate::load::Source,
    base: &Path,
    opts: Options,
    e2: Option<&E2Options>,
) -> Result<Realtime, CliError> {
    let mut cfg: SimConfig = src.parse_with(opts.sets)?;
    if let Some(s) = opts.seed {
        cfg.seed = s;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let started = std::time::Instant::now();
    let runs = realtime::run(&cfg, base, e2, &stop)
        .map_err(|e| crate::emulate::cli_error(e, &src.name))?;
    let wall_s = started.elapsed().as_secs_f64();
    let name = name.to_string();
    let mut variants = Vec::new();
    let mut series = Vec::new();
    let mut configs = Vec::new();
    let mut reports = Vec::new();
    for VariantRun {
        name,
        config,
        output,
        report,
    } in runs
    {
        variants.push(VariantSummary {
            name: name.clone(),
            run: output.summary,
        });
        series.push(output.series);
        configs.push((name, config));
        reports.push(report);
    }
    let sim_s = reports.iter().map(|r| r.ran_s).fold(0.0, f64::max);
    Ok(Realtime {
        outcome: Outcome {
            output: ScenarioOutput {
                summary: ScenarioSummary {
                    wall_s,
                    made_with: Some(crate::simulate::provenance(src, opts.sets, &cfg)),
                    ..ScenarioSummary::single(name, cfg.seed, sim_s, variants)
                },
                series,
                seed_series: Vec::new(),
            },
            runs: configs,
            clock: crate::simulate::Clock::Realtime,
            streamed: false,
        },
        reports,
    })
}

/// Writes `realtime.json` beside the run's outputs.
pub fn write_report(dir: &Path, reports: &[realtime::Report]) -> Result<(), CliError> {
    let path = dir.join("realtime.json");
    let json = serde_json::to_string_pretty(reports).expect("report serializes");
    std::fs::write(&path, json + "\n").map_err(|e| CliError::Write {
        file: path.display().to_string(),
        reason: tcran_core::text_file::without_os_code(&e.to_string()).to_string(),
    })
}

/// The loop's and the E2 nodes' figures, for the end of the table.
pub fn to_text(reports: &[realtime::Report]) -> String {
    let mut out = String::new();
    for r in reports {
        let l = &r.relay.lateness_us;
        out.push_str(&format!(
            "real time {}: ran {:.1} s (ended by {}); wake-up lateness p50/p99/max {:.0}/{:.0}/{:.0} us\n",
            r.variant, r.ran_s, r.stopped_by, l.p50, l.p99, l.max
        ));
        for e in r.e2.iter().chain(&r.e2_cells) {
            out.push_str(&format!("  {}\n", e.line()));
        }
    }
    out
}
