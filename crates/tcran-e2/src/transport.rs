//! Transports between the agent and a RIC, and the tokio driver that runs
//! an [`Agent`] on one.
//!
//! - **Framed TCP** (shared/e2/FLEXRIC-INTEROP.md): each E2AP PDU is one
//!   frame, a u32 big-endian length N (1..=65536) then N bytes; N = 0 is
//!   ignored. One connection is one association. Optionally TLS (rustls,
//!   server and client certificates), off by default.
//! - **SCTP** on port 36421 (E2AP over SCTP, O-RAN.WG3.E2GAP), in
//!   [`crate::sctp`]: detected at run time with [`sctp_available`]; where
//!   the kernel has none, connecting says so in one line.
//! - **In-process channels** ([`channel_listener`]) for tests: the same
//!   frames without a socket.
//!
//! [`run`] connects, runs E2 Setup, serves the RIC, and on a lost
//! connection (a RIC restart) reconnects with exponential backoff (100 ms
//! doubling to 5 s) and sets up again; the node, and so every pipeline,
//! is untouched meanwhile.

use crate::agent::{Agent, AgentEvent, AgentState, AgentStats};
use crate::node::E2Node;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

/// Largest frame (FLEXRIC-INTEROP.md: FlexRIC's PDUs stay below 32 KiB).
pub const MAX_FRAME: usize = 65536;
/// The E2 SCTP port (O-RAN.WG3.E2GAP).
pub const E2_SCTP_PORT: u16 = 36421;

/// A transport failure, in one line.
#[derive(Debug, Error)]
pub enum TransportError {
    #[error("E2 frame length {0} out of range (1..=65536)")]
    FrameLength(usize),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("{0}")]
    Unavailable(String),
}

/// Bytes of received frames buffered per association.
const READ_BUFFER: usize = 128 * 1024;
/// Frames are gathered into one write up to about this many bytes.
const WRITE_BATCH: usize = 256 * 1024;

/// Prepends the 4-byte big-endian length.
pub fn frame(pdu: &[u8]) -> Result<Vec<u8>, TransportError> {
    let mut out = Vec::with_capacity(4 + pdu.len());
    append_frame(&mut out, pdu)?;
    Ok(out)
}

/// Appends `pdu` as one frame (length, then the bytes) to `out`.
pub fn append_frame(out: &mut Vec<u8>, pdu: &[u8]) -> Result<(), TransportError> {
    if pdu.is_empty() || pdu.len() > MAX_FRAME {
        return Err(TransportError::FrameLength(pdu.len()));
    }
    out.extend_from_slice(&(pdu.len() as u32).to_be_bytes());
    out.extend_from_slice(pdu);
    Ok(())
}

/// Reads one frame; `Ok(None)` at a clean end of stream. Zero-length
/// frames are skipped. Never allocates more than the announced length,
/// which is at most [`MAX_FRAME`].
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
) -> Result<Option<Vec<u8>>, TransportError> {
    loop {
        let mut len = [0u8; 4];
        match r.read_exact(&mut len).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let n = u32::from_be_bytes(len) as usize;
        if n == 0 {
            continue;
        }
        if n > MAX_FRAME {
            return Err(TransportError::FrameLength(n));
        }
        let mut buf = vec![0u8; n];
        r.read_exact(&mut buf).await?;
        return Ok(Some(buf));
    }
}

/// Writes one frame.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    pdu: &[u8],
) -> Result<(), TransportError> {
    w.write_all(&frame(pdu)?).await?;
    Ok(())
}

/// Whether this kernel offers SCTP: `Err` says why not, in one line.
pub fn sctp_available() -> Result<(), String> {
    use socket2::{Domain, Protocol, Socket, Type};
    match Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::from(132))) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "SCTP is not available on this machine (socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP): {e}); \
             use the framed TCP transport (4-byte length per E2AP PDU), which FlexRIC built with \
             its SCTP sockets carried over TCP speaks"
        )),
    }
}

// ---------------------------------------------------------------- links

/// Received PDUs of a link.
pub type Incoming = mpsc::Receiver<Result<Vec<u8>, TransportError>>;

/// One established association: frames in, frames out.
#[derive(Debug)]
pub struct Link {
    /// Received PDUs; `Err` or the channel closing ends the association.
    pub rx: Incoming,
    /// PDUs to send.
    pub tx: mpsc::Sender<Vec<u8>>,
}

/// Splits a byte stream into a [`Link`], with a reader task and a writer
/// task (so reading is cancel-safe for the driver's `select!`).
pub fn link_of_stream<S>(stream: S) -> Link
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (r, mut w) = tokio::io::split(stream);
    // Buffered: a frame's length and body come in one read, and frames
    // that arrived together (a report period's indications, at a RIC) in
    // one read too.
    let mut r = tokio::io::BufReader::with_capacity(READ_BUFFER, r);
    let (in_tx, in_rx) = mpsc::channel(1024);
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(1024);
    tokio::spawn(async move {
        loop {
            match read_frame(&mut r).await {
                Ok(Some(f)) => {
                    if in_tx.send(Ok(f)).await.is_err() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = in_tx.send(Err(e)).await;
                    break;
                }
            }
        }
    });
    tokio::spawn(async move {
        // Every PDU queued when the writer runs goes out in one write (one
        // system call for a report period's indications), framed into one
        // reused buffer.
        let mut batch = Vec::new();
        'write: while let Some(pdu) = out_rx.recv().await {
            batch.clear();
            let mut next = Some(pdu);
            while let Some(pdu) = next.take() {
                if append_frame(&mut batch, &pdu).is_err() {
                    break 'write;
                }
                if batch.len() < WRITE_BATCH {
                    next = out_rx.try_recv().ok();
                }
            }
            if w.write_all(&batch).await.is_err() {
                break;
            }
        }
        let _ = w.shutdown().await;
    });
    Link {
        rx: in_rx,
        tx: out_tx,
    }
}

/// An in-process "listener": each [`ChannelConnector`] connection arrives
/// here as the RIC's end of a new link.
pub fn channel_listener() -> (ChannelConnector, mpsc::Receiver<Link>) {
    let (tx, rx) = mpsc::channel(16);
    (ChannelConnector { accept: tx }, rx)
}

/// The node's side of [`channel_listener`].
#[derive(Debug, Clone)]
pub struct ChannelConnector {
    accept: mpsc::Sender<Link>,
}

impl ChannelConnector {
    fn connect(&self) -> Result<Link, TransportError> {
        // One direction: PDUs in, `Ok(PDU)` out; dropping the sender ends
        // the receiver, as closing a socket would.
        fn half() -> (mpsc::Sender<Vec<u8>>, Incoming) {
            let (tx, mut rx) = mpsc::channel::<Vec<u8>>(1024);
            let (out_tx, out_rx) = mpsc::channel(1024);
            tokio::spawn(async move {
                while let Some(p) = rx.recv().await {
                    if out_tx.send(Ok(p)).await.is_err() {
                        break;
                    }
                }
            });
            (tx, out_rx)
        }
        let (node_tx, ric_rx) = half();
        let (ric_tx, node_rx) = half();
        self.accept
            .try_send(Link {
                rx: ric_rx,
                tx: ric_tx,
            })
            .map_err(|_| TransportError::Unavailable("no in-process RIC is listening".into()))?;
        Ok(Link {
            rx: node_rx,
            tx: node_tx,
        })
    }
}

// ------------------------------------------------------------------ TLS

/// TLS material from PEM text: a CA to verify the peer with, and our own
/// certificate chain and private key.
#[derive(Debug, Clone)]
pub struct TlsPem {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

fn certs(pem: &str) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, TransportError> {
    use rustls::pki_types::pem::PemObject;
    let v: Result<Vec<_>, _> =
        rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()).collect();
    let v = v.map_err(|e| TransportError::Tls(format!("certificate PEM: {e}")))?;
    if v.is_empty() {
        return Err(TransportError::Tls("no certificate in the PEM text".into()));
    }
    Ok(v)
}

fn key(pem: &str) -> Result<rustls::pki_types::PrivateKeyDer<'static>, TransportError> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::PrivateKeyDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| TransportError::Tls(format!("private key PEM: {e}")))
}

fn roots(pem: &str) -> Result<rustls::RootCertStore, TransportError> {
    let mut roots = rustls::RootCertStore::empty();
    for c in certs(pem)? {
        roots
            .add(c)
            .map_err(|e| TransportError::Tls(format!("CA certificate: {e}")))?;
    }
    Ok(roots)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Client configuration of the node: verifies the RIC against `ca`,
/// presents `cert`/`key` (client authentication).
pub fn tls_client_config(pem: &TlsPem) -> Result<Arc<rustls::ClientConfig>, TransportError> {
    let cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Tls(e.to_string()))?
        .with_root_certificates(roots(&pem.ca)?)
        .with_client_auth_cert(certs(&pem.cert)?, key(&pem.key)?)
        .map_err(|e| TransportError::Tls(e.to_string()))?;
    Ok(Arc::new(cfg))
}

/// Server configuration of a RIC (tests, xApp SDK): presents `cert`/`key`
/// and requires a client certificate signed by `ca`.
pub fn tls_server_config(pem: &TlsPem) -> Result<Arc<rustls::ServerConfig>, TransportError> {
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots(&pem.ca)?),
        provider(),
    )
    .build()
    .map_err(|e| TransportError::Tls(e.to_string()))?;
    let cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Tls(e.to_string()))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs(&pem.cert)?, key(&pem.key)?)
        .map_err(|e| TransportError::Tls(e.to_string()))?;
    Ok(Arc::new(cfg))
}

// ---------------------------------------------------------------- driver

/// Where and how the node reaches its RIC.
#[derive(Debug, Clone)]
pub enum Connector {
    /// Framed TCP, optionally TLS (`server_name` is checked against the
    /// RIC's certificate).
    Tcp {
        addr: SocketAddr,
        tls: Option<(Arc<rustls::ClientConfig>, String)>,
    },
    /// SCTP ([`crate::sctp`]): refused with [`sctp_available`]'s message
    /// where the kernel has none.
    Sctp { addr: SocketAddr },
    /// In-process (tests).
    Channel(ChannelConnector),
}

impl Connector {
    /// Opens one association.
    pub async fn connect(&self) -> Result<Link, TransportError> {
        match self {
            Connector::Tcp { addr, tls: None } => {
                let s = tokio::net::TcpStream::connect(addr).await?;
                s.set_nodelay(true)?;
                Ok(link_of_stream(s))
            }
            Connector::Tcp {
                addr,
                tls: Some((cfg, name)),
            } => {
                let s = tokio::net::TcpStream::connect(addr).await?;
                s.set_nodelay(true)?;
                let name = rustls::pki_types::ServerName::try_from(name.clone())
                    .map_err(|e| TransportError::Tls(format!("server name {name:?}: {e}")))?;
                let tls = tokio_rustls::TlsConnector::from(cfg.clone())
                    .connect(name, s)
                    .await?;
                Ok(link_of_stream(tls))
            }
            Connector::Sctp { addr } => crate::sctp::connect(*addr).await,
            Connector::Channel(c) => c.connect(),
        }
    }
}

/// The node's clock as the driver reads it: nanoseconds since the driver
/// started, at wall-clock rate (the emulator's and the real-time
/// simulator's time base).
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    start: tokio::time::Instant,
}

impl WallClock {
    pub fn start() -> WallClock {
        WallClock {
            start: tokio::time::Instant::now(),
        }
    }
    /// Microseconds to add to [`WallClock::now`] to get microseconds since
    /// the Unix epoch (FlexRIC's timestamps).
    // The driver is the I/O edge that owns the wall clock; the sans-IO
    // core gets this offset as a parameter.
    #[allow(clippy::disallowed_methods, clippy::disallowed_types)]
    pub fn unix_offset_us(&self) -> i64 {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        since_epoch.as_micros() as i64 - self.start.elapsed().as_micros() as i64
    }
    pub fn now(&self) -> tcran_core::Instant {
        tcran_core::Instant::from_nanos(self.start.elapsed().as_nanos() as u64)
    }
    fn at(&self, t: tcran_core::Instant) -> tokio::time::Instant {
        self.start + std::time::Duration::from_nanos(t.as_nanos())
    }
}

/// Locks the node; a panic elsewhere while it was locked does not stop E2.
fn lock<N>(n: &Mutex<N>) -> std::sync::MutexGuard<'_, N> {
    n.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reconnection backoff: 100 ms, doubling, at most 5 s.
pub fn backoff(attempt: u32) -> std::time::Duration {
    std::time::Duration::from_millis((100u64 << attempt.min(6)).min(5000))
}

/// Runs `agent` against the RIC reached by `connector` until `shutdown`
/// becomes true or the RIC removes the node (E2 Removal). Reconnects with
/// [`backoff`] whenever the association is lost and redoes E2 Setup; the
/// node is locked only while the agent uses it. `on_event` sees every
/// [`AgentEvent`] (logging, metrics). Returns the agent's counters.
pub async fn run<N, F>(
    mut agent: Agent,
    node: Arc<Mutex<N>>,
    connector: Connector,
    clock: WallClock,
    mut shutdown: watch::Receiver<bool>,
    mut on_event: F,
) -> AgentStats
where
    N: E2Node + Send + 'static,
    F: FnMut(&AgentEvent) + Send,
{
    let mut attempt = 0u32;
    'outer: while !*shutdown.borrow() {
        let mut link = match connector.connect().await {
            Ok(l) => l,
            Err(e) => {
                log::warn!(
                    "E2: cannot reach the RIC: {e}; retrying in {:?}",
                    backoff(attempt)
                );
                if matches!(e, TransportError::Unavailable(_))
                    && matches!(connector, Connector::Sctp { .. })
                {
                    log::error!("E2: {e}");
                    break;
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff(attempt)) => {}
                    _ = shutdown.changed() => {}
                }
                attempt = attempt.saturating_add(1);
                continue;
            }
        };
        agent.connected(&*lock(&node), clock.now());
        loop {
            while let Some(pdu) = agent.poll_transmit() {
                if link.tx.send(pdu).await.is_err() {
                    break;
                }
            }
            while let Some(ev) = agent.poll_event() {
                if ev == AgentEvent::SetupDone {
                    attempt = 0;
                }
                on_event(&ev);
            }
            if agent.state() == AgentState::Removed {
                break 'outer;
            }
            let wake = agent.next_wakeup().map(|t| clock.at(t));
            tokio::select! {
                frame = link.rx.recv() => match frame {
                    Some(Ok(pdu)) => agent.handle(&pdu, &mut *lock(&node), clock.now()),
                    Some(Err(e)) => {
                        log::warn!("E2: association lost: {e}");
                        break;
                    }
                    None => {
                        log::warn!("E2: the RIC closed the association");
                        break;
                    }
                },
                _ = async { tokio::time::sleep_until(wake.expect("guarded")).await }, if wake.is_some() => {
                    agent.on_timeout(&*lock(&node), clock.now());
                }
                _ = shutdown.changed() => {
                    if *shutdown.borrow() {
                        break 'outer;
                    }
                }
            }
        }
        agent.disconnected();
        tokio::select! {
            _ = tokio::time::sleep(backoff(attempt)) => {}
            _ = shutdown.changed() => {}
        }
        attempt = attempt.saturating_add(1);
    }
    agent.stats()
}
