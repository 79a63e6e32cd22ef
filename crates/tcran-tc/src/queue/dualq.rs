//! DualPI2, the DualQ Coupled AQM of RFC 9332, as one queue holding two
//! FIFOs, with the defaults and decisions of Linux `sch_dualpi2`
//! (reference/algorithms.md sec. 1.5).
//!
//! Contract:
//! - Classification (RFC 9331 sec. 5.1): ECT(1) and CE packets go to the L
//!   (low-latency) FIFO, ECT(0) and Not-ECT to the C (classic) FIFO; also
//!   for [`Queue::push_raw`]. Each FIFO keeps arrival order.
//! - Base probability `p'`, updated every `t_update` (caught up lazily at
//!   packet events, each update at its own instant):
//!   `p' += alpha (qdelay - target) + beta (qdelay - qdelay_old)`, with
//!   `qdelay` the larger head sojourn of the two FIFOs at that instant,
//!   clamped to [0, 1] (to [0, 1/k] without `drop_overload`).
//! - Decisions at dequeue (Linux `drop_early` off), none while fewer than
//!   `2 mtu` bytes remain queued in total: a C packet is hit with
//!   `p_C = p'^2` (CE-marked if ECT(0), dropped if Not-ECT or in overload);
//!   an L packet is marked with the coupled `p_CL = min(k p', 1)`. In
//!   overload (`k p' > 1`) with `drop_overload`, L packets are also dropped
//!   with `p'^2`, as classic traffic would be (RFC 9332 overload
//!   handling; Linux `drop_overload`).
//! - Native L AQM, a step: an L packet whose sojourn exceeds
//!   `step_threshold` (1 ms) is CE-marked (`MarkReason::CeThreshold`). As in
//!   Linux `do_step_aqm`, this step is not subject to the `2 mtu` floor,
//!   and a packet the coupled AQM already marked is not counted twice.
//!   Linux's `min_qlen_step` (default 0) and step-in-packets are not offered.
//! - Scheduler (Linux weighted round robin with C protection): L is served
//!   unless C is waiting and the credit is positive; each L packet sent
//!   while C waits adds `c_protection * len` to the credit, each C packet
//!   sent while L waits takes `(1 - c_protection) * len`. Under L overload
//!   C keeps a `c_protection` (10 %) byte share. The credit restarts at
//!   `mtu * (c_protection - (1 - c_protection))` whenever both are empty.
//! - Marks are [`MarkReason::L4s`] (coupled and classic) and
//!   [`MarkReason::CeThreshold`] (step); drops are [`DropReason::L4s`].
//!   Randomness comes from `RngStream::new(seed, "dualq")`.

use super::fifo::PacketFifo;
use super::ticker::Ticker;
use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::rng::RngStream;
use tcran_core::{ByteSize, ConfigError, DropReason, Duration, Instant, MarkReason, Packet};

/// DualPI2 parameters; defaults are Linux `sch_dualpi2` ("10 dB stability
/// margin with max_rtt = 100 ms"), the same as RFC 9332 Appendix A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DualQConfig {
    /// PI target for the classic queueing delay. Default 15 ms.
    pub target: Duration,
    /// Period of the PI update. Default 16 ms.
    pub t_update: Duration,
    /// Integral gain, 1/s. Default 0.16 (Linux 41/256).
    pub alpha: f64,
    /// Proportional gain, 1/s. Default 3.2 (Linux 819/256).
    pub beta: f64,
    /// Coupling factor k between `p'` and the L marking probability.
    /// Default 2.
    pub coupling_factor: f64,
    /// Sojourn above which the L queue's native step marks. Default 1 ms.
    pub step_threshold: Duration,
    /// Byte share the scheduler keeps for the C queue when both are
    /// backlogged (Linux `c_protection`, weight wc). Default 0.1.
    pub c_protection: f64,
    /// In overload (`k p' > 1`) drop L packets with `p'^2` instead of
    /// capping `p'` at `1/k`. Default on.
    pub drop_overload: bool,
    /// No AQM decision while at most `2 mtu` bytes are queued; also sizes
    /// the initial scheduler credit. Default 1500 B.
    pub mtu: ByteSize,
    /// Seed of this queue's random stream. Default 1.
    pub seed: u64,
}

impl Default for DualQConfig {
    fn default() -> Self {
        DualQConfig {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            coupling_factor: 2.0,
            step_threshold: Duration::from_millis(1),
            c_protection: 0.1,
            drop_overload: true,
            mtu: ByteSize(1500),
            seed: 1,
        }
    }
}

impl DualQConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        check_range(
            "target",
            self.target,
            Duration::from_micros(1),
            Duration::from_secs(10),
        )?;
        check_range(
            "t_update",
            self.t_update,
            Duration::from_micros(100),
            Duration::from_secs(10),
        )?;
        check_f64("alpha", self.alpha, 0.0, 100.0)?;
        check_f64("beta", self.beta, 0.0, 100.0)?;
        check_f64("coupling_factor", self.coupling_factor, 0.1, 100.0)?;
        check_range(
            "step_threshold",
            self.step_threshold,
            Duration::ZERO,
            Duration::from_secs(10),
        )?;
        check_f64("c_protection", self.c_protection, 0.0, 1.0)?;
        check_range("mtu", self.mtu, ByteSize(64), ByteSize(1_000_000))?;
        Ok(())
    }

    fn credit_init(&self) -> f64 {
        self.mtu.0 as f64 * (2.0 * self.c_protection - 1.0)
    }

    pub fn build(&self) -> Result<DualQ, ConfigError> {
        self.validate()?;
        Ok(DualQ {
            vars: DualQVars {
                prob: 0.0,
                qdelay_old: Duration::ZERO,
                credit: self.credit_init(),
            },
            ticker: Ticker::new(self.t_update),
            rng: Box::new(RngStream::new(self.seed, "dualq")),
            params: self.clone(),
            stats: DualQStats::default(),
            l: PacketFifo::default(),
            c: PacketFifo::default(),
        })
    }

    /// Applies these parameters, keeping both FIFOs, `p'` and the credit.
    pub fn reconfigure(&self, q: &mut DualQ) -> Result<(), ConfigError> {
        self.validate()?;
        if self.seed != q.params.seed {
            *q.rng = RngStream::new(self.seed, "dualq");
        }
        q.ticker.set_period(self.t_update);
        q.params = self.clone();
        if !q.params.drop_overload {
            q.vars.prob = q.vars.prob.min(1.0 / q.params.coupling_factor);
        }
        Ok(())
    }
}

/// DualPI2 state.
#[derive(Debug, Clone, PartialEq)]
pub struct DualQVars {
    /// The base probability p'.
    pub prob: f64,
    pub qdelay_old: Duration,
    /// WRR credit, bytes: L is served while it is not positive.
    pub credit: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DualQStats {
    pub l_sent: u64,
    pub c_sent: u64,
    pub step_marks: u64,
    pub coupled_marks: u64,
    pub classic_marks: u64,
    pub l_drops: u64,
    pub c_drops: u64,
}

/// A DualPI2 queue.
#[derive(Debug)]
pub struct DualQ {
    params: DualQConfig,
    vars: DualQVars,
    stats: DualQStats,
    ticker: Ticker,
    rng: Box<RngStream>,
    l: PacketFifo,
    c: PacketFifo,
}

enum Verdict {
    Pass,
    Mark,
    Drop,
}

impl DualQ {
    pub fn vars(&self) -> &DualQVars {
        &self.vars
    }
    pub fn stats(&self) -> &DualQStats {
        &self.stats
    }
    pub fn l_packets(&self) -> usize {
        self.l.len()
    }
    pub fn c_packets(&self) -> usize {
        self.c.len()
    }

    fn fifo_for(&mut self, packet: &Packet) -> &mut PacketFifo {
        if packet.ecn.is_l4s() {
            &mut self.l
        } else {
            &mut self.c
        }
    }

    /// Runs the PI updates due by `now` (they also run on every packet event).
    pub fn advance(&mut self, now: Instant) {
        while let Some(at) = self.ticker.pop_due(now) {
            let before = self.vars.clone();
            let qdelay = self.c.head_sojourn(at).max(self.l.head_sojourn(at));
            let p = &self.params;
            let v = &mut self.vars;
            let error = qdelay.as_secs_f64() - p.target.as_secs_f64();
            let trend = qdelay.as_secs_f64() - v.qdelay_old.as_secs_f64();
            v.prob = (v.prob + p.alpha * error + p.beta * trend).clamp(0.0, 1.0);
            if !p.drop_overload {
                v.prob = v.prob.min(1.0 / p.coupling_factor);
            }
            v.qdelay_old = qdelay;
            // With both FIFOs empty the delay stays zero until the next
            // packet event, so an update that changed nothing repeats.
            if self.vars == before && self.l.is_empty() && self.c.is_empty() {
                self.ticker.skip_through(now);
                break;
            }
        }
    }

    /// The PI-coupled decision for a packet just taken from L or C (Linux
    /// `must_drop`); `backlog` excludes it.
    fn coupled_verdict(&mut self, from_l: bool, ect: bool) -> Verdict {
        if self.l.bytes() + self.c.bytes() < 2 * self.params.mtu.0 {
            return Verdict::Pass;
        }
        let p = self.vars.prob;
        let p_classic = p * p;
        let p_coupled = self.params.coupling_factor * p;
        let overload = p_coupled > 1.0;
        if !from_l {
            return if !self.rng.bernoulli(p_classic) {
                Verdict::Pass
            } else if overload || !ect {
                Verdict::Drop
            } else {
                Verdict::Mark
            };
        }
        if overload && self.params.drop_overload && self.rng.bernoulli(p_classic) {
            return Verdict::Drop;
        }
        if self.rng.bernoulli(p_coupled.min(1.0)) {
            if ect {
                Verdict::Mark
            } else {
                Verdict::Drop
            }
        } else {
            Verdict::Pass
        }
    }
}

impl Queue for DualQ {
    fn enqueue(&mut self, packet: Packet, now: Instant, _ev: &mut Events) {
        self.advance(now);
        self.fifo_for(&packet).push_back(packet);
    }

    fn dequeue(&mut self, now: Instant, ev: &mut Events) -> Option<Packet> {
        self.advance(now);
        loop {
            let (l_waiting, c_waiting) = (!self.l.is_empty(), !self.c.is_empty());
            let from_l = l_waiting && (!c_waiting || self.vars.credit <= 0.0);
            let mut packet = if from_l {
                self.l.pop_front()
            } else if c_waiting {
                self.c.pop_front()
            } else {
                self.vars.credit = self.params.credit_init();
                return None;
            }
            .expect("checked non-empty");
            let len = f64::from(packet.len);
            let credit_change = match (from_l, from_l && c_waiting, !from_l && l_waiting) {
                (true, true, _) => self.params.c_protection * len,
                (false, _, true) => -(1.0 - self.params.c_protection) * len,
                _ => 0.0,
            };
            let mut marked = false;
            match self.coupled_verdict(from_l, packet.ecn.is_ect()) {
                Verdict::Pass => {}
                Verdict::Drop => {
                    if from_l {
                        self.stats.l_drops += 1;
                    } else {
                        self.stats.c_drops += 1;
                    }
                    ev.drop(packet, DropReason::L4s);
                    continue;
                }
                Verdict::Mark => {
                    marked = ev.mark(&mut packet, MarkReason::L4s);
                    if from_l {
                        self.stats.coupled_marks += 1;
                    } else {
                        self.stats.classic_marks += 1;
                    }
                }
            }
            if from_l && !marked {
                let sojourn = now.saturating_since(packet.enqueued_at);
                if sojourn > self.params.step_threshold {
                    if !packet.ecn.is_ect() {
                        self.stats.l_drops += 1;
                        ev.drop(packet, DropReason::L4s);
                        continue;
                    }
                    ev.mark(&mut packet, MarkReason::CeThreshold);
                    self.stats.step_marks += 1;
                }
            }
            self.vars.credit += credit_change;
            if from_l {
                self.stats.l_sent += 1;
            } else {
                self.stats.c_sent += 1;
            }
            return Some(packet);
        }
    }

    fn packets(&self) -> usize {
        self.l.len() + self.c.len()
    }
    fn bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }
    fn oldest_enqueued_at(&self) -> Option<Instant> {
        match (self.l.oldest_enqueued_at(), self.c.oldest_enqueued_at()) {
            (Some(l), Some(c)) => Some(l.min(c)),
            (l, c) => l.or(c),
        }
    }
    /// The older of the two heads (C on a tie), so moving packets out with
    /// this keeps global arrival order.
    fn pop_oldest(&mut self) -> Option<Packet> {
        match (self.l.oldest_enqueued_at(), self.c.oldest_enqueued_at()) {
            (Some(l), Some(c)) if l < c => self.l.pop_front(),
            (_, Some(_)) => self.c.pop_front(),
            _ => self.l.pop_front(),
        }
    }
    /// The newer of the two tails (L on a tie).
    fn pop_newest(&mut self) -> Option<Packet> {
        match (self.l.newest_enqueued_at(), self.c.newest_enqueued_at()) {
            (Some(l), Some(c)) if c > l => self.c.pop_back(),
            (Some(_), _) => self.l.pop_back(),
            _ => self.c.pop_back(),
        }
    }
    fn push_raw(&mut self, packet: Packet) {
        self.fifo_for(&packet).push_back(packet);
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.l.iter().chain(self.c.iter()).for_each(f);
    }
    fn next_wakeup(&self) -> Option<Instant> {
        let idle = self.l.is_empty() && self.c.is_empty();
        if idle && self.vars.prob == 0.0 && self.vars.qdelay_old.is_zero() {
            None
        } else {
            self.ticker.next()
        }
    }
    fn aqm_stats(&self) -> AqmStats {
        AqmStats {
            probability: Some(self.vars.prob),
            ..AqmStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::testing::*;
    use crate::queue::{AnyQueue, QueueKindConfig};
    use proptest::prelude::*;
    use tcran_core::Ecn;

    fn dualq(cfg: DualQConfig) -> DualQ {
        cfg.build().unwrap()
    }

    /// A queue whose p' stays where the test puts it (no PI gains).
    fn frozen(prob: f64) -> DualQ {
        let mut q = dualq(DualQConfig {
            alpha: 0.0,
            beta: 0.0,
            ..DualQConfig::default()
        });
        q.vars.prob = prob;
        q
    }

    #[test]
    fn classifies_ect1_and_ce_as_l4s_and_the_rest_as_classic() {
        let mut q = dualq(DualQConfig::default());
        let mut ev = Events::default();
        for (id, ecn) in [Ecn::Ect1, Ecn::Ce, Ecn::Ect0, Ecn::NotEct]
            .into_iter()
            .enumerate()
        {
            q.enqueue(pkt(id as u64, 100, ecn, ms(0)), ms(0), &mut ev);
        }
        assert_eq!((q.l_packets(), q.c_packets()), (2, 2));
        q.push_raw(pkt(9, 100, Ecn::Ect1, ms(0)));
        q.push_raw(pkt(10, 100, Ecn::Ect0, ms(0)));
        assert_eq!((q.l_packets(), q.c_packets()), (3, 3));
        assert_eq!(q.bytes(), 600);
    }

    /// The native L AQM: a step at 1 ms sojourn (p' = 0 here).
    #[test]
    fn l_packets_are_step_marked_above_one_millisecond() {
        let mut q = dualq(DualQConfig::default());
        let mut ev = Events::default();
        q.enqueue(pkt(1, 1000, Ecn::Ect1, ms(0)), ms(0), &mut ev);
        assert_eq!(q.dequeue(us(900), &mut ev).unwrap().ecn, Ecn::Ect1);
        q.enqueue(pkt(2, 1000, Ecn::Ect1, ms(2)), ms(2), &mut ev);
        assert_eq!(q.dequeue(us(3100), &mut ev).unwrap().ecn, Ecn::Ce);
        assert_eq!(ev.marks.get(MarkReason::CeThreshold), 1);
        // A classic packet waiting as long is left alone.
        q.enqueue(pkt(3, 1000, Ecn::Ect0, ms(4)), ms(4), &mut ev);
        assert_eq!(q.dequeue(ms(9), &mut ev).unwrap().ecn, Ecn::Ect0);
        assert_eq!(q.stats().step_marks, 1);
    }

    /// RFC 9332 PI update by hand: a C packet queued at 0, updates at 16 and
    /// 32 ms. t=16: 0.16 (0.016 - 0.015) + 3.2 (0.016 - 0) = 0.05136;
    /// t=32: + 0.16 (0.032 - 0.015) + 3.2 (0.032 - 0.016) = 0.10528.
    #[test]
    fn pi_update_integrates_delay_error_and_trend() {
        let mut q = dualq(DualQConfig::default());
        let mut ev = Events::default();
        q.enqueue(pkt(1, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.advance(ms(16));
        assert!((q.vars().prob - 0.05136).abs() < 1e-12, "{}", q.vars().prob);
        q.advance(ms(32));
        assert!((q.vars().prob - 0.10528).abs() < 1e-12, "{}", q.vars().prob);
        assert_eq!(q.vars().qdelay_old, Duration::from_millis(32));
    }

    /// Counts (signalled, total) over `n` packets of `ecn` queued at 0 and
    /// dequeued at 0 (no step), keeping the backlog above 2 MTU.
    fn signal_rate(q: &mut DualQ, ecn: Ecn, n: u64) -> f64 {
        let mut ev = Events::default();
        for id in 0..n + 10 {
            q.enqueue(pkt(id, 1000, ecn, ms(0)), ms(0), &mut ev);
        }
        let mut taken = 0;
        while q.packets() > 10 {
            q.dequeue(ms(0), &mut ev);
            taken += 1;
        }
        let signalled = ev.marks.total() + ev.dropped.len() as u64;
        assert!(taken <= n);
        signalled as f64 / n as f64
    }

    /// RFC 9332 coupling: classic traffic sees p'^2, L traffic k p'.
    #[test]
    fn classic_sees_p_squared_and_l4s_sees_k_times_p() {
        let rate = signal_rate(&mut frozen(0.3), Ecn::Ect0, 20_000);
        assert!((rate - 0.09).abs() < 0.01, "classic marks {rate}");
        let rate = signal_rate(&mut frozen(0.3), Ecn::NotEct, 20_000);
        assert!((rate - 0.09).abs() < 0.01, "classic drops {rate}");
        let rate = signal_rate(&mut frozen(0.3), Ecn::Ect1, 20_000);
        assert!((rate - 0.6).abs() < 0.02, "L marks {rate}");
    }

    #[test]
    fn overload_drops_l_packets_like_classic_and_marks_the_rest() {
        let mut q = frozen(0.8);
        let mut ev = Events::default();
        for id in 0..20_010 {
            q.enqueue(pkt(id, 1000, Ecn::Ect1, ms(0)), ms(0), &mut ev);
        }
        let mut out = 0;
        while q.packets() > 10 {
            if let Some(p) = q.dequeue(ms(0), &mut ev) {
                assert_eq!(p.ecn, Ecn::Ce, "k p' > 1 marks every survivor");
                out += 1;
            }
        }
        let drop_rate = ev.dropped.len() as f64 / 20_000.0;
        assert!((drop_rate - 0.64).abs() < 0.02, "{drop_rate}");
        assert!(out > 0);
    }

    #[test]
    fn without_drop_overload_p_is_capped_at_one_over_k() {
        let mut q = dualq(DualQConfig {
            drop_overload: false,
            ..DualQConfig::default()
        });
        let mut ev = Events::default();
        q.enqueue(pkt(1, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        q.advance(ms(2000));
        assert_eq!(q.vars().prob, 0.5);
    }

    #[test]
    fn nothing_is_signalled_within_two_mtu_of_backlog() {
        let mut q = frozen(1.0);
        let mut ev = Events::default();
        for id in 0..3 {
            q.enqueue(pkt(id, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        let out = std::iter::from_fn(|| q.dequeue(ms(0), &mut ev)).count();
        assert_eq!(out, 3, "the first dequeue left 2000 B < 2 MTU");
    }

    /// Linux WRR: with both FIFOs backlogged by an L flood, C keeps its
    /// 10 % byte share.
    #[test]
    fn scheduler_protects_the_classic_queue_under_l_overload() {
        let mut q = dualq(DualQConfig::default());
        let mut ev = Events::default();
        for id in 0..2000 {
            q.enqueue(pkt(2 * id, 1000, Ecn::Ect1, ms(0)), ms(0), &mut ev);
            q.enqueue(pkt(2 * id + 1, 1000, Ecn::NotEct, ms(0)), ms(0), &mut ev);
        }
        let mut c_served = 0;
        for _ in 0..1000 {
            let p = q.dequeue(ms(0), &mut ev).unwrap();
            c_served += (p.ecn == Ecn::NotEct) as u32;
        }
        assert!((98..=102).contains(&c_served), "{c_served}");
        assert!(ev.dropped.is_empty());
    }

    #[test]
    fn oldest_and_newest_span_both_fifos() {
        let mut q = dualq(DualQConfig::default());
        let mut ev = Events::default();
        q.enqueue(pkt(1, 100, Ecn::Ect0, ms(1)), ms(1), &mut ev);
        q.enqueue(pkt(2, 100, Ecn::Ect1, ms(2)), ms(2), &mut ev);
        q.enqueue(pkt(3, 100, Ecn::NotEct, ms(3)), ms(3), &mut ev);
        q.enqueue(pkt(4, 100, Ecn::Ect1, ms(4)), ms(4), &mut ev);
        assert_eq!(q.oldest_enqueued_at(), Some(ms(1)));
        assert_eq!(q.pop_newest().unwrap().id.0, 4);
        let order: Vec<u64> = std::iter::from_fn(|| q.pop_oldest().map(|p| p.id.0)).collect();
        assert_eq!(order, vec![1, 2, 3]);
    }

    #[test]
    fn config_reads_the_dualq_kind_and_checks_values() {
        let c: crate::QueueConfig = toml::from_str(
            "id = 0\nkind = \"dualq\"\nstep_threshold = \"2ms\"\ncoupling_factor = 2.5",
        )
        .unwrap();
        assert_eq!(c.kind.kind_name(), "dualq");
        let e = DualQConfig {
            c_protection: 1.5,
            ..DualQConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "c_protection = 1.5: must be a number in 0..=1"
        );
    }

    #[test]
    fn reconfigure_keeps_both_fifos_and_probability() {
        let mut q = QueueKindConfig::DualQ(DualQConfig::default())
            .build()
            .unwrap();
        let mut ev = Events::default();
        for id in 0..40 {
            let ecn = if id % 2 == 0 { Ecn::Ect1 } else { Ecn::Ect0 };
            q.enqueue(pkt(id, 1000, ecn, ms(id)), ms(id), &mut ev);
        }
        let AnyQueue::DualQ(d) = &q else { panic!() };
        let (vars, l, c) = (d.vars().clone(), d.l_packets(), d.c_packets());
        assert!(vars.prob > 0.0);
        let new = QueueKindConfig::DualQ(DualQConfig {
            step_threshold: Duration::from_millis(3),
            ..DualQConfig::default()
        });
        assert!(new.reconfigure(&mut q).unwrap());
        let AnyQueue::DualQ(d) = &q else { panic!() };
        assert_eq!((d.vars(), d.l_packets(), d.c_packets()), (&vars, l, c));
        assert_eq!(d.params.step_threshold, Duration::from_millis(3));
    }

    proptest! {
        #[test]
        fn conserves_packets_under_random_operations(ops in ops(), drop_overload: bool) {
            let mut q = DualQConfig {
                drop_overload,
                ..DualQConfig::default()
            }
            .build()
            .unwrap();
            check_conservation(&mut q, &ops)?;
        }
    }
}
