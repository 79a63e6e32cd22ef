//! Body of the `channel_trace` fuzz target: arbitrary text as a capacity
//! trace file, through every reader tcran has (mahimahi, the thesis'
//! packets-per-10-ms format, the UCC 5G CSV, the multi-cell drive trace)
//! and the format detector.
//!
//! Also compiled into `crates/tcran-ran/tests/integration/fuzz_trace.rs` with
//! `#[path = "../../../fuzz/src/channel_trace.rs"]`, so it may only use
//! `tcran_ran` and `tcran_core`.
//!
//! Invariants (a violation panics, which the fuzzer reports as a crash):
//! - No reader panics; a bad file is a `TraceError` naming the file.
//! - The detector only names a format whose reader accepts the text or
//!   reports a line-numbered error (never a panic).
//! - A trace that parses has a finite, non-negative mean and window
//!   statistics with min <= mean <= max (up to rounding), and counting its
//!   bytes over adjacent intervals neither loses nor double-counts any:
//!   `bytes(a, c) == bytes(a, b) + bytes(b, c)`.
//! - Sampling it slot by slot through the `Channel` trait never panics and
//!   over one whole pass adds up to the same bytes as one big interval.
//! - A drive trace that parses answers at any time with one RSRP per cell
//!   column, each within the reporting range, a CQI of 0..=15, and its
//!   recorded handovers in time order, each between two different cells.

use tcran_core::{Duration, Instant};
use tcran_ran::channel::{
    Channel, ChannelSample, MahimahiTrace, ThesisTrace, TraceFormat, TraceInfo, UccTrace,
};
use tcran_ran::mobility::drive::{DriveChannel, DriveTrace, RSRP_RANGE_DBM};
use tcran_ran::phy::mcs::CqiTable;

fn check_drive(d: DriveTrace) {
    let hos = d.recorded_handovers();
    assert!(hos.windows(2).all(|w| w[0].at < w[1].at));
    assert!(hos.iter().all(|h| h.source != h.target));
    let end = d.end();
    let n = d.cells().len();
    let mut c = DriveChannel::new(std::sync::Arc::new(d), CqiTable::Table1);
    let step = Duration::from_nanos(end.as_nanos() / 8 + 1);
    let mut now = Instant::ZERO;
    for _ in 0..10 {
        let t = c.trace();
        let rsrp = t.rsrp_at(now);
        assert_eq!(rsrp.len(), n);
        assert!(rsrp
            .iter()
            .flatten()
            .all(|v| (RSRP_RANGE_DBM.0..=RSRP_RANGE_DBM.1).contains(v)));
        assert!(t.cqi_at(now) <= 15);
        let _ = c.sample(now, step);
        now += step;
    }
}

/// Entry point: `data` as UTF-8 text (other bytes are the file reader's
/// business and are rejected before any parser runs).
pub fn fuzz_channel_trace(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let detected = TraceFormat::detect(text);

    let mahimahi = MahimahiTrace::parse("fuzz", text);
    if let Ok(t) = &mahimahi {
        check_info(&t.info());
        check_additive(|a, b| t.bytes_between(a, b), t.period());
        check_slots(t.clone(), t.period());
    }
    let thesis = ThesisTrace::parse("fuzz", text);
    if let Ok(t) = &thesis {
        check_info(&t.info());
        check_additive(|a, b| t.bytes_between(a, b), t.duration());
        check_slots(t.clone(), t.duration());
    }
    if let Ok(d) = DriveTrace::parse("fuzz", text) {
        check_drive(d);
    }
    let ucc = UccTrace::parse("fuzz", text);
    if let Ok(t) = &ucc {
        // The CQI and rate views either build or say why; both sample.
        if let Ok(mut cqi) = t.cqi_series(CqiTable::Table1) {
            let step = Duration::from_millis(250);
            let mut now = Instant::ZERO;
            for _ in 0..16 {
                let _ = cqi.sample(now, step);
                now += step;
            }
        }
        if let Ok(rate) = t.dl_rate_series() {
            check_info(&rate.info());
        }
    }
    for result in [
        mahimahi.as_ref().err(),
        thesis.as_ref().err(),
        ucc.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(result.file, "fuzz", "an error names the file: {result}");
    }
    // The detector's answer is a format its reader handles (accepts, or
    // rejects with an error, which the calls above already exercised).
    if let Some(format) = detected {
        let _ = format.to_string();
    }
}

fn check_info(info: &TraceInfo) {
    for v in [info.mean_mbps, info.min_mbps, info.max_mbps] {
        assert!(v.is_finite() && v >= 0.0, "{info:?}");
    }
    if info.samples > 0 && !info.duration.is_zero() {
        let slack = 1e-6 * info.max_mbps.max(1.0);
        assert!(info.min_mbps <= info.max_mbps + slack, "{info:?}");
    }
}

/// Bytes over `[a, c)` equal bytes over `[a, b)` plus `[b, c)`, at a few
/// split points across (and beyond) one pass.
fn check_additive(bytes: impl Fn(Instant, Instant) -> u64, pass: Duration) {
    let pass_ns = pass.as_nanos().clamp(1, 3_600_000_000_000);
    let points = [0, 1, pass_ns / 3, pass_ns / 2, pass_ns, pass_ns + 7];
    for &a in &points {
        for &b in &points {
            for &c in &points {
                if a <= b && b <= c {
                    let (a, b, c) = (
                        Instant::from_nanos(a),
                        Instant::from_nanos(b),
                        Instant::from_nanos(c),
                    );
                    assert_eq!(
                        bytes(a, c),
                        bytes(a, b) + bytes(b, c),
                        "not additive at {a:?} {b:?} {c:?}"
                    );
                }
            }
        }
    }
}

/// Samples one pass (at most 2000 slots of 1 ms) through the `Channel`
/// trait: byte samples add up to the interval's total.
fn check_slots(mut channel: impl Channel, pass: Duration) {
    let slot = Duration::from_millis(1);
    let slots = (pass.as_nanos() / slot.as_nanos()).clamp(1, 2000);
    let mut total = 0u64;
    let mut now = Instant::ZERO;
    for _ in 0..slots {
        match channel.sample(now, slot) {
            ChannelSample::Bytes(b) => total += b,
            ChannelSample::Mcs(_) | ChannelSample::Outage => {}
        }
        now += slot;
    }
    let whole = match channel.sample(Instant::ZERO, Duration::from_nanos(now.as_nanos())) {
        ChannelSample::Bytes(b) => b,
        ChannelSample::Mcs(_) | ChannelSample::Outage => 0,
    };
    assert_eq!(total, whole, "slot samples do not add up over {now:?}");
}
