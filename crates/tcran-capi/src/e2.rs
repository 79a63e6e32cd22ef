//! The E2 node of the C ABI (`tcran_e2_t`): tcran's E2 agent
//! ([`tcran_e2::Agent`], E2AP v02.03 clause 8) serving the instances a C
//! gNB registered, so a RIC and its xApps (`tcran xapp`, the xApp SDK,
//! FlexRIC) read and reconfigure the pipelines inside that gNB.
//!
//! Contract:
//! - Threads: the agent and its socket run on a thread of their own
//!   (`tcran-e2`), never on a caller's thread: a gNB's slot thread only
//!   ever takes an instance's mutex, for as long as one of its own calls.
//!   The E2 thread takes the same mutex to read a bearer or apply a
//!   control, so a change lands between two calls of the gNB (between two
//!   slots of OAI's scheduler), all or nothing
//!   ([`tcran_tc::Pipeline::apply_change`]).
//! - Time: the agent's timers (report periods, E2 Setup retries) run on
//!   the wall clock; the pipelines keep the caller's clock (OAI's radio
//!   clock), so a read or a control uses the instance's latest time, never
//!   the agent's.
//! - Bearers: [`E2Node::add`] keeps an instance alive (a reference of its
//!   own) until [`E2Node::remove`] or the node stops; a bearer added after
//!   E2 Setup appears in the next report (E2SM-TCRAN reports every DRB).
//! - What the node serves per bearer: the pipeline's configuration and
//!   statistics (E2SM-TCRAN, FlexRIC's TC model), and, from the reports
//!   the gNB gives (`tcran_on_report`), RLC occupancy, MAC bytes, PRBs and
//!   MCS (FlexRIC's MAC and RLC models) and the TS 28.552 counters
//!   (E2SM-KPM): PDCP SDU volume (what entered the pipeline), RLC volume
//!   (what the MAC pulled), UE throughput over slots that left data (TS
//!   28.552 5.1.1.3.1), PRBs used. A gNB that does not report the RLC
//!   head-of-line age gets an estimate (backlog over drain rate, capped by
//!   the time since RLC was last empty): the sojourn the paper's xApps
//!   trigger on.
//! - Not served: RLC SDU delay (KPM's DRB.RlcSduDelayDl: no gNB reports a
//!   delivered SDU's delay here), PRBs available (the report does not
//!   carry the cell's size), HARQ counters per transmission, SDAP's QoS
//!   flow map and MAC slicing (refused with a reason).

use crate::error::Error;
use crate::instance::Instance;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tcran_control::{DrbKey, KpmCounters, LowerLayerKpis, RanNode, TcView};
use tcran_core::Instant;
use tcran_e2::sm::{e2sm_tcran, flexric_slice, flexric_stats, flexric_tc, kpm, rc, AnyModel};
use tcran_e2::transport::{Connector, WallClock};
use tcran_e2::{Agent, AgentConfig, AgentEvent, RicProfile};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{Applied, Change, Refused};

/// What `tcran_e2_start` takes (TOML or JSON).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct E2Config {
    /// Where the RIC (or `tcran xapp --ric-listen`) listens: HOST:PORT,
    /// framed TCP (a 4-byte length per E2AP PDU).
    pub ric: String,
    /// The gNB id in GlobalE2node-ID (PLMN 001/01, 22 bits).
    #[serde(default = "default_gnb_id")]
    pub gnb_id: u32,
    /// `auto` (FlexRIC's rules until a RIC Service Query), `standard` or
    /// `flexric` ([`RicProfile`]).
    #[serde(default)]
    pub profile: Profile,
    /// The longest wait between two attempts to reach the RIC (E2 Setup
    /// retries and reconnections double from 100 ms up to it), 100ms..=1h;
    /// default 30 s. A gNB whose RIC starts later reaches it within this.
    #[serde(default)]
    pub retry_max: Option<tcran_core::Duration>,
}

fn default_gnb_id() -> u32 {
    1
}

/// [`RicProfile`] as the config spells it.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    #[default]
    Auto,
    Standard,
    Flexric,
}

/// gNB ids on 22 bits (TS 38.413 9.3.1.6: 22..=32; tcran's node ids use 22).
const GNB_ID_BITS: u8 = 22;

impl E2Config {
    /// Checks the config and resolves the RIC's address.
    pub fn connector(&self) -> Result<Connector, Error> {
        use std::net::ToSocketAddrs;
        if self.gnb_id >= 1 << GNB_ID_BITS {
            return Err(Error::invalid(format!(
                "e2 config: gnb_id = {}: must be 0..={} (22 bits)",
                self.gnb_id,
                (1u32 << GNB_ID_BITS) - 1
            )));
        }
        if let Some(d) = self.retry_max {
            if d < tcran_core::Duration::from_millis(100)
                || d > tcran_core::Duration::from_secs(3600)
            {
                return Err(Error::invalid(format!(
                    "e2 config: retry_max = {d}: must be within 100ms..=1h"
                )));
            }
        }
        let addr = self
            .ric
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "e2 config: ric = {:?}: not an address: expected HOST:PORT, e.g. 127.0.0.1:36421",
                    self.ric
                ))
            })?;
        Ok(Connector::Tcp { addr, tls: None })
    }
}

/// The bearers the E2 node serves: the C caller's instances.
#[derive(Debug, Default)]
struct Bearers {
    by_key: BTreeMap<DrbKey, Arc<Instance>>,
}

impl RanNode for Bearers {
    fn drbs(&self, out: &mut Vec<DrbKey>) {
        out.extend(self.by_key.keys().copied());
    }

    fn tc_view(&self, drb: DrbKey, _now: Instant) -> Option<TcView> {
        let (config, stats, lower) = self.by_key.get(&drb)?.tc_view(true).ok()?;
        Some(TcView {
            config: config?,
            stats,
            lower,
        })
    }

    fn tc_stats(&self, drb: DrbKey, _now: Instant) -> Option<(PipelineStats, LowerLayerKpis)> {
        let (_, stats, lower) = self.by_key.get(&drb)?.tc_view(false).ok()?;
        Some((stats, lower))
    }

    fn kpm_cell(&self) -> KpmCounters {
        let mut cell = KpmCounters::default();
        for c in self.by_key.values().filter_map(|i| i.kpm().ok()) {
            cell.add_bearer(&c);
        }
        cell
    }

    fn kpm_drb(&self, drb: DrbKey) -> Option<KpmCounters> {
        self.by_key.get(&drb)?.kpm().ok()
    }

    fn apply(&mut self, drb: DrbKey, change: &Change, _now: Instant) -> Result<Applied, Refused> {
        // An instance an internal error left unusable serves nobody: to the
        // RIC it is gone, as it is to the gNB.
        let instance = self.by_key.get(&drb).ok_or(Refused::NoSuchDrb)?;
        instance.apply_e2(change).unwrap_or(Err(Refused::NoSuchDrb))
    }
}

/// Locks the bearers; a panic elsewhere while they were locked does not
/// stop E2 (the map is consistent between any two statements).
fn lock(b: &Mutex<Bearers>) -> MutexGuard<'_, Bearers> {
    b.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running E2 node (see the module docs).
#[derive(Debug)]
pub struct E2Node {
    bearers: Arc<Mutex<Bearers>>,
    shutdown: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl E2Node {
    /// Parses `config` (see [`E2Config`]) and starts the node's thread,
    /// which connects to the RIC and keeps reconnecting (E2 Setup again)
    /// until [`E2Node::stop`].
    pub fn start(config: &[u8], format: u32) -> Result<E2Node, Error> {
        let config: E2Config = crate::instance::parse("e2 config", config, format)?;
        let connector = config.connector()?;
        let clock = WallClock::start();
        let offset = clock.unix_offset_us();
        // The models of the emulator's node: each offered only to a RIC
        // that can take it (E2SM-TCRAN never to FlexRIC).
        let mut models = vec![
            AnyModel::FlexricTc(flexric_tc::FlexricTc {
                drb: None,
                time_offset_us: offset,
            }),
            AnyModel::Kpm(kpm::Kpm {
                time_offset_us: offset,
                ..kpm::Kpm::default()
            }),
            AnyModel::Rc(rc::Rc::default()),
            AnyModel::TcRan(e2sm_tcran::TcRan::default()),
        ];
        models.extend(flexric_stats::FlexricStats::all(offset).map(AnyModel::FlexricStats));
        models.push(AnyModel::FlexricSlice(flexric_slice::FlexricSlice::new(
            offset,
        )));
        let profile = match config.profile {
            Profile::Auto => RicProfile::Auto,
            Profile::Standard => RicProfile::Standard,
            Profile::Flexric => RicProfile::Flexric,
        };
        let mut agent_config = AgentConfig::new(models, profile);
        agent_config.node_id =
            tcran_e2::e2ap::gnb_node_id([0x00, 0xf1, 0x10], config.gnb_id, GNB_ID_BITS);
        if let Some(max) = config.retry_max {
            agent_config.backoff.max = max;
        }
        let agent = Agent::new(agent_config);
        let bearers = Arc::new(Mutex::new(Bearers::default()));
        let (shutdown, shutdown_rx) = tokio::sync::watch::channel(false);
        let node = bearers.clone();
        let who = format!("tcran-e2: gNB {} -> {}", config.gnb_id, config.ric);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::invalid(format!("cannot start the E2 runtime: {e}")))?;
        let thread = std::thread::Builder::new()
            .name("tcran-e2".into())
            .spawn(move || {
                let on_event = move |e: &AgentEvent| {
                    if let Some(line) = event_line(e) {
                        eprintln!("{who}: {line}");
                    }
                };
                runtime.block_on(tcran_e2::transport::run(
                    agent,
                    node,
                    connector,
                    clock,
                    shutdown_rx,
                    on_event,
                ));
            })
            .map_err(|e| Error::invalid(format!("cannot start the E2 thread: {e}")))?;
        Ok(E2Node {
            bearers,
            shutdown,
            thread: Some(thread),
        })
    }

    /// Serves `instance` as (`rnti`, `drb`); a bearer already served under
    /// that key is replaced.
    pub fn add(&self, instance: Arc<Instance>, rnti: u16, drb: u8) -> Result<(), Error> {
        let key = crate::instance::check_key(rnti, drb)?;
        lock(&self.bearers).by_key.insert(key, instance);
        Ok(())
    }

    /// Stops serving (`rnti`, `drb`); false if it was not served.
    pub fn remove(&self, rnti: u16, drb: u8) -> bool {
        lock(&self.bearers)
            .by_key
            .remove(&DrbKey::new(rnti, drb))
            .is_some()
    }

    /// Closes the association and ends the thread.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for E2Node {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The agent's events worth a line on the gNB's stderr: setup, refusals.
fn event_line(e: &AgentEvent) -> Option<String> {
    match e {
        AgentEvent::SetupDone => Some("E2 Setup done".into()),
        AgentEvent::SetupFailed { cause, retry_in } => Some(format!(
            "E2 Setup Failure ({cause:?}), again in {:.1} s",
            retry_in.as_secs_f64()
        )),
        AgentEvent::ControlApplied { function, .. } => {
            Some(format!("control for RAN function {function} applied"))
        }
        AgentEvent::ControlRefused { function, why, .. } => Some(format!(
            "control for RAN function {function} refused: {why}"
        )),
        AgentEvent::DecodeError(why) => Some(format!("undecodable PDU: {why}")),
        _ => None,
    }
}
