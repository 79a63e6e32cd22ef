//! The E2 node of a real-time run: the scenario's cell, reachable by a
//! near-RT RIC and its xApps (crate `tcran-e2`, docs/e2.md).
//!
//! Contract:
//! - One E2 node per cell: [`E2Link`] runs one agent per cell of the
//!   simulator engine (one for a single-cell run, one per `[[cells]]`
//!   entry otherwise) on the real-time loop's thread ([`crate::relay`]),
//!   between two events of the engine, each with its own association and
//!   its socket I/O on a thread of its own ([`tcran_e2::session`]); a
//!   received PDU wakes the loop at once.
//! - Node ids: a single-cell run's node has the gNB id the caller gives
//!   (the variant's index plus one); with `[[cells]]`, cell `id`'s node
//!   has gNB id `1000 × (that number) + id` ([`cell_gnb_id`]; cell ids
//!   0..=999), so that the RIC tells the cells and the variants apart and
//!   a reader sees both in the id.
//! - The RIC sees the cell's RAN node ([`tcran_gnb::Gnb`], through
//!   `tcran_gnb`'s `RanNode`): the UEs attached to that cell at the
//!   moment (a UE that hands over leaves one node's reports and appears
//!   in the other's), the cell's KPM counters with its handover counts
//!   ([`Sim::handover_counters`]). Every change it asks for goes through
//!   the engine to that cell's node ([`Sim::apply_control_in`] for
//!   pipelines, `Sim::set_slices_in` for the MAC's slices,
//!   `Sim::map_qos_flow_in` for SDAP's QoS flow map), the node's control
//!   surface with the refusal semantics of the in-process controllers (a
//!   DRB of a UE not in the cell is refused: RIC Control Failure,
//!   control-failed-to-execute, E2AP 9.2.1.2), and is recorded in the
//!   run's reconfigurations (`by = "e2"`) like theirs.
//! - Transports: framed TCP (FLEXRIC-INTEROP.md), TLS over it, or SCTP
//!   where the kernel has it (refused in one line where it has not).
//! - A lost association is reconnected with backoff and set up again
//!   (`tcran_e2::backoff`: TimeToWait honoured, exponential with jitter);
//!   the engine and its pipelines run on unchanged meanwhile. Failures are
//!   counted in [`E2Report`] and logged by the session (`log`, once per
//!   kind and run of failures); `verbose` adds every association event.

use crate::error::EmuError;
use serde::Serialize;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use tcran_control::{DrbKey, KpmCounters, LowerLayerKpis, RanNode, TcView};
use tcran_core::{DrbId, Instant, Rnti};
use tcran_e2::agent::{AgentConfig, AgentEvent, RicProfile};
use tcran_e2::session::{Session, SessionEvent};
use tcran_e2::sm::{e2sm_tcran, flexric_slice, flexric_stats, flexric_tc, kpm, rc, AnyModel};
use tcran_e2::transport::{self, Connector, TlsPem};
use tcran_e2::Agent;
use tcran_sim::Sim;
use tcran_tc::{Applied, Change, Refused};

/// Which transport carries E2AP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum E2Transport {
    /// SCTP (port 36421): detected at run time.
    Sctp,
    /// TCP with a 4-byte big-endian length per PDU.
    #[default]
    Tcp,
    /// The framed TCP transport inside TLS (rustls), with client certificates.
    Tls,
}

/// TLS material (PEM files).
#[derive(Debug, Clone, Default)]
pub struct TlsFiles {
    /// The CA that signed the RIC's certificate.
    pub ca: Option<PathBuf>,
    /// The node's certificate chain and private key.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The name the RIC's certificate must carry [default: the host of `--e2`].
    pub server_name: Option<String>,
}

/// How the run's cell meets its RIC.
#[derive(Debug, Clone)]
pub struct E2Options {
    /// HOST:PORT of the RIC's E2 termination.
    pub addr: String,
    pub transport: E2Transport,
    pub tls: TlsFiles,
    /// The DRB FlexRIC's TC model reports and controls, downlink or
    /// uplink [default: the cell's first downlink (RNTI, DRB)].
    pub tc_drb: Option<DrbKey>,
    /// Which RIC: `Auto` (FlexRIC's rules until the RIC sends a RIC
    /// Service Query, which adds E2SM-TCRAN and E2AP's failures),
    /// `Standard` E2AP (every model at E2 Setup, refused controls answered
    /// with RIC Control Failure) or `Flexric` (FlexRIC's RAN functions
    /// only, refused controls acknowledged, logged and counted: FlexRIC
    /// asserts on anything else). See `tcran_e2::agent`.
    pub profile: RicProfile,
    /// Print the association's events on stderr.
    pub verbose: bool,
}

/// What the E2 node did during the run (`e2.json`, `emulation.json`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct E2Report {
    /// The RIC's address and the node's gNB id.
    pub ric: String,
    pub gnb_id: u32,
    /// The cell's id (`[[cells]].id`), in a run with several cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
    /// Associations opened.
    pub connections: u64,
    /// Connections that failed (refused, unreachable), TLS apart.
    pub connect_failures: u64,
    /// TLS handshakes that failed (e.g. the RIC's certificate).
    pub tls_failures: u64,
    /// Associations that ended (closed by the RIC, or failed).
    pub drops: u64,
    /// Of those, ended by a frame length out of 1..=65536.
    pub framing_errors: u64,
    pub setups_done: u64,
    /// E2 Setup Failures from the RIC.
    pub setup_failures: u64,
    pub subscriptions: u64,
    /// Subscriptions refused and, under FlexRIC's rules, left unanswered
    /// (FlexRIC's RIC aborts on RIC Subscription Failure); each is logged.
    pub subscriptions_unanswered: u64,
    pub indications: u64,
    pub periods_skipped: u64,
    pub controls_applied: u64,
    /// Controls that only read a configuration (E2SM-TCRAN's empty list).
    pub controls_read: u64,
    pub controls_refused: u64,
    pub controls_refused_acknowledged: u64,
    pub decode_errors: u64,
    pub pdus_received: u64,
    pub pdus_sent: u64,
    /// PDUs dropped because the RIC read slower than the node sent.
    pub pdus_dropped: u64,
    pub error_indications_received: u64,
}

impl E2Report {
    /// One line for the end of a run's table (`tcran run --realtime`,
    /// `tcran emulate`).
    pub fn line(&self) -> String {
        format!(
            "E2 node {} ({}{}): {} connection(s), {} setup(s), {} subscription(s), {} indication(s), \
             controls {} applied / {} read / {} refused, {} PDU(s) dropped; failures: {} connect, \
             {} TLS, {} E2 Setup, {} association(s) lost ({} framing)",
            self.gnb_id,
            self.cell.map(|c| format!("cell {c}, ")).unwrap_or_default(),
            self.ric,
            self.connections,
            self.setups_done,
            self.subscriptions,
            self.indications,
            self.controls_applied,
            self.controls_read,
            self.controls_refused,
            self.pdus_dropped,
            self.connect_failures,
            self.tls_failures,
            self.setup_failures,
            self.drops,
            self.framing_errors,
        )
    }
}

/// Parses `--e2-tc-drb RNTI:DRB` (decimal, or hexadecimal with `0x`):
/// DRB 1..=32 a downlink DRB, 33..=64 uplink DRB `DRB - 32`
/// (`flexric_tc::drb_key`: FlexRIC's TC model has no direction).
pub fn parse_drb(text: &str) -> Result<DrbKey, String> {
    fn num<T: TryFrom<u64>>(s: &str) -> Option<T> {
        let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok()?,
            None => s.parse().ok()?,
        };
        T::try_from(v).ok()
    }
    let err = || {
        format!(
            "--e2-tc-drb {text}: expected RNTI:DRB with RNTI 0..=65535 and DRB 1..=32 (downlink) or 33..=64 (uplink DRB 1..=32) (e.g. 17921:1, 0x4601:1 or 1:33)"
        )
    };
    let (r, d) = text.split_once(':').ok_or_else(err)?;
    let rnti = num::<u16>(r).ok_or_else(err)?;
    let number = num::<u8>(d).ok_or_else(err)?;
    flexric_tc::drb_key(rnti, number).ok_or_else(err)
}

/// The gNB id of the node of cell `cell_id` in a run whose single node
/// would have gNB id `base`: `1000 × base + cell_id`. `None` when the cell
/// id is above 999 or the id leaves the 22 bits of the node's gNB ID.
pub fn cell_gnb_id(base: u32, cell_id: u32) -> Option<u32> {
    let id = base.checked_mul(1000)?.checked_add(cell_id)?;
    (cell_id <= 999 && id < 1 << 22).then_some(id)
}

/// Checks the options against the engine's cells and this machine before
/// anything runs: the address resolves, the transport exists here, the
/// TLS files read, the TC DRB exists (in some cell). Errors are one
/// line, for exit code 2.
pub fn check(opts: &E2Options, sim: &Sim) -> Result<Connector, EmuError> {
    let usage = EmuError::Flag;
    let addr: SocketAddr = opts
        .addr
        .to_socket_addrs()
        .map_err(|e| usage(format!("--e2 {}: not a HOST:PORT address ({e})", opts.addr)))?
        .next()
        .ok_or_else(|| usage(format!("--e2 {}: the host has no address", opts.addr)))?;
    if let Some(key) = opts.tc_drb {
        let mut have = Vec::new();
        for g in (0..sim.cell_count()).filter_map(|k| sim.cell_gnb(k)) {
            RanNode::drbs(g, &mut have);
            RanNode::uplink_drbs(g, &mut have);
        }
        if !have.contains(&key) {
            let have: Vec<String> = have
                .iter()
                .map(|k| format!("{}:{}", k.rnti.0, flexric_tc::drb_number(*k)))
                .collect();
            return Err(usage(format!(
                "--e2-tc-drb {}:{}: the scenario has no such DRB (it has {}; 33..=64 are uplink DRBs 1..=32)",
                key.rnti.0,
                flexric_tc::drb_number(key),
                have.join(", ")
            )));
        }
    }
    Ok(match opts.transport {
        E2Transport::Sctp => {
            transport::sctp_available().map_err(|e| usage(format!("--e2-transport sctp: {e}")))?;
            Connector::Sctp { addr }
        }
        E2Transport::Tcp => Connector::Tcp { addr, tls: None },
        E2Transport::Tls => {
            let file = |flag: &str, p: &Option<PathBuf>| -> Result<PathBuf, EmuError> {
                p.clone()
                    .ok_or_else(|| usage(format!("--e2-transport tls needs {flag} FILE (PEM)")))
            };
            let pem = TlsPem::read(
                &file("--e2-tls-ca", &opts.tls.ca)?,
                &file("--e2-tls-cert", &opts.tls.cert)?,
                &file("--e2-tls-key", &opts.tls.key)?,
            )
            .map_err(|e| usage(format!("--e2-tls-ca/--e2-tls-cert/--e2-tls-key: {e}")))?;
            let cfg = transport::tls_client_config(&pem).map_err(|e| usage(e.to_string()))?;
            let host = opts
                .tls
                .server_name
                .clone()
                .unwrap_or_else(|| host_of(&opts.addr));
            Connector::Tcp {
                addr,
                tls: Some((cfg, host)),
            }
        }
    })
}

/// The host part of HOST:PORT (brackets of an IPv6 literal removed).
fn host_of(addr: &str) -> String {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_string()
}

/// Cell `cell` of the engine as an E2 node: reads from that cell's RAN
/// node, changes through [`Sim::apply_control_in`] (recorded as `by =
/// "e2"`).
#[derive(Debug)]
pub struct SimNode<'a> {
    pub sim: &'a mut Sim,
    pub cell: usize,
}

impl SimNode<'_> {
    fn gnb(&self) -> &tcran_gnb::Gnb {
        self.sim.cell_gnb(self.cell).expect("a cell of the run")
    }

    /// Adds what the cell knows from the UE's measurement reports (its
    /// handover margin, 0.01 dB) to a downlink DRB's lower-layer KPIs.
    fn with_measurements(&self, drb: DrbKey, lower: &mut LowerLayerKpis) {
        if drb.dir == tcran_control::Direction::Downlink {
            lower.handover_margin_cdb = self
                .sim
                .handover_margin_db(drb.rnti)
                .map(|db| (db * 100.0).round().clamp(-12500.0, 12500.0) as i16);
        }
    }
}

impl RanNode for SimNode<'_> {
    fn drbs(&self, out: &mut Vec<DrbKey>) {
        RanNode::drbs(self.gnb(), out)
    }
    fn uplink_drbs(&self, out: &mut Vec<DrbKey>) {
        RanNode::uplink_drbs(self.gnb(), out)
    }
    fn tc_view(&self, drb: DrbKey, now: Instant) -> Option<TcView> {
        let mut v = self.gnb().tc_view(drb, now)?;
        self.with_measurements(drb, &mut v.lower);
        Some(v)
    }
    fn tc_stats(
        &self,
        drb: DrbKey,
        now: Instant,
    ) -> Option<(tcran_tc::stats::PipelineStats, LowerLayerKpis)> {
        let (stats, mut lower) = self.gnb().tc_stats(drb, now)?;
        self.with_measurements(drb, &mut lower);
        Some((stats, lower))
    }
    fn tc_stats_into(
        &self,
        drb: DrbKey,
        now: Instant,
        stats: &mut tcran_tc::stats::PipelineStats,
        lower: &mut LowerLayerKpis,
    ) -> bool {
        let found = self.gnb().tc_stats_into(drb, now, stats, lower);
        self.with_measurements(drb, lower);
        found
    }
    fn kpm_cell(&self) -> KpmCounters {
        KpmCounters {
            handovers: self.sim.handover_counters(self.cell),
            ..self.gnb().kpm_cell()
        }
    }
    fn kpm_drb(&self, drb: DrbKey) -> Option<KpmCounters> {
        self.gnb().kpm_drb(drb)
    }
    fn bearer(&self, drb: DrbKey, now: Instant) -> Option<tcran_control::Bearer> {
        self.gnb().bearer(drb, now)
    }
    fn slicing(&self) -> Option<tcran_control::Slicing> {
        self.gnb().slicing()
    }
    fn set_slices(&mut self, slices: Vec<(f64, Vec<Rnti>)>, now: Instant) -> Result<(), String> {
        let _ = now; // the engine's own clock: between two of its events
        self.sim.set_slices_in(self.cell, "e2", slices)
    }
    fn map_qos_flow(
        &mut self,
        rnti: Rnti,
        qfi: tcran_core::Qfi,
        drb: DrbId,
        _now: Instant,
    ) -> Result<(), String> {
        self.sim.map_qos_flow_in(self.cell, "e2", rnti, qfi, drb)
    }
    fn apply(&mut self, drb: DrbKey, change: &Change, _now: Instant) -> Result<Applied, Refused> {
        self.sim.apply_control_in(self.cell, "e2", drb, change)
    }
}

/// The E2 nodes of one engine, one per cell (see the module docs).
#[derive(Debug)]
pub struct E2Link {
    opts: E2Options,
    connector: Connector,
    /// Microseconds from the loop clock's 0 to the Unix epoch's 0 (FlexRIC
    /// timestamps are wall-clock).
    unix_offset_us: i64,
    /// In cell order.
    nodes: Vec<CellNode>,
}

/// One cell's E2 node.
#[derive(Debug)]
struct CellNode {
    cell: usize,
    gnb_id: u32,
    session: Option<Session>,
    report: E2Report,
}

/// The service models of a node (the agent offers each only to a RIC
/// that can take it, `RicProfile`: E2SM-TCRAN never to FlexRIC).
fn models(opts: &E2Options, unix_offset_us: i64) -> Vec<AnyModel> {
    let flexric = flexric_tc::FlexricTc {
        drb: opts.tc_drb,
        time_offset_us: unix_offset_us,
    };
    let mut models = vec![
        AnyModel::FlexricTc(flexric),
        // KPM's and RC's dialects follow the agent's rules (FlexRIC's
        // until a RIC Service Query; `ServiceModel::set_flexric_dialect`).
        AnyModel::Kpm(kpm::Kpm {
            time_offset_us: unix_offset_us,
            ..kpm::Kpm::default()
        }),
        AnyModel::Rc(rc::Rc::default()),
        AnyModel::TcRan(e2sm_tcran::TcRan::default()),
    ];
    models.extend(flexric_stats::FlexricStats::all(unix_offset_us).map(AnyModel::FlexricStats));
    models.push(AnyModel::FlexricSlice(flexric_slice::FlexricSlice::new(
        unix_offset_us,
    )));
    models
}

impl E2Link {
    /// Checks `opts` (see [`check`]); the associations start with the
    /// real-time loop. `gnb_id` tells the engines of one run apart at the
    /// RIC: a single cell's node has it, the cells of a `[[cells]]` run
    /// derive theirs from it ([`cell_gnb_id`]).
    pub fn new(opts: &E2Options, sim: &Sim, gnb_id: u32) -> Result<E2Link, EmuError> {
        let connector = check(opts, sim)?;
        let node = |cell: usize, gnb_id: u32, id: Option<u32>| CellNode {
            cell,
            gnb_id,
            session: None,
            report: E2Report {
                ric: opts.addr.clone(),
                gnb_id,
                cell: id,
                ..E2Report::default()
            },
        };
        let nodes = match sim.cell_id(0) {
            None => vec![node(0, gnb_id, None)],
            Some(_) => (0..sim.cell_count())
                .map(|k| {
                    let id = sim.cell_id(k).map_or(0, |c| c.0);
                    let g = cell_gnb_id(gnb_id, id).ok_or_else(|| {
                        EmuError::Flag(format!(
                            "--e2 with [[cells]]: cells[{k}].id = {id}: must be 0..=999 \
                             (cell id's E2 node has gNB id 1000 x {gnb_id} + id, docs/e2.md)"
                        ))
                    })?;
                    Ok(node(k, g, Some(id)))
                })
                .collect::<Result<_, EmuError>>()?,
        };
        Ok(E2Link {
            opts: opts.clone(),
            connector,
            unix_offset_us: 0,
            nodes,
        })
    }

    /// Starts every node's agent and I/O; `unix_offset_us` maps the
    /// loop's clock to Unix time; `wake` wakes the loop.
    pub fn start(
        &mut self,
        unix_offset_us: i64,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<(), EmuError> {
        self.unix_offset_us = unix_offset_us;
        let wake = Arc::new(wake);
        for n in &mut self.nodes {
            let mut cfg = AgentConfig::new(models(&self.opts, unix_offset_us), self.opts.profile);
            cfg.node_id = tcran_e2::e2ap::gnb_node_id([0x00, 0xf1, 0x10], n.gnb_id, 22);
            let wake = Arc::clone(&wake);
            let session = Session::start(Agent::new(cfg), self.connector.clone(), move || wake())
                .map_err(|e| EmuError::Io {
                what: "E2".into(),
                detail: e,
            })?;
            n.session = Some(session);
        }
        Ok(())
    }

    /// When the agents' next timer is due.
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.nodes
            .iter()
            .filter_map(|n| n.session.as_ref().and_then(Session::next_wakeup))
            .min()
    }

    /// Runs every node's agent at `now`, between two events of `sim`.
    pub fn poll(&mut self, sim: &mut Sim, now: Instant) -> Result<(), EmuError> {
        for n in &mut self.nodes {
            let Some(s) = n.session.as_mut() else {
                continue;
            };
            s.poll(&mut SimNode { sim, cell: n.cell }, now)
                .map_err(EmuError::Flag)?;
            log_events(s, n.gnb_id, &self.opts);
        }
        Ok(())
    }

    /// Ends the associations; returns what each node did, in cell order.
    pub fn finish(self) -> Vec<E2Report> {
        self.nodes.into_iter().map(CellNode::finish).collect()
    }
}

/// Logs what the session of node `gnb_id` reported (failures are logged
/// by the session, once per kind).
fn log_events(s: &mut Session, gnb_id: u32, opts: &E2Options) {
    let verbose = opts.verbose;
    let who = format!("E2 node {gnb_id} -> {}", opts.addr);
    for e in s.drain_events() {
        let line = match &e {
            SessionEvent::Connected if verbose => Some("connected".to_string()),
            SessionEvent::Disconnected(why) if verbose => Some(format!("disconnected: {why}")),
            SessionEvent::Agent(AgentEvent::SetupDone) => Some("E2 Setup done".into()),
            SessionEvent::Agent(AgentEvent::ControlRefused {
                function,
                why,
                acknowledged,
                ..
            }) => Some(format!(
                "control for RAN function {function} refused{}: {why}",
                if *acknowledged { " (acknowledged)" } else { "" }
            )),
            SessionEvent::Agent(AgentEvent::DecodeError(why)) => {
                Some(format!("undecodable PDU: {why}"))
            }
            SessionEvent::Agent(AgentEvent::Subscribed {
                function, actions, ..
            }) if verbose => Some(format!(
                "subscription to RAN function {function} ({actions} action(s))"
            )),
            SessionEvent::Agent(AgentEvent::ControlApplied { function, .. }) if verbose => {
                Some(format!("control for RAN function {function} applied"))
            }
            _ => None,
        };
        if let Some(l) = line {
            eprintln!("{who}: {l}");
        }
    }
}

impl CellNode {
    /// Ends the association; returns what the node did.
    fn finish(mut self) -> E2Report {
        let mut r = self.report.clone();
        if let Some(s) = self.session.take() {
            let (a, st) = s.stop();
            r.connections = st.connections;
            r.connect_failures = st.connect_failures;
            r.tls_failures = st.tls_failures;
            r.drops = st.disconnections;
            r.framing_errors = st.framing_errors;
            r.pdus_dropped = st.pdus_dropped;
            r.setups_done = a.setups_done;
            r.setup_failures = a.setup_failures;
            r.subscriptions = a.subscriptions;
            r.subscriptions_unanswered = a.subscriptions_unanswered;
            r.indications = a.indications;
            r.periods_skipped = a.periods_skipped;
            r.controls_applied = a.controls_applied;
            r.controls_read = a.controls_read;
            r.controls_refused = a.controls_refused;
            r.controls_refused_acknowledged = a.controls_refused_acknowledged;
            r.decode_errors = a.decode_errors;
            r.pdus_received = a.pdus_received;
            r.pdus_sent = a.pdus_sent;
            r.error_indications_received = a.error_indications_received;
        }
        r
    }
}
