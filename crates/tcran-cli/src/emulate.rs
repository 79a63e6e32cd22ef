//! `tcran emulate`: real programs' traffic through the scenario's RAN node
//! in real time (crate `tcran-emu`, docs/emulator.md), with the same
//! outputs as `tcran run` plus `emulation.json` (what the emulator
//! measured about itself).

use crate::error::CliError;
use crate::load::read_config;
use crate::set::Override;
use crate::simulate::Outcome;
use std::path::Path;
use tcran_emu::{EmuError, Options};
use tcran_sim::{ScenarioOutput, ScenarioSummary, SimConfig, VariantSummary};

/// What `tcran emulate` produced.
#[derive(Debug)]
pub struct Emulated {
    pub outcome: Outcome,
    pub report: tcran_emu::Report,
    pub exit_code: i32,
}

/// Parses `--duration`-style values.
pub fn duration(flag: &str, text: &str) -> Result<tcran_core::Duration, CliError> {
    tcran_core::units::parse_duration(text)
        .map_err(|e| CliError::Usage(format!("{flag} {text}: {e}")))
}

/// Parses `--spin D`: at most one millisecond, two slots at 30 kHz
/// subcarrier spacing (longer would only burn CPU).
pub fn spin(text: &str) -> Result<tcran_core::Duration, CliError> {
    let d = duration("--spin", text)?;
    if d > tcran_core::Duration::from_millis(1) {
        return Err(CliError::Usage(format!(
            "--spin {text}: at most 1ms (0s turns busy-waiting off)"
        )));
    }
    Ok(d)
}

/// `--cpu-latency D`: holds the machine's CPU wake-up latency at or below
/// `D` (Linux PM QoS, `tcran_e2::cpu_latency`) until the guard drops.
pub fn hold_cpu_latency(
    text: Option<&str>,
) -> Result<Option<tcran_e2::cpu_latency::CpuLatencyGuard>, CliError> {
    use tcran_e2::cpu_latency::{hold, CpuLatencyError, MAX};
    let Some(text) = text else { return Ok(None) };
    let d = duration("--cpu-latency", text)?;
    match hold(std::time::Duration::from_nanos(d.as_nanos())) {
        Ok(guard) => Ok(Some(guard)),
        Err(CpuLatencyError::TooLong(_)) => Err(CliError::Usage(format!(
            "--cpu-latency {text}: must be within 0s..={}s (0s: idle CPUs never sleep)",
            MAX.as_secs()
        ))),
        Err(e) => Err(CliError::System(format!(
            "--cpu-latency {text}: {e} (it needs root)"
        ))),
    }
}

/// Parses `--sysctl KEY=VALUE`.
pub fn sysctl(arg: &str) -> Result<(String, String), CliError> {
    match arg.split_once('=') {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(CliError::Usage(format!(
            "--sysctl {arg}: expected KEY=VALUE (e.g. net.ipv4.tcp_ecn=1)"
        ))),
    }
}

/// An emulator's error as the CLI reports it: a scenario mistake names
/// `file`; what the user can fix (not root, no TUN, a missing program, a
/// bad flag) is a usage error (exit 2); the rest an emulation failure.
pub fn cli_error(e: EmuError, file: &str) -> CliError {
    match e {
        EmuError::Scenario(m) => CliError::Usage(format!("{file}: {m}")),
        e if e.is_usage() => CliError::Usage(e.to_string()),
        e => CliError::Emulation(e.to_string()),
    }
}

/// Checks that this machine can emulate (root, TUN, iproute2) before
/// anything else is looked at.
pub fn preflight() -> Result<(), CliError> {
    tcran_emu::preflight().map_err(|e| cli_error(e, ""))
}

/// Emulates the scenario in `path` (after `--set` overrides).
pub fn run(path: &Path, sets: &[Override], opts: &Options) -> Result<Emulated, CliError> {
    let src = read_config(path)?;
    let cfg: SimConfig = src.parse_with(sets)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let o = tcran_emu::emulate(&cfg, base, opts).map_err(|e| cli_error(e, &src.name))?;
    let name = crate::simulate::scenario_name(path);
    let output = ScenarioOutput {
        summary: ScenarioSummary {
            wall_s: o.report.ran_s,
            made_with: Some(crate::simulate::provenance(&src, sets, &cfg)),
            ..ScenarioSummary::single(
                name,
                cfg.seed,
                o.report.ran_s,
                vec![VariantSummary {
                    name: o.variant.clone(),
                    run: o.output.summary,
                }],
            )
        },
        series: vec![o.output.series],
        seed_series: Vec::new(),
    };
    Ok(Emulated {
        outcome: Outcome {
            output,
            runs: vec![(o.variant, o.config)],
            clock: crate::simulate::Clock::Emulated,
            streamed: false,
        },
        report: o.report,
        exit_code: o.exit_code,
    })
}

/// Writes `emulation.json` beside the run's outputs.
pub fn write_report(dir: &Path, report: &tcran_emu::Report) -> Result<(), CliError> {
    let path = dir.join("emulation.json");
    let json = serde_json::to_string_pretty(report).expect("report serializes");
    std::fs::write(&path, json + "\n").map_err(|e| CliError::Write {
        file: path.display().to_string(),
        reason: tcran_core::text_file::without_os_code(&e.to_string()).to_string(),
    })
}

/// The emulator's own figures, for the end of the table.
pub fn to_text(r: &tcran_emu::Report) -> String {
    let l = &r.relay;
    let e2 =
        r.e2.as_ref()
            .map_or(String::new(), |e| format!("{}\n", e.line()));
    format!(
        "emulator: ran {:.1} s (ended by {}); packets in {} down / {} up, out {} down / {} up, \
         lost at the hosts' devices {}; wake-up lateness p50/p99/max {:.0}/{:.0}/{:.0} us; \
         added latency p50/p99/max {:.0}/{:.0}/{:.0} us; CPU {:.2} s ({:.1} us per packet); \
         relay thread {}\n",
        r.ran_s,
        r.stopped_by,
        l.downlink_in,
        l.uplink_in,
        l.downlink_out,
        l.uplink_out,
        l.write_dropped + l.write_errors + r.device_drops.map_or(0, |d| d.total()),
        l.lateness_us.p50,
        l.lateness_us.p99,
        l.lateness_us.max,
        l.added_latency_us.p50,
        l.added_latency_us.p99,
        l.added_latency_us.max,
        r.cpu_s,
        r.cpu_us_per_packet,
        l.scheduling,
    ) + &quiet_text(&l.quiet)
        + &e2
}

/// A warning line for seconds in which nothing moved, by cause; empty if
/// there were none.
fn quiet_text(q: &tcran_emu::relay::QuietSeconds) -> String {
    if q.count == 0 {
        return String::new();
    }
    let mut causes: Vec<(&str, Vec<u64>)> = Vec::new();
    for x in &q.first {
        match causes.iter_mut().find(|(c, _)| *c == x.cause) {
            Some((_, s)) => s.push(x.second),
            None => causes.push((x.cause, vec![x.second])),
        }
    }
    let listed: Vec<String> = causes
        .iter()
        .map(|(c, s)| {
            let s: Vec<String> = s.iter().map(u64::to_string).collect();
            format!("{c}: {}", s.join(", "))
        })
        .collect();
    format!(
        "warning: {} second(s) in which no packet moved in either direction ({}; relay: the relay thread did not run, model: the cell held the packets, hosts: the programs sent nothing)\n",
        q.count,
        listed.join("; ")
    )
}
