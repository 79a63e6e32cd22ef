//! One emulation from start to end: checks, namespaces and devices, the
//! hosts' commands, the relay, and the clean-up.
//!
//! Contract:
//! - Hosts: one network namespace for the servers (address 198.51.100.1,
//!   route to the UEs' 10.45.0.0/16 through its TUN device) and one per UE
//!   of the scenario (its address [`tcran_gnb::ue_address`], default route
//!   through its device). Only the emulator reads and writes the devices.
//! - The run ends when the UE command exits, at the duration (`--duration`,
//!   default the scenario's), or on SIGTERM (and SIGINT unless the UE side
//!   is an interactive shell, which takes its own Ctrl-C).
//! - Everything made is removed on every way out: normal end, error,
//!   signal, panic (a panic hook removes this process's namespaces and
//!   their processes); namespaces of an emulator that was killed are
//!   found by their dead process id and removed at the next start.

use crate::clock::Clock;
use crate::e2::{E2Link, E2Options, E2Report};
use crate::error::EmuError;
use crate::netns::{self, Namespace};
use crate::pcap::Capture;
use crate::relay::{self, Io, Links, RelayStats, Stop};
use crate::tundev::{DeviceDrops, Tun};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tcran_core::{Duration, Rnti};
use tcran_sim::{RunOutput, Sim, SimConfig};

/// The server side's address.
pub const SERVER_ADDR: &str = "198.51.100.1";

/// How to emulate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The variant to run (required when the scenario has several).
    pub variant: Option<String>,
    /// Longest run; default the scenario's `duration`.
    pub duration: Option<Duration>,
    /// Statistics ignore what happens before this; default 0 (not the
    /// scenario's warm-up: live traffic starts when its programs do).
    pub warmup: Option<Duration>,
    /// A shell command line run in the server namespace (e.g. `iperf3 -s`).
    pub server_cmd: Option<String>,
    /// The command run in the (first) UE's namespace; empty: an
    /// interactive shell.
    pub ue_cmd: Vec<String>,
    /// Write pcapng captures of every link into this directory.
    pub pcap: Option<PathBuf>,
    /// Run the scenario's modelled flows beside the live ones.
    pub modelled_flows: bool,
    /// `key=value` sysctls set in every namespace (e.g.
    /// `net.ipv4.tcp_ecn=1`).
    pub sysctls: Vec<(String, String)>,
    /// Where the server command's output goes (`server.log`); none: discarded.
    pub log_dir: Option<PathBuf>,
    /// Wake this long before each deadline and busy-wait the rest (0:
    /// sleep until the deadline).
    pub spin: Duration,
    /// Make the cell an E2 node of this RIC (`--e2 HOST:PORT`).
    pub e2: Option<E2Options>,
}

/// What an emulation produced.
#[derive(Debug)]
pub struct Outcome {
    /// The variant that ran and its configuration.
    pub variant: String,
    pub config: SimConfig,
    pub output: RunOutput,
    /// The UE command's exit code (128 + signal when a signal ended it).
    pub exit_code: i32,
    pub report: Report,
}

/// What the emulator measured about itself (`emulation.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Why the run ended: `duration`, `command` or `signal`.
    pub stopped_by: &'static str,
    /// Seconds of wall clock the run lasted.
    pub ran_s: f64,
    /// CPU seconds the emulator used while relaying (user + system), and
    /// per packet relayed (either way), microseconds.
    pub cpu_s: f64,
    pub cpu_us_per_packet: f64,
    pub relay: RelayStats,
    /// The RAN node's own count of events run late.
    pub node_timing: tcran_gnb::Timing,
    /// What the kernel dropped at the hosts' TUN devices, read from
    /// their counters at the end of the run (outside the model; not in
    /// the ledger of the node); `None` if `ip` could not read them (said
    /// on stderr; the run's results stand).
    pub device_drops: Option<DeviceDrops>,
    /// Namespaces of killed emulators removed at start.
    pub leftovers_removed: Vec<String>,
    /// What the cell's E2 node did (with `--e2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2: Option<E2Report>,
}

/// Checks that this machine can emulate: root, the TUN driver, iproute2.
pub fn preflight() -> Result<(), EmuError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(EmuError::NotRoot);
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(|e| EmuError::NoTun(e.to_string()))?;
    Command::new("ip")
        .arg("-V")
        .output()
        .map_err(|_| EmuError::Missing("ip"))?;
    Ok(())
}

/// The variant to emulate, as a scenario of its own.
pub fn pick_variant(cfg: &SimConfig, want: Option<&str>) -> Result<(String, SimConfig), EmuError> {
    let runs = cfg.runs();
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    match want {
        Some(w) => runs.iter().find(|(n, _)| n == w).cloned().ok_or_else(|| {
            EmuError::Scenario(format!(
                "--variant {w}: no such variant (the scenario has: {})",
                names.join(", ")
            ))
        }),
        None if runs.len() == 1 => Ok(runs[0].clone()),
        None => Err(EmuError::Scenario(format!(
            "the scenario has {} variants ({}): choose one with --variant NAME",
            runs.len(),
            names.join(", ")
        ))),
    }
}

/// Runs one emulation; `base` resolves relative trace paths.
pub fn emulate(cfg: &SimConfig, base: &Path, opts: &Options) -> Result<Outcome, EmuError> {
    preflight()?;
    let (variant, mut vcfg) = pick_variant(cfg, opts.variant.as_deref())?;
    if let Some(d) = opts.duration {
        vcfg.duration = d;
    }
    vcfg.warmup = opts.warmup.unwrap_or(Duration::ZERO);
    let mut sim = Sim::new_live(&vcfg, base, opts.modelled_flows)
        .map_err(|e| EmuError::Scenario(e.to_string()))?;
    let mut e2 = match &opts.e2 {
        Some(o) => Some(E2Link::new(o, &sim, 1)?),
        None => None,
    };
    // From here on a signal ends the run cleanly instead of the process.
    let stop = Arc::new(AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop));
    if !opts.ue_cmd.is_empty() {
        // An interactive shell takes its own Ctrl-C.
        let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop));
    }
    let leftovers = netns::remove_leftovers();
    install_cleanup_hook();
    let pid = std::process::id();
    let server_ns = Namespace::create("srv")?;
    let mut ue_ns = Vec::new();
    for u in &vcfg.ues {
        ue_ns.push((Rnti(u.rnti), Namespace::create(&format!("ue{}", u.rnti))?));
    }
    let server = Tun::create(
        &format!("tce{pid}s"),
        &server_ns,
        SERVER_ADDR,
        "10.45.0.0/16",
    )?;
    let mut ues = Vec::new();
    for (k, (rnti, ns)) in ue_ns.iter().enumerate() {
        let addr = tcran_gnb::ue_address(*rnti).to_string();
        ues.push((
            *rnti,
            Tun::create(&format!("tce{pid}u{k}"), ns, &addr, "default")?,
        ));
    }
    for (key, value) in &opts.sysctls {
        server_ns.sysctl(key, value)?;
        for (_, ns) in &ue_ns {
            ns.sysctl(key, value)?;
        }
    }
    let epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut links = Links {
        server_pcap: match &opts.pcap {
            Some(dir) => Some(Capture::create(
                &dir.join("server.pcapng"),
                server.name(),
                epoch,
            )?),
            None => None,
        },
        ue_pcaps: ues
            .iter()
            .map(|(rnti, tun)| match &opts.pcap {
                Some(dir) => {
                    Capture::create(&dir.join(format!("ue{}.pcapng", rnti.0)), tun.name(), epoch)
                        .map(Some)
                }
                None => Ok(None),
            })
            .collect::<Result<_, _>>()?,
        server,
        ues,
    };

    let clock = Clock::start();
    let cpu_start = cpu_seconds();
    let mut server_child = match &opts.server_cmd {
        Some(cmd) => Some(spawn_server(&server_ns, cmd, opts.log_dir.as_deref())?),
        None => None,
    };
    let (program, args) = match opts.ue_cmd.split_first() {
        Some((p, a)) => (p.clone(), a.to_vec()),
        None => (
            std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into()),
            Vec::new(),
        ),
    };
    let first_ue = &ue_ns[0].1;
    let mut ue_child = first_ue
        .command(&program, &args)
        .spawn()
        .map_err(|e| EmuError::Spawn {
            command: program.clone(),
            detail: e.to_string(),
        })?;

    let mut stats = RelayStats::default();
    let until = tcran_core::Instant::ZERO + vcfg.duration;
    let mut ue_status: Option<ExitStatus> = None;
    let relayed = relay::run(
        &mut sim,
        Io {
            links: Some(&mut links),
            e2: e2.as_mut(),
        },
        &clock,
        relay::Plan {
            until,
            spin: opts.spin,
            realtime: true,
        },
        &stop,
        &mut || {
            if let Ok(Some(s)) = ue_child.try_wait() {
                ue_status = Some(s);
            }
            ue_status.is_some()
        },
        &mut stats,
    );
    if ue_status.is_none() {
        ue_status = Some(end_child(&mut ue_child));
    }
    if let Some(c) = server_child.as_mut() {
        end_child(c);
    }
    // One cell: one node.
    let e2 = e2.and_then(|l| E2Link::finish(l).pop());
    let (stopped, end) = relayed?;
    let cpu_s = cpu_seconds() - cpu_start;
    stats.finish();
    let packets = stats.downlink_in + stats.uplink_in;
    let node_timing = *sim.gnb().timing();
    let output = sim.finish_at(end);
    let device_drops = std::iter::once(&links.server)
        .chain(links.ues.iter().map(|(_, t)| t))
        .try_fold(DeviceDrops::default(), |mut sum, tun| {
            sum += tun.kernel_drops()?;
            Ok::<_, EmuError>(sum)
        })
        .map_err(|e| eprintln!("warning: the hosts' device drops are not known: {e}"))
        .ok();
    drop(links);
    drop(ue_ns);
    drop(server_ns);
    let exit_code = ue_status.map_or(1, exit_code);
    Ok(Outcome {
        variant,
        config: vcfg,
        output,
        exit_code,
        report: Report {
            stopped_by: match stopped {
                Stop::Duration => "duration",
                Stop::Done => "command",
                Stop::Signal => "signal",
            },
            ran_s: end.as_secs_f64(),
            cpu_s,
            cpu_us_per_packet: if packets == 0 {
                0.0
            } else {
                cpu_s * 1e6 / packets as f64
            },
            relay: stats,
            node_timing,
            device_drops,
            leftovers_removed: leftovers,
            e2,
        },
    })
}

fn spawn_server(ns: &Namespace, cmd: &str, log_dir: Option<&Path>) -> Result<Child, EmuError> {
    let (out, err) = match log_dir {
        Some(dir) => {
            let path = dir.join("server.log");
            let f = std::fs::File::create(&path)
                .map_err(|e| EmuError::io(path.display().to_string(), e))?;
            let g = f
                .try_clone()
                .map_err(|e| EmuError::io(path.display().to_string(), e))?;
            (Stdio::from(f), Stdio::from(g))
        }
        None => (Stdio::null(), Stdio::null()),
    };
    ns.command("sh", &["-c".to_string(), cmd.to_string()])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| EmuError::Spawn {
            command: cmd.to_string(),
            detail: e.to_string(),
        })
}

/// Ends a child: SIGTERM, up to a second to exit, then SIGKILL.
fn end_child(c: &mut Child) -> ExitStatus {
    if let Ok(Some(s)) = c.try_wait() {
        return s;
    }
    let pid = nix::unistd::Pid::from_raw(c.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    for _ in 0..100 {
        if let Ok(Some(s)) = c.try_wait() {
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = c.kill();
    c.wait().unwrap_or_else(|_| {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(9)
    })
}

/// CPU time this process used so far (user + system), seconds.
fn cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_SELF).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
        t(u.user_time()) + t(u.system_time())
    })
}

fn exit_code(s: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

/// On a panic, removes this process's namespaces (and the processes in
/// them) before the previous hook reports it.
fn install_cleanup_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        netns::remove_own();
        previous(info);
    }));
}
