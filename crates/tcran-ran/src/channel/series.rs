//! A piecewise-constant MCS profile.

use super::{Channel, ChannelSample};
use crate::phy::mcs::{Mcs, McsTable};
use tcran_core::config::check_range;
use tcran_core::{ConfigError, Duration, Instant};

/// MCS as a function of time: `steps[i].1` applies from `steps[i].0` until
/// the next step; the first value also applies before the first step, and
/// the last one forever after (no looping).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct McsSeries {
    table: McsTable,
    steps: Vec<(Instant, u8)>,
}

impl McsSeries {
    /// Steps must be non-empty, in strictly increasing time order, and use
    /// non-reserved indices of `table`.
    pub fn new(table: McsTable, steps: Vec<(Instant, u8)>) -> Result<McsSeries, ConfigError> {
        if steps.is_empty() {
            return Err(ConfigError::new(
                "steps",
                "[]",
                "must have at least one (time, mcs) step",
            ));
        }
        for (i, w) in steps.iter().enumerate() {
            Mcs::new(table, w.1).map_err(|e| e.within(format!("steps[{i}]")))?;
            if i > 0 && w.0 <= steps[i - 1].0 {
                return Err(ConfigError::new(
                    format!("steps[{i}].time"),
                    w.0,
                    format!("must be after steps[{}].time = {}", i - 1, steps[i - 1].0),
                ));
            }
        }
        Ok(McsSeries { table, steps })
    }

    /// A staircase from `from` to `to` (either direction): `from` until
    /// `start`, then one index per `duration / |to - from|`, reaching `to` at
    /// `start + duration` and holding it. TC-RAN Fig. 12 ("MCS 6 -> 18 over
    /// 60 s"): `linear_ramp(table, 6, 18, Instant::ZERO, 60 s)` gives 6 on
    /// [0, 5 s), 7 on [5 s, 10 s), ..., 18 from 60 s.
    pub fn linear_ramp(
        table: McsTable,
        from: u8,
        to: u8,
        start: Instant,
        duration: Duration,
    ) -> Result<McsSeries, ConfigError> {
        Mcs::new(table, from).map_err(|e| e.within("ramp.from"))?;
        Mcs::new(table, to).map_err(|e| e.within("ramp.to"))?;
        let n = u64::from(from.abs_diff(to));
        if n == 0 {
            return McsSeries::new(table, vec![(start, from)]);
        }
        check_range(
            "ramp.duration",
            duration,
            Duration::from_nanos(n),
            Duration::MAX,
        )?;
        let steps = (0..=n)
            .map(|k| {
                let t = start
                    + Duration::from_nanos(
                        (u128::from(duration.as_nanos()) * u128::from(k) / u128::from(n)) as u64,
                    );
                let m = if to > from {
                    from + k as u8
                } else {
                    from - k as u8
                };
                (t, m)
            })
            .collect();
        McsSeries::new(table, steps)
    }

    pub fn table(&self) -> McsTable {
        self.table
    }

    pub fn steps(&self) -> &[(Instant, u8)] {
        &self.steps
    }

    /// The MCS in force at `t`.
    pub fn mcs_at(&self, t: Instant) -> Mcs {
        let i = self.steps.partition_point(|s| s.0 <= t).saturating_sub(1);
        Mcs {
            table: self.table,
            index: self.steps[i].1,
        }
    }

    /// When the MCS next changes after `t`, if it does.
    pub fn next_change_after(&self, t: Instant) -> Option<Instant> {
        self.steps.iter().map(|s| s.0).find(|&s| s > t)
    }
}

impl Channel for McsSeries {
    fn sample(&mut self, now: Instant, _dt: Duration) -> ChannelSample {
        ChannelSample::Mcs(self.mcs_at(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Instant {
        Instant::from_millis(x * 1000)
    }

    #[test]
    fn tc_ran_fig12_ramp_6_to_18_over_60s() {
        let r = McsSeries::linear_ramp(
            McsTable::Qam64,
            6,
            18,
            Instant::ZERO,
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(r.steps().len(), 13);
        assert_eq!(r.mcs_at(Instant::ZERO).index, 6);
        assert_eq!(r.mcs_at(s(5) - Duration::from_nanos(1)).index, 6);
        assert_eq!(r.mcs_at(s(5)).index, 7);
        assert_eq!(r.mcs_at(s(30)).index, 12);
        assert_eq!(r.mcs_at(s(59)).index, 17);
        assert_eq!(r.mcs_at(s(60)).index, 18);
        assert_eq!(r.mcs_at(s(600)).index, 18);
        assert_eq!(r.next_change_after(s(7)), Some(s(10)));
        assert_eq!(r.next_change_after(s(60)), None);
    }

    #[test]
    fn ramp_down_and_delayed_start() {
        let r = McsSeries::linear_ramp(McsTable::Qam256, 20, 10, s(40), Duration::from_secs(20))
            .unwrap();
        assert_eq!(r.mcs_at(s(0)).index, 20);
        assert_eq!(r.mcs_at(s(41)).index, 20);
        assert_eq!(r.mcs_at(s(42)).index, 19);
        assert_eq!(r.mcs_at(s(60)).index, 10);
    }

    #[test]
    fn steps_are_validated() {
        let t = McsTable::Qam64;
        assert!(McsSeries::new(t, vec![]).is_err());
        let e = McsSeries::new(t, vec![(s(0), 3), (s(0), 4)]).unwrap_err();
        assert_eq!(e.field, "steps[1].time");
        let e = McsSeries::new(t, vec![(s(0), 3), (s(1), 30)]).unwrap_err();
        assert_eq!(e.field, "steps[1].mcs");
        let mut c = McsSeries::new(t, vec![(s(1), 3), (s(2), 9)]).unwrap();
        assert_eq!(
            c.sample(Instant::ZERO, Duration::ZERO),
            ChannelSample::Mcs(Mcs { table: t, index: 3 })
        );
        assert_eq!(
            c.sample(s(3), Duration::ZERO),
            ChannelSample::Mcs(Mcs { table: t, index: 9 })
        );
    }
}
