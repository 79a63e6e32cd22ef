//! `jit`: the just-in-time grant pacer — keep in RLC what the *next* slot
//! will carry, no more, and send the one packet that overshoots it as late
//! as the slot allows (docs/pacer.md has the design, the measurements and
//! where it loses).
//!
//! It is the thesis' "full, but not fuller" (thesis-irazabal-5g-qos.txt
//! ch. 3) with three things the RAN knows and 5G-BDP / e5G-BDP (Alg. 2-5)
//! do not use:
//! 1. **Per-slot service of the same TDD phase.** The report of every slot
//!    says what the MAC took (`pulled_bytes`) and what it offered
//!    (`granted_bytes`). The service of a slot is `pulled_bytes` when RLC
//!    still held data after the pull (the MAC took all it would), else
//!    `max(pulled_bytes, granted_bytes)` (the buffer ran dry, so the grant
//!    says what the slot could have carried). This is not e5G-BDP's pull,
//!    which under-reads the channel whenever the pacer itself left the
//!    buffer short (sec. 3.4's "non-virtuous cycle"). The target `G` for
//!    the next slot is set from the slots of the same TDD phase among the
//!    last `window` reports so that the capacity a buffer of `G` bytes would have left
//!    unused in those slots is at most `unused_share` of what they offered:
//!    the smallest `G` with `sum (s_i - G)+ <= unused_share x sum s_i`,
//!    and never below their mean. On a steady channel that is the slot's
//!    service; on a bursty one (a
//!    delivery trace whose slots carry 0, 1 or 10 packets) it rises towards
//!    the bursts in proportion to how much of the capacity they hold, so
//!    the pacer keeps what it promises (the MAC finds data for all but
//!    `unused_share` of the capacity) on channels nobody tuned it for.
//!    It forgets a fade exactly `window` reports later. The default window,
//!    256 reports, is long enough that the few slots holding the last 1 %
//!    of the capacity are seen in it, and that a burst before an outage of
//!    tens of slots is remembered when the link comes back (docs/pacer.md
//!    has the sweep: 64 loses 1-2 % more throughput on the mahimahi
//!    traces, 512 adds delay without more throughput).
//! 2. **The TDD pattern.** The report says how many reports one repetition
//!    of the cell's TDD pattern spans (`pulls_per_pattern`, `P`; DDDSU: 4,
//!    the U slot has no pull and no report; FDD: 1). `G` for the next pull
//!    is the mean over the samples `P, 2P, ..` reports back, so an S slot
//!    asks for its smaller grant and a D slot is not averaged with it.
//!    Random empty slots (a mahimahi trace) are not in the pattern: they
//!    are fades, and count in the mean.
//! 3. **The slot clock.** Reports arrive at the pull; the next pull is
//!    `next_pull_in` later (one `tti`, or more before a U slot). Bytes that will surely leave in the next pull gain
//!    nothing by waiting, but the packet that makes the buffer exceed `G`
//!    pushes whatever arrives after it into a later slot; so it goes down
//!    only `lead x tti` before the next pull, letting a packet that arrives
//!    meanwhile (a game or voice packet the priority scheduler puts first)
//!    go ahead of it. A small packet may use the same one-MTU headroom at
//!    once, in proportion to how little it is: it delays what follows by
//!    little, and catches a grant larger than `G` if one comes.
//!
//! Contract, with `c` = RLC backlog of the last report + bytes forwarded
//! since, `t0` = instant of the last report:
//! - `G` is the smallest value with `sum over the window of (s_i - G)+ <=
//!   unused_share x sum s_i`, or the window's mean service if that is
//!   larger (0 for an empty window).
//! - `admits(len)` iff
//!   - `c + len <= G` (it leaves in the next pull), or
//!   - `c + len <= G + (mtu - len)` (a packet smaller than the MTU takes
//!     that much of the one-MTU headroom at once), or
//!   - `c < max(G, 1)` and `now >= t0 + next_pull_in - lead x tti` (the last packet
//!     needed to fill the next pull; any size, so a slot that carries less
//!     than one packet is never starved, and the buffer is never left empty
//!     at a pull, so an unexpected grant finds something), or
//!   - no report came yet and `c = 0` (one packet at a time until the MAC
//!     has spoken).
//!
//!   Hence right after any admission `c < G + mtu` (for packets up to the MTU).
//! - `next_wakeup` is `t0 + next_pull_in - lead x tti` when a refused candidate would
//!   pass then, else `None` (only a report changes `G` and `c`).
//! - After a missing report nothing more than one slot's worth is released:
//!   no rule depends on elapsed time beyond the lead instant.
//! - `on_sdu_departed` and `on_status_pdu` are not used: the backlog is
//!   bounded by `G` plus one MTU by construction, so an SDU's sojourn is
//!   the time its slot's grant needs to carry it, not an error to correct.
//!
//! Reads from the report: `pulled_bytes`, `granted_bytes`, `backlog_bytes`,
//! `tti`, `next_pull_in`, `pulls_per_pattern` (the same report every pacer
//! gets, all of it what a real MAC and RLC know after each pull); nothing
//! of a channel model (no trace look-ahead, no carry-over balance).

use super::{pull_gap, tti_of, DEFAULT_MTU, DEFAULT_TTI};
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::{ByteSize, ConfigError, Duration, Instant};

/// Longest TDD pattern used, in reports: TS 38.331 `dl-UL-TransmissionPeriodicity`
/// goes up to 10 ms, i.e. 40 slots at 60 kHz (µ = 2). A longer one is
/// treated as no pattern.
pub const MAX_PERIOD: u32 = 40;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct JitConfig {
    /// Reports whose slots of the next slot's TDD phase the target is set
    /// from (default 256; docs/pacer.md has the sweep).
    pub window: u32,
    /// Share of the capacity of those slots that a buffer of the target's
    /// size would have left unused (default 0.01, the thesis' "without
    /// sacrificing throughput", sec. 3.6.2): the pacer's throughput
    /// promise. 0 fills to the largest slot of the window.
    pub unused_share: f64,
    /// How long before the next pull, as a fraction of the slot, the packet
    /// that overfills the next pull may go down (default 0.2; it must cover
    /// the time PDCP/RLC need to hand a packet to the MAC).
    pub lead: f64,
    /// MTU of the bearer: the headroom above the estimate (default 1500 B).
    pub mtu: ByteSize,
    /// Hold every packet larger than half the MTU until the lead instant,
    /// even one that fits in the next pull (default true): a small packet
    /// that arrives meanwhile then goes ahead of it into the same pull.
    pub hold: bool,
}

impl Default for JitConfig {
    fn default() -> Self {
        JitConfig {
            window: 256,
            unused_share: 0.01,
            lead: 0.2,
            mtu: ByteSize(DEFAULT_MTU as u64),
            hold: true,
        }
    }
}

impl JitConfig {
    pub fn build(&self) -> Result<Jit, ConfigError> {
        let window = check_range("window", self.window, 1, 1000)?;
        let unused_share = check_f64("unused_share", self.unused_share, 0.0, 0.5)?;
        let lead = check_f64("lead", self.lead, 0.0, 1.0)?;
        let mtu = check_range("mtu", self.mtu, ByteSize(64), ByteSize(65_535))?;
        Ok(Jit {
            window,
            unused_share,
            lead,
            mtu: mtu.0,
            hold: self.hold,
            tti: DEFAULT_TTI,
            gap: DEFAULT_TTI,
            service: vec![0; window.max(MAX_PERIOD) as usize],
            phase: Vec::with_capacity(window.max(MAX_PERIOD) as usize),
            slots: 0,
            period: 1,
            target: 0,
            committed: 0,
            last_report: None,
            pending: None,
            refused: 0,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Jit {
    window: u32,
    unused_share: f64,
    lead: f64,
    mtu: u64,
    hold: bool,
    tti: Duration,
    /// Time from the last report to the next pull.
    gap: Duration,
    /// Service of the last `max(window, MAX_PERIOD)` reports, a ring indexed by
    /// report number.
    service: Vec<u64>,
    /// Scratch: the window's samples of the next slot's phase.
    phase: Vec<u64>,
    /// Reports seen.
    slots: u64,
    /// The TDD pattern in reports (1 = none).
    period: u32,
    /// `G`: the estimated service of the next slot.
    target: u64,
    /// `c`: RLC backlog of the last report plus bytes forwarded since.
    committed: u64,
    last_report: Option<Instant>,
    pending: Option<u32>,
    refused: u64,
}

impl Jit {
    /// `G`, bytes the next slot is expected to carry.
    pub fn target(&self) -> u64 {
        self.target
    }

    /// The TDD pattern in reports (1 when there is none).
    pub fn period(&self) -> u32 {
        self.period
    }

    /// The instant from which the overfilling packet may go down.
    fn lead_instant(&self) -> Option<Instant> {
        let t0 = self.last_report?;
        let wait = self.gap.as_nanos() as f64 - self.lead * self.tti.as_nanos() as f64;
        Some(t0 + Duration::from_nanos(wait.max(0.0).round() as u64))
    }

    fn admits_at(&self, len: u32, now: Instant) -> bool {
        let Some(lead_at) = self.lead_instant() else {
            return self.committed == 0;
        };
        let (c, len, g) = (self.committed, len as u64, self.target);
        let at_lead = now >= lead_at;
        if self.hold {
            // Only small packets go at once; everything else fills the
            // next pull at the lead instant.
            (2 * len <= self.mtu && c + len + len <= g + self.mtu) || (c < g.max(1) && at_lead)
        } else {
            c + len <= g || c + len + len <= g + self.mtu || (c < g.max(1) && at_lead)
        }
    }

    /// `G` for slot number `next`: the smallest target that would have left
    /// at most `unused_share` of the capacity of the slots `period` apart
    /// from it among the last `window` reports (at least one; fewer at
    /// start-up) unused, and at least their mean: on a steady channel
    /// filling less than a slot's service only wastes it.
    fn estimate(&mut self, next: u64) -> u64 {
        let n = self.service.len() as u64;
        let p = u64::from(self.period);
        let span = u64::from(self.window).max(p);
        self.phase.clear();
        self.phase.extend(
            (1..)
                .map(|k| k * p)
                .take_while(|&back| back <= span && back <= next && back <= n)
                .map(|back| self.service[((next - back) % n) as usize]),
        );
        target_for(&mut self.phase, self.unused_share)
    }
}

/// The smallest `g` with `sum (s - g)+ <= share x sum s` over `samples`
/// (reordered), rounded up to a byte, or their mean (rounded down) if
/// that is larger; 0 for no samples.
///
/// When the mean itself leaves no more than the share unused (a steady
/// channel) that is the answer, in one pass. Otherwise only the samples
/// above the mean matter: sorted largest first, `f(g) = sum (s - g)+` is
/// `P_k - k g` between the k-th and the (k+1)-th (`P_k` the sum of the k
/// largest), so the answer is `(P_k - budget) / k` for the first k where
/// that is not below the (k+1)-th sample (or the mean).
fn target_for(samples: &mut [u64], share: f64) -> u64 {
    let total: u64 = samples.iter().sum();
    let Some(mean) = total.checked_div(samples.len() as u64) else {
        return 0;
    };
    let budget = share * total as f64;
    let over = |g: u64| samples.iter().map(|&s| s.saturating_sub(g)).sum::<u64>();
    if over(mean) as f64 <= budget {
        return mean;
    }
    // Samples above the mean first, largest first.
    let mut above = 0;
    for i in 0..samples.len() {
        if samples[i] > mean {
            samples.swap(i, above);
            above += 1;
        }
    }
    let top = &mut samples[..above];
    top.sort_unstable_by(|a, b| b.cmp(a));
    let mut prefix = 0u64;
    for k in 0..top.len() {
        prefix += top[k];
        let next = top.get(k + 1).copied().unwrap_or(mean);
        let g = (prefix as f64 - budget) / (k + 1) as f64;
        if g >= next as f64 {
            return (g.ceil() as u64).max(mean);
        }
    }
    mean
}

impl Pacer for Jit {
    fn admits(&mut self, len: u32, now: Instant, _lower: &LowerState) -> bool {
        let ok = self.admits_at(len, now);
        if !ok {
            self.refused += 1;
            self.pending = Some(len);
        }
        ok
    }

    fn on_forwarded(&mut self, len: u32, _now: Instant) {
        self.committed += len as u64;
        self.pending = None;
    }

    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        self.tti = tti_of(report, self.tti);
        self.gap = pull_gap(report, self.tti);
        let service = if report.backlog_bytes > 0 {
            report.pulled_bytes
        } else {
            report.pulled_bytes.max(report.granted_bytes)
        };
        let n = self.service.len() as u64;
        self.service[(self.slots % n) as usize] = service;
        self.slots += 1;
        self.period = match u32::from(report.pulls_per_pattern) {
            p @ 1..=MAX_PERIOD => p,
            _ => 1,
        };
        self.target = self.estimate(self.slots);
        self.committed = report.backlog_bytes;
        self.last_report = Some(now);
    }

    fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        let len = self.pending?;
        let at = self.lead_instant()?;
        (at > now && self.admits_at(len, at)).then_some(at)
    }

    fn stats(&self) -> PacerStats {
        PacerStats {
            bandwidth_bps: self.target as f64 / self.tti.as_secs_f64(),
            allowance_bytes: self.target.saturating_sub(self.committed) as f64,
            limit: Some(self.target as f64),
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::testing::FakeLink;

    const TTI: Duration = Duration::from_millis(1);

    fn report(pulled: u64, granted: u64, backlog: u64, max: u64) -> LowerLayerReport {
        LowerLayerReport {
            tti: TTI,
            backlog_bytes: backlog,
            backlog_sdus: backlog.div_ceil(1500) as u32,
            pulled_bytes: pulled,
            granted_bytes: granted,
            max_bytes: max,
            ..LowerLayerReport::default()
        }
    }

    /// Without `hold`: a packet that fits in the next pull goes at once.
    /// With `unused_share = 0` the target of equal slots is their service,
    /// so the admission rules can be checked on round numbers.
    fn jit() -> Jit {
        with_window(JitConfig::default().window)
    }

    fn with_window(window: u32) -> Jit {
        JitConfig {
            window,
            unused_share: 0.0,
            hold: false,
            ..JitConfig::default()
        }
        .build()
        .unwrap()
    }

    /// With `hold` (the default), a full-size packet waits for the lead
    /// instant even when it fits in the next pull, and a 200-B packet that
    /// arrives meanwhile goes at once, ahead of it.
    #[test]
    fn hold_keeps_full_size_packets_for_the_lead_instant() {
        let mut p = JitConfig::default().build().unwrap();
        let t0 = Instant::from_millis(10);
        p.on_report(&report(4000, 4000, 0, 4000), t0);
        assert!(!p.admits(1500, t0, &lower()));
        let w = p.next_wakeup(t0).unwrap();
        assert_eq!(w, t0 + Duration::from_micros(800));
        let t = t0 + Duration::from_micros(300);
        assert!(p.admits(200, t, &lower()));
        p.on_forwarded(200, t);
        for _ in 0..3 {
            assert!(p.admits(1500, w, &lower()));
            p.on_forwarded(1500, w);
        }
        // 4700 >= 4000: the pull is full.
        assert!(!p.admits(1500, w, &lower()));
    }

    fn lower() -> LowerState {
        LowerState::default()
    }

    /// Steady grants of G = 4000 B per slot, RLC empty after each pull: the
    /// allowance is G; 1500-B packets go down at once while they fit (1500,
    /// 3000), the third (4500 > 4000) only at (1 - 0.2) x 1 ms.
    #[test]
    fn steady_grants_give_one_slot_of_allowance_and_the_overshoot_waits() {
        let mut p = jit();
        let t0 = Instant::from_millis(10);
        for k in 0..5 {
            p.on_report(
                &report(4000, 4000, 0, 4000),
                t0 - Duration::from_millis(4 - k),
            );
        }
        assert_eq!(p.target(), 4000);
        assert_eq!(p.stats().allowance_bytes, 4000.0);
        assert!(p.admits(1500, t0, &lower()));
        p.on_forwarded(1500, t0);
        assert!(p.admits(1500, t0, &lower()));
        p.on_forwarded(1500, t0);
        let t = t0 + Duration::from_micros(100);
        // 3000 + 1500 > 4000, and a full-size packet has no headroom.
        assert!(!p.admits(1500, t, &lower()));
        // A 200-B packet fits: 3000 + 200 <= 4000.
        assert!(p.admits(200, t, &lower()));
        p.on_forwarded(200, t);
        assert!(!p.admits(1500, t, &lower()));
        let w = p.next_wakeup(t).unwrap();
        assert_eq!(w, t0 + Duration::from_micros(800));
        assert!(!p.admits(1500, w - Duration::from_nanos(1), &lower()));
        assert!(p.admits(1500, w, &lower()));
        p.on_forwarded(1500, w);
        // 4700 >= 4000: no more full-size packets until the next report; a
        // 1000-B one would need 4700 + 1000 <= 4000 + (1500 - 1000).
        assert!(!p.admits(1000, w, &lower()));
        assert_eq!(p.next_wakeup(w), None);
        // 40 B: 4700 + 40 <= 4000 + 1460.
        assert!(p.admits(40, w, &lower()));
        assert_eq!(p.stats().refused, 4);
    }

    /// Small packets take the one-MTU headroom at once in proportion to how
    /// small they are: with G = 4000 and 3900 B left in RLC, a 200-B packet
    /// (3900 + 200 <= 4000 + 1300) and then a 700-B one (4100 + 700 <=
    /// 4000 + 800) go; a 1500-B one never does before the next report.
    /// Whatever the sizes, the backlog stays below G + MTU.
    #[test]
    fn small_packets_use_the_headroom_at_once() {
        let mut p = with_window(1);
        let t0 = Instant::from_millis(3);
        p.on_report(&report(4000, 4000, 3900, 4000), t0);
        assert_eq!(p.target(), 4000);
        assert!(p.admits(200, t0, &lower()));
        p.on_forwarded(200, t0);
        assert!(p.admits(700, t0, &lower()));
        p.on_forwarded(700, t0);
        // Now 4800: 351 B would end at 5151 > 4000 + 1149; 350 B just fits.
        assert!(!p.admits(351, t0, &lower()));
        assert!(!p.admits(1500, t0 + Duration::from_micros(900), &lower()));
        assert_eq!(p.next_wakeup(t0), None);
        assert!(p.admits(350, t0, &lower()));
    }

    /// The backlog left by the pull counts: 2500 B left of a 4000-B slot
    /// leaves room for exactly 1500 B.
    #[test]
    fn backlog_left_in_rlc_is_part_of_the_next_slot() {
        let mut p = jit();
        let t0 = Instant::from_millis(3);
        p.on_report(&report(4000, 4000, 2500, 4000), t0);
        assert!(p.admits(1500, t0, &lower()));
        p.on_forwarded(1500, t0);
        assert!(!p.admits(1500, t0, &lower()));
        assert!(!p.admits(800, t0, &lower()), "4000 + 800 > 4000 + 700");
        assert_eq!(p.next_wakeup(t0), None, "the slot is full already");
    }

    /// A slot that carries less than a packet (300 B/slot, 1500-B packets):
    /// one packet goes down at the lead instant whenever the buffer would
    /// not fill the next pull, none while it would.
    #[test]
    fn a_slot_smaller_than_a_packet_is_never_starved() {
        let mut p = jit();
        let t0 = Instant::from_millis(1);
        p.on_report(&report(0, 300, 0, 300), t0);
        assert_eq!(p.target(), 300);
        assert!(!p.admits(1500, t0, &lower()));
        let w = p.next_wakeup(t0).unwrap();
        assert!(p.admits(1500, w, &lower()));
        p.on_forwarded(1500, w);
        // Next slot: the MAC took 300, 1200 left >= 300: nothing.
        p.on_report(&report(300, 300, 1200, 300), t0 + TTI);
        assert!(!p.admits(1500, t0 + TTI, &lower()));
        assert_eq!(p.next_wakeup(t0 + TTI), None);
        // And the FakeLink MAC stays fed with less than G + one packet left.
        let mut p = jit();
        let mut link = FakeLink::new(300);
        link.run(&mut p, 2000);
        link.assert_steady(1500, 0.0);
    }

    /// An outage (G = 0) still keeps one packet in RLC, so the first grant
    /// after it finds something to send.
    #[test]
    fn an_outage_keeps_one_packet_queued() {
        let mut p = with_window(1);
        let t0 = Instant::from_millis(1);
        p.on_report(&report(0, 0, 0, 0), t0);
        assert_eq!(p.target(), 0);
        let w = t0 + Duration::from_micros(800);
        assert!(!p.admits(1500, t0, &lower()));
        assert_eq!(p.next_wakeup(t0), Some(w));
        assert!(p.admits(1500, w, &lower()));
        p.on_forwarded(1500, w);
        assert!(!p.admits(1500, w, &lower()));
    }

    /// The target leaves at most `unused_share` of the window's capacity
    /// unused. Slots of 1000, 2000, 3000 and 6000 B (12000 B): with 10 %
    /// (1200 B) the target is 4800 (only the 6000-B slot exceeds it, by
    /// 1200); with 25 % it is 3000 (6000 - 3000 = 3000 B unused); with 50 %
    /// would be 5000 / 3 rounded up (4333 + 1333 + 333 = 5999 <= 6000 B),
    /// below the mean, so it is the mean, 3000. Equal slots give their
    /// service (the mean), not 4000 x 0.98 = 3920.
    #[test]
    fn the_target_leaves_at_most_the_unused_share_of_the_window_unused() {
        let run = |share: f64, slots: &[u64]| {
            let mut p = JitConfig {
                window: 4,
                unused_share: share,
                ..JitConfig::default()
            }
            .build()
            .unwrap();
            let mut t = Instant::from_millis(1);
            for &s in slots {
                p.on_report(&report(s, s, 100, s), t);
                t += TTI;
            }
            p.target()
        };
        let slots = [1000, 2000, 3000, 6000];
        assert_eq!(run(0.10, &slots), 4800);
        assert_eq!(run(0.25, &slots), 3000);
        assert_eq!(run(0.50, &slots), 3000);
        assert_eq!(run(0.0, &slots), 6000, "no budget: the largest slot");
        assert_eq!(run(0.02, &[4000; 4]), 4000);
        // A fifth slot drops the first from the window of 4: 2000, 3000,
        // 6000, 0 with 10 % of 11000 B: 6000 - 1100 = 4900 >= 3000.
        assert_eq!(run(0.10, &[1000, 2000, 3000, 6000, 0]), 4900);
        // A bursty channel: one slot in four carries 8000 B. The mean
        // (2000) would leave 6000 of every 8000 B unused; with 2 % the
        // target is 8000 - 0.02 x 8000 = 7840.
        assert_eq!(run(0.02, &[0, 0, 0, 8000]), 7840);
    }

    /// With the defaults the MAC finds data for all of a steady channel's
    /// capacity (the target is never below the mean service), and the
    /// buffer stays under one slot plus one packet.
    #[test]
    fn the_default_keeps_its_throughput_promise_on_a_steady_channel() {
        for capacity in [3000, 7600, 7700, 20_000] {
            let mut p = JitConfig::default().build().unwrap();
            let mut link = FakeLink::new(capacity);
            link.run(&mut p, 3000);
            link.assert_steady(capacity + 1500, 0.0);
        }
    }

    /// The service of a slot: what the MAC pulled if RLC kept data (a HARQ
    /// retransmission slot pulls 0 with data waiting), else the grant.
    #[test]
    fn service_is_the_pull_unless_the_buffer_ran_dry() {
        let mut p = with_window(1);
        p.on_report(&report(700, 5000, 800, 5000), Instant::ZERO);
        assert_eq!(p.target(), 700, "data left: the MAC took all it would");
        p.on_report(&report(700, 5000, 0, 5000), Instant::ZERO + TTI);
        assert_eq!(p.target(), 5000, "ran dry: the grant is the service");
    }

    /// DDDSU: D slots carry 5000 B, S 2000 B, U has no report. With the
    /// report's `pulls_per_pattern = 4` each pull's estimate is its own
    /// phase from the first pattern on: after the S slot's report the next
    /// pull is a D slot (5000), after the third D slot's the S slot (2000);
    /// and the overfilling packet after the S slot waits for the pull two
    /// slots later (`next_pull_in`).
    #[test]
    fn the_tdd_pattern_of_the_report_keeps_phases_apart() {
        let mut p = jit();
        // Pull phases D D D S (the U slot has none).
        let grant = |pull: u64| if pull % 4 == 3 { 2000 } else { 5000 };
        let mut t = Instant::ZERO;
        for pull in 0..40u64 {
            let g = grant(pull);
            let gap = if pull % 4 == 3 {
                2 * TTI.as_nanos()
            } else {
                TTI.as_nanos()
            };
            let r = LowerLayerReport {
                next_pull_in: Duration::from_nanos(gap),
                pulls_per_pattern: 4,
                ..report(g, g, 0, g)
            };
            p.on_report(&r, t);
            assert_eq!(p.period(), 4);
            if pull >= 4 {
                assert_eq!(p.target(), grant(pull + 1), "pull {pull}");
            }
            if pull == 39 {
                // After the S slot: the lead instant is 2 ms - 0.2 ms on.
                let w = t + Duration::from_micros(1800);
                assert!(p.admits(1500, t, &lower()));
                p.on_forwarded(1500, t);
                assert!(p.admits(1500, t, &lower()));
                p.on_forwarded(1500, t);
                assert!(p.admits(1500, t, &lower()));
                p.on_forwarded(1500, t);
                assert!(!p.admits(1500, t, &lower()), "4500 + 1500 > 5000");
                assert_eq!(p.next_wakeup(t), Some(w));
            }
            t += Duration::from_nanos(gap);
        }
    }

    /// Empty slots that are not in the pattern (as in a mahimahi trace) are
    /// fades, not a TDD pattern: with slots of 0 or 3000 B at random, 1 %
    /// of the capacity of the 3000-B slots is 30 B each, so the target is
    /// 2970 B, above the mean (about 2000 B) that would leave a third of
    /// every full slot unused.
    #[test]
    fn empty_slots_of_an_fdd_cell_are_fades_not_a_pattern() {
        let mut p = JitConfig {
            hold: false,
            ..JitConfig::default()
        }
        .build()
        .unwrap();
        let mut x: u32 = 12345;
        for slot in 0..300u64 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let g = if (x >> 16).is_multiple_of(3) { 0 } else { 3000 };
            let r = LowerLayerReport {
                pulls_per_pattern: 1,
                ..report(g, g, 0, g)
            };
            p.on_report(&r, Instant::ZERO + Duration::from_millis(slot));
        }
        assert_eq!(p.period(), 1);
        assert_eq!(p.target(), 2970);
    }

    #[test]
    fn before_any_report_one_packet_at_a_time() {
        let mut p = jit();
        assert!(p.admits(1500, Instant::ZERO, &lower()));
        p.on_forwarded(1500, Instant::ZERO);
        assert!(!p.admits(1500, Instant::ZERO, &lower()));
        assert_eq!(p.next_wakeup(Instant::ZERO), None);
    }

    #[test]
    fn constant_capacity_keeps_the_buffer_under_one_packet_and_the_mac_fed() {
        for capacity in [3000, 7700, 20_000] {
            let mut p = jit();
            let mut link = FakeLink::new(capacity);
            link.run(&mut p, 3000);
            // Filled to G, overshot by less than one packet, G pulled.
            link.assert_steady(1500, 0.0);
        }
    }

    #[test]
    fn config_is_validated() {
        let e = JitConfig {
            window: 0,
            ..JitConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.field, "window");
        let e = JitConfig {
            lead: 1.5,
            ..JitConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.field, "lead");
        let e = JitConfig {
            mtu: ByteSize(10),
            ..JitConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.field, "mtu");
    }
}
