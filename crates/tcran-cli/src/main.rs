//! `tcran`: the command-line front end of tcran.
//!
//! Every user mistake ends with ONE line on stderr naming the file, the line
//! or field, the bad value and what is allowed, and exit code 2; a bug ends
//! with a one-line internal-error message and exit code 101, never with a
//! backtrace. See docs/cli.md.

use tcran_cli::{
    dashboard, emulate, error, outdir, output, realtime, reproduce, schema, series_csv, set,
    simulate, stages, sweep, trace, validate, xapp,
};

use clap::{Parser, Subcommand};
use error::{CliError, EXIT_INTERNAL, EXIT_USAGE};
use output::{emit, emit_json};
use set::Override;
use simulate::Options;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, Parser)]
#[command(
    name = "tcran",
    version,
    about = "Traffic control for the 5G RAN: simulate scenarios, list stages, schemas, traces, validation",
    disable_help_subcommand = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every built-in stage kind with its parameters, units, defaults and references.
    Stages {
        /// Machine-readable JSON on stdout (shape in docs/cli.md).
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of a configuration file.
    Schema {
        /// Which document.
        #[arg(value_enum, default_value = "pipeline")]
        name: schema::SchemaName,
    },
    /// Inspect channel traces.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// Check a configuration file (TOML or JSON, by extension) without running it.
    Validate {
        /// The file to check (.toml or .json).
        file: PathBuf,
        /// What the file is [default: told from its top-level keys].
        #[arg(long, value_enum, default_value = "auto")]
        kind: validate::KindArg,
        /// Change the document before checking it: a dotted key with array
        /// indices and a TOML value (repeatable), e.g. ues[0].channel.mcs=10.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Run the embedded demo: bufferbloat and its cure, variants side by side.
    Demo {
        /// The summary JSON on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Where summary.json, the CSV time series and report.html go.
        #[arg(long, default_value = "tcran-out/demo")]
        out: PathBuf,
        /// Run the demo's `vanilla` variant in real time as an E2 node of a
        /// dashboard (served on --http), to watch the RLC buffer bloat and
        /// deploy the cure from the page.
        #[arg(long, conflicts_with = "json")]
        live: bool,
        /// With --live: where the dashboard is served.
        #[arg(
            long,
            value_name = "ADDR",
            default_value = "127.0.0.1:8080",
            requires = "live"
        )]
        http: String,
        /// With --live: how long the demo runs in real time.
        #[arg(long, value_name = "D", default_value = "300s", requires = "live")]
        duration: String,
    },
    /// Run every variant of a scenario file (TOML or JSON).
    Run {
        /// The scenario file.
        file: PathBuf,
        /// The summary JSON on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Override the scenario's seed (and run that seed alone).
        #[arg(long)]
        seed: Option<u64>,
        /// Run every variant once per seed: "1..10" (ten seeds, both ends
        /// included) or "1,5,9"; the summary adds each metric's mean and
        /// 95 % confidence interval (Student t) across the seeds.
        #[arg(long, value_name = "SEEDS", conflicts_with = "seed", value_parser = tcran_sim::seeds::Seeds::parse)]
        seeds: Option<tcran_sim::seeds::Seeds>,
        /// Where summary.json, the CSV time series and report.html go
        /// [default: tcran-out/<scenario file name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Change the scenario before running it: a dotted key with array
        /// indices and a TOML value (repeatable), e.g. --set duration=20s
        /// --set ues[0].channel.mcs=10.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Runs (a variant under one seed) simulated at a time, each on a
        /// core of its own; the results do not depend on it [default: one
        /// per core].
        #[arg(long, short = 'j', value_name = "N")]
        jobs: Option<usize>,
        /// Pace the simulation to the wall clock (every variant at once,
        /// each its own cell): what an outside controller needs (--e2);
        /// Ctrl-C ends it early with the outputs so far; realtime.json
        /// tells how well the loop kept time.
        #[arg(long)]
        realtime: bool,
        #[command(flatten)]
        e2: realtime::E2Args,
    },
    /// Run every scenario file of a directory, each into OUT/<scenario>/, with one combined OUT/index.html.
    Reproduce {
        /// The directory of scenario files (*.toml, *.json; sorted by name).
        #[arg(long, default_value = "scenarios/reproduction")]
        dir: PathBuf,
        /// Where the outputs and index.html go.
        #[arg(long, default_value = "tcran-out/reproduce")]
        out: PathBuf,
        /// Also write each scenario's figures (delay vs PRB scatter, key-flow
        /// delay CDF) as standalone SVG files into this directory.
        #[arg(long, value_name = "DIR")]
        figures: Option<PathBuf>,
        /// Scenarios run at a time [default: one per core].
        #[arg(long, short = 'j', value_name = "N")]
        jobs: Option<usize>,
        /// The seeds every scenario runs with: each paper number is compared
        /// with the mean across them (fidelity.json gives its 95 %
        /// confidence interval).
        #[arg(long, value_name = "SEEDS", default_value = "1..3", value_parser = tcran_sim::seeds::Seeds::parse)]
        seeds: tcran_sim::seeds::Seeds,
        /// One seed instead (faster; no confidence intervals).
        #[arg(long, value_name = "N", conflicts_with = "seeds")]
        seed: Option<u64>,
        /// Applied to every scenario (repeatable), as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Carry real traffic (iperf3, ping, any program) through a scenario's RAN node in real time: one network namespace per UE and one for the servers (needs root).
    Emulate {
        /// The scenario file.
        file: PathBuf,
        /// The variant to emulate (required when the scenario has several).
        #[arg(long)]
        variant: Option<String>,
        /// Longest run, e.g. 30s [default: the scenario's duration].
        #[arg(long, value_name = "D")]
        duration: Option<String>,
        /// Statistics ignore what happens before this [default: 0s].
        #[arg(long, value_name = "D")]
        warmup: Option<String>,
        /// Where summary.json, the CSV series, report.html, emulation.json
        /// and the captures go [default: tcran-out/emulate-<scenario>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// A shell command line run in the servers' namespace (address
        /// 198.51.100.1), e.g. "iperf3 -s"; its output goes to OUT/server.log.
        #[arg(long, value_name = "CMD")]
        server: Option<String>,
        /// Write pcapng captures of every link into OUT (server.pcapng,
        /// ue<RNTI>.pcapng).
        #[arg(long)]
        pcap: bool,
        /// Also run the scenario's modelled flows, beside the live traffic.
        #[arg(long)]
        with_scenario_flows: bool,
        /// A sysctl set in every namespace (repeatable), e.g. net.ipv4.tcp_ecn=1.
        #[arg(long = "sysctl", value_name = "KEY=VALUE")]
        sysctl: Vec<String>,
        /// Wake this long before each deadline and busy-wait the rest, for
        /// wake-ups within a microsecond at the cost of CPU, e.g. 50us
        /// [default: 0s, sleep until the deadline; at most 1ms].
        #[arg(long, value_name = "D")]
        spin: Option<String>,
        /// The summary JSON on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Change the scenario first (repeatable), as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        #[command(flatten)]
        e2: realtime::E2Args,
        /// The command run in the (first) UE's namespace (after `--`);
        /// none: an interactive shell there. tcran exits with its code.
        #[arg(last = true, value_name = "UE-CMD")]
        command: Vec<String>,
    },
    /// Run a parameter sweep file (grid x seeds, a Parquet store that resumes, local/Dask/Ray backends): handed to the Python package, `python -m tcran sweep` (docs/python.md).
    #[command(disable_help_flag = true)]
    Sweep {
        /// SWEEP.toml and the options of `python -m tcran sweep` (--backend local|dask|ray, --jobs N, --store DIR, --address A, --out FILE.parquet, --no-progress, --help).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Run an xApp over E2: the TC-RAN paper's xApps, the L4S xApp, or a live monitor; E2 nodes (`tcran run --realtime --e2`, the emulator, tcran-e2 agents) connect to it.
    Xapp {
        /// Which xApp.
        #[arg(value_enum)]
        name: xapp::XappName,
        /// Where E2 nodes connect (framed TCP: a 4-byte length per E2AP PDU), e.g. 127.0.0.1:36421.
        #[arg(long, value_name = "ADDR")]
        ric_listen: String,
        /// TLS with client certificates: the CA that signs the nodes' certificates (PEM).
        #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_key"])]
        tls_ca: Option<PathBuf>,
        /// TLS: this xApp's certificate chain (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_ca")]
        tls_cert: Option<PathBuf>,
        /// TLS: this xApp's private key (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_ca")]
        tls_key: Option<PathBuf>,
        /// The scenario the nodes run: its flows' names and 5-tuples (needed by the slicing and online-game xApps).
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// How often the xApp decides (the monitor: how often it prints).
        #[arg(long, default_value = "100ms", value_name = "D")]
        period: String,
        /// RLC sojourn threshold of low-latency and online-game.
        #[arg(long, default_value = "10ms", value_name = "D")]
        threshold: String,
        /// The pipeline low-latency and handover-guard deploy (a pipeline file, docs/pipeline.md) [default: CoDel + round robin + 5G-BDP, the paper's].
        #[arg(long, value_name = "FILE")]
        pipeline: Option<PathBuf>,
        /// handover-guard: deploy once a UE's strongest neighbour is within this many dB of its serving cell.
        #[arg(long, default_value_t = 6.0, value_name = "DB")]
        ahead_db: f64,
        /// handover-guard: restore once the neighbour is more than this many dB below (more than --ahead-db).
        #[arg(long, default_value_t = 9.0, value_name = "DB")]
        clear_db: f64,
        /// Rate of the shaped slice (shaper-slice).
        #[arg(long, default_value = "15Mbit/s", value_name = "RATE")]
        rate: String,
        /// L4S ramp: no marking at or below this queue delay.
        #[arg(long, default_value = "5ms", value_name = "D")]
        low: String,
        /// L4S ramp: marking probability 1 at or above this queue delay.
        #[arg(long, default_value = "10ms", value_name = "D")]
        high: String,
        /// Only this UE (RNTI).
        #[arg(long)]
        ue: Option<u16>,
        /// The DRBs the xApp watches and changes: the gNB's downlink
        /// pipelines, or the UEs' uplink pipelines (uplink DRBs).
        #[arg(long, value_enum, default_value = "downlink")]
        direction: xapp::DirectionArg,
        /// Stop after this long, e.g. 30s [default: run until interrupted].
        #[arg(long, value_name = "D")]
        duration: Option<String>,
        /// Each reconfiguration as one JSON line on stdout.
        #[arg(long)]
        json: bool,
        /// Keep idle CPUs' wake-up latency at or below D while running (Linux PM QoS, /dev/cpu_dma_latency; needs root), e.g. 0s: control round trips without the cost of leaving a deep idle state (docs/xapps.md).
        #[arg(long, value_name = "D")]
        cpu_latency: Option<String>,
        /// Associations open at once (set up or not); connections beyond are closed at once and counted.
        #[arg(long, default_value_t = tcran_xapp::server::DEFAULT_MAX_CONNECTIONS, value_name = "N")]
        max_connections: usize,
        /// A second association claiming a connected node's GlobalE2node-ID: replace the old one (a node that reconnected) or refuse it (E2 Setup Failure, TimeToWait 10 s).
        #[arg(long, value_enum, default_value = "replace", value_name = "POLICY")]
        duplicate_node: xapp::DuplicateArg,
    },
    /// A live web dashboard of E2 nodes (pipelines, RLC buffers, charts; deploy pipelines from the page), or a finished run's outputs with a time slider (docs/dashboard.md).
    Dashboard {
        /// Where E2 nodes connect (framed TCP: a 4-byte length per E2AP PDU), e.g. 127.0.0.1:36421.
        #[arg(
            long,
            value_name = "ADDR",
            required_unless_present = "replay",
            conflicts_with = "replay"
        )]
        ric_listen: Option<String>,
        /// TLS with client certificates: the CA that signs the nodes' certificates (PEM).
        #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_key", "ric_listen"])]
        tls_ca: Option<PathBuf>,
        /// TLS: the dashboard's certificate chain (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_ca")]
        tls_cert: Option<PathBuf>,
        /// TLS: the dashboard's private key (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_ca")]
        tls_key: Option<PathBuf>,
        /// Where the page is served (this machine only unless told otherwise).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
        http: String,
        /// Serve no control at all: the page only shows.
        #[arg(long)]
        read_only: bool,
        /// Show a finished run's outputs (an output directory of run, demo or emulate) instead of live nodes.
        #[arg(long, value_name = "OUT_DIR")]
        replay: Option<PathBuf>,
        /// Stop after this long, e.g. 30s [default: run until interrupted].
        #[arg(long, value_name = "D")]
        duration: Option<String>,
        /// Associations open at once (set up or not); connections beyond are closed at once and counted.
        #[arg(long, default_value_t = tcran_xapp::server::DEFAULT_MAX_CONNECTIONS, value_name = "N")]
        max_connections: usize,
    },
    /// Panics on purpose, to test the panic hook.
    #[command(name = "internal-panic", hide = true)]
    InternalPanic,
    /// Allocates BYTES bytes on purpose, to test the out-of-memory message.
    #[command(name = "internal-allocate", hide = true)]
    InternalAllocate { bytes: usize },
}

#[derive(Debug, Subcommand)]
enum TraceCommand {
    /// Format, duration, samples and mean/min/max capacity of a trace file.
    Info {
        /// The trace file.
        file: PathBuf,
        /// The trace format; `auto` guesses from the content.
        #[arg(long, value_enum, default_value = "auto")]
        format: trace::FormatArg,
        /// Machine-readable JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Stages { json } => {
            let c = stages::catalog();
            if json {
                emit_json(&stages::to_json(&c))
            } else {
                emit(&stages::to_text(&c))
            }
        }
        Command::Schema { name } => emit_json(&schema::schema(name)),
        Command::Trace {
            command: TraceCommand::Info { file, format, json },
        } => {
            let (name, info) = trace::info(&file, format)?;
            if json {
                emit_json(&trace::to_json(&name, &info))
            } else {
                emit(&trace::to_text(&name, &info))
            }
        }
        Command::Validate { file, kind, set } => {
            let sets = overrides(&set)?;
            let (src, doc) = validate::Document::load(&file, &sets, kind)?;
            doc.check(&src)?;
            for w in doc.warnings() {
                eprintln!("warning: {}: {w}", src.name);
            }
            emit(&format!("ok {}: {}\n", src.name, doc.summary()))
        }
        Command::Demo {
            live: true,
            out,
            http,
            duration,
            ..
        } => {
            let staged = outdir::stage(&out, "demo")?;
            let mut r = dashboard::demo_live(&http, &duration)?;
            let reports = &r.reports;
            finish_run(&mut r.outcome, false, &out, staged, |dir| {
                realtime::write_report(dir, reports)
            })?;
            emit(&format!(
                "the run again, with a time slider: tcran dashboard --replay {}\n",
                out.display()
            ))
        }
        Command::Demo { json, out, .. } => {
            let staged = outdir::stage(&out, "demo")?;
            let opts = Options {
                progress: show_progress(json),
                series_dir: Some(staged.path()),
                ..Options::default()
            };
            let mut o = simulate::run_text(
                "demo",
                "scenarios/demo.toml (embedded)",
                simulate::DEMO,
                Path::new("."),
                opts,
            )?;
            finish_run(&mut o, json, &out, staged, |_| Ok(()))
        }
        Command::Run {
            file,
            json,
            seed,
            seeds,
            out,
            set,
            jobs,
            realtime,
            e2,
        } => {
            let sets = overrides(&set)?;
            let jobs = match jobs {
                Some(0) => {
                    return Err(CliError::Usage(
                        "--jobs 0: run at least one variant at a time (see `tcran run --help`)"
                            .into(),
                    ))
                }
                n => n.and_then(std::num::NonZeroUsize::new),
            };
            let out = out.unwrap_or_else(|| {
                Path::new("tcran-out").join(
                    series_csv::dir_names([simulate::scenario_name(&file).as_str()]).remove(0),
                )
            });
            let staged = outdir::stage(&out, "run")?;
            if !realtime {
                if let Some(addr) = &e2.e2 {
                    return Err(CliError::Usage(format!(
                        "--e2 {addr} needs --realtime (an E2 node runs on the wall clock; see `tcran run --help`)"
                    )));
                }
                if let Some(d) = &e2.cpu_latency {
                    return Err(CliError::Usage(format!(
                        "--cpu-latency {d} needs --realtime (a simulation waits for no wake-up; see `tcran run --help`)"
                    )));
                }
                let opts = Options {
                    seed,
                    seeds: seeds.as_ref(),
                    sets: &sets,
                    progress: show_progress(json),
                    jobs,
                    series_dir: Some(staged.path()),
                };
                let mut o = simulate::run_file(&file, opts)?;
                return finish_run(&mut o, json, &out, staged, |_| Ok(()));
            }
            if seeds.is_some() {
                return Err(CliError::Usage(
                    "--seeds runs many seeds as fast as the machine allows; --realtime runs one on the wall clock: give --seed N instead".into(),
                ));
            }
            let _awake = emulate::hold_cpu_latency(e2.cpu_latency.as_deref())?;
            let e2 = e2.options()?;
            let opts = Options {
                seed,
                seeds: None,
                sets: &sets,
                progress: false,
                jobs: None,
                series_dir: None,
            };
            let mut r = realtime::run(&file, opts, e2.as_ref())?;
            let reports = &r.reports;
            finish_run(&mut r.outcome, json, &out, staged, |dir| {
                realtime::write_report(dir, reports)
            })?;
            if !json {
                emit(&realtime::to_text(&r.reports))?;
            }
            Ok(())
        }
        Command::Reproduce {
            dir,
            out,
            figures,
            jobs,
            seeds,
            seed,
            set,
        } => {
            let sets = overrides(&set)?;
            let opts = Options {
                seed,
                seeds: seed.is_none().then_some(&seeds),
                sets: &sets,
                progress: show_progress(false),
                ..Options::default()
            };
            if jobs == Some(0) {
                return Err(CliError::Usage(
                    "--jobs 0: run at least one scenario at a time (see `tcran --help`)".into(),
                ));
            }
            let staged = outdir::stage(&out, "reproduce")?;
            // Figures asked for inside `--out` go with the rest of it.
            let figures_now = figures.as_ref().map(|f| match f.strip_prefix(&out) {
                Ok(inside) => staged.path().join(inside),
                Err(_) => f.clone(),
            });
            let settings = reproduce::Settings {
                figures: figures_now,
                jobs: jobs.unwrap_or(0),
            };
            let rep = reproduce::run(&dir, staged.path(), opts, &settings)?;
            staged.commit()?;
            emit(&reproduce::to_text(&rep, &out, figures.as_deref()))
        }
        Command::Emulate {
            file,
            variant,
            duration,
            warmup,
            out,
            server,
            pcap,
            with_scenario_flows,
            sysctl,
            spin,
            json,
            set,
            e2,
            command,
        } => {
            let sets = overrides(&set)?;
            let out = out.unwrap_or_else(|| {
                Path::new("tcran-out").join(format!("emulate-{}", simulate::scenario_name(&file)))
            });
            // Root first: the output check must not be what refuses a user
            // who cannot emulate at all.
            emulate::preflight()?;
            // The programs of an emulation may write into `--out` while it
            // runs (`ping > OUT/ping.txt`): it exists from the start, the
            // earlier run's outputs cleared.
            let staged = outdir::fresh(&out, "emulate")?;
            let opts = tcran_emu::Options {
                variant,
                duration: duration
                    .map(|d| emulate::duration("--duration", &d))
                    .transpose()?,
                warmup: warmup
                    .map(|d| emulate::duration("--warmup", &d))
                    .transpose()?,
                server_cmd: server,
                ue_cmd: command,
                pcap: pcap.then(|| out.clone()),
                modelled_flows: with_scenario_flows,
                sysctls: sysctl
                    .iter()
                    .map(|s| emulate::sysctl(s))
                    .collect::<Result<_, _>>()?,
                log_dir: Some(out.clone()),
                spin: spin
                    .map(|d| emulate::spin(&d))
                    .transpose()?
                    .unwrap_or_default(),
                e2: e2.options()?,
            };
            let _awake = emulate::hold_cpu_latency(e2.cpu_latency.as_deref())?;
            let mut e = emulate::run(&file, &sets, &opts)?;
            let report = &e.report;
            finish_run(&mut e.outcome, json, &out, staged, |dir| {
                emulate::write_report(dir, report)
            })?;
            if !json {
                emit(&emulate::to_text(&e.report))?;
            }
            std::process::exit(e.exit_code);
        }
        Command::Sweep { args } => std::process::exit(sweep::run(&args)?),
        Command::Xapp {
            name,
            ric_listen,
            tls_ca,
            tls_cert,
            tls_key,
            scenario,
            period,
            threshold,
            pipeline,
            ahead_db,
            clear_db,
            rate,
            low,
            high,
            ue,
            direction,
            duration,
            json,
            cpu_latency,
            max_connections,
            duplicate_node,
        } => xapp::run(&xapp::Args {
            max_connections,
            duplicate: duplicate_node,
            name,
            listen: ric_listen,
            tls: match (tls_ca, tls_cert, tls_key) {
                (Some(a), Some(b), Some(c)) => Some((a, b, c)),
                _ => None,
            },
            scenario,
            period,
            threshold,
            pipeline,
            ahead_db,
            clear_db,
            rate,
            low,
            high,
            ue,
            direction,
            duration,
            json,
            cpu_latency,
        }),
        Command::Dashboard {
            ric_listen,
            tls_ca,
            tls_cert,
            tls_key,
            http,
            read_only,
            replay,
            duration,
            max_connections,
        } => dashboard::run(&dashboard::Args {
            ric_listen,
            tls: match (tls_ca, tls_cert, tls_key) {
                (Some(a), Some(b), Some(c)) => Some((a, b, c)),
                _ => None,
            },
            http,
            read_only,
            replay,
            duration,
            max_connections,
        }),
        Command::InternalPanic => panic!("deliberate panic (internal-panic)"),
        Command::InternalAllocate { bytes } => {
            let v: Vec<u8> = Vec::with_capacity(bytes);
            std::hint::black_box(&v);
            emit(&format!("allocated {} bytes\n", v.capacity()))
        }
    }
}

/// Parses every `--set` argument.
fn overrides(args: &[String]) -> Result<Vec<Override>, CliError> {
    args.iter()
        .map(|a| {
            Override::parse(a).map_err(|message| CliError::Set {
                arg: a.clone(),
                message,
            })
        })
        .collect()
}

/// A progress bar only for a person watching: stderr is a terminal and
/// stdout is not carrying JSON.
fn show_progress(json: bool) -> bool {
    !json && std::io::stderr().is_terminal()
}

/// Writes the outputs and what `extra` adds into the staging directory,
/// moves them into `out` (replacing an earlier run's, [`outdir`]), then
/// prints the table (or the JSON) on stdout.
fn finish_run(
    o: &mut simulate::Outcome,
    json: bool,
    out: &Path,
    staged: outdir::Staged,
    extra: impl FnOnce(&Path) -> Result<(), CliError>,
) -> Result<(), CliError> {
    simulate::write_outputs_releasing(staged.path(), o)?;
    extra(staged.path())?;
    staged.commit()?;
    let s = &o.output.summary;
    if json {
        emit_json(&serde_json::to_value(s).expect("summary serializes"))
    } else {
        let mut text = simulate::to_text(s, o.clock);
        text.push_str(&format!(
            "\nsummary: {}\nreport:  {}\n",
            out.join("summary.json").display(),
            out.join("report.html").display()
        ));
        emit(&text)
    }
}

/// Replaces Rust's panic report (message + backtrace, depending on
/// RUST_BACKTRACE) with one line, and exits with 101 before any unwinding
/// output.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = msg.replace(['\n', '\r'], " ");
        eprintln!("tcran: internal error (a bug, please report it): {msg}{at}");
        std::process::exit(EXIT_INTERNAL);
    }));
}

/// Parses the command line; clap's multi-line usage errors become one line.
fn parse_args() -> Result<Cli, CliError> {
    Cli::try_parse().map_err(|e| {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                // Help and version go to stdout; help shown for a missing
                // subcommand is still a usage error.
                let code = if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    EXIT_USAGE
                } else {
                    0
                };
                let _ = e.print();
                std::process::exit(code);
            }
            _ => {
                // clap: "error: ..." then optional "[possible values: ..]"
                // and "tip: .." lines, then usage. Keep the first and those.
                let rendered = e.render().to_string();
                let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
                let first = lines.next().unwrap_or("invalid arguments");
                let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
                for l in lines
                    .take_while(|l| !l.starts_with("Usage:"))
                    .filter(|l| !l.starts_with("For more information"))
                {
                    msg.push_str(if msg.ends_with(':') { " " } else { "; " });
                    msg.push_str(l);
                }
                CliError::Usage(format!("{msg} (see `tcran --help`)"))
            }
        }
    })
}

/// The system allocator, except that an allocation it refuses (a memory
/// limit such as `ulimit -v` or a cgroup's, reached) ends the program with
/// one line and exit code 2 instead of Rust's abort message.
struct OneLineOutOfMemory;

// The only way to see a failed allocation in stable Rust: wrap the system
// allocator; every call is passed through unchanged.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for OneLineOutOfMemory {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from `System`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System`; the caller's contract holds.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new) };
        if p.is_null() {
            out_of_memory(new);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: OneLineOutOfMemory = OneLineOutOfMemory;

/// Writes the out-of-memory line without allocating (into a stack buffer)
/// and exits with 2.
#[cold]
fn out_of_memory(size: usize) -> ! {
    use std::io::Write;
    let mut buf = [0u8; 512];
    let mut w: &mut [u8] = &mut buf;
    let _ = writeln!(
        w,
        "error: out of memory: cannot allocate {size} more bytes (a memory limit such as `ulimit -v` was reached; shorten the run, use fewer flows, variants or seeds, or raise the limit)"
    );
    let n = 512 - w.len();
    let _ = std::io::stderr().write_all(&buf[..n]);
    std::process::exit(EXIT_USAGE);
}

/// A file-size limit (`ulimit -f`) reached by a write kills the process
/// with SIGXFSZ unless the signal is handled: with this handler the write
/// fails with "File too large" instead, reported as one line (exit 2).
fn survive_file_size_limit() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, flag);
}

/// Sends the libraries' `log` lines (E2 failures, refused connections) to
/// stderr as `warning: ...`, so that a user sees failures without a flag;
/// RUST_LOG changes the level (`RUST_LOG=info`, `RUST_LOG=off`).
fn attach_logger() {
    use std::io::Write;
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .format(|buf, r| {
            let level = match r.level() {
                log::Level::Error => "error",
                log::Level::Warn => "warning",
                log::Level::Info => "info",
                log::Level::Debug => "debug",
                log::Level::Trace => "trace",
            };
            writeln!(buf, "{level}: {}", r.args())
        })
        .init();
}

fn main() {
    install_panic_hook();
    survive_file_size_limit();
    attach_logger();
    let result = parse_args().and_then(run);
    if let Err(e) = result {
        eprintln!("error: {}", e.one_line());
        std::process::exit(e.exit_code());
    }
}
