//! E2AP over SCTP: the transport E2AP specifies (O-RAN.WG3.E2GAP; the
//! RIC listens on port 36421), where the kernel has SCTP.
//!
//! - One association is one one-to-one style socket,
//!   `socket(AF_INET or AF_INET6, SOCK_STREAM, IPPROTO_SCTP)` (RFC 6458
//!   sec. 4), connected to the RIC.
//! - Each E2AP PDU is one SCTP user message: SCTP keeps message
//!   boundaries, so there is no framing. A message is read until the
//!   kernel marks its end (`MSG_EOR`), so one delivered in parts (partial
//!   delivery) is put back together; one above [`MAX_FRAME`] bytes ends the
//!   association, as an over-long frame does on TCP.
//! - Every PDU is sent on stream 0 with payload protocol identifier
//!   [`E2AP_PPID`] (70, in network byte order), in an `SCTP_SNDRCV`
//!   ancillary message (RFC 6458 sec. 5.3.2, `struct sctp_sndrcvinfo`).
//! - Whether the kernel has SCTP is found at run time
//!   ([`sctp_available`]); without it, [`connect`] fails with
//!   [`TransportError::Unavailable`] and that message, before any socket
//!   work.
//!
//! The machine this was written on has no SCTP in its kernel: the
//! detection is tested there, the socket path is not exercised by a test
//! (docs/e2.md says so).

use crate::transport::{sctp_available, Link, TransportError, MAX_FRAME};
use socket2::{Domain, MaybeUninitSlice, MsgHdr, MsgHdrMut, Protocol, Socket, Type};
use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::mpsc;

/// SCTP payload protocol identifier of E2AP: 70, as the E2 agents of
/// srsRAN send it (`e2ap_ppid = 70`, passed through `htonl` to
/// `sctp_sendmsg`).
pub const E2AP_PPID: u32 = 70;
/// IPPROTO_SCTP (IANA protocol number 132).
const IPPROTO_SCTP: i32 = 132;
/// `SCTP_SNDRCV` cmsg type (Linux `include/uapi/linux/sctp.h`).
const SCTP_SNDRCV: i32 = 1;
/// `EINPROGRESS` on Linux: a non-blocking connect under way.
const EINPROGRESS: i32 = 115;

/// The control buffer of `sendmsg`: one `cmsghdr` (`size_t cmsg_len; int
/// cmsg_level; int cmsg_type;`) followed by a `struct sctp_sndrcvinfo`
/// (`u16 stream, ssn, flags; u32 ppid, context, timetolive, tsn, cumtsn;
/// i32 assoc_id`: 32 bytes, ppid at offset 8), in the machine's layout.
/// `sinfo_ppid` is opaque to the kernel and goes on the wire as stored,
/// so it is stored in network byte order.
pub fn sndrcv_control(ppid: u32) -> Vec<u8> {
    const INFO: usize = 32;
    let header = std::mem::size_of::<usize>() + 8;
    let mut b = Vec::with_capacity(header + INFO);
    b.extend_from_slice(&(header + INFO).to_ne_bytes());
    b.extend_from_slice(&IPPROTO_SCTP.to_ne_bytes());
    b.extend_from_slice(&SCTP_SNDRCV.to_ne_bytes());
    let mut info = [0u8; INFO];
    info[8..12].copy_from_slice(&ppid.to_be_bytes());
    b.extend_from_slice(&info);
    b
}

/// Opens one SCTP association to the RIC at `addr` (see the module docs).
pub async fn connect(addr: SocketAddr) -> Result<Link, TransportError> {
    sctp_available().map_err(TransportError::Unavailable)?;
    let socket = Socket::new(
        Domain::for_address(addr),
        Type::STREAM,
        Some(Protocol::from(IPPROTO_SCTP)),
    )?;
    socket.set_nonblocking(true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(EINPROGRESS) => {}
        Err(e) => return Err(e.into()),
    }
    let fd = Arc::new(register(socket)?);
    // The connect is done when the socket is writable; SO_ERROR says how.
    fd.writable().await?.retain_ready();
    if let Some(e) = fd.get_ref().take_error()? {
        return Err(e.into());
    }
    Ok(link(fd))
}

/// The reader and writer tasks of a connected socket.
fn link(fd: Arc<AsyncFd<Socket>>) -> Link {
    let (in_tx, in_rx) = mpsc::channel(1024);
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(1024);
    let reader = fd.clone();
    tokio::spawn(async move {
        let mut message = Vec::new();
        let mut buf = vec![MaybeUninit::<u8>::uninit(); MAX_FRAME + 1];
        loop {
            let read = reader
                .async_io(Interest::READABLE, |s| {
                    let mut bufs = [MaybeUninitSlice::new(&mut buf)];
                    let mut hdr = MsgHdrMut::new().with_buffers(&mut bufs);
                    let n = s.recvmsg(&mut hdr, 0)?;
                    Ok((n, hdr.flags().is_end_of_record()))
                })
                .await;
            let (n, end) = match read {
                Ok((0, _)) => break,
                Ok(r) => r,
                Err(e) => {
                    let _ = in_tx.send(Err(e.into())).await;
                    break;
                }
            };
            message.extend_from_slice(initialised(&buf, n));
            if message.len() > MAX_FRAME {
                let _ = in_tx
                    .send(Err(TransportError::FrameLength(message.len())))
                    .await;
                break;
            }
            if end && in_tx.send(Ok(std::mem::take(&mut message))).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let control = sndrcv_control(E2AP_PPID);
        while let Some(pdu) = out_rx.recv().await {
            let sent = fd
                .async_io(Interest::WRITABLE, |s| {
                    let bufs = [IoSlice::new(&pdu)];
                    let hdr = MsgHdr::new().with_buffers(&bufs).with_control(&control);
                    s.sendmsg(&hdr, 0)
                })
                .await;
            if sent.is_err() {
                break;
            }
        }
        let _ = fd.get_ref().shutdown(std::net::Shutdown::Write);
    });
    Link {
        rx: in_rx,
        tx: out_tx,
    }
}

/// The socket in tokio's reactor.
#[allow(unsafe_code)]
fn register(socket: Socket) -> std::io::Result<AsyncFd<Socket>> {
    // SAFETY: `Socket` owns its descriptor: it stays open and the same
    // for as long as the AsyncFd holds the Socket, and `as_raw_fd` always
    // returns it.
    unsafe { AsyncFd::register(socket) }.map_err(std::io::Error::from)
}

/// The first `n` bytes of `buf`, which `recvmsg` just wrote.
#[allow(unsafe_code)]
fn initialised(buf: &[MaybeUninit<u8>], n: usize) -> &[u8] {
    let n = n.min(buf.len());
    // SAFETY: recvmsg returned `n`, so it initialised the first `n` bytes
    // of the buffer it was given (`buf`); MaybeUninit<u8> has u8's layout.
    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_send_info_carries_ppid_70_in_network_order() {
        let c = sndrcv_control(E2AP_PPID);
        let word = std::mem::size_of::<usize>();
        assert_eq!(c.len(), word + 8 + 32);
        assert_eq!(&c[..word], &(word + 8 + 32).to_ne_bytes());
        assert_eq!(&c[word..word + 4], &132i32.to_ne_bytes());
        assert_eq!(&c[word + 4..word + 8], &1i32.to_ne_bytes());
        let info = &c[word + 8..];
        assert_eq!(&info[8..12], &[0, 0, 0, 70]);
        assert!(info[..8].iter().chain(&info[12..]).all(|b| *b == 0));
    }

    /// Where the kernel has no SCTP (this machine), connecting says so in
    /// one line, before any socket work.
    #[tokio::test]
    async fn without_sctp_in_the_kernel_connect_says_so() {
        let addr: SocketAddr = "127.0.0.1:36421".parse().unwrap();
        match (sctp_available(), connect(addr).await) {
            (Err(why), Err(TransportError::Unavailable(m))) => {
                assert_eq!(m, why);
                assert!(m.contains("SCTP is not available"), "{m}");
                assert_eq!(m.lines().count(), 1, "{m}");
            }
            (Err(_), other) => panic!("expected Unavailable, got {other:?}"),
            // A kernel with SCTP: nothing listens on the port, so the
            // connect fails as any refused connect does.
            (Ok(()), r) => assert!(r.is_err()),
        }
    }
}
