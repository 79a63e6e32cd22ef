//! The E2 agent inside a driver's own event loop, with its I/O on a
//! thread of its own.
//!
//! A real-time front end (the real-time simulator, the live emulator) owns
//! its RAN node on one thread and sleeps until the node's next event. The
//! agent belongs on that thread too: it reads and changes the node, so it
//! must see it between two events, never during one, and without a lock
//! on the data path. Only the socket work is elsewhere: [`Session::start`]
//! spawns an I/O thread that connects through a [`Connector`] (framed
//! TCP, TLS, SCTP detection) when the session tells it to, and hands
//! every received PDU over with the driver's `wake` callback (e.g. a
//! `mio::Waker`), so a control is handled as soon as it arrives rather
//! than at the next slot.
//!
//! Contract for the driver: call [`Session::poll`] when woken and at
//! [`Session::next_wakeup`] with the node and the node's clock; it feeds
//! received PDUs to the [`Agent`], runs the agent's timers (report
//! periods, E2 Setup retries) and passes what the agent sends to the I/O
//! thread. A new association gets a new E2 Setup; subscriptions end with
//! the association, the node and its pipelines are never touched by it.
//! What the I/O thread cannot take (its queue of 1,024 PDUs full: the RIC
//! reads slower than the node reports) is dropped and counted in
//! [`SessionStats::pdus_dropped`], never buffered without bound.
//!
//! Reconnections are decided here, on the node's clock, by the agent's
//! backoff ([`crate::backoff`]: TimeToWait honoured, exponential with
//! jitter, reset only by a successful E2 Setup), not by the I/O thread:
//! the thread connects once per request and reports how it went.
//!
//! Failures are counted ([`SessionStats`], [`AgentStats::setup_failures`])
//! and logged (`log`, target `tcran_e2::session`) without flooding: the
//! first failure of each kind (RIC unreachable, TLS, E2 Setup Failure,
//! association lost, framing) in a run of failures is logged with its
//! reason, then one "still failing" line at the 2nd, 4th, 8th, ...
//! failure, and one line when E2 Setup succeeds again.

use crate::agent::{Agent, AgentEvent, AgentStats};
use crate::transport::{Connector, TransportError};
use std::sync::mpsc as std_mpsc;
use tcran_control::RanNode;
use tcran_core::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// PDUs the I/O thread holds for sending; beyond, the session drops and
/// counts them.
const OUT_QUEUE: usize = 1024;

/// What the I/O thread tells the driver.
#[derive(Debug)]
enum LinkEvent {
    Up(mpsc::Sender<Vec<u8>>),
    /// The connection (or its TLS handshake) failed.
    ConnectFailed(TransportError),
    Pdu(Vec<u8>),
    /// The association ended: an error, or `None` when the RIC closed it.
    Down(Option<TransportError>),
    Fatal(String),
}

/// Something the driver may want to log.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// An association to the RIC is up (E2 Setup follows).
    Connected,
    /// The association is gone, and why; the I/O thread reconnects.
    Disconnected(String),
    Agent(AgentEvent),
}

/// Counters of the session (across associations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Associations opened (TCP connected, TLS handshake done).
    pub connections: u64,
    /// Connections that failed before an association (refused,
    /// unreachable), TLS failures apart.
    pub connect_failures: u64,
    /// TLS handshakes that failed (e.g. the RIC's certificate does not
    /// verify).
    pub tls_failures: u64,
    /// Associations that ended (the RIC closed them, or they failed).
    pub disconnections: u64,
    /// Of those, ended by a frame the transport cannot take (a length out
    /// of 1..=65536).
    pub framing_errors: u64,
    /// PDUs the agent produced that the I/O thread could not take.
    pub pdus_dropped: u64,
}

/// Logs failures once per kind and run of failures (see the module docs).
#[derive(Debug)]
struct FailureLog {
    who: String,
    /// Kinds already logged in this run of failures.
    logged: Vec<&'static str>,
    failures: u32,
}

impl FailureLog {
    fn failed(&mut self, kind: &'static str, why: &str, retry_in: Duration) {
        self.failures = self.failures.saturating_add(1);
        let retry = format!("next attempt in {:.1} s", retry_in.as_secs_f64());
        if !self.logged.contains(&kind) {
            self.logged.push(kind);
            log::warn!("{}: {why}; {retry}", self.who);
        } else if self.failures.is_power_of_two() {
            log::warn!(
                "{}: still failing after {} attempts (last: {why}); {retry}",
                self.who,
                self.failures
            );
        }
    }

    fn recovered(&mut self) {
        if self.failures > 0 {
            log::warn!(
                "{}: E2 Setup done after {} failed attempt(s)",
                self.who,
                self.failures
            );
        }
        self.failures = 0;
        self.logged.clear();
    }
}

/// The agent of one E2 node, driven from its node's thread (see the
/// module docs).
#[derive(Debug)]
pub struct Session {
    agent: Agent,
    incoming: std_mpsc::Receiver<LinkEvent>,
    /// Asks the I/O thread for one connection attempt.
    connect: mpsc::Sender<()>,
    /// An attempt was asked for and has not reported back.
    connecting: bool,
    out: Option<mpsc::Sender<Vec<u8>>>,
    log: FailureLog,
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
    events: Vec<SessionEvent>,
    stats: SessionStats,
}

impl Session {
    /// Starts the I/O thread for `connector`; `wake` is called (from that
    /// thread) whenever the driver should call [`Session::poll`].
    pub fn start(
        agent: Agent,
        connector: Connector,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Session, String> {
        let (tx, incoming) = std_mpsc::channel();
        let (stop, stop_rx) = watch::channel(false);
        let (connect, connect_rx) = mpsc::channel(1);
        let who = format!(
            "E2 node {} -> {connector}",
            crate::e2ap::node_id_string(&agent.config().node_id)
        );
        let thread = std::thread::Builder::new()
            .name("tcran-e2-io".into())
            .spawn(move || io_thread(connector, tx, wake, stop_rx, connect_rx))
            .map_err(|e| format!("cannot start the E2 I/O thread: {e}"))?;
        Ok(Session {
            agent,
            incoming,
            connect,
            connecting: false,
            log: FailureLog {
                who,
                logged: Vec::new(),
                failures: 0,
            },
            out: None,
            stop,
            thread: Some(thread),
            events: Vec::new(),
            stats: SessionStats::default(),
        })
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// When [`Session::poll`] must run next for the agent's timers or the
    /// next connection attempt (`None`: only when woken).
    pub fn next_wakeup(&self) -> Option<Instant> {
        let connect = self.agent.connect_at().filter(|_| !self.connecting);
        Instant::earliest(self.agent.next_wakeup(), connect)
    }

    /// Time from `now` to the next connection attempt, for logs.
    fn retry_in(&self, now: Instant) -> Duration {
        self.agent
            .connect_at()
            .map_or(Duration::ZERO, |t| t.saturating_since(now))
    }

    /// Handles what arrived, runs the timers due at `now`, sends what the
    /// agent produced. `Err` is fatal for the session (the transport can
    /// never work here, e.g. SCTP on a kernel without it), in one line.
    pub fn poll(&mut self, node: &mut dyn RanNode, now: Instant) -> Result<(), String> {
        while let Ok(ev) = self.incoming.try_recv() {
            match ev {
                LinkEvent::Up(tx) => {
                    self.connecting = false;
                    self.stats.connections += 1;
                    self.out = Some(tx);
                    self.events.push(SessionEvent::Connected);
                    self.agent.connected(node, now);
                }
                LinkEvent::ConnectFailed(e) => {
                    self.connecting = false;
                    self.agent.connect_failed(now);
                    let kind = if matches!(e, TransportError::Tls(_)) {
                        self.stats.tls_failures += 1;
                        "tls"
                    } else {
                        self.stats.connect_failures += 1;
                        "connect"
                    };
                    let retry_in = self.retry_in(now);
                    // Without Rust's "(os error N)": the words say it.
                    let why = tcran_core::text_file::without_os_code(&e.to_string()).to_string();
                    self.log
                        .failed(kind, &format!("cannot reach the RIC: {why}"), retry_in);
                }
                LinkEvent::Pdu(pdu) => {
                    self.agent.handle(&pdu, node, now);
                }
                LinkEvent::Down(e) => {
                    self.stats.disconnections += 1;
                    let framing = matches!(e, Some(TransportError::FrameLength(_)));
                    if framing {
                        self.stats.framing_errors += 1;
                    }
                    let why = match e {
                        Some(e) => format!("association lost: {e}"),
                        None => "the RIC closed the association".to_string(),
                    };
                    self.out = None;
                    self.agent.disconnected(now);
                    let retry_in = self.retry_in(now);
                    self.log
                        .failed(if framing { "framing" } else { "drop" }, &why, retry_in);
                    self.events.push(SessionEvent::Disconnected(why));
                }
                LinkEvent::Fatal(why) => return Err(why),
            }
            self.flush();
        }
        if self.agent.next_wakeup().is_some_and(|t| t <= now) {
            self.agent.on_timeout(node, now);
        }
        self.flush();
        while let Some(e) = self.agent.poll_event() {
            match &e {
                AgentEvent::SetupDone => self.log.recovered(),
                AgentEvent::SetupFailed { cause, retry_in } => {
                    self.log
                        .failed("setup", &format!("E2 Setup Failure ({cause:?})"), *retry_in)
                }
                _ => {}
            }
            self.events.push(SessionEvent::Agent(e));
        }
        if !self.connecting && self.agent.connect_at().is_some_and(|t| t <= now) {
            // The queue holds one request: the I/O thread takes it before
            // it reports, and `connecting` stays set until it has.
            self.connecting = self.connect.try_send(()).is_ok();
        }
        Ok(())
    }

    fn flush(&mut self) {
        while let Some(pdu) = self.agent.poll_transmit() {
            // Not connected: the agent's outbox was for an association
            // that is gone.
            let Some(tx) = &self.out else { continue };
            match tx.try_send(pdu) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => self.stats.pdus_dropped += 1,
                // The association just ended; `Down` is on its way.
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
    }

    /// Events since the last call, oldest first.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, SessionEvent> {
        self.events.drain(..)
    }

    /// Closes the association and ends the I/O thread; returns the
    /// counters.
    pub fn stop(mut self) -> (AgentStats, SessionStats) {
        self.shutdown();
        (self.agent.stats(), self.stats)
    }

    fn shutdown(&mut self) {
        let _ = self.stop.send(true);
        self.out = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn io_thread(
    connector: Connector,
    tx: std_mpsc::Sender<LinkEvent>,
    wake: impl Fn(),
    mut stop: watch::Receiver<bool>,
    mut connect: mpsc::Receiver<()>,
) {
    let send = |ev: LinkEvent| {
        let ok = tx.send(ev).is_ok();
        wake();
        ok
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            send(LinkEvent::Fatal(format!(
                "cannot start the E2 I/O runtime: {e}"
            )));
            return;
        }
    };
    rt.block_on(async move {
        loop {
            // One attempt per request of the node's thread (its backoff).
            tokio::select! {
                r = connect.recv() => if r.is_none() { return },
                _ = stop.changed() => return,
            }
            let connected = tokio::select! {
                r = connector.open() => r,
                _ = stop.changed() => return,
            };
            let mut link = match connected {
                Ok(link) => link,
                Err(TransportError::Unavailable(m))
                    if matches!(connector, Connector::Sctp { .. }) =>
                {
                    send(LinkEvent::Fatal(m));
                    return;
                }
                Err(e) => {
                    if !send(LinkEvent::ConnectFailed(e)) {
                        return;
                    }
                    continue;
                }
            };
            // This task reads and writes the socket itself (framed TCP,
            // TLS): the node thread's PDUs cost one wake-up here, with no
            // reader or writer task behind it.
            let (out, mut out_rx) = mpsc::channel::<Vec<u8>>(OUT_QUEUE);
            if !send(LinkEvent::Up(out)) {
                return;
            }
            let mut node_open = true;
            let why = loop {
                tokio::select! {
                    frame = link.recv() => match frame {
                        Some(Ok(pdu)) => {
                            if !send(LinkEvent::Pdu(pdu)) {
                                return;
                            }
                        }
                        Some(Err(e)) => break Some(e),
                        None => break None,
                    },
                    pdu = out_rx.recv(), if node_open => {
                        let Some(pdu) = pdu else {
                            node_open = false;
                            continue;
                        };
                        // Everything queued so far goes out in one write.
                        let mut sent = link.send(pdu).await;
                        while sent.is_ok() {
                            let Ok(pdu) = out_rx.try_recv() else { break };
                            sent = link.send(pdu).await;
                        }
                        if let Err(e) = sent.and(link.flush().await) {
                            break Some(e);
                        }
                    }
                    _ = stop.changed() => {
                        link.close(std::time::Duration::from_secs(1)).await;
                        return;
                    }
                }
            };
            link.close(std::time::Duration::from_secs(1)).await;
            if !send(LinkEvent::Down(why)) {
                return;
            }
        }
    });
}
