//! The wall clock the emulation runs on: CLOCK_MONOTONIC, read as the
//! node's `Instant` (nanoseconds since the emulation started), and a
//! timerfd armed at absolute deadlines of that clock, with the thread's
//! timer slack cut to 1 ns so a wake-up is not deferred by the kernel's
//! default 50 us slack.

use crate::error::EmuError;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::ClockId as TimeClock;
use tcran_core::{Duration, Instant};

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
        tcran_e2::transport::unix_offset_us(self.now())
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

/// The real-time priority the relay thread asks for: above every normal
/// process (iperf3, the kernel's softirq threads run at normal priority)
/// and below the kernel's own real-time threads (priority 99).
pub const RELAY_PRIORITY: i32 = 50;

/// Moves the calling thread to `SCHED_FIFO` at [`RELAY_PRIORITY`], so a
/// busy program in a namespace (iperf3 at full rate) cannot delay its
/// wake-ups by a scheduler time slice. `SCHED_RESET_ON_FORK` keeps
/// children at normal priority. Returns what the thread runs with, for the
/// report: the policy, or why it could not be set (e.g. no CAP_SYS_NICE,
/// or a cgroup without a real-time budget).
#[allow(unsafe_code)] // libc::sched_setscheduler has no safe wrapper in nix
pub fn realtime_scheduling() -> String {
    let param = libc::sched_param {
        sched_priority: RELAY_PRIORITY,
    };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param
    // that outlives the call.
    let rc = unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    };
    if rc == 0 {
        format!("SCHED_FIFO {RELAY_PRIORITY}")
    } else {
        format!(
            "SCHED_OTHER (SCHED_FIFO refused: {})",
            std::io::Error::last_os_error()
        )
    }
}

/// The time the hypervisor did not run this virtual machine's CPUs
/// ("steal", the eighth value of `/proc/stat`'s `cpu` line, in USER_HZ
/// ticks of 10 ms: proc(5)), averaged over its CPUs, since boot; `None`
/// where the kernel does not say.
pub fn host_steal() -> Option<Duration> {
    parse_steal(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// [`host_steal`] from the text of `/proc/stat`.
fn parse_steal(stat: &str) -> Option<Duration> {
    let mut lines = stat.lines();
    let all = lines.next()?.strip_prefix("cpu ")?;
    let ticks: u64 = all.split_whitespace().nth(7)?.parse().ok()?;
    let cpus = lines.take_while(|l| l.starts_with("cpu")).count().max(1) as u64;
    // USER_HZ is 100 on every Linux architecture's ABI.
    Some(Duration::from_millis(ticks * 10 / cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two CPUs, 3088 ticks stolen in all: 15.44 s each.
    #[test]
    fn steal_is_the_eighth_value_per_cpu() {
        let stat = "cpu  1792403 1999670 499933 466419 7173 0 5611 3088 0 0\n\
                    cpu0 896201 999835 249966 233209 3586 0 2805 1544 0 0\n\
                    cpu1 896202 999835 249967 233210 3587 0 2806 1544 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(parse_steal(stat), Some(Duration::from_millis(15_440)));
        assert_eq!(parse_steal("cpu  1 2 3 4\n"), None);
        assert_eq!(parse_steal(""), None);
    }
}
