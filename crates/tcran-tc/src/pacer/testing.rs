//! A tiny fake RLC + MAC for pacer tests: an infinite backlog above offers a
//! candidate of `candidate` bytes at `opportunities` evenly spaced instants
//! per TTI (forwarding as many as the pacer admits each time, as the
//! pipeline's pull loop does); at each TTI boundary the MAC pulls up to
//! `capacity` bytes (segmenting SDUs, FIFO), departed SDUs are reported with
//! their sojourn, then the per-TTI report is delivered.

use crate::stage::{LowerLayerReport, LowerState, Pacer};
use std::collections::VecDeque;
use tcran_core::{Duration, Instant};

#[derive(Debug)]
pub(crate) struct FakeLink {
    pub tti: Duration,
    pub capacity: u64,
    /// `max_bytes` reported (e5G-BDP); defaults to `capacity`.
    pub max_bytes: u64,
    pub candidate: u32,
    pub opportunities: u32,
    /// Deliver a status PDU every this many TTIs (DynRLC's DLT estimator).
    pub status_every: Option<u32>,
    pub now: Instant,
    /// SDUs in RLC: (bytes left, arrival).
    rlc: VecDeque<(u32, Instant)>,
    rlc_bytes: u64,
    lower: LowerState,
    /// Per TTI: RLC backlog after the pull, and bytes pulled.
    pub backlog: Vec<u64>,
    pub pulled: Vec<u64>,
    pub forwarded: u64,
}

impl FakeLink {
    pub(crate) fn new(capacity: u64) -> FakeLink {
        FakeLink {
            tti: Duration::from_millis(1),
            capacity,
            max_bytes: capacity,
            candidate: 1500,
            opportunities: 10,
            status_every: None,
            now: Instant::ZERO,
            rlc: VecDeque::new(),
            rlc_bytes: 0,
            lower: LowerState::default(),
            backlog: Vec::new(),
            pulled: Vec::new(),
            forwarded: 0,
        }
    }

    /// Runs one TTI: forwarding opportunities, then the MAC pull and report.
    pub(crate) fn run_tti(&mut self, pacer: &mut dyn Pacer) {
        let start = self.now;
        let step = Duration::from_nanos(self.tti.as_nanos() / self.opportunities as u64);
        for k in 0..self.opportunities {
            let t = start + Duration::from_nanos(step.as_nanos() * k as u64);
            // Bound per opportunity so a pacer that admits everything
            // cannot hang the test.
            for _ in 0..2048 {
                if !pacer.admits(self.candidate, t, &self.lower) {
                    break;
                }
                pacer.on_forwarded(self.candidate, t);
                self.rlc.push_back((self.candidate, t));
                self.rlc_bytes += self.candidate as u64;
                self.lower.bytes += self.candidate as u64;
                self.lower.sdus += 1;
                self.forwarded += self.candidate as u64;
            }
        }
        let end = start + self.tti;
        let mut budget = self.capacity;
        let mut pulled = 0;
        while budget > 0 {
            let Some(head) = self.rlc.front_mut() else {
                break;
            };
            let take = budget.min(head.0 as u64);
            head.0 -= take as u32;
            budget -= take;
            pulled += take;
            if head.0 == 0 {
                let (_, arrived) = self.rlc.pop_front().expect("head");
                self.lower.sdus -= 1;
                pacer.on_sdu_departed(end.saturating_since(arrived), end);
            }
        }
        self.rlc_bytes -= pulled;
        self.now = end;
        let n = self.pulled.len() as u32 + 1;
        if self.status_every.is_some_and(|k| n.is_multiple_of(k)) {
            pacer.on_status_pdu(end);
        }
        let report = LowerLayerReport {
            tti: self.tti,
            backlog_bytes: self.rlc_bytes,
            backlog_sdus: self.rlc.len() as u32,
            pulled_bytes: pulled,
            granted_bytes: self.capacity,
            max_bytes: self.max_bytes,
            ..LowerLayerReport::default()
        };
        self.lower = LowerState {
            bytes: self.rlc_bytes,
            sdus: self.rlc.len() as u32,
        };
        pacer.on_report(&report, end);
        self.backlog.push(self.rlc_bytes);
        self.pulled.push(pulled);
    }

    pub(crate) fn run(&mut self, pacer: &mut dyn Pacer, ttis: usize) {
        for _ in 0..ttis {
            self.run_tti(pacer);
        }
    }

    /// Asserts the steady state over the second half of the run: the RLC
    /// backlog after the pull never exceeds `max_backlog`, is not trending
    /// up (last quarter's mean within one candidate of the third quarter's),
    /// and the MAC found less than its grant in the buffer for at most
    /// `max_waste` of the capacity (bytes it could have sent but did not).
    pub(crate) fn assert_steady(&self, max_backlog: u64, max_waste: f64) {
        let n = self.backlog.len();
        assert!(n >= 8, "run longer");
        let half = &self.backlog[n / 2..];
        let worst = *half.iter().max().expect("non-empty");
        assert!(
            worst <= max_backlog,
            "RLC backlog reached {worst} B > {max_backlog} B"
        );
        let mean = |s: &[u64]| s.iter().sum::<u64>() as f64 / s.len() as f64;
        let q3 = mean(&self.backlog[n / 2..3 * n / 4]);
        let q4 = mean(&self.backlog[3 * n / 4..]);
        assert!(
            q4 <= q3 + self.candidate as f64,
            "RLC backlog growing: {q3:.0} -> {q4:.0} B"
        );
        let wasted: u64 = self.pulled[n / 2..].iter().map(|p| self.capacity - p).sum();
        let waste = wasted as f64 / (self.capacity * (n - n / 2) as u64) as f64;
        assert!(
            waste <= max_waste,
            "MAC starved: {:.2}% of the capacity unused",
            waste * 100.0
        );
    }
}
