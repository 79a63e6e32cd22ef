//! `tcran xapp NAME --ric-listen ADDR`: the TC-RAN paper's xApps (and the
//! L4S xApp, and a live monitor) as programs speaking E2 to any number of
//! tcran E2 nodes (`tcran run --realtime --e2`, the emulator, a gNB with
//! tcran-e2's agent). Each node gets its own instance of the controller,
//! kept across reconnections of the same node (by GlobalE2node-ID).

use crate::error::CliError;
use crate::load::read_config;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use tcran_control::controller::{AnyController, ControllerConfig, ControllerKind};
use tcran_control::Direction;
use tcran_core::{BitRate, Duration};
use tcran_sim::scenario::{FlowKind, SimConfig};
use tcran_xapp::adapter::{self, AdapterOptions, FlowEntry, Reconfiguration};
use tcran_xapp::server::DuplicatePolicy;
use tcran_xapp::{xapps, NodeEvent, NodeInfo, TcIndication, Trigger, Xapp, XappConfig};

/// The built-in xApps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum XappName {
    /// TC-RAN Fig. 6a: the first flow in one slice, the others in another, 50 %-50 %.
    FlowSlicing,
    /// TC-RAN Fig. 6b: every flow but the last in a slice shaped at --rate.
    ShaperSlice,
    /// TC-RAN Fig. 7: RLC sojourn above --threshold -> CoDel + round robin + 5G-BDP.
    LowLatency,
    /// TC-RAN Figs. 8-10: RLC sojourn above --threshold -> a CoDel queue for the greedy flows.
    OnlineGame,
    /// Brunello sec. 4.2: ECN ramp marking with 5G-BDP once ECT(1) traffic is seen.
    L4s,
    /// Mobility: --pipeline while a UE's strongest neighbour is within --ahead-db of its serving cell (its measurement reports), until --clear-db below.
    HandoverGuard,
    /// A live text view of every DRB of every node: queues, sojourn, drops, pacer.
    Monitor,
}

/// `--direction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DirectionArg {
    /// The gNB's pipelines of the downlink DRBs.
    Downlink,
    /// The UEs' pipelines of the uplink DRBs.
    Uplink,
}

/// `--duplicate-node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DuplicateArg {
    /// The new association replaces the old one (the node reconnected).
    Replace,
    /// The new association gets E2 Setup Failure; the connected node stays.
    Refuse,
}

/// What `tcran xapp` was asked.
#[derive(Debug, Clone)]
pub struct Args {
    pub name: XappName,
    pub listen: String,
    pub tls: Option<(PathBuf, PathBuf, PathBuf)>,
    pub scenario: Option<PathBuf>,
    pub period: String,
    pub threshold: String,
    /// What low-latency and handover-guard deploy, instead of the
    /// paper's pipeline.
    pub pipeline: Option<PathBuf>,
    pub ahead_db: f64,
    pub clear_db: f64,
    pub rate: String,
    pub low: String,
    pub high: String,
    pub ue: Option<u16>,
    pub direction: DirectionArg,
    pub duration: Option<String>,
    pub json: bool,
    pub cpu_latency: Option<String>,
    pub max_connections: usize,
    pub duplicate: DuplicateArg,
}

fn usage(m: String) -> CliError {
    CliError::Usage(m)
}

fn duration(flag: &str, text: &str) -> Result<Duration, CliError> {
    crate::emulate::duration(flag, text)
}

/// The flows of a scenario (its first variant) as the xApp addresses them.
pub fn scenario_flows(path: &Path) -> Result<Vec<FlowEntry>, CliError> {
    let src = read_config(path)?;
    let cfg: SimConfig = src.parse_with(&[])?;
    let base = path.parent().unwrap_or(Path::new("."));
    let (_, first) = cfg
        .runs()
        .into_iter()
        .next()
        .ok_or_else(|| usage(format!("{}: the scenario has no run", src.name)))?;
    let sim = tcran_sim::Sim::new(&first, base).map_err(|error| CliError::Config {
        file: src.name.clone(),
        error,
    })?;
    Ok(sim
        .flow_views()
        .into_iter()
        .map(|f| {
            // Bulk TCP downloads are the greedy flows (no size: never end).
            let greedy = first
                .flows
                .iter()
                .any(|c| c.name == f.name && matches!(c.kind, FlowKind::Tcp { size: None, .. }));
            FlowEntry {
                drb: f.drb.unwrap_or(1),
                name: f.name,
                kind: f.kind,
                rnti: f.rnti,
                tuple: f.tuple,
                greedy,
            }
        })
        .collect())
}

fn controller(args: &Args, flows: &[FlowEntry]) -> Result<AnyController, CliError> {
    let names: Vec<String> = flows.iter().map(|f| f.name.clone()).collect();
    let need_flows = || {
        if flows.is_empty() {
            Err(usage(
                "this xApp addresses flows by 5-tuple: give --scenario FILE (the flows of the scenario the node runs)"
                    .into(),
            ))
        } else {
            Ok(())
        }
    };
    let threshold = duration("--threshold", &args.threshold)?;
    let config_error = |error| CliError::Config {
        file: "tcran xapp".into(),
        error,
    };
    let kind: ControllerKind = match args.name {
        XappName::FlowSlicing => {
            need_flows()?;
            xapps::flow_slicing(&names).map_err(config_error)?
        }
        XappName::ShaperSlice => {
            need_flows()?;
            let rate: BitRate = serde_json::from_value(serde_json::json!(args.rate))
                .map_err(|e| usage(format!("--rate {}: {e} (e.g. 15Mbit/s)", args.rate)))?;
            xapps::shaper_slice(&names, rate).map_err(config_error)?
        }
        XappName::LowLatency => match &args.pipeline {
            None => xapps::low_latency(threshold),
            Some(path) => ControllerKind::SojournDeploy {
                threshold,
                pipeline: read_config(path)?.parse_with(&[])?,
            },
        },
        XappName::OnlineGame => {
            need_flows()?;
            xapps::online_game(threshold, BitRate(1_000_000))
        }
        XappName::L4s => {
            let low = duration("--low", &args.low)?;
            let high = duration("--high", &args.high)?;
            if low >= high {
                return Err(usage(format!(
                    "--low {} --high {}: the ramp needs low < high",
                    args.low, args.high
                )));
            }
            let c = xapps::L4sOnScalable::new(xapps::L4sOnScalable::default_pipeline(low, high))
                .map_err(config_error)?;
            return Ok(AnyController::Custom(Box::new(c)));
        }
        XappName::HandoverGuard => {
            let pipeline = match &args.pipeline {
                None => xapps::low_latency_pipeline(),
                Some(path) => read_config(path)?.parse_with(&[])?,
            };
            xapps::handover_guard(args.ahead_db, args.clear_db, pipeline)
        }
        XappName::Monitor => unreachable!("the monitor has no controller"),
    };
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    ControllerConfig {
        name: None,
        period: duration("--period", &args.period)?,
        start: None,
        ue: args.ue,
        drb: None,
        // The adapter picks the DRBs of `--direction` (`AdapterOptions`).
        direction: Direction::default(),
        kind,
    }
    .build(&refs)
    .map_err(config_error)
}

fn config(args: &Args) -> Result<XappConfig, CliError> {
    use std::net::ToSocketAddrs;
    let addr = args
        .listen
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            usage(format!(
                "--ric-listen {}: not an address: expected HOST:PORT, e.g. 127.0.0.1:36421",
                args.listen
            ))
        })?;
    if args.max_connections == 0 {
        return Err(usage(
            "--max-connections 0: at least 1 (one association per E2 node)".into(),
        ));
    }
    let mut cfg = XappConfig::tcp(addr);
    cfg.max_connections = args.max_connections;
    cfg.duplicate = match args.duplicate {
        DuplicateArg::Replace => DuplicatePolicy::Replace,
        DuplicateArg::Refuse => DuplicatePolicy::Refuse,
    };
    if let Some((ca, cert, key)) = &args.tls {
        let pem = tcran_e2::transport::TlsPem::read(ca, cert, key).map_err(|e| CliError::Read {
            file: e.file,
            reason: e.error.to_string(),
        })?;
        let tls = tcran_e2::transport::tls_server_config(&pem)
            .map_err(|e| usage(format!("--tls-ca/--tls-cert/--tls-key: {e}")))?;
        cfg.listen[0].transport = tcran_xapp::ListenTransport::Tls(tls);
    }
    Ok(cfg)
}

fn say(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{line}");
}

fn out(line: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}

fn print_change(node: &NodeInfo, r: &Reconfiguration, json: bool) {
    if json {
        out(&serde_json::json!({
            "node": node.name,
            "t_s": r.at.as_secs_f64(),
            "rnti": r.drb.rnti.0,
            "drb": r.drb.drb.0,
            "direction": r.drb.dir.as_str(),
            "what": r.what,
            "applied": r.result.is_ok(),
            "refusal": r.result.as_ref().err(),
        })
        .to_string());
    } else {
        out(&format!(
            "t = {:8.3} s  {}  {}: {}  [{}]",
            r.at.as_secs_f64(),
            node.name,
            r.drb,
            r.what,
            match &r.result {
                Ok(()) => "applied".to_string(),
                Err(e) => format!("refused: {e}"),
            }
        ));
    }
}

/// Runs the xApp until `--duration` (or forever).
pub fn run(args: &Args) -> Result<(), CliError> {
    if args.pipeline.is_some()
        && !matches!(args.name, XappName::LowLatency | XappName::HandoverGuard)
    {
        return Err(usage(
            "--pipeline is the pipeline low-latency and handover-guard deploy; the other xApps take none".into(),
        ));
    }
    let flows = match &args.scenario {
        Some(p) => scenario_flows(p)?,
        None => Vec::new(),
    };
    let period = duration("--period", &args.period)?;
    if period < Duration::from_millis(1) || period > Duration::from_secs(10) {
        return Err(usage(format!(
            "--period {}: must be within 1ms..=10s",
            args.period
        )));
    }
    // Validate the controller before listening.
    if args.name != XappName::Monitor {
        controller(args, &flows)?;
    }
    let stop_after = args
        .duration
        .as_deref()
        .map(|d| duration("--duration", d))
        .transpose()?;
    let cfg = config(args)?;
    let _awake = crate::emulate::hold_cpu_latency(args.cpu_latency.as_deref())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Xapp(format!("cannot start the runtime: {e}")))?;
    // Controllers need not be `Send` (the simulator's trait does not ask
    // it): they run on this thread, the E2 termination on the workers.
    let local = tokio::task::LocalSet::new();
    rt.block_on(local.run_until(async move {
        let x = Xapp::start(cfg)
            .await
            .map_err(|e| CliError::Xapp(e.to_string()))?;
        // Listen to node events before anyone learns the address: a node
        // that connects at once must not be missed.
        let events = x.events();
        let name = clap::ValueEnum::to_possible_value(&args.name)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        say(&format!(
            "tcran xapp {name}: listening for E2 nodes on {} ({})",
            x.local_addrs()[0],
            if args.tls.is_some() {
                "TLS"
            } else {
                "framed TCP"
            }
        ));
        tokio::task::spawn_local(give_back_memory(x.clone()));
        let main = serve(x.clone(), events, args.clone(), flows, period);
        match stop_after {
            Some(d) => {
                let _ =
                    tokio::time::timeout(std::time::Duration::from_nanos(d.as_nanos()), main).await;
            }
            None => main.await,
        }
        x.shutdown();
        Ok(())
    }))
}

/// One controller serving several nodes: each node's adapter calls it
/// with that node's view (on the xApp's one thread, never across an
/// await: the lock is never contended).
#[derive(Debug)]
struct Shared(Arc<Mutex<AnyController>>);

impl tcran_control::controller::Controller for Shared {
    fn on_tick(
        &mut self,
        view: &tcran_control::controller::ControlView<'_>,
        out: &mut Vec<tcran_control::controller::Command>,
    ) {
        // A controller that panicked would have ended the xApp: the lock
        // is never poisoned while it runs.
        let mut c = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        c.on_tick(view, out);
    }
}

/// After many connections closed (a flood of idle sockets), hands their
/// freed memory back to the system: glibc keeps what its per-thread
/// arenas freed (5,000 closed connections: 16 MB kept) unless asked.
async fn give_back_memory(x: Xapp) {
    let mut peak = 0;
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(2));
    loop {
        tick.tick().await;
        let open = x.open_connections();
        peak = peak.max(open);
        if peak - open >= 64 {
            trim();
            peak = open;
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // malloc_trim has no safe wrapper; it takes a size and returns an int
fn trim() {
    // SAFETY: malloc_trim only walks glibc's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

async fn serve(
    x: Xapp,
    mut events: tokio::sync::broadcast::Receiver<NodeEvent>,
    args: Args,
    flows: Vec<FlowEntry>,
    period: Duration,
) {
    // Nodes that connected before `events` was taken, then the events; a
    // node seen both ways is served once.
    let mut early: std::collections::VecDeque<NodeEvent> =
        x.nodes().into_iter().map(NodeEvent::Connected).collect();
    let mut served = std::collections::BTreeSet::new();
    // Per node name, so that a node that reconnects meets the same
    // controller (and its memory of what it already did).
    let controllers: Rc<RefCell<BTreeMap<String, AnyController>>> = Rc::default();
    // handover-guard: one guard for every node, so that a bearer guarded
    // in its source cell is restored in its target (the guard remembers
    // the pipeline it replaced; the target got the guarded one with the
    // UE's context). RNTIs are the run's, unique across its cells.
    let shared: Option<Arc<Mutex<AnyController>>> = match args.name {
        XappName::HandoverGuard => match controller(&args, &flows) {
            Ok(c) => Some(Arc::new(Mutex::new(c))),
            Err(e) => return say(&format!("error: {}", e.one_line())),
        },
        _ => None,
    };
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let mut opts = AdapterOptions::every(std::time::Duration::from_nanos(period.as_nanos()));
    opts.ue = args.ue;
    opts.direction = match args.direction {
        DirectionArg::Downlink => Direction::Downlink,
        DirectionArg::Uplink => Direction::Uplink,
    };
    opts.flows = flows;
    loop {
        let ev = match early.pop_front() {
            Some(e) => e,
            None => match events.recv().await {
                Ok(e) => e,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return,
            },
        };
        match ev {
            NodeEvent::Connected(n) => {
                if !served.insert(n.id) {
                    continue;
                }
                say(&format!(
                    "node {} ({}) connected from {}{}: DRBs {}",
                    n.id,
                    n.name,
                    n.peer,
                    if n.tls { " over TLS" } else { "" },
                    n.drbs
                        .iter()
                        .map(|d| match d.dir {
                            Direction::Downlink => format!("{}/{}", d.rnti.0, d.drb.0),
                            Direction::Uplink => format!("{}/ul{}", d.rnti.0, d.drb.0),
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
                let x = x.clone();
                let stop = stop.clone();
                if args.name == XappName::Monitor {
                    tokio::task::spawn_local(monitor(x, n, opts.period));
                    continue;
                }
                let controllers = controllers.clone();
                let shared = shared.clone();
                let (opts, args) = (opts.clone(), args.clone());
                tokio::task::spawn_local(async move {
                    let stored = controllers.borrow_mut().remove(&n.name);
                    let mut c = match (stored, shared) {
                        (Some(c), _) => c,
                        (None, Some(shared)) => AnyController::Custom(Box::new(Shared(shared))),
                        (None, None) => match controller(&args, &opts.flows) {
                            Ok(c) => c,
                            Err(e) => return say(&format!("error: {}", e.one_line())),
                        },
                    };
                    let json = args.json;
                    let info = n.clone();
                    let mut on_change = move |r: &Reconfiguration| print_change(&info, r, json);
                    if let Err(e) =
                        adapter::run(&x, n.id, &mut c, &opts, stop, &mut on_change).await
                    {
                        say(&format!("node {} ({}): {e}", n.id, n.name));
                    }
                    controllers.borrow_mut().insert(n.name.clone(), c);
                });
            }
            // Connections that never completed E2 Setup are logged by the
            // SDK, a line per doubling (a flood of them is one line each).
            NodeEvent::Disconnected { id, name, cause } => {
                if served.remove(&id) {
                    say(&format!("node {id} ({name}) disconnected: {cause}"))
                }
            }
            NodeEvent::Refused { peer, cause } => say(&format!("refused {peer}: {cause}")),
            NodeEvent::ErrorIndication { id, what } => {
                say(&format!("node {id} sent an Error Indication: {what}"))
            }
        }
    }
}

/// The newest indication of a node and how many it replaced: the monitor
/// prints at its period whatever the node sends (a node that floods costs
/// a counter, not a block per indication).
#[derive(Debug)]
pub struct Latest<T> {
    latest: Option<T>,
    skipped: u64,
}

impl<T> Default for Latest<T> {
    fn default() -> Self {
        Latest {
            latest: None,
            skipped: 0,
        }
    }
}

impl<T> Latest<T> {
    /// A new indication; the one waiting, if any, is skipped.
    pub fn offer(&mut self, t: T) {
        if self.latest.replace(t).is_some() {
            self.skipped += 1;
        }
    }
    /// The indication to print now and how many were skipped before it.
    pub fn take(&mut self) -> Option<(T, u64)> {
        let t = self.latest.take()?;
        Some((t, std::mem::take(&mut self.skipped)))
    }
}

async fn monitor(x: Xapp, n: NodeInfo, period: std::time::Duration) {
    let ms = period.as_millis().clamp(1, 86_400_000) as u32;
    let mut sub = match x
        .subscribe_tc(n.id, Trigger::Periodic { period_ms: ms }, &[])
        .await
    {
        Ok(s) => s,
        Err(e) => return say(&format!("node {} ({}): {e}", n.id, n.name)),
    };
    let print = |(ind, skipped): (TcIndication, u64)| {
        if skipped > 0 {
            out(&format!(
                "node {}: {skipped} indication(s) skipped (one block per --period)",
                n.name
            ));
        }
        out(&xapps::render(&n.name, &ind));
    };
    let mut latest = Latest::default();
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            ind = sub.recv() => match ind {
                Some(ind) => latest.offer(ind),
                None => break,
            },
            _ = tick.tick() => {
                if let Some(l) = latest.take() {
                    print(l);
                }
            }
        }
    }
    if let Some(l) = latest.take() {
        print(l);
    }
}

#[cfg(test)]
mod tests {
    use super::Latest;

    #[test]
    fn latest_keeps_the_newest_and_counts_the_rest() {
        let mut l = Latest::default();
        assert_eq!(l.take(), None);
        for i in 0..5 {
            l.offer(i);
        }
        assert_eq!(l.take(), Some((4, 4)));
        assert_eq!(l.take(), None);
        l.offer(9);
        assert_eq!(l.take(), Some((9, 0)));
    }
}
