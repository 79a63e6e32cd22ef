//! `dql`: a faithful port of Linux `lib/dynamic_queue_limits.c` (Byte Queue
//! Limits; reference/algorithms.md §1.8), with the RLC buffer as the device
//! queue:
//! - `dql_queued(len)` on every forwarded packet (`on_forwarded`), as
//!   `netdev_tx_sent_queue` does;
//! - `dql_completed(report.pulled_bytes)` on every per-TTI report, as
//!   `netdev_tx_completed_queue` does for a TX completion; like that hook, a
//!   zero-byte completion is skipped (Linux returns early when `bytes == 0`);
//! - admits iff `dql_avail() >= 0`, i.e. a packet may go down while the
//!   bytes in flight are within the limit, and the one that crosses it is the
//!   last (Linux stops the queue when `avail < 0` *after* queuing).
//!
//! Faithfulness: counters are `u32` with modular arithmetic and the kernel's
//! `POSDIFF`/`AFTER_EQ` signed-difference macros, so wrap-around after 4 GiB
//! behaves as in Linux. `time_after(jiffies, slack_start + hold)` is
//! `now > slack_start + hold_time`. `dql_reset` happens at `build()` with
//! `slack_start_time` = time zero of the run (the pacer has no clock), and
//! `limit = min_limit` as current kernels do (old ones set 0).
//!
//! One guard the kernel expresses as `BUG_ON`: a report claiming more pulled
//! bytes than are in flight (RLC headers, retransmissions) is clamped to the
//! bytes in flight instead of corrupting the counters.
//!
//! The pacer ignores `lower`: DQL keeps its own account of bytes in flight.
//! Nothing changes with time alone (the slack hold is checked on completion),
//! so `next_wakeup` is `None`.
//!
//! Reads from the report: `pulled_bytes` (and `tti` for its statistics).

use super::PulledRate;
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, Duration, Instant};

/// `DQL_MAX_OBJECT` = `UINT_MAX / 16`.
const DQL_MAX_OBJECT: u32 = u32::MAX / 16;
/// `DQL_MAX_LIMIT` = `UINT_MAX / 2 - DQL_MAX_OBJECT` = 1 879 048 192.
pub const DQL_MAX_LIMIT: u32 = u32::MAX / 2 - DQL_MAX_OBJECT;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DqlConfig {
    /// `slack_hold_time`: how long the slack must persist before the limit
    /// is reduced (BQL: HZ = 1 s).
    pub hold_time: Duration,
    /// `min_limit` (BQL default 0).
    pub min_limit: ByteSize,
    /// `max_limit` (BQL default DQL_MAX_LIMIT).
    pub max_limit: ByteSize,
}

impl Default for DqlConfig {
    fn default() -> Self {
        DqlConfig {
            hold_time: Duration::from_secs(1),
            min_limit: ByteSize(0),
            max_limit: ByteSize(DQL_MAX_LIMIT as u64),
        }
    }
}

impl DqlConfig {
    pub fn build(&self) -> Result<Dql, ConfigError> {
        let hold = check_range(
            "hold_time",
            self.hold_time,
            Duration::from_micros(1),
            Duration::from_secs(60),
        )?;
        let max = check_range(
            "max_limit",
            self.max_limit,
            ByteSize(1),
            ByteSize(DQL_MAX_LIMIT as u64),
        )?;
        let min = check_range("min_limit", self.min_limit, ByteSize(0), max)?;
        let mut d = Dql {
            num_queued: 0,
            adj_limit: 0,
            last_obj_cnt: 0,
            limit: 0,
            num_completed: 0,
            prev_ovlimit: 0,
            prev_num_queued: 0,
            prev_last_obj_cnt: 0,
            lowest_slack: u32::MAX,
            slack_start_time: Instant::ZERO,
            max_limit: max.0 as u32,
            min_limit: min.0 as u32,
            slack_hold_time: hold,
            refused: 0,
            rate: PulledRate::default(),
        };
        d.reset(Instant::ZERO);
        Ok(d)
    }
}

/// `POSDIFF(A, B)`: `A - B` if positive as a signed difference, else 0.
fn posdiff(a: u32, b: u32) -> u32 {
    let d = a.wrapping_sub(b);
    if (d as i32) > 0 {
        d
    } else {
        0
    }
}

/// `AFTER_EQ(A, B)`: `A` is at or after `B` in modular order.
fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

#[derive(Debug, Clone)]
pub struct Dql {
    // Enqueue path.
    num_queued: u32,
    adj_limit: u32,
    last_obj_cnt: u32,
    // Completion path.
    limit: u32,
    num_completed: u32,
    prev_ovlimit: u32,
    prev_num_queued: u32,
    prev_last_obj_cnt: u32,
    lowest_slack: u32,
    slack_start_time: Instant,
    // Configuration.
    max_limit: u32,
    min_limit: u32,
    slack_hold_time: Duration,
    refused: u64,
    rate: PulledRate,
}

impl Dql {
    /// `dql_reset`.
    pub fn reset(&mut self, now: Instant) {
        self.limit = self.min_limit;
        self.num_queued = 0;
        self.num_completed = 0;
        self.last_obj_cnt = 0;
        self.prev_num_queued = 0;
        self.prev_last_obj_cnt = 0;
        self.prev_ovlimit = 0;
        self.lowest_slack = u32::MAX;
        self.slack_start_time = now;
        self.adj_limit = self.limit.wrapping_add(self.num_completed);
    }

    /// Sets the limit, as writing `/sys/.../byte_queue_limits/limit_min`
    /// and `limit_max` to the same value would force it (for tests and
    /// operators).
    pub fn force_limit(&mut self, limit: u32) {
        self.limit = limit.clamp(self.min_limit, self.max_limit);
        self.adj_limit = self.limit.wrapping_add(self.num_completed);
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Lowest slack seen since slack tracking restarted (`u32::MAX` = none).
    pub fn lowest_slack(&self) -> u32 {
        self.lowest_slack
    }

    /// `dql_avail`: bytes that may still be queued (negative = over limit).
    pub fn avail(&self) -> i32 {
        self.adj_limit.wrapping_sub(self.num_queued) as i32
    }

    /// `dql_queued`.
    pub fn queued(&mut self, count: u32) {
        debug_assert!(count <= DQL_MAX_OBJECT);
        self.last_obj_cnt = count;
        self.num_queued = self.num_queued.wrapping_add(count);
    }

    /// `dql_completed`: records `count` completed bytes and recomputes the
    /// limit.
    pub fn completed(&mut self, count: u32, now: Instant) {
        let num_queued = self.num_queued;
        // BUG_ON(count > num_queued - num_completed) in Linux.
        let count = count.min(num_queued.wrapping_sub(self.num_completed));

        let completed = self.num_completed.wrapping_add(count);
        let mut limit = self.limit;
        let mut ovlimit = posdiff(num_queued.wrapping_sub(self.num_completed), limit);
        let inprogress = num_queued.wrapping_sub(completed);
        let prev_inprogress = self.prev_num_queued.wrapping_sub(self.num_completed);
        let all_prev_completed = after_eq(completed, self.prev_num_queued);

        if (ovlimit != 0 && inprogress == 0) || (self.prev_ovlimit != 0 && all_prev_completed) {
            // Starved: over the limit with nothing left in flight, or over
            // it last time and everything queued then has now completed.
            // Grow by what was both sent and completed in the last interval
            // plus the previous over-limit.
            limit = limit
                .wrapping_add(posdiff(completed, self.prev_num_queued))
                .wrapping_add(self.prev_ovlimit);
            self.slack_start_time = now;
            self.lowest_slack = u32::MAX;
        } else if inprogress != 0 && prev_inprogress != 0 && !all_prev_completed {
            // Busy the whole interval: the excess over twice what completed
            // (or the non-overlimit part of the last object) is slack; shed
            // the lowest slack seen once it has held for hold_time.
            let slack = posdiff(
                limit.wrapping_add(self.prev_ovlimit),
                completed.wrapping_sub(self.num_completed).wrapping_mul(2),
            );
            let slack_last_objs = if self.prev_ovlimit != 0 {
                posdiff(self.prev_last_obj_cnt, self.prev_ovlimit)
            } else {
                0
            };
            let slack = slack.max(slack_last_objs);
            if slack < self.lowest_slack {
                self.lowest_slack = slack;
            }
            if now > self.slack_start_time + self.slack_hold_time {
                limit = posdiff(limit, self.lowest_slack);
                self.slack_start_time = now;
                self.lowest_slack = u32::MAX;
            }
        }

        limit = limit.clamp(self.min_limit, self.max_limit);
        if limit != self.limit {
            self.limit = limit;
            ovlimit = 0;
        }
        self.adj_limit = limit.wrapping_add(completed);
        self.prev_ovlimit = ovlimit;
        self.prev_last_obj_cnt = self.last_obj_cnt;
        self.num_completed = completed;
        self.prev_num_queued = num_queued;
    }
}

impl Pacer for Dql {
    fn admits(&mut self, _len: u32, _now: Instant, _lower: &LowerState) -> bool {
        let ok = self.avail() >= 0;
        if !ok {
            self.refused += 1;
        }
        ok
    }
    fn on_forwarded(&mut self, len: u32, _now: Instant) {
        self.queued(len);
    }
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        self.rate.update(report);
        if report.pulled_bytes > 0 {
            self.completed(report.pulled_bytes.min(u32::MAX as u64) as u32, now);
        }
    }
    fn stats(&self) -> PacerStats {
        PacerStats {
            bandwidth_bps: self.rate.get(),
            allowance_bytes: self.avail().max(0) as f64,
            limit: Some(self.limit as f64),
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::testing::FakeLink;

    fn report(pulled: u64) -> LowerLayerReport {
        LowerLayerReport {
            tti: Duration::from_millis(1),
            pulled_bytes: pulled,
            ..LowerLayerReport::default()
        }
    }

    /// Queues 1500-B objects while the pacer admits; returns how many.
    fn fill(d: &mut Dql, now: Instant) -> u32 {
        let mut n = 0;
        while d.admits(1500, now, &LowerState::default()) {
            d.on_forwarded(1500, now);
            n += 1;
            assert!(n < 10_000);
        }
        n
    }

    /// algorithms.md §2.8 "starvation growth": start at limit 0, the device
    /// completes everything queued at each completion event.
    #[test]
    fn starvation_growth_oracle() {
        let mut d = DqlConfig::default().build().unwrap();
        let expect_objs = [1, 2, 4, 8, 16, 32];
        let expect_limit = [1500, 4500, 10_500, 22_500, 46_500, 94_500];
        for k in 0..6 {
            let t = Instant::from_millis(k as u64);
            let n = fill(&mut d, t);
            assert_eq!(n, expect_objs[k], "round {k}");
            d.on_report(&report(n as u64 * 1500), t + Duration::from_micros(500));
            assert_eq!(d.limit(), expect_limit[k], "round {k}");
            assert_eq!(d.adj_limit, 2 * d.limit());
            assert_eq!(d.prev_ovlimit, 0);
        }
    }

    /// algorithms.md §2.8 "slack shrink": limit forced to 30 000, hold time
    /// 3 ticks, 6000 B completed per tick, producer refills up to avail.
    #[test]
    fn slack_shrink_oracle() {
        let tick = Duration::from_millis(1);
        let mut d = DqlConfig {
            hold_time: Duration::from_millis(3),
            ..DqlConfig::default()
        }
        .build()
        .unwrap();
        d.force_limit(30_000);
        fill(&mut d, Instant::ZERO);
        let at = |k: u64| Instant::ZERO + Duration::from_nanos(k * tick.as_nanos());

        d.on_report(&report(6000), at(1));
        assert_eq!(d.limit(), 30_000, "t=1 no change");
        assert_eq!(d.lowest_slack(), u32::MAX);
        fill(&mut d, at(1));
        for k in 2..=3 {
            d.on_report(&report(6000), at(k));
            assert_eq!(d.limit(), 30_000);
            assert_eq!(
                d.lowest_slack(),
                19_500,
                "t={k}: 30 000 + 1 500 - 2 x 6 000"
            );
            fill(&mut d, at(k));
        }
        d.on_report(&report(6000), at(4));
        assert_eq!(d.limit(), 10_500, "t=4 > slack_start + 3");
        assert_eq!(d.lowest_slack(), u32::MAX);
    }

    #[test]
    fn modular_helpers_match_the_kernel_macros() {
        assert_eq!(posdiff(5, 3), 2);
        assert_eq!(posdiff(3, 5), 0);
        // Across the u32 wrap: 2 is "after" u32::MAX - 1.
        assert_eq!(posdiff(2, u32::MAX - 1), 4);
        assert!(after_eq(2, u32::MAX - 1));
        assert!(!after_eq(u32::MAX - 1, 2));
    }

    #[test]
    fn counters_survive_u32_wrap_around() {
        let mut d = DqlConfig::default().build().unwrap();
        // Start just below the wrap, as after 4 GiB of traffic.
        let base = u32::MAX - 10_000;
        d.num_queued = base;
        d.num_completed = base;
        d.prev_num_queued = base;
        d.adj_limit = base;
        let mut limits = Vec::new();
        for k in 0..4 {
            let t = Instant::from_millis(k);
            let n = fill(&mut d, t);
            d.on_report(&report(n as u64 * 1500), t);
            limits.push(d.limit());
        }
        assert_eq!(limits, [1500, 4500, 10_500, 22_500]);
    }

    #[test]
    fn over_reported_completion_is_clamped_to_bytes_in_flight() {
        let mut d = DqlConfig::default().build().unwrap();
        fill(&mut d, Instant::ZERO);
        d.on_report(&report(9999), Instant::from_millis(1));
        assert_eq!(d.num_completed, d.num_queued);
        assert_eq!(d.limit(), 1500);
    }

    #[test]
    fn constant_capacity_keeps_the_buffer_bounded_and_the_mac_fed() {
        for capacity in [3000, 7700] {
            let mut d = DqlConfig::default().build().unwrap();
            let mut link = FakeLink::new(capacity);
            link.run(&mut d, 4000);
            link.assert_steady(4 * capacity, 0.0);
        }
    }
}
