//! Request-driven TCP traffic: objects written to one persistent TCP
//! connection as they are requested, each timed from its request until its
//! last byte is acknowledged at the server.
//!
//! Two demand models:
//! - [`Demand::Pages`]: web browsing (Brunello sec. 4.4, [`WebPageModel`]).
//!   Closed loop: one page at a time; the next is requested a reading time
//!   after the last byte of the previous one is acknowledged.
//! - [`Demand::Files`]: FTP traffic model 1 (3GPP TR 36.814 Annex
//!   A.2.1.3.1: files of a fixed size, user arrivals a Poisson process of
//!   rate λ), the background of Brunello sec. 5.1 ("2 new users per second
//!   that download the 1Mb file"). Open loop: arrivals do not wait for
//!   completions.
//!
//! Deviation (files): the model opens a connection per user; here the
//! arrivals of one flow share its connection, in order, so a file that
//! arrives while another is downloading waits behind it (its time includes
//! the wait). A file arriving on a connection idle for more than an RTO
//! starts from the initial window, as a new connection would (the sender's
//! restart after idle, Linux's default); one arriving sooner inherits the
//! window. At the loads the model is used for (a few per cent of the
//! cell) files rarely overlap; several flows model several concurrent
//! users.
//!
//! The request's uplink is not simulated; the server learns a download is
//! complete when its last byte is ACKed, so the request's uplink delay is
//! stood in for by the ACK's. For the UE-side completion time watch the
//! [`TcpReceiver`](crate::tcp::TcpReceiver) with
//! [`watch_completion`](crate::tcp::TcpReceiver::watch_completion).

use std::collections::VecDeque;

use super::web::WebPageModel;
use crate::dist::exponential;
use crate::tcp::TcpSender;
use tcran_core::rng::RngStream;
use tcran_core::{Duration, Instant, Packet};

/// What the users behind one connection request.
#[derive(Debug, Clone, PartialEq)]
pub enum Demand {
    /// Web pages, each after the reading time that follows the previous.
    Pages(WebPageModel),
    /// Files of `size` bytes arriving as a Poisson process of
    /// `per_second` arrivals per second.
    Files { size: u64, per_second: f64 },
}

/// A finished download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadRecord {
    pub requested_at: Instant,
    pub completed_at: Instant,
    pub bytes: u64,
}

/// An object requested and not yet acknowledged in full.
#[derive(Debug, Clone, Copy)]
struct Outstanding {
    requested_at: Instant,
    bytes: u64,
    /// Stream offset one past its last byte.
    end: u64,
}

/// Server side of one user (or, for files, one arrival process): a TCP
/// sender fed object after object.
#[derive(Debug)]
pub struct DownloadServer {
    pub tcp: TcpSender,
    demand: Demand,
    rng: RngStream,
    /// Oldest first.
    outstanding: VecDeque<Outstanding>,
    /// The next request, if one is scheduled (pages: none while one loads).
    next_request: Option<Instant>,
    written: u64,
    /// No request at or after this instant.
    stop: Option<Instant>,
    pub completed: Vec<DownloadRecord>,
}

impl DownloadServer {
    /// `tcp` must be a fresh sender (nothing written). Pages: the first is
    /// requested at `start`. Files: the first arrives one inter-arrival
    /// time after `start` (the Poisson process starts at `start`).
    pub fn new(
        tcp: TcpSender,
        demand: Demand,
        mut rng: RngStream,
        start: Instant,
    ) -> DownloadServer {
        let first = match &demand {
            Demand::Pages(_) => start,
            Demand::Files { per_second, .. } => start + inter_arrival(&mut rng, *per_second),
        };
        DownloadServer {
            tcp,
            demand,
            rng,
            outstanding: VecDeque::new(),
            next_request: Some(first),
            written: 0,
            stop: None,
            completed: Vec::new(),
        }
    }

    /// No request at or after `stop` (`None`: requests go on); what was
    /// requested before it still completes.
    pub fn until(mut self, stop: Option<Instant>) -> DownloadServer {
        self.stop = stop;
        self
    }

    /// The next request, unless it falls at or after `stop`.
    fn due_request(&self) -> Option<Instant> {
        self.next_request
            .filter(|&t| self.stop.is_none_or(|s| t < s))
    }

    fn start_due_requests(&mut self, now: Instant) {
        while let Some(at) = self.due_request().filter(|&t| t <= now) {
            let bytes = match &self.demand {
                Demand::Pages(m) => m.draw_page(&mut self.rng).total_bytes,
                Demand::Files { size, .. } => *size,
            };
            self.tcp.write(bytes);
            self.written += bytes;
            self.outstanding.push_back(Outstanding {
                requested_at: at,
                bytes,
                end: self.written,
            });
            // Poisson arrivals follow the previous arrival, not the clock:
            // a late wake-up does not stretch the process.
            self.next_request = match &self.demand {
                Demand::Pages(_) => None,
                Demand::Files { per_second, .. } => {
                    Some(at + inter_arrival(&mut self.rng, *per_second))
                }
            };
        }
    }

    pub fn on_packet(&mut self, pkt: &Packet, now: Instant) {
        self.tcp.on_packet(pkt, now);
        let acked = self.tcp.snd_una();
        while let Some(o) = self.outstanding.front().copied() {
            if acked < o.end {
                break;
            }
            self.outstanding.pop_front();
            self.completed.push(DownloadRecord {
                requested_at: o.requested_at,
                completed_at: now,
                bytes: o.bytes,
            });
            if let Demand::Pages(m) = &self.demand {
                self.next_request = Some(now + m.draw_reading_time(&mut self.rng));
            }
        }
    }
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.start_due_requests(now);
        self.tcp.poll_transmit(now)
    }
    pub fn on_timer(&mut self, now: Instant) {
        self.start_due_requests(now);
        self.tcp.on_timer(now);
    }
    pub fn next_wakeup(&self) -> Option<Instant> {
        Instant::earliest(self.tcp.next_wakeup(), self.due_request())
    }
}

/// Exponential inter-arrival time of a Poisson process of `per_second`.
fn inter_arrival(rng: &mut RngStream, per_second: f64) -> Duration {
    Duration::from_secs_f64(exponential(rng, 1.0 / per_second))
}
