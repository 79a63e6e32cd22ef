//! `tcran.xapp`'s native half: the xApp SDK's E2 termination
//! (`tcran_xapp::blocking`) for Python.
//!
//! Contract:
//! - Every call that waits on the network (start, wait for nodes,
//!   subscribe, the next indication, control) releases the GIL; a wait
//!   with no deadline wakes every 100 ms to let Python handle Ctrl-C.
//! - Indications, node lists and pipeline configurations cross as JSON
//!   text (the types' own serde forms where they have one), which the
//!   Python side turns into small classes; units are in the key names
//!   (`_ns`, `_ms`, `_us`, `_bytes`).
//! - A request the service model cannot carry (a period of 0 ms, an
//!   unknown metric, a bad control) raises `ConfigError`; the network or
//!   the node failing raises `XappError` with the SDK's one-line message.

use crate::{parse_doc, ConfigError};
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tcran_tc::{Change, Control, PipelineConfig};
use tcran_xapp::blocking;
use tcran_xapp::{
    ControlOutcome, Direction, DrbKey, Metric, NodeId, NodeInfo, TcIndication, Trigger, XappConfig,
    XappError as SdkError,
};

create_exception!(
    _native,
    XappError,
    PyRuntimeError,
    "The E2 termination or a node failed a request: no such node, a node gone, no answer in time, a listener that cannot bind. The message is the SDK's one line."
);

fn sdk_err(e: SdkError) -> PyErr {
    match e {
        SdkError::Invalid(why) => ConfigError::new_err(why),
        e => XappError::new_err(e.to_string()),
    }
}

/// How long one wait holds the GIL released before Python may run its
/// signal handlers (Ctrl-C).
const SLICE: Duration = Duration::from_millis(100);

/// Waits for `f` (one slice at a time, GIL released) until it gives
/// `Some`, `deadline` passes (`Ok(None)`) or Python raises (Ctrl-C).
#[allow(clippy::disallowed_types, clippy::disallowed_methods)] // a caller's timeout is wall-clock time
fn wait<T: Send>(
    py: Python<'_>,
    timeout_s: Option<f64>,
    mut f: impl FnMut(Duration) -> Option<T> + Send,
) -> PyResult<Option<T>> {
    let deadline = match timeout_s {
        Some(s) if !(s >= 0.0 && s.is_finite()) => {
            return Err(ConfigError::new_err(format!(
                "timeout = {s} s: must be a finite number of seconds >= 0, or None to wait for ever"
            )))
        }
        // A deadline past what the clock can hold is none.
        Some(s) => Duration::try_from_secs_f64(s)
            .ok()
            .and_then(|d| std::time::Instant::now().checked_add(d)),
        None => None,
    };
    loop {
        let slice = match deadline {
            Some(d) => d
                .saturating_duration_since(std::time::Instant::now())
                .min(SLICE),
            None => SLICE,
        };
        if let Some(v) = py.detach(|| f(slice)) {
            return Ok(Some(v));
        }
        py.check_signals()?;
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return Ok(None);
        }
    }
}

fn node_json(n: &NodeInfo) -> serde_json::Value {
    json!({
        "id": n.id,
        "name": n.name,
        "peer": n.peer.to_string(),
        "tls": n.tls,
        "functions": n.functions,
        "drbs": pairs(&n.drbs, Direction::Downlink),
        "uplink_drbs": pairs(&n.drbs, Direction::Uplink),
        "indications": n.indications,
        "indications_dropped": n.indications_dropped,
    })
}

/// The `(rnti, drb)` pairs of `drbs` in direction `dir`.
fn pairs(drbs: &[DrbKey], dir: Direction) -> Vec<(u16, u8)> {
    drbs.iter()
        .filter(|d| d.dir == dir)
        .map(|d| (d.rnti.0, d.drb.0))
        .collect()
}

fn direction_name(dir: Direction) -> &'static str {
    match dir {
        Direction::Downlink => "downlink",
        Direction::Uplink => "uplink",
    }
}

/// A DRB as Python names it: `uplink` false for the gNB's downlink
/// pipeline, true for the UE's uplink one.
fn key(rnti: u16, drb: u8, uplink: bool) -> DrbKey {
    if uplink {
        DrbKey::uplink(rnti, drb)
    } else {
        DrbKey::new(rnti, drb)
    }
}

fn indication_json(i: &TcIndication) -> String {
    let drbs: Vec<_> = i
        .drbs
        .iter()
        .map(|d| {
            let l = &d.lower;
            json!({
                "rnti": d.drb.rnti.0,
                "drb": d.drb.drb.0,
                "direction": direction_name(d.drb.dir),
                "rlc_backlog_bytes": l.rlc_backlog_bytes,
                "rlc_backlog_sdus": l.rlc_backlog_sdus,
                "rlc_sojourn_us": l.rlc_sojourn.as_nanos() / 1000,
                "rlc_tx_bytes": l.rlc_tx_bytes,
                "mac_tx_bytes": l.mac_tx_bytes,
                "mac_prbs": l.mac_prbs,
                "mcs": l.mcs,
                "stats": d.stats,
            })
        })
        .collect();
    json!({ "time_ns": i.time_ns, "condition": i.condition, "drbs": drbs }).to_string()
}

fn metric(name: &str) -> PyResult<Metric> {
    Ok(match name {
        "rlc_sojourn_us" => Metric::RlcSojournUs,
        "rlc_backlog_bytes" => Metric::RlcBacklogBytes,
        "tc_sojourn_us" => Metric::TcSojournUs,
        "tc_backlog_packets" => Metric::TcBacklogPackets,
        "tc_drops_per_check" => Metric::TcDropsPerCheck,
        other => {
            return Err(ConfigError::new_err(format!(
                "metric = {other:?}: expected one of rlc_sojourn_us, rlc_backlog_bytes, \
                 tc_sojourn_us, tc_backlog_packets, tc_drops_per_check (E2SM-TCRAN)"
            )))
        }
    })
}

fn drb_keys(drbs: &[(u16, u8, bool)]) -> Vec<DrbKey> {
    drbs.iter().map(|&(r, d, up)| key(r, d, up)).collect()
}

/// `(applied, pipeline JSON)` or `(refused, the node's reason)`.
fn outcome(o: ControlOutcome) -> (bool, String) {
    match o {
        ControlOutcome::Applied(p) => (
            true,
            serde_json::to_string(&p).expect("a pipeline config serializes"),
        ),
        ControlOutcome::Refused(why) => (false, why),
    }
}

/// The E2 termination with its own runtime (two threads).
#[pyclass(module = "tcran._native", name = "Xapp", frozen)]
#[derive(Debug)]
pub(crate) struct PyXapp {
    inner: blocking::Xapp,
}

#[pymethods]
impl PyXapp {
    /// Listens with framed TCP on `listen` (`host:port`, port 0: any).
    #[new]
    #[pyo3(signature = (listen, answer_timeout_s=5.0, setup_timeout_s=5.0, buffer=4096))]
    fn new(
        py: Python<'_>,
        listen: &str,
        answer_timeout_s: f64,
        setup_timeout_s: f64,
        buffer: usize,
    ) -> PyResult<Self> {
        let addr: SocketAddr = listen.parse().map_err(|_| {
            ConfigError::new_err(format!(
                "listen = {listen:?}: not an address with a port (e.g. \"127.0.0.1:36421\", \"[::1]:0\")"
            ))
        })?;
        let secs = |what: &str, s: f64| {
            if s > 0.0 && s <= 3600.0 {
                Ok(Duration::from_secs_f64(s))
            } else {
                Err(ConfigError::new_err(format!(
                    "{what} = {s} s: must be within (0, 3600]"
                )))
            }
        };
        if buffer == 0 {
            return Err(ConfigError::new_err(
                "buffer = 0: at least 1 indication per subscription",
            ));
        }
        let mut cfg = XappConfig::tcp(addr);
        cfg.answer_timeout = secs("answer_timeout", answer_timeout_s)?;
        cfg.setup_timeout = secs("setup_timeout", setup_timeout_s)?;
        cfg.subscription_buffer = buffer;
        let inner = py.detach(|| blocking::Xapp::start(cfg)).map_err(sdk_err)?;
        Ok(PyXapp { inner })
    }

    /// The addresses listened on (`host:port`, the port chosen for 0).
    fn local_addrs(&self) -> Vec<String> {
        self.inner
            .local_addrs()
            .iter()
            .map(|a| a.to_string())
            .collect()
    }

    /// The connected nodes as a JSON list.
    fn nodes_json(&self) -> String {
        let nodes: Vec<_> = self.inner.nodes().iter().map(node_json).collect();
        serde_json::Value::from(nodes).to_string()
    }

    /// Waits until at least `n` nodes are connected (at most `timeout_s`,
    /// None: for ever); the nodes as a JSON list, or None on timeout.
    #[pyo3(signature = (n, timeout_s=None))]
    fn wait_for_nodes_json(
        &self,
        py: Python<'_>,
        n: usize,
        timeout_s: Option<f64>,
    ) -> PyResult<Option<String>> {
        let x = &self.inner;
        // `wait_for_nodes` fails only by its deadline (one slice).
        let got = wait(py, timeout_s, |slice| x.wait_for_nodes(n, slice).ok())?;
        Ok(got.map(|nodes| {
            serde_json::Value::from(nodes.iter().map(node_json).collect::<Vec<_>>()).to_string()
        }))
    }

    /// The node's DRBs as (RNTI, DRB id).
    /// The node's DRBs in one direction, as `(rnti, drb)`.
    #[pyo3(signature = (node, uplink=false))]
    fn drbs(&self, node: NodeId, uplink: bool) -> PyResult<Vec<(u16, u8)>> {
        let dir = if uplink {
            Direction::Uplink
        } else {
            Direction::Downlink
        };
        Ok(pairs(&self.inner.drbs(node).map_err(sdk_err)?, dir))
    }

    /// An E2SM-TCRAN subscription: periodic every `period_ms`, or, with a
    /// `metric`, a report of the DRBs whose metric is above `threshold`
    /// (checked every `period_ms`). `drbs` empty: all.
    #[pyo3(signature = (node, period_ms, drbs, metric=None, threshold=0, rising_edge_only=true))]
    #[allow(clippy::too_many_arguments)]
    fn subscribe(
        &self,
        py: Python<'_>,
        node: NodeId,
        period_ms: u32,
        drbs: Vec<(u16, u8, bool)>,
        metric: Option<&str>,
        threshold: u64,
        rising_edge_only: bool,
    ) -> PyResult<PySubscription> {
        let trigger = match metric {
            None => Trigger::Periodic { period_ms },
            Some(m) => Trigger::Condition {
                check_period_ms: period_ms,
                metric: self::metric(m)?,
                threshold,
                rising_edge_only,
            },
        };
        let keys = drb_keys(&drbs);
        let sub = py
            .detach(|| self.inner.subscribe_tc(node, trigger, &keys))
            .map_err(sdk_err)?;
        Ok(PySubscription {
            xapp: self.inner.clone(),
            node,
            sub: Mutex::new(Some(sub)),
            closed: AtomicBool::new(false),
        })
    }

    /// Sends controls (JSON or TOML texts of `tcran_tc::Control`, applied
    /// in order, all or none) to one DRB (`uplink`: the UE's uplink DRB);
    /// `(applied, pipeline JSON)` or `(False, reason)`. An empty list reads
    /// the pipeline.
    #[pyo3(signature = (node, rnti, drb, controls, uplink=false))]
    fn control(
        &self,
        py: Python<'_>,
        node: NodeId,
        rnti: u16,
        drb: u8,
        controls: Vec<String>,
        uplink: bool,
    ) -> PyResult<(bool, String)> {
        let controls = controls
            .iter()
            .map(|c| parse_doc::<Control>("control", c))
            .collect::<PyResult<Vec<_>>>()?;
        let change = Change::Controls(controls);
        py.detach(|| self.inner.control(node, key(rnti, drb, uplink), &change))
            .map(outcome)
            .map_err(sdk_err)
    }

    /// Replaces one DRB's whole pipeline (a `PipelineConfig` as JSON or
    /// TOML text); as `control`.
    #[pyo3(signature = (node, rnti, drb, pipeline, uplink=false))]
    fn deploy(
        &self,
        py: Python<'_>,
        node: NodeId,
        rnti: u16,
        drb: u8,
        pipeline: &str,
        uplink: bool,
    ) -> PyResult<(bool, String)> {
        let cfg: PipelineConfig = parse_doc("pipeline", pipeline)?;
        py.detach(|| self.inner.deploy(node, key(rnti, drb, uplink), cfg))
            .map(outcome)
            .map_err(sdk_err)
    }

    /// One DRB's running pipeline configuration as JSON.
    #[pyo3(signature = (node, rnti, drb, uplink=false))]
    fn pipeline_json(
        &self,
        py: Python<'_>,
        node: NodeId,
        rnti: u16,
        drb: u8,
        uplink: bool,
    ) -> PyResult<String> {
        let p = py
            .detach(|| self.inner.pipeline(node, key(rnti, drb, uplink)))
            .map_err(sdk_err)?;
        Ok(serde_json::to_string(&p).expect("a pipeline config serializes"))
    }

    /// Closes one node's association.
    fn disconnect(&self, py: Python<'_>, node: NodeId) {
        py.detach(|| self.inner.disconnect(node))
    }

    /// Stops listening and closes every association.
    fn shutdown(&self) {
        self.inner.shutdown()
    }
}

/// One E2SM-TCRAN subscription; closing (or dropping) it deletes it on the
/// node.
#[pyclass(module = "tcran._native", name = "Subscription", frozen)]
#[derive(Debug)]
pub(crate) struct PySubscription {
    xapp: blocking::Xapp,
    node: NodeId,
    sub: Mutex<Option<blocking::Subscription<TcIndication>>>,
    /// Set by `close` from any thread; a reader waiting in `next_json`
    /// sees it within one slice.
    closed: AtomicBool,
}

#[pymethods]
impl PySubscription {
    /// The node it belongs to.
    #[getter]
    fn node(&self) -> NodeId {
        self.node
    }

    /// The next indication as JSON, waiting at most `timeout_s` (None: for
    /// ever). `(None, True)` once the node is gone (or the subscription
    /// closed) and every indication was read; `(None, False)` on timeout.
    #[pyo3(signature = (timeout_s=None))]
    fn next_json(
        &self,
        py: Python<'_>,
        timeout_s: Option<f64>,
    ) -> PyResult<(Option<String>, bool)> {
        // Taken without waiting: a second reader blocking here with the
        // GIL would keep the first one from ever getting it back.
        let mut guard = match self.sub.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(XappError::new_err(
                    "another thread is reading this subscription",
                ))
            }
        };
        let Some(sub) = guard.as_mut() else {
            return Ok((None, true));
        };
        let xapp = &self.xapp;
        let node = self.node;
        let closed = &self.closed;
        // Some(Some(i)): an indication; Some(None): the node is gone.
        let got = wait(py, timeout_s, |slice| {
            if closed.load(Ordering::Relaxed) {
                return Some(None);
            }
            if let Some(i) = sub.recv_timeout(slice) {
                return Some(Some(i));
            }
            // `recv_timeout` says None for a timeout and for a node that
            // is gone; the registry tells them apart. An indication that
            // came in between is still read first.
            if xapp.handle().node(node).is_none() {
                return Some(sub.recv_timeout(Duration::ZERO));
            }
            None
        })?;
        match got {
            Some(Some(i)) => Ok((Some(indication_json(&i)), false)),
            Some(None) => {
                *guard = None;
                Ok((None, true))
            }
            None => Ok((None, false)),
        }
    }

    /// Deletes the subscription on the node (if it is still there); a
    /// thread waiting for its next indication gets none.
    fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        if let Ok(mut g) = self.sub.try_lock() {
            g.take();
        }
    }
}
