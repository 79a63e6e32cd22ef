//! The MAC scheduling period (`cell.scheduling_period`): the thesis
//! emulator's MAC pulls every 10 ms (Irazabal thesis sec. 3.6.1). Same
//! capacity as scheduling every slot, half a period more waiting for a
//! packet that finds the buffer empty, the period on the air.

use crate::common;

use common::run_output as run;
use std::path::Path;
use tcran_sim::{Sim, SimConfig};

fn build_err(toml_text: &str) -> String {
    let cfg: SimConfig = toml::from_str(toml_text).expect("scenario parses");
    Sim::new(&cfg, Path::new("."))
        .expect_err("must be refused")
        .to_string()
}

/// 25 PRB, MCS 28: 2304 B per 1-ms slot (tests/integration/series.rs works the TBS
/// out by hand). A 25 Mbit/s CBR of 1000-byte packets overloads the
/// 18.4 Mbit/s link, so the MAC always has data.
const SATURATED: &str = r#"
    duration = "12s"
    warmup = "2s"
    [cell]
    bandwidth_mhz = 5
    PERIOD
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "um", buffer_limit = "200kB" }
    [[flows]]
    name = "cbr"
    ue = 1
    start_jitter = "0s"
    kind = "cbr"
    rate = "25Mbit/s"
    size = "1000B"
"#;

/// With a 10-ms period the MAC builds one 23040-byte TB (10 x 2304) per
/// period instead of ten 2304-byte ones: the same capacity. What differs
/// is the RLC/MAC header overhead, and the edge of the measurement window.
///
/// Overhead: a TB carries at most ceil(TBS / 1000) + 1 RLC PDUs (complete
/// SDUs plus a segment at each end), each with at most 4 B of UM header
/// (segment with SO, 12-bit SN) and 3 B of MAC subheader, and at most 6 B
/// of padding (less than a 4-byte header, a 2-byte subheader and one data
/// byte): per 10 ms at most 10 x ((3 + 1) x 7 + 6) = 340 B with 1-ms TBs,
/// and at least 0 with either; so the goodputs differ by at most
/// 340 B / 23040 B = 1.48 % of the capacity.
/// Window: deliveries in [2 s, 12 s] count, i.e. TBs sent in
/// [2 s - step, 12 s - step]: 10001 one-slot TBs against 1001 ten-slot
/// ones, 9 slots (9 x 2304 B) more for the period, +0.09 %.
/// Margin: 1.48 % + 0.09 % of the capacity. (Measured: 18.301 against
/// 18.371 Mbit/s, 0.38 %: the longer TBs need fewer headers.)
#[test]
fn a_10ms_period_carries_what_per_slot_scheduling_carries() {
    let slot = run(&SATURATED.replace("PERIOD", "")).summary;
    let period = run(&SATURATED.replace("PERIOD", "scheduling_period = \"10ms\"")).summary;
    let capacity_mbps = 2304.0 * 8.0 * 1000.0 / 1e6;
    let (a, b) = (
        slot.flows[0].throughput_mbps,
        period.flows[0].throughput_mbps,
    );
    let margin = (340.0 / 23040.0 + 9.0 / 10001.0) * capacity_mbps;
    assert!((a - b).abs() <= margin, "{a} vs {b} (margin {margin})");
    // Both fill the link: headers are all that is missing.
    for x in [a, b] {
        assert!(
            x <= capacity_mbps * 1.001 && x > capacity_mbps * 0.985,
            "{x}"
        );
    }
    assert_eq!(slot.prb_utilization, 1.0);
    assert_eq!(period.prb_utilization, 1.0);
}

/// Thesis sec. 3.6.1: "the MAC scheduler pulls packets every 10 ms and,
/// therefore, the optimal theoretical average time for an empty queue is
/// 5 ms". Pings every 37.3 ms from 50 us reach the gNB 50 us + 7.3 k ms
/// (mod 10 ms) into a period: over each 100 pings the phases are 0.05,
/// 0.15, ..., 9.95 ms, each once, so the wait for the next period start
/// averages exactly 5 ms, and the wait for the next 1-ms slot exactly
/// 0.5 ms. 1000 pings (sent up to 37.263 s) are 10 whole cycles; the run
/// ends at 37.31 s, after the last reply (at most 37.263 + 10 + 10 + 10 +
/// 4 + 10 ms) and before the 1001st request (sent at 37.300 s) is
/// delivered. On the air a packet then spends the period (10 ms) instead
/// of one slot (1 ms).
#[test]
fn a_lone_packet_waits_half_a_period_more_and_spends_the_period_on_the_air() {
    let scenario = r#"
        duration = "37310ms"
        [cell]
        bandwidth_mhz = 5
        PERIOD
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        [[flows]]
        name = "ping"
        ue = 1
        start_jitter = "0s"
        kind = "ping"
        interval = "37300us"
        start = "50us"
    "#;
    let slot = run(&scenario.replace("PERIOD", "")).summary;
    let period = run(&scenario.replace("PERIOD", "scheduling_period = \"10ms\"")).summary;
    let (s, p) = (&slot.flows[0], &period.flows[0]);
    assert_eq!((s.delay_ms.count, p.delay_ms.count), (1000, 1000));
    let (rs, rp) = (s.rtt_ms.unwrap(), p.rtt_ms.unwrap());
    assert_eq!((rs.count, rp.count), (1000, 1000));
    let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
    assert!(close(s.layers_ms.rlc.mean, 0.5), "{:?}", s.layers_ms.rlc);
    assert!(close(p.layers_ms.rlc.mean, 5.0), "{:?}", p.layers_ms.rlc);
    assert!(p.layers_ms.rlc.max < 10.0 && p.layers_ms.rlc.p50 > 4.0);
    assert_eq!((s.layers_ms.air.min_max()), (1.0, 1.0));
    assert_eq!((p.layers_ms.air.min_max()), (10.0, 10.0));
    // Round trip: 4.5 ms more waiting and 9 ms more on the air.
    assert!(close(rp.mean - rs.mean, 4.5 + 9.0), "{rs:?} -> {rp:?}");
}

trait MinMax {
    fn min_max(&self) -> (f64, f64);
}
impl MinMax for tcran_sim::metrics::DelaySummary {
    /// p50 and max: equal when every sample is the same.
    fn min_max(&self) -> (f64, f64) {
        (self.p50, self.max)
    }
}

/// A TDD period: DDDSU at 30 kHz (0.5-ms slots), 10 ms = 20 slots = 12 D,
/// 4 S, 4 U. The period's capacity is the sum of its slots' capacities
/// (S slots with their fewer symbols), and its PRB count the PRB·slots of
/// its DL slots.
#[test]
fn a_tdd_period_offers_the_sum_of_its_slots() {
    let scenario = r#"
        duration = "1s"
        series_bin = "10ms"
        [cell]
        numerology = 1
        bandwidth_mhz = 20
        slot_pattern = "DDDSU"
        PERIOD
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 16 }
        [[flows]]
        name = "cbr"
        ue = 1
        start_jitter = "0s"
        kind = "cbr"
        rate = "200Mbit/s"
        size = "1500B"
    "#;
    let slot = run(&scenario.replace("PERIOD", "")).series.slots;
    let period = run(&scenario.replace("PERIOD", "scheduling_period = \"10ms\""))
        .series
        .slots;
    assert_eq!((slot.t_s.len(), period.t_s.len()), (2000, 100));
    for (k, t) in period.t_s.iter().enumerate() {
        assert!((t - k as f64 * 0.01).abs() < 1e-12);
        let of_slots = |v: &[u64]| v[20 * k..20 * (k + 1)].iter().sum::<u64>();
        let cap: Vec<u64> = slot.capacity_bytes.clone();
        assert_eq!(period.capacity_bytes[k], of_slots(&cap), "period {k}");
        let avail: Vec<u64> = slot.prbs_available.iter().map(|&p| u64::from(p)).collect();
        assert_eq!(u64::from(period.prbs_available[k]), of_slots(&avail));
        assert_eq!(period.prbs_available[k], 16 * 51, "16 DL slots of 51 PRB");
    }
}

/// The thesis traces give packets per 10-ms emulator TTI, one sample per
/// second; a 10-ms period hands the MAC exactly those amounts: second k
/// offers samples[k] x 1460 bytes every period.
#[test]
fn a_10ms_period_sees_the_thesis_trace_per_tti() {
    let out = run(r#"
        duration = "3s"
        [cell]
        bandwidth_mhz = 20
        scheduling_period = "10ms"
        [[ues]]
        rnti = 1
        channel = { kind = "trace", path = "builtin:thesis-pedestrian", start = "0s" }
        [[flows]]
        name = "cbr"
        ue = 1
        start_jitter = "0s"
        kind = "cbr"
        rate = "100Mbit/s"
        size = "1460B"
    "#);
    let text = tcran_sim::scenario::builtin_trace("builtin:thesis-pedestrian")
        .unwrap()
        .1;
    let samples: Vec<u64> = text
        .lines()
        .skip(1)
        .take(3)
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let cap = &out.series.slots.capacity_bytes;
    assert_eq!(cap.len(), 300);
    for (k, c) in cap.iter().enumerate() {
        assert_eq!(*c, samples[k / 100] * 1460, "period {k}");
    }
}

#[test]
fn invalid_periods_are_refused_naming_the_field() {
    let base = SATURATED.replace("PERIOD", "scheduling_period = \"X\"");
    for (bad, numerology) in [("2500us", 0), ("0ms", 0), ("200ms", 0), ("750us", 1)] {
        let text = base.replace("\"X\"", &format!("\"{bad}\"")).replace(
            "bandwidth_mhz = 5",
            &format!("bandwidth_mhz = 5\n    numerology = {numerology}"),
        );
        let e = build_err(&text);
        assert!(
            e.starts_with(&format!(
                "cell.scheduling_period = {bad}: must be a whole number of slots"
            )),
            "{e}"
        );
    }
    let e = build_err(&base.replace("\"X\"", "\"2500us\""));
    assert_eq!(
        e,
        "cell.scheduling_period = 2500us: must be a whole number of slots (1ms each at numerology 0) from 1ms to 100ms"
    );
    // A whole number of 0.5-ms slots is fine at 30 kHz.
    let ok: SimConfig = toml::from_str(
        &base
            .replace("\"X\"", "\"1500us\"")
            .replace("bandwidth_mhz = 5", "bandwidth_mhz = 5\n    numerology = 1"),
    )
    .unwrap();
    assert!(Sim::new(&ok, Path::new(".")).is_ok());
}
