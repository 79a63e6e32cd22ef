//! The wall clock the emulation runs on: CLOCK_MONOTONIC, read as the
//! node's `Instant` (nanoseconds since the emulation started), and a
//! timerfd armed at absolute deadlines of that clock, with the thread's
//! timer slack cut to 1 ns so a wake-up is not deferred by the kernel's
//! default 50 us slack.

use crate::error::EmuError;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::ClockId as TimeClock;
use tcran_core::Instant;

/// CLOCK_MONOTONIC since `start`.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start_ns: u64,
}

fn monotonic_ns() -> u64 {
    let t = nix::time::clock_gettime(TimeClock::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always readable");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

impl Clock {
    /// A clock whose time 0 is now.
    pub fn start() -> Clock {
        Clock {
            start_ns: monotonic_ns(),
        }
    }

    pub fn now(&self) -> Instant {
        Instant::from_nanos(monotonic_ns().saturating_sub(self.start_ns))
    }

    /// Microseconds to add to [`Clock::now`] to get microseconds since the
    /// Unix epoch (the E2 agent's FlexRIC timestamps).
    pub fn unix_offset_us(&self) -> i64 {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        since_epoch.as_micros() as i64 - (self.now().as_nanos() / 1000) as i64
    }

    /// The absolute CLOCK_MONOTONIC time of `t`.
    fn absolute(&self, t: Instant) -> TimeSpec {
        let ns = self.start_ns + t.as_nanos();
        TimeSpec::new((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64)
    }
}

/// A one-shot timer at absolute deadlines of a [`Clock`].
#[derive(Debug)]
pub struct Timer {
    fd: TimerFd,
}

impl Timer {
    pub fn new() -> Result<Timer, EmuError> {
        // A thread's timer slack delays its timer wake-ups by up to 50 us
        // by default; the relay runs slots of 0.5 ms.
        let _ = nix::sys::prctl::set_timerslack(1);
        let fd = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK)
            .map_err(|e| EmuError::io("timerfd", e.into()))?;
        Ok(Timer { fd })
    }

    /// Fires at `t` (at once if `t` is past).
    pub fn arm(&self, clock: &Clock, t: Instant) -> Result<(), EmuError> {
        self.fd
            .set(
                Expiration::OneShot(clock.absolute(t)),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            )
            .map_err(|e| EmuError::io("timerfd", e.into()))
    }

    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::{AsFd, AsRawFd};
        self.fd.as_fd().as_raw_fd()
    }
}
