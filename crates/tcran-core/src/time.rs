//! Virtual time. `Instant` is nanoseconds since the start of a run (or since
//! any epoch the caller picks); `Duration` is a non-negative span. Both are
//! plain `u64` so the hot path never touches floating point or a clock.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in virtual time, in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Instant(u64);

/// A span of virtual time, in nanoseconds. Configuration files write it with
/// a unit (`"5ms"`); see [`crate::units`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);

    /// The earlier of two optional deadlines, `None` meaning "never": how
    /// sans-IO state machines combine their timers into one `next_wakeup`.
    #[inline]
    pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    pub const MAX: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Instant(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Instant(ms * 1_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Instant((s * 1e9).round() as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// Time elapsed since `earlier`, zero if `earlier` is in the future.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    pub fn checked_since(self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0).map(Duration)
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Duration((s.max(0.0) * 1e9).round() as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 * 1e-3
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
    pub fn mul_f64(self, k: f64) -> Duration {
        Duration::from_nanos((self.0 as f64 * k).max(0.0).round() as u64)
    }
    /// `self / other` as a real number (0 when `other` is zero).
    pub fn ratio(self, other: Duration) -> f64 {
        if other.0 == 0 {
            0.0
        } else {
            self.0 as f64 / other.0 as f64
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl fmt::Display for Duration {
    /// Prints in the largest unit that keeps the value exact where possible
    /// (`5ms`, `125us`, `1.5s`); the output parses back with [`crate::units`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            write!(f, "0ms")
        } else if ns.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{}ns", ns)
        }
    }
}

/// The time of a component driven by a caller's clock that may hand in
/// times slightly out of order (threads that read a clock, then race for a
/// lock): it never goes backwards. A time before the latest one seen is
/// taken as the latest, and counted, so a caller can tell how often its
/// clock reads came late. The one time policy of the C ABI and Python.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallerClock {
    now: Instant,
    clamped: u64,
}

impl CallerClock {
    /// `t`, or the latest time seen if `t` is before it (counted).
    #[inline]
    pub fn at(&mut self, t: Instant) -> Instant {
        if t < self.now {
            self.clamped += 1;
        } else {
            self.now = t;
        }
        self.now
    }
    /// The latest time seen.
    pub fn now(&self) -> Instant {
        self.now
    }
    /// Times handed in before the latest one seen.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instant_arithmetic_saturates_instead_of_wrapping() {
        let t = Instant::from_millis(5);
        assert_eq!(t - Duration::from_millis(10), Instant::ZERO);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(t.saturating_since(Instant::from_millis(7)), Duration::ZERO);
        assert_eq!(
            Instant::from_millis(7).saturating_since(t),
            Duration::from_millis(2)
        );
    }

    #[test]
    fn duration_display_uses_exact_units() {
        assert_eq!(Duration::from_millis(5).to_string(), "5ms");
        assert_eq!(Duration::from_micros(125).to_string(), "125us");
        assert_eq!(Duration::from_secs(2).to_string(), "2s");
        assert_eq!(Duration::from_nanos(1500).to_string(), "1500ns");
    }

    #[test]
    fn a_caller_clock_never_goes_back_and_counts_late_times() {
        let mut c = CallerClock::default();
        assert_eq!(c.at(Instant(10)), Instant(10));
        assert_eq!(c.at(Instant(7)), Instant(10));
        assert_eq!(c.at(Instant(10)), Instant(10));
        assert_eq!(c.at(Instant(12)), Instant(12));
        assert_eq!((c.now(), c.clamped()), (Instant(12), 1));
    }
}
