//! The E2 termination on tokio: listeners, one task per association, the
//! node registry and the typed API ([`Xapp`]).
//!
//! ```text
//!  node <--frames--> association task, one per node: reads the socket
//!                    (tcran_e2::transport::Framed), runs the Termination
//!                    (sans-IO) behind a lock, writes TLS and whatever a
//!                    caller's write left behind
//!                      |                      ^ commands (subscribe, close;
//!                      |                      |  a control on TLS or when busy)
//!  registry (nodes, DRBs),               Xapp handle (Clone): on plain TCP,
//!  subscriptions' channels               `control` encodes and writes its
//!                                        request itself, under the lock
//! ```
//!
//! Contract:
//! - Any number of nodes, over framed TCP (4-byte big-endian length per
//!   PDU, `tcran_e2::transport`) and over TLS with client certificates.
//!   A TLS handshake that fails (no certificate, one not signed by the
//!   configured CA) refuses the connection, logs it and reports
//!   [`NodeEvent::Refused`]. SCTP listeners are refused at start with
//!   the kernel's reason when it has no SCTP.
//! - A node is listed once its E2 Setup is done, under a fresh
//!   [`NodeId`] per association (a node that reconnects is a new
//!   association; its name, the GlobalE2node-ID, stays the same). One
//!   node per GlobalE2node-ID: a second association that claims the id of
//!   a listed node replaces it (the old one closes with
//!   [`CloseCause::Replaced`]: the node reconnected) or, with
//!   [`DuplicatePolicy::Refuse`], gets E2 Setup Failure (TimeToWait 10 s).
//! - At most [`XappConfig::max_connections`] associations at once (set up
//!   or not): a connection beyond is closed at once, counted
//!   ([`Xapp::connections_refused`]) and logged (the first, then at the
//!   2nd, 4th, 8th, ...). Before its E2 Setup an association reads into a
//!   4 KiB buffer that grows only as far as the bytes the node sent (at
//!   most one frame, 64 KiB); after it, up to 128 KiB for batched reads.
//! - A node that sends what the SDK cannot decode (E2AP or a service
//!   model's payload), breaks a procedure, or sends no E2 Setup within
//!   [`XappConfig::setup_timeout`] is disconnected with a [`CloseCause`]
//!   ([`NodeEvent::Disconnected`]); the other associations go on.
//! - Control round trip: on plain TCP the caller writes its request to
//!   the socket (non-blocking, under the association's lock, so PDUs of
//!   one association never interleave and leave in the termination's
//!   order); the association's task reads the answer and completes the
//!   caller's reply: one task wake-up from the wire back to the caller.
//! - Subscriptions belong to their association and end with it: the
//!   stream returns `None`. Dropping a [`Subscription`] deletes it on the
//!   node. A subscriber that does not keep up loses indications (counted
//!   in [`NodeInfo::indications_dropped`]), the association never blocks.

use crate::report::{self, DrbStatus, TcIndication};
use crate::termination::{
    CloseCause, ControlAnswer, Event, RequestError, SetupRefusal, State, SubscriptionAnswer,
    Termination,
};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tcran_control::DrbKey;
use tcran_e2::e2ap::{self, Action, ActionType, RicRequestId};
use tcran_e2::sm::e2sm_tcran::{self as tcsm, Trigger};
use tcran_e2::sm::kpm::{self, KpmReport};
use tcran_e2::transport::{self, Framed};
use tcran_tc::{Change, PipelineConfig};
use tokio::sync::{broadcast, mpsc, oneshot};

/// An association's id in this process (fresh per connection).
pub type NodeId = u64;

/// A failed SDK call, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XappError {
    #[error("no node {0} is connected")]
    NoSuchNode(NodeId),
    #[error("node {0} disconnected")]
    Disconnected(NodeId),
    #[error("node {node}: {error}")]
    Request { node: NodeId, error: RequestError },
    #[error("node {node} offers no {model} RAN function")]
    NoModel { node: NodeId, model: &'static str },
    #[error("node {node} refused the subscription: {why}")]
    SubscriptionRefused { node: NodeId, why: String },
    #[error("node {node} did not answer within {ms} ms")]
    Timeout { node: NodeId, ms: u64 },
    #[error("node {node}: the control outcome does not decode: {why}")]
    BadOutcome { node: NodeId, why: String },
    #[error("{0}")]
    Transport(String),
    /// The node refused a read (e.g. the DRB does not exist).
    #[error("node {node} refused: {why}")]
    Refused { node: NodeId, why: String },
    /// A request with a value outside what the service model allows.
    #[error("invalid request: {0}")]
    Invalid(String),
}

/// Checks a trigger against E2SM-TCRAN's ranges (the encoder would refuse it).
fn check_trigger(t: &Trigger) -> Result<(), XappError> {
    let ms = match t {
        Trigger::Periodic { period_ms } => ("period_ms", *period_ms),
        Trigger::Condition {
            check_period_ms, ..
        } => ("check_period_ms", *check_period_ms),
    };
    if !(1..=86_400_000).contains(&ms.1) {
        return Err(XappError::Invalid(format!(
            "{} {}: must be within 1..=86400000",
            ms.0, ms.1
        )));
    }
    Ok(())
}

/// Checks a KPM query against E2SM-KPM's ranges.
fn check_kpm(q: &KpmQuery) -> Result<(), XappError> {
    if q.names.is_empty() || q.names.len() > 65535 {
        return Err(XappError::Invalid(format!(
            "names: {} measurement(s), 1..=65535 allowed",
            q.names.len()
        )));
    }
    if let Some(n) = q.names.iter().find(|n| n.is_empty() || n.len() > 150) {
        return Err(XappError::Invalid(format!(
            "measurement name {n:?}: 1..=150 characters"
        )));
    }
    if q.granularity_ms == 0 || q.report_ms == 0 {
        return Err(XappError::Invalid(format!(
            "granularity_ms {} and report_ms {}: both at least 1",
            q.granularity_ms, q.report_ms
        )));
    }
    Ok(())
}

/// What a node did with a control.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlOutcome {
    /// Applied; the DRB's pipeline configuration afterwards.
    Applied(PipelineConfig),
    /// Refused by the node, which changed nothing; its reason.
    Refused(String),
}

/// How a listener accepts nodes.
#[derive(Debug, Clone)]
pub enum ListenTransport {
    /// Framed TCP.
    Tcp,
    /// Framed TCP in TLS; the configuration must require client
    /// certificates (`tcran_e2::transport::tls_server_config`).
    Tls(Arc<rustls::ServerConfig>),
    /// SCTP (E2's standard transport): refused at start where the kernel
    /// has none; this build carries E2 over framed TCP only.
    Sctp,
}

/// One listening address.
#[derive(Debug, Clone)]
pub struct Listen {
    pub addr: SocketAddr,
    pub transport: ListenTransport,
}

impl Listen {
    pub fn tcp(addr: SocketAddr) -> Listen {
        Listen {
            addr,
            transport: ListenTransport::Tcp,
        }
    }
}

/// [`XappConfig::max_connections`] by default: below the usual 1,024 file
/// descriptors of a process, far above the nodes of one xApp.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How the termination runs.
#[derive(Debug, Clone)]
pub struct XappConfig {
    pub listen: Vec<Listen>,
    /// The RIC's GlobalRIC-ID in E2 Setup Responses.
    pub ric_id: e2ap::GlobalRicId,
    /// Longest wait for a node's answer to a subscription or control.
    pub answer_timeout: std::time::Duration,
    /// A connection without E2 Setup Request by then is closed.
    pub setup_timeout: std::time::Duration,
    /// How long a node has to answer the RIC Service Query sent after its
    /// E2 Setup; after it the node is listed with its E2 Setup functions
    /// (a node that does not implement the procedure; tcran's nodes answer
    /// it under every RIC profile, `flexric` with its FlexRIC functions).
    pub query_timeout: std::time::Duration,
    /// Indications buffered per subscription before they are dropped.
    pub subscription_buffer: usize,
    /// Associations open at once, set up or not; connections beyond are
    /// closed at once.
    pub max_connections: usize,
    /// What a second association claiming a listed node's GlobalE2node-ID
    /// gets.
    pub duplicate: DuplicatePolicy,
}

/// What happens when an association claims the GlobalE2node-ID of a node
/// already listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicatePolicy {
    /// The new association replaces the old one, which closes: a node that
    /// reconnected before the xApp saw its old connection go.
    #[default]
    Replace,
    /// The new association gets E2 Setup Failure (cause misc/unspecified,
    /// TimeToWait 10 s) and closes; the listed node stays.
    Refuse,
}

impl XappConfig {
    /// Framed TCP on `addr`, RIC id 1 in PLMN 001/01, 5 s timeouts.
    pub fn tcp(addr: SocketAddr) -> XappConfig {
        XappConfig {
            listen: vec![Listen::tcp(addr)],
            ric_id: e2ap::GlobalRicId {
                plmn: [0x00, 0xf1, 0x10],
                ric_id: 1,
            },
            answer_timeout: std::time::Duration::from_secs(5),
            setup_timeout: std::time::Duration::from_secs(5),
            query_timeout: std::time::Duration::from_secs(1),
            subscription_buffer: 4096,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            duplicate: DuplicatePolicy::Replace,
        }
    }
}

/// A connected node as the registry knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    pub id: NodeId,
    /// Its GlobalE2node-ID (`gnb:<PLMN>:<id>`).
    pub name: String,
    pub peer: SocketAddr,
    pub tls: bool,
    /// RAN functions: (id, OID).
    pub functions: Vec<(u16, String)>,
    /// DRBs from its E2SM-TCRAN definition and reports, ascending.
    pub drbs: Vec<DrbKey>,
    pub indications: u64,
    pub indications_dropped: u64,
}

impl NodeInfo {
    fn function_by_oid(&self, oid: &str) -> Option<u16> {
        self.functions
            .iter()
            .find(|(_, o)| o == oid)
            .map(|(id, _)| *id)
    }
    /// The id of the node's E2SM-TCRAN function.
    pub fn tc_function(&self) -> Option<u16> {
        self.function_by_oid(tcsm::OID)
    }
    /// The id of the node's E2SM-KPM function.
    pub fn kpm_function(&self) -> Option<u16> {
        self.function_by_oid(kpm::OID)
    }
}

/// What happens to nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeEvent {
    Connected(NodeInfo),
    Disconnected {
        id: NodeId,
        name: String,
        cause: CloseCause,
    },
    /// A connection refused before E2 (TLS authentication).
    Refused {
        peer: SocketAddr,
        cause: CloseCause,
    },
    /// The node sent an Error Indication.
    ErrorIndication {
        id: NodeId,
        what: String,
    },
}

/// A KPM subscription request (E2SM-KPM REPORT style 1: the node; style
/// 4: per UE).
#[derive(Debug, Clone, PartialEq)]
pub struct KpmQuery {
    pub style: i64,
    /// TS 28.552 names, e.g. `DRB.UEThpDl`.
    pub names: Vec<String>,
    pub granularity_ms: u32,
    pub report_ms: u32,
}

enum Sink {
    Tc(mpsc::Sender<TcIndication>),
    Kpm(mpsc::Sender<KpmReport>),
    Raw(mpsc::Sender<e2ap::Indication>),
}

enum Cmd {
    Subscribe {
        function: u16,
        trigger: Vec<u8>,
        actions: Vec<Action>,
        sink: Sink,
        reply: oneshot::Sender<Result<RicRequestId, XappError>>,
    },
    Unsubscribe(RicRequestId),
    /// Another association of the same node took this one's place.
    Replaced {
        by: NodeId,
    },
    Control {
        function: u16,
        header: Vec<u8>,
        message: Vec<u8>,
        reply: oneshot::Sender<Result<ControlAnswer, XappError>>,
    },
    Close,
}

struct Entry {
    info: NodeInfo,
    cmd: mpsc::Sender<Cmd>,
    conn: Arc<Conn>,
}

/// Counts something that may happen at a flood's rate and says when to
/// log it: the first time, then at the 2nd, 4th, 8th, ... (a log line per
/// doubling, never one per event).
#[derive(Debug, Default)]
struct Throttle(std::sync::atomic::AtomicU64);

impl Throttle {
    /// Counts one; `Some(count)` when this one should be logged.
    fn hit(&self) -> Option<u64> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        n.is_power_of_two().then_some(n)
    }
    fn count(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

struct Shared {
    config: XappConfig,
    /// One permit per open association ([`XappConfig::max_connections`]).
    slots: Arc<tokio::sync::Semaphore>,
    refused: Throttle,
    accept_errors: Throttle,
    closed_before_setup: Throttle,
    nodes: Mutex<BTreeMap<NodeId, Entry>>,
    next_id: Mutex<NodeId>,
    events: broadcast::Sender<NodeEvent>,
    local: Vec<SocketAddr>,
    shutdown: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("local", &self.local)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The xApp SDK's handle: cheap to clone, usable from any task.
#[derive(Debug, Clone)]
pub struct Xapp {
    shared: Arc<Shared>,
}

/// A live subscription: typed indications until the node goes away.
#[derive(Debug)]
pub struct Subscription<T> {
    pub node: NodeId,
    pub request: RicRequestId,
    rx: mpsc::Receiver<T>,
    cmd: mpsc::Sender<Cmd>,
}

impl<T> Subscription<T> {
    /// The next indication; `None` once the association ended.
    pub async fn recv(&mut self) -> Option<T> {
        self.rx.recv().await
    }
    /// An indication if one is waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        self.rx.try_recv().ok()
    }
}

impl<T> Drop for Subscription<T> {
    fn drop(&mut self) {
        let _ = self.cmd.try_send(Cmd::Unsubscribe(self.request));
    }
}

impl std::fmt::Debug for Cmd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cmd::Subscribe { .. } => "Subscribe",
            Cmd::Unsubscribe(_) => "Unsubscribe",
            Cmd::Control { .. } => "Control",
            Cmd::Close => "Close",
            Cmd::Replaced { .. } => "Replaced",
        })
    }
}

impl Xapp {
    /// Binds every listener and starts accepting nodes (inside a tokio
    /// runtime). Fails when an address cannot be bound or a transport is
    /// unavailable.
    pub async fn start(config: XappConfig) -> Result<Xapp, XappError> {
        let mut listeners = Vec::new();
        let mut local = Vec::new();
        for l in &config.listen {
            if let ListenTransport::Sctp = l.transport {
                transport::sctp_available().map_err(XappError::Transport)?;
                return Err(XappError::Transport(
                    "SCTP listeners are not implemented: this build carries E2 over framed TCP \
                     (4-byte length per PDU); listen with TCP"
                        .into(),
                ));
            }
            let s = tokio::net::TcpListener::bind(l.addr)
                .await
                .map_err(|e| XappError::Transport(format!("cannot listen on {}: {e}", l.addr)))?;
            local.push(
                s.local_addr()
                    .map_err(|e| XappError::Transport(e.to_string()))?,
            );
            listeners.push((s, l.transport.clone()));
        }
        let (events, _) = broadcast::channel(1024);
        let (shutdown, _) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            slots: Arc::new(tokio::sync::Semaphore::new(config.max_connections)),
            refused: Throttle::default(),
            accept_errors: Throttle::default(),
            closed_before_setup: Throttle::default(),
            config,
            nodes: Mutex::new(BTreeMap::new()),
            next_id: Mutex::new(1),
            events,
            local,
            shutdown,
        });
        for (listener, t) in listeners {
            tokio::spawn(accept_loop(listener, t, shared.clone()));
        }
        Ok(Xapp { shared })
    }

    /// Associations open now (set up or not).
    pub fn open_connections(&self) -> usize {
        self.shared.config.max_connections - self.shared.slots.available_permits()
    }

    /// Connections closed at once because [`XappConfig::max_connections`]
    /// associations were open.
    pub fn connections_refused(&self) -> u64 {
        self.shared.refused.count()
    }

    /// The addresses listened on (with the port the OS chose for port 0).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.shared.local
    }

    /// Node events from now on: take the receiver before a node can learn
    /// the address, or also look at [`Xapp::nodes`] for those already there.
    pub fn events(&self) -> broadcast::Receiver<NodeEvent> {
        self.shared.events.subscribe()
    }

    /// The connected nodes (E2 Setup done), by id.
    pub fn nodes(&self) -> Vec<NodeInfo> {
        lock(&self.shared.nodes)
            .values()
            .map(|e| e.info.clone())
            .collect()
    }

    pub fn node(&self, id: NodeId) -> Option<NodeInfo> {
        lock(&self.shared.nodes).get(&id).map(|e| e.info.clone())
    }

    /// The node's DRBs.
    pub fn drbs(&self, id: NodeId) -> Result<Vec<DrbKey>, XappError> {
        self.node(id)
            .map(|n| n.drbs)
            .ok_or(XappError::NoSuchNode(id))
    }

    /// Waits until at least `n` nodes are connected, at most `timeout`.
    pub async fn wait_for_nodes(
        &self,
        n: usize,
        timeout: std::time::Duration,
    ) -> Result<Vec<NodeInfo>, XappError> {
        let mut events = self.events();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let nodes = self.nodes();
            if nodes.len() >= n {
                return Ok(nodes);
            }
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(_) => continue,
                Err(_) => {
                    return Err(XappError::Transport(format!(
                        "{} of {n} node(s) connected within {} ms",
                        nodes.len(),
                        timeout.as_millis()
                    )))
                }
            }
        }
    }

    fn entry(&self, id: NodeId) -> Result<(NodeInfo, mpsc::Sender<Cmd>), XappError> {
        lock(&self.shared.nodes)
            .get(&id)
            .map(|e| (e.info.clone(), e.cmd.clone()))
            .ok_or(XappError::NoSuchNode(id))
    }

    async fn subscribe_with<T>(
        &self,
        node: NodeId,
        function: u16,
        trigger: Vec<u8>,
        definition: Option<Vec<u8>>,
        make: impl FnOnce(mpsc::Sender<T>) -> Sink,
    ) -> Result<Subscription<T>, XappError> {
        let (_, cmd) = self.entry(node)?;
        let (tx, rx) = mpsc::channel(self.shared.config.subscription_buffer.max(1));
        let (reply, answer) = oneshot::channel();
        cmd.send(Cmd::Subscribe {
            function,
            trigger,
            actions: vec![Action {
                id: 1,
                kind: ActionType::Report,
                definition,
                subsequent: None,
            }],
            sink: make(tx),
            reply,
        })
        .await
        .map_err(|_| XappError::Disconnected(node))?;
        let request = self.answer(node, answer).await??;
        Ok(Subscription {
            node,
            request,
            rx,
            cmd,
        })
    }

    async fn answer<T>(&self, node: NodeId, rx: oneshot::Receiver<T>) -> Result<T, XappError> {
        let t = self.shared.config.answer_timeout;
        match tokio::time::timeout(t, rx).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(XappError::Disconnected(node)),
            Err(_) => Err(XappError::Timeout {
                node,
                ms: t.as_millis() as u64,
            }),
        }
    }

    /// Subscribes to E2SM-TCRAN reports of `drbs` (empty: every DRB) by
    /// period or condition.
    pub async fn subscribe_tc(
        &self,
        node: NodeId,
        trigger: Trigger,
        drbs: &[DrbKey],
    ) -> Result<Subscription<TcIndication>, XappError> {
        check_trigger(&trigger)?;
        let (info, _) = self.entry(node)?;
        let function = info.tc_function().ok_or(XappError::NoModel {
            node,
            model: "E2SM-TCRAN",
        })?;
        self.subscribe_with(
            node,
            function,
            tcsm::event_trigger(&trigger),
            Some(tcsm::action_definition(drbs)),
            Sink::Tc,
        )
        .await
    }

    /// Subscribes to E2SM-KPM measurements.
    pub async fn subscribe_kpm(
        &self,
        node: NodeId,
        query: &KpmQuery,
    ) -> Result<Subscription<KpmReport>, XappError> {
        check_kpm(query)?;
        let (info, _) = self.entry(node)?;
        let function = info.kpm_function().ok_or(XappError::NoModel {
            node,
            model: "E2SM-KPM",
        })?;
        let names: Vec<&str> = query.names.iter().map(String::as_str).collect();
        self.subscribe_with(
            node,
            function,
            kpm::event_trigger(query.report_ms),
            Some(kpm::action_definition(
                query.style,
                &names,
                query.granularity_ms,
            )),
            Sink::Kpm,
        )
        .await
    }

    /// One KPM report: subscribes, waits for the first report (one
    /// reporting period after the first granularity period) and deletes
    /// the subscription.
    pub async fn query_kpm(&self, node: NodeId, query: &KpmQuery) -> Result<KpmReport, XappError> {
        let mut s = self.subscribe_kpm(node, query).await?;
        let wait = self.shared.config.answer_timeout
            + std::time::Duration::from_millis(
                2 * u64::from(query.report_ms) + u64::from(query.granularity_ms),
            );
        match tokio::time::timeout(wait, s.recv()).await {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(XappError::Disconnected(node)),
            Err(_) => Err(XappError::Timeout {
                node,
                ms: wait.as_millis() as u64,
            }),
        }
    }

    /// Subscribes to any RAN function with service-model bytes of your
    /// own; indications come undecoded.
    pub async fn subscribe_raw(
        &self,
        node: NodeId,
        function: u16,
        trigger: Vec<u8>,
        definition: Option<Vec<u8>>,
    ) -> Result<Subscription<e2ap::Indication>, XappError> {
        self.subscribe_with(node, function, trigger, definition, Sink::Raw)
            .await
    }

    /// Sends `change` to one DRB (E2SM-TCRAN control) and waits for the
    /// outcome.
    pub async fn control(
        &self,
        node: NodeId,
        drb: DrbKey,
        change: &Change,
    ) -> Result<ControlOutcome, XappError> {
        let (info, cmd, conn) = lock(&self.shared.nodes)
            .get(&node)
            .map(|e| (e.info.clone(), e.cmd.clone(), e.conn.clone()))
            .ok_or(XappError::NoSuchNode(node))?;
        let function = info.tc_function().ok_or(XappError::NoModel {
            node,
            model: "E2SM-TCRAN",
        })?;
        let (header, message) = tcsm::control(drb, change);
        let (reply, answer) = oneshot::channel();
        let request = Cmd::Control {
            function,
            header,
            message,
            reply,
        };
        // Written by this task when it can (see `Conn`), else queued.
        let queued = conn.try_issue(request)?;
        // Holding the connection would keep its socket open after its
        // association ended.
        drop(conn);
        if let Some(request) = queued {
            cmd.send(request)
                .await
                .map_err(|_| XappError::Disconnected(node))?;
        }
        let (outcome, failure) = match self.answer(node, answer).await?? {
            ControlAnswer::Acknowledged { outcome } => (outcome, None),
            ControlAnswer::Failed { cause, outcome } => (outcome, Some(cause)),
        };
        let outcome = match (outcome, failure) {
            (Some(o), _) => o,
            (None, Some(cause)) => return Ok(ControlOutcome::Refused(cause)),
            (None, None) => {
                return Err(XappError::BadOutcome {
                    node,
                    why: "acknowledged without an E2SM-TCRAN outcome".into(),
                })
            }
        };
        match tcsm::decode_outcome(&outcome) {
            Ok(tcsm::TcOutcome::Applied(json)) => serde_json::from_str::<PipelineConfig>(&json)
                .map(ControlOutcome::Applied)
                .map_err(|e| XappError::BadOutcome {
                    node,
                    why: format!("pipeline: {e}"),
                }),
            Ok(tcsm::TcOutcome::Refused(refusal)) => Ok(ControlOutcome::Refused(refusal)),
            Err(e) => Err(XappError::BadOutcome {
                node,
                why: e.to_string(),
            }),
        }
    }

    /// Replaces a DRB's whole pipeline.
    pub async fn deploy(
        &self,
        node: NodeId,
        drb: DrbKey,
        pipeline: PipelineConfig,
    ) -> Result<ControlOutcome, XappError> {
        self.control(node, drb, &Change::Deploy(pipeline)).await
    }

    /// A DRB's pipeline configuration (an empty control list).
    pub async fn pipeline(&self, node: NodeId, drb: DrbKey) -> Result<PipelineConfig, XappError> {
        match self
            .control(node, drb, &Change::Controls(Vec::new()))
            .await?
        {
            ControlOutcome::Applied(p) => Ok(p),
            ControlOutcome::Refused(why) => Err(XappError::Refused { node, why }),
        }
    }

    /// Closes one association (cause [`CloseCause::Local`]).
    pub async fn disconnect(&self, node: NodeId) {
        if let Ok((_, cmd)) = self.entry(node) {
            let _ = cmd.send(Cmd::Close).await;
        }
    }

    /// Stops accepting and closes every association.
    pub fn shutdown(&self) {
        let _ = self.shared.shutdown.send(true);
    }
}

// --------------------------------------------------------------- accepting

async fn accept_loop(listener: tokio::net::TcpListener, t: ListenTransport, shared: Arc<Shared>) {
    let mut stop = shared.shutdown.subscribe();
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // EMFILE and the like: keep listening.
                    if let Some(n) = shared.accept_errors.hit() {
                        log::warn!("E2: cannot accept connections ({n} time(s) so far): {e}");
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
            // Closed at once (dropped): no task, no buffer.
            if let Some(n) = shared.refused.hit() {
                log::warn!(
                    "E2: refused {peer} and {} more connection(s) so far: {} associations are open (max_connections)",
                    n - 1,
                    shared.config.max_connections
                );
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        match &t {
            ListenTransport::Tls(cfg) => {
                let acceptor = tokio_rustls::TlsAcceptor::from(cfg.clone());
                tokio::spawn(async move {
                    let _slot = slot;
                    let timeout = shared.config.setup_timeout;
                    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            association(Framed::before_setup(tls), None, peer, true, shared).await
                        }
                        Ok(Err(e)) => refused(&shared, peer, e.to_string()),
                        Err(_) => refused(&shared, peer, "TLS handshake timed out".into()),
                    }
                });
            }
            _ => {
                tokio::spawn(async move {
                    let _slot = slot;
                    tcp_association(stream, peer, shared).await
                });
            }
        }
    }
}

fn refused(shared: &Shared, peer: SocketAddr, why: String) {
    log::warn!("E2: refused {peer}: TLS authentication failed: {why}");
    let _ = shared.events.send(NodeEvent::Refused {
        peer,
        cause: CloseCause::Authentication(why),
    });
}

// ------------------------------------------------------------- association

struct Assoc {
    id: NodeId,
    term: Termination,
    sinks: BTreeMap<RicRequestId, Sink>,
    pending_subs: BTreeMap<RicRequestId, oneshot::Sender<Result<RicRequestId, XappError>>>,
    pending_controls: BTreeMap<RicRequestId, oneshot::Sender<Result<ControlAnswer, XappError>>>,
    registered: bool,
    name: String,
}

/// Bytes of requests a node may leave unread before its association is
/// closed (a node that reads nothing while the xApp keeps sending).
const MAX_UNSENT: usize = 1024 * 1024;

/// What an association shares with the tasks that call the SDK.
///
/// On plain TCP a caller issues its control itself: it takes the lock,
/// lets the termination encode the request, and writes it to the socket
/// with a non-blocking write, so the request leaves without waking the
/// association's task (which only reads, and finishes a write the socket
/// did not take at once). Everything written to the socket is written
/// under the lock, in the termination's order, so PDUs never interleave
/// and stay in order. When the lock is busy (the task is handling a PDU)
/// or on TLS, the control goes through the association's command queue.
struct Conn {
    core: Mutex<Core>,
    /// Plain TCP: the socket's write half. TLS: none (the association's
    /// task writes through its [`Framed`] stream).
    tcp: Option<tokio::net::tcp::OwnedWriteHalf>,
    /// Tells the association's task to look again (bytes left to write,
    /// the termination closed).
    wake: tokio::sync::Notify,
}

struct Core {
    a: Assoc,
    /// Framed PDUs not yet written (plain TCP), from `sent` on.
    unsent: Vec<u8>,
    sent: usize,
}

impl Core {
    /// Writes what the termination produced, as far as the socket takes
    /// it now; `true` when bytes are left for the association's task.
    fn transmit(&mut self, w: &tokio::net::tcp::OwnedWriteHalf) -> bool {
        while let Some(pdu) = self.a.term.poll_transmit() {
            if let Err(e) = transport::append_frame(&mut self.unsent, &pdu) {
                self.a.term.close(CloseCause::Transport(e.to_string()));
            }
        }
        while self.sent < self.unsent.len() {
            match w.try_write(&self.unsent[self.sent..]) {
                Ok(0) => {
                    self.a
                        .term
                        .close(CloseCause::Transport("the connection closed".into()));
                    break;
                }
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if self.unsent.len() - self.sent > MAX_UNSENT {
                        self.a.term.close(CloseCause::Transport(format!(
                            "the node left more than {MAX_UNSENT} bytes of requests unread"
                        )));
                        break;
                    }
                    return true;
                }
                Err(e) => {
                    self.a.term.close(CloseCause::Transport(e.to_string()));
                    break;
                }
            }
        }
        self.unsent.clear();
        self.sent = 0;
        false
    }
}

impl Conn {
    /// Issues `cmd` from the calling task (plain TCP, lock free at once);
    /// gives it back when it must go through the command queue.
    fn try_issue(&self, cmd: Cmd) -> Result<Option<Cmd>, XappError> {
        let Some(w) = &self.tcp else {
            return Ok(Some(cmd));
        };
        let mut c = match self.core.try_lock() {
            Ok(c) => c,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(Some(cmd)),
        };
        if let State::Closed(_) = c.a.term.state() {
            return Err(XappError::Disconnected(c.a.id));
        }
        c.a.command(cmd);
        let left = c.transmit(w);
        let closed = matches!(c.a.term.state(), State::Closed(_));
        drop(c);
        if left || closed {
            self.wake.notify_one();
        }
        Ok(None)
    }
}

/// The read half of a plain TCP association as a [`Framed`] stream: its
/// writes go through [`Conn`], never through this.
struct ReadHalf(tokio::net::tcp::OwnedReadHalf);

impl tokio::io::AsyncRead for ReadHalf {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for ReadHalf {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(Err(std::io::ErrorKind::Unsupported.into()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A plain TCP association: read by its task, written by whoever holds
/// its lock ([`Conn`]).
async fn tcp_association(stream: tokio::net::TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    let (r, w) = stream.into_split();
    association(
        Framed::before_setup(ReadHalf(r)),
        Some(w),
        peer,
        false,
        shared,
    )
    .await
}

/// One node's association. Its task reads the socket itself
/// ([`Framed`]: no reader task), writes TLS itself and plain TCP under
/// [`Conn`]'s lock (no writer task), so a control costs one task wake-up
/// from the wire back to its caller, and none on the way out on plain TCP.
async fn association(
    mut link: Framed,
    tcp: Option<tokio::net::tcp::OwnedWriteHalf>,
    peer: SocketAddr,
    tls: bool,
    shared: Arc<Shared>,
) {
    let id = {
        let mut n = lock(&shared.next_id);
        let id = *n;
        *n += 1;
        id
    };
    let (cmd_tx, mut cmd_rx) = mpsc::channel::<Cmd>(256);
    let a = Assoc {
        id,
        term: Termination::new(shared.config.ric_id),
        sinks: BTreeMap::new(),
        pending_subs: BTreeMap::new(),
        pending_controls: BTreeMap::new(),
        registered: false,
        name: peer.to_string(),
    };
    let conn = Arc::new(Conn {
        core: Mutex::new(Core {
            a,
            unsent: Vec::new(),
            sent: 0,
        }),
        tcp,
        wake: tokio::sync::Notify::new(),
    });
    let mut stop = shared.shutdown.subscribe();
    let setup_deadline = tokio::time::Instant::now() + shared.config.setup_timeout;
    let mut query_deadline = None;
    loop {
        let (awaiting, left) = {
            let mut c = lock(&conn.core);
            let left = match &conn.tcp {
                Some(w) => c.transmit(w),
                None => {
                    // TLS: everything the termination produced goes out in
                    // one write, by this task.
                    while let Some(pdu) = c.a.term.poll_transmit() {
                        if let Err(e) = link.queue(&pdu) {
                            c.a.term.close(CloseCause::Transport(e.to_string()));
                        }
                    }
                    false
                }
            };
            while let Some(ev) = c.a.term.poll_event() {
                c.a.on_event(ev, &shared, peer, tls, &cmd_tx, &conn);
            }
            if let State::Closed(cause) = c.a.term.state().clone() {
                c.a.finish(&shared, cause);
                None
            } else {
                Some((*c.a.term.state() == State::AwaitingSetup, left))
            }
        }
        .unzip();
        let (Some(awaiting), Some(left)) = (awaiting, left) else {
            link.close(std::time::Duration::from_secs(1)).await;
            return;
        };
        if !awaiting {
            link.after_setup();
        }
        let querying = matches!(lock(&conn.core).a.term.state(), State::Querying { .. });
        if querying && query_deadline.is_none() {
            query_deadline = Some(tokio::time::Instant::now() + shared.config.query_timeout);
        }
        if conn.tcp.is_none() {
            if let Err(e) = link.flush().await {
                lock(&conn.core)
                    .a
                    .term
                    .close(CloseCause::Transport(e.to_string()));
                continue;
            }
        }
        let writable = async {
            match &conn.tcp {
                Some(w) => w.writable().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            frame = link.recv() => {
                let mut c = lock(&conn.core);
                match frame {
                    Some(Ok(pdu)) => {
                        let policy = shared.config.duplicate;
                        c.a.term.handle_admitting(&pdu, &mut |node| admit(&shared, policy, node))
                    }
                    Some(Err(e)) => c.a.term.close(CloseCause::Transport(e.to_string())),
                    None => c.a.term.close(CloseCause::Transport("the node closed the connection".into())),
                }
            }
            Some(cmd) = cmd_rx.recv() => lock(&conn.core).a.command(cmd),
            _ = conn.wake.notified() => {}
            r = writable, if left => {
                if let Err(e) = r {
                    lock(&conn.core).a.term.close(CloseCause::Transport(e.to_string()));
                }
            }
            _ = tokio::time::sleep_until(setup_deadline), if awaiting => {
                lock(&conn.core).a.term.close(CloseCause::Protocol(format!(
                    "no E2 Setup Request within {} ms",
                    shared.config.setup_timeout.as_millis()
                )));
            }
            _ = tokio::time::sleep_until(query_deadline.unwrap_or(setup_deadline)), if querying => {
                lock(&conn.core).a.term.query_unanswered();
            }
            _ = stop.changed() => lock(&conn.core).a.term.close(CloseCause::Local),
        }
    }
}

impl Assoc {
    fn command(&mut self, cmd: Cmd) {
        let id = self.id;
        let err = |error| XappError::Request { node: id, error };
        match cmd {
            Cmd::Subscribe {
                function,
                trigger,
                actions,
                sink,
                reply,
            } => match self.term.subscribe(function, trigger, actions) {
                Ok(r) => {
                    self.sinks.insert(r, sink);
                    self.pending_subs.insert(r, reply);
                }
                Err(e) => {
                    let _ = reply.send(Err(err(e)));
                }
            },
            Cmd::Unsubscribe(r) => {
                self.sinks.remove(&r);
                let _ = self.term.unsubscribe(r);
            }
            Cmd::Control {
                function,
                header,
                message,
                reply,
            } => match self.term.control(function, header, message) {
                Ok(r) => {
                    self.pending_controls.insert(r, reply);
                }
                Err(e) => {
                    let _ = reply.send(Err(err(e)));
                }
            },
            Cmd::Close => self.term.close(CloseCause::Local),
            Cmd::Replaced { by } => self.term.close(CloseCause::Replaced { by }),
        }
    }

    fn update<F: FnOnce(&mut NodeInfo)>(&self, shared: &Shared, f: F) {
        if let Some(e) = lock(&shared.nodes).get_mut(&self.id) {
            f(&mut e.info);
        }
    }

    fn on_event(
        &mut self,
        ev: Event,
        shared: &Shared,
        peer: SocketAddr,
        tls: bool,
        cmd: &mpsc::Sender<Cmd>,
        conn: &Arc<Conn>,
    ) {
        match ev {
            Event::SetupDone { node, functions } => {
                let name = e2ap::node_id_string(&node);
                let info = NodeInfo {
                    id: self.id,
                    name: name.clone(),
                    peer,
                    tls,
                    functions: functions.iter().map(|f| (f.id, f.oid.clone())).collect(),
                    drbs: function_drbs(&functions),
                    indications: 0,
                    indications_dropped: 0,
                };
                self.name = name;
                log::info!("E2: node {} ({}) connected from {peer}", info.id, info.name);
                let mut nodes = lock(&shared.nodes);
                // One node per GlobalE2node-ID (`admit` refused the others
                // under DuplicatePolicy::Refuse).
                let old: Vec<NodeId> = nodes
                    .values()
                    .filter(|e| e.info.name == info.name)
                    .map(|e| e.info.id)
                    .collect();
                for id in old {
                    if let Some(e) = nodes.remove(&id) {
                        log::warn!(
                            "E2: node {id} ({}) replaced by association {} from {peer}",
                            info.name,
                            self.id
                        );
                        // Through its queue: its lock may be held by a
                        // task that waits for the registry's, held here.
                        let by = self.id;
                        if let Err(mpsc::error::TrySendError::Full(_)) =
                            e.cmd.try_send(Cmd::Replaced { by })
                        {
                            tokio::spawn(async move {
                                let _ = e.cmd.send(Cmd::Replaced { by }).await;
                            });
                        }
                    }
                }
                nodes.insert(
                    self.id,
                    Entry {
                        info: info.clone(),
                        cmd: cmd.clone(),
                        conn: conn.clone(),
                    },
                );
                drop(nodes);
                self.registered = true;
                let _ = shared.events.send(NodeEvent::Connected(info));
            }
            Event::FunctionsChanged { functions } => self.update(shared, |i| {
                i.functions = functions.iter().map(|f| (f.id, f.oid.clone())).collect();
                i.drbs = function_drbs(&functions);
            }),
            Event::Subscription { request, answer } => {
                let Some(reply) = self.pending_subs.remove(&request) else {
                    return;
                };
                match answer {
                    SubscriptionAnswer::Admitted { admitted, .. } if !admitted.is_empty() => {
                        let _ = reply.send(Ok(request));
                    }
                    SubscriptionAnswer::Admitted { not_admitted, .. } => {
                        self.sinks.remove(&request);
                        let _ = reply.send(Err(XappError::SubscriptionRefused {
                            node: self.id,
                            why: format!("no action admitted: {not_admitted:?}"),
                        }));
                    }
                    SubscriptionAnswer::Refused(why) => {
                        self.sinks.remove(&request);
                        let _ =
                            reply.send(Err(XappError::SubscriptionRefused { node: self.id, why }));
                    }
                }
            }
            Event::SubscriptionDeleted { request } => {
                self.sinks.remove(&request);
            }
            Event::Indication(ind) => self.indication(ind, shared),
            Event::Control { request, answer } => {
                if let Some(reply) = self.pending_controls.remove(&request) {
                    let _ = reply.send(Ok(answer));
                }
            }
            Event::Reset => {
                log::warn!("E2: node {} reset the association", self.id);
                self.sinks.clear();
            }
            Event::ErrorIndication(e) => {
                let what = format!("{:?}", e.cause);
                log::warn!("E2: node {} sent an Error Indication: {what}", self.id);
                let _ = shared
                    .events
                    .send(NodeEvent::ErrorIndication { id: self.id, what });
            }
            Event::Closed(_) => {}
        }
    }

    fn indication(&mut self, ind: e2ap::Indication, shared: &Shared) {
        let Some(sink) = self.sinks.get(&ind.request) else {
            return;
        };
        let sent = match sink {
            Sink::Tc(tx) => match report::decode_tc(&ind.header, &ind.message) {
                Ok(r) => {
                    let new: Vec<DrbKey> = r.drbs.iter().map(|d: &DrbStatus| d.drb).collect();
                    self.update(shared, |i| {
                        for d in new {
                            if let Err(at) = i.drbs.binary_search(&d) {
                                i.drbs.insert(at, d);
                            }
                        }
                    });
                    tx.try_send(r)
                        .map_err(|e| matches!(e, mpsc::error::TrySendError::Closed(_)))
                }
                Err(e) => {
                    return self.term.close(CloseCause::Undecodable(format!(
                        "E2SM-TCRAN indication: {e}"
                    )))
                }
            },
            Sink::Kpm(tx) => match kpm::decode_indication(&ind.message) {
                Ok(r) => tx
                    .try_send(r)
                    .map_err(|e| matches!(e, mpsc::error::TrySendError::Closed(_))),
                Err(e) => {
                    return self
                        .term
                        .close(CloseCause::Undecodable(format!("E2SM-KPM indication: {e}")))
                }
            },
            Sink::Raw(tx) => tx
                .try_send(ind.clone())
                .map_err(|e| matches!(e, mpsc::error::TrySendError::Closed(_))),
        };
        match sent {
            Ok(()) => self.update(shared, |i| i.indications += 1),
            // The subscriber went away: delete the subscription.
            Err(true) => {
                self.sinks.remove(&ind.request);
                let _ = self.term.unsubscribe(ind.request);
            }
            Err(false) => self.update(shared, |i| i.indications_dropped += 1),
        }
    }

    fn finish(&mut self, shared: &Shared, cause: CloseCause) {
        if self.registered {
            lock(&shared.nodes).remove(&self.id);
            log::warn!("E2: node {} ({}) disconnected: {cause}", self.id, self.name);
            let _ = shared.events.send(NodeEvent::Disconnected {
                id: self.id,
                name: self.name.clone(),
                cause,
            });
        } else {
            // A flood of idle or broken connections: a line per doubling.
            if let Some(n) = shared.closed_before_setup.hit() {
                log::warn!(
                    "E2: connection from {} closed before E2 Setup ({n} so far): {cause}",
                    self.name
                );
            }
            let _ = shared.events.send(NodeEvent::Disconnected {
                id: self.id,
                name: self.name.clone(),
                cause,
            });
        }
        for (_, r) in std::mem::take(&mut self.pending_subs) {
            let _ = r.send(Err(XappError::Disconnected(self.id)));
        }
        for (_, r) in std::mem::take(&mut self.pending_controls) {
            let _ = r.send(Err(XappError::Disconnected(self.id)));
        }
        self.sinks.clear();
    }
}

/// Whether a node may complete E2 Setup: under [`DuplicatePolicy::Refuse`]
/// not while another association of its GlobalE2node-ID is listed.
fn admit(
    shared: &Shared,
    policy: DuplicatePolicy,
    node: &e2ap::GlobalE2node_ID,
) -> Result<(), SetupRefusal> {
    if policy == DuplicatePolicy::Replace {
        return Ok(());
    }
    let name = e2ap::node_id_string(node);
    match lock(&shared.nodes).values().find(|e| e.info.name == name) {
        None => Ok(()),
        Some(e) => Err(SetupRefusal {
            cause: e2ap::Cause::Misc(e2ap::CauseMisc(e2ap::CauseMisc::UNSPECIFIED)),
            // v10s (E2AP 9.2.24).
            time_to_wait: Some(3),
            why: format!("node {name} is already connected as node {}", e.info.id),
        }),
    }
}

/// The DRBs listed by an E2SM-TCRAN function among `functions`.
fn function_drbs(functions: &[e2ap::RanFunction]) -> Vec<DrbKey> {
    let mut drbs: Vec<DrbKey> = functions
        .iter()
        .filter(|f| f.oid == tcsm::OID)
        .filter_map(|f| report::tc_function_drbs(&f.definition).ok())
        .flatten()
        .collect();
    drbs.sort();
    drbs.dedup();
    drbs
}
