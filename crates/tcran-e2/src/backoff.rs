//! When an E2 node asks its RIC again, sans-IO: the one rule for E2
//! Setup retries on an association and for new connections.
//!
//! E2AP v03.00 clause 8.3.1: after an E2 SETUP FAILURE with the Time To
//! Wait IE, the node "shall wait at least for the indicated time before
//! reinitiating the E2 Setup procedure towards the same Near-RT RIC"
//! (TimeToWait, 9.2.24: v1s, v2s, v5s, v10s, v20s, v60s). Beyond that the
//! node backs off exponentially, so that a RIC that accepts connections
//! and refuses (or drops) every node is not asked ten times a second.
//!
//! Contract of [`Backoff`]:
//! - Every failure (a connection refused, a TLS handshake that fails, an
//!   association lost, an E2 Setup Failure) calls [`Backoff::failed`],
//!   which returns when to try next. A successful TCP connection is not a
//!   success: the state survives it, and only [`Backoff::succeeded`] (E2
//!   Setup done) resets it.
//! - The un-jittered delay (the *level*) is `initial` after the first
//!   failure and doubles with each further failure up to `max`; a Time To
//!   Wait raises it to at least that long, and it never decreases until
//!   a success (a RIC that asked for 60 s is not asked again sooner just
//!   because it dropped the next connection).
//! - The delay is the level times a jitter factor in `[1, 1 + jitter)`,
//!   drawn from the seeded stream once per run of failures: nodes that
//!   lost their RIC together (a RIC restart) spread out instead of
//!   reconnecting in lockstep, while each node's delays stay monotone and
//!   never below the Time To Wait. So every delay `d` satisfies
//!   `max(level, ttw) <= d < max(max, ttw) * (1 + jitter)`.
//! - Time is a parameter ([`Instant`]): the drivers pass their clock, the
//!   tests a logical one.

use tcran_core::rng::RngStream;
use tcran_core::{Duration, Instant};

/// The Time To Wait IE (E2AP 9.2.24) by its index: v1s, v2s, v5s, v10s,
/// v20s, v60s. A value beyond (a later version's extension) is read as
/// the longest known, 60 s: waiting longer than asked is allowed,
/// shorter is not.
pub fn time_to_wait(index: u8) -> Duration {
    Duration::from_secs(match index {
        0 => 1,
        1 => 2,
        2 => 5,
        3 => 10,
        4 => 20,
        _ => 60,
    })
}

/// How a node backs off (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffConfig {
    /// The delay after the first failure.
    pub initial: Duration,
    /// The largest level reached by doubling (a Time To Wait may exceed it).
    pub max: Duration,
    /// The jitter factor's spread: delays are `level * [1, 1 + jitter)`.
    pub jitter: f64,
    /// Seeds the jitter (with the node's id, so that nodes of one seed
    /// still differ).
    pub seed: u64,
}

impl Default for BackoffConfig {
    /// 100 ms doubling to 30 s, jitter up to +50 %, seed 0.
    fn default() -> BackoffConfig {
        BackoffConfig {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(30),
            jitter: 0.5,
            seed: 0,
        }
    }
}

/// The backoff state of one node (see the module docs).
#[derive(Debug, Clone)]
pub struct Backoff {
    config: BackoffConfig,
    rng: RngStream,
    /// The un-jittered delay of the last failure; `None` after a success.
    level: Option<Duration>,
    /// This run of failures' jitter factor, in `[1, 1 + jitter)`.
    factor: f64,
    /// Failures since the last success.
    failures: u32,
    retry_at: Option<Instant>,
}

impl Backoff {
    /// `label` names the node's stream (e.g. its GlobalE2node-ID).
    pub fn new(config: BackoffConfig, label: &str) -> Backoff {
        let mut b = Backoff {
            config,
            rng: RngStream::new(config.seed, &format!("e2/backoff/{label}")),
            level: None,
            factor: 1.0,
            failures: 0,
            retry_at: None,
        };
        b.succeeded();
        b
    }

    /// A failure at `now`, with the RIC's Time To Wait if it gave one:
    /// when to try again.
    pub fn failed(&mut self, now: Instant, time_to_wait: Option<Duration>) -> Instant {
        let doubled = match self.level {
            None => self.config.initial,
            Some(l) => (l + l).min(self.config.max),
        };
        let level = doubled
            .max(self.level.unwrap_or(Duration::ZERO))
            .max(time_to_wait.unwrap_or(Duration::ZERO));
        self.level = Some(level);
        self.failures = self.failures.saturating_add(1);
        // `max(level)`: rounding never takes a delay below the level.
        let at = now + level.mul_f64(self.factor).max(level);
        self.retry_at = Some(at);
        at
    }

    /// E2 Setup done: the next failure starts from `initial` again, with
    /// a new jitter factor.
    pub fn succeeded(&mut self) {
        self.level = None;
        self.failures = 0;
        self.retry_at = None;
        self.factor = 1.0 + self.config.jitter.clamp(0.0, 1.0) * self.rng.uniform();
    }

    /// When the last failure said to try again (`None`: no failure since
    /// the last success, try now).
    pub fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// Failures since the last success.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn time_to_wait_values_are_e2ap_9_2_24() {
        let secs: Vec<u64> = (0..=6)
            .map(|i| time_to_wait(i).as_nanos() / 1_000_000_000)
            .collect();
        assert_eq!(secs, [1, 2, 5, 10, 20, 60, 60]);
    }

    #[test]
    fn without_jitter_delays_double_to_the_cap() {
        let cfg = BackoffConfig {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(1000),
            jitter: 0.0,
            seed: 1,
        };
        let mut b = Backoff::new(cfg, "n");
        let delays: Vec<u64> = (0..6)
            .map(|_| b.failed(at(0), None).as_nanos() / 1_000_000)
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn a_setup_failure_of_60_s_then_a_drop_waits_60_s_again() {
        // The RIC: Setup Failure with TimeToWait v60s, then it
        // closes; the next connection must not come 0.3 s later.
        let mut b = Backoff::new(BackoffConfig::default(), "n");
        let first = b.failed(at(0), Some(time_to_wait(5)));
        assert!(first >= at(60_000));
        let after_drop = b.failed(at(10), None);
        assert!(after_drop >= at(10 + 60_000));
        b.succeeded();
        assert_eq!(b.retry_at(), None);
        assert!(b.failed(at(0), None) < at(150));
    }

    #[test]
    fn the_same_seed_and_label_give_the_same_delays() {
        let run = |seed, label| {
            let mut b = Backoff::new(
                BackoffConfig {
                    seed,
                    ..BackoffConfig::default()
                },
                label,
            );
            (0..5).map(|_| b.failed(at(0), None)).collect::<Vec<_>>()
        };
        assert_eq!(run(7, "gnb:1"), run(7, "gnb:1"));
        assert_ne!(run(7, "gnb:1"), run(7, "gnb:2"));
    }

    #[derive(Debug, Clone)]
    enum Step {
        Fail(Option<u8>),
        Success,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => proptest::option::of(0u8..8).prop_map(Step::Fail),
            1 => Just(Step::Success),
        ]
    }

    proptest! {
        #[test]
        fn delays_honour_ttw_grow_monotonically_and_stay_bounded(
            initial_ms in 1u64..2_000,
            max_ms in 1u64..120_000,
            jitter in 0.0f64..=1.0,
            seed: u64,
            steps in proptest::collection::vec(step(), 1..60),
            gaps in proptest::collection::vec(0u64..100_000, 60),
        ) {
            let cfg = BackoffConfig {
                initial: Duration::from_millis(initial_ms),
                max: Duration::from_millis(max_ms),
                jitter,
                seed,
            };
            let mut b = Backoff::new(cfg, "prop");
            let mut now = Instant::from_nanos(0);
            let mut last: Option<Duration> = None;
            let mut level_floor = Duration::ZERO;
            for (s, gap) in steps.iter().zip(&gaps) {
                now += Duration::from_millis(*gap);
                match s {
                    Step::Success => {
                        b.succeeded();
                        last = None;
                        level_floor = Duration::ZERO;
                        prop_assert_eq!(b.retry_at(), None);
                    }
                    Step::Fail(ttw) => {
                        let ttw = ttw.map(time_to_wait);
                        let d = b.failed(now, ttw).saturating_since(now);
                        // Never below the Time To Wait (8.3.1), nor below
                        // the first delay.
                        prop_assert!(d >= ttw.unwrap_or(Duration::ZERO));
                        prop_assert!(d >= cfg.initial.min(cfg.max).max(Duration::ZERO));
                        // Monotone until a success.
                        if let Some(l) = last {
                            prop_assert!(d >= l, "{d:?} after {l:?}");
                        }
                        // Capped: the cap (or the largest Time To Wait
                        // seen), jitter included.
                        level_floor = level_floor.max(ttw.unwrap_or(Duration::ZERO));
                        let cap = cfg.max.max(cfg.initial).max(level_floor);
                        prop_assert!(d.as_nanos() as f64 <= cap.as_nanos() as f64 * (1.0 + jitter) + 1.0);
                        last = Some(d);
                    }
                }
            }
        }

        #[test]
        fn jitter_stays_within_its_factor(seed: u64, jitter in 0.0f64..=1.0, n in 1usize..20) {
            let cfg = BackoffConfig { jitter, seed, ..BackoffConfig::default() };
            let mut bare = Backoff::new(BackoffConfig { jitter: 0.0, ..cfg }, "j");
            let mut b = Backoff::new(cfg, "j");
            for _ in 0..n {
                let level = bare.failed(Instant::from_nanos(0), None).as_nanos() as f64;
                let d = b.failed(Instant::from_nanos(0), None).as_nanos() as f64;
                prop_assert!(d >= level && d <= level * (1.0 + jitter) + 1.0, "{d} for {level}");
            }
        }
    }
}
