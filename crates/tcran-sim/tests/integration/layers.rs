//! The per-layer delay breakdown (`layers_ms`: core, UPF queue, TC, RLC,
//! air): the layers add up to the one-way delay, and each delay shows up in
//! the layer that causes it.

use crate::common;

use common::run_output as run;

/// Every layer at work: a UPF queue with USP, a TC pipeline with 5G-BDP, RLC
/// AM and UM, HARQ errors (so HARQ and ARQ retransmissions), TCP, VoIP,
/// ping and gaming on two UEs.
const BUSY: &str = r#"
    duration = "12s"
    warmup = "2s"
    seed = 3
    [cell]
    bandwidth_mhz = 5
    bler = 0.1
    max_harq_tx = 2
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 20 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "am", max_retx_threshold = 4 }
    [ues.drbs.pipeline]
    pacer = { kind = "bdp" }
    [[ues.drbs.pipeline.queues]]
    id = 0
    kind = "fifo"
    [ues.upf.pipeline]
    pacer = { kind = "usp" }
    [[ues.upf.pipeline.queues]]
    id = 0
    kind = "fifo"
    limit_packets = 100000
    [[ues]]
    rnti = 2
    channel = { kind = "mcs", mcs = 12 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "um", buffer_limit = "300kB" }
    [[flows]]
    name = "bulk1"
    ue = 1
    start_jitter = "0s"
    kind = "tcp"
    [[flows]]
    name = "voip1"
    ue = 1
    start_jitter = "0s"
    kind = "voip"
    [[flows]]
    name = "bulk2"
    ue = 2
    kind = "tcp"
    tcp = { cc = "bbr" }
    [[flows]]
    name = "ping2"
    ue = 2
    kind = "ping"
    interval = "37ms"
    [[flows]]
    name = "game2"
    ue = 2
    kind = "gaming"
    mean = "30ms"
"#;

/// Per packet the layers are the gaps between consecutive stamps, so they
/// add up to the one-way delay in integer nanoseconds; the means, over the
/// same packets, add up to the mean delay up to float rounding.
#[test]
fn layer_means_add_up_to_the_mean_one_way_delay() {
    let out = run(BUSY);
    let s = &out.summary;
    assert!(
        s.drops.contains_key("air") || s.drops.contains_key("rlc"),
        "{:?}",
        s.drops
    );
    for f in &s.flows {
        let l = &f.layers_ms;
        for x in [l.core, l.upf, l.tc, l.rlc, l.air] {
            assert_eq!(
                x.count, f.delay_ms.count,
                "{}: every packet has every layer",
                f.name
            );
        }
        let sum = l.core.mean + l.upf.mean + l.tc.mean + l.rlc.mean + l.air.mean;
        assert!(
            (sum - f.delay_ms.mean).abs() <= 1e-9 * f.delay_ms.mean,
            "{}: layers {sum} vs delay {}",
            f.name,
            f.delay_ms.mean
        );
        // Nothing crosses the core faster or slower than the core delay.
        assert_eq!((l.core.p50, l.core.max), (10.0, 10.0), "{}", f.name);
        // Each layer's distribution is ordered and bounded by the total.
        for x in [l.upf, l.tc, l.rlc, l.air] {
            assert!(x.p50 <= x.p95 && x.p95 <= x.p99 && x.p99 <= x.max);
            assert!(x.max <= f.delay_ms.max + 1e-9, "{}: {x:?}", f.name);
        }
    }
    let bulk1 = &s.flows[0].layers_ms;
    assert!(bulk1.upf.mean > 0.0, "UE 1 has a UPF queue: {bulk1:?}");
    assert_eq!(s.flows[2].layers_ms.upf.max, 0.0, "UE 2 has none");
    // The series carry each layer's CDF for the report.
    for (f, series) in s.flows.iter().zip(&out.series.flows) {
        for (layer, cdf) in series.layer_delay_cdf.iter() {
            let last = cdf
                .last()
                .unwrap_or_else(|| panic!("{} {layer}: empty", f.name));
            assert_eq!(last.1, 1.0, "{} {layer}", f.name);
            assert!(cdf.len() <= 200, "{} {layer}", f.name);
            assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        }
        assert_eq!(series.layer_delay_cdf.core.last().unwrap().0, 10.0);
        assert_eq!(
            series.layer_delay_cdf.air.last().unwrap().0,
            f.layers_ms.air.max
        );
    }
}

/// An unloaded cell with a fixed MCS: a small packet meets empty queues,
/// waits in RLC only for the next slot boundary, and spends exactly one
/// slot on the air (1 ms at 15 kHz, 0.5 ms at 30 kHz).
#[test]
fn on_an_idle_cell_a_small_packet_spends_one_slot_on_the_air() {
    for (numerology, slot_ms) in [(0, 1.0), (1, 0.5)] {
        let out = run(&format!(
            r#"
            duration = "5s"
            warmup = "1s"
            [cell]
            numerology = {numerology}
            bandwidth_mhz = 10
            [[ues]]
            rnti = 1
            channel = {{ kind = "mcs", mcs = 20 }}
            [[flows]]
            name = "ping"
            ue = 1
            start_jitter = "0s"
            kind = "ping"
            interval = "37ms"
            [[flows]]
            name = "voip"
            ue = 1
            start_jitter = "0s"
            kind = "voip"
            start = "3ms"
            "#
        ));
        for f in &out.summary.flows {
            let l = &f.layers_ms;
            assert_eq!(
                (l.air.p50, l.air.max),
                (slot_ms, slot_ms),
                "{}: {l:?}",
                f.name
            );
            assert!(
                l.rlc.max < slot_ms,
                "{}: at most to the next slot: {l:?}",
                f.name
            );
            assert_eq!((l.tc.max, l.upf.max), (0.0, 0.0), "{}: {l:?}", f.name);
        }
    }
}

const IDLE_AM: &str = r#"
    duration = "20s"
    warmup = "1s"
    seed = 11
    [cell]
    bandwidth_mhz = 5
    bler = BLER
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 20 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "am" }
    [[flows]]
    name = "ping"
    ue = 1
    start_jitter = "0s"
    kind = "ping"
    interval = "37ms"
"#;

/// HARQ retransmissions are air time: with a 30 % block error rate the
/// packets wait in RLC exactly as long as without errors (they arrive at
/// the same times into an empty buffer), and only `air` grows, by about
/// `harq_rtt` (8 slots) times the expected retransmissions (0.3 + 0.09 +
/// 0.027 with 4 transmissions), about 3.3 ms, plus the rare RLC ARQ
/// recovery of a TB HARQ gave up on.
#[test]
fn harq_retransmissions_raise_air_not_rlc() {
    let clean = run(&IDLE_AM.replace("BLER", "0.0")).summary;
    let lossy = run(&IDLE_AM.replace("BLER", "0.3")).summary;
    let (c, l) = (&clean.flows[0].layers_ms, &lossy.flows[0].layers_ms);
    assert_eq!(c.rlc, l.rlc, "RLC wait unchanged");
    assert_eq!((c.air.mean, c.air.max), (1.0, 1.0), "{c:?}");
    assert!(l.air.mean > 1.0 + 2.5 && l.air.mean < 1.0 + 4.5, "{l:?}");
    assert!(l.air.max >= 9.0, "a retransmission adds 8 slots: {l:?}");
    assert_eq!(
        lossy.flows[0].lost_packets, 0,
        "RLC AM recovers what HARQ loses"
    );
}
