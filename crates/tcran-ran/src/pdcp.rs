//! PDCP receive operation at the UE (TS 38.323 §5.2.2.2): in-order
//! delivery by COUNT with t-Reordering, or out-of-order delivery.
//!
//! NR RLC hands SDUs up as soon as each is reassembled, out of order after
//! HARQ and ARQ retransmissions (TS 38.322 §5.2.3.2.3); the PDCP receiver
//! puts them back in COUNT order before they reach IP, so TCP does not see
//! reordering. State variables (§7.1), with COUNTs kept unbounded (`u64`,
//! no HFN wrap-around, as the RLC keeps its SNs):
//!
//! - `RX_NEXT`: the COUNT following the highest received;
//! - `RX_DELIV`: the first COUNT not delivered yet and still waited for;
//! - `RX_REORD`: the COUNT following the one that started t-Reordering.
//!
//! Reception (§5.2.2.2.2 and .3): an SDU with COUNT < `RX_DELIV` or already
//! stored is discarded (counted: [`DropReason::PdcpLate`],
//! [`DropReason::PdcpDuplicate`]); otherwise it is stored, `RX_NEXT` moves
//! past it, and when it is `RX_DELIV` it and every stored SDU with
//! consecutive COUNTs are delivered. t-Reordering is stopped once
//! `RX_DELIV >= RX_REORD`, and started (`RX_REORD = RX_NEXT`) whenever it
//! is not running while `RX_DELIV < RX_NEXT` (a gap).
//! Expiry (§5.2.2.2.4): every stored SDU with COUNT < `RX_REORD` is
//! delivered, then those with consecutive COUNTs from `RX_REORD`;
//! `RX_DELIV` becomes the first COUNT not delivered >= `RX_REORD`, and the
//! timer restarts if a gap remains.
//!
//! With `out_of_order_delivery` (TS 38.331 `PDCP-Config`
//! `outOfOrderDelivery`) every SDU is delivered when it arrives.
//!
//! The COUNT comes with the RLC PDU ([`crate::rlc::RlcPdu::count`]): the
//! transmitter numbers an SDU when its first byte is transmitted, so an SDU
//! dropped in the RLC buffer before that leaves no gap (as if PDCP had
//! discarded it before numbering it).
//!
//! Sans-IO: time is a parameter; [`PdcpRx::next_wakeup`] says when
//! t-Reordering expires.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tcran_core::{ConfigError, DropReason, Duration, Instant, Packet};

/// The t-Reordering values of TS 38.331 `PDCP-Config` (ms0 .. ms3000), in
/// milliseconds.
pub const T_REORDERING_MS: [u64; 36] = [
    0, 1, 2, 4, 5, 8, 10, 15, 20, 30, 40, 50, 60, 80, 100, 120, 140, 160, 180, 200, 220, 240, 260,
    280, 300, 500, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2500, 2750, 3000,
];

/// Receive-side PDCP configuration of a DRB (RRC `PDCP-Config`, TS 38.331).
///
/// Default: reordering on with t-Reordering 100 ms. TS 38.331 leaves
/// t-Reordering absent = infinity, which would stall a bearer for good
/// after an SDU the RLC gave up on; 100 ms is above the RLC AM recovery
/// time with the default RLC timers (t-Reassembly 35 ms, t-StatusProhibit
/// 10 ms, plus the uplink and the retransmission), so reordering waits for
/// ARQ, and well below TCP's minimum RTO (200 ms, RFC 6298 allows 1 s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PdcpConfig {
    /// t-Reordering: one of the TS 38.331 values 0, 1, 2, 4, 5, 8, 10, 15,
    /// 20, 30, 40, 50, 60, 80, 100, 120, ..., 300 (steps of 20), 500, 750,
    /// 1000, ..., 3000 ms (steps of 250).
    pub t_reordering: Duration,
    /// Deliver SDUs as they arrive, without reordering (`outOfOrderDelivery`).
    pub out_of_order_delivery: bool,
}

impl Default for PdcpConfig {
    fn default() -> Self {
        PdcpConfig {
            t_reordering: Duration::from_millis(100),
            out_of_order_delivery: false,
        }
    }
}

/// A validated [`PdcpConfig`].
#[derive(Clone, Debug, PartialEq)]
pub struct PdcpParams {
    pub t_reordering: Duration,
    pub out_of_order_delivery: bool,
}

impl PdcpConfig {
    /// Checks `t_reordering` against the TS 38.331 values.
    pub fn build(&self) -> Result<PdcpParams, ConfigError> {
        let t = self.t_reordering;
        let ok = T_REORDERING_MS
            .iter()
            .any(|&ms| Duration::from_millis(ms) == t);
        if !ok {
            return Err(ConfigError::new(
                "t_reordering",
                t,
                "must be a TS 38.331 t-Reordering value: 0, 1, 2, 4, 5, 8, 10, 15, 20, 30, 40, \
                 50, 60, 80 ms, 100 to 300 ms in steps of 20, 500 ms, or 750 to 3000 ms in steps \
                 of 250",
            ));
        }
        Ok(PdcpParams {
            t_reordering: t,
            out_of_order_delivery: self.out_of_order_delivery,
        })
    }
}

/// Receiver counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PdcpRxStats {
    pub delivered: u64,
    /// SDUs delivered by a t-Reordering expiry past a gap.
    pub delivered_on_expiry: u64,
    pub t_reordering_expiries: u64,
    pub discarded_late: u64,
    pub discarded_duplicate: u64,
}

/// The receiving PDCP entity of one DRB (UE side).
#[derive(Debug)]
pub struct PdcpRx {
    p: PdcpParams,
    rx_next: u64,
    rx_deliv: u64,
    rx_reord: u64,
    t_reordering: Option<Instant>,
    buf: BTreeMap<u64, Packet>,
    stats: PdcpRxStats,
}

impl PdcpRx {
    pub fn new(params: PdcpParams) -> PdcpRx {
        PdcpRx {
            p: params,
            rx_next: 0,
            rx_deliv: 0,
            rx_reord: 0,
            t_reordering: None,
            buf: BTreeMap::new(),
            stats: PdcpRxStats::default(),
        }
    }

    pub fn params(&self) -> &PdcpParams {
        &self.p
    }

    pub fn stats(&self) -> PdcpRxStats {
        self.stats
    }

    /// SDUs stored, waiting for earlier COUNTs.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.buf.values()
    }

    /// (RX_NEXT, RX_DELIV, RX_REORD).
    pub fn state(&self) -> (u64, u64, u64) {
        (self.rx_next, self.rx_deliv, self.rx_reord)
    }

    /// When t-Reordering expires, if running.
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.t_reordering
    }

    /// Receives the SDU of COUNT `count` from RLC: appends what it lets go
    /// up to `delivered` (in COUNT order) and a discarded SDU to `dropped`.
    /// [`PdcpRx::on_sdu`] for a batch of SDUs with these `counts` when
    /// every one of them would go straight up (out-of-order delivery, or
    /// in order with nothing stored): updates the state as those calls
    /// would and returns true, so the caller leaves the SDUs where they
    /// are. Otherwise changes nothing and returns false.
    pub fn pass_in_order(&mut self, counts: &[u64]) -> bool {
        let Some(&last) = counts.last() else {
            return true;
        };
        if self.p.out_of_order_delivery {
            let highest = counts.iter().copied().max().unwrap_or(last);
            self.rx_next = self.rx_next.max(highest + 1);
        } else {
            let consecutive = counts
                .iter()
                .enumerate()
                .all(|(i, &c)| c == self.rx_deliv + i as u64);
            if !consecutive || !self.buf.is_empty() {
                return false;
            }
            self.rx_deliv = last + 1;
            self.rx_next = last + 1;
        }
        self.stats.delivered += counts.len() as u64;
        true
    }

    pub fn on_sdu(
        &mut self,
        count: u64,
        sdu: Packet,
        now: Instant,
        delivered: &mut Vec<Packet>,
        dropped: &mut Vec<(Packet, DropReason)>,
    ) {
        if self.p.out_of_order_delivery {
            self.rx_next = self.rx_next.max(count + 1);
            self.stats.delivered += 1;
            delivered.push(sdu);
            return;
        }
        // The common case, in order with nothing stored (then RX_NEXT =
        // RX_DELIV and t-Reordering is not running): straight up.
        if count == self.rx_deliv && self.buf.is_empty() {
            self.rx_deliv = count + 1;
            self.rx_next = count + 1;
            self.stats.delivered += 1;
            delivered.push(sdu);
            return;
        }
        // §5.2.2.2.2.
        if count < self.rx_deliv {
            self.stats.discarded_late += 1;
            dropped.push((sdu, DropReason::PdcpLate));
            return;
        }
        if self.buf.contains_key(&count) {
            self.stats.discarded_duplicate += 1;
            dropped.push((sdu, DropReason::PdcpDuplicate));
            return;
        }
        self.buf.insert(count, sdu);
        if count >= self.rx_next {
            self.rx_next = count + 1;
        }
        if count == self.rx_deliv {
            self.deliver_consecutive(self.rx_deliv, delivered);
        }
        // §5.2.2.2.3.
        if self.t_reordering.is_some() && self.rx_deliv >= self.rx_reord {
            self.t_reordering = None;
        }
        self.maybe_start(now);
    }

    /// Runs t-Reordering if it expired (§5.2.2.2.4).
    pub fn on_timer(&mut self, now: Instant, delivered: &mut Vec<Packet>) {
        let Some(t) = self.t_reordering else { return };
        if now < t {
            return;
        }
        self.t_reordering = None;
        self.stats.t_reordering_expiries += 1;
        while let Some(e) = self.buf.first_entry() {
            if *e.key() >= self.rx_reord {
                break;
            }
            delivered.push(e.remove());
            self.stats.delivered += 1;
            self.stats.delivered_on_expiry += 1;
        }
        self.deliver_consecutive(self.rx_reord, delivered);
        self.maybe_start(now);
    }

    /// Delivers the stored SDUs with consecutive COUNTs from `from`; sets
    /// `RX_DELIV` to the first COUNT not delivered (>= `from`).
    fn deliver_consecutive(&mut self, from: u64, delivered: &mut Vec<Packet>) {
        let mut c = from;
        while let Some(p) = self.buf.remove(&c) {
            delivered.push(p);
            self.stats.delivered += 1;
            c += 1;
        }
        self.rx_deliv = self.rx_deliv.max(c);
    }

    fn maybe_start(&mut self, now: Instant) {
        if self.t_reordering.is_none() && self.rx_deliv < self.rx_next {
            self.rx_reord = self.rx_next;
            self.t_reordering = Some(now + self.p.t_reordering);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_core::{FiveTuple, PacketId};

    fn pkt(count: u64) -> Packet {
        Packet::new(PacketId(count), 100, FiveTuple::default(), Instant::ZERO)
    }

    fn rx(t_ms: u64) -> PdcpRx {
        PdcpRx::new(
            PdcpConfig {
                t_reordering: Duration::from_millis(t_ms),
                out_of_order_delivery: false,
            }
            .build()
            .unwrap(),
        )
    }

    fn ms(t: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(t)
    }

    /// Feeds `counts` at `at`; returns the ids delivered and dropped.
    fn feed(r: &mut PdcpRx, counts: &[u64], at: Instant) -> (Vec<u64>, Vec<(u64, DropReason)>) {
        let (mut d, mut x) = (Vec::new(), Vec::new());
        for &c in counts {
            r.on_sdu(c, pkt(c), at, &mut d, &mut x);
        }
        (
            d.iter().map(|p| p.id.0).collect(),
            x.iter().map(|(p, why)| (p.id.0, *why)).collect(),
        )
    }

    fn expire(r: &mut PdcpRx, at: Instant) -> Vec<u64> {
        let mut d = Vec::new();
        r.on_timer(at, &mut d);
        d.iter().map(|p| p.id.0).collect()
    }

    #[test]
    fn in_order_sdus_go_up_at_once_and_no_timer_runs() {
        let mut r = rx(100);
        assert_eq!(feed(&mut r, &[0, 1, 2], ms(0)).0, vec![0, 1, 2]);
        assert_eq!(r.state(), (3, 3, 0));
        assert_eq!(r.next_wakeup(), None);
    }

    #[test]
    fn a_gap_holds_later_sdus_until_it_is_filled() {
        let mut r = rx(100);
        // 0 goes up; 2 and 3 wait for 1: RX_NEXT 4, RX_DELIV 1, and
        // t-Reordering starts at 2's arrival with RX_REORD = RX_NEXT = 3.
        assert_eq!(feed(&mut r, &[0], ms(0)).0, vec![0]);
        assert_eq!(feed(&mut r, &[2], ms(5)).0, Vec::<u64>::new());
        assert_eq!(r.state(), (3, 1, 3));
        assert_eq!(r.next_wakeup(), Some(ms(105)));
        assert_eq!(feed(&mut r, &[3], ms(6)).0, Vec::<u64>::new());
        assert_eq!(r.state(), (4, 1, 3));
        // 1 fills the gap: 1, 2, 3 go up in order; RX_DELIV 4 >= RX_REORD
        // stops the timer.
        assert_eq!(feed(&mut r, &[1], ms(20)).0, vec![1, 2, 3]);
        assert_eq!(r.state(), (4, 4, 3));
        assert_eq!(r.next_wakeup(), None);
    }

    #[test]
    fn t_reordering_expiry_gives_up_on_the_gap_and_restarts_for_the_next() {
        let mut r = rx(40);
        feed(&mut r, &[0, 2], ms(0)); // gap at 1, RX_REORD 3, expiry at 40
        feed(&mut r, &[5], ms(10)); // a second gap (3, 4); RX_NEXT 6
        assert_eq!(r.state(), (6, 1, 3));
        assert!(expire(&mut r, ms(39)).is_empty(), "not yet");
        // Expiry: everything below RX_REORD = 3 goes up (2), then the
        // consecutive ones from 3 (none): RX_DELIV = 3; 5 is still behind
        // a gap, so the timer restarts with RX_REORD = RX_NEXT = 6.
        assert_eq!(expire(&mut r, ms(40)), vec![2]);
        assert_eq!(r.state(), (6, 3, 6));
        assert_eq!(r.next_wakeup(), Some(ms(80)));
        // Second expiry: 5 goes up, RX_DELIV = 6 = RX_NEXT, no restart.
        assert_eq!(expire(&mut r, ms(80)), vec![5]);
        assert_eq!(r.state(), (6, 6, 6));
        assert_eq!(r.next_wakeup(), None);
        // 1 arrives after all: below RX_DELIV, discarded.
        let (d, x) = feed(&mut r, &[1], ms(90));
        assert!(d.is_empty());
        assert_eq!(x, vec![(1, DropReason::PdcpLate)]);
        assert_eq!(r.stats().discarded_late, 1);
    }

    #[test]
    fn a_duplicate_is_discarded_and_counted() {
        let mut r = rx(100);
        feed(&mut r, &[0, 2], ms(0));
        let (d, x) = feed(&mut r, &[2], ms(1));
        assert!(d.is_empty());
        assert_eq!(x, vec![(2, DropReason::PdcpDuplicate)]);
        // Already delivered: below RX_DELIV.
        let (_, x) = feed(&mut r, &[0], ms(2));
        assert_eq!(x, vec![(0, DropReason::PdcpLate)]);
    }

    #[test]
    fn out_of_order_delivery_passes_everything_up_at_once() {
        let mut r = PdcpRx::new(
            PdcpConfig {
                out_of_order_delivery: true,
                ..PdcpConfig::default()
            }
            .build()
            .unwrap(),
        );
        assert_eq!(feed(&mut r, &[3, 0, 2, 1], ms(0)).0, vec![3, 0, 2, 1]);
        assert_eq!(r.next_wakeup(), None);
    }

    #[test]
    fn t_reordering_must_be_a_3gpp_value() {
        for ms in [0, 40, 100, 300, 750, 3000] {
            let c = PdcpConfig {
                t_reordering: Duration::from_millis(ms),
                ..PdcpConfig::default()
            };
            assert!(c.build().is_ok(), "{ms} ms");
        }
        for ms in [3, 110, 310] {
            let c = PdcpConfig {
                t_reordering: Duration::from_millis(ms),
                ..PdcpConfig::default()
            };
            let e = c.build().unwrap_err().to_string();
            assert!(
                e.contains("t_reordering") && e.contains(&format!("{ms}ms")),
                "{e}"
            );
        }
    }

    proptest::proptest! {
        /// Without timer expiries, what goes up is what came in minus the
        /// duplicates, in increasing COUNT order, once every gap is filled.
        #[test]
        fn without_expiry_delivery_is_the_received_set_in_count_order(
            order in proptest::collection::vec(0u64..40, 0..120),
        ) {
            let mut r = rx(100);
            let (mut d, mut x) = (Vec::new(), Vec::new());
            for &c in &order {
                r.on_sdu(c, pkt(c), ms(0), &mut d, &mut x);
            }
            let got: Vec<u64> = d.iter().map(|p| p.id.0).collect();
            proptest::prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "{:?}", got);
            // Delivered: the longest run 0, 1, 2, ... of received COUNTs.
            let set: std::collections::BTreeSet<u64> = order.iter().copied().collect();
            let run: Vec<u64> = (0..).take_while(|c| set.contains(c)).collect();
            proptest::prop_assert_eq!(&got, &run);
            // Held: the others; discarded: the repeats.
            proptest::prop_assert_eq!(r.held().count() + got.len(), set.len());
            proptest::prop_assert_eq!(x.len(), order.len() - set.len());
            // After expiries everything received is delivered, in order.
            let mut t = 100;
            while r.next_wakeup().is_some() {
                r.on_timer(ms(t), &mut d);
                t += 100;
            }
            let all: Vec<u64> = d.iter().map(|p| p.id.0).collect();
            proptest::prop_assert_eq!(all, set.into_iter().collect::<Vec<_>>());
        }
    }
}
