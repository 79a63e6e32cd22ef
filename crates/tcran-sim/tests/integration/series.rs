//! The time series a run records, checked against hand calculations.

use crate::common;

use common::run_output as run;
use std::path::Path;
use tcran_sim::{Sim, SimConfig};

/// 25 PRB at 15 kHz, FDD, MCS 28 (64QAM table: Qm 6, R 948/1024), 2 PDCCH
/// symbols and 12 DM-RS REs per PRB. TS 38.214 sec. 5.1.3.2 by hand:
/// N'_RE = 12 x 12 - 12 = 132, N_RE = 3300, N_info = 3300 x 0.92578 x 6 =
/// 18330.5, n = 9, N'_info = 512 x round(35.76) = 18432, C = 3,
/// TBS = 24 x ceil(18456 / 24) - 24 = 18432 bits = 2304 bytes.
const TBS_25PRB_MCS28: u64 = 2304;

/// A 800 kbit/s CBR stream of 1000-byte packets: one packet every 10 ms,
/// 10 per 100 ms bin. Each reaches the gNB 10 ms after it was sent, on a
/// slot boundary, goes out in that slot and arrives at its end: 11 ms. So
/// the first bin holds 9 packets (sent at 0..80 ms, the one sent at 90 ms
/// arrives at 101 ms), every later one 10.
const CBR: &str = r#"
    duration = "3s"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[flows]]
    name = "cbr"
    ue = 1
    start_jitter = "0s"
    kind = "cbr"
    rate = "800kbit/s"
    size = "1000B"
"#;

#[test]
fn slot_samples_carry_the_cell_capacity_and_prbs() {
    let s = run(CBR).series;
    assert_eq!(s.slots.stride, 1);
    assert_eq!(s.slots.t_s.len(), 3000, "one sample per 1 ms slot");
    assert_eq!(s.slots.t_s[1], 0.001);
    assert!(s.slots.capacity_bytes.iter().all(|c| *c == TBS_25PRB_MCS28));
    assert!(s.slots.prbs_available.iter().all(|p| *p == 25));
    // 299 packets reach the gNB within the run (at 10 ms, 20 ms, ... 2990 ms),
    // each on a slot boundary, before that slot's buffer status: the slot
    // sees 1000 B plus RLC/MAC headers, and sends it with some of its PRBs.
    let busy = s.slots.prbs_used.iter().filter(|p| **p > 0).count();
    assert_eq!(busy, 299, "one busy slot per packet");
    let held: Vec<u64> = s
        .slots
        .rlc_bytes
        .iter()
        .copied()
        .filter(|b| *b > 0)
        .collect();
    assert_eq!(held.len(), 299);
    assert!(
        held.iter().all(|b| (1000..1020).contains(b)),
        "{:?}",
        &held[..3]
    );
    assert_eq!(s.slots.rlc_bytes[10], held[0], "the first arrives at 10 ms");
}

#[test]
fn flow_bins_hold_goodput_and_delay() {
    let s = run(CBR).series;
    assert_eq!(s.bin_s, 0.1);
    let f = &s.flows[0];
    assert_eq!((f.name.as_str(), f.kind.as_str()), ("cbr", "cbr"));
    assert_eq!(f.t_s.len(), 30);
    assert_eq!(f.t_s[29], 2.9);
    assert!((f.goodput_mbps[0] - 0.72).abs() < 1e-9);
    for (i, g) in f.goodput_mbps.iter().enumerate().skip(1) {
        assert!((g - 0.8).abs() < 1e-9, "bin {i}: {g} Mbit/s");
    }
    assert!(
        f.delay_ms.iter().all(|d| *d == Some(11.0)),
        "{:?}",
        f.delay_ms
    );
    assert!(
        f.cwnd_bytes.is_empty() && f.srtt_ms.is_empty(),
        "UDP has no cwnd"
    );
    assert_eq!(f.delay_cdf.last(), Some(&(11.0, 1.0)));
    assert!(s.events.is_empty(), "nothing dropped or marked");
}

#[test]
fn bins_follow_series_bin_and_bad_values_are_refused() {
    let s = run(&CBR.replace(
        "duration = \"3s\"",
        "duration = \"3s\"\nseries_bin = \"1s\"",
    ));
    let f = &s.series.flows[0];
    assert_eq!(f.t_s, vec![0.0, 1.0, 2.0]);
    // 99 packets in the first second (the one sent at 990 ms arrives at
    // 1001 ms), 100 in the others.
    assert_eq!(f.goodput_mbps.len(), 3);
    assert!((f.goodput_mbps[0] - 0.792).abs() < 1e-9);
    assert!(f.goodput_mbps[1..].iter().all(|g| (g - 0.8).abs() < 1e-9));
    let cfg: SimConfig = toml::from_str(&CBR.replace(
        "duration = \"3s\"",
        "duration = \"3s\"\nseries_bin = \"10s\"",
    ))
    .unwrap();
    let e = Sim::new(&cfg, Path::new(".")).unwrap_err().to_string();
    assert!(e.contains("series_bin"), "{e}");
}

const BULK: &str = r#"
    duration = "6s"
    warmup = "1s"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[flows]]
    name = "bulk"
    ue = 1
    start_jitter = "0s"
    kind = "tcp"
    tcp = { cc = "cubic" }
"#;

#[test]
fn tcp_flows_record_cwnd_and_srtt() {
    let s = run(BULK).series;
    let f = &s.flows[0];
    assert_eq!(f.cwnd_bytes.len(), f.t_s.len());
    assert!(f.cwnd_bytes.iter().all(Option::is_some));
    // No-load RTT: 10 ms core + 1 ms slot + 4 ms uplink + 10 ms core.
    let srtts: Vec<f64> = f.srtt_ms.iter().flatten().copied().collect();
    assert!(!srtts.is_empty());
    assert!(srtts.iter().all(|r| *r >= 25.0), "{srtts:?}");
    // The RLC buffer bloats: the sRTT grows well beyond the no-load RTT.
    assert!(srtts.last().unwrap() > &100.0, "{srtts:?}");
}

/// Drops and marks land in the timeline with the counts the summary has.
#[test]
fn drop_and_mark_timelines_add_up_to_the_summary() {
    let tc = |cc: &str, queue: &str| {
        BULK.replace("cc = \"cubic\"", &format!("cc = \"{cc}\""))
            .replace(
                "channel = { kind = \"mcs\", mcs = 28 }",
                &format!(
                    r#"channel = {{ kind = "mcs", mcs = 28 }}
    [[ues.drbs]]
    id = 1
    [ues.drbs.pipeline]
    pacer = {{ kind = "bdp" }}
    [[ues.drbs.pipeline.queues]]
    id = 0
    {queue}"#
                ),
            )
    };
    let out = run(&tc("cubic", "kind = \"fifo\"\n    limit_packets = 20"));
    let summed: u64 = out
        .series
        .events
        .iter()
        .filter(|e| (e.what, e.layer, e.reason) == ("drop", "tc", "queue_full"))
        .map(|e| e.count)
        .sum();
    assert!(summed > 0);
    assert_eq!(summed, out.summary.drops["tc"]["queue_full"]);

    let out = run(&tc("dctcp", "kind = \"codel\"\n    ecn = true"));
    let marks: u64 = out
        .series
        .events
        .iter()
        .filter(|e| (e.what, e.layer, e.reason) == ("mark", "tc", "codel"))
        .map(|e| e.count)
        .sum();
    assert!(marks > 0, "{:?}", out.summary.marks);
    assert_eq!(marks, out.summary.marks["tc"]["codel"]);
    assert!(out.series.events.windows(2).all(|w| w[0].t_s <= w[1].t_s));
}

/// What a streaming run's sink received, concatenated.
#[derive(Default)]
struct Received {
    slots: tcran_sim::series::SlotSeries,
    flows: Vec<tcran_sim::series::FlowSeries>,
    events: Vec<tcran_sim::series::EventCount>,
    chunks: usize,
    largest_chunk: usize,
    ended: bool,
}

struct Collect(std::sync::Arc<std::sync::Mutex<Received>>);

impl tcran_sim::series::SeriesSink for Collect {
    fn slots(&mut self, c: &tcran_sim::series::SlotSeries) {
        let mut r = self.0.lock().unwrap();
        assert!(!r.ended);
        r.chunks += 1;
        r.largest_chunk = r.largest_chunk.max(c.t_s.len());
        let s = &mut r.slots;
        s.t_s.extend(&c.t_s);
        s.rlc_bytes.extend(&c.rlc_bytes);
        s.capacity_bytes.extend(&c.capacity_bytes);
        s.prbs_used.extend(&c.prbs_used);
        s.prbs_available.extend(&c.prbs_available);
    }
    fn flow_bins(&mut self, flow: usize, c: &tcran_sim::series::FlowSeries) {
        let mut r = self.0.lock().unwrap();
        r.chunks += 1;
        r.largest_chunk = r.largest_chunk.max(c.t_s.len());
        if r.flows.len() <= flow {
            r.flows.resize_with(flow + 1, Default::default);
        }
        let f = &mut r.flows[flow];
        f.name.clone_from(&c.name);
        f.kind.clone_from(&c.kind);
        f.t_s.extend(&c.t_s);
        f.goodput_mbps.extend(&c.goodput_mbps);
        f.delay_ms.extend(&c.delay_ms);
        f.cwnd_bytes.extend(&c.cwnd_bytes);
        f.srtt_ms.extend(&c.srtt_ms);
    }
    fn events(&mut self, c: &[tcran_sim::series::EventCount]) {
        let mut r = self.0.lock().unwrap();
        r.chunks += 1;
        r.events.extend_from_slice(c);
    }
    fn end(&mut self) {
        self.0.lock().unwrap().ended = true;
    }
}

/// `got == want`, or a failure naming the first bin that differs.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    assert!(
        got.len() == want.len() && first.is_none(),
        "{what}: {} vs {} bins, first difference at {first:?}: {:?} vs {:?}",
        got.len(),
        want.len(),
        first.map(|k| &got[k]),
        first.map(|k| &want[k]),
    );
}

/// The demo's CoDel variant (drops every few seconds) for 12 s at 1 ms
/// bins: 12 000 slots and bins per flow, three times the chunk a
/// streaming run hands on at once.
fn streaming_case() -> SimConfig {
    let text = std::fs::read_to_string("../../scenarios/demo.toml").expect("the demo scenario");
    let mut cfg: SimConfig = toml::from_str(&text).expect("parses");
    cfg.duration = tcran_core::Duration::from_secs(12);
    cfg.warmup = tcran_core::Duration::from_secs(1);
    cfg.series_bin = tcran_core::Duration::from_millis(1);
    let v = cfg.variants[1].clone();
    assert_eq!(v.name, "codel@rlc");
    cfg.for_variant(&v)
}

/// A streaming run hands its sink exactly the series a run that keeps
/// everything keeps (every slot, every bin, every drop), in chunks of at
/// most 4 096, and keeps for itself a display copy within its caps:
/// 12 000 one-ms bins become 4 000 bins of 3 ms.
#[test]
fn a_streaming_run_hands_on_the_whole_series_and_keeps_a_bounded_copy() {
    let cfg = streaming_case();
    let kept = Sim::new(&cfg, Path::new("../..")).unwrap().run();
    let got = std::sync::Arc::new(std::sync::Mutex::new(Received::default()));
    let mut sim = Sim::new(&cfg, Path::new("../..")).unwrap();
    sim.stream_series(Box::new(Collect(got.clone())));
    let streamed = sim.run();
    let r = got.lock().unwrap();
    assert!(r.ended);
    let k = &kept.series;
    assert_eq!(k.slots.t_s.len(), 12_000);
    assert_eq!(r.slots.t_s, k.slots.t_s);
    assert_eq!(r.slots.rlc_bytes, k.slots.rlc_bytes);
    assert_eq!(r.slots.capacity_bytes, k.slots.capacity_bytes);
    assert_eq!(r.slots.prbs_used, k.slots.prbs_used);
    assert_eq!(r.slots.prbs_available, k.slots.prbs_available);
    assert_eq!(r.flows.len(), 3);
    for (got, want) in r.flows.iter().zip(&k.flows) {
        assert_eq!(got.name, want.name);
        assert_eq!(got.kind, want.kind);
        assert_eq!(got.t_s, want.t_s);
        same(&want.name, &got.goodput_mbps, &want.goodput_mbps);
        same(&want.name, &got.delay_ms, &want.delay_ms);
        same(&want.name, &got.cwnd_bytes, &want.cwnd_bytes);
        same(&want.name, &got.srtt_ms, &want.srtt_ms);
    }
    assert!(
        k.events.iter().any(|e| e.what == "drop"),
        "the case drops packets"
    );
    assert_eq!(r.events, k.events);
    assert!(r.largest_chunk <= 4_096, "{}", r.largest_chunk);
    assert!(r.chunks > 3 * 4, "handed on as the run went: {}", r.chunks);
    // The same run either way; only what is kept differs.
    assert_eq!(
        serde_json::to_value(&streamed.summary).unwrap(),
        serde_json::to_value(&kept.summary).unwrap()
    );
    let s = &streamed.series;
    assert_eq!((s.requested_bin_s, s.bin_s), (0.001, 0.003));
    assert!(s
        .flows
        .iter()
        .all(|f| f.t_s.len() == 4_000 && f.goodput_mbps.len() == 4_000));
    // 12 000 slots fit the display copy's 65 536.
    assert_eq!(s.slots.t_s, k.slots.t_s);
    assert_eq!(s.events.iter().map(|e| e.count).sum::<u64>(), {
        k.events.iter().map(|e| e.count).sum::<u64>()
    });
    assert_eq!(s.late_updates, 0);
}
