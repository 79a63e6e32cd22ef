//! A limit on how long an idle CPU may take to wake up, for the E2 round
//! trip: Linux PM QoS, `/dev/cpu_dma_latency`
//! (Documentation/power/pm_qos_interface.rst).
//!
//! An E2 control crosses at least two sleeping threads (the caller's and
//! the peer's), and each wake-up of an idle core pays the exit from its
//! idle state: on the project's virtual machine (cpuidle driver
//! `haltpoll`) that made the idle-machine round trip 130-153 µs against
//! 47 µs with the limit at 0 (docs/performance.md, "xApp SDK"). RAN
//! software does the same: OpenAirInterface's softmodem writes 0 to this
//! file at start. The limit holds for the whole machine for as long as
//! the returned guard lives (the kernel drops the request when the file
//! is closed), and costs power: idle cores poll instead of sleeping.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// The PM QoS device of the CPU wake-up latency.
pub const DEVICE: &str = "/dev/cpu_dma_latency";

/// A held CPU wake-up latency request; dropping it withdraws the request.
#[derive(Debug)]
pub struct CpuLatencyGuard {
    _device: std::fs::File,
    max: Duration,
}

impl CpuLatencyGuard {
    /// The wake-up latency requested.
    pub fn max(&self) -> Duration {
        self.max
    }
}

/// The longest limit the kernel takes: an s32 of microseconds.
pub const MAX: Duration = Duration::from_micros(i32::MAX as u64);

/// Why a limit could not be held.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CpuLatencyError {
    /// Above [`MAX`].
    #[error("a CPU wake-up latency of {} us is above the allowed {} us", .0.as_micros(), MAX.as_micros())]
    TooLong(Duration),
    /// The device could not be opened or written (not root, no PM QoS).
    #[error("{0}")]
    Device(String),
}

/// Asks the kernel to keep every CPU's wake-up latency at or below `max`
/// (`Duration::ZERO`: never leave the shallowest idle state) until the
/// guard is dropped. Needs write access to [`DEVICE`] (root, usually).
pub fn hold(max: Duration) -> Result<CpuLatencyGuard, CpuLatencyError> {
    hold_at(Path::new(DEVICE), max)
}

fn hold_at(device: &Path, max: Duration) -> Result<CpuLatencyGuard, CpuLatencyError> {
    if max > MAX {
        return Err(CpuLatencyError::TooLong(max));
    }
    // The device takes a native-endian s32 of microseconds.
    let us = max.as_micros() as i32;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(device)
        .map_err(|e| CpuLatencyError::Device(format!("cannot open {}: {e}", device.display())))?;
    file.write_all(&us.to_ne_bytes()).map_err(|e| {
        CpuLatencyError::Device(format!("cannot write to {}: {e}", device.display()))
    })?;
    Ok(CpuLatencyGuard { _device: file, max })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machine's current limit: the smallest of all held requests
    /// (2000 s when none is).
    fn current() -> Duration {
        use std::io::Read;
        let mut b = [0u8; 4];
        std::fs::File::open(DEVICE)
            .and_then(|mut f| f.read_exact(&mut b))
            .unwrap();
        Duration::from_micros(u64::try_from(i32::from_ne_bytes(b)).unwrap_or(0))
    }

    #[test]
    fn too_long_a_limit_is_refused_before_the_device_is_opened() {
        let e = hold_at(Path::new("/nonexistent"), Duration::from_secs(3000)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a CPU wake-up latency of 3000000000 us is above the allowed 2147483647 us"
        );
    }

    #[test]
    fn a_missing_device_is_named() {
        let e = hold_at(Path::new("/nonexistent/cpu_dma_latency"), Duration::ZERO)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot open /nonexistent/cpu_dma_latency: "),
            "{e}"
        );
    }

    /// The request is the kernel's while the guard lives (as root, where
    /// the device is writable; `make test` runs as root).
    #[test]
    fn the_kernel_holds_the_request_while_the_guard_lives() {
        let writable = std::fs::OpenOptions::new().write(true).open(DEVICE).is_ok();
        if !writable {
            eprintln!("skipped: {DEVICE} is not writable here");
            return;
        }
        let g = hold(Duration::from_micros(7)).unwrap();
        assert_eq!(g.max(), Duration::from_micros(7));
        // Other holders may ask for less, never the kernel for more.
        assert!(current() <= Duration::from_micros(7));
    }
}
