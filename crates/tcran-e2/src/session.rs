//! The E2 agent inside a driver's own event loop, with its I/O on a
//! thread of its own.
//!
//! A real-time front end (the real-time simulator, the live emulator) owns
//! its RAN node on one thread and sleeps until the node's next event. The
//! agent belongs on that thread too: it reads and changes the node, so it
//! must see it between two events, never during one, and without a lock
//! on the data path. Only the socket work is elsewhere: [`Session::start`]
//! spawns an I/O thread that connects through a [`Connector`] (framed
//! TCP, TLS, SCTP detection), reconnects with [`transport::backoff`] after
//! a lost association, and hands every received PDU over with the
//! driver's `wake` callback (e.g. a `mio::Waker`), so a control is handled
//! as soon as it arrives rather than at the next slot.
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

use crate::agent::{Agent, AgentEvent, AgentStats};
use crate::transport::{self, Connector, TransportError};
use std::sync::mpsc as std_mpsc;
use tcran_control::RanNode;
use tcran_core::Instant;
use tokio::sync::{mpsc, watch};

/// PDUs the I/O thread holds for sending; beyond, the session drops and
/// counts them.
const OUT_QUEUE: usize = 1024;

/// What the I/O thread tells the driver.
#[derive(Debug)]
enum LinkEvent {
    Up(mpsc::Sender<Vec<u8>>),
    Pdu(Vec<u8>),
    Down(String),
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
    pub connections: u64,
    pub disconnections: u64,
    /// PDUs the agent produced that the I/O thread could not take.
    pub pdus_dropped: u64,
}

/// The agent of one E2 node, driven from its node's thread (see the
/// module docs).
#[derive(Debug)]
pub struct Session {
    agent: Agent,
    incoming: std_mpsc::Receiver<LinkEvent>,
    out: Option<mpsc::Sender<Vec<u8>>>,
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
        let thread = std::thread::Builder::new()
            .name("tcran-e2-io".into())
            .spawn(move || io_thread(connector, tx, wake, stop_rx))
            .map_err(|e| format!("cannot start the E2 I/O thread: {e}"))?;
        Ok(Session {
            agent,
            incoming,
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

    /// When [`Session::poll`] must run next for the agent's timers
    /// (`None`: only when woken).
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.agent.next_wakeup()
    }

    /// Handles what arrived, runs the timers due at `now`, sends what the
    /// agent produced. `Err` is fatal for the session (the transport can
    /// never work here, e.g. SCTP on a kernel without it), in one line.
    pub fn poll(&mut self, node: &mut dyn RanNode, now: Instant) -> Result<(), String> {
        while let Ok(ev) = self.incoming.try_recv() {
            match ev {
                LinkEvent::Up(tx) => {
                    self.stats.connections += 1;
                    self.out = Some(tx);
                    self.events.push(SessionEvent::Connected);
                    self.agent.connected(node, now);
                }
                LinkEvent::Pdu(pdu) => {
                    self.agent.handle(&pdu, node, now);
                }
                LinkEvent::Down(why) => {
                    self.stats.disconnections += 1;
                    self.out = None;
                    self.agent.disconnected();
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
            self.events.push(SessionEvent::Agent(e));
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
        let mut attempt = 0u32;
        while !*stop.borrow() {
            let connected = tokio::select! {
                r = connector.open() => r,
                _ = stop.changed() => return,
            };
            match connected {
                Ok(mut link) => {
                    attempt = 0;
                    // This task reads and writes the socket itself (framed
                    // TCP, TLS): the node thread's PDUs cost one wake-up
                    // here, with no reader or writer task behind it.
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
                                Some(Err(e)) => break format!("association lost: {e}"),
                                None => break "the RIC closed the association".to_string(),
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
                                    break format!("association lost: {e}");
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
                Err(TransportError::Unavailable(m))
                    if matches!(connector, Connector::Sctp { .. }) =>
                {
                    send(LinkEvent::Fatal(m));
                    return;
                }
                Err(e) => log::warn!(
                    "E2: cannot reach the RIC: {e}; retrying in {:?}",
                    transport::backoff(attempt)
                ),
            }
            tokio::select! {
                _ = tokio::time::sleep(transport::backoff(attempt)) => {}
                _ = stop.changed() => {}
            }
            attempt = attempt.saturating_add(1);
        }
    });
}
