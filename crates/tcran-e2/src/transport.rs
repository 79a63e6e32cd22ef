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
//! A driver owns its association as a [`Framed`] stream ([`Connector::open`]):
//! it reads and writes the socket itself, so a PDU costs no task wake-up
//! between the driver and the socket (a control's answer leaves from the
//! task that read the control). A [`Link`] (a reader and a writer task
//! behind channels) remains for SCTP, in-process connections and callers
//! that want channels.
//!
//! [`run`] connects, runs E2 Setup, serves the RIC, and on a lost
//! connection (a RIC restart) reconnects when the agent's backoff says
//! ([`crate::backoff`]) and sets up again; the node, and so every
//! pipeline, is untouched meanwhile.

use crate::agent::{Agent, AgentEvent, AgentState, AgentStats};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tcran_control::RanNode;
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

/// Bytes of received frames buffered per association, at most: frames
/// that arrived together are read at once.
const READ_BUFFER: usize = 128 * 1024;
/// The read buffer's first size: it grows (doubling) only while the peer
/// sends more than it holds.
const INITIAL_READ_BUFFER: usize = 4 * 1024;
/// Before E2 Setup, a buffer grows only to what one frame needs.
const SETUP_READ_BUFFER: usize = MAX_FRAME + 4;
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

// --------------------------------------------------------- framed stream

/// A byte stream that [`Framed`] can own: TCP, TLS over TCP, any
/// `AsyncRead + AsyncWrite` (boxed, so that one driver serves them all).
pub trait ByteStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> ByteStream for T {}

/// Bytes queued for sending beyond which [`Framed::flush`] waits for the
/// peer to read (backpressure, as a full channel of a [`Link`] does).
const MAX_QUEUED: usize = 1024 * 1024;

/// One association over a byte stream, read and written by the task that
/// owns it: no reader or writer task in between, so a PDU costs no task
/// wake-up on either side of the socket (a [`Link`] costs two per PDU
/// and direction).
///
/// - [`Framed::recv`] is cancel-safe (a `select!` branch may drop it and
///   nothing is lost: the bytes stay in its buffer) and, while it waits
///   for input, writes out whatever is queued, so a driver that waits in
///   `recv` keeps sending.
/// - [`Framed::queue`] frames a PDU into the output buffer without I/O;
///   [`Framed::flush`] then writes as much as the socket takes at once
///   (every queued PDU in one write) and waits only while more than
///   1 MiB stays queued. Within an association PDUs leave in the order
///   they were queued.
/// - Frames are as in [`read_frame`]: zero-length frames are skipped, a
///   length above [`MAX_FRAME`] is an error.
/// - The read buffer starts at 4 KiB and doubles only while the peer has
///   sent more than it holds, up to 128 KiB ([`Framed::new`]) or, for a
///   peer not trusted yet ([`Framed::before_setup`]: a RIC's connection
///   before E2 Setup), up to one frame until [`Framed::after_setup`]: an
///   idle connection costs 4 KiB.
pub struct Framed {
    io: Box<dyn ByteStream>,
    rbuf: Vec<u8>,
    /// The size `rbuf` may grow to.
    rmax: usize,
    /// Unconsumed received bytes are `rbuf[rpos..rend]`.
    rpos: usize,
    rend: usize,
    /// The peer closed its side cleanly.
    eof: bool,
    /// An error was returned: nothing more is read.
    failed: bool,
    wbuf: Vec<u8>,
    /// Bytes of `wbuf` already written.
    wpos: usize,
    /// Written since the last successful flush (TLS keeps records of its
    /// own until flushed).
    unflushed: bool,
}

impl std::fmt::Debug for Framed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Framed")
            .field("received", &(self.rend - self.rpos))
            .field("queued", &(self.wbuf.len() - self.wpos))
            .finish()
    }
}

impl Framed {
    pub fn new<S: ByteStream + 'static>(stream: S) -> Framed {
        Framed {
            rmax: READ_BUFFER,
            ..Framed::before_setup(stream)
        }
    }

    /// A stream whose buffer grows only to what one frame needs until
    /// [`Framed::after_setup`].
    pub fn before_setup<S: ByteStream + 'static>(stream: S) -> Framed {
        Framed {
            io: Box::new(stream),
            rbuf: vec![0u8; INITIAL_READ_BUFFER],
            rmax: SETUP_READ_BUFFER,
            rpos: 0,
            rend: 0,
            eof: false,
            failed: false,
            wbuf: Vec::new(),
            wpos: 0,
            unflushed: false,
        }
    }

    /// The peer completed E2 Setup: its frames may be read in batches.
    pub fn after_setup(&mut self) {
        self.rmax = READ_BUFFER;
    }

    /// The read buffer's size now (tests, memory accounting).
    pub fn read_buffer_len(&self) -> usize {
        self.rbuf.len()
    }

    /// The next PDU; `None` at a clean end of stream, `Err` (once) when
    /// the stream fails or breaks framing. Cancel-safe.
    pub async fn recv(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    fn poll_recv(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Vec<u8>, TransportError>>> {
        use std::task::Poll;
        if self.failed {
            return Poll::Ready(None);
        }
        loop {
            match self.take_frame() {
                Ok(Some(f)) => return Poll::Ready(Some(Ok(f))),
                Ok(None) => {}
                Err(e) => return self.fail(e),
            }
            if self.eof {
                return Poll::Ready(None);
            }
            if self.rend == self.rbuf.len() {
                if self.rpos > 0 {
                    // An incomplete frame at the end: move it to the front.
                    self.rbuf.copy_within(self.rpos..self.rend, 0);
                    self.rend -= self.rpos;
                    self.rpos = 0;
                } else {
                    // Full of one incomplete frame (or of frames at the
                    // batch limit, impossible: they were taken): grow. The
                    // limit is at least MAX_FRAME + 4, so a frame fits.
                    let len = (self.rbuf.len() * 2).min(self.rmax);
                    self.rbuf.resize(len, 0);
                }
            }
            let mut rb = tokio::io::ReadBuf::new(&mut self.rbuf[self.rend..]);
            match std::pin::Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                Poll::Pending => break,
                Poll::Ready(Err(e)) => return self.fail(e.into()),
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        self.eof = true;
                        if self.rpos != self.rend {
                            // A frame cut short, as `read_exact` says it.
                            return self.fail(
                                std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into(),
                            );
                        }
                        return Poll::Ready(None);
                    }
                    self.rend += n;
                }
            }
        }
        // Nothing to read: what is queued goes out meanwhile (a write that
        // cannot proceed leaves its waker registered too).
        match self.poll_write_out(cx) {
            Poll::Ready(Err(e)) => self.fail(e),
            _ => Poll::Pending,
        }
    }

    /// The one error of this stream; `recv` says `None` afterwards.
    fn fail<T>(&mut self, e: TransportError) -> std::task::Poll<Option<Result<T, TransportError>>> {
        self.failed = true;
        self.rpos = self.rend;
        std::task::Poll::Ready(Some(Err(e)))
    }

    /// A complete frame from the buffer, if there is one.
    fn take_frame(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        loop {
            let have = &self.rbuf[self.rpos..self.rend];
            let Some(len) = have.first_chunk::<4>() else {
                break;
            };
            let n = u32::from_be_bytes(*len) as usize;
            if n == 0 {
                self.rpos += 4;
                continue;
            }
            if n > MAX_FRAME {
                return Err(TransportError::FrameLength(n));
            }
            if have.len() < 4 + n {
                break;
            }
            let f = have[4..4 + n].to_vec();
            self.rpos += 4 + n;
            self.rewind();
            return Ok(Some(f));
        }
        self.rewind();
        Ok(None)
    }

    /// Reads start at the buffer's front again once it is all consumed.
    fn rewind(&mut self) {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        }
    }

    /// Frames `pdu` into the output buffer (no I/O).
    pub fn queue(&mut self, pdu: &[u8]) -> Result<(), TransportError> {
        append_frame(&mut self.wbuf, pdu)
    }

    /// Writes what is queued as far as the stream takes it now; waits
    /// only while more than 1 MiB stays queued.
    pub async fn flush(&mut self) -> Result<(), TransportError> {
        std::future::poll_fn(|cx| match self.poll_write_out(cx) {
            std::task::Poll::Ready(r) => std::task::Poll::Ready(r),
            std::task::Poll::Pending if self.wbuf.len() - self.wpos > MAX_QUEUED => {
                std::task::Poll::Pending
            }
            std::task::Poll::Pending => std::task::Poll::Ready(Ok(())),
        })
        .await
    }

    /// Writes queued bytes until done (`Ready(Ok)`), the stream would
    /// block (`Pending`, waker registered) or fails.
    fn poll_write_out(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), TransportError>> {
        use std::task::Poll;
        while self.wpos < self.wbuf.len() {
            match std::pin::Pin::new(&mut self.io).poll_write(cx, &self.wbuf[self.wpos..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(
                        std::io::Error::from(std::io::ErrorKind::WriteZero).into()
                    ))
                }
                Poll::Ready(Ok(n)) => {
                    self.wpos += n;
                    self.unflushed = true;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e.into())),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.wbuf.clear();
        self.wpos = 0;
        if self.unflushed {
            match std::pin::Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e.into())),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Sends what is still queued and closes the stream (for TLS with
    /// close_notify), waiting at most `limit` for a peer that does not
    /// read.
    pub async fn close(mut self, limit: std::time::Duration) {
        let _ = tokio::time::timeout(limit, async {
            std::future::poll_fn(|cx| self.poll_write_out(cx)).await?;
            self.io.shutdown().await?;
            Ok::<(), TransportError>(())
        })
        .await;
    }
}

/// An association as a driver uses it: a [`Framed`] stream (TCP, TLS:
/// no task between the driver and the socket) or a [`Link`]'s channels
/// (SCTP, in-process).
#[derive(Debug)]
pub enum Association {
    Framed(Framed),
    Link(Link),
}

impl Association {
    /// The next PDU; `None` when the peer closed. Cancel-safe.
    pub async fn recv(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        match self {
            Association::Framed(f) => f.recv().await,
            Association::Link(l) => l.rx.recv().await,
        }
    }

    /// Queues `pdu` (framed streams: sent by the next [`Association::flush`]
    /// or while waiting in [`Association::recv`]; links: handed to the
    /// writer task, waiting while its queue is full).
    pub async fn send(&mut self, pdu: Vec<u8>) -> Result<(), TransportError> {
        match self {
            Association::Framed(f) => f.queue(&pdu),
            Association::Link(l) => {
                l.tx.send(pdu)
                    .await
                    .map_err(|_| TransportError::Unavailable("the connection closed".into()))
            }
        }
    }

    /// Writes what [`Association::send`] queued (see [`Framed::flush`]).
    pub async fn flush(&mut self) -> Result<(), TransportError> {
        match self {
            Association::Framed(f) => f.flush().await,
            Association::Link(_) => Ok(()),
        }
    }

    /// Sends what is queued (at most `limit` long) and closes.
    pub async fn close(self, limit: std::time::Duration) {
        match self {
            Association::Framed(f) => f.close(limit).await,
            // Dropping the sender lets the writer task finish and shut
            // the socket down.
            Association::Link(_) => {}
        }
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

/// The largest PEM file read: a certificate is a few KiB, a CA bundle of
/// a few hundred certificates (Mozilla's: about 220 KiB) well under this.
pub const MAX_PEM_FILE_BYTES: u64 = 1 << 20;

/// A PEM file that could not be read: its path, and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}: {error}")]
pub struct PemFileError {
    pub file: String,
    pub error: tcran_core::text_file::TextFileError,
}

impl TlsPem {
    /// Reads the CA, certificate and key files, each at most
    /// [`MAX_PEM_FILE_BYTES`] (`/dev/zero` fails at the limit).
    pub fn read(
        ca: &std::path::Path,
        cert: &std::path::Path,
        key: &std::path::Path,
    ) -> Result<TlsPem, PemFileError> {
        let read = |p: &std::path::Path| {
            tcran_core::text_file::read_text_file(p, "PEM file", MAX_PEM_FILE_BYTES).map_err(
                |error| PemFileError {
                    file: p.display().to_string(),
                    error,
                },
            )
        };
        Ok(TlsPem {
            ca: read(ca)?,
            cert: read(cert)?,
            key: read(key)?,
        })
    }
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

impl std::fmt::Display for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Connector::Tcp { addr, tls: None } => write!(f, "{addr}"),
            Connector::Tcp { addr, tls: Some(_) } => write!(f, "{addr} (TLS)"),
            Connector::Sctp { addr } => write!(f, "{addr} (SCTP)"),
            Connector::Channel(_) => f.write_str("the in-process RIC"),
        }
    }
}

/// A failed TLS handshake: [`TransportError::Tls`] when TLS refused it
/// (a certificate that does not verify, no common protocol), the I/O
/// error when the connection broke.
fn handshake_error(e: std::io::Error) -> TransportError {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(tls) => TransportError::Tls(format!("handshake: {tls}")),
        None => TransportError::Io(e),
    }
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
                    .await
                    .map_err(handshake_error)?;
                Ok(link_of_stream(tls))
            }
            Connector::Sctp { addr } => crate::sctp::connect(*addr).await,
            Connector::Channel(c) => c.connect(),
        }
    }

    /// Opens one association for a driver that reads and writes it
    /// itself: framed TCP and TLS as a [`Framed`] stream, SCTP and
    /// in-process as a [`Link`].
    pub async fn open(&self) -> Result<Association, TransportError> {
        match self {
            Connector::Tcp { addr, tls: None } => {
                let s = tokio::net::TcpStream::connect(addr).await?;
                s.set_nodelay(true)?;
                Ok(Association::Framed(Framed::new(s)))
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
                    .await
                    .map_err(handshake_error)?;
                Ok(Association::Framed(Framed::new(tls)))
            }
            Connector::Sctp { .. } | Connector::Channel(_) => {
                self.connect().await.map(Association::Link)
            }
        }
    }
}

/// Microseconds to add to `now`, a reading of a monotonic clock that
/// started at some instant, to get microseconds since the Unix epoch (the
/// timestamps FlexRIC's xApps compare with their wall clock). Every wall
/// clock of tcran (this driver's, the emulator's timerfd clock) maps its
/// readings with it.
// The drivers are the I/O edge that owns the wall clock; the sans-IO
// cores get this offset as a parameter.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
pub fn unix_offset_us(now: tcran_core::Instant) -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    since_epoch.as_micros() as i64 - (now.as_nanos() / 1000) as i64
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
    pub fn unix_offset_us(&self) -> i64 {
        unix_offset_us(self.now())
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

/// Runs `agent` against the RIC reached by `connector` until `shutdown`
/// becomes true or the RIC removes the node (E2 Removal). Reconnects when
/// the agent's backoff says ([`Agent::connect_at`]: TimeToWait honoured,
/// exponential, reset by a successful E2 Setup) and redoes E2 Setup; the
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
    N: RanNode + Send + 'static,
    F: FnMut(&AgentEvent) + Send,
{
    while !*shutdown.borrow() {
        if let Some(at) = agent.connect_at() {
            tokio::select! {
                _ = tokio::time::sleep_until(clock.at(at)) => {}
                r = shutdown.changed() => {
                    if r.is_err() {
                        break;
                    }
                    continue;
                }
            }
        }
        let mut link = match connector.open().await {
            Ok(l) => l,
            Err(e) => {
                if matches!(e, TransportError::Unavailable(_))
                    && matches!(connector, Connector::Sctp { .. })
                {
                    log::error!("E2: {e}");
                    break;
                }
                agent.connect_failed(clock.now());
                log::warn!("E2: cannot reach the RIC {connector}: {e}");
                continue;
            }
        };
        agent.connected(&*lock(&node), clock.now());
        // Whether the driver stops (shutdown, E2 Removal) rather than
        // reconnects.
        let stop = loop {
            // What the agent produced goes out in one write (a control's
            // answer straight from this task: no writer task between).
            let mut sent = Ok(());
            while let Some(pdu) = agent.poll_transmit() {
                if sent.is_ok() {
                    sent = link.send(pdu).await;
                }
            }
            if let Err(e) = sent.and(link.flush().await) {
                log::warn!("E2: association lost: {e}");
                break false;
            }
            while let Some(ev) = agent.poll_event() {
                on_event(&ev);
            }
            if agent.state() == AgentState::Removed {
                break true;
            }
            let wake = agent.next_wakeup().map(|t| clock.at(t));
            tokio::select! {
                frame = link.recv() => match frame {
                    Some(Ok(pdu)) => agent.handle(&pdu, &mut *lock(&node), clock.now()),
                    Some(Err(e)) => {
                        log::warn!("E2: association lost: {e}");
                        break false;
                    }
                    None => {
                        log::warn!("E2: the RIC closed the association");
                        break false;
                    }
                },
                _ = async { tokio::time::sleep_until(wake.expect("guarded")).await }, if wake.is_some() => {
                    agent.on_timeout(&*lock(&node), clock.now());
                }
                _ = shutdown.changed() => {
                    if *shutdown.borrow() {
                        break true;
                    }
                }
            }
        };
        // What the agent sent last (an E2 Removal Response) still goes out.
        link.close(std::time::Duration::from_secs(1)).await;
        if stop {
            break;
        }
        agent.disconnected(clock.now());
    }
    agent.stats()
}
